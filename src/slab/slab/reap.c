// SPDX-License-Identifier: MIT
/*
 * cache_reap(): every REAPTIMEOUT_AC (2 s) a CPU drains the part of its
 * arrays that was not touched since the last time, and every
 * REAPTIMEOUT_NODE (4 s) a node's shared array and its free slabs follow.
 * The kernel runs it as per-CPU delayed work; a thread here has no timer,
 * so a thread looks at the clock from its own slow paths (a refill or a
 * flush, every SLAB_REAP_EVENTS of them) and reaps its own arrays when 2 s
 * have passed: a thread that stays on its fast paths has nothing to give
 * back.  The malloc front-end's reaper shrinks every kmalloc and malloc
 * cache of an idle program (kmem_cache_shrink(): the shared arrays and
 * free slabs), which covers the node part for threads that have stopped.
 */
#include "slab/slab/slab_priv.h"

#define SLAB_REAP_EVENTS	64	/* slow paths between two looks at the clock */

void drain_array(struct kmem_cache *s, struct array_cache *ac, bool whole)
{
	struct slab_node *n = &SLABC(s)->node;
	struct list_head list = LIST_HEAD_INIT(list);

	if (!ac)
		return;
	/* The lock first: the shared array is the node's, under list_lock. */
	kmem_lock(&n->list_lock);
	if (!ac->avail || (!whole && ac->touched)) {
		ac->touched = 0;
		kmem_unlock(&n->list_lock);
		return;
	}
	unsigned int tofree = whole ? ac->avail : (ac->limit + 4) / 5;
	if (tofree > ac->avail)
		tofree = (ac->avail + 1) / 2;
	free_block(s, ac->entry, tofree, &list);
	ac->avail -= tofree;
	memmove(ac->entry, &ac->entry[tofree], ac->avail * sizeof(void *));
	kmem_unlock(&n->list_lock);
	slabs_destroy(s, &list);
}

/* The node's part, every 4 s: the shared array like a CPU's, then a fifth of free_limit in free slabs. */
static void reap_node(struct kmem_cache *s, unsigned long long now)
{
	struct slab_cache *c = SLABC(s);
	struct slab_node *n = &c->node;
	struct list_head list = LIST_HEAD_INIT(list);

	if (now < __atomic_load_n(&n->next_reap, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&n->next_reap, now + REAPTIMEOUT_NODE_NS, __ATOMIC_RELAXED);
	drain_array(s, n->shared, false);	/* under list_lock: the shared array is the node's */
	if (__atomic_load_n(&n->free_touched, __ATOMIC_RELAXED)) {
		__atomic_store_n(&n->free_touched, 0, __ATOMIC_RELAXED);
		return;
	}
	kmem_lock(&n->list_lock);
	unsigned int nr = drain_freelist_locked(s, (n->free_limit + 5 * c->num - 1) / (5 * c->num), &list);
	kmem_unlock(&n->list_lock);
	slabs_destroy(s, &list);
	slab_stat(c, SLAB_STAT_REAPED, nr);
}

static void cache_reap(struct slab_thread *t, unsigned long long now)
{
	struct kmem_cache *s;

	/* As the kernel's: skipped when slab_mutex is busy (a create or destroy). */
	if (!kmem_trylock(&slab_mutex))
		return;
	list_for_each_entry(s, &slab_caches, list) {
		struct slab_cache *c = SLABC(s);
		struct array_cache *ac = t->ac[c->cpu_slot];

		if (ac)
			drain_array(s, ac, false);
		reap_node(s, now);
	}
	kmem_unlock(&slab_mutex);
}

void slab_bk_reap_tick(void)
{
	struct slab_thread *t = slab_this;

	if (t == &slab_thread_none || ++t->slow_events < SLAB_REAP_EVENTS)
		return;
	t->slow_events = 0;
	unsigned long long now = os_now_ns();
	if (now < t->next_reap)
		return;
	t->next_reap = now + REAPTIMEOUT_AC_NS;
	cache_reap(t, now);
}

