/* SPDX-License-Identifier: MIT */
/*
 * malloc's size classes up to KMALLOC_MAX_CACHE_SIZE and a little beyond (see
 * MALLOC_MAX_CLASS_SIZE): every 16 B up to 128, then eight per doubling to
 * 4 KiB, then the sizes that fill a 128 KiB slab k times, less those no
 * cheaper in slab than a larger one (size_class.c).  kmalloc's own
 * buckets are powers of two (plus 96 and 192), which rounds a 300-byte
 * request up to 512: fine for the kernel's callers, who size their
 * structures to fit, but 1.3x the memory for a program whose sizes are
 * spread evenly.  Classes that
 * are kmalloc buckets use the kmalloc cache; the others get a cache of their
 * own, "malloc-<size>", in /proc/slabinfo beside them.
 */
#ifndef KMEM_MALLOC_SIZE_CLASS_H
#define KMEM_MALLOC_SIZE_CLASS_H

#include <stddef.h>
#include <stdint.h>

#include "slab/slab.h"

/*
 * Classes may go past kmalloc's caches, up to 16 KiB: from 8 KiB a block
 * is otherwise a whole buddy block (16 KiB for 8193 bytes), and a class is
 * made where its slab costs less than the block's pages the size covers
 * (8736, 9360, 10080, 10912, 11904, 13104 and 14560, in 128 KiB slabs).  Sizes with
 * no such class have no entry (NULL): the page allocator.
 */
#define MALLOC_MAX_CLASS_SIZE	(2 * KMALLOC_MAX_CACHE_SIZE)

/*
 * Indexed by (size + 15) >> 4 for 1 <= size <= MALLOC_MAX_CLASS_SIZE: one
 * table for every size, so the fast path has one compare (the size range)
 * and no branch between a fine and a coarse table.  Every class is a
 * multiple of 16, so all the sizes of an entry share its class.  NULL
 * until set up, and above KMALLOC_MAX_CACHE_SIZE where no class pays.
 */
#define MALLOC_NR_CLASS_ENTRIES	(MALLOC_MAX_CLASS_SIZE / 16 + 1)
extern struct kmem_cache *malloc_class[MALLOC_NR_CLASS_ENTRIES];

/*
 * The same, as the byte offset of the cache's slot in struct slub_thread
 * (slab_slot_offset(); 0, slot 0's, before set-up): malloc's fast path
 * goes from the size straight to the thread's slot, one load instead of
 * two (the cache, then its index), and no shift (an offset needs 20 bits).
 */
extern uint32_t malloc_slot[MALLOC_NR_CLASS_ENTRIES];

static inline uint32_t malloc_class_slot(size_t size)
{
	return __atomic_load_n(&malloc_slot[(size + 15) >> 4], __ATOMIC_RELAXED);
}

/* The cache for 1 <= @size <= MALLOC_MAX_CLASS_SIZE, or NULL (before set-up; no class). */
static inline struct kmem_cache *malloc_class_cache(size_t size)
{
	return __atomic_load_n(&malloc_class[(size + 15) >> 4], __ATOMIC_RELAXED);
}

/* Create the caches and fill the tables (once, after boot); 0 or -errno. */
int malloc_classes_init(void);
/* kmem_cache_shrink() every class cache that is not a kmalloc one. */
void malloc_classes_shrink(void);
void malloc_classes_fork_prepare(void);
void malloc_classes_fork_parent(void);
void malloc_classes_fork_child(void);

#endif /* KMEM_MALLOC_SIZE_CLASS_H */
