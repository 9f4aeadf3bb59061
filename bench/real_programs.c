// SPDX-License-Identifier: MIT
/*
 * bench_real_programs: Debian programs nobody here wrote, under each
 * allocator (LD_PRELOAD: kmem's build/lib/libkmem-malloc.so, glibc, and
 * jemalloc, mimalloc, tcmalloc where Debian's packages are installed):
 * peak RSS and wall time, the median of alternating rounds, and whether the
 * output is the same as under glibc.
 *
 *   sqlite3 4K   sqlite3 :memory:, 300000 rows of random text, two indexes,
 *                aggregates (its page cache: 4096-byte pages in 4376-byte
 *                blocks, about 90 MB of them)
 *   sqlite3 8K   the same with PRAGMA page_size=8192 (8480-byte blocks:
 *                kmem's large blocks, whole buddy orders)
 *   python3      a dict of 400000 tuples of strings, sorted, serialized to
 *                JSON and parsed back
 *   sort         sort(1) of 1000000 random lines (about 20 MB)
 *
 * The inputs are generated into a temporary directory ($TMPDIR or /tmp; a
 * fixed seed, the same bytes every run).  A program that is not installed
 * is skipped.  Exit status 1 if a program fails under kmem or its output
 * differs from glibc's.
 *
 *   bench_real_programs [-r ROUNDS]      default -r 3
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static char dir[PATH_MAX / 2];	/* room for a file name after it */
static const char *const input_files[] = { "t4k.sql", "t8k.sql", "alloc.py", "lines.txt" };
#define NR_INPUTS	(sizeof(input_files) / sizeof(input_files[0]))
static char input_path[NR_INPUTS][PATH_MAX];	/* ready before any signal can come */
static volatile pid_t child;			/* the program running, for a signal to stop */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t xr(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static bool write_sql(const char *path, unsigned int page_size)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return false;
	rng = 3;
	fprintf(f, "PRAGMA page_size=%u;\n", page_size);
	fprintf(f, "CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b INTEGER, c TEXT);\nBEGIN;\n");
	for (int i = 0; i < 300000; i++) {
		int na = 10 + (int)(xr() % 190), nc = (int)(xr() % 100);
		fprintf(f, "INSERT INTO t VALUES(%d,'%.*s',%llu,'%.*s');\n", i, na,
			"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
			(unsigned long long)(xr() % (1u << 30)), nc,
			"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
	}
	fprintf(f, "COMMIT;\nCREATE INDEX ia ON t(a);\nCREATE INDEX ib ON t(b);\n"
		   "SELECT count(*), sum(length(a)) FROM t;\n"
		   "SELECT b %% 100, count(*) FROM t GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 3;\n");
	return fclose(f) == 0;
}

static bool write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return false;
	fputs(text, f);
	return fclose(f) == 0;
}

static bool write_lines(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return false;
	rng = 42;
	for (int i = 0; i < 1000000; i++)
		fprintf(f, "%016llx %llu\n", (unsigned long long)xr(), (unsigned long long)(xr() % 100000));
	return fclose(f) == 0;
}

static const char python_script[] =
	"import json\n"
	"d = {}\n"
	"for i in range(400000):\n"
	"    d['key%07d' % (i * 7919 % 400000)] = (i, str(i) * (i % 7 + 1), [i % 13, i % 17])\n"
	"items = sorted(d.items(), key=lambda kv: (kv[1][1], kv[0]))\n"
	"s = json.dumps(items)\n"
	"back = json.loads(s)\n"
	"print(len(d), len(items), len(s), back[12345][0], sum(v[0] for k, v in back[:1000]))\n";

struct program {
	const char *title, *cmd;
	const char *argv[4];	/* {file} in an argument: the input's path */
	const char *input;	/* stdin from this file (in dir), or NULL */
};

static const struct program programs[] = {
	{ "sqlite3 4K", "sqlite3", { "sqlite3", ":memory:", NULL }, "t4k.sql" },
	{ "sqlite3 8K", "sqlite3", { "sqlite3", ":memory:", NULL }, "t8k.sql" },
	{ "python3", "python3", { "python3", "{file}", NULL }, NULL },
	{ "sort", "sort", { "sort", "{file}", NULL }, NULL },
};
static const char *const program_file[] = { NULL, NULL, "alloc.py", "lines.txt" };

struct result {
	double secs, rss_mb;
	uint64_t out_hash;
};

/* One run of program @p under @preload (NULL: glibc); false if it failed. */
static bool run(int p, const char *preload, struct result *res)
{
	char in[PATH_MAX], file[PATH_MAX];
	char *argv[4];
	int fd;

	snprintf(in, sizeof(in), "%s/%s", dir, programs[p].input ? programs[p].input : "");
	snprintf(file, sizeof(file), "%s/%s", dir, program_file[p] ? program_file[p] : "");
	for (int i = 0; i < 4; i++)
		argv[i] = programs[p].argv[i] && !strcmp(programs[p].argv[i], "{file}") ? file
										 : (char *)programs[p].argv[i];
	uint64_t t0 = bench_now_ns();
	pid_t pid = bench_spawn(argv, preload, programs[p].input ? in : NULL, &fd, NULL);
	if (pid < 0)
		return false;
	child = pid;
	/* FNV-1a of the output, to compare with glibc's. */
	uint64_t h = 0xcbf29ce484222325ull;
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ (unsigned char)buf[i]) * 0x100000001b3ull;
	close(fd);
	int status;
	struct rusage ru;
	pid_t waited = wait4(pid, &status, 0, &ru);
	child = 0;
	if (waited != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return false;
	res->secs = (double)(bench_now_ns() - t0) / 1e9;
	res->rss_mb = (double)ru.ru_maxrss / 1024;
	res->out_hash = h;
	return true;
}

/* The inputs are some 140 MB: removed at exit, and on a signal (timeout, ^C). */
static void cleanup(void)
{
	for (size_t i = 0; i < NR_INPUTS; i++)
		unlink(input_path[i]);
	rmdir(dir);
}

static void on_signal(int sig)
{
	if (child > 0)
		kill(child, SIGKILL);
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

int main(int argc, char **argv)
{
	int rounds = 3;

	if (argc == 3 && !strcmp(argv[1], "-r"))
		rounds = atoi(argv[2]);
	else if (argc != 1)
		rounds = 0;
	if (rounds < 1 || rounds > 15) {
		fprintf(stderr, "usage: %s [-r ROUNDS (1..15)]\n", argv[0]);
		return 2;
	}
	char self[PATH_MAX], kmem[PATH_MAX + 64];
	if (!bench_self_and_kmem(self, kmem) || access(kmem, R_OK)) {
		fprintf(stderr, "bench_real_programs: no libkmem-malloc.so beside this binary's bin/\n");
		return 1;
	}
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/kmem-real-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	for (size_t i = 0; i < NR_INPUTS; i++)
		snprintf(input_path[i], sizeof(input_path[i]), "%s/%s", dir, input_files[i]);
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	bool ok_in = write_sql(input_path[0], 4096) && write_sql(input_path[1], 8192) &&
		     write_file(input_path[2], python_script) && write_lines(input_path[3]);
	if (!ok_in) {
		fprintf(stderr, "bench_real_programs: cannot write the inputs in %s\n", dir);
		return 1;
	}

	const struct bench_alloc *allocs = bench_allocs;
	enum { NA = BENCH_NR_ALLOCS, NP = sizeof(programs) / sizeof(programs[0]) };
	static double secs[NP][NA][15], rss[NP][NA][15];
	static uint64_t hash[NP][NA];
	int have[NP], ok[NP][NA], same[NP][NA];

	for (int p = 0; p < NP; p++) {
		have[p] = bench_have(programs[p].cmd);
		for (int a = 0; a < NA; a++) {
			ok[p][a] = have[p] && (!allocs[a].lib || !access(allocs[a].lib, R_OK));
			same[p][a] = 1;
		}
	}
	for (int r = 0; r < rounds; r++)
		for (int p = 0; p < NP; p++)
			for (int k = 0; k < NA; k++) {
				int a = (k + r) % NA;	/* each round starts with another allocator */
				struct result res;
				if (!ok[p][a])
					continue;
				if (!run(p, a == 0 ? kmem : allocs[a].lib, &res)) {
					fprintf(stderr, "%s failed under %s\n", programs[p].title, allocs[a].name);
					ok[p][a] = 0;
					continue;
				}
				secs[p][a][r] = res.secs;
				rss[p][a][r] = res.rss_mb;
				if (r == 0 || !hash[p][a])
					hash[p][a] = res.out_hash;
				else if (hash[p][a] != res.out_hash)
					same[p][a] = 0;
			}

	printf("bench_real_programs: peak RSS (MB) and wall time (s), median of %d rounds\n"
	       "(alternating allocators); kmem/best: kmem's over the best peer's (glibc,\n"
	       "jemalloc, mimalloc, tcmalloc); * marks output that differs from glibc's\n\n", rounds);
	printf("%-11s |", "program");
	for (int a = 0; a < NA; a++)
		printf(" %15s |", allocs[a].name);
	printf(" kmem/best RSS | kmem/best time\n");
	int status = 0;
	for (int p = 0; p < NP; p++) {
		if (!have[p]) {
			printf("%-11s | not installed\n", programs[p].title);
			continue;
		}
		printf("%-11s |", programs[p].title);
		double best_rss = 0, best_t = 0, k_rss = 0, k_t = 0;
		for (int a = 0; a < NA; a++) {
			if (!ok[p][a]) {
				printf(" %15s |", "n/a");
				continue;
			}
			double m = bench_median(rss[p][a], rounds), t = bench_median(secs[p][a], rounds);
			bool differs = a != 1 && ok[p][1] && (hash[p][a] != hash[p][1] || !same[p][a]);
			printf(" %6.1f %6.2fs%s |", m, t, differs ? "*" : " ");
			if (a == 0 && differs)
				status = 1;
			if (a == 0) {
				k_rss = m;
				k_t = t;
			} else {
				if (!best_rss || m < best_rss)
					best_rss = m;
				if (!best_t || t < best_t)
					best_t = t;
			}
		}
		if (ok[p][0] && best_rss)
			printf(" %13.2fx | %13.2fx\n", k_rss / best_rss, k_t / best_t);
		else
			printf(" %13s | %13s\n", "n/a", "n/a");
		if (!ok[p][0])
			status = 1;	/* kmem failed it: said on stderr */
	}
	if (status)
		fprintf(stderr, "bench_real_programs: a program failed under kmem or its output differs from glibc's\n");
	return status;
}
