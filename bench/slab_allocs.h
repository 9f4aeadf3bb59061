/* SPDX-License-Identifier: MIT */
/*
 * The slab allocators side by side: helpers shared by the benchmarks that
 * run one workload on SLUB, SLAB and SLOB (bench_slab_mem, bench_slab_bulk_table,
 * bench_sched_messaging).  Header only, on top of bench.h.
 *
 * kmem boots once per process and the allocator is chosen at boot
 * (slab=slub|slab|slob), so each configuration runs in its own forked child
 * that boots kmem with its command line (sa_boot()); the parent never
 * touches kmem.  A configuration whose boot is refused (a back-end or a
 * parameter this build does not have) is reported as "n/a", never as a
 * failure: the benchmarks gain their columns when the back-ends boot.
 */
#ifndef KMEM_SLAB_ALLOCS_H
#define KMEM_SLAB_ALLOCS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "bench.h"

/* One boot configuration: a short label and the parameters it adds. */
struct sa_config {
	const char *key;	/* for -a lists: slub, slab, slob1, ... */
	const char *label;
	const char *params;
};

/*
 * The allocators of the memory tables (Mackall's and Enberg's): SLUB, SLAB,
 * and SLOB with its three free-list settings (slob.lists=1: one list, before
 * the split; 2 with the break at 300 bytes: the patch as posted; 3: breaks
 * at 256 and 1024, the kernel's final form).
 */
static const struct sa_config sa_mem_configs[] __attribute__((unused)) = {
	{ "slub", "SLUB", "slab=slub" },
	{ "slab", "SLAB", "slab=slab" },
	{ "slob1", "SLOB lists=1", "slab=slob slob.lists=1" },
	{ "slob2", "SLOB lists=2", "slab=slob slob.lists=2 slob.break=300" },
	{ "slob3", "SLOB lists=3", "slab=slob slob.lists=3" },
};
#define SA_NR_MEM_CONFIGS	((int)(sizeof(sa_mem_configs) / sizeof(sa_mem_configs[0])))

/*
 * In a child: boot kmem with "@base @params" (either may be NULL or "").
 * The boot's own messages go to stderr; a refused boot returns its error
 * and the caller reports n/a.
 */
static inline int sa_boot(const char *base, const char *params)
{
	char line[1024];

	snprintf(line, sizeof(line), "%s%s%s", base ? base : "", base && *base && params && *params ? " " : "",
		 params ? params : "");
	return kmem_init(line);
}

/*
 * In a child, after the boot: pages the slab layer holds now, from the
 * counters /proc/meminfo's Slab line is made of (SLAB and SLOB account their
 * pages as SLUB does; kmalloc's large allocations are counted there too, as
 * in the kernel since 5.x).  Cheap: the workloads read it after every
 * operation to find the peak.
 */
#include "core/vmstat.h"
static inline long sa_slab_pages(void)
{
	return global_zone_page_state(NR_SLAB_RECLAIMABLE) + global_zone_page_state(NR_SLAB_UNRECLAIMABLE);
}

/* The value of "@key:" in a /proc/meminfo-style text, in kB; -1 if absent. */
static inline long sa_meminfo_kb(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, n) && l[n] == ':')
			return atol(l + n + 1);
	return -1;
}

/* The value of "@key N" in a /proc/vmstat-style text; -1 if absent. */
static inline long sa_vmstat(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, n) && l[n] == ' ')
			return atol(l + n + 1);
	return -1;
}

/*
 * Parse a comma-separated list of keys of @cfg (@n of them) into @on;
 * false on an unknown key.
 */
static inline bool sa_select(const struct sa_config *cfg, int n, const char *list, bool *on)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%s", list);
	for (int i = 0; i < n; i++)
		on[i] = false;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int i;
		for (i = 0; i < n && strcmp(cfg[i].key, t); i++)
			;
		if (i == n)
			return false;
		on[i] = true;
	}
	return true;
}

#endif /* KMEM_SLAB_ALLOCS_H */
