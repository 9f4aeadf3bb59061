// SPDX-License-Identifier: MIT
/*
 * bench_startup: what an allocator costs a short-lived process, as in a
 * shell script's pipeline of small commands.  Each allocator (LD_PRELOAD in
 * the children: kmem's build/lib/libkmem-malloc.so, glibc, and jemalloc,
 * mimalloc, tcmalloc where Debian's packages are installed) runs N child
 * processes, one after another, that each make 200 allocations of 16 B to
 * 6 KB, free half, fork once (the child exits at once) and exit.
 * Reported: wall time per process and its page faults (the children's
 * getrusage() ru_minflt), and the ratio to glibc.  Rounds alternate the
 * allocators; the median round counts.
 *
 *   bench_startup [-n PROCESSES] [-r ROUNDS]      default -n 200 -r 5
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static int child_work(void)
{
	void *p[200];
	unsigned int s = 12345;

	for (int i = 0; i < 200; i++) {
		s = s * 1103515245u + 12345u;
		size_t n = 16 + (s >> 8) % (i % 10 ? 512 : 6000);
		p[i] = malloc(n);
		if (!p[i])
			return 1;
		memset(p[i], i, n);
	}
	for (int i = 0; i < 200; i += 2)
		free(p[i]);
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return 0;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* @n children of this binary under @preload; per process: *us and *faults.  False if one failed. */
static int run(const char *self, const char *preload, int n, double *us, double *faults)
{
	struct rusage before, after;

	getrusage(RUSAGE_CHILDREN, &before);
	double t0 = now_us();
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return 0;
		if (pid == 0) {
			if (preload)
				setenv("LD_PRELOAD", preload, 1);
			else
				unsetenv("LD_PRELOAD");
			execl(self, self, "--child", (char *)NULL);
			_exit(127);
		}
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			return 0;
	}
	*us = (now_us() - t0) / n;
	getrusage(RUSAGE_CHILDREN, &after);
	*faults = (double)(after.ru_minflt - before.ru_minflt) / n;
	return 1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--child"))
		return child_work();

	int n = 200, rounds = 5;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-n"))
			n = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-r"))
			rounds = atoi(argv[i + 1]);
	}
	if (n < 1 || rounds < 1 || rounds > 15) {
		fprintf(stderr, "usage: %s [-n PROCESSES] [-r ROUNDS (1..15)]\n", argv[0]);
		return 2;
	}
	char self[PATH_MAX], kmem[PATH_MAX + 64];
	if (!bench_self_and_kmem(self, kmem))
		return 1;

	struct { const char *name, *lib; double us[15], faults[15]; int ok; } a[] = {
		{ "kmem", kmem, { 0 }, { 0 }, 1 },
		{ "glibc", NULL, { 0 }, { 0 }, 1 },
		{ "jemalloc", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", { 0 }, { 0 }, 1 },
		{ "mimalloc", "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2", { 0 }, { 0 }, 1 },
		{ "tcmalloc", "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4", { 0 }, { 0 }, 1 },
	};
	const int na = (int)(sizeof(a) / sizeof(a[0]));

	for (int i = 0; i < na; i++)
		if (a[i].lib && access(a[i].lib, R_OK))
			a[i].ok = 0;
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < na; k++) {
			int i = (k + r) % na;	/* each round starts with another allocator */
			if (a[i].ok && !run(self, a[i].lib, n, &a[i].us[r], &a[i].faults[r]))
				a[i].ok = -1;
		}

	printf("bench_startup: %d processes a round, each 200 allocations of 16 B-6 KB, half\n"
	       "freed, one fork; median of %d rounds (alternating allocators)\n\n", n, rounds);
	printf("%-10s | %12s | %9s | %14s | %9s\n", "allocator", "us/process", "vs glibc",
	       "faults/process", "vs glibc");
	double g_us = 0, g_f = 0;
	for (int i = 0; i < na; i++)
		if (a[i].ok == 1 && !a[i].lib) {
			qsort(a[i].us, (size_t)rounds, sizeof(double), cmp_double);
			qsort(a[i].faults, (size_t)rounds, sizeof(double), cmp_double);
			g_us = a[i].us[rounds / 2];
			g_f = a[i].faults[rounds / 2];
		}
	for (int i = 0; i < na; i++) {
		if (a[i].ok == 0)
			continue;
		if (a[i].ok < 0) {
			printf("%-10s | %12s |\n", a[i].name, "failed");
			continue;
		}
		if (a[i].lib) {
			qsort(a[i].us, (size_t)rounds, sizeof(double), cmp_double);
			qsort(a[i].faults, (size_t)rounds, sizeof(double), cmp_double);
		}
		double us = a[i].us[rounds / 2], f = a[i].faults[rounds / 2];
		printf("%-10s | %12.0f | %8.2fx | %14.0f | %8.2fx\n", a[i].name, us,
		       g_us ? us / g_us : 0, f, g_f ? f / g_f : 0);
	}
	return 0;
}
