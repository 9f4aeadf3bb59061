// SPDX-License-Identifier: MIT
/*
 * The layout oracle on live caches.  tests/test_slub_layout.c checks the
 * pure layout functions against the /sys/kernel/slab dump of a 2-cpu Linux
 * 6.18 (shared/data/linux-6.18/slub-sysfs.tsv); here every non-debug row of
 * that dump becomes a real cache, created through kmem_cache_create() in a
 * kmem booted with "mem=256M nr_cpus=2", and the live struct kmem_cache must
 * say what the kernel's sysfs said: slab_size, order, objs_per_slab,
 * min_partial, cpu_partial and align.  Then objs_per_slab + 1 objects must
 * come from exactly two slabs of that order, and go back cleanly.
 *
 * Rows are created with SLAB_NO_MERGE (so none is aliased to an earlier
 * row), the row's hwcache/rcu/reclaim flags, its final alignment as the
 * align argument (idempotent, see test_slub_layout.c) and a dummy ctor where
 * test_slub_layout.c infers one.  The rows with a kmem_cache_args.
 * freeptr_offset (RCU caches whose slot is smaller than a plain RCU cache's:
 * vm_area_struct in this dump) are skipped: kmem_cache_create() has no way
 * to pass a free pointer offset.
 *
 * SLUB-specific (the dump is SLUB's): with another back-end it exits 77.
 * Data: $KMEM_SHARED_DIR if set, else KMEM_SOURCE_DIR/../shared.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "core/printk.h"
#include "slab/slab.h"
#include "slab/slub/slub.h"

#include "ktest.h"
#include "lib/kernel_data.h"
#include "lib/slab_test.h"

#ifndef KMEM_SOURCE_DIR
#define KMEM_SOURCE_DIR "."
#endif

#define NR_CPUS_OF_DUMP 2

static const char *const want_cols[] = {
	"cache", "object_size", "slab_size", "align", "order", "objs_per_slab",
	"min_partial", "cpu_partial", "hwcache_align", "red_zone", "poison",
	"store_user", "destroy_by_rcu", "reclaim_account",
};
enum { C_NAME, C_OBJSZ, C_SLABSZ, C_ALIGN, C_ORDER, C_OBJS, C_MINPART,
       C_CPUPART, C_HWC, C_RZ, C_POISON, C_SU, C_RCU, C_RECL, NCOL };

static void dummy_ctor(void *p)
{
	(void)p;
}

static int plain_layout(unsigned int osz, unsigned int align, slab_flags_t fl, bool ctor,
			int fpo, struct slub_layout *l)
{
	struct slab_order_params p = SLAB_ORDER_PARAMS_DEFAULT(NR_CPUS_OF_DUMP);

	return slub_calculate_layout_ext(osz, align, fl, ctor, fpo, &p, l);
}

struct row_result {
	unsigned int checked, ctors, skipped_debug, skipped_fpo;
};

/* One row: create, compare, allocate objs + 1, free, destroy.  0 if it matched. */
static int check_row(unsigned int rowno, const char *kname, const unsigned long *v,
		     struct row_result *res)
{
	slab_flags_t fl = 0;
	bool ctor = false;
	struct slub_layout l;

	if (v[C_HWC])
		fl |= SLAB_HWCACHE_ALIGN;
	if (v[C_RCU])
		fl |= SLAB_TYPESAFE_BY_RCU;
	if (v[C_RECL])
		fl |= SLAB_RECLAIM_ACCOUNT;

	/* The same inference as test_slub_layout.c: no ctor / freeptr_offset column. */
	if (!plain_layout((unsigned int)v[C_OBJSZ], (unsigned int)v[C_ALIGN], fl, false,
			  SLUB_NO_FREEPTR_OFFSET, &l) && l.size != v[C_SLABSZ]) {
		struct slub_layout alt;
		if (!v[C_RCU] && kname[0] != ':' &&
		    !plain_layout((unsigned int)v[C_OBJSZ], (unsigned int)v[C_ALIGN], fl, true,
				  SLUB_NO_FREEPTR_OFFSET, &alt) && alt.size == v[C_SLABSZ]) {
			ctor = true;
			res->ctors++;
		} else if (v[C_RCU]) {
			/* kmem_cache_args.freeptr_offset (vm_area_struct): not expressible here. */
			fprintf(stderr, "  skip %s: freeptr_offset cache\n", kname);
			res->skipped_fpo++;
			return 0;
		}
	}

	char name[KMEM_CACHE_NAME_MAX];
	snprintf(name, sizeof(name), "live%03u-%.50s", rowno, kname[0] == ':' ? kname + 1 : kname);
	for (char *c = name; *c; c++)
		if (*c == '/' || *c == ' ')
			*c = '_';

	unsigned long reports = kmem_report_count();
	struct kmem_cache *s = kmem_cache_create(name, (unsigned int)v[C_OBJSZ],
						 (unsigned int)v[C_ALIGN], fl | SLAB_NO_MERGE,
						 ctor ? dummy_ctor : NULL);
	if (!s) {
		KT_FAIL("%s: kmem_cache_create failed", kname);
		return 1;
	}
	res->checked++;
	int bad = 0;
	if (s->size != v[C_SLABSZ] || oo_order(slub_of(s)->oo) != v[C_ORDER] ||
	    oo_objects(slub_of(s)->oo) != v[C_OBJS] || slub_of(s)->min_partial != v[C_MINPART] ||
	    slub_of(s)->cpu_partial != v[C_CPUPART] || s->align != v[C_ALIGN] ||
	    s->object_size != v[C_OBJSZ]) {
		KT_FAIL("%s%s: slab_size %u/%lu order %u/%lu objs %u/%lu min_partial %lu/%lu "
			"cpu_partial %u/%lu align %u/%lu (live/kernel)", kname, ctor ? " (ctor)" : "",
			s->size, v[C_SLABSZ], oo_order(slub_of(s)->oo), v[C_ORDER], oo_objects(slub_of(s)->oo),
			v[C_OBJS], slub_of(s)->min_partial, v[C_MINPART], slub_of(s)->cpu_partial, v[C_CPUPART],
			s->align, v[C_ALIGN]);
		bad = 1;
	}

	/* objs_per_slab + 1 objects: the first slab fills up, the last one opens a second. */
	unsigned int n = oo_objects(slub_of(s)->oo) + 1;
	void **objs = calloc(n, sizeof(*objs));
	struct page *heads[2] = { NULL, NULL };
	unsigned int per_head[2] = { 0, 0 };
	for (unsigned int i = 0; i < n; i++) {
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
		if (!objs[i]) {
			KT_FAIL("%s: allocation %u of %u failed", kname, i, n);
			bad = 1;
			n = i;
			break;
		}
		memset(objs[i], 0x5a, s->object_size);
		struct page *head = virt_to_head_page(objs[i]);
		int k = heads[0] == head ? 0 : heads[1] == head ? 1 : !heads[0] ? 0 : !heads[1] ? 1 : -1;
		if (k < 0) {
			KT_FAIL("%s: object %u is in a third slab", kname, i);
			bad = 1;
			continue;
		}
		heads[k] = head;
		per_head[k]++;
		if (!PageSlab(head) || page_slab_cache(head) != s ||
		    compound_order(head) != oo_order(slub_of(s)->oo)) {
			KT_FAIL("%s: object %u: slab page of order %u (want %u), cache %s", kname, i,
				compound_order(head), oo_order(slub_of(s)->oo),
				PageSlab(head) ? page_slab_cache(head)->name : "(not a slab)");
			bad = 1;
		}
		if ((uintptr_t)objs[i] & (s->align - 1)) {
			KT_FAIL("%s: object %p not %u-aligned", kname, objs[i], s->align);
			bad = 1;
		}
	}
	if (!bad && (!heads[1] || per_head[0] != oo_objects(slub_of(s)->oo) || per_head[1] != 1)) {
		KT_FAIL("%s: %u objects came from slabs holding %u and %u (want %u and 1)", kname,
			n, per_head[0], per_head[1], oo_objects(slub_of(s)->oo));
		bad = 1;
	}
	for (unsigned int i = 0; i < n; i++)
		kmem_cache_free(s, objs[i]);
	free(objs);
	kmem_cache_destroy(s);
	if (kmem_report_count() != reports) {
		KT_FAIL("%s: %lu unexpected report(s)", kname, kmem_report_count() - reports);
		bad = 1;
	}
	return bad;
}

KTEST(kernel_rows_on_live_caches)
{
	char path[4096], line[1024], *f[64];
	int col[NCOL];
	struct row_result res = { 0 };
	unsigned int rows = 0, bad = 0;
	FILE *fp = kt_open_shared(KT_SLUB_SYSFS_TSV, path, sizeof(path));

	if (!fp) {
		KT_FAIL("cannot open kernel data %s: %s (set KMEM_SHARED_DIR)", path, strerror(errno));
		return;
	}
	if (!fgets(line, sizeof(line), fp)) {
		fclose(fp);
		KT_FAIL("%s: empty", path);
		return;
	}
	int nf = kt_split_tabs(line, f, 64);
	for (int i = 0; i < NCOL; i++) {
		col[i] = -1;
		for (int j = 0; j < nf; j++)
			if (!strcmp(f[j], want_cols[i]))
				col[i] = j;
		if (col[i] < 0) {
			fclose(fp);
			KT_FAIL("%s: no column %s", path, want_cols[i]);
			return;
		}
	}
	while (fgets(line, sizeof(line), fp)) {
		unsigned long v[NCOL];
		if (line[0] == '\n' || line[0] == '\0')
			continue;
		nf = kt_split_tabs(line, f, 64);
		rows++;
		for (int i = 0; i < NCOL; i++)
			v[i] = col[i] < nf ? strtoul(f[col[i]], NULL, 10) : 0;
		if (v[C_RZ] || v[C_POISON] || v[C_SU]) {	/* debug caches: slab_debug comes later */
			res.skipped_debug++;
			continue;
		}
		bad += (unsigned int)check_row(rows, f[col[C_NAME]], v, &res);
	}
	fclose(fp);
	fprintf(stderr, "  %u rows: %u live caches checked (%u with a ctor), %u debug rows and "
		"%u freeptr_offset rows skipped, %u mismatched\n", rows, res.checked, res.ctors,
		res.skipped_debug, res.skipped_fpo, bad);
	KT_EXPECT(res.checked > 100);
	KT_EXPECT(res.skipped_fpo <= 2);
}

KTEST_MAIN(
	if (slab_test_boot("mem=256M nr_cpus=2 slub_sheaves=0")) return 1;
	if (!slab_test_is_slub()) {
		printf("layout oracle is SLUB's; back-end %s: skipped\n", slab_test_backend());
		return 77;
	}
)
