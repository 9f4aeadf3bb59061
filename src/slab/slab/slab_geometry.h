/* SPDX-License-Identifier: MIT */
/*
 * SLAB's slab geometry: how many objects a slab of a cache holds, where
 * its management (the freelist index array) lives, its order and its
 * colours.  A pure function of its arguments (no allocator state), so
 * that the figures of the kernel's tables can be checked directly.
 *
 * Four rule sets, chosen at boot with slab.layout= (docs/parameters.md):
 *
 *  final        the last mm/slab.c (6.7): a 1-byte freelist_idx_t for
 *               4 KiB pages, the index array placed OBJFREELIST (inside a
 *               free object) -> OFF_SLAB (a kmalloc'ed array, if that
 *               saves space and the array's kmalloc cache is small and on
 *               its slab) -> ON_SLAB (at the end of the slab).
 *  2013         the byte-sized freelist index patchset (Kim 2013): 1-byte
 *               index, descriptor in struct page, the index array on the
 *               slab before the objects (aligned to the cache's alignment)
 *               unless the object is of 256 bytes or more, then off the
 *               slab unless the leftover space holds it.
 *  2013-prev    the posting before it (struct slab overlaid on struct
 *               page): 4-byte kmem_bufctl_t index, off-slab from 512 bytes.
 *  2013-before  the kernel before both: the 4-byte index and a 48-byte
 *               struct slab header on the slab (or off it, with the
 *               index array, from 512 bytes).
 *
 * slab.freelist_idx=1|2|4 overrides the index width of the rule set.
 */
#ifndef KMEM_SLAB_SLAB_GEOMETRY_H
#define KMEM_SLAB_SLAB_GEOMETRY_H

#include <stdbool.h>

#include <kmem/slab_flags.h>

enum slab_layout_rules {
	SLAB_LAYOUT_FINAL,
	SLAB_LAYOUT_2013,
	SLAB_LAYOUT_2013_PREV,
	SLAB_LAYOUT_2013_BEFORE,
	NR_SLAB_LAYOUTS
};
extern const char *const slab_layout_names[NR_SLAB_LAYOUTS];

/* Where a slab's index array lives. */
enum slab_mgmt {
	SLAB_MGMT_ON_SLAB,	/* in the slab: at its end (final), before the objects (2013 rules) */
	SLAB_MGMT_OFF_SLAB,	/* kmalloc'ed from freelist_cache */
	SLAB_MGMT_OBJFREELIST,	/* in the free object handed out last */
};

/* The pre-2013 struct slab (list_head, colouroff, s_mem, inuse, free, nodeid), padded. */
#define SLAB_OLD_HEADER_SIZE	48U
/* cache_line_size() of the machines modelled. */
#define SLAB_CACHE_LINE		64U
/* REDZONE_ALIGN: red-zone and last-user words are 64-bit. */
#define SLAB_REDZONE_ALIGN	8U
/* Cache sizes above which the 2013 rules put the index array off the slab. */
#define SLAB_OFF_SLAB_2013	256U	/* PAGE_SIZE >> 4 */
#define SLAB_OFF_SLAB_OLD	512U	/* PAGE_SIZE >> 3 */

/* The kmalloc cache an off-slab index array of some bytes would come from. */
struct slab_freelist_cache {
	unsigned int slot;	/* its object size (s->size), 0: no such cache yet */
	bool off_slab;		/* its own index arrays are off its slabs */
};

struct slab_geometry_in {
	unsigned int object_size;
	unsigned int align;		/* the creator's */
	slab_flags_t flags;		/* debug flags included */
	bool has_ctor;
	enum slab_layout_rules rules;
	unsigned int idx_size;		/* bytes per index: 1, 2 or 4; 0: the rules' */
	unsigned int max_order;		/* slab_max_order */
	/* The kmalloc cache for @bytes (OFF_SLAB candidates); NULL: none exists. */
	struct slab_freelist_cache (*freelist_cache)(unsigned int bytes, void *arg);
	void *arg;
};

struct slab_geometry {
	unsigned int size;		/* slot: object, debug words, padding */
	unsigned int align;
	slab_flags_t flags;		/* with the debug flags the kernel would drop dropped */
	unsigned int obj_offset;	/* object start in its slot (red zone 1 before it) */
	unsigned int order;
	unsigned int num;		/* objects per slab */
	unsigned int idx_size;
	unsigned int obj_max;		/* SLAB_OBJ_MAX_NUM of the index width */
	enum slab_mgmt mgmt;
	bool mgmt_first;		/* ON_SLAB array before the objects (2013 rules) */
	unsigned int freelist_size;	/* bytes of the index array (with the old header) */
	unsigned int left_over;		/* bytes of the slab no object or array uses */
	unsigned int colour_off;	/* colour step */
	unsigned int colour;		/* colours: left_over / colour_off */
};

/* SLAB's geometry for a cache; 0, or -EINVAL if no slab of order <= MAX_PAGE_ORDER fits it. */
int slab_calc_geometry(const struct slab_geometry_in *in, struct slab_geometry *g);

/* The index width of @rules (1 for 4 KiB pages and the final or 2013 rules). */
unsigned int slab_rules_idx_size(enum slab_layout_rules rules);

#endif /* KMEM_SLAB_SLAB_GEOMETRY_H */
