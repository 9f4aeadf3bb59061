/* SPDX-License-Identifier: MIT */
/* Cache list and aliases, for the slab core and its introspection. */
#ifndef KMEM_SLAB_COMMON_H
#define KMEM_SLAB_COMMON_H

#include "slab/slab.h"

/* A name merged into another cache (kernel: a sysfs symlink). */
struct slab_alias {
	char name[KMEM_CACHE_NAME_MAX];
	struct kmem_cache *cache;
	struct list_head list;
};

extern struct list_head slab_aliases;	/* under slab_mutex */

/* @flags with the slab_debug= options for the cache @name (kernel kmem_cache_flags()). */
slab_flags_t kmem_cache_flags(slab_flags_t flags, const char *name);

/* Longest unique id: ':' + "dDaFA" + '-' + 7+ digits + NUL. */
#define SLAB_UNIQUE_ID_MAX	24

/*
 * The name a mergeable cache goes by in /sys/kernel/slab (kernel
 * create_unique_id): ':', the flag letters d (DMA), D (DMA32), a (reclaim
 * account), F (consistency checks), A (accounted), '-' if there were any,
 * then the object size in 7 digits: ":0000192", ":a-0000104".  The core
 * keeps these names unique among caches and aliases whatever the back-end.
 * Returns the length.
 */
int slab_unique_id(char *buf, size_t size, slab_flags_t flags, unsigned int slot_size);

/* Caches that can never be merged keep their own name in sysfs. */
bool slab_unmergeable(const struct kmem_cache *s);

#endif /* KMEM_SLAB_COMMON_H */
