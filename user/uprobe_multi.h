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

/*
 * Attach prog_fd at offsets[0..cnt) of the file at path, cookie i at site i,
 * as return probes if retprobe. pid > 0 restricts the probes to that process.
 * Returns the link fd (the caller owns it; close() detaches every site) or
 * -errno (-EINVAL/-EOPNOTSUPP on kernels without multi-uprobes). Any thread.
 */
int uprobe_multi__attach(int prog_fd, const char *path, const uint64_t *offsets,
			 const uint64_t *cookies, uint32_t cnt, bool retprobe, pid_t pid);

#endif /* USER_UPROBE_MULTI_H */
