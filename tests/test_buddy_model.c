// SPDX-License-Identifier: MIT
/*
 * Randomized model test of the buddy allocator.  A small machine (mem=64M)
 * is filled to exhaustion and drained again, over and over, with random
 * orders (0..MAX_PAGE_ORDER, weighted toward small), migratetypes, GFP
 * flags (__GFP_COMP, __GFP_ZERO, GFP_ATOMIC) and free calls.  The test keeps
 * its own model -- which block owns which page -- and checks after every
 * call that:
 *
 *  - a block is aligned to its order, inside memory, and overlaps no live
 *    block (per-pfn owner map); its struct pages say what was asked for
 *    (refcount, compound head/tails, no free-list flags);
 *  - its contents (a pattern derived from the block's id) survive until it
 *    is freed; __GFP_ZERO blocks read as zero;
 *  - a NULL return is legitimate: the watermark for this request really
 *    fails on the recounted state (and this thread's pcp pages were given
 *    back first); a success from the buddy lists leaves free memory at or
 *    above the request's watermark;
 *  - periodically, mm_check() recounts the free lists (nr_free, nr_free_mt,
 *    NR_FREE_PAGES, pageblock types, flags) and pages are conserved:
 *    free + pcp + live == managed;
 *  - at the end, with everything freed and drained, /proc/buddyinfo shows
 *    only MAX_PAGE_ORDER blocks and vmstat's counters match the model.
 *
 * Four runs (two seeds, page_alloc.tail_placement on and off), each in a
 * forked child because kmem boots once per process.  KMEM_MODEL_OPS
 * overrides the number of operations per run.
 */
#include <stdint.h>
#include <stdlib.h>

#include <kmem.h>

#include "page_alloc/mm.h"
#include "page_alloc/pcp.h"

#include "lib/kt_util.h"
#include "ktest.h"
#include "lib/mm_check.h"

#define MODEL_CMDLINE	"mem=64M nr_cpus=2"
#define DEFAULT_OPS	300000UL	/* per run; 4 runs */
#define CHECK_EVERY	25000UL
#define MAX_LIVE	20000

struct block {
	struct page *page;
	unsigned long idx;	/* page index in mem_map */
	unsigned int order;
	gfp_t gfp;
	uint64_t id;
};

struct model {
	uint64_t rng;
	struct block live[MAX_LIVE];
	int nr_live;
	unsigned long live_pages;
	uint32_t *owner;	/* per page: 1 + slot of the owning block's id, 0 free */
	unsigned long online;
	uint64_t next_id;
	/* statistics */
	unsigned long allocs, frees, fails, episodes, pages_allocated;
	unsigned long fails_small;	/* failed allocations of order <= 3 */
};

static uint64_t rnd(struct model *m)
{
	/* xorshift64* */
	m->rng ^= m->rng >> 12;
	m->rng ^= m->rng << 25;
	m->rng ^= m->rng >> 27;
	return m->rng * 2685821657736338717ULL;
}

static unsigned int rnd_below(struct model *m, unsigned int n)
{
	return (unsigned int)((rnd(m) >> 11) % n);
}

/* Orders 0..10 weighted toward small: 70% 0-3, 25% 4-7, 5% 8-10. */
static unsigned int random_order(struct model *m)
{
	unsigned int r = rnd_below(m, 1000);

	if (r < 700)
		return r % 4;
	if (r < 950)
		return 4 + r % 4;
	if (r < 980)
		return 8;
	if (r < 995)
		return 9;
	return 10;
}

static gfp_t random_gfp(struct model *m)
{
	static const gfp_t mts[] = { 0, __GFP_MOVABLE, __GFP_RECLAIMABLE };
	gfp_t gfp = (rnd_below(m, 10) == 0 ? GFP_ATOMIC : GFP_KERNEL) | __GFP_NOWARN;

	gfp |= mts[rnd_below(m, 3)];
	if (rnd_below(m, 10) < 3)
		gfp |= __GFP_COMP;
	if (rnd_below(m, 10) == 0)
		gfp |= __GFP_ZERO;
	return gfp;
}

static inline uint64_t pattern(uint64_t id, unsigned long page, unsigned long word)
{
	uint64_t x = id * 0x9E3779B97F4A7C15ULL ^ (page << 20) ^ word;

	x ^= x >> 29;
	return x * 0xBF58476D1CE4E5B9ULL;
}

/* Every 16th block is filled whole; the others get three words per page. */
static bool full_fill(const struct block *b)
{
	return b->order <= 4 && (b->id & 15) == 0;
}

static unsigned long mid_word(uint64_t id, unsigned long page)
{
	return 1 + (unsigned long)((id ^ page) % (PAGE_SIZE / 8 - 2));
}

static void fill(const struct block *b)
{
	uint64_t *w = page_address(b->page);
	unsigned long pages = 1UL << b->order, words = PAGE_SIZE / 8;

	for (unsigned long p = 0; p < pages; p++, w += words) {
		if (full_fill(b)) {
			for (unsigned long i = 0; i < words; i++)
				w[i] = pattern(b->id, p, i);
		} else {
			w[0] = pattern(b->id, p, 0);
			w[mid_word(b->id, p)] = pattern(b->id, p, 1);
			w[words - 1] = pattern(b->id, p, 2);
		}
	}
}

static bool verify(const struct block *b)
{
	const uint64_t *w = page_address(b->page);
	unsigned long pages = 1UL << b->order, words = PAGE_SIZE / 8;

	for (unsigned long p = 0; p < pages; p++, w += words) {
		if (full_fill(b)) {
			for (unsigned long i = 0; i < words; i++)
				if (w[i] != pattern(b->id, p, i))
					return false;
		} else if (w[0] != pattern(b->id, p, 0) ||
			   w[mid_word(b->id, p)] != pattern(b->id, p, 1) ||
			   w[words - 1] != pattern(b->id, p, 2)) {
			return false;
		}
	}
	return true;
}

static bool is_zero(const struct block *b)
{
	const uint64_t *w = page_address(b->page);
	unsigned long pages = 1UL << b->order, words = PAGE_SIZE / 8;

	for (unsigned long p = 0; p < pages; p++, w += words) {
		if (full_fill(b) || b->order <= 2) {
			for (unsigned long i = 0; i < words; i++)
				if (w[i])
					return false;
		} else if (w[0] || w[mid_word(b->id, p)] || w[words - 1]) {
			return false;
		}
	}
	return true;
}

/* The lowest watermark a request may take free memory down to. */
static long min_mark(gfp_t gfp)
{
	long min = (long)wmark_pages(&zone_normal, WMARK_MIN);

	if (gfp & __GFP_HIGH) {
		min -= min / 2;
		if (!(gfp & __GFP_DIRECT_RECLAIM))
			min -= min / 4;
	}
	return min;
}

/*
 * alloc returned NULL: recount and check the request really fails the
 * watermark (zone_watermark_ok at the min mark, with the reserves
 * __GFP_HIGH and non-blocking requests may use).
 */
static void check_failure_legit(struct model *m, unsigned int order, gfp_t gfp)
{
	struct zone *z = &zone_normal;

	(void)m;
	KT_EXPECT(!this_pcp || pcp_read_count(this_pcp) == 0);

	kmem_lock(&z->lock);
	long free = global_zone_page_state(NR_FREE_PAGES) - ((1L << order) - 1);
	long min = min_mark(gfp);
	bool block = false;
	for (unsigned int o = order; o < NR_PAGE_ORDERS; o++)
		for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++)
			block |= z->free_area[o].nr_free_mt[mt] != 0;
	kmem_unlock(&z->lock);

	if (free > min && block)
		KT_FAIL("order-%u alloc (gfp %#x) failed with %ld free pages over the "
			"min mark %ld and a free block of order >= %u", order, gfp, free, min, order);
}

static void model_alloc(struct model *m)
{
	unsigned int order = random_order(m);
	gfp_t gfp = random_gfp(m);

	if (m->nr_live == MAX_LIVE)
		return;
	struct page *page = alloc_pages(gfp, order);
	if (!page) {
		m->fails++;
		m->fails_small += order <= PAGE_ALLOC_COSTLY_ORDER;
		check_failure_legit(m, order, gfp);
		return;
	}
	m->allocs++;
	m->pages_allocated += 1UL << order;
	/* Above the pcp orders every page comes straight from the buddy lists,
	 * past the watermark check: free memory stays at or above the mark. */
	if (order > PAGE_ALLOC_COSTLY_ORDER &&
	    global_zone_page_state(NR_FREE_PAGES) < min_mark(gfp))
		KT_FAIL("order-%u alloc (gfp %#x) took free memory to %ld, below its mark %ld",
			order, gfp, global_zone_page_state(NR_FREE_PAGES), min_mark(gfp));

	struct block *b = &m->live[m->nr_live];
	b->page = page;
	b->order = order;
	b->gfp = gfp;
	b->id = ++m->next_id;
	b->idx = page_to_pfn(page) - mm_model.base_pfn;
	unsigned long nr = 1UL << order;

	if (b->idx & (nr - 1))
		KT_FAIL("order-%u block at index %lu is not aligned", order, b->idx);
	if (b->idx + nr > m->online) {
		KT_FAIL("order-%u block at index %lu is outside memory", order, b->idx);
		return;
	}
	if (virt_to_page(page_address(page)) != page)
		KT_FAIL("virt_to_page(page_address(page)) != page");
	if (page_ref_count(page) != 1)
		KT_FAIL("new block has refcount %d", page_ref_count(page));
	if ((gfp & __GFP_COMP) && order) {
		if (!PageHead(page))
			KT_FAIL("__GFP_COMP order-%u block has no PG_head", order);
		for (unsigned long i = 1; i < nr; i++)
			if (compound_head(page + i) != page) {
				KT_FAIL("tail %lu of a compound block does not point to its head", i);
				break;
			}
	} else {
		if (page_flags(page))
			KT_FAIL("new order-%u block has flags %#lx", order, page_flags(page));
		if (order && PageTail(page + 1))
			KT_FAIL("non-compound block has a tail page");
	}

	for (unsigned long i = 0; i < nr; i++) {
		if (m->owner[b->idx + i]) {
			KT_FAIL("order-%u block at index %lu overlaps live block (page %lu)",
				order, b->idx, b->idx + i);
			break;
		}
		m->owner[b->idx + i] = (uint32_t)b->id;
	}
	if ((gfp & __GFP_ZERO) && !is_zero(b))
		KT_FAIL("__GFP_ZERO order-%u block at index %lu is not zero", order, b->idx);
	fill(b);
	m->nr_live++;
	m->live_pages += nr;
}

static void model_free(struct model *m, int slot)
{
	struct block *b = &m->live[slot];
	unsigned long nr = 1UL << b->order;

	if (!verify(b))
		KT_FAIL("order-%u block %lu at index %lu was corrupted while allocated",
			b->order, (unsigned long)b->id, b->idx);
	for (unsigned long i = 0; i < nr; i++) {
		if (m->owner[b->idx + i] != (uint32_t)b->id) {
			KT_FAIL("owner map broken at page %lu", b->idx + i);
			break;
		}
		m->owner[b->idx + i] = 0;
	}
	if (rnd(m) & 1)
		__free_pages(b->page, b->order);
	else
		free_pages((unsigned long)page_address(b->page), b->order);
	if (page_ref_count(b->page) != 0)
		KT_FAIL("freed block has refcount %d", page_ref_count(b->page));
	m->frees++;
	m->live_pages -= nr;
	*b = m->live[--m->nr_live];
}

static void check_state(struct model *m, const char *when)
{
	struct mm_check_result r;

	if (mm_check(&r)) {
		KT_FAIL("mm_check found %d problems %s", r.errors, when);
		return;
	}
	if (r.free_pages + r.pcp_pages + m->live_pages != r.managed)
		KT_FAIL("pages not conserved %s: free %lu + pcp %lu + live %lu != managed %lu",
			when, r.free_pages, r.pcp_pages, m->live_pages, r.managed);
}

struct run_cfg {
	uint64_t seed;
	bool tail;
};

static void model_run(void *arg)
{
	const struct run_cfg *cfg = arg;
	char cmdline[128];
	unsigned long ops = DEFAULT_OPS;
	const char *env = getenv("KMEM_MODEL_OPS");

	if (env && *env)
		ops = strtoul(env, NULL, 0);
	snprintf(cmdline, sizeof(cmdline), "%s page_alloc.tail_placement=%d",
		 MODEL_CMDLINE, cfg->tail);
	KT_ASSERT_EQ(kmem_init(cmdline), 0);
	KT_ASSERT_EQ(tail_placement, cfg->tail);

	struct model *m = calloc(1, sizeof(*m));
	KT_ASSERT(m);
	m->rng = cfg->seed;
	m->online = mm_online_pages();
	m->owner = calloc(m->online, sizeof(*m->owner));
	KT_ASSERT(m->owner);
	check_state(m, "after boot");

	bool growing = true;
	for (unsigned long op = 1; op <= ops && !ktest_failed_now; op++) {
		/* Grow until memory is exhausted, then shrink to a quarter. */
		unsigned int p_alloc = growing ? 65 : 35;
		if (m->nr_live == 0 || rnd_below(m, 100) < p_alloc) {
			unsigned long fails_small = m->fails_small;
			model_alloc(m);
			/* High orders fail early from fragmentation; an episode
			 * ends when even small requests fail: memory is exhausted. */
			if (growing && m->fails_small != fails_small) {
				growing = false;
				m->episodes++;
			}
		} else {
			model_free(m, (int)rnd_below(m, (unsigned int)m->nr_live));
		}
		if (!growing && m->live_pages < m->online / 4)
			growing = true;
		if (op % CHECK_EVERY == 0)
			check_state(m, "during the run");
	}

	check_state(m, "at the end of the run");
	while (m->nr_live)
		model_free(m, m->nr_live - 1);
	drain_local_pages();
	check_state(m, "after freeing everything");

	char want[256];
	char *got = kt_read("/proc/buddyinfo", NULL);
	mm_expected_buddyinfo_all_free(zone_managed_pages(&zone_normal), want, sizeof(want));
	KT_ASSERT(got);
	KT_ASSERT_STREQ(got, want);
	free(got);

	/* vmstat agrees with the model: every page allocated was freed. */
	KT_ASSERT_EQ(kt_vmstat("pgalloc_fail"), m->fails);
	KT_ASSERT_EQ(kt_vmstat("pgalloc_normal"), m->pages_allocated);
	KT_ASSERT_EQ(kt_vmstat("pgfree"), m->pages_allocated);
	KT_ASSERT_EQ(kt_vmstat("nr_free_pages"), zone_managed_pages(&zone_normal));

	fprintf(stderr, "  seed %#llx tail_placement=%d: %lu ops, %lu allocs, %lu frees, "
		"%lu failed allocs (%lu of order <= 3), %lu exhaustion episodes\n",
		(unsigned long long)cfg->seed, cfg->tail, ops, m->allocs, m->frees,
		m->fails, m->fails_small, m->episodes);
	/* The run must have reached exhaustion repeatedly to mean anything. */
	if (ops >= DEFAULT_OPS) {
		KT_EXPECT(m->episodes >= 10);
		KT_EXPECT(m->fails_small >= 10);
	}
	free(m->owner);
	free(m);
}

static struct run_cfg cfgs[] = {
	{ 0x5eed0001ULL, true },
	{ 0x5eed0001ULL, false },
	{ 0x9e3779b97f4a7c15ULL, true },
	{ 0x9e3779b97f4a7c15ULL, false },
};

KTEST(model_seed1_tail_on) { KT_ASSERT_CHILD_OK(kt_fork(model_run, &cfgs[0])); }
KTEST(model_seed1_tail_off) { KT_ASSERT_CHILD_OK(kt_fork(model_run, &cfgs[1])); }
KTEST(model_seed2_tail_on) { KT_ASSERT_CHILD_OK(kt_fork(model_run, &cfgs[2])); }
KTEST(model_seed2_tail_off) { KT_ASSERT_CHILD_OK(kt_fork(model_run, &cfgs[3])); }

KTEST_MAIN((void)0)
