// SPDX-License-Identifier: MIT
/* Independent recount of the buddy allocator's state; see mm_check.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "page_alloc/mm.h"
#include "page_alloc/pcp.h"

#include "kt_util.h"
#include "mm_check.h"

#define MM_CHECK_MAX_REPORTS 20

static int nr_errors;

__attribute__((format(printf, 1, 2))) static void problem(const char *fmt, ...)
{
	va_list ap;

	if (++nr_errors > MM_CHECK_MAX_REPORTS)
		return;
	fprintf(stderr, "mm_check: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static inline void bit_set(unsigned char *map, unsigned long i)
{
	map[i >> 3] |= (unsigned char)(1u << (i & 7));
}

static inline int bit_test(const unsigned char *map, unsigned long i)
{
	return map[i >> 3] >> (i & 7) & 1;
}

/* Mark [idx, idx + nr) in @covered; complain about any page already marked. */
static void cover(unsigned char *covered, unsigned long idx, unsigned long nr, const char *what)
{
	for (unsigned long i = idx; i < idx + nr; i++) {
		if (bit_test(covered, i)) {
			problem("%s at page index %lu overlaps another free/pcp block (page %lu)",
				what, idx, i);
			return;
		}
		bit_set(covered, i);
	}
}

static void check_free_lists(struct zone *zone, unsigned long online, unsigned char *covered,
			     unsigned char *heads, struct mm_check_result *res)
{
	unsigned long free_pages = 0, reported = 0;

	for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++) {
		struct free_area *area = &zone->free_area[o];
		unsigned long total = 0;

		for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
			struct list_head *head = &area->free_list[mt], *pos;
			unsigned long count = 0;

			for (pos = head->next; pos != head; pos = pos->next) {
				if (count > online) {
					problem("free_list[order %u][%s] does not end (cycle?)",
						o, migratetype_names[mt]);
					break;
				}
				count++;
				struct page *page = list_entry(pos, struct page, buddy_list);
				if (page < mm_model.mem_map ||
				    (unsigned long)(page - mm_model.mem_map) >= online) {
					problem("free_list[order %u][%s] holds page %p outside memory",
						o, migratetype_names[mt], (void *)page);
					break;
				}
				unsigned long idx = (unsigned long)(page - mm_model.mem_map);
				unsigned long nr = 1UL << o;

				if (idx & (nr - 1))
					problem("free block at index %lu is not aligned to its order %u",
						idx, o);
				if (idx + nr > online) {
					problem("free block at index %lu order %u runs past memory", idx, o);
					break;
				}
				if (!PageBuddy(page))
					problem("free block at index %lu order %u lacks PG_buddy", idx, o);
				if (page_flags(page) & ~((1UL << PG_buddy) | (1UL << PG_reported)))
					problem("free block at index %lu order %u has flags %#lx",
						idx, o, page_flags(page));
				if (buddy_order(page) != o)
					problem("free block at index %lu on the order-%u list says order %u",
						idx, o, buddy_order(page));
				if (page_ref_count(page) != 0)
					problem("free block at index %lu has refcount %d",
						idx, page_ref_count(page));
				if (PageTail(page))
					problem("free block at index %lu still has a compound head", idx);
				/* Every pageblock the block covers has the list's type. */
				unsigned long pb_step = nr < pageblock_nr_pages ? nr : pageblock_nr_pages;
				for (unsigned long i = 0; i < nr; i += pb_step) {
					int pb_mt = get_pageblock_migratetype(page + i);
					if (pb_mt != mt) {
						problem("free block at index %lu order %u is on the %s list "
							"but its pageblock (index %lu) is %s",
							idx, o, migratetype_names[mt], idx + i,
							pb_mt < MIGRATE_TYPES ? migratetype_names[pb_mt] : "?");
						break;
					}
				}
				for (unsigned long i = 1; i < nr; i++) {
					struct page *p = page + i;
					if (page_flags(p) || PageTail(p) || page_ref_count(p)) {
						problem("interior page %lu of free block %lu (order %u): "
							"flags %#lx compound_head %#lx refcount %d",
							idx + i, idx, o, page_flags(p),
							p->compound_head, page_ref_count(p));
						break;
					}
				}
				cover(covered, idx, nr, "free block");
				bit_set(heads, idx);
				free_pages += nr;
				if (PageReported(page))
					reported += nr;
			}
			if (count != area->nr_free_mt[mt])
				problem("free_area[%u].nr_free_mt[%s] = %lu, lists hold %lu",
					o, migratetype_names[mt], area->nr_free_mt[mt], count);
			total += count;
		}
		if (total != area->nr_free)
			problem("free_area[%u].nr_free = %lu, lists hold %lu", o, area->nr_free, total);
		res->nr_free[o] = total;
	}

	res->free_pages = free_pages;
	res->reported_pages = reported;
	long isolated = atomic_load(&zone->nr_isolated_report);
	if (isolated)
		problem("%ld pages are isolated for reporting (not quiescent)", isolated);
	if ((long)free_pages != global_zone_page_state(NR_FREE_PAGES))
		problem("NR_FREE_PAGES = %ld, free lists hold %lu pages",
			global_zone_page_state(NR_FREE_PAGES), free_pages);
	if ((long)reported != global_zone_page_state(NR_FREE_REPORTED))
		problem("NR_FREE_REPORTED = %ld, free lists hold %lu reported pages",
			global_zone_page_state(NR_FREE_REPORTED), reported);
}

static void check_this_pcp(unsigned long online, unsigned char *covered,
			   struct mm_check_result *res)
{
	struct per_cpu_pages *pcp = this_pcp;
	unsigned long pages = 0;

	if (!pcp)
		return;
	for (int pindex = 0; pindex < NR_PCP_LISTS; pindex++) {
		unsigned int order = (unsigned int)pindex / MIGRATE_PCPTYPES;
		struct list_head *head = &pcp->lists[pindex], *pos;
		unsigned long count = 0;

		for (pos = head->next; pos != head; pos = pos->next) {
			if (++count > online) {
				problem("pcp list %d does not end", pindex);
				break;
			}
			struct page *page = list_entry(pos, struct page, buddy_list);
			unsigned long idx = (unsigned long)(page - mm_model.mem_map);
			if (idx >= online) {
				problem("pcp list %d holds a page outside memory", pindex);
				break;
			}
			if (!PagePcp(page) || PageBuddy(page))
				problem("pcp page %lu has flags %#lx", idx, page_flags(page));
			if (page->order != order)
				problem("pcp page %lu on an order-%u list says order %u",
					idx, order, page->order);
			if (page_ref_count(page))
				problem("pcp page %lu has refcount %d", idx, page_ref_count(page));
			cover(covered, idx, 1UL << order, "pcp page");
			pages += 1UL << order;
		}
	}
	if ((long)pages != pcp_read_count(pcp))
		problem("pcp count = %d, its lists hold %lu pages", pcp_read_count(pcp), pages);
	res->pcp_pages = pages;
}

int mm_check(struct mm_check_result *res)
{
	struct zone *zone = &zone_normal;
	struct mm_check_result local;

	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	nr_errors = 0;

	/* Sized for all memory that can ever be online, and allocated before
	 * taking the lock (malloc may be kmem's own). */
	unsigned long spanned = mm_spanned_pages();
	unsigned char *covered = calloc(spanned / 8 + 1, 1);
	unsigned char *heads = calloc(spanned / 8 + 1, 1);
	if (!covered || !heads) {
		fprintf(stderr, "mm_check: out of memory\n");
		free(covered);
		free(heads);
		return res->errors = 1;
	}

	kmem_lock(&zone->lock);
	unsigned long online = mm_online_pages();
	res->online = online;
	res->managed = zone_managed_pages(zone);
	res->min_wmark = wmark_pages(zone, WMARK_MIN);

	check_free_lists(zone, online, covered, heads, res);
	check_this_pcp(online, covered, res);

	/* PG_buddy anywhere else is a stale flag a neighbour could merge with. */
	for (unsigned long i = 0; i < online; i++) {
		if (PageBuddy(mm_model.mem_map + i) && !bit_test(heads, i))
			problem("page %lu has PG_buddy but is on no free list", i);
	}
	if (res->managed != online)
		problem("managed %lu != online %lu", res->managed, online);
	if (!(wmark_pages(zone, WMARK_MIN) < wmark_pages(zone, WMARK_LOW) &&
	      wmark_pages(zone, WMARK_LOW) < wmark_pages(zone, WMARK_HIGH) &&
	      wmark_pages(zone, WMARK_HIGH) < wmark_pages(zone, WMARK_PROMO)))
		problem("watermarks out of order: %lu %lu %lu %lu",
			wmark_pages(zone, WMARK_MIN), wmark_pages(zone, WMARK_LOW),
			wmark_pages(zone, WMARK_HIGH), wmark_pages(zone, WMARK_PROMO));
	kmem_unlock(&zone->lock);

	free(covered);
	free(heads);
	if (nr_errors > MM_CHECK_MAX_REPORTS)
		fprintf(stderr, "mm_check: ... %d problems in all\n", nr_errors);
	res->errors = nr_errors;
	return nr_errors;
}

__attribute__((format(printf, 3, 4)))
static void all_free_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "  FAIL %s:%d: not all free: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	ktest_failed_now = 1;
}

void mm_expected_buddyinfo_all_free(unsigned long managed, char *buf, size_t size)
{
	size_t len = (size_t)snprintf(buf, size, "Node 0, zone %8s ", "Normal");

	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		len += (size_t)snprintf(buf + len, size - len, "%6lu ",
					o == MAX_PAGE_ORDER ? managed >> MAX_PAGE_ORDER : 0UL);
	snprintf(buf + len, size - len, "\n");
}

bool mm_check_all_free(const char *file, int line)
{
	struct mm_check_result r;
	char want[256];

	if (mm_check(&r)) {
		all_free_fail(file, line, "mm_check: %d problem(s) (above)", r.errors);
		return false;
	}
	if (r.free_pages != r.managed) {
		all_free_fail(file, line, "%lu pages free on the buddy lists, %lu managed",
			      r.free_pages, r.managed);
		return false;
	}
	long err = 0;
	char *got = kt_read("/proc/buddyinfo", &err);
	if (!got) {
		all_free_fail(file, line, "kmem_read(/proc/buddyinfo) = %ld", err);
		return false;
	}
	mm_expected_buddyinfo_all_free(r.managed, want, sizeof(want));
	bool ok = !strcmp(got, want);
	if (!ok)
		all_free_fail(file, line, "/proc/buddyinfo:\n--- got:\n%s\n--- expected:\n%s",
			      got, want);
	free(got);
	return ok;
}
