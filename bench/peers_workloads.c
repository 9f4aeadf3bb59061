// SPDX-License-Identifier: MIT
/*
 * bench_peers_workloads: malloc workloads for setting kmem beside glibc,
 * jemalloc, mimalloc and tcmalloc.  It calls nothing but plain
 * malloc/free, so the allocator is whichever the process gets:
 *
 *   build/bin/bench_peers_workloads hot                      # glibc
 *   LD_PRELOAD=libjemalloc.so.2 build/bin/bench_peers_workloads hot
 *   LD_PRELOAD=build/lib/libkmem-malloc.so build/bin/bench_peers_workloads hot
 *
 * (It is linked to libkmem.a like every benchmark, but never calls it; with
 * libkmem-malloc.so preloaded, that copy's symbols are hidden and unused.)
 * One workload per process, so that each has its own peak RSS:
 *
 *   hot        single thread: malloc + free of one size in a tight loop,
 *              40 M pairs for each of 16, 64, 256, 1024 B (results hot16 ...)
 *   larson     2 threads, each replacing random slots of an array of 5000
 *              objects of 16..1024 B; every round (20000 replacements a
 *              thread) the threads swap arrays, so each frees what the
 *              other allocated (larson's "bleeding" hand-off); 500 rounds;
 *              an op is one replacement (free + malloc)
 *   prodcons   a producer thread mallocs 256 B objects, a consumer thread
 *              frees them, through a lock-free ring of 4096 pointers
 *              (indices published every 32 objects); 20 M
 *
 * The two threads of larson and prodcons are pinned to two different CPUs
 * (the first two the process may use), so that they always run in parallel
 * and every hand-off crosses cores.
 *   frag       1 M objects of 16..512 B (~260 MB), 90% freed in random
 *              order, then 2..8 KiB objects up to half the freed bytes
 *   longlived  a ~100 MB population, slow churn (free a random object,
 *              allocate back to the budget) while the size mix drifts
 *              through 4 phases of 1 M replacements
 *   bulk       25000 rounds of: malloc 1000 x 256 B, then free them in order
 *   server threads leak big stress bulk4096: threads on a shared heap,
 *              oversubscribed threads, a growing heap, big zero-filled
 *              blocks, large batches (bench/peers_wide.h)
 *
 * Every object is written (fully for frag and longlived, so that RSS counts
 * what a program would touch) and checked when freed: a tag at its start
 * and the last byte.  A wrong tag, a misaligned pointer (< 16-aligned) or a
 * NULL is counted in errors=; a NULL ends the run with status 1.
 *
 * Output: one line per result, key=value, for scripts/report/:
 *   RESULT wl=hot16 alloc=glibc ops=40000000 ns_op=8.910 cpu_ns_op=8.870 secs=0.356
 *          peak_kb=1664 final_kb=1664 live_kb=0 mid_kb=0 errors=0 minflt=3 sys_ms=0 nvcsw=0
 * ns_op is wall time per object allocated and freed (one malloc + one free;
 * for frag and longlived: per (mallocs + frees) / 2), cpu_ns_op the same
 * with the process's CPU time (all threads, spinning included); peak_kb is
 * getrusage()'s ru_maxrss, final_kb the resident size (/proc/self/statm) at
 * the end of the workload, live_kb the bytes the workload holds then
 * (requested sizes), mid_kb for frag: the resident size after the 90% free.
 * frag and longlived then print "STREAM wl=W digest=D", a digest of the
 * sizes and frees they drew (bench_rss_floor prints the same).
 * On slab=slob, SLOB's statistics file follows as "SLOBSTAT wl=W at=end
 * <line>" lines (frag also prints them after its 90% free, at=mid, not
 * counted in its time).
 * Under libkmem-malloc.so each RESULT is followed by
 *   KMEMSTAT wl=hot16 alloc_fastpath=0 ... barn_put=0 barn_get_fail=0 barn_put_fail=0
 *            pgalloc_normal=17 pgreported=0 slab_pages_released=0 slab_pages_restored=0
 *            slab_sheaf_reaped=0
 * the SLUB counters summed over the kmalloc-* and malloc-* caches and five
 * /proc/vmstat items, as differences since the previous KMEMSTAT line.
 * sheaf_flush and sheaf_refill count objects, the barn_* counters sheaves;
 * barn_put_fail tells flushes at the barn's limit from those of the reap
 * (slab_sheaf_reaped) and of exiting threads.
 *
 *   bench_peers_workloads WORKLOAD [-x SCALE]    SCALE multiplies the op counts
 *                                                (default 1; e.g. 0.2 for a smoke run)
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "peers_streams.h"

/* Keep @p alive and opaque to the optimizer (no malloc/free pair elision). */
#define escape(p) __asm__ volatile("" : : "r"(p) : "memory")

static double scale = 1.0;
static const char *alloc_name = "glibc";
static atomic_long errors;

static long scaled(long n)
{
	long v = (long)((double)n * scale);

	return v < 1 ? 1 : v;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Bookkeeping outside the allocator under test: the same cost for all. */
static void *map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("bench_peers_workloads: mmap");
		exit(1);
	}
	return p;
}

static long rss_kb(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static long peak_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void *xmalloc(size_t size)
{
	void *p = malloc(size);

	if (!p) {
		fprintf(stderr, "bench_peers_workloads: malloc(%zu) returned NULL (%s)\n", size,
			strerror(errno));
		printf("RESULT wl=abort alloc=%s errors=1\n", alloc_name);
		fflush(stdout);
		exit(1);
	}
	if ((uintptr_t)p & 15) {
		if (atomic_fetch_add(&errors, 1) < 5)
			fprintf(stderr, "bench_peers_workloads: malloc(%zu) = %p: not 16-aligned\n",
				size, p);
	}
	return p;
}

/*
 * The tag: the first 8 bytes hold size ^ MAGIC, the last byte (size & 0xff).
 * Objects are >= 16 bytes.
 */
#define MAGIC 0x6b6d656d5f746167ull	/* "kmem_tag" */

static inline void tag(void *p, size_t size)
{
	uint64_t t = size ^ MAGIC;

	memcpy(p, &t, sizeof(t));
	((unsigned char *)p)[size - 1] = (unsigned char)size;
}

static inline void check(const void *p, size_t size, const char *wl)
{
	uint64_t t;

	memcpy(&t, p, sizeof(t));
	if (t != (size ^ MAGIC) || ((const unsigned char *)p)[size - 1] != (unsigned char)size) {
		if (atomic_fetch_add(&errors, 1) < 5)
			fprintf(stderr, "bench_peers_workloads: %s: object %p of %zu bytes was "
				"overwritten (tag %#llx, last byte %#x)\n", wl, p, size,
				(unsigned long long)t, ((const unsigned char *)p)[size - 1]);
	}
}

/* ---- kmem's SLUB counters, when libkmem-malloc.so is the allocator ------ */

typedef long (*kmem_read_fn)(const char *path, char *buf, size_t size);
static kmem_read_fn kread;
static const char *const kstat_names[] = {
	/* SLUB_STATS: every allocation is one of alloc_cpu_sheaf, alloc_fastpath,
	 * alloc_slowpath; every free one of free_cpu_sheaf, free_fastpath, free_slowpath. */
	"alloc_fastpath", "alloc_slowpath", "free_fastpath", "free_slowpath", "alloc_slab", "free_slab",
	"alloc_cpu_sheaf", "free_cpu_sheaf", "sheaf_flush", "sheaf_refill", "barn_get", "barn_put",
	/* Sheaves: the barn had no full one for an empty main (which then refilled
	 * from slabs); a full main found the barn at its limit (and was flushed). */
	"barn_get_fail", "barn_put_fail",
	/* From /proc/vmstat: pages from the buddy allocator, free pages given back to
	 * the OS, pages of partial slabs given back and taken back (slub_release.c),
	 * objects of idle sheaves given back to their slabs (slub_reap_thread()). */
	"pgalloc_normal", "pgreported", "slab_pages_released", "slab_pages_restored", "slab_sheaf_reaped",
};
#define NR_KSTAT (int)(sizeof(kstat_names) / sizeof(kstat_names[0]))
#define NR_SLUB_KSTAT (NR_KSTAT - 5)
static unsigned long long kstat_last[NR_KSTAT];
/* Counters with a file: alloc_cpu_sheaf and free_cpu_sheaf need KMEM_SLUB_STATS. */
static bool kstat_found[NR_KSTAT];

static int find_kmem(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, "libkmem-malloc")) {
		void *h = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
		if (h)
			*(void **)arg = dlsym(h, "kmem_read");
		return 1;
	}
	return 0;
}

/*
 * Sum of each counter over the caches malloc uses: kmalloc-<n> (the size
 * classes that are kmalloc buckets) and malloc-<n> (the others), found by
 * listing /sys/kernel/slab/ (one entry per line).  Both kinds are unmerged,
 * so each directory is one cache, counted once.
 */
static void kstat_read(unsigned long long *v)
{
	static char info[1 << 16];
	char path[256], buf[4096];

	memset(v, 0, sizeof(*v) * NR_KSTAT);
	long n = kread("/sys/kernel/slab", info, sizeof(info));
	if (n <= 0 || n >= (long)sizeof(info))
		return;
	for (char *line = strtok(info, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, "kmalloc-", 8) && strncmp(line, "malloc-", 7))
			continue;
		for (int i = 0; i < NR_SLUB_KSTAT; i++) {
			snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", line, kstat_names[i]);
			/* "<total> C0=<n> ...": the total comes first (kmem_read NUL-terminates). */
			if (kread(path, buf, sizeof(buf)) > 0) {
				v[i] += strtoull(buf, NULL, 10);
				kstat_found[i] = true;
			}
		}
	}
	n = kread("/proc/vmstat", info, sizeof(info));
	if (n <= 0 || n >= (long)sizeof(info))
		return;
	for (char *line = strtok(info, "\n"); line; line = strtok(NULL, "\n")) {
		char name[128];
		unsigned long long val;
		if (sscanf(line, "%127s %llu", name, &val) != 2)
			continue;
		for (int i = NR_SLUB_KSTAT; i < NR_KSTAT; i++)
			if (!strcmp(name, kstat_names[i])) {
				v[i] = val;
				kstat_found[i] = true;
			}
	}
}

/*
 * On slab=slob, SLOB's statistics file (/sys/kernel/debug/slob/stats), each
 * line as "SLOBSTAT wl=<wl> at=<when> <line>": its pages, holes by size and
 * scans (bench/slob_malloc.sh); then "meminfo MemTotal <kB> MemFree <kB>",
 * kmem's memory and its free pages.  Nothing elsewhere (no such file).
 */
static void slobstat_print(const char *wl, const char *when)
{
	static char buf[8192];

	if (!kread || kread("/sys/kernel/debug/slob/stats", buf, sizeof(buf)) <= 0)
		return;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		printf("SLOBSTAT wl=%s at=%s %s\n", wl, when, line);
	/* The memory kmem has from the OS, and how much of it is free pages. */
	unsigned long total = 0, free_kb = 0;
	if (kread("/proc/meminfo", buf, sizeof(buf)) > 0)
		for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
			sscanf(line, "MemTotal: %lu", &total);
			sscanf(line, "MemFree: %lu", &free_kb);
		}
	printf("SLOBSTAT wl=%s at=%s meminfo MemTotal %lu MemFree %lu\n", wl, when, total, free_kb);
}

static void kstat_print(const char *wl)
{
	unsigned long long v[NR_KSTAT];

	if (!kread)
		return;
	slobstat_print(wl, "end");
	kstat_read(v);
	printf("KMEMSTAT wl=%s", wl);
	for (int i = 0; i < NR_KSTAT; i++)
		if (kstat_found[i])
			printf(" %s=%llu", kstat_names[i], v[i] - kstat_last[i]);
	printf("\n");
	memcpy(kstat_last, v, sizeof(v));
}

/* Process CPU time, all threads: less sensitive than wall time to other load. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_t0;
static struct rusage ru0;

/* Start the CPU clock of the next result (the wall clock is the workload's). */
static void cpu_start(void)
{
	getrusage(RUSAGE_SELF, &ru0);
	cpu_t0 = cpu_ns();
}

static void result(const char *wl, long ops, uint64_t ns, long final, long live, long mid)
{
	uint64_t cpu = cpu_ns() - cpu_t0;
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	long sys_us = (ru.ru_stime.tv_sec - ru0.ru_stime.tv_sec) * 1000000L +
		      (ru.ru_stime.tv_usec - ru0.ru_stime.tv_usec);
	printf("RESULT wl=%s alloc=%s ops=%ld ns_op=%.3f cpu_ns_op=%.3f secs=%.3f peak_kb=%ld"
	       " final_kb=%ld live_kb=%ld mid_kb=%ld errors=%ld minflt=%ld sys_ms=%ld nvcsw=%ld\n",
	       wl, alloc_name, ops, (double)ns / (double)ops, (double)cpu / (double)ops, ns / 1e9,
	       peak_kb(), final, live, mid, atomic_load(&errors), ru.ru_minflt - ru0.ru_minflt,
	       sys_us / 1000, ru.ru_nvcsw - ru0.ru_nvcsw);
	kstat_print(wl);
	fflush(stdout);
}

/*
 * Pin the calling thread to the @idx-th CPU the process may use, so that
 * the two-thread workloads always run on two cores (otherwise, on a busy
 * 2-core machine, they sometimes share one and measure something else).
 * Does nothing with fewer than @idx + 1 CPUs.
 */
static cpu_set_t start_cpus;	/* the process's CPUs, read in main() before any pinning */

static void pin_to(int idx)
{
	cpu_set_t one;
	int seen = 0;

	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &start_cpus))
			continue;
		if (seen++ == idx) {
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
			return;
		}
	}
}

/* ---- hot: one malloc + free pair in a loop ------------------------------ */

static __attribute__((noinline)) void hot_loop(size_t size, long n)
{
	for (long i = 0; i < n; i++) {
		char *p = xmalloc(size);
		*(volatile char *)p = 1;
		escape(p);
		free(p);
	}
}

static void wl_hot(void)
{
	static const size_t sizes[] = { 16, 64, 256, 1024 };
	long n = scaled(40000000);

	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char wl[16];

		hot_loop(sizes[i], n / 50 + 1);		/* warm up */
		cpu_start();
		uint64_t t0 = now_ns();
		hot_loop(sizes[i], n);
		uint64_t t1 = now_ns();
		snprintf(wl, sizeof(wl), "hot%zu", sizes[i]);
		result(wl, n, t1 - t0, rss_kb(), 0, 0);
	}
}

/* ---- larson: random replacement, arrays handed to the other thread -------- */

#define L_THREADS	2
#define L_SLOTS		5000
#define L_ROUND		20000
#define L_MIN		16
#define L_MAX		1024

struct lslot {
	void *p;
	size_t size;
};

static struct lslot *l_arr[L_THREADS];
static pthread_barrier_t l_bar;
static long l_rounds;
static uint64_t l_t0, l_t1;

static void *larson_thread(void *arg)
{
	int id = (int)(intptr_t)arg;
	uint64_t s = 0x9E3779B97F4A7C15ull * (uint64_t)(id + 1);
	struct lslot *a = l_arr[id];

	pin_to(id);
	for (int i = 0; i < L_SLOTS; i++) {
		a[i].size = L_MIN + rnd(&s) % (L_MAX - L_MIN + 1);
		a[i].p = xmalloc(a[i].size);
		tag(a[i].p, a[i].size);
	}
	pthread_barrier_wait(&l_bar);
	if (id == 0) {
		cpu_start();
		l_t0 = now_ns();
	}
	for (long r = 0; r < l_rounds; r++) {
		/* Round r: thread id works on the array thread (id + r) % N filled. */
		a = l_arr[(id + r) % L_THREADS];
		for (int k = 0; k < L_ROUND; k++) {
			uint64_t x = rnd(&s);
			struct lslot *sl = &a[x % L_SLOTS];
			check(sl->p, sl->size, "larson");
			free(sl->p);
			sl->size = L_MIN + (x >> 32) % (L_MAX - L_MIN + 1);
			sl->p = xmalloc(sl->size);
			tag(sl->p, sl->size);
		}
		pthread_barrier_wait(&l_bar);
	}
	if (id == 0)
		l_t1 = now_ns();
	return NULL;
}

static void wl_larson(void)
{
	pthread_t th[L_THREADS];

	l_rounds = scaled(500);
	for (int i = 0; i < L_THREADS; i++)
		l_arr[i] = map(sizeof(struct lslot) * L_SLOTS);
	pthread_barrier_init(&l_bar, NULL, L_THREADS);
	for (int i = 1; i < L_THREADS; i++)
		pthread_create(&th[i], NULL, larson_thread, (void *)(intptr_t)i);
	larson_thread((void *)0);
	for (int i = 1; i < L_THREADS; i++)
		pthread_join(th[i], NULL);

	long live = 0;
	for (int t = 0; t < L_THREADS; t++)
		for (int i = 0; i < L_SLOTS; i++)
			live += (long)l_arr[t][i].size;
	result("larson", L_THREADS * l_rounds * L_ROUND, l_t1 - l_t0, rss_kb(), live / 1024, 0);
	for (int t = 0; t < L_THREADS; t++)
		for (int i = 0; i < L_SLOTS; i++)
			free(l_arr[t][i].p);
}

/* ---- prodcons: malloc on one thread, free on the other -------------------- */

/*
 * A single-producer single-consumer ring.  Each side publishes its index
 * every PC_BATCH objects (and before it waits), and re-reads the other's
 * only when it has run out of room or of work, so the ring's own cache-line
 * traffic is small next to the allocator's: what is timed is malloc on one
 * core and free on the other, plus the two cache lines of each object the
 * tag check reads.
 */
#define PC_RING		4096	/* power of two */
#define PC_BATCH	32
#define PC_SIZE		256

static struct {
	_Alignas(64) atomic_ulong head;		/* published by the producer */
	_Alignas(64) atomic_ulong tail;		/* published by the consumer */
	_Alignas(64) void *slot[PC_RING];
} ring;
static long pc_n;

static inline void pc_wait(unsigned int *spins)
{
	if (++*spins < 256) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	} else {
		*spins = 0;
		sched_yield();		/* one core, or the other thread is descheduled */
	}
}

static void *consumer(void *arg)
{
	unsigned long tail = 0, head = 0;

	(void)arg;
	pin_to(1);
	for (long i = 0; i < pc_n; i++) {
		if (tail == head) {
			unsigned int spins = 0;
			atomic_store_explicit(&ring.tail, tail, memory_order_release);
			while ((head = atomic_load_explicit(&ring.head, memory_order_acquire)) == tail)
				pc_wait(&spins);
		}
		void *p = ring.slot[tail % PC_RING];
		check(p, PC_SIZE, "prodcons");
		free(p);
		if (++tail % PC_BATCH == 0)
			atomic_store_explicit(&ring.tail, tail, memory_order_release);
	}
	return NULL;
}

static void wl_prodcons(void)
{
	pthread_t th;
	unsigned long head = 0, tail = 0;

	pc_n = scaled(20000000);
	pin_to(0);
	cpu_start();
	uint64_t t0 = now_ns();
	pthread_create(&th, NULL, consumer, NULL);
	for (long i = 0; i < pc_n; i++) {
		void *p = xmalloc(PC_SIZE);
		tag(p, PC_SIZE);
		if (head - tail >= PC_RING) {
			unsigned int spins = 0;
			atomic_store_explicit(&ring.head, head, memory_order_release);
			while (head - (tail = atomic_load_explicit(&ring.tail, memory_order_acquire)) >= PC_RING)
				pc_wait(&spins);
		}
		ring.slot[head % PC_RING] = p;
		if (++head % PC_BATCH == 0)
			atomic_store_explicit(&ring.head, head, memory_order_release);
	}
	atomic_store_explicit(&ring.head, head, memory_order_release);
	pthread_join(th, NULL);
	uint64_t t1 = now_ns();
	result("prodcons", pc_n, t1 - t0, rss_kb(), 0, 0);
}

/* ---- frag: many small, free 90%, then larger ------------------------------ */

static void wl_frag(void)
{
	long n = scaled(FRAG_OBJECTS);
	uint64_t s = FRAG_SEED;
	void **p = map(sizeof(void *) * (size_t)n);
	uint32_t *size = map(sizeof(uint32_t) * (size_t)n);
	uint32_t *perm = map(sizeof(uint32_t) * (size_t)n);
	long calls = 0, live = 0, freed = 0;

	cpu_start();
	uint64_t t0 = now_ns();
	for (long i = 0; i < n; i++) {
		size[i] = frag_small_size(&s);
		p[i] = xmalloc(size[i]);
		memset(p[i], (int)i, size[i]);
		tag(p[i], size[i]);
		live += size[i];
	}
	calls += n;
	/* Free 90%, chosen and ordered at random. */
	frag_free_order(perm, n, &s);
	for (long k = 0; k < n - n / 10; k++) {
		uint32_t i = perm[k];
		check(p[i], size[i], "frag");
		free(p[i]);
		p[i] = NULL;
		freed += size[i];
	}
	calls += n - n / 10;
	live -= freed;
	long mid = rss_kb();
	/* Not timed: the clocks start again after it. */
	uint64_t w0 = now_ns(), c0 = cpu_ns();
	slobstat_print("frag", "mid");
	t0 += now_ns() - w0;
	cpu_t0 += cpu_ns() - c0;

	/* Larger objects, 2..8 KiB, up to half the freed bytes. */
	long cap = freed / 2 / 2048 + 1, nbig = 0, big = 0;
	void **q = map(sizeof(void *) * (size_t)cap);
	uint32_t *qsize = map(sizeof(uint32_t) * (size_t)cap);
	while (big < freed / 2 && nbig < cap) {
		qsize[nbig] = frag_big_size(&s);
		q[nbig] = xmalloc(qsize[nbig]);
		memset(q[nbig], (int)nbig, qsize[nbig]);
		tag(q[nbig], qsize[nbig]);
		big += qsize[nbig++];
	}
	calls += nbig;
	uint64_t t1 = now_ns();
	live += big;
	result("frag", calls / 2, t1 - t0, rss_kb(), live / 1024, mid);
	/* The sizes, the order of the frees, the big sizes (tests/test_rss_floor.sh). */
	uint64_t d = STREAM_DIGEST_INIT;
	for (long i = 0; i < n; i++)
		d = stream_digest(stream_digest(d, size[i]), perm[i]);
	for (long i = 0; i < nbig; i++)
		d = stream_digest(d, qsize[i]);
	printf("STREAM wl=frag digest=%016llx\n", (unsigned long long)d);

	for (long i = 0; i < n; i++)
		if (p[i]) {
			check(p[i], size[i], "frag");
			free(p[i]);
		}
	for (long i = 0; i < nbig; i++) {
		check(q[i], qsize[i], "frag");
		free(q[i]);
	}
}

/* ---- longlived: a steady ~100 MB population, slow churn, drifting sizes --- */

static void wl_longlived(void)
{
	const long budget = LONGLIVED_BUDGET, cap = LONGLIVED_CAP;
	long steps = scaled(LONGLIVED_STEPS);
	uint64_t s = LONGLIVED_SEED;
	void **p = map(sizeof(void *) * (size_t)cap);
	uint32_t *size = map(sizeof(uint32_t) * (size_t)cap);
	long n = 0, live = 0, calls = 0;

	cpu_start();
	uint64_t t0 = now_ns();
	for (int ph = 0; ph < LONGLIVED_PHASES; ph++) {
		for (long k = -1; k < steps; k++) {
			if (k >= 0) {
				/* Free a random object (swap-remove); k == -1: fill only. */
				long v = longlived_victim(&s, n);
				check(p[v], size[v], "longlived");
				free(p[v]);
				live -= size[v];
				p[v] = p[--n];
				size[v] = size[n];
				calls++;
			}
			/* Allocate back up to the budget, in this phase's size mix. */
			while (live < budget && n < cap) {
				uint32_t sz = longlived_size(&s, ph);
				p[n] = xmalloc(sz);
				memset(p[n], (int)k, sz);
				tag(p[n], sz);
				size[n++] = sz;
				live += sz;
				calls++;
			}
		}
	}
	uint64_t t1 = now_ns();
	result("longlived", calls / 2, t1 - t0, rss_kb(), live / 1024, 0);
	/* The survivors' sizes in their final order: every size and victim drawn shows in it. */
	uint64_t d = STREAM_DIGEST_INIT;
	for (long i = 0; i < n; i++)
		d = stream_digest(d, size[i]);
	printf("STREAM wl=longlived digest=%016llx\n", (unsigned long long)d);
	for (long i = 0; i < n; i++) {
		check(p[i], size[i], "longlived");
		free(p[i]);
	}
}

/* ---- bulk: malloc 1000, then free the 1000 ------------------------------- */

#define B_N	1000
#define B_SIZE	256

static __attribute__((noinline)) void bulk_rounds(void **v, long rounds)
{
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < B_N; i++) {
			v[i] = xmalloc(B_SIZE);
			*(volatile char *)v[i] = 1;
		}
		escape(v);
		for (int i = 0; i < B_N; i++)
			free(v[i]);
	}
}

static void wl_bulk(void)
{
	static void *v[B_N];
	long rounds = scaled(25000);

	bulk_rounds(v, rounds / 50 + 1);
	cpu_start();
	uint64_t t0 = now_ns();
	bulk_rounds(v, rounds);
	uint64_t t1 = now_ns();
	result("bulk", rounds * B_N, t1 - t0, rss_kb(), 0, 0);
}

#include "peers_wide.h"

/* ------------------------------------------------------------------------- */

static const struct {
	const char *name;
	void (*fn)(void);
} workloads[] = {
	{ "hot", wl_hot }, { "larson", wl_larson }, { "prodcons", wl_prodcons },
	{ "frag", wl_frag }, { "longlived", wl_longlived }, { "bulk", wl_bulk },
	{ "server", wl_server }, { "threads", wl_threads }, { "leak", wl_leak },
	{ "big", wl_big }, { "stress", wl_stress }, { "bulk4096", wl_bulk4096 },
};
#define NR_WL (int)(sizeof(workloads) / sizeof(workloads[0]))

static __attribute__((noreturn)) void usage(void)
{
	fprintf(stderr, "usage: bench_peers_workloads WORKLOAD [-x SCALE]\n  WORKLOAD:");
	for (int i = 0; i < NR_WL; i++)
		fprintf(stderr, " %s", workloads[i].name);
	fprintf(stderr, "\n  -x SCALE  multiply the op counts (default 1)\n"
		"  The allocator is the process's malloc: choose it with LD_PRELOAD;\n"
		"  PEERS_ALLOC=name names it in the output (default: from LD_PRELOAD).\n");
	exit(2);
}

struct preload_probe {
	const char *base;	/* file name of the preloaded library */
	bool found;
};

static int match_preload(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct preload_probe *p = arg;
	const char *name = info->dlpi_name, *slash = strrchr(name, '/');

	(void)size;
	if (!strcmp(slash ? slash + 1 : name, p->base))
		p->found = true;
	return p->found;
}

/* Is the (first) library of @preload among the loaded objects? */
static bool preload_loaded(const char *preload)
{
	char first[4096];
	size_t n = strcspn(preload, " :");

	if (n >= sizeof(first))
		return true;	/* cannot tell: do not refuse */
	memcpy(first, preload, n);
	first[n] = '\0';
	const char *slash = strrchr(first, '/');
	struct preload_probe p = { slash ? slash + 1 : first, false };
	dl_iterate_phdr(match_preload, &p);
	return p.found;
}

int main(int argc, char **argv)
{
	const char *wl = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-x") && i + 1 < argc)
			scale = atof(argv[++i]);
		else if (argv[i][0] != '-' && !wl)
			wl = argv[i];
		else
			usage();
	}
	if (!wl || !(scale > 0))
		usage();

	const char *env = getenv("PEERS_ALLOC"), *pre = getenv("LD_PRELOAD");
	if (env && *env) {
		alloc_name = env;
	} else if (pre && *pre) {
		const char *slash = strrchr(pre, '/');
		alloc_name = slash ? slash + 1 : pre;
	}

	/*
	 * ld.so ignores a preload it cannot load (with a message) and runs on
	 * glibc's malloc: measuring that under the library's name would be a
	 * lie, so refuse.
	 */
	if (pre && *pre && !preload_loaded(pre)) {
		fprintf(stderr, "bench_peers_workloads: LD_PRELOAD=%s is not loaded: not measuring "
			"glibc under its name\n", pre);
		return 2;
	}
	if (sched_getaffinity(0, sizeof(start_cpus), &start_cpus))
		CPU_ZERO(&start_cpus);
	dl_iterate_phdr(find_kmem, &kread);
	if (kread)
		kstat_read(kstat_last);
	for (int i = 0; i < NR_WL; i++) {
		if (!strcmp(wl, workloads[i].name)) {
			workloads[i].fn();
			return atomic_load(&errors) ? 3 : 0;
		}
	}
	usage();
}
