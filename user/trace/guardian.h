/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/trace/guardian — the guard's safety outlives cabbpf.
 *
 * While the guard (user/trace/guard.h) holds a target, the target's stacks
 * hold the kernel's uretprobe trampoline in the return-address slots of
 * pending traced calls, and the guard's BPF program stops a thread that
 * throws with SIGSTOP for cabbpf's tracer thread to write them back. A
 * SIGKILL of cabbpf (an operator's kill -9, the OOM killer, a crash of
 * ours) ends the tracer with them: the kernel lets go of the threads, a
 * SIGSTOP of ours still to take stops the whole process, and once someone
 * continues it the unwinder meets the trampoline and calls std::terminate.
 *
 * The guardian is a small process of its own (double fork, its own
 * session, SIGINT and SIGTERM ignored, no file of cabbpf's but what it is
 * given) that outlives cabbpf. cabbpf hands it, over a socket, copies of
 * the guard's kernel objects: the program that reads the kernel's list of
 * pending return instances, the maps of requests, and the guard's probe
 * links, which it keeps so that a throw after cabbpf's death still stops
 * (and waits for it) instead of unwinding through a trampoline. A clean
 * end of cabbpf says so (guardian__done) and the guardian closes them and
 * exits. An end without it (the socket's other end closed by the kernel)
 * makes it wait until cabbpf's process is gone (its probes gone with it,
 * so no new trampoline appears), then a process of its own becomes the
 * target's tracer, stops the threads that hold a trampoline, writes every
 * original return address back, lets go (guard__rescue), and the guardian
 * continues the target (SIGCONT) if a stop of ours was left in it.
 *
 * Threads: guardian__start before any other thread of cabbpf exists (it
 * forks); guardian__give and guardian__done from the thread that owns the
 * guard (the loader's main thread); guardian__serving from the tracer
 * thread. All accept NULL.
 */
#ifndef USER_TRACE_GUARDIAN_H
#define USER_TRACE_GUARDIAN_H

#include <stddef.h>
#include <sys/types.h>

struct guardian;

/* What the guardian needs to let go of the target: bpf/guard.bpf.c's
 * dump_pending program, its guard_reqs and guarded maps, bpf/trace.bpf.c's
 * throttled map (--lossless; -1: none), and the guard's links. */
struct guardian_fds {
	int iter, reqs, guarded, throttled;
	const int *links;
	size_t nlinks;
};

/*
 * Starts the guardian of target pid. Returns 0 and *out (owned by the
 * caller, ended by guardian__done), or -errno (logged: the target is then
 * guarded while cabbpf lives only).
 */
int guardian__start(pid_t pid, struct guardian **out);

/*
 * Hands the guardian copies of f's descriptors (it keeps them until it
 * ends), replacing any given before. Returns 0 or -errno (logged at -v:
 * the guardian then has the previous set, or none).
 */
int guardian__give(struct guardian *gd, const struct guardian_fds *f);

/* The tracer thread is handling a stop of ours of thread tid (0: done
 * with it): a death of cabbpf meanwhile leaves that stop to continue. */
void guardian__serving(struct guardian *gd, pid_t tid);

/*
 * cabbpf let go of the target cleanly: the guardian closes its copies
 * (waited for, up to 2 s, so that cabbpf's own closes release the kernel
 * objects) and exits without acting. Frees gd.
 */
void guardian__done(struct guardian *gd);

#endif /* USER_TRACE_GUARDIAN_H */
