/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The maps of the event pipeline, shared by bpf/trace.bpf.c (calls and
 * returns) and bpf/iotrace.bpf.c (I/O system calls): each object declares them
 * from this one definition, and the loader hands iotrace.bpf.c the trace
 * object's instances with bpf_map__reuse_fd(), so both write into the same
 * per-CPU rings with the same per-thread sequence numbers.
 */
#ifndef CABBPF_PIPELINE_BPF_H
#define CABBPF_PIPELINE_BPF_H

/* One access, as written: neither merged, split nor moved by the compiler. */
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))

/* Geometry of the per-CPU regions of "slots", set by the loader before
 * load (rodata: the verifier folds them): 2^ring_shift slots per CPU. */
const volatile __u32 ring_shift = 0;
const volatile __u64 ring_mask = 0; /* 2^ring_shift - 1 */

/*
 * The rings: struct cabbpf_slot elements, CPU c's region at slots
 * [c << ring_shift, (c + 1) << ring_shift). Mmapable: the loader reads and
 * frees slots through its own mapping, with no system call and no helper
 * call on either side (bpf_ringbuf_reserve + submit are two helper calls).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* = possible CPUs << ring_shift, set by the loader */
	__type(key, __u32);
	__type(value, struct cabbpf_slot);
} slots SEC(".maps");

/* Each CPU region's claim position and the loader's read position
 * (struct cabbpf_head, include/cabbpf_event.h), one cache line per CPU.
 * Mmapable: the loader stores tail through its own mapping. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* = possible CPUs, set by the loader */
	__type(key, __u32);
	__type(value, struct cabbpf_head);
} heads SEC(".maps");

/* Per-CPU counters, enum cabbpf_stat: every drop is counted here. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CABBPF_STAT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct tstate {
	__u64 seq;  /* next sequence number of this thread */
	__u32 busy; /* re-entry guard */
	/* The tid this thread's events carry: its own when its state was
	 * made (at its first event, always by the thread itself). A thread
	 * other than the leader that calls execve takes the process's id
	 * (the kernel swaps them in de_thread, before on_exec runs), but its
	 * task and so its sequence numbers go on: its events keep the tid
	 * they started with, one stream (bpf/trace.bpf.c on_exec). Kept from
	 * the start rather than set when the swap is seen: a program that
	 * sees it runs in another thread (on_exit of a thread the execve
	 * kills) and would pass a pointer walked from its tracepoint's
	 * argument (signal->group_exec_task) to task storage, which some
	 * kernels' verifiers refuse as untrusted. Every writer takes the tid
	 * through pipeline_tid(). */
	__u32 tid;
	__u64 pub;  /* header that publishes the slot being written (pos + 1) */
	/* bpf/trace.bpf.c's on_switch: when the thread left its CPU (0: on
	 * a CPU), and off-CPU time not yet delivered in an event */
	__u64 off_ts;
	__u64 off_pend;
	/* --times sampled: where and when the thread's last probe hit
	 * resumes it (bpf/trace.bpf.c resume_mark): the user address its
	 * probe program saw in the low RESUME_IP_BITS, the time in units of
	 * 1,024 ns (modulo 2^17) above. 0: none yet. */
	__u64 resume;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tstate);
} tstates SEC(".maps");

/* The tid an event of the thread with state st and kernel tid tid carries
 * (see tstate.tid). */
static __always_inline __u32 pipeline_tid(const struct tstate *st, __u32 tid)
{
	return st->tid ? st->tid : tid;
}

static __always_inline void bump(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1;
}

/*
 * The thread table: where a thread's state lives, looked up without a
 * helper call. bpf_task_storage_get() is a call into the kernel (its
 * recursion-safe variant in these programs, with a per-CPU busy count and
 * the storage list's walk), dear where each kernel
 * return goes through the SRSO return thunk; an array lookup is inlined
 * by the verifier and this one is a multiply, a shift and two compares.
 *
 * A thread's slot is chosen by a hash of its task_struct's address (the
 * one identity a thread keeps all its life: its pid changes when a
 * thread other than the leader calls execve). The first event of a
 * thread takes its slot if it is free (compare-and-swap of owner); if
 * another live thread holds it, the thread's state is in task storage
 * instead, for all its life (it never takes the slot later: its storage
 * is found first). on_exit frees the slot of a thread that ends. owner is
 * the address less the table's own (a pointer difference: the verifier
 * lets privileged programs turn that, not a bare pointer, into a number),
 * tag the thread's stack canary (random, drawn at fork, kept across
 * execve; the start time would do but for a non-leader's execve, which
 * takes the leader's): an address reused by a task after a slot was left
 * behind (a thread that ended while on_exit was not attached) does not
 * match it. tstab_mask + 1 slots of 64 bytes (a power of two, set by
 * the loader before load; the objects that share the table are given the
 * trace object's: user/trace/trace.h trace__tstab_mask).
 */
const volatile __u32 tstab_mask = CABBPF_TSTAB_SLOTS - 1;

struct tslot {
	__u64 owner;
	__u64 tag;
	struct tstate st; /* 48 bytes: a slot is 64 */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CABBPF_TSTAB_SLOTS); /* = tstab_mask + 1 */
	__type(key, __u32);
	__type(value, struct tslot);
} tstab SEC(".maps");

/* The task's key in tstab (never 0: a task is not the map). */
static __always_inline __u64 tstab_key(const struct task_struct *task)
{
	return (__u64)task - (__u64)&tstab;
}

/* See tslot.tag; a kernel built without stack protector: the start time. */
static __always_inline __u64 tstab_tag(const struct task_struct *task)
{
	if (bpf_core_field_exists(task->stack_canary))
		return task->stack_canary;
	return task->start_time;
}

/* task's slot of tstab (NULL: a table smaller than the mask, in an object
 * with no events); *held: whether task holds it. */
static __always_inline struct tslot *tstab_slot(struct task_struct *task, bool *held)
{
	__u64 key = tstab_key(task);
	/* Fibonacci hashing: the product's high bits mix every bit of the
	 * address (task_structs are slab objects: their low bits repeat). */
	__u32 idx = (__u32)((key * 0x9E3779B97F4A7C15ull) >> 32) & tstab_mask;
	struct tslot *s = bpf_map_lookup_elem(&tstab, &idx);

	*held = s && READ_ONCE(s->owner) == key && s->tag == tstab_tag(task);
	return s;
}

/*
 * The state of thread task: its tstab slot, or its task storage; created
 * (zeroed) if create and it has none. NULL: none (or none could be made:
 * task storage full). Any program may call it for any task it holds a
 * trusted pointer to.
 */
static __always_inline struct tstate *pipeline_state(struct task_struct *task, bool create)
{
	bool held;
	struct tslot *s = tstab_slot(task, &held);
	struct tstate *st;

	if (held)
		return &s->st;
	st = bpf_task_storage_get(&tstates, task, 0, 0);
	if (st || !create)
		return st;
	/* Free slots are only ever taken here; a slot left by a thread that
	 * ended unseen (see above) stays taken, and its hash's threads use
	 * task storage. */
	if (s && __sync_val_compare_and_swap(&s->owner, 0, tstab_key(task)) == 0) {
		s->tag = tstab_tag(task);
		__builtin_memset(&s->st, 0, sizeof(s->st));
		s->st.tid = (__u32)task->pid;
		return &s->st;
	}
	if (s)
		bump(CABBPF_STAT_TSTAB_TAKEN);
	st = bpf_task_storage_get(&tstates, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (st && !st->tid)
		st->tid = (__u32)task->pid; /* made now (zeroed), or by a racing program of its own */
	return st;
}

/* Free the tstab slot of a task that ends (on_exit), if it holds one. Its
 * state is zeroed before the slot is released (x86 stores are seen in
 * order; the next owner's compare-and-swap pairs with the release store). */
static __always_inline void pipeline_state_free(struct task_struct *task)
{
	bool held;
	struct tslot *s = tstab_slot(task, &held);

	if (!held)
		return;
	__builtin_memset(&s->st, 0, sizeof(s->st));
	s->tag = 0;
	asm volatile("" ::: "memory");
	WRITE_ONCE(s->owner, 0);
}

/* Claim attempts before an event counts as dropped: a failed claim means
 * another program of this CPU claimed the position in between (it preempted
 * this one), which a handful of retries absorbs. */
#define PIPELINE_CLAIM_TRIES 4

/*
 * Start an event of the current thread: take its state with the re-entry
 * guard set, and claim the next slot of this CPU's region. Returns the
 * slot's event area (CABBPF_SLOT_BYTES - 8 bytes, size must fit), or NULL
 * with the reason counted (never a silent drop): a full ring in drop_stat
 * (CABBPF_STAT_DROPS, _IO_DROPS or _GUARD_DROPS: the event's kind). *stp is set when the guard
 * was taken: the caller fills the record (seq = (*stp)->seq++, only now that
 * the claim succeeded, so drops leave no gap), publishes it with
 * pipeline_submit(), and always ends with pipeline_end(*stp). task is the
 * current task (bpf_get_current_task_btf()), passed in by a caller that
 * has it already: the helper is a call, not inlined on 6.18.
 */
static __always_inline void *pipeline_claim(struct tstate *st, __u32 drop_stat);
static __always_inline void pipeline_close_unseen(struct tstate *st, struct task_struct *task);

static __always_inline void *pipeline_begin_task(__u64 size, struct task_struct *task,
						  struct tstate **stp, __u32 drop_stat)
{
	struct tstate *st;

	*stp = NULL;
	if (size > CABBPF_SLOT_BYTES - 8)
		return NULL; /* constant: folded away */
	st = pipeline_state(task, true);
	if (!st) {
		/* the event is lost (of its kind), and why */
		bump(CABBPF_STAT_NOSTORE);
		bump(drop_stat);
		return NULL;
	}
	/* A probe cannot normally fire inside a probe of the same thread, but
	 * a nested hit would interleave two events under one sequence number. */
	if (st->busy) {
		bump(CABBPF_STAT_REENTRY);
		return NULL;
	}
	st->busy = 1;
	*stp = st;
	pipeline_close_unseen(st, task);
	return pipeline_claim(st, drop_stat);
}

/* pipeline_begin_task() of the current task. */
static __always_inline void *pipeline_begin(__u64 size, struct tstate **stp, __u32 drop_stat)
{
	return pipeline_begin_task(size, bpf_get_current_task_btf(), stp, drop_stat);
}

/* One claim attempt at CPU cpu's head hd: 1 with *ev set (claimed), 0 to
 * try again (a preempting program moved the head), -1 to drop (full). */
static __always_inline int pipeline_try_claim(struct cabbpf_head *hd, __u32 cpu,
					      struct tstate *st, void **ev)
{
	struct cabbpf_slot *slot;
	__u32 idx;
	__u64 h;

	h = READ_ONCE(hd->pos);
	/* Full: the loader has not read position h - 2^k yet. The tail only
	 * grows, so a stale one errs on the full side. Its load comes before
	 * the stores to the slot (x86 does not let a store pass an earlier
	 * load; the compare-and-swap below is a compiler barrier): it pairs
	 * with the release store of tail in drain_cpu() (user/trace/trace.c),
	 * made after the loader's last read of those slots. */
	if (h - READ_ONCE(hd->tail) > ring_mask)
		/* unless h went stale meanwhile (a preempting program
		 * claimed it): then retry at the new head */
		return READ_ONCE(hd->pos) == h ? -1 : 0;
	/* The array lookup checks the index against max_entries. */
	idx = (cpu << ring_shift) | (__u32)(h & ring_mask);
	slot = bpf_map_lookup_elem(&slots, &idx);
	if (!slot)
		return -1;
	/* No hole on failure: the head moves only with a claim. */
	if (__sync_val_compare_and_swap(&hd->pos, h, h + 1) != h)
		return 0;
	st->pub = h + 1;
	*ev = &slot->ev;
	return 1;
}

/*
 * The claim half of pipeline_begin(), for a thread state the caller looked
 * up and marked busy itself (the switch tracepoint writes the event of the
 * thread being switched in, which is not the current task). Returns the
 * event area or NULL (a full ring, counted in drop_stat).
 *
 * PIPELINE_CLAIM_TRIES attempts written out, not a loop: clang 14 makes
 * such a loop's back edge a jump to the instruction before its head, which
 * falls through into it, and the CFG check of kernels before 6.3 refuses a
 * back edge made by a fall-through ("back-edge from insn N to N+1"); clang
 * will not unroll it either (its exits). The verifier walks the attempts
 * one by one, as it walked the loop's iterations.
 */
static __always_inline void *pipeline_claim(struct tstate *st, __u32 drop_stat)
{
	struct cabbpf_head *hd;
	void *ev = NULL;
	__u32 cpu;
	int r;

	/* The program runs with migration disabled: this CPU's region and
	 * head are ours until it ends, shared only with programs that
	 * preempt it on this CPU (hence the compare-and-swap). */
	cpu = bpf_get_smp_processor_id();
	hd = bpf_map_lookup_elem(&heads, &cpu);
	if (!hd)
		goto drop;
	_Static_assert(PIPELINE_CLAIM_TRIES == 4, "the attempts below are written out");
	r = pipeline_try_claim(hd, cpu, st, &ev);
	if (!r)
		r = pipeline_try_claim(hd, cpu, st, &ev);
	if (!r)
		r = pipeline_try_claim(hd, cpu, st, &ev);
	if (!r)
		r = pipeline_try_claim(hd, cpu, st, &ev);
	if (r > 0)
		return ev;
drop:
	bump(drop_stat); /* by kind: a lost I/O event is not a lost call */
	return NULL;
}

/*
 * Publish the event pipeline_begin() returned. Never a wakeup: the loader
 * drains every region each 2 ms whatever happens (user/trace/trace.c), and a
 * 4 MiB region holds ~0.1 s of events; an overflow is still counted
 * (CABBPF_STAT_DROPS).
 */
static __always_inline void pipeline_submit(void *e, struct tstate *st)
{
	__u64 *hdr = (__u64 *)e - 1; /* struct cabbpf_slot: hdr precedes the event */

	/* Release: every store to the event is issued before the header's.
	 * x86 is TSO (stores become visible in program order), so a compiler
	 * barrier is all it takes; it pairs with the loader's acquire load of
	 * the header in drain_cpu() (user/trace/trace.c), which reads the event only
	 * after seeing pos + 1 here. */
	asm volatile("" ::: "memory");
	WRITE_ONCE(*hdr, st->pub);
}

/* Fill and publish e, a claimed slot, as task's CABBPF_EV_SCHED event: the
 * off-CPU interval off, ended at now (bpf/trace.bpf.c on_switch, and
 * pipeline_close_unseen below). Every field is written: slots are reused. */
/* An event of the thread's own that names no function (a switch's
 * off-CPU interval, a CPU-clock sample): filled, numbered and committed. */
static __always_inline void pipeline_put(struct cabbpf_event *e, struct tstate *st,
					 struct task_struct *task, __u32 kind, __u64 ts, __u64 sp,
					 __u32 epoch)
{
	e->tid = pipeline_tid(st, (__u32)task->pid);
	e->pid = task->tgid;
	e->kind = kind;
	e->fid = 0;
	e->seq = st->seq++;
	e->ts = ts;
	e->sp = sp;
	e->epoch = epoch;
	e->pad = 0;
	pipeline_submit(e, st);
}

static __always_inline void pipeline_put_sched(struct cabbpf_event *e, struct tstate *st,
					       struct task_struct *task, __u64 now, __u64 off)
{
	pipeline_put(e, st, task, CABBPF_EV_SCHED, now, off, 0);
}

/*
 * A switch-in the switch tracepoint never reported (bpf/trace.bpf.c
 * on_switch): the thread runs an event of its own, yet its state says it
 * is off its CPU since off_ts. Seen here under load (six tracers at once
 * on 2 CPUs, about one run in 3,000): the wake-up after a 1 ms nanosleep
 * reached no program of ours, with no recursion miss counted, so that
 * sleep showed as on-CPU time. The interval is closed now, by an event of
 * its own ahead of the thread's (it takes the sequence number before it:
 * the caller holds the thread's guard): an upper bound, since it also
 * holds the time on the CPU from the unseen switch-in to this event;
 * counted, so the report can say so. One load and a branch when nothing
 * was missed; off_ts is 0 whenever the thread runs otherwise.
 */
static __always_inline void pipeline_close_unseen(struct tstate *st, struct task_struct *task)
{
	struct cabbpf_event *e;
	__u64 t0 = st->off_ts, now, off;

	if (__builtin_expect(!t0, 1))
		return;
	/* This probe can be preempted anywhere (uprobe programs run with
	 * migration, not preemption, disabled), and on_switch then works on
	 * the same state: now is read before the state is cleared, so an
	 * interval on_switch puts off meanwhile (into off_pend, the thread
	 * being busy) starts after it and is taken with it below, or, once
	 * off_pend is cleared, goes to the next switch-in. Only a preemption
	 * between the load of off_ts and the clock is counted twice (in
	 * now - t0 and in off_pend): the interval stays an upper bound. */
	now = bpf_ktime_get_ns();
	st->off_ts = 0;
	off = now - t0 + st->off_pend;
	st->off_pend = 0;
	bump(CABBPF_STAT_SCHED_UNSEEN);
	e = pipeline_claim(st, CABBPF_STAT_SCHED_DROPS);
	if (!e) {
		/* carried to the next switch-in, like on_switch's drops */
		st->off_pend += off;
		return;
	}
	pipeline_put_sched(e, st, task, now, off);
}

static __always_inline void pipeline_end(struct tstate *st)
{
	if (st)
		st->busy = 0;
}

#endif /* CABBPF_PIPELINE_BPF_H */
