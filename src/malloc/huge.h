/* SPDX-License-Identifier: MIT */
/*
 * Allocations above KMALLOC_MAX_SIZE (4 MiB, the largest buddy block) are
 * their own mappings, recorded in a small hash table so free() can tell
 * them from pointers kmem never handed out.
 */
#ifndef KMEM_MALLOC_HUGE_H
#define KMEM_MALLOC_HUGE_H

#include <stdbool.h>
#include <stddef.h>

void *huge_alloc(size_t size, size_t align);
/* true if @p was a huge allocation (now freed). */
bool huge_free(void *p);
/* Usable size of a huge allocation, 0 if @p is not one. */
size_t huge_usable_size(const void *p);
/* Resize in place or move (mremap); NULL on failure, @p untouched. */
void *huge_realloc(void *p, size_t size);
void huge_stats(size_t *nr, size_t *bytes);
void huge_fork_prepare(void);
void huge_fork_parent(void);
void huge_fork_child(void);

#endif /* KMEM_MALLOC_HUGE_H */
