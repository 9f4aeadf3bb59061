// SPDX-License-Identifier: MIT
/*
 * libkmem-trace-rec.so: preloaded by `kmem-trace record` in front of the
 * program's allocator.  Every malloc-family call goes on to the allocator
 * the program would have used (the next definition: glibc's, or an
 * allocator preloaded after this library) and is appended to a per-thread
 * buffer; a full buffer is one chunk, written with one write(2) on an
 * O_APPEND descriptor (trace_format.h).  No lock, no allocation, no system
 * call on the recording path but that write.
 *
 * Environment (set by kmem-trace record):
 *   KMEM_TRACE_OUT       the trace file (its header is already written)
 *   KMEM_TRACE_PID       the pid that records into it: other processes
 *                        (children of fork, or of fork+exec) record to
 *                        OUT.<pid> if KMEM_TRACE_CHILDREN=1, else nothing
 *   KMEM_TRACE_SITES=1   record each call's return address
 *   KMEM_TRACE_BUF_KB    per-thread buffer (default 64)
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "trace_format.h"

#define EXPORT __attribute__((visibility("default")))
#define TLS __attribute__((tls_model("initial-exec"))) __thread

struct tbuf {
	uint8_t *data;
	_Atomic size_t pos;	/* bytes of whole ops; release-stored after each */
	size_t cap;
	uint64_t tsc0, ns0;	/* the chunk's base */
	uint64_t prev_tsc, prev_addr, prev_site;
	uint32_t tid;
	struct tbuf *next;	/* every thread's, for the flush at exit */
};

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void *(*real_reallocarray)(void *, size_t, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);
static void *(*real_pvalloc)(size_t);
static int (*real_execve)(const char *, char *const[], char *const[]);
static int (*real_execvpe)(const char *, char *const[], char *const[]);

static _Atomic int rec_on;		/* recording into fd */
static int fd = -1;
static bool want_sites, want_children;
static size_t buf_cap = 64 << 10;
static char out_path[4096];
static _Atomic(struct tbuf *) all_bufs;
static pthread_key_t exit_key;

static TLS struct tbuf *my;
static TLS int busy;			/* inside our own code: do not record */

/* dlsym() may allocate before the real functions are known: a small arena. */
static char boot_arena[1 << 16] __attribute__((aligned(64)));
static size_t boot_used;
static int resolving;

static bool in_boot(const void *p)
{
	return (const char *)p >= boot_arena && (const char *)p < boot_arena + sizeof(boot_arena);
}

static void *boot_alloc(size_t size, size_t align)
{
	if (align < 16)
		align = 16;
	size_t at = (boot_used + align - 1) & ~(align - 1);
	if (at + size > sizeof(boot_arena))
		return NULL;
	boot_used = at + size;
	return boot_arena + at;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void write_all(int f, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(f, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

/* One chunk: the head and the payload in one write, so that chunks of
 * threads flushing at once never interleave. */
static void write_chunk(uint8_t type, uint32_t tid, uint64_t tsc, uint64_t ns,
			const uint8_t *payload, size_t len)
{
	struct chunk_head h = { .type = type, .len = (uint32_t)len, .tid = tid,
				.sum = trace_checksum(payload, len), .tsc = tsc, .ns = ns };
	/* The payload sits right after room for the head (see tbuf_new). */
	uint8_t *start = (uint8_t *)payload - sizeof(h);
	memcpy(start, &h, sizeof(h));
	write_all(fd, start, sizeof(h) + len);
}

static void flush(struct tbuf *b)
{
	size_t pos = atomic_load_explicit(&b->pos, memory_order_acquire);

	if (pos && fd >= 0 && atomic_load_explicit(&rec_on, memory_order_relaxed))
		write_chunk(CHUNK_OPS, b->tid, b->tsc0, b->ns0, b->data, pos);
	atomic_store_explicit(&b->pos, 0, memory_order_relaxed);
	b->tsc0 = b->prev_tsc = __rdtsc();
	b->ns0 = now_ns();
	b->prev_addr = b->prev_site = 0;
}

static struct tbuf *tbuf_new(void)
{
	size_t bytes = sizeof(struct tbuf) + sizeof(struct chunk_head) + buf_cap;
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	struct tbuf *b = m;
	b->data = (uint8_t *)(b + 1) + sizeof(struct chunk_head);
	b->cap = buf_cap;
	b->tid = (uint32_t)syscall(SYS_gettid);
	b->tsc0 = b->prev_tsc = __rdtsc();
	b->ns0 = now_ns();
	struct tbuf *head = atomic_load(&all_bufs);
	do
		b->next = head;
	while (!atomic_compare_exchange_weak(&all_bufs, &head, b));
	pthread_setspecific(exit_key, b);
	return b;
}

/* A thread's end: its buffer goes out (and is kept, for frees that later
 * destructors make; the key is set again so that they are flushed too). */
static void thread_exit(void *arg)
{
	struct tbuf *b = arg;

	busy++;
	flush(b);
	busy--;
	(void)b;
}

/* @tsc: when the op took effect (0: now).  An allocation is stamped after
 * the allocator returned, a free before it is called: so an address that
 * one thread frees and another is given sorts free first. */
static inline void record_at(uint8_t op, uint64_t a, uint64_t b, uint64_t c, uint64_t site,
			     uint64_t tsc)
{
	if (busy || !atomic_load_explicit(&rec_on, memory_order_relaxed))
		return;
	struct tbuf *t = my;
	if (!t) {
		busy++;
		t = my = tbuf_new();
		busy--;
		if (!t)
			return;
	}
	size_t pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
	if (pos + OP_ENC_MAX > t->cap) {
		busy++;
		flush(t);
		busy--;
		pos = 0;
	}
	uint8_t *p = t->data + pos;
	if (!tsc)
		tsc = __rdtsc();
	*p++ = op | (want_sites ? OPF_SITE : 0);
	p = put_varint(p, zigzag((int64_t)(tsc - t->prev_tsc)));
	t->prev_tsc = tsc;
	switch (op) {
	case OP_MALLOC:
	case OP_CALLOC:
		p = put_varint(p, a);
		p = put_addr(p, &t->prev_addr, b);
		break;
	case OP_REALLOC:
		p = put_addr(p, &t->prev_addr, a);
		p = put_varint(p, b);
		p = put_addr(p, &t->prev_addr, c);
		break;
	case OP_FREE:
		p = put_addr(p, &t->prev_addr, a);
		break;
	case OP_MEMALIGN:
		*p++ = (uint8_t)(63 - __builtin_clzll(a | 1));
		p = put_varint(p, b);
		p = put_addr(p, &t->prev_addr, c);
		break;
	}
	if (want_sites) {
		p = put_varint(p, zigzag((int64_t)(site - t->prev_site)));
		t->prev_site = site;
	}
	atomic_store_explicit(&t->pos, (size_t)(p - t->data), memory_order_release);
}

#define record(op, a, b, c, site) record_at(op, a, b, c, site, 0)
#define SITE ((uint64_t)(uintptr_t)__builtin_return_address(0))

static void open_child_file(void)
{
	char path[4200];
	uint8_t head[TRACE_HEADER_SIZE];

	snprintf(path, sizeof(path), "%s.%d", out_path, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	trace_header(head, TRACE_KIND_MALLOC);
	write_all(fd, head, sizeof(head));
}

static void atfork_prepare(void)
{
	busy++;
}

static void atfork_parent(void)
{
	busy--;
}

/* The child has copies of the parent's buffers: they are the parent's to
 * write.  It records to a file of its own, or not at all. */
static void atfork_child(void)
{
	bool was_on = atomic_load(&rec_on);

	atomic_store(&rec_on, 0);
	if (fd >= 0)
		close(fd);
	fd = -1;
	atomic_store(&all_bufs, NULL);
	if (my) {
		struct tbuf *b = my;
		b->next = NULL;
		atomic_store(&all_bufs, b);
		b->tid = (uint32_t)syscall(SYS_gettid);
		atomic_store(&b->pos, 0);
		b->tsc0 = b->prev_tsc = __rdtsc();
		b->ns0 = now_ns();
		b->prev_addr = b->prev_site = 0;
	}
	if (was_on && want_children) {
		open_child_file();
		atomic_store(&rec_on, fd >= 0);
	}
	busy--;
}

static void resolve(void)
{
	resolving = 1;
	real_malloc = dlsym(RTLD_NEXT, "malloc");
	real_free = dlsym(RTLD_NEXT, "free");
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_reallocarray = dlsym(RTLD_NEXT, "reallocarray");
	real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	real_memalign = dlsym(RTLD_NEXT, "memalign");
	real_valloc = dlsym(RTLD_NEXT, "valloc");
	real_pvalloc = dlsym(RTLD_NEXT, "pvalloc");
	real_execve = dlsym(RTLD_NEXT, "execve");
	real_execvpe = dlsym(RTLD_NEXT, "execvpe");
	resolving = 0;
}

static void rss_info(void)
{
	char buf[128];
	long pages = 0;
	int f = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);

	if (f >= 0) {
		ssize_t n = read(f, buf, sizeof(buf) - 1);
		close(f);
		if (n > 0) {
			buf[n] = 0;
			char *s = strchr(buf, ' ');
			if (s)
				pages = strtol(s + 1, NULL, 10);
		}
	}
	uint8_t chunk[sizeof(struct chunk_head) + 96];
	int len = snprintf((char *)chunk + sizeof(struct chunk_head), 96,
			   "pid=%d\nstart_rss_kb=%ld\n", (int)getpid(), pages * (sysconf(_SC_PAGESIZE) / 1024));
	write_chunk(CHUNK_INFO, 0, 0, 0, chunk + sizeof(struct chunk_head), (size_t)len);
}

__attribute__((constructor)) static void rec_init(void)
{
	busy++;
	if (!real_malloc)
		resolve();
	const char *out = getenv("KMEM_TRACE_OUT");
	const char *pid = getenv("KMEM_TRACE_PID");
	const char *s;

	want_sites = (s = getenv("KMEM_TRACE_SITES")) && *s == '1';
	want_children = (s = getenv("KMEM_TRACE_CHILDREN")) && *s == '1';
	if ((s = getenv("KMEM_TRACE_BUF_KB")) && atoi(s) >= 4)
		buf_cap = (size_t)atoi(s) << 10;
	pthread_key_create(&exit_key, thread_exit);
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	if (out && strlen(out) < sizeof(out_path)) {
		strcpy(out_path, out);
		if (pid && atoi(pid) == (int)getpid())
			fd = open(out, O_WRONLY | O_APPEND | O_CLOEXEC);
		else if (want_children)
			open_child_file();
		if (fd >= 0) {
			rss_info();
			atomic_store(&rec_on, 1);
		}
	}
	busy--;
}

/* At exit, every thread's buffer: the others may still run, but whole ops
 * only are written (pos is stored after each op). */
__attribute__((destructor)) static void rec_fini(void)
{
	busy++;
	for (struct tbuf *b = atomic_load(&all_bufs); b; b = b->next)
		flush(b);
	busy--;
}

/* Before an exec or an _exit: every buffer out. */
static void flush_before_exec(void)
{
	busy++;
	for (struct tbuf *b = atomic_load(&all_bufs); b; b = b->next)
		flush(b);
	busy--;
}

/* ---- the interposed functions ------------------------------------------ */

EXPORT void *malloc(size_t size)
{
	if (__builtin_expect(!real_malloc, 0)) {
		if (resolving)
			return boot_alloc(size, 16);
		resolve();
	}
	void *p = real_malloc(size);
	record(OP_MALLOC, size, (uintptr_t)p, 0, SITE);
	return p;
}

EXPORT void free(void *p)
{
	if (!p || in_boot(p))
		return;
	if (__builtin_expect(!real_free, 0))
		resolve();
	record(OP_FREE, (uintptr_t)p, 0, 0, SITE);
	real_free(p);
}

EXPORT void *calloc(size_t n, size_t size)
{
	if (__builtin_expect(!real_calloc, 0)) {
		if (resolving) {
			if (size && n > SIZE_MAX / size)
				return NULL;
			return boot_alloc(n * size, 16);	/* static: already zero */
		}
		resolve();
	}
	void *p = real_calloc(n, size);
	size_t total;
	if (__builtin_mul_overflow(n, size, &total))
		total = SIZE_MAX;
	record(OP_CALLOC, total, (uintptr_t)p, 0, SITE);
	return p;
}

EXPORT void *realloc(void *old, size_t size)
{
	if (__builtin_expect(!real_realloc, 0))
		resolve();
	if (in_boot(old)) {
		void *p = malloc(size);
		if (p)
			memcpy(p, old, size < 64 ? size : 64);
		return p;
	}
	/* The free half happens inside the call: stamp the op before it, so
	 * that another thread given the old address never sorts first. */
	uint64_t site = SITE, tsc = __rdtsc();
	void *p = real_realloc(old, size);
	if (!p && size && old) {
		record(OP_MALLOC, size, 0, 0, site);	/* failed: the old block stays */
		return p;
	}
	record_at(OP_REALLOC, (uintptr_t)old, size, (uintptr_t)p, site, tsc);
	return p;
}

EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	uint64_t site = SITE, tsc = __rdtsc();
	void *p = real_reallocarray ? real_reallocarray(old, n, size) : real_realloc(old, total);
	if (!p && total && old) {
		record(OP_MALLOC, total, 0, 0, site);
		return p;
	}
	record_at(OP_REALLOC, (uintptr_t)old, total, (uintptr_t)p, site, tsc);
	return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	if (__builtin_expect(!real_posix_memalign, 0)) {
		if (resolving) {
			*out = boot_alloc(size, align);
			return *out ? 0 : ENOMEM;
		}
		resolve();
	}
	int rc = real_posix_memalign(out, align, size);
	record(OP_MEMALIGN, align, size, rc ? 0 : (uintptr_t)*out, SITE);
	return rc;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	if (__builtin_expect(!real_aligned_alloc, 0))
		resolve();
	void *p = real_aligned_alloc(align, size);
	record(OP_MEMALIGN, align, size, (uintptr_t)p, SITE);
	return p;
}

EXPORT void *memalign(size_t align, size_t size)
{
	if (__builtin_expect(!real_memalign, 0))
		resolve();
	void *p = real_memalign(align, size);
	record(OP_MEMALIGN, align, size, (uintptr_t)p, SITE);
	return p;
}

EXPORT void *valloc(size_t size)
{
	if (__builtin_expect(!real_valloc, 0))
		resolve();
	void *p = real_valloc(size);
	record(OP_MEMALIGN, 4096, size, (uintptr_t)p, SITE);
	return p;
}

EXPORT void *pvalloc(size_t size)
{
	if (__builtin_expect(!real_pvalloc, 0))
		resolve();
	void *p = real_pvalloc(size);
	record(OP_MEMALIGN, 4096, (size + 4095) & ~(size_t)4095, (uintptr_t)p, SITE);
	return p;
}

/* An exec replaces the image, and the buffers with it: write them first. */
EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	flush_before_exec();
	if (!real_execve)
		resolve();
	return real_execve(path, argv, envp);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	flush_before_exec();
	if (!real_execvpe)
		resolve();
	return real_execvpe(file, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	extern char **environ;
	return execve(path, argv, environ);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	extern char **environ;
	return execvpe(file, argv, environ);
}

/* _exit() skips the destructors (a fork's child often ends with it). */
EXPORT void _exit(int status)
{
	static void (*real_exit)(int);

	flush_before_exec();
	if (!real_exit)
		real_exit = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
	real_exit(status);
	__builtin_unreachable();
}
