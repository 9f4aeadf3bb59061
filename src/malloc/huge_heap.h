/* SPDX-License-Identifier: MIT */
/*
 * The address space behind blocks over 4 MiB: arenas (big anonymous
 * mappings) carved into blocks, the free ranges between the blocks kept in
 * address order and joined with their free neighbours, as a page heap
 * keeps free spans (tcmalloc's, or the buddy allocator's, with any size).
 * A free range is dirty (it holds what a freed block held, resident) or
 * clean (given back with MADV_DONTNEED, or never touched: it reads as
 * zeroes and costs no memory).  Nothing in an arena is ever moved or
 * unmapped while the arena holds a block: reusing a freed block's pages
 * costs neither a system call nor a page fault.
 *
 * Every function is called with huge_lock held.
 */
#ifndef KMEM_MALLOC_HUGE_HEAP_H
#define KMEM_MALLOC_HUGE_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hheap_range {
	uintptr_t start;
	size_t len;
};

#define HHEAP_DIRTY_MAX	8

/* What hheap_take() gave: the block, and the parts of it that held data. */
struct hheap_take {
	uintptr_t addr;
	size_t dirty;			/* bytes that held data (were resident) */
	int nr_dirty;			/* ranges in dirty_at[]; -1: more than fit */
	struct hheap_range dirty_at[HHEAP_DIRTY_MAX];
};

/*
 * Take @len bytes at an address that is @phase modulo @align (a power of
 * two, at least a page) from the smallest free run that has room (runs:
 * free ranges next to each other, dirty or clean), the lowest such address
 * in it.  False if no run has room (map an arena: hheap_add_arena()).
 */
bool hheap_take(size_t len, size_t align, size_t phase, struct hheap_take *t);
/* Take the @more bytes right after @end, if they are free; @t as above. */
bool hheap_take_after(uintptr_t end, size_t more, struct hheap_take *t);
/*
 * A range back: @dirty, it holds data (resident); else it reads as zeroes.
 * False if it could not be recorded (no room, and no memory for more).
 */
bool hheap_put(uintptr_t start, size_t len, bool dirty, unsigned long long now);
/*
 * Make sure the next hheap_put() (and the splits of one hheap_take())
 * have room to record their ranges.  False: no memory for that.
 */
bool hheap_reserve(void);
/* A new arena, all clean.  False: no memory for its record. */
bool hheap_add_arena(uintptr_t base, size_t len);
/* madvise(MADV_HUGEPAGE) every arena not yet so. */
void hheap_thp_all(void);
/*
 * Give dirty ranges back (MADV_DONTNEED): those freed before @expire_ns
 * (0: none by age), then the oldest until at most @budget bytes are dirty;
 * and unmap arenas left with no block.
 */
void hheap_release(unsigned long long expire_ns, size_t budget);
/* Bytes of dirty ranges. */
size_t hheap_dirty_bytes(void);
/* The free range @p is in, if any (*startp: its start); only below what was ever handed out. */
bool hheap_freed(uintptr_t p, uintptr_t *startp);

#endif /* KMEM_MALLOC_HUGE_HEAP_H */
