// SPDX-License-Identifier: MIT
/*
 * Running out of memory, like a small machine.
 *
 * mem=32M (8192 pages; min_free_kbytes = int_sqrt(32768 * 16) = 724, so the
 * min watermark is 181 pages; pcp batch 1, high 113 with nr_cpus=2):
 *  - GFP_KERNEL order-0 allocations succeed until the free pages reach the
 *    min watermark: the count lies between managed - min - pcp slack and
 *    managed, and pages are conserved exactly;
 *  - GFP_ATOMIC (__GFP_HIGH, cannot block) then still gets pages, down to
 *    its own limit min - min/2 - (min - min/2)/4 = 69, and no further;
 *  - freeing everything restores buddyinfo exactly.
 *
 * __GFP_NOFAIL on that full machine waits, and gets its page once another
 * thread frees.
 *
 * Growable memory (no mem=; kmem.max_mem=64M kmem.mem_block=8M): memory is
 * brought online 8 MiB at a time, only when needed (managed grows, vmstat
 * memory_hotplug_pages counts it), and allocations fail at 64 MiB.  Growth
 * stands in for reclaim: an allocation that may not reclaim (SLUB's try at
 * a slab's preferred order) does not grow memory, so when free memory is
 * fragmented a new slab falls back to its minimum order and uses it.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <kmem.h>

#include "page_alloc/mm.h"
#include "page_alloc/pcp.h"
#include "slab/slab.h"
#include "slab/slub/slub.h"

#include "lib/kt_util.h"
#include "lib/mm_check.h"
#include "ktest.h"
#include "lib/slab_test.h"

#define MAX_PAGES 20000

static struct page *pages[MAX_PAGES];
static unsigned int orders[MAX_PAGES];
static int nr_pages;

static void hold(struct page *page, unsigned int order)
{
	if (nr_pages < MAX_PAGES) {
		orders[nr_pages] = order;
		pages[nr_pages++] = page;
	}
}

/*
 * Allocate @order blocks with @gfp (no warning) until that fails, holding
 * each; returns how many.  Fails the case and returns -1 if more than
 * MAX_PAGES blocks would be held.
 */
static long hold_until_failure(gfp_t gfp, unsigned int order)
{
	struct page *page;
	long n = 0;

	while ((page = alloc_pages(gfp | __GFP_NOWARN, order)) != NULL) {
		if (nr_pages >= MAX_PAGES) {
			KT_FAIL("more than %d order-%u blocks (gfp %#x) allocated", MAX_PAGES,
				order, (unsigned int)gfp);
			return -1;
		}
		hold(page, order);
		n++;
	}
	return n;
}

static void release_all(void)
{
	while (nr_pages) {
		nr_pages--;
		__free_pages(pages[nr_pages], orders[nr_pages]);
	}
	drain_local_pages();
}

/* @managed pages in the zone, all of them free (mm_check.h). */
#define CHECK_ALL_FREE(managed) do {						\
	KT_ASSERT_EQ(zone_managed_pages(&zone_normal), managed);		\
	KT_ASSERT_ALL_FREE();							\
} while (0)

static long pcp_pages(void)
{
	return this_pcp ? pcp_read_count(this_pcp) : 0;
}

static void small_machine(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(slab_test_init("mem=32M nr_cpus=2"), 0);
	const long managed = 8192;
	KT_ASSERT_EQ(kt_zoneinfo("managed"), managed);
	const long min = kt_zoneinfo("min");
	KT_ASSERT_EQ(min, 181);
	/* (the pcp lists exist once the first page is allocated) */
	char *before = kt_read("/proc/buddyinfo", NULL);

	/* GFP_KERNEL until it fails. */
	long n = hold_until_failure(GFP_KERNEL, 0);
	KT_ASSERT(n >= 0);
	long free_k = kt_vmstat("nr_free_pages");
	const long high = kt_zoneinfo("high:"), batch = kt_zoneinfo("batch:");
	fprintf(stderr, "  GFP_KERNEL: %ld pages, then %ld free (min %ld, pcp high %ld batch %ld)\n",
		n, free_k, min, high, batch);
	KT_ASSERT_EQ(high, 113);
	KT_ASSERT_EQ(batch, 1);
	KT_ASSERT(n <= managed);
	KT_ASSERT(n >= managed - min - high);
	KT_ASSERT_EQ(pcp_pages(), 0);		/* given back before failing */
	KT_ASSERT_EQ(n + free_k, managed);	/* conserved */
	/* Refills pass the check with free > min and then take a batch. */
	KT_ASSERT(free_k <= min);
	KT_ASSERT(free_k >= min - (batch - 1));

	/* GFP_ATOMIC dips below min, down to its own limit. */
	long atomic_limit = min - min / 2;
	atomic_limit -= atomic_limit / 4;
	KT_ASSERT_EQ(atomic_limit, 69);
	long m = hold_until_failure(GFP_ATOMIC, 0);
	KT_ASSERT(m >= 0);
	long free_a = kt_vmstat("nr_free_pages");
	fprintf(stderr, "  GFP_ATOMIC: %ld more pages, then %ld free (limit %ld)\n",
		m, free_a, atomic_limit);
	KT_ASSERT(m > 0);
	KT_ASSERT_EQ(pcp_pages(), 0);
	KT_ASSERT_EQ(n + m + free_a, managed);
	KT_ASSERT(free_a <= atomic_limit);
	KT_ASSERT(free_a >= atomic_limit - (batch - 1));
	KT_ASSERT(m >= free_k - atomic_limit);

	/* Nothing else gets through now. */
	KT_ASSERT(alloc_pages(GFP_KERNEL | __GFP_NOWARN, 0) == NULL);
	KT_ASSERT(alloc_pages(GFP_KERNEL | __GFP_HIGH | __GFP_NOWARN, 0) == NULL);
	KT_ASSERT(alloc_pages(GFP_ATOMIC | __GFP_NOWARN, 0) == NULL);
	KT_ASSERT(alloc_pages(GFP_ATOMIC | __GFP_NOWARN, 3) == NULL);
	KT_ASSERT_EQ(kt_vmstat("nr_free_pages"), free_a);

	/* Everything back: the machine is as it booted. */
	release_all();
	CHECK_ALL_FREE((unsigned long)managed);
	char *after = kt_read("/proc/buddyinfo", NULL);
	KT_ASSERT_STREQ(after, before);
	free(before);
	free(after);
}

KTEST(small_machine_exhaustion)
{
	KT_ASSERT_CHILD_OK(kt_fork(small_machine, NULL));
}

/* Same with high orders: order-10 blocks until the watermark stops them. */
static void small_machine_high_order(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(slab_test_init("mem=32M"), 0);
	long n = hold_until_failure(GFP_KERNEL, MAX_PAGE_ORDER);
	/* 8 blocks; the 8th would leave 0 <= min free pages. */
	KT_ASSERT_EQ(n, 7);
	KT_ASSERT_EQ(kt_vmstat("nr_free_pages"), 1024);
	/* Smaller requests still fit. */
	struct page *page = alloc_pages(GFP_KERNEL | __GFP_NOWARN, 9);
	KT_ASSERT(page);
	hold(page, 9);
	release_all();
	CHECK_ALL_FREE(8192);
}

KTEST(small_machine_high_orders)
{
	KT_ASSERT_CHILD_OK(kt_fork(small_machine_high_order, NULL));
}

#define MAX_STEPS 64

static void growable(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(slab_test_init("kmem.max_mem=64M kmem.mem_block=8M kmem.mem_first=0 nr_cpus=2"), 0);
	KT_ASSERT_EQ(kt_zoneinfo("managed"), 2048);		/* one 8 MiB block */
	KT_ASSERT_EQ(kt_vmstat("memory_hotplug_pages"), 0);

	long seen[MAX_STEPS];
	int steps = 0;
	seen[steps++] = 2048;
	struct page *page;
	long n = 0;
	while ((page = alloc_pages(GFP_KERNEL | __GFP_NOWARN, 0)) != NULL) {
		KT_ASSERT(nr_pages < MAX_PAGES);
		hold(page, 0);
		n++;
		if (n == 1500)	/* on demand only: 8 MiB still suffice */
			KT_ASSERT_EQ(kt_zoneinfo("managed"), 2048);
		if (n % 256 == 0) {
			long managed = kt_zoneinfo("managed");
			if (managed != seen[steps - 1]) {
				KT_ASSERT(steps < MAX_STEPS);
				/* grows by whole memory blocks, never shrinks */
				KT_ASSERT_EQ(managed - seen[steps - 1], 2048);
				seen[steps++] = managed;
			}
		}
	}
	fprintf(stderr, "  growable: %ld pages allocated, %d managed sizes seen\n", n, steps);
	KT_ASSERT_EQ(kt_zoneinfo("managed"), 16384);	/* stopped at kmem.max_mem */
	KT_ASSERT_EQ(kt_zoneinfo("present"), 16384);
	KT_ASSERT_EQ(kt_vmstat("memory_hotplug_pages"), 16384 - 2048);
	KT_ASSERT(steps >= 4);
	long min = kt_zoneinfo("min");
	long high = kt_zoneinfo("high:");
	KT_ASSERT_EQ(min, 256);		/* int_sqrt(65536 * 16) / 4: recomputed on growth */
	KT_ASSERT(n <= 16384 && n >= 16384 - min - high);
	KT_ASSERT(alloc_pages(GFP_KERNEL | __GFP_NOWARN, 0) == NULL);
	KT_ASSERT(alloc_pages(GFP_KERNEL | __GFP_NOWARN, MAX_PAGE_ORDER) == NULL);

	release_all();
	CHECK_ALL_FREE(16384);
	/* Growth is permanent: the memory stays online, free. */
	KT_ASSERT_EQ(kt_zoneinfo("managed"), 16384);
	page = alloc_pages(GFP_KERNEL, MAX_PAGE_ORDER);
	KT_ASSERT(page);
	__free_pages(page, MAX_PAGE_ORDER);
}

KTEST(growable_memory)
{
	KT_ASSERT_CHILD_OK(kt_fork(growable, NULL));
}

/* A high-order request larger than a memory block grows memory enough for it. */
static void growable_high_order(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(slab_test_init("kmem.max_mem=32M kmem.mem_block=4M kmem.mem_first=0"), 0);
	KT_ASSERT_EQ(kt_zoneinfo("managed"), 1024);
	long n = hold_until_failure(GFP_KERNEL, MAX_PAGE_ORDER);
	KT_ASSERT_EQ(kt_zoneinfo("managed"), 8192);
	KT_ASSERT_EQ(n, 7);
	KT_ASSERT_EQ(kt_vmstat("memory_hotplug_pages"), 8192 - 1024);
	release_all();
	CHECK_ALL_FREE(8192);
}

KTEST(growable_memory_high_orders)
{
	KT_ASSERT_CHILD_OK(kt_fork(growable_high_order, NULL));
}

/*
 * __GFP_NOFAIL on a full machine does not fail: it waits until another
 * thread frees memory.  GFP_ATOMIC has taken the pages down to its own
 * limit (69), below the half of the min reserve (91) a NOFAIL retry may
 * use, so the waiter cannot take them and must wait for the frees.
 */
static atomic_int nofail_state;		/* 1: about to allocate, 2: returned */
static struct page *nofail_page;

static void *nofail_waiter(void *arg)
{
	(void)arg;
	atomic_store(&nofail_state, 1);
	nofail_page = alloc_pages(GFP_KERNEL | __GFP_NOFAIL, 0);
	atomic_store(&nofail_state, 2);
	return NULL;
}

static void nofail(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(slab_test_init("mem=32M nr_cpus=2"), 0);
	struct page *page;

	/* With memory there, NOFAIL is a plain allocation. */
	page = alloc_pages(GFP_KERNEL | __GFP_NOFAIL, 0);
	KT_ASSERT(page);
	__free_pages(page, 0);

	KT_ASSERT(hold_until_failure(GFP_ATOMIC, 0) >= 0);
	KT_ASSERT(alloc_pages(GFP_KERNEL | __GFP_HIGH | __GFP_NOWARN, 0) == NULL);
	long fails = kt_vmstat("pgalloc_fail");

	pthread_t th;
	KT_ASSERT_EQ(pthread_create(&th, NULL, nofail_waiter, NULL), 0);
	while (atomic_load(&nofail_state) == 0)
		sched_yield();
	usleep(50 * 1000);
	KT_EXPECT(atomic_load(&nofail_state) == 1);	/* still waiting, not failed */

	release_all();			/* to this thread's pcp lists, then the buddy lists */
	KT_ASSERT_EQ(pthread_join(th, NULL), 0);
	KT_EXPECT(atomic_load(&nofail_state) == 2);
	KT_ASSERT(nofail_page);
	KT_EXPECT(kt_vmstat("pgalloc_fail") == fails);	/* never counted as failed */
	__free_pages(nofail_page, 0);
	drain_local_pages();
	CHECK_ALL_FREE(8192);
}

KTEST(nofail_waits_for_memory)
{
	KT_ASSERT_CHILD_OK(kt_fork(nofail, NULL));
}

/* The first number of a sysfs file of @cache ("<total> C0=..." for counters). */
static long slab_attr(const char *cache, const char *attr)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", cache, attr);
	char *text = kt_read_checked(path);
	long v = text ? strtol(text, NULL, 10) : -1;
	free(text);
	return v;
}

/*
 * Free memory in order-0 fragments only (every held page's buddy is held):
 * a 4 KiB-object cache (preferred order 3, minimum order 0) builds its new
 * slab out of a fragment instead of growing memory, and counts the
 * fallback.  With memory free in larger blocks it gets order 3 again.
 */
static void fragments_before_growth(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(slab_test_init("kmem.max_mem=64M kmem.mem_block=8M kmem.mem_first=0 nr_cpus=2"), 0);
	/* SLUB's order fallback: a SLAB cache has one order. */
	if (!slab_test_is_slub())
		return;
	struct kmem_cache *s = kmem_cache_create("kt_frag4k", 4096, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(s);
	void *x = kmem_cache_alloc(s, GFP_KERNEL);
	KT_ASSERT(x);
	KT_ASSERT_EQ(compound_order(slab_page(virt_to_slab(x))), 3);
	kmem_cache_free(s, x);
	kmem_cache_shrink(s);
	KT_ASSERT_EQ(slab_attr("kt_frag4k", "slabs"), 0);
	KT_ASSERT_EQ(kt_zoneinfo("managed"), 2048);

	/* A quiet try: takes the free pages, never grows memory. */
	const gfp_t quiet = __GFP_NORETRY;
	KT_ASSERT(hold_until_failure(quiet, 0) > 1500);
	KT_ASSERT_EQ(kt_zoneinfo("managed"), 2048);
	/* Give back the even pages: their odd buddies stay held. */
	for (int i = 0; i < nr_pages; i++)
		if (!(page_to_pfn(pages[i]) & 1)) {
			__free_pages(pages[i], 0);
			pages[i--] = pages[--nr_pages];
		}
	drain_local_pages();
	/* What was left free beyond the watermark may hold larger blocks: take those. */
	for (int order = MAX_PAGE_ORDER; order >= 1; order--)
		KT_ASSERT(hold_until_failure(quiet | __GFP_HIGH, (unsigned int)order) >= 0);
	drain_local_pages();
	long free_pages = kt_vmstat("nr_free_pages");
	KT_ASSERT(free_pages > 500);

	long fallbacks = slab_attr("kt_frag4k", "order_fallback");
	x = kmem_cache_alloc(s, GFP_KERNEL);
	KT_ASSERT(x);
	KT_EXPECT(kt_zoneinfo("managed") == 2048);	/* not grown: fragments sufficed */
	KT_EXPECT(compound_order(slab_page(virt_to_slab(x))) == 0);
	/* One or more (a sheaf refill may build several slabs), all counted. */
	long after = slab_attr("kt_frag4k", "order_fallback");
	KT_EXPECT(after > fallbacks);
	KT_EXPECT(after == slab_attr("kt_frag4k", "slabs"));

	/* Whole blocks free again: new slabs have the preferred order. */
	kmem_cache_free(s, x);
	kmem_cache_shrink(s);
	KT_ASSERT_EQ(slab_attr("kt_frag4k", "slabs"), 0);
	release_all();
	void *y = kmem_cache_alloc(s, GFP_KERNEL);
	KT_ASSERT(y);
	KT_EXPECT(compound_order(slab_page(virt_to_slab(y))) == 3);
	KT_EXPECT(slab_attr("kt_frag4k", "order_fallback") == after);
	kmem_cache_free(s, y);
	kmem_cache_destroy(s);
}

KTEST(slab_uses_fragments_before_memory_grows)
{
	KT_ASSERT_CHILD_OK(kt_fork(fragments_before_growth, NULL));
}

/* Requests that are not quiet tries still grow memory, or drain the pcp lists. */
static void only_quiet_tries_do_not_grow(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(slab_test_init("kmem.max_mem=64M kmem.mem_block=8M kmem.mem_first=0 nr_cpus=2"), 0);
	KT_ASSERT(hold_until_failure(__GFP_NORETRY, 0) > 1500);
	KT_ASSERT_EQ(kt_zoneinfo("managed"), 2048);

	/* gfp 0 (no reclaim bits, but no __GFP_NORETRY): grows. */
	struct page *page = alloc_pages(__GFP_NOWARN, 0);
	KT_ASSERT(page);
	hold(page, 0);
	KT_EXPECT(kt_zoneinfo("managed") == 4096);
	/* A bare __GFP_NOFAIL on full memory: grows, does not wait. */
	KT_ASSERT(hold_until_failure(__GFP_NORETRY, 0) > 1500);
	KT_ASSERT_EQ(kt_zoneinfo("managed"), 4096);
	page = alloc_pages(__GFP_NOFAIL, 0);
	KT_ASSERT(page);
	hold(page, 0);
	KT_EXPECT(kt_zoneinfo("managed") == 6144);
	release_all();
}

static void no_reclaim_bits_still_drain_pcp(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(slab_test_init("mem=32M nr_cpus=2"), 0);
	KT_ASSERT(hold_until_failure(GFP_ATOMIC, 0) > 0);
	/* Unmovable pages onto this thread's pcp lists: a movable request needs them drained. */
	for (int i = 0; i < 50; i++) {
		nr_pages--;
		__free_pages(pages[nr_pages], orders[nr_pages]);
	}
	struct page *page = alloc_pages(__GFP_HIGH | __GFP_MOVABLE | __GFP_NOWARN, 0);
	KT_EXPECT(page != NULL);
	if (page)
		__free_pages(page, 0);
	release_all();
}

/* Memory used up (mem=): a failed fallback is no fallback. */
static void failed_fallback_not_counted(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(slab_test_init("mem=32M nr_cpus=2"), 0);
	struct kmem_cache *s = kmem_cache_create("kt_full4k", 4096, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(s);
	KT_ASSERT(hold_until_failure(GFP_ATOMIC, 0) > 0);
	for (int i = 0; i < 5; i++)
		KT_EXPECT(kmem_cache_alloc(s, GFP_KERNEL | __GFP_NOWARN) == NULL);
	if (slab_test_is_slub()) {	/* /sys/kernel/slab is SLUB's */
		KT_EXPECT(slab_attr("kt_full4k", "slabs") == 0);
		KT_EXPECT(slab_attr("kt_full4k", "order_fallback") == 0);
	}
	release_all();
	kmem_cache_destroy(s);
}

KTEST(growth_is_refused_only_to_quiet_tries)
{
	KT_ASSERT_CHILD_OK(kt_fork(only_quiet_tries_do_not_grow, NULL));
	KT_ASSERT_CHILD_OK(kt_fork(no_reclaim_bits_still_drain_pcp, NULL));
	KT_ASSERT_CHILD_OK(kt_fork(failed_fallback_not_counted, NULL));
}

/*
 * Threads that fail the watermark together grow memory once, not once
 * each (memory never shrinks).  Each run: fill memory with quiet tries,
 * then four threads ask for 64 KiB at the same moment.
 */
#define GROW_THREADS 4
static pthread_barrier_t grow_barrier;

static void *grow_allocator(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&grow_barrier);
	return alloc_pages(GFP_KERNEL, 4);
}

static void grow_once(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(slab_test_init("kmem.mem_block=64M kmem.mem_first=0 kmem.max_mem=4G"), 0);
	for (int o = MAX_PAGE_ORDER; o >= 4; o--)
		while (alloc_pages(__GFP_NORETRY | __GFP_NOWARN, (unsigned int)o))
			;
	KT_ASSERT_EQ(kt_vmstat("memory_hotplug_pages"), 0);
	pthread_barrier_init(&grow_barrier, NULL, GROW_THREADS);
	pthread_t t[GROW_THREADS];
	void *got[GROW_THREADS];
	for (int i = 0; i < GROW_THREADS; i++)
		KT_ASSERT_EQ(pthread_create(&t[i], NULL, grow_allocator, NULL), 0);
	for (int i = 0; i < GROW_THREADS; i++) {
		pthread_join(t[i], &got[i]);
		KT_EXPECT(got[i] != NULL);
	}
	KT_EXPECT(kt_vmstat("memory_hotplug_pages") == 16384);	/* one 64 MiB step */
}

KTEST(threads_failing_together_grow_memory_once)
{
	for (int run = 0; run < 12; run++)
		KT_ASSERT_CHILD_OK(kt_fork(grow_once, NULL));
}

/*
 * A reporting pass takes blocks off the free lists while the OS is told.
 * Allocations meanwhile must not grow memory for them (it would stay for
 * good): the pass leaves the free pages above the high watermark, so an
 * ordinary allocation passes its watermark, and one that still fails (no
 * free block of its order: all are isolated) waits for the pass before it
 * may grow.  page_reporting_isolated_hook runs inside the pass.
 */
static atomic_int during_go, during_done;
static atomic_long during_free, during_high, during_isolated;
static unsigned int during_order;

static void *allocate_during_report(void *arg)
{
	(void)arg;
	while (!atomic_load(&during_go))
		sched_yield();
	struct page *page = alloc_pages(GFP_KERNEL, during_order);
	atomic_store(&during_done, 1);
	return page;
}

/* In the pass: note the headroom, let the other thread allocate. */
static void during_hook(long nr_pages)
{
	if (atomic_exchange(&during_go, 1))
		return;		/* the first batch only */
	atomic_store(&during_isolated, nr_pages);
	atomic_store(&during_free, kt_vmstat("nr_free_pages"));
	atomic_store(&during_high, kt_zoneinfo("high"));
	/*
	 * An order-0 allocation needs no wait: it must be done while isolated.
	 * An order-10 one waits for the pass (our caller): give it the time it
	 * would take to grow memory instead.
	 */
	for (int i = 0; i < (during_order ? 100 : 2000) && !atomic_load(&during_done); i++)
		usleep(1000);
}

static void no_growth_for_a_pass(void *arg)
{
	during_order = (unsigned int)(uintptr_t)arg;
	KT_ASSERT_EQ(slab_test_init("kmem.mem_block=64M kmem.mem_first=0 kmem.max_mem=1G page_reporting.delay_ms=3600000"), 0);
	const gfp_t quiet = __GFP_NORETRY | __GFP_NOWARN;
	struct page *big[64];
	int nb = 0;
	while (nb < 64 && (big[nb] = alloc_pages(quiet, MAX_PAGE_ORDER)) != NULL)
		memset(page_address(big[nb++]), 1, PAGE_SIZE << MAX_PAGE_ORDER);
	for (int o = MAX_PAGE_ORDER - 1; o >= 4; o--)
		while (alloc_pages(quiet, (unsigned int)o))
			;
	for (int i = 0; i < nb; i++)
		__free_pages(big[i], MAX_PAGE_ORDER);	/* touched: unreported, pending */
	long managed = kt_zoneinfo("managed");

	pthread_t t;
	void *page;
	KT_ASSERT_EQ(pthread_create(&t, NULL, allocate_during_report, NULL), 0);
	page_reporting_isolated_hook = during_hook;
	page_reporting_flush();
	page_reporting_isolated_hook = NULL;
	atomic_store(&during_go, 1);	/* in case no pass ran */
	pthread_join(t, &page);
	KT_ASSERT(atomic_load(&during_isolated) > 0);
	fprintf(stderr, "  order-%u allocation during a pass: %ld pages isolated, %ld free, high %ld\n",
		during_order, atomic_load(&during_isolated), atomic_load(&during_free),
		atomic_load(&during_high));
	KT_EXPECT(atomic_load(&during_free) >= atomic_load(&during_high));
	if (during_order == 0)
		KT_EXPECT(atomic_load(&during_done));	/* without waiting for the pass */
	KT_EXPECT(page != NULL);
	KT_EXPECT(kt_zoneinfo("managed") == managed);
	KT_EXPECT(kt_vmstat("pgreported") > 0);
}

KTEST(allocation_during_a_reporting_pass_does_not_grow)
{
	/* Order 0 passes its watermark; order 10 has no free block then, and waits. */
	KT_ASSERT_CHILD_OK(kt_fork(no_growth_for_a_pass, (void *)(uintptr_t)0));
	KT_ASSERT_CHILD_OK(kt_fork(no_growth_for_a_pass, (void *)(uintptr_t)MAX_PAGE_ORDER));
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
/*
 * Under an address-space limit (ulimit -v) growable memory reserves its
 * address space as it comes online, at addresses far from the program's
 * mappings (mm_model.lazy): right after boot the process maps little, the
 * program's own mappings get what memory does not use, and memory grows
 * until the limit stops it.  (A fixed share reserved ahead failed one way
 * or the other: a quarter of the limit starved small blocks, three
 * quarters starved thread stacks.)
 * Not under the sanitizers: their shadow memory needs an unlimited space.
 */

static void reserve_under_rlimit_as(void *arg)
{
	(void)arg;
	struct rlimit rl = { 4UL << 30, 4UL << 30 };
	KT_ASSERT_EQ(setrlimit(RLIMIT_AS, &rl), 0);
	KT_ASSERT_EQ(slab_test_init(""), 0);
	KT_EXPECT(mm_model.lazy);
	KT_EXPECT(kt_proc_status_kb("VmSize") < 512 * 1024);		/* not gigabytes reserved ahead */
	/* Most of the space is there for the program's mappings... */
	void *m = mmap(NULL, 3UL << 30, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	KT_EXPECT(m != MAP_FAILED);
	if (m != MAP_FAILED)
		munmap(m, 3UL << 30);
	/* ... or for memory, which grows in steps of a sixteenth of the limit. */
	struct page *pages[512];
	int n = 0;
	unsigned long online = mm_online_pages();
	while (n < 512 && (pages[n] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, MAX_PAGE_ORDER)) != NULL)
		n++;
	KT_EXPECT(n == 512);			/* 2 GiB of the 4 in 4 MiB blocks */
	KT_EXPECT(mm_online_pages() > online);
	/* Nothing is reserved ahead, so nothing to give back to a mapping. */
	KT_EXPECT(!mm_give_back_reserve(4UL << 20));
	for (int i = 0; i < n; i++)
		__free_pages(pages[i], MAX_PAGE_ORDER);
}

KTEST(address_space_limit_leaves_room)
{
	KT_ASSERT_CHILD_OK(kt_fork(reserve_under_rlimit_as, NULL));
}

/*
 * A program that used up every pthread key before kmem booted still gets
 * memory (before, the boot failed and every allocation with it): kmem
 * warns that threads' caches stay with them when they exit.
 */
static void *alloc_and_exit(void *arg)
{
	void **out = arg;

	*out = kmalloc(100, GFP_KERNEL);
	return NULL;
}

static void boot_without_keys(void *arg)
{
	(void)arg;
	pthread_key_t k;
	int n = 0;
	while (!pthread_key_create(&k, NULL))
		n++;
	KT_ASSERT(n > 0);
	int rc;
	char *out = kt_init_captured("mem=64M", &rc);
	KT_ASSERT_EQ(rc, 0);
	KT_EXPECT(out && strstr(out, "no pthread key left"));
	free(out);
	void *p = kmalloc(100, GFP_KERNEL);
	KT_ASSERT(p);
	struct page *page = alloc_pages(GFP_KERNEL, 0);
	KT_ASSERT(page);
	__free_pages(page, 0);
	void *q = NULL;
	pthread_t t;
	KT_ASSERT_EQ(pthread_create(&t, NULL, alloc_and_exit, &q), 0);
	pthread_join(t, NULL);
	KT_ASSERT(q);
	kfree(q);
	kfree(p);
}

KTEST(boots_with_no_pthread_key_left)
{
	KT_ASSERT_CHILD_OK(kt_fork(boot_without_keys, NULL));
}
#endif

KTEST_MAIN((void)0)
