// SPDX-License-Identifier: MIT
/*
 * bench_slab_mem: the memory of the three slab allocators on one workload,
 * after the SLOB split free lists patch (Mackall 2008) and Pekka Enberg's
 * counter-measurement in the same thread.
 *
 *  1. Mackall's table: a boot-like workload with his patch's statistics
 *     (boot_workload.h: 22,500 cache allocations, 12,100 frees, 10,250
 *     kmallocs of which 5,450 stay live, 48 page-sized objects), replayed on
 *     SLOB with slob.lists=1, 2 (break 300) and 3, printing SLOB's
 *     statistics (/sys/kernel/debug/slob/stats) beside the patch's own.
 *  2. Enberg's table: the same workload, and optionally a real kernel's
 *     slab trace (perf script text of kmem:kmalloc/kfree/kmem_cache_alloc/
 *     kmem_cache_free, -t), on SLUB, SLAB and SLOB with each list setting:
 *     the slab pages in use (the counters of /proc/meminfo's Slab line)
 *     against the pages the live objects' bytes fill, at the end and at the
 *     peak.
 *
 * Each allocator runs in its own child process that boots kmem with its
 * slab= line; one that does not boot shows n/a.  Deterministic: the
 * workload comes from a seeded PRNG and the counts do not depend on time.
 *
 *   bench_slab_mem [-s SEED] [-a slub,slab,slob1,slob2,slob3] [-t TRACE[.xz]] [-E EVENTS] [-W]
 *     -t  also replay this perf script trace; -E  only its first EVENTS slab events
 *     -W  skip the boot-like workload (the trace only)
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kmem.h>

#include "boot_workload.h"
#include "perf_trace.h"
#include "slab_allocs.h"

#define PAGE_BYTES	4096ul
#define BASE_CMDLINE	"mem=256M"
#define SLOB_STATS	"/sys/kernel/debug/slob/stats"

/* What one allocator did with one workload (shared with the parent). */
struct mem_result {
	int state;			/* 0 not run, 1 done, -1 did not boot, -2 crashed */
	long pages_base;		/* slab pages after boot, before the workload */
	long pages_end, pages_peak;	/* above pages_base */
	unsigned long live_end, live_peak;	/* bytes, as the replay counted them */
	unsigned long allocs, frees, failed;
	long meminfo_slab_kb;		/* /proc/meminfo Slab at the end */
	double cpu_ms;
	char slob_stats[4096];		/* SLOB's statistics file at the end, if any */
};

/* A workload in replayable form (the boot-like one is converted to it). */
struct mem_wl {
	const char *name;
	struct pt_trace t;
};

struct job {
	const struct mem_wl *wl;
	const struct sa_config *cfg;
	struct mem_result *res;
	const char *base;
};

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* In the child: boot, replay, measure. */
static void replay(void *arg)
{
	struct job *j = arg;
	const struct pt_trace *t = &j->wl->t;
	struct mem_result *r = j->res;

	if (sa_boot(j->base, j->cfg->params)) {
		r->state = -1;
		return;
	}
	struct kmem_cache **cache = calloc(t->ncache ? t->ncache : 1, sizeof(*cache));
	void **ptr = calloc(t->nobj ? t->nobj : 1, sizeof(*ptr));
	if (!cache || !ptr) {
		fprintf(stderr, "bench_slab_mem: out of memory\n");
		exit(1);
	}
	for (uint32_t c = 0; c < t->ncache; c++) {
		cache[c] = kmem_cache_create(t->cache_name[c], t->cache_size[c], 0, 0, NULL);
		if (!cache[c]) {
			/* A name kmem uses itself: the workload's own copy. */
			char name[PT_NAME_MAX + 8];
			snprintf(name, sizeof(name), "replay-%s", t->cache_name[c]);
			cache[c] = kmem_cache_create(name, t->cache_size[c], 0, 0, NULL);
		}
		if (!cache[c]) {
			fprintf(stderr, "bench_slab_mem: kmem_cache_create(%s, %u) failed\n",
				t->cache_name[c], t->cache_size[c]);
			exit(1);
		}
	}
	long base = sa_slab_pages(), peak = base;
	unsigned long live = 0, live_peak = 0;
	double c0 = cpu_ms();
	for (uint32_t i = 0; i < t->nop; i++) {
		const struct pt_op *op = &t->op[i];
		const struct pt_obj *o = &t->obj[op->obj];
		void **slot = &ptr[op->obj];
		if (op->is_free) {
			if (!*slot)
				continue;	/* its allocation failed */
			if (o->cache == PT_KMALLOC)
				kfree(*slot);
			else
				kmem_cache_free(cache[o->cache], *slot);
			*slot = NULL;
			live -= o->size;
			r->frees++;
			continue;
		}
		void *p = o->cache == PT_KMALLOC ? kmalloc(o->size, GFP_KERNEL)
						 : kmem_cache_alloc(cache[o->cache], GFP_KERNEL);
		r->allocs++;
		if (!p) {
			r->failed++;
			continue;
		}
		/* Used as a kernel object would be: its first cache line written. */
		memset(p, 0x5a, o->size < 64 ? o->size : 64);
		*slot = p;
		live += o->size;
		if (live > live_peak)
			live_peak = live;
		long pages = sa_slab_pages();
		if (pages > peak)
			peak = pages;
	}
	r->cpu_ms = cpu_ms() - c0;
	r->pages_base = base;
	r->pages_end = sa_slab_pages() - base;
	r->pages_peak = peak - base;
	r->live_end = live;
	r->live_peak = live_peak;

	static char buf[1 << 14];
	if (kmem_read("/proc/meminfo", buf, sizeof(buf)) > 0)
		r->meminfo_slab_kb = sa_meminfo_kb(buf, "Slab");
	if (kmem_read(SLOB_STATS, r->slob_stats, sizeof(r->slob_stats)) < 0)
		r->slob_stats[0] = '\0';
	r->state = 1;
}

static void run(const struct mem_wl *wl, const struct sa_config *cfg, struct mem_result *res, const char *base)
{
	struct job j = { wl, cfg, res, base };

	memset(res, 0, sizeof(*res));
	if (!bench_fork(replay, &j) && res->state != -1)
		res->state = -2;
}

/* The boot-like workload as a replayable trace. */
static int boot_wl(struct mem_wl *m, const struct bw_workload *w)
{
	struct pt_trace *t = &m->t;

	m->name = "boot-like";
	memset(t, 0, sizeof(*t));
	t->ncache = BW_NR_CACHES + 1;
	t->cache_name = calloc(t->ncache, sizeof(*t->cache_name));
	t->cache_size = calloc(t->ncache, sizeof(*t->cache_size));
	t->obj = calloc(w->nobj, sizeof(*t->obj));
	t->op = calloc(w->nop, sizeof(*t->op));
	if (!t->cache_name || !t->cache_size || !t->obj || !t->op)
		return -1;
	for (int c = 0; c < BW_NR_CACHES; c++) {
		snprintf(t->cache_name[c], PT_NAME_MAX, "%s", bw_caches[c].name);
		t->cache_size[c] = bw_caches[c].size;
	}
	snprintf(t->cache_name[BW_NR_CACHES], PT_NAME_MAX, "%s", BW_BIG_NAME);
	t->cache_size[BW_NR_CACHES] = BW_BIG_SIZE;
	for (uint32_t i = 0; i < w->nobj; i++) {
		uint32_t c = w->obj[i].cache;
		t->obj[i].size = w->obj[i].size;
		t->obj[i].cache = c == BW_KMALLOC ? PT_KMALLOC : c == BW_BIG ? (uint32_t)BW_NR_CACHES : c;
	}
	for (uint32_t i = 0; i < w->nop; i++)
		t->op[i] = (struct pt_op){ w->op[i].obj, w->op[i].is_free };
	t->nobj = w->nobj;
	t->nop = w->nop;
	return 0;
}

/*
 * The pages the live objects fill: objects below a page packed end to end,
 * each object of a page or more in whole pages of its own (as Mackall's
 * "used": allocated bytes / PAGE_SIZE + big pages).
 */
static unsigned long data_pages(unsigned long small_bytes, unsigned long big_pages)
{
	return (small_bytes + PAGE_BYTES - 1) / PAGE_BYTES + big_pages;
}

/* Live small bytes and big pages of a trace's objects still held at its end, and at its peak. */
static void trace_live(const struct pt_trace *t, unsigned long *small, unsigned long *big,
		       unsigned long *peak_small, unsigned long *peak_big)
{
	unsigned char *held = calloc(t->nobj ? t->nobj : 1, 1);
	unsigned long s = 0, b = 0, best = 0;

	*peak_small = *peak_big = 0;
	for (uint32_t i = 0; held && i < t->nop; i++) {
		const struct pt_obj *o = &t->obj[t->op[i].obj];
		long d = t->op[i].is_free ? -1 : 1;
		held[t->op[i].obj] = d > 0;
		if (o->size >= PAGE_BYTES)
			b += d * ((o->size + PAGE_BYTES - 1) / PAGE_BYTES);
		else
			s += d * o->size;
		if (data_pages(s, b) > best) {
			best = data_pages(s, b);
			*peak_small = s;
			*peak_big = b;
		}
	}
	*small = s;
	*big = b;
	free(held);
}

static const char *const mackall_before[] = {
	"counted pages 409 unused 185242 biggest 1005 fragments 1416",
	"slob pages 410 allocs 22528 frees 12109 active 10419 allocated 932647",
	"page scans 11249 block scans 40650",
	"kmallocs 10247 active 5450 allocated 3484680 overhead 48836",
	"bigpages 827 active 17",
	"total 427 used 245",
};
static const char *const mackall_after[] = {
	"small list pages 107 unused 39622 biggest 1516 fragments 3511",
	"big list pages 129 unused 23264 biggest 2076 fragments 232",
	"slob pages 243 allocs 22528 frees 12108 active 10420 allocated 932079",
	"page scans 8074 block scans 481530",
	"kmallocs 10248 active 5451 allocated 3484220 overhead 42054",
	"bigpages 825 active 16",
	"total 259 used 244",
};

/* "total P used P" of a SLOB statistics text; false if absent. */
static bool slob_total_used(const char *s, long *total, long *used)
{
	const char *l = strstr(s, "total ");

	while (l && l != s && l[-1] != '\n')
		l = strstr(l + 1, "total ");
	return l && sscanf(l, "total %ld used %ld", total, used) == 2;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_slab_mem [-s SEED] [-a LIST] [-t TRACE] [-E EVENTS] [-W]\n"
		"  -s SEED    the boot-like workload's PRNG seed (default 2008)\n"
		"  -a LIST    allocators, of slub,slab,slob1,slob2,slob3 (default all)\n"
		"  -t TRACE   also replay a perf script trace of kmem:* slab events (.xz read with xz -dc)\n"
		"  -E EVENTS  only the trace's first EVENTS slab events\n"
		"  -W         no boot-like workload (the trace only)\n");
	exit(2);
}

static const char *pct(char *buf, long pages, unsigned long data)
{
	if (!data)
		snprintf(buf, 16, "-");
	else
		snprintf(buf, 16, "%+.0f%%", 100.0 * ((double)pages / (double)data - 1));
	return buf;
}

int main(int argc, char **argv)
{
	uint64_t seed = 2008;
	const char *trace = NULL;
	unsigned long max_events = 0;
	bool on[SA_NR_MEM_CONFIGS], no_boot = false;
	int opt;

	for (int i = 0; i < SA_NR_MEM_CONFIGS; i++)
		on[i] = true;
	while ((opt = getopt(argc, argv, "s:a:t:E:Wh")) != -1) {
		switch (opt) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'a':
			if (!sa_select(sa_mem_configs, SA_NR_MEM_CONFIGS, optarg, on))
				usage();
			break;
		case 't': trace = optarg; break;
		case 'E': max_events = strtoul(optarg, NULL, 0); break;
		case 'W': no_boot = true; break;
		default: usage();
		}
	}
	if (no_boot && !trace)
		usage();

	struct mem_wl wls[2];
	int nwl = 0;
	struct bw_workload bw;
	if (!no_boot) {
		if (bw_build(&bw, seed) || boot_wl(&wls[nwl], &bw)) {
			fprintf(stderr, "bench_slab_mem: out of memory\n");
			return 1;
		}
		nwl++;
	}
	if (trace) {
		if (pt_read(&wls[nwl].t, trace, max_events))
			return 1;
		wls[nwl].name = "kernel trace";
		nwl++;
	}
	struct mem_result *res = bench_shared(sizeof(*res) * (size_t)nwl * SA_NR_MEM_CONFIGS);
	if (!res) {
		fprintf(stderr, "bench_slab_mem: mmap failed\n");
		return 1;
	}

	printf("bench_slab_mem: the slab allocators' memory on one workload (SLOB split free lists,\n"
	       "Mackall 2008, and Enberg's measurement in its thread). Each allocator boots in its own\n"
	       "process (kmem_init(\"%s <slab= line>\")); n/a: that boot was refused.\n\n", BASE_CMDLINE);
	if (!no_boot) {
		printf("Boot-like workload (seed %llu): %lu cache allocations, %lu frees, %lu live "
		       "(%lu bytes, %.1f on average);\n"
		       "  %lu kmallocs, %lu freed, %lu live (%lu bytes); %.2f MB requested, %.1f bytes on average;\n"
		       "  %lu page-sized objects (%u bytes, %s), %lu live.\n"
		       "  Live at the end: %lu bytes below a page + %lu pages = %lu data pages; peak live %lu bytes.\n",
		       (unsigned long long)seed, bw.cache_allocs, bw.cache_frees, bw.cache_live,
		       bw.cache_live_bytes, (double)bw.cache_live_bytes / (double)bw.cache_live, bw.kmallocs,
		       bw.kmalloc_frees, bw.kmalloc_live, bw.kmalloc_live_bytes, bw.kmalloc_bytes / 1e6,
		       (double)bw.kmalloc_bytes / (double)bw.kmallocs, bw.big_allocs, BW_BIG_SIZE, BW_BIG_NAME,
		       bw.big_live, bw.live_small_bytes, bw.big_live, data_pages(bw.live_small_bytes, bw.big_live),
		       bw.peak_live_bytes);
		printf("WORKLOAD seed=%llu ops=%u cache_allocs=%lu cache_frees=%lu cache_live=%lu "
		       "cache_live_bytes=%lu kmallocs=%lu kmalloc_frees=%lu kmalloc_live=%lu kmalloc_bytes=%lu "
		       "kmalloc_live_bytes=%lu big_allocs=%lu big_live=%lu live_bytes=%lu peak_live_bytes=%lu "
		       "digest=%016llx\n\n",
		       (unsigned long long)seed, bw.nop, bw.cache_allocs, bw.cache_frees, bw.cache_live,
		       bw.cache_live_bytes, bw.kmallocs, bw.kmalloc_frees, bw.kmalloc_live, bw.kmalloc_bytes,
		       bw.kmalloc_live_bytes, bw.big_allocs, bw.big_live, bw.live_bytes, bw.peak_live_bytes,
		       (unsigned long long)bw.digest);
	}
	if (trace) {
		const struct pt_trace *t = &wls[nwl - 1].t;
		printf("Trace %s: %lu lines, %lu slab events (%lu kmem_cache_alloc, %lu kmem_cache_free, "
		       "%lu kmalloc, %lu kfree), %u caches;\n"
		       "  replayed: %u operations on %u objects; skipped: %lu frees of objects allocated "
		       "before the window, %lu kfree(NULL), %lu failed allocations; %lu allocations at an "
		       "address still held (the old object freed first).\n\n",
		       strrchr(trace, '/') ? strrchr(trace, '/') + 1 : trace, t->lines, t->events, t->cache_allocs, t->cache_frees, t->kmallocs, t->kfrees,
		       t->ncache, t->nop, t->nobj, t->free_unseen, t->free_null, t->alloc_failed, t->realloc_live);
	}

	for (int w = 0; w < nwl; w++)
		for (int c = 0; c < SA_NR_MEM_CONFIGS; c++)
			if (on[c])
				run(&wls[w], &sa_mem_configs[c], &res[w * SA_NR_MEM_CONFIGS + c], BASE_CMDLINE);

	char b1[16], b2[16];
	/* ---- Mackall's table ---- */
	if (!no_boot) {
		printf("== Mackall's table: SLOB's statistics (%s) after the boot-like workload ==\n\n", SLOB_STATS);
		for (int c = 0; c < SA_NR_MEM_CONFIGS; c++) {
			if (!on[c] || strncmp(sa_mem_configs[c].params, "slab=slob", 9))
				continue;
			const struct mem_result *r = &res[c];
			printf("-- %s (%s) --\n", sa_mem_configs[c].label, sa_mem_configs[c].params);
			if (r->state == -1)
				printf("n/a (does not boot in this build)\n\n");
			else if (r->state != 1)
				printf("FAILED (the replay crashed or exited with an error)\n\n");
			else if (!r->slob_stats[0])
				printf("(no %s in this build)\n\n", SLOB_STATS);
			else
				printf("%s\n", r->slob_stats);
		}
		printf("-- the patch's own (2.6.24-rc, boot to a shell) --\n");
		printf("before (one list):\n");
		for (size_t i = 0; i < sizeof(mackall_before) / sizeof(*mackall_before); i++)
			printf("  %s\n", mackall_before[i]);
		printf("after (split at 300 bytes):\n");
		for (size_t i = 0; i < sizeof(mackall_after) / sizeof(*mackall_after); i++)
			printf("  %s\n", mackall_after[i]);
		printf("\n");

		unsigned long dp = data_pages(bw.live_small_bytes, bw.big_live);
		printf("Overhead (pages in use / pages of live data - 1):\n");
		printf("%-14s | %-28s | %-30s | %s\n", "setting", "SLOB's total/used (its file)",
		       "slab pages / data pages (end)", "target");
		for (int c = 0; c < SA_NR_MEM_CONFIGS; c++) {
			if (!on[c] || strncmp(sa_mem_configs[c].params, "slab=slob", 9))
				continue;
			const struct mem_result *r = &res[c];
			bool one = strstr(sa_mem_configs[c].params, "lists=1") != NULL;
			const char *target = one ? ">= 50% (patch: 75%)" : "<= 6% (patch: 6%)";
			char left[40] = "n/a", right[40] = "n/a", verdict[16] = "";
			long tot, used;
			if (r->state == 1) {
				if (slob_total_used(r->slob_stats, &tot, &used) && used > 0)
					snprintf(left, sizeof(left), "%ld / %ld = %s", tot, used, pct(b1, tot, (unsigned long)used));
				else
					snprintf(left, sizeof(left), "-");
				snprintf(right, sizeof(right), "%ld / %lu = %s", r->pages_end, dp, pct(b2, r->pages_end, dp));
				double o = 100.0 * ((double)r->pages_end / (double)dp - 1);
				snprintf(verdict, sizeof(verdict), "%s", (one ? o >= 50 : o <= 6) ? "met" : "NOT met");
			}
			printf("%-14s | %-28s | %-30s | %s %s\n", sa_mem_configs[c].label, left, right, target, verdict);
		}
		printf("(patch: one list 427 / 245 = +74%%, split 259 / 244 = +6%%)\n\n");
	}

	/* ---- Enberg's table ---- */
	printf("== Enberg's table: slab pages against the live objects' pages ==\n\n");
	printf("slab pages: what the slab layer holds above its state after boot (/proc/meminfo Slab's\n"
	       "counters, kmalloc's page-sized allocations included); data pages: the live objects' bytes\n"
	       "below a page, packed, plus whole pages for the larger ones. Peak: the most slab pages at any\n"
	       "point, against the most data pages at any point.\n\n");
	printf("%-14s | %-12s | %9s | %9s | %8s | %9s | %9s | %8s | %8s\n", "workload", "allocator",
	       "pages end", "data end", "overhead", "pages max", "data max", "overhead", "cpu ms");
	for (int w = 0; w < nwl; w++) {
		unsigned long small, big, psmall, pbig;
		trace_live(&wls[w].t, &small, &big, &psmall, &pbig);
		unsigned long de = data_pages(small, big), dpk = data_pages(psmall, pbig);
		for (int c = 0; c < SA_NR_MEM_CONFIGS; c++) {
			if (!on[c])
				continue;
			const struct mem_result *r = &res[w * SA_NR_MEM_CONFIGS + c];
			if (r->state != 1) {
				printf("%-14s | %-12s | %9s |\n", wls[w].name, sa_mem_configs[c].label,
				       r->state == -1 ? "n/a" : "FAILED");
				continue;
			}
			printf("%-14s | %-12s | %9ld | %9lu | %8s | %9ld | %9lu | %8s | %8.1f\n", wls[w].name,
			       sa_mem_configs[c].label, r->pages_end, de, pct(b1, r->pages_end, de), r->pages_peak,
			       dpk, pct(b2, r->pages_peak, dpk), r->cpu_ms);
		}
	}
	printf("\nEnberg's after-boot figures (lguest, 2.6.24-rc6, 10 runs; kB):\n"
	       "  allocator        | MemFree avg | used avg\n"
	       "  SLUB (no debug)  | 23877.6     | 2658.4\n"
	       "  SLOB             | 23579.6     | 2968.4\n"
	       "  SLAB (no debug)  | 23343.2     | 3200.8\n"
	       "  SLUB (with debug)| 23127.2     | 3356.8\n"
	       "Mackall's MemFree averages: SLUB 55787.6 kB; SLOB one list 55360.0 kB; SLOB split lists\n"
	       "56074.4 kB (SLUB's overhead \"about 35%%\" against SLOB's 6%%).\n\n");

	/* Machine-readable lines (tests, the report). */
	for (int w = 0; w < nwl; w++)
		for (int c = 0; c < SA_NR_MEM_CONFIGS; c++) {
			const struct mem_result *r = &res[w * SA_NR_MEM_CONFIGS + c];
			if (!on[c])
				continue;
			unsigned long small, big, psmall, pbig;
			trace_live(&wls[w].t, &small, &big, &psmall, &pbig);
			printf("RESULT wl=%s alloc=%s state=%s pages_base=%ld pages_end=%ld pages_peak=%ld "
			       "data_end=%lu data_peak=%lu live_end=%lu live_peak=%lu allocs=%lu frees=%lu "
			       "failed=%lu slab_kb=%ld\n",
			       w == 0 && !no_boot ? "boot" : "trace", sa_mem_configs[c].key,
			       r->state == 1 ? "ok" : r->state == -1 ? "n/a" : "failed", r->pages_base,
			       r->pages_end, r->pages_peak, data_pages(small, big), data_pages(psmall, pbig),
			       r->live_end, r->live_peak, r->allocs, r->frees, r->failed, r->meminfo_slab_kb);
		}
	for (int w = 0; w < nwl; w++)
		pt_free(&wls[w].t);
	if (!no_boot)
		bw_free(&bw);
	munmap(res, sizeof(*res) * (size_t)nwl * SA_NR_MEM_CONFIGS);
	return 0;
}
