/* SPDX-License-Identifier: MIT */
/*
 * The fast paths every kmem_cache_alloc(), kfree() and malloc() tries
 * inline: the thread's per-CPU object cache.  Today that is SLUB's sheaves
 * and cpu slab (slab/slub/slub.h); a back-end that keeps nothing there
 * (SLAB, SLOB in this version) gives its caches slot 0 and leaves its slab
 * pages' page-map words 0, so every attempt misses and the miss path calls
 * the chosen back-end through slab_ops (slab/backend.h).  That call is the
 * one SLUB's miss path made anyway, so choosing a back-end at boot costs
 * SLUB's hit paths nothing.
 *
 * This is the one core header that includes a back-end's: the fast path is
 * the part of SLUB that a per-CPU (rseq) layer shared by every back-end
 * would replace.
 */
#ifndef KMEM_SLAB_FASTPATH_H
#define KMEM_SLAB_FASTPATH_H

#include "slab/slab.h"
#include "slab/slub/slub.h"

/* The caller of the function the fast path is inlined into (kernel _RET_IP_). */
#ifndef _RET_IP_
#define _RET_IP_	((unsigned long)__builtin_return_address(0))
#endif

/* One object of @s from this thread's cache, NULL on a miss. */
static __attribute__((always_inline)) inline void *slab_alloc_fast(struct kmem_cache *s, gfp_t gfp)
{
	return slub_alloc_fast(s, gfp);
}

/* The same through a slot offset (slab_slot_of()): malloc's size-class table. */
static __attribute__((always_inline)) inline void *slab_alloc_fast_slot(uint32_t slot, gfp_t gfp)
{
	return slub_alloc_slot(slub_slot(slub_this, slot), gfp);
}

/* The slot offset of @s for slab_alloc_fast_slot(): 0 (always empty) when the back-end keeps none. */
static inline uint32_t slab_slot_of(const struct kmem_cache *s)
{
	return slab_slot_offset(s->index);
}

/*
 * kmem_cache_alloc(): the fast path, then the back-end (@orig_size: a
 * kmalloc's request, or 0).  The caller's address is read on the miss only
 * (an argument would be read before the fast path, and kept in a register
 * across it: three instructions on every kmalloc).
 */
static __attribute__((always_inline)) inline void *slab_alloc(struct kmem_cache *s, gfp_t gfp,
							      unsigned int orig_size)
{
	void *object = slab_alloc_fast(s, gfp);

	return likely(object) ? object : slab_ops.alloc(s, gfp, _RET_IP_, orig_size);
}

/* kmem_cache_free(@s, @x), @x not NULL. */
static __attribute__((always_inline)) inline void slab_free(struct kmem_cache *s, void *x)
{
	slub_free(s, NULL, x);
}

/*
 * kfree() and free() of any pointer @x: true if done, false if @x is in no
 * page the fast path knows (NULL included), for the caller's slow path.
 */
static __attribute__((always_inline)) inline bool slab_free_ptr(void *x)
{
	return slub_free_ptr(x);
}

#endif /* KMEM_SLAB_FASTPATH_H */
