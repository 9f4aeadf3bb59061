// SPDX-License-Identifier: MIT
/*
 * The allocators a trace replays on, and the settings of compare: a name
 * (slub, glibc, ...), NAME:BOOT-PARAMETERS for kmem's back-ends, or a bare
 * kmem boot parameter (slub with it).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kmem.h>

#include "trace.h"

static const struct target targets[] = {
	{ "slub", TGT_KMEM, NULL },
	{ "slab", TGT_KMEM, NULL },
	{ "slob", TGT_KMEM, NULL },
	{ "glibc", TGT_GLIBC, NULL },
	{ "jemalloc", TGT_PEER, "libjemalloc.so.2" },
	{ "mimalloc", TGT_PEER, "libmimalloc.so.2" },
	{ "tcmalloc", TGT_PEER, "libtcmalloc_minimal.so.4" },
};

const struct target *target_find(const char *name)
{
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
		if (!strcmp(targets[i].name, name))
			return &targets[i];
	return NULL;
}

int setting_parse(const char *spec, const struct target **t, char *cmdline, size_t size)
{
	const char *colon = strchr(spec, ':');
	char name[64];

	if (colon) {
		snprintf(name, sizeof(name), "%.*s", (int)(colon - spec), spec);
		*t = target_find(name);
	} else {
		*t = target_find(spec);
		if (!*t && strchr(spec, '=')) {
			*t = target_find("slub");
			colon = spec - 1;
		}
	}
	if (!*t) {
		fprintf(stderr, "%s: unknown allocator '%s' (slub, slab, slob, glibc, jemalloc, mimalloc, "
				"tcmalloc, NAME:PARAMETERS, or a kmem boot parameter)\n", prog, spec);
		return -1;
	}
	if (colon && (*t)->kind != TGT_KMEM) {
		fprintf(stderr, "%s: '%s': boot parameters apply to kmem's allocators (slub, slab, slob)\n",
			prog, spec);
		return -1;
	}
	if ((*t)->kind == TGT_KMEM)
		snprintf(cmdline, size, "slab=%s%s%s", (*t)->name, colon ? " " : "", colon ? colon + 1 : "");
	else
		cmdline[0] = 0;
	return 0;
}

const char *own_lib(const char *name, char *buf, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	snprintf(buf, size, "%s/../lib/%s", exe, name);
	return access(buf, R_OK) ? NULL : buf;
}

const char *peer_path(const struct target *t, char *buf, size_t size)
{
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
		"/usr/local/lib",
	};
	const char *ld = getenv("LD_LIBRARY_PATH");

	if (ld) {
		char copy[4096];
		snprintf(copy, sizeof(copy), "%s", ld);
		for (char *save, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			snprintf(buf, size, "%s/%s", d, t->lib);
			if (!access(buf, R_OK))
				return buf;
		}
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(buf, size, "%s/%s", dirs[i], t->lib);
		if (!access(buf, R_OK))
			return buf;
	}
	return NULL;
}
