// SPDX-License-Identifier: MIT
#include "introspect/extfrag.h"

void fill_contig_page_info(const unsigned long nr_free[NR_PAGE_ORDERS],
			   unsigned int suitable_order, struct contig_page_info *info)
{
	info->free_pages = 0;
	info->free_blocks_total = 0;
	info->free_blocks_suitable = 0;

	for (unsigned int order = 0; order < NR_PAGE_ORDERS; order++) {
		unsigned long blocks = nr_free[order];

		info->free_blocks_total += blocks;
		info->free_pages += blocks << order;
		if (order >= suitable_order)
			info->free_blocks_suitable += blocks << (order - suitable_order);
	}
}

int unusable_free_index(unsigned int order, const struct contig_page_info *info)
{
	if (!info->free_pages)
		return 1000;
	/* The divisions must come in the kernel's order, or results drift by one. */
	return (int)((info->free_pages - (info->free_blocks_suitable << order)) * 1000UL /
		     info->free_pages);
}

int fragmentation_index(unsigned int order, const struct contig_page_info *info)
{
	unsigned long requested = 1UL << order;

	if (!info->free_blocks_total)
		return 0;
	if (info->free_blocks_suitable)
		return -1000;
	return (int)(1000 - ((1000 + (info->free_pages * 1000UL / requested)) /
			     info->free_blocks_total));
}
