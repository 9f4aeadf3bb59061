/* SPDX-License-Identifier: MIT */
/*
 * The page allocator's narrow window for introspection: a consistent
 * snapshot of the zone, taken under its lock, so /proc renderers never
 * touch the allocator's internals.
 */
#ifndef KMEM_ZONE_INFO_H
#define KMEM_ZONE_INFO_H

#include <kmem/page.h>

#define ZI_MIGRATE_TYPES 5	/* Unmovable Movable Reclaimable HighAtomic Isolate */
#define ZI_NR_WMARK 4		/* min low high promo */

struct zone_info {
	int node;
	const char *name;
	unsigned long nr_free[NR_PAGE_ORDERS];
	unsigned long nr_free_mt[ZI_MIGRATE_TYPES][NR_PAGE_ORDERS];
	unsigned long nr_blocks_mt[ZI_MIGRATE_TYPES];
	unsigned long free_pages, managed, present, spanned, start_pfn;
	unsigned long wmark[ZI_NR_WMARK];
	int pb_order;	/* pageblock order */
};

extern const char *const migratetype_names[ZI_MIGRATE_TYPES];

void zone_get_info(struct zone_info *zi);

struct pageset_info {
	int count, high, batch;
};
/* Calls @fn for each live per-thread page list. */
void zone_for_each_pageset(void (*fn)(const struct pageset_info *pi, void *arg), void *arg);

/* sysctl vm.*: 0, -ENOENT or -EINVAL. */
int kmem_set_sysctl_vm(const char *name, unsigned long val);
unsigned long kmem_get_sysctl_vm(const char *name);

#endif /* KMEM_ZONE_INFO_H */
