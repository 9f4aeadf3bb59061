// SPDX-License-Identifier: MIT
/*
 * SLAB's caches: boot parameters, __kmem_cache_create() (geometry, node,
 * tunables), shutdown and release, shrink, and the back-end's ops.
 */
#include <errno.h>

#include "core/cmdline.h"
#include "platform/os.h"
#include "slab/slab/slab_priv.h"

/* ---- boot parameters ------------------------------------------------------ */

enum slab_layout_rules slab_bk_layout = SLAB_LAYOUT_FINAL;
unsigned int slab_bk_freelist_idx;		/* 0: the layout's */
bool slab_bk_stats;
static int slab_max_order_param = -1;	/* -1: the kernel's default, by memory size */
static unsigned int slab_max_order_eff;

static int set_layout(const char *val, const struct kernel_param *kp)
{
	for (int i = 0; val && i < NR_SLAB_LAYOUTS; i++)
		if (!strcmp(val, slab_layout_names[i])) {
			if (kp)
				slab_bk_layout = (enum slab_layout_rules)i;
			return 0;
		}
	pr_err("slab.layout=%s: expected final, 2013, 2013-prev or 2013-before\n", val ? val : "");
	return -EINVAL;
}
kmem_param_cb("slab.layout", set_layout, slab_bk_layout,
	      "SLAB's slab layout rules: final (default), 2013, 2013-prev, 2013-before");

static int set_freelist_idx(const char *val, const struct kernel_param *kp)
{
	unsigned long v;

	if (!val || kstrtoul(val, &v) || (v != 0 && v != 1 && v != 2 && v != 4)) {
		pr_err("slab.freelist_idx=%s: expected 1, 2 or 4 (bytes per index), or 0 for the layout's\n",
		       val ? val : "");
		return -EINVAL;
	}
	if (kp)
		slab_bk_freelist_idx = (unsigned int)v;
	return 0;
}
kmem_param_cb("slab.freelist_idx", set_freelist_idx, slab_bk_freelist_idx,
	      "SLAB: bytes per freelist index (1, 2, 4; 0: the layout's)");

kmem_param("slab.stats", slab_bk_stats, bool,
	   "SLAB statistics in /proc/slabinfo (the kernel's CONFIG_DEBUG_SLAB globalstat/cpustat)");
kmem_param("slab.max_order", slab_max_order_param, int,
	   "SLAB's slab_max_order (default 0, or 1 with more than 32 MiB of memory)");

/* ---- create ------------------------------------------------------------------- */

/* The kmalloc cache an off-slab index array of @bytes comes from. */
static struct slab_freelist_cache live_freelist_cache(unsigned int bytes, void *arg)
{
	struct slab_freelist_cache fc = { 0, false };
	struct kmem_cache *best = NULL;

	(void)arg;
	for (unsigned int i = 0; i <= KMALLOC_SHIFT_HIGH; i++) {
		struct kmem_cache *k = kmalloc_caches[i];

		if (k && k->object_size >= bytes && (!best || k->object_size < best->object_size))
			best = k;
	}
	if (best) {
		fc.slot = best->size;
		fc.off_slab = SLABC(best)->mgmt == SLAB_MGMT_OFF_SLAB;
		*(struct kmem_cache **)arg = best;
	}
	return fc;
}

static int geometry_of(unsigned int size, unsigned int align, slab_flags_t flags, bool ctor,
		       unsigned int order_cap, struct slab_geometry *g, struct kmem_cache **fcache)
{
	struct slab_geometry_in in = {
		.object_size = size, .align = align, .flags = flags, .has_ctor = ctor,
		.rules = slab_bk_layout, .idx_size = slab_bk_freelist_idx,
		.max_order = order_cap > slab_max_order_eff ? order_cap : slab_max_order_eff,
		.freelist_cache = live_freelist_cache, .arg = fcache,
	};

	return slab_calc_geometry(&in, g);
}

static int slab_cache_create(struct kmem_cache *s)
{
	struct slab_cache *c = SLABC(s);
	struct kmem_cache *fcache = NULL;
	struct slab_geometry g;

	if (geometry_of(s->object_size, s->align, s->flags, s->ctor != NULL, s->order_cap, &g, &fcache))
		return -EINVAL;
	s->flags = g.flags;
	s->size = g.size;
	s->align = g.align;
	s->inuse = g.size;
	s->offset = 0;
	s->index = 0;		/* no inline fast path: every call comes to slab_ops */
	s->red_left_pad = g.obj_offset;
	s->div_magic = div_magic(g.size);

	c->dbg = g.flags & SLAB_DEBUG_FLAGS;
	c->slow = c->dbg | (slab_bk_stats ? SLAB_SLOW_STATS : 0);
	c->free_slow = c->slow;
	if (s->ctor || (s->flags & SLAB_TYPESAFE_BY_RCU) || g.size < sizeof(uintptr_t))
		c->free_slow |= SLAB_SLOW_NOKEY;
	s->free_key = slab_bk_free_key;
	s->free_key_off = 0;
	c->span = (uintptr_t)g.num * g.size;
	c->num = g.num;
	c->gfporder = g.order;
	c->colour = g.colour;
	c->colour_off = g.colour_off;
	c->freelist_size = g.freelist_size;
	c->mgmt_hdr = (slab_bk_layout == SLAB_LAYOUT_2013_BEFORE) ? SLAB_OLD_HEADER_SIZE : 0;
	c->obj_offset = g.obj_offset;
	c->obj_size_used = (s->object_size + 7) & ~7u;
	c->idx_size = g.idx_size;
	c->mgmt = g.mgmt;
	c->mgmt_first = g.mgmt_first;
	c->reciprocal_buffer_size = (uint32_t)(((1ULL << 32) + g.size - 1) / g.size);
	c->freelist_cache = NULL;
	if (g.mgmt == SLAB_MGMT_OFF_SLAB)	/* the cache of the array the slabs will have */
		live_freelist_cache(g.freelist_size, &c->freelist_cache);
	c->allocflags = (s->flags & SLAB_RECLAIM_ACCOUNT) ? __GFP_RECLAIMABLE : 0;
	if (g.mgmt == SLAB_MGMT_OFF_SLAB && !c->freelist_cache)
		return -EINVAL;

	struct slab_node *n = &c->node;
	kmem_lock_init(&n->list_lock);
	INIT_LIST_HEAD(&n->slabs_partial);
	INIT_LIST_HEAD(&n->slabs_full);
	INIT_LIST_HEAD(&n->slabs_free);
	/* The first node reap is offset by the cache's address: not all caches at once. */
	n->next_reap = os_now_ns() + REAPTIMEOUT_NODE_NS + (uintptr_t)s % REAPTIMEOUT_NODE_NS;

	int slot = slab_get_cpu_slot();
	if (slot < 0) {
		pr_err("kmem_cache_create(%s): more than %d SLAB caches\n", s->name, SLAB_MAX_CACHES - 1);
		return -ENOMEM;
	}
	c->cpu_slot = (unsigned int)slot;
	if (enable_cpucache(s)) {
		slab_put_cpu_slot(c->cpu_slot);
		return -ENOMEM;
	}
	slab_slot_publish(s);
	return 0;
}

static int slab_probe_slab(unsigned int size, unsigned int align, slab_flags_t flags, unsigned int order_cap,
			   unsigned int *slab_bytes, unsigned int *objects)
{
	struct kmem_cache *fcache = NULL;
	struct slab_geometry g;

	if (geometry_of(size, align, flags, false, order_cap, &g, &fcache))
		return -EINVAL;
	*slab_bytes = (unsigned int)(PAGE_SIZE << g.order);
	*objects = g.num;
	return 0;
}

/* ---- shrink, destroy --------------------------------------------------------------- */

/* The shared array and every free slab back; 1 if slabs remain. */
static int drain_node(struct kmem_cache *s)
{
	struct slab_node *n = &SLABC(s)->node;
	struct list_head list = LIST_HEAD_INIT(list);
	int left;

	kmem_lock(&n->list_lock);
	if (n->shared && n->shared->avail) {
		free_block(s, n->shared->entry, n->shared->avail, &list);
		n->shared->avail = 0;
	}
	drain_freelist_locked(s, ~0u, &list);
	left = n->total_slabs != 0;
	kmem_unlock(&n->list_lock);
	slabs_destroy(s, &list);
	return left;
}

static int slab_cache_shrink(struct kmem_cache *s)
{
	slab_bk_flush_this_thread(s);
	return drain_node(s);
}

void slab_bk_report_leaks(struct kmem_cache *s, unsigned long active)
{
	struct slab_cache *c = SLABC(s);
	struct slab_node *n = &c->node;
	struct list_head *lists[2] = { &n->slabs_partial, &n->slabs_full };
	unsigned long shown = 0;
	struct slab_desc *d;

	printk("BUG %s (Not tainted): Objects remaining in %s on __kmem_cache_shutdown()\n", s->name, s->name);
	kmem_lock(&n->list_lock);
	for (int l = 0; l < 2; l++)
		list_for_each_entry(d, lists[l], slab_list)
			for (unsigned int i = 0; i < c->num && shown < 64; i++) {
				if (slab_idx_free(c, d, i))
					continue;
				char *x = index_to_obj(c, s, d, i) + c->obj_offset;
				printk("Object %p @offset=%lu\n", (void *)x,
				       (unsigned long)(x - (char *)__page_address(desc_page(d))));
				shown++;
			}
	unsigned long slabs = n->total_slabs;
	kmem_unlock(&n->list_lock);
	if (active > shown)
		printk("INFO: %lu more object(s) not listed (past the first 64)\n", active - shown);
	kmem_warn("mm/slab_common.c:kmem_cache_destroy",
		  "kmem_cache_destroy %s: Slab cache still has objects when called from kmem_cache_destroy\n"
		  "INFO: %lu object(s) still allocated in %lu slab(s); the cache is kept\n",
		  s->name, active, slabs);
}

static void slab_cache_destroy(struct kmem_cache *s)
{
	struct slab_cache *c = SLABC(s);
	struct slab_node *n = &c->node;

	/* New arrays of it no more; every thread's goes back to the node (the kernel's drain_cpu_caches). */
	__atomic_store_n(&c->dying, true, __ATOMIC_RELEASE);
	drain_cpu_caches(s);
	if (drain_node(s)) {
		kmem_lock(&n->list_lock);
		unsigned long active = n->total_slabs * c->num - n->free_objects;
		kmem_unlock(&n->list_lock);
		slab_bk_report_leaks(s, active);
		/*
		 * Kept, with its slot: its objects may still be freed (straight
		 * to their slabs, the cache being dying), and a new cache in
		 * the same slot would take them into its arrays.
		 */
		return;
	}
	free_arraycache(n->shared);
	n->shared = NULL;
	slab_put_cpu_slot(c->cpu_slot);
	kmem_cache_free_struct(s);
}

/* ---- boot ------------------------------------------------------------------------- */

static int slab_init(void)
{
	if (slab_max_order_param >= 0)
		slab_max_order_eff = slab_max_order_param > MAX_PAGE_ORDER ? MAX_PAGE_ORDER
									: (unsigned int)slab_max_order_param;
	else	/* SLAB_MAX_ORDER_HI on machines with more than 32 MiB */
		slab_max_order_eff = mm_model.spanned_pages > (32UL << 20) >> PAGE_SHIFT ? 1 : 0;
	/* Odd and with a fixed low byte, as SLUB's (slub_init()). */
	slab_bk_free_key = (os_now_ns() * 0x9E3779B97F4A7C15ull) ^ ((uintptr_t)&slab_bk_free_key << 12) ^
			   ((uintptr_t)os_getpid() << 32);
	slab_bk_free_key = (slab_bk_free_key & ~(uintptr_t)0xff) | 0xa5;
	/* The statistics columns only when counted (the kernel's CONFIG_DEBUG_SLAB). */
	if (!slab_bk_stats)
		slab_ops.slabinfo_show_stats = NULL;
	return slab_bk_thread_init();
}

const struct slab_backend slab_backend = {
	.name = "slab",
	.cache_priv_size = sizeof(struct slab_cache),
	.merges = true,
	.init = slab_init,
	.cache_create = slab_cache_create,
	.probe_slab = slab_probe_slab,
	.cache_destroy = slab_cache_destroy,
	.cache_shrink = slab_cache_shrink,
	.alloc = slab_bk_alloc,
	.free = slab_bk_free,
	.alloc_bulk = slab_bk_alloc_bulk,
	.free_bulk = slab_bk_free_bulk,
	.kfree = slab_bk_kfree,
	.obj_info = slab_bk_obj_info,
	.get_slabinfo = slab_bk_get_slabinfo,
	.slabinfo_show_stats = slab_bk_show_stats,
	.slabinfo_write = slab_bk_slabinfo_write,
	.validate = slab_bk_validate,
	.flush_thread = slab_bk_flush_thread,
	.fork_prepare = slab_bk_fork_prepare,
	.fork_parent = slab_bk_fork_parent,
	.fork_child = slab_bk_fork_child,
};

