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
};

/*
 * One call event as the BPF programs write it into the ring of the CPU they
 * run on. 40 bytes; the ring adds an 8-byte header.
 */
struct cabbpf_event {
	__u32 tid;  /* kernel pid of the thread */
	__u32 pid;  /* kernel tgid (process id) */
	__u32 kind; /* enum cabbpf_kind */
	__u32 fid;  /* function id = index in the loader's table (BPF cookie) */
	/*
	 * Per-thread sequence number, dense (0, 1, 2, ...) in the thread's
	 * program order. It is taken only after a successful ring reserve,
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
};

/* Indices of the per-CPU counters in the BPF "stats" map. */
enum cabbpf_stat {
	CABBPF_STAT_EVENTS = 0,  /* events written to a ring */
	CABBPF_STAT_DROPS = 1,   /* events lost: ring full */
	CABBPF_STAT_REENTRY = 2, /* probe hit while the thread was in a probe */
	CABBPF_STAT_NOSTORE = 3, /* task storage could not be created */
	CABBPF_STAT__MAX = 4,
};

#endif /* CABBPF_EVENT_H */
