/* SPDX-License-Identifier: MIT */
/*
 * SLOB: the kernel's "simple list of blocks" allocator (mm/slob.c, removed
 * in Linux 6.4), for small machines.  Objects of every cache and every
 * kmalloc share order-0 pages; each page is a first-fit heap whose free
 * blocks are kept inside the free memory itself, address-ordered and
 * coalesced on free.  Partially free pages sit on one of up to three free
 * lists chosen by request size ("SLOB split free lists, Mackall 2008"):
 * a small request no longer fragments the pages a big one needs.
 *
 * Units.  Sizes inside a page are counted in slob_t units of SLOB_UNIT (2)
 * bytes, offsets too, so a 4 KiB page has 2048 units and every index fits
 * a signed 16-bit word.  A free block of more than one unit holds its size
 * and the offset of the next free block (from the page start) in its first
 * two units; a one-unit block holds only the next offset, negated (it has
 * room for one word, and a positive first word means "size").  The last
 * free block's "next" is the page end.
 *
 * slob_heap.c: the page heap and the free lists (slob_alloc/slob_free);
 * slob.c: caches, kmalloc and the back-end's hooks; slob_stats.c: the
 * statistics file (/sys/kernel/debug/slob/stats).
 */
#ifndef KMEM_SLOB_H
#define KMEM_SLOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "page_alloc/mm.h"

typedef int16_t slobidx_t;

typedef struct slob_block {
	slobidx_t units;
} slob_t;

#define SLOB_UNIT		sizeof(slob_t)
#define SLOB_UNITS(size)	(((size) + SLOB_UNIT - 1) / SLOB_UNIT)
#define SLOB_PAGE_UNITS		((int)SLOB_UNITS(PAGE_SIZE))

_Static_assert(SLOB_UNITS(PAGE_SIZE) <= INT16_MAX, "page offsets must fit slobidx_t");

/*
 * The kmalloc header in front of every kmalloc block: the kernel's
 * max(ARCH_KMALLOC_MINALIGN, ARCH_SLAB_MINALIGN), 8 bytes on x86-64.  kmem's
 * kmalloc also serves malloc(), which owes its callers 16-byte alignment
 * (x86-64's max_align_t, glibc's MALLOC_ALIGNMENT), and a block's payload
 * is aligned exactly as its header is long: so kmem's SLOB takes the
 * kernel's form with ARCH_KMALLOC_MINALIGN = 16, as on architectures whose
 * kmalloc alignment exceeds 8.  The header holds the size asked for and,
 * in its second word, a check of it bound to the block's address, so kfree
 * recognises a pointer that is not a block's start (the kernel read any
 * word there as a size).
 */
#define SLOB_MINALIGN		16
#define SLOB_HWCACHE_ALIGN	64	/* L1_CACHE_BYTES */

struct slob_kmalloc_hdr {
	unsigned long size;		/* bytes asked of kmalloc */
	unsigned long check;		/* slob_hdr_check(header, size) */
};
_Static_assert(sizeof(struct slob_kmalloc_hdr) == SLOB_MINALIGN, "header is the minimum alignment");

/* The free lists (slob.lists=): one, two (slob.break=), or three (256, 1024). */
enum slob_list_id { SLOB_LIST_SMALL, SLOB_LIST_MEDIUM, SLOB_LIST_LARGE, SLOB_NR_LISTS };
#define SLOB_BREAK1		256
#define SLOB_BREAK2		1024
#define SLOB_NO_LIST		0xff

/* What a PG_slab page of SLOB's holds. */
enum slob_page_kind {
	SLOB_PAGE_HEAP = 1,	/* a heap page of blocks */
	SLOB_PAGE_BIG,		/* one object or kmalloc of about a page or more (compound) */
};

/*
 * struct slob_page overlays struct page's words 1..6 on a SLOB page (the
 * kernel's struct slab for SLOB).  Word 1 is the cache for a single-cache
 * slab: a heap page holds objects of many caches, so it is NULL there.
 */
struct slob_page {
	unsigned long __page_flags;
	void *cache;			/* word 1: a big page's cache; NULL otherwise */
	struct list_head slab_list;	/* words 2-3: on a free list while partially free */
	slob_t *freelist;		/* word 4: first free block; NULL when full */
	int units;			/* word 5: free units (heap) */
	unsigned char list;		/* the free list it is on, or SLOB_NO_LIST */
	unsigned char kind;		/* enum slob_page_kind */
	unsigned long big_size;		/* word 6: a big allocation's bytes asked for */
};

_Static_assert(sizeof(struct slob_page) <= offsetof(struct page, _refcount),
	       "struct slob_page must not overlay _refcount");
_Static_assert(offsetof(struct slob_page, cache) == offsetof(struct page, __overlay),
	       "the cache must be word 1, as page_slab_cache() reads it");

static inline struct slob_page *page_slob(struct page *page) { return (struct slob_page *)page; }
static inline struct page *slob_page_page(struct slob_page *sp) { return (struct page *)sp; }
static inline char *slob_page_base(struct slob_page *sp) { return __page_address(slob_page_page(sp)); }

/* ---- the page heap (slob_heap.c) ---- */

/* One free block covering all of @page; flags it PG_slab, off every list. */
void slob_page_init(struct page *page);
/*
 * First fit in @sp for @size bytes, placed so that the block's address
 * plus @align_offset is a multiple of @align (0: unit aligned): NULL if no
 * free block fits.  sp->units drops by the block's units; the caller takes
 * a page that became full off its list.  *@scans counts the blocks looked at.
 */
void *slob_page_alloc(struct slob_page *sp, size_t size, size_t align, size_t align_offset,
		      unsigned long *scans);
/*
 * Give back @size bytes at @b to @sp's free blocks, in address order,
 * coalescing with its neighbours.  0, or with nothing changed (and no
 * report): -EALREADY if @b lies in a free block (a double free), -EINVAL
 * if the block is not inside the page or runs into a free block (freed
 * with another size than allocated), -EFAULT if the page's free blocks
 * are overwritten or would exceed the page.
 */
int slob_page_free(struct slob_page *sp, void *b, size_t size);
/*
 * Poison of the free blocks (slob_poison_heap, slob_heap.c): the same, with
 * every byte of a free block past its encoding kept SLOB_POISON_FREE.  The
 * free writes it over the block (and over the encoding of a block it
 * merges with), after checking the bodies of the blocks it merges with;
 * the allocation checks the bytes it hands out and those the encoding of
 * the free tail takes.  A byte found changed (a write after free) is
 * reported ("Poison overwritten") and restored; the heap goes on.
 */
#define SLOB_POISON_FREE	0x6b
extern bool slob_poison_heap;	/* set at boot when kmalloc's blocks are poisoned */
void *slob_page_alloc_poisoned(struct slob_page *sp, size_t size, size_t align, size_t align_offset,
			       unsigned long *scans);
int slob_page_free_poisoned(struct slob_page *sp, void *b, size_t size);
/* Poison the bodies of @sp's free blocks (a new page). */
void slob_page_poison(struct slob_page *sp);
/* @sp's free blocks whose bodies are not all poison (each described if @report); nothing restored. */
long slob_page_poison_faults(struct slob_page *sp, bool report);
/* Is [@b, @b + @size) free, wholly or in part? (no lock taken: the caller's) */
bool slob_page_overlaps_free(struct slob_page *sp, const void *b, size_t size);
/*
 * Check @sp's free blocks: address-ordered, inside the page, not
 * overlapping, coalesced (no two adjacent), their units adding up to
 * sp->units, freelist NULL exactly when no unit is free.  The number of
 * faults found; each is described on stderr if @report.
 */
long slob_page_validate(struct slob_page *sp, bool report);

/* ---- the free lists (slob_heap.c) ---- */

extern kmem_lock_t slob_lock;
extern unsigned int slob_nr_lists;	/* slob.lists */
extern unsigned int slob_break;		/* slob.break (two lists) */

/*
 * A heap block of @size bytes (@size < PAGE_SIZE, kmalloc header included)
 * from the list for its size, or a new page; NULL if no page.  @gfp's
 * __GFP_ZERO is the caller's.  Takes slob_lock.
 */
void *slob_alloc(size_t size, gfp_t gfp, size_t align, size_t align_offset);
/* Free a heap block: 0, or an error of slob_page_free() (reported by the caller). */
int slob_free(void *block, size_t size);
/*
 * The same on a heap whose free blocks are poisoned (slob_poison_heap).  A
 * page a free leaves wholly free is kept (the newest four), its poison
 * checked when it is used again or goes back to the page allocator.
 */
void *slob_alloc_poisoned(size_t size, gfp_t gfp, size_t align, size_t align_offset);
int slob_free_poisoned(void *block, size_t size);
/* Give the kept wholly free pages back to the page allocator (kmem_cache_shrink()); takes slob_lock. */
void slob_shrink(void);
/* The list a request of @size bytes (header included) searches. */
unsigned int slob_list_for(size_t size);
/*
 * slob_page_validate() every page on a list (takes slob_lock), and with
 * slob_poison_heap their free blocks' poison: the faults found.
 */
long slob_validate_all(bool report);
const char *slob_list_name(unsigned int list);
/*
 * Free blocks by size: bucket i counts the blocks of more than 8 << i and at
 * most 16 << i bytes (bucket 0 from 2 bytes, the last up to PAGE_SIZE).
 */
#define SLOB_HOLE_BUCKETS	9
_Static_assert((16 << (SLOB_HOLE_BUCKETS - 1)) == PAGE_SIZE, "the last bucket ends at the page size");

struct slob_list_figures {
	unsigned long pages;		/* on the list */
	unsigned long unused;		/* their free bytes */
	unsigned long biggest;		/* their biggest free block, bytes */
	unsigned long fragments;	/* their free blocks */
	unsigned long holes[SLOB_HOLE_BUCKETS];	/* those by size */
};

/* A list's figures now; slob_lock held. */
void slob_list_figures(unsigned int list, struct slob_list_figures *f);
/*
 * The sizes in bytes of @sp's free blocks in address order, the first @max
 * of them into @bytes; returns how many there are.  slob_lock held.  For
 * the memory benchmark's breakdown of a page (holes by size).
 */
int slob_page_free_blocks(struct slob_page *sp, unsigned int *bytes, int max);
void slob_fork_prepare(void);
void slob_fork_parent(void);
void slob_fork_child(void);

/* ---- statistics (the patch's counters, under slob_lock) ---- */

struct slob_stats {
	unsigned long pages;		/* heap pages now */
	unsigned long allocs, frees;	/* heap blocks since boot */
	unsigned long allocated;	/* bytes of live heap blocks, as asked of the heap (headers in) */
	unsigned long page_scans;	/* pages looked at by searches */
	unsigned long block_scans;	/* free blocks looked at by searches */
	unsigned long kmallocs, kmalloc_frees;	/* heap kmallocs since boot */
	unsigned long kmalloc_bytes;	/* bytes asked of those kmallocs, since boot */
	unsigned long kmalloc_overhead;	/* their headers and unit rounding, since boot */
	unsigned long bigpages;		/* page allocations (big objects, big kmallocs) since boot */
	unsigned long bigpages_active;	/* pages they hold now */
	struct {
		unsigned long searches;	/* heap allocations that searched the list */
		unsigned long page_scans, block_scans;	/* their share of the above */
		unsigned long new_pages;	/* searches that ended in a new page */
	} list[SLOB_NR_LISTS];
};
extern struct slob_stats slob_stats;

/* The patch's report; slob_lock taken.  Returns bytes rendered, as seq_finish(). */
struct seq_buf;
void slob_stats_show(struct seq_buf *m);

/* Pages accounting: vmstat and the stats (slob_heap.c, slob.c). */
void slob_account_pages(long pages, bool reclaimable);

#endif /* KMEM_SLOB_H */
