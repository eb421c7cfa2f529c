/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cabbpf --io: system-wide I/O characterization (user/iostat.h does the
 * bookkeeping), and the --cgroup / --container filter shared by every mode.
 * Main thread only.
 */
#ifndef USER_IOMODE_H
#define USER_IOMODE_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "user/opts.h"

/*
 * The cgroup filter asked for by --cgroup PATH or --container ID: sets *fd
 * to an open cgroup v2 directory (the caller closes it) and writes its path
 * into path, or sets *fd = -1 when neither option was given. Returns 0, or
 * -errno after logging a clear message (no such cgroup, not cgroup v2,
 * unknown or ambiguous container id).
 */
int iomode__cgroup(const struct opts *o, int *fd, char *path, size_t len);

/*
 * Function tracing: point the --cgroup filter of bpf/trace.bpf.c (map
 * "cgfilter", fd given; switched on by its cgroup_on rodata flag) at cgroup
 * directory cgfd. Returns 0 or -errno (logged).
 */
int iomode__cgroup_maps(int cgfilter_fd, int cgfd);

/*
 * Move process pid (a command cabbpf launched and still holds before its
 * exec) into the cgroup v2 directory path, so `--cgroup PATH -- CMD` traces
 * CMD inside it. Returns 0 or -errno (logged).
 */
int iomode__cgroup_enter(const char *path, pid_t pid);

/*
 * Run --io until *stop is set (a signal), -d elapses, or the -p process
 * exits; print the report. Returns the process exit status: 0 after a
 * report, 1 when it could not run.
 */
int iomode__run(const struct opts *o, volatile sig_atomic_t *stop);

#endif /* USER_IOMODE_H */
