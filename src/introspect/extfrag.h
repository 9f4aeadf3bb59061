/* SPDX-License-Identifier: MIT */
/*
 * External fragmentation metrics (kernel mm/vmstat.c), as pure functions of
 * the per-order free block counts, in integer thousandths.
 */
#ifndef KMEM_EXTFRAG_H
#define KMEM_EXTFRAG_H

#include <kmem/page.h>

struct contig_page_info {
	unsigned long free_pages;		/* all free pages */
	unsigned long free_blocks_total;	/* free blocks of any order */
	unsigned long free_blocks_suitable;	/* blocks of @order carvable from free memory */
};

void fill_contig_page_info(const unsigned long nr_free[NR_PAGE_ORDERS],
			   unsigned int suitable_order, struct contig_page_info *info);

/* 0 (all free memory usable for @order) .. 1000 (none usable); 1000 if no free pages. */
int unusable_free_index(unsigned int order, const struct contig_page_info *info);

/*
 * -1000 if an @order block is free; otherwise 0 (failure from lack of
 * memory) .. <1000 (failure from fragmentation); 0 if nothing is free.
 */
int fragmentation_index(unsigned int order, const struct contig_page_info *info);

#endif /* KMEM_EXTFRAG_H */
