// SPDX-License-Identifier: MIT
/*
 * Free page reporting: a free block of page_reporting_order (9: 2 MiB) or
 * more is given back to the OS (MADV_DONTNEED) and flagged PG_reported;
 * its memory then reads as zeroes, so __GFP_ZERO may skip the memset --
 * but only while the memory is really untouched.  Reporting waits
 * page_reporting.delay_ms (checked on a later free); most cases here boot
 * with delay_ms=0 so that a free reports at once.
 *
 *  - touching then freeing 32 MiB of order-9 blocks: vmstat pgreported and
 *    nr_free_reported grow, and RSS (/proc/self/statm) drops by ~32 MiB;
 *  - __GFP_ZERO pages are zero when reused after reporting, and after being
 *    dirtied (through the pcp lists, the buddy lists, and merges of dirty
 *    and reported blocks);
 *  - with a delay nothing is given back before it has passed (or a flush),
 *    and the first free after it reports; except a free that leaves more
 *    than half of memory free with over 64 MiB of it unreported: at once;
 *  - page_reporting.enable=0 gives nothing back (forked child).
 */
#include <time.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <string.h>
#include <stdatomic.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <kmem.h>

#include "page_alloc/mm.h"

#include "lib/kt_util.h"
#include "lib/mm_check.h"
#include "ktest.h"

#define MiB (1UL << 20)
#define NR_BLOCKS 16		/* 16 order-9 blocks: 32 MiB */
#define BLOCK_ORDER 9
#define BLOCK_BYTES (PAGE_SIZE << BLOCK_ORDER)

static bool all_zero(const void *p, size_t len)
{
	const uint64_t *w = p;

	for (size_t i = 0; i < len / 8; i++)
		if (w[i])
			return false;
	return true;
}

/*
 * @n order-9 blocks with @gfp into @blocks: with __GFP_ZERO each must read
 * zeroes; then each is filled with @fill (unless it is -1).  Fails the case
 * (naming the block) and returns false if one cannot be had or is not zero.
 */
static bool take_blocks(struct page **blocks, int n, gfp_t gfp, int fill)
{
	for (int i = 0; i < n; i++) {
		blocks[i] = alloc_pages(gfp, BLOCK_ORDER);
		if (!blocks[i]) {
			KT_FAIL("block %d of %d: order-%d allocation (gfp %#x) failed", i, n,
				BLOCK_ORDER, (unsigned int)gfp);
			return false;
		}
		if ((gfp & __GFP_ZERO) && !all_zero(page_address(blocks[i]), BLOCK_BYTES)) {
			KT_FAIL("block %d of %d: __GFP_ZERO block not zero", i, n);
			return false;
		}
		if (fill >= 0)
			memset(page_address(blocks[i]), fill, BLOCK_BYTES);
	}
	return true;
}

static void free_blocks(struct page **blocks, int n)
{
	for (int i = 0; i < n; i++)
		__free_pages(blocks[i], BLOCK_ORDER);
}

/* This thread's pcp pages back, then every page free (mm_check.h). */
#define CHECK_ALL_FREE() do {							\
	drain_local_pages();							\
	KT_ASSERT_ALL_FREE();							\
} while (0)

static void gives_memory_back(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(kmem_init("mem=64M page_reporting.delay_ms=0"), 0);
	/* Fresh memory was never touched: free and reported from the start. */
	KT_ASSERT_EQ(kt_vmstat("nr_free_reported"), 16384);
	KT_ASSERT_EQ(kt_zoneinfo("nr_free_reported"), 16384);
	KT_ASSERT_EQ(kt_vmstat("pgreported"), 0);

	struct page *blocks[NR_BLOCKS];
	unsigned long rss0 = kt_rss_bytes();
	if (!take_blocks(blocks, NR_BLOCKS, GFP_KERNEL | __GFP_MOVABLE, 0xa5))
		return;
	unsigned long rss1 = kt_rss_bytes();
	KT_ASSERT_EQ(kt_vmstat("nr_free_reported"), 16384 - NR_BLOCKS * 512);

	free_blocks(blocks, NR_BLOCKS);
	unsigned long rss2 = kt_rss_bytes();
	long reported = kt_vmstat("pgreported");

	fprintf(stderr, "  RSS %lu -> %lu (touched) -> %lu KiB (freed); pgreported %ld\n",
		rss0 >> 10, rss1 >> 10, rss2 >> 10, reported);
	KT_ASSERT(rss1 >= rss0 + 28 * MiB);
	KT_ASSERT(rss2 + 28 * MiB <= rss1);
	KT_ASSERT(reported >= NR_BLOCKS * 512);
	/* Every free page is reported again, and the lists agree. */
	KT_ASSERT_EQ(kt_vmstat("nr_free_reported"), 16384);
	KT_ASSERT_EQ(kt_vmstat("nr_free_pages"), 16384);
	CHECK_ALL_FREE();

	/* Reused after reporting: __GFP_ZERO gives zeroes, and so does the memory. */
	if (!take_blocks(blocks, NR_BLOCKS, GFP_KERNEL | __GFP_ZERO, 0x5a))
		return;
	free_blocks(blocks, NR_BLOCKS);
	KT_ASSERT(kt_vmstat("pgreported") >= reported + NR_BLOCKS * 512);
	CHECK_ALL_FREE();
}

KTEST(freed_blocks_go_back_to_the_os)
{
	KT_ASSERT_CHILD_OK(kt_fork(gives_memory_back, NULL));
}

/*
 * __GFP_ZERO after dirtying, at every order: a page allocated without
 * __GFP_ZERO from reported memory is dirtied and freed; whatever path it
 * takes back (pcp list, buddy list, merge, report), the next __GFP_ZERO
 * allocation that gets it must read zeroes.
 */
static void zero_after_dirty(bool reporting)
{
	const gfp_t mts[] = { 0, __GFP_MOVABLE, __GFP_RECLAIMABLE };

	for (int round = 0; round < 3; round++) {
		for (unsigned int o = 0; o <= MAX_PAGE_ORDER; o++) {
			gfp_t mt = mts[(o + (unsigned int)round) % 3];
			struct page *page = alloc_pages(GFP_KERNEL | mt, o);
			KT_ASSERT(page);
			memset(page_address(page), 0xee, PAGE_SIZE << o);
			__free_pages(page, o);
			if (round == 1)
				drain_local_pages();	/* through the buddy lists */
			/* LIFO: the same block comes back first (pcp and buddy head). */
			struct page *again = alloc_pages(GFP_KERNEL | mt | __GFP_ZERO, o);
			KT_ASSERT(again);
			if (!all_zero(page_address(again), PAGE_SIZE << o)) {
				KT_FAIL("order-%u __GFP_ZERO block not zero (round %d, %s, %s)", o,
					round, again == page ? "same block" : "other block",
					reporting ? "reporting on" : "reporting off");
				return;
			}
			__free_pages(again, o);
		}
	}
	/* Many small dirty pages, then many small zeroed ones. */
	static struct page *held[2048];
	for (int i = 0; i < 2048; i++) {
		held[i] = alloc_pages(GFP_KERNEL, (unsigned int)i % 4);
		KT_ASSERT(held[i]);
		memset(page_address(held[i]), 0x77, PAGE_SIZE << (i % 4));
	}
	for (int i = 0; i < 2048; i++)
		__free_pages(held[i], (unsigned int)i % 4);
	for (int i = 0; i < 2048; i++) {
		held[i] = alloc_pages(GFP_KERNEL | __GFP_ZERO, (unsigned int)i % 4);
		KT_ASSERT(held[i]);
		KT_ASSERT(all_zero(page_address(held[i]), PAGE_SIZE << (i % 4)));
	}
	for (int i = 0; i < 2048; i++)
		__free_pages(held[i], (unsigned int)i % 4);
	CHECK_ALL_FREE();
}

static void zero_reporting_on(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(kmem_init("mem=64M page_reporting.delay_ms=0"), 0);
	zero_after_dirty(true);
}

static void zero_reporting_off(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(kmem_init("mem=64M page_reporting.enable=0"), 0);
	zero_after_dirty(false);
}

KTEST(gfp_zero_after_dirtying)
{
	KT_ASSERT_CHILD_OK(kt_fork(zero_reporting_on, NULL));
	KT_ASSERT_CHILD_OK(kt_fork(zero_reporting_off, NULL));
}

/*
 * A dirty page merging with reported buddies makes an unreported block:
 * with reporting off (so nothing re-zeroes it behind our back), the merged
 * MAX_PAGE_ORDER block must be zeroed by __GFP_ZERO.
 */
static void merge_dirty_into_reported(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(kmem_init("mem=16M page_reporting.enable=0"), 0);
	KT_ASSERT_EQ(kt_vmstat("nr_free_reported"), 4096);

	struct page *page = alloc_pages(GFP_KERNEL | __GFP_MOVABLE, 0);
	KT_ASSERT(page);
	char *dirty = page_address(page);
	memset(dirty, 0xff, PAGE_SIZE);
	__free_pages(page, 0);
	drain_local_pages();
	CHECK_ALL_FREE();
	/* 4 MAX_PAGE_ORDER blocks, 3 reported and the merged one not. */
	KT_ASSERT_EQ(kt_vmstat("nr_free_reported"), 3072);

	/* The merged block went to the list head: the first allocation gets it. */
	struct page *block = alloc_pages(GFP_KERNEL | __GFP_MOVABLE | __GFP_ZERO, MAX_PAGE_ORDER);
	KT_ASSERT(block);
	char *a = page_address(block);
	KT_ASSERT(dirty >= a && dirty < a + (PAGE_SIZE << MAX_PAGE_ORDER));
	KT_ASSERT(all_zero(a, PAGE_SIZE << MAX_PAGE_ORDER));
	__free_pages(block, MAX_PAGE_ORDER);
	KT_ASSERT_EQ(kt_vmstat("pgreported"), 0);
	KT_ASSERT_EQ(kt_vmstat("nr_free_reported"), 3072);
	CHECK_ALL_FREE();
}

KTEST(dirty_page_merged_with_reported_buddies)
{
	KT_ASSERT_CHILD_OK(kt_fork(merge_dirty_into_reported, NULL));
}

/* Touch and free @n order-9 blocks. */
static void churn_blocks(int n)
{
	struct page *blocks[NR_BLOCKS];

	if (take_blocks(blocks, n, GFP_KERNEL | __GFP_MOVABLE, 0x3c))
		free_blocks(blocks, n);
}

/* A delay far longer than the test: nothing goes back until a flush. */
/* @arg: the boot line; a delay near 2^64 / 10^6 ms once wrapped to under a millisecond. */
static void long_delay(void *arg)
{
	KT_ASSERT_EQ(kmem_init(arg), 0);
	unsigned long rss0 = kt_rss_bytes();
	churn_blocks(NR_BLOCKS);
	unsigned long rss1 = kt_rss_bytes();
	KT_ASSERT_EQ(kt_vmstat("pgreported"), 0);
	KT_ASSERT_EQ(kt_vmstat("nr_free_reported"), 16384 - NR_BLOCKS * 512);
	KT_ASSERT(rss1 >= rss0 + 28 * MiB);
	/* More frees while pending, a few ms later, do not report either. */
	usleep(5000);
	struct page *page = alloc_pages(GFP_KERNEL, 6);
	KT_ASSERT(page);
	__free_pages(page, 6);
	KT_ASSERT_EQ(kt_vmstat("pgreported"), 0);

	page_reporting_flush();
	unsigned long rss2 = kt_rss_bytes();
	KT_ASSERT(kt_vmstat("pgreported") >= NR_BLOCKS * 512);
	KT_ASSERT_EQ(kt_vmstat("nr_free_reported"), 16384);
	KT_ASSERT(rss2 + 28 * MiB <= rss1);
	CHECK_ALL_FREE();
}

/* A short delay: once it has passed, the next free (of a buddy-list block) reports. */
static void short_delay(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(kmem_init("mem=64M page_reporting.delay_ms=20"), 0);
	churn_blocks(4);
	struct timespec ts = { 0, 60 * 1000000L };
	while (nanosleep(&ts, &ts))
		;
	struct page *page = alloc_pages(GFP_KERNEL, 4);	/* order 4: not a pcp order */
	KT_ASSERT(page);
	__free_pages(page, 4);
	KT_ASSERT(kt_vmstat("pgreported") >= 4 * 512);
	KT_ASSERT_EQ(kt_vmstat("nr_free_reported"), 16384);
	CHECK_ALL_FREE();
}

KTEST(reporting_waits_for_its_delay)
{
	KT_ASSERT_CHILD_OK(kt_fork(long_delay, "mem=64M page_reporting.delay_ms=3600000"));
	KT_ASSERT_CHILD_OK(kt_fork(long_delay, "mem=64M page_reporting.delay_ms=18446744073710"));
	KT_ASSERT_CHILD_OK(kt_fork(short_delay, NULL));
}

/*
 * Without a background thread, a program that frees most of its memory and
 * then sleeps would keep it until the delay has passed and it frees again.
 * So a free that leaves more than half of memory free, with more than
 * 64 MiB of it not yet reported, reports at once; other frees wait.
 * mem=256M: 65536 pages, half 32768; order-9 blocks are 2 MiB.
 */
static void at_once_when_most_is_free(void *arg)
{
	enum { HELD = 112 };	/* 224 MiB */
	static struct page *blocks[HELD];

	(void)arg;
	KT_ASSERT_EQ(kmem_init("mem=256M page_reporting.delay_ms=100000"), 0);
	if (!take_blocks(blocks, HELD, GFP_KERNEL | __GFP_MOVABLE, 0x5a))
		return;
	/* 96 MiB unreported, but free is 32 + 96 = 128 MiB, not more than half: waits. */
	free_blocks(blocks + 64, 48);
	KT_EXPECT(kt_vmstat("pgreported") == 0);
	/* 2 MiB more: more than half is free, 98 MiB of it unreported: at once. */
	free_blocks(blocks + 63, 1);
	KT_EXPECT(kt_vmstat("pgreported") == 49 * 512);
	unsigned long rss1 = kt_rss_bytes();
	/* The other 63 blocks: the free that makes 33 unreported (66 MiB) reports them. */
	free_blocks(blocks, 63);
	unsigned long rss2 = kt_rss_bytes();
	fprintf(stderr, "  most memory free: RSS %lu -> %lu KiB\n", rss1 >> 10, rss2 >> 10);
	KT_EXPECT(kt_vmstat("pgreported") == (49 + 33) * 512);
	KT_EXPECT(rss2 + 60 * MiB < rss1);
	CHECK_ALL_FREE();
}

KTEST(reports_at_once_when_most_memory_is_free)
{
	KT_ASSERT_CHILD_OK(kt_fork(at_once_when_most_is_free, NULL));
}

/*
 * ...but only memory a pass can give back counts: with 117 MiB free in
 * order-0 fragments (a checkerboard) and more than half of memory free,
 * churning a 2 MiB block still waits for the delay rather than paying an
 * madvise and 512 refaults a cycle.
 */
static void fragments_do_not_count(void *arg)
{
	enum { N = 60000 };
	static struct page *pg[N];
	int n = 0;

	(void)arg;
	KT_ASSERT_EQ(kmem_init("mem=256M page_reporting.delay_ms=100000"), 0);
	while (n < N && (pg[n] = alloc_pages_nopcp(GFP_KERNEL | __GFP_NOWARN, 0)) != NULL)
		memset(page_address(pg[n++]), 1, PAGE_SIZE);
	KT_ASSERT(n > 50000);
	for (int i = 0; i < n; i += 2)
		__free_pages(pg[i], 0);
	drain_local_pages();
	KT_ASSERT((unsigned long)kt_vmstat("nr_free_pages") > mm_online_pages() / 2);
	long rep0 = kt_vmstat("pgreported");
	for (int i = 0; i < 50; i++) {
		struct page *p = alloc_pages(GFP_KERNEL, BLOCK_ORDER);
		KT_ASSERT(p);
		memset(page_address(p), 2, BLOCK_BYTES);
		__free_pages(p, BLOCK_ORDER);
	}
	KT_EXPECT(kt_vmstat("pgreported") == rep0);
	for (int i = 1; i < n; i += 2)
		__free_pages(pg[i], 0);
	CHECK_ALL_FREE();
}

KTEST(churn_with_fragments_free_waits)
{
	KT_ASSERT_CHILD_OK(kt_fork(fragments_do_not_count, NULL));
}

/*
 * When the OS refuses to take memory back (mlockall: madvise fails), a
 * pass gives up; the at-once rule must not then run a failing pass on
 * every high-order free (about 70x slower churn), only after a delay.
 * Counted with the pass hook.  Skipped where mlockall is not allowed.
 */
static atomic_long passes;

static void count_pass(long nr_pages)
{
	(void)nr_pages;
	atomic_fetch_add(&passes, 1);
}

static void refused_pass_child(void *arg)
{
	(void)arg;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* mlockall would try to lock the sanitizer's terabytes of shadow. */
	fprintf(stderr, "  mlockall under a sanitizer: case skipped\n");
	return;
#endif
	KT_ASSERT_EQ(kmem_init("kmem.max_mem=512M kmem.mem_block=64M kmem.mem_first=0 page_reporting.delay_ms=100000"), 0);
	if (mlockall(MCL_CURRENT | MCL_FUTURE)) {
		fprintf(stderr, "  mlockall: %s: case skipped\n", strerror(errno));
		return;
	}
	struct page *p[60];
	for (int i = 0; i < 60; i++)
		KT_ASSERT((p[i] = alloc_pages(GFP_KERNEL, BLOCK_ORDER)) != NULL);
	page_reporting_isolated_hook = count_pass;
	for (int i = 0; i < 60; i++)
		__free_pages(p[i], BLOCK_ORDER);	/* most memory free: at once, refused */
	long after_free = atomic_load(&passes);
	for (int i = 0; i < 2000; i++) {
		struct page *q = alloc_pages(GFP_KERNEL, BLOCK_ORDER);
		KT_ASSERT(q);
		__free_pages(q, BLOCK_ORDER);
	}
	page_reporting_isolated_hook = NULL;
	fprintf(stderr, "  mlocked: %ld pass(es) at the frees, %ld in 2000 churns after\n",
		after_free, atomic_load(&passes) - after_free);
	KT_EXPECT(atomic_load(&passes) - after_free <= 1);
	KT_EXPECT(kt_vmstat("pgreported") == 0);
}

KTEST(refused_pass_backs_off)
{
	KT_ASSERT_CHILD_OK(kt_fork(refused_pass_child, NULL));
}

/*
 * page_reporting_idle() (malloc_trim(), the malloc reaper) reports free
 * blocks below page_reporting_order too: order-0 pages, every other one
 * free so that none merges, are given back and refault as zeroes.
 */
static void idle_reports_small_blocks(void *arg)
{
	enum { N = 4096 };
	static struct page *pg[N];

	(void)arg;
	KT_ASSERT_EQ(kmem_init("mem=64M page_reporting.delay_ms=100000"), 0);
	for (int i = 0; i < N; i++) {
		KT_ASSERT((pg[i] = alloc_pages(GFP_KERNEL, 0)) != NULL);
		memset(page_address(pg[i]), 0x5a, PAGE_SIZE);
	}
	drain_local_pages();
	unsigned long rss1 = kt_rss_bytes();
	long reported0 = kt_vmstat("pgreported");
	int freed = 0;
	for (int i = 0; i < N; i++) {
		/* Free only pages whose buddy stays allocated: no order-1 block forms. */
		if (pg[i] && !(page_to_pfn(pg[i]) & 1)) {
			__free_pages(pg[i], 0);
			pg[i] = NULL;
			freed++;
		}
	}
	drain_local_pages();
	page_reporting_flush();		/* order >= 9 only: none of these */
	reported0 = kt_vmstat("pgreported");
	rss1 = kt_rss_bytes();
	page_reporting_idle(0);
	long reported = kt_vmstat("pgreported") - reported0;
	unsigned long rss2 = kt_rss_bytes();
	fprintf(stderr, "  idle pass: %d pages freed apart, %ld reported, RSS %lu -> %lu KiB\n",
		freed, reported, rss1 >> 10, rss2 >> 10);
	KT_ASSERT(freed >= N / 4);
	KT_ASSERT(reported >= freed);
	KT_ASSERT(rss2 + (unsigned long)freed * PAGE_SIZE / 2 <= rss1);
	/* They come back as zeroes under __GFP_ZERO, and allocate normally. */
	for (int i = 0; i < N; i++)
		if (!pg[i]) {
			KT_ASSERT((pg[i] = alloc_pages(GFP_KERNEL | __GFP_ZERO, 0)) != NULL);
			KT_ASSERT(all_zero(page_address(pg[i]), PAGE_SIZE));
		}
	for (int i = 0; i < N; i++)
		__free_pages(pg[i], 0);
	CHECK_ALL_FREE();
}

KTEST(idle_pass_reports_small_blocks)
{
	KT_ASSERT_CHILD_OK(kt_fork(idle_reports_small_blocks, NULL));
}

static void reporting_disabled(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(kmem_init("mem=64M page_reporting.enable=0 page_reporting.delay_ms=0"), 0);
	KT_ASSERT(!page_reporting_enabled);

	struct page *blocks[NR_BLOCKS];
	if (!take_blocks(blocks, NR_BLOCKS, GFP_KERNEL | __GFP_MOVABLE, 0xa5))
		return;
	unsigned long rss1 = kt_rss_bytes();
	free_blocks(blocks, NR_BLOCKS);
	unsigned long rss2 = kt_rss_bytes();
	fprintf(stderr, "  reporting off: RSS %lu -> %lu KiB after freeing 32 MiB\n",
		rss1 >> 10, rss2 >> 10);
	KT_ASSERT_EQ(kt_vmstat("pgreported"), 0);
	/* Only the half never touched is still reported. */
	KT_ASSERT_EQ(kt_vmstat("nr_free_reported"), 16384 - NR_BLOCKS * 512);
	KT_ASSERT(rss2 + 4 * MiB >= rss1);
	/* The dirty blocks come back zeroed all the same. */
	if (!take_blocks(blocks, NR_BLOCKS, GFP_KERNEL | __GFP_MOVABLE | __GFP_ZERO, -1))
		return;
	free_blocks(blocks, NR_BLOCKS);
	CHECK_ALL_FREE();
}

KTEST(page_reporting_enable_0)
{
	KT_ASSERT_CHILD_OK(kt_fork(reporting_disabled, NULL));
}

KTEST_MAIN((void)0)
