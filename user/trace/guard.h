/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/guard — keeps return probes from harming the target.
 *
 * A uretprobe is a write into the target's stack: until the function
 * returns, its return-address slot holds the kernel's trampoline. The C++
 * and Rust unwinders read those slots (and call std::terminate on an
 * address without unwind info), and a stack switch (swapcontext) leaves
 * them where the kernel's per-thread list cannot follow. The guard puts
 * the original addresses back exactly where and when it matters:
 *
 *   1. guard__open finds the guard sites: the unwinder's entry points
 *      (_Unwind_RaiseException, _Unwind_Resume, ...), the stack switchers
 *      (swapcontext, setcontext, jump_fcontext, and any function whose
 *      code switches stacks: insn__switches_stack) and the catch points
 *      (__cxa_begin_catch, _Unwind_DeleteException, Rust's panic cleanup)
 *      in the executable and in the libraries that provide them;
 *   2. guard__seize makes cabbpf the target's ptrace tracer (PTRACE_SEIZE:
 *      no stop, invisible to the target's parent) in a thread of its own,
 *      which from then on waits for the target (see guard__reaped), or in
 *      a process of its own that outlives cabbpf (guard__guardian);
 *   3. guard__attach loads bpf/guard.bpf.c into the trace object's rings
 *      and puts a uprobe on every site. There the BPF program lists the
 *      slots that need a write and stops the thread with SIGSTOP; the
 *      tracer writes them while the thread is stopped and resumes it with
 *      the signal suppressed (docs/guard.md says why this is safe);
 *   4. guard__stop, after the trace probes are gone, stops the threads
 *      that hold a return address still replaced (not inside a call a stop
 *      would end with EINTR: at its exit), writes them back, and detaches.
 *
 * Threads: every function here is for the loader's main thread, except
 * guard__reaped (any thread); the tracer thread is private.
 */
#ifndef USER_GUARD_H
#define USER_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cabbpf_guard.h"

struct guard;
struct symtab;
struct sym;

/* What the guard did, for the report. */
struct guard_stats {
	uint64_t sites_hit; /* guard sites the target reached */
	uint64_t stops;	    /* threads stopped for a write */
	uint64_t restored;  /* return addresses put back */
	uint64_t rearmed;   /* return probes given back after a catch */
	uint64_t unguarded; /* writes needed on a thread the tracer did not hold */
	uint64_t failed;    /* stops that could not be requested or served */
	uint64_t at_detach; /* return addresses put back when cabbpf let go */
	uint32_t nsites;    /* uprobes placed on guard sites */
	/* --lossless: threads held at the rings' high-water mark, how long
	 * they waited (thread time, summed; from the BPF program's request
	 * to the resume) and the longest wait */
	uint64_t held;
	uint64_t held_ns;
	uint64_t held_max_ns;
	/* letting go: threads blocked in a system call whose return
	 * addresses were written back without a stop (their call goes on as
	 * untraced) / threads that had to be stopped in a call a stop ends
	 * with EINTR (should be 0) */
	uint64_t detach_in_place;
	uint64_t detach_cut_short;
	uint64_t detach_left; /* threads that did not stop in 2 s: not given back */
	/* CPU time (user + system) of a tracer process (guard__guardian),
	 * which is cabbpf's own but not in its getrusage: 0 for a thread */
	uint64_t tracer_cpu_ns;
};

/*
 * Finds the guard sites of process pid, whose executable is exe (for a
 * launched command held before exec: the file it will run), in exe and in
 * the libraries libgcc_s, libstdc++, libc, libunwind, libc++abi and
 * libboost_context as the target's loader would find them (user/proc/libs.h).
 * spawned: cabbpf is the process's parent. Returns 0 and *out (free with
 * guard__free), -ENOENT when no site exists anywhere (nothing can read or
 * move return addresses: no guard needed), or -ENOMEM.
 */
int guard__open(pid_t pid, const char *exe, bool spawned, struct guard **out);

/*
 * Adds the sites of one more file the trace probes (a library selected
 * with -f LIB:GLOB): its stack switchers, found by their code
 * (insn__switches_stack), and any named site. A file already looked at
 * adds nothing. Call before guard__attach. Returns 0, -EINVAL (NULL
 * argument) or -ENOMEM. Main thread.
 */
int guard__add_file(struct guard *g, const char *path);

/*
 * Also hold every process the target forks at birth, to put back the
 * return addresses its stack inherits (fork copies the forking thread's
 * pending return instances): an exception in the child unwinding through
 * them would otherwise meet the trampoline; and takes out the
 * breakpoints of process-filtered links (user/probe/probe_sites.h) it inherited.
 * The child is let go then: with one target (ftrace) it runs untraced;
 * whole-container tracing finds it as a process of the cgroup (its calls
 * reach the file-wide probes, unarmed until its own guard holds it).
 * Costs two ptrace stops per fork. Call before guard__seize. NULL is
 * fine. Main thread.
 */
void guard__forks(struct guard *g);

/*
 * Trace from a process of its own (user/trace/guardian.h) instead of a
 * thread of cabbpf's: should cabbpf die while the guard holds the target
 * (SIGKILL, OOM, a crash), the tracer goes on serving the target's stops,
 * then writes the original return addresses back and lets go in its place
 * once cabbpf's probes are gone. Only for a caller that has no other
 * thread yet at guard__seize (it forks). Call before guard__seize. NULL is
 * fine. Main thread.
 */
void guard__guardian(struct guard *g);

/*
 * A guard with no site: only the tracer, for --lossless when the target
 * needs no guard (nothing reads return addresses, --entry-only,
 * --no-guard). Returns 0 and *out, or -ENOMEM.
 */
int guard__open_tracer(pid_t pid, bool spawned, struct guard **out);

/*
 * Starts the tracer (a thread, or a process: guard__guardian) and seizes
 * every thread of the process (and, through PTRACE_O_TRACECLONE, every
 * thread it creates). Returns 0, or -EBUSY (another tracer, e.g. gdb or
 * strace, holds it), -EPERM (not allowed: Yama ptrace_scope 3, or a
 * lockdown), after logging why, or -ESRCH (the process ended: not logged,
 * the caller says what it means). From success on, a tracer thread owns
 * waiting for the process: use guard__reaped, never waitpid (a tracer
 * process is no child of cabbpf's: guard__reaped says -1, wait as usual).
 */
int guard__seize(struct guard *g);

/*
 * Loads the guard's BPF program with the trace object's rings (map fds of
 * "slots", "heads", "tstates", "tstab", "stats"; ring_bytes as given to trace) and
 * attaches it to every site. Call again if the trace object was reloaded
 * (new map fds): the old program is replaced. Returns 0 or -errno (logged).
 */
struct guard_maps {
	int slots_fd, heads_fd, tstates_fd, tstab_fd, stats_fd;
	uint32_t tstab_mask; /* trace__tstab_mask */
	size_t ring_bytes;
	bool no_times;
	/* the kernel has no multi-uprobe links (user/kernel/features.h): one
	 * perf link per site from the start */
	bool no_multi_links;
	/* bpf/trace.bpf.c's "guarded" (the threads the tracer holds: reused
	 * as the guard's own) and, with --lossless, "throttled" (threads
	 * asked to stop at the rings' high-water mark); -1: none */
	int guarded_fd, throttled_fd;
};
int guard__attach(struct guard *g, const struct guard_maps *m);

/*
 * Whether the process has exited, for user/proc/target.c while the tracer
 * thread is its ptrace parent. Returns 1 with *status (a wait status) once
 * the tracer reaped it, 0 while it runs, -1 when the guard no longer waits
 * for it (not seized, or detached): then the caller waits itself. Any
 * thread; g may be NULL (-1).
 */
int guard__reaped(struct guard *g, int *status);

/*
 * --lossless: the loader finished a drain round, after which every ring
 * is below its low-water mark (below) or not. Threads held at the high-
 * water mark before this round are resumed once a round ends below it.
 * The loader's main thread, after each drain; g may be NULL.
 */
void guard__drained(struct guard *g, bool below);

/*
 * Lets go of the target: writes back the return addresses still replaced
 * by a trampoline (call after the trace's probes are detached, so no new
 * one appears), stopping the threads that hold one, except those blocked
 * in a system call (written back in place: their call goes on), then
 * detaches and joins the tracer thread. Fills *st if not NULL. Safe to
 * call twice; g may be NULL. (Test hook, armed only by the environment:
 * CABBPF_TEST_LET_GO_PAUSE=FILE, see user/trace/guard_letgo.c.)
 */
void guard__stop(struct guard *g, struct guard_stats *st);

/* Asks g's tracer to let go (guard__stop's first step) without waiting for
 * it: whole-cgroup mode asks every guard at once, so that they let go side
 * by side. g may be NULL. Main thread. */
void guard__let_go(struct guard *g);

/* Open or close the gate of the guard's events (closed after
 * guard__attach; see trace__gate): the run's start and stop instants, not
 * sampling windows. NULL is fine. The loader's main thread. */
void guard__gate(struct guard *g, bool open);

/*
 * True for a function that must never get a return probe: the unwinder's
 * entry points and the guard sites (the unwinder reads their own return
 * address before the guard could restore it), libgcc's uw_init_context*
 * and LLVM libunwind's unw_getcontext/unw_init_local (they capture their
 * caller's return address), and the stack switchers. linkage_name is the
 * symbol's (mangled) name. Any thread.
 */
bool guard__unsafe_name(const char *linkage_name);

/* guard__unsafe_name, and the functions no call enters, whose return
 * address is not where a return probe would put its trampoline: a
 * program's entry point (syms__holds_entry: [rsp] is argc there), the
 * signal restorer (__restore_rt: [rsp] is the signal frame) and ld.so's
 * lazy-binding resolvers (_dl_runtime_resolve*, _dl_runtime_profile*:
 * [rsp] is the relocation index the PLT pushed); and those that keep
 * their return address to jump back to later (setjmp, sigsetjmp,
 * getcontext and their glibc names); and those that read their return
 * address to learn their caller (dlopen, dlmopen, dlsym, dlvsym,
 * __libc_dlopen_mode: the trampoline is in no object; __morestack); and
 * any function whose code switches stacks (insn__switches_stack: read
 * from st's file), but longjmp, which stays on its stack. s is a
 * function of st. Any thread. */
bool guard__unsafe(const struct symtab *st, const struct sym *s);

/* The functions guard__unsafe left out, for one warning line. */
struct guard_dropped {
	size_t n;
	char names[256]; /* the first four, comma-separated */
};

/* Note function name as left out. Any thread (d is the caller's). */
void guard__dropped_add(struct guard_dropped *d, const char *name);

/* If any was left out: the warning naming them on stderr, after what
 * ("PATH: ", or ""). Any thread. */
void guard__dropped_say(const struct guard_dropped *d, const char *what);

/* Number of guard sites found (0 before guard__open). */
size_t guard__nsites(const struct guard *g);

/* Detaches the probes and frees; stops first if needed. NULL is fine.
 * Main thread; once guard__stop returned, any one thread (it then only
 * closes the guard's kernel objects and frees its memory: the kernel's
 * grace periods make that slow, user/trace/whole_proc.c frees stopped
 * guards on a thread of its own). */
void guard__free(struct guard *g);

#endif /* USER_GUARD_H */
