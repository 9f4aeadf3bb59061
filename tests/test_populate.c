// SPDX-License-Identifier: MIT
/*
 * Pre-faulting fresh memory for new slabs (src/page_alloc/populate.c,
 * page_alloc.populate): observed with mincore(), which says which pages of
 * kmem's memory the OS has made resident.
 *
 *  - A new slab in fresh memory brings its whole 64 KiB group in (16 pages
 *    resident); with page_alloc.populate=0 only what was touched.  Not a
 *    thread's first slab of a cache: only from its second on.
 *  - Memory given back to the OS by page reporting is fresh again: not
 *    resident, its groups unmarked, and the next slab there populates anew.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <kmem.h>

#include "page_alloc/mm.h"
#include "slab/slab.h"
#include "slab/slub/slub.h"

#include "lib/kt_util.h"
#include "ktest.h"

#define GROUP_PAGES	16

/* Resident pages among the @n pages from @addr (page aligned). */
static int resident(void *addr, int n)
{
	unsigned char vec[GROUP_PAGES * 64];
	int r = 0;

	if (n > (int)sizeof(vec) || mincore(addr, (size_t)n * PAGE_SIZE, vec))
		return -1;
	for (int i = 0; i < n; i++)
		r += vec[i] & 1;
	return r;
}

static char *group_start(const void *x)
{
	uintptr_t off = (uintptr_t)x - (uintptr_t)mm_model.base;

	return mm_model.base + (off & ~((uintptr_t)GROUP_PAGES * PAGE_SIZE - 1));
}

/*
 * Objects of a fresh cache until one comes from a second slab (a thread's
 * first is never populated): how many pages of that slab's group are
 * resident?
 */
static int second_slab_group_resident(const char *cmdline, int *slab_pages)
{
	if (kmem_init(cmdline))
		return -1;
	struct kmem_cache *s = kmem_cache_create("kt_populate", 256, 0, SLAB_NO_MERGE, NULL);
	void *x = s ? kmem_cache_alloc(s, GFP_KERNEL) : NULL;
	if (!x)
		return -1;
	struct slab *first = virt_to_slab(x);
	for (int i = 0; i < 1000 && virt_to_slab(x) == first; i++)
		if (!(x = kmem_cache_alloc(s, GFP_KERNEL)))
			return -1;
	struct slab *slab = virt_to_slab(x);
	if (slab == first)
		return -1;
	*slab_pages = 1 << compound_order(slab_page(slab));
	return resident(group_start(x), GROUP_PAGES);
}

static void populate_on(void *arg)
{
	int pages = 0, r = second_slab_group_resident("mem=64M", &pages);

	(void)arg;
	KT_ASSERT_EQ(r, GROUP_PAGES);
}

static void populate_off(void *arg)
{
	int pages = 0, r = second_slab_group_resident("mem=64M page_alloc.populate=0", &pages);

	(void)arg;
	/* The slab's pages (its freelist touched them) and nothing else of the group. */
	KT_ASSERT(r >= pages && r < GROUP_PAGES);
}

KTEST(new_slab_populates_its_group)
{
	KT_ASSERT_CHILD_OK(kt_fork(populate_on, NULL));
	KT_ASSERT_CHILD_OK(kt_fork(populate_off, NULL));
}

/*
 * Not a thread's very first slab of a cache: a thread that takes one slab
 * each of many caches would fault in groups it never uses.  64-byte
 * objects: one slab (64 objects) fills the first sheaf refill; the group
 * is populated from the thread's second slab on.
 */
static void first_slab_of_a_thread(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(kmem_init("mem=64M"), 0);
	struct kmem_cache *s = kmem_cache_create("kt_populate_64", 64, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(s);
	void *x = kmem_cache_alloc(s, GFP_KERNEL);
	KT_ASSERT(x);
	KT_ASSERT_EQ(1 << compound_order(slab_page(virt_to_slab(x))), 1);
	int first = resident(group_start(x), GROUP_PAGES);
	KT_EXPECT(first >= 1 && first < GROUP_PAGES);
	/* Enough for a second slab, in the same fresh group. */
	enum { N = 200 };
	void *more[N];
	struct slab *slab0 = virt_to_slab(x);
	void *second = NULL;
	for (int i = 0; i < N; i++) {
		more[i] = kmem_cache_alloc(s, GFP_KERNEL);
		KT_ASSERT(more[i]);
		if (!second && virt_to_slab(more[i]) != slab0)
			second = more[i];
	}
	KT_ASSERT(second);
	KT_EXPECT(resident(group_start(second), GROUP_PAGES) == GROUP_PAGES);
}

KTEST(a_threads_first_slab_of_a_cache_is_not_populated)
{
	KT_ASSERT_CHILD_OK(kt_fork(first_slab_of_a_thread, NULL));
}

static void reported_memory_is_fresh_again(void *arg)
{
	enum { N = 20000 };
	static void *p[N];

	(void)arg;
	KT_ASSERT_EQ(kmem_init("mem=64M page_reporting.delay_ms=0"), 0);
	struct kmem_cache *s = kmem_cache_create("kt_populate_rep", 256, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(s);
	/* 5 MiB of slabs: at least one whole 2 MiB block of them. */
	for (int i = 0; i < N; i++)
		KT_ASSERT((p[i] = kmem_cache_alloc(s, GFP_KERNEL)) != NULL);
	char *lo = (char *)-1, *hi = NULL;
	for (int i = 0; i < N; i++) {
		lo = (char *)p[i] < lo ? (char *)p[i] : lo;
		hi = (char *)p[i] > hi ? (char *)p[i] : hi;
	}
	/* A 2 MiB-aligned block inside what the slabs covered. */
	uintptr_t blk = ((uintptr_t)lo - (uintptr_t)mm_model.base + (2u << 20) - 1) & ~((uintptr_t)(2u << 20) - 1);
	char *block = mm_model.base + blk;
	KT_ASSERT(block + (2u << 20) <= hi);
	KT_ASSERT(page_populated(virt_to_page(block)));
	KT_ASSERT_EQ(resident(block, GROUP_PAGES), GROUP_PAGES);

	/* All back, the slabs freed, the free 2 MiB blocks reported. */
	for (int i = 0; i < N; i++)
		kmem_cache_free(s, p[i]);
	kmem_cache_shrink(s);
	drain_local_pages();
	struct page *probe = alloc_pages(GFP_KERNEL, 0);	/* a free after it reports */
	KT_ASSERT(probe);
	__free_pages(probe, 0);
	drain_local_pages();
	KT_ASSERT(kt_vmstat("pgreported") > 0);
	KT_ASSERT(!page_populated(virt_to_page(block)));
	KT_ASSERT_EQ(resident(block, GROUP_PAGES), 0);

	/* Slabs there again: populated anew. */
	for (int i = 0; i < N; i++)
		KT_ASSERT((p[i] = kmem_cache_alloc(s, GFP_KERNEL)) != NULL);
	KT_ASSERT(page_populated(virt_to_page(block)));
	KT_ASSERT_EQ(resident(block, GROUP_PAGES), GROUP_PAGES);
	for (int i = 0; i < N; i++)
		kmem_cache_free(s, p[i]);
	kmem_cache_destroy(s);
}

KTEST(reported_memory_is_populated_again)
{
	KT_ASSERT_CHILD_OK(kt_fork(reported_memory_is_fresh_again, NULL));
}

KTEST_MAIN((void)0)
