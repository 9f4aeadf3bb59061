/* SPDX-License-Identifier: MIT */
/*
 * Internal view of kmem's "physical memory": struct page, the zone and its
 * buddy free lists.  Shared by the page allocator files and by the layers
 * that build on pages (the slab back-ends overlay struct slab on struct page).
 */
#ifndef KMEM_MM_H
#define KMEM_MM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <kmem/page.h>

#include "core/list.h"
#include "core/printk.h"
#include "core/vmstat.h"
#include "platform/os.h"

/* ---- struct page ------------------------------------------------------ */

enum pageflags {
	PG_buddy,		/* head of a free block on a buddy free list */
	PG_pcp,			/* on a per-CPU (per-thread) page list */
	PG_head,		/* head of a compound allocation (__GFP_COMP) */
	PG_slab,		/* owned by a slab back-end (struct slab overlays it) */
	PG_large_kmalloc,	/* a kmalloc() larger than the biggest kmalloc cache */
	PG_reported,		/* free and given back to the OS: reads as zeroes */
	NR_PAGEFLAGS
};

/*
 * 64 bytes, like the kernel's.  Words 1..6 are a union: buddy/pcp linkage
 * for free pages, compound_head for tail pages, and six words the slab
 * back-ends overlay with their struct slab (SLUB: word 1 the cache, word 4
 * one 64-bit state word for freelist and counters, see slab/slub.h).
 */
struct page {
	unsigned long flags;
	union {
		struct {
			struct list_head buddy_list;	/* also the pcp list link */
			unsigned long private;		/* buddy: order of the free block */
		};
		struct {
			unsigned long compound_head;	/* tail page: head | 1 */
		};
		unsigned long __overlay[6];
	};
	atomic_int _refcount;		/* 1 while allocated (head page), 0 when free */
	unsigned char order;		/* allocation order (heads) / order on a pcp list */
	unsigned char alloc_mt;		/* migratetype the allocation asked for */
	unsigned short __pad;
};

_Static_assert(sizeof(struct page) == 64, "struct page must stay 64 bytes");

/*
 * Page flags are read by other threads (a buddy check looks at a neighbour
 * that may sit on someone's pcp list), so use relaxed atomics: plain moves on
 * x86, and race-free for TSan.  A page has one owner at a time, so
 * read-modify-write needs no lock prefix.
 */
static inline unsigned long page_flags(const struct page *page)
{
	return __atomic_load_n(&page->flags, __ATOMIC_RELAXED);
}

static inline bool page_test_flag(const struct page *page, enum pageflags f)
{
	return page_flags(page) & (1UL << f);
}

static inline void page_set_flag(struct page *page, enum pageflags f)
{
	__atomic_store_n(&page->flags, page_flags(page) | (1UL << f), __ATOMIC_RELAXED);
}

static inline void page_clear_flag(struct page *page, enum pageflags f)
{
	__atomic_store_n(&page->flags, page_flags(page) & ~(1UL << f), __ATOMIC_RELAXED);
}

#define PageBuddy(p)		page_test_flag(p, PG_buddy)
#define PagePcp(p)		page_test_flag(p, PG_pcp)
#define PageHead(p)		page_test_flag(p, PG_head)
#define PageSlab(p)		page_test_flag(p, PG_slab)
#define PageLargeKmalloc(p)	page_test_flag(p, PG_large_kmalloc)
#define PageReported(p)		page_test_flag(p, PG_reported)

static inline unsigned int buddy_order(const struct page *page)
{
	return (unsigned int)__atomic_load_n(&page->private, __ATOMIC_RELAXED);
}

static inline void set_buddy_order(struct page *page, unsigned int order)
{
	__atomic_store_n(&page->private, (unsigned long)order, __ATOMIC_RELAXED);
}

static inline int page_ref_count(const struct page *page)
{
	return atomic_load_explicit(&page->_refcount, memory_order_relaxed);
}

static inline void set_page_count(struct page *page, int v)
{
	atomic_store_explicit(&page->_refcount, v, memory_order_relaxed);
}

static inline struct page *compound_head(const struct page *page)
{
	unsigned long head = __atomic_load_n(&page->compound_head, __ATOMIC_RELAXED);

	if (head & 1)
		return (struct page *)(head - 1);
	return (struct page *)page;
}

static inline bool PageTail(const struct page *page)
{
	return __atomic_load_n(&page->compound_head, __ATOMIC_RELAXED) & 1;
}

static inline unsigned int compound_order(const struct page *page)
{
	return PageHead(page) ? page->order : 0;
}

/* ---- the memory model ---------------------------------------------- */

/*
 * One contiguous reservation of address space is kmem's physical memory.
 * It is brought online from the bottom in sections of MAX_ORDER_NR_PAGES
 * (4 MiB), so every buddy below MAX_PAGE_ORDER is online with its partner.
 */
struct mem_model {
	char *base;			/* first byte of physical memory */
	unsigned long base_pfn;		/* base >> PAGE_SHIFT */
	unsigned long spanned_pages;	/* reserved: the most that can be online */
	struct page *mem_map;
	unsigned char *pageblock_mt;	/* migratetype of each pageblock */
	unsigned long online_pages;	/* only grows; read locklessly by every free */
	unsigned long grow_seq;		/* growth steps whose memory is on the free lists */
	/*
	 * The page map: one 32-bit word per page for the page's owner (the
	 * slab layer keeps the thread slot of the page's cache there), like
	 * tcmalloc's pagemap.  page_map_bias is page_map - base_pfn, so the
	 * word of an address is one load indexed by address >> PAGE_SHIFT:
	 * free() needs no subtraction and no struct page to find its slot.
	 */
	uint32_t *page_map;
	uintptr_t page_map_bias;
	/*
	 * Under an address-space limit (ulimit -v) the address space of
	 * memory, mem_map and the page map is reserved as memory comes online,
	 * right after what is there, not all at boot (mm_core_init()).
	 */
	bool lazy;
};

/*
 * Hidden in its declaration too (the objects are built -fvisibility=hidden,
 * which covers definitions only): the compiler then addresses its fields
 * directly, where an extern of default visibility costs every free() one
 * instruction more to form its address (a GOT load the linker turns into a lea).
 */
extern struct mem_model mm_model __attribute__((visibility("hidden")));

/* Growth steps done, their memory free to allocate (see mm_try_grow()). */
static inline unsigned long mm_grow_seq(void)
{
	return __atomic_load_n(&mm_model.grow_seq, __ATOMIC_ACQUIRE);
}

/* Pages online now; memory only grows, so a pfn below it stays valid. */
static inline unsigned long mm_online_pages(void)
{
	return __atomic_load_n(&mm_model.online_pages, __ATOMIC_ACQUIRE);
}

static inline struct page *__pfn_to_page(unsigned long pfn)
{
	return mm_model.mem_map + (pfn - mm_model.base_pfn);
}

static inline unsigned long __page_to_pfn(const struct page *page)
{
	return (unsigned long)(page - mm_model.mem_map) + mm_model.base_pfn;
}

static inline void *__page_address(const struct page *page)
{
	return mm_model.base + ((unsigned long)(page - mm_model.mem_map) << PAGE_SHIFT);
}

static inline struct page *__virt_to_page(const void *addr)
{
	return mm_model.mem_map + (((uintptr_t)addr - (uintptr_t)mm_model.base) >> PAGE_SHIFT);
}

static inline struct page *virt_to_head_page(const void *addr)
{
	return compound_head(__virt_to_page(addr));
}

/* The page map's word for an online address (the caller has range-checked it). */
static inline uint32_t page_map_get(const void *addr)
{
	const uint32_t *w = (const uint32_t *)(mm_model.page_map_bias +
					       ((uintptr_t)addr >> PAGE_SHIFT) * sizeof(uint32_t));

	return __atomic_load_n(w, __ATOMIC_RELAXED);
}

static inline void page_map_set(const struct page *page, uint32_t v)
{
	__atomic_store_n(&mm_model.page_map[page - mm_model.mem_map], v, __ATOMIC_RELAXED);
}

/* page_map_set() after the stores before it (a slab's fields and state). */
static inline void page_map_publish(const struct page *page, uint32_t v)
{
	__atomic_store_n(&mm_model.page_map[page - mm_model.mem_map], v, __ATOMIC_RELEASE);
}

/* ---- migratetypes and pageblocks ----------------------------------- */

enum migratetype {
	MIGRATE_UNMOVABLE,
	MIGRATE_MOVABLE,
	MIGRATE_RECLAIMABLE,
	MIGRATE_PCPTYPES,
	MIGRATE_HIGHATOMIC = MIGRATE_PCPTYPES,
	MIGRATE_ISOLATE,
	MIGRATE_TYPES
};

extern const char *const migratetype_names[MIGRATE_TYPES];

#define pageblock_order		9
#define pageblock_nr_pages	(1UL << pageblock_order)

static inline int get_pageblock_migratetype(const struct page *page)
{
	unsigned long idx = (unsigned long)(page - mm_model.mem_map) >> pageblock_order;

	return __atomic_load_n(&mm_model.pageblock_mt[idx], __ATOMIC_RELAXED);
}

static inline void set_pageblock_migratetype(struct page *page, int mt)
{
	unsigned long idx = (unsigned long)(page - mm_model.mem_map) >> pageblock_order;

	__atomic_store_n(&mm_model.pageblock_mt[idx], (unsigned char)mt, __ATOMIC_RELAXED);
}

static inline int gfp_migratetype(gfp_t gfp)
{
	unsigned int mt = (gfp & GFP_MOVABLE_MASK) >> GFP_MOVABLE_SHIFT;

	/* Both bits make no sense; the kernel warns and we treat it as movable. */
	return mt >= MIGRATE_PCPTYPES ? MIGRATE_MOVABLE : (int)mt;
}

/* ---- the zone ------------------------------------------------------ */

struct free_area {
	struct list_head free_list[MIGRATE_TYPES];
	unsigned long nr_free;			/* blocks of this order, all types */
	unsigned long nr_free_mt[MIGRATE_TYPES];	/* blocks per type (pagetypeinfo) */
};

enum zone_watermarks { WMARK_MIN, WMARK_LOW, WMARK_HIGH, WMARK_PROMO, NR_WMARK };

struct zone {
	kmem_lock_t lock;			/* buddy lists, nr_free, pageblock types */
	struct free_area free_area[NR_PAGE_ORDERS];
	unsigned long _watermark[NR_WMARK];
	unsigned long zone_start_pfn;
	atomic_ulong managed_pages;		/* online and handed to the buddy allocator */
	atomic_int pageset_high;		/* pcp high mark, per thread */
	atomic_int pageset_batch;		/* pcp batch */
	atomic_long nr_isolated_report;		/* pages off the lists while being reported */
	long nr_unreported_high;		/* free, unreported, in blocks a pass may report */
	bool report_pending;			/* an unreported high-order block formed */
	unsigned long long report_since_ns;	/* when report_pending became true */
	unsigned long long report_quiet_until_ns; /* no at-once pass before (the OS refused one) */
	kmem_lock_t report_lock;		/* serialises reporting passes */
	const char *name;
};

extern struct zone zone_normal;

static inline unsigned long zone_managed_pages(struct zone *z)
{
	return atomic_load_explicit(&z->managed_pages, memory_order_relaxed);
}

static inline unsigned long wmark_pages(const struct zone *z, enum zone_watermarks w)
{
	return __atomic_load_n(&z->_watermark[w], __ATOMIC_RELAXED);
}

/* ---- internal page allocator interface ------------------------------ */

/*
 * Free-area counters change under zone->lock but the watermark check reads
 * them without it: relaxed atomic stores keep that race benign and visible.
 */
static inline void area_count(unsigned long *counter, long delta)
{
	__atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + (unsigned long)delta,
			 __ATOMIC_RELAXED);
}

/* FPI: how a freed block joins the free lists (kernel: fpi_t). */
#define FPI_NONE	0u
#define FPI_TO_TAIL	(1u << 0)	/* keep it back: fresh or just-reported memory */
#define FPI_REPORTED	(1u << 1)	/* the block's memory has been given back to the OS */

/*
 * For page_exact.c.  __alloc_pages_untouched(): alloc_pages() that also says
 * whether the block's memory is untouched since it went back to the OS
 * (reads as zeroes).  __free_pages_prepare(): __free_pages()'s checks (a
 * report and false if the block may not be freed) and clearing;
 * __free_prepared(): the rest of it (FPI_REPORTED: untouched memory).
 */
struct page *__alloc_pages_untouched(gfp_t gfp, unsigned int order, bool *untouched);
bool __free_pages_prepare(struct page *page, unsigned int order);
void __free_prepared(struct page *page, unsigned int order, unsigned int fpi);
/*
 * alloc_pages_exact() from a block of @order (at least get_order(@size)):
 * the result is aligned to PAGE_SIZE << @order, for aligned allocations.
 */
void *__alloc_pages_exact(size_t size, unsigned int order, gfp_t gfp);

/* Boot: reserve and online physical memory, set up the zone. */
int mm_core_init(void);
/* Bring @nr_pages more pages online (memory hotplug); 0 or -ENOMEM. */
/* Try to grow memory after an allocation failed its watermark. */
bool mm_try_grow(unsigned int order, unsigned long *seen);
bool mm_growable(void);
unsigned long mm_spanned_pages(void);
bool mm_give_back_reserve(unsigned long bytes);

/* Recompute watermarks and pcp high/batch (after boot, hotplug, sysctl). */
void setup_per_zone_wmarks(void);
extern kmem_lock_t wmark_lock;	/* sysctl writes and watermark recomputation */
bool zone_watermark_ok(struct zone *z, unsigned int order, unsigned long mark,
		       unsigned int alloc_flags, long free_pages);
long zone_free_pages(struct zone *z);

/* Buddy primitives; caller holds zone->lock. */
void __free_one_page(struct page *page, unsigned long pfn, struct zone *zone,
		     unsigned int order, int migratetype, unsigned int fpi);
struct page *__rmqueue(struct zone *zone, unsigned int order, int migratetype);
/* Take @count blocks of @order for a pcp list; returns how many were taken. */
int rmqueue_bulk(struct zone *zone, unsigned int order, int count,
		 struct list_head *list, int migratetype, unsigned int alloc_flags);

/* alloc_flags (kernel mm/internal.h) */
#define ALLOC_WMARK_MIN		WMARK_MIN
#define ALLOC_WMARK_LOW		WMARK_LOW
#define ALLOC_WMARK_HIGH	WMARK_HIGH
#define ALLOC_NO_WATERMARKS	0x04
#define ALLOC_WMARK_MASK	(ALLOC_NO_WATERMARKS - 1)
#define ALLOC_MIN_RESERVE	0x08	/* __GFP_HIGH: may use half the min reserve */
#define ALLOC_NON_BLOCK		0x10	/* cannot sleep: a further quarter */

/*
 * Pre-faulting (populate.c): populate_pages() faults in the fresh 64 KiB
 * groups of a block its caller is about to touch all of (a new slab);
 * populate_forget() marks a block fresh again (its memory went back to the
 * OS); page_populated() says whether a page's group was populated.
 */
int populate_init(unsigned long spanned_pages);
void populate_pages(struct page *page, unsigned int order);
void populate_forget(struct page *page, unsigned int order);
bool page_populated(struct page *page);

/* Page reporting: give free high-order blocks back to the OS. */
void page_reporting_process(struct zone *zone);
/* Tests: run by a pass while its blocks are isolated, before the OS is told. */
extern void (*page_reporting_isolated_hook)(long nr_pages);
extern bool page_reporting_enabled;
extern unsigned int page_reporting_order;
extern unsigned long page_reporting_delay_ms;

/* Unreported free memory beyond which a free reports at once (see below). */
#define PAGE_REPORTING_AT_ONCE_MIN	((64UL << 20) >> PAGE_SHIFT)

/*
 * Report once a block has waited page_reporting.delay_ms, checked on the
 * next free (the kernel uses a 2 s delayed work): alloc/free churn of big
 * blocks then never pays an madvise and a refault per cycle.  With no
 * background thread, a program that frees and then sleeps would keep the
 * memory; so when more than half of the memory online is free (a program
 * that has let go of most of its memory) and more than 64 MiB of it is not
 * yet reported and in blocks a pass would report, the free reports at once.
 * (Only those: smaller fragments never go back, so counting them would make
 * every high-order free report at once, the churn the delay is there for.)
 */
static inline bool page_reporting_wanted(struct zone *zone)
{
	if (!page_reporting_enabled || !__atomic_load_n(&zone->report_pending, __ATOMIC_RELAXED))
		return false;
	if (!page_reporting_delay_ms)
		return true;
	/* In ms: delay_ms * 10^6 would wrap for delays of more than 2^64 ns (584 years). */
	if ((os_now_ns() - __atomic_load_n(&zone->report_since_ns, __ATOMIC_RELAXED)) / 1000000ull >=
	    page_reporting_delay_ms)
		return true;
	return __atomic_load_n(&zone->nr_unreported_high, __ATOMIC_RELAXED) >
		       (long)PAGE_REPORTING_AT_ONCE_MIN &&
	       (unsigned long)global_zone_page_state(NR_FREE_PAGES) > mm_online_pages() / 2 &&
	       os_now_ns() >= __atomic_load_n(&zone->report_quiet_until_ns, __ATOMIC_RELAXED);
}

/* Report every pending block now, whatever the delay (malloc_trim, tests). */
void page_reporting_flush(void);
/*
 * Report every free block of @min_order or more, also those below
 * page_reporting_order, whatever is pending (malloc_trim(), an idle
 * program's reaper: glibc's malloc_trim() gives back every free page).
 */
void page_reporting_idle(unsigned int min_order);

extern bool tail_placement;

/* Bad input: a kernel-style report naming the pfn and the fault. */
void bad_page(struct page *page, const char *reason);

/* For allocator metadata and internal users: never parks pages on pcp lists. */
struct page *alloc_pages_nopcp(gfp_t gfp, unsigned int order);
void free_one_page(struct zone *zone, struct page *page, unsigned int order);
/* The kernel's %pGg: "GFP_KERNEL|__GFP_ZERO". */
void format_gfp(char *buf, size_t size, gfp_t gfp);
unsigned long kmem_min_free_kbytes(void);
/* Check the vm sysctls given at boot, as a write would; 0 or -EINVAL. */
int check_sysctl_vm_params(void);

#endif /* KMEM_MM_H */
