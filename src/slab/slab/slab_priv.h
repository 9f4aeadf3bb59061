/* SPDX-License-Identifier: MIT */
/*
 * SLAB (the kernel's mm/slab.c, removed in 6.8) behind the back-end
 * contract (slab/backend.h): per-CPU array caches (per thread in this
 * version) in front of a node with a shared array and three slab lists.
 *
 *   geometry.c  slab layout math (order, colours, index placement)
 *   cache.c     cache create/destroy/shrink, the back-end's ops
 *   array.c     alloc/free: the array caches, refill, flush
 *   grow.c      slabs: grow (cache_init_objs), free_block, destroy
 *   thread.c    per-thread state: arrays, thread exit, fork
 *   reap.c      cache_reap (2 s) and the node's reap (4 s)
 *   tunables.c  enable_cpucache, /proc/slabinfo figures and writes, statistics
 *   debug.c     red zones, poison, last user; the reports
 *   bulk.c      the bulk API (Brouer 2015)
 *
 * "Per CPU" is per thread here: a thread's arrays are its own (no lock on
 * its alloc and free), reached from slab_this, a TLS pointer, by the
 * cache's slot number.  Other threads touch them only under
 * slab_bk_threads_lock while the owner cannot be using them (a destroyed
 * cache's, an exiting thread's).
 */
#ifndef KMEM_SLAB_SLAB_PRIV_H
#define KMEM_SLAB_SLAB_PRIV_H

#include <stdatomic.h>
#include <string.h>

#include "slab/slab.h"
#include "slab/slab/slab_geometry.h"

#define SLAB_MAX_CACHES		2048	/* caches alive at once (their slots are reused) */
#define BOOT_CPUCACHE_ENTRIES	1
#define BATCHREFILL_LIMIT	16
#define REAPTIMEOUT_AC_NS	2000000000ull	/* cache_reap: every 2 s */
#define REAPTIMEOUT_NODE_NS	4000000000ull	/* the node's part: every 4 s */
#define SLAB_LIMIT_MAX		32767U		/* the largest limit a slabinfo write sets */

/* The debug words (64-bit, as the kernel's). */
#define RED_INACTIVE	0x09F911029D74E35BULL	/* the object is free */
#define RED_ACTIVE	0xD84156C5635688C0ULL	/* the object is allocated */
#define POISON_INUSE	0x5a	/* for use-uninitialised poisoning */
#define POISON_FREE	0x6b	/* for use-after-free poisoning */
#define POISON_END	0xa5	/* end-byte of poisoning */

/* A LIFO of object pointers: a thread's, or the node's shared one. */
struct array_cache {
	unsigned int avail;
	unsigned int limit;
	unsigned int batchcount;
	unsigned int touched;
	unsigned int cap;		/* entries allocated */
	unsigned int gen;		/* the cache's tunables generation it was sized for */
	void *entry[];
};

/*
 * The slab descriptor overlays the head struct page (words 1..6), as the
 * kernel's struct page did for SLAB after 2013; in the pre-2013 layout the
 * slab still reserves room for the old header (slab_geometry.h).
 */
struct slab_desc {
	unsigned long __page_flags;
	struct kmem_cache *cache;	/* word 1: page_slab_cache() */
	struct list_head slab_list;	/* slabs_partial / slabs_full / slabs_free */
	char *s_mem;			/* object 0 (slot start), after the colour */
	void *freelist;			/* the index array */
	unsigned int active;		/* objects not free in the slab */
	unsigned int colour;		/* bytes of colour before s_mem (or the array) */
};
_Static_assert(sizeof(struct slab_desc) <= offsetof(struct page, _refcount),
	       "struct slab_desc must not overlay _refcount");
_Static_assert(offsetof(struct slab_desc, cache) == offsetof(struct page, __overlay),
	       "the cache must be word 1, as page_slab_cache() reads it");

static inline struct slab_desc *page_desc(struct page *page) { return (struct slab_desc *)page; }
static inline struct page *desc_page(struct slab_desc *d) { return (struct page *)d; }

/* The kernel's struct kmem_cache_node for SLAB: one node. */
struct slab_node {
	kmem_lock_t list_lock;
	struct list_head slabs_partial;	/* partial list first: better asm code */
	struct list_head slabs_full;
	struct list_head slabs_free;
	unsigned long total_slabs;	/* length of all slab lists */
	unsigned long free_slabs;	/* length of the free slab list only */
	unsigned long free_objects;
	unsigned int free_limit;
	unsigned int colour_next;	/* per-node cache colouring */
	struct array_cache *shared;	/* shared per node */
	unsigned long long next_reap;	/* ns */
	int free_touched;		/* updated without locking */
};

/* SLAB statistics (the kernel's STATS under CONFIG_DEBUG_SLAB), slabinfo column order. */
enum slab_stat_item {
	SLAB_STAT_ALLOCED,	/* listallocs: objects taken from slabs */
	SLAB_STAT_HIGH,		/* maxobjs */
	SLAB_STAT_GROWN,
	SLAB_STAT_REAPED,
	SLAB_STAT_ERRORS,
	SLAB_STAT_MAX_FREEABLE,
	SLAB_STAT_NODE_ALLOCS,
	SLAB_STAT_NODE_FREES,
	SLAB_STAT_NODE_OVERFLOW,
	SLAB_STAT_ALLOCHIT,
	SLAB_STAT_ALLOCMISS,
	SLAB_STAT_FREEHIT,
	SLAB_STAT_FREEMISS,
	NR_SLAB_STAT_ITEMS
};

/* SLAB's part of struct kmem_cache (kmem_cache_priv()). */
struct slab_cache {
	/* Read by the fast paths: keep together. */
	unsigned int cpu_slot;		/* the cache's entry in every thread's arrays, >= 1 */
	unsigned int slow;		/* dbg | SLAB_SLOW_STATS: every object takes the slow paths */
	unsigned int free_slow;		/* slow, or no free key (SLAB_SLOW_NOKEY): every free takes the slow path */
	uintptr_t span;			/* num * size: the bytes of a slab's object slots */
	unsigned int dbg;		/* debug flags in force (red zone, poison, user) */
	/* Tunables (do_tune_cpucache()); tune_gen changes with them. */
	unsigned int batchcount, limit, shared;
	atomic_uint tune_gen;
	/* Geometry. */
	unsigned int num;		/* objects per slab */
	unsigned int gfporder;
	unsigned int colour, colour_off;
	unsigned int freelist_size;
	unsigned int mgmt_hdr;		/* bytes of the pre-2013 header before the index array */
	unsigned int obj_offset;	/* the object in its slot (red zone 1 before it) */
	unsigned int idx_size;
	unsigned int obj_size_used;	/* object bytes the debug words surround */
	enum slab_mgmt mgmt;
	bool mgmt_first;
	uint32_t reciprocal_buffer_size;	/* obj_to_index() without a division */
	struct kmem_cache *freelist_cache;	/* OFF_SLAB arrays */
	gfp_t allocflags;
	bool dying;			/* destroyed with objects left: frees go straight to slabs */
	struct slab_node node;
	atomic_ulong stat[NR_SLAB_STAT_ITEMS];
};

static inline struct slab_cache *SLABC(struct kmem_cache *s)
{
	return (struct slab_cache *)kmem_cache_priv(s);
}

/* A thread's state: its arrays, by cache slot. */
struct slab_thread {
	struct list_head node;		/* slab_bk_threads */
	unsigned int slow_events;	/* slow paths since the last reap check */
	unsigned long long next_reap;	/* ns: this thread's cache_reap */
	unsigned int nr_arrays;
	struct array_cache *ac[SLAB_MAX_CACHES];
};

extern struct slab_thread slab_thread_none;
extern __thread struct slab_thread *slab_this __attribute__((tls_model("initial-exec")));
extern kmem_lock_t slab_bk_threads_lock;
extern struct list_head slab_bk_threads;

/* Boot parameters. */
extern enum slab_layout_rules slab_bk_layout;
extern unsigned int slab_bk_freelist_idx;
extern bool slab_bk_stats;

/* ---- inline helpers ---------------------------------------------------- */

static inline void *index_to_obj(struct slab_cache *c, struct kmem_cache *s, struct slab_desc *d,
				 unsigned int idx)
{
	(void)c;
	return d->s_mem + (size_t)idx * s->size;
}

/* The slot index of slot start @slot (a reciprocal multiply, as the kernel's). */
static inline unsigned int obj_to_index(struct slab_cache *c, struct slab_desc *d, const void *slot)
{
	uint32_t off = (uint32_t)((const char *)slot - d->s_mem);

	return (uint32_t)(((uint64_t)off * c->reciprocal_buffer_size) >> 32);
}

/* The index array's entry @i (the patch's "one likely branch" per access). */
static inline unsigned int get_free_obj(struct slab_cache *c, struct slab_desc *d, unsigned int i)
{
	if (likely(c->idx_size == 1))
		return ((unsigned char *)d->freelist)[i];
	if (c->idx_size == 2)
		return ((unsigned short *)d->freelist)[i];
	return ((unsigned int *)d->freelist)[i];
}

static inline void set_free_obj(struct slab_cache *c, struct slab_desc *d, unsigned int i,
				unsigned int v)
{
	if (likely(c->idx_size == 1))
		((unsigned char *)d->freelist)[i] = (unsigned char)v;
	else if (c->idx_size == 2)
		((unsigned short *)d->freelist)[i] = (unsigned short)v;
	else
		((unsigned int *)d->freelist)[i] = v;
}

static inline void slab_stat(struct slab_cache *c, enum slab_stat_item i, long v)
{
	if (unlikely(slab_bk_stats))
		atomic_fetch_add_explicit(&c->stat[i], (unsigned long)v, memory_order_relaxed);
}

/*
 * The double-free check on every free (the free key, as SLUB's: slub.h):
 * a free writes the process's random word, s->free_key, into the object's
 * first word; a free that finds it there already takes the slow path,
 * which looks for the object where a free one can be (this thread's array,
 * the node's shared array, its slab's index array: slab_bk_object_is_free())
 * and reports a double free only when it is there.  Not in caches whose
 * free objects keep their bytes (a constructor, SLAB_TYPESAFE_BY_RCU) or
 * have no word: those free through the slow path, which compares with the
 * array's top entry, and their slab's index array catches the rest when
 * the object goes back to it.
 */
extern uintptr_t slab_bk_free_key;
bool slab_bk_object_is_free(struct kmem_cache *s, struct array_cache *ac, struct page *head, void *x);

/*
 * The free fast path (a free and each object of a bulk free): the page's
 * cache word is @s's, the offset from s_mem inside the slots and a multiple
 * of the slot (no division), no free key in the object; then the key
 * written and a push.  False: take the slow path, which checks and reports.
 */
static inline bool slab_free_fast(struct kmem_cache *s, struct slab_cache *c, struct array_cache *ac,
				  struct page *head, void *x)
{
	if (!head)
		head = virt_to_head_page_checked(x);
	/* Word 1 names the cache on its slab pages only (cleared when a slab goes). */
	if (likely(head != NULL) && likely(page_slab_cache(head) == s) && likely(ac != NULL) &&
	    likely(!c->free_slow)) {
		uintptr_t off = (uintptr_t)x - (uintptr_t)page_desc(head)->s_mem;

		if (likely(off < c->span) && likely(offset_is_multiple(off, s->div_magic))) {
			unsigned int n = ac->avail;

			/* The key covers the top entry (the last free): it holds the key. */
			if (likely(n < ac->limit) && likely(*(uintptr_t *)x != s->free_key)) {
				*(uintptr_t *)x = s->free_key;
				ac->entry[n] = x;
				ac->avail = n + 1;
				return true;
			}
		}
	}
	return false;
}

/* ---- array.c ---------------------------------------------------------- */
void *slab_bk_alloc(struct kmem_cache *s, gfp_t gfp, unsigned long caller, unsigned int orig_size);
void slab_bk_free(struct kmem_cache *s, struct page *head, void *x, unsigned long caller);
void slab_bk_kfree(struct page *head, void *x, unsigned long caller);
void *cache_alloc_refill(struct kmem_cache *s, gfp_t gfp);
void cache_flusharray(struct kmem_cache *s, struct array_cache *ac);
/* The checks of a free (foreign, wrong cache, interior pointer); false: reported, not freed. */
bool slab_bk_free_checks(struct kmem_cache *s, struct page **headp, void *x, const char *func);
/* A slot's object handed out / taken back (debug checks, zeroing); NULL: a bad one, dropped. */
void *slab_bk_alloc_finish(struct kmem_cache *s, void *slot, gfp_t gfp, unsigned long caller);
/* This thread's array for @s, set up if needed; NULL if the thread is exiting or the cache dying. */
struct array_cache *slab_cpu_array(struct kmem_cache *s);

/* ---- grow.c ------------------------------------------------------------ */
/* A new slab's pages, objects constructed; not on a list.  NULL: no memory. */
struct slab_desc *cache_grow(struct kmem_cache *s, gfp_t gfp);
void *slab_get_obj(struct kmem_cache *s, struct slab_desc *d);
/* Is slot index @idx free in @d (on its index array)?  list_lock held. */
bool slab_idx_free(struct slab_cache *c, struct slab_desc *d, unsigned int idx);
/* Give @nr slots back to their slabs; list_lock held; whole free slabs past free_limit go on @list. */
void free_block(struct kmem_cache *s, void **objs, unsigned int nr, struct list_head *list);
/* Free the slabs of @list (list_lock not held). */
void slabs_destroy(struct kmem_cache *s, struct list_head *list);
/* Take up to @max free slabs off the free list (list_lock held) onto @list; returns how many. */
unsigned int drain_freelist_locked(struct kmem_cache *s, unsigned int max, struct list_head *list);
/* Put a new slab on the node's lists (list_lock held). */
void slab_add_new(struct kmem_cache *s, struct slab_desc *d);
/* What is at @x in @head's slab (the contract's obj_info). */
void slab_bk_obj_info(struct page *head, const void *x, struct kmem_obj *o);

/* ---- thread.c ---------------------------------------------------------- */
int slab_bk_thread_init(void);
struct array_cache *alloc_arraycache(unsigned int limit, unsigned int batchcount);
void free_arraycache(struct array_cache *ac);
int slab_get_cpu_slot(void);
void slab_put_cpu_slot(unsigned int slot);
/* @s is ready: its slot names it (exit, fork and flush find its arrays). */
void slab_slot_publish(struct kmem_cache *s);
/* Drain every thread's array of @s (destroy): slab_bk_threads_lock taken here. */
void drain_cpu_caches(struct kmem_cache *s);
/* The calling thread's arrays go back to the node: one cache (@s) or all (NULL). */
void slab_bk_flush_this_thread(struct kmem_cache *s);
void slab_bk_flush_thread(void);
void slab_bk_fork_prepare(void);
void slab_bk_fork_parent(void);
void slab_bk_fork_child(void);

/* ---- reap.c ------------------------------------------------------------ */
void slab_bk_reap_tick(void);
/* drain_array(): part of an untouched array back to the node; list_lock not held. */
void drain_array(struct kmem_cache *s, struct array_cache *ac, bool whole);

/* ---- tunables.c -------------------------------------------------------- */
int enable_cpucache(struct kmem_cache *s);
void slab_bk_get_slabinfo(struct kmem_cache *s, struct slabinfo *info);
void slab_bk_show_stats(struct seq_buf *m, struct kmem_cache *s);
int slab_bk_slabinfo_write(const char *buf);
/* Bring @ac of this thread to the cache's tunables; may return a new array. */
struct array_cache *slab_resize_array(struct kmem_cache *s, struct array_cache *ac);

/* ---- debug.c ----------------------------------------------------------- */
#define SLAB_DEBUG_FLAGS	(SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER)
#define SLAB_SLOW_STATS		0x80000000u	/* in slab_cache.slow: statistics are counted */
#define SLAB_SLOW_NOKEY		0x40000000u	/* in slab_cache.free_slow: a free object's bytes are not ours to write */
void slab_debug_init_obj(struct kmem_cache *s, void *slot);
/* An object leaves for the user: checks and marks; false if it is corrupt (reported). */
bool slab_debug_alloc(struct kmem_cache *s, void *slot, unsigned long caller);
/* An object comes back: checks and marks; false if it must not be freed (reported). */
bool slab_debug_free(struct kmem_cache *s, void *slot, unsigned long caller);
long slab_bk_validate(struct kmem_cache *s);
void slab_bk_double_free(struct kmem_cache *s, const void *x);
/* kmem_cache_destroy() found live objects: the kernel's report. */
void slab_bk_report_leaks(struct kmem_cache *s, unsigned long active);

/* ---- bulk.c ------------------------------------------------------------ */
int slab_bk_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t n, void **p);
void slab_bk_free_bulk(struct kmem_cache *s, size_t n, void **p);

#endif /* KMEM_SLAB_SLAB_PRIV_H */
