/* SPDX-License-Identifier: MIT */
/*
 * Kernel-style reports on stderr.  Formatting uses a stack buffer and write(2)
 * only: these run inside the allocator, where malloc is not available.
 */
#ifndef KMEM_PRINTK_H
#define KMEM_PRINTK_H

#include <stdarg.h>
#include <stdbool.h>

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

__attribute__((format(printf, 1, 2))) void printk(const char *fmt, ...);
void vprintk(const char *fmt, va_list ap);

#define pr_err(fmt, ...)	printk("kmem: " fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...)	printk("kmem: " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)	printk("kmem: " fmt, ##__VA_ARGS__)

/*
 * A report of bad input or a broken invariant ("BUG: ..." / "WARNING: ...").
 * Counted, so tests can assert that a fault was seen; with panic_on_warn=1
 * the process aborts after the report.
 */
__attribute__((format(printf, 1, 2))) void kmem_report(const char *fmt, ...);
/* Like kmem_report, prefixed with "WARNING: CPU: <tid> PID: <pid> at <where>". */
__attribute__((format(printf, 2, 3))) void kmem_warn(const char *where, const char *fmt, ...);

/*
 * Count a report made of several printk() calls (a header, a dump, a FIX
 * line), once it is all out: kmem_report() does this after its message.
 */
void kmem_report_done(void);

/* Number of reports issued so far (a test hook, like KUnit's slab_errors). */
unsigned long kmem_report_count(void);
extern bool panic_on_warn;

#endif /* KMEM_PRINTK_H */
