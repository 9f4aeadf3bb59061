// SPDX-License-Identifier: MIT
/*
 * The free ranges behind blocks over 4 MiB (src/malloc/huge_heap.c), driven
 * directly, in process (so under ASan and UBSan too): random takes, gives
 * back and releases against a model of which pages are handed out, with the
 * heap's own invariants checked after each step (ranges in address order,
 * inside their arena, none empty, no two neighbours of the same state,
 * dirty_bytes their sum).  And a release that must split a dirty range when
 * the range array is exactly full.
 *
 * huge_heap.c is not in libkmem (it belongs to libkmem-malloc.so): it is
 * compiled into this test.  Its functions expect huge_lock: one thread.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ktest.h"
#include "malloc/huge_heap.c"

#define PAGE 4096UL
#define ARENA_PAGES 1024		/* 4 MiB arenas: small, so that ranges are many */

/* The heap's invariants; false (and reported) if one fails. */
static bool heap_ok(const char *when)
{
	size_t dirty = 0;

	for (size_t i = 0; i < nr_spans; i++) {
		const struct span *s = &spans[i];
		struct arena *ar = arena_of(s->start);
		if (!s->len || !ar || ar->base != s->arena || s->start + s->len > ar->base + ar->len) {
			KT_FAIL("%s: range %zu [%#lx +%zu) empty or outside its arena", when, i,
				(unsigned long)s->start, s->len);
			return false;
		}
		if (i && spans[i - 1].start + spans[i - 1].len > s->start) {
			KT_FAIL("%s: ranges %zu and %zu overlap or are out of order", when, i - 1, i);
			return false;
		}
		if (i && joinable(&spans[i - 1], s)) {
			KT_FAIL("%s: ranges %zu and %zu not joined", when, i - 1, i);
			return false;
		}
		if (s->dirty)
			dirty += s->len;
	}
	if (dirty != dirty_bytes) {
		KT_FAIL("%s: dirty_bytes %zu, ranges hold %zu", when, dirty_bytes, dirty);
		return false;
	}
	return true;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Map an arena of @pages pages, as huge.c does (without the 2 MiB alignment). */
static bool map_arena(size_t pages)
{
	void *p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return false;
	if (!hheap_add_arena((uintptr_t)p, pages * PAGE)) {
		munmap(p, pages * PAGE);
		return false;
	}
	return true;
}

#define BLOCKS 64

struct blk {
	uintptr_t addr;
	size_t len;
};

static int cmp_blk(const void *a, const void *b)
{
	const struct blk *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* No two blocks overlap, and no block is in a free range. */
static bool blocks_ok(struct blk *b, const char *when)
{
	struct blk live[BLOCKS];
	size_t n = 0;

	for (int i = 0; i < BLOCKS; i++)
		if (b[i].len)
			live[n++] = b[i];
	qsort(live, n, sizeof(live[0]), cmp_blk);
	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && live[i].addr + live[i].len > live[i + 1].addr) {
			KT_FAIL("%s: blocks at %#lx and %#lx overlap", when, (unsigned long)live[i].addr,
				(unsigned long)live[i + 1].addr);
			return false;
		}
		size_t k = span_index(live[i].addr + live[i].len);
		if (k && spans[k - 1].start + spans[k - 1].len > live[i].addr) {
			KT_FAIL("%s: block at %#lx (+%zu) overlaps the free range at %#lx", when,
				(unsigned long)live[i].addr, live[i].len, (unsigned long)spans[k - 1].start);
			return false;
		}
	}
	return true;
}

KTEST(random_takes_and_puts_keep_the_ranges_right)
{
	struct blk b[BLOCKS] = { 0 };
	uint64_t s = 0x1234567;
	unsigned long long now = 1;
	char when[64];

	for (int step = 0; step < 20000; step++, now++) {
		struct blk *x = &b[rnd(&s) % BLOCKS];
		uint64_t r = rnd(&s) % 100;

		snprintf(when, sizeof(when), "step %d", step);
		if (r < 3) {
			hheap_reserve();
			hheap_release(now - rnd(&s) % 50, (rnd(&s) % 64) * PAGE);
		} else if (x->len && r < 50) {
			hheap_reserve();
			KT_ASSERT(hheap_put(x->addr, x->len, rnd(&s) % 4 != 0, now));
			x->len = 0;
		} else if (x->len && r < 75) {
			/* Grow in place, if the next pages are free. */
			size_t more = (1 + rnd(&s) % 64) * PAGE;
			struct hheap_take t;
			KT_ASSERT(hheap_reserve());
			if (hheap_take_after(x->addr + x->len, more, &t)) {
				KT_ASSERT(t.addr == x->addr + x->len);
				x->len += more;
			}
		} else if (!x->len) {
			size_t len = (1 + rnd(&s) % 256) * PAGE;
			size_t align = PAGE << (rnd(&s) % 8);
			size_t phase = rnd(&s) % 2 ? 0 : (rnd(&s) % (align / PAGE)) * PAGE;
			struct hheap_take t;
			KT_ASSERT(hheap_reserve());
			if (!hheap_take(len, align, phase, &t)) {
				KT_ASSERT(map_arena(ARENA_PAGES));
				KT_ASSERT(hheap_take(len, align, phase, &t));
			}
			KT_ASSERT((t.addr & (align - 1)) == phase);
			KT_ASSERT(t.dirty <= len);
			x->addr = t.addr;
			x->len = len;
		}
		if (!heap_ok(when) || !blocks_ok(b, when))
			return;
	}
	for (int i = 0; i < BLOCKS; i++)
		if (b[i].len) {
			hheap_reserve();
			KT_ASSERT(hheap_put(b[i].addr, b[i].len, true, now));
		}
	hheap_reserve();
	hheap_release(~0ull, 0);
	KT_EXPECT(heap_ok("at the end"));
	KT_EXPECT(nr_spans == 0 && nr_arenas == 0 && dirty_bytes == 0);
}

/* Absurd lengths and alignments fit no free range (a + len must not wrap). */
KTEST(absurd_lengths_fit_nothing)
{
	struct hheap_take t;

	KT_ASSERT(map_arena(ARENA_PAGES));
	KT_EXPECT(!hheap_take(SIZE_MAX - 4 * PAGE + 1, PAGE, 0, &t));
	KT_EXPECT(!hheap_take(SIZE_MAX / 2 + 1, PAGE, 0, &t));
	KT_EXPECT(!hheap_take(PAGE, (size_t)1 << 62, 0, &t));
	KT_EXPECT(!hheap_take(SIZE_MAX - 4 * PAGE + 1, (size_t)1 << 62, PAGE, &t));
	KT_EXPECT(heap_ok("after"));
	hheap_reserve();
	hheap_release(~0ull, 0);
	KT_EXPECT(nr_spans == 0 && nr_arenas == 0);
}

/*
 * A release that gives back part of a dirty range (the budget) splits it:
 * with the range array full, it grows the array first, and the range it
 * was splitting is then in the new array.
 */
KTEST(release_splits_a_range_when_the_array_is_full)
{
	static uintptr_t blk[4096];
	struct hheap_take t;
	unsigned long long now = 1;
	size_t n = 2 * cap_spans + 8, put = 0;

	KT_ASSERT(n <= 4096);
	KT_ASSERT(map_arena(4 * n));
	/* Blocks of two pages, one after the other; then every other one back, dirty: a range each. */
	for (size_t i = 0; i < n; i++) {
		KT_ASSERT(hheap_reserve());
		KT_ASSERT(hheap_take(2 * PAGE, PAGE, 0, &t));
		blk[i] = t.addr;
	}
	while (nr_spans < cap_spans)
		KT_ASSERT(hheap_put(blk[2 * put++ + 1], 2 * PAGE, true, now++));
	KT_ASSERT(nr_spans == cap_spans && put >= 2);
	KT_ASSERT(heap_ok("full"));
	size_t cap = cap_spans;
	/* One page over the budget: the oldest range gives back its last page, a split. */
	hheap_release(0, dirty_bytes - PAGE);
	KT_EXPECT(cap_spans > cap);
	KT_EXPECT(heap_ok("after the split"));
	KT_EXPECT(spans[0].start == blk[1] && spans[0].dirty && spans[0].len == PAGE);
	KT_EXPECT(spans[1].start == blk[1] + PAGE && !spans[1].dirty && spans[1].len == PAGE);
	for (size_t i = 0; i < n; i++)
		if (i % 2 == 0 || i / 2 >= put) {
			hheap_reserve();
			KT_ASSERT(hheap_put(blk[i], 2 * PAGE, false, now));
		}
	hheap_reserve();
	hheap_release(~0ull, 0);
	KT_EXPECT(heap_ok("at the end"));
	KT_EXPECT(nr_spans == 0 && nr_arenas == 0 && dirty_bytes == 0);
}

KTEST_MAIN()
