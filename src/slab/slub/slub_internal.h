/* SPDX-License-Identifier: MIT */
/*
 * SLUB-private: helpers of slub.c and slub_cache.c that slub_bulk.c (the
 * bulk paths), slub_thread.c (the per-thread slots), slub_debug.c and slub_info.c
 * (statistics, introspection) use too, and what slub_thread.c gives them.  Not part of the slab core's interface; what slub_sheaf.c shares with
 * them (the sheaf refill and flush, __slub_alloc_from_slabs and
 * __slub_free_to_slabs) is declared in slub.h.
 */
#ifndef KMEM_SLUB_INTERNAL_H
#define KMEM_SLUB_INTERNAL_H

#include "slab/slub/slub.h"

/* Every live thread's slots (slub_thread.c), for flushes, destroy and introspection (slub_info.c). */
struct slub_thread_node {
	struct list_head node;
	struct slub_thread *t;
	/* Slots kmem_cache_destroy() is flushing: the thread must not unmap them yet. */
	atomic_int busy;
};
extern kmem_lock_t slub_threads_lock;
extern struct list_head slub_threads;

/*
 * Every live thread's slot @c for @s (threads that use it), registry node
 * @r; slub_threads_lock held.  A break in the body ends only the current
 * thread's turn: use a condition instead.
 */
/*
 * A slot's ->cache: its cache; NULL when unused; SLOT_RETIRING while a
 * retire (thread exit, kmem_cache_destroy()) flushes it; the cache with
 * SLOT_REAPING set while its own thread reaps it (slub_reap_thread()),
 * which other threads read as the cache (the slot is in use, its counters
 * count) but a destroy cannot claim.
 */
#define SLOT_RETIRING	((struct kmem_cache *)1)
#define SLOT_REAPING	2ul

static inline struct kmem_cache *slot_cache(struct kmem_cache_cpu *c)
{
	/* Sequentially consistent: against a reap that restores ->cache, then reads ->dying. */
	uintptr_t v = (uintptr_t)__atomic_load_n(&c->cache, __ATOMIC_SEQ_CST);

	return (struct kmem_cache *)(v & ~SLOT_REAPING);
}

#define for_each_thread_slot(r, c, s)						\
	list_for_each_entry(r, &slub_threads, node)				\
		for (struct kmem_cache_cpu *c = &(r)->t->cpu[(s)->index];	\
		     c && slot_cache(c) == (s); c = NULL)

static inline unsigned int slab_free_objects(struct slab *slab)
{
	uint64_t st = slab_state(slab);

	return ss_objects(st) - ss_inuse(st);
}

/* ---- slub_thread.c: the per-thread slots ---- */

/* This thread's slot for @s, set up on first use; NULL once the thread is exiting. */
struct kmem_cache_cpu *get_cpu_slot(struct kmem_cache *s);
/*
 * Retiring a slot (kmem_cache_destroy() from another thread, or its own
 * thread's exit): claim_cpu_slot() makes the caller its only retirer (false:
 * someone else is, or a reap holds it); finish_retire() flushes it and lets
 * go, true if that dropped the cache's last reference (the caller then
 * releases the cache, after any lock it holds).
 */
bool claim_cpu_slot(struct kmem_cache *s, struct kmem_cache_cpu *c);
bool finish_retire(struct kmem_cache *s, struct kmem_cache_cpu *c);

/* ---- slub.c and slub_cache.c, for slub_thread.c ---- */

/* Give a slot's sheaves, cpu slab and partial slabs back (kernel flush_slab + put_partials). */
void flush_cpu_slot(struct kmem_cache *s, struct kmem_cache_cpu *c);
/* slub_cache.c: the cache's last reference is gone: its barn, empty slabs and index go (after its reapers). */
void slub_cache_release(struct kmem_cache *s);
/*
 * This thread's slot for @s if it has one in use, else NULL.  Inline, as it
 * was when slub.c held the bulk entry points that call it every time.
 */
static inline struct kmem_cache_cpu *this_cpu_slot(struct kmem_cache *s)
{
	struct slub_thread *t = slub_this;

	/* slub_thread_none's slots have no cache. */
	if (t->cpu[s->index].cache != s)
		return NULL;
	return &t->cpu[s->index];
}

/*
 * Tunables sysfs may change while other threads allocate (min_partial,
 * cpu_partial, slab_thrash_ratio): relaxed loads, as the kernel's
 * READ_ONCE(); a stale value for a moment is fine.
 */
static inline unsigned long tun_min_partial(const struct kmem_cache *s)
{
	return __atomic_load_n(&slub_of(s)->min_partial, __ATOMIC_RELAXED);
}

static inline unsigned int tun_cpu_partial_slabs(const struct kmem_cache *s)
{
	return __atomic_load_n(&slub_of(s)->cpu_partial_slabs, __ATOMIC_RELAXED);
}

static inline unsigned int tun_min_free_watermark(const struct kmem_cache *s)
{
	return __atomic_load_n(&slub_of(s)->min_free_watermark, __ATOMIC_RELAXED);
}

/*
 * A cache with debug flags (kernel kmem_cache_debug()): no sheaves, no cpu
 * slab, no cpu partial slabs.  Every allocation and free goes one object at
 * a time through the node list under list_lock, where the free can check
 * the slab's freelist (slub_debug.c).
 */
static inline bool kmem_cache_debug(const struct kmem_cache *s)
{
	return !slub_has_cpu_partial(s->flags);
}

/*
 * Does a free object of @s keep the free key while on a slab's freelist
 * (its word is not the free pointer's), so that every free object can
 * carry it?  Not for debug caches, whose free objects are poisoned or
 * checked by other means.
 */
static inline bool slub_free_key_apart(const struct kmem_cache *s)
{
	return s->free_key_off != s->offset && !kmem_cache_debug(s);
}

/* @orig_size: the size asked for (kmalloc red zone), 0 for the whole object. */
void *alloc_single(struct kmem_cache *s, gfp_t gfp, struct kmem_cache_cpu *c, unsigned long caller,
		   unsigned int orig_size);
void free_single(struct kmem_cache *s, struct slab *slab, void *x, struct kmem_cache_cpu *c,
		 unsigned long caller);
void slab_mark_all_used(struct slab *slab);
/* A full slab of a SLAB_STORE_USER cache goes on the node's full list; list_lock held. */
void add_full(struct kmem_cache *s, struct kmem_cache_node *n, struct slab *slab);
unsigned long list_slab_objects(struct kmem_cache *s, unsigned int max);
bool slab_debug_checks(const struct kmem_cache *s);
long validate_slab_objects(struct kmem_cache *s, struct slab *slab);
/*
 * A bitmap of @slab's free objects (list_lock held, slab not frozen), by
 * walking its freelist; returns the slab's objects, 0 (and no map) if it has
 * more than SLAB_MAP_BITS or its freelist holds a pointer that is not one.
 */
#define SLAB_MAP_BITS	4096
unsigned int slab_free_map(struct kmem_cache *s, struct slab *slab, unsigned long *map);
static inline bool slab_map_test(const unsigned long *map, unsigned int i)
{
	return map[i / (8 * sizeof(long))] & (1UL << (i % (8 * sizeof(long))));
}
/* SLAB_STORE_USER: @object's allocation or free track (slub_traces.c reads them). */
const struct slub_track *slub_get_track(struct kmem_cache *s, void *object, bool free_track);
/* "<object>+0x<offset>" for a code address, no lock and no allocation (reports). */
const char *slub_caller_name(unsigned long addr, char *buf, size_t size);
void free_single_chain(struct kmem_cache *s, struct slab *slab, void *head, unsigned int cnt,
		       struct kmem_cache_cpu *c);
/* Fill a new slab: ctor and free pointers; returns its first object (the freelist). */
struct slab *new_slab(struct kmem_cache *s, gfp_t gfp, struct kmem_cache_cpu *c, void **freelist);
void discard_slab(struct kmem_cache *s, struct slab *slab);
/*
 * After a free into an unfrozen @slab (list_lock held; @prior its freelist
 * before, @inuse its objects in use after): back to the page allocator if
 * empty and the node has min_partial slabs, onto the partial list if it was
 * full.  Drops list_lock.
 */
void file_freed_slab(struct kmem_cache *s, struct slab *slab, void *prior, unsigned int inuse,
		     struct kmem_cache_cpu *c);
void add_partial(struct kmem_cache_node *n, struct slab *slab, bool tail);

/*
 * Pages for a new slab, with the kernel's order fallback; the slab is not
 * set up yet.  @whole: for a bulk that takes all of slabs of @slub_of(s)->oo.
 */
struct slab *allocate_slab(struct kmem_cache *s, gfp_t gfp, struct kmem_cache_cpu *c, bool whole,
			   unsigned int *objects);
/* Slab counts and page accounting, by @nr slabs of @objects objects and @pages pages in all. */
void count_slabs(struct kmem_cache *s, long nr, long objects, long pages);
/* Publish @slab (state set, counted) as a slab. */
void publish_slab_uncounted(struct slab *slab);
/* Back to the page allocator; the caller has uncounted it. */
void discard_slab_uncounted(struct slab *slab);
/* Off the node partial list; the caller holds list_lock. */
void remove_partial(struct kmem_cache_node *n, struct slab *slab);

/* The slow path of allocation (kernel ___slab_alloc); @c is this thread's slot. */
void *___slab_alloc(struct kmem_cache *s, gfp_t gfp, struct kmem_cache_cpu *c);
/*
 * Free @cnt objects (head..tail, already chained) into a slab that is not
 * this thread's cpu slab (kernel __slab_free).  @c may be NULL.
 */
void __slab_free(struct kmem_cache *s, struct slab *slab, void *head, void *tail,
		 unsigned int cnt, struct kmem_cache_cpu *c);

/* slub_release.c: the free pages inside partial slabs, given back to the OS. */
void slub_release_setup(struct kmem_cache *s);
/* The slab's released pages, a bit each; 0 for an order-0 slab. */
unsigned long slab_released(struct slab *slab);
void slab_released_init(struct slab *slab, unsigned int order);
void slab_released_drop(struct kmem_cache *s, struct slab *slab);
void slab_unrelease(struct kmem_cache *s, struct slab *slab);
void slab_release_on_free(struct kmem_cache *s, struct slab *slab, struct kmem_cache_cpu *c);
long slub_release_sweep(struct kmem_cache *s);

/*
 * A free into a partial slab took its objects in use from @old to @inuse:
 * release its free pages when that went below twice its pages, and below
 * each power of two after that.  The slab may be gone already (the free
 * gave up our claim on it): the cache's order stands for the slab's, and
 * slab_release_on_free() checks the slab under list_lock.
 */
static inline bool release_due(const struct kmem_cache *s, unsigned int old, unsigned int inuse)
{
	return __atomic_load_n(&slub_of(s)->release_on_free, __ATOMIC_RELAXED) && inuse &&
	       (old ^ inuse) > inuse && inuse < (2u << oo_order(slub_of(s)->oo));
}

#endif /* KMEM_SLUB_INTERNAL_H */
