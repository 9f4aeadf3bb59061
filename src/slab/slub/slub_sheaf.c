// SPDX-License-Identifier: MIT
/*
 * SLUB's per-cpu sheaves and the barn (Linux 6.18, mm/slub.c; reference
 * kernel-mm.md §1.10).  Per thread in this version, like the cpu slabs.
 *
 * A thread's main sheaf serves its allocations and takes its frees, from
 * any slab: the inline fast paths in slub.h push and pop it.  This file is
 * what happens when main runs empty or full:
 *
 *   empty: swap with a full spare; else trade it at the barn for a full
 *          sheaf (BARN_GET); else refill it from slabs (SHEAF_REFILL).
 *   full:  swap with an empty spare (or take an empty one as the new main,
 *          keeping the full one as spare); else leave it in the barn for
 *          an empty one (BARN_PUT); if the barn already holds
 *          its max_full sheaves, flush its objects back to their slabs
 *          (BARN_PUT_FAIL, SHEAF_FLUSH).
 *
 * So objects freed by one thread reach another's allocations a whole sheaf
 * at a time, under one short lock, and the slabs are touched in batches.
 * An exiting thread leaves its sheaves in the barn too, for the next
 * thread's first allocations (sheaf_retire_thread()).
 * That is what makes a cross-thread free as cheap as a local one (it used to
 * be a compare-and-swap on the object's slab each time).
 *
 * Sheaves are allocator metadata: they come from metapools outside managed
 * memory (the kernel kmallocs them), so a sheaf never needs a sheaf.
 */
#include "core/cmdline.h"
#include "page_alloc/metapool.h"
#include "slab/slub/slub.h"

/*
 * One pool per sheaf size; capacities are chosen so sizes are kmalloc
 * buckets (96 would be carved as 128: chunks are 64-byte multiples).
 */
static struct metapool sheaf_pools[] = {
	METAPOOL_INIT(64), METAPOOL_INIT(128), METAPOOL_INIT(192), METAPOOL_INIT(256),
	METAPOOL_INIT(512),
	METAPOOL_INIT(1024), METAPOOL_INIT(2048), METAPOOL_INIT(4096),
};
#define NR_SHEAF_POOLS	(int)(sizeof(sheaf_pools) / sizeof(sheaf_pools[0]))

static struct metapool *sheaf_pool(unsigned int capacity)
{
	size_t bytes = SLAB_SHEAF_HDR + (size_t)capacity * sizeof(void *);

	for (int i = 0; i < NR_SHEAF_POOLS; i++)
		if (bytes <= sheaf_pools[i].size)
			return &sheaf_pools[i];
	return NULL;
}

/* ---- growth ------------------------------------------------------- */

/*
 * A thread whose bursts overflow its main and spare sheaves goes to the
 * barn once a sheaf, a lock round trip each way (malloc 1000 x 256 B, then
 * free them: 34 trips, a third of the time over tcmalloc's).  tcmalloc's
 * thread caches grow a class's list while it overflows (slow start);
 * here such a thread's new sheaves double in capacity every
 * SHEAF_GROW_TRIPS barn trips, up to slub_sheaf_grow_kb of objects and the
 * biggest sheaf pool.  Grown sheaves go through the barn like the others
 * (any thread may get one); the barn counts objects, not sheaves.  A
 * thread that never overflows keeps the cache's sheaf_capacity, so many
 * threads with a few objects each cost no more metadata.
 */
static unsigned int slub_sheaf_grow_kb = 64;
kmem_param("slub_sheaf_grow_kb", slub_sheaf_grow_kb, uint,
	   "KiB of objects a sheaf may grow to for a thread that overflows its sheaves (0: fixed sheaf_capacity)");

#define SHEAF_GROW_TRIPS	8
#define SHEAF_MAX_CAPACITY	((4096u - SLAB_SHEAF_HDR) / sizeof(void *))

static unsigned int sheaf_capacity_at(const struct kmem_cache *s, unsigned int shift)
{
	unsigned int cap = slub_of(s)->sheaf_capacity << shift;

	/* Fill the pool's chunk, as slub_sheaf_capacity() fills its bucket. */
	return shift ? (unsigned int)((sheaf_pool(cap)->size - SLAB_SHEAF_HDR) / sizeof(void *)) : cap;
}

/*
 * How far this cache's sheaves may grow: each step's capacity (rounded up to
 * fill its pool's chunk) within slub_sheaf_grow_kb of objects, and at most
 * half the barn's limit, so that two grown sheaves always fit there (a
 * sheaf the barn can never take would be flushed every time).  After
 * barn_init() has set that limit.
 */
static void sheaf_grow_init(struct kmem_cache *s)
{
	unsigned long max_objs = ((unsigned long)slub_sheaf_grow_kb << 10) / s->size;
	unsigned int shift = 0;

	if (max_objs > slub_of(s)->barn.max_full_objs / 2)
		max_objs = slub_of(s)->barn.max_full_objs / 2;
	while (slub_of(s)->sheaf_capacity && shift < 8 && (slub_of(s)->sheaf_capacity << (shift + 1)) <= SHEAF_MAX_CAPACITY &&
	       sheaf_capacity_at(s, shift + 1) <= max_objs)
		shift++;
	slub_of(s)->sheaf_max_shift = (unsigned char)shift;
}

/* The capacity of this thread's new sheaves (the cache's without a thread). */
static unsigned int sheaf_want(const struct kmem_cache *s, const struct kmem_cache_cpu *c)
{
	return c ? sheaf_capacity_at(s, c->sheaf_shift) : slub_of(s)->sheaf_capacity;
}

/* A barn trip: main and spare could not take the burst. */
static void sheaf_note_trip(const struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	if (c->sheaf_shift < slub_of(s)->sheaf_max_shift && ++c->barn_trips >= SHEAF_GROW_TRIPS) {
		c->sheaf_shift++;
		c->barn_trips = 0;
	}
}

/*
 * Main and spare took the turn: trips spread over a long life (a sheaf
 * swap between each) do not add up to a growth; only bursts, with many
 * trips between two swaps, do.
 */
static void sheaf_note_swap(struct kmem_cache_cpu *c)
{
	if (c->barn_trips)
		c->barn_trips--;
}

/* ------------------------------------------------------------------------ */

static struct slab_sheaf *alloc_empty_sheaf(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	unsigned int capacity = sheaf_want(s, c);
	struct metapool *mp = sheaf_pool(capacity);
	struct slab_sheaf *sheaf = mp ? metapool_alloc(mp) : NULL;

	if (!sheaf)
		return NULL;
	sheaf->next = NULL;
	sheaf->size = 0;
	sheaf->capacity = capacity;
	sheaf->guard = 0;
	stat_s(s, c, SHEAF_ALLOC, 1);
	return sheaf;
}

static void free_empty_sheaf(struct kmem_cache *s, struct kmem_cache_cpu *c,
			     struct slab_sheaf *sheaf)
{
	metapool_free(sheaf_pool(sheaf->capacity), sheaf);
	stat_s(s, c, SHEAF_FREE, 1);
}

/* Give a sheaf's objects back to their slabs; the sheaf is left empty. */
static void sheaf_flush(struct kmem_cache *s, struct kmem_cache_cpu *c, struct slab_sheaf *sheaf)
{
	if (!sheaf->size)
		return;
	stat_s(s, c, SHEAF_FLUSH, sheaf->size);
	__slub_free_to_slabs(s, c, sheaf->size, sheaf->objects);
	sheaf->size = 0;
}

/* ---- the thread's sheaves ------------------------------------------ */

static void set_main(struct kmem_cache_cpu *c, struct slab_sheaf *sheaf)
{
	c->main = sheaf;
	c->objs = sheaf->objects;
	c->count = sheaf->size;
	c->cap = sheaf->capacity;
	sheaf_hot_reload(c);
}

/* Write the cached count back: the sheaf is about to leave main. */
static struct slab_sheaf *take_main(struct kmem_cache_cpu *c)
{
	struct slab_sheaf *sheaf = c->main;

	sheaf_settle(c);
	sheaf->size = c->count;
	return sheaf;
}

static void swap_main_spare(struct kmem_cache_cpu *c)
{
	struct slab_sheaf *old = take_main(c);

	set_main(c, c->spare);
	c->spare = old;
}

/* Sheaves come on the first slow path of a thread that uses the cache. */
static bool sheaf_install(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	if (c->main)
		return true;
	if (!slub_of(s)->sheaf_capacity)
		return false;
	struct slab_sheaf *sheaf = alloc_empty_sheaf(s, c);
	if (!sheaf)
		return false;
	set_main(c, sheaf);
	return true;
}

/* ---- the barn ------------------------------------------------------ */

/*
 * The kernel's barn holds at most MAX_FULL_SHEAVES full sheaves per node,
 * shared by all its CPUs.  A program that frees a burst of objects and then
 * allocates them again (a request's worth of buffers) overflows that and
 * pays a flush to slabs and a refill for each sheaf.  A userspace allocator
 * keeps such bursts in its caches (tcmalloc's thread caches grow to a few
 * MiB), so by default the barn may hold more full sheaves, up to about
 * slub_barn_kb of objects per cache; 0 gives the kernel's fixed limit.
 * 1 MiB: batches of 4096 x 256 B allocated then freed in order went
 * through slabs (a flush and a refill per object, and each round's slabs
 * freed to the page allocator and taken back) at 256 KiB, 211 instructions
 * an object against 110; frag's and longlived's RSS moved by under 0.3 MB.
 */
static unsigned int slub_barn_kb = 1024;
kmem_param("slub_barn_kb", slub_barn_kb, uint,
	   "bytes of objects (KiB) a cache's barn may hold in full sheaves (0: the kernel's 10 sheaves)");

void barn_init(struct kmem_cache *s)
{
	struct node_barn *barn = &slub_of(s)->barn;
	unsigned long sheaf_bytes = (unsigned long)slub_of(s)->sheaf_capacity * s->size;
	unsigned long n = sheaf_bytes ? ((unsigned long)slub_barn_kb << 10) / sheaf_bytes : 0;

	kmem_lock_init(&barn->lock);
	barn->full = barn->empty = NULL;
	barn->nr_full = barn->nr_empty = 0;
	barn->max_full = n < MAX_FULL_SHEAVES ? MAX_FULL_SHEAVES :
			 n > MAX_FULL_SHEAVES_CAP ? MAX_FULL_SHEAVES_CAP : (unsigned int)n;
	/*
	 * The kernel keeps as many empty sheaves as full ones (10 and 10): a
	 * burst of frees that fills the barn needs that many empties to go
	 * on, and its allocations give them back.  With fewer, every round
	 * trip frees and allocates max_full - MAX_EMPTY_SHEAVES sheaves (26
	 * per 1000 objects of 256 B).
	 */
	barn->max_empty = barn->max_full;
	barn->full_objs = 0;
	barn->low_full = barn->low_prev = barn->gets = 0;
	barn->round_ns = 0;
	barn->max_full_objs = (unsigned long)barn->max_full * slub_of(s)->sheaf_capacity;
	sheaf_grow_init(s);
}

/* A barn list and its count, under barn->lock (the counts are peeked unlocked). */
static void barn_push(struct slab_sheaf **list, unsigned int *nr, struct slab_sheaf *sheaf)
{
	sheaf->next = *list;
	*list = sheaf;
	__atomic_store_n(nr, *nr + 1, __ATOMIC_RELAXED);
}

static struct slab_sheaf *barn_pop(struct slab_sheaf **list, unsigned int *nr)
{
	struct slab_sheaf *sheaf = *list;

	*list = sheaf->next;
	__atomic_store_n(nr, *nr - 1, __ATOMIC_RELAXED);
	return sheaf;
}

static void barn_add_objs(struct node_barn *barn, long n)
{
	__atomic_store_n(&barn->full_objs, barn->full_objs + (unsigned long)n, __ATOMIC_RELAXED);
}

/* Trade @empty (may be NULL) for a full sheaf; NULL if the barn has none. */
static struct slab_sheaf *barn_replace_empty(struct kmem_cache *s, struct kmem_cache_cpu *c,
					     struct slab_sheaf *empty)
{
	struct node_barn *barn = &slub_of(s)->barn;
	struct slab_sheaf *full = NULL;

	/* Unlocked peek: a stale answer only costs a refill or a lock. */
	if (!__atomic_load_n(&barn->nr_full, __ATOMIC_RELAXED)) {
		stat_inc(c, BARN_GET_FAIL);
		return NULL;
	}
	kmem_lock(&barn->lock);
	if (barn->full) {
		full = barn_pop(&barn->full, &barn->nr_full);
		barn_add_objs(barn, -(long)full->size);
		barn->gets++;
		if (barn->nr_full < barn->low_full)
			barn->low_full = barn->nr_full;
		if (empty && barn->nr_empty < barn->max_empty) {
			barn_push(&barn->empty, &barn->nr_empty, empty);
			empty = NULL;
		}
	}
	kmem_unlock(&barn->lock);
	if (!full) {
		stat_inc(c, BARN_GET_FAIL);
		return NULL;
	}
	if (empty)
		free_empty_sheaf(s, c, empty);
	stat_inc(c, BARN_GET);
	return full;
}

/*
 * Leave @full in the barn and get an empty sheaf back (from the barn, or a
 * new one).  NULL if the barn is at its limit, or there is no memory for an
 * empty sheaf: @full stays the caller's.  The empty sheaf is had before
 * @full goes in: once there, another thread may take it at once, so
 * nothing may fail after.
 */
static struct slab_sheaf *barn_replace_full(struct kmem_cache *s, struct kmem_cache_cpu *c,
					    struct slab_sheaf *full)
{
	struct node_barn *barn = &slub_of(s)->barn;
	struct slab_sheaf *empty = NULL;
	bool must_alloc = false;

	for (;;) {
		/* Unlocked peeks: a stale answer only costs a lock or an allocation. */
		if (__atomic_load_n(&barn->full_objs, __ATOMIC_RELAXED) + full->size > barn->max_full_objs)
			break;
		if (!empty && (must_alloc || !__atomic_load_n(&barn->nr_empty, __ATOMIC_RELAXED)) &&
		    !(empty = alloc_empty_sheaf(s, c)))
			return NULL;
		kmem_lock(&barn->lock);
		if (barn->full_objs + full->size > barn->max_full_objs) {
			kmem_unlock(&barn->lock);
			break;
		}
		if (!empty && !barn->empty) {
			/* The barn's empties went meanwhile: come back with one of our own. */
			kmem_unlock(&barn->lock);
			must_alloc = true;
			continue;
		}
		barn_push(&barn->full, &barn->nr_full, full);
		barn_add_objs(barn, full->size);
		if (!empty)
			empty = barn_pop(&barn->empty, &barn->nr_empty);
		kmem_unlock(&barn->lock);
		stat_inc(c, BARN_PUT);
		return empty;
	}
	if (empty)
		free_empty_sheaf(s, c, empty);
	stat_inc(c, BARN_PUT_FAIL);
	return NULL;
}

/* Flush every sheaf in the barn to slabs and free them (shrink, destroy). */
void barn_shrink(struct kmem_cache *s)
{
	struct node_barn *barn = &slub_of(s)->barn;
	struct slab_sheaf *full, *empty;

	if (!slub_of(s)->sheaf_capacity)
		return;
	kmem_lock(&barn->lock);
	full = barn->full;
	empty = barn->empty;
	barn->full = barn->empty = NULL;
	__atomic_store_n(&barn->nr_full, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&barn->nr_empty, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&barn->full_objs, 0, __ATOMIC_RELAXED);
	barn->low_full = barn->low_prev = barn->gets = 0;
	kmem_unlock(&barn->lock);
	while (full) {
		struct slab_sheaf *next = full->next;
		sheaf_flush(s, NULL, full);
		free_empty_sheaf(s, NULL, full);
		full = next;
	}
	while (empty) {
		struct slab_sheaf *next = empty->next;
		free_empty_sheaf(s, NULL, empty);
		empty = next;
	}
}

/*
 * The full sheaves nobody took since the last reap go back to their slabs
 * (all of them if the barn gave out none: the cache's allocations have no
 * use for it; else half, as jemalloc's tcache GC flushes part of a bin's
 * low-water mark).  A barn holds up to slub_barn_kb of objects, and a
 * cache whose frees outlive its allocations (a size class a program has
 * moved away from) would otherwise keep them, each one pinning a slab
 * that has no other live object (longlived: 90 MB of slabs).  The oldest
 * sheaves go, from the bottom of the stack.  Returns the objects flushed.
 */
unsigned long barn_reap(struct kmem_cache *s, struct kmem_cache_cpu *c, unsigned long long now)
{
	struct node_barn *barn = &slub_of(s)->barn;
	struct slab_sheaf *list = NULL;
	unsigned long objs = 0;
	unsigned long long round = slub_reap_ms * 1000000ull;

	/* Unlocked peeks: a stale answer only delays a reap. */
	if (!slub_of(s)->sheaf_capacity || !__atomic_load_n(&barn->nr_full, __ATOMIC_RELAXED) ||
	    now - __atomic_load_n(&barn->round_ns, __ATOMIC_RELAXED) < round)
		return 0;
	kmem_lock(&barn->lock);
	/* A round lasts slub_reap_ms at least, however many threads look. */
	if (now - barn->round_ns < round) {
		kmem_unlock(&barn->lock);
		return 0;
	}
	__atomic_store_n(&barn->round_ns, now, __ATOMIC_RELAXED);
	unsigned int low = barn->low_full < barn->low_prev ? barn->low_full : barn->low_prev;
	unsigned int idle = low < barn->nr_full ? low : barn->nr_full;
	if (barn->gets)
		idle /= 2;
	if (idle) {
		struct slab_sheaf **link = &barn->full;
		for (unsigned int keep = barn->nr_full - idle; keep; keep--)
			link = &(*link)->next;
		list = *link;
		*link = NULL;
		__atomic_store_n(&barn->nr_full, barn->nr_full - idle, __ATOMIC_RELAXED);
		for (struct slab_sheaf *sh = list; sh; sh = sh->next)
			objs += sh->size;
		barn_add_objs(barn, -(long)objs);
	}
	barn->low_prev = barn->low_full - idle;
	barn->low_full = barn->nr_full;
	barn->gets = 0;
	kmem_unlock(&barn->lock);
	while (list) {
		struct slab_sheaf *next = list->next;
		sheaf_flush(s, c, list);
		free_empty_sheaf(s, c, list);
		list = next;
	}
	return objs;
}

/*
 * A free found the free key in @x (slub.h): a double free if @x is among
 * the barn's objects.  The newest BARN_LOOK_OBJS of them are looked at:
 * where an exited thread's sheaves are (sheaf_retire_thread()), so that a
 * block freed by a thread that has exited and then by another is caught
 * as it was when the exit flushed it to its slab.  A bound, because a
 * block freed without its key word written since its last free comes
 * here too, and a barn may hold thousands of objects.
 */
#define BARN_LOOK_OBJS	1024

bool barn_holds(struct kmem_cache *s, const void *x)
{
	struct node_barn *barn = &slub_of(s)->barn;
	unsigned int budget = BARN_LOOK_OBJS;
	bool found = false;

	kmem_lock(&barn->lock);
	for (struct slab_sheaf *sh = barn->full; sh && budget && !found; sh = sh->next) {
		unsigned int n = sh->size < budget ? sh->size : budget;
		for (unsigned int i = 0; i < n; i++)
			if (sh->objects[i] == x) {
				found = true;
				break;
			}
		budget -= n;
	}
	kmem_unlock(&barn->lock);
	return found;
}

/* Objects in this thread's main and spare sheaves of a slot. */
unsigned long sheaf_thread_objects(struct kmem_cache_cpu *c)
{
	if (!c->main)
		return 0;
	return c->count + (c->spare ? c->spare->size : 0);
}

unsigned long barn_objects(struct kmem_cache *s)
{
	unsigned long n;

	kmem_lock(&slub_of(s)->barn.lock);
	n = slub_of(s)->barn.full_objs;
	kmem_unlock(&slub_of(s)->barn.lock);
	return n;
}

/* ---- slow paths ---------------------------------------------------- */

/*
 * Main is empty: make a sheaf with objects main, from the spare or the barn.
 * False if neither has one (the caller refills from slabs or stops).
 */
static bool main_from_spare_or_barn(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	struct slab_sheaf *full;

	if (c->spare && c->spare->size) {
		swap_main_spare(c);
		sheaf_note_swap(c);
		return true;
	}
	if (!(full = barn_replace_empty(s, c, c->spare ? take_main(c) : NULL)))
		return false;
	sheaf_note_trip(s, c);
	/* Without a spare, keep the empty main as one. */
	if (!c->spare)
		c->spare = take_main(c);
	set_main(c, full);
	return true;
}

/*
 * How many objects to take from slabs into an empty main.  A thread's
 * first refills of a cache take 2, 4, 8, 16, 32 objects (objects over 2
 * KiB start from one: 4 KiB ones 1, 2, 4, 8, 16), then a whole sheaf
 * (after SHEAF_RAMP refills): a thread that allocates a few objects of a
 * class (most of a program's threads, for most classes) then pins and
 * touches a few slots, not a sheaf's worth (1000 threads x 10 classes, one
 * object each: RSS 212 -> 151 MB with a ramp from 8, 58 -> 51 MB from 2).
 * A thread that goes on takes two refills more than with a ramp from 8.
 */
static unsigned int sheaf_refill_size(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	if (c->sheaf_refills == SHEAF_RAMP)
		return c->cap;
	unsigned int first = PAGE_SIZE / s->size;
	unsigned int n = (first < 1 ? 1 : first > 2 ? 2 : first) << c->sheaf_refills++;

	return n < c->cap ? n : c->cap;
}

/*
 * Main is empty (and so is the cpu slab's freelist).  Returns an object
 * from a sheaf, or NULL when the cache has no sheaves here or the slabs
 * are out of memory: the caller then takes the slab path.
 */
void *sheaf_alloc_slow(struct kmem_cache *s, struct kmem_cache_cpu *c, gfp_t gfp)
{
	/* A new slot's first main: a sheaf an exited thread left (sheaf_retire_thread()), if any. */
	if (!c->main && slub_of(s)->sheaf_capacity &&
	    __atomic_load_n(&slub_of(s)->barn.nr_full, __ATOMIC_RELAXED)) {
		struct slab_sheaf *full = barn_replace_empty(s, c, NULL);
		if (full)
			set_main(c, full);
	}
	if (!sheaf_install(s, c))
		return NULL;
	sheaf_settle(c);
	slub_reap_note_alloc(c);
	if (!c->count && !main_from_spare_or_barn(s, c)) {
		/* The ramp's refills share the node's slabs while the thread has no slab of its own. */
		bool shared = c->sheaf_refills < SHEAF_RAMP && !c->slab && !c->freelist && !c->partial;
		unsigned int want = sheaf_refill_size(s, c);
		unsigned int n = shared ? __slub_refill_shared(s, c, gfp, want, c->objs)
					: __slub_alloc_from_slabs(s, c, gfp, want, c->objs);
		if (!n)
			return NULL;
		/*
		 * The free key in each, as a free would have written it: a flush
		 * checks it (__slub_free_to_slabs()), and an object refilled and
		 * flushed again was never handed out.
		 */
		if (s->free_key_off != s->offset)
			for (unsigned int i = 0; i < n; i++)
				*slub_free_key_word(s, c->objs[i]) = s->free_key;
		c->count = n;	/* SHEAF_REFILL counted as it went */
	}
	stat_inc(c, ALLOC_PCS);
	void *x = c->objs[--c->count];
	sheaf_hot_reload(c);
	return x;
}

/*
 * Main is full: make an empty sheaf main, from the spare or the barn (or a
 * new one while there is no spare).  False if the barn is at its limit (or
 * there is no memory for a sheaf): main is still the full one.
 */
static bool main_to_spare_or_barn(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	struct slab_sheaf *empty;

	if (c->spare && !c->spare->size) {
		/* A grown thread trades a small empty spare for one of its size. */
		if (c->spare->capacity < sheaf_want(s, c) && (empty = alloc_empty_sheaf(s, c))) {
			free_empty_sheaf(s, c, c->spare);
			c->spare = empty;
		}
		swap_main_spare(c);
		sheaf_note_swap(c);
		return true;
	}
	if (!c->spare) {
		/* Keep the full one as the spare: the next allocations may want it. */
		if (!(empty = alloc_empty_sheaf(s, c)))
			return false;
		c->spare = take_main(c);
		set_main(c, empty);
		return true;
	}
	if (!(empty = barn_replace_full(s, c, take_main(c))))
		return false;
	sheaf_note_trip(s, c);
	if (empty->capacity < sheaf_want(s, c)) {
		struct slab_sheaf *grown = alloc_empty_sheaf(s, c);
		if (grown) {
			free_empty_sheaf(s, c, empty);
			empty = grown;
		}
	}
	set_main(c, empty);
	return true;
}

/*
 * Main is full (or not there yet).  Pushes @x and returns true, or false
 * when the cache has no sheaves here: the caller frees to the slab.
 */
bool sheaf_free_slow(struct kmem_cache *s, struct kmem_cache_cpu *c, void *x)
{
	if (!sheaf_install(s, c))
		return false;
	sheaf_settle(c);
	if (c->count == c->cap && !main_to_spare_or_barn(s, c)) {
		sheaf_flush(s, c, take_main(c));
		set_main(c, c->main);
	}
	c->objs[c->count++] = x;
	c->hot = x;
	stat_inc(c, FREE_PCS);
	return true;
}

/*
 * Bulk allocation (kernel alloc_from_pcs_bulk): main's objects, then the
 * spare's and the barn's full sheaves, a memcpy each.  Returns how many
 * were taken; the caller takes the rest from slabs.
 */
size_t sheaf_alloc_bulk(struct kmem_cache *s, struct kmem_cache_cpu *c, size_t n, void **p)
{
	size_t got = 0;

	if (!sheaf_install(s, c))
		return 0;
	sheaf_settle(c);
	slub_reap_note_alloc(c);
	for (;;) {
		size_t take = c->count < n - got ? c->count : n - got;

		c->count -= (unsigned int)take;
		memcpy(p + got, c->objs + c->count, take * sizeof(void *));
		got += take;
		if (got == n || !main_from_spare_or_barn(s, c))
			break;
	}
	sheaf_hot_reload(c);
	stat_add(c, ALLOC_PCS, (unsigned int)got);
	return got;
}

/*
 * Push the objects of p[*ip..n) that pass a single free's checks into
 * objs[count..cap), the others to p[*restp..]; returns the new count.
 *
 * Every object is looked up, even a neighbour of the last: whether two
 * neighbours share a slab is a coin toss once the objects have been
 * through sheaves, and the mispredicted branch of a "same slab as the
 * last?" shortcut cost more than the lookup (bulk 158: 4.3 ns against
 * 3.1).  The loop's invariants are locals: through c the compiler would
 * reload them after every store to objs.
 */
/*
 * A bulk free found the free key in @x (slub.h): is @x free already?  In
 * main as this pass has filled it (objs up to @top: c->count is not
 * stored yet), or where slub_object_is_free() looks.
 */
static __attribute__((noinline)) bool bulk_keyed_is_free(struct kmem_cache *s, struct kmem_cache_cpu *c,
							 struct slab *slab, void **objs, void **top, void *x)
{
	for (void **q = objs; q < top; q++)
		if (*q == x)
			return true;
	return slub_object_is_free(s, slab, c, x);
}

static __attribute__((always_inline)) inline unsigned int
push_checked(const struct kmem_cache *s, struct kmem_cache_cpu *c, void **objs, unsigned int count,
	     unsigned int cap, void **p, size_t *ip, size_t n, size_t *restp, void **lastp)
{
	const uintptr_t mbase = (uintptr_t)mm_model.base;
	const uintptr_t limit = mm_online_pages() << PAGE_SHIFT;
	struct page *const map = mm_model.mem_map;
	const uint32_t *const words = mm_model.page_map;
	const uint64_t magic = s->div_magic;
	const uintptr_t key = s->free_key;
	const unsigned int key_off = s->free_key_off;
	size_t i = *ip, rest = *restp;
	void *last = *lastp;

	/*
	 * A pass takes as many entries as main has room for, so the inner
	 * loop has one bound; holes and rejects leave room for another.
	 */
	while (i < n && count < cap) {
		size_t end = i + (n - i < cap - count ? n - i : cap - count);
		void **top = objs + count;

		for (; i < end; i++) {
			void *x = p[i];
			if (!x)		/* holes are allowed, as in the kernel */
				continue;
			uintptr_t off = (uintptr_t)x - mbase;
			if (unlikely(off >= limit) || unlikely(x == last))
				goto reject;
			/* The head through the page map (slab_map_word()), as free() finds it. */
			unsigned long idx = off >> PAGE_SHIFT;
			uint32_t word = __atomic_load_n(&words[idx], __ATOMIC_RELAXED);
			struct slab *slab = page_slab(map + (idx - (word >> SLAB_MAP_HEAD_SHIFT)));
			off = (uintptr_t)x - slab->obj_base;
			/* off < obj_span < 2^32: the 64-bit product is the 32-bit one. */
			if (unlikely(!PageSlab(slab_page(slab))) || unlikely(slab->slab_cache != s) ||
			    unlikely(off >= slab->obj_span) || unlikely(!offset_is_multiple(off, magic)) ||
			    unlikely(!ss_inuse(slab_state(slab))))
				goto reject;
			/* The free key: found, then looked for among the free objects. */
			uintptr_t *kw = (uintptr_t *)((char *)x + key_off);
			if (unlikely(*kw == key) &&
			    bulk_keyed_is_free((struct kmem_cache *)s, c, slab, objs, top, x)) {
				report_double_free((struct kmem_cache *)s, x);
				continue;
			}
			*kw = key;
			*top++ = x;
			last = x;
			continue;
reject:
			/* The slab path reports it (a repeat of the last pushed is reported here). */
			if (x == last)
				report_double_free((struct kmem_cache *)s, x);
			else
				p[rest++] = x;
		}
		count = (unsigned int)(top - objs);
	}
	*ip = i;
	*restp = rest;
	*lastp = last;
	return count;
}

/*
 * Bulk free (kernel free_to_pcs_bulk): into main, checked like single
 * frees; a full main goes to the spare or the barn for an empty one.  When
 * the barn is at its limit the rest is left for the slab path, which can
 * give whole slabs back (flushing sheaves here would only move objects
 * from one array to the other).  Entries that fail a check and those left
 * over are moved to the front of @p for the slab path (which reports the
 * bad ones); returns how many.  An object equal to the last one pushed is
 * reported here: the slab path could not see it sits in a sheaf.
 */
size_t sheaf_free_bulk(struct kmem_cache *s, struct kmem_cache_cpu *c, size_t n, void **p)
{
	size_t rest = 0, i = 0;

	if (!sheaf_install(s, c))
		return n;
	sheaf_settle(c);
	/* Objects pushed: each main's count when it leaves, less its count when it came. */
	long pushed = -(long)c->count;
	/* Main's top (objs[-1] is a NULL guard); later the last object pushed, whichever sheaf it went to. */
	void *last = c->objs[(int)c->count - 1];

	for (;;) {
		/* Locals inside: stores through objs could alias c's fields otherwise. */
		c->count = push_checked(s, c, c->objs, c->count, c->cap, p, &i, n, &rest, &last);
		if (i == n)
			break;
		/* Main is full: count it as it leaves (or, if it stays, at the end). */
		unsigned int full = c->count;
		if (!main_to_spare_or_barn(s, c))
			break;
		pushed += full - c->count;
	}
	pushed += c->count;
	sheaf_hot_reload(c);
	stat_add(c, FREE_PCS, (unsigned int)pushed);
	/*
	 * Main filled on the entry before and the barn is full: the slab path
	 * cannot see that a repeat of the last object pushed sits in a sheaf.
	 */
	while (i < n && (!p[i] || p[i] == last)) {
		if (p[i])
			report_double_free(s, p[i]);
		i++;
	}
	if (i < n)	/* not the common case: every object went into sheaves */
		memmove(p + rest, p + i, (n - i) * sizeof(void *));
	return rest + (n - i);
}

/*
 * sheaf_free_bulk() when all @n objects fit in main (the caller checked
 * cap against count): one pass, no sheaf exchange.  The objects
 * that fail a check go to the slab path, which reports them.
 */
void sheaf_free_bulk_fit(struct kmem_cache *s, struct kmem_cache_cpu *c, size_t n, void **p)
{
	size_t i = 0, rest = 0;
	unsigned int count;

	sheaf_settle(c);
	count = c->count;
	void *last = c->objs[(int)count - 1];	/* objs[-1] is a NULL guard */
	c->count = push_checked(s, c, c->objs, count, c->cap, p, &i, n, &rest, &last);
	sheaf_hot_reload(c);
	stat_add(c, FREE_PCS, c->count - count);
	if (unlikely(rest))
		free_bulk_slabs(s, c, rest, p);
}

/*
 * The thread exits: its sheaves go to the barn whole, those with objects
 * as full ones (the barn counts objects, not sheaves), the empty ones for
 * the next thread to fill, and the next thread that allocates from the
 * cache takes them (sheaf_alloc_slow()).  A program of many short threads
 * (a request each) otherwise pays at every exit a flush of each class's
 * sheaves to their slabs, a lock and a slab touched per few objects, and
 * at the next thread's first allocations the same objects' refill (2000
 * threads of 100 blocks of 16..512 B, 23 classes each: 1.47 objects
 * refilled and 1.27 flushed per allocation).  The kernel's sheaves belong
 * to CPUs, which outlive their tasks; this is the closest a per-thread
 * version comes.  What the barn has no room for is flushed, as before,
 * and what nobody takes goes back at its next reap (barn_reap()).
 */
void sheaf_retire_thread(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	struct node_barn *barn = &slub_of(s)->barn;
	struct slab_sheaf *sh[2];

	if (!c->main)
		return;
	/* The spare first: main, the last freed to, comes out of the barn first. */
	sh[1] = take_main(c);
	sh[0] = c->spare;
	c->main = c->spare = NULL;
	c->objs = NULL;
	c->count = c->cap = 0;
	for (int i = 0; i < 2; i++)
		if (sh[i])
			sheaf_check_keys(s, sh[i]->size, sh[i]->objects);
	kmem_lock(&barn->lock);
	for (int i = 0; i < 2; i++) {
		struct slab_sheaf *sheaf = sh[i];
		if (!sheaf)
			continue;
		if (sheaf->size && barn->full_objs + sheaf->size <= barn->max_full_objs) {
			barn_push(&barn->full, &barn->nr_full, sheaf);
			barn_add_objs(barn, sheaf->size);
			stat_inc(c, BARN_PUT);
			sh[i] = NULL;
		} else if (!sheaf->size && barn->nr_empty < barn->max_empty) {
			barn_push(&barn->empty, &barn->nr_empty, sheaf);
			sh[i] = NULL;
		}
	}
	kmem_unlock(&barn->lock);
	for (int i = 0; i < 2; i++)
		if (sh[i]) {
			sheaf_flush(s, c, sh[i]);
			free_empty_sheaf(s, c, sh[i]);
		}
}

/* Empty the thread's sheaves into slabs and drop them (flush, destroy, an idle slot). */
void sheaf_flush_thread(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	struct slab_sheaf *main = c->main, *spare = c->spare;

	if (!main)
		return;
	take_main(c);
	c->main = c->spare = NULL;
	c->objs = NULL;
	c->count = c->cap = 0;
	sheaf_flush(s, c, main);
	free_empty_sheaf(s, c, main);
	if (spare) {
		sheaf_flush(s, c, spare);
		free_empty_sheaf(s, c, spare);
	}
}

void sheaf_fork_prepare(void)
{
	for (int i = 0; i < NR_SHEAF_POOLS; i++)
		kmem_lock(&sheaf_pools[i].lock);
}

void sheaf_fork_parent(void)
{
	for (int i = NR_SHEAF_POOLS - 1; i >= 0; i--)
		kmem_unlock(&sheaf_pools[i].lock);
}

void sheaf_fork_child(void)
{
	for (int i = 0; i < NR_SHEAF_POOLS; i++)
		kmem_lock_init(&sheaf_pools[i].lock);
}
