/* SPDX-License-Identifier: MIT */
/*
 * Render a virtual file straight into the caller's buffer, counting what
 * does not fit (snprintf semantics): no allocation, so introspection works
 * even when memory is exhausted and from inside malloc.
 */
#ifndef KMEM_SEQ_BUF_H
#define KMEM_SEQ_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct seq_buf {
	char *buf;
	size_t size;	/* capacity of buf */
	size_t len;	/* full length rendered so far (may exceed size) */
};

__attribute__((format(printf, 2, 3))) void seq_printf(struct seq_buf *s, const char *fmt, ...);
void seq_puts(struct seq_buf *s, const char *str);
void seq_putc(struct seq_buf *s, char c);
/* NUL-terminate within size and return the full length. */
size_t seq_finish(struct seq_buf *s);

#endif /* KMEM_SEQ_BUF_H */
