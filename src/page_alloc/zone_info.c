// SPDX-License-Identifier: MIT
#include "page_alloc/mm.h"
#include "page_alloc/pcp.h"
#include "page_alloc/zone_info.h"

_Static_assert(ZI_MIGRATE_TYPES == MIGRATE_TYPES, "zone_info out of step with migratetypes");
_Static_assert(ZI_NR_WMARK == NR_WMARK, "zone_info out of step with watermarks");


void zone_get_info(struct zone_info *zi)
{
	struct zone *z = &zone_normal;

	zi->node = 0;
	zi->name = z->name;
	zi->pb_order = pageblock_order;
	kmem_lock(&z->lock);
	for (int o = 0; o < NR_PAGE_ORDERS; o++) {
		zi->nr_free[o] = z->free_area[o].nr_free;
		for (int mt = 0; mt < MIGRATE_TYPES; mt++)
			zi->nr_free_mt[mt][o] = z->free_area[o].nr_free_mt[mt];
	}
	for (int mt = 0; mt < MIGRATE_TYPES; mt++)
		zi->nr_blocks_mt[mt] = 0;
	unsigned long online = mm_online_pages();
	for (unsigned long pfn = 0; pfn < online; pfn += pageblock_nr_pages)
		zi->nr_blocks_mt[get_pageblock_migratetype(mm_model.mem_map + pfn)]++;
	zi->free_pages = (unsigned long)zone_free_pages(z);
	zi->managed = zone_managed_pages(z);
	zi->present = online;
	zi->spanned = online;
	zi->start_pfn = z->zone_start_pfn;
	for (int w = 0; w < NR_WMARK; w++)
		zi->wmark[w] = wmark_pages(z, w);
	kmem_unlock(&z->lock);
}

struct pageset_walk {
	void (*fn)(const struct pageset_info *pi, void *arg);
	void *arg;
};

static void pageset_one(const struct per_cpu_pages *pcp, void *arg)
{
	struct pageset_walk *w = arg;
	struct pageset_info pi = {
		.count = pcp_read_count(pcp),
		.high = atomic_load_explicit(&zone_normal.pageset_high, memory_order_relaxed),
		.batch = atomic_load_explicit(&zone_normal.pageset_batch, memory_order_relaxed),
	};
	w->fn(&pi, w->arg);
}

void zone_for_each_pageset(void (*fn)(const struct pageset_info *pi, void *arg), void *arg)
{
	struct pageset_walk w = { fn, arg };

	pcp_for_each(pageset_one, &w);
}
