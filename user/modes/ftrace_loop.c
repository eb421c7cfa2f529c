// SPDX-License-Identifier: BSD-2-Clause
/*
 * The function-tracing run's loop: the target released, the rings
 * drained until it exits, Ctrl-C or -d, the probes out and the last drain.
 * user/modes/ftrace_int.h lists the run's files.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "common/log.h"
#include "pipeline/runner.h"
#include "user/iomode/iotrace.h"
#include "user/trace/budget.h"
#include "user/trace/stage.h"
#include "user/trace/watchdog.h"
#include "user/modes/ftrace_int.h"

/* Sampling requests: SIGUSR1 on, SIGUSR2 off (0 none, 1 on, 2 off). */
static volatile sig_atomic_t sample_request;

static void on_sample_signal(int sig)
{
	sample_request = sig == SIGUSR1 ? 1 : 2;
}

/* Only when sampling: otherwise SIGUSR1 keeps its default action. */
static void install_sample_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sample_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
}


/* ---- run until stop ---- */

/* The recording's META and FUNCS blocks: what 'cabbpf report' needs to
 * name, time and summarize the events. Returns 0 or -errno (logged). */
static int begin_recording(struct ftrace *ft)
{
	struct timespec ts;
	struct recfmt_meta m = {
		.pid = ft->tg.pid,
		.comm = ft->tg.comm,
		.binary = ft->tg.exe,
		.ncpus = trace__ncpus(ft->tr),
		.tool = "cabbpf " CABBPF_VERSION,
	};
	struct recfmt_funcs fn = {
		.n = (uint32_t)ft->nfuncs,
		.names = ft->names,
		.lnames = ft->lnames,
		.binaries = ft->binaries,
		.offsets = ft->offsets,
		.probe_ns = ft->probe_ns,
		.aft_in = ft->aft_in,
		.aft_out = ft->aft_out,
	};

	clock_gettime(CLOCK_REALTIME, &ts);
	m.start_realtime_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	m.flags = (ft->o.entry_only ? RECFMT_F_ENTRY_ONLY : 0) |
		  (trace__cpu_time(ft->tr) ? RECFMT_F_CPU_TIME : 0) |
		  (ft->o.no_times ? RECFMT_F_NO_TIMES : 0) |
		  (trace__multi(ft->tr) ? RECFMT_F_MULTI : 0) |
		  (ft->o.cab_mode && !strcmp(ft->o.cab_mode, "sampling") ? RECFMT_F_CAB_SAMPLING : 0);
	return recorder__begin(ft->rec, &m, &fn);
}

/* Start the analyzers, then let a launched target exec. Returns 0 or
 * -errno (logged): then there is no run to report. */
int ftrace_loop__start(struct ftrace *ft)
{
	int err;

	if (ft->rec && (err = begin_recording(ft)))
		return err;
	err = runner__start(ft->rn);
	if (err) {
		log_err("starting analyzer threads: %s", strerror(-err));
		return err;
	}
	ft->runner_started = true;
	ft->cpu0 = ftrace__cpu_now_s();
	/* The gate opens (bpf/trace.bpf.c, epoch): every probe, the guard's
	 * and the I/O tracer's are in, so no event before this instant and
	 * every event after it; the duration counts from here. Sampling:
	 * window 1 opens as the target is let go. */
	ft->t0 = ftrace__now_s();
	iotrace__gate(ft->io, true);
	guard__gate(ft->guard, true);
	if (ft->whole)
		whole__gate(ft->whole, true);
	if (!ft->o.sample_pct && !ft->o.start_disabled && !ft->o.budget_pct)
		trace__gate(ft->tr, true);
	if (ft->o.budget_pct) {
		struct budget_opts bo = {.pid = ft->tg.pid,
					 .pct = ft->o.budget_pct,
					 .period_ms = ft->o.sample_period_ms,
					 .nfuncs = (uint32_t)ft->nfuncs,
					 .cost_ns = ft->call_cost,
					 .leak = ft->have_cost ? ft->call_leak : NULL,
					 .partial = ft->partial,
					 .names = ft->names,
					 .entry_only = ft->o.entry_only};

		/* Epoch 1 opens: everything traced, the rates to be learnt. */
		err = budget__new(&bo, ft->tr, &ft->bud);
		if (err) {
			log_err("budget: %s", strerror(-err));
			return err;
		}
	}
	if (ft->o.sample_pct > 0 || ft->o.start_disabled) {
		struct sampler_opts so = {.pct = ft->o.sample_pct,
					  .period_ms = ft->o.sample_period_ms,
					  .start_disabled = ft->o.start_disabled,
					  .nfuncs = (uint32_t)ft->nfuncs};

		if ((err = ftrace_attach__hit_leaks(ft)))
			return err;
		so.hit_leak = ft->hit_leak;

		err = sampler__new(&so, ft->tr, ft->att_ns, &ft->smp);
		if (err) {
			log_err("sampling: %s", strerror(-err));
			return err;
		}
		install_sample_signals();
		if (ft->o.start_disabled)
			log_info("tracing is off: kill -USR1 %d turns it on, kill -USR2 %d off",
				 (int)getpid(), (int)getpid());
	}
	/* Said once the gate is open (or sampling's first window): from
	 * this line on every call counts. The same count as the report's "N
	 * traced": the functions whose probes went in (not those the plan
	 * left out, nor any the kernel still refused). */
	if (ft->whole) {
		size_t untraced, nimg = whole__nimages(ft->whole, &untraced);

		log_info("tracing %zu function%s of %zu executable%s in %s (and of the "
			 "executables its processes start)%s",
			 ft->nfuncs - trace__refused(ft->tr),
			 ft->nfuncs - trace__refused(ft->tr) == 1 ? "" : "s", nimg,
			 nimg == 1 ? "" : "s", whole__what(ft->whole),
			 trace__refused(ft->tr) ? "; not probed: see the plan lines (-v names them)"
						: "");
		/* --follow-forks: the command goes (its guard, if any, waits
		 * for it: target.h's reaped hook) */
		if (ft->tg.spawned) {
			ft->tg.reaped = (int (*)(void *, int *))whole__root_reaped;
			ft->tg.reaped_ctx = ft->whole;
			if ((err = target__start(&ft->tg)))
				return err;
			whole__root_started(ft->whole);
		}
		ft->started = true;
		return 0;
	}
	log_info("tracing %zu function%s of %s (pid %d)%s%s",
		 ft->nfuncs - trace__refused(ft->tr),
		 ft->nfuncs - trace__refused(ft->tr) == 1 ? "" : "s", ft->tg.exe, (int)ft->tg.pid,
		 trace__refused(ft->tr) ? "; not probed: see the plan line (-v names them)" : "",
		 ft->o.floor ? " [floor: empty programs]" : "");
	if (ft->tg.spawned && (err = target__start(&ft->tg)))
		return err;
	ft->started = true;
	return 0;
}

/* The instant tracing stops: the gate closes (or the sampling window
 * does) before anything else, before a launched target is signalled and
 * before the first link is taken out; the duration ends here. After it
 * the probes emit nothing, so links closed in any order (returns before
 * entries) leave no call without its return in the report. */
static void stop_gate(struct ftrace *ft)
{
	if (ft->smp)
		sampler__finish(ft->smp, sampler__now());
	else if (ft->bud)
		budget__finish(ft->bud, sampler__now());
	else
		trace__gate(ft->tr, false);
	iotrace__gate(ft->io, false);
	guard__gate(ft->guard, false);
	if (ft->whole)
		whole__gate(ft->whole, false);
	ft->t1 = ftrace__now_s();
}

/* Drain the rings until the target exits, a signal, or -d. Sets ft->why.
 * Returns 0, or -errno (logged) when the run ended on an error (ft->why
 * is then "error"). */
int ftrace_loop__until_stop(struct ftrace *ft)
{
	double next_check = 0;
	int got, err = 0;

	while (!ft->why) {
		/* a drain per 2 ms (see trace__drain); --budget checks its
		 * guard every 1 ms */
		got = trace__drain(ft->tr, ft->bud ? 1 : 2);
		/* on_event's error stops the drain too: say which it was. */
		if (ft->stage_err) {
			log_err("staging events: %s", strerror(-ft->stage_err));
			err = ft->stage_err;
			break;
		}
		if (got < 0) {
			log_err("reading the rings: %s", strerror(-got));
			err = got;
			break;
		}
		stage__flush(ft->stage);
		/* --lossless: threads held at the high-water mark go on once a
		 * round ends with every ring below the low-water mark. */
		if (ft->o.lossless)
			guard__drained(ft->guard, trace__below_low(ft->tr));
		if (ft->smp) {
			if (sample_request) {
				sampler__request(ft->smp, sample_request == 1);
				sample_request = 0;
			}
			/* A failed attach was logged; the trace goes on, off. */
			(void)sampler__tick(ft->smp, sampler__now());
		}
		if (ft->bud)
			(void)budget__tick(ft->bud, sampler__now());
		if (*ft->stop) {
			ft->why = "interrupted";
			break;
		}
		ft->t1 = ftrace__now_s();
		if (ft->o.duration && ft->t1 - ft->t0 >= ft->o.duration)
			ft->why = "duration reached";
		if (ft->whole) {
			bool empty = false;

			/* Processes and executables found since the last round,
			 * their guards; the cgroup every 100 ms. */
			err = whole__poll(ft->whole, ft->t1 - ft->t0, &empty);
			if (err)
				break;
			/* --follow-forks: the command's status, once it ends */
			if (ft->tg.spawned)
				(void)target__poll_exit(&ft->tg);
			if (empty)
				ft->why = ft->o.follow_forks ? "target and its children exited"
					  : ft->o.container  ? "container exited"
							     : "cgroup empty";
		} else if (ft->t1 >= next_check) {
			/* A syscall per check: every 10 ms is plenty. */
			next_check = ft->t1 + 0.01;
			if (target__poll_exit(&ft->tg))
				ft->why = "target exited";
		}
	}
	if (err)
		ft->why = "error";
	stop_gate(ft);
	return err;
}

/* ---- detach ---- */

/* Probes out, the guard lets go, every event still in a ring staged and
 * analysed. Returns 0, or -errno (logged) when the last drain failed; after
 * an earlier error (run_err) that one is the run's, and this returns 0. */
int ftrace_loop__detach(struct ftrace *ft, int run_err)
{
	struct guard_stats *gst = &ft->gst;
	int got = 0, err = 0;

	/* A command we launched does not outlive its trace: Ctrl-C passes the
	 * signal on, -d ends it with SIGTERM (see --help). */
	if (ft->tg.spawned && !target__poll_exit(&ft->tg))
		kill(ft->tg.pid, *ft->stop ? *ft->stop : SIGTERM);
	iotrace__detach(ft->io);
	ft->t_det = ftrace__now_s();
	trace__detach(ft->tr);
	ft->t_det = ftrace__now_s() - ft->t_det;
	/* No return probe can appear any more: give back every return
	 * address still replaced, and let go of the target. */
	guard__stop(ft->guard, gst);
	if (ft->whole)
		ft->any_guard = whole__stop(ft->whole, gst);
	/* Every held thread was let go: the watcher has nothing to do. */
	watchdog__done(ft->wd_fd);
	ft->wd_fd = -1;
	if ((ft->guard || ft->any_guard) && (gst->unguarded || gst->failed))
		log_warn("the guard could not serve %llu unwinder or switch point%s (thread not "
			 "held, or a stop failed): the target may have been harmed there",
			 (unsigned long long)(gst->unguarded + gst->failed),
			 gst->unguarded + gst->failed == 1 ? "" : "s");
	log_info("probes: attached in %.3f s, detached in %.3f s (%s)", ft->t_att, ft->t_det,
		 trace__multi(ft->tr) ? "multi-uprobe links" : "one link per site");
	/* Every event a probe wrote is in a ring by now: drain them all
	 * (not into a staging that failed). */
	while (!ft->stage_err && (got = trace__drain(ft->tr, 0)) > 0)
		;
	if (!run_err && ft->stage_err) {
		log_err("staging events: %s", strerror(-ft->stage_err));
		err = ft->stage_err;
	} else if (!run_err && got < 0) {
		log_err("reading the rings after the probes were detached (the last drain): %s; "
			"the report lacks what was still in them",
			strerror(-got));
		err = got;
	}
	if (err)
		ft->why = "error";
	stage__close(ft->stage);
	runner__join(ft->rn);
	ft->runner_started = false;
	runner__set_windows(ft->rn, ft->bud ? budget__windows(ft->bud) : sampler__windows(ft->smp));
	runner__set_budget(ft->rn, budget__plan(ft->bud));
	return err;
}
