/* SPDX-License-Identifier: MIT */
/*
 * Boot configuration and the virtual /proc and /sys through which kmem shows
 * its state the way the kernel shows its own.
 */
#ifndef KMEM_KMEMFS_H
#define KMEM_KMEMFS_H

#include <stddef.h>
#include <sys/types.h>
#include <kmem/compiler.h>

KMEM_BEGIN_DECLS

/*
 * Boot kmem with a kernel-style command line ("mem=64M page_alloc.tail_placement=0").
 * Must come before any allocation; otherwise KMEM_CMDLINE is read at first use.
 * Returns 0, -EINVAL for an unknown or malformed parameter (named on stderr),
 * or -EBUSY if kmem is already running.
 */
KMEM_API int kmem_init(const char *cmdline);

/*
 * Read a virtual file ("/proc/buddyinfo", "/sys/kernel/slab/", ...) into @buf.
 * Like snprintf: at most @size - 1 bytes are copied and the result is always
 * NUL-terminated (if @size > 0); the return value is the full length of the
 * file, so a return >= @size means the copy was truncated.  Rendering never
 * allocates.  Errors are negative errno values: -ENOENT unknown path,
 * -EACCES not readable, -ENOMEM kmem could not boot.  A directory path
 * (ending in '/' or naming a directory) lists its entries, one per line.
 */
KMEM_API ssize_t kmem_read(const char *path, char *buf, size_t size);

/*
 * Write @value to a virtual file.  Returns 0 or a negative errno: -ENOENT
 * unknown path, -EACCES read-only, -EINVAL bad value, -ERANGE a sysfs number
 * too big for its type, -EISDIR a directory.
 */
KMEM_API int kmem_write(const char *path, const char *value);

KMEM_END_DECLS

#endif /* KMEM_KMEMFS_H */
