// SPDX-License-Identifier: MIT
/*
 * kmem-trace: record a program's allocations, import the Linux kernel's
 * slab and page traffic (perf script text), and replay either on kmem's
 * allocators and the peers, one at a time or side by side.
 *
 *   kmem-trace record -o FILE [--children] [--sites] -- PROGRAM ARGS...
 *   kmem-trace import-perf PERF.txt -o FILE
 *   kmem-trace replay FILE --on ALLOCATOR [--cmdline "..."] [--threads]
 *   kmem-trace compare FILE --on A,B,... [--png FILE]
 *   kmem-trace info FILE
 *
 * See docs/trace.md.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

const char *prog = "kmem-trace";

void die_msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const char *op_names[OP_NR] = {
	[OP_MALLOC] = "malloc", [OP_CALLOC] = "calloc", [OP_REALLOC] = "realloc",
	[OP_FREE] = "free", [OP_MEMALIGN] = "memalign", [OP_KC_ALLOC] = "kmem_cache_alloc",
	[OP_KC_FREE] = "kmem_cache_free", [OP_KMALLOC] = "kmalloc", [OP_KFREE] = "kfree",
	[OP_PG_ALLOC] = "alloc_pages", [OP_PG_FREE] = "__free_pages",
};

int cmd_info(int argc, char **argv)
{
	struct trace t;
	size_t count[OP_NR] = { 0 };

	if (argc != 2) {
		fprintf(stderr, "usage: %s info FILE\n", prog);
		return 2;
	}
	if (trace_load(argv[1], &t))
		return 1;
	for (size_t i = 0; i < t.nr_ops; i++)
		count[t.ops[i].op]++;
	printf("%s: %s trace, %zu operations, %u threads, %llu bytes (%.2f bytes/op)\n", argv[1],
	       t.kind == TRACE_KIND_KERNEL ? "kernel" : "program", t.nr_ops, t.nr_threads,
	       (unsigned long long)t.file_bytes, (double)t.file_bytes / (double)t.nr_ops);
	for (int i = 1; i < OP_NR; i++)
		if (count[i])
			printf("  %-16s %zu\n", op_names[i], count[i]);
	printf("  live bytes at the peak %llu, at the end %llu in %zu blocks; %u slots\n",
	       (unsigned long long)t.live_peak, (unsigned long long)t.live_end, t.nr_live_end,
	       t.nr_slots);
	printf("  frees of blocks from before the trace: %zu; addresses given again while live: %zu;"
	       " failed allocations: %zu\n", t.nr_unknown_frees, t.nr_implicit_frees, t.nr_failed);
	if (t.nr_caches)
		printf("  %u caches\n", t.nr_caches);
	if (t.info && *t.info) {
		printf("  run:");
		for (const char *p = t.info; *p; p++)
			putchar(*p == '\n' ? ' ' : *p);
		putchar('\n');
	}
	trace_free(&t);
	return 0;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: %s record -o FILE [--children] [--sites] [--buffer KB] -- PROGRAM [ARGS...]\n"
		"       %s import-perf PERF-SCRIPT.txt -o FILE\n"
		"       %s replay FILE --on ALLOCATOR [--cmdline \"KMEM boot parameters\"] [--threads]\n"
		"             [--no-touch] [--curve FILE] [--points N] [--live-out FILE]\n"
		"       %s compare FILE --on A,B,... [--png FILE] [--points N] [--threads]\n"
		"       %s info FILE\n"
		"ALLOCATOR: slub slab slob glibc jemalloc mimalloc tcmalloc, NAME:PARAMETERS,\n"
		"or a kmem boot parameter (slub with it).  See docs/trace.md.\n",
		prog, prog, prog, prog, prog);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	const char *cmd = argv[1];
	if (!strcmp(cmd, "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(cmd, "import-perf"))
		return cmd_import_perf(argc - 1, argv + 1);
	if (!strcmp(cmd, "replay"))
		return cmd_replay(argc - 1, argv + 1);
	if (!strcmp(cmd, "compare"))
		return cmd_compare(argc - 1, argv + 1);
	if (!strcmp(cmd, "info"))
		return cmd_info(argc - 1, argv + 1);
	if (strcmp(cmd, "-h") && strcmp(cmd, "--help"))
		fprintf(stderr, "%s: unknown command '%s'\n", prog, cmd);
	return usage();
}
