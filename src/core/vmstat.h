/* SPDX-License-Identifier: MIT */
/*
 * Memory statistics, as /proc/vmstat shows them.  Gauges ("nr_*") are global
 * atomics.  Events are counted per thread without atomic read-modify-write
 * (the fast paths must not pay for them) and summed on read, like the
 * kernel's per-CPU vm_event_states.
 */
#ifndef KMEM_VMSTAT_H
#define KMEM_VMSTAT_H

#include <stdatomic.h>

#include "core/list.h"

enum zone_stat_item {
	NR_FREE_PAGES,
	NR_FREE_REPORTED,	/* free pages whose memory went back to the OS */
	NR_SLAB_RECLAIMABLE,	/* pages */
	NR_SLAB_UNRECLAIMABLE,	/* pages */
	NR_KMALLOC_LARGE,	/* pages held by kmalloc() > KMALLOC_MAX_CACHE_SIZE */
	NR_SLAB_RELEASED,	/* pages of partial slabs given back to the OS (slub_release.c) */
	NR_VM_ZONE_STAT_ITEMS
};

enum vm_event_item {
	PGALLOC_NORMAL,		/* pages allocated */
	PGFREE,			/* pages freed */
	PGALLOC_FAIL,		/* allocation requests that failed */
	PGREPORTED,		/* pages given back to the OS */
	MEMORY_HOTPLUG_PAGES,	/* pages brought online after boot */
	EXTFRAG_FALLBACK,	/* allocations served from another migratetype */
	EXTFRAG_CLAIM,		/* pageblocks re-labelled to the allocating type */
	PCP_REFILL,		/* pcp lists refilled from the buddy lists */
	PCP_DRAIN,		/* pcp batches returned to the buddy lists */
	SLAB_PAGES_RELEASED,	/* pages of partial slabs given back to the OS */
	SLAB_PAGES_RESTORED,	/* such pages taken back when their slab is allocated from */
	SLAB_SHEAF_REAPED,	/* objects of idle sheaves flushed to their slabs (slub_reap_tick()) */
	NR_VM_EVENT_ITEMS
};

extern const char *const vmstat_text_zone[NR_VM_ZONE_STAT_ITEMS];
extern const char *const vmstat_text_event[NR_VM_EVENT_ITEMS];

extern atomic_long vm_zone_stat[NR_VM_ZONE_STAT_ITEMS];

static inline void mod_zone_page_state(enum zone_stat_item item, long delta)
{
	atomic_fetch_add_explicit(&vm_zone_stat[item], delta, memory_order_relaxed);
}

static inline long global_zone_page_state(enum zone_stat_item item)
{
	return atomic_load_explicit(&vm_zone_stat[item], memory_order_relaxed);
}

/* One thread's event counters; embedded in that thread's per-thread state. */
struct vm_event_state {
	unsigned long event[NR_VM_EVENT_ITEMS];
	struct list_head node;		/* on the registry while the thread lives */
};

/* Single writer (the owning thread); relaxed so readers may sum concurrently. */
static inline void __count_vm_events(struct vm_event_state *s, enum vm_event_item item,
				     unsigned long delta)
{
	unsigned long v = __atomic_load_n(&s->event[item], __ATOMIC_RELAXED);

	__atomic_store_n(&s->event[item], v + delta, __ATOMIC_RELAXED);
}

/* For threads without per-thread state (and slow paths): atomic. */
void count_vm_events_global(enum vm_event_item item, unsigned long delta);

void vm_events_register(struct vm_event_state *s);
/* Fold a dying thread's counters into the global ones and unregister. */
void vm_events_unregister(struct vm_event_state *s);
void all_vm_events(unsigned long ret[NR_VM_EVENT_ITEMS]);

#endif /* KMEM_VMSTAT_H */
