/* SPDX-License-Identifier: MIT */
/*
 * /proc/slabinfo (version 2.1) and /proc/meminfo renderers: pure functions
 * of plain numbers, so tests can feed them a real kernel's values and compare
 * the output byte for byte (shared/data/linux-6.18/slabinfo.txt).
 */
#ifndef KMEM_PROC_SLAB_H
#define KMEM_PROC_SLAB_H

#include "introspect/seq_buf.h"

/* One /proc/slabinfo line after the name (kernel mm/slab_common.c cache_show). */
struct slabinfo_line {
	unsigned long active_objs, num_objs;
	unsigned int objsize;		/* SLUB: slot size s->size */
	unsigned int objperslab;
	int pagesperslab;		/* 1 << order */
	unsigned int limit, batchcount, sharedfactor;	/* tunables; 0 for SLUB */
	unsigned long active_slabs, num_slabs, sharedavail;
};

/* The two header lines, "slabinfo - version: 2.1\n# name ...\n". */
void render_slabinfo_header(struct seq_buf *s);
/* "%-17s %6lu %6lu %6u %4u %4d : tunables ... : slabdata ...\n" */
void render_slabinfo_line(struct seq_buf *s, const char *name, const struct slabinfo_line *l);

/* /proc/meminfo inputs, all in pages. */
struct meminfo {
	unsigned long totalram;		/* MemTotal: zone managed pages */
	unsigned long freeram;		/* MemFree: NR_FREE_PAGES */
	unsigned long available;	/* MemAvailable: see si_mem_available() */
	unsigned long sreclaimable;	/* NR_SLAB_RECLAIMABLE */
	unsigned long sunreclaim;	/* NR_SLAB_UNRECLAIMABLE (includes large kmallocs) */
};

/*
 * Kernel si_mem_available() for one zone without page cache: free pages
 * minus totalreserve (the high watermark, at most @managed), plus the
 * reclaimable slab minus min(half of it, the low watermark); never negative.
 */
unsigned long si_mem_available(unsigned long free, unsigned long managed,
			       unsigned long wmark_low, unsigned long wmark_high,
			       unsigned long sreclaimable);

/* "MemTotal:       %8lu kB\n" ... (kernel fs/proc/meminfo.c show_val_kb). */
void render_meminfo(struct seq_buf *s, const struct meminfo *mi);

#endif /* KMEM_PROC_SLAB_H */
