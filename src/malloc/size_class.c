// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>

#include "core/cmdline.h"
#include "malloc/size_class.h"
#include "platform/os.h"

struct kmem_cache *malloc_class[MALLOC_NR_CLASS_ENTRIES];
uint16_t malloc_slot[MALLOC_NR_CLASS_ENTRIES];

static bool malloc_fine_classes = true;
kmem_param("malloc.fine_classes", malloc_fine_classes, bool,
	   "malloc size classes four per doubling (0: kmalloc's power-of-two buckets only)");

#define NR_OWN_CLASSES	40	/* every class, when none can be a kmalloc bucket (slab_debug=Z) */
static struct kmem_cache *own_caches[NR_OWN_CLASSES];
static int nr_own;
static kmem_lock_t classes_lock = KMEM_LOCK_INIT;
static atomic_int classes_state;	/* 0 none, 1 being set up, 2 done, -1 failed */

/* The class @size falls in: the next multiple of 16 up to 128, then of a quarter of the power of two below. */
static unsigned int class_of(unsigned int size)
{
	if (size <= 128)
		return (size + 15) & ~15u;
	unsigned int step = 1u << (31 - __builtin_clz(size - 1)) >> 2;
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

static struct kmem_cache *class_cache(unsigned int size)
{
	unsigned int cls = malloc_fine_classes ? class_of(size) : (unsigned int)kmalloc_size_roundup(size);

	if (is_kmalloc_bucket(cls)) {
		struct kmem_cache *k = kmalloc_cache(kmalloc_slab_index(cls));
		if (!k || bucket_fits_malloc(k))
			return k;
	}
	for (int i = 0; i < nr_own; i++)
		if (kmem_cache_size(own_caches[i]) == cls)
			return own_caches[i];
	if (nr_own == NR_OWN_CLASSES)
		return NULL;
	char name[32];
	snprintf(name, sizeof(name), "malloc-%u", cls);
	/*
	 * 16-aligned like every malloc block; no merging, so slabinfo names it;
	 * a kmalloc cache, so that slab_debug=UZ red-zones what a block has
	 * beyond its request, as on kmalloc's own.
	 */
	struct kmem_cache *s = kmem_cache_create(name, cls, 16, SLAB_NO_MERGE | SLAB_KMALLOC, NULL);
	if (s)
		own_caches[nr_own++] = s;
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
	for (unsigned int i = 1; i < MALLOC_NR_CLASS_ENTRIES && !rc; i++) {
		struct kmem_cache *s = class_cache(i * 16);
		if (!s)
			rc = -ENOMEM;
		__atomic_store_n(&malloc_class[i], s, __ATOMIC_RELAXED);
		if (s)
			__atomic_store_n(&malloc_slot[i], (uint16_t)s->index, __ATOMIC_RELAXED);
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
