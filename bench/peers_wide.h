/* SPDX-License-Identifier: MIT */
/*
 * The wider workloads of bench_peers_workloads: the kinds of classic
 * allocator benchmarks where a per-thread-cache allocator is tested by
 * threads (short-lived, more than the CPUs, freeing each other's blocks),
 * by a growing heap, by big zero-filled blocks and by large batches.
 * Included by bench/peers_workloads.c after its helpers (xmalloc, tag,
 * check, scaled, result, ...); each workload is the program's own.
 *
 *   server     larson-style server: 2 chains of threads, each owning an
 *              array of 5000 blocks of 8..1000 B; a thread replaces random
 *              slots 50000 times (writing into each new block), then starts
 *              its successor with the array and exits, so every thread frees
 *              blocks a dead thread allocated; 2 x 40 threads
 *   threads    4 threads (on any number of CPUs), each a private churn: an
 *              array of 2000 blocks replaced at random, 1 M times a thread;
 *              sizes 70% 16..128 B, 25% 128 B..1 KiB, 5% 1..16 KiB
 *   leak       2000 short threads, two at a time: each allocates 100 blocks
 *              of 16..512 B, frees 80 and leaves 20 on a global list (freed
 *              only at the end): a heap that keeps growing
 *   big        20 buffers of 5..25 MiB (filled first, untimed), replaced at
 *              random 40 times with calloc(); each new buffer is checked
 *              zero and written once a page (a program using it); an op is
 *              one replacement
 *   stress     8 threads, not pinned (oversubscribed on a 2-CPU machine),
 *              on one shared array of 8192 slots: take a random slot; empty:
 *              malloc 16..2048 B (1 in 64: up to 32 KiB); full: free it
 *              (half the time) or realloc it to a new size; so blocks move
 *              between threads; 200000 ops a thread
 *   bulk4096   bulk's rounds with 4096 x malloc(256), then the 4096 frees in
 *              allocation order; 1 M objects (glibc gives the top of its
 *              heap back every round: ~2 us an object)
 *
 * -x SCALE multiplies the rounds (server, threads, stress, bulk4096), the
 * threads (leak) or the replacements (big).  Every RESULT line also carries
 * minflt=, sys_ms= and nvcsw= (page faults, system time, voluntary context
 * switches of the process during the workload).
 */
#ifndef KMEM_BENCH_PEERS_WIDE_H
#define KMEM_BENCH_PEERS_WIDE_H

#include <semaphore.h>

/* ---- server: larson's thread succession ----------------------------------- */

#define S_CHAINS	2
#define S_SLOTS		5000
#define S_OPS		50000
#define S_MIN		8
#define S_MAX		1000

struct s_chain {
	struct lslot *a;
	uint64_t seed;
	long left;		/* threads still to run, this one included */
};

static struct s_chain s_chain[S_CHAINS];

/* Below 16 bytes C asks for 8-byte alignment only (jemalloc, mimalloc, tcmalloc give 8). */
static void *xmalloc_any(size_t size)
{
	if (size >= 16)
		return xmalloc(size);
	void *p = malloc(size);
	if (!p || ((uintptr_t)p & 7)) {
		fprintf(stderr, "bench_peers_workloads: malloc(%zu) = %p\n", size, p);
		printf("RESULT wl=abort alloc=%s errors=1\n", alloc_name);
		exit(1);
	}
	return p;
}
static sem_t s_done;
static atomic_long s_threads;

static void *server_thread(void *arg)
{
	struct s_chain *c = arg;
	struct lslot *a = c->a;
	uint64_t s = c->seed;

	for (int k = 0; k < S_OPS; k++) {
		uint64_t x = rnd(&s);
		struct lslot *sl = &a[x % S_SLOTS];
		if (sl->size >= 16)
			check(sl->p, sl->size, "server");
		free(sl->p);
		sl->size = S_MIN + (x >> 32) % (S_MAX - S_MIN + 1);
		sl->p = xmalloc_any(sl->size);
		if (sl->size >= 16)
			tag(sl->p, sl->size);
		else
			*(volatile char *)sl->p = 'a';
	}
	c->seed = s;
	atomic_fetch_add(&s_threads, 1);
	if (--c->left > 0) {
		pthread_t th;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&th, &at, server_thread, c)) {
			perror("bench_peers_workloads: server: pthread_create");
			exit(1);
		}
		pthread_attr_destroy(&at);
	} else {
		sem_post(&s_done);
	}
	return NULL;
}

static void wl_server(void)
{
	long per_chain = scaled(40);

	sem_init(&s_done, 0, 0);
	for (int c = 0; c < S_CHAINS; c++) {
		uint64_t s = 0x51ED270B27C4A3D1ull * (uint64_t)(c + 1);
		s_chain[c].a = map(sizeof(struct lslot) * S_SLOTS);
		for (int i = 0; i < S_SLOTS; i++) {
			struct lslot *sl = &s_chain[c].a[i];
			sl->size = S_MIN + rnd(&s) % (S_MAX - S_MIN + 1);
			sl->p = xmalloc_any(sl->size);
			if (sl->size >= 16)
				tag(sl->p, sl->size);
		}
		s_chain[c].seed = s;
		s_chain[c].left = per_chain;
	}
	cpu_start();
	uint64_t t0 = now_ns();
	for (int c = 0; c < S_CHAINS; c++) {
		pthread_t th;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		pthread_create(&th, &at, server_thread, &s_chain[c]);
		pthread_attr_destroy(&at);
	}
	for (int c = 0; c < S_CHAINS; c++)
		sem_wait(&s_done);
	uint64_t t1 = now_ns();
	long live = 0;
	for (int c = 0; c < S_CHAINS; c++)
		for (int i = 0; i < S_SLOTS; i++)
			live += (long)s_chain[c].a[i].size;
	result("server", atomic_load(&s_threads) * S_OPS, t1 - t0, rss_kb(), live / 1024, 0);
	for (int c = 0; c < S_CHAINS; c++)
		for (int i = 0; i < S_SLOTS; i++)
			free(s_chain[c].a[i].p);
}

/* ---- threads: N private churns at once -------------------------------------- */

#define T_THREADS	4
#define T_SLOTS		2000
#define T_OPS		1000000

static long t_ops;

static size_t t_size(uint64_t x)
{
	unsigned int k = (unsigned int)(x % 100);
	uint64_t y = x >> 8;

	if (k < 70)
		return 16 + y % (128 - 16 + 1);
	if (k < 95)
		return 128 + y % (1024 - 128 + 1);
	return 1024 + y % (16384 - 1024 + 1);
}

static void *threads_thread(void *arg)
{
	uint64_t s = 0xA24BAED4963EE407ull * ((uint64_t)(uintptr_t)arg + 1);
	struct lslot *a = xmalloc(sizeof(*a) * T_SLOTS);

	for (int i = 0; i < T_SLOTS; i++) {
		a[i].size = t_size(rnd(&s));
		a[i].p = xmalloc(a[i].size);
		tag(a[i].p, a[i].size);
	}
	for (long k = 0; k < t_ops; k++) {
		uint64_t x = rnd(&s);
		struct lslot *sl = &a[x % T_SLOTS];
		check(sl->p, sl->size, "threads");
		free(sl->p);
		sl->size = t_size(x >> 16);
		sl->p = xmalloc(sl->size);
		tag(sl->p, sl->size);
	}
	for (int i = 0; i < T_SLOTS; i++)
		free(a[i].p);
	free(a);
	return NULL;
}

static void wl_threads(void)
{
	pthread_t th[T_THREADS];

	t_ops = scaled(T_OPS);
	cpu_start();
	uint64_t t0 = now_ns();
	for (int i = 0; i < T_THREADS; i++)
		pthread_create(&th[i], NULL, threads_thread, (void *)(uintptr_t)i);
	for (int i = 0; i < T_THREADS; i++)
		pthread_join(th[i], NULL);
	uint64_t t1 = now_ns();
	result("threads", T_THREADS * t_ops, t1 - t0, rss_kb(), 0, 0);
}

/* ---- leak: many short threads, a growing heap -------------------------------- */

#define LK_THREADS	2000
#define LK_ALLOCS	100
#define LK_KEEP		20

static void **lk_kept;
static uint32_t *lk_kept_size;
static atomic_long lk_nkept;

static void *leak_thread(void *arg)
{
	uint64_t s = 0xD1B54A32D192ED03ull * ((uint64_t)(uintptr_t)arg + 1);
	void *p[LK_ALLOCS];
	uint32_t size[LK_ALLOCS];

	for (int i = 0; i < LK_ALLOCS; i++) {
		size[i] = 16 + (uint32_t)(rnd(&s) % (512 - 16 + 1));
		p[i] = xmalloc(size[i]);
		tag(p[i], size[i]);
	}
	/* Keep every fifth: the heap grows by LK_KEEP blocks a thread. */
	for (int i = 0; i < LK_ALLOCS; i++) {
		check(p[i], size[i], "leak");
		if (i % (LK_ALLOCS / LK_KEEP) == 0) {
			long n = atomic_fetch_add(&lk_nkept, 1);
			lk_kept[n] = p[i];
			lk_kept_size[n] = size[i];
		} else {
			free(p[i]);
		}
	}
	return NULL;
}

static void wl_leak(void)
{
	long nthreads = scaled(LK_THREADS);

	lk_kept = map(sizeof(void *) * (size_t)nthreads * LK_KEEP);
	lk_kept_size = map(sizeof(uint32_t) * (size_t)nthreads * LK_KEEP);
	cpu_start();
	uint64_t t0 = now_ns();
	for (long t = 0; t < nthreads; t += 2) {
		pthread_t th[2];
		int n = nthreads - t >= 2 ? 2 : 1;
		for (int i = 0; i < n; i++)
			if (pthread_create(&th[i], NULL, leak_thread, (void *)(uintptr_t)(t + i))) {
				perror("bench_peers_workloads: leak: pthread_create");
				exit(1);
			}
		for (int i = 0; i < n; i++)
			pthread_join(th[i], NULL);
	}
	uint64_t t1 = now_ns();
	long live = 0, n = atomic_load(&lk_nkept);
	for (long i = 0; i < n; i++)
		live += lk_kept_size[i];
	result("leak", nthreads * LK_ALLOCS, t1 - t0, rss_kb(), live / 1024, 0);
	for (long i = 0; i < n; i++) {
		check(lk_kept[i], lk_kept_size[i], "leak");
		free(lk_kept[i]);
	}
}

/* ---- big: blocks of 5..25 MiB, zero-filled, replaced at random -------------- */

#define BG_BUFS		20
#define BG_REPL		40
#define BG_MIN		(5ul << 20)
#define BG_MAX		(25ul << 20)

static void wl_big(void)
{
	static char *buf[BG_BUFS];
	static size_t bsize[BG_BUFS];
	long n = scaled(BG_REPL), bad = 0;
	uint64_t s = 0x9FB21C651E98DF25ull, t0 = 0;

	for (long k = -BG_BUFS; k < n; k++) {
		if (k == 0) {
			cpu_start();
			t0 = now_ns();
		}
		uint64_t x = rnd(&s);
		int i = k < 0 ? (int)(k + BG_BUFS) : (int)(x % BG_BUFS);
		size_t size = BG_MIN + (x >> 8) % (BG_MAX - BG_MIN + 1);
		if (buf[i])
			check(buf[i], bsize[i], "big");
		free(buf[i]);
		buf[i] = calloc(1, size);
		if (!buf[i]) {
			fprintf(stderr, "bench_peers_workloads: calloc(%zu) returned NULL\n", size);
			printf("RESULT wl=abort alloc=%s errors=1\n", alloc_name);
			exit(1);
		}
		bsize[i] = size;
		/* Zero where the program will look, then used: one write a page. */
		for (size_t off = 0; off < size; off += 4096) {
			bad += buf[i][off] != 0;
			buf[i][off] = (char)(k + 1);
		}
		bad += buf[i][size - 1] != 0;
		tag(buf[i], size);
	}
	uint64_t t1 = now_ns();
	if (bad)
		atomic_fetch_add(&errors, bad);
	long live = 0;
	for (int i = 0; i < BG_BUFS; i++)
		live += (long)bsize[i];
	result("big", n, t1 - t0, rss_kb(), live / 1024, 0);
	for (int i = 0; i < BG_BUFS; i++)
		free(buf[i]);
}

/* ---- stress: oversubscribed malloc/realloc/free on shared slots ------------- */

#define ST_THREADS	8
#define ST_SLOTS	8192
#define ST_OPS		200000

static _Atomic(void *) st_slot[ST_SLOTS];
static long st_ops;
static pthread_barrier_t st_bar;

static size_t st_size(uint64_t x)
{
	if ((x & 63) == 0)
		return 16 + (x >> 8) % (32768 - 16 + 1);
	return 16 + (x >> 8) % (2048 - 16 + 1);
}

/* The tag holds the size, so any thread can check and resize a block. */
static size_t st_check(void *p)
{
	uint64_t t;

	memcpy(&t, p, sizeof(t));
	size_t size = (size_t)(t ^ MAGIC);
	if (size < 16 || size > 32768) {
		if (atomic_fetch_add(&errors, 1) < 5)
			fprintf(stderr, "bench_peers_workloads: stress: object %p: bad tag %#llx\n",
				p, (unsigned long long)t);
		return 0;
	}
	check(p, size, "stress");
	return size;
}

static void *stress_thread(void *arg)
{
	uint64_t s = 0x94D049BB133111EBull * ((uint64_t)(uintptr_t)arg + 1);

	pthread_barrier_wait(&st_bar);
	for (long k = 0; k < st_ops; k++) {
		uint64_t x = rnd(&s);
		_Atomic(void *) *slot = &st_slot[x % ST_SLOTS];
		void *p = atomic_exchange_explicit(slot, NULL, memory_order_acquire), *q;
		size_t size = st_size(x >> 16);
		if (!p) {
			q = xmalloc(size);
		} else if (!st_check(p)) {
			continue;	/* counted: leave it */
		} else if ((x >> 13) & 1) {
			free(p);
			continue;
		} else {
			q = realloc(p, size);
			if (!q) {
				fprintf(stderr, "bench_peers_workloads: realloc(%zu) returned NULL\n", size);
				exit(1);
			}
		}
		tag(q, size);
		void *old = atomic_exchange_explicit(slot, q, memory_order_acq_rel);
		if (old && st_check(old))
			free(old);
	}
	return NULL;
}

static void wl_stress(void)
{
	pthread_t th[ST_THREADS];

	st_ops = scaled(ST_OPS);
	pthread_barrier_init(&st_bar, NULL, ST_THREADS + 1);
	for (int i = 0; i < ST_THREADS; i++)
		pthread_create(&th[i], NULL, stress_thread, (void *)(uintptr_t)i);
	cpu_start();
	uint64_t t0 = now_ns();
	pthread_barrier_wait(&st_bar);
	for (int i = 0; i < ST_THREADS; i++)
		pthread_join(th[i], NULL);
	uint64_t t1 = now_ns();
	long live = 0;
	for (int i = 0; i < ST_SLOTS; i++) {
		void *p = atomic_load(&st_slot[i]);
		if (p)
			live += (long)st_check(p);
	}
	result("stress", ST_THREADS * st_ops, t1 - t0, rss_kb(), live / 1024, 0);
	for (int i = 0; i < ST_SLOTS; i++)
		free(atomic_load(&st_slot[i]));
}

/* ---- bulk4096: batches of 4096 ----------------------------------------------- */

#define BN_N	4096

static __attribute__((noinline)) void bulk4096_rounds(void **v, long rounds)
{
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < BN_N; i++) {
			v[i] = xmalloc(B_SIZE);
			*(volatile char *)v[i] = 1;
		}
		escape(v);
		for (int i = 0; i < BN_N; i++)
			free(v[i]);
	}
}

static void wl_bulk4096(void)
{
	static void *v[BN_N];
	long rounds = scaled(1000000 / BN_N);

	bulk4096_rounds(v, rounds / 50 + 1);
	cpu_start();
	uint64_t t0 = now_ns();
	bulk4096_rounds(v, rounds);
	uint64_t t1 = now_ns();
	result("bulk4096", rounds * BN_N, t1 - t0, rss_kb(), 0, 0);
}

#endif /* KMEM_BENCH_PEERS_WIDE_H */
