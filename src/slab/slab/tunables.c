// SPDX-License-Identifier: MIT
/*
 * SLAB's tunables and figures: enable_cpucache()'s defaults,
 * do_tune_cpucache(), a write of "name limit batchcount shared" to
 * /proc/slabinfo, the slabinfo figures and the statistics columns of
 * "slabinfo - version: 2.1 (statistics)".
 */
#include <errno.h>
#include <stdio.h>

#include "core/boot.h"
#include "introspect/seq_buf.h"
#include "slab/slab/slab_priv.h"

#define MAX_SLABINFO_WRITE	128

/*
 * do_tune_cpucache(): the cache's tunables and a new shared array.  The
 * kernel swaps every CPU's array at once (an IPI each); here the calling
 * thread's array follows now, every other thread's at its next refill or
 * flush (slab_cpu_array() sees tune_gen move).
 */
static int do_tune_cpucache(struct kmem_cache *s, unsigned int limit, unsigned int batchcount,
			    unsigned int shared)
{
	struct slab_cache *c = SLABC(s);
	struct slab_node *n = &c->node;
	struct array_cache *new_shared = NULL, *old;
	struct list_head list = LIST_HEAD_INIT(list);

	if (shared) {
		new_shared = alloc_arraycache(shared * batchcount, 0xbaadf00d);
		if (!new_shared)
			return -ENOMEM;
	}
	kmem_lock(&n->list_lock);
	__atomic_store_n(&c->limit, limit, __ATOMIC_RELAXED);
	__atomic_store_n(&c->batchcount, batchcount, __ATOMIC_RELAXED);
	__atomic_store_n(&c->shared, shared, __ATOMIC_RELAXED);
	old = n->shared;
	if (old && new_shared)	/* what the old one held moves over, as much as fits */
		while (old->avail && new_shared->avail < new_shared->limit)
			new_shared->entry[new_shared->avail++] = old->entry[--old->avail];
	if (old && old->avail)
		free_block(s, old->entry, old->avail, &list);
	n->shared = new_shared;
	n->free_limit = (1 + kmem_nr_cpus()) * batchcount + c->num;
	kmem_unlock(&n->list_lock);
	slabs_destroy(s, &list);
	free_arraycache(old);
	atomic_fetch_add_explicit(&c->tune_gen, 1, memory_order_release);
	/* This thread's array now. */
	if (slab_this != &slab_thread_none && slab_this->ac[c->cpu_slot])
		slab_cpu_array(s);
	return 0;
}

int enable_cpucache(struct kmem_cache *s)
{
	struct slab_cache *c = SLABC(s);
	unsigned int limit, shared = 0;

	/*
	 * The kernel's guesses: objects of a page or less get large arrays,
	 * big ones small arrays (their objects cost more to hold).
	 */
	if (s->size > 131072)
		limit = 1;
	else if (s->size > PAGE_SIZE)
		limit = 8;
	else if (s->size > 1024)
		limit = 24;
	else if (s->size > 256)
		limit = 54;
	else
		limit = 120;
	/* A shared array lets objects freed on one CPU reach another's allocations cheaply. */
	if (s->size <= PAGE_SIZE && kmem_nr_cpus() > 1)
		shared = 8;
	/* Debugging: short batches (the kernel's, to bound its IRQ-off sections). */
	if (c->dbg && limit > 32)
		limit = 32;
	return do_tune_cpucache(s, limit, (limit + 1) / 2, shared);
}

struct array_cache *slab_resize_array(struct kmem_cache *s, struct array_cache *ac)
{
	struct slab_cache *c = SLABC(s);
	struct slab_thread *t = slab_this;
	unsigned int gen = atomic_load_explicit(&c->tune_gen, memory_order_acquire);
	unsigned int limit = __atomic_load_n(&c->limit, __ATOMIC_RELAXED);
	unsigned int batch = __atomic_load_n(&c->batchcount, __ATOMIC_RELAXED);

	if (limit > ac->cap) {
		struct array_cache *nac = alloc_arraycache(limit, batch);

		if (!nac)
			return ac;	/* the old size, until memory comes back */
		memcpy(nac->entry, ac->entry, ac->avail * sizeof(void *));
		nac->avail = ac->avail;
		nac->touched = ac->touched;
		kmem_lock(&slab_bk_threads_lock);
		t->ac[c->cpu_slot] = nac;
		kmem_unlock(&slab_bk_threads_lock);
		free_arraycache(ac);
		ac = nac;
	}
	ac->limit = limit;
	ac->batchcount = batch;
	ac->gen = gen;
	/* Fewer than held: the oldest go back. */
	while (ac->avail > ac->limit)
		cache_flusharray(s, ac);
	return ac;
}

void slab_bk_get_slabinfo(struct kmem_cache *s, struct slabinfo *info)
{
	struct slab_cache *c = SLABC(s);
	struct slab_node *n = &c->node;
	unsigned long total, free_slabs, free_objects, shared_avail = 0;

	kmem_lock(&n->list_lock);
	total = n->total_slabs;
	free_slabs = n->free_slabs;
	free_objects = n->free_objects;
	if (n->shared)
		shared_avail = n->shared->avail;
	kmem_unlock(&n->list_lock);

	*info = (struct slabinfo){ 0 };
	info->num_objs = total * c->num;
	info->active_objs = info->num_objs - free_objects;
	info->num_slabs = total;
	info->active_slabs = total - free_slabs;
	info->shared_avail = shared_avail;
	info->limit = __atomic_load_n(&c->limit, __ATOMIC_RELAXED);
	info->batchcount = __atomic_load_n(&c->batchcount, __ATOMIC_RELAXED);
	info->shared = __atomic_load_n(&c->shared, __ATOMIC_RELAXED);
	info->objects_per_slab = c->num;
	info->cache_order = c->gfporder;
	if (free_objects > atomic_load_explicit(&c->stat[SLAB_STAT_MAX_FREEABLE], memory_order_relaxed))
		atomic_store_explicit(&c->stat[SLAB_STAT_MAX_FREEABLE], free_objects, memory_order_relaxed);
}

void slab_bk_show_stats(struct seq_buf *m, struct kmem_cache *s)
{
	struct slab_cache *c = SLABC(s);
	unsigned long v[NR_SLAB_STAT_ITEMS];

	for (int i = 0; i < NR_SLAB_STAT_ITEMS; i++)
		v[i] = atomic_load_explicit(&c->stat[i], memory_order_relaxed);
	seq_printf(m, " : globalstat %7lu %6lu %5lu %4lu %4lu %4lu %4lu %4lu %4lu",
		   v[SLAB_STAT_ALLOCED], v[SLAB_STAT_HIGH], v[SLAB_STAT_GROWN], v[SLAB_STAT_REAPED],
		   v[SLAB_STAT_ERRORS], v[SLAB_STAT_MAX_FREEABLE], v[SLAB_STAT_NODE_ALLOCS],
		   v[SLAB_STAT_NODE_FREES], v[SLAB_STAT_NODE_OVERFLOW]);
	seq_printf(m, " : cpustat %6lu %6lu %6lu %6lu", v[SLAB_STAT_ALLOCHIT], v[SLAB_STAT_ALLOCMISS],
		   v[SLAB_STAT_FREEHIT], v[SLAB_STAT_FREEMISS]);
}

/*
 * "<name> <limit> <batchcount> <shared>": -EINVAL for a malformed line or
 * an unknown cache; values the kernel rejects (limit or batchcount < 1,
 * batchcount > limit, shared < 0) change nothing and succeed, as there.
 * kmem also leaves a limit past SLAB_LIMIT_MAX alone.
 */
int slab_bk_slabinfo_write(const char *buf)
{
	char kbuf[MAX_SLABINFO_WRITE + 1];
	int limit, batchcount, shared, res = -EINVAL;
	size_t len = strlen(buf);
	struct kmem_cache *s;

	if (len > MAX_SLABINFO_WRITE)
		return -EINVAL;
	memcpy(kbuf, buf, len + 1);
	char *tmp = strchr(kbuf, ' ');
	if (!tmp)
		return -EINVAL;
	*tmp++ = '\0';
	if (sscanf(tmp, " %d %d %d", &limit, &batchcount, &shared) != 3)
		return -EINVAL;
	kmem_lock(&slab_mutex);
	list_for_each_entry(s, &slab_caches, list) {
		if (strcmp(s->name, kbuf))
			continue;
		if (limit < 1 || batchcount < 1 || batchcount > limit || shared < 0 ||
		    (unsigned int)limit > SLAB_LIMIT_MAX || (unsigned long)shared * batchcount > SLAB_LIMIT_MAX * 8UL)
			res = 0;
		else
			res = do_tune_cpucache(s, (unsigned int)limit, (unsigned int)batchcount, (unsigned int)shared);
		break;
	}
	kmem_unlock(&slab_mutex);
	return res;
}

