// SPDX-License-Identifier: MIT
/*
 * Heap misuse, on glibc and on kmem: each case is a small program (this
 * executable run with "--case NAME") that misuses the heap once, then
 * checks the heap is still whole (200 blocks of the size, all distinct, no
 * block handed out twice) and exits 0, or 3 if it is not.  The driver runs
 * every case three ways:
 *
 *   glibc      this process's own malloc (no LD_PRELOAD)
 *   default    LD_PRELOAD=libkmem-malloc.so
 *   hardened   the same with KMEM_CMDLINE=kmem.hardened
 *
 * and classifies each run: "caught" (a report on stderr, or for glibc an
 * abort with its message), "missed" (nothing said), "CORRUPT" (a block
 * handed out twice), "crash" (a signal other than SIGABRT).  Under kmem's
 * default a caught case must also have run on to the end (status 0); under
 * hardened it must have stopped (SIGABRT after the report).
 *
 * What must hold (see docs/hardening.md for the table this prints):
 *  - default catches, and runs on after, every case it promises (all but
 *    those in default_does_not_promise[]);
 *  - hardened catches every case but the one in hardened_does_not_promise[],
 *    and stops.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

/* The compiler must not see through these: they are the misuse. */
static void *volatile sink;
static void (*volatile free_fn)(void *) = free;
static void *(*volatile realloc_fn)(void *, size_t) = realloc;
static size_t (*volatile usable_fn)(void *) = malloc_usable_size;

static char global_buf[64] = "a global";
static char bss_buf[64];

/* 200 blocks of @size: all distinct and disjoint, none the @live one. 0 if whole, 3 if not. */
static int heap_whole(size_t size, const void *live)
{
	enum { N = 200 };
	char *p[N];

	for (int i = 0; i < N; i++) {
		p[i] = malloc(size);
		if (!p[i])
			return 0;	/* out of memory is no corruption */
		memset(p[i], i, size);
	}
	for (int i = 0; i < N; i++) {
		if (p[i] == live)
			return 3;
		for (int j = i + 1; j < N; j++)
			if (p[i] == p[j])
				return 3;
		for (size_t k = 0; k < size; k++)
			if (p[i][k] != (char)i)
				return 3;
	}
	for (int i = 0; i < N; i++)
		free(p[i]);
	return 0;
}

static int double_free_last(void)
{
	char *p = malloc(64);
	free_fn(p);
	free_fn(p);
	return heap_whole(64, NULL);
}

/* Freed again after 100 other frees of its size: no longer the last one. */
static int double_free_buried(void)
{
	char *q[100];
	char *p = malloc(64);
	for (int i = 0; i < 100; i++)
		q[i] = malloc(64);
	free_fn(p);
	for (int i = 0; i < 100; i++)
		free_fn(q[i]);
	free_fn(p);
	return heap_whole(64, NULL);
}

static void *free_in_thread(void *p)
{
	free_fn(p);
	return NULL;
}

/* Freed by one thread, then again by another. */
static int double_free_threads(void)
{
	pthread_t t;
	char *p = malloc(64);
	pthread_create(&t, NULL, free_in_thread, p);
	pthread_join(t, NULL);
	for (int i = 0; i < 10; i++)
		free(malloc(64));
	pthread_create(&t, NULL, free_in_thread, p);
	pthread_join(t, NULL);
	return heap_whole(64, NULL);
}

/* A block from the page allocator (64 KiB), freed twice. */
static int double_free_large(void)
{
	char *p = malloc(64 << 10);
	free_fn(p);
	free_fn(p);
	return heap_whole(64 << 10, NULL);
}

/* A block that is a mapping of its own (8 MiB), freed twice. */
static int double_free_huge(void)
{
	char *p = malloc(8 << 20);
	memset(p, 1, 4096);
	free_fn(p);
	free_fn(p);
	return heap_whole(4096, NULL);
}

static int invalid_free_stack(void)
{
	char buf[64];
	memset(buf, 1, sizeof(buf));
	sink = buf;
	free_fn(buf);
	return heap_whole(64, NULL);
}

static int invalid_free_global(void)
{
	free_fn(global_buf);
	return heap_whole(64, NULL);
}

static int invalid_free_bss(void)
{
	free_fn(bss_buf);
	return heap_whole(64, NULL);
}

static int invalid_free_mmap(void)
{
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	free_fn(m + 16);
	return heap_whole(64, NULL);
}

static int invalid_free_one(void)
{
	free_fn((void *)1);
	return heap_whole(64, NULL);
}

/* 16 bytes into a live block. */
static int invalid_free_interior(void)
{
	char *p = malloc(64);
	free_fn(p + 16);
	int rc = heap_whole(64, p);
	free(p);
	return rc;
}

static int invalid_realloc_stack(void)
{
	char buf[64];
	memset(buf, 1, sizeof(buf));
	sink = buf;
	sink = realloc_fn(buf, 8192);
	return heap_whole(64, NULL);
}

static int invalid_usable_size_stack(void)
{
	char buf[64];
	sink = buf;
	sink = (void *)usable_fn(buf);
	return heap_whole(64, NULL);
}

/*
 * Writes past or before a block, then it and its neighbours are freed.
 * The block is the one at the highest address of eight, so that the heap
 * has memory of its own below it (a slab's first block has none: the
 * write itself would fault), and not the last (above it, its neighbours).
 */
static int overflow(size_t size, long at, size_t len)
{
	char *b[8];
	int hi = 0, next = -1;

	for (int i = 0; i < 8; i++)
		b[i] = malloc(size);
	for (int i = 1; i < 8; i++)
		if (b[i] > b[hi])
			hi = i;
	if (at > 0) {
		/* Past the end: the highest but one, so another block follows. */
		for (int i = 0; i < 8; i++)
			if (i != hi && (next < 0 || b[i] > b[next]))
				next = i;
		hi = next;
	}
	memset(b[hi] + at, 0x41, len);
	free_fn(b[hi]);
	for (int i = 0; i < 8; i++)
		if (i != hi)
			free_fn(b[i]);
	return heap_whole(size, NULL);
}

static int overflow_1(void)	{ return overflow(64, 64, 1); }
/* Past the 24 bytes asked for, inside the 32-byte slot: only a red zone of the request size sees it. */
static int overflow_1_slack(void)	{ return overflow(24, 24, 1); }
static int overflow_32(void)	{ return overflow(64, 64, 32); }
static int underflow_1(void)	{ return overflow(64, -1, 1); }
static int underflow_32(void)	{ return overflow(64, -32, 32); }

/* A write into a freed block, then the heap goes on (its blocks are handed out again). */
static int write_after_free(void)
{
	char *p = malloc(64);
	free_fn(p);
	memset(p, 0x41, 16);
	sink = malloc(64);
	sink = malloc(64);
	return 0;
}

/* The same, and the freed block's neighbours are freed after the write. */
static int write_after_free_then_free(void)
{
	char *a = malloc(64), *p = malloc(64), *b = malloc(64);
	free_fn(p);
	memset(p, 0x41, 16);
	free_fn(a);
	free_fn(b);
	return heap_whole(64, NULL);
}

static const struct misuse {
	const char *name;
	int (*fn)(void);
} cases[] = {
	{ "double_free_last", double_free_last },
	{ "double_free_buried", double_free_buried },
	{ "double_free_threads", double_free_threads },
	{ "double_free_large", double_free_large },
	{ "double_free_huge", double_free_huge },
	{ "invalid_free_stack", invalid_free_stack },
	{ "invalid_free_global", invalid_free_global },
	{ "invalid_free_bss", invalid_free_bss },
	{ "invalid_free_mmap", invalid_free_mmap },
	{ "invalid_free_one", invalid_free_one },
	{ "invalid_free_interior", invalid_free_interior },
	{ "invalid_realloc_stack", invalid_realloc_stack },
	{ "invalid_usable_size_stack", invalid_usable_size_stack },
	{ "overflow_1", overflow_1 },
	{ "overflow_1_slack", overflow_1_slack },
	{ "overflow_32", overflow_32 },
	{ "underflow_1", underflow_1 },
	{ "underflow_32", underflow_32 },
	{ "write_after_free", write_after_free },
	{ "write_after_free_then_free", write_after_free_then_free },
};
#define NR_CASES (sizeof(cases) / sizeof(cases[0]))

/*
 * What kmem's default does not promise to catch (docs/hardening.md), and
 * why: overruns and writes after free need red zones and poison (a block
 * has no header to check: slab_debug=ZP, kmem.hardened).  The table shows
 * what each actually does.
 */
static const char *const default_does_not_promise[] = {
	"overflow_1", "overflow_1_slack", "overflow_32", "underflow_1", "underflow_32",
	"write_after_free", "write_after_free_then_free",
};

/*
 * What kmem.hardened does not promise: a write past the size asked for but
 * inside the slot needs the kmalloc red zone, which needs slab_debug=U
 * (15x the profile's cost): "kmem.hardened slab_debug=FZPU" catches it.
 */
static const char *const hardened_does_not_promise[] = { "overflow_1_slack" };

enum verdict { CAUGHT, MISSED, CORRUPT, CRASH };
static const char *const verdict_name[] = { "caught", "missed", "CORRUPT", "crash" };

struct run {
	enum verdict v;
	bool stopped;		/* ended by SIGABRT */
	bool ran_on;		/* exit status 0 */
};

static bool reported(const char *err)
{
	/* kmem's reports, and glibc's malloc_printerr() messages. */
	return strstr(err, "WARNING:") || strstr(err, "BUG ") || strstr(err, "free(): ") ||
	       strstr(err, "malloc(): ") || strstr(err, "realloc(): ") || strstr(err, "double free") ||
	       strstr(err, "corrupted") || strstr(err, "munmap_chunk()");
}

static struct run run_case(const char *self, const char *name, const char *preload, const char *cmdline)
{
	char path[] = "/tmp/kmem-misuse.XXXXXX";
	int fd = mkstemp(path);
	struct run r = { MISSED, false, false };

	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd, 2);
		if (preload)
			setenv("LD_PRELOAD", preload, 1);
		else
			unsetenv("LD_PRELOAD");
		if (cmdline)
			setenv("KMEM_CMDLINE", cmdline, 1);
		else
			unsetenv("KMEM_CMDLINE");
		/* glibc's own checks as it ships them (no MALLOC_CHECK_, no tunables). */
		unsetenv("MALLOC_CHECK_");
		unsetenv("GLIBC_TUNABLES");
		execl(self, self, "--case", name, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	char err[8192];
	ssize_t n = pread(fd, err, sizeof(err) - 1, 0);
	err[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);

	bool said = reported(err);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) {
		r.stopped = true;
		r.v = CAUGHT;	/* glibc aborts with its message; kmem after its report */
	} else if (WIFSIGNALED(status)) {
		r.v = said ? CAUGHT : CRASH;
	} else if (WEXITSTATUS(status) == 3) {
		r.v = CORRUPT;
	} else {
		r.ran_on = WEXITSTATUS(status) == 0;
		r.v = said ? CAUGHT : MISSED;
	}
	return r;
}

static bool promised(const char *name)
{
	for (size_t i = 0; i < sizeof(default_does_not_promise) / sizeof(default_does_not_promise[0]); i++)
		if (!strcmp(default_does_not_promise[i], name))
			return false;
	return true;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--case")) {
		for (size_t i = 0; i < NR_CASES; i++)
			if (!strcmp(cases[i].name, argv[2]))
				return cases[i].fn();
		return 126;
	}
	if (SANITIZED) {
		printf("skipped: sanitizer build (LD_PRELOAD of libkmem-malloc.so cannot work)\n");
		return 77;
	}
	const char *bin = getenv("KMEM_BINARY_DIR");
	char so[4096], self[4096];
	snprintf(so, sizeof(so), "%s/lib/libkmem-malloc.so", bin && *bin ? bin : KMEM_SOURCE_DIR "/build");
	struct stat st;
	if (stat(so, &st)) {
		printf("skipped: %s not built\n", so);
		return 77;
	}
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return 1;
	self[len] = '\0';

	int failed = 0;
	unsigned int caught[3] = { 0 };
	printf("%-28s %-8s %-8s %-8s\n", "case", "glibc", "default", "hardened");
	for (size_t i = 0; i < NR_CASES; i++) {
		const char *name = cases[i].name;
		struct run g = run_case(self, name, NULL, NULL);
		struct run d = run_case(self, name, so, NULL);
		struct run h = run_case(self, name, so, "kmem.hardened");
		caught[0] += g.v == CAUGHT;
		caught[1] += d.v == CAUGHT;
		caught[2] += h.v == CAUGHT;
		printf("%-28s %-8s %-8s %-8s\n", name, verdict_name[g.v], verdict_name[d.v], verdict_name[h.v]);
		if (d.v == CAUGHT && !d.ran_on) {
			printf("FAIL %s: kmem's default reported it but did not run on\n", name);
			failed++;
		}
		if (promised(name) && d.v != CAUGHT) {
			printf("FAIL %s: kmem's default: %s%s\n", name, verdict_name[d.v],
			       g.v == CAUGHT ? " (glibc catches it)" : "");
			failed++;
		}
		bool hardened_promised = strcmp(name, hardened_does_not_promise[0]) != 0;
		if (hardened_promised && (h.v != CAUGHT || !h.stopped)) {
			printf("FAIL %s: kmem.hardened: %s%s\n", name, verdict_name[h.v],
			       h.v == CAUGHT ? " but did not stop" : "");
			failed++;
		}
	}
	printf("caught: glibc %u, default %u, hardened %u of %zu\n", caught[0], caught[1], caught[2], NR_CASES);
	printf("%s\n", failed ? "FAILED" : "ok");
	return failed ? 1 : 0;
}
