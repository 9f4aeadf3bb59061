/* SPDX-License-Identifier: MIT */
/* kmem_cache_create() flags; values as in Linux (include/linux/slab.h, <= 6.8). */
#ifndef KMEM_SLAB_FLAGS_H
#define KMEM_SLAB_FLAGS_H

typedef unsigned int slab_flags_t;

#define SLAB_CONSISTENCY_CHECKS	((slab_flags_t)0x00000100U) /* debug: check on alloc/free */
#define SLAB_RED_ZONE		((slab_flags_t)0x00000400U) /* debug: red zones around objects */
#define SLAB_POISON		((slab_flags_t)0x00000800U) /* debug: poison free objects */
#define SLAB_KMALLOC		((slab_flags_t)0x00001000U) /* a kmalloc cache */
#define SLAB_HWCACHE_ALIGN	((slab_flags_t)0x00002000U) /* align objects on cache lines */
#define SLAB_CACHE_DMA		((slab_flags_t)0x00004000U)
#define SLAB_CACHE_DMA32	((slab_flags_t)0x00008000U)
#define SLAB_STORE_USER		((slab_flags_t)0x00010000U) /* debug: record last alloc/free */
#define SLAB_RECLAIM_ACCOUNT	((slab_flags_t)0x00020000U) /* counts as SReclaimable */
#define SLAB_PANIC		((slab_flags_t)0x00040000U) /* abort if create fails */
#define SLAB_TYPESAFE_BY_RCU	((slab_flags_t)0x00080000U) /* pages freed after a grace period */
#define SLAB_TRACE		((slab_flags_t)0x00200000U) /* debug: trace allocs and frees */
#define SLAB_NOLEAKTRACE	((slab_flags_t)0x00800000U)
#define SLAB_NO_MERGE		((slab_flags_t)0x01000000U) /* never alias with another cache */
#define SLAB_ACCOUNT		((slab_flags_t)0x04000000U)
#define SLAB_NO_USER_FLAGS	((slab_flags_t)0x10000000U) /* ignore slab_debug= for this cache */

#endif /* KMEM_SLAB_FLAGS_H */
