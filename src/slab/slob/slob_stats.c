// SPDX-License-Identifier: MIT
/*
 * /sys/kernel/debug/slob/stats: the statistics of "SLOB split free lists,
 * Mackall 2008", which the patch printed and the kernel never kept, in the
 * patch's words, one line per free list, and kmem's own per-list lines
 * after them (the patch's counters did not say which list the holes and
 * the scans were on):
 *
 *   <list> list pages <n> unused <bytes> biggest <bytes> fragments <n>
 *   <list> list holes 16:<n> 32:<n> 64:<n> ... 4096:<n>
 *   <list> list searches <n> page scans <n> block scans <n> new pages <n>
 *   slob pages <n> allocs <n> frees <n> active <n> allocated <bytes> page scans <n> block scans <n>
 *   kmallocs <n> active <n> allocated <bytes> overhead <bytes>
 *   bigpages <n> active <n>
 *   total <pages> used <pages>
 *
 * <list> is "free" with one list, "small" and "big" with two, "small",
 * "medium" and "large" with three.  Per list: the pages on it (partially
 * free heap pages), their free bytes, the biggest free block and the number
 * of free blocks; "holes": those free blocks by size, "B:n" counting the
 * blocks of more than B/2 and at most B bytes (16: the smallest, 2 to 16
 * bytes, none of which a kmalloc can use); "searches": heap allocations
 * that searched the list since boot, the pages and free blocks they looked
 * at, and how many ended in a new page.  "slob": heap pages now; heap blocks allocated and freed
 * since boot and live now; bytes of the live blocks as asked of the heap
 * (a kmalloc's header included, before rounding to units); pages and free
 * blocks the searches looked at since boot.  "kmallocs": kmallocs served
 * by the heap since boot, live now, the bytes they asked for and their
 * overhead (header and rounding to units) since boot.  "bigpages":
 * allocations given whole pages since boot (objects and kmallocs of about
 * a page or more) and the pages they hold now.  "total": heap pages plus
 * big pages now; "used": the pages the live data would fill, packed:
 * ceil(slob allocated / PAGE_SIZE) plus the big pages (the patch's
 * "total 427 used 245": 932647 bytes are 228 pages, and 17 big pages).
 */
#include <errno.h>

#include "introspect/kmemfs.h"
#include "slab/slab.h"
#include "slab/slob/slob.h"

static unsigned long rd(const unsigned long *v)
{
	return __atomic_load_n(v, __ATOMIC_RELAXED);
}

void slob_stats_show(struct seq_buf *m)
{
	struct slob_stats st;
	struct slob_list_figures f[SLOB_NR_LISTS];
	unsigned int nr = slob_nr_lists;

	kmem_lock(&slob_lock);
	for (unsigned int l = 0; l < nr; l++)
		slob_list_figures(l, &f[l]);
	st = slob_stats;
	kmem_unlock(&slob_lock);
	/* Counted outside slob_lock (slob.c): atomics. */
	st.kmallocs = rd(&slob_stats.kmallocs);
	st.kmalloc_frees = rd(&slob_stats.kmalloc_frees);
	st.kmalloc_bytes = rd(&slob_stats.kmalloc_bytes);
	st.kmalloc_overhead = rd(&slob_stats.kmalloc_overhead);
	st.bigpages = rd(&slob_stats.bigpages);
	st.bigpages_active = rd(&slob_stats.bigpages_active);

	for (unsigned int l = 0; l < nr; l++)
		seq_printf(m, "%s list pages %lu unused %lu biggest %lu fragments %lu\n", slob_list_name(l),
			   f[l].pages, f[l].unused, f[l].biggest, f[l].fragments);
	for (unsigned int l = 0; l < nr; l++) {
		seq_printf(m, "%s list holes", slob_list_name(l));
		for (unsigned int b = 0; b < SLOB_HOLE_BUCKETS; b++)
			seq_printf(m, " %lu:%lu", 16UL << b, f[l].holes[b]);
		seq_printf(m, "\n");
	}
	for (unsigned int l = 0; l < nr; l++)
		seq_printf(m, "%s list searches %lu page scans %lu block scans %lu new pages %lu\n",
			   slob_list_name(l), st.list[l].searches, st.list[l].page_scans, st.list[l].block_scans,
			   st.list[l].new_pages);
	seq_printf(m, "slob pages %lu allocs %lu frees %lu active %lu allocated %lu page scans %lu block scans %lu\n",
		   st.pages, st.allocs, st.frees, st.allocs - st.frees, st.allocated, st.page_scans,
		   st.block_scans);
	seq_printf(m, "kmallocs %lu active %lu allocated %lu overhead %lu\n", st.kmallocs,
		   st.kmallocs - st.kmalloc_frees, st.kmalloc_bytes, st.kmalloc_overhead);
	seq_printf(m, "bigpages %lu active %lu\n", st.bigpages, st.bigpages_active);
	seq_printf(m, "total %lu used %lu\n", st.pages + st.bigpages_active,
		   (st.allocated + PAGE_SIZE - 1) / PAGE_SIZE + st.bigpages_active);
}

static int slob_stats_file(struct seq_buf *m, const char *path)
{
	(void)path;
	if (slab_allocator != SLAB_ALLOCATOR_SLOB)
		return -ENOENT;
	slob_stats_show(m);
	return 0;
}
KMEMFS_FILE("/sys/kernel/debug/slob/stats", 0444, slob_stats_file, NULL);
