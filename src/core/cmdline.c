// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/cmdline.h"
#include "core/printk.h"

extern const struct kernel_param __start_kmem_param[];
extern const struct kernel_param __stop_kmem_param[];

const struct kernel_param *kparam_first(void)
{
	return __start_kmem_param;
}

const struct kernel_param *kparam_end(void)
{
	return __stop_kmem_param;
}

int kstrtoul(const char *s, unsigned long *out)
{
	char *end;

	/* A digit first: strtoul() would take a sign or leading blanks too. */
	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	unsigned long v = strtoul(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int kstrtol(const char *s, long *out)
{
	char *end;

	if (!s || !(isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]))))
		return -EINVAL;
	errno = 0;
	long v = strtol(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int kstrtobool(const char *s, bool *out)
{
	if (!s) {
		*out = true;
		return 0;
	}
	if (!strcmp(s, "1") || !strcasecmp(s, "y") || !strcasecmp(s, "yes") ||
	    !strcasecmp(s, "on") || !strcasecmp(s, "true")) {
		*out = true;
		return 0;
	}
	if (!strcmp(s, "0") || !strcasecmp(s, "n") || !strcasecmp(s, "no") ||
	    !strcasecmp(s, "off") || !strcasecmp(s, "false")) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

int memparse(const char *s, unsigned long *out)
{
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	unsigned long v = strtoul(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;

	unsigned int shift = 0;
	switch (*end) {
	case 'T': case 't': shift = 40; break;
	case 'G': case 'g': shift = 30; break;
	case 'M': case 'm': shift = 20; break;
	case 'K': case 'k': shift = 10; break;
	case '\0': break;
	default: return -EINVAL;
	}
	if (shift) {
		end++;
		if (*end == 'B' || *end == 'b')	/* accept "64MB" too */
			end++;
	}
	if (*end || (shift && v > (ULONG_MAX >> shift)))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

/* Parse @val for @kp and, unless @dry_run, store it. */
static int set_param(const struct kernel_param *kp, const char *val, bool dry_run)
{
	unsigned long ul;
	long l;
	bool b;

	if (dry_run && kp->type == KPARAM_custom)
		return kp->set(val, NULL);	/* setters only check when given no kp */
	if (dry_run) {
		static char scratch[KPARAM_STR_MAX] __attribute__((aligned(16)));
		struct kernel_param tmp = *kp;
		tmp.arg = scratch;
		return set_param(&tmp, val, false);
	}

	switch (kp->type) {
	case KPARAM_bool:
		if (kstrtobool(val, &b))
			return -EINVAL;
		*(bool *)kp->arg = b;
		return 0;
	case KPARAM_int:
		if (kstrtol(val, &l) || l < INT_MIN || l > INT_MAX)
			return -EINVAL;
		*(int *)kp->arg = (int)l;
		return 0;
	case KPARAM_uint:
		if (kstrtoul(val, &ul) || ul > UINT_MAX)
			return -EINVAL;
		*(unsigned int *)kp->arg = (unsigned int)ul;
		return 0;
	case KPARAM_ulong:
		if (kstrtoul(val, &ul))
			return -EINVAL;
		*(unsigned long *)kp->arg = ul;
		return 0;
	case KPARAM_size:
		if (memparse(val, &ul))
			return -EINVAL;
		*(unsigned long *)kp->arg = ul;
		return 0;
	case KPARAM_charp:
		if (!val || strlen(val) >= KPARAM_STR_MAX)
			return -EINVAL;
		strcpy((char *)kp->arg, val);
		return 0;
	case KPARAM_custom:
		return kp->set(val, kp);
	}
	return -EINVAL;
}

/* Room for every parameter's default (about 60 of them, 8 bytes each today). */
static unsigned char kparam_defaults[4096] __attribute__((aligned(16)));
static bool kparam_saved;

void kparam_reset_defaults(void)
{
	size_t off = 0;

	for (const struct kernel_param *kp = kparam_first(); kp < kparam_end(); kp++) {
		if (!kp->arg || !kp->size)
			continue;
		if (off + kp->size > sizeof(kparam_defaults)) {
			pr_err("kparam_reset_defaults: no room for '%s'\n", kp->name);
			break;
		}
		if (kparam_saved)
			memcpy(kp->arg, kparam_defaults + off, kp->size);
		else
			memcpy(kparam_defaults + off, kp->arg, kp->size);
		off += kp->size;
	}
	kparam_saved = true;
}

int parse_one_param(const char *name, const char *value, bool dry_run)
{
	for (const struct kernel_param *kp = kparam_first(); kp < kparam_end(); kp++) {
		if (strcmp(kp->name, name))
			continue;
		/* Only booleans may stand alone ("slab_nomerge" is a custom flag). */
		if (!value && kp->type != KPARAM_bool && kp->type != KPARAM_custom)
			goto bad;
		if (set_param(kp, value, dry_run))
			goto bad;
		return 0;
	}
	pr_err("unknown boot parameter '%s'\n", name);
	return -EINVAL;
bad:
	pr_err("invalid value '%s' for boot parameter '%s'\n", value ? value : "(none)", name);
	return -EINVAL;
}

int parse_cmdline(const char *cmdline, bool dry_run)
{
	char buf[4096];

	if (!cmdline)
		return 0;
	if (strlen(cmdline) >= sizeof(buf)) {
		pr_err("command line too long (%zu bytes, at most %zu)\n",
		       strlen(cmdline), sizeof(buf) - 1);
		return -EINVAL;
	}
	strcpy(buf, cmdline);

	char *p = buf;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			return 0;

		/* One "name[=value]" token; a value may be "double quoted". */
		char *name = p, *value = NULL;
		bool quoted = false;
		while (*p && (quoted || (*p != ' ' && *p != '\t' && *p != '\n'))) {
			if (*p == '=' && !value) {
				*p = '\0';
				value = p + 1;
				if (*value == '"') {
					quoted = true;
					value++;
					p++;
				}
			} else if (*p == '"' && quoted) {
				*p = '\0';
				quoted = false;
				if (p[1] && p[1] != ' ' && p[1] != '\t' && p[1] != '\n') {
					pr_err("text after the closing quote of boot parameter '%s'\n", name);
					return -EINVAL;
				}
			}
			p++;
		}
		if (quoted) {
			pr_err("unterminated quote in boot parameter '%s'\n", name);
			return -EINVAL;
		}
		if (*p)
			*p++ = '\0';
		int rc = parse_one_param(name, value, dry_run);
		if (rc)
			return rc;
	}
}
