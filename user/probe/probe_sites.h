/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/probe/sites — every place this cabbpf ever put a process-filtered
 * multi-uprobe (uprobe_multi__attach with a pid), by file. A process the
 * target forks inherits those breakpoints with its copy of the target's
 * memory, and the kernel runs them there as for the target: no BPF event
 * (the programs filter by process), but each traced call arms a return
 * probe (a multi link's return consumer is not filtered when it fires),
 * whose trampoline an exception in the child then meets. The guard takes
 * them out of such a child (user/trace/guard_forks.c).
 *
 * Threads: any; one lock. The record only grows (a site detached since is
 * harmless: a child holds no breakpoint there, and nothing is written).
 */
#ifndef USER_PROBE_SITES_H
#define USER_PROBE_SITES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Record offsets offs[0..n) of the file at path (identified by device and
 * inode, as /proc/PID/maps shows them). Returns 0, or -errno of stat, or
 * -ENOMEM. */
int probe_sites__add(const char *path, const uint64_t *offs, size_t n);

/* For every file recorded: fn(ctx, path, dev, ino, offs, n), its sites in
 * no particular order (offs valid during the call). fn must not call
 * probe_sites__add. */
void probe_sites__each(void (*fn)(void *ctx, const char *path, dev_t dev, ino_t ino,
				  const uint64_t *offs, size_t n),
		       void *ctx);

/*
 * fn(ctx, path, offs, n) is called by each probe_sites__add from now on,
 * after the record, from the adding thread (the guard's tracer process,
 * which forked before those sites existed, is told of them:
 * user/trace/guardian.h). One listener; fn NULL removes it. Any thread.
 */
void probe_sites__on_add(void (*fn)(void *ctx, const char *path, const uint64_t *offs, size_t n),
			 void *ctx);

/* Forget every site (tests). */
void probe_sites__reset(void);

#endif /* USER_PROBE_SITES_H */
