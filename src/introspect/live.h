/* SPDX-License-Identifier: MIT */
/*
 * kmem.live: /proc and /sys served to other processes (live.c).
 */
#ifndef KMEM_INTROSPECT_LIVE_H
#define KMEM_INTROSPECT_LIVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * With kmem.live=1, start serving (once per process; kmem must be up and
 * the caller hold no kmem lock: it starts a thread).  Else nothing.
 */
void kmem_live_start(void);

/*
 * Is this process serving?  (False once the server has stopped: its last
 * use of its descriptor happens before a false answer.)
 */
bool kmem_live_serving(void);

/* In a fork's child: close the parent's listening socket (the thread is not here). */
void kmem_live_fork_child(void);

/* The socket of process @pid of user @uid: /tmp/kmem-<uid>/<pid>.sock. */
void kmem_live_socket_path(char *buf, size_t size, unsigned int uid, int pid);

#endif /* KMEM_INTROSPECT_LIVE_H */
