/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The runner: the consumer side of the pipeline. Analyzer threads take whole
 * chunks from the per-processor CAB buffers (cab/cab.h, struct cab_pp) while
 * the loader produces them, put every program thread's events back into
 * program order, run them through that thread's shadow stack
 * (pipeline/shadow.h) and feed the selected analyzers (analyzers/analyzer.h).
 *
 * Order. A chunk holds consecutive records of one thread; its header carries
 * the tid and the per-thread sequence number of its first record, and
 * sequence numbers are dense (the BPF side takes one only after a successful
 * ring reserve). For each tid the runner keeps the next expected sequence
 * number. A chunk that starts there is analyzed at once, straight from the
 * CAB buffer; any other chunk (the thread migrated and its earlier events sit
 * in another CPU's buffer that has not been read yet) is copied aside into
 * the tid's pending set, a min-heap by sequence number, and analyzed as soon
 * as the hole before it fills. At the end (runner__join) the chunks still
 * pending are analyzed in sequence order and each hole is counted as an
 * order gap: in exhaustive mode there should be none. Records whose sequence
 * number was already analyzed are skipped and counted (never expected). A
 * tid that starts over at sequence 0 is taken to be a new thread that reused
 * the id: its old shadow stack is abandoned (frames counted missing); chunks
 * of the old thread still waiting for a hole (there should be none) would be
 * analyzed as the new thread's.
 * To bound memory (sampling mode recycles chunks, so holes there are real),
 * when one analyzer thread holds more than max_pending records out of order,
 * the hole of the thread that just grew is given up on early: counted as an
 * order gap, and analysis continues after it.
 *
 * Threads. With N analyzer threads, buffer b is read by thread b % N only
 * (each cab_pp has one consumer), and program thread tid is analyzed by
 * thread tid % N only: that thread owns the tid's order state, shadow stack
 * and its own instance of every analyzer, so the hot path takes no lock. A
 * chunk read by a thread that does not own its tid is copied into the
 * owner's inbox (a mutex-protected FIFO, one lock per chunk, not per event).
 * A thread stops when its buffers are all drained, no thread is still
 * reading buffers (so nobody can forward to it any more) and its inbox is
 * empty. runner__join then analyzes what is still pending and merges the
 * per-thread analyzer instances into one (analyzer_ops.merge). With N = 1
 * (the default) there is no forwarding at all.
 *
 * Idle threads back off politely: a few pause instructions, then nanosleep
 * doubling from 1 us to 1 ms, because the target and the loader share the
 * machine's few cores.
 *
 * Processes (runner_opts.per_process, whole-container tracing): every
 * chunk carries its thread's process id (struct cab_chunk's tag), and
 * each analyzer thread keeps one instance of every analyzer per process
 * as well; a thread is bound to its process's instances when first seen
 * (again when its tid is reused, by whichever process the tag then
 * names). runner__join folds every process's instances into the merged
 * result (what a run without per_process would report, exactly: the
 * analyzers merge disjoint sets of threads) and the analyzer threads'
 * instances of one process into one (runner__proc_analyzer_at).
 *
 * A growing function table (runner_opts.nfuncs_used): functions are
 * added while the analyzers run (whole-container tracing attaches the
 * executables of processes started later). nfuncs is then the tables'
 * room, fixed for the run (every analyzer sizes its per-function arrays
 * by it); the names of a new fid are written before any event can carry
 * it (the loader writes them, then attaches the probes, then publishes
 * the chunks the events come in: the CAB's release/acquire orders them).
 *
 * Forks (--follow-forks, a whole cgroup; pipeline/shadow.h, FORKS): a
 * forked child's shadow stack starts as a copy of its parent thread's at
 * the fork. The parent's stream holds a FORK record at its place in the
 * parent's order, and the child's first record (sequence 0) is a FORKED
 * naming the parent's stream and that FORK's sequence number
 * (include/cabbpf_event.h). The parent's analyzer thread, dispatching
 * the FORK, copies the parent's live frames into a table of the runner
 * (one lock, one entry per fork) under the child's tid; the child's
 * analyzer thread takes the copy before it analyzes the child's first
 * record. The child's events may come first (another stream, another
 * CPU, maybe another analyzer thread): they are then held in the
 * child's pending set, which each analyzer thread looks at again when
 * copies were added, without ever blocking. The wait is bounded: a
 * FORKED whose parent's FORK was dropped in the kernel says so (the
 * child starts empty at once), and a child still waiting when its
 * analyzer thread holds more than max_pending records, or at the join
 * (the parents' pending records are analyzed first, so grandchildren
 * find their parents' copies), starts with no inherited frame: both are
 * counted (runner_stats.forks_unknown). A copy no child took (its FORKED
 * was dropped: it started empty) is counted too (forks_unclaimed).
 *
 * Memory: the runner does not own the buffers; they must outlive
 * runner__join(). Function names are borrowed too and must outlive the
 * runner.
 */
#ifndef ANALYZERS_RUNNER_H
#define ANALYZERS_RUNNER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pipeline/shadow.h"

struct an_bin;
struct an_src;
struct cab_pp;
struct cct_opts;
struct isp_opts;
struct replay_opts;
struct json;
struct runner;
struct an_windows;
struct an_budget;

struct runner_opts {
	const char *const *fnames; /* function names by fid (borrowed) */
	const char *const *lnames; /* linkage names by fid, or NULL (borrowed) */
	uint32_t nfuncs;	   /* records with fid >= nfuncs are skipped */
	/* where each function is (nfuncs entries) and its binaries
	 * (analyzers/analyzer.h), or NULL: borrowed */
	const struct an_src *src;
	const struct an_bin *bins;
	uint32_t nbins;
	/* a table that grows during the run (see above), or NULL: the
	 * functions it holds, published by the loader (release) as it adds
	 * them; <= nfuncs. Read at the join: merges and reports go over
	 * that many. Must outlive the runner. */
	const _Atomic uint32_t *nfuncs_used;
	/* one analyzer instance per process as well (see above) */
	bool per_process;
	/* JSON lists only the functions called (an_ctx.called_only) */
	bool called_only;
	const char *analyzers;	   /* comma list, e.g. "count,callgraph"; NULL = all
				      but the opt-in ones (isp) */
	unsigned nthreads;	   /* analyzer threads; 0 = 1 */
	unsigned top;		   /* rows per text table; 0 = 50 */
	bool no_returns;	   /* --entry-only: no return probes (report wording) */
	const struct cct_opts *cct; /* the cct analyzer's options (borrowed), or NULL */
	uint64_t timeline_limit;    /* the timeline analyzer's bound; 0: default */
	const struct isp_opts *isp; /* the isp analyzer's options (borrowed), or NULL */
	const struct replay_opts *replay; /* cabbpf replay's (borrowed): an_ctx.replay */
	const char *const *hist;    /* --hist globs (borrowed): an_ctx.hist */
	size_t nhist;
	uint64_t slower_ns;	   /* --slower-than: an_ctx.slower_ns */
	unsigned slowest;	   /* --slowest: an_ctx.slowest */
	/* --times sampled: an_ctx.aft_in, aft_out (borrowed; NULL: none) */
	const uint32_t *aft_in, *aft_out;
	size_t max_pending;	   /* out-of-order records held per analyzer
				      thread before a hole is given up on;
				      0 = 4M records (about 96 MiB) */
	/* cabbpf record (user/record/recorder.h): every chunk taken from a
	 * buffer is handed to tap first, as the analyzers receive it (before
	 * any reordering). Called from the analyzer threads, concurrently when
	 * nthreads > 1; the records are valid during the call only. tap_only:
	 * the chunks are not analyzed (a recording without a live report). */
	void (*tap)(void *ctx, uint32_t tid, uint64_t seq, const uint64_t *recs, uint32_t nrec);
	void *tap_ctx;
	bool tap_only;
	/* --budget: bitmap of the partial epochs (pipeline/shadow.h, BUDGET),
	 * written by the loader while the analysis runs; NULL: none */
	const uint8_t *partial;
};

struct runner_stats {
	uint64_t chunks;	      /* chunks taken or fed */
	uint64_t records;	      /* call records analyzed */
	uint64_t io_records;	      /* I/O records analyzed (not in records) */
	uint64_t guard_records;	      /* GUARD records analyzed (not in records) */
	uint64_t sched_records;	      /* SCHED records (off-CPU intervals; not in records) */
	uint64_t sample_records;      /* CPU_SAMPLE records (--times sampled; not in records) */
	uint64_t size_records;	      /* SIZE records (--size; not in records) */
	uint64_t size_unset;	      /* of those: no frame took it (unreadable, or
					 its entry was lost) */
	uint64_t value_records;	      /* VALUE records (--args, --retval; not in records) */
	uint64_t value_unset;	      /* of those: no frame took it (its entry was
					 lost, or the stack has another on top) */
	uint64_t bad_records;	      /* unknown kind or fid >= nfuncs: skipped */
	uint64_t dup_records;	      /* sequence number already analyzed: skipped */
	uint64_t nomem_records;	      /* could not be held aside (out of memory): lost */
	uint64_t out_of_order;	      /* chunks that waited for an earlier one */
	uint64_t forwarded;	      /* chunks handed to another analyzer thread */
	uint64_t order_gaps;	      /* holes in a thread's sequence never filled */
	uint64_t gap_records;	      /* sequence numbers in those holes */
	uint64_t forced_gaps;	      /* of order_gaps: given up early (max_pending) */
	uint64_t tid_reuse;	      /* a tid restarted at sequence 0 */
	uint64_t unattributed;	      /* per_process: threads in the merged figures
					 only (their process's instances could not be
					 made: out of memory) */
	/* forks (see Forks above): children that started with their
	 * parent's frames (returns.inherited of them in all); children
	 * whose parent's frames are not known (its FORK record lost, or
	 * not come when the wait gave up), started empty; copies of a
	 * parent's frames no child took (the child's FORKED record lost);
	 * children whose events waited for their parent's */
	uint64_t forks_inherited;
	uint64_t forks_unknown;
	uint64_t forks_unclaimed;
	uint64_t forks_waited;
	uint64_t threads;	      /* program threads seen */
	uint64_t open;		      /* frames still on a shadow stack at the end */
	struct shadow_counts returns; /* summed over all program threads */
};

/*
 * Make a runner for the buffers bufs[0..nbufs-1] (nbufs may be 0 when events
 * come only through runner__feed). Selects the analyzers named in
 * o->analyzers. Returns 0 and *out (free with runner__free), -EINVAL (bad
 * options or unknown analyzer, after logging the valid names) or -ENOMEM.
 * Thread: any; the runner is then used by that thread only (setup).
 */
int runner__new(const struct runner_opts *o, struct cab_pp **bufs, unsigned nbufs,
		struct runner **out);

/*
 * Start the analyzer threads; they consume chunks concurrently with the
 * producer until every buffer is closed and drained. Returns 0 or -errno
 * (pthread_create; the threads already started are stopped again).
 * Call once, from the setup thread.
 */
int runner__start(struct runner *r);

/*
 * Wait until every buffer is drained (the producer closed it) and every
 * event is analyzed, analyze what is still held out of order (counting the
 * gaps), and merge the analyzer threads' results. Also valid without
 * runner__start (events came through runner__feed). Returns 0, or -ENOMEM
 * if merging the results failed. Call once, from the setup thread.
 */
int runner__join(struct runner *r);

/*
 * Analyze one chunk synchronously in the calling thread, exactly as if it
 * had been taken from a buffer: recs holds nrec records of REC_WORDS words
 * (pipeline/record.h) of thread tid, the first with sequence number seq.
 * The records are copied if they must wait. For tests and offline replay.
 * Returns 0 or -ENOMEM (the records are then counted in nomem_records).
 * Thread: the setup thread, before runner__start or instead of it.
 */
int runner__feed(struct runner *r, uint32_t tid, uint64_t seq, const uint64_t *recs, uint32_t nrec);
/* The same for a chunk tagged tag (its thread's process: per_process). */
int runner__feed_tag(struct runner *r, uint32_t tid, uint32_t tag, uint64_t seq,
		     const uint64_t *recs, uint32_t nrec);

/* After runner__join: the counters. Any thread. */
void runner__stats(const struct runner *r, struct runner_stats *st);

/*
 * After runner__join: the merged instance of the analyzer named name (to
 * read with that analyzer's query functions, e.g. analyzers/count.h), or
 * NULL if it was not selected. Owned by the runner. Any thread.
 */
const void *runner__analyzer(const struct runner *r, const char *name);

/*
 * After runner__join, before the reports: the sampling windows (w outlives
 * the runner's reports; NULL: no sampling), so the analyzers can estimate
 * the whole run (analyzers/sampling.h). Thread: the setup thread.
 */
void runner__set_windows(struct runner *r, const struct an_windows *w);
/* The same for --budget's epochs (struct an_budget, analyzers/sampling.h). */
void runner__set_budget(struct runner *r, const struct an_budget *b);
/* The same for --times sampled: the CPU clock's period in ns, when the
 * sampler ran all along (an_ctx.cpu_sample_ns); 0: the times are the
 * traced ones. kernel: what kernel-mode time it sampled too (enum an_ktime,
 * an_ctx.cpu_sample_kernel). */
void runner__set_cpu_sample(struct runner *r, uint64_t period_ns, unsigned kernel);
/* What runner__set_cpu_sample set (0: none). Any thread. */
uint64_t runner__cpu_sample(const struct runner *r);

/*
 * Before the reports: where each function is (src: nfuncs entries, bins:
 * nbins; both outlive the reports; NULL: not known), when it was learnt
 * after runner__new (a recording's SOURCE block comes last). Thread: the
 * setup thread, no analysis thread running.
 */
void runner__set_src(struct runner *r, const struct an_src *src, const struct an_bin *bins,
		     uint32_t nbins);

/*
 * After runner__join, before the reports: the events lost in the run (call
 * and I/O events a full kernel ring dropped, records --cab-mode sampling
 * overwrote), so the reports mark the counts they make lower bounds
 * (analyzers/analyzer.h, AN_LOST_*). Thread: the setup thread.
 */
void runner__set_lost(struct runner *r, uint64_t calls, uint64_t io, uint64_t overwritten);

/*
 * After runner__join, before the reports: how many of the functions were
 * traced (the rest refused by the kernel), the total the reports count
 * functions of (an_ctx.ntraced). Thread: the setup thread.
 */
void runner__set_traced(struct runner *r, uint32_t ntraced);

/*
 * The results, as data for the report (user/report/sections.h writes
 * them). After runner__join; any thread, the runner unchanged meanwhile.
 *
 * The selected analyzers in report order: how many (0 before the join),
 * and the a-th's ops and merged instance (*state; NULL, and NULL
 * returned, when a is out of range). Owned by the runner.
 */
size_t runner__nanalyzers(const struct runner *r);
const struct analyzer_ops *runner__analyzer_at(const struct runner *r, size_t a, void **state);

/* What runner__set_lost was told, and the AN_LOST_* kinds that were lost
 * (an_ctx.lost). */
struct runner_losses {
	uint64_t calls, io, overwritten;
	unsigned kinds;
};
void runner__losses(const struct runner *r, struct runner_losses *out);

/* runner_opts.no_returns and .per_process, and the analysis threads. */
bool runner__no_returns(const struct runner *r);
bool runner__per_process(const struct runner *r);
unsigned runner__nworkers(const struct runner *r);

/*
 * per_process, after runner__join: the processes whose threads were
 * analyzed, in pid order (i < runner__nprocs), each with its own
 * analyzers' results: its pid; its counters (threads, records,
 * io_records, open, returns; the rest 0); the instance of analyzer name
 * (NULL if not selected), or the a-th's ops and instance as
 * runner__analyzer_at (NULL: i or a out of range). Any thread.
 */
size_t runner__nprocs(const struct runner *r);
uint32_t runner__proc_pid(const struct runner *r, size_t i);
void runner__proc_stats(const struct runner *r, size_t i, struct runner_stats *st);
const void *runner__proc_analyzer(const struct runner *r, size_t i, const char *name);
const struct analyzer_ops *runner__proc_analyzer_at(const struct runner *r, size_t i, size_t a,
						    void **state);

/*
 * Free; NULL is fine. If the threads were started and not joined, they are
 * stopped first (what they had not analyzed is dropped). The buffers are not
 * touched. Thread: the setup thread.
 */
void runner__free(struct runner *r);

#endif /* ANALYZERS_RUNNER_H */
