// SPDX-License-Identifier: MIT
/*
 * SLUB caches (kernel mm/slub.c): creating one (its layout, slab order and
 * per-thread slot), shrinking, and destroying it once no thread holds it.
 */
#include <errno.h>
#include <string.h>

#include "core/boot.h"
#include "core/cmdline.h"
#include "slab/slub/slub_internal.h"

static atomic_uint next_cache_index = 1;	/* slot 0 is no cache's (struct slub_thread) */
/*
 * Indices of caches that went away whole, for the next caches (under
 * slub_threads_lock): a program that creates and destroys caches in a loop,
 * as modules are loaded and unloaded, would otherwise run out of slots.
 * Only a release with no slab left frees one: then every thread's slot for
 * it has been retired (->cache NULL, no sheaf, no cpu slab) and no page map
 * word names it, so the next cache finds the slots as if never used.
 */
static uint16_t free_index[KMEM_MAX_CACHES];
static unsigned int nr_free_index;

static unsigned int get_cache_index(void)
{
	unsigned int index = 0;

	kmem_lock(&slub_threads_lock);
	if (nr_free_index)
		index = free_index[--nr_free_index];
	kmem_unlock(&slub_threads_lock);
	if (index)
		return index;
	index = atomic_fetch_add(&next_cache_index, 1);
	if (index >= KMEM_MAX_CACHES) {
		atomic_fetch_sub(&next_cache_index, 1);
		return 0;
	}
	return index;
}

uint64_t slub_free_magic[KMEM_MAX_CACHES];

/*
 * May a free of @s be decided from the page map word (slub_free_ptr())?
 * Its objects go through sheaves, start at the slab's start (no left red
 * zone), hold the free key in their first word, apart from the free
 * pointer (so every free object carries it), and nothing else (debug) is
 * checked on a free.
 */
static bool slub_free_by_word(const struct kmem_cache *s)
{
	return slub_of(s)->sheaf_capacity && !s->red_left_pad && !s->free_key_off &&
	       slub_free_key_apart(s) && s->free_key == slub_free_key;
}

static void put_cache_index(unsigned int index)
{
	__atomic_store_n(&slub_free_magic[index], 0, __ATOMIC_RELAXED);
	kmem_lock(&slub_threads_lock);
	free_index[nr_free_index++] = (uint16_t)index;
	kmem_unlock(&slub_threads_lock);
}

static unsigned int slub_min_order;
static unsigned int slub_max_order = PAGE_ALLOC_COSTLY_ORDER;
static unsigned int slub_min_objects;
static bool slab_freelist_hardened;

kmem_param("slub_min_order", slub_min_order, uint, "smallest page order for slabs");
kmem_param("slab_min_order", slub_min_order, uint, "alias of slub_min_order (kernel 6.x name)");
kmem_param("slub_max_order", slub_max_order, uint, "largest page order SLUB picks for slabs (default 3)");
kmem_param("slab_max_order", slub_max_order, uint, "alias of slub_max_order (kernel 6.x name)");
kmem_param("slub_min_objects", slub_min_objects, uint,
	   "objects a slab should hold at least (default 4 * (fls(nr_cpus) + 1))");
kmem_param("slab_min_objects", slub_min_objects, uint, "alias of slub_min_objects (kernel 6.x name)");
static bool slub_sheaves = true;
kmem_param("slub_sheaves", slub_sheaves, bool,
	   "per-cpu sheaves for every cache, as in the newest kernels (0: 6.18, where caches opt in)");
kmem_param("slab_freelist_hardened", slab_freelist_hardened, bool,
	   "obfuscate free pointers (kernel CONFIG_SLAB_FREELIST_HARDENED)");

/* ---- caches -------------------------------------------------------- */

/*
 * slub_max_order, or @order_cap where a cache's creator wants more
 * (kmem_cache_create_order()): its slabs are then of that order, not of
 * the smallest one whose waste would do (malloc's classes past 4 KiB are
 * sized to fill 128 KiB slabs; in 64 KiB ones they would waste 4%).  A
 * cap up to PAGE_ALLOC_COSTLY_ORDER changes nothing.
 */
static struct slab_order_params order_params(unsigned int order_cap)
{
	struct slab_order_params p = SLAB_ORDER_PARAMS_DEFAULT(kmem_nr_cpus());

	p.min_order = slub_min_order;
	/* Past the kernel's default: the order asked, also where slub_max_order= is as high. */
	if (order_cap > PAGE_ALLOC_COSTLY_ORDER && order_cap > p.min_order)
		p.min_order = order_cap;
	p.max_order = order_cap > slub_max_order ? order_cap : slub_max_order;
	/* As in the kernel: a min above max raises max. */
	if (p.min_order > p.max_order)
		p.max_order = p.min_order;
	if (p.max_order > MAX_PAGE_ORDER)
		p.max_order = MAX_PAGE_ORDER;
	p.min_objects = slub_min_objects;
	return p;
}

__attribute__((noinline)) void *slub_zero_object(struct kmem_cache *s, void *object)
{
	return memset(object, 0, s->object_size);
}

int slub_probe_slab(unsigned int size, unsigned int align, slab_flags_t flags, unsigned int order_cap,
		    unsigned int *slab_bytes, unsigned int *objects)
{
	struct slab_order_params p = order_params(order_cap);
	struct slub_layout l;
	int rc = slub_calculate_layout(size, align, flags, false, &p, &l);

	if (rc)
		return rc;
	*slab_bytes = (unsigned int)PAGE_SIZE << l.order;
	*objects = l.objects;
	return 0;
}

int slub_cache_create(struct kmem_cache *s)
{
	struct slab_order_params p = order_params(s->order_cap);
	struct slub_layout l;
	int rc = slub_calculate_layout(s->object_size, s->align, s->flags, s->ctor != NULL, &p, &l);

	if (rc)
		return rc;
	unsigned int index = get_cache_index();
	if (!index) {
		pr_err("too many caches (at most %d alive)\n", KMEM_MAX_CACHES - 1);
		return -ENOSPC;
	}
	s->index = index;
	s->size = l.size;
	s->inuse = l.inuse;
	s->offset = l.offset;
	s->align = l.align;
	s->red_left_pad = l.red_left_pad;
	/*
	 * The free key in the first word, where the free pointer is not (it
	 * is mid-object, so a small overrun of a neighbour hits data): a
	 * string or a struct's first field overwrites it when the block is
	 * used again.  Where a freed object's bytes stay meaningful (ctor,
	 * RCU, poison, a field the cache named) or there is one word only:
	 * in the free pointer's word, which holds nothing while the object
	 * sits in a sheaf.
	 */
	s->free_key_off = l.offset;
	if (l.offset && l.offset < s->object_size && !s->ctor &&
	    !(s->flags & (SLAB_TYPESAFE_BY_RCU | SLAB_POISON)) &&
	    l.offset == ((s->object_size / 2) & ~(unsigned int)(sizeof(void *) - 1)))
		s->free_key_off = 0;
	s->free_key = slub_free_key;
	slub_of(s)->oo = oo_make(l.order, l.size);
	slub_of(s)->min = oo_make(l.min_order, l.size);
	if (l.order <= order_params(0).max_order)
		s->order_cap = 0;	/* its slabs are the usual ones: no first-slab rule */
	s->div_magic = div_magic(l.size);
	slub_of(s)->min_partial = slub_min_partial(l.size);
	slub_of(s)->cpu_partial = slub_has_cpu_partial(s->flags) ? slub_default_cpu_partial(l.size) : 0;
	slub_of(s)->cpu_partial_slabs = slub_of(s)->cpu_partial ? slub_cpu_partial_slabs(slub_of(s)->cpu_partial, l.objects) : 0;
	slub_of(s)->sheaf_capacity = slub_sheaves ? slub_sheaf_capacity(l.size, s->flags, 0) : 0;
	barn_init(s);
	/* Before any slab of it is published (release stores, publish_slab_uncounted()). */
	__atomic_store_n(&slub_free_magic[index], slub_free_by_word(s) ? s->div_magic : 0, __ATOMIC_RELAXED);
	s->random = 0;
	if (slab_freelist_hardened) {
		/* A per-cache key; the low bit set so it is never 0. */
		s->random = ((uintptr_t)s * 0x9E3779B97F4A7C15ull) ^ os_now_ns() ^ ((uintptr_t)&p << 7);
		s->random |= 1;
	}
	atomic_store_explicit(&slub_of(s)->nr_thread_users, 1, memory_order_relaxed);	/* the cache's own */
	kmem_lock_init(&slub_of(s)->node.list_lock);
	INIT_LIST_HEAD(&slub_of(s)->node.partial);
	INIT_LIST_HEAD(&slub_of(s)->node.full);
	slub_release_setup(s);
	return 0;
}

size_t slub_ksize(const struct kmem_cache *s)
{
	/* Debug metadata after the object is not the user's to use. */
	if (s->flags & (SLAB_RED_ZONE | SLAB_POISON))
		return s->object_size;
	if (s->flags & (SLAB_TYPESAFE_BY_RCU | SLAB_STORE_USER) || s->ctor)
		return s->inuse;
	return s->size;
}

/* Discard the node's empty slabs and sort the rest fullest first (kernel __kmem_cache_do_shrink). */
static int shrink_node(struct kmem_cache *s, bool keep_min)
{
	struct kmem_cache_node *n = &slub_of(s)->node;
	struct list_head discard = LIST_HEAD_INIT(discard);
	struct list_head promote[32];
	struct slab *slab, *tmp;

	for (int i = 0; i < 32; i++)
		INIT_LIST_HEAD(&promote[i]);
	kmem_lock(&n->list_lock);
	list_for_each_entry_safe(slab, tmp, &n->partial, slab_list) {
		unsigned int free = slab_free_objects(slab);
		if (free == ss_objects(slab_state(slab)) &&
		    (!keep_min || n->nr_partial > tun_min_partial(s))) {
			remove_partial(n, slab);
			list_add(&slab->slab_list, &discard);
		} else if (free <= 32 && free) {
			list_move(&slab->slab_list, &promote[free - 1]);
		}
	}
	/* Slabs with the fewest free objects first: they fill up and free
	 * slabs are more likely to empty. */
	for (int i = 31; i >= 0; i--)
		while (!list_empty(&promote[i])) {
			slab = list_last_entry(&promote[i], struct slab, slab_list);
			list_move(&slab->slab_list, &n->partial);
		}
	kmem_unlock(&n->list_lock);
	int freed = 0;
	list_for_each_entry_safe(slab, tmp, &discard, slab_list) {
		atomic_fetch_add_explicit(&slub_of(s)->dead_stat[FREE_SLAB], 1, memory_order_relaxed);
		discard_slab(s, slab);
		freed++;
	}
	return freed;
}

/* As the kernel's: 0 if every slab went back, 1 if some remain (in use, or other threads'). */
int slub_shrink(struct kmem_cache *s)
{
	slub_flush_this_thread(s);
	barn_shrink(s);
	shrink_node(s, false);
	slub_release_sweep(s);
	return atomic_load_explicit(&slub_of(s)->node.nr_slabs, memory_order_relaxed) != 0;
}

/* The last reference is gone: check for leaks and free what is left (kernel __kmem_cache_shutdown). */
void slub_cache_release(struct kmem_cache *s)
{
	/* A reap still reading @s (a few instructions from done): let it finish. */
	while (atomic_load_explicit(&slub_of(s)->reapers, memory_order_seq_cst))
		os_sleep_us(10);
	barn_shrink(s);
	shrink_node(s, false);
	long slabs = atomic_load(&slub_of(s)->node.nr_slabs);
	if (slabs) {
		/* Every thread has let go: the free objects left are on the node's slabs. */
		struct slub_info info;
		slub_get_info(s, &info);
		/* As the kernel: the BUG and the objects (__kmem_cache_shutdown()), then the WARN. */
		printk("BUG %s (Not tainted): Objects remaining in %s on __kmem_cache_shutdown()\n",
		       s->name, s->name);
		unsigned long shown = list_slab_objects(s, 64);
		if (info.active_objs > shown)
			printk("INFO: %lu more object(s) not listed (in full slabs, or past the first 64)\n",
			       info.active_objs - shown);
		kmem_warn("mm/slab_common.c:kmem_cache_destroy",
			  "kmem_cache_destroy %s: Slab cache still has objects when called from kmem_cache_destroy\n"
			  "INFO: %lu object(s) still allocated in %ld slab(s); the cache is kept\n",
			  s->name, info.active_objs, slabs);
		return;
	}
	unsigned int index = s->index;
	kmem_cache_free_struct(s);
	put_cache_index(index);
}

#define DESTROY_WAIT_US	100000

/*
 * Is a slot of @s being reaped?  Tagged (no new tag can come once a destroy
 * has claimed the rest: dying is set first), or its reaper not yet done
 * (it counts itself in reapers after tagging, and out after untagging and
 * retiring the slot).
 */
static bool being_reaped(struct kmem_cache *s)
{
	struct slub_thread_node *r;
	bool tagged = false;

	kmem_lock(&slub_threads_lock);
	for_each_thread_slot(r, c, s)
		tagged |= ((uintptr_t)__atomic_load_n(&c->cache, __ATOMIC_SEQ_CST) & SLOT_REAPING) != 0;
	kmem_unlock(&slub_threads_lock);
	return tagged || atomic_load_explicit(&slub_of(s)->reapers, memory_order_seq_cst);
}

void slub_cache_destroy(struct kmem_cache *s)
{
	struct slub_thread_node *r;

	/* Sequentially consistent: a reap_slot() that holds a claim sees it after. */
	__atomic_store_n(&slub_of(s)->dying, true, __ATOMIC_SEQ_CST);
	/*
	 * As the kernel flushes every CPU's sheaves and slabs before it looks
	 * for objects left: the caller guarantees that nobody uses @s any more,
	 * so every thread's slot for it is idle and is retired from here, and
	 * the objects those threads had cached are free again before the check.
	 * Slots are claimed under slub_threads_lock, a batch at a time, and
	 * flushed outside it (a flush frees pages, which may take a while, and
	 * must not hold up other threads' first allocations); the owner's
	 * registry node counts them busy, so an exiting thread waits before it
	 * unmaps them.  A thread exiting right now claims each slot itself or
	 * leaves it to us.
	 */
	enum { BATCH = 32 };
	struct { struct slub_thread_node *r; struct kmem_cache_cpu *c; } claimed[BATCH];
	bool saw_reap = false;
	int n;

	do {
		n = 0;
		kmem_lock(&slub_threads_lock);
		for_each_thread_slot(r, c, s) {
			if (n < BATCH && claim_cpu_slot(s, c)) {
				atomic_fetch_add_explicit(&r->busy, 1, memory_order_relaxed);
				claimed[n].r = r;
				claimed[n++].c = c;
			} else if ((uintptr_t)__atomic_load_n(&c->cache, __ATOMIC_SEQ_CST) & SLOT_REAPING) {
				saw_reap = true;
			}
		}
		kmem_unlock(&slub_threads_lock);
		for (int i = 0; i < n; i++) {
			(void)finish_retire(s, claimed[i].c);	/* never the last: the cache's own reference is held */
			atomic_fetch_sub_explicit(&claimed[i].r->busy, 1, memory_order_release);
		}
	} while (n == BATCH);
	/*
	 * A slot another thread is reaping right now (tagged) could not be
	 * claimed; that thread retires it in a moment, before it counts itself
	 * out of reapers.  Wait for that (100 ms at most), so that the last
	 * reference is ours, and the check for objects left, with its report,
	 * comes from this call, as the kernel's does.  (Slots of threads that
	 * do not exist, in a fork's child, are not waited for: they are off
	 * the registry, and their reaps were undone, slub_fork_child().)
	 */
	if (saw_reap || being_reaped(s)) {
		unsigned long long until = os_now_ns() + DESTROY_WAIT_US * 1000ull;
		while (being_reaped(s) && os_now_ns() < until)
			os_sleep_us(20);
	}
	/*
	 * nr_thread_users holds one reference for the cache itself (taken in
	 * slub_cache_create), dropped here: whoever drops the last one releases,
	 * once (an exiting thread, or a reap, may still hold a reference).
	 */
	if (atomic_fetch_sub_explicit(&slub_of(s)->nr_thread_users, 1, memory_order_acq_rel) == 1)
		slub_cache_release(s);
}
