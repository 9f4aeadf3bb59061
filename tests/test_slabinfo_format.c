// SPDX-License-Identifier: MIT
/*
 * /proc/slabinfo and /proc/meminfo in the kernel's exact formats.
 *
 * Oracle: /proc/slabinfo of a Linux 6.18 kernel
 * (shared/data/linux-6.18/slabinfo.txt): the header must be byte-identical,
 * and every line, parsed and re-rendered by render_slabinfo_line(), must come
 * out byte-identical (long names overflowing the 17-column field included).
 * Then the live files: exact lines for caches whose numbers we can predict,
 * newest-first order, kmalloc caches last in the kernel's order, aliases
 * without a line of their own, meminfo fields and their relations.
 *
 * Data directory: $KMEM_SHARED_DIR if set, else KMEM_SOURCE_DIR/../shared.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "introspect/proc_slab.h"
#include "slab/slab.h"
#include "lib/kt_util.h"
#include "ktest.h"
#include "lib/slab_test.h"

#ifndef KMEM_SOURCE_DIR
#define KMEM_SOURCE_DIR "."
#endif

#define SLABINFO_REL "/data/linux-6.18/slabinfo.txt"

static char *read_kernel_slabinfo(void)
{
	const char *env = getenv("KMEM_SHARED_DIR");
	char path[1024];

	if (env && *env)
		snprintf(path, sizeof(path), "%s" SLABINFO_REL, env);
	else
		snprintf(path, sizeof(path), "%s/../shared" SLABINFO_REL, KMEM_SOURCE_DIR);
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "cannot open kernel data %s: %s (set KMEM_SHARED_DIR)\n", path,
			strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	if (buf)
		buf[len] = '\0';
	return buf;
}

/* Render into a fixed buffer; returns it. */
static const char *render_line(char *buf, size_t size, const char *name,
			       const struct slabinfo_line *l)
{
	struct seq_buf s = { .buf = buf, .size = size };

	render_slabinfo_line(&s, name, l);
	seq_finish(&s);
	return buf;
}

/* The line of @text starting with "@name " (no '\n'), or "" if none. */
static const char *find_line(const char *text, const char *name, char *out, size_t size)
{
	size_t nl = strlen(name);

	out[0] = '\0';
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (!strncmp(p, name, nl) && p[nl] == ' ') {
			size_t len = strcspn(p, "\n");
			if (len >= size)
				len = size - 1;
			memcpy(out, p, len);
			out[len] = '\0';
			break;
		}
	}
	return out;
}

/* The live /proc/slabinfo line of cache @name into @out ("" if none); false if
 * the file cannot be read. */
static bool live_line(const char *name, char *out, size_t size)
{
	char *text = kt_read_checked("/proc/slabinfo");

	if (!text)
		return false;
	find_line(text, name, out, size);
	free(text);
	return true;
}

/* Offset of the line for @name in @text, or -1. */
static long line_pos(const char *text, const char *name)
{
	size_t nl = strlen(name);

	for (const char *p = text; *p; ) {
		if (!strncmp(p, name, nl) && p[nl] == ' ')
			return p - text;
		const char *e = strchr(p, '\n');
		if (!e)
			break;
		p = e + 1;
	}
	return -1;
}

KTEST(header_matches_kernel)
{
	char *k = read_kernel_slabinfo();
	KT_ASSERT(k);
	char *third = strchr(strchr(k, '\n') + 1, '\n') + 1;
	char want[512], got[512];
	size_t hl = (size_t)(third - k);
	KT_ASSERT(hl < sizeof(want));
	memcpy(want, k, hl);
	want[hl] = '\0';

	struct seq_buf s = { .buf = got, .size = sizeof(got) };
	render_slabinfo_header(&s);
	seq_finish(&s);
	KT_ASSERT_STREQ(got, want);

	/* And the live file starts with it. */
	char *live = kt_read("/proc/slabinfo", NULL);
	KT_ASSERT(live);
	KT_EXPECT(!strncmp(live, want, hl));
	free(live);
	free(k);
}

KTEST(every_kernel_line_rerenders_identically)
{
	char *k = read_kernel_slabinfo();
	KT_ASSERT(k);
	int lines = 0, long_names = 0;
	char *save = NULL;
	char *line = strtok_r(k, "\n", &save);
	line = strtok_r(NULL, "\n", &save);		/* skip the two header lines */
	while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
		char name[128], got[512];
		struct slabinfo_line l = { 0 };
		int n = sscanf(line, "%127s %lu %lu %u %u %d : tunables %u %u %u : slabdata %lu %lu %lu",
			       name, &l.active_objs, &l.num_objs, &l.objsize, &l.objperslab,
			       &l.pagesperslab, &l.limit, &l.batchcount, &l.sharedfactor,
			       &l.active_slabs, &l.num_slabs, &l.sharedavail);
		if (n != 12) {
			KT_FAIL("cannot parse kernel line: %s", line);
			continue;
		}
		render_line(got, sizeof(got), name, &l);
		got[strcspn(got, "\n")] = '\0';
		if (strcmp(got, line))
			KT_FAIL("line differs:\n  kernel: '%s'\n  ours:   '%s'", line, got);
		lines++;
		long_names += strlen(name) >= 17;
	}
	KT_EXPECT(lines == 235);
	KT_EXPECT(long_names > 10);	/* the overflow case is covered */
	free(k);
}

KTEST(renderer_fixed_values)
{
	char got[256];
	struct slabinfo_line l = { .active_objs = 48, .num_objs = 48, .objsize = 256,
				   .objperslab = 16, .pagesperslab = 1,
				   .active_slabs = 3, .num_slabs = 3 };

	KT_ASSERT_STREQ(render_line(got, sizeof(got), "kt_cache", &l),
			"kt_cache              48     48    256   16    1 : tunables    0    0    0"
			" : slabdata      3      3      0\n");
	/* 17 characters exactly: one space, then the %6lu field. */
	KT_ASSERT_STREQ(render_line(got, sizeof(got), "abcdefghijklmnopq", &l),
			"abcdefghijklmnopq     48     48    256   16    1 : tunables    0    0    0"
			" : slabdata      3      3      0\n");
	/* Wider numbers push the columns, as printf does. */
	struct slabinfo_line big = { .active_objs = 12345678, .num_objs = 12345678, .objsize = 51488,
				     .objperslab = 1, .pagesperslab = 16, .active_slabs = 1234567,
				     .num_slabs = 1234567 };
	KT_ASSERT_STREQ(render_line(got, sizeof(got), "kvm_vcpu", &big),
			"kvm_vcpu          12345678 12345678  51488    1   16 : tunables    0    0    0"
			" : slabdata 1234567 1234567      0\n");
}

static struct kmem_cache *si_cache;
static void *si_objs[40];
static char want[512];

/* A 256-byte cache's tunables: none on SLUB; SLAB's enable_cpucache() (shared 8 with nr_cpus=2). */
static const char *si_tunables(void)
{
	return slab_test_is_slub() ? " : tunables    0    0    0" : " : tunables  120   60    8";
}

KTEST(live_line_is_exact)
{
	/* 256-byte, cache-line aligned, never merged: 16 objects per order-0 slab. */
	si_cache = kmem_cache_create("kt_si_256", 256, 0, SLAB_HWCACHE_ALIGN | SLAB_NO_MERGE, NULL);
	KT_ASSERT(si_cache);
	char line[512];
	KT_ASSERT(live_line("kt_si_256", line, sizeof(line)));
	if (slab_allocator == SLAB_ALLOCATOR_SLOB) {
		/* SLOB: no slabs of a cache's own; the live objects are active and total. */
		static const char *const slob_line =
			"kt_si_256         %6d %6d    256    0    1 : tunables    0    0    0 : slabdata      0      0      0";
		snprintf(want, sizeof(want), slob_line, 0, 0);
		KT_ASSERT_STREQ(line, want);
		for (int i = 0; i < 40; i++)
			KT_ASSERT((si_objs[i] = kmem_cache_alloc(si_cache, GFP_KERNEL)) != NULL);
		KT_ASSERT(live_line("kt_si_256", line, sizeof(line)));
		snprintf(want, sizeof(want), slob_line, 40, 40);
		KT_ASSERT_STREQ(line, want);
		for (int i = 0; i < 40; i++)
			kmem_cache_free(si_cache, si_objs[i]);
		KT_ASSERT(live_line("kt_si_256", line, sizeof(line)));
		snprintf(want, sizeof(want), slob_line, 0, 0);
		KT_ASSERT_STREQ(line, want);
		return;
	}
	if (slab_test_is_slub())
		KT_ASSERT_STREQ(line,
				"kt_si_256              0      0    256   16    1 : tunables    0    0    0"
				" : slabdata      0      0      0");
	else	/* SLAB's tunables: enable_cpucache()'s for 256 bytes, shared 8 with nr_cpus=2 */
		KT_ASSERT_STREQ(line,
				"kt_si_256              0      0    256   16    1 : tunables  120   60    8"
				" : slabdata      0      0      0");

	for (int i = 0; i < 40; i++)
		KT_ASSERT((si_objs[i] = kmem_cache_alloc(si_cache, GFP_KERNEL)) != NULL);
	/* 3 slabs; the free objects of the thread's cpu slab count as active. */
	KT_ASSERT(live_line("kt_si_256", line, sizeof(line)));
	snprintf(want, sizeof(want), "kt_si_256             48     48    256   16    1%s"
		 " : slabdata      3      3      0", si_tunables());
	KT_ASSERT_STREQ(line, want);

	/* All freed: the slabs stay with this thread (cpu slab, cpu partial list). */
	for (int i = 0; i < 40; i++)
		kmem_cache_free(si_cache, si_objs[i]);
	KT_ASSERT(live_line("kt_si_256", line, sizeof(line)));
	snprintf(want, sizeof(want), "kt_si_256             48     48    256   16    1%s"
		 " : slabdata      3      3      0", si_tunables());
	KT_ASSERT_STREQ(line, want);

	/* Shrink gives every empty slab back. */
	kmem_cache_shrink(si_cache);
	KT_ASSERT(live_line("kt_si_256", line, sizeof(line)));
	if (slab_test_is_slub())
		KT_ASSERT_STREQ(line,
				"kt_si_256              0      0    256   16    1 : tunables    0    0    0"
				" : slabdata      0      0      0");
	else	/* SLAB's tunables: enable_cpucache()'s for 256 bytes, shared 8 with nr_cpus=2 */
		KT_ASSERT_STREQ(line,
				"kt_si_256              0      0    256   16    1 : tunables  120   60    8"
				" : slabdata      0      0      0");
}

KTEST(partial_free_objects_are_inactive)
{
	if (slab_allocator == SLAB_ALLOCATOR_SLOB) {
		fprintf(stderr, "  skipped on SLOB: no slabs, so no free objects in them (live_line_is_exact)\n");
		return;
	}
	struct kmem_cache *c = kmem_cache_create("kt_si_partial", 512, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(c);
	void *o[16];
	for (int i = 0; i < 16; i++)
		KT_ASSERT((o[i] = kmem_cache_alloc(c, GFP_KERNEL)) != NULL);
	char line[512];
	KT_ASSERT(live_line("kt_si_partial", line, sizeof(line)));
	struct slabinfo_line l;
	char name[64];
	KT_ASSERT(sscanf(line, "%63s %lu %lu %u %u %d", name, &l.active_objs, &l.num_objs,
			 &l.objsize, &l.objperslab, &l.pagesperslab) == 6);
	KT_EXPECT(l.objsize == 512);
	KT_EXPECT(l.active_objs == l.num_objs);
	unsigned int per = l.objperslab;

	/* Flush: the thread's slabs go to the node partial list, where free objects are inactive. */
	kmem_cache_free(c, o[0]);
	kmem_write("/sys/kernel/slab/kt_si_partial/cpu_partial", "0");
	KT_ASSERT(live_line("kt_si_partial", line, sizeof(line)));
	unsigned long active, num;
	KT_ASSERT(sscanf(line, "%63s %lu %lu", name, &active, &num) == 3);
	KT_EXPECT(num == ((16 + per - 1) / per) * per);
	if (slab_test_is_slub())
		KT_EXPECT(active == num - (num - 16) - 1);
	else	/* SLAB: objects in a CPU's array count as active, as in the kernel */
		KT_EXPECT(active == 16);
	for (int i = 1; i < 16; i++)
		kmem_cache_free(c, o[i]);
	kmem_cache_destroy(c);
}

KTEST(newest_first_and_kmalloc_last)
{
	struct kmem_cache *a = kmem_cache_create("kt_order_a", 72, 0, SLAB_NO_MERGE, NULL);
	struct kmem_cache *b = kmem_cache_create("kt_order_b", 72, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(a && b);
	char *text = kt_read("/proc/slabinfo", NULL);
	KT_ASSERT(text);
	KT_EXPECT(line_pos(text, "kt_order_b") >= 0);
	KT_EXPECT(line_pos(text, "kt_order_b") < line_pos(text, "kt_order_a"));

	/* The kmalloc caches end the file, in the kernel file's order. */
	char *k = read_kernel_slabinfo();
	KT_ASSERT(k);
	const char *order[32];
	int n = 0;
	for (char *p = k; *p && n < 32; p = strchr(p, '\n') + 1) {
		if (!strncmp(p, "kmalloc-", 8) && p[8] >= '0' && p[8] <= '9') {
			static char names[32][32];
			sscanf(p, "%31s", names[n]);
			order[n] = names[n];
			n++;
		}
		if (!strchr(p, '\n'))
			break;
	}
	if (slab_allocator == SLAB_ALLOCATOR_SLOB) {
		/* SLOB: no kmalloc caches, so no kmalloc lines to come last. */
		KT_EXPECT(!strstr(text, "\nkmalloc-"));
		free(text);
		free(k);
		kmem_cache_destroy(a);
		kmem_cache_destroy(b);
		return;
	}
	KT_ASSERT_EQ(n, 13);	/* kmalloc-8k ... kmalloc-8, kmalloc-192, kmalloc-96 */
	long prev = -1;
	for (int i = 0; i < n; i++) {
		long pos = line_pos(text, order[i]);
		if (pos <= prev)
			KT_FAIL("%s out of the kernel's order", order[i]);
		prev = pos;
	}
	/* kmalloc-96, the first cache created, is the last line. */
	size_t len = strlen(text);
	KT_EXPECT(len && text[len - 1] == '\n');
	const char *last = text + len - 1;
	while (last > text && last[-1] != '\n')
		last--;
	KT_EXPECT(!strncmp(last, "kmalloc-96 ", 11));
	free(k);
	free(text);
	kmem_cache_destroy(b);
	kmem_cache_destroy(a);
	text = kt_read("/proc/slabinfo", NULL);
	KT_ASSERT(text);
	KT_EXPECT(line_pos(text, "kt_order_a") < 0 && line_pos(text, "kt_order_b") < 0);
	free(text);
}

KTEST(aliases_have_no_line)
{
	if (slab_allocator == SLAB_ALLOCATOR_SLOB) {
		fprintf(stderr, "  skipped on SLOB: caches never merge, so there are no aliases\n");
		return;
	}
	/* 60 bytes rounds to 64: merges into the first 64-byte user cache.
	 * kmalloc caches take no aliases (Linux 6.18). */
	struct kmem_cache *t = kmem_cache_create("kt_si_target", 64, 0, 0, NULL);
	struct kmem_cache *c = kmem_cache_create("kt_si_alias", 60, 0, 0, NULL);
	KT_ASSERT(t && c);
	KT_EXPECT(c == t);
	KT_EXPECT(!strcmp(kmem_cache_name(c), "kt_si_target"));
	char *text = kt_read("/proc/slabinfo", NULL);
	KT_ASSERT(text);
	KT_EXPECT(line_pos(text, "kt_si_alias") < 0);
	KT_EXPECT(line_pos(text, "kt_si_target") >= 0);
	KT_EXPECT(line_pos(text, "kmalloc-64") >= 0);
	free(text);
	kmem_cache_destroy(c);
	kmem_cache_destroy(t);
}

KTEST(slabinfo_is_read_only)
{
	if (slab_test_is_slub() || slab_allocator == SLAB_ALLOCATOR_SLOB)
		KT_EXPECT(kmem_write("/proc/slabinfo", "kmalloc-64 1 1 1") == -EACCES);
	else	/* SLAB's tunables are written there; a limit of 0 is accepted and changes nothing */
		KT_EXPECT(kmem_write("/proc/slabinfo", "kmalloc-64 0 1 1") == 0);
	char small[8];
	ssize_t n = kmem_read("/proc/slabinfo", small, sizeof(small));
	KT_EXPECT(n > (ssize_t)sizeof(small));	/* snprintf semantics */
	KT_EXPECT(!strcmp(small, "slabinf"));
}

/* ---- /proc/meminfo ----------------------------------------------------- */

KTEST(meminfo_renderer_exact)
{
	char got[1024];
	struct seq_buf s = { .buf = got, .size = sizeof(got) };
	struct meminfo mi = { .totalram = 16384, .freeram = 15000, .available = 14321,
			      .sreclaimable = 3, .sunreclaim = 250 };

	render_meminfo(&s, &mi);
	seq_finish(&s);
	KT_ASSERT_STREQ(got,
			"MemTotal:          65536 kB\n"
			"MemFree:           60000 kB\n"
			"MemAvailable:      57284 kB\n"
			"Buffers:               0 kB\n"
			"Cached:                0 kB\n"
			"SwapCached:            0 kB\n"
			"SwapTotal:             0 kB\n"
			"SwapFree:              0 kB\n"
			"KReclaimable:         12 kB\n"
			"Slab:               1012 kB\n"
			"SReclaimable:         12 kB\n"
			"SUnreclaim:         1000 kB\n");
	/* An 8-digit value fills the column: "MemTotal:       16284276 kB". */
	mi.totalram = 4071069;
	s = (struct seq_buf){ .buf = got, .size = sizeof(got) };
	render_meminfo(&s, &mi);
	seq_finish(&s);
	KT_EXPECT(!strncmp(got, "MemTotal:       16284276 kB\n", 28));
}

KTEST(mem_available_formula)
{
	/* free - min(high, managed) + reclaimable - min(reclaimable / 2, low) */
	KT_EXPECT(si_mem_available(10000, 16384, 100, 120, 0) == 9880);
	KT_EXPECT(si_mem_available(10000, 16384, 100, 120, 50) == 9880 + 25);
	KT_EXPECT(si_mem_available(10000, 16384, 100, 120, 1000) == 9880 + 900);
	KT_EXPECT(si_mem_available(100, 16384, 100, 120, 0) == 0);	/* never negative */
	KT_EXPECT(si_mem_available(100, 50, 100, 120, 0) == 50);	/* reserve capped */
}

static long meminfo_kb(const char *text, const char *label)
{
	size_t n = strlen(label);

	for (const char *p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, label, n) && p[n] == ':')
			return strtol(p + n + 1, NULL, 10);
	return -1;
}

KTEST(meminfo_live_values)
{
	char *text = kt_read("/proc/meminfo", NULL);
	KT_ASSERT(text);
	/* Every line: a 16-column label, 8-column value, " kB". */
	for (const char *p = text; *p; p = strchr(p, '\n') + 1) {
		size_t len = strcspn(p, "\n");
		KT_EXPECT(len == 27 && !strncmp(p + 24, " kB", 3) && p[16 - 1] == ' ' &&
			  memchr(p, ':', 16));
		if (!strchr(p, '\n'))
			break;
	}
	long managed = kt_zoneinfo("managed"), low = kt_zoneinfo("low"), high = kt_zoneinfo("high");
	long free_pages = kt_vmstat("nr_free_pages");
	long srecl = kt_vmstat("nr_slab_reclaimable"), sunrecl = kt_vmstat("nr_slab_unreclaimable");
	KT_EXPECT(meminfo_kb(text, "MemTotal") == managed * 4);
	KT_EXPECT(meminfo_kb(text, "MemFree") == free_pages * 4);
	KT_EXPECT(meminfo_kb(text, "SReclaimable") == srecl * 4);
	KT_EXPECT(meminfo_kb(text, "SUnreclaim") == sunrecl * 4);
	KT_EXPECT(meminfo_kb(text, "Slab") == (srecl + sunrecl) * 4);
	KT_EXPECT(meminfo_kb(text, "MemAvailable") ==
		  (long)si_mem_available((unsigned long)free_pages, (unsigned long)managed,
					 (unsigned long)low, (unsigned long)high,
					 (unsigned long)srecl) * 4);
	free(text);
}

KTEST(meminfo_tracks_slab_pages)
{
	if (slab_allocator == SLAB_ALLOCATOR_SLOB) {
		/* test_slob_api checks Slab on SLOB. */
		fprintf(stderr, "  skipped on SLOB: its heap pages are shared, so unreclaimable whatever the cache\n");
		return;
	}
	struct kmem_cache *r = kmem_cache_create("kt_mi_recl", 128, 0,
						 SLAB_RECLAIM_ACCOUNT | SLAB_NO_MERGE, NULL);
	KT_ASSERT(r);
	char *before = kt_read("/proc/meminfo", NULL);
	void *obj = kmem_cache_alloc(r, GFP_KERNEL);
	void *big = kmalloc(64 * 1024, GFP_KERNEL);	/* order 4, from the page allocator */
	char *after = kt_read("/proc/meminfo", NULL);
	KT_ASSERT(before && after && obj && big);
	KT_EXPECT(meminfo_kb(after, "SReclaimable") - meminfo_kb(before, "SReclaimable") == 4);
	KT_EXPECT(meminfo_kb(after, "SUnreclaim") - meminfo_kb(before, "SUnreclaim") == 64);
	KT_EXPECT(meminfo_kb(after, "Slab") - meminfo_kb(before, "Slab") == 68);
	KT_EXPECT(meminfo_kb(after, "KReclaimable") == meminfo_kb(after, "SReclaimable"));
	free(before);
	free(after);
	kfree(big);
	kmem_cache_free(r, obj);
	kmem_cache_destroy(r);
}

KTEST_MAIN(if (slab_test_init("mem=64M nr_cpus=2 slub_sheaves=0")) { printf("kmem_init failed\n"); return 1; })
