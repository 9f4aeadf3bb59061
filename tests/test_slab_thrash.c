// SPDX-License-Identifier: MIT
/*
 * SLUB slab_thrash_ratio (Rientjes 2009, an RFC never merged; the
 * details are this project's design, see slub.c thrash_account()):
 *
 *  - the ratio is stored as a watermark in objects, min_free_watermark =
 *    objs_per_slab * ratio / 100, and reads back as the ratio that watermark
 *    really is: 20 on a 64-object slab is 12 objects and reads 18 (18.75%);
 *  - a cpu slab taken from a partial list that serves fewer allocations than
 *    the watermark counts thrash_detected; after THRASH_ON of them in a row
 *    the thread's refills skip partial slabs with fewer free objects than the
 *    watermark (thrash_skip_partial) and take a fuller one or a new slab
 *    (alloc_slab);
 *  - with ratio 0 (the default) none of this happens.
 *
 * The thrashing pattern: a fresh 256-byte cache (16 objects per order-0
 * slab with nr_cpus=2) fills 48 slabs, then 1 or 2 objects of each of the
 * first 47 are freed, so the node partial list holds 47 slabs with 1-2 free
 * objects each; a thread then allocates and refills from them over and over.
 * Run with and without per-cpu partial slabs (cpu_partial 0 sends frees and
 * refills straight through the node list).  Each scenario runs in a new
 * thread, so its per-thread thrash state starts clean.
 *
 * Those scenarios follow every refill of the cpu slab, which only single
 * allocations show: they run without sheaves (the @nosheaves variant).
 * With sheaves (the default), a sheaf refill drains the poor slabs a few
 * objects at a time; the sheaf scenario checks the same outcome by the
 * counters alone.
 *
 * SLUB-only: with another back-end the test exits 77.
 */
#include <pthread.h>
#include <stdlib.h>

#include <kmem.h>

#include "core/printk.h"
#include "slab/slab.h"
#include "slab/slub/slub.h"

#include "ktest.h"
#include "lib/slab_test.h"

#define NSLABS	48
#define SIZE	256
#define ALLOCS	300

struct scenario {
	unsigned long ratio;
	bool cpu_partial;
	unsigned int free_per_slab;	/* 0: 1 or 2 alternately */
	/* results */
	unsigned int objs, watermark, refills, picky_refills, poor_refills_after_picky;
	unsigned int min_picky_avail, first_avail[8];
	unsigned long detected, skipped, new_slabs, from_partial;
	int error;
	char what[160];
};

static unsigned long stat_now(struct kmem_cache *s, enum stat_item si)
{
	return slub_stat_sum(s, si, NULL, 0, NULL);
}

/* Objects left on this thread's cpu freelist of @s. */
static unsigned int cpu_freelist_len(struct kmem_cache *s)
{
	unsigned int n = 0;

	for (void *p = slub_this->cpu[s->index].freelist; p && n < 100000; p = get_freepointer(s, p))
		n++;
	return n;
}

#define SCEN_FAIL(sc, ...) do { snprintf((sc)->what, sizeof((sc)->what), __VA_ARGS__); \
				(sc)->error = 1; goto out; } while (0)

static void *run_scenario(void *arg)
{
	struct scenario *sc = arg;
	static void *objs[NSLABS * 64 + ALLOCS];
	char name[48];

	snprintf(name, sizeof(name), "thrash-r%lu-cp%d-f%u", sc->ratio, sc->cpu_partial,
		 sc->free_per_slab);
	struct kmem_cache *s = kmem_cache_create(name, SIZE, 0, SLAB_NO_MERGE, NULL);
	if (!s)
		SCEN_FAIL(sc, "kmem_cache_create failed");
	unsigned int per = sc->objs = oo_objects(slub_of(s)->oo);
	if (per > 64)
		SCEN_FAIL(sc, "%u objects per slab", per);
	if (!sc->cpu_partial && slub_set_cpu_partial(s, 0))
		SCEN_FAIL(sc, "slub_set_cpu_partial(0) failed");
	slub_set_min_free_watermark(s, sc->ratio);
	sc->watermark = slub_of(s)->min_free_watermark;

	/* NSLABS full slabs, in allocation order. */
	unsigned int total = NSLABS * per;
	for (unsigned int i = 0; i < total; i++)
		if (!(objs[i] = kmem_cache_alloc(s, GFP_KERNEL)))
			SCEN_FAIL(sc, "allocation %u failed", i);
	for (unsigned int k = 0; k < NSLABS; k++)
		for (unsigned int i = 1; i < per; i++)
			if (virt_to_slab(objs[k * per + i]) != virt_to_slab(objs[k * per]))
				SCEN_FAIL(sc, "slab %u is not made of objects %u..%u", k, k * per,
					  k * per + per - 1);
	/* Free a few objects of each slab but the last (the cpu slab). */
	for (unsigned int k = 0; k + 1 < NSLABS; k++) {
		unsigned int nfree = sc->free_per_slab ? sc->free_per_slab : 1 + k % 2;
		for (unsigned int i = 0; i < nfree; i++) {
			kmem_cache_free(s, objs[k * per + i]);
			objs[k * per + i] = NULL;
		}
	}
	/* Our partial slabs and the full cpu slab go to the node. */
	slub_flush_this_thread(s);
	if (slub_of(s)->node.nr_partial != NSLABS - 1)
		SCEN_FAIL(sc, "node partial list holds %lu slabs, want %u", slub_of(s)->node.nr_partial,
			  NSLABS - 1);

	unsigned long det0 = stat_now(s, THRASH_DETECTED), skip0 = stat_now(s, THRASH_SKIP_PARTIAL);
	unsigned long slab0 = stat_now(s, ALLOC_SLAB);
	unsigned long part0 = stat_now(s, ALLOC_FROM_PARTIAL) + stat_now(s, CPU_PARTIAL_ALLOC);
	struct slab *cur = NULL;
	bool picky_seen = false;

	sc->min_picky_avail = ~0u;
	for (unsigned int i = 0; i < ALLOCS; i++) {
		unsigned long skip_before = stat_now(s, THRASH_SKIP_PARTIAL);
		void *p = objs[total + i] = kmem_cache_alloc(s, GFP_KERNEL);
		if (!p)
			SCEN_FAIL(sc, "allocation %u after the setup failed", i);
		struct slab *slab = virt_to_slab(p);
		if (slab == cur)
			continue;
		/* A refill: what the new cpu slab had free when it was picked. */
		unsigned int avail = 1 + cpu_freelist_len(s);
		cur = slab;
		if (sc->refills < 8)
			sc->first_avail[sc->refills] = avail;
		sc->refills++;
		if (stat_now(s, THRASH_SKIP_PARTIAL) != skip_before) {
			picky_seen = true;
			sc->picky_refills++;
			if (avail < sc->min_picky_avail)
				sc->min_picky_avail = avail;
		} else if (picky_seen && avail < sc->watermark) {
			sc->poor_refills_after_picky++;
		}
	}
	sc->detected = stat_now(s, THRASH_DETECTED) - det0;
	sc->skipped = stat_now(s, THRASH_SKIP_PARTIAL) - skip0;
	sc->new_slabs = stat_now(s, ALLOC_SLAB) - slab0;
	sc->from_partial = stat_now(s, ALLOC_FROM_PARTIAL) + stat_now(s, CPU_PARTIAL_ALLOC) - part0;
	/* The sysfs stat files (when present) show the same totals. */
	static const enum stat_item items[] = { THRASH_DETECTED, THRASH_SKIP_PARTIAL, ALLOC_SLAB };
	for (int i = 0; i < 3; i++) {
		long v = slab_sysfs_long(s, slub_stat_names[items[i]]);
		if (v >= 0 && (unsigned long)v != stat_now(s, items[i]))
			SCEN_FAIL(sc, "/sys/kernel/slab/%s/%s reads %ld, slub_stat_sum %lu", name,
				  slub_stat_names[items[i]], v, stat_now(s, items[i]));
	}

	for (unsigned int i = 0; i < total + ALLOCS; i++)
		if (objs[i])
			kmem_cache_free(s, objs[i]);
	if (slub_validate(s))
		SCEN_FAIL(sc, "slub_validate found errors");
	unsigned long reports = kmem_report_count();
	kmem_cache_destroy(s);
	s = NULL;
	if (kmem_report_count() != reports)
		SCEN_FAIL(sc, "kmem_cache_destroy reported leftovers");
out:
	return NULL;
}

/* Run @sc in a new thread and print what it saw; false (the case failed, naming the
 * scenario) if it went wrong. */
/* A new thread: its per-thread thrash state starts clean. */
static void in_new_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, arg))
		abort();
	pthread_join(t, NULL);
}

static bool run(struct scenario *sc)
{
	in_new_thread(run_scenario, sc);
	fprintf(stderr, "  ratio %lu cpu_partial %d: watermark %u, %u refills (first picked with "
		"%u %u %u %u %u free), thrash_detected %lu, thrash_skip_partial %lu, alloc_slab %lu, "
		"from partial %lu, picky refills %u (min %u free)\n", sc->ratio, sc->cpu_partial,
		sc->watermark, sc->refills, sc->first_avail[0], sc->first_avail[1],
		sc->first_avail[2], sc->first_avail[3], sc->first_avail[4], sc->detected,
		sc->skipped, sc->new_slabs, sc->from_partial, sc->picky_refills,
		sc->picky_refills ? sc->min_picky_avail : 0);
	if (sc->error)
		KT_FAIL("ratio %lu cpu_partial %d free_per_slab %u: %s", sc->ratio, sc->cpu_partial,
			sc->free_per_slab, sc->what);
	return !sc->error;
}

/* Do this boot's caches have sheaves?  The per-refill scenarios need them off. */
static bool sheaves_on(void)
{
	struct kmem_cache *s = kmem_cache_create("thrash_probe", SIZE, 0, SLAB_NO_MERGE, NULL);
	bool on = s && slub_of(s)->sheaf_capacity;

	kmem_cache_destroy(s);
	return on;
}

#define NEEDS_SHEAVES(want)							\
	do {									\
		if (sheaves_on() != (want)) {					\
			fprintf(stderr, "  (runs %s sheaves)\n", (want) ? "with" : "without"); \
			return;							\
		}								\
	} while (0)

KTEST(thrashing_is_detected_and_avoided)
{
	NEEDS_SHEAVES(false);
	for (int cp = 0; cp <= 1; cp++) {
		struct scenario sc = { .ratio = 20, .cpu_partial = cp };
		if (!run(&sc))
			return;
		KT_ASSERT_EQ(sc.objs, 16);
		KT_ASSERT_EQ(sc.watermark, 3);		/* 16 * 20 / 100 */
		/* The first refills take the poor partial slabs and notice. */
		KT_EXPECT(sc.first_avail[0] <= 2 && sc.first_avail[1] <= 2);
		KT_EXPECT(sc.detected >= 2);
		/* Then partial slabs below the watermark are skipped... */
		KT_EXPECT(sc.skipped > 0);
		KT_EXPECT(sc.picky_refills >= 1);
		/* ...and what is picked instead has at least the watermark free: a new slab here. */
		KT_EXPECT(sc.min_picky_avail >= sc.watermark);
		KT_EXPECT(sc.poor_refills_after_picky == 0);
		KT_EXPECT(sc.new_slabs >= (ALLOCS - 2 * 47) / 16);
		/* Far fewer refills than walking all 47 poor slabs would take. */
		KT_EXPECT(sc.from_partial < 47);
	}
}

KTEST(ratio_zero_never_thrashes)
{
	NEEDS_SHEAVES(false);
	for (int cp = 0; cp <= 1; cp++) {
		struct scenario sc = { .ratio = 0, .cpu_partial = cp };
		if (!run(&sc))
			return;
		KT_ASSERT_EQ(sc.watermark, 0);
		KT_EXPECT(sc.detected == 0 && sc.skipped == 0 && sc.picky_refills == 0);
		/* Every poor partial slab is used, 70 objects, before new slabs come. */
		KT_EXPECT(sc.from_partial == 47);
		KT_EXPECT(sc.first_avail[0] <= 2 && sc.first_avail[1] <= 2 && sc.first_avail[7] <= 2);
	}
}

KTEST(no_thrash_when_partial_slabs_are_fuller)
{
	NEEDS_SHEAVES(false);
	/* Partial slabs with 8 free objects each serve >= the watermark: no detection. */
	struct scenario sc = { .ratio = 20, .cpu_partial = 1, .free_per_slab = 8 };
	if (!run(&sc))
		return;
	KT_EXPECT(sc.detected == 0 && sc.skipped == 0);
	KT_EXPECT(sc.first_avail[0] == 8);
}

KTEST(effective_ratio_read_back)
{
	struct kmem_cache *s64 = kmem_cache_create("thrash_ratio64", 64, 0, SLAB_NO_MERGE, NULL);
	struct kmem_cache *s16 = kmem_cache_create("thrash_ratio16", 256, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(s64 && s16);
	KT_ASSERT_EQ(oo_objects(slub_of(s64)->oo), 64);
	KT_ASSERT_EQ(oo_objects(slub_of(s16)->oo), 16);

	KT_EXPECT(slub_thrash_ratio(s64) == 0);		/* off by default */
	slub_set_min_free_watermark(s64, 20);
	KT_EXPECT(slub_of(s64)->min_free_watermark == 12);	/* 64 * 20 / 100 */
	KT_EXPECT(slub_thrash_ratio(s64) == 18);	/* 12 / 64 = 18.75% */
	KT_ASSERT_EQ(slab_sysfs_long(s64, "slab_thrash_ratio"), 18);
	/* Through sysfs: the stored watermark and the read-back are the same. */
	char path[128];
	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/slab_thrash_ratio", kmem_cache_name(s16));
	KT_EXPECT(kmem_write(path, "20") == 0);
	KT_EXPECT(slub_of(s16)->min_free_watermark == 3 && slab_sysfs_long(s16, "slab_thrash_ratio") == 18);
	KT_EXPECT(kmem_write(path, "0") == 0 && slub_of(s16)->min_free_watermark == 0);
	slub_set_min_free_watermark(s16, 20);
	KT_EXPECT(slub_of(s16)->min_free_watermark == 3 && slub_thrash_ratio(s16) == 18);

	static const unsigned long ratios[] = { 0, 1, 2, 50, 99, 100 };
	static const unsigned long want64[] = { 0, 0, 1, 50, 98, 100 };
	for (int i = 0; i < 6; i++) {
		slub_set_min_free_watermark(s64, ratios[i]);
		KT_EXPECT(slub_thrash_ratio(s64) == want64[i]);
	}
	kmem_cache_destroy(s64);
	kmem_cache_destroy(s16);
}

/*
 * With sheaves: NSLABS poor partial slabs (1 or 2 free objects each) on the
 * node list, then ALLOCS allocations through the sheaf.  Counters only.
 */
struct sheaf_scenario {
	unsigned long ratio;
	unsigned int watermark, poor;
	unsigned long detected, skipped, new_slabs, from_partial, refilled;
	int error;
	char what[160];
};

static void *run_sheaf_scenario(void *arg)
{
	struct sheaf_scenario *sc = arg;
	static void *objs[(NSLABS + 4) * 64], *more[ALLOCS];
	static struct slab *slabs[NSLABS + 8];
	char name[48];

	snprintf(name, sizeof(name), "thrash-sheaf-r%lu", sc->ratio);
	struct kmem_cache *s = kmem_cache_create(name, SIZE, 0, SLAB_NO_MERGE, NULL);
	if (!s)
		SCEN_FAIL(sc, "kmem_cache_create failed");
	unsigned int per = oo_objects(slub_of(s)->oo), total = (NSLABS + 4) * per, nslabs = 0;
	slub_set_min_free_watermark(s, sc->ratio);
	sc->watermark = slub_of(s)->min_free_watermark;
	for (unsigned int i = 0; i < total; i++)
		if (!(objs[i] = kmem_cache_alloc(s, GFP_KERNEL)))
			SCEN_FAIL(sc, "allocation %u failed", i);
	/* Sheaf leftovers and the cpu slab back to the slabs: most are full now. */
	slub_flush_this_thread(s);
	for (unsigned int i = 0; i < total; i++) {
		struct slab *slab = virt_to_slab(objs[i]);
		uint64_t st = slab_state(slab);
		bool known = false;
		for (unsigned int k = 0; k < nslabs; k++)
			known |= slabs[k] == slab;
		if (!known && ss_inuse(st) == ss_objects(st) && nslabs < NSLABS - 1)
			slabs[nslabs++] = slab;
	}
	if (nslabs != NSLABS - 1)
		SCEN_FAIL(sc, "only %u full slabs out of %u objects", nslabs, total);
	/* 1 or 2 objects of each chosen slab, every object of the others. */
	unsigned int freed_in[NSLABS] = { 0 };
	for (unsigned int i = 0; i < total; i++) {
		struct slab *slab = virt_to_slab(objs[i]);
		unsigned int k = 0;
		while (k < nslabs && slabs[k] != slab)
			k++;
		if (k < nslabs && freed_in[k] >= 1 + k % 2)
			continue;
		if (k < nslabs)
			freed_in[k]++;
		kmem_cache_free(s, objs[i]);
		objs[i] = NULL;
	}
	slub_flush_this_thread(s);
	kmem_cache_shrink(s);
	sc->poor = (unsigned int)slub_of(s)->node.nr_partial;
	if (sc->poor != NSLABS - 1)
		SCEN_FAIL(sc, "node partial list holds %u slabs, want %u", sc->poor, NSLABS - 1);

	unsigned long det0 = stat_now(s, THRASH_DETECTED), skip0 = stat_now(s, THRASH_SKIP_PARTIAL);
	unsigned long slab0 = stat_now(s, ALLOC_SLAB), refill0 = stat_now(s, SHEAF_REFILL);
	unsigned long part0 = stat_now(s, ALLOC_FROM_PARTIAL) + stat_now(s, CPU_PARTIAL_ALLOC);
	for (unsigned int i = 0; i < ALLOCS; i++)
		if (!(more[i] = kmem_cache_alloc(s, GFP_KERNEL)))
			SCEN_FAIL(sc, "allocation %u after the setup failed", i);
	sc->detected = stat_now(s, THRASH_DETECTED) - det0;
	sc->skipped = stat_now(s, THRASH_SKIP_PARTIAL) - skip0;
	sc->new_slabs = stat_now(s, ALLOC_SLAB) - slab0;
	sc->refilled = stat_now(s, SHEAF_REFILL) - refill0;
	sc->from_partial = stat_now(s, ALLOC_FROM_PARTIAL) + stat_now(s, CPU_PARTIAL_ALLOC) - part0;
	for (unsigned int i = 0; i < ALLOCS; i++)
		kmem_cache_free(s, more[i]);
	for (unsigned int i = 0; i < total; i++)
		if (objs[i])
			kmem_cache_free(s, objs[i]);
	if (slub_validate(s))
		SCEN_FAIL(sc, "slub_validate found errors");
	kmem_cache_destroy(s);
out:
	return NULL;
}

static bool run_sheaf(struct sheaf_scenario *sc)
{
	in_new_thread(run_sheaf_scenario, sc);
	fprintf(stderr, "  sheaves, ratio %lu: watermark %u, %u poor partial slabs, sheaf_refill %lu, "
		"thrash_detected %lu, thrash_skip_partial %lu, alloc_slab %lu, from partial %lu\n",
		sc->ratio, sc->watermark, sc->poor, sc->refilled, sc->detected, sc->skipped,
		sc->new_slabs, sc->from_partial);
	if (sc->error)
		KT_FAIL("sheaves, ratio %lu: %s", sc->ratio, sc->what);
	return !sc->error;
}

KTEST(sheaf_refills_detect_and_avoid_thrashing)
{
	NEEDS_SHEAVES(true);
	struct sheaf_scenario sc = { .ratio = 20 };
	if (!run_sheaf(&sc))
		return;
	KT_ASSERT_EQ(sc.watermark, 3);
	/* Objects a refill took count as served: the refills went through the sheaf. */
	KT_EXPECT(sc.refilled >= ALLOCS / 2);
	KT_EXPECT(sc.detected >= 2);
	KT_EXPECT(sc.skipped > 0);
	KT_EXPECT(sc.from_partial < NSLABS - 1);
	KT_EXPECT(sc.new_slabs >= (ALLOCS - 2 * (NSLABS - 1)) / 16);
}

KTEST(sheaf_refills_with_ratio_zero_use_every_partial_slab)
{
	NEEDS_SHEAVES(true);
	struct sheaf_scenario sc = { .ratio = 0 };
	if (!run_sheaf(&sc))
		return;
	KT_EXPECT(sc.detected == 0 && sc.skipped == 0);
	KT_EXPECT(sc.from_partial == NSLABS - 1);
}

KTEST_MAIN(
	if (slab_test_boot("mem=64M nr_cpus=2")) return 1;
	if (!slab_test_is_slub()) {
		printf("slab_thrash_ratio is a SLUB policy; back-end %s: skipped\n", slab_test_backend());
		return 77;
	}
)
