/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the slab benchmarks (bench_slab_bulk, bench_slab_vs_malloc,
 * bench_slab_prodcons), on top of bench.h: TSC ticks, CPU pinning, the
 * machine line, and the peer allocators (jemalloc, mimalloc, tcmalloc)
 * loaded at run time with dlopen(RTLD_NOW | RTLD_LOCAL): they are never
 * linked, never preloaded, so glibc's malloc stays the process's malloc and
 * each peer is reached only through the function pointers found with dlsym.
 */
#ifndef KMEM_SLAB_BENCH_H
#define KMEM_SLAB_BENCH_H

#include <dlfcn.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t sb_ticks(void)
{
	_mm_lfence();	/* no earlier work may drift past the timestamp */
	return __rdtsc();
}
#define SB_HAVE_TSC 1
#else
static inline uint64_t sb_ticks(void)
{
	return 0;
}
#define SB_HAVE_TSC 0
#endif

/*
 * CPU time of the calling thread (or the whole process), ns.  On a shared
 * machine the wall clock also counts the slices other processes take; CPU
 * time does not, so it is the figure the tables are judged on.
 */
static inline uint64_t sb_cpu_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Keep @p alive and opaque to the optimizer. */
#define sb_use(p) __asm__ volatile("" : : "r"(p) : "memory")

/* Pin the calling thread to the CPU it is running on; returns it, or -1. */
static inline int sb_pin_here(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -1 : cpu;
}

/* "Intel(R) Xeon(R) Processor, 2 CPUs" into @buf. */
static inline void sb_machine(char *buf, size_t size)
{
	char line[512], model[256] = "unknown CPU";
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			char *m = strchr(line, ':') + 1;
			while (*m == ' ' || *m == '\t')
				m++;
			m[strcspn(m, "\n")] = '\0';
			snprintf(model, sizeof(model), "%s", m);
			break;
		}
	}
	if (f)
		fclose(f);
	snprintf(buf, size, "%s, %ld CPUs online", model, sysconf(_SC_NPROCESSORS_ONLN));
}

/* The 1-minute load average: > 0.5 on an idle-looking run means someone else was busy. */
static inline double sb_loadavg(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

/* TSC ticks per ns, measured against CLOCK_MONOTONIC over ~20 ms. */
static inline double sb_tsc_ghz(void)
{
	if (!SB_HAVE_TSC)
		return 0;
	uint64_t c0 = sb_ticks(), t0 = bench_now_ns(), t1;
	do
		t1 = bench_now_ns();
	while (t1 - t0 < 20000000ull);
	return (double)(sb_ticks() - c0) / (double)(t1 - t0);
}

/* ---- peer allocators ----------------------------------------------- */

/*
 * Debian's jemalloc uses initial-exec TLS (2.6 KB), more than glibc keeps
 * spare for dlopen ("cannot allocate memory in static TLS block").  The
 * glibc tunable glibc.rtld.optional_static_tls raises that reserve, but is
 * read only at process start: call this first thing in main(); it re-executes
 * the program once with the tunable added to GLIBC_TUNABLES.
 */
static inline void sb_reexec_for_static_tls(char **argv)
{
	static const char tun[] = "glibc.rtld.optional_static_tls=65536";
	const char *old = getenv("GLIBC_TUNABLES");
	char buf[4096];

	if (getenv("KMEM_BENCH_REEXEC") || (old && strstr(old, "glibc.rtld.optional_static_tls")))
		return;
	if (old && *old)
		snprintf(buf, sizeof(buf), "%s:%s", old, tun);
	else
		snprintf(buf, sizeof(buf), "%s", tun);
	setenv("GLIBC_TUNABLES", buf, 1);
	setenv("KMEM_BENCH_REEXEC", "1", 1);
	fflush(NULL);
	execv("/proc/self/exe", argv);
	/* Not fatal: jemalloc will just show n/a. */
}

enum { PEER_JEMALLOC, PEER_MIMALLOC, PEER_TCMALLOC, NR_PEERS };

struct sb_peer {
	const char *name;
	const char *lib;		/* Debian's soname */
	const char *pkg;		/* Debian package */
	const char *malloc_sym, *free_sym;
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *handle;
	char path[256];			/* where it was found */
};

static struct sb_peer sb_peers[NR_PEERS] __attribute__((unused)) = {
	[PEER_JEMALLOC] = { "jemalloc", "libjemalloc.so.2", "libjemalloc2", "malloc", "free" },
	[PEER_MIMALLOC] = { "mimalloc", "libmimalloc.so.2", "libmimalloc2.0", "mi_malloc", "mi_free" },
	[PEER_TCMALLOC] = { "tcmalloc", "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4",
			    "tc_malloc", "tc_free" },
};

/*
 * dlopen(RTLD_NOW | RTLD_LOCAL) the peer and dlsym its malloc and free
 * through the handle (for jemalloc, whose Debian build exports plain
 * malloc/free, the handle's own definitions, not glibc's).  Tries the
 * multiarch directories first, then the loader's search path.  false (and
 * the peer stays "n/a") if it is not installed.
 */
static inline bool sb_peer_load(struct sb_peer *p)
{
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu/", "/usr/lib/aarch64-linux-gnu/", "/lib/x86_64-linux-gnu/",
		"/usr/lib64/", "/usr/lib/", "",
	};

	if (p->handle)
		return true;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p->path, sizeof(p->path), "%s%s", dirs[i], p->lib);
		if (dirs[i][0] && access(p->path, R_OK))
			continue;
		p->handle = dlopen(p->path, RTLD_NOW | RTLD_LOCAL);
		if (p->handle)
			break;
	}
	if (!p->handle)
		return false;
	*(void **)&p->malloc = dlsym(p->handle, p->malloc_sym);
	*(void **)&p->free = dlsym(p->handle, p->free_sym);
	Dl_info info;
	/* Make sure the symbols are the peer's own, not glibc's found through it. */
	if (!p->malloc || !p->free || !dladdr(*(void **)&p->malloc, &info) || !info.dli_fname ||
	    !strstr(info.dli_fname, p->lib)) {
		dlclose(p->handle);
		p->handle = NULL;
		return false;
	}
	return true;
}

#endif /* KMEM_SLAB_BENCH_H */
