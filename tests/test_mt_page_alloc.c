// SPDX-License-Identifier: MIT
/*
 * The page allocator under concurrency (also run under ThreadSanitizer).
 *
 *  - 4 threads allocate blocks of random orders 0..4 and migratetypes,
 *    free some themselves and hand others to each other through locked
 *    inboxes, so pages allocated on one thread's pcp lists are freed onto
 *    another's.  A shared per-page owner map (compare-and-swap) catches any
 *    block handed out twice; a pattern derived from each block's id catches
 *    corruption.  When the threads exit their pcp lists go back to the
 *    buddy lists: after joining, mm_check() and /proc/buddyinfo show all
 *    memory free in MAX_PAGE_ORDER blocks.  Meanwhile a fifth thread reads
 *    the /proc files and rewrites a sysctl.
 *  - 200 short-lived threads, each allocating and exiting (some of their
 *    pages freed by the main thread after they are gone), leave no pages
 *    and no per-thread state behind.
 *
 * 200k operations per thread, 100k under TSan (KMEM_MT_OPS overrides).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "page_alloc/mm.h"
#include "page_alloc/pcp.h"

#include "lib/kt_util.h"
#include "lib/mm_check.h"
#include "ktest.h"

#if defined(__SANITIZE_THREAD__)
#define KMEM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KMEM_TSAN 1
#endif
#endif

#ifdef KMEM_TSAN
#define DEFAULT_OPS 100000UL	/* ~3 s here under TSan; 200k took ~7 s */
#else
#define DEFAULT_OPS 200000UL
#endif

#define CMDLINE		"mem=128M nr_cpus=4"
#define NTHREADS	4
#define MAX_LOCAL	256
#define MAX_ORDER_MT	4

struct block {
	struct page *page;
	unsigned int order;
	uint64_t id;
};

struct inbox {
	pthread_mutex_t lock;
	struct block items[4 * MAX_LOCAL];
	int n;
};

static struct inbox inboxes[NTHREADS];
static uint64_t *owner;			/* per page index: id of the owning block, 0 free */
static unsigned long online;
static atomic_long errors;
static atomic_ulong pages_allocated, pages_freed, alloc_failures;
static pthread_barrier_t done_barrier;

__attribute__((format(printf, 1, 2))) static void error(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&errors, 1) < 20) {
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
}

static inline uint64_t pattern(uint64_t id, unsigned long page, unsigned long word)
{
	uint64_t x = id * 0x9E3779B97F4A7C15ULL ^ (page << 24) ^ word;

	x ^= x >> 31;
	return x * 0xBF58476D1CE4E5B9ULL;
}

static unsigned long index_of(const struct page *page)
{
	return page_to_pfn(page) - mm_model.base_pfn;
}

static void claim(const struct block *b)
{
	unsigned long idx = index_of(b->page), nr = 1UL << b->order;

	if (idx & (nr - 1) || idx + nr > online) {
		error("order-%u block at index %lu misaligned or outside memory", b->order, idx);
		return;
	}
	for (unsigned long i = 0; i < nr; i++) {
		uint64_t expected = 0;
		if (!__atomic_compare_exchange_n(&owner[idx + i], &expected, b->id, false,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			error("block %#llx (order %u, index %lu) overlaps block %#llx at page %lu",
			      (unsigned long long)b->id, b->order, idx,
			      (unsigned long long)expected, idx + i);
			return;
		}
	}
	uint64_t *w = page_address(b->page);
	for (unsigned long p = 0; p < nr; p++, w += PAGE_SIZE / 8) {
		if (b->order == 0 && (b->id & 7) == 0) {
			for (unsigned long i = 0; i < PAGE_SIZE / 8; i++)
				w[i] = pattern(b->id, p, i);
		} else {
			w[0] = pattern(b->id, p, 0);
			w[PAGE_SIZE / 8 - 1] = pattern(b->id, p, PAGE_SIZE / 8 - 1);
		}
	}
}

static void release(const struct block *b)
{
	unsigned long idx = index_of(b->page), nr = 1UL << b->order;
	const uint64_t *w = page_address(b->page);

	for (unsigned long p = 0; p < nr; p++, w += PAGE_SIZE / 8) {
		bool ok;
		if (b->order == 0 && (b->id & 7) == 0) {
			ok = true;
			for (unsigned long i = 0; i < PAGE_SIZE / 8; i++)
				ok &= w[i] == pattern(b->id, p, i);
		} else {
			ok = w[0] == pattern(b->id, p, 0) &&
			     w[PAGE_SIZE / 8 - 1] == pattern(b->id, p, PAGE_SIZE / 8 - 1);
		}
		if (!ok) {
			error("block %#llx (order %u) corrupted in page %lu",
			      (unsigned long long)b->id, b->order, p);
			break;
		}
	}
	for (unsigned long i = 0; i < nr; i++) {
		uint64_t expected = b->id;
		if (!__atomic_compare_exchange_n(&owner[idx + i], &expected, 0, false,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			error("owner map: page %lu of block %#llx owned by %#llx", idx + i,
			      (unsigned long long)b->id, (unsigned long long)expected);
			break;
		}
	}
	__free_pages(b->page, b->order);
	atomic_fetch_add(&pages_freed, nr);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static bool random_alloc(uint64_t *rng, uint64_t id, struct block *b)
{
	static const gfp_t mts[] = { 0, __GFP_MOVABLE, __GFP_RECLAIMABLE };
	unsigned int order = (unsigned int)(rnd(rng) >> 40) % (MAX_ORDER_MT + 1);
	gfp_t gfp = GFP_KERNEL | __GFP_NOWARN | mts[(rnd(rng) >> 40) % 3];

	if ((rnd(rng) >> 40) % 4 == 0)
		gfp |= __GFP_COMP;
	struct page *page = alloc_pages(gfp, order);
	if (!page) {
		atomic_fetch_add(&alloc_failures, 1);
		return false;
	}
	b->page = page;
	b->order = order;
	b->id = id;
	if ((gfp & __GFP_COMP) && order && compound_head(page + 1) != page)
		error("compound tail does not point to its head");
	atomic_fetch_add(&pages_allocated, 1UL << order);
	claim(b);
	return true;
}

static int drain_inbox(int self)
{
	struct block items[4 * MAX_LOCAL];
	int n;

	pthread_mutex_lock(&inboxes[self].lock);
	n = inboxes[self].n;
	memcpy(items, inboxes[self].items, (size_t)n * sizeof(items[0]));
	inboxes[self].n = 0;
	pthread_mutex_unlock(&inboxes[self].lock);
	for (int i = 0; i < n; i++)
		release(&items[i]);
	return n;
}

static bool hand_off(int to, const struct block *b)
{
	bool ok = false;

	pthread_mutex_lock(&inboxes[to].lock);
	if (inboxes[to].n < 4 * MAX_LOCAL) {
		inboxes[to].items[inboxes[to].n++] = *b;
		ok = true;
	}
	pthread_mutex_unlock(&inboxes[to].lock);
	return ok;
}

static unsigned long nr_ops(void)
{
	const char *env = getenv("KMEM_MT_OPS");

	return env && *env ? strtoul(env, NULL, 0) : DEFAULT_OPS;
}

static void *worker(void *arg)
{
	int self = (int)(intptr_t)arg;
	uint64_t rng = 0x1234567ULL * (uint64_t)(self + 1) + 0x9E3779B97F4A7C15ULL;
	struct block local[MAX_LOCAL];
	int n = 0;
	uint64_t next_id = ((uint64_t)(self + 1) << 48) + 1;
	unsigned long ops = nr_ops();

	for (unsigned long op = 0; op < ops; op++) {
		unsigned int r = (unsigned int)(rnd(&rng) >> 40) % 100;

		if (r < 50 || n == 0) {
			if (n == MAX_LOCAL)
				release(&local[--n]);
			if (random_alloc(&rng, next_id++, &local[n]))
				n++;
		} else if (r < 75) {
			int i = (int)((rnd(&rng) >> 40) % (unsigned)n);
			release(&local[i]);
			local[i] = local[--n];
		} else if (r < 92) {
			int i = (int)((rnd(&rng) >> 40) % (unsigned)n);
			int to = (self + 1 + (int)((rnd(&rng) >> 40) % (NTHREADS - 1))) % NTHREADS;
			if (hand_off(to, &local[i]))
				local[i] = local[--n];
		} else {
			drain_inbox(self);
		}
	}
	/* Nobody hands anything over after the barrier. */
	pthread_barrier_wait(&done_barrier);
	drain_inbox(self);
	while (n)
		release(&local[--n]);
	return NULL;	/* the pcp lists go back to the buddy lists at exit */
}

/*
 * Meanwhile a fifth thread reads every page allocator file and changes a
 * sysctl (watermarks and pcp sizes are recomputed under the workers' feet).
 */
static atomic_bool workers_done;
static atomic_long files_read;

static void *introspector(void *arg)
{
	static const char *const paths[] = {
		"/proc/buddyinfo", "/proc/pagetypeinfo", "/proc/zoneinfo", "/proc/vmstat",
		"/sys/kernel/debug/extfrag/unusable_index", "/sys/kernel/debug/extfrag/extfrag_index",
	};
	static char buf[1 << 16];
	unsigned int i = 0;

	(void)arg;
	while (!atomic_load(&workers_done)) {
		ssize_t n = kmem_read(paths[i % 6], buf, sizeof(buf));
		if (n <= 0 || (size_t)n >= sizeof(buf) || buf[n - 1] != '\n')
			error("kmem_read(%s) = %zd", paths[i % 6], n);
		if (i % 64 == 0 &&
		    kmem_write("/proc/sys/vm/watermark_scale_factor", i % 128 ? "20" : "10"))
			error("sysctl write failed");
		atomic_fetch_add(&files_read, 1);
		i++;
	}
	kmem_write("/proc/sys/vm/watermark_scale_factor", "10");
	return NULL;
}

static void check_all_free(const char *when)
{
	struct mm_check_result r;
	char want[256];

	if (mm_check(&r)) {
		KT_FAIL("mm_check: %d problems %s", r.errors, when);
		return;
	}
	if (r.free_pages + r.pcp_pages != r.managed)
		KT_FAIL("%s: %lu pages free + %lu on our pcp lists, managed %lu: pages left "
			"behind", when, r.free_pages, r.pcp_pages, r.managed);
	drain_local_pages();
	char *got = kt_read("/proc/buddyinfo", NULL);
	mm_expected_buddyinfo_all_free(zone_managed_pages(&zone_normal), want, sizeof(want));
	KT_ASSERT(got);
	if (strcmp(got, want))
		KT_FAIL("%s: buddyinfo\n%s instead of\n%s", when, got, want);
	free(got);
}

KTEST(four_threads_cross_free)
{
	pthread_t th[NTHREADS];
	unsigned long long t0 = os_now_ns();

	online = mm_online_pages();
	owner = calloc(online, sizeof(*owner));
	KT_ASSERT(owner);
	for (int i = 0; i < NTHREADS; i++)
		pthread_mutex_init(&inboxes[i].lock, NULL);
	pthread_barrier_init(&done_barrier, NULL, NTHREADS);
	pthread_t reader;
	KT_ASSERT(pthread_create(&reader, NULL, introspector, NULL) == 0);
	for (int i = 0; i < NTHREADS; i++)
		KT_ASSERT(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i) == 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	atomic_store(&workers_done, true);
	pthread_join(reader, NULL);
	pthread_barrier_destroy(&done_barrier);
	KT_ASSERT(atomic_load(&files_read) > 0);

	fprintf(stderr, "  %d threads x %lu ops: %lu pages allocated, %lu failures, "
		"%ld files read, %.1f s\n", NTHREADS, nr_ops(), atomic_load(&pages_allocated),
		atomic_load(&alloc_failures), atomic_load(&files_read),
		(double)(os_now_ns() - t0) / 1e9);
	KT_ASSERT_EQ(atomic_load(&errors), 0);
	KT_ASSERT_EQ(atomic_load(&pages_allocated), atomic_load(&pages_freed));
	for (unsigned long i = 0; i < online; i++)
		KT_ASSERT(owner[i] == 0);
	free(owner);
	/* The threads are gone, and so are their pcp lists. */
	check_all_free("after the workers exited");
	KT_ASSERT_EQ(kt_vmstat("pgalloc_normal"), kt_vmstat("pgfree"));
}

/* ---- many short-lived threads --------------------------------------- */

#define NR_SHORT	200
#define WAVE		8
#define PER_THREAD	48

static pthread_mutex_t handed_lock = PTHREAD_MUTEX_INITIALIZER;
static struct block handed[WAVE * PER_THREAD];
static int nr_handed;

static void *short_lived(void *arg)
{
	uint64_t rng = 0xfeed0000ULL + (uint64_t)(intptr_t)arg;
	struct block mine[PER_THREAD];
	int n = 0;

	for (int i = 0; i < PER_THREAD; i++) {
		if (random_alloc(&rng, ((uint64_t)(intptr_t)arg << 32) + (uint64_t)i + 1, &mine[n]))
			n++;
	}
	/* Free every other block here (onto this thread's pcp lists) ... */
	for (int i = 0; i < n; i += 2)
		release(&mine[i]);
	/* ... and leave the rest for the main thread to free after we are gone. */
	pthread_mutex_lock(&handed_lock);
	for (int i = 1; i < n; i += 2)
		handed[nr_handed++] = mine[i];
	pthread_mutex_unlock(&handed_lock);
	return NULL;
}

static int count_pagesets(void)
{
	char *z = kt_read("/proc/zoneinfo", NULL);
	int n = 0;

	for (const char *p = z; p && (p = strstr(p, "\n    cpu: ")) != NULL; p++)
		n++;
	free(z);
	return n;
}

KTEST(short_lived_threads_leave_nothing)
{
	online = mm_online_pages();
	owner = calloc(online, sizeof(*owner));
	KT_ASSERT(owner);
	atomic_store(&pages_allocated, 0);
	atomic_store(&pages_freed, 0);
	int pagesets_before = count_pagesets();

	for (int started = 0; started < NR_SHORT; started += WAVE) {
		pthread_t th[WAVE];
		for (int i = 0; i < WAVE; i++)
			KT_ASSERT(pthread_create(&th[i], NULL, short_lived,
						 (void *)(intptr_t)(started + i + 1)) == 0);
		for (int i = 0; i < WAVE; i++)
			pthread_join(th[i], NULL);
		/* Their owners have exited: free what they left us. */
		pthread_mutex_lock(&handed_lock);
		for (int i = 0; i < nr_handed; i++)
			release(&handed[i]);
		nr_handed = 0;
		pthread_mutex_unlock(&handed_lock);
	}
	KT_ASSERT_EQ(atomic_load(&errors), 0);
	KT_ASSERT_EQ(atomic_load(&pages_allocated), atomic_load(&pages_freed));
	/* No per-thread page lists survive their threads (ours may exist). */
	KT_ASSERT(count_pagesets() <= pagesets_before + 1);
	KT_ASSERT(count_pagesets() <= 1);
	free(owner);
	check_all_free("after 200 short-lived threads");
	KT_ASSERT_EQ(kt_vmstat("pgalloc_normal"), kt_vmstat("pgfree"));
}

/*
 * /proc/sys/vm writes from two threads at once while a third allocates:
 * the values and the watermarks they give are set under one lock (TSan
 * reported the unlocked stores), and the last write's watermarks are what
 * its formula says.
 */
static atomic_int sysctl_stop;

static void *sysctl_writer(void *arg)
{
	const char *file = arg;
	char v[16];

	for (int i = 0; i < 300; i++) {
		snprintf(v, sizeof(v), "%d", strcmp(file, "min_free_kbytes") ? 10 + i % 50 : 1024 + 4 * (i % 64));
		char path[64];
		snprintf(path, sizeof(path), "/proc/sys/vm/%s", file);
		if (kmem_write(path, v) != 0)
			return (void *)1;
	}
	return NULL;
}

static void *sysctl_allocator(void *arg)
{
	(void)arg;
	while (!atomic_load(&sysctl_stop)) {
		struct page *p = alloc_pages(GFP_KERNEL, 2);
		if (p)
			__free_pages(p, 2);
	}
	return NULL;
}

KTEST(sysctl_writes_from_threads)
{
	pthread_t a, b, c;
	void *ra, *rb;

	KT_ASSERT_EQ(pthread_create(&c, NULL, sysctl_allocator, NULL), 0);
	KT_ASSERT_EQ(pthread_create(&a, NULL, sysctl_writer, "min_free_kbytes"), 0);
	KT_ASSERT_EQ(pthread_create(&b, NULL, sysctl_writer, "watermark_scale_factor"), 0);
	pthread_join(a, &ra);
	pthread_join(b, &rb);
	atomic_store(&sysctl_stop, 1);
	pthread_join(c, NULL);
	KT_EXPECT(!ra && !rb);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/min_free_kbytes", "2048"), 0);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/watermark_scale_factor", "10"), 0);
	long managed = kt_zoneinfo("managed"), min = 2048 / 4;
	long tmp = managed * 10 / 10000 > min / 4 ? managed * 10 / 10000 : min / 4;
	KT_EXPECT(kt_zoneinfo("min") == min);
	KT_EXPECT(kt_zoneinfo("low") == min + tmp);
	KT_EXPECT(kt_zoneinfo("high") == min + 2 * tmp);
}

KTEST_MAIN(if (kmem_init(CMDLINE)) { printf("kmem_init failed\n"); return 1; })
