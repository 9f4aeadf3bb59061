// SPDX-License-Identifier: MIT
/*
 * Free page reporting: when a free block of page_reporting_order (a
 * pageblock, 2 MiB) or more forms, its memory goes back to the OS with
 * MADV_DONTNEED and refaults as zeroes on reuse.  As in the kernel, blocks
 * are taken off the free lists while the OS is told (so no one can allocate
 * them meanwhile), then put back at the tail flagged PG_reported.
 */
#include "core/cmdline.h"
#include "page_alloc/mm.h"

bool page_reporting_enabled = true;
unsigned int page_reporting_order = pageblock_order;
unsigned long page_reporting_delay_ms = 1000;

kmem_param("page_reporting.enable", page_reporting_enabled, bool,
	   "give free blocks of page_reporting_order and more back to the OS");
kmem_param("page_reporting.page_reporting_order", page_reporting_order, uint,
	   "smallest free block order given back to the OS (default 9: 2 MiB)");
kmem_param("page_reporting.delay_ms", page_reporting_delay_ms, ulong,
	   "how long a free block waits before it is given back (default 1000; 0: at once)");

void (*page_reporting_isolated_hook)(long nr_pages);

#define REPORT_BATCH 32
/* Reported blocks sit at list tails; stop looking after this many. */
#define REPORT_SCAN_MAX 256

/*
 * Isolated blocks are off the free lists while the OS is told: take only
 * what leaves the free pages above the high watermark, so that allocations
 * meanwhile pass theirs and do not grow memory for the moment (the kernel
 * checks low + a whole batch before a pass; kmem's mem= can be small).
 */
static int isolate_unreported(struct zone *zone, unsigned int min_order, struct page **pages,
			      unsigned int *orders)
{
	long room = global_zone_page_state(NR_FREE_PAGES) - (long)wmark_pages(zone, WMARK_HIGH);
	int n = 0;

	for (int order = MAX_PAGE_ORDER; order >= (int)min_order; order--) {
		for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
			struct list_head *list = &zone->free_area[order].free_list[mt];
			struct page *page;
			int scanned = 0;

			if (mt == MIGRATE_ISOLATE)
				continue;
			list_for_each_entry(page, list, buddy_list) {
				if (++scanned > REPORT_SCAN_MAX)
					break;
				if (PageReported(page))
					continue;
				if ((room -= 1L << order) < 0)
					return n;
				pages[n] = page;
				orders[n] = (unsigned int)order;
				if (++n == REPORT_BATCH)
					return n;
			}
		}
	}
	return n;
}

/* Report every unreported free block of @min_order or more (above the high watermark). */
static void report_pass(struct zone *zone, unsigned int min_order, bool wait)
{
	struct page *pages[REPORT_BATCH];
	unsigned int orders[REPORT_BATCH];

	/* One reporter at a time; the others' blocks will be found by it. */
	if (wait)
		kmem_lock(&zone->report_lock);
	else if (!kmem_trylock(&zone->report_lock))
		return;

	for (;;) {
		long nr_pages = 0;

		kmem_lock(&zone->lock);
		__atomic_store_n(&zone->report_pending, false, __ATOMIC_RELAXED);
		int n = isolate_unreported(zone, min_order, pages, orders);
		for (int i = 0; i < n; i++) {
			struct free_area *area = &zone->free_area[orders[i]];
			int mt = get_pageblock_migratetype(pages[i]);

			list_del(&pages[i]->buddy_list);
			page_clear_flag(pages[i], PG_buddy);
			area_count(&area->nr_free, -1);
			area_count(&area->nr_free_mt[mt], -1);
			mod_zone_page_state(NR_FREE_PAGES, -(1L << orders[i]));
			if (orders[i] >= page_reporting_order)
				__atomic_store_n(&zone->nr_unreported_high,
						 zone->nr_unreported_high - (1L << orders[i]),
						 __ATOMIC_RELAXED);
			nr_pages += 1L << orders[i];
		}
		atomic_fetch_add_explicit(&zone->nr_isolated_report, nr_pages, memory_order_release);
		kmem_unlock(&zone->lock);
		if (!n)
			break;
		if (page_reporting_isolated_hook)
			page_reporting_isolated_hook(nr_pages);

		unsigned int released = 0;	/* bitmap: which blocks the OS took */
		long released_pages = 0;
		for (int i = 0; i < n; i++) {
			if (!os_release(__page_address(pages[i]), PAGE_SIZE << orders[i])) {
				populate_forget(pages[i], orders[i]);
				released |= 1u << i;
				released_pages += 1L << orders[i];
			}
		}

		kmem_lock(&zone->lock);
		for (int i = 0; i < n; i++)
			__free_one_page(pages[i], __page_to_pfn(pages[i]), zone, orders[i],
					get_pageblock_migratetype(pages[i]),
					(released & (1u << i)) ? FPI_TO_TAIL | FPI_REPORTED : FPI_TO_TAIL);
		atomic_fetch_sub_explicit(&zone->nr_isolated_report, nr_pages, memory_order_release);
		kmem_unlock(&zone->lock);
		count_vm_events_global(PGREPORTED, (unsigned long)released_pages);
		/*
		 * Stop when the OS refuses (mlocked memory) or nothing more is
		 * pending.  A refusal also holds off the at-once rule for a
		 * delay: else every high-order free would run a pass of
		 * failing madvise calls under the zone lock.
		 */
		if (!released)
			__atomic_store_n(&zone->report_quiet_until_ns,
					 os_now_ns() + page_reporting_delay_ms * 1000000ull, __ATOMIC_RELAXED);
		if (n < REPORT_BATCH || !released)
			break;
	}
	kmem_unlock(&zone->report_lock);
}

void page_reporting_process(struct zone *zone)
{
	if (page_reporting_enabled && page_reporting_order <= MAX_PAGE_ORDER)
		report_pass(zone, page_reporting_order, false);
}

void page_reporting_flush(void)
{
	struct zone *zone = &zone_normal;

	if (page_reporting_enabled && __atomic_load_n(&zone->report_pending, __ATOMIC_RELAXED))
		page_reporting_process(zone);
}

void page_reporting_idle(unsigned int min_order)
{
	if (!page_reporting_enabled)
		return;
	if (min_order > page_reporting_order)
		min_order = page_reporting_order;
	if (min_order <= MAX_PAGE_ORDER)
		report_pass(&zone_normal, min_order, true);
}
