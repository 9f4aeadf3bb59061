// SPDX-License-Identifier: MIT
/*
 * kmem_cache / kmalloc API conformance with the kernel's semantics
 * (include/linux/slab.h, mm/slab_common.c): constructors, alignment,
 * zeroing, ZERO_SIZE_PTR, ksize and kmalloc_size_roundup, krealloc, the
 * overflow-checked array helpers, kstrdup/kmemdup, the KMALLOC_MAX_SIZE
 * limit and cache merging.  The bulk API and kmem_cache_shrink are in
 * test_slab_api_bulk.c.
 *
 * Back-end independent: boots "mem=64M" + $KMEM_TEST_CMDLINE (slab_test.h);
 * SLUB-only details are gated on slab_test_is_slub().  The case that needs
 * its own boot (slab_nomerge) runs in a fresh process (slab_run_child).
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmem.h>

#include "core/printk.h"
#include "core/vmstat.h"
#include "slab/slab.h"
#include "slab/slub/slub.h"

#include "ktest.h"
#include "lib/kt_util.h"
#include "lib/slab_test.h"

#define GFP (GFP_KERNEL)

/* ---- constructors --------------------------------------------------- */

#define CTOR_MAGIC 0xc7012c7012c7012cULL
struct ctor_obj {
	uint64_t magic;
	uintptr_t self;
	unsigned char payload[112];
};
static long ctor_calls;

static void test_ctor(void *p)
{
	struct ctor_obj *o = p;

	ctor_calls++;
	o->magic = CTOR_MAGIC;
	o->self = (uintptr_t)p;
	memset(o->payload, 0x5c, sizeof(o->payload));
}

static int constructed(const struct ctor_obj *o)
{
	return o->magic == CTOR_MAGIC && o->self == (uintptr_t)o &&
	       !slab_check_byte(o->payload, sizeof(o->payload), 0x5c);
}

KTEST(ctor_runs_once_per_object)
{
	enum { N = 300 };
	static void *objs[N];
	bool per_alloc = slab_allocator == SLAB_ALLOCATOR_SLOB;	/* SLOB: ctor at every allocation */

	ctor_calls = 0;
	struct kmem_cache *s = kmem_cache_create("api_ctor", sizeof(struct ctor_obj), 0, 0, test_ctor);
	KT_ASSERT(s);
	KT_ASSERT_EQ(ctor_calls, 0);		/* no slab yet, nothing constructed */

	struct ctor_obj *x = kmem_cache_alloc(s, GFP);
	KT_ASSERT(x && constructed(x));
	long first = ctor_calls;
	KT_ASSERT(first >= 1);
	if (slab_test_is_slub())	/* whole slabs were constructed at once (a sheaf refill may take several) */
		KT_ASSERT_EQ(first, atomic_load(&slub_of(s)->node.total_objects));

	/* Free and reallocate: the object keeps its constructed state, no new ctor call. */
	for (int i = 0; i < 1000; i++) {
		kmem_cache_free(s, x);
		x = kmem_cache_alloc(s, GFP);
		KT_ASSERT(x && constructed(x));
	}
	if (!per_alloc)
		KT_ASSERT_EQ(ctor_calls, first);
	kmem_cache_free(s, x);

	/* Many slabs: every object handed out is constructed, each exactly once. */
	for (int i = 0; i < N; i++) {
		objs[i] = kmem_cache_alloc(s, GFP);
		KT_ASSERT(objs[i] && constructed(objs[i]));
	}
	KT_ASSERT(slab_disjoint(objs, N, sizeof(struct ctor_obj)));
	KT_ASSERT(ctor_calls >= N);
	/*
	 * Freeing whole slabs may give them back to the page allocator, and a
	 * slab built again runs the ctor again: so the count may grow across
	 * rounds, but only by whole slabs (SLUB: exactly objs_per_slab per
	 * new slab), never per allocation.
	 */
	for (int round = 0; round < 4; round++) {
		long before = ctor_calls;
		/* Free every other object: no slab empties, nothing is rebuilt. */
		for (int i = 0; i < N; i += 2)
			kmem_cache_free(s, objs[i]);
		for (int i = 0; i < N; i += 2) {
			objs[i] = kmem_cache_alloc(s, GFP);
			KT_ASSERT(objs[i] && constructed(objs[i]));
		}
		if (!per_alloc)
			KT_ASSERT_EQ(ctor_calls, before);
		/* Everything, then bulk: constructed objects, ctor only for new slabs. */
		for (int i = 0; i < N; i++)
			kmem_cache_free(s, objs[i]);
		if (round & 1) {
			KT_ASSERT_EQ(kmem_cache_alloc_bulk(s, GFP, N, objs), N);
		} else {
			for (int i = 0; i < N; i++)
				objs[i] = kmem_cache_alloc(s, GFP);
		}
		for (int i = 0; i < N; i++)
			KT_ASSERT(objs[i] && constructed(objs[i]));
		KT_ASSERT(slab_disjoint(objs, N, sizeof(struct ctor_obj)));
	}
	if (slab_test_is_slub())	/* once per object of every slab ever built */
		KT_ASSERT_EQ(ctor_calls, (long)oo_objects(slub_of(s)->oo) *
					 (long)slub_stat_sum(s, ALLOC_SLAB, NULL, 0, NULL));
	kmem_cache_free_bulk(s, N, objs);

	unsigned long reports = kmem_report_count();
	kmem_cache_destroy(s);
	KT_ASSERT_EQ(kmem_report_count(), reports);
}

/* ---- alignment ------------------------------------------------------ */

static int check_cache_align(unsigned int size, unsigned int align, slab_flags_t flags,
			     unsigned int want)
{
	enum { N = 40 };
	void *p[N];
	int ok = 1;
	struct kmem_cache *s = kmem_cache_create("api_align", size, align, flags, NULL);

	if (!s)
		return 0;
	for (int i = 0; i < N; i++) {
		p[i] = kmem_cache_alloc(s, GFP);
		if (!p[i] || ((uintptr_t)p[i] & (want - 1))) {
			fprintf(stderr, "  size %u align %u flags %#x: object %p not %u-aligned\n",
				size, align, flags, p[i], want);
			ok = 0;
		}
		if (p[i])
			memset(p[i], 0x11, size);
	}
	for (int i = 0; i < N; i++)
		kmem_cache_free(s, p[i]);
	kmem_cache_destroy(s);
	return ok;
}

KTEST(alignment)
{
	static const unsigned int sizes[] = { 1, 7, 24, 100, 300, 1000, 5000 };

	for (unsigned int align = 8; align <= 65536; align <<= 1)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			KT_ASSERT(check_cache_align(sizes[i], align, 0, align));
	/* No align argument: still word aligned. */
	for (unsigned int size = 1; size < 200; size += 13)
		KT_ASSERT(check_cache_align(size, 0, 0, sizeof(void *)));
	/* SLAB_HWCACHE_ALIGN: a cache line for objects > 32 bytes, half-lines below. */
	for (unsigned int size = 33; size <= 2100; size += 37)
		KT_ASSERT(check_cache_align(size, 0, SLAB_HWCACHE_ALIGN, 64));
	for (unsigned int size = 17; size <= 32; size++)
		KT_ASSERT(check_cache_align(size, 0, SLAB_HWCACHE_ALIGN, 32));
	for (unsigned int size = 9; size <= 16; size++)
		KT_ASSERT(check_cache_align(size, 0, SLAB_HWCACHE_ALIGN, 16));
	KT_ASSERT(check_cache_align(100, 256, SLAB_HWCACHE_ALIGN, 256));

	/*
	 * kmalloc power-of-two buckets are naturally aligned, the others word
	 * aligned.  SLOB has no buckets: a power-of-two request is aligned to
	 * its size, any other to 16 (its header's length).
	 */
	bool slob = slab_allocator == SLAB_ALLOCATOR_SLOB;
	for (size_t size = 8; size <= (4UL << 20); size <<= 1) {
		for (int i = 0; i < 20; i++) {
			/* the smallest request of the bucket, skipping the 96/192 ones */
			size_t req = i & 1 ? size : size == 128 ? 97 : size == 256 ? 193 : size / 2 + 1;
			if (size <= 8)
				req = (size_t)i % 8 + 1;
			void *p = kmalloc(req, GFP);
			size_t want = !slob ? size : !(req & (req - 1)) && req > 16 ? req : 16;
			KT_ASSERT(p);
			if ((uintptr_t)p & (want - 1)) {
				KT_FAIL("kmalloc(%zu) = %p is not %zu-aligned", req, p, want);
				kfree(p);
				return;
			}
			kfree(p);
			if (size > 65536)
				break;
		}
	}
	for (size_t req = 65; req <= 192; req++) {
		void *p = kmalloc(req, GFP);
		KT_ASSERT(p && !((uintptr_t)p & 7));
		kfree(p);
	}
}

/* ---- zeroing -------------------------------------------------------- */

KTEST(gfp_zero_and_zalloc)
{
	enum { N = 100, SIZE = 200 };
	void *p[N];
	struct kmem_cache *s = kmem_cache_create("api_zero", SIZE, 0, SLAB_NO_MERGE, NULL);

	KT_ASSERT(s);
	for (int pass = 0; pass < 3; pass++) {
		for (int i = 0; i < N; i++) {
			p[i] = kmem_cache_alloc(s, GFP);
			KT_ASSERT(p[i]);
			memset(p[i], 0xab, SIZE);
		}
		for (int i = 0; i < N; i++)
			kmem_cache_free(s, p[i]);
		for (int i = 0; i < N; i++) {
			p[i] = pass == 0 ? kmem_cache_zalloc(s, GFP)
			     : pass == 1 ? kmem_cache_alloc(s, GFP | __GFP_ZERO) : NULL;
		}
		if (pass == 2)
			KT_ASSERT_EQ(kmem_cache_alloc_bulk(s, GFP | __GFP_ZERO, N, p), N);
		for (int i = 0; i < N; i++) {
			KT_ASSERT(p[i]);
			KT_ASSERT_EQ(slab_check_byte(p[i], SIZE, 0), 0);
			memset(p[i], 0xab, SIZE);
		}
		for (int i = 0; i < N; i++)
			kmem_cache_free(s, p[i]);
	}
	kmem_cache_destroy(s);

	/* kzalloc, kmalloc(__GFP_ZERO) and kcalloc, after dirtying the same sizes. */
	static const size_t sizes[] = { 1, 8, 13, 96, 100, 192, 256, 1000, 4096, 8192, 8193,
					20000, 65536, 300000 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		for (int way = 0; way < 3; way++) {
			void *d[8];
			for (int k = 0; k < 8; k++) {
				d[k] = kmalloc(n, GFP);
				KT_ASSERT(d[k]);
				memset(d[k], 0xcd, n);
			}
			for (int k = 0; k < 8; k++)
				kfree(d[k]);
			for (int k = 0; k < 8; k++) {
				d[k] = way == 0 ? kzalloc(n, GFP) : way == 1 ? kmalloc(n, GFP | __GFP_ZERO)
				     : kcalloc(1, n, GFP);
				KT_ASSERT(d[k]);
				if (slab_check_byte(d[k], n, 0)) {
					KT_FAIL("way %d size %zu: not zeroed", way, n);
					return;
				}
			}
			for (int k = 0; k < 8; k++)
				kfree(d[k]);
		}
	}
}

/* ---- ZERO_SIZE_PTR, ksize, kmalloc_size_roundup ------------------------ */

KTEST(zero_size_ptr)
{
	struct kt_capture cap;
	unsigned long reports = kmem_report_count();

	KT_ASSERT(ZERO_SIZE_PTR == (void *)16);
	kt_capture_begin(&cap);
	void *a = kmalloc(0, GFP), *b = kzalloc(0, GFP), *c = kcalloc(0, 100, GFP);
	void *d = kmalloc_array(100, 0, GFP);
	kfree(ZERO_SIZE_PTR);
	kfree(NULL);
	kfree(a);
	size_t k1 = ksize(ZERO_SIZE_PTR), k2 = ksize(NULL);
	char *out = kt_capture_end(&cap);
	KT_EXPECT(a == ZERO_SIZE_PTR && b == ZERO_SIZE_PTR && c == ZERO_SIZE_PTR && d == ZERO_SIZE_PTR);
	KT_EXPECT(ZERO_OR_NULL_PTR(a) && ZERO_OR_NULL_PTR(NULL));
	KT_EXPECT(k1 == 0 && k2 == 0);
	KT_EXPECT(out[0] == '\0');
	KT_EXPECT(kmem_report_count() == reports);
	free(out);
}

KTEST(ksize_and_roundup)
{
	for (size_t n = 1; n <= KMALLOC_MAX_CACHE_SIZE_BYTES; n++) {
		unsigned char *p = kmalloc(n, GFP);
		KT_ASSERT(p);
		size_t ks = ksize(p);
		if (ks < n || ks != kmalloc_size_roundup(n)) {
			KT_FAIL("kmalloc(%zu): ksize %zu, kmalloc_size_roundup %zu", n, ks,
				kmalloc_size_roundup(n));
			kfree(p);
			return;
		}
		memset(p, 0xee, ks);		/* all of ksize is the caller's to use */
		kfree(p);
	}
	static const size_t large[] = { 8193, 12288, 12289, 16384, 16385, 65536, 100000,
					1UL << 20, (1UL << 20) + 1, 3UL << 20, 4UL << 20 };
	for (size_t i = 0; i < sizeof(large) / sizeof(large[0]); i++) {
		size_t n = large[i];
		unsigned char *p = kmalloc(n, GFP);
		KT_ASSERT(p);
		KT_ASSERT_EQ(ksize(p), PAGE_SIZE << get_order(n));
		KT_ASSERT_EQ(kmalloc_size_roundup(n), PAGE_SIZE << get_order(n));
		p[0] = 1;
		p[ksize(p) - 1] = 2;
		kfree(p);
	}
	KT_ASSERT_EQ(kmalloc_size_roundup(0), 0);
}

/* ---- krealloc ------------------------------------------------------- */

KTEST(krealloc_semantics)
{
	unsigned long reports = kmem_report_count();

	/* Grow across buckets and into the page allocator: contents kept. */
	static const size_t steps[] = { 24, 200, 3000, 8192, 20000, 70000 };
	size_t have = steps[0];
	unsigned char *p = kmalloc(have, GFP);
	KT_ASSERT(p);
	slab_fill(p, have, 42);
	for (size_t i = 1; i < sizeof(steps) / sizeof(steps[0]); i++) {
		unsigned char *q = krealloc(p, steps[i], GFP);
		KT_ASSERT(q);
		KT_ASSERT_EQ(slab_check(q, have, 42), 0);
		KT_ASSERT(ksize(q) >= steps[i]);
		have = steps[i];
		slab_fill(q, have, 42);
		p = q;
	}
	/* Shrinking fits in place: same pointer, contents kept. */
	unsigned char *q = krealloc(p, 100, GFP);
	KT_ASSERT(q == p);
	KT_ASSERT_EQ(slab_check(q, 100, 42), 0);
	kfree(q);

	p = kmalloc(1000, GFP);
	KT_ASSERT(p);
	slab_fill(p, 1000, 7);
	KT_ASSERT(krealloc(p, 10, GFP) == p);
	KT_ASSERT(krealloc(p, ksize(p), GFP) == p);	/* growing within ksize stays too */
	KT_ASSERT_EQ(slab_check(p, 10, 7), 0);

	/* krealloc(p, 0) frees p and returns ZERO_SIZE_PTR. */
	KT_ASSERT(krealloc(p, 0, GFP) == ZERO_SIZE_PTR);
	long large0 = global_zone_page_state(NR_KMALLOC_LARGE);
	p = kmalloc(65536, GFP);
	KT_ASSERT(p);
	KT_ASSERT_EQ(global_zone_page_state(NR_KMALLOC_LARGE), large0 + 16);
	KT_ASSERT(krealloc(p, 0, GFP) == ZERO_SIZE_PTR);
	KT_ASSERT_EQ(global_zone_page_state(NR_KMALLOC_LARGE), large0);

	/* krealloc(NULL or ZERO_SIZE_PTR, n) is kmalloc(n). */
	p = krealloc(NULL, 50, GFP);
	KT_ASSERT(p && ksize(p) >= 50);
	q = krealloc(ZERO_SIZE_PTR, 5000, GFP);
	KT_ASSERT(q && ksize(q) >= 5000);
	kfree(p);
	kfree(q);

	/* __GFP_ZERO on a buffer that was always zeroed: the new tail reads 0. */
	p = kzalloc(64, GFP);
	KT_ASSERT(p);
	memset(p, 0x77, 64);
	q = krealloc(p, 4000, GFP | __GFP_ZERO);
	KT_ASSERT(q);
	KT_ASSERT_EQ(slab_check_byte(q, 64, 0x77), 0);
	KT_ASSERT_EQ(slab_check_byte(q + 64, 4000 - 64, 0), 0);
	kfree(q);
	KT_ASSERT_EQ(kmem_report_count(), reports);
}

/* ---- array helpers, kstrdup, kmemdup, size limit ---------------------- */

KTEST(array_overflow_allocates_nothing)
{
	slab_quiesce();
	long slab0 = slab_pages_now(), free0 = slab_free_pages_now();
	long large0 = global_zone_page_state(NR_KMALLOC_LARGE);
	unsigned long reports = kmem_report_count();

	KT_EXPECT(kmalloc_array(SIZE_MAX / 2 + 2, 2, GFP) == NULL);
	KT_EXPECT(kmalloc_array(2, SIZE_MAX / 2 + 2, GFP) == NULL);
	KT_EXPECT(kcalloc((size_t)1 << 33, (size_t)1 << 31, GFP) == NULL);
	KT_EXPECT(kcalloc(SIZE_MAX, SIZE_MAX, GFP) == NULL);
	slab_quiesce();
	KT_EXPECT(slab_pages_now() == slab0);
	KT_EXPECT(slab_free_pages_now() == free0);
	KT_EXPECT(global_zone_page_state(NR_KMALLOC_LARGE) == large0);
	KT_EXPECT(kmem_report_count() == reports);

	unsigned char *p = kmalloc_array(10, 100, GFP);
	KT_ASSERT(p && ksize(p) >= 1000);
	memset(p, 1, 1000);
	kfree(p);
	p = kcalloc(300, 7, GFP);
	KT_ASSERT(p && ksize(p) >= 2100);
	KT_ASSERT_EQ(slab_check_byte(p, 2100, 0), 0);
	kfree(p);
}

KTEST(kstrdup_kmemdup)
{
	static const char *const strs[] = { "", "a", "hello, slab", "0123456789abcdef0123456789" };

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		char *d = kstrdup(strs[i], GFP);
		KT_ASSERT(d && d != strs[i]);
		KT_ASSERT_STREQ(d, strs[i]);
		KT_ASSERT(ksize(d) >= strlen(strs[i]) + 1);
		kfree(d);
	}
	KT_ASSERT(kstrdup(NULL, GFP) == NULL);

	static unsigned char src[50000];
	slab_fill(src, sizeof(src), 99);
	static const size_t lens[] = { 1, 17, 5000, 8192, 20000, 50000 };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		unsigned char *d = kmemdup(src, lens[i], GFP);
		KT_ASSERT(d && d != src);
		KT_ASSERT(!memcmp(d, src, lens[i]));
		kfree(d);
	}
	KT_ASSERT(kmemdup(src, 0, GFP) == ZERO_SIZE_PTR);
}

KTEST(kmalloc_size_limit)
{
	struct kt_capture cap;
	unsigned long reports = kmem_report_count();

	/* Exactly KMALLOC_MAX_SIZE works. */
	unsigned char *p = kmalloc(KMALLOC_MAX_SIZE_BYTES, GFP);
	KT_ASSERT(p);
	p[KMALLOC_MAX_SIZE_BYTES - 1] = 1;
	kfree(p);

	/* Larger fails with a warning... */
	kt_capture_begin(&cap);
	p = kmalloc(KMALLOC_MAX_SIZE_BYTES + 1, GFP);
	char *out = kt_capture_end(&cap);
	KT_EXPECT(p == NULL);
	KT_EXPECT(kmem_report_count() == reports + 1);
	KT_EXPECT(strstr(out, "WARNING:") != NULL);
	free(out);

	/* ...which __GFP_NOWARN silences. */
	reports = kmem_report_count();
	kt_capture_begin(&cap);
	void *a = kmalloc(KMALLOC_MAX_SIZE_BYTES + 1, GFP | __GFP_NOWARN);
	void *b = kmalloc(64UL << 20, GFP | __GFP_NOWARN);
	void *c = kmalloc(SIZE_MAX, GFP | __GFP_NOWARN);
	void *d = kzalloc(KMALLOC_MAX_SIZE_BYTES * 2, GFP | __GFP_NOWARN);
	out = kt_capture_end(&cap);
	KT_EXPECT(!a && !b && !c && !d);
	KT_EXPECT(out[0] == '\0');
	KT_EXPECT(kmem_report_count() == reports);
	free(out);
}

KTEST(cache_size_and_name)
{
	struct kmem_cache *s = kmem_cache_create("api_size77", 77, 0, SLAB_NO_MERGE, NULL);

	KT_ASSERT(s);
	KT_ASSERT_EQ(kmem_cache_size(s), 77);
	KT_ASSERT_STREQ(kmem_cache_name(s), "api_size77");
	kmem_cache_destroy(s);
	kmem_cache_destroy(NULL);	/* a no-op, as in the kernel */
}

/* ---- merging -------------------------------------------------------- */

static void nop_ctor(void *p) { (void)p; }

KTEST(cache_merging)
{
	if (slab_allocator == SLAB_ALLOCATOR_SLOB) {
		fprintf(stderr, "  (SLOB never merges caches: skipped)\n");
		return;
	}
	unsigned long reports = kmem_report_count();
	struct kmem_cache *a = kmem_cache_create("api_merge_a", 1000, 0, 0, NULL);
	struct kmem_cache *b = kmem_cache_create("api_merge_b", 1000, 0, 0, NULL);
	struct kmem_cache *b2 = kmem_cache_create("api_merge_b2", 996, 8, 0, NULL);
	struct kmem_cache *nm = kmem_cache_create("api_merge_nm", 1000, 0, SLAB_NO_MERGE, NULL);
	struct kmem_cache *ct = kmem_cache_create("api_merge_ctor", 1000, 0, 0, nop_ctor);
	struct kmem_cache *ct2 = kmem_cache_create("api_merge_ctor2", 1000, 0, 0, nop_ctor);
	struct kmem_cache *rc = kmem_cache_create("api_merge_rcl", 1000, 0, SLAB_RECLAIM_ACCOUNT, NULL);
	struct kmem_cache *rcu = kmem_cache_create("api_merge_rcu", 1000, 0, SLAB_TYPESAFE_BY_RCU, NULL);

	KT_ASSERT(a && b && b2 && nm && ct && ct2 && rc && rcu);
	KT_EXPECT(b == a);		/* compatible: an alias of a */
	KT_EXPECT(b2 == a);		/* fits a's slot with less than a word to spare */
	KT_EXPECT(nm != a);		/* SLAB_NO_MERGE */
	KT_EXPECT(ct != a && ct2 != ct);	/* a ctor cache never merges, either way */
	KT_EXPECT(rc != a);		/* SLAB_RECLAIM_ACCOUNT must match */
	KT_EXPECT(rcu != a);		/* SLAB_TYPESAFE_BY_RCU never merges */
	KT_EXPECT(kmem_cache_size(b) >= 1000);

	/* An object of the alias is an object of the target. */
	void *x = kmem_cache_alloc(b, GFP);
	KT_ASSERT(x);
	kmem_cache_free(a, x);

	/* Destroying the original handle first keeps the alias working, and vice versa. */
	kmem_cache_destroy(a);
	KT_EXPECT(slab_cache_works(b, 1000));
	kmem_cache_destroy(b);
	KT_EXPECT(slab_cache_works(b2, 996));
	kmem_cache_destroy(b2);
	KT_EXPECT(slab_cache_works(nm, 1000) && slab_cache_works(ct, 1000) && slab_cache_works(rc, 1000));
	kmem_cache_destroy(nm);
	kmem_cache_destroy(ct);
	kmem_cache_destroy(ct2);
	kmem_cache_destroy(rc);
	kmem_cache_destroy(rcu);
	KT_EXPECT(kmem_report_count() == reports);
}

static void child_nomerge(void)
{
	KT_ASSERT_EQ(slab_test_boot("mem=32M slab_nomerge"), 0);
	struct kmem_cache *a = kmem_cache_create("nomerge_a", 1000, 0, 0, NULL);
	struct kmem_cache *b = kmem_cache_create("nomerge_b", 1000, 0, 0, NULL);
	KT_ASSERT(a && b);
	KT_EXPECT(a != b);
	KT_EXPECT(slab_cache_works(a, 1000) && slab_cache_works(b, 1000));
	unsigned long reports = kmem_report_count();
	kmem_cache_destroy(a);
	kmem_cache_destroy(b);
	KT_EXPECT(kmem_report_count() == reports);
}

/*
 * slab_debug= (kernel syntax): a block without a cache list sets every
 * cache's options, a list (with a trailing '*' glob) the named caches';
 * kmalloc caches take them too, SLAB_NO_USER_FLAGS caches do not, and a
 * cache with debug flags never merges.
 */
static int attr_of(const char *cache, const char *attr)
{
	char path[128], buf[32];
	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", cache, attr);
	return kmem_read(path, buf, sizeof(buf)) > 0 ? atoi(buf) : -1;
}

static void child_slab_debug(void)
{
	KT_ASSERT_EQ(slab_test_boot("mem=32M slub_debug=ZP;FZ,kt_dbg_f*,kt_dbg_exact;-,kmalloc-8k"), 0);
	KT_EXPECT(attr_of("kmalloc-64", "red_zone") == 1 && attr_of("kmalloc-64", "poison") == 1);
	KT_EXPECT(attr_of("kmalloc-64", "sanity_checks") == 0);
	KT_EXPECT(attr_of("kmalloc-8k", "red_zone") == 0 && attr_of("kmalloc-8k", "poison") == 0);
	struct kmem_cache *f1 = kmem_cache_create("kt_dbg_f1", 100, 0, 0, NULL);
	struct kmem_cache *ex = kmem_cache_create("kt_dbg_exact", 100, 0, 0, NULL);
	struct kmem_cache *ex2 = kmem_cache_create("kt_dbg_exact2", 100, 0, 0, NULL);
	struct kmem_cache *nu = kmem_cache_create("kt_dbg_nouser", 100, 0, SLAB_NO_USER_FLAGS, NULL);
	KT_ASSERT(f1 && ex && ex2 && nu);
	KT_EXPECT(attr_of("kt_dbg_f1", "sanity_checks") == 1 && attr_of("kt_dbg_f1", "poison") == 0);
	KT_EXPECT(attr_of("kt_dbg_exact", "sanity_checks") == 1 && attr_of("kt_dbg_exact", "poison") == 0);
	/* Not a prefix match without '*': the global block's options. */
	KT_EXPECT(attr_of("kt_dbg_exact2", "sanity_checks") == 0 && attr_of("kt_dbg_exact2", "red_zone") == 1);
	/* Red zones or poison make a cache unmergeable (F alone does not, as in the kernel). */
	KT_EXPECT(f1 != ex && ex != ex2 && nu != f1 && nu != ex2);
	KT_EXPECT(!(nu->flags & (SLAB_RED_ZONE | SLAB_POISON | SLAB_CONSISTENCY_CHECKS)));
	/* kmalloc's red zones catch an overrun at kfree(), as in the kernel. */
	unsigned char *p = kmalloc(64, GFP);
	KT_ASSERT(p);
	KT_EXPECT(ksize(p) == 64);
	p[64] = 0;
	struct kt_capture cap;
	unsigned long reports = kmem_report_count();
	kt_capture_begin(&cap);
	kfree(p);
	char *out = kt_capture_end(&cap);
	KT_EXPECT(kmem_report_count() == reports + 1);
	KT_EXPECT(strstr(out, "BUG kmalloc-64 (Not tainted): Right Redzone overwritten"));
	free(out);
	KT_EXPECT(slab_cache_works(f1, 100) && slab_cache_works(ex2, 100) && slab_cache_works(nu, 100));
}

/* SLOB has no kmalloc-N caches: its kmalloc red zone is test_slob_api@debug's. */
#define SKIP_ON_SLOB(why)							\
	do {									\
		if (slab_allocator == SLAB_ALLOCATOR_SLOB) {			\
			fprintf(stderr, "  skipped on SLOB: %s\n", why);	\
			return;							\
		}								\
	} while (0)

KTEST(slab_debug_boot_param)
{
	SKIP_ON_SLOB("no kmalloc-N caches whose sysfs flags and reports this checks (test_slob_api@debug)");
	/* SLUB's sysfs flags and reports; SLAB's debug words and reports: test_slab_arrays */
	if (!slab_test_is_slub())
		return;
	KT_ASSERT_CHILD_OK(slab_run_child("slab_debug"));
}

static bool bytes_are(const unsigned char *p, size_t from, size_t to, unsigned char val)
{
	for (size_t i = from; i < to; i++)
		if (p[i] != val)
			return false;
	return true;
}

/*
 * slab_debug=FZPU: kmalloc caches keep each object's requested size, the
 * bytes past it are red zone ("kmalloc Redzone", 0xcc), an allocated
 * object is poisoned up to its size (0x6b ... 0xa5); ksize() hands the
 * whole slot over; krealloc() in place moves the red zone (kernel
 * slub_debug_orig_size(), __do_krealloc()).
 */
static void child_kmalloc_redzone(void)
{
	KT_ASSERT_EQ(slab_test_boot("mem=32M slab_debug=FZPU"), 0);
	unsigned long reports = kmem_report_count();

	unsigned char *p = kmalloc(100, GFP);
	KT_ASSERT(p);
	KT_EXPECT(bytes_are(p, 0, 99, 0x6b) && p[99] == 0xa5 && bytes_are(p, 100, 128, 0xcc));
	p[100] = 1;
	struct kt_capture cap;
	kt_capture_begin(&cap);
	kfree(p);
	char *out = kt_capture_end(&cap);
	KT_EXPECT(kmem_report_count() == reports + 1);
	KT_EXPECT(strstr(out, "BUG kmalloc-128 (Not tainted): kmalloc Redzone overwritten"));
	KT_EXPECT(strstr(out, "First byte 0x1 instead of 0xcc"));
	KT_EXPECT(strstr(out, "not freed"));
	free(out);

	/* ksize(): the caller may use the whole slot. */
	unsigned char *q = kmalloc(100, GFP);
	KT_ASSERT(q);
	KT_EXPECT(ksize(q) == 128);
	memset(q, 7, 128);
	kfree(q);

	/* kzalloc, then krealloc in place: zeroes where asked, the red zone follows the size. */
	unsigned char *r = kzalloc(100, GFP);
	KT_ASSERT(r);
	KT_EXPECT(bytes_are(r, 0, 100, 0) && bytes_are(r, 100, 128, 0xcc));
	KT_EXPECT(krealloc(r, 120, GFP | __GFP_ZERO) == r);
	KT_EXPECT(bytes_are(r, 0, 120, 0) && bytes_are(r, 120, 128, 0xcc));
	memset(r, 8, 120);
	KT_EXPECT(krealloc(r, 40, GFP) == r);
	KT_EXPECT(bytes_are(r, 0, 40, 8) && bytes_are(r, 40, 128, 0xcc));
	KT_EXPECT(kmem_write("/sys/kernel/slab/kmalloc-128/validate", "1") == 0);
	kfree(r);

	/* krealloc() that moves copies the bytes asked for, not the red zone, and zeroes the rest. */
	unsigned char *m = kzalloc(100, GFP);
	KT_ASSERT(m);
	unsigned char *m2 = krealloc(m, 200, GFP | __GFP_ZERO);
	KT_ASSERT(m2 && m2 != m);
	KT_EXPECT(bytes_are(m2, 0, 200, 0) && bytes_are(m2, 200, 256, 0xcc));
	kfree(m2);
	KT_EXPECT(kmem_report_count() == reports + 1);
}

/*
 * slab_debug=FZP, no U: no size kept, so no kmalloc red zone, and kzalloc()
 * zeroes the whole object: krealloc(__GFP_ZERO) growing in place reads zeroes.
 */
static void child_red_zone_without_user(void)
{
	KT_ASSERT_EQ(slab_test_boot("mem=32M slab_debug=FZP"), 0);
	unsigned char *p = kmalloc(128, GFP);
	KT_ASSERT(p);
	memset(p, 0xaa, 128);
	kfree(p);
	unsigned char *q = kzalloc(100, GFP);
	KT_ASSERT(q);
	KT_EXPECT(bytes_are(q, 0, 128, 0));
	KT_EXPECT(krealloc(q, 120, GFP | __GFP_ZERO) == q);
	KT_EXPECT(bytes_are(q, 0, 120, 0));
	kfree(q);
}

KTEST(kzalloc_zeroes_the_object_without_a_kept_size)
{
	SKIP_ON_SLOB("a kmalloc block is its request rounded to 16 bytes, not a kmalloc-128 slot");
	KT_ASSERT_CHILD_OK(slab_run_child("red_zone_without_user"));
}

KTEST(kmalloc_red_zone_past_the_requested_size)
{
	SKIP_ON_SLOB("its red zone follows the request in a block of its own (test_slob_api@debug), no kmalloc-128 slot");
	/* SLUB's kmalloc red zone past the size asked for: SLAB had none */
	if (!slab_test_is_slub())
		return;
	KT_ASSERT_CHILD_OK(slab_run_child("kmalloc_redzone"));
}

/* ---- create/destroy cycles ------------------------------------------- */

/*
 * A program may create and destroy caches without end (the kernel's module
 * load/unload): a cache that went away whole gives its per-thread slot to
 * the next one.  (Before, creations failed after 2047 caches in all.)
 */
KTEST(create_destroy_cycles_never_run_out)
{
	unsigned long reports = kmem_report_count();
	char name[32];

	for (int i = 0; i < 3 * KMEM_MAX_CACHES; i++) {
		snprintf(name, sizeof(name), "cycle_%d", i % 7);
		struct kmem_cache *s = kmem_cache_create(name, 64 + (unsigned int)(i % 5) * 8, 0,
							 SLAB_NO_MERGE, NULL);
		KT_ASSERT(s);
		void *x = kmem_cache_alloc(s, GFP);
		KT_ASSERT(x);
		kmem_cache_free(s, x);
		kmem_cache_destroy(s);
	}
	KT_EXPECT(kmem_report_count() == reports);
}

struct slot_worker {
	struct kmem_cache *volatile cache;
	volatile int step, done;
	void *obj;
};

/* Allocates and frees on whatever cache it is given, one step at a time. */
static void *slot_worker_fn(void *arg)
{
	struct slot_worker *w = arg;

	for (int step = 1; step <= 2; step++) {
		while (__atomic_load_n(&w->step, __ATOMIC_ACQUIRE) < step)
			sched_yield();
		void *x[40];
		for (int i = 0; i < 40; i++)
			x[i] = kmem_cache_alloc(w->cache, GFP);
		for (int i = 1; i < 40; i++)
			kmem_cache_free(w->cache, x[i]);	/* the rest stays in its sheaves */
		w->obj = x[0];
		__atomic_store_n(&w->done, step, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void slot_worker_step(struct slot_worker *w, struct kmem_cache *s, int step)
{
	w->cache = s;
	__atomic_store_n(&w->step, step, __ATOMIC_RELEASE);
	while (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE) < step)
		sched_yield();
}

/*
 * The slot a live thread had for a destroyed cache serves the next cache of
 * that index as a new one: its objects, its counters, nothing of the old
 * cache's.  A cache destroyed with objects left keeps its slot: a late free
 * of a leaked object must still find the old cache.
 */
KTEST(a_new_cache_takes_a_destroyed_caches_slot)
{
	SKIP_ON_SLOB("no per-thread slots and no slabs of a cache's own");
	struct slot_worker w = { 0 };
	pthread_t th;
	KT_ASSERT(pthread_create(&th, NULL, slot_worker_fn, &w) == 0);

	struct kmem_cache *old = kmem_cache_create("slot_old", 96, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(old);
	slot_worker_step(&w, old, 1);
	kmem_cache_free(old, w.obj);	/* now the worker's sheaf holds the old cache's objects */
	unsigned int index = old->index;
	kmem_cache_destroy(old);

	unsigned long reports = kmem_report_count();
	struct kmem_cache *s = kmem_cache_create("slot_new", 200, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(s);
	if (slab_test_is_slub())
		KT_EXPECT(s->index == index);
	slot_worker_step(&w, s, 2);
	KT_ASSERT(w.obj && virt_to_slab(w.obj) && virt_to_slab(w.obj)->slab_cache == s);
	kmem_cache_free(s, w.obj);
	/* Its counters move to the cache when it exits: read them once it has. */
	KT_ASSERT(pthread_join(th, NULL) == 0);
	char buf[64];
	if (slab_test_is_slub()) {
		/*
		 * The worker's 40 allocations and 39 frees are the new cache's
		 * only counts (those from sheaves with CONFIG_SLUB_STATS only).
		 */
		unsigned long a = 0;
		if (SLUB_STATS_PER_OBJECT) {
			KT_ASSERT(kmem_read("/sys/kernel/slab/slot_new/alloc_cpu_sheaf", buf, sizeof(buf)) > 0);
			a = strtoul(buf, NULL, 10);
		}
		KT_ASSERT(kmem_read("/sys/kernel/slab/slot_new/alloc_slowpath", buf, sizeof(buf)) > 0);
		a += strtoul(buf, NULL, 10);
		KT_ASSERT(kmem_read("/sys/kernel/slab/slot_new/alloc_fastpath", buf, sizeof(buf)) > 0);
		a += strtoul(buf, NULL, 10);
		if (SLUB_STATS_PER_OBJECT)
			KT_EXPECT(a == 40);
		else
			KT_EXPECT(a <= 40);
	}
	kmem_cache_destroy(s);
	KT_EXPECT(kmem_report_count() == reports);

	/* Destroyed with an object left: reported, kept, its slot not given away. */
	struct kmem_cache *leaky = kmem_cache_create("slot_leaky", 96, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(leaky);
	void *leak = kmem_cache_alloc(leaky, GFP);
	KT_ASSERT(leak);
	struct kt_capture cap;
	kt_capture_begin(&cap);
	kmem_cache_destroy(leaky);
	free(kt_capture_end(&cap));
	reports = kmem_report_count();
	struct kmem_cache *next = kmem_cache_create("slot_next", 96, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(next);
	if (slab_test_is_slub())	/* SLAB's caches have no inline slot (index 0) */
		KT_EXPECT(next->index != leaky->index);
	void *y = kmem_cache_alloc(next, GFP);
	KT_ASSERT(y);
	kmem_cache_free(leaky, leak);	/* late, to the kept cache */
	kmem_cache_free(next, y);
	KT_ASSERT(virt_to_slab(y) && virt_to_slab(y)->slab_cache == next);
	kmem_cache_destroy(next);
	KT_EXPECT(kmem_report_count() == reports);
}

KTEST(slab_nomerge_boot_param)
{
	KT_ASSERT_CHILD_OK(slab_run_child("nomerge"));
}
static const struct slab_child children[] = {
	{ "nomerge", child_nomerge },
	{ "slab_debug", child_slab_debug },
	{ "kmalloc_redzone", child_kmalloc_redzone },
	{ "red_zone_without_user", child_red_zone_without_user },
};

KTEST_MAIN(
	slab_child_dispatch(children, sizeof(children) / sizeof(children[0]));
	if (slab_test_boot("mem=64M")) return 1;
	fprintf(stderr, "cmdline \"%s\", back-end %s\n", slab_test_cmdline(), slab_test_backend());
)
