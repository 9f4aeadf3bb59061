// SPDX-License-Identifier: MIT
/*
 * bench_page_frag: the buddy free-to-tail post's high-order stress test, in userspace.
 *
 * Zoccolo and Gorman (2010) put a freed buddy block at the tail of its free
 * list when the buddy of its would-be parent is free, so that the block is
 * handed out last and has time to merge.  They judged it by fragmentation
 * over the lifetime of a busy system (the unusable free space index) and by
 * how many huge pages could be allocated at the end.  This program does the
 * same on a fixed-size machine:
 *
 *   - churn: every step frees the blocks whose lifetime ended, then allocates
 *     a burst of orders 0-3, mostly short-lived, a few long-lived (some
 *     pinned for the whole run), unmovable, movable and reclaimable; every
 *     SPIKE_EVERY steps a spike of short-lived movable pages fills memory to
 *     -f FILL percent: the pressure under which migratetypes mix;
 *   - sampling: every SAMPLE_EVERY steps the unusable free space index and
 *     the fragmentation index at order 9 (from the zone's nr_free, the same
 *     functions /sys/kernel/debug/extfrag/ uses), and one order-9 allocation
 *     that is freed again at once (an "immediate" success; a failed one
 *     drains this thread's pcp lists, as a failing kernel allocation would);
 *   - end: order-9 allocations until one fails, under load (the short-lived
 *     blocks still live) and at rest (only the long-lived ones left).
 *
 * Each configuration boots its own kmem (kmem_init() works once per
 * process), so it runs in a forked child; results come back through shared
 * memory.  The random stream decides what the workload asks for, never how
 * the allocator answered, so both runs of a seed ask for the same blocks in
 * the same order: only a failed allocation can make them differ.
 *
 *   bench_page_frag [-m MEM] [-n STEPS] [-s SEED,...] [-f FILL] [-k PARAMS]
 *                   [-o FILE.dat]
 *
 * Writes the time series to FILE.dat (default build/bench-results/
 * page_frag.dat next to build/bin/) and, if gnuplot is installed, FILE.png.
 */
#include <errno.h>
#include <math.h>

#include <kmem/gfp.h>
#include <kmem/kmemfs.h>
#include <kmem/page.h>

#include "bench.h"
#include "introspect/extfrag.h"
#include "page_alloc/zone_info.h"

#define HUGE_ORDER	9	/* pageblock_order: a 2 MiB huge page */

/*
 * Workload shape (docs/benchmarks.md shows how the result moves with it).
 * At 256M: ~40% of memory short-lived, ~16% long-lived once steady, and
 * the pinned part growing by ~1 page a step (~17% by step 10000), so the
 * system ages as it runs.
 */
#define BURST		256	/* mean allocations per step */
#define LONG_PERMILLE	20	/* of allocations that are long-lived ... */
#define PINNED_PERCENT	10	/* ... of which this many live for the whole run */
#define SHORT_MAX	100	/* short-lived: 1..SHORT_MAX steps */
#define LIFE_MIN	200	/* long-lived: LIFE_MIN..LIFE_MAX steps */
#define LIFE_MAX	2000
#define SPIKE_EVERY	500
#define SAMPLE_EVERY	50
#define WHEEL		4096	/* > LIFE_MAX: one free list per step, reused */
#define MAX_SAMPLES	1024
#define MAX_SEEDS	16

struct sample {
	int step;
	int unusable;		/* thousandths, order 9 */
	int extfrag;		/* thousandths, order 9; -1000: a block is free */
	long free_pages;
	long suitable;		/* order-9 blocks the free lists hold (order 10 = 2) */
};

struct result {
	int done, nr_samples;
	struct sample s[MAX_SAMPLES];
	long alloc_fail;
	int immediate;		/* probe successes */
	int huge_load;		/* order-9 successes at the end, under load */
	int huge_rest;		/* ... and at rest */
	struct sample rest;	/* at rest, before those */
	int file_mismatch;	/* the debugfs files disagree with extfrag.h */
	long lost_pages;	/* managed - free - what we hold, at rest: must be 0 */
	char buddyinfo[512];
	double seconds;
};

/* One allocated block, on the list of the step at which it dies. */
struct blk {
	struct page *page;
	int next;
	unsigned char order;
	unsigned char is_long;
};

/* Command line: the machine and the workload's length and pressure. */
static const char *mem = "256M", *extra_cmdline = "";
static int steps = 10000, spike_fill = 92;
static uint64_t rng_state;

/* splitmix64: seeded, fast, and the same sequence on every machine. */
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned int rnd_below(unsigned int n)
{
	return (unsigned int)(rnd() % n);
}

static struct blk *pool;
static int pool_free = -1, wheel[WHEEL];
static long live_pages;

static void sample_zone(int step, struct sample *s)
{
	struct zone_info zi;
	struct contig_page_info ci;

	zone_get_info(&zi);
	fill_contig_page_info(zi.nr_free, HUGE_ORDER, &ci);
	s->step = step;
	s->unusable = unusable_free_index(HUGE_ORDER, &ci);
	s->extfrag = fragmentation_index(HUGE_ORDER, &ci);
	s->free_pages = (long)ci.free_pages;
	s->suitable = (long)ci.free_blocks_suitable;
}

/* The free lists as the kernel shows them, less the pcp lists: drain first. */
static int count_huge(void)
{
	static struct page *huge[1 << 12];
	int n = 0;

	drain_local_pages();
	while (n < (int)(sizeof(huge) / sizeof(huge[0])) &&
	       (huge[n] = alloc_pages(GFP_KERNEL | __GFP_MOVABLE | __GFP_NOWARN, HUGE_ORDER)))
		n++;
	for (int i = 0; i < n; i++)
		__free_pages(huge[i], HUGE_ORDER);
	return n;
}

/* The order-9 column of a debugfs extfrag file's zone line, in thousandths. */
static int read_index_file(const char *path)
{
	char buf[512], *tok, *save;
	int col = -4;	/* "Node" "0," "zone" "Normal" come first */

	if (kmem_read(path, buf, sizeof(buf)) < 0)
		return INT_MIN;
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (col++ == HUGE_ORDER)
			return (int)lround(strtod(tok, NULL) * 1000);
	return INT_MIN;
}

/*
 * A sample after @done steps: the indices, then one order-9 allocation
 * freed at once (a huge page "immediately" available from the free lists).
 */
static void probe(struct result *r, int done)
{
	struct page *page;

	sample_zone(done, &r->s[r->nr_samples]);
	if (r->nr_samples < MAX_SAMPLES - 1)
		r->nr_samples++;
	page = alloc_pages(GFP_KERNEL | __GFP_MOVABLE | __GFP_NOWARN, HUGE_ORDER);
	if (page) {
		__free_pages(page, HUGE_ORDER);
		r->immediate++;
	}
}

static void free_blk(int i)
{
	__free_pages(pool[i].page, pool[i].order);
	live_pages -= 1L << pool[i].order;
	pool[i].next = pool_free;
	pool_free = i;
}

/*
 * One allocation.  Every random draw is made before the allocation, so the
 * stream never depends on the allocator's answers.
 */
static void alloc_one(struct result *r, int step, unsigned int order, int mt, int life,
		      bool is_long)
{
	static const gfp_t mt_gfp[3] = { 0, __GFP_MOVABLE, __GFP_RECLAIMABLE };
	struct page *page;

	page = alloc_pages(GFP_KERNEL | __GFP_NOWARN | mt_gfp[mt], order);
	if (!page) {
		r->alloc_fail++;
		return;
	}
	live_pages += 1L << order;
	if (life < 0)		/* pinned: never freed, so never tracked */
		return;
	int i = pool_free, w = (step + life) % WHEEL;
	pool_free = pool[i].next;
	pool[i] = (struct blk){ page, wheel[w], (unsigned char)order, is_long };
	wheel[w] = i;
}

static void burst(struct result *r, int step)
{
	int n = BURST / 2 + (int)rnd_below(BURST);

	for (int k = 0; k < n; k++) {
		unsigned int x = rnd_below(100), order = x < 60 ? 0 : x < 80 ? 1 : x < 92 ? 2 : 3;
		bool is_long = rnd_below(1000) < LONG_PERMILLE;
		unsigned int t = rnd_below(100);
		int mt, life;

		/* Long-lived memory is mostly the kernel's own; short-lived mostly user pages. */
		if (is_long) {
			mt = t < 50 ? 0 : t < 85 ? 1 : 2;
			life = rnd_below(100) < PINNED_PERCENT ? -1 :
			       LIFE_MIN + (int)rnd_below(LIFE_MAX - LIFE_MIN + 1);
		} else {
			mt = t < 20 ? 0 : t < 95 ? 1 : 2;
			life = 1 + (int)rnd_below(SHORT_MAX);
		}
		alloc_one(r, step, order, mt, life, is_long);
	}
}

static void run_child(int tail, uint64_t seed, struct result *r)
{
	char cmdline[512];
	uint64_t t0;

	snprintf(cmdline, sizeof(cmdline), "mem=%s page_alloc.tail_placement=%d %s", mem, tail,
		 extra_cmdline);
	if (kmem_init(cmdline)) {
		fprintf(stderr, "bench_page_frag: kmem_init(\"%s\") failed\n", cmdline);
		_exit(2);
	}
	struct zone_info zi;
	zone_get_info(&zi);
	long managed = (long)zi.managed;

	/* A block is at least a page: the pool never runs dry. */
	pool = calloc((size_t)managed, sizeof(*pool));
	if (!pool)
		_exit(3);
	for (long i = managed - 1; i >= 0; i--) {
		pool[i].next = pool_free;
		pool_free = (int)i;
	}
	for (int i = 0; i < WHEEL; i++)
		wheel[i] = -1;
	rng_state = seed;
	t0 = bench_now_ns();
	probe(r, 0);

	for (int step = 0; step < steps; step++) {
		int i = wheel[step % WHEEL];

		wheel[step % WHEEL] = -1;
		while (i >= 0) {
			int next = pool[i].next;
			free_blk(i);
			i = next;
		}
		burst(r, step);
		if (step % SPIKE_EVERY == SPIKE_EVERY / 2) {
			/* Lifetimes from a counter, not the stream: the spike's size
			 * depends on how full memory is, which may differ by a few
			 * failed allocations between runs. */
			for (int k = 0; live_pages < managed * spike_fill / 100; k++) {
				long fails = r->alloc_fail;
				alloc_one(r, step, 0, 1, 1 + k % 32, false);
				if (r->alloc_fail != fails)
					break;	/* memory is full: the spike is as high as it gets */
			}
		}
		if ((step + 1) % SAMPLE_EVERY == 0 || step == steps - 1)
			probe(r, step + 1);
	}

	r->huge_load = count_huge();

	/* The workload ends: short-lived memory goes, long-lived memory stays. */
	for (int w = 0; w < WHEEL; w++) {
		int i = wheel[w], keep = -1;

		while (i >= 0) {
			int next = pool[i].next;
			if (pool[i].is_long) {
				pool[i].next = keep;
				keep = i;
			} else {
				free_blk(i);
			}
			i = next;
		}
		wheel[w] = keep;
	}
	drain_local_pages();

	sample_zone(steps, &r->rest);
	r->lost_pages = managed - r->rest.free_pages - live_pages;
	/* Cross-check the pure functions against what debugfs shows. */
	r->file_mismatch =
		read_index_file("/sys/kernel/debug/extfrag/unusable_index") != r->rest.unusable ||
		read_index_file("/sys/kernel/debug/extfrag/extfrag_index") != r->rest.extfrag;
	if (kmem_read("/proc/buddyinfo", r->buddyinfo, sizeof(r->buddyinfo)) < 0)
		strcpy(r->buddyinfo, "(unreadable)\n");
	r->huge_rest = count_huge();

	r->seconds = (double)(bench_now_ns() - t0) / 1e9;
	r->done = 1;
}

/* ---- the parent: run the configurations, print, write the data ------ */

static int nseeds = 5;
static uint64_t seeds[MAX_SEEDS] = { 1, 2, 3, 4, 5 };
static struct result *res;	/* [2 * seed + tail], shared with the children */

static void run_one(void *arg)
{
	int i = (int)(intptr_t)arg;

	run_child(i % 2, seeds[i / 2], &res[i]);
}

/* Mean over the seeds of a sample field, in index units (thousandths / 1000). */
static double mean_at(int tail, int k, bool blocks)
{
	double sum = 0;

	for (int i = 0; i < nseeds; i++) {
		const struct sample *s = &res[2 * i + tail].s[k];
		sum += blocks ? (double)s->suitable : s->unusable / 1000.0;
	}
	return sum / nseeds;
}

/* Mean extfrag index over the seeds where an order-9 allocation would fail. */
static void fmt_extfrag(char *buf, size_t size, int tail, int k)
{
	int sum = 0, n = 0;

	for (int i = 0; i < nseeds; i++) {
		int v = res[2 * i + tail].s[k].extfrag;
		if (v >= 0) {
			sum += v;
			n++;
		}
	}
	if (n)
		snprintf(buf, size, "%.3f (%d/%d)", (double)sum / n / 1000.0, n, nseeds);
	else
		snprintf(buf, size, "-1.000");
}

static double mean_unusable(const struct result *r)
{
	double sum = 0;

	for (int k = 0; k < r->nr_samples; k++)
		sum += r->s[k].unusable;
	return sum / r->nr_samples / 1000.0;
}

static void plot(const char *dat)
{
	char png[PATH_MAX + 8];
	size_t len = strlen(dat);

	if (!bench_have("gnuplot")) {
		printf("gnuplot not found: no plot"
		       " (scripts/install-deps.sh --bench installs it)\n");
		return;
	}
	if (len > 4 && !strcmp(dat + len - 4, ".dat"))
		len -= 4;
	snprintf(png, sizeof(png), "%.*s.png", (int)len, dat);
	FILE *g = popen("gnuplot", "w");
	if (!g)
		return;
	fprintf(g, "set terminal pngcairo size 1000,600 font ',11' noenhanced\nset output '%s'\n"
		"set title 'bench_page_frag: mem=%s%s%s, %d steps, spikes to %d%%, %d seeds'\n"
		"set xlabel 'step'\n"
		"set ylabel 'unusable free space index at order 9 (lower is better)'\n"
		"set key bottom right\nset grid\nset yrange [0:*]\nplot ",
		png, mem, *extra_cmdline ? " " : "", extra_cmdline, steps, spike_fill, nseeds);
	/* Each seed dotted (columns 4 + 4i, 5 + 4i), then the means. */
	for (int i = 0; i < nseeds; i++)
		fprintf(g, "'%s' u 1:($%d/1000) w l lw 1 dt 3 lc rgb '#f4a582' notitle, "
			"'%s' u 1:($%d/1000) w l lw 1 dt 3 lc rgb '#92c5de' notitle, ",
			dat, 4 + 4 * i, dat, 5 + 4 * i);
	fprintf(g, "'%s' u 1:($2/1000) w lp lw 2 pt 7 ps 0.5 lc rgb '#b2182b' "
		"title 'tail_placement=0 (mean; dotted: each seed)', "
		"'%s' u 1:($3/1000) w lp lw 2 pt 5 ps 0.5 lc rgb '#2166ac' "
		"title 'tail_placement=1 (mean; dotted: each seed)'\n", dat, dat);
	if (pclose(g) == 0)
		printf("plot: %s\n", png);
}

static int write_dat(const char *dat)
{
	FILE *f = fopen(dat, "w");

	if (!f) {
		fprintf(stderr, "bench_page_frag: %s: %s\n", dat, strerror(errno));
		return -1;
	}
	fprintf(f, "# bench_page_frag mem=%s%s%s steps=%d fill=%d: order-9 indices (thousandths)\n"
		"# step unusable_off_mean unusable_on_mean, then per seed:"
		" unusable_off unusable_on extfrag_off extfrag_on\n# seeds:",
		mem, *extra_cmdline ? " " : "", extra_cmdline, steps, spike_fill);
	for (int i = 0; i < nseeds; i++)
		fprintf(f, " %llu", (unsigned long long)seeds[i]);
	for (int k = 0; k < res[0].nr_samples; k++) {
		fprintf(f, "\n%d %.1f %.1f", res[0].s[k].step, 1000 * mean_at(0, k, false),
			1000 * mean_at(1, k, false));
		for (int i = 0; i < nseeds; i++)
			fprintf(f, " %d %d %d %d", res[2 * i].s[k].unusable,
				res[2 * i + 1].s[k].unusable, res[2 * i].s[k].extfrag,
				res[2 * i + 1].s[k].extfrag);
	}
	fputc('\n', f);
	fclose(f);
	printf("data: %s\n", dat);
	return 0;
}

static void print_series(void)
{
	/*
	 * Rows a whole number of spike periods apart, half-way between
	 * spikes, so they compare like with like; the data file has them all.
	 */
	int ns = res[0].nr_samples, per = SPIKE_EVERY / SAMPLE_EVERY;
	int every = per * ((ns + 20 * per - 1) / (20 * per));

	printf("\nOrder-9 fragmentation over time (mean of %d seeds), every %d steps, mid-way"
	       " between spikes\nunus: unusable free space index (lower is better);"
	       " blk: order-9 blocks free\nextfrag: fragmentation index, mean over the seeds where"
	       " an order-9 allocation would\nfail (n/N: in how many); -1.000 = an order-9 block"
	       " was free in every seed\n\n%6s | %8s %8s %8s | %6s %6s | %-15s %-15s\n",
	       nseeds, every * SAMPLE_EVERY, "step", "unus off", "unus on", "on-off",
	       "blk off", "blk on", "extfrag off", "extfrag on");
	for (int k = 0; k < ns; k++) {
		char e0[32], e1[32];

		if (k % every && k != ns - 1)
			continue;
		fmt_extfrag(e0, sizeof(e0), 0, k);
		fmt_extfrag(e1, sizeof(e1), 1, k);
		printf("%6d | %8.3f %8.3f %+8.3f | %6.1f %6.1f | %-15s %-15s\n", res[0].s[k].step,
		       mean_at(0, k, false), mean_at(1, k, false),
		       mean_at(1, k, false) - mean_at(0, k, false),
		       mean_at(0, k, true), mean_at(1, k, true), e0, e1);
	}
}

/* One row of the per-seed table: off/on pairs, @prec decimals for counts. */
static void seed_row(const char *label, const double *v, int prec)
{
	printf("%6s |%6.*f%6.*f |%6.*f%6.*f |%6.*f%6.*f |%8.*f%8.*f |%8.3f%8.3f |%6.3f%6.3f |"
	       "%8.*f %8.*f\n", label, prec, v[0], prec, v[1], prec, v[2], prec, v[3],
	       prec, v[4], prec, v[5], prec, v[6], prec, v[7], v[8], v[9], v[10], v[11],
	       prec, v[12], prec, v[13]);
}

static void print_seeds(void)
{
	double m[14] = { 0 };
	char label[24];

	printf("\nPer seed (off = page_alloc.tail_placement=0, on = =1)\n\n"
	       "%6s | %-11s | %-11s | %-11s | %-15s | %-15s | %-11s | %-11s\n"
	       "%6s |%6s%6s |%6s%6s |%6s%6s |%8s%8s |%8s%8s |%6s%6s |%8s %8s\n",
	       "seed", "huge@load", "huge@rest", "ideal@rest", "probes ok", "mean unusable",
	       "unus@rest", "alloc fails", "", "off", "on", "off", "on", "off", "on", "off", "on",
	       "off", "on", "off", "on", "off", "on");
	for (int i = 0; i < nseeds; i++) {
		const struct result *r = &res[2 * i];
		double v[14];

		for (int t = 0; t < 2; t++) {
			v[0 + t] = r[t].huge_load;
			v[2 + t] = r[t].huge_rest;
			v[4 + t] = (double)(r[t].rest.free_pages >> HUGE_ORDER);
			v[6 + t] = r[t].immediate;
			v[8 + t] = mean_unusable(&r[t]);
			v[10 + t] = r[t].rest.unusable / 1000.0;
			v[12 + t] = (double)r[t].alloc_fail;
		}
		for (int j = 0; j < 14; j++)
			m[j] += v[j] / nseeds;
		snprintf(label, sizeof(label), "%llu", (unsigned long long)seeds[i]);
		seed_row(label, v, 0);
	}
	seed_row("mean", m, 1);
	printf("\nhuge@load: order-9 allocations that succeed at the end with the short-lived\n"
	       "blocks still live; huge@rest: after they are freed; ideal@rest: free pages / 512;\n"
	       "probes ok: of the %d order-9 probes (one per %d steps, freed at once), how many\n"
	       "succeeded.\n"
	       "\nSummary: tail placement changed huge@rest by %+.1f (%.1f -> %.1f), huge@load by"
	       " %+.1f,\nprobe successes by %+.1f, and the mean unusable index at order 9 by %+.3f"
	       " (%.3f -> %.3f).\n", res[0].nr_samples, SAMPLE_EVERY, m[3] - m[2], m[2], m[3],
	       m[1] - m[0], m[7] - m[6], m[9] - m[8], m[8], m[9]);
}

int main(int argc, char **argv)
{
	char dat[PATH_MAX] = "";
	bool ok = true;
	int opt;

	while ((opt = getopt(argc, argv, "m:n:s:o:f:k:h")) != -1) {
		switch (opt) {
		case 'm': mem = optarg; break;
		case 'n': steps = atoi(optarg); break;
		case 'o': snprintf(dat, sizeof(dat), "%s", optarg); break;
		case 'f': spike_fill = atoi(optarg); break;
		case 'k': extra_cmdline = optarg; break;
		case 's':
			nseeds = 0;
			for (char *t = strtok(optarg, ","); t && nseeds < MAX_SEEDS;
			     t = strtok(NULL, ","))
				seeds[nseeds++] = strtoull(t, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: bench_page_frag [-m MEM] [-n STEPS] [-s SEED,...]"
				" [-f FILL] [-k PARAMS] [-o FILE.dat]\n"
				"  -m MEM    machine size, mem= (default 256M)\n"
				"  -n STEPS  churn steps (default 10000)\n"
				"  -s SEEDS  comma-separated seeds (default 1-5; at most %d)\n"
				"  -f FILL   spikes fill memory to FILL%% every %d steps (92)\n"
				"  -k PARAMS more boot parameters, e.g. page_reporting.enable=0\n"
				"  -o FILE   time series (build/bench-results/page_frag.dat)\n",
				MAX_SEEDS, SPIKE_EVERY);
			return 2;
		}
	}
	if (spike_fill < 1 || spike_fill > 99) {
		fprintf(stderr, "bench_page_frag: -f takes 1..99 (memory can never be all live)\n");
		return 2;
	}
	if (steps < 1 || nseeds < 1 || steps > (MAX_SAMPLES - 2) * SAMPLE_EVERY) {
		fprintf(stderr, "bench_page_frag: need 1..%d steps and a seed\n",
			(MAX_SAMPLES - 2) * SAMPLE_EVERY);
		return 2;
	}
	if (!*dat)
		bench_results_path(dat, sizeof(dat), "page_frag.dat");

	res = bench_shared(sizeof(struct result) * 2 * (size_t)nseeds);
	if (!res) {
		perror("mmap");
		return 1;
	}

	printf("bench_page_frag: buddy free-to-tail high-order stress, mem=%s%s%s, %d steps, seeds", mem,
	       *extra_cmdline ? " " : "", extra_cmdline, steps);
	for (int i = 0; i < nseeds; i++)
		printf("%s%llu", i ? "," : " ", (unsigned long long)seeds[i]);
	printf("\nworkload: %d allocs/step (orders 0-3), %d.%d%% long-lived (%d%% of those pinned),"
	       " spikes to %d%% every %d steps\n", BURST, LONG_PERMILLE / 10, LONG_PERMILLE % 10,
	       PINNED_PERCENT, spike_fill, SPIKE_EVERY);

	for (int i = 0; i < 2 * nseeds; i++) {
		if (!bench_fork(run_one, (void *)(intptr_t)i) || !res[i].done) {
			fprintf(stderr, "bench_page_frag: seed %llu tail=%d: the run failed\n",
				(unsigned long long)seeds[i / 2], i % 2);
			ok = false;
		}
	}
	if (!ok)
		return 1;

	print_series();
	print_seeds();

	double secs = 0;
	int mismatch = 0;
	printf("\nFinal /proc/buddyinfo at rest (before the order-9 allocations)\n");
	for (int i = 0; i < 2 * nseeds; i++) {
		printf("seed %llu tail=%d: %s", (unsigned long long)seeds[i / 2], i % 2,
		       res[i].buddyinfo);
		mismatch += res[i].file_mismatch;
		if (res[i].lost_pages)
			printf("WARNING: seed %llu tail=%d: %ld pages neither free nor allocated\n",
			       (unsigned long long)seeds[i / 2], i % 2, res[i].lost_pages);
		secs += res[i].seconds;
	}
	if (mismatch)
		printf("\nWARNING: /sys/kernel/debug/extfrag/* disagree with extfrag.h on the"
		       " zone_get_info() counts in %d run(s)\n", mismatch);
	printf("\nruns took %.1f s in all\n", secs);
	if (write_dat(dat))
		return 1;
	plot(dat);
	return 0;
}
