/* SPDX-License-Identifier: MIT */
/*
 * Fixed-size chunks for the allocator's own metadata (per-thread state),
 * carved from memory outside the managed range.  Needed because these
 * structures exist before, and underneath, every other allocator.
 */
#ifndef KMEM_METAPOOL_H
#define KMEM_METAPOOL_H

#include <stddef.h>

#include "platform/os.h"

struct metapool {
	size_t size;
	kmem_lock_t lock;
	void *free;		/* chunks given back */
	char *cur, *end;	/* the page being carved */
};

#define METAPOOL_INIT(sz) { .size = ((sz) + 63) & ~(size_t)63, .lock = KMEM_LOCK_INIT }

void *metapool_alloc(struct metapool *mp);
void metapool_free(struct metapool *mp, void *p);

#endif /* KMEM_METAPOOL_H */
