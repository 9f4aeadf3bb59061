// SPDX-License-Identifier: MIT
/*
 * What SLOB does differently from SLUB and SLAB, through the public API on
 * slab=slob (test_slob_api.env; the @lists1 and @lists2 variants boot the
 * one-list and the two-list heap, @debug adds slab_debug=ZP):
 *
 *  - the constructor runs at every allocation;
 *  - kmalloc blocks carry a 16-byte header with the size asked for, are
 *    16-aligned (power-of-two sizes aligned to their size) and 16-byte
 *    multiples, ksize is the block less its header, and from PAGE_SIZE - 16 bytes up
 *    kmalloc takes whole pages; cache objects carry no header and
 *    SLAB_HWCACHE_ALIGN aligns them to cache lines;
 *  - bad frees are reported once each and change nothing: double frees
 *    (kmalloc and cache), a pointer into a kmalloc block, a cache object
 *    given to kfree, a kmalloc block given to kmem_cache_free, a free with a
 *    size that runs into a free block;
 *  - /sys/kernel/debug/slob/stats in the patch's words, its figures
 *    following allocations; /proc/slabinfo's lines (active objects, 0 per
 *    slab); /proc/meminfo's Slab and vmstat's slab pages, which go back to
 *    where they were when everything is freed (empty pages return);
 *  - with slab_debug=ZP: a red zone overrun is reported at free and
 *    repaired, a freed block reads as poison past the heap's encoding, and
 *    a write after free (kmalloc's, a cache's) is reported once, when the
 *    memory is handed out again, its block merges with a block freed
 *    next to it, or its page, kept wholly free, goes back.
 *
 * After every case the heap's pages are checked (slob_validate_all()).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "slab/slab.h"
#include "slab/slab_common.h"
#include "slab/slob/slob.h"

#include "ktest.h"
#include "lib/kt_util.h"
#include "lib/slab_test.h"

#define GFP GFP_KERNEL
#define BAD(stmt, needle) KT_ASSERT_ONE_REPORT(stmt, needle)

static bool debug_on(void)
{
	return strstr(slab_test_cmdline(), "slab_debug") != NULL;
}

static int heap_ok(void)
{
	long errors = slob_validate_all(true);

	if (errors)
		KT_FAIL("slob_validate_all: %ld faults", errors);
	return errors == 0;
}

static int ctor_calls;

static void count_ctor(void *p)
{
	ctor_calls++;
	memset(p, 0x42, 40);
}

KTEST(slob_ctor_every_allocation)
{
	struct kmem_cache *s = kmem_cache_create("slob_ctor", 40, 0, 0, count_ctor);
	KT_ASSERT(s);
	ctor_calls = 0;
	for (int i = 0; i < 5; i++) {
		unsigned char *p = kmem_cache_alloc(s, GFP);
		KT_ASSERT(p);
		KT_ASSERT_EQ(ctor_calls, i + 1);
		KT_ASSERT(slab_check_byte(p, 40, 0x42) == 0);
		memset(p, 0, 40);	/* the next allocation must not see this */
		kmem_cache_free(s, p);
	}
	kmem_cache_destroy(s);
	KT_ASSERT(heap_ok());
}

KTEST(slob_kmalloc_layout)
{
	uint64_t rng = 7;
	void *p[400];
	size_t sz[400];

	for (int i = 0; i < 400; i++) {
		size_t size = i < 12 ? (size_t)1 << i : 1 + slab_rnd_below(&rng, 4000);
		p[i] = kmalloc(size, GFP);
		sz[i] = size;
		KT_ASSERT(p[i]);
		KT_ASSERT((uintptr_t)p[i] % 16 == 0);
		if (!(size & (size - 1)) && size < PAGE_SIZE - SLOB_MINALIGN)
			KT_ASSERT((uintptr_t)p[i] % size == 0);
		if (size < PAGE_SIZE - SLOB_MINALIGN - (debug_on() ? 8 : 0) && !(debug_on() && size == 2048)) {
			/* The header: the size asked for, right in front. */
			KT_ASSERT_EQ(((unsigned long *)p[i])[-2], size);
			/* The block is rounded up to 16 bytes, header included: ksize is the rest. */
			KT_ASSERT_EQ(ksize(p[i]), debug_on() ? size : ((size + 15) & ~(size_t)15));
		} else {
			KT_ASSERT((uintptr_t)p[i] % PAGE_SIZE == 0);
			KT_ASSERT_EQ(ksize(p[i]), PAGE_SIZE << get_order(size));
		}
		slab_fill(p[i], size, (uint64_t)i);
	}
	for (int i = 0; i < 400; i++) {
		KT_ASSERT(slab_check(p[i], sz[i], (uint64_t)i) == 0);
		kfree(p[i]);
	}
	/* Between a page and KMALLOC_MAX_CACHE_SIZE: pages of SLOB's; above: the core's. */
	void *a = kmalloc(5000, GFP), *b = kmalloc(20000, GFP);
	KT_ASSERT(a && b);
	KT_ASSERT_EQ(ksize(a), 8192);
	KT_ASSERT_EQ(ksize(b), 32768);
	kfree(a);
	kfree(b);
	KT_ASSERT(heap_ok());
}

KTEST(slob_cache_objects)
{
	struct kmem_cache *s = kmem_cache_create("slob_24", 24, 0, 0, NULL);
	struct kmem_cache *h = kmem_cache_create("slob_hw", 100, 0, SLAB_HWCACHE_ALIGN, NULL);
	struct kmem_cache *big = kmem_cache_create("slob_big", 5000, 0, 0, NULL);
	void *p[50], *q[50];
	int adjacent = 0;

	KT_ASSERT(s && h && big);
	for (int i = 0; i < 50; i++) {
		p[i] = kmem_cache_alloc(s, GFP);
		q[i] = kmem_cache_alloc(h, GFP);
		KT_ASSERT(p[i] && q[i]);
		KT_ASSERT((uintptr_t)p[i] % 8 == 0);
		KT_ASSERT((uintptr_t)q[i] % 64 == 0);
		if (i && (char *)p[i] == (char *)p[i - 1] + 24)
			adjacent++;
	}
	/* No header between objects of a cache (unless a red zone follows each). */
	if (!debug_on())
		KT_ASSERT(adjacent > 0);
	void *b = kmem_cache_alloc(big, GFP);
	KT_ASSERT(b && (uintptr_t)b % PAGE_SIZE == 0);
	memset(b, 1, 5000);
	kmem_cache_free(big, b);
	for (int i = 0; i < 50; i++) {
		kmem_cache_free(s, p[i]);
		kmem_cache_free(h, q[i]);
	}
	kmem_cache_destroy(s);
	kmem_cache_destroy(h);
	kmem_cache_destroy(big);
	KT_ASSERT(heap_ok());
}

KTEST(slob_bad_frees)
{
	struct kmem_cache *s32 = kmem_cache_create("slob_32", 32, 0, 0, NULL);
	struct kmem_cache *s64 = kmem_cache_create("slob_64", 64, 0, 0, NULL);
	KT_ASSERT(s32 && s64);

	/* A neighbour keeps the page a heap page (a wholly free page goes back, and then the core reports). */
	char *guard = kmalloc(100, GFP), *k = kmalloc(100, GFP);
	KT_ASSERT(guard && k && ((uintptr_t)guard & PAGE_MASK) == ((uintptr_t)k & PAGE_MASK));
	kfree(k);
	BAD(kfree(k), "Object already free");

	k = kmalloc(100, GFP);
	BAD(kfree(k + 32), "not the start of a kmalloc block");
	BAD(kmem_cache_free(s32, k), "a kmalloc block, not an object of the cache");
	kfree(k);

	void *o = kmem_cache_alloc(s32, GFP);
	KT_ASSERT(o && ((uintptr_t)o & PAGE_MASK) == ((uintptr_t)guard & PAGE_MASK));
	BAD(kfree(o), "not the start of a kmalloc block");
	kmem_cache_free(s32, o);
	BAD(kmem_cache_free(s32, o), "Object already free");

	/* Two neighbours; the second freed: the first freed as 64 bytes runs into it. */
	void *a = NULL, *b = NULL;
	void *keep[128];
	int nk = 0;
	size_t stride = debug_on() ? 40 : 32;	/* a red zone of 8 after each object */
	for (int i = 0; i < 64 && !b; i++) {
		void *x = kmem_cache_alloc(s32, GFP), *y = kmem_cache_alloc(s32, GFP);
		if ((char *)y == (char *)x + stride) {
			a = x;
			b = y;
		} else {
			keep[nk++] = x;
			keep[nk++] = y;
		}
	}
	KT_ASSERT(a && b);
	kmem_cache_free(s32, b);
	BAD(kmem_cache_free(s64, a), "Wrong object size");
	kmem_cache_free(s32, a);
	for (int i = 0; i < nk; i++)
		kmem_cache_free(s32, keep[i]);
	KT_ASSERT(heap_ok());

	kfree(guard);
	char *big = kmalloc(6000, GFP);
	BAD(kfree(big + 64), "pointer into the middle");
	kfree(big);
	kmem_cache_destroy(s32);
	kmem_cache_destroy(s64);
	KT_ASSERT(heap_ok());
}

struct stats {
	int nlists;
	char names[3][16];
	unsigned long lpages[3], unused[3], biggest[3], frags[3];
	unsigned long holes[3][SLOB_HOLE_BUCKETS];
	unsigned long searches[3], lpscans[3], lbscans[3], newpages[3];
	int nholes, nsearches;
	unsigned long pages, allocs, frees, active, allocated, pscans, bscans;
	unsigned long kmallocs, kactive, kallocated, overhead, bigpages, bigactive, total, used;
};

static int read_stats(struct stats *st)
{
	char *text = kt_read_checked("/sys/kernel/debug/slob/stats");
	int n = 0;

	memset(st, 0, sizeof(*st));
	if (!text)
		return -1;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		int i = st->nlists;
		if (i < 3 && sscanf(line, "%15s list pages %lu unused %lu biggest %lu fragments %lu", st->names[i],
				    &st->lpages[i], &st->unused[i], &st->biggest[i], &st->frags[i]) == 5) {
			st->nlists++;
			continue;
		}
		/* "<list> list holes 16:n 32:n ... 4096:n", in the list lines' order. */
		char name[16];
		int off = 0;
		if (sscanf(line, "%15s list holes%n", name, &off) == 1 && off && st->nholes < 3 &&
		    !strcmp(name, st->names[st->nholes])) {
			const char *q = line + off;
			int b = 0;
			for (unsigned long bound, count; b < SLOB_HOLE_BUCKETS; b++, q += off) {
				if (sscanf(q, " %lu:%lu%n", &bound, &count, &off) != 2 || bound != 16UL << b)
					break;
				st->holes[st->nholes][b] = count;
			}
			st->nholes += b == SLOB_HOLE_BUCKETS;
			continue;
		}
		if (st->nsearches < 3 &&
		    sscanf(line, "%15s list searches %lu page scans %lu block scans %lu new pages %lu", name,
			   &st->searches[st->nsearches], &st->lpscans[st->nsearches], &st->lbscans[st->nsearches],
			   &st->newpages[st->nsearches]) == 5) {
			st->nsearches += !strcmp(name, st->names[st->nsearches]);
			continue;
		}
		n += sscanf(line, "slob pages %lu allocs %lu frees %lu active %lu allocated %lu page scans %lu block scans %lu",
			    &st->pages, &st->allocs, &st->frees, &st->active, &st->allocated, &st->pscans, &st->bscans) == 7;
		n += sscanf(line, "kmallocs %lu active %lu allocated %lu overhead %lu", &st->kmallocs, &st->kactive,
			    &st->kallocated, &st->overhead) == 4;
		n += sscanf(line, "bigpages %lu active %lu", &st->bigpages, &st->bigactive) == 2;
		n += sscanf(line, "total %lu used %lu", &st->total, &st->used) == 2;
	}
	free(text);
	return n == 4 && st->nholes == st->nlists && st->nsearches == st->nlists ? 0 : -1;
}

KTEST(slob_stats_file)
{
	struct stats a, b;
	void *p[100];

	KT_ASSERT(read_stats(&a) == 0);
	KT_ASSERT_EQ(a.nlists, (int)slob_nr_lists);
	static const char *const names[3][3] = { { "free" }, { "small", "big" }, { "small", "medium", "large" } };
	for (int i = 0; i < a.nlists; i++)
		KT_ASSERT_STREQ(a.names[i], names[a.nlists - 1][i]);
	for (int i = 0; i < 100; i++)
		p[i] = kmalloc(300, GFP);
	void *big = kmalloc(4090, GFP);
	KT_ASSERT(read_stats(&b) == 0);
	KT_ASSERT_EQ(b.kmallocs - a.kmallocs, 100);
	KT_ASSERT_EQ(b.kactive - a.kactive, 100);
	KT_ASSERT_EQ(b.kallocated - a.kallocated, 30000);
	/* Header and rounding to 16 bytes: 320 bytes each (336 with the red zone of slab_debug=Z). */
	KT_ASSERT_EQ(b.overhead - a.overhead, debug_on() ? 3600 : 2000);
	KT_ASSERT_EQ(b.allocs - a.allocs, 100);
	KT_ASSERT_EQ(b.active, b.allocs - b.frees);
	KT_ASSERT_EQ(b.allocated - a.allocated, debug_on() ? 33600 : 32000);
	KT_ASSERT_EQ(b.bigpages - a.bigpages, 1);
	KT_ASSERT_EQ(b.bigactive - a.bigactive, 1);
	KT_ASSERT(b.pscans >= a.pscans && b.bscans > a.bscans);
	KT_ASSERT_EQ(b.total, b.pages + b.bigactive);
	KT_ASSERT_EQ(b.used, (b.allocated + PAGE_SIZE - 1) / PAGE_SIZE + b.bigactive);
	unsigned long listed = 0;
	for (int i = 0; i < b.nlists; i++) {
		listed += b.lpages[i];
		KT_ASSERT(b.unused[i] <= b.lpages[i] * PAGE_SIZE && b.biggest[i] <= b.unused[i]);
		KT_ASSERT(b.frags[i] >= b.lpages[i]);
	}
	KT_ASSERT(listed <= b.pages);
	/* kmem's per-list lines: the holes by size are the list's free blocks, the searches add up. */
	unsigned long searches = 0, pscans = 0, bscans = 0;
	for (int i = 0; i < b.nlists; i++) {
		unsigned long holes = 0, top = 0;
		for (int k = 0; k < SLOB_HOLE_BUCKETS; k++) {
			holes += b.holes[i][k];
			if (b.holes[i][k])
				top = 16UL << k;
		}
		KT_ASSERT_EQ(holes, b.frags[i]);
		/* The biggest block is in the last bucket that counts any. */
		KT_ASSERT(!holes || (b.biggest[i] <= top && (top == 16 || b.biggest[i] > top / 2)));
		searches += b.searches[i];
		pscans += b.lpscans[i];
		bscans += b.lbscans[i];
		KT_ASSERT(b.newpages[i] <= b.searches[i]);
	}
	KT_ASSERT_EQ(searches, b.allocs);
	KT_ASSERT_EQ(pscans, b.pscans);
	KT_ASSERT_EQ(bscans, b.bscans);
	/* The 100 blocks of 320 bytes searched their list (a 300-byte kmalloc with its header). */
	unsigned int l = slob_list_for(320);
	KT_ASSERT_EQ(b.searches[l] - a.searches[l], 100);
	/* The live data fit in fewer pages than the heap holds. */
	KT_ASSERT(b.used <= b.total);
	for (int i = 0; i < 100; i++)
		kfree(p[i]);
	kfree(big);
	KT_ASSERT(read_stats(&b) == 0);
	KT_ASSERT_EQ(b.kactive, a.kactive);
	KT_ASSERT_EQ(b.allocated, a.allocated);
	KT_ASSERT_EQ(b.bigactive, a.bigactive);
	KT_ASSERT(heap_ok());
}

KTEST(slob_slabinfo_and_meminfo)
{
	struct kmem_cache *s = kmem_cache_create("slob_info", 200, 0, 0, NULL);
	void *p[300];

	KT_ASSERT(s);
	slab_quiesce();
	long pages0 = slab_pages_now();
	for (int i = 0; i < 300; i++)
		p[i] = kmem_cache_alloc(s, GFP);
	/* 300 * 200 bytes: at least 15 pages more. */
	KT_ASSERT(slab_pages_now() - pages0 >= 15);
	char *info = kt_read_checked("/proc/slabinfo");
	KT_ASSERT(info);
	char *line = strstr(info, "\nslob_info ");
	unsigned long active, num;
	unsigned int objsize, perslab, pps;
	KT_ASSERT(line);
	KT_ASSERT(sscanf(line + 1, "slob_info %lu %lu %u %u %u", &active, &num, &objsize, &perslab, &pps) == 5);
	free(info);
	KT_ASSERT_EQ(active, 300);
	KT_ASSERT_EQ(num, 300);
	KT_ASSERT_EQ(perslab, 0);
	char *mi = kt_read_checked("/proc/meminfo");
	KT_ASSERT(mi);
	unsigned long slab_kb = 0;
	char *sl = strstr(mi, "\nSlab:");
	KT_ASSERT(sl && sscanf(sl + 1, "Slab: %lu kB", &slab_kb) == 1);
	free(mi);
	KT_ASSERT(slab_kb >= 15 * 4);
	for (int i = 0; i < 300; i++)
		kmem_cache_free(s, p[i]);
	slab_quiesce();
	/* Every page these objects used is wholly free again: back to the page allocator. */
	KT_ASSERT_EQ(slab_pages_now(), pages0);
	kmem_cache_destroy(s);
	KT_ASSERT(heap_ok());
}

KTEST(slob_debug_redzone_poison)
{
	if (!debug_on()) {
		fprintf(stderr, "  skipped: needs slab_debug=ZP (the @debug variant)\n");
		return;
	}
	unsigned char *p = kmalloc(10, GFP);
	KT_ASSERT(p);
	p[10] = 0;
	BAD(kfree(p), "Right Redzone overwritten");
	struct kmem_cache *s = kmem_cache_create("slob_dbg", 30, 0, 0, NULL);
	KT_ASSERT(s && (kmem_cache_flags(0, "slob_dbg") & SLAB_RED_ZONE));
	unsigned char *o = kmem_cache_alloc(s, GFP), *o2 = kmem_cache_alloc(s, GFP);
	KT_ASSERT(o && o2);
	o[30] = 0;
	BAD(kmem_cache_free(s, o), "Right Redzone overwritten");
	/* Poisoned when freed: past the heap's encoding (4 bytes), the block (red zone in) reads 0x6b. */
	kmem_cache_free(s, o2);
	KT_ASSERT(slab_check_byte(o2 + 4, 36, 0x6b) == 0);
	kmem_cache_destroy(s);
	KT_ASSERT(heap_ok());
}

/* Allocate @size (a cache's object if @s) until the block holds @at; all freed again. */
static void *alloc_over(struct kmem_cache *s, size_t size, const unsigned char *at)
{
	void *p[64], *hit = NULL;
	int n = 0;

	while (n < 64 && !hit) {
		unsigned char *q = s ? kmem_cache_alloc(s, GFP) : kmalloc(size, GFP);
		if (!q)
			break;
		p[n++] = q;
		/* A kmalloc block starts with its 16-byte header. */
		if (at >= q - (s ? 0 : 16) && at < q + size)
			hit = q;
	}
	while (n--)
		s ? kmem_cache_free(s, p[n]) : kfree(p[n]);
	return hit;
}

KTEST(slob_debug_write_after_free)
{
	if (!debug_on()) {
		fprintf(stderr, "  skipped: needs slab_debug=ZP (the @debug variant)\n");
		return;
	}
	void *hit;
	/*
	 * kmalloc: a byte written after the free, found when the memory is
	 * handed out again.  Its neighbours stay live: a page wholly free goes
	 * back to the page allocator, and what is written there is not the
	 * heap's to see.
	 */
	unsigned char *k[3];
	for (int j = 0; j < 3; j++)
		KT_ASSERT((k[j] = kmalloc(1000, GFP)));
	kfree(k[1]);
	k[1][500] = 0;
	BAD(hit = alloc_over(NULL, 1000, k[1] + 500), "Poison overwritten");
	KT_ASSERT(hit);
	kfree(k[0]);
	kfree(k[2]);
	KT_ASSERT(heap_ok());

	/* A cache's object: the same. */
	struct kmem_cache *s = kmem_cache_create("slob_waf", 200, 0, 0, NULL);
	KT_ASSERT(s);
	unsigned char *o[3];
	for (int j = 0; j < 3; j++)
		KT_ASSERT((o[j] = kmem_cache_alloc(s, GFP)));
	kmem_cache_free(s, o[1]);
	memset(o[1] + 100, 0x41, 16);
	BAD(hit = alloc_over(s, 200, o[1] + 100), "Poison overwritten");
	KT_ASSERT(hit);
	kmem_cache_free(s, o[0]);
	kmem_cache_free(s, o[2]);
	KT_ASSERT(heap_ok());

	/* Found when the written block merges with its neighbour below, freed after the write. */
	unsigned char *x[8];
	int i;
	for (i = 0; i < 8; i++)
		x[i] = kmalloc(1000, GFP);	/* 1024-byte blocks with the header and the red zone */
	for (i = 0; i + 1 < 8; i++)
		if (x[i] && x[i + 1] == x[i] + 1024)
			break;
	KT_ASSERT(i + 1 < 8);
	kfree(x[i + 1]);
	x[i + 1][300] = 0;
	BAD(kfree(x[i]), "merged with a block freed next to it");
	x[i] = x[i + 1] = NULL;
	for (int k = 0; k < 8; k++)
		kfree(x[k]);
	KT_ASSERT(heap_ok());

	/*
	 * A page left wholly free is kept: a write into it after the free that
	 * emptied it is seen when it goes back (or is used again).  A block of
	 * 4000 bytes has its page to itself.
	 */
	slab_quiesce();
	long pages0 = slab_pages_now();
	unsigned char *w = kmalloc(4000, GFP);
	KT_ASSERT(w && slab_pages_now() == pages0 + 1);
	kfree(w);
	KT_ASSERT_EQ(slab_pages_now(), pages0 + 1);
	w[3000] = 0;
	BAD(slob_shrink(), "given back to the page allocator: written after free");
	KT_ASSERT_EQ(slab_pages_now(), pages0);

	/* Nothing written: allocations and frees of every size say nothing. */
	unsigned long r0 = kmem_report_count();
	void *q[200];
	for (int k = 0; k < 200; k++)
		q[k] = kmalloc(1 + (size_t)k * 13 % 3000, GFP);
	for (int k = 0; k < 200; k += 2)
		kfree(q[k]);
	for (int k = 1; k < 200; k += 2)
		kfree(q[k]);
	KT_ASSERT_EQ(kmem_report_count(), r0);
	kmem_cache_destroy(s);
	KT_ASSERT(heap_ok());
}

KTEST_MAIN(if (slab_test_boot("mem=64M")) return 1;
	   if (slab_allocator != SLAB_ALLOCATOR_SLOB) {
		   fprintf(stderr, "SLOB's own test: boot with slab=slob (test_slob_api.env)\n");
		   return 1;
	   })
