// SPDX-License-Identifier: MIT
/*
 * SLUB for caches with debug flags (kernel kmem_cache_debug(): consistency
 * checks, red zones, poisoning, owner tracking): one object at a time
 * through the node partial list, under list_lock, as the kernel's
 * alloc_single_from_partial(), alloc_single_from_new_slab() and
 * free_to_partial_list().  No sheaf, cpu slab or cpu partial list holds a
 * free object, so every free object is on its slab's freelist, and a free
 * can tell a double free for certain by walking it (kernel on_freelist()).
 *
 * Slabs here are never frozen.  A slab with free objects is on the node
 * partial list, a full one on no list (the kernel's full list, kept only
 * for SLAB_STORE_USER, is not needed by validate here).
 */
#include <string.h>

#include "core/printk.h"
#include "slab/slub_internal.h"

/*
 * Give up on a slab whose freelist is corrupt (the kernel's "Marking all
 * objects used"): no free object of it can be trusted, so all count as
 * used; the caller takes it off the partial list.  Its live objects can
 * still be freed.  list_lock held.
 */
void slab_mark_all_used(struct slab *slab)
{
	uint64_t st = slab_state(slab);

	atomic_store_explicit(&slab->state, ss_make(slab, NULL, ss_objects(st), ss_objects(st), false),
			      memory_order_release);
}

/*
 * Pop one object off @slab's freelist; list_lock held.  Its head must be
 * an object of the slab (kernel check_valid_pointer() in
 * alloc_consistency_checks()): a write after free can have replaced it.
 * NULL then, with the slab given up.
 */
static void *take_one(struct kmem_cache *s, struct slab *slab)
{
	uint64_t st = slab_state(slab);
	void *obj = ss_freelist(slab, st);

	if (unlikely(!slab_obj_valid(s, slab, obj))) {
		kmem_report("BUG %s (Not tainted): Freelist Pointer check fails\n"
			    "INFO: Slab %p: free pointer %p is not an object of it (written after free?)\n"
			    "FIX %s: Marking all objects used\n",
			    s->name, (void *)slab, obj, s->name);
		slab_mark_all_used(slab);
		return NULL;
	}
	void *next = get_freepointer(s, obj);
	atomic_store_explicit(&slab->state, ss_make(slab, next, ss_inuse(st) + 1, ss_objects(st), false),
			      memory_order_release);
	return obj;
}

void *alloc_single(struct kmem_cache *s, gfp_t gfp, struct kmem_cache_cpu *c)
{
	struct kmem_cache_node *n = &s->node;
	struct slab *slab;
	void *obj, *freelist;

	kmem_lock(&n->list_lock);
	while (!list_empty(&n->partial)) {
		slab = list_first_entry(&n->partial, struct slab, slab_list);
		obj = take_one(s, slab);
		if (!ss_freelist(slab, slab_state(slab)))
			remove_partial(n, slab);
		if (!obj)
			continue;
		kmem_unlock(&n->list_lock);
		stat_s(s, c, ALLOC_FROM_PARTIAL, 1);
		return obj;
	}
	kmem_unlock(&n->list_lock);

	slab = new_slab(s, gfp, c, &freelist);
	if (!slab)
		return NULL;
	stat_s(s, c, ALLOC_SLAB, 1);
	uint64_t st = slab_state(slab);
	obj = freelist;
	freelist = get_freepointer(s, obj);
	/* new_slab() hands the slab over frozen with all its objects: keep one, file the rest. */
	kmem_lock(&n->list_lock);
	atomic_store_explicit(&slab->state, ss_make(slab, freelist, 1, ss_objects(st), false),
			      memory_order_release);
	if (freelist)
		add_partial(n, slab, false);
	kmem_unlock(&n->list_lock);
	return obj;
}

/* Is @x on @slab's freelist?  Bounded by the free count, so a corrupt (cyclic) list ends. */
static bool on_freelist(struct kmem_cache *s, struct slab *slab, uint64_t st, const void *x)
{
	unsigned int left = ss_objects(st) - ss_inuse(st);

	for (void *f = ss_freelist(slab, st); f && left; left--, f = get_freepointer(s, f)) {
		if (f == x)
			return true;
		if (!slab_obj_valid(s, slab, f)) {
			kmem_report("BUG %s (Not tainted): Freepointer corrupt\n"
				    "INFO: Slab %p: free pointer %p is not an object of it\n",
				    s->name, (void *)slab, f);
			return false;
		}
	}
	return false;
}

/* Free @x to @slab, checked (kernel free_to_partial_list()); list_lock not held. */
static void free_single(struct kmem_cache *s, struct slab *slab, void *x, struct kmem_cache_cpu *c)
{
	struct kmem_cache_node *n = &s->node;

	kmem_lock(&n->list_lock);
	uint64_t st = slab_state(slab);
	if (unlikely(!ss_inuse(st) || on_freelist(s, slab, st, x))) {
		kmem_unlock(&n->list_lock);
		report_double_free(s, x);
		return;
	}
	void *prior = ss_freelist(slab, st);
	unsigned int inuse = ss_inuse(st) - 1;

	set_freepointer(s, x, prior);
	atomic_store_explicit(&slab->state, ss_make(slab, x, inuse, ss_objects(st), false),
			      memory_order_release);
	file_freed_slab(s, slab, prior, inuse, c);
}

void free_single_chain(struct kmem_cache *s, struct slab *slab, void *head, unsigned int cnt,
		       struct kmem_cache_cpu *c)
{
	void *x = head;

	for (unsigned int i = 0; i < cnt; i++) {
		/* The chain's link is the free pointer free_single() rewrites: read it first. */
		void *next = i + 1 < cnt ? get_freepointer(s, x) : NULL;
		free_single(s, slab, x, c);
		x = next;
	}
}

/*
 * Print the objects still allocated in @s's node partial slabs, at most
 * @max of them (kernel list_slab_objects(), for a destroy that finds
 * objects left); returns how many were printed.  Full slabs are on no
 * list, as in a kernel without debug flags, so their objects go unnamed.
 * Objects on released pages (slub_release.c) are free.
 */
unsigned long list_slab_objects(struct kmem_cache *s, unsigned int max)
{
	enum { MAP_BITS = 4096 };
	unsigned long map[MAP_BITS / (8 * sizeof(unsigned long))];
	struct kmem_cache_node *n = &s->node;
	unsigned long shown = 0;
	struct slab *slab;

	kmem_lock(&n->list_lock);
	list_for_each_entry(slab, &n->partial, slab_list) {
		uint64_t st = slab_state(slab);
		char *addr = slab_address(slab), *base = (char *)slab->obj_base;
		unsigned int slots = slab->obj_span / s->size, left = ss_objects(st) - ss_inuse(st);
		unsigned long released = slab_released(slab);

		if (slots > MAP_BITS)
			continue;
		memset(map, 0, sizeof(map));
		for (char *f = ss_freelist(slab, st); f && left; left--, f = get_freepointer(s, f)) {
			if (!slab_obj_valid(s, slab, f))
				break;		/* a corrupt list: what is left counts as allocated */
			unsigned int i = (unsigned int)((f - base) / s->size);
			map[i / (8 * sizeof(long))] |= 1UL << (i % (8 * sizeof(long)));
		}
		for (unsigned int i = 0; i < slots; i++) {
			char *p = base + (size_t)i * s->size;
			unsigned long first = (unsigned long)(p - addr) >> PAGE_SHIFT;
			unsigned long last = (unsigned long)(p + s->size - 1 - addr) >> PAGE_SHIFT;
			if (map[i / (8 * sizeof(long))] & (1UL << (i % (8 * sizeof(long)))))
				continue;
			if (released && (released >> first) & ((2UL << (last - first)) - 1))
				continue;
			if (shown == max)
				goto out;
			printk("Object %p @offset=%lu\n", (void *)p, (unsigned long)(p - addr));
			shown++;
		}
	}
out:
	kmem_unlock(&n->list_lock);
	return shown;
}
