// SPDX-License-Identifier: MIT
#include <string.h>
#include <sys/mman.h>

#include "malloc/huge_heap.h"

struct arena {
	uintptr_t base;
	size_t len;
	uintptr_t hwm;		/* end of what was ever handed out */
	bool thp;		/* madvise(MADV_HUGEPAGE)d */
};

/* A free range; no two next to each other in one arena have the same state. */
struct span {
	uintptr_t start;
	size_t len;
	uintptr_t arena;	/* its arena's base: ranges join within one arena only */
	unsigned long long freed_ns;
	bool dirty;
};

static struct arena *arenas;
static size_t nr_arenas, cap_arenas;
static struct span *spans;		/* in address order */
static size_t nr_spans, cap_spans;
static size_t dirty_bytes;

/* Grow the array @*v of @*cap elements of @size to hold @need; its own mapping (this is malloc). */
static bool grow_array(void **v, size_t *cap, size_t size, size_t need)
{
	if (need <= *cap)
		return true;
	size_t ncap = *cap ? *cap : 4096 / size;
	while (ncap < need)
		ncap *= 2;
	void *n = mmap(NULL, ncap * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (n == MAP_FAILED)
		return false;
	if (*v) {
		memcpy(n, *v, *cap * size);
		munmap(*v, *cap * size);
	}
	*v = n;
	*cap = ncap;
	return true;
}

/* A take splits a span in two; a put adds one; a release splits one. */
#define SPANS_SPARE	4

bool hheap_reserve(void)
{
	return grow_array((void **)&spans, &cap_spans, sizeof(*spans), nr_spans + SPANS_SPARE);
}

static struct arena *arena_of(uintptr_t p)
{
	for (size_t i = 0; i < nr_arenas; i++)
		if (p - arenas[i].base < arenas[i].len)
			return &arenas[i];
	return NULL;
}

static uintptr_t span_end(const struct span *s)
{
	return s->start + s->len;
}

/* @b starts where @a ends, in the same arena. */
static bool adjacent(const struct span *a, const struct span *b)
{
	return a->arena == b->arena && span_end(a) == b->start;
}

static bool joinable(const struct span *a, const struct span *b)
{
	return adjacent(a, b) && a->dirty == b->dirty;
}

static void remove_spans(size_t i, size_t n)
{
	memmove(&spans[i], &spans[i + n], (nr_spans - i - n) * sizeof(*spans));
	nr_spans -= n;
}

static bool insert_span(size_t i, struct span s)
{
	if (nr_spans == cap_spans && !hheap_reserve())
		return false;
	memmove(&spans[i + 1], &spans[i], (nr_spans - i) * sizeof(*spans));
	spans[i] = s;
	nr_spans++;
	return true;
}

/* Join spans[i] with its neighbours of the same state; returns its index after. */
static size_t join_around(size_t i)
{
	if (i + 1 < nr_spans && joinable(&spans[i], &spans[i + 1])) {
		spans[i].len += spans[i + 1].len;
		if (spans[i + 1].freed_ns > spans[i].freed_ns)
			spans[i].freed_ns = spans[i + 1].freed_ns;
		remove_spans(i + 1, 1);
	}
	if (i > 0 && joinable(&spans[i - 1], &spans[i])) {
		spans[i - 1].len += spans[i].len;
		if (spans[i].freed_ns > spans[i - 1].freed_ns)
			spans[i - 1].freed_ns = spans[i].freed_ns;
		remove_spans(i, 1);
		i--;
	}
	return i;
}

/* The first span that starts at or after @p. */
static size_t span_index(uintptr_t p)
{
	size_t lo = 0, hi = nr_spans;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (spans[mid].start < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Hand out [@a, @a + @len) from spans[@i..] (which cover it): the parts
 * before and after stay free, in their states.
 */
static void carve(size_t i, uintptr_t a, size_t len, struct hheap_take *t)
{
	uintptr_t end = a + len;
	size_t first = i, last;

	while (span_end(&spans[first]) <= a)
		first++;
	for (last = first; last + 1 < nr_spans && spans[last + 1].start < end; last++)
		;
	t->addr = a;
	t->dirty = 0;
	t->nr_dirty = 0;
	for (size_t k = first; k <= last; k++) {
		if (!spans[k].dirty)
			continue;
		uintptr_t lo = spans[k].start > a ? spans[k].start : a;
		uintptr_t hi = span_end(&spans[k]) < end ? span_end(&spans[k]) : end;
		t->dirty += hi - lo;
		if (t->nr_dirty >= 0 && t->nr_dirty < HHEAP_DIRTY_MAX)
			t->dirty_at[t->nr_dirty++] = (struct hheap_range){ lo, hi - lo };
		else
			t->nr_dirty = -1;
	}
	dirty_bytes -= t->dirty;
	struct span head = spans[first], tail = spans[last];
	head.len = a - head.start;
	tail.len = span_end(&tail) - end;
	tail.start = end;
	remove_spans(first, last - first + 1);
	/* Room: hheap_reserve() before; one span out, at most two back. */
	if (tail.len)
		insert_span(first, tail);
	if (head.len)
		insert_span(first, head);
	struct arena *ar = arena_of(a);
	if (ar->hwm < end)
		ar->hwm = end;
}

bool hheap_take(size_t len, size_t align, size_t phase, struct hheap_take *t)
{
	size_t best = SIZE_MAX, best_len = SIZE_MAX;
	uintptr_t best_at = 0;

	for (size_t i = 0, j; i < nr_spans; i = j + 1) {
		for (j = i; j + 1 < nr_spans && adjacent(&spans[j], &spans[j + 1]); j++)
			;
		uintptr_t rs = spans[i].start, re = span_end(&spans[j]);
		uintptr_t a = rs + ((phase - rs) & (align - 1));
		/* Not a + len <= re: a length near SIZE_MAX wraps that round to "fits". */
		if (a >= rs && a <= re && len <= re - a && re - rs < best_len) {
			best = i;
			best_len = re - rs;
			best_at = a;
		}
	}
	if (best == SIZE_MAX)
		return false;
	carve(best, best_at, len, t);
	return true;
}

bool hheap_take_after(uintptr_t end, size_t more, struct hheap_take *t)
{
	size_t i = span_index(end), j;

	if (i == nr_spans || spans[i].start != end || arena_of(end - 1) != arena_of(end))
		return false;
	for (j = i; span_end(&spans[j]) - end < more; j++)
		if (j + 1 == nr_spans || !adjacent(&spans[j], &spans[j + 1]))
			return false;
	carve(i, end, more, t);
	return true;
}

bool hheap_put(uintptr_t start, size_t len, bool dirty, unsigned long long now)
{
	struct arena *ar = arena_of(start);
	size_t i = span_index(start);
	struct span s = { start, len, ar->base, now, dirty };

	if (i > 0 && joinable(&spans[i - 1], &s)) {
		spans[i - 1].len += len;
		spans[i - 1].freed_ns = now;
		i--;
	} else if (i < nr_spans && joinable(&s, &spans[i])) {
		spans[i].start = start;
		spans[i].len += len;
		spans[i].freed_ns = now;
	} else if (!insert_span(i, s)) {
		return false;
	}
	join_around(i);
	if (dirty)
		dirty_bytes += len;
	return true;
}

bool hheap_add_arena(uintptr_t base, size_t len)
{
	if (!grow_array((void **)&arenas, &cap_arenas, sizeof(*arenas), nr_arenas + 1) || !hheap_reserve())
		return false;
	arenas[nr_arenas++] = (struct arena){ base, len, base, false };
	insert_span(span_index(base), (struct span){ base, len, base, 0, false });
	return true;
}

void hheap_thp_all(void)
{
	for (size_t i = 0; i < nr_arenas; i++)
		if (!arenas[i].thp) {
			madvise((void *)arenas[i].base, arenas[i].len, MADV_HUGEPAGE);
			arenas[i].thp = true;
		}
}

/*
 * Give back the last @bytes (page-aligned, at most its length) of the
 * dirty spans[@i]: they read as zeroes from now on.
 */
static void clean(size_t i, size_t bytes)
{
	/* Room for the split first: growing the array moves the spans. */
	if (bytes < spans[i].len && nr_spans == cap_spans && !hheap_reserve())
		bytes = spans[i].len;	/* no room for the split: all of it */

	struct span *s = &spans[i];
	uintptr_t at = span_end(s) - bytes;

	madvise((void *)at, bytes, MADV_DONTNEED);
	dirty_bytes -= bytes;
	if (bytes == s->len) {
		s->dirty = false;
		join_around(i);
		return;
	}
	s->len -= bytes;
	struct span c = { at, bytes, s->arena, 0, false };
	if (i + 1 < nr_spans && joinable(&c, &spans[i + 1])) {
		spans[i + 1].start = at;
		spans[i + 1].len += bytes;
	} else {
		insert_span(i + 1, c);	/* room: made above */
	}
}

static void unmap_empty_arenas(void)
{
	for (size_t i = 0; i < nr_spans; i++) {
		struct arena *ar = arena_of(spans[i].start);
		if (spans[i].dirty || spans[i].start != ar->base || spans[i].len != ar->len)
			continue;
		munmap((void *)ar->base, ar->len);
		*ar = arenas[--nr_arenas];
		remove_spans(i--, 1);
	}
}

void hheap_release(unsigned long long expire_ns, size_t budget)
{
	for (size_t i = 0; i < nr_spans; i++)
		if (spans[i].dirty && spans[i].freed_ns < expire_ns) {
			clean(i, spans[i].len);
			i = (size_t)-1;		/* joined: start again */
		}
	while (dirty_bytes > budget) {
		size_t old = SIZE_MAX;
		for (size_t i = 0; i < nr_spans; i++)
			if (spans[i].dirty && (old == SIZE_MAX || spans[i].freed_ns < spans[old].freed_ns))
				old = i;
		if (old == SIZE_MAX)	/* the count drifted from the ranges: never seen */
			break;
		size_t excess = (dirty_bytes - budget + 4095) & ~(size_t)4095;
		clean(old, excess < spans[old].len ? excess : spans[old].len);
	}
	unmap_empty_arenas();
}

size_t hheap_dirty_bytes(void)
{
	return dirty_bytes;
}

bool hheap_freed(uintptr_t p, uintptr_t *startp)
{
	size_t i = span_index(p + 1);	/* the first span starting after p */
	struct arena *ar = arena_of(p);

	if (!i || !ar || p >= ar->hwm || p - spans[i - 1].start >= spans[i - 1].len)
		return false;
	*startp = spans[i - 1].start;
	return true;
}
