/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A watcher that outlives cabbpf, for --lossless. While cabbpf holds the
 * target's threads in ptrace signal-delivery-stops (SIGSTOP sent by the BPF
 * program at the rings' high-water mark, user/trace/guard.h), a SIGKILL of
 * cabbpf detaches them with that SIGSTOP still to be delivered: the kernel
 * then stops the whole target (a group-stop), and nobody would continue
 * it. The watcher is a separate process (double fork, its own session, no
 * file of cabbpf's kept open: no probe outlives cabbpf through it) that
 * waits on a pipe only cabbpf writes: a clean end of cabbpf sends one byte
 * and it exits; an end without it (cabbpf killed) makes it watch the
 * target and send SIGCONT whenever a thread of it is stopped: for 2 s at
 * least, and until every thread that could still carry the SIGSTOP has
 * run past it (a loaded machine, or a throttled cgroup, may put off a
 * woken thread for longer than any fixed time: watchdog.c). A target that
 * someone stops on purpose meanwhile is continued too; one a debugger
 * attaches to meanwhile keeps the watch going until it lets go or exits.
 * Main thread; before any other thread exists (it forks).
 */
#ifndef USER_TRACE_WATCHDOG_H
#define USER_TRACE_WATCHDOG_H

#include <stddef.h>
#include <sys/types.h>

/* Start the watcher of target pid. Returns the pipe's write end (>= 0;
 * close-on-exec), to hand to watchdog__done, or -errno (logged). */
int watchdog__start(pid_t pid);

/* cabbpf let go of the target cleanly: the watcher exits without acting.
 * fd < 0 is fine. */
void watchdog__done(int fd);

/* The watch itself, in a process that outlives cabbpf (the watcher, or
 * the guard's guardian, user/trace/guardian.h): continues pid whenever a
 * thread of it is stopped, until every thread has run past any SIGSTOP of
 * ours it could still take (above). Returns when pid is gone or settled. */
void watchdog__watch(pid_t pid);

/*
 * Fork a process that outlives cabbpf unharmed and unnoticed: not
 * cabbpf's child (the middle process exits at once and is reaped here:
 * the guard's tracer thread reaps cabbpf's children, and cabbpf waits for
 * no stranger), in a session of its own (a signal to cabbpf's process
 * group does not reach it), SIGINT, SIGTERM, SIGHUP and SIGPIPE ignored,
 * stdin, stdout and stderr on /dev/null (a reader of cabbpf's output sees
 * its end when cabbpf ends; stderr stays when keep lists 2: a reader then
 * sees its end when this process ends too) and no other file of cabbpf's
 * open but the
 * nkeep descriptors of keep (at any number: one per site links can put
 * them past 1024). Returns 0 in that process, a positive pid in the
 * caller, or -errno (fork failed). The caller's thread must be the only
 * one, or the new process must only make async-signal-safe calls.
 */
pid_t watchdog__fork_apart(const int *keep, size_t nkeep);

#endif /* USER_TRACE_WATCHDOG_H */
