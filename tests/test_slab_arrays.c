// SPDX-License-Identifier: MIT
/*
 * SLAB (slab=slab), its own behaviour: the array caches (LIFO, batch
 * refills, BATCHREFILL_LIMIT for untouched arrays, cache_flusharray()
 * moving the oldest entries to the shared array), free_block() putting
 * slabs at the tail of slabs_partial and free_limit releasing whole free
 * slabs, enable_cpucache()'s defaults, tuning through /proc/slabinfo
 * (values the kernel rejects change nothing), the statistics columns,
 * cache_reap()'s draining of untouched arrays, constructors run when a
 * slab is built, remote frees, and the debug layout and reports (in
 * children booted with slab_debug=).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmem.h>

#include "core/boot.h"
#include "core/printk.h"
#include "slab/slab/slab_priv.h"

#include "ktest.h"
#include "lib/kt_util.h"
#include "lib/slab_test.h"

#define GFP GFP_KERNEL

#define KT_EXPECT_EQ_U(a, b) do {						\
	unsigned long __a = (unsigned long)(a), __b = (unsigned long)(b);	\
	if (__a != __b)								\
		KT_FAIL("%s == %s: %lu != %lu", #a, #b, __a, __b);		\
} while (0)

static struct kmem_cache *new_cache(const char *name, unsigned int size, void (*ctor)(void *))
{
	return kmem_cache_create(name, size, 0, SLAB_NO_MERGE, ctor);
}

static struct array_cache *my_array(struct kmem_cache *s)
{
	return slab_this->ac[SLABC(s)->cpu_slot];
}

/* The /proc/slabinfo line of @name (static buffer), or "" if none. */
static const char *slabinfo_line(const char *name)
{
	static char line[512];
	char *all = kt_read_checked("/proc/slabinfo");
	size_t nl = strlen(name);

	line[0] = '\0';
	for (char *p = all; p && *p;) {
		char *end = strchr(p, '\n');
		if (!strncmp(p, name, nl) && p[nl] == ' ') {
			size_t len = end ? (size_t)(end - p) : strlen(p);
			if (len >= sizeof(line))
				len = sizeof(line) - 1;
			memcpy(line, p, len);
			line[len] = '\0';
			break;
		}
		p = end ? end + 1 : NULL;
	}
	free(all);
	return line;
}

/* The tunables of @name's slabinfo line. */
static int tunables(const char *name, unsigned int *limit, unsigned int *batch, unsigned int *shared)
{
	const char *t = strstr(slabinfo_line(name), ": tunables");

	return t && sscanf(t, ": tunables %u %u %u", limit, batch, shared) == 3 ? 0 : -1;
}

KTEST(booted_on_slab)
{
	KT_ASSERT_STREQ(slab_test_backend(), "slab");
}

KTEST(enable_cpucache_defaults)
{
	static const struct { unsigned int size, limit; } want[] = {
		{ 64, 120 }, { 256, 120 }, { 512, 54 }, { 1024, 54 }, { 2048, 24 }, { 4096, 24 }, { 8192, 8 },
	};
	unsigned int shared = kmem_nr_cpus() > 1 ? 8 : 0;

	for (unsigned int i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char name[32];
		unsigned int l, b, sh;

		snprintf(name, sizeof(name), "sa_defaults_%u", want[i].size);
		struct kmem_cache *s = new_cache(name, want[i].size, NULL);
		KT_ASSERT(s);
		KT_ASSERT_EQ(tunables(name, &l, &b, &sh), 0);
		KT_EXPECT(l == want[i].limit && b == (want[i].limit + 1) / 2);
		KT_EXPECT(sh == (want[i].size <= 4096 ? shared : 0));
		kmem_cache_destroy(s);
	}
}

KTEST(array_is_lifo_and_refills_in_batches)
{
	struct kmem_cache *s = new_cache("sa_lifo", 32, NULL);
	KT_ASSERT(s);
	struct slab_cache *c = SLABC(s);
	void *x = kmem_cache_alloc(s, GFP);
	KT_ASSERT(x);
	struct array_cache *ac = my_array(s);
	KT_ASSERT(ac);
	/* An untouched (new) array is refilled by at most BATCHREFILL_LIMIT. */
	KT_EXPECT_EQ_U(ac->avail + 1, BATCHREFILL_LIMIT < c->num ? BATCHREFILL_LIMIT : c->num);
	KT_EXPECT(ac->limit == 120 && ac->batchcount == 60);
	/* LIFO: what was freed last comes back first. */
	void *y = kmem_cache_alloc(s, GFP);
	kmem_cache_free(s, x);
	kmem_cache_free(s, y);
	KT_EXPECT(kmem_cache_alloc(s, GFP) == y);
	KT_EXPECT(kmem_cache_alloc(s, GFP) == x);
	/* Empty it: the next refill of a touched array takes batchcount. */
	void *p[200];
	unsigned int n = ac->avail;
	for (unsigned int i = 0; i < n; i++)
		p[i] = kmem_cache_alloc(s, GFP);
	KT_ASSERT_EQ(ac->avail, 0);
	KT_ASSERT(ac->touched);
	p[n] = kmem_cache_alloc(s, GFP);
	KT_EXPECT_EQ_U(ac->avail + 1, 60);
	for (unsigned int i = 0; i <= n; i++)
		kmem_cache_free(s, p[i]);
	kmem_cache_free(s, x);
	kmem_cache_free(s, y);
	kmem_cache_destroy(s);
}

KTEST(flusharray_moves_the_oldest_entries)
{
	struct kmem_cache *s = new_cache("sa_flush", 128, NULL);
	KT_ASSERT(s);
	struct slab_cache *c = SLABC(s);
	static void *p[400];
	for (int i = 0; i < 400; i++)
		KT_ASSERT(p[i] = kmem_cache_alloc(s, GFP));
	struct array_cache *ac = my_array(s);
	/* Empty the array first: its objects go back to the node. */
	slab_bk_flush_this_thread(s);
	KT_ASSERT_EQ(ac->avail, 0);
	unsigned int shared_before = c->node.shared ? c->node.shared->avail : 0;
	/* limit frees fill the array; the next one flushes the oldest batchcount. */
	for (unsigned int i = 0; i <= ac->limit; i++)
		kmem_cache_free(s, p[i]);
	KT_EXPECT_EQ_U(ac->avail, ac->limit - ac->batchcount + 1);
	KT_EXPECT(ac->entry[0] == p[ac->batchcount]);
	KT_EXPECT(ac->entry[ac->avail - 1] == p[ac->limit]);
	if (c->node.shared) {
		/* The shared array took them, oldest first. */
		KT_EXPECT_EQ_U(c->node.shared->avail, shared_before + ac->batchcount);
		KT_EXPECT(c->node.shared->entry[shared_before] == p[0]);
		/* A refill of an empty array takes from the shared one, from its top. */
		unsigned int n = ac->avail;
		static void *r[400];
		for (unsigned int i = 0; i < n; i++)
			r[i] = kmem_cache_alloc(s, GFP);
		void *q = kmem_cache_alloc(s, GFP);
		KT_EXPECT(q == p[ac->batchcount - 1]);
		kmem_cache_free(s, q);
		for (unsigned int i = 0; i < n; i++)
			kmem_cache_free(s, r[i]);
	}
	slab_bk_flush_this_thread(s);
	for (unsigned int i = ac->limit + 1; i < 400; i++)
		kmem_cache_free(s, p[i]);
	kmem_cache_destroy(s);
}

/* A cache whose frees go straight to their slabs: limit 1, batchcount 1, no shared array. */
static struct kmem_cache *unbuffered_cache(const char *name, unsigned int size)
{
	struct kmem_cache *s = new_cache(name, size, NULL);
	char cmd[128];

	if (!s)
		return NULL;
	snprintf(cmd, sizeof(cmd), "%s 1 1 0", name);
	if (kmem_write("/proc/slabinfo", cmd)) {
		kmem_cache_destroy(s);
		return NULL;
	}
	return s;
}

KTEST(free_block_files_slabs_at_the_tail_of_partial)
{
	struct kmem_cache *s = unbuffered_cache("sa_tail", 512);
	KT_ASSERT(s);
	struct slab_cache *c = SLABC(s);
	unsigned int per = c->num;
	static void *p[3 * 64];
	KT_ASSERT(per <= 64);
	for (unsigned int i = 0; i < 3 * per; i++)
		KT_ASSERT(p[i] = kmem_cache_alloc(s, GFP));
	slab_bk_flush_this_thread(s);
	/* A fresh cache hands its slabs' objects out in order: three full slabs. */
	struct page *a = virt_to_head_page(p[0]);
	struct page *b = virt_to_head_page(p[per]);
	KT_ASSERT(a != b);
	/* Free one of a's, then one of b's: a then b on the partial list (b at the tail). */
	kmem_cache_free(s, p[1]);
	slab_bk_flush_this_thread(s);
	kmem_cache_free(s, p[per + 1]);
	slab_bk_flush_this_thread(s);
	struct slab_node *n = &c->node;
	kmem_lock(&n->list_lock);
	struct slab_desc *last = list_last_entry(&n->slabs_partial, struct slab_desc, slab_list);
	struct slab_desc *prev = list_entry(last->slab_list.prev, struct slab_desc, slab_list);
	kmem_unlock(&n->list_lock);
	KT_EXPECT(desc_page(last) == b);
	KT_EXPECT(desc_page(prev) == a);
	for (unsigned int i = 0; i < 3 * per; i++)
		if (i != 1 && i != per + 1)
			kmem_cache_free(s, p[i]);
	kmem_cache_destroy(s);
}

KTEST(free_limit_releases_whole_free_slabs)
{
	struct kmem_cache *s = unbuffered_cache("sa_free_limit", 1024);
	KT_ASSERT(s);
	struct slab_cache *c = SLABC(s);
	struct slab_node *n = &c->node;
	static void *p[10 * 64];
	unsigned int nr = 10 * c->num;
	for (unsigned int i = 0; i < nr; i++)
		KT_ASSERT(p[i] = kmem_cache_alloc(s, GFP));
	KT_EXPECT_EQ_U(n->free_limit, (1 + kmem_nr_cpus()) * 1 + c->num);
	for (unsigned int i = 0; i < nr; i++)
		kmem_cache_free(s, p[i]);
	slab_bk_flush_this_thread(s);
	kmem_lock(&n->list_lock);
	unsigned long free_objects = n->free_objects, total = n->total_slabs;
	kmem_unlock(&n->list_lock);
	/* No more free objects than free_limit, beyond the one slab that crossed it. */
	KT_EXPECT(free_objects <= n->free_limit);
	KT_EXPECT(total <= 1 + n->free_limit / c->num);
	KT_EXPECT(total >= 1);
	kmem_cache_destroy(s);
}

KTEST(slabinfo_write_tunes_and_rejects_what_the_kernel_rejects)
{
	struct kmem_cache *s = new_cache("sa_tune", 200, NULL);
	KT_ASSERT(s);
	unsigned int l, b, sh;
	KT_ASSERT_EQ(kmem_write("/proc/slabinfo", "sa_tune 54 27 4"), 0);
	KT_ASSERT_EQ(tunables("sa_tune", &l, &b, &sh), 0);
	KT_EXPECT(l == 54 && b == 27 && sh == 4);
	KT_EXPECT(SLABC(s)->node.shared && SLABC(s)->node.shared->limit == 4 * 27);
	/* Values the kernel ignores: accepted, nothing changes. */
	static const char *const ignored[] = {
		"sa_tune 0 1 1", "sa_tune 10 0 1", "sa_tune 10 20 1", "sa_tune 10 5 -1",
	};
	for (unsigned int i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++) {
		KT_EXPECT(kmem_write("/proc/slabinfo", ignored[i]) == 0);
		KT_ASSERT_EQ(tunables("sa_tune", &l, &b, &sh), 0);
		KT_EXPECT(l == 54 && b == 27 && sh == 4);
	}
	/* Malformed lines and unknown caches are errors. */
	KT_EXPECT(kmem_write("/proc/slabinfo", "sa_tune 1 1") != 0);
	KT_EXPECT(kmem_write("/proc/slabinfo", "sa_tune") != 0);
	KT_EXPECT(kmem_write("/proc/slabinfo", "no_such_cache 1 1 1") != 0);
	/* This thread's array follows at once: a smaller limit flushes the oldest. */
	void *p[100];
	for (int i = 0; i < 100; i++)
		p[i] = kmem_cache_alloc(s, GFP);
	for (int i = 0; i < 100; i++)
		kmem_cache_free(s, p[i]);
	KT_EXPECT(my_array(s)->avail <= 54);
	KT_ASSERT_EQ(kmem_write("/proc/slabinfo", "sa_tune 8 4 0"), 0);
	KT_EXPECT(my_array(s)->limit == 8 && my_array(s)->avail <= 8);
	KT_EXPECT(SLABC(s)->node.shared == NULL);
	/* And a larger one grows the array. */
	KT_ASSERT_EQ(kmem_write("/proc/slabinfo", "sa_tune 2000 1000 1"), 0);
	for (int i = 0; i < 100; i++)
		p[i] = kmem_cache_alloc(s, GFP);
	for (int i = 0; i < 100; i++)
		kmem_cache_free(s, p[i]);
	KT_EXPECT(my_array(s)->limit == 2000 && my_array(s)->avail >= 100);
	KT_EXPECT(slab_bk_validate(s) == 0);
	kmem_cache_destroy(s);
}

KTEST(slabinfo_shows_sharedavail_and_statistics)
{
	struct kmem_cache *s = new_cache("sa_stats", 64, NULL);
	KT_ASSERT(s);
	void *p[300];
	for (int i = 0; i < 300; i++)
		p[i] = kmem_cache_alloc(s, GFP);
	for (int i = 0; i < 300; i++)
		kmem_cache_free(s, p[i]);
	char *all = kt_read_checked("/proc/slabinfo");
	KT_ASSERT(all);
	static const char header[] = "slabinfo - version: 2.1 (statistics)\n";
	KT_EXPECT(!strncmp(all, header, sizeof(header) - 1));
	KT_EXPECT(strstr(all, " : globalstat <listallocs> <maxobjs> <grown> <reaped> <error> <maxfreeable> "
			      "<nodeallocs> <remotefrees> <alienoverflow> : cpustat <allochit> <allocmiss> "
			      "<freehit> <freemiss>\n"));
	free(all);
	const char *line = slabinfo_line("sa_stats");
	unsigned long active, num, sharedavail, allocs, high, grown, hit, miss, fhit, fmiss;
	unsigned int objsize, per;
	KT_ASSERT_EQ(sscanf(line, "sa_stats %lu %lu %u %u", &active, &num, &objsize, &per), 4);
	KT_EXPECT(objsize == 64 && per == 64 && num >= 300 && active <= num);
	const char *sd = strstr(line, ": slabdata");
	KT_ASSERT(sd && sscanf(sd, ": slabdata %*u %*u %lu", &sharedavail) == 1);
	KT_EXPECT(sharedavail == (SLABC(s)->node.shared ? SLABC(s)->node.shared->avail : 0));
	const char *g = strstr(line, ": globalstat");
	KT_ASSERT(g && sscanf(g, ": globalstat %lu %lu %lu", &allocs, &high, &grown) == 3);
	KT_EXPECT(allocs >= 300 && high >= 300 && grown >= 300 / 64);
	const char *cs = strstr(line, ": cpustat");
	KT_ASSERT(cs && sscanf(cs, ": cpustat %lu %lu %lu %lu", &hit, &miss, &fhit, &fmiss) == 4);
	KT_EXPECT(hit + miss == 300 && miss >= 1 && fhit + fmiss >= 300 && fmiss >= 1);
	kmem_cache_destroy(s);
}

static atomic_int ctor_calls;
static void counting_ctor(void *p)
{
	atomic_fetch_add(&ctor_calls, 1);
	memset(p, 0x5c, 48);
}

KTEST(constructors_run_when_the_slab_is_built)
{
	atomic_store(&ctor_calls, 0);
	struct kmem_cache *s = new_cache("sa_ctor", 48, counting_ctor);
	KT_ASSERT(s);
	KT_EXPECT(SLABC(s)->mgmt != SLAB_MGMT_OBJFREELIST);
	void *x = kmem_cache_alloc(s, GFP);
	KT_ASSERT(x);
	int after_first = atomic_load(&ctor_calls);
	KT_EXPECT_EQ_U(after_first, SLABC(s)->num);
	for (int round = 0; round < 100; round++) {
		unsigned char *y = kmem_cache_alloc(s, GFP);
		KT_EXPECT(y[0] == 0x5c && y[47] == 0x5c);
		kmem_cache_free(s, y);
	}
	KT_EXPECT_EQ_U(atomic_load(&ctor_calls), after_first);
	kmem_cache_free(s, x);
	kmem_cache_destroy(s);
}

KTEST(cache_reap_drains_untouched_arrays)
{
	struct kmem_cache *s = new_cache("sa_reap", 96, NULL);
	struct kmem_cache *t = new_cache("sa_reap_other", 96, NULL);
	KT_ASSERT(s && t);
	void *p[100];
	for (int i = 0; i < 100; i++)
		p[i] = kmem_cache_alloc(s, GFP);
	for (int i = 0; i < 100; i++)
		kmem_cache_free(s, p[i]);
	struct array_cache *ac = my_array(s);
	unsigned int before = ac->avail;
	KT_ASSERT(before >= 20);
	/* A first reap only clears touched; the next drains (limit + 4) / 5. */
	drain_array(s, ac, false);
	KT_EXPECT(ac->avail == before && !ac->touched);
	drain_array(s, ac, false);
	KT_EXPECT_EQ_U(ac->avail, before - (ac->limit + 4) / 5);
	/* The periodic path: this thread's reap is due; slow paths of another cache run it. */
	before = ac->avail;
	slab_this->next_reap = 0;
	void *q[400];
	for (int i = 0; i < 400; i++)
		q[i] = kmem_cache_alloc(t, GFP);
	for (int i = 0; i < 400; i++)
		kmem_cache_free(t, q[i]);
	for (int i = 0; i < 400 && ac->avail == before; i++) {
		slab_this->next_reap = 0;
		for (int j = 0; j < 100; j++)
			q[j] = kmem_cache_alloc(t, GFP);
		for (int j = 0; j < 100; j++)
			kmem_cache_free(t, q[j]);
		slab_bk_flush_this_thread(t);
	}
	KT_EXPECT(ac->avail < before);
	kmem_cache_destroy(s);
	kmem_cache_destroy(t);
}

/* ---- remote frees ----------------------------------------------------------- */

struct remote {
	struct kmem_cache *s;
	void **p;
	int n;
};

static void *free_all(void *arg)
{
	struct remote *r = arg;

	for (int i = 0; i < r->n; i++)
		kmem_cache_free(r->s, r->p[i]);
	return NULL;
}

KTEST(remote_frees_reach_the_owner_through_the_node)
{
	struct kmem_cache *s = new_cache("sa_remote", 192, NULL);
	KT_ASSERT(s);
	static void *p[2000];
	for (int i = 0; i < 2000; i++) {
		KT_ASSERT(p[i] = kmem_cache_alloc(s, GFP));
		slab_fill(p[i], 192, (uint64_t)i);
	}
	struct remote r = { s, p, 2000 };
	pthread_t th;
	KT_ASSERT_EQ(pthread_create(&th, NULL, free_all, &r), 0);
	pthread_join(th, NULL);
	/*
	 * The freeing thread's array went back to the slabs when it exited;
	 * what its flushes put in the shared array stays there, for any
	 * thread's refills.  Both count as allocated, as in the kernel.
	 */
	struct slabinfo info;
	slab_bk_get_slabinfo(s, &info);
	unsigned int mine = my_array(s) ? my_array(s)->avail : 0;
	KT_EXPECT_EQ_U(info.active_objs, mine + info.shared_avail);
	KT_EXPECT(info.shared_avail > 0 || !SLABC(s)->node.shared);
	KT_EXPECT(slab_cache_works(s, 192));
	KT_EXPECT_EQ_U(slab_bk_validate(s), 0);
	kmem_cache_destroy(s);
}

/* An off-slab cache: its index arrays are kmalloc'ed and go back with their slabs. */
static void nop_ctor(void *p)
{
	memset(p, 0x11, 16);
}

static void *use_off_slab(void *arg)
{
	struct kmem_cache *s = arg;
	void *p[100];

	for (int i = 0; i < 100; i++)
		p[i] = kmem_cache_alloc(s, GFP);
	for (int i = 0; i < 100; i++)
		kmem_cache_free(s, p[i]);
	/* This thread exits holding the objects in its array: its exit gives them back. */
	return NULL;
}

KTEST(off_slab_index_arrays_come_and_go_with_their_slabs)
{
	struct kmem_cache *s = new_cache("sa_offslab", 512, nop_ctor);
	KT_ASSERT(s);
	struct slab_cache *c = SLABC(s);
	KT_ASSERT_EQ(c->mgmt, SLAB_MGMT_OFF_SLAB);
	KT_ASSERT(c->freelist_cache);
	struct slabinfo fi0, fi1;
	slab_bk_get_slabinfo(c->freelist_cache, &fi0);
	pthread_t th;
	KT_ASSERT_EQ(pthread_create(&th, NULL, use_off_slab, s), 0);
	pthread_join(th, NULL);
	slab_bk_get_slabinfo(c->freelist_cache, &fi1);
	/* One index array per slab of the cache, allocated from the kmalloc cache. */
	struct slabinfo si;
	slab_bk_get_slabinfo(s, &si);
	KT_EXPECT(si.active_objs == si.shared_avail);
	KT_EXPECT(fi1.active_objs >= fi0.active_objs);
	KT_EXPECT(slab_cache_works(s, 512));
	KT_EXPECT_EQ_U(slab_bk_validate(s), 0);
	struct kmem_cache *fc = c->freelist_cache;
	unsigned long reports = kmem_report_count();
	kmem_cache_destroy(s);
	KT_EXPECT(kmem_report_count() == reports);
	/* The arrays went back to their cache with the slabs. */
	slab_bk_flush_this_thread(NULL);
	slab_bk_get_slabinfo(fc, &fi1);
	KT_EXPECT(fi1.active_objs <= fi0.active_objs + fi1.shared_avail);
	KT_EXPECT_EQ_U(slab_bk_validate(fc), 0);
}

/* ---- bad input without debug flags ------------------------------------------- */

KTEST(double_free_off_the_array_is_caught_by_free_block)
{
	struct kmem_cache *s = unbuffered_cache("sa_df", 128);
	KT_ASSERT(s);
	void *a = kmem_cache_alloc(s, GFP), *b = kmem_cache_alloc(s, GFP);
	KT_ASSERT(a && b);
	kmem_cache_free(s, a);
	kmem_cache_free(s, b);
	slab_bk_flush_this_thread(s);
	/* a is in its slab's free index array, not on top of any array. */
	KT_ASSERT_ONE_REPORT({ kmem_cache_free(s, a); slab_bk_flush_this_thread(s); }, "Object already free");
	void *x = kmem_cache_alloc(s, GFP), *y = kmem_cache_alloc(s, GFP), *z = kmem_cache_alloc(s, GFP);
	KT_EXPECT(x != y && y != z && x != z);
	kmem_cache_free(s, x);
	kmem_cache_free(s, y);
	kmem_cache_free(s, z);
	KT_EXPECT_EQ_U(slab_bk_validate(s), 0);
	kmem_cache_destroy(s);
}

/* ---- debugging (children booted with slab_debug=) ----------------------------- */

static void child_debug_layout(void)
{
	KT_ASSERT_EQ(slab_test_boot("mem=32M slab=slab slab_debug=ZPU"), 0);
	struct kmem_cache *s = kmem_cache_create("sa_dbg", 100, 8, SLAB_NO_MERGE, NULL);
	KT_ASSERT(s);
	struct slab_cache *c = SLABC(s);
	KT_ASSERT_EQ(c->dbg, SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER);
	KT_ASSERT_EQ(c->obj_offset, 8);
	KT_ASSERT_EQ(s->size, 8 + 104 + 8 + 8);
	unsigned char *x = kmem_cache_alloc(s, GFP);
	KT_ASSERT(x);
	uint64_t r1, r2;
	memcpy(&r1, x - 8, 8);
	memcpy(&r2, x + 104, 8);
	KT_EXPECT(r1 == RED_ACTIVE && r2 == RED_ACTIVE);
	unsigned long user;
	memcpy(&user, x + 112, sizeof(user));
	KT_EXPECT(user != 0);
	kmem_cache_free(s, x);
	memcpy(&r1, x - 8, 8);
	memcpy(&r2, x + 104, 8);
	KT_EXPECT(r1 == RED_INACTIVE && r2 == RED_INACTIVE);
	KT_EXPECT(x[0] == POISON_FREE && x[102] == POISON_FREE && x[103] == POISON_END);

	/* A double free: the red zones say inactive. */
	KT_ASSERT_ONE_REPORT(kmem_cache_free(s, x), "double free detected");
	/* Writing past the end: Redzone overwritten at the free, repaired. */
	unsigned char *y = kmem_cache_alloc(s, GFP);
	y[104] = 0x42;
	KT_ASSERT_ONE_REPORT(kmem_cache_free(s, y), "Redzone overwritten");
	/* Writing after free: Slab corruption when the object is handed out again. */
	y[10] = 0x17;
	unsigned char *z = NULL;
	KT_ASSERT_ONE_REPORT(z = kmem_cache_alloc(s, GFP), "Slab corruption");
	KT_EXPECT(z == y);
	kmem_cache_free(s, z);
	KT_EXPECT_EQ_U(slab_bk_validate(s), 0);
	kmem_cache_destroy(s);
}

KTEST(debug_layout_and_reports)
{
	KT_ASSERT_CHILD_OK(slab_run_child("debug_layout"));
}

static const struct slab_child children[] = {
	{ "debug_layout", child_debug_layout },
};

KTEST_MAIN(
	slab_child_dispatch(children, sizeof(children) / sizeof(children[0]));
	if (slab_test_boot("mem=64M slab=slab slab.stats=1")) return 1;
)

