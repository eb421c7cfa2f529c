// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Function entry/return probes. One program for every entry site and one for
 * every return site; the function id travels in the BPF cookie. Each event
 * goes to the ring of the CPU the probe runs on (no cross-CPU contention), and
 * carries a per-thread sequence number kept in task storage so the analyzers
 * can restore each thread's program order after it migrates between CPUs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cabbpf_event.h"
#include "cabbpf_guard.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the loader before load (skeleton rodata). 0 = any process. */
const volatile __u32 target_tgid = 0;
/* 0 (--no-times): no clock read, the dearest step of a probe;
 * counts and call graph need no time. */
const volatile __u32 want_time = 1;

#include "pipeline.bpf.h"

/* The gate: its low half, the epoch (gate in .bss, written
 * through the skeleton's mmap), is 0 while closed. The loader opens it once every probe of the run
 * (or of a sampling window) is in, and closes it at the instant tracing
 * stops, before the first link is taken out: the probes' progressive
 * attach and detach (tens of ms to seconds, in an order that puts return
 * probes out before entry probes) emit nothing, so the report holds the
 * events of one instant to another, and a window's edges are two stores.
 * Without sampling the loader stores 1; with it, the open window's number
 * (the loader sets sampling before load), which the events carry. One load
 * and one branch on the hot path, whatever the mode.
 *
 * --budget: each probe belongs to a group (its link set,
 * in its cookie: include/cabbpf_event.h) and the gate's high half says
 * which groups are open; a group's links go in and out on their own. The
 * epoch and the open groups change in one 64-bit store, so an event is
 * never labelled with one configuration and emitted under another, and
 * of two link sets on the same site (an exact set being replaced by the
 * next) exactly one emits at any instant. Without groups_on the verifier
 * drops the group test. */
const volatile __u32 sampling = 0;
const volatile __u32 groups_on = 0;
volatile __u64 gate = 0;

/* Hits of probes whose group was closed, per group: traps the target paid
 * for no event (a link set being put in, or being taken out: under a
 * target that traps hard, taking sites out takes a while), which
 * --budget counts in what tracing costs. In .bss: the loader reads them
 * through its mapping, without a system call. */
__u64 gated[CABBPF_NGROUPS] = {0};
/* Each group's generation now (the loader sets it while the group is
 * closed, before it opens it): a probe of an older link set of the group
 * (not yet released by the kernel) stays closed. */
__u32 grp_gen[CABBPF_NGROUPS] = {0};

/* --budget: every probe hit per function (entries and returns, open or
 * closed), counted here rather than from the events the loader drains: a
 * loader starved by the machine's load would see them late, and the
 * budget's guard must know now. Mapped by the loader (mmapable array,
 * max_entries set to the function count before load). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} fhits SEC(".maps");

static __always_inline bool group_closed(__u64 g, __u64 cookie)
{
	__u32 grp = ((__u32)cookie >> CABBPF_COOKIE_GRP_SHIFT) & (CABBPF_NGROUPS - 1);
	__u32 fid = (__u32)cookie & CABBPF_COOKIE_FID;
	__u64 *n;

	if (!groups_on)
		return false;
	n = bpf_map_lookup_elem(&fhits, &fid);
	if (n)
		__sync_fetch_and_add(n, 1);
	if (((g >> 32) & (1u << grp)) && (__u32)(cookie >> CABBPF_COOKIE_GEN_SHIFT) == grp_gen[grp])
		return false;
	__sync_fetch_and_add(&gated[grp], 1);
	return true;
}

/* The traced executable as the kernel names the file an execve loads
 * (s_dev of its inode's superblock, kernel encoding, and its inode number;
 * 0 0: not known, nothing checked), and whether the target process now
 * runs another program: its last execve loaded another file (on_exec).
 * The uprobes of the libraries both programs map (-f 'libc:*') would
 * count that program's calls: while other_image is set the probes emit
 * nothing. One load and branch on the hot path, beside the gate's.
 *
 * Named by the kernel, not by stat(): on overlayfs (a container's root, a
 * live or VM image) stat() gives the layer's device and the kernel's file
 * the overlay's, so the target's own first execve looked like another
 * program's and every probe went quiet (a trace of 0 events). The loader
 * opens the traced file (exe_fd in its own process, self_tgid) and
 * exe_identity reads that open file's inode, which is what execve opens
 * too. */
const volatile __u32 self_tgid = 0;
const volatile __s32 exe_fd = -1;
volatile __u32 exe_dev = 0;
volatile __u64 exe_ino = 0;
volatile __u32 other_image = 0;

/* --cgroup: the loader sets cgroup_on before load and puts the
 * cgroup in cgfilter[0] after load. A rodata flag, not a map lookup: when
 * off the verifier drops the check altogether. */
const volatile __u32 cgroup_on = 0;

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgfilter SEC(".maps");

static __always_inline bool cgroup_excluded(void)
{
	return cgroup_on && bpf_current_task_under_cgroup(&cgfilter, 0) != 1;
}

/*
 * Whole-container tracing: one session program per
 * site (on_session: entry and return in one link, kernel >= 6.13) whose
 * entry decides, per call, whether the kernel arms the return probe: only
 * for a process the loader armed (its group leader has an "armed" entry:
 * the guard holds it, or it needs none, user/trace/guard.h), and only for
 * an entry that was written. Every other call (a process of the container
 * not yet guarded, a process outside the cgroup that runs the same file,
 * a closed gate, a full ring) gets no return probe at all: nothing is
 * written into its stack, so nothing the loader does not watch can be
 * harmed by a trampoline. Entries of unarmed processes are still counted,
 * flagged CABBPF_FID_NORET. The storage lives on the leader's task_struct:
 * a pid reused later is a new task, unarmed; execve disarms (on_exec).
 */
const volatile __u32 session = 0;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} armed SEC(".maps");

/* The session kfunc (Linux 6.10; uprobe sessions 6.13). A kernel without
 * it gets this object built with CABBPF_NO_SESSION (trace_nosession.bpf.o,
 * the same programs, maps and data: user/trace/trace.c opens its bytes
 * with this skeleton), so libbpf never looks for it: an unresolved weak
 * kfunc makes libbpf open every kernel module's BTF at each load. */
#ifndef CABBPF_NO_SESSION
extern bool bpf_session_is_return(void) __ksym __weak;
#else
static __always_inline bool bpf_session_is_return(void)
{
	return false; /* never loaded: autoload is off without session links */
}
#endif


#include "fnspec.bpf.h"

/*
 * --lossless: back-pressure across the kernel boundary. After an event is
 * written, if its CPU's ring holds more than (size - lossless_gap) events
 * (the position lossless_gap ahead could not yet be claimed), the thread is
 * stopped with SIGSTOP: the ptrace tracer (user/trace/guard_tracer.c) sees it as a
 * signal-delivery-stop and keeps it there until the loader has drained the
 * rings, then resumes it with the signal suppressed. The stop is taken on
 * the way back to user mode, right after this probe, whatever cabbpf's
 * own threads are doing (a starved loader cannot be late to it); the gap
 * is the headroom for what other threads emit before their own next event
 * stops them. Only threads the tracer holds (guarded, filled by it) are
 * stopped; a request is sent once (throttled[tid] = when), cleared by the
 * tracer when it resumes the thread. Without lossless the verifier drops
 * all of it.
 */
#define SIGSTOP 19
const volatile __u32 lossless = 0;
const volatile __u64 lossless_gap = 0;

/* Threads the ptrace tracer holds: this map is also the guard's (its
 * loader reuses it, user/trace/guard.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} guarded SEC(".maps");

/* Threads asked to stop at the mark: tid -> bpf_ktime_get_ns() then. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} throttled SEC(".maps");

static __always_inline void throttle(struct tstate *st, __u32 tid)
{
	__u64 p = st->pub - 1 + lossless_gap, now;
	__u32 *held;
	__u32 cpu = bpf_get_smp_processor_id();
	struct cabbpf_head *hd = bpf_map_lookup_elem(&heads, &cpu);

	/* Position p could still be claimed: below the mark. */
	if (!hd || p - READ_ONCE(hd->tail) <= ring_mask)
		return;
	if (bpf_map_lookup_elem(&throttled, &tid))
		return; /* asked already: the stop is on its way */
	held = bpf_map_lookup_elem(&guarded, &tid);
	if (!held || *held != CABBPF_GUARDED_HELD) {
		bump(CABBPF_STAT_UNHELD);
		return;
	}
	now = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&throttled, &tid, &now, BPF_NOEXIST))
		return;
	if (bpf_send_signal_thread(SIGSTOP)) {
		bpf_map_delete_elem(&throttled, &tid);
		bump(CABBPF_STAT_UNHELD);
		return;
	}
	bump(CABBPF_STAT_THROTTLES);
}

/* Tests only (CABBPF_TEST_DELIVER_NOTHING=1): act as a kernel whose
 * probes fire but deliver no event, so the check for a trace emptied in
 * the kernel (user/modes/ftrace.c) is tested on any kernel. */
const volatile __u32 test_deliver_nothing = 0;

/* Set by the loader when return probes are attached: an entry then
 * reads its return-address slot (include/cabbpf_event.h, CABBPF_SLOT_*),
 * which tells a tail call from a call made after a frame at the same slot
 * died without returning (longjmp, an exception, a context switch). */
const volatile __u32 slot_check = 0;

/* The slot word of an entry at return-address slot sp (CABBPF_SLOT_*), 0
 * when not known. The trampoline is the first slot of the process's xol
 * area (uprobe_get_trampoline_vaddr); before the area exists no return
 * probe was armed in the process, so no slot holds it. */
static __always_inline __u32 slot_word(struct task_struct *task, __u64 sp)
{
	struct xol_area *xa = NULL;
	__u64 v = 0, tramp = 0, t;

	if (!slot_check || !bpf_core_field_exists(xa->vaddr))
		return 0;
	if (bpf_probe_read_user(&v, sizeof(v), (void *)sp))
		return 0;
	/* Direct loads of the BTF-typed task (a few ns; a probe read is a
	 * helper call each) */
	if (task->mm) {
		xa = task->mm->uprobes_state.xol_area;
		if (xa)
			tramp = xa->vaddr;
	}
	if (v == tramp)
		return CABBPF_SLOT_KNOWN | CABBPF_SLOT_ARMED;
	t = v ^ (v >> 15) ^ (v >> 30) ^ (v >> 45);
	return CABBPF_SLOT_KNOWN | ((__u32)t & CABBPF_SLOT_TAG_MASK) << CABBPF_SLOT_TAG_SHIFT;
}

/*
 * --times sampled: a tick that falls due while a probe's trap runs with
 * interrupts off (its way out, through the hypervisor on these VMs) is
 * delivered as the trap returns, in user mode, at the instruction the
 * thread resumes at: the probed one's successor, or the return address.
 * Its time is the trap's, yet it reads as the program's first
 * instruction there. Measured on sqlite3 (2026-12-06), 70% of the
 * user-mode ticks of a traced run came 5 to 30 us after a probe's
 * program, at the address it resumes the thread at (a function's entry
 * probe's next instruction, a call's return address), the same address
 * for hundreds of ticks. So each probe hit marks where and when it
 * resumes the thread (resume_mark), and on_cpu_sample leaves out a tick
 * at that very address within RESUME_UNITS x 1,024 ns of that time
 * (CABBPF_STAT_CPU_SAMPLES_RESUME). A tick of the program's own that
 * finds it at that instruction that soon is left out with them: a loop
 * whose first instruction it is, at most. Set by the loader when the
 * sampler runs.
 */
const volatile __u32 resume_check = 0;

/* By fid: the bytes of the entry probe's instruction, where the probe
 * resumes the thread past it (0: not known, and no check). Sized and
 * filled by the loader (user/trace/trace.c fill_resume_len). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} resume_len SEC(".maps");

#define RESUME_IP_BITS 47
#define RESUME_IP_MASK ((1ull << RESUME_IP_BITS) - 1)
#define RESUME_TS_MASK ((1ull << (64 - RESUME_IP_BITS)) - 1)
#define RESUME_UNITS 128 /* ~131 us: a single-stepped probe's two traps */

/* A probe program sees the probed address (an entry's: the kernel sets
 * it back before the handlers run) or the return address (a return's). */
static __always_inline void resume_mark(struct tstate *st, struct pt_regs *ctx, __u32 kind,
					__u32 fid, __u64 now)
{
	__u64 ip = PT_REGS_IP(ctx);

	if (kind == CABBPF_EV_ENTRY) {
		__u8 *len = bpf_map_lookup_elem(&resume_len, &fid);

		if (!len || !*len) {
			st->resume = 0;
			return;
		}
		ip += *len;
	}
	st->resume = (ip & RESUME_IP_MASK) | ((now >> 10) & RESUME_TS_MASK) << RESUME_IP_BITS;
}

/* Whether a user-mode tick at ip, now, is one delivered as the thread's
 * last probe hit returned to it (see resume_check). */
static __always_inline bool resume_late_tick(const struct tstate *st, __u64 ip, __u64 now)
{
	__u64 r = st->resume;

	if (!r || ip != (r & RESUME_IP_MASK))
		return false;
	return (((now >> 10) - (r >> RESUME_IP_BITS)) & RESUME_TS_MASK) <= RESUME_UNITS;
}

/* Returns what a session entry returns (0: arm the return probe, 1: do
 * not); 0 for the other programs, which ignore it. */
static __always_inline int emit(struct pt_regs *ctx, __u32 kind)
{
	/* What bpf_get_current_pid_tgid() returns, read without its helper
	 * call (~15-25 ns per call on this host). */
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = (__u64)task->tgid << 32 | (__u32)task->pid;
	__u32 tgid = id >> 32;
	struct cabbpf_event *e;
	struct tstate *st;
	__u64 g = gate, cookie;
	__u32 win = (__u32)g, noret = 0;
	/* a session entry: returns unless armed below */
	int rc = session && kind == CABBPF_EV_ENTRY;

	if (!win)
		return rc; /* the gate is closed: no sequence number taken */
	if (target_tgid && tgid != target_tgid)
		return rc;
	cookie = bpf_get_attach_cookie(ctx);
	if (group_closed(g, cookie))
		return rc; /* this probe's group is closed (--budget) */
	if (other_image) {
		/* another program's call into a shared library */
		bump(CABBPF_STAT_HITS_OTHER_IMAGE);
		return rc;
	}
	if (test_deliver_nothing) {
		bump(CABBPF_STAT_HITS_SUPPRESSED);
		return rc;
	}
	if (cgroup_excluded())
		return rc;
	if (rc && !bpf_task_storage_get(&armed, task->group_leader, 0, 0))
		noret = CABBPF_FID_NORET;
	e = pipeline_begin_task(sizeof(*e), task, &st, CABBPF_STAT_DROPS);
	if (!e)
		goto out;
	/* --retval: the value first, in the slot just claimed, then the
	 * return event after it, so the value is there when its frame
	 * closes. */
	if (vals_on && kind == CABBPF_EV_RETURN && (cookie & CABBPF_COOKIE_SIZED)) {
		__u32 fid = (__u32)cookie & CABBPF_COOKIE_FID;
		const struct cabbpf_fnspec *sp = bpf_map_lookup_elem(&fnspecs, &fid);

		if (sp && sp->ret) {
			struct vitem it = {
				.tid = pipeline_tid(st, (__u32)id),
				.tgid = tgid,
				.fid = fid,
				.item = CABBPF_VAL_RET,
				.type = sp->ret,
				.v = PT_REGS_RC(ctx),
			};

			put_item(st, e, &it);
			e = pipeline_claim(st, CABBPF_STAT_DROPS);
			if (!e)
				goto out;
		}
	}
	e->tid = pipeline_tid(st, (__u32)id);
	e->pid = tgid;
	e->kind = kind;
	/* the flag of --size/--args/--retval and the group stripped;
	 * without rules or groups nothing to strip */
	e->fid = (sized_on || vals_on || groups_on ? (__u32)cookie & CABBPF_COOKIE_FID
						    : (__u32)cookie) |
		 noret;
	if (rc && !noret)
		rc = 0; /* written, armed: its return comes */
	/* Taken only after the claim succeeded: drops leave no gap. */
	e->seq = st->seq++;
	e->ts = want_time ? bpf_ktime_get_ns() : 0;
	if (resume_check)
		resume_mark(st, ctx, kind, (__u32)cookie & CABBPF_COOKIE_FID, e->ts);
	/* A probe moved past pushes or sub $n,%rsp (entry-only plans,
	 * user/probe/plan.h) carries in the cookie's upper half how far rsp moved,
	 * one on a call instruction -8 (signed): the event still names the
	 * return-address slot. 0 otherwise. */
	e->sp = PT_REGS_SP(ctx) +
		(groups_on ? ((__s64)(cookie << 8) >> 40) : (__s64)(__s32)(cookie >> 32));
	e->epoch = sampling ? win : 0;
	e->pad = kind == CABBPF_EV_ENTRY ? slot_word(task, e->sp) : 0;
	pipeline_submit(e, st);
	/* The designated size and the --args values, as the next events of
	 * the thread. A full ring drops them like any event
	 * (CABBPF_STAT_DROPS); the analyzer then counts the activation as
	 * unsized, or shows the value as not read. */
	if ((sized_on || vals_on) && (cookie & CABBPF_COOKIE_SIZED) && kind == CABBPF_EV_ENTRY) {
		__u32 fid = (__u32)cookie & CABBPF_COOKIE_FID; /* e is the loader's now */
		const struct cabbpf_fnspec *sp = bpf_map_lookup_elem(&fnspecs, &fid);
		struct cabbpf_event *z;

		if (sized_on && sp && sp->sized) {
			__u64 size = read_size(ctx, sp);

			z = pipeline_claim(st, CABBPF_STAT_DROPS);
			if (z) {
				z->tid = pipeline_tid(st, (__u32)id);
				z->pid = tgid;
				z->kind = CABBPF_EV_SIZE;
				z->fid = fid;
				z->seq = st->seq++;
				z->ts = 0;
				z->sp = size;
				z->epoch = sampling ? win : 0;
				z->pad = 0;
				pipeline_submit(z, st);
			}
		}
		if (vals_on && sp)
			put_args(ctx, st, pipeline_tid(st, (__u32)id), tgid, fid, sp);
	}
	if (lossless)
		throttle(st, (__u32)id);
out:
	pipeline_end(st);
	return rc;
}

SEC("uprobe")
int BPF_KPROBE(on_entry)
{
	return emit(ctx, CABBPF_EV_ENTRY);
}

SEC("uretprobe")
int BPF_KRETPROBE(on_return)
{
	return emit(ctx, CABBPF_EV_RETURN);
}

/* Whole-container tracing: entry and return in one program (attach type
 * BPF_TRACE_UPROBE_SESSION, set by the loader); see "armed". */
SEC("uprobe")
int BPF_KPROBE(on_session)
{
	if (bpf_session_is_return())
		return emit(ctx, CABBPF_EV_RETURN);
	return emit(ctx, CABBPF_EV_ENTRY);
}

/* Whole-tree tracing: hold a process at the exec of a program the loader
 * has not looked at (include/cabbpf_event.h, struct cabbpf_exec_held), so
 * that a program the tree execs is traced from its first instruction
 * however briefly it lives. Set by the loader before load. */
const volatile __u32 hold_exec = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct cabbpf_image_key);
	__type(value, __u8);
} exec_images SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct cabbpf_exec_held);
} exec_held SEC(".maps");

/* p (current, past the exec's point of no return, its only thread) runs a
 * file not in exec_images: noted in exec_held, then stopped. SIGSTOP is
 * taken on the way back to user mode, before the new program's first
 * instruction; the loader looks at the program, puts its probes in and
 * sends SIGCONT (a stop its parent sees only if it waits with WUNTRACED).
 * Noted first, so that the loader (or, should cabbpf die, its releaser:
 * user/trace/whole_hold.c) always finds whom to let go; a process that
 * cannot be noted (the map full) is not stopped. */
static __always_inline void hold_at_exec(struct task_struct *p, __u32 dev, __u64 ino)
{
	struct cabbpf_image_key k = {.dev = dev, .pad = 0, .ino = ino};
	struct cabbpf_exec_held h = {};
	__u32 pid = (__u32)p->tgid, *on;
	__u8 *img = bpf_map_lookup_elem(&exec_images, &k);

	if (img) {
		/* a program that needs no guard: its returns from its start */
		if (session && (*img & CABBPF_IMG_ARM)) {
			on = bpf_task_storage_get(&armed, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
			if (on)
				*on = 1;
		}
		return;
	}
	h.img = k;
	h.start_ns = BPF_CORE_READ(p, start_boottime);
	h.ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&exec_held, &pid, &h, BPF_NOEXIST))
		return;
	if (bpf_send_signal(SIGSTOP))
		bpf_map_delete_elem(&exec_held, &pid);
}

/*
 * execve replaced the image (the exec'ing thread, now the only one): the
 * old image's frames are gone without returns. Uprobes are bound to files,
 * so the same binary is traced on; the event says which file it is: fid
 * the s_dev of its inode's superblock (kernel encoding), sp its inode
 * number, pad 0 (CABBPF_EXEC_KILLED marks the events of on_exit). A
 * thread other than the leader that exec's takes the process's id; its
 * events keep the old one (tstate.tid), so its stream goes on in
 * order. Another program: the probes go quiet (other_image) until an
 * execve loads the traced one again.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u64 ino = BPF_CORE_READ(bprm, file, f_inode, i_ino);
	__u32 dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev);
	struct cabbpf_event *e;
	struct tstate *st;
	__u32 win = (__u32)gate;

	/* Typed tracepoint arguments: some kernels let the verifier take
	 * them as nullable; a check costs a branch. */
	if (!p)
		return 0;
	/* A new image: not armed until the loader has looked at it (its
	 * guard, user/trace/guard.h), whatever the gate and the target. */
	if (session)
		bpf_task_storage_delete(&armed, p);
	if (target_tgid && p->tgid != target_tgid)
		return 0;
	/* Whatever the gate: state that outlives it. */
	if (target_tgid && exe_ino)
		other_image = ino != exe_ino || dev != exe_dev;
	/* Closed gate (see gate); sampling watches execve between windows
	 * too (the shadow stacks close the old image's frames). */
	if (!sampling && !win)
		return 0;
	if (cgroup_excluded())
		return 0;
	if (hold_exec && !target_tgid)
		hold_at_exec(p, dev, ino);
	e = pipeline_begin(sizeof(*e), &st, CABBPF_STAT_DROPS);
	if (e) {
		e->tid = pipeline_tid(st, (__u32)p->pid);
		e->pid = p->tgid;
		e->kind = CABBPF_EV_EXEC;
		e->fid = dev;
		e->seq = st->seq++;
		e->ts = want_time ? bpf_ktime_get_ns() : 0;
		e->sp = ino;
		e->epoch = sampling ? win : 0;
		e->pad = 0;
		pipeline_submit(e, st);
	}
	pipeline_end(st);
	return 0;
}

/*
 * A thread that ends because another thread of its process called execve
 * (the kernel kills every other thread before the new image runs): its
 * frames end with the old image too, "by exec". Written for threads that
 * have events (task storage) only, as an exec event flagged
 * CABBPF_EXEC_KILLED (not an execve of the program's own).
 */
/* struct signal_struct before Linux 5.16 (CO-RE flavour). */
struct signal_struct___exit {
	struct task_struct *group_exit_task;
} __attribute__((preserve_access_index));

static __always_inline void exit_by_exec(struct task_struct *p)
{
	struct task_struct *execer = bpf_core_field_exists(p->signal->group_exec_task)
					     ? p->signal->group_exec_task
					     : BPF_CORE_READ((struct signal_struct___exit *)p->signal,
							     group_exit_task);
	struct cabbpf_event *e;
	struct tstate *st;
	__u32 win = (__u32)gate;

	if (!execer || execer == p)
		return;
	if (target_tgid && p->tgid != target_tgid)
		return;
	if (!sampling && !win)
		return;
	if (cgroup_excluded())
		return;
	st = pipeline_state(p, false);
	if (!st)
		return;
	if (st->busy) {
		bump(CABBPF_STAT_REENTRY);
		return;
	}
	st->busy = 1;
	e = pipeline_claim(st, CABBPF_STAT_DROPS);
	if (e) {
		e->tid = pipeline_tid(st, (__u32)p->pid);
		e->pid = p->tgid;
		e->kind = CABBPF_EV_EXEC;
		e->fid = 0;
		e->seq = st->seq++;
		e->ts = want_time ? bpf_ktime_get_ns() : 0;
		e->sp = 0;
		e->epoch = sampling ? win : 0;
		e->pad = CABBPF_EXEC_KILLED;
		pipeline_submit(e, st);
	}
	st->busy = 0;
}

/* Whole-tree tracing: how each process of the cgroup ended, its wait
 * status (exit_code: the status << 8, or the signal), by pid, for the
 * report's processes (user/trace/whole.c). Set by the loader. */
const volatile __u32 note_exits = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} proc_exits SEC(".maps");

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p, bool group_dead)
{
	__u32 pid, st;

	if (!p)
		return 0; /* as on_exec */
	/* The process's last thread (its signal's live count is 0 by now;
	 * read, not the tracepoint's group_dead, which 6.1's lacks). */
	if (note_exits && !target_tgid && !BPF_CORE_READ(p, signal, live.counter) &&
	    !cgroup_excluded()) {
		pid = (__u32)p->tgid;
		st = (__u32)p->exit_code;
		bpf_map_update_elem(&proc_exits, &pid, &st, BPF_ANY);
	}
	exit_by_exec(p);
	/* Its last event is written: its tstab slot is free for the next
	 * thread of its hash (pipeline.bpf.h). */
	pipeline_state_free(p);
	return 0;
}

/*
 * A new process (fork, vfork; not a thread: CLONE_THREAD starts with no
 * frames). One process traced (target_tgid): counted, so that the report
 * says its children were not traced (CABBPF_STAT_FORKS). A traced tree
 * (--follow-forks, a whole cgroup): the child starts inside its parent's
 * open calls (its stack is a copy of the parent's, and the kernel copies
 * the pending return probes with it), so the pipeline must give it the
 * parent's shadow stack as it is now. Two events say when: a FORK in the
 * parent thread's stream, at its place in the parent's program order,
 * and the child's first event, FORKED, naming the parent's stream and
 * that FORK's sequence number (include/cabbpf_event.h). Runs in the
 * parent (kernel_clone, before the child is woken): the child has no
 * event yet, so FORKED takes its sequence number 0. A parent with no
 * state has made no traced call: nothing to inherit, no event. Drops are
 * counted as the guard's and exec's (CABBPF_STAT_GUARD_DROPS).
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	struct cabbpf_event *e;
	struct tstate *st, *cst;
	__u32 win = (__u32)gate, ptid;
	__u64 pseq = CABBPF_FORK_LOST;

	if (!parent || !child)
		return 0; /* as on_exec */
	if (target_tgid) {
		if (parent->tgid == target_tgid && child->pid == child->tgid)
			bump(CABBPF_STAT_FORKS);
		return 0;
	}
	if (child->pid != child->tgid)
		return 0; /* a thread: it starts with no frames */
	if (!sampling && !win)
		return 0; /* as on_exec */
	if (cgroup_excluded())
		return 0;
	if (!pipeline_state(parent, false))
		return 0;
	e = pipeline_begin_task(sizeof(*e), parent, &st, CABBPF_STAT_GUARD_DROPS);
	if (!st)
		return 0;
	ptid = pipeline_tid(st, (__u32)parent->pid);
	if (e) {
		e->tid = ptid;
		e->pid = parent->tgid;
		e->kind = CABBPF_EV_FORK;
		e->fid = (__u32)child->pid;
		pseq = e->seq = st->seq++;
		e->ts = want_time ? bpf_ktime_get_ns() : 0;
		e->sp = 0;
		e->epoch = sampling ? win : 0;
		e->pad = 0;
		pipeline_submit(e, st);
	}
	pipeline_end(st);
	cst = pipeline_state(child, true);
	if (!cst) {
		bump(CABBPF_STAT_NOSTORE);
		bump(CABBPF_STAT_GUARD_DROPS);
		return 0;
	}
	if (cst->busy || cst->seq) {
		bump(CABBPF_STAT_REENTRY);
		return 0;
	}
	cst->busy = 1;
	e = pipeline_claim(cst, CABBPF_STAT_GUARD_DROPS);
	if (e) {
		e->tid = pipeline_tid(cst, (__u32)child->pid);
		e->pid = child->tgid;
		e->kind = CABBPF_EV_FORKED;
		e->fid = ptid;
		e->seq = cst->seq++;
		e->ts = want_time ? bpf_ktime_get_ns() : 0;
		e->sp = pseq;
		e->epoch = sampling ? win : 0;
		e->pad = 0;
		pipeline_submit(e, cst);
	}
	cst->busy = 0;
	return 0;
}

/* Tests only (CABBPF_TEST_UNSEEN_SWITCH_INS=1): act as a kernel whose
 * tracepoint reports no switch-in, so the probes' recovery
 * (bpf/pipeline.bpf.h, pipeline_close_unseen) is tested on every run
 * rather than one in thousands. */
const volatile __u32 test_unseen_switch_ins = 0;

/*
 * On-CPU time. The probes do no extra work: the scheduler's
 * switch tracepoint notes when a traced thread leaves its CPU, and when it
 * comes back writes one CABBPF_EV_SCHED event carrying the off-CPU interval
 * with the thread's own next sequence number, so the analyzers see it in
 * the thread's program order and take it out of every frame live across it
 * (pipeline/shadow.h, shadow__offcpu). Only threads that already have
 * pipeline state (they produced an event: they are traced) are followed,
 * after a cheap tgid check. tp_btf runs before the switch, in the context
 * of prev, so next's state is looked up explicitly.
 *
 * An interval that cannot be written now (ring full, or next was preempted
 * inside one of its own probes and holds its sequence number) is carried in
 * off_pend and added to the thread's next switch-in event; both cases are
 * counted (CABBPF_STAT_SCHED_DROPS, CABBPF_STAT_SCHED_BUSY). A switch-in
 * for which the kernel runs no program at all (rare, under load) leaves
 * the interval open until the thread's next event closes it
 * (bpf/pipeline.bpf.h pipeline_close_unseen, CABBPF_STAT_SCHED_UNSEEN).
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct cabbpf_event *e;
	struct tstate *st;
	bool out, in;
	__u64 now, off;

	if (!prev || !next)
		return 0; /* as on_exec */
	out = !target_tgid || prev->tgid == target_tgid;
	in = !target_tgid || next->tgid == target_tgid;
	if (!out && !in)
		return 0;
	/* Closed gate (see gate); with sampling the intervals are followed
	 * between windows too, so one that spans a window's edge is right. */
	if (!sampling && !(__u32)gate)
		return 0;
	if (prev == next)
		return 0;
	now = bpf_ktime_get_ns();
	if (out && prev->pid) {
		st = pipeline_state(prev, false);
		/* Off since off_ts already, outside its own probes: its
		 * switch-in went unseen. The interval stays open from then (an
		 * upper bound, as pipeline_close_unseen says): a new start
		 * lost the time before it (a 50 ms sleep, the thread preempted
		 * again before its next event, counted on-CPU). Inside a probe
		 * pipeline_close_unseen may hold off_ts already: as before. */
		if (st && (!st->off_ts || st->busy))
			st->off_ts = now;
	}
	if (!in || !next->pid || test_unseen_switch_ins)
		return 0;
	st = pipeline_state(next, false);
	if (!st || !st->off_ts)
		return 0;
	off = now - st->off_ts + st->off_pend;
	st->off_ts = 0;
	if (st->busy) {
		/* next was switched out inside its own probe: that event's
		 * sequence number is taken, ours would come first. */
		st->off_pend = off;
		bump(CABBPF_STAT_SCHED_BUSY);
		return 0;
	}
	st->busy = 1;
	e = pipeline_claim(st, CABBPF_STAT_SCHED_DROPS);
	if (!e) {
		st->off_pend = off;
		st->busy = 0;
		return 0;
	}
	st->off_pend = 0;
	pipeline_put_sched(e, st, next, now, off);
	st->busy = 0;
	return 0;
}

/* Whether ip is in task's xol area (one page: the return probes'
 * trampoline and the out-of-line slots of single-stepped probes), so its
 * time is the probes', not the program's. A kernel whose BTF does not
 * name the area: never (counted as the program's). */
static __always_inline bool in_xol_area(struct task_struct *task, __u64 ip)
{
	struct xol_area *xa = NULL;

	if (!bpf_core_field_exists(xa->vaddr) || !task->mm)
		return false;
	xa = task->mm->uprobes_state.xol_area;
	return xa && ip - xa->vaddr < 4096;
}

/* x86-64's system calls for the probes themselves: a return probe's
 * trampoline (uretprobe, 6.11+) and an optimised entry probe's (uprobe,
 * 6.16+). Their numbers are ABI. */
#define NR_URETPROBE 335
#define NR_UPROBE 336
#define KERNEL_ENOSYS 38

/*
 * A tick that interrupted the thread in kernel mode: is that the
 * program's own time? Yes in a system call it made: its registers as
 * saved at entry have the call's number in orig_ax and -ENOSYS in ax
 * until the call's result is stored (the entry code's, on every x86-64
 * kernel). No in a probe's trap: int3 and the single-step's debug trap
 * save orig_ax -1, and the probes' own system calls come from their
 * trampolines (in the xol area, or numbered above). Page faults and
 * interrupts save -1 too: in_own_fault tells the program's page faults.
 */
static __always_inline bool in_own_syscall(struct task_struct *task)
{
#if defined(__TARGET_ARCH_x86)
	struct pt_regs *u = (struct pt_regs *)bpf_task_pt_regs(task);
	long nr, ax;

	if (!u)
		return false;
	nr = (long)BPF_CORE_READ(u, orig_ax);
	ax = (long)BPF_CORE_READ(u, ax);
	if (nr < 0 || ax != -KERNEL_ENOSYS || nr == NR_URETPROBE || nr == NR_UPROBE)
		return false;
	return !in_xol_area(task, BPF_CORE_READ(u, ip));
#else
	(void)task;
	return false;
#endif
}

/*
 * The kernel entry that page faults come in by (asm_exc_page_fault), as
 * [fault_entry_lo, fault_entry_hi): set by the loader from /proc/kallsyms
 * (user/kernel/ksyms.h); 0 when the kernel hides its addresses, and then
 * page faults are left out with the traps.
 */
const volatile __u64 fault_entry_lo = 0;
const volatile __u64 fault_entry_hi = 0;

/* The interrupted kernel stack, to its bottom: the entry. A stack deeper
 * than this is not told apart (left out with the traps). */
#define FAULT_STACK_DEPTH 64
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[FAULT_STACK_DEPTH]);
} fault_stack SEC(".maps");

/*
 * A tick that interrupted the thread in kernel mode, not in a system call:
 * in a page fault of the program's own? Page faults, the probes' int3 and
 * single-step traps and interrupts all save orig_ax -1, so the registers
 * cannot tell them apart; the kernel entry they came in by can. The
 * interrupted kernel stack (from the tick's registers, as perf's kernel
 * call chain) ends in that entry's stub: asm_exc_page_fault for a page
 * fault, asm_exc_int3 or asm_exc_debug for a probe's trap, even for a
 * fault taken inside the trap. A fault on the probes' own code (the xol
 * area, first touched) is theirs.
 */
static __always_inline bool in_own_fault(struct bpf_perf_event_data *ctx,
					 struct task_struct *task)
{
#if defined(__TARGET_ARCH_x86)
	struct pt_regs *u;
	__u32 zero = 0;
	__u64 *st, bottom;
	__u32 i;
	long n;

	if (!fault_entry_lo)
		return false;
	st = bpf_map_lookup_elem(&fault_stack, &zero);
	if (!st)
		return false;
	n = bpf_get_stack(ctx, st, FAULT_STACK_DEPTH * sizeof(__u64), 0);
	if (n < (long)sizeof(__u64) || n >= FAULT_STACK_DEPTH * (long)sizeof(__u64))
		return false; /* none, or maybe cut short of its bottom */
	/* the last frame; masked so that every verifier sees it in bounds
	 * (FAULT_STACK_DEPTH is a power of two: the mask changes nothing) */
	i = ((__u32)n / sizeof(__u64) - 1) & (FAULT_STACK_DEPTH - 1);
	bottom = st[i];
	if (bottom < fault_entry_lo || bottom >= fault_entry_hi)
		return false;
	u = (struct pt_regs *)bpf_task_pt_regs(task);
	return u && !in_xol_area(task, BPF_CORE_READ(u, ip));
#else
	(void)ctx;
	(void)task;
	return false;
#endif
}

/*
 * The target's progress (--sample, --budget: user/trace/sampler.h,
 * budget.h): of the CPU clock's ticks, those in the program's own
 * user-mode code, counted in ns (the clock's period each), gate or not:
 * the sampling windows are measured in it. Not a tick in the xol area
 * (the return trampoline, single-stepped instructions) nor one delivered
 * late as a probe's trap returned (resume_check): those are the probes'
 * time, as they are for the time sampler below. What the traps leave in
 * the program's own code (the aftermath) is counted; the calibration
 * measures it per traced call (user/trace/calibrate.h leak).
 */
const volatile __u32 progress_on = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} progress_ns SEC(".maps");

static __always_inline void count_progress(struct bpf_perf_event_data *ctx,
					   struct task_struct *task, __u64 ip)
{
	struct tstate *st;
	__u32 zero = 0;
	__u64 *v;

#if defined(__TARGET_ARCH_x86)
	if ((__s64)ip < 0) /* kernel mode (with --times sampled's clock) */
		return;
#endif
	if (in_xol_area(task, ip))
		return;
	st = pipeline_state(task, false);
	if (st && resume_check && resume_late_tick(st, ip, bpf_ktime_get_ns()))
		return;
	v = bpf_map_lookup_elem(&progress_ns, &zero);
	if (v)
		*v += ctx->sample_period;
}

/*
 * --times sampled: the CPU clock (a perf cpu-clock event on every CPU:
 * user/trace/cpuclock.c) interrupted a thread of the target. One event,
 * with the thread's sequence number, so it lands between the calls and
 * returns around it and the analyzers charge the period to the frame on
 * top of its shadow stack (pipeline/shadow.h, SAMPLES): where the program
 * spent that time, by its exact calling context. Its own code and its own
 * system calls are its time; the probes' code and traps are not: left
 * out and counted (docs/times.md). It is also the progress clock
 * (count_progress, progress_on). Loaded only when asked for (autoload off
 * otherwise), for one target process.
 */
SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct cabbpf_event *e;
	struct tstate *st;
	__u32 win = (__u32)gate;
	__u64 ip = ctx->regs.ip;
	int in_kernel = 0; /* 1: a system call, 2: a page fault */
	__u64 now;

	if (!target_tgid || task->tgid != target_tgid)
		return 0;
	if (other_image || cgroup_excluded())
		return 0;
	if (progress_on)
		count_progress(ctx, task, ip);
	if (!win)
		return 0;
#if defined(__TARGET_ARCH_x86)
	if ((__s64)ip < 0) { /* kernel mode: x86-64's kernel is the upper half */
		if (in_own_syscall(task))
			in_kernel = 1;
		else if (in_own_fault(ctx, task))
			in_kernel = 2;
		else {
			bump(CABBPF_STAT_CPU_SAMPLES_TRAP);
			return 0;
		}
		/* not a user address: 0 in a system call, 1 in a page fault
		 * (the dump says which) */
		ip = in_kernel - 1;
	} else
#endif
		if (in_xol_area(task, ip)) {
		bump(CABBPF_STAT_CPU_SAMPLES_PROBE);
		return 0;
	}
	st = pipeline_state(task, false);
	if (!st) {
		/* no event of the thread yet: no traced frame is live */
		bump(CABBPF_STAT_CPU_SAMPLES_NOSTATE);
		return 0;
	}
	if (st->busy) {
		bump(CABBPF_STAT_CPU_SAMPLES_BUSY);
		return 0;
	}
	now = bpf_ktime_get_ns();
	if (!in_kernel && resume_check && resume_late_tick(st, ip, now)) {
		bump(CABBPF_STAT_CPU_SAMPLES_RESUME);
		return 0;
	}
	st->busy = 1;
	pipeline_close_unseen(st, task);
	e = pipeline_claim(st, CABBPF_STAT_CPU_SAMPLE_DROPS);
	if (e) {
		/* counted where it is charged, so of the report's samples */
		if (in_kernel)
			bump(in_kernel == 1 ? CABBPF_STAT_CPU_SAMPLES_SYSCALL
					    : CABBPF_STAT_CPU_SAMPLES_FAULT);
		pipeline_put(e, st, task, CABBPF_EV_CPU_SAMPLE, now, ip, sampling ? win : 0);
	}
	st->busy = 0;
	return 0;
}

/* The traced file as the kernel names it (exe_dev, exe_ino): the inode
 * of the loader's open file exe_fd, read once by the loader (a task
 * iterator) before the trace starts. */
SEC("iter/task")
int exe_identity(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct file **fds, *f = NULL;
	unsigned int max;

	if (!task || task->tgid != self_tgid || exe_fd < 0 || exe_ino)
		return 0;
	fds = BPF_CORE_READ(task, files, fdt, fd);
	max = BPF_CORE_READ(task, files, fdt, max_fds);
	if (!fds || (unsigned int)exe_fd >= max ||
	    bpf_probe_read_kernel(&f, sizeof(f), &fds[exe_fd]) || !f)
		return 0;
	exe_dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	exe_ino = BPF_CORE_READ(f, f_inode, i_ino);
	return 0;
}

/* Kernel floor for the benchmark: the same sites with nothing to do. */
SEC("uprobe")
int BPF_KPROBE(empty_entry)
{
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(empty_return)
{
	return 0;
}
