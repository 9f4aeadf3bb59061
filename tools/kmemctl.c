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
 *                                      them: once, or every SECS seconds (until
 *                                      interrupted, or COUNT times)
 *
 * Exit status: 0, 1 if the program answered with an error (said on
 * stderr), 2 for bad usage or no such program.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
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

static void socket_dir(char *buf, size_t size)
{
	snprintf(buf, size, "/tmp/kmem-%u", (unsigned int)getuid());
}

static void socket_path(char *buf, size_t size, long pid)
{
	snprintf(buf, size, "/tmp/kmem-%u/%ld.sock", (unsigned int)getuid(), pid);
}

/*
 * Is /tmp/kmem-<uid> the user's own directory, closed to others (not a
 * symlink, not another user's)?  Else another user could answer for the
 * program, or have kmemctl list remove their files.
 */
static bool dir_trusted(void)
{
	char dir[64];
	struct stat st;

	socket_dir(dir, sizeof(dir));
	if (lstat(dir, &st))
		return false;
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
		fprintf(stderr, "kmemctl: %s is not a directory of this user's closed to others: not used\n", dir);
		return false;
	}
	return true;
}

/* Connected to @path, and the process there is this user's (or root's); -1 if not. */
static int connect_to(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 5 };
	struct ucred cred;
	socklen_t clen = sizeof(cred);

	if (strlen(path) >= sizeof(addr.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(addr.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* Before the connect: a stopped program's full backlog makes it wait (EAGAIN after 5 s). */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		close(fd);
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || (cred.uid != getuid() && cred.uid != 0)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	/* A program that accepts and never answers (a stopped one) does not hang us. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Answered errors are the caller's to report (a file it can do without). */
static bool quiet_errors;

/*
 * One request to @pid about @file; the answer's body in *@out (malloc'd,
 * NUL-terminated).  0, 1 if the program answered with an error (printed
 * unless quiet_errors), 2 if it cannot be reached or its answer is cut
 * short (printed).
 */
static int request(long pid, const char *file, const char *req, char **out)
{
	char path[128];

	if (!dir_trusted()) {
		fprintf(stderr, "kmemctl: %ld: not serving (is it running with KMEM_CMDLINE=kmem.live=1?)\n", pid);
		return 2;
	}
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
		/*
		 * Done once the header and its <length> bytes are in: a fork's
		 * child of the program may hold a copy of the connection, so
		 * the end of file can come late.
		 */
		buf[n + (size_t)r] = '\0';
		char *nl = strchr(buf, '\n');
		unsigned long total;
		if (nl && !strncmp(buf, "ok ", 3) && sscanf(buf + 3, "%lu", &total) == 1 &&
		    n + (size_t)r >= (size_t)(nl + 1 - buf) + total) {
			n += (size_t)r;
			break;
		}
		if (nl && !strncmp(buf, "error ", 6)) {
			n += (size_t)r;
			break;
		}
	}
	close(fd);
	if (!buf) {
		fprintf(stderr, "kmemctl: out of memory\n");
		return 2;
	}
	buf[n] = '\0';
	/* "ok <length>\n" and the file: all of it, or the program went away mid-answer. */
	char *body = strchr(buf, '\n');
	unsigned long want;
	if (!strncmp(buf, "ok ", 3) && body && sscanf(buf + 3, "%lu", &want) == 1) {
		body++;
		if ((size_t)(buf + n - body) != want) {
			fprintf(stderr, "kmemctl: %ld: %s: the answer was cut short (%zu of %lu bytes)\n", pid,
				file, (size_t)(buf + n - body), want);
			free(buf);
			return 2;
		}
		memmove(buf, body, want + 1);
		*out = buf;
		return 0;
	}
	/* "error <errno> <text>\n" */
	char *text = !strncmp(buf, "error ", 6) ? strchr(buf + 6, ' ') : NULL;
	if (!text)
		fprintf(stderr, "kmemctl: %ld: %s: no answer\n", pid, file);
	else if (!quiet_errors)
		fprintf(stderr, "kmemctl: %ld: %s: %s", pid, file, text + 1);
	free(buf);
	return text ? 1 : 2;
}

static int cmd_list(void)
{
	char dir[64];
	socket_dir(dir, sizeof(dir));
	if (!dir_trusted())
		return 0;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	printf("%8s  %s\n", "PID", "COMMAND");
	for (struct dirent *e; (e = readdir(d));) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (pid <= 0 || strcmp(end, ".sock"))
			continue;
		char path[128], comm[64] = "?";
		socket_path(path, sizeof(path), pid);
		int fd = connect_to(path);
		bool stopped = fd < 0 && errno == EAGAIN;
		if (fd < 0 && !stopped) {
			/* Its process is gone (killed, or exec'ed): nobody will answer. */
			if (errno == ECONNREFUSED)
				unlinkat(dfd, e->d_name, 0);
			continue;
		}
		if (fd >= 0)
			close(fd);
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		FILE *f = fopen(path, "r");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		printf("%8ld  %s%s\n", pid, comm, stopped ? " (not answering: stopped?)" : "");
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

/*
 * A cache's slab memory: its sysfs slab_pages (kmem's), not slabtop(1)'s
 * slabs x pagesperslab, which is the cache's order: kmem's malloc caches
 * grow their slabs from the minimum order, so most of a small cache's
 * slabs are smaller (22 caches of one 4-14 KiB block each: 2.8 MiB by
 * that count, 244 kB in /proc/meminfo).  slabtop(1)'s count where the
 * file cannot be read.
 */
static unsigned long long slab_bytes(long pid, const struct cache_line *x)
{
	char path[128], req[160], *text;
	unsigned long long pages = (unsigned long long)x->slabs * x->pages_per_slab;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/slab_pages", x->name);
	snprintf(req, sizeof(req), "read %s\n", path);
	quiet_errors = true;
	if (!request(pid, path, req, &text)) {
		char *end;
		unsigned long long n = strtoull(text, &end, 10);
		if (end != text)
			pages = n;
		free(text);
	}
	quiet_errors = false;
	return pages * 4096;
}

/* One slabtop screen from /proc/slabinfo and /proc/meminfo; 0, or request()'s error. */
static int slabtop_once(long pid, int lines)
{
	char *info, *mem;
	int rc = request(pid, "/proc/slabinfo", "read /proc/slabinfo\n", &info);

	if (rc)
		return rc;
	rc = request(pid, "/proc/meminfo", "read /proc/meminfo\n", &mem);
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
		x.bytes = slab_bytes(pid, &x);
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

/* A whole number or decimal in @s into *@v, within [lo, hi]; false if it is not one. */
static bool parse_num(const char *s, double lo, double hi, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return *s && !*end && !errno && *v >= lo && *v <= hi;
}

static int cmd_slabtop(long pid, int argc, char **argv)
{
	double secs = -1, count = -1, lines = 20;
	int opt;

	optind = 1;
	while ((opt = getopt(argc, argv, "d:n:l:")) != -1) {
		double v;
		switch (opt) {
		case 'd': if (!parse_num(optarg, 0.01, 86400, &v)) return usage(); secs = v; break;
		case 'n': if (!parse_num(optarg, 1, 1e9, &v) || v != (long)v) return usage(); count = v; break;
		case 'l': if (!parse_num(optarg, 1, 100000, &v) || v != (int)v) return usage(); lines = v; break;
		default: return usage();
		}
	}
	if (optind != argc)
		return usage();
	/* Once; with -d until interrupted, or -n times. */
	if (count < 0)
		count = secs < 0 ? 1 : 0;
	if (secs < 0)
		secs = 2;
	bool tty = isatty(1);
	for (long i = 0; !count || i < (long)count; i++) {
		if (i) {
			struct timespec ts = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
			if (tty)
				fputs("\033[H\033[J", stdout);
			else
				putchar('\n');
		}
		int rc = slabtop_once(pid, (int)lines);
		if (fflush(stdout) || ferror(stdout)) {
			perror("kmemctl: stdout");
			return 1;
		}
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
			int rc = request(pid, argv[i], req, &out);
			if (rc == 2)
				return 2;
			if (rc) {
				status = 1;
				continue;
			}
			fputs(out, stdout);
			free(out);
		}
		if (fflush(stdout) || ferror(stdout)) {
			perror("kmemctl: stdout");
			return 1;
		}
		return status;
	}
	if (!strcmp(cmd, "write") && argc == 5) {
		char req[4200], *out;
		if (snprintf(req, sizeof(req), "write %s %s\n", argv[3], argv[4]) >= (int)sizeof(req) ||
		    strchr(argv[4], '\n'))
			return usage();
		int rc = request(pid, argv[3], req, &out);
		if (!rc)
			free(out);
		return rc;
	}
	if (!strcmp(cmd, "slabtop"))
		return cmd_slabtop(pid, argc - 2, argv + 2);
	return usage();
}
