/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --follow-exec: a launched command that is only a way to start another
 * program (a version manager's shim: pyenv, rbenv; "env VAR=1 prog",
 * "nice -n 5 prog"; a shell script ending in "exec prog") is followed
 * through its execs, and the first program it runs that is not a shell
 * or such a wrapper (follow__passes_through) becomes the target, from
 * its first instruction.
 *
 * How: cabbpf is the child's ptrace tracer (PTRACE_SEIZE with
 * PTRACE_O_TRACEEXEC) from its stop before the command's exec until the
 * exec of that program (first: its first exec, whatever the program,
 * for --follow-forks); each exec stops the child before the new image
 * runs an instruction, so /proc/PID/exe says which program it is. The
 * chosen one is left stopped by SIGSTOP and detached: the state
 * target__spawn leaves a child in (held), so planning, the guard (which
 * becomes its tracer in turn) and target__start go on as for any command.
 * Only the exec'ing process is followed: the processes a shim forks
 * (command substitutions) run as they would untraced. Signals that reach
 * the child meanwhile are delivered as they would be (a job-control stop
 * stays a stop).
 */
#ifndef USER_PROC_FOLLOW_H
#define USER_PROC_FOLLOW_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Whether the program at path (a resolved executable) is one that only
 * starts others: a shell (sh, bash, dash, zsh, ksh, mksh, ash, yash,
 * posh, busybox), env, or a wrapper that execs its command (nice, nohup,
 * stdbuf, taskset, ionice, chrt, numactl, setarch). Pure; any thread. */
bool follow__passes_through(const char *path);

/*
 * pid: a child of the calling thread, stopped by SIGSTOP before its
 * exec (target__spawn's hold). Lets it run until it execs a program that
 * does not pass through (follow__passes_through) and leaves it stopped
 * there, detached, with that program's path in exe (len bytes) and the
 * number of execs it made in *nexec. stop (or NULL): cabbpf's stop flag
 * (the signal that set it); once set, the child gets that signal (SIGKILL
 * 2 s later if it still runs) and is reaped. Returns 0; -ECHILD if it
 * ended first, -EINTR if stop ended it (its wait status in *status: the
 * child is reaped), or -errno
 * (ptrace refused, for instance; the child is then left running under no
 * tracer or killed: the caller aborts it). Thread: the one that forked
 * pid (the waits are its).
 */
int follow__exec(pid_t pid, bool first, volatile sig_atomic_t *stop, char *exe, size_t len,
		 unsigned *nexec, int *status);

#endif
