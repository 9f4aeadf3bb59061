// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "core/boot.h"
#include "page_alloc/metapool.h"
#include "page_alloc/pcp.h"

__thread struct per_cpu_pages *this_pcp __attribute__((tls_model("initial-exec")));

enum { PCP_NONE, PCP_LIVE, PCP_DEAD };
static __thread int pcp_state __attribute__((tls_model("initial-exec")));

static pthread_key_t pcp_key;
static bool pcp_key_ok;		/* false: no key was left (pcp_init()) */
static kmem_lock_t pcp_registry_lock = KMEM_LOCK_INIT;
static struct list_head pcp_registry = LIST_HEAD_INIT(pcp_registry);
static struct metapool pcp_pool = METAPOOL_INIT(sizeof(struct per_cpu_pages));

void pcp_count_events(enum vm_event_item item, unsigned long n)
{
	struct per_cpu_pages *pcp = this_pcp;

	if (pcp)
		__count_vm_events(&pcp->vm, item, n);
	else
		count_vm_events_global(item, n);
}

static void pcp_update_sizes(struct per_cpu_pages *pcp)
{
	pcp->high = atomic_load_explicit(&zone_normal.pageset_high, memory_order_relaxed);
	pcp->batch = atomic_load_explicit(&zone_normal.pageset_batch, memory_order_relaxed);
}

/*
 * Give @count pages back to the buddy lists, oldest first (list tails),
 * taking the lists round-robin so no order or type is starved.
 */
static void free_pcppages_bulk(struct zone *zone, int count, struct per_cpu_pages *pcp)
{
	int pindex = pcp->free_rr, freed = 0;

	kmem_lock(&zone->lock);
	while (count > 0 && pcp_read_count(pcp) > 0) {
		struct list_head *list;
		int tries = NR_PCP_LISTS;

		do {
			pindex = (pindex + 1) % NR_PCP_LISTS;
			list = &pcp->lists[pindex];
		} while (list_empty(list) && --tries);
		if (list_empty(list))
			break;

		unsigned int order = (unsigned int)pindex / MIGRATE_PCPTYPES;
		struct page *page = list_last_entry(list, struct page, buddy_list);
		list_del(&page->buddy_list);
		page_clear_flag(page, PG_pcp);
		pcp_add_count(pcp, -(1 << order));
		count -= 1 << order;
		freed += 1 << order;
		__free_one_page(page, __page_to_pfn(page), zone, order,
				get_pageblock_migratetype(page), FPI_NONE);
	}
	kmem_unlock(&zone->lock);
	pcp->free_rr = pindex;
	if (freed)
		__count_vm_events(&pcp->vm, PCP_DRAIN, 1);
	if (page_reporting_wanted(zone))
		page_reporting_process(zone);
}

void pcp_free_overflow(struct per_cpu_pages *pcp)
{
	pcp_update_sizes(pcp);
	if (pcp_read_count(pcp) >= pcp->high)
		free_pcppages_bulk(&zone_normal, pcp->batch, pcp);
}

struct page *pcp_alloc_refill(struct zone *zone, struct per_cpu_pages *pcp,
			      unsigned int order, int mt, unsigned int alloc_flags)
{
	struct list_head *list = &pcp->lists[order_to_pindex(mt, order)];

	pcp_update_sizes(pcp);
	if (list_empty(list)) {
		int batch = pcp->batch;
		if (order)
			batch = (batch >> order) > 2 ? batch >> order : 2;
		kmem_lock(&zone->lock);
		int n = rmqueue_bulk(zone, order, batch, list, mt, alloc_flags);
		kmem_unlock(&zone->lock);
		if (!n)
			return NULL;
		pcp_add_count(pcp, n << order);
		__count_vm_events(&pcp->vm, PCP_REFILL, 1);
	}
	struct page *page = list_first_entry(list, struct page, buddy_list);
	list_del(&page->buddy_list);
	pcp_add_count(pcp, -(1 << order));
	return page;
}

bool pcp_drain_local(void)
{
	struct per_cpu_pages *pcp = this_pcp;

	if (!pcp || !pcp_read_count(pcp))
		return false;
	free_pcppages_bulk(&zone_normal, pcp_read_count(pcp), pcp);
	return true;
}

KMEM_API void drain_local_pages(void)
{
	pcp_drain_local();
}

/* Thread exit: every page goes back, counters fold into the global ones. */
static void pcp_thread_exit(void *arg)
{
	struct per_cpu_pages *pcp = arg;

	if (pcp_read_count(pcp))
		free_pcppages_bulk(&zone_normal, pcp_read_count(pcp), pcp);
	kmem_lock(&pcp_registry_lock);
	list_del(&pcp->node);
	kmem_unlock(&pcp_registry_lock);
	vm_events_unregister(&pcp->vm);
	/* Whatever this thread frees from now on goes straight to the buddy lists. */
	this_pcp = NULL;
	pcp_state = PCP_DEAD;
	metapool_free(&pcp_pool, pcp);
}

struct per_cpu_pages *pcp_get(void)
{
	if (likely(this_pcp) || pcp_state == PCP_DEAD)
		return this_pcp;

	struct per_cpu_pages *pcp = metapool_alloc(&pcp_pool);
	if (!pcp)
		return NULL;
	memset(pcp, 0, sizeof(*pcp));
	for (int i = 0; i < NR_PCP_LISTS; i++)
		INIT_LIST_HEAD(&pcp->lists[i]);
	pcp_update_sizes(pcp);
	pcp->tid = os_gettid();
	vm_events_register(&pcp->vm);
	kmem_lock(&pcp_registry_lock);
	list_add_tail(&pcp->node, &pcp_registry);
	kmem_unlock(&pcp_registry_lock);
	/* Live before pthread_setspecific(), which may calloc() (keys >= 32). */
	pcp_state = PCP_LIVE;
	this_pcp = pcp;
	if (pcp_key_ok)
		pthread_setspecific(pcp_key, pcp);
	return pcp;
}

void pcp_for_each(void (*fn)(const struct per_cpu_pages *pcp, void *arg), void *arg)
{
	struct per_cpu_pages *pcp;

	kmem_lock(&pcp_registry_lock);
	list_for_each_entry(pcp, &pcp_registry, node)
		fn(pcp, arg);
	kmem_unlock(&pcp_registry_lock);
}

/*
 * A program that used up every pthread key before kmem booted still gets
 * memory: only a thread's pcp pages then stay on its lists when it exits.
 */
int pcp_init(void)
{
	if (os_thread_exit_key_create(&pcp_key, pcp_thread_exit)) {
		pr_warn("no pthread key left: a thread's per-cpu page lists are not drained when it exits\n");
		return 0;
	}
	pcp_key_ok = true;
	return 0;
}

/*
 * After fork() only the forking thread exists in the child; the pages on
 * other threads' pcp lists stay with their dead owners (a bounded leak:
 * at most pcp high each).
 */
void pcp_fork_prepare(void)
{
	kmem_lock(&pcp_registry_lock);
	kmem_lock(&pcp_pool.lock);
}

void pcp_fork_parent(void)
{
	kmem_unlock(&pcp_pool.lock);
	kmem_unlock(&pcp_registry_lock);
}

void pcp_fork_child(void)
{
	kmem_lock_init(&pcp_pool.lock);
	kmem_lock_init(&pcp_registry_lock);
}
