// SPDX-License-Identifier: MIT
/*
 * SLOB's heap: first fit inside a page over its address-ordered free
 * blocks, and the free lists of partially free pages (see slob.h for the
 * block encoding).  Everything here runs under slob_lock, the one lock of
 * the allocator, as in the kernel.
 *
 * The search (slob_alloc) walks the list for the request's size, skips a
 * page whose free units are fewer than asked, and tries first fit inside
 * the others.  After a success the list is rotated so that the next search
 * starts at the page that satisfied this one: next fit, which spreads
 * fragments over the pages and shortens the walks (Knuth, TAOCP vol. 1,
 * §2.5).  A page that just became full has left the list, and the list is
 * not rotated then (rotating around a page no longer on it would move the
 * head to an arbitrary place: the 2019 fix of the kernel's SLOB).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/cmdline.h"
#include "slab/slob/slob.h"

kmem_lock_t slob_lock = KMEM_LOCK_INIT;

/*
 * The free lists, a choice at boot so the split can be measured: one list
 * (SLOB before the split), two with a break at slob.break bytes (the patch
 * as posted: 300), or three with breaks at 256 and 1024 (the kernel's
 * final form, the default).  Fixed once the first page exists.
 */
unsigned int slob_nr_lists = 3;
unsigned int slob_break = 300;

/* Custom boot parameter setters only check their value when @kp is NULL. */
static int set_slob_lists(const char *val, const struct kernel_param *kp)
{
	unsigned long v;

	if (!val || kstrtoul(val, &v) || v < 1 || v > SLOB_NR_LISTS)
		return -EINVAL;
	if (kp)
		*(unsigned int *)kp->arg = (unsigned int)v;
	return 0;
}
kmem_param_cb("slob.lists", set_slob_lists, slob_nr_lists,
	      "SLOB free lists: 1 (one list), 2 (split at slob.break), 3 (split at 256 and 1024)");

static int set_slob_break(const char *val, const struct kernel_param *kp)
{
	unsigned long v;

	/* A request of PAGE_SIZE - SLOB_MINALIGN or more never reaches the heap. */
	if (!val || kstrtoul(val, &v) || v < SLOB_UNIT || v >= PAGE_SIZE)
		return -EINVAL;
	if (kp)
		*(unsigned int *)kp->arg = (unsigned int)v;
	return 0;
}
kmem_param_cb("slob.break", set_slob_break, slob_break,
	      "SLOB with slob.lists=2: bytes (kmalloc header included) above which a request uses the big list");
struct slob_stats slob_stats;

static struct list_head slob_lists[SLOB_NR_LISTS] = {
	LIST_HEAD_INIT(slob_lists[0]), LIST_HEAD_INIT(slob_lists[1]), LIST_HEAD_INIT(slob_lists[2]),
};

/* ---- block encoding ---------------------------------------------------- */

static inline slob_t *slob_base(const void *p)
{
	return (slob_t *)((uintptr_t)p & PAGE_MASK);
}

static inline slob_t *slob_end(const void *p)
{
	return slob_base(p) + SLOB_PAGE_UNITS;
}

/* Encode a free block of @size units at @s whose successor is @next. */
static inline void set_slob(slob_t *s, int size, slob_t *next)
{
	slobidx_t off = (slobidx_t)(next - slob_base(s));

	if (size > 1) {
		s[0].units = (slobidx_t)size;
		s[1].units = off;
	} else {
		s[0].units = (slobidx_t)-off;
	}
}

static inline int slob_units(const slob_t *s)
{
	return s->units > 0 ? s->units : 1;
}

static inline slob_t *slob_next(const slob_t *s)
{
	int off = s[0].units < 0 ? -s[0].units : s[1].units;

	return slob_base(s) + off;
}

static inline bool slob_last(const slob_t *s)
{
	return slob_next(s) == slob_end(s);
}

/* ---- poison of the free blocks ------------------------------------------ */

/*
 * With slob_poison_heap, every byte of a free block past its encoding (the
 * first two units, or the one unit of a one-unit block) reads
 * SLOB_POISON_FREE.  A free writes the poison over all of its block, and
 * over the encoding of a block it merges with (which stops being one); an
 * allocation checks the bytes it hands out and the bytes the new encoding
 * of the free tail takes; a merge checks the bodies of the free blocks it
 * takes in.  The encodings themselves are never checked as poison: the
 * walks check them as encodings.  There is no end marker (the kernel's
 * 0xa5): blocks split and merge, so where an object ended is not kept.
 */
bool slob_poison_heap;

static inline int slob_enc_units(int units)
{
	return units > 1 ? 2 : 1;
}

/* A page of poison to compare with: libc's memcmp is the fastest scan at hand. */
static const unsigned char slob_poison_bytes[PAGE_SIZE] = { [0 ... PAGE_SIZE - 1] = SLOB_POISON_FREE };

/* The first byte of [@p, @end) that is not poison, or NULL (@end - @p at most a page). */
static const unsigned char *slob_poison_mismatch(const unsigned char *p, const unsigned char *end)
{
	if (likely(!memcmp(p, slob_poison_bytes, (size_t)(end - p))))
		return NULL;
	while (*p == SLOB_POISON_FREE)
		p++;
	return p;
}

/*
 * Kernel check_bytes_and_report() for a free block's poison: the bytes
 * [@from, @to) of the free block @blk (@units units) of @sp, @how it came
 * to be looked at.  A report, with the bad bytes shown and restored (the
 * heap's encodings are not in the range: nothing of the heap changes).
 */
static bool slob_check_poison(struct slob_page *sp, const slob_t *blk, int units, const void *from,
			      const void *to, const char *how)
{
	const unsigned char *start = from, *end = to;
	unsigned char *fault = (unsigned char *)slob_poison_mismatch(start, end), *last = (unsigned char *)end;
	const unsigned char *base = (const unsigned char *)slob_page_base(sp);

	if (likely(!fault))
		return true;
	while (last > fault && last[-1] == SLOB_POISON_FREE)
		last--;
	printk("BUG SLOB (Not tainted): Poison overwritten\n");
	printk("INFO: %p-%p @offset=%lu. First byte 0x%x instead of 0x%x\n", (void *)fault, (void *)(last - 1),
	       (unsigned long)(fault - base), fault[0], SLOB_POISON_FREE);
	printk("INFO: free block %p of %d bytes in page %p, %s: written after free\n", (const void *)blk,
	       units * (int)SLOB_UNIT, (const void *)base, how);
	/* Kernel print_section(): the first bad bytes, 16 a line. */
	const unsigned char *line = (const unsigned char *)((uintptr_t)fault & ~(uintptr_t)15);
	if (line < start)
		line = start;
	for (int l = 0; l < 4 && line < last; l++, line += 16) {
		char buf[128];
		int n = snprintf(buf, sizeof(buf), "Poison   %p: ", (const void *)line);
		int k = end - line < 16 ? (int)(end - line) : 16;

		for (int i = 0; i < k; i++)
			n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%02x ", line[i]);
		printk("%s\n", buf);
	}
	printk("FIX SLOB: Restoring Poison %p-%p=0x%x\n", (void *)fault, (void *)(last - 1), SLOB_POISON_FREE);
	memset(fault, SLOB_POISON_FREE, (size_t)(last - fault));
	kmem_report_done();
	return false;
}

/* The body of the free block @s (past its encoding) all poison? */
static inline bool slob_check_body(struct slob_page *sp, const slob_t *s, const char *how)
{
	int u = slob_units(s);

	return slob_check_poison(sp, s, u, s + slob_enc_units(u), s + u, how);
}

void slob_page_poison(struct slob_page *sp)
{
	slob_t *end = (slob_t *)slob_page_base(sp) + SLOB_PAGE_UNITS;
	int blocks = 0;

	for (slob_t *cur = sp->freelist; cur && cur < end && blocks++ < SLOB_PAGE_UNITS; cur = slob_next(cur)) {
		int u = slob_units(cur);

		if (cur + u > end)
			break;
		memset(cur + slob_enc_units(u), SLOB_POISON_FREE, (size_t)(u - slob_enc_units(u)) * SLOB_UNIT);
		if (slob_next(cur) <= cur)
			break;
	}
}

long slob_page_poison_faults(struct slob_page *sp, bool report)
{
	slob_t *end = (slob_t *)slob_page_base(sp) + SLOB_PAGE_UNITS;
	long faults = 0;
	int blocks = 0;

	for (slob_t *cur = sp->freelist; cur && cur < end && blocks++ < SLOB_PAGE_UNITS; cur = slob_next(cur)) {
		int u = slob_units(cur);
		const unsigned char *bad;

		if (cur + u > end)
			break;
		bad = slob_poison_mismatch((const unsigned char *)(cur + slob_enc_units(u)),
					   (const unsigned char *)(cur + u));
		if (bad) {
			faults++;
			if (report)
				printk("SLOB: page %p: free block at unit %td: byte %td of it is 0x%x, not poison\n",
				       (void *)sp, cur - (slob_t *)slob_page_base(sp),
				       bad - (const unsigned char *)cur, *bad);
		}
		if (slob_next(cur) <= cur)
			break;
	}
	return faults;
}

/* ---- one page ---------------------------------------------------------- */

void slob_page_init(struct page *page)
{
	struct slob_page *sp = page_slob(page);
	slob_t *b = (slob_t *)__page_address(page);

	sp->cache = NULL;
	INIT_LIST_HEAD(&sp->slab_list);
	sp->freelist = b;
	sp->units = SLOB_PAGE_UNITS;
	sp->list = SLOB_NO_LIST;
	sp->kind = SLOB_PAGE_HEAP;
	sp->big_size = 0;
	set_slob(b, SLOB_PAGE_UNITS, b + SLOB_PAGE_UNITS);
	page_set_flag(page, PG_slab);
}

/*
 * A program wrote over a free block of @sp (a write past or before its own
 * block, or after a free): its free blocks cannot be trusted, so none is
 * handed out again and no walk meets them.  The page is made to look full
 * (off every list, the caller's part); its live blocks are freed as in any
 * full page.  Its free space is lost, never the heap.
 */
static void slob_page_give_up(struct slob_page *sp, const slob_t *at)
{
	kmem_report("BUG SLOB (Not tainted): Free list corrupted\n"
		    "INFO: page %p: the free block at %p is overwritten (a write past, before or after "
		    "a block); its %d free units are given up\n",
		    (void *)slob_page_base(sp), (const void *)at, sp->units);
	sp->freelist = NULL;
	sp->units = 0;
}

static __attribute__((always_inline)) inline void *
__slob_page_alloc(struct slob_page *sp, size_t size, size_t align, size_t align_offset, unsigned long *scans,
		  const bool poison)
{
	int units = (int)SLOB_UNITS(size);
	slob_t *prev = NULL, *cur = sp->freelist;

	if (!cur)
		return NULL;
	slob_t *end = slob_end(cur), *after;
	for (;; prev = cur, cur = after) {
		int avail = slob_units(cur);
		int delta = 0;
		slob_t *aligned = cur;

		(*scans)++;
		after = slob_next(cur);
		if (align > SLOB_UNIT) {
			aligned = (slob_t *)((((uintptr_t)cur + align_offset + align - 1) & ~(uintptr_t)(align - 1)) -
					     align_offset);
			delta = (int)(aligned - cur);
		}
		if (avail >= units + delta) {
			slob_t *next;

			/* Its size reaches past the next free block: overwritten, never split. */
			if (unlikely(cur + avail > after)) {
				slob_page_give_up(sp, cur);
				return NULL;
			}
			if (poison) {
				/*
				 * What was poison and stops being free or
				 * poison: the block handed out (past the old
				 * encoding) and the new encoding of the free
				 * tail.  The alignment fragment in front keeps
				 * the old encoding's place.
				 */
				int tail = avail - delta - units;
				const slob_t *lo = cur + slob_enc_units(avail);
				const slob_t *hi = aligned + units + (tail ? slob_enc_units(tail) : 0);

				if (lo < aligned)
					lo = aligned;
				if (lo < hi)
					slob_check_poison(sp, cur, avail, lo, hi, "handed out again");
			}

			if (delta) {
				/* Leave the alignment fragment in front as a free block of its own. */
				next = slob_next(cur);
				set_slob(aligned, avail - delta, next);
				set_slob(cur, delta, aligned);
				prev = cur;
				cur = aligned;
				avail = slob_units(cur);
			}
			next = slob_next(cur);
			if (avail == units) {
				if (prev)
					set_slob(prev, slob_units(prev), next);
				else
					sp->freelist = next;
			} else {
				/* Split: the tail stays free. */
				if (prev)
					set_slob(prev, slob_units(prev), cur + units);
				else
					sp->freelist = cur + units;
				set_slob(cur + units, avail - units, next);
			}
			sp->units -= units;
			if (!sp->units)
				sp->freelist = NULL;
			return cur;
		}
		/*
		 * The next free block lies above this one and in the page, or a
		 * program wrote over this one: the walk must not loop or leave
		 * the page.
		 */
		if (unlikely(after >= end) || unlikely(after <= cur)) {
			if (after != end)
				slob_page_give_up(sp, cur);
			return NULL;
		}
	}
}

void *slob_page_alloc(struct slob_page *sp, size_t size, size_t align, size_t align_offset,
		      unsigned long *scans)
{
	return __slob_page_alloc(sp, size, align, align_offset, scans, false);
}

void *slob_page_alloc_poisoned(struct slob_page *sp, size_t size, size_t align, size_t align_offset,
			       unsigned long *scans)
{
	return __slob_page_alloc(sp, size, align, align_offset, scans, true);
}

/*
 * The free blocks around @b: *prevp the last one below it (NULL if none),
 * the result the first one at or above it (the page end if none).  NULL if
 * the walk meets an encoding that cannot be (a program wrote over a free
 * block): the caller then touches nothing.
 */
static slob_t *slob_find_neighbours(struct slob_page *sp, const slob_t *b, slob_t **prevp)
{
	slob_t *end = slob_end(sp->freelist);
	slob_t *prev = NULL, *next = sp->freelist;
	int steps = 0;

	while (next < end && next < b) {
		slob_t *n = slob_next(next);

		if (n <= next || n > end || next + slob_units(next) > n || ++steps > SLOB_PAGE_UNITS)
			return NULL;
		prev = next;
		next = n;
	}
	*prevp = prev;
	return next;
}

static __attribute__((always_inline)) inline int
__slob_page_free(struct slob_page *sp, void *block, size_t size, const bool poison)
{
	slob_t *b = block, *base = (slob_t *)slob_page_base(sp), *end = base + SLOB_PAGE_UNITS;
	int units = (int)SLOB_UNITS(size);
	slob_t *prev, *next, *after;
	bool take_next;
	int total;

	if (b < base || !size || b + units > end || ((uintptr_t)b & (SLOB_UNIT - 1)))
		return -EINVAL;
	if (!sp->freelist) {
		/* A full page gets its first free block. */
		if (poison)
			memset(b, SLOB_POISON_FREE, (size_t)units * SLOB_UNIT);
		set_slob(b, units, end);
		sp->freelist = b;
		sp->units = units;
		return 0;
	}
	next = slob_find_neighbours(sp, b, &prev);
	if (!next)
		return -EFAULT;
	/* Inside a free block: freed already.  Across one: freed with another size. */
	if ((prev && prev + slob_units(prev) > b) || next == b)
		return -EALREADY;
	if (next < end && b + units > next)
		return -EINVAL;
	if (sp->units + units > SLOB_PAGE_UNITS)
		return -EFAULT;

	total = units;
	after = next;
	take_next = next < end && b + units == next;
	if (take_next) {
		total += slob_units(next);
		after = slob_next(next);
		/* The block taken in: checked as the walk checked those below it. */
		if (unlikely(after <= next) || unlikely(after > end) || unlikely(next + slob_units(next) > after))
			return -EFAULT;
	}
	if (poison) {
		/*
		 * The free blocks taken in keep their poison, which is checked
		 * now: a merge is the last time their bodies are known apart.
		 * The block freed is poison all through, and so is the
		 * encoding of the block above it that it takes in.
		 */
		if (take_next)
			slob_check_body(sp, next, "merged with a block freed next to it");
		if (prev && prev + slob_units(prev) == b)
			slob_check_body(sp, prev, "merged with a block freed next to it");
		memset(b, SLOB_POISON_FREE, (size_t)units * SLOB_UNIT);
		if (take_next)
			memset(next, SLOB_POISON_FREE, (size_t)slob_enc_units(slob_units(next)) * SLOB_UNIT);
	}
	sp->units += units;
	if (prev && prev + slob_units(prev) == b) {
		set_slob(prev, slob_units(prev) + total, after);
	} else {
		set_slob(b, total, after);
		if (prev)
			set_slob(prev, slob_units(prev), b);
		else
			sp->freelist = b;
	}
	return 0;
}

int slob_page_free(struct slob_page *sp, void *block, size_t size)
{
	return __slob_page_free(sp, block, size, false);
}

int slob_page_free_poisoned(struct slob_page *sp, void *block, size_t size)
{
	return __slob_page_free(sp, block, size, true);
}

bool slob_page_overlaps_free(struct slob_page *sp, const void *block, size_t size)
{
	const slob_t *b = block;
	slob_t *prev, *next;

	if (!sp->freelist)
		return false;
	next = slob_find_neighbours(sp, b, &prev);
	if (!next)
		return false;
	if (prev && prev + slob_units(prev) > b)
		return true;
	return next < slob_end(b) && b + SLOB_UNITS(size) > next;
}

long slob_page_validate(struct slob_page *sp, bool report)
{
	slob_t *base = (slob_t *)slob_page_base(sp), *end = base + SLOB_PAGE_UNITS;
	long errors = 0;
	int sum = 0, blocks = 0;

#define SLOB_FAULT(...)									\
	do {										\
		errors++;								\
		if (report) {								\
			printk("SLOB: page %p: ", (void *)sp);				\
			printk(__VA_ARGS__);						\
		}									\
	} while (0)

	if (sp->units < 0 || sp->units > SLOB_PAGE_UNITS)
		SLOB_FAULT("free units %d out of range\n", sp->units);
	if (!sp->freelist) {
		if (sp->units)
			SLOB_FAULT("no free block but %d free units\n", sp->units);
		return errors;
	}
	for (slob_t *cur = sp->freelist;;) {
		int u;
		slob_t *n;

		if (cur < base || cur >= end) {
			SLOB_FAULT("free block %p outside the page\n", (void *)cur);
			break;
		}
		u = slob_units(cur);
		n = slob_next(cur);
		sum += u;
		if (++blocks > SLOB_PAGE_UNITS) {
			SLOB_FAULT("free list loops\n");
			break;
		}
		if (cur + u > end)
			SLOB_FAULT("free block at unit %td of %d units runs past the page\n", cur - base, u);
		if (n == end)
			break;
		if (n <= cur) {
			SLOB_FAULT("free block at unit %td is followed by unit %td: not address-ordered\n",
				   cur - base, n - base);
			break;
		}
		if (cur + u > n)
			SLOB_FAULT("free blocks at units %td and %td overlap\n", cur - base, n - base);
		else if (cur + u == n)
			SLOB_FAULT("free blocks at units %td and %td are adjacent: not coalesced\n",
				   cur - base, n - base);
		cur = n;
	}
	if (sum != sp->units)
		SLOB_FAULT("free blocks hold %d units, the page counts %d\n", sum, sp->units);
#undef SLOB_FAULT
	return errors;
}

/* ---- the free lists ---------------------------------------------------- */

unsigned int slob_list_for(size_t size)
{
	switch (slob_nr_lists) {
	case 1:
		return SLOB_LIST_SMALL;
	case 2:
		/* The patch as posted: "small" up to the break, "big" above it. */
		return size > slob_break ? SLOB_LIST_MEDIUM : SLOB_LIST_SMALL;
	default:
		return size < SLOB_BREAK1 ? SLOB_LIST_SMALL : size < SLOB_BREAK2 ? SLOB_LIST_MEDIUM
										: SLOB_LIST_LARGE;
	}
}

const char *slob_list_name(unsigned int list)
{
	static const char *const one[] = { "free" };
	static const char *const two[] = { "small", "big" };
	static const char *const three[] = { "small", "medium", "large" };

	switch (slob_nr_lists) {
	case 1:
		return one[0];
	case 2:
		return two[list & 1];
	default:
		return three[list < 3 ? list : 2];
	}
}

void slob_account_pages(long pages, bool reclaimable)
{
	mod_zone_page_state(reclaimable ? NR_SLAB_RECLAIMABLE : NR_SLAB_UNRECLAIMABLE, pages);
}

static void slob_list_add(struct slob_page *sp, unsigned int list)
{
	list_add(&sp->slab_list, &slob_lists[list]);
	sp->list = (unsigned char)list;
}

static void slob_list_del(struct slob_page *sp)
{
	list_del(&sp->slab_list);
	sp->list = SLOB_NO_LIST;
}

/* Give a wholly free heap page back; slob_lock not held. */
static void slob_free_page(struct page *page)
{
	struct slob_page *sp = page_slob(page);

	memset(&sp->cache, 0, sizeof(*sp) - offsetof(struct slob_page, cache));
	page_clear_flag(page, PG_slab);
	slob_account_pages(-1, false);
	__free_pages(page, 0);
}

/*
 * Wholly free pages a poisoned heap keeps (the newest SLOB_KEEP_EMPTY, as
 * SLUB keeps min_partial empty slabs): a write after the free that emptied
 * a page is seen when the page is used again, or when it goes back to the
 * page allocator (its poison checked then).  Without them the page would
 * go back at that free, and what is written there later is nobody's to
 * see.  They stay on their list; slob_lock held.
 */
#define SLOB_KEEP_EMPTY		4
static struct slob_page *slob_kept[SLOB_KEEP_EMPTY];	/* oldest first */
static unsigned int slob_nr_kept;

/* @sp, one of slob_kept[], gets blocks again (or goes back): no longer kept. */
static void slob_unkeep(struct slob_page *sp)
{
	for (unsigned int i = 0; i < slob_nr_kept; i++) {
		if (slob_kept[i] == sp) {
			memmove(&slob_kept[i], &slob_kept[i + 1], (slob_nr_kept - i - 1) * sizeof(slob_kept[0]));
			slob_nr_kept--;
			return;
		}
	}
}

/* A kept page leaves the heap: its poison checked, off its list; the caller frees it unlocked. */
static struct slob_page *slob_unkeep_oldest(void)
{
	struct slob_page *sp = slob_kept[0];

	slob_unkeep(sp);
	if (sp->freelist == (slob_t *)slob_page_base(sp) && sp->units == SLOB_PAGE_UNITS)
		slob_check_body(sp, sp->freelist, "given back to the page allocator");
	if (sp->list != SLOB_NO_LIST)
		slob_list_del(sp);
	slob_stats.pages--;
	return sp;
}

/* A search's pages and blocks looked at, in all and on its list; slob_lock held. */
static inline void slob_count_search(unsigned int list, unsigned long pages, unsigned long blocks)
{
	slob_stats.page_scans += pages;
	slob_stats.block_scans += blocks;
	slob_stats.list[list].searches++;
	slob_stats.list[list].page_scans += pages;
	slob_stats.list[list].block_scans += blocks;
}

static __attribute__((always_inline)) inline void *
__slob_alloc(size_t size, gfp_t gfp, size_t align, size_t align_offset, const bool poison)
{
	unsigned int list = slob_list_for(size);
	struct list_head *head = &slob_lists[list];
	int units = (int)SLOB_UNITS(size);
	unsigned long pages = 0, blocks = 0;
	struct slob_page *sp, *sp_next;
	struct page *page;
	void *b = NULL;

	kmem_lock(&slob_lock);
	list_for_each_entry_safe(sp, sp_next, head, slab_list) {
		pages++;
		if (sp->units < units)
			continue;
		bool was_empty = poison && sp->units == SLOB_PAGE_UNITS;

		b = poison ? slob_page_alloc_poisoned(sp, size, align, align_offset, &blocks)
			   : slob_page_alloc(sp, size, align, align_offset, &blocks);
		/* A kept page used again, or given up (overwritten): no longer kept. */
		if (was_empty && (b || !sp->freelist))
			slob_unkeep(sp);
		if (!b) {
			if (unlikely(!sp->freelist))
				slob_list_del(sp);	/* given up (slob_page_give_up()) */
			continue;
		}
		if (!sp->units) {
			/* Full: off every list, and no rotation around it. */
			slob_list_del(sp);
		} else if (head->next != &sp->slab_list) {
			/* Next fit: the next search starts at this page. */
			list_del(head);
			list_add_tail(head, &sp->slab_list);
		}
		break;
	}
	slob_count_search(list, pages, blocks);
	if (b) {
		slob_stats.allocs++;
		slob_stats.allocated += size;
		kmem_unlock(&slob_lock);
		return b;
	}
	kmem_unlock(&slob_lock);

	/* A new page, made one free block and put on the list for this size. */
	page = alloc_pages(gfp & ~(__GFP_ZERO | __GFP_COMP), 0);
	if (!page)
		return NULL;
	slob_account_pages(1, false);
	slob_page_init(page);
	sp = page_slob(page);
	if (poison)
		slob_page_poison(sp);

	kmem_lock(&slob_lock);
	slob_stats.pages++;
	slob_stats.list[list].new_pages++;
	blocks = 0;
	b = poison ? slob_page_alloc_poisoned(sp, size, align, align_offset, &blocks)
		   : slob_page_alloc(sp, size, align, align_offset, &blocks);
	slob_stats.block_scans += blocks;
	slob_stats.list[list].block_scans += blocks;
	if (b) {
		slob_stats.allocs++;
		slob_stats.allocated += size;
		if (sp->units)
			slob_list_add(sp, list);
	} else {
		slob_stats.pages--;
	}
	kmem_unlock(&slob_lock);
	if (!b) {
		/* Only an alignment bigger than the page could do this; the callers cap it. */
		kmem_warn("mm/slob.c:slob_alloc", "%zu bytes aligned to %zu do not fit a page\n", size, align);
		slob_free_page(page);
	}
	return b;
}

void *slob_alloc(size_t size, gfp_t gfp, size_t align, size_t align_offset)
{
	return __slob_alloc(size, gfp, align, align_offset, false);
}

void *slob_alloc_poisoned(size_t size, gfp_t gfp, size_t align, size_t align_offset)
{
	return __slob_alloc(size, gfp, align, align_offset, true);
}

static __attribute__((always_inline)) inline int __slob_free(void *block, size_t size, const bool poison)
{
	struct page *page = __virt_to_page(block);
	struct slob_page *sp = page_slob(page);
	bool was_full;
	int rc;

	kmem_lock(&slob_lock);
	was_full = !sp->freelist;
	rc = poison ? slob_page_free_poisoned(sp, block, size) : slob_page_free(sp, block, size);
	if (rc) {
		/* Its free blocks are overwritten: given up, as slob_page_alloc() does. */
		if (rc == -EFAULT && sp->freelist) {
			if (poison)
				slob_unkeep(sp);
			sp->freelist = NULL;
			sp->units = 0;
			if (sp->list != SLOB_NO_LIST)
				slob_list_del(sp);
		}
		kmem_unlock(&slob_lock);
		return rc;
	}
	slob_stats.frees++;
	slob_stats.allocated -= size;
	if (poison && sp->units == SLOB_PAGE_UNITS) {
		/* Kept, on a list; the oldest kept page goes back if there are too many. */
		struct slob_page *old = slob_nr_kept == SLOB_KEEP_EMPTY ? slob_unkeep_oldest() : NULL;

		slob_kept[slob_nr_kept++] = sp;
		if (was_full)
			slob_list_add(sp, slob_list_for(size));
		kmem_unlock(&slob_lock);
		if (old)
			slob_free_page(slob_page_page(old));
		return 0;
	}
	if (sp->units == SLOB_PAGE_UNITS) {
		if (sp->list != SLOB_NO_LIST)
			slob_list_del(sp);
		slob_stats.pages--;
		kmem_unlock(&slob_lock);
		slob_free_page(page);
		return 0;
	}
	if (was_full)
		/* Partially free again: on the list for the size of the block freed. */
		slob_list_add(sp, slob_list_for(size));
	kmem_unlock(&slob_lock);
	return 0;
}

int slob_free(void *block, size_t size)
{
	return __slob_free(block, size, false);
}

int slob_free_poisoned(void *block, size_t size)
{
	return __slob_free(block, size, true);
}

void slob_shrink(void)
{
	for (;;) {
		struct slob_page *sp = NULL;

		kmem_lock(&slob_lock);
		if (slob_nr_kept)
			sp = slob_unkeep_oldest();
		kmem_unlock(&slob_lock);
		if (!sp)
			return;
		slob_free_page(slob_page_page(sp));
	}
}

long slob_validate_all(bool report)
{
	long errors = 0;
	struct slob_page *sp;

	kmem_lock(&slob_lock);
	for (unsigned int l = 0; l < SLOB_NR_LISTS; l++) {
		list_for_each_entry(sp, &slob_lists[l], slab_list) {
			if (sp->list != l || sp->kind != SLOB_PAGE_HEAP || !sp->units) {
				errors++;
				if (report)
					printk("SLOB: page %p on the %s list: list %u, kind %u, %d free units\n",
					       (void *)sp, slob_list_name(l), sp->list, sp->kind, sp->units);
			}
			errors += slob_page_validate(sp, report);
			if (slob_poison_heap)
				errors += slob_page_poison_faults(sp, report);
		}
	}
	kmem_unlock(&slob_lock);
	return errors;
}

/* For the statistics file: a list's pages, unused bytes, biggest block, free blocks by size. */
void slob_list_figures(unsigned int list, struct slob_list_figures *f)
{
	struct slob_page *sp;

	memset(f, 0, sizeof(*f));
	list_for_each_entry(sp, &slob_lists[list], slab_list) {
		int blocks = 0;

		f->pages++;
		f->unused += (unsigned long)sp->units * SLOB_UNIT;
		for (slob_t *cur = sp->freelist; cur && blocks++ < SLOB_PAGE_UNITS; cur = slob_next(cur)) {
			unsigned long bytes = (unsigned long)slob_units(cur) * SLOB_UNIT;
			unsigned int b = 0;

			while (b < SLOB_HOLE_BUCKETS - 1 && bytes > 16UL << b)
				b++;
			f->holes[b]++;
			f->fragments++;
			if (bytes > f->biggest)
				f->biggest = bytes;
			if (slob_last(cur))
				break;
		}
	}
}

/* The bytes of @sp's free blocks, in address order; slob_lock held (see slob.h). */
int slob_page_free_blocks(struct slob_page *sp, unsigned int *bytes, int max)
{
	int n = 0;

	for (slob_t *cur = sp->freelist; cur && n < SLOB_PAGE_UNITS; cur = slob_next(cur)) {
		if (n < max)
			bytes[n] = (unsigned int)slob_units(cur) * SLOB_UNIT;
		n++;
		if (slob_last(cur))
			break;
	}
	return n;
}

/* fork(): the child has one thread; whatever another thread held is its no longer. */
void slob_fork_prepare(void) { kmem_lock(&slob_lock); }
void slob_fork_parent(void) { kmem_unlock(&slob_lock); }
void slob_fork_child(void) { kmem_lock_init(&slob_lock); }
