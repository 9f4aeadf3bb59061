// SPDX-License-Identifier: MIT
/*
 * Bad input: every misuse gets a kernel-style report on stderr, counted by
 * kmem_report_count(), and is refused -- the allocator stays consistent
 * (mm_check() after each case and at the end; buddyinfo back to all free).
 *
 *   double free (order 0 through the pcp lists, order 5 through the buddy
 *   lists), free with the wrong order, free of memory kmem does not own
 *   (stack, heap, an unaligned address inside kmem, a bogus struct page),
 *   free of a tail page, order > MAX_PAGE_ORDER (WARNING, or silence with
 *   __GFP_NOWARN), allocation failure on exhaustion ("page allocation
 *   failure: order:N", silence with __GFP_NOWARN), and panic_on_warn=1
 *   turning a report into an abort.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <kmem.h>

#include "page_alloc/mm.h"
#include "page_alloc/pcp.h"

#include "lib/kt_util.h"
#include "lib/mm_check.h"
#include "ktest.h"

#define CMDLINE "mem=64M nr_cpus=2"

/* Run @stmt with stderr captured into @text (malloc'd). */
#define CAPTURE(text, stmt) do {						\
	struct kt_capture __c;							\
	kt_capture_begin(&__c);							\
	stmt;									\
	text = kt_capture_end(&__c);						\
} while (0)

/* @stmt must print a report containing every string given and bump
 * kmem_report_count() by exactly one. */
#define EXPECT_REPORT(stmt, ...) do {						\
	const char *__needles[] = { __VA_ARGS__, NULL };			\
	unsigned long __n0 = kmem_report_count();				\
	char *__t;								\
	CAPTURE(__t, stmt);							\
	for (int __i = 0; __needles[__i]; __i++)				\
		if (!strstr(__t, __needles[__i])) {				\
			KT_FAIL("expected \"%s\" in the report:\n%s", __needles[__i], __t); \
			free(__t);						\
			return;							\
		}								\
	free(__t);								\
	KT_ASSERT_EQ(kmem_report_count(), __n0 + 1);				\
} while (0)

#define EXPECT_SILENT(stmt) do {						\
	unsigned long __n0 = kmem_report_count();				\
	char *__t;								\
	CAPTURE(__t, stmt);							\
	if (*__t) {								\
		KT_FAIL("expected no output, got:\n%s", __t);			\
		free(__t);							\
		return;								\
	}									\
	free(__t);								\
	KT_ASSERT_EQ(kmem_report_count(), __n0);				\
} while (0)

#define BAD_PAGE "BUG: Bad page state in process ", "pfn:", "page dumped because: "
#define WARNING "WARNING: CPU: ", " PID: ", " at mm/page_alloc.c"

static void consistent(void)
{
	struct mm_check_result r;

	KT_ASSERT_EQ(mm_check(&r), 0);
}

static void pfn_text(struct page *page, char *buf, size_t size)
{
	snprintf(buf, size, "pfn:%05lx", page_to_pfn(page));
}

/* ---- panic_on_warn (first: it needs an unbooted process to fork) -------- */

static void panic_double_free(void *arg)
{
	(void)arg;
	if (kmem_init("mem=16M panic_on_warn=1"))
		_exit(3);
	struct page *page = alloc_pages(GFP_KERNEL, 0);
	if (!page)
		_exit(4);
	__free_pages(page, 0);
	__free_pages(page, 0);		/* must not return */
	_exit(5);
}

static void panic_bad_order(void *arg)
{
	(void)arg;
	if (kmem_init("mem=16M panic_on_warn=1"))
		_exit(3);
	alloc_pages(GFP_KERNEL, MAX_PAGE_ORDER + 1);	/* must not return */
	_exit(5);
}

/* A failed allocation is not a WARN: panic_on_warn leaves it alone. */
static void no_panic_on_alloc_failure(void *arg)
{
	(void)arg;
	if (kmem_init("mem=16M panic_on_warn=1"))
		_exit(3);
	while (alloc_pages(GFP_KERNEL, MAX_PAGE_ORDER))
		;
}

KTEST(panic_on_warn_aborts)
{
	int status;
	char *t;

	t = kt_fork_captured(panic_double_free, NULL, &status);
	KT_ASSERT(KT_CHILD_ABORTED(status));
	KT_ASSERT_CONTAINS(t, "BUG: Bad page state");
	KT_ASSERT_CONTAINS(t, "Kernel panic - not syncing: panic_on_warn set");
	free(t);

	t = kt_fork_captured(panic_bad_order, NULL, &status);
	KT_ASSERT(KT_CHILD_ABORTED(status));
	KT_ASSERT_CONTAINS(t, "WARNING: CPU:");
	KT_ASSERT_CONTAINS(t, "Kernel panic - not syncing");
	free(t);

	t = kt_fork_captured(no_panic_on_alloc_failure, NULL, &status);
	KT_ASSERT(KT_CHILD_OK(status));
	KT_ASSERT_CONTAINS(t, "page allocation failure: order:10");
	KT_ASSERT(!strstr(t, "Kernel panic"));
	free(t);
}

/* ---- refused input in a running allocator ---------------------------- */

/* kmem boots in the first case that needs it, after panic_on_warn_aborts has
 * forked its children from an unbooted process. */
static void boot(void)
{
	int rc = kmem_init(CMDLINE);

	if (rc && rc != -EBUSY) {
		fprintf(stderr, "kmem_init(\"%s\") = %d\n", CMDLINE, rc);
		abort();
	}
}

KTEST(double_free_order0_pcp)
{
	boot();
	struct page *page = alloc_pages(GFP_KERNEL, 0);
	char pfn[32];
	KT_ASSERT(page);
	pfn_text(page, pfn, sizeof(pfn));
	__free_pages(page, 0);
	KT_ASSERT(PagePcp(page));		/* it went to this thread's pcp list */
	int pcp_count = pcp_read_count(this_pcp);

	EXPECT_REPORT(__free_pages(page, 0), BAD_PAGE);
	EXPECT_REPORT(__free_pages(page, 0), "double free: the page is already free");
	EXPECT_REPORT(free_page((unsigned long)page_address(page)), "double free", pfn);
	/* Refused: still once on the pcp list. */
	KT_ASSERT_EQ(pcp_read_count(this_pcp), pcp_count);
	consistent();
}

KTEST(double_free_order5_buddy)
{
	boot();
	/* Find two order-5 blocks that are buddies, so the freed one cannot merge
	 * and stays a free order-5 block head on the buddy list. */
	struct page *blocks[8], *p = NULL, *q = NULL;
	for (int i = 0; i < 8; i++) {
		blocks[i] = alloc_pages(GFP_KERNEL, 5);
		KT_ASSERT(blocks[i]);
	}
	for (int i = 0; i < 8 && !p; i++)
		for (int j = 0; j < 8; j++)
			if (page_to_pfn(blocks[j]) == (page_to_pfn(blocks[i]) ^ 32)) {
				p = blocks[i];
				q = blocks[j];
				break;
			}
	KT_ASSERT(p && q);
	__free_pages(p, 5);
	KT_ASSERT(PageBuddy(p) && buddy_order(p) == 5);

	char pfn[32];
	pfn_text(p, pfn, sizeof(pfn));
	EXPECT_REPORT(__free_pages(p, 5), "BUG: Bad page state", pfn, "double free");
	EXPECT_REPORT(free_pages((unsigned long)page_address(p), 5), BAD_PAGE);
	KT_ASSERT(PageBuddy(p) && buddy_order(p) == 5);
	consistent();

	/* Freed once more after merging away: no longer a block start. */
	__free_pages(q, 5);
	if (!PageBuddy(p))
		EXPECT_REPORT(__free_pages(p, 5), BAD_PAGE);
	for (int i = 0; i < 8; i++)
		if (blocks[i] != p && blocks[i] != q)
			__free_pages(blocks[i], 5);
	consistent();
}

KTEST(free_with_wrong_order)
{
	boot();
	struct page *page = alloc_pages(GFP_KERNEL, 2);
	KT_ASSERT(page);
	EXPECT_REPORT(__free_pages(page, 3), BAD_PAGE, "different order");
	EXPECT_REPORT(__free_pages(page, 0), "different order");
	EXPECT_REPORT(free_pages((unsigned long)page_address(page), 1), "different order");
	/* Refused: still allocated, and the right order frees it silently. */
	KT_ASSERT_EQ(page_ref_count(page), 1);
	KT_ASSERT(!PageBuddy(page) && !PagePcp(page));
	consistent();
	EXPECT_SILENT(__free_pages(page, 2));
	consistent();

	unsigned long addr = __get_free_page(GFP_KERNEL);
	KT_ASSERT(addr);
	EXPECT_REPORT(free_pages(addr, 1), "different order");
	EXPECT_SILENT(free_page(addr));
	consistent();
}

KTEST(free_memory_kmem_does_not_own)
{
	boot();
	/* A page-aligned stack address and a page-aligned heap address. */
	char stack[3 * 4096];
	unsigned long sa = ((unsigned long)stack + PAGE_SIZE - 1) & PAGE_MASK;
	char *heap = malloc(3 * PAGE_SIZE);
	KT_ASSERT(heap);
	unsigned long ha = ((unsigned long)heap + PAGE_SIZE - 1) & PAGE_MASK;

	memset(stack, 0x11, sizeof(stack));
	EXPECT_REPORT(free_pages(sa, 0), WARNING, "not a page kmem manages");
	EXPECT_REPORT(free_page(ha), "not a page kmem manages");
	EXPECT_REPORT(free_pages(ha, 3), "not a page kmem manages");
	/* Nothing was written through them. */
	for (size_t i = 0; i < sizeof(stack); i++)
		KT_ASSERT(stack[i] == 0x11);

	/* A struct page that is not in kmem's memory map. */
	EXPECT_REPORT(__free_pages((struct page *)heap, 0), WARNING, "not kmem's memory map");
	free(heap);

	/* An unaligned address inside kmem's memory. */
	unsigned long addr = __get_free_pages(GFP_KERNEL, 1);
	KT_ASSERT(addr);
	EXPECT_REPORT(free_pages(addr + 8, 1), WARNING, "not a page kmem manages");
	EXPECT_REPORT(free_pages(addr + PAGE_SIZE / 2, 0), "not a page kmem manages");
	KT_ASSERT_EQ(page_ref_count(virt_to_page((void *)addr)), 1);
	EXPECT_SILENT(free_pages(addr, 1));

	/* free_pages(0) is a no-op, as in the kernel. */
	EXPECT_SILENT(free_pages(0, 0));
	consistent();
}

KTEST(free_tail_page)
{
	boot();
	struct page *comp = alloc_pages(GFP_KERNEL | __GFP_COMP, 3);
	struct page *plain = alloc_pages(GFP_KERNEL, 2);
	KT_ASSERT(comp && plain);

	EXPECT_REPORT(__free_pages(comp + 1, 0), BAD_PAGE, "not the start of an allocation");
	EXPECT_REPORT(__free_pages(comp + 7, 3), BAD_PAGE);
	EXPECT_REPORT(free_page((unsigned long)page_address(comp + 4)), BAD_PAGE);
	EXPECT_REPORT(__free_pages(plain + 3, 0), "not the start of an allocation");
	EXPECT_REPORT(free_pages((unsigned long)page_address(plain + 2), 1), BAD_PAGE);
	/* The blocks are intact. */
	KT_ASSERT(PageHead(comp));
	for (int i = 1; i < 8; i++)
		KT_ASSERT(compound_head(comp + i) == comp);
	KT_ASSERT_EQ(page_ref_count(comp), 1);
	consistent();
	EXPECT_SILENT(__free_pages(comp, 3));
	EXPECT_SILENT(__free_pages(plain, 2));
	consistent();
}

KTEST(order_above_max)
{
	boot();
	struct page *page;

	EXPECT_REPORT(page = alloc_pages(GFP_KERNEL, MAX_PAGE_ORDER + 1),
		      WARNING, "invalid order 11");
	KT_ASSERT(page == NULL);
	EXPECT_SILENT(page = alloc_pages(GFP_KERNEL | __GFP_NOWARN, MAX_PAGE_ORDER + 1));
	KT_ASSERT(page == NULL);
	unsigned long addr = 1;
	EXPECT_REPORT(addr = __get_free_pages(GFP_KERNEL, 20), "invalid order 20");
	KT_ASSERT_EQ(addr, 0);
	EXPECT_SILENT(addr = __get_free_pages(GFP_ATOMIC | __GFP_NOWARN, 64));
	KT_ASSERT_EQ(addr, 0);

	/* Freeing with such an order is refused too. */
	page = alloc_pages(GFP_KERNEL, MAX_PAGE_ORDER);
	KT_ASSERT(page);
	EXPECT_REPORT(__free_pages(page, MAX_PAGE_ORDER + 1), WARNING, "invalid order 11");
	KT_ASSERT_EQ(page_ref_count(page), 1);
	EXPECT_SILENT(__free_pages(page, MAX_PAGE_ORDER));
	consistent();
}

#define MAX_HELD 20000
static struct page *held[MAX_HELD];
static unsigned int held_order[MAX_HELD];
static int nr_held;

KTEST(allocation_failure_on_exhaustion)
{
	boot();
	struct page *page;
	char *t;
	long fails0 = kt_vmstat("pgalloc_fail");
	unsigned long reports0 = kmem_report_count();

	/* Exhaust MAX_PAGE_ORDER blocks silently, then once aloud. */
	for (;;) {
		CAPTURE(t, page = alloc_pages(GFP_KERNEL | __GFP_NOWARN, MAX_PAGE_ORDER));
		KT_ASSERT(*t == '\0');
		free(t);
		if (!page)
			break;
		KT_ASSERT(nr_held < MAX_HELD);
		held_order[nr_held] = MAX_PAGE_ORDER;
		held[nr_held++] = page;
	}
	KT_ASSERT(nr_held >= 10);
	CAPTURE(t, page = alloc_pages(GFP_KERNEL, MAX_PAGE_ORDER));
	KT_ASSERT(page == NULL);
	KT_ASSERT_CONTAINS(t, ": page allocation failure: order:10, mode:0xcc0(GFP_KERNEL), "
			      "nodemask=(null)\n");
	KT_ASSERT_CONTAINS(t, "Mem-Info:");
	KT_ASSERT_CONTAINS(t, "Node 0 Normal free:");
	free(t);

	/* Then order-0 pages until memory is exhausted. */
	for (;;) {
		CAPTURE(t, page = alloc_pages(GFP_KERNEL | __GFP_MOVABLE | __GFP_NOWARN, 0));
		KT_ASSERT(*t == '\0');
		free(t);
		if (!page)
			break;
		KT_ASSERT(nr_held < MAX_HELD);
		held_order[nr_held] = 0;
		held[nr_held++] = page;
	}
	CAPTURE(t, page = alloc_pages(GFP_KERNEL | __GFP_MOVABLE | __GFP_ZERO, 0));
	KT_ASSERT(page == NULL);
	KT_ASSERT_CONTAINS(t, "page allocation failure: order:0, "
			      "mode:0xdc8(GFP_KERNEL|__GFP_ZERO|__GFP_MOVABLE)");
	free(t);
	unsigned long addr = 1;
	CAPTURE(t, addr = __get_free_pages(GFP_NOWAIT, 2));
	KT_ASSERT_EQ(addr, 0);
	KT_ASSERT_CONTAINS(t, "page allocation failure: order:2, mode:0x800(GFP_NOWAIT)");
	free(t);

	/* An allocation failure is no bad input: it is not a counted report. */
	KT_ASSERT_EQ(kmem_report_count(), reports0);
	KT_ASSERT(kt_vmstat("pgalloc_fail") >= fails0 + 4);

	while (nr_held) {
		nr_held--;
		__free_pages(held[nr_held], held_order[nr_held]);
	}
	consistent();
}

/* Runs last (cases run in definition order): nothing leaked, nothing broken. */
KTEST(consistent_after_everything)
{
	boot();
	drain_local_pages();
	KT_ASSERT_ALL_FREE();
	/* And it still works. */
	for (unsigned int o = 0; o <= MAX_PAGE_ORDER; o++) {
		struct page *page = alloc_pages(GFP_KERNEL, o);
		KT_ASSERT(page);
		memset(page_address(page), 0x5a, PAGE_SIZE << o);
		__free_pages(page, o);
	}
}

KTEST_MAIN((void)0)
