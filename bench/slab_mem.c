// SPDX-License-Identifier: MIT
/*
 * bench_slab_mem: the memory of the three slab allocators on one workload,
 * after the SLOB split free lists patch (Mackall 2008) and Pekka Enberg's
 * counter-measurement in the same thread.
 *
 *  1. Mackall's table: a boot-like workload with his patch's statistics
 *     (boot_workload.h: 22,500 cache allocations, 12,100 frees, 10,250
 *     kmallocs of which 5,450 stay live, 48 page-sized objects; and the
 *     second reading of his figures, 12,280 cache allocations and 932 KB
 *     live), replayed on SLOB with slob.lists=1, 2 (break 300) and 3,
 *     printing SLOB's statistics (/sys/kernel/debug/slob/stats) beside the
 *     patch's own, and where SLOB's pages go: each free list's live bytes,
 *     kmalloc headers, rounding and free bytes by hole size.
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
 *   bench_slab_mem [-s SEED] [-a slub,slab,slob1,slob2,slob3] [-w boot,boot12k] [-x PARAMS]...
 *                  [-L LIFE] [-H 8|4] [-t TRACE[.xz]] [-E EVENTS] [-W]
 *     -w  the boot-like workloads (default both); -x  one more configuration (a slab= line)
 *     -L  the freed kmallocs' mean life; -K  their sizes as a real kernel's;
 *     -H  SLOB's kmallocs with the kernel's smaller header
 *     -t  also replay this perf script trace; -E  only its first EVENTS slab events
 *     -W  skip the boot-like workloads (the trace only)
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
#include "slab/slab.h"
#include "slab/slob/slob.h"

#define PAGE_BYTES	4096ul
#define BASE_CMDLINE	"mem=256M"
#define SLOB_STATS	"/sys/kernel/debug/slob/stats"
#define MAX_EXTRA	8		/* -x configurations */

/*
 * Where a SLOB setting's heap pages go at the end of a workload, per free
 * list and for the full pages (off every list): the live objects' bytes,
 * kmalloc headers, the rounding of blocks (to units, kmalloc blocks to 16
 * bytes, and any alignment inside a block), and the free bytes, by the size
 * of the hole they are in.  A page's bytes are exactly these four: SLOB
 * keeps nothing else in its pages.  Taken by the replaying child from its
 * own objects' addresses and the heap's free blocks.
 */
#define BD_LISTS	4		/* SLOB's up to three lists, then the full pages */
#define BD_FULL		3
#define BD_BINS		5
#define BD_TOP		3
#define BD_SPARSE	(PAGE_BYTES / 4)	/* a page with fewer live bytes is "sparse" */
static const char *const bd_bin_name[BD_BINS] = { "<32", "32-127", "128-255", "256-1023", ">=1024" };

struct slob_bd {
	unsigned long pages, live, headers, rounding, free;
	unsigned long holes[BD_BINS], hole_bytes[BD_BINS];
	unsigned long sparse_pages, sparse_free;	/* pages under BD_SPARSE live bytes */
	unsigned long hdr_k64, hdr_k32;	/* headers + rounding with the 64-bit kernel's 8-byte header, 2.6.24-32's 4 */
	unsigned long objs, objs_kmalloc;	/* live blocks in these pages, of them kmallocs */
	uint32_t top_kind[BD_TOP];	/* the kinds with the most live bytes here (ncache: kmalloc) */
	unsigned long top_bytes[BD_TOP];
};

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
	bool has_bd;			/* SLOB: the breakdown below */
	unsigned int slob_lists;
	char bd_name[BD_LISTS][8];
	struct slob_bd bd[BD_LISTS];
	unsigned long bd_big_pages;	/* pages of objects of about a page or more */
};

/* A workload in replayable form (the boot-like one is converted to it). */
struct mem_wl {
	const char *name;
	const char *key;		/* boot, boot12k, trace */
	struct pt_trace t;
	struct bw_workload *bw;		/* a boot-like workload's declaration; NULL for a trace */
};

struct job {
	const struct mem_wl *wl;
	const struct sa_config *cfg;
	struct mem_result *res;
	const char *base;
};

/*
 * -H 8 or 4: on SLOB, each kmalloc of the replay made as the kernel's SLOB
 * made it with a header of that many bytes (8: x86-64, ARCH_KMALLOC_MINALIGN
 * 8, power-of-two sizes aligned to their size; 4: 2.6.24 on x86-32, where the
 * split-lists patch was measured): a heap block of size + header bytes in
 * 2-byte units from kmem's SLOB heap (slob_alloc/slob_free, the same lists
 * and pages), the payload behind the header.  kmem's own kmalloc keeps its
 * 16-byte header (malloc's alignment); this only measures what a smaller
 * one would do.  0: kmalloc itself.
 */
static unsigned int kernel_hdr;

static bool hk_path(uint32_t size)
{
	return kernel_hdr && slab_allocator == SLAB_ALLOCATOR_SLOB && size + kernel_hdr < PAGE_BYTES - SLOB_MINALIGN;
}

static void *hk_alloc(uint32_t size)
{
	size_t align = kernel_hdr;
	char *b;

	if (kernel_hdr == 8 && size > 8 && !(size & (size - 1)))
		align = size;
	b = slob_alloc(size + kernel_hdr, GFP_KERNEL, align, kernel_hdr);
	return b ? b + kernel_hdr : NULL;
}

static void hk_free(void *p, uint32_t size)
{
	if (slob_free((char *)p - kernel_hdr, size + kernel_hdr))
		fprintf(stderr, "bench_slab_mem: slob_free of a %u-byte block refused\n", size);
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct bd_ent {
	uintptr_t page;
	uint32_t obj;
};

static int bd_ent_cmp(const void *a, const void *b)
{
	const struct bd_ent *x = a, *y = b;

	return x->page != y->page ? (x->page < y->page ? -1 : 1) : (x->obj > y->obj) - (x->obj < y->obj);
}

static int bd_bin(unsigned long bytes)
{
	return bytes < 32 ? 0 : bytes < 128 ? 1 : bytes < 256 ? 2 : bytes < 1024 ? 3 : 4;
}

/* Bytes a block of @size payload takes with a header of @hdr bytes, in 2-byte units (the kernel's SLOB). */
static unsigned long k_block(unsigned long size, unsigned long hdr)
{
	return (size + hdr + 1) & ~1ul;
}

/* In a SLOB child at the end of the replay: r->bd from the live objects' pages. */
static void slob_breakdown(const struct pt_trace *t, void *const *ptr, struct mem_result *r)
{
	struct bd_ent *e = calloc(t->nobj ? t->nobj : 1, sizeof(*e));
	unsigned long *kind_bytes = calloc((size_t)BD_LISTS * (t->ncache + 1), sizeof(*kind_bytes));
	unsigned int holes[SLOB_PAGE_UNITS];
	size_t n = 0;

	if (!e || !kind_bytes) {
		free(e);
		free(kind_bytes);
		return;
	}
	for (uint32_t i = 0; i < t->nobj; i++) {
		if (!ptr[i])
			continue;
		bool km = t->obj[i].cache == PT_KMALLOC;
		char *block = (char *)ptr[i] - (!km ? 0 : hk_path(t->obj[i].size) ? kernel_hdr : SLOB_MINALIGN);
		struct slob_page *sp = page_slob(__virt_to_page(block));
		if (sp->kind != SLOB_PAGE_HEAP) {
			r->bd_big_pages += (t->obj[i].size + PAGE_BYTES - 1) / PAGE_BYTES;
			continue;
		}
		e[n++] = (struct bd_ent){ (uintptr_t)block & ~(PAGE_BYTES - 1), i };
	}
	qsort(e, n, sizeof(*e), bd_ent_cmp);
	kmem_lock(&slob_lock);
	for (size_t a = 0, b; a < n; a = b) {
		struct slob_page *sp = page_slob(__virt_to_page((void *)e[a].page));
		unsigned long live = 0, headers = 0, k64 = 0, k32 = 0, nkm = 0, freeb = 0;
		unsigned int l = sp->list == SLOB_NO_LIST ? BD_FULL : sp->list;
		struct slob_bd *d = &r->bd[l < BD_LISTS ? l : BD_FULL];

		for (b = a; b < n && e[b].page == e[a].page; b++) {
			const struct pt_obj *o = &t->obj[e[b].obj];
			bool km = o->cache == PT_KMALLOC;
			live += o->size;
			headers += !km ? 0 : hk_path(o->size) ? kernel_hdr : SLOB_MINALIGN;
			nkm += km;
			k64 += k_block(o->size, km ? 8 : 0) - o->size;
			k32 += k_block(o->size, km ? 4 : 0) - o->size;
			kind_bytes[(size_t)(d - r->bd) * (t->ncache + 1) + (km ? t->ncache : o->cache)] += o->size;
		}
		int nh = slob_page_free_blocks(sp, holes, SLOB_PAGE_UNITS);
		for (int h = 0; h < nh && h < SLOB_PAGE_UNITS; h++) {
			d->holes[bd_bin(holes[h])]++;
			d->hole_bytes[bd_bin(holes[h])] += holes[h];
			freeb += holes[h];
		}
		d->pages++;
		d->live += live;
		d->headers += headers;
		d->free += freeb;
		/* Whatever of the page is neither live, header nor free: rounding (may not go negative). */
		d->rounding += PAGE_BYTES - freeb - live - headers;
		d->hdr_k64 += k64;
		d->hdr_k32 += k32;
		d->objs_kmalloc += nkm;
		d->objs += b - a;
		if (live + headers < BD_SPARSE) {
			d->sparse_pages++;
			d->sparse_free += freeb;
		}
	}
	r->slob_lists = slob_nr_lists;
	for (unsigned int l = 0; l < BD_LISTS; l++)
		snprintf(r->bd_name[l], sizeof(r->bd_name[l]), "%s",
			 l == BD_FULL ? "full" : l < slob_nr_lists ? slob_list_name(l) : "-");
	kmem_unlock(&slob_lock);
	for (unsigned int l = 0; l < BD_LISTS; l++) {
		unsigned long *kb = &kind_bytes[(size_t)l * (t->ncache + 1)];
		for (int k = 0; k < BD_TOP; k++) {
			uint32_t best = 0;
			for (uint32_t c = 1; c <= t->ncache; c++)
				if (kb[c] > kb[best])
					best = c;
			r->bd[l].top_kind[k] = best;
			r->bd[l].top_bytes[k] = kb[best];
			kb[best] = 0;
		}
	}
	r->has_bd = true;
	free(e);
	free(kind_bytes);
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
			if (o->cache == PT_KMALLOC && hk_path(o->size))
				hk_free(*slot, o->size);
			else if (o->cache == PT_KMALLOC)
				kfree(*slot);
			else
				kmem_cache_free(cache[o->cache], *slot);
			*slot = NULL;
			live -= o->size;
			r->frees++;
			continue;
		}
		void *p = o->cache != PT_KMALLOC ? kmem_cache_alloc(cache[o->cache], GFP_KERNEL)
			  : hk_path(o->size)	  ? hk_alloc(o->size)
						  : kmalloc(o->size, GFP_KERNEL);
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
	if (slab_allocator == SLAB_ALLOCATOR_SLOB)
		slob_breakdown(t, ptr, r);
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

	const struct bw_spec *sp = w->spec;

	m->name = sp->label;
	m->key = sp->key;
	memset(t, 0, sizeof(*t));
	t->ncache = (uint32_t)sp->ncaches + 1;
	t->cache_name = calloc(t->ncache, sizeof(*t->cache_name));
	t->cache_size = calloc(t->ncache, sizeof(*t->cache_size));
	t->obj = calloc(w->nobj, sizeof(*t->obj));
	t->op = calloc(w->nop, sizeof(*t->op));
	if (!t->cache_name || !t->cache_size || !t->obj || !t->op)
		return -1;
	for (int c = 0; c < sp->ncaches; c++) {
		snprintf(t->cache_name[c], PT_NAME_MAX, "%s", sp->caches[c].name);
		t->cache_size[c] = sp->caches[c].size;
	}
	snprintf(t->cache_name[sp->ncaches], PT_NAME_MAX, "%s", BW_BIG_NAME);
	t->cache_size[sp->ncaches] = BW_BIG_SIZE;
	for (uint32_t i = 0; i < w->nobj; i++) {
		uint32_t c = w->obj[i].cache;
		t->obj[i].size = w->obj[i].size;
		t->obj[i].cache = c == BW_KMALLOC ? PT_KMALLOC : c == BW_BIG ? (uint32_t)sp->ncaches : c;
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
		"usage: bench_slab_mem [-s SEED] [-a LIST] [-w LIST] [-x PARAMS]... [-L LIFE] [-K] [-H 8|4] [-t TRACE] [-E EVENTS] [-W]\n"
		"  -s SEED    the boot-like workloads' PRNG seed (default 2008)\n"
		"  -a LIST    allocators, of slub,slab,slob1,slob2,slob3 (default all)\n"
		"  -w LIST    boot-like workloads, of boot (22,500 cache allocations, the default reading),\n"
		"             boot12k (12,280: the patch's slob line counting kmallocs too); default both\n"
		"  -x PARAMS  one more configuration, a slab= line (e.g. \"slab=slob slob.lists=2 slob.break=200\");\n"
		"             up to %d\n"
		"  -L LIFE    the freed kmallocs' mean life in allocations (default 300)\n"
		"  -K         the temporary kmallocs of 257 bytes to 2 KiB in the 10 sizes a real kernel's are\n"
		"             (the Linux 6.18 capture's), not uniform over the range\n"
		"  -H 8|4     on SLOB, replay kmallocs as the kernel's SLOB laid them out with an 8-byte\n"
		"             (x86-64) or 4-byte (2.6.24 x86-32) header, as heap blocks (not kmem's kmalloc)\n"
		"  -t TRACE   also replay a perf script trace of kmem:* slab events (.xz read with xz -dc)\n"
		"  -E EVENTS  only the trace's first EVENTS slab events\n"
		"  -W         no boot-like workload (the trace only)\n", MAX_EXTRA);
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

static bool is_slob(const struct sa_config *c)
{
	return !strncmp(c->params, "slab=slob", 9);
}

static const char *kind_name(const struct pt_trace *t, uint32_t k)
{
	return k >= t->ncache ? "kmalloc" : t->cache_name[k];
}

static void print_boot_wl(const struct mem_wl *m, uint64_t seed)
{
	const struct bw_workload *bw = m->bw;

	printf("Boot-like workload%s (seed %llu): %lu cache allocations, %lu frees, %lu live "
	       "(%lu bytes, %.1f on average);\n"
	       "  %lu kmallocs, %lu freed (a mean of %u allocations later%s), %lu live (%lu bytes); %.2f MB requested, %.1f bytes on average;\n"
	       "  %lu page-sized objects (%u bytes, %s), %lu live.\n"
	       "  Live at the end: %lu bytes below a page (%.0f%% in objects over 300 bytes) + %lu pages = %lu data "
	       "pages; peak live %lu bytes.\n",
	       strcmp(m->key, "boot") ? ", second reading (the patch's slob line counts kmallocs too)" : "",
	       (unsigned long long)seed, bw->cache_allocs, bw->cache_frees, bw->cache_live, bw->cache_live_bytes,
	       (double)bw->cache_live_bytes / (double)bw->cache_live, bw->kmallocs, bw->kmalloc_frees,
	       bw->spec->kmalloc_life, bw->spec->temp_mix == bw_temp_mix_trace ? "; sizes as a real kernel's, -K" : "",
	       bw->kmalloc_live, bw->kmalloc_live_bytes, bw->kmalloc_bytes / 1e6,
	       (double)bw->kmalloc_bytes / (double)bw->kmallocs, bw->big_allocs, BW_BIG_SIZE, BW_BIG_NAME,
	       bw->big_live, bw->live_small_bytes, 100.0 * (double)bw->live_over300 / (double)bw->live_small_bytes,
	       bw->big_live, data_pages(bw->live_small_bytes, bw->big_live), bw->peak_live_bytes);
	printf("WORKLOAD wl=%s seed=%llu ops=%u cache_allocs=%lu cache_frees=%lu cache_live=%lu "
	       "cache_live_bytes=%lu kmallocs=%lu kmalloc_frees=%lu kmalloc_live=%lu kmalloc_bytes=%lu "
	       "kmalloc_live_bytes=%lu big_allocs=%lu big_live=%lu live_bytes=%lu peak_live_bytes=%lu "
	       "digest=%016llx\n\n",
	       m->key, (unsigned long long)seed, bw->nop, bw->cache_allocs, bw->cache_frees, bw->cache_live,
	       bw->cache_live_bytes, bw->kmallocs, bw->kmalloc_frees, bw->kmalloc_live, bw->kmalloc_bytes,
	       bw->kmalloc_live_bytes, bw->big_allocs, bw->big_live, bw->live_bytes, bw->peak_live_bytes,
	       (unsigned long long)bw->digest);
}

static unsigned long bd_holes(const struct slob_bd *d)
{
	unsigned long n = 0;

	for (int b = 0; b < BD_BINS; b++)
		n += d->holes[b];
	return n;
}

/* One SLOB run's breakdown: a line per list, the sum, and what the overhead is made of. */
static void print_breakdown(const struct mem_wl *m, const struct sa_config *cfg, const struct mem_result *r)
{
	const struct pt_trace *t = &m->t;
	struct slob_bd all = { 0 };
	unsigned long small, big, ps, pb;

	printf("%s, %s (%s)%s:\n", m->name, cfg->label, cfg->params,
	       kernel_hdr == 8 ? ", kmallocs with an 8-byte header (-H 8)" : kernel_hdr == 4 ? ", kmallocs with a 4-byte header (-H 4)" : "");
	printf("  %-6s %6s %6s %9s %8s %8s %9s %6s | free by hole: %7s %7s %7s %8s %7s | %6s %8s | most live bytes\n", "list",
	       "pages", "blocks", "live", "headers", "rounding", "free", "holes", bd_bin_name[0], bd_bin_name[1], bd_bin_name[2],
	       bd_bin_name[3], bd_bin_name[4], "sparse", "its free");
	for (unsigned int l = 0; l < BD_LISTS; l++) {
		const struct slob_bd *d = &r->bd[l];
		if (l != BD_FULL && l >= r->slob_lists)
			continue;
		printf("  %-6s %6lu %6lu %9lu %8lu %8lu %9lu %6lu |               %7lu %7lu %7lu %8lu %7lu | %6lu %8lu |",
		       r->bd_name[l], d->pages, d->objs, d->live, d->headers, d->rounding, d->free, bd_holes(d), d->hole_bytes[0], d->hole_bytes[1],
		       d->hole_bytes[2], d->hole_bytes[3], d->hole_bytes[4], d->sparse_pages, d->sparse_free);
		for (int k = 0; k < BD_TOP && d->live; k++)
			if (d->top_bytes[k])
				printf(" %s %.0f%%", kind_name(t, d->top_kind[k]), 100.0 * (double)d->top_bytes[k] / (double)d->live);
		printf("\n");
		all.pages += d->pages;
		all.live += d->live;
		all.headers += d->headers;
		all.rounding += d->rounding;
		all.free += d->free;
		all.hdr_k64 += d->hdr_k64;
		all.hdr_k32 += d->hdr_k32;
		all.objs_kmalloc += d->objs_kmalloc;
		all.objs += d->objs;
		for (int b = 0; b < BD_BINS; b++)
			all.holes[b] += d->holes[b];
		all.sparse_pages += d->sparse_pages;
		all.sparse_free += d->sparse_free;
		for (int b = 0; b < BD_BINS; b++)
			all.hole_bytes[b] += d->hole_bytes[b];
	}
	printf("  %-6s %6lu %6lu %9lu %8lu %8lu %9lu %6lu |               %7lu %7lu %7lu %8lu %7lu | %6lu %8lu |\n", "all",
	       all.pages, all.objs, all.live, all.headers, all.rounding, all.free, bd_holes(&all), all.hole_bytes[0], all.hole_bytes[1],
	       all.hole_bytes[2], all.hole_bytes[3], all.hole_bytes[4], all.sparse_pages, all.sparse_free);
	trace_live(t, &small, &big, &ps, &pb);
	double P = (double)PAGE_BYTES;
	long over = r->pages_end - (long)data_pages(small, big);
	printf("  %ld heap + %lu big pages, %ld over the %lu data pages: headers %.1f + rounding %.1f + free %.1f "
	       "pages (holes under 256 bytes %.1f, sparse pages' %.1f) - packing %.1f;\n"
	       "  headers + rounding with the 64-bit kernel's 8-byte header %.1f pages (%+.1f), with 2.6.24-32's 4-byte "
	       "header %.1f (%+.1f), if the holes stayed.\n",
	       r->pages_end - (long)r->bd_big_pages, r->bd_big_pages, over, data_pages(small, big), all.headers / P,
	       all.rounding / P, all.free / P, (all.hole_bytes[0] + all.hole_bytes[1] + all.hole_bytes[2]) / P,
	       all.sparse_free / P, (double)data_pages(small, 0) - small / P, all.hdr_k64 / P,
	       (all.hdr_k64 - (double)all.headers - (double)all.rounding) / P, all.hdr_k32 / P,
	       (all.hdr_k32 - (double)all.headers - (double)all.rounding) / P);
}

static void print_breakdown_lines(const struct mem_wl *m, const struct sa_config *cfg, const struct mem_result *r)
{
	for (unsigned int l = 0; l < BD_LISTS; l++) {
		const struct slob_bd *d = &r->bd[l];
		if (l != BD_FULL && l >= r->slob_lists)
			continue;
		printf("BREAKDOWN wl=%s alloc=%s list=%s pages=%lu live=%lu headers=%lu rounding=%lu free=%lu "
		       "h0=%lu h1=%lu h2=%lu h3=%lu h4=%lu holes=%lu blocks=%lu sparse=%lu sparse_free=%lu k64=%lu k32=%lu big_pages=%lu\n",
		       m->key, cfg->key, r->bd_name[l], d->pages, d->live, d->headers, d->rounding, d->free,
		       d->hole_bytes[0], d->hole_bytes[1], d->hole_bytes[2], d->hole_bytes[3], d->hole_bytes[4],
		       bd_holes(d), d->objs, d->sparse_pages,
		       d->sparse_free, d->hdr_k64, d->hdr_k32, r->bd_big_pages);
	}
}

int main(int argc, char **argv)
{
	uint64_t seed = 2008;
	const char *trace = NULL;
	unsigned long max_events = 0;
	struct sa_config cfgs[SA_NR_MEM_CONFIGS + MAX_EXTRA];
	static char extra_key[MAX_EXTRA][16], extra_label[MAX_EXTRA][64];
	int ncfg = SA_NR_MEM_CONFIGS;
	bool on[SA_NR_MEM_CONFIGS + MAX_EXTRA], no_boot = false, want_wl[2] = { true, true };
	struct bw_spec specs[2] = { bw_spec_boot, bw_spec_patch };
	int opt;

	memcpy(cfgs, sa_mem_configs, sizeof(sa_mem_configs));
	for (int i = 0; i < SA_NR_MEM_CONFIGS + MAX_EXTRA; i++)
		on[i] = true;
	while ((opt = getopt(argc, argv, "s:a:w:x:L:H:Kt:E:Wh")) != -1) {
		switch (opt) {
		case 'K':
			specs[0].temp_mix = specs[1].temp_mix = bw_temp_mix_trace;
			break;
		case 'H':
			kernel_hdr = (unsigned int)strtoul(optarg, NULL, 0);
			if (kernel_hdr != 4 && kernel_hdr != 8)
				usage();
			break;
		case 'L':
			specs[0].kmalloc_life = specs[1].kmalloc_life = (unsigned int)strtoul(optarg, NULL, 0);
			if (!specs[0].kmalloc_life)
				usage();
			break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'a':
			if (!sa_select(sa_mem_configs, SA_NR_MEM_CONFIGS, optarg, on))
				usage();
			break;
		case 'w': {
			char buf[64], *save = NULL;
			snprintf(buf, sizeof(buf), "%s", optarg);
			want_wl[0] = want_wl[1] = false;
			for (char *k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
				if (!strcmp(k, "boot"))
					want_wl[0] = true;
				else if (!strcmp(k, "boot12k"))
					want_wl[1] = true;
				else
					usage();
			}
			break;
		}
		case 'x': {
			int x = ncfg - SA_NR_MEM_CONFIGS;
			if (x >= MAX_EXTRA)
				usage();
			snprintf(extra_key[x], sizeof(extra_key[x]), "x%d", x + 1);
			/* "slab=slob slob.lists=2 slob.break=200" -> "SLOB lists=2 break=200" */
			char *o = extra_label[x], *end = extra_label[x] + sizeof(extra_label[x]) - 1;
			const char *p = optarg;
			if (!strncmp(p, "slab=slob", 9)) {
				o += snprintf(o, (size_t)(end - o), "SLOB");
				p += 9;
			}
			for (; *p && o < end; p++) {
				if (!strncmp(p, "slob.", 5))
					p += 5;
				*o++ = *p;
			}
			*o = '\0';
			cfgs[ncfg++] = (struct sa_config){ extra_key[x], extra_label[x], optarg };
			break;
		}
		case 't': trace = optarg; break;
		case 'E': max_events = strtoul(optarg, NULL, 0); break;
		case 'W': no_boot = true; break;
		default: usage();
		}
	}
	if (no_boot)
		want_wl[0] = want_wl[1] = false;
	if (!want_wl[0] && !want_wl[1] && !trace)
		usage();

	struct mem_wl wls[3];
	struct bw_workload bw[2];
	int nwl = 0, nboot = 0;
	memset(bw, 0, sizeof(bw));
	for (int i = 0; i < 2; i++) {
		if (!want_wl[i])
			continue;
		if (bw_build(&bw[i], &specs[i], seed) || boot_wl(&wls[nwl], &bw[i])) {
			fprintf(stderr, "bench_slab_mem: out of memory\n");
			return 1;
		}
		wls[nwl++].bw = &bw[i];
		nboot++;
	}
	if (trace) {
		if (pt_read(&wls[nwl].t, trace, max_events))
			return 1;
		wls[nwl].name = "kernel trace";
		wls[nwl].key = "trace";
		wls[nwl].bw = NULL;
		nwl++;
	}
	size_t nres = (size_t)nwl * (size_t)ncfg;
	struct mem_result *res = bench_shared(sizeof(*res) * nres);
	if (!res) {
		fprintf(stderr, "bench_slab_mem: mmap failed\n");
		return 1;
	}
#define RES(w, c) (&res[(size_t)(w) * (size_t)ncfg + (size_t)(c)])
	int lw = 12;
	for (int c = 0; c < ncfg; c++)
		if (on[c] && (int)strlen(cfgs[c].label) > lw)
			lw = (int)strlen(cfgs[c].label);

	printf("bench_slab_mem: the slab allocators' memory on one workload (SLOB split free lists,\n"
	       "Mackall 2008, and Enberg's measurement in its thread). Each allocator boots in its own\n"
	       "process (kmem_init(\"%s <slab= line>\")); n/a: that boot was refused.\n\n", BASE_CMDLINE);
	if (kernel_hdr)
		printf("-H %u: on SLOB, kmallocs below a page are replayed as the kernel's SLOB laid them out with a\n"
		       "%u-byte header: heap blocks of size + %u bytes (slob_alloc), not kmem's kmalloc (16 bytes);\n"
		       "SLOB's kmallocs line counts none of them, its slob line all.\n\n", kernel_hdr, kernel_hdr, kernel_hdr);
	for (int w = 0; w < nboot; w++)
		print_boot_wl(&wls[w], seed);
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
		for (int c = 0; c < ncfg; c++)
			if (on[c])
				run(&wls[w], &cfgs[c], RES(w, c), BASE_CMDLINE);

	char b1[16], b2[16];
	/* ---- Mackall's table ---- */
	if (nboot) {
		printf("== Mackall's table: SLOB's statistics (%s) after the boot-like workload ==\n\n", SLOB_STATS);
		for (int w = 0; w < nboot; w++)
			for (int c = 0; c < ncfg; c++) {
				if (!on[c] || !is_slob(&cfgs[c]))
					continue;
				const struct mem_result *r = RES(w, c);
				bool first = !strcmp(wls[w].key, "boot");
				printf("-- %s (%s)%s%s --\n", cfgs[c].label, cfgs[c].params, first ? "" : ", ",
				       first ? "" : wls[w].name);
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

		printf("Overhead (pages in use / pages of live data - 1):\n");
		printf("%-14s | %-*s | %-28s | %-30s | %s\n", "workload", lw, "setting", "SLOB's total/used (its file)",
		       "slab pages / data pages (end)", "target");
		for (int w = 0; w < nboot; w++) {
			unsigned long dp = data_pages(wls[w].bw->live_small_bytes, wls[w].bw->big_live);
			for (int c = 0; c < ncfg; c++) {
				if (!on[c] || !is_slob(&cfgs[c]))
					continue;
				const struct mem_result *r = RES(w, c);
				bool one = strstr(cfgs[c].params, "lists=1") != NULL;
				const char *target = one ? ">= 50% (patch: 75%)" : "<= 6% (patch: 6%)";
				char left[40] = "n/a", right[40] = "n/a", verdict[16] = "";
				long tot, used;
				if (r->state == 1) {
					if (slob_total_used(r->slob_stats, &tot, &used) && used > 0)
						snprintf(left, sizeof(left), "%ld / %ld = %s", tot, used,
							 pct(b1, tot, (unsigned long)used));
					else
						snprintf(left, sizeof(left), "-");
					snprintf(right, sizeof(right), "%ld / %lu = %s", r->pages_end, dp,
						 pct(b2, r->pages_end, dp));
					double o = 100.0 * ((double)r->pages_end / (double)dp - 1);
					snprintf(verdict, sizeof(verdict), "%s", (one ? o >= 50 : o <= 6) ? "met" : "NOT met");
				}
				printf("%-14s | %-*s | %-28s | %-30s | %s %s\n", wls[w].name, lw, cfgs[c].label, left,
				       right, target, verdict);
			}
		}
		printf("(patch: one list 427 / 245 = +74%%, split 259 / 244 = +6%%. Its one-list lines do not add up:\n"
		       " 410 heap pages are 1679360 bytes, allocated 932647 + unused 185242 only 1117889 (+20%% over\n"
		       " allocated); 561471 bytes, 137 pages, are neither. Its split lines do: 243 pages, 932079 + 62886.)\n\n");
	}

	/* ---- SLOB's breakdown ---- */
	bool any_bd = false;
	for (size_t i = 0; i < nres; i++)
		any_bd |= res[i].state == 1 && res[i].has_bd;
	if (any_bd) {
		printf("== Where SLOB's pages go: heap pages at the end, by free list (bytes) ==\n\n"
		       "A heap page's 4096 bytes are its live objects, kmalloc headers (%d bytes each), rounding\n"
		       "(blocks to 2-byte units, kmalloc blocks to 16 bytes) and free bytes, in holes (free blocks),\n"
		       "here by hole size; blocks: live blocks; sparse: pages under %lu live bytes, and their free\n"
		       "bytes; full: pages off every list. Packing: the data pages' own rounding up.\n\n",
		       SLOB_MINALIGN, BD_SPARSE);
		for (int w = 0; w < nwl; w++)
			for (int c = 0; c < ncfg; c++)
				if (on[c] && is_slob(&cfgs[c]) && RES(w, c)->state == 1 && RES(w, c)->has_bd) {
					print_breakdown(&wls[w], &cfgs[c], RES(w, c));
					printf("\n");
				}
	}

	/* ---- Enberg's table ---- */
	printf("== Enberg's table: slab pages against the live objects' pages ==\n\n");
	printf("slab pages: what the slab layer holds above its state after boot (/proc/meminfo Slab's\n"
	       "counters, kmalloc's page-sized allocations included); data pages: the live objects' bytes\n"
	       "below a page, packed, plus whole pages for the larger ones. Peak: the most slab pages at any\n"
	       "point, against the most data pages at any point.\n\n");
	printf("%-14s | %-*s | %9s | %9s | %8s | %9s | %9s | %8s | %8s\n", "workload", lw, "allocator",
	       "pages end", "data end", "overhead", "pages max", "data max", "overhead", "cpu ms");
	for (int w = 0; w < nwl; w++) {
		unsigned long small, big, psmall, pbig;
		trace_live(&wls[w].t, &small, &big, &psmall, &pbig);
		unsigned long de = data_pages(small, big), dpk = data_pages(psmall, pbig);
		for (int c = 0; c < ncfg; c++) {
			if (!on[c])
				continue;
			const struct mem_result *r = RES(w, c);
			if (r->state != 1) {
				printf("%-14s | %-*s | %9s |\n", wls[w].name, lw, cfgs[c].label,
				       r->state == -1 ? "n/a" : "FAILED");
				continue;
			}
			printf("%-14s | %-*s | %9ld | %9lu | %8s | %9ld | %9lu | %8s | %8.1f\n", wls[w].name, lw,
			       cfgs[c].label, r->pages_end, de, pct(b1, r->pages_end, de), r->pages_peak, dpk,
			       pct(b2, r->pages_peak, dpk), r->cpu_ms);
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
		for (int c = 0; c < ncfg; c++) {
			const struct mem_result *r = RES(w, c);
			if (!on[c])
				continue;
			unsigned long small, big, psmall, pbig;
			trace_live(&wls[w].t, &small, &big, &psmall, &pbig);
			printf("RESULT wl=%s alloc=%s state=%s pages_base=%ld pages_end=%ld pages_peak=%ld "
			       "data_end=%lu data_peak=%lu live_end=%lu live_peak=%lu allocs=%lu frees=%lu "
			       "failed=%lu slab_kb=%ld\n",
			       wls[w].key, cfgs[c].key, r->state == 1 ? "ok" : r->state == -1 ? "n/a" : "failed",
			       r->pages_base, r->pages_end, r->pages_peak, data_pages(small, big),
			       data_pages(psmall, pbig), r->live_end, r->live_peak, r->allocs, r->frees, r->failed,
			       r->meminfo_slab_kb);
			if (r->state == 1 && r->has_bd)
				print_breakdown_lines(&wls[w], &cfgs[c], r);
		}
	for (int w = 0; w < nwl; w++)
		pt_free(&wls[w].t);
	for (int i = 0; i < 2; i++)
		bw_free(&bw[i]);
	munmap(res, sizeof(*res) * nres);
	return 0;
}
