// SPDX-License-Identifier: MIT
/*
 * kmem-trace replay TRACE --on ALLOCATOR [--cmdline "..."] [--threads]
 *
 * A program's trace replays through malloc & co.: on glibc as it is, on a
 * peer with its library preloaded, on kmem with libkmem-malloc.so
 * preloaded (the process runs itself again with LD_PRELOAD set).  A
 * kernel's trace replays on kmem's own API in this process: its caches
 * (kmem_cache_create of the traced names and sizes), kmalloc and
 * alloc_pages; on the others through malloc and aligned_alloc.
 *
 * Every block is touched (a byte in each of its pages) when allocated.
 * The ops run in segments; between them (not timed) the memory is
 * sampled: RSS, and for kmem the pages it holds (/proc/meminfo
 * MemTotal - MemFree) and the unusable free space index at order 9.
 *
 * Output: a summary for people, and one line
 *   RESULT alloc=... ops=N ns_op=... live_peak_kb=... mem_peak_kb=... ...
 * for compare.  Exit: 0, 1 error, 2 usage, 3 out of memory.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <kmem.h>

#include "trace.h"

#define CHILD_ENV	"KMEM_TRACE_REPLAY_CHILD"

typedef ssize_t (*kread_fn)(const char *, char *, size_t);

struct replay {
	const struct trace *t;
	const struct target *tgt;
	const char *label;
	bool native;		/* kmem's API in this process */
	void **slots;
	uint32_t *sizes;	/* a block's size: realloc touches only what it adds */
	bool no_touch;		/* --no-touch: the allocator's own cost alone */
	struct kmem_cache **caches;
	kread_fn kread;		/* kmem's, when it is the allocator */
	int statm;
	long baseline_kb;
	size_t oom_at;		/* op index + 1 */
};

/* The thread's CPU time: a replay on a busy machine is not charged for the
 * time it waited for a CPU (page faults are the thread's, and count). */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_kb(struct replay *r)
{
	char buf[128];
	ssize_t n = pread(r->statm, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *s = strchr(buf, ' ');
	return s ? strtol(s + 1, NULL, 10) * 4 : 0;
}

static long status_kb(const char *key)
{
	char line[256];
	long v = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = strtol(line + strlen(key), NULL, 10);
	fclose(f);
	return v;
}

/* kmem's pages in use (KiB) and the unusable free space index at order 9. */
static void kmem_sample(struct replay *r, long *held_kb, long *slab_kb, double *unusable)
{
	static char buf[8192];
	long total = 0, freek = 0, slab = 0;

	*held_kb = *slab_kb = 0;
	*unusable = -1;
	if (!r->kread)
		return;
	if (r->kread("/proc/meminfo", buf, sizeof(buf)) > 0) {
		char *p;
		if ((p = strstr(buf, "MemTotal:")))
			total = strtol(p + 9, NULL, 10);
		if ((p = strstr(buf, "MemFree:")))
			freek = strtol(p + 8, NULL, 10);
		if ((p = strstr(buf, "\nSlab:")))
			slab = strtol(p + 6, NULL, 10);
		*held_kb = total - freek;
		*slab_kb = slab;
	}
	/* "Node 0, zone   Normal 0.000 ... " : the tenth number is order 9. */
	if (r->kread("/sys/kernel/debug/extfrag/unusable_index", buf, sizeof(buf)) > 0) {
		char *p = strstr(buf, "Normal");
		if (p) {
			p += 6;
			double v = -1;
			for (int i = 0; i <= 9; i++)
				v = strtod(p, &p);
			*unusable = v;
		}
	}
}

/* A byte in each page of [from, to) of the block, and its first byte. */
#define touch(p, from, to) do { if (!r->no_touch) touch_range(p, from, to); } while (0)
static inline void touch_range(void *p, size_t from, size_t to)
{
	volatile char *c = p;

	c[from] = 1;
	for (size_t i = (from | 4095) + 1; i < to; i += 4096)
		c[i] = 1;
}

static gfp_t gfp_of(uint8_t aux)
{
	switch (aux >> 4) {
	case 1: return GFP_KERNEL | __GFP_NOWARN | __GFP_MOVABLE;
	case 2: return GFP_KERNEL | __GFP_NOWARN | __GFP_RECLAIMABLE;
	default: return GFP_KERNEL | __GFP_NOWARN;
	}
}

/* Ops [from, to) through malloc & co.  Returns false at an allocation that failed. */
static bool run_malloc(struct replay *r, size_t from, size_t to)
{
	const struct rop *o = r->t->ops;
	void **s = r->slots;

	for (size_t i = from; i < to; i++) {
		void *p;
		switch (o[i].op) {
		case OP_MALLOC:
		case OP_KMALLOC:
		case OP_KC_ALLOC:
			p = malloc(o[i].size);
			goto got;
		case OP_CALLOC:
			p = calloc(1, o[i].size);
			goto got;
		case OP_REALLOC:
			if (o[i].old == NO_SLOT) {
				p = realloc(NULL, o[i].size);
				goto got;
			}
			p = realloc(s[o[i].old], o[i].size);
			if (!p && o[i].size)
				goto oom;
			if (r->sizes[o[i].old] < o[i].size)
				touch(p, r->sizes[o[i].old], o[i].size);
			s[o[i].slot] = p;
			r->sizes[o[i].slot] = o[i].size;
			continue;
		case OP_MEMALIGN: {
			size_t a = (size_t)1 << o[i].aux;
			if (a < sizeof(void *))
				a = sizeof(void *);
			if (posix_memalign(&p, a, o[i].size))
				p = NULL;
			goto got;
		}
		case OP_PG_ALLOC:
			if (posix_memalign(&p, 4096, o[i].size))
				p = NULL;
			goto got;
		default:	/* every free */
			free(s[o[i].slot]);
			continue;
		}
got:
		if (!p && o[i].size)
			goto oom;
		if (p)
			touch(p, 0, o[i].size);
		s[o[i].slot] = p;
		r->sizes[o[i].slot] = o[i].size;
		continue;
oom:
		r->oom_at = i + 1;
		return false;
	}
	return true;
}

/* Ops [from, to) on kmem's own API: a kernel trace. */
static bool run_kmem(struct replay *r, size_t from, size_t to)
{
	const struct rop *o = r->t->ops;
	void **s = r->slots;

	for (size_t i = from; i < to; i++) {
		void *p;
		switch (o[i].op) {
		case OP_KC_ALLOC:
			if (r->caches[o[i].old]) {
				p = kmem_cache_alloc(r->caches[o[i].old], GFP_KERNEL | __GFP_NOWARN);
				if (!p)
					goto oom;
				touch(p, 0, 1);
				s[o[i].slot] = p;
				continue;
			}
			/* a cache kmem would not create: kmalloc */
			__attribute__((fallthrough));
		case OP_KMALLOC:
		case OP_MALLOC:
		case OP_CALLOC:
		case OP_MEMALIGN:
			p = kmalloc(o[i].size, GFP_KERNEL | __GFP_NOWARN);
			goto got;
		case OP_REALLOC:
			p = krealloc(o[i].old == NO_SLOT ? NULL : s[o[i].old], o[i].size,
				     GFP_KERNEL | __GFP_NOWARN);
			goto got;
		case OP_PG_ALLOC: {
			struct page *pg = alloc_pages(gfp_of(o[i].aux), o[i].aux & 15);
			if (!pg)
				goto oom;
			touch(page_address(pg), 0, o[i].size);
			s[o[i].slot] = pg;
			continue;
		}
		case OP_PG_FREE:
			__free_pages(s[o[i].slot], o[i].aux & 15);
			continue;
		case OP_KC_FREE:
			if (r->caches[o[i].old]) {
				kmem_cache_free(r->caches[o[i].old], s[o[i].slot]);
				continue;
			}
			__attribute__((fallthrough));
		default:
			kfree(s[o[i].slot]);
			continue;
		}
got:
		if (!p)
			goto oom;
		if (!ZERO_OR_NULL_PTR(p))
			touch(p, 0, o[i].size);
		s[o[i].slot] = p;
		continue;
oom:
		r->oom_at = i + 1;
		return false;
	}
	return true;
}

static bool run(struct replay *r, size_t from, size_t to)
{
	return r->native ? run_kmem(r, from, to) : run_malloc(r, from, to);
}

/* ---- --threads: each recorded thread replays its own ops, in the global order */

struct tctx {
	struct replay *r;
	uint16_t thread;
	_Atomic size_t *turn;
	bool ok;
};

static void *thread_main(void *arg)
{
	struct tctx *c = arg;
	const struct trace *t = c->r->t;

	c->ok = true;
	for (size_t i = 0; i < t->nr_ops; i++) {
		if (t->ops[i].thread != c->thread)
			continue;
		for (unsigned int spins = 0; atomic_load_explicit(c->turn, memory_order_acquire) != i;)
			if (++spins > 64)
				sched_yield();
		if (!run(c->r, i, i + 1)) {
			c->ok = false;
			atomic_store(c->turn, SIZE_MAX);
			return NULL;
		}
		atomic_store_explicit(c->turn, i + 1, memory_order_release);
	}
	return NULL;
}

static bool run_threads(struct replay *r)
{
	const struct trace *t = r->t;
	_Atomic size_t turn = 0;
	struct tctx *c = calloc(t->nr_threads, sizeof(*c));
	pthread_t *th = calloc(t->nr_threads, sizeof(*th));
	bool ok = true;

	for (uint16_t i = 0; i < t->nr_threads; i++) {
		c[i] = (struct tctx){ .r = r, .thread = i, .turn = &turn };
		if (pthread_create(&th[i], NULL, thread_main, &c[i])) {
			fprintf(stderr, "%s: cannot start thread %u of %u\n", prog, i, t->nr_threads);
			exit(1);
		}
	}
	for (uint16_t i = 0; i < t->nr_threads; i++) {
		pthread_join(th[i], NULL);
		ok &= c[i].ok;
	}
	free(c);
	free(th);
	return ok;
}

/*
 * What op @o does to the live blocks: the slot it ends (a free's, a
 * realloc's old block; NO_SLOT: none), and whether it fills @o->slot.
 */
static inline uint32_t op_ends(const struct rop *o, bool *fills)
{
	switch (o->op) {
	case OP_FREE: case OP_KFREE: case OP_KC_FREE: case OP_PG_FREE:
		*fills = false;
		return o->slot;
	case OP_REALLOC:
		*fills = true;
		return o->old;
	default:
		*fills = true;
		return NO_SLOT;
	}
}

/* Free what ops [0, n) left live. */
static void free_live(struct replay *r, size_t n)
{
	const struct trace *t = r->t;
	uint8_t *is_live = big_alloc(t->nr_slots + 1);

	if (!is_live)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct rop *o = &t->ops[i];
		bool fills;
		uint32_t end = op_ends(o, &fills);
		if (end != NO_SLOT)
			is_live[end] = 0;
		if (fills)
			is_live[o->slot] = 1;
	}
	for (uint32_t s = 0; s < t->nr_slots; s++)
		if (is_live[s])
			free(r->slots[s]);
	big_free(is_live, t->nr_slots + 1);
}

/* ---- kmem: does it boot with this command line? --------------------------- */

/* In a child, so that a failed boot leaves nothing behind; kmem's own
 * message (its first line) goes into ours. */
static int kmem_probe(const char *label, const char *cmdline)
{
	int pfd[2];
	char msg[512] = "";

	if (pipe(pfd))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 2);
		close(pfd[0]);
		_exit(kmem_init(cmdline) ? 1 : 0);
	}
	close(pfd[1]);
	ssize_t n = read(pfd[0], msg, sizeof(msg) - 1);
	close(pfd[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	msg[n > 0 ? n : 0] = 0;
	char *nl = strchr(msg, '\n');
	if (nl)
		*nl = 0;
	const char *m = strncmp(msg, "kmem: ", 6) ? msg : msg + 6;
	fprintf(stderr, "%s: %s: kmem does not boot with \"%s\"%s%s\n", prog, label, cmdline,
		*m ? ": " : "", m);
	return -1;
}

/* ---- the command ------------------------------------------------------- */

static int usage(void)
{
	fprintf(stderr, "usage: %s replay TRACE --on ALLOCATOR [--cmdline \"KMEM boot parameters\"]\n"
			"          [--threads] [--no-touch] [--curve FILE] [--points N] [--live-out FILE]\n"
			"  ALLOCATOR: slub, slab, slob, glibc, jemalloc, mimalloc, tcmalloc,\n"
			"             NAME:PARAMETERS (slub:slub_min_order=1), or a kmem boot parameter\n",
			prog);
	return 2;
}

/* Live bytes after op i, for each i (--live-out), and at sample points. */
static uint64_t *live_curve(const struct trace *t)
{
	uint64_t *live = big_alloc((t->nr_ops + 1) * sizeof(*live));
	uint32_t *size = big_alloc((t->nr_slots + 1) * sizeof(*size));
	uint64_t v = 0;

	if (!live || !size) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	for (size_t i = 0; i < t->nr_ops; i++) {
		const struct rop *o = &t->ops[i];
		bool fills;
		uint32_t end = op_ends(o, &fills);
		if (end != NO_SLOT)
			v -= size[end];
		if (fills) {
			size[o->slot] = o->size;
			v += o->size;
		}
		live[i] = v;
	}
	big_free(size, (t->nr_slots + 1) * sizeof(*size));
	return live;
}

static int reexec(char **argv, const char *preload, const char *cmdline)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0) {
		fprintf(stderr, "%s: cannot find itself: %s\n", prog, strerror(errno));
		return 1;
	}
	exe[n] = 0;
	setenv(CHILD_ENV, "1", 1);
	setenv("LD_PRELOAD", preload, 1);
	if (cmdline)
		setenv("KMEM_CMDLINE", cmdline, 1);
	execv(exe, argv);
	fprintf(stderr, "%s: cannot run %s: %s\n", prog, exe, strerror(errno));
	return 1;
}

static int peek_kind(const char *path)
{
	uint8_t head[16];
	FILE *f = fopen(path, "rb");
	uint32_t kind = 0;

	if (!f)
		return 0;
	if (fread(head, 1, sizeof(head), f) == sizeof(head) && !memcmp(head, TRACE_MAGIC, 8))
		memcpy(&kind, head + 12, 4);
	fclose(f);
	return (int)kind;
}

int cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "on", required_argument, NULL, 'o' },
		{ "cmdline", required_argument, NULL, 'c' },
		{ "threads", no_argument, NULL, 't' },
		{ "curve", required_argument, NULL, 'C' },
		{ "points", required_argument, NULL, 'p' },
		{ "live-out", required_argument, NULL, 'l' },
		{ "label", required_argument, NULL, 'L' },
		{ "no-touch", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *on = NULL, *extra = NULL, *curve = NULL, *live_out = NULL, *label = NULL;
	bool threads = false, no_touch = false;
	long points = 400;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:c:tC:p:l:L:Th", opts, NULL)) != -1) {
		switch (c) {
		case 'o': on = optarg; break;
		case 'c': extra = optarg; break;
		case 't': threads = true; break;
		case 'C': curve = optarg; break;
		case 'p': points = atol(optarg); break;
		case 'l': live_out = optarg; break;
		case 'L': label = optarg; break;
		case 'T': no_touch = true; break;
		default: return usage();
		}
	}
	if (!on || optind != argc - 1 || points < 1)
		return usage();
	const char *path = argv[optind];
	const struct target *tgt;
	char cmdline[2048];
	if (setting_parse(on, &tgt, cmdline, sizeof(cmdline)))
		return 2;
	if (extra && *extra) {
		if (tgt->kind != TGT_KMEM) {
			fprintf(stderr, "%s: --cmdline applies to kmem's allocators (slub, slab, slob)\n", prog);
			return 2;
		}
		size_t l = strlen(cmdline);
		snprintf(cmdline + l, sizeof(cmdline) - l, " %s", extra);
	}
	if (!label)
		label = on;

	/* A program's trace needs its allocator preloaded: run again with it. */
	bool child = getenv(CHILD_ENV) != NULL;
	int kind = peek_kind(path);
	if (tgt->kind == TGT_KMEM && !child && kmem_probe(label, cmdline))
		return 1;
	/* So does a kernel trace on a peer (kmem's API needs nothing preloaded). */
	if (!child && ((kind == TRACE_KIND_MALLOC && tgt->kind != TGT_GLIBC) ||
		       (kind == TRACE_KIND_KERNEL && tgt->kind == TGT_PEER))) {
		char lib[PATH_MAX];
		if (tgt->kind == TGT_PEER && !peer_path(tgt, lib, sizeof(lib))) {
			fprintf(stderr, "%s: %s: %s is not installed (n/a)\n", prog, tgt->name, tgt->lib);
			return 1;
		}
		if (tgt->kind == TGT_KMEM && !own_lib("libkmem-malloc.so", lib, sizeof(lib))) {
			fprintf(stderr, "%s: %s: libkmem-malloc.so is not next to this program (../lib/)\n",
				prog, tgt->name);
			return 1;
		}
		fflush(NULL);
		/* argv[-1] is the program: main passes its argv + 1. */
		return reexec(argv - 1, lib, tgt->kind == TGT_KMEM ? cmdline : NULL);
	}

	struct trace t;
	if (trace_load(path, &t))
		return 1;
	struct replay r = { .t = &t, .tgt = tgt, .label = label, .statm = -1, .no_touch = no_touch };
	uint64_t *live = NULL;
	FILE *cf = NULL;
	int rc = 1;
	bool ok = true;
	r.native = tgt->kind == TGT_KMEM && t.kind == TRACE_KIND_KERNEL;
	if (r.native) {
		if (kmem_init(cmdline)) {
			fprintf(stderr, "%s: %s: kmem does not boot with \"%s\"\n", prog, label, cmdline);
			goto done;
		}
		r.kread = kmem_read;
		r.caches = calloc(t.nr_caches + 1, sizeof(*r.caches));
		for (uint32_t i = 0; i < t.nr_caches; i++) {
			char name[300], dir[340], b[8];
			/* Another name if kmem has one of its own by that name. */
			snprintf(name, sizeof(name), "%s", t.caches[i].name);
			snprintf(dir, sizeof(dir), "/sys/kernel/slab/%s/", name);
			if (kmem_read(dir, b, sizeof(b)) >= 0)
				snprintf(name, sizeof(name), "trace-%s", t.caches[i].name);
			r.caches[i] = kmem_cache_create(name, t.caches[i].size ? t.caches[i].size : 8, 0,
							0, NULL);
		}
	} else if (tgt->kind == TGT_KMEM) {
		r.kread = (kread_fn)dlsym(RTLD_DEFAULT, "kmem_read");
	}
	live = live_curve(&t);
	if (live_out) {
		FILE *f = fopen(live_out, "w");
		if (!f) {
			fprintf(stderr, "%s: %s: %s\n", prog, live_out, strerror(errno));
			goto done;
		}
		for (size_t i = 0; i < t.nr_ops; i++)
			fprintf(f, "%llu\n", (unsigned long long)live[i]);
		if (fclose(f)) {
			fprintf(stderr, "%s: %s: write error\n", prog, live_out);
			goto done;
		}
	}
	r.slots = big_alloc((t.nr_slots + 1) * sizeof(void *));
	r.sizes = big_alloc((t.nr_slots + 1) * sizeof(uint32_t));
	cf = curve ? fopen(curve, "w") : NULL;
	if (!r.slots || !r.sizes || (curve && !cf)) {
		fprintf(stderr, "%s: %s\n", prog, curve && !cf ? strerror(errno) : "out of memory");
		goto done;
	}
	if (cf)
		fprintf(cf, "# ops live_kb mem_kb rss_kb kmem_kb unusable9\n");
	/* The tool's own arrays are in before the start: only the replay's
	 * memory counts. */
	for (size_t i = 0; i < t.nr_slots + 1; i += 512) {
		((volatile void **)r.slots)[i] = NULL;
		((volatile uint32_t *)r.sizes)[i] = 0;
	}
	r.statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	int cr = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	if (cr >= 0) {
		/* On an old kernel this fails: the peak covers the load too. */
		ssize_t w = write(cr, "5", 1);
		(void)w;
		close(cr);
	}
	r.baseline_kb = rss_kb(&r);

	size_t step = t.nr_ops / (size_t)points;
	if (step < 1)
		step = 1;
	double busy = 0, t0;
	long mem_peak = 0, kmem_peak = 0, held = 0, slab = 0, rss = 0;
	double unus = -1, unus_sum = 0, unus_max = -1;
	int unus_n = 0;
	if (threads && t.nr_threads > 1) {
		t0 = wall();
		ok = run_threads(&r);
		busy = wall() - t0;
	} else {
		for (size_t i = 0; i < t.nr_ops && ok; i += step) {
			size_t to = i + step < t.nr_ops ? i + step : t.nr_ops;
			t0 = now();
			ok = run(&r, i, to);
			busy += now() - t0;
			if (!ok)
				break;
			rss = rss_kb(&r) - r.baseline_kb;
			kmem_sample(&r, &held, &slab, &unus);
			long mem = r.native ? held : rss;
			if (mem > mem_peak)
				mem_peak = mem;
			if (held > kmem_peak)
				kmem_peak = held;
			if (unus >= 0) {
				unus_sum += unus;
				unus_n++;
				if (unus > unus_max)
					unus_max = unus;
			}
			if (cf)
				fprintf(cf, "%zu %llu %ld %ld %ld %.3f\n", to,
					(unsigned long long)(live[to - 1] >> 10), mem, rss, held, unus);
		}
	}
	if (!ok) {
		const struct rop *o = &t.ops[r.oom_at - 1];
		fprintf(stderr, "%s: %s: out of memory at operation %zu of %zu (%s of %u bytes, %llu KiB live)\n",
			prog, label, r.oom_at, t.nr_ops,
			o->op == OP_PG_ALLOC ? "a page block" : o->op == OP_KC_ALLOC ? "a cache object" : "an allocation",
			o->size, (unsigned long long)(r.oom_at > 1 ? live[r.oom_at - 2] >> 10 : 0));
		rc = 3;
		goto done;
	}
	rss = rss_kb(&r) - r.baseline_kb;
	kmem_sample(&r, &held, &slab, &unus);
	long hwm = status_kb("VmHWM:") - r.baseline_kb;
	if (!r.native && hwm > mem_peak)
		mem_peak = hwm;
	long mem_end = r.native ? held : rss;
	if (cf && fclose(cf)) {
		cf = NULL;
		fprintf(stderr, "%s: %s: write error\n", prog, curve);
		goto done;
	}
	cf = NULL;
	uint64_t live_peak = 0;
	for (size_t i = 0; i < t.nr_ops; i++)
		if (live[i] > live_peak)
			live_peak = live[i];
	double ns_op = busy * 1e9 / (double)t.nr_ops;
	printf("%s: %zu ops in %.3f s, %.1f ns/op (%.1f M ops/s)%s\n", label, t.nr_ops, busy, ns_op,
	       (double)t.nr_ops / busy / 1e6,
	       threads && t.nr_threads > 1 ? ", threads as recorded, wall time" : ", CPU time");
	printf("  live bytes: peak %llu KiB, end %llu KiB\n", (unsigned long long)(live_peak >> 10),
	       (unsigned long long)(live[t.nr_ops - 1] >> 10));
	if (r.kread)
		printf("  kmem pages held: peak %ld KiB, end %ld KiB (slab %ld KiB)%s\n", kmem_peak, held,
		       slab, threads && t.nr_threads > 1 ? " (end only with --threads)" : "");
	printf("  RSS over the start: peak %ld KiB, end %ld KiB\n", hwm, rss);
	if (unus_n)
		printf("  unusable free space index, order 9: mean %.3f, max %.3f, end %.3f\n",
		       unus_sum / unus_n, unus_max, unus);
	printf("RESULT alloc=%s ops=%zu ns_op=%.2f live_peak_kb=%llu live_end_kb=%llu mem_peak_kb=%ld "
	       "mem_end_kb=%ld rss_peak_kb=%ld rss_end_kb=%ld kmem_peak_kb=%ld kmem_end_kb=%ld "
	       "unusable9_mean=%.4f unusable9_end=%.4f\n",
	       label, t.nr_ops, ns_op, (unsigned long long)(live_peak >> 10),
	       (unsigned long long)(live[t.nr_ops - 1] >> 10), mem_peak, mem_end, hwm, rss,
	       kmem_peak, held, unus_n ? unus_sum / unus_n : -1.0, unus);
	rc = 0;
done:
	/* The blocks still live go back (after the measures): the allocator
	 * ends clean, as a program's exit would leave it. */
	if (r.slots && !r.native)
		free_live(&r, ok ? t.nr_ops : r.oom_at - 1);
	if (cf)
		fclose(cf);
	if (live)
		big_free(live, (t.nr_ops + 1) * sizeof(*live));
	big_free(r.slots, (t.nr_slots + 1) * sizeof(void *));
	big_free(r.sizes, (t.nr_slots + 1) * sizeof(uint32_t));
	free(r.caches);
	if (r.statm >= 0)
		close(r.statm);
	trace_free(&t);
	return rc;
}
