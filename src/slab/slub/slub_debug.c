// SPDX-License-Identifier: MIT
/*
 * SLUB for caches with debug flags (kernel kmem_cache_debug(): consistency
 * checks, red zones, poisoning, owner tracking): one object at a time
 * through the node partial list, under list_lock, as the kernel's
 * alloc_single_from_partial(), alloc_single_from_new_slab() and
 * free_to_partial_list().  No sheaf, cpu slab or cpu partial list holds a
 * free object, so every free object is on its slab's freelist, and a free
 * can tell a double free for certain by walking it (kernel on_freelist()).
 *
 * Slabs here are never frozen.  A slab with free objects is on the node
 * partial list; a full one is on the node's full list if the cache has
 * SLAB_STORE_USER (as in the kernel: alloc_traces walks it), else on none.
 *
 * SLAB_RED_ZONE and SLAB_POISON work as in the kernel (init_object(),
 * check_object()): red zones read 0xbb while the object is free and 0xcc
 * while it is allocated, a free object's bytes read 0x6b ... 0xa5, and with
 * SLAB_POISON the padding after the metadata reads 0x5a.  An allocation
 * checks the free state (a write after free is found then), a free the
 * allocated one (an overrun), validate both; a bad byte is reported with a
 * dump of the slot, and restored.  SLAB_STORE_USER records who allocated
 * and who freed each object (the caller's address, the time, the thread and
 * its CPU: kernel set_track()), printed with every report about the object
 * and for each object a destroy finds left.
 */
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/printk.h"
#include "platform/os.h"
#include "slab/slub/slub_internal.h"

/*
 * Give up on a slab whose freelist is corrupt (the kernel's "Marking all
 * objects used"): no free object of it can be trusted, so all count as
 * used; the caller takes it off the partial list.  Its live objects can
 * still be freed.  list_lock held.
 */
void slab_mark_all_used(struct slab *slab)
{
	uint64_t st = slab_state(slab);

	atomic_store_explicit(&slab->state, ss_make(slab, NULL, ss_objects(st), ss_objects(st), false),
			      memory_order_release);
}

/* The full list (kernel add_full()/remove_full()): SLAB_STORE_USER caches only; list_lock held. */
void add_full(struct kmem_cache *s, struct kmem_cache_node *n, struct slab *slab)
{
	if (s->flags & SLAB_STORE_USER)
		list_add(&slab->slab_list, &n->full);
}

static void remove_full(struct kmem_cache *s, struct slab *slab)
{
	/* Not a slab given up on (slab_mark_all_used()): off every list, its links cleared. */
	if ((s->flags & SLAB_STORE_USER) && slab->slab_list.next)
		list_del(&slab->slab_list);
}

/* ---- red zones and poison ------------------------------------------- */

#define SLUB_RED_INACTIVE	0xbb	/* red zones of a free object */
#define SLUB_RED_ACTIVE		0xcc	/* red zones of an allocated object */
#define POISON_INUSE		0x5a	/* padding after the metadata */
#define POISON_FREE		0x6b	/* the bytes of a free object */
#define POISON_END		0xa5	/* and its last byte */

/* A ctor's or an RCU cache's free object keeps its meaning: never poisoned (kernel __OBJECT_POISON). */
static bool object_poison(const struct kmem_cache *s)
{
	return (s->flags & SLAB_POISON) && !s->ctor && !(s->flags & SLAB_TYPESAFE_BY_RCU);
}

/* From the object: where the metadata ends and the padding up to the next slot's red zone begins. */
static unsigned int pad_start(const struct kmem_cache *s)
{
	unsigned int off = s->offset >= s->inuse ? s->offset + (unsigned int)sizeof(void *) : s->inuse;

	if (s->flags & SLAB_STORE_USER) {
		off += 2 * SLUB_TRACK_SIZE;
		if (s->flags & SLAB_KMALLOC)
			off += (unsigned int)sizeof(unsigned long);
	}
	return off;
}

static unsigned int pad_end(const struct kmem_cache *s)
{
	return s->size - s->red_left_pad;
}

bool slab_debug_checks(const struct kmem_cache *s)
{
	return s->flags & (SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER);
}

/* ---- user tracking (SLAB_STORE_USER) ------------------------------------ */

enum track_item { TRACK_ALLOC, TRACK_FREE };

/* Kernel get_track(): the two tracks follow the free pointer (or the object). */
static struct slub_track *get_track(struct kmem_cache *s, void *object, enum track_item item)
{
	unsigned int off = s->offset >= s->inuse ? s->offset + (unsigned int)sizeof(void *) : s->inuse;

	return (struct slub_track *)((char *)object + off) + item;
}

const struct slub_track *slub_get_track(struct kmem_cache *s, void *object, bool free_track)
{
	return get_track(s, object, free_track ? TRACK_FREE : TRACK_ALLOC);
}

static void set_track(struct kmem_cache *s, void *object, enum track_item item, unsigned long addr)
{
	if (!(s->flags & SLAB_STORE_USER))
		return;
	struct slub_track *t = get_track(s, object, item);
	t->addr = addr;
	t->when = os_now_ns();
	t->pid = os_gettid();
	t->cpu = sched_getcpu();
}

/*
 * "<object>+0x<offset>" for a code address: the loaded object with the
 * highest base at or below it, from the loader's list as debuggers read it
 * (no lock, no allocation: this runs under list_lock).  The offset is what
 * addr2line -e <object> takes.
 */
const char *slub_caller_name(unsigned long addr, char *buf, size_t size)
{
	const struct link_map *best = NULL;

	for (const struct link_map *m = _r_debug.r_map; m; m = m->l_next)
		if (m->l_addr <= addr && (!best || m->l_addr > best->l_addr))
			best = m;
	const char *name = best && best->l_name && *best->l_name ? best->l_name : program_invocation_name;
	const char *base = name ? strrchr(name, '/') : NULL;
	if (!best || !name)
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, "%s+0x%lx", base ? base + 1 : name, addr - best->l_addr);
	return buf;
}

static void print_tracking(struct kmem_cache *s, void *object)
{
	static const char *const what[] = { "Allocated", "Freed" };
	uint64_t now = os_now_ns();

	if (!(s->flags & SLAB_STORE_USER))
		return;
	for (int i = TRACK_ALLOC; i <= TRACK_FREE; i++) {
		struct slub_track *t = get_track(s, object, (enum track_item)i);
		if (!t->when)
			continue;
		char name[128];
		if (t->addr)
			printk("INFO: %s in %p (%s) age=%llums cpu=%d pid=%d\n", what[i], (void *)t->addr,
			       slub_caller_name(t->addr, name, sizeof(name)),
			       (unsigned long long)(now - t->when) / 1000000, t->cpu, t->pid);
		else
			printk("INFO: %s by a bulk call or a flush age=%llums cpu=%d pid=%d\n", what[i],
			       (unsigned long long)(now - t->when) / 1000000, t->cpu, t->pid);
	}
}

/* ---- the kmalloc red zone ------------------------------------------------ */

/*
 * Kernel slub_debug_orig_size(): a kmalloc cache (malloc's classes count as
 * kmalloc caches) with SLAB_STORE_USER keeps each object's requested size
 * after its tracks, and with SLAB_RED_ZONE the bytes from there to the end
 * of the slot are red zone too ("kmalloc Redzone"): malloc(100) from a
 * 112-byte class is caught writing byte 100, not only byte 112.
 */
static bool orig_size_tracked(const struct kmem_cache *s)
{
	return (s->flags & (SLAB_STORE_USER | SLAB_KMALLOC)) == (SLAB_STORE_USER | SLAB_KMALLOC);
}

static unsigned int *orig_size_word(struct kmem_cache *s, void *object)
{
	return (unsigned int *)(get_track(s, object, TRACK_ALLOC) + 2);
}

unsigned int slub_orig_size(struct kmem_cache *s, void *object)
{
	unsigned int n = orig_size_tracked(s) ? *orig_size_word(s, object) : s->object_size;

	/* A slot never allocated reads 0; a corrupt word must not send checks past the object. */
	return n && n <= s->object_size ? n : s->object_size;
}

static void set_orig_size(struct kmem_cache *s, void *object, unsigned int size)
{
	if (orig_size_tracked(s))
		*orig_size_word(s, object) = size && size <= s->object_size ? size : s->object_size;
}

void slub_resize_object(struct kmem_cache *s, void *object, size_t size, bool zero)
{
	if (!orig_size_tracked(s) || !size || size > s->object_size)
		return;
	/* Not an object's start (realloc() of an interior pointer): write no metadata for it. */
	struct slab *slab = virt_to_slab(object);
	if (!slab || slab->slab_cache != s || !slab_obj_valid(s, slab, object))
		return;
	/* Kernel __do_krealloc(): grown, the new bytes zeroed if asked (they were red zone)... */
	unsigned int orig = slub_orig_size(s, object);
	if (zero && size > orig)
		memset((char *)object + orig, 0, size - orig);
	/* ... shrunk, the bytes past the new size red zone again. */
	if ((s->flags & SLAB_RED_ZONE) && size < s->object_size)
		memset((char *)object + size, SLUB_RED_ACTIVE, s->object_size - size);
	set_orig_size(s, object, (unsigned int)size);
}

/*
 * Kernel init_object(): red zones to @val; the object's bytes poisoned,
 * allocated or free (up to the requested size of an allocated kmalloc
 * object, whose rest is red zone).
 */
static void init_object(struct kmem_cache *s, void *object, uint8_t val)
{
	uint8_t *p = object;
	unsigned int poison_size = s->object_size;

	if (s->flags & SLAB_RED_ZONE) {
		memset(p - s->red_left_pad, val, s->red_left_pad);
		if (val == SLUB_RED_ACTIVE)
			poison_size = slub_orig_size(s, object);
	}
	if (object_poison(s)) {
		memset(p, POISON_FREE, poison_size - 1);
		p[poison_size - 1] = POISON_END;
	}
	if (s->flags & SLAB_RED_ZONE)
		memset(p + poison_size, val, s->inuse - poison_size);
}

/* A new slab: every object free, the padding marked (kernel setup_slab_debug()). */
static void setup_slab_debug(struct kmem_cache *s, struct slab *slab)
{
	uint8_t *p = (uint8_t *)slab->obj_base;
	unsigned int objects = ss_objects(slab_state(slab));

	for (unsigned int i = 0; i < objects; i++, p += s->size) {
		if (s->flags & SLAB_POISON)
			memset(p + pad_start(s), POISON_INUSE, pad_end(s) - pad_start(s));
		if (s->flags & SLAB_STORE_USER)
			memset(get_track(s, p, TRACK_ALLOC), 0, 2 * sizeof(struct slub_track));
		init_object(s, p, SLUB_RED_INACTIVE);
	}
}

/* Kernel print_section(): 16 bytes a line, hex and ASCII. */
static void print_section(const char *text, const uint8_t *addr, unsigned int len)
{
	for (unsigned int off = 0; off < len; off += 16) {
		char line[128];
		int n = snprintf(line, sizeof(line), "%s%p: ", text, (const void *)(addr + off));
		unsigned int k = len - off < 16 ? len - off : 16;
		for (unsigned int i = 0; i < 16; i++)
			n += snprintf(line + n, sizeof(line) - (size_t)n, i < k ? "%02x " : "   ",
				      i < k ? addr[off + i] : 0);
		line[n++] = ' ';
		for (unsigned int i = 0; i < k; i++)
			line[n++] = addr[off + i] >= 0x20 && addr[off + i] < 0x7f ? (char)addr[off + i] : '.';
		line[n] = '\0';
		printk("%s\n", line);
	}
}

/* Kernel print_trailer(): the slab, the object, the bytes of its slot. */
static void print_trailer(struct kmem_cache *s, struct slab *slab, uint8_t *p)
{
	uint8_t *addr = (uint8_t *)slab_address(slab);
	uint64_t st = slab_state(slab);

	printk("INFO: Slab %p objects=%u used=%u fp=%p\n", (void *)addr, ss_objects(st), ss_inuse(st),
	       ss_freelist(slab, st));
	printk("INFO: Object %p @offset=%lu\n", (void *)p, (unsigned long)(p - addr));
	print_tracking(s, p);
	if (s->flags & SLAB_RED_ZONE)
		print_section("Redzone  ", p - s->red_left_pad, s->red_left_pad);
	print_section("Object   ", p, s->object_size < 256 ? s->object_size : 256);
	if (s->flags & SLAB_RED_ZONE)
		print_section("Redzone  ", p + s->object_size, s->inuse - s->object_size);
	if ((s->flags & SLAB_POISON) && pad_end(s) > pad_start(s))
		print_section("Padding  ", p + pad_start(s), pad_end(s) - pad_start(s));
}

/*
 * Kernel check_bytes_and_report(): are the @len bytes at @start all @val?
 * If not: a report with the slot's dump, and the bad bytes restored.
 */
static bool check_bytes_and_report(struct kmem_cache *s, struct slab *slab, uint8_t *object,
				   const char *what, uint8_t *start, uint8_t val, unsigned int len)
{
	uint8_t *fault = NULL, *end = start + len;

	for (unsigned int i = 0; i < len && !fault; i++)
		if (start[i] != val)
			fault = start + i;
	if (!fault)
		return true;
	while (end > fault && end[-1] == val)
		end--;
	printk("BUG %s (Not tainted): %s overwritten\n", s->name, what);
	printk("INFO: %p-%p @offset=%lu. First byte 0x%x instead of 0x%x\n", (void *)fault,
	       (void *)(end - 1), (unsigned long)(fault - (uint8_t *)slab_address(slab)), fault[0], val);
	print_trailer(s, slab, object);
	printk("FIX %s: Restoring %s %p-%p=0x%x\n", s->name, what, (void *)fault, (void *)(end - 1), val);
	memset(fault, val, (size_t)(end - fault));
	kmem_report_done();
	return false;
}

/* Kernel trace(): with SLAB_TRACE, every allocation and free is printed (list_lock held). */
static void trace(struct kmem_cache *s, struct slab *slab, void *object, bool alloc)
{
	if (!(s->flags & SLAB_TRACE))
		return;
	uint64_t st = slab_state(slab);
	printk("TRACE %s %s %p inuse=%u fp=%p\n", s->name, alloc ? "alloc" : "free", object,
	       ss_inuse(st), ss_freelist(slab, st));
	if (!alloc)
		print_section("Object ", object, s->object_size < 256 ? s->object_size : 256);
}

/* Kernel check_object(): @val is the red zone byte of the state @object should be in. */
static bool check_object(struct kmem_cache *s, struct slab *slab, void *object, uint8_t val)
{
	uint8_t *p = object;
	bool ok = true;

	if (s->flags & SLAB_RED_ZONE) {
		ok &= check_bytes_and_report(s, slab, p, "Left Redzone", p - s->red_left_pad, val,
					     s->red_left_pad);
		ok &= check_bytes_and_report(s, slab, p, "Right Redzone", p + s->object_size, val,
					     s->inuse - s->object_size);
		unsigned int orig = val == SLUB_RED_ACTIVE ? slub_orig_size(s, object) : s->object_size;
		if (orig < s->object_size)
			ok &= check_bytes_and_report(s, slab, p, "kmalloc Redzone", p + orig, val,
						     s->object_size - orig);
	}
	if (s->flags & SLAB_POISON) {
		if (val == SLUB_RED_INACTIVE && object_poison(s)) {
			ok &= check_bytes_and_report(s, slab, p, "Poison", p, POISON_FREE, s->object_size - 1);
			ok &= check_bytes_and_report(s, slab, p, "End Poison", p + s->object_size - 1,
						     POISON_END, 1);
		}
		ok &= check_bytes_and_report(s, slab, p, "Object padding", p + pad_start(s), POISON_INUSE,
					     pad_end(s) - pad_start(s));
	}
	return ok;
}

unsigned int slab_free_map(struct kmem_cache *s, struct slab *slab, unsigned long *map)
{
	uint64_t st = slab_state(slab);
	char *base = (char *)slab->obj_base;
	unsigned int objects = ss_objects(st), left = objects - ss_inuse(st);

	if (objects > SLAB_MAP_BITS)
		return 0;
	memset(map, 0, SLAB_MAP_BITS / 8);
	for (char *f = ss_freelist(slab, st); f && left; left--, f = get_freepointer(s, f)) {
		if (!slab_obj_valid(s, slab, f))
			return 0;
		unsigned int i = (unsigned int)((f - base) / s->size);
		map[i / (8 * sizeof(long))] |= 1UL << (i % (8 * sizeof(long)));
	}
	return objects;
}

/*
 * Check every object of @slab (list_lock held): the free ones as free, the
 * others as allocated (kernel validate_slab()); returns the bad ones.
 */
long validate_slab_objects(struct kmem_cache *s, struct slab *slab)
{
	unsigned long map[SLAB_MAP_BITS / (8 * sizeof(unsigned long))];
	char *base = (char *)slab->obj_base;
	long bad = 0;

	/* No map for a corrupt chain: validate reported and fixed it. */
	unsigned int objects = slab_debug_checks(s) ? slab_free_map(s, slab, map) : 0;
	for (unsigned int i = 0; i < objects; i++)
		if (!check_object(s, slab, base + (size_t)i * s->size,
				  slab_map_test(map, i) ? SLUB_RED_INACTIVE : SLUB_RED_ACTIVE))
			bad++;
	return bad;
}

/*
 * Pop one object off @slab's freelist; list_lock held.  Its head must be
 * an object of the slab (kernel check_valid_pointer() in
 * alloc_consistency_checks()): a write after free can have replaced it.
 * NULL then, with the slab given up.
 */
static void *take_one(struct kmem_cache *s, struct slab *slab)
{
	uint64_t st = slab_state(slab);
	void *obj = ss_freelist(slab, st);

	if (unlikely(!slab_obj_valid(s, slab, obj))) {
		kmem_report("BUG %s (Not tainted): Freelist Pointer check fails\n"
			    "INFO: Slab %p: free pointer %p is not an object of it (written after free?)\n"
			    "FIX %s: Marking all objects used\n",
			    s->name, (void *)slab, obj, s->name);
		slab_mark_all_used(slab);
		return NULL;
	}
	void *next = get_freepointer(s, obj);
	atomic_store_explicit(&slab->state, ss_make(slab, next, ss_inuse(st) + 1, ss_objects(st), false),
			      memory_order_release);
	return obj;
}

void *alloc_single(struct kmem_cache *s, gfp_t gfp, struct kmem_cache_cpu *c, unsigned long caller,
		   unsigned int orig_size)
{
	struct kmem_cache_node *n = &slub_of(s)->node;
	struct slab *slab;
	void *obj, *freelist;

	kmem_lock(&n->list_lock);
	while (!list_empty(&n->partial)) {
		slab = list_first_entry(&n->partial, struct slab, slab_list);
		obj = take_one(s, slab);
		if (obj && slab_debug_checks(s) && !check_object(s, slab, obj, SLUB_RED_INACTIVE)) {
			/* Written after free: as the kernel, trust nothing of this slab any more. */
			printk("FIX %s: Marking all objects used\n", s->name);
			slab_mark_all_used(slab);
			obj = NULL;
		}
		if (!ss_freelist(slab, slab_state(slab))) {
			remove_partial(n, slab);
			/*
			 * Given up on, it goes on no list, as in the kernel: its free
			 * objects would read as corrupt allocated ones to validate and
			 * alloc_traces.  remove_full() knows it by its cleared links.
			 */
			if (obj)
				add_full(s, n, slab);
		}
		if (!obj)
			continue;
		if (slab_debug_checks(s)) {
			set_orig_size(s, obj, orig_size);
			init_object(s, obj, SLUB_RED_ACTIVE);
			set_track(s, obj, TRACK_ALLOC, caller);
		}
		trace(s, slab, obj, true);
		kmem_unlock(&n->list_lock);
		stat_s(s, c, ALLOC_FROM_PARTIAL, 1);
		return obj;
	}
	kmem_unlock(&n->list_lock);

	slab = new_slab(s, gfp, c, &freelist);
	if (!slab)
		return NULL;
	stat_s(s, c, ALLOC_SLAB, 1);
	uint64_t st = slab_state(slab);
	obj = freelist;
	freelist = get_freepointer(s, obj);
	if (slab_debug_checks(s)) {
		setup_slab_debug(s, slab);
		set_orig_size(s, obj, orig_size);
		init_object(s, obj, SLUB_RED_ACTIVE);
		set_track(s, obj, TRACK_ALLOC, caller);
	}
	/* new_slab() hands the slab over frozen with all its objects: keep one, file the rest. */
	kmem_lock(&n->list_lock);
	atomic_store_explicit(&slab->state, ss_make(slab, freelist, 1, ss_objects(st), false),
			      memory_order_release);
	if (freelist)
		add_partial(n, slab, false);
	else
		add_full(s, n, slab);
	trace(s, slab, obj, true);
	kmem_unlock(&n->list_lock);
	return obj;
}

/* Is @x on @slab's freelist?  Bounded by the free count, so a corrupt (cyclic) list ends. */
static bool on_freelist(struct kmem_cache *s, struct slab *slab, uint64_t st, const void *x)
{
	unsigned int left = ss_objects(st) - ss_inuse(st);

	for (void *f = ss_freelist(slab, st); f && left; left--, f = get_freepointer(s, f)) {
		if (f == x)
			return true;
		if (!slab_obj_valid(s, slab, f)) {
			kmem_report("BUG %s (Not tainted): Freepointer corrupt\n"
				    "INFO: Slab %p: free pointer %p is not an object of it\n",
				    s->name, (void *)slab, f);
			return false;
		}
	}
	return false;
}

/* Free @x to @slab, checked (kernel free_to_partial_list()); list_lock not held. */
void free_single(struct kmem_cache *s, struct slab *slab, void *x, struct kmem_cache_cpu *c,
		 unsigned long caller)
{
	struct kmem_cache_node *n = &slub_of(s)->node;

	kmem_lock(&n->list_lock);
	uint64_t st = slab_state(slab);
	if (unlikely(!ss_inuse(st) || on_freelist(s, slab, st, x))) {
		kmem_unlock(&n->list_lock);
		report_double_free(s, x);
		return;
	}
	if (slab_debug_checks(s) && unlikely(!check_object(s, slab, x, SLUB_RED_ACTIVE))) {
		/* As the kernel's free_debug_processing(): an overrun object is not freed. */
		kmem_unlock(&n->list_lock);
		printk("FIX %s: Object at %p not freed\n", s->name, x);
		return;
	}
	trace(s, slab, x, false);
	if (slab_debug_checks(s)) {
		set_track(s, x, TRACK_FREE, caller);
		init_object(s, x, SLUB_RED_INACTIVE);
	}
	void *prior = ss_freelist(slab, st);
	unsigned int inuse = ss_inuse(st) - 1;

	set_freepointer(s, x, prior);
	atomic_store_explicit(&slab->state, ss_make(slab, x, inuse, ss_objects(st), false),
			      memory_order_release);
	/* It was full: off the full list; file_freed_slab() files or discards it. */
	if (!prior)
		remove_full(s, slab);
	file_freed_slab(s, slab, prior, inuse, c);
}

void free_single_chain(struct kmem_cache *s, struct slab *slab, void *head, unsigned int cnt,
		       struct kmem_cache_cpu *c)
{
	void *x = head;

	for (unsigned int i = 0; i < cnt; i++) {
		/* The chain's link is the free pointer free_single() rewrites: read it first. */
		void *next = i + 1 < cnt ? get_freepointer(s, x) : NULL;
		free_single(s, slab, x, c, 0);
		x = next;
	}
}

/*
 * Print the objects still allocated in @s's node partial slabs, at most
 * @max of them (kernel list_slab_objects(), for a destroy that finds
 * objects left); returns how many were printed.  As in the kernel, only
 * partial slabs: full ones are on no list (or, for SLAB_STORE_USER caches,
 * on the full list, whose objects alloc_traces names).  Objects on
 * released pages (slub_release.c) are free.
 */
unsigned long list_slab_objects(struct kmem_cache *s, unsigned int max)
{
	enum { MAP_BITS = 4096 };
	unsigned long map[MAP_BITS / (8 * sizeof(unsigned long))];
	struct kmem_cache_node *n = &slub_of(s)->node;
	unsigned long shown = 0;
	struct slab *slab;

	kmem_lock(&n->list_lock);
	list_for_each_entry(slab, &n->partial, slab_list) {
		uint64_t st = slab_state(slab);
		char *addr = slab_address(slab), *base = (char *)slab->obj_base;
		unsigned int slots = slab->obj_span / s->size, left = ss_objects(st) - ss_inuse(st);
		unsigned long released = slab_released(slab);

		if (slots > MAP_BITS)
			continue;
		memset(map, 0, sizeof(map));
		for (char *f = ss_freelist(slab, st); f && left; left--, f = get_freepointer(s, f)) {
			if (!slab_obj_valid(s, slab, f))
				break;		/* a corrupt list: what is left counts as allocated */
			unsigned int i = (unsigned int)((f - base) / s->size);
			map[i / (8 * sizeof(long))] |= 1UL << (i % (8 * sizeof(long)));
		}
		for (unsigned int i = 0; i < slots; i++) {
			char *p = base + (size_t)i * s->size;
			unsigned long first = (unsigned long)(p - addr) >> PAGE_SHIFT;
			unsigned long last = (unsigned long)(p + s->size - 1 - addr) >> PAGE_SHIFT;
			if (map[i / (8 * sizeof(long))] & (1UL << (i % (8 * sizeof(long)))))
				continue;
			if (released && (released >> first) & ((2UL << (last - first)) - 1))
				continue;
			if (shown == max)
				goto out;
			printk("Object %p @offset=%lu\n", (void *)p, (unsigned long)(p - addr));
			print_tracking(s, p);
			shown++;
		}
	}
out:
	kmem_unlock(&n->list_lock);
	return shown;
}
