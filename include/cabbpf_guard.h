/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The target guard (bpf/guard.bpf.c, user/trace/guard.c): what the BPF program at
 * an unwinder or stack-switch entry point hands the ptrace tracer in user
 * space. Fixed-width fields: shared by clang -target bpf and gcc.
 *
 * A uretprobe replaces a function's return address on the user stack with
 * the kernel's trampoline. Code that reads return addresses (the C++/Rust
 * unwinder) or leaves the stack behind (swapcontext) must see the original
 * addresses, so at those points the program lists the thread's pending
 * return probes whose slots need a write, and stops the thread with a
 * signal; the tracer writes the slots and resumes it (docs/guard.md).
 */
#ifndef CABBPF_GUARD_H
#define CABBPF_GUARD_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* MAX_URETPROBE_DEPTH (kernel/events/uprobes.c): a thread never has more
 * pending return instances than this. */
#define CABBPF_GUARD_MAX 64

/* Threads that may wait for the guard's tracer at once (a request lives
 * from the guard site until the tracer has handled it, ~1 ms): 4,096
 * preallocated requests of ~1 KiB. With 65,536 the map took 68 MiB of
 * kernel memory and ~100 ms of cabbpf's start-up to create. A request
 * that finds the map full is counted as a failed stop (reported). */
#define CABBPF_GUARD_REQS 4096

/* The values of the guarded map (bpf/trace.bpf.c, bpf/guard.bpf.c): a
 * thread the tracer holds (it may be stopped with SIGSTOP), and one it has
 * let go of, every return address given back: nothing to ask for any more
 * (a SIGSTOP to it would stop the whole process once the tracer is gone),
 * and nothing to count as unguarded. */
enum cabbpf_guarded {
	CABBPF_GUARDED_HELD = 1,
	CABBPF_GUARDED_LET_GO = 2,
};

/* The values of the stop_at_exit map (bpf/guard.bpf.c): a thread the
 * tracer lets go of while it is blocked in a system call (armed), and one
 * whose SIGSTOP at that call's exit could not be sent (left unstopped). */
enum cabbpf_exit_stop {
	CABBPF_EXIT_STOP_ARMED = 1,
	CABBPF_EXIT_STOP_NOT_SENT = 2,
};

/* What a guard site is (the attach cookie; the fid of its event). */
enum cabbpf_guard_site {
	/* _Unwind_RaiseException, _Unwind_Resume, _Unwind_Resume_or_Rethrow:
	 * the unwinder is about to walk the stack; put back the original
	 * return addresses of every pending frame. */
	CABBPF_GS_THROW = 0,
	/* _Unwind_ForcedUnwind (pthread_cancel, pthread_exit): the same. */
	CABBPF_GS_FORCED = 1,
	/* _Unwind_Backtrace (backtrace(3), std::stacktrace): the same, so the
	 * program's own backtraces stay whole. */
	CABBPF_GS_BACKTRACE = 2,
	/* swapcontext, setcontext, boost.context's jump_fcontext/ontop_fcontext:
	 * the thread leaves this stack; its pending frames' returns become
	 * unobservable (the kernel keeps one list per thread, not per stack). */
	CABBPF_GS_SWITCH = 3,
	/* __cxa_begin_catch, _Unwind_DeleteException, Rust's panic cleanup: an
	 * exception was caught; frames above the catcher survive and get their
	 * return probes back (re-armed). */
	CABBPF_GS_CATCH = 4,
	CABBPF_GS__MAX = 5,
	/* Not a site: the event that follows a SWITCH event when the
	 * destination is known, its sp the stack pointer the thread resumes
	 * with (ucontext's saved rsp). */
	CABBPF_GS_SWITCH_TO = 5,
	/* Not an attached site: a signal handler about to run on its
	 * sigaltstack while frames below the alternate stack's top have
	 * return probes (bpf/guard.bpf.c, guard_altstack). At the handler's
	 * first traced call the kernel would take their return instances for
	 * dead (their slots lie below its sp) and drop them; each later
	 * return through the trampoline then killed the program (SIGILL) or
	 * returned into the next live frame's caller. Restore those slots,
	 * never re-arm them; the event's sp is the alternate stack's top. */
	CABBPF_GS_ALTSTACK = 6,
	/* Not a site: follows ALTSTACK, its sp the alternate stack's lowest
	 * address (the handler's frames lie between the two). */
	CABBPF_GS_ALTSTACK_BASE = 7,
	/* longjmp, siglongjmp and glibc's other names for them: the thread
	 * is about to leave every frame between here and the setjmp caller
	 * without returning. Nothing to restore (the kernel drops return
	 * instances below the new sp by itself, docs/guard.md): the event
	 * only tells the analyzers that the frames they find dead next were
	 * unwound, not lost (pipeline/shadow.h, JUMP). After ALTSTACK_BASE so
	 * that recordings keep their numbers. */
	CABBPF_GS_JUMP = 8,
};

/*
 * The attach cookie and the GUARD event's fid: the site in the low byte, and
 * for switch sites which switcher it is in the next (where to read the
 * destination, and which sp the left context resumes with).
 */
#define CABBPF_GUARD_SITE(c) ((c)&0xff)
#define CABBPF_GUARD_FLAVOUR(c) (((c) >> 8) & 0xff)
/* The cookie only: bytes rsp moved between the function's entry and its
 * probe, when the probe was placed past pushes (user/probe/plan.h), so that the
 * program still sees the entry's sp. */
#define CABBPF_GUARD_SPDELTA(c) (((c) >> 16) & 0xffff)
enum cabbpf_guard_flavour {
	CABBPF_GF_NONE = 0,
	/* swapcontext(oucp, ucp): saves sp + 8 in oucp, resumes ucp's rsp */
	CABBPF_GF_SWAPCONTEXT = 1,
	/* setcontext(ucp): resumes ucp's rsp, saves nothing */
	CABBPF_GF_SETCONTEXT = 2,
};
/* offsetof(ucontext_t, uc_mcontext.gregs[REG_RSP]), glibc x86-64 */
#define CABBPF_UCONTEXT_RSP 160

enum cabbpf_guard_op {
	CABBPF_GUARD_RESTORE = 1, /* write orig[i] into slot[i] */
	CABBPF_GUARD_REARM = 2,	  /* write the trampoline into slot[i] (holds orig[i]) */
};

/* One request, per thread id in the "guard_reqs" map, consumed by the
 * tracer while the thread is stopped. */
struct cabbpf_guard_req {
	__u32 op;   /* enum cabbpf_guard_op */
	__u32 site; /* enum cabbpf_guard_site */
	__u32 n;    /* entries in slot[] / orig[] */
	__u32 pad;
	__u64 sp;		      /* the thread's sp at the site */
	__u64 slot[CABBPF_GUARD_MAX]; /* return-address slot (ri->stack) */
	__u64 orig[CABBPF_GUARD_MAX]; /* original return address (ri->orig_ret_vaddr) */
};

/* Per-CPU counters of the guard ("guard_stats"). */
enum cabbpf_guard_stat {
	CABBPF_GST_SITES = 0,	  /* guard sites hit by the target */
	CABBPF_GST_STOPS = 1,	  /* threads stopped for the tracer */
	CABBPF_GST_UNGUARDED = 2, /* work needed on a thread the tracer does not hold */
	CABBPF_GST_SIGFAIL = 3,	  /* bpf_send_signal_thread failed */
	CABBPF_GST__MAX = 4,
};

#endif /* CABBPF_GUARD_H */
