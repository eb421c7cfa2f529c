/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The function-tracing run's state, shared by its files (not a public API;
 * the run's story, stage by stage, is ftrace__run in ftrace.c):
 *   ftrace.c         the stages in order, the kernel's features, the target
 *                    (or a whole container's table), the teardown;
 *   ftrace_select.c  symbols, the functions chosen, the guard, the plan;
 *   ftrace_attach.c  the functions numbered and located, the trace's BPF
 *                    objects and the pipeline opened, probes attached;
 *   ftrace_loop.c    the target released, the rings drained until the end,
 *                    the probes out and the last drain;
 *   ftrace_report.c  the counts checked and the report and files written.
 * Every function here runs on the main thread.
 */
#ifndef CABBPF_FTRACE_INT_H
#define CABBPF_FTRACE_INT_H


#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "user/cli/opts.h"
#include "user/kernel/features.h"
#include "user/proc/target.h"
#include "user/record/recorder.h"
#include "user/modes/ftrace.h"
#include "user/trace/whole.h"
#include "user/trace/calibrate.h"



/* One run: what each stage leaves for the next. */
struct ftrace {
	struct opts o; /* a copy: Go and a guard that cannot run turn on entry_only */
	volatile sig_atomic_t *stop;
	struct kernel_paths kp; /* what this kernel lets each part do (check_kernel) */
	int main_fid;		/* a launched program's main, traced; -1: none */
	/* resolve target */
	struct target tg;
	bool have_target, started; /* started: a spawned target was let go */
	int cgfd;		   /* --cgroup / --container, or -1 */
	char cgpath[4096];
	bool own_cg; /* --follow-forks: cgpath is ours, removed at the end */
	/* select functions: the executable's n functions idx[] of st */
	const char *exe_globs[OPTS_MAX_FUNCS]; /* the -f patterns that are not LIB:GLOB */
	size_t nexe;
	struct symtab *st;
	size_t *idx, n;
	/* IFUNCs of the executable (user/elf/ifunc.h): per selected function,
	 * NULL or "NAME (IMPLEMENTATION)"; nlabels entries */
	char **labels;
	size_t nlabels;
	/* plan */
	struct guard *guard;
	struct plan_opts plo;
	struct plan *plan;
	struct libs *libs;
	/* attach: every function by fid, the executable's n, then the
	 * libraries' (nfuncs in all) */
	size_t nfuncs;
	uint64_t *offsets;
	const char **names, **lnames, **binaries;
	uint32_t *sp_delta;
	uint8_t *resume_len; /* per fid: trace_opts.resume_len (NULL: whole) */
	uint8_t *sized; /* --size spec byte per fid (analyzers/isp.h), or NULL */
	/* --args, --retval per fid (nvals, reg, type, ret), or NULL */
	struct cabbpf_fnspec *vals;
	/* where each fid is (source line, binary, address): for the JSON,
	 * pprof and the recording; lines[0] the executable's, lines[1 + i]
	 * library i's (user/elf/dwarf.h) */
	struct an_src *src;
	struct an_bin *bins;
	uint32_t nbins;
	struct srclines **lines;
	struct dwarf_file **dfs; /* each binary's DWARF file, opened at start */
	bool lines_done;
	struct trace_callsite *csites;
	size_t ncsites;
	struct trace *tr;
	struct stage *stage;
	struct runner *rn;
	struct iotrace *io;
	bool runner_started;
	int stage_err; /* on_event's error: stops the drain */
	double t_att, t_det;
	/* run until stop */
	double t0, t1, cpu0;
	const char *why;
	int exit_code; /* the launched command's, as the report says it ended */
	/* detach */
	struct guard_stats gst;
	/* the cct's compensated times: a probed call's cost by entry class
	 * (user/trace/calibrate.h), and per fid */
	double probe_cost[INSN__NCLASS];
	/* of it, what the progress clock counts, and its standard error */
	struct progress_leak probe_leak[INSN__NCLASS];
	/* and the aftermath the time sampler sees (--times sampled) */
	struct calib_aftermath probe_aft[INSN__NCLASS];
	uint32_t *aft_in, *aft_out; /* by fid, ns: an_ctx.aft_in, aft_out */
	bool have_cost;
	double *probe_ns;
	/* --sample / --start-disabled (user/trace/sampler.h) */
	struct sampler *smp;
	uint64_t att_ns;
	/* --budget (user/trace/budget.h): each fid's cost per traced call,
	 * the shadow stacks' bitmap of partial epochs, the controller */
	double *call_cost;
	/* [fid]: of call_cost, what the progress clock counts (and its
	 * error); hit_leak: the same per probe hit, for sampling windows */
	struct progress_leak *call_leak, *hit_leak;
	uint8_t *first_group; /* the group each fid starts in */
	uint8_t *partial;
	struct budget *bud;
	/* cabbpf record (user/record/recorder.h); live: also analyzed now */
	struct recorder *rec;
	bool live;
	/* --lossless: the watcher that continues the target if cabbpf dies
	 * while holding it (user/trace/watchdog.h), or -1 */
	int wd_fd;
	/* whole-container tracing (--container / --cgroup alone: whole.h):
	 * every process of the cgroup; no target, tg unused */
	struct whole *whole;
	struct whole_table *wt; /* its function table */
	bool any_guard;		/* a process had its own guard */
	/* --bpf-stats: the fd that keeps the kernel's run-time statistics on
	 * for this run (released when closed), or -1 */
	int stats_fd;
};

/* --container or --cgroup without -p or a command: every process of it. */

/* ftrace.c */
/* CLOCK_MONOTONIC and cabbpf's CPU time (all its threads), in seconds. */
double ftrace__now_s(void);
double ftrace__cpu_now_s(void);
/* -v: the wall time since the last mark, said as stage's (NULL: starts). */
void ftrace__startup_mark(const char *stage);
/* A whole-container trace's function table as ft's per-fid arrays
 * (borrowed from ft->wt: not freed with ft). */
void ftrace__borrow_table(struct ftrace *ft);

/* ftrace_select.c: each returns 0 or -errno (logged) */
/* The target's symbols and the functions -f/-x select, into ft->st/idx. */
int ftrace_select__functions(struct ftrace *ft);
/* The guard of the target and the probe plan (ft->plan). */
int ftrace_select__plan(struct ftrace *ft);
/* --list and --plan: the selection, on stdout. */
void ftrace_select__print(const struct ftrace *ft);

/* ftrace_attach.c */
/* Sampling: each function's probe-hit cost, into ft->hit_leak (left NULL
 * when there is nothing to take out). Returns 0 or -ENOMEM (logged). */
int ftrace_attach__hit_leaks(struct ftrace *ft);
/* The source lines of the traced functions, best effort, into ft->src. */
void ftrace_attach__source_lines(struct ftrace *ft);
/* The trace's BPF objects, the guard, the pipeline and the probes, in
 * place. Returns 0 or -errno (logged; -ESRCH: the target exited). */
int ftrace_attach__probes(struct ftrace *ft);

/* --size, --args and --retval (ftrace_rules.c): what each rule names, into
 * ft->sized and ft->vals, once the functions are numbered and placed.
 * Returns 0 or -errno (logged: a rule that names no traced function). */
int ftrace_rules__apply(struct ftrace *ft);
/* --times sampled: the time sampler's period for this run, or 0 where it
 * does not run (its reasons: ftrace_attach.c). */
uint64_t ftrace_attach__cpu_sample_ns(const struct ftrace *ft);

/* ftrace_loop.c: each returns 0 or -errno (logged) */
/* The analyzers started, a launched target let exec. */
int ftrace_loop__start(struct ftrace *ft);
/* The rings drained until the target exits, a signal or -d (ft->why). */
int ftrace_loop__until_stop(struct ftrace *ft);
/* Probes out, the guard lets go, the last drain; after an earlier error
 * (run_err) that one is the run's and this returns 0. */
int ftrace_loop__detach(struct ftrace *ft, int run_err);

/* ftrace_report.c */
/* Text on stdout, JSON and the output files, the summary line on stderr.
 * Returns 0, or -errno (logged) when an output could not be written. */
int ftrace_report__write(struct ftrace *ft);

#endif
