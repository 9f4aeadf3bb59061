/* SPDX-License-Identifier: MIT */
/* /sys/kernel/slab: its names (slab_unique_id()) are the core's, for the tests too. */
#ifndef KMEM_SLUB_SYSFS_H
#define KMEM_SLUB_SYSFS_H

#include "slab/slab_common.h"

#endif /* KMEM_SLUB_SYSFS_H */
