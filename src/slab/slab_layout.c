// SPDX-License-Identifier: MIT
/*
 * Object alignment and the kmalloc size classes (mm/slab_common.c), for
 * every back-end; see slab_layout.h.
 */
#include <errno.h>

#include <kmem/slab.h>

#include "slab/slab_layout.h"
#include "slab/backend.h"

#define SL_WORD		((unsigned int)sizeof(void *))
#define SL_ALIGN(x, a)	(((x) + (a) - 1) & ~((a) - 1))	/* a: power of two */

static inline unsigned int sl_max(unsigned int a, unsigned int b)
{
	return a > b ? a : b;
}

static inline unsigned int sl_min(unsigned int a, unsigned int b)
{
	return a < b ? a : b;
}

/*
 * SLAB_HWCACHE_ALIGN asks for cache-line alignment, but padding a 24-byte
 * object to 64 bytes would waste most of the line; instead the alignment is
 * halved while the object still fits in half of it, so small objects at least
 * never straddle a line.  The result is then raised to the requested and the
 * minimum alignment.
 *
 * The function is idempotent on its own output for the same flags and size
 * (the result is >= the hwcache value already), so the final sysfs "align"
 * can be fed back in.
 */
unsigned int calculate_alignment(slab_flags_t flags, unsigned int align,
				 unsigned int size)
{
	if (flags & SLAB_HWCACHE_ALIGN) {
		unsigned int ralign = SLAB_CACHE_LINE_SIZE;

		/* Stopping at the minimum cannot change the result below. */
		while (ralign > ARCH_SLAB_MINALIGN && size <= ralign / 2)
			ralign /= 2;
		align = sl_max(align, ralign);
	}
	align = sl_max(align, ARCH_SLAB_MINALIGN);
	return SL_ALIGN(align, SL_WORD);
}

/* ------------------------------------------------------------------------ */

/*
 * Bucket index by (size - 1) / 8 for sizes up to 192.  Without it, 65..96
 * and 129..192 would need compares on the fast path; index 1 is the
 * 96-byte and index 2 the 192-byte bucket, n >= 3 is the 2^n bucket.
 */
const unsigned char kmalloc_size_index[24] = {
	3,			/* 8 */
	4,			/* 16 */
	5, 5,			/* 24, 32 */
	6, 6, 6, 6,		/* 40 .. 64 */
	1, 1, 1, 1,		/* 72 .. 96 */
	7, 7, 7, 7,		/* 104 .. 128 */
	2, 2, 2, 2, 2, 2, 2, 2,	/* 136 .. 192 */
};

/*
 * Reference (non fast path) form: 0 for 0, else the smallest bucket that
 * holds @size.  Above KMALLOC_MAX_CACHE_SIZE there is no cache; the result is
 * still ceil(log2(size)) so callers can compare it with KMALLOC_SHIFT_HIGH.
 */
unsigned int kmalloc_index(size_t size)
{
	if (!size)
		return 0;
	if (size <= KMALLOC_MIN_SIZE)
		return KMALLOC_SHIFT_LOW;
	if (size > 64 && size <= 96)
		return 1;
	if (size > 128 && size <= 192)
		return 2;
	return sl_fls((unsigned long)size - 1);
}

/* Object size of bucket @index; 0 if there is no such kmalloc cache. */
unsigned int kmalloc_index_size(unsigned int index)
{
	if (index == 1)
		return 96;
	if (index == 2)
		return 192;
	if (index < KMALLOC_SHIFT_LOW || index > KMALLOC_SHIFT_HIGH)
		return 0;
	return 1U << index;
}

/* Kernel cache names ("kmalloc-96", "kmalloc-1k"); NULL if no such bucket. */
const char *kmalloc_index_name(unsigned int index)
{
	static const char *const names[] = {
		NULL, "kmalloc-96", "kmalloc-192", "kmalloc-8", "kmalloc-16",
		"kmalloc-32", "kmalloc-64", "kmalloc-128", "kmalloc-256",
		"kmalloc-512", "kmalloc-1k", "kmalloc-2k", "kmalloc-4k",
		"kmalloc-8k", "kmalloc-16k", "kmalloc-32k", "kmalloc-64k",
		"kmalloc-128k", "kmalloc-256k", "kmalloc-512k", "kmalloc-1M",
		"kmalloc-2M", "kmalloc-4M", "kmalloc-8M", "kmalloc-16M",
		"kmalloc-32M",
	};
	_Static_assert(KMALLOC_SHIFT_HIGH < sizeof(names) / sizeof(names[0]),
		       "kmalloc name table too short for KMALLOC_SHIFT_HIGH");

	if (!kmalloc_index_size(index))
		return NULL;
	return names[index];
}

/*
 * What kmalloc(size) really provides, so callers can use it all up front
 * (kernel 6.x semantics): 0 stays 0 (kmalloc(0) gives ZERO_SIZE_PTR), bucket
 * size up to KMALLOC_MAX_CACHE_SIZE, whole page-allocator blocks up to
 * KMALLOC_MAX_SIZE, and @size itself beyond that, where kmalloc will fail.
 */
size_t kmalloc_size_roundup(size_t size)
{
	if (size && size <= KMALLOC_MAX_CACHE_SIZE) {
		/* A back-end's own kmalloc (SLOB) has sizes of its own. */
		if (slab_ops.kmalloc_size_roundup)
			return slab_ops.kmalloc_size_roundup(size);
		return kmalloc_index_size(kmalloc_slab_index(size));
	}
	if (size && size <= KMALLOC_MAX_SIZE)
		return PAGE_SIZE << sl_get_order(size);
	return size;
}
