// SPDX-License-Identifier: MIT
/*
 * SLUB bulk paths (kernel kmem_cache_alloc_bulk / kmem_cache_free_bulk),
 * split out of slub.c: bulk allocation and free, whole-slab allocation and
 * release for large bulks, and the sheaf refill and flush to and from slabs
 * (__slub_alloc_from_slabs, __slub_free_to_slabs).  The slab helpers they
 * share with slub.c are declared in slub_internal.h.
 */
#include <string.h>

#include "core/boot.h"
#include "slab/slub/slub_internal.h"

/*
 * Bulk allocation of whole slabs: a new slab handed out entirely is full at
 * once, so it needs no freelist; its objects are listed by address.  This is
 * what keeps a large bulk flat: no free pointer is written or chased.
 * Returns how many objects were stored in @p (whole slabs, <= @n).
 */
static unsigned int bulk_alloc_whole_slabs(struct kmem_cache *s, struct kmem_cache_cpu *c,
					   gfp_t gfp, unsigned int n, void **p)
{
	unsigned int got = 0, objects;
	struct slab *list = NULL;
	long nr = 0, pages = 0;

	while (n - got >= oo_objects(slub_of(s)->oo)) {
		struct slab *slab = allocate_slab(s, gfp | __GFP_NOWARN, c, true, &objects);
		if (!slab)
			break;
		char *obj = slab_address(slab) + s->red_left_pad;
		void **q = p + got;
		for (unsigned int i = 0; i < objects; i++)
			q[i] = obj + (size_t)i * s->size;
		if (s->ctor)
			for (unsigned int i = 0; i < objects; i++)
				slub_run_ctor(s, q[i]);
		atomic_store_explicit(&slab->state, ss_make(slab, NULL, objects, objects, false),
				      memory_order_relaxed);
		/* Full, so on no list: the link is free to chain this call's slabs. */
		slab->next = list;
		list = slab;
		nr++;
		pages += 1L << compound_order(slab_page(slab));
		/* Counted as the kernel counts a new cpu slab: one slow path, then fast ones. */
		stat_s(s, c, ALLOC_SLOWPATH, 1);
		stat_s(s, c, ALLOC_FASTPATH, objects - 1);
		got += objects;
	}
	if (!nr)
		return 0;
	/* Counted once for the call, before any is published: counts never go below the truth. */
	stat_s(s, c, ALLOC_SLAB, (unsigned int)nr);
	count_slabs(s, nr, got, pages);
	for (; list; list = list->next)
		publish_slab_uncounted(list);
	return got;
}

unsigned int __slub_alloc_from_slabs(struct kmem_cache *s, struct kmem_cache_cpu *c, gfp_t gfp,
				     unsigned int n, void **p)
{
	unsigned int i, counted = 0;

	for (i = 0; i < n; i++) {
		void *obj = c->freelist;

		if (unlikely(!obj)) {
			/* Counted before the refill's thrash accounting reads it. */
			stat_add(c, SHEAF_REFILL, i - counted);
			counted = i;
			obj = ___slab_alloc(s, i ? gfp | __GFP_NOWARN : gfp, c);
			if (unlikely(!obj))
				break;
		} else {
			c->freelist = get_freepointer(s, obj);
		}
		p[i] = obj;
	}
	stat_add(c, SHEAF_REFILL, i - counted);
	return i;
}

/*
 * Bulks of a few objects go one by one through the single-object fast
 * paths.  A bulk call has a fixed cost (hot word settled, arrays moved,
 * counters, calls three deep) that a handful of objects cannot pay back:
 * bench_slab_bulk, bulk 1, took 328 instructions and 19-29 ns a round
 * trip, against about 5 ns for the single pair; by 8 objects bulk wins.
 */
#define SLUB_BULK_SINGLE	4

static int __slub_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t size, void **p);

/* A bulk call of more than SLUB_BULK_SINGLE objects off the fast path counts as a slow path for the reap. */
static __attribute__((noinline)) int slub_alloc_bulk_slow(struct kmem_cache *s, gfp_t gfp, size_t size,
							  void **p)
{
	int n = __slub_alloc_bulk(s, gfp, size, p);

	if (size > SLUB_BULK_SINGLE)
		slub_reap_tick();
	return n;
}

/*
 * The bulk fast path (kernel alloc_from_pcs_bulk, when main has enough):
 * main's top objects, one memcpy.  Like the single fast path it reads
 * only the slot: a slot this thread does not use, and slub_thread_none's
 * before boot, hold no objects.  Everything else (a short main, the spare
 * and the barn, slabs, __GFP_ZERO, a handful of objects) is the slow path.
 * Its fixed cost was what kept bulk 16 above 3 ns an object: three calls
 * deep and a stack frame for the inlined single paths.
 */
int slub_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t size, void **p)
{
	struct kmem_cache_cpu *c = &slub_this->cpu[s->index];
	unsigned int n = c->count;

	if (likely(size > SLUB_BULK_SINGLE) && likely(size <= n) && likely(!(gfp & __GFP_ZERO))) {
		n -= (unsigned int)size;
		c->count = n;
		/* The next top (objs[-1] is a NULL guard; main is there, it had objects). */
		c->hot = c->objs[(long)n - 1];
		/* Counted first: only size is live across the call then. */
		stat_add(c, ALLOC_PCS, (unsigned int)size);
		memcpy(p, c->objs + n, size * sizeof(void *));
		return (int)size;
	}
	return slub_alloc_bulk_slow(s, gfp, size, p);
}

static int __slub_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t size, void **p)
{
	if (unlikely(kmem_boot()))
		return 0;
	if (size <= SLUB_BULK_SINGLE) {
		for (size_t i = 0; i < size; i++) {
			if (unlikely(!(p[i] = slub_alloc(s, gfp)))) {
				/* All or nothing. */
				while (i--)
					slub_free(s, NULL, p[i]);
				return 0;
			}
		}
		return (int)size;
	}
	struct kmem_cache_cpu *c = this_cpu_slot(s);
	size_t i;

	if (unlikely(!c))
		c = get_cpu_slot(s);

	if (unlikely(!c)) {
		for (i = 0; i < size; i++)
			if (!(p[i] = __slub_alloc_slow(s, gfp, _RET_IP_, 0)))
				goto error;
		return (int)size;
	}
	unsigned int fast = 0;
	i = sheaf_alloc_bulk(s, c, size, p);
	if (unlikely(i < size) && unlikely(kmem_cache_debug(s))) {
		/* No sheaves: each object through alloc_single(), which sets it up and checks it. */
		for (; i < size; i++)
			if (!(p[i] = __slub_alloc_slow(s, gfp, _RET_IP_, 0)))
				goto error;
		return (int)size;
	}
	for (; i < size; i++) {
		void *obj = c->freelist;

		/*
		 * Whole new slabs for what is left of a big request.  Partial
		 * slabs wait for single allocations: filling them here would
		 * mean walking their freelists, and freeing them whole later
		 * would not work either.
		 */
		if (unlikely(!obj) && size - i >= oo_objects(slub_of(s)->oo)) {
			unsigned int w = bulk_alloc_whole_slabs(s, c, gfp, (unsigned int)(size - i), p + i);
			if (w) {
				i += w - 1;
				continue;
			}
		}
		if (unlikely(!obj)) {
			/* The refill's thrash accounting reads ALLOC_FASTPATH: bring it up to date. */
			stat_add(c, ALLOC_FASTPATH, fast);
			fast = 0;
			obj = ___slab_alloc(s, gfp, c);
			if (unlikely(!obj))
				goto error_stat;
			stat_inc(c, ALLOC_SLOWPATH);
		} else {
			c->freelist = get_freepointer(s, obj);
			fast++;
		}
		p[i] = obj;
	}
	stat_add(c, ALLOC_FASTPATH, fast);
	if (gfp & __GFP_ZERO)
		for (i = 0; i < size; i++)
			memset(p[i], 0, s->object_size);
	return (int)size;

error_stat:
	stat_add(c, ALLOC_FASTPATH, fast);
error:
	slub_free_bulk(s, i, p);
	return 0;
}

/* Checks one object of a bulk free; NULL slab means skip it (reported). */
static struct slab *bulk_obj_slab(struct kmem_cache **sp, void *x)
{
	struct slab *slab = virt_to_slab(x);

	if (unlikely(!slab)) {
		slab_report_bad_free("kmem_cache_free_bulk", x, "not a slab object");
		return NULL;
	}
	struct kmem_cache *cache = slab->slab_cache;
	if (*sp && unlikely(cache != *sp)) {
		kmem_warn("mm/slab.h:cache_from_obj",
			  "cache_from_obj: Wrong slab cache. %s but object is from %s; not freed\n",
			  (*sp)->name, cache->name);
		return NULL;
	}
	if (unlikely(!slab_obj_valid(cache, slab, x))) {
		kmem_report("BUG %s (Not tainted): Invalid object pointer %p\n", cache->name, x);
		return NULL;
	}
	*sp = cache;
	return slab;
}

/* Are @n objects at @p distinct slot starts of the slab at @base? (@objects <= 1024) */
static bool distinct_slots(const struct kmem_cache *s, uintptr_t base, void **p, unsigned int n)
{
	uint64_t seen[1024 / 64] = { 0 };

	for (unsigned int i = 0; i < n; i++) {
		uint32_t off = (uint32_t)((uintptr_t)p[i] - base);
		if (!offset_is_multiple(off, s->div_magic))
			return false;
		/* off / size, exactly: off is a multiple below 2^32 (see div_magic). */
		unsigned int idx = (unsigned int)(((unsigned __int128)off * s->div_magic) >> 64);
		if (seen[idx / 64] & (1ULL << (idx % 64)))
			return false;
		seen[idx / 64] |= 1ULL << (idx % 64);
	}
	return true;
}

/*
 * Drop (with a report) the entries of a run of @n objects of @slab that are
 * on its freelist: already free, so a count of entries equal to inuse would
 * leave a live object out of a slab given back whole.  Objects in sheaves
 * look in use here; the sheaf and bulk paths check those as far as cheap
 * checks go.  Returns how many were dropped.
 */
static unsigned int drop_free_entries(struct kmem_cache *s, struct slab *slab, uint64_t st,
				      void **p, unsigned int n, bool consecutive)
{
	void *f = ss_freelist(slab, st);
	unsigned int left = ss_objects(st) - ss_inuse(st), dropped = 0;
	uintptr_t base = slab->obj_base;

	if (!f)
		return 0;
	if (consecutive) {
		uintptr_t lo = (uintptr_t)p[0], hi = lo + (uintptr_t)n * s->size;
		for (; f && left; left--, f = get_freepointer(s, f))
			if ((uintptr_t)f - lo < hi - lo) {
				size_t k = ((uintptr_t)f - lo) / s->size;
				report_double_free(s, p[k]);
				p[k] = NULL;
				dropped++;
			}
		return dropped;
	}
	/* distinct_slots() holds: objects <= 1024 and every entry a slot start. */
	uint64_t free_slot[1024 / 64] = { 0 };
	for (; f && left; left--, f = get_freepointer(s, f)) {
		uint32_t off = (uint32_t)((uintptr_t)f - base);
		unsigned int idx = (unsigned int)(((unsigned __int128)off * s->div_magic) >> 64);
		if (idx < 1024)
			free_slot[idx / 64] |= 1ULL << (idx % 64);
	}
	for (unsigned int k = 0; k < n; k++) {
		uint32_t off = (uint32_t)((uintptr_t)p[k] - base);
		unsigned int idx = (unsigned int)(((unsigned __int128)off * s->div_magic) >> 64);
		if (free_slot[idx / 64] & (1ULL << (idx % 64))) {
			report_double_free(s, p[k]);
			p[k] = NULL;
			dropped++;
		}
	}
	return dropped;
}

/* Slabs given back whole in one bulk free, counted once at the end. */
struct whole_release {
	long nr, objects, pages;
};

/*
 * The last @inuse objects of an unfrozen slab, @p (@consecutive slots or
 * not), are being freed: give it back whole.  A full slab is on no list and
 * nobody else holds an object of it, so it needs no lock.  One on the
 * partial list is taken off under list_lock, and its freelist is checked
 * against @p only then: until the lock is held, another thread may take
 * the slab (get_partial()) and hand out, and overwrite, the objects the
 * walk would follow.  Under it, frees may still push onto the freelist,
 * which leaves the chain from the head read intact.
 */
static bool release_whole_slab(struct kmem_cache *s, struct kmem_cache_cpu *c, struct slab *slab,
			       void **p, unsigned int inuse, bool consecutive,
			       struct whole_release *wr)
{
	struct kmem_cache_node *n = &slub_of(s)->node;
	uint64_t st = slab_state(slab);

	/*
	 * Below min_partial the kernel keeps it: that needs a freelist, the
	 * normal path.  The entries are checked first all the same, so that
	 * the normal path does not get an already free one.
	 */
	if (ss_freelist(slab, st)) {
		kmem_lock(&n->list_lock);
		st = slab_state(slab);
		if (ss_frozen(st) || ss_inuse(st) != inuse ||
		    drop_free_entries(s, slab, st, p, inuse, consecutive) ||
		    n->nr_partial < tun_min_partial(s)) {
			kmem_unlock(&n->list_lock);
			return false;
		}
		remove_partial(n, slab);
		/* Off the list with free objects: frozen, so no page release takes it (slub_release.c). */
		atomic_fetch_or_explicit(&slab->state, SS_FROZEN, memory_order_relaxed);
		kmem_unlock(&n->list_lock);
		stat_s(s, c, FREE_REMOVE_PARTIAL, 1);
	} else if (ss_frozen(st) || ss_inuse(st) != inuse ||
		   __atomic_load_n(&n->nr_partial, __ATOMIC_RELAXED) < tun_min_partial(s)) {
		/*
		 * Since the caller looked, another thread may have taken the
		 * freelist (get_partial(), a shared refill): its cpu slab, or
		 * objects it holds.  Full, unfrozen and all in use by @p, the
		 * slab is on no list and nobody can take anything from it.
		 */
		return false;
	}
	stat_s(s, c, FREE_SLAB, 1);
	wr->nr++;
	wr->objects += ss_objects(st);
	wr->pages += 1L << compound_order(slab_page(slab));
	discard_slab_uncounted(slab);
	return true;
}

/*
 * bulk_alloc_whole_slabs' twin: a run of entries that are all of a slab's
 * allocated objects (distinct, checked) frees the slab whole, without
 * writing a single free pointer.  The entries left are moved to the front;
 * returns how many there are.
 */
static size_t bulk_free_whole_slabs(struct kmem_cache *s, struct kmem_cache_cpu *c, size_t size,
				    void **p)
{
	size_t k = 0;	/* entries kept, moved to the front */
	struct whole_release wr = { 0 };

	for (size_t i = 0; i < size;) {
		struct slab *slab = p[i] ? virt_to_slab(p[i]) : NULL;
		if (!slab || slab->slab_cache != s) {
			if (p[i])
				p[k++] = p[i];
			i++;
			continue;
		}
		uintptr_t base = slab->obj_base, span = slab->obj_span;
		size_t j = i + 1;
		/* Consecutive slots, as bulk_alloc_whole_slabs hands them out... */
		while (j < size && (uintptr_t)p[j] == (uintptr_t)p[j - 1] + s->size &&
		       (uintptr_t)p[j] - base < span)
			j++;
		bool consecutive = true;
		/* ...then anything else in this slab. */
		for (; j < size && (uintptr_t)p[j] - base < span; j++)
			consecutive = false;
		uint64_t st = slab_state(slab);
		unsigned int inuse = ss_inuse(st);
		if (j - i == inuse && inuse > 1 && !ss_frozen(st) &&
		    (consecutive ? offset_is_multiple((uint32_t)((uintptr_t)p[i] - base), s->div_magic)
				 : span <= (uintptr_t)1024 * s->size && distinct_slots(s, base, p + i, inuse)) &&
		    release_whole_slab(s, c, slab, p + i, inuse, consecutive, &wr)) {
			stat_s(s, c, FREE_SLOWPATH, inuse);
		} else {
			memmove(p + k, p + i, (j - i) * sizeof(void *));
			k += j - i;
		}
		i = j;
	}
	if (wr.nr)
		count_slabs(s, -wr.nr, -wr.objects, -wr.pages);
	return k;
}

/*
 * Free objects in bulk to their slabs (kernel build_detached_freelist):
 * objects of the same slab, found looking back a few entries, are chained
 * and freed with one compare-and-swap.  With s == NULL each object's own
 * cache is used (objects must be slab ones).
 */
/* Is @y among the @cnt objects chained from @head (a detached freelist being built)? */
static __attribute__((noinline)) bool chain_holds(struct kmem_cache *s, void *head, unsigned int cnt, void *y)
{
	for (void *q = head; cnt--; q = get_freepointer(s, q))
		if (q == y)
			return true;
	return false;
}

void free_bulk_slabs(struct kmem_cache *s, struct kmem_cache_cpu *c, size_t size, void **p)
{
	struct kmem_cache_cpu *const c0 = c;

	/*
	 * Objects of this thread's cpu slab (the common case: what a bulk
	 * allocation just handed out) go straight onto the lockless freelist,
	 * with the same cheap checks as a single free.
	 */
	if (c && c->slab && c->span) {
		uintptr_t base = c->base, span = c->span;
		void *fl = c->freelist;
		unsigned int n = 0;

		for (size_t i = 0; i < size; i++) {
			void *x = p[i];
			uintptr_t off = (uintptr_t)x - base;
			if (off < span && offset_is_multiple((uint32_t)off, s->div_magic) && x != fl &&
			    !slub_free_keyed(s, x)) {
				/* The free key (slub.h), before the free pointer, which may share its word. */
				*slub_free_key_word(s, x) = s->free_key;
				set_freepointer(s, x, fl);
				fl = x;
				p[i] = NULL;
				n++;
			}
		}
		c->freelist = fl;
		stat_add(c, FREE_FASTPATH, n);
		if (n == size)
			return;
	}
	/*
	 * The rest, squeezed (the lookahead below walks over NULL entries).
	 * Not for a debug cache: each object goes through free_single(), its
	 * checks and its free track, and the slab's list (the full list).
	 */
	if (s && !kmem_cache_debug(s))
		size = bulk_free_whole_slabs(s, c, size, p);

	while (size) {
		void *x = p[--size];
		if (!x)
			continue;
		struct kmem_cache *cache = s;
		struct slab *slab = bulk_obj_slab(&cache, x);
		if (!slab)
			continue;
		if (unlikely(!ss_inuse(slab_state(slab)))) {	/* every object of it is free */
			report_double_free(cache, x);
			continue;
		}

		void *head = x, *tail = x;
		unsigned int cnt = 1, lookahead = 3;
		struct kmem_cache_cpu *c = cache == s && c0 ? c0 : slub_thread_live() ? get_cpu_slot(cache) : NULL;
		void *cpu_head = (c && slab == c->slab) ? c->freelist : NULL;

		if (unlikely(x == cpu_head) || (unlikely(slub_free_keyed(cache, x)) &&
						  slub_object_is_free(cache, slab, c, x))) {
			report_double_free(cache, x);
			continue;
		}
		*slub_free_key_word(cache, x) = cache->free_key;

		for (size_t j = size; j-- > 0 && lookahead;) {
			void *y = p[j];
			if (!y)
				continue;
			if (((uintptr_t)y ^ (uintptr_t)x) >> PAGE_SHIFT &&
			    virt_to_head_page_checked(y) != slab_page(slab)) {
				lookahead--;
				continue;
			}
			if (!slab_obj_valid(cache, slab, y)) {
				kmem_report("BUG %s (Not tainted): Invalid object pointer %p\n", cache->name, y);
				p[j] = NULL;
				continue;
			}
			if (y == head || y == cpu_head ||
			    (unlikely(slub_free_keyed(cache, y)) &&
			     (chain_holds(cache, head, cnt, y) || slub_object_is_free(cache, slab, c, y)))) {
				report_double_free(cache, y);
				p[j] = NULL;
				continue;
			}
			*slub_free_key_word(cache, y) = cache->free_key;
			set_freepointer(cache, y, head);
			head = y;
			cnt++;
			p[j] = NULL;
			if (j == size - 1)
				size--;
		}
		if (c && slab == c->slab) {
			set_freepointer(cache, tail, c->freelist);
			c->freelist = head;
			stat_add(c, FREE_FASTPATH, cnt);
		} else {
			stat_s(cache, c, FREE_SLOWPATH, cnt);
			__slab_free(cache, slab, head, tail, cnt, c);
		}
	}
}

static __attribute__((noinline)) void slub_free_bulk_slow(struct kmem_cache *s, size_t size, void **p)
{
	if (s && size <= SLUB_BULK_SINGLE) {
		for (size_t i = 0; i < size; i++)
			if (p[i])	/* holes are allowed, as in the kernel */
				slub_free(s, NULL, p[i]);
		return;
	}
	struct kmem_cache_cpu *c = s ? this_cpu_slot(s) : NULL;

	if (!c && s && slub_of(s)->sheaf_capacity)
		c = get_cpu_slot(s);
	if (c && slub_of(s)->sheaf_capacity)
		size = sheaf_free_bulk(s, c, size, p);
	if (size)
		free_bulk_slabs(s, c, size, p);
	slub_reap_tick();
}

/*
 * The bulk fast path: all of @p fits in main, each object checked as a
 * single free checks it (sheaf_free_bulk_fit(), which hands the ones that
 * fail to the slab path, and its reports).  A slot with room has sheaves,
 * so it is in use by @s.
 */
void slub_free_bulk(struct kmem_cache *s, size_t size, void **p)
{
	if (likely(s) && likely(size > SLUB_BULK_SINGLE)) {
		struct kmem_cache_cpu *c = &slub_this->cpu[s->index];

		/* No underflow: count <= cap. */
		if (likely(size <= c->cap - c->count)) {
			sheaf_free_bulk_fit(s, c, size, p);
			return;
		}
	}
	slub_free_bulk_slow(s, size, p);
}

/*
 * A sheaf's objects back to their slabs (kernel sheaf_flush_main).
 * Neighbours in the sheaf that share a slab (objects freed in the order
 * they were allocated, a producer/consumer hand-off) are chained and freed
 * with a single compare-and-swap; random ones cost one each.  Sorting the
 * sheaf first would find more runs but costs more than it saves when the
 * objects are random (measured: +60 instructions per object in frag).  The
 * objects were checked when they entered the sheaf.
 */
/*
 * Random frees miss on every slab's state word, and the compare-and-swap
 * is a full barrier, so without help the misses would be taken one at a
 * time.  Prefetch the object FLUSH_AHEAD places on (its free pointer is
 * written) and its page map word, and the struct slab of the one half as
 * far, found through that word: the misses then overlap (frag:
 * __slab_free was 12% of its profile, nearly all of it the stalled
 * compare-and-swap).
 */
#define FLUSH_AHEAD	8

static inline void flush_prefetch(const struct kmem_cache *s, void **p, size_t n, size_t i)
{
	if (i + FLUSH_AHEAD < n) {
		__builtin_prefetch(&mm_model.page_map[((uintptr_t)p[i + FLUSH_AHEAD] -
						       (uintptr_t)mm_model.base) >> PAGE_SHIFT]);
		/* The free pointer store would otherwise miss and be drained by the CAS. */
		__builtin_prefetch((char *)p[i + FLUSH_AHEAD] + s->offset, 1, 3);
	}
	if (i + FLUSH_AHEAD / 2 < n)
		__builtin_prefetch(object_slab(p[i + FLUSH_AHEAD / 2]), 1, 3);
}

/*
 * The common case of a flush, inline: the slab keeps objects in use and is
 * either frozen (a thread owns it) or has free objects already (it is on
 * the node partial list), so only its state word changes.  False sends the
 * chain to __slab_free, which handles list changes, the lock and the errors.
 * frag: 109 instructions per call of __slab_free, most of them for the
 * cases this skips.
 */
static inline bool slab_free_quick(struct kmem_cache *s, struct slab *slab, void *head, void *tail,
				   unsigned int cnt, struct kmem_cache_cpu *c)
{
	const uint64_t free_bits = SS_FREE_MASK << SS_FREE_SHIFT;
	char *base = slab_address(slab);
	uint64_t f = ((uint64_t)((char *)head - base) >> 3) + 1;
	uint64_t old = slab_state(slab), new;

	for (;;) {
		if (ss_inuse(old) <= cnt || !(old & (SS_FROZEN | free_bits)))
			return false;
		uint64_t prior = (old >> SS_FREE_SHIFT) & SS_FREE_MASK;
		set_freepointer(s, tail, prior ? base + ((prior - 1) << 3) : NULL);
		/* inuse is the low field: a subtraction cannot borrow past it. */
		new = ((old & ~free_bits) | (f << SS_FREE_SHIFT)) - ((uint64_t)cnt << SS_INUSE_SHIFT);
		if (slab_state_cmpxchg(slab, &old, new))
			break;
		stat_s(s, c, CMPXCHG_DOUBLE_FAIL, 1);
	}
	if (ss_frozen(old))
		stat_s(s, c, FREE_FROZEN, 1);
	else if (unlikely(release_due(s, ss_inuse(old), ss_inuse(old) - cnt)))
		slab_release_on_free(s, slab, c);
	return true;
}

/*
 * A sheaf's object, on its way back to its slab, does not hold the free
 * key its free wrote: a program wrote into it while it was free (past or
 * before a neighbour, or after its free).  Reported; it goes back all the
 * same (its free pointer is written now, nothing of it is read).
 */
static __attribute__((noinline)) void report_free_overwritten(struct kmem_cache *s, void *x)
{
	kmem_report("BUG %s (Not tainted): Object overwritten while free\n"
		    "INFO: Object %p: its first word is 0x%lx, not the free key a free wrote (a write past "
		    "or before a neighbour, or after its free)\n",
		    s->name, x, (unsigned long)*slub_free_key_word(s, x));
}

/*
 * An exiting thread's sheaves go to the barn, not through a flush
 * (sheaf_retire_thread()): their objects' keys are checked there as a
 * flush checks them, and a bad one is reported and written again, so that
 * the object, free and in the barn, is reported once.
 */
void sheaf_check_keys(struct kmem_cache *s, unsigned int n, void **p)
{
	if (kmem_cache_debug(s) || s->free_key_off == s->offset)
		return;
	for (unsigned int i = 0; i < n; i++)
		if (unlikely(*slub_free_key_word(s, p[i]) != s->free_key)) {
			report_free_overwritten(s, p[i]);
			*slub_free_key_word(s, p[i]) = s->free_key;
		}
}

void __slub_free_to_slabs(struct kmem_cache *s, struct kmem_cache_cpu *c, size_t n, void **p)
{
	const bool quick = !kmem_cache_debug(s);
	/* The key in a word of its own (not the free pointer's, which the flush rewrites). */
	const bool keyed = quick && s->free_key_off != s->offset;

	if (keyed)
		for (size_t i = 0; i < n; i++)
			if (unlikely(*slub_free_key_word(s, p[i]) != s->free_key))
				report_free_overwritten(s, p[i]);

	for (size_t i = 0; i < FLUSH_AHEAD && i < n; i++) {
		if (i < FLUSH_AHEAD / 2)
			__builtin_prefetch(object_slab(p[i]), 1, 3);
		__builtin_prefetch((char *)p[i] + s->offset, 1, 3);
	}
	for (size_t i = 0; i < n;) {
		void *x = p[i];

		flush_prefetch(s, p, n, i);
		struct slab *slab = object_slab(x);
		if (unlikely(!PageSlab(slab_page(slab)) || slab->slab_cache != s)) {
			/*
			 * A double free that reached two sheaves: the first flush
			 * emptied the slab and it went back.  Its page map word is
			 * 0 now (or another slab's): the object is not freed.
			 */
			kmem_report("BUG %s (Not tainted): Object already free\n"
				    "INFO: Object %p: its slab was freed meanwhile (double free); not freed\n",
				    s->name, x);
			i++;
			continue;
		}
		uintptr_t base = slab->obj_base, span = slab->obj_span;
		void *head = x;
		unsigned int cnt = 1;
		size_t j = i + 1;

		for (; j < n && (uintptr_t)p[j] - base < span; j++) {
			if (unlikely(p[j] == p[j - 1])) {
				report_double_free(s, p[j]);
				continue;
			}
			set_freepointer(s, p[j], head);
			head = p[j];
			cnt++;
		}
		if (c && slab == c->slab) {
			set_freepointer(s, x, c->freelist);
			c->freelist = head;
		} else if (!quick || !slab_free_quick(s, slab, head, x, cnt, c)) {
			__slab_free(s, slab, head, x, cnt, c);
		}
		i = j;
	}
}
