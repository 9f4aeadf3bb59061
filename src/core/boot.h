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

/*
 * fork(): every allocator lock is taken before the fork, in the one order
 * the code nests them, and released (parent) or re-initialised (child)
 * after it, so the child can allocate even if other threads were inside
 * the allocator.  Each layer provides its part.
 */
void mm_fork_prepare(void);
void mm_fork_parent(void);
void mm_fork_child(void);
void slab_fork_prepare(void);
void slab_fork_parent(void);
void slab_fork_child(void);
void vmstat_fork_prepare(void);
void vmstat_fork_parent(void);
void vmstat_fork_child(void);
/* Extra hooks for a layer above the library (the malloc front-end). */
extern void (*kmem_fork_hook_prepare)(void);
extern void (*kmem_fork_hook_parent)(void);
extern void (*kmem_fork_hook_child)(void);
/*
 * pthread_atfork() kmem's handlers, once; before the program's own ones if
 * it can.  @before_main: called from a constructor (the malloc front-end),
 * so no handler registered earlier runs after kmem's prepare.
 */
int kmem_register_fork_handlers(bool before_main);

/* CPUs kmem sizes itself for: nr_cpus= or the CPUs this process may run on. */
unsigned int kmem_nr_cpus(void);

#endif /* KMEM_BOOT_H */
