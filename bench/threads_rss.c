// SPDX-License-Identifier: MIT
/*
 * bench_threads_rss: what many live threads cost in memory.  N threads each
 * allocate (and write) one object in each of 10 classes, 16 B to 8000 B,
 * then wait at a barrier while the main thread reads the resident size
 * (/proc/self/statm); then they free and exit.  A per-thread cache design
 * (kmem's sheaves and cpu slabs, tcmalloc's and jemalloc's thread caches,
 * mimalloc's thread-local heaps) pays per thread here; glibc's arenas are
 * shared by threads beyond 8 x cores.
 *
 * The table has one row per allocator, run in a child under LD_PRELOAD:
 * kmem (build/lib/libkmem-malloc.so next to this binary's bin/), glibc,
 * and jemalloc, mimalloc, tcmalloc where Debian's packages are installed.
 * Thread stacks are 64 KiB, so that they weigh little.
 *
 *   bench_threads_rss [-n N[,N...]]     default -n 256,1000
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static const size_t sizes[10] = { 16, 48, 100, 256, 500, 1000, 2000, 3000, 5000, 8000 };
static pthread_barrier_t held, done;

static void *holder(void *arg)
{
	void *p[10];

	for (int i = 0; i < 10; i++) {
		p[i] = malloc(sizes[i]);
		if (!p[i])
			abort();
		memset(p[i], 0x5a, sizes[i]);
	}
	pthread_barrier_wait(&held);
	pthread_barrier_wait(&done);
	for (int i = 0; i < 10; i++)
		free(p[i]);
	return arg;
}

static long rss_kb(void)
{
	long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &res) != 2)
		res = -1;
	fclose(f);
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* In the child: the resident size with @n threads holding their objects. */
static int measure(int n)
{
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	pthread_attr_t attr;
	long base = rss_kb();

	if (!t)
		return 1;
	pthread_barrier_init(&held, NULL, (unsigned)n + 1);
	pthread_barrier_init(&done, NULL, (unsigned)n + 1);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], &attr, holder, NULL)) {
			fprintf(stderr, "pthread_create: %s\n", strerror(errno));
			return 1;
		}
	pthread_barrier_wait(&held);
	long rss = rss_kb();
	pthread_barrier_wait(&done);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%ld %ld\n", base, rss);
	free(t);
	return 0;
}

/* Run this binary under @preload (NULL: none) with @n threads; the RSS in KiB, -1 if it failed. */
static long run_child(const char *self, const char *preload, int n, long *base)
{
	int fd[2];
	char arg[32], buf[128];

	if (pipe(fd))
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		if (preload)
			setenv("LD_PRELOAD", preload, 1);
		else
			unsetenv("LD_PRELOAD");
		snprintf(arg, sizeof(arg), "%d", n);
		execl(self, self, "--child", arg, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	ssize_t len = read(fd[0], buf, sizeof(buf) - 1);
	close(fd[0]);
	int status;
	waitpid(pid, &status, 0);
	long rss = -1;
	if (len > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		buf[len] = '\0';
		if (sscanf(buf, "%ld %ld", base, &rss) != 2)
			rss = -1;
	}
	return rss;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--child"))
		return measure(atoi(argv[2]));

	int ns[8] = { 256, 1000 }, nn = 2;
	if (argc == 3 && !strcmp(argv[1], "-n")) {
		nn = 0;
		for (char *s = strtok(argv[2], ","); s && nn < 8; s = strtok(NULL, ","))
			ns[nn++] = atoi(s);
	}
	char self[PATH_MAX], kmem[PATH_MAX + 64];
	if (!bench_self_and_kmem(self, kmem))
		return 1;

	const struct { const char *name, *lib; } allocs[] = {
		{ "kmem", kmem },
		{ "glibc", NULL },
		{ "jemalloc", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2" },
		{ "mimalloc", "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2" },
		{ "tcmalloc", "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4" },
	};
	printf("bench_threads_rss: N threads each holding one object of 16, 48, 100, 256, 500,\n"
	       "1000, 2000, 3000, 5000 and 8000 bytes; resident MB with all of them alive\n"
	       "(in parentheses: less the resident size before the threads, per thread in KiB).\n\n");
	printf("%-10s", "allocator");
	for (int j = 0; j < nn; j++)
		printf(" | %8d threads          ", ns[j]);
	printf("\n");
	for (size_t i = 0; i < sizeof(allocs) / sizeof(allocs[0]); i++) {
		if (allocs[i].lib && access(allocs[i].lib, R_OK))
			continue;
		printf("%-10s", allocs[i].name);
		for (int j = 0; j < nn; j++) {
			long base = 0, rss = run_child(self, allocs[i].lib, ns[j], &base);
			if (rss < 0)
				printf(" | %26s", "failed");
			else
				printf(" | %7.1f MB (%6.1f KiB/thr)", rss / 1024.0,
				       (double)(rss - base) / ns[j]);
		}
		printf("\n");
		fflush(stdout);
	}
	return 0;
}
