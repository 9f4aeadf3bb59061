// SPDX-License-Identifier: MIT
/*
 * The fragmentation indices of mm/vmstat.c, in integer thousandths, on
 * hand-computed cases: the pure functions of introspect/extfrag.h, and the
 * text of /sys/kernel/debug/extfrag/{unusable_index,extfrag_index} as
 * rendered from a hand-made zone snapshot and live.
 *
 *   unusable(o) = 1000                                   if no free pages
 *               = (free - suitable(o) << o) * 1000 / free
 *   extfrag(o)  = 0                                      if no free blocks
 *               = -1000                                  if an o-block is free
 *               = 1000 - (1000 + free * 1000 / 2^o) / blocks
 * printed "%d.%03d " and "%2d.%03d " (so -1000 is "-1.000").
 */
#include <stdlib.h>

#include <kmem.h>

#include "introspect/extfrag.h"
#include "introspect/proc_mm.h"
#include "page_alloc/mm.h"

#include "lib/kt_util.h"
#include "lib/mm_check.h"
#include "ktest.h"

static void info_for(const unsigned long nr_free[NR_PAGE_ORDERS], unsigned int order,
		     struct contig_page_info *info)
{
	fill_contig_page_info(nr_free, order, info);
}

static int unusable(const unsigned long nr_free[NR_PAGE_ORDERS], unsigned int order)
{
	struct contig_page_info info;

	info_for(nr_free, order, &info);
	return unusable_free_index(order, &info);
}

static int extfrag(const unsigned long nr_free[NR_PAGE_ORDERS], unsigned int order)
{
	struct contig_page_info info;

	info_for(nr_free, order, &info);
	return fragmentation_index(order, &info);
}

KTEST(contig_page_info_counts)
{
	/* 3 order-0, 2 order-1, 1 order-2, 1 order-10 block. */
	unsigned long nr_free[NR_PAGE_ORDERS] = { 3, 2, 1, [10] = 1 };
	struct contig_page_info info;

	fill_contig_page_info(nr_free, 0, &info);
	KT_ASSERT_EQ(info.free_pages, 3 + 4 + 4 + 1024);
	KT_ASSERT_EQ(info.free_blocks_total, 7);
	KT_ASSERT_EQ(info.free_blocks_suitable, 3 + 4 + 4 + 1024);	/* pages */
	fill_contig_page_info(nr_free, 1, &info);
	KT_ASSERT_EQ(info.free_blocks_suitable, 2 + 2 + 512);
	fill_contig_page_info(nr_free, 3, &info);
	KT_ASSERT_EQ(info.free_blocks_suitable, 128);
	fill_contig_page_info(nr_free, 10, &info);
	KT_ASSERT_EQ(info.free_blocks_suitable, 1);
	KT_ASSERT_EQ(info.free_pages, 1035);
	KT_ASSERT_EQ(info.free_blocks_total, 7);
}

KTEST(special_values)
{
	unsigned long none[NR_PAGE_ORDERS] = { 0 };

	/* Nothing free: unusable 1000 (nothing usable), extfrag 0 (lack of memory). */
	for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++) {
		KT_ASSERT_EQ(unusable(none, o), 1000);
		KT_ASSERT_EQ(extfrag(none, o), 0);
	}
	/* A suitable block exists: extfrag -1000 whatever else is free. */
	unsigned long one_max[NR_PAGE_ORDERS] = { 500, [10] = 1 };
	for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++)
		KT_ASSERT_EQ(extfrag(one_max, o), -1000);
	/* Everything free in MAX_PAGE_ORDER blocks: nothing unusable. */
	unsigned long all_max[NR_PAGE_ORDERS] = { [10] = 16 };
	for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++) {
		KT_ASSERT_EQ(unusable(all_max, o), 0);
		KT_ASSERT_EQ(extfrag(all_max, o), -1000);
	}
}

KTEST(worked_example_reference_section_7)
{
	/* 1024 free order-0 pages, an order-3 request. */
	unsigned long nr_free[NR_PAGE_ORDERS] = { 1024 };

	KT_ASSERT_EQ(unusable(nr_free, 3), 1000);
	/* 1000 - (1000 + 1024000 / 8) / 1024 = 1000 - 129000 / 1024 = 1000 - 125 */
	KT_ASSERT_EQ(extfrag(nr_free, 3), 875);
	KT_ASSERT_EQ(unusable(nr_free, 0), 0);
	KT_ASSERT_EQ(extfrag(nr_free, 0), -1000);
	/* order 1: 1000 - (1000 + 512000) / 1024 = 1000 - 500 */
	KT_ASSERT_EQ(extfrag(nr_free, 1), 500);
	/* order 10: 1000 - (1000 + 1000) / 1024 = 1000 - 1 */
	KT_ASSERT_EQ(extfrag(nr_free, 10), 999);
}

/* 3 order-0, 2 order-1, 1 order-2 block: 11 pages in 6 blocks. */
static const unsigned long mixed[NR_PAGE_ORDERS] = { 3, 2, 1 };
/* Computed by hand, integer divisions in the kernel's order. */
static const int mixed_unusable[NR_PAGE_ORDERS] = {
	0,		/* (11 - 11) * 1000 / 11 */
	272,		/* (11 - 4 * 2) * 1000 / 11 = 3000 / 11 */
	636,		/* (11 - 1 * 4) * 1000 / 11 = 7000 / 11 */
	1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000,
};
static const int mixed_extfrag[NR_PAGE_ORDERS] = {
	-1000, -1000, -1000,
	605,		/* 1000 - (1000 + 11000 / 8 = 1375) / 6 = 1000 - 2375 / 6 = 1000 - 395 */
	719,		/* 11000 / 16 = 687:  1687 / 6 = 281 */
	777,		/* 11000 / 32 = 343:  1343 / 6 = 223 */
	805,		/* 11000 / 64 = 171:  1171 / 6 = 195 */
	820,		/* 11000 / 128 = 85:  1085 / 6 = 180 */
	827,		/* 11000 / 256 = 42:  1042 / 6 = 173 */
	830,		/* 11000 / 512 = 21:  1021 / 6 = 170 */
	832,		/* 11000 / 1024 = 10: 1010 / 6 = 168 */
};

KTEST(mixed_case_by_hand)
{
	for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++) {
		KT_ASSERT_EQ(unusable(mixed, o), mixed_unusable[o]);
		KT_ASSERT_EQ(extfrag(mixed, o), mixed_extfrag[o]);
	}
}

/* Integer divisions in the kernel's order: other orders (or floating point) drift by one. */
KTEST(division_order_matters)
{
	/* 7 order-0 + 1 order-2: 11 pages, 8 blocks.  Order 3:
	 * 1000 - (1000 + 11000 / 8) / 8 = 1000 - 2375 / 8 = 1000 - 296 = 704;
	 * in floating point 1000 - 296.875 = 703.125 would give 703. */
	unsigned long nr_free[NR_PAGE_ORDERS] = { 7, 0, 1 };
	KT_ASSERT_EQ(extfrag(nr_free, 3), 704);
	/* unusable order 1: suitable = 0 + 1*2 = 2 -> (11 - 4) * 1000 / 11 = 636 */
	KT_ASSERT_EQ(unusable(nr_free, 1), 636);
	/* 3 order-0 pages: order 2: 1000 - (1000 + 3000 / 4) / 3 = 1000 - 1750 / 3 = 417 */
	unsigned long three[NR_PAGE_ORDERS] = { 3 };
	KT_ASSERT_EQ(extfrag(three, 2), 417);
	/* order 1: 1000 - (1000 + 1500) / 3 = 1000 - 833 = 167 */
	KT_ASSERT_EQ(extfrag(three, 1), 167);
}

static void render(void (*fn)(struct seq_buf *, const struct zone_info *),
		   const struct zone_info *zi, char *buf, size_t size)
{
	struct seq_buf s = { .buf = buf, .size = size };

	fn(&s, zi);
	seq_finish(&s);
}

static void zone_with(struct zone_info *zi, const char *name, const unsigned long nr_free[])
{
	memset(zi, 0, sizeof(*zi));
	zi->node = 0;
	zi->name = name;
	zi->pb_order = 9;
	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		zi->nr_free[o] = nr_free[o];
}

/* Both files' line for a hand-made zone: node, name, free blocks per order. */
static const struct {
	int node;
	const char *name;
	const unsigned long *nr_free;
	const char *unusable, *extfrag;
} rendered[] = {
	{ 0, "Normal", mixed,
	  "Node 0, zone   Normal 0.000 0.272 0.636 1.000 1.000 1.000 "
	  "1.000 1.000 1.000 1.000 1.000 \n",
	  "Node 0, zone   Normal -1.000 -1.000 -1.000  0.605  0.719  0.777 "
	  " 0.805  0.820  0.827  0.830  0.832 \n" },
	{ 0, "DMA32", (const unsigned long[NR_PAGE_ORDERS]){ 1024 },
	  "Node 0, zone    DMA32 0.000 1.000 1.000 1.000 1.000 1.000 "
	  "1.000 1.000 1.000 1.000 1.000 \n",
	  "Node 0, zone    DMA32 -1.000  0.500  0.750  0.875  0.937  0.968 "
	  " 0.984  0.992  0.996  0.998  0.999 \n" },
	{ 1, "DMA", (const unsigned long[NR_PAGE_ORDERS]){ 0 },
	  "Node 1, zone      DMA 1.000 1.000 1.000 1.000 1.000 1.000 "
	  "1.000 1.000 1.000 1.000 1.000 \n",
	  "Node 1, zone      DMA  0.000  0.000  0.000  0.000  0.000  0.000 "
	  " 0.000  0.000  0.000  0.000  0.000 \n" },
};

KTEST(rendered_text)
{
	struct zone_info zi;
	char buf[512];

	for (size_t i = 0; i < sizeof(rendered) / sizeof(rendered[0]); i++) {
		zone_with(&zi, rendered[i].name, rendered[i].nr_free);
		zi.node = rendered[i].node;
		render(render_unusable_index, &zi, buf, sizeof(buf));
		KT_ASSERT_STREQ(buf, rendered[i].unusable);
		render(render_extfrag_index, &zi, buf, sizeof(buf));
		KT_ASSERT_STREQ(buf, rendered[i].extfrag);
	}
}

/*
 * The live files, on a machine whose state the test controls: take all
 * memory off the free lists (buddy primitives, under the zone lock), then
 * give back every other page of two MAX_PAGE_ORDER blocks: free memory is
 * exactly 1024 order-0 pages that cannot merge -- the worked example.
 */
static const char *const example_unusable =
	"Node 0, zone   Normal 0.000 1.000 1.000 1.000 1.000 1.000 "
	"1.000 1.000 1.000 1.000 1.000 \n";
static const char *const example_extfrag =
	"Node 0, zone   Normal -1.000  0.500  0.750  0.875  0.937  0.968 "
	" 0.984  0.992  0.996  0.998  0.999 \n";

static void live(void *arg)
{
	struct zone *z = &zone_normal;
	struct page *blocks[4];
	int n = 0;

	(void)arg;
	KT_ASSERT_EQ(kmem_init("mem=16M"), 0);

	char *u = kt_read("/sys/kernel/debug/extfrag/unusable_index", NULL);
	char *e = kt_read("/sys/kernel/debug/extfrag/extfrag_index", NULL);
	/* Fresh: all 4096 pages free in four MAX_PAGE_ORDER blocks. */
	KT_ASSERT_STREQ(u, "Node 0, zone   Normal 0.000 0.000 0.000 0.000 0.000 0.000 "
			   "0.000 0.000 0.000 0.000 0.000 \n");
	KT_ASSERT_STREQ(e, "Node 0, zone   Normal -1.000 -1.000 -1.000 -1.000 -1.000 -1.000 "
			   "-1.000 -1.000 -1.000 -1.000 -1.000 \n");
	free(u);
	free(e);

	kmem_lock(&z->lock);
	struct page *p;
	while (n < 4 && (p = __rmqueue(z, MAX_PAGE_ORDER, MIGRATE_MOVABLE)) != NULL) {
		page_clear_flag(p, PG_reported);
		blocks[n++] = p;
	}
	bool empty = global_zone_page_state(NR_FREE_PAGES) == 0;
	for (int b = 0; b < 2 && b < n; b++)
		for (unsigned long i = 0; i < MAX_ORDER_NR_PAGES; i += 2)
			__free_one_page(blocks[b] + i, page_to_pfn(blocks[b] + i), z, 0,
					MIGRATE_MOVABLE, FPI_NONE);
	kmem_unlock(&z->lock);
	KT_ASSERT_EQ(n, 4);
	KT_ASSERT(empty);

	u = kt_read("/sys/kernel/debug/extfrag/unusable_index", NULL);
	e = kt_read("/sys/kernel/debug/extfrag/extfrag_index", NULL);
	char *b = kt_read("/proc/buddyinfo", NULL);
	KT_ASSERT_STREQ(b, "Node 0, zone   Normal   1024      0      0      0      0      0 "
			   "     0      0      0      0      0 \n");
	KT_ASSERT_STREQ(u, example_unusable);
	KT_ASSERT_STREQ(e, example_extfrag);
	free(u);
	free(e);
	free(b);

	/* Give everything back: the odd pages merge it all up again. */
	kmem_lock(&z->lock);
	for (int i = 0; i < 2; i++)
		for (unsigned long j = 1; j < MAX_ORDER_NR_PAGES; j += 2)
			__free_one_page(blocks[i] + j, page_to_pfn(blocks[i] + j), z, 0,
					MIGRATE_MOVABLE, FPI_NONE);
	for (int i = 2; i < 4; i++)
		__free_one_page(blocks[i], page_to_pfn(blocks[i]), z, MAX_PAGE_ORDER,
				MIGRATE_MOVABLE, FPI_NONE);
	kmem_unlock(&z->lock);
	struct mm_check_result r;
	KT_ASSERT_EQ(mm_check(&r), 0);
	KT_ASSERT_EQ(r.nr_free[MAX_PAGE_ORDER], 4);
	e = kt_read("/sys/kernel/debug/extfrag/extfrag_index", NULL);
	KT_ASSERT_CONTAINS(e, "Normal -1.000 -1.000");
	free(e);
}

KTEST(live_files)
{
	KT_ASSERT_CHILD_OK(kt_fork(live, NULL));
}

KTEST_MAIN((void)0)
