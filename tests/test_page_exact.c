// SPDX-License-Identifier: MIT
/*
 * alloc_pages_exact() and free_pages_exact() (kernel mm/page_alloc.c):
 * exactly the pages asked for, the rest of the block free at once; every
 * page its own order-0 allocation, freeable alone; freed in aligned pieces
 * that merge back to whole blocks; bad input reported and refused.  A
 * randomized run against a model of which pages are allocated ends with
 * all memory free and merged.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <kmem.h>

#include "page_alloc/mm.h"

#include "lib/kt_util.h"
#include "lib/mm_check.h"
#include "ktest.h"

#define CMDLINE "mem=64M nr_cpus=2"

static void boot(void)
{
	int rc = kmem_init(CMDLINE);

	if (rc && rc != -EBUSY) {
		fprintf(stderr, "kmem_init(\"%s\") = %d\n", CMDLINE, rc);
		abort();
	}
}

static void consistent(void)
{
	struct mm_check_result r;

	KT_ASSERT_EQ(mm_check(&r), 0);
}

/* Free pages, this thread's pcp pages given back first. */
static long free_pages_now(void)
{
	drain_local_pages();
	return kt_vmstat("nr_free_pages");
}

/* Run @stmt with stderr captured; it must report @n times, every report text containing @needle. */
#define EXPECT_REPORTS(n, stmt, needle) do {					\
	unsigned long __n0 = kmem_report_count();				\
	struct kt_capture __c;							\
	kt_capture_begin(&__c);							\
	stmt;									\
	char *__t = kt_capture_end(&__c);					\
	if ((n) && !strstr(__t, needle))					\
		KT_FAIL("expected \"%s\" in:\n%s", needle, __t);		\
	if (!(n) && *__t)							\
		KT_FAIL("expected no output, got:\n%s", __t);			\
	free(__t);								\
	KT_ASSERT_EQ(kmem_report_count(), __n0 + (n));				\
} while (0)

KTEST(only_the_pages_asked_for)
{
	boot();
	static const size_t sizes[] = { 1, PAGE_SIZE, PAGE_SIZE + 1, 5 * PAGE_SIZE - 100,
					100000, 513 * PAGE_SIZE, 4UL << 20 };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t size = sizes[k];
		unsigned long nr = (size + PAGE_SIZE - 1) / PAGE_SIZE;
		long before = free_pages_now();
		char *p = alloc_pages_exact(size, GFP_KERNEL);
		KT_ASSERT(p);
		/* Aligned as the block it came from. */
		KT_ASSERT(((uintptr_t)p & ((PAGE_SIZE << get_order(size)) - 1)) == 0);
		KT_ASSERT_EQ(before - free_pages_now(), (long)nr);
		/* Every page an allocated order-0 page of its own. */
		for (unsigned long i = 0; i < nr; i++) {
			struct page *page = virt_to_page(p + i * PAGE_SIZE);
			KT_ASSERT_EQ(page_ref_count(page), 1);
			KT_ASSERT_EQ(page->order, 0);
			KT_ASSERT(!PageHead(page) && !PageTail(page) && !PageBuddy(page) && !PagePcp(page));
		}
		memset(p, 0x5a, nr * PAGE_SIZE);
		consistent();
		free_pages_exact(p, size);
		KT_ASSERT_EQ(free_pages_now(), before);
		consistent();
	}
	KT_ASSERT_ALL_FREE();
}

KTEST(each_page_freed_alone)
{
	boot();
	long before = free_pages_now();
	char *p = alloc_pages_exact(7 * PAGE_SIZE, GFP_KERNEL);
	KT_ASSERT(p);
	/* Out of order, one by one, as kernel callers may. */
	static const int order[] = { 3, 0, 6, 1, 5, 2, 4 };
	for (int i = 0; i < 7; i++) {
		EXPECT_REPORTS(0, free_page((unsigned long)(p + order[i] * PAGE_SIZE)), "");
		KT_ASSERT_EQ(before - free_pages_now(), 6 - i);
	}
	consistent();
	/* And part of one with free_pages_exact(), the rest alone. */
	p = alloc_pages_exact(12 * PAGE_SIZE, GFP_KERNEL);
	KT_ASSERT(p);
	free_pages_exact(p + 2 * PAGE_SIZE, 9 * PAGE_SIZE);
	KT_ASSERT_EQ(before - free_pages_now(), 3);
	free_page((unsigned long)p);
	free_page((unsigned long)(p + PAGE_SIZE));
	free_page((unsigned long)(p + 11 * PAGE_SIZE));
	KT_ASSERT_EQ(free_pages_now(), before);
	KT_ASSERT_ALL_FREE();
}

KTEST(gfp_zero_zeroes_what_it_keeps)
{
	boot();
	for (int round = 0; round < 16; round++) {
		/* Dirty memory first, so that the next block is not fresh. */
		struct page *dirty = alloc_pages(GFP_KERNEL, 4);
		KT_ASSERT(dirty);
		memset(page_address(dirty), 0xff, PAGE_SIZE << 4);
		__free_pages(dirty, 4);
		size_t size = (size_t)(round + 1) * 3000;
		unsigned char *p = alloc_pages_exact(size, GFP_KERNEL | __GFP_ZERO);
		KT_ASSERT(p);
		for (size_t i = 0; i < (size + PAGE_SIZE - 1) / PAGE_SIZE * PAGE_SIZE; i++)
			if (p[i]) {
				KT_FAIL("byte %zu of a %zu-byte __GFP_ZERO block is %#x", i, size, p[i]);
				return;
			}
		memset(p, 0xee, size);
		free_pages_exact(p, size);
	}
	consistent();
}

KTEST(bad_input_is_refused)
{
	boot();
	void *p;

	EXPECT_REPORTS(1, p = alloc_pages_exact(0, GFP_KERNEL), "alloc_pages_exact(0): invalid size");
	KT_ASSERT(p == NULL);
	EXPECT_REPORTS(1, p = alloc_pages_exact((4UL << 20) + 1, GFP_KERNEL), "invalid size");
	KT_ASSERT(p == NULL);
	EXPECT_REPORTS(0, p = alloc_pages_exact((4UL << 20) + 1, GFP_KERNEL | __GFP_NOWARN), "");
	KT_ASSERT(p == NULL);

	/* __GFP_COMP: warned about and ignored, as the kernel does. */
	EXPECT_REPORTS(1, p = alloc_pages_exact(3 * PAGE_SIZE, GFP_KERNEL | __GFP_COMP), "__GFP_COMP");
	KT_ASSERT(p);
	KT_ASSERT(!PageHead(virt_to_page(p)));
	free_pages_exact(p, 3 * PAGE_SIZE);

	/* A double free: each page reported once, nothing freed twice. */
	long before = free_pages_now();
	p = alloc_pages_exact(3 * PAGE_SIZE, GFP_KERNEL);
	KT_ASSERT(p);
	free_pages_exact(p, 3 * PAGE_SIZE);
	EXPECT_REPORTS(3, free_pages_exact(p, 3 * PAGE_SIZE), "BUG: Bad page state");
	KT_ASSERT_EQ(free_pages_now(), before);
	consistent();

	/* A range running into a page that is not allocated: the others are freed. */
	char *q = alloc_pages_exact(8 * PAGE_SIZE, GFP_KERNEL);
	KT_ASSERT(q);
	free_page((unsigned long)(q + 5 * PAGE_SIZE));
	EXPECT_REPORTS(1, free_pages_exact(q, 8 * PAGE_SIZE), "double free");
	KT_ASSERT_EQ(free_pages_now(), before);
	consistent();

	/* A range that includes the tail pages of a compound block: refused for those. */
	struct page *comp = alloc_pages(GFP_KERNEL | __GFP_COMP, 2);
	KT_ASSERT(comp);
	EXPECT_REPORTS(3, free_pages_exact(page_address(comp + 1), 3 * PAGE_SIZE), "Bad page state");
	KT_ASSERT(compound_head(comp + 3) == comp);
	__free_pages(comp, 2);

	/* Memory kmem does not manage, or not page aligned. */
	char stack[2 * 4096];
	EXPECT_REPORTS(1, free_pages_exact((void *)(((uintptr_t)stack + 4095) & ~4095ul), 4096),
		       "not pages kmem manages");
	p = alloc_pages_exact(PAGE_SIZE, GFP_KERNEL);
	EXPECT_REPORTS(1, free_pages_exact((char *)p + 8, 100), "not pages kmem manages");
	EXPECT_REPORTS(0, free_pages_exact(NULL, 100), "");
	/* Size 0 frees nothing, wherever it points (the kernel's loop runs no time). */
	EXPECT_REPORTS(0, free_pages_exact(stack, 0), "");
	EXPECT_REPORTS(0, free_pages_exact(p, 0), "");
	KT_ASSERT_EQ(page_ref_count(virt_to_page(p)), 1);
	free_pages_exact(p, PAGE_SIZE);
	KT_ASSERT_EQ(free_pages_now(), before);
	KT_ASSERT_ALL_FREE();
}

/* Lists with a reported block in front of an unreported one (reported blocks go to the tail). */
static int reported_in_front(void)
{
	struct zone *z = &zone_normal;
	int bad = 0;

	kmem_lock(&z->lock);
	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
			struct page *page;
			bool seen = false;
			list_for_each_entry(page, &z->free_area[o].free_list[mt], buddy_list) {
				if (PageReported(page))
					seen = true;
				else if (seen) {
					bad++;
					break;
				}
			}
		}
	kmem_unlock(&z->lock);
	return bad;
}

/*
 * The tail of a block that was untouched goes back still reported, behind
 * the resident free memory: the next allocation takes resident memory.
 */
KTEST(untouched_tail_stays_reported_behind)
{
	boot();
	drain_local_pages();
	long reported0 = kt_vmstat("nr_free_reported");
	/* Resident free pieces of every order below 10: a written block, all but a page freed. */
	char *x = alloc_pages_exact(4UL << 20, GFP_KERNEL);
	KT_ASSERT(x);
	memset(x, 1, 4UL << 20);
	free_pages_exact(x + PAGE_SIZE, (4UL << 20) - PAGE_SIZE);
	drain_local_pages();
	KT_ASSERT_EQ(reported_in_front(), 0);
	/* 513 pages of an order-10 block from memory never touched: 511 untouched pages go back. */
	char *p = alloc_pages_exact(513 * PAGE_SIZE, GFP_KERNEL);
	KT_ASSERT(p);
	long reported1 = kt_vmstat("nr_free_reported");
	KT_ASSERT(reported1 >= reported0 - 1024 + 511 && reported1 <= reported0);
	KT_ASSERT_EQ(reported_in_front(), 0);
	consistent();
	struct page *n = alloc_pages(GFP_KERNEL, 2);
	KT_ASSERT(n);
	KT_ASSERT(n < virt_to_page(p) || n >= virt_to_page(p) + 1024);
	__free_pages(n, 2);
	free_pages_exact(p, 513 * PAGE_SIZE);
	free_page((unsigned long)x);
	drain_local_pages();
	KT_ASSERT_ALL_FREE();
}

/*
 * One run over two pageblocks of different migratetypes (two movable and
 * unmovable 2 MiB blocks side by side): freed in pageblock pieces, each on
 * its own type's list, merged as the buddy lists merge pageblocks.
 */
KTEST(run_over_two_migratetypes)
{
	boot();
	enum { N = 24 };
	void *b[N];
	int n = 0;

	while (n < N && (b[n] = alloc_pages_exact(2UL << 20, GFP_KERNEL | __GFP_MOVABLE | __GFP_NOWARN)))
		n++;
	KT_ASSERT(n >= 4);
	/* The upper halves of order-10 pairs back as unmovable memory, in the same place. */
	for (int i = 0; i < n; i++)
		if (page_to_pfn(virt_to_page(b[i])) & 512) {
			free_pages_exact(b[i], 2UL << 20);
			b[i] = alloc_pages_exact(2UL << 20, GFP_KERNEL | __GFP_NOWARN);
			KT_ASSERT(b[i]);
		}
	int lo = -1, hi = -1;
	for (int i = 0; i < n && lo < 0; i++)
		for (int j = 0; j < n; j++)
			if (!(page_to_pfn(virt_to_page(b[i])) & 1023) && (char *)b[j] == (char *)b[i] + (2UL << 20) &&
			    get_pageblock_migratetype(virt_to_page(b[i])) !=
				    get_pageblock_migratetype(virt_to_page(b[j]))) {
				lo = i;
				hi = j;
				break;
			}
	KT_ASSERT(lo >= 0);
	free_pages_exact(b[lo], 4UL << 20);
	consistent();
	for (int i = 0; i < n; i++)
		if (i != lo && i != hi)
			free_pages_exact(b[i], 2UL << 20);
	drain_local_pages();
	KT_ASSERT_ALL_FREE();
}

/* Exhaustion: NULL (quietly with __GFP_NOWARN), and everything comes back. */
KTEST(exhaustion_and_back)
{
	boot();
	enum { MAX = 4096 };
	static void *blocks[MAX];
	static size_t sizes[MAX];
	int n = 0;
	uint64_t seed = 5;

	while (n < MAX) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		sizes[n] = 1 + (seed >> 33) % (300 * PAGE_SIZE);
		blocks[n] = alloc_pages_exact(sizes[n], GFP_KERNEL | __GFP_NOWARN);
		if (!blocks[n])
			break;
		n++;
	}
	KT_ASSERT(n < MAX);	/* 64 MiB is used up long before */
	consistent();
	for (int i = 0; i < n; i++)
		free_pages_exact(blocks[i], sizes[i]);
	drain_local_pages();
	KT_ASSERT_ALL_FREE();
}

/*
 * Random sizes, freed at random, whole or page by page, against a model:
 * the pages allocated.  The free page count follows it exactly.
 */
KTEST(randomized_against_a_model)
{
	boot();
	enum { SLOTS = 64, STEPS = 3000 };
	struct { char *p; unsigned long nr; unsigned char *live; } b[SLOTS] = { { 0 } };
	long base = free_pages_now(), held = 0;
	uint64_t seed = 11;

	for (int step = 0; step < STEPS; step++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		int i = (int)((seed >> 40) % SLOTS);
		if (!b[i].p) {
			size_t size = 1 + (seed >> 16) % (40 * PAGE_SIZE);
			b[i].p = alloc_pages_exact(size, GFP_KERNEL);
			KT_ASSERT(b[i].p);
			b[i].nr = (size + PAGE_SIZE - 1) / PAGE_SIZE;
			b[i].live = calloc(b[i].nr, 1);
			memset(b[i].live, 1, b[i].nr);
			for (unsigned long k = 0; k < b[i].nr; k++)
				b[i].p[k * PAGE_SIZE] = (char)i;
			held += (long)b[i].nr;
		} else if ((seed >> 8) & 1) {
			/* All that is left, as runs of live pages. */
			for (unsigned long k = 0; k < b[i].nr;) {
				if (!b[i].live[k]) {
					k++;
					continue;
				}
				unsigned long end = k;
				while (end < b[i].nr && b[i].live[end]) {
					KT_ASSERT_EQ(b[i].p[end * PAGE_SIZE], (char)i);
					end++;
				}
				free_pages_exact(b[i].p + k * PAGE_SIZE, (end - k) * PAGE_SIZE);
				held -= (long)(end - k);
				k = end;
			}
			free(b[i].live);
			b[i].p = NULL;
		} else {
			/* One page of it. */
			unsigned long k = (seed >> 20) % b[i].nr;
			if (b[i].live[k]) {
				free_page((unsigned long)(b[i].p + k * PAGE_SIZE));
				b[i].live[k] = 0;
				held--;
			}
		}
		if (step % 100 == 0) {
			KT_ASSERT_EQ(base - free_pages_now(), held);
			consistent();
		}
	}
	for (int i = 0; i < SLOTS; i++) {
		if (!b[i].p)
			continue;
		for (unsigned long k = 0; k < b[i].nr; k++)
			if (b[i].live[k])
				free_page((unsigned long)(b[i].p + k * PAGE_SIZE));
		free(b[i].live);
	}
	drain_local_pages();
	KT_ASSERT_ALL_FREE();
}

KTEST_MAIN((void)0)
