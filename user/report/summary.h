/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A run's result as the report reads it: what the loader measured about
 * the run (target, duration, events, loss, the guard's and the kernel's
 * figures), filled by a mode (user/modes/) from the trace, the pipeline
 * and the target, or by 'cabbpf report' from a recording. The analyzers'
 * results stay in the runner (pipeline/runner.h), which the report reads.
 */
#ifndef USER_REPORT_SUMMARY_H
#define USER_REPORT_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cab/cab.h"
#include "user/trace/guard.h"
#include "user/trace/sampler.h"
#include "user/trace/trace.h"

#define SUMMARY_MAX_PROGS 8

struct budget;
struct whole;

struct kernel_features;
struct outputs;

struct summary {
	pid_t pid;
	const char *comm;
	const char *binary;
	uint32_t nfuncs;         /* functions probed */
	uint32_t refused;        /* functions the kernel refused */
	bool multi;              /* probes through multi-uprobe links */
	/* the kernel traced on (a live run; NULL for a recording's report) */
	const struct kernel_features *kernel;
	double duration_s;
	uint64_t events;         /* events received from the kernel rings */
	size_t ring_bytes;       /* each CPU's kernel ring (0: unknown, a recording) */
	uint64_t lost;           /* events lost: kernel ring full, or no thread state
				    (all kinds) */
	uint64_t lost_calls;     /* of those, call events (entries, returns) */
	uint64_t lost_io;        /* I/O events */
	uint64_t lost_guard;     /* guard events (user/trace/guard.h) */
	uint64_t lost_sched;     /* switch-in events (off-CPU intervals): ring full;
				    each interval is carried to the thread's next one */
	uint64_t sched_busy;     /* switch-in events put off: thread inside a probe */
	uint64_t sched_unseen;	 /* switch-ins the tracepoint never reported: each
				    interval closed at the thread's next event (an
				    upper bound: on-CPU times are lower bounds) */
	/* 3 x ncpus: call drops per CPU, then I/O, then guard drops */
	const uint64_t *lost_per_cpu;
	unsigned ncpus;
	uint64_t reentry;        /* probe hits skipped by the re-entry guard */
	/* The probes' thread states (bpf/pipeline.bpf.h): threads whose state
	 * went to task storage (their table slot was held by another), and
	 * events lost because no state could be created (counted in lost
	 * too). has_tstates: known (live, or a recording of version 3 on). */
	bool has_tstates;
	uint64_t tstab_taken, nostate;
	/* --lossless: threads stopped at the rings' high-water mark (BPF's
	 * count; guard->held* say how long they waited), and events past
	 * the mark from threads that could not be stopped */
	bool lossless;
	uint64_t throttles;
	uint64_t unheld;
	struct cab_stats cab;    /* summed over the per-processor buffers */
	bool cab_sampling;       /* --cab-mode sampling */
	const char *stop_reason; /* "target exited", "interrupted", "duration", ... */
	double cpu_s;            /* CPU time cabbpf itself used (all its threads) */
	bool exited;
	int exit_status;         /* wait status if exited and spawned, else -1 */
	/* What the target guard did (user/trace/guard.h); NULL: no guard ran
	 * (--entry-only, --no-guard, or nothing to guard). */
	const struct guard_stats *guard;
	uint64_t execs;   /* execve calls the target made while traced */
	/* new processes the target started while traced (fork, vfork,
	 * clone without CLONE_THREAD): not traced. forks_known: counted (a
	 * live run of one process, a recording of version 8 on) */
	bool forks_known;
	uint64_t forks;
	/* --times sampled: the CPU clock's period, ns, when it sampled the
	 * whole run (an_ctx.cpu_sample_ns); 0: the times are the traced
	 * ones. CPU-clock samples in the probes' own code (left out), of
	 * threads with no event yet (outside every traced function), and
	 * lost to a full ring. */
	uint64_t cpu_sample_ns;
	uint64_t samples_probe, samples_nostate, samples_lost;
	/* The clock sampled kernel mode too (a live run; a recording of
	 * version 10 on): of its kernel-mode samples, those in the program's
	 * own system calls (kept, in the times) and those in the probes'
	 * traps or other kernel entries (left out); version 11 on, those in
	 * the program's page faults (kept), and those delivered in user mode
	 * as a trap returned (the trap's: left out). */
	uint32_t samples_kernel; /* enum an_ktime (analyzers/analyzer.h) */
	uint64_t samples_syscall, samples_trap, samples_fault, samples_resume;
	bool exec_other;  /* the last one ran another program (not traced) */
	/* the last one was called by a thread other than the main one: the
	 * kernel's probes, bound to the main thread, miss the new image */
	bool exec_thread;
	/* --sample / --start-disabled: the windows; NULL when not sampling */
	const struct sampler *sampling;
	/* --budget: the controller's record; NULL without a budget */
	const struct budget *budget;
	/* whole-container tracing (user/trace/whole.h): every process of a
	 * cgroup, reported one by one and merged; comm is then what was
	 * traced ("container NAME"), pid 0, binary NULL. NULL otherwise. */
	const struct whole *whole;
	pid_t root_pid; /* --follow-forks: the command launched (0: none) */
	/* --bpf-stats: the trace programs that ran, with the kernel's run
	 * count and run time */
	bool bpf_stats;
	struct trace_prog_stat progs[SUMMARY_MAX_PROGS];
	unsigned nprogs;
	/* the files written before --json (common/outputs.h); NULL: none */
	const struct outputs *outputs;
};

#endif /* USER_REPORT_SUMMARY_H */
