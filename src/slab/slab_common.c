// SPDX-License-Identifier: MIT
/*
 * The slab core shared by all back-ends (kernel mm/slab_common.c): the
 * choice of back-end (slab=), cache creation with validation and merging,
 * the cache list, destroy, and the public kmem_cache_* entry points.  The
 * entry points try the inline fast paths (fastpath.h) and call the chosen
 * back-end (slab_ops) on a miss: no indirect call on the hot path.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/boot.h"
#include "core/cmdline.h"
#include "page_alloc/metapool.h"
#include "slab/fastpath.h"
#include "slab/slab.h"
#include "slab/slab_common.h"

enum slab_allocator_type slab_allocator = SLAB_ALLOCATOR_SLUB;
struct slab_backend slab_ops;
kmem_lock_t slab_mutex = KMEM_LOCK_INIT;
struct list_head slab_caches = LIST_HEAD_INIT(slab_caches);
struct list_head slab_aliases = LIST_HEAD_INIT(slab_aliases);

static bool slab_nomerge;
/* Its chunk size becomes the chosen back-end's at kmem_cache_init(), before the first cache. */
static struct metapool cache_pool = METAPOOL_INIT(sizeof(struct kmem_cache));
static struct metapool alias_pool = METAPOOL_INIT(sizeof(struct slab_alias));

/*
 * The back-ends this build has, by slab_allocator_type.  SLAB's and SLOB's
 * are weak: a build without their folders boots SLUB only.
 */
extern const struct slab_backend slab_backend __attribute__((weak, visibility("hidden")));
extern const struct slab_backend slob_backend __attribute__((weak, visibility("hidden")));

static const struct slab_backend *backend_of(enum slab_allocator_type t)
{
	switch (t) {
	case SLAB_ALLOCATOR_SLAB: return &slab_backend;
	case SLAB_ALLOCATOR_SLOB: return &slob_backend;
	default: return &slub_backend;
	}
}

/* Custom boot parameter setters only check their value when @kp is NULL. */
static int set_slab(const char *val, const struct kernel_param *kp)
{
	static const char *const names[] = { "slub", "slab", "slob" };

	for (unsigned int t = 0; val && t < sizeof(names) / sizeof(names[0]); t++) {
		if (strcmp(val, names[t]))
			continue;
		if (!backend_of(t)) {
			pr_err("slab=%s: this build of kmem has no %s back-end\n", val, val);
			return -EINVAL;
		}
		if (kp)
			slab_allocator = t;
		return 0;
	}
	return -EINVAL;
}
kmem_param_cb("slab", set_slab, slab_allocator, "slab allocator chosen at boot: slub, slab or slob");

static int set_nomerge(const char *val, const struct kernel_param *kp)
{
	if (val)
		return -EINVAL;
	if (kp)
		slab_nomerge = strcmp(kp->name, "slab_merge") != 0;
	return 0;
}
kmem_param_cb("slab_nomerge", set_nomerge, slab_nomerge, "never merge caches into aliases");
kmem_param_cb("slub_nomerge", set_nomerge, slab_nomerge, "alias of slab_nomerge");
kmem_param_cb("slab_merge", set_nomerge, slab_nomerge, "merge compatible caches (the default)");

#define SLAB_NEVER_MERGE (SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER | SLAB_TRACE | \
			  SLAB_TYPESAFE_BY_RCU | SLAB_NOLEAKTRACE | SLAB_NO_MERGE)
#define SLAB_MERGE_SAME (SLAB_RECLAIM_ACCOUNT | SLAB_CACHE_DMA | SLAB_CACHE_DMA32 | SLAB_ACCOUNT)
/* Every flag <kmem/slab_flags.h> defines; others are refused, as the kernel refuses them (-EINVAL). */
#define SLAB_FLAGS_PERMITTED (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | SLAB_KMALLOC | \
			      SLAB_HWCACHE_ALIGN | SLAB_CACHE_DMA | SLAB_CACHE_DMA32 | SLAB_STORE_USER | \
			      SLAB_RECLAIM_ACCOUNT | SLAB_PANIC | SLAB_TYPESAFE_BY_RCU | SLAB_TRACE | \
			      SLAB_NOLEAKTRACE | SLAB_NO_MERGE | SLAB_ACCOUNT | SLAB_NO_USER_FLAGS)

bool slab_unmergeable(const struct kmem_cache *s)
{
	return slab_nomerge || (s->flags & SLAB_NEVER_MERGE) || s->ctor;
}

static unsigned int align_up(unsigned int x, unsigned int a)
{
	return (x + a - 1) & ~(a - 1);
}

/* kernel find_mergeable(); caller holds slab_mutex. */
static struct kmem_cache *find_mergeable(unsigned int size, unsigned int align,
					 slab_flags_t flags, void (*ctor)(void *))
{
	struct kmem_cache *s;

	if (slab_nomerge || ctor || (flags & SLAB_NEVER_MERGE) || !slab_ops.merges)
		return NULL;
	size = align_up(size, sizeof(void *));
	align = calculate_alignment(flags, align, size);
	size = align_up(size, align);

	/* Newest first, as the kernel walks its list in reverse. */
	for (s = list_last_entry(&slab_caches, struct kmem_cache, list); &s->list != &slab_caches;
	     s = list_entry(s->list.prev, struct kmem_cache, list)) {
		if (slab_unmergeable(s))
			continue;
		if (size > s->size)
			continue;
		if ((flags & SLAB_MERGE_SAME) != (s->flags & SLAB_MERGE_SAME))
			continue;
		if ((s->size & ~(align - 1)) != s->size)
			continue;
		if (s->size - size >= sizeof(void *))
			continue;
		return s;
	}
	return NULL;
}

static int add_alias(struct kmem_cache *s, const char *name)
{
	struct slab_alias *a = metapool_alloc(&alias_pool);

	if (!a)
		return -ENOMEM;
	memset(a, 0, sizeof(*a));
	strcpy(a->name, name);
	a->cache = s;
	list_add_tail(&a->list, &slab_aliases);
	return 0;
}

static void remove_aliases(struct kmem_cache *s, const char *name)
{
	struct slab_alias *a, *tmp;

	list_for_each_entry_safe(a, tmp, &slab_aliases, list) {
		if (a->cache == s && (!name || !strcmp(a->name, name))) {
			list_del(&a->list);
			metapool_free(&alias_pool, a);
			if (name)
				return;
		}
	}
}

/*
 * Is the sysfs entry @name taken: a cache's directory (its name, or its
 * unique id if it may merge), a creator's or an alias's symlink?  Caller
 * holds slab_mutex.  The kernel's sysfs_slab_add() fails (-EEXIST) on such
 * a name, and so does the create.
 */
static bool sysfs_name_taken(const char *name)
{
	char id[SLAB_UNIQUE_ID_MAX];
	struct kmem_cache *s;
	struct slab_alias *a;

	list_for_each_entry(s, &slab_caches, list) {
		if (!strcmp(s->name, name))
			return true;
		if (!slab_unmergeable(s)) {
			slab_unique_id(id, sizeof(id), s->flags, s->size);
			if (!strcmp(id, name))
				return true;
		}
	}
	list_for_each_entry(a, &slab_aliases, list)
		if (!strcmp(a->name, name))
			return true;
	return false;
}

int slab_unique_id(char *buf, size_t size, slab_flags_t flags, unsigned int slot_size)
{
	char letters[8], *p = letters;

	if (flags & SLAB_CACHE_DMA)
		*p++ = 'd';
	if (flags & SLAB_CACHE_DMA32)
		*p++ = 'D';
	if (flags & SLAB_RECLAIM_ACCOUNT)
		*p++ = 'a';
	if (flags & SLAB_CONSISTENCY_CHECKS)
		*p++ = 'F';
	if (flags & SLAB_ACCOUNT)
		*p++ = 'A';
	if (p != letters)
		*p++ = '-';
	*p = '\0';
	return snprintf(buf, size, ":%s%07u", letters, slot_size);
}

static const char *create_error(int err)
{
	switch (err) {
	case -EINVAL: return "bad name, size, alignment, flags or order";
	case -EEXIST: return "its /sys/kernel/slab name is taken";
	case -ENOSPC: return "too many caches";
	default: return "out of memory";
	}
}

/* A name a sysfs directory and a slabinfo column can hold. */
static bool bad_cache_name(const char *name)
{
	if (!name || !*name || strlen(name) >= KMEM_CACHE_NAME_MAX || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return true;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		if (*c == '/' || *c <= ' ' || *c == 0x7f)
			return true;
	return false;
}

static int check_create_args(const char *name, unsigned int size, unsigned int align,
			     slab_flags_t flags, unsigned int order_cap)
{
	if (order_cap > MAX_PAGE_ORDER)
		return -EINVAL;
	if (bad_cache_name(name))
		return -EINVAL;
	if (!size || size > KMALLOC_MAX_SIZE)
		return -EINVAL;
	if (align & (align - 1))
		return -EINVAL;
	if (flags & ~SLAB_FLAGS_PERMITTED)
		return -EINVAL;
	return 0;
}

int kmem_cache_slab_fit(const char *name, unsigned int size, unsigned int align, slab_flags_t flags,
			unsigned int max_order, unsigned int *slab_bytes, unsigned int *objects)
{
	int err = check_create_args(name, size, align, flags, max_order);

	if (err)
		return err;
	return slab_ops.probe_slab(size, align, kmem_cache_flags(flags, name), max_order, slab_bytes, objects);
}

static struct kmem_cache *create_cache(const char *name, unsigned int size, unsigned int align,
				       slab_flags_t flags, void (*ctor)(void *), unsigned int order_cap);

KMEM_API struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
					      unsigned int align, slab_flags_t flags,
					      void (*ctor)(void *))
{
	return create_cache(name, size, align, flags, ctor, 0);
}

void kmem_cache_small_first(struct kmem_cache *s)
{
	__atomic_store_n(&s->small_first, true, __ATOMIC_RELAXED);
}

struct kmem_cache *kmem_cache_create_order(const char *name, unsigned int size, unsigned int align,
					   slab_flags_t flags, unsigned int max_order)
{
	return create_cache(name, size, align, flags | SLAB_NO_MERGE, NULL, max_order);
}

static struct kmem_cache *create_cache(const char *name, unsigned int size, unsigned int align,
				       slab_flags_t flags, void (*ctor)(void *), unsigned int order_cap)
{
	struct kmem_cache *s = NULL;
	int err = check_create_args(name, size, align, flags, order_cap);

	if (!err && kmem_boot())
		err = -ENOMEM;
	if (err)
		goto out;
	flags = kmem_cache_flags(flags, name);		/* slab_debug= */

	kmem_lock(&slab_mutex);
	/* A back-end that never merges (SLOB): each cache is known by its own name. */
	bool never_merge = slab_nomerge || ctor || (flags & SLAB_NEVER_MERGE) || !slab_ops.merges;
	if (never_merge && sysfs_name_taken(name)) {
		kmem_unlock(&slab_mutex);
		err = -EEXIST;
		goto out;
	}
	s = find_mergeable(size, align, flags, ctor);
	if (s) {
		err = add_alias(s, name);
		if (!err) {
			s->refcount++;
			if (s->object_size < size)
				__atomic_store_n(&s->object_size, size, __ATOMIC_RELAXED);
			unsigned int inuse = align_up(size, sizeof(void *));
			if (s->inuse < inuse)
				s->inuse = inuse;
		} else {
			s = NULL;
		}
		kmem_unlock(&slab_mutex);
		goto out;
	}
	kmem_unlock(&slab_mutex);

	s = metapool_alloc(&cache_pool);
	if (!s) {
		err = -ENOMEM;
		goto out;
	}
	memset(s, 0, cache_pool.size);
	strcpy(s->name, name);
	s->object_size = size;
	s->align = align;
	s->flags = flags & ~SLAB_PANIC;
	s->ctor = ctor;
	s->refcount = 1;
	s->order_cap = (unsigned char)order_cap;
	err = slab_ops.cache_create(s);
	if (err) {
		metapool_free(&cache_pool, s);
		s = NULL;
		goto out;
	}
	kmem_lock(&slab_mutex);
	char id[SLAB_UNIQUE_ID_MAX];
	if (!never_merge)
		slab_unique_id(id, sizeof(id), s->flags, s->size);
	if (sysfs_name_taken(never_merge ? name : id)) {
		/* Another thread created the name meanwhile, or a cache is named like our unique id. */
		kmem_unlock(&slab_mutex);
		slab_ops.cache_destroy(s);
		s = NULL;
		err = -EEXIST;
		goto out;
	}
	list_add_tail(&s->list, &slab_caches);
	kmem_unlock(&slab_mutex);
out:
	if (err) {
		kmem_report("%s(%s) failed with error %d: %s\n",
			    order_cap ? "kmem_cache_create_order" : "kmem_cache_create", name ? name : "(null)", err,
			    create_error(err));
		if (flags & SLAB_PANIC) {
			printk("Kernel panic - not syncing: kmem_cache_create: Failed to create slab '%s'. Error %d\n",
			       name ? name : "(null)", err);
			os_abort();
		}
		return NULL;
	}
	return s;
}

void slab_report_bad_free(const char *func, const void *x, const char *why)
{
	kmem_warn("mm/slab_common.c:free", "%s(%p): %s\n", func, x, why);
}

/*
 * A destroyed cache's struct is never handed out again: it stays, dead, as
 * a tombstone (its size in memory a destroyed cache), so that a stale
 * handle reaches it and not a new cache that took its address (a destroy
 * through it destroyed the new cache).  Index 0: every inline attempt
 * misses, and the miss path (cache_alloc_slow()) refuses a dead cache.
 */
void kmem_cache_free_struct(struct kmem_cache *s)
{
	__atomic_store_n(&s->index, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->dead, true, __ATOMIC_RELEASE);
}

/* Is @s a cache kmem_cache_create() returned and no destroy has taken?  slab_mutex held. */
static bool cache_is_live(const struct kmem_cache *s)
{
	const struct kmem_cache *c;

	list_for_each_entry(c, &slab_caches, list)
		if (c == s)
			return true;
	return false;
}

/* A stale handle's use, reported as the kernel's slab_common.c would WARN. */
static __attribute__((noinline, cold)) void report_dead_cache(const char *func, const struct kmem_cache *s)
{
	kmem_warn("mm/slab_common.c", "%s(%p): not a live cache (destroyed already, or never created); "
		  "nothing done\n", func, s);
}

/*
 * The miss path of kmem_cache_alloc(): a destroyed cache never hits the
 * fast path (its threads' slots are retired, a tombstone's index is 0),
 * and the back-end would serve it all the same, from the dead cache's
 * slabs.
 */
static __attribute__((noinline)) void *cache_alloc_slow(const char *func, struct kmem_cache *s, gfp_t gfp,
							 unsigned long caller)
{
	if (unlikely(__atomic_load_n(&s->dead, __ATOMIC_ACQUIRE))) {
		report_dead_cache(func, s);
		return NULL;
	}
	return slab_ops.alloc(s, gfp, caller, 0);
}

KMEM_API void kmem_cache_destroy(struct kmem_cache *s)
{
	if (!s)
		return;
	kmem_lock(&slab_mutex);
	if (!cache_is_live(s)) {
		kmem_unlock(&slab_mutex);
		report_dead_cache("kmem_cache_destroy", s);
		return;
	}
	if (--s->refcount) {
		/* An alias goes away; which name is not known, so drop the newest. */
		struct slab_alias *a, *last = NULL;
		list_for_each_entry(a, &slab_aliases, list)
			if (a->cache == s)
				last = a;
		if (last)
			remove_aliases(s, last->name);
		kmem_unlock(&slab_mutex);
		return;
	}
	list_del(&s->list);
	remove_aliases(s, NULL);
	/* Dead from now, also if the back-end keeps it for objects still allocated. */
	__atomic_store_n(&s->dead, true, __ATOMIC_RELEASE);
	kmem_unlock(&slab_mutex);
	slab_ops.cache_destroy(s);
}

KMEM_API void *kmem_cache_alloc(struct kmem_cache *s, gfp_t gfp)
{
	void *p = slab_alloc_fast(s, gfp);

	return likely(p) ? p : cache_alloc_slow("kmem_cache_alloc", s, gfp, _RET_IP_);
}

KMEM_API void *kmem_cache_zalloc(struct kmem_cache *s, gfp_t gfp)
{
	void *p = slab_alloc_fast(s, gfp | __GFP_ZERO);

	return likely(p) ? p : cache_alloc_slow("kmem_cache_zalloc", s, gfp | __GFP_ZERO, _RET_IP_);
}

/* kmem_cache_free(NULL, @x): the object's own cache, as kfree() would find it. */
static __attribute__((noinline)) void kmem_cache_free_nocache(void *x, unsigned long caller)
{
	struct page *head = virt_to_head_page_checked(x);

	if (!head || !PageSlab(head)) {
		if (x)
			slab_report_bad_free("kmem_cache_free", x, "not an object of any cache; not freed");
		return;
	}
	/*
	 * A caller's bug the kernel would oops on (cache_from_obj() reads the
	 * cache): reported, then the object goes back to its own cache.
	 */
	struct kmem_obj o;
	slab_ops.obj_info(head, x, &o);
	kmem_warn("mm/slab_common.c", "kmem_cache_free(NULL, %p): no cache given; freed to its own cache %s\n",
		  x, o.cache ? o.cache->name : "(unknown)");
	slab_ops.kfree(head, x, caller);
}

KMEM_API void kmem_cache_free(struct kmem_cache *s, void *x)
{
	if (unlikely(!s)) {
		kmem_cache_free_nocache(x, _RET_IP_);
		return;
	}
	/* The back-end looks up the slab and checks it belongs to @s. */
	slab_free(s, x);
}

KMEM_API int kmem_cache_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t size, void **p)
{
	if (!size)
		return 0;
	if (unlikely(__atomic_load_n(&s->dead, __ATOMIC_ACQUIRE))) {
		report_dead_cache("kmem_cache_alloc_bulk", s);
		return 0;
	}
	return slab_ops.alloc_bulk(s, gfp, size, p);
}

/* kfree_bulk(): page-allocator kmallocs and ZERO_SIZE_PTR first (out of line: no frame for s's bulks). */
static __attribute__((noinline)) void kfree_bulk_nonslab(size_t size, void **p)
{
	for (size_t i = 0; i < size; i++) {
		if (ZERO_OR_NULL_PTR(p[i])) {
			p[i] = NULL;
			continue;
		}
		struct page *head = virt_to_head_page_checked(p[i]);
		if (!head || !PageSlab(head)) {
			kfree(p[i]);
			p[i] = NULL;
		}
	}
}

KMEM_API void kmem_cache_free_bulk(struct kmem_cache *s, size_t size, void **p)
{
	if (!s)
		kfree_bulk_nonslab(size, p);
	slab_ops.free_bulk(s, size, p);
}

KMEM_API int kmem_cache_shrink(struct kmem_cache *s)
{
	return slab_ops.cache_shrink(s);
}

KMEM_API unsigned int kmem_cache_size(struct kmem_cache *s)
{
	return s->object_size;
}

KMEM_API const char *kmem_cache_name(struct kmem_cache *s)
{
	return s->name;
}

int kmem_cache_init(void)
{
	slab_ops = *backend_of(slab_allocator);
	cache_pool.size = (sizeof(struct kmem_cache) + slab_ops.cache_priv_size + 63) & ~(size_t)63;
	int rc = slab_ops.init();

	if (rc)
		return rc;
	return kmalloc_init();
}

void (*slab_thread_exit_notify)(void);

void slab_thread_exited(void)
{
	if (slab_thread_exit_notify)
		slab_thread_exit_notify();
}

/* fork(): slab_mutex, then the back-end's locks (its caches' among them), then the pools. */
void slab_fork_prepare(void)
{
	kmem_lock(&slab_mutex);
	if (slab_ops.fork_prepare)
		slab_ops.fork_prepare();
	kmem_lock(&cache_pool.lock);
	kmem_lock(&alias_pool.lock);
}

void slab_fork_parent(void)
{
	kmem_unlock(&alias_pool.lock);
	kmem_unlock(&cache_pool.lock);
	if (slab_ops.fork_parent)
		slab_ops.fork_parent();
	kmem_unlock(&slab_mutex);
}

void slab_fork_child(void)
{
	kmem_lock_init(&alias_pool.lock);
	kmem_lock_init(&cache_pool.lock);
	if (slab_ops.fork_child)
		slab_ops.fork_child();
	kmem_lock_init(&slab_mutex);
}
