// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kmem.h>

#include "kt_util.h"

void kt_capture_begin(struct kt_capture *c)
{
	char tmpl[] = "/tmp/kmem-test-stderr-XXXXXX";

	fflush(stderr);
	c->file_fd = mkstemp(tmpl);
	if (c->file_fd < 0) {
		perror("mkstemp");
		abort();
	}
	unlink(tmpl);
	c->saved_fd = dup(STDERR_FILENO);
	dup2(c->file_fd, STDERR_FILENO);
}

char *kt_capture_end(struct kt_capture *c)
{
	fflush(stderr);
	dup2(c->saved_fd, STDERR_FILENO);
	close(c->saved_fd);

	off_t len = lseek(c->file_fd, 0, SEEK_END);
	char *text = malloc((size_t)len + 1);
	if (!text)
		abort();
	ssize_t got = pread(c->file_fd, text, (size_t)len, 0);
	text[got > 0 ? got : 0] = '\0';
	close(c->file_fd);
	return text;
}

char *kt_init_captured(const char *cmdline, int *rc)
{
	struct kt_capture c;

	kt_capture_begin(&c);
	*rc = kmem_init(cmdline);
	return kt_capture_end(&c);
}

char *kt_fork_captured(void (*fn)(void *arg), void *arg, int *status)
{
	struct kt_capture c;

	kt_capture_begin(&c);
	*status = kt_fork(fn, arg);
	return kt_capture_end(&c);
}

char *kt_read(const char *path, long *err)
{
	size_t size = 4096;

	for (;;) {
		char *buf = malloc(size);
		if (!buf)
			abort();
		ssize_t n = kmem_read(path, buf, size);
		if (n < 0) {
			free(buf);
			if (err)
				*err = (long)n;
			return NULL;
		}
		if ((size_t)n < size) {
			if (err)
				*err = 0;
			return buf;
		}
		free(buf);
		size = (size_t)n + 1;
	}
}

const char *kt_slab_attr(const char *cache, const char *attr)
{
	static char bufs[4][512];
	static int next;
	char path[256], *b = bufs[next++ & 3];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", cache, attr);
	ssize_t n = kmem_read(path, b, sizeof(bufs[0]));
	if (n < 0)
		snprintf(b, sizeof(bufs[0]), "ERR%d", (int)-n);
	return b;
}

char *kt_read_checked(const char *path)
{
	long err = 0;
	char *text = kt_read(path, &err);

	if (!text)
		fprintf(stderr, "  kmem_read(%s) = %ld\n", path, err);
	return text;
}

/*
 * The number after the first line of @path whose first word is @key, or -1.
 * @indented: the line may start with spaces and @key may end in a tab
 * (zoneinfo); else @key starts the line and a space follows it (vmstat).
 */
static long file_value(const char *path, const char *key, bool indented)
{
	char *text = kt_read(path, NULL);
	size_t kl = strlen(key);
	long v = -1;

	for (char *line = text; line && *line; ) {
		char *p = indented ? line + strspn(line, " ") : line;
		if (!strncmp(p, key, kl) && (p[kl] == ' ' || (indented && p[kl] == '\t'))) {
			v = strtol(p + kl, NULL, 10);
			break;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	free(text);
	return v;
}

long kt_vmstat(const char *name)
{
	return file_value("/proc/vmstat", name, false);
}

long kt_zoneinfo(const char *key)
{
	return file_value("/proc/zoneinfo", key, true);
}

int kt_count_lines(const char *text, const char *want)
{
	size_t wl = strlen(want);
	int n = 0;

	while (text && *text) {
		const char *end = strchr(text, '\n');
		size_t len = end ? (size_t)(end - text) : strlen(text);
		if (len == wl && !strncmp(text, want, wl))
			n++;
		if (!end)
			break;
		text = end + 1;
	}
	return n;
}

int kt_line(const char *text, int n, char *buf, size_t size)
{
	while (text && *text) {
		const char *end = strchr(text, '\n');
		size_t len = end ? (size_t)(end - text) : strlen(text);
		if (n-- == 0) {
			if (len >= size)
				len = size - 1;
			memcpy(buf, text, len);
			buf[len] = '\0';
			return 0;
		}
		if (!end)
			break;
		text = end + 1;
	}
	return -1;
}

unsigned long kt_rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return resident * (unsigned long)sysconf(_SC_PAGESIZE);
}

long kt_proc_status_kb(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':') {
			kb = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

const char *kt_malloc_so(void)
{
	static char so[4096];
	const char *bin = getenv("KMEM_BINARY_DIR");
	struct stat st;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	printf("skipped: sanitizer build (LD_PRELOAD of libkmem-malloc.so cannot work)\n");
	return NULL;
#endif
	snprintf(so, sizeof(so), "%s/lib/libkmem-malloc.so", bin && *bin ? bin : KMEM_SOURCE_DIR "/build");
	if (stat(so, &st)) {
		printf("skipped: %s not built\n", so);
		return NULL;
	}
	return so;
}

int kt_run_self(const char *argv0, const char *mode, const char *cmdline)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		if (cmdline)
			setenv("KMEM_CMDLINE", cmdline, 1);
		execl("/proc/self/exe", argv0, mode, (char *)NULL);
		perror("execl /proc/self/exe");
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 1;
	}
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "FAIL: the preloaded child (%s) died of signal %d\n", mode, WTERMSIG(status));
		printf("0 passed, 1 failed\n");
		return 1;
	}
	return WEXITSTATUS(status);
}
