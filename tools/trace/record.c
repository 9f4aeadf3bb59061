// SPDX-License-Identifier: MIT
/*
 * kmem-trace record -o FILE [--children] [--sites] -- PROGRAM ARGS...
 *
 * Writes the header, runs PROGRAM with libkmem-trace-rec.so preloaded in
 * front of whatever LD_PRELOAD already holds (so the allocator given there
 * is the one called and recorded), waits, and appends what the run was
 * (exit status, peak RSS, time) as an info chunk.  Exits with the
 * program's status.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

static int usage(void)
{
	fprintf(stderr, "usage: %s record -o FILE [--children] [--sites] [--buffer KB] -- PROGRAM [ARGS...]\n"
			"  --children  children (fork, fork+exec) record to FILE.<pid> too\n"
			"  --sites     record each call's return address\n", prog);
	return 2;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "children", no_argument, NULL, 'c' },
		{ "sites", no_argument, NULL, 's' },
		{ "buffer", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *out = NULL, *buf_kb = NULL;
	bool children = false, sites = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:csb:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'c': children = true; break;
		case 's': sites = true; break;
		case 'b': buf_kb = optarg; break;
		default: return usage();
		}
	}
	if (!out || optind >= argc)
		return usage();
	if (buf_kb && (atoi(buf_kb) < 4 || atoi(buf_kb) > 65536)) {
		fprintf(stderr, "%s: --buffer %s: between 4 and 65536 KiB\n", prog, buf_kb);
		return 2;
	}
	char rec[PATH_MAX], abs_out[PATH_MAX];
	if (!own_lib("libkmem-trace-rec.so", rec, sizeof(rec))) {
		fprintf(stderr, "%s: the recorder libkmem-trace-rec.so is not next to this program (../lib/)\n", prog);
		return 1;
	}
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, out, strerror(errno));
		return 1;
	}
	uint8_t head[TRACE_HEADER_SIZE];
	trace_header(head, TRACE_KIND_MALLOC);
	if (write(fd, head, sizeof(head)) != (ssize_t)sizeof(head)) {
		fprintf(stderr, "%s: %s: write error\n", prog, out);
		close(fd);
		return 1;
	}
	close(fd);
	if (!realpath(out, abs_out)) {
		fprintf(stderr, "%s: %s: %s\n", prog, out, strerror(errno));
		return 1;
	}

	/* The exec's failure comes back through a close-on-exec pipe. */
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC)) {
		perror(prog);
		return 1;
	}
	double t0 = mono();
	pid_t pid = fork();
	if (pid < 0) {
		perror(prog);
		return 1;
	}
	if (pid == 0) {
		char pre[2 * PATH_MAX + 2], pidbuf[32];
		const char *old = getenv("LD_PRELOAD");
		snprintf(pre, sizeof(pre), "%s%s%s", rec, old && *old ? ":" : "", old && *old ? old : "");
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)getpid());
		setenv("LD_PRELOAD", pre, 1);
		setenv("KMEM_TRACE_OUT", abs_out, 1);
		setenv("KMEM_TRACE_PID", pidbuf, 1);
		setenv("KMEM_TRACE_CHILDREN", children ? "1" : "0", 1);
		setenv("KMEM_TRACE_SITES", sites ? "1" : "0", 1);
		if (buf_kb)
			setenv("KMEM_TRACE_BUF_KB", buf_kb, 1);
		close(pfd[0]);
		execvp(argv[optind], argv + optind);
		int e = errno;
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pfd[1]);
	int e = 0;
	ssize_t got = read(pfd[0], &e, sizeof(e));
	close(pfd[0]);
	int status;
	struct rusage ru;
	signal(SIGINT, SIG_IGN);	/* the program gets ^C; we write the end */
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	double secs = mono() - t0;
	if (got == (ssize_t)sizeof(e)) {
		fprintf(stderr, "%s: cannot run %s: %s\n", prog, argv[optind], strerror(e));
		unlink(out);
		return 127;
	}

	char info[1024];
	int n = snprintf(info, sizeof(info),
			 "program=%s\nexit_status=%d\nsignal=%d\npeak_rss_kb=%ld\nwall_seconds=%.6f\n",
			 argv[optind], WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			 WIFSIGNALED(status) ? WTERMSIG(status) : 0, ru.ru_maxrss, secs);
	struct trace_writer w = { 0 };
	w.f = fopen(out, "ab");
	w.path = out;
	if (w.f) {
		tw_chunk(&w, CHUNK_INFO, info, (size_t)n);
		if (fclose(w.f) || w.error)
			fprintf(stderr, "%s: %s: write error\n", prog, out);
	}
	struct stat st;
	if (!stat(out, &st))
		fprintf(stderr, "%s: recorded %s: %lld bytes, %.2f s, peak RSS %ld KiB%s\n", prog,
			out, (long long)st.st_size, secs, ru.ru_maxrss,
			WIFSIGNALED(status) ? " (the program was killed by a signal)" : "");
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
