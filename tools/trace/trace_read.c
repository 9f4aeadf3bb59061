// SPDX-License-Identifier: MIT
/*
 * Loading a trace: check the header and every chunk (length, checksum),
 * decode each thread's operations, merge the threads by timestamp, and
 * turn addresses into slots.  Any damage is one line on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"

void *big_alloc(size_t size)
{
	void *p = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void *big_realloc(void *p, size_t old_size, size_t new_size)
{
	if (!p)
		return big_alloc(new_size);
	void *n = mremap(p, old_size ? old_size : 1, new_size, MREMAP_MAYMOVE);
	return n == MAP_FAILED ? NULL : n;
}

void big_free(void *p, size_t size)
{
	if (p)
		munmap(p, size ? size : 1);
}

/* ---- address -> slot map: open addressing, linear probing ------------- */

struct amap {
	uint64_t *keys;		/* 0: empty */
	uint32_t *vals;
	size_t mask, used;
};

static int amap_init(struct amap *m, size_t cap)
{
	size_t n = 1024;

	while (n < cap * 2)
		n <<= 1;
	m->keys = big_alloc(n * sizeof(*m->keys));
	m->vals = big_alloc(n * sizeof(*m->vals));
	m->mask = n - 1;
	m->used = 0;
	return m->keys && m->vals ? 0 : -1;
}

static inline size_t amap_hash(const struct amap *m, uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & m->mask;
}

/* The slot of @key, or NO_SLOT; *at is where it is or would go. */
static inline uint32_t amap_find(const struct amap *m, uint64_t key, size_t *at)
{
	size_t i = amap_hash(m, key);

	while (m->keys[i]) {
		if (m->keys[i] == key) {
			*at = i;
			return m->vals[i];
		}
		i = (i + 1) & m->mask;
	}
	*at = i;
	return NO_SLOT;
}

static int amap_grow(struct amap *m)
{
	struct amap n;

	if (amap_init(&n, (m->mask + 1)))
		return -1;
	for (size_t i = 0; i <= m->mask; i++) {
		if (m->keys[i]) {
			size_t at;
			amap_find(&n, m->keys[i], &at);
			n.keys[at] = m->keys[i];
			n.vals[at] = m->vals[i];
			n.used++;
		}
	}
	big_free(m->keys, (m->mask + 1) * sizeof(*m->keys));
	big_free(m->vals, (m->mask + 1) * sizeof(*m->vals));
	*m = n;
	return 0;
}

/* Backward-shift deletion: no tombstones, lookups stay short. */
static void amap_delete(struct amap *m, size_t i)
{
	size_t j = i;

	m->used--;
	for (;;) {
		m->keys[i] = 0;
		for (;;) {
			j = (j + 1) & m->mask;
			if (!m->keys[j])
				return;
			size_t k = amap_hash(m, m->keys[j]);
			/* Can the entry at j move to i? Only if its home is not in (i, j]. */
			if (i <= j ? (k <= i || k > j) : (k <= i && k > j))
				break;
		}
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
}

/* ---- errors ------------------------------------------------------------- */

static const char *cur_path;

__attribute__((format(printf, 1, 2))) static int bad(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s: ", prog, cur_path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* ---- per-thread decoding ------------------------------------------------ */

struct ev {
	uint8_t op, aux;
	uint64_t tsc, a, b, c;	/* as in the format: addresses, sizes, cache */
};

struct tstream {
	uint32_t tid;
	size_t *chunks;		/* offsets of its chunk heads, in file order */
	size_t nr, cap, next_chunk;
	const uint8_t *p, *end;
	uint64_t prev_tsc, prev_addr, prev_site;
	struct ev ev;		/* the next op, if have */
	bool have;
};

static const uint8_t *file;
static size_t file_size;

/* Decode the next op of @s into s->ev; false at its end; -1 (via *err) on damage. */
static bool ts_next(struct tstream *s, int *err)
{
	uint64_t v;

	while (s->p == s->end) {
		if (s->next_chunk == s->nr)
			return false;
		struct chunk_head h;
		memcpy(&h, file + s->chunks[s->next_chunk], sizeof(h));
		s->p = file + s->chunks[s->next_chunk] + sizeof(h);
		s->end = s->p + h.len;
		s->prev_tsc = h.tsc;
		s->prev_addr = s->prev_site = 0;
		s->next_chunk++;
	}
	const uint8_t *p = s->p, *e = s->end;
	struct ev *ev = &s->ev;
	uint8_t code = *p++;
	ev->op = code & OP_MASK;
	ev->aux = 0;
	ev->a = ev->b = ev->c = 0;
	if (!(p = get_varint(p, e, &v)))
		goto corrupt;
	s->prev_tsc += (uint64_t)unzigzag(v);
	ev->tsc = s->prev_tsc;
	switch (ev->op) {
	case OP_MALLOC:
	case OP_CALLOC:
	case OP_KMALLOC:
		if (!(p = get_varint(p, e, &ev->b)) || !(p = get_addr(p, e, &s->prev_addr, &ev->a)))
			goto corrupt;
		break;
	case OP_REALLOC:
		if (!(p = get_addr(p, e, &s->prev_addr, &ev->c)) || !(p = get_varint(p, e, &ev->b)) ||
		    !(p = get_addr(p, e, &s->prev_addr, &ev->a)))
			goto corrupt;
		break;
	case OP_FREE:
	case OP_KFREE:
		if (!(p = get_addr(p, e, &s->prev_addr, &ev->a)))
			goto corrupt;
		break;
	case OP_MEMALIGN:
		if (p >= e || *p > 40)
			goto corrupt;
		ev->aux = *p++;
		if (!(p = get_varint(p, e, &ev->b)) || !(p = get_addr(p, e, &s->prev_addr, &ev->a)))
			goto corrupt;
		break;
	case OP_KC_ALLOC:
		if (!(p = get_varint(p, e, &ev->c)) || !(p = get_varint(p, e, &ev->b)) ||
		    !(p = get_addr(p, e, &s->prev_addr, &ev->a)))
			goto corrupt;
		break;
	case OP_KC_FREE:
		if (!(p = get_varint(p, e, &ev->c)) || !(p = get_addr(p, e, &s->prev_addr, &ev->a)))
			goto corrupt;
		break;
	case OP_PG_ALLOC:
	case OP_PG_FREE:
		if (p >= e || (*p & 15) > 10)
			goto corrupt;
		ev->aux = *p++;
		if (!(p = get_addr(p, e, &s->prev_addr, &ev->a)))
			goto corrupt;
		break;
	default:
		goto corrupt;
	}
	if (code & OPF_SITE) {
		if (!(p = get_varint(p, e, &v)))
			goto corrupt;
	}
	s->p = p;
	return true;
corrupt:
	*err = bad("corrupt trace: a bad operation in the chunk at offset %zu",
		   s->chunks[s->next_chunk - 1]);
	return false;
}

/* ---- the merge and the slots ------------------------------------------- */

struct builder {
	struct trace *t;
	struct amap map;
	size_t ops_cap;
	/* per slot: what it holds */
	uint8_t *sop;		/* the allocating op */
	uint8_t *saux;
	uint32_t *scache, *ssize;
	uint32_t *free_slots;
	size_t nr_free, slots_cap;
	uint64_t live;
};

static int emit(struct builder *b, struct rop r)
{
	struct trace *t = b->t;

	if (t->nr_ops == b->ops_cap) {
		size_t n = b->ops_cap ? b->ops_cap * 2 : 1 << 16;
		struct rop *o = big_realloc(t->ops, b->ops_cap * sizeof(*o), n * sizeof(*o));
		if (!o)
			return bad("out of memory loading %zu operations", t->nr_ops);
		t->ops = o;
		b->ops_cap = n;
		t->ops_bytes = n * sizeof(*o);
	}
	t->ops[t->nr_ops++] = r;
	return 0;
}

static uint32_t slot_get(struct builder *b)
{
	if (b->nr_free)
		return b->free_slots[--b->nr_free];
	if (b->t->nr_slots == b->slots_cap) {
		size_t n = b->slots_cap ? b->slots_cap * 2 : 1 << 12, o = b->slots_cap;
		b->sop = big_realloc(b->sop, o, n);
		b->saux = big_realloc(b->saux, o, n);
		b->scache = big_realloc(b->scache, o * sizeof(uint32_t), n * sizeof(uint32_t));
		b->ssize = big_realloc(b->ssize, o * sizeof(uint32_t), n * sizeof(uint32_t));
		b->free_slots = big_realloc(b->free_slots, o * sizeof(uint32_t), n * sizeof(uint32_t));
		if (!b->sop || !b->saux || !b->scache || !b->ssize || !b->free_slots)
			return NO_SLOT;
		b->slots_cap = n;
	}
	return b->t->nr_slots++;
}

static uint8_t free_op_of(uint8_t alloc_op)
{
	switch (alloc_op) {
	case OP_KC_ALLOC: return OP_KC_FREE;
	case OP_KMALLOC: return OP_KFREE;
	case OP_PG_ALLOC: return OP_PG_FREE;
	default: return OP_FREE;
	}
}

static inline uint64_t key_of(uint8_t op, uint64_t addr)
{
	/* Page frame numbers and addresses are apart: pfns are odd keys. */
	return (op == OP_PG_ALLOC || op == OP_PG_FREE) ? addr << 1 | 1 : addr;
}

/* Free the block at map position @at: the op names its slot and kind. */
static int free_at(struct builder *b, size_t at, uint16_t thread)
{
	uint32_t s = b->map.vals[at];
	struct rop r = { .op = free_op_of(b->sop[s]), .aux = b->saux[s], .thread = thread,
			 .slot = s, .old = b->scache[s], .size = b->ssize[s] };

	amap_delete(&b->map, at);
	b->free_slots[b->nr_free++] = s;
	b->live -= b->ssize[s];
	return emit(b, r);
}

static int add_block(struct builder *b, uint8_t op, uint8_t aux, uint64_t key, uint32_t cache,
		     uint64_t size, uint16_t thread, uint32_t *slot)
{
	size_t at;

	if (amap_find(&b->map, key, &at) != NO_SLOT) {
		/* Given again while live: its free was not seen (a lost event, or
		 * two threads' stamps out of order).  Free it first. */
		b->t->nr_implicit_frees++;
		if (free_at(b, at, thread))
			return -1;
		amap_find(&b->map, key, &at);
	}
	if (size > UINT32_MAX) {
		b->t->nr_clamped++;
		size = UINT32_MAX;
	}
	uint32_t s = slot_get(b);
	if (s == NO_SLOT)
		return bad("out of memory loading the trace");
	b->sop[s] = op;
	b->saux[s] = aux;
	b->scache[s] = cache;
	b->ssize[s] = (uint32_t)size;
	b->map.keys[at] = key;
	b->map.vals[at] = s;
	if (++b->map.used * 2 > b->map.mask && amap_grow(&b->map))
		return bad("out of memory loading the trace");
	b->live += size;
	if (b->live > b->t->live_peak)
		b->t->live_peak = b->live;
	*slot = s;
	return 0;
}

static int take(struct builder *b, const struct ev *e, uint16_t thread)
{
	struct trace *t = b->t;
	size_t at;
	uint32_t s;

	switch (e->op) {
	case OP_MALLOC:
	case OP_CALLOC:
	case OP_MEMALIGN:
	case OP_KMALLOC:
	case OP_KC_ALLOC:
	case OP_PG_ALLOC: {
		if (!e->a) {
			t->nr_failed++;
			return 0;
		}
		uint64_t size = e->b;
		uint32_t cache = 0;
		if (e->op == OP_PG_ALLOC)
			size = 4096ull << (e->aux & 15);
		if (e->op == OP_KC_ALLOC) {
			if (e->c >= t->nr_caches)
				return bad("corrupt trace: cache %llu of %u", (unsigned long long)e->c,
					   t->nr_caches);
			cache = (uint32_t)e->c;
		}
		if (add_block(b, e->op, e->aux, key_of(e->op, e->a), cache, size, thread, &s))
			return -1;
		return emit(b, (struct rop){ .op = e->op, .aux = e->aux, .thread = thread, .slot = s,
					     .old = cache, .size = b->ssize[s] });
	}
	case OP_FREE:
	case OP_KFREE:
	case OP_KC_FREE:
	case OP_PG_FREE:
		if (!e->a)
			return 0;
		if (amap_find(&b->map, key_of(e->op, e->a), &at) == NO_SLOT) {
			t->nr_unknown_frees++;
			return 0;
		}
		return free_at(b, at, thread);
	case OP_REALLOC: {
		uint32_t old = NO_SLOT;
		uint64_t old_size = 0;
		if (e->c) {
			old = amap_find(&b->map, e->c, &at);
			if (old == NO_SLOT)
				t->nr_unknown_frees++;
		}
		if (!e->a) {
			/* realloc(p, 0) freed p (glibc); realloc failing keeps it. */
			if (old != NO_SLOT && !e->b)
				return free_at(b, at, thread);
			t->nr_failed++;
			return 0;
		}
		if (old != NO_SLOT) {
			old_size = b->ssize[old];
			amap_delete(&b->map, at);
			b->free_slots[b->nr_free++] = old;
			b->live -= old_size;
		}
		if (add_block(b, OP_MALLOC, 0, e->a, 0, e->b, thread, &s))
			return -1;
		/* The new slot must differ from the old: the old one is pushed
		 * back after (the replay reads it while it writes the new). */
		if (s == old) {
			uint32_t s2 = slot_get(b);
			if (s2 == NO_SLOT)
				return bad("out of memory loading the trace");
			b->sop[s2] = b->sop[s];
			b->saux[s2] = 0;
			b->scache[s2] = 0;
			b->ssize[s2] = b->ssize[s];
			amap_find(&b->map, e->a, &at);
			b->map.vals[at] = s2;
			b->free_slots[b->nr_free++] = s;
			s = s2;
		}
		return emit(b, (struct rop){ .op = OP_REALLOC, .thread = thread, .slot = s, .old = old,
					     .size = b->ssize[s] });
	}
	}
	return bad("corrupt trace: unknown operation %u", e->op);
}

/* ---- the file ---------------------------------------------------------- */

static int parse_names(struct trace *t, const uint8_t *p, const uint8_t *e)
{
	while (p < e) {
		uint64_t id, len;
		if (!(p = get_varint(p, e, &id)) || !(p = get_varint(p, e, &len)) ||
		    len > (uint64_t)(e - p) || len == 0 || len > 255 || id > 65535)
			return bad("corrupt trace: a bad table of cache names");
		if (id >= t->nr_caches) {
			struct trace_cache *c = realloc(t->caches, (id + 1) * sizeof(*c));
			if (!c)
				return bad("out of memory");
			memset(c + t->nr_caches, 0, (id + 1 - t->nr_caches) * sizeof(*c));
			t->caches = c;
			t->nr_caches = (uint32_t)id + 1;
		}
		free(t->caches[id].name);
		t->caches[id].name = strndup((const char *)p, len);
		p += len;
	}
	return 0;
}

static int load(struct trace *t, struct tstream **streams_out, size_t *nr_out)
{
	uint32_t version, kind;
	struct tstream *ts = NULL;
	size_t nts = 0, info_len = 0;
	uint64_t first_ns = UINT64_MAX, last_ns = 0;

	if (file_size < TRACE_HEADER_SIZE || memcmp(file, TRACE_MAGIC, 8))
		return bad(file_size < TRACE_HEADER_SIZE &&
			   !memcmp(file, TRACE_MAGIC, file_size < 8 ? file_size : 8)
			   ? "truncated trace (no whole header)" : "not a kmem-trace file");
	memcpy(&version, file + 8, 4);
	memcpy(&kind, file + 12, 4);
	if (version != TRACE_VERSION)
		return bad("trace format version %u; this kmem-trace reads version %u", version,
			   TRACE_VERSION);
	if (kind != TRACE_KIND_MALLOC && kind != TRACE_KIND_KERNEL)
		return bad("corrupt trace: unknown kind %u", kind);
	t->kind = kind;
	for (size_t off = TRACE_HEADER_SIZE; off < file_size;) {
		struct chunk_head h;
		if (file_size - off < sizeof(h))
			return bad("truncated trace: %zu bytes of a chunk head at offset %zu",
				   file_size - off, off);
		memcpy(&h, file + off, sizeof(h));
		if (h.type < CHUNK_OPS || h.type > CHUNK_INFO || h.len > CHUNK_MAX_LEN)
			return bad("corrupt trace: a bad chunk head at offset %zu", off);
		if (h.len > file_size - off - sizeof(h))
			return bad("truncated trace: the chunk at offset %zu needs %u bytes, %zu are left",
				   off, h.len, file_size - off - sizeof(h));
		const uint8_t *payload = file + off + sizeof(h);
		if (trace_checksum(payload, h.len) != h.sum)
			return bad("corrupt trace: checksum mismatch in the chunk at offset %zu", off);
		if (h.type == CHUNK_OPS && h.len) {
			size_t i = 0;
			while (i < nts && ts[i].tid != h.tid)
				i++;
			if (i == nts) {
				if (nts == 65535)
					return bad("more than 65535 threads");
				struct tstream *n = realloc(ts, (nts + 1) * sizeof(*ts));
				if (!n)
					return bad("out of memory");
				ts = n;
				memset(&ts[nts], 0, sizeof(*ts));
				ts[nts++].tid = h.tid;
			}
			if (ts[i].nr == ts[i].cap) {
				ts[i].cap = ts[i].cap ? ts[i].cap * 2 : 16;
				ts[i].chunks = realloc(ts[i].chunks, ts[i].cap * sizeof(size_t));
				if (!ts[i].chunks)
					return bad("out of memory");
			}
			ts[i].chunks[ts[i].nr++] = off;
			if (h.ns && h.ns < first_ns)
				first_ns = h.ns;
			if (h.ns > last_ns)
				last_ns = h.ns;
		} else if (h.type == CHUNK_NAMES) {
			if (parse_names(t, payload, payload + h.len))
				return -1;
		} else if (h.type == CHUNK_INFO) {
			char *n = realloc(t->info, info_len + h.len + 2);
			if (!n)
				return bad("out of memory");
			t->info = n;
			memcpy(t->info + info_len, payload, h.len);
			info_len += h.len;
			if (info_len && t->info[info_len - 1] != '\n')
				t->info[info_len++] = '\n';
			t->info[info_len] = 0;
		}
		off += sizeof(h) + h.len;
	}
	if (last_ns > first_ns)
		t->seconds = (double)(last_ns - first_ns) / 1e9;
	*streams_out = ts;
	*nr_out = nts;
	return 0;
}

/* Min-heap of streams by their next op's stamp (then by stream: stable). */
static bool ev_less(const struct tstream *a, const struct tstream *b)
{
	int64_t d = (int64_t)(a->ev.tsc - b->ev.tsc);
	return d < 0 || (d == 0 && a < b);
}

static void sift_down(struct tstream **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && ev_less(h[l], h[m]))
			m = l;
		if (l + 1 < n && ev_less(h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct tstream *x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

int trace_load(const char *path, struct trace *t)
{
	struct tstream *ts = NULL, **heap = NULL;
	size_t nts = 0, n = 0;
	struct builder b = { .t = t };
	int err = 0, fd;
	struct stat st;

	memset(t, 0, sizeof(*t));
	cur_path = path;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bad("%s", strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return bad("not a regular file");
	}
	file_size = (size_t)st.st_size;
	t->file_bytes = file_size;
	if (file_size == 0) {
		close(fd);
		return bad("empty file: not a kmem-trace file");
	}
	file = mmap(NULL, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (file == MAP_FAILED)
		return bad("%s", strerror(errno));
	if (load(t, &ts, &nts))
		goto fail;
	t->nr_threads = (uint16_t)nts;
	t->tids = calloc(nts + 1, sizeof(*t->tids));
	heap = calloc(nts + 1, sizeof(*heap));
	if (!t->tids || !heap || amap_init(&b.map, 1 << 16)) {
		bad("out of memory");
		goto fail;
	}
	for (size_t i = 0; i < nts; i++) {
		t->tids[i] = ts[i].tid;
		if (ts_next(&ts[i], &err))
			heap[n++] = &ts[i];
		else if (err)
			goto fail;
	}
	for (size_t i = n; i-- > 0;)
		sift_down(heap, n, i);
	while (n) {
		struct tstream *s = heap[0];
		if (take(&b, &s->ev, (uint16_t)(s - ts)))
			goto fail;
		if (!ts_next(s, &err)) {
			if (err)
				goto fail;
			heap[0] = heap[--n];
		}
		sift_down(heap, n, 0);
	}
	t->nr_live_end = b.map.used;
	t->live_end = b.live;
	for (size_t i = 0; i < t->nr_caches; i++)
		if (!t->caches[i].name)
			t->caches[i].name = strdup("unnamed");
	/* A cache's object size: the largest request of its allocations. */
	for (size_t i = 0; i < t->nr_ops; i++)
		if (t->ops[i].op == OP_KC_ALLOC && t->ops[i].size > t->caches[t->ops[i].old].size)
			t->caches[t->ops[i].old].size = t->ops[i].size;
	if (t->nr_ops == 0 && !err) {
		bad("no operations in the trace");
		goto fail;
	}
	goto out;
fail:
	err = -1;
out:
	for (size_t i = 0; i < nts; i++)
		free(ts[i].chunks);
	free(ts);
	free(heap);
	big_free(b.map.keys, (b.map.mask + 1) * sizeof(*b.map.keys));
	big_free(b.map.vals, (b.map.mask + 1) * sizeof(*b.map.vals));
	big_free(b.sop, b.slots_cap);
	big_free(b.saux, b.slots_cap);
	big_free(b.scache, b.slots_cap * sizeof(uint32_t));
	big_free(b.ssize, b.slots_cap * sizeof(uint32_t));
	big_free(b.free_slots, b.slots_cap * sizeof(uint32_t));
	munmap((void *)file, file_size);
	if (err)
		trace_free(t);
	return err ? -1 : 0;
}

void trace_free(struct trace *t)
{
	big_free(t->ops, t->ops_bytes);
	free(t->tids);
	for (size_t i = 0; i < t->nr_caches; i++)
		free(t->caches[i].name);
	free(t->caches);
	free(t->info);
	memset(t, 0, sizeof(*t));
}

const char *trace_info(const struct trace *t, const char *key, char *buf, size_t size)
{
	size_t kl = strlen(key);
	const char *found = NULL;

	/* The last one: a later chunk (record's, at the end) has the final say. */
	for (const char *p = t->info; p && *p;) {
		const char *nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		if ((size_t)(nl - p) > kl && !strncmp(p, key, kl) && p[kl] == '=') {
			size_t n = (size_t)(nl - p) - kl - 1;
			if (n >= size)
				n = size - 1;
			memcpy(buf, p + kl + 1, n);
			buf[n] = 0;
			found = buf;
		}
		p = *nl ? nl + 1 : nl;
	}
	return found;
}
