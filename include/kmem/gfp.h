/* SPDX-License-Identifier: MIT */
/*
 * GFP ("get free pages") flags: how an allocation may behave.  Values and
 * composition follow include/linux/gfp_types.h so kernel code reads the same.
 */
#ifndef KMEM_GFP_H
#define KMEM_GFP_H

typedef unsigned int gfp_t;

#define ___GFP_DMA		0x01u
#define ___GFP_HIGHMEM		0x02u
#define ___GFP_DMA32		0x04u
#define ___GFP_MOVABLE		0x08u
#define ___GFP_RECLAIMABLE	0x10u
#define ___GFP_HIGH		0x20u
#define ___GFP_IO		0x40u
#define ___GFP_FS		0x80u
#define ___GFP_ZERO		0x100u
#define ___GFP_DIRECT_RECLAIM	0x400u
#define ___GFP_KSWAPD_RECLAIM	0x800u
#define ___GFP_WRITE		0x1000u
#define ___GFP_NOWARN		0x2000u
#define ___GFP_RETRY_MAYFAIL	0x4000u
#define ___GFP_NOFAIL		0x8000u
#define ___GFP_NORETRY		0x10000u
#define ___GFP_MEMALLOC		0x20000u
#define ___GFP_COMP		0x40000u
#define ___GFP_NOMEMALLOC	0x80000u
#define ___GFP_HARDWALL		0x100000u
#define ___GFP_THISNODE		0x200000u
#define ___GFP_ACCOUNT		0x400000u

/* Mobility: picks the migratetype of the pageblocks the pages come from. */
#define __GFP_MOVABLE		((gfp_t)___GFP_MOVABLE)
#define __GFP_RECLAIMABLE	((gfp_t)___GFP_RECLAIMABLE)
#define GFP_MOVABLE_MASK	(__GFP_RECLAIMABLE | __GFP_MOVABLE)
#define GFP_MOVABLE_SHIFT	3

#define __GFP_HIGH		((gfp_t)___GFP_HIGH)	/* may dip below the min watermark */
#define __GFP_IO		((gfp_t)___GFP_IO)
#define __GFP_FS		((gfp_t)___GFP_FS)
#define __GFP_DIRECT_RECLAIM	((gfp_t)___GFP_DIRECT_RECLAIM)
#define __GFP_KSWAPD_RECLAIM	((gfp_t)___GFP_KSWAPD_RECLAIM)
#define __GFP_RECLAIM		(__GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM)
#define __GFP_ZERO		((gfp_t)___GFP_ZERO)
#define __GFP_NOWARN		((gfp_t)___GFP_NOWARN)	/* no failure report */
#define __GFP_RETRY_MAYFAIL	((gfp_t)___GFP_RETRY_MAYFAIL)
#define __GFP_NOFAIL		((gfp_t)___GFP_NOFAIL)
#define __GFP_NORETRY		((gfp_t)___GFP_NORETRY)
#define __GFP_COMP		((gfp_t)___GFP_COMP)	/* compound page: tails know their head */
#define __GFP_NOMEMALLOC	((gfp_t)___GFP_NOMEMALLOC)	/* never dip into the reserves */
#define __GFP_ACCOUNT		((gfp_t)___GFP_ACCOUNT)
#define __GFP_DMA		((gfp_t)___GFP_DMA)
#define __GFP_DMA32		((gfp_t)___GFP_DMA32)

/* Every bit above: alloc_pages() reports others (kernel __GFP_BITS_MASK). */
#define __GFP_BITS_MASK	((gfp_t)(___GFP_DMA | ___GFP_HIGHMEM | ___GFP_DMA32 | ___GFP_MOVABLE | \
				 ___GFP_RECLAIMABLE | ___GFP_HIGH | ___GFP_IO | ___GFP_FS | \
				 ___GFP_ZERO | ___GFP_DIRECT_RECLAIM | ___GFP_KSWAPD_RECLAIM | \
				 ___GFP_WRITE | ___GFP_NOWARN | ___GFP_RETRY_MAYFAIL | ___GFP_NOFAIL | \
				 ___GFP_NORETRY | ___GFP_MEMALLOC | ___GFP_COMP | ___GFP_NOMEMALLOC | \
				 ___GFP_HARDWALL | ___GFP_THISNODE | ___GFP_ACCOUNT))

#define GFP_ATOMIC	(__GFP_HIGH | __GFP_KSWAPD_RECLAIM)
#define GFP_KERNEL	(__GFP_RECLAIM | __GFP_IO | __GFP_FS)
#define GFP_KERNEL_ACCOUNT (GFP_KERNEL | __GFP_ACCOUNT)
#define GFP_NOWAIT	(__GFP_KSWAPD_RECLAIM)
#define GFP_NOIO	(__GFP_RECLAIM)
#define GFP_NOFS	(__GFP_RECLAIM | __GFP_IO)
#define GFP_USER	(__GFP_RECLAIM | __GFP_IO | __GFP_FS | ___GFP_HARDWALL)
#define GFP_HIGHUSER_MOVABLE	(GFP_USER | ___GFP_HIGHMEM | __GFP_MOVABLE)

#endif /* KMEM_GFP_H */
