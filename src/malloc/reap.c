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
 * The reaper is a thread that wakes every malloc.reap_ms.  When the page
 * allocator has seen no allocation and no free for a whole period after
 * some activity, the program is idle: it trims once, as malloc_trim() does
 * (the caches' barns and empty slabs go back, then every free 2 MiB block
 * and the huge mappings kept for reuse).  Then it waits for activity
 * again.  It starts at the first thread exit, not before: a program that
 * never had a second thread gets no thread of ours (unshare(CLONE_NEWUSER)
 * and the like need a single-threaded process).  A fork's child starts its
 * own at its first thread exit.
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

/* The process whose reaper runs (a fork's child has none): 0 if none. */
static atomic_int reaper_pid;

/* Page allocations and frees so far: the program's activity, as the reaper sees it. */
static unsigned long page_activity(void)
{
	unsigned long ev[NR_VM_EVENT_ITEMS];

	all_vm_events(ev);
	return ev[PGALLOC_NORMAL] + ev[PGFREE];
}

static void *reaper(void *arg)
{
	unsigned long last = page_activity();
	bool idle = true;	/* trimmed, or nothing happened yet */

	(void)arg;
	for (;;) {
		unsigned long ms = __atomic_load_n(&malloc_reap_ms, __ATOMIC_RELAXED);

		os_sleep_us((unsigned int)((ms < REAP_MS_MAX ? ms : REAP_MS_MAX) * 1000));
		huge_expire();
		unsigned long now = page_activity();
		if (now != last) {
			last = now;
			idle = false;
			continue;
		}
		if (!idle) {
			malloc_trim_all();
			last = page_activity();	/* the trim's own frees are not activity */
			idle = true;
		}
	}
	return NULL;
}

void malloc_reap_thread_exited(void)
{
	if (!__atomic_load_n(&malloc_reap_ms, __ATOMIC_RELAXED) ||
	    atomic_load(&kmem_system_state) != KMEM_UP)
		return;
	int pid = os_getpid(), old = atomic_load(&reaper_pid);
	if (old == pid || !atomic_compare_exchange_strong(&reaper_pid, &old, pid))
		return;
	/* No thread left to spare (a thread limit): the next exit tries again. */
	if (os_thread_start(reaper, NULL, "kmem-reaper"))
		atomic_store(&reaper_pid, 0);
}
