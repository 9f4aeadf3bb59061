/* SPDX-License-Identifier: MIT */
/*
 * Bring-up: kmem boots on first use (reading KMEM_CMDLINE) or from
 * kmem_init().  kmem_boot() is the check every slow path makes.
 */
#ifndef KMEM_BOOT_H
#define KMEM_BOOT_H

#include <stdatomic.h>
#include <stdbool.h>

#include "core/printk.h"

/* FAILED: a boot was tried and failed; allocations fail until kmem_init() succeeds. */
enum kmem_state { KMEM_DOWN, KMEM_BOOTING, KMEM_UP, KMEM_FAILED };
extern atomic_int kmem_system_state;

int __kmem_boot(void);

/* 0 once kmem is up (booting it if needed); negative errno if it cannot boot. */
static inline int kmem_boot(void)
{
	if (likely(atomic_load_explicit(&kmem_system_state, memory_order_acquire) == KMEM_UP))
		return 0;
	return __kmem_boot();
}

/* CPUs kmem sizes itself for: nr_cpus= or the CPUs this process may run on. */
unsigned int kmem_nr_cpus(void);

#endif /* KMEM_BOOT_H */
