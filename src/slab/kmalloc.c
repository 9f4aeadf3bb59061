// SPDX-License-Identifier: MIT
/*
 * kmalloc and friends (kernel mm/slab_common.c, include/linux/slab.h):
 * kmalloc-8 .. kmalloc-8k caches including 96 and 192, and the page
 * allocator above KMALLOC_MAX_CACHE_SIZE.
 */
#include <string.h>

#include "core/boot.h"
#include "slab/slab.h"
#include "slab/kmalloc.h"

struct kmem_cache *kmalloc_caches[KMALLOC_SHIFT_HIGH + 1];

int kmalloc_init(void)
{
	/* SLOB's kmalloc is its own: size-headed blocks, no kmalloc-N caches. */
	if (slab_ops.kmalloc)
		return 0;
	for (unsigned int i = 1; i <= KMALLOC_SHIFT_HIGH; i++) {
		unsigned int size = kmalloc_index_size(i);
		if (!size || size < KMALLOC_MIN_SIZE)
			continue;
		/* Power-of-two buckets are naturally aligned, whatever the debug options. */
		unsigned int align = (size & (size - 1)) ? 8 : size;
		/* Unmergeable, as in Linux 6.18 (usercopy hardening): kmalloc-N keep
		 * their own names and other caches do not alias into them. */
		kmalloc_caches[i] = kmem_cache_create(kmalloc_index_name(i), size, align,
						      SLAB_KMALLOC | SLAB_NO_MERGE, NULL);
		if (!kmalloc_caches[i])
			return -1;
	}
	return 0;
}

struct kmem_cache *kmalloc_cache(unsigned int index)
{
	return index <= KMALLOC_SHIFT_HIGH ? kmalloc_caches[index] : NULL;
}

static void *kmalloc_large(size_t size, gfp_t gfp)
{
	if (unlikely(size > KMALLOC_MAX_SIZE)) {
		if (!(gfp & __GFP_NOWARN))
			kmem_warn("mm/slab_common.c:__kmalloc_large_node",
				  "kmalloc(%zu): larger than KMALLOC_MAX_SIZE (%lu)\n",
				  size, (unsigned long)KMALLOC_MAX_SIZE);
		return NULL;
	}
	unsigned int order = (unsigned int)get_order(size);
	struct page *page = alloc_pages(gfp | __GFP_COMP, order);
	if (!page)
		return NULL;
	page_set_flag(page, PG_large_kmalloc);
	mod_zone_page_state(NR_KMALLOC_LARGE, 1L << order);
	mod_zone_page_state(NR_SLAB_UNRECLAIMABLE, 1L << order);
	return __page_address(page);
}

static void free_large_kmalloc(struct page *head, const void *p)
{
	unsigned int order = compound_order(head);

	if (unlikely(p != __page_address(head))) {
		slab_report_bad_free("kfree", p, "pointer into the middle of a large kmalloc; not freed");
		return;
	}
	page_clear_flag(head, PG_large_kmalloc);
	mod_zone_page_state(NR_KMALLOC_LARGE, -(1L << order));
	mod_zone_page_state(NR_SLAB_UNRECLAIMABLE, -(1L << order));
	__free_pages(head, order);
}

void *__kmalloc_slow(size_t size, gfp_t gfp)
{
	if (!size)
		return ZERO_SIZE_PTR;
	if (kmem_boot())
		return NULL;
	if (size <= KMALLOC_MAX_CACHE_SIZE) {
		if (slab_ops.kmalloc)
			return slab_ops.kmalloc(size, gfp, _RET_IP_);
		return slab_alloc(kmalloc_caches[kmalloc_slab_index(size)], gfp, (unsigned int)size);
	}
	return kmalloc_large(size, gfp);
}

KMEM_API void *kmalloc(size_t size, gfp_t gfp)
{
	return kmalloc_inline(size, gfp);
}

KMEM_API void *kzalloc(size_t size, gfp_t gfp)
{
	return kmalloc(size, gfp | __GFP_ZERO);
}

KMEM_API void *kmalloc_array(size_t n, size_t size, gfp_t gfp)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	return kmalloc(bytes, gfp);
}

KMEM_API void *kcalloc(size_t n, size_t size, gfp_t gfp)
{
	return kmalloc_array(n, size, gfp | __GFP_ZERO);
}

void __kfree_slow(const void *p, struct page *head, const char *func, unsigned long caller)
{
	if (head && PageLargeKmalloc(head)) {
		free_large_kmalloc(head, p);
		return;
	}
	/* A slab page the inline fast path does not know: the back-end's. */
	if (head && PageSlab(head)) {
		slab_ops.kfree(head, (void *)p, caller);
		return;
	}
	slab_report_bad_free(func, p, head ? "not allocated by kmalloc; not freed"
					   : "address not managed by kmem; not freed");
}

KMEM_API void kfree(const void *p)
{
	if (unlikely(ZERO_OR_NULL_PTR(p)))
		return;
	kfree_inline(p, "kfree");
}

KMEM_API void kfree_bulk(size_t size, void **p)
{
	kmem_cache_free_bulk(NULL, size, p);
}

bool is_large_kmalloc(const void *p)
{
	struct page *head = virt_to_head_page_checked(p);

	return head && PageLargeKmalloc(head);
}

void kmalloc_report_interior(const char *func, const void *p, const struct kmem_obj *o)
{
	if (o->cache)
		kmem_report("BUG %s (Not tainted): Invalid object pointer %p\n"
			    "INFO: %s() of a pointer that is not the start of an object; nothing done\n",
			    o->cache->name, p, func);
	else
		kmem_warn("mm/slab_common.c", "%s(%p): pointer into the middle of a %s; nothing done\n",
			  func, p, is_large_kmalloc(p) ? "large kmalloc" : "kmalloc block");
}

KMEM_API size_t ksize(const void *p)
{
	if (ZERO_OR_NULL_PTR(p))
		return 0;
	struct kmem_obj o;
	size_t ks = kmalloc_obj(p, &o);
	if (ks && unlikely(o.start != p)) {
		/* Its size is not the bytes from p on: a caller would overrun the block. */
		kmalloc_report_interior("ksize", p, &o);
		return 0;
	}
	if (ks) {
		/* The caller may use it all now: no kmalloc red zone (kernel skip_orig_size_check()). */
		kmalloc_resize_in_place(&o, 0, false);
		return ks;
	}
	slab_report_bad_free("ksize", p, "not allocated by kmalloc");
	return 0;
}

KMEM_API void *krealloc(const void *p, size_t new_size, gfp_t gfp)
{
	if (!new_size) {
		kfree(p);
		return ZERO_SIZE_PTR;
	}
	if (ZERO_OR_NULL_PTR(p))
		return kmalloc(new_size, gfp);

	struct kmem_obj o;
	size_t ks = kmalloc_obj(p, &o);
	if (!ks) {
		ksize(p);	/* not kmalloc's: reported there */
		return NULL;
	}
	if (unlikely(o.start != p)) {
		/* The copy would read past the block (kernel: WARN_ON in __do_krealloc()). */
		kmalloc_report_interior("krealloc", p, &o);
		return NULL;
	}
	if (new_size <= ks) {
		/* Fits: stay in place; zero the tail so growing back in place reads zeroes. */
		if (gfp & __GFP_ZERO)
			memset((char *)p + new_size, 0, ks - new_size);
		kmalloc_resize_in_place(&o, new_size, gfp & __GFP_ZERO);
		return (void *)p;
	}
	/* What the object holds: past the size asked for, a kmalloc red zone (kernel __do_krealloc()). */
	size_t copy = o.cache && slab_ops.obj_orig_size ? slab_ops.obj_orig_size(o.cache, (void *)p) : ks;
	void *ret = kmalloc(new_size, gfp);
	if (!ret)
		return NULL;
	memcpy(ret, p, copy);
	if (gfp & __GFP_ZERO)
		memset((char *)ret + copy, 0, new_size - copy);
	kfree(p);
	return ret;
}

KMEM_API char *kstrdup(const char *s, gfp_t gfp)
{
	if (!s)
		return NULL;
	size_t len = strlen(s) + 1;
	char *buf = kmalloc(len, gfp);
	if (buf)
		memcpy(buf, s, len);
	return buf;
}

KMEM_API void *kmemdup(const void *src, size_t len, gfp_t gfp)
{
	void *p = kmalloc(len, gfp);

	if (p && len)
		memcpy(p, src, len);
	return p;
}
