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

/*
 * Start an event of the current thread: take its state with the re-entry
 * guard set, and reserve size bytes in this CPU's ring. Returns the record,
 * or NULL with the reason counted (never a silent drop). *stp is set when the
 * guard was taken: the caller fills the record (seq = (*stp)->seq++, only
 * now that the reserve succeeded, so drops leave no gap), submits it with
 * pipeline_submit(), and always ends with pipeline_end(*stp).
 */
static __always_inline void *pipeline_begin(__u64 size, struct tstate **stp)
{
	struct tstate *st;
	__u32 cpu;
	void *rb, *e;

	*stp = NULL;
	st = bpf_task_storage_get(&tstates, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		bump(CABBPF_STAT_NOSTORE);
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
	cpu = bpf_get_smp_processor_id();
	rb = bpf_map_lookup_elem(&rings, &cpu);
	e = rb ? bpf_ringbuf_reserve(rb, size, 0) : NULL;
	if (!e)
		bump(CABBPF_STAT_DROPS);
	return e;
}

/*
 * Never a wakeup: the loader drains every ring each 2 ms whatever happens
 * (user/trace.c), and a 16 MiB ring holds ~0.2 s of events. Asking how full
 * the ring is costs ~85 ns here (a cache miss on the consumer position the
 * loader writes from another core), a wakeup ~1 us; an overflow is still
 * counted (CABBPF_STAT_DROPS).
 */
static __always_inline void pipeline_submit(void *e)
{
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

static __always_inline void pipeline_end(struct tstate *st)
{
	if (st)
		st->busy = 0;
}

#endif /* CABBPF_PIPELINE_BPF_H */
