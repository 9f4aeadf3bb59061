// SPDX-License-Identifier: MIT
/*
 * /proc/slabinfo on SLAB under each slab.layout= (run as test_slab_objperslab
 * with the final kernel's rules and as its @2013, @2013-prev and
 * @2013-before variants): the objsize and objperslab columns of the caches
 * in the tables of the SLAB byte-sized freelist index patchset (Kim 2013),
 * kmalloc-32 ... kmalloc-512 and a 192-byte cache-line aligned cache
 * standing in for kmem_cache, must be the patch's; under the final rules,
 * the last mm/slab.c's (124 kmalloc-32 objects with the index on the slab,
 * 64 kmalloc-64 objects with the index in a free object).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "slab/slab/slab_priv.h"

#include "ktest.h"
#include "lib/kt_util.h"
#include "lib/slab_test.h"

static const char *const names[] = {
	"kmalloc-512", "kmalloc-256", "kmalloc-192", "kmalloc-96", "kmalloc-64", "kmalloc-128",
	"kmalloc-32", "kmem_cache",
};
#define NR (sizeof(names) / sizeof(names[0]))

/* objsize, objperslab by layout (slab_layout_rules order), the patch's row order. */
static const unsigned int want[NR_SLAB_LAYOUTS][NR][2] = {
	[SLAB_LAYOUT_FINAL] = { { 512, 8 }, { 256, 16 }, { 192, 21 }, { 128, 32 }, { 64, 64 },
				{ 128, 32 }, { 32, 124 }, { 192, 21 } },
	/* "My previous posting + this patchset" */
	[SLAB_LAYOUT_2013] = { { 512, 8 }, { 256, 16 }, { 192, 21 }, { 128, 31 }, { 64, 63 },
			       { 128, 31 }, { 32, 124 }, { 192, 21 } },
	/* "After my previous posting (overload struct slab over struct page)" */
	[SLAB_LAYOUT_2013_PREV] = { { 512, 8 }, { 256, 15 }, { 192, 20 }, { 128, 31 }, { 64, 60 },
				    { 128, 31 }, { 32, 113 }, { 192, 20 } },
	/* "Before" */
	[SLAB_LAYOUT_2013_BEFORE] = { { 512, 8 }, { 256, 15 }, { 192, 20 }, { 128, 30 }, { 64, 59 },
				      { 128, 30 }, { 32, 112 }, { 192, 20 } },
};

KTEST(objperslab_is_the_patchs)
{
	KT_ASSERT_STREQ(slab_test_backend(), "slab");
	struct kmem_cache *kc = kmem_cache_create("kmem_cache", 192, 0, SLAB_HWCACHE_ALIGN | SLAB_NO_MERGE, NULL);
	KT_ASSERT(kc);
	char *all = kt_read_checked("/proc/slabinfo");
	KT_ASSERT(all);
	printf("slab.layout=%s:\n", slab_layout_names[slab_bk_layout]);
	for (unsigned int i = 0; i < NR; i++) {
		char key[64];
		snprintf(key, sizeof(key), "\n%s ", names[i]);
		char *line = strstr(all, key);
		if (!line) {
			KT_FAIL("no %s line", names[i]);
			continue;
		}
		line++;
		unsigned long active, num;
		unsigned int objsize, per;
		char name[64];
		KT_ASSERT(sscanf(line, "%63s %lu %lu %u %u", name, &active, &num, &objsize, &per) == 5);
		printf("  %.*s\n", (int)strcspn(line, "\n"), line);
		if (objsize != want[slab_bk_layout][i][0] || per != want[slab_bk_layout][i][1])
			KT_FAIL("%s: objsize %u objperslab %u, the table: %u %u", names[i], objsize, per,
				want[slab_bk_layout][i][0], want[slab_bk_layout][i][1]);
	}
	free(all);
	/* The caches work under the layout: objects distinct, contents kept. */
	KT_EXPECT(slab_cache_works(kc, 192));
	for (unsigned int size = 32; size <= 512; size *= 2) {
		void *p[300];
		for (int i = 0; i < 300; i++) {
			p[i] = kmalloc(size, GFP_KERNEL);
			KT_ASSERT(p[i]);
			memset(p[i], i, size);
		}
		KT_EXPECT(slab_disjoint(p, 300, size));
		for (int i = 0; i < 300; i++)
			kfree(p[i]);
	}
	KT_EXPECT(slab_bk_validate(kc) == 0);
	kmem_cache_destroy(kc);
}

KTEST_MAIN(if (slab_test_boot("mem=64M slab=slab")) return 1;)
