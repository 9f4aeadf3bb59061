// SPDX-License-Identifier: MIT
/*
 * SLAB's slabs: growing a cache by a slab (the kernel's cache_grow_begin/
 * cache_grow_end: pages, colour, index array, cache_init_objs()), taking
 * objects from a slab and giving them back (slab_get_obj/slab_put_obj,
 * free_block()), and giving slabs back to the page allocator.
 */
#include "slab/slab/slab_priv.h"

/* ---- objects of a slab ----------------------------------------------------- */

bool slab_idx_free(struct slab_cache *c, struct slab_desc *d, unsigned int idx)
{
	unsigned int nr = c->num - d->active;

	if (!d->freelist || !nr)
		return false;	/* a full slab (OBJFREELIST: no array then) */
	if (c->idx_size == 1)
		return memchr((unsigned char *)d->freelist + d->active, (int)idx, nr) != NULL;
	for (unsigned int i = d->active; i < c->num; i++)
		if (get_free_obj(c, d, i) == idx)
			return true;
	return false;
}

void *slab_get_obj(struct kmem_cache *s, struct slab_desc *d)
{
	struct slab_cache *c = SLABC(s);
	unsigned int idx = get_free_obj(c, d, d->active);

	if (unlikely(idx >= c->num)) {
		kmem_report("BUG %s (Not tainted): Slab corruption: index %u of slab %p's free list "
			    "names no object (%u a slab); the slab is left as it is\n",
			    s->name, idx, (void *)d->s_mem, c->num);
		slab_stat(c, SLAB_STAT_ERRORS, 1);
		return NULL;
	}
	d->active++;
	return index_to_obj(c, s, d, idx) + c->obj_offset;
}

/* @x back on its slab's index array; false if it was free already (reported). */
static bool slab_put_obj(struct kmem_cache *s, struct slab_desc *d, void *x)
{
	struct slab_cache *c = SLABC(s);
	unsigned int idx = obj_to_index(c, d, (char *)x - c->obj_offset);

	if (unlikely(!d->active) || unlikely(slab_idx_free(c, d, idx))) {
		slab_bk_double_free(s, x);
		return false;
	}
	d->active--;
	/* A full OBJFREELIST slab has no array: the object freed first holds it. */
	if (!d->freelist)
		d->freelist = x;
	set_free_obj(c, d, d->active, idx);
	return true;
}

/* ---- growing ----------------------------------------------------------------- */

/* cache_init_objs(): every object constructed once, when its slab is built. */
static void cache_init_objs(struct kmem_cache *s, struct slab_desc *d)
{
	struct slab_cache *c = SLABC(s);

	if (c->mgmt == SLAB_MGMT_OBJFREELIST)
		d->freelist = index_to_obj(c, s, d, c->num - 1) + c->obj_offset;
	for (unsigned int i = 0; i < c->num; i++) {
		char *slot = index_to_obj(c, s, d, i);

		if (unlikely(c->dbg))
			slab_debug_init_obj(s, slot);
		/* Poisoned objects get theirs when handed out (the poison would hide it). */
		else if (s->ctor)
			s->ctor(slot + c->obj_offset);
	}
	/* After the constructors: an OBJFREELIST array overlays the last object. */
	for (unsigned int i = 0; i < c->num; i++)
		set_free_obj(c, d, i, i);
}

struct slab_desc *cache_grow(struct kmem_cache *s, gfp_t gfp)
{
	struct slab_cache *c = SLABC(s);
	struct slab_node *n = &c->node;
	gfp_t alloc_gfp = (gfp & ~(__GFP_ZERO | GFP_MOVABLE_MASK)) | __GFP_COMP | c->allocflags;
	unsigned int offset;

	/* The next colour on the node. */
	kmem_lock(&n->list_lock);
	offset = n->colour_next;
	if (++n->colour_next >= c->colour)
		n->colour_next = 0;
	kmem_unlock(&n->list_lock);
	offset *= c->colour_off;

	struct page *page = alloc_pages(alloc_gfp, c->gfporder);
	if (!page)
		return NULL;
	struct slab_desc *d = page_desc(page);
	char *addr = __page_address(page);
	void *freelist = NULL;

	switch (c->mgmt) {
	case SLAB_MGMT_OFF_SLAB:
		freelist = slab_bk_alloc(c->freelist_cache, (gfp & ~__GFP_ZERO) | __GFP_NOWARN, 0, 0);
		if (!freelist) {
			__free_pages(page, c->gfporder);
			return NULL;
		}
		d->s_mem = addr + offset;
		d->freelist = (char *)freelist + c->mgmt_hdr;
		break;
	case SLAB_MGMT_ON_SLAB:
		if (c->mgmt_first) {
			d->freelist = addr + offset + c->mgmt_hdr;
			d->s_mem = addr + offset + c->freelist_size;
		} else {
			d->freelist = addr + (PAGE_SIZE << c->gfporder) - c->freelist_size;
			d->s_mem = addr + offset;
		}
		break;
	case SLAB_MGMT_OBJFREELIST:
		d->s_mem = addr + offset;
		break;
	}
	d->active = 0;
	d->colour = offset;
	INIT_LIST_HEAD(&d->slab_list);
	__atomic_store_n(&d->cache, s, __ATOMIC_RELAXED);
	cache_init_objs(s, d);
	mod_zone_page_state((s->flags & SLAB_RECLAIM_ACCOUNT) ? NR_SLAB_RECLAIMABLE : NR_SLAB_UNRECLAIMABLE,
			    1L << c->gfporder);
	/* Last: frees and lookups check PG_slab first. */
	page_set_flag(page, PG_slab);
	slab_stat(c, SLAB_STAT_GROWN, 1);
	return d;
}

void slab_add_new(struct kmem_cache *s, struct slab_desc *d)
{
	struct slab_cache *c = SLABC(s);
	struct slab_node *n = &c->node;

	list_add_tail(&d->slab_list, &n->slabs_free);
	n->total_slabs++;
	n->free_slabs++;
	n->free_objects += c->num;
}

/* ---- freeing ------------------------------------------------------------------- */

void free_block(struct kmem_cache *s, void **objs, unsigned int nr, struct list_head *list)
{
	struct slab_cache *c = SLABC(s);
	struct slab_node *n = &c->node;

	for (unsigned int i = 0; i < nr; i++) {
		void *x = objs[i];
		struct slab_desc *d = page_desc(virt_to_head_page(x));

		if (!slab_put_obj(s, d, x))
			continue;
		list_del(&d->slab_list);
		n->free_objects++;
		if (!d->active) {
			list_add(&d->slab_list, &n->slabs_free);
			n->free_slabs++;
		} else {
			/* The tail: the most time for its other objects to be freed too. */
			list_add_tail(&d->slab_list, &n->slabs_partial);
		}
	}
	while (n->free_objects > n->free_limit && !list_empty(&n->slabs_free)) {
		struct slab_desc *d = list_last_entry(&n->slabs_free, struct slab_desc, slab_list);

		list_move(&d->slab_list, list);
		n->free_slabs--;
		n->total_slabs--;
		n->free_objects -= c->num;
	}
}

unsigned int drain_freelist_locked(struct kmem_cache *s, unsigned int max, struct list_head *list)
{
	struct slab_cache *c = SLABC(s);
	struct slab_node *n = &c->node;
	unsigned int nr = 0;

	while (nr < max && !list_empty(&n->slabs_free)) {
		struct slab_desc *d = list_last_entry(&n->slabs_free, struct slab_desc, slab_list);

		list_move(&d->slab_list, list);
		n->free_slabs--;
		n->total_slabs--;
		n->free_objects -= c->num;
		nr++;
	}
	return nr;
}

static void slab_destroy(struct kmem_cache *s, struct slab_desc *d)
{
	struct slab_cache *c = SLABC(s);
	struct page *page = desc_page(d);
	unsigned int order = c->gfporder;

	page_clear_flag(page, PG_slab);
	if (c->mgmt == SLAB_MGMT_OFF_SLAB) {
		/*
		 * Straight to its slab, not through an array: this runs under
		 * slab_bk_threads_lock (a destroy, a thread's exit), which setting
		 * up an array takes.  The array's cache keeps its index on its
		 * slabs, so this recurses no further.
		 */
		struct kmem_cache *fc = c->freelist_cache;
		struct slab_node *fn = &SLABC(fc)->node;
		void *fl = (char *)d->freelist - c->mgmt_hdr;
		struct list_head list = LIST_HEAD_INIT(list);

		kmem_lock(&fn->list_lock);
		free_block(fc, &fl, 1, &list);
		kmem_unlock(&fn->list_lock);
		slabs_destroy(fc, &list);
	}
	__atomic_store_n(&d->cache, NULL, __ATOMIC_RELAXED);
	d->s_mem = NULL;
	d->freelist = NULL;
	d->active = 0;
	d->colour = 0;
	d->slab_list.next = d->slab_list.prev = NULL;
	mod_zone_page_state((s->flags & SLAB_RECLAIM_ACCOUNT) ? NR_SLAB_RECLAIMABLE : NR_SLAB_UNRECLAIMABLE,
			    -(1L << order));
	__free_pages(page, order);
}

void slabs_destroy(struct kmem_cache *s, struct list_head *list)
{
	struct slab_desc *d, *tmp;

	list_for_each_entry_safe(d, tmp, list, slab_list) {
		list_del(&d->slab_list);
		slab_destroy(s, d);
	}
}

/* ---- lookups ---------------------------------------------------------------------- */

void slab_bk_obj_info(struct page *head, const void *x, struct kmem_obj *o)
{
	struct kmem_cache *s = page_slab_cache(head);

	o->cache = s;
	o->start = NULL;
	o->size = 0;
	if (!s)
		return;
	struct slab_cache *c = SLABC(s);
	struct slab_desc *d = page_desc(head);
	const char *s_mem = __atomic_load_n(&d->s_mem, __ATOMIC_RELAXED);

	o->size = s->object_size;
	if ((const char *)x < s_mem)
		return;
	size_t idx = (size_t)((const char *)x - s_mem) / s->size;
	if (idx >= c->num)
		return;
	char *start = (char *)s_mem + idx * s->size + c->obj_offset;
	if ((const char *)x < start || (const char *)x >= start + s->object_size)
		return;	/* red zone or padding */
	o->start = start;
}

