/* SPDX-License-Identifier: MIT */
/*
 * The real kernel data in shared/ (files read off a Linux 6.18 machine),
 * used as test oracles.  shared/ sits beside the source tree, or wherever
 * $KMEM_SHARED_DIR points.
 */
#ifndef KMEM_TEST_KERNEL_DATA_H
#define KMEM_TEST_KERNEL_DATA_H

#include <stddef.h>
#include <stdio.h>

#define KT_SLUB_SYSFS_TSV	"/data/linux-6.18/slub-sysfs.tsv"

/* Open shared/@rel (rel starts with '/'); the path tried goes to @path.
 * On failure says so on stderr and returns NULL. */
FILE *kt_open_shared(const char *rel, char *path, size_t len);

/* Split @line at tabs in place (the line end dropped); returns the number of fields. */
int kt_split_tabs(char *line, char **f, int max);

#endif /* KMEM_TEST_KERNEL_DATA_H */
