/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cabbpf --io: system-wide I/O characterization (user/iomode/iostat.h does the
 * bookkeeping). The cgroup filter is user/proc/cgroup.h.
 * Main thread only.
 */
#ifndef USER_IOMODE_H
#define USER_IOMODE_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "user/cli/opts.h"

/*
 * Run --io until *stop is set (a signal), -d elapses, or the -p process
 * exits; print the report. The peer of ftrace__run (user/modes/ftrace.h).
 * Returns 0 after a report, or -errno (logged) when it could not run or
 * the report could not be written.
 */
int iomode__run(const struct opts *o, volatile sig_atomic_t *stop);

#endif /* USER_IOMODE_H */
