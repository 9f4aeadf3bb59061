/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the slab-core tests (tests/test_slab_*.c, test_mt_slab.c).
 *
 * Back-end independence: a slab test boots with its own base command line
 * ("mem=64M ...") plus whatever $KMEM_TEST_CMDLINE holds (or, if that is
 * unset, the compile-time SLAB_TEST_CMDLINE, default empty).  A second ctest
 * entry for another back-end needs no new code, only an environment, e.g.
 * tests/test_slab_api_slab.env with KMEM_TEST_CMDLINE=slab=slab next to a
 * CMake add_test() that reuses the test_slab_api binary.  Checks that are a
 * property of one back-end (SLUB's freelist layout, its counters) are gated
 * on slab_test_is_slub(); everything else is the kernel API contract.
 */
#ifndef KMEM_TEST_SLAB_TEST_H
#define KMEM_TEST_SLAB_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef SLAB_TEST_CMDLINE
#define SLAB_TEST_CMDLINE ""
#endif

/* ---- boot ------------------------------------------------------------ */

/*
 * kmem_init(@base + " " + extra), extra = $KMEM_TEST_CMDLINE or
 * SLAB_TEST_CMDLINE.  Returns kmem_init()'s result (the line is printed on
 * failure).  Only the first call boots; later calls return 0 if kmem is up.
 */
int slab_test_boot(const char *base);
/*
 * kmem_init(@base + " " + extra) as above, every call (a test that boots
 * in forked children, or expects a boot to fail): the back-end variants
 * (test_X@slab.env) reach tests that boot with lines of their own.
 */
int slab_test_init(const char *base);
/* The command line the last slab_test_boot() used. */
const char *slab_test_cmdline(void);
/* "slub", "slab" or "slob": the back-end kmem booted with. */
const char *slab_test_backend(void);
bool slab_test_is_slub(void);

/* ---- object contents ---------------------------------------------- */

/* Fill [p, p+n) with a pattern derived from @seed. */
void slab_fill(void *p, size_t n, uint64_t seed);
/* 0 if [p, p+n) holds slab_fill(@seed)'s pattern, else 1 + first bad offset. */
size_t slab_check(const void *p, size_t n, uint64_t seed);
/* 0 if [p, p+n) is all @byte, else 1 + first bad offset. */
size_t slab_check_byte(const void *p, size_t n, unsigned char byte);

/* xorshift64* */
static inline uint64_t slab_rnd(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 2685821657736338717ULL;
}

static inline unsigned int slab_rnd_below(uint64_t *state, unsigned int n)
{
	return (unsigned int)((slab_rnd(state) >> 11) % n);
}

/* The @n pointers are distinct and their [p, p + size) ranges disjoint. */
int slab_disjoint(void *const *p, size_t n, size_t size);
/* Fisher-Yates shuffle of @p with slab_rnd(@rng). */
void slab_shuffle(void **p, size_t n, uint64_t *rng);
struct kmem_cache;
/* 200 objects of @s (using @size bytes each) are disjoint and keep their contents. */
int slab_cache_works(struct kmem_cache *s, size_t size);
/* p[0..n) = @n kmem_cache_alloc(@s, GFP_KERNEL); then each kmem_cache_free()d, in order. */
void slab_alloc_n(struct kmem_cache *s, void **p, int n);
void slab_free_n(struct kmem_cache *s, void **p, int n);

/* The number /sys/kernel/slab/<@s's name>/@file starts with, or -1 without that file. */
long slab_sysfs_long(struct kmem_cache *s, const char *file);

/* ---- page accounting ---------------------------------------------- */

/*
 * Give every empty slab of the kmalloc caches (on SLOB, the wholly free
 * pages a poisoned heap keeps) back and this thread's pcp pages to the
 * buddy lists: afterwards NR_FREE_PAGES and nr_slab_* only
 * count memory that live objects pin.
 */
void slab_quiesce(void);
/* nr_slab_unreclaimable + nr_slab_reclaimable, pages (internal counters). */
long slab_pages_now(void);
/* NR_FREE_PAGES (internal counter). */
long slab_free_pages_now(void);

/* ---- fresh processes ---------------------------------------------- */

/*
 * Some cases need a kmem booted with a command line of their own (mem=16M,
 * slab_nomerge).  kmem boots once per process and the test binary has
 * usually booted already, so such a case runs in a fresh copy of the
 * binary: slab_run_child("name") forks, sets SLAB_TEST_CHILD=name and
 * re-executes /proc/self/exe; the copy's main() (KTEST_MAIN setup) calls
 * slab_child_dispatch(), which runs the named function instead of the
 * suite and exits 0 if it recorded no failure.  No core dumps in the child.
 */
struct slab_child {
	const char *name;
	void (*fn)(void);
};

/* In KTEST_MAIN's setup: if SLAB_TEST_CHILD is set, run that child and _exit. */
void slab_child_dispatch(const struct slab_child *tab, size_t n);
/* Run child @name in a fresh process; returns its wait status. */
int slab_run_child(const char *name);

#endif /* KMEM_TEST_SLAB_TEST_H */
