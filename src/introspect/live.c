// SPDX-License-Identifier: MIT
/*
 * kmem.live=1: the virtual /proc and /sys of a running program, for other
 * processes of its user.  A thread of ours ("kmem-live") serves them on a
 * Unix socket, /tmp/kmem-<uid>/<pid>.sock (the directory the user's own,
 * mode 0700), one request per connection:
 *
 *   "read PATH\n"           "ok\n" and the file (kmem_read()), or
 *   "write PATH VALUE\n"    "ok\n" (kmem_write()); either may answer
 *                           "error <errno> <strerror>\n" instead.
 *
 * tools/kmemctl.c is the client: kmemctl PID cat /proc/slabinfo, kmemctl
 * PID slabtop, kmemctl PID write /sys/kernel/slab/kmalloc-64/shrink 1.
 * The kernel's files are there for the asking at any time; a program's
 * need this, or kmem.stats_at_exit's report at its end.
 *
 * Opt-in, because it is a thread in the program: one that calls
 * unshare(CLONE_NEWUSER) needs to be single-threaded.  When the server
 * finds itself the last thread (the main thread called pthread_exit()),
 * it closes and goes, so that the process ends.  The socket is removed at
 * exit (not at exec, nor when the process is killed: kmemctl list removes
 * the sockets nobody answers on).  A fork's child does not serve: the
 * parent's thread is not in it, and its exit leaves the parent's socket.
 * Rendering allocates nothing; the reply buffer is a mapping of ours.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <kmem/kmemfs.h>

#include "core/cmdline.h"
#include "core/printk.h"
#include "introspect/live.h"
#include "platform/os.h"

static bool kmem_live;
kmem_param("kmem.live", kmem_live, bool,
	   "serve /proc and /sys to other processes on /tmp/kmem-<uid>/<pid>.sock (tools/kmemctl)");

#define LIVE_REQUEST_MAX	4096
#define LIVE_POLL_MS		500

static atomic_int live_pid;		/* the process that serves, 0: none */
static int listen_fd = -1;
static struct sockaddr_un live_addr;
static char *reply;			/* a mapping, grown as files need */
static size_t reply_size;

void kmem_live_socket_path(char *buf, size_t size, unsigned int uid, int pid)
{
	snprintf(buf, size, "/tmp/kmem-%u/%d.sock", uid, pid);
}

static void send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static void send_error(int fd, int err)
{
	char line[160];

	snprintf(line, sizeof(line), "error %d %s\n", err, strerror(err));
	send_all(fd, line, strlen(line));
}

/* kmem_read() into the reply mapping, grown until the file fits. */
static ssize_t read_file(const char *path)
{
	for (;;) {
		ssize_t n = reply ? kmem_read(path, reply, reply_size) : 0;
		if (n < 0 || (reply && (size_t)n < reply_size))
			return n;
		size_t want = ((size_t)n + 1 + 65535) & ~(size_t)65535;
		if (want < 64 * 1024)
			want = 64 * 1024;
		char *bigger = os_map(want);
		if (!bigger)
			return -ENOMEM;
		if (reply)
			os_unreserve(reply, reply_size);
		reply = bigger;
		reply_size = want;
	}
}

static void serve_one(int fd)
{
	char req[LIVE_REQUEST_MAX + 1];
	size_t len = 0;
	struct timeval tv = { .tv_sec = 1 };

	/* A client that says nothing does not hold the server up for long. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (len < LIVE_REQUEST_MAX && !memchr(req, '\n', len)) {
		ssize_t n = recv(fd, req + len, LIVE_REQUEST_MAX - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	char *nl = memchr(req, '\n', len);
	if (!nl) {
		send_error(fd, EINVAL);
		return;
	}
	*nl = '\0';
	if (!strncmp(req, "read ", 5)) {
		ssize_t n = read_file(req + 5);
		if (n < 0) {
			send_error(fd, (int)-n);
			return;
		}
		send_all(fd, "ok\n", 3);
		send_all(fd, reply, (size_t)n);
	} else if (!strncmp(req, "write ", 6)) {
		char *path = req + 6, *value = strchr(path, ' ');
		if (!value) {
			send_error(fd, EINVAL);
			return;
		}
		*value++ = '\0';
		int rc = kmem_write(path, value);
		if (rc)
			send_error(fd, -rc);
		else
			send_all(fd, "ok\n", 3);
	} else {
		send_error(fd, EINVAL);
	}
}

static void live_close(void)
{
	if (listen_fd >= 0) {
		close(listen_fd);
		listen_fd = -1;
	}
	unlink(live_addr.sun_path);
	atomic_store(&live_pid, 0);
}

static void *live_serve(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p = { .fd = listen_fd, .events = POLLIN };
		int r = poll(&p, 1, LIVE_POLL_MS);
		/* The last thread: the main thread called pthread_exit(), the process must end. */
		if (os_nr_threads() == 1)
			break;
		if (r <= 0)
			continue;
		int fd = (p.revents & POLLNVAL) ? -1 : accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if ((p.revents & POLLNVAL) || errno == EBADF || errno == ENOTSOCK || errno == EINVAL) {
				/*
				 * The program closed our descriptor (a daemon closing
				 * every fd), and may have its number for a file of its
				 * own now: stop serving, and leave that descriptor be.
				 */
				listen_fd = -1;
				break;
			}
			continue;
		}
		serve_one(fd);
		close(fd);
	}
	live_close();
	return NULL;
}

/* /tmp/kmem-<uid>, ours and closed to others; false (said why) if it cannot be. */
static bool socket_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		pr_warn("kmem.live: cannot create %s: %s\n", dir, strerror(errno));
		return false;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
		pr_warn("kmem.live: %s is not a directory of this user's, closed to others: not serving\n",
			dir);
		return false;
	}
	return true;
}

/* Is anybody answering on @addr?  (A socket left by a killed process is not.) */
static bool socket_alive(const struct sockaddr_un *addr)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return false;
	bool alive = !connect(fd, (const struct sockaddr *)addr, sizeof(*addr));
	close(fd);
	return alive;
}

void kmem_live_start(void)
{
	int expected = 0, pid = os_getpid();
	char dir[64];

	if (!__atomic_load_n(&kmem_live, __ATOMIC_RELAXED) ||
	    !atomic_compare_exchange_strong(&live_pid, &expected, pid))
		return;
	snprintf(dir, sizeof(dir), "/tmp/kmem-%u", (unsigned int)getuid());
	live_addr.sun_family = AF_UNIX;
	kmem_live_socket_path(live_addr.sun_path, sizeof(live_addr.sun_path), (unsigned int)getuid(), pid);
	if (!socket_dir(dir))
		goto fail;
	/* A socket of a killed process that had our pid: nobody answers, it goes. */
	if (!socket_alive(&live_addr))
		unlink(live_addr.sun_path);
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&live_addr, sizeof(live_addr)) ||
	    listen(listen_fd, 8)) {
		pr_warn("kmem.live: cannot serve on %s: %s\n", live_addr.sun_path, strerror(errno));
		goto fail_close;
	}
	chmod(live_addr.sun_path, 0600);
	int rc = os_thread_start(live_serve, NULL, "kmem-live");
	if (rc) {
		pr_warn("kmem.live: cannot start its thread: %s\n", strerror(-rc));
		unlink(live_addr.sun_path);
		goto fail_close;
	}
	return;
fail_close:
	if (listen_fd >= 0)
		close(listen_fd);
	listen_fd = -1;
fail:
	atomic_store(&live_pid, 0);
}

/* The socket goes with the process that made it (not with a fork's child). */
__attribute__((destructor)) static void kmem_live_exit(void)
{
	if (atomic_load(&live_pid) == os_getpid())
		unlink(live_addr.sun_path);
}
