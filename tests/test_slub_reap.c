// SPDX-License-Identifier: MIT
/*
 * Reaping idle sheaves (src/slab/slub.c slub_reap_thread(), slub_sheaf.c
 * barn_reap()), booted with nr_cpus=2, slub_sheaf_grow_kb=0 and
 * slub_reap_events=0, so that reaps happen only where a case calls
 * slub_reap_thread() (the automatic ones are tested in children booted
 * with the default).
 *
 *  - A barn gives back, at each reap, the full sheaves it held all along
 *    since the reap before the last: half of them if it gave out any since
 *    the last, all if none; exact counts, /proc/vmstat slab_sheaf_reaped
 *    included.
 *  - A slot that allocated nothing since the last reap gives back its
 *    sheaves and slabs: the cache's free slabs then go back to the page
 *    allocator.  A slot that allocated keeps its sheaves.
 *  - The thread's slow paths reap on their own every slub_reap_events: a
 *    cache the program stopped using ends with no objects held for it; with
 *    slub_reap_events=0 they stay (the control).
 *  - kmem_cache_destroy() from another thread while this one reaps: every
 *    cache is released (2500 of them, more than there are slots, so a
 *    reference lost by either side would run out of them), no report.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "slab/slab.h"
#include "slab/slub.h"
#include "slab/slub_internal.h"

#include "ktest.h"
#include "lib/kt_util.h"
#include "lib/slab_test.h"

#define GFP GFP_KERNEL
#define CMDLINE "mem=64M nr_cpus=2 slub_sheaves=1 slub_sheaf_grow_kb=0"

/* 64-byte slots: 60 objects a sheaf, 64 a slab of one page. */
#define OBJ	64
#define CAP	60

static struct kmem_cache *cache64(const char *name)
{
	struct kmem_cache *s = kmem_cache_create(name, OBJ, 0, SLAB_NO_MERGE, NULL);

	if (s && (s->size != OBJ || s->sheaf_capacity != CAP)) {
		fprintf(stderr, "  %s: size %u, sheaf_capacity %u\n", name, s->size, s->sheaf_capacity);
		return NULL;
	}
	/* Past the first refills' ramp: every refill fills a sheaf. */
	struct kmem_cache_cpu *c = s ? get_cpu_slot(s) : NULL;
	if (c)
		c->sheaf_refills = SHEAF_RAMP;
	return s;
}

#define alloc_n slab_alloc_n
#define free_n slab_free_n

static unsigned int nr_full(struct kmem_cache *s)
{
	kmem_lock(&s->barn.lock);
	unsigned int n = s->barn.nr_full;
	kmem_unlock(&s->barn.lock);
	return n;
}

/* Objects in this thread's main and spare sheaves of @s. */
static unsigned long in_sheaves(struct kmem_cache *s)
{
	struct kmem_cache_cpu *c = &slub_this->cpu[s->index];

	return c->cache == s ? sheaf_thread_objects(c) : 0;
}

/* Free objects of @s kept in this thread's sheaves and in the barn. */
static unsigned long cached(struct kmem_cache *s)
{
	kmem_lock(&s->barn.lock);
	unsigned long n = s->barn.full_objs;
	kmem_unlock(&s->barn.lock);
	return n + in_sheaves(s);
}

/* Objects in use by the program or cached, as /proc/slabinfo counts them. */
static unsigned long active(struct kmem_cache *s)
{
	struct slabinfo info;

	slub_get_slabinfo(s, &info);
	return info.active_objs;
}

static unsigned long slabs(struct kmem_cache *s)
{
	return strtoul(kt_slab_attr(s->name, "slabs"), NULL, 10);
}

static void *objs[4000];

/*
 * A fresh cache64 @name, @n of whose objects were allocated and freed: they
 * are all kept in sheaves, with *@left more that the last refill from a
 * slab left in main.
 */
static struct kmem_cache *cache_with_free(const char *name, int n, unsigned long *left)
{
	struct kmem_cache *s = cache64(name);

	if (!s)
		return NULL;
	alloc_n(s, objs, n);
	*left = cached(s);
	free_n(s, objs, n);
	return s;
}

KTEST(a_barn_gives_back_the_sheaves_nobody_took)
{
	unsigned long left;	/* a slab holds 64, a sheaf 60 */
	struct kmem_cache *s = cache_with_free("kt_reap_barn", 12 * CAP, &left);
	KT_ASSERT(s);
	unsigned int full = nr_full(s);
	/* Every object went into a sheaf: the thread's two, and the barn's. */
	KT_ASSERT(full >= 6 && cached(s) == left + 12 * CAP);
	long r0 = kt_vmstat("slab_sheaf_reaped");

	/*
	 * The first two reaps only take note: a sheaf goes once it sat in the
	 * barn through two rounds between reaps.
	 */
	slub_reap_thread();
	/* (An allocation from main between them: the slot is not idle.) */
	void *x = kmem_cache_alloc(s, GFP);
	KT_ASSERT(x);
	slub_reap_thread();
	KT_EXPECT(nr_full(s) == full);
	KT_EXPECT(kt_vmstat("slab_sheaf_reaped") == r0);
	kmem_cache_free(s, x);

	/* Take two full sheaves from the barn: its low-water mark is full - 2. */
	int took = 0;
	while (nr_full(s) > full - 2 && took < 1000) {
		objs[took] = kmem_cache_alloc(s, GFP);
		took++;
	}
	KT_ASSERT(nr_full(s) == full - 2);
	unsigned long before = cached(s);
	/* It gave out some: half of the sheaves it kept all along go, whole. */
	unsigned int half = (full - 2) / 2;
	slub_reap_thread();
	KT_EXPECT(nr_full(s) == full - 2 - half);
	KT_EXPECT(kt_vmstat("slab_sheaf_reaped") == r0 + (long)half * CAP);
	KT_EXPECT(cached(s) == before - half * CAP);
	KT_EXPECT(in_sheaves(s) > 0);		/* the slot allocated: it keeps its sheaves */

	/* Nothing taken since: the rest goes; the slot allocated nothing either. */
	before = cached(s);
	slub_reap_thread();
	KT_EXPECT(nr_full(s) == 0 && cached(s) == 0);
	KT_EXPECT(kt_vmstat("slab_sheaf_reaped") == r0 + (long)half * CAP + (long)before);
	/* What stays in use is what we hold. */
	KT_EXPECT(active(s) == (unsigned long)took);
	/* And once more: nothing more to give. */
	long r1 = kt_vmstat("slab_sheaf_reaped");
	slub_reap_thread();
	KT_EXPECT(kt_vmstat("slab_sheaf_reaped") == r1);

	free_n(s, objs, took);
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	kmem_cache_destroy(s);
}

KTEST(an_idle_slot_gives_back_its_sheaves_and_slabs)
{
	unsigned long left;
	struct kmem_cache *s = cache_with_free("kt_reap_idle", 40 * CAP, &left);
	KT_ASSERT(s);
	/* All free, all held: the slabs cannot go. */
	KT_EXPECT(cached(s) == left + 40 * CAP);
	unsigned long before = slabs(s);
	KT_EXPECT(before >= 40 * CAP / 64);

	slub_reap_thread();	/* takes note of the slot's allocations and the barn's sheaves */
	slub_reap_thread();	/* none since: the slot is idle; the barn's went through one round */
	KT_EXPECT(in_sheaves(s) == 0);
	slub_reap_thread();	/* and through two: they go too */
	KT_EXPECT(cached(s) == 0 && active(s) == 0);
	KT_EXPECT(in_sheaves(s) == 0);
	/* The empty slabs went back, but the node's min_partial. */
	KT_EXPECT(slabs(s) <= strtoul(kt_slab_attr(s->name, "min_partial"), NULL, 10));
	struct kmem_cache_cpu *c = &slub_this->cpu[s->index];
	KT_EXPECT(c->cache == s && !c->main && !c->slab && !c->partial);

	/* The slot works on as before. */
	alloc_n(s, objs, 100);
	KT_EXPECT(slab_disjoint(objs, 100, OBJ));
	free_n(s, objs, 100);
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	kmem_cache_destroy(s);
}

KTEST(a_slot_that_allocates_keeps_its_sheaves)
{
	struct kmem_cache *s = cache64("kt_reap_busy");
	KT_ASSERT(s);
	alloc_n(s, objs, 100);
	free_n(s, objs, 100);
	unsigned long held = in_sheaves(s);
	KT_ASSERT(held > 0);
	for (int round = 0; round < 5; round++) {
		slub_reap_thread();
		/* One allocation between two reaps is enough. */
		void *x = kmem_cache_alloc(s, GFP);
		KT_ASSERT(x);
		kmem_cache_free(s, x);
		KT_EXPECT(in_sheaves(s) == held);
	}
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	kmem_cache_destroy(s);
}

KTEST(kmalloc_caches_and_a_thread_without_slots_reap_safely)
{
	/* A thread that never used a cache reaps nothing, and does not crash. */
	slub_reap_thread();
	void *p = kmalloc(100, GFP);
	KT_ASSERT(p);
	kfree(p);
	slub_reap_thread();
	slub_reap_thread();
	p = kmalloc(100, GFP);
	KT_EXPECT(p != NULL);
	kfree(p);
}

/* ---- the automatic reap (children booted with slub_reap_events) ---------- */

/*
 * Fill sheaves and barn of a cache with free objects, then churn another:
 * the churn's slow paths reap, or (slub_reap_events=0) do not.
 */
static void move_on(bool reaps)
{
	unsigned long left;
	struct kmem_cache *a = cache_with_free("kt_reap_a", 2000, &left);
	struct kmem_cache *b = cache64("kt_reap_b");
	KT_ASSERT(a && b);
	KT_ASSERT(cached(a) == left + 2000);
	long r0 = kt_vmstat("slab_sheaf_reaped");
	/* 300 objects out and back: 5 sheaves each way, 10 slow paths a round (3 reaps need 768). */
	for (int round = 0; round < 100; round++) {
		alloc_n(b, objs, 300);
		free_n(b, objs, 300);
	}
	if (reaps) {
		KT_EXPECT(cached(a) == 0 && active(a) == 0);
		KT_EXPECT(kt_vmstat("slab_sheaf_reaped") >= r0 + 2000);
	} else {
		KT_EXPECT(cached(a) == left + 2000);
		KT_EXPECT(kt_vmstat("slab_sheaf_reaped") == r0);
	}
	/* b is busy all along: its sheaves were never taken from it. */
	KT_EXPECT(in_sheaves(b) > 0);
	KT_EXPECT(kmem_cache_shrink(a) == 0 && kmem_cache_shrink(b) == 0);
	kmem_cache_destroy(a);
	kmem_cache_destroy(b);
}

static void child_reap_default(void)
{
	if (kmem_init(CMDLINE)) {
		KT_FAIL("kmem_init failed");
		return;
	}
	move_on(true);
}

KTEST(slow_paths_reap_every_slub_reap_events)
{
	KT_ASSERT_CHILD_OK(slab_run_child("reap_default"));
}

KTEST(no_reap_when_booted_with_slub_reap_events_0)
{
	move_on(false);
}

/* ---- destroy while another thread reaps ----------------------------------- */

#define ROUNDS	2500

static struct kmem_cache *_Atomic shared;
static atomic_int used, reaped;
static atomic_bool stop;

static void *reaper(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		struct kmem_cache *s;
		while (!(s = atomic_load(&shared)))
			if (atomic_load(&stop))
				return NULL;
		void *p[70];
		for (int k = 0; k < 70; k++)
			p[k] = kmem_cache_alloc(s, GFP);
		for (int k = 0; k < 70; k++)
			kmem_cache_free(s, p[k]);
		atomic_store(&shared, NULL);
		atomic_store(&used, i + 1);
		/* The second finds the slot idle and flushes it, while it is destroyed. */
		slub_reap_thread();
		slub_reap_thread();
		atomic_store(&reaped, i + 1);
	}
	return NULL;
}

KTEST(destroy_while_another_thread_reaps)
{
	pthread_t t;
	struct kt_capture cap;
	int created = 0;
	unsigned long r0 = kmem_report_count();

	kt_capture_begin(&cap);
	KT_ASSERT(pthread_create(&t, NULL, reaper, NULL) == 0);
	for (int i = 0; i < ROUNDS; i++) {
		struct kmem_cache *s = kmem_cache_create("kt_reap_race", OBJ, 0, SLAB_NO_MERGE, NULL);
		if (!s)
			break;
		created++;
		atomic_store(&shared, s);
		while (atomic_load(&used) != i + 1)
			;
		kmem_cache_destroy(s);
		while (atomic_load(&reaped) != i + 1)
			;
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	char *out = kt_capture_end(&cap);
	KT_EXPECT(created == ROUNDS);
	if (kmem_report_count() != r0 || strstr(out, "BUG") || strstr(out, "WARNING"))
		KT_FAIL("reports while destroying:\n%s", out);
	free(out);
}

/*
 * The window itself: a destroy runs while the reap holds this thread's slot
 * claimed.  The destroy cannot retire the slot then and leaves it; the
 * reap, once done, finds the cache dying and retires the slot, the last
 * reference, so the cache is released and its index is free again.
 */
static struct kmem_cache *_Atomic to_destroy;
static struct kmem_cache *target;
static atomic_int destroyed;

static void *destroyer(void *arg)
{
	struct kmem_cache *s;

	(void)arg;
	while (!(s = atomic_load(&to_destroy)))
		;
	kmem_cache_destroy(s);
	atomic_store(&destroyed, 1);
	return NULL;
}

static void destroy_now(struct kmem_cache *s)
{
	if (s != target)
		return;
	slub_reap_claimed_hook = NULL;
	atomic_store(&to_destroy, s);
	while (!atomic_load(&destroyed))
		;
}

KTEST(a_destroy_while_the_reap_holds_the_slot)
{
	pthread_t t;
	struct kmem_cache *s = cache64("kt_reap_window");
	KT_ASSERT(s);
	unsigned int index = s->index;
	alloc_n(s, objs, 100);
	free_n(s, objs, 100);
	unsigned long r0 = kmem_report_count();

	KT_ASSERT(pthread_create(&t, NULL, destroyer, NULL) == 0);
	target = s;
	slub_reap_claimed_hook = destroy_now;
	slub_reap_thread();
	slub_reap_claimed_hook = NULL;
	pthread_join(t, NULL);
	KT_EXPECT(atomic_load(&destroyed) == 1);
	/* Retired by the reap: the slot is free, and so is the cache's index. */
	KT_EXPECT(slub_this->cpu[index].cache == NULL);
	KT_EXPECT(kmem_report_count() == r0);
	struct kmem_cache *again = kmem_cache_create("kt_reap_window2", OBJ, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(again);
	KT_EXPECT(again->index == index);
	kmem_cache_destroy(again);
}

static const struct slab_child children[] = {
	{ "reap_default", child_reap_default },
};

KTEST_MAIN(
	slab_child_dispatch(children, sizeof(children) / sizeof(children[0]));
	if (kmem_init(CMDLINE " slub_reap_events=0")) { printf("kmem_init failed\n"); return 1; }
)
