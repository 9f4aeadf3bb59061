// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/cmdline.h"
#include "core/printk.h"
#include "malloc/huge.h"
#include "malloc/huge_heap.h"
#include "malloc/reap.h"
#include "page_alloc/mm.h"
#include "platform/os.h"

#define HUGE_PAGE 4096UL

/*
 * Blocks over 4 MiB are carved from arenas, big mappings (huge_heap.h):
 * a freed block's pages stay where they are, resident, for the next block
 * that fits there, and free neighbours join, so a bigger block fits where
 * two were.  Neither the reuse nor the join costs a system call or a page
 * fault, and nothing is moved (in a virtual machine the first touch of a
 * page moved with mremap() traps to the hypervisor).  Blocks of 5-25 MiB
 * replaced at random, calloc()ed: each freed block its own mapping, a few
 * kept and grown or joined with mremap(), took 1.84x tcmalloc's time
 * (whose page heap works this way).  Freed memory stays resident up to a
 * budget (retain_budget()): the oldest beyond it is given back with
 * MADV_DONTNEED (its addresses stay in the arena, reading as zeroes), and
 * so is a free range that no free has joined for HUGE_RETAIN_NS, by the
 * next allocation or free of such a block or the reaper; malloc_trim()
 * gives back all of it.  An arena left with no block and nothing
 * resident is unmapped.
 */
#define HUGE_RETAIN_NS	1000000000ull

static unsigned long huge_retain_mb = 64;
kmem_param("malloc.huge_retain_mb", huge_retain_mb, ulong,
	   "MiB of freed blocks over 4 MiB kept resident for reuse, at least (0: given back at once)");

static size_t nr_huge, huge_bytes;	/* live blocks; huge_lock */

/*
 * The budget in bytes, saturating (huge_retain_mb << 20 wraps past 2^44);
 * huge_lock held.  Four times what live blocks hold, if more: a program
 * that replaces big blocks at random leaves free ranges between them, and
 * a block that fits none of them takes fresh memory, each page a fault.
 * Blocks of 5-25 MiB (300 MiB live) replaced at random faulted 70 k pages
 * in 40 replacements with 64 MiB kept, 46 k with 96, 33.5 k with 128 MiB
 * or more (tcmalloc, which keeps all: 33.5 k), and peaked at 378, 400 and
 * 415 MB (tcmalloc 420).  bench_big_blocks mix (blocks to 20 MiB, aligned
 * ones, reallocs): 1.78 M faults and 33 s with 64 MiB, 0.74 M and 14 s
 * with 128, 1.06 M with 1x the live bytes, 0.36 M with 2x, 0.17 M and 4.0
 * s with 4x (tcmalloc 0.15 M, 4.6 s), 0.15 M with all kept; peak RSS
 * 401-438 MB in all of them (tcmalloc 462).  As the live blocks go, so
 * does the budget: a program that frees them all keeps the floor.
 */
static size_t retain_budget(void)
{
	size_t floor = huge_retain_mb > (SIZE_MAX >> 20) ? SIZE_MAX : (size_t)huge_retain_mb << 20;
	size_t live = huge_bytes > SIZE_MAX / 4 ? SIZE_MAX : huge_bytes * 4;

	return floor && live > floor ? live : floor;
}

/*
 * An arena is this big, or as big as its first block needs: address space
 * only (MAP_NORESERVE), its pages come as blocks touch them.  Where that
 * much address space is refused (ulimit -v), just the block's.
 */
#define HUGE_ARENA	(256ul << 20)

struct huge_entry {
	uintptr_t addr;		/* what the user got; 0 = empty, 1 = deleted */
	size_t size;		/* its bytes (whole pages) */
};

#define PMD_BYTES	(2ul << 20)

/*
 * Transparent huge pages for these blocks: the memory is 2 MiB-aligned and
 * madvise(MADV_HUGEPAGE)d, as glibc does with glibc.malloc.hugetlb=1 and
 * jemalloc with opt.thp.  A 2 MiB page takes one fault where 4 KiB pages
 * take 512; in a virtual machine, where each fault and each first touch
 * of a page after mremap() traps to the hypervisor, fresh memory cost 15
 * us a 4 KiB page in 4 KiB pages and 0.3-10 in 2 MiB ones, the first
 * touch after a move 1-5 us a page and 0.03.  What it costs: every 2 MiB
 * of a block that is touched at all is resident (a 64 MiB calloc() touched
 * once a MiB: 66 MB instead of 0.5), and on that virtual machine python3
 * building a 400000-entry dict took 1.25-1.35x the CPU time with 1 (11
 * huge pages; the same with the alignment alone).  So it is off by
 * default.  1: only once the program has freed a block over 4 MiB, i.e.
 * it replaces such blocks, likely used whole (a table calloc()ed once and
 * used sparsely keeps its 4 KiB pages); 2: from the first block.  Nothing
 * is done when /sys/kernel/mm/transparent_hugepage/enabled says [never].
 */
static unsigned int huge_thp;
kmem_param("malloc.huge_thp", huge_thp, uint,
	   "2 MiB pages for blocks over 4 MiB: 0 never, 1 once such a block was freed, 2 always");

static int thp_mode = -1;	/* -1: not read yet; 0: never; 1: madvise or always */
static bool huge_freed;		/* a block over 4 MiB was freed */

static bool thp_on(void)
{
	int mode = __atomic_load_n(&thp_mode, __ATOMIC_RELAXED);

	if (!huge_thp || (huge_thp == 1 && !__atomic_load_n(&huge_freed, __ATOMIC_RELAXED)))
		return false;
	if (mode < 0) {
		char buf[64] = "";
		int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t n = read(fd, buf, sizeof(buf) - 1);
			buf[n > 0 ? n : 0] = 0;
			close(fd);
		}
		mode = fd >= 0 && !strstr(buf, "[never]");
		__atomic_store_n(&thp_mode, mode, __ATOMIC_RELAXED);
	}
	return mode;
}

static kmem_lock_t huge_lock = KMEM_LOCK_INIT;
static struct huge_entry *table;
static size_t capacity, used, tombstones;

/*
 * Fixed memory (mem=) bounds these blocks too: while blocks and the freed
 * memory kept resident hold N bytes, as many bytes of pages are taken out of
 * the buddy allocator and held unused (released to the OS, so they cost no
 * RSS): the charge pool.  A block the pool cannot cover is refused, and
 * malloc returns NULL with ENOMEM, as it does when the slabs are full.
 * Without it a program told to live in 64 MiB reached 3 GiB through blocks
 * past 8 KiB.  malloc.huge_beyond_mem=1 lets them map past mem= as before.
 */
static bool huge_beyond_mem;
kmem_param("malloc.huge_beyond_mem", huge_beyond_mem, bool,
	   "with mem=, let blocks outside the buddy allocator go past it (default: bounded)");

static struct page *charge_pool;	/* chained through buddy_list.next */
static unsigned long charge_pages;

static bool charging(void)
{
	return !huge_beyond_mem && !mm_growable();
}

/* Pages the pool must hold for what is mapped now plus @extra bytes; huge_lock held. */
static unsigned long charge_target(size_t extra)
{
	return (huge_bytes + hheap_dirty_bytes() + extra + HUGE_PAGE - 1) / HUGE_PAGE;
}

/* Grow the pool to cover @extra more bytes; huge_lock held.  False: memory is full. */
static bool charge_more(size_t extra)
{
	if (!charging())
		return true;
	unsigned long target = charge_target(extra);
	while (charge_pages < target) {
		unsigned long want = target - charge_pages;
		unsigned int order = 63 - __builtin_clzl(want);
		struct page *page = NULL;

		if (order > MAX_PAGE_ORDER)
			order = MAX_PAGE_ORDER;
		for (;; order--) {
			page = alloc_pages(GFP_KERNEL | __GFP_NOWARN, order);
			if (page || !order)
				break;
		}
		if (!page)
			return false;
		os_release(page_address(page), PAGE_SIZE << order);
		page->buddy_list.next = (struct list_head *)charge_pool;
		charge_pool = page;
		charge_pages += 1UL << order;
	}
	return true;
}

/* Give back to the buddy allocator what the pool holds beyond what is mapped; huge_lock held. */
static void uncharge_excess(void)
{
	unsigned long target = charge_target(0);

	while (charge_pool) {
		unsigned int order = __atomic_load_n(&charge_pool->order, __ATOMIC_RELAXED);
		if (charge_pages - (1UL << order) < target && charging())
			break;
		struct page *page = charge_pool;
		charge_pool = (struct page *)page->buddy_list.next;
		charge_pages -= 1UL << order;
		__free_pages(page, order);
	}
}

static size_t slot_of(uintptr_t addr, size_t cap)
{
	return (size_t)((addr >> 12) * 0x9E3779B97F4A7C15ull) & (cap - 1);
}

/*
 * Rebuild the table with room for at least twice the live entries, dropping
 * the tombstones.  When it filled up with tombstones rather than live
 * entries, it keeps its size: doubling it every time would make it grow
 * with the number of huge allocations ever made, not with those alive.
 */
static int rehash_table(void)
{
	size_t cap = capacity ? capacity : 512;
	while ((used + 1) * 4 > cap)
		cap *= 2;
	struct huge_entry *t = mmap(NULL, cap * sizeof(*t), PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return -ENOMEM;
	for (size_t i = 0; i < capacity; i++) {
		if (table[i].addr <= 1)
			continue;
		size_t j = slot_of(table[i].addr, cap);
		while (t[j].addr)
			j = (j + 1) & (cap - 1);
		t[j] = table[i];
	}
	if (table)
		munmap(table, capacity * sizeof(*table));
	table = t;
	capacity = cap;
	tombstones = 0;
	return 0;
}

static struct huge_entry *lookup(uintptr_t addr)
{
	/* Huge blocks are page-aligned; this also keeps 0 and 1 (the markers) out. */
	if (!capacity || (addr & (HUGE_PAGE - 1)))
		return NULL;
	for (size_t j = slot_of(addr, capacity);; j = (j + 1) & (capacity - 1)) {
		if (table[j].addr == addr)
			return &table[j];
		if (!table[j].addr)
			return NULL;
	}
}

/* Make sure the next insert() finds room without rehashing. */
static int reserve_slot(void)
{
	if ((used + tombstones + 1) * 2 > capacity)
		return rehash_table();
	return 0;
}

static int insert(const struct huge_entry *e)
{
	if (reserve_slot())
		return -ENOMEM;
	size_t j = slot_of(e->addr, capacity);
	while (table[j].addr > 1)
		j = (j + 1) & (capacity - 1);
	if (table[j].addr == 1)
		tombstones--;
	table[j] = *e;
	used++;
	nr_huge++;
	huge_bytes += e->size;
	return 0;
}

static void remove_entry(struct huge_entry *e)
{
	nr_huge--;
	huge_bytes -= e->size;
	e->addr = 1;
	used--;
	tombstones++;
}

/* After each change: give back what is too old, or beyond the budget; huge_lock held. */
static void release(void)
{
	unsigned long long now = os_now_ns();

	hheap_release(now > HUGE_RETAIN_NS ? now - HUGE_RETAIN_NS : 0, retain_budget());
	uncharge_excess();
}

/*
 * A new arena with room for @len bytes at @phase modulo @align; huge_lock
 * held.  2 MiB-aligned, so that a block there can have 2 MiB pages.
 */
static bool add_arena(size_t len, size_t align)
{
	size_t need = len + (align > HUGE_PAGE ? align : 0);
	bool room = need < HUGE_ARENA;

	if (need < len)
		return false;
	/*
	 * The room around the block is address space kept for others
	 * (MAP_NORESERVE: not counted against overcommit); the block itself
	 * is, so that the kernel refuses what it could never give (1 TiB).
	 */
	for (int i = room ? 0 : 1; i < 2; i++) {
		size_t want = i ? need : HUGE_ARENA;
		size_t size = (want + PMD_BYTES - 1) & ~(PMD_BYTES - 1), map_len = size + PMD_BYTES - HUGE_PAGE;
		int flags = MAP_PRIVATE | MAP_ANONYMOUS | (i ? 0 : MAP_NORESERVE);
		if (size < want || map_len < size)
			return false;
		char *map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, flags, -1, 0);
		/* Under ulimit -v: room from kmem's reservation for memory not yet online, then again. */
		if (map == MAP_FAILED && errno == ENOMEM && i == 1 && mm_give_back_reserve(map_len))
			map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, flags, -1, 0);
		if (map == MAP_FAILED)
			continue;
		char *base = (char *)(((uintptr_t)map + PMD_BYTES - 1) & ~(PMD_BYTES - 1));
		if (base > map)
			munmap(map, (size_t)(base - map));
		if (base + size < map + map_len)
			munmap(base + size, (size_t)(map + map_len - (base + size)));
		if (!hheap_add_arena((uintptr_t)base, size)) {
			munmap(base, size);
			return false;
		}
		return true;
	}
	return false;
}

/* Clear what @t's block held (the rest reads as zeroes); no lock needed. */
static void clear_dirty(const struct hheap_take *t, size_t len)
{
	if (t->nr_dirty < 0) {
		memset((void *)t->addr, 0, len);
		return;
	}
	for (int i = 0; i < t->nr_dirty; i++)
		memset((void *)t->dirty_at[i].start, 0, t->dirty_at[i].len);
}

/* @len bytes at @phase modulo @align from the arenas, a new one if none has room; huge_lock held. */
static bool take(size_t len, size_t align, size_t phase, struct hheap_take *t)
{
	if (thp_on())
		hheap_thp_all();
	if (hheap_take(len, align, phase, t))
		return true;
	if (!add_arena(len, align))
		return false;
	if (thp_on())
		hheap_thp_all();
	return hheap_take(len, align, phase, t);
}

void *huge_alloc(size_t size, size_t align, bool zero)
{
	if (align < HUGE_PAGE)
		align = HUGE_PAGE;
	/* Size 0 (posix_memalign(&p, 8 MiB, 0)) still gets a page: a unique, mapped pointer. */
	if (!size)
		size = 1;
	size_t len = (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	if (len < size || len + align < len || len + PMD_BYTES < len)
		return NULL;
	/* With 2 MiB pages, on a 2 MiB boundary: the block's first pages can be huge ones too. */
	if (len >= PMD_BYTES && align < PMD_BYTES && thp_on())
		align = PMD_BYTES;
	int saved_errno = errno;
	struct hheap_take t;
	kmem_lock(&huge_lock);
	bool ok = charge_more(len);
	if (!ok) {
		/*
		 * The freed memory kept resident holds part of the charge, and
		 * the caches' barns and empty slabs hold pages: give them up
		 * (as direct reclaim runs the shrinkers), then again.
		 */
		kmem_unlock(&huge_lock);
		malloc_trim_all();
		kmem_lock(&huge_lock);
		ok = charge_more(len);
	}
	/* The entry and the ranges a take splits off must go in without failing after it. */
	ok = ok && !reserve_slot() && hheap_reserve() && take(len, align, 0, &t);
	if (ok) {
		struct huge_entry e = { .addr = t.addr, .size = len };
		insert(&e);
		release();	/* what was kept too long */
	}
	uncharge_excess();	/* reused memory was charged already; or nothing taken */
	kmem_unlock(&huge_lock);
	if (!ok)
		return NULL;
	errno = saved_errno;	/* a failed first try must not show on success */
	/*
	 * Fresh memory reads as zeroes; a freed block's holds what was
	 * written, and calloc() clears it: writing resident pages costs a
	 * fraction of faulting fresh ones in (each fault also clears a page).
	 */
	if (zero)
		clear_dirty(&t, len);
	return (void *)t.addr;
}

bool huge_free(void *p)
{
	kmem_lock(&huge_lock);
	struct huge_entry *e = lookup((uintptr_t)p);
	if (!e) {
		kmem_unlock(&huge_lock);
		return false;
	}
	size_t len = e->size;
	remove_entry(e);
	__atomic_store_n(&huge_freed, true, __ATOMIC_RELAXED);
	hheap_reserve();
	if (!hheap_put((uintptr_t)p, len, true, os_now_ns())) {
		/* No memory to record it: its pages at least go back. */
		madvise(p, len, MADV_DONTNEED);
		pr_warn("free(%p): no memory to record a freed block of %zu bytes; its addresses are lost\n",
			p, len);
	}
	release();
	kmem_unlock(&huge_lock);
	return true;
}

void huge_expire(void)
{
	kmem_lock(&huge_lock);
	hheap_reserve();
	release();
	kmem_unlock(&huge_lock);
}

void huge_trim(void)
{
	kmem_lock(&huge_lock);
	hheap_reserve();
	hheap_release(~0ull, 0);
	uncharge_excess();
	kmem_unlock(&huge_lock);
}

enum huge_where huge_where(const void *p, void **startp)
{
	uintptr_t a = (uintptr_t)p, start;
	enum huge_where where = HUGE_NONE;

	kmem_lock(&huge_lock);
	for (size_t j = 0; j < capacity && where == HUGE_NONE; j++)
		if (table[j].addr > 1 && a - table[j].addr < table[j].size) {
			*startp = (void *)table[j].addr;
			where = HUGE_INSIDE;
		}
	if (where == HUGE_NONE && hheap_freed(a, &start)) {
		*startp = (void *)start;
		where = HUGE_FREED;
	}
	kmem_unlock(&huge_lock);
	return where;
}

size_t huge_usable_size(const void *p)
{
	kmem_lock(&huge_lock);
	struct huge_entry *e = lookup((uintptr_t)p);
	size_t size = e ? e->size : 0;
	kmem_unlock(&huge_lock);
	return size;
}

/*
 * A block that must move is copied, as tcmalloc and jemalloc copy theirs:
 * mremap() would leave each move two more areas in the kernel's list
 * (vm.max_map_count), and in a virtual machine a moved page's next touch
 * traps to the hypervisor (1-5 us a 4 KiB page, where copying one costs
 * 0.2-0.5).  From HUGE_MOVE_MIN on the copy costs more than that:
 * those move (MREMAP_DONTUNMAP leaves their old addresses mapped, empty),
 * to an address that is theirs modulo 2 MiB, so that the kernel moves
 * whole page tables.
 */
#define HUGE_MOVE_MIN	(64ul << 20)

void *huge_realloc(void *p, size_t size)
{
	size_t len = (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	struct hheap_take t;

	if (len < size || len + PMD_BYTES < len)
		return NULL;
	kmem_lock(&huge_lock);
	struct huge_entry *e = lookup((uintptr_t)p);
	if (!e) {
		kmem_unlock(&huge_lock);
		return NULL;
	}
	size_t old = e->size;
	if (len <= old) {
		/* The tail goes back as a freed block's would. */
		if (len < old && hheap_reserve() &&
		    hheap_put((uintptr_t)p + len, old - len, true, os_now_ns())) {
			e->size = len;
			huge_bytes -= old - len;
			release();
		}
		kmem_unlock(&huge_lock);
		return p;
	}
	/* The new entry must go in without a rehash that could fail after the move. */
	if (reserve_slot() || !hheap_reserve() || !charge_more(len - old)) {
		uncharge_excess();
		kmem_unlock(&huge_lock);
		return NULL;
	}
	e = lookup((uintptr_t)p);	/* a rehash moved it */
	if (hheap_take_after((uintptr_t)p + old, len - old, &t)) {
		e->size = len;
		huge_bytes += len - old;
		uncharge_excess();
		kmem_unlock(&huge_lock);
		return p;
	}
	/*
	 * A move holds both blocks until the old one is copied, and the old
	 * one's memory stays resident (kept for reuse) after: the pool covers
	 * all of the new one, not just the growth.
	 */
	bool ok = charge_more(len) && take(len, PMD_BYTES, (uintptr_t)p & (PMD_BYTES - 1), &t);
	if (ok) {
		struct huge_entry n = { .addr = t.addr, .size = len };
		insert(&n);	/* room made above; the old entry stays until the move is done */
	}
	if (!ok) {
		uncharge_excess();
		kmem_unlock(&huge_lock);
		return NULL;
	}
	kmem_unlock(&huge_lock);
	bool moved = old >= HUGE_MOVE_MIN &&
		     mremap(p, old, old, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP,
			    (void *)t.addr) != MAP_FAILED;
	if (!moved)
		memcpy((void *)t.addr, p, old);
	kmem_lock(&huge_lock);
	remove_entry(lookup((uintptr_t)p));
	/* Moved: its old addresses read as zeroes. */
	if (!hheap_put((uintptr_t)p, old, !moved, os_now_ns())) {
		madvise(p, old, MADV_DONTNEED);
		pr_warn("realloc(%p): no memory to record a freed block of %zu bytes; its addresses are lost\n",
			p, old);
	}
	release();
	kmem_unlock(&huge_lock);
	return (void *)t.addr;
}

void huge_stats(size_t *nr, size_t *bytes)
{
	kmem_lock(&huge_lock);
	*nr = nr_huge;
	*bytes = huge_bytes;
	kmem_unlock(&huge_lock);
}

void huge_fork_prepare(void)
{
	kmem_lock(&huge_lock);
}

void huge_fork_parent(void)
{
	kmem_unlock(&huge_lock);
}

void huge_fork_child(void)
{
	kmem_lock_init(&huge_lock);
}
