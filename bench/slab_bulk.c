// SPDX-License-Identifier: MIT
/*
 * bench_slab_bulk: the SLAB bulk API (Brouer 2015, "slab: implement bulking for SLAB
 * allocator") in userspace, with the methodology of the kernel's
 * slab_bulk_test01 (prototype-kernel, kernel/mm/slab_bulk_test01.c):
 *
 *   - 256-byte objects in a SLAB_HWCACHE_ALIGN cache (SLAB_NO_MERGE, so it
 *     is really our own cache, not an alias of kmalloc-256); a fresh cache
 *     for each benchmark function, as the kernel test does;
 *   - "fastpath reuse": alloc one object and free it, in a loop;
 *   - for each bulk size, "bulk_fallback": a loop of kmem_cache_alloc then a
 *     loop of kmem_cache_free (what the generic fallback does), against
 *     "bulk_quick_reuse": kmem_cache_alloc_bulk + kmem_cache_free_bulk of
 *     the same array;
 *   - cost per object, one alloc plus one free, in TSC cycles and ns.
 *
 * The thread is pinned to the CPU it starts on; each figure is the median of
 * RUNS timed runs of OBJECTS objects (loops / bulk iterations of bulk objects).
 * The post's published table (a 2015 kernel's SLAB on an i7-4790K @ 4.00GHz)
 * is printed beside ours as reference data.
 *
 *   bench_slab_bulk [-r RUNS] [-n OBJECTS] [-b BULK,BULK,...] [-c "BOOT PARAMS"]
 *
 * For instruction counts, run a few sizes under callgrind, e.g.
 *   valgrind --tool=callgrind --toggle-collect=bulk_quick_reuse \
 *     build/bin/bench_slab_bulk -r 1 -n 100000 -b 16
 * (the count includes the warm-up: divide by 1.1 * OBJECTS).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "slab_bench.h"
#include "slab_bulk.h"

#include "slab/slab.h"
#include "slab/slub/slub.h"

#define CMDLINE		"mem=256M"
static char cmdline[512] = CMDLINE;	/* -c appends boot parameters */
static bool bulk_on[NR_BULK];		/* -b: the sizes to run (default all) */
static unsigned int slab_objects, slab_order;	/* of the test caches */
static int runs = 5;
static long nobjs = 2000000;

static unsigned long stat_of(struct kmem_cache *s, enum stat_item si)
{
	return slub_stat_sum(s, si, NULL, 0, NULL);
}

/* One benchmark function: fresh cache, warm-up, @runs timed runs, cache destroyed. */
static void measure(enum kind k, unsigned int bulk, struct measure *m)
{
	char name[32];
	struct kmem_cache *s = NULL;
	double cyc[MAX_RUNS], ns[MAX_RUNS], cpu[MAX_RUNS];
	long iters = bulk_iters(nobjs, bulk);

	if (k != FOR_LOOP) {
		s = bulk_test_cache("bench_slab_bulk", name, sizeof(name));
		slab_objects = oo_objects(slub_of(s)->oo);
		slab_order = oo_order(slub_of(s)->oo);
	}
	bulk_run_or_exit("bench_slab_bulk", k, s, bulk, iters / 10 + 1);	/* warm up: slabs, branch predictors */
	unsigned long a0 = 0, f0 = 0;
	if (s) {
		a0 = stat_of(s, ALLOC_SLOWPATH);
		f0 = stat_of(s, FREE_SLOWPATH);
	}
	bulk_timed_runs("bench_slab_bulk", k, s, bulk, iters, runs, cyc, ns, cpu);
	if (s) {
		double count = (double)iters * (bulk ? bulk : 1) * runs;
		m->aslow = (double)(stat_of(s, ALLOC_SLOWPATH) - a0) / count;
		m->fslow = (double)(stat_of(s, FREE_SLOWPATH) - f0) / count;
		kmem_cache_destroy(s);
	}
	m->cycles = bench_median(cyc, runs);
	m->ns = bench_median(ns, runs);
	m->cpu = bench_median(cpu, runs);
	m->cpu_min = cpu[0];
	m->cpu_max = cpu[runs - 1];
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_slab_bulk [-r RUNS] [-n OBJECTS] [-b BULK,...] [-c PARAMS]\n"
		"  -r RUNS     timed runs per case, median reported (default 5, max %d)\n"
		"  -n OBJECTS  objects (alloc+free) per timed run (default 2000000)\n"
		"  -b LIST     only these bulk sizes (of the post's list; default all)\n"
		"  -c PARAMS   more kmem boot parameters, e.g. \"slub_min_order=3\"\n", MAX_RUNS);
	exit(2);
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "r:n:b:c:h")) != -1) {
		switch (opt) {
		case 'r': runs = atoi(optarg); break;
		case 'n': nobjs = atol(optarg); break;
		case 'b':
			if (!bulk_parse_list(optarg, bulk_on))
				usage();
			break;
		case 'c':
			snprintf(cmdline, sizeof(cmdline), "%s %s", CMDLINE, optarg);
			break;
		default: usage();
		}
	}
	bulk_all_unless_chosen(bulk_on);
	if (runs < 1 || runs > MAX_RUNS || nobjs < 1000)
		usage();

	char machine[300];
	sb_machine(machine, sizeof(machine));
	double load = sb_loadavg();
	int cpu = sb_pin_here();
	if (kmem_init(cmdline)) {
		fprintf(stderr, "bench_slab_bulk: kmem_init(\"%s\") failed\n", cmdline);
		return 1;
	}
	/* The layout and slow-path counters read below are SLUB's own. */
	if (slab_allocator != SLAB_ALLOCATOR_SLUB) {
		fprintf(stderr, "bench_slab_bulk: measures SLUB's bulk API; bench_slab_bulk_table runs the "
			"same test on SLAB\n");
		return 2;
	}
	double ghz = sb_tsc_ghz();

	struct measure loop = { 0 }, fast = { 0 }, fb[NR_BULK] = { { 0 } }, qr[NR_BULK] = { { 0 } };
	measure(FOR_LOOP, 0, &loop);
	measure(FASTPATH, 0, &fast);
	for (int i = 0; i < NR_BULK; i++) {
		if (!bulk_on[i])
			continue;
		measure(FALLBACK, bulk_sizes[i], &fb[i]);
		measure(QUICK_REUSE, bulk_sizes[i], &qr[i]);
	}

	printf("bench_slab_bulk: the SLAB bulk API post (Brouer 2015, slab_bulk_test01) in userspace. %d-byte objects,\n"
	       "cache flags SLAB_HWCACHE_ALIGN|SLAB_NO_MERGE (a fresh cache per case), kmem_init(\"%s\").\n"
	       "Slabs: order %u, %u objects each.\n"
	       "Cost per object = one alloc + one free; median of %d runs of %ld objects each.\n"
	       "cycles(tsc) and ns: wall clock (TSC at %.3f GHz, CLOCK_MONOTONIC), as the post's;\n"
	       "cpu: CPU time of the thread (CLOCK_THREAD_CPUTIME_ID), which slices taken by other\n"
	       "processes do not inflate: the targets are judged on it.\n"
	       "Machine: %s; pinned to CPU %d; load average %.2f at the start.\n\n",
	       OBJ_SIZE, cmdline, slab_order, slab_objects, runs, nobjs, ghz, machine, cpu, load);
	printf("Type:for_loop            Per elem: %3.0f cycles(tsc) %7.3f ns (cpu %6.3f ns)\n",
	       loop.cycles, loop.ns, loop.cpu);
	printf("Type:kmem fastpath reuse Per elem: %3.0f cycles(tsc) %7.3f ns (cpu %6.3f ns)"
	       "   [2015 SLAB, i7-4790K: %d cycles(tsc) %.3f ns]\n\n",
	       fast.cycles, fast.ns, fast.cpu, POST_FASTPATH_CYCLES, POST_FASTPATH_NS);

	printf("%-98s | %s\n", "kmem SLUB, this machine",
	       "reference: Brouer 2015, kernel SLAB on an i7-4790K @ 4.00GHz");
	printf("%-98s | %s\n",
	       "bulk - fallback                - bulk (alloc_bulk+free_bulk) - improved* | cpu ns: fb    bulk",
	       "Current                - simple slab bulk       - improved");
	for (int i = 0; i < NR_BULK; i++) {
		if (!bulk_on[i])
			continue;
		/* On CPU time: wall-clock differences are mostly other processes. */
		double imp = fb[i].cpu > 0 ? 100.0 * (fb[i].cpu - qr[i].cpu) / fb[i].cpu : 0;
		char left[160], right[128];
		snprintf(left, sizeof(left),
			 "%4u - %4.0f cycles(tsc) %7.3f ns - %4.0f cycles(tsc) %7.3f ns      - improved %5.1f%% "
			 "| %7.3f %7.3f",
			 bulk_sizes[i], fb[i].cycles, fb[i].ns, qr[i].cycles, qr[i].ns, imp, fb[i].cpu,
			 qr[i].cpu);
		if (post_table[i].cur_cycles)
			snprintf(right, sizeof(right),
				 "%3d cycles(tsc) %6.3f ns - %3d cycles(tsc) %6.3f ns - improved %.1f%%",
				 post_table[i].cur_cycles, post_table[i].cur_ns, post_table[i].bulk_cycles,
				 post_table[i].bulk_ns, post_table[i].improved);
		else
			snprintf(right, sizeof(right), "%22s - %3d cycles(tsc) %6.3f ns", "(not published)",
				 post_table[i].bulk_cycles, post_table[i].bulk_ns);
		printf("%-98s | %s\n", left, right);
	}

	printf("* improved: of the CPU time, (fallback - bulk) / fallback.\n");
	printf("\nSlow paths taken per object (timed runs), and the spread of the bulk runs:\n");
	printf("bulk | fallback alloc_slow free_slow | bulk alloc_slow free_slow | bulk cpu ns min..max\n");
	for (int i = 0; i < NR_BULK; i++)
		if (bulk_on[i])
			printf("%4u | %19.4f %9.4f | %15.4f %9.4f | %.3f .. %.3f\n", bulk_sizes[i],
			       fb[i].aslow, fb[i].fslow, qr[i].aslow, qr[i].fslow, qr[i].cpu_min,
			       qr[i].cpu_max);

	/* kmem's targets, on CPU time. */
	double worst = 0, best = 1e9;
	unsigned int worst_at = 0;
	for (int i = 0; i < NR_BULK; i++) {
		if (bulk_sizes[i] < 16 || !bulk_on[i])
			continue;
		if (qr[i].cpu > worst) {
			worst = qr[i].cpu;
			worst_at = bulk_sizes[i];
		}
		if (qr[i].cpu < best)
			best = qr[i].cpu;
	}
	printf("\nTargets (CPU time):\n");
	printf("  kmem_cache alloc+free pair <= 5 ns:            %-7s (fastpath reuse %.3f ns)\n",
	       fast.cpu <= 5.0 ? "met" : "NOT met", fast.cpu);
	if (!worst_at) {
		printf("  bulk targets (16..4096): n/a, no bulk size >= 16 was run\n");
		return 0;
	}
	printf("  bulk <= 3 ns per object, bulk 16..4096:        %-7s (worst %.3f ns at bulk %u)\n",
	       worst <= 3.0 ? "met" : "NOT met", worst, worst_at);
	printf("  bulk flat 16..4096 (worst/best <= 1.5):        %-7s (%.3f .. %.3f ns, ratio %.2f)\n",
	       worst <= 1.5 * best ? "met" : "NOT met", best, worst, worst / best);
	return 0;
}
