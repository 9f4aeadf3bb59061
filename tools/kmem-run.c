// SPDX-License-Identifier: MIT
/*
 * kmem-run: a page-allocator demo (in `make run`'s report): boot a small
 * machine, allocate blocks of orders 0-3 (up to 24000 of them: the whole of
 * the default 128 MiB), free three in four, and show /proc/buddyinfo,
 * /proc/pagetypeinfo and the fragmentation indices before and after, as the
 * kernel would, then count the 2 MiB blocks that can be had.  Every
 * allocation comes before every free, so page_alloc.tail_placement changes
 * nothing here (bench_page_frag measures it, with churn).
 *
 *   kmem-run [cmdline]     e.g. kmem-run "mem=128M"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

static void show(const char *path)
{
	static char buf[1 << 16];
	ssize_t n = kmem_read(path, buf, sizeof(buf));

	printf("$ cat %s\n", path);
	if (n < 0)
		printf("error %zd\n", n);
	else
		fputs(buf, stdout);
	putchar('\n');
}

static void show_all(void)
{
	show("/proc/buddyinfo");
	show("/proc/pagetypeinfo");
	show("/sys/kernel/debug/extfrag/unusable_index");
	show("/sys/kernel/debug/extfrag/extfrag_index");
}

static unsigned long long rng = 88172645463325252ull;
static unsigned long xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned long)rng;
}

struct block {
	struct page *page;
	unsigned int order;
};

int main(int argc, char **argv)
{
	const char *cmdline = argc > 1 ? argv[1] : "mem=128M";
	enum { NR = 24000 };
	static struct block blocks[NR];

	if (kmem_init(cmdline)) {
		fprintf(stderr, "kmem-run: bad command line \"%s\"\n", cmdline);
		return 1;
	}
	printf("kmem page allocator demo, cmdline \"%s\"\n\n== at boot ==\n", cmdline);
	show_all();

	/* Fill with a mix of movable and unmovable blocks, orders 0-3. */
	int n = 0;
	for (; n < NR; n++) {
		unsigned int order = xorshift() % 4;
		gfp_t gfp = GFP_KERNEL | __GFP_NOWARN | (xorshift() % 3 ? __GFP_MOVABLE : 0);
		blocks[n].page = alloc_pages(gfp, order);
		if (!blocks[n].page)
			break;
		blocks[n].order = order;
	}
	/* Free three in four: the survivors pin scattered pageblocks. */
	int live = 0;
	for (int i = 0; i < n; i++) {
		if (xorshift() % 4) {
			__free_pages(blocks[i].page, blocks[i].order);
			blocks[i].page = NULL;
		} else {
			live++;
		}
	}
	drain_local_pages();
	printf("== after allocating %d blocks and freeing all but %d ==\n", n, live);
	show_all();

	/* Count them all: a chain through the blocks themselves needs no array. */
	int huge = 0;
	struct page *hp, *chain = NULL;
	while ((hp = alloc_pages(GFP_KERNEL | __GFP_NOWARN, 9)) != NULL) {
		*(struct page **)page_address(hp) = chain;
		chain = hp;
		huge++;
	}
	printf("order-9 (2 MiB) allocations that succeed now: %d\n\n", huge);
	while (chain) {
		hp = chain;
		chain = *(struct page **)page_address(hp);
		__free_pages(hp, 9);
	}
	for (int i = 0; i < n; i++)
		if (blocks[i].page)
			__free_pages(blocks[i].page, blocks[i].order);
	drain_local_pages();
	printf("== after freeing everything ==\n");
	show("/proc/buddyinfo");
	show("/proc/vmstat");
	return 0;
}
