/* SPDX-License-Identifier: MIT */
/*
 * Pointers kmem never handed out: foreign but legitimate (made before kmem
 * took over: the dynamic loader's early blocks), or bad (a stack buffer, a
 * global, a mapping of the program's, an unmapped address).  See foreign.c.
 */
#ifndef KMEM_MALLOC_FOREIGN_H
#define KMEM_MALLOC_FOREIGN_H

#include <stdbool.h>

/* Note what memory was there when kmem took over (the malloc constructor). */
void foreign_snapshot(void);
/* @p (in no block of kmem's) may be an early block made before kmem took over. */
bool foreign_pointer(const void *p);
/* WARNING: ... func(p): invalid pointer ...: what it points to, the caller, the thread. */
void report_invalid_pointer(const char *func, const void *p, unsigned long caller);

#endif /* KMEM_MALLOC_FOREIGN_H */
