// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_data.h"

FILE *kt_open_shared(const char *rel, char *path, size_t len)
{
	const char *env = getenv("KMEM_SHARED_DIR");

	if (env && *env)
		snprintf(path, len, "%s%s", env, rel);
	else
		snprintf(path, len, "%s/../shared%s", KMEM_SOURCE_DIR, rel);
	FILE *f = fopen(path, "r");
	if (!f)
		fprintf(stderr, "cannot open kernel data %s: %s (set KMEM_SHARED_DIR to the "
			"shared/ directory)\n", path, strerror(errno));
	return f;
}

int kt_split_tabs(char *line, char **f, int max)
{
	int n = 0;

	line[strcspn(line, "\r\n")] = '\0';
	while (n < max) {
		f[n++] = line;
		line = strchr(line, '\t');
		if (!line)
			break;
		*line++ = '\0';
	}
	return n;
}
