/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the benchmarks (header only, so every
 * benchmark stays one executable built from one .c file).
 *
 * kmem_init() works once per process, so a benchmark that compares boot
 * configurations runs each one in a forked child (bench_fork()) and gets its
 * results back through memory shared with the parent (bench_shared()).
 * The parent must not touch kmem itself.
 */
#ifndef KMEM_BENCH_H
#define KMEM_BENCH_H

#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * This binary's path into @self, and into @kmem the malloc library of the
 * same build (bin/../lib/libkmem-malloc.so), for benchmarks that run
 * themselves under each allocator with LD_PRELOAD.  False on failure.
 */
static inline bool bench_self_and_kmem(char self[PATH_MAX], char kmem[PATH_MAX + 64])
{
	ssize_t len = readlink("/proc/self/exe", self, PATH_MAX - 1);

	if (len <= 0)
		return false;
	self[len] = '\0';
	snprintf(kmem, PATH_MAX + 64, "%s", self);
	char *slash = strrchr(kmem, '/');
	if (!slash)
		return false;
	strcpy(slash, "/../lib/libkmem-malloc.so");
	return true;
}

/* Zeroed memory that a forked child writes and the parent reads; NULL on failure. */
static inline void *bench_shared(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Run @fn(@arg) in a child process and wait for it; true if it exited with 0. */
static inline bool bench_fork(void (*fn)(void *arg), void *arg)
{
	int status = 0;

	fflush(NULL);	/* or the child flushes the parent's buffered output again */
	pid_t pid = fork();
	if (pid == 0) {
		fn(arg);
		fflush(NULL);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return false;
	if (WIFSIGNALED(status))
		fprintf(stderr, "bench: child killed by signal %d\n", WTERMSIG(status));
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * @file in build/bench-results/, found from the executable's own path
 * (build/bin/bench_x), so it lands there whatever the working directory;
 * @file alone in the working directory if that fails.
 */
static inline void bench_results_path(char *out, size_t size, const char *file)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = '\0';
		char *build = dirname(dirname(exe));
		if (snprintf(out, size, "%s/bench-results", build) < (int)size) {
			mkdir(out, 0755);
			if (snprintf(out, size, "%s/bench-results/%s", build, file) < (int)size)
				return;
		}
	}
	snprintf(out, size, "%s", file);
}

/* Is @cmd on the PATH? */
static inline bool bench_have(const char *cmd)
{
	char sh[256];

	snprintf(sh, sizeof(sh), "command -v %s >/dev/null 2>&1", cmd);
	return system(sh) == 0;
}

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @v in place; returns the median. */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif /* KMEM_BENCH_H */
