// SPDX-License-Identifier: MIT
/*
 * /sys/kernel/debug/slab/<cache>/alloc_traces and free_traces (kernel
 * mm/slub.c, debugfs; reference kernel-mm.md §1.8): for the caches with
 * SLAB_STORE_USER (slab_debug=U), every call site that allocated an object
 * still allocated, with how many, their ages, threads and CPUs.  A leak
 * shows up as a site whose count only grows.  free_traces reads the same
 * objects' other track: where each was last freed before it was allocated
 * again ("<not-available>" if never).
 *
 *   $ cat /sys/kernel/debug/slab/kmalloc-64/alloc_traces
 *         3 leaky+0x1c/0x40 [prog] age=5/5/6 pid=4242 cpus=1
 *
 * As in the kernel: one line per site, the most objects first; "%7ld "
 * count, the site (kernel %pS), age=min/avg/max (or one value when they
 * agree), pid=min-max, cpus= (more than one CPU only), "No data" for none.
 * Differences: ages are milliseconds (HZ=1000), a site is symbol+off/size
 * only where the dynamic symbol table names it, else object+offset (what
 * addr2line takes) or the bare address (no object: JIT code), and there
 * is no stack depot, so no stack follows.
 *
 * The walk holds list_lock over the node's partial and full lists (debug
 * caches have no cpu slabs or sheaves: every object is on one of them);
 * the sites are named and printed after every slab lock is dropped.  The
 * site table and its hash live in their own mappings, outside managed
 * memory.  kmalloc caches that keep the requested size (slab_debug=UZ's
 * kmalloc red zone) group by (site, waste) and print waste=total/each, as
 * the kernel does.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "introspect/kmemfs.h"
#include "platform/os.h"
#include "slab/slab_common.h"
#include "slab/slub/slub_internal.h"

#define TRACES_ROOT	"/sys/kernel/debug/slab"
#define LOC_MAX_CPUS	1024

struct location {
	unsigned long count;
	unsigned long addr;
	unsigned long waste;		/* object_size - the size asked for (kmalloc caches) */
	unsigned long long sum_time;	/* ages, ms */
	long min_time, max_time;
	long min_pid, max_pid;
	unsigned long cpus[LOC_MAX_CPUS / (8 * sizeof(unsigned long))];
};

/*
 * The sites found, and a hash of them by (addr, waste): the kernel keeps
 * its table sorted and inserts with a memmove, quadratic in the sites (80k
 * sites of a JIT took 42 s here, list_lock held all along).
 */
struct loc_track {
	struct location *loc;
	unsigned long count, max;
	unsigned long *hash;		/* index + 1 into loc, 0: empty; 2 * max slots */
	bool oom;
};

static void free_loc_track(struct loc_track *t)
{
	if (t->loc)
		os_unreserve(t->loc, t->max * sizeof(struct location));
	if (t->hash)
		os_unreserve(t->hash, 2 * t->max * sizeof(unsigned long));
}

static unsigned long loc_slot(const struct loc_track *t, unsigned long addr, unsigned long waste)
{
	uint64_t h = (addr ^ (waste << 48)) * 0x9e3779b97f4a7c15ull;

	return (unsigned long)(h >> 32) & (2 * t->max - 1);
}

static bool grow_loc_track(struct loc_track *t)
{
	unsigned long max = t->max ? 2 * t->max : PAGE_SIZE / sizeof(unsigned long);
	struct location *l = os_map(max * sizeof(struct location));
	unsigned long *hash = os_map(2 * max * sizeof(unsigned long));

	if (!l || !hash) {
		if (l)
			os_unreserve(l, max * sizeof(struct location));
		if (hash)
			os_unreserve(hash, 2 * max * sizeof(unsigned long));
		return false;
	}
	if (t->count)
		memcpy(l, t->loc, t->count * sizeof(struct location));
	free_loc_track(t);
	t->loc = l;
	t->hash = hash;		/* fresh mappings read zero: empty */
	t->max = max;
	for (unsigned long i = 0; i < t->count; i++) {
		unsigned long k = loc_slot(t, l[i].addr, l[i].waste);
		while (hash[k])
			k = (k + 1) & (2 * max - 1);
		hash[k] = i + 1;
	}
	return true;
}

/* Kernel add_location(): one more object of the site (@track's caller, @waste). */
static void add_location(struct loc_track *t, const struct slub_track *track, unsigned long waste,
			 uint64_t now)
{
	long age = track->when && now > track->when ? (long)((now - track->when) / 1000000) : 0;
	unsigned long k = loc_slot(t, track->addr, waste);
	struct location *l = NULL;

	for (; t->hash[k]; k = (k + 1) & (2 * t->max - 1)) {
		struct location *c = &t->loc[t->hash[k] - 1];
		if (c->addr == track->addr && c->waste == waste) {
			l = c;
			break;
		}
	}
	if (!l) {
		if (t->count == t->max) {
			if (!grow_loc_track(t)) {
				t->oom = true;
				return;
			}
			k = loc_slot(t, track->addr, waste);
			while (t->hash[k])
				k = (k + 1) & (2 * t->max - 1);
		}
		l = &t->loc[t->count++];
		t->hash[k] = t->count;
		memset(l, 0, sizeof(*l));
		l->addr = track->addr;
		l->waste = waste;
		l->min_time = l->max_time = age;
		l->min_pid = l->max_pid = track->pid;
	}
	l->count++;
	l->sum_time += (unsigned long long)age;
	if (age < l->min_time)
		l->min_time = age;
	if (age > l->max_time)
		l->max_time = age;
	if (track->pid < l->min_pid)
		l->min_pid = track->pid;
	if (track->pid > l->max_pid)
		l->max_pid = track->pid;
	if (track->cpu >= 0 && track->cpu < LOC_MAX_CPUS)
		l->cpus[track->cpu / (8 * sizeof(long))] |= 1UL << (track->cpu % (8 * sizeof(long)));
}

/* Kernel process_slab(): the allocated objects of @slab; list_lock held. */
static void process_slab(struct loc_track *t, struct kmem_cache *s, struct slab *slab,
			 bool free_track, uint64_t now)
{
	unsigned long map[SLAB_MAP_BITS / (8 * sizeof(unsigned long))];
	unsigned int objects = slab_free_map(s, slab, map);
	char *base = (char *)slab->obj_base;

	for (unsigned int i = 0; i < objects && !t->oom; i++) {
		if (slab_map_test(map, i))
			continue;
		void *p = base + (size_t)i * s->size;
		unsigned long waste = free_track ? 0 : s->object_size - slub_orig_size(s, p);
		add_location(t, slub_get_track(s, p, free_track), waste, now);
	}
}

/* The most objects first; a tie by address, then waste, so the order is the same every time. */
static int cmp_loc_by_count(const void *a, const void *b)
{
	const struct location *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->waste < y->waste ? -1 : x->waste > y->waste;
}

/*
 * The site, as %pS would name it: symbol+0xoff/0xsize, with " [object]"
 * outside the main program (the kernel's " [module]"); object+0xoff when
 * no dynamic symbol covers it; the bare address outside every object (JIT
 * code).  No slab lock held: dladdr1() takes the loader's lock, which a
 * library constructor holds while it creates a cache.
 */
static void print_site(struct seq_buf *sb, unsigned long addr)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	struct link_map *map = NULL;

	if (!dladdr1((void *)addr, &info, (void **)&map, RTLD_DL_LINKMAP) || !map) {
		seq_printf(sb, "0x%lx", addr);
		return;
	}
	const char *obj = info.dli_fname ? strrchr(info.dli_fname, '/') : NULL;
	obj = obj ? obj + 1 : info.dli_fname;
	/* The main program comes first in the loader's list: no [module] for it. */
	bool main_program = map == _r_debug.r_map;
	if (dladdr1((void *)addr, &info, (void **)&sym, RTLD_DL_SYMENT) && info.dli_sname && sym &&
	    info.dli_saddr && (unsigned long)info.dli_saddr <= addr &&
	    addr - (unsigned long)info.dli_saddr < (sym->st_size ? sym->st_size : 1)) {
		seq_printf(sb, "%s+0x%lx/0x%lx", info.dli_sname, addr - (unsigned long)info.dli_saddr,
			   (unsigned long)sym->st_size);
		if (!main_program && obj && *obj)
			seq_printf(sb, " [%s]", obj);
		return;
	}
	char name[256];
	seq_puts(sb, slub_caller_name(addr, name, sizeof(name)));
}

/* A CPU list, as %*pbl prints a cpumask: "0-3,6". */
static void print_cpus(struct seq_buf *sb, const unsigned long *cpus)
{
	bool first = true;

	for (int c = 0; c < LOC_MAX_CPUS; c++) {
		if (!(cpus[c / (8 * sizeof(long))] & (1UL << (c % (8 * sizeof(long))))))
			continue;
		int end = c;
		while (end + 1 < LOC_MAX_CPUS &&
		       (cpus[(end + 1) / (8 * sizeof(long))] & (1UL << ((end + 1) % (8 * sizeof(long))))))
			end++;
		seq_printf(sb, end > c ? "%s%d-%d" : "%s%d", first ? "" : ",", c, end);
		first = false;
		c = end;
	}
}

static void print_location(struct seq_buf *sb, const struct location *l)
{
	seq_printf(sb, "%7ld ", (long)l->count);
	if (l->addr)
		print_site(sb, l->addr);
	else
		seq_puts(sb, "<not-available>");
	if (l->waste)
		seq_printf(sb, " waste=%lu/%lu", l->count * l->waste, l->waste);
	if (l->sum_time != (unsigned long long)l->min_time)
		seq_printf(sb, " age=%ld/%llu/%ld", l->min_time, l->sum_time / l->count, l->max_time);
	else
		seq_printf(sb, " age=%ld", l->min_time);
	if (l->min_pid != l->max_pid)
		seq_printf(sb, " pid=%ld-%ld", l->min_pid, l->max_pid);
	else
		seq_printf(sb, " pid=%ld", l->min_pid);
	bool any = false;
	for (size_t i = 0; i < sizeof(l->cpus) / sizeof(l->cpus[0]); i++)
		any |= l->cpus[i] != 0;
	if (os_nr_cpus() > 1 && any) {
		seq_puts(sb, " cpus=");
		print_cpus(sb, l->cpus);
	}
	seq_putc(sb, '\n');
}

/* Gather @s's sites into @t; slab_mutex held (keeps @s alive).  0 or -ENOMEM. */
static int traces_collect(struct loc_track *t, struct kmem_cache *s, bool free_track)
{
	struct kmem_cache_node *n = &slub_of(s)->node;
	uint64_t now = os_now_ns();
	struct slab *slab;

	if (!grow_loc_track(t))
		return -ENOMEM;
	kmem_lock(&n->list_lock);
	list_for_each_entry(slab, &n->partial, slab_list)
		process_slab(t, s, slab, free_track, now);
	list_for_each_entry(slab, &n->full, slab_list)
		process_slab(t, s, slab, free_track, now);
	kmem_unlock(&n->list_lock);
	return t->oom ? -ENOMEM : 0;
}

/* The file's contents from @t, with no lock held (sites are named by the loader). */
static void traces_print(struct seq_buf *sb, struct loc_track *t)
{
	qsort(t->loc, t->count, sizeof(struct location), cmp_loc_by_count);
	for (unsigned long i = 0; i < t->count; i++)
		print_location(sb, &t->loc[i]);
	if (!t->count)
		seq_puts(sb, "No data\n");
}

/* ---- the subtree ------------------------------------------------------ */

/* The SLAB_STORE_USER cache named @name (the kernel's debugfs names it by s->name); slab_mutex held. */
static struct kmem_cache *find_traced(const char *name, size_t len)
{
	struct kmem_cache *s;

	list_for_each_entry(s, &slab_caches, list)
		if ((s->flags & SLAB_STORE_USER) && !slub_of(s)->dying && strlen(s->name) == len &&
		    !strncmp(s->name, name, len))
			return s;
	return NULL;
}

/*
 * "<root>[/<cache>[/<file>]]": the cache (NULL for the root) and the file
 * (NULL for a directory), or -ENOENT.
 */
static int resolve(const char *path, struct kmem_cache **sp, const char **file)
{
	const char *rest = path + strlen(TRACES_ROOT);

	*sp = NULL;
	*file = NULL;
	/* SLUB's debugfs: not there when another back-end runs (its caches are not SLUB's). */
	if (slab_allocator != SLAB_ALLOCATOR_SLUB)
		return -ENOENT;
	if (!*rest)
		return 0;
	if (*rest++ != '/')
		return -ENOENT;
	size_t len = strcspn(rest, "/");
	if (!len || !(*sp = find_traced(rest, len)))
		return -ENOENT;
	if (!rest[len])
		return 0;
	*file = rest + len + 1;
	if (strcmp(*file, "alloc_traces") && strcmp(*file, "free_traces"))
		return -ENOENT;
	return 0;
}

static int traces_dir_show(struct seq_buf *sb, const char *path)
{
	struct loc_track t = { 0 };
	struct kmem_cache *s;
	const char *file;

	kmem_lock(&slab_mutex);
	int rc = resolve(path, &s, &file);
	if (!rc)
		rc = file ? traces_collect(&t, s, !strcmp(file, "free_traces")) : -EISDIR;
	kmem_unlock(&slab_mutex);
	if (!rc)
		traces_print(sb, &t);
	free_loc_track(&t);
	return rc;
}

/* Kernel slab_debugfs_root: one directory per SLAB_STORE_USER cache, in the order they were made. */
static int traces_dir_list(struct seq_buf *sb, const char *path)
{
	struct kmem_cache *s;
	const char *file;

	kmem_lock(&slab_mutex);
	int rc = resolve(path, &s, &file);
	if (!rc && file)
		rc = -ENOTDIR;
	else if (!rc && s)
		seq_puts(sb, "alloc_traces\nfree_traces\n");
	else if (!rc)
		list_for_each_entry(s, &slab_caches, list)
			if ((s->flags & SLAB_STORE_USER) && !slub_of(s)->dying)
				seq_printf(sb, "%s\n", s->name);
	kmem_unlock(&slab_mutex);
	return rc;
}

KMEMFS_DIR(TRACES_ROOT "/", traces_dir_show, NULL, traces_dir_list);
