// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>

#include "core/cmdline.h"
#include "malloc/size_class.h"
#include "slab/fastpath.h"
#include "slab/slab_common.h"
#include "platform/os.h"

struct kmem_cache *malloc_class[MALLOC_NR_CLASS_ENTRIES];
uint32_t malloc_slot[MALLOC_NR_CLASS_ENTRIES];

static bool malloc_fine_classes = true;
kmem_param("malloc.fine_classes", malloc_fine_classes, bool,
	   "malloc size classes every 16 B to 128, then eight per doubling to 4 KiB, then those of 128 KiB slabs (0: kmalloc's power-of-two buckets only)");
/* The caches malloc uses grow their slabs from their minimum order (kmem_cache_small_first()). */
static bool malloc_small_first = true;
kmem_param("malloc.small_first", malloc_small_first, bool,
	   "malloc's caches grow their slabs from their minimum order, an order a slab (0: all of the cache's order)");

/* Every candidate to 16 KiB (72), when none is a kmalloc bucket (slab_debug=Z), with room. */
#define NR_OWN_CLASSES	80
static struct kmem_cache *own_caches[NR_OWN_CLASSES];
static int nr_own;
static kmem_lock_t classes_lock = KMEM_LOCK_INIT;
static atomic_int classes_state;	/* 0 none, 1 being set up, 2 done, -1 failed */

/*
 * Past 4 KiB the classes are those of 128 KiB slabs (order 5,
 * kmem_cache_create_order()): the largest 16-byte multiple that fits k to
 * a slab, for k = 31 down to 9 (4224, 4368, 4512, ..., 8192, 8736, 9360,
 * ..., 14560).  An object then costs its size plus under 1% of the slab's
 * rest, where eighths of a power of two in 32 KiB slabs cost up to 12.5%
 * plus the slab's rest: sqlite3's 4376-byte page blocks took 4681 bytes
 * each (malloc-4608, 7 a slab), now 4519 (malloc-4512, 29 a slab).  A
 * young cache's slabs grow to that order from its minimum (allocate_slab()),
 * so a program with a few such blocks does not pay 128 KiB a class.
 */
#define MALLOC_SLAB_CLASS_MIN	4096
#define MALLOC_SLAB_BYTES	(PAGE_SIZE << 5)

static unsigned int slab_class_of(unsigned int size)
{
	unsigned int k = (unsigned int)(MALLOC_SLAB_BYTES / size);

	while (k > 1 && ((MALLOC_SLAB_BYTES / k) & ~15ul) < size)
		k--;
	return (unsigned int)((MALLOC_SLAB_BYTES / k) & ~15ul);
}

/*
 * The class @size falls in: the next multiple of 16 up to 128, then of an
 * eighth of the power of two below (144, 160, ... 256, 288, ... 512, 576,
 * ... 4096), so a block wastes at most 12.5% and 6% on average, then
 * slab_class_of().  Below 1 KiB jemalloc and mimalloc space theirs by
 * quarters; eighths there keep less memory resident when blocks of many
 * sizes are freed and allocated again (docs/benchmarks.md, frag and
 * longlived).  These are the candidates; best_class() picks among them.
 */
static unsigned int class_of(unsigned int size)
{
	if (size <= 128)
		return (size + 15) & ~15u;
	if (size > MALLOC_SLAB_CLASS_MIN)
		return slab_class_of(size);
	unsigned int step = 1u << (31 - __builtin_clz(size - 1)) >> 3;
	return (size + step - 1) & ~(step - 1);
}

static bool is_kmalloc_bucket(unsigned int size)
{
	return !(size & (size - 1)) || size == 96 || size == 192;
}

/*
 * Can kmalloc's bucket @s serve a malloc class?  Every object must be
 * 16-aligned (malloc's promise): slabs start page aligned, so the first
 * object's offset and the stride must be, which kmalloc-96 and -192 are
 * not once slab_debug= red-zones them (8-aligned caches).  And red zones
 * on a naturally aligned bucket pad each object to its alignment
 * (kmalloc-1k's slots become 3072 bytes, as in the kernel): malloc needs
 * only 16, so it makes its own cache then.
 */
static bool bucket_fits_malloc(const struct kmem_cache *s)
{
	return !((s->red_left_pad | s->size) & 15) && !(s->flags & SLAB_RED_ZONE);
}

/*
 * The classes past 4 KiB have slabs of 128 KiB (order 5, past
 * slub_max_order: kmem_cache_create_order()).  Past kmalloc's caches a
 * size's other home is a buddy block (16 KiB for 8193 bytes), and
 * slub_max_order's 32 KiB slabs hold only three 10 KiB objects: 10923
 * bytes each; sqlite3 with 8 KiB pages keeps them in 8480-byte blocks,
 * 8738 bytes each in malloc-8736's slabs (peak 126 -> 103 MB; 110 with
 * eighths of 8 KiB).  A new slab touches every page (its freelist runs
 * through them): such a cache's slabs grow from its minimum order
 * (allocate_slab()), or 128 KiB slabs for the 4-8 KiB classes would cost
 * a short-lived process 20% more page faults (bench_startup).
 */
#define MALLOC_BIG_CLASS_ORDER	5

static unsigned int class_order_cap(unsigned int cls)
{
	return cls > MALLOC_SLAB_CLASS_MIN ? MALLOC_BIG_CLASS_ORDER : 0;
}

/*
 * What an object of class @cls costs in slab memory, as the fraction
 * *bytes / *objs (its cache's slab and the objects in it).  False if no
 * cache could be made.
 */
static bool class_cost(unsigned int cls, unsigned long *bytes, unsigned long *objs)
{
	unsigned int b = 0, o = 0;

	if (is_kmalloc_bucket(cls)) {
		struct kmem_cache *k = kmalloc_cache(kmalloc_slab_index(cls));
		if (k && bucket_fits_malloc(k)) {
			struct slabinfo si = { 0 };
			slab_ops.get_slabinfo(k, &si);
			b = (unsigned int)PAGE_SIZE << si.cache_order;
			o = si.objects_per_slab;
		}
	}
	if (!o) {
		char name[32];
		snprintf(name, sizeof(name), "malloc-%u", cls);
		if (kmem_cache_slab_fit(name, cls, 16, SLAB_NO_MERGE | SLAB_KMALLOC, class_order_cap(cls), &b, &o))
			return false;
	}
	*bytes = b;
	*objs = o;
	return o != 0;
}

/*
 * The fine classes: class_of() of every size, and what each costs.  A
 * class is only worth having if its objects cost less slab than those of
 * every larger one: with order-3 slabs (32 KiB) 6656, 7168, 7680 and 8192
 * all fit 4 a slab, 5632 and 6144 both 5.  So a size gets, of the classes
 * from its own up, the one that costs least, the largest of equals (it
 * gives more room for the same memory, and fewer caches hold partial slabs).
 */
#define NR_CANDIDATES	80	/* 48 to 4 KiB, 24 past it: 72, with room */
static unsigned int candidate[NR_CANDIDATES];
static unsigned long cand_bytes[NR_CANDIDATES], cand_objs[NR_CANDIDATES];
/* Red-zoned (slab_debug=Z): of equals the smallest, so that the red zone follows the block. */
static bool cand_rz[NR_CANDIDATES];
static int nr_candidates;

static void candidates_init(void)
{
	nr_candidates = 0;
	for (unsigned int i = 1; i < MALLOC_NR_CLASS_ENTRIES; i++) {
		unsigned int cls = class_of(i * 16);
		if (nr_candidates && candidate[nr_candidates - 1] == cls)
			continue;
		if (nr_candidates == NR_CANDIDATES)
			break;
		candidate[nr_candidates] = cls;
		char name[32];
		snprintf(name, sizeof(name), "malloc-%u", cls);
		cand_rz[nr_candidates] = kmem_cache_flags(SLAB_NO_MERGE | SLAB_KMALLOC, name) & SLAB_RED_ZONE;
		if (!class_cost(cls, &cand_bytes[nr_candidates], &cand_objs[nr_candidates]))
			cand_objs[nr_candidates] = 0;
		nr_candidates++;
	}
}

/*
 * 0 for a size past kmalloc's caches whose best class costs no less than
 * the page allocator's block: no class then.  The block is a whole buddy
 * order, but what it costs is the pages the size covers: the rest of the
 * block is never touched, where a slab is touched through (its freelist).
 * So 12288 (ten in 128 KiB, 13107 bytes each) is no class: 12000-byte
 * blocks take 12 KiB of a 16 KiB block.
 */
static unsigned int best_class(unsigned int size)
{
	int best = -1;

	for (int j = 0; j < nr_candidates; j++) {
		if (candidate[j] < size || !cand_objs[j])
			continue;
		/* bytes/objs <= best's, cross-multiplied; < when red-zoned */
		if (best < 0 || cand_bytes[j] * cand_objs[best] + cand_rz[j] <= cand_bytes[best] * cand_objs[j])
			best = j;
	}
	if (size > KMALLOC_MAX_CACHE_SIZE &&
	    (best < 0 || cand_bytes[best] >= PAGE_ALIGN((unsigned long)size) * cand_objs[best]))
		return 0;
	/* None could be costed (no memory?): the plain class, whose creation will say. */
	return best < 0 ? class_of(size) : candidate[best];
}

/* The cache for @size, NULL if it has none (see best_class()); *@err if one could not be made. */
static struct kmem_cache *class_cache(unsigned int size, bool *err)
{
	unsigned int cls;

	*err = false;
	if (malloc_fine_classes)
		cls = best_class(size);
	else
		cls = size <= KMALLOC_MAX_CACHE_SIZE ? (unsigned int)kmalloc_size_roundup(size) : 0;
	if (!cls)
		return NULL;
	*err = true;	/* until a cache is found */

	if (cls <= KMALLOC_MAX_CACHE_SIZE && is_kmalloc_bucket(cls)) {
		struct kmem_cache *k = kmalloc_cache(kmalloc_slab_index(cls));
		if (!k || bucket_fits_malloc(k)) {
			*err = !k;
			return k;
		}
	}
	for (int i = 0; i < nr_own; i++)
		if (kmem_cache_size(own_caches[i]) == cls) {
			*err = false;
			return own_caches[i];
		}
	if (nr_own == NR_OWN_CLASSES)
		return NULL;
	char name[32];
	snprintf(name, sizeof(name), "malloc-%u", cls);
	/*
	 * 16-aligned like every malloc block; no merging, so slabinfo names it;
	 * a kmalloc cache, so that slab_debug=UZ red-zones what a block has
	 * beyond its request, as on kmalloc's own.
	 */
	struct kmem_cache *s = kmem_cache_create_order(name, cls, 16, SLAB_NO_MERGE | SLAB_KMALLOC,
						       class_order_cap(cls));
	if (s)
		own_caches[nr_own++] = s;
	*err = !s;
	return s;
}

int malloc_classes_init(void)
{
	int expected = 0;

	if (atomic_load_explicit(&classes_state, memory_order_acquire) == 2)
		return 0;
	/* Only one thread sets up; a reentrant or concurrent caller uses kmalloc meanwhile. */
	if (!atomic_compare_exchange_strong(&classes_state, &expected, 1))
		return -EBUSY;
	kmem_lock(&classes_lock);
	int rc = 0;
	/*
	 * A back-end with a kmalloc of its own (SLOB) frees a block by the
	 * size header in front of it, which its cache objects lack: no
	 * classes, every size is a kmalloc of that size (malloc_slow()).
	 */
	unsigned int nr = slab_ops.kmalloc ? 1 : MALLOC_NR_CLASS_ENTRIES;
	if (malloc_fine_classes && nr > 1)
		candidates_init();
	for (unsigned int i = 1; i < nr && !rc; i++) {
		bool err;
		struct kmem_cache *s = class_cache(i * 16, &err);
		if (err)
			rc = -ENOMEM;
		__atomic_store_n(&malloc_class[i], s, __ATOMIC_RELAXED);
		if (s && malloc_small_first)
			kmem_cache_small_first(s);
		if (s)
			__atomic_store_n(&malloc_slot[i], slab_slot_of(s), __ATOMIC_RELAXED);
	}
	kmem_unlock(&classes_lock);
	atomic_store_explicit(&classes_state, rc ? -1 : 2, memory_order_release);
	return rc;
}

/* fork(): a child must not inherit the lock held (the reaper's trim takes it). */
void malloc_classes_fork_prepare(void)
{
	kmem_lock(&classes_lock);
}

void malloc_classes_fork_parent(void)
{
	kmem_unlock(&classes_lock);
}

void malloc_classes_fork_child(void)
{
	kmem_lock_init(&classes_lock);
}

void malloc_classes_shrink(void)
{
	kmem_lock(&classes_lock);
	for (int i = 0; i < nr_own; i++)
		kmem_cache_shrink(own_caches[i]);
	kmem_unlock(&classes_lock);
}
