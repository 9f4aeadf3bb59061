// SPDX-License-Identifier: MIT
/*
 * Randomized model test of the slab core.  A set of caches (sizes 8..8192,
 * alignments, with and without ctor, SLAB_HWCACHE_ALIGN / NO_MERGE /
 * RECLAIM_ACCOUNT / TYPESAFE_BY_RCU) and kmalloc (1..16384, so large
 * kmallocs too) take >= 10^6 random operations over two fixed seeds: single
 * and bulk allocations, kzalloc/__GFP_ZERO, krealloc, kmem_cache_free,
 * kfree, kmem_cache_free_bulk per cache, kfree_bulk across caches,
 * kmem_cache_shrink, and destroy/re-create of caches.  The test keeps its
 * own model of every live object and checks:
 *
 *  - objects never overlap: every live object's [start, start + size)
 *    (size = the cache's object size, or ksize() for kmalloc) is marked in
 *    a bitmap of 8-byte granules over kmem's memory, and a new object must
 *    find its granules clear;
 *  - alignment: the align argument, SLAB_HWCACHE_ALIGN's cache line (or
 *    half-lines for small objects), kmalloc's natural alignment for
 *    power-of-two buckets, page alignment for large kmallocs;
 *  - contents survive: each object holds a pattern derived from its own id
 *    until it is freed (verified then); zeroed allocations read 0; a ctor
 *    cache's object arrives in its constructed state (the ctor writes the
 *    whole object; the test restores it before freeing, as kernel users must);
 *  - no reports: kmem_report_count() never moves (no "Objects remaining"
 *    when a cache is destroyed, no bad free);
 *  - pages: at the end, with every model cache destroyed, every kmalloc
 *    cache shrunk and this thread's pcp pages drained, nr_slab_* and
 *    NR_FREE_PAGES are exactly what they were before the run (the kmalloc
 *    caches keep no empty slab after a shrink, and the only cpu slabs are
 *    this thread's, which kmem_cache_shrink() flushes).
 *
 * KMEM_MODEL_OPS overrides the operations per seed.
 */
#include <stdint.h>
#include <stdlib.h>

#include <kmem.h>

#include "core/printk.h"
#include "core/vmstat.h"
#include "page_alloc/mm.h"
#include "slab/slab.h"
#include "slab/slub/slub.h"

#include "ktest.h"
#include "lib/kt_util.h"
#include "lib/slab_test.h"

#define MODEL_CMDLINE	"mem=128M nr_cpus=2"
#define DEFAULT_OPS	500000UL	/* per seed; two seeds */
#define NR_CACHES	24
#define MAX_LIVE	60000
#define MAX_LIVE_BYTES	(40UL << 20)
#define BULK_MAX	64
#define CTOR_SEED	0xc7012000c7012000ULL

struct mcache {
	struct kmem_cache *s;
	unsigned int size, align_arg, want_align;
	slab_flags_t flags;
	bool ctor;
	unsigned int nlive;
	char name[32];
};

struct mobj {
	char *p;
	uint32_t size;		/* bytes the test owns and patterns */
	int16_t cache;		/* model cache, -1 for kmalloc */
	uint64_t seed;
};

static struct model {
	uint64_t rng;
	struct mcache c[NR_CACHES];
	struct mobj live[MAX_LIVE];
	unsigned int nr_live;
	unsigned long live_bytes;
	uint64_t next_id;
	uint64_t *bitmap;	/* one bit per 8-byte granule of kmem memory */
	unsigned long granules;
	unsigned long gen;	/* cache (re)creations, for names */
	/* statistics */
	unsigned long allocs, frees, bulk_allocs, bulk_frees, kfree_bulks, reallocs,
		      shrinks, recreates, zeroed, total_allocs, peak_live;
} M;

static int failed_now(void) { return ktest_failed_now; }

/* ---- the ctor: one per model cache slot, it knows the slot's size ------ */

static void ctor_state(void *p, unsigned int size)
{
	slab_fill(p, size, CTOR_SEED ^ (uintptr_t)p);
}

#define CTOR(k) static void ctor_##k(void *p) { ctor_state(p, M.c[k].size); }
CTOR(0) CTOR(1) CTOR(2) CTOR(3) CTOR(4) CTOR(5) CTOR(6) CTOR(7) CTOR(8) CTOR(9)
CTOR(10) CTOR(11) CTOR(12) CTOR(13) CTOR(14) CTOR(15) CTOR(16) CTOR(17) CTOR(18)
CTOR(19) CTOR(20) CTOR(21) CTOR(22) CTOR(23)
static void (*const ctors[NR_CACHES])(void *) = {
	ctor_0, ctor_1, ctor_2, ctor_3, ctor_4, ctor_5, ctor_6, ctor_7, ctor_8, ctor_9,
	ctor_10, ctor_11, ctor_12, ctor_13, ctor_14, ctor_15, ctor_16, ctor_17, ctor_18,
	ctor_19, ctor_20, ctor_21, ctor_22, ctor_23,
};

/* ---- overlap bitmap ---------------------------------------------------- */

static int range_in_memory(const void *p, size_t size)
{
	uintptr_t off = (uintptr_t)p - (uintptr_t)mm_model.base;

	return (uintptr_t)p >= (uintptr_t)mm_model.base && off + size <= M.granules * 8;
}

/* Mark (set=1) or clear the granules of [p, p+size); marking fails on overlap. */
static int mark(const void *p, size_t size, int set)
{
	unsigned long g = ((uintptr_t)p - (uintptr_t)mm_model.base) >> 3;
	unsigned long end = g + ((size + 7) >> 3);

	for (unsigned long i = g; i < end; i++) {
		uint64_t bit = 1ULL << (i & 63);
		int on = !!(M.bitmap[i >> 6] & bit);
		if (on == set) {
			if (set)	/* undo what we marked */
				for (unsigned long j = g; j < i; j++)
					M.bitmap[j >> 6] &= ~(1ULL << (j & 63));
			return 0;
		}
		M.bitmap[i >> 6] ^= bit;
	}
	return 1;
}

/* ---- caches ------------------------------------------------------------ */

static unsigned int hwcache_align(unsigned int size)
{
	unsigned int a = 64;

	while (a > 8 && size <= a / 2)
		a /= 2;
	return a;
}

static void create_cache(int k)
{
	struct mcache *c = &M.c[k];
	static const unsigned int aligns[] = { 0, 0, 0, 8, 16, 32, 64, 128, 256, 512 };
	unsigned int r = slab_rnd_below(&M.rng, 100);

	/* Sizes 8..8192, mostly small. */
	if (r < 50)
		c->size = 8 + slab_rnd_below(&M.rng, 249);
	else if (r < 85)
		c->size = 257 + slab_rnd_below(&M.rng, 1792);
	else
		c->size = 2049 + slab_rnd_below(&M.rng, 6144);
	c->align_arg = aligns[slab_rnd_below(&M.rng, 10)];
	c->flags = 0;
	r = slab_rnd_below(&M.rng, 100);
	if (r < 25)
		c->flags |= SLAB_HWCACHE_ALIGN;
	if (slab_rnd_below(&M.rng, 4) == 0)
		c->flags |= SLAB_NO_MERGE;
	if (slab_rnd_below(&M.rng, 6) == 0)
		c->flags |= SLAB_RECLAIM_ACCOUNT;
	if (slab_rnd_below(&M.rng, 10) == 0)
		c->flags |= SLAB_TYPESAFE_BY_RCU;
	c->ctor = slab_rnd_below(&M.rng, 4) == 0;
	c->want_align = c->align_arg > 8 ? c->align_arg : 8;
	if ((c->flags & SLAB_HWCACHE_ALIGN) && hwcache_align(c->size) > c->want_align)
		c->want_align = hwcache_align(c->size);
	c->nlive = 0;
	snprintf(c->name, sizeof(c->name), "model-%d-%lu", k, M.gen++);
	c->s = kmem_cache_create(c->name, c->size, c->align_arg, c->flags,
				 c->ctor ? ctors[k] : NULL);
	if (!c->s)
		KT_FAIL("kmem_cache_create(%s, %u, %u, %#x) failed", c->name, c->size, c->align_arg,
			c->flags);
}

/* ---- objects ----------------------------------------------------------- */

static size_t kmalloc_align(size_t size)
{
	if (size > KMALLOC_MAX_CACHE_SIZE_BYTES)
		return PAGE_SIZE << get_order(size);
	/* SLOB: a power-of-two request aligned to its size, others to 16 (pages from a page up). */
	if (slab_allocator == SLAB_ALLOCATOR_SLOB)
		return size >= PAGE_SIZE - 16 ? PAGE_SIZE : !(size & (size - 1)) && size > 16 ? size : 16;
	size_t b = kmalloc_size_roundup(size);
	return (b & (b - 1)) ? 8 : b;
}

/* A new object from the allocator: check and record it. */
static int add_obj(char *p, uint32_t size, int cache, bool zeroed, size_t align)
{
	if (!p) {
		KT_FAIL("allocation of %u bytes (cache %d) failed", size, cache);
		return 0;
	}
	if ((uintptr_t)p & (align - 1)) {
		KT_FAIL("object %p (%u bytes, cache %d) not %zu-aligned", (void *)p, size, cache, align);
		return 0;
	}
	if (!range_in_memory(p, size)) {
		KT_FAIL("object %p (%u bytes) outside kmem memory", (void *)p, size);
		return 0;
	}
	if (!mark(p, size, 1)) {
		KT_FAIL("object %p (%u bytes, cache %d) overlaps a live object", (void *)p, size, cache);
		return 0;
	}
	if (zeroed && slab_check_byte(p, size, 0)) {
		KT_FAIL("zeroed object %p (%u bytes) is not zero at %zu", (void *)p, size,
			slab_check_byte(p, size, 0) - 1);
		return 0;
	}
	if (cache >= 0 && M.c[cache].ctor && slab_check(p, size, CTOR_SEED ^ (uintptr_t)p)) {
		KT_FAIL("ctor cache %s: object %p not in its constructed state", M.c[cache].name,
			(void *)p);
		return 0;
	}
	struct mobj *o = &M.live[M.nr_live++];
	o->p = p;
	o->size = size;
	o->cache = (int16_t)cache;
	o->seed = ++M.next_id * 0x100000001b3ULL;
	slab_fill(p, size, o->seed);
	M.live_bytes += size;
	if (cache >= 0)
		M.c[cache].nlive++;
	M.allocs++;
	if (M.nr_live > M.peak_live)
		M.peak_live = M.nr_live;
	return 1;
}

/* Verify live object @i and take it out of the model (not freed yet). */
static int take_obj(unsigned int i, struct mobj *out)
{
	struct mobj *o = &M.live[i];
	size_t bad = slab_check(o->p, o->size, o->seed);

	if (bad) {
		KT_FAIL("object %p (%u bytes, cache %d) corrupted at offset %zu", (void *)o->p,
			o->size, o->cache, bad - 1);
		return 0;
	}
	mark(o->p, o->size, 0);
	if (o->cache >= 0) {
		M.c[o->cache].nlive--;
		if (M.c[o->cache].ctor)
			ctor_state(o->p, o->size);
	}
	M.live_bytes -= o->size;
	*out = *o;
	M.live[i] = M.live[--M.nr_live];
	M.frees++;
	return 1;
}

static void do_cache_alloc(int k, bool bulk)
{
	struct mcache *c = &M.c[k];
	bool zero = !c->ctor && slab_rnd_below(&M.rng, 8) == 0;
	gfp_t gfp = GFP_KERNEL | (zero ? __GFP_ZERO : 0);

	if (!bulk) {
		char *p = zero && slab_rnd_below(&M.rng, 2) ? kmem_cache_zalloc(c->s, GFP_KERNEL)
							       : kmem_cache_alloc(c->s, gfp);
		add_obj(p, c->size, k, zero, c->want_align);
		M.zeroed += zero;
		return;
	}
	void *p[BULK_MAX];
	size_t n = 1 + slab_rnd_below(&M.rng, BULK_MAX);
	if (M.nr_live + n > MAX_LIVE)
		return;
	int got = kmem_cache_alloc_bulk(c->s, gfp, n, p);
	if (got != (int)n) {
		KT_FAIL("kmem_cache_alloc_bulk(%s, %zu) returned %d", c->name, n, got);
		return;
	}
	for (size_t i = 0; i < n && !failed_now(); i++)
		add_obj(p[i], c->size, k, zero, c->want_align);
	M.bulk_allocs++;
}

static size_t random_kmalloc_size(void)
{
	unsigned int r = slab_rnd_below(&M.rng, 100);

	if (r < 55)
		return 1 + slab_rnd_below(&M.rng, 256);
	if (r < 85)
		return 257 + slab_rnd_below(&M.rng, 1792);
	if (r < 96)
		return 2049 + slab_rnd_below(&M.rng, 6144);
	return 8193 + slab_rnd_below(&M.rng, 8192);
}

static void do_kmalloc(void)
{
	size_t size = random_kmalloc_size();
	unsigned int how = slab_rnd_below(&M.rng, 10);
	char *p;

	if (how == 0)
		p = kzalloc(size, GFP_KERNEL);
	else if (how == 1)
		p = kcalloc(1, size, GFP_KERNEL);
	else if (how == 2)
		p = kmalloc(size, GFP_KERNEL | __GFP_ZERO);
	else
		p = kmalloc(size, GFP_KERNEL);
	if (!p) {
		KT_FAIL("kmalloc(%zu) failed", size);
		return;
	}
	size_t ks = ksize(p);
	if (ks < size) {
		KT_FAIL("ksize(kmalloc(%zu)) = %zu", size, ks);
		return;
	}
	/* Zeroing covers the request; the rest of ksize is the caller's to fill. */
	if (how <= 2 && slab_check_byte(p, size, 0)) {
		KT_FAIL("zeroed kmalloc(%zu) not zero", size);
		return;
	}
	add_obj(p, (uint32_t)ks, -1, false, kmalloc_align(size));
	M.zeroed += how <= 2;
}

static void do_krealloc(void)
{
	unsigned int i = slab_rnd_below(&M.rng, M.nr_live);
	if (M.live[i].cache >= 0)
		return;
	struct mobj o;
	if (!take_obj(i, &o))
		return;
	M.frees--;
	size_t size = random_kmalloc_size();
	char *p = krealloc(o.p, size, GFP_KERNEL);
	if (!p) {
		KT_FAIL("krealloc(%zu -> %zu) failed", (size_t)o.size, size);
		return;
	}
	size_t keep = o.size < size ? o.size : size;
	if (slab_check(p, keep, o.seed)) {
		KT_FAIL("krealloc(%u -> %zu) lost contents at %zu", o.size, size,
			slab_check(p, keep, o.seed) - 1);
		return;
	}
	/* Shrinking within the same slot keeps the pointer. */
	if (size <= o.size && p != o.p) {
		KT_FAIL("krealloc(%p, %zu) of a %u-byte slot moved the object", (void *)o.p, size, o.size);
		return;
	}
	/* In place, the slot keeps its old bucket's alignment. */
	/* In place on SLOB: the first request's alignment, which o.size (its ksize) does not tell. */
	size_t was = p == o.p ? (slab_allocator == SLAB_ALLOCATOR_SLOB ? 1 : o.size) : size;
	add_obj(p, (uint32_t)ksize(p), -1, false, kmalloc_align(was));
	M.allocs--;
	M.reallocs++;
}

static void free_one(void)
{
	struct mobj o;

	if (!take_obj(slab_rnd_below(&M.rng, M.nr_live), &o))
		return;
	/* SLOB's kfree needs the size header its cache objects lack (the kernel's too). */
	if (o.cache >= 0 && (slab_rnd_below(&M.rng, 4) || slab_allocator == SLAB_ALLOCATOR_SLOB))
		kmem_cache_free(M.c[o.cache].s, o.p);
	else
		kfree(o.p);	/* kfree() takes objects of any cache */
}

/* Up to BULK_MAX live objects of cache @k (or of any kind, k == -1; kmalloc's, k == -2) into p[]. */
static size_t pick(int k, void **p)
{
	size_t n = 0, want = 1 + slab_rnd_below(&M.rng, BULK_MAX);
	unsigned int tries = 0;

	while (n < want && M.nr_live && tries++ < 4 * BULK_MAX) {
		unsigned int i = slab_rnd_below(&M.rng, M.nr_live);
		if ((k >= 0 && M.live[i].cache != k) || (k == -2 && M.live[i].cache >= 0))
			continue;
		struct mobj o;
		if (!take_obj(i, &o))
			return n;
		p[n++] = o.p;
		if (slab_rnd_below(&M.rng, 16) == 0)
			p[n++] = NULL;		/* a NULL hole now and then */
	}
	return n;
}

static void do_bulk_free(bool mixed)
{
	void *p[2 * BULK_MAX + 2];
	/* SLOB: kfree_bulk() of kmalloc blocks only (see free_one()). */
	int k = mixed ? (slab_allocator == SLAB_ALLOCATOR_SLOB ? -2 : -1) : (int)slab_rnd_below(&M.rng, NR_CACHES);

	if (!mixed && !M.c[k].nlive)
		return;
	size_t n = pick(k, p);
	if (!n)
		return;
	if (mixed) {
		if (slab_rnd_below(&M.rng, 2))
			kfree_bulk(n, p);
		else
			kmem_cache_free_bulk(NULL, n, p);
		M.kfree_bulks++;
	} else {
		kmem_cache_free_bulk(M.c[k].s, n, p);
		M.bulk_frees++;
	}
}

static void destroy_cache(int k)
{
	unsigned long reports = kmem_report_count();

	for (unsigned int i = M.nr_live; i-- > 0 && M.c[k].nlive;) {
		if (M.live[i].cache != k)
			continue;
		struct mobj o;
		if (!take_obj(i, &o))
			return;
		kmem_cache_free(M.c[k].s, o.p);
	}
	kmem_cache_destroy(M.c[k].s);
	M.c[k].s = NULL;
	if (kmem_report_count() != reports)
		KT_FAIL("destroying %s (size %u) reported a problem", M.c[k].name, M.c[k].size);
}

static void run_model(uint64_t seed, unsigned long ops)
{
	unsigned long reports = kmem_report_count();

	slab_quiesce();
	long slab0 = slab_pages_now(), free0 = slab_free_pages_now();
	long large0 = global_zone_page_state(NR_KMALLOC_LARGE);

	memset(&M.c, 0, sizeof(M.c));
	M.allocs = M.frees = M.bulk_allocs = M.bulk_frees = M.kfree_bulks = M.reallocs = 0;
	M.shrinks = M.recreates = M.zeroed = M.peak_live = 0;
	M.rng = seed;
	M.nr_live = 0;
	M.live_bytes = 0;
	for (int k = 0; k < NR_CACHES && !failed_now(); k++)
		create_cache(k);

	for (unsigned long op = 0; op < ops && !failed_now(); op++) {
		/* Phases of growth and shrinkage so slabs fill up and empty out. */
		bool grow = (op / 40000) % 2 == 0;
		bool full = M.nr_live + 2 * BULK_MAX >= MAX_LIVE || M.live_bytes > MAX_LIVE_BYTES;
		unsigned int r = slab_rnd_below(&M.rng, 1000);
		unsigned int alloc_share = full ? 0 : grow ? 560 : 440;

		if (r < alloc_share) {
			if (r < alloc_share / 2)
				do_cache_alloc((int)slab_rnd_below(&M.rng, NR_CACHES), r < 25);
			else
				do_kmalloc();
		} else if (!M.nr_live) {
			continue;
		} else if (r < 960) {
			free_one();
		} else if (r < 975) {
			do_bulk_free(false);
		} else if (r < 985) {
			do_bulk_free(true);
		} else if (r < 995) {
			do_krealloc();
		} else if (r < 998) {
			int k = (int)slab_rnd_below(&M.rng, NR_CACHES);
			struct kmem_cache *s = r & 1 ? M.c[k].s
					     : kmalloc_caches[1 + slab_rnd_below(&M.rng, KMALLOC_SHIFT_HIGH)];
			kmem_cache_shrink(s);
			if (slab_test_is_slub() && slub_validate(s))
				KT_FAIL("slub_validate(%s) found errors", kmem_cache_name(s));
			M.shrinks++;
		} else if (slab_rnd_below(&M.rng, 2)) {
			int k = (int)slab_rnd_below(&M.rng, NR_CACHES);
			destroy_cache(k);
			create_cache(k);
			M.recreates++;
		}
		if (kmem_report_count() != reports)
			KT_FAIL("op %lu: unexpected report", op);
	}
	if (failed_now())
		return;

	/* Everything back: free all, destroy every cache, give back the empty slabs. */
	while (M.nr_live && !failed_now())
		free_one();
	for (int k = 0; k < NR_CACHES && !failed_now(); k++)
		destroy_cache(k);
	slab_quiesce();
	fprintf(stderr, "  seed %#llx: %lu allocs (%lu bulk, %lu zeroed), %lu frees (%lu bulk, "
		"%lu kfree_bulk), %lu krealloc, %lu shrinks, %lu re-created caches, peak %lu live\n",
		(unsigned long long)seed, M.allocs, M.bulk_allocs, M.zeroed, M.frees, M.bulk_frees,
		M.kfree_bulks, M.reallocs, M.shrinks, M.recreates, M.peak_live);
	KT_EXPECT(kmem_report_count() == reports);
	KT_EXPECT(global_zone_page_state(NR_KMALLOC_LARGE) == large0);
	if (slab_pages_now() != slab0 || slab_free_pages_now() != free0)
		KT_FAIL("pages not conserved: slab %ld -> %ld, free %ld -> %ld", slab0,
			slab_pages_now(), free0, slab_free_pages_now());
	KT_EXPECT(kt_vmstat("nr_free_pages") == free0);
	M.total_allocs += M.allocs;
}

KTEST(model_two_seeds)
{
	const char *env = getenv("KMEM_MODEL_OPS");
	unsigned long ops = env ? strtoul(env, NULL, 0) : DEFAULT_OPS;

	M.granules = mm_spanned_pages() * (PAGE_SIZE / 8);
	M.bitmap = calloc((M.granules + 63) / 64, sizeof(uint64_t));
	KT_ASSERT(M.bitmap);
	run_model(0x51ab0001ULL, ops);
	if (!ktest_failed_now)
		run_model(0x51ab0002ULL, ops);
	KT_EXPECT(M.total_allocs >= 2 * ops);
	free(M.bitmap);
}

KTEST_MAIN(if (slab_test_boot(MODEL_CMDLINE)) return 1;)
