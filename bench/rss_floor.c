// SPDX-License-Identifier: MIT
/*
 * bench_rss_floor: the resident memory an ideal size-class allocator would
 * need on the peers' frag and longlived workloads (bench/peers_workloads.c),
 * replayed operation for operation without allocating anything.
 *
 * Why: on these two workloads glibc's peak RSS is the lowest of the five
 * allocators, and kmem's target is to match it.  glibc splits and coalesces
 * chunks of any size, so a 4 KiB object can reuse the hole two 256-byte ones
 * left.  kmem, jemalloc, mimalloc and tcmalloc are size-class (segregated
 * fit) allocators: a page holds objects of one class only.  This program
 * answers "how low could a size-class allocator go here?", with every
 * choice made in the allocator's favour:
 *
 *   - a class every 16 bytes (finer than any of the five), no headers;
 *   - slabs of one 4 KiB page up to 2 KiB objects (the smallest unit that
 *     can be given back), larger classes in the 1..8 pages that waste least;
 *   - every allocation goes into the fullest slab of its class that has
 *     room (the best known packing rule), a new slab only when none has;
 *   - no thread caches and no metadata; a slab's pages leave the resident
 *     set the moment its last object is freed, and any class may reuse
 *     them at once.
 *
 * For frag this is within about 2% of the least any allocator can need that
 * keeps each page to one size class and never moves an object, in
 * expectation over which objects survive: which of the 1 M small objects
 * survive the 90% free is random, a page that keeps one survivor can take
 * none of the 2..8 KiB objects, and those need pages of their own (here
 * whole slabs of up to 8 pages, charged when made; laid out page by page
 * they would take about 6 MB less).  For longlived, where the choice of
 * slab matters, it is the model's figure, not a bound.
 *
 * Output: one line per workload, in bench_peers_workloads' format, so the
 * report can set it beside the measured allocators:
 *   RESULT wl=frag alloc=size-class-floor ops=961634 peak_kb=... final_kb=...
 *          live_kb=141844 mid_kb=... slab_peak_kb=... slab_final_kb=...
 *          arrays_kb=... base_kb=...
 * ops and live_kb are the workload's own (tests/test_rss_floor.sh checks
 * they equal bench_peers_workloads': the same operation stream).  peak_kb
 * and final_kb add to the slab pages what the workload itself holds in
 * every allocator's run: its bookkeeping arrays (the pages it touches) and
 * the process's resident size before the workload (base_kb, measured here).
 *
 *   bench_rss_floor [frag|longlived|all] [-x SCALE]
 *   bench_rss_floor --selftest     checks the model on a small known case
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "peers_streams.h"

#define PG		4096L
#define GRAIN		16		/* class spacing */
#define MAX_CLASS	8192		/* larger objects: exact page runs */
#define NR_CLASSES	(MAX_CLASS / GRAIN + 1)

/* ---- the model ---------------------------------------------------------- */

struct fslab {
	int cls;
	int inuse;
	int prev, next;			/* in its class's list for its inuse count */
};

struct fclass {
	int objects;			/* per slab */
	int pages;			/* per slab */
	int *head;			/* head[k]: slabs with k objects in use, 0 < k < objects */
	int fullest;			/* no partial slab has more than this in use */
};

static struct fclass classes[NR_CLASSES];
static struct fslab *slabs;
static int nr_slabs, cap_slabs, *free_ids, nr_free_ids;
static long pages, peak_pages;

static void account(long delta)
{
	pages += delta;
	if (pages > peak_pages)
		peak_pages = pages;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		fprintf(stderr, "bench_rss_floor: out of memory\n");
		exit(2);
	}
	return p;
}

static struct fclass *class_get(int ci)
{
	struct fclass *c = &classes[ci];

	if (c->head)
		return c;
	long size = (long)ci * GRAIN;
	int best = 1;
	if (size > PG / 2) {
		/* The slab of 1..8 pages that wastes least (the fewest pages on a tie). */
		double waste = 1.0;
		for (int k = 1; k <= 8; k++) {
			long objs = k * PG / size;
			double w = objs ? (double)(k * PG - objs * size) / (double)(k * PG) : 1.0;
			if (w < waste - 1e-9) {
				waste = w;
				best = k;
			}
		}
	}
	c->pages = best;
	c->objects = (int)(best * PG / size);
	c->head = xcalloc((size_t)c->objects + 1, sizeof(int));
	for (int k = 0; k <= c->objects; k++)
		c->head[k] = -1;
	c->fullest = 0;
	return c;
}

static void list_del_slab(struct fclass *c, int id)
{
	struct fslab *s = &slabs[id];

	if (s->prev >= 0)
		slabs[s->prev].next = s->next;
	else
		c->head[s->inuse] = s->next;
	if (s->next >= 0)
		slabs[s->next].prev = s->prev;
}

static void list_add_slab(struct fclass *c, int id)
{
	struct fslab *s = &slabs[id];

	s->prev = -1;
	s->next = c->head[s->inuse];
	if (s->next >= 0)
		slabs[s->next].prev = id;
	c->head[s->inuse] = id;
	if (s->inuse > c->fullest)
		c->fullest = s->inuse;
}

/* Returns a handle: a slab id, or -(pages) for a page run. */
static long floor_alloc(uint32_t size)
{
	if (size > MAX_CLASS) {
		long n = (size + PG - 1) / PG;
		account(n);
		return -n;
	}
	int ci = (int)((size + GRAIN - 1) / GRAIN);
	struct fclass *c = class_get(ci ? ci : 1);
	int id = -1;

	while (c->fullest > 0 && c->head[c->fullest] < 0)
		c->fullest--;
	if (c->fullest > 0) {
		id = c->head[c->fullest];
		list_del_slab(c, id);
	} else {
		if (nr_free_ids)
			id = free_ids[--nr_free_ids];
		else {
			if (nr_slabs == cap_slabs) {
				cap_slabs = cap_slabs ? 2 * cap_slabs : 4096;
				slabs = realloc(slabs, sizeof(*slabs) * (size_t)cap_slabs);
				free_ids = realloc(free_ids, sizeof(int) * (size_t)cap_slabs);
				if (!slabs || !free_ids) {
					fprintf(stderr, "bench_rss_floor: out of memory\n");
					exit(2);
				}
			}
			id = nr_slabs++;
		}
		slabs[id] = (struct fslab){ .cls = (int)(c - classes), .inuse = 0, .prev = -1, .next = -1 };
		account(c->pages);
	}
	if (++slabs[id].inuse < c->objects)
		list_add_slab(c, id);
	return id;
}

static void floor_free(long h)
{
	if (h < 0) {
		account(h);
		return;
	}
	struct fslab *s = &slabs[h];
	struct fclass *c = &classes[s->cls];

	if (s->inuse < c->objects)
		list_del_slab(c, (int)h);
	if (--s->inuse == 0) {
		account(-c->pages);
		free_ids[nr_free_ids++] = (int)h;
	} else {
		list_add_slab(c, (int)h);
	}
}

static void floor_reset(void)
{
	for (int i = 0; i < NR_CLASSES; i++) {
		free(classes[i].head);
		classes[i].head = NULL;
	}
	nr_slabs = nr_free_ids = 0;
	pages = peak_pages = 0;
}

/* ---- the workloads' operation streams (bench/peers_workloads.c) ---------- */

static double scale = 1.0;
static long base_kb;

static long scaled(long n)
{
	long v = (long)((double)n * scale);

	return v < 1 ? 1 : v;
}


static long pages_kb(long bytes)
{
	return (bytes + PG - 1) / PG * (PG / 1024);
}

static void result(const char *wl, long ops, long slab_peak, long slab_final, long arrays_kb,
		   long live_kb, long mid_kb)
{
	long peak = slab_peak * (PG / 1024), fin = slab_final * (PG / 1024);

	printf("RESULT wl=%s alloc=size-class-floor ops=%ld peak_kb=%ld final_kb=%ld live_kb=%ld "
	       "mid_kb=%ld slab_peak_kb=%ld slab_final_kb=%ld arrays_kb=%ld base_kb=%ld\n",
	       wl, ops, peak + arrays_kb + base_kb, fin + arrays_kb + base_kb, live_kb,
	       mid_kb ? mid_kb + arrays_kb + base_kb : 0, peak, fin, arrays_kb, base_kb);
}

static void wl_frag(void)
{
	long n = scaled(FRAG_OBJECTS);
	uint64_t s = FRAG_SEED;
	long *h = xcalloc((size_t)n, sizeof(long));
	uint32_t *size = xcalloc((size_t)n, sizeof(uint32_t));
	uint32_t *perm = xcalloc((size_t)n, sizeof(uint32_t));
	long calls = 0, live = 0, freed = 0;

	floor_reset();
	for (long i = 0; i < n; i++) {
		size[i] = frag_small_size(&s);
		h[i] = floor_alloc(size[i]);
		live += size[i];
	}
	calls += n;
	frag_free_order(perm, n, &s);
	for (long k = 0; k < n - n / 10; k++) {
		floor_free(h[perm[k]]);
		freed += size[perm[k]];
	}
	calls += n - n / 10;
	live -= freed;
	long mid = pages * (PG / 1024);
	uint64_t d = STREAM_DIGEST_INIT;
	for (long i = 0; i < n; i++)
		d = stream_digest(stream_digest(d, size[i]), perm[i]);

	long cap = freed / 2 / 2048 + 1, nbig = 0, big = 0;
	while (big < freed / 2 && nbig < cap) {
		uint32_t sz = frag_big_size(&s);
		floor_alloc(sz);
		d = stream_digest(d, sz);
		big += sz;
		nbig++;
	}
	calls += nbig;
	live += big;
	/* p, size, perm; q and qsize up to nbig. */
	long arrays = pages_kb(n * 8) + 2 * pages_kb(n * 4) + pages_kb(nbig * 8) + pages_kb(nbig * 4);
	result("frag", calls / 2, peak_pages, pages, arrays, live / 1024, mid);
	printf("STREAM wl=frag digest=%016llx\n", (unsigned long long)d);
	free(h);
	free(size);
	free(perm);
}

static void wl_longlived(void)
{
	const long budget = LONGLIVED_BUDGET, cap = LONGLIVED_CAP;
	long steps = scaled(LONGLIVED_STEPS);
	uint64_t s = LONGLIVED_SEED;
	long *h = xcalloc((size_t)cap, sizeof(long));
	uint32_t *size = xcalloc((size_t)cap, sizeof(uint32_t));
	long n = 0, live = 0, calls = 0, max_n = 0;

	floor_reset();
	for (int ph = 0; ph < LONGLIVED_PHASES; ph++) {
		for (long k = -1; k < steps; k++) {
			if (k >= 0) {
				long v = longlived_victim(&s, n);
				floor_free(h[v]);
				live -= size[v];
				h[v] = h[--n];
				size[v] = size[n];
				calls++;
			}
			while (live < budget && n < cap) {
				uint32_t sz = longlived_size(&s, ph);
				h[n] = floor_alloc(sz);
				size[n++] = sz;
				live += sz;
				calls++;
				if (n > max_n)
					max_n = n;
			}
		}
	}
	/* p and size, touched up to the largest population. */
	result("longlived", calls / 2, peak_pages, pages, pages_kb(max_n * 8) + pages_kb(max_n * 4),
	       live / 1024, 0);
	uint64_t d = STREAM_DIGEST_INIT;
	for (long i = 0; i < n; i++)
		d = stream_digest(d, size[i]);
	printf("STREAM wl=longlived digest=%016llx\n", (unsigned long long)d);
	free(h);
	free(size);
}

/* ---- self-test: a case small enough to work out by hand ------------------ */

static int selftest(void)
{
	int bad = 0;
#define EXPECT(cond) do { if (!(cond)) { printf("FAIL line %d: %s\n", __LINE__, #cond); bad++; } } while (0)
	floor_reset();
	/* 2048-byte class: two objects in a one-page slab. */
	long a = floor_alloc(2048), b = floor_alloc(2033), c = floor_alloc(2048), d = floor_alloc(2040);
	EXPECT(pages == 2 && a == b && c == d && a != c);
	floor_free(a);
	floor_free(c);
	EXPECT(pages == 2);		/* each slab keeps one object */
	long e = floor_alloc(2048);
	EXPECT(pages == 2 && (e == a || e == c));	/* into a slab with room, no new page */
	/* Fullest first: 16-byte class, slab X with 3 in use, slab Y with 1. */
	long x[256];
	for (int i = 0; i < 256; i++)
		x[i] = floor_alloc(16);
	long y = floor_alloc(16);
	EXPECT(pages == 4 && y != x[0]);
	for (int i = 3; i < 256; i++)
		floor_free(x[i]);
	EXPECT(floor_alloc(16) == x[0]);	/* 3 in use beats 1 */
	/* A run of pages above MAX_CLASS, and the peak. */
	long big = floor_alloc(MAX_CLASS + 1);
	EXPECT(big == -3 && pages == 7 && peak_pages == 7);
	floor_free(big);
	floor_free(b);
	floor_free(e);
	floor_free(d);
	EXPECT(pages == 2 && peak_pages == 7);	/* the two 16-byte slabs */
	/* A 4608-byte class: 1..8 pages, least waste: 8 pages hold 7 (1.6% waste). */
	floor_alloc(4600);
	EXPECT(classes[4608 / GRAIN].pages == 8 && classes[4608 / GRAIN].objects == 7);
	printf(bad ? "selftest: %d failed\n" : "selftest: ok\n", bad);
	return bad ? 1 : 0;
#undef EXPECT
}

int main(int argc, char **argv)
{
	const char *wl = "all";
	struct rusage ru;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--selftest"))
			return selftest();
		if (!strcmp(argv[i], "-x") && i + 1 < argc)
			scale = atof(argv[++i]);
		else if (argv[i][0] != '-')
			wl = argv[i];
		else {
			fprintf(stderr, "usage: bench_rss_floor [frag|longlived|all] [-x SCALE] | --selftest\n");
			return 2;
		}
	}
	if (scale <= 0) {
		fprintf(stderr, "bench_rss_floor: -x wants a positive scale\n");
		return 2;
	}
	/* What the process holds before the workload: a bench_peers_workloads run holds it too. */
	getrusage(RUSAGE_SELF, &ru);
	base_kb = ru.ru_maxrss;
	bool all = !strcmp(wl, "all");
	if (all || !strcmp(wl, "frag"))
		wl_frag();
	if (all || !strcmp(wl, "longlived"))
		wl_longlived();
	if (!all && strcmp(wl, "frag") && strcmp(wl, "longlived")) {
		fprintf(stderr, "bench_rss_floor: unknown workload '%s' (frag, longlived, all)\n", wl);
		return 2;
	}
	return 0;
}
