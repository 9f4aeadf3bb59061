// SPDX-License-Identifier: MIT
/*
 * Giving back the free pages inside partial slabs.  The kernel has no such
 * thing; kmem needs it because a userspace heap is judged by its RSS.
 *
 * A slab goes back to the page allocator only when its last object is
 * freed.  When a program frees most of a large population in random order,
 * nearly every slab keeps an object or two, and all of its pages stay
 * resident: 90% of a million 16..512 B objects freed left 300 MB resident
 * for 30 MB live.  Yet many of those pages hold no live object at all.
 *
 * Releasing a slab's free pages: the slab is taken off the node partial
 * list and frozen, as a thread takes its cpu slab, and its freelist
 * detached.  Every page all of whose objects are free goes back to the OS
 * (MADV_DONTNEED, os_release()), and the objects on it leave the slab: its
 * state's object count drops by their number, so that every other path sees
 * an ordinary slab with fewer objects (empty is still inuse == 0, and a slab
 * given back whole is uncounted by what its state says).  Which pages are
 * out is a bit mask in the slab's first tail page.  When a thread's cpu
 * slab runs out of free objects (___slab_alloc()), its released objects come
 * back (slab_unrelease()): the pages fault in again as zeroes and get free
 * pointers, only once they are wanted.
 *
 * When: kmem_cache_shrink() (so malloc_trim() and the reaper) sweeps every
 * partial slab (slub_release_pages=1, the default).  With
 * slub_release_pages=2 also a free into a partial slab that takes its
 * objects in use below twice its pages, and below each power of two after
 * that (a slab sweeps at most log2(2 * pages) + 1 times on its way to
 * empty, each a walk of its freelist; below two live objects a page, a page
 * is free with a fair chance).  That keeps RSS low all along, at ~5.5 us a
 * page given back: a workload that frees 900K objects in a row (frag) ran
 * 1.2x longer, which is why frees do not do it by default.  Caches with a
 * ctor, SLAB_TYPESAFE_BY_RCU (readers may still look at a freed object) or
 * debug flags, and order-0 slabs (one free page is an empty slab) never
 * release.  slub_release_pages=0 turns it off.
 */
#include <string.h>

#include "core/cmdline.h"
#include "slab/slub/slub_internal.h"

/* 0: never; 1: kmem_cache_shrink() (malloc_trim(), the reaper); 2: also frees. */
static unsigned int slub_release_pages = 1;
kmem_param("slub_release_pages", slub_release_pages, uint,
	   "give back the free pages inside partial slabs: 0 never, 1 on shrink/trim (default), 2 also on frees");

#define RELEASE_MAX_OBJECTS	512	/* bitmaps on the stack */
#define RELEASE_MAX_PAGES	64	/* one mask word */

void slub_release_setup(struct kmem_cache *s)
{
	unsigned int order = oo_order(slub_of(s)->oo), objects = oo_objects(slub_of(s)->oo);

	slub_of(s)->release_min_free = 0;
	slub_of(s)->release_on_free = false;
	if (!slub_release_pages || !order || (1u << order) > RELEASE_MAX_PAGES ||
	    objects > RELEASE_MAX_OBJECTS ||
	    kmem_cache_debug(s) || s->ctor || (s->flags & SLAB_TYPESAFE_BY_RCU))
		return;
	/* A page can be free only if the slab has a page's worth of free objects. */
	slub_of(s)->release_min_free = objects >> order ? objects >> order : 1;
	slub_of(s)->release_on_free = slub_release_pages >= 2;
}

/* The geometry of one slab: its order may be the cache's fallback one. */
struct slab_geom {
	uintptr_t addr;		/* slab_address() */
	uintptr_t base;		/* object 0 */
	unsigned int size, objects, pages;
};

static void slab_geom(struct kmem_cache *s, struct slab *slab, struct slab_geom *g)
{
	g->addr = (uintptr_t)slab_address(slab);
	g->base = slab->obj_base;
	g->size = s->size;
	g->objects = (unsigned int)(slab->obj_span / s->size);
	g->pages = 1u << compound_order(slab_page(slab));
}

/* The objects that overlap page @p, [*first, *last]; false if none does. */
static bool page_objects(const struct slab_geom *g, unsigned int p, unsigned int *first,
			 unsigned int *last)
{
	uintptr_t lo = g->addr + ((uintptr_t)p << PAGE_SHIFT), hi = lo + PAGE_SIZE - 1;
	uintptr_t end = g->base + (uintptr_t)g->objects * g->size;

	if (hi < g->base || lo >= end)
		return false;
	*first = lo <= g->base ? 0 : (unsigned int)((lo - g->base) / g->size);
	*last = (unsigned int)(((hi < end ? hi : end - 1) - g->base) / g->size);
	return true;
}

static void bm_set_range(uint64_t *bm, unsigned int first, unsigned int last)
{
	for (unsigned int i = first; i <= last; i++)
		bm[i / 64] |= 1ULL << (i % 64);
}

static bool bm_all(const uint64_t *bm, unsigned int first, unsigned int last)
{
	for (unsigned int i = first; i <= last; i++)
		if (!(bm[i / 64] & (1ULL << (i % 64))))
			return false;
	return true;
}

/* Objects on the pages of @mask (each once). */
static void mask_objects(const struct slab_geom *g, unsigned long mask, uint64_t *bm)
{
	unsigned int first, last;

	for (unsigned int p = 0; p < g->pages; p++)
		if ((mask & (1UL << p)) && page_objects(g, p, &first, &last))
			bm_set_range(bm, first, last);
}

static inline unsigned long *released_word(struct slab *slab)
{
	return &slab_page(slab)[1].__overlay[1];
}

unsigned long slab_released(struct slab *slab)
{
	if (!compound_order(slab_page(slab)))
		return 0;
	return __atomic_load_n(released_word(slab), __ATOMIC_RELAXED);
}

void slab_released_init(struct slab *slab, unsigned int order)
{
	if (order)
		__atomic_store_n(released_word(slab), 0UL, __ATOMIC_RELAXED);
}

static void set_released(struct slab *slab, unsigned long mask)
{
	__atomic_store_n(released_word(slab), mask, __ATOMIC_RELAXED);
}

/* @pages more (or fewer) pages of @s's slabs are released. */
static void account_released(struct kmem_cache *s, long pages)
{
	atomic_fetch_add_explicit(&slub_of(s)->node.released_pages, pages, memory_order_relaxed);
	mod_zone_page_state(NR_SLAB_RELEASED, pages);
}

/*
 * A slab going back to the page allocator: its released pages are no
 * longer ours to count.  (Their 64 KiB populate groups stay marked
 * populated: marking them fresh would have the next slab's
 * MADV_POPULATE_WRITE fault in the released pages of its neighbours.)
 */
void slab_released_drop(struct kmem_cache *s, struct slab *slab)
{
	unsigned long mask = slab_released(slab);

	if (mask) {
		account_released(s, -__builtin_popcountl(mask));
		set_released(slab, 0);
	}
}

/* Chain the objects of @bm in address order; returns the head, *tail and *n. */
static void *chain_bitmap(struct kmem_cache *s, const struct slab_geom *g, const uint64_t *bm,
			  void **tail, unsigned int *n)
{
	void *head = NULL, *prev = NULL;
	const bool keyed = slub_free_key_apart(s);

	*n = 0;
	for (unsigned int w = 0; w < (g->objects + 63) / 64; w++)
		for (uint64_t bits = bm[w]; bits; bits &= bits - 1) {
			void *obj = (void *)(g->base + (uintptr_t)(w * 64 + __builtin_ctzll(bits)) * g->size);
			/* A free object carries the free key (slub_free_ptr()); a released page's came back 0. */
			if (keyed)
				*slub_free_key_word(s, obj) = s->free_key;
			if (prev)
				set_freepointer(s, prev, obj);
			else
				head = obj;
			prev = obj;
			(*n)++;
		}
	if (prev)
		set_freepointer(s, prev, NULL);
	*tail = prev;
	return head;
}

/*
 * The released objects of a thread's cpu slab come back onto its freelist
 * (the thread owns the slab, frozen: nothing else changes the mask; other
 * threads' frees only push onto the freelist).  Their pages fault in as
 * zeroes when the free pointers are written.
 */
void slab_unrelease(struct kmem_cache *s, struct slab *slab)
{
	unsigned long mask = slab_released(slab);
	uint64_t bm[RELEASE_MAX_OBJECTS / 64] = { 0 };
	struct slab_geom g;
	unsigned int n;
	void *tail;

	if (!mask)
		return;
	slab_geom(s, slab, &g);
	mask_objects(&g, mask, bm);
	void *head = chain_bitmap(s, &g, bm, &tail, &n);
	uint64_t old = slab_state(slab), new;
	do {
		if (!n)		/* only pages past the last object were released */
			break;
		set_freepointer(s, tail, ss_freelist(slab, old));
		new = ss_make(slab, head, ss_inuse(old), ss_objects(old) + n, ss_frozen(old));
	} while (!slab_state_cmpxchg(slab, &old, new));
	set_released(slab, 0);
	atomic_fetch_add_explicit(&slub_of(s)->node.total_objects, n, memory_order_relaxed);
	account_released(s, -__builtin_popcountl(mask));
	count_vm_events_global(SLAB_PAGES_RESTORED, (unsigned long)__builtin_popcountl(mask));
}

/*
 * Take @slab (on the node partial list, list_lock held) to release its free
 * pages: off the list, frozen, its whole freelist detached, as get_partial()
 * takes a cpu slab.  Frees meanwhile push onto a new freelist without a lock.
 */
static void *release_take(struct kmem_cache *s, struct slab *slab, unsigned int *nfree)
{
	uint64_t old = slab_state(slab), new;

	remove_partial(&slub_of(s)->node, slab);
	do {
		*nfree = ss_objects(old) - ss_inuse(old);
		new = ss_make(slab, NULL, ss_objects(old), ss_objects(old), true);
	} while (!slab_state_cmpxchg(slab, &old, new));
	return ss_freelist(slab, old);
}

/*
 * The work, without a lock: find the pages the detached freelist @f frees
 * whole, give them back, and put the slab back with the objects left.
 * Returns the pages released.
 */
static unsigned int release_slab(struct kmem_cache *s, struct slab *slab, void *f,
				 unsigned int nfree, struct kmem_cache_cpu *c)
{
	uint64_t onlist[RELEASE_MAX_OBJECTS / 64] = { 0 }, freebm[RELEASE_MAX_OBJECTS / 64] = { 0 };
	uint64_t drop[RELEASE_MAX_OBJECTS / 64] = { 0 };
	unsigned long mask = slab_released(slab), fresh = 0;
	unsigned int first, last, found = 0;
	struct slab_geom g;
	void *end = NULL;

	slab_geom(s, slab, &g);
	/*
	 * The walk is a chain of dependent loads, each a cache miss (and a
	 * TLB miss) on a cold slab: ~6 us for 16 objects.  The free pointers
	 * sit at known places, so load them all at once first.
	 */
	for (unsigned int i = 0; i < g.objects; i++)
		__builtin_prefetch((char *)g.base + (size_t)i * g.size + s->offset);
	for (void *x = f; x && found < nfree; end = x, x = get_freepointer(s, x), found++) {
		uint32_t off = (uint32_t)((uintptr_t)x - g.base);
		unsigned int idx = (unsigned int)(((unsigned __int128)off * s->div_magic) >> 64);
		if ((uintptr_t)x - g.base >= (uintptr_t)g.objects * g.size ||
		    !offset_is_multiple(off, s->div_magic)) {
			/* Not one of its objects: leave the slab as it was. */
			kmem_report("BUG %s (Not tainted): Freepointer corrupt\n"
				    "INFO: Slab %p: %p on its freelist; its pages are not released\n",
				    s->name, (void *)slab, x);
			fresh = 0;
			goto put_back;
		}
		onlist[idx / 64] |= 1ULL << (idx % 64);
	}
	memcpy(freebm, onlist, sizeof(freebm));
	mask_objects(&g, mask, freebm);
	for (unsigned int p = 0; p < g.pages; p++)
		if (!(mask & (1UL << p)) &&
		    (!page_objects(&g, p, &first, &last) || bm_all(freebm, first, last)))
			fresh |= 1UL << p;
	/* Runs of pages, one madvise() each; a failed one keeps its pages. */
	for (unsigned int p = 0; p < g.pages;) {
		if (!(fresh & (1UL << p))) {
			p++;
			continue;
		}
		unsigned int q = p;
		while (q < g.pages && (fresh & (1UL << q)))
			q++;
		if (os_release((void *)(g.addr + ((uintptr_t)p << PAGE_SHIFT)),
			       (size_t)(q - p) << PAGE_SHIFT)) {
			/*
			 * Locked memory (mlockall) or no such call: the pages stay,
			 * and so that every later free does not walk and fail
			 * again, the cache stops trying.
			 */
			fresh &= ~(((1UL << (q - p)) - 1) << p);
			__atomic_store_n(&slub_of(s)->release_on_free, false, __ATOMIC_RELAXED);
			__atomic_store_n(&slub_of(s)->release_min_free, 0, __ATOMIC_RELAXED);
		}
		p = q;
	}

put_back:;
	unsigned int kept, dropped;
	void *tail, *head;
	if (fresh) {
		mask_objects(&g, fresh, drop);
		for (unsigned int w = 0; w < RELEASE_MAX_OBJECTS / 64; w++) {
			drop[w] &= onlist[w];
			onlist[w] &= ~drop[w];
		}
		head = chain_bitmap(s, &g, onlist, &tail, &kept);
		dropped = 0;
		for (unsigned int w = 0; w < RELEASE_MAX_OBJECTS / 64; w++)
			dropped += (unsigned int)__builtin_popcountll(drop[w]);
	} else {
		/* Nothing released: the freelist goes back as it was (none if corrupt). */
		head = found == nfree ? f : NULL;
		tail = head ? end : NULL;
		kept = head ? nfree : 0;
		dropped = 0;
	}

	struct kmem_cache_node *n = &slub_of(s)->node;
	kmem_lock(&n->list_lock);
	if (fresh) {
		/* Still frozen and ours: the mask and the counts change with its objects. */
		set_released(slab, mask | fresh);
		atomic_fetch_sub_explicit(&n->total_objects, dropped, memory_order_relaxed);
		account_released(s, __builtin_popcountl(fresh));
		count_vm_events_global(SLAB_PAGES_RELEASED, (unsigned long)__builtin_popcountl(fresh));
	}
	uint64_t old = slab_state(slab), new;
	unsigned int inuse;
	do {
		if (kept + dropped > ss_inuse(old)) {
			/* Frees of objects it held: double frees meanwhile.  Keep it out of use. */
			if (fresh) {
				set_released(slab, mask);
				atomic_fetch_add_explicit(&n->total_objects, dropped, memory_order_relaxed);
				account_released(s, -__builtin_popcountl(fresh));
			}
			kmem_unlock(&n->list_lock);
			kmem_report("BUG %s (Not tainted): Freeing %u objects to a slab with %u in use\n"
				    "INFO: Slab %p: double free while its pages were released; the slab is not used again\n",
				    s->name, kept + dropped, ss_inuse(old), (void *)slab);
			return 0;
		}
		inuse = ss_inuse(old) - kept - dropped;
		if (tail)
			set_freepointer(s, tail, ss_freelist(slab, old));
		new = ss_make(slab, head ? head : ss_freelist(slab, old), inuse,
			      ss_objects(old) - dropped, false);
	} while (!slab_state_cmpxchg(slab, &old, new));
	if (!inuse) {
		/* Its last objects went meanwhile: back to the page allocator. */
		kmem_unlock(&n->list_lock);
		stat_s(s, c, FREE_SLAB, 1);
		discard_slab(s, slab);
	} else {
		/* Sparse: at the tail, so allocations fill fuller slabs first. */
		if (ss_freelist(slab, new))
			add_partial(n, slab, true);
		kmem_unlock(&n->list_lock);
	}
	return (unsigned int)__builtin_popcountl(fresh);
}

/*
 * Whether @slab may be released now: still a partial slab of @s on the node
 * list (list_lock held).  The caller's slab may have been taken, emptied
 * and given back, even reused, since its free: only an unfrozen slab of @s
 * with free objects and objects in use is on the partial list (a slab being
 * given back whole is frozen first, see release_whole_slab()).
 */
static bool releasable(struct kmem_cache *s, struct slab *slab)
{
	struct page *page = slab_page(slab);

	/* Its page may be on its way through the page allocator: atomic loads. */
	if (!PageSlab(page) || page_slab_cache(page) != s ||
	    !__atomic_load_n(&page->order, __ATOMIC_RELAXED))
		return false;
	uint64_t st = slab_state(slab);
	unsigned int min_free = __atomic_load_n(&slub_of(s)->release_min_free, __ATOMIC_RELAXED);

	return min_free && !ss_frozen(st) && ss_freelist(slab, st) && ss_inuse(st) &&
	       ss_objects(st) - ss_inuse(st) >= min_free;
}

void slab_release_on_free(struct kmem_cache *s, struct slab *slab, struct kmem_cache_cpu *c)
{
	struct kmem_cache_node *n = &slub_of(s)->node;
	unsigned int nfree;

	kmem_lock(&n->list_lock);
	if (!releasable(s, slab)) {
		kmem_unlock(&n->list_lock);
		return;
	}
	void *f = release_take(s, slab, &nfree);
	kmem_unlock(&n->list_lock);
	release_slab(s, slab, f, nfree, c);
}

/* kmem_cache_shrink(): every partial slab once.  Returns the pages released. */
long slub_release_sweep(struct kmem_cache *s)
{
	struct kmem_cache_node *n = &slub_of(s)->node;
	long released = 0;

	if (!__atomic_load_n(&slub_of(s)->release_min_free, __ATOMIC_RELAXED))
		return 0;
	kmem_lock(&n->list_lock);
	unsigned long todo = n->nr_partial;
	while (todo-- && !list_empty(&n->partial)) {
		struct slab *slab = list_first_entry(&n->partial, struct slab, slab_list);
		unsigned int nfree;
		if (!releasable(s, slab)) {
			list_move_tail(&slab->slab_list, &n->partial);
			continue;
		}
		void *f = release_take(s, slab, &nfree);
		kmem_unlock(&n->list_lock);
		released += release_slab(s, slab, f, nfree, NULL);
		kmem_lock(&n->list_lock);
	}
	kmem_unlock(&n->list_lock);
	return released;
}
