// SPDX-License-Identifier: MIT
/*
 * /proc/buddyinfo, /proc/pagetypeinfo, /proc/zoneinfo, /proc/vmstat,
 * /sys/kernel/debug/extfrag/{unusable_index,extfrag_index} and the vm
 * sysctls, in the kernel's formats (mm/vmstat.c).
 */
#include <errno.h>
#include <string.h>

#include "core/cmdline.h"
#include "core/vmstat.h"
#include "introspect/extfrag.h"
#include "introspect/kmemfs.h"
#include "introspect/proc_mm.h"

void render_buddyinfo(struct seq_buf *s, const struct zone_info *zi)
{
	seq_printf(s, "Node %d, zone %8s ", zi->node, zi->name);
	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		seq_printf(s, "%6lu ", zi->nr_free[o]);
	seq_putc(s, '\n');
}

void render_pagetypeinfo_free(struct seq_buf *s, const struct zone_info *zi)
{
	for (int mt = 0; mt < ZI_MIGRATE_TYPES; mt++) {
		seq_printf(s, "Node %4d, zone %8s, type %12s ", zi->node, zi->name,
			   migratetype_names[mt]);
		for (int o = 0; o < NR_PAGE_ORDERS; o++) {
			unsigned long n = zi->nr_free_mt[mt][o];
			/* The kernel stops counting a list at 100000 and says so. */
			if (n >= 100000)
				seq_printf(s, ">%6lu ", 100000UL);
			else
				seq_printf(s, "%6lu ", n);
		}
		seq_putc(s, '\n');
	}
}

void render_pagetypeinfo_blocks(struct seq_buf *s, const struct zone_info *zi)
{
	seq_printf(s, "Node %d, zone %8s ", zi->node, zi->name);
	for (int mt = 0; mt < ZI_MIGRATE_TYPES; mt++)
		seq_printf(s, "%12lu ", zi->nr_blocks_mt[mt]);
	seq_putc(s, '\n');
}

void render_unusable_index(struct seq_buf *s, const struct zone_info *zi)
{
	struct contig_page_info info;

	seq_printf(s, "Node %d, zone %8s ", zi->node, zi->name);
	for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++) {
		fill_contig_page_info(zi->nr_free, o, &info);
		int index = unusable_free_index(o, &info);
		seq_printf(s, "%d.%03d ", index / 1000, index % 1000);
	}
	seq_putc(s, '\n');
}

void render_extfrag_index(struct seq_buf *s, const struct zone_info *zi)
{
	struct contig_page_info info;

	seq_printf(s, "Node %d, zone %8s ", zi->node, zi->name);
	for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++) {
		fill_contig_page_info(zi->nr_free, o, &info);
		int index = fragmentation_index(o, &info);
		seq_printf(s, "%2d.%03d ", index / 1000, index % 1000);
	}
	seq_putc(s, '\n');
}

static int buddyinfo_show(struct seq_buf *s, const char *path)
{
	struct zone_info zi;

	(void)path;
	zone_get_info(&zi);
	render_buddyinfo(s, &zi);
	return 0;
}
KMEMFS_FILE("/proc/buddyinfo", 0444, buddyinfo_show, NULL);

static int pagetypeinfo_show(struct seq_buf *s, const char *path)
{
	struct zone_info zi;

	(void)path;
	zone_get_info(&zi);
	seq_printf(s, "Page block order: %d\n", zi.pb_order);
	seq_printf(s, "Pages per block:  %lu\n", 1UL << zi.pb_order);
	seq_putc(s, '\n');
	seq_printf(s, "%-43s ", "Free pages count per migrate type at order");
	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		seq_printf(s, "%6d ", o);
	seq_putc(s, '\n');
	render_pagetypeinfo_free(s, &zi);
	seq_putc(s, '\n');
	seq_printf(s, "%-23s", "Number of blocks type ");
	for (int mt = 0; mt < ZI_MIGRATE_TYPES; mt++)
		seq_printf(s, "%12s ", migratetype_names[mt]);
	seq_putc(s, '\n');
	render_pagetypeinfo_blocks(s, &zi);
	return 0;
}
KMEMFS_FILE("/proc/pagetypeinfo", 0400, pagetypeinfo_show, NULL);

static void pageset_show(const struct pageset_info *pi, void *arg)
{
	struct seq_buf *s = ((void **)arg)[0];
	int *cpu = ((void **)arg)[1];

	seq_printf(s,
		   "\n    cpu: %i"
		   "\n              count:    %i"
		   "\n              high:     %i"
		   "\n              batch:    %i"
		   "\n              high_min: %i"
		   "\n              high_max: %i"
		   "\n  vm stats threshold: %d",
		   (*cpu)++, pi->count, pi->high, pi->batch, pi->high, pi->high, 0);
}

static int zoneinfo_show(struct seq_buf *s, const char *path)
{
	struct zone_info zi;
	int cpu = 0;
	void *arg[2] = { s, &cpu };

	(void)path;
	zone_get_info(&zi);
	seq_printf(s, "Node %d, zone %8s", zi.node, zi.name);
	seq_printf(s,
		   "\n  pages free     %lu"
		   "\n        boost    %lu"
		   "\n        min      %lu"
		   "\n        low      %lu"
		   "\n        high     %lu"
		   "\n        promo    %lu"
		   "\n        spanned  %lu"
		   "\n        present  %lu"
		   "\n        managed  %lu"
		   "\n        cma      %lu",
		   zi.free_pages, 0UL, zi.wmark[0], zi.wmark[1], zi.wmark[2], zi.wmark[3],
		   zi.spanned, zi.present, zi.managed, 0UL);
	seq_printf(s, "\n        protection: (0, 0, 0, 0)");
	for (int i = 0; i < NR_VM_ZONE_STAT_ITEMS; i++)
		seq_printf(s, "\n      %-12s %ld", vmstat_text_zone[i], global_zone_page_state(i));
	seq_printf(s, "\n  pagesets");
	zone_for_each_pageset(pageset_show, arg);
	seq_printf(s,
		   "\n  node_unreclaimable:  %u"
		   "\n  start_pfn:           %lu\n",
		   0U, zi.start_pfn);
	return 0;
}
KMEMFS_FILE("/proc/zoneinfo", 0444, zoneinfo_show, NULL);

static int vmstat_show(struct seq_buf *s, const char *path)
{
	unsigned long ev[NR_VM_EVENT_ITEMS];

	(void)path;
	for (int i = 0; i < NR_VM_ZONE_STAT_ITEMS; i++)
		seq_printf(s, "%s %ld\n", vmstat_text_zone[i], global_zone_page_state(i));
	all_vm_events(ev);
	for (int i = 0; i < NR_VM_EVENT_ITEMS; i++)
		seq_printf(s, "%s %lu\n", vmstat_text_event[i], ev[i]);
	return 0;
}
KMEMFS_FILE("/proc/vmstat", 0444, vmstat_show, NULL);

static int unusable_show(struct seq_buf *s, const char *path)
{
	struct zone_info zi;

	(void)path;
	zone_get_info(&zi);
	render_unusable_index(s, &zi);
	return 0;
}
KMEMFS_FILE("/sys/kernel/debug/extfrag/unusable_index", 0400, unusable_show, NULL);

static int extfrag_show(struct seq_buf *s, const char *path)
{
	struct zone_info zi;

	(void)path;
	zone_get_info(&zi);
	render_extfrag_index(s, &zi);
	return 0;
}
KMEMFS_FILE("/sys/kernel/debug/extfrag/extfrag_index", 0400, extfrag_show, NULL);

static const char *sysctl_name(const char *path)
{
	return strrchr(path, '/') + 1;
}

static int sysctl_vm_show(struct seq_buf *s, const char *path)
{
	seq_printf(s, "%lu\n", kmem_get_sysctl_vm(sysctl_name(path)));
	return 0;
}

static int sysctl_vm_store(const char *path, const char *val)
{
	char buf[32];
	unsigned long v;
	size_t n = strlen(val);

	/* Accept "echo"-style input with a trailing newline. */
	if (n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, val, n + 1);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	if (kstrtoul(buf, &v))
		return -EINVAL;
	return kmem_set_sysctl_vm(sysctl_name(path), v);
}
KMEMFS_FILE("/proc/sys/vm/min_free_kbytes", 0644, sysctl_vm_show, sysctl_vm_store);
KMEMFS_FILE("/proc/sys/vm/watermark_scale_factor", 0644, sysctl_vm_show, sysctl_vm_store);
KMEMFS_FILE("/proc/sys/vm/percpu_pagelist_high_fraction", 0644, sysctl_vm_show, sysctl_vm_store);
