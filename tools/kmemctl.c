// SPDX-License-Identifier: MIT
/*
 * kmemctl: the /proc and /sys of a program running on kmem, live.  The
 * program runs with KMEM_CMDLINE=kmem.live=1 (src/introspect/live.c serves
 * them on /tmp/kmem-<uid>/<pid>.sock).
 *
 *   kmemctl list                       programs serving, with their command
 *   kmemctl PID cat PATH...            e.g. /proc/slabinfo, /sys/kernel/slab/
 *   kmemctl PID write PATH VALUE       e.g. /sys/kernel/slab/kmalloc-64/shrink 1
 *   kmemctl PID slabtop [-d SECS] [-n COUNT] [-l LINES]
 *                                      the biggest caches, as slabtop(1) shows
 *                                      them (once, or every SECS COUNT times)
 *
 * Exit status: 0, 1 if the program answered with an error (said on
 * stderr), 2 for bad usage or no such program.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int usage(void)
{
	fprintf(stderr, "usage: kmemctl list\n"
			"       kmemctl PID cat PATH...\n"
			"       kmemctl PID write PATH VALUE\n"
			"       kmemctl PID slabtop [-d SECS] [-n COUNT] [-l LINES]\n"
			"The program must run with KMEM_CMDLINE=kmem.live=1.\n");
	return 2;
}

static void socket_path(char *buf, size_t size, long pid)
{
	snprintf(buf, size, "/tmp/kmem-%u/%ld.sock", (unsigned int)getuid(), pid);
}

static int connect_to(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (strlen(path) >= sizeof(addr.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(addr.sun_path, path, strlen(path) + 1);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * One request to @pid; the answer's body in *@out (malloc'd, NUL-terminated).
 * 0, 1 if the program answered with an error (printed), 2 if it cannot be
 * reached (printed).
 */
static int request(long pid, const char *req, char **out)
{
	char path[128];

	socket_path(path, sizeof(path), pid);
	int fd = connect_to(path);
	if (fd < 0) {
		fprintf(stderr, "kmemctl: %s: %s (is %ld running with KMEM_CMDLINE=kmem.live=1?)\n", path,
			strerror(errno), pid);
		return 2;
	}
	size_t len = strlen(req);
	if (send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len) {
		fprintf(stderr, "kmemctl: %ld: %s\n", pid, strerror(errno));
		close(fd);
		return 2;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	for (ssize_t r; buf; n += (size_t)r) {
		if (n + 1 >= cap) {
			char *bigger = realloc(buf, cap *= 2);
			if (!bigger) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = bigger;
		}
		r = recv(fd, buf + n, cap - n - 1, 0);
		if (r < 0 && errno == EINTR) {
			r = 0;
			continue;
		}
		if (r <= 0)
			break;
	}
	close(fd);
	if (!buf) {
		fprintf(stderr, "kmemctl: out of memory\n");
		return 2;
	}
	buf[n] = '\0';
	if (!strncmp(buf, "ok\n", 3)) {
		memmove(buf, buf + 3, n - 2);
		*out = buf;
		return 0;
	}
	/* "error <errno> <text>\n" */
	char *text = strchr(buf + 6, ' ');
	fprintf(stderr, "kmemctl: %ld: %s", pid, n && text ? text + 1 : "no answer\n");
	free(buf);
	return n ? 1 : 2;
}

static int cmd_list(void)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/kmem-%u", (unsigned int)getuid());
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	printf("%8s  %s\n", "PID", "COMMAND");
	for (struct dirent *e; (e = readdir(d));) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (pid <= 0 || strcmp(end, ".sock"))
			continue;
		char path[128], comm[64] = "?";
		socket_path(path, sizeof(path), pid);
		int fd = connect_to(path);
		if (fd < 0) {
			/* Its process is gone (killed, or exec'ed): nobody will answer. */
			unlink(path);
			continue;
		}
		close(fd);
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		FILE *f = fopen(path, "r");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		printf("%8ld  %s\n", pid, comm);
	}
	closedir(d);
	return 0;
}

struct cache_line {
	char name[64];
	unsigned long active, objs, objsize, per_slab, pages_per_slab, slabs;
	unsigned long long bytes;
};

static int by_bytes(const void *a, const void *b)
{
	const struct cache_line *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->name, y->name);
}

static unsigned long meminfo_kb(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoul(p + strlen(key), NULL, 10) : 0;
}

/* One slabtop screen from /proc/slabinfo and /proc/meminfo; 0, or request()'s error. */
static int slabtop_once(long pid, int lines)
{
	char *info, *mem;
	int rc = request(pid, "read /proc/slabinfo\n", &info);

	if (rc)
		return rc;
	rc = request(pid, "read /proc/meminfo\n", &mem);
	if (rc) {
		free(info);
		return rc;
	}
	size_t n = 0, cap = 64;
	struct cache_line *c = malloc(cap * sizeof(*c));
	unsigned long long total = 0, active_total = 0;
	for (char *l = strtok(info, "\n"); l && c; l = strtok(NULL, "\n")) {
		struct cache_line x;
		unsigned long sh;
		if (l[0] == '#' || !strncmp(l, "slabinfo", 8))
			continue;
		if (sscanf(l, "%63s %lu %lu %lu %lu %lu : tunables %*u %*u %*u : slabdata %lu %lu %lu", x.name,
			   &x.active, &x.objs, &x.objsize, &x.per_slab, &x.pages_per_slab, &sh, &x.slabs, &sh) != 9)
			continue;
		x.bytes = (unsigned long long)x.slabs * x.pages_per_slab * 4096;
		total += x.bytes;
		active_total += (unsigned long long)x.active * x.objsize;
		if (n == cap) {
			struct cache_line *bigger = realloc(c, (cap *= 2) * sizeof(*c));
			if (!bigger)
				break;
			c = bigger;
		}
		c[n++] = x;
	}
	if (!c) {
		free(info);
		free(mem);
		return 2;
	}
	qsort(c, n, sizeof(*c), by_bytes);
	printf(" Caches: %zu   Slab memory: %.1f MiB   Objects' bytes: %.1f MiB (%.0f%%)\n", n,
	       total / 1048576.0, active_total / 1048576.0, total ? 100.0 * active_total / total : 0.0);
	printf(" MemTotal %lu kB   MemFree %lu kB   Slab %lu kB   SUnreclaim %lu kB\n\n",
	       meminfo_kb(mem, "MemTotal:"), meminfo_kb(mem, "MemFree:"), meminfo_kb(mem, "Slab:"),
	       meminfo_kb(mem, "SUnreclaim:"));
	printf("%9s %9s %4s %8s %7s %8s %11s %s\n", "OBJS", "ACTIVE", "USE", "OBJ SIZE", "SLABS", "OBJ/SLAB",
	       "CACHE SIZE", "NAME");
	for (size_t i = 0; i < n && (int)i < lines; i++)
		printf("%9lu %9lu %3lu%% %7.2fK %7lu %8lu %10lluK %s\n", c[i].objs, c[i].active,
		       c[i].objs ? 100 * c[i].active / c[i].objs : 0, c[i].objsize / 1024.0, c[i].slabs,
		       c[i].per_slab, c[i].bytes / 1024, c[i].name);
	free(c);
	free(info);
	free(mem);
	return 0;
}

static int cmd_slabtop(long pid, int argc, char **argv)
{
	double secs = 0;
	long count = 1;
	int lines = 20, opt;

	optind = 1;
	while ((opt = getopt(argc, argv, "d:n:l:")) != -1) {
		switch (opt) {
		case 'd': secs = atof(optarg); count = 0; break;
		case 'n': count = atol(optarg); break;
		case 'l': lines = atoi(optarg); break;
		default: return usage();
		}
	}
	if (optind != argc || secs < 0 || lines < 1)
		return usage();
	bool tty = isatty(1);
	for (long i = 0; !count || i < count; i++) {
		if (i) {
			usleep((useconds_t)(secs * 1e6));
			if (tty)
				fputs("\033[H\033[J", stdout);
			else
				putchar('\n');
		}
		int rc = slabtop_once(pid, lines);
		fflush(stdout);
		if (rc)
			return rc;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "list"))
		return cmd_list();
	if (argc < 3)
		return usage();
	char *end;
	long pid = strtol(argv[1], &end, 10);
	if (*end || pid <= 0)
		return usage();
	const char *cmd = argv[2];
	if (!strcmp(cmd, "cat") && argc >= 4) {
		int status = 0;
		for (int i = 3; i < argc; i++) {
			char req[4200], *out;
			if (snprintf(req, sizeof(req), "read %s\n", argv[i]) >= (int)sizeof(req))
				return usage();
			int rc = request(pid, req, &out);
			if (rc == 2)
				return 2;
			if (rc) {
				status = 1;
				continue;
			}
			fputs(out, stdout);
			free(out);
		}
		return status;
	}
	if (!strcmp(cmd, "write") && argc == 5) {
		char req[4200], *out;
		if (snprintf(req, sizeof(req), "write %s %s\n", argv[3], argv[4]) >= (int)sizeof(req) ||
		    strchr(argv[4], '\n'))
			return usage();
		int rc = request(pid, req, &out);
		if (!rc)
			free(out);
		return rc;
	}
	if (!strcmp(cmd, "slabtop"))
		return cmd_slabtop(pid, argc - 2, argv + 2);
	return usage();
}
