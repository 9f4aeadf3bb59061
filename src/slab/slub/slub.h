/* SPDX-License-Identifier: MIT */
/*
 * SLUB: per-thread sheaves (6.18's per-cpu object arrays, on for every
 * cache as in newer kernels) in front of per-thread slabs with lockless
 * freelists (the classic design).  This header holds the structures and the
 * inline fast paths; slub.c the slab slow paths, slub_bulk.c the bulk API
 * and the paths between sheaves and slabs, slub_sheaf.c the sheaves',
 * slub_thread.c the per-thread slots.
 *
 * "Per CPU" is per thread in this version.  Everything a true per-CPU (rseq)
 * version replaces is slub_this, struct slub_thread and slub_thread.c.
 */
#ifndef KMEM_SLUB_H
#define KMEM_SLUB_H

#include <string.h>

#include "slab/slab.h"
#include "slab/slub/slub_layout.h"

#define KMEM_MAX_CACHES		2048	/* per-thread slots: caches alive at once (indices are reused) */

/* SLUB_STATS counters, kernel enum order, plus the thrash counters of slab_thrash_ratio. */
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

/* SLUB's part of struct kmem_cache (kmem_cache_priv()). */
struct slub_cache {
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
	unsigned char remote_ratio_inv;		/* 100 - remote_node_defrag_ratio (stored only) */

	bool dying;				/* destroyed; freed when no thread holds it */
	atomic_int nr_thread_users;		/* threads with per-thread state for it, +1 until destroyed */
	atomic_int reapers;			/* threads reaping a slot of it right now (slub_reap_thread()) */

	struct kmem_cache_node node;		/* one node */
	struct node_barn barn;			/* its barn, when sheaf_capacity */
	atomic_ulong dead_stat[NR_SLUB_STAT_ITEMS];	/* folded from exited threads */
};

/* Const in, not out: tunables are read through const caches, as the kernel's READ_ONCE(). */
static inline struct slub_cache *slub_of(const struct kmem_cache *s)
{
	return (struct slub_cache *)(uintptr_t)s->priv;
}

/*
 * struct slab overlays the head struct page of a slab (words 1..6).
 * Freelist head and counters share one 64-bit word, so a remote free is a
 * single compare-and-swap (the kernel needs a double-word cmpxchg for a full
 * pointer; an offset inside a slab of at most 4 MiB fits in 24 bits):
 *
 *   bits  0..14  inuse:    objects not on the slab freelist
 *   bits 15..29  objects:  objects in the slab
 *   bit  30      frozen:   owned by a thread (its cpu slab or cpu partial list)
 *   bits 32..55  freelist: (offset of first free object / 8) + 1, 0 = none
 *
 * inuse comes first so that the free fast path's "is any object in use?"
 * is one test of the word's low 16 bits, with no shift.
 */
struct slab {
	unsigned long __page_flags;
	struct kmem_cache *slab_cache;
	union {
		struct list_head slab_list;	/* node partial list */
		struct slab *next;		/* a thread's partial list (its length: c->nr_partial) */
	};
	_Atomic uint64_t state;
	/* Fixed while it is a slab: the free fast path's object check needs no state. */
	uintptr_t obj_base;		/* address of object 0 */
	uintptr_t obj_span;		/* objects * size; a word, so the check compares with memory */
};

_Static_assert(sizeof(struct slab) <= offsetof(struct page, _refcount),
	       "struct slab must not overlay _refcount");
_Static_assert(offsetof(struct slab, slab_cache) == offsetof(struct page, __overlay),
	       "slab_cache must be word 1, as page_slab_cache() reads it");

#define SS_FREE_SHIFT	32
#define SS_FREE_MASK	0xffffffULL
#define SS_INUSE_SHIFT	0
#define SS_OBJ_SHIFT	15
#define SS_FROZEN	(1ULL << 30)
#define SS_MASK15	0x7fffULL

static inline struct slab *page_slab(struct page *page) { return (struct slab *)page; }
static inline struct page *slab_page(struct slab *slab) { return (struct page *)slab; }
static inline char *slab_address(struct slab *slab) { return __page_address(slab_page(slab)); }

static inline unsigned int ss_inuse(uint64_t st) { return (st >> SS_INUSE_SHIFT) & SS_MASK15; }
static inline unsigned int ss_objects(uint64_t st) { return (st >> SS_OBJ_SHIFT) & SS_MASK15; }
static inline bool ss_frozen(uint64_t st) { return st & SS_FROZEN; }

static inline void *ss_freelist(struct slab *slab, uint64_t st)
{
	uint64_t f = (st >> SS_FREE_SHIFT) & SS_FREE_MASK;

	return f ? slab_address(slab) + ((f - 1) << 3) : NULL;
}

static inline uint64_t ss_make(struct slab *slab, void *freelist, unsigned int inuse,
			       unsigned int objects, bool frozen)
{
	uint64_t f = freelist ? (((uint64_t)((char *)freelist - slab_address(slab)) >> 3) + 1) : 0;

	return (f << SS_FREE_SHIFT) | ((uint64_t)inuse << SS_INUSE_SHIFT) | ((uint64_t)objects << SS_OBJ_SHIFT) |
	       (frozen ? SS_FROZEN : 0);
}

static inline uint64_t slab_state(struct slab *slab)
{
	return atomic_load_explicit(&slab->state, memory_order_acquire);
}

/*
 * Compare-and-swap of a slab's state (kernel cmpxchg_double_slab).  With one
 * thread in the process nobody can race with us, so a plain compare and
 * store does it without the locked instruction's full barrier (see
 * os_single_threaded).  Weak semantics: false and *old updated on mismatch.
 */
static inline bool slab_state_cmpxchg(struct slab *slab, uint64_t *old, uint64_t new)
{
	if (os_single_threaded()) {
		uint64_t cur = atomic_load_explicit(&slab->state, memory_order_relaxed);

		if (unlikely(cur != *old)) {
			*old = cur;
			return false;
		}
		atomic_store_explicit(&slab->state, new, memory_order_relaxed);
		return true;
	}
	return atomic_compare_exchange_weak_explicit(&slab->state, old, new, memory_order_acq_rel,
						     memory_order_acquire);
}

/* ---- free pointers -------------------------------------------------- */

/*
 * With slab_freelist_hardened=1 a stored free pointer is
 * ptr ^ s->random ^ bswap(address it is stored at), as in the kernel, so a
 * use-after-free write cannot steer the allocator to an address of its choice.
 */
static inline void *freelist_decode(const struct kmem_cache *s, uintptr_t stored, uintptr_t at)
{
	if (s->random)
		stored ^= s->random ^ __builtin_bswap64(at);
	return (void *)stored;
}

static inline void *get_freepointer(const struct kmem_cache *s, void *object)
{
	uintptr_t at = (uintptr_t)object + s->offset;

	return freelist_decode(s, *(uintptr_t *)at, at);
}

static inline void set_freepointer(const struct kmem_cache *s, void *object, void *fp)
{
	uintptr_t at = (uintptr_t)object + s->offset, v = (uintptr_t)fp;

	if (s->random)
		v ^= s->random ^ __builtin_bswap64(at);
	*(uintptr_t *)at = v;
}

/* ---- sheaves (6.18) ------------------------------------------------ */

/*
 * A sheaf is a magazine of free objects of one cache.  A thread allocates
 * from and frees into its main sheaf whatever slab the object lives in, so a
 * cross-thread free costs what a local one does; full and empty sheaves
 * travel between threads through the cache's barn.  Sheaves are metadata,
 * outside managed memory (see slub_sheaf.c).
 */
struct slab_sheaf {
	struct slab_sheaf *next;	/* barn stack */
	unsigned int size;		/* objects held (stale while installed as main) */
	unsigned int capacity;
	unsigned long __pad;
	/* objects[-1]: never an object address, so the free fast path may
	 * compare with the last pushed object without testing for an empty sheaf */
	unsigned long guard;
	void *objects[];
};
_Static_assert(sizeof(struct slab_sheaf) == SLAB_SHEAF_HDR, "sheaf header size");

/* ---- per-thread state ---------------------------------------------- */

/* A thread's first refills of a sheaf from slabs take 2, 4, 8, 16, 32 objects. */
#define SHEAF_RAMP	5

struct kmem_cache_cpu {
	/*
	 * A copy of the main sheaf's top object, objs[count - 1], or NULL.
	 * A malloc/free loop then passes its object through this one word:
	 * the allocation's load needs no count first, which takes two
	 * dependent loads off the chain from one allocation to the next (hot
	 * 64 B: 9.9 -> 8.7 ns).  Being a copy, not an object of its own, it
	 * costs the fast paths nothing to keep: a free stores its object in
	 * objs[count] and here, without reading it, and an allocation brings
	 * the next top up (objs[-1] is a NULL guard) with no test of count.
	 * Invariant: hot is objs[count - 1] or NULL.  The other paths drop it
	 * while they change main (sheaf_settle()) and bring it back when done
	 * (sheaf_hot_reload()); NULL with objects in main sends an allocation
	 * to the cpu slab's freelist or the slow path, never to a stale
	 * object.  Neither fast path branches on anything else:
	 * in a mix of sizes whether a slot's hot is set would be a coin toss,
	 * and mispredicting it cost larson 17 -> 24 ns.
	 */
	void *hot;
	/* The main sheaf, cached here so the fast paths need no other load;
	 * cap is 0 without sheaves, and count 0 until a sheaf is installed. */
	void **objs;
	unsigned int count;
	unsigned int cap;
	void *freelist;			/* lockless freelist of the cpu slab */
	uintptr_t base;			/* address of the cpu slab's first object */
	uintptr_t span;			/* objects * size: a free x is ours if x - base < span */
	struct slab *slab;		/* the cpu slab */
	struct slab *partial;		/* this thread's partial slabs, nr_partial of them */
	struct kmem_cache *cache;	/* NULL: slot not in use by this thread */
	struct slab_sheaf *main;	/* objs/count/cap describe it */
	struct slab_sheaf *spare;	/* empty or full, may be NULL */
	unsigned int fast_mark;		/* ALLOC_FASTPATH when the cpu slab came */
	unsigned char from_partial;	/* the cpu slab came from a partial list */
	unsigned char thrash;		/* recent refills that served < watermark */
	unsigned char sheaf_refills;	/* refills of main from slabs, up to SHEAF_RAMP */
	unsigned char sheaf_shift;	/* this thread's new sheaves hold sheaf_capacity << it (grown) */
	unsigned char barn_trips;	/* barn trips since the last growth (slub_sheaf.c) */
	uint8_t reap_epoch;		/* the thread's reap epoch when the slot was last seen in use */
	/*
	 * The slot's activity at the last reap (slub_reap_tick()), a 16-bit
	 * hash of its allocation counters and main's top and count
	 * (slot_activity()): 16 bits fit in the padding, and a slot is 256
	 * bytes, a shift from its index (4 bytes more made it 320: a multiply
	 * on every malloc).  A busy slot whose hash comes out equal by chance
	 * (1 in 65536) looks idle and is flushed: a slow path for it, nothing
	 * lost.
	 */
	uint16_t reap_activity;
	unsigned int nr_partial;	/* slabs on partial; read by sysfs from other threads */
	unsigned int stat[NR_SLUB_STAT_ITEMS];
} __attribute__((aligned(64)));

/*
 * Slot 0 belongs to no cache (indices start at 1): it stays empty, so a
 * size-class table entry of 0 (not set up yet) fails the fast path
 * without a test of its own.
 */
struct slub_thread {
	struct kmem_cache_cpu cpu[KMEM_MAX_CACHES];
};
_Static_assert(sizeof(struct kmem_cache_cpu) == 256, "a slot's offset is its index shifted");

/*
 * This thread's slots.  A thread with none yet, or one that is exiting,
 * points at slub_thread_none, whose slots are all empty and never written:
 * the fast paths find no object and no room, and go to the slow path,
 * with no test for a NULL pointer on the way.
 */
extern __thread struct slub_thread *slub_this __attribute__((tls_model("initial-exec")));
extern struct slub_thread slub_thread_none;

/* Has this thread slots of its own (not before its first use, not while exiting)? */
static inline bool slub_thread_live(void)
{
	return slub_this != &slub_thread_none;
}

/*
 * A slab page's page map word (mm.h), in every page of the slab: the byte
 * offset of its cache's slot in struct slub_thread (bits 8..18; slots are
 * 256 bytes), so that kfree() finds the slot with one load indexed by the
 * pointer's pfn (slub_free_ptr()), and the page's distance from the slab's
 * head page (bits 20..30), so that it finds the slab's start without
 * reading the tail struct page: the page map is 4 bytes a page and stays in
 * cache where mem_map, 64 bytes a page, does not (frag: a quarter of
 * free()'s misses).  Bits 0..7 say where the page's last object may start
 * (slab_map_lim()): 128 for a page every byte of which is in an object,
 * less on the pages of the slab's tail, the bytes past its last object.
 * Slot 0 belongs to no cache, so a slab page's word is never 0, and the
 * words are set when the slab is published and cleared first when it is
 * discarded (slub.c): any other page's word is 0, which is how the free
 * fast path tells a slab page.
 */
#define SLAB_MAP_HEAD_SHIFT	20
#define SLAB_MAP_LIM_MASK	0xffu
#define SLAB_MAP_LIM_SHIFT	5	/* the limit is in units of 32 bytes */
#define SLAB_MAP_LIM_PAGE	(PAGE_SIZE >> SLAB_MAP_LIM_SHIFT)

_Static_assert(KMEM_MAX_CACHES * sizeof(struct kmem_cache_cpu) <= (1u << SLAB_MAP_HEAD_SHIFT),
	       "slot offsets must fit below the head distance");
_Static_assert(MAX_PAGE_ORDER <= 32 - SLAB_MAP_HEAD_SHIFT - 1, "head distances must fit in the word");
_Static_assert(SLAB_MAP_LIM_PAGE <= SLAB_MAP_LIM_MASK && sizeof(struct kmem_cache_cpu) > SLAB_MAP_LIM_MASK,
	       "the page's limit must fit below the slot offset");

static inline uint32_t slab_slot_offset(unsigned int index)
{
	return index * (uint32_t)sizeof(struct kmem_cache_cpu);
}

/*
 * The word of the page @nth_page of a slab whose objects of the fast path
 * start below @end bytes from the slab's start (objects * size, its tail
 * after): object starts in the page below the limit are objects.  Rounded
 * down to 32 bytes (a start in the last 32 bytes before the tail takes the
 * free's slow path, which checks it against the slab).
 */
static inline uint32_t slab_map_word(unsigned int index, unsigned int nth_page, unsigned long end)
{
	unsigned long start = (unsigned long)nth_page << PAGE_SHIFT;
	unsigned long in = end > start ? end - start : 0;
	uint32_t lim = in >= PAGE_SIZE ? SLAB_MAP_LIM_PAGE : (uint32_t)(in >> SLAB_MAP_LIM_SHIFT);

	return slab_slot_offset(index) | (nth_page << SLAB_MAP_HEAD_SHIFT) | lim;
}

static inline uint32_t slab_map_slot(uint32_t word)
{
	return word & ((1u << SLAB_MAP_HEAD_SHIFT) - 1) & ~SLAB_MAP_LIM_MASK;
}

/*
 * May an object of the page of @word start at @in_page (see
 * slab_map_word())?  A compare of two bytes: in_page >> 5 is below 128.
 */
static inline bool slab_map_below_lim(uint32_t word, uint32_t in_page)
{
	return (uint8_t)(in_page >> SLAB_MAP_LIM_SHIFT) < (uint8_t)(word & SLAB_MAP_LIM_MASK);
}

/* The head of @page by its page map word: @page itself for a page of no slab. */
static inline struct page *slab_map_head(struct page *page, uint32_t word)
{
	return page - (word >> SLAB_MAP_HEAD_SHIFT);
}

static inline struct kmem_cache_cpu *slub_slot(struct slub_thread *t, uint32_t offset)
{
	return (struct kmem_cache_cpu *)((char *)t + offset);
}

/*
 * Before a path other than the fast ones changes main: drop hot, the copy
 * of its top (see struct kmem_cache_cpu), which could go stale.  Main's
 * objects are objs[0..count) all the time.
 */
static inline void sheaf_settle(struct kmem_cache_cpu *c)
{
	c->hot = NULL;
}

/* After such a path: hot the copy of main's top again, for the allocation fast path. */
static inline void sheaf_hot_reload(struct kmem_cache_cpu *c)
{
	c->hot = c->count ? c->objs[c->count - 1] : NULL;
}

/*
 * Only the slot's thread writes its counters; readers sum them with
 * relaxed loads.  On x86-64 one incl, like the kernel's this_cpu_inc():
 * an aligned 4-byte store never tears, and it is one instruction on the
 * fast paths instead of a load, an add and a store.
 */
static inline void stat_inc(struct kmem_cache_cpu *c, enum stat_item si)
{
	if (!slub_stat_counted(si))
		return;
#if defined(__x86_64__)
	__asm__("incl %0" : "+m"(c->stat[si]));
#else
	__atomic_store_n(&c->stat[si], __atomic_load_n(&c->stat[si], __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
#endif
}

static inline void stat_add(struct kmem_cache_cpu *c, enum stat_item si, unsigned int n)
{
	if (!slub_stat_counted(si))
		return;
	__atomic_store_n(&c->stat[si], __atomic_load_n(&c->stat[si], __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

/* Count into this thread's slot, or the cache's shared counters without one. */
static inline void stat_s(struct kmem_cache *s, struct kmem_cache_cpu *c, enum stat_item si,
			  unsigned int n)
{
	if (!slub_stat_counted(si))
		return;
	if (c)
		stat_add(c, si, n);
	else
		atomic_fetch_add_explicit(&slub_of(s)->dead_stat[si], n, memory_order_relaxed);
}

/* ---- slow paths (slub.c) ------------------------------------------- */

/*
 * @caller: the return address of the API function the program called
 * (kernel _RET_IP_), recorded in SLAB_STORE_USER caches' tracks.
 */
/* @orig_size: the size the caller asked for (a kmalloc), 0 for the whole object. */
void *__slub_alloc_slow(struct kmem_cache *s, gfp_t gfp, unsigned long caller, unsigned int orig_size);
/*
 * A kmalloc object resized in place (krealloc, realloc; @zero: the grown
 * part zeroed), or to be used whole (ksize, malloc_usable_size: @size =
 * object_size, the kernel's skip_orig_size_check()): its kmalloc red zone
 * follows, if its cache keeps one (slab_debug=UZ).
 */
void slub_resize_object(struct kmem_cache *s, void *object, size_t size, bool zero);
/* The size a kmalloc asked for, as kept for its red zone; object_size if not kept. */
unsigned int slub_orig_size(struct kmem_cache *s, void *object);

/* Are the bytes past that size red zone (kernel slub_debug_orig_size() with SLAB_RED_ZONE)? */
static inline bool slub_kmalloc_redzone(const struct kmem_cache *s)
{
	const slab_flags_t f = SLAB_STORE_USER | SLAB_KMALLOC | SLAB_RED_ZONE;

	return (s->flags & f) == f;
}
void __slub_free_slow(struct kmem_cache *s, struct page *head, void *x, unsigned long caller);

/* The caller of the function the fast path is inlined into (kernel _RET_IP_). */
#define _RET_IP_	((unsigned long)__builtin_return_address(0))

/* slub_bulk.c.  Objects from slabs into @p, at most @n, for a sheaf refill (counted as
 * SHEAF_REFILL).  Returns how many. */
unsigned int __slub_alloc_from_slabs(struct kmem_cache *s, struct kmem_cache_cpu *c, gfp_t gfp,
				     unsigned int n, void **p);
/* slub.c.  The same for a thread's first refills, from the node's partial slabs (shared). */
unsigned int __slub_refill_shared(struct kmem_cache *s, struct kmem_cache_cpu *c, gfp_t gfp,
				  unsigned int n, void **p);
/* Objects of @s (checked) back to their slabs: a sheaf flush, a bulk free. */
void __slub_free_to_slabs(struct kmem_cache *s, struct kmem_cache_cpu *c, size_t n, void **p);
/* The free key of each of @p[0..n), as a flush checks it: reported and written again if bad. */
void sheaf_check_keys(struct kmem_cache *s, unsigned int n, void **p);
/* slub_sheaf.c: is @x in one of the barn's newest full sheaves?  (A double free's look.) */
bool barn_holds(struct kmem_cache *s, const void *x);

void report_double_free(struct kmem_cache *s, const void *x);


/* slub_sheaf.c: the slow paths of the sheaf layer. */
void *sheaf_alloc_slow(struct kmem_cache *s, struct kmem_cache_cpu *c, gfp_t gfp);
bool sheaf_free_slow(struct kmem_cache *s, struct kmem_cache_cpu *c, void *x);
size_t sheaf_alloc_bulk(struct kmem_cache *s, struct kmem_cache_cpu *c, size_t n, void **p);
size_t sheaf_free_bulk(struct kmem_cache *s, struct kmem_cache_cpu *c, size_t n, void **p);
void sheaf_free_bulk_fit(struct kmem_cache *s, struct kmem_cache_cpu *c, size_t n, void **p);
/* slub_bulk.c: frees @p[0..size) to their slabs, reporting what fails a check. */
void free_bulk_slabs(struct kmem_cache *s, struct kmem_cache_cpu *c, size_t size, void **p);
void sheaf_flush_thread(struct kmem_cache *s, struct kmem_cache_cpu *c);
void sheaf_retire_thread(struct kmem_cache *s, struct kmem_cache_cpu *c);
void barn_init(struct kmem_cache *s);
void barn_shrink(struct kmem_cache *s);
unsigned long barn_objects(struct kmem_cache *s);
unsigned long barn_reap(struct kmem_cache *s, struct kmem_cache_cpu *c, unsigned long long now);
extern unsigned int slub_reap_ms;
unsigned long sheaf_thread_objects(struct kmem_cache_cpu *c);
void sheaf_fork_prepare(void);
void sheaf_fork_parent(void);
void sheaf_fork_child(void);
int slub_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t size, void **p);
void slub_free_bulk(struct kmem_cache *s, size_t size, void **p);
int slub_cache_create(struct kmem_cache *s);
/* The preferred slab of a cache slub_cache_create() would make now (no ctor). */
int slub_probe_slab(unsigned int size, unsigned int align, slab_flags_t flags, unsigned int order_cap,
		    unsigned int *slab_bytes, unsigned int *objects);
void slub_cache_destroy(struct kmem_cache *s);
int slub_shrink(struct kmem_cache *s);
int slub_init(void);
/* fork(): SLUB's own locks (the thread registry, the sheaf pools); slub_backend.c adds the caches'. */
void slub_fork_prepare(void);
void slub_fork_parent(void);
void slub_fork_child(void);
size_t slub_ksize(const struct kmem_cache *s);
void slub_set_min_free_watermark(struct kmem_cache *s, unsigned long ratio);
unsigned long slub_thrash_ratio(const struct kmem_cache *s);
int slub_set_cpu_partial(struct kmem_cache *s, unsigned int objects);
/* Sum of a stat over live threads and exited ones; clear sets all to 0. */
unsigned long slub_stat_sum(struct kmem_cache *s, enum stat_item si, unsigned long *per_thread,
			    int max_threads, int *nr_threads);
void slub_stat_clear(struct kmem_cache *s, enum stat_item si);
struct slub_info {
	unsigned long active_objs, num_objs, active_slabs, num_slabs;
	unsigned long cpu_slabs, partial, objects_partial, cpu_partial_objs, cpu_partial_slabs;
};
void slub_get_info(struct kmem_cache *s, struct slub_info *info);
/*
 * Cpu partial slabs of each live thread using @s (sysfs slabs_cpu_partial):
 * slabs[i] for the i-th such thread, in the order slub_stat_sum() reports
 * per-thread values.  Returns how many entries were filled (<= max_threads).
 */
int slub_cpu_partial_per_thread(struct kmem_cache *s, unsigned int *slabs, int max_threads);
/* Check every slab of @s on the node lists; returns the number of errors. */
long slub_validate(struct kmem_cache *s);
/* Flush this thread's cpu slab and partials of @s (kernel flush_slab). */
void slub_flush_this_thread(struct kmem_cache *s);
/*
 * Look at each of this thread's slots now, as its slow paths do every
 * slub_reap_events: give back what a slot that allocated nothing since the
 * last look holds, and the full sheaves each cache's barn did not give out.
 */
void slub_reap_thread(void);
/* A slow path (or a bulk call) of this thread is done: every so many, slub_reap_thread(). */
void slub_reap_tick(void);
/*
 * An allocation of the thread's slot @c went past main (a swap with the
 * spare, a sheaf from the barn, a refill): the slot is in use this reap
 * epoch, whatever its counters say (slub_thread.c).
 */
extern __thread uint8_t slub_reap_epoch __attribute__((tls_model("initial-exec")));
static inline void slub_reap_note_alloc(struct kmem_cache_cpu *c)
{
	c->reap_epoch = slub_reap_epoch;
}
/* True while this thread reaps, or runs a constructor (whose kmallocs must not reap the slab being built). */
extern __thread bool slub_reap_busy __attribute__((tls_model("initial-exec")));

static inline void slub_run_ctor(struct kmem_cache *s, void *object)
{
	bool busy = slub_reap_busy;

	slub_reap_busy = true;
	s->ctor(object);
	slub_reap_busy = busy;
}
/* Tests: called while a reap holds a slot of @s tagged, and after it untagged it. */
extern void (*slub_reap_claimed_hook)(struct kmem_cache *s);
extern void (*slub_reap_restored_hook)(struct kmem_cache *s);

/* ---- fast paths ---------------------------------------------------- */

/* The slab of @x, NULL if @x is in no slab; through the page map (slab_map_word()). */
static inline struct slab *virt_to_slab(const void *x)
{
	unsigned long idx = ((uintptr_t)x - (uintptr_t)mm_model.base) >> PAGE_SHIFT;

	if (unlikely(idx >= mm_online_pages()))
		return NULL;
	uint32_t word = __atomic_load_n(&mm_model.page_map[idx], __ATOMIC_RELAXED);
	struct page *head = mm_model.mem_map + (idx - (word >> SLAB_MAP_HEAD_SHIFT));

	if (unlikely(!PageSlab(head)))
		return NULL;
	/* Not NULL: the callers' tests for NULL then cost nothing more. */
	if (!head)
		__builtin_unreachable();
	return page_slab(head);
}

/* The slab of @x, which is known to be an object of a slab (it was checked). */
static inline struct slab *object_slab(const void *x)
{
	return page_slab(slab_map_head(__virt_to_page(x), page_map_get(x)));
}

/*
 * Is @x the start of an object in @slab? (cheap, no division)  obj_base and
 * obj_span are plain reads, as slab_cache is: they are set before the slab
 * is published and fixed while it is one, and the caller got @x from an
 * allocation that saw them.  An atomic load would not be folded into the
 * subtraction and the compare: two instructions more on every free.
 */
static inline bool slab_obj_valid(const struct kmem_cache *s, struct slab *slab, const void *x)
{
	uintptr_t off = (uintptr_t)x - slab->obj_base;

	return off < slab->obj_span && offset_is_multiple(off, s->div_magic);
}

/*
 * memset() of @object's object_size bytes, returning it: a call the fast
 * paths make as their last (a jump), so they need no stack frame of their
 * own for it (an inline memset() cost kmem_cache_alloc() two instructions
 * for every allocation, to keep the stack aligned).
 */
__attribute__((returns_nonnull)) void *slub_zero_object(struct kmem_cache *s, void *object);

/*
 * The fast path on a thread's slot @c: NULL where it would take the slow
 * path.  The cache is needed only for a cpu freelist pop and __GFP_ZERO,
 * so it is read from the slot there (a slot this thread does not use has
 * no objects, so its NULL cache is never read).
 */
static __attribute__((always_inline)) inline void *slub_alloc_slot(struct kmem_cache_cpu *c, gfp_t gfp)
{
	void *object = c->hot;

	if (likely(object)) {
		/* hot is objs[n - 1]: the next top comes up, objs[-1] a NULL guard. */
		unsigned int n = c->count;

		c->hot = c->objs[(long)n - 2];
		c->count = n - 1;
		stat_inc(c, ALLOC_PCS);
	} else if (likely(object = c->freelist)) {
		c->freelist = get_freepointer(c->cache, object);
		stat_inc(c, ALLOC_FASTPATH);
	} else {
		return NULL;
	}
	if (unlikely(gfp & __GFP_ZERO))
		return slub_zero_object(c->cache, object);
	return object;
}

/* slub_alloc()'s fast path alone: NULL where it would take the slow path. */
static __attribute__((always_inline)) inline void *slub_alloc_fast(struct kmem_cache *s, gfp_t gfp)
{
	return slub_alloc_slot(&slub_this->cpu[s->index], gfp);
}

/* SLUB's own callers (bulk): the fast path, then SLUB's slow path. */
static __attribute__((always_inline)) inline void *slub_alloc(struct kmem_cache *s, gfp_t gfp)
{
	void *object = slub_alloc_fast(s, gfp);

	return likely(object) ? object : __slub_alloc_slow(s, gfp, _RET_IP_, 0);
}

/*
 * The double-free check on every free (glibc's tcache key, 2.29): a free
 * that puts an object in a sheaf or on the cpu freelist writes this
 * per-process random word into it, at s->free_key_off; a free that finds
 * it there already looks for the object among the free ones (this
 * thread's sheaves and cpu freelist, the barn, the slab's freelist:
 * slub_object_is_free()) and reports a double free only when it is really
 * there.  An allocation does not clear it (a store on every allocation):
 * a program that frees a block again without having written that word
 * pays a look, and nothing is reported.  Odd, so never an object address.
 * It replaces the two compares with the top of the sheaf (the last free),
 * which it covers: the pair costs one instruction more.
 */
extern uintptr_t slub_free_key __attribute__((visibility("hidden")));
struct kmem_cache_cpu;
/* slub.c: a free found the free key in @x: is it among the free objects this thread can see? */
bool slub_object_is_free(struct kmem_cache *s, struct slab *slab, struct kmem_cache_cpu *c, void *x);

static inline uintptr_t *slub_free_key_word(const struct kmem_cache *s, void *x)
{
	return (uintptr_t *)((char *)x + s->free_key_off);
}

/*
 * The word's first byte is compared before the word: a program that has
 * just stored a byte (a flag, an empty string's NUL) or a 32-bit field at
 * the word's start would make a load of the whole word wait until that
 * store leaves the store buffer (a load wider than the store it overlaps
 * is not forwarded: some 10-15 cycles), while a one-byte load is always
 * served from the store.  The key's low byte (0xa5, slub_thread.c) tells
 * most blocks apart; the whole word is read only when that byte matches.
 */
static __attribute__((always_inline)) inline bool slub_free_keyed(const struct kmem_cache *s, void *x)
{
	const uintptr_t *w = slub_free_key_word(s, x);

	return unlikely(*(const unsigned char *)w == (unsigned char)s->free_key) &&
	       *w == s->free_key;
}

/*
 * @slab is virt_to_slab(x) when the caller knows it (kfree), or NULL
 * (kmem_cache_free).  With sheaves any object of @s goes into the main
 * sheaf; without, a free into this thread's cpu slab needs no struct page,
 * just the slot's object range.  The checks keep bad frees from corrupting
 * anything: a foreign pointer, another cache's object, a pointer into the
 * middle of a slot, an object already free (the free key).  Everything else goes
 * to the slow path's full checks and reports.
 */
static __attribute__((always_inline)) inline void __slub_free_ip(struct kmem_cache *s,
								 uint32_t slot_offset,
								 struct slab *slab, void *x,
								 unsigned long caller)
{
	{
		struct kmem_cache_cpu *c = slub_slot(slub_this, slot_offset);
		unsigned int n = c->count;

		if (likely(n < c->cap)) {
			if (!slab)
				slab = virt_to_slab(x);
			/*
			 * inuse 0: every object of the slab is free, so x is
			 * too.  The slab's state is read before objs, which the
			 * push then needs no second load of.
			 */
			if (likely(slab) && likely(slab->slab_cache == s) &&
			    likely(slab_obj_valid(s, slab, x)) && likely(ss_inuse(slab_state(slab))) &&
			    likely(!slub_free_keyed(s, x))) {
				*slub_free_key_word(s, x) = s->free_key;
				/* hot not read: whatever it was, x is the top now. */
				c->objs[n] = x;
				c->count = n + 1;
				c->hot = x;
				stat_inc(c, FREE_PCS);
				return;
			}
		} else {
			uintptr_t off = (uintptr_t)x - c->base;

			if (likely(off < c->span) &&
			    likely(offset_is_multiple(off, s->div_magic)) &&
			    likely(x != c->freelist) && likely(!slub_free_keyed(s, x))) {
				/* Before the free pointer, which may share its word. */
				*slub_free_key_word(s, x) = s->free_key;
				set_freepointer(s, x, c->freelist);
				c->freelist = x;
				stat_inc(c, FREE_FASTPATH);
				return;
			}
		}
	}
	/* The miss path is the back-end's: SLUB's own, or the one chosen at boot (fastpath.h). */
	slab_ops.free(s, slab_page(slab), x, caller ? caller : _RET_IP_);
}

/*
 * @caller 0: _RET_IP_ of the function this is inlined into, read on the
 * miss only (an argument read before the fast path costs every free one).
 */
#define __slub_free(s, slot_offset, slab, x)	__slub_free_ip(s, slot_offset, slab, x, 0)

static __attribute__((always_inline)) inline void slub_free(struct kmem_cache *s,
							    struct slab *slab, void *x)
{
	__slub_free(s, slab_slot_offset(s->index), slab, x);
}

/*
 * The free fast path's own constants of each cache, by slot index (a slab
 * page's word names the slot): div_magic(size) when a free of the cache
 * may be decided from the page map word alone (slub_free_ptr()), else 0,
 * which no offset passes.  Dense (a program's caches in a few lines), so
 * a free reads neither the slab's struct page nor the cache.  Set when
 * the cache is made, before any slab of it exists; 0 again when its
 * index is given back.
 */
extern uint64_t slub_free_magic[KMEM_MAX_CACHES] __attribute__((visibility("hidden")));

/*
 * slub_free_ptr() when the page map word alone did not decide: the free
 * through the slab and its cache (slub.c).  Out of line, so that the word's
 * path keeps its registers to itself (no saves).
 */
void __slub_free_word(void *x, unsigned long idx, uint32_t word, unsigned long caller);

/* The free key's low byte (slub_thread.c sets it): the first compare needs no load. */
#define SLUB_FREE_KEY_LOW	0xa5

/*
 * kfree() and free() of any pointer @x: false if @x is in no slab page (or
 * kmem's memory does not hold it), for the caller's slow path.  The slot
 * comes from the page map, indexed by @x's pfn, not via the head and its
 * cache: a free and the next allocation's pop form a chain of dependent
 * loads through the slot's hot word, and the free's store address is on
 * it.  Pointer -> pfn -> map word -> store is one shift and one load
 * (through the head and its cache it would be three loads: a
 * kmem_cache_alloc + kfree pair took 11.5 ns that way, 9.1 this way).  A
 * slab page's word is never 0 and every other page's is, so there is no
 * PG_slab test and no struct page of @x's own page to compute (the words
 * are set last when a slab is published and cleared first when it is
 * discarded, see publish_slab_uncounted()).  One index, pfn - base_pfn,
 * serves the range check and the map, and NULL fails the range check
 * (free(NULL) needs no test of its own).
 *
 * The push into the slot's main sheaf needs no struct slab and no
 * kmem_cache either (each a cache line, and a chain of dependent loads
 * behind the map word: larson's free() missed L1 1.6 times a call on
 * them).  Every check of __slub_free() is made, or implied, from the word,
 * the cache's constant in slub_free_magic and the object's first word:
 * - the slab and its cache: the word names the slot, and the slot's index
 *   is the cache's (the words are written from slab->slab_cache->index);
 * - an object's start: the offset from the slab's start (the page's
 *   distance from the head in the word, the in-page offset from @x) is a
 *   multiple of the size, where the cache's objects start at the slab's
 *   start (no left red zone: a 0 magic otherwise);
 * - not in the tail past the last object: the in-page offset is below the
 *   page's limit in the word;
 * - not free already: the free key in its first word, which every free
 *   object of such a cache carries, on the slab's freelist too (a new
 *   slab's objects are keyed when made: new_slab(), and so are released
 *   objects coming back, slab_unrelease()), which covers a free into a
 *   slab all of whose objects are free (inuse 0).  Caches whose free
 *   pointer shares the key's word (8-byte objects) keep magic 0.
 * Anything that fails, or a full main, goes to __slub_free() as before.
 */
static __attribute__((always_inline)) inline bool slub_free_ptr(void *x)
{
	/* Online pages first (acquire): base_pfn is set before memory comes online. */
	unsigned long online = mm_online_pages();
	unsigned long idx = ((uintptr_t)x >> PAGE_SHIFT) - mm_model.base_pfn;

	if (unlikely(idx >= online))
		return false;
	uint32_t word = __atomic_load_n(&mm_model.page_map[idx], __ATOMIC_RELAXED);

	if (unlikely(!word))
		return false;
	uint32_t slot = slab_map_slot(word);
	struct kmem_cache_cpu *c = slub_slot(slub_this, slot);
	uint32_t in_page = (uint32_t)(uintptr_t)x & (PAGE_SIZE - 1);
	uint32_t off = in_page | ((word >> SLAB_MAP_HEAD_SHIFT) << PAGE_SHIFT);
	uint64_t magic = __atomic_load_n((const uint64_t *)((const char *)slub_free_magic +
							   slot / (sizeof(struct kmem_cache_cpu) / sizeof(uint64_t))), __ATOMIC_RELAXED);
	unsigned int n = c->count;

	if (likely(n < c->cap) && likely(offset_is_multiple(off, magic)) &&
	    likely(slab_map_below_lim(word, in_page)) &&
	    likely(*(const unsigned char *)x != SLUB_FREE_KEY_LOW || *(uintptr_t *)x != slub_free_key)) {
		/* hot not read: whatever it was, x is the top now. */
		c->objs[n] = x;
		c->count = n + 1;
		c->hot = x;
		/* Last: the slot's loads above go before this store to the block. */
		*(uintptr_t *)x = slub_free_key;
		stat_inc(c, FREE_PCS);
		return true;
	}
	__slub_free_word(x, idx, word, _RET_IP_);
	return true;
}

#endif /* KMEM_SLUB_H */
