/* SPDX-License-Identifier: MIT */
/*
 * The virtual /proc and /sys.  Each layer declares its files where it
 * lives, with KMEMFS_FILE (one fixed path) or KMEMFS_DIR (a subtree served
 * by one handler, e.g. /sys/kernel/slab/<cache>/<attr>).  The declarations
 * gather in one linker section, as the kernel's initcalls do.
 */
#ifndef KMEM_KMEMFS_INTERNAL_H
#define KMEM_KMEMFS_INTERNAL_H

#include <stdbool.h>

#include "introspect/seq_buf.h"

struct kmemfs_entry {
	const char *path;	/* file path, or directory prefix ending in '/' */
	unsigned short mode;	/* 0444, 0400, 0600, 0200, ... */
	bool is_dir;
	/* Files: render; 0 or -errno.  Dirs: @path is the full path asked for. */
	int (*show)(struct seq_buf *s, const char *path);
	int (*store)(const char *path, const char *val);
	/* Dirs only: list the entries of @path (a directory inside the subtree). */
	int (*list)(struct seq_buf *s, const char *path);
} __attribute__((aligned(8)));

#define __KMEMFS_ID2(a, b) a##b
#define __KMEMFS_ID(a, b) __KMEMFS_ID2(a, b)

#define KMEMFS_FILE(p, m, showfn, storefn)					\
	static const struct kmemfs_entry __KMEMFS_ID(__kmemfs_, __LINE__)	\
	__attribute__((used, section("kmemfs"), aligned(__alignof__(struct kmemfs_entry)))) = {				\
		.path = p, .mode = m, .show = showfn, .store = storefn }

#define KMEMFS_DIR(p, showfn, storefn, listfn)					\
	static const struct kmemfs_entry __KMEMFS_ID(__kmemfs_, __LINE__)	\
	__attribute__((used, section("kmemfs"), aligned(__alignof__(struct kmemfs_entry)))) = {				\
		.path = p, .mode = 0555, .is_dir = true,			\
		.show = showfn, .store = storefn, .list = listfn }

#endif /* KMEM_KMEMFS_INTERNAL_H */
