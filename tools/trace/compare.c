// SPDX-License-Identifier: MIT
/*
 * kmem-trace compare TRACE --on A,B,... [--png FILE] [--points N] [--threads]
 *
 * Runs `kmem-trace replay` once per allocator or setting, each in its own
 * process, and prints one table: ops, ns/op, peak and final memory, the
 * overhead over the live bytes, and each one's ratio to the best; then
 * plots memory against operations (gnuplot), one line each.  An allocator
 * that cannot run (a peer not installed, a kmem setting that does not boot)
 * is a row saying why, not a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace.h"

struct row {
	char *label;
	bool ok;
	char why[256];
	unsigned long long ops;
	double ns_op;
	long live_peak, mem_peak, mem_end, kmem_peak;
	double unus_mean, unus_end;
	char curve[PATH_MAX];
};

static int usage(void)
{
	fprintf(stderr, "usage: %s compare TRACE --on A,B,... [--png FILE] [--points N] [--threads]\n"
			"  A, B: slub slab slob glibc jemalloc mimalloc tcmalloc, NAME:PARAMETERS\n"
			"        (slub:slub_min_order=1), or a kmem boot parameter (slub with it)\n", prog);
	return 2;
}

static double kv_num(const char *line, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), " %s=", key);
	const char *p = strstr(line, pat);
	return p ? strtod(p + strlen(pat), NULL) : 0;
}

static void run_one(struct row *r, const char *trace, const char *tmpdir, int idx, long points,
		    bool threads)
{
	char exe[PATH_MAX], out[PATH_MAX], err[PATH_MAX], pts[32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0) {
		snprintf(r->why, sizeof(r->why), "cannot find kmem-trace itself");
		return;
	}
	exe[n] = 0;
	snprintf(out, sizeof(out), "%s/%d.out", tmpdir, idx);
	snprintf(err, sizeof(err), "%s/%d.err", tmpdir, idx);
	snprintf(r->curve, sizeof(r->curve), "%s/%d.curve", tmpdir, idx);
	snprintf(pts, sizeof(pts), "%ld", points);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (o < 0 || e < 0)
			_exit(1);
		dup2(o, 1);
		dup2(e, 2);
		unsetenv("KMEM_TRACE_REPLAY_CHILD");
		char *args[] = { exe, "replay", (char *)trace, "--on", r->label, "--curve", r->curve,
				 "--points", pts, threads ? "--threads" : NULL, NULL };
		execv(exe, args);
		_exit(127);
	}
	int st = 0;
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	char line[2048];
	FILE *f = fopen(out, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "RESULT ", 7))
			continue;
		r->ok = true;
		r->ops = (unsigned long long)kv_num(line, "ops");
		r->ns_op = kv_num(line, "ns_op");
		r->live_peak = (long)kv_num(line, "live_peak_kb");
		r->mem_peak = (long)kv_num(line, "mem_peak_kb");
		r->mem_end = (long)kv_num(line, "mem_end_kb");
		r->kmem_peak = (long)kv_num(line, "kmem_peak_kb");
		r->unus_mean = kv_num(line, "unusable9_mean");
		r->unus_end = kv_num(line, "unusable9_end");
	}
	if (f)
		fclose(f);
	if (r->ok && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return;
	r->ok = false;
	/* The replay's own line says why: keep it without our prefix. */
	f = fopen(err, "r");
	line[0] = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, prog, strlen(prog)))
			break;
	if (f)
		fclose(f);
	line[strcspn(line, "\n")] = 0;
	const char *m = line;
	if (!strncmp(m, prog, strlen(prog)) && m[strlen(prog)] == ':')
		m += strlen(prog) + 2;
	if (*m)
		snprintf(r->why, sizeof(r->why), "%.250s", m);
	else if (WIFSIGNALED(st))
		snprintf(r->why, sizeof(r->why), "killed by signal %d", WTERMSIG(st));
	else
		snprintf(r->why, sizeof(r->why), "failed (exit status %d)", WEXITSTATUS(st));
}

static void mib(char *buf, size_t size, long kb)
{
	snprintf(buf, size, "%.1f", (double)kb / 1024);
}

int cmd_compare(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "on", required_argument, NULL, 'o' },
		{ "png", required_argument, NULL, 'p' },
		{ "points", required_argument, NULL, 'n' },
		{ "threads", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *on = NULL, *png = NULL;
	long points = 400;
	bool threads = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:p:n:th", opts, NULL)) != -1) {
		switch (c) {
		case 'o': on = optarg; break;
		case 'p': png = optarg; break;
		case 'n': points = atol(optarg); break;
		case 't': threads = true; break;
		default: return usage();
		}
	}
	if (!on || optind != argc - 1 || points < 1)
		return usage();
	const char *trace = argv[optind];

	/* Every name is checked before anything runs. */
	struct row rows[64];
	int nr = 0;
	char *list = strdup(on);
	for (char *save, *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		const struct target *t;
		char cmd[2048];
		if (nr == 64) {
			fprintf(stderr, "%s: at most 64 allocators\n", prog);
			free(list);
			return 2;
		}
		if (setting_parse(s, &t, cmd, sizeof(cmd))) {
			free(list);
			return 2;
		}
		memset(&rows[nr], 0, sizeof(rows[nr]));
		rows[nr++].label = s;
	}
	/* The trace itself: one load here says what is wrong with it, once. */
	struct trace tr;
	if (!nr || trace_load(trace, &tr)) {
		free(list);
		return nr ? 1 : usage();
	}
	bool kernel = tr.kind == TRACE_KIND_KERNEL;
	size_t nops = tr.nr_ops;
	trace_free(&tr);

	char tmpdir[] = "/tmp/kmem-trace.XXXXXX";
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "%s: mkdtemp: %s\n", prog, strerror(errno));
		free(list);
		return 1;
	}
	int good = 0;
	for (int i = 0; i < nr; i++) {
		fprintf(stderr, "%s: replaying %s on %s\n", prog, trace, rows[i].label);
		run_one(&rows[i], trace, tmpdir, i, points, threads);
		good += rows[i].ok;
	}
	double best_ns = 0;
	long best_mem = 0;
	bool unus = false;
	for (int i = 0; i < nr; i++) {
		if (!rows[i].ok)
			continue;
		if (!best_ns || rows[i].ns_op < best_ns)
			best_ns = rows[i].ns_op;
		if (!best_mem || (rows[i].mem_peak > 0 && rows[i].mem_peak < best_mem))
			best_mem = rows[i].mem_peak;
		unus |= rows[i].unus_mean >= 0 && kernel;
	}

	printf("%s: %zu operations, %s trace; memory: kmem's pages held (kernel traces on kmem) or RSS\n",
	       trace, nops, kernel ? "kernel" : "program");
	printf("%-34s %10s %8s %6s %10s %6s %10s %9s%s\n", "allocator", "ops", "ns/op", "xbest",
	       "peak MiB", "xbest", "final MiB", "overhead", unus ? "  unusable(9) mean/end" : "");
	for (int i = 0; i < nr; i++) {
		struct row *r = &rows[i];
		if (!r->ok) {
			printf("%-34s n/a: %s\n", r->label, r->why);
			continue;
		}
		char pk[32], fn[32], ov[32] = "-";
		mib(pk, sizeof(pk), r->mem_peak);
		mib(fn, sizeof(fn), r->mem_end);
		if (r->live_peak > 0) {
			double v = 100.0 * ((double)r->mem_peak / (double)r->live_peak - 1);
			snprintf(ov, sizeof(ov), "%+.0f%%", v > -0.5 && v < 0.5 ? 0.0 : v);
		}
		printf("%-34s %10llu %8.1f %6.2f %10s %6.2f %10s %9s", r->label, r->ops, r->ns_op,
		       best_ns > 0 ? r->ns_op / best_ns : 0, pk,
		       best_mem > 0 ? (double)r->mem_peak / (double)best_mem : 0, fn, ov);
		if (unus && r->unus_mean >= 0)
			printf("  %.3f / %.3f", r->unus_mean, r->unus_end);
		putchar('\n');
	}
	printf("overhead: peak memory over the peak of live bytes; xbest: ratio to the best\n");

	/* The plots: memory, and the unusable index for kmem on kernel traces. */
	char def[PATH_MAX];
	if (!png) {
		snprintf(def, sizeof(def), "%s", trace);
		char *dot = strrchr(def, '.');
		if (dot && !strchr(dot, '/'))
			*dot = 0;
		strncat(def, ".png", sizeof(def) - strlen(def) - 1);
		png = def;
	}
	char *labels[64], *files[64];
	int np = 0;
	for (int i = 0; i < nr; i++)
		if (rows[i].ok) {
			labels[np] = rows[i].label;
			files[np++] = rows[i].curve;
		}
	if (np && !threads) {
		char title[512];
		const char *base = strrchr(trace, '/') ? strrchr(trace, '/') + 1 : trace;
		snprintf(title, sizeof(title), "%s: memory against operations", base);
		if (!plot_curves(png, title, "MiB (kmem: pages held; others: RSS)", np, labels, files, 3))
			printf("plot: %s\n", png);
		if (unus) {
			char png2[PATH_MAX + 16];
			snprintf(png2, sizeof(png2), "%.*s-unusable.png", (int)(strlen(png) - 4), png);
			int nk = 0;
			for (int i = 0; i < nr; i++)
				if (rows[i].ok && rows[i].unus_mean >= 0) {
					labels[nk] = rows[i].label;
					files[nk++] = rows[i].curve;
				}
			snprintf(title, sizeof(title), "%s: unusable free space index, order 9", base);
			if (!plot_curves(png2, title, "unusable index (order 9)", nk, labels, files, 6))
				printf("plot: %s\n", png2);
		}
	}
	for (int i = 0; i < nr; i++) {
		char p[PATH_MAX + 8];
		unlink(rows[i].curve);
		snprintf(p, sizeof(p), "%s/%d.out", tmpdir, i);
		unlink(p);
		snprintf(p, sizeof(p), "%s/%d.err", tmpdir, i);
		unlink(p);
	}
	rmdir(tmpdir);
	free(list);
	return good ? 0 : 1;
}
