/* SPDX-License-Identifier: MIT */
/*
 * Boot parameters.  Each layer declares its own with core_param() or
 * kmem_param(); the declarations are gathered in one linker section, so the
 * parser knows every parameter without a central table (kernel: __setup,
 * module_param).
 */
#ifndef KMEM_CMDLINE_H
#define KMEM_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>

enum kparam_type {
	KPARAM_bool,	/* bool: 1/0, y/n, on/off; bare name means true */
	KPARAM_int,
	KPARAM_uint,
	KPARAM_ulong,
	KPARAM_size,	/* unsigned long with K/M/G/T suffix (memparse) */
	KPARAM_charp,	/* string copied into a char[KPARAM_STR_MAX] */
	KPARAM_custom,	/* parsed by ->set */
};

#define KPARAM_STR_MAX 256

struct kernel_param {
	const char *name;
	enum kparam_type type;
	void *arg;
	size_t size;		/* of *arg, for kparam_reset_defaults(); 0: none */
	int (*set)(const char *val, const struct kernel_param *kp);
	const char *help;
} __attribute__((aligned(8)));

#define __KPARAM_ID2(a, b) a##b
#define __KPARAM_ID(a, b) __KPARAM_ID2(a, b)

/* Parameter named @str ("page_alloc.tail_placement") stored in @var. */
#define kmem_param(str, var, ptype, helptext)					\
	static const struct kernel_param __KPARAM_ID(__kparam_, __LINE__)	\
	__attribute__((used, section("kmem_param"), aligned(__alignof__(struct kernel_param)))) = {			\
		.name = str, .type = KPARAM_##ptype, .arg = &(var), .size = sizeof(var),	\
		.help = helptext }

/* Pasted here, not via kmem_param(): "bool" must not expand before the ## */
#define core_param(pname, var, ptype, helptext)				\
	static const struct kernel_param __KPARAM_ID(__kparam_, __LINE__)	\
	__attribute__((used, section("kmem_param"), aligned(__alignof__(struct kernel_param)))) = {			\
		.name = #pname, .type = KPARAM_##ptype, .arg = &(var), .size = sizeof(var),	\
		.help = helptext }

/* Parameter parsed by @setfn(value, kp) into @var. */
#define kmem_param_cb(str, setfn, var, helptext)				\
	static const struct kernel_param __KPARAM_ID(__kparam_, __LINE__)	\
	__attribute__((used, section("kmem_param"), aligned(__alignof__(struct kernel_param)))) = {			\
		.name = str, .type = KPARAM_custom, .arg = &(var), .size = sizeof(var),	\
		.set = setfn, .help = helptext }

/*
 * Parse a whole command line; 0 or -EINVAL after naming the culprit on
 * stderr.  With @dry_run nothing is stored: a line is checked before any of
 * it takes effect, so a bad one leaves every setting as it was.
 */
int parse_cmdline(const char *cmdline, bool dry_run);
/* Parse one "name[=value]"; value NULL if none. */
int parse_one_param(const char *name, const char *value, bool dry_run);

/* memparse(): "64M" -> 67108864.  Returns 0 or -EINVAL. */
int memparse(const char *s, unsigned long *out);
int kstrtobool(const char *s, bool *out);
int kstrtoul(const char *s, unsigned long *out);
int kstrtol(const char *s, long *out);

/*
 * Put every parameter back to its value before any command line: the
 * first call records the values, later ones restore them.  A boot the
 * checks refused (kmem_init() < 0) must not leave its line's settings for
 * the next try.
 */
void kparam_reset_defaults(void);

/* Iterate over every declared parameter (for docs checks and help output). */
const struct kernel_param *kparam_first(void);
const struct kernel_param *kparam_end(void);

#endif /* KMEM_CMDLINE_H */
