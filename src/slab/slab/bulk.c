// SPDX-License-Identifier: MIT
/*
 * The bulk API as the SLAB bulk API patch (Brouer 2015) made it: one entry
 * into the per-CPU state for the whole bulk (the kernel disabled
 * interrupts once; here this thread's array is looked up once) around the
 * ordinary per-object array-cache path; debug checks and zeroing after the
 * loop; all or nothing.
 */
#include "slab/slab/slab_priv.h"

int slab_bk_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t n, void **p)
{
	struct slab_cache *c = SLABC(s);
	struct array_cache *ac = slab_this->ac[c->cpu_slot];
	size_t i = 0;

	while (i < n) {
		if (likely(ac != NULL) && likely(!c->slow) && likely(ac->avail)) {
			/* Pops while the array lasts. */
			unsigned int take = ac->avail < n - i ? ac->avail : (unsigned int)(n - i);

			ac->touched = 1;
			for (unsigned int k = 0; k < take; k++)
				p[i++] = ac->entry[--ac->avail];
			continue;
		}
		void *x;
		if (likely(ac != NULL) && likely(ac->avail)) {
			ac->touched = 1;
			x = ac->entry[--ac->avail];
			slab_stat(c, SLAB_STAT_ALLOCHIT, 1);
		} else {
			x = cache_alloc_refill(s, gfp);
			ac = slab_this->ac[c->cpu_slot];
			if (unlikely(!x))
				break;
		}
		p[i++] = x;
	}
	/* The post-alloc hooks, outside the loop (the kernel's, outside its IRQ-off section). */
	if (unlikely(c->dbg | (gfp & __GFP_ZERO)))
		for (size_t j = 0; j < i; j++)
			slab_bk_alloc_finish(s, p[j], gfp, (unsigned long)__builtin_return_address(0));
	if (likely(i == n))
		return (int)n;
	if (!(gfp & __GFP_NOWARN))
		pr_warn("SLAB: kmem_cache_alloc_bulk(%s, %zu): no memory after %zu objects; none kept\n",
			s->name, n, i);
	slab_bk_free_bulk(s, i, p);
	return 0;
}

void slab_bk_free_bulk(struct kmem_cache *s, size_t n, void **p)
{
	if (!s) {
		/* kfree_bulk(): each object's cache from its page (the core took what is not a slab's). */
		for (size_t i = 0; i < n; i++) {
			struct page *head;

			if (!p[i])
				continue;
			head = virt_to_head_page_checked(p[i]);
			if (!head || !PageSlab(head)) {
				slab_report_bad_free("kfree_bulk", p[i], "not an object of any cache; not freed");
				continue;
			}
			slab_bk_kfree(head, p[i], (unsigned long)__builtin_return_address(0));
		}
		return;
	}
	struct slab_cache *c = SLABC(s);
	struct array_cache *ac = slab_this->ac[c->cpu_slot];

	for (size_t i = 0; i < n; i++) {
		void *x = p[i];

		if (unlikely(!x))
			continue;
		if (likely(slab_free_fast(s, c, ac, NULL, x)))
			continue;
		/* The per-object path for the rest: a flush, bad input, debug checks, statistics. */
		slab_bk_free(s, NULL, x, (unsigned long)__builtin_return_address(0));
		ac = slab_this->ac[c->cpu_slot];
	}
}
