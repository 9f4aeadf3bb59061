// SPDX-License-Identifier: MIT
/*
 * SLOB behind the slab core (slab=slob): caches, kmalloc and the back-end's
 * hooks (slab/backend.h).  The heap itself is slob_heap.c.
 *
 * Caches are only a size, an alignment, flags and a constructor: an object
 * of fewer than PAGE_SIZE bytes is a heap block with no header (the cache
 * knows its size), a bigger one gets pages of its own.  The constructor
 * runs at every allocation, not once per object's life as on SLUB and
 * SLAB: a freed object's memory goes back to the heap, where it may be
 * merged with its neighbours and reused by any cache, so nothing of its
 * constructed state survives (kernel SLOB's semantics).
 *
 * kmalloc puts a SLOB_MINALIGN-byte header in front of a heap block (the
 * size asked for, and a check of it: slob.h); the block is rounded up to
 * 16 bytes (slob_kmalloc_block()); a power-of-two size is aligned to its
 * size; ksize is the block less its header.  From PAGE_SIZE - SLOB_MINALIGN bytes up kmalloc takes compound
 * pages, flagged PG_slab with the size in the page (the core's large
 * kmalloc takes over above KMALLOC_MAX_CACHE_SIZE).
 *
 * Bad input is reported and changes nothing: a free of a block that lies
 * in a page's free blocks (a double free), across one (a size other than
 * the block's), a kfree of a pointer with no valid header in front (an
 * interior pointer, a cache's object), a kmem_cache_free of a kmalloc
 * block, a pointer into a big allocation.
 *
 * slab_debug= on SLOB: Z puts a red zone after each object (0xcc, checked
 * and repaired at free).  P on kmalloc (slab_debug=P, kmem.hardened) turns
 * on the heap's poison (slob_poison_heap, slob_heap.c): every block freed
 * into the heap, of any cache, reads 0x6b past the heap's encoding words,
 * and the poison is checked where the memory stops being free (handed out
 * again, or the block merged with a neighbour freed later): a write after
 * free is reported.  P on some caches only poisons their freed objects
 * (0x6b ... 0xa5), unchecked: the heap they go back to is shared with
 * blocks nobody poisoned.  F (consistency checks) is always on: the free
 * already walks the page's free blocks.  U and T keep nothing on SLOB (no
 * per-object metadata).
 */
#include <errno.h>
#include <string.h>

#include "slab/slab.h"
#include "slab/backend.h"
#include "slab/slab_common.h"
#include "slab/slob/slob.h"

#define SLOB_REDZONE		8	/* bytes after an object or kmalloc's size asked for */
#define SLOB_RED_ACTIVE		0xcc
#define POISON_FREE		0x6b
#define POISON_END		0xa5

struct slob_cache {
	atomic_long active;		/* objects allocated now (slabinfo) */
	size_t big;			/* 0: heap blocks; else pages for max(size, align) bytes */
	bool debug;			/* red zones or poison of its own, or the heap's poison */
	bool slow;			/* big or debug: allocations leave the fast path */
};

static inline struct slob_cache *SLOBC(struct kmem_cache *s)
{
	return kmem_cache_priv(s);
}

/* slab_debug= flags for kmalloc's blocks (as for a cache named "kmalloc"). */
static slab_flags_t slob_kmalloc_flags;

/*
 * SLOB keeps nothing per thread, but a thread that allocated tells the core
 * when it exits (slab_thread_exited(): the malloc front-end's reaper then
 * trims an idle program): a pthread key, set at a thread's first allocation.
 */
static pthread_key_t slob_exit_key;
static bool slob_exit_key_ok;
static __thread bool slob_thread_seen __attribute__((tls_model("initial-exec")));

static void slob_thread_exit(void *arg)
{
	(void)arg;
	slab_thread_exited();
}

static inline void slob_note_thread(void)
{
	if (unlikely(!slob_thread_seen)) {
		slob_thread_seen = true;
		if (slob_exit_key_ok)
			pthread_setspecific(slob_exit_key, (void *)1);
	}
}

static inline void stat_add(unsigned long *v, long d)
{
	__atomic_fetch_add(v, (unsigned long)d, __ATOMIC_RELAXED);
}

/* ---- kmalloc headers ---------------------------------------------------- */

static inline unsigned long slob_hdr_check(const struct slob_kmalloc_hdr *h, unsigned long size)
{
	return ~size ^ ((uintptr_t)h * 0x9E3779B97F4A7C15UL);
}

/*
 * The header of a kmalloc block starting at @x, or NULL if @x has none.
 * The 16 bytes before a cache object are the end of a neighbour, which
 * its owner may be writing right now: the look is a deliberate racy peek
 * (the kernel's data_race()), safe because a header only counts when its
 * check word, a hash of its address and size, matches; so it is not
 * instrumented by ThreadSanitizer.
 */
static __attribute__((no_sanitize_thread, noinline)) struct slob_kmalloc_hdr *
slob_hdr(struct slob_page *sp, const void *x)
{
	struct slob_kmalloc_hdr *h = (struct slob_kmalloc_hdr *)((char *)x - SLOB_MINALIGN);
	char *base = slob_page_base(sp);

	if (((uintptr_t)x & (SLOB_MINALIGN - 1)) || (char *)h < base)
		return NULL;
	if (h->size >= PAGE_SIZE || (char *)x + h->size > base + PAGE_SIZE ||
	    h->check != slob_hdr_check(h, h->size))
		return NULL;
	return h;
}

static inline size_t slob_kmalloc_rz(void)
{
	return (slob_kmalloc_flags & SLAB_RED_ZONE) ? SLOB_REDZONE : 0;
}

/*
 * The heap block of a kmalloc of @size: header, size (and red zone),
 * rounded up to SLOB_MINALIGN.  Every kmalloc block starts 16-aligned, so
 * the bytes from its end to the next 16-byte boundary could never hold
 * another kmalloc block; left free, each would be a fragment of a few
 * bytes for every later search to walk (perl on SLOB: ~60 such fragments
 * a page, ~400 blocks looked at per kmalloc).  They are the block's own
 * instead, and its usable size (ksize).
 */
static inline size_t slob_kmalloc_block_rz(size_t size, size_t rz)
{
	return (SLOB_MINALIGN + size + rz + SLOB_MINALIGN - 1) & ~(size_t)(SLOB_MINALIGN - 1);
}

static inline size_t slob_kmalloc_block(size_t size)
{
	return slob_kmalloc_block_rz(size, slob_kmalloc_rz());
}

/* ksize: all of the block past the header; with a red zone, the size asked for. */
static inline size_t slob_kmalloc_usable(size_t size)
{
	return slob_kmalloc_rz() ? size : slob_kmalloc_block(size) - SLOB_MINALIGN;
}

/* ---- debug ---------------------------------------------------------------- */

static void slob_poison(void *p, size_t n)
{
	if (!n)
		return;
	memset(p, POISON_FREE, n - 1);
	((unsigned char *)p)[n - 1] = POISON_END;
}

/* Check (and repair) the red zone [@p, @p + @n) of @what at @obj: false if overwritten. */
static bool slob_check_redzone(const char *what, const void *obj, unsigned char *p, size_t n)
{
	size_t i, last = 0;
	bool bad = false;

	for (i = 0; i < n; i++) {
		if (p[i] != SLOB_RED_ACTIVE) {
			if (!bad)
				last = i;
			bad = true;
		}
	}
	if (!bad)
		return true;
	kmem_report("BUG %s (Not tainted): Right Redzone overwritten\n"
		    "INFO: %p-%p @offset=%zu. First byte 0x%x instead of 0x%x\n"
		    "FIX %s: Restoring Right Redzone %p-%p=0x%x\n",
		    what, (void *)(p + last), (void *)(p + n - 1), (size_t)(p + last - (const unsigned char *)obj),
		    p[last], SLOB_RED_ACTIVE, what, (void *)p, (void *)(p + n - 1), SLOB_RED_ACTIVE);
	memset(p, SLOB_RED_ACTIVE, n);
	return false;
}

/* ---- big allocations: pages of their own ---------------------------------- */

static void *slob_big_alloc(size_t size, gfp_t gfp, struct kmem_cache *s)
{
	unsigned int order = (unsigned int)get_order(size);
	struct page *page = alloc_pages(gfp | __GFP_COMP, order);
	struct slob_page *sp;

	if (!page)
		return NULL;
	sp = page_slob(page);
	sp->cache = s;
	INIT_LIST_HEAD(&sp->slab_list);
	sp->freelist = NULL;
	sp->units = 0;
	sp->list = SLOB_NO_LIST;
	sp->kind = SLOB_PAGE_BIG;
	sp->big_size = size;
	page_set_flag(page, PG_slab);
	slob_account_pages(1L << order, s && (s->flags & SLAB_RECLAIM_ACCOUNT));
	stat_add(&slob_stats.bigpages, 1);
	stat_add(&slob_stats.bigpages_active, 1L << order);
	return __page_address(page);
}

static void slob_big_free(struct page *head)
{
	struct slob_page *sp = page_slob(head);
	struct kmem_cache *s = sp->cache;
	unsigned int order = compound_order(head);

	memset(&sp->cache, 0, sizeof(*sp) - offsetof(struct slob_page, cache));
	page_clear_flag(head, PG_slab);
	slob_account_pages(-(1L << order), s && (s->flags & SLAB_RECLAIM_ACCOUNT));
	stat_add(&slob_stats.bigpages_active, -(1L << order));
	__free_pages(head, order);
}

/* ---- reports -------------------------------------------------------------- */

static void slob_report_free_rc(const char *func, const void *x, int rc, const char *name)
{
	if (rc == -EALREADY)
		kmem_report("BUG %s (Not tainted): Object already free\n"
			    "INFO: %s(%p): the block lies in a free block of its page (double free); not freed\n",
			    name, func, x);
	else if (rc == -EINVAL)
		kmem_report("BUG %s (Not tainted): Wrong object size\n"
			    "INFO: %s(%p): the block runs into a free block of its page "
			    "(freed with another size than allocated); not freed\n",
			    name, func, x);
	else
		kmem_report("BUG %s (Not tainted): Free list corrupted\n"
			    "INFO: %s(%p): the page's free blocks are overwritten; not freed\n",
			    name, func, x);
}

/* Is @x in a free block of its heap page? (slob_lock taken) */
static bool slob_in_free(struct slob_page *sp, const void *x)
{
	bool ret;

	/* The unit holding @x (an odd address lies in the unit before it). */
	x = (const void *)((uintptr_t)x & ~(uintptr_t)(SLOB_UNIT - 1));
	kmem_lock(&slob_lock);
	ret = slob_page_overlaps_free(sp, x, 1);
	kmem_unlock(&slob_lock);
	return ret;
}

/*
 * Before a debug free writes into the block (red zone repair, poison):
 * 0, or what slob_free() would refuse it for (-EALREADY, -EINVAL).
 */
static int slob_precheck_free(struct slob_page *sp, const void *x, size_t size)
{
	int rc = 0;

	kmem_lock(&slob_lock);
	if (slob_page_overlaps_free(sp, x, 1))
		rc = -EALREADY;
	else if (slob_page_overlaps_free(sp, x, size))
		rc = -EINVAL;
	kmem_unlock(&slob_lock);
	return rc;
}

/* ---- caches ---------------------------------------------------------------- */

static unsigned int slob_cache_size(unsigned int object_size, slab_flags_t flags)
{
	unsigned int size = object_size;

	if (flags & SLAB_RED_ZONE)
		size += SLOB_REDZONE;
	return (unsigned int)(SLOB_UNITS(size) * SLOB_UNIT);
}

static int slob_cache_create(struct kmem_cache *s)
{
	unsigned int align = calculate_alignment(s->flags, s->align, s->object_size);

	align = align > ARCH_SLAB_MINALIGN ? align : ARCH_SLAB_MINALIGN;
	s->index = 0;
	s->offset = 0;
	s->align = align;
	s->size = slob_cache_size(s->object_size, s->flags);
	s->inuse = s->object_size;
	s->red_left_pad = 0;
	s->div_magic = 0;
	atomic_store(&SLOBC(s)->active, 0);
	/* A page or more, or aligned to a page or more: pages of its own (buddy blocks are aligned to their size). */
	SLOBC(s)->big = 0;
	if (s->size >= PAGE_SIZE || align >= PAGE_SIZE) {
		SLOBC(s)->big = s->size > align ? s->size : align;
		if (get_order(SLOBC(s)->big) > MAX_PAGE_ORDER)
			return -EINVAL;
	}
	/* On a poisoned heap every free poisons and every allocation checks, whatever the cache's flags. */
	SLOBC(s)->debug = (s->flags & (SLAB_RED_ZONE | SLAB_POISON)) || slob_poison_heap;
	SLOBC(s)->slow = SLOBC(s)->big || SLOBC(s)->debug;
	return 0;
}

static int slob_probe_slab(unsigned int size, unsigned int align, slab_flags_t flags, unsigned int order_cap,
			   unsigned int *slab_bytes, unsigned int *objects)
{
	unsigned int sz = slob_cache_size(size, flags);

	(void)align;
	(void)order_cap;
	if (!size)
		return -EINVAL;
	/* Heap pages are shared by every size: a page, and what of these would fill it. */
	if (sz < PAGE_SIZE) {
		*slab_bytes = PAGE_SIZE;
		*objects = (unsigned int)(PAGE_SIZE / sz);
	} else {
		*slab_bytes = (unsigned int)(PAGE_SIZE << get_order(sz));
		*objects = 1;
	}
	return 0;
}

static void slob_cache_destroy(struct kmem_cache *s)
{
	long active = atomic_load(&SLOBC(s)->active);

	if (active)
		kmem_report("BUG %s (Not tainted): Objects remaining in %s on __kmem_cache_shutdown()\n"
			    "INFO: %ld object(s) still allocated; they stay in the heap\n",
			    s->name, s->name, active);
	kmem_cache_free_struct(s);
}

static int slob_cache_shrink(struct kmem_cache *s)
{
	/*
	 * Nothing is kept per cache: an empty page went back at its last free,
	 * but for the few a poisoned heap keeps (shared by every cache: all go
	 * back).  1: objects remain.
	 */
	slob_shrink();
	return s && atomic_load(&SLOBC(s)->active) > 0;
}

static __attribute__((noinline)) void *slob_cache_alloc_failed(struct kmem_cache *s, gfp_t gfp)
{
	if (!(gfp & __GFP_NOWARN))
		pr_warn("SLOB: Unable to allocate memory for cache %s (object size %u)\n", s->name, s->object_size);
	return NULL;
}

/* A big cache's object, or a heap block with red zones or poison. */
static __attribute__((noinline)) void *slob_cache_alloc_slow(struct kmem_cache *s, gfp_t gfp)
{
	void *b;

	if (SLOBC(s)->big)
		b = slob_big_alloc(SLOBC(s)->big, gfp, s);
	else if (slob_poison_heap)
		b = slob_alloc_poisoned(s->size, gfp, s->align, 0);
	else
		b = slob_alloc(s->size, gfp, s->align, 0);
	if (unlikely(!b))
		return slob_cache_alloc_failed(s, gfp);
	atomic_fetch_add_explicit(&SLOBC(s)->active, 1, memory_order_relaxed);
	if (s->flags & SLAB_RED_ZONE)
		memset((char *)b + s->object_size, SLOB_RED_ACTIVE, s->size - s->object_size);
	if (gfp & __GFP_ZERO)
		memset(b, 0, s->object_size);
	if (s->ctor)
		s->ctor(b);
	return b;
}

static void *slob_cache_alloc(struct kmem_cache *s, gfp_t gfp, unsigned long caller, unsigned int orig_size)
{
	void *b;

	(void)caller;
	(void)orig_size;
	slob_note_thread();
	if (unlikely(SLOBC(s)->slow))
		return slob_cache_alloc_slow(s, gfp);
	b = slob_alloc(s->size, gfp, s->align, 0);
	if (unlikely(!b))
		return slob_cache_alloc_failed(s, gfp);
	atomic_fetch_add_explicit(&SLOBC(s)->active, 1, memory_order_relaxed);
	if (gfp & __GFP_ZERO)
		memset(b, 0, s->object_size);
	/* At every allocation: the heap keeps no constructed objects. */
	if (s->ctor)
		s->ctor(b);
	return b;
}

static void slob_cache_free(struct kmem_cache *s, struct page *head, void *x, unsigned long caller)
{
	struct slob_page *sp;
	int rc;

	(void)caller;
	if (!head)
		head = virt_to_head_page_checked(x);
	if (unlikely(!head || !PageSlab(head))) {
		slab_report_bad_free("kmem_cache_free", x, "not an object of any cache; not freed");
		return;
	}
	sp = page_slob(head);
	if (sp->kind == SLOB_PAGE_BIG) {
		if (unlikely(sp->cache != s || x != __page_address(head))) {
			kmem_report("BUG %s (Not tainted): Invalid object pointer %p\n"
				    "INFO: kmem_cache_free(): %s; not freed\n", s->name, x,
				    sp->cache != s ? "the pages hold another cache's object or a kmalloc"
						   : "a pointer into the middle of the object");
			return;
		}
		atomic_fetch_sub_explicit(&SLOBC(s)->active, 1, memory_order_relaxed);
		slob_big_free(head);
		return;
	}
	if (unlikely(sp->kind != SLOB_PAGE_HEAP || SLOBC(s)->big)) {
		kmem_report("BUG %s (Not tainted): Invalid object pointer %p\n"
			    "INFO: kmem_cache_free(): not in a page of this cache's objects; not freed\n",
			    s->name, x);
		return;
	}
	if (unlikely(((uintptr_t)x & (s->align - 1)))) {
		kmem_report("BUG %s (Not tainted): Invalid object pointer %p\n"
			    "INFO: kmem_cache_free(): not aligned as the cache's objects (%u); not freed\n",
			    s->name, x, s->align);
		return;
	}
	if (unlikely(slob_hdr(sp, x) && !slob_in_free(sp, x))) {
		kmem_report("BUG %s (Not tainted): Invalid object pointer %p\n"
			    "INFO: kmem_cache_free(): a kmalloc block, not an object of the cache; not freed\n",
			    s->name, x);
		return;
	}
	if (unlikely(SLOBC(s)->debug)) {
		if (s->flags & (SLAB_RED_ZONE | SLAB_POISON)) {
			rc = slob_precheck_free(sp, x, s->size);
			if (rc) {
				slob_report_free_rc("kmem_cache_free", x, rc, s->name);
				return;
			}
		}
		if (s->flags & SLAB_RED_ZONE)
			slob_check_redzone(s->name, x, (unsigned char *)x + s->object_size,
					   s->size - s->object_size);
		/* On a poisoned heap the heap poisons the whole block, constructors' caches' too. */
		if (slob_poison_heap)
			rc = slob_free_poisoned(x, s->size);
		else {
			if ((s->flags & SLAB_POISON) && !s->ctor && !(s->flags & SLAB_TYPESAFE_BY_RCU))
				slob_poison(x, s->object_size);
			rc = slob_free(x, s->size);
		}
	} else {
		rc = slob_free(x, s->size);
	}
	if (unlikely(rc)) {
		slob_report_free_rc("kmem_cache_free", x, rc, s->name);
		return;
	}
	atomic_fetch_sub_explicit(&SLOBC(s)->active, 1, memory_order_relaxed);
}

/* The kernel's SLOB had no bulk paths of its own: the generic loop. */
static int slob_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t n, void **p)
{
	for (size_t i = 0; i < n; i++) {
		p[i] = slob_cache_alloc(s, gfp, 0, 0);
		if (unlikely(!p[i])) {
			for (size_t j = 0; j < i; j++)
				slob_cache_free(s, NULL, p[j], 0);
			return 0;
		}
	}
	return (int)n;
}

static void slob_kfree(struct page *head, void *x, unsigned long caller);

static void slob_free_bulk(struct kmem_cache *s, size_t n, void **p)
{
	for (size_t i = 0; i < n; i++) {
		if (!p[i])
			continue;
		if (s)
			slob_cache_free(s, NULL, p[i], 0);
		else {
			struct page *head = virt_to_head_page_checked(p[i]);
			if (head && PageSlab(head))
				slob_kfree(head, p[i], 0);
			else
				slab_report_bad_free("kfree_bulk", p[i], "not allocated by kmalloc; not freed");
		}
	}
}

/* ---- kmalloc -------------------------------------------------------------- */

/* @debug: red zones or poison on kmalloc's blocks (a constant in each copy). */
static __attribute__((always_inline)) inline void *__slob_kmalloc(size_t size, gfp_t gfp, const bool debug)
{
	size_t rz = debug ? slob_kmalloc_rz() : 0;
	struct slob_kmalloc_hdr *h;
	size_t align = SLOB_MINALIGN, block;
	char *ret;

	/* Power-of-two sizes are aligned to their size (kernel 5.4 on). */
	if (!(size & (size - 1)) && size > align)
		align = size;
	block = slob_kmalloc_block_rz(size, rz);
	/* About a page or more (or, red-zoned, a half page no page holds aligned): pages. */
	if (size + rz >= PAGE_SIZE - SLOB_MINALIGN || align - SLOB_MINALIGN + block > PAGE_SIZE) {
		ret = slob_big_alloc(size, gfp, NULL);
		if (unlikely(!ret)) {
			if (!(gfp & __GFP_NOWARN))
				pr_warn("SLOB: Unable to allocate memory for kmalloc(%zu)\n", size);
			return NULL;
		}
		return ret;
	}
	if (debug && slob_poison_heap)
		h = slob_alloc_poisoned(block, gfp, align, SLOB_MINALIGN);
	else
		h = slob_alloc(block, gfp, align, SLOB_MINALIGN);
	if (unlikely(!h)) {
		if (!(gfp & __GFP_NOWARN))
			pr_warn("SLOB: Unable to allocate memory for kmalloc(%zu)\n", size);
		return NULL;
	}
	h->size = size;
	h->check = slob_hdr_check(h, size);
	ret = (char *)(h + 1);
	stat_add(&slob_stats.kmallocs, 1);
	stat_add(&slob_stats.kmalloc_bytes, (long)size);
	stat_add(&slob_stats.kmalloc_overhead, (long)(block - size));
	if (debug && rz)
		memset(ret + size, SLOB_RED_ACTIVE, block - SLOB_MINALIGN - size);
	if (gfp & __GFP_ZERO)
		memset(ret, 0, size);
	return ret;
}

static __attribute__((noinline)) void *slob_kmalloc_debug(size_t size, gfp_t gfp)
{
	return __slob_kmalloc(size, gfp, true);
}

static void *slob_kmalloc(size_t size, gfp_t gfp, unsigned long caller)
{
	(void)caller;
	slob_note_thread();
	if (unlikely(slob_kmalloc_flags & (SLAB_RED_ZONE | SLAB_POISON)))
		return slob_kmalloc_debug(size, gfp);
	return __slob_kmalloc(size, gfp, false);
}

static void slob_kfree(struct page *head, void *x, unsigned long caller)
{
	struct slob_page *sp = page_slob(head);
	struct slob_kmalloc_hdr *h;
	size_t size, block;
	int rc;

	(void)caller;
	if (sp->kind == SLOB_PAGE_BIG) {
		if (unlikely(x != __page_address(head))) {
			slab_report_bad_free("kfree", x, "pointer into the middle of a kmalloc; not freed");
			return;
		}
		/* SLOB's kfree of a big cache object frees its pages, as the kernel's did. */
		if (sp->cache)
			atomic_fetch_sub_explicit(&SLOBC(sp->cache)->active, 1, memory_order_relaxed);
		slob_big_free(head);
		return;
	}
	if (unlikely(sp->kind != SLOB_PAGE_HEAP)) {
		slab_report_bad_free("kfree", x, "not allocated by kmalloc; not freed");
		return;
	}
	h = slob_hdr(sp, x);
	if (unlikely(!h)) {
		if (slob_in_free(sp, x))
			slob_report_free_rc("kfree", x, -EALREADY, "kmalloc");
		else
			slab_report_bad_free("kfree", x,
					     "no kmalloc header in front: not the start of a kmalloc block "
					     "(a pointer into one, or a cache's object); not freed");
		return;
	}
	size = h->size;
	block = slob_kmalloc_block(size);
	if (unlikely(slob_kmalloc_flags & (SLAB_RED_ZONE | SLAB_POISON))) {
		rc = slob_precheck_free(sp, h, block);
		if (rc) {
			slob_report_free_rc("kfree", x, rc, "kmalloc");
			return;
		}
		if (slob_kmalloc_flags & SLAB_RED_ZONE)
			slob_check_redzone("kmalloc", x, (unsigned char *)x + size,
					   block - SLOB_MINALIGN - size);
		/* A stale header in free memory must never pass for a live one. */
		h->check = ~h->check;
		/* P on kmalloc is the heap's poison: the heap poisons the whole block. */
		rc = slob_poison_heap ? slob_free_poisoned(h, block) : slob_free(h, block);
	} else {
		h->check = ~h->check;
		rc = slob_free(h, block);
	}
	if (unlikely(rc)) {
		h->check = ~h->check;
		slob_report_free_rc("kfree", x, rc, "kmalloc");
		return;
	}
	stat_add(&slob_stats.kmalloc_frees, 1);
}

/* kmalloc_size_roundup(): what ksize() of a kmalloc of @size will say. */
static size_t slob_kmalloc_size_roundup(size_t size)
{
	size_t align = (!(size & (size - 1)) && size > SLOB_MINALIGN) ? size : SLOB_MINALIGN;
	size_t block = slob_kmalloc_block(size);

	if (size + slob_kmalloc_rz() >= PAGE_SIZE - SLOB_MINALIGN || align - SLOB_MINALIGN + block > PAGE_SIZE)
		return PAGE_SIZE << get_order(size);
	return slob_kmalloc_usable(size);
}

static bool slob_obj_lookup(struct page *head, const void *x, struct kmem_obj *o)
{
	struct slob_page *sp = page_slob(head);
	struct slob_kmalloc_hdr *h;
	char *base;

	if (sp->kind == SLOB_PAGE_BIG) {
		struct kmem_cache *s = sp->cache;

		o->cache = s;
		o->start = __page_address(head);
		o->size = s ? s->object_size : PAGE_SIZE << compound_order(head);
		return (const char *)x < (char *)o->start + o->size;
	}
	if (sp->kind != SLOB_PAGE_HEAP)
		return false;
	h = slob_hdr(sp, x);
	if (h) {
		o->cache = NULL;
		o->start = (void *)x;
		o->size = slob_kmalloc_usable(h->size);
		return true;
	}
	/* Inside a kmalloc block? Its header is at a SLOB_MINALIGN boundary before @x. */
	base = slob_page_base(sp);
	for (char *p = (char *)((uintptr_t)x & ~(uintptr_t)(SLOB_MINALIGN - 1)); p > base; p -= SLOB_MINALIGN) {
		h = slob_hdr(sp, p);
		if (h && (const char *)x < p + slob_kmalloc_usable(h->size)) {
			o->cache = NULL;
			o->start = p;
			o->size = slob_kmalloc_usable(h->size);
			return true;
		}
	}
	/* A cache's object carries nothing that says where it starts. */
	return false;
}

/* Not found: start NULL and size 0 (kfree and ksize then report it as not kmalloc's). */
static void slob_obj_info(struct page *head, const void *x, struct kmem_obj *o)
{
	if (!slob_obj_lookup(head, x, o))
		*o = (struct kmem_obj){ 0 };
}

/* ---- introspection ------------------------------------------------------ */

/*
 * /proc/slabinfo on SLOB: a cache has no slabs of its own (its objects
 * share pages with every other cache's and kmalloc's), so each line counts
 * the objects allocated now as both active and total, and shows 0 objects
 * per slab and 0 slabs.  The pages are in /proc/meminfo's Slab and in
 * /sys/kernel/debug/slob/stats.
 */
static void slob_get_slabinfo(struct kmem_cache *s, struct slabinfo *info)
{
	long active = atomic_load(&SLOBC(s)->active);

	memset(info, 0, sizeof(*info));
	info->active_objs = info->num_objs = active > 0 ? (unsigned long)active : 0;
	if (SLOBC(s)->big)
		info->cache_order = (unsigned int)get_order(SLOBC(s)->big);
}

static long slob_validate(struct kmem_cache *s)
{
	(void)s;
	return slob_validate_all(true);
}

static int slob_init(void)
{
	slob_kmalloc_flags = kmem_cache_flags(SLAB_KMALLOC, "kmalloc");
	slob_poison_heap = slob_kmalloc_flags & SLAB_POISON;
	if (!slob_exit_key_ok)
		slob_exit_key_ok = os_thread_exit_key_create(&slob_exit_key, slob_thread_exit) == 0;
	return 0;
}

const struct slab_backend slob_backend = {
	.name = "slob",
	.cache_priv_size = sizeof(struct slob_cache),
	.merges = false,
	.init = slob_init,
	.cache_create = slob_cache_create,
	.probe_slab = slob_probe_slab,
	.cache_destroy = slob_cache_destroy,
	.cache_shrink = slob_cache_shrink,
	.alloc = slob_cache_alloc,
	.free = slob_cache_free,
	.alloc_bulk = slob_alloc_bulk,
	.free_bulk = slob_free_bulk,
	.kmalloc = slob_kmalloc,
	.kmalloc_size_roundup = slob_kmalloc_size_roundup,
	.kfree = slob_kfree,
	.obj_info = slob_obj_info,
	.get_slabinfo = slob_get_slabinfo,
	.validate = slob_validate,
	.fork_prepare = slob_fork_prepare,
	.fork_parent = slob_fork_parent,
	.fork_child = slob_fork_child,
};
