// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include <kmem/kmemfs.h>

#include "core/boot.h"
#include "introspect/kmemfs.h"

extern const struct kmemfs_entry __start_kmemfs[];
extern const struct kmemfs_entry __stop_kmemfs[];

#define PATH_MAX_KMEMFS 256

/* Strip trailing slashes: "/proc/" and "/proc" name the same directory. */
static int normalize(const char *in, char *out)
{
	size_t n = strlen(in);

	if (!n || in[0] != '/' || n >= PATH_MAX_KMEMFS)
		return -ENOENT;
	memcpy(out, in, n + 1);
	while (n > 1 && out[n - 1] == '/')
		out[--n] = '\0';
	return 0;
}

static const struct kmemfs_entry *find_file(const char *path)
{
	for (const struct kmemfs_entry *e = __start_kmemfs; e < __stop_kmemfs; e++)
		if (!e->is_dir && !strcmp(e->path, path))
			return e;
	return NULL;
}

/* The subtree handler whose prefix ("/sys/kernel/slab/") contains @path. */
static const struct kmemfs_entry *find_dir_handler(const char *path)
{
	for (const struct kmemfs_entry *e = __start_kmemfs; e < __stop_kmemfs; e++) {
		size_t n = strlen(e->path);
		if (e->is_dir && (!strncmp(e->path, path, n) ||
				  (strlen(path) == n - 1 && !strncmp(e->path, path, n - 1))))
			return e;
	}
	return NULL;
}

/* List the children of @dir that registered paths imply; -ENOENT if none. */
static int list_static_dir(struct seq_buf *s, const char *dir)
{
	size_t dl = strcmp(dir, "/") ? strlen(dir) : 0;
	int found = 0;

	for (const struct kmemfs_entry *e = __start_kmemfs; e < __stop_kmemfs; e++) {
		if (strncmp(e->path, dir, dl) || e->path[dl] != '/')
			continue;
		const char *child = e->path + dl + 1;
		size_t cl = strcspn(child, "/");
		if (!cl)
			continue;
		/* Print each child once: skip it if an earlier entry had it. */
		bool dup = false;
		for (const struct kmemfs_entry *p = __start_kmemfs; p < e && !dup; p++)
			dup = !strncmp(p->path, dir, dl) && p->path[dl] == '/' &&
			      !strncmp(p->path + dl + 1, child, cl) &&
			      (p->path[dl + 1 + cl] == '/' || p->path[dl + 1 + cl] == '\0');
		if (!dup)
			seq_printf(s, "%.*s\n", (int)cl, child);
		found = 1;
	}
	return found ? 0 : -ENOENT;
}

KMEM_API ssize_t kmem_read(const char *path, char *buf, size_t size)
{
	char p[PATH_MAX_KMEMFS];
	struct seq_buf s = { .buf = buf, .size = size };
	int rc;

	/* Terminated whatever comes: an error leaves an empty string, not stale bytes. */
	if (buf && size)
		buf[0] = '\0';
	if (!path || normalize(path, p))
		return -ENOENT;
	if (kmem_boot())
		return -ENOMEM;

	const struct kmemfs_entry *e = find_file(p);
	if (e) {
		if (!(e->mode & 0444))
			return -EACCES;
		rc = e->show(&s, p);
	} else if ((e = find_dir_handler(p)) != NULL) {
		size_t n = strlen(e->path);
		if (strlen(p) < n)	/* the subtree's own root */
			rc = e->list(&s, p);
		else
			rc = e->show(&s, p);
		if (rc == -EISDIR)
			rc = e->list(&s, p);
	} else {
		rc = list_static_dir(&s, p);
	}
	if (rc < 0) {
		/* A show() that failed half-way wrote part of the file: none of it. */
		if (buf && size)
			buf[0] = '\0';
		return rc;
	}
	return (ssize_t)seq_finish(&s);
}

KMEM_API int kmem_write(const char *path, const char *value)
{
	char p[PATH_MAX_KMEMFS];

	if (!path || normalize(path, p))
		return -ENOENT;
	if (!value)
		return -EINVAL;
	if (kmem_boot())
		return -ENOMEM;

	const struct kmemfs_entry *e = find_file(p);
	if (e) {
		if (!(e->mode & 0222) || !e->store)
			return -EACCES;
		return e->store(p, value);
	}
	e = find_dir_handler(p);
	if (e)
		return e->store ? e->store(p, value) : -EACCES;
	struct seq_buf s = { 0 };
	return list_static_dir(&s, p) == 0 ? -EISDIR : -ENOENT;
}
