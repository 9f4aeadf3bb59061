/* SPDX-License-Identifier: MIT */
/*
 * A minimal reader of the kernel's slab traffic as `perf script` prints it
 * (kmem:kmalloc, kmem:kfree, kmem:kmem_cache_alloc, kmem:kmem_cache_free;
 * see /work/shared/data/kernel-traces/README.md for the line format), for
 * replaying it on kmem's allocators.  Header only, used by bench_slab_mem.
 *
 * The capture is a window of a running system: a free of an object
 * allocated before it began is skipped; an allocation at an address the
 * trace still holds (its free fell outside the window, or events of the two
 * CPUs came out of order) frees the old object first and is counted as
 * such.  kfree(NULL) is skipped.  Objects are numbered in allocation order;
 * caches by name, each with the largest bytes_req seen for it (a cache's
 * object size).  A ".xz" file is read through `xz -dc`.
 */
#ifndef KMEM_PERF_TRACE_H
#define KMEM_PERF_TRACE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PT_KMALLOC	0xffffffffu	/* pt_obj.cache of a kmalloc */
#define PT_MAX_CACHES	4096
#define PT_NAME_MAX	48

struct pt_obj {
	uint32_t size;		/* bytes_req */
	uint32_t cache;		/* index in pt_trace.cache_name, or PT_KMALLOC */
};

struct pt_op {
	uint32_t obj;
	uint32_t is_free;
};

struct pt_trace {
	struct pt_obj *obj;
	uint32_t nobj, obj_cap;
	struct pt_op *op;
	uint32_t nop, op_cap;
	char (*cache_name)[PT_NAME_MAX];
	uint32_t *cache_size;
	uint32_t ncache;
	/* What the reader saw. */
	unsigned long lines, events, kmallocs, cache_allocs, kfrees, cache_frees;
	unsigned long free_unseen;	/* frees of objects allocated before the window */
	unsigned long free_null;	/* kfree(NULL) */
	unsigned long realloc_live;	/* allocations at an address still held: old object freed */
	unsigned long alloc_failed;	/* allocations that returned NULL */
	/* ptr -> object, open addressing (linear probing, backward-shift deletion). */
	uint64_t *key;
	uint32_t *val;
	uint32_t mask, used;
};

static inline uint32_t pt_hash(uint64_t p)
{
	p ^= p >> 33;
	p *= 0xff51afd7ed558ccdull;
	p ^= p >> 33;
	return (uint32_t)p;
}

static inline bool pt_map_grow(struct pt_trace *t)
{
	uint32_t cap = t->mask ? 2 * (t->mask + 1) : 1u << 16;
	uint64_t *key = calloc(cap, sizeof(*key));
	uint32_t *val = calloc(cap, sizeof(*val));

	if (!key || !val) {
		free(key);
		free(val);
		return false;
	}
	for (uint32_t i = 0; t->mask && i <= t->mask; i++) {
		if (!t->key[i])
			continue;
		uint32_t j = pt_hash(t->key[i]) & (cap - 1);
		while (key[j])
			j = (j + 1) & (cap - 1);
		key[j] = t->key[i];
		val[j] = t->val[i];
	}
	free(t->key);
	free(t->val);
	t->key = key;
	t->val = val;
	t->mask = cap - 1;
	return true;
}

/* The slot of @p, or of the empty slot where it would go. */
static inline uint32_t pt_map_slot(const struct pt_trace *t, uint64_t p)
{
	uint32_t i = pt_hash(p) & t->mask;

	while (t->key[i] && t->key[i] != p)
		i = (i + 1) & t->mask;
	return i;
}

static inline void pt_map_del(struct pt_trace *t, uint32_t i)
{
	uint32_t j = i;

	t->key[i] = 0;
	t->used--;
	for (;;) {
		j = (j + 1) & t->mask;
		if (!t->key[j])
			return;
		uint32_t home = pt_hash(t->key[j]) & t->mask;
		/* Move j back to i unless its home lies cyclically in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			t->key[i] = t->key[j];
			t->val[i] = t->val[j];
			t->key[j] = 0;
			i = j;
		}
	}
}

static inline bool pt_push_op(struct pt_trace *t, uint32_t obj, uint32_t is_free)
{
	if (t->nop == t->op_cap) {
		uint32_t cap = t->op_cap ? 2 * t->op_cap : 1u << 16;
		struct pt_op *op = realloc(t->op, cap * sizeof(*op));
		if (!op)
			return false;
		t->op = op;
		t->op_cap = cap;
	}
	t->op[t->nop++] = (struct pt_op){ obj, is_free };
	return true;
}

static inline int pt_cache_id(struct pt_trace *t, const char *name, size_t len, uint32_t size)
{
	if (len >= PT_NAME_MAX)
		len = PT_NAME_MAX - 1;
	for (uint32_t i = 0; i < t->ncache; i++)
		if (!strncmp(t->cache_name[i], name, len) && !t->cache_name[i][len]) {
			if (size > t->cache_size[i])
				t->cache_size[i] = size;
			return (int)i;
		}
	if (t->ncache == PT_MAX_CACHES)
		return -1;
	memcpy(t->cache_name[t->ncache], name, len);
	t->cache_name[t->ncache][len] = '\0';
	t->cache_size[t->ncache] = size;
	return (int)t->ncache++;
}

/* The text after " @key=" in @line, or NULL. */
static inline const char *pt_field(const char *line, const char *key)
{
	const char *p = line;
	size_t n = strlen(key);

	while ((p = strstr(p, key))) {
		if (p > line && p[-1] == ' ' && p[n] == '=')
			return p + n + 1;
		p += n;
	}
	return NULL;
}

/* One perf script line; false only when out of memory. */
static inline bool pt_line(struct pt_trace *t, const char *line)
{
	const char *ev = strstr(line, " kmem:");

	t->lines++;
	if (!ev)
		return true;
	ev += 6;
	bool kmalloc = !strncmp(ev, "kmalloc:", 8), kfree = !strncmp(ev, "kfree:", 6);
	bool calloc_ = !strncmp(ev, "kmem_cache_alloc:", 17), cfree = !strncmp(ev, "kmem_cache_free:", 16);
	if (!kmalloc && !kfree && !calloc_ && !cfree)
		return true;
	t->events++;
	const char *ps = pt_field(ev, "ptr");
	if (!ps)
		return true;
	uint64_t ptr = strncmp(ps, "(nil)", 5) ? strtoull(ps, NULL, 16) : 0;

	if (kfree || cfree) {
		kfree ? t->kfrees++ : t->cache_frees++;
		if (!ptr) {
			t->free_null++;
			return true;
		}
		uint32_t i = pt_map_slot(t, ptr);
		if (!t->key[i]) {
			t->free_unseen++;
			return true;
		}
		uint32_t obj = t->val[i];
		pt_map_del(t, i);
		return pt_push_op(t, obj, 1);
	}

	kmalloc ? t->kmallocs++ : t->cache_allocs++;
	if (!ptr) {
		t->alloc_failed++;
		return true;
	}
	const char *bs = pt_field(ev, "bytes_req");
	uint32_t size = bs ? (uint32_t)strtoul(bs, NULL, 10) : 0;
	uint32_t cache = PT_KMALLOC;
	if (calloc_) {
		const char *nm = pt_field(ev, "name");
		if (!nm)
			return true;
		int id = pt_cache_id(t, nm, strcspn(nm, " \n"), size);
		if (id < 0)
			return true;
		cache = (uint32_t)id;
	}
	if (!size)
		size = 1;
	if ((t->used + 1) * 2 > t->mask + 1 && !pt_map_grow(t))
		return false;
	uint32_t i = pt_map_slot(t, ptr);
	if (t->key[i]) {
		t->realloc_live++;
		if (!pt_push_op(t, t->val[i], 1))
			return false;
	} else {
		t->key[i] = ptr;
		t->used++;
	}
	if (t->nobj == t->obj_cap) {
		uint32_t cap = t->obj_cap ? 2 * t->obj_cap : 1u << 16;
		struct pt_obj *o = realloc(t->obj, cap * sizeof(*o));
		if (!o)
			return false;
		t->obj = o;
		t->obj_cap = cap;
	}
	t->obj[t->nobj] = (struct pt_obj){ size, cache };
	t->val[i] = t->nobj;
	return pt_push_op(t, t->nobj++, 0);
}

static inline void pt_free(struct pt_trace *t)
{
	free(t->obj);
	free(t->op);
	free(t->cache_name);
	free(t->cache_size);
	free(t->key);
	free(t->val);
	memset(t, 0, sizeof(*t));
}

/*
 * Read @path (perf script text, or .xz of it), at most @max_events slab
 * events (0: all).  0, or -1 with a message on stderr.
 */
static inline int pt_read(struct pt_trace *t, const char *path, unsigned long max_events)
{
	size_t n = strlen(path);
	bool xz = n > 3 && !strcmp(path + n - 3, ".xz");
	FILE *f;
	char line[4096];

	memset(t, 0, sizeof(*t));
	t->cache_name = calloc(PT_MAX_CACHES, sizeof(*t->cache_name));
	t->cache_size = calloc(PT_MAX_CACHES, sizeof(*t->cache_size));
	if (!t->cache_name || !t->cache_size || !pt_map_grow(t)) {
		pt_free(t);
		fprintf(stderr, "perf_trace: out of memory\n");
		return -1;
	}
	if (xz) {
		char cmd[PATH_MAX + 32];
		if (strchr(path, '\'')) {
			fprintf(stderr, "perf_trace: %s: quote in the path\n", path);
			pt_free(t);
			return -1;
		}
		snprintf(cmd, sizeof(cmd), "xz -dc '%s'", path);
		f = popen(cmd, "r");
	} else {
		f = fopen(path, "r");
	}
	if (!f) {
		fprintf(stderr, "perf_trace: cannot read %s\n", path);
		pt_free(t);
		return -1;
	}
	bool ok = true;
	while ((!max_events || t->events < max_events) && fgets(line, sizeof(line), f))
		if (!pt_line(t, line)) {
			ok = false;
			break;
		}
	int rc = xz ? pclose(f) : fclose(f);
	/* Stopping early closes the pipe under xz: its SIGPIPE is no error. */
	if (!ok || (rc && !(max_events && t->events >= max_events)) || !t->nop) {
		fprintf(stderr, "perf_trace: %s: %s\n", path,
			!ok ? "out of memory" : !t->nop ? "no slab events" : "read error");
		pt_free(t);
		return -1;
	}
	return 0;
}

#endif /* KMEM_PERF_TRACE_H */
