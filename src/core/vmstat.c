// SPDX-License-Identifier: MIT
#include <string.h>

#include "core/boot.h"
#include "core/vmstat.h"
#include "platform/os.h"

const char *const vmstat_text_zone[NR_VM_ZONE_STAT_ITEMS] = {
	[NR_FREE_PAGES] = "nr_free_pages",
	[NR_FREE_REPORTED] = "nr_free_reported",
	[NR_SLAB_RECLAIMABLE] = "nr_slab_reclaimable",
	[NR_SLAB_UNRECLAIMABLE] = "nr_slab_unreclaimable",
	[NR_KMALLOC_LARGE] = "nr_kmalloc_large",
	[NR_SLAB_RELEASED] = "nr_slab_released",
};

const char *const vmstat_text_event[NR_VM_EVENT_ITEMS] = {
	[PGALLOC_NORMAL] = "pgalloc_normal",
	[PGFREE] = "pgfree",
	[PGALLOC_FAIL] = "pgalloc_fail",
	[PGREPORTED] = "pgreported",
	[MEMORY_HOTPLUG_PAGES] = "memory_hotplug_pages",
	[EXTFRAG_FALLBACK] = "extfrag_fallback",
	[EXTFRAG_CLAIM] = "extfrag_claim",
	[PCP_REFILL] = "pcp_refill",
	[PCP_DRAIN] = "pcp_drain",
	[SLAB_PAGES_RELEASED] = "slab_pages_released",
	[SLAB_PAGES_RESTORED] = "slab_pages_restored",
	[SLAB_SHEAF_REAPED] = "slab_sheaf_reaped",
};

atomic_long vm_zone_stat[NR_VM_ZONE_STAT_ITEMS];

static atomic_ulong global_events[NR_VM_EVENT_ITEMS];
static kmem_lock_t registry_lock = KMEM_LOCK_INIT;
static struct list_head registry = LIST_HEAD_INIT(registry);

void count_vm_events_global(enum vm_event_item item, unsigned long delta)
{
	atomic_fetch_add_explicit(&global_events[item], delta, memory_order_relaxed);
}

void vm_events_register(struct vm_event_state *s)
{
	kmem_lock(&registry_lock);
	list_add(&s->node, &registry);
	kmem_unlock(&registry_lock);
}

void vm_events_unregister(struct vm_event_state *s)
{
	kmem_lock(&registry_lock);
	for (int i = 0; i < NR_VM_EVENT_ITEMS; i++)
		count_vm_events_global(i, __atomic_load_n(&s->event[i], __ATOMIC_RELAXED));
	list_del(&s->node);
	kmem_unlock(&registry_lock);
	memset(s->event, 0, sizeof(s->event));
}

void all_vm_events(unsigned long ret[NR_VM_EVENT_ITEMS])
{
	struct vm_event_state *s;

	kmem_lock(&registry_lock);
	for (int i = 0; i < NR_VM_EVENT_ITEMS; i++)
		ret[i] = atomic_load_explicit(&global_events[i], memory_order_relaxed);
	list_for_each_entry(s, &registry, node)
		for (int i = 0; i < NR_VM_EVENT_ITEMS; i++)
			ret[i] += __atomic_load_n(&s->event[i], __ATOMIC_RELAXED);
	kmem_unlock(&registry_lock);
}

void vmstat_fork_prepare(void)
{
	kmem_lock(&registry_lock);
}

void vmstat_fork_parent(void)
{
	kmem_unlock(&registry_lock);
}

void vmstat_fork_child(void)
{
	kmem_lock_init(&registry_lock);
}
