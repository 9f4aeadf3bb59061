/* SPDX-License-Identifier: MIT */
/*
 * kmalloc's fast paths, inline so that kmalloc() and the malloc front-end
 * both get them without a call: a table lookup to the bucket's cache, then
 * the inline fast path (fastpath.h).  A back-end with a kmalloc of its own
 * (SLOB) has no kmalloc caches: every size takes __kmalloc_slow().
 */
#ifndef KMEM_KMALLOC_H
#define KMEM_KMALLOC_H

#include "slab/fastpath.h"
#include "slab/slab.h"

/* Everything that is not a kmalloc-cache hit: size 0, large, not booted yet. */
void *__kmalloc_slow(size_t size, gfp_t gfp);
/* kfree() of a pointer whose head page is not a slab (large kmalloc, bad input). */
void __kfree_slow(const void *p, struct page *head, const char *func, unsigned long caller);

/* kmalloc's @bucket-byte cache (a power of two, aligned to it) for @size bytes. */
static __attribute__((always_inline)) inline void *kmalloc_bucket(size_t bucket, size_t size, gfp_t gfp)
{
	struct kmem_cache *s = kmalloc_caches[kmalloc_slab_index(bucket)];

	if (likely(s))
		return slab_alloc(s, gfp, (unsigned int)size);
	return __kmalloc_slow(bucket, gfp);
}

static __attribute__((always_inline)) inline void *kmalloc_inline(size_t size, gfp_t gfp)
{
	/* size - 1 wraps for 0, so one compare covers 1..KMALLOC_MAX_CACHE_SIZE. */
	if (likely(size - 1 < KMALLOC_MAX_CACHE_SIZE)) {
		struct kmem_cache *s = kmalloc_caches[kmalloc_slab_index(size)];
		if (likely(s))
			return slab_alloc(s, gfp, (unsigned int)size);
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
	if (likely(slab_free_ptr((void *)p)))
		return;
	struct page *page = virt_to_page_checked(p);

	__kfree_slow(p, page ? compound_head(page) : NULL, func, _RET_IP_);
}

/*
 * What kmalloc (or a cache) made at @p: its usable size from the block's
 * start, 0 if kmem did not allocate it; *@o the block (o->cache NULL for a
 * large kmalloc or a SLOB kmalloc block, o->start NULL where @p lies in
 * no block of its slab page).  One page lookup, and one call to the
 * back-end for a slab page.
 */
static inline size_t kmalloc_obj(const void *p, struct kmem_obj *o)
{
	struct page *head = virt_to_head_page_checked(p);

	*o = (struct kmem_obj){ 0 };
	if (head && PageSlab(head)) {
		slab_ops.obj_info(head, p, o);
		return o->size;
	}
	if (head && PageLargeKmalloc(head)) {
		o->start = __page_address(head);
		o->size = PAGE_SIZE << compound_order(head);
		return o->size;
	}
	return 0;
}

/* Report @func(@p) of a pointer into the middle of block @o (kmalloc_obj()). */
void kmalloc_report_interior(const char *func, const void *p, const struct kmem_obj *o);

/*
 * @o (from kmalloc_obj()) now holds @size bytes in place (0: the caller may
 * use the whole block; @zero: the grown part zeroed): its kmalloc red zone,
 * if its cache keeps one (slab_debug=UZ), follows.  A test of the flags
 * otherwise.
 */
static inline void kmalloc_resize_in_place(const struct kmem_obj *o, size_t size, bool zero)
{
	struct kmem_cache *s = o->cache;

	/* Only SLAB_STORE_USER caches keep the size asked for. */
	if (s && unlikely(s->flags & SLAB_STORE_USER) && slab_ops.obj_resize)
		slab_ops.obj_resize(s, o->start, size ? size : s->object_size, zero);
}

bool is_large_kmalloc(const void *p);

#endif /* KMEM_KMALLOC_H */
