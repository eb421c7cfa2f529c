/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/procfs — small reads of a process's /proc files that several parts
 * need (the guard, whole-cgroup tracing, --io).
 *
 * Threads: any (no shared state).
 */
#ifndef USER_PROCFS_H
#define USER_PROCFS_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * The number in field name of /proc/PID/status ("Tgid", "TracerPid",
 * "PPid", ...; pid may be a thread's id). Returns it (>= 0), or -1 when
 * the process is gone or has no such field.
 */
long procfs__status_field(pid_t pid, const char *name);

/* Gone, or a zombie nobody has reaped yet: either way it runs no more
 * code and does no more I/O (/proc/PID/stat's state). */
bool procfs__gone(pid_t pid);

/* When process pid started: /proc/PID/stat's starttime, clock ticks
 * (sysconf(_SC_CLK_TCK)) since boot, which tells two processes under one
 * pid apart. Returns it (>= 0), or -1 when the process is gone or the
 * file unreadable. */
long long procfs__start_ticks(pid_t pid);

/* Now, in the clock of procfs__start_ticks (CLOCK_BOOTTIME in ticks). */
unsigned long long procfs__now_ticks(void);

/* The system call thread tid of process pid is in now, blocked (its number,
 * from /proc/PID/task/TID/syscall), or -1: running, not in a call, gone,
 * or unreadable. */
long procfs__syscall(pid_t pid, pid_t tid);

/* Whether signal sig is pending for thread tid (sent to it or to its
 * process, not yet taken: /proc/TID/status's SigPnd and ShdPnd). False
 * when tid is gone or unreadable. */
bool procfs__sig_pending(pid_t tid, int sig);

#endif /* USER_PROCFS_H */
