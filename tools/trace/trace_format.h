/* SPDX-License-Identifier: MIT */
/*
 * The kmem-trace file format, shared by the recorder (a preloaded library
 * that must not allocate) and the tool.  Everything here is inline.
 *
 *   file    = header chunk*
 *   header  = "KMEMTRC\0" u32 version u32 kind u64 0 u64 0        (32 bytes)
 *   chunk   = chunk_head payload[len]
 *
 * A chunk is one flush of one thread's buffer (or a table of cache names,
 * or key=value lines about the run), written with one write(2) on an
 * O_APPEND descriptor: threads never share a buffer, so the recording path
 * takes no lock, and a crash loses only the buffers not yet written.
 *
 * An ops payload is a sequence of operations, each
 *
 *   u8 op | (site ? OPF_SITE : 0)
 *   varint zigzag(tsc - previous tsc of the thread)
 *   fields of the op (below)
 *   [varint zigzag(site - previous site)]
 *
 * Addresses are "addr" fields: 0 for NULL, else 1 + (zigzag(d >> 4) << 1)
 * if the difference d to the thread's previous address is a multiple of
 * 16, or 1 + (zigzag(d) << 1 | 1); so a block near the previous one takes
 * two or three bytes.  Sizes and cache ids are varints.
 *
 *   OP_MALLOC    size addr          OP_CALLOC   size(n*size) addr
 *   OP_REALLOC   old size new       OP_FREE     addr
 *   OP_MEMALIGN  u8 log2(align) size addr
 *   OP_KC_ALLOC  cache size addr    OP_KC_FREE  cache addr
 *   OP_KMALLOC   size addr          OP_KFREE    addr
 *   OP_PG_ALLOC  u8 order|mt<<4 pfn OP_PG_FREE  u8 order pfn
 */
#ifndef KMEM_TRACE_FORMAT_H
#define KMEM_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TRACE_MAGIC		"KMEMTRC"	/* 8 bytes with its NUL */
#define TRACE_VERSION		1u
#define TRACE_HEADER_SIZE	32u

enum trace_kind {
	TRACE_KIND_MALLOC = 1,		/* a program's malloc calls (record) */
	TRACE_KIND_KERNEL = 2,		/* a kernel's slab and page events (import-perf) */
};

enum chunk_type {
	CHUNK_OPS = 1,
	CHUNK_NAMES = 2,	/* varint id, varint len, name bytes; repeated */
	CHUNK_INFO = 3,		/* "key=value\n" lines */
};

/* 32 bytes before every payload; little-endian, as the machine is. */
struct chunk_head {
	uint8_t type;
	uint8_t pad[3];
	uint32_t len;		/* payload bytes */
	uint32_t tid;		/* thread (ops), 0 otherwise */
	uint32_t sum;		/* trace_checksum() of the payload */
	uint64_t tsc;		/* the thread's tsc before its first op */
	uint64_t ns;		/* CLOCK_MONOTONIC at the same moment */
};
#define CHUNK_MAX_LEN	(64u << 20)	/* larger is taken for corruption */

enum trace_op {
	OP_MALLOC = 1,
	OP_CALLOC,
	OP_REALLOC,
	OP_FREE,
	OP_MEMALIGN,
	OP_KC_ALLOC,
	OP_KC_FREE,
	OP_KMALLOC,
	OP_KFREE,
	OP_PG_ALLOC,
	OP_PG_FREE,
	OP_NR,
};
#define OP_MASK		0x0f
#define OPF_SITE	0x10
#define OP_ENC_MAX	48	/* longest encoding of one op */

static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* NULL on a varint that runs past @end or over 10 bytes. */
static inline const uint8_t *get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned int shift = 0; shift < 70; shift += 7) {
		if (p >= end)
			return NULL;
		uint8_t b = *p++;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return p;
		}
	}
	return NULL;
}

static inline uint8_t *put_addr(uint8_t *p, uint64_t *prev, uint64_t addr)
{
	if (!addr)
		return put_varint(p, 0);
	int64_t d = (int64_t)(addr - *prev);
	*prev = addr;
	if (!(d & 15))
		return put_varint(p, 1 + (zigzag(d >> 4) << 1));
	return put_varint(p, 1 + (zigzag(d) << 1 | 1));
}

static inline const uint8_t *get_addr(const uint8_t *p, const uint8_t *end, uint64_t *prev,
				      uint64_t *addr)
{
	uint64_t v;

	p = get_varint(p, end, &v);
	if (!p)
		return NULL;
	if (!v) {
		*addr = 0;
		return p;
	}
	v--;
	int64_t d = (v & 1) ? unzigzag(v >> 1) : (int64_t)((uint64_t)unzigzag(v >> 1) << 4);
	*addr = *prev + (uint64_t)d;
	*prev = *addr;
	return p;
}

/* FNV-1a over 32-bit words, then the tail: cheap enough for every flush. */
static inline uint32_t trace_checksum(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t h = 2166136261u;
	size_t i = 0;

	for (; i + 4 <= len; i += 4) {
		uint32_t w;
		memcpy(&w, p + i, 4);
		h = (h ^ w) * 16777619u;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static inline void trace_header(uint8_t out[TRACE_HEADER_SIZE], enum trace_kind kind)
{
	uint32_t v = TRACE_VERSION, k = kind;

	memset(out, 0, TRACE_HEADER_SIZE);
	memcpy(out, TRACE_MAGIC, 8);
	memcpy(out + 8, &v, 4);
	memcpy(out + 12, &k, 4);
}

#endif /* KMEM_TRACE_FORMAT_H */
