// SPDX-License-Identifier: MIT
/*
 * bench_slab_bulk_table: the table of the SLAB bulk API patch (Brouer 2015)
 * on every slab allocator that boots, side by side in one run: SLUB, SLAB
 * with its default tunables, and SLAB with `limit` raised through
 * /proc/slabinfo ("name limit batchcount shared", written for each test
 * cache after it is created), beside the patch's own figures.
 *
 * The method is bench_slab_bulk's (slab_bulk.h, after the kernel's
 * slab_bulk_test01): 256-byte objects in a fresh SLAB_HWCACHE_ALIGN |
 * SLAB_NO_MERGE cache per case; per bulk size, a loop of single
 * kmem_cache_alloc then a loop of kmem_cache_free ("single", what the
 * generic fallback does) against kmem_cache_alloc_bulk + kmem_cache_free_bulk
 * ("bulk"); cost per object, one alloc plus one free.  Each configuration
 * boots in its own child process, pinned to the CPU it starts on; a
 * configuration that does not boot, or whose tunables /proc/slabinfo refuses,
 * shows n/a.  Figures are medians of RUNS runs: TSC cycles (wall) and the
 * thread's CPU time in ns (what a slice taken by another process does not
 * inflate; the improvement column and the targets use it).
 *
 *   bench_slab_bulk_table [-r RUNS] [-n OBJECTS] [-b BULK,...] [-L "LIMIT BATCH SHARED"]
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "slab_allocs.h"
#include "slab_bench.h"
#include "slab_bulk.h"

#define BASE_CMDLINE	"mem=256M"

enum { CFG_SLUB, CFG_SLAB, CFG_SLAB_TUNED, NR_CFG };
static const struct sa_config cfgs[NR_CFG] = {
	[CFG_SLUB] = { "slub", "SLUB", "slab=slub" },
	[CFG_SLAB] = { "slab", "SLAB", "slab=slab" },
	[CFG_SLAB_TUNED] = { "slab-tuned", "SLAB tuned", "slab=slab" },
};

struct point {
	double cycles, cpu;
};

struct cfg_result {
	int state;			/* 1 ran, -1 did not boot, -3 tunables refused, -2 crashed */
	struct point fast;
	struct point single[NR_BULK], bulk[NR_BULK];
	char tunables[64];		/* "limit batchcount shared" of a test cache, from /proc/slabinfo */
	char slab[64];			/* "objperslab pagesperslab" */
};

static int runs = 3;
static long nobjs = 500000;
static bool bulk_on[NR_BULK];
static char tune[64] = "4096 1024 8";

struct job {
	int cfg;
	struct cfg_result *res;
};

/* The line of /proc/slabinfo for @name: its tunables and slab size into @r. */
static void slabinfo_of(const char *name, struct cfg_result *r)
{
	static char buf[1 << 16];
	size_t n = strlen(name);

	if (kmem_read("/proc/slabinfo", buf, sizeof(buf)) < 0)
		return;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, name, n) || l[n] != ' ')
			continue;
		unsigned long act, num, size, per, pages, lim, batch, shared;
		if (sscanf(l + n, " %lu %lu %lu %lu %lu : tunables %lu %lu %lu", &act, &num, &size, &per, &pages,
			   &lim, &batch, &shared) == 8) {
			snprintf(r->tunables, sizeof(r->tunables), "%lu %lu %lu", lim, batch, shared);
			snprintf(r->slab, sizeof(r->slab), "%lu objects in %lu page(s)", per, pages);
		}
		return;
	}
}

/* Fresh cache (tuned if asked), warm-up, @runs timed runs; false if the tunables were refused. */
static bool measure(int cfg, enum kind k, unsigned int bulk, struct point *p, struct cfg_result *r)
{
	char name[32];
	double cyc[MAX_RUNS], cpu[MAX_RUNS];
	long iters = bulk_iters(nobjs, bulk);
	struct kmem_cache *s = bulk_test_cache("bench_slab_bulk_table", name, sizeof(name));

	if (cfg == CFG_SLAB_TUNED) {
		char line[128];
		snprintf(line, sizeof(line), "%s %s", name, tune);
		if (kmem_write("/proc/slabinfo", line)) {
			kmem_cache_destroy(s);
			return false;
		}
	}
	if (!r->tunables[0])
		slabinfo_of(name, r);
	bulk_run_or_exit("bench_slab_bulk_table", k, s, bulk, iters / 10 + 1);
	bulk_timed_runs("bench_slab_bulk_table", k, s, bulk, iters, runs, cyc, NULL, cpu);
	kmem_cache_destroy(s);
	p->cycles = bench_median(cyc, runs);
	p->cpu = bench_median(cpu, runs);
	return true;
}

static void child(void *arg)
{
	struct job *j = arg;
	struct cfg_result *r = j->res;

	sb_pin_here();
	if (sa_boot(BASE_CMDLINE, cfgs[j->cfg].params)) {
		r->state = -1;
		return;
	}
	if (!measure(j->cfg, FASTPATH, 0, &r->fast, r)) {
		r->state = -3;
		return;
	}
	for (int i = 0; i < NR_BULK; i++) {
		if (!bulk_on[i])
			continue;
		measure(j->cfg, FALLBACK, bulk_sizes[i], &r->single[i], r);
		measure(j->cfg, QUICK_REUSE, bulk_sizes[i], &r->bulk[i], r);
	}
	r->state = 1;
}

static double improved(const struct point *single, const struct point *bulk)
{
	return single->cpu > 0 ? 100.0 * (single->cpu - bulk->cpu) / single->cpu : 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_slab_bulk_table [-r RUNS] [-n OBJECTS] [-b BULK,...] [-L \"LIMIT BATCH SHARED\"]\n"
		"  -r RUNS     timed runs per case, median reported (default 3, max %d)\n"
		"  -n OBJECTS  objects (alloc+free) per timed run (default 500000)\n"
		"  -b LIST     only these bulk sizes (of the patch's list; default all)\n"
		"  -L TUNE     SLAB tuned: \"limit batchcount shared\" written to /proc/slabinfo (default \"%s\")\n",
		MAX_RUNS, tune);
	exit(2);
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "r:n:b:L:h")) != -1) {
		switch (opt) {
		case 'r': runs = atoi(optarg); break;
		case 'n': nobjs = atol(optarg); break;
		case 'b':
			if (!bulk_parse_list(optarg, bulk_on))
				usage();
			break;
		case 'L': snprintf(tune, sizeof(tune), "%s", optarg); break;
		default: usage();
		}
	}
	bulk_all_unless_chosen(bulk_on);
	if (runs < 1 || runs > MAX_RUNS || nobjs < 1000)
		usage();

	char machine[300];
	sb_machine(machine, sizeof(machine));
	double load = sb_loadavg();
	struct cfg_result *res = bench_shared(sizeof(*res) * NR_CFG);
	if (!res)
		return 1;
	for (int c = 0; c < NR_CFG; c++) {
		struct job j = { c, &res[c] };
		if (!bench_fork(child, &j) && res[c].state == 0)
			res[c].state = -2;
	}

	printf("bench_slab_bulk_table: the SLAB bulk API table (Brouer 2015) on each slab allocator, one run.\n"
	       "%d-byte objects, a fresh SLAB_HWCACHE_ALIGN|SLAB_NO_MERGE cache per case; cost per object =\n"
	       "one alloc + one free; single: kmem_cache_alloc loop then kmem_cache_free loop; bulk:\n"
	       "kmem_cache_alloc_bulk + kmem_cache_free_bulk. Medians of %d runs of %ld objects; cyc: TSC\n"
	       "cycles (wall), ns: the thread's CPU time; imp: (single - bulk) / single on CPU time.\n"
	       "Machine: %s; load average %.2f at the start.\n\n",
	       OBJ_SIZE, runs, nobjs, machine, load);
	for (int c = 0; c < NR_CFG; c++) {
		const struct cfg_result *r = &res[c];
		printf("%-10s %s", cfgs[c].label, cfgs[c].params);
		if (c == CFG_SLAB_TUNED)
			printf(", \"<cache> %s\" written to /proc/slabinfo", tune);
		printf(": ");
		if (r->state == -1)
			printf("n/a (does not boot in this build)\n");
		else if (r->state == -3)
			printf("n/a (/proc/slabinfo refused the tunables \"%s\")\n", tune);
		else if (r->state != 1)
			printf("FAILED (the child crashed)\n");
		else
			printf("slab %s; tunables (limit batchcount shared) %s\n", r->slab[0] ? r->slab : "?",
			       r->tunables[0] ? r->tunables : "?");
	}
	printf("\nsingle alloc+free pair (fastpath reuse): ");
	for (int c = 0; c < NR_CFG; c++)
		if (res[c].state == 1)
			printf("%s %.0f cyc %.2f ns; ", cfgs[c].label, res[c].fast.cycles, res[c].fast.cpu);
	printf("patch: %d cyc %.3f ns\n\n", POST_FASTPATH_CYCLES, POST_FASTPATH_NS);

	printf("%4s | %-33s |", "bulk", "patch (2015 SLAB, i7-4790K)");
	for (int c = 0; c < NR_CFG; c++)
		printf(" %-38s |", cfgs[c].label);
	printf("\n%4s | %-33s |", "", "single cyc ns - bulk cyc ns - imp");
	for (int c = 0; c < NR_CFG; c++)
		printf(" %-38s |", "single cyc ns - bulk cyc ns - imp");
	printf("\n");
	for (int i = 0; i < NR_BULK; i++) {
		if (!bulk_on[i])
			continue;
		char seed[64];
		if (post_table[i].cur_cycles)
			snprintf(seed, sizeof(seed), "%3d %6.2f - %3d %6.2f - %4.1f%%", post_table[i].cur_cycles,
				 post_table[i].cur_ns, post_table[i].bulk_cycles, post_table[i].bulk_ns, post_table[i].improved);
		else
			snprintf(seed, sizeof(seed), "%10s - %3d %6.2f -", "", post_table[i].bulk_cycles, post_table[i].bulk_ns);
		printf("%4u | %-33s |", bulk_sizes[i], seed);
		for (int c = 0; c < NR_CFG; c++) {
			const struct cfg_result *r = &res[c];
			if (r->state != 1) {
				printf(" %-38s |", "n/a");
				continue;
			}
			char cell[64];
			snprintf(cell, sizeof(cell), "%4.0f %6.2f - %4.0f %6.2f - %5.1f%%", r->single[i].cycles,
				 r->single[i].cpu, r->bulk[i].cycles, r->bulk[i].cpu, improved(&r->single[i], &r->bulk[i]));
			printf(" %-38s |", cell);
		}
		printf("\n");
	}

	/* The targets: SLAB against SLUB in this run. */
	const struct cfg_result *u = &res[CFG_SLUB], *b = &res[CFG_SLAB];
	printf("\nTargets (CPU time, this run):\n");
	if (u->state != 1 || b->state != 1) {
		printf("  n/a: SLUB and SLAB did not both run\n");
	} else {
		printf("  SLAB's single pair within 1.1x SLUB's:               %-7s (%.2f ns vs %.2f ns, %.2fx)\n",
		       b->fast.cpu <= 1.1 * u->fast.cpu ? "met" : "NOT met", b->fast.cpu, u->fast.cpu,
		       b->fast.cpu / u->fast.cpu);
		unsigned int limit = (unsigned int)atoi(b->tunables);
		double worst = 0;
		unsigned int worst_at = 0, lo_at = 0;
		double lo = 1e9;
		for (int i = 0; i < NR_BULK; i++) {
			if (!bulk_on[i] || bulk_sizes[i] < 16 || (limit && bulk_sizes[i] > limit))
				continue;
			double ok3 = b->bulk[i].cpu <= 3.0 || b->bulk[i].cpu <= 0.6 * u->fast.cpu;
			if (!ok3 && b->bulk[i].cpu > worst) {
				worst = b->bulk[i].cpu;
				worst_at = bulk_sizes[i];
			}
		}
		printf("  SLAB bulk <= 3 ns or <= 0.6x SLUB's pair, 16..limit %u: %-7s", limit,
		       worst_at ? "NOT met" : "met");
		if (worst_at)
			printf(" (%.2f ns at bulk %u)", worst, worst_at);
		printf("\n");
		for (int i = 0; i < NR_BULK; i++) {
			if (!bulk_on[i] || bulk_sizes[i] < 8 || bulk_sizes[i] > 250)
				continue;
			double imp = improved(&b->single[i], &b->bulk[i]);
			if (imp < lo) {
				lo = imp;
				lo_at = bulk_sizes[i];
			}
		}
		if (lo_at)
			printf("  SLAB improvement >= 80%%, bulk 8..250:                 %-7s (lowest %.1f%% at bulk %u)\n",
			       lo >= 80 ? "met" : "NOT met", lo, lo_at);
	}
	for (int c = 0; c < NR_CFG; c++) {
		const struct cfg_result *r = &res[c];
		printf("RESULT alloc=%s state=%s fast_ns=%.3f", cfgs[c].key,
		       r->state == 1 ? "ok" : r->state == -2 ? "failed" : "n/a", r->fast.cpu);
		for (int i = 0; i < NR_BULK; i++)
			if (bulk_on[i] && r->state == 1)
				printf(" b%u=%.3f/%.3f", bulk_sizes[i], r->single[i].cpu, r->bulk[i].cpu);
		printf("\n");
	}
	return 0;
}
