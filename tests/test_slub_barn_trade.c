// SPDX-License-Identifier: MIT
/*
 * Two threads trading objects through the barn (src/slab/slub/slub_sheaf.c),
 * as a server whose threads free what other threads allocated (larson):
 * each thread replaces random slots of its array with objects of four
 * caches (64..512 B), and after each round the two swap arrays.  Over a
 * round each thread frees as many objects as it allocates, but not of each
 * cache: what one thread's frees of a cache overflow, the other's
 * allocations of it take back through the barn, a full sheaf at a time.
 * Booted with slub_reap_events=0 (the reap of idle barn sheaves is
 * test_slub_reap.c's), the counters show:
 *  - full sheaves go into the barn and come out of it (barn_put, barn_get);
 *  - no full sheaf finds the barn at its limit (barn_put_fail 0): that
 *    would flush it to its slabs, object by object;
 *  - objects moved between sheaves and slabs (sheaf_flush, sheaf_refill:
 *    the first refills of each thread, and an empty barn while the other
 *    thread's surplus still fits in its own two sheaves) stay under 2% of
 *    the objects allocated;
 *  - nothing is lost: once the threads are gone and the caches shrunk,
 *    every cache is empty.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "slab/slab.h"
#include "slab/slub/slub.h"

#include "ktest.h"
#include "lib/kt_util.h"
#include "lib/slab_test.h"

#define CMDLINE "mem=128M nr_cpus=2 slub_sheaves=1 slub_reap_events=0"

#define NCACHES	4
#define SLOTS	2000
#define ROUND	8000	/* replacements a thread makes in a round: 98% of the slots */
#define ROUNDS	40

static struct kmem_cache *caches[NCACHES];

struct tslot {
	void *p;
	int cache;
};

static struct tslot *arr[2];
static pthread_barrier_t bar;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *trader(void *arg)
{
	int id = (int)(intptr_t)arg;
	uint64_t s = 0x9E3779B97F4A7C15ull * (uint64_t)(id + 1);
	long bad = 0;

	for (int i = 0; i < SLOTS; i++) {
		struct tslot *sl = &arr[id][i];
		sl->cache = (int)(rnd(&s) % NCACHES);
		sl->p = kmem_cache_alloc(caches[sl->cache], GFP_KERNEL);
		if (sl->p)
			*(uint64_t *)sl->p = (uint64_t)(uintptr_t)sl->p;
	}
	pthread_barrier_wait(&bar);
	for (int r = 0; r < ROUNDS; r++) {
		struct tslot *a = arr[(id + r) % 2];
		for (int k = 0; k < ROUND; k++) {
			uint64_t x = rnd(&s);
			struct tslot *sl = &a[x % SLOTS];
			if (!sl->p || *(uint64_t *)sl->p != (uint64_t)(uintptr_t)sl->p)
				bad++;
			if (sl->p)
				kmem_cache_free(caches[sl->cache], sl->p);
			sl->cache = (int)((x >> 32) % NCACHES);
			sl->p = kmem_cache_alloc(caches[sl->cache], GFP_KERNEL);
			if (sl->p)
				*(uint64_t *)sl->p = (uint64_t)(uintptr_t)sl->p;
		}
		pthread_barrier_wait(&bar);
	}
	return (void *)bad;
}

static long sum(const char *counter)
{
	long n = 0;

	for (int i = 0; i < NCACHES; i++)
		n += slab_sysfs_long(caches[i], counter);
	return n;
}

KTEST(two_threads_trade_sheaves_through_the_barn)
{
	static const unsigned int sizes[NCACHES] = { 64, 128, 256, 512 };
	char name[32];
	pthread_t th[2];
	long bad = 0;

	for (int i = 0; i < NCACHES; i++) {
		snprintf(name, sizeof(name), "barn_trade_%u", sizes[i]);
		caches[i] = kmem_cache_create(name, sizes[i], 0, SLAB_NO_MERGE, NULL);
		KT_ASSERT(caches[i] && slub_of(caches[i])->sheaf_capacity);
	}
	for (int i = 0; i < 2; i++)
		KT_ASSERT((arr[i] = calloc(SLOTS, sizeof(*arr[i]))) != NULL);
	KT_ASSERT(pthread_barrier_init(&bar, NULL, 2) == 0);
	for (int i = 0; i < 2; i++)
		KT_ASSERT(pthread_create(&th[i], NULL, trader, (void *)(intptr_t)i) == 0);
	for (int i = 0; i < 2; i++) {
		void *ret;
		pthread_join(th[i], &ret);
		bad += (long)ret;
	}
	KT_EXPECT(bad == 0);

	long allocs = 2L * (SLOTS + ROUNDS * ROUND);
	long put = sum("barn_put"), get = sum("barn_get"), put_fail = sum("barn_put_fail");
	long refill = sum("sheaf_refill"), flush = sum("sheaf_flush");
	fprintf(stderr, "  %ld objects: barn_put %ld barn_get %ld barn_put_fail %ld barn_get_fail %ld "
		"sheaf_refill %ld sheaf_flush %ld\n", allocs, put, get, put_fail, sum("barn_get_fail"),
		refill, flush);
	KT_EXPECT(put > 0 && get > 0);
	KT_EXPECT(put_fail == 0);
	KT_EXPECT(refill * 50 < allocs);
	/*
	 * Nothing was flushed while the threads ran (no put failed, no reap):
	 * only what each thread held in its two sheaves a cache when it exited.
	 */
	long held = 0;
	for (int i = 0; i < NCACHES; i++)
		held += 2L * 2 * slub_of(caches[i])->sheaf_capacity;
	KT_EXPECT(flush <= held);

	for (int i = 0; i < 2; i++) {
		for (int j = 0; j < SLOTS; j++)
			if (arr[i][j].p)
				kmem_cache_free(caches[arr[i][j].cache], arr[i][j].p);
		free(arr[i]);
	}
	for (int i = 0; i < NCACHES; i++) {
		KT_EXPECT(kmem_cache_shrink(caches[i]) == 0);
		KT_EXPECT(slab_sysfs_long(caches[i], "objects") == 0);
		kmem_cache_destroy(caches[i]);
	}
	pthread_barrier_destroy(&bar);
}

KTEST_MAIN(
	if (kmem_init(CMDLINE)) { printf("kmem_init failed\n"); return 1; }
)
