// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/cmdline.h"
#include "malloc/huge.h"
#include "malloc/reap.h"
#include "page_alloc/mm.h"
#include "platform/os.h"

#define HUGE_PAGE 4096UL

/*
 * Freed mappings kept for reuse: a program that allocates and frees a
 * block over 4 MiB in a loop would otherwise pay an mmap, an munmap and a
 * page fault per page each time (about 20x glibc, whose mmap threshold
 * rises after the first such free).  At most HUGE_RETAIN_MAX of them, none
 * bigger than half the budget; after HUGE_RETAIN_NS they are unmapped by
 * the next allocation or free of a block over 4 MiB, or by malloc_trim()
 * (a program that stops using such blocks keeps up to the budget).
 */
#define HUGE_RETAIN_MAX	8
#define HUGE_RETAIN_NS	1000000000ull

static unsigned long huge_retain_mb = 64;
kmem_param("malloc.huge_retain_mb", huge_retain_mb, ulong,
	   "MiB of freed blocks over 4 MiB kept mapped for reuse (0: unmap at once)");

/* The budget in bytes, saturating (huge_retain_mb << 20 wraps past 2^44). */
static size_t retain_budget(void)
{
	return huge_retain_mb > (SIZE_MAX >> 20) ? SIZE_MAX : (size_t)huge_retain_mb << 20;
}

struct retained {
	uintptr_t map;
	size_t len;
	unsigned long long freed_ns;
};

struct huge_entry {
	uintptr_t addr;		/* what the user got; 0 = empty, 1 = deleted */
	uintptr_t map;		/* start of the mapping */
	size_t map_len;
	size_t size;		/* usable bytes from addr */
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
static size_t nr_huge, huge_bytes;
static struct retained retained[HUGE_RETAIN_MAX];	/* oldest first */
static int nr_retained;
static size_t retained_bytes;

/*
 * Fixed memory (mem=) bounds these blocks too: while mappings of their own
 * (live or retained) hold N bytes, as many bytes of pages are taken out of
 * the buddy allocator and held unused (released to the OS, so they cost no
 * RSS): the charge pool.  A block the pool cannot cover is refused, and
 * malloc returns NULL with ENOMEM, as it does when the slabs are full.
 * Without it a program told to live in 64 MiB reached 3 GiB through blocks
 * past 8 KiB.  malloc.huge_beyond_mem=1 lets them map past mem= as before.
 */
static bool huge_beyond_mem;
kmem_param("malloc.huge_beyond_mem", huge_beyond_mem, bool,
	   "with mem=, let blocks that are mappings of their own go past it (default: bounded)");

static struct page *charge_pool;	/* chained through buddy_list.next */
static unsigned long charge_pages;

static bool charging(void)
{
	return !huge_beyond_mem && !mm_growable();
}

/* Pages the pool must hold for what is mapped now plus @extra bytes; huge_lock held. */
static unsigned long charge_target(size_t extra)
{
	return (huge_bytes + retained_bytes + extra + HUGE_PAGE - 1) / HUGE_PAGE;
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
	huge_bytes += e->map_len;
	return 0;
}

static void remove_entry(struct huge_entry *e)
{
	nr_huge--;
	huge_bytes -= e->map_len;
	e->addr = 1;
	used--;
	tombstones++;
}

/* Drop retained[i]; huge_lock held.  Returns it for the caller to unmap or reuse. */
static struct retained take_retained(int i)
{
	struct retained r = retained[i];

	retained_bytes -= r.len;
	for (int j = i; j + 1 < nr_retained; j++)
		retained[j] = retained[j + 1];
	nr_retained--;
	return r;
}

/*
 * Move into @out (room for HUGE_RETAIN_MAX + 1) the retained mappings that
 * are too old, or too many for one more of @len bytes; huge_lock held.
 */
static int expire_retained(unsigned long long now, size_t len, struct retained *out)
{
	size_t budget = retain_budget();
	int n = 0;

	while (nr_retained && (now - retained[0].freed_ns > HUGE_RETAIN_NS ||
			       (len && (nr_retained == HUGE_RETAIN_MAX ||
					retained_bytes + len > budget))))
		out[n++] = take_retained(0);
	return n;
}

static void unmap_all(const struct retained *r, int n)
{
	for (int i = 0; i < n; i++)
		munmap((void *)r[i].map, r[i].len);
}

/* Put @r back as retained[i] (where the one it was cut from was); huge_lock held. */
static void put_retained_at(int i, struct retained r)
{
	for (int j = nr_retained; j > i; j--)
		retained[j] = retained[j - 1];
	retained[i] = r;
	nr_retained++;
	retained_bytes += r.len;
}

/*
 * Back into the retained ones, in the order they were freed; huge_lock
 * held.  False if there is no room (other threads freed meanwhile): the
 * caller unmaps it.
 */
static bool put_retained(struct retained r)
{
	int i = nr_retained;

	if (nr_retained == HUGE_RETAIN_MAX)
		return false;
	while (i > 0 && retained[i - 1].freed_ns > r.freed_ns)
		i--;
	put_retained_at(i, r);
	return true;
}

static void put_back(const struct retained *r, int n)
{
	struct retained drop[HUGE_RETAIN_MAX];
	int nd = 0;

	if (!n)
		return;
	kmem_lock(&huge_lock);
	for (int i = 0; i < n; i++)
		if (r[i].len && !put_retained(r[i]))
			drop[nd++] = r[i];
	kmem_unlock(&huge_lock);
	unmap_all(drop, nd);
}

/*
 * A block of @len bytes made of the retained mappings @pc[0..@n-1]
 * (biggest first, together @len or more bytes, or all there are), moved
 * with mremap() into one reservation of fresh memory: its pages come
 * along, resident, and only what they do not cover is faulted in.  Each
 * lands at an address that is its own modulo 2 MiB (the gap before it,
 * under 2 MiB, stays fresh): the kernel then moves whole page tables (a
 * pointer each 2 MiB, or the 2 MiB page itself) instead of every entry,
 * and the pages stay mapped where the MMU (and, in a virtual machine, the
 * host's shadow of the page tables) already knows them.  Moved entry by
 * entry, a 20 MiB block took 0.8-6.7 ms to move and its next touch a page
 * 13-88 ms (0.15 unmoved); moved by page tables, 0.25 and 7.8 ms; 16 MiB
 * in 2 MiB pages, 0.13-0.32 and 0.07-0.17 ms.  (Populating the moved
 * pages at once, MADV_POPULATE_WRITE, was tried: 1.1-1.35x the CPU time
 * of blocks of 5-25 MiB replaced at random.)  @zero: clear what they
 * held.  A piece that does not move (one made of two mappings that the
 * kernel keeps as two areas) leaves fresh memory in its place and goes
 * back to the retained ones, as does the rest of the last one used.
 * 0 if there is no room for the reservation (ulimit -v).
 */
static uintptr_t assemble(struct retained *pc, int n, size_t len, bool zero)
{
	size_t rlen = len + PMD_BYTES - HUGE_PAGE;
	char *res = mmap(NULL, rlen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (res == MAP_FAILED)
		return 0;
	char *dst = res + ((pc[0].map - (uintptr_t)res) & (PMD_BYTES - 1));
	if (dst > res)
		munmap(res, (size_t)(dst - res));
	if (dst + len < res + rlen)
		munmap(dst + len, (size_t)(res + rlen - (dst + len)));
	if (thp_on())
		madvise(dst, len, MADV_HUGEPAGE);
	size_t pos = 0;
	for (int i = 0; i < n; i++) {
		if (i)
			pos += (pc[i].map - ((uintptr_t)dst + pos)) & (PMD_BYTES - 1);
		if (pos >= len)
			break;
		size_t take = pc[i].len < len - pos ? pc[i].len : len - pos;
		if (mremap((void *)pc[i].map, take, take, MREMAP_MAYMOVE | MREMAP_FIXED,
			   dst + pos) == MAP_FAILED)
			continue;
		if (zero)
			memset(dst + pos, 0, take);
		pc[i].map += take;
		pc[i].len -= take;
		pos += take;
	}
	put_back(pc, n);
	return (uintptr_t)dst;
}

/*
 * A mapping of @len bytes from the retained ones, 0 if none; @zero: what
 * it held is cleared (the rest reads as zeroes).  The first @len bytes of
 * the smallest retained mapping that has that many; the rest of it stays
 * retained, as a mapping of its own, so that the block can grow into it
 * (huge_realloc()).  Its pages are resident: no mmap and no page fault.
 * (Only mappings at most a quarter bigger were taken, cut to size: a
 * buffer that grows past 4 MiB by halves faulted every page in again each
 * time, 13x glibc's time.)  With none big enough, the biggest grows to
 * @len in place with mremap() if the addresses after it are free; else
 * the biggest ones, enough of them to cover @len, are moved into one block
 * (assemble()): blocks of 5-25 MiB replaced at random (twenty live, 64
 * MiB retained) faulted 82 MiB in 40 replacements growing only the biggest
 * one, 54-63 MiB taking them all (in 4 KiB pages).  Pieces under 2 MiB are left: each would
 * cost a fresh gap about as big as itself.
 */
static uintptr_t reuse_retained(size_t len, bool zero)
{
	struct retained old[HUGE_RETAIN_MAX + 1], pc[HUGE_RETAIN_MAX];
	int best = -1, n = 0;
	size_t got = 0;

	kmem_lock(&huge_lock);
	int nold = expire_retained(os_now_ns(), 0, old);
	for (int i = 0; i < nr_retained; i++)
		if (retained[i].len >= len && (best < 0 || retained[i].len < retained[best].len))
			best = i;
	struct retained r = { 0 };
	if (best >= 0) {
		r = take_retained(best);
		if (r.len > len)
			put_retained_at(best, (struct retained){ r.map + len, r.len - len, r.freed_ns });
	} else {
		/*
		 * Several only with 2 MiB pages: in 4 KiB pages each moved
		 * page's first touch traps (1-5 us), and blocks of 5-25 MiB
		 * replaced at random, though they faulted 23% fewer pages,
		 * took as long, and bench_big_blocks mix 1.0-1.35x.
		 */
		bool several = thp_on();
		while (nr_retained && got < len && (several || !n)) {
			int big = 0;
			for (int i = 1; i < nr_retained; i++)
				if (retained[i].len > retained[big].len)
					big = i;
			if (n && retained[big].len < PMD_BYTES)
				break;
			pc[n] = take_retained(big);
			got += pc[n++].len;
		}
	}
	kmem_unlock(&huge_lock);
	unmap_all(old, nold);
	if (best >= 0) {
		if (zero)
			memset((void *)r.map, 0, len);
		return r.map;
	}
	if (!n)
		return 0;
	/* In place: the addresses after the biggest are free. */
	void *q = mremap((void *)pc[0].map, pc[0].len, len, 0);
	if (q != MAP_FAILED) {
		if (zero)
			memset(q, 0, pc[0].len);
		put_back(pc + 1, n - 1);
		return (uintptr_t)q;
	}
	uintptr_t m = assemble(pc, n, len, zero);
	if (m)
		return m;
	/* No room for a reservation: the biggest moves wherever mremap() puts it. */
	put_back(pc + 1, n - 1);
	q = mremap((void *)pc[0].map, pc[0].len, len, MREMAP_MAYMOVE);
	if (q == MAP_FAILED) {
		munmap((void *)pc[0].map, pc[0].len);
		return 0;
	}
	if (zero)
		memset(q, 0, pc[0].len);
	return (uintptr_t)q;
}

/*
 * Grow @e's mapping in place to @len bytes with the retained mapping right
 * after it, if there is one big enough (cut again if bigger); huge_lock
 * held.  True if it did.
 */
static bool grow_into_retained(struct huge_entry *e, size_t len)
{
	uintptr_t end = e->map + e->map_len;
	size_t more = len - e->map_len;

	for (int i = 0; i < nr_retained; i++) {
		if (retained[i].map != end || retained[i].len < more)
			continue;
		struct retained r = take_retained(i);
		if (r.len > more)
			put_retained_at(i, (struct retained){ r.map + more, r.len - more, r.freed_ns });
		huge_bytes += more;
		e->map_len = len;
		e->size = len;
		return true;
	}
	return false;
}

void *huge_alloc(size_t size, size_t align, bool zero)
{
	if (align < HUGE_PAGE)
		align = HUGE_PAGE;
	/* Size 0 (posix_memalign(&p, 8 MiB, 0)) still gets a page: a unique, mapped pointer. */
	if (!size)
		size = 1;
	size_t len = (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	if (len < size || len + align < len)
		return NULL;
	bool thp = len >= PMD_BYTES && align < PMD_BYTES && thp_on();
	size_t map_align = thp ? PMD_BYTES : align;
	size_t map_len = map_align > HUGE_PAGE ? len + map_align - HUGE_PAGE : len;
	if (charging()) {
		kmem_lock(&huge_lock);
		bool ok = charge_more(len);
		kmem_unlock(&huge_lock);
		if (!ok) {
			/*
			 * The retained mappings hold part of the charge, and the
			 * caches' barns and empty slabs hold pages: give them up
			 * (as direct reclaim runs the shrinkers), then again.
			 */
			malloc_trim_all();
			kmem_lock(&huge_lock);
			ok = charge_more(len);
			if (!ok)
				uncharge_excess();
			kmem_unlock(&huge_lock);
			if (!ok)
				return NULL;
		}
	}
	int saved_errno = errno;
	/*
	 * A fresh mapping reads as zeroes; a retained one holds what was
	 * written, and calloc() clears it: writing resident pages costs a
	 * fraction of faulting fresh ones in (each fault also clears a page).
	 */
	char *map = align == HUGE_PAGE ? (char *)reuse_retained(len, zero) : NULL;
	if (map) {
		map_len = len;		/* as it is: no alignment to cut */
		map_align = HUGE_PAGE;
	}
	if (!map)
		map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/*
	 * Under ulimit -v: room from kmem's reservation for memory not yet
	 * online, then again.
	 */
	if (map == MAP_FAILED && errno == ENOMEM && mm_give_back_reserve(map_len))
		map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		kmem_lock(&huge_lock);
		uncharge_excess();
		kmem_unlock(&huge_lock);
		return NULL;
	}
	errno = saved_errno;	/* a failed first try must not show on success */
	uintptr_t addr = ((uintptr_t)map + map_align - 1) & ~(uintptr_t)(map_align - 1);
	if (map_len > len) {
		/* Keep only the aligned part. */
		size_t head = addr - (uintptr_t)map, tail = map_len - head - len;
		if (head)
			munmap(map, head);
		if (tail)
			munmap((char *)addr + len, tail);
		map = (char *)addr;
		map_len = len;
		if (thp)
			madvise(map, len, MADV_HUGEPAGE);
	}
	struct huge_entry e = { .addr = addr, .map = (uintptr_t)map, .map_len = map_len, .size = len };
	kmem_lock(&huge_lock);
	int rc = insert(&e);
	uncharge_excess();	/* a reused retained mapping was charged already */
	kmem_unlock(&huge_lock);
	if (rc) {
		munmap(map, map_len);
		return NULL;
	}
	return (void *)addr;
}

bool huge_free(void *p)
{
	kmem_lock(&huge_lock);
	struct huge_entry *e = lookup((uintptr_t)p);
	if (!e) {
		kmem_unlock(&huge_lock);
		return false;
	}
	struct huge_entry copy = *e;
	remove_entry(e);
	__atomic_store_n(&huge_freed, true, __ATOMIC_RELAXED);
	struct retained old[HUGE_RETAIN_MAX + 1];
	int n = 0;
	/* Plain mappings only: an aligned one would not fit an unaligned request's reuse. */
	if (copy.map == copy.addr && copy.map_len <= retain_budget() / 2) {
		unsigned long long now = os_now_ns();
		struct retained r = { copy.map, copy.map_len, now };
		/*
		 * Joined with a retained neighbour (a piece cut from the same
		 * mapping): the next bigger block fits again, where two pieces
		 * would each be too small for it.
		 */
		for (int i = 0; i < nr_retained; i++) {
			if (retained[i].map + retained[i].len == r.map ||
			    r.map + r.len == retained[i].map) {
				struct retained nb = take_retained(i);
				r.map = nb.map < r.map ? nb.map : r.map;
				r.len += nb.len;
				i = -1;
			}
		}
		if (r.len > retain_budget() / 2) {
			old[n++] = r;
		} else {
			n = expire_retained(now, r.len, old);
			retained[nr_retained++] = r;
			retained_bytes += r.len;
		}
	} else {
		old[n++] = (struct retained){ copy.map, copy.map_len, 0 };
	}
	uncharge_excess();
	kmem_unlock(&huge_lock);
	unmap_all(old, n);
	return true;
}

void huge_expire(void)
{
	struct retained old[HUGE_RETAIN_MAX + 1];

	kmem_lock(&huge_lock);
	int n = expire_retained(os_now_ns(), 0, old);
	uncharge_excess();
	kmem_unlock(&huge_lock);
	unmap_all(old, n);
}

void huge_trim(void)
{
	struct retained old[HUGE_RETAIN_MAX];
	int n = 0;

	kmem_lock(&huge_lock);
	while (nr_retained)
		old[n++] = take_retained(0);
	uncharge_excess();
	kmem_unlock(&huge_lock);
	unmap_all(old, n);
}

enum huge_where huge_where(const void *p, void **startp)
{
	uintptr_t a = (uintptr_t)p;
	enum huge_where where = HUGE_NONE;

	kmem_lock(&huge_lock);
	for (size_t j = 0; j < capacity && where == HUGE_NONE; j++)
		if (table[j].addr > 1 && a - table[j].map < table[j].map_len) {
			*startp = (void *)table[j].addr;
			where = HUGE_INSIDE;
		}
	for (int i = 0; i < nr_retained && where == HUGE_NONE; i++)
		if (a - retained[i].map < retained[i].len) {
			*startp = (void *)retained[i].map;
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

void *huge_realloc(void *p, size_t size)
{
	size_t len = (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);

	kmem_lock(&huge_lock);
	struct huge_entry *e = lookup((uintptr_t)p);
	/*
	 * Aligned ones are not moved by mremap.  And the moved block's entry
	 * must go in without a rehash that could fail after the mremap.
	 */
	if (!e || e->map != e->addr || reserve_slot()) {
		kmem_unlock(&huge_lock);
		return NULL;
	}
	e = lookup((uintptr_t)p);	/* a rehash moved it */
	if (len > e->map_len && !charge_more(len - e->map_len)) {
		uncharge_excess();
		kmem_unlock(&huge_lock);
		return NULL;
	}
	if (len > e->map_len && grow_into_retained(e, len)) {
		uncharge_excess();
		kmem_unlock(&huge_lock);
		return p;
	}
	int saved_errno = errno;
	void *q = mremap((void *)e->map, e->map_len, len, MREMAP_MAYMOVE);
	if (q == MAP_FAILED && errno == ENOMEM && len > e->map_len && mm_give_back_reserve(len))
		q = mremap((void *)e->map, e->map_len, len, MREMAP_MAYMOVE);
	errno = saved_errno;	/* on failure realloc() sets it, or copies the block */
	if (q == MAP_FAILED) {
		uncharge_excess();
		kmem_unlock(&huge_lock);
		return NULL;
	}
	remove_entry(e);
	struct huge_entry n = { .addr = (uintptr_t)q, .map = (uintptr_t)q, .map_len = len, .size = len };
	insert(&n);	/* reserve_slot() made room: cannot fail */
	uncharge_excess();	/* shrunk: the pool gives back the difference */
	kmem_unlock(&huge_lock);
	return q;
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
