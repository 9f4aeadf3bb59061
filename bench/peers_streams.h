/* SPDX-License-Identifier: MIT */
/*
 * The random streams of the peers' workloads (bench/peers_workloads.c):
 * which sizes frag and longlived allocate and which objects they free.
 * bench_peers_workloads runs them on an allocator; bench_rss_floor replays
 * them on a model of ideal size classes, and tests/test_rss_floor.sh checks
 * that the two agree (op count, live bytes).  A change here changes both.
 */
#ifndef KMEM_BENCH_PEERS_STREAMS_H
#define KMEM_BENCH_PEERS_STREAMS_H

#include <stdint.h>

/* xorshift64*: the workload's random stream, never the allocator's answers. */
static inline uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/*
 * A digest of what a run drew (FNV-1a over 64-bit words): both programs
 * print one per workload as "STREAM wl=W digest=D", and the test compares.
 */
#define STREAM_DIGEST_INIT	0xcbf29ce484222325ull

static inline uint64_t stream_digest(uint64_t h, uint64_t x)
{
	return (h ^ x) * 0x100000001b3ull;
}

/* frag: FRAG_OBJECTS small objects, 90% freed in random order, then big ones. */
#define FRAG_SEED	42
#define FRAG_OBJECTS	1000000

static inline uint32_t frag_small_size(uint64_t *s)
{
	return 16 + (uint32_t)(rnd(s) % (512 - 16 + 1));
}

static inline uint32_t frag_big_size(uint64_t *s)
{
	return 2048 + (uint32_t)(rnd(s) % (8192 - 2048 + 1));
}

/* The order of frag's frees: a Fisher-Yates shuffle of 0..n-1. */
static inline void frag_free_order(uint32_t *perm, long n, uint64_t *s)
{
	for (long i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (long i = n - 1; i > 0; i--) {
		long j = (long)(rnd(s) % (uint64_t)(i + 1));
		uint32_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* longlived: a LONGLIVED_BUDGET population through 4 phases of size windows. */
#define LONGLIVED_SEED		7
#define LONGLIVED_BUDGET	(100l << 20)
#define LONGLIVED_CAP		4000000l	/* objects at most */
#define LONGLIVED_STEPS		1000000		/* replacements per phase (scaled) */
#define LONGLIVED_PHASES	4

/* Log-uniform between 2^lo and 2^hi - 1 bytes: a power-of-two bucket, then uniform in it. */
static inline uint32_t longlived_size(uint64_t *s, int phase)
{
	static const struct { int lo, hi; } window[LONGLIVED_PHASES] = {
		{ 4, 10 }, { 8, 13 }, { 4, 9 }, { 6, 12 }
	};
	uint64_t x = rnd(s);
	int b = window[phase].lo + (int)(x % (uint64_t)(window[phase].hi - window[phase].lo));

	return (1u << b) + (uint32_t)((x >> 32) % (1u << b));
}

/* Which of the @n live objects a replacement frees. */
static inline long longlived_victim(uint64_t *s, long n)
{
	return (long)(rnd(s) % (uint64_t)n);
}

#endif
