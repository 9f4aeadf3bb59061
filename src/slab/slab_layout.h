/* SPDX-License-Identifier: MIT */
/*
 * What every slab back-end computes the same way (mm/slab_common.c): object
 * alignment and the kmalloc size classes.  Pure functions of their
 * arguments: no allocation, no mutable state.  Each back-end's own layout
 * and order rules are in its folder (SLUB: slab/slub/slub_layout.h).
 */
#ifndef KMEM_SLAB_LAYOUT_H
#define KMEM_SLAB_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <kmem/slab_flags.h>

/*
 * Take PAGE_SIZE & co. from the page allocator's header when it exists, so the
 * definitions below are only fallbacks and can never clash with it, whatever
 * order a user includes the two headers in.
 */
#if defined(__has_include)
#if __has_include(<kmem/page.h>)
#include <kmem/page.h>
#endif
#endif

#ifndef PAGE_SHIFT
#define PAGE_SHIFT		12
#endif
#ifndef PAGE_SIZE
#define PAGE_SIZE		(1UL << PAGE_SHIFT)
#endif
#ifndef MAX_PAGE_ORDER
#define MAX_PAGE_ORDER		10
#endif
#ifndef PAGE_ALLOC_COSTLY_ORDER
#define PAGE_ALLOC_COSTLY_ORDER	3
#endif

/* cache_line_size() of the machines we model (x86-64, arm64). */
#define SLAB_CACHE_LINE_SIZE	64U
/* arch_slab_minalign(): every object is at least word aligned. */
#define ARCH_SLAB_MINALIGN	((unsigned int)sizeof(void *))

/* Local bit helpers (sl_ prefix: page.h and friends own the plain names). */
static inline unsigned int sl_fls(unsigned long x)	/* 1-based, 0 for 0 */
{
	return x ? (unsigned int)(8 * sizeof(long)) - (unsigned int)__builtin_clzl(x) : 0;
}

static inline unsigned int sl_ilog2(unsigned long x)	/* x must be > 0 */
{
	return sl_fls(x) - 1;
}

static inline unsigned int sl_get_order(unsigned long size)
{
	return size <= PAGE_SIZE ? 0 : sl_fls((size - 1) >> PAGE_SHIFT);
}

/*
 * The alignment of a cache's objects (kernel calculate_alignment()): the
 * requested one, raised for SLAB_HWCACHE_ALIGN and to the minimum.
 */
unsigned int calculate_alignment(slab_flags_t flags, unsigned int align,
				 unsigned int size);

/* ------------------------------------------------------------------------ */
/* kmalloc size classes */

#ifndef KMALLOC_SHIFT_LOW
#define KMALLOC_SHIFT_LOW	3
#endif
#ifndef KMALLOC_SHIFT_HIGH
#define KMALLOC_SHIFT_HIGH	(PAGE_SHIFT + 1)
#endif
#ifndef KMALLOC_MIN_SIZE
#define KMALLOC_MIN_SIZE	(1UL << KMALLOC_SHIFT_LOW)
#endif
#ifndef KMALLOC_MAX_CACHE_SIZE
#define KMALLOC_MAX_CACHE_SIZE	(1UL << KMALLOC_SHIFT_HIGH)
#endif
#ifndef KMALLOC_MAX_SIZE
#define KMALLOC_MAX_SIZE	(1UL << (MAX_PAGE_ORDER + PAGE_SHIFT))
#endif

/* Bucket index for sizes 1..192, indexed by (size - 1) / 8. */
extern const unsigned char kmalloc_size_index[24];

unsigned int kmalloc_index(size_t size);
unsigned int kmalloc_index_size(unsigned int index);
const char *kmalloc_index_name(unsigned int index);
size_t kmalloc_size_roundup(size_t size);

/*
 * kmalloc fast path: bucket index for 1 <= size <= KMALLOC_MAX_CACHE_SIZE
 * (callers handle 0 and large sizes first).  The two odd buckets 96 and 192
 * only exist below 256, so a 24-byte table covers them and everything above
 * is a plain power of two: one compare, no division, no loop.
 */
static inline unsigned int kmalloc_slab_index(size_t size)
{
	if (size <= 192)
		return kmalloc_size_index[(size - 1) >> 3];
	return (unsigned int)(8 * sizeof(long)) -
	       (unsigned int)__builtin_clzl((unsigned long)size - 1);
}

#endif /* KMEM_SLAB_LAYOUT_H */
