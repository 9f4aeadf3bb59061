/* SPDX-License-Identifier: MIT */
/*
 * The slab core: what every back-end shares (kernel mm/slab.h): struct
 * kmem_cache's common part, the cache list, the chosen back-end, and the
 * helpers of the core's own files.  The back-ends' contract is
 * slab/backend.h; each back-end's part of a cache is its own
 * (kmem_cache_priv()), and no back-end touches another's.
 */
#ifndef KMEM_SLAB_INTERNAL_H
#define KMEM_SLAB_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <kmem/slab.h>

#include "core/list.h"
#include "page_alloc/mm.h"
#include "slab/backend.h"
#include "slab/slab_layout.h"

#define KMEM_CACHE_NAME_MAX	64

enum slab_allocator_type { SLAB_ALLOCATOR_SLUB, SLAB_ALLOCATOR_SLAB, SLAB_ALLOCATOR_SLOB };
extern enum slab_allocator_type slab_allocator;

/*
 * A cache: the core's part, then the back-end's (kmem_cache_priv(),
 * slab_ops.cache_priv_size bytes).  The first line holds what SLUB's
 * inline fast paths read (fastpath.h); the core sets the common fields,
 * the back-end's cache_create() the geometry.
 */
struct kmem_cache {
	/* Read by every fast path: keep together. */
	unsigned int index;		/* the cache's per-thread slot (fastpath.h); 0: none, every call misses */
	unsigned int offset;		/* free pointer offset in the object, where the back-end keeps one */
	unsigned int size;		/* object stride in its slab: metadata and padding included */
	unsigned int object_size;	/* what the user asked for (max over aliases) */
	unsigned long random;		/* freelist hardening key, 0 when off */
	uint64_t div_magic;		/* div_magic(size): is an offset a multiple of size? */
	slab_flags_t flags;
	unsigned int inuse;
	unsigned int align;
	unsigned int red_left_pad;
	/*
	 * Where a freed object holds the free key (the double-free check,
	 * slab/slub/slub.h): 0, or the free pointer's offset where the object's
	 * bytes stay meaningful while free (ctor, SLAB_TYPESAFE_BY_RCU) or an
	 * object has no other word.  Read by the free fast path.
	 */
	unsigned int free_key_off;
	uintptr_t free_key;		/* the process's free key (slub.h), here to be one load away */
	void (*ctor)(void *);

	unsigned char order_cap;	/* kmem_cache_create_order()'s, if its slabs are past slab_max_order; else 0 */
	bool small_first;		/* young, its slabs grow from its minimum order (kmem_cache_small_first()) */
	bool dead;			/* destroyed: its handle is stale (kmem_cache_free_struct()) */
	int refcount;			/* 1 + aliases; under slab_mutex */
	char name[KMEM_CACHE_NAME_MAX];
	struct list_head list;		/* slab_caches */

	/*
	 * The back-end's part.  Word-aligned, not cache-line: list_for_each_entry()
	 * forms a struct kmem_cache pointer from the list's static head, which a
	 * larger alignment would make misaligned (UBSan).  The chunks the core
	 * allocates caches in are 64-byte aligned all the same.
	 */
	unsigned char priv[] __attribute__((aligned(sizeof(long))));
};

static inline void *kmem_cache_priv(struct kmem_cache *s)
{
	return s->priv;
}

extern kmem_lock_t slab_mutex;
extern struct list_head slab_caches;

/* The slab a page belongs to: word 1 of the head page names its cache. */
static inline struct kmem_cache *page_slab_cache(const struct page *head)
{
	return (struct kmem_cache *)__atomic_load_n(&head->__overlay[0], __ATOMIC_RELAXED);
}

/* Head page of the slab or large kmalloc holding @x, or NULL if kmem has no such page. */
static inline struct page *virt_to_head_page_checked(const void *x)
{
	uintptr_t off = (uintptr_t)x - (uintptr_t)mm_model.base;

	if (unlikely((off >> PAGE_SHIFT) >= mm_online_pages()))
		return NULL;
	return compound_head(mm_model.mem_map + (off >> PAGE_SHIFT));
}

/*
 * ceil(2^64 / d), d >= 2: n is a multiple of d iff n * magic < magic, for
 * every n < 2^32 (Lemire, Kaser, Kurz, "Faster remainder by direct
 * computation").  The callers' offsets are below a slab's size.
 */
static inline uint64_t div_magic(uint32_t d)
{
	return UINT64_MAX / d + 1;
}

static inline bool offset_is_multiple(uint64_t n, uint64_t magic)
{
	return (uint64_t)n * magic < magic;
}

/* slab_common.c */
int kmem_cache_init(void);
/*
 * @s grows its slabs: while it has n slabs its next one is of its minimum
 * order plus n, up to its preferred order (allocate_slab()): for kmem's
 * own callers whose caches mostly hold a few objects (malloc's classes in
 * a short-lived process).  Not the kernel's way: its caches' slabs are all
 * of their order unless that order fails.
 */
void kmem_cache_small_first(struct kmem_cache *s);
/*
 * kmem_cache_create() for kmem's own callers (malloc's classes), whose
 * slabs are of order @max_order where slub_max_order is lower (a cap
 * changes nothing below it): a cache the kernel would not make, since its
 * high-order pages are scarce (PAGE_ALLOC_COSTLY_ORDER); kmem's come in 64
 * MiB blocks.  Its slabs grow to that order as kmem_cache_small_first()'s
 * do.  Never merged.
 */
struct kmem_cache *kmem_cache_create_order(const char *name, unsigned int size, unsigned int align,
					   slab_flags_t flags, unsigned int max_order);
/*
 * The slab a cache kmem_cache_create_order() would make of these arguments
 * now (slab_debug= included): its bytes and objects, for a caller choosing
 * sizes (malloc's classes).  0, or -EINVAL where create would fail.
 */
int kmem_cache_slab_fit(const char *name, unsigned int size, unsigned int align, slab_flags_t flags,
			unsigned int max_order, unsigned int *slab_bytes, unsigned int *objects);
struct kmem_cache *kmalloc_cache(unsigned int index);


/*
 * Called at the end of a thread's exit, once the back-end has flushed what
 * it held and holds no lock (slab_thread_exited()): the malloc front-end
 * starts its reaper from there.
 */
extern void (*slab_thread_exit_notify)(void);

/* kmalloc.c */
int kmalloc_init(void);
extern struct kmem_cache *kmalloc_caches[KMALLOC_SHIFT_HIGH + 1];

#endif /* KMEM_SLAB_INTERNAL_H */
