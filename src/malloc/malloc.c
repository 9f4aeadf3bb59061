// SPDX-License-Identifier: MIT
/*
 * The malloc front-end: the C library's allocation functions on top of
 * the slab layer (<= 14 KiB: kmalloc's caches and, between and past its
 * buckets, malloc's own size classes; see size_class.h), the page
 * allocator (<= 4 MiB) and plain mappings beyond.  Built into libkmem-malloc.so for
 * LD_PRELOAD or linking.
 *
 * Rules real programs depend on: alignment of at least 16, errno = ENOMEM
 * and NULL on failure, realloc in place when it fits, and pointers kmem
 * never handed out (allocated before it took over, or by the dynamic
 * loader) are recognised and left alone.  Nothing on the path to the first
 * allocation calls malloc or dlsym.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/boot.h"
#include "core/printk.h"
#include "introspect/live.h"
#include "malloc/foreign.h"
#include "malloc/huge.h"
#include "malloc/reap.h"
#include "malloc/size_class.h"
#include "page_alloc/mm.h"
#include "page_alloc/zone_info.h"
#include "slab/kmalloc.h"

#define MALLOC_API __attribute__((visibility("default")))
#define MALLOC_GFP (GFP_KERNEL | __GFP_NOWARN)
#define MALLOC_MIN 16	/* glibc's alignment: every bucket from 16 on is 16-aligned */

static atomic_ulong foreign_frees;

/* @caller: the program's call site, for SLAB_STORE_USER's tracks (kernel _RET_IP_). */
static __attribute__((noinline)) void *malloc_slow(size_t size, gfp_t gfp, unsigned long caller)
{
	struct kmem_cache *s = NULL;
	void *p = NULL;

	/* Before boot every size comes here; the classes are set up right after. */
	if (size <= MALLOC_MAX_CLASS_SIZE && !kmem_boot() && !malloc_classes_init())
		s = malloc_class_cache(size);
	if (s) {
		p = slab_alloc_fast(s, gfp);
		if (!p)
			p = slab_ops.alloc(s, gfp, caller, (unsigned int)size);
		/* Past kmalloc's caches, a class that cannot grow leaves it to a block or a mapping. */
		if (p || size <= KMALLOC_MAX_CACHE_SIZE)
			goto out;
	}
	if (size <= KMALLOC_MAX_CACHE_SIZE) {
		/*
		 * Meanwhile (boot, set-up in progress) kmalloc's power-of-two
		 * buckets, 16-aligned at least whatever slab_debug= did to the
		 * layout (kmalloc-96 and -192 may be only 8-aligned then).
		 * SLOB's kmalloc (no classes): every block is 16-aligned,
		 * so the size asked for.
		 */
		if (!slab_ops.kmalloc)
			size = size < MALLOC_MIN ? MALLOC_MIN : 1UL << (64 - __builtin_clzl(size - 1));
		p = __kmalloc_slow(size, gfp);
	} else if (size <= KMALLOC_MAX_SIZE) {
		p = __kmalloc_slow(size, gfp);
		/* Memory cannot grow any more (kmem.max_mem, ulimit -v): a block from the arenas. */
		if (unlikely(!p) && !kmem_boot())
			p = huge_alloc(size, 0, gfp & __GFP_ZERO);
	} else {
		if (kmem_boot())
			return NULL;
		p = huge_alloc(size, 0, gfp & __GFP_ZERO);
	}
out:
	if (unlikely(!p))
		errno = ENOMEM;
	return p;
}

/* Off the fast path: neither the call nor errno's address is on it. */
static __attribute__((noinline)) void *malloc_cache_slow(size_t size, gfp_t gfp, unsigned long caller)
{
	struct kmem_cache *s = malloc_class_cache(size);
	void *p = s ? slab_ops.alloc(s, gfp, caller, (unsigned int)size) : NULL;

	/* No class yet, or one past kmalloc's that cannot grow: see malloc_slow(). */
	if (!p && (!s || size > KMALLOC_MAX_CACHE_SIZE))
		return malloc_slow(size, gfp, caller);
	if (unlikely(!p))
		errno = ENOMEM;
	return p;
}

static __attribute__((always_inline)) inline void *do_malloc(size_t size, gfp_t gfp)
{
	if (likely(size - 1 < MALLOC_MAX_CLASS_SIZE)) {
		/* Slot 0 (no class yet, or a back-end without slots) is empty: the slow path. */
		void *p = slab_alloc_fast_slot(malloc_class_slot(size), gfp);
		if (likely(p))
			return p;
		return malloc_cache_slow(size, gfp, _RET_IP_);
	}
	/* malloc(0) returns a unique pointer, as glibc's does. */
	return malloc_slow(size ? size : MALLOC_MIN, gfp, _RET_IP_);
}

/*
 * @p is no block's start, nor in kmem's memory: if it points into a block
 * over 4 MiB, or into one freed and still mapped, report it as the slab
 * paths report their bad frees, and return true (nothing is done with it).
 */
static bool huge_bad_pointer(const char *func, const void *p)
{
	void *start;

	switch (huge_where(p, &start)) {
	case HUGE_INSIDE:
		kmem_warn("malloc/huge.c", "%s(%p): pointer %zu bytes into the block at %p; nothing done\n",
			  func, p, (size_t)((const char *)p - (char *)start), start);
		return true;
	case HUGE_FREED:
		kmem_warn("malloc/huge.c", "%s(%p): pointer into a block that was freed (the free range at %p): "
			  "double free or use after free; nothing done\n", func, p, start);
		return true;
	default:
		return false;
	}
}

/*
 * @p is in no slab: NULL (whose test is the fast path's range check), a
 * large kmalloc, a huge mapping, or a bad or foreign pointer.
 */
static __attribute__((noinline)) void free_slow(void *p, unsigned long caller)
{
	if (!p)
		return;
	struct page *page = virt_to_page_checked(p);

	if (page) {
		__kfree_slow(p, compound_head(page), "free", _RET_IP_);
		return;
	}
	if (huge_free(p))
		return;
	if (huge_bad_pointer("free", p))
		return;
	/* Not ours (made before kmem took over, or by the loader): leave it. */
	if (foreign_pointer(p))
		atomic_fetch_add_explicit(&foreign_frees, 1, memory_order_relaxed);
	else
		report_invalid_pointer("free", p, caller);
}

static __attribute__((always_inline)) inline void do_free(void *p)
{
	if (likely(slab_free_ptr(p)))
		return;
	free_slow(p, _RET_IP_);
}

MALLOC_API void *malloc(size_t size)
{
	return do_malloc(size, MALLOC_GFP);
}

MALLOC_API void free(void *p)
{
	do_free(p);
}

MALLOC_API void *calloc(size_t n, size_t size)
{
	size_t bytes;

	if (unlikely(__builtin_mul_overflow(n, size, &bytes))) {
		errno = ENOMEM;
		return NULL;
	}
	return do_malloc(bytes, MALLOC_GFP | __GFP_ZERO);
}

MALLOC_API size_t malloc_usable_size(void *p)
{
	struct kmem_obj o;

	if (!p)
		return 0;
	size_t n = kmalloc_obj(p, &o);
	if (unlikely(n && o.start != p)) {
		/* Not the bytes from p on: a program that used them would overrun the block. */
		kmalloc_report_interior("malloc_usable_size", p, &o);
		return 0;
	}
	if (!n && !(n = huge_usable_size(p))) {
		if (!huge_bad_pointer("malloc_usable_size", p) && !foreign_pointer(p))
			report_invalid_pointer("malloc_usable_size", p, _RET_IP_);
		return 0;
	}
	/* The program may use all of it now (slab_debug=UZ: no kmalloc red zone for it). */
	if (n)
		kmalloc_resize_in_place(&o, 0, false);
	return n;
}

MALLOC_API void *realloc(void *p, size_t size)
{
	if (!p)
		return do_malloc(size, MALLOC_GFP);
	if (!size) {
		/* glibc frees and returns NULL. */
		free(p);
		return NULL;
	}

	struct kmem_obj o;
	size_t old = kmalloc_obj(p, &o);
	/*
	 * A pointer into the middle of a block: as free() of it would, reported
	 * and nothing done (glibc aborts); its size is not the bytes from p on.
	 */
	if (unlikely(old && o.start != p)) {
		kmalloc_report_interior("realloc", p, &o);
		errno = EINVAL;
		return NULL;
	}
	if (!old && !(old = huge_usable_size(p)) && unlikely(huge_bad_pointer("realloc", p))) {
		errno = EINVAL;
		return NULL;
	}
	/*
	 * Not a block at all (a stack buffer, a global): its size is unknown,
	 * and reading it for a copy could run past its end.  Reported, NULL
	 * with EINVAL, @p untouched (glibc aborts: "realloc(): invalid pointer").
	 */
	if (unlikely(!old && !foreign_pointer(p))) {
		report_invalid_pointer("realloc", p, _RET_IP_);
		errno = EINVAL;
		return NULL;
	}
	if (old) {
		/* In place when it fits and would not waste more than half. */
		if (size <= old && (size > old / 2 || old <= MALLOC_MIN)) {
			kmalloc_resize_in_place(&o, size, false);
			return p;
		}
		if (old > KMALLOC_MAX_SIZE && size > KMALLOC_MAX_SIZE) {
			void *q = huge_realloc(p, size);
			if (q)
				return q;
		}
	}
	void *q = do_malloc(size, MALLOC_GFP);
	if (!q)
		return NULL;
	if (old) {
		memcpy(q, p, old < size ? old : size);
		do_free(p);
	} else {
		/*
		 * A pointer kmem did not hand out: its size is unknown, so copy no
		 * further than the end of its page (always readable) and leave
		 * the old block alone.
		 */
		size_t to_page_end = 4096 - ((uintptr_t)p & 4095);
		static atomic_uint warned;
		memcpy(q, p, size < to_page_end ? size : to_page_end);
		atomic_fetch_add_explicit(&foreign_frees, 1, memory_order_relaxed);
		/* Maybe not all of it: say so rather than lose data silently (the first 10 times). */
		if (size > to_page_end && atomic_fetch_add_explicit(&warned, 1, memory_order_relaxed) < 10)
			pr_warn("realloc(%p, %zu): not a block kmem handed out (made before it took over?); "
				"its size is unknown, %zu bytes copied (to the end of its page)\n",
				p, size, to_page_end);
	}
	return q;
}

MALLOC_API void *reallocarray(void *p, size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, bytes);
}

static size_t roundup_pow_of_two(size_t n)
{
	return n <= 1 ? 1 : (size_t)1 << (64 - __builtin_clzl(n - 1));
}

/*
 * Power-of-two kmalloc buckets are naturally aligned, and so are buddy
 * blocks: asking for max(size, align) rounded up to a power of two gives
 * the alignment for free up to 4 MiB.
 */
static __attribute__((always_inline)) inline void *alloc_aligned(size_t align, size_t size)
{
	if (align <= MALLOC_MIN)
		return do_malloc(size, MALLOC_GFP);
	size_t need = size > align ? size : align;
	void *p;

	if (need <= KMALLOC_MAX_CACHE_SIZE) {
		/* kmalloc's own power-of-two bucket: malloc's class may be a 16-aligned cache (slab_debug=Z). */
		p = kmalloc_bucket(roundup_pow_of_two(need), size, MALLOC_GFP);
	} else if (need <= KMALLOC_MAX_SIZE) {
		p = __kmalloc_slow(need, MALLOC_GFP);
		if (!p && !kmem_boot())		/* memory cannot grow: a block from the arenas */
			p = huge_alloc(size, align, false);
	} else {
		if (kmem_boot())
			return NULL;
		p = huge_alloc(size, align, false);
	}
	if (!p)
		errno = ENOMEM;
	return p;
}

MALLOC_API int posix_memalign(void **memptr, size_t align, size_t size)
{
	if (!align || (align & (align - 1)) || align % sizeof(void *))
		return EINVAL;
	int saved = errno;
	void *p = alloc_aligned(align, size);
	errno = saved;
	if (!p)
		return ENOMEM;
	*memptr = p;
	return 0;
}

MALLOC_API void *aligned_alloc(size_t align, size_t size)
{
	if (!align || (align & (align - 1))) {
		errno = EINVAL;
		return NULL;
	}
	return alloc_aligned(align, size);
}

MALLOC_API void *memalign(size_t align, size_t size)
{
	/* glibc rounds a bad alignment up to a power of two, and refuses what cannot be. */
	if (align > SIZE_MAX / 2 + 1) {
		errno = EINVAL;
		return NULL;
	}
	if (align & (align - 1))
		align = roundup_pow_of_two(align);
	return alloc_aligned(align, size);
}

MALLOC_API void *valloc(size_t size)
{
	return alloc_aligned(4096, size);
}

MALLOC_API void *pvalloc(size_t size)
{
	size_t rounded = (size + 4095) & ~(size_t)4095;

	if (rounded < size) {
		errno = ENOMEM;
		return NULL;
	}
	return alloc_aligned(4096, rounded ? rounded : 4096);
}

MALLOC_API void free_sized(void *p, size_t size)
{
	(void)size;
	free(p);
}

MALLOC_API void free_aligned_sized(void *p, size_t align, size_t size)
{
	(void)align;
	(void)size;
	free(p);
}

void malloc_trim_all(void)
{
	for (unsigned int i = 0; i <= KMALLOC_SHIFT_HIGH; i++)
		if (kmalloc_caches[i])
			kmem_cache_shrink(kmalloc_caches[i]);
	malloc_classes_shrink();
	drain_local_pages();
	/* Every free page, as glibc's malloc_trim() (not only 2 MiB blocks). */
	page_reporting_idle(0);
	huge_trim();
}

/* Give memory back: this thread's cached pages, empty slabs, free pageblocks. */
MALLOC_API int malloc_trim(size_t pad)
{
	(void)pad;
	if (atomic_load(&kmem_system_state) != KMEM_UP)
		return 0;
	malloc_trim_all();
	return 1;
}

static void fill_mallinfo(size_t *arena, size_t *used, size_t *free_bytes, size_t *hblks,
			  size_t *hblkhd)
{
	struct zone_info zi;

	*arena = *used = *free_bytes = 0;
	huge_stats(hblks, hblkhd);
	if (atomic_load(&kmem_system_state) != KMEM_UP)
		return;
	zone_get_info(&zi);
	*arena = zi.managed * 4096;
	*free_bytes = zi.free_pages * 4096;
	*used = *arena - *free_bytes;
}

MALLOC_API struct mallinfo2 mallinfo2(void)
{
	struct mallinfo2 mi = { 0 };
	size_t arena, used, fb, hblks, hblkhd;

	fill_mallinfo(&arena, &used, &fb, &hblks, &hblkhd);
	mi.arena = arena;
	mi.uordblks = used;
	mi.fordblks = fb;
	mi.hblks = hblks;
	mi.hblkhd = hblkhd;
	return mi;
}

static int clamp_int(size_t v)
{
	return v > INT32_MAX ? INT32_MAX : (int)v;
}

MALLOC_API struct mallinfo mallinfo(void)
{
	struct mallinfo mi = { 0 };
	struct mallinfo2 m2 = mallinfo2();

	mi.arena = clamp_int(m2.arena);
	mi.uordblks = clamp_int(m2.uordblks);
	mi.fordblks = clamp_int(m2.fordblks);
	mi.hblks = clamp_int(m2.hblks);
	mi.hblkhd = clamp_int(m2.hblkhd);
	return mi;
}

MALLOC_API void malloc_stats(void)
{
	struct mallinfo2 mi = mallinfo2();

	fprintf(stderr, "kmem malloc: arena %zu bytes, in use %zu, free %zu, "
		"mappings %zu (%zu bytes), foreign frees %lu\n",
		mi.arena, mi.uordblks, mi.fordblks, mi.hblks, mi.hblkhd,
		atomic_load(&foreign_frees));
}

/* Run before kmem's own fork handlers take the slab and page locks (their order). */
static void malloc_fork_prepare(void)
{
	malloc_classes_fork_prepare();
	huge_fork_prepare();
}

static void malloc_fork_parent(void)
{
	huge_fork_parent();
	malloc_classes_fork_parent();
}

static void malloc_fork_child(void)
{
	huge_fork_child();
	malloc_classes_fork_child();
}

__attribute__((constructor)) static void malloc_init(void)
{
	kmem_fork_hook_prepare = malloc_fork_prepare;
	kmem_fork_hook_parent = malloc_fork_parent;
	kmem_fork_hook_child = malloc_fork_child;
	slab_thread_exit_notify = malloc_reap_thread_exited;
	/*
	 * Now, before main() registers fork handlers that allocate: kmem's
	 * must be registered first (see kmem_register_fork_handlers()).  A
	 * failure here is retried at boot, which reports it.
	 */
	kmem_register_fork_handlers(true);
	/* What memory the loader's early blocks may be in: see foreign.c. */
	foreign_snapshot();
	/* kmem.live: its thread starts here, where pthread_create() is safe (not inside a malloc). */
	if (!kmem_boot())
		kmem_live_start();
}
