// SPDX-License-Identifier: MIT
/*
 * kmem-trace import-perf PERF.txt -o FILE
 *
 * Reads the text `perf script` prints for the kernel's kmem tracepoints
 *
 *   cc1  3141 [001]  1617.274439: kmem:kmem_cache_alloc: call_site=... ptr=0xffff888103d550c0
 *        name=vm_area_struct bytes_req=192 bytes_alloc=192 gfp_flags=GFP_KERNEL ...
 *   cc1  3141 [001]  1617.274474: kmem:mm_page_alloc: page=0x10376c pfn=0x10376c order=0
 *        migratetype=0 gfp_flags=GFP_KERNEL_ACCOUNT|__GFP_ZERO|__GFP_COMP
 *
 * (kmalloc, kfree, kmem_cache_alloc, kmem_cache_free, their _node forms,
 * mm_page_alloc, mm_page_free, mm_page_free_batched) and writes a kernel
 * trace: one stream in the order of the lines.  A file ending in .xz is
 * read through xz -dc; "-" is standard input.  Which frees had no
 * allocation in the capture is settled when the trace is loaded.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

enum { EV_KMALLOC, EV_KFREE, EV_KC_ALLOC, EV_KC_FREE, EV_PG_ALLOC, EV_PG_FREE, EV_PG_FREE_BATCHED,
       EV_OTHER, EV_NR };

static const struct {
	const char *name;
	int ev;
} events[] = {
	{ "kmalloc", EV_KMALLOC }, { "kmalloc_node", EV_KMALLOC }, { "kfree", EV_KFREE },
	{ "kmem_cache_alloc", EV_KC_ALLOC }, { "kmem_cache_alloc_node", EV_KC_ALLOC },
	{ "kmem_cache_free", EV_KC_FREE }, { "mm_page_alloc", EV_PG_ALLOC },
	{ "mm_page_free", EV_PG_FREE }, { "mm_page_free_batched", EV_PG_FREE_BATCHED },
};

static const char *const ev_names[EV_NR] = {
	"kmalloc", "kfree", "kmem_cache_alloc", "kmem_cache_free", "mm_page_alloc", "mm_page_free",
	"mm_page_free_batched", "other kmem events",
};

/* Cache names -> ids: a small open-addressing table. */
struct names {
	char **name;
	uint32_t *id;
	size_t mask, n;
	char **by_id;
};

static uint64_t hash_str(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

static int name_id(struct names *t, const char *s, size_t len)
{
	if ((t->n + 1) * 2 > t->mask) {
		size_t cap = (t->mask + 1) * 2;
		char **nn = calloc(cap, sizeof(*nn));
		uint32_t *ni = calloc(cap, sizeof(*ni));
		if (!nn || !ni)
			return -1;
		for (size_t i = 0; i <= t->mask; i++) {
			if (!t->name[i])
				continue;
			size_t j = hash_str(t->name[i], strlen(t->name[i])) & (cap - 1);
			while (nn[j])
				j = (j + 1) & (cap - 1);
			nn[j] = t->name[i];
			ni[j] = t->id[i];
		}
		free(t->name);
		free(t->id);
		t->name = nn;
		t->id = ni;
		t->mask = cap - 1;
	}
	size_t j = hash_str(s, len) & t->mask;
	while (t->name[j]) {
		if (!strncmp(t->name[j], s, len) && !t->name[j][len])
			return (int)t->id[j];
		j = (j + 1) & t->mask;
	}
	if (t->n >= 65535)
		return -1;
	t->name[j] = strndup(s, len);
	t->id[j] = (uint32_t)t->n;
	char **b = realloc(t->by_id, (t->n + 1) * sizeof(*b));
	if (!t->name[j] || !b)
		return -1;
	t->by_id = b;
	b[t->n] = t->name[j];
	return (int)t->n++;
}

/* The value of " key=" in [p, end): its start, and its length in *len. */
static const char *field(const char *p, const char *end, const char *key, size_t *len)
{
	size_t kl = strlen(key);

	for (const char *q = p; q + kl < end; q++) {
		q = memchr(q, key[0], (size_t)(end - q));
		if (!q || q + kl >= end)
			return NULL;
		if ((q == p || q[-1] == ' ') && !memcmp(q, key, kl) && q[kl] == '=') {
			const char *v = q + kl + 1, *e = v;
			while (e < end && *e != ' ' && *e != '\n')
				e++;
			*len = (size_t)(e - v);
			return v;
		}
	}
	return NULL;
}

/* A number (0x... hex, or decimal); false for "(nil)" or none. */
static bool num_field(const char *p, const char *end, const char *key, uint64_t *v)
{
	size_t len;
	const char *s = field(p, end, key, &len);
	char *e;

	if (!s || !len || *s == '(')
		return false;
	errno = 0;
	*v = strtoull(s, &e, 0);
	return !errno && e == s + len;
}

/* "1617.274439" -> ns. */
static uint64_t stamp_ns(const char *s, const char *end)
{
	uint64_t sec = 0, frac = 0;
	int digits = 0;

	while (s < end && *s >= '0' && *s <= '9')
		sec = sec * 10 + (uint64_t)(*s++ - '0');
	if (s < end && *s == '.')
		for (s++; s < end && *s >= '0' && *s <= '9' && digits < 9; digits++)
			frac = frac * 10 + (uint64_t)(*s++ - '0');
	while (digits++ < 9)
		frac *= 10;
	return sec * 1000000000ull + frac;
}

static int usage(void)
{
	fprintf(stderr, "usage: %s import-perf PERF-SCRIPT.txt[.xz]|- -o FILE\n"
			"  the text of: perf record -e 'kmem:*' -a ...; perf script\n", prog);
	return 2;
}

int cmd_import_perf(int argc, char **argv)
{
	const char *out = NULL;
	int c;

	optind = 1;
	while ((c = getopt(argc, argv, "o:h")) != -1) {
		if (c != 'o')
			return usage();
		out = optarg;
	}
	if (!out || optind != argc - 1)
		return usage();
	const char *in = argv[optind];
	size_t il = strlen(in);
	bool xz = il > 3 && !strcmp(in + il - 3, ".xz");
	FILE *f;
	if (!strcmp(in, "-")) {
		f = stdin;
	} else if (xz) {
		FILE *probe = fopen(in, "rb");
		if (!probe) {
			fprintf(stderr, "%s: %s: %s\n", prog, in, strerror(errno));
			return 1;
		}
		fclose(probe);
		char cmd[4200];
		/* The name goes in quotes; a quote in it is refused rather than escaped. */
		if (strchr(in, '\'')) {
			fprintf(stderr, "%s: %s: a quote in the name\n", prog, in);
			return 1;
		}
		snprintf(cmd, sizeof(cmd), "xz -dc -- '%s'", in);
		f = popen(cmd, "r");
	} else {
		f = fopen(in, "r");
	}
	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog, in, strerror(errno));
		return 1;
	}

	struct trace_writer w;
	struct names names = { .name = calloc(256, sizeof(char *)), .id = calloc(256, sizeof(uint32_t)),
			       .mask = 255 };
	size_t count[EV_NR] = { 0 }, lines = 0, null_frees = 0, failed = 0, bad_lines = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	if (!names.name || !names.id || tw_open(&w, out, TRACE_KIND_KERNEL)) {
		if (f != stdin)
			xz ? pclose(f) : fclose(f);
		return 1;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		lines++;
		const char *end = line + n;
		const char *k = strstr(line, " kmem:");
		if (!k)
			continue;
		const char *ev = k + 6, *evend = memchr(ev, ':', (size_t)(end - ev));
		if (!evend) {
			bad_lines++;
			continue;
		}
		int e = EV_OTHER;
		for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
			if ((size_t)(evend - ev) == strlen(events[i].name) &&
			    !memcmp(ev, events[i].name, (size_t)(evend - ev)))
				e = events[i].ev;
		count[e]++;
		if (e == EV_OTHER)
			continue;
		/* The stamp ends with ':' just before the event: "  1617.274439: kmem:..." */
		const char *s = k;
		while (s > line && s[-1] == ' ')
			s--;
		if (s == line || s[-1] != ':') {
			bad_lines++;
			continue;
		}
		const char *te = s - 1, *ts = te;
		while (ts > line && ts[-1] != ' ')
			ts--;
		uint64_t ns = stamp_ns(ts, te), ptr = 0, req = 0, order = 0, mt = 0;
		const char *args = evend + 1;
		size_t len;
		const char *nm;
		switch (e) {
		case EV_KMALLOC:
			if (!num_field(args, end, "ptr", &ptr) || !ptr) {
				failed++;
				break;
			}
			if (!num_field(args, end, "bytes_req", &req)) {
				bad_lines++;
				break;
			}
			tw_op(&w, OP_KMALLOC, ns, ptr, req, 0);
			break;
		case EV_KFREE:
			if (!num_field(args, end, "ptr", &ptr) || !ptr) {
				null_frees++;
				break;
			}
			tw_op(&w, OP_KFREE, ns, ptr, 0, 0);
			break;
		case EV_KC_ALLOC:
		case EV_KC_FREE: {
			bool alloc = e == EV_KC_ALLOC;
			if (!num_field(args, end, "ptr", &ptr) || !ptr) {
				alloc ? failed++ : null_frees++;
				break;
			}
			nm = field(args, end, "name", &len);
			if (!nm || !len || len > 255 || (alloc && !num_field(args, end, "bytes_req", &req))) {
				bad_lines++;
				break;
			}
			int id = name_id(&names, nm, len);
			if (id < 0) {
				fprintf(stderr, "%s: %s: more than 65535 cache names, or out of memory\n", prog, in);
				goto fail;
			}
			if (alloc)
				tw_op(&w, OP_KC_ALLOC, ns, ptr, req, (uint64_t)id);
			else
				tw_op(&w, OP_KC_FREE, ns, ptr, 0, (uint64_t)id);
			break;
		}
		case EV_PG_ALLOC:
		case EV_PG_FREE:
		case EV_PG_FREE_BATCHED: {
			nm = field(args, end, "page", &len);
			if (!num_field(args, end, "pfn", &ptr) || (nm && *nm == '(') || !ptr ||
			    ptr >= (1ull << 52)) {
				e == EV_PG_ALLOC ? failed++ : null_frees++;
				break;
			}
			if (e != EV_PG_FREE_BATCHED && !num_field(args, end, "order", &order)) {
				bad_lines++;
				break;
			}
			if (order > 10) {
				bad_lines++;
				break;
			}
			if (e == EV_PG_ALLOC) {
				/* 0 unmovable, 1 movable, 2 reclaimable; the others (highatomic,
				 * cma, isolate) are taken as unmovable. */
				if (!num_field(args, end, "migratetype", &mt) || mt > 2)
					mt = 0;
				tw_op(&w, OP_PG_ALLOC, ns, ptr, 0, order | mt << 4);
			} else {
				tw_op(&w, OP_PG_FREE, ns, ptr, 0, order);
			}
			break;
		}
		}
	}
	free(line);
	line = NULL;
	int rerr = ferror(f);
	int st = f == stdin ? 0 : xz ? pclose(f) : fclose(f);
	f = NULL;
	if (rerr || st) {
		fprintf(stderr, "%s: %s: read error%s\n", prog, in, xz ? " (xz -dc failed)" : "");
		goto fail;
	}
	if (!w.ops) {
		fprintf(stderr, "%s: %s: no kmem events (kmem:kmalloc, kmem:kfree, kmem:kmem_cache_alloc, "
				"kmem:kmem_cache_free, kmem:mm_page_alloc, kmem:mm_page_free) in %zu lines\n",
			prog, in, lines);
		goto fail;
	}
	/* The cache names, then what was read. */
	{
		size_t sz = 0;
		for (size_t i = 0; i < names.n; i++)
			sz += 20 + strlen(names.by_id[i]);
		uint8_t *buf = malloc(sz + 1), *p = buf;
		if (!buf)
			goto fail;
		for (size_t i = 0; i < names.n; i++) {
			size_t l = strlen(names.by_id[i]);
			p = put_varint(p, i);
			p = put_varint(p, l);
			memcpy(p, names.by_id[i], l);
			p += l;
		}
		if (names.n)
			tw_chunk(&w, CHUNK_NAMES, buf, (size_t)(p - buf));
		free(buf);
		char info[1024];
		int il2 = snprintf(info, sizeof(info),
				   "source=perf script\nlines=%zu\nkmalloc=%zu\nkfree=%zu\nkmem_cache_alloc=%zu\n"
				   "kmem_cache_free=%zu\nmm_page_alloc=%zu\nmm_page_free=%zu\nnull_frees=%zu\n"
				   "failed_allocs=%zu\nbad_lines=%zu\ncaches=%zu\n",
				   lines, count[EV_KMALLOC], count[EV_KFREE], count[EV_KC_ALLOC],
				   count[EV_KC_FREE], count[EV_PG_ALLOC], count[EV_PG_FREE] + count[EV_PG_FREE_BATCHED],
				   null_frees, failed, bad_lines, names.n);
		tw_chunk(&w, CHUNK_INFO, info, (size_t)il2);
	}
	if (tw_close(&w))
		return 1;
	printf("%s: %zu lines, %llu operations written to %s\n", in, lines, (unsigned long long)w.ops, out);
	for (int i = 0; i < EV_NR; i++)
		if (count[i])
			printf("  %-22s %zu\n", ev_names[i], count[i]);
	printf("  frees of NULL (skipped) %zu, failed allocations %zu, lines not understood %zu, caches %zu\n",
	       null_frees, failed, bad_lines, names.n);
	for (size_t i = 0; i <= names.mask; i++)
		free(names.name[i]);
	free(names.name);
	free(names.id);
	free(names.by_id);
	return 0;
fail:
	for (size_t i = 0; names.name && i <= names.mask; i++)
		free(names.name[i]);
	free(names.name);
	free(names.id);
	free(names.by_id);
	if (f && f != stdin)
		xz ? pclose(f) : fclose(f);
	free(line);
	fclose(w.f);
	free(w.buf);
	remove(out);
	return 1;
}
