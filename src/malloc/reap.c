// SPDX-License-Identifier: MIT
/*
 * The reaper.  kmem gives memory back to the OS from its free paths: page
 * reporting once a free block has waited page_reporting.delay_ms, checked
 * on the next free.  A program that stops freeing keeps what is pending,
 * and what its exited threads left in the caches' barns and empty slabs
 * holds pages apart, so the free memory stays in fragments below the 2 MiB
 * that reporting gives back (256 threads that allocated and freed 2000
 * blocks each, then exited: 174-274 MB resident for good, against 13-15 MB
 * under glibc).  The kernel runs such work from timers: SLAB's cache_reap()
 * every 2 s, page reporting's delayed work.
 *
 * The reaper is a thread started at a thread's exit (not the main
 * thread's): a program that never had a second thread gets no thread of
 * ours.  It wakes every malloc.reap_ms; once the page allocator has seen
 * no allocation and no free for a whole period, the program is idle: it
 * trims once, as malloc_trim() does (the caches' barns and empty slabs go
 * back, then every free page and the freed huge blocks kept resident), and
 * exits.  So a program that has joined its threads is single-threaded
 * again a period or two later (unshare(CLONE_NEWUSER) needs that), holds
 * no thread slot of ours for long, and an idle program is not woken up
 * again.  The next thread exit starts it again; a fork's child starts its
 * own.  When it finds itself the last thread (the main thread called
 * pthread_exit()), it goes at once, so that the process ends.
 */
#include <stdatomic.h>

#include "core/boot.h"
#include "core/cmdline.h"
#include "core/vmstat.h"
#include "malloc/huge.h"
#include "malloc/reap.h"
#include "platform/os.h"

static unsigned long malloc_reap_ms = 2000;
kmem_param("malloc.reap_ms", malloc_reap_ms, ulong,
	   "period of the reaper thread that trims an idle program (0: no reaper)");

#define REAP_MS_MAX	(3600UL * 1000)
#define REAP_STEP_MS	100UL

/* The process whose reaper runs (a fork's child has none): 0 if none. */
static atomic_int reaper_pid;
/* Set in the reaper: its own exit, should its trim have given it kmem state, starts none. */
static __thread bool this_is_reaper __attribute__((tls_model("initial-exec")));

/* Page allocations and frees so far: the program's activity, as the reaper sees it. */
static unsigned long page_activity(void)
{
	unsigned long ev[NR_VM_EVENT_ITEMS];

	all_vm_events(ev);
	return ev[PGALLOC_NORMAL] + ev[PGFREE];
}

/*
 * Sleep one period, in steps: when every other thread has gone (a main
 * thread that called pthread_exit(), then its last worker exited), the
 * process must end now, not when we wake.  False if we are alone.
 */
static bool reaper_sleep(unsigned long ms)
{
	for (unsigned long slept = 0; slept < ms; slept += REAP_STEP_MS) {
		os_sleep_us(REAP_STEP_MS * 1000);
		if (os_nr_threads() == 1)
			return false;
	}
	return true;
}

static void *reaper(void *arg)
{
	unsigned long last = page_activity();

	(void)arg;
	this_is_reaper = true;
	for (;;) {
		unsigned long ms = __atomic_load_n(&malloc_reap_ms, __ATOMIC_RELAXED);

		if (!reaper_sleep(ms < REAP_MS_MAX ? ms : REAP_MS_MAX))
			break;
		huge_expire();
		unsigned long now = page_activity();
		if (now != last) {
			last = now;
			continue;
		}
		/* A whole period without the page allocator: idle.  Trim, and go. */
		malloc_trim_all();
		break;
	}
	atomic_store(&reaper_pid, 0);
	return NULL;
}

void malloc_reap_thread_exited(void)
{
	if (!__atomic_load_n(&malloc_reap_ms, __ATOMIC_RELAXED) || this_is_reaper ||
	    atomic_load(&kmem_system_state) != KMEM_UP)
		return;
	int pid = os_getpid(), old = atomic_load(&reaper_pid);
	/* Not from the main thread's exit (pthread_exit()): the others may be ending too. */
	if (old == pid || os_gettid() == pid || !atomic_compare_exchange_strong(&reaper_pid, &old, pid))
		return;
	/* No thread left to spare (a thread limit): the next exit tries again. */
	if (os_thread_start(reaper, NULL, "kmem-reaper"))
		atomic_store(&reaper_pid, 0);
}
