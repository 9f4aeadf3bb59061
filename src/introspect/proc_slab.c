// SPDX-License-Identifier: MIT
/*
 * /proc/slabinfo and /proc/meminfo in the kernel's formats
 * (mm/slab_common.c print_slabinfo_header/cache_show, fs/proc/meminfo.c).
 *
 * /proc/slabinfo lists every cache newest first, as the kernel does (it
 * list_add()s new caches at the head of slab_caches and walks it forward):
 * so the kmalloc caches, created at boot, come last.  A name merged into
 * another cache has no line of its own; the cache shows under the name of
 * its creator.  SLUB numbers: objsize is the slot size, tunables and
 * sharedavail are 0, active_slabs = num_slabs, and objects cached by
 * threads (cpu slabs, cpu partial slabs) count as active.
 */
#include <errno.h>

#include "core/vmstat.h"
#include "introspect/kmemfs.h"
#include "introspect/proc_slab.h"
#include "page_alloc/zone_info.h"
#include "slab/slab.h"

/*
 * The statistics columns (kernel CONFIG_DEBUG_SLAB): a back-end that
 * counts them (SLAB with its statistics on) keeps slabinfo_show_stats.
 */
static bool slabinfo_statistics(void)
{
	return slab_ops.slabinfo_show_stats != NULL;
}

void render_slabinfo_header(struct seq_buf *s)
{
	seq_puts(s, slabinfo_statistics() ? "slabinfo - version: 2.1 (statistics)\n" : "slabinfo - version: 2.1\n");
	seq_puts(s, "# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab>");
	seq_puts(s, " : tunables <limit> <batchcount> <sharedfactor>");
	seq_puts(s, " : slabdata <active_slabs> <num_slabs> <sharedavail>");
	if (slabinfo_statistics()) {
		seq_puts(s, " : globalstat <listallocs> <maxobjs> <grown> <reaped> <error> <maxfreeable> "
			    "<nodeallocs> <remotefrees> <alienoverflow>");
		seq_puts(s, " : cpustat <allochit> <allocmiss> <freehit> <freemiss>");
	}
	seq_putc(s, '\n');
}

/* A line without its newline: the statistics columns may follow. */
static void render_slabinfo_fields(struct seq_buf *s, const char *name, const struct slabinfo_line *l)
{
	seq_printf(s, "%-17s %6lu %6lu %6u %4u %4d", name, l->active_objs, l->num_objs,
		   l->objsize, l->objperslab, l->pagesperslab);
	seq_printf(s, " : tunables %4u %4u %4u", l->limit, l->batchcount, l->sharedfactor);
	seq_printf(s, " : slabdata %6lu %6lu %6lu", l->active_slabs, l->num_slabs, l->sharedavail);
}

void render_slabinfo_line(struct seq_buf *s, const char *name, const struct slabinfo_line *l)
{
	render_slabinfo_fields(s, name, l);
	seq_putc(s, '\n');
}

static void cache_slabinfo_line(struct kmem_cache *c, struct slabinfo_line *l)
{
	struct slabinfo info = { 0 };

	slab_ops.get_slabinfo(c, &info);
	*l = (struct slabinfo_line){
		.active_objs = info.active_objs,
		.num_objs = info.num_objs,
		.objsize = c->size,
		.objperslab = info.objects_per_slab,
		.pagesperslab = 1 << info.cache_order,
		.limit = info.limit,
		.batchcount = info.batchcount,
		.sharedfactor = info.shared,
		.active_slabs = info.active_slabs,
		.num_slabs = info.num_slabs,
		.sharedavail = info.shared_avail,
	};
}

static int slabinfo_show(struct seq_buf *s, const char *path)
{
	struct kmem_cache *c;
	struct slabinfo_line l;

	(void)path;
	render_slabinfo_header(s);
	kmem_lock(&slab_mutex);
	/* slab_caches holds the oldest first: walk it backwards. */
	for (c = list_last_entry(&slab_caches, struct kmem_cache, list); &c->list != &slab_caches;
	     c = list_entry(c->list.prev, struct kmem_cache, list)) {
		cache_slabinfo_line(c, &l);
		render_slabinfo_fields(s, c->name, &l);
		if (slabinfo_statistics())
			slab_ops.slabinfo_show_stats(s, c);
		seq_putc(s, '\n');
	}
	kmem_unlock(&slab_mutex);
	return 0;
}

/* Tuning a cache (SLAB: "name limit batchcount shared"); the others have nothing to tune. */
static int slabinfo_store(const char *path, const char *val)
{
	(void)path;
	if (!slab_ops.slabinfo_write)
		return -EACCES;
	return slab_ops.slabinfo_write(val);
}
/* SLABINFO_RIGHTS: 0600 with SLAB, whose tunables it writes; a write elsewhere is refused. */
KMEMFS_FILE("/proc/slabinfo", 0600, slabinfo_show, slabinfo_store);

/* ---- /proc/meminfo --------------------------------------------------- */

unsigned long si_mem_available(unsigned long free, unsigned long managed,
			       unsigned long wmark_low, unsigned long wmark_high,
			       unsigned long sreclaimable)
{
	/* calculate_totalreserve_pages(): the high watermark, capped at managed. */
	unsigned long totalreserve = wmark_high < managed ? wmark_high : managed;
	long available = (long)free - (long)totalreserve;
	unsigned long reclaimable = sreclaimable;

	/* No page cache here: only reclaimable slab adds to it. */
	reclaimable -= reclaimable / 2 < wmark_low ? reclaimable / 2 : wmark_low;
	available += (long)reclaimable;
	return available < 0 ? 0 : (unsigned long)available;
}

/* show_val_kb(): a 16-column label, the value in kB right-aligned in 8. */
static void show_val_kb(struct seq_buf *s, const char *label, unsigned long pages)
{
	seq_printf(s, "%-16s%8lu kB\n", label, pages << (PAGE_SHIFT - 10));
}

void render_meminfo(struct seq_buf *s, const struct meminfo *mi)
{
	show_val_kb(s, "MemTotal:", mi->totalram);
	show_val_kb(s, "MemFree:", mi->freeram);
	show_val_kb(s, "MemAvailable:", mi->available);
	show_val_kb(s, "Buffers:", 0);
	show_val_kb(s, "Cached:", 0);
	show_val_kb(s, "SwapCached:", 0);
	show_val_kb(s, "SwapTotal:", 0);
	show_val_kb(s, "SwapFree:", 0);
	/* KReclaimable = SReclaimable + NR_KERNEL_MISC_RECLAIMABLE (none here). */
	show_val_kb(s, "KReclaimable:", mi->sreclaimable);
	show_val_kb(s, "Slab:", mi->sreclaimable + mi->sunreclaim);
	show_val_kb(s, "SReclaimable:", mi->sreclaimable);
	show_val_kb(s, "SUnreclaim:", mi->sunreclaim);
}

static unsigned long pages_state(enum zone_stat_item item)
{
	long v = global_zone_page_state(item);

	return v < 0 ? 0 : (unsigned long)v;
}

static int meminfo_show(struct seq_buf *s, const char *path)
{
	struct zone_info zi;
	struct meminfo mi;

	(void)path;
	zone_get_info(&zi);
	mi.totalram = zi.managed;
	mi.freeram = pages_state(NR_FREE_PAGES);
	mi.sreclaimable = pages_state(NR_SLAB_RECLAIMABLE);
	mi.sunreclaim = pages_state(NR_SLAB_UNRECLAIMABLE);
	mi.available = si_mem_available(mi.freeram, zi.managed, zi.wmark[1], zi.wmark[2],
					mi.sreclaimable);
	render_meminfo(s, &mi);
	return 0;
}
KMEMFS_FILE("/proc/meminfo", 0444, meminfo_show, NULL);
