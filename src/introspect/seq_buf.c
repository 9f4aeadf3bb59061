// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "introspect/seq_buf.h"

static void seq_vprintf(struct seq_buf *s, const char *fmt, va_list ap)
{
	size_t room = s->len < s->size ? s->size - s->len : 0;
	int n = vsnprintf(room ? s->buf + s->len : NULL, room, fmt, ap);

	if (n > 0)
		s->len += (size_t)n;
}

void seq_printf(struct seq_buf *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	seq_vprintf(s, fmt, ap);
	va_end(ap);
}

void seq_puts(struct seq_buf *s, const char *str)
{
	size_t n = strlen(str);

	if (s->len < s->size) {
		size_t room = s->size - s->len;
		memcpy(s->buf + s->len, str, n < room ? n : room);
	}
	s->len += n;
}

void seq_putc(struct seq_buf *s, char c)
{
	if (s->len < s->size)
		s->buf[s->len] = c;
	s->len++;
}

size_t seq_finish(struct seq_buf *s)
{
	if (s->size)
		s->buf[s->len < s->size ? s->len : s->size - 1] = '\0';
	return s->len;
}
