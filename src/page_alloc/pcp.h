/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU page lists (pcp) for orders <= PAGE_ALLOC_COSTLY_ORDER.  In this
 * version "per CPU" means per thread: the owner pushes and pops with no lock
 * and no atomic read-modify-write.  Everything a true per-CPU (rseq)
 * version must replace is behind this header.
 */
#ifndef KMEM_PCP_H
#define KMEM_PCP_H

#include "page_alloc/mm.h"

#define NR_PCP_ORDERS	(PAGE_ALLOC_COSTLY_ORDER + 1)
#define NR_PCP_LISTS	(MIGRATE_PCPTYPES * NR_PCP_ORDERS)

struct per_cpu_pages {
	int count;		/* pages on the lists (read remotely: relaxed) */
	int high;		/* return a batch to the buddy lists above this */
	int batch;		/* pages moved to/from the buddy lists at a time */
	int free_rr;		/* round-robin start for bulk frees */
	struct list_head lists[NR_PCP_LISTS];
	struct vm_event_state vm;
	struct list_head node;	/* all live pcps, for /proc/zoneinfo */
	int tid;
};

extern __thread struct per_cpu_pages *this_pcp __attribute__((tls_model("initial-exec")));

static inline int order_to_pindex(int mt, unsigned int order)
{
	return (int)order * MIGRATE_PCPTYPES + mt;
}

static inline int pcp_read_count(const struct per_cpu_pages *pcp)
{
	return __atomic_load_n(&pcp->count, __ATOMIC_RELAXED);
}

static inline void pcp_add_count(struct per_cpu_pages *pcp, int delta)
{
	__atomic_store_n(&pcp->count, pcp_read_count(pcp) + delta, __ATOMIC_RELAXED);
}

/* Fast path: pop a page of @order from this thread's list, or NULL. */
static inline struct page *pcp_alloc_fast(unsigned int order, int mt)
{
	struct per_cpu_pages *pcp = this_pcp;

	if (unlikely(!pcp))
		return NULL;
	struct list_head *list = &pcp->lists[order_to_pindex(mt, order)];
	if (unlikely(list_empty(list)))
		return NULL;
	struct page *page = list_first_entry(list, struct page, buddy_list);
	list_del(&page->buddy_list);
	pcp_add_count(pcp, -(1 << order));
	__count_vm_events(&pcp->vm, PGALLOC_NORMAL, 1UL << order);
	return page;
}

void pcp_free_overflow(struct per_cpu_pages *pcp);

/* Fast path: push a freed page; false if this thread has no pcp lists. */
static inline bool pcp_free_fast(struct page *page, unsigned int order, int mt)
{
	struct per_cpu_pages *pcp = this_pcp;

	if (unlikely(!pcp))
		return false;
	__atomic_store_n(&page->order, (unsigned char)order, __ATOMIC_RELAXED);
	page_set_flag(page, PG_pcp);
	list_add(&page->buddy_list, &pcp->lists[order_to_pindex(mt, order)]);
	pcp_add_count(pcp, 1 << order);
	__count_vm_events(&pcp->vm, PGFREE, 1UL << order);
	if (unlikely(pcp_read_count(pcp) >= pcp->high))
		pcp_free_overflow(pcp);
	return true;
}

/* This thread's pcp, created on first use; NULL once the thread is exiting. */
struct per_cpu_pages *pcp_get(void);
/* Refill this thread's list from the buddy lists and take one page. */
struct page *pcp_alloc_refill(struct zone *zone, struct per_cpu_pages *pcp,
			      unsigned int order, int mt, unsigned int alloc_flags);
/* Return all of this thread's pcp pages; true if there were any. */
bool pcp_drain_local(void);
void pcp_count_events(enum vm_event_item item, unsigned long n);
int pcp_init(void);

/* For /proc/zoneinfo: call @fn for every live pcp under the registry lock. */
void pcp_for_each(void (*fn)(const struct per_cpu_pages *pcp, void *arg), void *arg);

#endif /* KMEM_PCP_H */
