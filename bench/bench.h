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

#include <fcntl.h>
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

/*
 * Start @argv (PATH searched) in a child: LD_PRELOAD=@preload (NULL: no
 * LD_PRELOAD at all), stdin from the file @in (NULL: inherited), stdout into
 * a pipe whose read end is put in *@out; @setup (if not NULL) runs in the
 * child just before the exec (setrlimit...).  The child's pid, or -1.
 */
static inline pid_t bench_spawn(char *const argv[], const char *preload, const char *in, int *out,
				void (*setup)(void))
{
	int fd[2];

	if (pipe(fd))
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		close(fd[0]);
		dup2(fd[1], 1);
		if (in) {
			int ifd = open(in, O_RDONLY);
			if (ifd < 0)
				_exit(126);
			dup2(ifd, 0);
		}
		if (preload)
			setenv("LD_PRELOAD", preload, 1);
		else
			unsetenv("LD_PRELOAD");
		if (setup)
			setup();
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	*out = fd[0];
	return pid;
}

/*
 * The allocators of the benchmarks that run programs under LD_PRELOAD: kmem
 * (lib NULL here: bench_self_and_kmem() finds the build's), glibc (nothing
 * preloaded) and Debian's peers, in this order.
 */
static const struct bench_alloc {
	const char *name, *lib;
} bench_allocs[] = {
	{ "kmem", NULL }, { "glibc", NULL },
	{ "jemalloc", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2" },
	{ "mimalloc", "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2" },
	{ "tcmalloc", "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4" },
};
#define BENCH_NR_ALLOCS	((int)(sizeof(bench_allocs) / sizeof(bench_allocs[0])))

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
