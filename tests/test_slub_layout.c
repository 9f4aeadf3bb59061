// SPDX-License-Identifier: MIT
/*
 * SLUB layout / order / kmalloc index checks.  The main oracle is the
 * /sys/kernel/slab dump of a Linux 6.18 kernel that ran with 2 cpus
 * (shared/data/linux-6.18/slub-sysfs.tsv); a missing data file is a failure.
 *
 * Data directory: $KMEM_SHARED_DIR if set, else KMEM_SOURCE_DIR/../shared
 * (the shared/ tree is checked out next to the repository).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slab/slub/slub_layout.h"

#include "lib/kernel_data.h"

#ifndef KMEM_SOURCE_DIR
#define KMEM_SOURCE_DIR "."
#endif

#define NR_CPUS_OF_DUMP 2

static unsigned int passed, failed;

#define CHECK(cond, ...)						\
	do {								\
		if (cond) {						\
			passed++;					\
		} else {						\
			failed++;					\
			printf("FAIL %s:%d: ", __FILE__, __LINE__);	\
			printf(__VA_ARGS__);				\
			putchar('\n');					\
		}							\
	} while (0)

#define CHECK_EQ(what, got, want)					\
	CHECK((unsigned long)(got) == (unsigned long)(want),		\
	      "%s: got %lu, want %lu", what, (unsigned long)(got),	\
	      (unsigned long)(want))

/* ---------------------------------------------------------------------- */

static const char *const want_cols[] = {
	"cache", "object_size", "slab_size", "align", "order", "objs_per_slab",
	"min_partial", "cpu_partial", "hwcache_align", "red_zone", "poison",
	"store_user", "destroy_by_rcu", "reclaim_account", "sheaf_capacity",
};
enum { C_NAME, C_OBJSZ, C_SLABSZ, C_ALIGN, C_ORDER, C_OBJS, C_MINPART,
       C_CPUPART, C_HWC, C_RZ, C_POISON, C_SU, C_RCU, C_RECL, C_SHEAF, NCOL };

static int try_layout(unsigned int osz, unsigned int align, slab_flags_t fl,
		      bool ctor, int fpo, struct slub_layout *l)
{
	struct slab_order_params p = SLAB_ORDER_PARAMS_DEFAULT(NR_CPUS_OF_DUMP);

	return slub_calculate_layout_ext(osz, align, fl, ctor, fpo, &p, l);
}

static void check_kernel_rows(void)
{
	char path[4096], line[1024], *f[64];
	int col[NCOL], nf, i, j;
	unsigned int rows = 0, checked = 0, skipped = 0, ctors = 0, fpos = 0;
	FILE *fp = kt_open_shared(KT_SLUB_SYSFS_TSV, path, sizeof(path));

	if (!fp) {
		failed++;
		return;
	}
	if (!fgets(line, sizeof(line), fp)) {
		CHECK(0, "%s: empty file", path);
		fclose(fp);
		return;
	}
	/* Map columns by header name so a reordered dump still works. */
	nf = kt_split_tabs(line, f, 64);
	for (i = 0; i < NCOL; i++) {
		col[i] = -1;
		for (j = 0; j < nf; j++)
			if (!strcmp(f[j], want_cols[i]))
				col[i] = j;
		if (col[i] < 0) {
			CHECK(0, "%s: no column %s", path, want_cols[i]);
			fclose(fp);
			return;
		}
	}

	while (fgets(line, sizeof(line), fp)) {
		unsigned long v[NCOL];
		const char *name;
		struct slub_layout l;
		slab_flags_t fl = 0;
		int fpo = SLUB_NO_FREEPTR_OFFSET, ret;
		bool ctor = false;

		if (line[0] == '\n' || line[0] == '\0')
			continue;
		nf = kt_split_tabs(line, f, 64);
		rows++;
		for (i = 0; i < NCOL; i++)
			v[i] = col[i] < nf ? strtoul(f[col[i]], NULL, 10) : 0;
		name = f[col[C_NAME]];

		/* Debug caches carry metadata we cannot size exactly here. */
		if (v[C_RZ] || v[C_POISON] || v[C_SU]) {
			skipped++;
			continue;
		}
		if (v[C_HWC])
			fl |= SLAB_HWCACHE_ALIGN;
		if (v[C_RCU])
			fl |= SLAB_TYPESAFE_BY_RCU;
		if (v[C_RECL])
			fl |= SLAB_RECLAIM_ACCOUNT;

		/*
		 * sysfs "align" is the final value after calculate_alignment(),
		 * and "object_size" of a merged (':') cache is the largest of
		 * its users.  Feeding both back in is sound: the final align is
		 * already >= the hwcache alignment of any object that fits the
		 * slot, so recomputing it is a no-op, which we check here.
		 */
		CHECK_EQ(name, calculate_alignment(fl, (unsigned int)v[C_ALIGN],
						   (unsigned int)v[C_OBJSZ]),
			 v[C_ALIGN]);

		ret = try_layout((unsigned int)v[C_OBJSZ], (unsigned int)v[C_ALIGN],
				 fl, false, fpo, &l);
		/*
		 * The dump has no ctor or freeptr_offset column.  When the slot
		 * is not what a plain cache would get, the only layout inputs
		 * left are those two, and they move the free pointer in opposite
		 * directions, so the inference is unambiguous:
		 *  - not RCU, slot bigger: the cache has a ctor, whose free
		 *    pointer goes after the object (inode caches' init_once,
		 *    radix_tree_node, ...).  Merged caches never have a ctor.
		 *  - RCU, slot smaller: the cache passed kmem_cache_args.
		 *    freeptr_offset (6.13+: filp, vm_area_struct), keeping the
		 *    pointer inside the object; the offset value does not change
		 *    the size, 0 stands in for it.
		 * Order, objs_per_slab, min_partial and cpu_partial are still
		 * checked independently for these rows.
		 */
		if (!ret && l.size != v[C_SLABSZ]) {
			struct slub_layout alt;

			if (!v[C_RCU] && name[0] != ':' &&
			    !try_layout((unsigned int)v[C_OBJSZ], (unsigned int)v[C_ALIGN],
					fl, true, fpo, &alt) &&
			    alt.size == v[C_SLABSZ]) {
				ctor = true;
				ctors++;
			} else if (v[C_RCU] &&
				   !try_layout((unsigned int)v[C_OBJSZ],
					       (unsigned int)v[C_ALIGN], fl, false, 0,
					       &alt) && alt.size == v[C_SLABSZ]) {
				fpo = 0;
				fpos++;
			}
			if (ctor || fpo >= 0) {
				printf("info: %s: inferred %s\n", name,
				       ctor ? "ctor" : "freeptr_offset");
				l = alt;
			}
		}
		checked++;
		CHECK(ret == 0, "%s: layout failed: %d", name, ret);
		if (ret)
			continue;
		CHECK(l.size == v[C_SLABSZ] && l.order == v[C_ORDER] &&
		      l.objects == v[C_OBJS] && l.align == v[C_ALIGN],
		      "%s (obj %lu align %lu%s%s%s): slab_size %u/%lu order %u/%lu "
		      "objs %u/%lu align %u (got/kernel)", name, v[C_OBJSZ],
		      v[C_ALIGN], v[C_HWC] ? " hwc" : "", v[C_RCU] ? " rcu" : "",
		      v[C_RECL] ? " recl" : "", l.size, v[C_SLABSZ], l.order,
		      v[C_ORDER], l.objects, v[C_OBJS], l.align);
		CHECK(slub_min_partial(l.size) == v[C_MINPART],
		      "%s: min_partial %u, kernel %lu", name,
		      slub_min_partial(l.size), v[C_MINPART]);
		/*
		 * cpu_partial: in 6.18 sheaves are opt-in and sit in front of
		 * the still-present per-cpu slab and partial lists, so a sheaf
		 * cache (maple_node, vm_area_struct: sheaf_capacity 32) keeps
		 * the default cpu_partial -- the dump shows 52 and 120.  It is
		 * only the post-6.18 tree, which removed per-cpu partial lists,
		 * where sysfs reads 0.  No debug rows remain here, so every row
		 * gets the size-based default.
		 */
		CHECK(slub_default_cpu_partial(l.size) == v[C_CPUPART],
		      "%s: cpu_partial %u, kernel %lu (sheaf_capacity %lu)", name,
		      slub_default_cpu_partial(l.size), v[C_CPUPART], v[C_SHEAF]);
	}
	fclose(fp);
	printf("kernel rows: %u read, %u checked (%u with inferred ctor, %u with "
	       "inferred freeptr_offset), %u debug rows skipped\n",
	       rows, checked, ctors, fpos, skipped);
	CHECK(checked > 0, "no kernel rows checked in %s", path);
}

/* ---------------------------------------------------------------------- */

static void check_kmalloc(void)
{
	static const unsigned int buckets[] = {
		8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192,
	};
	unsigned int bad_idx = 0, bad_fast = 0, bad_round = 0, i;
	char want[32];
	size_t s;

	CHECK_EQ("kmalloc_index(0)", kmalloc_index(0), 0);
	CHECK_EQ("KMALLOC_MAX_CACHE_SIZE", KMALLOC_MAX_CACHE_SIZE, 8192);
	CHECK_EQ("KMALLOC_MAX_SIZE", KMALLOC_MAX_SIZE, 4UL << 20);

	for (s = 1; s <= 8192; s++) {
		unsigned int b = 0, idx = kmalloc_index(s);

		while (buckets[b] < s)		/* naive: first bucket that fits */
			b++;
		if (kmalloc_index_size(idx) != buckets[b] && bad_idx++ < 5)
			printf("FAIL kmalloc_index(%zu) = %u (size %u), want bucket %u\n",
			       s, idx, kmalloc_index_size(idx), buckets[b]);
		if (kmalloc_slab_index(s) != idx && bad_fast++ < 5)
			printf("FAIL kmalloc_slab_index(%zu) = %u, kmalloc_index %u\n",
			       s, kmalloc_slab_index(s), idx);
		if (kmalloc_size_roundup(s) != buckets[b] && bad_round++ < 5)
			printf("FAIL kmalloc_size_roundup(%zu) = %zu, want %u\n",
			       s, kmalloc_size_roundup(s), buckets[b]);
	}
	CHECK(!bad_idx, "kmalloc_index: %u sizes wrong", bad_idx);
	CHECK(!bad_fast, "kmalloc_slab_index: %u sizes wrong", bad_fast);
	CHECK(!bad_round, "kmalloc_size_roundup: %u sizes wrong", bad_round);

	for (i = 0; i < sizeof(buckets) / sizeof(buckets[0]); i++) {
		unsigned int idx = kmalloc_index(buckets[i]);
		const char *name = kmalloc_index_name(idx);

		if (buckets[i] >= 1024)
			snprintf(want, sizeof(want), "kmalloc-%uk", buckets[i] >> 10);
		else
			snprintf(want, sizeof(want), "kmalloc-%u", buckets[i]);
		CHECK(name && !strcmp(name, want), "name of index %u: %s, want %s",
		      idx, name ? name : "(null)", want);
	}
	CHECK_EQ("kmalloc_index(96)", kmalloc_index(96), 1);
	CHECK_EQ("kmalloc_index(192)", kmalloc_index(192), 2);
	CHECK_EQ("kmalloc_index(8192)", kmalloc_index(8192), 13);
	CHECK(kmalloc_index_name(0) == NULL, "no name for index 0");
	CHECK(kmalloc_index_name(KMALLOC_SHIFT_HIGH + 1) == NULL, "no name > high");
	CHECK_EQ("kmalloc_index_size(14)", kmalloc_index_size(14), 0);

	CHECK_EQ("roundup(0)", kmalloc_size_roundup(0), 0);
	CHECK_EQ("roundup(8193)", kmalloc_size_roundup(8193), 16384);
	CHECK_EQ("roundup(12289)", kmalloc_size_roundup(12289), 16384);
	CHECK_EQ("roundup(4M)", kmalloc_size_roundup(4UL << 20), 4UL << 20);
	CHECK_EQ("roundup(4M+1)", kmalloc_size_roundup((4UL << 20) + 1),
		 (4UL << 20) + 1);
}

static void check_units(void)
{
	struct slab_order_params p8 = SLAB_ORDER_PARAMS_DEFAULT(8);
	struct slab_order_params p = SLAB_ORDER_PARAMS_DEFAULT(2);
	struct slub_layout l;
	int ret;

	/* Reference worked example: 8 cpus, 256-byte slot -> order 1, 32 objs. */
	ret = slub_calculate_layout(256, 8, 0, false, &p8, &l);
	CHECK(ret == 0 && l.size == 256 && l.order == 1 && l.objects == 32 &&
	      l.min_order == 0 && l.min_objects == 16,
	      "worked example: ret %d size %u order %u objs %u min %u/%u",
	      ret, l.size, l.order, l.objects, l.min_order, l.min_objects);

	CHECK_EQ("hwcache align 20", calculate_alignment(SLAB_HWCACHE_ALIGN, 0, 20), 32);
	CHECK_EQ("hwcache align 100", calculate_alignment(SLAB_HWCACHE_ALIGN, 0, 100), 64);
	CHECK_EQ("hwcache align 4", calculate_alignment(SLAB_HWCACHE_ALIGN, 0, 4), 8);
	CHECK_EQ("align 4 -> word", calculate_alignment(0, 4, 100), 8);
	CHECK_EQ("align 256", calculate_alignment(SLAB_HWCACHE_ALIGN, 256, 100), 256);

	/* Plain cache: free pointer mid-object, word aligned. */
	ret = slub_calculate_layout(100, 0, 0, false, &p, &l);
	CHECK(ret == 0 && l.size == 104 && l.inuse == 104 && l.offset == 48,
	      "plain 100: size %u inuse %u offset %u", l.size, l.inuse, l.offset);
	ret = slub_calculate_layout(100, 0, 0, true, &p, &l);
	CHECK(ret == 0 && l.size == 112 && l.offset == 104,
	      "ctor 100: size %u offset %u", l.size, l.offset);

	/* Full debug: 32 + rz word 8 + fp 8 + 2 tracks + guard 8 + left pad 8. */
	ret = slub_calculate_layout(32, 0, SLAB_RED_ZONE | SLAB_POISON |
				    SLAB_STORE_USER, false, &p, &l);
	CHECK(ret == 0 && l.inuse == 40 && l.offset == 40 && l.red_left_pad == 8 &&
	      l.size == 64 + 2 * SLUB_TRACK_SIZE,
	      "debug 32: inuse %u offset %u pad %u size %u",
	      l.inuse, l.offset, l.red_left_pad, l.size);
	/* kmalloc + store_user adds orig_size and moves the free pointer out. */
	ret = slub_calculate_layout(64, 64, SLAB_KMALLOC | SLAB_RED_ZONE |
				    SLAB_STORE_USER, false, &p, &l);
	CHECK(ret == 0 && l.offset == 72 && l.red_left_pad == 64 &&
	      l.size == 256, "kmalloc debug 64: offset %u pad %u size %u",
	      l.offset, l.red_left_pad, l.size);
	/* Red zone on an object smaller than a pointer. */
	ret = slub_calculate_layout(4, 0, SLAB_RED_ZONE, false, &p, &l);
	CHECK(ret == 0 && l.inuse == 8 && l.offset == 8 && l.size == 32,
	      "rz 4: inuse %u offset %u size %u", l.inuse, l.offset, l.size);

	/* Bigger than max_order: fall back to get_order(size). */
	ret = slub_calculate_layout(51488, 16, 0, false, &p, &l);
	CHECK(ret == 0 && l.order == 4 && l.objects == 1, "51488: order %u objs %u",
	      l.order, l.objects);
	/* Forced high min order on tiny objects: 32767-object cap. */
	p.min_order = 10;
	ret = slub_calculate_layout(8, 0, 0, false, &p, &l);
	CHECK(ret == 0 && l.order == 5 && l.objects == 16384,
	      "min_order 10 size 8: order %u objs %u", l.order, l.objects);
	p.min_order = 0;
	p.max_order = 0;	/* debug_guardpage_minorder-style */
	ret = slub_calculate_layout(3000, 0, 0, false, &p, &l);
	CHECK(ret == 0 && l.order == 0 && l.objects == 1, "max_order 0: %u/%u",
	      l.order, l.objects);
	p = SLAB_ORDER_PARAMS_DEFAULT(2);

	CHECK_EQ("size 0", slub_calculate_layout(0, 0, 0, false, &p, &l), -EINVAL);
	CHECK_EQ("too big", slub_calculate_layout(5U << 20, 0, 0, false, &p, &l),
		 -EINVAL);
	CHECK_EQ("align 24", slub_calculate_layout(64, 24, 0, false, &p, &l), -EINVAL);
	CHECK_EQ("fpo w/o rcu", slub_calculate_layout_ext(64, 0, 0, false, 8, &p, &l),
		 -EINVAL);
	ret = slub_calculate_layout_ext(64, 0, SLAB_TYPESAFE_BY_RCU, false, 16, &p, &l);
	CHECK(ret == 0 && l.offset == 16 && l.size == 64, "rcu fpo: %u %u",
	      l.offset, l.size);

	CHECK_EQ("min_partial 64", slub_min_partial(64), 5);
	CHECK_EQ("min_partial 4096", slub_min_partial(4096), 6);
	CHECK_EQ("min_partial 1M", slub_min_partial(1U << 20), 10);
	CHECK_EQ("cpu_partial 8", slub_default_cpu_partial(8), 120);
	CHECK_EQ("cpu_partial 256", slub_default_cpu_partial(256), 52);
	CHECK_EQ("cpu_partial 1024", slub_default_cpu_partial(1024), 24);
	CHECK_EQ("cpu_partial 4096", slub_default_cpu_partial(4096), 6);
	CHECK(!slub_has_cpu_partial(SLAB_POISON) && slub_has_cpu_partial(SLAB_HWCACHE_ALIGN),
	      "slub_has_cpu_partial");
	CHECK_EQ("partial slabs 52/16", slub_cpu_partial_slabs(52, 16), 7);
	CHECK_EQ("partial slabs 52/32", slub_cpu_partial_slabs(52, 32), 4);
	CHECK_EQ("partial slabs 120/512", slub_cpu_partial_slabs(120, 512), 1);
	CHECK_EQ("partial slabs 6/1", slub_cpu_partial_slabs(6, 1), 12);
	CHECK_EQ("partial slabs 0", slub_cpu_partial_slabs(0, 16), 0);

	CHECK(oo_order(oo_make(3, 4096)) == 3 && oo_objects(oo_make(3, 4096)) == 8,
	      "oo_make/oo_order/oo_objects");
}

int main(void)
{
	check_units();
	check_kmalloc();
	check_kernel_rows();
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
