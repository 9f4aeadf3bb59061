// SPDX-License-Identifier: MIT
/*
 * bench_slab_vs_malloc: one alloc + free pair, ns, for kmem against the
 * malloc of glibc, jemalloc, mimalloc and tcmalloc, on one pinned CPU.
 *
 *   sizes      16, 64, 256, 1024 bytes
 *   patterns   "pair":     alloc one, free it, in a loop (the hot fast path)
 *              "batch100": alloc 100, then free the 100 in allocation order
 *   allocators kmem_cache  kmem_cache_alloc/kmem_cache_free on a SLAB_NO_MERGE
 *                          cache of exactly that size
 *              kmalloc     kmalloc(size, GFP_KERNEL)/kfree
 *              glibc       the process's own malloc/free (nothing is preloaded)
 *              jemalloc, mimalloc, tcmalloc: dlopen(RTLD_NOW | RTLD_LOCAL) of
 *                          Debian's libjemalloc.so.2, libmimalloc.so.2,
 *                          libtcmalloc_minimal.so.4; dlsym of malloc/free,
 *                          mi_malloc/mi_free, tc_malloc/tc_free.  A peer that
 *                          is not installed shows "n/a".
 *
 * Fairness: every allocator, kmem's included, is called through a function
 * pointer from a noipa loop, so none is inlined or specialised into it; each
 * object gets one byte written.  Allocators are interleaved: each round runs
 * one sample of every (pattern, size, allocator) cell, the allocator order
 * rotating from round to round; a cell's figure is the median of its rounds.
 *
 * When valgrind is installed (and -C is not given), each cell is also run
 * once under callgrind for a deterministic count of instructions per pair
 * (user space only), which a shared 2-core VM's timings are not.
 *
 *   bench_slab_vs_malloc [-r ROUNDS] [-n PAIRS] [-C]
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "slab_bench.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND_H 1
#endif
#endif

#define CMDLINE		"mem=256M"
#define MAX_ROUNDS	31
#define BATCH		100

static const unsigned int sizes[] = { 16, 64, 256, 1024 };
#define NR_SIZES	(int)(sizeof(sizes) / sizeof(sizes[0]))

enum pattern { PAT_PAIR, PAT_BATCH, NR_PATS };
static const char *const pat_name[NR_PATS] = { "pair", "batch100" };

enum alloc_id { A_CACHE, A_KMALLOC, A_GLIBC, A_JEMALLOC, A_MIMALLOC, A_TCMALLOC, NR_ALLOCS };
static const char *const alloc_name[NR_ALLOCS] = {
	"kmem_cache", "kmalloc", "glibc", "jemalloc", "mimalloc", "tcmalloc",
};

typedef void *(*cache_alloc_fn)(struct kmem_cache *, gfp_t);
typedef void (*cache_free_fn)(struct kmem_cache *, void *);
typedef void *(*kmalloc_fn)(size_t, gfp_t);
typedef void (*kfree_fn)(const void *);
typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);

static struct {
	bool avail;
	malloc_fn malloc;	/* glibc and the peers */
	free_fn free;
	const char *where;
} allocs[NR_ALLOCS];

/* Read through a volatile so the compiler cannot see which functions they are. */
static cache_alloc_fn volatile p_cache_alloc = kmem_cache_alloc;
static cache_free_fn volatile p_cache_free = kmem_cache_free;
static kmalloc_fn volatile p_kmalloc = kmalloc;
static kfree_fn volatile p_kfree = kfree;

static struct kmem_cache *caches[NR_SIZES];
static void *arr[BATCH];

static __attribute__((noreturn)) void oom(void)
{
	fprintf(stderr, "bench_slab_vs_malloc: allocation failed\n");
	exit(1);
}

/* ---- the loops: noipa, so each call is a real indirect call ---------- */

/*
 * pair_<api>(a, f, arg, n): n times, obj = ALLOC, write a byte, FREE;
 * batch_<api>(a, f, arg, rounds): rounds times, BATCH objects ALLOC'd (a
 * byte written to each), then FREE'd in allocation order.
 * ALLOC and FREE are expressions over a, f, the third parameter and obj.
 */
#define DEFINE_LOOPS(api, alloc_t, free_t, arg_decl, ALLOC, FREE)		\
static __attribute__((noipa)) void pair_##api(alloc_t a, free_t f, arg_decl, long n) \
{										\
	for (long i = 0; i < n; i++) {						\
		char *obj = ALLOC;						\
		if (__builtin_expect(!obj, 0))					\
			oom();							\
		obj[0] = (char)i;						\
		FREE;								\
	}									\
}										\
static __attribute__((noipa)) void batch_##api(alloc_t a, free_t f, arg_decl, long rounds) \
{										\
	for (long r = 0; r < rounds; r++) {					\
		for (int j = 0; j < BATCH; j++) {				\
			char *obj = arr[j] = ALLOC;				\
			if (__builtin_expect(!obj, 0))				\
				oom();						\
			obj[0] = (char)j;					\
		}								\
		for (int j = 0; j < BATCH; j++) {				\
			void *obj = arr[j];					\
			FREE;							\
		}								\
	}									\
}

DEFINE_LOOPS(cache, cache_alloc_fn, cache_free_fn, struct kmem_cache *s,
	     a(s, GFP_KERNEL), f(s, obj))
DEFINE_LOOPS(kmalloc, kmalloc_fn, kfree_fn, size_t size, a(size, GFP_KERNEL), f(obj))
DEFINE_LOOPS(malloc, malloc_fn, free_fn, size_t size, a(size), f(obj))

/* @pairs alloc+free pairs of one cell. */
static void run_cell(enum pattern pat, int si, enum alloc_id a, long pairs)
{
	size_t size = sizes[si];
	long rounds = pairs / BATCH;

	switch (a) {
	case A_CACHE:
		if (pat == PAT_PAIR)
			pair_cache(p_cache_alloc, p_cache_free, caches[si], pairs);
		else
			batch_cache(p_cache_alloc, p_cache_free, caches[si], rounds);
		break;
	case A_KMALLOC:
		if (pat == PAT_PAIR)
			pair_kmalloc(p_kmalloc, p_kfree, size, pairs);
		else
			batch_kmalloc(p_kmalloc, p_kfree, size, rounds);
		break;
	default:
		if (pat == PAT_PAIR)
			pair_malloc(allocs[a].malloc, allocs[a].free, size, pairs);
		else
			batch_malloc(allocs[a].malloc, allocs[a].free, size, rounds);
		break;
	}
}

static void setup(void)
{
	if (kmem_init(CMDLINE)) {
		fprintf(stderr, "bench_slab_vs_malloc: kmem_init(\"%s\") failed\n", CMDLINE);
		exit(1);
	}
	for (int i = 0; i < NR_SIZES; i++) {
		char name[32];
		snprintf(name, sizeof(name), "vs_malloc_%u", sizes[i]);
		caches[i] = kmem_cache_create(name, sizes[i], 0, SLAB_NO_MERGE, NULL);
		if (!caches[i]) {
			fprintf(stderr, "bench_slab_vs_malloc: kmem_cache_create(%s) failed\n", name);
			exit(1);
		}
	}
	allocs[A_CACHE] = (typeof(allocs[0])){ true, NULL, NULL, "kmem (static libkmem)" };
	allocs[A_KMALLOC] = (typeof(allocs[0])){ true, NULL, NULL, "kmem (static libkmem)" };
	allocs[A_GLIBC] = (typeof(allocs[0])){ true, malloc, free, "the process's malloc/free" };
	for (int p = 0; p < NR_PEERS; p++) {
		struct sb_peer *peer = &sb_peers[p];
		int a = A_JEMALLOC + p;
		if (sb_peer_load(peer))
			allocs[a] = (typeof(allocs[0])){ true, peer->malloc, peer->free, peer->path };
		else
			allocs[a] = (typeof(allocs[0])){ false, NULL, NULL, NULL };
	}
}

/* ---- callgrind ----------------------------------------------------- */

#define CG_PAIRS	20000

/* Under callgrind (--collect-atstart=no): one counted run per cell, each dumped apart. */
static int cg_child(void)
{
#ifdef HAVE_CALLGRIND_H
	setup();
	for (int pat = 0; pat < NR_PATS; pat++)
		for (int si = 0; si < NR_SIZES; si++)
			for (int a = 0; a < NR_ALLOCS; a++) {
				char tag[64];
				if (!allocs[a].avail)
					continue;
				run_cell(pat, si, a, CG_PAIRS / 10);	/* warm up, not counted */
				snprintf(tag, sizeof(tag), "cell %d %d %d", pat, si, a);
				CALLGRIND_ZERO_STATS;
				CALLGRIND_TOGGLE_COLLECT;
				run_cell(pat, si, a, CG_PAIRS);
				CALLGRIND_TOGGLE_COLLECT;
				CALLGRIND_DUMP_STATS_AT(tag);
			}
	return 0;
#else
	return 1;
#endif
}

#ifdef HAVE_CALLGRIND_H
/* Instructions per pair of every cell into @ir (0 where unknown); false if it did not run. */
static bool callgrind(double ir[NR_PATS][NR_SIZES][NR_ALLOCS])
{
	char dir[] = "/tmp/kmem-vs-cg-XXXXXX", cmd[1024], path[1200], line[512];

	if (!mkdtemp(dir))
		return false;
	snprintf(cmd, sizeof(cmd),
		 "valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file=%s/cg.out "
		 "/proc/%d/exe --cg >/dev/null 2>&1", dir, (int)getpid());
	bool ok = system(cmd) == 0;
	for (int part = 1; ok && part < 1000; part++) {
		snprintf(path, sizeof(path), "%s/cg.out.%d", dir, part);
		FILE *f = fopen(path, "r");
		if (!f)
			break;
		int pat = -1, si = -1, a = -1;
		double total = 0;
		while (fgets(line, sizeof(line), f)) {
			char *c = strstr(line, "Client Request: cell ");
			if (!strncmp(line, "desc: Trigger:", 14) && c)
				sscanf(c + strlen("Client Request: cell "), "%d %d %d", &pat, &si, &a);
			else if (!strncmp(line, "summary:", 8) || !strncmp(line, "totals:", 7))
				total = strtod(strchr(line, ':') + 1, NULL);
		}
		fclose(f);
		unlink(path);
		if (pat >= 0 && pat < NR_PATS && si >= 0 && si < NR_SIZES && a >= 0 && a < NR_ALLOCS)
			ir[pat][si][a] = total / CG_PAIRS;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) {
		/* leftovers in /tmp are harmless */
	}
	return ok;
}
#endif

/* ---- main ---------------------------------------------------------- */

static double ns[NR_PATS][NR_SIZES][NR_ALLOCS][MAX_ROUNDS];	/* wall clock */
static double cpu_ns[NR_PATS][NR_SIZES][NR_ALLOCS][MAX_ROUNDS];	/* thread CPU time */
static double med[NR_PATS][NR_SIZES][NR_ALLOCS];		/* median CPU ns */
static double wmed[NR_PATS][NR_SIZES][NR_ALLOCS];		/* median wall ns */
static double ir[NR_PATS][NR_SIZES][NR_ALLOCS];

/* A table's header: pattern, size and a column per allocator (no newline). */
static void print_header(void)
{
	printf("%-8s %5s |", "pattern", "size");
	for (int a = 0; a < NR_ALLOCS; a++)
		printf(" %10s", alloc_name[a]);
}

/*
 * A table of @v, a row per (pattern, size), @prec decimals; "n/a" where the
 * allocator is not there or, with @zero_unknown, where its value is 0.
 */
static void print_table(double v[NR_PATS][NR_SIZES][NR_ALLOCS], int prec, bool zero_unknown)
{
	print_header();
	printf("\n");
	for (int pat = 0; pat < NR_PATS; pat++)
		for (int si = 0; si < NR_SIZES; si++) {
			printf("%-8s %5u |", pat_name[pat], sizes[si]);
			for (int a = 0; a < NR_ALLOCS; a++)
				if (allocs[a].avail && (!zero_unknown || v[pat][si][a] > 0))
					printf(" %10.*f", prec, v[pat][si][a]);
				else
					printf(" %10s", "n/a");
			printf("\n");
		}
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_slab_vs_malloc [-r ROUNDS] [-n PAIRS] [-C]\n"
		"  -r ROUNDS  interleaved rounds, median reported (default 7, max %d)\n"
		"  -n PAIRS   alloc+free pairs per sample (default 1000000)\n"
		"  -C         skip the callgrind instruction counts\n", MAX_ROUNDS);
	exit(2);
}

int main(int argc, char **argv)
{
	int rounds = 7, opt;
	long pairs = 1000000;
	bool use_cg = true;

	if (argc == 2 && !strcmp(argv[1], "--cg"))
		return cg_child();
	sb_reexec_for_static_tls(argv);
	while ((opt = getopt(argc, argv, "r:n:Ch")) != -1) {
		switch (opt) {
		case 'r': rounds = atoi(optarg); break;
		case 'n': pairs = atol(optarg); break;
		case 'C': use_cg = false; break;
		default: usage();
		}
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || pairs < 10 * BATCH)
		usage();
	pairs -= pairs % BATCH;

	/* Instruction counts first, in a child process of our own: before our kmem boots. */
	bool have_cg = false;
#ifdef HAVE_CALLGRIND_H
	if (use_cg && bench_have("valgrind"))
		have_cg = callgrind(ir);
#endif

	char machine[300];
	sb_machine(machine, sizeof(machine));
	double load = sb_loadavg();
	int cpu = sb_pin_here();
	setup();

	/* Warm up every cell once (slabs, arenas, tcaches, branch predictors). */
	for (int pat = 0; pat < NR_PATS; pat++)
		for (int si = 0; si < NR_SIZES; si++)
			for (int a = 0; a < NR_ALLOCS; a++)
				if (allocs[a].avail)
					run_cell(pat, si, a, pairs / 10);

	for (int r = 0; r < rounds; r++)
		for (int pat = 0; pat < NR_PATS; pat++)
			for (int si = 0; si < NR_SIZES; si++)
				for (int k = 0; k < NR_ALLOCS; k++) {
					int a = (k + r) % NR_ALLOCS;	/* rotate who goes first */
					if (!allocs[a].avail)
						continue;
					uint64_t u0 = sb_cpu_ns(CLOCK_THREAD_CPUTIME_ID);
					uint64_t t0 = bench_now_ns();
					run_cell(pat, si, a, pairs);
					uint64_t t1 = bench_now_ns();
					uint64_t u1 = sb_cpu_ns(CLOCK_THREAD_CPUTIME_ID);
					ns[pat][si][a][r] = (double)(t1 - t0) / (double)pairs;
					cpu_ns[pat][si][a][r] = (double)(u1 - u0) / (double)pairs;
				}
	for (int pat = 0; pat < NR_PATS; pat++)
		for (int si = 0; si < NR_SIZES; si++)
			for (int a = 0; a < NR_ALLOCS; a++)
				if (allocs[a].avail) {
					med[pat][si][a] = bench_median(cpu_ns[pat][si][a], rounds);
					wmed[pat][si][a] = bench_median(ns[pat][si][a], rounds);
				}

	printf("bench_slab_vs_malloc: ns per alloc+free pair, median of %d interleaved rounds of\n"
	       "%ld pairs per cell; pinned to CPU %d; kmem_init(\"%s\").\n"
	       "ns = CPU time of the thread (CLOCK_THREAD_CPUTIME_ID), which other processes' slices do\n"
	       "not inflate; the wall-clock medians follow in a second table.\n"
	       "Machine: %s; load average %.2f at the start.\n"
	       "Every allocator, kmem's included, is called through a function pointer (no inlining);\n"
	       "each object gets one byte written. pair = alloc one + free it; batch100 = alloc 100,\n"
	       "then free them in allocation order. kmem_cache = a SLAB_NO_MERGE cache of that size.\n",
	       rounds, pairs, cpu, CMDLINE, machine, load);
	for (int a = A_GLIBC; a < NR_ALLOCS; a++)
		printf("  %-9s %s\n", alloc_name[a],
		       allocs[a].avail ? allocs[a].where
				       : "n/a (not installed, or dlopen failed; see scripts/install-deps.sh --bench)");

	printf("\n");
	print_header();
	printf(" | %13s %9s %s\n", "kmem/mimalloc", "kmem/best",
	       "(kmem = kmem_cache; best = fastest peer)");
	int met[NR_PATS] = { 0 }, cells[NR_PATS] = { 0 };
	double worst[NR_PATS] = { 0 };
	unsigned int worst_size[NR_PATS] = { 0 };
	for (int pat = 0; pat < NR_PATS; pat++)
		for (int si = 0; si < NR_SIZES; si++) {
			double best = 0;
			int best_a = -1;
			printf("%-8s %5u |", pat_name[pat], sizes[si]);
			for (int a = 0; a < NR_ALLOCS; a++) {
				if (allocs[a].avail)
					printf(" %10.2f", med[pat][si][a]);
				else
					printf(" %10s", "n/a");
				if (a >= A_GLIBC && allocs[a].avail && (best_a < 0 || med[pat][si][a] < best)) {
					best = med[pat][si][a];
					best_a = a;
				}
			}
			double k = med[pat][si][A_CACHE];
			char rmi[32] = "n/a", rbest[48] = "n/a";
			if (allocs[A_MIMALLOC].avail) {
				double ratio = k / med[pat][si][A_MIMALLOC];
				snprintf(rmi, sizeof(rmi), "%.2fx", ratio);
				cells[pat]++;
				if (ratio <= 1.25)
					met[pat]++;
				if (ratio > worst[pat]) {
					worst[pat] = ratio;
					worst_size[pat] = sizes[si];
				}
			}
			if (best_a >= 0)
				snprintf(rbest, sizeof(rbest), "%.2fx (%s)", k / best, alloc_name[best_a]);
			printf(" | %13s %s\n", rmi, rbest);
		}

	printf("\nWall clock (CLOCK_MONOTONIC), ns per pair, medians:\n");
	print_table(wmed, 2, false);

	if (have_cg) {
		printf("\nInstructions per pair (callgrind, %d pairs per cell after a warm-up;"
		       " user space):\n",
		       CG_PAIRS);
		print_table(ir, 1, true);
		printf("(includes the loop and the indirect calls: about 8 instructions per pair)\n");
	} else {
		printf("\n(instruction counts skipped: %s)\n",
		       !use_cg			? "-C"
		       : bench_have("valgrind") ? "callgrind run failed or no valgrind/callgrind.h"
						: "valgrind not installed");
	}

	printf("\nTarget: kmem_cache pair no slower than 1.25x mimalloc's malloc/free of the same size\n"
	       "(CPU time):\n");
	for (int pat = 0; pat < NR_PATS; pat++) {
		if (!cells[pat])
			printf("  %-8s n/a (mimalloc not installed)\n", pat_name[pat]);
		else
			printf("  %-8s %-7s %d of %d sizes within 1.25x; worst %.2fx (%u bytes)\n",
			       pat_name[pat], met[pat] == cells[pat] ? "met:" : "NOT met:", met[pat],
			       cells[pat], worst[pat], worst_size[pat]);
	}
	return 0;
}
