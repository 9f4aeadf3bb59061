// SPDX-License-Identifier: MIT
/*
 * The free pages inside partial slabs go back to the OS (src/slab/slub_release.c),
 * booted with mem=64M nr_cpus=2 slub_sheaves=0 so that every free reaches
 * its slab at once, and slub_release_pages=2 so that frees release too (by
 * default only shrinks do: by_default_only_shrinks_release).  The cache: 512-byte slots, 16 a slab of order 1, so
 * objects 0..7 are on the slab's first page and 8..15 on its second.
 *
 *  - A free that takes a partial slab below 2 * pages objects in use
 *    releases the pages whose objects are all free: the page is no longer
 *    resident (mincore), the objects on it leave the slab (total_objects,
 *    the slab's state), the counters say so (sysfs released_pages,
 *    /proc/vmstat nr_slab_released, slab_pages_released), and the live
 *    objects keep their contents.  The single free path and the bulk path.
 *  - A slab taken off the partial list to allocate from gets its released
 *    objects back (slab_pages_restored), every one of them handed out once.
 *  - kmem_cache_shrink() releases what no free did; validate finds the
 *    slabs consistent; a released slab whose last object is freed goes back
 *    to the page allocator and its pages are uncounted.
 *  - Caches that never release: ctor, SLAB_TYPESAFE_BY_RCU, order 0, and
 *    every cache when booted with slub_release_pages=0; under mlockall()
 *    madvise() fails, nothing is lost and the cache stops trying.
 *  - Threads with sheaves allocate (one by one and in bulk), free across
 *    threads and in bulk, while another shrinks and validates; pages are
 *    released and restored, every object keeps its contents, and all the
 *    memory comes back at the end.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <kmem.h>

#include "slab/slab.h"
#include "slab/slub/slub.h"
#include "slab/slub/slub_internal.h"

#include "ktest.h"
#include "lib/kt_util.h"
#include "lib/slab_test.h"

#define GFP GFP_KERNEL
#define CMDLINE "mem=64M nr_cpus=2 slub_release_pages=2"
#define OBJ	512
#define OPS	16	/* objects a slab */
#define SLABS	4

#define EXPECT_SYSFS(cache, attr, want) do {					\
	const char *__got = kt_slab_attr(cache, attr);				\
	if (strcmp(__got, want))						\
		KT_FAIL("%s/%s: got \"%s\", want \"%s\"", cache, attr, __got, want); \
} while (0)

static bool resident(const void *page)
{
	unsigned char v = 0;

	if (mincore((void *)((uintptr_t)page & ~(uintptr_t)4095), 4096, &v))
		return true;
	return v & 1;
}

/*
 * A fresh 512-byte cache without cpu partial slabs (a slab with a free
 * object is on the node list) and min_partial 0 (an empty one goes back).
 */
static struct kmem_cache *rel_cache(const char *name)
{
	struct kmem_cache *s = kmem_cache_create(name, OBJ, 0, SLAB_NO_MERGE, NULL);
	char path[128];

	if (!s)
		return NULL;
	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/cpu_partial", name);
	KT_EXPECT(kmem_write(path, "0") == 0);
	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/min_partial", name);
	KT_EXPECT(kmem_write(path, "0") == 0);
	return s;
}

static void *objs[SLABS * OPS];

/* Fill SLABS slabs; returns the first object's slab (a full slab, not the cpu slab) and its objects in @in. */
static struct slab *fill(struct kmem_cache *s, void **in)
{
	for (int i = 0; i < SLABS * OPS; i++) {
		objs[i] = kmem_cache_alloc(s, GFP);
		if (!objs[i])
			abort();
		slab_fill(objs[i], OBJ, (uintptr_t)objs[i]);
	}
	struct slab *a = virt_to_slab(objs[0]);
	int n = 0;
	for (int i = 0; i < SLABS * OPS; i++)
		if (virt_to_slab(objs[i]) == a)
			in[((uintptr_t)objs[i] - a->obj_base) / OBJ] = objs[i], n++;
	KT_EXPECT(n == OPS);
	KT_EXPECT(a->obj_base % 8192 == 0);
	return a;
}

/*
 * Free the objects of slab a (@in) outside [keep_lo, keep_hi], in address
 * order.  The other slabs stay full: the cpu slab among them, so the next
 * allocation takes a slab off the partial list.
 */
static void free_all_but(struct kmem_cache *s, void **in, int keep_lo, int keep_hi)
{
	for (int k = 0; k < OPS; k++) {
		if ((k >= keep_lo && k <= keep_hi) || !in[k])
			continue;
		KT_EXPECT(slab_check(in[k], OBJ, (uintptr_t)in[k]) == 0);
		kmem_cache_free(s, in[k]);
		for (int i = 0; i < SLABS * OPS; i++)
			if (objs[i] == in[k])
				objs[i] = NULL;
		in[k] = NULL;
	}
}

/* The other slabs' objects. */
static void free_rest(struct kmem_cache *s)
{
	for (int i = 0; i < SLABS * OPS; i++)
		if (objs[i]) {
			KT_EXPECT(slab_check(objs[i], OBJ, (uintptr_t)objs[i]) == 0);
			kmem_cache_free(s, objs[i]);
			objs[i] = NULL;
		}
}

KTEST(setup_which_caches_release)
{
	struct kmem_cache *s = rel_cache("kt_rel_setup");
	KT_EXPECT(oo_order(slub_of(s)->oo) == 1 && oo_objects(slub_of(s)->oo) == OPS);
	KT_EXPECT(slub_of(s)->release_min_free == 8);
	kmem_cache_destroy(s);

	struct kmem_cache *small = kmem_cache_create("kt_rel_64", 64, 0, SLAB_NO_MERGE, NULL);
	KT_EXPECT(small && oo_order(slub_of(small)->oo) == 0 && slub_of(small)->release_min_free == 0);
	struct kmem_cache *rcu = kmem_cache_create("kt_rel_rcu", OBJ, 0, SLAB_TYPESAFE_BY_RCU, NULL);
	KT_EXPECT(rcu && slub_of(rcu)->release_min_free == 0);
	struct kmem_cache *red = kmem_cache_create("kt_rel_red", OBJ, 0, SLAB_RED_ZONE, NULL);
	KT_EXPECT(red && slub_of(red)->release_min_free == 0);
	kmem_cache_destroy(small);
	kmem_cache_destroy(rcu);
	kmem_cache_destroy(red);
}

static void zero_ctor(void *p)
{
	memset(p, 0, OBJ);
}

KTEST(ctor_caches_never_release)
{
	struct kmem_cache *s = kmem_cache_create("kt_rel_ctor", OBJ, 0, SLAB_NO_MERGE, zero_ctor);
	KT_ASSERT(s);
	KT_EXPECT(slub_of(s)->release_min_free == 0);
	kmem_cache_destroy(s);
}

KTEST(free_releases_whole_free_pages)
{
	struct kmem_cache *s = rel_cache("kt_rel_free");
	void *in[OPS];
	struct slab *a = fill(s, in);
	char *page1 = (char *)a->obj_base + 4096;
	long released0 = kt_vmstat("slab_pages_released"), restored0 = kt_vmstat("slab_pages_restored");

	KT_EXPECT(resident(page1));
	/* Objects 15..3 free, 0..2 live: the free that leaves 3 in use (< 2 * 2 pages) releases page 1. */
	free_all_but(s, in, 0, 2);
	KT_EXPECT(!resident(page1));
	KT_EXPECT(resident((char *)a->obj_base));
	KT_EXPECT(slab_released(a) == 2);
	KT_EXPECT(ss_objects(slab_state(a)) == 8 && ss_inuse(slab_state(a)) == 3);
	EXPECT_SYSFS("kt_rel_free", "released_pages", "1 N0=1\n");
	EXPECT_SYSFS("kt_rel_free", "total_objects", "56 N0=56\n");
	EXPECT_SYSFS("kt_rel_free", "objects", "51 N0=51\n");
	KT_EXPECT(kt_vmstat("nr_slab_released") == 1);
	KT_EXPECT(kt_vmstat("slab_pages_released") == released0 + 1);
	for (int i = 0; i < 3; i++)
		KT_EXPECT(slab_check(in[i], OBJ, (uintptr_t)in[i]) == 0);
	unsigned long reports = kmem_report_count();
	KT_EXPECT(kmem_write("/sys/kernel/slab/kt_rel_free/validate", "1") == 0);
	KT_EXPECT(kmem_report_count() == reports);

	/* Taken to allocate from: the 13 free objects, released ones included, each once. */
	void *got[OPS - 3];
	for (int i = 0; i < OPS - 3; i++) {
		got[i] = kmem_cache_alloc(s, GFP);
		KT_ASSERT(got[i]);
		KT_EXPECT(virt_to_slab(got[i]) == a);
		for (int k = 0; k < 3; k++)
			KT_EXPECT(got[i] != in[k]);
		for (int k = 0; k < i; k++)
			KT_EXPECT(got[i] != got[k]);
		slab_fill(got[i], OBJ, (uintptr_t)got[i] + 1);
	}
	KT_EXPECT(resident(page1));
	KT_EXPECT(slab_released(a) == 0 && ss_objects(slab_state(a)) == OPS);
	KT_EXPECT(kt_vmstat("slab_pages_restored") == restored0 + 1);
	KT_EXPECT(kt_vmstat("nr_slab_released") == 0);
	EXPECT_SYSFS("kt_rel_free", "released_pages", "0\n");
	EXPECT_SYSFS("kt_rel_free", "total_objects", "64 N0=64\n");
	for (int i = 0; i < OPS - 3; i++) {
		KT_EXPECT(slab_check(got[i], OBJ, (uintptr_t)got[i] + 1) == 0);
		kmem_cache_free(s, got[i]);
	}
	free_all_but(s, in, 1, 0);
	free_rest(s);
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	EXPECT_SYSFS("kt_rel_free", "slabs", "0\n");
	kmem_cache_destroy(s);
}

KTEST(bulk_free_releases_and_last_free_uncounts)
{
	struct kmem_cache *s = rel_cache("kt_rel_bulk");
	void *in[OPS];
	struct slab *a = fill(s, in);
	char *page1 = (char *)a->obj_base + 4096;

	/* One free puts slab a on the list, a bulk free takes it to 1 in use. */
	void *batch[OPS];
	memcpy(batch, in, sizeof(batch));	/* kmem_cache_free_bulk() may reorder its array */
	kmem_cache_free(s, in[OPS - 1]);
	kmem_cache_free_bulk(s, OPS - 2, batch + 1);
	KT_EXPECT(!resident(page1));
	KT_EXPECT(slab_released(a) == 2);
	EXPECT_SYSFS("kt_rel_bulk", "released_pages", "1 N0=1\n");
	KT_EXPECT(kt_vmstat("nr_slab_released") == 1);
	KT_EXPECT(slab_check(in[0], OBJ, (uintptr_t)in[0]) == 0);

	/* Its last object: the slab goes back whole, its released page uncounted. */
	kmem_cache_free(s, in[0]);
	KT_EXPECT(kt_vmstat("nr_slab_released") == 0);
	EXPECT_SYSFS("kt_rel_bulk", "released_pages", "0\n");
	EXPECT_SYSFS("kt_rel_bulk", "slabs", "3 N0=3\n");
	EXPECT_SYSFS("kt_rel_bulk", "total_objects", "48 N0=48\n");
	for (int i = 0; i < SLABS * OPS; i++)
		for (int k = 0; k < OPS; k++)
			if (objs[i] == in[k])
				objs[i] = NULL;
	free_rest(s);
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	kmem_cache_destroy(s);
}

KTEST(shrink_releases_what_frees_did_not)
{
	struct kmem_cache *s = rel_cache("kt_rel_shrink");
	void *in[OPS];
	struct slab *a = fill(s, in);
	char *page1 = (char *)a->obj_base + 4096;

	/* 8 in use: not below 2 * pages, so no free released anything. */
	free_all_but(s, in, 0, 7);
	KT_EXPECT(resident(page1));
	EXPECT_SYSFS("kt_rel_shrink", "released_pages", "0\n");
	KT_EXPECT(kmem_write("/sys/kernel/slab/kt_rel_shrink/shrink", "1") == 0);
	KT_EXPECT(!resident(page1));
	EXPECT_SYSFS("kt_rel_shrink", "released_pages", "1 N0=1\n");
	/* Slab a has no free object left that is not released: off the list, all in use. */
	EXPECT_SYSFS("kt_rel_shrink", "objects", "56 N0=56\n");
	EXPECT_SYSFS("kt_rel_shrink", "total_objects", "56 N0=56\n");
	EXPECT_SYSFS("kt_rel_shrink", "partial", "0\n");
	/* A second sweep finds nothing more to give back. */
	KT_EXPECT(kmem_cache_shrink(s) == 1);
	EXPECT_SYSFS("kt_rel_shrink", "released_pages", "1 N0=1\n");
	free_all_but(s, in, 1, 0);
	KT_EXPECT(kt_vmstat("nr_slab_released") == 0);
	free_rest(s);
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	kmem_cache_destroy(s);
}

/* ---- the default, slub_release_pages=1: only shrinks release -------------- */

static void child_default(void)
{
	if (slab_test_boot("mem=64M nr_cpus=2 slub_sheaves=0")) {
		KT_FAIL("kmem_init failed");
		return;
	}
	struct kmem_cache *s = rel_cache("kt_rel_default");
	KT_EXPECT(slub_of(s)->release_min_free == 8 && !slub_of(s)->release_on_free);
	void *in[OPS];
	struct slab *a = fill(s, in);
	char *page1 = (char *)a->obj_base + 4096;
	/* What released page 1 at once with slub_release_pages=2 does not here... */
	free_all_but(s, in, 0, 2);
	KT_EXPECT(resident(page1));
	KT_EXPECT(kt_vmstat("slab_pages_released") == 0);
	/* ...but a shrink (malloc_trim(), the reaper) does. */
	KT_EXPECT(kmem_cache_shrink(s) == 1);
	KT_EXPECT(!resident(page1));
	EXPECT_SYSFS("kt_rel_default", "released_pages", "1 N0=1\n");
	free_all_but(s, in, 1, 0);
	free_rest(s);
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	KT_EXPECT(kt_vmstat("nr_slab_released") == 0);
	kmem_cache_destroy(s);
}

/* ---- slub_release_pages=0 ----------------------------------------------- */

static void child_off(void)
{
	if (slab_test_boot(CMDLINE " slub_sheaves=0 slub_release_pages=0")) {
		KT_FAIL("kmem_init failed");
		return;
	}
	struct kmem_cache *s = rel_cache("kt_rel_off");
	KT_EXPECT(slub_of(s)->release_min_free == 0);
	void *in[OPS];
	struct slab *a = fill(s, in);
	free_all_but(s, in, 0, 0);
	KT_EXPECT(kmem_cache_shrink(s) == 1);
	KT_EXPECT(resident((char *)a->obj_base + 4096));
	KT_EXPECT(kt_vmstat("slab_pages_released") == 0);
	free_all_but(s, in, 1, 0);
	free_rest(s);
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	kmem_cache_destroy(s);
}

/* ---- locked memory: madvise() fails ---------------------------------------- */

/* VmLck in kB: 0 when nothing is locked (the sanitizers make mlockall() a no-op). */
static long locked_kb(void)
{
	return kt_proc_status_kb("VmLck");
}

static void child_mlocked(void)
{
	if (mlockall(MCL_CURRENT | MCL_FUTURE) || !locked_kb()) {
		printf("  (mlockall: not permitted or not real here; the case checks nothing)\n");
		return;
	}
	if (slab_test_boot(CMDLINE " slub_sheaves=0")) {
		KT_FAIL("kmem_init failed");
		return;
	}
	struct kmem_cache *s = rel_cache("kt_rel_locked");
	void *in[OPS];
	struct slab *a = fill(s, in);
	unsigned long reports = kmem_report_count();
	KT_EXPECT(slub_of(s)->release_min_free == 8);
	/* The release fails: the page stays, the objects too, and the cache stops trying. */
	free_all_but(s, in, 0, 2);
	KT_EXPECT(resident((char *)a->obj_base + 4096));
	KT_EXPECT(slub_of(s)->release_min_free == 0);
	KT_EXPECT(slab_released(a) == 0 && ss_objects(slab_state(a)) == OPS);
	KT_EXPECT(kt_vmstat("nr_slab_released") == 0);
	EXPECT_SYSFS("kt_rel_locked", "total_objects", "64 N0=64\n");
	KT_EXPECT(kmem_report_count() == reports);
	free_all_but(s, in, 1, 0);
	free_rest(s);
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	kmem_cache_destroy(s);
}

/* ---- threads, sheaves, cross-thread frees ------------------------------- */

#define NTHR	4
#define ROUNDS	300
#define BATCH	200
#define RING	4096

static struct kmem_cache *mt_cache[3];
static const unsigned int mt_size[3] = { 448, 512, 1024 };
static struct {
	pthread_mutex_t lock;
	void *obj[RING];
	unsigned char cls[RING];
	unsigned int n;
} ring = { .lock = PTHREAD_MUTEX_INITIALIZER };
static atomic_int mt_bad;

static void mt_check_free(void *p, int c)
{
	if (slab_check(p, mt_size[c], (uintptr_t)p))
		atomic_fetch_add(&mt_bad, 1);
	kmem_cache_free(mt_cache[c], p);
}

static void *mt_worker(void *arg)
{
	uint64_t rs = 0x9e3779b97f4a7c15ull * (uintptr_t)(1 + (long)arg);
	void *mine[BATCH], *dead[BATCH];
	unsigned char cls[BATCH];

	for (int r = 0; r < ROUNDS; r++) {
		/* One round in four in bulk, of one cache. */
		bool bulk = slab_rnd_below(&rs, 4) == 0;
		int bc = (int)slab_rnd_below(&rs, 3), nd = 0;
		if (bulk) {
			if (kmem_cache_alloc_bulk(mt_cache[bc], GFP, BATCH, mine) != BATCH) {
				atomic_fetch_add(&mt_bad, 1);
				return NULL;
			}
			memset(cls, bc, sizeof(cls));
		}
		for (int i = 0; i < BATCH; i++) {
			if (!bulk) {
				cls[i] = (unsigned char)slab_rnd_below(&rs, 3);
				mine[i] = kmem_cache_alloc(mt_cache[cls[i]], GFP);
			}
			if (!mine[i]) {
				atomic_fetch_add(&mt_bad, 1);
				return NULL;
			}
			slab_fill(mine[i], mt_size[cls[i]], (uintptr_t)mine[i]);
		}
		/* Most die here, some go to another thread, a few live on in the ring. */
		for (int i = 0; i < BATCH; i++) {
			if (slab_rnd_below(&rs, 10) < 7) {
				if (!bulk) {
					mt_check_free(mine[i], cls[i]);
				} else {
					if (slab_check(mine[i], mt_size[bc], (uintptr_t)mine[i]))
						atomic_fetch_add(&mt_bad, 1);
					dead[nd++] = mine[i];
				}
				continue;
			}
			pthread_mutex_lock(&ring.lock);
			unsigned int k = slab_rnd_below(&rs, RING);
			void *old = ring.obj[k];
			int oc = ring.cls[k];
			ring.obj[k] = mine[i];
			ring.cls[k] = cls[i];
			pthread_mutex_unlock(&ring.lock);
			if (old)
				mt_check_free(old, oc);
		}
		if (nd)
			kmem_cache_free_bulk(mt_cache[bc], (size_t)nd, dead);
		if (r % 50 == 49)
			kmem_cache_shrink(mt_cache[r % 3]);
	}
	return NULL;
}

static atomic_bool mt_stop;

/* Shrinks (sweeps) and validates while the workers run. */
static void *mt_poker(void *arg)
{
	char path[64];
	unsigned int i = 0;

	(void)arg;
	while (!atomic_load(&mt_stop)) {
		snprintf(path, sizeof(path), "/sys/kernel/slab/kt_rel_mt%u/%s", mt_size[i % 3],
			 i & 1 ? "shrink" : "validate");
		if (kmem_write(path, "1"))
			atomic_fetch_add(&mt_bad, 1);
		i++;
		usleep(200);
	}
	return NULL;
}

static void child_threads(void)
{
	if (slab_test_boot(CMDLINE " slub_sheaves=1")) {
		KT_FAIL("kmem_init failed");
		return;
	}
	char name[64];
	for (int c = 0; c < 3; c++) {
		snprintf(name, sizeof(name), "kt_rel_mt%u", mt_size[c]);
		mt_cache[c] = kmem_cache_create(name, mt_size[c], 0, SLAB_NO_MERGE, NULL);
		KT_ASSERT(mt_cache[c] && slub_of(mt_cache[c])->release_min_free);
	}
	unsigned long reports = kmem_report_count();
	pthread_t t[NTHR], poker;
	KT_ASSERT(pthread_create(&poker, NULL, mt_poker, NULL) == 0);
	for (long i = 0; i < NTHR; i++)
		KT_ASSERT(pthread_create(&t[i], NULL, mt_worker, (void *)i) == 0);
	for (int i = 0; i < NTHR; i++)
		pthread_join(t[i], NULL);
	atomic_store(&mt_stop, true);
	pthread_join(poker, NULL);
	KT_EXPECT(atomic_load(&mt_bad) == 0);
	KT_EXPECT(kmem_report_count() == reports);
	KT_EXPECT(kt_vmstat("slab_pages_released") > 0);
	KT_EXPECT(kt_vmstat("slab_pages_restored") > 0);
	for (int c = 0; c < 3; c++) {
		snprintf(name, sizeof(name), "/sys/kernel/slab/kt_rel_mt%u/validate", mt_size[c]);
		KT_EXPECT(kmem_write(name, "1") == 0);
	}
	KT_EXPECT(kmem_report_count() == reports);
	for (int k = 0; k < RING; k++)
		if (ring.obj[k])
			mt_check_free(ring.obj[k], ring.cls[k]);
	KT_EXPECT(atomic_load(&mt_bad) == 0);
	for (int c = 0; c < 3; c++) {
		KT_EXPECT(kmem_cache_shrink(mt_cache[c]) == 0);
		kmem_cache_destroy(mt_cache[c]);
	}
	KT_EXPECT(kt_vmstat("nr_slab_released") == 0);
	KT_EXPECT(kmem_report_count() == reports);
}

static const struct slab_child children[] = {
	{ "off", child_off },
	{ "default", child_default },
	{ "mlocked", child_mlocked },
	{ "threads", child_threads },
};

KTEST(by_default_only_shrinks_release)
{
	KT_ASSERT_CHILD_OK(slab_run_child("default"));
}

KTEST(nothing_released_when_booted_with_slub_release_pages_0)
{
	KT_ASSERT_CHILD_OK(slab_run_child("off"));
}

KTEST(locked_memory_stops_the_release)
{
	KT_ASSERT_CHILD_OK(slab_run_child("mlocked"));
}

KTEST(threads_cross_thread_frees_and_shrinks)
{
	KT_ASSERT_CHILD_OK(slab_run_child("threads"));
}

KTEST_MAIN(
	slab_child_dispatch(children, sizeof(children) / sizeof(children[0]));
	if (slab_test_boot(CMDLINE " slub_sheaves=0")) { printf("kmem_init failed\n"); return 1; }
)
