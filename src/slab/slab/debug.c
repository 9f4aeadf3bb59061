// SPDX-License-Identifier: MIT
/*
 * SLAB's debugging (the kernel's CONFIG_DEBUG_SLAB layout, turned on per
 * cache by SLAB_RED_ZONE, SLAB_POISON, SLAB_STORE_USER or slab_debug=):
 *
 *   [red zone 1][object][red zone 2][last user]
 *
 * Red-zone words read RED_INACTIVE while the object is free and RED_ACTIVE
 * while it is allocated; a free finding RED_INACTIVE is a double free, any
 * other value an overrun.  A free object is poisoned (POISON_FREE, the
 * last byte POISON_END) and checked when it is handed out again ("Slab
 * corruption").  The last-user word holds the caller of the last alloc or
 * free.  Unlike the kernel, a double free is not carried out, and a broken
 * red zone or poison is repaired once reported.
 */
#include <inttypes.h>

#include "slab/slab/slab_priv.h"

static uint64_t *redzone1(struct kmem_cache *s, char *slot)
{
	return (uint64_t *)(slot + SLABC(s)->obj_offset - SLAB_REDZONE_ALIGN);
}

static uint64_t *redzone2(struct kmem_cache *s, char *slot)
{
	struct slab_cache *c = SLABC(s);

	return (uint64_t *)(slot + c->obj_offset + c->obj_size_used);
}

static unsigned long *userword(struct kmem_cache *s, char *slot)
{
	struct slab_cache *c = SLABC(s);
	unsigned int at = c->obj_offset + c->obj_size_used + ((c->dbg & SLAB_RED_ZONE) ? SLAB_REDZONE_ALIGN : 0);

	return (unsigned long *)(slot + at);
}

static void poison_obj(struct kmem_cache *s, char *slot)
{
	struct slab_cache *c = SLABC(s);
	char *obj = slot + c->obj_offset;

	memset(obj, POISON_FREE, c->obj_size_used - 1);
	obj[c->obj_size_used - 1] = (char)POISON_END;
}

void slab_debug_init_obj(struct kmem_cache *s, void *slot)
{
	struct slab_cache *c = SLABC(s);

	if (c->dbg & SLAB_STORE_USER)
		*userword(s, slot) = 0;
	if (c->dbg & SLAB_RED_ZONE) {
		*redzone1(s, slot) = RED_INACTIVE;
		*redzone2(s, slot) = RED_INACTIVE;
	}
	/* A poisoned object gets its constructor when it is handed out, as the kernel's. */
	if (s->ctor && !(c->dbg & SLAB_POISON))
		s->ctor((char *)slot + c->obj_offset);
	if (c->dbg & SLAB_POISON)
		poison_obj(s, slot);
}

static void print_last_user(struct kmem_cache *s, char *slot)
{
	if (SLABC(s)->dbg & SLAB_STORE_USER)
		printk("Last user: (%#lx)\n", *userword(s, slot));
}

/* check_poison_obj(): a free object must still hold its poison. */
static bool check_poison(struct kmem_cache *s, char *slot)
{
	struct slab_cache *c = SLABC(s);
	unsigned char *obj = (unsigned char *)slot + c->obj_offset;
	unsigned int size = c->obj_size_used, first = size;

	for (unsigned int i = 0; i < size; i++) {
		unsigned char want = i == size - 1 ? POISON_END : POISON_FREE;

		if (obj[i] != want) {
			first = i;
			break;
		}
	}
	if (first == size)
		return true;
	printk("Slab corruption (Not tainted): %s start=%p, len=%u\n", s->name, (void *)obj, size);
	print_last_user(s, slot);
	for (unsigned int line = first / 16 * 16; line < size; line += 16) {
		char hex[16 * 3 + 1];
		bool bad = false;
		unsigned int k = 0;

		for (unsigned int i = line; i < line + 16 && i < size; i++) {
			unsigned char want = i == size - 1 ? POISON_END : POISON_FREE;

			bad |= obj[i] != want;
			hex[k++] = ' ';
			hex[k++] = "0123456789abcdef"[obj[i] >> 4];
			hex[k++] = "0123456789abcdef"[obj[i] & 15];
		}
		hex[k] = '\0';
		if (bad)
			printk("%03x:%s\n", line, hex);
	}
	kmem_report("BUG %s (Not tainted): Slab corruption: object %p was written after it was freed "
		    "(first at offset %u); poison restored\n", s->name, (void *)obj, first);
	slab_stat(c, SLAB_STAT_ERRORS, 1);
	poison_obj(s, slot);
	return false;
}

bool slab_debug_alloc(struct kmem_cache *s, void *slotp, unsigned long caller)
{
	struct slab_cache *c = SLABC(s);
	char *slot = slotp;
	bool ok = true;

	if (c->dbg & SLAB_POISON)
		ok = check_poison(s, slot);
	if (c->dbg & SLAB_RED_ZONE) {
		uint64_t r1 = *redzone1(s, slot), r2 = *redzone2(s, slot);

		if (r1 != RED_INACTIVE || r2 != RED_INACTIVE) {
			printk("slab error in kmem_cache_alloc(): cache `%s': double free, or memory outside object was overwritten\n",
			       s->name);
			kmem_report("BUG %s (Not tainted): Redzone overwritten\n"
				    "INFO: %p: redzone 1:0x%" PRIx64 ", redzone 2:0x%" PRIx64 " (free: 0x%llx)\n",
				    s->name, (void *)(slot + c->obj_offset), r1, r2, RED_INACTIVE);
			slab_stat(c, SLAB_STAT_ERRORS, 1);
			ok = false;
		}
		*redzone1(s, slot) = RED_ACTIVE;
		*redzone2(s, slot) = RED_ACTIVE;
	}
	if (c->dbg & SLAB_STORE_USER)
		*userword(s, slot) = caller;
	if (s->ctor && (c->dbg & SLAB_POISON))
		s->ctor(slot + c->obj_offset);
	return ok;
}

void slab_bk_double_free(struct kmem_cache *s, const void *x)
{
	kmem_report("BUG %s (Not tainted): Object already free\n"
		    "INFO: Object %p: double free detected, the free is ignored\n",
		    s->name, x);
	slab_stat(SLABC(s), SLAB_STAT_ERRORS, 1);
}

bool slab_debug_free(struct kmem_cache *s, void *slotp, unsigned long caller)
{
	struct slab_cache *c = SLABC(s);
	char *slot = slotp;

	if (c->dbg & SLAB_RED_ZONE) {
		uint64_t r1 = *redzone1(s, slot), r2 = *redzone2(s, slot);

		if (r1 == RED_INACTIVE && r2 == RED_INACTIVE) {
			printk("slab error in kmem_cache_free(): cache `%s': double free detected\n", s->name);
			print_last_user(s, slot);
			slab_bk_double_free(s, slot + c->obj_offset);
			return false;
		}
		if (r1 != RED_ACTIVE || r2 != RED_ACTIVE) {
			printk("slab error in kmem_cache_free(): cache `%s': memory outside object was overwritten\n",
			       s->name);
			print_last_user(s, slot);
			kmem_report("BUG %s (Not tainted): Redzone overwritten\n"
				    "INFO: %p: redzone 1:0x%" PRIx64 " (at offset -%u), redzone 2:0x%" PRIx64
				    " (at offset %u), allocated: 0x%llx; red zones restored\n",
				    s->name, (void *)(slot + c->obj_offset), r1, SLAB_REDZONE_ALIGN, r2,
				    c->obj_size_used, RED_ACTIVE);
			slab_stat(c, SLAB_STAT_ERRORS, 1);
		}
		*redzone1(s, slot) = RED_INACTIVE;
		*redzone2(s, slot) = RED_INACTIVE;
	}
	if (c->dbg & SLAB_STORE_USER)
		*userword(s, slot) = caller;
	if (c->dbg & SLAB_POISON)
		poison_obj(s, slot);
	return true;
}

/* ---- validate ---------------------------------------------------------------- */

static long validate_slab(struct kmem_cache *s, struct slab_desc *d, unsigned int lo, unsigned int hi)
{
	struct slab_cache *c = SLABC(s);
	unsigned char seen[8192];
	long errors = 0;

	if (d->cache != s || d->active < lo || d->active > hi) {
		kmem_report("BUG %s (Not tainted): slab %p: %u objects in use on a list for %u..%u\n",
			    s->name, (void *)d->s_mem, d->active, lo, hi);
		return 1;
	}
	if (c->num > sizeof(seen) * 8 || (!d->freelist && d->active < c->num))
		return 0;
	memset(seen, 0, (c->num + 7) / 8);
	for (unsigned int i = d->active; i < c->num; i++) {
		unsigned int idx = get_free_obj(c, d, i);

		if (idx >= c->num || (seen[idx / 8] & (1u << (idx % 8)))) {
			kmem_report("BUG %s (Not tainted): slab %p: free list entry %u is %u (%s)\n",
				    s->name, (void *)d->s_mem, i, idx, idx >= c->num ? "no object" : "twice");
			errors++;
			continue;
		}
		seen[idx / 8] |= (unsigned char)(1u << (idx % 8));
		char *slot = index_to_obj(c, s, d, idx);
		if ((c->dbg & SLAB_RED_ZONE) && (*redzone1(s, slot) != RED_INACTIVE ||
						  *redzone2(s, slot) != RED_INACTIVE)) {
			kmem_report("BUG %s (Not tainted): Redzone overwritten\n"
				    "INFO: free object %p: redzone 1:0x%" PRIx64 ", redzone 2:0x%" PRIx64 "\n",
				    s->name, (void *)(slot + c->obj_offset), *redzone1(s, slot), *redzone2(s, slot));
			*redzone1(s, slot) = RED_INACTIVE;
			*redzone2(s, slot) = RED_INACTIVE;
			errors++;
		}
		if ((c->dbg & SLAB_POISON) && !check_poison(s, slot))
			errors++;
	}
	return errors;
}

long slab_bk_validate(struct kmem_cache *s)
{
	struct slab_cache *c = SLABC(s);
	struct slab_node *n = &c->node;
	unsigned long slabs = 0, free_slabs = 0, free_objects = 0;
	struct slab_desc *d;
	long errors = 0;

	kmem_lock(&n->list_lock);
	list_for_each_entry(d, &n->slabs_full, slab_list) {
		errors += validate_slab(s, d, c->num, c->num);
		slabs++;
	}
	list_for_each_entry(d, &n->slabs_partial, slab_list) {
		errors += validate_slab(s, d, 1, c->num - 1);
		free_objects += c->num - d->active;
		slabs++;
	}
	list_for_each_entry(d, &n->slabs_free, slab_list) {
		errors += validate_slab(s, d, 0, 0);
		free_objects += c->num;
		free_slabs++;
		slabs++;
	}
	if (slabs != n->total_slabs || free_slabs != n->free_slabs || free_objects != n->free_objects) {
		kmem_report("BUG %s (Not tainted): node counts %lu slabs, %lu free, %lu free objects; "
			    "the lists hold %lu, %lu, %lu\n", s->name, n->total_slabs, n->free_slabs,
			    n->free_objects, slabs, free_slabs, free_objects);
		errors++;
	}
	kmem_unlock(&n->list_lock);
	return errors;
}

