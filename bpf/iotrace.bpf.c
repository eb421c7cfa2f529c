// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * I/O buffer events: one tp_btf program on the raw sys_exit tracepoint (no
 * tracefs needed) sees every completed system call, keeps the 22 that move
 * data in or out (Coppa et al., aprof-trms: read/recv families deliver external input,
 * write/send families send memory out; sendfile, splice and
 * copy_file_range move data between two fds and count on both sides,
 * vmsplice on one; include/cabbpf_event.h says which), and either
 *   - function-tracing mode (agg_mode == 0): writes a struct cabbpf_io_event
 *     into the SAME per-CPU rings, with the SAME per-thread sequence numbers
 *     as bpf/trace.bpf.c (the loader hands this object trace.bpf.c's "rings",
 *     "tstates" and "stats" with bpf_map__reuse_fd), so the analyzers see
 *     each I/O in program order between calls and returns; or
 *   - system-wide mode (agg_mode == 1, cabbpf --io): aggregates in the
 *     kernel, per (pid, cgroup, syscall, fd kind) and per (pid, fd, inode),
 *     so a busy machine produces no event stream to lose; user space reads
 *     the maps every second. The per-call path touches only a per-thread
 *     cache of accumulators (task storage; see "slots" below) and makes two
 *     helper calls; the hash maps are updated when a slot is flushed. A key
 *     that cannot be created (map full) is counted, never dropped silently.
 * Only sys_exit is used: the syscall's arguments are still in the saved user
 * registers (x86-64: di, si, dx, r10), and its result is known there, so one
 * program per call suffices.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cabbpf_event.h"

#define E2BIG 7 /* errno: a full hash map refuses a new key with -E2BIG */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the loader before load. 0 = any process. */
const volatile __u32 target_tgid = 0;
/* Never report cabbpf's own I/O (system-wide mode would watch itself). */
const volatile __u32 self_tgid = 0;
/* 1: system-wide aggregation; 0: events into the rings. */
const volatile __u32 agg_mode = 0;
/* 1: only tasks under the cgroup in cgfilter[0] (descendants included). */
const volatile __u32 use_cgroup = 0;

/* Function-tracing mode: the gate of bpf/trace.bpf.c (its epoch), for I/O
 * events: 0 closed, written through the skeleton's mmap by
 * iotrace__gate when the trace starts and stops, so the I/O analysed is
 * that of the same instants as the calls. */
volatile __u32 io_gate = 0;

/* Maps shared with bpf/trace.bpf.c, including bump(). */
#include "pipeline.bpf.h"

/* ---- this object's own maps ---- */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgfilter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CABBPF_IOSTAT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} iocounts SEC(".maps");

/* Sizes are set by the loader (1 entry in function-tracing mode). Not
 * preallocated: preallocating 16384 + 32768 per-CPU values (~25 MB on two
 * CPUs) cost ~50-250 ms of start-up; keys are created only when a
 * thread's slot is flushed, not per call, so allocating then is cheap. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct cabbpf_iostat_key);
	__type(value, struct cabbpf_iostat_val);
} iostats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 32768);
	__type(key, struct cabbpf_iofile_key);
	__type(value, struct cabbpf_iofile_val);
} iofiles SEC(".maps");

/* Cgroup id -> its names (include/cabbpf_event.h), written when a
 * process key is created: off the per-call path. Full: the cgroup is named
 * by its path only while it exists (user space says so). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct cabbpf_cgname);
} cgnames SEC(".maps");

/* Scratch for a struct cabbpf_cgname: too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cabbpf_cgname);
} cgname_buf SEC(".maps");

/* A new file key's value, built here rather than on the stack: the
 * sys_exit program, account() and flush_slot() nest, and kernels before
 * 6.13 (no private stacks) refuse a combined stack over 512 bytes. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cabbpf_iofile_val);
} fval_buf SEC(".maps");

static __always_inline struct cabbpf_iofile_val *new_fval(void)
{
	__u32 zk = 0;
	struct cabbpf_iofile_val *v = bpf_map_lookup_elem(&fval_buf, &zk);

	if (v)
		__builtin_memset(v, 0, sizeof(*v));
	return v;
}

/* A zeroed value to create keys with: too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cabbpf_iostat_val);
} zero_stat SEC(".maps");

/*
 * System-wide mode's fast path: a small per-thread cache of accumulators
 * (task storage), so a thread that keeps calling the same syscall on the
 * same file costs no hash-map lookup per call. A slot is flushed into the
 * hash maps when it is evicted, when it holds FLUSH_CALLS calls, when its
 * thread exits (sched_process_exit), and by user space through the task
 * iterator (flush_tasks) before every read of the maps (every second). The lock word makes every flush exclusive: a flusher that finds
 * it taken skips (the holder is the owner, who accounts its call directly,
 * or another flusher, who flushes everything).
 */
#define NSLOTS 4
#define FLUSH_CALLS (1u << 24)	 /* keeps the 32-bit counters below overflow */

struct slot {
	__u64 file; /* identity: the struct file behind fd when filled */
	__u64 ino;
	__u64 dev;
	__u64 cgid;
	__u64 born; /* 1: holds counts since the last flush; 0: empty */
	__u64 bytes;
	__u64 req;
	__s32 fd;
	__u32 calls;
	__u32 errors;
	__u32 short_calls;
	__u8 sc;
	__u8 fdkind;
	__u8 used; /* the key fields are set */
	__u8 bq;   /* bucket of last_req */
	__u32 last_req; /* loops ask for the same size: keep its bucket */
	__u64 last_ret;
	__u32 bret; /* bucket of last_ret */
	__u32 pad2;
	__u32 hist_req[CABBPF_HIST_BUCKETS];
	__u32 hist_ret[CABBPF_HIST_BUCKETS];
	char name[48];
};

struct tio {
	__u64 lock; /* 64-bit: clang's BPF target has 64-bit cmpxchg only */
	__u32 next; /* round-robin victim */
	__u32 mru;  /* slot of the previous call: tried first */
	struct slot s[NSLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tio);
} tios SEC(".maps");

/* Slots of processes that ended (struct cabbpf_iodone), for user space.
 * Sized by the loader (--io: 1 MiB, ~2,400 slots per 50 ms tick). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} iodone SEC(".maps");

/* x86-64 syscall numbers -> enum cabbpf_sc, or -1. */
static __always_inline int sc_of(long nr)
{
	switch (nr) {
	case 0: return CABBPF_SC_READ;
	case 19: return CABBPF_SC_READV;
	case 17: return CABBPF_SC_PREAD64;
	case 295: return CABBPF_SC_PREADV;
	case 327: return CABBPF_SC_PREADV2;
	case 45: return CABBPF_SC_RECVFROM;
	case 47: return CABBPF_SC_RECVMSG;
	case 299: return CABBPF_SC_RECVMMSG;
	case 70: return CABBPF_SC_MSGRCV;
	case 1: return CABBPF_SC_WRITE;
	case 20: return CABBPF_SC_WRITEV;
	case 18: return CABBPF_SC_PWRITE64;
	case 296: return CABBPF_SC_PWRITEV;
	case 328: return CABBPF_SC_PWRITEV2;
	case 44: return CABBPF_SC_SENDTO;
	case 46: return CABBPF_SC_SENDMSG;
	case 307: return CABBPF_SC_SENDMMSG;
	case 69: return CABBPF_SC_MSGSND;
	/* Two-sided (or, vmsplice, either-sided): decode() sorts them out. */
	case 40: return CABBPF_SC_SENDFILE_IN;
	case 275: return CABBPF_SC_SPLICE_IN;
	case 326: return CABBPF_SC_COPY_FILE_RANGE_IN;
	case 278: return CABBPF_SC_VMSPLICE_IN;
	default: return -1;
	}
}

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&iocounts, &idx);

	if (v)
		*v += 1;
}

static __always_inline void count_n(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&iocounts, &idx);

	if (v)
		*v += n;
}

/* Bucket of a byte count: 0 for 0, else 1 + floor(log2(v)), at most 31.
 * A global function, verified once on its own: inlined, its six
 * data-dependent branches multiplied the verifier's states by up to 64 at
 * each of its call sites (the result indexes the histograms, so states
 * with different buckets cannot be pruned) and the load took ~3 s. */
__noinline __u32 log2_bucket(__u64 v)
{
	__u32 r = 0;

	if (!v)
		return 0;
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	r += 1;
	return r > CABBPF_HIST_BUCKETS - 1 ? CABBPF_HIST_BUCKETS - 1 : r;
}

#include "iotrace_fd.bpf.h"

struct iocall {
	__s64 ret;
	__u64 req;
	__u64 buf;
	__s32 fd;
	__u32 sc;
	__u8 flags;
};

#define FMODE_WRITE 0x2 /* include/linux/fs.h: the file is open for writing */

/* Decode the call from the saved user registers and its result. For a
 * two-sided call (sendfile, splice, copy_file_range) this is its input
 * side, the source fd; other_side() gives the output side. */
static __always_inline void decode(struct task_struct *task, struct pt_regs *regs, long ret,
				   int sc, struct iocall *c)
{
	__u64 a0 = regs->di, a1 = regs->si, a2 = regs->dx;

	c->sc = (__u32)sc;
	c->fd = (__s32)a0;
	c->buf = a1;
	c->ret = ret;
	c->flags = ret < 0 ? CABBPF_IO_ERR : 0;
	switch (sc) {
	case CABBPF_SC_READV:
	case CABBPF_SC_PREADV:
	case CABBPF_SC_PREADV2:
	case CABBPF_SC_WRITEV:
	case CABBPF_SC_PWRITEV:
	case CABBPF_SC_PWRITEV2:
		c->req = iov_bytes((const struct iovec *)a1, a2);
		break;
	case CABBPF_SC_RECVMSG:
	case CABBPF_SC_SENDMSG: {
		struct user_msghdr m;

		if (bpf_probe_read_user(&m, sizeof(m), (void *)a1))
			c->req = 0;
		else
			c->req = iov_bytes((const struct iovec *)m.msg_iov, m.msg_iovlen);
		break;
	}
	case CABBPF_SC_RECVMMSG:
	case CABBPF_SC_SENDMMSG:
		/* ret counts messages: report bytes; the request is taken to be
		 * what arrived (no short-read accounting for these two). */
		if (ret > 0)
			c->ret = (__s64)mmsg_bytes((const struct mmsghdr *)a1, ret);
		c->req = ret > 0 ? (__u64)c->ret : 0;
		break;
	case CABBPF_SC_MSGRCV:
		/* msgp points at {long mtype; char mtext[]}; msgsz is mtext's. */
		c->fd = -1;
		c->req = a2;
		break;
	case CABBPF_SC_MSGSND:
		/* Returns 0 on success: msgsz bytes were sent. */
		c->fd = -1;
		c->req = a2;
		if (ret == 0)
			c->ret = (__s64)a2;
		break;
	case CABBPF_SC_SENDFILE_IN:
		/* sendfile(out_fd, in_fd, offset, count): no user buffer */
		c->fd = (__s32)a1;
		c->buf = 0;
		c->req = regs->r10;
		break;
	case CABBPF_SC_SPLICE_IN:
	case CABBPF_SC_COPY_FILE_RANGE_IN:
		/* (fd_in, off_in, fd_out, off_out, len, flags) */
		c->buf = 0;
		c->req = regs->r8;
		break;
	case CABBPF_SC_VMSPLICE_IN: {
		/* vmsplice(fd, iov, nr_segs, flags): a pipe's write end takes
		 * the thread's memory out, its read end brings input in. */
		__u64 fp = fd_file(task, c->fd);
		struct ffacts ff;

		c->req = iov_bytes((const struct iovec *)a1, a2);
		if (fp) {
			file_facts(fp, &ff);
			if (ff.fmode & FMODE_WRITE)
				c->sc = CABBPF_SC_VMSPLICE_OUT;
		}
		break;
	}
	default:
		c->req = a2;
		break;
	}
}

/* The output side of a two-sided call whose input side is *c: the
 * destination fd, the same bytes. Returns false for a one-sided call. */
static __always_inline bool other_side(struct pt_regs *regs, const struct iocall *c,
				       struct iocall *o)
{
	switch (c->sc) {
	case CABBPF_SC_SENDFILE_IN:
		*o = *c;
		o->fd = (__s32)regs->di;
		break;
	case CABBPF_SC_SPLICE_IN:
	case CABBPF_SC_COPY_FILE_RANGE_IN:
		*o = *c;
		o->fd = (__s32)regs->dx;
		break;
	default:
		return false;
	}
	o->sc = CABBPF_SC_OUT_SIDE(c->sc);
	return true;
}

static __always_inline void emit_event(struct iocall *c, const struct fdinfo *fi, __u64 id)
{
	struct cabbpf_io_event *e;
	struct tstate *st;

	e = pipeline_begin(sizeof(*e), &st, CABBPF_STAT_IO_DROPS);
	if (!e)
		goto out;
	e->tid = pipeline_tid(st, (__u32)id);
	e->pid = id >> 32;
	e->kind = CABBPF_EV_IO;
	e->sc = (__u8)c->sc;
	e->fdkind = (__u8)fi->kind;
	e->flags = c->flags;
	e->pad = 0;
	/* Taken only after the claim succeeded: drops leave no gap. */
	e->seq = st->seq++;
	e->ts = bpf_ktime_get_ns();
	e->ret = c->ret;
	e->req = c->req > 0xffffffffULL ? 0xffffffffU : (__u32)c->req;
	e->buf = c->buf;
	e->fd = c->fd;
	pipeline_submit(e, st);
	count(CABBPF_IOSTAT_EVENTS);
out:
	pipeline_end(st);
}

#include "iotrace_agg.bpf.h"

/* A thread's pending counts go to user space when it exits: the last
 * thread of a process sends them through the ring (no key for a process
 * that has ended), any other flushes them into the maps, where its
 * process's files are named while it lives. signal->live was decremented
 * before this tracepoint (do_exit): 0 means the whole process is ending. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_task_exit, struct task_struct *p)
{
	struct tio *t;
	bool last;
	int i;

	if (!p)
		return 0; /* some kernels take typed tracepoint arguments as nullable */
	t = bpf_task_storage_get(&tios, p, 0, 0);
	if (!t || !tio_lock(t))
		return 0;
	last = p->signal && p->signal->live.counter == 0;
	for (i = 0; i < NSLOTS; i++)
		if (!last || !send_slot(p, p->tgid, &t->s[i], 0))
			flush_slot(p, p->tgid, &t->s[i]);
	tio_unlock(t);
	return 0;
}

/* Run by user space (bpf_iter) before it reads the maps: flush every
 * thread's slots. A thread inside its own accounting right now is skipped
 * (its slots reach the maps at its next flush); at the end of a run the
 * sys_exit program is detached first, so nothing is skipped then. */
SEC("iter/task")
int flush_tasks(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct tio *t;

	if (!task)
		return 0;
	t = bpf_task_storage_get(&tios, task, 0, 0);
	if (t && tio_lock(t)) {
		flush_all(task, task->tgid, t);
		tio_unlock(t);
	}
	return 0;
}

/* One side of a call (the current task's): into the aggregates or the
 * rings. A global function, verified once on its own: inlined twice (the
 * two sides of sendfile, splice, copy_file_range) the second copy was
 * verified once per state the first left, and the load took > 1 s. The
 * task is fetched again here (a global function cannot take a trusted
 * task pointer without argument tags that Debian's libbpf predates). */
__noinline int account(struct iocall *c, __u32 tgid, __u64 id)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdinfo fi;

	if (!c)
		return 0;
	if (agg_mode) {
		/* CABBPF_IOSTAT_CALLS is counted when a slot is flushed. */
		aggregate_fast(task, c, tgid);
		return 0;
	}
	if (!io_gate)
		return 0;
	count(CABBPF_IOSTAT_CALLS);
	if (c->fd >= 0)
		fd_info(task, c->fd, &fi);
	else {
		fi.kind = CABBPF_FD_NONE;
		fi.ino = 0;
		fi.dev = 0;
		fi.file = NULL;
	}
	emit_event(c, &fi, id);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task;
	struct iocall c, o;
	__u64 id;
	__u32 tgid;
	int sc;

	sc = sc_of(regs->orig_ax);
	if (sc < 0)
		return 0;
	/* Ids straight from the task: one helper call fewer per syscall. */
	task = bpf_get_current_task_btf();
	tgid = task->tgid;
	if (target_tgid && tgid != target_tgid)
		return 0;
	if (tgid == self_tgid)
		return 0;
	if (use_cgroup && bpf_current_task_under_cgroup(&cgfilter, 0) != 1)
		return 0;
	id = (__u64)tgid << 32 | (__u32)task->pid;
	/* A 32-bit task's syscall numbers mean other calls: not decoded.
	 * TS_COMPAT (x86) is set while such a task is in a syscall. */
	if (task->thread_info.status & 0x0002) {
		count(CABBPF_IOSTAT_COMPAT);
		return 0;
	}
	decode(task, regs, ret, sc, &c);
	account(&c, tgid, id);
	/* A two-sided call: its output side, after its input side (the
	 * order a reader of the event stream sees them in). */
	if (other_side(regs, &c, &o))
		account(&o, tgid, id);
	return 0;
}

/* Benchmark floor: the same tracepoint with nothing to do. */
SEC("tp_btf/sys_exit")
int BPF_PROG(empty_sys_exit, struct pt_regs *regs, long ret)
{
	return 0;
}
