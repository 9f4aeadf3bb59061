// SPDX-License-Identifier: MIT
/*
 * The malloc API of libkmem-malloc.so, as a program sees it under
 * LD_PRELOAD: the details real programs depend on (errno, alignment, realloc
 * in place, usable size, huge and impossible sizes, mallinfo2/malloc_stats),
 * memory going back to the OS, fork from a multi-threaded process, many
 * short-lived threads, and free() of pointers kmem never handed out.
 *
 * The test binary re-executes itself with LD_PRELOAD set to
 * $KMEM_BINARY_DIR/lib/libkmem-malloc.so (tests/test_malloc_api.env) and
 * "--child"; the child runs the cases.  (The binary also holds a static copy
 * of libkmem, which nothing here uses: kmem_read is looked up in the .so.)
 * Skipped (77) in sanitizer builds, where preloading cannot work, and when
 * the .so is missing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktest.h"
#include "lib/kt_util.h"

#define KiB (1024UL)
#define MiB (1024UL * 1024)

/*
 * Every call goes through a volatile pointer: gcc knows what malloc() does
 * and would otherwise fold or drop calls whose result it can predict
 * (malloc/free pairs, malloc(SIZE_MAX), realloc(p, 0)).
 */
static void *(*volatile k_malloc)(size_t) = malloc;
static void *(*volatile k_calloc)(size_t, size_t) = calloc;
static void *(*volatile k_realloc)(void *, size_t) = realloc;
static void *(*volatile k_reallocarray)(void *, size_t, size_t) = reallocarray;
static void (*volatile k_free)(void *) = free;
static int (*volatile k_posix_memalign)(void **, size_t, size_t) = posix_memalign;
static void *(*volatile k_aligned_alloc)(size_t, size_t) = aligned_alloc;
static void *(*volatile k_memalign)(size_t, size_t) = memalign;
static void *(*volatile k_valloc)(size_t) = valloc;
static void *(*volatile k_pvalloc)(size_t) = pvalloc;
static size_t (*volatile k_usable)(void *) = malloc_usable_size;

static void *kmem_so;		/* dlopen(RTLD_NOLOAD) handle of the preloaded library */
static ssize_t (*so_kmem_read)(const char *, char *, size_t);

/* Booted with slab=slob?  Its statistics file exists only then. */
static bool on_slob(void)
{
	char b[64];

	return so_kmem_read("/sys/kernel/debug/slob/stats", b, sizeof(b)) > 0;
}

static int aligned(const void *p, size_t a)
{
	return ((uintptr_t)p & (a - 1)) == 0;
}

static void fill(void *p, size_t n, unsigned int seed)
{
	unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		c[i] = (unsigned char)(seed + i * 7 + (i >> 8));
}

static int check_fill(const void *p, size_t n, unsigned int seed)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		if (c[i] != (unsigned char)(seed + i * 7 + (i >> 8)))
			return 0;
	return 1;
}

static int all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		if (c[i])
			return 0;
	return 1;
}

/* Threads in this process (/proc/self/status), -1 if unknown. */
static int kt_nr_threads(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Threads:", 8))
			n = atoi(line + 8);
	fclose(f);
	return n;
}

/*
 * With read(), not stdio: no malloc.  On SLOB a malloc and free on an
 * empty heap take a page and give it back (a wholly free page goes back at
 * once), and the reaper waits for a period without page allocator activity.
 */
static unsigned long rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	char b[128];
	int fd = open("/proc/self/statm", O_RDONLY);

	if (fd >= 0) {
		ssize_t n = read(fd, b, sizeof(b) - 1);
		b[n > 0 ? n : 0] = '\0';
		if (sscanf(b, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		close(fd);
	}
	return resident * (unsigned long)sysconf(_SC_PAGESIZE);
}

/* "<name> <value>" from kmem's /proc/vmstat (the preloaded kmem's), or -1. */
static long vmstat(const char *name)
{
	static char buf[1 << 16];
	ssize_t n = so_kmem_read("/proc/vmstat", buf, sizeof(buf) - 1);
	size_t nl = strlen(name);

	if (n < 0)
		return -1;
	buf[n < (ssize_t)sizeof(buf) ? n : (ssize_t)sizeof(buf) - 1] = '\0';
	for (char *line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (!strncmp(line, name, nl) && line[nl] == ' ')
			return strtol(line + nl + 1, NULL, 10);
	return -1;
}

static unsigned long rnd(unsigned long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A size spread over every class: mostly small, some large, few huge. */
static size_t random_size(unsigned long *s)
{
	unsigned long r = rnd(s);

	switch (r % 100) {
	case 0:
		return 4 * MiB + (r >> 8) % (4 * MiB);		/* huge: own mapping */
	case 1 ... 4:
		return 8 * KiB + (r >> 8) % (1 * MiB);		/* pages */
	default:
		return 1 + (r >> 8) % (r & 0x100 ? 512 : 8192);	/* slab */
	}
}

/* ---- is this really kmem? ------------------------------------------- */

/* The first malloc(1) of the process (it boots kmem): recorded by child_main(). */
static void *first_block;
static size_t first_block_usable;

KTEST(first_malloc)
{
	/* Like any other: at least 16 bytes, 16-aligned, from the 16-byte bucket. */
	KT_ASSERT(first_block != NULL);
	KT_EXPECT(aligned(first_block, 16));
	KT_EXPECT(first_block_usable >= 16);
	void *p = k_malloc(1);
	KT_ASSERT(p != NULL);
	KT_EXPECT(k_usable(p) == first_block_usable);
	k_free(p);
	k_free(first_block);
}

KTEST(runs_on_kmem)
{
	KT_ASSERT(kmem_so != NULL);
	KT_ASSERT(so_kmem_read != NULL);
	/* malloc as every library sees it is the preloaded one. */
	KT_ASSERT(dlsym(RTLD_DEFAULT, "malloc") == dlsym(kmem_so, "malloc"));
	KT_ASSERT(dlsym(RTLD_DEFAULT, "free") == dlsym(kmem_so, "free"));
	KT_ASSERT(dlsym(RTLD_DEFAULT, "posix_memalign") == dlsym(kmem_so, "posix_memalign"));

	char buf[8192];
	KT_ASSERT(so_kmem_read("/proc/meminfo", buf, sizeof(buf)) > 0);
	long before = vmstat("pgalloc_normal");
	KT_ASSERT(before >= 0);
	char *p = k_malloc(1 * MiB);
	KT_ASSERT(p != NULL);
	memset(p, 1, 1 * MiB);
	long after = vmstat("pgalloc_normal");
	KT_EXPECT(after - before >= 256);	/* the MiB came from kmem's buddy allocator */
	k_free(p);
}

/* ---- malloc, free, calloc ------------------------------------------ */

KTEST(malloc_free_basic)
{
	static const size_t sizes[] = { 1, 7, 8, 15, 16, 17, 24, 31, 32, 48, 63, 64, 65, 96, 100,
					127, 128, 129, 192, 255, 256, 257, 500, 511, 512, 513,
					1000, 1024, 2047, 2048, 2049, 4095, 4096, 4097, 8191,
					8192, 8193, 12288, 65536, 65537, 1 * MiB, 4 * MiB - 1,
					4 * MiB, 4 * MiB + 1, 9 * MiB };
	enum { N = sizeof(sizes) / sizeof(sizes[0]) };
	void *p[N];

	for (int i = 0; i < N; i++) {
		p[i] = k_malloc(sizes[i]);
		KT_ASSERT(p[i] != NULL);
		fill(p[i], sizes[i], (unsigned int)i);
	}
	for (int i = 0; i < N; i++)
		KT_EXPECT(check_fill(p[i], sizes[i], (unsigned int)i));
	for (int i = 0; i < N; i++)
		k_free(p[i]);
}

KTEST(calloc_zeroed)
{
	static const size_t sizes[] = { 1, 16, 100, 1000, 4096, 8000, 8192, 10000, 100000,
					1 * MiB, 3 * MiB, 4 * MiB, 5 * MiB };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		/* Dirty memory of that size first, so calloc gets recycled blocks. */
		for (int round = 0; round < 3; round++) {
			void *d[8];
			for (int j = 0; j < 8; j++) {
				d[j] = k_malloc(n);
				KT_ASSERT(d[j] != NULL);
				memset(d[j], 0xa5, n);
			}
			for (int j = 0; j < 8; j++)
				k_free(d[j]);
			unsigned char *c = k_calloc(1, n);
			KT_ASSERT(c != NULL);
			if (!all_zero(c, n)) {
				KT_FAIL("calloc(1, %zu) not zeroed", n);
				k_free(c);
				return;
			}
			k_free(c);
			c = k_calloc(n, 1);
			KT_ASSERT(c != NULL);
			KT_EXPECT(all_zero(c, n));
			k_free(c);
		}
	}
	void *z = k_calloc(0, 0);
	KT_EXPECT(z != NULL);
	k_free(z);
}

KTEST(calloc_overflow)
{
	errno = 0;
	KT_EXPECT(k_calloc(SIZE_MAX / 2, 3) == NULL);
	KT_EXPECT(errno == ENOMEM);
	errno = 0;
	KT_EXPECT(k_calloc((size_t)1 << 33, (size_t)1 << 33) == NULL);
	KT_EXPECT(errno == ENOMEM);
	errno = 0;
	KT_EXPECT(k_calloc(1, SIZE_MAX) == NULL);
	KT_EXPECT(errno == ENOMEM);
}

KTEST(malloc_zero_unique)
{
	enum { N = 200 };
	void *p[N];

	for (int i = 0; i < N; i++) {
		p[i] = k_malloc(0);
		KT_ASSERT(p[i] != NULL);
		KT_EXPECT(aligned(p[i], 16));
		for (int j = 0; j < i; j++)
			if (p[j] == p[i]) {
				KT_FAIL("malloc(0) returned %p twice", p[i]);
				return;
			}
	}
	for (int i = 0; i < N; i++)
		k_free(p[i]);
}

KTEST(free_null_and_sized)
{
	void (*free_sized)(void *, size_t) = (void (*)(void *, size_t))dlsym(RTLD_DEFAULT, "free_sized");
	void (*free_aligned_sized)(void *, size_t, size_t) =
		(void (*)(void *, size_t, size_t))dlsym(RTLD_DEFAULT, "free_aligned_sized");

	k_free(NULL);
	KT_ASSERT(free_sized != NULL);
	KT_ASSERT(free_aligned_sized != NULL);
	free_sized(NULL, 0);
	free_aligned_sized(NULL, 64, 0);
	static const size_t sizes[] = { 1, 100, 5000, 100000, 6 * MiB };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *p = k_malloc(sizes[i]);
		KT_ASSERT(p != NULL);
		memset(p, 1, sizes[i]);
		free_sized(p, sizes[i]);
		void *q;
		KT_ASSERT(k_posix_memalign(&q, 256, sizes[i]) == 0);
		memset(q, 2, sizes[i]);
		free_aligned_sized(q, 256, sizes[i]);
		q = k_aligned_alloc(4096, sizes[i]);
		KT_ASSERT(q != NULL);
		free_aligned_sized(q, 4096, sizes[i]);
	}
}

/* ---- realloc -------------------------------------------------------- */

KTEST(realloc_null_is_malloc)
{
	char *p = k_realloc(NULL, 100);
	KT_ASSERT(p != NULL);
	KT_EXPECT(k_usable(p) >= 100);
	memset(p, 3, 100);
	k_free(p);
	p = k_realloc(NULL, 10 * MiB);
	KT_ASSERT(p != NULL);
	memset(p, 3, 10 * MiB);
	k_free(p);
}

KTEST(realloc_grow_keeps_contents)
{
	/* Through every class: slab -> slab -> pages -> huge -> bigger huge, and back down. */
	static const size_t steps[] = { 1, 10, 17, 100, 200, 1000, 5000, 8192, 9000, 70000,
					1 * MiB, 4 * MiB, 5 * MiB, 20 * MiB, 40 * MiB,
					6 * MiB, 3 * MiB, 50000, 3000, 64, 5 };
	size_t have = 0;
	unsigned char *p = NULL;

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		size_t n = steps[i];
		unsigned char *q = k_realloc(p, n);
		if (!q) {
			KT_FAIL("realloc(%zu -> %zu) failed", have, n);
			k_free(p);
			return;
		}
		size_t keep = have < n ? have : n;
		if (!check_fill(q, keep, 0x42)) {
			KT_FAIL("realloc(%zu -> %zu) lost the contents", have, n);
			k_free(q);
			return;
		}
		KT_EXPECT(aligned(q, 16));
		KT_EXPECT(k_usable(q) >= n);
		fill(q, n, 0x42);
		p = q;
		have = n;
	}
	k_free(p);
}

KTEST(realloc_in_place)
{
	/* { first size, second size }: the second fits the first block; USABLE
	 * grows to the first block's usable size, whatever the size classes are. */
	enum { USABLE = 0 };
	static const size_t cases[][2] = {
		{ 1000, 900 }, { 1000, USABLE }, { 100, USABLE }, { 100, 90 }, { 5000, USABLE },
		{ 5000, 4500 }, { 1 * MiB, 1 * MiB - 100 }, { 1 * MiB - 100, 1 * MiB },
		{ 3 * MiB, 3 * MiB + 4096 }, { 16 * MiB, 15 * MiB }, { 5 * MiB + 1, 5 * MiB + 4000 },
		{ 9 * MiB, 9 * MiB - 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t a = cases[i][0], b = cases[i][1];
		unsigned char *p = k_malloc(a);
		KT_ASSERT(p != NULL);
		if (b == USABLE) {
			b = k_usable(p);
			KT_ASSERT(b > a);	/* a real growth: a is not a class size */
		}
		fill(p, a, 9);
		unsigned char *q = k_realloc(p, b);
		KT_ASSERT(q != NULL);
		if (q != p)
			KT_FAIL("realloc(%zu -> %zu) moved the block (usable size %zu)", a, b,
				k_usable(q));
		KT_EXPECT(check_fill(q, a < b ? a : b, 9));
		k_free(q);
	}
}

KTEST(realloc_zero_frees)
{
	/* glibc: realloc(p, 0) frees p and returns NULL. */
	void *p = k_malloc(200);
	KT_ASSERT(p != NULL);
	errno = 0;
	void *q = k_realloc(p, 0);
	KT_EXPECT(q == NULL);
	/* The slot is free again: this thread's freelist hands it out next. */
	void *r = k_malloc(200);
	KT_EXPECT(r == p);
	k_free(r);
	p = k_malloc(7 * MiB);
	KT_ASSERT(p != NULL);
	KT_EXPECT(k_realloc(p, 0) == NULL);
}

KTEST(realloc_failure_keeps_block)
{
	static const size_t sizes[] = { 100, 100000, 6 * MiB };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *p = k_malloc(sizes[i]);
		KT_ASSERT(p != NULL);
		fill(p, sizes[i], 5);
		errno = 0;
		KT_EXPECT(k_realloc(p, SIZE_MAX - 4096) == NULL);
		KT_EXPECT(errno == ENOMEM);
		KT_EXPECT(k_realloc(p, (size_t)1 << 50) == NULL);
		KT_EXPECT(check_fill(p, sizes[i], 5));
		k_free(p);
	}
}

KTEST(reallocarray_overflow)
{
	unsigned char *p = k_reallocarray(NULL, 100, 8);
	KT_ASSERT(p != NULL);
	fill(p, 800, 1);
	errno = 0;
	KT_EXPECT(k_reallocarray(p, SIZE_MAX / 4, 8) == NULL);
	KT_EXPECT(errno == ENOMEM);
	KT_EXPECT(check_fill(p, 800, 1));	/* untouched */
	p = k_reallocarray(p, 1000, 8);
	KT_ASSERT(p != NULL);
	KT_EXPECT(check_fill(p, 800, 1));
	k_free(p);
}

/* ---- alignment ------------------------------------------------------ */

static const size_t align_sizes[] = { 0, 1, 8, 17, 100, 512, 4095, 4096, 5000, 8192, 65537,
				      1 * MiB + 1, 3 * MiB, 4 * MiB, 5 * MiB, 9 * MiB + 123 };

KTEST(posix_memalign_einval)
{
	static const size_t bad[] = { 0, 1, 2, 4, 3, 12, 24, 48, 4097, (size_t)1 << 63 | 1 };
	void *p = (void *)0x1234;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = k_posix_memalign(&p, bad[i], 64);
		if (rc != EINVAL)
			KT_FAIL("posix_memalign(align %zu) = %d, expected EINVAL", bad[i], rc);
		KT_EXPECT(p == (void *)0x1234);	/* *memptr untouched */
	}
}

KTEST(posix_memalign_alignments)
{
	for (size_t a = sizeof(void *); a <= 2 * MiB; a *= 2) {
		for (size_t i = 0; i < sizeof(align_sizes) / sizeof(align_sizes[0]); i++) {
			size_t n = align_sizes[i];
			void *p = NULL;
			int rc = k_posix_memalign(&p, a, n);
			if (rc || !p) {
				KT_FAIL("posix_memalign(align %zu, size %zu) = %d", a, n, rc);
				return;
			}
			if (!aligned(p, a) || k_usable(p) < n) {
				KT_FAIL("posix_memalign(align %zu, size %zu) = %p, usable %zu", a, n,
					p, k_usable(p));
				k_free(p);
				return;
			}
			memset(p, 0x77, n);
			k_free(p);
		}
	}
	/* Beyond the buddy allocator's largest block. */
	for (size_t a = 4 * MiB; a <= 16 * MiB; a *= 2) {
		void *p = NULL;
		KT_ASSERT(k_posix_memalign(&p, a, 100) == 0);
		KT_EXPECT(aligned(p, a));
		k_free(p);
		KT_ASSERT(k_posix_memalign(&p, a, 5 * MiB) == 0);
		KT_EXPECT(aligned(p, a));
		memset(p, 1, 5 * MiB);
		k_free(p);
		/* Size 0: still a mapped block kmem knows, that realloc can grow. */
		KT_ASSERT(k_posix_memalign(&p, a, 0) == 0);
		KT_EXPECT(aligned(p, a) && k_usable(p) > 0);
		*(volatile char *)p = 1;
		void *q = k_realloc(p, 1);
		KT_ASSERT(q);
		k_free(q);
	}
	/* Many live at once: no two overlap, every one aligned. */
	enum { N = 300 };
	static unsigned char *live[N];
	static size_t live_n[N];
	unsigned long s = 12345;
	for (int i = 0; i < N; i++) {
		size_t a = (size_t)16 << (rnd(&s) % 10);
		live_n[i] = 1 + rnd(&s) % 3000;
		KT_ASSERT(k_posix_memalign((void **)&live[i], a, live_n[i]) == 0);
		KT_EXPECT(aligned(live[i], a));
		fill(live[i], live_n[i], (unsigned int)i);
	}
	for (int i = 0; i < N; i++) {
		KT_EXPECT(check_fill(live[i], live_n[i], (unsigned int)i));
		k_free(live[i]);
	}
}

KTEST(aligned_alloc_memalign_valloc_pvalloc)
{
	for (size_t a = 16; a <= 1 * MiB; a *= 4) {
		for (size_t i = 0; i < sizeof(align_sizes) / sizeof(align_sizes[0]); i++) {
			size_t n = align_sizes[i];
			void *p = k_aligned_alloc(a, n);
			void *q = k_memalign(a, n);
			KT_ASSERT(p != NULL && q != NULL);
			KT_EXPECT(aligned(p, a) && aligned(q, a));
			KT_EXPECT(k_usable(p) >= n && k_usable(q) >= n);
			memset(p, 1, n);
			memset(q, 2, n);
			k_free(p);
			k_free(q);
		}
	}
	errno = 0;
	KT_EXPECT(k_aligned_alloc(3, 64) == NULL);
	KT_EXPECT(errno == EINVAL);
	/* memalign rounds a bad alignment up to a power of two, as glibc does. */
	void *p = k_memalign(24, 100);
	KT_ASSERT(p != NULL);
	KT_EXPECT(aligned(p, 32));
	k_free(p);
	errno = 0;
	KT_EXPECT(k_memalign(SIZE_MAX, 1) == NULL);	/* no power of two is that large */
	KT_EXPECT(errno == EINVAL);
	errno = 0;
	KT_EXPECT(k_memalign((size_t)1 << 62, 1) == NULL);
	KT_EXPECT(errno == ENOMEM);

	static const size_t vsizes[] = { 0, 1, 100, 4096, 4097, 10000, 5 * MiB + 1 };
	for (size_t i = 0; i < sizeof(vsizes) / sizeof(vsizes[0]); i++) {
		size_t n = vsizes[i];
		void *v = k_valloc(n);
		KT_ASSERT(v != NULL);
		KT_EXPECT(aligned(v, 4096));
		KT_EXPECT(k_usable(v) >= n);
		memset(v, 3, n);
		k_free(v);
		void *pv = k_pvalloc(n);
		size_t rounded = n ? (n + 4095) & ~(size_t)4095 : 4096;
		KT_ASSERT(pv != NULL);
		KT_EXPECT(aligned(pv, 4096));
		KT_EXPECT(k_usable(pv) >= rounded);
		memset(pv, 4, rounded);
		k_free(pv);
	}
	errno = 0;
	KT_EXPECT(k_pvalloc(SIZE_MAX - 100) == NULL);
	KT_EXPECT(errno == ENOMEM);
}

KTEST(malloc_alignment_every_size)
{
	enum { BATCH = 8 };
	void *p[BATCH];

	/* A few live at once so the blocks are not all the first of a slab. */
	for (size_t n = 1; n <= 20000; n++) {
		for (int j = 0; j < BATCH; j++) {
			p[j] = k_malloc(n);
			if (!p[j] || !aligned(p[j], 16)) {
				KT_FAIL("malloc(%zu) = %p: not 16-aligned", n, p[j]);
				return;
			}
		}
		for (int j = 0; j < BATCH; j++)
			k_free(p[j]);
	}
	for (size_t n = 20000; n <= 64 * MiB; n = n * 5 / 4 + 1) {
		void *q = k_malloc(n);
		void *c = k_calloc(1, n);
		KT_ASSERT(q != NULL && c != NULL);
		KT_EXPECT(aligned(q, 16) && aligned(c, 16));
		k_free(q);
		k_free(c);
	}
}

KTEST(usable_size)
{
	/* Every byte up to malloc_usable_size() is the caller's (glibc allows it). */
	size_t n = 0;

	KT_EXPECT(k_usable(NULL) == 0);
	while (n <= 10 * MiB) {
		unsigned char *a = k_malloc(n), *b = k_malloc(n);
		KT_ASSERT(a != NULL && b != NULL);
		size_t ua = k_usable(a), ub = k_usable(b);
		if (ua < n || ub < n) {
			KT_FAIL("malloc_usable_size(malloc(%zu)) = %zu, %zu", n, ua, ub);
			return;
		}
		fill(a, ua, 1);
		fill(b, ub, 2);
		if (!check_fill(a, ua, 1) || !check_fill(b, ub, 2)) {
			KT_FAIL("writing the usable size of malloc(%zu) (%zu) overwrote a neighbour", n, ua);
			return;
		}
		k_free(a);
		k_free(b);
		n = n < 4096 ? n + 1 : n < 20000 ? n + 61 : n * 9 / 8;
	}
}

/*
 * The slab an object of the class named @name costs, per object, as
 * @pages * 4096 / @objs, from its /proc/slabinfo line; false if none.
 */
static bool slabinfo_cost(const char *buf, const char *name, unsigned long *pages, unsigned long *objs)
{
	char key[48];
	snprintf(key, sizeof(key), "\n%s ", name);
	const char *l = strstr(buf, key);
	unsigned long a, n, sz;
	return l && sscanf(l + strlen(key), "%lu %lu %lu %lu %lu", &a, &n, &sz, objs, pages) == 5 && *objs;
}

/* The cache malloc would use for a class of @size: its own, or kmalloc's bucket. */
static bool class_slabinfo_cost(const char *buf, size_t size, unsigned long *pages, unsigned long *objs)
{
	char name[32];
	snprintf(name, sizeof(name), "malloc-%zu", size);
	if (slabinfo_cost(buf, name, pages, objs))
		return true;
	if (size < 1024 || size % 1024)
		snprintf(name, sizeof(name), "kmalloc-%zu", size);
	else
		snprintf(name, sizeof(name), "kmalloc-%zuk", size / 1024);
	return slabinfo_cost(buf, name, pages, objs);
}

KTEST(size_classes)
{
	/*
	 * Every 16 B up to 128, eight classes per doubling from there to 4
	 * KiB, then the sizes that fill a 128 KiB slab k times (k = 31 down
	 * to 9), less those whose objects cost no less slab than a larger
	 * class's (size_class.c): the usable size is the class.
	 * Classes that are kmalloc buckets come from kmalloc-<n>; the others
	 * from malloc-<n>, listed in /proc/slabinfo.  With slab_debug= the
	 * slots grow and other classes may win: the table is for the
	 * defaults, the rule is checked in both.
	 */
	static const size_t cases[][2] = {
		{ 1, 16 }, { 17, 32 }, { 33, 48 }, { 100, 112 }, { 129, 144 }, { 200, 208 },
		{ 257, 288 }, { 300, 320 }, { 500, 512 }, { 513, 576 }, { 1000, 1024 }, { 1100, 1152 },
		{ 1537, 1664 }, { 2100, 2304 }, { 3300, 3584 }, { 4096, 4096 }, { 4100, 4224 },
		{ 4376, 4512 }, { 5000, 5040 }, { 5500, 5696 }, { 7000, 7280 }, { 8000, 8192 },
		{ 8192, 8192 },
		/*
		 * Past kmalloc's caches: a class while it costs less slab than a
		 * buddy block (their slabs 128 KiB).
		 */
		{ 8193, 8736 }, { 8480, 8736 }, { 10240, 10912 }, { 11000, 11904 }, { 12000, 16384 },
		{ 12289, 13104 }, { 14337, 14560 }, { 14561, 16384 }, { 16384, 16384 }, { 16385, 32768 },
	};
	static char buf[256 * 1024];
	char rz[8] = "";

	if (on_slob()) {
		/*
		 * SLOB: no classes (its kfree needs the size header cache objects
		 * lack): a kmalloc of the size asked for, its block rounded up to
		 * 16 bytes with the header, which is the usable size.
		 */
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			size_t n = cases[i][0], want = n < 4096 - 16 ? (n + 15) & ~(size_t)15 : 0;
			void *p = k_malloc(n);
			KT_ASSERT(p != NULL);
			if (want && k_usable(p) != want)
				KT_FAIL("slob: malloc(%zu): usable size %zu, want %zu", n, k_usable(p), want);
			KT_EXPECT(k_usable(p) >= n);
			KT_EXPECT(aligned(p, 16));
			k_free(p);
		}
		KT_ASSERT(so_kmem_read("/proc/slabinfo", buf, sizeof(buf)) > 0);
		KT_EXPECT(strstr(buf, "\nmalloc-") == NULL && strstr(buf, "\nkmalloc-") == NULL);
		return;
	}
	/*
	 * The classes above are SLUB's (its slabs); on SLAB (no
	 * /sys/kernel/slab) they follow SLAB's slabs, and only the rules
	 * below are checked.
	 */
	bool slub = so_kmem_read("/sys/kernel/slab/kmalloc-512/red_zone", rz, sizeof(rz)) > 0;
	bool debug = !slub || rz[0] == '1';
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		void *p = k_malloc(cases[i][0]);
		KT_ASSERT(p != NULL);
		if (!debug && k_usable(p) != cases[i][1])
			KT_FAIL("malloc(%zu): usable size %zu, want the class %zu", cases[i][0],
				k_usable(p), cases[i][1]);
		KT_EXPECT(k_usable(p) >= cases[i][0]);
		KT_EXPECT(aligned(p, 16));
		k_free(p);
	}
	KT_ASSERT(so_kmem_read("/proc/slabinfo", buf, sizeof(buf)) > 0);
	KT_EXPECT(strstr(buf, "\nmalloc-320 ") != NULL);
	if (!debug) {
		/* 29 to a 128 KiB slab (32 pages), 4519 bytes each. */
		KT_EXPECT(strstr(buf, "\nmalloc-4512 ") != NULL);
		unsigned long pages = 0, objs = 0;
		KT_EXPECT(slabinfo_cost(buf, "malloc-4512", &pages, &objs) && pages == 32 && objs == 29);
		/* 8 in a 128 KiB slab, 16384 bytes each: no less than a buddy block. */
		KT_EXPECT(strstr(buf, "\nmalloc-16384 ") == NULL);
	}
	/* That one is kmalloc-512, unless slab_debug= red-zoned it (its slots grow to 1536 B). */
	if (slub)
		KT_EXPECT((strstr(buf, "\nmalloc-512 ") == NULL) == !debug);

	/*
	 * The rule, for every size in 16-byte steps: no class of
	 * the size or larger costs less slab per object than the one malloc
	 * uses, and none as little is larger (smaller, with red zones).  Past 8 KiB, a size without a
	 * class is a buddy block, and a class must cost less than the pages
	 * of the block the size covers.
	 */
	/*
	 * With red zones (slab_debug with Z, or bare slab_debug: every flag)
	 * of equals the smallest, so that the red zone follows the block.
	 */
	const char *cl = getenv("KMEM_CMDLINE"), *dbg = cl ? strstr(cl, "slab_debug") : NULL;
	bool redzoned = false;
	if (dbg) {
		dbg += strlen("slab_debug");
		redzoned = *dbg != '=';
		for (dbg += *dbg == '='; *dbg && *dbg != ' ' && *dbg != ','; dbg++)
			redzoned |= *dbg == 'Z' || *dbg == 'z';
	}
	for (size_t n = 16; n <= 16384; n += 16) {
		void *p = k_malloc(n);
		KT_ASSERT(p != NULL);
		size_t u = k_usable(p);
		k_free(p);
		unsigned long up, uo, cp, co;
		size_t block = 4096;
		while (block < n)
			block *= 2;
		if (!class_slabinfo_cost(buf, u, &up, &uo)) {
			if (n <= 8192 || u != block) {
				KT_FAIL("malloc(%zu): usable %zu, neither a class in /proc/slabinfo nor a %zu-byte block",
					n, u, block);
				return;
			}
			up = (n + 4095) / 4096;	/* the pages of the block the size covers */
			uo = 1;
		} else if (n > 8192 && up * 4096 >= ((n + 4095) & ~4095ul) * uo) {
			/* The block's pages past the size are never touched: they cost nothing. */
			KT_FAIL("malloc(%zu): class %zu costs %lu pages / %lu objects, no less than a buddy block",
				n, u, up, uo);
			return;
		}
		for (size_t c = n; c <= 16384; c += 16) {
			if (c == u || !class_slabinfo_cost(buf, c, &cp, &co))
				continue;
			/* cp/co < up/uo, or equal and larger (smaller with red zones) */
			if (cp * uo < up * co || (cp * uo == up * co && (redzoned ? c < u : c > u))) {
				KT_FAIL("malloc(%zu) uses class %zu (%lu pages / %lu objects), but class %zu "
					"costs %lu pages / %lu objects", n, u, up, uo, c, cp, co);
				return;
			}
		}
	}
}

/* ---- huge and impossible sizes ------------------------------------- */

KTEST(huge_64mib)
{
	size_t n = 64 * MiB;
	struct mallinfo2 before = mallinfo2();
	unsigned char *p = k_malloc(n);

	KT_ASSERT(p != NULL);
	for (size_t i = 0; i < n; i += 4096)
		p[i] = (unsigned char)(i >> 12);
	struct mallinfo2 during = mallinfo2();
	KT_EXPECT(during.hblks >= before.hblks + 1);
	KT_EXPECT(during.hblkhd >= before.hblkhd + n);
	for (size_t i = 0; i < n; i += 4096)
		if (p[i] != (unsigned char)(i >> 12)) {
			KT_FAIL("64 MiB block: page %zu lost its byte", i >> 12);
			break;
		}
	k_free(p);
	struct mallinfo2 after = mallinfo2();
	KT_EXPECT(after.hblkhd == before.hblkhd);

	p = k_calloc(n, 1);
	KT_ASSERT(p != NULL);
	for (size_t i = 0; i < n; i += 4093)
		if (p[i]) {
			KT_FAIL("calloc(64 MiB) byte %zu not zero", i);
			break;
		}
	k_free(p);
}

static long minor_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/*
 * Freed blocks over 4 MiB stay resident for reuse (malloc.huge_retain_mb,
 * 64 MiB by default): the next block of about that size is the same
 * memory, without a system call or page faults.  calloc gets it too,
 * cleared; a bigger block takes the freed one and the fresh memory after
 * it.  malloc_trim() gives them back.
 */
KTEST(huge_blocks_are_reused)
{
	size_t n = 8 * MiB;
	unsigned char *p = k_malloc(n);

	KT_ASSERT(p != NULL);
	memset(p, 0xa5, n);
	k_free(p);
	unsigned char *q = k_malloc(n - 100 * 1024);	/* a little smaller: the same block */
	KT_EXPECT(q == p);
	KT_ASSERT(q != NULL);
	q[0] = 1;
	KT_EXPECT(k_usable(q) >= n - 100 * 1024);
	k_free(q);

	long f0 = minor_faults();
	unsigned char *z = k_calloc(n, 1);		/* the freed block, cleared */
	KT_ASSERT(z != NULL);
	KT_EXPECT(z == p);
	for (size_t i = 0; i < n; i += 4093)
		if (z[i]) {
			KT_FAIL("calloc(8 MiB) after a freed block: byte %zu not zero", i);
			break;
		}
	KT_EXPECT(z[n - 1] == 0);
	long f1 = minor_faults();
	if (f1 - f0 > 200)
		KT_FAIL("calloc(8 MiB) of a freed block faulted %ld pages", f1 - f0);
	k_free(z);
	/* Bigger: the freed block and the fresh memory after it; only that faults in. */
	unsigned char *g = k_calloc(2 * n, 1);
	KT_ASSERT(g != NULL);
	for (size_t i = 0; i < 2 * n; i += 4096)
		if (g[i]) {
			KT_FAIL("calloc(16 MiB) over a freed block: byte %zu not zero", i);
			break;
		}
	memset(g, 0x11, 2 * n);
	long f2 = minor_faults();
	if (f2 - f1 > (long)(n / 4096) + 300)
		KT_FAIL("calloc(16 MiB) over a freed 8 MiB block faulted %ld pages", f2 - f1);
	k_free(g);
	malloc_trim(0);
	/* Much smaller: the start of a freed one; the rest stays free, for the block to grow into. */
	unsigned char *big = k_malloc(n);
	KT_ASSERT(big != NULL);
	memset(big, 0x5a, n);
	k_free(big);
	unsigned char *r = k_malloc(5 * MiB);
	KT_ASSERT(r != NULL);
	KT_EXPECT(r == big);
	KT_EXPECT(r[0] == 0x5a && r[5 * MiB - 1] == 0x5a);	/* the same pages, not a fresh mapping */
	unsigned char *r2 = k_realloc(r, n);			/* grows into the rest: in place */
	KT_EXPECT(r2 == r);
	k_free(r2 ? r2 : r);

	/* Twenty 8 MiB blocks freed: at most 64 MiB stay resident. */
	unsigned char *v[20];
	for (int i = 0; i < 20; i++) {
		v[i] = k_malloc(n);
		KT_ASSERT(v[i] != NULL);
		memset(v[i], i, n);
	}
	unsigned long with = rss_bytes();
	for (int i = 0; i < 20; i++)
		k_free(v[i]);
	unsigned long after = rss_bytes();
	KT_EXPECT(with - after >= 20 * n - 64 * MiB - 8 * MiB);
	malloc_trim(0);
	unsigned long trimmed = rss_bytes();
	KT_EXPECT(with - trimmed >= 20 * n - 8 * MiB);	/* all of them, after the trim */
}

/*
 * Freed blocks next to each other join: a block as big as two of them
 * takes their pages, resident, and RSS does not grow by its size.  A
 * block bigger than every free range comes from fresh memory, and the
 * freed ones stay for blocks that fit them.  calloc() clears what they
 * held; malloc_trim() gives them back.
 */
KTEST(huge_freed_neighbours_join)
{
	size_t n = 6 * MiB;
	unsigned char *a[2], *sep;

	malloc_trim(0);
	a[0] = k_malloc(n);
	a[1] = k_malloc(n);
	sep = k_malloc(n);
	KT_ASSERT(a[0] && a[1] && sep);
	memset(a[0], 0xa0, n);
	memset(a[1], 0xa1, n);
	memset(sep, 0x55, n);
	bool next_to = a[1] == a[0] + n;
	k_free(a[0]);
	k_free(a[1]);
	unsigned long r0 = rss_bytes();
	unsigned char *p = k_malloc(2 * n);
	KT_ASSERT(p != NULL);
	size_t reused = 0;
	for (size_t o = 0; o < 2 * n; o += 4096)
		reused += p[o] == 0xa0 || p[o] == 0xa1 ? 4096 : 0;
	memset(p, 1, 2 * n);
	unsigned long r1 = rss_bytes();
	if (next_to && (p != a[0] || reused != 2 * n || r1 > r0 + MiB))
		KT_FAIL("malloc(12 MiB) after freeing two 6 MiB blocks side by side at %p: at %p, "
			"%zu KiB of their pages reused, RSS +%ld KiB", (void *)a[0], (void *)p, reused >> 10,
			((long)r1 - (long)r0) >> 10);
	/* Bigger than any free range: fresh memory; the 12 MiB stay free, resident. */
	k_free(p);
	unsigned char *big = k_malloc(4 * n);
	KT_ASSERT(big != NULL);
	memset(big, 2, 4 * n);
	KT_EXPECT(big < a[0] || big >= a[0] + 2 * n);
	unsigned char *z = k_calloc(2 * n, 1);		/* the joined range again, cleared */
	KT_ASSERT(z != NULL);
	if (next_to)
		KT_EXPECT(z == a[0]);
	for (size_t o = 0; o < 2 * n; o += 512)
		if (z[o]) {
			KT_FAIL("calloc(12 MiB) of reused blocks: byte %zu not zero", o);
			break;
		}
	KT_EXPECT(z[2 * n - 1] == 0);
	k_free(z);
	k_free(big);
	k_free(sep);
	unsigned long held = rss_bytes();
	malloc_trim(0);
	KT_EXPECT(held - rss_bytes() >= 7 * n - 4 * MiB);	/* and trim gives them back */
}

static bool run_fresh_cmdline(const char *mode, const char *cmdline);

static bool thp_available(void)
{
	char mode[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f) {
		if (!fgets(mode, sizeof(mode), f))
			mode[0] = 0;
		fclose(f);
	}
	return mode[0] && !strstr(mode, "[never]");
}

/*
 * With malloc.huge_thp=1, once a block over 4 MiB was freed, new ones
 * start on a 2 MiB boundary and may have transparent huge pages: smaps
 * says THPeligible for their mapping.  Run in a fresh process with that
 * parameter (huge_thp_main()), unless the kernel's THP is [never].
 */

static int huge_thp_main(void)
{
	k_free(k_malloc(8 * MiB));
	malloc_trim(0);		/* nothing kept: a fresh arena */
	unsigned char *p = k_malloc(12 * MiB);
	if (!p)
		return 1;
	memset(p, 1, 12 * MiB);
	int eligible = -1;
	char line[256];
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perm[5];
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perm) == 3)	/* a mapping's first line */
			in = lo <= (uintptr_t)p && (uintptr_t)p < hi;
		if (in && sscanf(line, "THPeligible: %d", &eligible) == 1)
			break;
	}
	fclose(f);
	int rc = 0;
	if (((uintptr_t)p & (2 * MiB - 1)) || eligible == 0) {
		fprintf(stderr, "malloc.huge_thp=1: a 12 MiB block after a free at %p, THPeligible %d\n",
			(void *)p, eligible);
		rc = 1;
	}
	k_free(p);
	return rc;
}

KTEST(huge_blocks_get_2mib_pages_with_huge_thp)
{
	if (thp_available())	/* else nothing to check */
		KT_EXPECT(run_fresh_cmdline("--huge-thp", "malloc.huge_thp=1"));
}

/*
 * A buffer grown by realloc() past 4 MiB, by halves, round after round:
 * from the second round on its blocks are the freed memory of the round
 * before, grown in place, without page faults (faulting every page in
 * again each round took 13x glibc's time; glibc's heap keeps that memory).
 */
KTEST(realloc_growing_past_4mib_reuses_its_pages)
{
	long faults[3];

	for (int round = 0; round < 3; round++) {
		long f0 = minor_faults();
		unsigned char *p = NULL;
		size_t old = 0;
		for (size_t size = 16; size < 16 * MiB; size = size * 3 / 2) {
			unsigned char *q = k_realloc(p, size);
			KT_ASSERT(q != NULL);
			memset(q + old, (int)round, size - old);
			p = q;
			old = size;
		}
		k_free(p);
		faults[round] = minor_faults() - f0;
	}
	/* 16 MiB of fresh pages is about 4000 faults; reused ones are none. */
	KT_EXPECT(faults[0] > 2000);
	if (faults[2] > 400)
		KT_FAIL("a grown buffer faulted %ld, %ld, %ld pages in rounds 1-3", faults[0], faults[1],
			faults[2]);
}

/*
 * A block that cannot grow where it is (a live block right after it)
 * moves: copied below 64 MiB, its pages moved with mremap() from there on;
 * either way with its bytes, and its old range free for the next block.
 */
KTEST(realloc_moves_a_boxed_in_big_block)
{
	static const size_t sizes[] = { 8 * MiB, 64 * MiB };

	malloc_trim(0);
	for (int k = 0; k < 2; k++) {
		size_t n = sizes[k];
		unsigned char *a = k_malloc(n), *b = k_malloc(8 * MiB);
		KT_ASSERT(a && b);
		for (size_t o = 0; o < n; o += 4096)
			a[o] = (unsigned char)(o >> 12);
		memset(b, 0x5b, 8 * MiB);
		unsigned char *c = k_realloc(a, n + n / 2);
		KT_ASSERT(c != NULL);
		KT_EXPECT(k_usable(c) >= n + n / 2);
		for (size_t o = 0; o < n; o += 4096)
			if (c[o] != (unsigned char)(o >> 12)) {
				KT_FAIL("realloc(%zu MiB -> %zu MiB): byte %zu lost", n >> 20, (n + n / 2) >> 20, o);
				break;
			}
		memset(c + n, 1, n / 2);
		for (size_t o = 0; o < 8 * MiB; o += 4096)
			if (b[o] != 0x5b) {
				KT_FAIL("the block after a moved one changed at %zu", o);
				break;
			}
		if (c != a) {
			/* The old range is free: a block of its size fits there again. */
			unsigned char *d = k_calloc(n, 1);
			KT_ASSERT(d != NULL);
			KT_EXPECT(d[0] == 0 && d[n - 1] == 0 && d[n / 2] == 0);
			k_free(d);
		}
		k_free(c);
		k_free(b);
		malloc_trim(0);
	}
}

KTEST(impossible_sizes)
{
	static const size_t sizes[] = { SIZE_MAX, SIZE_MAX - 4096, SIZE_MAX / 2 + 1, (size_t)1 << 50,
					(size_t)1 << 47 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		errno = 0;
		void *p = k_malloc(sizes[i]);
		if (p || errno != ENOMEM) {
			KT_FAIL("malloc(%#zx) = %p, errno %d", sizes[i], p, errno);
			k_free(p);
		}
		errno = 0;
		p = k_aligned_alloc(64, sizes[i]);
		KT_EXPECT(p == NULL && errno == ENOMEM);
		void *q = NULL;
		KT_EXPECT(k_posix_memalign(&q, 4096, sizes[i]) == ENOMEM && q == NULL);
		KT_EXPECT(k_posix_memalign(&q, 8 * MiB, sizes[i]) == ENOMEM && q == NULL);
	}

	/*
	 * 1 TiB: more than this machine has, so mmap refuses it unless the
	 * kernel overcommits blindly (vm.overcommit_memory=1); either way, no crash.
	 */
	int overcommit = -1;
	FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
	if (f) {
		if (fscanf(f, "%d", &overcommit) != 1)
			overcommit = -1;
		fclose(f);
	}
	errno = 0;
	void *t = k_malloc((size_t)1 << 40);
	if (t) {
		KT_EXPECT(overcommit == 1);
		((char *)t)[0] = 1;
		k_free(t);
	} else {
		KT_EXPECT(errno == ENOMEM);
	}
	/* And the allocator is still fine. */
	void *p = k_malloc(100);
	KT_EXPECT(p != NULL);
	k_free(p);
}

/* ---- malloc_trim, mallinfo2, malloc_stats ---------------------------- */

KTEST(trim_mallinfo_stats)
{
	void *p = k_malloc(3 * MiB), *h = k_malloc(12 * MiB);
	KT_ASSERT(p && h);
	memset(p, 1, 3 * MiB);
	memset(h, 1, 12 * MiB);

	struct mallinfo2 mi = mallinfo2();
	KT_EXPECT(mi.arena > 0);
	KT_EXPECT(mi.uordblks <= mi.arena);
	KT_EXPECT(mi.fordblks <= mi.arena);
	KT_EXPECT(mi.uordblks >= 3 * MiB);		/* the 3 MiB block is in use */
	KT_EXPECT(mi.hblks >= 1);
	KT_EXPECT(mi.hblkhd >= 12 * MiB);
	KT_EXPECT(mi.hblkhd < ((size_t)1 << 40));

	KT_EXPECT(dlsym(RTLD_DEFAULT, "mallinfo2") == dlsym(kmem_so, "mallinfo2"));
	KT_EXPECT(dlsym(RTLD_DEFAULT, "mallinfo") == dlsym(kmem_so, "mallinfo"));

	k_free(p);
	k_free(h);
	int rc = malloc_trim(0);
	KT_EXPECT(rc == 0 || rc == 1);
	KT_EXPECT(malloc_trim(1 * MiB) >= 0);

	/* malloc_stats() writes to stderr. */
	char tmpl[] = "/tmp/kmem-malloc-stats-XXXXXX";
	int fd = mkstemp(tmpl);
	KT_ASSERT(fd >= 0);
	unlink(tmpl);
	fflush(stderr);
	int saved = dup(2);
	dup2(fd, 2);
	malloc_stats();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	char text[4096] = "";
	ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
	close(fd);
	KT_ASSERT(n > 0);
	text[n] = '\0';
	KT_EXPECT(strstr(text, "kmem malloc") != NULL);
}

/* ---- memory goes back to the OS ------------------------------------ */

KTEST(rss_returns_after_free)
{
	enum { N = 256 };
	static void *blocks[N];

	malloc_trim(0);
	unsigned long base = rss_bytes();
	for (int i = 0; i < N; i++) {
		blocks[i] = k_malloc(1 * MiB);
		KT_ASSERT(blocks[i] != NULL);
		memset(blocks[i], i, 1 * MiB);
	}
	unsigned long peak = rss_bytes();
	for (int i = 0; i < N; i++)
		k_free(blocks[i]);
	malloc_trim(0);
	unsigned long after = rss_bytes();
	fprintf(stderr, "     RSS: base %lu MiB, peak %lu MiB, after free + malloc_trim %lu MiB\n",
		base / MiB, peak / MiB, after / MiB);
	KT_EXPECT(peak >= base + 200 * MiB);
	KT_EXPECT(after + 128 * MiB < peak);
}

/* ---- fork handlers that allocate ------------------------------------ */

/*
 * A program's fork handlers may allocate, also when it registered them
 * before its first malloc (child_main() does, before kmem booted): kmem's
 * own handlers are registered from the library's constructor, so its
 * prepare handler runs after the program's and its child handler before.
 * Sizes for the slow paths: a large kmalloc takes the zone lock that
 * kmem's prepare handler holds.
 */
static atomic_int early_ran[3];

static void early_alloc(int which)
{
	void *volatile big = malloc(100000), *volatile small = malloc(100);

	if (big && small) {
		memset(big, which, 100000);
		atomic_fetch_add(&early_ran[which], 1);
	}
	free(big);
	free(small);
}

static void early_prepare(void)
{
	early_alloc(0);
}

static void early_parent(void)
{
	early_alloc(1);
}

static void early_child(void)
{
	early_alloc(2);
}

KTEST(fork_handlers_allocate)
{
	/* Earlier tests forked too: count from here. */
	int ran0 = atomic_load(&early_ran[0]), ran1 = atomic_load(&early_ran[1]);
	int ran2 = atomic_load(&early_ran[2]);

	alarm(30);	/* a deadlock in fork() ends the test (SIGALRM is reported) */
	pid_t pid = fork();
	KT_ASSERT(pid >= 0);
	if (pid == 0)
		_exit(atomic_load(&early_ran[2]) == ran2 + 1 ? 0 : 3);
	int status;
	KT_ASSERT(waitpid(pid, &status, 0) == pid);
	alarm(0);
	KT_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	KT_EXPECT(atomic_load(&early_ran[0]) == ran0 + 1);
	KT_EXPECT(atomic_load(&early_ran[1]) == ran1 + 1);
}

/* ---- fork from a multi-threaded process ----------------------------- */

static atomic_int hammer_stop;

static void *hammer(void *arg)
{
	unsigned long s = (unsigned long)(uintptr_t)arg * 2654435761UL + 1;
	enum { SLOTS = 64 };
	unsigned char *slot[SLOTS] = { 0 };
	size_t len[SLOTS] = { 0 };

	while (!atomic_load_explicit(&hammer_stop, memory_order_relaxed)) {
		unsigned int i = (unsigned int)(rnd(&s) % SLOTS);
		if (slot[i]) {
			if (slot[i][0] != (unsigned char)len[i] || slot[i][len[i] - 1] != (unsigned char)i)
				abort();
			k_free(slot[i]);
		}
		len[i] = 1 + random_size(&s);	/* >= 2: first and last byte differ */
		slot[i] = k_malloc(len[i]);
		if (!slot[i])
			abort();
		slot[i][0] = (unsigned char)len[i];
		slot[i][len[i] - 1] = (unsigned char)i;
	}
	for (int i = 0; i < SLOTS; i++)
		k_free(slot[i]);
	return NULL;
}

/* In the child: allocate, check, free; any hang is killed by alarm(). */
static int fork_child_work(unsigned long seed)
{
	enum { N = 3000, LIVE = 256 };
	unsigned char *live[LIVE] = { 0 };
	size_t len[LIVE] = { 0 };
	unsigned long s = seed;

	alarm(20);
	for (int k = 0; k < N; k++) {
		unsigned int i = (unsigned int)(rnd(&s) % LIVE);
		if (live[i]) {
			if (!check_fill(live[i], len[i] < 256 ? len[i] : 256, i))
				return 2;
			k_free(live[i]);
		}
		len[i] = random_size(&s);
		live[i] = k % 7 ? k_malloc(len[i]) : k_calloc(1, len[i]);
		if (!live[i])
			return 3;
		fill(live[i], len[i] < 256 ? len[i] : 256, i);
	}
	for (int i = 0; i < LIVE; i++) {
		if (live[i] && !check_fill(live[i], len[i] < 256 ? len[i] : 256, (unsigned int)i))
			return 4;
		k_free(live[i]);
	}
	/* A thread in the child too. */
	pthread_t t;
	if (pthread_create(&t, NULL, hammer, (void *)(uintptr_t)99))
		return 5;
	usleep(1000);
	atomic_store(&hammer_stop, 1);
	pthread_join(t, NULL);
	return 0;
}

/*
 * In a process that never had a second thread kmem's fork handlers do
 * nothing (no lock can be held by anyone else): forks of such a process,
 * run fresh (--single-fork), each with a child that allocates, checks and
 * frees, and starts a thread of its own.
 */
static int single_fork_main(void)
{
	extern char __libc_single_threaded __attribute__((weak));
	enum { FORKS = 40 };
	void *keep[FORKS];

	if (&__libc_single_threaded && !__libc_single_threaded) {
		fprintf(stderr, "single-fork: the process is not single-threaded\n");
		return 9;
	}
	for (int f = 0; f < FORKS; f++) {
		keep[f] = k_malloc(16 + 97 * (size_t)f);	/* the parent's state moves between forks */
		if (!keep[f])
			return 8;
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0)
			return 7;
		if (pid == 0)
			_exit(fork_child_work((unsigned long)f * 104729 + 3));
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "single-fork: child %d: status %#x\n", f, status);
			return 6;
		}
	}
	for (int f = 0; f < FORKS; f++)
		k_free(keep[f]);
	return 0;
}

/*
 * Under an address-space limit (ulimit -v) kmem reserves its address space
 * as memory comes online, not ahead: the program's own mappings and its
 * threads' stacks have the space while the heap is small, and small blocks
 * get far more than the quarter of the limit they got before.  Run fresh
 * (--rlimit-as) with a 256 MiB limit: a 160 MiB mapping of the program's
 * and 8 threads first, then 128 MiB in 1000-byte blocks, then 8 MiB blocks
 * to 200 MiB in all, then 1 MiB blocks, all written; glibc does the same.
 */
#define RLIMIT_AS_MB 256

static void *rlimit_thread(void *arg)
{
	return malloc((size_t)(uintptr_t)arg);
}

static int rlimit_as_main(void)
{
	size_t total = 0, small = 0;
	void **keep = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t n = 0;

	if (keep == MAP_FAILED)
		return 2;
	/* kmem booted, yet the program's own mappings and threads have the space (not reserved ahead). */
	void *own = mmap(NULL, 160UL << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (own == MAP_FAILED) {
		fprintf(stderr, "rlimit-as: the program could not map 160 MiB of its own\n");
		return 1;
	}
	munmap(own, 160UL << 20);
	pthread_t th[8];
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	/* Small stacks: glibc keeps up to 40 MiB of joined threads' stacks mapped. */
	pthread_attr_setstacksize(&attr, 256 << 10);
	for (int i = 0; i < 8; i++)
		if (pthread_create(&th[i], &attr, rlimit_thread, (void *)(uintptr_t)(100 * (i + 1)))) {
			fprintf(stderr, "rlimit-as: thread %d could not start\n", i);
			return 1;
		}
	for (int i = 0; i < 8; i++) {
		void *r;
		pthread_join(th[i], &r);
		free(r);
	}
	for (; small < (128UL << 20); small += 1000, n++) {
		char *p = malloc(1000);
		if (!p) {
			fprintf(stderr, "rlimit-as: 1000-byte blocks failed at %zu MiB\n", small >> 20);
			return 1;
		}
		p[0] = p[999] = 1;
	}
	total = small;
	for (size_t big = 8UL << 20; total < (200UL << 20); total += big) {
		char *p = malloc(big);
		if (!p) {
			fprintf(stderr, "rlimit-as: 8 MiB blocks failed at %zu MiB in all\n", total >> 20);
			return 1;
		}
		memset(p, 1, big);
		keep[n++ % (1 << 17)] = p;
	}
	for (size_t mid = 1UL << 20; total < (208UL << 20); total += mid) {
		char *p = malloc(mid);
		if (!p) {
			fprintf(stderr, "rlimit-as: 1 MiB blocks failed at %zu MiB in all\n", total >> 20);
			return 1;
		}
		p[0] = p[mid - 1] = 1;
	}
	/* On to the limit: every success leaves errno alone (failed growth attempts included). */
	for (size_t size = 64 << 10;; ) {
		errno = 0;
		char *p = malloc(size);
		if (!p) {
			if (errno != ENOMEM) {
				fprintf(stderr, "rlimit-as: malloc failed with errno %d\n", errno);
				return 1;
			}
			if (size == 1000)
				break;
			size = 1000;
			continue;
		}
		if (errno) {
			fprintf(stderr, "rlimit-as: a successful malloc(%zu) left errno %d\n", size, errno);
			return 1;
		}
		p[0] = 1;
	}
	return 0;
}

/*
 * Run this test binary fresh in @mode (--rlimit-as, --single-fork), under
 * an address-space limit of @as_limit bytes if not 0 (set before the exec,
 * so kmem boots under it); true if it exited with 0.
 */
static bool run_fresh(const char *mode, rlim_t as_limit)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		struct rlimit rl = { as_limit, as_limit };
		if (as_limit && setrlimit(RLIMIT_AS, &rl))
			_exit(126);
		execl("/proc/self/exe", "test_malloc_api", mode, (char *)NULL);
		_exit(127);
	}
	int status;
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * A process whose first allocation is past kmalloc's caches gets a class
 * (they are set up by any first malloc, not only a small one).  With
 * memory fixed at 8 MiB (KMEM_CMDLINE=mem=8M) blocks of the classes past
 * 8 KiB, and blocks over 4 MiB, fail with ENOMEM once the 8 MiB are used:
 * mem= bounds what malloc hands out, blocks that are mappings of their own
 * included.  With malloc.huge_beyond_mem=1 (@beyond) they go on in
 * mappings of their own once the classes cannot grow.
 */
static int past_8k_main(bool beyond)
{
	char *p = k_malloc(9000);
	int rc = 0;

	if (!p || k_usable(p) != 9360) {
		fprintf(stderr, "past-8k: the first malloc(9000) got usable size %zu, want 9360\n",
			p ? k_usable(p) : 0);
		rc = 1;
	}
	free(k_malloc(32));	/* the classes are set up now, whatever the first malloc did */
	static const size_t sizes[] = { 10000, 14000, 100000, 5UL << 20 };
	for (size_t i = 0; i < 4; i++) {
		static char *kept[8192];
		size_t n = 0, total = 0;
		for (; total < (40UL << 20); total += sizes[i]) {
			errno = 0;
			char *q = k_malloc(sizes[i]);
			if (!q && beyond) {
				fprintf(stderr, "past-8k: malloc(%zu) failed after %zu MiB (mem=8M)\n",
					sizes[i], total >> 20);
				return 1;
			}
			if (!q) {
				if (errno != ENOMEM) {
					fprintf(stderr, "past-8k: malloc(%zu) NULL with errno %d\n", sizes[i], errno);
					rc = 1;
				}
				break;
			}
			for (size_t off = 0; off < sizes[i]; off += 4096)
				q[off] = 1;
			if (!beyond)
				kept[n++] = q;
		}
		if (!beyond && total > (8UL << 20)) {
			fprintf(stderr, "past-8k: %zu MiB of %zu-byte blocks with mem=8M\n", total >> 20, sizes[i]);
			rc = 1;
		}
		while (n)
			free(kept[--n]);
		/* All given back: the next block gets its memory again. */
		char *q = k_malloc(sizes[i]);
		if (!q) {
			fprintf(stderr, "past-8k: malloc(%zu) fails after all was freed\n", sizes[i]);
			rc = 1;
		}
		free(q);
	}
	return rc;
}

/*
 * malloc.small_first: a fresh process's first block of 1500 bytes makes
 * its class's first slab (malloc-1536: 21 objects in order-3 slabs) of the
 * class's minimum order, two objects in 4 KiB: a program with a few blocks
 * of a class pays their pages, not a whole slab's.  With
 * malloc.small_first=0 (in KMEM_CMDLINE) it is of the cache's order.  The
 * classes past 4 KiB (128 KiB slabs) always grow their slabs: 60 blocks of
 * 5000 bytes (malloc-5040, 26 a slab) take slabs of 1, 3, 6, 13, 26 and
 * 26 objects, 75 in all, not three whole slabs' 78 (and their first block
 * 8 KiB, not 128).
 */
static bool run_fresh_cmdline(const char *mode, const char *cmdline);

static long slab_attr(ssize_t (*rd)(const char *, char *, size_t), const char *cache, const char *name)
{
	char path[128], buf[64];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", cache, name);
	if (rd(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtol(buf, NULL, 10);
}

static int small_first_main(void)
{
	void *so = dlopen(getenv("LD_PRELOAD"), RTLD_NOW | RTLD_NOLOAD);
	ssize_t (*rd)(const char *, char *, size_t) =
		so ? (ssize_t (*)(const char *, char *, size_t))dlsym(so, "kmem_read") : NULL;
	const char *cmdline = getenv("KMEM_CMDLINE");
	bool off = cmdline && strstr(cmdline, "malloc.small_first=0");
	char *p = k_malloc(1500), *q[60];
	int rc = 0;

	if (!rd || !p)
		return 1;
	memset(p, 1, 1500);
	long per_slab = slab_attr(rd, "malloc-1536", "objs_per_slab");
	long total = slab_attr(rd, "malloc-1536", "total_objects");
	long want = off ? per_slab : 2;
	if (per_slab != 21 || total != want) {
		fprintf(stderr, "small-first%s: malloc-1536 has %ld objects per slab (want 21) and %ld in all "
			"after one block (want %ld)\n", off ? "=0" : "", per_slab, total, want);
		rc = 1;
	}
	for (int i = 0; i < 60; i++) {
		q[i] = k_malloc(5000);
		if (!q[i])
			return 1;
		memset(q[i], 2, 5000);
	}
	per_slab = slab_attr(rd, "malloc-5040", "objs_per_slab");
	total = slab_attr(rd, "malloc-5040", "total_objects");
	if (per_slab != 26 || total != 75) {
		fprintf(stderr, "small-first%s: malloc-5040 has %ld objects per slab (want 26) and %ld in all "
			"after 60 blocks (want 75)\n", off ? "=0" : "", per_slab, total);
		rc = 1;
	}
	for (int i = 0; i < 60; i++)
		free(q[i]);
	free(p);
	return rc;
}

KTEST(first_slab_of_a_class_is_small)
{
	KT_EXPECT(run_fresh_cmdline("--small-first", "nr_cpus=2"));
	KT_EXPECT(run_fresh_cmdline("--small-first", "nr_cpus=2 malloc.small_first=0"));
}

/* run_fresh() of @mode with KMEM_CMDLINE=@cmdline. */
static bool run_fresh_cmdline(const char *mode, const char *cmdline)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		setenv("KMEM_CMDLINE", cmdline, 1);
		execl("/proc/self/exe", "test_malloc_api", mode, (char *)NULL);
		_exit(127);
	}
	int status;
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

KTEST(classes_past_8k_first_and_when_memory_is_full)
{
	if (on_slob()) {
		fprintf(stderr, "  skipped on SLOB: no classes past 8 KiB (every size a kmalloc)\n");
		return;
	}
	KT_EXPECT(run_fresh_cmdline("--past-8k", "mem=8M"));
	KT_EXPECT(run_fresh_cmdline("--past-8k-beyond", "mem=8M malloc.huge_beyond_mem=1"));
}

KTEST(address_space_limit_gives_the_heap_most_of_it)
{
	KT_EXPECT(run_fresh("--rlimit-as", (rlim_t)RLIMIT_AS_MB << 20));
}

KTEST(fork_from_a_single_threaded_process)
{
	KT_EXPECT(run_fresh("--single-fork", 0));
}

KTEST(fork_while_threads_allocate)
{
	enum { THREADS = 4, FORKS = 50 };
	pthread_t t[THREADS];

	atomic_store(&hammer_stop, 0);
	for (int i = 0; i < THREADS; i++)
		KT_ASSERT(pthread_create(&t[i], NULL, hammer, (void *)(uintptr_t)(i + 1)) == 0);

	int bad = 0;
	for (int f = 0; f < FORKS; f++) {
		usleep(2000);	/* let the threads get deep into malloc */
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0) {
			KT_FAIL("fork: %s", strerror(errno));
			bad++;
			break;
		}
		if (pid == 0)
			_exit(fork_child_work((unsigned long)f * 7919 + 1));
		int status;
		if (waitpid(pid, &status, 0) != pid) {
			KT_FAIL("waitpid: %s", strerror(errno));
			bad++;
			continue;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			if (WIFSIGNALED(status))
				KT_FAIL("fork %d: child killed by signal %d%s", f, WTERMSIG(status),
					WTERMSIG(status) == SIGALRM ? " (deadlocked: 20 s alarm)" : "");
			else
				KT_FAIL("fork %d: child exit status %d", f, WEXITSTATUS(status));
			bad++;
		}
	}
	atomic_store(&hammer_stop, 1);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	KT_EXPECT(bad == 0);
}

/* ---- many short-lived threads --------------------------------------- */

enum { HANDOFF = 64 };
static void *handoff[HANDOFF];		/* left by one thread, freed by the next */
static size_t handoff_len[HANDOFF];
static atomic_int thread_errors;

static void *short_lived(void *arg)
{
	unsigned long s = (unsigned long)(uintptr_t)arg * 40503UL + 7;
	enum { N = 2000 };
	void *mine[N];

	/* Blocks from the previous, now dead, thread. */
	for (int i = 0; i < HANDOFF; i++) {
		if (handoff[i]) {
			if (!check_fill(handoff[i], handoff_len[i] < 64 ? handoff_len[i] : 64, (unsigned int)i))
				atomic_fetch_add(&thread_errors, 1);
			k_free(handoff[i]);
		}
	}
	/* Every slab cache and some pages: per-thread state everywhere. */
	for (int i = 0; i < N; i++) {
		size_t n = i % 50 == 0 ? 16 * KiB + rnd(&s) % (256 * KiB) : 1 + rnd(&s) % 8192;
		mine[i] = k_malloc(n);
		if (!mine[i]) {
			atomic_fetch_add(&thread_errors, 1);
			return NULL;
		}
		memset(mine[i], 0x3c, n < 64 ? n : 64);
	}
	for (int i = 0; i < N; i += 2)
		k_free(mine[i]);
	for (int i = 1; i < N; i += 2)
		k_free(mine[i]);
	for (int i = 0; i < HANDOFF; i++) {
		handoff_len[i] = 1 + rnd(&s) % 4096;
		handoff[i] = k_malloc(handoff_len[i]);
		if (handoff[i])
			fill(handoff[i], handoff_len[i] < 64 ? handoff_len[i] : 64, (unsigned int)i);
	}
	return NULL;
}

KTEST(many_short_lived_threads)
{
	unsigned long rss50 = 0;

	atomic_store(&thread_errors, 0);
	for (int i = 1; i <= 500; i++) {
		pthread_t t;
		KT_ASSERT(pthread_create(&t, NULL, short_lived, (void *)(uintptr_t)i) == 0);
		KT_ASSERT(pthread_join(t, NULL) == 0);
		if (i == 50)
			rss50 = rss_bytes();
	}
	unsigned long rss500 = rss_bytes();
	for (int i = 0; i < HANDOFF; i++)
		k_free(handoff[i]);
	fprintf(stderr, "     RSS after 50 threads %lu MiB, after 500 threads %lu MiB\n",
		rss50 / MiB, rss500 / MiB);
	KT_EXPECT(atomic_load(&thread_errors) == 0);
	KT_EXPECT(rss500 < rss50 + 64 * MiB);

	/* And 16 at a time, freeing each other's blocks. */
	for (int round = 0; round < 10; round++) {
		pthread_t t[16];
		atomic_store(&hammer_stop, 0);
		for (int i = 0; i < 16; i++)
			KT_ASSERT(pthread_create(&t[i], NULL, hammer, (void *)(uintptr_t)(round * 16 + i)) == 0);
		usleep(5000);
		atomic_store(&hammer_stop, 1);
		for (int i = 0; i < 16; i++)
			pthread_join(t[i], NULL);
	}
	unsigned long rss_end = rss_bytes();
	fprintf(stderr, "     RSS after 160 more threads %lu MiB\n", rss_end / MiB);
	KT_EXPECT(rss_end < rss50 + 96 * MiB);
}

/* ---- freed by another, live thread ---------------------------------- */

enum { QUEUE = 1024, PRODUCERS = 4, CONSUMERS = 4, PER_PRODUCER = 50000 };
static struct {
	pthread_mutex_t lock;
	pthread_cond_t nonempty, nonfull;
	unsigned char *item[QUEUE];
	size_t len[QUEUE];
	unsigned int head, tail;
	int producers_left;
} q = { .lock = PTHREAD_MUTEX_INITIALIZER, .nonempty = PTHREAD_COND_INITIALIZER,
	.nonfull = PTHREAD_COND_INITIALIZER };
static atomic_long consumed, bad_items;

static void *producer(void *arg)
{
	unsigned long s = (unsigned long)(uintptr_t)arg * 977 + 3;

	for (int i = 0; i < PER_PRODUCER; i++) {
		size_t n = 1 + (i % 100 == 0 ? rnd(&s) % (64 * KiB) : rnd(&s) % 2048);
		unsigned char *p = k_malloc(n);
		if (!p) {
			atomic_fetch_add(&bad_items, 1);
			continue;
		}
		fill(p, n < 128 ? n : 128, (unsigned int)n);
		pthread_mutex_lock(&q.lock);
		while (q.tail - q.head == QUEUE)
			pthread_cond_wait(&q.nonfull, &q.lock);
		q.item[q.tail % QUEUE] = p;
		q.len[q.tail % QUEUE] = n;
		q.tail++;
		pthread_cond_signal(&q.nonempty);
		pthread_mutex_unlock(&q.lock);
	}
	pthread_mutex_lock(&q.lock);
	q.producers_left--;
	pthread_cond_broadcast(&q.nonempty);
	pthread_mutex_unlock(&q.lock);
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&q.lock);
		while (q.tail == q.head && q.producers_left)
			pthread_cond_wait(&q.nonempty, &q.lock);
		if (q.tail == q.head) {
			pthread_mutex_unlock(&q.lock);
			return NULL;
		}
		unsigned char *p = q.item[q.head % QUEUE];
		size_t n = q.len[q.head % QUEUE];
		q.head++;
		pthread_cond_signal(&q.nonfull);
		pthread_mutex_unlock(&q.lock);
		if (!check_fill(p, n < 128 ? n : 128, (unsigned int)n))
			atomic_fetch_add(&bad_items, 1);
		k_free(p);
		atomic_fetch_add(&consumed, 1);
	}
}

/* ---- the reaper ----------------------------------------------------------- */

enum { REAP_THREADS = 64, REAP_BLOCKS = 1000 };
static pthread_barrier_t reap_bar;

/* Allocate, wait until every thread has (they overlap), free, exit. */
static void *churn_and_exit(void *arg)
{
	void *v[REAP_BLOCKS];
	long id = (long)arg;

	for (int i = 0; i < REAP_BLOCKS; i++) {
		size_t n = 16 + (size_t)(i * 37 + id) % 2000;
		if ((v[i] = k_malloc(n)))
			memset(v[i], 1, n);
	}
	pthread_barrier_wait(&reap_bar);
	for (int i = 0; i < REAP_BLOCKS; i++)
		k_free(v[i]);
	return NULL;
}

/*
 * Threads that allocated and freed, then exited, leave memory in the
 * caches' barns and empty slabs, which keeps the free pages in fragments
 * that page reporting does not give back.  Once the program has been idle
 * for a period (malloc.reap_ms, 2 s), the reaper trims, with no
 * malloc_trim() from the program, and exits.  (Fails with malloc.reap_ms=0.)
 */
KTEST(reaper_returns_memory_of_exited_threads)
{
	pthread_t t[REAP_THREADS];

	malloc_trim(0);
	unsigned long base = rss_bytes();
	KT_ASSERT(pthread_barrier_init(&reap_bar, NULL, REAP_THREADS) == 0);
	for (long i = 0; i < REAP_THREADS; i++)
		KT_ASSERT(pthread_create(&t[i], NULL, churn_and_exit, (void *)i) == 0);
	for (int i = 0; i < REAP_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&reap_bar);
	unsigned long joined = rss_bytes(), now = joined;
	/* Two periods after the last exit at most; five for a slow machine. */
	for (int i = 0; i < 100 && now + 16 * MiB > joined; i++) {
		usleep(100 * 1000);
		now = rss_bytes();
	}
	fprintf(stderr, "     RSS: base %lu MiB, after join %lu MiB, idle %lu MiB\n", base / MiB,
		joined / MiB, now / MiB);
	KT_EXPECT(joined > base + 32 * MiB);	/* 64 x ~1 MiB held at once, then left */
	KT_EXPECT(now + 16 * MiB <= joined);
	/* Its trim done, the reaper has gone: the process is single-threaded again. */
	int threads = 0;
	for (int i = 0; i < 50 && (threads = kt_nr_threads()) != 1; i++)
		usleep(100 * 1000);
	if (threads != 1)
		KT_FAIL("%d threads: the reaper is still there", threads);
}

static void *alloc_and_exit_late(void *arg)
{
	usleep(200 * 1000);
	free(k_malloc(100));
	return arg;
}

static void *alloc_and_exit(void *arg)
{
	free(k_malloc(100));
	return arg;
}

/*
 * A main thread that calls pthread_exit() while a worker still runs: the
 * process ends when the worker does, also with the reaper started by an
 * earlier thread's exit (it goes when it finds itself the last thread).
 */
KTEST(main_thread_pthread_exit_ends_the_process)
{
	pid_t pid = fork();
	KT_ASSERT(pid >= 0);
	if (pid == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, alloc_and_exit, NULL) || pthread_join(t, NULL) ||
		    pthread_create(&t, NULL, alloc_and_exit_late, NULL))
			_exit(2);
		pthread_exit(NULL);
	}
	int status = -1;
	pid_t got = 0;
	/* Less than the reaper's period (2 s): it must not wait for its trim. */
	for (int i = 0; i < 18 && !(got = waitpid(pid, &status, WNOHANG)); i++)
		usleep(100 * 1000);
	if (!got) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		KT_FAIL("the process did not end within 1.8 s (its last thread ends at 0.2 s)");
		return;
	}
	KT_EXPECT(got == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

KTEST(cross_thread_free)
{
	pthread_t p[PRODUCERS], c[CONSUMERS];

	q.producers_left = PRODUCERS;
	for (int i = 0; i < CONSUMERS; i++)
		KT_ASSERT(pthread_create(&c[i], NULL, consumer, NULL) == 0);
	for (int i = 0; i < PRODUCERS; i++)
		KT_ASSERT(pthread_create(&p[i], NULL, producer, (void *)(uintptr_t)i) == 0);
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(p[i], NULL);
	for (int i = 0; i < CONSUMERS; i++)
		pthread_join(c[i], NULL);
	KT_EXPECT(atomic_load(&bad_items) == 0);
	KT_EXPECT(atomic_load(&consumed) == (long)PRODUCERS * PER_PRODUCER);
}

/* ---- pointers kmem never handed out --------------------------------- */

static unsigned char static_buf[8192] __attribute__((aligned(4096)));

/*
 * A mapping of the program's, a global, a stack buffer: not blocks, and
 * not the loader's early blocks (made after kmem took over).  Each free,
 * realloc and malloc_usable_size of one is reported (what it points to)
 * and does nothing: nothing written, nothing read past the buffer.
 */
KTEST(foreign_pointers)
{
	unsigned char *m = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
	KT_ASSERT(m != MAP_FAILED);
	memset(m, 0x6b, 3 * 4096);
	memset(static_buf, 0x59, sizeof(static_buf));
	unsigned char stack_buf[256];
	memset(stack_buf, 0x1d, sizeof(stack_buf));

	struct kt_capture cap;
	kt_capture_begin(&cap);
	k_free(m);
	k_free(m + 4096);
	k_free(static_buf);
	k_free(static_buf + 16);
	k_free(stack_buf);
	size_t usable = k_usable(static_buf);
	errno = 0;
	unsigned char *g = k_realloc(m + 4096 - 16, 100);
	int realloc_errno = errno;
	unsigned char *r = k_realloc(static_buf, 100);
	char *out = kt_capture_end(&cap);

	KT_EXPECT(usable == 0);
	KT_EXPECT(!g && realloc_errno == EINVAL && !r);
	KT_EXPECT(strstr(out, "free(") && strstr(out, "invalid pointer"));
	KT_EXPECT(strstr(out, "the stack") && strstr(out, "a mapping kmem did not make"));
	KT_EXPECT(strstr(out, "a global") && strstr(out, "realloc(") && strstr(out, "malloc_usable_size("));
	int reports = 0;
	for (const char *at = out; (at = strstr(at, "invalid pointer")); at++)
		reports++;
	KT_EXPECT(reports == 8);
	free(out);

	/* Nothing was touched, the mapping is still ours. */
	for (size_t i = 0; i < 3 * 4096; i++)
		if (m[i] != 0x6b) {
			KT_FAIL("free(mmap'ed pointer) changed byte %zu", i);
			break;
		}
	for (size_t i = 0; i < sizeof(static_buf); i++)
		if (static_buf[i] != 0x59) {
			KT_FAIL("free(static buffer) changed byte %zu", i);
			break;
		}
	KT_EXPECT(stack_buf[0] == 0x1d && stack_buf[255] == 0x1d);

	/* malloc still works, and hands out none of those addresses. */
	for (int i = 0; i < 1000; i++) {
		unsigned char *p = k_malloc(1 + (size_t)i * 13);
		KT_ASSERT(p != NULL);
		KT_EXPECT(!(p >= m && p < m + 3 * 4096));
		KT_EXPECT(!(p >= static_buf && p < static_buf + sizeof(static_buf)));
		memset(p, 1, 1 + (size_t)i * 13);
		k_free(p);
	}
	munmap(m, 3 * 4096);
}

/* realloc() of a pointer into the middle of a block: reported, NULL, the block untouched. */
KTEST(realloc_of_an_interior_pointer)
{
	unsigned char *p = k_malloc(100);
	KT_ASSERT(p);
	memset(p, 0x33, 100);
	struct kt_capture cap;
	kt_capture_begin(&cap);
	errno = 0;
	void *q = k_realloc(p + 48, 40), *q2 = k_realloc(p + 48, 4000);
	char *out = kt_capture_end(&cap);
	KT_EXPECT(!q && !q2 && errno == EINVAL);
	/* SLOB finds the kmalloc block around the pointer by its header: the core's words for that. */
	if (on_slob())
		KT_EXPECT(strstr(out, "pointer into the middle of a kmalloc block") && strstr(out, "realloc("));
	else
		KT_EXPECT(strstr(out, "Invalid object pointer") && strstr(out, "realloc()"));
	free(out);
	for (int i = 0; i < 100; i++)
		if (p[i] != 0x33) {
			KT_FAIL("byte %d of the block changed", i);
			break;
		}
	k_free(p);
}

/*
 * The same for blocks from the page allocator (8 KiB-4 MiB) and for those
 * over 4 MiB (their own mappings): their size is the whole block's, so a
 * copy from the middle would read past the end (into the neighbour).  And
 * malloc_usable_size(), free() and a second free() of a block over 4 MiB.
 */
KTEST(interior_pointers_into_big_blocks)
{
	const size_t big = 100 * KiB, huge = 8 * MiB;
	unsigned char *a = k_malloc(big), *b = k_malloc(big), *h = k_malloc(huge);
	KT_ASSERT(a && b && h);
	memset(a, 0x11, big);
	memset(b, 0x22, big);
	memset(h, 0x33, huge);
	struct kt_capture cap;
	kt_capture_begin(&cap);
	errno = 0;
	size_t u = k_usable(a + 4096);
	void *q = k_realloc(a + 4096, 256 * KiB);
	int e1 = errno;
	errno = 0;
	void *q2 = k_realloc(h + 4096, 16 * MiB);
	int e2 = errno;
	k_free(h + 4096);
	size_t uh = k_usable(h + 8192);
	char *out = kt_capture_end(&cap);
	KT_EXPECT(u == 0 && uh == 0);
	KT_EXPECT(strstr(out, "malloc_usable_size(") && strstr(out, "8192 bytes into the block"));
	KT_EXPECT(!q && e1 == EINVAL);
	KT_EXPECT(!q2 && e2 == EINVAL);
	KT_EXPECT(strstr(out, "malloc_usable_size(") && strstr(out, "realloc(") &&
		  strstr(out, "middle of a large kmalloc"));
	KT_EXPECT(strstr(out, "4096 bytes into the block"));
	free(out);
	/* Nothing was touched or freed: both blocks still whole and theirs. */
	for (size_t i = 0; i < big; i++)
		if (a[i] != 0x11 || b[i] != 0x22) {
			KT_FAIL("byte %zu of a block changed", i);
			break;
		}
	KT_EXPECT(k_usable(h) == huge);
	for (size_t i = 0; i < huge; i += 4096)
		if (h[i] != 0x33) {
			KT_FAIL("byte %zu of the 8 MiB block changed", i);
			break;
		}
	k_free(a);
	k_free(b);
	k_free(h);
	/* Freed and kept mapped for reuse: a second free() is reported, not ignored. */
	kt_capture_begin(&cap);
	k_free(h);
	out = kt_capture_end(&cap);
	KT_EXPECT(strstr(out, "double free or use after free"));
	free(out);
}

/* ---- harness ---------------------------------------------------------- */

struct ktest_case ktest_cases[KTEST_MAX];
int ktest_nr_cases;
int ktest_failed_now;

static int passed, failed;
static const char *current_case = "(setup)";

static void put(const char *s)
{
	ssize_t rc = write(2, s, strlen(s));
	(void)rc;
}

static void put_num(long v)
{
	char b[24];
	int i = sizeof(b);

	b[--i] = '\0';
	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v && i > 0);
	put(b + i);
}

/* A crash or a hang (alarm) in a case still ends with the summary line. */
static void on_fatal_signal(int sig)
{
	put("FAIL ");
	put(current_case);
	put(": killed by signal ");
	put_num(sig);
	put(sig == SIGALRM ? " (timed out)\n" : "\n");
	char line[64];
	int n = snprintf(line, sizeof(line), "%d passed, %d failed\n", passed, failed + 1);
	ssize_t rc = write(1, line, (size_t)n);
	(void)rc;
	_exit(1);
}

static int child_main(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGALRM };

	/* Fork handlers that allocate, registered before kmem boots (see fork_handlers_allocate). */
	pthread_atfork(early_prepare, early_parent, early_child);
	first_block = k_malloc(1);	/* before anything else allocates */
	first_block_usable = k_usable(first_block);

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_fatal_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);

	kmem_so = dlopen(getenv("LD_PRELOAD"), RTLD_NOW | RTLD_NOLOAD);
	if (kmem_so)
		so_kmem_read = (ssize_t (*)(const char *, char *, size_t))dlsym(kmem_so, "kmem_read");
	if (!so_kmem_read) {
		fprintf(stderr, "FAIL: %s is not loaded, or has no kmem_read\n", getenv("LD_PRELOAD"));
		printf("0 passed, 1 failed\n");
		return 1;
	}

	for (int i = 0; i < ktest_nr_cases; i++) {
		current_case = ktest_cases[i].name;
		ktest_failed_now = 0;
		alarm(240);
		ktest_cases[i].fn();
		alarm(0);
		fprintf(stderr, "%s %s\n", ktest_failed_now ? "FAIL" : "ok  ", ktest_cases[i].name);
		if (ktest_failed_now)
			failed++;
		else
			passed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--child"))
		return child_main();
	if (argc > 1 && !strcmp(argv[1], "--single-fork"))
		return single_fork_main();
	if (argc > 1 && !strcmp(argv[1], "--rlimit-as"))
		return rlimit_as_main();
	if (argc > 1 && !strcmp(argv[1], "--past-8k"))
		return past_8k_main(false);
	if (argc > 1 && !strcmp(argv[1], "--past-8k-beyond"))
		return past_8k_main(true);
	if (argc > 1 && !strcmp(argv[1], "--small-first"))
		return small_first_main();
	if (argc > 1 && !strcmp(argv[1], "--huge-thp"))
		return huge_thp_main();

	const char *so = kt_malloc_so();
	if (!so)
		return 77;

	setenv("LD_PRELOAD", so, 1);
	return kt_run_self(argv[0], "--child", NULL);
}
