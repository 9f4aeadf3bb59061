// SPDX-License-Identifier: MIT
/*
 * Exact-size page allocations (kernel alloc_pages_exact(), free_pages_exact()):
 * a block of the order that holds @size, split into independent order-0
 * pages, the ones past @size given straight back.  A 100000-byte request
 * costs 25 pages instead of 32.
 *
 * Unlike the kernel, which frees such pages one by one, kmem gives a range
 * back in the largest aligned pieces it can (25 pages at an order-5 boundary:
 * 16 + 8 + 1), so that freeing a 4 MiB block is a handful of buddy merges,
 * not a thousand.  Every page of a piece is checked first, as __free_pages()
 * checks a block's head: a page that is not an allocated order-0 page (a
 * double free, a tail of somebody's compound block) is reported and kept
 * out, and the rest go back page by page.
 */
#include <string.h>

#include "page_alloc/mm.h"

/* Is @page an allocated order-0 page, the state split_page() leaves pages in? */
static bool page_exact_ok(const struct page *page)
{
	return page_ref_count(page) == 1 && !__atomic_load_n(&page->order, __ATOMIC_RELAXED) &&
	       !page_flags(page) && !PageTail(page);
}

/*
 * The largest aligned piece starting at @pfn and ending by @end, at most a
 * pageblock: a bigger piece could span pageblocks of two migratetypes, and
 * one __free_one_page() would list it all as the first one's (the kernel's
 * __free_pages_ok() splits at pageblocks too).  Pieces merge on the lists.
 */
static unsigned int piece_order(unsigned long pfn, unsigned long end)
{
	unsigned int order = pfn ? (unsigned int)__builtin_ctzl(pfn) : pageblock_order;

	if (order > pageblock_order)
		order = pageblock_order;
	while (pfn + (1UL << order) > end)
		order--;
	return order;
}

/*
 * Free @nr order-0 pages from @page.  @untouched: their memory was given
 * back to the OS and not written since (reads as zeroes), so they go back
 * still reported, and nobody madvises them again; at the list tails, as
 * every reported block, so that allocations take resident memory first.
 */
static void free_pages_range(struct page *page, unsigned long nr, bool untouched)
{
	unsigned long pfn = __page_to_pfn(page), end = pfn + nr;
	unsigned int fpi = untouched ? FPI_REPORTED | FPI_TO_TAIL : FPI_NONE;

	while (pfn < end) {
		unsigned int order = piece_order(pfn, end);
		unsigned long n = 1UL << order, i;
		struct page *piece = __pfn_to_page(pfn);

		for (i = 0; i < n && page_exact_ok(piece + i); i++)
			;
		if (i < n || !order) {
			/* A bad page among them: one by one, so that it is reported and kept. */
			for (i = 0; i < n; i++)
				if (__free_pages_prepare(piece + i, 0))
					__free_prepared(piece + i, 0, fpi);
		} else {
			/* One block of @order now: its head allocated, the rest plain. */
			for (i = 1; i < n; i++)
				set_page_count(piece + i, 0);
			__atomic_store_n(&piece->order, (unsigned char)order, __ATOMIC_RELAXED);
			if (__free_pages_prepare(piece, order))
				__free_prepared(piece, order, fpi);
		}
		pfn += n;
	}
}

/*
 * Split an allocated block of @order into order-0 pages (kernel
 * split_page()): each is then allocated on its own, with the block's
 * migratetype.
 */
static void split_page(struct page *page, unsigned int order)
{
	unsigned char mt = __atomic_load_n(&page->alloc_mt, __ATOMIC_RELAXED);

	__atomic_store_n(&page->order, 0, __ATOMIC_RELAXED);
	for (unsigned long i = 1; i < (1UL << order); i++) {
		__atomic_store_n(&page[i].flags, 0UL, __ATOMIC_RELAXED);
		__atomic_store_n(&page[i].order, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&page[i].alloc_mt, mt, __ATOMIC_RELAXED);
		__atomic_store_n(&page[i].compound_head, 0UL, __ATOMIC_RELAXED);
		set_page_count(&page[i], 1);
	}
}

void *__alloc_pages_exact(size_t size, unsigned int order, gfp_t gfp)
{
	unsigned long nr = (size + PAGE_SIZE - 1) >> PAGE_SHIFT;
	bool untouched = false;

	if (unlikely(!size || order > MAX_PAGE_ORDER || nr > (1UL << order))) {
		if (!(gfp & __GFP_NOWARN))
			kmem_warn("mm/page_alloc.c:alloc_pages_exact",
				  "alloc_pages_exact(%zu): invalid size (at most %lu bytes)\n",
				  size, PAGE_SIZE << MAX_PAGE_ORDER);
		return NULL;
	}
	struct page *page = __alloc_pages_untouched(gfp & ~(__GFP_COMP | __GFP_ZERO), order, &untouched);
	if (!page)
		return NULL;
	split_page(page, order);
	free_pages_range(page + nr, (1UL << order) - nr, untouched);
	void *addr = __page_address(page);
	/* Only what is kept, and only if it may not read as zeroes already. */
	if ((gfp & __GFP_ZERO) && !untouched)
		memset(addr, 0, nr << PAGE_SHIFT);
	return addr;
}

KMEM_API void *alloc_pages_exact(size_t size, gfp_t gfp)
{
	if (gfp & __GFP_COMP) {
		/* The kernel WARNs: the pages of the result are independent. */
		kmem_warn("mm/page_alloc.c:alloc_pages_exact",
			  "__GFP_COMP makes no sense with alloc_pages_exact(); ignored\n");
		gfp &= ~__GFP_COMP;
	}
	return __alloc_pages_exact(size, (unsigned int)get_order(size ? size : 1), gfp);
}

KMEM_API void free_pages_exact(void *virt, size_t size)
{
	if (!virt || !size)
		return;
	unsigned long nr = size > SIZE_MAX - PAGE_SIZE ? SIZE_MAX >> PAGE_SHIFT
						       : (size + PAGE_SIZE - 1) >> PAGE_SHIFT;
	uintptr_t off = (uintptr_t)virt - (uintptr_t)mm_model.base;

	if (unlikely(!virt_addr_valid(virt) || ((uintptr_t)virt & ~PAGE_MASK) ||
		     (off >> PAGE_SHIFT) + nr > mm_online_pages())) {
		kmem_warn("mm/page_alloc.c:free_pages_exact",
			  "free_pages_exact(%p, %zu): not pages kmem manages\n", virt, size);
		return;
	}
	free_pages_range(__virt_to_page(virt), nr, false);
}
