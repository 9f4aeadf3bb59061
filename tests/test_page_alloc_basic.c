// SPDX-License-Identifier: MIT
/* Basic page allocator behaviour through the public API. */
#include <errno.h>
#include <stdint.h>

#include <kmem.h>

#include "ktest.h"

KTEST(alloc_free_all_orders)
{
	for (unsigned int order = 0; order <= MAX_PAGE_ORDER; order++) {
		struct page *page = alloc_pages(GFP_KERNEL, order);
		KT_ASSERT(page);
		char *addr = page_address(page);
		KT_ASSERT(((uintptr_t)addr & ((PAGE_SIZE << order) - 1)) == 0);
		KT_ASSERT(virt_to_page(addr) == page);
		KT_ASSERT(pfn_to_page(page_to_pfn(page)) == page);
		memset(addr, 0xa5, PAGE_SIZE << order);
		__free_pages(page, order);
	}
}

KTEST(zeroed_page_is_zero)
{
	unsigned long addr = __get_free_pages(GFP_KERNEL, 1);
	KT_ASSERT(addr);
	memset((void *)addr, 0xff, 2 * PAGE_SIZE);
	free_pages(addr, 1);
	for (int i = 0; i < 64; i++) {
		unsigned long z = get_zeroed_page(GFP_KERNEL);
		KT_ASSERT(z);
		for (size_t j = 0; j < PAGE_SIZE; j++)
			KT_ASSERT(((unsigned char *)z)[j] == 0);
		free_page(z);
	}
}

KTEST(get_order_matches_kernel)
{
	KT_ASSERT_EQ(get_order(1), 0);
	KT_ASSERT_EQ(get_order(PAGE_SIZE), 0);
	KT_ASSERT_EQ(get_order(PAGE_SIZE + 1), 1);
	KT_ASSERT_EQ(get_order(8 * PAGE_SIZE), 3);
	KT_ASSERT_EQ(get_order(4UL << 20), 10);
}

KTEST(unknown_path_and_readonly)
{
	char buf[64];
	KT_ASSERT_EQ(kmem_read("/proc/nonexistent", buf, sizeof(buf)), -ENOENT);
	KT_ASSERT_EQ(kmem_write("/proc/buddyinfo", "1"), -EACCES);
	KT_ASSERT_EQ(kmem_write("/proc/sys/vm/min_free_kbytes", "abc"), -EINVAL);
	KT_ASSERT_EQ(kmem_init("mem=64M"), -EBUSY);
}

KTEST_MAIN(if (kmem_init("mem=64M")) { printf("kmem_init failed\n"); return 1; })
