/* SPDX-License-Identifier: MIT */
/*
 * kmem-trace: what the subcommands share.  A trace file (trace_format.h) is
 * loaded into a struct trace: the operations of every thread merged in time
 * order, each block named by a slot (an index reused once the block is
 * freed), so that a replay needs no address lookups.
 */
#ifndef KMEM_TRACE_H
#define KMEM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace_format.h"

/* One operation as replayed: 16 bytes. */
struct rop {
	uint8_t op;		/* enum trace_op; OP_KC_FREE etc. match their allocation */
	uint8_t aux;		/* log2(align), page order, migratetype << 4 */
	uint16_t thread;	/* index into trace.tids */
	uint32_t slot;		/* the block allocated or freed */
	uint32_t old;		/* OP_REALLOC: the old block's slot (NO_SLOT: none); OP_KC_*: cache */
	uint32_t size;		/* bytes asked for (pages: PAGE_SIZE << order) */
};
#define NO_SLOT		UINT32_MAX

struct trace_cache {
	char *name;
	uint32_t size;		/* the largest bytes_req seen */
};

struct trace {
	enum trace_kind kind;
	struct rop *ops;	/* big_alloc'd, ops_bytes long */
	size_t nr_ops, ops_bytes;
	uint32_t nr_slots;		/* the most blocks live at once */
	uint32_t *tids;
	uint16_t nr_threads;
	struct trace_cache *caches;
	uint32_t nr_caches;
	/* What loading found. */
	size_t nr_unknown_frees;	/* of blocks allocated before the trace began */
	size_t nr_implicit_frees;	/* an address given again while live: freed first */
	size_t nr_failed;		/* allocations that returned NULL in the trace */
	size_t nr_clamped;		/* sizes over 4 GiB, taken as 4 GiB - 1 */
	size_t nr_live_end;		/* blocks never freed */
	uint64_t live_end;		/* their bytes */
	uint64_t live_peak;		/* the most bytes live at once */
	uint64_t file_bytes;
	double seconds;			/* first to last op, by the timestamps */
	char *info;			/* the info chunks' key=value lines */
};

/*
 * The tool's big arrays come from mmap, not malloc: the allocator being
 * replayed must start from nothing, not from memory the loading freed.
 * big_alloc() memory is zeroed; NULL when out of memory.
 */
void *big_alloc(size_t size);
void *big_realloc(void *p, size_t old_size, size_t new_size);
void big_free(void *p, size_t size);

/* Load @path; on failure one line on stderr (naming the file) and -1. */
int trace_load(const char *path, struct trace *t);
void trace_free(struct trace *t);
/* The value of @key in the trace's info lines, or NULL. */
const char *trace_info(const struct trace *t, const char *key, char *buf, size_t size);

/* Writing a trace (import-perf): one stream, the chunks flushed as they fill. */
struct trace_writer {
	FILE *f;
	const char *path;
	uint8_t *buf;
	size_t pos, cap;
	uint64_t prev_tsc, prev_addr, tsc0;
	uint64_t ops;
	bool error;
};
int tw_open(struct trace_writer *w, const char *path, enum trace_kind kind);
void tw_op(struct trace_writer *w, uint8_t op, uint64_t tsc, uint64_t a, uint64_t b, uint64_t c);
void tw_chunk(struct trace_writer *w, uint8_t type, const void *payload, size_t len);
int tw_close(struct trace_writer *w);

/* Subcommands: argv[0] is the subcommand's name.  Exit statuses. */
int cmd_record(int argc, char **argv);
int cmd_import_perf(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_info(int argc, char **argv);

/* The allocators a replay can run on. */
enum target_kind { TGT_KMEM, TGT_GLIBC, TGT_PEER };
struct target {
	const char *name;	/* slub, slab, slob, glibc, jemalloc, mimalloc, tcmalloc */
	enum target_kind kind;
	const char *lib;	/* a peer's library name (ld.so finds it) */
};
const struct target *target_find(const char *name);
/* "slub", "slub:slub_min_order=1", "page_alloc.tail_placement=0" (slub with it). */
int setting_parse(const char *spec, const struct target **t, char *cmdline, size_t size);
/* Absolute path of a library next to this program (../lib/NAME), or NULL. */
const char *own_lib(const char *name, char *buf, size_t size);
/* A peer's library, if installed (else NULL). */
const char *peer_path(const struct target *t, char *buf, size_t size);

/* plot.c: one PNG of memory (column @col of each curve file) against ops. */
int plot_curves(const char *png, const char *title, const char *ylabel, int n,
		char *const labels[], char *const files[], int col);

extern const char *prog;	/* "kmem-trace" */
__attribute__((format(printf, 1, 2))) void die_msg(const char *fmt, ...);

#endif /* KMEM_TRACE_H */
