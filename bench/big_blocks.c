// SPDX-License-Identifier: MIT
/*
 * bench_big_blocks: blocks of megabytes, where malloc leaves its size
 * classes for the page allocator and mappings of their own.  Each case runs
 * in a fresh process of this binary under each allocator (LD_PRELOAD:
 * kmem's build/lib/libkmem-malloc.so, glibc, and jemalloc, mimalloc,
 * tcmalloc where Debian's packages are installed); rounds alternate the
 * allocators and the median counts.
 *
 *   grow     a buffer grown by realloc() by halves from 16 B to 16 MiB,
 *            each new part written, then freed; 200 times
 *   mix      64 slots, 10000 random steps: free or posix_memalign, or
 *            realloc to a random size (to 300 B, 9 KB, 5 MiB, 20 MiB or
 *            4 MiB +- 4 KiB); data checked on every move
 *   churn    200000 steps on a population of 8 KiB-2 MiB blocks (log-
 *            uniform, each written whole, up to 64 MiB live): free a
 *            random one or, by a coin, allocate; peak RSS is the point
 *   ulimit   under ulimit -v 2000000 (KB): how many MiB of 1000-byte
 *            blocks, and then of 8 MiB blocks, one process each, until
 *            malloc fails (capped at 1600 MiB); reports MiB reached
 *
 * Reported: wall time, system time, minor page faults and peak RSS of the
 * process (getrusage of the child) for grow, mix and churn; MiB reached for
 * ulimit.
 *
 *   bench_big_blocks [-r ROUNDS]      default -r 3
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MiB (1UL << 20)

static int work_grow(void)
{
	for (int r = 0; r < 200; r++) {
		unsigned char *p = NULL;
		size_t old = 0;
		for (size_t s = 16; s < 16 * MiB; s = s * 3 / 2) {
			unsigned char *q = realloc(p, s);
			if (!q)
				return 1;
			memset(q + old, r, s - old);
			p = q;
			old = s;
		}
		free(p);
	}
	return 0;
}

static unsigned long long rng = 1234567;

static unsigned long long xr(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static size_t random_size(void)
{
	switch (xr() % 5) {
	case 0: return xr() % 300;
	case 1: return xr() % 9000;
	case 2: return xr() % (5 * MiB);
	case 3: return xr() % (20 * MiB);
	default: return 4 * MiB + xr() % 8192 - 4096;
	}
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i += i < 4096 ? 1 : 509)
		p[i] = (unsigned char)(seed + i * 7);
}

static int intact(const unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i += i < 4096 ? 1 : 509)
		if (p[i] != (unsigned char)(seed + i * 7))
			return 0;
	return 1;
}

static int work_mix(void)
{
	enum { N = 64 };
	unsigned char *v[N] = { 0 };
	size_t sz[N] = { 0 };
	unsigned seed[N] = { 0 };

	for (int k = 0; k < 10000; k++) {
		int i = (int)(xr() % N);
		size_t n = random_size();
		if (v[i] && !intact(v[i], sz[i], seed[i]))
			return 1;
		if (xr() % 4 == 0) {
			free(v[i]);
			v[i] = NULL;
			sz[i] = 0;
			void *p;
			if (xr() % 2 && !posix_memalign(&p, (size_t)16 << (xr() % 20), n)) {
				v[i] = p;
				sz[i] = n;
			}
		} else {
			unsigned char *q = realloc(v[i], n);
			if (!q && n)
				return 1;
			size_t keep = sz[i] < n ? sz[i] : n;
			if (q && !intact(q, keep, seed[i]))
				return 1;
			v[i] = q;
			sz[i] = q ? n : 0;
		}
		seed[i] = (unsigned)xr();
		if (v[i])
			fill(v[i], sz[i], seed[i]);
	}
	for (int i = 0; i < N; i++)
		free(v[i]);
	return 0;
}

/*
 * A population of blocks from 8 KiB to 2 MiB (log-uniform), each written
 * whole, churned: 200000 steps, each a free of a random block or, while
 * under 64 MiB live, by a coin, an allocation.  What the page allocator's
 * blocks cost in RSS when sizes come and go.
 */
static int work_churn(void)
{
	enum { N = 20000 };
	static unsigned char *v[N];
	static size_t sz[N];
	size_t live = 0;
	int n = 0;

	for (long k = 0; k < 200000; k++) {
		if (n && (live >= 64 * MiB || n == N || xr() % 2)) {
			int i = (int)(xr() % (unsigned long long)n);
			if (v[i][0] != (unsigned char)sz[i] || v[i][sz[i] - 1] != (unsigned char)sz[i])
				return 1;
			free(v[i]);
			live -= sz[i];
			v[i] = v[--n];
			sz[i] = sz[n];
		} else {
			int b = 13 + (int)(xr() % 8);
			size_t size = ((size_t)1 << b) + xr() % ((size_t)1 << b);
			unsigned char *p = malloc(size);
			if (!p)
				return 1;
			memset(p, (unsigned char)size, size);
			v[n] = p;
			sz[n++] = size;
			live += size;
		}
	}
	while (n)
		free(v[--n]);
	return 0;
}

/* Blocks of @size until malloc fails or 1600 MiB; prints the MiB reached. */
static int work_ulimit(size_t size)
{
	size_t total = 0;

	while (total < 1600 * MiB) {
		char *p = malloc(size);
		if (!p)
			break;
		p[0] = p[size - 1] = 1;
		total += size;
	}
	printf("%zu\n", total / MiB);
	return 0;
}

struct result {
	double secs, sys, faults, rss_mb, mib;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void limit_address_space(void)
{
	struct rlimit rl = { 2000000UL * 1024, 2000000UL * 1024 };

	setrlimit(RLIMIT_AS, &rl);
}

/* One child: this binary, @args, under @preload; false if it failed. */
static bool run(const char *self, const char *preload, const char *arg, const char *arg2, bool limit,
		struct result *res)
{
	char *argv[] = { (char *)self, (char *)arg, (char *)arg2, NULL };
	int fd;
	double t0 = now_s();
	pid_t pid = bench_spawn(argv, preload, NULL, &fd, limit ? limit_address_space : NULL);

	if (pid < 0)
		return false;
	char out[64] = "";
	ssize_t n = read(fd, out, sizeof(out) - 1);
	close(fd);
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return false;
	res->secs = now_s() - t0;
	res->sys = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	res->faults = (double)ru.ru_minflt;
	res->rss_mb = (double)ru.ru_maxrss / 1024;
	res->mib = n > 0 ? atof(out) : 0;
	return true;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--grow"))
		return work_grow();
	if (argc >= 2 && !strcmp(argv[1], "--mix"))
		return work_mix();
	if (argc >= 2 && !strcmp(argv[1], "--churn"))
		return work_churn();
	if (argc >= 3 && !strcmp(argv[1], "--ulimit"))
		return work_ulimit((size_t)atol(argv[2]));

	int rounds = 3;
	if (argc == 3 && !strcmp(argv[1], "-r"))
		rounds = atoi(argv[2]);
	if (rounds < 1 || rounds > 15) {
		fprintf(stderr, "usage: %s [-r ROUNDS (1..15)]\n", argv[0]);
		return 2;
	}
	char self[PATH_MAX], kmem[PATH_MAX + 64];
	if (!bench_self_and_kmem(self, kmem))
		return 1;
	const struct bench_alloc *allocs = bench_allocs;
	static const struct { const char *title, *arg, *arg2; bool limit; } cases[] = {
		{ "grow", "--grow", NULL, false },
		{ "mix", "--mix", NULL, false },
		{ "churn", "--churn", NULL, false },
		{ "ulimit 1000 B", "--ulimit", "1000", true },
		{ "ulimit 8 MiB", "--ulimit", "8388608", true },
	};
	enum { NA = BENCH_NR_ALLOCS, NC = sizeof(cases) / sizeof(cases[0]) };
	static double v[NC][NA][5][15];
	int ok[NA];

	for (int a = 0; a < NA; a++)
		ok[a] = !allocs[a].lib || !access(allocs[a].lib, R_OK);
	for (int r = 0; r < rounds; r++)
		for (int c = 0; c < NC; c++)
			for (int k = 0; k < NA; k++) {
				int a = (k + r) % NA;	/* each round starts with another allocator */
				const char *lib = a == 0 ? kmem : allocs[a].lib;
				struct result res;
				if (!ok[a])
					continue;
				if (!run(self, lib, cases[c].arg, cases[c].arg2, cases[c].limit, &res)) {
					fprintf(stderr, "%s failed under %s\n", cases[c].title, allocs[a].name);
					ok[a] = 0;
					continue;
				}
				v[c][a][0][r] = res.secs;
				v[c][a][1][r] = res.sys;
				v[c][a][2][r] = res.faults;
				v[c][a][3][r] = res.rss_mb;
				v[c][a][4][r] = res.mib;
			}

	printf("bench_big_blocks: median of %d rounds (alternating allocators); grow = realloc by\n"
	       "halves to 16 MiB x200; mix = 10000 random free/posix_memalign/realloc steps on 64\n"
	       "slots (to 20 MiB); churn = 200000 frees or mallocs of 8 KiB-2 MiB blocks, written\n"
	       "whole, up to 64 MiB live; ulimit = MiB of blocks malloc gives under ulimit -v 2000000\n\n",
	       rounds);
	printf("%-10s | %21s | %21s | %21s | %13s | %13s\n", "", "grow", "mix", "churn", "ulimit 1000 B",
	       "ulimit 8 MiB");
	printf("%-10s | %6s %6s %7s | %6s %6s %7s | %6s %6s %7s | %13s | %13s\n", "allocator", "s", "sys s",
	       "faults", "s", "sys s", "faults", "s", "sys s", "faults", "MiB", "MiB");
	for (int a = 0; a < NA; a++) {
		if (!ok[a])
			continue;
		printf("%-10s |", allocs[a].name);
		for (int c = 0; c < 3; c++)
			printf(" %6.2f %6.2f %6.0fk |", median(v[c][a][0], rounds), median(v[c][a][1], rounds),
			       median(v[c][a][2], rounds) / 1000);
		printf(" %13.0f | %13.0f\n", median(v[3][a][4], rounds), median(v[4][a][4], rounds));
	}
	printf("\npeak RSS (MB): ");
	for (int a = 0; a < NA; a++)
		if (ok[a])
			printf("%s grow %.0f mix %.0f churn %.0f%s", allocs[a].name, median(v[0][a][3], rounds),
			       median(v[1][a][3], rounds), median(v[2][a][3], rounds), a + 1 < NA ? "; " : "\n");
	return 0;
}
