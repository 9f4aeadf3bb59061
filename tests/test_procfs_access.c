// SPDX-License-Identifier: MIT
/*
 * Access to the virtual files: kmem_read()'s snprintf-like semantics on
 * every page allocator file (full length returned, size - 1 bytes copied
 * and NUL-terminated, nothing written past @size, size 0 copies nothing),
 * directory listings ("/proc/", "/sys/kernel/debug/extfrag", ...), and
 * errors: unknown path -ENOENT, write to a read-only file -EACCES, bad
 * value -EINVAL (the value then unchanged).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmem.h>

#include "lib/kt_util.h"
#include "ktest.h"

#define LIVE_CMDLINE "mem=64M nr_cpus=2"

static const char *const files[] = {
	"/proc/buddyinfo", "/proc/pagetypeinfo", "/proc/zoneinfo", "/proc/vmstat",
	"/sys/kernel/debug/extfrag/unusable_index", "/sys/kernel/debug/extfrag/extfrag_index",
	"/proc/sys/vm/min_free_kbytes", "/proc/sys/vm/watermark_scale_factor",
	"/proc/sys/vm/percpu_pagelist_high_fraction",
};

static void read_semantics(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(kmem_init(LIVE_CMDLINE), 0);
	struct page *page = alloc_pages(GFP_KERNEL, 0);	/* pagesets in zoneinfo */
	KT_ASSERT(page);

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char *full = kt_read_checked(files[f]);
		KT_ASSERT(full);
		size_t len = strlen(full);
		KT_ASSERT(len > 0 && full[len - 1] == '\n');

		/* size 0: nothing is written, even with a NULL buffer. */
		char canary[8] = "XXXXXXX";
		KT_ASSERT_EQ(kmem_read(files[f], canary, 0), (long)len);
		KT_ASSERT_STREQ(canary, "XXXXXXX");
		KT_ASSERT_EQ(kmem_read(files[f], NULL, 0), (long)len);

		/* Every size: size - 1 bytes of the file, NUL, nothing beyond. */
		char *buf = malloc(len + 16);
		KT_ASSERT(buf);
		for (size_t size = 1; size <= len + 2; size++) {
			memset(buf, '#', len + 16);
			ssize_t n = kmem_read(files[f], buf, size);
			size_t copied = size - 1 < len ? size - 1 : len;
			if (n != (ssize_t)len || memcmp(buf, full, copied) || buf[copied] != '\0' ||
			    buf[size] != '#' || (copied + 1 < size && buf[copied + 1] != '#')) {
				KT_FAIL("%s read with size %zu: returned %zd, want %zu; text wrong "
					"or written past the buffer", files[f], size, n, len);
				free(buf);
				free(full);
				return;
			}
		}
		free(buf);
		free(full);
	}
	__free_pages(page, 0);
}

KTEST(kmem_read_truncation) { KT_ASSERT_CHILD_OK(kt_fork(read_semantics, NULL)); }

static void listings_and_errors_child(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(kmem_init(LIVE_CMDLINE), 0);

	char *t = kt_read_checked("/proc/");
	KT_ASSERT(t);
	for (const char *e = "buddyinfo\0pagetypeinfo\0zoneinfo\0vmstat\0sys\0"; *e; e += strlen(e) + 1)
		if (kt_count_lines(t, e) != 1) {
			KT_FAIL("/proc/ lists \"%s\" %d times:\n%s", e, kt_count_lines(t, e), t);
			return;
		}
	char line[256];
	for (int i = 0; kt_line(t, i, line, sizeof(line)) == 0; i++)
		KT_ASSERT(line[0] && !strchr(line, '/'));
	char *t2 = kt_read_checked("/proc");
	KT_ASSERT_STREQ(t, t2);
	free(t);
	free(t2);

	t = kt_read_checked("/sys/kernel/debug/extfrag");
	KT_ASSERT(t);
	KT_ASSERT_EQ(kt_count_lines(t, "unusable_index"), 1);
	KT_ASSERT_EQ(kt_count_lines(t, "extfrag_index"), 1);
	KT_ASSERT_EQ(strlen(t), strlen("unusable_index\nextfrag_index\n"));
	free(t);
	t = kt_read_checked("/sys/kernel/debug/extfrag/");
	KT_ASSERT_EQ(strlen(t), strlen("unusable_index\nextfrag_index\n"));
	free(t);
	t = kt_read_checked("/proc/sys/vm/");
	KT_ASSERT_EQ(kt_count_lines(t, "min_free_kbytes"), 1);
	KT_ASSERT_EQ(kt_count_lines(t, "watermark_scale_factor"), 1);
	KT_ASSERT_EQ(kt_count_lines(t, "percpu_pagelist_high_fraction"), 1);
	free(t);
	t = kt_read_checked("/");
	KT_ASSERT_EQ(kt_count_lines(t, "proc"), 1);
	KT_ASSERT_EQ(kt_count_lines(t, "sys"), 1);
	free(t);

	char buf[64];
	KT_ASSERT_EQ(kmem_read("/proc/nonexistent", buf, sizeof(buf)), -ENOENT);
	KT_ASSERT_EQ(kmem_read("/proc/buddyinfo2", buf, sizeof(buf)), -ENOENT);
	KT_ASSERT_EQ(kmem_read("/nonexistent/", buf, sizeof(buf)), -ENOENT);
	KT_ASSERT_EQ(kmem_read("proc/buddyinfo", buf, sizeof(buf)), -ENOENT);
	KT_ASSERT_EQ(kmem_read("", buf, sizeof(buf)), -ENOENT);
	KT_ASSERT_EQ(kmem_read(NULL, buf, sizeof(buf)), -ENOENT);
	KT_ASSERT_EQ(kmem_write("/proc/nonexistent", "1"), -ENOENT);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/nonexistent", "1"), -ENOENT);
	for (size_t f = 0; f < 6; f++)		/* the read-only ones */
		KT_ASSERT_EQ(kmem_write(files[f], "1"), -EACCES);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/min_free_kbytes", NULL), -EINVAL);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm", "1"), -EISDIR);	/* as documented */
	/* A failed write leaves the value alone. */
	t = kt_read_checked("/proc/sys/vm/min_free_kbytes");
	KT_ASSERT_STREQ(t, "1024\n");
	free(t);
}

KTEST(listings_and_errors) { KT_ASSERT_CHILD_OK(kt_fork(listings_and_errors_child, NULL)); }

KTEST_MAIN((void)0)
