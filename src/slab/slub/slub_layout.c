// SPDX-License-Identifier: MIT
/*
 * SLUB object layout and slab order selection.
 *
 * Written from the behaviour of Linux 6.18 (mm/slub.c) as observed in
 * /sys/kernel/slab; see slub_layout.h.
 */
#include <errno.h>

#include <kmem/slab.h>

#include "slab/slub/slub_layout.h"

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

static inline unsigned int order_objects(unsigned int order, unsigned int size)
{
	return (unsigned int)((PAGE_SIZE << order) / size);
}

/*
 * Smallest order in [min_order, max_order] whose tail waste is at most
 * 1/@fract of the slab; max_order + 1 if there is none.  Waste can only shrink
 * (as a fraction) when the order grows, so the first hit is the best one.
 */
static unsigned int calc_slab_order(unsigned int size, unsigned int min_order,
				    unsigned int max_order, unsigned int fract)
{
	unsigned int order;

	for (order = min_order; order <= max_order; order++) {
		unsigned long slab_size = PAGE_SIZE << order;

		if (slab_size % size <= slab_size / fract)
			break;
	}
	return order;
}

/*
 * Bigger slabs mean fewer trips to the page allocator and to the node
 * partial lists (whose lock is contended with many cpus), smaller ones mean
 * easier allocations and less memory pinned by one live object.  So: ask for
 * enough objects per slab for the machine size, accept 1/16 waste, and back
 * off to more waste before ever exceeding max_order.
 */
int slub_calculate_order(unsigned int size, const struct slab_order_params *p)
{
	struct slab_order_params def = SLAB_ORDER_PARAMS_DEFAULT(1);
	unsigned int min_order, max_order, min_objects, max_objects, order;
	unsigned int fraction;

	if (!p)
		p = &def;
	if (!size)
		return -EINVAL;

	/* slab_min_order above slab_max_order raises the maximum. */
	min_order = sl_min(p->min_order, MAX_PAGE_ORDER);
	max_order = sl_max(sl_min(p->max_order, MAX_PAGE_ORDER), min_order);

	/* 2 cpus -> 12 objects, 8 -> 20, 64 -> 32: grows slowly with the box. */
	min_objects = p->min_objects;
	if (!min_objects)
		min_objects = 4 * (sl_fls(p->nr_cpus > 1 ? p->nr_cpus : 1) + 1);
	/* Never demand more objects than the largest allowed slab holds. */
	max_objects = sl_max(order_objects(max_order, size), 1);
	min_objects = sl_min(min_objects, max_objects);

	min_order = sl_max(min_order, sl_get_order((unsigned long)min_objects * size));
	/* Tiny objects with a forced high order would overflow slab->objects. */
	if (order_objects(min_order, size) > SLUB_MAX_OBJS_PER_PAGE)
		return (int)sl_get_order((unsigned long)size * SLUB_MAX_OBJS_PER_PAGE) - 1;

	/* Fraction 2 accepts any waste: it just checks one object fits. */
	for (fraction = 16; fraction > 1; fraction /= 2) {
		order = calc_slab_order(size, min_order, max_order, fraction);
		if (order <= max_order)
			return (int)order;
	}

	/* Not even one object fits in max_order: use the smallest slab that does. */
	order = sl_get_order(size);
	return order <= MAX_PAGE_ORDER ? (int)order : -EINVAL;
}

int slub_calculate_layout(unsigned int object_size, unsigned int align,
			  slab_flags_t flags, bool has_ctor,
			  const struct slab_order_params *p,
			  struct slub_layout *out)
{
	return slub_calculate_layout_ext(object_size, align, flags, has_ctor,
					 SLUB_NO_FREEPTR_OFFSET, p, out);
}

/*
 * Slot layout, left to right (debug parts only with the matching flag):
 *
 *   [left red zone][object][word pad / right red zone][free pointer if
 *   outside][alloc track][free track][kmalloc orig_size][red zone pad][align]
 */
int slub_calculate_layout_ext(unsigned int object_size, unsigned int align,
			      slab_flags_t flags, bool has_ctor,
			      int freeptr_offset,
			      const struct slab_order_params *p,
			      struct slub_layout *out)
{
	const unsigned long limit = PAGE_SIZE << MAX_PAGE_ORDER;
	bool store_orig_size;
	unsigned int size;
	int order;

	/* Also keeps every sum below far from unsigned overflow. */
	if (!object_size || object_size > limit || align > limit ||
	    (align & (align - 1)))
		return -EINVAL;

	/* Only RCU or ctor caches may place the free pointer themselves. */
	if (freeptr_offset >= 0 &&
	    (!(has_ctor || (flags & SLAB_TYPESAFE_BY_RCU)) ||
	     (unsigned int)freeptr_offset >= object_size ||
	     ((unsigned int)freeptr_offset & (SL_WORD - 1))))
		return -EINVAL;

	*out = (struct slub_layout){ .object_size = object_size };
	out->align = align = calculate_alignment(flags, align, object_size);

	/* The free pointer and all metadata are word sized. */
	size = SL_ALIGN(object_size, SL_WORD);

	/*
	 * Red zoning needs at least one byte right of the object to check for
	 * overruns; if word padding left none, give it a whole word.
	 */
	if ((flags & SLAB_RED_ZONE) && size == object_size)
		size += SL_WORD;
	out->inuse = size;

	/* kmalloc caches with user tracking remember the requested size. */
	store_orig_size = (flags & SLAB_STORE_USER) && (flags & SLAB_KMALLOC);

	/*
	 * The free pointer must not overlap object bytes that stay meaningful
	 * while the object is free: RCU readers may still look at a freed
	 * object, a ctor'd object keeps its constructed state, poisoning fills
	 * the whole object.  With red zoning, an object smaller than a pointer
	 * cannot hold it, and kmalloc orig_size tracking red-zones the unused
	 * tail of the object, which the pointer would sit in.  All of these put
	 * it after the object, unless the cache names a safe field itself.
	 */
	if (freeptr_offset >= 0) {
		out->offset = (unsigned int)freeptr_offset;
	} else if ((flags & (SLAB_TYPESAFE_BY_RCU | SLAB_POISON)) || has_ctor ||
		   ((flags & SLAB_RED_ZONE) &&
		    (object_size < SL_WORD || store_orig_size))) {
		out->offset = size;
		size += SL_WORD;
	} else {
		/*
		 * Mid-object rather than at offset 0: a small underflow or
		 * overflow from a neighbour then corrupts data, not the
		 * freelist (kernel 5.7+).
		 */
		out->offset = (object_size / 2) & ~(SL_WORD - 1);
	}

	if (flags & SLAB_STORE_USER) {
		size += 2 * SLUB_TRACK_SIZE;
		if (store_orig_size)
			size += (unsigned int)sizeof(unsigned long);
	}

	if (flags & SLAB_RED_ZONE) {
		/*
		 * A guard word after the metadata catches overruns from the
		 * previous slot before they hit our tracking data; the left red
		 * zone (kept at the cache alignment so the object stays aligned)
		 * catches underruns of this object.
		 */
		size += SL_WORD;
		out->red_left_pad = SL_ALIGN(SL_WORD, align);
		size += out->red_left_pad;
	}

	/* Slots are packed back to back from the slab start: pad the stride. */
	size = SL_ALIGN(size, align);
	out->size = size;

	order = slub_calculate_order(size, p);
	if (order < 0)
		return order;
	out->order = (unsigned int)order;
	out->objects = order_objects(out->order, size);
	/* After a failed high-order allocation, retry with the smallest slab. */
	out->min_order = sl_get_order(size);
	out->min_objects = order_objects(out->min_order, size);
	return out->objects ? 0 : -EINVAL;
}

/*
 * Empty slabs kept on each node partial list instead of being freed: larger
 * objects sit in larger slabs that are dearer to get back, so keep more.
 */
unsigned int slub_min_partial(unsigned int size)
{
	unsigned int n = size ? sl_ilog2(size) / 2 : 0;

	return sl_max(SLUB_MIN_PARTIAL, sl_min(SLUB_MAX_PARTIAL, n));
}

bool slub_has_cpu_partial(slab_flags_t flags)
{
	return !(flags & (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON |
			  SLAB_STORE_USER | SLAB_TRACE));
}

/*
 * Objects a cpu may keep on its per-cpu partial list (sysfs cpu_partial,
 * 5.16+ values).  Fewer for big objects, which pin more memory per object.
 * @size is the slot stride.  Caches without per-cpu partial use 0.
 */
unsigned int slub_default_cpu_partial(unsigned int size)
{
	if (size >= PAGE_SIZE)
		return 6;
	if (size >= 1024)
		return 24;
	if (size >= 256)
		return 52;
	return 120;
}

#define SHEAF_TARGET_BYTES	(16u << 10)

unsigned int slub_sheaf_capacity(unsigned int size, slab_flags_t flags,
				 unsigned int min_capacity)
{
	unsigned int cap;

	if (!slub_has_cpu_partial(flags))
		return 0;
	if (size >= PAGE_SIZE)
		cap = 4;
	else if (size >= 1024)
		cap = 12;
	else if (size >= 256)
		cap = 26;
	else
		cap = 60;
	/*
	 * At least SHEAF_TARGET_BYTES of objects, at most 60: each full sheaf
	 * that goes to or comes from the barn costs a lock round trip and a
	 * few hundred instructions, and 26 objects of 256 B made that a tenth
	 * of a malloc + free pair in a burst of frees.
	 */
	if (size && cap < 60 && SHEAF_TARGET_BYTES / size > cap)
		cap = sl_min(60u, SHEAF_TARGET_BYTES / size);
	if (min_capacity > cap)
		cap = min_capacity;
	size_t bytes = SLAB_SHEAF_HDR + (size_t)cap * sizeof(void *);
	return (unsigned int)((kmalloc_size_roundup(bytes) - SLAB_SHEAF_HDR) / sizeof(void *));
}

/*
 * The list is actually bounded in slabs (5.17+, commit b47291ef02b0): the
 * object target is converted assuming the listed slabs are half free, i.e.
 * DIV_ROUND_UP(2 * objects, objs_per_slab) as in slub_set_cpu_partial().
 */
unsigned int slub_cpu_partial_slabs(unsigned int cpu_partial_objects,
				    unsigned int objs_per_slab)
{
	if (!objs_per_slab)
		return 0;
	return (2 * cpu_partial_objects + objs_per_slab - 1) / objs_per_slab;
}

