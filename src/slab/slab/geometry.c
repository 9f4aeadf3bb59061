// SPDX-License-Identifier: MIT
/*
 * SLAB's slab geometry (slab_geometry.h): the kernel's __kmem_cache_create
 * size and alignment steps, cache_estimate, calculate_slab_order and the
 * freelist placement of each rule set, written from their descriptions.
 */
#include <errno.h>

#include <kmem/page.h>

#include "slab/slab/slab_geometry.h"

const char *const slab_layout_names[NR_SLAB_LAYOUTS] = {
	[SLAB_LAYOUT_FINAL] = "final",
	[SLAB_LAYOUT_2013] = "2013",
	[SLAB_LAYOUT_2013_PREV] = "2013-prev",
	[SLAB_LAYOUT_2013_BEFORE] = "2013-before",
};

#define ALIGN_UP(x, a)	(((x) + (a) - 1) / (a) * (a))

unsigned int slab_rules_idx_size(enum slab_layout_rules rules)
{
	if (rules == SLAB_LAYOUT_2013_PREV || rules == SLAB_LAYOUT_2013_BEFORE)
		return 4;	/* kmem_bufctl_t, an unsigned int */
	/* freelist_idx_t: a byte while PAGE_SIZE / 256 <= SLAB_OBJ_MIN_SIZE (16). */
	return (PAGE_SIZE >> 8) <= 16 ? 1 : 2;
}

/* What one slab of @order holds (cache_estimate()): objects, and the bytes left. */
struct estimate {
	unsigned int num, left;
};

static struct estimate cache_estimate(const struct slab_geometry_in *in, const struct slab_geometry *g,
				      unsigned int order, enum slab_mgmt mgmt)
{
	unsigned long bytes = PAGE_SIZE << order;
	struct estimate e;

	if (mgmt != SLAB_MGMT_ON_SLAB) {
		/* No space of the slab for the array: objects only. */
		e.num = (unsigned int)(bytes / g->size);
		e.left = (unsigned int)(bytes - (unsigned long)e.num * g->size);
		return e;
	}
	if (in->rules == SLAB_LAYOUT_FINAL) {
		/* The array at the slab's end, unaligned: an index per object. */
		e.num = (unsigned int)(bytes / (g->size + g->idx_size));
		e.left = (unsigned int)(bytes - (unsigned long)e.num * (g->size + g->idx_size));
		return e;
	}
	/* The array (and the old header) before the objects, aligned to the cache's alignment. */
	unsigned int hdr = in->rules == SLAB_LAYOUT_2013_BEFORE ? SLAB_OLD_HEADER_SIZE : 0;
	unsigned long n = bytes > hdr ? (bytes - hdr) / (g->size + g->idx_size) : 0;
	while (n && ALIGN_UP(hdr + n * g->idx_size, g->align) + n * g->size > bytes)
		n--;
	e.num = (unsigned int)n;
	e.left = (unsigned int)(bytes - (n ? ALIGN_UP(hdr + n * g->idx_size, g->align) : 0) -
				n * g->size);
	return e;
}

/*
 * calculate_slab_order(): the smallest order whose waste is at most an
 * eighth of the slab, or slab_max_order's; the kernel's other stops.
 * Sets g->order and g->num (0 if nothing fits), returns the leftover.
 */
static unsigned int calculate_slab_order(const struct slab_geometry_in *in, struct slab_geometry *g,
					 enum slab_mgmt mgmt)
{
	unsigned int left_over = 0;

	g->num = 0;
	for (unsigned int order = 0; order <= MAX_PAGE_ORDER; order++) {
		struct estimate e = cache_estimate(in, g, order, mgmt);

		if (!e.num)
			continue;
		if (e.num > g->obj_max)
			break;	/* the index cannot name them all: keep the order before */
		if (mgmt == SLAB_MGMT_OFF_SLAB) {
			unsigned int hdr = in->rules == SLAB_LAYOUT_2013_BEFORE ? SLAB_OLD_HEADER_SIZE : 0;

			if (in->rules == SLAB_LAYOUT_FINAL) {
				unsigned int bytes = e.num * g->idx_size;
				struct slab_freelist_cache fc = { 0, false };

				if (in->freelist_cache)
					fc = in->freelist_cache(bytes, in->arg);
				/* No such kmalloc cache yet, or one that could recurse into growing. */
				if (!fc.slot || fc.off_slab)
					continue;
				/* Off the slab only when it saves: an array slot under half an object. */
				if (fc.slot > g->size / 2)
					continue;
			} else if (e.num > (g->size - hdr) / g->idx_size) {
				/* offslab_limit: cache_grow() must not need a bigger array than an object. */
				break;
			}
		}
		g->num = e.num;
		g->order = order;
		left_over = e.left;
		if (g->flags & SLAB_RECLAIM_ACCOUNT)
			break;	/* reclaimable caches stay at low orders */
		if (order >= in->max_order)
			break;
		if ((unsigned long)left_over * 8 <= (PAGE_SIZE << order))
			break;	/* at most 12.5% waste */
	}
	return left_over;
}

static void set_colour(struct slab_geometry *g, unsigned int left_over)
{
	g->left_over = left_over;
	g->colour = left_over / g->colour_off;
}

static bool set_objfreelist(const struct slab_geometry_in *in, struct slab_geometry *g)
{
	/*
	 * The array lives in a free object: not with a constructor (the object
	 * must keep its constructed state while free), nor for RCU-typesafe
	 * objects (readers may still look at a free one), nor with poisoning
	 * (the array would read as a corruption).
	 */
	if (in->has_ctor || (g->flags & (SLAB_TYPESAFE_BY_RCU | SLAB_POISON)))
		return false;
	unsigned int left = calculate_slab_order(in, g, SLAB_MGMT_OBJFREELIST);
	if (!g->num || g->num * g->idx_size > in->object_size)
		return false;
	g->mgmt = SLAB_MGMT_OBJFREELIST;
	g->freelist_size = g->num * g->idx_size;
	set_colour(g, left);
	return true;
}

static bool set_off_slab(const struct slab_geometry_in *in, struct slab_geometry *g)
{
	if (g->flags & SLAB_NOLEAKTRACE)
		return false;
	unsigned int left = calculate_slab_order(in, g, SLAB_MGMT_OFF_SLAB);
	if (!g->num)
		return false;
	/* If the leftover holds the array, it goes on the slab, at the cost of colours. */
	if (left >= g->num * g->idx_size)
		return false;
	g->mgmt = SLAB_MGMT_OFF_SLAB;
	g->freelist_size = g->num * g->idx_size;
	set_colour(g, left);
	return true;
}

static bool set_on_slab(const struct slab_geometry_in *in, struct slab_geometry *g)
{
	unsigned int left = calculate_slab_order(in, g, SLAB_MGMT_ON_SLAB);

	if (!g->num)
		return false;
	g->mgmt = SLAB_MGMT_ON_SLAB;
	g->mgmt_first = false;
	g->freelist_size = g->num * g->idx_size;
	set_colour(g, left);
	return true;
}

/* The 2013 rules: off the slab for big objects unless the leftover holds the array. */
static bool set_2013(const struct slab_geometry_in *in, struct slab_geometry *g)
{
	unsigned int threshold = in->rules == SLAB_LAYOUT_2013 ? SLAB_OFF_SLAB_2013 : SLAB_OFF_SLAB_OLD;
	unsigned int hdr = in->rules == SLAB_LAYOUT_2013_BEFORE ? SLAB_OLD_HEADER_SIZE : 0;
	bool off = g->size >= threshold && !(g->flags & SLAB_NOLEAKTRACE);

	if (off) {
		/* Its array needs a kmalloc cache; before kmalloc's exist, on the slab (slab_early_init). */
		struct estimate e = cache_estimate(in, g, 0, SLAB_MGMT_OFF_SLAB);
		struct slab_freelist_cache fc = { 0, false };

		if (in->freelist_cache)
			fc = in->freelist_cache(hdr + (e.num ? e.num : 1) * g->idx_size, in->arg);
		off = fc.slot != 0;
	}
	unsigned int left = calculate_slab_order(in, g, off ? SLAB_MGMT_OFF_SLAB : SLAB_MGMT_ON_SLAB);
	if (!g->num)
		return false;
	unsigned int aligned = ALIGN_UP(hdr + g->num * g->idx_size, g->align);
	g->mgmt_first = true;
	if (off && left >= aligned) {
		off = false;
		left -= aligned;
	}
	if (off) {
		g->mgmt = SLAB_MGMT_OFF_SLAB;
		g->freelist_size = hdr + g->num * g->idx_size;
	} else {
		g->mgmt = SLAB_MGMT_ON_SLAB;
		g->freelist_size = aligned;
	}
	set_colour(g, left);
	return true;
}

int slab_calc_geometry(const struct slab_geometry_in *in, struct slab_geometry *g)
{
	unsigned int size, ralign;

	*g = (struct slab_geometry){ 0 };
	g->flags = in->flags;
	g->idx_size = in->idx_size ? in->idx_size : slab_rules_idx_size(in->rules);
	if (g->idx_size != 1 && g->idx_size != 2 && g->idx_size != 4)
		return -EINVAL;
	g->obj_max = g->idx_size == 4 ? 0xffffffffu : (1u << (8 * g->idx_size)) - 1;
	if (!in->object_size)
		return -EINVAL;

	/* kmalloc's caches were cache-line aligned on SLAB (ARCH_KMALLOC_FLAGS). */
	if (g->flags & SLAB_KMALLOC)
		g->flags |= SLAB_HWCACHE_ALIGN;
	size = ALIGN_UP(in->object_size, (unsigned int)sizeof(void *));
	/* SLAB_OBJ_MIN_SIZE: a byte index names 255 objects, a page of 16-byte ones. */
	if (g->idx_size == 1 && size < 16)
		size = 16;
	ralign = (unsigned int)sizeof(void *);
	if (g->flags & SLAB_HWCACHE_ALIGN) {
		unsigned int a = SLAB_CACHE_LINE;

		while (a > ralign && size <= a / 2)
			a /= 2;
		if (a > ralign)
			ralign = a;
	}
	if (in->align > ralign)
		ralign = in->align;
	g->align = ralign;

	/*
	 * The debug words (SLAB's layout): red-zone word 1 before the object,
	 * red-zone word 2 after it, then the last-user word.  The kernel drops
	 * red zones and user words of caches aligned past 8 bytes; kmem keeps
	 * them and pads red zone 1 out to the alignment (SLUB's red_left_pad),
	 * so that aligned caches (kmalloc's, malloc's) can be checked too.
	 */
	unsigned int slot = size;
	if (g->flags & SLAB_RED_ZONE) {
		g->obj_offset = ALIGN_UP(SLAB_REDZONE_ALIGN, ralign);
		slot = g->obj_offset + size + SLAB_REDZONE_ALIGN;
	}
	if (g->flags & SLAB_STORE_USER)
		slot += SLAB_REDZONE_ALIGN;
	g->size = ALIGN_UP(slot, ralign);
	g->colour_off = ralign > SLAB_CACHE_LINE ? ralign : SLAB_CACHE_LINE;

	bool ok;
	if (in->rules == SLAB_LAYOUT_FINAL)
		ok = set_objfreelist(in, g) || set_off_slab(in, g) || set_on_slab(in, g);
	else
		ok = set_2013(in, g);
	return ok ? 0 : -EINVAL;
}
