/* SPDX-License-Identifier: MIT */
/*
 * The reaper: a background thread that gives an idle program's free memory
 * back to the OS (see reap.c).
 */
#ifndef KMEM_MALLOC_REAP_H
#define KMEM_MALLOC_REAP_H

/* A thread has exited (slab_thread_exit_notify): start the reaper if it is not running. */
void malloc_reap_thread_exited(void);

/* malloc_trim()'s work: empty slabs, this thread's cached pages, free blocks, huge mappings. */
void malloc_trim_all(void);

#endif /* KMEM_MALLOC_REAP_H */
