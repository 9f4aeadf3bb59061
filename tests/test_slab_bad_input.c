// SPDX-License-Identifier: MIT
/*
 * Bad input to the slab API: each fault must produce one kernel-style
 * report on stderr (kmem_report_count() + 1, and the expected text in the
 * captured fd 2) and corrupt nothing: afterwards the caches involved still
 * hand out distinct, disjoint objects whose contents survive, and (SLUB)
 * slub_validate() finds their lists consistent.
 *
 * Faults: free to the wrong cache, double frees, pointers into an object,
 * pointers outside any slab (stack, libc heap, page-allocator pages),
 * destroying a cache with live objects, kmem_cache_create() with bad
 * arguments (and SLAB_PANIC, which aborts), bad entries in a bulk free.
 *
 * Double frees: without debug checks (slab_debug=F arrives later) only the
 * cheap cases are caught, and those are the ones tested here: the object
 * at the head of this thread's cpu freelist, the object at the head of a
 * slab's own freelist (a slab that is not the cpu slab), and any object of
 * a slab with no object in use.  A double free of an object deeper in a
 * freelist is NOT detected without checks (it would corrupt the freelist),
 * so it is not done here.  The slab-structure setups are SLUB's.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "core/printk.h"
#include "slab/backend.h"
#include "slab/slab.h"
#include "slab/slub/slub.h"

#include "ktest.h"
#include "lib/kt_util.h"
#include "lib/slab_test.h"

#define GFP GFP_KERNEL

/* @stmt must report exactly once, and the report must contain @needle. */
#define BAD(stmt, needle) KT_ASSERT_ONE_REPORT(stmt, needle)

/*
 * SLOB: a cache's objects share heap pages with every other cache's and
 * kmalloc's, and carry nothing that names their cache or start; its own
 * bad-input cases are test_slob_api's.  What this suite checks of SLUB's
 * and SLAB's slabs is skipped there, saying why.
 */
#define ON_SLOB (slab_allocator == SLAB_ALLOCATOR_SLOB)
#define SKIP_ON_SLOB(why)							\
	do {									\
		if (ON_SLOB) {							\
			fprintf(stderr, "  skipped on SLOB: %s\n", why);	\
			return;							\
		}								\
	} while (0)

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* The cache still works: many objects, distinct and disjoint, contents kept. */
static int cache_ok(struct kmem_cache *s)
{
	enum { N = 300 };
	void *p[N], *sorted[N];
	unsigned int size = kmem_cache_size(s);
	unsigned long reports = kmem_report_count();
	int ok = 1;

	for (int round = 0; round < 2 && ok; round++) {
		for (int i = 0; i < N; i++) {
			p[i] = kmem_cache_alloc(s, GFP);
			if (!p[i])
				return 0;
			slab_fill(p[i], size, (uintptr_t)p[i] ^ 0xbadULL);
		}
		memcpy(sorted, p, sizeof(p));
		qsort(sorted, N, sizeof(void *), cmp_ptr);
		for (int i = 1; i < N; i++)
			if ((uintptr_t)sorted[i - 1] + size > (uintptr_t)sorted[i]) {
				fprintf(stderr, "  %s: objects %p and %p overlap\n", kmem_cache_name(s),
					sorted[i - 1], sorted[i]);
				ok = 0;
			}
		for (int i = 0; i < N; i++) {
			if (slab_check(p[i], size, (uintptr_t)p[i] ^ 0xbadULL)) {
				fprintf(stderr, "  %s: object %p corrupted\n", kmem_cache_name(s), p[i]);
				ok = 0;
			}
		}
		for (int i = 0; i < N; i++)
			kmem_cache_free(s, p[i]);
	}
	if (slab_test_is_slub() && slub_validate(s))
		ok = 0;
	if (kmem_report_count() != reports)
		ok = 0;
	return ok;
}

static int kmalloc_ok(void)
{
	for (size_t size = 8; size <= 8192; size *= 2) {
		void *p[64];
		for (int i = 0; i < 64; i++) {
			p[i] = kmalloc(size, GFP);
			if (!p[i])
				return 0;
			slab_fill(p[i], size, (uintptr_t)p[i]);
		}
		for (int i = 0; i < 64; i++) {
			if (slab_check(p[i], size, (uintptr_t)p[i]))
				return 0;
			kfree(p[i]);
		}
	}
	return 1;
}

struct ctor_like {
	unsigned long magic;
	char pad[40];
};

static void ctor_like_init(void *p)
{
	((struct ctor_like *)p)->magic = 0x1234;
}

static struct kmem_cache *new_cache(const char *name, unsigned int size)
{
	return kmem_cache_create(name, size, 0, SLAB_NO_MERGE, NULL);
}

KTEST(free_to_wrong_cache)
{
	SKIP_ON_SLOB("an object names no cache: another cache's free is seen only where the sizes differ and the page shows it (test_slob_api)");
	struct kmem_cache *a = new_cache("bad_wrong_a", 128), *b = new_cache("bad_wrong_b", 128);
	KT_ASSERT(a && b && a != b);
	char *x = kmem_cache_alloc(a, GFP);
	KT_ASSERT(x);
	slab_fill(x, 128, 1);

	BAD(kmem_cache_free(b, x), "Wrong slab cache. bad_wrong_b but object is from bad_wrong_a");
	/* Not freed: still a's, contents intact. */
	KT_ASSERT_EQ(slab_check(x, 128, 1), 0);
	/*
	 * Again with b's per-thread state in use and room in its sheaf: the
	 * fast path looks the slab up, sees the cache differ and leaves it to
	 * the slow path, which must check the cache too (it once took the slab
	 * it was given on trust and pushed x into b's sheaf).  Single and in a
	 * small bulk (object by object).
	 */
	void *y = kmem_cache_alloc(b, GFP);
	KT_ASSERT(y);
	kmem_cache_free(b, y);
	y = kmem_cache_alloc(b, GFP);
	BAD(kmem_cache_free(b, x), "Wrong slab cache. bad_wrong_b but object is from bad_wrong_a");
	void *one[1] = { x };
	BAD(kmem_cache_free_bulk(b, 1, one), "Wrong slab cache. bad_wrong_b but object is from bad_wrong_a");
	void *z = kmem_cache_alloc(b, GFP);
	KT_EXPECT(z != x);
	kmem_cache_free(b, z);
	kmem_cache_free(b, y);
	KT_ASSERT_EQ(slab_check(x, 128, 1), 0);
	KT_ASSERT(cache_ok(a) && cache_ok(b));
	KT_ASSERT_EQ(slab_check(x, 128, 1), 0);
	kmem_cache_free(a, x);
	KT_ASSERT(cache_ok(a) && cache_ok(b));
	kmem_cache_destroy(a);
	kmem_cache_destroy(b);
}

KTEST(double_free_cpu_freelist_head)
{
	struct kmem_cache *s = new_cache("bad_df_cpu", 96);
	KT_ASSERT(s);
	/* SLOB: a neighbour keeps the page (a wholly free one goes back at once). */
	void *guard = ON_SLOB ? kmem_cache_alloc(s, GFP) : NULL;
	void *x = kmem_cache_alloc(s, GFP);
	KT_ASSERT(x);
	kmem_cache_free(s, x);
	BAD(kmem_cache_free(s, x), "Object already free");
	KT_ASSERT(cache_ok(s));

	/* The same through kfree() and through kmalloc caches. */
	void *kguard = ON_SLOB ? kmalloc(200, GFP) : NULL;
	x = kmalloc(200, GFP);
	KT_ASSERT(x);
	kfree(x);
	BAD(kfree(x), "Object already free");
	KT_ASSERT(kmalloc_ok());
	if (guard)
		kmem_cache_free(s, guard);
	kfree(kguard);
	kmem_cache_destroy(s);
}

/*
 * SLUB: fill three slabs of a fresh cache; the first two are full and no
 * longer the cpu slab.  Returns objs_per_slab.
 */
static unsigned int three_slabs(struct kmem_cache *s, void **objs)
{
	unsigned int per = oo_objects(slub_of(s)->oo);

	for (unsigned int i = 0; i < 3 * per; i++)
		objs[i] = kmem_cache_alloc(s, GFP);
	return per;
}

KTEST(double_free_slab_freelist_head)
{
	if (!slab_test_is_slub())
		return;
	static void *objs[3 * 64];
	for (int cpu_partial = 1; cpu_partial >= 0; cpu_partial--) {
		struct kmem_cache *s = new_cache("bad_df_slab", 256);
		KT_ASSERT(s);
		if (slub_of(s)->sheaf_capacity) {	/* frees go to sheaves: test@nosheaves covers it */
			kmem_cache_destroy(s);
			return;
		}
		if (!cpu_partial)	/* then the slab goes to the node partial list */
			KT_ASSERT_EQ(slub_set_cpu_partial(s, 0), 0);
		unsigned int per = three_slabs(s, objs);
		KT_ASSERT(per <= 64);
		struct slab *first = virt_to_slab(objs[0]);
		KT_ASSERT(first && virt_to_slab(objs[per - 1]) == first);
		KT_ASSERT(slub_this->cpu[s->index].slab != first);

		void *x = objs[3];
		kmem_cache_free(s, x);		/* x heads the first slab's freelist */
		KT_ASSERT(ss_freelist(first, slab_state(first)) == x);
		BAD(kmem_cache_free(s, x), "Object already free");
		KT_ASSERT_EQ(ss_inuse(slab_state(first)), per - 1);

		objs[3] = kmem_cache_alloc(s, GFP);	/* whatever comes, it is distinct */
		for (unsigned int i = 0; i < 3 * per; i++)
			kmem_cache_free(s, objs[i]);
		KT_ASSERT(cache_ok(s));
		kmem_cache_destroy(s);
	}
}

/*
 * With consistency checks a double free is caught wherever the object is
 * on its slab's freelist, not only at its head: such a cache keeps no free
 * object anywhere else (no sheaf, no cpu slab), so the free walks the list.
 * Without the walk the third free below links a in twice, and the next
 * allocations hand it out twice.
 */
static void *free_in_thread(void *arg)
{
	void **x = arg;

	kmem_cache_free(x[0], x[1]);
	return NULL;
}

static void run_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, arg) == 0)
		pthread_join(t, NULL);
}

/* A cache of 64-byte objects with consistency checks (no sheaves); NULL if not SLUB. */
static struct kmem_cache *checked_cache(const char *name)
{
	if (!slab_test_is_slub())
		return NULL;
	return kmem_cache_create(name, 64, 0, SLAB_NO_MERGE | SLAB_CONSISTENCY_CHECKS, NULL);
}

KTEST(double_free_anywhere_on_the_freelist_with_checks)
{
	struct kmem_cache *s = checked_cache("bad_df_checks");
	if (!slab_test_is_slub())
		return;
	KT_ASSERT(s);
	KT_ASSERT_EQ(slub_of(s)->sheaf_capacity, 0);
	void *a = kmem_cache_alloc(s, GFP), *b = kmem_cache_alloc(s, GFP), *c = kmem_cache_alloc(s, GFP);
	KT_ASSERT(a && b && c && virt_to_slab(a) == virt_to_slab(c));
	kmem_cache_free(s, a);
	kmem_cache_free(s, b);			/* a is second on the freelist now */
	BAD(kmem_cache_free(s, a), "Object already free");
	/* From another thread, and in a bulk free, the same. */
	void *arg[2] = { s, a };
	BAD(run_thread(free_in_thread, arg), "Object already free");
	void *dup[2] = { c, a };
	BAD(kmem_cache_free_bulk(s, 2, dup), "Object already free");
	/* a, b and c are free once each: three allocations give three distinct objects. */
	void *x = kmem_cache_alloc(s, GFP), *y = kmem_cache_alloc(s, GFP), *z = kmem_cache_alloc(s, GFP);
	KT_ASSERT(x && y && z && x != y && y != z && x != z);
	kmem_cache_free(s, x);
	kmem_cache_free(s, y);
	kmem_cache_free(s, z);
	KT_ASSERT(cache_ok(s));
	unsigned long reports = kmem_report_count();
	kmem_cache_destroy(s);
	KT_ASSERT_EQ(kmem_report_count(), reports);
}

KTEST(double_free_in_fully_free_slab)
{
	if (!slab_test_is_slub())
		return;
	static void *objs[3 * 64];
	struct kmem_cache *s = new_cache("bad_df_empty", 256);
	KT_ASSERT(s);
	if (slub_of(s)->sheaf_capacity) {	/* frees go to sheaves: test@nosheaves covers it */
		kmem_cache_destroy(s);
		return;
	}
	unsigned int per = three_slabs(s, objs);
	struct slab *first = virt_to_slab(objs[0]);
	KT_ASSERT(first);

	/* Free the whole first slab; it stays (a fresh cache keeps min_partial slabs). */
	for (unsigned int i = 0; i < per; i++)
		kmem_cache_free(s, objs[i]);
	KT_ASSERT(virt_to_slab(objs[0]) == first);
	KT_ASSERT_EQ(ss_inuse(slab_state(first)), 0);
	/* objs[0] went first: it is at the tail of the freelist, not the head. */
	KT_ASSERT(ss_freelist(first, slab_state(first)) != objs[0]);
	BAD(kmem_cache_free(s, objs[0]), "Object already free");
	BAD(kfree(objs[per / 2]), "Object already free");
	KT_ASSERT_EQ(ss_inuse(slab_state(first)), 0);

	for (unsigned int i = per; i < 3 * per; i++)
		kmem_cache_free(s, objs[i]);
	KT_ASSERT(cache_ok(s));
	kmem_cache_destroy(s);
}

KTEST(pointer_inside_object)
{
	static void *objs[3 * 64];
	struct kmem_cache *s = new_cache("bad_inside", 256);
	KT_ASSERT(s);
	unsigned int per = slab_test_is_slub() ? three_slabs(s, objs) : 0;
	char *x = kmem_cache_alloc(s, GFP);
	KT_ASSERT(x);
	slab_fill(x, 256, 3);

	/*
	 * SLOB: an object carries nothing that marks its start; a free of x + 8
	 * is seen only if the 256 bytes from there run into free space, so it
	 * is not done.  kfree() finds no kmalloc header in front.
	 */
	const char *inv = ON_SLOB ? "no kmalloc header in front" : "Invalid object pointer";
	if (!ON_SLOB)
		BAD(kmem_cache_free(s, x + 8), "Invalid object pointer");
	BAD(kfree(x + 1), inv);
	BAD(kfree(x + 255), inv);
	if (per)	/* an object of a full slab that is not the cpu slab */
		BAD(kfree((char *)objs[5] + 16), "Invalid object pointer");
	KT_ASSERT_EQ(slab_check(x, 256, 3), 0);
	kmem_cache_free(s, x);
	for (unsigned int i = 0; i < 3 * per; i++)
		kmem_cache_free(s, objs[i]);
	KT_ASSERT(cache_ok(s));

	/* kmalloc objects, small and large. */
	char *k = kmalloc(100, GFP), *big = kmalloc(100000, GFP);
	KT_ASSERT(k && big);
	BAD(kfree(k + 4), inv);
	BAD(kfree(big + 100), "pointer into the middle of a large kmalloc");
	BAD(kfree(big + 3 * PAGE_SIZE), "pointer into the middle of a large kmalloc");
	/*
	 * ksize() and krealloc(): a size from the middle is not the block's, and
	 * a copy from there would read past the end; reported, nothing done.
	 */
	void *r = (void *)1;
	size_t ks = 1;
	/* SLOB finds the kmalloc block around k + 4 by its header: the core's words for that. */
	const char *mid = ON_SLOB ? "pointer into the middle of a kmalloc block" : "Invalid object pointer";
	BAD(ks = ksize(k + 4), mid);
	KT_EXPECT(ks == 0);
	BAD(r = krealloc(k + 4, 1000, GFP), mid);
	KT_EXPECT(r == NULL);
	BAD(ks = ksize(big + PAGE_SIZE), "pointer into the middle of a large kmalloc");
	KT_EXPECT(ks == 0);
	BAD(r = krealloc(big + PAGE_SIZE, 1000, GFP), "pointer into the middle of a large kmalloc");
	KT_EXPECT(r == NULL);
	BAD(r = krealloc(big + PAGE_SIZE, 300000, GFP), "pointer into the middle of a large kmalloc");
	KT_EXPECT(r == NULL);
	KT_EXPECT(ksize(big) == 131072);
	kfree(k);
	kfree(big);
	KT_ASSERT(kmalloc_ok());
	kmem_cache_destroy(s);
}

KTEST(pointer_not_in_any_slab)
{
	struct kmem_cache *s = new_cache("bad_foreign", 64);
	KT_ASSERT(s);
	char local[64];
	char *heap = malloc(64);
	struct page *pg = alloc_pages(GFP, 0);
	KT_ASSERT(heap && pg);
	char *pa = page_address(pg);
	slab_fill(pa, PAGE_SIZE, 4);
	memset(local, 0x42, sizeof(local));

	BAD(kmem_cache_free(s, local), "not an object of any cache");
	BAD(kmem_cache_free(s, heap), "not an object of any cache");
	BAD(kmem_cache_free(s, pa), "not an object of any cache");
	BAD(kfree(local), "address not managed by kmem");
	BAD(kfree(heap), "address not managed by kmem");
	BAD(kmem_cache_free(NULL, local), "not an object of any cache");

	KT_ASSERT_EQ(slab_check_byte(local, sizeof(local), 0x42), 0);
	KT_ASSERT_EQ(slab_check(pa, PAGE_SIZE, 4), 0);
	unsigned long reports = kmem_report_count();
	__free_pages(pg, 0);		/* still a good page: no "Bad page state" */
	KT_ASSERT_EQ(kmem_report_count(), reports);
	free(heap);
	KT_ASSERT(cache_ok(s));
	kmem_cache_destroy(s);
}

/*
 * On SLOB a page whose blocks are all free goes back to the page
 * allocator: a double free there is a free of no object ("not an object
 * of any cache; not freed"), elsewhere "... (double free); not freed".
 */
#define DOUBLE_FREE (ON_SLOB ? "not freed" : "Object already free")

/*
 * The double-free check on every free (the free key: slub/slub.h,
 * slab/slab_priv.h; SLOB's free walks its page's free blocks): a double
 * free is caught whatever was freed between, without debug flags, and
 * nothing is handed out twice.
 */
KTEST(double_free_buried_under_100_frees)
{
	struct kmem_cache *s = new_cache("bad_df_buried", 64);
	KT_ASSERT(s);
	char *p = kmem_cache_alloc(s, GFP), *q[100];
	KT_ASSERT(p);
	for (int i = 0; i < 100; i++)
		KT_ASSERT(q[i] = kmem_cache_alloc(s, GFP));
	kmem_cache_free(s, p);
	for (int i = 0; i < 100; i++)
		kmem_cache_free(s, q[i]);
	BAD(kmem_cache_free(s, p), DOUBLE_FREE);
	/* Under 1000 more: its sheaf went to the spare, the rest to the barn. */
	char *r[1000];
	for (int i = 0; i < 1000; i++)
		KT_ASSERT(r[i] = kmem_cache_alloc(s, GFP));
	char *x = r[500];
	kmem_cache_free(s, x);
	for (int i = 0; i < 1000; i++)
		if (i != 500)
			kmem_cache_free(s, r[i]);
	BAD(kmem_cache_free(s, x), DOUBLE_FREE);
	KT_ASSERT(cache_ok(s));
	kmem_cache_destroy(s);
}

/* A block freed again after it was handed out and used is no double free. */
KTEST(free_key_does_not_accuse_a_reused_block)
{
	struct kmem_cache *s = new_cache("bad_df_reuse", 64);
	KT_ASSERT(s);
	unsigned long reports = kmem_report_count();
	for (int round = 0; round < 1000; round++) {
		/* Not even written: its first word still holds the key, and is looked up. */
		void *p = kmem_cache_alloc(s, GFP);
		KT_ASSERT(p);
		kmem_cache_free(s, p);
	}
	void *many[300];
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 300; i++)
			KT_ASSERT(many[i] = kmem_cache_alloc(s, GFP));
		for (int i = 0; i < 300; i++)
			kmem_cache_free(s, many[299 - i]);
	}
	KT_ASSERT_EQ(kmem_report_count(), reports);
	KT_ASSERT(cache_ok(s));
	kmem_cache_destroy(s);
}

struct df_thread_arg {
	struct kmem_cache *s;
	void *x;
	unsigned long reports;
};

static void *df_free_in_thread(void *argp)
{
	struct df_thread_arg *a = argp;
	unsigned long before = kmem_report_count();
	kmem_cache_free(a->s, a->x);
	a->reports = kmem_report_count() - before;
	return NULL;
}

/*
 * Freed by one thread, then again by another: caught once the first
 * thread's copy is where the second can see it (its slab: the
 * first thread exited, or its sheaves were flushed).  A copy still in
 * a live thread's own sheaf is not (glibc's tcache has the same blind
 * spot; its arena checks see the rest).
 */
KTEST(double_free_across_threads)
{
	struct kmem_cache *s = new_cache("bad_df_threads", 64);
	KT_ASSERT(s);
	pthread_t t;
	/* Freed by a thread that exits (its sheaves go back), then here. */
	struct df_thread_arg a = { s, kmem_cache_alloc(s, GFP), 0 };
	KT_ASSERT(a.x);
	KT_ASSERT(pthread_create(&t, NULL, df_free_in_thread, &a) == 0);
	pthread_join(t, NULL);
	KT_ASSERT_EQ(a.reports, 0);
	BAD(kmem_cache_free(s, a.x), DOUBLE_FREE);
	/*
	 * Freed here, this thread's sheaves flushed (kmem_cache_shrink(): the
	 * object goes back to its slab, which a live neighbour keeps), then
	 * freed by another thread.
	 */
	char *r[2];
	for (int i = 0; i < 2; i++)
		KT_ASSERT(r[i] = kmem_cache_alloc(s, GFP));
	if (!strcmp(slab_ops.name, "slub"))
		KT_ASSERT(virt_to_slab(r[0]) == virt_to_slab(r[1]));
	kmem_cache_free(s, r[0]);
	kmem_cache_shrink(s);
	struct df_thread_arg b = { s, r[0], 0 };
	KT_ASSERT(pthread_create(&t, NULL, df_free_in_thread, &b) == 0);
	pthread_join(t, NULL);
	KT_ASSERT_EQ(b.reports, 1);
	kmem_cache_free(s, r[1]);
	KT_ASSERT(cache_ok(s));
	kmem_cache_destroy(s);
}

/* In bulk frees: an object freed before, and one named twice in the same call. */
KTEST(double_free_in_bulk_frees)
{
	struct kmem_cache *s = new_cache("bad_df_bulk", 64);
	KT_ASSERT(s);
	void *p[40], *old = kmem_cache_alloc(s, GFP), *q[20];
	KT_ASSERT(old);
	for (int i = 0; i < 20; i++)
		KT_ASSERT(q[i] = kmem_cache_alloc(s, GFP));
	kmem_cache_free(s, old);
	for (int i = 0; i < 20; i++)
		kmem_cache_free(s, q[i]);
	KT_ASSERT_EQ(kmem_cache_alloc_bulk(s, GFP, 30, p), 30);
	p[30] = old;			/* freed above, buried under 20 */
	BAD(kmem_cache_free_bulk(s, 31, p), DOUBLE_FREE);
	KT_ASSERT_EQ(kmem_cache_alloc_bulk(s, GFP, 30, p), 30);
	p[30] = p[3];			/* twice in one call */
	BAD(kmem_cache_free_bulk(s, 31, p), DOUBLE_FREE);
	/* kfree_bulk() of kmalloc objects: the same. */
	void *k[10];
	for (int i = 0; i < 10; i++)
		KT_ASSERT(k[i] = kmalloc(64, GFP));
	void *kold = k[0];
	kfree_bulk(10, k);
	for (int i = 0; i < 10; i++)
		KT_ASSERT(k[i] = kmalloc(64, GFP));
	int holds_old = 0;
	for (int i = 0; i < 10; i++)
		holds_old |= k[i] == kold;
	if (!holds_old) {
		void *kk[11];
		memcpy(kk, k, sizeof(k));
		kk[10] = kold;
		BAD(kfree_bulk(11, kk), DOUBLE_FREE);
	} else {
		kfree_bulk(10, k);
	}
	KT_ASSERT(cache_ok(s));
	kmem_cache_destroy(s);
}

/*
 * A destroyed cache's handle: a second destroy, an allocation through it,
 * are reported and do nothing; and a stale handle never reaches a cache
 * created after the destroy (its struct is never handed out again).
 */
KTEST(stale_cache_handles)
{
	struct kmem_cache *old = new_cache("bad_stale", 96);
	KT_ASSERT(old);
	void *obj = kmem_cache_alloc(old, GFP);
	KT_ASSERT(obj);
	kmem_cache_free(old, obj);
	kmem_cache_destroy(old);

	/* New caches of the same shape: none may take the old one's place. */
	struct kmem_cache *fresh[8];
	for (int i = 0; i < 8; i++) {
		fresh[i] = new_cache(i ? "bad_stale_more" : "bad_stale", 96);
		KT_ASSERT(fresh[i]);
		KT_ASSERT(fresh[i] != old);
		if (i)
			kmem_cache_destroy(fresh[i]);
	}
	BAD(kmem_cache_destroy(old), "not a live cache");
	void *p = (void *)1;
	BAD(p = kmem_cache_alloc(old, GFP), "not a live cache");
	KT_ASSERT(p == NULL);
	BAD(p = kmem_cache_zalloc(old, GFP), "not a live cache");
	KT_ASSERT(p == NULL);
	void *bulk[4];
	int n = -1;
	BAD(n = kmem_cache_alloc_bulk(old, GFP, 4, bulk), "not a live cache");
	KT_ASSERT_EQ(n, 0);
	/* The new cache with the old name is whole. */
	KT_ASSERT(cache_ok(fresh[0]));
	kmem_cache_destroy(fresh[0]);
	BAD(kmem_cache_destroy(fresh[0]), "not a live cache");
}

/* kmem_cache_free(NULL, obj): the kernel would oops; reported, the object still goes back. */
KTEST(cache_free_without_a_cache)
{
	SKIP_ON_SLOB("a heap object names no cache to free it to (SLOB's kfree needs a size header)");
	struct kmem_cache *s = new_cache("bad_nullcache", 64);
	KT_ASSERT(s);
	void *obj = kmem_cache_alloc(s, GFP);
	KT_ASSERT(obj);
	BAD(kmem_cache_free(NULL, obj), "no cache given");
	KT_ASSERT(cache_ok(s));
	kmem_cache_destroy(s);	/* nothing left: no "Objects remaining" */
}

/* GFP bits <kmem/gfp.h> does not define: reported once per call site, then ignored. */
KTEST(alloc_pages_with_undefined_gfp_bits)
{
	struct page *pg[3];
	unsigned long before = kmem_report_count();
	for (int i = 0; i < 3; i++) {
		pg[i] = alloc_pages(GFP | 0x200u | 0x80000000u, 0);	/* one call site, three calls */
		KT_ASSERT(pg[i]);
	}
	KT_ASSERT_EQ(kmem_report_count(), before + 1);
	for (int i = 0; i < 3; i++)
		__free_pages(pg[i], 0);
	KT_ASSERT_EQ(kmem_report_count(), before + 1);
	/* Every defined bit is accepted without a word. */
	struct page *ok = alloc_pages(GFP | __GFP_NOWARN | __GFP_COMP, 1);
	KT_ASSERT(ok);
	__free_pages(ok, 1);
	KT_ASSERT_EQ(kmem_report_count(), before + 1);
}

/* kmem_read() that fails leaves an empty string, as its header promises. */
KTEST(kmem_read_error_terminates_the_buffer)
{
	char buf[32];
	memset(buf, 'x', sizeof(buf));
	KT_ASSERT(kmem_read("/proc/no_such_file", buf, sizeof(buf)) < 0);
	KT_ASSERT_EQ(buf[0], '\0');
	memset(buf, 'x', sizeof(buf));
	KT_ASSERT(kmem_read(NULL, buf, sizeof(buf)) < 0);
	KT_ASSERT_EQ(buf[0], '\0');
	memset(buf, 'x', sizeof(buf));
	KT_ASSERT(kmem_read("/sys/kernel/slab/no_such_cache/objects", buf, sizeof(buf)) < 0);
	KT_ASSERT_EQ(buf[0], '\0');
}

KTEST(kfree_of_page_allocator_pages)
{
	struct page *pg = alloc_pages(GFP, 2);
	KT_ASSERT(pg);
	char *pa = page_address(pg);
	slab_fill(pa, 4 * PAGE_SIZE, 5);

	BAD(kfree(pa), "not allocated by kmalloc");
	BAD(kfree(pa + PAGE_SIZE), "not allocated by kmalloc");	/* a tail page */
	BAD(kfree(pa + 100), "not allocated by kmalloc");
	BAD(ksize(pa), "not allocated by kmalloc");
	unsigned long addr = __get_free_pages(GFP, 0);
	KT_ASSERT(addr);
	BAD(kfree((void *)addr), "not allocated by kmalloc");

	KT_ASSERT_EQ(slab_check(pa, 4 * PAGE_SIZE, 5), 0);
	unsigned long reports = kmem_report_count();
	__free_pages(pg, 2);
	free_pages(addr, 0);
	KT_ASSERT_EQ(kmem_report_count(), reports);
	KT_ASSERT(kmalloc_ok());
}

/*
 * SLUB finds an object's slab through the page map word of the object's
 * page (its distance from the slab's head page).  Every page of a slab
 * must lead to the head, and once the slab is discarded none may: its
 * pages can become anything, and a stale word would make a later free of
 * a pointer into them look like a free into whatever slab starts there.
 */
KTEST(page_map_leads_to_the_head_and_is_cleared_with_the_slab)
{
	SKIP_ON_SLOB("no slabs of a cache's own, no page-map words");
	/* SLUB's page map: SLAB leaves its pages' map words 0 */
	if (!slab_test_is_slub())
		return;
	struct kmem_cache *s = new_cache("bad_map", 1024);
	KT_ASSERT(s);
	unsigned int per = oo_objects(slub_of(s)->oo);
	void *objs[64];
	KT_ASSERT(per <= 64 && oo_order(slub_of(s)->oo) >= 1);
	for (unsigned int i = 0; i < per; i++)
		KT_ASSERT((objs[i] = kmem_cache_alloc(s, GFP)) != NULL);
	struct slab *slab = virt_to_slab(objs[0]);
	KT_ASSERT(slab);
	char *base = slab_address(slab);
	unsigned int pages = 1u << compound_order(slab_page(slab));
	KT_ASSERT_EQ(pages, 1u << oo_order(slub_of(s)->oo));
	for (unsigned int i = 0; i < per; i++)
		if ((char *)objs[i] >= base && (char *)objs[i] < base + pages * PAGE_SIZE)
			KT_ASSERT(virt_to_slab(objs[i]) == slab);
	for (unsigned int i = 0; i < pages; i++) {
		KT_ASSERT(virt_to_slab(base + i * PAGE_SIZE + 8) == slab);
		KT_ASSERT(page_map_get(base + i * PAGE_SIZE) != 0);
	}
	for (unsigned int i = 0; i < per; i++)
		kmem_cache_free(s, objs[i]);
	kmem_cache_shrink(s);
	KT_ASSERT(!PageSlab(virt_to_page(base)));
	for (unsigned int i = 0; i < pages; i++) {
		KT_ASSERT_EQ(page_map_get(base + i * PAGE_SIZE), 0);
		KT_ASSERT(virt_to_slab(base + i * PAGE_SIZE) == NULL);
	}
	kmem_cache_destroy(s);
}

KTEST(destroy_with_live_objects)
{
	SKIP_ON_SLOB("no slabs to list the objects of: one warning with their count");
	struct kmem_cache *s = new_cache("bad_leaky", 300);
	struct kmem_cache *other = new_cache("bad_leaky_other", 300);
	KT_ASSERT(s && other);
	void *live[10];
	for (int i = 0; i < 10; i++) {
		live[i] = kmem_cache_alloc(s, GFP);
		KT_ASSERT(live[i]);
		slab_fill(live[i], 300, (uint64_t)i);
	}
	unsigned long r0 = kmem_report_count();
	struct kt_capture cap;
	kt_capture_begin(&cap);
	kmem_cache_destroy(s);
	char *out = kt_capture_end(&cap);
	KT_EXPECT(kmem_report_count() == r0 + 1);
	KT_EXPECT(strstr(out, "Objects remaining in bad_leaky on __kmem_cache_shutdown()"));
	/* It counts the objects still allocated, not the slabs' capacity. */
	KT_EXPECT(strstr(out, "INFO: 10 object(s) still allocated in "));
	/* As the kernel: the BUG, each object left (they are in a partial slab), then the WARNING. */
	char *bug = strstr(out, "BUG bad_leaky"), *warn = strstr(out, "WARNING:");
	KT_EXPECT(bug && warn && bug < warn);
	for (int i = 0; i < 10; i++) {
		char line[64];
		snprintf(line, sizeof(line), "Object %p @offset=", live[i]);
		char *at = strstr(out, line);
		KT_EXPECT(at && at > bug && at < warn);
	}
	KT_EXPECT(!strstr(out, "more object(s) not listed"));
	free(out);
	/* Objects of full slabs (on no list) and past the first 64 are counted, not named. */
	struct kmem_cache *big = new_cache("bad_leaky_many", 64);
	KT_ASSERT(big);
	for (int i = 0; i < 200; i++)
		KT_ASSERT(kmem_cache_alloc(big, GFP));
	kt_capture_begin(&cap);
	kmem_cache_destroy(big);
	out = kt_capture_end(&cap);
	int named = 0;
	for (char *p = out; (p = strstr(p, "\nObject 0x")); p++)
		named++;
	char more[64];
	snprintf(more, sizeof(more), "INFO: %d more object(s) not listed", 200 - named);
	KT_EXPECT(named <= 64 && strstr(out, more));
	free(out);
	/* The cache is kept, not freed: its objects are intact and can still go back. */
	for (int i = 0; i < 10; i++)
		KT_ASSERT_EQ(slab_check(live[i], 300, (uint64_t)i), 0);
	unsigned long reports = kmem_report_count();
	for (int i = 0; i < 10; i++)
		kmem_cache_free(s, live[i]);
	KT_ASSERT_EQ(kmem_report_count(), reports);
	KT_ASSERT(cache_ok(other));
	KT_ASSERT(kmalloc_ok());
	kmem_cache_destroy(other);
}

KTEST(create_with_bad_arguments)
{
	char long_name[200];
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	struct kmem_cache *s = NULL;

	BAD(s = kmem_cache_create("bad_size0", 0, 0, 0, NULL), "kmem_cache_create(bad_size0)");
	KT_ASSERT(!s);
	BAD(s = kmem_cache_create("bad_huge", KMALLOC_MAX_SIZE_BYTES + 1, 0, 0, NULL), "bad_huge");
	KT_ASSERT(!s);
	BAD(s = kmem_cache_create("bad_huge2", 1U << 31, 0, 0, NULL), "bad_huge2");
	KT_ASSERT(!s);
	BAD(s = kmem_cache_create("bad_align24", 64, 24, 0, NULL), "bad_align24");
	KT_ASSERT(!s);
	BAD(s = kmem_cache_create("bad_align3", 64, 3, 0, NULL), "bad_align3");
	KT_ASSERT(!s);
	BAD(s = kmem_cache_create(NULL, 64, 0, 0, NULL), "kmem_cache_create");
	KT_ASSERT(!s);
	BAD(s = kmem_cache_create("", 64, 0, 0, NULL), "kmem_cache_create");
	KT_ASSERT(!s);
	BAD(s = kmem_cache_create(long_name, 64, 0, 0, NULL), "kmem_cache_create");
	KT_ASSERT(!s);
	BAD(s = kmem_cache_create("bad/name", 64, 0, 0, NULL), "bad/name");
	KT_ASSERT(!s);
	BAD(s = kmem_cache_create("bad name", 64, 0, 0, NULL), "bad name");
	KT_ASSERT(!s);
	BAD(s = kmem_cache_create("..", 64, 0, SLAB_NO_MERGE, NULL), "kmem_cache_create(..)");
	KT_ASSERT(!s);
	BAD(s = kmem_cache_create(".", 64, 0, SLAB_NO_MERGE, NULL), "kmem_cache_create(.)");
	KT_ASSERT(!s);
	BAD(s = kmem_cache_create("bad\nline", 64, 0, SLAB_NO_MERGE, NULL), "bad");
	KT_ASSERT(!s);
	BAD(s = kmem_cache_create("bad\ttab", 64, 0, SLAB_NO_MERGE, NULL), "bad");
	KT_ASSERT(!s);
	/* Flags the kernel does not know: -EINVAL (SLAB_FLAGS_PERMITTED), mergeable or not. */
	BAD(s = kmem_cache_create("bad_flag1", 64, 0, 0x1, NULL), "kmem_cache_create(bad_flag1) failed with error -22");
	KT_ASSERT(!s);
	BAD(s = kmem_cache_create("bad_flag31", 64, 0, SLAB_NO_MERGE | 0x80000000U, NULL), "bad_flag31");
	KT_ASSERT(!s);
	BAD(s = kmem_cache_create("bad_flag22", 64, 0, 0x400000, NULL), "bad_flag22");
	KT_ASSERT(!s);

	/* The limits themselves are fine: KMALLOC_MAX_SIZE objects, page alignment. */
	unsigned long reports = kmem_report_count();
	s = kmem_cache_create("bad_max_ok", KMALLOC_MAX_SIZE_BYTES, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(s);
	char *x = kmem_cache_alloc(s, GFP);
	KT_ASSERT(x);
	x[0] = 1;
	x[KMALLOC_MAX_SIZE_BYTES - 1] = 2;
	kmem_cache_free(s, x);
	kmem_cache_destroy(s);
	s = kmem_cache_create("bad_align_ok", 64, 4096, SLAB_NO_MERGE, NULL);
	KT_ASSERT(s && cache_ok(s));
	kmem_cache_destroy(s);
	KT_ASSERT_EQ(kmem_report_count(), reports);
	KT_ASSERT(kmalloc_ok());
}

/*
 * A cache that can never merge has a sysfs directory of its name, so the
 * name must be free: the kernel's sysfs_slab_add() fails with -EEXIST and
 * so does the create.  (Before, both caches existed and sysfs showed only
 * the first.)  A mergeable one may share a name, as in the kernel.
 */
KTEST(create_with_a_taken_name)
{
	SKIP_ON_SLOB("no kmalloc-N caches, so their names are free");
	struct kmem_cache *a = kmem_cache_create("dup_name", 100, 0, SLAB_NO_MERGE, NULL), *b = NULL;
	KT_ASSERT(a);
	BAD(b = kmem_cache_create("dup_name", 200, 0, SLAB_NO_MERGE, NULL), "kmem_cache_create(dup_name) failed with error -17");
	KT_ASSERT(!b);
	/* Also when only the new one cannot merge, and for a kmalloc cache's name. */
	BAD(b = kmem_cache_create("kmalloc-64", 64, 0, SLAB_NO_MERGE, NULL), "kmem_cache_create(kmalloc-64) failed with error -17");
	KT_ASSERT(!b);
	char buf[32];
	/* /sys/kernel/slab is SLUB's; elsewhere the cache's own size says which one it is. */
	if (slab_test_is_slub()) {
		KT_ASSERT(kmem_read("/sys/kernel/slab/dup_name/object_size", buf, sizeof(buf)) > 0);
		KT_EXPECT(atoi(buf) == 100);
	} else {
		KT_EXPECT(a->object_size == 100);
	}
	kmem_cache_destroy(a);
	/* Free again once the first is gone. */
	unsigned long reports = kmem_report_count();
	b = kmem_cache_create("dup_name", 200, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(b && cache_ok(b));
	if (slab_test_is_slub()) {
		KT_ASSERT(kmem_read("/sys/kernel/slab/dup_name/object_size", buf, sizeof(buf)) > 0);
		KT_EXPECT(atoi(buf) == 200);
	} else {
		KT_EXPECT(b->object_size == 200);
	}
	kmem_cache_destroy(b);
	/*
	 * A mergeable cache's directory is its unique id (":0000072"): a cache
	 * that cannot merge may not take that name, nor may a new mergeable
	 * cache whose unique id is a taken name.  (Before, both were created
	 * and sysfs showed only one of them.)
	 */
	/* SLUB's sysfs names (unique ids): the names they take exist on SLUB only. */
	if (slab_test_is_slub()) {
		a = kmem_cache_create("dup_id_mergeable", 72, 0, 0, NULL);
		KT_ASSERT(a);
		KT_ASSERT(kmem_read("/sys/kernel/slab/:0000072/slab_size", buf, sizeof(buf)) > 0);
		BAD(b = kmem_cache_create(":0000072", 72, 0, SLAB_NO_MERGE, NULL), "kmem_cache_create(:0000072) failed with error -17");
		KT_ASSERT(!b);
		kmem_cache_destroy(a);
		b = kmem_cache_create(":0000072", 40, 0, SLAB_NO_MERGE, NULL);
		KT_ASSERT(b);
		BAD(a = kmem_cache_create("dup_id_mergeable", 72, 0, 0, NULL), "kmem_cache_create(dup_id_mergeable) failed with error -17");
		KT_ASSERT(!a);
		KT_ASSERT(kmem_read("/sys/kernel/slab/:0000072/object_size", buf, sizeof(buf)) > 0);
		KT_EXPECT(atoi(buf) == 40);
		kmem_cache_destroy(b);
	}
	reports = kmem_report_count();
	/* Mergeable: two of a name merge into one cache, no report. */
	a = kmem_cache_create("dup_merge", 72, 0, 0, NULL);
	b = kmem_cache_create("dup_merge", 72, 0, 0, NULL);
	KT_ASSERT(a && b);
	kmem_cache_destroy(b);
	kmem_cache_destroy(a);
	KT_EXPECT(kmem_report_count() == reports);
}

/*
 * A write after free over the free pointer of an object on a debug cache's
 * freelist: the kernel's consistency checks catch the bad pointer before
 * handing it out, give up on the slab ("Marking all objects used") and
 * allocate from another; validate cuts the chain where it breaks and sets
 * the count right.  Either way: a report, and no crash or bad object.
 */
static struct kmem_cache *uaf_cache(const char *name, void **x, void **y)
{
	struct kmem_cache *s = kmem_cache_create(name, 100, 0, SLAB_NO_MERGE | SLAB_CONSISTENCY_CHECKS,
						 NULL);
	if (!s)
		return NULL;
	*x = kmem_cache_alloc(s, GFP);
	*y = kmem_cache_alloc(s, GFP);
	kmem_cache_free(s, *x);
	kmem_cache_free(s, *y);
	memset(*y, 0x41, 100);		/* after free: over y's free pointer, the freelist head's */
	return s;
}

KTEST(write_after_free_over_a_debug_freelist)
{
	SKIP_ON_SLOB("no freelist pointers in free objects: the heap's own encoding");
	/* SLUB's free pointer in the object; SLAB keeps none (test_slab_arrays: its debug checks) */
	if (!slab_test_is_slub())
		return;
	void *x, *y, *p, *q;
	char path[64];

	struct kmem_cache *s = uaf_cache("uaf_alloc", &x, &y);
	KT_ASSERT(s);
	unsigned long reports = kmem_report_count();
	p = kmem_cache_alloc(s, GFP);		/* y, the head: its link is what was overwritten */
	KT_EXPECT(p == y);
	KT_EXPECT(kmem_report_count() == reports);
	BAD(q = kmem_cache_alloc(s, GFP), "Freelist Pointer check fails");
	KT_ASSERT(q);
	KT_EXPECT(virt_to_slab(q) != virt_to_slab(y));	/* from another slab */
	memset(q, 0, 100);
	kmem_cache_free(s, q);
	kmem_cache_free(s, p);
	KT_ASSERT(cache_ok(s));

	struct kmem_cache *v = uaf_cache("uaf_validate", &x, &y);
	KT_ASSERT(v);
	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/validate", "uaf_validate");
	reports = kmem_report_count();
	KT_ASSERT_EQ(kmem_write(path, "1"), 0);
	KT_EXPECT(kmem_report_count() == reports + 2);	/* the chain, then the count */
	/* Fixed: validate finds nothing more, allocation goes on. */
	reports = kmem_report_count();
	KT_ASSERT_EQ(kmem_write(path, "1"), 0);
	KT_EXPECT(kmem_report_count() == reports);
	p = kmem_cache_alloc(v, GFP);
	q = kmem_cache_alloc(v, GFP);
	KT_ASSERT(p && q && p != q);
	KT_EXPECT(p == y);
	memset(q, 0, 100);
	KT_EXPECT(kmem_report_count() == reports);
	kmem_cache_free(v, q);
	kmem_cache_free(v, p);
	KT_ASSERT(cache_ok(v));

	/*
	 * A freelist made into a cycle (every link still a valid object):
	 * validate finds more free objects than the slab has, gives the slab
	 * up, and leaves its state sane (it once stored objects - nfree, which
	 * went negative, over the whole state word).
	 */
	struct kmem_cache *c = kmem_cache_create("uaf_cycle", 100, 0,
						 SLAB_NO_MERGE | SLAB_CONSISTENCY_CHECKS, NULL);
	KT_ASSERT(c);
	void *keep = kmem_cache_alloc(c, GFP);	/* the slab stays in use */
	void *a = kmem_cache_alloc(c, GFP), *b = kmem_cache_alloc(c, GFP);
	KT_ASSERT(keep && a && b);
	struct slab *slab = virt_to_slab(a);
	kmem_cache_free(c, a);
	kmem_cache_free(c, b);			/* freelist: b -> a -> ... */
	set_freepointer(c, a, b);		/* after free: a -> b, a cycle */
	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/validate", "uaf_cycle");
	reports = kmem_report_count();
	KT_ASSERT_EQ(kmem_write(path, "1"), 0);
	KT_EXPECT(kmem_report_count() == reports + 1);
	uint64_t st = slab_state(slab);
	KT_EXPECT(!ss_frozen(st));
	KT_EXPECT(ss_inuse(st) == ss_objects(st));
	KT_EXPECT(ss_objects(st) == oo_objects(slub_of(c)->oo));
	/* Given up: validate finds nothing more, allocation goes elsewhere. */
	reports = kmem_report_count();
	KT_ASSERT_EQ(kmem_write(path, "1"), 0);
	KT_EXPECT(kmem_report_count() == reports);
	void *x2 = kmem_cache_alloc(c, GFP);
	KT_ASSERT(x2);
	KT_EXPECT(virt_to_slab(x2) != slab);
	kmem_cache_free(c, x2);
	kmem_cache_free(c, keep);
	/* The cache keeps the given-up slab (as the kernel): no destroy here. */
}

static void panic_create(void *arg)
{
	const char *name = arg;

	kmem_cache_create(name, strcmp(name, "panic_size0") ? 64 : 0, 0, SLAB_PANIC, NULL);
	fprintf(stderr, "kmem_cache_create(%s, SLAB_PANIC) returned\n", name);
}

/* ---- SLAB_RED_ZONE and SLAB_POISON (kernel init_object(), check_object()) ---- */

static int all_bytes(const unsigned char *p, int c, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (p[i] != c)
			return 0;
	return 1;
}

/* The bytes read as the kernel's: red zones 0xcc / 0xbb, a free object 0x6b ... 0xa5. */
KTEST(poison_and_red_zones_hold_the_kernels_bytes)
{
	SKIP_ON_SLOB("a red zone after the object only, and poison not checked on reuse (test_slob_api@debug)");
	/* SLUB's red-zone bytes; SLAB's red zones are words (test_slab_arrays) */
	if (!slab_test_is_slub())
		return;
	struct kmem_cache *s = kmem_cache_create("pz_bytes", 100, 0, SLAB_POISON | SLAB_RED_ZONE, NULL);
	KT_ASSERT(s);
	unsigned int left = s->red_left_pad, right = s->inuse - s->object_size;
	KT_ASSERT(left >= 8 && right >= 4);
	unsigned long reports = kmem_report_count();
	unsigned char *x = kmem_cache_alloc(s, GFP);
	KT_ASSERT(x);
	KT_EXPECT(all_bytes(x - left, 0xcc, left) && all_bytes(x + 100, 0xcc, right));
	KT_EXPECT(kmem_cache_size(s) == 100);
	memset(x, 0x11, 100);			/* all of it is the caller's */
	kmem_cache_free(s, x);
	KT_EXPECT(all_bytes(x - left, 0xbb, left) && all_bytes(x + 100, 0xbb, right));
	KT_EXPECT(all_bytes(x, 0x6b, 99) && x[99] == 0xa5);
	/* A free object handed out again, and a bulk of them, without a report. */
	void *v[40];
	KT_ASSERT(kmem_cache_alloc_bulk(s, GFP, 40, v) == 40);
	for (int i = 0; i < 40; i++) {
		KT_EXPECT(all_bytes((unsigned char *)v[i] + 100, 0xcc, right));
		memset(v[i], i, 100);
	}
	kmem_cache_free_bulk(s, 40, v);
	KT_EXPECT(kmem_report_count() == reports);
	KT_ASSERT_EQ(kmem_write("/sys/kernel/slab/pz_bytes/validate", "1"), 0);
	KT_EXPECT(kmem_report_count() == reports);
	kmem_cache_destroy(s);
	KT_EXPECT(kmem_report_count() == reports);

	/* A ctor's objects keep their constructed bytes: red zones only (kernel __OBJECT_POISON). */
	struct kmem_cache *c = kmem_cache_create("pz_ctor", sizeof(struct ctor_like), 0,
						 SLAB_POISON | SLAB_RED_ZONE, ctor_like_init);
	KT_ASSERT(c);
	struct ctor_like *o = kmem_cache_alloc(c, GFP);
	KT_ASSERT(o && o->magic == 0x1234);
	kmem_cache_free(c, o);
	KT_EXPECT(o->magic == 0x1234);
	KT_EXPECT(all_bytes((unsigned char *)o + sizeof(*o), 0xbb, c->inuse - c->object_size));
	KT_EXPECT(kmem_report_count() == reports);
	kmem_cache_destroy(c);
}

/*
 * A write after free is found when the object is next handed out (or by
 * validate), an overrun or underrun when the object is freed: a report
 * naming the cache, the bad bytes and a dump of the slot, the bytes
 * restored.  As the kernel: the slab of a poisoned object is given up, an
 * overrun object is not freed.
 */
KTEST(poison_and_red_zones_catch_writes_out_of_bounds_and_after_free)
{
	SKIP_ON_SLOB("poison is not checked on reuse and the red zone only follows the object (test_slob_api@debug)");
	/* SLUB's reports; SLAB's are Redzone overwritten and Slab corruption (test_slab_arrays) */
	if (!slab_test_is_slub())
		return;
	struct kmem_cache *s = kmem_cache_create("pz_bad", 100, 0, SLAB_POISON | SLAB_RED_ZONE, NULL);
	KT_ASSERT(s);
	unsigned char *x = kmem_cache_alloc(s, GFP), *keep = kmem_cache_alloc(s, GFP);
	KT_ASSERT(x && keep);
	struct slab *slab = virt_to_slab(x);
	kmem_cache_free(s, x);
	x[10] = 0x41;				/* after free */
	unsigned long reports = kmem_report_count();
	struct kt_capture cap;
	kt_capture_begin(&cap);
	void *got[64];
	int n = 0;
	while (n < 64 && (got[n] = kmem_cache_alloc(s, GFP)) != NULL && got[n] != x)
		n++;
	char *out = kt_capture_end(&cap);
	KT_EXPECT(n == 64 || got[n] != x);	/* x is never handed out */
	KT_EXPECT(kmem_report_count() == reports + 1);
	KT_EXPECT(strstr(out, "BUG pz_bad (Not tainted): Poison overwritten"));
	KT_EXPECT(strstr(out, "First byte 0x41 instead of 0x6b"));
	KT_EXPECT(strstr(out, "Object   0x") && strstr(out, "Redzone  0x"));
	KT_EXPECT(strstr(out, "FIX pz_bad: Restoring Poison"));
	KT_EXPECT(strstr(out, "FIX pz_bad: Marking all objects used"));
	free(out);
	KT_EXPECT(x[10] == 0x6b);		/* restored */
	for (int i = 0; i < n; i++)
		KT_EXPECT(virt_to_slab(got[i]) != slab);
	for (int i = 0; i < n; i++)
		kmem_cache_free(s, got[i]);

	/* One byte past the end, one before the start: found at the free, not freed. */
	unsigned char *y = kmem_cache_alloc(s, GFP);
	KT_ASSERT(y);
	y[100] = 0x42;
	BAD(kmem_cache_free(s, y), "BUG pz_bad (Not tainted): Right Redzone overwritten");
	KT_EXPECT(y[100] == 0xcc);
	unsigned char *z = kmem_cache_alloc(s, GFP);
	KT_ASSERT(z && z != y);			/* y was not freed */
	z[-1] = 0x43;
	BAD(kmem_cache_free(s, z), "Left Redzone overwritten");
	/* Now y and z are intact: they free without a report. */
	reports = kmem_report_count();
	kmem_cache_free(s, y);
	kmem_cache_free(s, z);
	KT_EXPECT(kmem_report_count() == reports);

	/* validate checks free and allocated objects alike, and restores. */
	unsigned char *w = kmem_cache_alloc(s, GFP), *u = kmem_cache_alloc(s, GFP);
	KT_ASSERT(w && u);
	kmem_cache_free(s, w);
	w[50] = 0;				/* after free */
	u[101] = 0;				/* overrun of a live object */
	reports = kmem_report_count();
	kt_capture_begin(&cap);
	KT_ASSERT_EQ(kmem_write("/sys/kernel/slab/pz_bad/validate", "1"), 0);
	out = kt_capture_end(&cap);
	KT_EXPECT(kmem_report_count() == reports + 2);
	KT_EXPECT(strstr(out, "Poison overwritten") && strstr(out, "Right Redzone overwritten"));
	free(out);
	reports = kmem_report_count();
	KT_ASSERT_EQ(kmem_write("/sys/kernel/slab/pz_bad/validate", "1"), 0);
	kmem_cache_free(s, u);
	KT_EXPECT(kmem_report_count() == reports);
	kmem_cache_free(s, keep);
	/* The given-up slab stays (as the kernel): no destroy. */
}

/* SLAB_STORE_USER: who allocated and who freed an object, in its reports. */
static void *track_obj;

static __attribute__((noinline)) void track_alloc_here(struct kmem_cache *s)
{
	track_obj = kmem_cache_alloc(s, GFP);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void track_free_here(struct kmem_cache *s)
{
	kmem_cache_free(s, track_obj);
	__asm__ volatile("" ::: "memory");
}

/* The address printed after @what ("Allocated in 0x...") lies in the function at @fn. */
static int track_points_into(const char *out, const char *what, void (*fn)(struct kmem_cache *))
{
	const char *at = strstr(out, what);
	unsigned long addr = 0;

	if (!at || sscanf(at + strlen(what), "%lx", &addr) != 1)
		return 0;
	return addr > (unsigned long)fn && addr < (unsigned long)fn + 256;
}

KTEST(store_user_names_the_allocator_and_the_freer)
{
	SKIP_ON_SLOB("no per-object metadata for alloc/free tracks (slab_debug=U keeps nothing)");
	/* SLUB's tracks; SLAB keeps one last-user word (test_slab_arrays) */
	if (!slab_test_is_slub())
		return;
	struct kmem_cache *s = kmem_cache_create("pz_track", 64, 0, SLAB_POISON | SLAB_STORE_USER, NULL);
	KT_ASSERT(s);
	track_alloc_here(s);
	KT_ASSERT(track_obj);
	unsigned char *x = track_obj;
	track_free_here(s);
	x[3] = 9;				/* after free */
	struct kt_capture cap;
	kt_capture_begin(&cap);
	void *got[64];
	int n = 0;
	while (n < 64 && (got[n] = kmem_cache_alloc(s, GFP)) != NULL)
		n++;
	char *out = kt_capture_end(&cap);
	KT_EXPECT(strstr(out, "Poison overwritten"));
	KT_EXPECT(track_points_into(out, "INFO: Allocated in ", track_alloc_here));
	KT_EXPECT(track_points_into(out, "INFO: Freed in ", track_free_here));
	KT_EXPECT(strstr(out, " age=") && strstr(out, " pid="));
	free(out);
	for (int i = 0; i < n; i++)
		kmem_cache_free(s, got[i]);

	/* A destroy names each object left, and who allocated it. */
	struct kmem_cache *l = kmem_cache_create("pz_track_leak", 64, 0, SLAB_STORE_USER, NULL);
	KT_ASSERT(l);
	track_alloc_here(l);
	kt_capture_begin(&cap);
	kmem_cache_destroy(l);
	out = kt_capture_end(&cap);
	char line[64];
	snprintf(line, sizeof(line), "Object %p @offset=", track_obj);
	KT_EXPECT(strstr(out, line));
	KT_EXPECT(track_points_into(out, "INFO: Allocated in ", track_alloc_here));
	free(out);
}

KTEST(slab_panic_aborts_on_bad_create)
{
	static const char *const names[] = { "panic/slash", "panic_size0" };

	for (int i = 0; i < 2; i++) {
		int status;
		char *out = kt_fork_captured(panic_create, (void *)names[i], &status);
		if (!KT_CHILD_ABORTED(status) || !strstr(out, "Kernel panic - not syncing")) {
			KT_FAIL("%s: status %#x, stderr:\n%s", names[i], status, out);
			free(out);
			return;
		}
		free(out);
	}
	/* A good create with SLAB_PANIC just works. */
	struct kmem_cache *s = kmem_cache_create("panic_ok", 64, 0, SLAB_PANIC | SLAB_NO_MERGE, NULL);
	KT_ASSERT(s && cache_ok(s));
	kmem_cache_destroy(s);
}

KTEST(bad_entries_in_bulk_free)
{
	SKIP_ON_SLOB("an object names no cache: a bulk free to the wrong cache cannot be told");
	struct kmem_cache *a = new_cache("bad_bulk_a", 128), *b = new_cache("bad_bulk_b", 128);
	KT_ASSERT(a && b);
	void *p[8];
	for (int i = 0; i < 8; i++) {
		p[i] = kmem_cache_alloc(a, GFP);
		KT_ASSERT(p[i]);
	}
	void *y = kmem_cache_alloc(b, GFP);
	KT_ASSERT(y);
	slab_fill(y, 128, 6);

	/* An object of another cache in the array: reported, left alone; the rest freed. */
	void *arr[9];
	memcpy(arr, p, sizeof(p));
	arr[8] = arr[4];
	arr[4] = y;
	BAD(kmem_cache_free_bulk(a, 9, arr), "Wrong slab cache. bad_bulk_a but object is from bad_bulk_b");
	KT_ASSERT_EQ(slab_check(y, 128, 6), 0);

	if (slab_test_is_slub()) {
		/*
		 * The same object twice in a row in one bulk free: caught (the
		 * cheap check compares with the head of the chain being built;
		 * a duplicate further apart, like { x, z, x }, needs debug checks).
		 */
		void *x = kmem_cache_alloc(a, GFP), *z = kmem_cache_alloc(a, GFP);
		KT_ASSERT(x && z);
		void *dup[3] = { z, x, x };
		BAD(kmem_cache_free_bulk(a, 3, dup), "Object already free");
		/* A pointer inside an object. */
		x = kmem_cache_alloc(a, GFP);
		KT_ASSERT(x);
		void *inside[2] = { (char *)x + 8, NULL };
		BAD(kmem_cache_free_bulk(a, 2, inside), "Invalid object pointer");
		kmem_cache_free(a, x);
		/* One among many, met as a neighbour on the slab path (without sheaves too). */
		static void *many[200];
		KT_ASSERT_EQ(kmem_cache_alloc_bulk(a, GFP, 200, many), 200);
		x = many[100];
		many[100] = (char *)x + 8;
		BAD(kmem_cache_free_bulk(a, 200, many), "Invalid object pointer");
		kmem_cache_free(a, x);
	}
	/* kfree_bulk() with a foreign pointer among good ones. */
	char local[8];
	void *mixed[3] = { kmalloc(50, GFP), local, kmem_cache_alloc(b, GFP) };
	KT_ASSERT(mixed[0] && mixed[2]);
	BAD(kfree_bulk(3, mixed), "address not managed by kmem");

	kmem_cache_free(b, y);
	KT_ASSERT(cache_ok(a) && cache_ok(b) && kmalloc_ok());
	unsigned long reports = kmem_report_count();
	kmem_cache_destroy(a);
	kmem_cache_destroy(b);
	KT_ASSERT_EQ(kmem_report_count(), reports);	/* every good object went back */
}

/*
 * A bulk free that names as many objects of a slab as it has in use, one of
 * them already free: the count matches with a live object left out.  The
 * slab must not be given back whole (SLUB's whole-slab release) with that
 * object in it; the already-free one is reported.  A cache with checks has
 * no sheaves, so the bulk free reaches the slabs directly.
 */
KTEST(bulk_free_naming_a_free_object_keeps_the_live_one)
{
	struct kmem_cache *s = checked_cache("bulk_dfree");
	if (!slab_test_is_slub())
		return;
	KT_ASSERT(s);
	unsigned int per = oo_objects(slub_of(s)->oo), n = 7 * per;
	void **p = calloc(n, sizeof(void *)), **q = calloc(per, sizeof(void *));
	KT_ASSERT(p && q);
	KT_ASSERT_EQ(kmem_cache_alloc_bulk(s, GFP, n, p), (int)n);	/* whole slabs, in order */
	/* One free in slabs 1..5: enough node partial slabs that an empty one is not kept. */
	for (unsigned int k = 1; k <= 5; k++)
		kmem_cache_free(s, p[k * per]);
	void *a = p[0], *b = p[5];
	KT_ASSERT(virt_to_slab(a) == virt_to_slab(b));
	kmem_cache_free(s, a);
	slab_fill(b, 64, 0xb0b);
	unsigned int m = 0;
	for (unsigned int i = 1; i < per; i++)
		if (i != 5)
			q[m++] = p[i];
	q[m++] = a;				/* a again; b, live, left out */
	BAD(kmem_cache_free_bulk(s, m, q), "Object already free");
	/* b's slab is still a slab of s, and b is intact and can be freed. */
	struct slab *slab = virt_to_slab(b);
	KT_ASSERT(slab && slab->slab_cache == s);
	KT_ASSERT_EQ(slab_check(b, 64, 0xb0b), 0);
	unsigned long reports = kmem_report_count();
	kmem_cache_free(s, b);
	KT_ASSERT_EQ(kmem_report_count(), reports);
	KT_ASSERT_EQ(slub_validate(s), 0);
	for (unsigned int i = per; i < n; i++)
		if (i % per || i / per > 5)
			kmem_cache_free(s, p[i]);
	KT_ASSERT(cache_ok(s));
	kmem_cache_destroy(s);
	KT_ASSERT_EQ(kmem_report_count(), reports);	/* every object went back */
	free(p);
	free(q);
}

KTEST_MAIN(if (slab_test_boot("mem=64M")) return 1;)
