// SPDX-License-Identifier: BSD-2-Clause
/*
 * The function-tracing run's wiring: the functions numbered and
 * located, the trace's BPF objects and the pipeline opened, the guard
 * and the probes attached. user/modes/ftrace_int.h lists the run's files.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "common/log.h"
#include "pipeline/runner.h"
#include "user/elf/dwarf.h"
#include "user/iomode/iotrace.h"
#include "user/proc/cgroup.h"
#include "user/proc/libs.h"
#include "user/trace/budget.h"
#include "user/trace/stage.h"
#include "user/modes/ftrace_int.h"


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

/* The class whose measured cost fid's probe pays: its site's, an emulated
 * one for a function counted at its call sites (a call instruction). */
static enum insn_class cost_class(const struct ftrace *ft, size_t fid)
{
	enum insn_class c = site_class(ft, fid);

	return c == INSN_REFUSED ? INSN_EMULATED : c;
}

/* Sampling: what one probe hit of each function adds to the progress
 * clock (calibrate.h), by its site's class, into ft->hit_leak; left NULL
 * (nothing to take out) when the cost was not measured or there is no
 * such share. Returns 0 or -ENOMEM (logged). */
int ftrace_attach__hit_leaks(struct ftrace *ft)
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
		enum insn_class c = cost_class(ft, i);

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
void ftrace_attach__source_lines(struct ftrace *ft)
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
	ft->resume_len = calloc(all + 1, sizeof(*ft->resume_len));
	if (!ft->offsets || !ft->names || !ft->lnames || !ft->binaries || !ft->sp_delta ||
	    !ft->resume_len ||
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
		ft->resume_len[i] = ps->rule == PLAN_CALLSITES ? 0 : ps->len;
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
	return ftrace_rules__apply(ft);
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

/* --times sampled: the CPU clock's period for the time sampler, or 0
 * where its samples could not stand for the whole run: sampling windows
 * and --budget (the probes come and go, the calling context is not known
 * between windows), --entry-only (frames close only when found dead),
 * --no-times, the floor, and whole-container tracing (not yet: one
 * target process). The report then says its times are the traced ones. */
uint64_t ftrace_attach__cpu_sample_ns(const struct ftrace *ft)
{
	const struct opts *o = &ft->o;

	if ((o->times_word && !strcmp(o->times_word, "raw")) || ft->whole || o->sample_pct > 0 ||
	    o->budget_pct > 0 || o->start_disabled || o->entry_only || o->no_times || o->floor)
		return 0;
	return 1000000000ull / (o->times_hz ? o->times_hz : 1000);
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
		/* a program the tree execs is held at its exec until its
		 * probes are in (user/trace/whole_hold.c) */
		to.hold_exec = true;
	}
	to.no_returns = o->entry_only;
	to.sp_delta = ft->sp_delta;
	to.resume_len = ft->resume_len;
	to.size_specs = ft->sized;
	to.val_specs = ft->vals;
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
	/* the sampling windows and the budget's epochs are measured in the
	 * target's own progress (user/trace/progress.h) */
	to.progress_clock = to.sampling || to.groups;
	to.first_group = ft->first_group;
	to.start_paused = ft->o.start_disabled;
	to.gated = true; /* opened by start_run, once everything is in */
	to.lossless = ft->o.lossless;
	to.cpu_sample_ns = ftrace_attach__cpu_sample_ns(ft);
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

/* --times sampled: the probes' aftermath the sampler sees, per function by
 * its site's class (calibrate.h struct calib_aftermath, measured at
 * start-up), into ft->aft_in and aft_out, ns; left NULL when there is no
 * sampler or no measure. Returns 0 or -ENOMEM (logged). */
static int aftermath(struct ftrace *ft)
{
	size_t i;

	if (!ftrace_attach__cpu_sample_ns(ft) || !ft->have_cost)
		return 0;
	ft->aft_in = calloc(ft->nfuncs + 1, sizeof(*ft->aft_in));
	ft->aft_out = calloc(ft->nfuncs + 1, sizeof(*ft->aft_out));
	if (!ft->aft_in || !ft->aft_out) {
		log_err("out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < ft->nfuncs; i++) {
		enum insn_class c = cost_class(ft, i);

		ft->aft_in[i] = (uint32_t)llround(ft->probe_aft[c].in_ns);
		ft->aft_out[i] = (uint32_t)llround(ft->probe_aft[c].out_ns);
	}
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
	ro.hist = ft->o.view.hist;
	ro.nhist = ft->o.view.nhist;
	ro.slower_ns = ft->o.view.slower_ns;
	ro.slowest = ft->o.view.slowest;
	if ((err = aftermath(ft)))
		return err;
	ro.aft_in = ft->aft_in;
	ro.aft_out = ft->aft_out;
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

int ftrace_attach__probes(struct ftrace *ft)
{
	int slots_fd, err;

	if (ft->whole)
		ftrace__borrow_table(ft);
	else if ((err = number_functions(ft)))
		return err;
	raise_fd_limit();
	ftrace__startup_mark("function table");
	err = open_trace(ft);
	ftrace__startup_mark("BPF load (trace, guard)");
	if (!err)
		err = open_pipeline(ft);
	ftrace__startup_mark("pipeline");
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
	ft->t_att = ftrace__now_s();
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
	ftrace__startup_mark("probes attached");
	if (err == -ESRCH) /* not logged: the process is gone */
		return gone_while_attaching(ft, err);
	if (err)
		return err;
	ft->att_ns = sampler__now() - ft->att_ns;
	/* Read by the cct analyzer's reports only, after the run. */
	ft->o.view.cct.cpu_time = trace__cpu_time(ft->tr);
	/* The sampler runs from the gate's opening, all along: the reports
	 * read its period; none, they say the times are the traced ones. */
	runner__set_cpu_sample(ft->rn, trace__cpu_samples(ft->tr)
					       ? ftrace_attach__cpu_sample_ns(ft)
					       : 0,
			       trace__cpu_sample_kernel(ft->tr));
	/* A fallback to per-site links reloaded the trace object: new rings,
	 * a new cgroup filter map. */
	if (ft->guard && trace__map_fd(ft->tr, "slots") != slots_fd && (err = attach_guard(ft)))
		return err;
	ft->t_att = ftrace__now_s() - ft->t_att;
	if (ft->cgfd >= 0 &&
	    ((err = cgroup__set_filter(trace__map_fd(ft->tr, "cgfilter"), ft->cgfd)) ||
	     (ft->tg.spawned && (err = cgroup__enter(ft->cgpath, ft->tg.pid)))))
		return err;
	err = attach_io(ft);
	ftrace__startup_mark("I/O tracer");
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
