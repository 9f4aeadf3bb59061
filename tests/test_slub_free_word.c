// SPDX-License-Identifier: MIT
/*
 * kfree() and free() of a cache whose frees are decided from the page map
 * word (slub_free_ptr(): no struct slab, no kmem_cache on the way to the
 * sheaf): each check the path through the slab makes must still be made.
 * A pointer to where an object would start in the slab's tail (past its
 * last object), a free object of a slab none of whose objects is in use,
 * and an object of a new slab that was never handed out must each be
 * reported and change nothing; a cache whose free pointer shares the free
 * key's word (8-byte objects) takes the path through the slab.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "core/printk.h"
#include "slab/slab.h"
#include "slab/slub/slub.h"

#include "ktest.h"
#include "lib/kt_util.h"
#include "lib/slab_test.h"

#define GFP GFP_KERNEL
#define BAD(stmt, needle) KT_ASSERT_ONE_REPORT(stmt, needle)

static struct kmem_cache *new_cache(const char *name, unsigned int size)
{
	return kmem_cache_create(name, size, 0, SLAB_NO_MERGE, NULL);
}

/* Is a free of @s decided by the word (SLUB with sheaves)? */
static bool by_word(struct kmem_cache *s)
{
	return slab_test_is_slub() && slub_free_magic[s->index] != 0;
}

/*
 * A new cache of @size whose frees are decided by the word, or NULL (the
 * test is skipped: under SLAB, SLOB or without sheaves they take the
 * slab's path, which the other suites cover).
 */
static struct kmem_cache *word_cache(const char *name, unsigned int size)
{
	struct kmem_cache *s = new_cache(name, size);

	if (!s) {
		KT_FAIL("kmem_cache_create(%s, %u) failed", name, size);
		return NULL;
	}
	if (!by_word(s)) {
		fprintf(stderr, "  skipped: frees of this cache take the slab's path\n");
		kmem_cache_destroy(s);
		return NULL;
	}
	return s;
}

/* @n objects of @s, none of them @avoid, each written through; 0 on failure. */
static int alloc_avoiding(struct kmem_cache *s, void **p, unsigned int n, const void *avoid)
{
	for (unsigned int i = 0; i < n; i++) {
		p[i] = kmem_cache_alloc(s, GFP);
		if (!p[i] || p[i] == avoid)
			return 0;
		slab_fill(p[i], kmem_cache_size(s), (uintptr_t)p[i]);
	}
	for (unsigned int i = 0; i < n; i++)
		if (slab_check(p[i], kmem_cache_size(s), (uintptr_t)p[i]))
			return 0;
	return 1;
}

/* An object of @s (*@xp) and the slab it is in; NULL on failure. */
static struct slab *first_object(struct kmem_cache *s, char **xp)
{
	*xp = kmem_cache_alloc(s, GFP);
	return *xp ? virt_to_slab(*xp) : NULL;
}

/* Free @p[0..@n) and @x; the cache must validate, then goes. */
static void free_all_and_destroy(struct kmem_cache *s, void **p, unsigned int n, void *x)
{
	for (unsigned int i = 0; i < n; i++)
		kfree(p[i]);
	kfree(x);
	KT_EXPECT(slub_validate(s) == 0);
	kmem_cache_destroy(s);
}

KTEST(tail_past_the_last_object_is_not_an_object)
{
	enum { N = 600 };
	static void *p[N];
	/* 96 B: 4096 << order is never a multiple of 96, so every slab has a tail. */
	struct kmem_cache *s = word_cache("fw_tail", 96);
	if (!s)
		return;
	char *x;
	struct slab *slab = first_object(s, &x);
	KT_ASSERT(slab);
	uintptr_t end = slab->obj_base + slab->obj_span;
	uintptr_t slab_end = (uintptr_t)slab_address(slab) + (PAGE_SIZE << compound_order(slab_page(slab)));
	KT_ASSERT(end + sizeof(uintptr_t) <= slab_end);
	KT_ASSERT_EQ((end - slab->obj_base) % kmem_cache_size(s), 0);
	/* Not the free key there: the key check must not be what catches it. */
	*(uintptr_t *)end = 0;
	char *tail = (char *)end;

	BAD(kfree(tail), "Invalid object pointer");
	BAD(kfree(tail), "Invalid object pointer");
	/* Nothing of it was taken: no allocation returns it, the objects stay apart. */
	KT_ASSERT(alloc_avoiding(s, p, N, tail));
	free_all_and_destroy(s, p, N, x);
}

KTEST(double_free_into_a_slab_with_no_object_in_use)
{
	enum { N = 400 };
	static void *p[N];
	struct kmem_cache *s = word_cache("fw_empty", 256);
	if (!s)
		return;
	KT_ASSERT(alloc_avoiding(s, p, N, NULL));
	for (unsigned int i = 0; i < N; i++)
		kfree(p[i]);
	/* Every object back on its slab: the empty ones the node keeps stay. */
	slub_flush_this_thread(s);
	barn_shrink(s);
	void *victim = NULL;
	for (unsigned int i = 0; i < N && !victim; i++) {
		struct slab *slab = virt_to_slab(p[i]);
		if (slab && slab->slab_cache == s && !ss_inuse(slab_state(slab)))
			victim = p[i];
	}
	KT_ASSERT(victim);
	BAD(kfree(victim), "Object already free");
	KT_ASSERT_EQ(ss_inuse(slab_state(virt_to_slab(victim))), 0);
	KT_ASSERT(alloc_avoiding(s, p, N, NULL));
	/* Handed out once only. */
	unsigned int seen = 0;
	for (unsigned int i = 0; i < N; i++)
		seen += p[i] == victim;
	KT_ASSERT(seen <= 1);
	for (unsigned int i = 0; i < N; i++)
		kfree(p[i]);
	KT_ASSERT_EQ(slub_validate(s), 0);
	kmem_cache_destroy(s);
}

KTEST(free_of_an_object_never_handed_out)
{
	enum { N = 300 };
	static void *p[N];
	struct kmem_cache *s = word_cache("fw_fresh", 128);
	if (!s)
		return;
	char *x;
	struct slab *slab = first_object(s, &x);
	KT_ASSERT(slab);
	/* The slab's last object: a first allocation takes a few from the front. */
	char *y = (char *)(slab->obj_base + slab->obj_span - kmem_cache_size(s));
	KT_ASSERT(y != x);
	BAD(kfree(y), "Object already free");
	/* Handed out once only, whole. */
	KT_ASSERT(alloc_avoiding(s, p, N, NULL));
	unsigned int seen = 0;
	for (unsigned int i = 0; i < N; i++)
		seen += p[i] == y;
	KT_ASSERT(seen <= 1);
	free_all_and_destroy(s, p, N, x);
}

KTEST(free_pointer_in_the_key_word_takes_the_slab_path)
{
	struct kmem_cache *s = new_cache("fw_tiny", 8);
	KT_ASSERT(s);
	if (slab_test_is_slub())
		KT_ASSERT_EQ(slub_free_magic[s->index], 0);
	void *x = kmem_cache_alloc(s, GFP), *y = kmem_cache_alloc(s, GFP);
	KT_ASSERT(x && y && x != y);
	memset(x, 0x5a, 8);
	kfree(x);
	void *z = kmem_cache_alloc(s, GFP);
	KT_ASSERT(z == x);
	kfree(z);
	kfree(y);
	if (slab_test_is_slub())
		KT_ASSERT_EQ(slub_validate(s), 0);
	kmem_cache_destroy(s);
}

KTEST_MAIN(if (slab_test_boot("mem=64M")) return 1;)
