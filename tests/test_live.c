// SPDX-License-Identifier: MIT
/*
 * kmem.live=1 (src/introspect/live.c): /proc and /sys served on
 * /tmp/kmem-<uid>/<pid>.sock.  This process boots with it and talks to its
 * own server as kmemctl would: reads (a file, a directory, one bigger than
 * the first reply buffer), writes, every kind of bad request, and clients
 * in several threads while others allocate.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kmem.h>

#include "introspect/live.h"

#include "lib/kt_util.h"
#include "ktest.h"

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void boot(void)
{
	int rc = kmem_init("mem=64M nr_cpus=2 kmem.live=1");

	if (rc && rc != -EBUSY) {
		fprintf(stderr, "kmem_init = %d\n", rc);
		abort();
	}
}

static int connect_self(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	kmem_live_socket_path(addr.sun_path, sizeof(addr.sun_path), (unsigned int)getuid(), getpid());
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Send @req (as is) and read the whole answer; malloc'd, NULL if no connection. */
static char *ask(const char *req, size_t len)
{
	int fd = connect_self();

	if (fd < 0)
		return NULL;
	if (len && send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len) {
		close(fd);
		return NULL;
	}
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	for (ssize_t r; buf && (r = recv(fd, buf + n, cap - n - 1, 0)) > 0;) {
		n += (size_t)r;
		if (n + 1 == cap)
			buf = realloc(buf, cap *= 2);
	}
	close(fd);
	if (buf)
		buf[n] = '\0';
	return buf;
}

static char *ask_str(const char *req)
{
	return ask(req, strlen(req));
}

/* The file in an answer "ok <length>\n<file>", if the length is right; else NULL. */
static const char *body(const char *a)
{
	unsigned long len;
	const char *nl = a ? strchr(a, '\n') : NULL;

	if (!nl || strncmp(a, "ok ", 3) || sscanf(a + 3, "%lu", &len) != 1 || strlen(nl + 1) != len)
		return NULL;
	return nl + 1;
}

KTEST(socket_of_the_user_closed_to_others)
{
	boot();
	char path[108], dir[64];
	struct stat st;

	kmem_live_socket_path(path, sizeof(path), (unsigned int)getuid(), getpid());
	snprintf(dir, sizeof(dir), "/tmp/kmem-%u", (unsigned int)getuid());
	KT_ASSERT(!stat(dir, &st));
	KT_ASSERT(S_ISDIR(st.st_mode) && !(st.st_mode & 077) && st.st_uid == getuid());
	KT_ASSERT(!stat(path, &st));
	KT_ASSERT(S_ISSOCK(st.st_mode));
	KT_ASSERT_EQ(st.st_mode & 0777, 0600);
}

KTEST(reads_what_kmem_read_reads)
{
	boot();
	static char mine[1 << 16];
	char *a = ask_str("read /proc/buddyinfo\n");
	KT_ASSERT(a != NULL);
	ssize_t n = kmem_read("/proc/buddyinfo", mine, sizeof(mine));
	KT_ASSERT(n > 0);
	KT_ASSERT(body(a) != NULL);
	KT_ASSERT_STREQ(body(a), mine);
	free(a);

	a = ask_str("read /sys/kernel/slab/\n");
	KT_ASSERT(body(a) != NULL);
	KT_ASSERT_CONTAINS(a, "\nkmalloc-64\n");
	free(a);

	a = ask_str("read /sys/kernel/slab/kmalloc-64/object_size\n");
	KT_ASSERT(a != NULL);
	KT_ASSERT_STREQ(a, "ok 3\n64\n");
	free(a);
}

/* A file bigger than the first reply buffer (64 KiB): the server's grows. */
KTEST(a_big_file_whole)
{
	boot();
	enum { N = 1000 };
	static struct kmem_cache *c[N];
	char name[32];

	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "live_test_cache_%04d", i);
		c[i] = kmem_cache_create(name, 64 + (i % 64) * 8, 0, SLAB_NO_MERGE, NULL);
		KT_ASSERT(c[i] != NULL);
	}
	char *a = ask_str("read /proc/slabinfo\n");
	KT_ASSERT(a != NULL);
	size_t len = strlen(a);
	KT_ASSERT(len > 96 * 1024);
	KT_ASSERT(body(a) != NULL);
	KT_ASSERT(!strncmp(body(a), "slabinfo - version: 2.1\n", 24));
	KT_ASSERT_CONTAINS(a, "\nlive_test_cache_0000 ");
	KT_ASSERT_CONTAINS(a, "\nlive_test_cache_0999 ");
	KT_ASSERT(a[len - 1] == '\n');
	free(a);
	for (int i = 0; i < N; i++)
		kmem_cache_destroy(c[i]);
}

KTEST(writes_what_kmem_write_writes)
{
	boot();
	char *a = ask_str("write /sys/kernel/slab/kmalloc-64/min_partial 7\n");
	KT_ASSERT(a != NULL);
	KT_ASSERT_STREQ(a, "ok 0\n");
	free(a);
	KT_ASSERT_STREQ(kt_slab_attr("kmalloc-64", "min_partial"), "7\n");
	a = ask_str("write /sys/kernel/slab/kmalloc-64/min_partial 5\n");
	KT_ASSERT_STREQ(a, "ok 0\n");
	free(a);
	/* A value with spaces is passed whole. */
	a = ask_str("write /sys/kernel/slab/kmalloc-64/min_partial 1 2\n");
	KT_ASSERT(a != NULL);
	KT_ASSERT(!strncmp(a, "error 22 ", 9));
	free(a);
}

KTEST(bad_requests_get_errors)
{
	boot();
	static const struct { const char *req; const char *want; } cases[] = {
		{ "read /proc/nonexistent\n", "error 2 " },
		{ "write /proc/slabinfo 1\n", "error 13 " },
		{ "write /sys/kernel/slab/kmalloc-64/min_partial\n", "error 22 " },
		{ "write /sys/kernel/slab/kmalloc-64/min_partial x\n", "error 22 " },
		{ "delete /proc/slabinfo\n", "error 22 " },
		{ "\n", "error 22 " },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *a = ask_str(cases[i].req);
		KT_ASSERT(a != NULL);
		if (strncmp(a, cases[i].want, strlen(cases[i].want)))
			KT_FAIL("request \"%s\": answer \"%s\", want \"%s...\"", cases[i].req, a, cases[i].want);
		free(a);
	}
	/* A request with no end of line: answered once the client stops sending. */
	int fd = connect_self();
	KT_ASSERT(fd >= 0);
	KT_ASSERT(send(fd, "read /proc/slabinfo", 19, MSG_NOSIGNAL) == 19);
	shutdown(fd, SHUT_WR);
	char buf[64] = "";
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	KT_ASSERT(n > 0);
	KT_ASSERT(!strncmp(buf, "error 22 ", 9));
	/* A request longer than the server reads: refused, and the server goes on. */
	static char big[8192];
	memset(big, 'x', sizeof(big));
	memcpy(big, "read /", 6);
	char *a = ask(big, sizeof(big));
	KT_ASSERT(a != NULL);
	KT_ASSERT(!strncmp(a, "error 22 ", 9));
	free(a);
	a = ask_str("read /sys/kernel/slab/kmalloc-8/object_size\n");
	KT_ASSERT_STREQ(a, "ok 2\n8\n");
	free(a);
}

/* A client that connects and says nothing holds the server up for a second, not for ever. */
KTEST(a_silent_client_times_out)
{
	boot();
	int fd = connect_self();
	KT_ASSERT(fd >= 0);
	char *a = ask_str("read /sys/kernel/slab/kmalloc-16/object_size\n");
	KT_ASSERT_STREQ(a, "ok 3\n16\n");
	free(a);
	close(fd);
}

static void *client(void *arg)
{
	long bad = 0;

	(void)arg;
	for (int i = 0; i < 40; i++) {
		char *a = ask_str(i % 2 ? "read /proc/slabinfo\n" : "read /sys/kernel/slab/kmalloc-256/slabs\n");
		if (!body(a))
			bad++;
		free(a);
	}
	return (void *)bad;
}

static void *churn(void *arg)
{
	void *v[256] = { 0 };

	(void)arg;
	for (int i = 0; i < 200000; i++) {
		int k = i % 256;
		kfree(v[k]);
		v[k] = kmalloc(16 + (size_t)(i % 61) * 8, GFP_KERNEL);
	}
	for (int k = 0; k < 256; k++)
		kfree(v[k]);
	return NULL;
}

KTEST(clients_while_threads_allocate)
{
	boot();
	pthread_t t[4];

	KT_ASSERT(!pthread_create(&t[0], NULL, client, NULL));
	KT_ASSERT(!pthread_create(&t[1], NULL, client, NULL));
	KT_ASSERT(!pthread_create(&t[2], NULL, churn, NULL));
	KT_ASSERT(!pthread_create(&t[3], NULL, churn, NULL));
	for (int i = 0; i < 4; i++) {
		void *bad;
		pthread_join(t[i], &bad);
		if (i < 2)
			KT_ASSERT_EQ((long)bad, 0);
	}
}

/* A client that trickles its request: cut off after the connection's 2 s, not held for its 3. */
KTEST(a_trickling_client_is_cut_off)
{
	boot();
	int fd = connect_self();
	KT_ASSERT(fd >= 0);
	unsigned long long t0 = now_ns();
	char buf[64] = "";
	ssize_t n = 0;
	for (int i = 0; i < 10; i++) {
		if (send(fd, "r", 1, MSG_NOSIGNAL) != 1)
			break;	/* the server closed: cut off */
		usleep(300000);
		if ((n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0)
			break;	/* answered */
	}
	if (n <= 0)
		n = recv(fd, buf, sizeof(buf) - 1, 0);
	unsigned long long ms = (now_ns() - t0) / 1000000;
	close(fd);
	KT_ASSERT(n > 0);
	KT_ASSERT(!strncmp(buf, "error 22 ", 9));
	KT_ASSERT(ms >= 1900 && ms < 3500);
	char *a = ask_str("read /sys/kernel/slab/kmalloc-32/object_size\n");
	KT_ASSERT_STREQ(a, "ok 3\n32\n");
	free(a);
}

/* Our listening descriptor: the AF_UNIX socket bound to the name it had before its rename. */
static int find_listen_fd(pid_t server)
{
	char path[108];

	snprintf(path, sizeof(path), "/tmp/kmem-%u/.%d.tmp", (unsigned int)getuid(), server);
	for (int fd = 3; fd < 4096; fd++) {
		struct sockaddr_un a;
		socklen_t len = sizeof(a);
		if (!getsockname(fd, (struct sockaddr *)&a, &len) && a.sun_family == AF_UNIX &&
		    !strcmp(a.sun_path, path))
			return fd;
	}
	return -1;
}

/* A fork's child closes the parent's socket: once the parent is gone it must refuse. */
KTEST(a_fork_child_does_not_keep_the_socket)
{
	boot();
	pid_t parent = getpid();
	KT_ASSERT(find_listen_fd(parent) >= 0);
	pid_t pid = fork();
	if (pid == 0)
		_exit(find_listen_fd(parent) < 0 ? 0 : 1);
	int status;
	KT_ASSERT(waitpid(pid, &status, 0) == pid);
	KT_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char *a = ask_str("read /sys/kernel/slab/kmalloc-8/object_size\n");
	KT_ASSERT_STREQ(a, "ok 2\n8\n");
	free(a);
}

/*
 * Last (cases run in order): a daemon closes every descriptor and its own
 * listening socket takes our number.  Its connections are its own: the
 * server stops, takes none, and removes its socket.
 */
KTEST(a_program_socket_on_our_number_is_left_alone)
{
	boot();
	KT_ASSERT(kmem_live_serving());
	int lfd = find_listen_fd(getpid());
	KT_ASSERT(lfd >= 0);
	/* The program's own listening socket, on the same number. */
	int mine = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "/tmp/kmem-test-live-%d.sock", getpid());
	unlink(a.sun_path);
	KT_ASSERT(mine >= 0 && !bind(mine, (struct sockaddr *)&a, sizeof(a)) && !listen(mine, 8));
	KT_ASSERT(dup2(mine, lfd) == lfd);
	close(mine);
	/* Its clients connect; give the server a few of its polls. */
	int c[3];
	for (int i = 0; i < 3; i++) {
		c[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		KT_ASSERT(!connect(c[i], (struct sockaddr *)&a, sizeof(a)));
		KT_ASSERT(send(c[i], "read /proc/meminfo\n", 19, MSG_NOSIGNAL) == 19);
	}
	/* The server sees the change within a poll or two and stops (and then touches lfd no more). */
	for (int i = 0; i < 500 && kmem_live_serving(); i++)
		usleep(10000);
	KT_ASSERT(!kmem_live_serving());
	/* All three are still waiting for the program, unanswered. */
	for (int i = 0; i < 3; i++) {
		char r[8];
		KT_ASSERT(recv(c[i], r, sizeof(r), MSG_DONTWAIT) < 0 && errno == EAGAIN);
		int got = accept(lfd, NULL, NULL);
		KT_ASSERT(got >= 0);
		char buf[8];
		KT_ASSERT(recv(got, buf, sizeof(buf), MSG_DONTWAIT) > 0);
		close(got);
		close(c[i]);
	}
	/* And the server has gone, its socket with it. */
	char path[108];
	kmem_live_socket_path(path, sizeof(path), (unsigned int)getuid(), getpid());
	KT_ASSERT(access(path, F_OK) != 0);
	close(lfd);
	unlink(a.sun_path);
}

/*
 * ".<pid>.tmp": a socket bound, not yet renamed to <pid>.sock.  Made in
 * setup, before the server's first start sweeps the directory: a dead
 * program's goes, a live one's (our parent's number) stays.
 */
static char dead_tmp[108], live_tmp[108];

static void make_tmp(char *path, size_t size, long pid)
{
	char dir[64];

	snprintf(dir, sizeof(dir), "/tmp/kmem-%u", (unsigned int)getuid());
	(void)mkdir(dir, 0700);
	snprintf(path, size, "%s/.%ld.tmp", dir, pid);
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
}

static void make_tmps(void)
{
	pid_t child = fork();

	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	make_tmp(dead_tmp, sizeof(dead_tmp), (long)child);
	make_tmp(live_tmp, sizeof(live_tmp), (long)getppid());
}

KTEST(a_dead_programs_half_made_socket_is_removed)
{
	boot();
	KT_EXPECT(access(dead_tmp, F_OK) != 0);
	KT_EXPECT(access(live_tmp, F_OK) == 0);
	unlink(live_tmp);
}

KTEST_MAIN(make_tmps())
