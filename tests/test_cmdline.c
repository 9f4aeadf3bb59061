// SPDX-License-Identifier: MIT
/*
 * Boot parameters: kmem_init() and KMEM_CMDLINE.
 *
 *  - unknown parameters and malformed values are refused with -EINVAL and
 *    the culprit is named on stderr; kmem stays down and can boot after;
 *  - memparse suffixes (K/M/G/T, hex) and the effect of mem= on the machine
 *    (rounded down to 4 MiB sections; below 4 MiB refused with a message);
 *  - KMEM_CMDLINE is honoured at first use, and a bad one aborts naming
 *    the parameter;
 *  - every parameter in the kmem_param linker section is well-formed,
 *    refuses garbage by name, and is documented in docs/parameters.md.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <kmem.h>

#include "core/cmdline.h"
#include "page_alloc/mm.h"
#include "platform/os.h"

#include "lib/kt_util.h"
#include "ktest.h"

#ifndef KMEM_SOURCE_DIR
#define KMEM_SOURCE_DIR "."
#endif

/* ---- pure parsers --------------------------------------------------- */

KTEST(memparse_suffixes)
{
	unsigned long v;

	KT_ASSERT(!memparse("4096", &v) && v == 4096);
	KT_ASSERT(!memparse("4K", &v) && v == 4096);
	KT_ASSERT(!memparse("4k", &v) && v == 4096);
	KT_ASSERT(!memparse("64M", &v) && v == 64UL << 20);
	KT_ASSERT(!memparse("64m", &v) && v == 64UL << 20);
	KT_ASSERT(!memparse("64MB", &v) && v == 64UL << 20);
	KT_ASSERT(!memparse("3G", &v) && v == 3UL << 30);
	KT_ASSERT(!memparse("1g", &v) && v == 1UL << 30);
	KT_ASSERT(!memparse("2T", &v) && v == 2UL << 40);
	KT_ASSERT(!memparse("0x10M", &v) && v == 16UL << 20);
	KT_ASSERT(!memparse("0", &v) && v == 0);

	KT_ASSERT_EQ(memparse("", &v), -EINVAL);
	KT_ASSERT_EQ(memparse("abc", &v), -EINVAL);
	KT_ASSERT_EQ(memparse("M", &v), -EINVAL);
	KT_ASSERT_EQ(memparse("12Q", &v), -EINVAL);
	KT_ASSERT_EQ(memparse("12MQ", &v), -EINVAL);
	KT_ASSERT_EQ(memparse("-1", &v), -EINVAL);
	KT_ASSERT_EQ(memparse("-64M", &v), -EINVAL);
	KT_ASSERT_EQ(memparse("18446744073709551616", &v), -EINVAL);	/* 2^64 */
	KT_ASSERT_EQ(memparse("17179869184G", &v), -EINVAL);		/* 2^34 G = 2^64 */
	KT_ASSERT_EQ(memparse(NULL, &v), -EINVAL);
}

KTEST(kstrtobool_and_kstrtoul)
{
	bool b;
	unsigned long ul;

	for (const char *const *s = (const char *const[]){ "1", "y", "Y", "yes", "on", "true", NULL };
	     *s; s++) {
		b = false;
		KT_ASSERT(!kstrtobool(*s, &b) && b);
	}
	for (const char *const *s = (const char *const[]){ "0", "n", "N", "no", "off", "false", NULL };
	     *s; s++) {
		b = true;
		KT_ASSERT(!kstrtobool(*s, &b) && !b);
	}
	KT_ASSERT(!kstrtobool(NULL, &b) && b);		/* bare name */
	KT_ASSERT_EQ(kstrtobool("maybe", &b), -EINVAL);
	KT_ASSERT_EQ(kstrtobool("", &b), -EINVAL);
	KT_ASSERT_EQ(kstrtobool("2", &b), -EINVAL);

	KT_ASSERT(!kstrtoul("42", &ul) && ul == 42);
	KT_ASSERT(!kstrtoul("0x2a", &ul) && ul == 42);
	KT_ASSERT_EQ(kstrtoul("-1", &ul), -EINVAL);
	KT_ASSERT_EQ(kstrtoul("4x", &ul), -EINVAL);
	KT_ASSERT_EQ(kstrtoul("", &ul), -EINVAL);
	KT_ASSERT_EQ(kstrtoul("99999999999999999999999", &ul), -EINVAL);
}

/* ---- kmem_init() ---------------------------------------------------- */

struct bad_case {
	const char *cmdline;
	const char *named[3];	/* strings stderr must contain */
};

static const struct bad_case bad_cases[] = {
	{ "mem=32M no_such_param=1", { "unknown boot parameter", "no_such_param" } },
	{ "frobnicate", { "unknown boot parameter", "frobnicate" } },
	{ "mem=abc", { "invalid value", "'abc'", "'mem'" } },
	{ "mem=", { "'mem'" } },
	{ "mem", { "'mem'" } },
	{ "mem=64X", { "'64X'", "'mem'" } },
	{ "page_alloc.tail_placement=maybe", { "'maybe'", "page_alloc.tail_placement" } },
	{ "nr_cpus=-1", { "nr_cpus" } },
	{ "nr_cpus=4x", { "nr_cpus" } },
	{ "nr_cpus=99999999999", { "nr_cpus" } },
	{ "kmem.max_mem=12Q", { "kmem.max_mem" } },
	{ "page_reporting.enable=2", { "page_reporting.enable" } },
	{ "mem=\"64M", { "unterminated quote", "mem" } },
	{ "mem=3M", { "mem=", "too small" } },
	{ "mem=4095K", { "too small" } },
	{ "mem=0x3fffff", { "too small" } },
	/* No sign and no blanks before a number; nothing after a closing quote. */
	{ "nr_cpus=+4", { "nr_cpus" } },
	{ "nr_cpus=\" 4\"", { "nr_cpus" } },
	{ "kmem.max_mem=\" -1\"", { "kmem.max_mem" } },
	{ "mem=+64M", { "'mem'" } },
	{ "mem=\"64M\"junk", { "closing quote", "mem" } },
	/* More than the address space can hold: refused before anything is reserved. */
	{ "mem=100T", { "mem=100 TiB", "address space" } },
	{ "mem=16383T", { "address space" } },
};

static void bad_cmdline(void *arg)
{
	const struct bad_case *bc = arg;
	int rc;
	char *err = kt_init_captured(bc->cmdline, &rc);
	if (rc != -EINVAL)
		KT_FAIL("kmem_init(\"%s\") = %d, want -EINVAL", bc->cmdline, rc);
	for (int i = 0; i < 3 && bc->named[i]; i++)
		if (!strstr(err, bc->named[i]))
			KT_FAIL("kmem_init(\"%s\"): \"%s\" not in stderr:\n%s",
				bc->cmdline, bc->named[i], err);
	free(err);
	if (ktest_failed_now)
		return;
	/* kmem is still down: a good command line boots it. */
	KT_ASSERT_EQ(kmem_init("mem=16M"), 0);
	KT_ASSERT_EQ(zone_managed_pages(&zone_normal), 4096);
	KT_ASSERT(alloc_pages(GFP_KERNEL, 0));
}

/* A refused line is checked whole before any of it takes effect. */
static void refused_line_changes_nothing(void *arg)
{
	(void)arg;
	int rc;
	char *err = kt_init_captured("mem=8M page_alloc.tail_placement=0 bogus", &rc);
	free(err);
	KT_ASSERT_EQ(rc, -EINVAL);
	KT_ASSERT(tail_placement);
	/* Without the mem=8M of the refused line memory grows: 4 MiB at first. */
	KT_ASSERT_EQ(kmem_init("kmem.max_mem=16M kmem.mem_block=4M"), 0);
	KT_ASSERT_EQ(kt_zoneinfo("managed"), 1024);
	KT_ASSERT(tail_placement);
}

/*
 * A line that parses but that boot then refuses (a value out of range, a
 * too small memory) must not leave its settings for the next kmem_init():
 * the corrected line boots with the defaults for what it does not set.
 */
static void boot_refused_leaves_nothing(void *arg)
{
	const char *refused = arg;
	int rc;
	char *err = kt_init_captured(refused, &rc);
	free(err);
	KT_ASSERT_EQ(rc, -EINVAL);
	KT_ASSERT_EQ(kmem_init("mem=64M"), 0);
	char buf[32];
	KT_ASSERT(kmem_read("/sys/kernel/slab/kmalloc-8k/order", buf, sizeof(buf)) > 0);
	KT_EXPECT(atoi(buf) == 3);	/* not the refused line's slub_max_order=0 */
	KT_ASSERT(kmem_read("/proc/sys/vm/watermark_scale_factor", buf, sizeof(buf)) > 0);
	KT_EXPECT(atoi(buf) == 10);
}

KTEST(refused_cmdline_changes_nothing)
{
	KT_ASSERT_CHILD_OK(kt_fork(refused_line_changes_nothing, NULL));
	KT_ASSERT_CHILD_OK(kt_fork(boot_refused_leaves_nothing,
				   "mem=64M slub_max_order=0 sysctl.vm.watermark_scale_factor=0"));
	KT_ASSERT_CHILD_OK(kt_fork(boot_refused_leaves_nothing, "mem=1M slub_max_order=0"));
	KT_ASSERT_CHILD_OK(kt_fork(boot_refused_leaves_nothing,
				   "slub_max_order=0 page_reporting.page_reporting_order=11"));
}

KTEST(bad_cmdlines_refused)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		int status = kt_fork(bad_cmdline, (void *)&bad_cases[i]);
		if (!KT_CHILD_OK(status))
			KT_FAIL("case \"%s\" failed", bad_cases[i].cmdline);
	}
}

struct good_case {
	const char *cmdline;
	unsigned long managed;
};

static const struct good_case good_cases[] = {
	{ "mem=32M", 8192 },
	{ "mem=32768K", 8192 },
	{ "mem=0x2000000", 8192 },
	{ "mem=33554432", 8192 },
	{ "mem=4M", 1024 },
	{ "mem=6M", 1024 },		/* rounded down to a 4 MiB section */
	{ "mem=1G", 262144 },
	{ "  mem=8M\tnr_cpus=3 \n", 2048 },
	{ "kmem.max_mem=\"64M\" mem=\"16M\"", 4096 },
	/* A block past kmem.max_mem brings all of it online (rounding it up overflowed). */
	{ "kmem.max_mem=64M kmem.mem_first=0 kmem.mem_block=0xffffffffffffffff", 16384 },
	{ "kmem.max_mem=64M kmem.mem_first=0 kmem.mem_block=17179869183G", 16384 },
	{ "kmem.max_mem=64M kmem.mem_first=0xffffffffffffffff", 16384 },
	/* Growable: kmem.mem_first (4 MiB) at boot; 0 means kmem.mem_block. */
	{ "kmem.max_mem=64M", 1024 },
	{ "kmem.max_mem=64M kmem.mem_first=5M", 2048 },
	{ "kmem.max_mem=64M kmem.mem_first=0 kmem.mem_block=8M", 2048 },
};

static void good_cmdline(void *arg)
{
	const struct good_case *gc = arg;

	KT_ASSERT_EQ(kmem_init(gc->cmdline), 0);
	KT_ASSERT_EQ(kt_zoneinfo("managed"), gc->managed);
	KT_ASSERT_EQ(kt_zoneinfo("present"), gc->managed);
	KT_ASSERT_EQ(kmem_init(gc->cmdline), -EBUSY);
	KT_ASSERT_EQ(kmem_init("mem=64M"), -EBUSY);
	struct page *page = alloc_pages(GFP_KERNEL, 0);
	KT_ASSERT(page);
	__free_pages(page, 0);
}

KTEST(mem_sizes)
{
	for (size_t i = 0; i < sizeof(good_cases) / sizeof(good_cases[0]); i++) {
		int status = kt_fork(good_cmdline, (void *)&good_cases[i]);
		if (!KT_CHILD_OK(status))
			KT_FAIL("case \"%s\" failed", good_cases[i].cmdline);
	}
}

static void params_take_effect(void *arg)
{
	(void)arg;
	KT_ASSERT_EQ(kmem_init("mem=64M nr_cpus=4 page_alloc.tail_placement=off "
			       "page_reporting.enable=n sysctl.vm.min_free_kbytes=2048 "
			       "sysctl.vm.watermark_scale_factor=100 panic_on_warn=0"), 0);
	KT_ASSERT(!tail_placement);
	KT_ASSERT(!page_reporting_enabled);
	KT_ASSERT(!panic_on_warn);
	/* min 512; tmp = max(128, 16384 * 100 / 10000 = 163): low 675 */
	KT_ASSERT_EQ(kt_zoneinfo("min"), 512);
	KT_ASSERT_EQ(kt_zoneinfo("low"), 675);
	char *t = kt_read("/proc/sys/vm/min_free_kbytes", NULL);
	KT_ASSERT_STREQ(t, "2048\n");
	free(t);
	t = kt_read("/proc/sys/vm/watermark_scale_factor", NULL);
	KT_ASSERT_STREQ(t, "100\n");
	free(t);
	/* pcp high = low / nr_cpus = 675 / 4 */
	KT_ASSERT(alloc_pages(GFP_KERNEL, 0));
	KT_ASSERT_EQ(kt_zoneinfo("high:"), 675 / 4);
}

KTEST(parameters_take_effect)
{
	KT_ASSERT_CHILD_OK(kt_fork(params_take_effect, NULL));
}

/* ---- KMEM_CMDLINE ---------------------------------------------------- */

static void env_first_alloc(void *arg)
{
	(void)arg;
	setenv("KMEM_CMDLINE", "mem=32M nr_cpus=2", 1);
	struct page *page = alloc_pages(GFP_KERNEL, 0);	/* boots */
	KT_ASSERT(page);
	KT_ASSERT_EQ(kt_zoneinfo("managed"), 8192);
	KT_ASSERT_EQ(kmem_init("mem=64M"), -EBUSY);
	__free_pages(page, 0);
}

static void env_first_read(void *arg)
{
	(void)arg;
	setenv("KMEM_CMDLINE", "mem=16M", 1);
	KT_ASSERT_EQ(kt_zoneinfo("managed"), 4096);	/* kmem_read boots */
}

KTEST(kmem_cmdline_env_honoured)
{
	KT_ASSERT_CHILD_OK(kt_fork(env_first_alloc, NULL));
	KT_ASSERT_CHILD_OK(kt_fork(env_first_read, NULL));
}

static void env_bad(void *arg)
{
	setenv("KMEM_CMDLINE", arg, 1);
	alloc_pages(GFP_KERNEL, 0);	/* must abort */
	_exit(7);
}

KTEST(kmem_cmdline_env_bad_aborts)
{
	static const struct bad_case cases[] = {
		{ "mem=32M bogus_param=7", { "bogus_param", "KMEM_CMDLINE" } },
		{ "mem=abc", { "'mem'", "KMEM_CMDLINE" } },
		{ "mem=1M", { "too small" } },
		{ "mem=100T", { "address space", "KMEM_CMDLINE" } },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int status;
		char *err = kt_fork_captured(env_bad, (void *)cases[i].cmdline, &status);
		if (!KT_CHILD_ABORTED(status))
			KT_FAIL("KMEM_CMDLINE=\"%s\": child did not abort (status %#x)",
				cases[i].cmdline, status);
		for (int j = 0; j < 3 && cases[i].named[j]; j++)
			if (!strstr(err, cases[i].named[j]))
				KT_FAIL("KMEM_CMDLINE=\"%s\": \"%s\" not in stderr:\n%s",
					cases[i].cmdline, cases[i].named[j], err);
		free(err);
	}
}

/*
 * mem= above the machine's RAM and swap is refused, at once and before
 * anything is reserved: bringing 2 TiB online cost seconds and 2 GB of RSS.
 */
KTEST(kmem_cmdline_mem_beyond_the_machine)
{
	unsigned long backing = os_total_ram() + os_total_swap();
	char line[64];

	if (!os_total_ram() || backing >= (8UL << 40)) {
		printf("  (skipped: RAM and swap unknown or above 8 TiB)\n");
		return;
	}
	/* Twice the machine, in whole GiB. */
	snprintf(line, sizeof(line), "mem=%luG", (backing >> 30) * 2 + 2);
	struct bad_case bc = { line, { "more than this machine can back", "RAM" } };
	unsigned long t0 = os_now_ns();
	KT_ASSERT_CHILD_OK(kt_fork(bad_cmdline, &bc));
	/* The refusal, a fork and a 16 MiB boot included. */
	KT_ASSERT((os_now_ns() - t0) / 1000000 < 1000);
}

/* kmem_init() ignores KMEM_CMDLINE. */
static void init_ignores_env(void *arg)
{
	(void)arg;
	setenv("KMEM_CMDLINE", "mem=32M bogus=1", 1);
	KT_ASSERT_EQ(kmem_init("mem=16M"), 0);
	KT_ASSERT_EQ(kt_zoneinfo("managed"), 4096);
}

KTEST(kmem_init_ignores_env)
{
	KT_ASSERT_CHILD_OK(kt_fork(init_ignores_env, NULL));
}

/* ---- the parameter table ------------------------------------------------ */

KTEST(parameter_table_well_formed)
{
	int n = 0;

	for (const struct kernel_param *kp = kparam_first(); kp < kparam_end(); kp++, n++) {
		KT_ASSERT(kp->name && *kp->name);
		for (const char *c = kp->name; *c; c++)
			KT_ASSERT(isalnum((unsigned char)*c) || *c == '_' || *c == '.');
		KT_ASSERT(kp->help && *kp->help);
		KT_ASSERT(kp->type <= KPARAM_custom);
		KT_ASSERT(kp->type == KPARAM_custom ? kp->set != NULL : kp->arg != NULL);
		for (const struct kernel_param *o = kparam_first(); o < kp; o++)
			if (!strcmp(o->name, kp->name))
				KT_FAIL("parameter '%s' declared twice", kp->name);
	}
	static const char *const expected[] = {
		"mem", "kmem.max_mem", "kmem.mem_block", "page_alloc.tail_placement", "nr_cpus",
		"page_reporting.enable", "page_reporting.page_reporting_order", "panic_on_warn",
		"sysctl.vm.min_free_kbytes", "sysctl.vm.watermark_scale_factor",
		"sysctl.vm.percpu_pagelist_high_fraction",
	};
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		bool found = false;
		for (const struct kernel_param *kp = kparam_first(); kp < kparam_end(); kp++)
			found |= !strcmp(kp->name, expected[i]);
		if (!found)
			KT_FAIL("parameter '%s' is not declared", expected[i]);
	}
	KT_ASSERT(n >= (int)(sizeof(expected) / sizeof(expected[0])));
}

/* Every numeric or boolean parameter refuses garbage, naming itself. */
static void garbage_refused(void *arg)
{
	(void)arg;
	for (const struct kernel_param *kp = kparam_first(); kp < kparam_end(); kp++) {
		if (kp->type == KPARAM_charp || kp->type == KPARAM_custom)
			continue;
		struct kt_capture c;
		kt_capture_begin(&c);
		int rc = parse_one_param(kp->name, "garbage!", true);
		char *err = kt_capture_end(&c);
		if (rc != -EINVAL || !strstr(err, kp->name) || !strstr(err, "garbage!"))
			KT_FAIL("parameter '%s' with value 'garbage!': rc %d, stderr:\n%s",
				kp->name, rc, err);
		free(err);
	}
}

KTEST(every_parameter_refuses_garbage)
{
	KT_ASSERT_CHILD_OK(kt_fork(garbage_refused, NULL));
}

/* @name appears in @doc as a whole name (not inside a longer one). */
static bool documented(const char *doc, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strstr(doc, name); p; p = strstr(p + 1, name)) {
		char before = p == doc ? ' ' : p[-1], after = p[n];
		bool word_before = isalnum((unsigned char)before) || before == '_' || before == '.';
		bool word_after = isalnum((unsigned char)after) || after == '_' ||
				  (after == '.' && isalnum((unsigned char)p[n + 1]));
		if (!word_before && !word_after)
			return true;
	}
	return false;
}

KTEST(every_parameter_documented)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/docs/parameters.md", KMEM_SOURCE_DIR);
	FILE *f = fopen(path, "r");
	if (!f) {
		KT_FAIL("cannot open %s: every boot parameter must be documented there", path);
		return;
	}
	static char doc[1 << 18];
	size_t len = fread(doc, 1, sizeof(doc) - 1, f);
	fclose(f);
	doc[len] = '\0';

	for (const struct kernel_param *kp = kparam_first(); kp < kparam_end(); kp++)
		if (!documented(doc, kp->name))
			KT_FAIL("boot parameter '%s' is not documented in docs/parameters.md",
				kp->name);
}

KTEST_MAIN((void)0)
