// SPDX-License-Identifier: MIT
/*
 * Exact formats of the page allocator's virtual files.
 *
 * Oracle 1, the kernel itself: /proc/buddyinfo and /proc/pagetypeinfo of a
 * Linux 6.18 machine (shared/data/linux-6.18/) are parsed into one struct
 * zone_info per zone (DMA, DMA32, Normal), and our renderers must give back
 * the kernel's lines byte for byte; the fixed header lines of our live
 * /proc/pagetypeinfo must equal the kernel's.
 *
 * Oracle 2, the kernel's formulas: on a machine whose state the test
 * controls (mem=64M nr_cpus=2, then one order-0 allocation), every file's
 * full text is known: buddyinfo, pagetypeinfo, zoneinfo (watermarks from
 * min_free_kbytes = int_sqrt(65536 * 16) = 1024, pcp batch/high from
 * zone_batchsize/zone_highsize), vmstat, the extfrag files, the sysctls --
 * and a sysctl write must change them as the kernel's would.
 *
 * (kmem_read()'s truncation, listings and errors: test_procfs_access.c.)
 * Data directory: $KMEM_SHARED_DIR, else KMEM_SOURCE_DIR/../shared.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmem.h>

#include "introspect/proc_mm.h"
#include "page_alloc/mm.h"

#include "lib/kt_util.h"
#include "lib/mm_check.h"
#include "ktest.h"
#include "lib/slab_test.h"

#ifndef KMEM_SOURCE_DIR
#define KMEM_SOURCE_DIR "."
#endif

/* ---- the kernel's files ---------------------------------------------- */

static char *slurp_kernel_file(const char *name)
{
	const char *env = getenv("KMEM_SHARED_DIR");
	char path[1024];

	if (env && *env)
		snprintf(path, sizeof(path), "%s/data/linux-6.18/%s", env, name);
	else
		snprintf(path, sizeof(path), "%s/../shared/data/linux-6.18/%s", KMEM_SOURCE_DIR, name);
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "  cannot open kernel data %s: %s (set KMEM_SHARED_DIR)\n",
			path, strerror(errno));
		return NULL;
	}
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strdup(buf);
}

#define MAX_ZONES 4

struct kzone {
	char name[16];
	struct zone_info zi;
	char free_lines[1024];		/* the zone's 5 "Node    0, zone ..., type" lines */
	char block_line[600];
	char buddy_line[600];
};

static struct kzone kzones[MAX_ZONES];
static int nr_kzones;

static struct kzone *kzone(const char *name)
{
	for (int i = 0; i < nr_kzones; i++)
		if (!strcmp(kzones[i].name, name))
			return &kzones[i];
	if (nr_kzones == MAX_ZONES)
		return NULL;
	struct kzone *k = &kzones[nr_kzones++];
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->zi.name = k->name;
	k->zi.pb_order = 9;
	return k;
}

static int mt_index(const char *name)
{
	for (int mt = 0; mt < ZI_MIGRATE_TYPES; mt++)
		if (!strcmp(migratetype_names[mt], name))
			return mt;
	return -1;
}

/* Parse up to NR_PAGE_ORDERS counts ("   12 >100000 ..."); returns how many. */
static int parse_counts(const char *p, unsigned long *out, int max)
{
	int n = 0;

	while (n < max) {
		while (*p == ' ' || *p == '>')
			p++;
		if (!isdigit((unsigned char)*p))
			break;
		out[n++] = strtoul(p, (char **)&p, 10);
	}
	return n;
}

static char *kbuddy, *kpti;	/* the kernel's files */

static bool load_kernel_files(void)
{
	if (kbuddy)
		return true;
	kbuddy = slurp_kernel_file("buddyinfo.txt");
	kpti = slurp_kernel_file("pagetypeinfo.txt");
	if (!kbuddy || !kpti)
		return false;

	char line[512], name[16], type[16];
	int node;
	for (int i = 0; kt_line(kbuddy, i, line, sizeof(line)) == 0; i++) {
		if (sscanf(line, "Node %d, zone %15s", &node, name) != 2)
			continue;
		struct kzone *k = kzone(name);
		k->zi.node = node;
		const char *nums = strstr(line, name) + strlen(name);
		if (parse_counts(nums, k->zi.nr_free, NR_PAGE_ORDERS) != NR_PAGE_ORDERS)
			return false;
		snprintf(k->buddy_line, sizeof(k->buddy_line), "%s\n", line);
	}
	for (int i = 0; kt_line(kpti, i, line, sizeof(line)) == 0; i++) {
		if (strncmp(line, "Node", 4))
			continue;
		if (sscanf(line, "Node %d, zone %15[^,], type %15s", &node, name, type) == 3) {
			struct kzone *k = kzone(name);
			int mt = mt_index(type);
			if (!k || mt < 0)
				return false;
			const char *nums = strstr(line, type) + strlen(type);
			if (parse_counts(nums, k->zi.nr_free_mt[mt], NR_PAGE_ORDERS) != NR_PAGE_ORDERS)
				return false;
			strcat(k->free_lines, line);
			strcat(k->free_lines, "\n");
		} else if (sscanf(line, "Node %d, zone %15s", &node, name) == 2) {
			struct kzone *k = kzone(name);
			const char *nums = strstr(line, name) + strlen(name);
			if (!k || parse_counts(nums, k->zi.nr_blocks_mt, ZI_MIGRATE_TYPES) !=
				  ZI_MIGRATE_TYPES)
				return false;
			snprintf(k->block_line, sizeof(k->block_line), "%s\n", line);
		}
	}
	return nr_kzones == 3;
}

static void render(void (*fn)(struct seq_buf *, const struct zone_info *),
		   const struct zone_info *zi, char *buf, size_t size)
{
	struct seq_buf s = { .buf = buf, .size = size };

	fn(&s, zi);
	seq_finish(&s);
}

KTEST(kernel_files_parse)
{
	KT_ASSERT(load_kernel_files());
	KT_ASSERT_STREQ(kzones[0].name, "DMA");
	KT_ASSERT_STREQ(kzones[1].name, "DMA32");
	KT_ASSERT_STREQ(kzones[2].name, "Normal");
	/* The kernel's two files agree: per-type counts sum to buddyinfo's. */
	for (int z = 0; z < nr_kzones; z++)
		for (int o = 0; o < NR_PAGE_ORDERS; o++) {
			unsigned long sum = 0;
			for (int mt = 0; mt < ZI_MIGRATE_TYPES; mt++)
				sum += kzones[z].zi.nr_free_mt[mt][o];
			KT_ASSERT_EQ(sum, kzones[z].zi.nr_free[o]);
		}
	KT_ASSERT_EQ(kzones[2].zi.nr_free[0], 148);
	KT_ASSERT_EQ(kzones[1].zi.nr_free[10], 752);
	KT_ASSERT_EQ(kzones[2].zi.nr_blocks_mt[MIGRATE_MOVABLE], 555);
}

KTEST(render_buddyinfo_matches_kernel)
{
	char buf[512];

	KT_ASSERT(load_kernel_files());
	for (int z = 0; z < nr_kzones; z++) {
		render(render_buddyinfo, &kzones[z].zi, buf, sizeof(buf));
		KT_ASSERT_STREQ(buf, kzones[z].buddy_line);
	}
}

KTEST(render_pagetypeinfo_matches_kernel)
{
	char buf[2048];

	KT_ASSERT(load_kernel_files());
	for (int z = 0; z < nr_kzones; z++) {
		render(render_pagetypeinfo_free, &kzones[z].zi, buf, sizeof(buf));
		KT_ASSERT_STREQ(buf, kzones[z].free_lines);
		render(render_pagetypeinfo_blocks, &kzones[z].zi, buf, sizeof(buf));
		KT_ASSERT_STREQ(buf, kzones[z].block_line);
	}
}

/* The kernel stops counting a free list at 100000 and prints ">100000". */
KTEST(pagetypeinfo_overflow_marker)
{
	struct zone_info zi = { .node = 0, .name = "Normal", .pb_order = 9 };
	char buf[2048], line[256];

	zi.nr_free_mt[MIGRATE_MOVABLE][0] = 99999;
	zi.nr_free_mt[MIGRATE_MOVABLE][1] = 100000;
	zi.nr_free_mt[MIGRATE_MOVABLE][2] = 2500000;
	render(render_pagetypeinfo_free, &zi, buf, sizeof(buf));
	KT_ASSERT_EQ(kt_line(buf, MIGRATE_MOVABLE, line, sizeof(line)), 0);
	KT_ASSERT_STREQ(line, "Node    0, zone   Normal, type      Movable  99999 >100000 >100000 "
			      "     0      0      0      0      0      0      0      0 ");
}

/* ---- live files on a controlled machine --------------------------------- */

#define LIVE_CMDLINE "mem=64M nr_cpus=2"

static void expect_pagetypeinfo(char *buf, size_t size, const unsigned long free_mt[][NR_PAGE_ORDERS],
				const unsigned long blocks[])
{
	size_t len = 0;

	len += (size_t)snprintf(buf + len, size - len,
				"Page block order: 9\nPages per block:  512\n\n%-43s ",
				"Free pages count per migrate type at order");
	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		len += (size_t)snprintf(buf + len, size - len, "%6d ", o);
	len += (size_t)snprintf(buf + len, size - len, "\n");
	for (int mt = 0; mt < ZI_MIGRATE_TYPES; mt++) {
		len += (size_t)snprintf(buf + len, size - len, "Node    0, zone   Normal, type %12s ",
					migratetype_names[mt]);
		for (int o = 0; o < NR_PAGE_ORDERS; o++)
			len += (size_t)snprintf(buf + len, size - len, "%6lu ", free_mt[mt][o]);
		len += (size_t)snprintf(buf + len, size - len, "\n");
	}
	len += (size_t)snprintf(buf + len, size - len, "\nNumber of blocks type     Unmovable      "
				"Movable  Reclaimable   HighAtomic      Isolate \nNode 0, zone   Normal ");
	for (int mt = 0; mt < ZI_MIGRATE_TYPES; mt++)
		len += (size_t)snprintf(buf + len, size - len, "%12lu ", blocks[mt]);
	snprintf(buf + len, size - len, "\n");
}

static void live_after_boot(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(slab_test_init(LIVE_CMDLINE), 0);
	KT_ASSERT(load_kernel_files());

	/* buddyinfo: 64 MiB = 16 free MAX_PAGE_ORDER blocks. */
	char *t = kt_read_checked("/proc/buddyinfo");
	KT_ASSERT_STREQ(t, "Node 0, zone   Normal      0      0      0      0      0      0"
			   "      0      0      0      0     16 \n");
	free(t);

	/* pagetypeinfo: all 32 pageblocks movable, headers as the kernel's. */
	static const unsigned long free_mt[ZI_MIGRATE_TYPES][NR_PAGE_ORDERS] = {
		[MIGRATE_MOVABLE] = { [10] = 16 },
	};
	static const unsigned long blocks[ZI_MIGRATE_TYPES] = { [MIGRATE_MOVABLE] = 32 };
	char want[4096];
	expect_pagetypeinfo(want, sizeof(want), free_mt, blocks);
	t = kt_read_checked("/proc/pagetypeinfo");
	KT_ASSERT_STREQ(t, want);
	char ours[512], theirs[512];
	for (int i = 0; i < 4; i++) {
		KT_ASSERT_EQ(kt_line(t, i, ours, sizeof(ours)), 0);
		KT_ASSERT_EQ(kt_line(kpti, i, theirs, sizeof(theirs)), 0);
		KT_ASSERT_STREQ(ours, theirs);
	}
	/* The block-count header: line 4 + 5 types + blank = line 10 ours, 20 the kernel's. */
	KT_ASSERT_EQ(kt_line(t, 4 + ZI_MIGRATE_TYPES + 1, ours, sizeof(ours)), 0);
	KT_ASSERT_EQ(kt_line(kpti, 4 + 3 * ZI_MIGRATE_TYPES + 1, theirs, sizeof(theirs)), 0);
	KT_ASSERT(!strncmp(theirs, "Number of blocks type", 21));
	KT_ASSERT_STREQ(ours, theirs);
	free(t);

	/*
	 * zoneinfo: 16384 pages.  min_free_kbytes = int_sqrt(65536 * 16) = 1024:
	 * min 256; tmp = max(256 / 4, 16384 * 10 / 10000) = 64: low 320,
	 * high 384, promo 448.  No allocation yet: no pagesets.
	 */
	char head[1024];
	snprintf(head, sizeof(head),
		 "Node 0, zone   Normal\n"
		 "  pages free     16384\n"
		 "        boost    0\n"
		 "        min      256\n"
		 "        low      320\n"
		 "        high     384\n"
		 "        promo    448\n"
		 "        spanned  16384\n"
		 "        present  16384\n"
		 "        managed  16384\n"
		 "        cma      0\n"
		 "        protection: (0, 0, 0, 0)\n"
		 "      nr_free_pages 16384\n"
		 "      nr_free_reported 16384\n");
	char tail[256];
	snprintf(tail, sizeof(tail),
		 "\n  pagesets\n  node_unreclaimable:  0\n  start_pfn:           %lu\n",
		 mm_model.base_pfn);
	t = kt_read_checked("/proc/zoneinfo");
	KT_ASSERT(t);
	KT_ASSERT(!strncmp(t, head, strlen(head)));
	KT_ASSERT(strlen(t) > strlen(tail) && !strcmp(t + strlen(t) - strlen(tail), tail));
	free(t);

	/* The extfrag files: everything usable, every order -1.000. */
	t = kt_read_checked("/sys/kernel/debug/extfrag/unusable_index");
	KT_ASSERT_STREQ(t, "Node 0, zone   Normal 0.000 0.000 0.000 0.000 0.000 0.000 "
			   "0.000 0.000 0.000 0.000 0.000 \n");
	free(t);
	t = kt_read_checked("/sys/kernel/debug/extfrag/extfrag_index");
	KT_ASSERT_STREQ(t, "Node 0, zone   Normal -1.000 -1.000 -1.000 -1.000 -1.000 -1.000 "
			   "-1.000 -1.000 -1.000 -1.000 -1.000 \n");
	free(t);

	/* The sysctls. */
	t = kt_read_checked("/proc/sys/vm/min_free_kbytes");
	KT_ASSERT_STREQ(t, "1024\n");
	free(t);
	t = kt_read_checked("/proc/sys/vm/watermark_scale_factor");
	KT_ASSERT_STREQ(t, "10\n");
	free(t);
	t = kt_read_checked("/proc/sys/vm/percpu_pagelist_high_fraction");
	KT_ASSERT_STREQ(t, "0\n");
	free(t);

	/* vmstat: "name value" lines, no name twice, the page allocator's all there. */
	t = kt_read_checked("/proc/vmstat");
	KT_ASSERT(t);
	char line[256];
	for (int i = 0; kt_line(t, i, line, sizeof(line)) == 0; i++) {
		char *sp = strchr(line, ' ');
		KT_ASSERT(sp && sp > line);
		for (char *c = line; c < sp; c++)
			KT_ASSERT(islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '_');
		KT_ASSERT(sp[1] == '-' || isdigit((unsigned char)sp[1]));
		char *end;
		strtol(sp + 1, &end, 10);
		KT_ASSERT(*end == '\0');
		*sp = '\0';
		for (int j = 0; j < i; j++) {
			char other[256];
			kt_line(t, j, other, sizeof(other));
			other[strcspn(other, " ")] = '\0';
			KT_ASSERT(strcmp(other, line));
		}
	}
	free(t);
	static const char *const names[] = {
		"nr_free_pages", "nr_free_reported", "pgalloc_normal", "pgfree", "pgalloc_fail",
		"pgreported", "memory_hotplug_pages", "extfrag_fallback", "extfrag_claim",
		"pcp_refill", "pcp_drain",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		KT_ASSERT(kt_vmstat(names[i]) >= 0);
	KT_ASSERT_EQ(kt_vmstat("nr_free_pages"), 16384);
	KT_ASSERT_EQ(kt_vmstat("nr_free_reported"), 16384);
	KT_ASSERT_EQ(kt_vmstat("pgalloc_normal"), 0);
	KT_ASSERT_EQ(kt_vmstat("pgfree"), 0);
}

/*
 * One order-0 GFP_KERNEL (unmovable) allocation on a fresh mem=64M:
 * there is no unmovable memory, so the request claims the first
 * MAX_PAGE_ORDER block (both its pageblocks become Unmovable) and splits
 * it; the pcp refill takes batch = 3 pages (zone_batchsize(16384) =
 * rounddown_pow_of_two(4 + 2) - 1) and hands out one: pages 0, 1 and 2 are
 * gone, page 3 and one block of each order 2..9 are left, on the Unmovable
 * lists.  pcp high = max(low 320 / 2 cpus, 4 * batch) = 160.
 */
static void live_after_one_alloc(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(slab_test_init(LIVE_CMDLINE), 0);
	struct page *page = alloc_pages(GFP_KERNEL, 0);
	KT_ASSERT(page);

	char *t = kt_read_checked("/proc/buddyinfo");
	KT_ASSERT_STREQ(t, "Node 0, zone   Normal      1      0      1      1      1      1"
			   "      1      1      1      1     15 \n");
	free(t);

	static const unsigned long free_mt[ZI_MIGRATE_TYPES][NR_PAGE_ORDERS] = {
		[MIGRATE_UNMOVABLE] = { 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
		[MIGRATE_MOVABLE] = { [10] = 15 },
	};
	static const unsigned long blocks[ZI_MIGRATE_TYPES] = {
		[MIGRATE_UNMOVABLE] = 2, [MIGRATE_MOVABLE] = 30,
	};
	char want[4096];
	expect_pagetypeinfo(want, sizeof(want), free_mt, blocks);
	t = kt_read_checked("/proc/pagetypeinfo");
	KT_ASSERT_STREQ(t, want);
	free(t);

	char tail[512];
	snprintf(tail, sizeof(tail),
		 "\n  pagesets"
		 "\n    cpu: 0"
		 "\n              count:    2"
		 "\n              high:     160"
		 "\n              batch:    3"
		 "\n              high_min: 160"
		 "\n              high_max: 160"
		 "\n  vm stats threshold: 0"
		 "\n  node_unreclaimable:  0"
		 "\n  start_pfn:           %lu\n", mm_model.base_pfn);
	t = kt_read_checked("/proc/zoneinfo");
	KT_ASSERT(t && strlen(t) > strlen(tail));
	KT_ASSERT_STREQ(t + strlen(t) - strlen(tail), tail);
	free(t);
	KT_ASSERT_EQ(kt_zoneinfo("pages free"), 16381);
	KT_ASSERT_EQ(kt_zoneinfo("nr_free_pages"), 16381);

	KT_ASSERT_EQ(kt_vmstat("nr_free_pages"), 16381);
	KT_ASSERT_EQ(kt_vmstat("nr_free_reported"), 16381);
	KT_ASSERT_EQ(kt_vmstat("pgalloc_normal"), 1);
	KT_ASSERT_EQ(kt_vmstat("pcp_refill"), 1);
	KT_ASSERT_EQ(kt_vmstat("extfrag_fallback"), 1);
	KT_ASSERT_EQ(kt_vmstat("extfrag_claim"), 1);

	/*
	 * unusable(o) = (free pages in blocks smaller than 2^o) * 1000 / 16381:
	 * below order 5: 1 + 4 + 8 + 16 = 29 -> 1; order 6: 61 -> 3; 7: 125 -> 7;
	 * 8: 253 -> 15; 9: 509 -> 31; 10: 1021 -> 62.
	 */
	t = kt_read_checked("/sys/kernel/debug/extfrag/unusable_index");
	KT_ASSERT_STREQ(t, "Node 0, zone   Normal 0.000 0.000 0.000 0.000 0.000 0.001 "
			   "0.003 0.007 0.015 0.031 0.062 \n");
	free(t);

	__free_pages(page, 0);
	drain_local_pages();
	KT_ASSERT_EQ(kt_zoneinfo("count:"), 0);
	KT_ASSERT_EQ(kt_vmstat("pgfree"), 1);
	KT_ASSERT_EQ(kt_vmstat("pcp_drain"), 1);
	struct mm_check_result r;
	KT_ASSERT_EQ(mm_check(&r), 0);
	KT_ASSERT_EQ(r.nr_free[MAX_PAGE_ORDER], 16);
}

/* Writes take effect as the kernel's sysctl handlers do. */
static void live_sysctl(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(slab_test_init(LIVE_CMDLINE), 0);
	struct page *page = alloc_pages(GFP_KERNEL, 0);	/* a pageset to show */
	KT_ASSERT(page);

	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/min_free_kbytes", "2048"), 0);
	/* min 512; tmp = max(128, 16) = 128: low 640, high 768, promo 896; pcp high 640/2 */
	KT_ASSERT_EQ(kt_zoneinfo("min"), 512);
	KT_ASSERT_EQ(kt_zoneinfo("low"), 640);
	KT_ASSERT_EQ(kt_zoneinfo("high"), 768);
	KT_ASSERT_EQ(kt_zoneinfo("promo"), 896);
	KT_ASSERT_EQ(kt_zoneinfo("high:"), 320);
	char *t = kt_read_checked("/proc/sys/vm/min_free_kbytes");
	KT_ASSERT_STREQ(t, "2048\n");
	free(t);

	/* "echo 1000 > ..." style input; tmp = max(128, 16384 * 1000 / 10000 = 1638). */
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/watermark_scale_factor", "1000\n"), 0);
	KT_ASSERT_EQ(kt_zoneinfo("min"), 512);
	KT_ASSERT_EQ(kt_zoneinfo("low"), 512 + 1638);
	KT_ASSERT_EQ(kt_zoneinfo("high"), 512 + 2 * 1638);
	KT_ASSERT_EQ(kt_zoneinfo("promo"), 512 + 3 * 1638);
	KT_ASSERT_EQ(kt_zoneinfo("high:"), (512 + 1638) / 2);

	/* pcp high = managed / fraction / cpus = 16384 / 8 / 2 */
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/percpu_pagelist_high_fraction", "8"), 0);
	KT_ASSERT_EQ(kt_zoneinfo("high:"), 1024);
	KT_ASSERT_EQ(kt_zoneinfo("batch:"), 3);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/percpu_pagelist_high_fraction", "0"), 0);
	KT_ASSERT_EQ(kt_zoneinfo("high:"), (512 + 1638) / 2);

	/* An int in the kernel: nothing above INT_MAX, and no truncation to a small value. */
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/percpu_pagelist_high_fraction", "4294967300"), -EINVAL);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/percpu_pagelist_high_fraction", "4294967296"), -EINVAL);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/percpu_pagelist_high_fraction", "2147483648"), -EINVAL);
	KT_ASSERT_EQ(kt_zoneinfo("high:"), (512 + 1638) / 2);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/percpu_pagelist_high_fraction", "2147483647"), 0);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/percpu_pagelist_high_fraction", "0"), 0);

	/* Out of the kernel's ranges or not a number: -EINVAL, nothing changes. */
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/min_free_kbytes", "abc"), -EINVAL);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/min_free_kbytes", "-1"), -EINVAL);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/min_free_kbytes", ""), -EINVAL);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/min_free_kbytes", "12x"), -EINVAL);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/watermark_scale_factor", "0"), -EINVAL);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/watermark_scale_factor", "3001"), -EINVAL);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/percpu_pagelist_high_fraction", "7"), -EINVAL);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/percpu_pagelist_high_fraction", "1"), -EINVAL);
	KT_ASSERT_EQ(kt_zoneinfo("min"), 512);
	KT_ASSERT_EQ(kt_zoneinfo("low"), 512 + 1638);
	t = kt_read_checked("/proc/sys/vm/watermark_scale_factor");
	KT_ASSERT_STREQ(t, "1000\n");
	free(t);
	t = kt_read_checked("/proc/sys/vm/percpu_pagelist_high_fraction");
	KT_ASSERT_STREQ(t, "0\n");
	free(t);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/watermark_scale_factor", "3000"), 0);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/watermark_scale_factor", "1"), 0);
	/* tmp = max(128, 1) */
	KT_ASSERT_EQ(kt_zoneinfo("low"), 640);
	__free_pages(page, 0);
}

KTEST(live_files_after_boot) { KT_ASSERT_CHILD_OK(kt_fork(live_after_boot, NULL)); }
KTEST(live_files_after_one_alloc) { KT_ASSERT_CHILD_OK(kt_fork(live_after_one_alloc, NULL)); }
KTEST(sysctl_writes) { KT_ASSERT_CHILD_OK(kt_fork(live_sysctl, NULL)); }

KTEST_MAIN((void)0)
