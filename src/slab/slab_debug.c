// SPDX-License-Identifier: MIT
/*
 * The slab_debug= boot parameter (alias slub_debug=), kernel syntax
 * (Documentation/mm/slab.rst):
 *
 *   slab_debug                    F, Z, P and U on every cache
 *   slab_debug=<opts>             those on every cache
 *   slab_debug=<opts>,<c1>,<c2>   only on the caches named (a trailing '*'
 *                                 matches a prefix: kmalloc-*)
 *   slab_debug=<b1>;<b2>...       several such blocks: a cache takes the
 *                                 first block that names it, else the
 *                                 options of a block that names none
 *
 * Options: F consistency checks, Z red zones, P poison, U user tracking
 * (the layout only, see slub_debug.c), T trace every alloc and free, '-'
 * none.  Others (A failslab, O) are reported and skipped, as the kernel
 * skips letters it does not know.  The flags are added at
 * kmem_cache_create() (kernel kmem_cache_flags()), kmalloc's caches and
 * malloc's included, unless the cache asked for SLAB_NO_USER_FLAGS; a cache
 * with debug flags never merges.  So any program can run with red zones
 * and poison on its heap: LD_PRELOAD=libkmem-malloc.so
 * KMEM_CMDLINE=slab_debug=FZP.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "core/cmdline.h"
#include "core/printk.h"
#include "slab/slab_common.h"

#define DEBUG_DEFAULT_FLAGS (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER)

static struct {
	bool on;			/* the parameter was given */
	char str[KPARAM_STR_MAX];	/* its value; "" for a bare slab_debug */
} slab_debug;

/*
 * One block of @str, "<options>[,<caches>]": its flags and where its cache
 * list starts (NULL: none).  Returns the next block, NULL after the last.
 * @report: name the letters it skips (at boot, once).
 */
static const char *parse_block(const char *str, slab_flags_t *flags, const char **caches, bool report)
{
	while (*str == ';')
		str++;
	if (*str == ',') {
		/* A cache list without options: full debugging for those caches. */
		*flags = DEBUG_DEFAULT_FLAGS;
	} else {
		*flags = 0;
		for (; *str && *str != ',' && *str != ';'; str++) {
			switch (tolower((unsigned char)*str)) {
			case '-': *flags = 0; break;
			case 'f': *flags |= SLAB_CONSISTENCY_CHECKS; break;
			case 'z': *flags |= SLAB_RED_ZONE; break;
			case 'p': *flags |= SLAB_POISON; break;
			case 'u': *flags |= SLAB_STORE_USER; break;
			case 't': *flags |= SLAB_TRACE; break;
			default:
				if (report)
					pr_err("slab_debug option '%c' unknown. skipped\n", *str);
			}
		}
	}
	*caches = *str == ',' ? str + 1 : NULL;
	while (*str && *str != ';')
		str++;
	while (*str == ';')
		str++;
	return *str ? str : NULL;
}

/* Does @name match one entry of the list at @list (up to ';' or the end)? */
static bool list_names(const char *list, const char *name)
{
	size_t len = strlen(name);

	while (*list && *list != ';') {
		size_t n = strcspn(list, ",;");
		const char *glob = memchr(list, '*', n);
		if (glob ? !strncmp(name, list, (size_t)(glob - list)) : (n == len && !strncmp(name, list, n)))
			return true;
		list += n;
		if (*list == ',')
			list++;
	}
	return false;
}

/* Custom boot parameter setters only check their value when @kp is NULL. */
static int set_slab_debug(const char *val, const struct kernel_param *kp)
{
	if (val && strlen(val) >= sizeof(slab_debug.str))
		return -EINVAL;
	if (!kp)
		return 0;
	slab_debug.on = true;
	strcpy(slab_debug.str, val ? val : "");
	/* Name the letters skipped now, not at every cache. */
	slab_flags_t flags;
	const char *caches;
	for (const char *b = slab_debug.str; b && *b;)
		b = parse_block(b, &flags, &caches, true);
	return 0;
}
kmem_param_cb("slab_debug", set_slab_debug, slab_debug,
	      "debug options for caches: [<FZPUT->][,<cache>...][;...] (kernel syntax)");
kmem_param_cb("slub_debug", set_slab_debug, slab_debug, "alias of slab_debug");

slab_flags_t kmem_cache_flags(slab_flags_t flags, const char *name)
{
	slab_flags_t global = 0, block;
	const char *caches;

	if (!slab_debug.on || (flags & SLAB_NO_USER_FLAGS))
		return flags;
	if (!slab_debug.str[0])
		return flags | DEBUG_DEFAULT_FLAGS;
	for (const char *b = slab_debug.str; b;) {
		b = parse_block(b, &block, &caches, false);
		if (!caches)		/* "FZ," names an empty list: no cache, as in the kernel */
			global = block;
		else if (list_names(caches, name))
			return flags | block;
	}
	/* Kernel: caches of a debugging tool do not track users unless named. */
	if (flags & SLAB_NOLEAKTRACE)
		global &= ~SLAB_STORE_USER;
	return flags | global;
}
