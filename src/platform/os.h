/* SPDX-License-Identifier: MIT */
/*
 * Platform layer: the only place that talks to the OS (mmap, madvise,
 * threads, locks).  Everything above it is portable allocator logic.
 */
#ifndef KMEM_OS_H
#define KMEM_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>

/* Reserve @size bytes of address space aligned to @align; no memory is committed. */
void *os_reserve(size_t size, size_t align);
/* Reserve exactly [addr, addr+size), only if nothing is mapped there: 0 or -errno. */
int os_reserve_at(void *addr, size_t size);
/* Give back [addr, addr+size) of a reservation: the address space, not only the memory. */
void os_unreserve(void *addr, size_t size);
/* @size bytes of page-aligned read/write memory, in one system call; NULL if none. */
void *os_map(size_t size);
/* Make [addr, addr+size) of a reservation usable (read/write). */
int os_commit(void *addr, size_t size);
/* Give the backing memory of [addr, addr+size) back; it refaults as zeroes. */
int os_release(void *addr, size_t size);
/* Fault [addr, addr+size) in for writing now (MADV_POPULATE_WRITE); -errno if not. */
int os_populate(void *addr, size_t size);

unsigned int os_nr_cpus(void);
unsigned long os_total_ram(void);
/* Swap space configured on the host (sysinfo()), 0 if unknown. */
unsigned long os_total_swap(void);
/* The address-space limit (RLIMIT_AS, ulimit -v) in bytes; ULONG_MAX if none. */
unsigned long os_address_space_limit(void);
unsigned long os_address_space_used(void);
unsigned long os_page_size(void);
int os_getpid(void);
int os_gettid(void);
void os_write_stderr(const char *buf, size_t len);
/*
 * Keep a copy of stderr (a high descriptor, from 1000 up when the fd limit
 * allows, close-on-exec) for os_write_stderr() to fall back on once the
 * program has closed fd 2: coreutils close it in an atexit handler, before
 * kmem's exit report.  Used only while it is still the same file; a fork's
 * child closes it (os_forget_stderr()).
 */
void os_keep_stderr(void);
void os_forget_stderr(void);
unsigned long long os_now_ns(void);
/* Sleep about @us microseconds (a retry's back-off). */
void os_sleep_us(unsigned int us);
_Noreturn void os_abort(void);

/*
 * Start a detached background thread running @fn(@arg), named @name, with
 * every signal blocked (the program's signals go to its own threads),
 * SCHED_OTHER on the process's CPUs.  0 or -errno.
 */
int os_thread_start(void *(*fn)(void *), void *arg, const char *name);

/* Live threads in the process now (/proc/self/stat; an exited main thread not counted), -1 if unknown. */
int os_nr_threads(void);

/* Run @fn(@arg) when the calling thread exits (after all our TLS users). */
typedef void (*os_thread_exit_fn)(void *arg);
int os_thread_exit_key_create(pthread_key_t *key, os_thread_exit_fn fn);

/*
 * True while the process has a single thread (glibc's __libc_single_threaded:
 * pthread_create clears it before the second thread exists, so the only
 * thread never sees it change under its feet).  Slow paths then do their
 * read-modify-writes of shared words with plain loads and stores, as glibc's
 * malloc skips its arena lock: a locked instruction is a full barrier, and
 * random frees take a cache miss on each one.  Without the variable (another
 * libc) the answer is always false.  Threads made with a raw clone() that
 * call malloc break this, as they break glibc's malloc.
 */
extern char __libc_single_threaded __attribute__((weak));

static inline bool os_single_threaded(void)
{
	return &__libc_single_threaded && __atomic_load_n(&__libc_single_threaded, __ATOMIC_RELAXED);
}

/* Locks: a mutex for slow paths, never taken on a fast path. */
typedef struct {
	pthread_mutex_t m;
} kmem_lock_t;

#define KMEM_LOCK_INIT { PTHREAD_MUTEX_INITIALIZER }

static inline void kmem_lock_init(kmem_lock_t *l)
{
	pthread_mutex_init(&l->m, NULL);
}

static inline void kmem_lock(kmem_lock_t *l)
{
	pthread_mutex_lock(&l->m);
}

static inline void kmem_unlock(kmem_lock_t *l)
{
	pthread_mutex_unlock(&l->m);
}

static inline bool kmem_trylock(kmem_lock_t *l)
{
	return pthread_mutex_trylock(&l->m) == 0;
}

#endif /* KMEM_OS_H */
