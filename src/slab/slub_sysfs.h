/* SPDX-License-Identifier: MIT */
/* /sys/kernel/slab: naming helpers shared with the tests. */
#ifndef KMEM_SLUB_SYSFS_H
#define KMEM_SLUB_SYSFS_H

#include <stddef.h>
#include <kmem/slab_flags.h>

/* Longest unique id: ':' + "dDaFA" + '-' + 7+ digits + NUL. */
#define SLAB_UNIQUE_ID_MAX	24

/*
 * The sysfs directory name of a mergeable cache (kernel create_unique_id):
 * ':', the flag letters d (DMA), D (DMA32), a (reclaim account),
 * F (consistency checks), A (accounted), '-' if there were any, then the slot
 * size in 7 digits: ":0000192", ":a-0000104".  Returns the length.
 */
int slab_unique_id(char *buf, size_t size, slab_flags_t flags, unsigned int slot_size);

#endif /* KMEM_SLUB_SYSFS_H */
