// SPDX-License-Identifier: MIT
/*
 * The bulk API and kmem_cache_shrink, with the kernel's semantics
 * (mm/slub.c, reference section 5; SLAB bulk API, Brouer 2015):
 *
 *  - kmem_cache_alloc_bulk() returns the count asked for or 0, never a
 *    partial count: under memory exhaustion (a fresh kmem booted with
 *    mem=16M, memory filled) a bulk that cannot be satisfied returns 0 and
 *    leaves nothing allocated -- /proc/vmstat nr_slab_unreclaimable and
 *    nr_free_pages are unchanged across the failed call (once the cache's
 *    empty slabs and this thread's pcp pages are given back), and the free
 *    objects it had taken are allocatable again;
 *  - kmem_cache_free_bulk() takes objects of many slabs in any order, with
 *    NULL holes; kfree_bulk() / kmem_cache_free_bulk(NULL, ...) take objects
 *    of several caches, kmalloc objects and large kmallocs mixed;
 *  - kmem_cache_shrink() gives empty slabs back (nr_slab_* drop).
 *
 * Back-end independent like test_slab_api.c: boots "mem=64M" +
 * $KMEM_TEST_CMDLINE; SLUB-only details are gated on slab_test_is_slub().
 */
#include <stdint.h>
#include <stdlib.h>

#include <kmem.h>

#include "core/printk.h"
#include "core/vmstat.h"
#include "slab/slab.h"
#include "slab/slub/slub.h"

#include "ktest.h"
#include "lib/kt_util.h"
#include "lib/slab_test.h"

#define GFP (GFP_KERNEL)

/* ---- bulk ----------------------------------------------------------- */

KTEST(bulk_alloc_returns_all)
{
	static void *p[1000];
	static const size_t ns[] = { 1, 2, 3, 16, 63, 64, 65, 250, 1000 };
	struct kmem_cache *s = kmem_cache_create("api_bulk", 128, 0, SLAB_NO_MERGE, NULL);

	KT_ASSERT(s);
	KT_ASSERT_EQ(kmem_cache_alloc_bulk(s, GFP, 0, p), 0);
	for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
		size_t n = ns[k];
		KT_ASSERT_EQ(kmem_cache_alloc_bulk(s, GFP, n, p), (long long)n);
		KT_ASSERT(slab_disjoint(p, n, 128));
		for (size_t i = 0; i < n; i++)
			slab_fill(p[i], 128, i);
		for (size_t i = 0; i < n; i++)
			KT_ASSERT_EQ(slab_check(p[i], 128, i), 0);
		kmem_cache_free_bulk(s, n, p);
	}
	unsigned long reports = kmem_report_count();
	kmem_cache_destroy(s);
	KT_ASSERT_EQ(kmem_report_count(), reports);
}

/* Allocate blocks of @max_order and below until GFP_KERNEL fails; returns how many. */
static int fill_memory(struct page **pages, unsigned int *orders, int max, int max_order)
{
	int n = 0;

	for (int order = max_order; order >= 0 && n < max; order--) {
		struct page *pg;
		while (n < max && (pg = alloc_pages(GFP | __GFP_NOWARN, (unsigned int)order))) {
			pages[n] = pg;
			orders[n++] = (unsigned int)order;
		}
	}
	return n;
}

static void child_bulk_oom(void)
{
	enum { MAXB = 8192, BULK = 4096, SIZE = 256 };
	static struct page *pages[MAXB];
	static unsigned int orders[MAXB];
	static void *p[BULK];

	KT_ASSERT_EQ(slab_test_boot("mem=16M"), 0);
	struct kmem_cache *s = kmem_cache_create("bulk_oom", SIZE, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(s);
	unsigned long reports = kmem_report_count();

	/* 1. Memory full but for a few pages: the bulk gets some slabs, then fails. */
	int nb = fill_memory(pages, orders, MAXB, MAX_PAGE_ORDER);
	/* Trade the smaller blocks for single pages, then give back 8 pages. */
	while (nb > 0 && orders[nb - 1] < MAX_PAGE_ORDER) {
		nb--;
		__free_pages(pages[nb], orders[nb]);
	}
	nb += fill_memory(pages + nb, orders + nb, MAXB - nb, 0);
	KT_ASSERT(nb > 8 && nb < MAXB && orders[nb - 8] == 0);
	for (int i = 0; i < 8; i++) {
		nb--;
		__free_pages(pages[nb], orders[nb]);
	}
	drain_local_pages();
	long slab0 = kt_vmstat("nr_slab_unreclaimable"), free0 = kt_vmstat("nr_free_pages");
	unsigned long new_slabs0 = slab_test_is_slub() ? slub_stat_sum(s, ALLOC_SLAB, NULL, 0, NULL) : 0;
	KT_ASSERT(slab0 >= 0 && free0 >= 0);

	memset(p, 0, sizeof(p));
	KT_EXPECT(kmem_cache_alloc_bulk(s, GFP | __GFP_NOWARN, BULK, p) == 0);
	if (slab_test_is_slub())	/* it did get partway before failing */
		KT_EXPECT(slub_stat_sum(s, ALLOC_SLAB, NULL, 0, NULL) > new_slabs0);
	/* Whatever the failed call took went back: with the cache's empty slabs
	 * released and this thread's pcp pages drained, the page counts are as before. */
	kmem_cache_shrink(s);
	drain_local_pages();
	KT_EXPECT(kt_vmstat("nr_slab_unreclaimable") == slab0);
	KT_EXPECT(kt_vmstat("nr_free_pages") == free0);
	KT_EXPECT(kmem_report_count() == reports);

	/* 2. No memory at all, one partly used slab: a bulk that needs a second
	 * slab fails and leaves every free object of the first one allocatable. */
	void *first = kmem_cache_alloc(s, GFP | __GFP_NOWARN);
	KT_ASSERT(first);
	/* Objects a sheaf refill took beyond @first go back; empty slabs too. */
	kmem_cache_shrink(s);
	nb += fill_memory(pages + nb, orders + nb, MAXB - nb, MAX_PAGE_ORDER);
	unsigned int per_slab = slab_test_is_slub() ? oo_objects(slub_of(s)->oo) : 0;
	size_t want = per_slab ? per_slab : 64;
	KT_EXPECT(kmem_cache_alloc_bulk(s, GFP | __GFP_NOWARN, want, p) == 0);
	size_t got = 0;
	while (got < BULK && (p[got] = kmem_cache_alloc(s, GFP | __GFP_NOWARN)))
		got++;
	KT_EXPECT(got >= 1);
	if (per_slab)
		KT_EXPECT(got == per_slab - 1);
	KT_EXPECT(slab_disjoint(p, got, SIZE));

	/* 3. A small bulk (object by object in SLUB) is all or nothing too:
	 * with two objects free and no memory, a bulk of 3 fails and both stay allocatable. */
	KT_ASSERT(got >= 2);
	void *two[2] = { p[got - 1], p[got - 2] }, *q[3] = { NULL, NULL, NULL };
	kmem_cache_free(s, two[0]);
	kmem_cache_free(s, two[1]);
	got -= 2;
	KT_EXPECT(kmem_cache_alloc_bulk(s, GFP | __GFP_NOWARN, 3, q) == 0);
	KT_EXPECT(kmem_cache_alloc_bulk(s, GFP | __GFP_NOWARN, 2, q) == 2);
	KT_EXPECT(q[0] && q[1] && q[0] != q[1]);
	KT_EXPECT((q[0] == two[0] || q[0] == two[1]) && (q[1] == two[0] || q[1] == two[1]));
	KT_EXPECT(kmem_cache_alloc(s, GFP | __GFP_NOWARN) == NULL);
	kmem_cache_free_bulk(s, 2, q);

	for (size_t i = 0; i < got; i++)
		kmem_cache_free(s, p[i]);
	kmem_cache_free(s, first);
	while (nb > 0) {
		nb--;
		__free_pages(pages[nb], orders[nb]);
	}
	kmem_cache_destroy(s);
	KT_EXPECT(kmem_report_count() == reports);
}

KTEST(bulk_all_or_nothing_under_exhaustion)
{
	KT_ASSERT_CHILD_OK(slab_run_child("bulk_oom"));
}

KTEST(bulk_free_many_slabs_random_order)
{
	enum { N = 3000, SIZE = 192 };
	static void *p[N], *live[N];
	uint64_t rng = 0x5eed0001;

	slab_quiesce();
	long pages0 = slab_pages_now();
	unsigned long reports = kmem_report_count();
	struct kmem_cache *s = kmem_cache_create("api_freebulk", SIZE, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(s);
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < N; i++) {
			p[i] = kmem_cache_alloc(s, GFP);
			KT_ASSERT(p[i]);
			slab_fill(p[i], SIZE, (uintptr_t)p[i]);
		}
		KT_ASSERT(slab_disjoint(p, N, SIZE));
		slab_shuffle(p, N, &rng);
		/* Free half in random order, with NULL holes; the rest must be intact. */
		memcpy(live, p + N / 2, (N - N / 2) * sizeof(void *));
		void *held[N / 34 + 2];
		int nheld = 0;
		for (int i = 0; i < N / 2; i += 17) {
			held[nheld++] = p[i];
			p[i] = NULL;
		}
		kmem_cache_free_bulk(s, N / 2, p);
		for (int i = 0; i < N - N / 2; i++)
			KT_ASSERT_EQ(slab_check(live[i], SIZE, (uintptr_t)live[i]), 0);
		for (int i = 0; i < nheld; i++) {
			KT_ASSERT_EQ(slab_check(held[i], SIZE, (uintptr_t)held[i]), 0);
			kmem_cache_free(s, held[i]);
		}
		/* Reuse what was freed, then free everything in one call. */
		for (int i = 0; i < N / 2; i++) {
			p[i] = kmem_cache_alloc(s, GFP);
			KT_ASSERT(p[i]);
		}
		memcpy(p + N / 2, live, (N - N / 2) * sizeof(void *));
		KT_ASSERT(slab_disjoint(p, N, SIZE));
		slab_shuffle(p, N, &rng);
		kmem_cache_free_bulk(s, N, p);
	}
	kmem_cache_shrink(s);
	slab_quiesce();
	KT_EXPECT(slab_pages_now() == pages0);
	kmem_cache_destroy(s);
	KT_EXPECT(kmem_report_count() == reports);
}

static void ctor300(void *p) { memset(p, 0x3c, 300); }

KTEST(kfree_bulk_mixed_caches)
{
	if (slab_allocator == SLAB_ALLOCATOR_SLOB) {
		/* The kernel let kfree() take cache objects only once SLOB was gone. */
		fprintf(stderr, "  skipped on SLOB: its kfree needs the size header a cache's objects lack\n");
		return;
	}
	enum { N = 2000 };
	static void *p[N];
	uint64_t rng = 0x5eed0002;

	for (int variant = 0; variant < 2; variant++) {
		slab_quiesce();
		long pages0 = slab_pages_now(), free0 = slab_free_pages_now();
		long large0 = global_zone_page_state(NR_KMALLOC_LARGE);
		unsigned long reports = kmem_report_count();
		struct kmem_cache *c[3] = {
			kmem_cache_create("api_kfb_a", 64, 0, 0, NULL),
			kmem_cache_create("api_kfb_b", 700, 0, SLAB_NO_MERGE, NULL),
			kmem_cache_create("api_kfb_c", 300, 0, 0, ctor300),
		};
		KT_ASSERT(c[0] && c[1] && c[2]);
		for (int i = 0; i < N; i++) {
			unsigned int r = slab_rnd_below(&rng, 100);
			if (r < 30)
				p[i] = kmem_cache_alloc(c[r % 3], GFP);
			else if (r < 85)
				p[i] = kmalloc(1 + slab_rnd_below(&rng, 8192), GFP);
			else if (r < 95)
				p[i] = kmalloc(8193 + slab_rnd_below(&rng, 60000), GFP);
			else
				p[i] = NULL;
			KT_ASSERT(p[i] || r >= 95);
		}
		slab_shuffle(p, N, &rng);
		if (variant)
			kmem_cache_free_bulk(NULL, N, p);
		else
			kfree_bulk(N, p);
		for (int i = 0; i < 3; i++)
			kmem_cache_shrink(c[i]);
		slab_quiesce();
		KT_EXPECT(global_zone_page_state(NR_KMALLOC_LARGE) == large0);
		KT_EXPECT(slab_pages_now() == pages0);
		KT_EXPECT(slab_free_pages_now() == free0);
		for (int i = 0; i < 3; i++)
			kmem_cache_destroy(c[i]);
		KT_EXPECT(kmem_report_count() == reports);
	}
}

/* ---- shrink --------------------------------------------------------- */

KTEST(shrink_returns_empty_slabs)
{
	if (slab_allocator == SLAB_ALLOCATOR_SLOB) {
		fprintf(stderr, "  skipped on SLOB: no empty pages are kept (one goes back at its last free), "
			"and its shared heap pages count as unreclaimable\n");
		return;
	}
	enum { N = 2000 };
	static void *p[N];
	static const slab_flags_t flags[] = { SLAB_NO_MERGE, SLAB_NO_MERGE | SLAB_RECLAIM_ACCOUNT };

	for (int f = 0; f < 2; f++) {
		enum zone_stat_item item = f ? NR_SLAB_RECLAIMABLE : NR_SLAB_UNRECLAIMABLE;
		const char *name = f ? "nr_slab_reclaimable" : "nr_slab_unreclaimable";
		slab_quiesce();
		long pages0 = global_zone_page_state(item);
		struct kmem_cache *s = kmem_cache_create("api_shrink", 512, 0, flags[f], NULL);
		KT_ASSERT(s);
		for (int i = 0; i < N; i++) {
			p[i] = kmem_cache_alloc(s, GFP);
			KT_ASSERT(p[i]);
		}
		long full = global_zone_page_state(item);
		KT_EXPECT(full >= pages0 + N * 512 / (long)PAGE_SIZE);
		KT_EXPECT(kt_vmstat(name) == full);
		/* Objects in use: shrinking cannot release everything, and says so. */
		KT_EXPECT(kmem_cache_shrink(s) != 0);
		/* It may release slabs that only this thread's sheaves held, no more. */
		KT_EXPECT(global_zone_page_state(item) <= full);
		KT_EXPECT(global_zone_page_state(item) >= pages0 + N * 512 / (long)PAGE_SIZE);
		for (int i = 0; i < N; i++)
			kmem_cache_free(s, p[i]);
		long before = global_zone_page_state(item);
		KT_EXPECT(before > pages0);	/* empty slabs are kept for reuse... */
		KT_EXPECT(kmem_cache_shrink(s) == 0);	/* 0: every slab was released */
		long after = global_zone_page_state(item);
		KT_EXPECT(after < before);	/* ...until a shrink gives them back */
		KT_EXPECT(after == pages0);
		KT_EXPECT(kt_vmstat(name) == pages0);
		/* Still usable after a shrink. */
		KT_EXPECT(slab_cache_works(s, 512));
		kmem_cache_destroy(s);
	}
}
static const struct slab_child children[] = {
	{ "bulk_oom", child_bulk_oom },
};

KTEST_MAIN(
	slab_child_dispatch(children, sizeof(children) / sizeof(children[0]));
	if (slab_test_boot("mem=64M")) return 1;
)
