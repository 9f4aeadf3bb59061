// SPDX-License-Identifier: MIT
#include "page_alloc/metapool.h"

/* Metadata lives outside managed memory, like mem_map, so it never shows up
 * in (or distorts) buddyinfo. */
#define METAPOOL_CHUNK (64UL << 10)

void *metapool_alloc(struct metapool *mp)
{
	void *p;

	kmem_lock(&mp->lock);
	if (mp->free) {
		p = mp->free;
		mp->free = *(void **)p;
	} else {
		if (!mp->cur || mp->cur + mp->size > mp->end) {
			size_t len = mp->size > METAPOOL_CHUNK ? mp->size : METAPOOL_CHUNK;
			char *chunk = os_map(len);
			if (!chunk) {
				kmem_unlock(&mp->lock);
				return NULL;
			}
			mp->cur = chunk;
			mp->end = chunk + len;
		}
		p = mp->cur;
		mp->cur += mp->size;
	}
	kmem_unlock(&mp->lock);
	return p;
}

void metapool_free(struct metapool *mp, void *p)
{
	kmem_lock(&mp->lock);
	*(void **)p = mp->free;
	mp->free = p;
	kmem_unlock(&mp->lock);
}
