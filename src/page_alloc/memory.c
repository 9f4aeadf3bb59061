// SPDX-License-Identifier: MIT
/*
 * The memory model: one reserved range of address space is kmem's physical
 * memory, described by mem_map.  Memory comes online in 4 MiB sections from
 * the bottom up; with mem= the machine has a fixed size, without it memory
 * grows on demand (memory hotplug) up to kmem.max_mem.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "core/boot.h"
#include "core/cmdline.h"
#include "page_alloc/mm.h"

#define SECTION_PAGES	MAX_ORDER_NR_PAGES
#define SECTION_BYTES	(SECTION_PAGES << PAGE_SHIFT)

struct mem_model mm_model;

static unsigned long boot_mem;			/* mem= */
static unsigned long max_mem;			/* kmem.max_mem */
#define MEM_BLOCK_DEFAULT	(64UL << 20)
static unsigned long mem_block = MEM_BLOCK_DEFAULT;	/* kmem.mem_block */
static unsigned long mem_first = 4UL << 20;	/* kmem.mem_first, 0: mem_block */
static bool growable;
static kmem_lock_t hotplug_lock = KMEM_LOCK_INIT;

core_param(mem, boot_mem, size, "fixed memory size (e.g. 64M); without it memory grows on demand");
kmem_param("kmem.max_mem", max_mem, size,
	   "most memory kmem may bring online when growing (default: physical RAM)");
kmem_param("kmem.mem_block", mem_block, size,
	   "memory added per growth step (like a hotplug memory block, default 64M)");
kmem_param("kmem.mem_first", mem_first, size,
	   "memory online at boot when it grows (default 4M; 0: kmem.mem_block)");

bool mm_growable(void)
{
	return growable;
}

unsigned long mm_spanned_pages(void)
{
	return __atomic_load_n(&mm_model.spanned_pages, __ATOMIC_RELAXED);
}

static unsigned long section_round_down(unsigned long bytes)
{
	return bytes & ~(SECTION_BYTES - 1);
}

static unsigned long section_round_up(unsigned long bytes)
{
	return (bytes + SECTION_BYTES - 1) & ~(SECTION_BYTES - 1);
}

/*
 * Lazy mode: reserve the address space of pages [start, start + nr) of
 * memory, and of their mem_map and page map entries, right after what is
 * reserved (whole sections: both arrays' parts are whole pages).  All or
 * nothing.  Something else mapped there ends growth, as a full limit does.
 */
static unsigned long lazy_reserved;		/* pages reserved so far, lazy mode */

static int extend_reservations(unsigned long start, unsigned long nr)
{
	if (start + nr <= lazy_reserved)
		return 0;
	if (start < lazy_reserved) {
		nr -= lazy_reserved - start;
		start = lazy_reserved;
	}
	char *mem = mm_model.base + (start << PAGE_SHIFT);
	char *map = (char *)(mm_model.mem_map + start);
	char *words = (char *)(mm_model.page_map + start);
	size_t mem_len = nr << PAGE_SHIFT, map_len = nr * sizeof(struct page);
	size_t words_len = nr * sizeof(uint32_t);

	if (os_reserve_at(mem, mem_len))
		return -ENOMEM;
	if (os_reserve_at(map, map_len)) {
		os_unreserve(mem, mem_len);
		return -ENOMEM;
	}
	if (os_reserve_at(words, words_len)) {
		os_unreserve(map, map_len);
		os_unreserve(mem, mem_len);
		return -ENOMEM;
	}
	lazy_reserved = start + nr;
	return 0;
}

/* Caller holds hotplug_lock. */
static int __online_memory(unsigned long nr_pages)
{
	struct zone *zone = &zone_normal;
	unsigned long start = mm_online_pages();

	nr_pages = section_round_up(nr_pages << PAGE_SHIFT) >> PAGE_SHIFT;
	if (start + nr_pages > mm_model.spanned_pages)
		nr_pages = mm_model.spanned_pages - start;
	if (!nr_pages)
		return -ENOMEM;

	if (mm_model.lazy && extend_reservations(start, nr_pages))
		return -ENOMEM;
	if (os_commit(mm_model.base + (start << PAGE_SHIFT), nr_pages << PAGE_SHIFT) ||
	    os_commit(mm_model.mem_map + start, nr_pages * sizeof(struct page)) ||
	    os_commit(mm_model.page_map + start, nr_pages * sizeof(uint32_t)))
		return -ENOMEM;

	/* Pageblocks start movable, as at boot in the kernel. */
	for (unsigned long pfn = start; pfn < start + nr_pages; pfn += pageblock_nr_pages)
		set_pageblock_migratetype(mm_model.mem_map + pfn, MIGRATE_MOVABLE);

	__atomic_store_n(&mm_model.online_pages, start + nr_pages, __ATOMIC_RELEASE);

	/* Fresh memory was never touched: it is free, reported, and goes to the tail. */
	kmem_lock(&zone->lock);
	for (unsigned long i = start; i < start + nr_pages; i += MAX_ORDER_NR_PAGES) {
		struct page *page = mm_model.mem_map + i;
		__free_one_page(page, mm_model.base_pfn + i, zone, MAX_PAGE_ORDER,
				MIGRATE_MOVABLE, FPI_TO_TAIL | FPI_REPORTED);
	}
	atomic_fetch_add_explicit(&zone->managed_pages, nr_pages, memory_order_relaxed);
	kmem_unlock(&zone->lock);

	setup_per_zone_wmarks();
	/* Now the memory is on the free lists: tell mm_try_grow()'s waiters. */
	__atomic_store_n(&mm_model.grow_seq, mm_model.grow_seq + 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * @seen: mm_grow_seq() as the caller saw it before the allocation that
 * failed.  Threads that fail together each come here: the first grows, the
 * others find the sequence moved under hotplug_lock and only retry, so
 * memory grows by one block, not one per thread.  (A sequence bumped once
 * the new memory is on the free lists, not the online size, which is
 * published before.)  True: retry the allocation.
 */
bool mm_try_grow(unsigned int order, unsigned long *seen)
{
	if (!growable || mm_online_pages() >= __atomic_load_n(&mm_model.spanned_pages, __ATOMIC_RELAXED))
		return false;

	unsigned long want = mem_block >> PAGE_SHIFT;
	if (want < (1UL << order))
		want = 1UL << order;

	kmem_lock(&hotplug_lock);
	if (mm_model.grow_seq != *seen) {
		*seen = mm_model.grow_seq;
		kmem_unlock(&hotplug_lock);
		return true;
	}
	unsigned long before = mm_online_pages();
	int rc = __online_memory(want);
	/* Lazy mode at the limit: what still fits, down to what the allocation needs. */
	while (rc == -ENOMEM && mm_model.lazy && want > SECTION_PAGES && want > (1UL << order)) {
		want = section_round_up((want / 2) << PAGE_SHIFT) >> PAGE_SHIFT;
		rc = __online_memory(want);
	}
	unsigned long added = mm_online_pages() - before;
	*seen = mm_model.grow_seq;
	kmem_unlock(&hotplug_lock);
	if (!rc)
		count_vm_events_global(MEMORY_HOTPLUG_PAGES, added);
	return rc == 0;
}

/*
 * Give back at least @bytes of the address space reserved for memory that
 * has not come online, from the top, so that a mapping of the program's
 * fits under an address-space limit (ulimit -v): malloc's blocks beyond
 * MAX_PAGE_ORDER are mappings of their own.  Memory can grow that much
 * less.  True if it was given back.
 */
bool mm_give_back_reserve(unsigned long bytes)
{
	unsigned long want = section_round_up(bytes) >> PAGE_SHIFT;
	bool done = false;

	/* Only a reservation made ahead under an address-space limit stands in a mapping's way. */
	if (!growable || !want || mm_model.lazy || os_address_space_limit() == ULONG_MAX)
		return false;
	kmem_lock(&hotplug_lock);
	unsigned long spanned = mm_model.spanned_pages;
	if (spanned - mm_online_pages() >= want) {
		unsigned long end = spanned - want;
		os_unreserve(mm_model.base + (end << PAGE_SHIFT), want << PAGE_SHIFT);
		__atomic_store_n(&mm_model.spanned_pages, end, __ATOMIC_RELAXED);
		done = true;
	}
	kmem_unlock(&hotplug_lock);
	return done;
}

/*
 * Lazy mode's three regions, each at a hint far above the program's
 * mappings and below the mmap area (47-bit user space), 4 MiB aligned and
 * shifted by a random number of sections; only the first @initial pages'
 * parts are reserved now.  False (nothing left reserved) if one is taken.
 */
static bool lazy_reserve(unsigned long pages, unsigned long initial)
{
	const uintptr_t region = 1UL << 44;	/* 16 TiB between the regions */
	uintptr_t base = 0x300000000000UL + (os_now_ns() % 4096) * SECTION_BYTES;
	char *mem = (char *)base;
	struct page *map = (struct page *)(base + region);
	uint32_t *words = (uint32_t *)(base + 2 * region);

	if ((pages << PAGE_SHIFT) > region || !initial)
		return false;
	mm_model.base = mem;
	mm_model.mem_map = map;
	mm_model.page_map = words;
	lazy_reserved = 0;
	if (extend_reservations(0, initial)) {
		mm_model.base = NULL;
		mm_model.mem_map = NULL;
		mm_model.page_map = NULL;
		return false;
	}
	return true;
}

/* "2 TiB", "23 GiB", "512 MiB": a size as a person reads it. */
static const char *human_size(unsigned long bytes, char buf[32])
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned int u = 0;
	unsigned long whole = bytes;

	while (whole >= 1024 && u < 6) {
		whole >>= 10;
		u++;
	}
	snprintf(buf, 32, "%lu %s", whole, unit[u]);
	return buf;
}

/*
 * mem= is a promise that this much memory can be used: refuse, before
 * anything is reserved or touched, a size the machine cannot back (RAM and
 * swap), the address space cannot hold (47-bit user space, ulimit -v), so
 * that an absurd value costs nothing: bringing 2 TiB online wrote a struct
 * page in its own page of mem_map for each of its 524288 sections (2 GB of
 * RSS, seconds at boot).  The kernel ignores a mem= above the RAM present;
 * here the memory would be the host's, so kmem says so rather than clamp.
 */
static int check_fixed_mem(unsigned long span)
{
	unsigned long pages = span >> PAGE_SHIFT;
	unsigned long ram = os_total_ram(), swap = os_total_swap();
	unsigned long limit = os_address_space_limit();
	/* Memory, mem_map, the page map and the pageblock types: all reserved at boot. */
	unsigned long need = span + pages * sizeof(struct page) + pages * sizeof(uint32_t) +
			     pages / pageblock_nr_pages + 1;
	char a[32], b[32], c[32];

	if (span > (1UL << 45)) {
		pr_err("mem=%s is more than the address space can hold (at most 32 TiB)\n",
		       human_size(span, a));
		return -EINVAL;
	}
	if (ram && span > ram + swap) {
		pr_err("mem=%s is more than this machine can back: %s of RAM and %s of swap\n",
		       human_size(span, a), human_size(ram, b), human_size(swap, c));
		return -EINVAL;
	}
	if (limit != ULONG_MAX) {
		unsigned long used = os_address_space_used();
		unsigned long left = limit > used ? limit - used : 0;
		if (need > left) {
			pr_err("mem=%s needs %s of address space (with its mem_map); ulimit -v leaves %s\n",
			       human_size(span, a), human_size(need, b), human_size(left, c));
			return -EINVAL;
		}
	}
	return 0;
}

int mm_core_init(void)
{
	unsigned long span, initial, limit = ULONG_MAX;

	if (os_page_size() != PAGE_SIZE) {
		pr_err("the system page size is %lu bytes; kmem needs %lu\n",
		       os_page_size(), PAGE_SIZE);
		return -EINVAL;
	}
	if (!boot_mem && mem_block < SECTION_BYTES) {
		pr_err("kmem.mem_block=%lu is too small: at least %lu bytes\n", mem_block, SECTION_BYTES);
		return -EINVAL;
	}
	if (page_reporting_order > MAX_PAGE_ORDER) {
		pr_err("page_reporting.page_reporting_order=%u is above MAX_PAGE_ORDER (%d)\n",
		       page_reporting_order, MAX_PAGE_ORDER);
		return -EINVAL;
	}
	if (check_sysctl_vm_params())
		return -EINVAL;
	if (boot_mem) {
		span = initial = section_round_down(boot_mem);
		if (!span) {
			pr_err("mem=%lu is too small: at least %lu bytes (one MAX_PAGE_ORDER block)\n",
			       boot_mem, SECTION_BYTES);
			return -EINVAL;
		}
		if (check_fixed_mem(span))
			return -EINVAL;
		growable = false;
	} else {
		span = section_round_down(max_mem ? max_mem : os_total_ram());
		/*
		 * Under an address-space limit (ulimit -v) see below; the span
		 * stays RAM (or kmem.max_mem): the limit may be raised later.
		 */
		limit = os_address_space_limit();
		if (span < SECTION_BYTES)
			span = SECTION_BYTES;
		/*
		 * A small first block: each 4 MiB block on the free lists is a
		 * struct page written in its own page of mem_map, and a short
		 * process (a shell's child) needs far less than 64 MiB: 16 page
		 * faults and ~0.3 ms at start-up (git --version, 263 -> 232
		 * faults).  Growth steps are kmem.mem_block from there.
		 * Capped before rounding: a block near ULONG_MAX would round up to 0.
		 */
		unsigned long first = mem_first ? mem_first : mem_block;
		initial = first >= span ? span : section_round_up(first);
		if (initial > span)
			initial = span;
		growable = true;
	}

	unsigned long pages = span >> PAGE_SHIFT;
	/*
	 * Under an address-space limit (ulimit -v) a reservation counts whole,
	 * so nothing is reserved ahead: memory, mem_map and the page map each
	 * start at an address far from the program's mappings (which the
	 * kernel places top-down from below the stack, the heap above the
	 * program) and grow upwards as memory comes online
	 * (extend_reservations()).  The heap then gets what the program does
	 * not use, as glibc's does.  (A fixed share failed one way or the
	 * other: a quarter of the limit starved programs of small blocks,
	 * three quarters starved their threads' stacks.)  If the addresses are
	 * taken, reserve ahead as without a limit, a quarter of it.
	 */
	if (growable && limit != ULONG_MAX && lazy_reserve(pages, initial >> PAGE_SHIFT)) {
		mm_model.lazy = true;
		/*
		 * Grow in smaller steps (a 64th of the limit): memory online and
		 * free holds address space the program's own mappings (a Python
		 * arena, a thread's stack) may need.
		 */
		if (mem_block == MEM_BLOCK_DEFAULT && limit / 64 < mem_block)
			mem_block = limit / 64 < SECTION_BYTES ? SECTION_BYTES : section_round_down(limit / 64);
	} else {
		if (growable && !max_mem && limit != ULONG_MAX && span > section_round_down(limit / 4))
			span = section_round_down(limit / 4);
		if (span < SECTION_BYTES)
			span = SECTION_BYTES;
		mm_model.base = os_reserve(span, SECTION_BYTES);
		/* Under an address-space limit: ask for less. */
		while (!mm_model.base && growable && span > initial) {
			span = section_round_down(span / 2);
			if (span < initial)
				span = initial;
			mm_model.base = os_reserve(span, SECTION_BYTES);
		}
		pages = span >> PAGE_SHIFT;
		mm_model.mem_map = os_reserve(pages * sizeof(struct page), PAGE_SIZE);
		mm_model.page_map = os_reserve(pages * sizeof(uint32_t), PAGE_SIZE);
	}
	mm_model.pageblock_mt = os_reserve(pages / pageblock_nr_pages + 1, PAGE_SIZE);
	if (!mm_model.base || !mm_model.mem_map || !mm_model.pageblock_mt || !mm_model.page_map ||
	    os_commit(mm_model.pageblock_mt, pages / pageblock_nr_pages + 1)) {
		pr_err("cannot reserve %lu MiB of address space for memory\n", span >> 20);
		return -ENOMEM;
	}
	mm_model.base_pfn = (unsigned long)mm_model.base >> PAGE_SHIFT;
	mm_model.page_map_bias = (uintptr_t)mm_model.page_map - mm_model.base_pfn * sizeof(uint32_t);
	mm_model.spanned_pages = pages;
	if (populate_init(pages)) {
		pr_err("cannot reserve the populate bitmap\n");
		return -ENOMEM;
	}

	struct zone *zone = &zone_normal;
	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		for (int mt = 0; mt < MIGRATE_TYPES; mt++)
			INIT_LIST_HEAD(&zone->free_area[o].free_list[mt]);
	zone->zone_start_pfn = mm_model.base_pfn;

	kmem_lock(&hotplug_lock);
	int rc = __online_memory(initial >> PAGE_SHIFT);
	kmem_unlock(&hotplug_lock);
	return rc;
}

/* ---- fork ---------------------------------------------------------- */

void pcp_fork_prepare(void);
void pcp_fork_parent(void);
void pcp_fork_child(void);

void mm_fork_prepare(void)
{
	kmem_lock(&hotplug_lock);
	kmem_lock(&wmark_lock);
	kmem_lock(&zone_normal.report_lock);
	kmem_lock(&zone_normal.lock);
	pcp_fork_prepare();
}

void mm_fork_parent(void)
{
	pcp_fork_parent();
	kmem_unlock(&zone_normal.lock);
	kmem_unlock(&zone_normal.report_lock);
	kmem_unlock(&wmark_lock);
	kmem_unlock(&hotplug_lock);
}

void mm_fork_child(void)
{
	pcp_fork_child();
	kmem_lock_init(&zone_normal.lock);
	kmem_lock_init(&zone_normal.report_lock);
	kmem_lock_init(&wmark_lock);
	kmem_lock_init(&hotplug_lock);
	/* Reporting passes of other threads died with them. */
	atomic_store(&zone_normal.nr_isolated_report, 0);
}

/* ---- public O(1) conversions -------------------------------------- */

KMEM_API int virt_addr_valid(const void *addr)
{
	uintptr_t a = (uintptr_t)addr, base = (uintptr_t)mm_model.base;

	return base && a >= base && ((a - base) >> PAGE_SHIFT) < mm_online_pages();
}

KMEM_API void *page_address(const struct page *page)
{
	return __page_address(page);
}

KMEM_API struct page *virt_to_page(const void *addr)
{
	return virt_addr_valid(addr) ? __virt_to_page(addr) : NULL;
}

KMEM_API unsigned long page_to_pfn(const struct page *page)
{
	return __page_to_pfn(page);
}

KMEM_API struct page *pfn_to_page(unsigned long pfn)
{
	if (pfn < mm_model.base_pfn || pfn - mm_model.base_pfn >= mm_online_pages())
		return NULL;
	return __pfn_to_page(pfn);
}
