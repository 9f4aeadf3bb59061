// SPDX-License-Identifier: MIT
/*
 * SLUB's statistics and introspection (what /proc/slabinfo and
 * /sys/kernel/slab read and write): counters summed over the threads'
 * slots, the slabinfo numbers, validate, and the writable tunables.  Other
 * threads' slots are read without stopping them, through relaxed loads of
 * what their owners store as relaxed atomics; their slabs are never
 * followed.
 */
#include <errno.h>

#include "core/printk.h"
#include "slab/slub/slub_internal.h"

const char *const slub_stat_names[NR_SLUB_STAT_ITEMS] = {
	"alloc_fastpath", "alloc_slowpath", "free_fastpath", "free_slowpath", "free_frozen",
	"free_add_partial", "free_remove_partial", "alloc_from_partial", "alloc_slab",
	"alloc_refill", "alloc_node_mismatch", "free_slab", "cpuslab_flush", "deactivate_full",
	"deactivate_empty", "deactivate_to_head", "deactivate_to_tail",
	"deactivate_remote_frees", "deactivate_bypass", "order_fallback",
	"cmpxchg_double_cpu_fail", "cmpxchg_double_fail", "cpu_partial_alloc",
	"cpu_partial_free", "cpu_partial_node", "cpu_partial_drain",
	"thrash_detected", "thrash_skip_partial",
	"alloc_cpu_sheaf", "free_cpu_sheaf", "sheaf_flush", "sheaf_refill", "sheaf_alloc",
	"sheaf_free", "barn_get", "barn_get_fail", "barn_put", "barn_put_fail",
};

unsigned long slub_stat_sum(struct kmem_cache *s, enum stat_item si, unsigned long *per_thread,
			    int max_threads, int *nr_threads)
{
	struct slub_thread_node *r;
	unsigned long sum = atomic_load_explicit(&slub_of(s)->dead_stat[si], memory_order_relaxed);
	int n = 0;

	kmem_lock(&slub_threads_lock);
	for_each_thread_slot(r, c, s) {
		unsigned long v = __atomic_load_n(&c->stat[si], __ATOMIC_RELAXED);
		sum += v;
		if (per_thread && n < max_threads)
			per_thread[n] = v;
		n++;
	}
	kmem_unlock(&slub_threads_lock);
	if (nr_threads)
		*nr_threads = n < max_threads ? n : max_threads;
	return sum;
}

void slub_stat_clear(struct kmem_cache *s, enum stat_item si)
{
	struct slub_thread_node *r;

	atomic_store_explicit(&slub_of(s)->dead_stat[si], 0, memory_order_relaxed);
	kmem_lock(&slub_threads_lock);
	list_for_each_entry(r, &slub_threads, node) {
		struct kmem_cache_cpu *c = &r->t->cpu[s->index];
		if (slot_cache(c) == s)
			__atomic_store_n(&c->stat[si], 0, __ATOMIC_RELAXED);
	}
	kmem_unlock(&slub_threads_lock);
}

/*
 * Numbers for /proc/slabinfo and sysfs.  As in the kernel, objects cached by
 * threads count as active: only free objects on node partial slabs do not.
 * Per-thread slabs are counted from their owners' slots without stopping
 * them, so concurrent readers see a consistent-enough snapshot.
 */
void slub_get_info(struct kmem_cache *s, struct slub_info *info)
{
	struct kmem_cache_node *n = &slub_of(s)->node;
	struct slab *slab;
	struct slub_thread_node *r;

	memset(info, 0, sizeof(*info));
	kmem_lock(&n->list_lock);
	/* Under the lock: a slab is counted before it can reach the partial list. */
	info->num_slabs = (unsigned long)atomic_load(&n->nr_slabs);
	info->num_objs = (unsigned long)atomic_load(&n->total_objects);
	info->partial = n->nr_partial;
	unsigned long free = 0;
	list_for_each_entry(slab, &n->partial, slab_list) {
		unsigned int f = slab_free_objects(slab);
		free += f;
		info->objects_partial += ss_objects(slab_state(slab)) - f;
	}
	kmem_unlock(&n->list_lock);
	/* Slabs given back whole are uncounted outside the lock: never below 0. */
	info->active_objs = info->num_objs > free ? info->num_objs - free : 0;
	info->active_slabs = info->num_slabs;

	kmem_lock(&slub_threads_lock);
	for_each_thread_slot(r, c, s) {
		if (__atomic_load_n(&c->slab, __ATOMIC_RELAXED))
			info->cpu_slabs++;
		unsigned long nr = __atomic_load_n(&c->nr_partial, __ATOMIC_RELAXED);
		info->cpu_partial_slabs += nr;
		info->cpu_partial_objs += nr * oo_objects(slub_of(s)->oo) / 2;
	}
	kmem_unlock(&slub_threads_lock);
}

int slub_cpu_partial_per_thread(struct kmem_cache *s, unsigned int *slabs, int max_threads)
{
	struct slub_thread_node *r;
	int n = 0;

	kmem_lock(&slub_threads_lock);
	for_each_thread_slot(r, c, s) {
		if (n < max_threads) {
			slabs[n++] = __atomic_load_n(&c->nr_partial, __ATOMIC_RELAXED);
		}
	}
	kmem_unlock(&slub_threads_lock);
	return n;
}

/*
 * Walk every node partial slab: its freelist must stay inside the slab, on
 * slot boundaries, without cycles, and match its in-use count.  (Full and
 * thread-owned slabs are not on any list; slub_debug will track them.)
 */
long slub_validate(struct kmem_cache *s)
{
	struct kmem_cache_node *n = &slub_of(s)->node;
	struct slab *slab, *tmp;
	long errors = 0;

	slub_flush_this_thread(s);
	/*
	 * A debug cache's slabs change only under list_lock, so what is
	 * found is also fixed, as the kernel's on_freelist() does: the chain
	 * cut before a bad pointer, the count set to what was counted.  Other
	 * caches' slabs take lockless frees meanwhile: reported only.
	 */
	bool fix = kmem_cache_debug(s);
	kmem_lock(&n->list_lock);
	list_for_each_entry_safe(slab, tmp, &n->partial, slab_list) {
		uint64_t st = slab_state(slab);
		unsigned int nfree = 0, objects = ss_objects(st);
		void *prev = NULL;
		for (void *p = ss_freelist(slab, st); p && nfree <= objects; p = get_freepointer(s, p)) {
			if (!slab_obj_valid(s, slab, p)) {
				errors++;
				if (fix && prev) {
					set_freepointer(s, prev, NULL);
					kmem_report("BUG %s (Not tainted): Freechain corrupt\n"
						    "FIX %s: Freechain cut after %p\n", s->name, s->name, prev);
				} else if (fix) {
					kmem_report("BUG %s (Not tainted): Freepointer corrupt\n"
						    "FIX %s: Freelist cleared, marking all objects used\n",
						    s->name, s->name);
					slab_mark_all_used(slab);
					remove_partial(n, slab);
					nfree = 0;
					st = slab_state(slab);
				} else {
					kmem_report("BUG %s (Not tainted): Freechain corrupt\n", s->name);
				}
				break;
			}
			prev = p;
			nfree++;
		}
		if (nfree > objects) {
			/* More free objects than the slab has: the chain loops (kernel on_freelist()). */
			errors++;
			kmem_report("BUG %s (Not tainted): Freelist cycle detected\n%s%s%s", s->name,
				    fix ? "FIX " : "", fix ? s->name : "",
				    fix ? ": Freelist cleared, marking all objects used\n" : "");
			if (fix) {
				slab_mark_all_used(slab);
				remove_partial(n, slab);
			}
			continue;
		}
		if (nfree != objects - ss_inuse(st)) {
			kmem_report("BUG %s (Not tainted): Wrong object count. Counter is %u but counted were %u\n%s%s%s",
				    s->name, ss_inuse(st), objects - nfree, fix ? "FIX " : "",
				    fix ? s->name : "", fix ? ": Object count adjusted\n" : "");
			errors++;
			if (fix)
				atomic_store_explicit(&slab->state,
						      ss_make(slab, ss_freelist(slab, st), objects - nfree,
							      objects, false),
						      memory_order_release);
		}
		if (ss_frozen(st)) {
			kmem_report("BUG %s (Not tainted): frozen slab on the node partial list\n", s->name);
			errors++;
		}
		if (fix)	/* red zones and poison of every object (slub_debug.c) */
			errors += validate_slab_objects(s, slab);
	}
	/* SLAB_STORE_USER caches keep their full slabs listed (kernel validate_slab_node()). */
	list_for_each_entry(slab, &n->full, slab_list) {
		uint64_t st = slab_state(slab);
		if (ss_freelist(slab, st) || ss_inuse(st) != ss_objects(st)) {
			kmem_report("BUG %s (Not tainted): Slab on the full list has free objects (inuse %u of %u)\n",
				    s->name, ss_inuse(st), ss_objects(st));
			errors++;
		}
		errors += validate_slab_objects(s, slab);
	}
	kmem_unlock(&n->list_lock);
	return errors;
}

void slub_set_min_free_watermark(struct kmem_cache *s, unsigned long ratio)
{
	/* Stored as objects so the slow path needs no arithmetic (slab_thrash_ratio). */
	__atomic_store_n(&slub_of(s)->min_free_watermark,
			 (unsigned int)(oo_objects(slub_of(s)->oo) * ratio / 100), __ATOMIC_RELAXED);
}

unsigned long slub_thrash_ratio(const struct kmem_cache *s)
{
	return (unsigned long)__atomic_load_n(&slub_of(s)->min_free_watermark, __ATOMIC_RELAXED) * 100 /
	       oo_objects(slub_of(s)->oo);
}

int slub_set_cpu_partial(struct kmem_cache *s, unsigned int objects)
{
	if (objects && !slub_has_cpu_partial(s->flags))
		return -EINVAL;
	__atomic_store_n(&slub_of(s)->cpu_partial, objects, __ATOMIC_RELAXED);
	__atomic_store_n(&slub_of(s)->cpu_partial_slabs,
			 objects ? slub_cpu_partial_slabs(objects, oo_objects(slub_of(s)->oo)) : 0,
			 __ATOMIC_RELAXED);
	return 0;
}
