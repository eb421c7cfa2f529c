// SPDX-License-Identifier: BSD-2-Clause
/*
 * The function-tracing run (ftrace.h): the stages, in order, wire the
 * modules together: target (fork and hold, or find the pid) -> symbols ->
 * guard and plan -> BPF (open, rodata, load), analyzers, attach -> release
 * the target -> drain until it exits, Ctrl-C or -d -> detach -> last drain
 * -> join analyzers -> report.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "common/log.h"
#include "pipeline/runner.h"
#include "user/elf/dwarf.h"
#include "user/elf/image.h"
#include "user/iomode/iotrace.h"
#include "user/proc/cgroup.h"
#include "user/proc/libs.h"
#include "user/trace/budget.h"
#include "user/trace/calibrate.h"
#include "user/trace/stage.h"
#include "user/trace/watchdog.h"
#include "user/modes/ftrace_int.h"

static bool whole_mode(const struct opts *o)
{
	return (!o->pid && !o->cmd && (o->cgroup || o->container)) || o->follow_forks;
}

/* What the run needs of the kernel (user/kernel/features.h): refused up
 * front when a required feature is missing, each optional one missing
 * said once, and the paths chosen into ft->kp. A kernel with no session
 * programs traces a whole container with entry probes only (a return
 * probe armed in every process that maps the file would harm those no
 * guard holds). Returns 0 or -errno (logged). */
static int check_kernel(struct ftrace *ft)
{
	const struct kernel_features *kf = features__get();
	bool whole = whole_mode(&ft->o);
	unsigned uses = whole ? FU_WHOLE : FU_CALLS;
	int err;

	uses |= FU_IO; /* I/O system calls go into the rings beside the calls */
	if (!ft->o.no_guard || ft->o.lossless)
		uses |= FU_GUARD;
	if (ft->o.budget_pct > 0)
		uses |= FU_BUDGET;
	err = features__refuse(kf, uses);
	if (err)
		return err;
	features__choose(kf, &ft->kp);
	features__say(kf, uses);
	if (ft->o.budget_pct > 0 && !ft->kp.budget) {
		log_err("--budget swaps link sets in and out, which needs multi-uprobe links "
			"(Linux 6.6), and this kernel (%s) has none: use --sample P instead",
			kf->release);
		return -EOPNOTSUPP;
	}
	if (whole && !ft->kp.session && !ft->o.entry_only) {
		if (ft->o.analyzers && strcmp(ft->o.analyzers, "count")) {
			log_err("this kernel (%s) has no uprobe session programs (Linux 6.13): a "
				"%s is traced with entry probes only, which give -a count (not "
				"'%s'); -p PID or -- COMMAND traces one process in full",
				kf->release,
				ft->o.follow_forks ? "a command with its children (--follow-forks)"
						   : "whole container",
				ft->o.analyzers);
			return -EOPNOTSUPP;
		}
		ft->o.entry_only = true;
		ft->o.analyzers = "count";
	}
	return 0;
}

double ftrace__now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* -v: how long each start-up stage took (wall), since the last mark, so
 * that a slow start can be told apart from a slow target. */
void ftrace__startup_mark(const char *stage)
{
	static double last;
	double t = ftrace__now_s();

	if (last > 0)
		log_debug("start-up: %s in %.1f ms", stage, (t - last) * 1e3);
	last = t;
}

/* CPU time (user + system) of all of cabbpf's threads so far. */
double ftrace__cpu_now_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}
/* ---- resolve target ---- */

static int resolve_target(struct ftrace *ft)
{
	const struct opts *o = &ft->o;
	int err;

	/* --cgroup / --container: checked before anything starts. */
	err = cgroup__select(o->cgroup, o->container, &ft->cgfd, ft->cgpath, sizeof(ft->cgpath));
	if (err)
		return err;
	/* -p outside the cgroup asked for: an empty trace would say nothing. */
	if (!o->cmd && ft->cgfd >= 0 && (err = cgroup__check_pid(ft->cgpath, o->pid, o->container)))
		return err;
	err = o->cmd ? target__spawn(&ft->tg, o->cmd, o->follow_exec, ft->stop)
		     : target__attach(&ft->tg, o->pid);
	if (err)
		return err;
	ft->have_target = true;
	return image__check_arch(ft->tg.exe);
}

/* Whole-container tracing: the cgroup, its processes, their executables
 * and the function table (user/trace/whole.h). Returns 0 or -errno
 * (logged). */
static int open_whole(struct ftrace *ft)
{
	const struct opts *o = &ft->o;
	struct whole_opts wo;
	char what[4200];
	int err;

	memset(&wo, 0, sizeof(wo));
	if (o->follow_forks && o->pid) {
		/* A running process's children: its own cgroup (found at the
		 * start: cgroup__tree_of), traced as a whole; the process is
		 * never moved (its cgroup is what limits and accounts it). */
		if ((err = cgroup__open(ft->cgpath)) < 0)
			return err;
		ft->cgfd = err;
		snprintf(what, sizeof(what), "pid %d, its children and every process of its cgroup",
			 (int)o->pid);
	} else if (o->follow_forks) {
		/* The command in a cgroup of its own, traced as a whole
		 * cgroup: every process it starts is in it (forks inherit
		 * their parent's). Moved in while held before its exec, then
		 * held again at its program's first instruction, so that its
		 * image, guard and arming are in before it runs. */
		if ((err = cgroup__make_own(ft->cgpath, sizeof(ft->cgpath))))
			return err;
		ft->own_cg = true;
		if ((err = cgroup__open(ft->cgpath)) < 0)
			return err;
		ft->cgfd = err;
		err = target__spawn(&ft->tg, o->cmd, false, ft->stop);
		if (err)
			return err;
		ft->have_target = true;
		if ((err = cgroup__enter(ft->cgpath, ft->tg.pid)) ||
		    (err = target__exec_held(&ft->tg, o->cmd[0], ft->stop)) ||
		    (err = image__check_arch(ft->tg.exe)))
			return err;
		snprintf(what, sizeof(what), "%s (pid %d) and the processes it starts", ft->tg.comm,
			 (int)ft->tg.pid);
		wo.root = ft->tg.pid;
	} else {
		err = cgroup__select(o->cgroup, o->container, &ft->cgfd, ft->cgpath,
				     sizeof(ft->cgpath));
		if (err)
			return err;
		if (o->container)
			snprintf(what, sizeof(what), "container %s", o->container);
		else
			snprintf(what, sizeof(what), "cgroup %s", ft->cgpath);
	}
	wo.cgpath = ft->cgpath;
	wo.what = what;
	wo.container = o->container;
	wo.funcs = o->funcs;
	wo.nfuncs = o->nfuncs;
	wo.excludes = o->view.excludes;
	wo.nexcludes = o->view.nexcludes;
	wo.entry_only = o->entry_only;
	wo.no_guard = o->no_guard;
	wo.quiet_setup = o->list || o->plan;
	wo.plo.no_shift = o->no_shift;
	wo.plo.returns = !o->entry_only;
	wo.plo.entry_only = o->entry_only;
	wo.probe_cost = ft->have_cost ? ft->probe_cost : NULL;
	err = whole__open(&wo, &ft->whole);
	if (!err)
		ft->wt = whole__table(ft->whole);
	return err;
}

/* The function table of a whole-container trace as the per-fid arrays
 * trace_opts and runner_opts take (borrowed: not freed here). */
void ftrace__borrow_table(struct ftrace *ft)
{
	ft->offsets = ft->wt->offsets;
	ft->names = ft->wt->names;
	ft->lnames = ft->wt->lnames;
	ft->binaries = ft->wt->binaries;
	ft->sp_delta = ft->wt->sp_delta;
	ft->probe_ns = ft->wt->probe_ns;
	ft->o.view.cct.probe_ns = ft->wt->probe_ns;
	ft->nfuncs = atomic_load(&ft->wt->n);
}

/* ---- the run ---- */

/* Undo whatever the stages did, in reverse; the target is let go or, if
 * we launched it and it did not start, killed. NULL is fine. */
static void ftrace_free(struct ftrace *ft)
{
	if (!ft)
		return;
	if (ft->runner_started) {
		if (ft->stage)
			stage__close(ft->stage);
		runner__join(ft->rn);
	}
	iotrace__free(ft->io);
	trace__detach(ft->tr);
	guard__stop(ft->guard, NULL); /* before the trace's maps go: its events use them */
	if (ft->whole) {
		/* its guards too; the table's arrays are its own */
		whole__stop(ft->whole, NULL);
		ft->offsets = NULL;
		ft->names = ft->lnames = ft->binaries = NULL;
		ft->sp_delta = NULL;
		ft->probe_ns = NULL;
	}
	watchdog__done(ft->wd_fd);
	trace__free(ft->tr); /* detaches: nothing stays in the target */
	/* The guard's tracer thread may have reaped the target: its status
	 * is taken before the guard goes, and the target waited for as any
	 * child from then on (the hook would read a freed guard). */
	if (ft->have_target && ft->tg.reaped_ctx == ft->guard) {
		if (ft->guard && ft->tg.spawned)
			target__poll_exit(&ft->tg);
		ft->tg.reaped = NULL;
		ft->tg.reaped_ctx = NULL;
	}
	guard__free(ft->guard);
	ft->guard = NULL;
	if (ft->cgfd >= 0)
		close(ft->cgfd);
	if (ft->stats_fd >= 0)
		close(ft->stats_fd);
	if (ft->have_target && ft->tg.spawned && !ft->started)
		target__abort(&ft->tg);
	if (ft->have_target && ft->tg.spawned && ft->started && !target__wait(&ft->tg, 2000)) {
		log_warn("%s (pid %d) ignored the signal: killing it", ft->tg.comm,
			 (int)ft->tg.pid);
		target__abort(&ft->tg);
	}
	target__close(&ft->tg);
	if (ft->own_cg)
		cgroup__remove_own(ft->cgpath);
	runner__free(ft->rn);
	recorder__free(ft->rec);
	sampler__free(ft->smp);
	budget__free(ft->bud);
	free(ft->call_cost);
	free(ft->call_leak);
	free(ft->hit_leak);
	free(ft->aft_in);
	free(ft->aft_out);
	free(ft->first_group);
	free(ft->partial);
	free(ft->probe_ns);
	stage__free(ft->stage);
	free(ft->offsets);
	free(ft->names);
	free(ft->lnames);
	for (size_t i = 0; ft->lines && i < ft->nbins; i++)
		dwarf__free(ft->lines[i]);
	for (size_t i = 0; ft->dfs && i < ft->nbins; i++)
		dwarf__close(ft->dfs[i]);
	free(ft->lines);
	free(ft->dfs);
	free(ft->src);
	free(ft->bins);
	free(ft->binaries);
	free(ft->sp_delta);
	free(ft->resume_len);
	free(ft->sized);
	free(ft->vals);
	free(ft->csites);
	free(ft->idx);
	for (size_t i = 0; ft->labels && i < ft->nlabels; i++)
		free(ft->labels[i]);
	free(ft->labels);
	plan__free(ft->plan);
	libs__free(ft->libs);
	syms__free(ft->st);
	whole__free(ft->whole);
	free(ft);
}

int ftrace__run(const struct opts *o, volatile sig_atomic_t *stop, int *exit_code)
{
	struct ftrace *ft = calloc(1, sizeof(*ft));
	int err, run_err, report_err;

	*exit_code = 0;
	if (!ft) {
		log_err("out of memory");
		return -ENOMEM;
	}
	ft->o = *o;
	ft->stop = stop;
	ft->main_fid = -1;
	/* cabbpf record analyzes live only when a live result is asked for. */
	ft->live = !o->record_path || o->analyzers || o->json_path || o->view.folded_path ||
		   o->view.svg_path || o->view.pprof_path || o->view.timeline_path;
	ft->tg.pidfd = ft->tg.err_fd = -1;
	ft->cgfd = -1;
	ft->wd_fd = -1;
	ft->stats_fd = -1;
	if (o->debug_dir)
		syms__set_debug_dir(o->debug_dir);
	ftrace__startup_mark(NULL);
	/* cabbpf or its shell: said before anything is measured or loaded */
	if (o->pid && !o->cmd && (err = target__check_pid(o->pid, "trace", false)))
		goto cleanup;
	/* -p PID --follow-forks: its cgroup must be its process tree */
	if (o->follow_forks && o->pid &&
	    (err = cgroup__tree_of(o->pid, ft->cgpath, sizeof(ft->cgpath))))
		goto cleanup;
	if (!o->list && !o->plan) {
		err = check_kernel(ft);
		ftrace__startup_mark("kernel features");
		if (err)
			goto cleanup;
		o = &ft->o; /* check_kernel may have narrowed it */
	}

	/* Before any other child exists (the guard's tracer reaps every
	 * child): what a probed call costs, for the cct's compensated times
	 * and the isp's costs. */
	if ((((!o->analyzers || strstr(o->analyzers, "cct") || strstr(o->analyzers, "isp")) &&
	      !o->entry_only && !o->no_times) ||
	     o->budget_pct || o->sample_pct > 0 || o->start_disabled ||
	     ftrace_attach__cpu_sample_ns(ft)) &&
	    !o->floor && !o->list && !o->plan) {
		err = calibrate__probe_costs(o->no_times, ft->probe_cost, ft->probe_leak,
					     ft->probe_aft);
		ft->have_cost = !err;
		/* probes that fire and deliver nothing: no trace to take */
		if (err == -ENODATA)
			goto cleanup;
		err = 0;
	}
	ftrace__startup_mark("probe-cost calibration");
	if (whole_mode(o)) {
		/* every process of the container (user/trace/whole.h); SIGCHLD
		 * blocked before any thread exists: the guards' tracers take it */
		sigset_t chld;

		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		pthread_sigmask(SIG_BLOCK, &chld, NULL);
		err = open_whole(ft);
	} else {
		err = resolve_target(ft);
		ftrace__startup_mark("target");
		if (!err)
			err = ftrace_select__functions(ft);
		ftrace__startup_mark("symbols and selection");
		if (!err)
			err = ftrace_select__plan(ft);
		ftrace__startup_mark("plan");
	}
	if (!err && (o->list || o->plan)) {
		ftrace_select__print(ft);
		goto cleanup;
	}
	if (!err)
		err = ftrace_attach__probes(ft);
	if (!err)
		err = ftrace_loop__start(ft);
	ftrace__startup_mark("start");
	if (err)
		goto cleanup;
	/* From here a trace exists: it is reported even when the run or the
	 * last drain failed; the first error is the run's. */
	run_err = ftrace_loop__until_stop(ft);
	err = ftrace_loop__detach(ft, run_err);
	report_err = ftrace_report__write(ft);
	*exit_code = ft->exit_code;
	if (run_err)
		err = run_err;
	else if (!err)
		err = report_err;
cleanup:
	ftrace_free(ft);
	return err;
}
