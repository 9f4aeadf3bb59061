// SPDX-License-Identifier: MIT
/*
 * kmem's start_kernel(): parse the command line, then bring the layers up
 * bottom to top.  Nothing here allocates with malloc.
 */
#include <errno.h>
#include <stdlib.h>

#include <kmem/kmemfs.h>

#include "core/boot.h"
#include "core/cmdline.h"
#include "page_alloc/mm.h"
#include "page_alloc/pcp.h"
#include "platform/os.h"
#include "slab/slab.h"

atomic_int kmem_system_state;

static kmem_lock_t boot_lock = KMEM_LOCK_INIT;
static __thread bool booting_thread;

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

static int start_kmem(void)
{
	int rc = mm_core_init();
	if (rc)
		return rc;
	rc = pcp_init();
	if (rc)
		return rc;
	return kmem_cache_init();
}

static int boot_locked(const char *cmdline, bool from_env)
{
	int rc = parse_cmdline(cmdline, true);

	if (!rc)
		rc = parse_cmdline(cmdline, false);

	if (rc) {
		if (from_env)
			pr_err("cannot boot: fix KMEM_CMDLINE=\"%s\"\n", cmdline);
		return rc;
	}
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
	return rc;
}
