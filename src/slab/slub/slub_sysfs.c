// SPDX-License-Identifier: MIT
/*
 * /sys/kernel/slab/<cache>/<attribute> (kernel mm/slub.c, CONFIG_SYSFS part).
 *
 * Naming, as in the kernel's sysfs_slab_add(): a cache that can never be
 * merged has a directory under its own name; a mergeable one gets a unique
 * id (":<flags>-<size>", see slab_unique_id()) and every name that created
 * or aliased it is a symlink to that directory.  Here a "symlink" is an
 * entry of the listing that reads like its target.  Listings are sorted
 * (as `ls` shows them).
 *
 * Attributes and formats follow the kernel (sysfs_emit strings, modes 0400
 * for read-only, 0600 for writable; like the kernel, validate and shrink are
 * 0600 and read empty).  Values counted per node print "<total> N0=<n>" as
 * on a CONFIG_NUMA kernel with one node (" N0=" only when non-zero).
 * Differences, all because "CPUs" are threads here:
 *  - SLUB_STATS files print the total then " C<i>=<n>" for each live thread
 *    using the cache with a non-zero count, i numbering those threads in
 *    the order they first used any cache; counts of exited threads are in
 *    the total only.  slabs_cpu_partial numbers its C<i> the same way.
 *  - cpu_slabs adds every thread's cpu partial slabs (the kernel skips a
 *    CPU's partial slabs while it has no cpu slab, a short-lived state).
 *  - writing cpu_partial flushes the writing thread's sheaves and cpu slab only.
 *  - validate accepts "1" for every cache, not only debug ones (checks the
 *    node partial slabs; errors are reported on stderr, the write succeeds,
 *    as in the kernel).
 *  - sheaf_capacity follows the newest trees, where every cache that is not
 *    a debug one has sheaves (60/28/20/12/4 by slot size, slub_layout.h); 6.18
 *    shows it non-zero only for caches that asked for sheaves.  Boot with
 *    slub_sheaves=0 for 6.18's values (0 here, as there for most caches).
 * slab_thrash_ratio (SLUB slab_thrash_ratio, Rientjes 2009) is a percentage of objs_per_slab, stored as
 * a number of objects: it reads back as the ratio that object count means
 * (20 on a 64-object slab -> 12 objects -> reads 18).
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "introspect/kmemfs.h"
#include "slab/slab.h"
#include "slab/slab_common.h"
#include "slab/slub/slub.h"
#include "slab/slub/slub_sysfs.h"

#define SLAB_SYSFS_ROOT		"/sys/kernel/slab"
#define SYSFS_MAX_THREADS	256	/* per-thread values shown (kernel: PAGE_SIZE of output) */

/* ---- names ------------------------------------------------------------ */

/* The directory of @s: its own name, or its unique id if it may be merged. */
static const char *cache_dir_name(const struct kmem_cache *s, char *buf)
{
	if (slab_unmergeable(s))
		return s->name;
	slab_unique_id(buf, SLAB_UNIQUE_ID_MAX, s->flags, s->size);
	return buf;
}

/* The cache a directory or symlink @name stands for; slab_mutex held. */
static struct kmem_cache *find_cache(const char *name)
{
	char id[SLAB_UNIQUE_ID_MAX];
	struct kmem_cache *s;
	struct slab_alias *a;

	list_for_each_entry(s, &slab_caches, list)
		if (!strcmp(cache_dir_name(s, id), name))
			return s;
	/* The creator's name of a mergeable cache is its first symlink. */
	list_for_each_entry(s, &slab_caches, list)
		if (!slab_unmergeable(s) && !strcmp(s->name, name))
			return s;
	list_for_each_entry(a, &slab_aliases, list)
		if (!strcmp(a->name, name))
			return a->cache;
	return NULL;
}

/* Keep in @best the smallest candidate greater than @after. */
static void consider(const char *cand, const char *after, char *best, bool *found)
{
	if ((!after || strcmp(cand, after) > 0) && (!*found || strcmp(cand, best) < 0)) {
		snprintf(best, KMEM_CACHE_NAME_MAX, "%s", cand);
		*found = true;
	}
}

/* The next entry of /sys/kernel/slab after @after (NULL: the first); slab_mutex held. */
static bool root_next(const char *after, char *best)
{
	char id[SLAB_UNIQUE_ID_MAX];
	struct kmem_cache *s;
	struct slab_alias *a;
	bool found = false;

	list_for_each_entry(s, &slab_caches, list) {
		consider(cache_dir_name(s, id), after, best, &found);
		if (!slab_unmergeable(s))
			consider(s->name, after, best, &found);
	}
	list_for_each_entry(a, &slab_aliases, list)
		consider(a->name, after, best, &found);
	return found;
}

/* ---- number parsing (kernel kstrtoul/kstrtouint, base 10) --------------- */

static int parse_ulong(const char *val, unsigned long *out)
{
	const char *p = val;
	unsigned long v = 0;

	if (*p == '+')
		p++;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned int d = (unsigned int)(*p - '0');
		if (v > (ULONG_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (*p == '\n')		/* echo's newline */
		p++;
	if (*p)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_uint(const char *val, unsigned int *out)
{
	unsigned long v;
	int rc = parse_ulong(val, &v);

	if (rc)
		return rc;
	if (v > UINT_MAX)
		return -ERANGE;
	*out = (unsigned int)v;
	return 0;
}

/* ---- attributes ------------------------------------------------------- */

/* "<total>[ N0=<total>]\n": show_slab_objects() of a one-node CONFIG_NUMA kernel. */
static void show_node_value(struct seq_buf *sb, unsigned long x)
{
	seq_printf(sb, "%lu", x);
	if (x)
		seq_printf(sb, " N0=%lu", x);
	seq_putc(sb, '\n');
}

static void show_flag(struct seq_buf *sb, const struct kmem_cache *s, slab_flags_t flag)
{
	seq_printf(sb, "%d\n", !!(s->flags & flag));
}

#define SHOW(attr) static void attr##_show(struct seq_buf *sb, struct kmem_cache *s)
#define STORE(attr) static int attr##_store(struct kmem_cache *s, const char *buf)

SHOW(slab_size) { seq_printf(sb, "%u\n", s->size); }
SHOW(object_size) { seq_printf(sb, "%u\n", __atomic_load_n(&s->object_size, __ATOMIC_RELAXED)); }
SHOW(objs_per_slab) { seq_printf(sb, "%u\n", oo_objects(slub_of(s)->oo)); }
SHOW(order) { seq_printf(sb, "%u\n", oo_order(slub_of(s)->oo)); }
SHOW(align) { seq_printf(sb, "%u\n", s->align); }
SHOW(aliases) { seq_printf(sb, "%d\n", s->refcount < 0 ? 0 : s->refcount - 1); }
SHOW(usersize) { (void)s; seq_puts(sb, "0\n"); }
SHOW(hwcache_align) { show_flag(sb, s, SLAB_HWCACHE_ALIGN); }
SHOW(reclaim_account) { show_flag(sb, s, SLAB_RECLAIM_ACCOUNT); }
SHOW(cache_dma) { show_flag(sb, s, SLAB_CACHE_DMA); }
SHOW(destroy_by_rcu) { show_flag(sb, s, SLAB_TYPESAFE_BY_RCU); }
SHOW(sanity_checks) { show_flag(sb, s, SLAB_CONSISTENCY_CHECKS); }
SHOW(trace) { show_flag(sb, s, SLAB_TRACE); }
SHOW(red_zone) { show_flag(sb, s, SLAB_RED_ZONE); }
SHOW(poison) { show_flag(sb, s, SLAB_POISON); }
SHOW(store_user) { show_flag(sb, s, SLAB_STORE_USER); }

/* Read empty, as the kernel's validate_show()/shrink_show(). */
SHOW(empty) { (void)sb; (void)s; }

/* "%pS": symbol+offset/size, or the bare address when no symbol is known. */
SHOW(ctor)
{
	void *addr = (void *)(uintptr_t)s->ctor;
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!addr)
		return;
	if (dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT) && info.dli_sname && info.dli_saddr)
		seq_printf(sb, "%s+0x%lx/0x%lx\n", info.dli_sname,
			   (unsigned long)((uintptr_t)addr - (uintptr_t)info.dli_saddr),
			   (unsigned long)(sym ? sym->st_size : 0));
	else
		seq_printf(sb, "0x%lx\n", (unsigned long)(uintptr_t)addr);
}

SHOW(partial) { struct slub_info i; slub_get_info(s, &i); show_node_value(sb, i.partial); }
SHOW(objects_partial) { struct slub_info i; slub_get_info(s, &i); show_node_value(sb, i.objects_partial); }
SHOW(objects) { struct slub_info i; slub_get_info(s, &i); show_node_value(sb, i.active_objs); }
SHOW(total_objects) { struct slub_info i; slub_get_info(s, &i); show_node_value(sb, i.num_objs); }
SHOW(slabs) { struct slub_info i; slub_get_info(s, &i); show_node_value(sb, i.num_slabs); }

/* SO_CPU: cpu slabs plus the slabs on the threads' partial lists. */
SHOW(cpu_slabs)
{
	struct slub_info i;

	slub_get_info(s, &i);
	show_node_value(sb, i.cpu_slabs + i.cpu_partial_slabs);
}

/* "objects(slabs)", objects estimated as half of each slab, then per thread. */
SHOW(slabs_cpu_partial)
{
	unsigned int slabs[SYSFS_MAX_THREADS], total = 0, per = oo_objects(slub_of(s)->oo);
	int n = slub_cpu_partial_per_thread(s, slabs, SYSFS_MAX_THREADS);

	for (int i = 0; i < n; i++)
		total += slabs[i];
	seq_printf(sb, "%d(%d)", (int)(total * per / 2), (int)total);
	for (int i = 0; i < n; i++)
		if (slabs[i])
			seq_printf(sb, " C%d=%d(%d)", i, (int)(slabs[i] * per / 2), (int)slabs[i]);
	seq_putc(sb, '\n');
}

SHOW(min_partial) { seq_printf(sb, "%lu\n", __atomic_load_n(&slub_of(s)->min_partial, __ATOMIC_RELAXED)); }

/* Any unsigned long, unclamped, as since Linux 5.16. */
STORE(min_partial)
{
	unsigned long min;
	int rc = parse_ulong(buf, &min);

	if (!rc)
		__atomic_store_n(&slub_of(s)->min_partial, min, __ATOMIC_RELAXED);
	return rc;
}

SHOW(cpu_partial) { seq_printf(sb, "%u\n", __atomic_load_n(&slub_of(s)->cpu_partial, __ATOMIC_RELAXED)); }

/* Objects per sheaf (6.18); 0: the cache has no sheaves (debug flags, slub_sheaves=0). */
SHOW(sheaf_capacity) { seq_printf(sb, "%u\n", slub_of(s)->sheaf_capacity); }
/* kmem-specific: pages of partial slabs given back to the OS (slub_release.c). */
SHOW(released_pages)
{
	show_node_value(sb, (unsigned long)atomic_load_explicit(&slub_of(s)->node.released_pages,
								 memory_order_relaxed));
}

/*
 * kmem-specific: pages of the cache's slabs.  Not slabs x order: a cache's
 * slabs may be of several orders (fallback slabs, as in the kernel, and
 * kmem_cache_small_first()'s growing ones).
 */
SHOW(slab_pages)
{
	show_node_value(sb, (unsigned long)atomic_load_explicit(&slub_of(s)->node.nr_pages, memory_order_relaxed));
}

STORE(cpu_partial)
{
	unsigned int objects;
	int rc = parse_uint(buf, &objects);

	if (rc)
		return rc;
	rc = slub_set_cpu_partial(s, objects);	/* -EINVAL: a debug cache, objects != 0 */
	if (!rc)
		slub_flush_this_thread(s);
	return rc;
}

STORE(validate)
{
	if (buf[0] != '1')
		return -EINVAL;
	slub_validate(s);
	return 0;
}

STORE(shrink)
{
	if (buf[0] != '1')
		return -EINVAL;
	kmem_cache_shrink(s);
	return 0;
}

SHOW(slab_thrash_ratio) { seq_printf(sb, "%lu\n", slub_thrash_ratio(s)); }

STORE(slab_thrash_ratio)
{
	unsigned long ratio;

	if (parse_ulong(buf, &ratio) || ratio > 100)
		return -EINVAL;
	slub_set_min_free_watermark(s, ratio);
	return 0;
}

SHOW(remote_node_defrag_ratio)
{
	seq_printf(sb, "%u\n", 100u - __atomic_load_n(&slub_of(s)->remote_ratio_inv, __ATOMIC_RELAXED));
}

STORE(remote_node_defrag_ratio)
{
	unsigned int ratio;
	int rc = parse_uint(buf, &ratio);

	if (rc)
		return rc;
	if (ratio > 100)
		return -ERANGE;
	__atomic_store_n(&slub_of(s)->remote_ratio_inv, (unsigned char)(100 - ratio), __ATOMIC_RELAXED);
	return 0;
}

struct slab_attr {
	const char *name;
	unsigned short mode;
	void (*show)(struct seq_buf *sb, struct kmem_cache *s);
	int (*store)(struct kmem_cache *s, const char *buf);
};

#define RO(n)		{ #n, 0400, n##_show, NULL }
#define RW(n)		{ #n, 0600, n##_show, n##_store }
#define RW_EMPTY(n)	{ #n, 0600, empty_show, n##_store }

static const struct slab_attr slab_attrs[] = {
	RO(slab_size), RO(object_size), RO(objs_per_slab), RO(order), RW(min_partial),
	RW(cpu_partial), RO(sheaf_capacity), RO(partial), RO(objects_partial), RO(cpu_slabs),
	RO(slabs_cpu_partial), RO(objects), RO(total_objects), RO(slabs), RO(ctor),
	RO(aliases), RO(align), RO(hwcache_align), RO(reclaim_account), RO(cache_dma), RO(released_pages), RO(slab_pages),
	RO(destroy_by_rcu), RO(usersize), RO(sanity_checks), RO(trace), RO(red_zone),
	RO(poison), RO(store_user), RW_EMPTY(validate), RW_EMPTY(shrink),
	RW(slab_thrash_ratio), RW(remote_node_defrag_ratio),
};
#define NR_SLAB_ATTRS	(int)(sizeof(slab_attrs) / sizeof(slab_attrs[0]))

/* SLUB_STATS: "%lu" total, then " C<i>=<n>" per thread; writing "0" clears. */
static void show_stat(struct seq_buf *sb, struct kmem_cache *s, enum stat_item si)
{
	unsigned long per[SYSFS_MAX_THREADS];
	int n = 0;
	unsigned long sum = slub_stat_sum(s, si, per, SYSFS_MAX_THREADS, &n);

	seq_printf(sb, "%lu", sum);
	for (int i = 0; i < n; i++)
		if (per[i])
			seq_printf(sb, " C%d=%lu", i, per[i]);
	seq_putc(sb, '\n');
}

static int store_stat(struct kmem_cache *s, enum stat_item si, const char *buf)
{
	if (buf[0] != '0')
		return -EINVAL;
	slub_stat_clear(s, si);
	return 0;
}

/* An attribute: a slab_attrs[] index, or NR_SLAB_ATTRS + stat_item; -ENOENT if none. */
static int find_attr(const char *name)
{
	for (int i = 0; i < NR_SLAB_ATTRS; i++)
		if (!strcmp(slab_attrs[i].name, name))
			return i;
	for (int i = 0; i < NR_SLUB_STAT_ITEMS; i++)
		if (slub_stat_counted(i) && !strcmp(slub_stat_names[i], name))
			return NR_SLAB_ATTRS + i;
	return -ENOENT;
}

static void attr_consider(const char *name, const char *after, const char **best)
{
	if ((!after || strcmp(name, after) > 0) && (!*best || strcmp(name, *best) < 0))
		*best = name;
}

/* A cache directory's entries, sorted. */
static void list_attrs(struct seq_buf *sb)
{
	const char *after = NULL, *best;

	for (;;) {
		best = NULL;
		for (int i = 0; i < NR_SLAB_ATTRS; i++)
			attr_consider(slab_attrs[i].name, after, &best);
		for (int i = 0; i < NR_SLUB_STAT_ITEMS; i++)
			if (slub_stat_counted(i))
				attr_consider(slub_stat_names[i], after, &best);
		if (!best)
			return;
		seq_printf(sb, "%s\n", best);
		after = best;
	}
}

/* ---- the subtree ------------------------------------------------------ */

/*
 * Split "/sys/kernel/slab[/<cache>[/<attr>]]": @name gets the cache (empty
 * for the root itself), *attr the attribute or NULL.
 */
static int parse_path(const char *path, char *name, const char **attr)
{
	const char *rest = path + strlen(SLAB_SYSFS_ROOT);

	*attr = NULL;
	name[0] = '\0';
	/* SLUB's sysfs: the kernel had none for SLAB (nor SLOB), and their caches are not SLUB's. */
	if (slab_allocator != SLAB_ALLOCATOR_SLUB)
		return -ENOENT;
	if (strncmp(path, SLAB_SYSFS_ROOT, strlen(SLAB_SYSFS_ROOT)))
		return -ENOENT;
	if (!*rest)
		return 0;
	if (*rest++ != '/')
		return -ENOENT;
	size_t len = strcspn(rest, "/");
	if (!len || len >= KMEM_CACHE_NAME_MAX)
		return -ENOENT;
	memcpy(name, rest, len);
	name[len] = '\0';
	if (rest[len]) {
		*attr = rest + len + 1;
		if (!**attr || strchr(*attr, '/'))
			return -ENOENT;
	}
	return 0;
}

/*
 * Resolve "<cache>/<attr>" under slab_mutex (the caller holds it): the cache
 * and the attribute's index (>= NR_SLAB_ATTRS: a statistics file).
 */
static int resolve(const char *path, struct kmem_cache **sp, int *idx)
{
	char name[KMEM_CACHE_NAME_MAX];
	const char *attr;
	int rc = parse_path(path, name, &attr);

	if (rc)
		return rc;
	if (!name[0])
		return -EISDIR;
	*sp = find_cache(name);
	if (!*sp)
		return -ENOENT;
	if (!attr)
		return -EISDIR;
	rc = find_attr(attr);
	if (rc < 0)
		return rc;
	*idx = rc;
	return 0;
}

static int slab_sysfs_show(struct seq_buf *sb, const char *path)
{
	struct kmem_cache *s;
	int idx, rc;

	kmem_lock(&slab_mutex);
	rc = resolve(path, &s, &idx);
	if (!rc && idx >= NR_SLAB_ATTRS) {
		show_stat(sb, s, (enum stat_item)(idx - NR_SLAB_ATTRS));
	} else if (!rc) {
		const struct slab_attr *a = &slab_attrs[idx];
		rc = (a->mode & 0400) ? (a->show(sb, s), 0) : -EACCES;
	}
	kmem_unlock(&slab_mutex);
	return rc;
}

static int slab_sysfs_store(const char *path, const char *val)
{
	struct kmem_cache *s;
	int idx, rc;

	kmem_lock(&slab_mutex);
	rc = resolve(path, &s, &idx);
	if (!rc && idx >= NR_SLAB_ATTRS) {
		rc = store_stat(s, (enum stat_item)(idx - NR_SLAB_ATTRS), val);
	} else if (!rc) {
		const struct slab_attr *a = &slab_attrs[idx];
		rc = (a->mode & 0200) && a->store ? a->store(s, val) : -EACCES;
	}
	kmem_unlock(&slab_mutex);
	return rc;
}

static int slab_sysfs_list(struct seq_buf *sb, const char *path)
{
	char name[KMEM_CACHE_NAME_MAX], prev[KMEM_CACHE_NAME_MAX], next[KMEM_CACHE_NAME_MAX];
	const char *attr;
	int rc = parse_path(path, name, &attr);

	if (rc)
		return rc;
	if (attr)
		return -ENOTDIR;
	kmem_lock(&slab_mutex);
	if (name[0]) {
		if (find_cache(name))
			list_attrs(sb);
		else
			rc = -ENOENT;
	} else {
		for (bool more = root_next(NULL, next); more; more = root_next(prev, next)) {
			seq_printf(sb, "%s\n", next);
			memcpy(prev, next, sizeof(prev));
		}
	}
	kmem_unlock(&slab_mutex);
	return rc;
}

KMEMFS_DIR(SLAB_SYSFS_ROOT "/", slab_sysfs_show, slab_sysfs_store, slab_sysfs_list);
