// SPDX-License-Identifier: MIT
/*
 * Reaping idle sheaves (src/slab/slub.c slub_reap_thread(), slub_sheaf.c
 * barn_reap()), booted with nr_cpus=2, slub_sheaf_grow_kb=0,
 * slub_reap_events=0 and slub_reap_ms=0, so that reaps happen only where a
 * case calls slub_reap_thread(), and each one is an epoch (the automatic
 * ones, with the default period and 10 ms epochs, are tested in children
 * booted with the defaults).
 *
 *  - A barn gives back, at each reap, the full sheaves it held all along
 *    since the reap before the last: half of them if it gave out any since
 *    the last, all if none; exact counts, /proc/vmstat slab_sheaf_reaped
 *    included.
 *  - A slot that allocated nothing through a whole epoch (two reaps) gives
 *    back its sheaves and slabs: the cache's free slabs then go back to
 *    the page allocator.  A slot that allocated keeps its sheaves.
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
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <kmem.h>

#include "slab/kmalloc.h"
#include "slab/slab.h"
#include "slab/slub/slub.h"
#include "slab/slub/slub_internal.h"

#include "ktest.h"
#include "lib/kt_util.h"
#include "lib/slab_test.h"

#define GFP GFP_KERNEL
#define CMDLINE "mem=64M nr_cpus=2 slub_sheaves=1 slub_sheaf_grow_kb=0"
/* Every reap an epoch: exact steps. */
#define EXACT " slub_reap_events=0 slub_reap_ms=0"

/* 64-byte slots: 60 objects a sheaf, 64 a slab of one page. */
#define OBJ	64
#define CAP	60

static struct kmem_cache *cache64(const char *name)
{
	struct kmem_cache *s = kmem_cache_create(name, OBJ, 0, SLAB_NO_MERGE, NULL);

	if (s && (s->size != OBJ || slub_of(s)->sheaf_capacity != CAP)) {
		fprintf(stderr, "  %s: size %u, sheaf_capacity %u\n", name, s->size, slub_of(s)->sheaf_capacity);
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
	kmem_lock(&slub_of(s)->barn.lock);
	unsigned int n = slub_of(s)->barn.nr_full;
	kmem_unlock(&slub_of(s)->barn.lock);
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
	kmem_lock(&slub_of(s)->barn.lock);
	unsigned long n = slub_of(s)->barn.full_objs;
	kmem_unlock(&slub_of(s)->barn.lock);
	return n + in_sheaves(s);
}

/* Objects in use by the program or cached, as /proc/slabinfo counts them. */
static unsigned long active(struct kmem_cache *s)
{
	struct slub_info info;

	slub_get_info(s, &info);
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

	/* Nothing taken since: the rest goes. */
	before = cached(s);
	unsigned long held = in_sheaves(s);
	slub_reap_thread();
	KT_EXPECT(nr_full(s) == 0 && in_sheaves(s) == held);
	/* The slot allocated last in the epoch before: one more, and it is idle too. */
	slub_reap_thread();
	KT_EXPECT(cached(s) == 0);
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
	slub_reap_thread();	/* none since, but not a whole epoch yet; the barn's: one round */
	KT_EXPECT(cached(s) == left + 40 * CAP);
	slub_reap_thread();	/* a whole epoch without allocation, two rounds: all goes */
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
		/*
		 * Allocations between two reaps that go past main (a swap with
		 * the spare, a full sheaf from the barn, a refill) are enough:
		 * no reap flushes the slot.
		 */
		alloc_n(s, objs, CAP + 1);
		free_n(s, objs, CAP + 1);
		slub_reap_thread();
		KT_EXPECT(in_sheaves(s) >= CAP + 1);
	}
	/*
	 * Allocations its sheaves serve alone are not counted (alloc_cpu_sheaf
	 * only with CONFIG_SLUB_STATS), but they move main's top: a slot
	 * whose frees feed its allocations is busy however many reaps come.
	 */
	for (int round = 0; round < 6; round++) {
		alloc_n(s, objs, 10);
		free_n(s, objs, 10);
		slub_reap_thread();
		KT_EXPECT(in_sheaves(s) >= held);
	}
	/* Untouched through a whole epoch, it gives its sheaves back. */
	bool flushed = false;
	for (int round = 0; round < 3 && !flushed; round++) {
		slub_reap_thread();
		flushed = in_sheaves(s) == 0;
	}
	KT_EXPECT(flushed);
	void *z = kmem_cache_alloc(s, GFP);
	KT_ASSERT(z);
	kmem_cache_free(s, z);
	KT_EXPECT(in_sheaves(s) > 0);
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	kmem_cache_destroy(s);
}

/* A thread with no slot yet reaps nothing; once it has kmalloc's, they reap like any. */
static void fresh_thread_body(void)
{
	long r0 = kt_vmstat("slab_sheaf_reaped");
	slub_reap_thread();
	KT_EXPECT(!slub_thread_live());
	KT_EXPECT(kt_vmstat("slab_sheaf_reaped") == r0);
	void *p[100];
	for (int i = 0; i < 100; i++)
		p[i] = kmalloc(100, GFP);
	for (int i = 0; i < 100; i++)
		kfree(p[i]);
	struct kmem_cache *k = kmalloc_caches[kmalloc_slab_index(100)];
	KT_ASSERT(k && in_sheaves(k) > 0);
	unsigned long held = in_sheaves(k);
	slub_reap_thread();
	slub_reap_thread();
	slub_reap_thread();
	KT_EXPECT(in_sheaves(k) == 0);
	KT_EXPECT(kt_vmstat("slab_sheaf_reaped") >= r0 + (long)held);
}

static void *fresh_thread(void *arg)
{
	(void)arg;
	fresh_thread_body();
	return NULL;
}

KTEST(a_new_thread_and_kmalloc_caches)
{
	pthread_t t;
	KT_ASSERT(pthread_create(&t, NULL, fresh_thread, NULL) == 0);
	pthread_join(t, NULL);
}

/* ---- the automatic reap (children booted with slub_reap_events) ---------- */

/*
 * Fill sheaves and barn of a cache with free objects, then churn another:
 * the churn's slow paths reap, or (slub_reap_events=0) do not.
 */
static unsigned long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000 + (unsigned long long)ts.tv_nsec / 1000000;
}

static void move_on(bool reaps)
{
	unsigned long left;
	struct kmem_cache *a = cache_with_free("kt_reap_a", 2000, &left);
	struct kmem_cache *b = cache64("kt_reap_b");
	KT_ASSERT(a && b);
	KT_ASSERT(cached(a) == left + 2000);
	long r0 = kt_vmstat("slab_sheaf_reaped");
	/*
	 * 300 objects out and back: 5 sheaves each way, 10 slow paths a round.
	 * With the defaults a reap comes every 256 of them, and a goes after
	 * two 10 ms epochs: churn for 200 ms (at most 2 s, until a has gone).
	 */
	unsigned long long t0 = now_ms();
	for (int round = 0; now_ms() - t0 < (reaps && cached(a) ? 2000 : 200); round++) {
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

KTEST(slow_paths_reap_with_the_defaults)
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
	unsigned int lo = ~0u, hi = 0;
	for (int i = 0; i < ROUNDS; i++) {
		struct kmem_cache *s = kmem_cache_create("kt_reap_race", OBJ, 0, SLAB_NO_MERGE, NULL);
		if (!s)
			break;
		created++;
		lo = s->index < lo ? s->index : lo;
		hi = s->index > hi ? s->index : hi;
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
	/* Each cache was released by the next round: its index came back. */
	KT_EXPECT(hi - lo <= 2);
	if (kmem_report_count() != r0 || strstr(out, "BUG") || strstr(out, "WARNING"))
		KT_FAIL("reports while destroying:\n%s", out);
	free(out);
}

/*
 * The windows themselves, through the test hooks, which start a destroy in
 * another thread and stall the reap 300 ms.  (1) While the reap holds this
 * thread's slot tagged: the destroy cannot retire the slot, waits 100 ms
 * for it, and returns; the reap then finds the cache dying and retires the
 * slot, the last reference.  (2) Right after the reap untagged the slot:
 * the destroy retires the slot itself, but the cache must live on until
 * the reap's last read of it, so the destroy's release waits for the reap.
 * Either way the cache is released once, its index is free again, and
 * nothing is reported.
 */
static struct kmem_cache *_Atomic to_destroy;
static struct kmem_cache *target;
static atomic_int destroyed, returned_during_stall;

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
	slub_reap_restored_hook = NULL;
	atomic_store(&to_destroy, s);
	usleep(300000);
	atomic_store(&returned_during_stall, atomic_load(&destroyed));
}

static void destroy_in_window(bool after_restore)
{
	pthread_t t;
	struct kmem_cache *s = cache64("kt_reap_window");
	KT_ASSERT(s);
	unsigned int index = s->index;
	alloc_n(s, objs, 100);
	free_n(s, objs, 100);
	unsigned long r0 = kmem_report_count();

	atomic_store(&to_destroy, NULL);
	atomic_store(&destroyed, 0);
	KT_ASSERT(pthread_create(&t, NULL, destroyer, NULL) == 0);
	target = s;
	if (after_restore)
		slub_reap_restored_hook = destroy_now;
	else
		slub_reap_claimed_hook = destroy_now;
	slub_reap_thread();
	slub_reap_claimed_hook = NULL;
	slub_reap_restored_hook = NULL;
	pthread_join(t, NULL);
	KT_EXPECT(atomic_load(&destroyed) == 1);
	/* (1) the destroy gave up waiting and returned; (2) its release waited for the reap. */
	KT_EXPECT(atomic_load(&returned_during_stall) == (after_restore ? 0 : 1));
	/* Retired: the slot is free, and so is the cache's index. */
	KT_EXPECT(slub_this->cpu[index].cache == NULL);
	KT_EXPECT(kmem_report_count() == r0);
	struct kmem_cache *again = kmem_cache_create("kt_reap_window2", OBJ, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(again);
	KT_EXPECT(again->index == index);
	kmem_cache_destroy(again);
}

/*
 * fork() while another thread holds a slot tagged: in the child that reap
 * never ends, so it is undone there (slub_fork_child()): a destroy in the
 * child does not wait for it, and reaps there go on.
 */
static atomic_int forker_go, forked;

static void stall_for_fork(struct kmem_cache *s)
{
	if (s != target)
		return;
	slub_reap_claimed_hook = NULL;
	atomic_store(&forker_go, 1);
	while (!atomic_load(&forked))
		usleep(100);
}

static void *reap_and_stall(void *arg)
{
	(void)arg;
	alloc_n(target, objs, 100);
	free_n(target, objs, 100);
	slub_reap_claimed_hook = stall_for_fork;
	slub_reap_thread();
	return NULL;
}

KTEST(fork_while_another_thread_reaps)
{
	pthread_t t;
	target = cache64("kt_reap_fork");
	KT_ASSERT(target);
	atomic_store(&forker_go, 0);
	atomic_store(&forked, 0);
	KT_ASSERT(pthread_create(&t, NULL, reap_and_stall, NULL) == 0);
	while (!atomic_load(&forker_go))
		;
	pid_t pid = fork();
	if (pid == 0) {
		int bad = atomic_load(&slub_of(target)->reapers) != 0;
		unsigned long long t0 = now_ms();
		kmem_cache_destroy(target);
		/*
		 * A destroy that waited for the reap copied mid-way (which never
		 * ends in the child) would take DESTROY_WAIT_US, 100 ms: anything
		 * well under it is no wait (TSan's child is slow, 10 ms was not).
		 */
		bad |= now_ms() - t0 >= 60;
		slub_reap_thread();
		_exit(bad);
	}
	atomic_store(&forked, 1);
	pthread_join(t, NULL);
	int status;
	KT_ASSERT(pid > 0 && waitpid(pid, &status, 0) == pid);
	KT_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	slub_reap_thread();
	KT_EXPECT(kmem_cache_shrink(target) == 0);
	kmem_cache_destroy(target);
}

KTEST(a_destroy_while_the_reap_holds_the_slot)
{
	destroy_in_window(false);
}

KTEST(a_destroy_right_after_the_reap_gave_the_slot_back)
{
	destroy_in_window(true);
}

/*
 * A destroy from another thread while this one reaps the cache's slot (no
 * hook: the real timing) reports a leaked object itself, before it returns.
 */
static struct kmem_cache *_Atomic leaky;
static atomic_int leaky_phase;

static void *leaky_reaper(void *arg)
{
	(void)arg;
	struct kmem_cache *s = atomic_load(&leaky);
	void *p[100];
	alloc_n(s, p, 100);
	free_n(s, p, 99);		/* p[0] is leaked */
	atomic_store(&leaky_phase, 1);
	while (atomic_load(&leaky_phase) == 1)
		slub_reap_thread();	/* tags and untags the slot all the time */
	return NULL;
}

KTEST(a_destroy_reports_its_leak_itself_while_another_thread_reaps)
{
	for (int round = 0; round < 20; round++) {
		pthread_t t;
		struct kmem_cache *s = kmem_cache_create("kt_reap_leaky", OBJ, 0, SLAB_NO_MERGE, NULL);
		KT_ASSERT(s);
		atomic_store(&leaky, s);
		atomic_store(&leaky_phase, 0);
		KT_ASSERT(pthread_create(&t, NULL, leaky_reaper, NULL) == 0);
		while (atomic_load(&leaky_phase) == 0)
			;
		unsigned long r0 = kmem_report_count();
		struct kt_capture cap;
		kt_capture_begin(&cap);
		kmem_cache_destroy(s);
		unsigned long reports = kmem_report_count() - r0;
		char *out = kt_capture_end(&cap);
		atomic_store(&leaky_phase, 2);
		pthread_join(t, NULL);
		KT_EXPECT(reports >= 1 && strstr(out, "Objects remaining in kt_reap_leaky"));
		free(out);
		if (reports < 1)
			break;
	}
}

/* ---- a thread of many caches; grown sheaves; counters read meanwhile ---- */

/*
 * A thread that goes round 1000 caches, an object of each at a time: each
 * comes back once a round, so none is idle between two reaps, which are
 * twice the slots apart; nothing is reaped once the first round is done
 * (with a fixed period of 256 every slot was flushed in turn, and each
 * flush made the next round's slow paths: 10 -> 1100 ns a pair).
 */
#define MANY	1000
static long r0_many;

static void child_many_caches(void)
{
	if (kmem_init("mem=256M nr_cpus=2 slub_reap_ms=300")) {
		KT_FAIL("kmem_init failed");
		return;
	}
	static struct kmem_cache *c[MANY];
	for (int i = 0; i < MANY; i++) {
		char name[32];
		snprintf(name, sizeof(name), "kt_many%d", i);
		c[i] = kmem_cache_create(name, OBJ, 0, SLAB_NO_MERGE, NULL);
		KT_ASSERT(c[i]);
	}
	for (int r = 0; r < 25; r++) {
		if (r == 5)
			r0_many = kt_vmstat("slab_sheaf_reaped");
		for (int i = 0; i < MANY; i++)
			kmem_cache_free(c[i], kmem_cache_alloc(c[i], GFP));
	}
	KT_EXPECT(kt_vmstat("slab_sheaf_reaped") == r0_many);
}

KTEST(a_thread_of_many_caches_reaps_none_in_turn)
{
	KT_ASSERT_CHILD_OK(slab_run_child("many_caches"));
}

/*
 * The same with a burst of 200 objects a visit, 100 caches: a round is 600
 * slow paths and more, past any fixed period, but within an epoch; nothing
 * is reaped once the first rounds are done (with periods counted in slow
 * paths only, 6 -> 30 ns a pair).  The epochs are 300 ms, not the default
 * 10, so that a round is shorter also under ThreadSanitizer.
 */
static void child_many_bursts(void)
{
	/* Epochs long against a round even under TSan (40 ms there, 0.4 ms here). */
	if (kmem_init("mem=512M nr_cpus=2 slub_reap_ms=300")) {
		KT_FAIL("kmem_init failed");
		return;
	}
	static struct kmem_cache *c[100];
	for (int i = 0; i < 100; i++) {
		char name[32];
		snprintf(name, sizeof(name), "kt_burst%d", i);
		c[i] = kmem_cache_create(name, OBJ, 0, SLAB_NO_MERGE, NULL);
		KT_ASSERT(c[i]);
	}
	long r0 = 0;
	for (int r = 0; r < 25; r++) {
		if (r == 5)
			r0 = kt_vmstat("slab_sheaf_reaped");
		for (int i = 0; i < 100; i++) {
			alloc_n(c[i], objs, 200);
			free_n(c[i], objs, 200);
		}
	}
	KT_EXPECT(kt_vmstat("slab_sheaf_reaped") == r0);
}

KTEST(a_thread_of_many_caches_in_bursts_reaps_none)
{
	KT_ASSERT_CHILD_OK(slab_run_child("many_bursts"));
}

/*
 * A barn's round lasts slub_reap_ms however often threads look: with 1 s
 * rounds, three reaps in a row (the slot kept busy) leave its sheaves.
 */
static void child_long_rounds(void)
{
	if (kmem_init("mem=256M nr_cpus=2 slub_sheaf_grow_kb=0 slub_reap_events=0 slub_reap_ms=1000")) {
		KT_FAIL("kmem_init failed");
		return;
	}
	unsigned long left;
	struct kmem_cache *s = cache_with_free("kt_reap_rounds", 12 * CAP, &left);
	KT_ASSERT(s);
	unsigned int full = nr_full(s);
	KT_ASSERT(full >= 6);
	for (int i = 0; i < 3; i++) {
		kmem_cache_free(s, kmem_cache_alloc(s, GFP));
		slub_reap_thread();
	}
	KT_EXPECT(nr_full(s) == full);
	KT_EXPECT(kt_vmstat("slab_sheaf_reaped") == 0);
}

KTEST(a_barn_round_lasts_slub_reap_ms)
{
	KT_ASSERT_CHILD_OK(slab_run_child("long_rounds"));
}

/*
 * A reaped slot starts again as a new thread's: its sheaves had grown to 508
 * objects in bursts; after the reaps (the slot's, then the barn's) one
 * allocation refills 2 from slabs (the ramp), not 508 that the next reap
 * would flush again.
 */
static void child_grown_then_reaped(void)
{
	if (kmem_init("mem=256M nr_cpus=2" EXACT)) {
		KT_FAIL("kmem_init failed");
		return;
	}
	struct kmem_cache *s = cache64("kt_reap_grown");
	KT_ASSERT(s);
	for (int round = 0; round < 10; round++) {
		alloc_n(s, objs, 3000);
		free_n(s, objs, 3000);
	}
	struct kmem_cache_cpu *c = &slub_this->cpu[s->index];
	KT_ASSERT(c->sheaf_shift > 0);
	slub_reap_thread();
	slub_reap_thread();
	slub_reap_thread();	/* the slot is idle, and the barn's grown sheaves go too */
	KT_EXPECT(c->sheaf_shift == 0 && !c->main);
	KT_EXPECT(nr_full(s) == 0);
	void *x = kmem_cache_alloc(s, GFP);
	KT_ASSERT(x);
	KT_EXPECT(c->cap == CAP && c->count < 8);
	kmem_cache_free(s, x);
}

KTEST(a_reaped_slot_starts_small_again)
{
	KT_ASSERT_CHILD_OK(slab_run_child("grown_then_reaped"));
}

/*
 * A reap does not hide its slot from other threads: counters read while
 * a thread reaps all the time (slub_reap_events=1) never go backwards.
 */
static struct kmem_cache *mono;
static atomic_bool mono_stop;
static atomic_long mono_tags;

static void count_mono_tags(struct kmem_cache *s)
{
	if (s == mono)
		atomic_fetch_add(&mono_tags, 1);
}

static void *mono_worker(void *arg)
{
	static void *o[200];

	(void)arg;
	while (!atomic_load(&mono_stop)) {
		alloc_n(mono, o, 200);
		free_n(mono, o, 200);
	}
	return NULL;
}

static void child_counters_while_reaping(void)
{
	if (kmem_init("mem=256M nr_cpus=2 slub_reap_events=1 slub_reap_ms=0")) {
		KT_FAIL("kmem_init failed");
		return;
	}
	mono = cache64("kt_reap_mono");
	KT_ASSERT(mono);
	slub_reap_claimed_hook = count_mono_tags;
	pthread_t t;
	KT_ASSERT(pthread_create(&t, NULL, mono_worker, NULL) == 0);
	unsigned long prev = 0, back = 0;
	/* alloc_cpu_sheaf moves with every object, but needs CONFIG_SLUB_STATS. */
	const char *counter = SLUB_STATS_PER_OBJECT ? "alloc_cpu_sheaf" : "sheaf_refill";
	for (int i = 0; i < 20000; i++) {
		unsigned long v = strtoul(kt_slab_attr("kt_reap_mono", counter), NULL, 10);
		if (v < prev)
			back++;
		prev = v;
	}
	atomic_store(&mono_stop, true);
	pthread_join(t, NULL);
	KT_EXPECT(back == 0 && prev > 0);
	/* And the worker's slot was tagged all along (it reaps at each slow path). */
	KT_EXPECT(atomic_load(&mono_tags) > 100);
}

KTEST(counters_never_go_back_while_a_thread_reaps)
{
	KT_ASSERT_CHILD_OK(slab_run_child("counters_while_reaping"));
}

/*
 * A constructor that allocates: its kmallocs' slow paths must not reap
 * while the slab it is building, or the sheaf being refilled, is in the
 * middle of being set up (slub_reap_events=1: every slow path would).
 */
#define CTOR_MAGIC	0x5eedf00dcafe1234ull

static void ctor_that_allocates(void *obj)
{
	void *p[100];

	for (int i = 0; i < 100; i++)
		p[i] = kmalloc(64, GFP);
	for (int i = 0; i < 100; i++)
		kfree(p[i]);
	*(unsigned long long *)obj = CTOR_MAGIC;
}

static void child_ctor_allocates(void)
{
	if (kmem_init("mem=256M nr_cpus=2 slub_reap_events=1 slub_reap_ms=0")) {
		KT_FAIL("kmem_init failed");
		return;
	}
	struct kmem_cache *s = kmem_cache_create("kt_reap_ctor", OBJ, 0, SLAB_NO_MERGE, ctor_that_allocates);
	KT_ASSERT(s);
	for (int round = 0; round < 3; round++) {
		alloc_n(s, objs, 3000);
		KT_ASSERT(slab_disjoint(objs, 3000, OBJ));
		for (int i = 0; i < 3000; i++)
			KT_ASSERT(*(unsigned long long *)objs[i] == CTOR_MAGIC);
		free_n(s, objs, 3000);
		/* Between rounds the slot is idle: it may be reaped now. */
		slub_reap_thread();
		slub_reap_thread();
		slub_reap_thread();
	}
	KT_EXPECT(kt_vmstat("slab_sheaf_reaped") > 0);
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	kmem_cache_destroy(s);
}

KTEST(a_constructor_that_allocates)
{
	KT_ASSERT_CHILD_OK(slab_run_child("ctor_allocates"));
}

static const struct slab_child children[] = {
	{ "ctor_allocates", child_ctor_allocates },
	{ "reap_default", child_reap_default },
	{ "many_caches", child_many_caches },
	{ "many_bursts", child_many_bursts },
	{ "long_rounds", child_long_rounds },
	{ "grown_then_reaped", child_grown_then_reaped },
	{ "counters_while_reaping", child_counters_while_reaping },
};

KTEST_MAIN(
	slab_child_dispatch(children, sizeof(children) / sizeof(children[0]));
	if (kmem_init(CMDLINE EXACT)) { printf("kmem_init failed\n"); return 1; }
)
