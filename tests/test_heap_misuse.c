// SPDX-License-Identifier: MIT
/*
 * Heap misuse, on glibc and on kmem: each case is a small program (this
 * executable run with "--case NAME") that misuses the heap once, then
 * checks the heap is still whole (200 blocks of the size, all distinct, no
 * block handed out twice) and exits 0, or 3 if it is not.  The driver runs
 * every case three ways:
 *
 *   glibc      this process's own malloc (no LD_PRELOAD)
 *   default    LD_PRELOAD=libkmem-malloc.so, KMEM_CMDLINE=$KMEM_TEST_CMDLINE
 *   hardened   the same with kmem.hardened added
 *
 * on the back-end $KMEM_TEST_CMDLINE chooses (the @slab and @slob variants:
 * slab=slab, slab=slob; SLUB without it) *
 * and classifies each run: "caught" (a report on stderr, or for glibc an
 * abort with its message), "missed" (nothing said), "CORRUPT" (a block
 * handed out twice), "crash" (a signal other than SIGABRT).  Under kmem's
 * default a caught case must also have run on to the end (status 0); under
 * hardened it must have stopped (SIGABRT after the report).
 *
 * What must hold (see docs/hardening.md for the table this prints):
 *  - default catches, and runs on after, every case it promises (all but
 *    those in the back-end's *_default_misses[]);
 *  - hardened catches every case but those in its *_hardened_misses[],
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

/*
 * The same writes, into a neighbour that is free: of eight blocks the two
 * closest in address (neighbours), the one written beyond freed first.
 * kmem has no header in front of a slab object, but a free one holds the
 * free key (SLUB: its first word) or the heap's encoding (SLOB: its
 * header), which a check on the way back to the slabs can see.
 */
static void free_neighbour(size_t size, long at, size_t len)
{
	char *b[8];
	int lo = 0, hi = 1;

	for (int i = 0; i < 8; i++)
		b[i] = malloc(size);
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++)
			if (b[j] > b[i] && (size_t)(b[j] - b[i]) < (size_t)(b[hi] > b[lo] ? b[hi] - b[lo] : -1))
				lo = i, hi = j;
	int w = at > 0 ? lo : hi, n = at > 0 ? hi : lo;	/* written from w into n */
	free_fn(b[n]);
	memset(b[w] + at, 0x41, len);
	for (int i = 0; i < 8; i++)
		if (i != n)
			free_fn(b[i]);
}

static int overflow_free_neighbour(size_t size, long at, size_t len)
{
	free_neighbour(size, at, len);
	return heap_whole(size, NULL);
}

struct nb_args { size_t size; long at; size_t len; };

static void *free_neighbour_thread(void *arg)
{
	struct nb_args *a = arg;
	free_neighbour(a->size, a->at, a->len);
	return NULL;
}

/* In a thread that then exits: what it held goes back to the slabs. */
static int overflow_free_neighbour_exit(size_t size, long at, size_t len)
{
	pthread_t t;
	struct nb_args a = { size, at, len };
	pthread_create(&t, NULL, free_neighbour_thread, &a);
	pthread_join(t, NULL);
	return heap_whole(size, NULL);
}

static int overflow_1_free(void)	{ return overflow_free_neighbour(64, 64, 1); }
static int overflow_32_free(void)	{ return overflow_free_neighbour(64, 64, 32); }
static int underflow_1_free(void)	{ return overflow_free_neighbour(64, -1, 1); }
static int underflow_32_free(void)	{ return overflow_free_neighbour(64, -32, 32); }
static int overflow_1_free_exit(void)	{ return overflow_free_neighbour_exit(64, 64, 1); }
static int overflow_32_free_exit(void)	{ return overflow_free_neighbour_exit(64, 64, 32); }
static int underflow_1_free_exit(void)	{ return overflow_free_neighbour_exit(64, -1, 1); }
static int underflow_32_free_exit(void)	{ return overflow_free_neighbour_exit(64, -32, 32); }

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
	{ "overflow_1_free", overflow_1_free },
	{ "overflow_32_free", overflow_32_free },
	{ "underflow_1_free", underflow_1_free },
	{ "underflow_32_free", underflow_32_free },
	{ "overflow_1_free_exit", overflow_1_free_exit },
	{ "overflow_32_free_exit", overflow_32_free_exit },
	{ "underflow_1_free_exit", underflow_1_free_exit },
	{ "underflow_32_free_exit", underflow_32_free_exit },
	{ "write_after_free", write_after_free },
	{ "write_after_free_then_free", write_after_free_then_free },
};
#define NR_CASES (sizeof(cases) / sizeof(cases[0]))

/*
 * What each back-end does not promise to catch, and why (docs/hardening.md
 * has the table this prints for each).  Every other case must be caught.
 *
 * Default, SLUB and SLAB: a slab object has no header, so a write past or
 * before a block into a live neighbour, and a write after free, need red
 * zones and poison (slab_debug=ZP, kmem.hardened).  A write into a free
 * neighbour changes its free key (SLUB: the first word), which is
 * checked when a sheaf goes back to the slabs (a full barn) or to the
 * barn at a thread's exit: so the writes past a block in a thread that exits are caught on
 * SLUB; before a block, the key word is not reached, and in a thread that
 * runs on, the neighbour is handed out again from its sheaf unchecked (a
 * check there would cost the hot allocation 3 instructions).  SLAB has no
 * such check (a free object of an OBJFREELIST slab may hold the slab's
 * index array over its first word).
 *
 * Default, SLOB: a kmalloc block has a header (its size and a check of
 * it) and a free block the heap's encoding, both checked when walked; a
 * 1-byte write into a free block's size can leave a valid encoding, and a
 * write after free lands past the encoding.
 */
static const char *const slub_default_misses[] = {
	"overflow_1", "overflow_1_slack", "overflow_32", "underflow_1", "underflow_32",
	"overflow_1_free", "overflow_32_free", "underflow_1_free", "underflow_32_free",
	"underflow_1_free_exit", "underflow_32_free_exit",
	"write_after_free", "write_after_free_then_free", NULL,
};
static const char *const slab_default_misses[] = {
	"overflow_1", "overflow_1_slack", "overflow_32", "underflow_1", "underflow_32",
	"overflow_1_free", "overflow_32_free", "underflow_1_free", "underflow_32_free",
	"overflow_1_free_exit", "overflow_32_free_exit", "underflow_1_free_exit", "underflow_32_free_exit",
	"write_after_free", "write_after_free_then_free", NULL,
};
static const char *const slob_default_misses[] = {
	"overflow_1_slack", "overflow_1_free", "overflow_1_free_exit",
	"write_after_free", "write_after_free_then_free", NULL,
};

/*
 * Hardened.  SLUB and SLAB: a write past the size asked for but inside
 * the slot needs the kmalloc red zone, which needs slab_debug=U (15x the
 * profile's cost): "kmem.hardened slab_debug=FZPU" catches it.  SLOB
 * (whose red zone follows the size asked for) misses nothing: its free
 * blocks are poison past the heap's encoding, checked when the memory is
 * handed out again or its block merges with a block freed next to it, and
 * a page left wholly free is kept a while, so a write after the free that
 * emptied it is seen when it is used again.
 */
static const char *const slub_hardened_misses[] = { "overflow_1_slack", NULL };
static const char *const slob_hardened_misses[] = { NULL };

static const char *const *default_misses = slub_default_misses;
static const char *const *hardened_misses = slub_hardened_misses;

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

static bool promised(const char *const *misses, const char *name)
{
	for (; *misses; misses++)
		if (!strcmp(*misses, name))
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

	/* The back-end under test (the @slab/@slob variants: slab=slab, slab=slob), under both kmem columns. */
	const char *extra = getenv("KMEM_TEST_CMDLINE");
	char dflt[512], hard[sizeof(dflt) + 16];
	snprintf(dflt, sizeof(dflt), "%s", extra ? extra : "");
	snprintf(hard, sizeof(hard), "%s%skmem.hardened", dflt, *dflt ? " " : "");
	printf("kmem: KMEM_CMDLINE=\"%s\" and \"%s\"\n", dflt, hard);
	if (strstr(dflt, "slab=slab")) {
		default_misses = slab_default_misses;
	} else if (strstr(dflt, "slab=slob")) {
		default_misses = slob_default_misses;
		hardened_misses = slob_hardened_misses;
	}

	int failed = 0;
	unsigned int caught[3] = { 0 };
	printf("%-28s %-8s %-8s %-8s\n", "case", "glibc", "default", "hardened");
	for (size_t i = 0; i < NR_CASES; i++) {
		const char *name = cases[i].name;
		struct run g = run_case(self, name, NULL, NULL);
		struct run d = run_case(self, name, so, *dflt ? dflt : NULL);
		struct run h = run_case(self, name, so, hard);
		caught[0] += g.v == CAUGHT;
		caught[1] += d.v == CAUGHT;
		caught[2] += h.v == CAUGHT;
		printf("%-28s %-8s %-8s %-8s\n", name, verdict_name[g.v], verdict_name[d.v], verdict_name[h.v]);
		if (d.v == CAUGHT && !d.ran_on) {
			printf("FAIL %s: kmem's default reported it but did not run on\n", name);
			failed++;
		}
		if (promised(default_misses, name) && d.v != CAUGHT) {
			printf("FAIL %s: kmem's default: %s%s\n", name, verdict_name[d.v],
			       g.v == CAUGHT ? " (glibc catches it)" : "");
			failed++;
		}
		if (promised(hardened_misses, name) && (h.v != CAUGHT || !h.stopped)) {
			printf("FAIL %s: kmem.hardened: %s%s\n", name, verdict_name[h.v],
			       h.v == CAUGHT ? " but did not stop" : "");
			failed++;
		}
	}
	printf("caught: glibc %u, default %u, hardened %u of %zu\n", caught[0], caught[1], caught[2], NR_CASES);
	printf("%s\n", failed ? "FAILED" : "ok");
	return failed ? 1 : 0;
}
