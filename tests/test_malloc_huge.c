// SPDX-License-Identifier: MIT
/*
 * Blocks over 4 MiB (src/malloc/huge.c, huge_heap.c) against a model, as a
 * program sees them under LD_PRELOAD of libkmem-malloc.so: several seeds of
 * thousands of random malloc, calloc, posix_memalign (alignments up to 64
 * MiB), realloc (grow, shrink), free and malloc_trim on blocks of 4 MiB + 1
 * to 80 MiB.  After each step: calloc()ed memory reads as zeroes, a block's
 * contents survive realloc(), no two live blocks overlap, usable sizes are
 * at least what was asked, alignments hold, and mallinfo2()'s hblks/hblkhd
 * are the model's count and sum of usable sizes.  Then threads allocate,
 * grow, shrink and free big blocks, freeing each other's.  Absurd sizes and
 * alignments fail cleanly.
 *
 * Each block holds a 64-bit word, a function of the block's seed and the
 * word's offset, at its first and last 8 bytes and at every address that is
 * a multiple of 64 KiB: every block writes the same address grid, so a
 * calloc() handed a freed block's memory without clearing it finds the old
 * words on the grid.
 *
 * The binary re-executes itself with LD_PRELOAD (as test_malloc_api does);
 * skipped (77) in sanitizer builds, where preloading cannot work.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ktest.h"
#include "lib/kt_util.h"

#define KiB (1024UL)
#define MiB (1024UL * 1024)
#define GRID (64 * KiB)

/* Through volatile pointers: gcc would fold calls whose result it can predict. */
static void *(*volatile k_malloc)(size_t) = malloc;
static void *(*volatile k_calloc)(size_t, size_t) = calloc;
static void *(*volatile k_realloc)(void *, size_t) = realloc;
static void (*volatile k_free)(void *) = free;
static int (*volatile k_posix_memalign)(void **, size_t, size_t) = posix_memalign;
static size_t (*volatile k_usable)(void *) = malloc_usable_size;
static int (*volatile k_trim)(size_t) = malloc_trim;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t word_at(uint64_t seed, size_t off)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull ^ (off + 1) * 0xBF58476D1CE4E5B9ull;

	x ^= x >> 31;
	x *= 0x94D049BB133111EBull;
	return (x ^ (x >> 29)) | 1;	/* never 0: a zero would pass for cleared memory */
}

static uint64_t load64(const char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void store64(char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* The grid's first offset in a block at @p, then every GRID. */
static size_t grid_first(const char *p)
{
	return (size_t)(-(uintptr_t)p & (GRID - 1));
}

/* Write @seed's words into @p (@n bytes asked for); grid words end 8 bytes before the last word. */
static void fill_block(char *p, size_t n, uint64_t seed)
{
	for (size_t o = grid_first(p); o + 16 <= n; o += GRID)
		store64(p + o, word_at(seed, o));
	store64(p, word_at(seed, 0));
	store64(p + n - 8, word_at(seed, n - 8));
}

/*
 * Check the words a block of @n bytes at @old_p with @seed held, in its
 * first @keep bytes, now at @p.  Returns the offset of the first bad word,
 * or SIZE_MAX.
 */
static size_t check_block(const char *p, const char *old_p, size_t n, size_t keep, uint64_t seed)
{
	for (size_t o = grid_first(old_p); o + 16 <= n && o + 8 <= keep; o += GRID)
		if (load64(p + o) != word_at(seed, o))
			return o;
	if (load64(p) != word_at(seed, 0))
		return 0;
	if (n - 8 + 8 <= keep && load64(p + n - 8) != word_at(seed, n - 8))
		return n - 8;
	return SIZE_MAX;
}

/* The first non-zero word on the grid, or first/last 8 bytes, of @p (@n bytes); SIZE_MAX if none. */
static size_t check_zero(const char *p, size_t n)
{
	for (size_t o = grid_first(p); o + 8 <= n; o += GRID)
		if (load64(p + o))
			return o;
	if (load64(p))
		return 0;
	if (load64(p + n - 8))
		return n - 8;
	return SIZE_MAX;
}

/* ---- the model ------------------------------------------------------ */

#define SLOTS		24
#define LIVE_MAX	(600 * MiB)
#define SIZE_MIN	(4 * MiB + 1)
#define SIZE_MAX_T	(80 * MiB)

struct block {
	char *p;
	size_t n;		/* asked for */
	size_t usable;
	uint64_t seed;
};

static size_t random_size(uint64_t *s)
{
	uint64_t r = rnd(s);

	/*
	 * Mostly 4-12 MiB, some near the 64 MiB line past which realloc()
	 * moves with mremap(), a few spread to 80 MiB: copies and clears of
	 * the big ones are most of the test's time.
	 */
	switch (r % 32) {
	case 0 ... 28:
		return SIZE_MIN + (r >> 8) % (8 * MiB);
	case 29:
		return 62 * MiB + (r >> 8) % (4 * MiB);
	default:
		return SIZE_MIN + (r >> 8) % (SIZE_MAX_T - SIZE_MIN + 1);
	}
}

static size_t live_bytes(const struct block *b)
{
	size_t sum = 0;

	for (int i = 0; i < SLOTS; i++)
		if (b[i].p)
			sum += b[i].usable;
	return sum;
}

static int cmp_block(const void *a, const void *b)
{
	const struct block *x = *(const struct block *const *)a, *y = *(const struct block *const *)b;

	return x->p < y->p ? -1 : x->p > y->p;
}

/* No two live blocks overlap; hblks/hblkhd are the model's.  False (and reported) if not. */
static bool check_model(const struct block *b, uint64_t seed, int step)
{
	const struct block *live[SLOTS];
	size_t nr = 0, sum = 0;

	for (int i = 0; i < SLOTS; i++)
		if (b[i].p) {
			live[nr++] = &b[i];
			sum += b[i].usable;
		}
	qsort(live, nr, sizeof(live[0]), cmp_block);
	for (size_t i = 0; i + 1 < nr; i++)
		if (live[i]->p + live[i]->usable > live[i + 1]->p) {
			KT_FAIL("seed %llu step %d: blocks %p (+%zu) and %p overlap", (unsigned long long)seed,
				step, (void *)live[i]->p, live[i]->usable, (void *)live[i + 1]->p);
			return false;
		}
	struct mallinfo2 mi = mallinfo2();
	if (mi.hblks != nr || mi.hblkhd != sum) {
		KT_FAIL("seed %llu step %d: mallinfo2 hblks %zu hblkhd %zu, model %zu blocks of %zu bytes",
			(unsigned long long)seed, step, mi.hblks, mi.hblkhd, nr, sum);
		return false;
	}
	return true;
}

/* Set @b's usable size and check it, the alignment and, from calloc(), the zeroes. */
static bool new_block(struct block *b, size_t align, bool zero, uint64_t seed, int step)
{
	b->usable = k_usable(b->p);
	if (b->usable < b->n) {
		KT_FAIL("seed %llu step %d: usable %zu < %zu asked", (unsigned long long)seed, step, b->usable, b->n);
		return false;
	}
	if ((uintptr_t)b->p & (align - 1)) {
		KT_FAIL("seed %llu step %d: %p not %zu-aligned", (unsigned long long)seed, step, (void *)b->p, align);
		return false;
	}
	size_t bad;
	if (zero && (bad = check_zero(b->p, b->n)) != SIZE_MAX) {
		KT_FAIL("seed %llu step %d: calloc(%zu) = %p: byte %zu not zero (%#llx)", (unsigned long long)seed,
			step, b->n, (void *)b->p, bad, (unsigned long long)load64(b->p + bad));
		return false;
	}
	fill_block(b->p, b->n, b->seed);
	return true;
}

static int model_steps = 1200;

static bool run_model(uint64_t seed)
{
	struct block b[SLOTS] = { 0 };
	uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
	bool ok = true;

	for (int step = 0; step < model_steps && ok; step++) {
		struct block *x = &b[rnd(&s) % SLOTS];
		uint64_t r = rnd(&s) % 100;
		size_t live = live_bytes(b);

		if (r < 2) {
			k_trim(0);
			continue;
		}
		if (x->p && r < 45) {
			size_t bad = check_block(x->p, x->p, x->n, x->n, x->seed);
			if (bad != SIZE_MAX) {
				KT_FAIL("seed %llu step %d: block %p (%zu) word at %zu changed",
					(unsigned long long)seed, step, (void *)x->p, x->n, bad);
				ok = false;
			}
			k_free(x->p);
			x->p = NULL;
		} else if (x->p && r >= 70) {
			/* A look at its words only. */
			size_t bad = check_block(x->p, x->p, x->n, x->n, x->seed);
			if (bad != SIZE_MAX) {
				KT_FAIL("seed %llu step %d: block %p (%zu) word at %zu changed",
					(unsigned long long)seed, step, (void *)x->p, x->n, bad);
				ok = false;
			}
		} else if (x->p) {
			/* realloc: grow, or shrink (to under half: in place past that) */
			size_t n = rnd(&s) & 1 ? random_size(&s) : SIZE_MIN + rnd(&s) % (x->n / 2 + 1);
			if (live - x->usable + n + 4096 > LIVE_MAX)
				continue;
			char *old = x->p;
			char *q = k_realloc(x->p, n);
			if (!q) {
				KT_FAIL("seed %llu step %d: realloc(%p, %zu) failed", (unsigned long long)seed,
					step, (void *)old, n);
				ok = false;
				continue;
			}
			size_t keep = n < x->n ? n : x->n;
			size_t bad = check_block(q, old, x->n, keep, x->seed);
			if (bad != SIZE_MAX) {
				KT_FAIL("seed %llu step %d: realloc(%p, %zu -> %zu) = %p: word at %zu lost",
					(unsigned long long)seed, step, (void *)old, x->n, n, (void *)q, bad);
				ok = false;
			}
			x->p = q;
			x->n = n;
			ok = ok && new_block(x, 4096, false, seed, step);
		} else {
			size_t n = random_size(&s), align = 4096;
			bool zero = false;
			if (live + n + 4096 > LIVE_MAX)
				continue;
			x->seed = rnd(&s);
			x->n = n;
			if (r < 60) {
				x->p = k_malloc(n);
			} else if (r < 80) {
				x->p = k_calloc(1, n);
				zero = true;
			} else {
				align = (size_t)4096 << (rnd(&s) % 15);		/* 4 KiB .. 64 MiB */
				void *p = NULL;
				if (k_posix_memalign(&p, align, n))
					p = NULL;
				x->p = p;
			}
			if (!x->p) {
				KT_FAIL("seed %llu step %d: allocation of %zu (align %zu) failed",
					(unsigned long long)seed, step, n, align);
				ok = false;
				continue;
			}
			ok = new_block(x, align, zero, seed, step);
		}
		ok = ok && check_model(b, seed, step);
	}
	for (int i = 0; i < SLOTS; i++)
		if (b[i].p) {
			if (ok && check_block(b[i].p, b[i].p, b[i].n, b[i].n, b[i].seed) != SIZE_MAX) {
				KT_FAIL("seed %llu: block %p changed", (unsigned long long)seed, (void *)b[i].p);
				ok = false;
			}
			k_free(b[i].p);
			b[i].p = NULL;
		}
	k_trim(0);
	ok = ok && check_model(b, seed, model_steps);
	return ok;
}

KTEST(huge_blocks_follow_the_model)
{
	for (uint64_t seed = 1; seed <= 3; seed++)
		if (!run_model(seed))
			return;
}

/* ---- threads -------------------------------------------------------- */

#define THREADS		3
#define T_SLOTS		6
#define T_STEPS		400
#define T_SIZE_MAX	(24 * MiB)
#define SHARED		8

/* Blocks handed between threads: a block and its seed, taken by whoever gets there first. */
static _Atomic(struct block *) shared[SHARED];
static atomic_int thread_errors;

static bool check_or_report(const struct block *b, const char *what)
{
	size_t bad = check_block(b->p, b->p, b->n, b->n, b->seed);

	if (bad == SIZE_MAX)
		return true;
	fprintf(stderr, "  %s: block %p (%zu) word at %zu changed: %#llx, not %#llx\n", what, (void *)b->p, b->n,
		bad, (unsigned long long)load64(b->p + bad), (unsigned long long)word_at(b->seed, bad));
	atomic_fetch_add(&thread_errors, 1);
	return false;
}

static void *worker(void *arg)
{
	uint64_t s = (uintptr_t)arg * 0x9E3779B97F4A7C15ull + 7;
	struct block *mine[T_SLOTS] = { 0 };

	for (int step = 0; step < T_STEPS; step++) {
		int i = (int)(rnd(&s) % T_SLOTS);
		struct block *b = mine[i];
		uint64_t r = rnd(&s) % 100;

		if (!b) {
			/* Take one another thread left, or make one. */
			if (r < 30 && (b = atomic_exchange(&shared[rnd(&s) % SHARED], NULL))) {
				check_or_report(b, "a block from another thread");
				mine[i] = b;
				continue;
			}
			b = malloc(sizeof(*b));
			if (!b)
				continue;
			b->n = SIZE_MIN + rnd(&s) % (T_SIZE_MAX - SIZE_MIN);
			b->seed = rnd(&s);
			b->p = r & 1 ? k_calloc(1, b->n) : k_malloc(b->n);
			if (!b->p) {
				fprintf(stderr, "  allocation of %zu failed\n", b->n);
				atomic_fetch_add(&thread_errors, 1);
				free(b);
				continue;
			}
			if ((r & 1) && check_zero(b->p, b->n) != SIZE_MAX) {
				fprintf(stderr, "  calloc(%zu) = %p not zero\n", b->n, (void *)b->p);
				atomic_fetch_add(&thread_errors, 1);
			}
			if (k_usable(b->p) < b->n) {
				fprintf(stderr, "  usable size of %p < %zu\n", (void *)b->p, b->n);
				atomic_fetch_add(&thread_errors, 1);
			}
			fill_block(b->p, b->n, b->seed);
			mine[i] = b;
		} else if (r < 35) {
			check_or_report(b, "before free");
			k_free(b->p);
			free(b);
			mine[i] = NULL;
		} else if (r < 60) {
			/* Leave it for another thread (or free what was there). */
			struct block *old = atomic_exchange(&shared[rnd(&s) % SHARED], b);
			mine[i] = NULL;
			if (old) {
				check_or_report(old, "a block from another thread");
				k_free(old->p);
				free(old);
			}
		} else {
			size_t n = SIZE_MIN + rnd(&s) % (T_SIZE_MAX - SIZE_MIN);
			char *q = k_realloc(b->p, n);
			if (!q) {
				fprintf(stderr, "  realloc(%p, %zu) failed\n", (void *)b->p, n);
				atomic_fetch_add(&thread_errors, 1);
				continue;
			}
			size_t keep = n < b->n ? n : b->n;
			size_t bad = check_block(q, b->p, b->n, keep, b->seed);
			if (bad != SIZE_MAX) {
				fprintf(stderr, "  realloc(%p, %zu -> %zu) = %p: word at %zu lost\n", (void *)b->p,
					b->n, n, (void *)q, bad);
				atomic_fetch_add(&thread_errors, 1);
			}
			b->p = q;
			b->n = n;
			fill_block(b->p, b->n, b->seed);
		}
	}
	for (int i = 0; i < T_SLOTS; i++)
		if (mine[i]) {
			check_or_report(mine[i], "at the end");
			k_free(mine[i]->p);
			free(mine[i]);
		}
	return NULL;
}

KTEST(threads_share_huge_blocks)
{
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++)
		KT_ASSERT(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1)) == 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < SHARED; i++) {
		struct block *b = atomic_exchange(&shared[i], NULL);
		if (b) {
			check_or_report(b, "left shared");
			k_free(b->p);
			free(b);
		}
	}
	KT_EXPECT(atomic_load(&thread_errors) == 0);
	struct mallinfo2 mi = mallinfo2();
	KT_EXPECT(mi.hblks == 0 && mi.hblkhd == 0);
}

/* ---- absurd requests ------------------------------------------------- */

KTEST(absurd_sizes_and_alignments_fail_cleanly)
{
	/* Free ranges in an arena first: a size that wraps must not fit one. */
	char *a = k_malloc(40 * MiB), *b = k_malloc(8 * MiB);
	KT_ASSERT(a && b);
	fill_block(b, 8 * MiB, 99);
	k_free(a);
	static const size_t sizes[] = {
		SIZE_MAX, SIZE_MAX - 4095, SIZE_MAX - 4 * MiB, SIZE_MAX - 16 * MiB, SIZE_MAX - 1024 * MiB,
		SIZE_MAX / 2, (size_t)1 << 62, (size_t)1 << 47,
	};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		errno = 0;
		void *p = k_malloc(sizes[i]);
		KT_EXPECT(!p && errno == ENOMEM);
		if (p)
			KT_FAIL("malloc(%#zx) = %p", sizes[i], p);
		p = k_calloc(1, sizes[i]);
		KT_EXPECT(!p);
		void *q = NULL;
		KT_EXPECT(k_posix_memalign(&q, 64 * MiB, sizes[i]) == ENOMEM && !q);
		char *r = k_realloc(b, sizes[i]);
		KT_EXPECT(!r);
		if (r)
			KT_FAIL("realloc(b, %#zx) = %p", sizes[i], (void *)r);
		else
			KT_EXPECT(check_block(b, b, 8 * MiB, 8 * MiB, 99) == SIZE_MAX);
	}
	for (int sh = 40; sh < 64; sh += 3) {
		void *q = NULL;
		KT_EXPECT(k_posix_memalign(&q, (size_t)1 << sh, 8 * MiB) == ENOMEM || q);
		if (q) {
			KT_EXPECT(((uintptr_t)q & (((size_t)1 << sh) - 1)) == 0);
			k_free(q);
		}
	}
	KT_EXPECT(k_usable(b) >= 8 * MiB);
	k_free(b);
	k_trim(0);
	struct mallinfo2 mi = mallinfo2();
	KT_EXPECT(mi.hblks == 0 && mi.hblkhd == 0);
}

/* ---- mem=: the charge pool ------------------------------------------ */

/*
 * With memory fixed (mem=), what blocks over 4 MiB and the freed memory kept
 * resident hold is taken out of the buddy allocator (the charge pool), and
 * mallinfo2().fordblks is the buddy allocator's free memory.  A realloc()
 * that must move a block holds the old and the new block at once, and the
 * old one's memory stays, kept for reuse: the pool covers both.  Run in a
 * process of its own, booted with mem=256M (charge_main()).
 */
static int charge_main(void)
{
	k_free(k_malloc(1));		/* boot */
	size_t before = mallinfo2().fordblks;
	char *a = k_malloc(20 * MiB), *box = k_malloc(5 * MiB);
	if (!a || !box) {
		printf("FAIL: mem=256M: 20 and 5 MiB blocks refused\n");
		return 1;
	}
	memset(a, 1, 20 * MiB);
	/* Boxed in: box takes the addresses right after a, so a moves (copied: under 64 MiB). */
	if (box != a + 20 * MiB) {
		printf("skipped: the 5 MiB block is not right after the 20 MiB one\n");
		return 77;
	}
	char *b = k_realloc(a, 30 * MiB);
	if (!b || b == a) {
		printf("FAIL: realloc to 30 MiB: %p (from %p)\n", (void *)b, (void *)a);
		return 1;
	}
	size_t after = mallinfo2().fordblks;
	/* 30 MiB block, 5 MiB box, the old 20 MiB kept resident for reuse (copied, so dirty). */
	size_t held = before > after ? before - after : 0;
	int ok = held >= 52 * MiB;
	printf("%s: mem=256M, after a 20 -> 30 MiB move: the buddy allocator lost %zu MiB (want 55, at least 52)\n",
	       ok ? "ok" : "FAIL", held >> 20);
	k_free(b);
	k_free(box);
	return ok ? 0 : 1;
}

/* ---- harness: re-executed under LD_PRELOAD ------------------------------ */

struct ktest_case ktest_cases[KTEST_MAX];
int ktest_nr_cases;
int ktest_failed_now;

static int child_main(void)
{
	int passed = 0, failed = 0;
	const char *steps = getenv("KMEM_TEST_HUGE_STEPS");

	if (steps && atoi(steps) > 0)
		model_steps = atoi(steps);
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *only = getenv("KMEM_TEST_HUGE_ONLY");

	for (int i = 0; i < ktest_nr_cases; i++) {
		if (only && *only && !strstr(ktest_cases[i].name, only))
			continue;
		ktest_failed_now = 0;
		alarm(240);
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ktest_cases[i].fn();
		clock_gettime(CLOCK_MONOTONIC, &t1);
		alarm(0);
		fprintf(stderr, "%s %s (%.1f s)\n", ktest_failed_now ? "FAIL" : "ok  ", ktest_cases[i].name,
			(double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
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
	if (argc > 1 && !strcmp(argv[1], "--charge"))
		return charge_main();
	const char *so = kt_malloc_so();
	if (!so)
		return 77;
	setenv("LD_PRELOAD", so, 1);
	int rc = kt_run_self(argv[0], "--child", NULL);
	/* The charge pool, booted with mem= (only once: it does not depend on the variant). */
	const char *cl = getenv("KMEM_CMDLINE");
	if (!cl || !*cl) {
		int rc2 = kt_run_self(argv[0], "--charge", "mem=256M");
		if (rc2 != 0 && rc2 != 77)
			rc = 1;
	}
	return rc;
}
