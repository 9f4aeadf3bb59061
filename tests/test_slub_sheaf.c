// SPDX-License-Identifier: MIT
/*
 * SLUB sheaves and the barn (Linux 6.18, src/slab/slub_sheaf.c; reference
 * kernel-mm.md §1.10), booted with nr_cpus=2, slub_sheaves=1 and slub_sheaf_grow_kb=0
 * (growth is tested in a child booted with it on).
 *
 *  - A thread's first refills take 2, 4, 8, 16, 32 objects (fewer for objects
 *    over 2 KiB), from the node's partial slabs: threads that allocate a
 *    few objects share slabs instead of holding a cpu slab each.
 *  - sheaf_capacity: slub_sheaf_capacity() by slot size (60, 28, 20, 12, 4,
 *    0 for debug caches), the cache field and the sysfs file agree, for
 *    caches we create and for every directory of /sys/kernel/slab.
 *  - Exact SLUB_STATS counters on a fresh 64-byte cache (60 per sheaf, 64
 *    per slab) driven by one thread: the first allocation refills main, a
 *    full main becomes the spare, a second full sheaf goes to the barn, an
 *    empty main swaps with a full spare and then trades at the barn.  Every
 *    counter is checked, through slub_stat_sum() and through sysfs.
 *  - The barn keeps as many empty sheaves as full ones, so a burst's round
 *    trips allocate and free no sheaves once it has them.
 *  - kmem_cache_shrink() flushes this thread's sheaves and the barn, and
 *    every slab goes back; bulk allocation and free go through main first.
 *  - Objects in sheaves count as active in /proc/slabinfo and sysfs, as in
 *    the kernel (to the slabs they are allocated).
 *  - Cross-thread: objects allocated by one thread and freed by another
 *    come back to the first through the barn, a sheaf at a time, and no
 *    object is ever both handed out and held in a sheaf.
 *  - Bad frees: a double free of the object on top of a sheaf (single,
 *    kfree, bulk {x, x}) is reported once and ignored.
 *  - Objects left in sheaves and the barn do not leak: not at
 *    kmem_cache_destroy(), not when a thread exits.  An exiting thread's
 *    sheaves go to the barn whole, and the next thread's allocations take
 *    them: no flush at the exit, no refill after.
 *  - fork(): a child (forked while another thread churns the barn) uses
 *    the caches; a fresh process booted with slub_sheaves=0 has no sheaves.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kmem.h>

#include "core/printk.h"
#include "slab/slab.h"
#include "slab/slub/slub.h"
#include "slab/slub/slub_internal.h"

#include "ktest.h"
#include "lib/kt_util.h"
#include "lib/slab_test.h"

#define GFP GFP_KERNEL
#define CMDLINE "mem=64M nr_cpus=2"

/* The cache most cases use: 64-byte slots, 60 objects a sheaf, 64 a slab. */
#define OBJ	64
#define CAP	60
#define OPP	64

/* ---- helpers ------------------------------------------------------------ */

#define sysfs kt_slab_attr

static unsigned long stat_of(struct kmem_cache *s, enum stat_item si)
{
	return slub_stat_sum(s, si, NULL, 0, NULL);
}

/*
 * This thread's slot for @s, NULL if it has none.  count and objs describe
 * the whole main sheaf (hot is a copy of its top).
 */
static struct kmem_cache_cpu *my_slot(struct kmem_cache *s)
{
	struct slub_thread *t = slub_this;
	struct kmem_cache_cpu *c;

	if (!t || t->cpu[s->index].cache != s)
		return NULL;
	c = &t->cpu[s->index];
	/* The fast paths' invariant (struct kmem_cache_cpu), checked on every look. */
	if (c->hot && (!c->count || c->hot != c->objs[c->count - 1]))
		KT_FAIL("%s: hot %p is not main's top (count %u)", s->name, c->hot, c->count);
	return c;
}

/* Objects in this thread's main sheaf of @s (-1: no slot). */
static int main_count(struct kmem_cache *s)
{
	struct kmem_cache_cpu *c = my_slot(s);

	return c ? (int)c->count : -1;
}

/*
 * Every SLUB_STATS counter of @s equals @want (items not listed: 0), both
 * as slub_stat_sum() and as the total in its sysfs file.  Prints each
 * difference; returns whether there was none.
 */
static bool stats_are(struct kmem_cache *s, const unsigned long *want)
{
	bool ok = true;

	for (int i = 0; i < NR_SLUB_STAT_ITEMS; i++) {
		unsigned long sum = stat_of(s, (enum stat_item)i);
		unsigned long file = strtoul(sysfs(s->name, slub_stat_names[i]), NULL, 10);
		/* Without CONFIG_SLUB_STATS objects through sheaves are not counted, nor listed. */
		if (!slub_stat_counted(i)) {
			if (sum || strncmp(sysfs(s->name, slub_stat_names[i]), "ERR", 3)) {
				fprintf(stderr, "  %s/%s: %lu, and a file; want neither\n", s->name,
					slub_stat_names[i], sum);
				ok = false;
			}
			continue;
		}
		if (sum != want[i] || file != want[i]) {
			fprintf(stderr, "  %s/%s: %lu (sysfs %lu), want %lu\n", s->name,
				slub_stat_names[i], sum, file, want[i]);
			ok = false;
		}
	}
	return ok;
}

/* A sheaf counter is @want, with CONFIG_SLUB_STATS; without, it is not counted. */
static bool pcs_is(struct kmem_cache *s, enum stat_item si, unsigned long want)
{
	return SLUB_STATS_PER_OBJECT ? stat_of(s, si) == want : stat_of(s, si) == 0;
}

#define EXPECT_STATS(s, ...) do {						\
	if (!stats_are(s, (const unsigned long[NR_SLUB_STAT_ITEMS]){ __VA_ARGS__ })) \
		KT_FAIL("SLUB_STATS of %s differ (above)", (s)->name);		\
} while (0)

#define EXPECT_SYSFS(cache, attr, want) do {					\
	const char *__got = sysfs(cache, attr);					\
	if (strcmp(__got, want))						\
		KT_FAIL("%s/%s: '%s', want '%s'", cache, attr, __got, want);	\
} while (0)

/* active_objs and num_objs of @name's /proc/slabinfo line; false if none. */
static bool slabinfo_objs(const char *name, unsigned long *active, unsigned long *num)
{
	static char buf[1 << 16];
	size_t len = strlen(name);

	if (kmem_read("/proc/slabinfo", buf, sizeof(buf)) < 0)
		return false;
	for (char *p = buf; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ' ')
			return sscanf(p + len, "%lu %lu", active, num) == 2;
	return false;
}

/* The @n objects are distinct, non-overlapping slots: none was handed out twice. */
static bool distinct(void *const *p, size_t n)
{
	return slab_disjoint(p, n, OBJ);
}

/*
 * A thread's first refills of a cache are small (refill_ramp below): the
 * exact counts of these tests are those of a thread past them, whose
 * refills fill a sheaf.
 */
static void skip_ramp(struct kmem_cache *s)
{
	struct kmem_cache_cpu *c = get_cpu_slot(s);

	if (c)
		c->sheaf_refills = SHEAF_RAMP;
}

/* A fresh 64-byte cache; this thread's slot of it is past the ramp. */
static struct kmem_cache *cache64_bare(const char *name);

static struct kmem_cache *cache64(const char *name)
{
	struct kmem_cache *s = cache64_bare(name);

	if (s)
		skip_ramp(s);
	return s;
}

/* A fresh 64-byte cache, no slot of it yet. */
static struct kmem_cache *cache64_bare(const char *name)
{
	struct kmem_cache *s = kmem_cache_create(name, OBJ, 0, SLAB_NO_MERGE, NULL);

	/* The numbers below assume this geometry: check it once here. */
	if (s && (s->size != OBJ || slub_of(s)->sheaf_capacity != CAP || oo_objects(slub_of(s)->oo) != OPP ||
		  oo_order(slub_of(s)->oo) != 0)) {
		fprintf(stderr, "  %s: size %u, sheaf_capacity %u, %u objects of order %u\n",
			name, s->size, slub_of(s)->sheaf_capacity, oo_objects(slub_of(s)->oo), oo_order(slub_of(s)->oo));
		return NULL;
	}
	return s;
}

#define alloc_n slab_alloc_n
#define free_n slab_free_n

/* ---- sheaf_capacity ----------------------------------------------------- */

KTEST(capacity_rule)
{
	static const struct { unsigned int size, cap; } rule[] = {
		{ 8, 60 }, { 64, 60 }, { 248, 60 }, { 255, 60 },
		/* At least 16 KiB of objects (at most 60), rounded up to fill a bucket. */
		{ 256, 60 }, { 512, 60 }, { 564, 60 },	/* 16384 / 564 = 29: 264 -> 512 */
		/* 26 rounds up to 28: 32 + 28 * 8 fills the 256-byte kmalloc bucket. */
		{ 565, 28 }, { 606, 28 }, { 607, 28 }, { 1016, 28 }, { 1023, 28 },
		{ 1024, 20 }, { 1260, 20 },		/* 13..16: 136..160 -> 192 */
		{ 1261, 12 }, { 2048, 12 }, { 4088, 12 }, { 4095, 12 },
		{ 4096, 4 }, { 8192, 4 }, { 65536, 4 },
	};
	static const slab_flags_t debug[] = {
		SLAB_RED_ZONE, SLAB_POISON, SLAB_STORE_USER, SLAB_CONSISTENCY_CHECKS, SLAB_TRACE,
	};

	for (size_t i = 0; i < sizeof(rule) / sizeof(rule[0]); i++) {
		if (slub_sheaf_capacity(rule[i].size, 0, 0) != rule[i].cap)
			KT_FAIL("slot %u: capacity %u, want %u", rule[i].size,
				slub_sheaf_capacity(rule[i].size, 0, 0), rule[i].cap);
		for (size_t d = 0; d < sizeof(debug) / sizeof(debug[0]); d++)
			if (slub_sheaf_capacity(rule[i].size, debug[d], 0))
				KT_FAIL("slot %u, flags %#x: sheaves on a debug cache",
					rule[i].size, (unsigned int)debug[d]);
	}
	/* Flags that are not debug flags leave the capacity alone. */
	KT_EXPECT(slub_sheaf_capacity(64, SLAB_HWCACHE_ALIGN | SLAB_RECLAIM_ACCOUNT |
					  SLAB_TYPESAFE_BY_RCU | SLAB_NO_MERGE, 0) == 60);
	/* An explicit capacity is a minimum, rounded up to fill its bucket too. */
	KT_EXPECT(slub_sheaf_capacity(64, 0, 32) == 60);
	KT_EXPECT(slub_sheaf_capacity(64, 0, 61) == 124);	/* 32 + 61 * 8 -> 1024 */
	KT_EXPECT(slub_sheaf_capacity(4096, 0, 5) == 8);	/* 32 + 5 * 8 -> 96 */
	KT_EXPECT(slub_sheaf_capacity(256, 0, 29) == 60);	/* 32 + 29 * 8 -> 512 */
	KT_EXPECT(slub_sheaf_capacity(64, SLAB_POISON, 32) == 0);
}

KTEST(capacity_of_caches)
{
	static const struct {
		const char *name;
		unsigned int size;
		slab_flags_t flags;
		unsigned int cap;
	} c[] = {
		{ "kt_cap_8", 8, 0, 60 },
		{ "kt_cap_200", 200, 0, 60 },
		{ "kt_cap_256", 256, 0, 60 },
		{ "kt_cap_1016", 1016, 0, 28 },
		{ "kt_cap_1024", 1024, 0, 20 },
		{ "kt_cap_2048", 2048, 0, 12 },
		{ "kt_cap_4088", 4088, 0, 12 },
		{ "kt_cap_4096", 4096, 0, 4 },
		{ "kt_cap_8192", 8192, 0, 4 },
		{ "kt_cap_rz", 64, SLAB_RED_ZONE, 0 },
		{ "kt_cap_poison", 64, SLAB_POISON, 0 },
		{ "kt_cap_user", 64, SLAB_STORE_USER, 0 },
	};
	struct kmem_cache *s[sizeof(c) / sizeof(c[0])];
	char want[16];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		s[i] = kmem_cache_create(c[i].name, c[i].size, 0, c[i].flags | SLAB_NO_MERGE, NULL);
		KT_ASSERT(s[i]);
		snprintf(want, sizeof(want), "%u\n", c[i].cap);
		KT_EXPECT(slub_of(s[i])->sheaf_capacity == c[i].cap);
		EXPECT_SYSFS(c[i].name, "sheaf_capacity", want);
	}
	/* Read-only, like every value attribute. */
	KT_EXPECT(kmem_write("/sys/kernel/slab/kt_cap_8/sheaf_capacity", "4") == -EACCES);
	EXPECT_SYSFS("kt_cap_8", "sheaf_capacity", "60\n");
	/* A debug cache without sheaves (kt_cap_rz) still works, on the classic paths. */
	struct kmem_cache *rz = s[9];
	KT_ASSERT(!strcmp(rz->name, "kt_cap_rz"));
	KT_EXPECT(slab_cache_works(rz, 64));
	KT_EXPECT(stat_of(rz, ALLOC_PCS) == 0 && stat_of(rz, SHEAF_ALLOC) == 0);
	KT_EXPECT(stat_of(rz, ALLOC_FASTPATH) + stat_of(rz, ALLOC_SLOWPATH) == 200);

	/* The kmalloc caches, by their names. */
	EXPECT_SYSFS("kmalloc-8", "sheaf_capacity", "60\n");
	EXPECT_SYSFS("kmalloc-192", "sheaf_capacity", "60\n");
	EXPECT_SYSFS("kmalloc-256", "sheaf_capacity", "60\n");
	EXPECT_SYSFS("kmalloc-512", "sheaf_capacity", "60\n");
	EXPECT_SYSFS("kmalloc-1k", "sheaf_capacity", "20\n");
	EXPECT_SYSFS("kmalloc-2k", "sheaf_capacity", "12\n");
	EXPECT_SYSFS("kmalloc-4k", "sheaf_capacity", "4\n");
	EXPECT_SYSFS("kmalloc-8k", "sheaf_capacity", "4\n");
	/* A mergeable cache: its unique id and its name read the same. */
	struct kmem_cache *m = kmem_cache_create("kt_cap_merge", 72, 0, 0, NULL);
	KT_ASSERT(m);
	EXPECT_SYSFS("kt_cap_merge", "sheaf_capacity", "60\n");
	EXPECT_SYSFS(":0000072", "sheaf_capacity", "60\n");
	kmem_cache_destroy(m);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		kmem_cache_destroy(s[i]);
}

/* Every directory of /sys/kernel/slab: sheaf_capacity follows slab_size and the debug flags. */
static int check_every_cache(bool sheaves)
{
	static char root[1 << 16];
	static const struct { const char *attr; slab_flags_t flag; } dbg[] = {
		{ "red_zone", SLAB_RED_ZONE }, { "poison", SLAB_POISON },
		{ "store_user", SLAB_STORE_USER }, { "sanity_checks", SLAB_CONSISTENCY_CHECKS },
		{ "trace", SLAB_TRACE },
	};
	int n = 0;

	if (kmem_read("/sys/kernel/slab", root, sizeof(root)) <= 0)
		return -1;
	for (char *save = NULL, *dir = strtok_r(root, "\n", &save); dir;
	     dir = strtok_r(NULL, "\n", &save), n++) {
		unsigned int size = (unsigned int)strtoul(sysfs(dir, "slab_size"), NULL, 10);
		slab_flags_t flags = 0;
		for (size_t i = 0; i < sizeof(dbg) / sizeof(dbg[0]); i++)
			if (!strcmp(sysfs(dir, dbg[i].attr), "1\n"))
				flags |= dbg[i].flag;
		unsigned int want = sheaves ? slub_sheaf_capacity(size, flags, 0) : 0;
		unsigned long got = strtoul(sysfs(dir, "sheaf_capacity"), NULL, 10);
		if (!size || got != want) {
			KT_FAIL("%s: slab_size %u, sheaf_capacity %lu, want %u", dir, size, got,
				want);
			return -1;
		}
	}
	return n;
}

KTEST(capacity_of_every_cache)
{
	struct kmem_cache *dbg = kmem_cache_create("kt_cap_every_dbg", 100, 0, SLAB_POISON, NULL);

	KT_ASSERT(dbg);
	/* The 13 kmalloc caches, the debug one, and whatever other cases left. */
	KT_EXPECT(check_every_cache(true) >= 14);
	kmem_cache_destroy(dbg);
}

/* ---- a thread's first refills ------------------------------------------ */

/* Allocates 400 objects of @s; *sizes gets each refill's size, in order. */
static int refill_sizes(struct kmem_cache *s, unsigned long *sizes, int max)
{
	static void *p[400];
	unsigned long before = stat_of(s, SHEAF_REFILL);
	int n = 0;

	for (int i = 0; i < 400; i++) {
		p[i] = kmem_cache_alloc(s, GFP);
		unsigned long now = stat_of(s, SHEAF_REFILL);
		if (now != before && n < max)
			sizes[n++] = now - before;
		before = now;
	}
	for (int i = 0; i < 400; i++)
		kmem_cache_free(s, p[i]);
	return n;
}

struct ramp {
	struct kmem_cache *s;
	unsigned long first;
};

static void *ramp_thread(void *arg)
{
	struct ramp *r = arg;

	refill_sizes(r->s, &r->first, 1);
	return NULL;
}

/*
 * A thread's first refills of a cache take 2, 4, 8, 16, 32 objects, then
 * full sheaves (CAP); the slab's other objects stay on the cpu freelist.
 * Each thread ramps on its own.
 */
KTEST(refill_ramp)
{
	struct kmem_cache *s = cache64_bare("kt_sheaf_ramp");
	unsigned long sizes[8];
	struct ramp other = { .s = s };
	static const unsigned long want[] = { 2, 4, 8, 16, 32, CAP, CAP };
	pthread_t t;

	KT_ASSERT(s);
	int n = refill_sizes(s, sizes, 8);
	KT_ASSERT(n >= 7);
	for (int i = 0; i < 7; i++)
		if (sizes[i] != want[i])
			KT_FAIL("refill %d: %lu objects, want %lu", i + 1, sizes[i], want[i]);
	/* Refills only ever fill main: between them, the cpu slab's freelist. */
	KT_EXPECT(stat_of(s, ALLOC_FASTPATH) > 0);
	KT_ASSERT(pthread_create(&t, NULL, ramp_thread, &other) == 0);
	pthread_join(t, NULL);
	KT_EXPECT(other.first == 2);
	kmem_cache_destroy(s);

	/*
	 * 2048-byte ones (16 a slab) 2, 4, 8; the fourth takes the 2 the
	 * shared slab has left (a short refill, as the ramp's are), the fifth
	 * 12 (its sheaf's capacity) from a new slab, and so on.
	 */
	struct kmem_cache *big = kmem_cache_create("kt_sheaf_ramp2k", 2048, 0, SLAB_NO_MERGE, NULL);
	static const unsigned long want2k[] = { 2, 4, 8, 2, 12, 12 };
	KT_ASSERT(big && slub_of(big)->sheaf_capacity == 12);
	n = refill_sizes(big, sizes, 8);
	KT_ASSERT(n >= 6);
	for (int i = 0; i < 6; i++)
		if (sizes[i] != want2k[i])
			KT_FAIL("2k refill %d: %lu objects, want %lu", i + 1, sizes[i], want2k[i]);
	kmem_cache_destroy(big);
}

#define SHARERS	8

struct sharer {
	struct kmem_cache *s;
	pthread_barrier_t *held, *done;
	void *obj[3];
	bool own_slab;
};

static void *sharer_thread(void *arg)
{
	struct sharer *sh = arg;

	for (int i = 0; i < 3; i++)
		sh->obj[i] = kmem_cache_alloc(sh->s, GFP);
	struct kmem_cache_cpu *c = my_slot(sh->s);
	sh->own_slab = !c || c->slab || c->freelist;
	pthread_barrier_wait(sh->held);
	pthread_barrier_wait(sh->done);
	for (int i = 0; i < 3; i++)
		kmem_cache_free(sh->s, sh->obj[i]);
	return NULL;
}

/*
 * The ramp's refills come from the node's partial slabs, not from a cpu
 * slab of the thread's own: 8 threads that each allocate 3 objects (a
 * refill of 8 each) fill one 64-object slab between them (two, if two of
 * them race to make the first), and none holds a cpu slab.  Before, each
 * took a slab of its own: 8 slabs.
 */
KTEST(ramp_refills_share_node_slabs)
{
	struct kmem_cache *s = cache64_bare("kt_sheaf_shared");
	struct sharer sh[SHARERS];
	pthread_t t[SHARERS];
	pthread_barrier_t held, done;

	KT_ASSERT(s);
	pthread_barrier_init(&held, NULL, SHARERS + 1);
	pthread_barrier_init(&done, NULL, SHARERS + 1);
	for (int i = 0; i < SHARERS; i++) {
		sh[i] = (struct sharer){ .s = s, .held = &held, .done = &done };
		KT_ASSERT(pthread_create(&t[i], NULL, sharer_thread, &sh[i]) == 0);
	}
	pthread_barrier_wait(&held);
	/*
	 * One slab, or two when two threads found no partial slab at the same
	 * moment and each made one (the refill does not hold list_lock across
	 * new_slab(), as the kernel does not): never a slab each.
	 */
	long slabs = atol(kt_slab_attr("kt_sheaf_shared", "slabs"));
	KT_EXPECT(slabs == 1 || slabs == 2);
	void *all[SHARERS * 3];
	for (int i = 0; i < SHARERS; i++) {
		KT_EXPECT(!sh[i].own_slab);
		for (int k = 0; k < 3; k++)
			all[i * 3 + k] = sh[i].obj[k];
	}
	KT_EXPECT(distinct(all, SHARERS * 3));
	pthread_barrier_wait(&done);
	for (int i = 0; i < SHARERS; i++)
		pthread_join(t[i], NULL);
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	EXPECT_SYSFS("kt_sheaf_shared", "slabs", "0\n");
	pthread_barrier_destroy(&held);
	pthread_barrier_destroy(&done);
	kmem_cache_destroy(s);
}

/*
 * Short-lived threads (many in their ramp, refilling from shared slabs)
 * allocate kmalloc objects of 16 B-8 KiB, hand some to each other through a
 * mailbox and free the rest, while the objects others free land in the
 * slabs being refilled from.  A refill that emptied a slab left it full and
 * unfrozen on the node list for a moment, where a free could freeze it onto
 * its own cpu partial list through the same link (list corruption; TSan
 * saw it as a race).  Contents are checked throughout.
 */
#define MAILBOX	2048

static void *_Atomic mailbox[MAILBOX];
static atomic_long mail_errors;

static uint32_t mail_rnd(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void mail_check_free(void *p)
{
	size_t n = *(uint32_t *)p;

	if (slab_check((char *)p + 8, n - 8, (uintptr_t)p))
		atomic_fetch_add(&mail_errors, 1);
	kfree(p);
}

static void *mail_worker(void *arg)
{
	uint32_t seed = (uint32_t)(uintptr_t)arg * 2654435761u;
	int n = 4 + (int)(mail_rnd(&seed) % 60);
	void *mine[64];

	for (int i = 0; i < n; i++) {
		size_t sz = 16u << (mail_rnd(&seed) % 10);
		sz += mail_rnd(&seed) % sz;
		sz = sz > 8192 ? 8192 : sz;
		mine[i] = kmalloc(sz, GFP);
		if (!mine[i]) {
			atomic_fetch_add(&mail_errors, 1);
			n = i;
			break;
		}
		*(uint32_t *)mine[i] = (uint32_t)sz;
		slab_fill((char *)mine[i] + 8, sz - 8, (uintptr_t)mine[i]);
	}
	for (int k = 0; k < 8; k++) {
		void *q = atomic_exchange(&mailbox[mail_rnd(&seed) % MAILBOX], NULL);
		if (q)
			mail_check_free(q);
	}
	for (int i = 0; i < n; i++) {
		if (mail_rnd(&seed) % 3)
			mail_check_free(mine[i]);
		else if ((mine[i] = atomic_exchange(&mailbox[mail_rnd(&seed) % MAILBOX], mine[i])))
			mail_check_free(mine[i]);
	}
	return NULL;
}

KTEST(short_lived_threads_hand_off_objects)
{
	enum { TOTAL = 512, CONC = 32 };
	pthread_t t[CONC];
	unsigned long reports = kmem_report_count();

	for (int started = 0; started < TOTAL; started += CONC) {
		for (int i = 0; i < CONC; i++)
			KT_ASSERT(pthread_create(&t[i], NULL, mail_worker,
						 (void *)(uintptr_t)(started + i + 1)) == 0);
		for (int i = 0; i < CONC; i++)
			pthread_join(t[i], NULL);
	}
	for (int i = 0; i < MAILBOX; i++) {
		void *q = atomic_exchange(&mailbox[i], NULL);
		if (q)
			mail_check_free(q);
	}
	KT_EXPECT(atomic_load(&mail_errors) == 0);
	KT_EXPECT(kmem_report_count() == reports);
}

/* ---- exact counters, one thread -------------------------------------- */

static struct kmem_cache *cnt;		/* kt_sheaf_count, shared by the next two cases */
static void *objs[200];

KTEST(counters_one_thread)
{
	unsigned long reports = kmem_report_count();
	cnt = cache64_bare("kt_sheaf_count");
	KT_ASSERT(cnt);
	EXPECT_STATS(cnt, 0);
	KT_EXPECT(main_count(cnt) == -1);	/* creating a cache makes no thread slot */
	skip_ramp(cnt);
	KT_EXPECT(main_count(cnt) == 0);	/* a slot, no sheaf yet */

	/*
	 * The first allocation installs an empty main sheaf, finds no full one
	 * in the barn and refills main with CAP objects from a new slab; the
	 * slab's other OPP - CAP objects stay on the cpu freelist.
	 */
	objs[0] = kmem_cache_alloc(cnt, GFP);
	KT_ASSERT(objs[0]);
	EXPECT_STATS(cnt, [ALLOC_PCS] = 1, [SHEAF_REFILL] = 60, [SHEAF_ALLOC] = 1,
		     [BARN_GET_FAIL] = 1, [ALLOC_SLAB] = 1);
	EXPECT_SYSFS("kt_sheaf_count", "sheaf_refill", "60 C0=60\n");
	if (SLUB_STATS_PER_OBJECT)
		EXPECT_SYSFS("kt_sheaf_count", "alloc_cpu_sheaf", "1 C0=1\n");
	EXPECT_SYSFS("kt_sheaf_count", "sheaf_alloc", "1 C0=1\n");
	EXPECT_SYSFS("kt_sheaf_count", "barn_get", "0\n");
	EXPECT_SYSFS("kt_sheaf_count", "slabs", "1 N0=1\n");
	KT_EXPECT(main_count(cnt) == 59);

	/* The rest of main: the fast path pops it. */
	alloc_n(cnt, objs + 1, 59);
	KT_EXPECT(main_count(cnt) == 0);
	KT_EXPECT(distinct(objs, 60));

	/* Frees push onto main and allocations pop them back, last in first out. */
	free_n(cnt, objs + 50, 10);
	KT_EXPECT(main_count(cnt) == 10);
	for (int i = 59; i >= 50; i--) {
		void *p = kmem_cache_alloc(cnt, GFP);
		if (p != objs[i])
			KT_FAIL("allocation %d: %p, want %p (the last freed)", 59 - i, p, objs[i]);
	}
	EXPECT_STATS(cnt, [ALLOC_PCS] = 70, [FREE_PCS] = 10, [SHEAF_REFILL] = 60,
		     [SHEAF_ALLOC] = 1, [BARN_GET_FAIL] = 1, [ALLOC_SLAB] = 1);

	/* Main is empty: the cpu slab's 4 remaining objects come next. */
	alloc_n(cnt, objs + 60, 4);
	KT_EXPECT(main_count(cnt) == 0);
	/* Then a second refill, from a second slab (the first is full). */
	objs[64] = kmem_cache_alloc(cnt, GFP);
	KT_ASSERT(objs[64]);
	KT_EXPECT(main_count(cnt) == 59);
	EXPECT_STATS(cnt, [ALLOC_PCS] = 71, [ALLOC_FASTPATH] = 4, [FREE_PCS] = 10,
		     [SHEAF_REFILL] = 120, [SHEAF_ALLOC] = 1, [BARN_GET_FAIL] = 2,
		     [ALLOC_SLAB] = 2, [DEACTIVATE_BYPASS] = 1);
	KT_EXPECT(distinct(objs, 65));

	/*
	 * Free all 65, newest first.  The first fills main (59 + 1); the next
	 * finds main full and no spare: the full sheaf becomes the spare and a
	 * new empty one main.  When that is full too (61 frees), main goes to
	 * the barn for an empty sheaf (the barn has none: a new one).
	 */
	for (int i = 64; i >= 0; i--)
		kmem_cache_free(cnt, objs[i]);
	struct kmem_cache_cpu *c = my_slot(cnt);
	KT_ASSERT(c && c->spare);
	KT_EXPECT(c->count == 4 && c->spare->size == 60);
	KT_EXPECT(slub_of(cnt)->barn.nr_full == 1 && slub_of(cnt)->barn.nr_empty == 0);
	EXPECT_STATS(cnt, [ALLOC_PCS] = 71, [ALLOC_FASTPATH] = 4, [FREE_PCS] = 75,
		     [SHEAF_REFILL] = 120, [SHEAF_ALLOC] = 3, [BARN_GET_FAIL] = 2,
		     [BARN_PUT] = 1, [ALLOC_SLAB] = 2, [DEACTIVATE_BYPASS] = 1);
	EXPECT_SYSFS("kt_sheaf_count", "barn_put", "1 C0=1\n");
	if (SLUB_STATS_PER_OBJECT)
		EXPECT_SYSFS("kt_sheaf_count", "free_cpu_sheaf", "75 C0=75\n");

	/*
	 * Allocate 69: main's 4 (the last freed first), the cpu slab's 4, then
	 * main is empty and the spare full: they swap (60).  Then main is
	 * empty again, the spare is the empty old main, and the barn has a
	 * full sheaf: main goes to the barn's empties in exchange (BARN_GET).
	 */
	alloc_n(cnt, objs, 69);
	KT_EXPECT(distinct(objs, 69));
	c = my_slot(cnt);
	KT_EXPECT(c->count == 59 && c->spare && c->spare->size == 0);
	KT_EXPECT(slub_of(cnt)->barn.nr_full == 0 && slub_of(cnt)->barn.nr_empty == 1);
	EXPECT_STATS(cnt, [ALLOC_PCS] = 136, [ALLOC_FASTPATH] = 8, [FREE_PCS] = 75,
		     [SHEAF_REFILL] = 120, [SHEAF_ALLOC] = 3, [BARN_GET] = 1,
		     [BARN_GET_FAIL] = 2, [BARN_PUT] = 1, [ALLOC_SLAB] = 2,
		     [DEACTIVATE_BYPASS] = 1);
	EXPECT_SYSFS("kt_sheaf_count", "barn_get", "1 C0=1\n");
	/* No new slab: 144 allocations, 128 objects, all from sheaves and cpu slabs. */
	EXPECT_SYSFS("kt_sheaf_count", "slabs", "2 N0=2\n");

	/*
	 * Free the 69: main fills (1), swaps with the empty spare (60), then
	 * goes to the barn, which gives back the empty sheaf it holds (no
	 * SHEAF_ALLOC): that free and the last 7 land in that one.
	 */
	free_n(cnt, objs, 69);
	c = my_slot(cnt);
	KT_EXPECT(c->count == 8 && c->spare && c->spare->size == 60);
	KT_EXPECT(slub_of(cnt)->barn.nr_full == 1 && slub_of(cnt)->barn.nr_empty == 0);
	EXPECT_STATS(cnt, [ALLOC_PCS] = 136, [ALLOC_FASTPATH] = 8, [FREE_PCS] = 144,
		     [SHEAF_REFILL] = 120, [SHEAF_ALLOC] = 3, [BARN_GET] = 1,
		     [BARN_GET_FAIL] = 2, [BARN_PUT] = 2, [ALLOC_SLAB] = 2,
		     [DEACTIVATE_BYPASS] = 1);
	KT_EXPECT(kmem_report_count() == reports);
}

KTEST(shrink_flushes_sheaves_and_barn)
{
	KT_ASSERT(cnt);
	/* Nothing is live, but 8 + 60 objects sit in our sheaves, 60 in the barn. */
	EXPECT_SYSFS("kt_sheaf_count", "objects", "128 N0=128\n");
	KT_EXPECT(kmem_cache_shrink(cnt) == 0);
	/*
	 * Main and spare flushed (8 + 60 objects, counted on this thread) and
	 * freed, the cpu slab deactivated; then the barn's full sheaf flushed
	 * (60, counted on no thread) and freed.  Both slabs were empty then.
	 */
	EXPECT_SYSFS("kt_sheaf_count", "sheaf_flush", "128 C0=68\n");
	EXPECT_SYSFS("kt_sheaf_count", "sheaf_free", "3 C0=2\n");
	EXPECT_SYSFS("kt_sheaf_count", "cpuslab_flush", "1 C0=1\n");
	EXPECT_SYSFS("kt_sheaf_count", "free_slab", "2\n");
	EXPECT_SYSFS("kt_sheaf_count", "slabs", "0\n");
	EXPECT_SYSFS("kt_sheaf_count", "objects", "0\n");
	/*
	 * Every sheaf allocated was freed.  The flush hands objects to their
	 * slabs a run at a time: one run made the full first slab a cpu
	 * partial one, a later run of it found it frozen.
	 */
	EXPECT_STATS(cnt, [ALLOC_PCS] = 136, [ALLOC_FASTPATH] = 8, [FREE_PCS] = 144,
		     [SHEAF_REFILL] = 120, [SHEAF_FLUSH] = 128, [SHEAF_ALLOC] = 3,
		     [SHEAF_FREE] = 3, [BARN_GET] = 1, [BARN_GET_FAIL] = 2, [BARN_PUT] = 2,
		     [ALLOC_SLAB] = 2, [FREE_SLAB] = 2, [CPUSLAB_FLUSH] = 1,
		     [DEACTIVATE_BYPASS] = 1, [DEACTIVATE_TO_HEAD] = 1,
		     [CPU_PARTIAL_FREE] = 1, [FREE_FROZEN] = 1);
	KT_EXPECT(slub_of(cnt)->barn.nr_full == 0 && slub_of(cnt)->barn.nr_empty == 0);
	struct kmem_cache_cpu *c = my_slot(cnt);
	KT_EXPECT(c && !c->main && !c->spare && c->count == 0 && c->cap == 0);

	/* The cache starts over: a fresh sheaf, a fresh refill. */
	void *p = kmem_cache_alloc(cnt, GFP);
	KT_ASSERT(p);
	KT_EXPECT(main_count(cnt) == 59);
	KT_EXPECT(stat_of(cnt, SHEAF_REFILL) == 180 && stat_of(cnt, SHEAF_ALLOC) == 4);
	kmem_cache_free(cnt, p);
	KT_EXPECT(kmem_cache_shrink(cnt) == 0);
	EXPECT_SYSFS("kt_sheaf_count", "slabs", "0\n");
	/* Writing 1 to shrink is the same. */
	p = kmem_cache_alloc(cnt, GFP);
	kmem_cache_free(cnt, p);
	EXPECT_SYSFS("kt_sheaf_count", "objects", "64 N0=64\n");
	KT_EXPECT(kmem_write("/sys/kernel/slab/kt_sheaf_count/shrink", "1") == 0);
	EXPECT_SYSFS("kt_sheaf_count", "objects", "0\n");
	EXPECT_SYSFS("kt_sheaf_count", "slabs", "0\n");
	kmem_cache_destroy(cnt);
	cnt = NULL;
}

KTEST(bulk_goes_through_main)
{
	unsigned long reports = kmem_report_count();
	struct kmem_cache *s = cache64("kt_sheaf_bulk");
	KT_ASSERT(s);

	objs[0] = kmem_cache_alloc(s, GFP);		/* main: 59 */
	/* A bulk allocation takes what main holds first: its top 20. */
	struct kmem_cache_cpu *c = my_slot(s);
	KT_ASSERT(c);
	void *top[20];
	memcpy(top, c->objs + 39, sizeof(top));
	KT_ASSERT(kmem_cache_alloc_bulk(s, GFP, 20, objs + 1) == 20);
	KT_EXPECT(!memcmp(objs + 1, top, sizeof(top)));
	KT_EXPECT(main_count(s) == 39);
	EXPECT_STATS(s, [ALLOC_PCS] = 21, [SHEAF_REFILL] = 60, [SHEAF_ALLOC] = 1,
		     [BARN_GET_FAIL] = 1, [ALLOC_SLAB] = 1);
	/* A bulk free pushes onto main as far as it has room. */
	kmem_cache_free_bulk(s, 20, objs + 1);
	KT_EXPECT(main_count(s) == 59);
	KT_EXPECT(pcs_is(s, FREE_PCS, 20));

	/* 100: main's 59, the cpu slab's 4, then 37 from a new slab. */
	KT_ASSERT(kmem_cache_alloc_bulk(s, GFP, 100, objs + 1) == 100);
	KT_EXPECT(distinct(objs, 101));
	KT_EXPECT(main_count(s) == 0);
	/* Main ran empty: no spare, and the barn had nothing (a second BARN_GET_FAIL). */
	EXPECT_STATS(s, [ALLOC_PCS] = 80, [ALLOC_FASTPATH] = 40, [ALLOC_SLOWPATH] = 1,
		     [FREE_PCS] = 20, [SHEAF_REFILL] = 60, [SHEAF_ALLOC] = 1,
		     [BARN_GET_FAIL] = 2, [ALLOC_SLAB] = 2, [DEACTIVATE_BYPASS] = 1);
	/* Freeing them: main takes 60, becomes the spare, and a new main takes 40. */
	kmem_cache_free_bulk(s, 100, objs + 1);
	KT_EXPECT(main_count(s) == 40);
	KT_EXPECT(my_slot(s)->spare && my_slot(s)->spare->size == CAP);
	KT_EXPECT(pcs_is(s, FREE_PCS, 120));
	KT_EXPECT(stat_of(s, SHEAF_ALLOC) == 2);
	KT_EXPECT(stat_of(s, FREE_FASTPATH) + stat_of(s, FREE_SLOWPATH) == 0);
	/* And they come back from the two sheaves, main's 40 first. */
	KT_ASSERT(kmem_cache_alloc_bulk(s, GFP, 100, objs + 1) == 100);
	KT_EXPECT(distinct(objs, 101));
	KT_EXPECT(pcs_is(s, ALLOC_PCS, 180));
	KT_EXPECT(stat_of(s, ALLOC_FASTPATH) == 40 && stat_of(s, ALLOC_SLOWPATH) == 1);
	kmem_cache_free_bulk(s, 100, objs + 1);
	kmem_cache_free(s, objs[0]);
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	EXPECT_SYSFS("kt_sheaf_bulk", "slabs", "0\n");
	KT_EXPECT(kmem_report_count() == reports);
	kmem_cache_destroy(s);
}

/*
 * One thread frees more objects than its sheaves and the barn can hold:
 * main and spare fill, full sheaves go to the barn until it refuses one
 * (at MAX_FULL_SHEAVES in the kernel; kmem may allow more, see
 * slub_barn_kb), and then that main sheaf's objects go back to their slabs.
 * The limit L is read off the counters; everything else follows from it.
 */
#define NBIG	(70 * CAP)

KTEST(full_barn_flushes_to_slabs)
{
	static void *p[NBIG];
	unsigned long reports = kmem_report_count();
	struct kmem_cache *s = cache64("kt_sheaf_barn_full");
	KT_ASSERT(s);

	/* 4200 = 65 * 64 + 40 objects: 66 refills of 60, main keeps 20. */
	alloc_n(s, p, NBIG);
	KT_EXPECT(distinct(p, NBIG));
	KT_EXPECT(main_count(s) == 20);
	EXPECT_SYSFS("kt_sheaf_barn_full", "slabs", "66 N0=66\n");

	/* Free until the barn refuses a full sheaf. */
	int freed = 0;
	while (freed < NBIG && !stat_of(s, BARN_PUT_FAIL))
		kmem_cache_free(s, p[freed++]);
	unsigned long limit = stat_of(s, BARN_PUT);
	KT_ASSERT(stat_of(s, BARN_PUT_FAIL) == 1);
	KT_EXPECT(limit >= MAX_FULL_SHEAVES);
	KT_EXPECT(slub_of(s)->barn.nr_full == limit && slub_of(s)->barn.nr_empty == 0);
	/*
	 * 40 frees fill main, the next makes it the spare, then each 60th
	 * sends a full main to the barn (for a new empty sheaf), L times; the
	 * next 60th finds the barn full: main is flushed (60 objects, the only
	 * flush) and takes that free.
	 */
	KT_EXPECT(freed == 40 + 60 * ((int)limit + 1) + 1);
	KT_EXPECT(main_count(s) == 1 && my_slot(s)->spare->size == CAP);
	KT_EXPECT(stat_of(s, SHEAF_FLUSH) == 60);
	KT_EXPECT(stat_of(s, SHEAF_ALLOC) == limit + 2);
	KT_EXPECT(pcs_is(s, FREE_PCS, (unsigned long)freed));
	EXPECT_SYSFS("kt_sheaf_barn_full", "barn_put_fail", "1 C0=1\n");
	EXPECT_SYSFS("kt_sheaf_barn_full", "sheaf_flush", "60 C0=60\n");
	EXPECT_SYSFS("kt_sheaf_barn_full", "free_fastpath", "0\n");
	EXPECT_SYSFS("kt_sheaf_barn_full", "free_slowpath", "0\n");
	/*
	 * The 60 flushed went to slabs this thread now has as cpu partial
	 * ones, whose free objects count as in use (as in the kernel), like
	 * those in sheaves and the barn: all 66 * 64.
	 */
	EXPECT_SYSFS("kt_sheaf_barn_full", "objects", "4224 N0=4224\n");
	KT_EXPECT(stat_of(s, CPU_PARTIAL_FREE) > 0);

	/*
	 * Everything back.  Every object that was in a sheaf, the 4200 freed
	 * and the 20 main kept, was flushed once (at a refused put or by the
	 * shrink); only the last slab's 4 on the cpu freelist never were.
	 */
	free_n(s, p + freed, NBIG - freed);
	KT_EXPECT(pcs_is(s, FREE_PCS, NBIG));
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	EXPECT_SYSFS("kt_sheaf_barn_full", "slabs", "0\n");
	KT_EXPECT(stat_of(s, SHEAF_FLUSH) == NBIG + 20);
	KT_EXPECT(stat_of(s, SHEAF_ALLOC) == stat_of(s, SHEAF_FREE));
	KT_EXPECT(kmem_report_count() == reports);
	kmem_cache_destroy(s);
}

/*
 * A burst that fills the barn with more than the kernel's 10 full sheaves
 * needs as many empty ones to go on, and its allocations give them back:
 * the barn keeps them all (max_empty = max_full), so the second and later
 * round trips allocate and free no sheaf at all.  With the kernel's 10
 * empties every round trip freed and allocated 30 sheaves here.
 */
#define BURST	(40 * CAP)

KTEST(barn_keeps_the_empties_of_a_burst)
{
	static void *p[BURST];
	struct kmem_cache *s = cache64("kt_sheaf_barn_empties");
	KT_ASSERT(s);
	KT_ASSERT(slub_of(s)->barn.max_full >= 40);

	alloc_n(s, p, BURST);
	free_n(s, p, BURST);
	unsigned long puts = stat_of(s, BARN_PUT);
	KT_EXPECT(puts >= 30 && stat_of(s, BARN_PUT_FAIL) == 0);
	alloc_n(s, p, BURST);
	KT_EXPECT(distinct(p, BURST));
	/* Every empty traded for a full sheaf stayed in the barn. */
	KT_EXPECT(slub_of(s)->barn.nr_empty == stat_of(s, BARN_GET));
	KT_EXPECT(stat_of(s, SHEAF_FREE) == 0);

	unsigned long sheaves = stat_of(s, SHEAF_ALLOC);
	for (int round = 0; round < 3; round++) {
		free_n(s, p, BURST);
		alloc_n(s, p, BURST);
	}
	KT_EXPECT(distinct(p, BURST));
	KT_EXPECT(stat_of(s, BARN_PUT) == 4 * puts);
	KT_EXPECT(stat_of(s, SHEAF_ALLOC) == sheaves);
	KT_EXPECT(stat_of(s, SHEAF_FREE) == 0);
	KT_EXPECT(stat_of(s, SHEAF_FLUSH) == 0);

	free_n(s, p, BURST);
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	KT_EXPECT(stat_of(s, SHEAF_ALLOC) == stat_of(s, SHEAF_FREE));
	kmem_cache_destroy(s);
}

/* ---- what /proc/slabinfo counts ------------------------------------------ */

KTEST(sheaf_objects_count_as_active)
{
	struct kmem_cache *s = cache64("kt_sheaf_active");
	unsigned long active, num;
	KT_ASSERT(s);

	/* One object live: the slab's other 63 are in main or on the cpu freelist. */
	void *p = kmem_cache_alloc(s, GFP);
	KT_ASSERT(slabinfo_objs("kt_sheaf_active", &active, &num));
	KT_EXPECT(active == 64 && num == 64);
	kmem_cache_free(s, p);
	/* Freed into main: still allocated as far as the slab knows, as in the kernel. */
	KT_ASSERT(slabinfo_objs("kt_sheaf_active", &active, &num));
	KT_EXPECT(active == 64 && num == 64);
	EXPECT_SYSFS("kt_sheaf_active", "objects", "64 N0=64\n");

	/* 64 live, then none: 60 in the spare (main was full), 4 in main. */
	alloc_n(s, objs, 64);
	free_n(s, objs, 64);
	KT_ASSERT(slabinfo_objs("kt_sheaf_active", &active, &num));
	KT_EXPECT(active == 64 && num == 64);
	KT_EXPECT(main_count(s) == 4 && my_slot(s)->spare->size == 60);
	/* Shrinking gives them back: nothing is active, no slab is left. */
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	KT_ASSERT(slabinfo_objs("kt_sheaf_active", &active, &num));
	KT_EXPECT(active == 0 && num == 0);
	kmem_cache_destroy(s);
}

/* ---- cross-thread ------------------------------------------------------ */

#define XN	(4 * CAP)	/* objects A hands to B */
#define XHELD	(2 * CAP)	/* what B's main and spare keep of them */
#define XBACK	(12 + 4 + 2 * CAP)	/* what A gets back without a new slab */

struct xthread {
	struct kmem_cache *s;
	void **objs;
	void *held[XHELD];		/* B's sheaves after the frees */
	int nr_held, bad;
	pthread_barrier_t freed, done;
};

static void *freeing_thread(void *arg)
{
	struct xthread *x = arg;

	for (int i = 0; i < XN; i++) {
		if (slab_check(x->objs[i], OBJ, (uintptr_t)i))
			x->bad++;
		kmem_cache_free(x->s, x->objs[i]);
	}
	/* What our sheaves hold must not be handed out while we hold it. */
	struct kmem_cache_cpu *c = my_slot(x->s);
	if (c && c->spare && c->count + c->spare->size == XHELD) {
		memcpy(x->held, c->objs, c->count * sizeof(void *));
		memcpy(x->held + c->count, c->spare->objects, c->spare->size * sizeof(void *));
		x->nr_held = XHELD;
	}
	pthread_barrier_wait(&x->freed);
	pthread_barrier_wait(&x->done);
	return NULL;
}

KTEST(cross_thread_through_the_barn)
{
	unsigned long reports = kmem_report_count();
	static void *mine[XN], *all[XBACK + XHELD];
	struct xthread x = { .objs = mine };
	pthread_t t;

	x.s = cache64("kt_sheaf_xthr");
	KT_ASSERT(x.s);
	/* A (this thread) allocates 240 = 3 * 64 + 48: 4 slabs, 12 left in main. */
	for (int i = 0; i < XN; i++) {
		KT_ASSERT((mine[i] = kmem_cache_alloc(x.s, GFP)) != NULL);
		slab_fill(mine[i], OBJ, (uintptr_t)i);
	}
	KT_EXPECT(main_count(x.s) == 12);
	KT_EXPECT(stat_of(x.s, ALLOC_SLAB) == 4);

	/*
	 * B frees them all: into a main sheaf of its own, then the spare, then
	 * two full sheaves go to the barn.  B keeps a full main and spare.
	 */
	pthread_barrier_init(&x.freed, NULL, 2);
	pthread_barrier_init(&x.done, NULL, 2);
	KT_ASSERT(pthread_create(&t, NULL, freeing_thread, &x) == 0);
	pthread_barrier_wait(&x.freed);
	KT_EXPECT(x.bad == 0);
	KT_EXPECT(x.nr_held == XHELD);
	KT_EXPECT(slub_of(x.s)->barn.nr_full == 2);
	/* C0 is A (first to use the cache), C1 is B. */
	if (SLUB_STATS_PER_OBJECT)
		EXPECT_SYSFS("kt_sheaf_xthr", "free_cpu_sheaf", "240 C1=240\n");
	EXPECT_SYSFS("kt_sheaf_xthr", "barn_put", "2 C1=2\n");
	EXPECT_SYSFS("kt_sheaf_xthr", "sheaf_alloc", "5 C0=1 C1=4\n");
	EXPECT_SYSFS("kt_sheaf_xthr", "free_fastpath", "0\n");
	EXPECT_SYSFS("kt_sheaf_xthr", "free_slowpath", "0\n");

	/* A allocates again: main's 12, the cpu slab's 4, then both barn sheaves. */
	for (int i = 0; i < XBACK; i++) {
		KT_ASSERT((all[i] = kmem_cache_alloc(x.s, GFP)) != NULL);
		slab_fill(all[i], OBJ, (uintptr_t)all[i]);
	}
	EXPECT_SYSFS("kt_sheaf_xthr", "barn_get", "2 C0=2\n");
	EXPECT_SYSFS("kt_sheaf_xthr", "barn_get_fail", "4 C0=4\n");
	EXPECT_SYSFS("kt_sheaf_xthr", "alloc_slab", "4 C0=4\n");
	KT_EXPECT(slub_of(x.s)->barn.nr_full == 0);
	/*
	 * What A got and what B holds are distinct objects, and together they
	 * are every object of the 4 slabs: nothing lost, nothing twice.
	 */
	memcpy(all + XBACK, x.held, sizeof(x.held));
	KT_EXPECT(slab_disjoint(all, XBACK + XHELD, OBJ));
	EXPECT_SYSFS("kt_sheaf_xthr", "total_objects", "256 N0=256\n");
	for (int i = 0; i < XBACK; i++)
		if (slab_check(all[i], OBJ, (uintptr_t)all[i]))
			KT_FAIL("object %d (%p) overwritten", i, all[i]);
	free_n(x.s, all, XBACK);

	pthread_barrier_wait(&x.done);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&x.freed);
	pthread_barrier_destroy(&x.done);
	/* B's sheaves were flushed at its exit, ours and the barn's now. */
	KT_EXPECT(kmem_cache_shrink(x.s) == 0);
	EXPECT_SYSFS("kt_sheaf_xthr", "slabs", "0\n");
	KT_EXPECT(stat_of(x.s, SHEAF_ALLOC) == stat_of(x.s, SHEAF_FREE));
	KT_EXPECT(kmem_report_count() == reports);
	kmem_cache_destroy(x.s);
}

/* ---- bad frees ----------------------------------------------------------- */

/*
 * After double frees: 3 sheaves' worth of objects (every free one of the
 * cache and more) are distinct, so no object was handed out twice.
 */
static bool not_handed_out_twice(struct kmem_cache *s)
{
	enum { N = 3 * CAP + 10 };
	void *p[N];
	bool ok;

	alloc_n(s, p, N);
	ok = distinct(p, N);
	free_n(s, p, N);
	return ok;
}

KTEST(double_free_on_top_of_a_sheaf)
{
	struct kmem_cache *s = cache64("kt_sheaf_df");
	KT_ASSERT(s);

	/* 66 live: main holds 58 of the second slab's objects. */
	alloc_n(s, objs, 66);
	KT_ASSERT(main_count(s) == 58);
	unsigned long reports = kmem_report_count();

	/* Main has room: the fast path sees x on top and leaves it to the slow path. */
	kmem_cache_free(s, objs[65]);
	KT_ASSERT_ONE_REPORT(kmem_cache_free(s, objs[65]), "Object already free");
	KT_EXPECT(main_count(s) == 59);
	/* Main is full with x on top: the slow path checks before anything moves. */
	kmem_cache_free(s, objs[64]);
	KT_ASSERT_ONE_REPORT(kmem_cache_free(s, objs[64]), "Object already free");
	KT_EXPECT(main_count(s) == CAP);
	/* x went into a new main (the full one is the spare now). */
	kmem_cache_free(s, objs[63]);
	KT_EXPECT(main_count(s) == 1 && my_slot(s)->spare->size == CAP);
	KT_ASSERT_ONE_REPORT(kmem_cache_free(s, objs[63]), "Object already free");
	KT_EXPECT(main_count(s) == 1);
	/* A bulk free of {x, x}: the second x is the top of main by then. */
	void *pair[2] = { objs[62], objs[62] };
	KT_ASSERT_ONE_REPORT(kmem_cache_free_bulk(s, 2, pair), "Object already free");
	KT_EXPECT(main_count(s) == 2);
	KT_EXPECT(pcs_is(s, FREE_PCS, 4));
	KT_EXPECT(kmem_report_count() == reports + 4);

	free_n(s, objs, 62);
	KT_EXPECT(not_handed_out_twice(s));
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	EXPECT_SYSFS("kt_sheaf_df", "slabs", "0\n");
	KT_EXPECT(kmem_report_count() == reports + 4);
	kmem_cache_destroy(s);
}

/*
 * An object as a program uses it: its first word written.  A freed object
 * keeps the free key there (the double-free check, slub.h); freed again
 * unwritten, it takes the slow path, which looks for it among the free ones.
 */
static void *used(void *p)
{
	if (p)
		memset(p, 0x5a, sizeof(void *));
	return p;
}

/*
 * The slot's hot word is a copy of the main sheaf's top, objs[count - 1],
 * or NULL (main empty): the fast paths and the bulk ones keep it so.
 * Checked from the raw slot.
 */
KTEST(hot_object_is_the_top_of_main)
{
	struct kmem_cache *s = cache64("kt_sheaf_hot");
	KT_ASSERT(s);
	void *a = used(kmem_cache_alloc(s, GFP)), *b = used(kmem_cache_alloc(s, GFP));
	KT_ASSERT(a && b && a != b);
	struct kmem_cache_cpu *c = &slub_this->cpu[s->index];
	unsigned int n = c->count;

	KT_EXPECT(n > 0 && c->hot == c->objs[n - 1]);
	kmem_cache_free(s, a);
	KT_EXPECT(c->hot == a && c->count == n + 1 && c->objs[n] == a);
	kmem_cache_free(s, b);
	KT_EXPECT(c->hot == b && c->count == n + 2 && c->objs[n + 1] == b && c->objs[n] == a);
	/* a is second from the top: caught as well, and nothing moves. */
	KT_ASSERT_ONE_REPORT(kmem_cache_free(s, a), "Object already free");
	KT_ASSERT_ONE_REPORT(kmem_cache_free(s, b), "Object already free");
	KT_EXPECT(main_count(s) == (int)n + 2);
	KT_EXPECT(c->hot == b && c->objs[n + 1] == b && c->objs[n] == a);
	/* LIFO: an allocation of the hot object brings the next top (a) up into hot. */
	KT_EXPECT(used(kmem_cache_alloc(s, GFP)) == b && c->hot == a && c->count == n + 1);
	kmem_cache_free(s, b);
	KT_EXPECT(c->hot == b && c->count == n + 2);
	KT_EXPECT(used(kmem_cache_alloc(s, GFP)) == b && c->hot == a && c->count == n + 1);
	KT_EXPECT(used(kmem_cache_alloc(s, GFP)) == a && c->count == n && c->hot == c->objs[n - 1]);
	/* Emptied through the hot word, main leaves hot NULL (objs[-1] is a NULL guard). */
	void *rest[64];
	unsigned int k = 0;
	while (c->hot && k < 64)
		rest[k++] = used(kmem_cache_alloc(s, GFP));
	KT_EXPECT(k == n && c->count == 0 && c->hot == NULL);
	for (unsigned int i = 0; i < k; i++)
		kmem_cache_free(s, rest[k - 1 - i]);
	KT_EXPECT(c->hot == rest[0] && c->count == n);
	/* Bulk calls leave it the top too. */
	void *bulk[8];
	KT_ASSERT(kmem_cache_alloc_bulk(s, GFP, 8, bulk) == 8);
	KT_EXPECT(c->count == n - 8 && c->hot == c->objs[n - 9]);
	for (int i = 0; i < 8; i++)
		used(bulk[i]);
	kmem_cache_free_bulk(s, 8, bulk);
	KT_EXPECT(c->count == n && c->hot == c->objs[n - 1] && c->hot == bulk[7]);
	kmem_cache_free(s, a);
	kmem_cache_free(s, b);
	/* Shrink, destroy and thread exit settle it: nothing is lost. */
	KT_EXPECT(not_handed_out_twice(s));
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	EXPECT_SYSFS("kt_sheaf_hot", "slabs", "0\n");
	kmem_cache_destroy(s);
}

/*
 * Bulk calls walk through the spare and the barn as single calls do (the
 * kernel's alloc_from_pcs_bulk / free_to_pcs_bulk), and a bulk free stops
 * at the barn's limit: the rest goes to the slabs.
 */
static void *many[(2 + MAX_FULL_SHEAVES_CAP) * CAP + 500];

KTEST(bulk_through_spare_and_barn)
{
	unsigned long reports = kmem_report_count();
	struct kmem_cache *s = cache64("kt_sheaf_bulk_barn");
	KT_ASSERT(s);

	KT_ASSERT(kmem_cache_alloc_bulk(s, GFP, 200, many) == 200);
	KT_EXPECT(distinct(many, 200));
	KT_EXPECT(pcs_is(s, ALLOC_PCS, 0));
	/* main 60 -> spare, main 60 -> barn, main 60 -> barn, main 20. */
	kmem_cache_free_bulk(s, 200, many);
	KT_EXPECT(main_count(s) == 20);
	KT_EXPECT(pcs_is(s, FREE_PCS, 200));
	KT_EXPECT(stat_of(s, BARN_PUT) == 2 && slub_of(s)->barn.nr_full == 2);
	KT_EXPECT(stat_of(s, FREE_FASTPATH) + stat_of(s, FREE_SLOWPATH) == 0);
	/* Back: main's 20, the spare's 60, two full sheaves from the barn. */
	KT_ASSERT(kmem_cache_alloc_bulk(s, GFP, 200, many) == 200);
	KT_EXPECT(distinct(many, 200));
	KT_EXPECT(pcs_is(s, ALLOC_PCS, 200));
	KT_EXPECT(stat_of(s, BARN_GET) == 2 && slub_of(s)->barn.nr_full == 0);
	kmem_cache_free_bulk(s, 200, many);

	/* More than main, spare and a full barn hold: the rest to slabs. */
	const unsigned int n = sizeof(many) / sizeof(many[0]);
	unsigned int room = (2 + slub_of(s)->barn.max_full) * CAP;
	KT_ASSERT(room < n);
	KT_ASSERT(kmem_cache_alloc_bulk(s, GFP, n, many) == (int)n);
	KT_EXPECT(distinct(many, n));
	unsigned long pcs = stat_of(s, FREE_PCS), slabs = stat_of(s, FREE_FASTPATH) + stat_of(s, FREE_SLOWPATH);
	kmem_cache_free_bulk(s, n, many);
	KT_EXPECT(slub_of(s)->barn.nr_full == slub_of(s)->barn.max_full);
	KT_EXPECT(main_count(s) == CAP && my_slot(s)->spare->size == CAP);
	KT_EXPECT(pcs_is(s, FREE_PCS, pcs + room));
	KT_EXPECT(stat_of(s, FREE_FASTPATH) + stat_of(s, FREE_SLOWPATH) - slabs == n - room);
	KT_EXPECT(stat_of(s, BARN_PUT_FAIL) == 1);
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	EXPECT_SYSFS("kt_sheaf_bulk_barn", "slabs", "0\n");
	KT_EXPECT(kmem_report_count() == reports);
	kmem_cache_destroy(s);
}

KTEST(bulk_double_free_at_main_boundary)
{
	struct kmem_cache *s = cache64("kt_sheaf_bulk_df");
	KT_ASSERT(s);
	void *a = kmem_cache_alloc(s, GFP), *x = kmem_cache_alloc(s, GFP);
	KT_ASSERT(a && x);

	kmem_cache_free(s, a);			/* main: 59 of 60 */
	KT_ASSERT(main_count(s) == CAP - 1);
	/* x fills main; the second x must not reach its slab as well. */
	void *pair[2] = { x, x };
	KT_ASSERT_ONE_REPORT(kmem_cache_free_bulk(s, 2, pair), "Object already free");
	/* A bad entry between two copies does not hide the second one. */
	void *y = kmem_cache_alloc(s, GFP), *z = kmem_cache_alloc(s, GFP);
	KT_ASSERT(y && z);
	void *bad[3] = { y, (char *)z + 8, y };
	unsigned long reports = kmem_report_count();
	kmem_cache_free_bulk(s, 3, bad);
	KT_EXPECT(kmem_report_count() == reports + 2);	/* the inside pointer, then y again */
	kmem_cache_free(s, z);
	KT_EXPECT(not_handed_out_twice(s));
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	kmem_cache_destroy(s);
}

/*
 * Main fills on an object and the barn has no room: the rest of the array
 * goes to the slab path, which cannot see that a repeat of that object
 * sits in a sheaf.  It is reported here instead.
 */
KTEST(bulk_double_free_at_main_boundary_barn_full)
{
	enum { N = 1200 };	/* past the barn: 42 sheaves of 12 at slub_barn_kb=1024 */
	static void *o[N];
	struct kmem_cache *s = kmem_cache_create("kt_sheaf_barn_df", 2048, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(s);
	skip_ramp(s);
	const int cap = (int)slub_of(s)->sheaf_capacity;
	for (int i = 0; i < N; i++)
		KT_ASSERT((o[i] = kmem_cache_alloc(s, GFP)) != NULL);
	void *a = kmem_cache_alloc(s, GFP);
	KT_ASSERT(a);
	/* Barn at its limit, the spare full, main one short of full. */
	int i = 0;
	for (struct kmem_cache_cpu *c = my_slot(s); i < N; i++) {
		if (slub_of(s)->barn.nr_full == slub_of(s)->barn.max_full && c->spare && (int)c->spare->size == cap &&
		    main_count(s) == cap - 1)
			break;
		kmem_cache_free(s, o[i]);
	}
	KT_ASSERT(i < N - 4);
	/* More than SLUB_BULK_SINGLE entries: the bulk path, not single frees. */
	void *v[6] = { a, a, o[N - 1], o[N - 2], o[N - 3], o[N - 4] };
	KT_ASSERT_ONE_REPORT(kmem_cache_free_bulk(s, 6, v), "Object already free");
	for (; i < N - 4; i++)
		kmem_cache_free(s, o[i]);
	KT_EXPECT(not_handed_out_twice(s));
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	kmem_cache_destroy(s);
}

KTEST(double_free_into_a_fully_free_slab)
{
	struct kmem_cache *s = cache64("kt_sheaf_df_empty");
	KT_ASSERT(s);
	void *x = kmem_cache_alloc(s, GFP);
	KT_ASSERT(x);

	kmem_cache_free(s, x);
	/* validate flushes this thread: x is back in its slab, now empty and kept. */
	KT_EXPECT(kmem_write("/sys/kernel/slab/kt_sheaf_df_empty/validate", "1") >= 0);
	struct slab *slab = virt_to_slab(x);
	KT_ASSERT(slab && ss_inuse(slab_state(slab)) == 0);
	/* Every object of the slab is free: the sheaf must not take x again. */
	KT_ASSERT_ONE_REPORT(kmem_cache_free(s, x), "Object already free");
	void *y = kmem_cache_alloc(s, GFP);
	KT_EXPECT(y != NULL);
	kmem_cache_free(s, y);
	void *pair[1] = { x };
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	/* The same through a bulk free, once the slab is empty again. */
	x = kmem_cache_alloc(s, GFP);
	kmem_cache_free(s, x);
	KT_EXPECT(kmem_write("/sys/kernel/slab/kt_sheaf_df_empty/validate", "1") >= 0);
	if ((slab = virt_to_slab(x)) && ss_inuse(slab_state(slab)) == 0)
		KT_ASSERT_ONE_REPORT(kmem_cache_free_bulk(s, 1, pair), "Object already free");
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	kmem_cache_destroy(s);
}

/*
 * A double free deeper than the top two of main, which the kernel does not
 * catch when it is pushed: the free key finds it in main at once, and
 * nothing is pushed twice.  (Without the key the flush of the first copy
 * emptied the slab, and the second copy, finding no slab, was reported
 * then.)
 */
KTEST(double_free_whose_slab_went_back_meanwhile)
{
	struct kmem_cache *s = kmem_cache_create("kt_sheaf_df_gone", 800, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(s);
	unsigned int k = oo_objects(slub_of(s)->oo);
	KT_ASSERT(k >= 2 && 3 * k <= 200 && slub_of(s)->sheaf_capacity >= k + 2);
	/* Empty slabs go back at once, and none waits on a per-thread list. */
	KT_EXPECT(kmem_write("/sys/kernel/slab/kt_sheaf_df_gone/cpu_partial", "0") == 0);
	KT_EXPECT(kmem_write("/sys/kernel/slab/kt_sheaf_df_gone/min_partial", "0") == 0);
	alloc_n(s, objs, 3 * k);

	/* A slab all of whose objects we hold, not the cpu slab; b from another. */
	struct slab *a = NULL;
	for (unsigned int i = 0; i < 3 * k && !a; i++) {
		struct slab *sl = virt_to_slab(objs[i]);
		unsigned int held = 0;
		for (unsigned int j = 0; j < 3 * k; j++)
			held += virt_to_slab(objs[j]) == sl;
		if (held == k && sl != my_slot(s)->slab)
			a = sl;
	}
	KT_ASSERT(a);
	void *in_a[64], *b = NULL, *rest[200];
	unsigned int na = 0, nrest = 0;
	for (unsigned int i = 0; i < 3 * k; i++) {
		if (virt_to_slab(objs[i]) == a)
			in_a[na++] = objs[i];
		else if (!b)
			b = objs[i];
		else
			rest[nrest++] = objs[i];
	}
	KT_ASSERT(na == k && b);
	/* Main empty, so the k + 2 frees below all land in it. */
	void *drain[200];
	int nd = main_count(s);
	alloc_n(s, drain, nd);
	KT_ASSERT(main_count(s) == 0);

	for (unsigned int i = 0; i < k; i++)
		kmem_cache_free(s, in_a[i]);
	kmem_cache_free(s, b);
	unsigned long reports = kmem_report_count();
	/* Deep in main: found by the free key, reported, not pushed. */
	KT_ASSERT_ONE_REPORT(kmem_cache_free(s, in_a[0]), "Object already free");
	KT_EXPECT(main_count(s) == (int)k + 1);

	/* The flush frees the k (the slab goes back) and b: nothing else to say. */
	kmem_cache_shrink(s);
	KT_EXPECT(!PageSlab(virt_to_page(in_a[0])));
	free_n(s, rest, (int)nrest);
	free_n(s, drain, nd);
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	KT_EXPECT(kmem_report_count() == reports + 1);
	kmem_cache_destroy(s);
}

KTEST(double_kfree_on_top_of_a_sheaf)
{
	struct kmem_cache *s = kmalloc_caches[kmalloc_slab_index(OBJ)];
	KT_ASSERT(s && slub_of(s)->sheaf_capacity == CAP);
	unsigned long reports = kmem_report_count();
	void *x = kmalloc(OBJ, GFP);

	KT_ASSERT(x);
	kfree(x);
	KT_ASSERT_ONE_REPORT(kfree(x), "Object already free");
	/* And again: the report names the kmalloc cache. */
	KT_ASSERT_ONE_REPORT(kfree(x), "BUG kmalloc-64 ");
	KT_EXPECT(not_handed_out_twice(s));
	/* kmalloc() hands it out once too. */
	void *p[3 * CAP];
	for (int i = 0; i < 3 * CAP; i++)
		KT_ASSERT((p[i] = kmalloc(OBJ, GFP)) != NULL);
	KT_EXPECT(distinct(p, 3 * CAP));
	for (int i = 0; i < 3 * CAP; i++)
		kfree(p[i]);
	KT_EXPECT(kmem_report_count() == reports + 2);
}

/* ---- nothing leaks ------------------------------------------------------- */

KTEST(destroy_with_objects_in_sheaves_and_barn)
{
	long pages0 = slab_pages_now(), unrecl0 = kt_vmstat("nr_slab_unreclaimable");
	unsigned long reports = kmem_report_count();
	struct kmem_cache *s = cache64("kt_sheaf_destroy");
	KT_ASSERT(s);

	/*
	 * 185 = 3 * CAP + 5 from 3 slabs (main keeps 3 of the last refill), all
	 * freed: 8 in main, a full spare, two full sheaves in the barn.
	 */
	alloc_n(s, objs, 3 * CAP + 5);
	KT_EXPECT(distinct(objs, 3 * CAP + 5));
	KT_EXPECT(main_count(s) == 3);
	free_n(s, objs, 3 * CAP + 5);
	KT_EXPECT(main_count(s) == 8 && my_slot(s)->spare->size == CAP);
	KT_EXPECT(slub_of(s)->barn.nr_full == 2);
	KT_EXPECT(slab_pages_now() > pages0);

	/* They are free objects, not leaks: destroy says nothing and frees every slab. */
	struct kt_capture cap;
	kt_capture_begin(&cap);
	kmem_cache_destroy(s);
	char *out = kt_capture_end(&cap);
	KT_EXPECT(out[0] == '\0');
	if (out[0])
		fprintf(stderr, "%s", out);
	free(out);
	KT_EXPECT(kmem_report_count() == reports);
	KT_EXPECT(slab_pages_now() == pages0);
	KT_EXPECT(kt_vmstat("nr_slab_unreclaimable") == unrecl0);
	KT_EXPECT(!strncmp(sysfs("kt_sheaf_destroy", "slabs"), "ERR", 3));
}

/* A thread that allocates @n objects of @s, frees them and exits. */
struct exiting {
	struct kmem_cache *s;
	int n, bad;
};

static void *alloc_free_exit(void *arg)
{
	struct exiting *e = arg;
	void **p = calloc((size_t)e->n, sizeof(*p));

	skip_ramp(e->s);
	for (int i = 0; i < e->n; i++) {
		p[i] = kmem_cache_alloc(e->s, GFP);
		slab_fill(p[i], OBJ, (uintptr_t)i);
	}
	for (int i = 0; i < e->n; i++) {
		e->bad += slab_check(p[i], OBJ, (uintptr_t)i) != 0;
		kmem_cache_free(e->s, p[i]);
	}
	free(p);
	return NULL;
}

KTEST(thread_exit_returns_its_sheaves)
{
	unsigned long reports = kmem_report_count();
	struct exiting e = { .n = 100 };
	pthread_t t;

	e.s = cache64_bare("kt_sheaf_exit");
	KT_ASSERT(e.s);
	/*
	 * 100 objects from 2 slabs, then freed: main fills, becomes the spare,
	 * the next main fills and goes to the barn; the thread exits with 4 in
	 * main and 60 in the spare, and its exit leaves both in the barn,
	 * whole: nothing is flushed to the slabs, no sheaf is freed.
	 */
	KT_ASSERT(pthread_create(&t, NULL, alloc_free_exit, &e) == 0);
	pthread_join(t, NULL);
	KT_EXPECT(e.bad == 0);
	KT_EXPECT(my_slot(e.s) == NULL);	/* this thread never touched it */
	/*
	 * An exited thread's counts are in the totals only.  Its exit put
	 * the spare and main in the barn (BARN_PUT 1 + 2), then deactivated
	 * the cpu slab (to the head: it has free objects, none freed remotely).
	 */
	EXPECT_STATS(e.s, [ALLOC_PCS] = 96, [ALLOC_FASTPATH] = 4, [FREE_PCS] = 100,
		     [SHEAF_REFILL] = 120, [SHEAF_ALLOC] = 3,
		     [BARN_GET_FAIL] = 2, [BARN_PUT] = 3,
		     [ALLOC_SLAB] = 2, [DEACTIVATE_BYPASS] = 1, [CPUSLAB_FLUSH] = 1,
		     [DEACTIVATE_TO_HEAD] = 1);
	/* The barn's three sheaves (60, 60 and 4 objects) are allocated to the slabs. */
	EXPECT_SYSFS("kt_sheaf_exit", "objects", "124 N0=124\n");
	EXPECT_SYSFS("kt_sheaf_exit", "slabs", "2 N0=2\n");
	EXPECT_SYSFS("kt_sheaf_exit", "cpu_slabs", "0\n");
	KT_EXPECT(slub_of(e.s)->barn.nr_full == 3);
	KT_EXPECT(slub_of(e.s)->barn.full_objs == 124);

	/*
	 * The next short thread takes them: its first allocation takes the
	 * top sheaf (the 4 of the last main) as its main, then the two of 60,
	 * a barn trip each (the first keeps the empty main as its spare).
	 * Its 100 objects come from no slab: no refill, no new slab, and its
	 * exit leaves 124 objects in the barn again, in three sheaves.
	 */
	e.bad = 0;
	KT_ASSERT(pthread_create(&t, NULL, alloc_free_exit, &e) == 0);
	pthread_join(t, NULL);
	KT_EXPECT(e.bad == 0);
	EXPECT_STATS(e.s, [ALLOC_PCS] = 196, [ALLOC_FASTPATH] = 4, [FREE_PCS] = 200,
		     [SHEAF_REFILL] = 120, [SHEAF_ALLOC] = 3, [BARN_GET] = 3,
		     [BARN_GET_FAIL] = 2, [BARN_PUT] = 6,
		     [ALLOC_SLAB] = 2, [DEACTIVATE_BYPASS] = 1, [CPUSLAB_FLUSH] = 1,
		     [DEACTIVATE_TO_HEAD] = 1);
	EXPECT_SYSFS("kt_sheaf_exit", "objects", "124 N0=124\n");
	EXPECT_SYSFS("kt_sheaf_exit", "slabs", "2 N0=2\n");
	KT_EXPECT(slub_of(e.s)->barn.full_objs == 124);

	/* What nobody takes goes back on a shrink (and on a reap: barn_reap()). */
	KT_EXPECT(kmem_cache_shrink(e.s) == 0);
	KT_EXPECT(my_slot(e.s) == NULL);
	EXPECT_SYSFS("kt_sheaf_exit", "slabs", "0\n");
	EXPECT_SYSFS("kt_sheaf_exit", "sheaf_flush", "124\n");
	KT_EXPECT(slub_of(e.s)->barn.nr_full == 0 && slub_of(e.s)->barn.nr_empty == 0);
	KT_EXPECT(kmem_report_count() == reports);
	kmem_cache_destroy(e.s);
}

/* ---- fork ----------------------------------------------------------------- */

struct churn {
	struct kmem_cache *s;
	atomic_bool stop;
	atomic_ulong rounds;
};

/* Moves sheaves through the barn (and so its lock) as fast as it can. */
static void *churn_thread(void *arg)
{
	struct churn *ch = arg;
	void *p[3 * CAP + 5];

	while (!atomic_load(&ch->stop)) {
		alloc_n(ch->s, p, 3 * CAP + 5);
		free_n(ch->s, p, 3 * CAP + 5);
		atomic_fetch_add(&ch->rounds, 1);
	}
	return NULL;
}

static void fork_child(void *arg)
{
	unsigned long reports = kmem_report_count();
	struct kmem_cache *s = arg;
	void *p[4 * CAP + 1];

	/* A lock left held by a thread that does not exist here would hang us. */
	alarm(60);
	KT_EXPECT(slab_cache_works(s, OBJ));
	/* The barn both ways: put full sheaves, then get them back. */
	unsigned long put = stat_of(s, BARN_PUT), get = stat_of(s, BARN_GET);
	alloc_n(s, p, 4 * CAP + 1);
	KT_EXPECT(distinct(p, 4 * CAP + 1));
	free_n(s, p, 4 * CAP + 1);
	alloc_n(s, p, 4 * CAP + 1);
	KT_EXPECT(distinct(p, 4 * CAP + 1));
	free_n(s, p, 4 * CAP + 1);
	KT_EXPECT(stat_of(s, BARN_PUT) > put && stat_of(s, BARN_GET) > get);

	/* A cache of the child's own, with sheaves, and kmalloc. */
	struct kmem_cache *mine = cache64("kt_sheaf_fork_child");
	KT_ASSERT(mine);
	KT_EXPECT(slab_cache_works(mine, OBJ));
	KT_EXPECT(!SLUB_STATS_PER_OBJECT || (stat_of(mine, ALLOC_PCS) > 0 && stat_of(mine, FREE_PCS) > 0));
	KT_EXPECT(stat_of(mine, SHEAF_REFILL) > 0);
	KT_EXPECT(kmem_cache_shrink(mine) == 0);
	kmem_cache_destroy(mine);
	for (int i = 0; i < 4 * CAP + 1; i++)
		KT_ASSERT((p[i] = kmalloc(OBJ, GFP)) != NULL);
	KT_EXPECT(distinct(p, 4 * CAP + 1));
	for (int i = 0; i < 4 * CAP + 1; i++)
		kfree(p[i]);
	KT_EXPECT(kmem_report_count() == reports);
}

KTEST(fork_while_another_thread_uses_the_barn)
{
	unsigned long reports = kmem_report_count();
	struct churn ch = { 0 };
	pthread_t t;
	void *p[3 * CAP + 5];

	ch.s = cache64("kt_sheaf_fork");
	KT_ASSERT(ch.s);
	/* Our own sheaves and the barn hold objects when we fork. */
	alloc_n(ch.s, p, 3 * CAP + 5);
	free_n(ch.s, p, 3 * CAP + 5);
	KT_ASSERT(pthread_create(&t, NULL, churn_thread, &ch) == 0);
	for (int i = 0; i < 10; i++) {
		unsigned long r = atomic_load(&ch.rounds);
		while (atomic_load(&ch.rounds) == r)
			sched_yield();
		int status = kt_fork(fork_child, ch.s);
		if (!KT_CHILD_OK(status)) {
			atomic_store(&ch.stop, true);
			pthread_join(t, NULL);
		}
		KT_ASSERT_CHILD_OK(status);
	}
	atomic_store(&ch.stop, true);
	pthread_join(t, NULL);
	KT_EXPECT(kmem_cache_shrink(ch.s) == 0);
	EXPECT_SYSFS("kt_sheaf_fork", "slabs", "0\n");
	KT_EXPECT(kmem_report_count() == reports);
	kmem_cache_destroy(ch.s);
}

/* ---- slub_sheaves=0 --------------------------------------------------------- */

/* In a fresh process: no cache has sheaves, and nothing counts a sheaf. */
static void child_no_sheaves(void)
{
	if (kmem_init(CMDLINE " slub_sheaves=0")) {
		KT_FAIL("kmem_init failed");
		return;
	}
	struct kmem_cache *s = kmem_cache_create("kt_nosheaf", OBJ, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(s);
	KT_EXPECT(slub_of(s)->sheaf_capacity == 0);
	EXPECT_SYSFS("kt_nosheaf", "sheaf_capacity", "0\n");
	EXPECT_SYSFS("kmalloc-64", "sheaf_capacity", "0\n");
	KT_EXPECT(check_every_cache(false) >= 14);

	alloc_n(s, objs, 3 * CAP + 5);
	KT_EXPECT(distinct(objs, 3 * CAP + 5));
	free_n(s, objs, 3 * CAP + 5);
	struct kmem_cache_cpu *c = my_slot(s);
	KT_ASSERT(c);
	KT_EXPECT(!c->main && !c->spare && c->cap == 0);
	/* 185 objects from 3 slabs of 64: one slow path a slab, the rest fast. */
	EXPECT_SYSFS("kt_nosheaf", "alloc_slowpath", "3 C0=3\n");
	EXPECT_SYSFS("kt_nosheaf", "alloc_fastpath", "182 C0=182\n");
	for (int i = ALLOC_PCS; i <= BARN_PUT_FAIL; i++)
		EXPECT_SYSFS("kt_nosheaf", slub_stat_names[i], slub_stat_counted(i) ? "0\n" : "ERR2");
	void *x = kmem_cache_alloc(s, GFP);
	kmem_cache_free(s, x);
	KT_ASSERT_ONE_REPORT(kmem_cache_free(s, x), "Object already free");
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	kmem_cache_destroy(s);
}

/* ---- a fork handler that starts a thread ----------------------------------- */

static struct kmem_cache *spin_cache;

static void *spin_thread(void *arg)
{
	for (;;) {
		void *p[64];
		for (int i = 0; i < 64; i++)
			p[i] = kmem_cache_alloc(spin_cache, GFP);
		for (int i = 0; i < 64; i++)
			kmem_cache_free(spin_cache, p[i]);
		kmem_cache_shrink(spin_cache);
	}
	return arg;
}

static void start_spinner(void)
{
	static bool started;
	pthread_t t;

	if (started || !spin_cache)
		return;
	started = true;
	if (pthread_create(&t, NULL, spin_thread, NULL) == 0)
		usleep(5000);
}

/*
 * A prepare handler registered before kmem_init() runs after kmem's (newest
 * first) and starts a thread that churns a cache while the fork happens:
 * kmem, which saw a single-threaded process, must have taken its locks all
 * the same (before: 13 children in 100 deadlocked).
 */
static void child_fork_handler_thread(void)
{
	pthread_atfork(start_spinner, NULL, NULL);
	if (kmem_init(CMDLINE " slub_sheaves=1")) {
		KT_FAIL("kmem_init failed");
		return;
	}
	spin_cache = kmem_cache_create("kt_sheaf_spin", 128, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(spin_cache);
	kmem_cache_free(spin_cache, kmem_cache_alloc(spin_cache, GFP));
	fflush(NULL);
	pid_t pid = fork();
	KT_ASSERT(pid >= 0);
	if (pid == 0) {
		alarm(5);
		for (int i = 0; i < 1000; i++)
			kmem_cache_free(spin_cache, kmem_cache_alloc(spin_cache, GFP));
		kmem_cache_shrink(spin_cache);
		_exit(0);
	}
	int status;
	KT_ASSERT(waitpid(pid, &status, 0) == pid);
	KT_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	fflush(NULL);
	_exit(ktest_failed_now ? 1 : 0);	/* the spinner never stops */
}

/*
 * Sheaf growth (slub_sheaf_grow_kb, on by default; the rest of this file
 * runs with it off, for the kernel's fixed capacities).  A thread whose
 * bursts overflow main and spare doubles the capacity of its new sheaves
 * every 8 barn trips, 60 -> 124 -> 252 -> 508 for 64-byte objects (each
 * fills its pool's chunk), so a burst goes to the barn a few times instead
 * of once every 60 objects.  A thread that never overflows keeps 60.  The
 * barn's limit is in objects; everything still comes back at a shrink.
 */
#define GROW_N	3000

struct grow_arg {
	struct kmem_cache *s;
	unsigned int cap;	/* the thread's main sheaf capacity at the end */
	unsigned long trips;	/* BARN_PUT + BARN_GET of the thread's last rounds */
};

static void *small_thread(void *arg)
{
	struct grow_arg *a = arg;
	void *p[50];

	/* 50 objects: main and spare hold them, no barn trip, no growth. */
	for (int round = 0; round < 50; round++) {
		alloc_n(a->s, p, 50);
		free_n(a->s, p, 50);
	}
	struct kmem_cache_cpu *c = my_slot(a->s);
	a->cap = c ? c->cap : 0;
	a->trips = c ? c->stat[BARN_PUT] + c->stat[BARN_GET] : ~0ul;
	return NULL;
}

/* An occasional burst between ordinary rounds: no growth. */
static void *sporadic_thread(void *arg)
{
	struct grow_arg *a = arg;
	void *p[150];

	for (int i = 0; i < 40; i++) {
		/* 150: more than main and spare hold, so a barn trip or two... */
		alloc_n(a->s, p, 150);
		free_n(a->s, p, 150);
		/* ... then rounds that main and spare take by turns. */
		for (int k = 0; k < 3; k++) {
			alloc_n(a->s, p, 70);
			free_n(a->s, p, 70);
		}
	}
	struct kmem_cache_cpu *c = my_slot(a->s);
	a->cap = c ? c->cap : 0;
	a->trips = c ? c->stat[BARN_PUT] + c->stat[BARN_GET] : 0;
	return NULL;
}

static void child_sheaf_growth(void)
{
	static void *p[GROW_N];

	if (kmem_init(CMDLINE " slub_sheaves=1")) {
		KT_FAIL("kmem_init failed");
		return;
	}
	struct kmem_cache *s = cache64("kt_sheaf_grow");
	KT_ASSERT(s);
	/* 64 KiB of 64-byte objects is 1024: three doublings, 508 fills the 4 KiB pool. */
	KT_EXPECT(slub_of(s)->sheaf_capacity == CAP && slub_of(s)->sheaf_max_shift == 3);
	EXPECT_SYSFS("kt_sheaf_grow", "sheaf_capacity", "60\n");

	struct grow_arg small = { .s = s };
	pthread_t th;
	KT_ASSERT(pthread_create(&th, NULL, small_thread, &small) == 0);
	KT_ASSERT(pthread_join(th, NULL) == 0);
	KT_EXPECT(small.cap == CAP && small.trips == 0);
	struct grow_arg sporadic = { .s = s };
	KT_ASSERT(pthread_create(&th, NULL, sporadic_thread, &sporadic) == 0);
	KT_ASSERT(pthread_join(th, NULL) == 0);
	KT_EXPECT(sporadic.trips >= 40 && sporadic.cap == CAP);
	/* Its exit flushed its sheaves. */
	unsigned long flushed = stat_of(s, SHEAF_FLUSH);

	/* Bursts of 3000: 50 sheaves of 60, 47 barn trips each way the first time. */
	unsigned long trips = 0;
	for (int round = 0; round < 6; round++) {
		unsigned long before = stat_of(s, BARN_PUT) + stat_of(s, BARN_GET);
		alloc_n(s, p, GROW_N);
		KT_EXPECT(distinct(p, GROW_N));
		free_n(s, p, GROW_N);
		trips = stat_of(s, BARN_PUT) + stat_of(s, BARN_GET) - before;
		KT_EXPECT(slub_of(s)->barn.full_objs <= slub_of(s)->barn.max_full_objs);
	}
	struct kmem_cache_cpu *c = my_slot(s);
	KT_ASSERT(c);
	KT_EXPECT(c->sheaf_shift == 3 && c->cap == 508);
	/* Now 3000 objects fill 6 sheaves of 508: a few trips a round, not 94. */
	KT_EXPECT(trips <= 12);
	KT_EXPECT(stat_of(s, BARN_PUT_FAIL) == 0 && stat_of(s, SHEAF_FLUSH) == flushed);

	/* The barn counts objects: its full sheaves hold full_objs of them. */
	unsigned long objs_in_barn = 0;
	kmem_lock(&slub_of(s)->barn.lock);
	for (struct slab_sheaf *f = slub_of(s)->barn.full; f; f = f->next)
		objs_in_barn += f->size;
	kmem_unlock(&slub_of(s)->barn.lock);
	KT_EXPECT(objs_in_barn == slub_of(s)->barn.full_objs);

	/* A burst bigger than the barn: it refuses, main is flushed, nothing lost. */
	static void *q[20000];
	alloc_n(s, q, 20000);
	KT_EXPECT(distinct(q, 20000));
	free_n(s, q, 20000);
	KT_EXPECT(stat_of(s, BARN_PUT_FAIL) > 0 && stat_of(s, SHEAF_FLUSH) > flushed);
	KT_EXPECT(slub_of(s)->barn.full_objs <= slub_of(s)->barn.max_full_objs);

	KT_EXPECT(kmem_cache_shrink(s) == 0);
	EXPECT_SYSFS("kt_sheaf_grow", "slabs", "0\n");
	KT_EXPECT(stat_of(s, SHEAF_ALLOC) == stat_of(s, SHEAF_FREE));
	KT_EXPECT(slub_of(s)->barn.full_objs == 0);
	kmem_cache_destroy(s);

	/*
	 * 4 KiB objects: the barn takes 64 of them (16 sheaves of 4).  Grown
	 * sheaves stay within 64 KiB of objects and half the barn, so the
	 * barn still takes them: a burst round trip goes through it, not
	 * through flushes and refills.
	 */
	struct kmem_cache *big = kmem_cache_create("kt_sheaf_grow4k", 4096, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(big);
	for (int round = 0; round < 20; round++) {
		alloc_n(big, p, 60);
		free_n(big, p, 60);
	}
	c = my_slot(big);
	KT_ASSERT(c);
	KT_EXPECT(c->sheaf_shift > 0 && c->cap * 4096u <= (64u << 10) && c->cap <= slub_of(big)->barn.max_full_objs / 2);
	unsigned long puts = stat_of(big, BARN_PUT), flushes = stat_of(big, SHEAF_FLUSH);
	alloc_n(big, p, 60);
	free_n(big, p, 60);
	KT_EXPECT(stat_of(big, BARN_PUT) > puts && stat_of(big, SHEAF_FLUSH) == flushes);
	kmem_cache_shrink(big);
	kmem_cache_destroy(big);
}

static const struct slab_child children[] = {
	{ "no_sheaves", child_no_sheaves },
	{ "sheaf_growth", child_sheaf_growth },
	{ "fork_handler_thread", child_fork_handler_thread },
};

KTEST(fork_with_a_prepare_handler_that_starts_a_thread)
{
	/* Each run forks once with the race; 40 runs catch a 13% one nearly always. */
	for (int i = 0; i < 40; i++)
		KT_ASSERT_CHILD_OK(slab_run_child("fork_handler_thread"));
}

KTEST(no_sheaves_when_booted_with_slub_sheaves_0)
{
	KT_ASSERT_CHILD_OK(slab_run_child("no_sheaves"));
}

KTEST(fixed_capacity_when_booted_with_slub_sheaf_grow_kb_0)
{
	struct kmem_cache *s = cache64_bare("kt_sheaf_nogrow");
	KT_ASSERT(s);
	KT_EXPECT(slub_of(s)->sheaf_max_shift == 0 && slub_of(s)->barn.max_full_objs == (unsigned long)slub_of(s)->barn.max_full * CAP);
	kmem_cache_destroy(s);
}

KTEST(bursts_grow_a_threads_sheaves)
{
	KT_ASSERT_CHILD_OK(slab_run_child("sheaf_growth"));
}

KTEST_MAIN(
	slab_child_dispatch(children, sizeof(children) / sizeof(children[0]));
	/* No reaps: they would move the exact counters (test_slub_reap covers them). */
	if (kmem_init(CMDLINE " slub_sheaves=1 slub_sheaf_grow_kb=0 slub_reap_events=0")) { printf("kmem_init failed\n"); return 1; }
)
