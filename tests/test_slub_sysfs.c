// SPDX-License-Identifier: MIT
/*
 * /sys/kernel/slab: directory naming (unique ids and alias "symlinks"),
 * listings, every attribute's value and format for caches whose numbers we
 * can predict (layout values checked against a real 6.18 kernel's sysfs
 * dump, shared/data/linux-6.18/slub-sysfs.tsv), writable attributes and the
 * values they reject, SLUB_STATS counters after known operations.
 *
 * Booted with nr_cpus=2, like the kernel the dump comes from, and with
 * slub_sheaves=0: 6.18's classic SLUB, whose counters these cases predict
 * (sheaf_capacity reads 0, as in the dump).  tests/test_slub_sheaf.c covers
 * the sheaves.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "ktest.h"
#include "lib/kernel_data.h"
#include "slab/slab.h"
#include "slab/slub/slub.h"
#include "slab/slub/slub_sysfs.h"

#ifndef KMEM_SOURCE_DIR
#define KMEM_SOURCE_DIR "."
#endif


/* Contents of /sys/kernel/slab/<cache>/<attr>, or "ERR<errno>". Four rotating buffers. */
static const char *rd(const char *cache, const char *attr)
{
	static char bufs[4][8192];
	static int next;
	char path[256];
	char *b = bufs[next++ & 3];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s%s%s", cache, attr ? "/" : "", attr ? attr : "");
	ssize_t n = kmem_read(path, b, sizeof(bufs[0]));
	if (n < 0)
		snprintf(b, sizeof(bufs[0]), "ERR%d", (int)-n);
	return b;
}

static int wr(const char *cache, const char *attr, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", cache, attr);
	return kmem_write(path, val);
}

#define EXPECT_ATTR(cache, attr, want) do {						\
	const char *__got = rd(cache, attr);						\
	if (strcmp(__got, want))							\
		KT_FAIL("%s/%s: got '%s', want '%s'", cache, attr, __got, want);	\
} while (0)

/* Is @line a line of @text? */
static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, line, n) && p[n] == '\n')
			return true;
	return false;
}

static int count_lines(const char *text)
{
	int n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

static bool sorted_unique(const char *text)
{
	const char *prev = NULL;

	for (const char *p = text; *p; p = strchr(p, '\n') + 1) {
		if (prev) {
			size_t a = strcspn(prev, "\n"), b = strcspn(p, "\n");
			int c = strncmp(prev, p, a < b ? a : b);
			if (c > 0 || (c == 0 && a >= b))
				return false;
		}
		prev = p;
		if (!strchr(p, '\n'))
			break;
	}
	return true;
}

/* ---- naming ------------------------------------------------------------ */

KTEST(unique_id_format)
{
	char id[SLAB_UNIQUE_ID_MAX];

	slab_unique_id(id, sizeof(id), 0, 192);
	KT_ASSERT_STREQ(id, ":0000192");
	slab_unique_id(id, sizeof(id), SLAB_RECLAIM_ACCOUNT, 104);
	KT_ASSERT_STREQ(id, ":a-0000104");
	slab_unique_id(id, sizeof(id), SLAB_ACCOUNT, 16);
	KT_ASSERT_STREQ(id, ":A-0000016");
	slab_unique_id(id, sizeof(id), SLAB_CACHE_DMA | SLAB_CACHE_DMA32 | SLAB_RECLAIM_ACCOUNT |
				       SLAB_CONSISTENCY_CHECKS | SLAB_ACCOUNT | SLAB_HWCACHE_ALIGN, 8);
	KT_ASSERT_STREQ(id, ":dDaFA-0000008");
	slab_unique_id(id, sizeof(id), 0, 4194304);
	KT_ASSERT_STREQ(id, ":4194304");
}

static FILE *open_tsv(void)
{
	char path[1024];

	return kt_open_shared(KT_SLUB_SYSFS_TSV, path, sizeof(path));
}

/* Every unique id of the kernel dump, re-made from its flags and size. */
KTEST(unique_ids_of_kernel_dump)
{
	FILE *f = open_tsv();
	KT_ASSERT(f);
	char line[1024], id[SLAB_UNIQUE_ID_MAX];
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] != ':')
			continue;
		char name[64];
		unsigned int size;
		KT_ASSERT(sscanf(line, "%63[^\t]\t%*u\t%u", name, &size) == 2);
		slab_flags_t flags = 0;
		for (const char *p = name + 1; *p && *p != '-' && !(*p >= '0' && *p <= '9'); p++)
			flags |= *p == 'd' ? SLAB_CACHE_DMA : *p == 'D' ? SLAB_CACHE_DMA32 :
				 *p == 'a' ? SLAB_RECLAIM_ACCOUNT : *p == 'F' ? SLAB_CONSISTENCY_CHECKS :
				 *p == 'A' ? SLAB_ACCOUNT : 0;
		slab_unique_id(id, sizeof(id), flags, size);
		if (strcmp(id, name))
			KT_FAIL("kernel %s, ours %s", name, id);
		n++;
	}
	fclose(f);
	KT_EXPECT(n > 40);
}

KTEST(root_listing_and_aliases)
{
	struct kmem_cache *nm = kmem_cache_create("kt_fs_nomerge", 200, 0, SLAB_NO_MERGE, NULL);
	struct kmem_cache *m1 = kmem_cache_create("kt_fs_m1", 200, 0, 0, NULL);
	struct kmem_cache *m2 = kmem_cache_create("kt_fs_m2", 196, 0, 0, NULL);
	struct kmem_cache *ra = kmem_cache_create("kt_fs_recl", 200, 0, SLAB_RECLAIM_ACCOUNT, NULL);
	KT_ASSERT(nm && m1 && m2 && ra);
	KT_ASSERT(m1 == m2);		/* 196 -> 200: merged */
	KT_ASSERT(nm != m1 && ra != m1);

	const char *root = rd("", NULL);
	KT_ASSERT(strncmp(root, "ERR", 3));
	KT_EXPECT(sorted_unique(root));
	KT_EXPECT(has_line(root, "kt_fs_nomerge"));	/* unmergeable: its own name */
	KT_EXPECT(has_line(root, ":0000200"));		/* mergeable: unique id ... */
	KT_EXPECT(has_line(root, "kt_fs_m1"));		/* ... and a symlink per name */
	KT_EXPECT(has_line(root, "kt_fs_m2"));
	KT_EXPECT(has_line(root, ":a-0000200"));
	KT_EXPECT(has_line(root, "kt_fs_recl"));
	/* kmalloc caches are unmergeable, as in the 6.18 dump: their own names. */
	KT_EXPECT(!has_line(root, ":0000008") && has_line(root, "kmalloc-8"));
	KT_EXPECT(!has_line(root, ":0008192") && has_line(root, "kmalloc-8k"));
	KT_EXPECT(!has_line(root, ":0000200-kt"));

	/* Names and ids read the same cache. */
	EXPECT_ATTR("kt_fs_m2", "aliases", "1\n");
	EXPECT_ATTR("kt_fs_m1", "aliases", "1\n");
	EXPECT_ATTR(":0000200", "aliases", "1\n");
	EXPECT_ATTR(":0000200", "object_size", "200\n");
	EXPECT_ATTR("kt_fs_nomerge", "aliases", "0\n");
	EXPECT_ATTR(":a-0000200", "reclaim_account", "1\n");
	EXPECT_ATTR("kt_fs_recl", "reclaim_account", "1\n");
	EXPECT_ATTR("kt_fs_m1", "reclaim_account", "0\n");
	KT_EXPECT(!strcmp(rd("kt_fs_m2", ""), rd(":0000200", "")));

	/* The "/sys/kernel" directory knows "slab". */
	char buf[256];
	KT_EXPECT(kmem_read("/sys/kernel", buf, sizeof(buf)) > 0 && has_line(buf, "slab"));

	kmem_cache_destroy(m2);		/* the alias name goes */
	root = rd("", NULL);
	KT_EXPECT(!has_line(root, "kt_fs_m2"));
	KT_EXPECT(has_line(root, "kt_fs_m1") && has_line(root, ":0000200"));
	EXPECT_ATTR("kt_fs_m1", "aliases", "0\n");
	EXPECT_ATTR("kt_fs_m2", "aliases", "ERR2");
	kmem_cache_destroy(m1);
	kmem_cache_destroy(nm);
	kmem_cache_destroy(ra);
	root = rd("", NULL);
	KT_EXPECT(!has_line(root, ":0000200") && !has_line(root, "kt_fs_m1") &&
		  !has_line(root, "kt_fs_nomerge") && !has_line(root, "kt_fs_recl"));
}

static const char *const ro_attrs[] = {
	"slab_size", "object_size", "objs_per_slab", "order", "partial", "objects_partial",
	"cpu_slabs", "slabs_cpu_partial", "objects", "total_objects", "slabs", "ctor", "aliases",
	"align", "hwcache_align", "reclaim_account", "cache_dma", "destroy_by_rcu", "usersize",
	"sanity_checks", "trace", "red_zone", "poison", "store_user", "sheaf_capacity",
	"released_pages", "slab_pages",
};
static const char *const rw_attrs[] = {
	"min_partial", "cpu_partial", "validate", "shrink", "slab_thrash_ratio",
	"remote_node_defrag_ratio",
};
#define ARRAY_SIZE(a) (int)(sizeof(a) / sizeof((a)[0]))

KTEST(cache_dir_listing)
{
	struct kmem_cache *c = kmem_cache_create("kt_fs_list", 100, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(c);
	const char *dir = rd("kt_fs_list", "");
	KT_EXPECT(sorted_unique(dir));
	int stats = 0;
	for (int i = 0; i < NR_SLUB_STAT_ITEMS; i++)
		stats += slub_stat_counted(i);
	/* Every counter but alloc_cpu_sheaf and free_cpu_sheaf, which need CONFIG_SLUB_STATS. */
	KT_EXPECT(stats == NR_SLUB_STAT_ITEMS - (SLUB_STATS_PER_OBJECT ? 0 : 2));
	KT_EXPECT(count_lines(dir) == ARRAY_SIZE(ro_attrs) + ARRAY_SIZE(rw_attrs) + stats);
	for (int i = 0; i < ARRAY_SIZE(ro_attrs); i++)
		if (!has_line(dir, ro_attrs[i]))
			KT_FAIL("no %s", ro_attrs[i]);
	for (int i = 0; i < ARRAY_SIZE(rw_attrs); i++)
		if (!has_line(dir, rw_attrs[i]))
			KT_FAIL("no %s", rw_attrs[i]);
	for (int i = 0; i < NR_SLUB_STAT_ITEMS; i++)
		if (has_line(dir, slub_stat_names[i]) != slub_stat_counted(i))
			KT_FAIL("%s %s", slub_stat_counted(i) ? "no" : "an uncounted", slub_stat_names[i]);
	KT_EXPECT(has_line(dir, "alloc_cpu_sheaf") == SLUB_STATS_PER_OBJECT);
	KT_EXPECT(has_line(dir, "thrash_detected") && has_line(dir, "thrash_skip_partial"));
	/* With or without the trailing slash. */
	KT_EXPECT(!strcmp(rd("kt_fs_list/", NULL), rd("kt_fs_list", NULL)));
	kmem_cache_destroy(c);
}

/* Layout values of a real 6.18 kernel's cache @id (tsv row) against ours. */
static void check_against_kernel(const char *cache, const char *id)
{
	static const char *const cols[] = {
		"cache", "object_size", "slab_size", "align", "order", "objs_per_slab",
		"min_partial", "cpu_partial", "hwcache_align", "red_zone", "poison", "store_user",
		"destroy_by_rcu", "reclaim_account", "sheaf_capacity",
	};
	FILE *f = open_tsv();
	char line[1024];
	bool found = false;

	if (!f) {
		KT_FAIL("no kernel data");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, id, strlen(id)) || line[strlen(id)] != '\t')
			continue;
		found = true;
		char *save = NULL, *field = strtok_r(line, "\t\n", &save);
		for (int i = 1; i < ARRAY_SIZE(cols) && (field = strtok_r(NULL, "\t\n", &save)); i++) {
			char want[64];
			snprintf(want, sizeof(want), "%s\n", field);
			const char *got = rd(cache, cols[i]);
			if (strcmp(got, want))
				KT_FAIL("%s/%s: ours '%s', kernel %s '%s'", cache, cols[i], got, id, field);
		}
	}
	fclose(f);
	KT_EXPECT(found);
}

/* ---- values of a cache we fill ---------------------------------------- */

static struct kmem_cache *c256;
static void *objs[40];

KTEST(fresh_cache_values)
{
	c256 = kmem_cache_create("kt_fs_256", 256, 0, SLAB_HWCACHE_ALIGN | SLAB_NO_MERGE, NULL);
	KT_ASSERT(c256);
	EXPECT_ATTR("kt_fs_256", "slab_size", "256\n");
	EXPECT_ATTR("kt_fs_256", "object_size", "256\n");
	EXPECT_ATTR("kt_fs_256", "objs_per_slab", "16\n");
	EXPECT_ATTR("kt_fs_256", "order", "0\n");
	EXPECT_ATTR("kt_fs_256", "align", "64\n");
	EXPECT_ATTR("kt_fs_256", "hwcache_align", "1\n");
	EXPECT_ATTR("kt_fs_256", "min_partial", "5\n");
	EXPECT_ATTR("kt_fs_256", "cpu_partial", "52\n");
	EXPECT_ATTR("kt_fs_256", "sheaf_capacity", "0\n");	/* booted with slub_sheaves=0 */
	EXPECT_ATTR("kt_fs_256", "aliases", "0\n");
	EXPECT_ATTR("kt_fs_256", "ctor", "");
	EXPECT_ATTR("kt_fs_256", "usersize", "0\n");
	EXPECT_ATTR("kt_fs_256", "reclaim_account", "0\n");
	EXPECT_ATTR("kt_fs_256", "cache_dma", "0\n");
	EXPECT_ATTR("kt_fs_256", "destroy_by_rcu", "0\n");
	EXPECT_ATTR("kt_fs_256", "sanity_checks", "0\n");
	EXPECT_ATTR("kt_fs_256", "trace", "0\n");
	EXPECT_ATTR("kt_fs_256", "red_zone", "0\n");
	EXPECT_ATTR("kt_fs_256", "poison", "0\n");
	EXPECT_ATTR("kt_fs_256", "store_user", "0\n");
	EXPECT_ATTR("kt_fs_256", "slab_thrash_ratio", "0\n");
	EXPECT_ATTR("kt_fs_256", "remote_node_defrag_ratio", "100\n");
	EXPECT_ATTR("kt_fs_256", "objects", "0\n");
	EXPECT_ATTR("kt_fs_256", "total_objects", "0\n");
	EXPECT_ATTR("kt_fs_256", "slabs", "0\n");
	EXPECT_ATTR("kt_fs_256", "released_pages", "0\n");
	EXPECT_ATTR("kt_fs_256", "partial", "0\n");
	EXPECT_ATTR("kt_fs_256", "objects_partial", "0\n");
	EXPECT_ATTR("kt_fs_256", "cpu_slabs", "0\n");
	EXPECT_ATTR("kt_fs_256", "slabs_cpu_partial", "0(0)\n");
	EXPECT_ATTR("kt_fs_256", "validate", "");
	EXPECT_ATTR("kt_fs_256", "shrink", "");
	for (int i = 0; i < NR_SLUB_STAT_ITEMS; i++)
		EXPECT_ATTR("kt_fs_256", slub_stat_names[i], slub_stat_counted(i) ? "0\n" : "ERR2");
	/* The kernel's 256-byte cache-line aligned cache (:0000256) has the same geometry. */
	check_against_kernel("kt_fs_256", ":0000256");
}

KTEST(filled_cache_values_and_stats)
{
	KT_ASSERT(c256);
	for (int i = 0; i < 40; i++)
		KT_ASSERT((objs[i] = kmem_cache_alloc(c256, GFP_KERNEL)) != NULL);
	/* 3 slabs of 16; the thread's cpu slab free objects count as in use. */
	EXPECT_ATTR("kt_fs_256", "objects", "48 N0=48\n");
	EXPECT_ATTR("kt_fs_256", "total_objects", "48 N0=48\n");
	EXPECT_ATTR("kt_fs_256", "slabs", "3 N0=3\n");
	EXPECT_ATTR("kt_fs_256", "cpu_slabs", "1 N0=1\n");
	EXPECT_ATTR("kt_fs_256", "partial", "0\n");
	EXPECT_ATTR("kt_fs_256", "slabs_cpu_partial", "0(0)\n");
	/* One slow path per slab, the rest from the lockless freelist. */
	EXPECT_ATTR("kt_fs_256", "alloc_slowpath", "3 C0=3\n");
	EXPECT_ATTR("kt_fs_256", "alloc_fastpath", "37 C0=37\n");
	EXPECT_ATTR("kt_fs_256", "alloc_slab", "3 C0=3\n");
	EXPECT_ATTR("kt_fs_256", "deactivate_bypass", "2 C0=2\n");
	KT_EXPECT(strtoul(rd("kt_fs_256", "alloc_fastpath"), NULL, 10) +
		  strtoul(rd("kt_fs_256", "alloc_slowpath"), NULL, 10) == 40);

	for (int i = 0; i < 40; i++)
		kmem_cache_free(c256, objs[i]);
	KT_EXPECT(strtoul(rd("kt_fs_256", "free_fastpath"), NULL, 10) +
		  strtoul(rd("kt_fs_256", "free_slowpath"), NULL, 10) == 40);
	/* The two full slabs got free objects: onto this thread's partial list. */
	EXPECT_ATTR("kt_fs_256", "free_fastpath", "8 C0=8\n");
	EXPECT_ATTR("kt_fs_256", "free_slowpath", "32 C0=32\n");
	EXPECT_ATTR("kt_fs_256", "cpu_partial_free", "2 C0=2\n");
	EXPECT_ATTR("kt_fs_256", "free_frozen", "30 C0=30\n");
	EXPECT_ATTR("kt_fs_256", "slabs_cpu_partial", "16(2) C0=16(2)\n");
	EXPECT_ATTR("kt_fs_256", "cpu_slabs", "3 N0=3\n");
	EXPECT_ATTR("kt_fs_256", "objects", "48 N0=48\n");

	/* Writing 0 clears a counter; anything else is refused. */
	KT_EXPECT(wr("kt_fs_256", "alloc_fastpath", "1") == -EINVAL);
	KT_EXPECT(wr("kt_fs_256", "alloc_fastpath", "") == -EINVAL);
	KT_EXPECT(wr("kt_fs_256", "alloc_fastpath", "0") == 0);
	EXPECT_ATTR("kt_fs_256", "alloc_fastpath", "0\n");
	EXPECT_ATTR("kt_fs_256", "alloc_slowpath", "3 C0=3\n");
	KT_EXPECT(wr("kt_fs_256", "alloc_slowpath", "0\n") == 0);
	EXPECT_ATTR("kt_fs_256", "alloc_slowpath", "0\n");

	/* shrink: "1" flushes the thread and frees every empty slab. */
	KT_EXPECT(wr("kt_fs_256", "shrink", "2") == -EINVAL);
	KT_EXPECT(wr("kt_fs_256", "shrink", "1") == 0);
	EXPECT_ATTR("kt_fs_256", "slabs", "0\n");
	EXPECT_ATTR("kt_fs_256", "objects", "0\n");
	EXPECT_ATTR("kt_fs_256", "cpu_slabs", "0\n");
	EXPECT_ATTR("kt_fs_256", "slabs_cpu_partial", "0(0)\n");
	/* Counted by shrink outside any thread slot: in the total only. */
	KT_EXPECT(strtoul(rd("kt_fs_256", "free_slab"), NULL, 10) == 3);
}

struct helper {
	pthread_barrier_t allocated, read_done;
	void *objs[5];
};

static void *helper_thread(void *arg)
{
	struct helper *h = arg;

	for (int i = 0; i < 5; i++)
		h->objs[i] = kmem_cache_alloc(c256, GFP_KERNEL);
	pthread_barrier_wait(&h->allocated);
	pthread_barrier_wait(&h->read_done);
	for (int i = 0; i < 5; i++)
		kmem_cache_free(c256, h->objs[i]);
	return NULL;
}

KTEST(stats_per_thread)
{
	KT_ASSERT(c256);
	for (int i = 0; i < NR_SLUB_STAT_ITEMS; i++)
		KT_ASSERT(wr("kt_fs_256", slub_stat_names[i], "0") == (slub_stat_counted(i) ? 0 : -ENOENT));
	for (int i = 0; i < 3; i++)
		objs[i] = kmem_cache_alloc(c256, GFP_KERNEL);
	struct helper h;
	pthread_t t;
	pthread_barrier_init(&h.allocated, NULL, 2);
	pthread_barrier_init(&h.read_done, NULL, 2);
	KT_ASSERT(pthread_create(&t, NULL, helper_thread, &h) == 0);
	pthread_barrier_wait(&h.allocated);
	/* C0 is this thread (first to use the cache), C1 the helper. */
	EXPECT_ATTR("kt_fs_256", "alloc_slowpath", "2 C0=1 C1=1\n");
	EXPECT_ATTR("kt_fs_256", "alloc_fastpath", "6 C0=2 C1=4\n");
	EXPECT_ATTR("kt_fs_256", "alloc_slab", "2 C0=1 C1=1\n");
	EXPECT_ATTR("kt_fs_256", "cpu_slabs", "2 N0=2\n");
	EXPECT_ATTR("kt_fs_256", "objects", "32 N0=32\n");
	pthread_barrier_wait(&h.read_done);
	pthread_join(t, NULL);
	/* An exited thread's counts stay in the total. */
	EXPECT_ATTR("kt_fs_256", "alloc_fastpath", "6 C0=2\n");
	EXPECT_ATTR("kt_fs_256", "free_fastpath", "5\n");
	EXPECT_ATTR("kt_fs_256", "cpu_slabs", "1 N0=1\n");
	for (int i = 0; i < 3; i++)
		kmem_cache_free(c256, objs[i]);
	pthread_barrier_destroy(&h.allocated);
	pthread_barrier_destroy(&h.read_done);
	kmem_cache_shrink(c256);
}

/* ---- writable attributes --------------------------------------------- */

KTEST(read_only_and_unknown)
{
	KT_ASSERT(c256);
	for (int i = 0; i < ARRAY_SIZE(ro_attrs); i++)
		if (wr("kt_fs_256", ro_attrs[i], "1") != -EACCES)
			KT_FAIL("%s is writable", ro_attrs[i]);
	KT_EXPECT(wr("kt_fs_256", "no_such_attr", "1") == -ENOENT);
	EXPECT_ATTR("kt_fs_256", "no_such_attr", "ERR2");
	EXPECT_ATTR("kt_no_such_cache", "order", "ERR2");
	EXPECT_ATTR("kt_no_such_cache", "", "ERR2");
	KT_EXPECT(wr("kt_no_such_cache", "order", "1") == -ENOENT);
	EXPECT_ATTR("kt_fs_256", "order/more", "ERR2");
	KT_EXPECT(kmem_write("/sys/kernel/slab/kt_fs_256", "1") == -EISDIR);
	KT_EXPECT(kmem_write("/sys/kernel/slab/", "1") == -EISDIR);
	KT_EXPECT(kmem_write("/sys/kernel/slab", "1") == -EISDIR);
}

KTEST(every_attribute_readable)
{
	static char dir[8192];
	KT_ASSERT(kmem_read("/sys/kernel/slab/kt_fs_256/", dir, sizeof(dir)) > 0);
	int n = 0;
	for (char *save = NULL, *name = strtok_r(dir, "\n", &save); name;
	     name = strtok_r(NULL, "\n", &save), n++) {
		const char *v = rd("kt_fs_256", name);
		bool may_be_empty = !strcmp(name, "validate") || !strcmp(name, "shrink") ||
				    !strcmp(name, "ctor");
		if (!strncmp(v, "ERR", 3) || (!may_be_empty && (!*v || v[strlen(v) - 1] != '\n')))
			KT_FAIL("%s reads '%s'", name, v);
	}
	KT_EXPECT(n == ARRAY_SIZE(ro_attrs) + ARRAY_SIZE(rw_attrs) + NR_SLUB_STAT_ITEMS -
		       (SLUB_STATS_PER_OBJECT ? 0 : 2));
}

KTEST(min_partial_and_cpu_partial)
{
	KT_ASSERT(c256);
	KT_EXPECT(wr("kt_fs_256", "min_partial", "7") == 0);
	EXPECT_ATTR("kt_fs_256", "min_partial", "7\n");
	KT_EXPECT(wr("kt_fs_256", "min_partial", "0\n") == 0);	/* no clamping, as since 5.16 */
	EXPECT_ATTR("kt_fs_256", "min_partial", "0\n");
	KT_EXPECT(wr("kt_fs_256", "min_partial", "abc") == -EINVAL);
	KT_EXPECT(wr("kt_fs_256", "min_partial", "-1") == -EINVAL);
	KT_EXPECT(wr("kt_fs_256", "min_partial", "0x10") == -EINVAL);
	KT_EXPECT(wr("kt_fs_256", "min_partial", "") == -EINVAL);
	KT_EXPECT(wr("kt_fs_256", "min_partial", "99999999999999999999999") == -ERANGE);
	/* An unsigned long (kstrtoul), not an unsigned int. */
	KT_EXPECT(wr("kt_fs_256", "min_partial", "4294967296") == 0);
	EXPECT_ATTR("kt_fs_256", "min_partial", "4294967296\n");
	KT_EXPECT(wr("kt_fs_256", "min_partial", "18446744073709551615") == 0);
	EXPECT_ATTR("kt_fs_256", "min_partial", "18446744073709551615\n");
	KT_EXPECT(wr("kt_fs_256", "min_partial", "5") == 0);
	EXPECT_ATTR("kt_fs_256", "min_partial", "5\n");

	KT_EXPECT(wr("kt_fs_256", "cpu_partial", "30") == 0);
	EXPECT_ATTR("kt_fs_256", "cpu_partial", "30\n");
	KT_EXPECT(wr("kt_fs_256", "cpu_partial", "x") == -EINVAL);
	KT_EXPECT(wr("kt_fs_256", "cpu_partial", "52") == 0);
	EXPECT_ATTR("kt_fs_256", "cpu_partial", "52\n");

	/* A debug cache cannot use cpu partial slabs: only 0 is accepted. */
	struct kmem_cache *dbg = kmem_cache_create("kt_fs_poison", 128, 0, SLAB_POISON, NULL);
	KT_ASSERT(dbg);
	EXPECT_ATTR("kt_fs_poison", "cpu_partial", "0\n");
	EXPECT_ATTR("kt_fs_poison", "poison", "1\n");
	KT_EXPECT(wr("kt_fs_poison", "cpu_partial", "5") == -EINVAL);
	KT_EXPECT(wr("kt_fs_poison", "cpu_partial", "0") == 0);
	KT_EXPECT(has_line(rd("", NULL), "kt_fs_poison"));	/* debug caches never merge */
	kmem_cache_destroy(dbg);
}

KTEST(slab_thrash_ratio)
{
	/* 64-byte cache-line aligned objects: 64 per order-0 slab, as the kernel's :0000064. */
	struct kmem_cache *c = kmem_cache_create("kt_fs_64", 64, 0, SLAB_HWCACHE_ALIGN | SLAB_NO_MERGE, NULL);
	KT_ASSERT(c);
	check_against_kernel("kt_fs_64", ":0000064");
	EXPECT_ATTR("kt_fs_64", "objs_per_slab", "64\n");
	EXPECT_ATTR("kt_fs_64", "slab_thrash_ratio", "0\n");
	KT_EXPECT(wr("kt_fs_64", "slab_thrash_ratio", "20") == 0);
	EXPECT_ATTR("kt_fs_64", "slab_thrash_ratio", "18\n");	/* 12 objects of 64 */
	KT_EXPECT(wr("kt_fs_64", "slab_thrash_ratio", "100\n") == 0);
	EXPECT_ATTR("kt_fs_64", "slab_thrash_ratio", "100\n");
	KT_EXPECT(wr("kt_fs_64", "slab_thrash_ratio", "101") == -EINVAL);
	KT_EXPECT(wr("kt_fs_64", "slab_thrash_ratio", "abc") == -EINVAL);
	KT_EXPECT(wr("kt_fs_64", "slab_thrash_ratio", "-5") == -EINVAL);
	EXPECT_ATTR("kt_fs_64", "slab_thrash_ratio", "100\n");
	KT_EXPECT(wr("kt_fs_64", "slab_thrash_ratio", "0") == 0);
	EXPECT_ATTR("kt_fs_64", "slab_thrash_ratio", "0\n");
	kmem_cache_destroy(c);
}

KTEST(remote_node_defrag_ratio)
{
	KT_ASSERT(c256);
	EXPECT_ATTR("kt_fs_256", "remote_node_defrag_ratio", "100\n");
	KT_EXPECT(wr("kt_fs_256", "remote_node_defrag_ratio", "42") == 0);
	EXPECT_ATTR("kt_fs_256", "remote_node_defrag_ratio", "42\n");
	KT_EXPECT(wr("kt_fs_256", "remote_node_defrag_ratio", "101") == -ERANGE);
	KT_EXPECT(wr("kt_fs_256", "remote_node_defrag_ratio", "x") == -EINVAL);
	KT_EXPECT(wr("kt_fs_256", "remote_node_defrag_ratio", "0") == 0);
	EXPECT_ATTR("kt_fs_256", "remote_node_defrag_ratio", "0\n");
	/* Another cache keeps the default. */
	EXPECT_ATTR("kmalloc-64", "remote_node_defrag_ratio", "100\n");
}

KTEST(validate)
{
	KT_ASSERT(c256);
	void *o = kmem_cache_alloc(c256, GFP_KERNEL);
	kmem_write("/sys/kernel/slab/kt_fs_256/cpu_partial", "52");	/* flushes to the node */
	KT_EXPECT(wr("kt_fs_256", "validate", "1") == 0);
	KT_EXPECT(wr("kt_fs_256", "validate", "1\n") == 0);
	KT_EXPECT(wr("kt_fs_256", "validate", "0") == -EINVAL);
	KT_EXPECT(wr("kmalloc-8", "validate", "1") == 0);
	EXPECT_ATTR("kt_fs_256", "partial", "1 N0=1\n");
	EXPECT_ATTR("kt_fs_256", "objects_partial", "1 N0=1\n");
	EXPECT_ATTR("kt_fs_256", "objects", "1 N0=1\n");
	EXPECT_ATTR("kt_fs_256", "total_objects", "16 N0=16\n");
	kmem_cache_free(c256, o);
}

static void kt_fs_ctor(void *p)
{
	memset(p, 0x5a, 32);
}

KTEST(flags_and_ctor)
{
	struct kmem_cache *c = kmem_cache_create("kt_fs_ctor", 32, 0, 0, kt_fs_ctor);
	KT_ASSERT(c);
	/* A ctor makes a cache unmergeable: listed under its own name. */
	KT_EXPECT(has_line(rd("", NULL), "kt_fs_ctor"));
	const char *v = rd("kt_fs_ctor", "ctor");
	char hex[32];
	snprintf(hex, sizeof(hex), "0x%lx\n", (unsigned long)(uintptr_t)kt_fs_ctor);
	/* "%pS": symbol+0x0/0x<size> if the dynamic symbol table knows it, else the address. */
	if (strcmp(v, hex) && strncmp(v, "kt_fs_ctor+0x0/0x", 17))
		KT_FAIL("ctor reads '%s'", v);
	KT_EXPECT(v[strlen(v) - 1] == '\n');
	kmem_cache_destroy(c);

	struct kmem_cache *d = kmem_cache_create("kt_fs_dma", 24, 0, SLAB_CACHE_DMA, NULL);
	KT_ASSERT(d);
	KT_EXPECT(has_line(rd("", NULL), ":d-0000024"));
	EXPECT_ATTR(":d-0000024", "cache_dma", "1\n");
	EXPECT_ATTR("kt_fs_dma", "cache_dma", "1\n");
	kmem_cache_destroy(d);

	struct kmem_cache *r = kmem_cache_create("kt_fs_rcu", 48, 0, SLAB_TYPESAFE_BY_RCU, NULL);
	KT_ASSERT(r);
	EXPECT_ATTR("kt_fs_rcu", "destroy_by_rcu", "1\n");
	kmem_cache_destroy(r);

	struct kmem_cache *f = kmem_cache_create("kt_fs_checks", 40, 0,
						 SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_STORE_USER,
						 NULL);
	KT_ASSERT(f);
	EXPECT_ATTR("kt_fs_checks", "sanity_checks", "1\n");
	EXPECT_ATTR("kt_fs_checks", "red_zone", "1\n");
	EXPECT_ATTR("kt_fs_checks", "store_user", "1\n");
	EXPECT_ATTR("kt_fs_checks", "poison", "0\n");
	EXPECT_ATTR("kt_fs_checks", "trace", "0\n");
	kmem_cache_destroy(f);
}

KTEST(snprintf_semantics)
{
	char small[4];
	ssize_t n = kmem_read("/sys/kernel/slab/kt_fs_256/objs_per_slab", small, sizeof(small));
	KT_EXPECT(n == 3 && !strcmp(small, "16\n"));
	n = kmem_read("/sys/kernel/slab/", small, sizeof(small));
	KT_EXPECT(n > 100 && strlen(small) == 3);
}

KTEST_MAIN(if (kmem_init("mem=64M nr_cpus=2 slub_sheaves=0")) { printf("kmem_init failed\n"); return 1; })
