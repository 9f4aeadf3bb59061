/* SPDX-License-Identifier: MIT */
/*
 * The page allocator: a binary buddy allocator over kmem's "physical memory",
 * a reserved virtual range managed in 4 KiB page frames.  Names and semantics
 * are the kernel's (mm/page_alloc.c).
 */
#ifndef KMEM_PAGE_H
#define KMEM_PAGE_H

#include <stddef.h>
#include <kmem/compiler.h>
#include <kmem/gfp.h>

KMEM_BEGIN_DECLS

#define PAGE_SHIFT	12
#define PAGE_SIZE	(1UL << PAGE_SHIFT)
#define PAGE_MASK	(~(PAGE_SIZE - 1))
#define PAGE_ALIGN(addr) (((addr) + PAGE_SIZE - 1) & PAGE_MASK)	/* up to a page boundary */
#define MAX_PAGE_ORDER	10
#define NR_PAGE_ORDERS	(MAX_PAGE_ORDER + 1)
#define MAX_ORDER_NR_PAGES (1UL << MAX_PAGE_ORDER)
#define PAGE_ALLOC_COSTLY_ORDER 3

struct page;

/* Order of the smallest block holding @size bytes (get_order(0) is undefined in
 * the kernel; here it is 0). */
static inline int get_order(unsigned long size)
{
	if (size <= PAGE_SIZE)
		return 0;
	return (int)(64 - __builtin_clzl((size - 1) >> PAGE_SHIFT));
}

KMEM_API struct page *alloc_pages(gfp_t gfp, unsigned int order);
KMEM_API void __free_pages(struct page *page, unsigned int order);
KMEM_API unsigned long __get_free_pages(gfp_t gfp, unsigned int order);
KMEM_API unsigned long get_zeroed_page(gfp_t gfp);
KMEM_API void free_pages(unsigned long addr, unsigned int order);

/*
 * @size bytes of whole pages, no more (kernel alloc_pages_exact()): the block
 * of get_order(@size) is split into order-0 pages and those past @size are
 * freed at once.  Each page may be freed on its own (free_page()) or all
 * with free_pages_exact(); @size need not be a multiple of PAGE_SIZE.  NULL
 * for size 0 or more than 2^MAX_PAGE_ORDER pages.  __GFP_COMP is ignored,
 * with a warning, as the kernel warns.
 */
KMEM_API void *alloc_pages_exact(size_t size, gfp_t gfp);
KMEM_API void free_pages_exact(void *virt, size_t size);

#define alloc_page(gfp)		alloc_pages(gfp, 0)
#define __get_free_page(gfp)	__get_free_pages((gfp), 0)
#define __free_page(page)	__free_pages((page), 0)
#define free_page(addr)		free_pages((addr), 0)

KMEM_API void *page_address(const struct page *page);
KMEM_API struct page *virt_to_page(const void *addr);
KMEM_API unsigned long page_to_pfn(const struct page *page);
KMEM_API struct page *pfn_to_page(unsigned long pfn);
/* True if @addr lies in memory kmem manages (kernel: virt_addr_valid). */
KMEM_API int virt_addr_valid(const void *addr);

/* Give this thread's per-CPU (per-thread) page lists back to the buddy lists. */
KMEM_API void drain_local_pages(void);

KMEM_END_DECLS

#endif /* KMEM_PAGE_H */
