// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The target guard: one uprobe program on the entry points of the unwinder
 * and of the stack switchers (user/trace/guard_sites.c finds them; the attach cookie is
 * the enum cabbpf_guard_site). A uretprobe is a write into the target's
 * stack: its return-address slot holds the kernel's trampoline until the
 * function returns. The C++/Rust unwinder reads those slots (and calls
 * std::terminate on the trampoline, which has no unwind info), and a stack
 * switch leaves them on a stack the kernel's per-thread list cannot follow.
 *
 * BPF cannot write user memory here (lockdown refuses
 * bpf_probe_write_user), so this program only decides: it walks the
 * thread's pending return instances (task->utask->return_instances, read
 * through BTF), keeps the slots that need a write, hands them to the tracer
 * in guard_reqs[tid] and stops the thread with SIGSTOP, which the ptrace
 * tracer (user/trace/guard_tracer.c) sees as a signal-delivery-stop before the thread
 * runs another instruction of the unwinder; it writes the slots and
 * resumes the thread with the signal suppressed. Nothing is sent when no
 * slot needs a write, so a throw through untraced frames costs one probe.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cabbpf_event.h"
#include "cabbpf_guard.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define SIGSTOP 19 /* cannot be blocked: a thread that masks every signal still stops */

const volatile __u32 target_tgid = 0;
const volatile __u32 want_time = 1;
/* 0: no event into the rings (no trace object to share them with). */
const volatile __u32 want_events = 1;

/* The run's gate (bpf/trace.bpf.c's epoch, without the windows): 0 while
 * the trace has not started or has stopped. Written through the skeleton's
 * mmap (guard__gate). Only the events are gated: the guard's own work (the
 * return addresses it puts back) goes on whatever it says. */
volatile __u32 events_gate = 0;

/* Maps shared with bpf/trace.bpf.c (bpf_map__reuse_fd), including bump(). */
#include "pipeline.bpf.h"

/* Threads the tracer holds (PTRACE_SEIZE): only those may be stopped; a
 * SIGSTOP to any other thread would stop the whole process. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} guarded SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CABBPF_GUARD_REQS);
	__type(key, __u32);
	__type(value, struct cabbpf_guard_req);
} guard_reqs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cabbpf_guard_req);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CABBPF_GST__MAX);
	__type(key, __u32);
	__type(value, __u64);
} guard_stats SEC(".maps");

static __always_inline void gbump(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&guard_stats, &idx);

	if (v)
		*v += 1;
}

/* The site's event, in the thread's program order with its calls. */
static __always_inline void emit(__u32 tid, __u32 tgid, __u32 site, __u64 sp)
{
	struct cabbpf_event *e;
	struct tstate *st;

	if (!events_gate)
		return;
	e = pipeline_begin(sizeof(*e), &st, CABBPF_STAT_GUARD_DROPS);
	if (e) {
		e->tid = pipeline_tid(st, tid);
		e->pid = tgid;
		e->kind = CABBPF_EV_GUARD;
		e->fid = site;
		e->seq = st->seq++;
		e->ts = want_time ? bpf_ktime_get_ns() : 0;
		e->sp = sp;
		e->epoch = 0; /* slots are reused: every field is written */
		pipeline_submit(e, st);
	}
	pipeline_end(st);
}

/* The walk over the pending return instances, one bpf_loop step each:
 * verified once, not once per iteration and branch. */
struct walk {
	struct return_instance *ri;
	struct cabbpf_guard_req *r;
	__u64 sp;
	__u32 site;
	__u32 n;
};

static long walk_step(__u32 i, void *arg)
{
	struct walk *w = arg;
	struct return_instance *ri = w->ri;
	__u64 slot, orig, cur = 0;

	if (!ri)
		return 1;
	slot = BPF_CORE_READ(ri, stack);
	orig = BPF_CORE_READ(ri, orig_ret_vaddr);
	w->ri = BPF_CORE_READ(ri, next);
	/* A slot that cannot be read is listed for a restore: the tracer
	 * reads it again and writes only over the trampoline. */
	if (bpf_probe_read_user(&cur, sizeof(cur), (void *)slot))
		cur = ~orig;
	/* Frames above an alternate stack stay alive for the kernel. */
	if (w->site == CABBPF_GS_ALTSTACK && slot >= w->sp)
		return 0;
	if (w->site == CABBPF_GS_CATCH) {
		/* Frames above the catch survive; a slot holding its original
		 * address was restored and may get its return probe back (the
		 * tracer knows which). */
		if (slot <= w->sp || cur != orig)
			return 0;
	} else if (cur == orig) {
		return 0; /* restored already */
	}
	w->r->slot[w->n & (CABBPF_GUARD_MAX - 1)] = slot;
	w->r->orig[w->n & (CABBPF_GUARD_MAX - 1)] = orig;
	w->n++;
	return w->n >= CABBPF_GUARD_MAX;
}

/* Hand the slots the walk w listed to the tracer (guard_reqs[tid], op)
 * and stop thread tid with SIGSTOP, if the tracer holds it. */
static __always_inline void request(__u32 tid, struct walk *w, __u32 op)
{
	struct cabbpf_guard_req *r = w->r;
	__u32 *held = bpf_map_lookup_elem(&guarded, &tid);

	if (!held) {
		gbump(CABBPF_GST_UNGUARDED);
		return;
	}
	/* Let go, its return addresses given back: a catch's re-arm is all
	 * that can still be asked for, and it is not wanted. */
	if (*held != CABBPF_GUARDED_HELD)
		return;
	r->op = op;
	r->site = w->site;
	r->n = w->n;
	r->sp = w->sp;
	if (bpf_map_update_elem(&guard_reqs, &tid, r, BPF_ANY) || bpf_send_signal_thread(SIGSTOP)) {
		gbump(CABBPF_GST_SIGFAIL);
		return;
	}
	gbump(CABBPF_GST_STOPS);
}

SEC("uprobe")
int BPF_KPROBE(guard_site)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = task->tgid, tid = task->pid, zero = 0;
	__u32 cookie = (__u32)bpf_get_attach_cookie(ctx);
	__u32 fl = CABBPF_GUARD_FLAVOUR(cookie);
	struct walk w = {
		.site = CABBPF_GUARD_SITE(cookie),
		.sp = PT_REGS_SP(ctx) + CABBPF_GUARD_SPDELTA(cookie),
	};
	struct cabbpf_guard_req *r;

	if (target_tgid && tgid != target_tgid)
		return 0;
	gbump(CABBPF_GST_SITES);
	if (want_events) {
		emit(tid, tgid, cookie & 0xffff, w.sp);
		/* Where a ucontext switch goes: the analyzers resume the
		 * shadow stack they parked under that sp (the left one is
		 * parked under the sp swapcontext saves). */
		if (fl == CABBPF_GF_SWAPCONTEXT || fl == CABBPF_GF_SETCONTEXT) {
			/* Both read, then chosen: the verifier refuses a
			 * context pointer with a computed offset. */
			__u64 a1 = PT_REGS_PARM1(ctx), a2 = PT_REGS_PARM2(ctx);
			__u64 ucp;

			asm volatile("" : "+r"(a1), "+r"(a2));
			ucp = fl == CABBPF_GF_SWAPCONTEXT ? a2 : a1;
			__u64 dest = 0;

			if (!bpf_probe_read_user(&dest, sizeof(dest),
						 (void *)(ucp + CABBPF_UCONTEXT_RSP)))
				emit(tid, tgid, CABBPF_GS_SWITCH_TO, dest);
		}
	}
	if (w.site == CABBPF_GS_JUMP)
		return 0; /* an event only: the kernel copes with longjmp */
	r = bpf_map_lookup_elem(&scratch, &zero);
	if (!r)
		return 0;
	w.r = r;
	w.ri = BPF_CORE_READ(task, utask, return_instances);
	if (!w.ri)
		return 0;
	bpf_loop(CABBPF_GUARD_MAX, walk_step, &w, 0);
	if (!w.n)
		return 0;
	request(tid, &w, w.site == CABBPF_GS_CATCH ? CABBPF_GUARD_REARM : CABBPF_GUARD_RESTORE);
	return 0;
}

#define SA_ONSTACK 0x08000000
#define SIG_IGN_HANDLER 1 /* SIG_DFL is 0 */

/*
 * A signal about to be delivered to a handler (the tracepoint runs in
 * get_signal after the ptrace tracer saw the signal, before the kernel
 * builds the handler's frame). A handler flagged SA_ONSTACK runs on the
 * thread's alternate stack unless it is on it already; a pending return
 * instance whose slot lies below that stack's top is, for the kernel, a
 * frame that returned (arch_uretprobe_is_alive: its slot is not above the
 * sp), and the handler's first call of a return-probed function drops it
 * (cleanup_return_instances). The frame's own return then finds the
 * trampoline and no instance: SIGILL, or the next instance's address (the
 * program returned from main with its status). Found with an alternate
 * stack in main's frame (tests/targets/altstack.c). So those slots are
 * restored as for a switch, before the handler's first instruction: the
 * SIGSTOP sent here is taken right after the frame is built. The kernel's
 * own comment on this case: "TODO: sigaltstack()".
 */
SEC("tp_btf/signal_deliver")
int BPF_PROG(guard_altstack, int sig, struct kernel_siginfo *info, struct k_sigaction *ka)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = task->tgid, tid = task->pid, zero = 0;
	__u64 ss_sp = task->sas_ss_sp, ss_size = task->sas_ss_size, handler, sp;
	struct cabbpf_guard_req *r;
	struct walk w = {.site = CABBPF_GS_ALTSTACK};

	if ((target_tgid && tgid != target_tgid) || !ss_size)
		return 0;
	handler = (__u64)BPF_CORE_READ(ka, sa.sa_handler);
	if (handler <= SIG_IGN_HANDLER || !(BPF_CORE_READ(ka, sa.sa_flags) & SA_ONSTACK))
		return 0;
	sp = BPF_CORE_READ((struct pt_regs *)bpf_task_pt_regs(task), sp);
	if (sp - ss_sp < ss_size) /* on the alternate stack already: nested */
		return 0;
	w.sp = ss_sp + ss_size;
	w.ri = BPF_CORE_READ(task, utask, return_instances);
	r = bpf_map_lookup_elem(&scratch, &zero);
	if (!w.ri || !r)
		return 0;
	w.r = r;
	bpf_loop(CABBPF_GUARD_MAX, walk_step, &w, 0);
	if (!w.n)
		return 0;
	gbump(CABBPF_GST_SITES);
	if (want_events) {
		emit(tid, tgid, CABBPF_GS_ALTSTACK, w.sp);
		emit(tid, tgid, CABBPF_GS_ALTSTACK_BASE, ss_sp);
	}
	request(tid, &w, CABBPF_GUARD_RESTORE);
	return 0;
}

/* Whose instances dump_pending lists: 0, the target's; else a process
 * the target forked (user/trace/guard_forks.c). Written by the
 * tracer thread only, through the skeleton's mmap. */
volatile __u32 dump_tgid = 0;

/*
 * Letting go of a thread blocked in a system call (user/trace/guard_letgo.c,
 * arm_in_place): the tracer puts its tid here (CABBPF_EXIT_STOP_ARMED),
 * sees that the thread is in a call, writes its return addresses back and
 * deletes the entry. Should the thread leave its call meanwhile, this
 * program takes the entry and stops the thread with SIGSTOP, which is taken
 * on the way back to user mode, before any of its code runs: the writes
 * are safe either way. Whoever deletes the entry first decides. If the
 * signal cannot be sent, the entry comes back as CABBPF_EXIT_STOP_NOT_SENT
 * (the tracer then stops the thread itself). Attached only while the
 * tracer lets go.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} stop_at_exit SEC(".maps");

SEC("tp_btf/sys_exit")
int BPF_PROG(stop_on_exit, struct pt_regs *regs, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, not_sent = CABBPF_EXIT_STOP_NOT_SENT;

	if (target_tgid && id >> 32 != target_tgid)
		return 0;
	if (bpf_map_delete_elem(&stop_at_exit, &tid))
		return 0;
	if (bpf_send_signal_thread(SIGSTOP))
		bpf_map_update_elem(&stop_at_exit, &tid, &not_sent, BPF_NOEXIST);
	return 0;
}

/*
 * Before the tracer lets go of the target (cabbpf stops while the target
 * runs on), every pending return instance of the target's threads, as
 * records of three u64 (tid, slot, orig): the tracer writes back the
 * original return addresses, so nothing cabbpf put on the stacks outlives
 * it (a later throw through main() would otherwise still die). Run by the
 * tracer with every thread of the target stopped; also, with dump_tgid,
 * for a process the target forked, held at birth.
 */
SEC("iter/task")
int dump_pending(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	__u32 want = dump_tgid ? dump_tgid : target_tgid;
	struct return_instance *ri;
	__u64 rec[3];
	int i;

	if (!task || (want && task->tgid != want))
		return 0;
	ri = BPF_CORE_READ(task, utask, return_instances);
	for (i = 0; i < CABBPF_GUARD_MAX && ri; i++) {
		rec[0] = (__u32)task->pid;
		rec[1] = BPF_CORE_READ(ri, stack);
		rec[2] = BPF_CORE_READ(ri, orig_ret_vaddr);
		bpf_seq_write(seq, rec, sizeof(rec));
		ri = BPF_CORE_READ(ri, next);
	}
	return 0;
}
