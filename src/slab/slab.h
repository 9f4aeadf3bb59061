/* SPDX-License-Identifier: MIT */
/*
 * The slab core: what every back-end (SLUB now; SLAB and SLOB later) shares.
 * struct kmem_cache's common part, the back-end interface, and the cache
 * list.  SLUB's per-cache state (the node and its barn) sits at the end of
 * struct kmem_cache; SLAB and SLOB will add theirs beside it, and a
 * back-end never touches another's part.
 */
#ifndef KMEM_SLAB_INTERNAL_H
#define KMEM_SLAB_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <kmem/slab.h>

#include "core/list.h"
#include "page_alloc/mm.h"
#include "slab/slab_layout.h"

#define KMEM_CACHE_NAME_MAX	64
#define KMEM_MAX_CACHES		2048	/* per-thread slots: caches alive at once (indices are reused) */

enum slab_allocator_type { SLAB_ALLOCATOR_SLUB, SLAB_ALLOCATOR_SLAB, SLAB_ALLOCATOR_SLOB };
extern enum slab_allocator_type slab_allocator;

/* SLUB_STATS counters, kernel enum order, plus slab_thrash_ratio's thrash counters. */
enum stat_item {
	ALLOC_FASTPATH, ALLOC_SLOWPATH, FREE_FASTPATH, FREE_SLOWPATH, FREE_FROZEN,
	FREE_ADD_PARTIAL, FREE_REMOVE_PARTIAL, ALLOC_FROM_PARTIAL, ALLOC_SLAB,
	ALLOC_REFILL, ALLOC_NODE_MISMATCH, FREE_SLAB, CPUSLAB_FLUSH, DEACTIVATE_FULL,
	DEACTIVATE_EMPTY, DEACTIVATE_TO_HEAD, DEACTIVATE_TO_TAIL,
	DEACTIVATE_REMOTE_FREES, DEACTIVATE_BYPASS, ORDER_FALLBACK,
	CMPXCHG_DOUBLE_CPU_FAIL, CMPXCHG_DOUBLE_FAIL, CPU_PARTIAL_ALLOC,
	CPU_PARTIAL_FREE, CPU_PARTIAL_NODE, CPU_PARTIAL_DRAIN,
	THRASH_DETECTED,	/* a refill found the last cpu slab served < watermark */
	THRASH_SKIP_PARTIAL,	/* a partial slab skipped: fewer free objects than watermark */
	/* 6.18 sheaves (kernel names; theirs sit among the classic ones). */
	ALLOC_PCS,		/* allocation from the thread's main sheaf */
	FREE_PCS,		/* free into the thread's main sheaf */
	SHEAF_FLUSH,		/* objects flushed from a sheaf back to slabs */
	SHEAF_REFILL,		/* objects refilled into a sheaf from slabs */
	SHEAF_ALLOC,		/* empty sheaf allocated */
	SHEAF_FREE,		/* empty sheaf freed */
	BARN_GET,		/* full sheaf taken from the barn */
	BARN_GET_FAIL,		/* no full sheaf in the barn */
	BARN_PUT,		/* full sheaf stored in the barn */
	BARN_PUT_FAIL,		/* barn already held its maximum of full sheaves */
	NR_SLUB_STAT_ITEMS
};
extern const char *const slub_stat_names[NR_SLUB_STAT_ITEMS];

/*
 * The kernel counts SLUB_STATS only when built with CONFIG_SLUB_STATS.  kmem
 * counts its slow paths' events always (they are rare and the report reads
 * them), but the two counters of every object that goes through a sheaf,
 * ALLOC_PCS and FREE_PCS, are a memory increment on each fast path, 7-10%
 * of a malloc+free pair (docs/benchmarks.md): they are counted
 * only in a build with CONFIG_SLUB_STATS (cmake -DKMEM_SLUB_STATS=ON; make
 * test's sanitizer stages), and without it their files are not there.
 */
#ifdef CONFIG_SLUB_STATS
#define SLUB_STATS_PER_OBJECT	1
#else
#define SLUB_STATS_PER_OBJECT	0
#endif

/* Is @si counted (and has a file) in this build? */
static inline int slub_stat_counted(enum stat_item si)
{
	return SLUB_STATS_PER_OBJECT || (si != ALLOC_PCS && si != FREE_PCS);
}

struct kmem_cache_node {
	kmem_lock_t list_lock;
	unsigned long nr_partial;
	struct list_head partial;
	/*
	 * Full slabs of a SLAB_STORE_USER cache (kernel CONFIG_SLUB_DEBUG's
	 * n->full, kept for the same caches), so that alloc_traces sees every
	 * allocated object; list_lock.  Empty otherwise.
	 */
	struct list_head full;
	atomic_long nr_slabs;
	atomic_long total_objects;	/* less the objects on released pages */
	atomic_long released_pages;	/* pages of partial slabs given back to the OS */
	atomic_long nr_pages;		/* pages of its slabs, whatever their order (sysfs slab_pages) */
};

/*
 * The barn (6.18): a per-node depot of full and empty sheaves, so objects
 * freed on one CPU (thread) reach another's allocations a sheaf at a time.
 */
struct slab_sheaf;
struct node_barn {
	kmem_lock_t lock;
	struct slab_sheaf *full, *empty;	/* stacks, linked through sheaf->next */
	unsigned int nr_full, nr_empty;
	unsigned int max_full;			/* MAX_FULL_SHEAVES or more, see slub_barn_kb */
	unsigned int max_empty;			/* as many as max_full */
	/*
	 * Full sheaves may have grown (slub_sheaf.c): the barn's limit is in
	 * objects, max_full sheaves of the cache's sheaf_capacity.
	 */
	unsigned long full_objs, max_full_objs;
	/*
	 * Since the last reap (barn_reap()): the fewest full sheaves the barn
	 * held, and how many it gave out; low_prev is low_full of the reap
	 * before.  The bottom min(low_full, low_prev) sheaves of the stack
	 * were not taken in two rounds.
	 */
	unsigned int low_full, low_prev, gets;
	unsigned long long round_ns;		/* when the last round began (barn_reap()) */
};
#define MAX_FULL_SHEAVES	10	/* the kernel's; slub_barn_kb may allow more */
#define MAX_FULL_SHEAVES_CAP	64
#define MAX_EMPTY_SHEAVES	10	/* the kernel's; max_empty follows max_full */

struct kmem_cache {
	/* Read by every fast path: keep together. */
	unsigned int index;		/* this cache's per-thread slot */
	unsigned int offset;		/* free pointer offset in the slot */
	unsigned int size;		/* slot stride */
	unsigned int object_size;	/* what the user asked for (max over aliases) */
	unsigned long random;		/* freelist hardening key, 0 when off */
	uint64_t div_magic;		/* ceil(2^64 / size): is an offset a slot start? */
	slab_flags_t flags;
	unsigned int inuse;
	unsigned int align;
	unsigned int red_left_pad;
	void (*ctor)(void *);

	struct kmem_cache_order_objects oo;	/* preferred slab order and objects */
	struct kmem_cache_order_objects min;	/* fallback when oo's order fails */
	unsigned long min_partial;		/* an unsigned long in the kernel: any value */
	unsigned int cpu_partial;		/* objects (sysfs) */
	unsigned int cpu_partial_slabs;		/* derived */
	unsigned int min_free_watermark;	/* slab_thrash_ratio, in objects */
	unsigned int sheaf_capacity;		/* objects per sheaf, 0: no sheaves */
	unsigned char sheaf_max_shift;		/* a thread's sheaves grow up to sheaf_capacity << it */
	unsigned int release_min_free;		/* objects a page, 0: no page release (slub_release.c) */
	bool release_on_free;			/* frees release too (slub_release_pages=2) */
	unsigned char order_cap;		/* kmem_cache_create_order()'s, if its slabs are past slub_max_order; else 0 */
	bool small_first;			/* young, its slabs grow from its minimum order (kmem_cache_small_first()) */
	unsigned char remote_ratio_inv;		/* 100 - remote_node_defrag_ratio (stored only) */

	int refcount;				/* 1 + aliases; under slab_mutex */
	bool dying;				/* destroyed; freed when no thread holds it */
	atomic_int nr_thread_users;		/* threads with per-thread state for it, +1 until destroyed */
	atomic_int reapers;			/* threads reaping a slot of it right now (slub_reap_thread()) */
	char name[KMEM_CACHE_NAME_MAX];
	struct list_head list;			/* slab_caches */

	struct kmem_cache_node node;		/* one node */
	struct node_barn barn;			/* its barn, when sheaf_capacity */
	atomic_ulong dead_stat[NR_SLUB_STAT_ITEMS];	/* folded from exited threads */
};

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
void slab_report_bad_free(const char *func, const void *x, const char *why);

/* kmalloc.c */
int kmalloc_init(void);
extern struct kmem_cache *kmalloc_caches[KMALLOC_SHIFT_HIGH + 1];

#endif /* KMEM_SLAB_INTERNAL_H */
