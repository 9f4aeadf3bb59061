// SPDX-License-Identifier: MIT
/*
 * SLUB's boot parameters for slab sizes, hardening and merging, each case
 * in a child with its own boot (mem=64M nr_cpus=2, so that the defaults are
 * those of the 2-CPU Linux 6.18 the layout oracle comes from):
 *
 *  - slub_min_order=3 (and the 6.x alias slab_min_order): a 256-byte cache
 *    gets order 3 and 128 objects a slab (default: order 0, 16);
 *  - slub_max_order=0: kmalloc-4k gets order 0 and one object (default:
 *    order 3, 8); kmalloc-8k cannot, and keeps its minimum order, 1;
 *  - slub_min_objects=64: a 1024-byte cache, order 2 with 16 objects by
 *    default, gets order 3 with 32 (the kernel caps min_objects at what
 *    slub_max_order holds);
 *  - slab_freelist_hardened=1: a free object stores its free pointer
 *    mangled (ptr ^ random ^ swab(address)) and it reads back right; by
 *    default it is stored as is;
 *  - slab_nomerge, then slab_merge (the last one wins): two identical
 *    caches are two caches, or one with an alias;
 *  - kmem_cache_create_order() (malloc's classes past 8 KiB): a 9216-byte
 *    cache gets order 5 and 14 objects where slub_max_order gives order 3
 *    and 3 (but its slabs grow to that from its minimum order, unless a
 *    bulk takes them whole); a cap below slub_max_order changes
 *    nothing, one past MAX_PAGE_ORDER is refused; kmem_cache_slab_fit()
 *    agrees;
 *  - kmem_cache_small_first() (malloc's classes): a cache's first slab is
 *    of its minimum order, each next one an order more, up to its order.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "slab/slab.h"
#include "slab/slub/slub.h"

#include "lib/kt_util.h"
#include "ktest.h"

/* The number in /sys/kernel/slab/<cache>/<attr>, or -1. */
static long attr(const char *cache, const char *name)
{
	char path[128], buf[64];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", cache, name);
	if (kmem_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtol(buf, NULL, 10);
}

/* Order and objects of a fresh SLAB_NO_MERGE cache of @size bytes under @cmdline. */
static void new_cache_layout(const char *cmdline, unsigned int size, long *order, long *objs)
{
	KT_ASSERT_EQ(kmem_init(cmdline), 0);
	struct kmem_cache *s = kmem_cache_create("kt_params", size, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(s);
	*order = attr("kt_params", "order");
	*objs = attr("kt_params", "objs_per_slab");
	/* Live slabs have it too: one object's slab. */
	void *x = kmem_cache_alloc(s, GFP_KERNEL);
	KT_ASSERT(x);
	KT_EXPECT(compound_order(slab_page(virt_to_slab(x))) == *order);
	kmem_cache_free(s, x);
}

static void min_order(void *arg)
{
	long order, objs;

	new_cache_layout(arg, 256, &order, &objs);
	KT_EXPECT(order == 3);
	KT_EXPECT(objs == 128);
}

static void default_order(void *arg)
{
	long order, objs;

	new_cache_layout(arg, 256, &order, &objs);
	KT_EXPECT(order == 0);
	KT_EXPECT(objs == 16);
	KT_EXPECT(attr("kmalloc-4k", "order") == 3);
	KT_EXPECT(attr("kmalloc-4k", "objs_per_slab") == 8);
}

KTEST(slub_min_order)
{
	KT_ASSERT_CHILD_OK(kt_fork(default_order, "mem=64M nr_cpus=2"));
	KT_ASSERT_CHILD_OK(kt_fork(min_order, "mem=64M nr_cpus=2 slub_min_order=3"));
	KT_ASSERT_CHILD_OK(kt_fork(min_order, "mem=64M nr_cpus=2 slab_min_order=3"));
}

static void max_order(void *arg)
{
	KT_ASSERT_EQ(kmem_init(arg), 0);
	KT_EXPECT(attr("kmalloc-4k", "order") == 0);
	KT_EXPECT(attr("kmalloc-4k", "objs_per_slab") == 1);
	KT_EXPECT(attr("kmalloc-8k", "order") == 1);
	KT_EXPECT(attr("kmalloc-8k", "objs_per_slab") == 1);
	void *x = kmalloc(4096, GFP_KERNEL);
	KT_ASSERT(x);
	KT_EXPECT(compound_order(slab_page(virt_to_slab(x))) == 0);
	kfree(x);
}

KTEST(slub_max_order)
{
	KT_ASSERT_CHILD_OK(kt_fork(max_order, "mem=64M nr_cpus=2 slub_max_order=0"));
	KT_ASSERT_CHILD_OK(kt_fork(max_order, "mem=64M nr_cpus=2 slab_max_order=0"));
}

static void min_objects(void *arg)
{
	long order, objs;

	new_cache_layout(arg, 1024, &order, &objs);
	if (strstr(arg, "min_objects")) {
		KT_EXPECT(order == 3);
		KT_EXPECT(objs == 32);
	} else {
		KT_EXPECT(order == 2);
		KT_EXPECT(objs == 16);
	}
}

KTEST(slub_min_objects)
{
	KT_ASSERT_CHILD_OK(kt_fork(min_objects, "mem=64M nr_cpus=2"));
	KT_ASSERT_CHILD_OK(kt_fork(min_objects, "mem=64M nr_cpus=2 slub_min_objects=64"));
	KT_ASSERT_CHILD_OK(kt_fork(min_objects, "mem=64M nr_cpus=2 slab_min_objects=64"));
}

/*
 * Without sheaves the slab's freelist is the thread's: after one
 * allocation from a fresh slab, the next object's free pointer names the
 * one after it.  Stored mangled with hardening, plain without.
 */
static void hardening(void *arg)
{
	bool hardened = strstr(arg, "hardened=1") != NULL;

	KT_ASSERT_EQ(kmem_init(arg), 0);
	struct kmem_cache *s = kmem_cache_create("kt_harden", 64, 0, SLAB_NO_MERGE, NULL);
	KT_ASSERT(s);
	char *x = kmem_cache_alloc(s, GFP_KERNEL);
	KT_ASSERT(x);
	KT_ASSERT(x == (char *)slab_address(virt_to_slab(x)));	/* the slab's first object */
	char *next = x + s->size, *after = next + s->size;
	uintptr_t stored;
	memcpy(&stored, next + s->offset, sizeof(stored));
	KT_EXPECT(get_freepointer(s, next) == after);
	if (hardened)
		KT_EXPECT(stored != (uintptr_t)after);
	else
		KT_EXPECT(stored == (uintptr_t)after);
	/* Allocation follows the stored pointers right either way. */
	KT_EXPECT(kmem_cache_alloc(s, GFP_KERNEL) == next);
	KT_EXPECT(kmem_cache_alloc(s, GFP_KERNEL) == after);
}

KTEST(slab_freelist_hardened)
{
	KT_ASSERT_CHILD_OK(kt_fork(hardening, "mem=64M slub_sheaves=0"));
	KT_ASSERT_CHILD_OK(kt_fork(hardening, "mem=64M slub_sheaves=0 slab_freelist_hardened=1"));
}

static void merging(void *arg)
{
	bool merge = strstr(arg, "slab_merge") != NULL;

	KT_ASSERT_EQ(kmem_init(arg), 0);
	struct kmem_cache *a = kmem_cache_create("kt_merge_a", 200, 0, 0, NULL);
	struct kmem_cache *b = kmem_cache_create("kt_merge_b", 200, 0, 0, NULL);
	KT_ASSERT(a && b);
	KT_EXPECT((a == b) == merge);
	KT_EXPECT(attr("kt_merge_b", "aliases") == (merge ? attr("kt_merge_a", "aliases") : 0));
}

KTEST(slab_nomerge_and_slab_merge)
{
	KT_ASSERT_CHILD_OK(kt_fork(merging, "mem=64M slab_nomerge"));
	KT_ASSERT_CHILD_OK(kt_fork(merging, "mem=64M slab_nomerge slab_merge"));
}

static void order_cap(void *arg)
{
	unsigned int bytes, objs;

	KT_ASSERT_EQ(kmem_init(arg), 0);
	struct kmem_cache *dflt = kmem_cache_create("kt_cap_default", 9216, 16, SLAB_NO_MERGE, NULL);
	struct kmem_cache *big = kmem_cache_create_order("kt_cap_5", 9216, 16, 0, 5);
	struct kmem_cache *low = kmem_cache_create_order("kt_cap_1", 9216, 16, 0, 1);
	KT_ASSERT(dflt && big && low);
	KT_EXPECT(attr("kt_cap_default", "order") == 3);
	KT_EXPECT(attr("kt_cap_default", "objs_per_slab") == 3);
	KT_EXPECT(attr("kt_cap_5", "order") == 5);
	KT_EXPECT(attr("kt_cap_5", "objs_per_slab") == 14);
	KT_EXPECT(attr("kt_cap_1", "order") == 3);
	KT_EXPECT(kmem_cache_slab_fit("kt_cap_fit", 9216, 16, 0, 5, &bytes, &objs) == 0);
	KT_EXPECT(bytes == 128 * 1024 && objs == 14);
	KT_EXPECT(kmem_cache_slab_fit("kt_cap_fit", 9216, 16, 0, 0, &bytes, &objs) == 0);
	KT_EXPECT(bytes == 32 * 1024 && objs == 3);
	/* Never merged, even with a twin: the twin's slabs would be the wrong size. */
	struct kmem_cache *twin = kmem_cache_create_order("kt_cap_5b", 9216, 16, 0, 5);
	KT_EXPECT(twin && twin != big);
	/*
	 * Live slabs grow to the order: the first is one block's worth of
	 * pages (order 2, one object), each next one an order more (3, 7,
	 * then 14 objects), so that a program with one such block does not
	 * pay 128 KiB.
	 */
	void *x[16];
	unsigned int by_order[6] = { 0 };
	for (int i = 0; i < 16; i++) {
		x[i] = kmem_cache_alloc(big, GFP_KERNEL);
		KT_ASSERT(x[i]);
		unsigned int order = compound_order(slab_page(virt_to_slab(x[i])));
		if (order < 6)
			by_order[order]++;
	}
	KT_EXPECT(by_order[2] == 1 && by_order[3] == 3 && by_order[4] == 7 && by_order[5] == 5);
	for (int i = 0; i < 16; i++)
		kmem_cache_free(big, x[i]);
	/* The low cap changed nothing: its first slab is an ordinary one. */
	void *y = kmem_cache_alloc(low, GFP_KERNEL);
	KT_ASSERT(y);
	KT_EXPECT(compound_order(slab_page(virt_to_slab(y))) == 3);
	kmem_cache_free(low, y);
	/* A bulk of whole slabs gets them at the cache's order, also the first. */
	struct kmem_cache *bulk = kmem_cache_create_order("kt_cap_bulk", 9216, 16, 0, 5);
	void *b[140];
	KT_ASSERT(bulk);
	KT_ASSERT(kmem_cache_alloc_bulk(bulk, GFP_KERNEL, 140, b) == 140);
	unsigned int whole = 0;
	for (int i = 0; i < 140; i++)
		whole += compound_order(slab_page(virt_to_slab(b[i]))) == 5;
	KT_EXPECT(whole >= 126);	/* 9 slabs of 14 at least; the rest may come from a sheaf's refill */
	kmem_cache_free_bulk(bulk, 140, b);
	KT_EXPECT(kmem_cache_create_order("kt_cap_bad", 9216, 16, 0, MAX_PAGE_ORDER + 1) == NULL);
	KT_EXPECT(kmem_cache_slab_fit("kt_cap_bad", 9216, 16, 0, MAX_PAGE_ORDER + 1, &bytes, &objs) ==
		  -EINVAL);
}

KTEST(order_cap_of_kmem_cache_create_order)
{
	KT_ASSERT_CHILD_OK(kt_fork(order_cap, "mem=64M nr_cpus=2"));
}

/*
 * kmem_cache_small_first(): the first slab of a 1 KiB-object cache (order
 * 2, 16 objects with nr_cpus=2) is of its minimum order, 0 (4 objects),
 * the next one of order 1 (8), the others of its order.  Without the call
 * every slab is of order 2.
 */
static void small_first(void *arg)
{
	KT_ASSERT_EQ(kmem_init(arg), 0);
	struct kmem_cache *plain = kmem_cache_create("kt_sf_plain", 1024, 16, SLAB_NO_MERGE, NULL);
	struct kmem_cache *sf = kmem_cache_create("kt_sf", 1024, 16, SLAB_NO_MERGE, NULL);
	KT_ASSERT(plain && sf);
	KT_EXPECT(attr("kt_sf", "order") == 2 && attr("kt_sf", "objs_per_slab") == 16);
	kmem_cache_small_first(sf);

	void *x[64], *y[64];
	unsigned int order0 = 0, order1 = 0, order2 = 0, plain2 = 0;
	for (int i = 0; i < 64; i++) {
		x[i] = kmem_cache_alloc(sf, GFP_KERNEL);
		y[i] = kmem_cache_alloc(plain, GFP_KERNEL);
		KT_ASSERT(x[i] && y[i]);
		unsigned int order = compound_order(slab_page(virt_to_slab(x[i])));
		order0 += order == 0;
		order1 += order == 1;
		order2 += order == 2;
		plain2 += compound_order(slab_page(virt_to_slab(y[i]))) == 2;
	}
	KT_EXPECT(order0 == 4);
	KT_EXPECT(order1 == 8);
	KT_EXPECT(order2 == 52);
	/*
	 * slab_pages counts them: 1 + 2 + 4 x 4 pages (52 objects in order-2
	 * slabs of 16), where slabs x order would say 6 x 4; the plain cache's
	 * 4 x 4 are both.
	 */
	KT_EXPECT(attr("kt_sf", "slabs") == 6);
	KT_EXPECT(attr("kt_sf", "slab_pages") == 19);
	KT_EXPECT(attr("kt_sf_plain", "slab_pages") == 16);
	KT_EXPECT(plain2 == 64);
	for (int i = 0; i < 64; i++) {
		kmem_cache_free(sf, x[i]);
		kmem_cache_free(plain, y[i]);
	}
}

KTEST(small_first_makes_the_first_slab_of_minimum_order)
{
	KT_ASSERT_CHILD_OK(kt_fork(small_first, "mem=64M nr_cpus=2"));
}

KTEST_MAIN((void)0)
