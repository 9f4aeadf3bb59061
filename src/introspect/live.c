// SPDX-License-Identifier: MIT
/*
 * kmem.live=1: the virtual /proc and /sys of a running program, for other
 * processes of its user.  A thread of ours ("kmem-live") serves them on a
 * Unix socket, /tmp/kmem-<uid>/<pid>.sock (the directory the user's own,
 * mode 0700), one request per connection:
 *
 *   "read PATH\n"           "ok <length>\n" and the file (kmem_read()), or
 *   "write PATH VALUE\n"    "ok 0\n" (kmem_write()); either may answer
 *                           "error <errno> <strerror>\n" instead.
 *
 * A connection gets 2 s in all, to send its request and take the answer:
 * a client that stalls cannot hold the server, nor a process that wants to
 * end.  Only processes of the same user connect (the directory's mode, and
 * SO_PEERCRED on each connection, root aside).
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
 * exit (not at exec, nor when the process is killed: kmemctl list, and
 * the next process that starts serving, remove the sockets nobody answers
 * on).  A fork's child does not serve, and closes the descriptor: the
 * parent's socket must refuse connections once the parent is gone.  If
 * the program closes our descriptor (a daemon closing every fd) the
 * server stops, and it never accepts on a descriptor that is no longer
 * its socket (the number may be the program's own listening socket now).
 * Rendering allocates nothing; the reply buffer is a mapping of ours.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdlib.h>
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
#define LIVE_CONN_MS		2000	/* a connection's whole time: request and answer */

static atomic_int live_pid;		/* the process that serves, 0: none */
static int listen_fd = -1;
static atomic_int conn_fd = -1;		/* the connection being served, for a fork's child to close */
static dev_t listen_dev;		/* what listen_fd is: checked before each accept */
static ino_t listen_ino;
static struct sockaddr_un live_addr;
static char *reply;			/* a mapping, grown as files need */
static size_t reply_size;

void kmem_live_socket_path(char *buf, size_t size, unsigned int uid, int pid)
{
	snprintf(buf, size, "/tmp/kmem-%u/%d.sock", uid, pid);
}

/* Wait for @events on @fd until @deadline (os_now_ns()); false if it passed. */
static bool wait_fd(int fd, short events, unsigned long long deadline)
{
	for (;;) {
		unsigned long long now = os_now_ns();
		if (now >= deadline)
			return false;
		struct pollfd p = { .fd = fd, .events = events };
		int r = poll(&p, 1, (int)((deadline - now) / 1000000) + 1);
		if (r > 0)
			return true;
		if (r < 0 && errno != EINTR)
			return false;
	}
}

/* The connection is non-blocking: a client that does not read gets cut off at @deadline. */
static bool send_all(int fd, const char *buf, size_t len, unsigned long long deadline)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
			if (errno == EAGAIN && !wait_fd(fd, POLLOUT, deadline))
				return false;
			continue;
		}
		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

static void send_error(int fd, int err, unsigned long long deadline)
{
	char line[160];

	snprintf(line, sizeof(line), "error %d %s\n", err, strerror(err));
	send_all(fd, line, strlen(line), deadline);
}

static void send_ok(int fd, size_t len, unsigned long long deadline)
{
	char line[48];

	snprintf(line, sizeof(line), "ok %zu\n", len);
	send_all(fd, line, strlen(line), deadline);
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

/* Is the client this process's user (or root)? */
static bool same_user(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) &&
	       (cred.uid == getuid() || cred.uid == 0);
}

static void serve_one(int fd)
{
	unsigned long long deadline = os_now_ns() + LIVE_CONN_MS * 1000000ull;
	char req[LIVE_REQUEST_MAX + 1];
	size_t len = 0;

	if (!same_user(fd)) {
		send_error(fd, EACCES, deadline);
		return;
	}
	while (len < LIVE_REQUEST_MAX && !memchr(req, '\n', len)) {
		ssize_t n = recv(fd, req + len, LIVE_REQUEST_MAX - len, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
			if (errno == EAGAIN && !wait_fd(fd, POLLIN, deadline))
				break;
			continue;
		}
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	char *nl = memchr(req, '\n', len);
	if (!nl) {
		send_error(fd, EINVAL, deadline);
		return;
	}
	*nl = '\0';
	if (!strncmp(req, "read ", 5)) {
		ssize_t n = read_file(req + 5);
		if (n < 0) {
			send_error(fd, (int)-n, deadline);
			return;
		}
		send_ok(fd, (size_t)n, deadline);
		send_all(fd, reply, (size_t)n, deadline);
	} else if (!strncmp(req, "write ", 6)) {
		char *path = req + 6, *value = strchr(path, ' ');
		if (!value) {
			send_error(fd, EINVAL, deadline);
			return;
		}
		*value++ = '\0';
		int rc = kmem_write(path, value);
		if (rc)
			send_error(fd, -rc, deadline);
		else
			send_ok(fd, 0, deadline);
	} else {
		send_error(fd, EINVAL, deadline);
	}
}

/* Is listen_fd still the socket we bound (not closed, not a descriptor of the program's)? */
static bool still_ours(void)
{
	struct stat st;

	return !fstat(listen_fd, &st) && S_ISSOCK(st.st_mode) && st.st_dev == listen_dev &&
	       st.st_ino == listen_ino;
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
		if (r < 0 || (r == 0 && still_ours()))
			continue;
		if ((p.revents & POLLNVAL) || !still_ours()) {
			/*
			 * The program closed our descriptor (a daemon closing
			 * every fd), and its number may be a socket of its own
			 * now, whose connections are not ours to take: stop
			 * serving, and leave that descriptor be.
			 */
			listen_fd = -1;
			break;
		}
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			continue;
		atomic_store(&conn_fd, fd);
		serve_one(fd);
		/* Forgotten before it is closed: a fork's child never closes a number reused since. */
		atomic_store(&conn_fd, -1);
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

/*
 * Remove the sockets of @dir that nobody answers on: those of programs
 * killed, ended by _exit() or exec'ed, as kmemctl list does; and the
 * ".<pid>.tmp" of a program that died between its bind() and rename().  A process
 * started under kmem.live serves, and so does each program it starts.
 */
static void sweep_dead(const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (e->d_name[0] == '.' && (pid = strtol(e->d_name + 1, &end, 10)) > 0 && !strcmp(end, ".tmp")) {
			/* Bound but never renamed: its program died in between. */
			if (kill((pid_t)pid, 0) && errno == ESRCH)
				unlinkat(dfd, e->d_name, 0);
			continue;
		}
		if (pid <= 0 || strcmp(end, ".sock"))
			continue;
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		if ((size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", dir, e->d_name) >= sizeof(a.sun_path))
			continue;
		/* Non-blocking: a stopped program's full backlog must not stop us (EAGAIN: alive). */
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			break;
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) && errno == ECONNREFUSED)
			unlinkat(dfd, e->d_name, 0);
		close(fd);
	}
	closedir(d);
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
	sweep_dead(dir);
	/*
	 * Bound under a temporary name and renamed once listening: a client
	 * (kmemctl list) never finds the name refusing connections, and takes
	 * it for a dead program's.
	 */
	struct sockaddr_un tmp = { .sun_family = AF_UNIX };
	snprintf(tmp.sun_path, sizeof(tmp.sun_path), "%s/.%d.tmp", dir, pid);
	unlink(tmp.sun_path);
	struct stat st;
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&tmp, sizeof(tmp)) || listen(listen_fd, 8) ||
	    chmod(tmp.sun_path, 0600) || rename(tmp.sun_path, live_addr.sun_path) || fstat(listen_fd, &st)) {
		pr_warn("kmem.live: cannot serve on %s: %s\n", live_addr.sun_path, strerror(errno));
		unlink(tmp.sun_path);
		goto fail_close;
	}
	listen_dev = st.st_dev;
	listen_ino = st.st_ino;
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

bool kmem_live_serving(void)
{
	return atomic_load(&live_pid) == os_getpid();
}

void kmem_live_fork_child(void)
{
	if (atomic_load(&live_pid) == os_getpid())
		return;
	/*
	 * The parent's thread is not here: its socket must refuse once the
	 * parent is gone, and a client must not wait on the child's copy of a
	 * connection.  Only if the number is still our socket: the program may
	 * have reused it (closed every fd, opened its own) less than a poll ago.
	 */
	if (listen_fd >= 0 && still_ours())
		close(listen_fd);
	listen_fd = -1;
	int c = atomic_exchange(&conn_fd, -1);
	if (c >= 0)
		close(c);
}

/* The socket goes with the process that made it (not with a fork's child). */
__attribute__((destructor)) static void kmem_live_exit(void)
{
	if (atomic_load(&live_pid) == os_getpid())
		unlink(live_addr.sun_path);
}
