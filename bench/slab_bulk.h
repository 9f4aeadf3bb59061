/* SPDX-License-Identifier: MIT */
/*
 * The SLAB bulk API benchmark (Brouer 2015, after the kernel's
 * slab_bulk_test01): its bulk sizes, the patch's published table, and the
 * timed loops, shared by bench_slab_bulk (SLUB's bulk API, with its
 * counters) and bench_slab_bulk_table (the table on every slab allocator
 * that boots, SLAB's tunables raised through /proc/slabinfo).  Header only.
 */
#ifndef KMEM_SLAB_BULK_H
#define KMEM_SLAB_BULK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "slab_bench.h"

#define MAX_RUNS	31
#define MAX_BULK	4096
#define OBJ_SIZE	256

static const unsigned int bulk_sizes[] = {
	1, 2, 3, 4, 8, 16, 30, 32, 34, 48, 64, 128, 158, 250, 512, 768, 1024, 2048, 4096,
};
#define NR_BULK		(int)(sizeof(bulk_sizes) / sizeof(bulk_sizes[0]))

/*
 * Reference data, NOT measured here: the table of the SLAB bulk API patch
 * (Brouer 2015), a 2015 kernel's SLAB, obj size 256, on an i7-4790K @ 4.00GHz.
 * "Current" is the generic fallback then in place; 0 = not published.
 */
static const struct {
	unsigned int bulk;
	int cur_cycles;
	double cur_ns;
	int bulk_cycles;
	double bulk_ns;
	double improved;
} post_table[NR_BULK] = {
	{ 1, 115, 28.812, 42, 10.715, 63.5 },	{ 2, 103, 25.956, 27, 6.985, 73.8 },
	{ 3, 101, 25.336, 22, 5.733, 78.2 },	{ 4, 100, 25.147, 21, 5.319, 79.0 },
	{ 8, 98, 24.616, 18, 4.620, 81.6 },	{ 16, 97, 24.408, 17, 4.344, 82.5 },
	{ 30, 98, 24.641, 16, 4.202, 83.7 },	{ 32, 98, 24.607, 16, 4.199, 83.7 },
	{ 34, 98, 24.605, 18, 4.579, 81.6 },	{ 48, 97, 24.463, 17, 4.405, 82.5 },
	{ 64, 97, 24.370, 17, 4.384, 82.5 },	{ 128, 99, 24.763, 19, 4.755, 80.8 },
	{ 158, 98, 24.708, 18, 4.723, 81.6 },	{ 250, 101, 25.342, 20, 5.035, 80.2 },
	{ 512, 0, 0, 20, 5.214, 0 },		{ 768, 0, 0, 30, 7.734, 0 },
	{ 1024, 0, 0, 40, 10.244, 0 },		{ 2048, 0, 0, 72, 18.049, 0 },
	{ 4096, 0, 0, 90, 22.585, 0 },
};
#define POST_FASTPATH_CYCLES	96
#define POST_FASTPATH_NS	24.119

struct measure {
	double cycles, ns;		/* medians, per object (one alloc + one free) */
	double cpu;			/* median CPU-time ns per object (thread CPU clock) */
	double cpu_min, cpu_max;
	double aslow, fslow;		/* alloc/free slow paths per object, timed runs */
};

static void *objs[MAX_BULK];

/* ---- the timed loops (noinline: one clear symbol each, as in the kernel test) ---- */

static __attribute__((noinline)) void for_loop(long n)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile("");
}

static __attribute__((noinline)) int fastpath_reuse(struct kmem_cache *s, long n)
{
	for (long i = 0; i < n; i++) {
		void *p = kmem_cache_alloc(s, GFP_KERNEL);
		if (__builtin_expect(!p, 0))
			return -1;
		sb_use(p);
		kmem_cache_free(s, p);
	}
	return 0;
}

static __attribute__((noinline)) int bulk_fallback(struct kmem_cache *s, unsigned int bulk, long iters)
{
	for (long i = 0; i < iters; i++) {
		for (unsigned int j = 0; j < bulk; j++) {
			objs[j] = kmem_cache_alloc(s, GFP_KERNEL);
			if (__builtin_expect(!objs[j], 0))
				return -1;
		}
		sb_use(objs);
		for (unsigned int j = 0; j < bulk; j++)
			kmem_cache_free(s, objs[j]);
	}
	return 0;
}

static __attribute__((noinline)) int bulk_quick_reuse(struct kmem_cache *s, unsigned int bulk, long iters)
{
	for (long i = 0; i < iters; i++) {
		if (__builtin_expect(kmem_cache_alloc_bulk(s, GFP_KERNEL, bulk, objs) != (int)bulk, 0))
			return -1;
		sb_use(objs);
		kmem_cache_free_bulk(s, bulk, objs);
	}
	return 0;
}

enum kind { FOR_LOOP, FASTPATH, FALLBACK, QUICK_REUSE };
static const char *const kind_name[] = { "for_loop", "fastpath_reuse", "bulk_fallback",
					 "bulk_quick_reuse" };

static int run_kind(enum kind k, struct kmem_cache *s, unsigned int bulk, long iters)
{
	switch (k) {
	case FOR_LOOP: for_loop(iters); return 0;
	case FASTPATH: return fastpath_reuse(s, iters);
	case FALLBACK: return bulk_fallback(s, bulk, iters);
	case QUICK_REUSE: return bulk_quick_reuse(s, bulk, iters);
	}
	return -1;
}

/* ---- what both programs do around the loops ---------------------------- */

/* Loop iterations for @nobjs objects in bulks of @bulk (0: single objects), at least one. */
static inline long bulk_iters(long nobjs, unsigned int bulk)
{
	long iters = bulk ? nobjs / bulk : nobjs;

	return iters < 1 ? 1 : iters;
}

/* A fresh test cache, "bulk_test_<n>" (its name in @name); @prog exits on failure. */
static struct kmem_cache *bulk_test_cache(const char *prog, char *name, size_t len)
{
	static int seq;

	snprintf(name, len, "bulk_test_%d", seq++);
	struct kmem_cache *s = kmem_cache_create(name, OBJ_SIZE, 0, SLAB_HWCACHE_ALIGN | SLAB_NO_MERGE, NULL);
	if (!s) {
		fprintf(stderr, "%s: kmem_cache_create failed\n", prog);
		exit(1);
	}
	return s;
}

/* @k for @iters iterations; an allocation failure ends @prog. */
static void bulk_run_or_exit(const char *prog, enum kind k, struct kmem_cache *s, unsigned int bulk,
			     long iters)
{
	if (run_kind(k, s, bulk, iters)) {
		fprintf(stderr, "%s: %s bulk %u: allocation failed\n", prog, kind_name[k], bulk);
		exit(1);
	}
}

/*
 * @runs timed runs of @k, each of @iters iterations: per object, the TSC
 * cycles into @cyc[], the thread's CPU ns into @cpu[] and, when @ns is not
 * NULL, the wall-clock ns into @ns[].
 */
static void bulk_timed_runs(const char *prog, enum kind k, struct kmem_cache *s, unsigned int bulk,
			    long iters, int runs, double *cyc, double *ns, double *cpu)
{
	double count = (double)iters * (bulk ? bulk : 1);

	for (int r = 0; r < runs; r++) {
		uint64_t u0 = sb_cpu_ns(CLOCK_THREAD_CPUTIME_ID), c0 = sb_ticks();
		uint64_t t0 = ns ? bench_now_ns() : 0;
		int rc = run_kind(k, s, bulk, iters);
		uint64_t t1 = ns ? bench_now_ns() : 0;
		uint64_t c1 = sb_ticks(), u1 = sb_cpu_ns(CLOCK_THREAD_CPUTIME_ID);
		if (rc) {
			fprintf(stderr, "%s: %s bulk %u: allocation failed\n", prog, kind_name[k], bulk);
			exit(1);
		}
		cyc[r] = (double)(c1 - c0) / count;
		if (ns)
			ns[r] = (double)(t1 - t0) / count;
		cpu[r] = (double)(u1 - u0) / count;
	}
}

/* -b LIST ("16,30,..."): mark each size in @on; false if one is not in bulk_sizes[]. */
static bool bulk_parse_list(char *list, bool on[NR_BULK])
{
	for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
		int i;
		for (i = 0; i < NR_BULK && bulk_sizes[i] != (unsigned int)atoi(t); i++)
			;
		if (i == NR_BULK)
			return false;
		on[i] = true;
	}
	return true;
}

/* After the options: no -b runs every size. */
static void bulk_all_unless_chosen(bool on[NR_BULK])
{
	for (int i = 0; i < NR_BULK; i++)
		if (on[i])
			return;
	for (int i = 0; i < NR_BULK; i++)
		on[i] = true;
}

#endif /* KMEM_SLAB_BULK_H */
