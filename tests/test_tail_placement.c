// SPDX-License-Identifier: MIT
/*
 * The buddy free-to-tail heuristic (Zoccolo/Gorman 2010): a freed
 * block of order o that cannot merge, but whose combined order-(o+1)
 * block's buddy is free, is kept at the TAIL of free_area[o].free_list[mt]
 * so that it is handed out last; every other freed block goes to the HEAD.
 *
 * The situation is built by hand with the buddy primitives
 * (__rmqueue / __free_one_page under zone->lock) for every order 0..8, plus
 * the negative case (higher buddy not free -> head) and the cut-off
 * (order >= MAX_PAGE_ORDER - 1 never goes to the tail by the heuristic).
 * Then the same situation is built through the public API and the next
 * allocation must return the block at the head.  Each configuration runs
 * in a forked child: page_alloc.tail_placement=1 (default) and =0.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <kmem.h>

#include "page_alloc/mm.h"

#include "lib/kt_util.h"
#include "lib/mm_check.h"
#include "ktest.h"

#define MT MIGRATE_MOVABLE

static struct zone *const z = &zone_normal;

/* ---- helpers; all but the API scenario run with z->lock held ---------- */

static struct list_head *flist(unsigned int order)
{
	return &z->free_area[order].free_list[MT];
}

/* Position of @page on the order-@order list (0 = head), -1 if absent. */
static int list_pos(struct page *page, unsigned int order, int *len)
{
	struct page *p;
	int i = 0, pos = -1;

	list_for_each_entry(p, flist(order), buddy_list) {
		if (p == page)
			pos = i;
		i++;
	}
	if (len)
		*len = i;
	return pos;
}

/* Take a whole MAX_PAGE_ORDER block off the free lists: we own its pages. */
static struct page *grab_max_block(void)
{
	struct page *page = __rmqueue(z, MAX_PAGE_ORDER, MT);

	if (page)
		page_clear_flag(page, PG_reported);
	return page;
}

static void put(struct page *page, unsigned int order)
{
	__free_one_page(page, __page_to_pfn(page), z, order, MT, FPI_NONE);
}

/* Give back pages [from, to) of the block at @base, one page at a time. */
static void give_back(struct page *base, unsigned long from, unsigned long to)
{
	for (unsigned long i = from; i < to; i++)
		put(base + i, 0);
}

static bool lists_below_max_empty(void)
{
	for (unsigned int o = 0; o < MAX_PAGE_ORDER; o++)
		if (z->free_area[o].nr_free)
			return false;
	return true;
}

/*
 * The free-to-tail situation at order @o (0..MAX_PAGE_ORDER-2), in block X:
 *
 *   X+0        A, order o      freed last: its buddy B is allocated,
 *   X+2^o      B, order o      so it cannot merge; but the buddy of the
 *   X+2^(o+1)  D, order o+1    combined block X+0 (order o+1) is D, free.
 *
 * E (order o, in another block Y whose neighbours are all allocated) is
 * freed before A so the list has two entries.  With @higher_free false,
 * D stays allocated (negative case).
 */
static void scenario(unsigned int o, bool higher_free, bool expect_tail)
{
	int len;

	kmem_lock(&z->lock);
	if (!lists_below_max_empty()) {
		kmem_unlock(&z->lock);
		KT_FAIL("order %u: free lists below MAX_PAGE_ORDER are not empty at the start", o);
		return;
	}
	struct page *X = grab_max_block(), *Y = grab_max_block();
	if (!X || !Y) {
		kmem_unlock(&z->lock);
		KT_FAIL("cannot take two MAX_PAGE_ORDER blocks");
		return;
	}
	struct page *A = X, *B = X + (1UL << o), *D = X + (2UL << o), *E = Y;

	if (higher_free)
		put(D, o + 1);
	put(E, o);
	int e_pos = list_pos(E, o, &len);
	put(A, o);
	int a_pos = list_pos(A, o, &len);
	int e_pos2 = list_pos(E, o, NULL);
	bool a_unmerged = PageBuddy(A) && buddy_order(A) == o;
	bool d_unmerged = !higher_free || (PageBuddy(D) && buddy_order(D) == o + 1);

	/* Put everything back: B merges A and D up, the rest page by page. */
	put(B, o);
	give_back(X, higher_free ? 4UL << o : 2UL << o, MAX_ORDER_NR_PAGES);
	give_back(Y, 1UL << o, MAX_ORDER_NR_PAGES);
	kmem_unlock(&z->lock);

	if (e_pos != 0 || !a_unmerged || !d_unmerged || len != 2) {
		KT_FAIL("order %u: setup went wrong (E at %d, A order ok %d, D order ok %d, "
			"%d on the list)", o, e_pos, a_unmerged, d_unmerged, len);
		return;
	}
	if (expect_tail && (a_pos != 1 || e_pos2 != 0))
		KT_FAIL("order %u: A should be at the tail (after E), found at %d of %d",
			o, a_pos, len);
	if (!expect_tail && (a_pos != 0 || e_pos2 != 1))
		KT_FAIL("order %u: A should be at the head (before E), found at %d of %d",
			o, a_pos, len);
	KT_ASSERT_ALL_FREE();
}

/*
 * Cut-off: order MAX_PAGE_ORDER-1 blocks never go to the tail by the
 * heuristic, even though the MAX_PAGE_ORDER block next to their parent is
 * free (it is no buddy: nothing merges beyond MAX_PAGE_ORDER).
 */
static void scenario_cutoff(void)
{
	const unsigned int o = MAX_PAGE_ORDER - 1;
	const unsigned long half = 1UL << o;

	kmem_lock(&z->lock);
	struct page *X = grab_max_block(), *Y = grab_max_block(), *W = grab_max_block();
	if (!X || !Y || !W) {
		kmem_unlock(&z->lock);
		KT_FAIL("cannot take three MAX_PAGE_ORDER blocks");
		return;
	}
	/* Make sure the MAX_PAGE_ORDER neighbours of X's and W's parents are free:
	 * hand Y back, and every block other than X and W is free already. */
	put(Y, MAX_PAGE_ORDER);
	unsigned long xi = (unsigned long)(X - mm_model.mem_map);
	unsigned long online = mm_online_pages();
	bool x_nb_free = (xi ^ MAX_ORDER_NR_PAGES) < online &&
			 PageBuddy(mm_model.mem_map + (xi ^ MAX_ORDER_NR_PAGES));

	put(W, o);		/* E: first on the order-9 list */
	put(X, o);		/* A: must go to the head despite the free neighbour */
	int w_pos = list_pos(W, o, NULL), x_pos = list_pos(X, o, NULL);

	put(X + half, o);
	put(W + half, o);
	kmem_unlock(&z->lock);

	KT_ASSERT(x_nb_free);
	KT_ASSERT_EQ(x_pos, 0);
	KT_ASSERT_EQ(w_pos, 1);
	KT_ASSERT_ALL_FREE();
}

/*
 * The same situation at order 4 through the public API: 64 order-4
 * allocations cover one MAX_PAGE_ORDER block P; free D = P+32..63 (two
 * order-4 blocks merge into order 5), E = P+64, then A = P+0.  The next
 * order-4 allocation takes the list head: E with the heuristic, A without.
 */
static void scenario_api(bool expect_tail)
{
	const unsigned int o = 4;
	const int n = MAX_ORDER_NR_PAGES >> o;
	struct page *pages[MAX_ORDER_NR_PAGES >> 4];
	const gfp_t gfp = GFP_KERNEL | __GFP_MOVABLE;

	for (int i = 0; i < n; i++) {
		pages[i] = alloc_pages(gfp, o);
		KT_ASSERT(pages[i]);
	}
	/* Sort by address and check they tile one aligned MAX_PAGE_ORDER block. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && pages[j] < pages[j - 1]; j--) {
			struct page *t = pages[j];
			pages[j] = pages[j - 1];
			pages[j - 1] = t;
		}
	struct page *P = pages[0];
	KT_ASSERT(((page_to_pfn(P) - mm_model.base_pfn) & (MAX_ORDER_NR_PAGES - 1)) == 0);
	for (int i = 0; i < n; i++)
		KT_ASSERT(pages[i] == P + ((unsigned long)i << o));

	__free_pages(P + 32, o);
	__free_pages(P + 48, o);
	__free_pages(P + 64, o);	/* E */
	__free_pages(P + 0, o);		/* A */

	kmem_lock(&z->lock);
	int len, a_pos = list_pos(P, o, &len), e_pos = list_pos(P + 64, o, NULL);
	bool d_ok = PageBuddy(P + 32) && buddy_order(P + 32) == o + 1;
	kmem_unlock(&z->lock);
	KT_ASSERT(d_ok);
	KT_ASSERT_EQ(len, 2);
	KT_ASSERT_EQ(a_pos, expect_tail ? 1 : 0);
	KT_ASSERT_EQ(e_pos, expect_tail ? 0 : 1);

	struct page *next = alloc_pages(gfp, o);
	KT_ASSERT(next == (expect_tail ? P + 64 : P));

	__free_pages(next, o);
	for (int i = 0; i < n; i++) {
		unsigned long off = (unsigned long)i << o;
		if (off == 0 || off == 32 || off == 48 || off == 64)
			continue;
		__free_pages(pages[i], o);
	}
	KT_ASSERT_ALL_FREE();
}

static void run_all(void *arg)
{
	bool on = arg != NULL;

	KT_ASSERT_EQ(kmem_init(on ? "mem=32M" : "mem=32M page_alloc.tail_placement=0"), 0);
	KT_ASSERT_EQ(tail_placement, on);
	KT_ASSERT_ALL_FREE();
	if (ktest_failed_now)
		return;

	/* The heuristic applies below the cut-off (orders 0..MAX_PAGE_ORDER-2). */
	for (unsigned int o = 0; o <= MAX_PAGE_ORDER - 2 && !ktest_failed_now; o++)
		scenario(o, true, on);
	/* Negative case: the higher buddy is not free: head, either way. */
	for (unsigned int o = 0; o <= MAX_PAGE_ORDER - 2 && !ktest_failed_now; o++)
		scenario(o, false, false);
	if (!ktest_failed_now)
		scenario_cutoff();
	if (!ktest_failed_now)
		scenario_api(on);
}

KTEST(tail_placement_on)
{
	KT_ASSERT_CHILD_OK(kt_fork(run_all, (void *)1));
}

KTEST(tail_placement_off)
{
	KT_ASSERT_CHILD_OK(kt_fork(run_all, NULL));
}

/* The boot parameter is a bool: bare name means on, garbage is refused. */
static void bad_value(void *arg)
{
	(void)arg;
	int rc;
	char *err = kt_init_captured("mem=32M page_alloc.tail_placement=sometimes", &rc);
	KT_ASSERT_EQ(rc, -EINVAL);
	KT_ASSERT_CONTAINS(err, "page_alloc.tail_placement");
	free(err);
}

static void bare_name(void *arg)
{
	(void)arg;
	tail_placement = false;
	KT_ASSERT_EQ(kmem_init("mem=32M page_alloc.tail_placement"), 0);
	KT_ASSERT(tail_placement);
}

KTEST(tail_placement_param)
{
	KT_ASSERT_CHILD_OK(kt_fork(bad_value, NULL));
	KT_ASSERT_CHILD_OK(kt_fork(bare_name, NULL));
}

KTEST_MAIN((void)0)
