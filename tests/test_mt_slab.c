// SPDX-License-Identifier: MIT
/*
 * Multi-threaded slab stress (also run under ThreadSanitizer).
 *
 *  (a) producer/consumer pairs hand kmalloc-256 and kmalloc-2048 objects
 *      through a bounded queue, as netperf TCP_RR does with skbs (SLUB slab_thrash_ratio):
 *      every object is allocated by one thread and freed by another; the
 *      consumer checks sequence and contents.  1, 2, 3 and 4 pairs.
 *  (b) four threads allocate from several caches and kmalloc (singly and in
 *      bulk) and swap objects through a shared slot table, so frees land in
 *      other threads' slabs at random; frees are single, per-cache bulk and
 *      kfree_bulk.  Contents are checked at every free.
 *  (c) owner threads allocate from a cache and exit; other threads free
 *      those objects afterwards (and while new owners come and go): the
 *      owners' per-thread slabs must have been flushed at exit.
 *  (g) one thread bulk-frees the last objects of a partial slab (which
 *      gives it back whole) while another refills from the same cache and
 *      writes over what it gets.
 *  (h) sysfs sums other threads' cpu slabs and partial lists while they
 *      move and free those slabs: the sums stay sane (and TSan-clean).
 *  (d) when every thread has exited and the main thread's state is flushed
 *      (kmem_cache_shrink of each cache), every slab goes back: destroying
 *      the SLAB_NO_MERGE caches reports nothing, and with the kmalloc caches
 *      shrunk, nr_slab_* and NR_FREE_PAGES are what they were at the start.
 *
 * Statistics: for a fresh SLAB_NO_MERGE cache used by several threads,
 * alloc_cpu_sheaf + alloc_fastpath + alloc_slowpath == allocations and
 * free_cpu_sheaf + free_fastpath + free_slowpath == frees (SLUB counts each
 * object once, bulk included; sheaf refills and flushes count separately;
 * read with slub_stat_sum(), and from /sys/kernel/slab/<cache>/<stat>
 * when that file exists).  Objects through sheaves are counted only with
 * CONFIG_SLUB_STATS (make test's sanitizer stages); without it the sums
 * with sheaves are bounds.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "core/printk.h"
#include "slab/slab.h"
#include "slab/slub/slub.h"

#include "ktest.h"
#include "lib/kt_util.h"
#include "lib/slab_test.h"

/* Work per case: small under the sanitizers (TSan: ~10 s), -DSCALE=n overrides. */
#ifndef SCALE
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SCALE 1
#else
#define SCALE 8
#endif
#endif

#define GFP GFP_KERNEL

static unsigned long reports0;
static long slab0, free0;

/*
 * (d) With every other thread exited (their per-thread slabs and pcp pages
 * were flushed at exit) and this thread's flushed by shrinking the kmalloc
 * caches, the slab and free page counts are back to where they started.
 */
static void all_back(const char *when)
{
	slab_quiesce();
	if (slab_pages_now() != slab0 || slab_free_pages_now() != free0)
		KT_FAIL("%s: slab pages %ld -> %ld, free pages %ld -> %ld", when, slab0,
			slab_pages_now(), free0, slab_free_pages_now());
	KT_EXPECT(kmem_report_count() == reports0);
}

/* Objects describe themselves: a header, then a pattern from its seed. */
struct hdr {
	uint32_t kind;		/* cache index, or KIND_KMALLOC */
	uint32_t size;
	uint64_t seed;
};
#define KIND_KMALLOC 15

static void obj_init(void *p, uint32_t kind, uint32_t size, uint64_t seed)
{
	struct hdr *h = p;

	h->kind = kind;
	h->size = size;
	h->seed = seed;
	slab_fill((char *)p + sizeof(*h), size - sizeof(*h), seed);
}

static int obj_ok(const void *p)
{
	const struct hdr *h = p;

	return h->size >= sizeof(*h) && h->size <= 8192 &&
	       !slab_check((const char *)p + sizeof(*h), h->size - sizeof(*h), h->seed);
}

static void start_threads(pthread_t *t, int n, void *(*fn)(void *), void *args, size_t argsize)
{
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, (char *)args + i * argsize))
			abort();
}

static void join_threads(pthread_t *t, int n)
{
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* ---- (a) producer / consumer ------------------------------------------ */

#define QCAP 64
struct queue {
	pthread_mutex_t lock;
	pthread_cond_t nonempty, nonfull;
	void *item[QCAP];
	unsigned int head, count;
};

struct pair {
	struct queue q;
	int id;
	unsigned long items;
	atomic_int bad;
};

static void *producer(void *arg)
{
	struct pair *pr = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(pr->id + 1);

	for (unsigned long i = 0; i < pr->items; i++) {
		/* kmalloc-256 and kmalloc-2048, as in the thrashing report. */
		uint32_t size = (i & 1) ? 1025 + slab_rnd_below(&rng, 1024) : 129 + slab_rnd_below(&rng, 128);
		void *p = kmalloc(size, GFP);
		if (!p) {
			atomic_store(&pr->bad, 1);
			break;
		}
		obj_init(p, (uint32_t)i, size, ((uint64_t)pr->id << 40) | i);
		pthread_mutex_lock(&pr->q.lock);
		while (pr->q.count == QCAP)
			pthread_cond_wait(&pr->q.nonfull, &pr->q.lock);
		pr->q.item[(pr->q.head + pr->q.count++) % QCAP] = p;
		pthread_cond_signal(&pr->q.nonempty);
		pthread_mutex_unlock(&pr->q.lock);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct pair *pr = arg;

	for (unsigned long i = 0; i < pr->items; i++) {
		pthread_mutex_lock(&pr->q.lock);
		while (!pr->q.count)
			pthread_cond_wait(&pr->q.nonempty, &pr->q.lock);
		void *p = pr->q.item[pr->q.head];
		pr->q.head = (pr->q.head + 1) % QCAP;
		pr->q.count--;
		pthread_cond_signal(&pr->q.nonfull);
		pthread_mutex_unlock(&pr->q.lock);

		const struct hdr *h = p;
		if (h->kind != (uint32_t)i || h->seed != (((uint64_t)pr->id << 40) | i) || !obj_ok(p) ||
		    ksize(p) < h->size)
			atomic_store(&pr->bad, 1);
		kfree(p);
	}
	return NULL;
}

KTEST(a_producer_consumer_pairs)
{
	for (int npairs = 1; npairs <= 4; npairs++) {
		struct pair pairs[4];
		pthread_t prod[4], cons[4];
		memset(pairs, 0, sizeof(pairs));
		for (int i = 0; i < npairs; i++) {
			pthread_mutex_init(&pairs[i].q.lock, NULL);
			pthread_cond_init(&pairs[i].q.nonempty, NULL);
			pthread_cond_init(&pairs[i].q.nonfull, NULL);
			pairs[i].id = npairs * 10 + i;
			pairs[i].items = 5000UL * SCALE;
		}
		start_threads(cons, npairs, consumer, pairs, sizeof(pairs[0]));
		start_threads(prod, npairs, producer, pairs, sizeof(pairs[0]));
		join_threads(prod, npairs);
		join_threads(cons, npairs);
		for (int i = 0; i < npairs; i++) {
			KT_EXPECT(!atomic_load(&pairs[i].bad));
			pthread_mutex_destroy(&pairs[i].q.lock);
			pthread_cond_destroy(&pairs[i].q.nonempty);
			pthread_cond_destroy(&pairs[i].q.nonfull);
		}
		all_back("after the pairs");
	}
}

/* ---- (b) random cross-thread frees ------------------------------------- */

#define NSLOTS 2048
#define NKINDS 4
static const uint32_t kind_size[NKINDS] = { 64, 200, 512, 3000 };

struct xstate {
	struct kmem_cache *c[NKINDS];
	_Atomic(void *) slot[NSLOTS];
	atomic_ulong allocs, frees;	/* objects of c[0] only (statistics check) */
	atomic_int bad;
	unsigned long ops;
};

struct xthread {
	struct xstate *st;
	int id;
};

#define BATCH 16
struct batch {
	void *p[NKINDS + 1][BATCH];
	int n[NKINDS + 1];
};

static void flush_batch(struct xstate *st, struct batch *b, int k)
{
	if (!b->n[k])
		return;
	if (k == NKINDS)
		kfree_bulk((size_t)b->n[k], b->p[k]);
	else
		kmem_cache_free_bulk(st->c[k], (size_t)b->n[k], b->p[k]);
	if (k == 0)
		atomic_fetch_add(&st->frees, (unsigned long)b->n[k]);
	b->n[k] = 0;
}

/* Free an object some thread left in a slot. */
static void release(struct xstate *st, struct batch *b, void *p, uint64_t *rng)
{
	const struct hdr *h = p;
	int k = h->kind == KIND_KMALLOC ? NKINDS : (int)h->kind;

	if (k > NKINDS || !obj_ok(p)) {
		atomic_store(&st->bad, 1);
		return;
	}
	unsigned int how = slab_rnd_below(rng, 4);
	if (how == 0) {		/* into the batch: a bulk free later */
		b->p[k][b->n[k]++] = p;
		if (b->n[k] == BATCH)
			flush_batch(st, b, k);
		return;
	}
	/* SLOB's kfree needs the size header its cache objects lack (the kernel's too). */
	if (k == NKINDS || (how == 1 && slab_allocator != SLAB_ALLOCATOR_SLOB))
		kfree(p);
	else
		kmem_cache_free(st->c[k], p);
	if (k == 0)
		atomic_fetch_add(&st->frees, 1);
}

static void *xthread_fn(void *arg)
{
	struct xthread *xt = arg;
	struct xstate *st = xt->st;
	struct batch b;
	uint64_t rng = 0xabcdef12345ULL * (uint64_t)(xt->id + 1);
	void *fresh[BATCH];

	memset(&b, 0, sizeof(b));
	for (unsigned long op = 0; op < st->ops; op++) {
		int k = (int)slab_rnd_below(&rng, NKINDS + 1);
		size_t n = slab_rnd_below(&rng, 4) == 0 ? 1 + slab_rnd_below(&rng, BATCH) : 1;
		uint32_t size = k < NKINDS ? kind_size[k] : 16 + slab_rnd_below(&rng, 4081);

		if (k < NKINDS && n > 1) {
			if (kmem_cache_alloc_bulk(st->c[k], GFP, n, fresh) != (int)n) {
				atomic_store(&st->bad, 1);
				break;
			}
		} else {
			n = 1;
			fresh[0] = k < NKINDS ? kmem_cache_alloc(st->c[k], GFP) : kmalloc(size, GFP);
			if (!fresh[0]) {
				atomic_store(&st->bad, 1);
				break;
			}
		}
		if (k == 0)
			atomic_fetch_add(&st->allocs, n);
		for (size_t i = 0; i < n; i++) {
			obj_init(fresh[i], k < NKINDS ? (uint32_t)k : KIND_KMALLOC, size,
				 slab_rnd(&rng));
			void *old = atomic_exchange(&st->slot[slab_rnd_below(&rng, NSLOTS)], fresh[i]);
			if (old)
				release(st, &b, old, &rng);
		}
	}
	for (int k = 0; k <= NKINDS; k++)
		flush_batch(st, &b, k);
	return NULL;
}

static unsigned long stat_of(struct kmem_cache *s, enum stat_item si)
{
	return slub_stat_sum(s, si, NULL, 0, NULL);
}

static void check_stats(struct kmem_cache *s, unsigned long allocs, unsigned long frees)
{
	if (!slab_test_is_slub())
		return;
	static const enum stat_item items[] = { ALLOC_PCS, ALLOC_FASTPATH, ALLOC_SLOWPATH,
						FREE_PCS, FREE_FASTPATH, FREE_SLOWPATH };
	static const char *const names[] = { "alloc_cpu_sheaf", "alloc_fastpath", "alloc_slowpath",
					     "free_cpu_sheaf", "free_fastpath", "free_slowpath" };
	unsigned long v[6];

	for (int i = 0; i < 6; i++)
		v[i] = stat_of(s, items[i]);
	/*
	 * Objects through sheaves are counted only with CONFIG_SLUB_STATS;
	 * without it, with sheaves, the other paths can only be fewer.
	 */
	bool exact = SLUB_STATS_PER_OBJECT || !slub_of(s)->sheaf_capacity;
	if (exact ? v[0] + v[1] + v[2] != allocs || v[3] + v[4] + v[5] != frees
		  : v[0] + v[3] || v[1] + v[2] > allocs || v[4] + v[5] > frees)
		KT_FAIL("%s: alloc_cpu_sheaf %lu + alloc_fastpath %lu + alloc_slowpath %lu "
			"(want %lu allocations), free_cpu_sheaf %lu + free_fastpath %lu + "
			"free_slowpath %lu (want %lu frees)", kmem_cache_name(s),
			v[0], v[1], v[2], allocs, v[3], v[4], v[5], frees);
	for (int i = 0; i < 6; i++) {
		long r = slab_sysfs_long(s, names[i]);
		if (r >= 0 && (unsigned long)r != v[i])
			KT_FAIL("/sys/kernel/slab/%s/%s reads %ld, slub_stat_sum %lu",
				kmem_cache_name(s), names[i], r, v[i]);
	}
	/* Cross-thread traffic really happened: with sheaves whole sheaves moved
	 * through the barn or back to slabs; without, some frees took the slow path. */
	if (slub_of(s)->sheaf_capacity) {
		unsigned long bp = stat_of(s, BARN_PUT), fl = stat_of(s, SHEAF_FLUSH);
		unsigned long bg = stat_of(s, BARN_GET), rf = stat_of(s, SHEAF_REFILL);
		if (!((v[3] > 0 || !SLUB_STATS_PER_OBJECT) && bp + fl > 0 && bg + rf + v[1] + v[2] > 0))
			KT_FAIL("%s: sheaves unused? free_cpu_sheaf %lu barn_put %lu sheaf_flush %lu "
				"barn_get %lu sheaf_refill %lu", kmem_cache_name(s), v[3], bp, fl, bg, rf);
	}
	else
		KT_EXPECT(v[5] > 0 && v[1] > 0 && v[2] > 0);
}

KTEST(b_random_cross_thread_frees)
{
	enum { NT = 4 };
	static struct xstate st;
	struct xthread xt[NT];
	pthread_t t[NT];
	char name[32];

	memset(&st, 0, sizeof(st));
	for (int k = 0; k < NKINDS; k++) {
		snprintf(name, sizeof(name), "mt_x%d", k);
		st.c[k] = kmem_cache_create(name, kind_size[k], 0, SLAB_NO_MERGE, NULL);
		KT_ASSERT(st.c[k]);
	}
	st.ops = 20000UL * SCALE;
	for (int i = 0; i < NT; i++)
		xt[i] = (struct xthread){ &st, i };
	start_threads(t, NT, xthread_fn, xt, sizeof(xt[0]));
	join_threads(t, NT);
	KT_EXPECT(!atomic_load(&st.bad));

	/* The leftovers go back from the main thread. */
	struct batch b;
	uint64_t rng = 1;
	memset(&b, 0, sizeof(b));
	for (int i = 0; i < NSLOTS; i++) {
		void *p = atomic_exchange(&st.slot[i], NULL);
		if (p)
			release(&st, &b, p, &rng);
	}
	for (int k = 0; k <= NKINDS; k++)
		flush_batch(&st, &b, k);
	KT_EXPECT(!atomic_load(&st.bad));
	check_stats(st.c[0], atomic_load(&st.allocs), atomic_load(&st.frees));
	KT_EXPECT(atomic_load(&st.allocs) == atomic_load(&st.frees));

	/* (d) Everything is free and the other threads are gone: nothing remains. */
	for (int k = 0; k < NKINDS; k++) {
		kmem_cache_shrink(st.c[k]);
		kmem_cache_destroy(st.c[k]);
	}
	all_back("after cross-thread frees");
}

/* ---- (c) owners exit, others free ------------------------------------- */

struct exitstate {
	struct kmem_cache *s;
	void **objs;
	atomic_int *ready;		/* per object: 1 once allocated */
	unsigned int per_owner;
	atomic_uint next_free;		/* next object index a freer takes */
	unsigned int total;
	atomic_ulong allocs, frees;
	atomic_int bad;
};

struct owner_arg {
	struct exitstate *st;
	unsigned int first;
};

static void *owner_fn(void *arg)
{
	struct owner_arg *oa = arg;
	struct exitstate *st = oa->st;
	unsigned int n = st->per_owner, done = 0;

	while (done < n) {
		unsigned int want = n - done < 8 ? n - done : 8;
		void **dst = &st->objs[oa->first + done];
		if ((done / 8) % 2) {
			if (kmem_cache_alloc_bulk(st->s, GFP, want, dst) != (int)want) {
				atomic_store(&st->bad, 1);
				return NULL;
			}
		} else {
			for (unsigned int i = 0; i < want; i++)
				if (!(dst[i] = kmem_cache_alloc(st->s, GFP))) {
					atomic_store(&st->bad, 1);
					return NULL;
				}
		}
		for (unsigned int i = 0; i < want; i++) {
			obj_init(dst[i], 0, 200, oa->first + done + i);
			atomic_store_explicit(&st->ready[oa->first + done + i], 1, memory_order_release);
		}
		atomic_fetch_add(&st->allocs, want);
		done += want;
	}
	return NULL;	/* exit: the per-thread slabs are flushed now */
}

static void *freer_fn(void *arg)
{
	struct exitstate *st = arg;
	unsigned int i;

	while ((i = atomic_fetch_add(&st->next_free, 1)) < st->total) {
		while (!atomic_load_explicit(&st->ready[i], memory_order_acquire))
			sched_yield();
		void *p = st->objs[i];
		const struct hdr *h = p;
		if (h->seed != i || !obj_ok(p))
			atomic_store(&st->bad, 1);
		kmem_cache_free(st->s, p);
		atomic_fetch_add(&st->frees, 1);
	}
	return NULL;
}

KTEST(c_owners_exit_before_their_objects_are_freed)
{
	enum { OWNERS = 4, FREERS = 2, ROUNDS = 3 };
	struct exitstate st;
	struct owner_arg oa[OWNERS];
	pthread_t ot[OWNERS], ft[FREERS];

	memset(&st, 0, sizeof(st));
	st.s = kmem_cache_create("mt_exit", 200, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(st.s);
	st.per_owner = 1000 * SCALE;
	st.total = OWNERS * st.per_owner;
	st.objs = calloc(st.total, sizeof(void *));
	st.ready = calloc(st.total, sizeof(atomic_int));
	KT_ASSERT(st.objs && st.ready);

	for (int round = 0; round < ROUNDS; round++) {
		for (unsigned int i = 0; i < st.total; i++)
			atomic_store(&st.ready[i], 0);
		atomic_store(&st.next_free, 0);
		for (int i = 0; i < OWNERS; i++)
			oa[i] = (struct owner_arg){ &st, i * st.per_owner };
		if (round == 0) {
			/* Owners first, all gone before anything is freed. */
			start_threads(ot, OWNERS, owner_fn, oa, sizeof(oa[0]));
			join_threads(ot, OWNERS);
			if (slab_test_is_slub()) {
				struct slub_info info;
				slub_get_info(st.s, &info);
				/* Nobody alive has per-thread state for the cache. */
				KT_EXPECT(info.cpu_slabs == 0 && info.cpu_partial_slabs == 0);
				/*
				 * Their sheaves went to the barn whole: the objects they held
				 * but never handed out count as active there, as in a sheaf.
				 */
				KT_EXPECT(info.active_objs == st.total + barn_objects(st.s));
			}
			start_threads(ft, FREERS, freer_fn, &st, 0);
			join_threads(ft, FREERS);
		} else {
			/* Freers chase owners that exit as soon as they are done. */
			start_threads(ft, FREERS, freer_fn, &st, 0);
			start_threads(ot, OWNERS, owner_fn, oa, sizeof(oa[0]));
			join_threads(ot, OWNERS);
			join_threads(ft, FREERS);
		}
		KT_EXPECT(!atomic_load(&st.bad));
		KT_EXPECT(atomic_load(&st.allocs) == atomic_load(&st.frees));
	}
	check_stats(st.s, atomic_load(&st.allocs), atomic_load(&st.frees));
	if (slab_test_is_slub()) {
		struct slub_info info;
		slub_get_info(st.s, &info);
		/* Only the barn (shared, not per-thread) may still hold objects. */
		KT_EXPECT(info.cpu_slabs == 0 && info.active_objs == barn_objects(st.s));
		KT_EXPECT(slub_validate(st.s) == 0);
	}
	/* (d) Every thread that touched the cache has exited: destroy finds nothing. */
	kmem_cache_destroy(st.s);
	all_back("after the owners exited");
	free(st.objs);
	free(st.ready);
}

/* ---- destroy while the last user exits ---------------------------------- */

struct racer {
	struct kmem_cache *s;
	atomic_int done;
	atomic_int bad;
};

static void *racer_fn(void *arg)
{
	struct racer *r = arg;
	void *p[4];

	for (int i = 0; i < 4; i++)
		if (!(p[i] = kmem_cache_alloc(r->s, GFP)))
			atomic_store(&r->bad, 1);
	for (int i = 0; i < 4; i++)
		if (p[i])
			kmem_cache_free(r->s, p[i]);
	atomic_store(&r->done, 1);
	return NULL;	/* the thread's slot for r->s is retired on the way out */
}

/*
 * A thread done with a cache exits (retiring its per-thread slot) while the
 * main thread destroys the cache: exactly one of them may release it.  A
 * double release would hand the same struct kmem_cache to two later caches.
 */
KTEST(e_destroy_while_last_user_exits)
{
	enum { ITER = 150 * (SCALE > 1 ? 2 : 1) };
	struct racer r;

	for (int i = 0; i < ITER; i++) {
		pthread_t t;
		r.s = kmem_cache_create("mt_race", 64, 0, SLAB_NO_MERGE, NULL);
		KT_ASSERT(r.s);
		atomic_store(&r.done, 0);
		atomic_store(&r.bad, 0);
		if (pthread_create(&t, NULL, racer_fn, &r))
			abort();
		while (!atomic_load(&r.done))
			;
		kmem_cache_destroy(r.s);
		pthread_join(t, NULL);
		KT_ASSERT(!atomic_load(&r.bad));
		struct kmem_cache *a = kmem_cache_create("mt_race_a", 64, 0, SLAB_NO_MERGE, NULL);
		struct kmem_cache *b = kmem_cache_create("mt_race_b", 64, 0, SLAB_NO_MERGE, NULL);
		KT_ASSERT(a && b);
		if (a == b) {
			KT_FAIL("iteration %d: two new caches share one struct kmem_cache", i);
			return;
		}
		kmem_cache_destroy(a);
		kmem_cache_destroy(b);
	}
	KT_EXPECT(kmem_report_count() == reports0);
}

/* ---- destroy while other users of the cache are alive -------------------- */

struct holder {
	struct kmem_cache *s;
	int keep;			/* objects it keeps allocated */
	void *kept;			/* the first of them */
	pthread_barrier_t ready, go;
	atomic_int bad;
};

/* Allocate and free: the freed objects stay cached in this thread's slot. */
static void *holder_fn(void *arg)
{
	struct holder *h = arg;
	enum { N = 500 };
	static void *p[N];

	for (int i = 0; i < N; i++)
		if (!(p[i] = kmem_cache_alloc(h->s, GFP)))
			atomic_store(&h->bad, 1);
	for (int i = h->keep; i < N; i++)
		kmem_cache_free(h->s, p[i]);
	h->kept = h->keep ? p[0] : NULL;
	pthread_barrier_wait(&h->ready);
	/* The main thread destroys the cache while we wait here. */
	pthread_barrier_wait(&h->go);
	return NULL;	/* our slot for the cache was retired by the destroyer */
}

static void holder_start(struct holder *h, pthread_t *t, const char *name, int keep)
{
	memset(h, 0, sizeof(*h));
	h->keep = keep;
	h->s = kmem_cache_create(name, 128, 0, SLAB_NO_MERGE, NULL);
	if (!h->s || pthread_barrier_init(&h->ready, NULL, 2) || pthread_barrier_init(&h->go, NULL, 2) ||
	    pthread_create(t, NULL, holder_fn, h))
		abort();
	pthread_barrier_wait(&h->ready);
}

static void holder_finish(struct holder *h, pthread_t t)
{
	pthread_barrier_wait(&h->go);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&h->ready);
	pthread_barrier_destroy(&h->go);
}

static void *kfree_fn(void *arg)
{
	kfree(arg);
	return NULL;
}

/*
 * Live objects: the report comes from destroy at once, not when the
 * holder exits.  Freeing one of the leaked objects later, from a thread
 * that then exits, gives no second report (that thread gets no slot for the
 * destroyed cache, whose exit would release it again).
 */
static __attribute__((unused)) void destroy_with_live_holder_child(void *arg)
{
	struct holder h;
	pthread_t t;

	(void)arg;
	holder_start(&h, &t, "mt_hold_leak", 2);
	unsigned long r0 = kmem_report_count();
	kmem_cache_destroy(h.s);
	if (kmem_report_count() != r0 + 1)
		exit(10);
	holder_finish(&h, t);
	if (kmem_report_count() != r0 + 1 || atomic_load(&h.bad) || !h.kept)
		exit(11);
	/* SLOB's kfree cannot take a cache's object (no size header): this part is not done there. */
	if (slab_allocator == SLAB_ALLOCATOR_SLOB)
		exit(0);
	if (pthread_create(&t, NULL, kfree_fn, h.kept))
		exit(12);
	pthread_join(t, NULL);
	exit(kmem_report_count() == r0 + 1 ? 0 : 13);
}

/*
 * As the kernel flushes every CPU before it checks a cache being destroyed,
 * kmem_cache_destroy() retires the slots of threads that are still alive:
 * the objects they cached are free, nothing is reported, and every slab
 * goes back at once rather than when the last of those threads exits.
 */
KTEST(f_destroy_flushes_threads_that_are_still_alive)
{
	struct holder h;
	pthread_t t;

	holder_start(&h, &t, "mt_hold", 0);
	unsigned long r0 = kmem_report_count();
	kmem_cache_destroy(h.s);
	KT_EXPECT(kmem_report_count() == r0);
	/* Slab pages only: the holder's pcp lists keep free pages until it exits. */
	slab_quiesce();
	KT_ASSERT_EQ(slab_pages_now(), slab0);
	holder_finish(&h, t);
	KT_EXPECT(!atomic_load(&h.bad));
	all_back("after the holder exited");

#ifndef __SANITIZE_THREAD__
	/*
	 * Not under TSan: the fork child re-initialises kmem's locks, which TSan
	 * takes for a double lock once the child's thread uses them.
	 */
	int status;
	char *out = kt_fork_captured(destroy_with_live_holder_child, NULL, &status);
	if (!KT_CHILD_OK(status))
		fprintf(stderr, "child status %d, output:\n%s\n", status, out ? out : "(none)");
	KT_EXPECT(KT_CHILD_OK(status));
	KT_EXPECT(out && strstr(out, "Objects remaining in mt_hold_leak on __kmem_cache_shutdown()") &&
		  strstr(out, "INFO: 2 object(s) still allocated"));
	free(out);
#endif
}

/* ---- (g) a bulk free that gives a partial slab back whole ---------------- */

/*
 * Thread A leaves a few objects in use in a slab on the node partial list
 * and bulk-frees exactly those, which gives the slab back whole after its
 * freelist is checked for double frees.  Thread B allocates from the same
 * cache all the while and writes over what it gets: a refill may take that
 * very slab, so the check must not walk the freelist before it holds
 * list_lock (it followed B's bytes as free pointers and crashed).
 */
#define WR_KEEP	5

struct walk_race {
	struct kmem_cache *s;
	int objs;
	long rounds;
	atomic_bool stop, bad;
};

static void *walk_race_a(void *arg)
{
	struct walk_race *w = arg;
	void **p = malloc(sizeof(void *) * (size_t)w->objs);

	for (long r = 0; p && r < w->rounds; r++) {
		if (kmem_cache_alloc_bulk(w->s, GFP, (size_t)w->objs, p) != w->objs) {
			atomic_store(&w->bad, true);
			break;
		}
		for (int i = WR_KEEP; i < w->objs; i++)
			kmem_cache_free(w->s, p[i]);
		kmem_cache_free_bulk(w->s, WR_KEEP, p);
	}
	free(p);
	atomic_store(&w->stop, true);
	return NULL;
}

static void *walk_race_b(void *arg)
{
	struct walk_race *w = arg;
	enum { K = 700 };
	static void *q[K];

	while (!atomic_load(&w->stop)) {
		for (int i = 0; i < K; i++) {
			q[i] = kmem_cache_alloc(w->s, GFP);
			if (!q[i]) {
				atomic_store(&w->bad, true);
				return NULL;
			}
			memset(q[i], 0xa5, 16);
		}
		for (int i = 0; i < K; i++)
			kmem_cache_free(w->s, q[i]);
	}
	return NULL;
}

static void walk_race(const char *name, slab_flags_t flags, bool no_cpu_partial)
{
	struct walk_race w = { .rounds = 3000L * SCALE };
	char path[96], buf[32];
	pthread_t a, b;

	w.s = kmem_cache_create(name, 16, 0, SLAB_NO_MERGE | flags, NULL);
	KT_ASSERT(w.s);
	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/objs_per_slab", name);
	/* /sys/kernel/slab is SLUB's: elsewhere a bulk of a few slabs' worth of 16-byte objects. */
	if (slab_test_is_slub()) {
		KT_ASSERT(kmem_read(path, buf, sizeof(buf)) > 0);
		w.objs = atoi(buf);
	} else {
		w.objs = 500;
	}
	KT_ASSERT(w.objs > WR_KEEP);
	if (no_cpu_partial && slab_test_is_slub()) {
		/* Slabs that get free objects go to the node list at once. */
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/cpu_partial", name);
		KT_ASSERT(kmem_write(path, "0") >= 0);
	}
	unsigned long r0 = kmem_report_count();
	KT_ASSERT_EQ(pthread_create(&a, NULL, walk_race_a, &w), 0);
	KT_ASSERT_EQ(pthread_create(&b, NULL, walk_race_b, &w), 0);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	KT_EXPECT(!atomic_load(&w.bad));
	KT_EXPECT(kmem_report_count() == r0);
	kmem_cache_destroy(w.s);
	KT_EXPECT(kmem_report_count() == r0);
}

KTEST(g_bulk_free_of_a_partial_slab_while_others_refill)
{
	if (slab_allocator == SLAB_ALLOCATOR_SLOB) {
		fprintf(stderr, "  skipped on SLOB: no partial slabs of a cache's own to race on\n");
		return;
	}
	walk_race("mt_walk_debug", SLAB_RED_ZONE, false);	/* the debug paths take single objects */
	walk_race("mt_walk", 0, true);
}

/* ---- (h) sysfs reads of other threads' per-thread state ----------------- */

/*
 * cpu_slabs and slabs_cpu_partial sum every thread's cpu slab and partial
 * list while those threads move slabs to the node list and free them: the
 * reader must not follow their slabs (it read a freed slab's bytes as a
 * count: billions).  One thread allocates 4096 objects, another frees them
 * in a strided order and sometimes shrinks, the main thread reads.
 */
#define SR_N	4096
static struct kmem_cache *sr_cache;
static void *sr_objs[SR_N];
static atomic_int sr_stop, sr_phase;	/* 0: allocate, 1: free */

static void *sr_alloc(void *arg)
{
	(void)arg;
	while (!atomic_load(&sr_stop)) {
		while (atomic_load(&sr_phase) != 0 && !atomic_load(&sr_stop))
			sched_yield();
		if (atomic_load(&sr_stop))
			break;
		for (int i = 0; i < SR_N; i++)
			sr_objs[i] = kmem_cache_alloc(sr_cache, GFP);
		atomic_store(&sr_phase, 1);
	}
	return NULL;
}

static void *sr_free(void *arg)
{
	(void)arg;
	for (unsigned int r = 0; !atomic_load(&sr_stop); r++) {
		while (atomic_load(&sr_phase) != 1 && !atomic_load(&sr_stop))
			sched_yield();
		if (atomic_load(&sr_stop))
			break;
		for (int i = 0; i < SR_N; i++)
			kmem_cache_free(sr_cache, sr_objs[(i * 97u) % SR_N]);
		if (r % 4 == 0)
			kmem_cache_shrink(sr_cache);
		atomic_store(&sr_phase, 0);
	}
	return NULL;
}

KTEST(h_sysfs_reads_while_threads_move_slabs)
{
	if (slab_allocator == SLAB_ALLOCATOR_SLOB) {
		fprintf(stderr, "  skipped on SLOB: no per-thread slabs, no /sys/kernel/slab\n");
		return;
	}
	/* /sys/kernel/slab is SLUB's */
	if (!slab_test_is_slub())
		return;
	sr_cache = kmem_cache_create("mt_sysfs_read", 256, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(sr_cache);
	KT_ASSERT(kmem_write("/sys/kernel/slab/mt_sysfs_read/cpu_partial", "2") >= 0);
	pthread_t a, b;
	KT_ASSERT_EQ(pthread_create(&a, NULL, sr_alloc, NULL), 0);
	KT_ASSERT_EQ(pthread_create(&b, NULL, sr_free, NULL), 0);
	char buf[4096];
	long bad = 0;
	for (long i = 0; i < 4000L * SCALE && !bad; i++) {
		unsigned long v[2] = { 0, 0 };
		if (kmem_read("/sys/kernel/slab/mt_sysfs_read/cpu_slabs", buf, sizeof(buf)) > 0)
			v[0] = strtoul(buf, NULL, 10);
		if (kmem_read("/sys/kernel/slab/mt_sysfs_read/slabs_cpu_partial", buf, sizeof(buf)) > 0) {
			char *paren = strchr(buf, '(');
			v[1] = paren ? strtoul(paren + 1, NULL, 10) : 0;	/* objects(slabs) */
		}
		/* 4096 objects are 256 slabs; a few threads hold a few each. */
		if (v[0] > 1000 || v[1] > 1000) {
			KT_FAIL("cpu_slabs %lu, slabs_cpu_partial %lu slabs: %s", v[0], v[1], buf);
			bad++;
		}
	}
	atomic_store(&sr_stop, 1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	for (int i = 0; i < SR_N && atomic_load(&sr_phase) == 1; i++)
		kmem_cache_free(sr_cache, sr_objs[i]);
	kmem_cache_destroy(sr_cache);
}

/* ---- (d) all slabs go back --------------------------------------------- */

KTEST(d_everything_back_after_threads_exit)
{
	/* Every thread of (a)-(c) has exited (each case also checked this itself). */
	all_back("end");
}

KTEST_MAIN(
	if (slab_test_boot("mem=256M")) return 1;
	slab_quiesce();
	slab0 = slab_pages_now();
	free0 = slab_free_pages_now();
	reports0 = kmem_report_count();
)
