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

/* The page-sized objects: a names_cache-like cache of 4096-byte buffers. */
#define BW_BIG_NAME	"names_cache"
#define BW_BIG_SIZE	4096u
#define BW_BIG_ALLOCS	48u
#define BW_BIG_FREES	31u
#define BW_BIG_LIFE	10u

/* kmallocs: 10,250, of which 4,800 freed (5,450 live). */
#define BW_KMALLOCS	10250u
#define BW_KMALLOC_FREES 4800u
#define BW_KMALLOC_LIFE	300u

#define BW_KMALLOC	0xffffu		/* bw_obj.cache of a kmalloc */
#define BW_BIG		0xfffeu		/* bw_obj.cache of a page-sized object */

struct bw_obj {
	uint32_t size;
	uint16_t cache;		/* index in bw_caches, or BW_KMALLOC / BW_BIG */
	uint8_t freed;
};

struct bw_op {
	uint32_t obj;
	uint32_t is_free;
};

struct bw_workload {
	struct bw_obj *obj;
	uint32_t nobj;
	struct bw_op *op;
	uint32_t nop;
	/* What the sequence does (bw_declare()). */
	unsigned long cache_allocs, cache_frees, cache_live, cache_live_bytes;
	unsigned long kmallocs, kmalloc_frees, kmalloc_live, kmalloc_bytes, kmalloc_live_bytes;
	unsigned long big_allocs, big_live;
	unsigned long live_bytes, peak_live_bytes, live_small_bytes;
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

/*
 * Boot-time kmalloc sizes.  The kmallocs that stay live are small
 * structures and names (8..192 bytes); the ones freed again are mostly
 * buffers of a few hundred bytes to 2 KiB that live briefly (firmware and
 * table parsing, I/O set-up), so that all of them average about 340 bytes,
 * as in the patch's statistics, while the live bytes stay near its 932 KB:
 * the pattern that fragments a single free list, small objects settling
 * into the pages the temporary buffers leave.
 */
static inline uint32_t bw_kmalloc_live_size(uint64_t *s)
{
	uint32_t r = bw_below(s, 1000);

	if (r < 600)
		return 8 + bw_below(s, 57);		/* 8..64 */
	if (r < 900)
		return 65 + bw_below(s, 64);		/* 65..128 */
	return 129 + bw_below(s, 64);			/* 129..192 */
}

static inline uint32_t bw_kmalloc_temp_size(uint64_t *s)
{
	uint32_t r = bw_below(s, 1000);

	if (r < 250)
		return 16 + bw_below(s, 241);		/* 16..256 */
	if (r < 600)
		return 257 + bw_below(s, 512);		/* 257..768 */
	if (r < 900)
		return 769 + bw_below(s, 256);		/* 769..1024 */
	return 1025 + bw_below(s, 1024);		/* 1025..2048 */
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
	}
	w->live_small_bytes = w->cache_live_bytes + w->kmalloc_live_bytes;
}

/* Build the workload of @seed into @w; 0, or -1 out of memory. */
static inline int bw_build(struct bw_workload *w, uint64_t seed)
{
	uint32_t n = BW_KMALLOCS + BW_BIG_ALLOCS, k = 0;
	uint64_t s = seed;

	memset(w, 0, sizeof(*w));
	for (int c = 0; c < BW_NR_CACHES; c++)
		n += bw_caches[c].allocs;
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
	for (int c = 0; c < BW_NR_CACHES; c++)
		for (uint32_t j = 0; j < bw_caches[c].allocs; j++, k++)
			w->obj[k] = (struct bw_obj){ bw_caches[c].size, (uint16_t)c, j < bw_caches[c].frees };
	for (uint32_t j = 0; j < BW_KMALLOCS; j++, k++)
		w->obj[k] = j < BW_KMALLOC_FREES ? (struct bw_obj){ bw_kmalloc_temp_size(&s), BW_KMALLOC, 1 }
						 : (struct bw_obj){ bw_kmalloc_live_size(&s), BW_KMALLOC, 0 };
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
		uint32_t mean = o->cache == BW_KMALLOC ? BW_KMALLOC_LIFE
				: o->cache == BW_BIG    ? BW_BIG_LIFE
							: bw_caches[o->cache].life;
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
