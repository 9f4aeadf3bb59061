/* SPDX-License-Identifier: MIT */
/*
 * A boot-like slab workload with the statistics of Mackall's SLOB split
 * free lists patch (2008): after a boot to a shell his SLOB had done about
 * 22,500 cache allocations and 12,100 frees (10,400 objects live, about 90
 * bytes each), about 10,250 kmallocs of which 5,450 were live (3.48 MB
 * requested in all, 340 bytes on average) and a few page-sized allocations
 * (827 done, 17 live).
 *
 * The workload is a fixed list of operations drawn from a seeded PRNG
 * (splitmix64), so every allocator replays exactly the same sequence and
 * its counts are known in advance (bw_declare()): the caches below with
 * their allocation and free counts, kmallocs of a boot-like size mix, and
 * page-sized objects of a names_cache-like cache.  Objects are allocated
 * in a random interleaving; the ones that die are freed a random number of
 * allocations later (exponential, a mean per kind: file and VMA objects
 * die young, dentries and inodes late).  Whatever is still to be freed when
 * the allocations end is freed then, so the end state is exactly the
 * declared live set.
 *
 * Two readings of the patch's statistics, two workloads (struct bw_spec):
 *
 *  - bw_spec_boot ("boot"): the slob line's 22,528 allocations and 10,419
 *    active objects read as cache objects alone, the kmallocs on top:
 *    22,500 cache allocations, 10,400 live cache objects, 5,450 live
 *    kmallocs (1.4 times the patch's live bytes).
 *  - bw_spec_patch ("boot12k"): the slob line counting every block of the
 *    heap, kmallocs included (its "allocated 932647" is all live bytes,
 *    and 932,647 / 10,419 is the "average SLOB allocation of ~90 bytes"
 *    the patch names): 22,528 - 10,247 = 12,281 cache allocations, 12,109 -
 *    4,797 = 7,312 frees, 10,419 - 5,450 = 4,969 live cache objects, and
 *    about 932 KB live in all.  Its size mix follows the patch's split run:
 *    the big list (blocks over 300 bytes, which only big requests create
 *    and fill) held 129 pages less 23,264 unused bytes, 505 KB, over half
 *    the live bytes; so one live kmalloc in twenty (about 270) is a
 *    buffer of 301 bytes to 1 KiB and inodes are a larger share of the
 *    caches: 39% of the live bytes are in objects over 300 bytes (more
 *    does not fit 932 KB with 64-bit object sizes and these counts).
 *
 * Header only: built into bench_slab_mem and nothing else.
 */
#ifndef KMEM_BOOT_WORKLOAD_H
#define KMEM_BOOT_WORKLOAD_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bw_cache {
	const char *name;
	unsigned int size;	/* object size, bytes */
	unsigned int allocs;	/* objects allocated */
	unsigned int frees;	/* of them freed */
	unsigned int life;	/* mean life of a freed object, in allocations */
};

/* A size mix: up to permille (cumulative) of the draws are lo..lo+n-1 bytes. */
struct bw_range {
	uint16_t permille;
	uint32_t lo, n;
};

struct bw_spec {
	const char *key;		/* for -w and the RESULT lines */
	const char *label;
	const struct bw_cache *caches;
	int ncaches;
	unsigned int kmallocs, kmalloc_frees, kmalloc_life;
	const struct bw_range *live_mix, *temp_mix;	/* sizes of live and freed kmallocs */
};

/*
 * Boot-time caches of a small 2.6.24 machine, with sizes of the time on
 * 64-bit.  Totals: 22,500 allocations, 12,100 frees, 10,400 live objects
 * of 90.4 bytes on average.
 */
static const struct bw_cache bw_caches[] = {
	{ "sysfs_dir_cache", 64, 6100, 350, 400 },
	{ "dentry", 136, 3300, 1450, 3000 },
	{ "inode_cache", 344, 520, 220, 3000 },
	{ "buffer_head", 56, 2700, 1300, 1500 },
	{ "vm_area_struct", 88, 3780, 3480, 40 },
	{ "anon_vma", 24, 1200, 1100, 60 },
	{ "filp", 128, 2400, 2300, 20 },
	{ "idr_layer", 136, 200, 0, 0 },
	{ "pid", 64, 1900, 1700, 80 },
	{ "radix_tree_node", 288, 400, 200, 2000 },
};
#define BW_NR_CACHES	((int)(sizeof(bw_caches) / sizeof(bw_caches[0])))

/*
 * The same caches with the counts of the second reading: 12,280
 * allocations, 7,310 frees, 4,970 live objects of 111 bytes on average
 * (more inodes: with the live kmallocs' buffers they fill the big list).
 */
static const struct bw_cache bw_caches_patch[] = {
	{ "sysfs_dir_cache", 64, 3220, 150, 400 },
	{ "dentry", 136, 1600, 900, 3000 },
	{ "inode_cache", 344, 620, 120, 3000 },
	{ "buffer_head", 56, 600, 450, 1500 },
	{ "vm_area_struct", 88, 2340, 2180, 40 },
	{ "anon_vma", 24, 800, 760, 60 },
	{ "filp", 128, 1500, 1450, 20 },
	{ "idr_layer", 136, 100, 0, 0 },
	{ "pid", 64, 1200, 1150, 80 },
	{ "radix_tree_node", 288, 300, 150, 2000 },
};

/* The page-sized objects: a names_cache-like cache of 4096-byte buffers. */
#define BW_BIG_NAME	"names_cache"
#define BW_BIG_SIZE	4096u
#define BW_BIG_ALLOCS	48u
#define BW_BIG_FREES	31u
#define BW_BIG_LIFE	10u

/*
 * Boot-time kmalloc sizes.  The kmallocs that stay live are small
 * structures and names (8..192 bytes); the ones freed again are mostly
 * buffers of a few hundred bytes to 2 KiB that live briefly (firmware and
 * table parsing, I/O set-up), so that all of them average about 340 bytes,
 * as in the patch's statistics, while the live bytes stay near its 932 KB:
 * the pattern that fragments a single free list, small objects settling
 * into the pages the temporary buffers leave.
 */
static const struct bw_range bw_live_mix[] = {
	{ 600, 8, 57 },		/* 8..64 */
	{ 900, 65, 64 },	/* 65..128 */
	{ 1000, 129, 64 },	/* 129..192 */
};
static const struct bw_range bw_temp_mix[] = {
	{ 250, 16, 241 },	/* 16..256 */
	{ 600, 257, 512 },	/* 257..768 */
	{ 900, 769, 256 },	/* 769..1024 */
	{ 1000, 1025, 1024 },	/* 1025..2048 */
};
/*
 * The temporary buffers with the sizes a real kernel gives them (-K): in the
 * Linux 6.18 capture (bench/data/), the kmallocs of 257 bytes to 2 KiB come
 * in 13 sizes, each from one call site (312 alloc_slab_obj_exts, 288
 * alloc_empty_sheaf, 2048 alloc_fdtable, 408 alloc_bprm, 504, 728, 784 and
 * 616 load_elf_phdrs, 640 alloc_pipe_info, 512), weighted as there; the
 * quarter below 257 bytes as in bw_temp_mix.  Averages 640 bytes, as
 * bw_temp_mix's 636.
 */
static const struct bw_range bw_temp_mix_trace[] = {
	{ 250, 16, 241 },
	{ 450, 312, 1 },
	{ 556, 288, 1 },
	{ 655, 2048, 1 },
	{ 750, 408, 1 },
	{ 845, 504, 1 },
	{ 910, 728, 1 },
	{ 963, 640, 1 },
	{ 986, 784, 1 },
	{ 994, 616, 1 },
	{ 1000, 512, 1 },
};

/*
 * The second reading's live kmallocs: smaller structures and names, and
 * one in twenty a buffer of 301 bytes to 1 KiB that stays (the patch's
 * big list held 505 KB of live blocks over 300 bytes).
 */
static const struct bw_range bw_live_mix_patch[] = {
	{ 650, 8, 33 },		/* 8..40 */
	{ 950, 41, 40 },	/* 41..80 */
	{ 1000, 301, 724 },	/* 301..1024 */
};

/* The first reading: 22,500 cache allocations; 10,250 kmallocs, 4,800 freed (5,450 live). */
static const struct bw_spec bw_spec_boot = {
	"boot", "boot-like", bw_caches, BW_NR_CACHES, 10250, 4800, 300, bw_live_mix, bw_temp_mix,
};
/* The second reading: 12,280 cache allocations; the same kmallocs, live ones as above. */
static const struct bw_spec bw_spec_patch = {
	"boot12k", "boot-like, 12k", bw_caches_patch, (int)(sizeof(bw_caches_patch) / sizeof(bw_caches_patch[0])),
	10250, 4800, 300, bw_live_mix_patch, bw_temp_mix,
};

#define BW_KMALLOC	0xffffu		/* bw_obj.cache of a kmalloc */
#define BW_BIG		0xfffeu		/* bw_obj.cache of a page-sized object */

struct bw_obj {
	uint32_t size;
	uint16_t cache;		/* index in the spec's caches, or BW_KMALLOC / BW_BIG */
	uint8_t freed;
};

struct bw_op {
	uint32_t obj;
	uint32_t is_free;
};

struct bw_workload {
	const struct bw_spec *spec;
	struct bw_obj *obj;
	uint32_t nobj;
	struct bw_op *op;
	uint32_t nop;
	/* What the sequence does (bw_declare()). */
	unsigned long cache_allocs, cache_frees, cache_live, cache_live_bytes;
	unsigned long kmallocs, kmalloc_frees, kmalloc_live, kmalloc_bytes, kmalloc_live_bytes;
	unsigned long big_allocs, big_live;
	unsigned long live_bytes, peak_live_bytes, live_small_bytes;
	unsigned long live_over300;	/* live bytes of objects over 300 bytes (below a page) */
	uint64_t digest;	/* of the operations, sizes and kinds (FNV-1a) */
};

static inline uint64_t bw_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n). */
static inline uint32_t bw_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)((bw_next(s) >> 32) * n >> 32);
}

/* Exponential of mean @mean, at least 1. */
static inline uint32_t bw_exp(uint64_t *s, uint32_t mean)
{
	double u = ((double)(bw_next(s) >> 11) + 0.5) / 9007199254740992.0;
	double v = -log(u) * mean;

	return v < 1 ? 1 : v > 4e9 ? 4000000000u : (uint32_t)v;
}

/* A size drawn from @mix (the same draws as the fixed mixes this replaced). */
static inline uint32_t bw_size(uint64_t *s, const struct bw_range *mix)
{
	uint32_t r = bw_below(s, 1000);

	while (r >= mix->permille)
		mix++;
	return mix->lo + bw_below(s, mix->n);
}

struct bw_event {
	uint64_t key;		/* 2 * step (+1 for the allocation) */
	uint32_t obj, is_free;
};

static inline int bw_event_cmp(const void *a, const void *b)
{
	const struct bw_event *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->obj < y->obj ? -1 : x->obj > y->obj;
}

static inline void bw_free(struct bw_workload *w)
{
	free(w->obj);
	free(w->op);
	memset(w, 0, sizeof(*w));
}

/* Count what the sequence does, its live bytes at the end and at the peak. */
static inline void bw_declare(struct bw_workload *w)
{
	unsigned long live = 0;
	uint64_t h = 0xcbf29ce484222325ull;

	w->peak_live_bytes = 0;
	for (uint32_t i = 0; i < w->nop; i++) {
		const struct bw_obj *o = &w->obj[w->op[i].obj];
		uint64_t v = (uint64_t)w->op[i].obj << 33 | (uint64_t)w->op[i].is_free << 32 |
			     (uint64_t)o->size << 16 | o->cache;

		for (int b = 0; b < 8; b++) {
			h ^= (v >> (8 * b)) & 0xff;
			h *= 0x100000001b3ull;
		}
		if (w->op[i].is_free) {
			live -= o->size;
			if (o->cache == BW_KMALLOC)
				w->kmalloc_frees++;
			else if (o->cache != BW_BIG)
				w->cache_frees++;
			continue;
		}
		live += o->size;
		if (live > w->peak_live_bytes)
			w->peak_live_bytes = live;
		if (o->cache == BW_KMALLOC) {
			w->kmallocs++;
			w->kmalloc_bytes += o->size;
		} else if (o->cache == BW_BIG) {
			w->big_allocs++;
		} else {
			w->cache_allocs++;
		}
	}
	w->digest = h;
	w->live_bytes = live;
	for (uint32_t i = 0; i < w->nobj; i++) {
		const struct bw_obj *o = &w->obj[i];
		if (o->freed)
			continue;
		if (o->cache == BW_KMALLOC) {
			w->kmalloc_live++;
			w->kmalloc_live_bytes += o->size;
		} else if (o->cache == BW_BIG) {
			w->big_live++;
		} else {
			w->cache_live++;
			w->cache_live_bytes += o->size;
		}
		if (o->cache != BW_BIG && o->size > 300)
			w->live_over300 += o->size;
	}
	w->live_small_bytes = w->cache_live_bytes + w->kmalloc_live_bytes;
}

/* Build the workload of @spec and @seed into @w; 0, or -1 out of memory. */
static inline int bw_build(struct bw_workload *w, const struct bw_spec *spec, uint64_t seed)
{
	const struct bw_cache *caches = spec->caches;
	uint32_t n = spec->kmallocs + BW_BIG_ALLOCS, k = 0;
	uint64_t s = seed;

	memset(w, 0, sizeof(*w));
	for (int c = 0; c < spec->ncaches; c++)
		n += caches[c].allocs;
	w->obj = calloc(n, sizeof(*w->obj));
	w->op = calloc(2 * (size_t)n, sizeof(*w->op));
	struct bw_event *ev = calloc(2 * (size_t)n, sizeof(*ev));
	uint32_t *life = calloc(n, sizeof(*life));
	if (!w->obj || !w->op || !ev || !life) {
		free(ev);
		free(life);
		bw_free(w);
		return -1;
	}
	w->spec = spec;
	for (int c = 0; c < spec->ncaches; c++)
		for (uint32_t j = 0; j < caches[c].allocs; j++, k++)
			w->obj[k] = (struct bw_obj){ caches[c].size, (uint16_t)c, j < caches[c].frees };
	for (uint32_t j = 0; j < spec->kmallocs; j++, k++)
		w->obj[k] = j < spec->kmalloc_frees ? (struct bw_obj){ bw_size(&s, spec->temp_mix), BW_KMALLOC, 1 }
						    : (struct bw_obj){ bw_size(&s, spec->live_mix), BW_KMALLOC, 0 };
	for (uint32_t j = 0; j < BW_BIG_ALLOCS; j++, k++)
		w->obj[k] = (struct bw_obj){ BW_BIG_SIZE, BW_BIG, j < BW_BIG_FREES };
	/* A random allocation order (Fisher-Yates). */
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = bw_below(&s, i + 1);
		struct bw_obj t = w->obj[i];
		w->obj[i] = w->obj[j];
		w->obj[j] = t;
	}
	uint32_t ne = 0;
	for (uint32_t t = 0; t < n; t++) {
		const struct bw_obj *o = &w->obj[t];
		ev[ne++] = (struct bw_event){ 2ull * t + 1, t, 0 };
		if (!o->freed)
			continue;
		uint32_t mean = o->cache == BW_KMALLOC ? spec->kmalloc_life
				: o->cache == BW_BIG    ? BW_BIG_LIFE
							: caches[o->cache].life;
		uint64_t at = (uint64_t)t + bw_exp(&s, mean);
		if (at > n)
			at = n;		/* still to be freed at the end: freed then */
		ev[ne++] = (struct bw_event){ 2 * at, t, 1 };
	}
	qsort(ev, ne, sizeof(*ev), bw_event_cmp);
	for (uint32_t i = 0; i < ne; i++)
		w->op[i] = (struct bw_op){ ev[i].obj, ev[i].is_free };
	w->nobj = n;
	w->nop = ne;
	free(ev);
	free(life);
	bw_declare(w);
	return 0;
}

#endif /* KMEM_BOOT_WORKLOAD_H */
