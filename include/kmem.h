/* SPDX-License-Identifier: MIT */
/*
 * kmem: the Linux kernel's memory allocators as a userspace library.
 *
 *   #include <kmem.h>
 *
 * Page allocator (alloc_pages, __get_free_pages, ...), boot parameters and
 * the virtual /proc and /sys (kmem_init, kmem_read, kmem_write).
 */
#ifndef KMEM_H
#define KMEM_H

#include <kmem/compiler.h>
#include <kmem/gfp.h>
#include <kmem/page.h>
#include <kmem/slab_flags.h>
#include <kmem/slab.h>
#include <kmem/kmemfs.h>

#endif /* KMEM_H */
