// SPDX-License-Identifier: BSD-2-Clause
/*
 * The function-tracing run's report: the counts delivered, checked
 * and summed, the analyzers' sections and the output files written.
 * user/modes/ftrace_int.h lists the run's files.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <bpf/bpf.h>

#include "common/log.h"
#include "common/outfile.h"
#include "common/outputs.h"
#include "user/iomode/iotrace.h"
#include "user/trace/stage.h"
#include "pipeline/runner.h"
#include "user/report/report.h"
#include "user/report/views.h"
#include "user/modes/ftrace_int.h"

/* ---- report ---- */

/* The CAB buffers' counters, summed over processors. */
static void sum_cab(struct ftrace *ft, struct cab_stats *sum)
{
	unsigned i;

	for (i = 0; i < trace__ncpus(ft->tr); i++) {
		struct cab_stats cs;

		cab_pp__stats(stage__bufs(ft->stage)[i], &cs);
		sum->produced += cs.produced;
		sum->consumed += cs.consumed;
		sum->overwritten += cs.overwritten;
		sum->stalls += cs.stalls;
		sum->blocked_ns += cs.blocked_ns;
		sum->grown += cs.grown;
	}
}

/* Whether the last execve the target made, ex, loaded the traced file: its
 * device and inode as the kernel names them (trace__exe_identity); where
 * the kernel could not say, as stat() names the traced file. */
static bool exec_is_traced(const struct ftrace *ft, const struct stage_exec *ex)
{
	struct stat sb;
	uint32_t dev;
	uint64_t ino;

	if (ft->tr && trace__exe_identity(ft->tr, &dev, &ino))
		return dev == ex->dev && ino == ex->ino;
	if (stat(ft->tg.exe, &sb))
		return false;
	return (uint64_t)sb.st_ino == ex->ino &&
	       (uint32_t)(major(sb.st_dev) << 20 | minor(sb.st_dev)) == ex->dev;
}

/*
 * No silently empty profile: a trace that the kernel side
 * emptied or cut short is said, after the report, and the run fails.
 *   - Probe hits the programs left out on purpose (bpf/trace.bpf.c:
 *     the target runs another program; the tests' switch) when the target
 *     did not exec another program: events it made were dropped.
 *   - A launched program that ran to a normal exit with its main traced,
 *     and no entry of main seen: its probes delivered nothing.
 * A trace in which none of the traced functions was called, with nothing
 * lost, is not a failure (the program may not have called them) but is
 * said, so an empty report is never taken for a quiet one.
 * Returns 0, or -ENODATA (logged).
 */
static int check_delivery(struct ftrace *ft, const uint64_t *totals, const struct summary *sm)
{
	const struct target *tg = &ft->tg;
	uint64_t other = totals[CABBPF_STAT_HITS_OTHER_IMAGE];
	uint64_t hidden = totals[CABBPF_STAT_HITS_SUPPRESSED] + (sm->exec_other ? 0 : other);

	if (hidden) {
		log_err("the probes fired %llu times in %s (pid %d) and delivered %s event%s: "
			"they were dropped in the kernel (%s), so this profile is %s; please "
			"report "
			"it with 'cabbpf --features' and 'cabbpf -v'",
			(unsigned long long)hidden, tg->comm, (int)tg->pid,
			sm->events ? "only some" : "no", sm->events ? "s" : "",
			totals[CABBPF_STAT_HITS_SUPPRESSED] ? "CABBPF_TEST_DELIVER_NOTHING"
							    : "taken for another program's",
			sm->events ? "short" : "empty");
		return -ENODATA;
	}
	if (ft->main_fid >= 0 && sm->exited && tg->spawned && WIFEXITED(tg->status) &&
	    !sm->exec_other && !sm->lost_calls && !stage__watched(ft->stage)) {
		log_err("%s ran and exited with status %d, but its traced main() was never "
			"entered in this trace: the probes delivered nothing (%llu events in "
			"all); kernel features: cabbpf --features",
			tg->comm, WEXITSTATUS(tg->status), (unsigned long long)sm->events);
		return -ENODATA;
	}
	if (!sm->events && !sm->lost_calls && !sm->nfuncs && ft->whole)
		log_warn("no program the traced processes ran had a function to trace%s: the "
			 "report is empty (cabbpf -l -- PROGRAM lists a program's functions)",
			 ft->o.nfuncs ? " (none matches the -f patterns)" : "");
	else if (!sm->events && !sm->lost_calls)
		log_warn("none of the %u functions traced was called while tracing: the report "
			 "is empty (cabbpf -l lists them; -f selects others)",
			 sm->nfuncs);
	return 0;
}

/* Text on stdout (unless -q or --floor), JSON to --json, the summary
 * line on stderr. Returns 0 or -errno (logged) when the JSON could not be
 * written. */
/* The run's summary (user/report/summary.h) from the trace's counters
 * (totals, lost_cpu: per CPU, owned by the caller), the stage's, the
 * target's and the guard's. */
static void fill_summary(struct ftrace *ft, struct summary *sm, const uint64_t *totals,
			 const uint64_t *lost_cpu)
{
	struct stage_exec ex = {0};
	struct target *tg = &ft->tg;

	memset(sm, 0, sizeof(*sm));
	sm->pid = tg->pid;
	sm->comm = tg->comm;
	sm->binary = tg->exe;
	sm->nfuncs = (uint32_t)ft->nfuncs - trace__refused(ft->tr);
	sm->refused = trace__refused(ft->tr);
	sm->multi = trace__multi(ft->tr);
	sm->kernel = features__get();
	sm->duration_s = ft->t1 - ft->t0;
	/* call events */
	sm->events = stage__events(ft->stage) - stage__io_events(ft->stage) -
		     stage__guard_events(ft->stage) - stage__sched_events(ft->stage) -
		     stage__sample_events(ft->stage);
	sm->guard = ft->guard ? &ft->gst : NULL;
	sm->sampling = ft->smp;
	sm->budget = ft->bud;
	sm->cab_sampling = ft->o.cab_mode && !strcmp(ft->o.cab_mode, "sampling");
	sm->execs = stage__execs(ft->stage, &ex);
	sm->forks_known = !ft->whole;
	sm->forks = ft->whole ? 0 : totals[CABBPF_STAT_FORKS];
	sm->cpu_sample_ns = runner__cpu_sample(ft->rn);
	sm->samples_probe = totals[CABBPF_STAT_CPU_SAMPLES_PROBE];
	sm->samples_nostate = totals[CABBPF_STAT_CPU_SAMPLES_NOSTATE];
	sm->samples_lost = totals[CABBPF_STAT_CPU_SAMPLE_DROPS];
	sm->samples_kernel = sm->cpu_sample_ns ? trace__cpu_sample_kernel(ft->tr) : 0;
	sm->samples_syscall = totals[CABBPF_STAT_CPU_SAMPLES_SYSCALL];
	sm->samples_trap = totals[CABBPF_STAT_CPU_SAMPLES_TRAP];
	sm->samples_fault = totals[CABBPF_STAT_CPU_SAMPLES_FAULT];
	sm->samples_resume = totals[CABBPF_STAT_CPU_SAMPLES_RESUME];
	/* A launched command's own start is an exec too: not the program's
	 * doing (--follow-exec: made before tracing began, not seen). */
	if (tg->spawned && !tg->followed && sm->execs)
		sm->execs--;
	/* The same file: device and inode as the kernel names them, as
	 * bpf/trace.bpf.c compares them (not stat()'s: overlayfs differs). */
	sm->exec_other = !ft->whole && sm->execs && !exec_is_traced(ft, &ex);
	sm->exec_thread = !ft->whole && sm->execs && ex.thread;
	if (ft->whole) {
		/* every process of the cgroup: no one target */
		sm->whole = ft->whole;
		sm->comm = whole__what(ft->whole);
		sm->binary = NULL;
		sm->guard = ft->any_guard ? &ft->gst : NULL;
		/* the table grew with the executables found later */
		sm->nfuncs = atomic_load(&ft->wt->n) - trace__refused(ft->tr);
	}
	if (sm->exec_other)
		log_warn("%s (pid %d) exec'd another program: its calls after that are not traced "
			 "(nor counted in the libraries it shares with %s)",
			 tg->comm, (int)tg->pid, tg->exe);
	else if (sm->exec_thread)
		log_warn(
			"%s (pid %d): thread %u, not the main thread, called execve: the new image "
			"is not traced (the kernel's probes are bound to the main thread, which "
			"the "
			"execve ended)",
			tg->comm, (int)tg->pid, ex.thread);
	sm->lost = totals[CABBPF_STAT_DROPS] + totals[CABBPF_STAT_IO_DROPS] +
		   totals[CABBPF_STAT_GUARD_DROPS];
	/* Not in lost: a switch-in event without room carries its interval
	 * to the thread's next one (bpf/trace.bpf.c on_switch). */
	sm->lost_sched = totals[CABBPF_STAT_SCHED_DROPS];
	sm->sched_busy = totals[CABBPF_STAT_SCHED_BUSY];
	sm->sched_unseen = totals[CABBPF_STAT_SCHED_UNSEEN];
	sm->lost_calls = totals[CABBPF_STAT_DROPS];
	sm->lost_io = totals[CABBPF_STAT_IO_DROPS];
	sm->lost_guard = totals[CABBPF_STAT_GUARD_DROPS];
	sm->lost_per_cpu = lost_cpu;
	sm->ncpus = trace__ncpus(ft->tr);
	sm->reentry = totals[CABBPF_STAT_REENTRY];
	sm->has_tstates = true;
	sm->tstab_taken = totals[CABBPF_STAT_TSTAB_TAKEN];
	sm->nostate = totals[CABBPF_STAT_NOSTORE];
	sm->lossless = ft->o.lossless;
	sm->ring_bytes = ft->o.ring_bytes;
	sm->throttles = totals[CABBPF_STAT_THROTTLES];
	sm->unheld = totals[CABBPF_STAT_UNHELD];
	sum_cab(ft, &sm->cab);
	sm->stop_reason = ft->why;
	/* What the analysis cost while tracing: on a busy machine the target
	 * pays it. */
	sm->cpu_s = ftrace__cpu_now_s() - ft->cpu0;
	/* the guard's tracer process is cabbpf's too (its start-up before
	 * cpu0 is a fork's: next to nothing) */
	if (ft->guard)
		sm->cpu_s += (double)ft->gst.tracer_cpu_ns / 1e9;
	if (ft->o.bpf_stats) {
		int n = trace__prog_stats(ft->tr, sm->progs, SUMMARY_MAX_PROGS);

		if (n < 0)
			log_warn("--bpf-stats: reading the programs' statistics: %s", strerror(-n));
		sm->bpf_stats = true;
		sm->nprogs = n > 0 ? (unsigned)n : 0;
	}
	/* A launched command cabbpf stopped first was given the signal
	 * (ftrace_loop__detach): how it ended is the report's, and cabbpf's
	 * exit status. */
	if (tg->spawned && !tg->exited)
		(void)target__wait(tg, 2000);
	if ((!ft->whole || tg->spawned) && (tg->exited || target__poll_exit(tg))) {
		sm->exited = true;
		sm->exit_status = tg->spawned ? tg->status : -1;
	}
	ft->exit_code = target__exit_code(tg);
	if (ft->whole && tg->spawned)
		sm->root_pid = tg->pid; /* --follow-forks */
}

/* The recording's end, the text report, the views, --plots and --json
 * (last: it lists what became of every other file), each noted in outs. */
static void write_outputs(struct ftrace *ft, struct summary *sm, struct outputs *outs)
{
	int err;

	/* where each function is in the source: only for what shows it */
	if (ft->rec || ft->o.json_path || ft->o.view.pprof_path)
		ftrace_attach__source_lines(ft);
	if (ft->rec) {
		struct recfmt_source rs = {.n = (uint32_t)ft->nfuncs,
					   .src = ft->src,
					   .nbins = ft->nbins,
					   .bins = ft->bins};

		/* a recording that could not be finished: the reports below
		 * are still written from what was seen, and the run fails */
		outputs__note(outs, "--record", ft->o.record_path,
			      recorder__finish(ft->rec, sm, ft->src ? &rs : NULL));
	}
	if (!ft->o.floor && !ft->o.quiet && ft->live) {
		err = report__text_to(ft->o.output_path, sm, ft->rn);
		outputs__note(outs, "-o", ft->o.output_path, err);
		if (err)
			log_err("writing the report%s%s: %s", ft->o.output_path ? " to " : "",
				ft->o.output_path ? ft->o.output_path : "", outfile__strerror(err));
	}
	fflush(stdout);
	/* --folded, --flamegraph, --pprof, --timeline (user/report/views.h) */
	if (!ft->o.floor)
		views__write(&ft->o.view, ft->rn, ft->tg.pid, ft->whole ? sm->comm : ft->tg.comm,
			     ft->whole ? sm->comm : ft->tg.exe, (uint64_t)((ft->t1 - ft->t0) * 1e9),
			     outs);
	/* --plots DIR (analyzers/isp.h) */
	if (!ft->o.floor)
		views__write_plots(&ft->o.isp, ft->rn, outs);
	/* --json last: it lists what became of every other file */
	if (ft->o.json_path) {
		sm->outputs = outs;
		err = outputs__note(outs, "--json", ft->o.json_path,
				    report__json(ft->o.json_path, sm, ft->rn));
		if (err)
			log_err("writing --json %s: %s", ft->o.json_path, outfile__strerror(err));
	}
}

int ftrace_report__write(struct ftrace *ft)
{
	uint64_t totals[CABBPF_STAT__MAX] = {0}, io_counts[CABBPF_IOSTAT__MAX] = {0};
	uint64_t *lost_cpu;
	struct summary sm;
	struct outputs outs = {0};
	int err, delivered;

	lost_cpu = calloc(3 * (size_t)trace__ncpus(ft->tr), sizeof(*lost_cpu));
	if (trace__stats(ft->tr, totals, lost_cpu) || iotrace__counts(ft->io, io_counts))
		log_warn("could not read the BPF counters");
	if (io_counts[CABBPF_IOSTAT_EVENTS] != stage__io_events(ft->stage))
		log_warn("BPF wrote %llu I/O events but %llu were read",
			 (unsigned long long)io_counts[CABBPF_IOSTAT_EVENTS],
			 (unsigned long long)stage__io_events(ft->stage));
	fill_summary(ft, &sm, totals, lost_cpu);
	/* what the reports mark as lower bounds, and their "N of M" totals */
	runner__set_lost(ft->rn, sm.lost_calls, sm.lost_io, sm.cab.overwritten);
	runner__set_traced(ft->rn, sm.nfuncs);
	write_outputs(ft, &sm, &outs);
	report__summary_line(&sm);
	free(lost_cpu);
	delivered = check_delivery(ft, totals, &sm);
	err = outputs__failed(&outs);
	if (err)
		log_err("not every output was written (said above): the run failed");
	return err ? err : delivered;
}
