/* SPDX-License-Identifier: MIT */
/*
 * Object caches and kmalloc, with the kernel's names and semantics
 * (include/linux/slab.h).  The back-end (SLUB, later SLAB and SLOB) is chosen
 * at boot with slab=; the API is the same for all of them.
 */
#ifndef KMEM_SLAB_H
#define KMEM_SLAB_H

#include <stddef.h>
#include <kmem/compiler.h>
#include <kmem/gfp.h>
#include <kmem/slab_flags.h>

KMEM_BEGIN_DECLS

struct kmem_cache;

/* kmalloc(0) returns this distinct, non-NULL, never-dereferenceable pointer. */
#define ZERO_SIZE_PTR		((void *)16)
#define ZERO_OR_NULL_PTR(x)	((unsigned long)(x) <= (unsigned long)ZERO_SIZE_PTR)

#define KMALLOC_MAX_CACHE_SIZE_BYTES	8192UL		/* larger goes to the page allocator */
#define KMALLOC_MAX_SIZE_BYTES		(4UL << 20)	/* 2^(MAX_PAGE_ORDER + PAGE_SHIFT) */

/*
 * NULL, with a message on stderr, for a bad name (empty, '/', blanks, too
 * long), size 0 or over KMALLOC_MAX_SIZE_BYTES, an alignment that is not a
 * power of two, a flag <kmem/slab_flags.h> does not define, or a
 * /sys/kernel/slab name already taken (SLAB_PANIC: abort instead).
 */
KMEM_API struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
					      unsigned int align, slab_flags_t flags,
					      void (*ctor)(void *));
KMEM_API void kmem_cache_destroy(struct kmem_cache *s);
KMEM_API void *kmem_cache_alloc(struct kmem_cache *s, gfp_t gfp);
KMEM_API void *kmem_cache_zalloc(struct kmem_cache *s, gfp_t gfp);
KMEM_API void kmem_cache_free(struct kmem_cache *s, void *obj);
/* All or nothing: returns @size with every p[i] set, or 0 with nothing allocated. */
KMEM_API int kmem_cache_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t size, void **p);
/* With s == NULL the objects may come from any caches and kmalloc. */
KMEM_API void kmem_cache_free_bulk(struct kmem_cache *s, size_t size, void **p);
KMEM_API int kmem_cache_shrink(struct kmem_cache *s);
KMEM_API unsigned int kmem_cache_size(struct kmem_cache *s);
KMEM_API const char *kmem_cache_name(struct kmem_cache *s);

KMEM_API void *kmalloc(size_t size, gfp_t gfp);
KMEM_API void *kzalloc(size_t size, gfp_t gfp);
KMEM_API void *kmalloc_array(size_t n, size_t size, gfp_t gfp);
KMEM_API void *kcalloc(size_t n, size_t size, gfp_t gfp);
KMEM_API void *krealloc(const void *p, size_t new_size, gfp_t gfp);
KMEM_API void kfree(const void *p);
KMEM_API void kfree_bulk(size_t size, void **p);
KMEM_API size_t ksize(const void *p);
KMEM_API size_t kmalloc_size_roundup(size_t size);
KMEM_API char *kstrdup(const char *s, gfp_t gfp);
KMEM_API void *kmemdup(const void *src, size_t len, gfp_t gfp);

KMEM_END_DECLS

#endif /* KMEM_SLAB_H */
