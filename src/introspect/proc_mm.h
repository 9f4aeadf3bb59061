/* SPDX-License-Identifier: MIT */
/* Renderers of the page allocator's /proc and debugfs files: pure functions
 * of a zone snapshot, so tests can feed them the kernel's own numbers. */
#ifndef KMEM_PROC_MM_H
#define KMEM_PROC_MM_H

#include "introspect/seq_buf.h"
#include "page_alloc/zone_info.h"

void render_buddyinfo(struct seq_buf *s, const struct zone_info *zi);
void render_pagetypeinfo_free(struct seq_buf *s, const struct zone_info *zi);
void render_pagetypeinfo_blocks(struct seq_buf *s, const struct zone_info *zi);
void render_unusable_index(struct seq_buf *s, const struct zone_info *zi);
void render_extfrag_index(struct seq_buf *s, const struct zone_info *zi);

#endif /* KMEM_PROC_MM_H */
