// SPDX-License-Identifier: MIT
/*
 * Zone watermarks and per-thread list sizes (kernel mm/page_alloc.c:
 * __setup_per_zone_wmarks(), zone_batchsize(), zone_highsize(),
 * zone_watermark_ok()), and the vm.* sysctls that set them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/boot.h"
#include "core/cmdline.h"
#include "page_alloc/mm.h"
#include "page_alloc/pcp.h"

static unsigned long user_min_free_kbytes;	/* 0: derive from memory size */
static unsigned int watermark_scale_factor = 10;
static unsigned int percpu_pagelist_high_fraction;
static unsigned long min_free_kbytes;

kmem_param("sysctl.vm.min_free_kbytes", user_min_free_kbytes, ulong,
	   "reserve below which only __GFP_HIGH/atomic allocations succeed (KiB)");
kmem_param("sysctl.vm.watermark_scale_factor", watermark_scale_factor, uint,
	   "distance between min, low and high watermarks in 1/10000 of memory");
kmem_param("sysctl.vm.percpu_pagelist_high_fraction", percpu_pagelist_high_fraction, uint,
	   "pcp high = managed / fraction / nr_cpus (0: derive from the low watermark)");

static unsigned long int_sqrt(unsigned long x)
{
	unsigned long r = 0, bit = 1UL << 62;

	while (bit > x)
		bit >>= 2;
	while (bit) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

static int rounddown_pow_of_two(int n)
{
	return n <= 0 ? 0 : 1 << (31 - __builtin_clz((unsigned int)n));
}

/* kernel zone_batchsize(): about 1/4 MiB, and never a power of two. */
static int zone_batchsize(unsigned long managed)
{
	unsigned long batch = managed >> 10;

	if (batch > (1UL << 20) / PAGE_SIZE)
		batch = (1UL << 20) / PAGE_SIZE;
	batch /= 4;
	if (batch < 1)
		batch = 1;
	int b = rounddown_pow_of_two((int)(batch + batch / 2)) - 1;
	return b < 1 ? 1 : b;
}

static int zone_highsize(struct zone *zone, int batch)
{
	unsigned long total;
	unsigned int cpus = kmem_nr_cpus();

	if (percpu_pagelist_high_fraction)
		total = zone_managed_pages(zone) / percpu_pagelist_high_fraction;
	else
		total = wmark_pages(zone, WMARK_LOW);
	unsigned long high = total / cpus;
	if (high < (unsigned long)batch << 2)
		high = (unsigned long)batch << 2;
	return (int)high;
}

/*
 * Serialises the sysctl writes and the recomputation they and growth do
 * (the kernel's sysctl handlers hold a mutex too); taken after
 * hotplug_lock, before zone->lock.  The values are relaxed atomics for the
 * readers outside it.
 */
kmem_lock_t wmark_lock = KMEM_LOCK_INIT;

/* kernel setup_per_zone_wmarks() + zone_pcp_update(), for our single zone; wmark_lock held. */
static void __setup_per_zone_wmarks(void)
{
	struct zone *zone = &zone_normal;
	unsigned long managed = zone_managed_pages(zone);
	unsigned long mfk;

	if (user_min_free_kbytes) {
		mfk = user_min_free_kbytes;
	} else {
		mfk = int_sqrt((managed << (PAGE_SHIFT - 10)) * 16);
		if (mfk < 128)
			mfk = 128;
		if (mfk > 262144)
			mfk = 262144;
	}
	__atomic_store_n(&min_free_kbytes, mfk, __ATOMIC_RELAXED);

	kmem_lock(&zone->lock);
	unsigned long min = mfk >> (PAGE_SHIFT - 10);
	unsigned long tmp = managed * watermark_scale_factor / 10000;
	if (tmp < min / 4)
		tmp = min / 4;
	__atomic_store_n(&zone->_watermark[WMARK_MIN], min, __ATOMIC_RELAXED);
	__atomic_store_n(&zone->_watermark[WMARK_LOW], min + tmp, __ATOMIC_RELAXED);
	__atomic_store_n(&zone->_watermark[WMARK_HIGH], min + 2 * tmp, __ATOMIC_RELAXED);
	__atomic_store_n(&zone->_watermark[WMARK_PROMO], min + 3 * tmp, __ATOMIC_RELAXED);
	kmem_unlock(&zone->lock);

	int batch = zone_batchsize(managed);
	atomic_store_explicit(&zone->pageset_batch, batch, memory_order_relaxed);
	atomic_store_explicit(&zone->pageset_high, zone_highsize(zone, batch),
			      memory_order_relaxed);
}

void setup_per_zone_wmarks(void)
{
	kmem_lock(&wmark_lock);
	__setup_per_zone_wmarks();
	kmem_unlock(&wmark_lock);
}

unsigned long kmem_min_free_kbytes(void)
{
	return __atomic_load_n(&min_free_kbytes, __ATOMIC_RELAXED);
}

/* The kernel's sysctl ranges; boot values go through the same checks as writes. */
static int sysctl_vm_check(const char *name, unsigned long val)
{
	if (!strcmp(name, "min_free_kbytes"))
		return val >= 1 && val <= (1UL << 30) ? 0 : -EINVAL;
	if (!strcmp(name, "watermark_scale_factor"))
		return val >= 1 && val <= 3000 ? 0 : -EINVAL;
	/* proc_dointvec_minmax: an int, so nothing above INT_MAX. */
	if (!strcmp(name, "percpu_pagelist_high_fraction"))
		return !val || (val >= 8 && val <= INT_MAX) ? 0 : -EINVAL;
	return -ENOENT;
}

int check_sysctl_vm_params(void)
{
	if ((user_min_free_kbytes && sysctl_vm_check("min_free_kbytes", user_min_free_kbytes)) ||
	    sysctl_vm_check("watermark_scale_factor", watermark_scale_factor) ||
	    sysctl_vm_check("percpu_pagelist_high_fraction", percpu_pagelist_high_fraction)) {
		pr_err("sysctl.vm.*: value out of range (min_free_kbytes 1..1G, "
		       "watermark_scale_factor 1..3000, percpu_pagelist_high_fraction 0 or 8..INT_MAX)\n");
		return -EINVAL;
	}
	return 0;
}

int kmem_set_sysctl_vm(const char *name, unsigned long val)
{
	int rc = sysctl_vm_check(name, val);

	if (rc)
		return rc;
	kmem_lock(&wmark_lock);
	if (!strcmp(name, "min_free_kbytes"))
		__atomic_store_n(&user_min_free_kbytes, val, __ATOMIC_RELAXED);
	else if (!strcmp(name, "watermark_scale_factor"))
		__atomic_store_n(&watermark_scale_factor, (unsigned int)val, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&percpu_pagelist_high_fraction, (unsigned int)val, __ATOMIC_RELAXED);
	__setup_per_zone_wmarks();
	kmem_unlock(&wmark_lock);
	return 0;
}

unsigned long kmem_get_sysctl_vm(const char *name)
{
	if (!strcmp(name, "min_free_kbytes"))
		return __atomic_load_n(&min_free_kbytes, __ATOMIC_RELAXED);
	if (!strcmp(name, "watermark_scale_factor"))
		return __atomic_load_n(&watermark_scale_factor, __ATOMIC_RELAXED);
	return __atomic_load_n(&percpu_pagelist_high_fraction, __ATOMIC_RELAXED);
}

long zone_free_pages(struct zone *z)
{
	(void)z;
	return global_zone_page_state(NR_FREE_PAGES);
}

bool zone_watermark_ok(struct zone *z, unsigned int order, unsigned long mark,
		       unsigned int alloc_flags, long free_pages)
{
	long min = (long)mark;

	free_pages -= (1L << order) - 1;
	if (alloc_flags & ALLOC_MIN_RESERVE) {
		min -= min / 2;
		if (alloc_flags & ALLOC_NON_BLOCK)
			min -= min / 4;
	}
	if (free_pages <= min)
		return false;
	if (!order)
		return true;

	/* Enough free pages, but is there a block big enough?  Racy by design. */
	for (unsigned int o = order; o < NR_PAGE_ORDERS; o++) {
		struct free_area *area = &z->free_area[o];
		if (!__atomic_load_n(&area->nr_free, __ATOMIC_RELAXED))
			continue;
		for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++)
			if (__atomic_load_n(&area->nr_free_mt[mt], __ATOMIC_RELAXED))
				return true;
	}
	return false;
}
