// SPDX-License-Identifier: MIT
/*
 * SLUB behind the back-end contract (slab/backend.h): the table the core
 * copies into slab_ops at boot with slab=slub (the default), and the few
 * adapters between the contract's arguments and SLUB's own functions.
 */
#include "slab/slub/slub_internal.h"

/* kfree() of an object in a SLUB slab the inline fast path did not take. */
static void slub_kfree(struct page *head, void *x, unsigned long caller)
{
	__slub_free_slow(page_slab_cache(head), head, x, caller);
}

static void slub_obj_info(struct page *head, const void *x, struct kmem_obj *o)
{
	struct slab *slab = page_slab(head);
	struct kmem_cache *s = slab->slab_cache;
	uintptr_t base = __atomic_load_n(&slab->obj_base, __ATOMIC_RELAXED);
	uintptr_t off = (uintptr_t)x - base;

	o->cache = s;
	o->size = slub_ksize(s);
	if (likely(slab_obj_valid(s, slab, x)))
		o->start = (void *)x;
	else if (off < __atomic_load_n(&slab->obj_span, __ATOMIC_RELAXED))
		o->start = (void *)(base + off / s->size * s->size);	/* bad input only: a division */
	else
		o->start = NULL;
}

static size_t slub_obj_orig_size(struct kmem_cache *s, void *x)
{
	return slub_orig_size(s, x);
}

static void slub_get_slabinfo(struct kmem_cache *s, struct slabinfo *info)
{
	struct slub_info i;
	struct kmem_cache_order_objects oo = slub_of(s)->oo;

	slub_get_info(s, &i);
	*info = (struct slabinfo){
		.active_objs = i.active_objs,
		.num_objs = i.num_objs,
		.active_slabs = i.active_slabs,
		.num_slabs = i.num_slabs,
		.objects_per_slab = oo_objects(oo),
		.cache_order = oo_order(oo),
	};
}

/* slab_mutex is held: the cache list is stable. */
static void slub_fork_prepare_all(void)
{
	struct kmem_cache *s;

	list_for_each_entry(s, &slab_caches, list) {
		kmem_lock(&slub_of(s)->node.list_lock);
		kmem_lock(&slub_of(s)->barn.lock);
	}
	slub_fork_prepare();
}

static void slub_fork_parent_all(void)
{
	struct kmem_cache *s;

	slub_fork_parent();
	list_for_each_entry(s, &slab_caches, list) {
		kmem_unlock(&slub_of(s)->barn.lock);
		kmem_unlock(&slub_of(s)->node.list_lock);
	}
}

static void slub_fork_child_all(void)
{
	struct kmem_cache *s;

	slub_fork_child();
	list_for_each_entry(s, &slab_caches, list) {
		kmem_lock_init(&slub_of(s)->barn.lock);
		kmem_lock_init(&slub_of(s)->node.list_lock);
	}
}

const struct slab_backend slub_backend = {
	.name = "slub",
	.cache_priv_size = sizeof(struct slub_cache),
	.merges = true,
	.init = slub_init,
	.cache_create = slub_cache_create,
	.probe_slab = slub_probe_slab,
	.cache_destroy = slub_cache_destroy,
	.cache_shrink = slub_shrink,
	.alloc = __slub_alloc_slow,
	.free = __slub_free_slow,
	.alloc_bulk = slub_alloc_bulk,
	.free_bulk = slub_free_bulk,
	.kfree = slub_kfree,
	.obj_info = slub_obj_info,
	.obj_resize = slub_resize_object,
	.obj_orig_size = slub_obj_orig_size,
	.get_slabinfo = slub_get_slabinfo,
	.validate = slub_validate,
	.fork_prepare = slub_fork_prepare_all,
	.fork_parent = slub_fork_parent_all,
	.fork_child = slub_fork_child_all,
};
