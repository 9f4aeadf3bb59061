/* SPDX-License-Identifier: MIT */
/*
 * Allocations above KMALLOC_MAX_SIZE (4 MiB, the largest buddy block) are
 * carved from arenas (huge_heap.h), recorded in a small hash table so
 * free() can tell them from pointers kmem never handed out.  Freed ones
 * stay resident for reuse, up to a budget (malloc.huge_retain_mb).
 */
#ifndef KMEM_MALLOC_HUGE_H
#define KMEM_MALLOC_HUGE_H

#include <stdbool.h>
#include <stddef.h>

/* @zero: must read as zeroes (fresh memory does; a freed block's is cleared). */
void *huge_alloc(size_t size, size_t align, bool zero);
/* true if @p was a huge allocation (now freed). */
bool huge_free(void *p);
/* Usable size of a huge allocation, 0 if @p is not one. */
size_t huge_usable_size(const void *p);
/*
 * What @p, which is not a huge allocation's start (huge_free() and
 * huge_usable_size() did not know it), has to do with them:
 * HUGE_INSIDE, a pointer into one (*startp: the block); HUGE_FREED, into a
 * freed one's range (*startp: the free range; a double free, or a use
 * after free);
 * HUGE_NONE.  A walk of the table: for bad pointers only.
 */
enum huge_where { HUGE_NONE, HUGE_INSIDE, HUGE_FREED };
enum huge_where huge_where(const void *p, void **startp);
/* Resize in place, or move (copy); NULL on failure, @p untouched. */
void *huge_realloc(void *p, size_t size);
void huge_stats(size_t *nr, size_t *bytes);
/* Give back all freed memory kept for reuse (malloc_trim()). */
void huge_trim(void);
/* Give back what was kept longer than its time (the reaper). */
void huge_expire(void);
void huge_fork_prepare(void);
void huge_fork_parent(void);
void huge_fork_child(void);

#endif /* KMEM_MALLOC_HUGE_H */
