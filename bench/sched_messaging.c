// SPDX-License-Identifier: MIT
/*
 * bench_sched_messaging: the userspace counterpart of `perf bench sched
 * messaging` (hackbench), the benchmark of the SLAB byte-sized freelist
 * index patch (Kim 2013: -g 50 -l 1000, 5% fewer cache misses per step,
 * 3.1% and 4.2% less time).
 *
 * As in perf's thread mode: GROUPS groups of 20 receiver and 20 sender
 * threads; each receiver owns a UNIX stream socket pair, and each sender
 * sends LOOPS messages of 100 bytes to every receiver of its group.  In the
 * kernel each such write allocated a socket buffer: an sk_buff from
 * skbuff_head_cache and its data from kmalloc (100 bytes aligned up, plus
 * the shared info: a 448-byte kmalloc), freed by the receiving CPU.  Here
 * the sender allocates the same two objects from kmem (a 232-byte
 * SLAB_HWCACHE_ALIGN cache and kmalloc(448)), writes the 100-byte payload
 * into the data and sends the pointer through the socket; the receiver
 * checks the payload and frees both: every object is freed by another
 * thread than the one that allocated it, as the kernel's skbs were.
 *
 * Each configuration (SLUB, SLAB, SLAB's three freelist layouts of the
 * patch's tables) boots in its own process; one that does not boot is n/a.
 * Two measures:
 *  - time: RUNS native runs per configuration (wall time of the message
 *    exchange and the process's CPU time), medians;
 *  - cache misses (-m): runs per configuration under
 *    `valgrind --tool=cachegrind --cache-sim=yes`, whose simulated caches
 *    (this host has no hardware counters) count every access of the
 *    program: D1 and last-level misses.  Valgrind runs one thread at a
 *    time, so keep the run small (e.g. -g 5 -l 200).  The counts do not
 *    depend on the clock, but on which thread valgrind runs when a socket
 *    read blocks: with --fair-sched=yes they vary by a few % between runs
 *    (by 20% without), so medians of several runs are shown with their range.
 *
 *   bench_sched_messaging [-g GROUPS] [-l LOOPS] [-r RUNS] [-a KEYS] [-m [-G GROUPS -L LOOPS -M RUNS]]
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <kmem.h>

#include "slab_allocs.h"

#define BASE_CMDLINE	"mem=512M"
#define NR_FDS		20		/* receivers (and senders) per group, perf's default */
#define DATASIZE	100		/* bytes per message, perf's */
#define SKB_HEAD_SIZE	232		/* a 2013 x86-64 sk_buff */
#define SKB_DATA_SIZE	448		/* SKB_DATA_ALIGN(100) + SKB_DATA_ALIGN(sizeof(skb_shared_info)) */
#define MAX_GROUPS	100

/*
 * The configurations: SLUB, SLAB with its defaults, and the patch's three
 * layouts of SLAB's freelist: "before" (4-byte indexes, the slab management
 * header in the slab), "after the previous posting" (the header overlaid
 * on struct page), "this patchset" (1-byte indexes): slab.layout=2013-before,
 * 2013-prev and 2013.
 */
static const struct sa_config cfgs[] = {
	{ "slub", "SLUB", "slab=slub" },
	{ "before", "SLAB before", "slab=slab slab.layout=2013-before" },
	{ "prev", "SLAB prev", "slab=slab slab.layout=2013-prev" },
	{ "byte", "SLAB byte-idx", "slab=slab slab.layout=2013" },
};
#define NR_CFG	((int)(sizeof(cfgs) / sizeof(cfgs[0])))

/* The patch's figures (10 runs, 4 CPUs, -g 50 -l 1000). */
static const struct {
	const char *what;
	double misses, secs;
} kim2013[] = {
	{ "before", 238309671, 12.010172090 },
	{ "after the previous posting", 229945138, 11.627897174 },
	{ "this patchset", 218640472, 11.504999837 },
};

struct skb {
	unsigned char *data;
	unsigned int len;
	unsigned int seq;
};

struct sender {
	int wfd[NR_FDS];
	unsigned int id;
};

struct receiver {
	int rfd;
	unsigned long expect;
	unsigned long bad;
};

static struct kmem_cache *skbuff_head_cache;
static int groups = 10, loops = 100;
static unsigned int run_limit = 120;	/* seconds a run may take (-T) */
static atomic_int ready, go;
static unsigned long bad_total;

static void payload(unsigned char *p, unsigned int seq)
{
	for (int i = 0; i < DATASIZE; i++)
		p[i] = (unsigned char)(seq + i);
}

static void barrier_wait(void)
{
	atomic_fetch_add(&ready, 1);
	while (!atomic_load_explicit(&go, memory_order_acquire))
		sched_yield();
}

static void *sender_fn(void *arg)
{
	struct sender *s = arg;

	barrier_wait();
	for (int l = 0; l < loops; l++)
		for (int r = 0; r < NR_FDS; r++) {
			struct skb *skb = kmem_cache_alloc(skbuff_head_cache, GFP_KERNEL);
			unsigned char *data = kmalloc(SKB_DATA_SIZE, GFP_KERNEL);
			if (!skb || !data) {
				fprintf(stderr, "bench_sched_messaging: allocation failed\n");
				exit(1);
			}
			skb->data = data;
			skb->len = DATASIZE;
			skb->seq = s->id * 131 + (unsigned int)l;
			payload(data, skb->seq);
			ssize_t n = write(s->wfd[r], &skb, sizeof(skb));
			if (n != sizeof(skb)) {
				perror("bench_sched_messaging: write");
				exit(1);
			}
		}
	return NULL;
}

static void *receiver_fn(void *arg)
{
	struct receiver *r = arg;
	struct skb *buf[64];
	size_t have = 0;	/* bytes of buf filled */

	barrier_wait();
	while (r->expect) {
		ssize_t n = read(r->rfd, (char *)buf + have, sizeof(buf) - have);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			perror("bench_sched_messaging: read");
			exit(1);
		}
		have += (size_t)n;
		size_t whole = have / sizeof(buf[0]);
		for (size_t i = 0; i < whole; i++) {
			struct skb *skb = buf[i];
			unsigned char want[DATASIZE];
			payload(want, skb->seq);
			if (skb->len != DATASIZE || memcmp(skb->data, want, DATASIZE))
				r->bad++;
			kfree(skb->data);
			kmem_cache_free(skbuff_head_cache, skb);
		}
		r->expect -= whole;
		have -= whole * sizeof(buf[0]);
		memmove(buf, (char *)buf + whole * sizeof(buf[0]), have);
	}
	return NULL;
}

struct run_result {
	int state;		/* 1 ok, -1 did not boot, -2 failed */
	double wall_s, cpu_s;
	unsigned long messages, bad;
};

static double now_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One run, in this process (kmem already booted). */
static void run_messaging(struct run_result *res)
{
	int nthreads = groups * NR_FDS * 2;
	pthread_t *tid = calloc((size_t)nthreads, sizeof(*tid));
	struct sender *snd = calloc((size_t)groups * NR_FDS, sizeof(*snd));
	struct receiver *rcv = calloc((size_t)groups * NR_FDS, sizeof(*rcv));
	int (*fds)[2] = calloc((size_t)groups * NR_FDS, sizeof(*fds));
	pthread_attr_t attr;
	int t = 0;

	if (!tid || !snd || !rcv || !fds) {
		fprintf(stderr, "bench_sched_messaging: out of memory\n");
		exit(1);
	}
	skbuff_head_cache = kmem_cache_create("skbuff_head_cache", SKB_HEAD_SIZE, 0, SLAB_HWCACHE_ALIGN, NULL);
	if (!skbuff_head_cache) {
		fprintf(stderr, "bench_sched_messaging: kmem_cache_create failed\n");
		exit(1);
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	atomic_store(&ready, 0);
	atomic_store(&go, 0);
	for (int g = 0; g < groups; g++) {
		for (int r = 0; r < NR_FDS; r++) {
			int i = g * NR_FDS + r;
			if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds[i])) {
				perror("bench_sched_messaging: socketpair");
				exit(1);
			}
			rcv[i].rfd = fds[i][0];
			rcv[i].expect = (unsigned long)loops * NR_FDS;
			if (pthread_create(&tid[t++], &attr, receiver_fn, &rcv[i])) {
				perror("bench_sched_messaging: pthread_create");
				exit(1);
			}
		}
		for (int s = 0; s < NR_FDS; s++) {
			struct sender *sd = &snd[g * NR_FDS + s];
			sd->id = (unsigned int)(g * NR_FDS + s);
			for (int r = 0; r < NR_FDS; r++)
				sd->wfd[r] = fds[g * NR_FDS + r][1];
			if (pthread_create(&tid[t++], &attr, sender_fn, sd)) {
				perror("bench_sched_messaging: pthread_create");
				exit(1);
			}
		}
	}
	while (atomic_load(&ready) < nthreads)
		sched_yield();
	double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	atomic_store_explicit(&go, 1, memory_order_release);
	for (int i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	res->wall_s = now_s(CLOCK_MONOTONIC) - w0;
	res->cpu_s = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	res->messages = (unsigned long)groups * NR_FDS * NR_FDS * (unsigned long)loops;
	for (int i = 0; i < groups * NR_FDS; i++) {
		res->bad += rcv[i].bad;
		close(fds[i][0]);
		close(fds[i][1]);
	}
	bad_total += res->bad;
	res->state = 1;
	pthread_attr_destroy(&attr);
	free(tid);
	free(snd);
	free(rcv);
	free(fds);
}

struct job {
	int cfg;
	struct run_result *res;
};

static void child(void *arg)
{
	struct job *j = arg;

	alarm(run_limit);	/* a configuration that hangs is killed and marked, the others still run */
	if (sa_boot(BASE_CMDLINE, cfgs[j->cfg].params)) {
		j->res->state = -1;
		return;
	}
	run_messaging(j->res);
}

/* Cachegrind's summary figure "@key ... misses: N" (its stderr), or -1. */
static double cg_field(const char *text, const char *key)
{
	const char *p = text;

	while ((p = strstr(p, key))) {
		const char *colon = strchr(p, ':');
		if (!colon)
			break;
		char num[64];
		size_t k = 0;
		for (const char *q = colon + 1; *q && *q != '\n' && k < sizeof(num) - 1; q++)
			if ((*q >= '0' && *q <= '9'))
				num[k++] = *q;
			else if (k && *q == ' ')
				break;
		num[k] = '\0';
		if (k)
			return atof(num);
		p = colon;
	}
	return -1;
}

struct cg_result {
	int state;		/* 1 ok, -1 n/a, -2 failed, -4 no valgrind */
	double irefs, drefs, d1_misses, ll_misses, lld_misses;
	double d1_lo, d1_hi, ll_lo, ll_hi;	/* over the runs (the figures above: medians) */
};

/* One configuration under cachegrind: this program again, in child mode (-C). */
static void cachegrind(int cfg, int g, int l, struct cg_result *r)
{
	char self[PATH_MAX], kmem[PATH_MAX + 64];
	char cfgs_s[16], gs[16], ls[16], err[PATH_MAX];

	if (!bench_self_and_kmem(self, kmem)) {
		r->state = -2;
		return;
	}
	snprintf(cfgs_s, sizeof(cfgs_s), "%d", cfg);
	snprintf(gs, sizeof(gs), "%d", g);
	snprintf(ls, sizeof(ls), "%d", l);
	snprintf(err, sizeof(err), "/tmp/bench_sched_messaging.%d.%d.cg", (int)getpid(), cfg);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int nul = open("/dev/null", O_WRONLY);
		if (fd < 0 || nul < 0)
			_exit(126);
		dup2(fd, 2);
		dup2(nul, 1);
		alarm(run_limit);	/* kept across the exec: a hung run is killed */
		/* --fair-sched: threads take turns in order, which keeps the counts within a few % run to run. */
		execlp("valgrind", "valgrind", "--tool=cachegrind", "--cache-sim=yes", "--fair-sched=yes",
		       "--cachegrind-out-file=/dev/null", self, "-C", cfgs_s, "-g", gs, "-l", ls, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		r->state = -2;
		return;
	}
	static char text[1 << 16];
	FILE *f = fopen(err, "r");
	size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	if (f)
		fclose(f);
	text[n] = '\0';
	unlink(err);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		r->state = -4;
		return;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
		r->state = -1;	/* the child's "did not boot" */
		return;
	}
	r->irefs = cg_field(text, "I   refs");
	r->drefs = cg_field(text, "D   refs");
	r->d1_misses = cg_field(text, "D1  misses");
	r->lld_misses = cg_field(text, "LLd misses");
	r->ll_misses = cg_field(text, "LL misses");
	r->state = WIFEXITED(status) && !WEXITSTATUS(status) && r->d1_misses >= 0 ? 1 : -2;
	if (r->state != 1)
		fprintf(stderr, "bench_sched_messaging: cachegrind run of %s failed:\n%s\n", cfgs[cfg].label,
			text + (n > 2000 ? n - 2000 : 0));
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_sched_messaging [-g GROUPS] [-l LOOPS] [-r RUNS] [-a KEYS] [-m] [-G GROUPS] [-L LOOPS]\n"
		"  -g, -l    groups of %d senders and %d receivers, messages per sender and receiver pair\n"
		"            (default 10 and 100; the patch: -g 50 -l 1000)\n"
		"  -r RUNS   timed native runs per configuration, medians (default 3)\n"
		"  -a KEYS   configurations, of slub,before,prev,byte (default all)\n"
		"  -m        also count cache misses under valgrind's cachegrind, with -G/-L (default 5 and 200),\n"
		"            -M runs per configuration, medians (default 3)\n"
		"  -T SECS   a run (native or under valgrind) that takes longer is killed: FAILED (default 120)\n"
		"  -C N      (internal) run configuration N once in this process and print its RESULT\n",
		NR_FDS, NR_FDS);
	exit(2);
}

int main(int argc, char **argv)
{
	int runs = 3, cg_groups = 5, cg_loops = 200, cg_runs = 3, only = -1, opt;
	bool misses = false, on[NR_CFG];

	for (int i = 0; i < NR_CFG; i++)
		on[i] = true;
	while ((opt = getopt(argc, argv, "g:l:r:a:mG:L:M:T:C:h")) != -1) {
		switch (opt) {
		case 'g': groups = atoi(optarg); break;
		case 'l': loops = atoi(optarg); break;
		case 'r': runs = atoi(optarg); break;
		case 'a':
			if (!sa_select(cfgs, NR_CFG, optarg, on))
				usage();
			break;
		case 'm': misses = true; break;
		case 'G': cg_groups = atoi(optarg); break;
		case 'L': cg_loops = atoi(optarg); break;
		case 'M': cg_runs = atoi(optarg); break;
		case 'T': run_limit = (unsigned int)atoi(optarg); break;
		case 'C': only = atoi(optarg); break;
		default: usage();
		}
	}
	if (groups < 1 || groups > MAX_GROUPS || loops < 1 || runs < 1 || runs > 31 || cg_groups < 1 ||
	    cg_groups > MAX_GROUPS || cg_loops < 1 || cg_runs < 1 || cg_runs > 31 || only >= NR_CFG)
		usage();

	if (only >= 0) {	/* child mode, e.g. under valgrind */
		struct run_result r = { 0 };
		if (sa_boot(BASE_CMDLINE, cfgs[only].params))
			return 3;
		run_messaging(&r);
		printf("RESULT cfg=%s wall_s=%.4f cpu_s=%.4f messages=%lu bad=%lu\n", cfgs[only].key, r.wall_s,
		       r.cpu_s, r.messages, r.bad);
		return r.bad ? 1 : 0;
	}

	struct run_result *res = bench_shared(sizeof(*res) * NR_CFG * (size_t)runs);
	struct cg_result cg[NR_CFG];
	memset(cg, 0, sizeof(cg));
	if (!res)
		return 1;
	/* Interleaved: for each run, each configuration. */
	for (int k = 0; k < runs; k++)
		for (int c = 0; c < NR_CFG; c++) {
			if (!on[c])
				continue;
			if (k > 0 && res[c * runs].state != 1) {
				res[c * runs + k].state = res[c * runs].state;	/* no second try of a failure */
				continue;
			}
			struct job j = { c, &res[c * runs + k] };
			uint64_t t0 = bench_now_ns();
			if (!bench_fork(child, &j) && j.res->state != -1)
				j.res->state = bench_now_ns() - t0 >= (uint64_t)run_limit * 1000000000ull ? -5 : -2;
		}
	bool have_vg = misses && bench_have("valgrind");
	for (int c = 0; misses && c < NR_CFG; c++)
		if (on[c]) {
			if (res[c * runs].state == -1)
				cg[c].state = -1;	/* it did not boot natively either */
			else if (res[c * runs].state != 1)
				cg[c].state = -2;	/* it failed natively: not again, slower */
			else if (have_vg) {
				struct cg_result one[31];
				double ir[31], d1[31], ll[31];
				int n = 0;
				for (int k = 0; k < cg_runs; k++) {
					memset(&one[k], 0, sizeof(one[k]));
					cachegrind(c, cg_groups, cg_loops, &one[k]);
					if (one[k].state != 1) {
						cg[c].state = one[k].state;
						break;
					}
					ir[n] = one[k].irefs;
					d1[n] = one[k].d1_misses;
					ll[n++] = one[k].ll_misses;
				}
				if (n == cg_runs) {
					cg[c].state = 1;
					cg[c].irefs = bench_median(ir, n);
					cg[c].d1_misses = bench_median(d1, n);
					cg[c].d1_lo = d1[0];
					cg[c].d1_hi = d1[n - 1];
					cg[c].ll_misses = bench_median(ll, n);
					cg[c].ll_lo = ll[0];
					cg[c].ll_hi = ll[n - 1];
				}
			}
			else
				cg[c].state = -4;
		}

	printf("bench_sched_messaging: perf bench sched messaging's counterpart (thread mode), the benchmark\n"
	       "of the SLAB byte-sized freelist index (Kim 2013). Groups of %d sender and %d receiver threads;\n"
	       "each message: a %d-byte skbuff_head_cache object and a kmalloc(%d), %d bytes of payload,\n"
	       "sent as a pointer through a UNIX stream socket, checked and freed by the receiver.\n\n",
	       NR_FDS, NR_FDS, SKB_HEAD_SIZE, SKB_DATA_SIZE, DATASIZE);
	printf("Time: -g %d -l %d (%lu messages), medians of %d interleaved runs; CPU: the process's.\n\n", groups,
	       loops, (unsigned long)groups * NR_FDS * NR_FDS * (unsigned long)loops, runs);
	double mw[NR_CFG], mu[NR_CFG];
	int st[NR_CFG], base = -1;
	for (int c = 0; c < NR_CFG; c++) {
		double w[31], u[31];
		int n = 0;
		st[c] = on[c] ? 1 : 0;
		for (int k = 0; on[c] && k < runs; k++) {
			const struct run_result *r = &res[c * runs + k];
			if (r->state != 1) {
				st[c] = r->state;
				break;
			}
			w[n] = r->wall_s;
			u[n++] = r->cpu_s;
			if (r->bad)
				st[c] = -3;
		}
		if (st[c] == 1) {
			mw[c] = bench_median(w, n);
			mu[c] = bench_median(u, n);
		}
	}
	/* Changes are against SLAB "before" (the patch's baseline) when it ran, else the first. */
	for (int c = 0; c < NR_CFG; c++)
		if (st[c] == 1 && (base < 0 || !strcmp(cfgs[c].key, "before")))
			base = c;
	printf("%-15s | %-46s | %9s | %9s | vs %s\n", "configuration", "boot parameters", "wall s", "cpu s",
	       base >= 0 ? cfgs[base].label : "-");
	for (int c = 0; c < NR_CFG; c++) {
		if (!on[c])
			continue;
		if (st[c] != 1) {
			printf("%-15s | %-46s | %s\n", cfgs[c].label, cfgs[c].params,
			       st[c] == -1   ? "n/a (does not boot in this build)"
			       : st[c] == -3 ? "FAILED (a message arrived corrupted)"
			       : st[c] == -5 ? "FAILED (did not finish within -T seconds: hung?)"
					     : "FAILED (the run crashed)");
			continue;
		}
		printf("%-15s | %-46s | %9.3f | %9.3f | %+.1f%%\n", cfgs[c].label, cfgs[c].params, mw[c], mu[c],
		       100 * (mw[c] / mw[base] - 1));
	}
	for (int c = 0; c < NR_CFG; c++)
		if (st[c] == 1)
			printf("RESULT cfg=%s wall_s=%.4f cpu_s=%.4f\n", cfgs[c].key, mw[c], mu[c]);
	if (misses) {
		printf("\nCache misses: cachegrind's simulated caches, medians of %d runs of -g %d -l %d (%lu messages)\n"
		       "each, the whole program (--fair-sched=yes); per message; [range over the runs].\n\n",
		       cg_runs, cg_groups, cg_loops, (unsigned long)cg_groups * NR_FDS * NR_FDS * (unsigned long)cg_loops);
		int cbase = -1;
		for (int c = 0; c < NR_CFG; c++)
			if (on[c] && cg[c].state == 1 && (cbase < 0 || !strcmp(cfgs[c].key, "before")))
				cbase = c;
		printf("%-15s | %12s | %12s | %12s | %10s | %10s | D1, LL vs %s\n", "configuration", "I refs",
		       "D1 misses", "LL misses", "D1/msg", "LL/msg", cbase >= 0 ? cfgs[cbase].label : "-");
		double msgs = (double)cg_groups * NR_FDS * NR_FDS * cg_loops;
		for (int c = 0; c < NR_CFG; c++) {
			if (!on[c])
				continue;
			const struct cg_result *r = &cg[c];
			if (r->state != 1) {
				printf("%-15s | %s\n", cfgs[c].label,
				       r->state == -1 ? "n/a (does not boot in this build)"
				       : r->state == -4 ? "n/a (valgrind is not installed)"
							: "FAILED");
				continue;
			}
			printf("%-15s | %12.0f | %12.0f | %12.0f | %10.2f | %10.3f | %+.1f%%, %+.1f%%   [D1 %.0f..%.0f, LL %.0f..%.0f]\n",
			       cfgs[c].label, r->irefs, r->d1_misses, r->ll_misses, r->d1_misses / msgs,
			       r->ll_misses / msgs, 100 * (r->d1_misses / cg[cbase].d1_misses - 1),
			       100 * (r->ll_misses / cg[cbase].ll_misses - 1), r->d1_lo, r->d1_hi, r->ll_lo, r->ll_hi);
			printf("RESULT cfg=%s cg_irefs=%.0f cg_d1_misses=%.0f cg_ll_misses=%.0f\n", cfgs[c].key, r->irefs,
			       r->d1_misses, r->ll_misses);
		}
	}
	printf("\nThe patch's figures (perf stat, 10 runs, 4 CPUs, -g 50 -l 1000, 20 M messages):\n");
	for (size_t i = 0; i < sizeof(kim2013) / sizeof(kim2013[0]); i++)
		printf("  %-27s %11.0f cache-misses (%+.1f%%)  %.3f s (%+.1f%%)\n", kim2013[i].what, kim2013[i].misses,
		       100 * (kim2013[i].misses / kim2013[0].misses - 1), kim2013[i].secs,
		       100 * (kim2013[i].secs / kim2013[0].secs - 1));
	return bad_total ? 1 : 0;
}
