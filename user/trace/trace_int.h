/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The function trace's state, shared by its files (not a public API; the
 * story is in trace.h):
 *   trace.c         opening and loading the BPF object, the rings mapped and
 *                   drained, the gate, pause and resume, the counters;
 *   trace_attach.c  the probes placed (multi-uprobe link sets or per-site
 *                   links), call sites, a group attached again;
 *   trace_detach.c  the probes taken out, slow releases in closer threads.
 * One thread (the loader's main) calls all of them.
 */
#ifndef CABBPF_TRACE_INT_H
#define CABBPF_TRACE_INT_H


#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "user/trace/trace.h"


/* One group's probe links: multi-uprobe links (several when refused sites
 * split the set: [0] entries, [1] returns), or else one perf link per
 * site (entries at even slots, returns at odd ones). */
struct link_set {
	int *mfd[2];
	uint32_t nmfd[2];
	struct bpf_link **links;
	uint32_t nlinks;
};

/* A thread closing link sets taken out of the trace: closing a link takes
 * its breakpoints out at once, then waits for the kernel's grace periods
 * (docs/figures.md, or as long as the target: see trace__attach_group), so
 * the loader does not wait. */
struct closer {
	pthread_t th;
	struct link_set ls;
	uint64_t ns; /* how long the release took (set by the thread) */
};

/* A closer thread mostly waits in close(): a small stack. */
#define CLOSER_STACK (256 * 1024)

struct cpuclock;

struct trace {
	struct trace_opts o;
	struct trace_bpf *skel;
	struct bpf_program *entry, *ret; /* the pair in use (real or floor) */
	int ncpus;
	/* The loader's mapping of the "slots" map: ncpus regions of 2^shift
	 * slots (bpf/pipeline.bpf.h); NULL until map_rings(). */
	struct cabbpf_slot *ring;
	size_t ring_len; /* bytes mapped */
	/* The loader's mapping of the "heads" map (one struct cabbpf_head per
	 * CPU): the loader stores each region's tail there. */
	struct cabbpf_head *heads;
	size_t heads_len;
	/* groups: the per-function hit counters ("fhits"), mapped */
	const volatile uint64_t *fhits;
	size_t fhits_len;
	unsigned shift;
	uint64_t mask;
	uint32_t tstab_slots; /* the thread table's size (bpf/pipeline.bpf.h) */
	uint64_t *cons; /* per CPU: next ring position to read (private) */
	/* the probe links of each group (without o.groups, all in [0]) */
	struct link_set sets[CABBPF_NGROUPS];
	struct bpf_link *exec_link; /* on_exec: execve seen in the target */
	struct bpf_link *exit_link; /* on_exit: threads killed by another's execve */
	struct bpf_link *fork_link; /* on_fork: new processes of the target's */
	struct bpf_link *switch_link; /* on_switch: off-CPU intervals (on-CPU time) */
	struct cpuclock *cpu_samples; /* on_cpu_sample's clocks (o.cpu_sample_ns) */
	/* they counted the progress (o.progress_clock): readable until the
	 * trace is freed, after trace__detach too */
	bool progress_ok;
	uint32_t refused;
	bool multi;
	uint32_t nsized; /* functions with a --size rule */
	uint32_t nvals;	 /* with an --args or --retval rule */
	uint32_t nspecs; /* with either: their fnspecs entries */
	bool paused; /* sampling: between windows (trace__pause) */
	/* link sets being closed, oldest first */
	struct closer **closers;
	uint32_t nclosers, capclosers;
	uint64_t gate;		     /* o.groups: the gate as last stored */
	uint8_t gen[CABBPF_NGROUPS]; /* each group's generation (its links' cookies) */
	bool detached; /* trace__detach ran: what is drained now is the last drain */
	int exe_fd;    /* the traced file, open from load() to read_exe_identity() */
	/* The test hooks of trace.h (0/false unless the environment arms
	 * them): fail the drains once fail_read_at events were read, or the
	 * drains after trace__detach. */
	uint64_t read, fail_read_at;
	bool fail_final;
};

/* trace.c */
/* The entry probe's cookie of fid, and the group and generation bits of
 * a probe of group g (include/cabbpf_event.h). */
uint64_t trace__entry_cookie(const struct trace *t, uint32_t fid);
uint64_t trace__return_cookie(const struct trace *t, uint32_t fid);
uint64_t trace__group_bits(const struct trace *t, unsigned g);
/* Opens and loads the skeleton, multi choosing the probes' attach type.
 * Returns 0 or -errno. */
int trace__load(struct trace *t, bool multi);
/* The kernel's identity of the traced file (device, inode). Returns 0 or
 * -errno (logged at debug level: the trace goes on). */
int trace__read_exe_identity(struct trace *t);
/* The loaded rings mapped (and unmapped) in the loader. Returns 0 or
 * -errno. */
int trace__map_rings(struct trace *t);
void trace__unmap_rings(struct trace *t);

/* trace_attach.c: each returns 0 or -errno */
/* One perf link per site, every function (*logged: said already). */
int trace_attach__perf(struct trace *t, bool *logged);
/* Multi-uprobe link sets of the functions [from, to) with member[fid]
 * (NULL: all) into group g's set; *nattached, unless NULL: how many. */
int trace_attach__range(struct trace *t, unsigned g, const uint8_t *member, uint32_t from,
			uint32_t to, uint32_t *nattached);

/* trace_detach.c */
/* Waits until every closer thread is done. */
void trace_detach__join_closers(struct trace *t);
/* Group g's links out at once, their release in a closer thread. */
void trace_detach__group_async(struct trace *t, unsigned g);

#endif
