// SPDX-License-Identifier: MIT
/*
 * bench_slab_prodcons: SLUB slab_thrash_ratio (Rientjes 2009, "slub: add per-cache slab
 * thrash ratio"): a netperf TCP_RR-like request/response load in which
 * every object is freed by a different thread than the one that allocated
 * it, so SLUB's free fast path (object in the freeing thread's own cpu slab)
 * almost never applies and cpu slabs are refilled from partial slabs that
 * remote frees left with only a few free objects ("thrashing").
 *
 * One "connection" is a pair of threads, a client and a server, with two
 * single-producer/single-consumer rings between them:
 *
 *   client: allocates a request (a 256-byte header, kmalloc-256, pointing to
 *           a 2048-byte payload, kmalloc-2k: the post's kmalloc-2048), sends
 *           it; receives a response, frees its header and payload: one
 *           transaction;
 *   server: receives a request, frees it, allocates a response (256 + 2048)
 *           and sends it back.
 *
 * So each transaction is 4 allocations and 4 remote frees, two in each
 * cache, like the skb heads and data of netperf's TCP_RR.  Unlike TCP_RR a
 * client keeps up to WINDOW transactions in flight (netperf's burst mode,
 * -b): with one in flight, a 2-core machine measures thread wake-ups, not
 * allocators.  A thread with nothing to do calls sched_yield(); with more
 * pairs than cores the threads take turns, which is the point (the post ran
 * 16..192 threads).
 *
 * The server holds up to DEPTH requests and answers them in random order:
 * a thread serving many connections finishes them out of order.  Without
 * that, objects die in the order they were born, every slab empties
 * completely before it is reused, and nothing thrashes (-d 0 shows it: 15
 * fast-path allocations per slow one, one per 16-object slab).  With it,
 * slabs come back holding a few long-lived objects, as the kernel's per-CPU
 * slabs shared by many sockets do, and the alloc fast:slow ratio falls to
 * the post's 2..4.
 *
 * Each configuration runs in its own forked process (kmem_init once per
 * process).  The post is about cpu slabs, so its configurations boot the
 * classic SLUB the post ran on (slub_sheaves=0: cpu slabs and partial
 * lists, no sheaves): kmem with slab_thrash_ratio 0 and 20 on kmalloc-256
 * and kmalloc-2k ("kmem r0", "kmem r20"; set through
 * /sys/kernel/slab/<cache>/slab_thrash_ratio when that file exists, else
 * slub_set_min_free_watermark()), each also with cpu_partial=0 ("np": no
 * per-thread partial lists, which 2009's SLUB did not have yet; through
 * sysfs or slub_set_cpu_partial()).  "kmem" is today's default boot
 * (sheaves on, slab_thrash_ratio 0), judged against glibc's malloc.  Then
 * glibc's malloc, and jemalloc, mimalloc and tcmalloc loaded with dlopen as
 * in bench_slab_vs_malloc.  Configurations are interleaved over ROUNDS rounds;
 * throughput is the median, the SLUB counters (slub_stat_sum over all
 * threads) are summed over the rounds.
 *
 *   bench_slab_prodcons [-p PAIRS,...] [-t SECONDS] [-r ROUNDS] [-w WINDOW] [-d DEPTH] [-v]
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kmem.h>

#include "slab_bench.h"

#include "slab/slab.h"
#include "slab/slub/slub.h"

#define CMDLINE		"mem=512M"
#define CMDLINE_CLASSIC	CMDLINE " slub_sheaves=0"	/* the post's SLUB: no sheaves */
#define HDR_SIZE	256
#define DATA_SIZE	2048
#define RING		256		/* slots per ring, >= WINDOW */
#define MAX_PAIRS	16
#define MAX_ROUNDS	15
#define MAX_PCOUNTS	16

enum cfg {
	C_KMEM,						/* the defaults: sheaves */
	C_KMEM0, C_KMEM20, C_KMEM0_NP, C_KMEM20_NP,	/* slub_sheaves=0, the post's SLUB */
	C_GLIBC, C_JEMALLOC, C_MIMALLOC, C_TCMALLOC, NR_CFGS
};
#define NR_KMEM_CFGS	5
static const char *const cfg_name[NR_CFGS] = {
	"kmem", "kmem r0", "kmem r20", "kmem r0 np", "kmem r20 np",
	"glibc", "jemalloc", "mimalloc", "tcmalloc",
};
static bool cfg_classic(int c) { return c != C_KMEM && c < NR_KMEM_CFGS; }
static bool cfg_ratio20(int c) { return c == C_KMEM20 || c == C_KMEM20_NP; }
static bool cfg_nopartial(int c) { return c == C_KMEM0_NP || c == C_KMEM20_NP; }

enum { CACHE_256, CACHE_2048, NR_CACHES };
/* The post's names; kmem names the second one kmalloc-2k, as newer kernels do. */
static const char *const seed_cache_name[NR_CACHES] = { "kmalloc-256", "kmalloc-2048" };

struct result {
	int ok;
	double tps;				/* transactions per second */
	double tpc;				/* transactions per CPU-second */
	double cpus;				/* CPUs the process had on average */
	unsigned long tx;
	double secs;
	unsigned long stat[NR_CACHES][NR_SLUB_STAT_ITEMS];
	unsigned int ratio[NR_CACHES];		/* effective slab_thrash_ratio */
	unsigned int watermark[NR_CACHES];	/* min_free_watermark, objects */
	unsigned int objects[NR_CACHES];	/* objects per slab */
	int via_sysfs;
	char cache[NR_CACHES][32];		/* kmem's names of the two caches */
	char path[256];				/* the peer's library */
};

/* ---- the allocator under test -------------------------------------- */

/* Every allocator, kmem's too, is called through a function pointer. */
static struct {
	bool kmem;
	void *(*kmalloc)(size_t, gfp_t);
	void (*kfree)(const void *);
	void *(*malloc)(size_t);
	void (*free)(void *);
} A;

static inline void *xalloc(size_t size)
{
	return A.kmem ? A.kmalloc(size, GFP_KERNEL) : A.malloc(size);
}

static inline void xfree(void *p)
{
	if (A.kmem)
		A.kfree(p);
	else
		A.free(p);
}

struct msg {
	char *data;		/* DATA_SIZE bytes */
	uint64_t seq;
};

static struct msg *msg_new(uint64_t seq)
{
	struct msg *m = xalloc(HDR_SIZE);
	char *d = xalloc(DATA_SIZE);

	if (!m || !d) {
		fprintf(stderr, "bench_slab_prodcons: allocation failed\n");
		_exit(3);
	}
	m->data = d;
	m->seq = seq;
	memset(d, (int)seq, 64);	/* touch the payload's first cache line */
	return m;
}

static void msg_free(struct msg *m)
{
	xfree(m->data);
	xfree(m);
}

/* ---- SPSC ring ----------------------------------------------------- */

struct ring {
	_Alignas(64) atomic_ulong head;		/* written by the consumer */
	_Alignas(64) atomic_ulong tail;		/* written by the producer */
	_Alignas(64) struct msg *slot[RING];
};

static bool ring_push(struct ring *r, struct msg *m)
{
	unsigned long t = atomic_load_explicit(&r->tail, memory_order_relaxed);

	if (t - atomic_load_explicit(&r->head, memory_order_acquire) >= RING)
		return false;
	r->slot[t % RING] = m;
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	return true;
}

static struct msg *ring_pop(struct ring *r)
{
	unsigned long h = atomic_load_explicit(&r->head, memory_order_relaxed);

	if (h == atomic_load_explicit(&r->tail, memory_order_acquire))
		return NULL;
	struct msg *m = r->slot[h % RING];
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
	return m;
}

struct conn {
	struct ring req, resp;
	_Alignas(64) atomic_int client_done;
	unsigned long tx;
};

static struct conn *conns;
static atomic_int go, stop;
static unsigned int window = 128;

static void wait_go(void)
{
	while (!atomic_load_explicit(&go, memory_order_acquire))
		sched_yield();
}

static void *client(void *arg)
{
	struct conn *c = arg;
	unsigned long out = 0, tx = 0, seq = 0;
	struct msg *m;

	wait_go();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		bool progress = false;
		while (out < window) {
			if (!ring_push(&c->req, msg_new(seq++)))
				abort();	/* cannot happen: RING >= window */
			out++;
			progress = true;
		}
		while ((m = ring_pop(&c->resp))) {
			msg_free(m);
			out--;
			tx++;
			progress = true;
		}
		if (!progress)
			sched_yield();
	}
	while (out) {		/* drain: everything sent comes back and is freed */
		if ((m = ring_pop(&c->resp))) {
			msg_free(m);
			out--;
		} else {
			sched_yield();
		}
	}
	c->tx = tx;
	atomic_store_explicit(&c->client_done, 1, memory_order_release);
	return NULL;
}

/*
 * The server answers in random order, holding up to @depth requests: many
 * connections multiplexed on one thread finish out of order, so objects are
 * freed in an order unrelated to the one they were allocated in and slabs
 * come back partially free, as with the kernel's shared per-CPU slabs under
 * netperf.  A request is answered when the pool is full or nothing new came.
 */
static unsigned int depth = 96;

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void serve(struct conn *c, struct msg *m)
{
	uint64_t seq = m->seq;

	msg_free(m);
	if (!ring_push(&c->resp, msg_new(seq)))
		abort();	/* cannot happen: RING >= window */
}

static void *server(void *arg)
{
	struct conn *c = arg;
	struct msg *m, *pool[RING];
	unsigned int n = 0;
	uint64_t rnd = (uintptr_t)c | 1;

	wait_go();
	for (;;) {
		if ((m = ring_pop(&c->req))) {
			if (!depth) {
				serve(c, m);
				continue;
			}
			if (n < depth) {
				pool[n++] = m;
				continue;
			}
			unsigned int i = (unsigned int)(xorshift(&rnd) % n);
			struct msg *old = pool[i];
			pool[i] = m;
			serve(c, old);
			continue;
		}
		if (n) {	/* nothing new: answer one that waits */
			unsigned int i = (unsigned int)(xorshift(&rnd) % n);
			struct msg *old = pool[i];
			pool[i] = pool[--n];
			serve(c, old);
			continue;
		}
		if (atomic_load_explicit(&c->client_done, memory_order_acquire))
			break;
		sched_yield();
	}
	return NULL;
}

/* ---- one configuration, in a child process ------------------------- */

static struct result *res;	/* [round][pcount][cfg], shared with the children */
static int npcounts, pcounts[MAX_PCOUNTS], rounds = 5;
static double seconds = 0.2;
static bool verbose;

struct job {
	int round, pi, cfg;
};

static struct result *slot(int round, int pi, int cfg)
{
	return &res[((size_t)round * (size_t)npcounts + (size_t)pi) * NR_CFGS + (size_t)cfg];
}

static struct kmem_cache *kcache(int which)
{
	return kmalloc_caches[kmalloc_slab_index(which == CACHE_256 ? HDR_SIZE : DATA_SIZE)];
}

/* Through sysfs when the file exists (1), else the SLUB call (0). */
static int set_attr(int which, const char *attr, unsigned int val)
{
	char path[128], v[16];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", kmem_cache_name(kcache(which)), attr);
	snprintf(v, sizeof(v), "%u", val);
	if (kmem_write(path, v) == 0)
		return 1;
	if (!strcmp(attr, "slab_thrash_ratio"))
		slub_set_min_free_watermark(kcache(which), val);
	else
		slub_set_cpu_partial(kcache(which), val);
	return 0;
}

static void run_job(void *arg)
{
	struct job *j = arg;
	struct result *r = slot(j->round, j->pi, j->cfg);
	int pairs = pcounts[j->pi];
	pthread_t th[2 * MAX_PAIRS];

	memset(r, 0, sizeof(*r));
	if (j->cfg < NR_KMEM_CFGS) {
		const char *cmdline = cfg_classic(j->cfg) ? CMDLINE_CLASSIC : CMDLINE;
		if (kmem_init(cmdline)) {
			fprintf(stderr, "bench_slab_prodcons: kmem_init(\"%s\") failed\n", cmdline);
			_exit(2);
		}
		A.kmem = true;
		A.kmalloc = kmalloc;
		A.kfree = kfree;
		for (int k = 0; k < NR_CACHES; k++) {
			if (cfg_classic(j->cfg))
				r->via_sysfs = set_attr(k, "slab_thrash_ratio",
							cfg_ratio20(j->cfg) ? 20 : 0);
			if (cfg_nopartial(j->cfg))
				set_attr(k, "cpu_partial", 0);
			struct kmem_cache *s = kcache(k);
			snprintf(r->cache[k], sizeof(r->cache[k]), "%s", kmem_cache_name(s));
			r->ratio[k] = (unsigned int)slub_thrash_ratio(s);
			r->watermark[k] = slub_of(s)->min_free_watermark;
			r->objects[k] = oo_objects(slub_of(s)->oo);
			/* Only what this run does: clear kmem's own boot-time counts. */
			for (int si = 0; si < NR_SLUB_STAT_ITEMS; si++)
				slub_stat_clear(s, si);
		}
	} else if (j->cfg == C_GLIBC) {
		A.malloc = malloc;
		A.free = free;
	} else {
		struct sb_peer *p = &sb_peers[j->cfg - C_JEMALLOC];
		if (!sb_peer_load(p))
			_exit(0);	/* r->ok stays 0: n/a */
		A.malloc = p->malloc;
		A.free = p->free;
		snprintf(r->path, sizeof(r->path), "%s", p->path);
	}

	conns = aligned_alloc(64, sizeof(*conns) * (size_t)pairs);
	if (!conns)
		_exit(2);
	memset(conns, 0, sizeof(*conns) * (size_t)pairs);
	for (int i = 0; i < pairs; i++) {
		if (pthread_create(&th[2 * i], NULL, client, &conns[i]) ||
		    pthread_create(&th[2 * i + 1], NULL, server, &conns[i])) {
			fprintf(stderr, "bench_slab_prodcons: pthread_create failed\n");
			_exit(2);
		}
	}
	uint64_t u0 = sb_cpu_ns(CLOCK_PROCESS_CPUTIME_ID), t0 = bench_now_ns();
	atomic_store_explicit(&go, 1, memory_order_release);
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	atomic_store_explicit(&stop, 1, memory_order_relaxed);
	uint64_t t1 = bench_now_ns(), u1 = sb_cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (int i = 0; i < 2 * pairs; i++)
		pthread_join(th[i], NULL);

	for (int i = 0; i < pairs; i++)
		r->tx += conns[i].tx;
	r->secs = (double)(t1 - t0) / 1e9;
	r->tps = (double)r->tx / r->secs;
	r->tpc = (double)r->tx / ((double)(u1 - u0) / 1e9);
	r->cpus = (double)(u1 - u0) / (double)(t1 - t0);
	if (A.kmem)
		for (int k = 0; k < NR_CACHES; k++)
			for (int si = 0; si < NR_SLUB_STAT_ITEMS; si++)
				r->stat[k][si] = slub_stat_sum(kcache(k), si, NULL, 0, NULL);
	r->ok = 1;
}

/*
 * One throughput table, medians over the rounds, thousands of transactions
 * per CPU-second (@per_cpu) or per second.  Returns at how many pair counts
 * kmem (the defaults) did at least as well as glibc, *@rows out of how many.
 */
static int print_throughput(bool per_cpu, int *rows)
{
	double med[MAX_PCOUNTS][NR_CFGS];
	int met = 0, nrows = 0;

	if (per_cpu)
		printf("\nTransactions per CPU-second (process CPU time, all threads), thousands, medians:\n");
	else
		printf("\nTransactions per second (wall clock), thousands, medians; and CPUs used by kmem:\n");
	printf("%5s |", "pairs");
	for (int c = 0; c < NR_CFGS; c++)
		printf(" %11s", cfg_name[c]);
	if (per_cpu)
		printf(" | %8s %8s %8s %10s\n", "r20/r0", "np", "kmem/r0", "kmem/glibc");
	else
		printf(" | %5s\n", "CPUs");
	for (int pi = 0; pi < npcounts; pi++) {
		double cpus = 0;
		printf("%5d |", pcounts[pi]);
		for (int c = 0; c < NR_CFGS; c++) {
			double v[MAX_ROUNDS], u[MAX_ROUNDS];
			int n = 0;
			for (int r = 0; r < rounds; r++)
				if (slot(r, pi, c)->ok) {
					u[n] = slot(r, pi, c)->cpus;
					v[n++] = per_cpu ? slot(r, pi, c)->tpc : slot(r, pi, c)->tps;
				}
			med[pi][c] = n ? bench_median(v, n) : 0;
			if (c == C_KMEM && n)
				cpus = bench_median(u, n);
			if (n)
				printf(" %11.1f", med[pi][c] / 1e3);
			else
				printf(" %11s", "n/a");
		}
		if (!per_cpu) {
			printf(" | %5.2f\n", cpus);
			continue;
		}
		char a[16] = "-", b[16] = "-", d[16] = "-", g[16] = "-";
		if (med[pi][C_KMEM0] > 0 && med[pi][C_KMEM20] > 0)
			snprintf(a, sizeof(a), "%.2fx", med[pi][C_KMEM20] / med[pi][C_KMEM0]);
		if (med[pi][C_KMEM0_NP] > 0 && med[pi][C_KMEM20_NP] > 0)
			snprintf(b, sizeof(b), "%.2fx", med[pi][C_KMEM20_NP] / med[pi][C_KMEM0_NP]);
		if (med[pi][C_KMEM] > 0 && med[pi][C_KMEM0] > 0)
			snprintf(d, sizeof(d), "%.2fx", med[pi][C_KMEM] / med[pi][C_KMEM0]);
		if (med[pi][C_KMEM] > 0 && med[pi][C_GLIBC] > 0) {
			snprintf(g, sizeof(g), "%.2fx", med[pi][C_KMEM] / med[pi][C_GLIBC]);
			nrows++;
			if (med[pi][C_KMEM] >= med[pi][C_GLIBC])
				met++;
		}
		printf(" | %8s %8s %8s %10s\n", a, b, d, g);
	}
	if (rows)
		*rows = nrows;
	return met;
}

/* ---- main ---------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_slab_prodcons [-p PAIRS,...] [-t SECONDS] [-r ROUNDS] [-w WINDOW]\n"
		"                           [-d DEPTH] [-v]\n"
		"  -p LIST     client/server thread pairs (default 1,2,3,4,6,8; at most %d)\n"
		"  -t SECONDS  duration of one run (default 0.2)\n"
		"  -r ROUNDS   interleaved rounds, median throughput (default 5, max %d)\n"
		"  -w WINDOW   transactions in flight per pair (default 128, at most %d)\n"
		"  -d DEPTH    requests a server holds and answers in random order\n"
		"              (default 96; 0: in order)\n"
		"  -v          all SLUB counters of the kmem runs\n", MAX_PAIRS, MAX_ROUNDS, RING);
	exit(2);
}

/* @a / @b with @prec decimals into @buf, "-" when @b is 0. */
static const char *ratio(char *buf, size_t size, unsigned long a, unsigned long b, int prec)
{
	if (!b)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.*f", prec, (double)a / (double)b);
	return buf;
}

int main(int argc, char **argv)
{
	static const int defaults[] = { 1, 2, 3, 4, 6, 8 };
	int opt;

	sb_reexec_for_static_tls(argv);
	npcounts = (int)(sizeof(defaults) / sizeof(defaults[0]));
	memcpy(pcounts, defaults, sizeof(defaults));
	while ((opt = getopt(argc, argv, "p:t:r:w:d:vh")) != -1) {
		switch (opt) {
		case 'p':
			npcounts = 0;
			for (char *t = strtok(optarg, ","); t && npcounts < MAX_PCOUNTS;
			     t = strtok(NULL, ",")) {
				pcounts[npcounts] = atoi(t);
				if (pcounts[npcounts] < 1 || pcounts[npcounts] > MAX_PAIRS)
					usage();
				npcounts++;
			}
			if (!npcounts)
				usage();
			break;
		case 't': seconds = atof(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		case 'w': window = (unsigned int)atoi(optarg); break;
		case 'd': depth = (unsigned int)atoi(optarg); break;
		case 'v': verbose = true; break;
		default: usage();
		}
	}
	if (seconds <= 0 || seconds > 60 || rounds < 1 || rounds > MAX_ROUNDS || window < 1 ||
	    window > RING || depth >= RING)
		usage();

	res = bench_shared(sizeof(*res) * (size_t)rounds * (size_t)npcounts * NR_CFGS);
	if (!res) {
		perror("mmap");
		return 1;
	}
	char machine[300];
	sb_machine(machine, sizeof(machine));
	double load = sb_loadavg();

	for (int r = 0; r < rounds; r++)
		for (int pi = 0; pi < npcounts; pi++)
			for (int k = 0; k < NR_CFGS; k++) {
				int c = (k + r + pi) % NR_CFGS;	/* rotate who goes first */
				struct job j = { r, pi, c };
				if (!bench_fork(run_job, &j))
					fprintf(stderr, "bench_slab_prodcons: %s, %d pairs: the run failed\n",
						cfg_name[c], pcounts[pi]);
			}

	/* Which peers ran at all. */
	bool avail[NR_CFGS];
	const char *where[NR_CFGS] = { 0 };
	for (int c = 0; c < NR_CFGS; c++) {
		avail[c] = false;
		for (int r = 0; r < rounds && !avail[c]; r++)
			for (int pi = 0; pi < npcounts; pi++)
				if (slot(r, pi, c)->ok) {
					avail[c] = true;
					where[c] = slot(r, pi, c)->path;
					break;
				}
	}
	struct result *k20 = NULL;
	for (int r = 0; r < rounds && !k20; r++)
		for (int pi = 0; pi < npcounts; pi++)
			if (slot(r, pi, C_KMEM20)->ok) {
				k20 = slot(r, pi, C_KMEM20);
				break;
			}

	printf("bench_slab_prodcons: SLUB slab_thrash_ratio (Rientjes 2009), a TCP_RR-like request/response load. Per transaction\n"
	       "the client allocates a request (%d-byte header + %d-byte payload), the server frees\n"
	       "it and allocates a response of the same shape, which the client frees: 4 allocations\n"
	       "and 4 cross-thread frees. Window %u transactions in flight per pair; the server\n"
	       "answers in random order out of up to %u waiting requests (0 = in order).\n"
	       "%.2f s per run; median of %d interleaved rounds; every run a fresh process.\n"
	       "Machine: %s (pairs > CPUs oversubscribe);\n"
	       "load average %.2f at the start.\n"
	       "kmem r0/r20: kmem_init(\"%s\"), the classic SLUB the post ran on (cpu\n"
	       "slabs and partial lists, no sheaves), slab_thrash_ratio 0/20 on kmalloc-256 and\n"
	       "kmalloc-2k; np: also cpu_partial=0 (no per-thread partial lists, as in 2009's SLUB,\n"
	       "the post's kernel). kmem: kmem_init(\"%s\"), today's defaults (sheaves on,\n"
	       "slab_thrash_ratio 0).\n",
	       HDR_SIZE, DATA_SIZE, window, depth, seconds, rounds, machine, load, CMDLINE_CLASSIC,
	       CMDLINE);
	if (k20)
		printf("slab_thrash_ratio=20 set through %s:\n"
		       "effective %u%% = watermark %u of %u objects (%s), %u%% = %u of %u (%s)\n",
		       k20->via_sysfs ? "/sys/kernel/slab/<cache>/slab_thrash_ratio"
				      : "slub_set_min_free_watermark() (no sysfs file yet)",
		       k20->ratio[0], k20->watermark[0], k20->objects[0], k20->cache[0],
		       k20->ratio[1], k20->watermark[1], k20->objects[1], k20->cache[1]);
	for (int c = C_GLIBC; c < NR_CFGS; c++)
		printf("  %-9s %s\n", cfg_name[c],
		       c == C_GLIBC ? "the process's malloc/free"
		       : avail[c]   ? where[c]
				    : "n/a (not installed, or dlopen failed)");

	/* Throughput: per CPU-second (judged on), then per wall-clock second. */
	int rows = 0, met = print_throughput(true, &rows);
	print_throughput(false, NULL);

	/* SLUB counters, like the post's tables. */
	for (int k = 0; k < NR_CACHES; k++) {
		char label[96];
		const char *kname = k20 ? k20->cache[k] : seed_cache_name[k];
		if (strcmp(kname, seed_cache_name[k]))
			snprintf(label, sizeof(label), "%s (the post's %s)", kname, seed_cache_name[k]);
		else
			snprintf(label, sizeof(label), "%s", kname);
		printf("\n%s, SLUB counters summed over the %d rounds\n(sheaf: alloc_cpu_sheaf, "
		       "free_cpu_sheaf, \"-\" in a build without KMEM_SLUB_STATS; ratios: fast / slow, "
		       "as in the post; \"-\": no slow path):\n", label, rounds);
		printf("%5s %-11s | %11s %11s %11s %7s | %11s %11s %11s %7s | %10s %10s\n", "pairs",
		       "config", "alloc_sheaf", "alloc_fast", "alloc_slow", "ratio", "free_sheaf",
		       "free_fast", "free_slow", "ratio", "thrash_det", "skip_part");
		for (int pi = 0; pi < npcounts; pi++)
			for (int c = 0; c < NR_KMEM_CFGS; c++) {
				unsigned long s[NR_SLUB_STAT_ITEMS] = { 0 };
				for (int r = 0; r < rounds; r++)
					for (int si = 0; si < NR_SLUB_STAT_ITEMS; si++)
						s[si] += slot(r, pi, c)->stat[k][si];
				char ra[16], rf[16], as[24] = "-", fs[24] = "-";
				/* Objects through sheaves are counted only with CONFIG_SLUB_STATS. */
				if (SLUB_STATS_PER_OBJECT) {
					snprintf(as, sizeof(as), "%lu", s[ALLOC_PCS]);
					snprintf(fs, sizeof(fs), "%lu", s[FREE_PCS]);
				}
				printf("%5d %-11s | %11s %11lu %11lu %7s | %11s %11lu %11lu %7s | %10lu %10lu\n",
				       pcounts[pi], cfg_name[c], as, s[ALLOC_FASTPATH],
				       s[ALLOC_SLOWPATH],
				       ratio(ra, sizeof(ra), s[ALLOC_FASTPATH], s[ALLOC_SLOWPATH], 2),
				       fs, s[FREE_FASTPATH], s[FREE_SLOWPATH],
				       ratio(rf, sizeof(rf), s[FREE_FASTPATH], s[FREE_SLOWPATH], 3),
				       s[THRASH_DETECTED], s[THRASH_SKIP_PARTIAL]);
				if (verbose) {
					printf("      ");
					for (int si = 0; si < NR_SLUB_STAT_ITEMS; si++)
						if (s[si])
							printf(" %s=%lu", slub_stat_names[si], s[si]);
					printf("\n");
				}
			}
	}

	printf("\nTarget: producer/consumer throughput at least glibc's"
	       " (kmem, the defaults with sheaves, vs glibc; per CPU-second):\n");
	if (!rows)
		printf("  n/a\n");
	else
		printf("  %s: kmem >= glibc at %d of %d thread-pair counts\n",
		       met == rows ? "met" : "NOT met", met, rows);
	return 0;
}
