// SPDX-License-Identifier: MIT
/* Helpers for the slab-core tests; see slab_test.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kmem.h>

#include "core/boot.h"
#include "core/vmstat.h"
#include "slab/slab.h"
#include "slab/slob/slob.h"

#include "ktest.h"
#include "kt_util.h"
#include "slab_test.h"

static char cmdline[1024];

int slab_test_boot(const char *base)
{
	const char *extra = getenv("KMEM_TEST_CMDLINE");

	if (atomic_load(&kmem_system_state) == KMEM_UP)
		return 0;
	if (!extra)
		extra = SLAB_TEST_CMDLINE;
	snprintf(cmdline, sizeof(cmdline), "%s%s%s", base, *extra ? " " : "", extra);
	int rc = kmem_init(cmdline);
	if (rc)
		fprintf(stderr, "kmem_init(\"%s\") failed: %d\n", cmdline, rc);
	return rc;
}

int slab_test_init(const char *base)
{
	const char *extra = getenv("KMEM_TEST_CMDLINE");

	if (!extra)
		extra = SLAB_TEST_CMDLINE;
	snprintf(cmdline, sizeof(cmdline), "%s%s%s", base, *extra ? " " : "", extra);
	return kmem_init(cmdline);
}

const char *slab_test_cmdline(void)
{
	return cmdline;
}

const char *slab_test_backend(void)
{
	switch (slab_allocator) {
	case SLAB_ALLOCATOR_SLAB:
		return "slab";
	case SLAB_ALLOCATOR_SLOB:
		return "slob";
	default:
		return "slub";
	}
}

bool slab_test_is_slub(void)
{
	return slab_allocator == SLAB_ALLOCATOR_SLUB;
}

/* ---- patterns ------------------------------------------------------ */

static inline uint64_t pattern_word(uint64_t seed, size_t k)
{
	uint64_t x = seed + 0x9E3779B97F4A7C15ULL * (k + 1);

	x ^= x >> 29;
	return x;
}

void slab_fill(void *p, size_t n, uint64_t seed)
{
	unsigned char *b = p;
	size_t k = 0;

	for (; k + 8 <= n; k += 8) {
		uint64_t w = pattern_word(seed, k >> 3);
		memcpy(b + k, &w, 8);
	}
	if (k < n) {
		uint64_t w = pattern_word(seed, k >> 3);
		memcpy(b + k, &w, n - k);
	}
}

size_t slab_check(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *b = p;
	size_t k = 0;

	for (; k + 8 <= n; k += 8) {
		uint64_t w = pattern_word(seed, k >> 3);
		if (memcmp(b + k, &w, 8))
			goto bad;
	}
	if (k < n) {
		uint64_t w = pattern_word(seed, k >> 3);
		if (memcmp(b + k, &w, n - k))
			goto bad;
	}
	return 0;
bad:
	for (;; k++) {
		uint64_t w = pattern_word(seed, k >> 3);
		if (b[k] != ((const unsigned char *)&w)[k & 7])
			return k + 1;
	}
}

size_t slab_check_byte(const void *p, size_t n, unsigned char byte)
{
	const unsigned char *b = p;

	for (size_t k = 0; k < n; k++)
		if (b[k] != byte)
			return k + 1;
	return 0;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

void slab_alloc_n(struct kmem_cache *s, void **p, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
}

void slab_free_n(struct kmem_cache *s, void **p, int n)
{
	for (int i = 0; i < n; i++)
		kmem_cache_free(s, p[i]);
}

int slab_disjoint(void *const *p, size_t n, size_t size)
{
	void **s = malloc((n ? n : 1) * sizeof(*s));
	int ok = 1;

	if (!s)
		abort();
	memcpy(s, p, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_ptr);
	for (size_t i = 1; i < n && ok; i++)
		if ((uintptr_t)s[i - 1] + size > (uintptr_t)s[i])
			ok = 0;
	free(s);
	return ok;
}

void slab_shuffle(void **p, size_t n, uint64_t *rng)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = slab_rnd(rng) % i;
		void *t = p[i - 1];
		p[i - 1] = p[j];
		p[j] = t;
	}
}

int slab_cache_works(struct kmem_cache *s, size_t size)
{
	enum { N = 200 };
	void *p[N];
	int ok = 1;

	for (int i = 0; i < N; i++) {
		p[i] = kmem_cache_alloc(s, GFP_KERNEL);
		if (!p[i]) {
			while (i-- > 0)
				kmem_cache_free(s, p[i]);
			return 0;
		}
		slab_fill(p[i], size, (uint64_t)i * 31 + 5);
	}
	ok = slab_disjoint(p, N, size);
	for (int i = 0; i < N; i++) {
		if (slab_check(p[i], size, (uint64_t)i * 31 + 5))
			ok = 0;
		kmem_cache_free(s, p[i]);
	}
	return ok;
}

/* ---- accounting ---------------------------------------------------- */

long slab_sysfs_long(struct kmem_cache *s, const char *file)
{
	char path[256], buf[4096];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", kmem_cache_name(s), file);
	if (kmem_read(path, buf, sizeof(buf)) < 0)
		return -1;
	return strtol(buf, NULL, 10);
}

void slab_quiesce(void)
{
	for (unsigned int i = 0; i <= KMALLOC_SHIFT_HIGH; i++)
		if (kmalloc_caches[i])
			kmem_cache_shrink(kmalloc_caches[i]);
	/* SLOB has no kmalloc caches; a poisoned heap keeps a few wholly free pages. */
	if (slab_allocator == SLAB_ALLOCATOR_SLOB)
		slob_shrink();
	drain_local_pages();
}

long slab_pages_now(void)
{
	return global_zone_page_state(NR_SLAB_UNRECLAIMABLE) +
	       global_zone_page_state(NR_SLAB_RECLAIMABLE);
}

long slab_free_pages_now(void)
{
	return global_zone_page_state(NR_FREE_PAGES);
}

/* ---- fresh processes ----------------------------------------------- */

void slab_child_dispatch(const struct slab_child *tab, size_t n)
{
	const char *name = getenv("SLAB_TEST_CHILD");

	if (!name)
		return;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(tab[i].name, name))
			continue;
		ktest_failed_now = 0;
		tab[i].fn();
		fflush(stdout);
		fflush(stderr);
		_exit(ktest_failed_now ? 1 : 0);
	}
	fprintf(stderr, "SLAB_TEST_CHILD=%s: no such child\n", name);
	_exit(2);
}

/* In the forked child: become a fresh process running the named child case. */
static void exec_child(void *name)
{
	setenv("SLAB_TEST_CHILD", name, 1);
	execl("/proc/self/exe", "slab-test-child", (char *)NULL);
	perror("execl /proc/self/exe");
	_exit(127);
}

int slab_run_child(const char *name)
{
	return kt_fork(exec_child, (void *)name);
}
