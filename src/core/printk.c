// SPDX-License-Identifier: MIT
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/cmdline.h"
#include "core/printk.h"
#include "platform/os.h"

bool panic_on_warn;
core_param(panic_on_warn, panic_on_warn, bool,
	   "abort after any BUG/WARNING report (kernel: panic_on_warn)");

static atomic_ulong nr_reports;

void vprintk(const char *fmt, va_list ap)
{
	char buf[1024];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);

	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	os_write_stderr(buf, (size_t)n);
}

void printk(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintk(fmt, ap);
	va_end(ap);
}

void kmem_report_done(void)
{
	atomic_fetch_add_explicit(&nr_reports, 1, memory_order_relaxed);
	if (panic_on_warn) {
		printk("Kernel panic - not syncing: panic_on_warn set ...\n");
		os_abort();
	}
}

void kmem_report(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintk(fmt, ap);
	va_end(ap);
	kmem_report_done();
}

void kmem_warn(const char *where, const char *fmt, ...)
{
	va_list ap;

	/* The kernel's PID is the task's: the thread here. */
	printk("WARNING: CPU: %d PID: %d at %s\n", sched_getcpu(), os_gettid(), where);
	va_start(ap, fmt);
	vprintk(fmt, ap);
	va_end(ap);
	kmem_report_done();
}

unsigned long kmem_report_count(void)
{
	return atomic_load_explicit(&nr_reports, memory_order_relaxed);
}
