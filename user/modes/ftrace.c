// SPDX-License-Identifier: BSD-2-Clause
/*
 * The function-tracing run (ftrace.h): the stages, in order, wire the
 * modules together: target (fork and hold, or find the pid) -> symbols ->
 * guard and plan -> BPF (open, rodata, load), analyzers, attach -> release
 * the target -> drain until it exits, Ctrl-C or -d -> detach -> last drain
 * -> join analyzers -> report.
 */
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "cab/cab.h"
#include "common/log.h"
#include "common/outfile.h"
#include "user/kernel/features.h"
#include "pipeline/runner.h"
#include "common/outputs.h"
#include "user/cli/report.h"
#include "user/elf/dwarf.h"
#include "user/elf/ifunc.h"
#include "user/elf/image.h"
#include "user/elf/lang.h"
#include "user/elf/syms.h"
#include "user/iomode/iotrace.h"
#include "analyzers/isp.h"
#include "user/probe/plan.h"
#include "user/proc/cgroup.h"
#include "user/proc/libpath.h"
#include "user/proc/libs.h"
#include "user/proc/target.h"
#include "user/record/recorder.h"
#include "user/trace/budget.h"
#include "user/trace/calibrate.h"
#include "user/modes/ftrace.h"
#include "user/trace/guard.h"
#include "user/trace/stage.h"
#include "user/trace/sampler.h"
#include "user/trace/trace.h"
#include "user/trace/watchdog.h"
#include "user/trace/whole.h"

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
	uint8_t *sized; /* --size spec byte per fid (analyzers/isp.h), or NULL */
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
	/* detach */
	struct guard_stats gst;
	/* the cct's compensated times: a probed call's cost by entry class
	 * (user/trace/calibrate.h), and per fid */
	double probe_cost[INSN__NCLASS];
	/* of it, what the progress clock counts, and its standard error */
	struct progress_leak probe_leak[INSN__NCLASS];
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

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* -v: how long each start-up stage took (wall), since the last mark, so
 * that a slow start can be told apart from a slow target. */
static void startup_mark(const char *stage)
{
	static double last;
	double t = now_s();

	if (last > 0)
		log_debug("start-up: %s in %.1f ms", stage, (t - last) * 1e3);
	last = t;
}

/* CPU time (user + system) of all of cabbpf's threads so far. */
static double cpu_now_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* One link per site needs two fds per function when multi-uprobes are
 * missing: lift the soft limit to the hard one. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int on_event(void *ctx, unsigned cpu, const struct cabbpf_event *e)
{
	struct ftrace *ft = ctx;
	int err;

	if (ft->whole)
		whole__see(ft->whole, e);
	if (ft->hit_leak && (e->kind == CABBPF_EV_ENTRY || e->kind == CABBPF_EV_RETURN))
		sampler__hit(ft->smp, e->epoch, e->fid & CABBPF_COOKIE_FID);
	err = stage__push(ft->stage, cpu, e);

	if (err)
		ft->stage_err = err;
	return err;
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
	if (!o->cmd && ft->cgfd >= 0 &&
	    (err = cgroup__check_pid(ft->cgpath, o->pid, o->container)))
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
	if (o->follow_forks) {
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
static void borrow_table(struct ftrace *ft)
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

/* ---- select functions ---- */

/* Without return probes (the guard could not be set up, Go): counts only. */
static void fall_back_to_entries(struct opts *o)
{
	o->entry_only = true;
	if (!o->analyzers || strstr(o->analyzers, "callgraph"))
		o->analyzers = "count";
}

/* A stripped executable without even exported functions (Debian's zstd,
 * openssl): what can be done instead is tracing the libraries it links,
 * which the message names so the user has the -f to type. */
static void log_no_symbols(const char *exe)
{
	char libs[512] = "", **names = NULL;
	size_t i, n = 0, o = 0;

	if (!libpath__needed(exe, &names, &n))
		for (i = 0; i < n && o < sizeof(libs); i++)
			if (!strchr(names[i], '/')) /* not the interpreter */
				o += (size_t)snprintf(libs + o, sizeof(libs) - o, "%s%s",
						      o ? ", " : "", names[i]);
	libpath__free_names(names, n);
	log_err("%s has no function symbols to trace (stripped: install its separate debug "
		"symbols, e.g. Debian's -dbgsym package, or point --debug-dir at them)%s%s%s",
		exe, o ? "; or trace the libraries it links with -f 'LIB:GLOB' (" : "", libs,
		o ? ")" : "");
}

static int load_symbols(struct ftrace *ft)
{
	const char *exe = ft->tg.exe;
	int err;

	/* LIB:GLOB selectors are for shared libraries (user/proc/libs.h); with
	 * nothing but those, nothing of the main executable is traced. */
	if (ft->o.nfuncs && !ft->nexe)
		return 0;
	err = syms__load(exe, &ft->st);
	if (err == -ENOEXEC)
		log_err("%s is not an ELF executable (nor a #! script, whose interpreter "
			"would be traced)",
			exe);
	else if (err == -ENODATA)
		log_no_symbols(exe);
	else if (!err && ft->st->debug_path)
		log_info("symbols of %s from its debug file %s", exe, ft->st->debug_path);
	else if (!err && ft->st->from_dynsym)
		/* Most of a distribution's /usr/bin: the trace runs, but what
		 * it shows is the program's API, not its work (seen: sort,
		 * 6 functions, 0 calls), which nothing else would explain. */
		log_warn("%s is stripped and its debug file was not found: only its %zu exported "
			 "function%s can be traced, not its internal ones; install its debug "
			 "symbols (Debian: its -dbgsym package) or point --debug-dir at them",
			 exe, ft->st->nsyms, ft->st->nsyms == 1 ? "" : "s");
	else if (err)
		log_err("reading symbols of %s: %s", exe, strerror(-err));
	return err;
}

/* Entry probes only when the executable, or a library a -f LIB:GLOB
 * names, runs a language runtime that reads the return addresses of its
 * frames (Go, V8, the JVM, OCaml): the guard cannot give those back in
 * time. */
static void walkers_entries_only(struct ftrace *ft)
{
	struct opts *o = &ft->o;
	char path[PATH_MAX], lib[256];
	const char *what = NULL, *who = ft->tg.exe;
	struct lang_info li;
	size_t i, len;

	if (!lang__detect(who, &li))
		what = lang__walker(&li);
	for (i = 0; !what && i < o->nfuncs; i++) {
		if (!libs__is_selector(o->funcs[i]))
			continue;
		len = strcspn(o->funcs[i], ":");
		snprintf(lib, sizeof(lib), "%.*s", (int)len, o->funcs[i]);
		if (libs__resolve_exe(ft->tg.pid, ft->tg.spawned ? ft->tg.exe : NULL, lib, path,
				      sizeof(path)) ||
		    lang__detect(path, &li) || !(what = lang__walker(&li)))
			continue;
		who = lib;
	}
	if (!what)
		return;
	fall_back_to_entries(o);
	if (!o->list)
		log_info("%s is %s %s %s: tracing function entries only (return probes would "
			 "corrupt its runtime's stack walks); counts are exact, no times or call "
			 "graph",
			 who, lang__article(what), what, who == ft->tg.exe ? "program" : "library");
}

static int select_functions(struct ftrace *ft)
{
	struct opts *o = &ft->o;
	size_t i;
	int err;

	for (i = 0; i < o->nfuncs; i++)
		if (!libs__is_selector(o->funcs[i]))
			ft->exe_globs[ft->nexe++] = o->funcs[i];
	err = load_symbols(ft);
	if (err)
		return err;
	/* Go's runtime, V8, the JVM and OCaml walk their stacks' return
	 * addresses: a return probe kills them (user/elf/lang.h). No override
	 * on purpose. */
	if (!o->entry_only)
		walkers_entries_only(ft);
	err = ft->st ? syms__select(ft->st, ft->exe_globs, ft->nexe, &ft->idx, &ft->n) : 0;
	if (!err || (err == -ENOENT && ft->nexe))
		syms__warn_unmatched(ft->st, ft->exe_globs, ft->nexe, !err || o->nfuncs > ft->nexe);
	if (err == -ENOENT && ft->nexe && o->nfuncs > ft->nexe) {
		/* Nothing of the executable, but library selectors remain. */
		syms__free(ft->st);
		ft->st = NULL;
		return 0;
	}
	if (err == -ENOENT && ft->nexe)
		log_err("no function of %s matches the -f pattern%s given (%s%s); list them with: "
			"cabbpf -l",
			ft->tg.exe, ft->nexe > 1 ? "s" : "", ft->exe_globs[0],
			ft->nexe > 1 ? ", ..." : "");
	else if (err == -ENOENT)
		log_err("%s has no function to trace", ft->tg.exe);
	else if (err)
		log_err("selecting functions: %s", strerror(-err));
	if (err)
		return err;
	/* -N: left out of the trace altogether (user/cli/views.h). */
	if (views__exclude(&o->view, ft->st, ft->idx, &ft->n) && !ft->n &&
	    ft->nexe == o->nfuncs) {
		log_err("every function selected is excluded by -N");
		return -ENOENT;
	}
	/* An IFUNC (a static binary's memcpy) is probed on what it runs. */
	ft->nlabels = ft->n;
	err = ft->n ? ifunc__redirect(ft->tg.pid, ft->st, ft->tg.comm, ft->idx, &ft->n, &ft->labels)
		    : 0;
	if (err == -ENOENT && ft->nexe == o->nfuncs)
		log_err("nothing of %s left to trace: every function selected is an IFUNC whose "
			"implementation is unknown",
			ft->tg.exe);
	else if (err == -ENOENT) { /* library selectors remain */
		syms__free(ft->st);
		ft->st = NULL;
		err = 0;
	}
	else if (err)
		log_err("resolving IFUNC symbols: %s", strerror(-err));
	return err;
}

/* ---- plan ---- */

/* Set up the guard of the target (user/trace/guard.h): find its sites and
 * become the target's tracer. Where that is impossible, trace entries
 * only: a return probe the unwinder might read must never be left
 * unwatched. Returns 0 (ft->guard may stay NULL: no site, or the
 * fallback) or -errno (logged). */
static int guard_target(struct ftrace *ft)
{
	struct target *tg = &ft->tg;
	struct guard *g = NULL;
	int err;

	err = guard__open(tg->pid, tg->exe, tg->spawned, &g);
	if (err == -ENOENT)
		return 0; /* nothing in the target reads or moves return addresses */
	if (err) {
		log_err("finding the unwinder of %s: %s", tg->exe, strerror(-err));
		return err;
	}
	guard__forks(g);
	/* Its safety outlives cabbpf: a kill -9 of cabbpf must not leave a
	 * trampoline for the target's next throw (user/trace/guardian.h). */
	guard__guardian(g);
	err = guard__seize(g);
	if (err && ft->o.lossless) {
		guard__free(g);
		log_err("--lossless holds the target's threads as its ptrace tracer: not possible "
			"here");
		return err;
	}
	if (err) {
		guard__free(g);
		if (err == -ESRCH)
			log_warn("cannot become the ptrace tracer of pid %d: it ended",
				 (int)tg->pid);
		log_warn("tracing function entries only (no times, no call graph): return "
			 "probes would kill %s if it throws an exception",
			 tg->comm);
		fall_back_to_entries(&ft->o);
		return 0;
	}
	tg->reaped = (int (*)(void *, int *))guard__reaped;
	tg->reaped_ctx = g;
	ft->guard = g;
	return 0;
}

/* --lossless without a guard (nothing to guard, --entry-only,
 * --no-guard): the tracer alone, which holds the threads the BPF program
 * stops at the rings' high-water mark. Returns 0 or -errno (logged). */
static int lossless_tracer(struct ftrace *ft)
{
	struct guard *g = NULL;
	int err;

	err = guard__open_tracer(ft->tg.pid, ft->tg.spawned, &g);
	if (!err)
		err = guard__seize(g);
	if (err) {
		guard__free(g);
		log_err("--lossless holds the target's threads as its ptrace tracer: not possible "
			"here (%s)",
			strerror(-err));
		return err;
	}
	ft->tg.reaped = (int (*)(void *, int *))guard__reaped;
	ft->tg.reaped_ctx = g;
	ft->guard = g;
	return 0;
}

static int plan_probes(struct ftrace *ft)
{
	const struct opts *o = &ft->o;
	struct plan_opts plo_libs;
	int err;

	/* Return probes write into the target's stacks: the guard keeps the
	 * unwinder and stack switches from seeing them (user/trace/guard.h).
	 * Its tracer process also lets go of a target held by --lossless
	 * should cabbpf die (a watcher that continued it on its own could let
	 * a thread throw before the tracer wrote its return addresses back). */
	if (!o->entry_only && !o->list && !o->plan && !o->no_guard) {
		err = guard_target(ft);
		startup_mark("guard");
		if (err)
			return err;
	}
	/* --lossless without a guard: the watcher that continues the target
	 * should cabbpf die while it holds it; before the tracer thread exists
	 * (none does yet: no guard, or its tracer ended). */
	if (o->lossless && !o->list && !o->plan && !ft->guard) {
		ft->wd_fd = watchdog__start(ft->tg.pid);
		if (ft->wd_fd < 0)
			return ft->wd_fd;
	}
	if (o->lossless && !o->list && !o->plan && !ft->guard) {
		err = lossless_tracer(ft);
		if (err)
			return err;
	}
	/* Where each probe goes and what it costs, before anything is
	 * attached: --plan stops after this stage. */
	ft->plo.no_shift = o->no_shift;
	ft->plo.returns = !o->entry_only;
	ft->plo.entry_only = o->entry_only;
	ft->plo.callsites = o->entry_only && !o->no_callsites;
	err = ft->st ? plan__build(ft->st, ft->idx, ft->n, &ft->plo, &ft->plan) : 0;
	if (err) {
		log_err("planning probes in %s: %s", ft->tg.exe, strerror(-err));
		return err;
	}
	/* Libraries: no call-site counting (libs__fill passes one site per
	 * function; and most library functions are exported anyway). */
	plo_libs = ft->plo;
	plo_libs.callsites = false;
	err = libs__load_exe(ft->tg.pid, ft->tg.exe, o->funcs, o->nfuncs, &plo_libs, &ft->libs);
	if (err)
		return err; /* libs__load said which library */
	if (!ft->n && ft->libs && !ft->libs->nfuncs) {
		/* Several patterns, each named above as matching nothing. */
		log_err("no function matches the -f patterns given; list them with: cabbpf -l");
		return -ENOENT;
	}
	return 0;
}

/* --list and --plan: what plan_probes found, on stdout. */
static void print_selection(const struct ftrace *ft)
{
	size_t i;

	if (ft->whole) {
		whole__print(ft->whole, stdout, ft->o.analyzers, ft->o.verbose, ft->o.list);
		return;
	}
	if (ft->o.list) {
		struct srclines *src = NULL;

		/* with each function's source line where DWARF has it (not
		 * an error when it cannot be read: the list without lines) */
		if (ft->st && ft->n) {
			dwarf__lines(ft->st, ft->idx, ft->n, &src);
			syms__print_list(stdout, ft->st, ft->idx, ft->n, src ? src->v : NULL);
			dwarf__free(src);
		}
		for (i = 0; ft->libs && i < ft->libs->nlibs; i++) {
			const struct lib *b = &ft->libs->v[i];

			src = NULL;
			dwarf__lines(b->st, b->idx, b->n, &src);
			syms__print_list(stdout, b->st, b->idx, b->n, src ? src->v : NULL);
			dwarf__free(src);
		}
		return;
	}
	if (ft->n)
		plan__print(stdout, ft->plan, ft->st, ft->idx, ft->o.analyzers, ft->o.verbose);
	libs__print(stdout, ft->libs, ft->o.analyzers, ft->o.verbose);
}

/* ---- attach ---- */

/* The call instructions of the plan's functions counted at call sites
 * (fid = index in the plan), for trace_opts. Returns 0 or -ENOMEM; the
 * caller frees *out. */
static int callsites_of(const struct plan *p, struct trace_callsite **out, size_t *n)
{
	struct trace_callsite *v;
	size_t i, j, k = 0;

	*out = NULL;
	*n = 0;
	if (!p->callsite_sites)
		return 0;
	v = calloc(p->callsite_sites, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < p->n; i++)
		for (j = 0; p->sites[i].rule == PLAN_CALLSITES && j < p->sites[i].ncalls; j++) {
			v[k].offset = p->sites[i].calls[j];
			v[k].fid = (uint32_t)i;
			v[k++].sp_delta = (int32_t)p->sites[i].sp_delta;
		}
	*out = v;
	*n = k;
	return 0;
}

/* Functions that must never get a return probe (guard__unsafe): not
 * probed at all (offsets[] = TRACE_NO_PROBE), with one line naming the
 * first few. */
static void drop_unsafe(struct ftrace *ft)
{
	const struct libs *libs = ft->libs;
	struct guard_dropped d = {0};
	size_t i, j, k = ft->n;

	for (i = 0; i < ft->n; i++)
		if (guard__unsafe(ft->st, &ft->st->syms[ft->idx[i]])) {
			ft->offsets[i] = TRACE_NO_PROBE;
			guard__dropped_add(&d, ft->st->syms[ft->idx[i]].name);
		}
	for (i = 0; libs && i < libs->nlibs; i++)
		for (j = 0; j < libs->v[i].n; j++, k++) {
			const struct sym *s = &libs->v[i].st->syms[libs->v[i].idx[j]];

			if (guard__unsafe(libs->v[i].st, s)) {
				ft->offsets[k] = TRACE_NO_PROBE;
				guard__dropped_add(&d, s->name);
			}
		}
	guard__dropped_say(&d, "");
}

/* -v: every function of plan p (functions idx[] of st, in file) that is
 * not probed because of its first instruction, by name and instruction. */
static void name_refused(const struct plan *p, const struct symtab *st, const size_t *idx,
			 const char *file)
{
	size_t i;

	for (i = 0; p && i < p->n; i++)
		if (p->sites[i].rule == PLAN_SKIPPED)
			log_debug("not probed: %s in %s: %s: %s", st->syms[idx[i]].name, file,
				  p->sites[i].entry_text,
				  insn__verdict_name(p->sites[i].entry_verdict));
}

/* --size (analyzers/isp.h): each traced function's spec byte, from the
 * first rule whose glob matches its name (or linkage name). A rule that
 * matches nothing is an error: the user named a function not traced.
 * Returns 0 or -errno (logged). */
static int size_rules(struct ftrace *ft)
{
	size_t r, i;

	if (!ft->o.isp.nsizes)
		return 0;
	ft->sized = calloc(ft->nfuncs + 1, sizeof(*ft->sized));
	if (!ft->sized) {
		log_err("out of memory");
		return -ENOMEM;
	}
	for (r = 0; r < ft->o.isp.nsizes; r++) {
		char glob[256];
		uint8_t spec;
		size_t hits = 0;

		if (isp__parse_size(ft->o.isp.sizes[r], glob, sizeof(glob), &spec))
			return -EINVAL; /* opts checked it */
		for (i = 0; i < ft->nfuncs; i++) {
			bool m = (ft->names[i] && !fnmatch(glob, ft->names[i], 0)) ||
				 (ft->lnames[i] && !fnmatch(glob, ft->lnames[i], 0));

			if (!m || ft->offsets[i] == TRACE_NO_PROBE)
				continue;
			hits++;
			if (!ft->sized[i])
				ft->sized[i] = spec;
		}
		if (!hits) {
			log_err("--size %s: no traced function matches '%s' (see -l)",
				ft->o.isp.sizes[r], glob);
			return -ENOENT;
		}
	}
	ft->o.isp.sized = ft->sized;
	return 0;
}

/* The site class of fid (the executable's functions, then the
 * libraries'), INSN_REFUSED when it is counted at call sites. */
static enum insn_class site_class(const struct ftrace *ft, size_t fid)
{
	const struct libs *libs = ft->libs;
	size_t i, k = ft->n;

	if (fid < ft->n)
		return ft->plan->sites[fid].rule == PLAN_CALLSITES ? INSN_REFUSED
								   : ft->plan->sites[fid].cls;
	for (i = 0; libs && i < libs->nlibs; k += libs->v[i].n, i++)
		if (fid < k + libs->v[i].n)
			return libs->v[i].plan->sites[fid - k].cls;
	return INSN_REFUSED;
}

/* Sampling: what one probe hit of each function adds to the progress
 * clock (calibrate.h), by its site's class, into ft->hit_leak; left NULL
 * (nothing to take out) when the cost was not measured or there is no
 * such share. Returns 0 or -ENOMEM (logged). */
static int hit_leaks(struct ftrace *ft)
{
	size_t i;

	if (!ft->have_cost ||
	    !(ft->probe_leak[INSN_NOP5].ns > 0 || ft->probe_leak[INSN_EMULATED].ns > 0 ||
	      ft->probe_leak[INSN_SSTEP].ns > 0))
		return 0;
	ft->hit_leak = calloc(ft->nfuncs + 1, sizeof(*ft->hit_leak));
	if (!ft->hit_leak) {
		log_err("out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < ft->nfuncs; i++) {
		enum insn_class c = site_class(ft, i);

		if (c == INSN_REFUSED)
			c = INSN_EMULATED; /* call sites: a call instruction */
		/* a call is an entry and a return, but for entry-only runs */
		ft->hit_leak[i].ns = ft->probe_leak[c].ns / (ft->o.entry_only ? 1 : 2);
		ft->hit_leak[i].sd_ns = ft->probe_leak[c].sd_ns / (ft->o.entry_only ? 1 : 2);
	}
	return 0;
}

/* --budget: what one traced call of each function costs the target, by
 * its site's class: measured at start-up (user/trace/calibrate.h), else
 * the plan's figures (an entry plus a return). Functions counted at their
 * call sites cost what an emulated call instruction does. Returns 0 or
 * -ENOMEM (logged). */
static int budget_costs(struct ftrace *ft)
{
	size_t all = ft->n + (ft->libs ? ft->libs->nfuncs : 0), i;

	ft->call_cost = calloc(all + 1, sizeof(*ft->call_cost));
	ft->call_leak = calloc(all + 1, sizeof(*ft->call_leak));
	if (!ft->call_cost || !ft->call_leak) {
		log_err("out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < all; i++) {
		enum insn_class c = site_class(ft, i);

		if (ft->offsets[i] == TRACE_NO_PROBE)
			continue;
		/* The probe's generation takes the cookie's top byte: 24 bits
		 * of sp correction are left (include/cabbpf_event.h). */
		if ((int32_t)ft->sp_delta[i] > CABBPF_SP24_MAX ||
		    (int32_t)ft->sp_delta[i] < -CABBPF_SP24_MAX - 1) {
			log_warn("--budget: not tracing %s: its probe is %d bytes of stack from "
				 "its entry, more than a budget's probe can carry",
				 ft->names[i], (int)(int32_t)ft->sp_delta[i]);
			ft->offsets[i] = TRACE_NO_PROBE;
			continue;
		}
		if (c == INSN_REFUSED)
			c = INSN_EMULATED; /* call sites: a call instruction */
		ft->call_cost[i] = ft->have_cost && ft->probe_cost[c] > 0
					   ? ft->probe_cost[c]
					   : insn__cost_ns(c) + (ft->o.entry_only ? 0 : 300);
		if (ft->have_cost)
			ft->call_leak[i] = ft->probe_leak[c];
	}
	ft->first_group = calloc(all + 1, 1);
	if (!ft->first_group) {
		log_err("out of memory");
		return -ENOMEM;
	}
	budget__first_groups(ft->call_cost, (uint32_t)all, ft->first_group);
	return 0;
}

/* One binary's functions st->syms[idx[0..n)] into src[0..n): binary
 * bin, address and size (the source lines come later: source_lines). */
static void locate(const struct symtab *st, const size_t *idx, size_t n, uint32_t bin,
		   struct an_src *src)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct sym *s = &st->syms[idx[i]];

		src[i] = (struct an_src){
			.bin = bin, .vaddr = s->vaddr, .size = s->size, .foff = s->offset};
	}
}

/* Where every fid's code is (ft->src, ft->bins): binary, address; the
 * runner's reports read them (pprof's mappings). Returns 0 or -ENOMEM
 * (logged). */
static int locate_functions(struct ftrace *ft)
{
	const struct libs *libs = ft->libs;
	size_t i, k = ft->n, nl = libs ? libs->nlibs : 0;

	ft->src = calloc(ft->nfuncs + 1, sizeof(*ft->src));
	ft->bins = calloc(nl + 1, sizeof(*ft->bins));
	ft->lines = calloc(nl + 1, sizeof(*ft->lines));
	ft->dfs = calloc(nl + 1, sizeof(*ft->dfs));
	if (!ft->src || !ft->bins || !ft->lines || !ft->dfs) {
		log_err("out of memory");
		return -ENOMEM;
	}
	ft->nbins = (uint32_t)(nl + 1);
	ft->bins[0].path = ft->tg.exe;
	ft->bins[0].build_id = ft->st ? ft->st->build_id : NULL;
	/* The files with DWARF are opened now: a path under /proc/PID/root
	 * is gone once the process is (source_lines reads them at the end). */
	if (ft->st) {
		locate(ft->st, ft->idx, ft->n, 0, ft->src);
		if (dwarf__open(ft->st, &ft->dfs[0]) == -ENOMEM)
			return -ENOMEM;
	}
	for (i = 0; i < nl; i++) {
		const struct lib *b = &libs->v[i];

		ft->bins[1 + i].path = b->path;
		ft->bins[1 + i].build_id = b->st->build_id;
		locate(b->st, b->idx, b->n, (uint32_t)(1 + i), ft->src + k);
		if (dwarf__open(b->st, &ft->dfs[1 + i]) == -ENOMEM)
			return -ENOMEM;
		k += b->n;
	}
	return 0;
}

/*
 * Every fid's source file and line (user/elf/dwarf.h) into ft->src,
 * from each binary's DWARF (its own or its debug file's, opened at the
 * start by locate_functions). Reading DWARF
 * costs up to about half a second for thousands of functions (README,
 * "Source lines"), so it is done after the trace, and only for what shows
 * lines: --json, --pprof, a recording. Best effort: a binary whose DWARF
 * cannot be read keeps no lines (said with -v). Main thread, analyzers
 * stopped (the reports read ft->src).
 */
static void source_lines(struct ftrace *ft)
{
	const struct libs *libs = ft->libs;
	size_t i, j, k = ft->n, nl = libs ? libs->nlibs : 0;

	if (!ft->src || ft->lines_done)
		return;
	ft->lines_done = true;
	if (ft->st && !dwarf__lines_in(ft->dfs[0], ft->st, ft->idx, ft->n, &ft->lines[0]))
		for (j = 0; j < ft->n; j++) {
			ft->src[j].file = ft->lines[0]->v[j].file;
			ft->src[j].line = ft->lines[0]->v[j].line;
		}
	for (i = 0; i < nl; k += libs->v[i].n, i++) {
		const struct lib *b = &libs->v[i];

		if (dwarf__lines_in(ft->dfs[1 + i], b->st, b->idx, b->n, &ft->lines[1 + i]))
			continue;
		for (j = 0; j < b->n; j++) {
			ft->src[k + j].file = ft->lines[1 + i]->v[j].file;
			ft->src[k + j].line = ft->lines[1 + i]->v[j].line;
		}
	}
}

/* The per-fid arrays trace_opts and runner_opts take: the executable's
 * functions, then the libraries'. Returns 0 or -errno (logged). */
static int number_functions(struct ftrace *ft)
{
	const struct symtab *st = ft->st;
	const struct libs *libs = ft->libs;
	size_t i, j, k, n = ft->n, all = n + (libs ? libs->nfuncs : 0);
	char line[256];
	int err;

	if (n) {
		plan__summary(ft->plan, line, sizeof(line));
		log_info("%s", line);
		name_refused(ft->plan, st, ft->idx, ft->tg.exe);
	}
	for (i = 0; libs && i < libs->nlibs; i++) {
		plan__summary(libs->v[i].plan, line, sizeof(line));
		log_info("%s %s", libs->v[i].name, line);
		name_refused(libs->v[i].plan, libs->v[i].st, libs->v[i].idx, libs->v[i].name);
	}
	if (n > UINT32_MAX / 2) {
		log_err("too many functions (%zu)", n);
		return -E2BIG;
	}
	ft->offsets = calloc(all + 1, sizeof(*ft->offsets));
	ft->names = calloc(all + 1, sizeof(*ft->names));
	ft->lnames = calloc(all + 1, sizeof(*ft->lnames));
	ft->binaries = calloc(all + 1, sizeof(*ft->binaries));
	ft->sp_delta = calloc(all + 1, sizeof(*ft->sp_delta));
	if (!ft->offsets || !ft->names || !ft->lnames || !ft->binaries || !ft->sp_delta ||
	    (n && callsites_of(ft->plan, &ft->csites, &ft->ncsites))) {
		log_err("out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		const struct plan_site *ps = &ft->plan->sites[i];
		const struct sym *s = &st->syms[ft->idx[i]];

		/* PLAN_NO_PROBE == TRACE_NO_PROBE: refused sites stay out. */
		ft->offsets[i] = ps->rule == PLAN_CALLSITES ? TRACE_AT_CALLSITES : ps->offset;
		ft->sp_delta[i] = ps->sp_delta;
		/* Reports show the readable name (or what an IFUNC runs);
		 * JSON keeps the linkage one. */
		ft->names[i] = ft->labels && ft->labels[i] ? ft->labels[i]
			       : s->pretty			 ? s->pretty
							 : s->name;
		ft->lnames[i] = s->name;
	}
	libs__fill(libs, ft->offsets + n, ft->names + n, ft->binaries + n, ft->sp_delta + n);
	if (ft->have_cost && (ft->probe_ns = calloc(all + 1, sizeof(*ft->probe_ns)))) {
		/* Each fid's measured cost by the class of its probe site; the
		 * tree subtracts it for every call below a context. */
		for (i = 0; i < n; i++)
			if (ft->plan->sites[i].rule != PLAN_CALLSITES)
				ft->probe_ns[i] = ft->probe_cost[ft->plan->sites[i].cls];
		for (i = 0, k = n; libs && i < libs->nlibs; i++)
			for (j = 0; j < libs->v[i].n; j++, k++)
				ft->probe_ns[k] = ft->probe_cost[libs->v[i].plan->sites[j].cls];
		ft->o.view.cct.probe_ns = ft->probe_ns;
	}
	if (!ft->o.entry_only)
		drop_unsafe(ft);
	if (ft->o.budget_pct && (err = budget_costs(ft)))
		return err;
	for (i = 0, k = n; libs && i < libs->nlibs; i++)
		for (j = 0; j < libs->v[i].n; j++)
			ft->lnames[k++] = libs->v[i].st->syms[libs->v[i].idx[j]].name;
	ft->nfuncs = all;
	if (locate_functions(ft))
		return -ENOMEM;
	return size_rules(ft);
}

/* Load the guard's probes into the trace's rings. Returns 0 or -errno
 * (logged). */
/* The trace object's maps the guard's program shares (its events go into
 * the same rings, in each thread's order); "throttled" only with
 * --lossless and throttled. */
static struct guard_maps guard_maps_of(const struct ftrace *ft, bool throttled)
{
	struct guard_maps gm = {
		.slots_fd = trace__map_fd(ft->tr, "slots"),
		.heads_fd = trace__map_fd(ft->tr, "heads"),
		.tstates_fd = trace__map_fd(ft->tr, "tstates"),
		.tstab_fd = trace__map_fd(ft->tr, "tstab"),
		.tstab_mask = trace__tstab_mask(ft->tr),
		.stats_fd = trace__map_fd(ft->tr, "stats"),
		.ring_bytes = ft->o.ring_bytes,
		.no_times = ft->o.no_times,
		.no_multi_links = !ft->kp.multi_links,
		.guarded_fd = trace__map_fd(ft->tr, "guarded"),
		.throttled_fd = throttled && ft->o.lossless ? trace__map_fd(ft->tr, "throttled") : -1,
	};

	return gm;
}

static int attach_guard(struct ftrace *ft)
{
	struct guard_maps gm = guard_maps_of(ft, true);
	size_t i;
	int err;

	/* A library the trace probes may have a switch of its own: its
	 * frames' stacks must be guarded like the executable's. */
	for (i = 0; ft->libs && i < ft->libs->nlibs; i++) {
		err = guard__add_file(ft->guard, ft->libs->v[i].path);
		if (err)
			return err;
	}
	return guard__attach(ft->guard, &gm);
}

/* The BPF objects: trace (function probes), loaded, not attached yet.
 * Returns 0 or -errno (logged). */
static int open_trace(struct ftrace *ft)
{
	const struct opts *o = &ft->o;
	struct trace_opts to;
	int err;

	memset(&to, 0, sizeof(to));
	to.pid = ft->tg.pid;
	to.binary = ft->tg.exe;
	to.no_multi_links = !ft->kp.multi_links;
	to.no_session_kfunc = !ft->kp.session;
	to.binaries = ft->binaries;
	if (ft->whole) {
		/* every process of the cgroup: the function table grows
		 * (trace__add); returns armed per process (trace__arm) */
		to.pid = 0;
		to.binary = whole__what(ft->whole);
		to.session = !o->entry_only;
	}
	to.no_returns = o->entry_only;
	to.sp_delta = ft->sp_delta;
	to.size_specs = ft->sized;
	to.offsets = ft->offsets;
	to.nfuncs = (uint32_t)ft->nfuncs;
	to.callsites = ft->csites;
	to.ncallsites = ft->ncsites;
	to.ring_bytes = o->ring_bytes;
	to.floor = o->floor;
	to.no_times = o->no_times;
	to.cgroup = ft->cgfd >= 0;
	to.sampling = ft->o.sample_pct > 0 || ft->o.start_disabled;
	to.groups = ft->o.budget_pct > 0;
	to.first_group = ft->first_group;
	to.start_paused = ft->o.start_disabled;
	to.gated = true; /* opened by start_run, once everything is in */
	to.lossless = ft->o.lossless;
	to.unguarded = !ft->guard && !ft->whole && !ft->o.lossless;
	to.on_event = on_event;
	to.ctx = ft;
	err = trace__open(&to, &ft->tr);
	if (err)
		return err;
	/* The guard's probes go in before the return probes: no trampoline
	 * is ever on a stack the guard does not watch. */
	if (ft->guard && (err = attach_guard(ft)))
		return err;
	if (ft->cgfd >= 0)
		return cgroup__set_filter(trace__map_fd(ft->tr, "cgfilter"), ft->cgfd);
	return 0;
}

/* Staging (CAB buffers) and the analyzers behind it. Returns 0 or -errno
 * (logged). */
static int open_pipeline(struct ftrace *ft)
{
	char list[256];
	struct runner_opts ro;
	struct cab_pp_opts po;
	int err;

	/* Small chunks: the loader starts a chunk at every thread switch and
	 * hands partial ones over at every poll round, so the default
	 * (4 x L1d per chunk) would mostly carry air. */
	memset(&po, 0, sizeof(po));
	/* --cab-mode sampling: a stalled analyzer never makes the loader
	 * wait (and so never lets the kernel rings fill); what it overwrites
	 * is counted and reported. */
	po.mode = ft->o.cab_mode && !strcmp(ft->o.cab_mode, "sampling") ? CAB_SAMPLING : CAB_EXHAUSTIVE;
	po.chunk_records = 256;
	po.nchunks = 256;
	po.max_chunks = 16384;
	/* CABBPF_TEST_CAB_CHUNKS=N: buffers of at most N chunks (>= 256), so
	 * the tests fill them in a fraction of a second. */
	if (getenv("CABBPF_TEST_CAB_CHUNKS") && atoi(getenv("CABBPF_TEST_CAB_CHUNKS")) >= 256)
		po.max_chunks = (size_t)atoi(getenv("CABBPF_TEST_CAB_CHUNKS"));
	if (ft->o.record_path && (err = recorder__open(ft->o.record_path, &ft->rec)))
		return err;
	err = stage__new(trace__ncpus(ft->tr), &po, &ft->stage);
	if (err) {
		log_err("allocating CAB buffers: %s", strerror(-err));
		return err;
	}
	/* A launched program's main, when traced and probed: a normal exit
	 * without its entry is a trace that saw nothing (check_delivery). */
	ft->main_fid = -1;
	for (size_t i = 0; ft->tg.spawned && !ft->whole && i < ft->n && i < ft->nfuncs; i++)
		if (ft->lnames[i] && !strcmp(ft->lnames[i], "main") &&
		    ft->offsets[i] != TRACE_NO_PROBE && ft->offsets[i] != TRACE_AT_CALLSITES &&
		    !ft->o.start_disabled &&
		    !ft->o.sample_pct && !ft->o.budget_pct) {
			ft->main_fid = (int)i;
			stage__watch(ft->stage, (uint32_t)i);
			break;
		}
	memset(&ro, 0, sizeof(ro));
	ro.fnames = ft->names;
	ro.lnames = ft->lnames;
	ro.nfuncs = (uint32_t)ft->nfuncs;
	ro.src = ft->src;
	ro.bins = ft->bins;
	ro.nbins = ft->nbins;
	if (ft->whole) {
		/* the table's room; what it holds is read at the join */
		ro.nfuncs = ft->wt->cap;
		ro.nfuncs_used = &ft->wt->n;
		ro.per_process = true;
		ro.called_only = true;
		/* ft->src holds the functions known at the start only, not
		 * the table's room: no source lines for a whole cgroup */
		ro.src = NULL;
		ro.bins = NULL;
		ro.nbins = 0;
	}
	/* --timeline adds its analyzer (opt-in) */
	ro.analyzers = views__analyzers(&ft->o.view, ft->o.analyzers, list, sizeof(list));
	ro.timeline_limit = ft->o.view.timeline_limit;
	ro.nthreads = ft->o.analyzer_threads;
	ro.no_returns = ft->o.entry_only;
	ro.cct = &ft->o.view.cct;
	if (ft->rec) {
		ro.tap = recorder__tap;
		ro.tap_ctx = ft->rec;
		ro.tap_only = !ft->live;
	}
	ro.isp = &ft->o.isp;
	if (ft->o.budget_pct) {
		ft->partial = calloc(BUDGET_PARTIAL_BYTES, 1);
		if (!ft->partial) {
			log_err("out of memory");
			return -ENOMEM;
		}
		ro.partial = ft->partial;
	}
	err = runner__new(&ro, stage__bufs(ft->stage), trace__ncpus(ft->tr), &ft->rn);
	/* runner__new names a wrong analyzer itself (-EINVAL); not the rest */
	if (err && err != -EINVAL)
		log_err("setting up the analyzers: %s", strerror(-err));
	return err;
}

/* I/O events into the same rings, with the same sequence numbers: after
 * trace__attach, which may have replaced the maps. Returns 0 or -errno
 * (logged). */
static int attach_io(struct ftrace *ft)
{
	struct iotrace_opts io_o;
	struct trace *tr = ft->tr;
	int err;

	memset(&io_o, 0, sizeof(io_o));
	io_o.pid = ft->tg.pid;
	io_o.floor = ft->o.floor;
	io_o.cgroup_fd = ft->cgfd;
	io_o.slots_fd = trace__map_fd(tr, "slots");
	io_o.heads_fd = trace__map_fd(tr, "heads");
	io_o.tstates_fd = trace__map_fd(tr, "tstates");
	io_o.tstab_fd = trace__map_fd(tr, "tstab");
	io_o.tstab_mask = trace__tstab_mask(tr);
	io_o.stats_fd = trace__map_fd(tr, "stats");
	io_o.ring_bytes = ft->o.ring_bytes;
	io_o.no_casts = !ft->kp.io_casts;
	err = iotrace__open(&io_o, &ft->io);
	return err ? err : iotrace__attach(ft->io);
}

/* A target that exited while its probes went in (target__attach had
 * found it alive): its own message, said once. Nothing was traced (the
 * gate never opened), so there is no report and the run fails (exit 1).
 * Returns -ESRCH when it is gone, else err. */
static int gone_while_attaching(struct ftrace *ft, int err)
{
	struct target *tg = &ft->tg;
	char how[96] = "";

	/* -ESRCH: the kernel knows no such process. Else it may be a zombie
	 * (probes go in on one). Gone either way; a launched command's status
	 * comes once it is reaped, by us or by the guard's tracer thread,
	 * which may be a moment behind: wait for that, not for the exit. */
	if (err != -ESRCH && !target__gone(tg))
		return err;
	(void)target__wait(tg, 10000);
	if (tg->spawned && tg->exited && WIFEXITED(tg->status))
		snprintf(how, sizeof(how), " (status %d)", WEXITSTATUS(tg->status));
	else if (tg->spawned && tg->exited && WIFSIGNALED(tg->status))
		snprintf(how, sizeof(how), " (killed by signal %d, %s)", WTERMSIG(tg->status),
			 strsignal(WTERMSIG(tg->status)));
	log_err("process %d (%s) exited while cabbpf was attaching%s: nothing was traced",
		(int)tg->pid, tg->comm, how);
	return -ESRCH;
}

static int attach_probes(struct ftrace *ft)
{
	int slots_fd, err;

	if (ft->whole)
		borrow_table(ft);
	else if ((err = number_functions(ft)))
		return err;
	raise_fd_limit();
	startup_mark("function table");
	err = open_trace(ft);
	startup_mark("BPF load (trace, guard)");
	if (!err)
		err = open_pipeline(ft);
	startup_mark("pipeline");
	if (!err && ft->o.bpf_stats) {
		/* Counted from here: the probes' runs before the gate opens
		 * return at once, a few against millions. */
		ft->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (ft->stats_fd < 0) {
			err = -errno;
			log_err("--bpf-stats: enabling the kernel's BPF statistics: %s",
				strerror(-err));
		}
	}
	if (err)
		return err;
	ft->t_att = now_s();
	ft->att_ns = sampler__now();
	slots_fd = trace__map_fd(ft->tr, "slots");
	/* Test hook (ftrace.h): cabbpf stops itself here, the target found
	 * and the guard in, so a test can end the target mid-attach. */
	if (getenv("CABBPF_TEST_PAUSE_ATTACH")) {
		log_info("test hook CABBPF_TEST_PAUSE_ATTACH: stopped before attaching the probes "
			 "(kill -CONT %d goes on)",
			 (int)getpid());
		raise(SIGSTOP);
	}
	err = trace__attach(ft->tr);
	startup_mark("probes attached");
	if (err == -ESRCH) /* not logged: the process is gone */
		return gone_while_attaching(ft, err);
	if (err)
		return err;
	ft->att_ns = sampler__now() - ft->att_ns;
	/* Read by the cct analyzer's reports only, after the run. */
	ft->o.view.cct.cpu_time = trace__cpu_time(ft->tr);
	/* A fallback to per-site links reloaded the trace object: new rings,
	 * a new cgroup filter map. */
	if (ft->guard && trace__map_fd(ft->tr, "slots") != slots_fd && (err = attach_guard(ft)))
		return err;
	ft->t_att = now_s() - ft->t_att;
	if (ft->cgfd >= 0 &&
	    ((err = cgroup__set_filter(trace__map_fd(ft->tr, "cgfilter"), ft->cgfd)) ||
	     (ft->tg.spawned && (err = cgroup__enter(ft->cgpath, ft->tg.pid)))))
		return err;
	err = attach_io(ft);
	startup_mark("I/O tracer");
	if (err)
		return err;
	if (ft->whole) {
		struct guard_maps gm = guard_maps_of(ft, false);

		/* Each process's guard, then its return probes armed. */
		err = whole__start(ft->whole, ft->tr, &gm);
	}
	if (err)
		return err;
	/* Gone by now (a zombie still takes probes): nothing to trace. A
	 * whole cgroup has no one process to be gone. */
	return ft->whole ? 0 : gone_while_attaching(ft, 0);
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
static int start_run(struct ftrace *ft)
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
	ft->cpu0 = cpu_now_s();
	/* The gate opens (bpf/trace.bpf.c, epoch): every probe, the guard's
	 * and the I/O tracer's are in, so no event before this instant and
	 * every event after it; the duration counts from here. Sampling:
	 * window 1 opens as the target is let go. */
	ft->t0 = now_s();
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
		struct sampler_opts so = {.pid = ft->tg.pid,
					  .pct = ft->o.sample_pct,
					  .period_ms = ft->o.sample_period_ms,
					  .start_disabled = ft->o.start_disabled,
					  .nfuncs = (uint32_t)ft->nfuncs};

		if ((err = hit_leaks(ft)))
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
	ft->t1 = now_s();
}

/* Drain the rings until the target exits, a signal, or -d. Sets ft->why.
 * Returns 0, or -errno (logged) when the run ended on an error (ft->why
 * is then "error"). */
static int run_until_stop(struct ftrace *ft)
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
		ft->t1 = now_s();
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
static int detach_probes(struct ftrace *ft, int run_err)
{
	struct guard_stats *gst = &ft->gst;
	int got = 0, err = 0;

	/* A command we launched does not outlive its trace: Ctrl-C passes the
	 * signal on, -d ends it with SIGTERM (see --help). */
	if (ft->tg.spawned && !target__poll_exit(&ft->tg))
		kill(ft->tg.pid, *ft->stop ? *ft->stop : SIGTERM);
	iotrace__detach(ft->io);
	ft->t_det = now_s();
	trace__detach(ft->tr);
	ft->t_det = now_s() - ft->t_det;
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
 * Returns 0, or -ENODATA (logged).
 */
static int check_delivery(struct ftrace *ft, const uint64_t *totals, const struct summary *sm)
{
	const struct target *tg = &ft->tg;
	uint64_t other = totals[CABBPF_STAT_HITS_OTHER_IMAGE];
	uint64_t hidden = totals[CABBPF_STAT_HITS_SUPPRESSED] + (sm->exec_other ? 0 : other);

	if (hidden) {
		log_err("the probes fired %llu times in %s (pid %d) and delivered %s event%s: "
			"they were dropped in the kernel (%s), so this profile is %s; please report "
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
	return 0;
}

/* Text on stdout (unless -q or --floor), JSON to --json, the summary
 * line on stderr. Returns 0 or -errno (logged) when the JSON could not be
 * written. */
static int report(struct ftrace *ft)
{
	uint64_t totals[CABBPF_STAT__MAX] = {0}, io_counts[CABBPF_IOSTAT__MAX] = {0};
	struct stage_exec ex = {0};
	uint64_t *lost_cpu;
	struct target *tg = &ft->tg;
	struct summary sm;
	struct outputs outs = {0};
	int err = 0, delivered;

	lost_cpu = calloc(3 * (size_t)trace__ncpus(ft->tr), sizeof(*lost_cpu));
	if (trace__stats(ft->tr, totals, lost_cpu) || iotrace__counts(ft->io, io_counts))
		log_warn("could not read the BPF counters");
	if (io_counts[CABBPF_IOSTAT_EVENTS] != stage__io_events(ft->stage))
		log_warn("BPF wrote %llu I/O events but %llu were read",
			 (unsigned long long)io_counts[CABBPF_IOSTAT_EVENTS],
			 (unsigned long long)stage__io_events(ft->stage));

	memset(&sm, 0, sizeof(sm));
	sm.pid = tg->pid;
	sm.comm = tg->comm;
	sm.binary = tg->exe;
	sm.nfuncs = (uint32_t)ft->nfuncs - trace__refused(ft->tr);
	sm.refused = trace__refused(ft->tr);
	sm.multi = trace__multi(ft->tr);
	sm.kernel = features__get();
	sm.duration_s = ft->t1 - ft->t0;
	/* call events */
	sm.events = stage__events(ft->stage) - stage__io_events(ft->stage) -
		    stage__guard_events(ft->stage) - stage__sched_events(ft->stage);
	sm.guard = ft->guard ? &ft->gst : NULL;
	sm.sampling = ft->smp;
	sm.budget = ft->bud;
	sm.cab_sampling = ft->o.cab_mode && !strcmp(ft->o.cab_mode, "sampling");
	sm.execs = stage__execs(ft->stage, &ex);
	sm.forks_known = !ft->whole;
	sm.forks = ft->whole ? 0 : totals[CABBPF_STAT_FORKS];
	/* A launched command's own start is an exec too: not the program's
	 * doing (--follow-exec: made before tracing began, not seen). */
	if (tg->spawned && !tg->followed && sm.execs)
		sm.execs--;
	/* The same file: device and inode as the kernel names them, as
	 * bpf/trace.bpf.c compares them (not stat()'s: overlayfs differs). */
	sm.exec_other = !ft->whole && sm.execs && !exec_is_traced(ft, &ex);
	sm.exec_thread = !ft->whole && sm.execs && ex.thread;
	if (ft->whole) {
		/* every process of the cgroup: no one target */
		sm.whole = ft->whole;
		sm.comm = whole__what(ft->whole);
		sm.binary = NULL;
		sm.guard = ft->any_guard ? &ft->gst : NULL;
		/* the table grew with the executables found later */
		sm.nfuncs = atomic_load(&ft->wt->n) - trace__refused(ft->tr);
	}
	if (sm.exec_other)
		log_warn("%s (pid %d) exec'd another program: its calls after that are not traced "
			 "(nor counted in the libraries it shares with %s)",
			 tg->comm, (int)tg->pid, tg->exe);
	else if (sm.exec_thread)
		log_warn("%s (pid %d): thread %u, not the main thread, called execve: the new image "
			 "is not traced (the kernel's probes are bound to the main thread, which the "
			 "execve ended)",
			 tg->comm, (int)tg->pid, ex.thread);
	sm.lost = totals[CABBPF_STAT_DROPS] + totals[CABBPF_STAT_IO_DROPS] +
		  totals[CABBPF_STAT_GUARD_DROPS];
	/* Not in lost: a switch-in event without room carries its interval
	 * to the thread's next one (bpf/trace.bpf.c on_switch). */
	sm.lost_sched = totals[CABBPF_STAT_SCHED_DROPS];
	sm.sched_busy = totals[CABBPF_STAT_SCHED_BUSY];
	sm.sched_unseen = totals[CABBPF_STAT_SCHED_UNSEEN];
	sm.lost_calls = totals[CABBPF_STAT_DROPS];
	sm.lost_io = totals[CABBPF_STAT_IO_DROPS];
	sm.lost_guard = totals[CABBPF_STAT_GUARD_DROPS];
	sm.lost_per_cpu = lost_cpu;
	sm.ncpus = trace__ncpus(ft->tr);
	sm.reentry = totals[CABBPF_STAT_REENTRY];
	sm.has_tstates = true;
	sm.tstab_taken = totals[CABBPF_STAT_TSTAB_TAKEN];
	sm.nostate = totals[CABBPF_STAT_NOSTORE];
	sm.lossless = ft->o.lossless;
	sm.ring_bytes = ft->o.ring_bytes;
	sm.throttles = totals[CABBPF_STAT_THROTTLES];
	sm.unheld = totals[CABBPF_STAT_UNHELD];
	sum_cab(ft, &sm.cab);
	sm.stop_reason = ft->why;
	/* What the analysis cost while tracing: on a busy machine the target
	 * pays it. */
	sm.cpu_s = cpu_now_s() - ft->cpu0;
	/* the guard's tracer process is cabbpf's too (its start-up before
	 * cpu0 is a fork's: next to nothing) */
	if (ft->guard)
		sm.cpu_s += (double)ft->gst.tracer_cpu_ns / 1e9;
	if (ft->o.bpf_stats) {
		int n = trace__prog_stats(ft->tr, sm.progs, SUMMARY_MAX_PROGS);

		if (n < 0)
			log_warn("--bpf-stats: reading the programs' statistics: %s", strerror(-n));
		sm.bpf_stats = true;
		sm.nprogs = n > 0 ? (unsigned)n : 0;
	}
	if ((!ft->whole || tg->spawned) && (tg->exited || target__poll_exit(tg))) {
		sm.exited = true;
		sm.exit_status = tg->spawned ? tg->status : -1;
	}
	if (ft->whole && tg->spawned)
		sm.root_pid = tg->pid; /* --follow-forks */

	/* where each function is in the source: only for what shows it */
	if (ft->rec || ft->o.json_path || ft->o.view.pprof_path)
		source_lines(ft);
	if (ft->rec) {
		struct recfmt_source rs = {.n = (uint32_t)ft->nfuncs,
					   .src = ft->src,
					   .nbins = ft->nbins,
					   .bins = ft->bins};

		/* a recording that could not be finished: the reports below
		 * are still written from what was seen, and the run fails */
		outputs__note(&outs, "--record", ft->o.record_path,
			      recorder__finish(ft->rec, &sm, ft->src ? &rs : NULL));
	}
	if (!ft->o.floor && !ft->o.quiet && ft->live) {
		err = report__text_to(ft->o.output_path, &sm, ft->rn);
		outputs__note(&outs, "-o", ft->o.output_path, err);
		if (err)
			log_err("writing the report%s%s: %s", ft->o.output_path ? " to " : "",
				ft->o.output_path ? ft->o.output_path : "", outfile__strerror(err));
	}
	fflush(stdout);
	/* --folded, --flamegraph, --pprof, --timeline (user/cli/views.h) */
	if (!ft->o.floor)
		views__write(&ft->o.view, ft->rn, ft->tg.pid, ft->whole ? sm.comm : ft->tg.comm,
			     ft->whole ? sm.comm : ft->tg.exe, (uint64_t)((ft->t1 - ft->t0) * 1e9),
			     &outs);
	/* --plots DIR (analyzers/isp.h) */
	if (!ft->o.floor)
		views__write_plots(&ft->o.isp, ft->rn, &outs);
	/* --json last: it lists what became of every other file */
	if (ft->o.json_path) {
		sm.outputs = &outs;
		err = outputs__note(&outs, "--json", ft->o.json_path,
				    report__json(ft->o.json_path, &sm, ft->rn));
		if (err)
			log_err("writing --json %s: %s", ft->o.json_path, outfile__strerror(err));
	}
	report__summary_line(&sm);
	free(lost_cpu);
	delivered = check_delivery(ft, totals, &sm);
	err = outputs__failed(&outs);
	if (err)
		log_err("not every output was written (said above): the run failed");
	return err ? err : delivered;
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
	trace__free(ft->tr);	      /* detaches: nothing stays in the target */
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
	free(ft->sized);
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

int ftrace__run(const struct opts *o, volatile sig_atomic_t *stop)
{
	struct ftrace *ft = calloc(1, sizeof(*ft));
	int err, run_err, report_err;

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
	startup_mark(NULL);
	/* cabbpf or its shell: said before anything is measured or loaded */
	if (o->pid && !o->cmd && (err = target__check_pid(o->pid, "trace", false)))
		goto cleanup;
	if (!o->list && !o->plan) {
		err = check_kernel(ft);
		startup_mark("kernel features");
		if (err)
			goto cleanup;
		o = &ft->o; /* check_kernel may have narrowed it */
	}

	/* Before any other child exists (the guard's tracer reaps every
	 * child): what a probed call costs, for the cct's compensated times. */
	if ((((!o->analyzers || strstr(o->analyzers, "cct")) && !o->entry_only && !o->no_times) ||
	     o->budget_pct || o->sample_pct > 0 || o->start_disabled) &&
	    !o->floor && !o->list && !o->plan) {
		err = calibrate__probe_costs(o->no_times, ft->probe_cost, ft->probe_leak);
		ft->have_cost = !err;
		/* probes that fire and deliver nothing: no trace to take */
		if (err == -ENODATA)
			goto cleanup;
		err = 0;
	}
	startup_mark("probe-cost calibration");
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
		startup_mark("target");
		if (!err)
			err = select_functions(ft);
		startup_mark("symbols and selection");
		if (!err)
			err = plan_probes(ft);
		startup_mark("plan");
	}
	if (!err && (o->list || o->plan)) {
		print_selection(ft);
		goto cleanup;
	}
	if (!err)
		err = attach_probes(ft);
	if (!err)
		err = start_run(ft);
	startup_mark("start");
	if (err)
		goto cleanup;
	/* From here a trace exists: it is reported even when the run or the
	 * last drain failed; the first error is the run's. */
	run_err = run_until_stop(ft);
	err = detach_probes(ft, run_err);
	report_err = report(ft);
	if (run_err)
		err = run_err;
	else if (!err)
		err = report_err;
cleanup:
	ftrace_free(ft);
	return err;
}
