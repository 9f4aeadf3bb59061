// SPDX-License-Identifier: MIT
/*
 * /sys/kernel/debug/slab/<cache>/alloc_traces and free_traces
 * (src/slab/slub_traces.c): the directory lists the SLAB_STORE_USER caches
 * only; each line has the kernel's format; counts are the live objects per
 * call site, full slabs included (the full list), ages grow, pids are the
 * allocating threads; free_traces shows where live objects were last freed
 * ("<not-available>" if never); "No data" when nothing is allocated.
 */
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kmem.h>

#include "ktest.h"
#include "lib/kt_util.h"
#include "slab/slab.h"

#define GFP GFP_KERNEL
#define ROOT "/sys/kernel/debug/slab"

/* Contents of @path, or "ERR<errno>". Four rotating buffers. */
static const char *rd(const char *path)
{
	static char bufs[4][1 << 15];
	static int next;
	char *b = bufs[next++ & 3];
	ssize_t n = kmem_read(path, b, sizeof(bufs[0]));

	if (n < 0)
		snprintf(b, sizeof(bufs[0]), "ERR%d", (int)-n);
	return b;
}

static const char *traces(const char *cache, const char *file)
{
	char path[256];

	snprintf(path, sizeof(path), ROOT "/%s/%s", cache, file);
	return rd(path);
}

#define NOBJ 64
static void *objs[3][NOBJ * 8];

static __attribute__((noinline)) void *alloc_site_a(struct kmem_cache *s)
{
	void *p = kmem_cache_alloc(s, GFP);
	__asm__ volatile("" ::: "memory");
	return p;
}

static __attribute__((noinline)) void *alloc_site_b(struct kmem_cache *s)
{
	void *p = kmem_cache_alloc(s, GFP);
	__asm__ volatile("" ::: "memory");
	return p;
}

static __attribute__((noinline)) void free_site(struct kmem_cache *s, void *p)
{
	kmem_cache_free(s, p);
	__asm__ volatile("" ::: "memory");
}

/*
 * Every line: "%7ld " count, the site, age=N or age=min/avg/max, pid=N or
 * pid=min-max, and cpus=<list> on a machine with more than one CPU.
 */
static int lines_well_formed(const char *text)
{
	regex_t re;
	int n = 0;

	if (regcomp(&re, "^ *[0-9]+ [^ ]+( \\[[^]]+\\])? age=[0-9]+(/[0-9]+/[0-9]+)? "
			 "pid=[0-9]+(-[0-9]+)?( cpus=[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)?$",
		    REG_EXTENDED | REG_NOSUB)) {
		KT_FAIL("regcomp");
		return -1;
	}
	for (const char *l = text; *l; n++) {
		const char *end = strchr(l, '\n');
		if (!end)
			return -1;
		char line[512];
		size_t len = (size_t)(end - l) < sizeof(line) - 1 ? (size_t)(end - l) : sizeof(line) - 1;
		memcpy(line, l, len);
		line[len] = '\0';
		/* The count is right-aligned in 7 columns. */
		if (len < 9 || line[7] != ' ' || line[6] == ' ' || regexec(&re, line, 0, NULL, 0)) {
			KT_FAIL("bad line '%s'", line);
			n = -1;
			break;
		}
		l = end + 1;
	}
	regfree(&re);
	return n;
}

/* The main program's load address, for an "object+0xoff" site. */
static unsigned long main_base(void)
{
	return _r_debug.r_map ? _r_debug.r_map->l_addr : 0;
}

/*
 * Does line @nr of @text (from 0) name a site inside @fn (whose name is
 * @name), with @count objects?  The site is "name+0xoff/0xsize" when the
 * dynamic symbol table knows @fn, else "<program>+0xoff".
 */
static int line_is(const char *text, int nr, long count, const void *fn, const char *name)
{
	const char *l = text;

	for (int i = 0; i < nr && l; i++)
		l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL;
	if (!l || !*l)
		return 0;
	long c;
	char site[256];
	if (sscanf(l, "%ld %255s", &c, site) != 2 || c != count)
		return 0;
	char *plus = strrchr(site, '+');
	if (!plus)
		return 0;
	unsigned long off = strtoul(plus + 1, NULL, 16);
	*plus = '\0';
	if (!strcmp(site, name))
		return off < 256;
	unsigned long addr = main_base() + off;
	return addr > (unsigned long)fn && addr < (unsigned long)fn + 256;
}

/* The value after @key on line @nr (age=, pid=): its first number. */
static long field(const char *text, int nr, const char *key)
{
	const char *l = text;

	for (int i = 0; i < nr && l; i++)
		l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL;
	const char *at = l ? strstr(l, key) : NULL;
	const char *eol = l ? strchr(l, '\n') : NULL;
	return at && (!eol || at < eol) ? strtol(at + strlen(key), NULL, 10) : -1;
}

KTEST(directory_lists_the_store_user_caches)
{
	struct kmem_cache *u = kmem_cache_create("kt_tr_dir", 64, 0, SLAB_STORE_USER, NULL);
	struct kmem_cache *plain = kmem_cache_create("kt_tr_plain", 64, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(u && plain);

	KT_EXPECT(strstr(rd(ROOT), "kt_tr_dir\n"));
	KT_EXPECT(!strstr(rd(ROOT), "kt_tr_plain"));
	KT_EXPECT(strstr(rd("/sys/kernel/debug"), "slab\n"));
	KT_EXPECT(!strcmp(rd(ROOT "/kt_tr_dir"), "alloc_traces\nfree_traces\n"));
	KT_EXPECT(!strcmp(rd(ROOT "/kt_tr_plain/alloc_traces"), "ERR2"));	/* ENOENT */
	KT_EXPECT(!strcmp(rd(ROOT "/kt_tr_dir/nothing"), "ERR2"));
	KT_EXPECT(!strcmp(rd(ROOT "/kt_tr_dir/alloc_traces/x"), "ERR2"));
	KT_EXPECT(kmem_write(ROOT "/kt_tr_dir/alloc_traces", "1") == -EACCES);

	/* Nothing allocated: "No data", as the kernel prints. */
	KT_EXPECT(!strcmp(traces("kt_tr_dir", "alloc_traces"), "No data\n"));
	KT_EXPECT(!strcmp(traces("kt_tr_dir", "free_traces"), "No data\n"));

	kmem_cache_destroy(plain);
	kmem_cache_destroy(u);
	KT_EXPECT(!strstr(rd(ROOT), "kt_tr_dir\n"));
	KT_EXPECT(!strcmp(traces("kt_tr_dir", "alloc_traces"), "ERR2"));
}

KTEST(alloc_traces_count_the_live_objects_of_each_site)
{
	struct kmem_cache *s = kmem_cache_create("kt_tr_sites", 64, 0, SLAB_STORE_USER, NULL);
	KT_ASSERT(s);

	for (int i = 0; i < 7; i++)
		KT_ASSERT(objs[0][i] = alloc_site_a(s));
	for (int i = 0; i < 3; i++)
		KT_ASSERT(objs[1][i] = alloc_site_b(s));
	free_site(s, objs[0][5]);
	free_site(s, objs[0][6]);
	usleep(30 * 1000);

	const char *t = traces("kt_tr_sites", "alloc_traces");
	KT_EXPECT(lines_well_formed(t) == 2);
	/* The most objects first. */
	KT_EXPECT(line_is(t, 0, 5, (void *)alloc_site_a, "alloc_site_a"));
	KT_EXPECT(line_is(t, 1, 3, (void *)alloc_site_b, "alloc_site_b"));
	KT_EXPECT(field(t, 0, "pid=") == gettid() && field(t, 1, "pid=") == gettid());
	KT_EXPECT(field(t, 0, "age=") >= 30 && field(t, 0, "age=") < 60000);

	/* None of the live objects was ever freed. */
	t = traces("kt_tr_sites", "free_traces");
	KT_EXPECT(lines_well_formed(t) == 1);
	KT_EXPECT(!strncmp(t, "      8 <not-available> age=", 28));

	/* An object freed and allocated again: free_traces names where it was freed. */
	KT_ASSERT(objs[0][5] = alloc_site_a(s));
	t = traces("kt_tr_sites", "free_traces");
	KT_EXPECT(lines_well_formed(t) == 2);
	KT_EXPECT(!strncmp(t, "      8 <not-available> ", 24));
	KT_EXPECT(line_is(t, 1, 1, (void *)free_site, "free_site"));

	for (int i = 0; i < 6; i++)
		free_site(s, objs[0][i]);
	for (int i = 0; i < 3; i++)
		free_site(s, objs[1][i]);
	KT_EXPECT(!strcmp(traces("kt_tr_sites", "alloc_traces"), "No data\n"));
	kmem_cache_destroy(s);
}

/* A SLAB_STORE_USER cache @name of @size-byte objects, and @slabs full slabs of it in objs[2]; objects a slab. */
static int full_slabs(struct kmem_cache **sp, const char *name, unsigned int size, int slabs)
{
	*sp = kmem_cache_create(name, size, 0, SLAB_STORE_USER, NULL);
	if (!*sp)
		return 0;
	int per = atoi(kt_slab_attr(name, "objs_per_slab"));
	if (per <= 0 || per * slabs > NOBJ * 8)
		return 0;
	for (int i = 0; i < slabs * per; i++)
		if (!(objs[2][i] = alloc_site_a(*sp)))
			return 0;
	return per;
}

KTEST(full_slabs_are_counted)
{
	struct kmem_cache *s;
	/* Three full slabs: on no partial list, but on the full one. */
	int per = full_slabs(&s, "kt_tr_full", 64, 3);
	KT_ASSERT(per > 0);
	KT_EXPECT(!strcmp(kt_slab_attr("kt_tr_full", "partial"), "0\n"));
	const char *t = traces("kt_tr_full", "alloc_traces");
	KT_EXPECT(lines_well_formed(t) == 1);
	KT_EXPECT(line_is(t, 0, 3 * per, (void *)alloc_site_a, "alloc_site_a"));
	KT_EXPECT(kmem_write("/sys/kernel/slab/kt_tr_full/validate", "1") == 0);

	/* One free in each: back on the partial list, off the full one. */
	for (int k = 0; k < 3; k++)
		free_site(s, objs[2][k * per]);
	KT_EXPECT(atoi(kt_slab_attr("kt_tr_full", "partial")) == 3);
	t = traces("kt_tr_full", "alloc_traces");
	KT_EXPECT(line_is(t, 0, 3 * per - 3, (void *)alloc_site_a, "alloc_site_a"));
	for (int i = 0; i < 3 * per; i++)
		if (i % per)
			free_site(s, objs[2][i]);
	KT_EXPECT(!strcmp(traces("kt_tr_full", "alloc_traces"), "No data\n"));
	KT_EXPECT(kmem_cache_shrink(s) == 0);
	kmem_cache_destroy(s);
}

/*
 * A slab given up on after a write after free is on no list: freeing its
 * live objects must not take it off the full list it is not on.
 */
KTEST(a_slab_given_up_on_frees_its_live_objects)
{
	struct kmem_cache *s = kmem_cache_create("kt_tr_giveup", 64, 0, SLAB_STORE_USER | SLAB_POISON, NULL);
	KT_ASSERT(s);
	unsigned char *a = alloc_site_a(s), *b = alloc_site_a(s);
	KT_ASSERT(a && b);
	free_site(s, b);
	b[5] = 0x41;			/* after free */
	struct kt_capture cap;
	kt_capture_begin(&cap);
	void *c = alloc_site_b(s);	/* reported; the slab is given up on */
	char *out = kt_capture_end(&cap);
	KT_EXPECT(strstr(out, "Marking all objects used"));
	free(out);
	free_site(s, a);
	free_site(s, c);
	KT_EXPECT(lines_well_formed(traces("kt_tr_giveup", "alloc_traces")) >= 0);
	kmem_cache_destroy(s);
}

/* A bulk free of a full slab's every object: per object on a debug cache, the full list kept. */
KTEST(bulk_free_of_a_whole_full_slab)
{
	struct kmem_cache *s;
	/* Eight full slabs, then one object freed in each of the last seven: seven partial. */
	int per = full_slabs(&s, "kt_tr_bulk", 256, 8);
	KT_ASSERT(per > 0);
	for (int k = 1; k < 8; k++)
		free_site(s, objs[2][k * per]);
	KT_EXPECT(atoi(kt_slab_attr("kt_tr_bulk", "partial")) == 7);
	/* The first slab's objects, all of them, in one bulk free. */
	kmem_cache_free_bulk(s, (size_t)per, objs[2]);
	KT_EXPECT(kmem_write("/sys/kernel/slab/kt_tr_bulk/validate", "1") == 0);
	const char *t = traces("kt_tr_bulk", "alloc_traces");
	KT_EXPECT(line_is(t, 0, 7 * per - 7, (void *)alloc_site_a, "alloc_site_a"));
	for (int k = 1; k < 8; k++)
		for (int i = 1; i < per; i++)
			free_site(s, objs[2][k * per + i]);
	KT_EXPECT(!strcmp(traces("kt_tr_bulk", "alloc_traces"), "No data\n"));
	kmem_cache_destroy(s);
}

struct site_arg {
	struct kmem_cache *s;
	void **out;
	int n;
	pid_t tid;
};

static void *thread_alloc(void *arg)
{
	struct site_arg *a = arg;

	a->tid = gettid();
	for (int i = 0; i < a->n; i++)
		a->out[i] = alloc_site_b(a->s);
	return NULL;
}

KTEST(threads_show_as_a_pid_range)
{
	struct kmem_cache *s = kmem_cache_create("kt_tr_threads", 128, 0, SLAB_STORE_USER, NULL);
	KT_ASSERT(s);
	struct site_arg a[2] = { { s, objs[0], 10, 0 }, { s, objs[1], 20, 0 } };
	pthread_t th[2];

	for (int i = 0; i < 2; i++)
		KT_ASSERT(pthread_create(&th[i], NULL, thread_alloc, &a[i]) == 0);
	for (int i = 0; i < 2; i++)
		KT_ASSERT(pthread_join(th[i], NULL) == 0);
	const char *t = traces("kt_tr_threads", "alloc_traces");
	KT_EXPECT(lines_well_formed(t) == 1);
	KT_EXPECT(line_is(t, 0, 30, (void *)alloc_site_b, "alloc_site_b"));
	char want[64];
	pid_t lo = a[0].tid < a[1].tid ? a[0].tid : a[1].tid, hi = a[0].tid ^ a[1].tid ^ lo;
	snprintf(want, sizeof(want), " pid=%d-%d", lo, hi);
	KT_EXPECT(strstr(t, want));
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < a[i].n; k++)
			free_site(s, a[i].out[k]);
	kmem_cache_destroy(s);
}

KTEST_MAIN(
	if (kmem_init("mem=64M nr_cpus=2")) { printf("kmem_init failed\n"); return 1; }
)
