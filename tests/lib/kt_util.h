/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the page allocator tests: capturing stderr, reading
 * kmem's virtual files and picking values out of them, running a case in a
 * forked child (kmem_init() works once per process), reading RSS.
 */
#ifndef KMEM_TEST_KT_UTIL_H
#define KMEM_TEST_KT_UTIL_H

#include <signal.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/printk.h"
#include "ktest.h"

/* ---- stderr capture ------------------------------------------------- */

struct kt_capture {
	int saved_fd;	/* the real stderr */
	int file_fd;	/* an unlinked temporary file */
};

/* From now on fd 2 writes into a temporary file. */
void kt_capture_begin(struct kt_capture *c);
/* Restore fd 2; return what was written meanwhile (malloc'd, NUL-terminated). */
char *kt_capture_end(struct kt_capture *c);
/* kmem_init(@cmdline) with stderr captured: its result goes to *@rc, what it
 * printed is returned (malloc'd). */
char *kt_init_captured(const char *cmdline, int *rc);

/*
 * Run @stmt with stderr captured: it must issue exactly one kmem report
 * (kmem_report_count() + 1) whose text contains @needle, or the case
 * fails and returns.
 */
#define KT_ASSERT_ONE_REPORT(stmt, needle) do {					\
	unsigned long __r0 = kmem_report_count();				\
	struct kt_capture __cap;						\
	kt_capture_begin(&__cap);						\
	stmt;									\
	char *__out = kt_capture_end(&__cap);					\
	unsigned long __n = kmem_report_count() - __r0;				\
	if (__n != 1 || !strstr(__out, needle)) {				\
		KT_FAIL("%s: %lu report(s), expected 1 containing \"%s\"; stderr:\n%s", \
			#stmt, __n, needle, __out);				\
		free(__out);							\
		return;								\
	}									\
	free(__out);								\
} while (0)

/* ---- virtual files -------------------------------------------------- */

/* The whole of @path (malloc'd, NUL-terminated), or NULL (errno-style code in *err). */
char *kt_read(const char *path, long *err);
/*
 * /sys/kernel/slab/<cache>/<attr>, read into one of four rotating static
 * buffers (so a few can be compared at once), or "ERR<errno>".
 */
const char *kt_slab_attr(const char *cache, const char *attr);
/* A "<key>: <n> kB" line of /proc/self/status (key "VmSize", "VmLck"...), in kB; 0 if none. */
long kt_proc_status_kb(const char *key);
/* kt_read() that says on stderr why it failed ("kmem_read(<path>) = <err>"). */
char *kt_read_checked(const char *path);
/* Value of "<name> <value>" in /proc/vmstat; -1 if absent. */
long kt_vmstat(const char *name);
/*
 * Value of the zoneinfo field @key ("min", "managed", "high:", "batch:",
 * "nr_free_pages", ...): the number after the first line whose first word
 * is @key ("pages free" for the "  pages free" line); -1 if absent.
 */
long kt_zoneinfo(const char *key);
/* Number of lines of @text equal to @line (without its '\n'). */
int kt_count_lines(const char *text, const char *line);
/* Line @n (0-based) of @text into @buf, without '\n'; 0 or -1 if no such line. */
int kt_line(const char *text, int n, char *buf, size_t size);

/* ---- process ------------------------------------------------------- */

/* Resident set size in bytes (from /proc/self/statm). */
unsigned long kt_rss_bytes(void);
/*
 * The built libkmem-malloc.so ($KMEM_BINARY_DIR/lib, or the source tree's
 * build/), for a test that runs itself again under LD_PRELOAD; NULL, with
 * the "skipped: ..." line printed (exit 77), in a sanitizer build (the
 * sanitizer's runtime must come first) or when it is not built.
 */
const char *kt_malloc_so(void);
/*
 * Run this binary again (/proc/self/exe) with the argument @mode, with
 * KMEM_CMDLINE=@cmdline if not NULL, in the environment as it is (so
 * under the LD_PRELOAD just set); its exit status, 1 if it died of a
 * signal (said on stderr, with a "0 passed, 1 failed" line).
 */
int kt_run_self(const char *argv0, const char *mode, const char *cmdline);

/*
 * Run @fn(@arg) in a forked child: the child starts with a fresh (unbooted)
 * kmem if the parent never booted it, so @fn can call kmem_init().  The
 * child exits 0 if @fn recorded no failure.  Returns the wait status.
 * Core dumps are disabled in the child (expected aborts).
 */
static inline int kt_fork(void (*fn)(void *arg), void *arg)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };
		setrlimit(RLIMIT_CORE, &no_core);
		ktest_failed_now = 0;
		fn(arg);
		fflush(stdout);
		fflush(stderr);
		_exit(ktest_failed_now ? 1 : 0);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0)
		;
	return status;
}

/* kt_fork(@fn, @arg) with stderr captured (the child's and the parent's): the
 * wait status goes to *@status, what was printed is returned (malloc'd). */
char *kt_fork_captured(void (*fn)(void *arg), void *arg, int *status);

/* The child ran to its end with no failure. */
#define KT_CHILD_OK(status) (WIFEXITED(status) && WEXITSTATUS(status) == 0)
/* The child died of SIGABRT. */
#define KT_CHILD_ABORTED(status) (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT)

/* Fail the current case unless the forked child passed. */
#define KT_ASSERT_CHILD_OK(status) do {						\
	int __st = (status);							\
	if (!KT_CHILD_OK(__st)) {						\
		KT_FAIL("child failed: %s %d", WIFEXITED(__st) ? "exit status" : "signal", \
			WIFEXITED(__st) ? WEXITSTATUS(__st) : WTERMSIG(__st));	\
		return;								\
	}									\
} while (0)

#define KT_ASSERT_CONTAINS(text, needle) do {					\
	const char *__t = (text), *__n = (needle);				\
	if (!__t || !strstr(__t, __n)) {					\
		KT_FAIL("expected \"%s\" in:\n%s", __n, __t ? __t : "(null)");	\
		return;								\
	}									\
} while (0)

#endif /* KMEM_TEST_KT_UTIL_H */
