/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Multi-uprobe links (BPF_TRACE_UPROBE_MULTI, kernel >= 6.6) through the raw
 * bpf() syscall: Debian's libbpf 1.1 predates their API. One link holds every
 * probe site of a program, so attaching N functions is one syscall and
 * detaching them is one close (one RCU grace period instead of N).
 */
#ifndef USER_UPROBE_MULTI_H
#define USER_UPROBE_MULTI_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The attach type a program must be loaded with to be used here. */
#define UPROBE_MULTI_ATTACH_TYPE 48 /* BPF_TRACE_UPROBE_MULTI */
/* A session program (entry and return in one, kernel >= 6.13): loaded
 * with this attach type, attached with kind UPROBE_MULTI_SESSION. */
#define UPROBE_SESSION_ATTACH_TYPE 57 /* BPF_TRACE_UPROBE_SESSION */

/* What a link's sites are (the retprobe argument below: false and true
 * are the first two). */
enum uprobe_multi_kind {
	UPROBE_MULTI_ENTRY = 0,
	UPROBE_MULTI_RETURN = 1,
	UPROBE_MULTI_SESSION = 2, /* the program runs at entry and return */
};

/*
 * Attach prog_fd at offsets[0..cnt) of the file at path, cookie i at site i,
 * as return probes if retprobe (enum uprobe_multi_kind: or as a session).
 * pid > 0 restricts the probes to that process; 0: every process that
 * maps the file.
 * Returns the link fd (the caller owns it; close() detaches every site) or
 * -errno (-EINVAL/-EOPNOTSUPP on kernels without multi-uprobes). Any thread.
 */
int uprobe_multi__attach(int prog_fd, const char *path, const uint64_t *offsets,
			 const uint64_t *cookies, uint32_t cnt, int retprobe, pid_t pid);

/*
 * Attaches every site the kernel accepts, as few links as possible: the
 * whole set in one link, and when the kernel refuses the set (one bad
 * offset fails the whole link) each half again, down to single sites. A
 * single site that fails is marked refused[i] = true and left out.
 * Returns 0 with the new link fds appended to the malloc'd array *fds of
 * *nfds fds (NULL / 0 to start one; the caller owns it and closes every
 * fd), or -errno when no site at all could be attached (then nothing new
 * is left open, *fds / *nfds are unchanged, refused[] says nothing); at
 * once -ESRCH when process pid is gone (no split is tried: no site could
 * go in). Arguments as for uprobe_multi__attach. Any thread.
 */
int uprobe_multi__attach_all(int prog_fd, const char *path, const uint64_t *offsets,
			     const uint64_t *cookies, uint32_t cnt, int retprobe, pid_t pid,
			     int **fds, uint32_t *nfds, bool *refused);

#endif /* USER_UPROBE_MULTI_H */
