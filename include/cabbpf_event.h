/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The event layout shared by bpf/ (producer, in the kernel) and user/
 * (the loader that drains the per-CPU rings). Fixed-width fields only, so
 * both compilers (clang -target bpf and gcc) agree on size and offsets.
 */
#ifndef CABBPF_EVENT_H
#define CABBPF_EVENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Kind 0 is never used: a CAB slot holding 0 means CLEAR (cab/cab.h). */
enum cabbpf_kind {
	CABBPF_EV_ENTRY = 1,  /* uprobe at a function's entry */
	CABBPF_EV_RETURN = 2, /* uretprobe: the function has returned */
	CABBPF_EV_IO = 3,     /* an I/O system call completed (struct cabbpf_io_event) */
	/* The thread reached a guard site (include/cabbpf_guard.h): fid is the
	 * enum cabbpf_guard_site, sp the thread's sp there. Tells the shadow
	 * stacks that frames were unwound by an exception or left on another
	 * stack, so they are closed for that reason and not as "missing". */
	CABBPF_EV_GUARD = 4,
	/* The thread called execve and a new image replaced the old one: every
	 * frame of the old image is gone. fid holds the new executable's
	 * device (s_dev of its inode's superblock, the kernel's encoding:
	 * major << 20 | minor) and sp its inode number, so the loader can
	 * tell whether it is the program it traces; pad 0. With pad
	 * CABBPF_EXEC_KILLED (fid, sp 0): the thread was killed because
	 * another thread of its process called execve: its frames end the
	 * same way, but it is not an execve of its own. */
	CABBPF_EV_EXEC = 5,
	/* A traced thread is back on a CPU after an off-CPU interval
	 * (preempted, asleep, blocked): written by the scheduler's switch
	 * tracepoint at switch-in, with the thread's own sequence number, so
	 * it sits between that thread's calls and returns in program order.
	 * sp holds the interval's length in ns (fid 0); the shadow stacks
	 * take it out of every live frame's on-CPU time. No work is added to
	 * the probes: only the switch path pays. */
	CABBPF_EV_SCHED = 6,
	/* --size (analyzers/isp.h): the designated size of the activation
	 * whose entry event came just before, with the next sequence number.
	 * fid is the function, sp the size: the argument's value, or the
	 * string's length (at most CABBPF_STRLEN_MAX - 1: longer strings read
	 * as that), or CABBPF_SIZE_UNREADABLE when the string could not be
	 * read (a NULL pointer, a page not in memory). Written only for
	 * functions whose entry cookie has CABBPF_COOKIE_SIZED. */
	CABBPF_EV_SIZE = 7,
	/* --times sampled (the default where it loads): the CPU clock
	 * interrupted the thread in user mode (bpf/trace.bpf.c
	 * on_cpu_sample), one period of its own execution, with the
	 * thread's sequence number, so it sits between its calls and
	 * returns in program order: the shadow stack's top frame is where
	 * that time went. sp is the user instruction pointer; fid 0. */
	CABBPF_EV_CPU_SAMPLE = 8,
	/* --args, --retval: one piece of an argument or a return value of
	 * the function fid, read by its probe for functions with a rule only.
	 * An entry's arguments follow its entry event; a return value comes
	 * just before its return event, with the sequence numbers between,
	 * so it belongs to the frame that return closes. epoch holds
	 * CABBPF_VAL_* (the piece's meta: which value, its type, the
	 * register, the part), ts and sp its 16 bytes: an integer in sp, or
	 * bytes [16 * part, 16 * part + len) of a string in ts then sp
	 * (byte order as in memory). A string of up to CABBPF_VAL_STR_MAX
	 * bytes, its NUL included, takes up to CABBPF_VAL_PARTS events. */
	CABBPF_EV_VALUE = 9,
	/* --follow-forks, whole cgroups: the thread forked (fork, vfork: a
	 * new process; a new thread gets none, it starts with no frames),
	 * in the parent thread's stream, with its sequence number at the
	 * fork: the frames open now are the child's too. fid is the child's
	 * tid; sp 0. */
	CABBPF_EV_FORK = 10,
	/* The first event of a forked child (its sequence number 0): fid
	 * is its parent thread's stream tid, sp the sequence number of the
	 * parent's CABBPF_EV_FORK event, or CABBPF_FORK_LOST when that
	 * event was dropped (the child's inherited frames are not known).
	 * The pipeline gives the child a copy of the parent's shadow stack
	 * as it was at that event (pipeline/runner.h, FORKS). */
	CABBPF_EV_FORKED = 11,
};

/* struct cabbpf_event.sp of a CABBPF_EV_FORKED event whose parent's
 * CABBPF_EV_FORK event was dropped (a full ring). */
#define CABBPF_FORK_LOST (~0ULL)

/* struct cabbpf_event.epoch of a CABBPF_EV_VALUE event: 24 bits, as the
 * pipeline's records keep them (pipeline/record.h). */
#define CABBPF_VAL_ITEM(m) ((m) & 7u)	      /* 0..5: --args item; 6: the return value */
#define CABBPF_VAL_TYPE(m) (((m) >> 3) & 3u)  /* CABBPF_VT_* */
#define CABBPF_VAL_REG(m) (((m) >> 5) & 7u)   /* argument register 0..5 (0: retval) */
#define CABBPF_VAL_PART(m) (((m) >> 8) & 3u)  /* which 16 bytes of a string */
#define CABBPF_VAL_LAST 0x400u		      /* the value's last piece */
#define CABBPF_VAL_UNREADABLE 0x800u	      /* the string could not be read */
#define CABBPF_VAL_TRUNC 0x1000u	      /* the string filled the buffer: maybe cut */
#define CABBPF_VAL_LEN(m) (((m) >> 13) & 31u) /* bytes of the string in this piece */
#define CABBPF_VAL_I32 0x40000u		      /* an int: its low 32 bits, signed */
#define CABBPF_VAL_META(item, type, reg, part) \
	((item) | (type) << 3 | (reg) << 5 | (part) << 8)
#define CABBPF_VAL_LEN_SHIFT 13
#define CABBPF_VAL_RET 6
#define CABBPF_VAL_ITEMS 7	 /* six argument items and the return value */
#define CABBPF_VAL_ARGS_MAX 6	 /* items of one function's --args */
#define CABBPF_VAL_STR_MAX 64	 /* a string's bytes read at most, its NUL included */
#define CABBPF_VAL_PARTS 4	 /* CABBPF_VAL_STR_MAX / 16 */

/* What a --args item or --retval reads. */
enum cabbpf_vt {
	CABBPF_VT_NONE = 0,
	CABBPF_VT_INT = 1,    /* the register's 64 bits */
	CABBPF_VT_STR = 2,    /* the NUL-terminated string it points at */
	CABBPF_VT_STRLEN = 3, /* that string's length (up to CABBPF_STRLEN_MAX - 1) */
	/* in struct cabbpf_fnspec only: an int, CABBPF_VT_INT with
	 * CABBPF_VAL_I32 in the events */
	CABBPF_VT_INT32 = 4,
};

/* struct cabbpf_event.pad of a CABBPF_EV_EXEC event (see there). */
#define CABBPF_EXEC_KILLED 1u

/* Whole-tree tracing (--follow-forks, a whole container): a process that
 * execs a program the loader has not looked at yet is stopped at its exec,
 * before its first instruction (bpf/trace.bpf.c on_exec), until its
 * probes are in (user/trace/whole.c); the map exec_held, keyed by its pid,
 * holds this. The loader then puts the image's key (the kernel's, as the
 * exec saw the file) into exec_images, so the next exec of it runs on:
 * with CABBPF_IMG_ARM its return probes armed at the exec (nothing in it
 * reads return addresses: no guard needed), without it unarmed (nothing
 * traced, entry probes only, a runtime that walks its stacks). A program
 * that needs its guard is never put there: each exec of it is held until
 * its guard holds it. */
#define CABBPF_IMG_KNOWN 1u
#define CABBPF_IMG_ARM 2u
struct cabbpf_image_key {
	__u32 dev; /* the inode's superblock s_dev (kernel encoding) */
	__u32 pad;
	__u64 ino;
};
struct cabbpf_exec_held {
	struct cabbpf_image_key img;
	__u64 start_ns; /* the task's start_boottime: a reused pid is another */
	__u64 ts;	/* when it was held (bpf_ktime_get_ns) */
};

/* The entry probe's cookie: fid in the low 26 bits, the probe's group
 * (--budget: which link set it belongs to, opened and closed on its own by
 * the gate's high half, bpf/trace.bpf.c) in bits 26-30,
 * CABBPF_COOKIE_SIZED when the function has a --size, --args or --retval
 * rule (its spec in the "fnspecs" map), the signed sp correction in the high half
 * (user/probe/plan.h). A return probe's cookie: fid, group and
 * CABBPF_COOKIE_SIZED when the function has a --retval rule.
 * With groups, the high half is the sp correction in 24 bits (signed:
 * bits 32-55) and the link set's generation in the top byte: a group used
 * again opens only its new links, whatever the kernel has not yet
 * released of its old ones. */
#define CABBPF_COOKIE_SIZED 0x80000000u
#define CABBPF_COOKIE_FID 0x03ffffffu
#define CABBPF_COOKIE_GRP_SHIFT 26
#define CABBPF_COOKIE_GRP_MASK 31u
#define CABBPF_NGROUPS 32
#define CABBPF_COOKIE_GEN_SHIFT 56
#define CABBPF_SP24_MAX ((1 << 23) - 1)
/* An entry event's fid with this bit: the probe armed no return for the
 * call (whole-container tracing, bpf/trace.bpf.c "armed"); REC_FID_NORET
 * in the pipeline's records. */
#define CABBPF_FID_NORET 0x80000000u

/* What the probes read of a function with rules ("fnspecs" map, by fid;
 * its probes' cookies carry CABBPF_COOKIE_SIZED): its --size argument,
 * its --args items and its --retval. */
struct cabbpf_fnspec {
	__u8 sized;  /* 1: a --size rule: */
	__u8 arg;    /* 0..5: rdi, rsi, rdx, rcx, r8, r9 (x86-64 SysV) */
	__u8 strlen; /* 1: the argument is a string, its length is the size */
	__u8 nvals;  /* --args items, 0..CABBPF_VAL_ARGS_MAX */
	__u8 ret;    /* enum cabbpf_vt of the return value (not STRLEN), or 0 */
	__u8 pad[3];
	__u8 reg[CABBPF_VAL_ARGS_MAX];	/* each item's register, 0..5 */
	__u8 type[CABBPF_VAL_ARGS_MAX]; /* and what it reads, enum cabbpf_vt */
	__u32 pad2;
};

#define CABBPF_STRLEN_MAX 4096 /* bytes read at most, the NUL included */
#define CABBPF_SIZE_UNREADABLE (~0ULL)

/*
 * One call event as the BPF programs write it into the ring of the CPU they
 * run on. 48 bytes, in a 64-byte slot (struct cabbpf_slot).
 */
struct cabbpf_event {
	__u32 tid;  /* kernel pid of the thread */
	__u32 pid;  /* kernel tgid (process id) */
	__u32 kind; /* enum cabbpf_kind */
	__u32 fid;  /* function id = index in the loader's table (BPF cookie) */
	/*
	 * Per-thread sequence number, dense (0, 1, 2, ...) in the thread's
	 * program order. It is taken only after a successful slot claim,
	 * so a dropped event leaves no gap: the analyzer can merge a thread's
	 * chunks from several CPUs' rings without ever waiting for a number
	 * that will not come.
	 */
	__u64 seq;
	__u64 ts; /* bpf_ktime_get_ns() at the probe */
	/*
	 * User stack pointer at the probe. At an entry it points at the
	 * return address; at a return it is one word above that, so
	 * entry.sp + 8 == return.sp identifies a frame even when returns are
	 * lost (longjmp, exceptions, >64 pending uretprobes).
	 */
	__u64 sp;
	/*
	 * Sampling (--sample, --start-disabled): the window the event was
	 * taken in. The loader removes every probe between windows and
	 * raises the epoch before it puts them back, so frames entered in an
	 * earlier window whose returns never came returned while tracing was
	 * off. 0 when sampling is not used.
	 */
	__u32 epoch;
	/* CABBPF_EV_EXEC: 0 or CABBPF_EXEC_KILLED. CABBPF_EV_ENTRY: what
	 * the return-address slot at sp held (CABBPF_SLOT_*), or 0 when not
	 * read. Not written for other kinds. */
	__u32 pad;
};

/*
 * An entry's return-address slot, as the entry probe found it (before
 * the kernel armed this call's return probe). It holds the uretprobe
 * trampoline only when a live frame whose return probe is armed owns
 * the slot, that is, when the new function was reached by a tail call
 * (a jmp) from that frame; otherwise it holds the return address the
 * call just pushed, and a frame the analyzers still have at this slot
 * is dead unless it is the same address (pipeline/shadow.h, ENTRY rule
 * 2). The address travels as a 15-bit tag: the records keep it in the
 * 17 bits above a user stack pointer (pipeline/record.h).
 */
#define CABBPF_SLOT_KNOWN 0x1u /* the slot was read */
#define CABBPF_SLOT_ARMED 0x2u /* it held the trampoline */
#define CABBPF_SLOT_TAG_SHIFT 2
#define CABBPF_SLOT_TAG_MASK 0x7fffu
#define CABBPF_SLOT_BITS 17

/* Indices of the per-CPU counters in the BPF "stats" map. */
enum cabbpf_stat {
	CABBPF_STAT_EVENTS = 0,	 /* reserved: the loader counts events it reads */
	CABBPF_STAT_DROPS = 1,	 /* call events (entry, return) lost: ring full */
	CABBPF_STAT_REENTRY = 2, /* probe hit while the thread was in a probe */
	/* Events lost because the thread's state could not be created
	 * (task storage full: out of memory); also counted as lost of their
	 * kind (CABBPF_STAT_DROPS, _IO_DROPS, _GUARD_DROPS). */
	CABBPF_STAT_NOSTORE = 3,
	CABBPF_STAT_IO_DROPS = 4,    /* I/O events lost: ring full */
	/* guard events lost: ring full; also exec and fork events (a lost
	 * fork event is said again by the runner: forks_unknown or
	 * forks_unclaimed) */
	CABBPF_STAT_GUARD_DROPS = 5,
	/* Switch-in events not written because the ring was full: the
	 * interval is carried in the thread's state to its next switch-in
	 * (added to that event), so on-CPU time stays right unless the thread
	 * ends first. */
	CABBPF_STAT_SCHED_DROPS = 6,
	/* Switch-in events put off because the thread was preempted inside
	 * one of its own probes (its sequence number was taken): carried on
	 * the same way. */
	CABBPF_STAT_SCHED_BUSY = 7,
	/* --lossless (bpf/trace.bpf.c, throttle): threads stopped because
	 * their CPU's ring passed the high-water mark, and events written past
	 * the mark by a thread the tracer does not hold (it cannot be stopped:
	 * a SIGSTOP to it would stop the whole process). */
	CABBPF_STAT_THROTTLES = 8,
	CABBPF_STAT_UNHELD = 9,
	/* Threads whose state lives in task storage because another live
	 * thread held their slot of the thread table (bpf/pipeline.bpf.h):
	 * not a loss, their events cost ~45 ns more each. */
	CABBPF_STAT_TSTAB_TAKEN = 10,
	/* Switch-ins the switch tracepoint never reported: the thread's next
	 * event found it running with its off-CPU interval still open and
	 * closed it there, an upper bound (bpf/pipeline.bpf.h,
	 * pipeline_close_unseen). */
	CABBPF_STAT_SCHED_UNSEEN = 11,
	/* Probe hits in the target, with the gate open, whose event the
	 * programs left out on purpose: the process runs another program
	 * (bpf/trace.bpf.c other_image), or the tests' switch for a kernel
	 * whose probes deliver nothing (test_deliver_nothing). Counted only
	 * on those paths (nothing on the hot path), so that a trace a filter
	 * emptied is seen and said (user/modes/ftrace.c), never a silently
	 * empty profile. */
	CABBPF_STAT_HITS_OTHER_IMAGE = 12,
	CABBPF_STAT_HITS_SUPPRESSED = 13,
	/* New processes the target started while traced (fork, vfork, clone
	 * without CLONE_THREAD: bpf/trace.bpf.c on_fork): cabbpf traces one
	 * process, so their calls are not in the report, which says so. */
	CABBPF_STAT_FORKS = 14,
	/* CPU-clock samples (CABBPF_EV_CPU_SAMPLE) of a traced thread that
	 * had no event yet, so no calling context: the time is outside every
	 * traced function (the report's <root>); samples not written because
	 * the ring was full; samples that found the thread inside one of its
	 * own probes (never expected in user mode: counted to be sure). */
	CABBPF_STAT_CPU_SAMPLES_NOSTATE = 15,
	CABBPF_STAT_CPU_SAMPLE_DROPS = 16,
	CABBPF_STAT_CPU_SAMPLES_BUSY = 17,
	/* CPU-clock samples that landed in the probes' own user-mode code
	 * (the process's xol area: the return probes' trampoline, the
	 * instructions single-stepped out of line): the probes' cost, not
	 * the program's, left out. */
	CABBPF_STAT_CPU_SAMPLES_PROBE = 18,
	/* CPU-clock samples that interrupted the target in kernel mode: in a
	 * system call of the program's own (its system time: kept, an event
	 * like a user-mode sample), or in any other kernel entry (a probe's
	 * trap, the return probes' system call, an interrupt): left out and
	 * counted (docs/times.md). */
	CABBPF_STAT_CPU_SAMPLES_SYSCALL = 19,
	CABBPF_STAT_CPU_SAMPLES_TRAP = 20,
	/* ... in a page fault of the program's own (the kernel entry at the
	 * bottom of the interrupted stack is the page fault's): kept, like a
	 * system call's. */
	CABBPF_STAT_CPU_SAMPLES_FAULT = 21,
	/* ... in user mode, delivered late as a probe's trap returned to the
	 * thread (bpf/trace.bpf.c resume_check): the trap's time, left out. */
	CABBPF_STAT_CPU_SAMPLES_RESUME = 22,
	CABBPF_STAT__MAX = 23,
};

/* Slots of the probes' thread table (bpf/pipeline.bpf.h "tstab"): 64 bytes
 * each, a power of two. */
#define CABBPF_TSTAB_SLOTS 16384

/*
 * I/O system calls that move a buffer between the thread's memory and the
 * outside (Coppa et al., aprof-trms, section 4.3/5): the input family delivers external
 * input, the output family sends the thread's memory out.
 *
 * The calls that move data between two fds inside the kernel (sendfile,
 * splice, copy_file_range) have two sides, each its own value: the _IN side
 * is charged to the source fd (fd_in; for sendfile in_fd) and counts as
 * input, the _OUT side to the destination fd and counts as output; both
 * carry the bytes the call moved, so one such call is one input call plus
 * one output call. The bytes never enter the thread's memory, but the work
 * is done on its behalf and grows with them: a function's external input
 * includes them. vmsplice has one side, given by the pipe end: into a write
 * end (user memory -> pipe) it is output, from a read end (pipe -> user
 * memory) input.
 */
enum cabbpf_sc {
	CABBPF_SC_READ = 0,
	CABBPF_SC_READV,
	CABBPF_SC_PREAD64,
	CABBPF_SC_PREADV,
	CABBPF_SC_PREADV2,
	CABBPF_SC_RECVFROM,
	CABBPF_SC_RECVMSG,
	CABBPF_SC_RECVMMSG,
	CABBPF_SC_MSGRCV,
	CABBPF_SC_SENDFILE_IN,
	CABBPF_SC_SPLICE_IN,
	CABBPF_SC_COPY_FILE_RANGE_IN,
	CABBPF_SC_VMSPLICE_IN,
	CABBPF_SC_WRITE, /* first of the output family */
	CABBPF_SC_WRITEV,
	CABBPF_SC_PWRITE64,
	CABBPF_SC_PWRITEV,
	CABBPF_SC_PWRITEV2,
	CABBPF_SC_SENDTO,
	CABBPF_SC_SENDMSG,
	CABBPF_SC_SENDMMSG,
	CABBPF_SC_MSGSND,
	CABBPF_SC_SENDFILE_OUT,
	CABBPF_SC_SPLICE_OUT,
	CABBPF_SC_COPY_FILE_RANGE_OUT,
	CABBPF_SC_VMSPLICE_OUT,
	CABBPF_SC__MAX = 26,
};

#define CABBPF_SC_IS_OUTPUT(sc) ((sc) >= CABBPF_SC_WRITE)
/* The other side of a two-sided call's input side (sendfile, splice,
 * copy_file_range; not vmsplice, which has one). */
#define CABBPF_SC_OUT_SIDE(sc) ((sc) + (CABBPF_SC_SENDFILE_OUT - CABBPF_SC_SENDFILE_IN))

/* What the fd refers to, as far as the kernel can tell cheaply (inode mode
 * and, for character devices, the tty major numbers). */
enum cabbpf_fdkind {
	CABBPF_FD_OTHER = 0,
	CABBPF_FD_FILE = 1, /* regular file */
	CABBPF_FD_PIPE = 2, /* pipe or FIFO */
	CABBPF_FD_SOCKET = 3,
	CABBPF_FD_TTY = 4,  /* tty, console, pty */
	CABBPF_FD_NONE = 5, /* no fd: SysV message queue (msgrcv/msgsnd) */
	CABBPF_FD__MAX = 6,
};

/* Flags of struct cabbpf_io_event. */
#define CABBPF_IO_ERR 1u /* the call failed: ret holds -errno, no bytes moved */

/*
 * One completed I/O system call, written to the same per-CPU ring and with
 * the same per-thread sequence number as the call events, so analyzers see
 * it in the thread's program order between calls and returns. The leading
 * fields match struct cabbpf_event (tid, pid, kind, then seq and ts at the
 * same offsets), so a reader can switch on kind first. 56 bytes: it fills a
 * struct cabbpf_slot after its header.
 */
struct cabbpf_io_event {
	__u32 tid;
	__u32 pid;
	__u32 kind;  /* CABBPF_EV_IO */
	__u8 sc;     /* enum cabbpf_sc */
	__u8 fdkind; /* enum cabbpf_fdkind */
	__u8 flags;  /* CABBPF_IO_* */
	__u8 pad;
	__u64 seq;
	__u64 ts;  /* bpf_ktime_get_ns() at the syscall's exit */
	__s64 ret; /* bytes moved, or -errno (flags & CABBPF_IO_ERR) */
	__u64 buf; /* user buffer (or iovec / msghdr) address */
	/* Bytes requested (iovec lengths summed; see docs), saturated at
	 * UINT32_MAX: 32 bits keep the event within a 56-byte slot payload,
	 * and the analyzers' records hold 32 bits anyway (rec__clamp32). */
	__u32 req;
	__s32 fd; /* -1 for msgrcv/msgsnd */
};

/*
 * The kernel ring (bpf/pipeline.bpf.h, user/trace/trace.c): one mmapable BPF array
 * of 64-byte slots, one cache line each, split into one region of 2^k slots
 * per possible CPU. The BPF programs of that CPU produce into its region, the
 * loader consumes it through its own mapping. The slot's header publishes
 * it: p + 1 once it holds the event of ring position p (the producer writes
 * it last). Whether a slot may be written is not in the slot: the loader
 * says how far it has read in its CPU's struct cabbpf_head (tail), and a
 * producer claims position p only while p - tail < 2^k. So a producer only
 * ever stores to a slot, never loads from it: the line, last touched a lap
 * ago and far from this CPU's caches in a ring of megabytes, is fetched
 * behind the stores instead of in front of the claim, and the loader never
 * dirties a slot line (which it did, writing back a free token per slot).
 * Measured at 4 MiB (PVM guest, 2026-11-27, best of 5): 3-17 ns less per
 * event in the programs, 10-14 ns less of the loader's CPU; at 16 MiB,
 * where a lap is far out of the caches, the stores' misses cost the
 * same as the load's did (docs/bench/overhead-2026-11-27-ring.txt).
 * A header from an earlier lap (p + 1 - 2^k, or 0 in a new map) never
 * equals the p + 1 the loader waits for.
 */
#define CABBPF_SLOT_BYTES 64

struct cabbpf_slot {
	__u64 hdr;
	union {
		struct cabbpf_event ev;
		struct cabbpf_io_event io;
		__u8 raw[CABBPF_SLOT_BYTES - 8];
	};
};

_Static_assert(sizeof(struct cabbpf_event) <= CABBPF_SLOT_BYTES - 8, "call event fits a slot");
_Static_assert(sizeof(struct cabbpf_io_event) <= CABBPF_SLOT_BYTES - 8, "I/O event fits a slot");
_Static_assert(sizeof(struct cabbpf_slot) == CABBPF_SLOT_BYTES, "a slot is one cache line");

/*
 * A CPU region's two positions, one cache line per CPU (the "heads" map,
 * mmapable): pos, the next position to claim, moved only by that CPU's
 * programs (compare-and-swap: a program that preempts another on the same
 * CPU claims too); tail, the first position the loader has not finished
 * reading, stored only by the loader, in batches (user/trace/trace.c
 * drain_cpu), so the producers' line is taken from them a few times per
 * drain, not per event.
 */
struct cabbpf_head {
	__u64 pos;
	__u64 tail;
	__u64 pad[6];
};

_Static_assert(sizeof(struct cabbpf_head) == 64, "a head is one cache line");

/* Indices of the per-CPU counters of bpf/iotrace.bpf.c's "iocounts" map. */
enum cabbpf_iostat {
	CABBPF_IOSTAT_CALLS = 0,	   /* I/O syscalls seen (after filters) */
	CABBPF_IOSTAT_STATS_FULL = 1,	   /* --io: per-process key not created, map full */
	CABBPF_IOSTAT_FILES_FULL = 2,	   /* --io: per-file key not created, map full */
	CABBPF_IOSTAT_COMPAT = 3,	   /* 32-bit (ia32) syscalls: not decoded */
	CABBPF_IOSTAT_EVENTS = 4,	   /* function-tracing mode: I/O events written to a
					      ring (ring-full drops count in the shared
					      CABBPF_STAT_DROPS: a lost I/O event is a loss) */
	CABBPF_IOSTAT_STATS_NEW = 5,	   /* --io: per-process keys created (the loader
					      collects early when many appeared) */
	CABBPF_IOSTAT_FILES_NEW = 6,	   /* --io: per-file keys created */
	CABBPF_IOSTAT_EXIT_SENT = 7,	   /* --io: slots of ended processes handed to
					      user space whole (ring "iodone"), no key */
	CABBPF_IOSTAT_EXIT_RING_FULL = 8,  /* --io: such slots that found the ring
					      full: into the maps instead */
	CABBPF_IOSTAT_LIVE_SENT = 9,	   /* --io: slots of live processes whose map key
					      could not be created (map full, or the
					      kernel's allocator empty) sent through
					      "iodone" instead: not lost */
	CABBPF_IOSTAT_LIVE_RING_FULL = 10, /* --io: such slots that found the ring full
					      too (lost: counted in *_FULL) */
	CABBPF_IOSTAT__MAX = 11,
};

/* --io mode: in-kernel aggregates (bpf/iotrace.bpf.c maps "iostats", "iofiles"). */
#define CABBPF_HIST_BUCKETS 32 /* log2 buckets: 0 (0 bytes), 1 (1), 2 (2-3), ... */

struct cabbpf_iostat_key {
	__u32 pid;
	__u8 sc;
	__u8 fdkind;
	__u16 pad;
	__u64 cgid; /* cgroup v2 id (inode number of the cgroup directory) */
};

struct cabbpf_iostat_val {
	__u64 calls;
	__u64 errors;
	__u64 bytes;	   /* returned bytes, summed */
	__u64 req;	   /* requested bytes, summed */
	__u64 short_calls; /* successful, but fewer bytes than requested */
	__u64 hist_req[CABBPF_HIST_BUCKETS];
	__u64 hist_ret[CABBPF_HIST_BUCKETS];
	char comm[16]; /* the first thread that used the key on this CPU */
};

struct cabbpf_iofile_key {
	__u32 pid;
	__s32 fd;
	__u64 ino; /* inode number: an fd reused for another file is another key */
};

/* --io: the names of a cgroup, taken by the kernel when its first key is
 * created (map "cgnames", keyed by cgroup id), so a container that ended
 * before user space could walk the cgroup tree is still named: its leaf
 * directory (e.g. "libpod-<id>", "docker-<id>.scope") and the parent's
 * (e.g. "docker" for the cgroupfs layout "docker/<id>"). */
#define CABBPF_CGNAME_LEN 96
struct cabbpf_cgname {
	char leaf[CABBPF_CGNAME_LEN];
	char parent[CABBPF_CGNAME_LEN];
};

struct cabbpf_iofile_val {
	__u64 in_bytes;
	__u64 out_bytes;
	__u64 in_calls;
	__u64 out_calls;
	__u64 dev; /* s_dev of the inode's superblock */
	__u64 cgid;
	__u32 fdkind;
	__u32 pad;
	/* Last path component (dentry name) when the key was created, so a
	 * file closed before user space could look at /proc/PID/fd is still
	 * named. Only in the creating CPU's value; empty elsewhere. */
	char name[48];
};

/* --io: one per-thread accumulator (bpf/iotrace.bpf.c's struct slot) of a
 * process whose last thread is exiting, sent whole through the ring
 * "iodone" instead of into "iostats"/"iofiles": a short-lived process then
 * takes no map key, and the maps cannot fill with the dead between two
 * reads. Also (flags CABBPF_IODONE_LIVE) the slot of a live process whose
 * map key could not be created: a full map refuses every new key, and
 * Linux 6.1 refused a few of a map far from full (the key's memory not
 * allocated: forty processes run one after another under emulation). The
 * fields are those of both keys and values. */
#define CABBPF_IODONE_LIVE 1u
struct cabbpf_iodone {
	__u32 pid; /* tgid */
	__s32 fd;  /* -1: no fd (msgsnd/msgrcv) */
	__u8 sc;   /* enum cabbpf_sc */
	__u8 fdkind;
	__u16 flags; /* CABBPF_IODONE_* */
	__u32 calls;
	__u64 cgid;
	__u64 ino;
	__u64 dev;
	/* The process's start (its leader's start_boottime, ns): which process
	 * under pid this is, as /proc/PID/stat's starttime (clock ticks) says
	 * of the one there now. */
	__u64 start_ns;
	__u64 bytes;
	__u64 req;
	__u32 errors;
	__u32 short_calls;
	__u32 hist_req[CABBPF_HIST_BUCKETS];
	__u32 hist_ret[CABBPF_HIST_BUCKETS];
	char comm[16];
	char name[48]; /* dentry name of the fd's file when the slot was filled */
};

#endif /* CABBPF_EVENT_H */
