/* SPDX-License-Identifier: MIT */
/*
 * SLUB object layout and slab order selection.
 *
 * Everything here is a pure function of its arguments: no allocation, no
 * mutable state.  The semantics follow Linux 6.18 mm/slub.c (calculate_sizes,
 * calculate_order, set_cpu_partial), and are checked against
 * /sys/kernel/slab of a real 6.18 kernel by tests/test_slub_layout.c.
 */
#ifndef KMEM_SLUB_LAYOUT_H
#define KMEM_SLUB_LAYOUT_H

#include "slab/slab_layout.h"

/* slab->objects is a 15-bit field in the kernel; we keep the same limit. */
#define SLUB_MAX_OBJS_PER_PAGE	32767U
/* Bounds for slub_of(s)->min_partial (kernel MIN_PARTIAL / MAX_PARTIAL). */
#define SLUB_MIN_PARTIAL	5U
#define SLUB_MAX_PARTIAL	10U

/*
 * SLAB_STORE_USER keeps one of these for the last allocation and one for the
 * last free of every object.  The kernel stores a stack-depot handle as well;
 * we keep the caller address, pid, cpu and a timestamp, which is what
 * /sys/kernel/debug/slab/<cache>/alloc_traces reports besides the stack.
 */
struct slub_track {
	uintptr_t addr;		/* caller (return address) */
	uint64_t when;		/* timestamp, ns */
	int32_t pid;		/* thread id */
	int32_t cpu;		/* cpu the operation ran on */
};
#define SLUB_TRACK_SIZE		24U
_Static_assert(sizeof(struct slub_track) == SLUB_TRACK_SIZE,
	       "SLUB_TRACK_SIZE must match struct slub_track");

/*
 * Order and object count packed in one word, as in the kernel: a slab
 * allocation reads slub_of(s)->oo once and gets a consistent (order, objects) pair even
 * while sysfs changes it concurrently.
 */
#define OO_SHIFT	16
#define OO_MASK		((1U << OO_SHIFT) - 1)

struct kmem_cache_order_objects {
	unsigned int x;
};

static inline struct kmem_cache_order_objects oo_make(unsigned int order,
						      unsigned int size)
{
	struct kmem_cache_order_objects oo = {
		(order << OO_SHIFT) + (unsigned int)((PAGE_SIZE << order) / size)
	};
	return oo;
}

static inline unsigned int oo_order(struct kmem_cache_order_objects oo)
{
	return oo.x >> OO_SHIFT;
}

static inline unsigned int oo_objects(struct kmem_cache_order_objects oo)
{
	return oo.x & OO_MASK;
}

/*
 * Inputs of calculate_order() that the kernel takes from boot parameters and
 * the machine.  max_order may legitimately be 0 (debug_guardpage_minorder), so
 * there is no "0 = default" for it: use SLAB_ORDER_PARAMS_DEFAULT().
 */
struct slab_order_params {
	unsigned int nr_cpus;		/* present cpus; <= 1 counts as 1 */
	unsigned int min_order;		/* slab_min_order=, default 0 */
	unsigned int max_order;		/* slab_max_order=, default 3 */
	unsigned int min_objects;	/* slab_min_objects=, 0 = derive from nr_cpus */
};

#define SLAB_ORDER_PARAMS_DEFAULT(cpus)					\
	((struct slab_order_params){ .nr_cpus = (cpus), .min_order = 0,	\
		.max_order = PAGE_ALLOC_COSTLY_ORDER, .min_objects = 0 })

/* The result of calculate_sizes(); all sizes in bytes. */
struct slub_layout {
	unsigned int object_size;	/* what the user asked for */
	unsigned int size;		/* slot stride, sysfs slab_size */
	unsigned int inuse;		/* object + word padding (+ right red zone) */
	unsigned int offset;		/* free pointer offset in the slot */
	unsigned int align;		/* final alignment, sysfs align */
	unsigned int red_left_pad;	/* left red zone before each object */
	unsigned int order, objects;	/* preferred slab (slub_of(s)->oo) */
	unsigned int min_order, min_objects; /* fallback slab (slub_of(s)->min) */
};

/* No caller-chosen free pointer offset (kmem_cache_args.use_freeptr_offset). */
#define SLUB_NO_FREEPTR_OFFSET	(-1)

int slub_calculate_layout(unsigned int object_size, unsigned int align,
			  slab_flags_t flags, bool has_ctor,
			  const struct slab_order_params *p,
			  struct slub_layout *out);

/* As above, with kmem_cache_args.freeptr_offset (>= 0) for RCU/ctor caches. */
int slub_calculate_layout_ext(unsigned int object_size, unsigned int align,
			      slab_flags_t flags, bool has_ctor,
			      int freeptr_offset,
			      const struct slab_order_params *p,
			      struct slub_layout *out);

/* Page order for slots of @size bytes, or -EINVAL if none fits. */
int slub_calculate_order(unsigned int size, const struct slab_order_params *p);

unsigned int slub_min_partial(unsigned int size);
/* Debug caches (kmem_cache_debug()) cannot use per-cpu partial slabs. */
bool slub_has_cpu_partial(slab_flags_t flags);
unsigned int slub_default_cpu_partial(unsigned int size);
unsigned int slub_cpu_partial_slabs(unsigned int cpu_partial_objects,
				    unsigned int objs_per_slab);

/*
 * Per-cpu sheaves (6.18 opt-in, the newest tree's default): a sheaf is a
 * SLAB_SHEAF_HDR-byte header and an array of object pointers.  The capacity
 * goes by slot size (>= PAGE_SIZE: 4, >= 1024: 12, >= 256: 26, else 60),
 * raised to hold 16 KiB of objects (at most 60), or at least @min_capacity if
 * the cache asked for one, then is rounded up so the sheaf exactly fills its
 * kmalloc bucket.  Debug caches get 0.
 */
#define SLAB_SHEAF_HDR	32
unsigned int slub_sheaf_capacity(unsigned int size, slab_flags_t flags,
				 unsigned int min_capacity);

#endif /* KMEM_SLUB_LAYOUT_H */
