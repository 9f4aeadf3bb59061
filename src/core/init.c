// SPDX-License-Identifier: MIT
/*
 * kmem's start_kernel(): parse the command line, then bring the layers up
 * bottom to top.  Nothing here allocates with malloc.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <kmem/kmemfs.h>

#include "core/boot.h"
#include "core/cmdline.h"
#include "introspect/live.h"
#include "page_alloc/mm.h"
#include "page_alloc/pcp.h"
#include "platform/os.h"
#include "slab/slab.h"

atomic_int kmem_system_state;

static kmem_lock_t boot_lock = KMEM_LOCK_INIT;
static __thread bool booting_thread;

static bool stats_at_exit;
kmem_param("kmem.stats_at_exit", stats_at_exit, bool,
	   "print /proc/slabinfo and /proc/meminfo to stderr when the program exits");

static unsigned int nr_cpus_param;
kmem_param("nr_cpus", nr_cpus_param, uint,
	   "number of CPUs to size per-CPU structures for (default: CPUs we may run on)");

unsigned int kmem_nr_cpus(void)
{
	static unsigned int cached;
	unsigned int n = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (!n) {
		n = nr_cpus_param ? nr_cpus_param : os_nr_cpus();
		__atomic_store_n(&cached, n, __ATOMIC_RELAXED);
	}
	return n;
}

void (*kmem_fork_hook_prepare)(void);
void (*kmem_fork_hook_parent)(void);
void (*kmem_fork_hook_child)(void);

/* Whether the fork in progress found kmem up (its layers' locks exist then). */
static bool fork_found_kmem_up;
/* Whether it took kmem's locks at all (see kmem_fork_prepare()). */
static bool fork_locked;
/* kmem's prepare handler runs after every other one (registered before main()). */
static bool fork_prepare_runs_last;

/*
 * A process with one thread forks with nobody inside kmem but the forking
 * thread, which is not (a fork from a signal handler that interrupted kmem
 * is broken either way): its locks are all free and its lists whole, so
 * the handlers do nothing.  Taking and re-initialising some hundred locks
 * (two a cache) wrote to every page that holds one, in the parent and in
 * the child, after the fork had made them copy-on-write: about 20 page
 * copies per fork of a shell.
 *
 * Only when no prepare handler runs after kmem's: one could start a thread
 * that is inside kmem when the fork happens (reproduced: a
 * handler the program registered before kmem_init() did, and the child
 * deadlocked).  Prepare handlers run newest first, so that holds for the
 * malloc front-end, which registers from its constructor, not for a
 * program that boots libkmem from main().
 */
static void kmem_fork_prepare(void)
{
	fork_locked = !fork_prepare_runs_last || !os_single_threaded();
	if (!fork_locked)
		return;
	if (kmem_fork_hook_prepare)
		kmem_fork_hook_prepare();
	kmem_lock(&boot_lock);
	/* Under boot_lock no boot is under way: the state cannot change. */
	fork_found_kmem_up = atomic_load_explicit(&kmem_system_state, memory_order_acquire) == KMEM_UP;
	if (!fork_found_kmem_up)
		return;
	slab_fork_prepare();
	mm_fork_prepare();
	vmstat_fork_prepare();
}

static void kmem_fork_parent(void)
{
	if (!fork_locked)
		return;
	if (fork_found_kmem_up) {
		vmstat_fork_parent();
		mm_fork_parent();
		slab_fork_parent();
	}
	kmem_unlock(&boot_lock);
	if (kmem_fork_hook_parent)
		kmem_fork_hook_parent();
}

static void kmem_fork_child(void)
{
	/* Descriptors of ours the child must not keep: live.c's socket, the stderr copy. */
	kmem_live_fork_child();
	os_forget_stderr();
	if (!fork_locked)
		return;
	if (fork_found_kmem_up) {
		vmstat_fork_child();
		mm_fork_child();
		slab_fork_child();
	}
	kmem_lock_init(&boot_lock);
	if (kmem_fork_hook_child)
		kmem_fork_hook_child();
}

/*
 * Register the fork handlers once, as early as possible: pthread_atfork()
 * runs prepare handlers in the reverse order of registration and the
 * others in order, so a program's handlers registered after kmem's may
 * allocate (before kmem takes its locks, after it re-initialises them).
 * malloc mode registers from its constructor, before main() and before any
 * handler the program registers there; libkmem registers at boot.
 */
int kmem_register_fork_handlers(bool before_main)
{
	static atomic_bool registered;

	if (atomic_exchange(&registered, true))
		return 0;
	int rc = pthread_atfork(kmem_fork_prepare, kmem_fork_parent, kmem_fork_child);
	if (rc)
		atomic_store(&registered, false);	/* the next caller tries again */
	else
		fork_prepare_runs_last = before_main;
	return -rc;
}

static int start_kmem(void)
{
	int rc = mm_core_init();
	if (rc)
		return rc;
	rc = pcp_init();
	if (rc)
		return rc;
	rc = kmem_cache_init();
	if (rc)
		return rc;
	return kmem_register_fork_handlers(false);
}

static int boot_locked(const char *cmdline, bool from_env)
{
	int rc = parse_cmdline(cmdline, true);

	if (!rc) {
		/* From the defaults: not what a refused boot's line left behind. */
		kparam_reset_defaults();
		rc = parse_cmdline(cmdline, false);
	}

	if (rc) {
		if (from_env)
			pr_err("cannot boot: fix KMEM_CMDLINE=\"%s\"\n", cmdline);
		return rc;
	}
	/* Its report comes after the program's own exit handlers, which may close stderr. */
	if (stats_at_exit)
		os_keep_stderr();
	atomic_store_explicit(&kmem_system_state, KMEM_BOOTING, memory_order_relaxed);
	booting_thread = true;
	rc = start_kmem();
	booting_thread = false;
	atomic_store_explicit(&kmem_system_state, rc ? KMEM_FAILED : KMEM_UP,
			      memory_order_release);
	return rc;
}

int __kmem_boot(void)
{
	/* The booting thread allocates its own metadata while booting. */
	if (booting_thread)
		return 0;

	kmem_lock(&boot_lock);
	int rc = 0;
	int state = atomic_load_explicit(&kmem_system_state, memory_order_acquire);
	if (state == KMEM_FAILED) {
		rc = -ENOMEM;
	} else if (state != KMEM_UP) {
		const char *cmdline = getenv("KMEM_CMDLINE");
		if (parse_cmdline(cmdline, true)) {
			/* A bad command line is the user's to fix; running on with
			 * other settings than asked for would hide it. */
			pr_err("cannot boot: fix KMEM_CMDLINE=\"%s\"\n", cmdline);
			kmem_unlock(&boot_lock);
			os_abort();
		}
		rc = boot_locked(cmdline, true);
		if (rc == -EINVAL) {
			/* A well-formed line the boot refuses (mem= below one
			 * section, ...) is just as much the user's to fix; the
			 * failing check has said why (docs/parameters.md). */
			pr_err("cannot boot: fix KMEM_CMDLINE=\"%s\"\n", cmdline ? cmdline : "");
			kmem_unlock(&boot_lock);
			os_abort();
		}
		if (rc) {
			/*
			 * No memory or address space for kmem itself: a program
			 * run on with every allocation failing retries, spins
			 * or grows elsewhere (python3 grew past 7.8 GB) instead
			 * of saying why.  Stop it now, with the reason.
			 */
			pr_err("cannot boot: no memory or address space for kmem (error %d); stopping\n", rc);
			kmem_unlock(&boot_lock);
			os_abort();
		}
	}
	kmem_unlock(&boot_lock);
	return rc;
}

KMEM_API int kmem_init(const char *cmdline)
{
	kmem_lock(&boot_lock);
	int rc = -EBUSY;
	int state = atomic_load_explicit(&kmem_system_state, memory_order_acquire);
	if (state == KMEM_DOWN || state == KMEM_FAILED)
		rc = boot_locked(cmdline, false);
	kmem_unlock(&boot_lock);
	if (!rc)
		kmem_live_start();
	return rc;
}

/* kmem.stats_at_exit=1: the allocator's view of the program, as it ends. */
__attribute__((destructor)) static void kmem_print_stats_at_exit(void)
{
	static char buf[1 << 16];
	/* SLOB's heap statistics where slab=slob (elsewhere the file is not there). */
	static const char *const files[] = { "/proc/slabinfo", "/proc/meminfo", "/sys/kernel/debug/slob/stats" };

	if (!stats_at_exit || atomic_load(&kmem_system_state) != KMEM_UP)
		return;
	for (unsigned int i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		ssize_t n = kmem_read(files[i], buf, sizeof(buf));
		if (n < 0)
			continue;
		printk("==> %s <==\n", files[i]);
		os_write_stderr(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	}
	/*
	 * With slab_debug=U, where the objects still allocated came from: a
	 * leak report (caches whose alloc_traces has data only).
	 */
	static char names[1 << 14];
	ssize_t len = kmem_read("/sys/kernel/debug/slab", names, sizeof(names));
	for (char *name = names, *end; len > 0 && name < names + len && (end = strchr(name, '\n'));
	     name = end + 1) {
		char path[128];
		*end = '\0';
		if ((size_t)snprintf(path, sizeof(path), "/sys/kernel/debug/slab/%.64s/alloc_traces", name) >=
		    sizeof(path))
			continue;
		ssize_t n = kmem_read(path, buf, sizeof(buf));
		if (n <= 0 || !strcmp(buf, "No data\n"))
			continue;
		printk("==> %s <==\n", path);
		os_write_stderr(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	}
}
