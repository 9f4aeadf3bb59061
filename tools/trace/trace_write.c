// SPDX-License-Identifier: MIT
/*
 * Writing a trace from the tool (import-perf): one stream of ops, flushed
 * in chunks of 1 MiB, in the recorder's format.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

#define TW_CAP	(1u << 20)

int tw_open(struct trace_writer *w, const char *path, enum trace_kind kind)
{
	uint8_t head[TRACE_HEADER_SIZE];

	memset(w, 0, sizeof(*w));
	w->path = path;
	w->f = fopen(path, "wb");
	if (!w->f) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	w->cap = TW_CAP;
	w->buf = malloc(w->cap);
	if (!w->buf) {
		fclose(w->f);
		fprintf(stderr, "%s: out of memory\n", prog);
		return -1;
	}
	trace_header(head, kind);
	if (fwrite(head, sizeof(head), 1, w->f) != 1)
		w->error = true;
	return 0;
}

void tw_chunk(struct trace_writer *w, uint8_t type, const void *payload, size_t len)
{
	struct chunk_head h = { .type = type, .len = (uint32_t)len,
				.sum = trace_checksum(payload, len), .tsc = w->tsc0, .ns = w->tsc0 };

	if (fwrite(&h, sizeof(h), 1, w->f) != 1 || (len && fwrite(payload, len, 1, w->f) != 1))
		w->error = true;
}

static void tw_flush(struct trace_writer *w)
{
	if (w->pos)
		tw_chunk(w, CHUNK_OPS, w->buf, w->pos);
	w->pos = 0;
	w->prev_addr = 0;
	w->tsc0 = w->prev_tsc;
}

/* @tsc in ns.  a, b, c as in trace_format.h's table: a the address (pfn),
 * b the size, c the cache (OP_KC_*) or the order | mt << 4 (OP_PG_*). */
void tw_op(struct trace_writer *w, uint8_t op, uint64_t tsc, uint64_t a, uint64_t b, uint64_t c)
{
	if (w->pos + OP_ENC_MAX > w->cap)
		tw_flush(w);
	if (!w->ops)
		w->tsc0 = w->prev_tsc = tsc;
	uint8_t *p = w->buf + w->pos;
	*p++ = op;
	p = put_varint(p, zigzag((int64_t)(tsc - w->prev_tsc)));
	w->prev_tsc = tsc;
	switch (op) {
	case OP_KMALLOC:
		p = put_varint(p, b);
		p = put_addr(p, &w->prev_addr, a);
		break;
	case OP_KFREE:
		p = put_addr(p, &w->prev_addr, a);
		break;
	case OP_KC_ALLOC:
		p = put_varint(p, c);
		p = put_varint(p, b);
		p = put_addr(p, &w->prev_addr, a);
		break;
	case OP_KC_FREE:
		p = put_varint(p, c);
		p = put_addr(p, &w->prev_addr, a);
		break;
	case OP_PG_ALLOC:
	case OP_PG_FREE:
		*p++ = (uint8_t)c;
		p = put_addr(p, &w->prev_addr, a);
		break;
	}
	w->pos = (size_t)(p - w->buf);
	w->ops++;
}

int tw_close(struct trace_writer *w)
{
	tw_flush(w);
	if (fclose(w->f))
		w->error = true;
	free(w->buf);
	if (w->error) {
		fprintf(stderr, "%s: %s: write error\n", prog, w->path);
		return -1;
	}
	return 0;
}
