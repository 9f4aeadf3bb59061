// SPDX-License-Identifier: MIT
/*
 * SLAB's slab geometry, as a pure function (src/slab/slab/geometry.c).
 *
 * Oracle: the objperslab column of the three /proc/slabinfo tables of the
 * SLAB byte-sized freelist index patchset (Kim 2013): "before" (4-byte
 * index and the struct slab header on the slab), "after the previous
 * posting" (header overlaid on struct page) and "this patchset" (1-byte
 * index, more management off the slab); and the final kernel's figures
 * (kmalloc-32: 124 with the index on the slab, kmalloc-64: 64 with the
 * index in a free object).  The live /proc/slabinfo of the same layouts is
 * checked by test_slab_objperslab.
 */
#include <string.h>

#include <kmem/page.h>

#include "slab/slab/slab_geometry.h"

#include "ktest.h"

/* The kmalloc caches of the layout, as the freelist of an off-slab cache would find them. */
static struct slab_freelist_cache kmalloc_cache_of(unsigned int bytes, void *arg);

struct rules {
	enum slab_layout_rules rules;
	unsigned int idx;
};

static int geometry(unsigned int size, unsigned int align, slab_flags_t flags, bool ctor,
		    const struct rules *r, struct slab_geometry *g)
{
	struct slab_geometry_in in = {
		.object_size = size, .align = align, .flags = flags, .has_ctor = ctor,
		.rules = r->rules, .idx_size = r->idx, .max_order = 1,
		.freelist_cache = kmalloc_cache_of, .arg = (void *)r,
	};

	return slab_calc_geometry(&in, g);
}

static const unsigned int kmalloc_sizes[] = { 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192 };

/* A kmalloc cache as kmem's core creates it: natural alignment for powers of two. */
static int kmalloc_geometry(unsigned int size, const struct rules *r, struct slab_geometry *g)
{
	return geometry(size, (size & (size - 1)) ? 8 : size, SLAB_KMALLOC, false, r, g);
}

static struct slab_freelist_cache kmalloc_cache_of(unsigned int bytes, void *arg)
{
	struct slab_freelist_cache fc = { 0, false };

	for (unsigned int i = 0; i < sizeof(kmalloc_sizes) / sizeof(kmalloc_sizes[0]); i++) {
		if (kmalloc_sizes[i] < bytes)
			continue;
		struct slab_geometry g;
		if (kmalloc_geometry(kmalloc_sizes[i], arg, &g))
			break;
		fc.slot = g.size;
		fc.off_slab = g.mgmt == SLAB_MGMT_OFF_SLAB;
		break;
	}
	return fc;
}

/* The patch's tables: objsize and objperslab of each cache under each of its three layouts. */
static const struct {
	const char *name;
	unsigned int size;		/* what the cache was created with */
	unsigned int objsize;		/* the tables' objsize column */
	unsigned int per[3];		/* before, after the previous posting, this patchset */
} patch_table[] = {
	{ "kmalloc-512", 512, 512, { 8, 8, 8 } },
	{ "kmalloc-256", 256, 256, { 15, 15, 16 } },
	{ "kmalloc-192", 192, 192, { 20, 20, 21 } },
	{ "kmalloc-96", 96, 128, { 30, 31, 31 } },
	{ "kmalloc-64", 64, 64, { 59, 60, 63 } },
	{ "kmalloc-128", 128, 128, { 30, 31, 31 } },
	{ "kmalloc-32", 32, 32, { 112, 113, 124 } },
	{ "kmem_cache", 192, 192, { 20, 20, 21 } },
};

static const struct rules patch_rules[3] = {
	{ SLAB_LAYOUT_2013_BEFORE, 0 }, { SLAB_LAYOUT_2013_PREV, 0 }, { SLAB_LAYOUT_2013, 0 },
};

KTEST(objperslab_matches_the_byte_sized_index_patch)
{
	for (unsigned int i = 0; i < sizeof(patch_table) / sizeof(patch_table[0]); i++)
		for (int l = 0; l < 3; l++) {
			struct slab_geometry g;
			int err = strcmp(patch_table[i].name, "kmem_cache") ?
				kmalloc_geometry(patch_table[i].size, &patch_rules[l], &g) :
				geometry(192, 0, SLAB_HWCACHE_ALIGN, false, &patch_rules[l], &g);
			KT_ASSERT_EQ(err, 0);
			if (g.size != patch_table[i].objsize || g.num != patch_table[i].per[l] || g.order) {
				KT_FAIL("%s under %s: objsize %u objperslab %u order %u, the patch: %u %u 0",
					patch_table[i].name, slab_layout_names[patch_rules[l].rules], g.size,
					g.num, g.order, patch_table[i].objsize, patch_table[i].per[l]);
			}
		}
}

KTEST(final_rules_place_the_index_as_the_kernel)
{
	const struct rules final = { SLAB_LAYOUT_FINAL, 0 };
	struct slab_geometry g;

	/* kmalloc-32: 128 indices do not fit an object, nor off the slab cheaply: on the slab. */
	KT_ASSERT_EQ(kmalloc_geometry(32, &final, &g), 0);
	KT_ASSERT_EQ(g.num, 124);
	KT_ASSERT_EQ(g.mgmt, SLAB_MGMT_ON_SLAB);
	KT_ASSERT_EQ(g.idx_size, 1);
	/* kmalloc-64: 64 indices fit in a free object. */
	KT_ASSERT_EQ(kmalloc_geometry(64, &final, &g), 0);
	KT_ASSERT_EQ(g.num, 64);
	KT_ASSERT_EQ(g.mgmt, SLAB_MGMT_OBJFREELIST);
	KT_ASSERT_EQ(g.left_over, 0);
	/* With a constructor the index cannot live in a free object. */
	KT_ASSERT_EQ(geometry(64, 64, 0, true, &final, &g), 0);
	KT_ASSERT_EQ(g.mgmt, SLAB_MGMT_ON_SLAB);
	KT_ASSERT_EQ(g.num, 63);
	/* 512-byte objects with a ctor: the array off the slab (kmalloc-8 is not there: -16, -32 is). */
	KT_ASSERT_EQ(geometry(512, 8, 0, true, &final, &g), 0);
	KT_ASSERT_EQ(g.mgmt, SLAB_MGMT_OFF_SLAB);
	KT_ASSERT_EQ(g.num, 8);
	/* A 2-byte index on the slab: kmalloc-32 holds 120. */
	const struct rules two = { SLAB_LAYOUT_FINAL, 2 };
	KT_ASSERT_EQ(kmalloc_geometry(32, &two, &g), 0);
	KT_ASSERT_EQ(g.num, 120);
}

KTEST(byte_index_caps_objects_per_slab)
{
	const struct rules final = { SLAB_LAYOUT_FINAL, 0 };
	struct slab_geometry g;

	/* 16-byte objects with a ctor: 4096/17 = 240 on an order-0 slab, under the cap of 255. */
	KT_ASSERT_EQ(geometry(16, 0, 0, true, &final, &g), 0);
	KT_ASSERT_EQ(g.order, 0);
	KT_ASSERT_EQ(g.num, 240);
	KT_ASSERT(g.num <= g.obj_max);
	KT_ASSERT_EQ(g.obj_max, 255);
	/* 8-byte objects take 16-byte slots (SLAB_OBJ_MIN_SIZE): 455 would not fit a byte index. */
	KT_ASSERT_EQ(geometry(8, 0, 0, true, &final, &g), 0);
	KT_ASSERT_EQ(g.size, 16);
	KT_ASSERT_EQ(g.num, 240);
}

KTEST(order_follows_waste_and_slab_max_order)
{
	const struct rules final = { SLAB_LAYOUT_FINAL, 0 };
	struct slab_geometry g;

	/* 1100-byte objects: 3 a page wastes 796 (> 1/8): order 1 holds 7 (waste 896 <= 1024). */
	KT_ASSERT_EQ(geometry(1100, 8, 0, false, &final, &g), 0);
	KT_ASSERT_EQ(g.order, 1);
	KT_ASSERT_EQ(g.num, 7);
	/* Reclaimable caches stop at the first order that holds one. */
	KT_ASSERT_EQ(geometry(1100, 8, SLAB_RECLAIM_ACCOUNT, false, &final, &g), 0);
	KT_ASSERT_EQ(g.order, 0);
	KT_ASSERT_EQ(g.num, 3);
	/* Bigger than a page: the first order that holds one. */
	KT_ASSERT_EQ(geometry(5000, 8, 0, false, &final, &g), 0);
	KT_ASSERT_EQ(g.order, 1);
	KT_ASSERT_EQ(g.num, 1);
	/* Colours: what is left over, in cache lines. */
	KT_ASSERT_EQ(geometry(1000, 8, 0, false, &final, &g), 0);
	KT_ASSERT_EQ(g.colour_off, 64);
	KT_ASSERT_EQ(g.colour, g.left_over / 64);
}

KTEST(debug_words_surround_the_object)
{
	const struct rules final = { SLAB_LAYOUT_FINAL, 0 };
	struct slab_geometry g;

	KT_ASSERT_EQ(geometry(100, 8, SLAB_RED_ZONE | SLAB_STORE_USER | SLAB_POISON, false, &final, &g), 0);
	KT_ASSERT_EQ(g.obj_offset, 8);
	/* red zone 1, the object rounded to words, red zone 2, last user */
	KT_ASSERT_EQ(g.size, 8 + 104 + 8 + 8);
	/* Poisoned objects cannot hold the index array. */
	KT_ASSERT(g.mgmt != SLAB_MGMT_OBJFREELIST);
	/* An aligned cache pads red zone 1 out to its alignment. */
	KT_ASSERT_EQ(geometry(64, 64, SLAB_RED_ZONE, false, &final, &g), 0);
	KT_ASSERT_EQ(g.obj_offset, 64);
	KT_ASSERT_EQ(g.size, 192);
}

KTEST_MAIN((void)0)
