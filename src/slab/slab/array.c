// SPDX-License-Identifier: MIT
/*
 * SLAB's object paths: a thread's array cache first (a pop or a push, no
 * lock), the node behind it (cache_alloc_refill(), cache_flusharray()).
 *
 * The arrays hold object pointers (a slot's start plus obj_offset).  The
 * free path checks what SLUB's checks without debug flags: a pointer
 * outside any slab, another cache's object, a pointer into an object, and
 * the double free of the object on top of the array; free_block() catches
 * any object already free in its slab.
 */
#include <errno.h>

#include "slab/slab/slab_priv.h"

/* ---- allocation ---------------------------------------------------------- */

static void *slab_alloc_failed(struct kmem_cache *s, gfp_t gfp)
{
	struct slab_cache *c = SLABC(s);

	if (!(gfp & __GFP_NOWARN)) {
		struct slab_node *n = &c->node;

		pr_warn("SLAB: Unable to allocate memory on node -1, gfp=%#x\n"
			"  cache: %s, object size: %u, order: %u\n"
			"  node 0: slabs: %lu/%lu, objs: %lu/%lu, free: %lu\n",
			(unsigned int)gfp, s->name, s->size, c->gfporder,
			__atomic_load_n(&n->total_slabs, __ATOMIC_RELAXED) -
				__atomic_load_n(&n->free_slabs, __ATOMIC_RELAXED),
			__atomic_load_n(&n->total_slabs, __ATOMIC_RELAXED),
			__atomic_load_n(&n->total_slabs, __ATOMIC_RELAXED) * c->num -
				__atomic_load_n(&n->free_objects, __ATOMIC_RELAXED),
			__atomic_load_n(&n->total_slabs, __ATOMIC_RELAXED) * c->num,
			__atomic_load_n(&n->free_objects, __ATOMIC_RELAXED));
	}
	return NULL;
}

void *slab_bk_alloc_finish(struct kmem_cache *s, void *x, gfp_t gfp, unsigned long caller)
{
	struct slab_cache *c = SLABC(s);

	/* A corrupt one is reported, repaired and handed out, as the kernel did. */
	if (c->dbg)
		slab_debug_alloc(s, (char *)x - c->obj_offset, caller);
	if (gfp & __GFP_ZERO)
		memset(x, 0, s->object_size);
	return x;
}

/* Everything but a plain pop: a refill, statistics, debug checks, zeroing. */
static __attribute__((noinline)) void *slab_alloc_slow(struct kmem_cache *s, gfp_t gfp, unsigned long caller)
{
	struct slab_cache *c = SLABC(s);
	struct array_cache *ac = slab_this->ac[c->cpu_slot];
	void *x;

	if (likely(ac != NULL) && likely(ac->avail)) {
		ac->touched = 1;
		x = ac->entry[--ac->avail];
		slab_stat(c, SLAB_STAT_ALLOCHIT, 1);
	} else {
		x = cache_alloc_refill(s, gfp);
		if (unlikely(!x))
			return slab_alloc_failed(s, gfp);
	}
	if (unlikely(c->dbg | (gfp & __GFP_ZERO)))
		return slab_bk_alloc_finish(s, x, gfp, caller);
	return x;
}

/* The whole fast path: a pop from this thread's array (a leaf: the rest is a tail call). */
void *slab_bk_alloc(struct kmem_cache *s, gfp_t gfp, unsigned long caller, unsigned int orig_size)
{
	struct slab_cache *c = SLABC(s);
	struct array_cache *ac = slab_this->ac[c->cpu_slot];

	(void)orig_size;
	if (likely(ac != NULL) && likely(!(c->slow | (gfp & __GFP_ZERO)))) {
		unsigned int n = ac->avail;

		if (likely(n)) {
			ac->touched = 1;
			ac->avail = n - 1;
			return ac->entry[n - 1];
		}
	}
	return slab_alloc_slow(s, gfp, caller);
}

/* Move up to @max objects from the top of @from to @to (transfer_objects()). */
static unsigned int transfer_objects(struct array_cache *to, struct array_cache *from, unsigned int max)
{
	unsigned int nr = from->avail;

	if (nr > max)
		nr = max;
	if (nr > to->cap - to->avail)
		nr = to->cap - to->avail;
	if (!nr)
		return 0;
	memcpy(&to->entry[to->avail], &from->entry[from->avail - nr], nr * sizeof(void *));
	from->avail -= nr;
	to->avail += nr;
	return nr;
}

/* The first slab with a free object: partial ones first, then a free one. */
static struct slab_desc *get_first_slab(struct slab_node *n)
{
	struct slab_desc *d;

	if (!list_empty(&n->slabs_partial))
		return list_first_entry(&n->slabs_partial, struct slab_desc, slab_list);
	if (list_empty(&n->slabs_free))
		return NULL;
	d = list_first_entry(&n->slabs_free, struct slab_desc, slab_list);
	__atomic_store_n(&n->free_touched, 1, __ATOMIC_RELAXED);
	n->free_slabs--;
	/* Off the free list now: fix_slab_list() files it by what it holds. */
	list_move(&d->slab_list, &n->slabs_partial);
	return d;
}

static void fix_slab_list(struct kmem_cache *s, struct slab_node *n, struct slab_desc *d)
{
	struct slab_cache *c = SLABC(s);

	list_del(&d->slab_list);
	if (d->active == c->num) {
		list_add(&d->slab_list, &n->slabs_full);
		/* The object that held the index array is handed out: no array now. */
		if (c->mgmt == SLAB_MGMT_OBJFREELIST)
			d->freelist = NULL;
	} else {
		list_add(&d->slab_list, &n->slabs_partial);
	}
}

/* Objects of @d into @ac, up to @batch; returns how many. */
static unsigned int alloc_block(struct kmem_cache *s, struct array_cache *ac, struct slab_desc *d,
				unsigned int batch)
{
	struct slab_cache *c = SLABC(s);
	unsigned int got = 0;

	while (d->active < c->num && got < batch && ac->avail < ac->cap) {
		void *x = slab_get_obj(s, d);

		if (unlikely(!x))
			break;	/* a corrupt index array: reported, the slab is left alone */
		ac->entry[ac->avail++] = x;
		got++;
	}
	slab_stat(c, SLAB_STAT_ALLOCED, got);
	return got;
}

/* maxobjs: the most objects out of the slabs at once; list_lock held. */
static void note_high_mark(struct slab_cache *c, struct slab_node *n)
{
	if (unlikely(slab_bk_stats)) {
		unsigned long out = n->total_slabs * c->num - n->free_objects;

		if (out > atomic_load_explicit(&c->stat[SLAB_STAT_HIGH], memory_order_relaxed))
			atomic_store_explicit(&c->stat[SLAB_STAT_HIGH], out, memory_order_relaxed);
	}
}

/* One object straight from the node (a thread without arrays, a dying cache). */
static void *alloc_one_direct(struct kmem_cache *s, gfp_t gfp)
{
	struct slab_cache *c = SLABC(s);
	struct slab_node *n = &c->node;
	struct slab_desc *d;
	void *x = NULL;

	for (int tries = 0; tries < 2 && !x; tries++) {
		kmem_lock(&n->list_lock);
		d = get_first_slab(n);
		if (d) {
			x = slab_get_obj(s, d);
			if (x)
				n->free_objects--;
			fix_slab_list(s, n, d);
		}
		kmem_unlock(&n->list_lock);
		if (x || tries)
			break;
		d = cache_grow(s, gfp);
		if (!d)
			break;
		kmem_lock(&n->list_lock);
		slab_add_new(s, d);
		kmem_unlock(&n->list_lock);
	}
	return x;
}

void *cache_alloc_refill(struct kmem_cache *s, gfp_t gfp)
{
	struct slab_cache *c = SLABC(s);
	struct slab_node *n = &c->node;
	struct array_cache *ac = slab_cpu_array(s);
	unsigned int batchcount, got = 0;

	if (unlikely(!ac))
		return alloc_one_direct(s, gfp);
	if (ac->avail) {	/* a fresh or resized array with objects in it */
		ac->touched = 1;
		return ac->entry[--ac->avail];
	}
	slab_bk_reap_tick();
	ac = slab_this->ac[c->cpu_slot];	/* the reap may have resized it */
	slab_stat(c, SLAB_STAT_ALLOCMISS, 1);
	batchcount = ac->batchcount;
	/* An array not used since the last reap gets a small refill: it may not be needed. */
	if (!ac->touched && batchcount > BATCHREFILL_LIMIT)
		batchcount = BATCHREFILL_LIMIT;
	if (batchcount > ac->cap)
		batchcount = ac->cap;

	kmem_lock(&n->list_lock);
	struct array_cache *shared = n->shared;
	if (shared && transfer_objects(ac, shared, batchcount)) {
		shared->touched = 1;
		kmem_unlock(&n->list_lock);
		goto done;
	}
	while (got < batchcount) {
		struct slab_desc *d = get_first_slab(n);

		if (!d)
			break;
		unsigned int nr = alloc_block(s, ac, d, batchcount - got);
		fix_slab_list(s, n, d);
		if (!nr)
			break;
		got += nr;
	}
	n->free_objects -= got;
	note_high_mark(c, n);
	kmem_unlock(&n->list_lock);

	if (!ac->avail) {
		/* cache_grow_begin/end: a new slab, its objects constructed, no lock held meanwhile. */
		struct slab_desc *d = cache_grow(s, gfp);

		if (!d)
			return NULL;
		kmem_lock(&n->list_lock);
		slab_add_new(s, d);
		/* Take from the new slab first: it is what we grew for. */
		list_del(&d->slab_list);
		got = alloc_block(s, ac, d, batchcount);
		list_add(&d->slab_list, &n->slabs_partial);
		n->free_slabs--;	/* slab_add_new() counted it free */
		fix_slab_list(s, n, d);
		n->free_objects -= got;
		note_high_mark(c, n);
		kmem_unlock(&n->list_lock);
		if (!ac->avail)
			return NULL;
	}
done:
	ac->touched = 1;
	return ac->entry[--ac->avail];
}

/* ---- free ---------------------------------------------------------------- */

bool slab_bk_free_checks(struct kmem_cache *s, struct page **headp, void *x, const char *func)
{
	struct page *head = *headp;

	if (!head) {
		head = virt_to_head_page_checked(x);
		if (unlikely(!head) || unlikely(!PageSlab(head))) {
			slab_report_bad_free(func, x, "not an object of any cache; not freed");
			return false;
		}
		*headp = head;
	}
	struct kmem_cache *owner = page_slab_cache(head);
	if (unlikely(owner != s)) {
		if (!owner) {
			slab_report_bad_free(func, x, "not an object of any cache; not freed");
			return false;
		}
		kmem_warn("mm/slab.h:cache_from_obj",
			  "cache_from_obj: Wrong slab cache. %s but object is from %s; not freed\n",
			  s->name, owner->name);
		return false;
	}
	struct slab_cache *c = SLABC(s);
	struct slab_desc *d = page_desc(head);
	uintptr_t off = (uintptr_t)x - c->obj_offset - (uintptr_t)__atomic_load_n(&d->s_mem, __ATOMIC_RELAXED);

	if (unlikely(off >= c->span) || unlikely(!offset_is_multiple(off, s->div_magic))) {
		kmem_report("BUG %s (Not tainted): Invalid object pointer %p\n"
			    "INFO: the pointer is not the start of an object; the free is ignored\n",
			    s->name, x);
		return false;
	}
	return true;
}

/* The free's slow part: a full array (cache_flusharray()), or no array. */
static void cache_free_slow(struct kmem_cache *s, void *x)
{
	struct slab_cache *c = SLABC(s);
	struct array_cache *ac = slab_cpu_array(s);

	if (unlikely(!ac)) {
		struct slab_node *n = &c->node;
		struct list_head list = LIST_HEAD_INIT(list);

		kmem_lock(&n->list_lock);
		free_block(s, &x, 1, &list);
		kmem_unlock(&n->list_lock);
		slabs_destroy(s, &list);
		return;
	}
	if (ac->avail >= ac->limit) {
		slab_stat(c, SLAB_STAT_FREEMISS, 1);
		cache_flusharray(s, ac);
		slab_bk_reap_tick();
		ac = slab_this->ac[c->cpu_slot];
	} else {
		slab_stat(c, SLAB_STAT_FREEHIT, 1);
	}
	if (ac->avail >= ac->cap)	/* resized smaller by the reap: flush again */
		cache_flusharray(s, ac);
	ac->entry[ac->avail++] = x;
}

uintptr_t slab_bk_free_key = 1;

/*
 * A free found the free key in @x (slab_priv.h): is @x free already?  In
 * this thread's array (at most its limit, 120 entries for small objects),
 * the node's shared array and @x's slab's index array (under the node's
 * lock): everywhere a free object can be but other threads' arrays.
 */
bool slab_bk_object_is_free(struct kmem_cache *s, struct array_cache *ac, struct page *head, void *x)
{
	struct slab_cache *c = SLABC(s);
	struct slab_node *n = &c->node;
	bool found = false;

	if (ac)
		for (unsigned int i = 0; i < ac->avail; i++)
			if (ac->entry[i] == x)
				return true;
	kmem_lock(&n->list_lock);
	if (n->shared)
		for (unsigned int i = 0; i < n->shared->avail && !found; i++)
			found = n->shared->entry[i] == x;
	if (!found) {
		struct slab_desc *d = page_desc(head);

		found = slab_idx_free(c, d, obj_to_index(c, d, (char *)x - c->obj_offset));
	}
	kmem_unlock(&n->list_lock);
	return found;
}

/* The free with every check, statistics and debugging. */
static __attribute__((noinline)) void slab_free_slow(struct kmem_cache *s, struct page *head, void *x,
						     unsigned long caller)
{
	struct slab_cache *c = SLABC(s);

	if (unlikely(!slab_bk_free_checks(s, &head, x, "kmem_cache_free")))
		return;
	struct array_cache *ac = slab_this->ac[c->cpu_slot];
	if (likely(ac != NULL)) {
		if (unlikely(ac->avail && ac->entry[ac->avail - 1] == x)) {
			slab_bk_double_free(s, x);
			return;
		}
	}
	/* The free key (slab_priv.h): found, then looked for among the free objects. */
	if (!(c->free_slow & (SLAB_SLOW_NOKEY | SLAB_DEBUG_FLAGS))) {
		if (unlikely(*(uintptr_t *)x == s->free_key) && slab_bk_object_is_free(s, ac, head, x)) {
			slab_bk_double_free(s, x);
			return;
		}
		*(uintptr_t *)x = s->free_key;
	}
	if (unlikely(c->dbg) && !slab_debug_free(s, (char *)x - c->obj_offset, caller))
		return;
	if (likely(ac != NULL) && likely(ac->avail < ac->limit)) {
		ac->entry[ac->avail++] = x;
		slab_stat(c, SLAB_STAT_FREEHIT, 1);
		return;
	}
	cache_free_slow(s, x);
}

/* The whole fast path: slab_free_fast(); anything else is a tail call. */
void slab_bk_free(struct kmem_cache *s, struct page *head, void *x, unsigned long caller)
{
	struct slab_cache *c = SLABC(s);

	if (likely(slab_free_fast(s, c, slab_this->ac[c->cpu_slot], head, x)))
		return;
	slab_free_slow(s, head, x, caller);
}

void slab_bk_kfree(struct page *head, void *x, unsigned long caller)
{
	struct kmem_cache *s = page_slab_cache(head);

	if (unlikely(!s)) {
		slab_report_bad_free("kfree", x, "not allocated by kmalloc; not freed");
		return;
	}
	slab_bk_free(s, head, x, caller);
}

/* cache_flusharray(): the oldest batchcount entries to the shared array, or to their slabs. */
void cache_flusharray(struct kmem_cache *s, struct array_cache *ac)
{
	struct slab_cache *c = SLABC(s);
	struct slab_node *n = &c->node;
	unsigned int batchcount = ac->batchcount;
	struct list_head list = LIST_HEAD_INIT(list);

	if (batchcount > ac->avail)
		batchcount = ac->avail;
	if (!batchcount)
		batchcount = 1;
	if (batchcount > ac->avail)
		return;
	kmem_lock(&n->list_lock);
	struct array_cache *shared = n->shared;
	if (shared) {
		unsigned int max = shared->limit - shared->avail;

		if (max) {
			if (batchcount > max)
				batchcount = max;
			memcpy(&shared->entry[shared->avail], ac->entry, batchcount * sizeof(void *));
			shared->avail += batchcount;
			goto free_done;
		}
	}
	free_block(s, ac->entry, batchcount, &list);
free_done:
	kmem_unlock(&n->list_lock);
	slabs_destroy(s, &list);
	ac->avail -= batchcount;
	memmove(ac->entry, &ac->entry[batchcount], ac->avail * sizeof(void *));
}

