// SPDX-License-Identifier: MIT
/*
 * Pointers kmem never handed out, given to free(), realloc() or
 * malloc_usable_size().  Two kinds must be told apart:
 *
 *  - foreign and legitimate: blocks made before kmem took over, by the
 *    dynamic loader's own allocator (in ld.so's data or in anonymous
 *    mappings it made) or by a malloc that ran first (the brk heap).  They
 *    live in memory that was mapped when kmem's constructor ran, outside
 *    every loaded object's segments and outside the stack.  Left alone,
 *    silently, as before.
 *  - bad: a stack buffer, a global, a mapping the program made itself, an
 *    address nothing maps ((void *)1).  Reported kernel-style (what, where,
 *    which thread), nothing done, the program goes on (or stops, with
 *    panic_on_warn=1 / kmem.hardened=1).
 *
 * The rule is a snapshot, taken once in the malloc constructor: the
 * anonymous mappings, the brk heap and ld.so's writable mappings of that
 * moment, less the PT_LOAD segments of the objects loaded then (a
 * library's .bss is anonymous too).  A pointer in it is foreign; any other
 * is bad.  Frees that come before the snapshot are all taken as foreign.
 */
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "core/printk.h"
#include "malloc/foreign.h"
#include "platform/os.h"

#define MAX_RANGES	64

struct range {
	uintptr_t start, end;
};

static struct range early[MAX_RANGES];		/* memory that may hold early blocks */
static unsigned int nr_early;
static struct range objects[MAX_RANGES];	/* loaded objects' segments, ld.so's excluded */
static unsigned int nr_objects;
static bool snapshot_taken;

static bool in_ranges(const struct range *r, unsigned int n, uintptr_t a)
{
	for (unsigned int i = 0; i < n; i++)
		if (a >= r[i].start && a < r[i].end)
			return true;
	return false;
}

static int note_object(struct dl_phdr_info *info, size_t size, void *ldso_base)
{
	(void)size;
	/* The loader's own data holds its first blocks. */
	if (info->dlpi_addr == (uintptr_t)ldso_base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum && nr_objects < MAX_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		uintptr_t start = (info->dlpi_addr + ph->p_vaddr) & ~(uintptr_t)4095;
		uintptr_t end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + 4095) & ~(uintptr_t)4095;
		objects[nr_objects++] = (struct range){ start, end };
	}
	return 0;
}

/*
 * One line of /proc/self/maps: "start-end perms offset dev inode   path".
 * Returns the path (or "" for an anonymous mapping).
 */
static const char *parse_maps_line(char *line, uintptr_t *start, uintptr_t *end, char perms[5])
{
	unsigned long a, b;
	int path_at = 0;

	if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &a, &b, perms, &path_at) < 3)
		return NULL;
	*start = a;
	*end = b;
	return path_at ? line + path_at : "";
}

/* Read /proc/self/maps whole into @buf (NUL-terminated); its length, 0 if it failed. */
static size_t read_maps(char *buf, size_t size)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	size_t len = 0;

	if (fd < 0)
		return 0;
	while (len + 1 < size) {
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	/* Only whole lines. */
	while (len && buf[len - 1] != '\n')
		len--;
	buf[len] = '\0';
	return len;
}

void foreign_snapshot(void)
{
	static char maps[1 << 16];
	uintptr_t ldso = getauxval(AT_BASE);
	char ldso_path[256] = "";

	if (snapshot_taken)
		return;
	dl_iterate_phdr(note_object, (void *)ldso);
	if (!read_maps(maps, sizeof(maps)))
		return;		/* no snapshot: every unknown pointer stays foreign */
	/* The loader's path, from the mapping at its base. */
	for (char *line = maps, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
		uintptr_t a, b;
		char perms[5];
		*nl = '\0';
		const char *path = parse_maps_line(line, &a, &b, perms);
		*nl = '\n';
		if (path && ldso >= a && ldso < b) {
			size_t n = (size_t)(nl - path);
			if (n < sizeof(ldso_path)) {
				memcpy(ldso_path, path, n);
				ldso_path[n] = '\0';
			}
			break;
		}
	}
	for (char *line = maps, *nl; (nl = strchr(line, '\n')) && nr_early < MAX_RANGES; line = nl + 1) {
		uintptr_t a, b;
		char perms[5];
		*nl = '\0';
		const char *path = parse_maps_line(line, &a, &b, perms);
		if (!path || perms[1] != 'w')
			continue;
		if (*path == '\0' || !strcmp(path, "[heap]") || (ldso_path[0] && !strcmp(path, ldso_path)))
			early[nr_early++] = (struct range){ a, b };
	}
	__atomic_store_n(&snapshot_taken, true, __ATOMIC_RELEASE);
}

bool foreign_pointer(const void *p)
{
	uintptr_t a = (uintptr_t)p;

	if (!__atomic_load_n(&snapshot_taken, __ATOMIC_ACQUIRE))
		return true;
	return in_ranges(early, nr_early, a) && !in_ranges(objects, nr_objects, a);
}

/* What is at @a, for the report: "the stack", "a global of /usr/bin/prog", ... */
static void describe(uintptr_t a, char *out, size_t size)
{
	static char maps[1 << 16];
	static kmem_lock_t lock = KMEM_LOCK_INIT;

	snprintf(out, size, "an address nothing maps");
	kmem_lock(&lock);
	if (read_maps(maps, sizeof(maps))) {
		for (char *line = maps, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
			uintptr_t s, e;
			char perms[5];
			*nl = '\0';
			const char *path = parse_maps_line(line, &s, &e, perms);
			if (!path || a < s || a >= e)
				continue;
			if (!strcmp(path, "[stack]"))
				snprintf(out, size, "the stack");
			else if (*path == '[')
				snprintf(out, size, "%s", path);
			else if (*path)
				snprintf(out, size, "%s of %s", perms[1] == 'w' ? "a global" : "read-only data",
					 path);
			else if (in_ranges(objects, nr_objects, a))
				snprintf(out, size, "a global (.bss)");
			else
				snprintf(out, size, "a mapping kmem did not make (%s)", perms);
			break;
		}
	}
	kmem_unlock(&lock);
}

void report_invalid_pointer(const char *func, const void *p, unsigned long caller)
{
	char what[320];

	describe((uintptr_t)p, what, sizeof(what));
	kmem_warn("malloc/foreign.c",
		  "%s(%p): invalid pointer, not a block kmem handed out: %s; called from %#lx; nothing done\n",
		  func, p, what, caller);
}
