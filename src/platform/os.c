// SPDX-License-Identifier: MIT
/*
 * Linux implementation of the platform layer.  Nothing here may call malloc:
 * this code runs underneath the malloc front-end.  (Except os_thread_start():
 * pthread_create() allocates the new thread's TLS vector, so its callers
 * hold no kmem lock and kmem is up.)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/syscall.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "platform/os.h"

void *os_reserve(size_t size, size_t align)
{
	size_t pg = os_page_size();

	/* Whole pages: else the tail's munmap() below fails (EINVAL) and stays mapped. */
	size = (size + pg - 1) & ~(pg - 1);
	/* mmap() aligns to a page by itself: no over-reservation, no trim. */
	size_t len = align <= pg ? size : size + align;
	if (align < pg)
		align = pg;
	char *p = mmap(NULL, len, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;

	/* Trim the over-reservation so the range starts on @align. */
	uintptr_t start = ((uintptr_t)p + align - 1) & ~((uintptr_t)align - 1);
	size_t head = start - (uintptr_t)p;
	size_t tail = len - head - size;
	if (head)
		munmap(p, head);
	if (tail)
		munmap((char *)start + size, tail);
	return (void *)start;
}

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000	/* Linux 4.17 */
#endif

int os_reserve_at(void *addr, size_t size)
{
	int saved = errno;	/* growth that fails here may still succeed smaller: errno is the caller's */
	void *p = mmap(addr, size, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED) {
		int err = errno;
		errno = saved;
		return -err;
	}
	if (p != addr) {
		/* An older kernel took the flag as a hint and put it elsewhere. */
		munmap(p, size);
		return -EEXIST;
	}
	return 0;
}

void *os_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int os_commit(void *addr, size_t size)
{
	if (mprotect(addr, size, PROT_READ | PROT_WRITE))
		return -errno;
	return 0;
}

void os_unreserve(void *addr, size_t size)
{
	munmap(addr, size);
}

int os_release(void *addr, size_t size)
{
	/*
	 * MADV_DONTNEED rather than MADV_FREE: RSS drops at once, which is what
	 * users watch, and the range reads back as zeroes.  It fails on locked
	 * memory (mlockall): then the memory is not released and not zero.
	 */
	return madvise(addr, size, MADV_DONTNEED) ? -errno : 0;
}

int os_populate(void *addr, size_t size)
{
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23		/* Linux 5.14 */
#endif
	return madvise(addr, size, MADV_POPULATE_WRITE) ? -errno : 0;
}

unsigned int os_nr_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		int n = CPU_COUNT(&set);
		if (n > 0)
			return (unsigned int)n;
	}
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned int)n : 1;
}

unsigned long os_total_ram(void)
{
	struct sysinfo si;

	if (sysinfo(&si))
		return 0;
	return (unsigned long)si.totalram * si.mem_unit;
}

unsigned long os_total_swap(void)
{
	struct sysinfo si;

	if (sysinfo(&si))
		return 0;
	return (unsigned long)si.totalswap * si.mem_unit;
}

unsigned long os_address_space_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_AS, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return ULONG_MAX;
	return (unsigned long)rl.rlim_cur;
}

/* The address space the process has mapped now (/proc/self/statm's size); 0 if unknown. */
unsigned long os_address_space_used(void)
{
	char buf[128];
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoul(buf, NULL, 10) * (unsigned long)sysconf(_SC_PAGESIZE);
}

unsigned long os_page_size(void)
{
	return (unsigned long)sysconf(_SC_PAGESIZE);
}

int os_getpid(void)
{
	return (int)getpid();
}

int os_gettid(void)
{
	return (int)syscall(SYS_gettid);
}

static int stderr_spare = -1;
static dev_t spare_dev;		/* what the copy is: the program may reuse its number */
static ino_t spare_ino;

void os_keep_stderr(void)
{
	struct rlimit rl;
	struct stat st;

	if (stderr_spare >= 0 || getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur < 16)
		return;
	/* High, where programs rarely put descriptors of their own (bash: exec 200>lock). */
	int min = rl.rlim_cur >= 1024 ? 1000 : (int)rl.rlim_cur / 2;
	stderr_spare = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, min);
	if (stderr_spare >= 0 && fstat(stderr_spare, &st)) {
		close(stderr_spare);
		stderr_spare = -1;
	} else if (stderr_spare >= 0) {
		spare_dev = st.st_dev;
		spare_ino = st.st_ino;
	}
}

/* Is the copy still ours: open, close-on-exec, the same file? */
static bool stderr_spare_valid(void)
{
	struct stat st;
	int flags = stderr_spare >= 0 ? fcntl(stderr_spare, F_GETFD) : -1;

	return flags >= 0 && (flags & FD_CLOEXEC) && !fstat(stderr_spare, &st) && st.st_dev == spare_dev &&
	       st.st_ino == spare_ino;
}

void os_forget_stderr(void)
{
	/*
	 * A fork's child: it must not hold its parent's stderr open (a daemon
	 * that redirects 0, 1 and 2 would keep its caller's pipe open).
	 */
	if (stderr_spare >= 0 && stderr_spare_valid())
		close(stderr_spare);	/* not if the number is the program's now */
	stderr_spare = -1;
}


void os_write_stderr(const char *buf, size_t len)
{
	int fd = STDERR_FILENO;

	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* The program closed its stderr (coreutils do, at exit): the copy. */
			if (errno == EBADF && fd == STDERR_FILENO && stderr_spare_valid()) {
				fd = stderr_spare;
				continue;
			}
			return;
		}
		buf += n;
		len -= (size_t)n;
	}
}

void os_sleep_us(unsigned int us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

unsigned long long os_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

_Noreturn void os_abort(void)
{
	abort();
}

int os_thread_start(void *(*fn)(void *), void *arg, const char *name)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int err;

	if ((err = pthread_attr_init(&attr)))
		return -err;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/*
	 * Not the creating thread's policy and CPUs (it may be a SCHED_FIFO
	 * thread pinned to one CPU): ordinary scheduling, the process's CPUs.
	 * The default stack: static TLS comes out of it (a 64 KiB one
	 * overflowed with 58 KB of TLS).
	 */
	struct sched_param sp = { .sched_priority = 0 };
	cpu_set_t cpus;
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &sp);
	if (!sched_getaffinity(getpid(), sizeof(cpus), &cpus))
		pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	/* The new thread inherits the mask: block everything around the create. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err)
		return -err;
	pthread_setname_np(t, name);
	return 0;
}

int os_nr_threads(void)
{
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* Fields 3 (state) and 20, counted after the command name's ')' (field 2). */
	char *p = strrchr(buf, ')');
	bool leader_gone = p && p[1] == ' ' && p[2] == 'Z';
	for (int field = 2; p && field < 20; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -1;
	/* A main thread that called pthread_exit() is a zombie, counted until the last goes. */
	return atoi(p + 1) - leader_gone;
}

int os_thread_exit_key_create(pthread_key_t *key, os_thread_exit_fn fn)
{
	return -pthread_key_create(key, fn);
}
