// SPDX-License-Identifier: MIT
/*
 * The buddy allocator: free lists per order and migratetype, splitting,
 * merging with the free-to-tail heuristic, migratetype fallback with
 * pageblock claiming, and the public alloc/free API (watermarks:
 * watermark.c).
 *
 * Locking: zone->lock protects the free lists, nr_free and pageblock types.
 * The per-thread page lists (pcp.c) serve orders <= PAGE_ALLOC_COSTLY_ORDER
 * without any lock.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "core/boot.h"
#include "core/cmdline.h"
#include "page_alloc/mm.h"
#include "page_alloc/pcp.h"

const char *const migratetype_names[MIGRATE_TYPES] = {
	"Unmovable", "Movable", "Reclaimable", "HighAtomic", "Isolate",
};

struct zone zone_normal = {
	.lock = KMEM_LOCK_INIT,
	.report_lock = KMEM_LOCK_INIT,
	.name = "Normal",
};

bool tail_placement = true;
kmem_param("page_alloc.tail_placement", tail_placement, bool,
	   "free-to-tail heuristic for blocks whose order+1 buddy is free (buddy free-to-tail)");

/* ---- free lists ---------------------------------------------------- */

/* Under zone->lock; read without it by page_reporting_wanted(). */
static inline void account_unreported_high(struct zone *zone, long delta)
{
	__atomic_store_n(&zone->nr_unreported_high, zone->nr_unreported_high + delta,
			 __ATOMIC_RELAXED);
}

static void add_to_free_list(struct page *page, struct zone *zone,
			     unsigned int order, int mt, bool tail)
{
	struct free_area *area = &zone->free_area[order];

	set_buddy_order(page, order);
	page_set_flag(page, PG_buddy);
	if (tail)
		list_add_tail(&page->buddy_list, &area->free_list[mt]);
	else
		list_add(&page->buddy_list, &area->free_list[mt]);
	area_count(&area->nr_free, 1);
	area_count(&area->nr_free_mt[mt], 1);
	mod_zone_page_state(NR_FREE_PAGES, 1L << order);
	if (PageReported(page))
		mod_zone_page_state(NR_FREE_REPORTED, 1L << order);
	else if (order >= page_reporting_order)
		account_unreported_high(zone, 1L << order);
}

/* Leaves PG_reported alone: the caller knows whether the memory is still zero. */
static void del_page_from_free_list(struct page *page, struct zone *zone,
				    unsigned int order, int mt)
{
	struct free_area *area = &zone->free_area[order];

	list_del(&page->buddy_list);
	page_clear_flag(page, PG_buddy);
	set_buddy_order(page, 0);
	area_count(&area->nr_free, -1);
	area_count(&area->nr_free_mt[mt], -1);
	mod_zone_page_state(NR_FREE_PAGES, -(1L << order));
	if (PageReported(page))
		mod_zone_page_state(NR_FREE_REPORTED, -(1L << order));
	else if (order >= page_reporting_order)
		account_unreported_high(zone, -(1L << order));
}

static void move_to_free_list(struct page *page, struct zone *zone,
			      unsigned int order, int old_mt, int new_mt)
{
	struct free_area *area = &zone->free_area[order];

	list_move_tail(&page->buddy_list, &area->free_list[new_mt]);
	area_count(&area->nr_free_mt[old_mt], -1);
	area_count(&area->nr_free_mt[new_mt], 1);
}

static inline bool page_is_buddy(const struct page *buddy, unsigned int order)
{
	return PageBuddy(buddy) && buddy_order(buddy) == order;
}

/*
 * Buddy free-to-tail (Zoccolo, Gorman 2010): the block we just placed could not merge, but if the buddy of
 * the combined (order+1) block is free, freeing our missing buddy would merge
 * twice.  Keep such a block at the tail so it is handed out last.  The check
 * needs an order+1 buddy below MAX_PAGE_ORDER, hence the cut-off.
 */
static bool buddy_merge_likely(unsigned long pfn, struct page *page, unsigned int order)
{
	if (order >= MAX_PAGE_ORDER - 1)
		return false;
	unsigned long higher_pfn = pfn & ~(1UL << order);
	unsigned long higher_buddy_pfn = higher_pfn ^ (1UL << (order + 1));

	return page_is_buddy(page + (higher_buddy_pfn - pfn), order + 1);
}

static void change_pageblock_range(struct page *page, unsigned int order, int mt)
{
	unsigned long nr = order >= pageblock_order ? 1UL << (order - pageblock_order) : 1;

	for (unsigned long i = 0; i < nr; i++)
		set_pageblock_migratetype(page + (i << pageblock_order), mt);
}

void __free_one_page(struct page *page, unsigned long pfn, struct zone *zone,
		     unsigned int order, int mt, unsigned int fpi)
{
	bool reported = fpi & FPI_REPORTED;

	page_clear_flag(page, PG_reported);
	while (order < MAX_PAGE_ORDER) {
		unsigned long buddy_pfn = pfn ^ (1UL << order);
		struct page *buddy = page + (buddy_pfn - pfn);

		if (!page_is_buddy(buddy, order))
			break;
		int buddy_mt = get_pageblock_migratetype(buddy);
		if (buddy_mt != mt &&
		    (mt == MIGRATE_ISOLATE || buddy_mt == MIGRATE_ISOLATE))
			break;
		del_page_from_free_list(buddy, zone, order, buddy_mt);
		/* Merging whole pageblocks of other types: the buddy takes ours,
		 * so a later split puts every piece on the right list. */
		if (buddy_mt != mt)
			change_pageblock_range(buddy, order, mt);
		reported = reported && PageReported(buddy);
		page_clear_flag(buddy, PG_reported);

		unsigned long combined_pfn = buddy_pfn & pfn;
		page = page + (combined_pfn - pfn);
		pfn = combined_pfn;
		order++;
	}

	if (reported)
		page_set_flag(page, PG_reported);

	bool to_tail;
	if (fpi & FPI_TO_TAIL)
		to_tail = true;
	else
		to_tail = tail_placement && buddy_merge_likely(pfn, page, order);
	add_to_free_list(page, zone, order, mt, to_tail);

	if (!reported && order >= page_reporting_order &&
	    !__atomic_load_n(&zone->report_pending, __ATOMIC_RELAXED)) {
		__atomic_store_n(&zone->report_since_ns, os_now_ns(), __ATOMIC_RELAXED);
		__atomic_store_n(&zone->report_pending, true, __ATOMIC_RELAXED);
	}
}

/*
 * Split a block of order @high down to @low, returning the upper halves to
 * the free lists.  Halves of a reported block are still untouched memory:
 * they stay reported, and go to the tail like every reported block.
 */
static void expand(struct zone *zone, struct page *page, unsigned int low,
		   unsigned int high, int mt)
{
	unsigned long size = 1UL << high;
	bool reported = PageReported(page);

	while (high > low) {
		high--;
		size >>= 1;
		struct page *half = page + size;
		if (reported)
			page_set_flag(half, PG_reported);
		add_to_free_list(half, zone, high, mt, reported);
	}
}

static struct page *get_page_from_free_area(struct free_area *area, int mt)
{
	if (list_empty(&area->free_list[mt]))
		return NULL;
	return list_first_entry(&area->free_list[mt], struct page, buddy_list);
}

static struct page *__rmqueue_smallest(struct zone *zone, unsigned int order, int mt)
{
	for (unsigned int cur = order; cur < NR_PAGE_ORDERS; cur++) {
		struct page *page = get_page_from_free_area(&zone->free_area[cur], mt);
		if (!page)
			continue;
		del_page_from_free_list(page, zone, cur, mt);
		expand(zone, page, order, cur, mt);
		return page;
	}
	return NULL;
}

/* ---- migratetype fallback ------------------------------------------ */

static const int fallbacks[MIGRATE_PCPTYPES][MIGRATE_PCPTYPES - 1] = {
	[MIGRATE_UNMOVABLE]   = { MIGRATE_RECLAIMABLE, MIGRATE_MOVABLE },
	[MIGRATE_MOVABLE]     = { MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE },
	[MIGRATE_RECLAIMABLE] = { MIGRATE_UNMOVABLE, MIGRATE_MOVABLE },
};

/*
 * May an allocation of @start_mt that found a free block of @order in
 * another type's list take over that block's whole pageblock?  Large blocks
 * always; unmovable and reclaimable allocations eagerly, because scattering
 * them pollutes more pageblocks than claiming one.
 */
static bool can_claim_block(unsigned int order, int start_mt)
{
	if (order >= pageblock_order / 2)
		return true;
	return start_mt == MIGRATE_RECLAIMABLE || start_mt == MIGRATE_UNMOVABLE;
}

static int find_suitable_fallback(struct free_area *area, int start_mt)
{
	if (!area->nr_free)
		return -1;
	for (int i = 0; i < MIGRATE_PCPTYPES - 1; i++) {
		int mt = fallbacks[start_mt][i];
		if (!list_empty(&area->free_list[mt]))
			return mt;
	}
	return -1;
}

static inline unsigned int page_alloc_order(const struct page *page)
{
	return __atomic_load_n(&page->order, __ATOMIC_RELAXED);
}

static inline int page_alloc_mt(const struct page *page)
{
	return __atomic_load_n(&page->alloc_mt, __ATOMIC_RELAXED);
}

/* Free and movable-allocated pages in the pageblock starting at @start_pfn. */
static void count_pageblock(unsigned long start_pfn, unsigned long *free_pages,
			    unsigned long *movable_pages)
{
	unsigned long end = start_pfn + pageblock_nr_pages, pfn = start_pfn;

	*free_pages = *movable_pages = 0;
	while (pfn < end) {
		struct page *page = __pfn_to_page(pfn);

		if (PageBuddy(page)) {
			*free_pages += 1UL << buddy_order(page);
			pfn += 1UL << buddy_order(page);
		} else if (page_ref_count(page) > 0 || PagePcp(page)) {
			unsigned long n = 1UL << page_alloc_order(page);
			if (!PagePcp(page) && page_alloc_mt(page) == MIGRATE_MOVABLE)
				*movable_pages += n;
			pfn += n;
		} else {
			pfn++;
		}
	}
}

static void move_freepages_block(struct zone *zone, unsigned long start_pfn,
				 int old_mt, int new_mt)
{
	unsigned long end = start_pfn + pageblock_nr_pages, pfn = start_pfn;

	while (pfn < end) {
		struct page *page = __pfn_to_page(pfn);

		if (PageBuddy(page)) {
			unsigned int order = buddy_order(page);
			move_to_free_list(page, zone, order, old_mt, new_mt);
			pfn += 1UL << order;
		} else {
			pfn++;
		}
	}
	set_pageblock_migratetype(__pfn_to_page(start_pfn), new_mt);
}

static struct page *try_to_claim_block(struct zone *zone, struct page *page,
				       unsigned int cur, unsigned int order,
				       int start_mt, int block_mt)
{
	if (cur >= pageblock_order) {
		del_page_from_free_list(page, zone, cur, block_mt);
		change_pageblock_range(page, cur, start_mt);
		expand(zone, page, order, cur, start_mt);
		count_vm_events_global(EXTFRAG_CLAIM, 1);
		return page;
	}

	unsigned long start_pfn = __page_to_pfn(page) & ~(pageblock_nr_pages - 1);
	unsigned long free_pages, movable_pages, alike_pages;

	count_pageblock(start_pfn, &free_pages, &movable_pages);
	if (start_mt == MIGRATE_MOVABLE)
		alike_pages = movable_pages;
	else if (block_mt == MIGRATE_MOVABLE)
		/* Everything not movable counts as alike for a non-movable request. */
		alike_pages = pageblock_nr_pages - (free_pages + movable_pages);
	else
		alike_pages = 0;

	if (free_pages && free_pages + alike_pages >= pageblock_nr_pages / 2) {
		move_freepages_block(zone, start_pfn, block_mt, start_mt);
		count_vm_events_global(EXTFRAG_CLAIM, 1);
		return __rmqueue_smallest(zone, order, start_mt);
	}
	return NULL;
}

static struct page *__rmqueue_fallback(struct zone *zone, unsigned int order, int start_mt)
{
	struct page *page;
	int cur, mt;

	/* Largest first: claiming a big block keeps types grouped by pageblock. */
	for (cur = MAX_PAGE_ORDER; cur >= (int)order; cur--) {
		mt = find_suitable_fallback(&zone->free_area[cur], start_mt);
		if (mt < 0)
			continue;
		if (!can_claim_block(cur, start_mt))
			break;
		page = get_page_from_free_area(&zone->free_area[cur], mt);
		page = try_to_claim_block(zone, page, cur, order, start_mt, mt);
		if (page)
			goto out;
	}

	/* Steal the smallest block that fits, leaving its pageblock's type alone. */
	for (cur = order; cur < NR_PAGE_ORDERS; cur++) {
		mt = find_suitable_fallback(&zone->free_area[cur], start_mt);
		if (mt < 0)
			continue;
		page = get_page_from_free_area(&zone->free_area[cur], mt);
		del_page_from_free_list(page, zone, cur, mt);
		expand(zone, page, order, cur, mt);
		goto out;
	}
	return NULL;
out:
	count_vm_events_global(EXTFRAG_FALLBACK, 1);
	return page;
}

struct page *__rmqueue(struct zone *zone, unsigned int order, int mt)
{
	struct page *page = __rmqueue_smallest(zone, order, mt);

	if (unlikely(!page) && mt < MIGRATE_PCPTYPES)
		page = __rmqueue_fallback(zone, order, mt);
	return page;
}

int rmqueue_bulk(struct zone *zone, unsigned int order, int count,
		 struct list_head *list, int mt, unsigned int alloc_flags)
{
	(void)alloc_flags;
	int i;

	for (i = 0; i < count; i++) {
		struct page *page = __rmqueue(zone, order, mt);
		if (!page)
			break;
		__atomic_store_n(&page->order, (unsigned char)order, __ATOMIC_RELAXED);
		page_set_flag(page, PG_pcp);
		list_add_tail(&page->buddy_list, list);
	}
	return i;
}

/* ---- bad input ----------------------------------------------------- */

static void current_comm(char comm[17])
{
	memset(comm, 0, 17);
	if (prctl(PR_GET_NAME, comm, 0, 0, 0))
		strcpy(comm, "?");
}

void bad_page(struct page *page, const char *reason)
{
	char comm[17];

	current_comm(comm);
	kmem_report("BUG: Bad page state in process %s  pfn:%05lx\n"
		    "page: refcount:%d order:%u pfn:%#lx flags: %#lx\n"
		    "page dumped because: %s\n",
		    comm, __page_to_pfn(page), page_ref_count(page),
		    page_alloc_order(page), __page_to_pfn(page), page_flags(page), reason);
}

static const struct { gfp_t mask; const char *name; } gfp_names[] = {
	{ GFP_HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE" },
	{ GFP_USER, "GFP_USER" },
	{ GFP_KERNEL, "GFP_KERNEL" },
	{ GFP_NOFS, "GFP_NOFS" },
	{ GFP_NOIO, "GFP_NOIO" },
	{ GFP_ATOMIC, "GFP_ATOMIC" },
	{ GFP_NOWAIT, "GFP_NOWAIT" },
	{ __GFP_ZERO, "__GFP_ZERO" },
	{ __GFP_COMP, "__GFP_COMP" },
	{ __GFP_MOVABLE, "__GFP_MOVABLE" },
	{ __GFP_RECLAIMABLE, "__GFP_RECLAIMABLE" },
	{ __GFP_HIGH, "__GFP_HIGH" },
	{ __GFP_NOWARN, "__GFP_NOWARN" },
	{ __GFP_NOFAIL, "__GFP_NOFAIL" },
	{ __GFP_NORETRY, "__GFP_NORETRY" },
	{ __GFP_RETRY_MAYFAIL, "__GFP_RETRY_MAYFAIL" },
	{ __GFP_NOMEMALLOC, "__GFP_NOMEMALLOC" },
	{ __GFP_ACCOUNT, "__GFP_ACCOUNT" },
	{ __GFP_IO, "__GFP_IO" },
	{ __GFP_FS, "__GFP_FS" },
	{ __GFP_DIRECT_RECLAIM, "__GFP_DIRECT_RECLAIM" },
	{ __GFP_KSWAPD_RECLAIM, "__GFP_KSWAPD_RECLAIM" },
};

/* The kernel's %pGg: "GFP_KERNEL|__GFP_ZERO". */
void format_gfp(char *buf, size_t size, gfp_t gfp)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(gfp_names) / sizeof(gfp_names[0]) && gfp; i++) {
		if ((gfp & gfp_names[i].mask) != gfp_names[i].mask)
			continue;
		int n = snprintf(buf + len, size - len, "%s%s", len ? "|" : "", gfp_names[i].name);
		if (n < 0 || (size_t)n >= size - len)
			break;
		len += (size_t)n;
		gfp &= ~gfp_names[i].mask;
	}
	if (gfp && len < size)
		snprintf(buf + len, size - len, "%s%#x", len ? "|" : "", gfp);
}

static void warn_alloc(gfp_t gfp, unsigned int order)
{
	struct zone *z = &zone_normal;
	char comm[17], flags[192];
	unsigned long nr[NR_PAGE_ORDERS];
	unsigned long total = 0;

	current_comm(comm);
	format_gfp(flags, sizeof(flags), gfp);
	kmem_lock(&z->lock);
	for (int o = 0; o < NR_PAGE_ORDERS; o++) {
		nr[o] = z->free_area[o].nr_free;
		total += nr[o] << o;
	}
	kmem_unlock(&z->lock);

	char line[512];
	size_t len = 0;
	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%lu*%lukB ",
					nr[o], (PAGE_SIZE >> 10) << o);
	printk("%s: page allocation failure: order:%u, mode:%#x(%s), nodemask=(null)\n"
	       "Mem-Info:\n"
	       "Node 0 %s free:%lukB min:%lukB low:%lukB high:%lukB managed:%lukB\n"
	       "Node 0 %s: %s= %lukB\n",
	       comm, order, gfp, flags, z->name,
	       (unsigned long)zone_free_pages(z) << (PAGE_SHIFT - 10),
	       wmark_pages(z, WMARK_MIN) << (PAGE_SHIFT - 10),
	       wmark_pages(z, WMARK_LOW) << (PAGE_SHIFT - 10),
	       wmark_pages(z, WMARK_HIGH) << (PAGE_SHIFT - 10),
	       zone_managed_pages(z) << (PAGE_SHIFT - 10),
	       z->name, line, total << (PAGE_SHIFT - 10));
}

/* ---- allocation ---------------------------------------------------- */

static unsigned int gfp_to_alloc_flags(gfp_t gfp)
{
	unsigned int flags = ALLOC_WMARK_MIN;

	if (gfp & __GFP_HIGH)
		flags |= ALLOC_MIN_RESERVE;
	if (!(gfp & (__GFP_DIRECT_RECLAIM | __GFP_NOMEMALLOC)))
		flags |= ALLOC_NON_BLOCK;
	return flags;
}

static struct page *rmqueue_buddy(struct zone *zone, unsigned int order, int mt)
{
	kmem_lock(&zone->lock);
	struct page *page = __rmqueue(zone, order, mt);
	kmem_unlock(&zone->lock);
	return page;
}

static struct page *get_page_from_freelist(gfp_t gfp, unsigned int order,
					   unsigned int alloc_flags, bool use_pcp)
{
	struct zone *zone = &zone_normal;
	unsigned long mark = wmark_pages(zone, alloc_flags & ALLOC_WMARK_MASK);
	int mt = gfp_migratetype(gfp);

	if (!zone_watermark_ok(zone, order, mark, alloc_flags, zone_free_pages(zone)))
		return NULL;
	if (use_pcp && order <= PAGE_ALLOC_COSTLY_ORDER) {
		struct per_cpu_pages *pcp = pcp_get();
		if (pcp)
			return pcp_alloc_refill(zone, pcp, order, mt, alloc_flags);
	}
	return rmqueue_buddy(zone, order, mt);
}

static void wait_for_reporting(struct zone *zone)
{
	kmem_lock(&zone->report_lock);
	kmem_unlock(&zone->report_lock);
}

/*
 * Growing memory is not reclaim: it brings online memory a kernel would
 * have had all along, so any request may grow it, GFP_ATOMIC and a bare
 * __GFP_NOFAIL included.  Except a quiet try, one that asks for neither
 * direct reclaim nor retries (SLUB's try at a slab's preferred order): it
 * gets only what is free, as in the kernel, where such a try fails when
 * memory is fragmented and the slab falls back to its minimum order.
 * Growing memory for it would leave the fragments unused and raise the
 * resident size by the whole slab.  Nor does it drain the pcp lists.
 */
static inline bool quiet_try(gfp_t gfp)
{
	return (gfp & (__GFP_NORETRY | __GFP_DIRECT_RECLAIM)) == __GFP_NORETRY;
}

/*
 * No reclaim yet: what the kernel's slow path gets from kswapd and direct
 * reclaim, kmem gets from growing memory (when mem= did not fix its size),
 * from dipping into the reserves, and from this thread's pcp pages.
 */
static struct page *__alloc_pages_slowpath(gfp_t gfp, unsigned int order, bool use_pcp)
{
	struct zone *zone = &zone_normal;
	unsigned int alloc_flags = gfp_to_alloc_flags(gfp);
	bool may_grow = !quiet_try(gfp);
	unsigned long seen = mm_grow_seq();
	struct page *page;

	/*
	 * Memory may have grown since the attempt that brought us here
	 * failed: retry once with the growth sequence read first, so that
	 * threads failing together grow it once (mm_try_grow() only retries
	 * if the sequence moved meanwhile).
	 */
	if (may_grow && mm_growable() &&
	    (page = get_page_from_freelist(gfp, order, ALLOC_WMARK_LOW, use_pcp)))
		return page;

	for (int attempt = 0; attempt < 4; attempt++) {
		/*
		 * Blocks isolated for reporting come back in microseconds;
		 * memory grown for them would stay for good.
		 */
		if (atomic_load_explicit(&zone->nr_isolated_report, memory_order_acquire)) {
			wait_for_reporting(zone);
			page = get_page_from_freelist(gfp, order, ALLOC_WMARK_LOW, use_pcp);
			if (page)
				return page;
		}
		if (may_grow && mm_try_grow(order, &seen)) {
			page = get_page_from_freelist(gfp, order, ALLOC_WMARK_LOW, use_pcp);
			if (page)
				return page;
			attempt = 0;
			continue;
		}
		page = get_page_from_freelist(gfp, order, alloc_flags, use_pcp);
		if (page)
			return page;
		if (atomic_load_explicit(&zone->nr_isolated_report, memory_order_acquire)) {
			wait_for_reporting(zone);
			continue;
		}
		if (may_grow && pcp_drain_local())
			continue;
		break;
	}
	return NULL;
}

/*
 * __GFP_NOFAIL (kernel __alloc_pages_slowpath's nofail: label): the caller
 * cannot handle failure, so retry until memory comes back, with access to
 * half the min reserve as the kernel gives it.  With no reclaim, memory
 * comes back only when other threads free it (and, from their pcp lists,
 * only when those overflow or their threads exit), or when memory can grow
 * again.  A caller that is the only user of a full mem= waits forever, as
 * a kernel task would without the OOM killer: every 10 s it says so.
 */
#define NOFAIL_STALL_WARN_NS	(10ull * 1000000000ull)

static struct page *__alloc_pages_nofail(gfp_t gfp, unsigned int order, bool use_pcp)
{
	unsigned int alloc_flags = gfp_to_alloc_flags(gfp) | ALLOC_MIN_RESERVE;
	unsigned long long start = os_now_ns(), warn_at = start + NOFAIL_STALL_WARN_NS;
	unsigned int backoff_us = 10;
	struct page *page;

	/* The kernel's WARN_ON_ONCE: costly orders may never be satisfied. */
	static atomic_bool warned_costly;
	if (order > 1 && !atomic_exchange(&warned_costly, true))
		kmem_warn("mm/page_alloc.c:__alloc_pages_slowpath",
			  "__GFP_NOFAIL allocation of order %u: it may never succeed\n", order);
	for (;;) {
		page = get_page_from_freelist(gfp, order, alloc_flags, use_pcp);
		if (page || (page = __alloc_pages_slowpath(gfp, order, use_pcp)))
			return page;
		unsigned long long now = os_now_ns();
		if (now >= warn_at) {
			char comm[17];
			current_comm(comm);
			printk("%s: page allocation stalls for %llums, order:%u, mode:%#x "
			       "(__GFP_NOFAIL: retrying)\n",
			       comm, (now - start) / 1000000, order, gfp);
			warn_at = now + NOFAIL_STALL_WARN_NS;
		}
		os_sleep_us(backoff_us);
		if (backoff_us < 10000)
			backoff_us *= 2;
	}
}

static inline void prep_compound_page(struct page *page, unsigned int order)
{
	unsigned long nr = 1UL << order;

	page_set_flag(page, PG_head);
	for (unsigned long i = 1; i < nr; i++)
		__atomic_store_n(&page[i].compound_head, (unsigned long)page + 1, __ATOMIC_RELAXED);
}

/* Returns whether the block was untouched since given back to the OS (reads as zeroes). */
static inline bool prep_new_page(struct page *page, unsigned int order, gfp_t gfp)
{
	bool zeroed = PageReported(page);

	__atomic_store_n(&page->flags, 0UL, __ATOMIC_RELAXED);
	__atomic_store_n(&page->order, (unsigned char)order, __ATOMIC_RELAXED);
	__atomic_store_n(&page->alloc_mt, (unsigned char)gfp_migratetype(gfp), __ATOMIC_RELAXED);
	set_page_count(page, 1);
	if ((gfp & __GFP_COMP) && order)
		prep_compound_page(page, order);
	if ((gfp & __GFP_ZERO) && !zeroed)
		memset(__page_address(page), 0, PAGE_SIZE << order);
	return zeroed;
}

/* @untouched: if not NULL, gets prep_new_page()'s answer. */
static struct page *__alloc_pages_noprof(gfp_t gfp, unsigned int order, bool use_pcp,
					 bool *untouched)
{
	if (unlikely(order > MAX_PAGE_ORDER)) {
		if (!(gfp & __GFP_NOWARN))
			kmem_warn("mm/page_alloc.c:__alloc_pages",
				  "invalid order %u (MAX_PAGE_ORDER is %d), gfp %#x\n",
				  order, MAX_PAGE_ORDER, gfp);
		return NULL;
	}
	if (unlikely(kmem_boot()))
		return NULL;

	struct page *page = get_page_from_freelist(gfp, order, ALLOC_WMARK_LOW, use_pcp);
	if (!page)
		page = __alloc_pages_slowpath(gfp, order, use_pcp);
	if (unlikely(!page) && (gfp & __GFP_NOFAIL))
		page = __alloc_pages_nofail(gfp, order, use_pcp);
	if (unlikely(!page)) {
		count_vm_events_global(PGALLOC_FAIL, 1);
		if (!(gfp & __GFP_NOWARN))
			warn_alloc(gfp, order);
		return NULL;
	}
	pcp_count_events(PGALLOC_NORMAL, 1UL << order);
	bool zeroed = prep_new_page(page, order, gfp);
	if (untouched)
		*untouched = zeroed;
	return page;
}

/* For allocator metadata: never parks pages on this thread's pcp lists. */
struct page *alloc_pages_nopcp(gfp_t gfp, unsigned int order)
{
	return __alloc_pages_noprof(gfp, order, false, NULL);
}

__attribute__((noinline)) static struct page *alloc_pages_slow(gfp_t gfp, unsigned int order)
{
	return __alloc_pages_noprof(gfp, order, true, NULL);
}

/*
 * GFP bits <kmem/gfp.h> does not define: a caller's bug (a flag of another
 * API, a stray value).  Reported once per call site (the first 16 sites,
 * then once for all others), then dropped: the allocation goes on with the
 * bits that mean something, as the kernel's gfp_allowed_mask drops some.
 */
static __attribute__((noinline, cold)) gfp_t bad_gfp(gfp_t gfp, unsigned long caller)
{
	static unsigned long sites[16];
	static bool others_reported;
	static kmem_lock_t lock = KMEM_LOCK_INIT;
	bool seen = false;
	unsigned int i;

	kmem_lock(&lock);
	for (i = 0; i < 16 && sites[i] && !seen; i++)
		seen = sites[i] == caller;
	if (!seen && i < 16) {
		sites[i] = caller;
	} else if (!seen) {
		seen = others_reported;
		others_reported = true;
	}
	kmem_unlock(&lock);
	if (!seen)
		kmem_warn("mm/page_alloc.c:alloc_pages", "Unsupported GFP flags %#x (undefined bits %#x) "
			  "from %#lx; they are ignored\n", gfp, gfp & ~__GFP_BITS_MASK, caller);
	return gfp & __GFP_BITS_MASK;
}

KMEM_API struct page *alloc_pages(gfp_t gfp, unsigned int order)
{
	if (unlikely(gfp & ~__GFP_BITS_MASK))
		gfp = bad_gfp(gfp, (unsigned long)__builtin_return_address(0));
	if (likely(order <= PAGE_ALLOC_COSTLY_ORDER)) {
		struct page *page = pcp_alloc_fast(order, gfp_migratetype(gfp));
		if (likely(page)) {
			prep_new_page(page, order, gfp);
			return page;
		}
	}
	return alloc_pages_slow(gfp, order);
}

struct page *__alloc_pages_untouched(gfp_t gfp, unsigned int order, bool *untouched)
{
	if (likely(order <= PAGE_ALLOC_COSTLY_ORDER)) {
		struct page *page = pcp_alloc_fast(order, gfp_migratetype(gfp));
		if (likely(page)) {
			*untouched = prep_new_page(page, order, gfp);
			return page;
		}
	}
	return __alloc_pages_noprof(gfp, order, true, untouched);
}

/* ---- freeing ------------------------------------------------------- */

static bool page_in_memory(const struct page *page)
{
	return page >= mm_model.mem_map &&
	       (unsigned long)(page - mm_model.mem_map) < mm_online_pages();
}

/* Checks and clears a block being freed; false means refuse the free. */
static inline bool free_pages_prepare(struct page *page, unsigned int order)
{
	if (unlikely(order > MAX_PAGE_ORDER)) {
		kmem_warn("mm/page_alloc.c:__free_pages",
			  "invalid order %u (MAX_PAGE_ORDER is %d) for pfn %#lx\n",
			  order, MAX_PAGE_ORDER,
			  page_in_memory(page) ? __page_to_pfn(page) : 0UL);
		return false;
	}
	if (unlikely(page_ref_count(page) != 1 || page_alloc_order(page) != order ||
		     (page_flags(page) & ~(1UL << PG_head)))) {
		if (page_ref_count(page) == 0)
			bad_page(page, PageBuddy(page) || PagePcp(page) ?
				 "double free: the page is already free" :
				 "freeing a page that is not the start of an allocation");
		else if (page_ref_count(page) != 1)
			bad_page(page, "nonzero _refcount");
		else if (page_alloc_order(page) != order)
			bad_page(page, "freed with a different order than it was allocated with");
		else
			bad_page(page, "page still in use by a slab or kmalloc");
		return false;
	}
	if (PageHead(page)) {
		for (unsigned long i = 1; i < (1UL << order); i++)
			__atomic_store_n(&page[i].compound_head, 0UL, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&page->flags, 0UL, __ATOMIC_RELAXED);
	set_page_count(page, 0);
	return true;
}

void free_one_page(struct zone *zone, struct page *page, unsigned int order)
{
	unsigned long pfn = __page_to_pfn(page);

	kmem_lock(&zone->lock);
	__free_one_page(page, pfn, zone, order, get_pageblock_migratetype(page), FPI_NONE);
	kmem_unlock(&zone->lock);
	if (page_reporting_wanted(zone))
		page_reporting_process(zone);
}

__attribute__((noinline)) static void free_pages_slow(struct page *page, unsigned int order)
{
	pcp_count_events(PGFREE, 1UL << order);
	__atomic_store_n(&page->order, 0, __ATOMIC_RELAXED);
	free_one_page(&zone_normal, page, order);
}

bool __free_pages_prepare(struct page *page, unsigned int order)
{
	return free_pages_prepare(page, order);
}

void __free_prepared(struct page *page, unsigned int order, unsigned int fpi)
{
	if (!(fpi & FPI_REPORTED)) {
		if (likely(order <= PAGE_ALLOC_COSTLY_ORDER) &&
		    likely(pcp_free_fast(page, order, get_pageblock_migratetype(page))))
			return;
		free_pages_slow(page, order);
		return;
	}
	/* Untouched memory: straight to the buddy lists, still reported (no pcp list keeps that). */
	struct zone *zone = &zone_normal;

	pcp_count_events(PGFREE, 1UL << order);
	__atomic_store_n(&page->order, 0, __ATOMIC_RELAXED);
	kmem_lock(&zone->lock);
	__free_one_page(page, __page_to_pfn(page), zone, order, get_pageblock_migratetype(page), fpi);
	kmem_unlock(&zone->lock);
	/* It may have merged with unreported buddies into a block to report. */
	if (page_reporting_wanted(zone))
		page_reporting_process(zone);
}

KMEM_API void __free_pages(struct page *page, unsigned int order)
{
	if (unlikely(!page_in_memory(page))) {
		kmem_warn("mm/page_alloc.c:__free_pages",
			  "freeing struct page %p, which is not kmem's memory map\n", (void *)page);
		return;
	}
	if (!free_pages_prepare(page, order))
		return;
	if (likely(order <= PAGE_ALLOC_COSTLY_ORDER) &&
	    likely(pcp_free_fast(page, order, get_pageblock_migratetype(page))))
		return;
	free_pages_slow(page, order);
}

KMEM_API unsigned long __get_free_pages(gfp_t gfp, unsigned int order)
{
	struct page *page = alloc_pages(gfp, order);

	return page ? (unsigned long)__page_address(page) : 0;
}

KMEM_API unsigned long get_zeroed_page(gfp_t gfp)
{
	return __get_free_pages(gfp | __GFP_ZERO, 0);
}

KMEM_API void free_pages(unsigned long addr, unsigned int order)
{
	if (!addr)
		return;
	if (unlikely(!virt_addr_valid((void *)addr) || (addr & ~PAGE_MASK))) {
		kmem_warn("mm/page_alloc.c:free_pages",
			  "free_pages(%#lx, %u): address is not a page kmem manages\n", addr, order);
		return;
	}
	__free_pages(__virt_to_page((void *)addr), order);
}
