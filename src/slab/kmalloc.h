/* SPDX-License-Identifier: MIT */
/*
 * kmalloc's fast paths, inline so that kmalloc() and the malloc front-end
 * both get them without a call: a table lookup to the bucket's cache, then
 * the back-end's inline allocation.
 */
#ifndef KMEM_KMALLOC_H
#define KMEM_KMALLOC_H

#include "slab/slab.h"
#include "slab/slub.h"

/* Everything that is not a kmalloc-cache hit: size 0, large, not booted yet. */
void *__kmalloc_slow(size_t size, gfp_t gfp);
/* kfree() of a pointer whose head page is not a slab (large kmalloc, bad input). */
void __kfree_slow(const void *p, struct page *head, const char *func);

/* kmalloc's @bucket-byte cache (a power of two, aligned to it) for @size bytes. */
static __attribute__((always_inline)) inline void *kmalloc_bucket(size_t bucket, size_t size, gfp_t gfp)
{
	struct kmem_cache *s = kmalloc_caches[kmalloc_slab_index(bucket)];

	if (likely(s))
		return slub_alloc_size(s, gfp, size);
	return __kmalloc_slow(bucket, gfp);
}

static __attribute__((always_inline)) inline void *kmalloc_inline(size_t size, gfp_t gfp)
{
	/* size - 1 wraps for 0, so one compare covers 1..KMALLOC_MAX_CACHE_SIZE. */
	if (likely(size - 1 < KMALLOC_MAX_CACHE_SIZE)) {
		struct kmem_cache *s = kmalloc_caches[kmalloc_slab_index(size)];
		if (likely(s))
			return slub_alloc_size(s, gfp, size);
	}
	return __kmalloc_slow(size, gfp);
}

/* The struct page of @x if kmem manages that address, else NULL (no compound_head). */
static inline struct page *virt_to_page_checked(const void *x)
{
	uintptr_t off = (uintptr_t)x - (uintptr_t)mm_model.base;

	if (unlikely((off >> PAGE_SHIFT) >= mm_online_pages()))
		return NULL;
	struct page *page = mm_model.mem_map + (off >> PAGE_SHIFT);
	/* The callers test for NULL: an online page is never at 0, so no second test. */
	if (!page)
		__builtin_unreachable();
	return page;
}

/* kfree() of a pointer that is not NULL or ZERO_SIZE_PTR. */
static __attribute__((always_inline)) inline void kfree_inline(const void *p, const char *func)
{
	if (likely(slub_free_ptr((void *)p)))
		return;
	struct page *page = virt_to_page_checked(p);

	__kfree_slow(p, page ? compound_head(page) : NULL, func);
}

/*
 * Usable size of a kmalloc'ed pointer, 0 if kmem did not allocate it;
 * *slabp gets its slab (NULL for a large kmalloc).  One page lookup.
 */
static inline size_t kmalloc_usable_size_slab(const void *p, struct slab **slabp)
{
	struct page *head = virt_to_head_page_checked(p);

	*slabp = NULL;
	if (head && PageSlab(head)) {
		*slabp = page_slab(head);
		return slub_ksize((*slabp)->slab_cache);
	}
	if (head && PageLargeKmalloc(head))
		return PAGE_SIZE << compound_order(head);
	return 0;
}

/*
 * Is @p, which kmalloc_usable_size_slab() found in @slab (NULL: a large
 * kmalloc), the start of its block?  False for a pointer into the middle
 * of one, whose size is then not the bytes from @p on.
 */
static inline bool kmalloc_block_start(const void *p, struct slab *slab)
{
	if (slab)
		return slab_obj_valid(slab->slab_cache, slab, p);
	return p == __page_address(virt_to_head_page_checked(p));
}

/* Report @func(@p) of a pointer into the middle of a kmalloc block (@slab: NULL for a large one). */
void kmalloc_report_interior(const char *func, const void *p, struct slab *slab);

/* The same, with the slab's cache in *sp. */
static inline size_t kmalloc_usable_size_cache(const void *p, struct kmem_cache **sp)
{
	struct slab *slab;
	size_t n = kmalloc_usable_size_slab(p, &slab);

	*sp = slab ? slab->slab_cache : NULL;
	return n;
}

/*
 * @p, an object of @s (from kmalloc_usable_size_cache(); NULL: not a slab
 * object), now holds @size bytes in place (0: the caller may use the whole
 * slot; @zero: the grown part zeroed): its kmalloc red zone, if its cache
 * keeps one (slab_debug=UZ), follows.  A test of the flags otherwise.
 */
static inline void kmalloc_resize_in_place(struct kmem_cache *s, const void *p, size_t size, bool zero)
{
	/* Only SLAB_STORE_USER caches keep the size asked for. */
	if (s && unlikely(s->flags & SLAB_STORE_USER))
		slub_resize_object(s, (void *)p, size ? size : s->object_size, zero);
}

bool is_large_kmalloc(const void *p);

#endif /* KMEM_KMALLOC_H */
