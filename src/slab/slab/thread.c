// SPDX-License-Identifier: MIT
/*
 * SLAB's per-CPU state, kept per thread in this version: a thread's array
 * caches (one per cache it used, by the cache's slot number), set up on
 * first use, flushed when the thread exits; the registry of live threads
 * that destroy walks; the array caches' memory; and what fork() leaves.
 *
 * Another thread touches a thread's arrays only under slab_bk_threads_lock
 * and only where the owner cannot be using them: kmem_cache_destroy()
 * drains every thread's array of the dying cache (the kernel's IPI to
 * each CPU), and the owner itself takes the lock when it drains its own
 * (reap, exit, flush), so the two never meet.
 */
#include <sys/mman.h>

#include "page_alloc/metapool.h"
#include "slab/slab/slab_priv.h"

struct slab_thread slab_thread_none;	/* zero: every slot empty, every call misses */
__thread struct slab_thread *slab_this __attribute__((tls_model("initial-exec"))) = &slab_thread_none;

enum { SLAB_THREAD_NONE, SLAB_THREAD_LIVE, SLAB_THREAD_DEAD };
static __thread int slab_thread_state __attribute__((tls_model("initial-exec")));

static pthread_key_t slab_key;
static bool slab_key_ok;
kmem_lock_t slab_bk_threads_lock = KMEM_LOCK_INIT;
struct list_head slab_bk_threads = LIST_HEAD_INIT(slab_bk_threads);

/* Slot -> cache (NULL: free slot), and the slots in use; slab_threads_lock. */
static struct kmem_cache *slot_cache[SLAB_MAX_CACHES];
static unsigned int slot_hint = 1;

/* ---- array caches' memory ------------------------------------------------- */

/*
 * Array caches come from metapools of 64 B << k chunks (outside the memory
 * the allocators manage: no recursion into SLAB), bigger ones from mmap.
 */
#define AC_POOLS	11
static struct metapool ac_pool[AC_POOLS] = {
	METAPOOL_INIT(64), METAPOOL_INIT(128), METAPOOL_INIT(256), METAPOOL_INIT(512),
	METAPOOL_INIT(1024), METAPOOL_INIT(2048), METAPOOL_INIT(4096), METAPOOL_INIT(8192),
	METAPOOL_INIT(16384), METAPOOL_INIT(32768), METAPOOL_INIT(65536),
};

static size_t ac_bytes(unsigned int cap)
{
	return sizeof(struct array_cache) + (size_t)cap * sizeof(void *);
}

static int ac_pool_of(size_t bytes)
{
	for (int k = 0; k < AC_POOLS; k++)
		if (bytes <= (64UL << k))
			return k;
	return -1;
}

struct array_cache *alloc_arraycache(unsigned int limit, unsigned int batchcount)
{
	unsigned int cap = limit ? limit : 1;
	size_t bytes = ac_bytes(cap);
	int k = ac_pool_of(bytes);
	struct array_cache *ac;

	if (k >= 0) {
		/* Use the whole chunk: a later, larger limit may fit without a new one. */
		cap = (unsigned int)(((64UL << k) - sizeof(struct array_cache)) / sizeof(void *));
		ac = metapool_alloc(&ac_pool[k]);
	} else {
		ac = os_map(bytes);
	}
	if (!ac)
		return NULL;
	ac->avail = 0;
	ac->limit = limit;
	ac->batchcount = batchcount;
	ac->touched = 0;
	ac->cap = cap;
	ac->gen = 0;
	return ac;
}

void free_arraycache(struct array_cache *ac)
{
	if (!ac)
		return;
	int k = ac_pool_of(ac_bytes(ac->cap));

	if (k >= 0)
		metapool_free(&ac_pool[k], ac);
	else
		munmap(ac, ac_bytes(ac->cap));
}

/* ---- cache slots ------------------------------------------------------------- */

int slab_get_cpu_slot(void)
{
	int slot = -1;

	kmem_lock(&slab_bk_threads_lock);
	for (unsigned int i = 0; i < SLAB_MAX_CACHES - 1 && slot < 0; i++) {
		unsigned int j = 1 + (slot_hint - 1 + i) % (SLAB_MAX_CACHES - 1);

		if (!slot_cache[j]) {
			slot_cache[j] = (struct kmem_cache *)1;	/* taken; the cache is set when it is ready */
			slot = (int)j;
			slot_hint = j + 1 < SLAB_MAX_CACHES ? j + 1 : 1;
		}
	}
	kmem_unlock(&slab_bk_threads_lock);
	return slot;
}

static void set_slot_cache(unsigned int slot, struct kmem_cache *s)
{
	kmem_lock(&slab_bk_threads_lock);
	slot_cache[slot] = s;
	kmem_unlock(&slab_bk_threads_lock);
}

void slab_put_cpu_slot(unsigned int slot)
{
	set_slot_cache(slot, NULL);
}

void slab_slot_publish(struct kmem_cache *s)
{
	set_slot_cache(SLABC(s)->cpu_slot, s);
}

/* ---- per-thread state -------------------------------------------------------- */

static struct slab_thread *slab_thread_setup(void)
{
	if (slab_thread_state == SLAB_THREAD_DEAD)
		return NULL;
	/* Untouched slots cost no memory: the mapping is NORESERVE. */
	struct slab_thread *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t == MAP_FAILED)
		return NULL;
	t->next_reap = os_now_ns() + REAPTIMEOUT_AC_NS;
	kmem_lock(&slab_bk_threads_lock);
	list_add_tail(&t->node, &slab_bk_threads);
	kmem_unlock(&slab_bk_threads_lock);
	/* Live before pthread_setspecific(), which may calloc() (keys >= 32). */
	slab_thread_state = SLAB_THREAD_LIVE;
	slab_this = t;
	if (slab_key_ok)
		pthread_setspecific(slab_key, t);
	return t;
}

struct array_cache *slab_cpu_array(struct kmem_cache *s)
{
	struct slab_cache *c = SLABC(s);
	struct slab_thread *t = slab_this;

	if (unlikely(t == &slab_thread_none)) {
		t = slab_thread_setup();
		if (!t)
			return NULL;
	}
	struct array_cache *ac = t->ac[c->cpu_slot];
	if (likely(ac)) {
		if (unlikely(ac->gen != atomic_load_explicit(&c->tune_gen, memory_order_relaxed)))
			ac = slab_resize_array(s, ac);
		return ac;
	}
	if (__atomic_load_n(&c->dying, __ATOMIC_ACQUIRE))
		return NULL;
	unsigned int gen = atomic_load_explicit(&c->tune_gen, memory_order_acquire);
	ac = alloc_arraycache(__atomic_load_n(&c->limit, __ATOMIC_RELAXED),
			      __atomic_load_n(&c->batchcount, __ATOMIC_RELAXED));
	if (!ac)
		return NULL;
	ac->gen = gen;
	kmem_lock(&slab_bk_threads_lock);
	t->ac[c->cpu_slot] = ac;
	t->nr_arrays++;
	kmem_unlock(&slab_bk_threads_lock);
	return ac;
}

/* Every object of @ac back to the node; slab_bk_threads_lock held, or the array is unreachable. */
static void drain_whole(struct kmem_cache *s, struct array_cache *ac)
{
	drain_array(s, ac, true);
}

void drain_cpu_caches(struct kmem_cache *s)
{
	struct slab_cache *c = SLABC(s);
	struct slab_thread *t;

	kmem_lock(&slab_bk_threads_lock);
	list_for_each_entry(t, &slab_bk_threads, node) {
		struct array_cache *ac = t->ac[c->cpu_slot];

		if (!ac)
			continue;
		drain_whole(s, ac);
		__atomic_store_n(&t->ac[c->cpu_slot], NULL, __ATOMIC_RELAXED);
		t->nr_arrays--;
		free_arraycache(ac);
	}
	kmem_unlock(&slab_bk_threads_lock);
}

void slab_bk_flush_this_thread(struct kmem_cache *s)
{
	struct slab_thread *t = slab_this;

	if (t == &slab_thread_none)
		return;
	kmem_lock(&slab_bk_threads_lock);
	for (unsigned int i = 1; i < SLAB_MAX_CACHES; i++) {
		struct array_cache *ac = t->ac[i];
		struct kmem_cache *cs = slot_cache[i];

		if (!ac || (s && cs != s) || (uintptr_t)cs <= 1)
			continue;
		drain_whole(cs, ac);
	}
	kmem_unlock(&slab_bk_threads_lock);
}

void slab_bk_flush_thread(void)
{
	slab_bk_flush_this_thread(NULL);
}

static void slab_thread_exit(void *arg)
{
	struct slab_thread *t = arg;

	kmem_lock(&slab_bk_threads_lock);
	for (unsigned int i = 1; i < SLAB_MAX_CACHES && t->nr_arrays; i++) {
		struct array_cache *ac = t->ac[i];
		struct kmem_cache *cs = slot_cache[i];

		if (!ac)
			continue;
		if ((uintptr_t)cs > 1)
			drain_whole(cs, ac);
		t->ac[i] = NULL;
		t->nr_arrays--;
		free_arraycache(ac);
	}
	list_del(&t->node);
	kmem_unlock(&slab_bk_threads_lock);
	slab_this = &slab_thread_none;
	slab_thread_state = SLAB_THREAD_DEAD;
	munmap(t, sizeof(*t));
	slab_thread_exited();
}

int slab_bk_thread_init(void)
{
	if (os_thread_exit_key_create(&slab_key, slab_thread_exit)) {
		pr_warn("no pthread key left: a thread's array caches stay full when it exits\n");
		return 0;
	}
	slab_key_ok = true;
	return 0;
}

/* ---- fork ------------------------------------------------------------------------ */

/* Every lock of SLAB, in order: slab_bk_threads_lock, then each cache's list_lock, then the pools. */
void slab_bk_fork_prepare(void)
{
	kmem_lock(&slab_bk_threads_lock);
	for (unsigned int i = 1; i < SLAB_MAX_CACHES; i++)
		if ((uintptr_t)slot_cache[i] > 1)
			kmem_lock(&SLABC(slot_cache[i])->node.list_lock);
	for (int k = 0; k < AC_POOLS; k++)
		kmem_lock(&ac_pool[k].lock);
}

void slab_bk_fork_parent(void)
{
	for (int k = AC_POOLS - 1; k >= 0; k--)
		kmem_unlock(&ac_pool[k].lock);
	for (unsigned int i = SLAB_MAX_CACHES - 1; i >= 1; i--)
		if ((uintptr_t)slot_cache[i] > 1)
			kmem_unlock(&SLABC(slot_cache[i])->node.list_lock);
	kmem_unlock(&slab_bk_threads_lock);
}

void slab_bk_fork_child(void)
{
	for (int k = 0; k < AC_POOLS; k++)
		kmem_lock_init(&ac_pool[k].lock);
	for (unsigned int i = 1; i < SLAB_MAX_CACHES; i++)
		if ((uintptr_t)slot_cache[i] > 1)
			kmem_lock_init(&SLABC(slot_cache[i])->node.list_lock);
	kmem_lock_init(&slab_bk_threads_lock);
	/*
	 * The other threads do not exist here; their arrays were caught
	 * mid-use, maybe (no lock on them): off the registry, their objects
	 * lost to the child, as the kernel's offline CPUs' would not be.
	 */
	struct slab_thread *own = slab_this != &slab_thread_none ? slab_this : NULL;
	INIT_LIST_HEAD(&slab_bk_threads);
	if (own)
		list_add(&own->node, &slab_bk_threads);
}

