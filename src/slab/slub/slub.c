// SPDX-License-Identifier: MIT
/*
 * SLUB slow paths (kernel mm/slub.c, classic per-CPU-slab design).
 *
 * A slab is "frozen" while a thread owns it: as its cpu slab, or on its
 * partial list.  Only the owner allocates from a frozen slab; anyone may free
 * into it with one compare-and-swap on slab->state.  Unfrozen slabs are on
 * the node partial list or, when full, on no list at all.  List changes
 * happen under the node's list_lock; a free that may change list membership
 * (first free into a full slab, last free of a slab) takes the lock before
 * its compare-and-swap, so the two never race.
 */
#include <errno.h>
#include <string.h>

#include "core/boot.h"
#include "core/cmdline.h"
#include "slab/slub/slub_internal.h"

#define THRASH_MAX	4
#define THRASH_ON	2

/* Install @slab as the cpu slab (NULL: none); the free fast path checks its range. */
static void set_cpu_slab(struct kmem_cache *s, struct kmem_cache_cpu *c, struct slab *slab)
{
	__atomic_store_n(&c->slab, slab, __ATOMIC_RELAXED);	/* sysfs reads it from other threads */
	/* With sheaves every free goes to the sheaf (and its checks) first. */
	if (slab && !slub_of(s)->sheaf_capacity) {
		c->base = (uintptr_t)slab_address(slab) + s->red_left_pad;
		c->span = slab->obj_span;	/* also its released objects (slub_release.c) */
	} else {
		c->base = 0;
		c->span = 0;
	}
}

/* ---- slabs --------------------------------------------------------- */

/*
 * Pages for a new slab, with the kernel's order fallback; the slab is not
 * set up yet.  @whole: for a bulk that takes every object of slabs of the
 * cache's preferred order (@slub_of(s)->oo), which it gets if it can.
 */
struct slab *allocate_slab(struct kmem_cache *s, gfp_t gfp, struct kmem_cache_cpu *c, bool whole,
			   unsigned int *objects)
{
	gfp_t alloc_gfp = (gfp & ~(__GFP_ZERO | GFP_MOVABLE_MASK)) | __GFP_COMP |
			  ((s->flags & SLAB_RECLAIM_ACCOUNT) ? __GFP_RECLAIMABLE : 0);
	struct kmem_cache_order_objects oo = slub_of(s)->oo;
	struct page *page = NULL;

	/*
	 * A young cache with slabs past slub_max_order (kmem_cache_create_order():
	 * malloc's classes past 4 KiB in 128 KiB slabs), or one its user asked
	 * it of (kmem_cache_small_first(): malloc's classes), grows its slabs:
	 * its first is of its minimum order, each next one an order more, up
	 * to the cache's.  A program with a few objects of it pays about their
	 * pages, not a whole slab's (a new slab is touched through, its
	 * freelist); one with many, a few small slabs more (4512-byte objects:
	 * 1, 3, 7, 14, then 29 a slab).  A bulk that takes whole slabs gets the
	 * cache's.
	 */
	if (unlikely(s->order_cap || __atomic_load_n(&s->small_first, __ATOMIC_RELAXED)) && !whole) {
		long nr = atomic_load_explicit(&slub_of(s)->node.nr_slabs, memory_order_relaxed);

		if (nr < (long)oo_order(oo) - (long)oo_order(slub_of(s)->min))
			oo = oo_make(oo_order(slub_of(s)->min) + (nr > 0 ? (unsigned int)nr : 0), s->size);
	}

	/*
	 * A higher order is nice to have: try it quietly (never __GFP_NOFAIL)
	 * and, as the kernel does for a caller that may reclaim, without
	 * reclaim.  Without direct reclaim and with __GFP_NORETRY, kmem's page
	 * allocator does not grow memory for it either: when free memory is
	 * fragmented, a min-order slab made of the fragments is better than
	 * fresh pages.
	 */
	if (oo_order(oo) > oo_order(slub_of(s)->min)) {
		gfp_t try_gfp = (alloc_gfp | __GFP_NOWARN | __GFP_NORETRY) & ~__GFP_NOFAIL;

		if (try_gfp & __GFP_DIRECT_RECLAIM)
			try_gfp = (try_gfp | __GFP_NOMEMALLOC) & ~__GFP_RECLAIM;
		page = alloc_pages(try_gfp, oo_order(oo));
	}
	if (!page) {
		bool fallback = oo_order(oo) > oo_order(slub_of(s)->min);

		if (fallback)
			oo = slub_of(s)->min;
		page = alloc_pages(alloc_gfp, oo_order(oo));
		if (!page)
			return NULL;
		/* Counted once the smaller slab exists, as in the kernel. */
		if (fallback)
			stat_s(s, c, ORDER_FALLBACK, 1);
	}
	/*
	 * A new slab is touched through at once (its freelist): fault it in,
	 * with the rest of its 64 KiB group, in one go.  Not a thread's first
	 * slab of the cache: a thread that allocates a little from many
	 * caches would fault in whole groups it never uses (1000 threads, one
	 * object in each of 10 classes: RSS 257 -> 208 MB); one that goes on
	 * gets it from its second.
	 */
	if (c && c->stat[ALLOC_SLAB])
		populate_pages(page, oo_order(oo));
	struct slab *slab = page_slab(page);
	__atomic_store_n(&slab->slab_cache, s, __ATOMIC_RELAXED);
	*objects = oo_objects(oo);
	__atomic_store_n(&slab->obj_base, (uintptr_t)slab_address(slab) + s->red_left_pad,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&slab->obj_span, *objects * s->size, __ATOMIC_RELAXED);
	slab_released_init(slab, oo_order(oo));
	return slab;
}

/* Account @slab (state already set) and publish it as a slab. */
/* Slab counts and page accounting, by @nr slabs of @objects objects and @pages pages in all. */
void count_slabs(struct kmem_cache *s, long nr, long objects, long pages)
{
	atomic_fetch_add_explicit(&slub_of(s)->node.nr_slabs, nr, memory_order_relaxed);
	atomic_fetch_add_explicit(&slub_of(s)->node.total_objects, objects, memory_order_relaxed);
	atomic_fetch_add_explicit(&slub_of(s)->node.nr_pages, pages, memory_order_relaxed);
	mod_zone_page_state((s->flags & SLAB_RECLAIM_ACCOUNT) ? NR_SLAB_RECLAIMABLE
							       : NR_SLAB_UNRECLAIMABLE, pages);
}

/*
 * Publish @slab (state set, counted) as a slab: its page map words, which
 * the free fast path trusts (slub_free_ptr()), then PG_slab, which the
 * other paths check, last.  A free of a foreign pointer racing with the
 * slab's making (a double free of an object of the slab these pages were
 * before) must not see a half-built slab.  Nothing hands out a new slab's
 * objects before this.
 */
void publish_slab_uncounted(struct slab *slab)
{
	struct page *page = slab_page(slab);
	unsigned int index = slab->slab_cache->index;
	/* Where the tail past the last object begins, from the slab's start. */
	unsigned long end = slab->obj_base + slab->obj_span - (uintptr_t)slab_address(slab);

	/* Release stores: after the slab's fields and state (x86: plain moves). */
	for (unsigned int i = 0; i < (1u << compound_order(page)); i++)
		page_map_publish(page + i, slab_map_word(index, i, end));
	page_set_flag(page, PG_slab);
}

static void publish_slab(struct kmem_cache *s, struct slab *slab, unsigned int objects)
{
	count_slabs(s, 1, objects, 1L << compound_order(slab_page(slab)));
	publish_slab_uncounted(slab);
}

struct slab *new_slab(struct kmem_cache *s, gfp_t gfp, struct kmem_cache_cpu *c, void **freelist)
{
	unsigned int objects;
	struct slab *slab = allocate_slab(s, gfp, c, false, &objects);

	if (!slab)
		return NULL;
	char *base = slab_address(slab);
	void *prev = NULL;
	const bool keyed = slub_free_key_apart(s);

	for (int i = (int)objects - 1; i >= 0; i--) {
		void *obj = base + (size_t)i * s->size + s->red_left_pad;
		if (s->ctor)
			slub_run_ctor(s, obj);
		/* Free objects carry the free key (slub_free_ptr()), these from the start. */
		if (keyed)
			*slub_free_key_word(s, obj) = s->free_key;
		set_freepointer(s, obj, prev);
		prev = obj;
	}
	*freelist = prev;
	atomic_store_explicit(&slab->state, ss_make(slab, NULL, objects, objects, true),
			      memory_order_relaxed);
	publish_slab(s, slab, objects);
	return slab;
}

/* Back to the page allocator; the caller has uncounted it. */
void discard_slab_uncounted(struct slab *slab)
{
	struct page *page = slab_page(slab);
	unsigned int order = compound_order(page);

	/*
	 * Unpublished in the reverse order: the map words first, so that a
	 * racing free of a stale pointer finds no slab here rather than one
	 * whose fields are being cleared; its pages may become anything.
	 */
	for (unsigned int i = 0; i < (1u << order); i++)
		page_map_set(page + i, 0);
	page_clear_flag(page, PG_slab);
	slab_released_drop(slab->slab_cache, slab);
	memset(&slab->slab_cache, 0, sizeof(*slab) - offsetof(struct slab, slab_cache));
	__free_pages(page, order);
}

void discard_slab(struct kmem_cache *s, struct slab *slab)
{
	count_slabs(s, -1, -(long)ss_objects(slab_state(slab)),
		    -(1L << compound_order(slab_page(slab))));
	discard_slab_uncounted(slab);
}

/*
 * nr_partial changes under list_lock but get_partial() peeks at it without
 * the lock, so the stores are (relaxed) atomic: a plain store racing with
 * that load is a data race (TSan reports it).
 */
void add_partial(struct kmem_cache_node *n, struct slab *slab, bool tail)
{
	__atomic_store_n(&n->nr_partial, n->nr_partial + 1, __ATOMIC_RELAXED);
	if (tail)
		list_add_tail(&slab->slab_list, &n->partial);
	else
		list_add(&slab->slab_list, &n->partial);
}

void remove_partial(struct kmem_cache_node *n, struct slab *slab)
{
	list_del(&slab->slab_list);
	__atomic_store_n(&n->nr_partial, n->nr_partial - 1, __ATOMIC_RELAXED);
}

/* Take a slab's whole freelist; a slab left with none is unfrozen (full, on no list). */
static void *get_freelist(struct kmem_cache *s, struct slab *slab, struct kmem_cache_cpu *c)
{
	uint64_t old = slab_state(slab), new;

	do {
		void *fl = ss_freelist(slab, old);
		new = ss_make(slab, NULL, ss_objects(old), ss_objects(old), fl != NULL);
	} while (!slab_state_cmpxchg(slab, &old, new) &&
		 (stat_s(s, c, CMPXCHG_DOUBLE_FAIL, 1), 1));
	return ss_freelist(slab, old);
}

/* Set or clear frozen, keeping freelist and counts; returns the new state. */
static uint64_t slab_set_frozen(struct slab *slab, bool frozen)
{
	uint64_t old = slab_state(slab), new;

	do {
		new = frozen ? (old | SS_FROZEN) : (old & ~SS_FROZEN);
	} while (!slab_state_cmpxchg(slab, &old, new));
	return new;
}

/*
 * Give a thread's partial slabs back to the node (kernel __put_partials):
 * empty ones beyond min_partial go back to the page allocator.
 */
static void put_partials(struct kmem_cache *s, struct slab *list, struct kmem_cache_cpu *c)
{
	struct kmem_cache_node *n = &slub_of(s)->node;
	struct slab *discard = NULL;

	if (!list)
		return;
	kmem_lock(&n->list_lock);
	while (list) {
		struct slab *slab = list;
		list = slab->next;
		uint64_t st = slab_set_frozen(slab, false);
		if (!ss_inuse(st) && n->nr_partial >= tun_min_partial(s)) {
			slab->next = discard;
			discard = slab;
		} else {
			add_partial(n, slab, true);
		}
	}
	kmem_unlock(&n->list_lock);
	while (discard) {
		struct slab *slab = discard;
		discard = slab->next;
		stat_s(s, c, FREE_SLAB, 1);
		discard_slab(s, slab);
	}
}

/*
 * This thread's partial list and its length.  Only the owner changes them;
 * sysfs (cpu_slabs, slabs_cpu_partial) loads them from other threads, so
 * they are stored as relaxed atomics and the slabs are never dereferenced
 * there: one may be on the node list, or freed, by then.
 */
static inline void set_cpu_partial_list(struct kmem_cache_cpu *c, struct slab *list,
					unsigned int nr)
{
	__atomic_store_n(&c->partial, list, __ATOMIC_RELAXED);
	__atomic_store_n(&c->nr_partial, nr, __ATOMIC_RELAXED);
}

static void push_cpu_partial(struct kmem_cache_cpu *c, struct slab *slab)
{
	slab->next = c->partial;
	set_cpu_partial_list(c, slab, c->nr_partial + 1);
}

static void put_cpu_partial(struct kmem_cache *s, struct kmem_cache_cpu *c, struct slab *slab)
{
	if (c->partial && c->nr_partial >= tun_cpu_partial_slabs(s)) {
		struct slab *list = c->partial;
		set_cpu_partial_list(c, NULL, 0);
		put_partials(s, list, c);
		stat_inc(c, CPU_PARTIAL_DRAIN);
	}
	push_cpu_partial(c, slab);
}

/*
 * Give the cpu slab back: merge the thread's remaining freelist into the
 * slab's, unfreeze it and file it by fullness (kernel deactivate_slab).
 * Done under list_lock so a racing last free finds it where it belongs.
 */
static void deactivate_slab(struct kmem_cache *s, struct slab *slab, void *freelist,
			    struct kmem_cache_cpu *c)
{
	struct kmem_cache_node *n = &slub_of(s)->node;
	void *tail = NULL;
	unsigned int cnt = 0;

	for (void *p = freelist; p; p = get_freepointer(s, p)) {
		tail = p;
		cnt++;
	}

	kmem_lock(&n->list_lock);
	uint64_t old = slab_state(slab), new;
	void *prior;
	do {
		prior = ss_freelist(slab, old);
		if (tail)
			set_freepointer(s, tail, prior);
		new = ss_make(slab, freelist ? freelist : prior, ss_inuse(old) - cnt,
			      ss_objects(old), false);
	} while (!slab_state_cmpxchg(slab, &old, new));

	bool discard = false;
	if (!ss_inuse(new)) {
		stat_s(s, c, DEACTIVATE_EMPTY, 1);
		if (n->nr_partial >= tun_min_partial(s))
			discard = true;
		else
			add_partial(n, slab, false);
	} else if (ss_freelist(slab, new)) {
		/* Remotely freed objects mean the slab is cold: file it at the tail. */
		if (prior) {
			stat_s(s, c, DEACTIVATE_REMOTE_FREES, 1);
			add_partial(n, slab, true);
			stat_s(s, c, DEACTIVATE_TO_TAIL, 1);
		} else {
			add_partial(n, slab, false);
			stat_s(s, c, DEACTIVATE_TO_HEAD, 1);
		}
	} else {
		stat_s(s, c, DEACTIVATE_FULL, 1);
	}
	kmem_unlock(&n->list_lock);
	if (discard) {
		stat_s(s, c, FREE_SLAB, 1);
		discard_slab(s, slab);
	}
}

/*
 * Objects the cpu slab's freelist has handed out so far: to allocations
 * (ALLOC_FASTPATH) and to sheaf refills (SHEAF_REFILL, counted as the
 * refill goes, see __slub_alloc_from_slabs).  The thrash detector compares
 * it with the watermark.
 */
static unsigned int served_mark(const struct kmem_cache_cpu *c)
{
	return __atomic_load_n(&c->stat[ALLOC_FASTPATH], __ATOMIC_RELAXED) +
	       __atomic_load_n(&c->stat[SHEAF_REFILL], __ATOMIC_RELAXED);
}

static bool thrashing(const struct kmem_cache *s, const struct kmem_cache_cpu *c)
{
	return tun_min_free_watermark(s) && c->thrash >= THRASH_ON;
}

/*
 * SLUB slab_thrash_ratio (Rientjes 2009): a cpu slab taken from a partial list that served fewer fast-path
 * allocations than the watermark before running dry is a sign of thrashing.
 * A few in a row switch the thread to picking only partial slabs with at
 * least the watermark's worth of free objects (or a new slab).
 */
static void thrash_account(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	if (!tun_min_free_watermark(s) || !c->from_partial)
		return;
	unsigned int served = served_mark(c) - c->fast_mark + 1;
	if (served < tun_min_free_watermark(s)) {
		if (c->thrash < THRASH_MAX)
			c->thrash++;
		stat_inc(c, THRASH_DETECTED);
	} else if (c->thrash) {
		c->thrash--;
	}
}

/*
 * Refill from the node partial list (kernel get_partial_node): the first
 * suitable slab becomes the cpu slab, more go to the thread's partial list
 * until it holds half of cpu_partial_slabs.
 */
static struct slab *get_partial(struct kmem_cache *s, struct kmem_cache_cpu *c,
				void **freelist, bool picky)
{
	struct kmem_cache_node *n = &slub_of(s)->node;
	struct slab *slab, *tmp, *got = NULL;
	unsigned int taken = 0;

	if (!__atomic_load_n(&n->nr_partial, __ATOMIC_RELAXED))
		return NULL;
	kmem_lock(&n->list_lock);
	list_for_each_entry_safe(slab, tmp, &n->partial, slab_list) {
		if (picky && slab_free_objects(slab) < tun_min_free_watermark(s)) {
			stat_inc(c, THRASH_SKIP_PARTIAL);
			continue;
		}
		remove_partial(n, slab);
		if (!got) {
			got = slab;
			*freelist = get_freelist(s, slab, c);
			/* An unfrozen slab on the list always has free objects. */
			stat_inc(c, ALLOC_FROM_PARTIAL);
			if (!tun_cpu_partial_slabs(s))
				break;
		} else {
			slab_set_frozen(slab, true);
			push_cpu_partial(c, slab);
			stat_inc(c, CPU_PARTIAL_NODE);
			if (++taken > tun_cpu_partial_slabs(s) / 2)
				break;
		}
	}
	kmem_unlock(&n->list_lock);
	return got;
}

/* The slow path of allocation (kernel ___slab_alloc); @c is this thread's slot. */
void *___slab_alloc(struct kmem_cache *s, gfp_t gfp, struct kmem_cache_cpu *c)
{
	struct slab *slab = c->slab;
	void *freelist;

	if (unlikely(kmem_cache_debug(s)))
		return alloc_single(s, gfp, c, 0, 0);
	if (slab) {
		/*
		 * Our lockless freelist ran dry: take what others freed
		 * meanwhile, and the objects on the slab's released pages
		 * (slub_release.c), which fault in only now that they are wanted.
		 */
		if (unlikely(slab_released(slab)))
			slab_unrelease(s, slab);
		freelist = get_freelist(s, slab, c);
		if (freelist) {
			stat_inc(c, ALLOC_REFILL);
			goto load;
		}
		set_cpu_slab(s, c, NULL);
		stat_inc(c, DEACTIVATE_BYPASS);
		thrash_account(s, c);
	}

	bool picky = thrashing(s, c);
	while (c->partial) {
		slab = c->partial;
		set_cpu_partial_list(c, slab->next, c->nr_partial - 1);
		if (picky && slab_free_objects(slab) < tun_min_free_watermark(s)) {
			stat_inc(c, THRASH_SKIP_PARTIAL);
			slab->next = NULL;
			put_partials(s, slab, c);
			continue;
		}
		freelist = get_freelist(s, slab, c);
		if (!freelist)		/* cannot happen: nobody allocates from it but us */
			continue;
		stat_inc(c, CPU_PARTIAL_ALLOC);
		goto new_cpu_slab_partial;
	}

	slab = get_partial(s, c, &freelist, picky);
	if (slab)
		goto new_cpu_slab_partial;

	slab = new_slab(s, picky ? gfp | __GFP_NOWARN : gfp, c, &freelist);
	if (slab) {
		stat_inc(c, ALLOC_SLAB);
		c->from_partial = 0;
		goto new_cpu_slab;
	}
	/* No memory for a new slab: a poor partial beats none. */
	if (picky && (slab = get_partial(s, c, &freelist, false)) != NULL)
		goto new_cpu_slab_partial;
	return NULL;

new_cpu_slab_partial:
	c->from_partial = 1;
new_cpu_slab:
	set_cpu_slab(s, c, slab);
	c->fast_mark = served_mark(c);
load:
	c->freelist = get_freepointer(s, freelist);
	return freelist;
}

/*
 * Pop up to @want objects off @slab, a node partial slab (list_lock held),
 * one compare-and-swap each: other threads' frees push onto the same
 * freelist meanwhile, and nobody else pops it without the lock.
 *
 * A slab left without free objects is full and goes off the list.  The
 * compare-and-swap that takes its last object also freezes it: a full
 * unfrozen slab may be frozen by a free without the lock and pushed onto
 * that thread's cpu partial list, through the very link the node list uses,
 * so one must never be on the list, not even until remove_partial().  Off
 * the list, it is unfrozen again, and filed back if frees came meanwhile.
 */
static unsigned int pop_partial(struct kmem_cache *s, struct slab *slab, unsigned int want, void **p)
{
	uint64_t old = slab_state(slab), new;
	unsigned int k = 0;

	while (k < want) {
		void *head = ss_freelist(slab, old);
		if (!head)
			break;
		void *next = get_freepointer(s, head);
		new = ss_make(slab, next, ss_inuse(old) + 1, ss_objects(old), ss_frozen(old) || !next);
		if (!slab_state_cmpxchg(slab, &old, new))
			continue;
		p[k++] = head;
		old = new;
		if (!next) {
			remove_partial(&slub_of(s)->node, slab);
			if (ss_freelist(slab, slab_set_frozen(slab, false)))
				add_partial(&slub_of(s)->node, slab, true);
			break;
		}
	}
	return k;
}

/*
 * A thread's first sheaf refills of a cache, while it has no cpu slab:
 * the objects come from the node's partial slabs under list_lock, as the
 * newest kernels' sheaf refill takes them (no cpu slabs there at all), and
 * a new slab, when one is needed, goes to the node list with what is left.
 * Threads that allocate a few objects of a class then share slabs instead
 * of pinning one each: 1000 threads holding one object in each of 10
 * classes took a cpu slab per thread and class.
 */
unsigned int __slub_refill_shared(struct kmem_cache *s, struct kmem_cache_cpu *c, gfp_t gfp,
				  unsigned int n, void **p)
{
	struct kmem_cache_node *node = &slub_of(s)->node;
	unsigned int got = 0;

	if (__atomic_load_n(&node->nr_partial, __ATOMIC_RELAXED)) {
		kmem_lock(&node->list_lock);
		while (got < n && !list_empty(&node->partial)) {
			struct slab *slab = list_first_entry(&node->partial, struct slab, slab_list);
			unsigned int k = pop_partial(s, slab, n - got, p + got);
			if (k)
				stat_inc(c, ALLOC_FROM_PARTIAL);
			got += k;
		}
		kmem_unlock(&node->list_lock);
	}
	if (!got) {	/* a short refill will do: the thread comes back sooner */
		void *freelist;
		struct slab *slab = new_slab(s, gfp, c, &freelist);
		if (slab) {
			stat_inc(c, ALLOC_SLAB);
			while (got < n && freelist) {
				p[got++] = freelist;
				freelist = get_freepointer(s, freelist);
			}
			deactivate_slab(s, slab, freelist, c);
		}
	}
	stat_add(c, SHEAF_REFILL, got);
	return got;
}

/* Allocation for a thread without per-thread state (it is exiting). */
static void *slab_alloc_unowned(struct kmem_cache *s, gfp_t gfp)
{
	struct kmem_cache_cpu tmp = { .cache = s };
	void *obj = ___slab_alloc(s, gfp, &tmp);

	if (obj) {
		/* Hand back the rest at once: nobody will own this slab. */
		if (tmp.slab)
			deactivate_slab(s, tmp.slab, tmp.freelist, NULL);
		put_partials(s, tmp.partial, NULL);
	}
	for (int i = 0; i < NR_SLUB_STAT_ITEMS; i++)
		if (tmp.stat[i])
			atomic_fetch_add_explicit(&slub_of(s)->dead_stat[i], tmp.stat[i], memory_order_relaxed);
	return obj;
}

void *__slub_alloc_slow(struct kmem_cache *s, gfp_t gfp, unsigned long caller, unsigned int orig_size)
{
	if (unlikely(kmem_boot()))
		return NULL;
	struct kmem_cache_cpu *c = get_cpu_slot(s);
	void *obj;

	if (unlikely(!c)) {
		obj = slab_alloc_unowned(s, gfp);
		if (obj)
			atomic_fetch_add_explicit(&slub_of(s)->dead_stat[ALLOC_SLOWPATH], 1, memory_order_relaxed);
	} else if (c->count) {
		/* Another path refilled main (a bulk free, a reentrant call) and dropped hot. */
		obj = c->objs[--c->count];
		sheaf_hot_reload(c);
		stat_inc(c, ALLOC_PCS);
	} else if (likely(c->freelist)) {
		/* The slot was just set up, or another path refilled it. */
		obj = c->freelist;
		c->freelist = get_freepointer(s, obj);
		stat_inc(c, ALLOC_FASTPATH);
	} else if (slub_of(s)->sheaf_capacity && (obj = sheaf_alloc_slow(s, c, gfp | __GFP_NOWARN))) {
		/* Counted by the sheaf layer. */
		slub_reap_tick();
	} else {
		obj = unlikely(kmem_cache_debug(s)) ? alloc_single(s, gfp, c, caller, orig_size)
						    : ___slab_alloc(s, gfp, c);
		if (obj)
			stat_inc(c, ALLOC_SLOWPATH);
	}
	if (obj && (gfp & __GFP_ZERO)) {
		/*
		 * A kmalloc red zone past the size asked for stays red zone
		 * (kernel zero_size): the size the object keeps, whichever path
		 * set it up.  Anything else is zeroed whole.
		 */
		unsigned int zero = unlikely(slub_kmalloc_redzone(s)) ? slub_orig_size(s, obj) : s->object_size;
		memset(obj, 0, zero);
	}
	return obj;
}

/* ---- freeing ------------------------------------------------------- */

/*
 * Free @cnt objects (head..tail, already chained) into a slab that is not
 * this thread's cpu slab (kernel __slab_free).  @c may be NULL.
 */
void __slab_free(struct kmem_cache *s, struct slab *slab, void *head, void *tail,
		 unsigned int cnt, struct kmem_cache_cpu *c)
{
	struct kmem_cache_node *n = NULL;
	uint64_t old = slab_state(slab), new;
	void *prior;
	bool was_frozen, frozen;
	unsigned int inuse;

	if (unlikely(kmem_cache_debug(s))) {
		free_single_chain(s, slab, head, cnt, c);
		return;
	}
	for (;;) {
		if (unlikely(cnt > ss_inuse(old))) {
			/* More frees than objects in use: double frees got this far (a sheaf). */
			if (n)
				kmem_unlock(&n->list_lock);
			kmem_report("BUG %s (Not tainted): Freeing %u objects to a slab with %u in use\n"
				    "INFO: Slab %p objects %u: double free; the objects are not freed\n",
				    s->name, cnt, ss_inuse(old), (void *)slab, ss_objects(old));
			return;
		}
		prior = ss_freelist(slab, old);
		was_frozen = ss_frozen(old);
		inuse = ss_inuse(old) - cnt;
		frozen = was_frozen;
		if ((!inuse || !prior) && !was_frozen) {
			/*
			 * Not with the list lock held: a retry that finds the slab
			 * full (taken and drained meanwhile) would freeze it and
			 * then put it on the node list below.
			 */
			if (c && tun_cpu_partial_slabs(s) && !prior && !n) {
				/* A full slab gets free objects: keep it on our partial list. */
				frozen = true;
			} else if (!n) {
				/* The slab may change lists: decide under the lock. */
				n = &slub_of(s)->node;
				kmem_lock(&n->list_lock);
				old = slab_state(slab);
				continue;
			}
		}
		set_freepointer(s, tail, prior);
		new = ss_make(slab, head, inuse, ss_objects(old), frozen);
		if (slab_state_cmpxchg(slab, &old, new))
			break;
		stat_s(s, c, CMPXCHG_DOUBLE_FAIL, 1);
	}

	if (was_frozen) {
		if (n)
			kmem_unlock(&n->list_lock);
		stat_s(s, c, FREE_FROZEN, 1);
		return;
	}
	if (!n) {
		if (frozen) {
			put_cpu_partial(s, c, slab);
			stat_inc(c, CPU_PARTIAL_FREE);
		} else if (unlikely(release_due(s, ss_inuse(old), inuse))) {
			slab_release_on_free(s, slab, c);
		}
		return;
	}
	file_freed_slab(s, slab, prior, inuse, c);
}

void file_freed_slab(struct kmem_cache *s, struct slab *slab, void *prior, unsigned int inuse,
		     struct kmem_cache_cpu *c)
{
	struct kmem_cache_node *n = &slub_of(s)->node;

	if (!inuse && n->nr_partial >= tun_min_partial(s)) {
		if (prior) {
			remove_partial(n, slab);
			stat_s(s, c, FREE_REMOVE_PARTIAL, 1);
		}
		kmem_unlock(&n->list_lock);
		stat_s(s, c, FREE_SLAB, 1);
		discard_slab(s, slab);
		return;
	}
	if (!prior) {
		/* It was full (on no list): it has a free object now. */
		add_partial(n, slab, true);
		stat_s(s, c, FREE_ADD_PARTIAL, 1);
	}
	kmem_unlock(&n->list_lock);
}

void report_double_free(struct kmem_cache *s, const void *x)
{
	kmem_report("BUG %s (Not tainted): Object already free\n"
		    "INFO: Object %p: double free detected, the free is ignored\n",
		    s->name, x);
}

uintptr_t slub_free_key = 1;

/*
 * A free found the free key in @x: is @x really free?  Looked for where a
 * freed object of @s can be that this thread may read cheaply: its main
 * sheaf and spare, its cpu freelist, and @x's slab's freelist: at most a
 * thousand or so compares, which a program that frees a block again
 * without having written its first word pays each time.  Not in the barn
 * (up to 64 sheaves: such a program's every free took tens of
 * microseconds) nor in other threads' sheaves: a copy there is not found
 * (as glibc's tcache key sees its own tcache only).  The slab's freelist
 * changes under other threads' frees and allocations: it is walked with
 * every link checked to be an object of the slab, at most its object
 * count, so a link read as another thread rewrites it ends the walk, not
 * the process (hence no ThreadSanitizer on it).
 */
/*
 * get_freepointer() for the walks below, which race with other threads'
 * frees and allocations by design (checked, bounded): a plain load that
 * ThreadSanitizer does not see, out of line so that it stays so.
 */
static __attribute__((noinline, no_sanitize("thread"))) void *racy_freepointer(const struct kmem_cache *s,
									     void *object)
{
	uintptr_t at = (uintptr_t)object + s->offset;

	return freelist_decode(s, *(volatile uintptr_t *)at, at);
}

__attribute__((noinline, no_sanitize("thread")))
bool slub_object_is_free(struct kmem_cache *s, struct slab *slab, struct kmem_cache_cpu *c, void *x)
{
	if (c && c->objs) {
		if (c->hot == x)
			return true;
		for (unsigned int i = 0; i < c->count; i++)
			if (c->objs[i] == x)
				return true;
		if (c->spare)
			for (unsigned int i = 0; i < c->spare->size; i++)
				if (c->spare->objects[i] == x)
					return true;
	}
	if (c && c->slab == slab && c->freelist) {
		void *p = c->freelist;
		for (unsigned int i = 0; p && i < ss_objects(slab_state(slab)); i++) {
			if (p == x)
				return true;
			if (!slab_obj_valid(s, slab, p))
				break;
			p = racy_freepointer(s, p);
		}
	}
	uint64_t st = slab_state(slab);
	void *p = ss_freelist(slab, st);
	for (unsigned int i = 0; p && i < ss_objects(st); i++) {
		if (p == x)
			return true;
		if (!slab_obj_valid(s, slab, p))
			break;
		p = racy_freepointer(s, p);
	}
	/* Peeked first: most caches' barns are empty (a keyed live block comes here too). */
	return __atomic_load_n(&slub_of(s)->barn.nr_full, __ATOMIC_RELAXED) && barn_holds(s, x);
}

__attribute__((noinline)) void __slub_free_word(void *x, unsigned long idx, uint32_t word,
						unsigned long caller)
{
	struct slab *slab = page_slab(mm_model.mem_map + (idx - (word >> SLAB_MAP_HEAD_SHIFT)));

	/* No slot_offset check against the cache: the compiler would use the cache's then. */
	__slub_free_ip(slab->slab_cache, slab_map_slot(word), slab, x, caller);
}

void __slub_free_slow(struct kmem_cache *s, struct page *head, void *x, unsigned long caller)
{
	struct slab *slab = page_slab(head);

	if (!slab) {
		slab = virt_to_slab(x);
		if (unlikely(!slab)) {
			if (x)
				slab_report_bad_free("kmem_cache_free", x,
						     "not an object of any cache; not freed");
			return;
		}
	}
	/*
	 * Also when the fast path looked the slab up for kmem_cache_free():
	 * it comes here when one of its checks failed, that one included.
	 */
	if (unlikely(slab->slab_cache != s)) {
		kmem_warn("mm/slab.h:cache_from_obj",
			  "cache_from_obj: Wrong slab cache. %s but object is from %s; not freed\n",
			  s->name, slab->slab_cache->name);
		return;
	}
	struct kmem_cache_cpu *c = this_cpu_slot(s);
	/* A thread that only frees (a consumer) gets sheaves too. */
	if (!c && (slub_thread_live() || slub_of(s)->sheaf_capacity))
		c = get_cpu_slot(s);

	if (unlikely(!slab_obj_valid(s, slab, x))) {
		kmem_report("BUG %s (Not tainted): Invalid object pointer %p\n"
			    "INFO: the pointer is not the start of an object; the free is ignored\n",
			    s->name, x);
		return;
	}
	/*
	 * The cheap double-free checks: the top two of main (objs[-1] is a
	 * NULL guard), or every object of the slab free.
	 */
	if ((c && c->objs && (c->objs[(long)c->count - 1] == x ||
			      (c->count >= 2 && c->objs[c->count - 2] == x))) ||
	    unlikely(!ss_inuse(slab_state(slab)))) {
		report_double_free(s, x);
		return;
	}
	/* The free key (slub.h): found, then looked for among the free objects. */
	bool keyed = !kmem_cache_debug(s);
	if (keyed && unlikely(slub_free_keyed(s, x))) {
		if (slub_object_is_free(s, slab, c, x)) {
			report_double_free(s, x);
			return;
		}
		/*
		 * Not free: a block freed again without its first word written.
		 * The push the fast path would have made, not a slow path (which
		 * would count towards reaping, and flush what the thread uses).
		 */
		if (c && c->objs && c->count < c->cap &&
		    slab->slab_cache == s && ss_inuse(slab_state(slab))) {
			c->objs[c->count++] = x;
			c->hot = x;
			stat_inc(c, FREE_PCS);
			return;
		}
	}
	if (keyed)
		*slub_free_key_word(s, x) = s->free_key;
	if (c && c->objs)
		sheaf_settle(c);
	if (c && slub_of(s)->sheaf_capacity && sheaf_free_slow(s, c, x)) {
		slub_reap_tick();
		return;
	}
	if (c && slab == c->slab) {
		if (x == c->freelist) {
			report_double_free(s, x);
			return;
		}
		set_freepointer(s, x, c->freelist);
		c->freelist = x;
		stat_inc(c, FREE_FASTPATH);
		return;
	}
	/* The cheap double-free check off the fast path: the slab's freelist head. */
	if (unlikely(ss_freelist(slab, slab_state(slab)) == x) || unlikely(!ss_inuse(slab_state(slab)))) {
		report_double_free(s, x);
		return;
	}
	stat_s(s, c, FREE_SLOWPATH, 1);
	if (unlikely(kmem_cache_debug(s)))
		free_single(s, slab, x, c, caller);
	else
		__slab_free(s, slab, x, x, 1, c);
}

/* ---- flushing ------------------------------------------------------ */

void flush_cpu_slot(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	sheaf_flush_thread(s, c);
	if (c->slab) {
		struct slab *slab = c->slab;
		void *freelist = c->freelist;
		set_cpu_slab(s, c, NULL);
		c->freelist = NULL;
		deactivate_slab(s, slab, freelist, c);
		stat_inc(c, CPUSLAB_FLUSH);
	}
	if (c->partial) {
		struct slab *list = c->partial;
		set_cpu_partial_list(c, NULL, 0);
		put_partials(s, list, c);
	}
}
