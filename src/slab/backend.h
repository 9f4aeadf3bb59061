/* SPDX-License-Identifier: MIT */
/*
 * The back-end contract: the functions a slab allocator provides to the
 * slab core (the kernel's "functions provided by the slab allocators" in
 * mm/slab.h), so that SLUB, SLAB and SLOB sit behind one kmem_cache /
 * kmalloc API and one is chosen at boot with slab=slub|slab|slob.
 *
 * Who does what:
 *  - The core (the .c files of src/slab/ itself) owns struct kmem_cache's common part, the
 *    cache list and slab_mutex, argument checks, merging (aliases), names,
 *    the public entry points, kmalloc's size classes and its caches, large
 *    kmallocs (page allocator, PG_large_kmalloc), /proc/slabinfo and
 *    /proc/meminfo, fork ordering, and the report helpers.
 *  - A back-end (src/slab/<name>/) owns its slabs, its per-thread state,
 *    its part of struct kmem_cache (kmem_cache_priv()), its statistics and
 *    any introspection of its own (SLUB: /sys/kernel/slab).  It includes
 *    only the core's headers (slab/slab.h, slab/backend.h, page_alloc/,
 *    core/, introspect/), never another back-end's.
 *
 * The fast paths (slab/fastpath.h) are the per-thread object caches the
 * kmem_cache_alloc()/kfree()/malloc() entry points try inline: SLUB's
 * sheaves and cpu slab.  A back-end that keeps none there gives its caches
 * index 0, whose slot is always empty, and leaves its slab pages' page-map
 * words 0: every inline attempt then misses at no cost to SLUB, and the
 * miss path is the dispatch point, a call through slab_ops (one memory-
 * indirect call where SLUB's miss path already made a direct one).
 *
 * Every hook is called with no core lock held unless its comment says so.
 * Hooks marked optional may be NULL.
 */
#ifndef KMEM_SLAB_BACKEND_H
#define KMEM_SLAB_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include <kmem/gfp.h>

struct kmem_cache;
struct page;
struct seq_buf;

/* /proc/slabinfo's figures for one cache (the kernel's struct slabinfo). */
struct slabinfo {
	unsigned long active_objs;
	unsigned long num_objs;
	unsigned long active_slabs;
	unsigned long num_slabs;
	unsigned long shared_avail;	/* SLAB: objects in the node's shared array */
	unsigned int limit;		/* SLAB's tunables; 0 on SLUB and SLOB */
	unsigned int batchcount;
	unsigned int shared;
	unsigned int objects_per_slab;
	unsigned int cache_order;	/* pages per slab = 1 << cache_order */
};

/* What lies at an address inside a slab page (kfree, ksize, realloc). */
struct kmem_obj {
	struct kmem_cache *cache;	/* the object's cache; NULL for SLOB's kmalloc blocks */
	void *start;			/* the start of the object or block holding the address, or NULL */
	size_t size;			/* bytes usable from start (kernel __ksize()) */
};

struct slab_backend {
	const char *name;		/* its slab= value: "slub", "slab", "slob" */
	/* Bytes of its part of struct kmem_cache, at kmem_cache_priv(). */
	size_t cache_priv_size;
	/* May compatible caches merge (kernel __kmem_cache_alias)?  SLOB: no. */
	bool merges;

	/* ---- boot ---- */
	/* kmem_cache_init(): the page allocator is up; kmalloc's caches come after. */
	int (*init)(void);

	/* ---- caches ---- */
	/*
	 * __kmem_cache_create(): @s has its common fields (name, object_size,
	 * align, flags with slab_debug= applied, ctor, order_cap) and a zeroed
	 * private part; the back-end sets size, inuse, offset, align, index
	 * and its own state.  0 or -errno (nothing to undo on failure).
	 */
	int (*cache_create)(struct kmem_cache *s);
	/*
	 * The slab a cache of these arguments would have now (flags with
	 * slab_debug= applied): bytes per slab and objects per slab, for a
	 * caller choosing sizes (malloc's classes).  0 or -EINVAL.
	 */
	int (*probe_slab)(unsigned int size, unsigned int align, slab_flags_t flags,
			  unsigned int order_cap, unsigned int *slab_bytes, unsigned int *objects);
	/*
	 * kmem_cache_destroy() of the last reference, @s off the cache list:
	 * __kmem_cache_shutdown() (report objects still allocated, in the
	 * kernel's words) and __kmem_cache_release().  The back-end frees the
	 * structure with kmem_cache_free_struct() once no thread can touch it.
	 */
	void (*cache_destroy)(struct kmem_cache *s);
	/* __kmem_cache_shrink(): give back what is free; 0, or 1 if @s still holds slabs. */
	int (*cache_shrink)(struct kmem_cache *s);

	/* ---- objects ---- */
	/*
	 * One object of @s (the miss path of the inline fast path): @caller the
	 * program's return address (SLAB_STORE_USER), @orig_size the size a
	 * kmalloc asked for (0: the whole object).  NULL on failure, having
	 * reported it unless __GFP_NOWARN.
	 */
	void *(*alloc)(struct kmem_cache *s, gfp_t gfp, unsigned long caller, unsigned int orig_size);
	/*
	 * kmem_cache_free(@s, @x): @head is the head page of @x's slab when
	 * the caller knows it, else NULL.  Bad input (NULL @s is never passed;
	 * a foreign pointer, another cache's object, an interior pointer, a
	 * double free) is reported and nothing is corrupted.
	 */
	void (*free)(struct kmem_cache *s, struct page *head, void *x, unsigned long caller);
	/* kmem_cache_alloc_bulk(): all @n or none (0), n > 0. */
	int (*alloc_bulk)(struct kmem_cache *s, gfp_t gfp, size_t n, void **p);
	/* kmem_cache_free_bulk(); @s NULL: kfree_bulk() of slab objects (the core has taken the others). */
	void (*free_bulk)(struct kmem_cache *s, size_t n, void **p);

	/* ---- kmalloc ---- */
	/*
	 * Optional: kmalloc() of 1 <= @size <= KMALLOC_MAX_CACHE_SIZE when the
	 * back-end keeps no kmalloc-N caches (SLOB's size-headed blocks).
	 * NULL: the core's kmalloc caches serve kmalloc.
	 */
	void *(*kmalloc)(size_t size, gfp_t gfp, unsigned long caller);
	/*
	 * Optional, with .kmalloc: kmalloc_size_roundup() of 1 <= @size <=
	 * KMALLOC_MAX_CACHE_SIZE, the ksize() a kmalloc of @size gets (kernel:
	 * SLOB's own kmalloc_size_roundup()).  NULL: the kmalloc caches' sizes.
	 */
	size_t (*kmalloc_size_roundup)(size_t size);
	/* kfree() of @x in the slab page whose head is @head (PageSlab). */
	void (*kfree)(struct page *head, void *x, unsigned long caller);
	/*
	 * What is at @x in the slab page whose head is @head (PageSlab): the
	 * object or block holding it in *@o, o->start NULL if @x lies in none
	 * (free space, metadata, padding), o->size the usable size of such an
	 * object all the same (0 if there is none to speak of).  No report.
	 */
	void (*obj_info)(struct page *head, const void *x, struct kmem_obj *o);
	/*
	 * Optional: kmalloc'ed @x of @s now holds @size bytes in place
	 * (krealloc, realloc; @zero: the grown part zeroed; @size = the whole
	 * object for ksize()): a kmalloc red zone that follows the size asked
	 * for moves with it.
	 */
	void (*obj_resize)(struct kmem_cache *s, void *x, size_t size, bool zero);
	/* Optional: the size a kmalloc of @x asked for, as kept for its red zone; else o->size. */
	size_t (*obj_orig_size)(struct kmem_cache *s, void *x);

	/* ---- introspection ---- */
	/* /proc/slabinfo's figures, with or without slab_mutex held (a moment stale is fine). */
	void (*get_slabinfo)(struct kmem_cache *s, struct slabinfo *info);
	/* Optional: the statistics columns of "slabinfo - version: 2.1 (statistics)"; slab_mutex held. */
	void (*slabinfo_show_stats)(struct seq_buf *m, struct kmem_cache *s);
	/* Optional: a write to /proc/slabinfo (SLAB's "name limit batchcount shared"); 0 or -errno. */
	int (*slabinfo_write)(const char *buf);
	/* Optional: check every slab of @s; the number of errors found (reported). */
	long (*validate)(struct kmem_cache *s);

	/* ---- process life ---- */
	/* Optional: flush what the calling thread holds (kernel: a CPU going offline). */
	void (*flush_thread)(void);
	/*
	 * fork(): take every lock of the back-end (prepare, after slab_mutex),
	 * drop them in the parent, re-initialise them in the child.  Optional.
	 */
	void (*fork_prepare)(void);
	void (*fork_parent)(void);
	void (*fork_child)(void);
};

/* The back-end chosen at boot (slab=), copied here before the first cache; read-only after. */
extern struct slab_backend slab_ops;

/* The back-ends kmem is built with. */
extern const struct slab_backend slub_backend;
extern const struct slab_backend slab_backend;
extern const struct slab_backend slob_backend;

/*
 * Services of the core to the back-ends.
 */
/* Give back a struct kmem_cache (after cache_destroy's last use of it). */
void kmem_cache_free_struct(struct kmem_cache *s);
/* A back-end's thread has finished its exit clean-up, holding no lock (the malloc front-end's reaper). */
void slab_thread_exited(void);
/* Report a bad kfree()/kmem_cache_free()/ksize() of @x (kernel style, rate-limited by printk). */
void slab_report_bad_free(const char *func, const void *x, const char *why);

#endif /* KMEM_SLAB_BACKEND_H */
