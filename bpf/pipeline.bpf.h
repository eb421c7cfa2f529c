/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The maps of the event pipeline, shared by bpf/trace.bpf.c (calls and
 * returns) and bpf/io.bpf.c (I/O system calls): each object declares them
 * from this one definition, and the loader hands io.bpf.c the trace
 * object's instances with bpf_map__reuse_fd(), so both write into the same
 * per-CPU rings with the same per-thread sequence numbers.
 */
#ifndef CABBPF_PIPELINE_BPF_H
#define CABBPF_PIPELINE_BPF_H

/* Template of the per-CPU rings (one page: it only gives the type). The
 * loader creates one ring per possible CPU, of the size the user chose. */
struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* = number of possible CPUs, set by the loader */
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

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
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tstate);
} tstates SEC(".maps");

static __always_inline void bump(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1;
}

#endif /* CABBPF_PIPELINE_BPF_H */
