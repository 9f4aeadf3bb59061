// SPDX-License-Identifier: MIT
/*
 * SLUB's per-CPU state, kept per thread in this version: each thread's
 * slots (struct kmem_cache_cpu), set up on first use (get_cpu_slot()),
 * retired when the thread exits or the cache is destroyed, reaped when
 * idle; the registry of live threads that statistics and destroy walk;
 * and what fork() leaves of them.  The slab paths (slub.c, slub_bulk.c,
 * slub_sheaf.c) reach a slot only through slub_this, this_cpu_slot() and
 * get_cpu_slot(), so a true per-CPU (rseq) version replaces this file and
 * those three.
 */
#include <string.h>
#include <sys/mman.h>

#include "core/cmdline.h"
#include "slab/slub/slub_internal.h"

struct slub_thread slub_thread_none;	/* zero, never written (bss: no memory until read) */
__thread struct slub_thread *slub_this __attribute__((tls_model("initial-exec"))) = &slub_thread_none;

enum { SLUB_THREAD_NONE, SLUB_THREAD_LIVE, SLUB_THREAD_DEAD };
static __thread int slub_thread_state __attribute__((tls_model("initial-exec")));

static pthread_key_t slub_key;
static bool slub_key_ok;		/* false: no key was left (slub_init()) */
kmem_lock_t slub_threads_lock = KMEM_LOCK_INIT;
struct list_head slub_threads = LIST_HEAD_INIT(slub_threads);

/* ---- per-thread state ---------------------------------------------- */

#define BITS_PER_LONG	(8 * (unsigned int)sizeof(unsigned long))

struct slub_thread_hdr {
	struct slub_thread_node reg;
	/* Slots this thread set up (bit = cache index): what a reap looks at. */
	unsigned long used[KMEM_MAX_CACHES / BITS_PER_LONG];
	struct slub_thread t;
};

static struct slub_thread_hdr *thread_hdr(struct slub_thread *t)
{
	return container_of(t, struct slub_thread_hdr, t);
}

/*
 * Tables of exited threads, kept for the next threads (slub_threads_lock):
 * a program that runs many short threads would otherwise map a table and
 * fault its pages in for each, and unmap it at its exit, which in a
 * multi-threaded process also shoots down the other CPUs' TLBs (5000
 * threads of 100 allocations each: 3.6x glibc's time).  A kept table's
 * slots are all retired (->cache NULL, counters folded), so a new thread
 * sets each up as on a fresh one; its pages stay resident: at most
 * SLUB_SPARE_TABLES of them are kept.
 */
#define SLUB_SPARE_TABLES	8
static struct slub_thread_hdr *spare_tables[SLUB_SPARE_TABLES];
static int nr_spare_tables;

static void slub_thread_exit(void *arg);
/* This thread's reap epoch, mod 256 (slub_reap_thread()). */
__thread uint8_t slub_reap_epoch __attribute__((tls_model("initial-exec")));

/* This thread's slot for @s, set up on first use; NULL once the thread is exiting. */
struct kmem_cache_cpu *get_cpu_slot(struct kmem_cache *s)
{
	struct slub_thread *t = slub_this;

	if (unlikely(t == &slub_thread_none)) {
		if (slub_thread_state == SLUB_THREAD_DEAD)
			return NULL;
		struct slub_thread_hdr *h = NULL;
		kmem_lock(&slub_threads_lock);
		if (nr_spare_tables)
			h = spare_tables[--nr_spare_tables];
		kmem_unlock(&slub_threads_lock);
		if (!h) {
			/* Untouched slots cost no memory: the mapping is NORESERVE. */
			h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			if (h == MAP_FAILED)
				return NULL;
		}
		h->reg.t = &h->t;
		kmem_lock(&slub_threads_lock);
		list_add_tail(&h->reg.node, &slub_threads);
		kmem_unlock(&slub_threads_lock);
		/* Live before pthread_setspecific(), which may calloc() (keys >= 32). */
		slub_thread_state = SLUB_THREAD_LIVE;
		slub_this = t = &h->t;
		if (slub_key_ok)
			pthread_setspecific(slub_key, h);
	}
	struct kmem_cache_cpu *c = &t->cpu[s->index];
	if (unlikely(c->cache != s)) {
		/*
		 * Destroyed (its leaked objects may still be freed): no new slot,
		 * whose exit would release the cache again.  Callers cope with
		 * NULL, as for an exiting thread.
		 */
		if (unlikely(__atomic_load_n(&slub_of(s)->dying, __ATOMIC_ACQUIRE)))
			return NULL;
		memset(c, 0, offsetof(struct kmem_cache_cpu, stat));
		c->reap_epoch = slub_reap_epoch;	/* in use from now */
		__atomic_store_n(&c->cache, s, __ATOMIC_RELEASE);
		atomic_fetch_add_explicit(&slub_of(s)->nr_thread_users, 1, memory_order_relaxed);
		thread_hdr(t)->used[s->index / BITS_PER_LONG] |= 1ul << (s->index % BITS_PER_LONG);
	}
	return c;
}

/*
 * A slot is retired by its own thread when it exits, or by
 * kmem_cache_destroy() from another thread; ->cache goes from the cache to
 * SLOT_RETIRING with a CAS, so exactly one of them does it.  Readers that
 * look for slots of a cache skip it meanwhile.  (Sequentially consistent:
 * a destroy's claim and a reap's, see reap_slot().)
 */
bool claim_cpu_slot(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	struct kmem_cache *expected = s;

	return __atomic_compare_exchange_n(&c->cache, &expected, SLOT_RETIRING, false,
					   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/*
 * Flush a claimed slot, fold its counters into the cache and let go of it.
 * True if this dropped the cache's last reference: the caller releases it,
 * after any lock it holds (slub_cache_release() takes slub_threads_lock).
 */
bool finish_retire(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	/* The thread exits: its sheaves to the barn, for the next thread; a destroy flushes them. */
	if (!__atomic_load_n(&slub_of(s)->dying, __ATOMIC_SEQ_CST))
		sheaf_retire_thread(s, c);
	flush_cpu_slot(s, c);
	/*
	 * A short thread's slot has a few of its NR_SLUB_STAT_ITEMS counters
	 * set (three in a slot of 100 mallocs): they are looked for two at a
	 * time, with plain loads (only this slot's thread, or its claimer now,
	 * writes them; sysfs only reads), and only those set are folded and
	 * cleared.  A relaxed load and a test of each cost 270 instructions a
	 * slot, a third of a short thread's exit.
	 */
	for (int i = 0; i < NR_SLUB_STAT_ITEMS; i += 2) {
		uint64_t pair;

		memcpy(&pair, &c->stat[i], sizeof(pair));
		if (likely(!pair))
			continue;
		for (int j = i; j < i + 2 && j < NR_SLUB_STAT_ITEMS; j++) {
			unsigned int v = __atomic_load_n(&c->stat[j], __ATOMIC_RELAXED);
			if (v) {
				atomic_fetch_add_explicit(&slub_of(s)->dead_stat[j], v, memory_order_relaxed);
				__atomic_store_n(&c->stat[j], 0, __ATOMIC_RELAXED);
			}
		}
	}
	__atomic_store_n(&c->cache, NULL, __ATOMIC_RELEASE);
	/* Whoever drops the last reference releases: one RMW decides (see destroy). */
	return atomic_fetch_sub_explicit(&slub_of(s)->nr_thread_users, 1, memory_order_acq_rel) == 1;
}

static bool retire_cpu_slot(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	return claim_cpu_slot(s, c) && finish_retire(s, c);
}

void slub_flush_this_thread(struct kmem_cache *s)
{
	struct kmem_cache_cpu *c = this_cpu_slot(s);

	if (c)
		flush_cpu_slot(s, c);
}

/* ---- reaping idle sheaves ------------------------------------------ */

/*
 * A thread's sheaves and the barn keep free objects for allocations to
 * come.  When none come (the program has moved on to other sizes, or the
 * thread only frees), those objects are scattered over slabs that hold
 * nothing else and cannot go back: in longlived, after the size mix moves
 * up, the barns and sheaves of the small classes held 90 MB of slabs
 * (212 MB of slab for 100 MB live; 123 MB without sheaves).  SLAB's
 * cache_reap() drains array caches that were not touched for 2 s; a thread
 * here has no timer, and a short program must not wait for one, so the
 * thread looks at its slots from its own slow paths, every
 * slub_reap_events of them.  A slot that allocated nothing through a whole
 * epoch (below) gives its sheaves, cpu slab and partial slabs back (what
 * flush_all() does in the kernel), and each cache's barn lets go of the
 * full sheaves nobody took (barn_reap()).  A thread that stays on its fast
 * paths never reaps: it has nothing to give back, and no time to spend.
 */
static unsigned int slub_reap_events = 256;
kmem_param("slub_reap_events", slub_reap_events, uint,
	   "slow paths of a thread between two looks for idle sheaves (0: never reap)");
/*
 * How long "idle" is.  Counting looks alone was not enough: a thread that
 * goes round many caches, a burst of each, makes more slow paths in a round
 * than any fixed number of them, and each cache looked idle between two
 * looks in turn (100 caches, bursts of 200: 6 -> 30 ns a pair).  So a
 * thread's looks fall into epochs of at least slub_reap_ms, and a slot is
 * idle when it allocated nothing through a whole epoch; a barn's rounds
 * are at least as long, whichever thread looks.
 */
unsigned int slub_reap_ms = 10;
kmem_param("slub_reap_ms", slub_reap_ms, uint,
	   "a slot or a barn sheaf is idle once unused for this long (ms, at least)");

void (*slub_reap_claimed_hook)(struct kmem_cache *s);
void (*slub_reap_restored_hook)(struct kmem_cache *s);

static __thread unsigned int reap_ticks __attribute__((tls_model("initial-exec")));
static __thread unsigned int reap_slots __attribute__((tls_model("initial-exec")));	/* in use, last reap */
/* When this thread's reap epoch began. */
static __thread unsigned long long reap_epoch_ns __attribute__((tls_model("initial-exec")));
__thread bool slub_reap_busy __attribute__((tls_model("initial-exec")));

/*
 * A slot's activity since the last look, mod 2^16: its allocations from
 * its cpu slab and on the slow path, and its main sheaf's top and count.
 * An allocation that empties main marks the slot itself
 * (slub_reap_note_alloc(): a swap with the spare, the barn or a refill).
 * Allocations that main serves alone are not counted (alloc_cpu_sheaf is
 * counted only with CONFIG_SLUB_STATS), but they move main's top: a slot
 * whose frees feed its allocations changes it from look to look, and is
 * busy.  Counting them idle flushed busy slots once an epoch (4 private
 * churns of mixed sizes on 2 CPUs: 11.4 k objects reaped in 0.5 s, each
 * flush a restart of the slot's refill ramp, 1.23 -> 1.16x tcmalloc's CPU
 * time without reaping), and more often on an oversubscribed CPU, where a
 * thread's epoch is mostly other threads' time.  A slot left with the
 * same top and count through a whole epoch (nothing, or what it took it
 * gave back in the same order) is idle, and its sheaves are flushed; if
 * it goes on, its next allocations refill them.  A slot that is only
 * freed into holds at most its main and spare: full ones go to the barn,
 * which lets go of what nobody takes (barn_reap()).  Only the slot's own
 * thread writes these, and only it looks (slub_reap_thread()).
 */
static uint16_t slot_activity(struct kmem_cache_cpu *c)
{
	uint64_t h = (uint64_t)(uintptr_t)c->hot ^ ((uint64_t)c->count << 40) ^
		     (uint16_t)(__atomic_load_n(&c->stat[ALLOC_FASTPATH], __ATOMIC_RELAXED) +
				__atomic_load_n(&c->stat[ALLOC_SLOWPATH], __ATOMIC_RELAXED));

	h ^= h >> 16;
	h ^= h >> 32;
	return (uint16_t)h;
}

/*
 * One of this thread's slots, in use by @s.  ->cache is tagged SLOT_REAPING
 * first: until then @s may be destroyed and freed by another thread (only
 * a slot's reference keeps it), so nothing of it, nor of the slot, is read
 * before; a destroy meanwhile cannot claim the slot and leaves it to us,
 * while readers still count it.  From the tag on, the reap counts itself in
 * slub_of(s)->reapers, and whoever releases @s waits for that to be 0
 * (slub_cache_release()): so @s lives until the reap's last read, after
 * the tag is gone, when a destroy may take the slot at once.  If a destroy
 * came (the cache is dying), the slot is retired here, as the destroy
 * would have, before the reap counts itself out (so that a destroy waiting
 * for it finds every slot retired, and releases @s itself).
 */
static void reap_slot(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	struct kmem_cache *expected = s, *tagged = (struct kmem_cache *)((uintptr_t)s | SLOT_REAPING);
	unsigned long objs = 0;

	if (!__atomic_compare_exchange_n(&c->cache, &expected, tagged, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_RELAXED))
		return;
	atomic_fetch_add_explicit(&slub_of(s)->reapers, 1, memory_order_seq_cst);
	if (unlikely(slub_reap_claimed_hook))
		slub_reap_claimed_hook(s);
	uint16_t activity = slot_activity(c);
	if (activity != c->reap_activity) {
		c->reap_activity = activity;
		c->reap_epoch = slub_reap_epoch;
	}
	/* Nothing done since before the last epoch began: a whole epoch. */
	bool idle = (uint8_t)(slub_reap_epoch - c->reap_epoch) >= 2;
	if (!__atomic_load_n(&slub_of(s)->dying, __ATOMIC_SEQ_CST)) {
		objs = barn_reap(s, c, reap_epoch_ns);
		if (idle && (c->main || c->slab || c->partial)) {
			objs += sheaf_thread_objects(c);
			flush_cpu_slot(s, c);
			/* Its next allocations start small again (the ramp), as a new thread's. */
			c->sheaf_refills = 0;
			c->sheaf_shift = 0;
			c->barn_trips = 0;
		}
	}
	__atomic_store_n(&c->cache, s, __ATOMIC_SEQ_CST);
	if (unlikely(slub_reap_restored_hook))
		slub_reap_restored_hook(s);
	bool last = false;
	if (unlikely(__atomic_load_n(&slub_of(s)->dying, __ATOMIC_SEQ_CST)))
		last = retire_cpu_slot(s, c);
	/* From here @s may be released (freed), unless by us: nothing of it is read after. */
	atomic_fetch_sub_explicit(&slub_of(s)->reapers, 1, memory_order_seq_cst);
	if (last)
		slub_cache_release(s);
	if (objs)
		count_vm_events_global(SLAB_SHEAF_REAPED, objs);
}

void slub_reap_thread(void)
{
	struct slub_thread *t = slub_this;
	unsigned long *used = thread_hdr(t)->used;
	unsigned int nr = 0;

	if (slub_reap_busy || !slub_thread_live())
		return;
	slub_reap_busy = true;
	unsigned long long now = os_now_ns();
	if (now - reap_epoch_ns >= slub_reap_ms * 1000000ull) {
		slub_reap_epoch++;
		reap_epoch_ns = now;
	}
	/* The slots this thread set up, not every index: a process may have thousands of caches. */
	for (unsigned int w = 0; w < KMEM_MAX_CACHES / BITS_PER_LONG; w++)
		for (unsigned long bits = used[w]; bits; bits &= bits - 1) {
			unsigned int i = w * BITS_PER_LONG + (unsigned int)__builtin_ctzl(bits);
			struct kmem_cache_cpu *c = &t->cpu[i];
			struct kmem_cache *s = __atomic_load_n(&c->cache, __ATOMIC_ACQUIRE);

			if (!s) {	/* retired by a destroy: no longer ours */
				used[w] &= ~(1ul << (i % BITS_PER_LONG));
			} else if (s != SLOT_RETIRING) {
				reap_slot(s, c);
				nr++;
			}
		}
	reap_slots = nr;
	slub_reap_busy = false;
}

/*
 * A slow path of this thread is done (its slot is consistent again: it may
 * be reaped too, a consumer's flushed with the object it just freed).  The
 * period is at least twice the slots the thread uses: a thread that goes
 * round many caches, each a slow path when it comes back to one, would
 * otherwise look at each when it had not come back to it yet (a thread of
 * 1000 caches: 10 ns a pair became 1100 before idleness was measured in
 * epochs), and a look costs a compare-and-swap and a store a slot.
 */
void slub_reap_tick(void)
{
	if (likely(++reap_ticks < slub_reap_events) || !slub_reap_events || reap_ticks < 2 * reap_slots)
		return;
	reap_ticks = 0;
	slub_reap_thread();
}


static void slub_thread_exit(void *arg)
{
	struct slub_thread_hdr *h = arg;
	struct slub_thread *t = &h->t;

	/* Every slot in use was set up by get_cpu_slot(), which marked it in used[]. */
	for (unsigned int w = 0; w < KMEM_MAX_CACHES / BITS_PER_LONG; w++)
		for (unsigned long bits = h->used[w]; bits; bits &= bits - 1) {
			unsigned int i = w * BITS_PER_LONG + (unsigned int)__builtin_ctzl(bits);
			struct kmem_cache *s = __atomic_load_n(&t->cpu[i].cache, __ATOMIC_ACQUIRE);
			if (s && s != SLOT_RETIRING && retire_cpu_slot(s, &t->cpu[i]))
				slub_cache_release(s);
		}
	/* After this no kmem_cache_destroy() can claim one of our slots ... */
	kmem_lock(&slub_threads_lock);
	list_del(&h->reg.node);
	kmem_unlock(&slub_threads_lock);
	/* ... and once those it claimed are flushed, they go. */
	while (atomic_load_explicit(&h->reg.busy, memory_order_acquire))
		os_sleep_us(20);
	slub_this = &slub_thread_none;
	slub_thread_state = SLUB_THREAD_DEAD;
	/* Every slot is retired now: nobody reads the table, the next thread may take it. */
	memset(h->used, 0, sizeof(h->used));
	kmem_lock(&slub_threads_lock);
	bool kept = nr_spare_tables < SLUB_SPARE_TABLES;
	if (kept)
		spare_tables[nr_spare_tables++] = h;
	kmem_unlock(&slub_threads_lock);
	if (!kept)
		munmap(h, sizeof(*h));
	slab_thread_exited();
}

/* As pcp_init(): with no pthread key left, only thread exit loses its flush. */
int slub_init(void)
{
	/*
	 * Odd: never an object's address (a freed block's first word often is
	 * one).  The low byte fixed: a program that writes only a block's
	 * first byte (a flag, an empty string) always changes the word, where
	 * a random low byte would match the byte written once in 128 runs,
	 * and every free of that run would take the slow path.  A free's
	 * look compares that byte first (slub.h: slub_free_keyed()).
	 */
	slub_free_key = (os_now_ns() * 0x9E3779B97F4A7C15ull) ^ ((uintptr_t)&slub_key << 12) ^
			((uintptr_t)os_getpid() << 32);
	slub_free_key = (slub_free_key & ~(uintptr_t)0xff) | SLUB_FREE_KEY_LOW;
	if (os_thread_exit_key_create(&slub_key, slub_thread_exit)) {
		pr_warn("no pthread key left: a thread's cached objects stay in its sheaves when it exits\n");
		return 0;
	}
	slub_key_ok = true;
	return 0;
}

/* Other threads' cpu slabs stay frozen in the child: their objects are lost to it. */
void slub_fork_prepare(void)
{
	kmem_lock(&slub_threads_lock);
	sheaf_fork_prepare();
}

void slub_fork_parent(void)
{
	sheaf_fork_parent();
	kmem_unlock(&slub_threads_lock);
}

void slub_fork_child(void)
{
	sheaf_fork_child();
	kmem_lock_init(&slub_threads_lock);
	/*
	 * The other threads do not exist here.  Their slots may have been
	 * caught mid-update (the fast paths take no lock), so nothing may
	 * flush them: off the registry, leaked with their objects, as they
	 * always were.  Only statistics and destroy walk the registry.
	 */
	struct list_head *own = slub_thread_live() ?
		&thread_hdr(slub_this)->reg.node : NULL;
	/*
	 * A slot another thread was reaping at the fork stays tagged, and the
	 * reap counted in reapers: undo those, so that a destroy or release
	 * here does not wait for a reap that will never end.  The slot itself
	 * is left as it was (as above).
	 */
	struct slub_thread_node *r;
	list_for_each_entry(r, &slub_threads, node) {
		if (&r->node == own)
			continue;
		struct slub_thread_hdr *h = thread_hdr(r->t);
		for (unsigned int w = 0; w < KMEM_MAX_CACHES / BITS_PER_LONG; w++)
			for (unsigned long bits = h->used[w]; bits; bits &= bits - 1) {
				struct kmem_cache_cpu *c = &r->t->cpu[w * BITS_PER_LONG + (unsigned int)__builtin_ctzl(bits)];
				uintptr_t v = (uintptr_t)__atomic_load_n(&c->cache, __ATOMIC_RELAXED);
				if (!(v & SLOT_REAPING) || v == (uintptr_t)SLOT_RETIRING)
					continue;
				struct kmem_cache *s = (struct kmem_cache *)(v & ~SLOT_REAPING);
				__atomic_store_n(&c->cache, s, __ATOMIC_RELAXED);
				atomic_fetch_sub_explicit(&slub_of(s)->reapers, 1, memory_order_relaxed);
			}
	}
	INIT_LIST_HEAD(&slub_threads);
	if (own)
		list_add(own, &slub_threads);
}
