/* SPDX-License-Identifier: MIT */
/*
 * mm_check(): an independent recount of the page allocator's state, for
 * tests.  Under zone_normal.lock it walks every buddy free list and the
 * whole mem_map (and the calling thread's pcp lists) and cross-checks:
 *
 *  - every block on free_area[o].free_list[mt] is online, aligned to its
 *    order, has PG_buddy (and nothing but PG_reported besides), private ==
 *    o, refcount 0, sits in pageblock(s) of type mt, and overlaps no other
 *    free or pcp block; its interior pages carry no flags and no compound
 *    head;
 *  - free_area[o].nr_free and nr_free_mt[mt] equal the list lengths;
 *  - NR_FREE_PAGES equals the free pages on the lists, NR_FREE_REPORTED the
 *    PG_reported ones;
 *  - no page outside the lists has PG_buddy (a stale flag would let a
 *    neighbour merge with an allocated page);
 *  - the calling thread's pcp pages have PG_pcp and their list's order, and
 *    the pcp count equals their sum;
 *  - watermarks are ordered min < low < high < promo.
 *
 * Call it only when no other thread is using kmem (reporting passes and
 * other threads' pcp lists are not quiescent otherwise).
 */
#ifndef KMEM_TEST_MM_CHECK_H
#define KMEM_TEST_MM_CHECK_H

#include <stdbool.h>

#include <kmem/page.h>

struct mm_check_result {
	unsigned long free_pages;		/* pages in blocks on the buddy lists */
	unsigned long nr_free[NR_PAGE_ORDERS];	/* blocks per order on the lists */
	unsigned long reported_pages;		/* free pages flagged PG_reported */
	unsigned long pcp_pages;		/* on the calling thread's pcp lists */
	unsigned long managed;			/* zone managed pages */
	unsigned long online;			/* pages online */
	unsigned long min_wmark;		/* WMARK_MIN */
	int errors;				/* problems found (also the return value) */
};

/* Returns the number of problems found; each is printed on stderr. */
int mm_check(struct mm_check_result *res);

/*
 * The /proc/buddyinfo line of a zone whose free memory is exactly
 * @managed pages in MAX_PAGE_ORDER blocks ("Node 0, zone   Normal      0 ... 16 \n").
 */
void mm_expected_buddyinfo_all_free(unsigned long managed, char *buf, size_t size);

/*
 * Every managed page is back on the buddy lists: mm_check() finds no
 * problem, its free page count equals the zone's managed pages, and
 * /proc/buddyinfo reads as mm_expected_buddyinfo_all_free() of them.
 * Otherwise the current test case fails, the message naming @file:@line
 * (the caller's), and false is returned.  Drain the pcp lists first if
 * their pages count as free (drain_local_pages()).
 */
bool mm_check_all_free(const char *file, int line);

/* Fail and leave the current case unless mm_check_all_free() holds here. */
#define KT_ASSERT_ALL_FREE() do {						\
	if (!mm_check_all_free(__FILE__, __LINE__))				\
		return;								\
} while (0)

#endif /* KMEM_TEST_MM_CHECK_H */
