// SPDX-License-Identifier: MIT
/*
 * SLOB's page heap, called directly (slab/slob/slob.h), whatever back-end
 * the process booted with:
 *
 *  - a randomized model test of one page: random sizes (one-unit blocks
 *    included), alignments and alignment offsets, random frees, and frees
 *    that must be refused (double frees, frees across a free block); the
 *    model keeps which units are live.  After every operation the page's
 *    free blocks are address-ordered, inside the page, non-overlapping,
 *    coalesced and add up to its free count (slob_page_validate()), that
 *    count matches the model, an allocation is the first fit in address
 *    order (and NULL only when no free run fits), and live blocks keep
 *    their contents;
 *  - the same model on a poisoned page (slob_page_alloc_poisoned(),
 *    slob_page_free_poisoned()): after every operation each free run's
 *    bytes past its encoding are poison (read here from the model's units,
 *    not the heap's walk), and no report comes; now and then a byte of a
 *    free block's body is written (a write after free), and exactly one
 *    "Poison overwritten" comes before the page is wholly free again, when
 *    the byte is handed out or its block merges with a block freed;
 *  - single writes after free into a poisoned page, each reported once
 *    where it should be: on reuse (the block handed out, or the bytes the
 *    free tail's new encoding takes) and when the written block merges
 *    with a neighbour freed above or below it;
 *  - the free lists: a request goes to the list of its size, a full page
 *    leaves its list and comes back on the list of the block freed, an
 *    empty page goes back to the page allocator, and next fit: after a
 *    search succeeds on a page that was not first, the next search starts
 *    there.
 *
 * KMEM_MODEL_OPS overrides the number of operations per model run.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "slab/slab.h"
#include "slab/slob/slob.h"

#include "ktest.h"
#include "lib/kt_util.h"
#include "lib/slab_test.h"

#define NR_UNITS	SLOB_PAGE_UNITS

struct live {
	char *p;
	size_t size;
	uint64_t seed;
};

struct model {
	struct slob_page *sp;
	char *base;
	bool poison;			/* the poisoned heap's calls */
	unsigned char *written;		/* a byte of a free body written, not reported yet */
	unsigned short owner[NR_UNITS];	/* 1 + index in live[], 0: free */
	struct live live[NR_UNITS];
	int nr_live;
	int free_units;
};

static int model_units(size_t size)
{
	return (int)SLOB_UNITS(size);
}

static void *model_alloc(struct model *m, size_t size, size_t align, size_t off, unsigned long *scans)
{
	return m->poison ? slob_page_alloc_poisoned(m->sp, size, align, off, scans)
			 : slob_page_alloc(m->sp, size, align, off, scans);
}

static int model_free(struct model *m, void *p, size_t size)
{
	return m->poison ? slob_page_free_poisoned(m->sp, p, size) : slob_page_free(m->sp, p, size);
}

/* A free run's first byte past its encoding (two units, one for a one-unit run). */
static int model_body(int start, int end)
{
	return 2 * start + (end - start > 1 ? 4 : 2);
}

/*
 * Every byte of every free run past its encoding is poison (the byte
 * written and not reported yet excepted): -1, or the first byte that is not.
 */
/* The next free run at or after unit *@u: [*@u, *@end); false past the page. */
static bool model_next_run(struct model *m, int *u, int *end)
{
	while (*u < NR_UNITS && m->owner[*u])
		(*u)++;
	for (*end = *u; *end < NR_UNITS && !m->owner[*end]; (*end)++)
		;
	return *u < NR_UNITS;
}

static long model_poison_bad(struct model *m)
{
	for (int u = 0, end; model_next_run(m, &u, &end); u = end)
		for (long i = model_body(u, end); i < 2L * end; i++)
			if ((unsigned char)m->base[i] != SLOB_POISON_FREE && (unsigned char *)m->base + i != m->written)
				return i;
	return -1;
}

/* Is byte @i of the page in a free run's body (past its encoding)? */
static bool model_in_body(struct model *m, long i)
{
	int u = (int)(i / 2), start = u, end = u;

	if (m->owner[u])
		return false;
	while (start > 0 && !m->owner[start - 1])
		start--;
	while (end < NR_UNITS && !m->owner[end])
		end++;
	return i >= model_body(start, end);
}

/* Write one byte of a random free run's body (past its encoding): a write after free. */
static void model_write_after_free(struct model *m, uint64_t *rng)
{
	int runs[NR_UNITS][2], n = 0;

	for (int u = 0, end; model_next_run(m, &u, &end); u = end)
		if (model_body(u, end) < 2 * end)
			runs[n][0] = u, runs[n++][1] = end;
	if (!n)
		return;
	int r = (int)slab_rnd_below(rng, (unsigned int)n), lo = model_body(runs[r][0], runs[r][1]);
	m->written = (unsigned char *)m->base + lo + slab_rnd_below(rng, (unsigned int)(2 * runs[r][1] - lo));
	*m->written = (unsigned char)(SLOB_POISON_FREE + 1 + slab_rnd_below(rng, 255));
}

/* The first free run where a block of @units fits at @align/@off, or -1. */
static long model_first_fit(struct model *m, int units, size_t align, size_t off)
{
	for (int u = 0, end; model_next_run(m, &u, &end); u = end) {
		uintptr_t a = (uintptr_t)(m->base + 2 * u);
		if (align > SLOB_UNIT)
			a = ((a + off + align - 1) & ~(uintptr_t)(align - 1)) - off;
		long start = (long)(a - (uintptr_t)m->base) / 2;
		if (start + units <= end)
			return start;
	}
	return -1;
}

static int model_check(struct model *m)
{
	if (m->poison) {
		long bad = model_poison_bad(m);

		if (bad >= 0) {
			KT_FAIL("byte %ld of the page is 0x%02x in a free run's body, not poison", bad,
				(unsigned char)m->base[bad]);
			return -1;
		}
		if (!m->written && slob_page_poison_faults(m->sp, true)) {
			KT_FAIL("slob_page_poison_faults found faults the model did not");
			return -1;
		}
	}
	if (slob_page_validate(m->sp, true)) {
		KT_FAIL("slob_page_validate found faults");
		return -1;
	}
	if (m->sp->units != m->free_units) {
		KT_FAIL("page counts %d free units, model %d", m->sp->units, m->free_units);
		return -1;
	}
	return 0;
}

/*
 * With @poison: the poisoned calls, and @writes writes after free (one at a
 * time, each to be reported once before the next).  *@reports: the
 * reports that came.
 */
static void model_run(uint64_t seed, unsigned long ops, bool poison, unsigned long writes,
		      unsigned long *reports)
{
	static struct model m;
	struct page *page = alloc_pages(GFP_KERNEL, 0);
	uint64_t rng = seed;
	unsigned long refused = 0, nulls = 0, ones = 0, written = 0, found = 0;
	unsigned long r0 = kmem_report_count();

	KT_ASSERT(page);
	memset(&m, 0, sizeof(m));
	slob_page_init(page);
	m.sp = page_slob(page);
	m.base = page_address(page);
	m.free_units = NR_UNITS;
	m.poison = poison;
	if (poison)
		slob_page_poison(m.sp);
	if (model_check(&m))
		return;

	for (unsigned long op = 0; op < ops; op++) {
		unsigned int r = slab_rnd_below(&rng, 100);

		/* A write after free, spread over the run, while some block is live. */
		if (poison && !m.written && m.nr_live && written < writes &&
		    slab_rnd_below(&rng, (unsigned int)(ops / writes)) == 0) {
			model_write_after_free(&m, &rng);
			written += m.written != NULL;
		}

		if (r < 55 || !m.nr_live) {
			static const size_t aligns[] = { 0, 0, 0, 8, 16, 64, 256, 1024 };
			size_t size, align = aligns[slab_rnd_below(&rng, 8)], off = 0;
			unsigned long scans = 0;

			switch (slab_rnd_below(&rng, 4)) {
			case 0:
				size = 1 + slab_rnd_below(&rng, 4);	/* one- and two-unit blocks */
				break;
			case 1:
				size = 1 + slab_rnd_below(&rng, 64);
				break;
			case 2:
				size = 1 + slab_rnd_below(&rng, 400);
				break;
			default:
				size = 1 + slab_rnd_below(&rng, 1500);
			}
			if (align && slab_rnd_below(&rng, 2))
				off = SLOB_MINALIGN;
			int units = model_units(size);
			long want = model_first_fit(&m, units, align, off);
			char *p = model_alloc(&m, size, align, off, &scans);

			if (!p) {
				nulls++;
				if (want >= 0) {
					KT_FAIL("op %lu: %zu bytes aligned %zu+%zu refused, unit %ld fits", op,
						size, align, off, want);
					return;
				}
			} else {
				long u = (p - m.base) / 2;

				if (want != u) {
					KT_FAIL("op %lu: %zu bytes at unit %ld, first fit is %ld", op, size, u, want);
					return;
				}
				if (align > SLOB_UNIT && ((uintptr_t)p + off) % align) {
					KT_FAIL("op %lu: %p + %zu not aligned to %zu", op, (void *)p, off, align);
					return;
				}
				int i = m.nr_live++;
				for (int k = 0; k < units; k++)
					m.owner[u + k] = (unsigned short)(i + 1);
				m.live[i] = (struct live){ p, size, slab_rnd(&rng) };
				m.free_units -= units;
				ones += units == 1;
				slab_fill(p, size, m.live[i].seed);
			}
		} else if (r < 95) {
			int i = (int)slab_rnd_below(&rng, (unsigned int)m.nr_live);
			struct live l = m.live[i];
			long u = (l.p - m.base) / 2;
			int units = model_units(l.size);

			if (slab_check(l.p, l.size, l.seed)) {
				KT_FAIL("op %lu: block at unit %ld lost its contents", op, u);
				return;
			}
			if (model_free(&m, l.p, l.size)) {
				KT_FAIL("op %lu: free of a live block at unit %ld refused", op, u);
				return;
			}
			for (int k = 0; k < units; k++)
				m.owner[u + k] = 0;
			m.free_units += units;
			m.live[i] = m.live[--m.nr_live];
			if (i < m.nr_live) {
				long v = (m.live[i].p - m.base) / 2;
				for (int k = 0; k < model_units(m.live[i].size); k++)
					m.owner[v + k] = (unsigned short)(i + 1);
			}
		} else {
			/* A free that must be refused: a block inside or across free space. */
			long u = slab_rnd_below(&rng, NR_UNITS);
			size_t size = 2 + 2 * slab_rnd_below(&rng, 32);
			int units = model_units(size), any_free = 0, all_in = u + units <= NR_UNITS;

			for (int k = 0; all_in && k < units; k++)
				any_free |= !m.owner[u + k];
			if (!all_in || !any_free)
				continue;
			int before = m.sp->units;
			int rc = model_free(&m, m.base + 2 * u, size);
			if ((rc != -EINVAL && rc != -EALREADY) || m.sp->units != before) {
				KT_FAIL("op %lu: free over free unit range %ld+%d returned %d", op, u, units, rc);
				return;
			}
			refused++;
		}
		/* A report only for the byte written, and it is poison again. */
		if (kmem_report_count() - r0 != found) {
			/* Restored, unless it stopped being poison in this operation (handed out, an encoding). */
			bool restored = m.written && (!model_in_body(&m, (char *)m.written - m.base) ||
						      *m.written == SLOB_POISON_FREE);

			if (!m.written || kmem_report_count() - r0 != found + 1 || !restored) {
				KT_FAIL("op %lu: %lu reports, %lu expected, a byte written: %s", op,
					kmem_report_count() - r0, found, m.written ? "yes" : "no");
				return;
			}
			found++;
			m.written = NULL;
		}
		if (model_check(&m))
			return;
	}
	/* Free everything: one free block of the whole page again. */
	while (m.nr_live) {
		struct live l = m.live[--m.nr_live];
		for (int k = 0; k < model_units(l.size); k++)
			m.owner[(l.p - m.base) / 2 + k] = 0;
		KT_ASSERT(model_free(&m, l.p, l.size) == 0);
		m.free_units += model_units(l.size);
		if (m.written && kmem_report_count() - r0 == found + 1 && *m.written == SLOB_POISON_FREE) {
			found++;
			m.written = NULL;
		}
		KT_ASSERT_EQ(kmem_report_count() - r0, found);
	}
	/* Every write after free was found: the last by the last merge at the latest. */
	KT_ASSERT(!m.written);
	KT_ASSERT_EQ(found, written);
	*reports = found;
	KT_ASSERT(model_check(&m) == 0);
	KT_ASSERT_EQ(m.sp->units, NR_UNITS);
	KT_ASSERT(m.sp->freelist == (slob_t *)m.base);
	if (poison)
		KT_ASSERT(slob_page_poison_faults(m.sp, true) == 0 && model_poison_bad(&m) < 0);
	fprintf(stderr, "  seed %llu%s: %lu ops, %lu refused frees, %lu NULLs, %lu one-unit blocks, "
		"%lu writes after free found\n", (unsigned long long)seed, poison ? " poisoned" : "", ops, refused,
		nulls, ones, found);
	KT_EXPECT(refused > 0 && nulls > 0 && ones > 0);
	page_clear_flag(page, PG_slab);
	__free_pages(page, 0);
}

static unsigned long model_ops(void)
{
	const char *e = getenv("KMEM_MODEL_OPS");

	return e ? strtoul(e, NULL, 0) : 200000;
}

KTEST(slob_page_model)
{
	unsigned long reports;

	model_run(1, model_ops(), false, 0, &reports);
	model_run(0x5eed5eedULL, model_ops(), false, 0, &reports);
}

/* One poisoned model run: no report but one for each write after free. */
static void poison_model_run(uint64_t seed, unsigned long ops, unsigned long writes)
{
	struct kt_capture cap;
	unsigned long reports = 0;

	kt_capture_begin(&cap);
	model_run(seed, ops, true, writes, &reports);
	char *out = kt_capture_end(&cap);
	const char *p = out;
	unsigned long said = 0;

	while ((p = strstr(p, "BUG SLOB (Not tainted): Poison overwritten")))
		said++, p++;
	if (ktest_failed_now || said != reports) {
		size_t len = strlen(out);
		KT_FAIL("seed %llu: %lu reports printed, %lu counted; the last of stderr:\n%s",
			(unsigned long long)seed, said, reports, out + (len > 4000 ? len - 4000 : 0));
	} else {
		fprintf(stderr, "  seed %llu poisoned: %lu ops, %lu writes after free, each reported once\n",
			(unsigned long long)seed, ops, said);
	}
	free(out);
}

KTEST(slob_poison_model)
{
	unsigned long ops = model_ops();

	/* No write: nothing reported, ever (no false positive). */
	poison_model_run(7, ops, 0);
	poison_model_run(0xfeedULL, ops, 0);
	/* Writes after free: each found once (about one in 1000 operations, while a block is live). */
	poison_model_run(11, ops, 200);
	poison_model_run(0xabcdefULL, ops, 200);
}

/* The page-level encoding: one-unit blocks are stored negated. */
KTEST(slob_one_unit_blocks)
{
	struct page *page = alloc_pages(GFP_KERNEL, 0);
	unsigned long scans = 0;

	KT_ASSERT(page);
	slob_page_init(page);
	struct slob_page *sp = page_slob(page);
	char *a = slob_page_alloc(sp, 2, 0, 0, &scans);
	char *b = slob_page_alloc(sp, 1, 0, 0, &scans);
	char *c = slob_page_alloc(sp, 10, 0, 0, &scans);
	KT_ASSERT(a && b == a + 2 && c == b + 2);
	KT_ASSERT(slob_page_free(sp, b, 1) == 0);
	/* b is a one-unit free block in front of the tail: its word is -(offset of the tail). */
	KT_ASSERT(sp->freelist == (slob_t *)b);
	KT_ASSERT_EQ(((slob_t *)b)->units, -(int)((c + 10 - a) / 2));
	KT_ASSERT(slob_page_free(sp, b, 1) == -EALREADY);	/* double free */
	KT_ASSERT(slob_page_free(sp, a, 4) == -EINVAL);		/* runs into the free block */
	KT_ASSERT(slob_page_free(sp, c - 1, 4) == -EINVAL);	/* not a unit boundary */
	KT_ASSERT(slob_page_validate(sp, true) == 0);
	KT_ASSERT(slob_page_free(sp, a, 2) == 0);
	KT_ASSERT(slob_page_free(sp, c, 10) == 0);
	KT_ASSERT_EQ(sp->units, SLOB_PAGE_UNITS);
	KT_ASSERT(slob_page_validate(sp, true) == 0);
	page_clear_flag(page, PG_slab);
	__free_pages(page, 0);
}

/* Single writes after free into a poisoned page: each reported once, where it should be. */
KTEST(slob_poison_reuse_and_merge)
{
	struct page *page = alloc_pages(GFP_KERNEL, 0);
	unsigned long scans = 0, r0;

	KT_ASSERT(page);
	slob_page_init(page);
	struct slob_page *sp = page_slob(page);
	slob_page_poison(sp);
	unsigned char *a = slob_page_alloc_poisoned(sp, 64, 0, 0, &scans);
	unsigned char *p = slob_page_alloc_poisoned(sp, 64, 0, 0, &scans);
	unsigned char *b = slob_page_alloc_poisoned(sp, 64, 0, 0, &scans);
	unsigned char *c = slob_page_alloc_poisoned(sp, 64, 0, 0, &scans);
	unsigned char *q;
	int rc;
	KT_ASSERT(a && p == a + 64 && b == p + 64 && c == b + 64);
	memset(a, 1, 256);
	r0 = kmem_report_count();

	/* Freed and handed out again: no report; poisoned past the encoding. */
	KT_ASSERT(slob_page_free_poisoned(sp, p, 64) == 0);
	KT_ASSERT(slab_check_byte(p + 4, 60, SLOB_POISON_FREE) == 0);
	KT_ASSERT(slob_page_alloc_poisoned(sp, 64, 0, 0, &scans) == p);
	KT_ASSERT_EQ(kmem_report_count(), r0);

	/* A write into the block, found when it is handed out again, and restored. */
	KT_ASSERT(slob_page_free_poisoned(sp, p, 64) == 0);
	p[20] = 0x41;
	KT_ASSERT_ONE_REPORT(q = slob_page_alloc_poisoned(sp, 64, 0, 0, &scans), "handed out again: written after free");
	KT_ASSERT(q == p && p[20] == SLOB_POISON_FREE);

	/* A write into what becomes the free tail's encoding when only half is handed out. */
	KT_ASSERT(slob_page_free_poisoned(sp, p, 64) == 0);
	p[33] = 0;
	KT_ASSERT_ONE_REPORT(q = slob_page_alloc_poisoned(sp, 32, 0, 0, &scans), "handed out again: written after free");
	KT_ASSERT(q == p);
	KT_ASSERT(slob_page_free_poisoned(sp, p, 32) == 0);
	KT_ASSERT(slob_page_poison_faults(sp, true) == 0);

	/* A write into a free block, found when the block below it is freed (it merges up). */
	p[40] = 0x42;
	KT_ASSERT_ONE_REPORT(rc = slob_page_free_poisoned(sp, a, 64),
			     "merged with a block freed next to it: written after free");
	KT_ASSERT(rc == 0);
	KT_ASSERT(slob_page_poison_faults(sp, true) == 0);

	/* ... and when the block above it is freed (it merges down). */
	a[100] = 0x43;
	KT_ASSERT_ONE_REPORT(rc = slob_page_free_poisoned(sp, b, 64),
			     "merged with a block freed next to it: written after free");
	KT_ASSERT(rc == 0);
	KT_ASSERT(slob_page_poison_faults(sp, true) == 0);

	/* Nothing else was said; the page goes back to one poisoned free block. */
	KT_ASSERT_EQ(kmem_report_count(), r0 + 4);
	KT_ASSERT(slob_page_free_poisoned(sp, c, 64) == 0);
	KT_ASSERT_EQ(sp->units, SLOB_PAGE_UNITS);
	KT_ASSERT(slob_page_validate(sp, true) == 0 && slob_page_poison_faults(sp, true) == 0);
	KT_ASSERT(slab_check_byte(a + 4, PAGE_SIZE - 4, SLOB_POISON_FREE) == 0);
	KT_ASSERT_EQ(kmem_report_count(), r0 + 4);
	page_clear_flag(page, PG_slab);
	__free_pages(page, 0);
}

static unsigned long list_pages(unsigned int list)
{
	struct slob_list_figures f;

	kmem_lock(&slob_lock);
	slob_list_figures(list, &f);
	kmem_unlock(&slob_lock);
	return f.pages;
}

static char *page_of(void *p)
{
	return (char *)((uintptr_t)p & PAGE_MASK);
}

/*
 * The free lists.  Runs only where SLOB is not the back-end (no other user
 * of the lists): on SLOB every kmalloc shares them, and the slab tests'
 * @slob variants cover them there.
 */
KTEST(slob_lists_and_next_fit)
{
	void *p[64];
	int n = 0;

	if (slab_allocator == SLAB_ALLOCATOR_SLOB) {
		fprintf(stderr, "  skipped: the lists are shared with kmalloc on slab=slob\n");
		return;
	}
	KT_ASSERT_EQ(slob_nr_lists, 3);
	KT_ASSERT_EQ(slob_list_for(255), SLOB_LIST_SMALL);
	KT_ASSERT_EQ(slob_list_for(256), SLOB_LIST_MEDIUM);
	KT_ASSERT_EQ(slob_list_for(1023), SLOB_LIST_MEDIUM);
	KT_ASSERT_EQ(slob_list_for(1024), SLOB_LIST_LARGE);
	long slab0 = slab_pages_now();
	unsigned long searches0 = slob_stats.list[SLOB_LIST_SMALL].searches;
	unsigned long new0 = slob_stats.list[SLOB_LIST_SMALL].new_pages;

	/* P1: twenty 200-byte blocks, 96 bytes left: on the small list. */
	for (int i = 0; i < 20; i++)
		p[n++] = slob_alloc(200, GFP_KERNEL, 0, 0);
	char *p1 = page_of(p[0]);
	for (int i = 1; i < 20; i++)
		KT_ASSERT(page_of(p[i]) == p1);
	KT_ASSERT_EQ(list_pages(SLOB_LIST_SMALL), 1);
	KT_ASSERT_EQ(slab_pages_now() - slab0, 1);
	/* P2, put first on the list: the same. */
	for (int i = 0; i < 20; i++)
		p[n++] = slob_alloc(200, GFP_KERNEL, 0, 0);
	char *p2 = page_of(p[20]);
	KT_ASSERT(p2 != p1 && page_of(p[39]) == p2);
	KT_ASSERT_EQ(list_pages(SLOB_LIST_SMALL), 2);
	/* The statistics: 40 searches of the small list, two new pages; two 96-byte holes. */
	KT_ASSERT_EQ(slob_stats.list[SLOB_LIST_SMALL].searches - searches0, 40);
	KT_ASSERT_EQ(slob_stats.list[SLOB_LIST_SMALL].new_pages - new0, 2);
	struct slob_list_figures f;
	kmem_lock(&slob_lock);
	slob_list_figures(SLOB_LIST_SMALL, &f);
	kmem_unlock(&slob_lock);
	KT_ASSERT_EQ(f.fragments, 2);
	KT_ASSERT_EQ(f.biggest, 96);
	for (int b = 0; b < SLOB_HOLE_BUCKETS; b++)
		KT_ASSERT_EQ(f.holes[b], b == 3 ? 2UL : 0UL);	/* 65 to 128 bytes */
	/* A hole in P1; the next 200 bytes skip P2 (96 free) and land there. */
	KT_ASSERT(slob_free(p[5], 200) == 0);
	kmem_lock(&slob_lock);
	slob_list_figures(SLOB_LIST_SMALL, &f);
	kmem_unlock(&slob_lock);
	KT_ASSERT_EQ(f.fragments, 3);
	KT_ASSERT_EQ(f.holes[3], 2);
	KT_ASSERT_EQ(f.holes[4], 1);	/* 200 bytes: 129 to 256 */
	void *q = slob_alloc(200, GFP_KERNEL, 0, 0);
	KT_ASSERT(q == p[5]);
	p[5] = q;
	/* Next fit: the search now starts at P1, so 50 bytes go there, not to P2. */
	void *r = slob_alloc(50, GFP_KERNEL, 0, 0);
	KT_ASSERT(page_of(r) == p1);
	KT_ASSERT(slob_free(r, 50) == 0);
	KT_ASSERT(slob_validate_all(true) == 0);

	/* A medium and a large request get pages of their own lists. */
	void *med = slob_alloc(600, GFP_KERNEL, 0, 0), *big = slob_alloc(3000, GFP_KERNEL, 0, 0);
	KT_ASSERT(med && big && page_of(med) != page_of(big));
	KT_ASSERT_EQ(list_pages(SLOB_LIST_MEDIUM), 1);
	KT_ASSERT_EQ(list_pages(SLOB_LIST_LARGE), 1);
	/* Fill the large page exactly: it leaves every list ... */
	void *rest = slob_alloc(PAGE_SIZE - 3000, GFP_KERNEL, 0, 0);
	KT_ASSERT(page_of(rest) == page_of(big));
	KT_ASSERT_EQ(list_pages(SLOB_LIST_LARGE), 0);
	/* ... and a small free puts it back on the small list. */
	KT_ASSERT(slob_free(rest, 40) == 0);
	KT_ASSERT_EQ(list_pages(SLOB_LIST_SMALL), 3);
	/* A double free is refused with nothing changed. */
	KT_ASSERT(slob_free(rest, 40) == -EALREADY);
	KT_ASSERT(slob_validate_all(true) == 0);
	KT_ASSERT(slob_free((char *)rest + 40, PAGE_SIZE - 3000 - 40) == 0);
	KT_ASSERT(slob_free(big, 3000) == 0);
	/* Wholly free: back to the page allocator. */
	KT_ASSERT_EQ(list_pages(SLOB_LIST_SMALL), 2);
	KT_ASSERT_EQ(list_pages(SLOB_LIST_LARGE), 0);
	KT_ASSERT(slob_free(med, 600) == 0);
	for (int i = 0; i < n; i++)
		KT_ASSERT(slob_free(p[i], 200) == 0);
	KT_ASSERT_EQ(list_pages(SLOB_LIST_SMALL), 0);
	KT_ASSERT_EQ(list_pages(SLOB_LIST_MEDIUM), 0);
	KT_ASSERT_EQ(slab_pages_now(), slab0);
	KT_ASSERT(slob_validate_all(true) == 0);
}

KTEST_MAIN(if (slab_test_boot("mem=64M")) return 1;)
