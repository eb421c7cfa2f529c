// SPDX-License-Identifier: BSD-2-Clause
/*
 * cabbpf: trace a process's function calls with uprobes, re-stage the events
 * into per-processor CAB buffers, and analyse them on other cores while the
 * process runs. main() wires the modules together in this order:
 * target (fork and hold, or find the pid) -> symbols -> analyzers -> BPF
 * (open, rodata, load, attach) -> release the target -> drain until it exits,
 * Ctrl-C or -d -> detach -> last drain -> join analyzers -> report.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "pipeline/runner.h"
#include "cab/cab.h"
#include "user/iomode/iotrace.h"
#include "user/trace/guard.h"
#include "user/iomode/iomode.h"
#include "user/proc/cgroup.h"
#include "user/elf/lang.h"
#include "common/log.h"
#include "user/cli/opts.h"
#include "common/outfile.h"
#include "user/proc/libs.h"
#include "user/probe/plan.h"
#include "user/cli/report.h"
#include "user/trace/stage.h"
#include "user/elf/syms.h"
#include "user/proc/target.h"
#include "user/trace/trace.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* libbpf's warnings and errors always reach stderr, under cabbpf's
 * prefix like every diagnostic; its info and debug chatter only with -v. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN && !log_verbose)
		return 0;
	fputs("cabbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: interrupt the poll */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
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

struct loop_ctx {
	struct stage *stage;
	int err;
};

static int on_event(void *ctx, unsigned cpu, const struct cabbpf_event *e)
{
	struct loop_ctx *lc = ctx;
	int err = stage__push(lc->stage, cpu, e);

	if (err)
		lc->err = err;
	return err;
}

static const char *target_error(int err)
{
	switch (err) {
	case -ENOENT:
		return "no such file or command";
	case -EACCES:
		return "permission denied";
	case -ESRCH:
		return "no such process";
	default:
		return strerror(-err);
	}
}

/* Why pid cannot be traced, for target__attach's err: a kernel thread and
 * a zombie have no executable, and look alike to it. */
static const char *pid_error(pid_t pid, int err)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return err == -ESRCH ? "no such process" : target_error(err);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')'); /* "pid (comm) S ...": comm may hold ')' */
	if (p && p[1] == ' ' && p[2] == 'Z')
		return "a zombie: it has exited, and its parent has not reaped it yet";
	if (p && p[1] == ' ' && p[2] == 'X')
		return "it exited while cabbpf was attaching";
	/* flags (field 9) & PF_KTHREAD (0x00200000) */
	if (p) {
		unsigned long flags = 0;
		int field = 3;

		for (p += 2; *p && field < 9; p++)
			if (*p == ' ')
				field++;
		if (field == 9 && sscanf(p, "%lu", &flags) == 1 && (flags & 0x00200000))
			return "a kernel thread: it runs no program to trace";
	}
	if (err == -ESRCH)
		return "it exited while cabbpf was attaching";
	return target_error(err);
}

/* The executable must be x86-64 (the probes, the BPF programs and the
 * guard assume it). Returns 0, or -ENOEXEC after saying which it is. */
static int check_machine(const char *exe)
{
	static const struct {
		unsigned short em;
		const char *name;
	} names[] = {{3, "i386"},   {40, "arm"},   {183, "aarch64"},  {243, "riscv"},
		     {21, "ppc64"}, {22, "s390x"}, {258, "loongarch"}};
	unsigned char h[20];
	unsigned short em;
	const char *name = NULL;
	size_t i;
	FILE *f = fopen(exe, "re");

	if (!f)
		return 0; /* syms__load says why */
	if (fread(h, 1, sizeof(h), f) != sizeof(h) || memcmp(h, "\177ELF", 4)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	em = h[5] == 2 ? (unsigned short)(h[18] << 8 | h[19])
		       : (unsigned short)(h[18] | h[19] << 8);
	if (em == 62 && h[4] == 2) /* EM_X86_64, ELFCLASS64 */
		return 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].em == em)
			name = names[i].name;
	if (h[4] != 2 && em == 62)
		name = "x32";
	if (name)
		log_err("%s is built for %s: cabbpf traces x86-64 programs", exe, name);
	else
		log_err("%s is built for another architecture (ELF machine %u): cabbpf traces "
			"x86-64 programs",
			exe, em);
	return -ENOEXEC;
}

static void print_list(const struct symtab *st, const size_t *idx, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct sym *s = &st->syms[idx[i]];

		printf("0x%08llx %6llu %s\n", (unsigned long long)s->vaddr,
		       (unsigned long long)s->size, s->name);
	}
	fprintf(stderr, "cabbpf: %zu function%s of %s would be traced%s\n", n, n == 1 ? "" : "s",
		st->path, st->from_dynsym ? " (stripped: exported functions only)" : "");
}

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

/* Say which of several -f patterns match no function of st (the run goes
 * on when others matched: others_matched). A pattern that names only a
 * fragment (syms__is_fragment) is explained even when it is the only one:
 * the error that follows could not say why. */
static void warn_unmatched(const struct symtab *st, const char *const *globs, size_t n,
			   bool others_matched)
{
	size_t i, tn;
	size_t *tidx;
	char why[512];

	if (!st || !n)
		return;
	for (i = 0; i < n; i++) {
		if (!syms__select(st, &globs[i], 1, &tidx, &tn)) {
			free(tidx);
			continue;
		}
		if (!syms__why_unmatched(st, globs[i], why, sizeof(why)))
			log_warn("-f '%s' %s", globs[i], why);
		else if (n > 1 || others_matched) /* one pattern: the error says it */
			log_warn("-f '%s' matches no function of %s", globs[i], st->path);
	}
}

/* Without return probes (the guard could not be set up): counts only. */
static void fall_back_to_entries(struct opts *o)
{
	o->entry_only = true;
	if (!o->analyzers || strstr(o->analyzers, "callgraph"))
		o->analyzers = "count";
}

/* Set up the guard of tg (user/trace/guard.h): find its sites and become the
 * target's tracer. Where that is impossible, trace entries only: a return
 * probe the unwinder might read must never be left unwatched. Returns 0
 * (*out may stay NULL: no site, or the fallback) or -errno (logged). */
static int guard_target(struct target *tg, struct opts *o, struct guard **out)
{
	struct guard *g = NULL;
	int err;

	*out = NULL;
	err = guard__open(tg->pid, tg->exe, tg->spawned, &g);
	if (err == -ENOENT)
		return 0; /* nothing in the target reads or moves return addresses */
	if (err) {
		log_err("finding the unwinder of %s: %s", tg->exe, strerror(-err));
		return err;
	}
	err = guard__seize(g);
	if (err) {
		guard__free(g);
		log_warn("tracing function entries only (no times, no call graph): return "
			 "probes would kill %s if it throws an exception",
			 tg->comm);
		fall_back_to_entries(o);
		return 0;
	}
	tg->reaped = (int (*)(void *, int *))guard__reaped;
	tg->reaped_ctx = g;
	*out = g;
	return 0;
}

/* Functions that must never get a return probe (guard__unsafe_name):
 * not probed at all (offsets[] = TRACE_NO_PROBE), with one line saying
 * which. The fids: the executable's n functions, then the libraries'. */
static void drop_unsafe(const struct symtab *st, const size_t *idx, size_t n,
			const struct libs *libs, uint64_t *offsets)
{
	size_t i, j, k = n, dropped = 0;
	const char *first = NULL;

	for (i = 0; i < n; i++)
		if (guard__unsafe_name(st->syms[idx[i]].name)) {
			offsets[i] = TRACE_NO_PROBE;
			first = first ? first : st->syms[idx[i]].name;
			dropped++;
		}
	for (i = 0; libs && i < libs->nlibs; i++)
		for (j = 0; j < libs->v[i].n; j++, k++)
			if (guard__unsafe_name(libs->v[i].st->syms[libs->v[i].idx[j]].name)) {
				offsets[k] = TRACE_NO_PROBE;
				first = first ? first : libs->v[i].st->syms[libs->v[i].idx[j]].name;
				dropped++;
			}
	if (dropped)
		log_warn(
			"not tracing %zu function%s of the unwinder or the stack switchers (%s%s): "
			"a return probe there would break what it does",
			dropped, dropped == 1 ? "" : "s", first, dropped > 1 ? ", ..." : "");
}

/* Load the guard's probes into tr's rings. Returns 0 or -errno (logged). */
static int attach_guard(struct guard *g, struct trace *tr, const struct opts *o)
{
	struct guard_maps gm = {
		.slots_fd = trace__map_fd(tr, "slots"),
		.heads_fd = trace__map_fd(tr, "heads"),
		.tstates_fd = trace__map_fd(tr, "tstates"),
		.stats_fd = trace__map_fd(tr, "stats"),
		.ring_bytes = o->ring_bytes,
		.no_times = o->no_times,
	};

	return guard__attach(g, &gm);
}

int main(int argc, char **argv)
{
	struct target tg;
	struct opts o;
	struct symtab *st = NULL;
	struct plan *plan = NULL;
	struct libs *libs = NULL;
	const char *exe_globs[OPTS_MAX_FUNCS];
	const char **binaries = NULL;
	uint32_t *sp_delta = NULL;
	struct trace_callsite *csites = NULL;
	size_t ncsites = 0;
	size_t nexe = 0;
	struct plan_opts plo, plo_libs;
	char plan_line[256];
	struct stage *stage = NULL;
	struct trace *tr = NULL;
	struct iotrace *io = NULL;
	struct iotrace_opts io_o;
	char cgpath[4096] = "";
	int cgfd = -1;
	uint64_t io_counts[CABBPF_IOSTAT__MAX] = {0};
	struct runner *rn = NULL;
	struct guard *guard = NULL;
	struct guard_stats gst = {0};
	int slots_fd;
	struct runner_opts ro;
	struct trace_opts to;
	struct cab_pp_opts po;
	struct summary sm;
	struct loop_ctx lc;
	uint64_t totals[CABBPF_STAT__MAX] = {0};
	uint64_t *offsets = NULL, *lost_cpu = NULL;
	const char **names = NULL, **lnames = NULL;
	size_t *idx = NULL, n = 0, i, j, k;
	double t0, t1, cpu0 = 0, next_check = 0, t_att = 0, t_det = 0;
	bool have_target = false, started = false, runner_started = false;
	int err, ret = 1;

	memset(&tg, 0, sizeof(tg));
	tg.pidfd = tg.err_fd = -1;
	err = opts__parse(argc, argv, &o);
	if (err == 1)
		return 0;
	if (err)
		return 2;
	log_verbose = o.verbose;
	libbpf_set_print(libbpf_print);

	if (geteuid() != 0 && !o.list && !o.plan) {
		log_err("cabbpf must run as root: BPF programs and uprobes need CAP_BPF, "
			"CAP_PERFMON and CAP_SYS_ADMIN (try: sudo cabbpf ...)");
		return 1;
	}
	/* Output paths first: a bad one must not cost a trace. */
	if (o.json_path && (err = outfile__check(o.json_path))) {
		log_err("cannot write --json %s: %s", o.json_path, outfile__strerror(err));
		return 1;
	}
	if (views__check(&o.view, o.analyzers, o.entry_only))
		return 1; /* --folded, --flamegraph: user/cli/views.h */
	install_signals();
	if (o.io)
		return iomode__run(&o, &stop_signal); /* system-wide I/O: user/iomode/iomode.c */
	/* --cgroup / --container: checked before anything starts. */
	if (cgroup__select(o.cgroup, o.container, &cgfd, cgpath, sizeof(cgpath)))
		goto cleanup;

	if (o.cmd) {
		err = target__spawn(&tg, o.cmd);
		if (err) {
			log_err("cannot run '%s': %s", o.cmd[0], target_error(err));
			goto cleanup;
		}
	} else {
		err = target__attach(&tg, o.pid);
		if (err) {
			log_err("cannot trace pid %d: %s", (int)o.pid, pid_error(o.pid, err));
			goto cleanup;
		}
	}
	have_target = true;
	if (check_machine(tg.exe))
		goto cleanup;

	/* LIB:GLOB selectors are for shared libraries (user/proc/libs.h); with
	 * nothing but those, nothing of the main executable is traced. */
	for (i = 0; i < o.nfuncs; i++)
		if (!libs__is_selector(o.funcs[i]))
			exe_globs[nexe++] = o.funcs[i];
	err = o.nfuncs && !nexe ? 0 : syms__load(tg.exe, &st);
	if (err) {
		if (err == -ENOEXEC)
			log_err("%s is not an ELF executable (for a script, trace its "
				"interpreter's "
				"process with -p)",
				tg.exe);
		else if (err == -ENODATA)
			log_err("%s has no function symbols to trace", tg.exe);
		else
			log_err("reading symbols of %s: %s", tg.exe, strerror(-err));
		goto cleanup;
	}
	/* Go's runtime walks, copies and checks its stacks' return addresses:
	 * a return probe kills it (user/elf/lang.h). No override on purpose. */
	if (!o.entry_only) {
		struct lang_info li;

		if (!lang__detect(tg.exe, &li) && li.go) {
			log_debug("%s: Go, from %s", tg.exe, li.go_mark);
			fall_back_to_entries(&o);
			if (!o.list)
				log_info("%s is a Go program: tracing function entries only "
					 "(return probes would corrupt Go's stack walks); counts "
					 "are exact, no times or call graph",
					 tg.exe);
		}
	}
	if (!st)
		err = 0;
	else
		err = syms__select(st, exe_globs, nexe, &idx, &n);
	if (!err || (err == -ENOENT && nexe))
		warn_unmatched(st, exe_globs, nexe, err == 0 || o.nfuncs > nexe);
	if (err == -ENOENT && nexe && o.nfuncs > nexe) {
		/* Nothing of the executable, but library selectors remain. */
		syms__free(st);
		st = NULL;
		err = 0;
	}
	if (err) {
		if (err == -ENOENT && nexe) {
			log_err("no function of %s matches the -f pattern%s given (%s%s); "
				"list them with: cabbpf -l",
				tg.exe, nexe > 1 ? "s" : "", exe_globs[0], nexe > 1 ? ", ..." : "");
		} else if (err == -ENOENT) {
			log_err("%s has no function to trace", tg.exe);
		} else {
			log_err("selecting functions: %s", strerror(-err));
		}
		goto cleanup;
	}
	/* -N: left out of the trace altogether (user/cli/views.h). */
	if (views__exclude(&o.view, st, idx, &n) && !n && nexe == o.nfuncs) {
		log_err("every function selected is excluded by -N");
		goto cleanup;
	}
	/* Return probes write into the target's stacks: the guard keeps the
	 * unwinder and stack switches from seeing them (user/trace/guard.h). */
	if (!o.entry_only && !o.list && !o.plan && !o.no_guard && guard_target(&tg, &o, &guard))
		goto cleanup;
	/* Where each probe goes and what it costs, before anything is
	 * attached: --plan stops here. */
	memset(&plo, 0, sizeof(plo));
	plo.no_shift = o.no_shift;
	plo.returns = !o.entry_only;
	plo.entry_only = o.entry_only;
	plo.callsites = o.entry_only && !o.no_callsites;
	err = st ? plan__build(st, idx, n, &plo, &plan) : 0;
	if (err) {
		log_err("planning probes in %s: %s", tg.exe, strerror(-err));
		goto cleanup;
	}
	/* Libraries: no call-site counting (libs__fill passes one site per
	 * function; and most library functions are exported anyway). */
	plo_libs = plo;
	plo_libs.callsites = false;
	err = libs__load_exe(tg.pid, tg.exe, o.funcs, o.nfuncs, &plo_libs, &libs);
	if (err)
		goto cleanup; /* libs__load said which library */
	if (!n && libs && !libs->nfuncs) {
		/* Several patterns, each named above as matching nothing. */
		log_err("no function matches the -f patterns given; list them with: cabbpf -l");
		goto cleanup;
	}
	if (o.list) {
		if (st && n)
			print_list(st, idx, n);
		for (i = 0; libs && i < libs->nlibs; i++)
			print_list(libs->v[i].st, libs->v[i].idx, libs->v[i].n);
		ret = 0;
		goto cleanup;
	}
	if (o.plan) {
		if (n)
			plan__print(stdout, plan, st, idx, o.analyzers, o.verbose);
		libs__print(stdout, libs, o.analyzers, o.verbose);
		ret = 0;
		goto cleanup;
	}
	if (n) {
		plan__summary(plan, plan_line, sizeof(plan_line));
		log_info("%s", plan_line);
	}
	for (i = 0; libs && i < libs->nlibs; i++) {
		plan__summary(libs->v[i].plan, plan_line, sizeof(plan_line));
		log_info("%s %s", libs->v[i].name, plan_line);
	}
	if (n > UINT32_MAX / 2) {
		log_err("too many functions (%zu)", n);
		goto cleanup;
	}
	/* fids: the main executable's functions, then the libraries'. */
	offsets = calloc(n + (libs ? libs->nfuncs : 0) + 1, sizeof(*offsets));
	names = calloc(n + (libs ? libs->nfuncs : 0) + 1, sizeof(*names));
	lnames = calloc(n + (libs ? libs->nfuncs : 0) + 1, sizeof(*lnames));
	binaries = calloc(n + (libs ? libs->nfuncs : 0) + 1, sizeof(*binaries));
	sp_delta = calloc(n + (libs ? libs->nfuncs : 0) + 1, sizeof(*sp_delta));
	if (!offsets || !names || !lnames || !binaries || !sp_delta) {
		log_err("out of memory");
		goto cleanup;
	}
	err = n ? callsites_of(plan, &csites, &ncsites) : 0;
	if (err) {
		log_err("out of memory");
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		/* PLAN_NO_PROBE == TRACE_NO_PROBE: refused sites stay out. */
		offsets[i] = plan->sites[i].rule == PLAN_CALLSITES ? TRACE_AT_CALLSITES
								   : plan->sites[i].offset;
		sp_delta[i] = plan->sites[i].sp_delta;
		/* Reports show the readable name; JSON keeps the linkage one. */
		names[i] =
			st->syms[idx[i]].pretty ? st->syms[idx[i]].pretty : st->syms[idx[i]].name;
		lnames[i] = st->syms[idx[i]].name;
	}
	libs__fill(libs, offsets + n, names + n, binaries + n, sp_delta + n);
	if (!o.entry_only)
		drop_unsafe(st, idx, n, libs, offsets);
	for (i = 0, k = n; libs && i < libs->nlibs; i++)
		for (j = 0; j < libs->v[i].n; j++)
			lnames[k++] = libs->v[i].st->syms[libs->v[i].idx[j]].name;
	n += libs ? libs->nfuncs : 0;
	raise_fd_limit();

	memset(&to, 0, sizeof(to));
	to.pid = tg.pid;
	to.binary = tg.exe;
	to.binaries = binaries;
	to.no_returns = o.entry_only;
	to.sp_delta = sp_delta;
	to.offsets = offsets;
	to.nfuncs = (uint32_t)n;
	to.callsites = csites;
	to.ncallsites = ncsites;
	to.ring_bytes = o.ring_bytes;
	to.floor = o.floor;
	to.no_times = o.no_times;
	to.cgroup = cgfd >= 0;
	to.on_event = on_event;
	to.ctx = &lc;
	err = trace__open(&to, &tr);
	if (err)
		goto cleanup;
	/* The guard's probes go in before the return probes: no trampoline
	 * is ever on a stack the guard does not watch. */
	if (guard && attach_guard(guard, tr, &o))
		goto cleanup;
	if (cgfd >= 0 && cgroup__set_filter(trace__map_fd(tr, "cgfilter"), cgfd))
		goto cleanup;

	/* Small chunks: the loader starts a chunk at every thread switch and
	 * hands partial ones over at every poll round, so the default
	 * (4 x L1d per chunk) would mostly carry air. */
	memset(&po, 0, sizeof(po));
	po.mode = CAB_EXHAUSTIVE;
	po.chunk_records = 256;
	po.nchunks = 256;
	po.max_chunks = 16384;
	err = stage__new(trace__ncpus(tr), &po, &stage);
	if (err) {
		log_err("allocating CAB buffers: %s", strerror(-err));
		goto cleanup;
	}
	lc.stage = stage;
	lc.err = 0;

	memset(&ro, 0, sizeof(ro));
	ro.fnames = names;
	ro.lnames = lnames;
	ro.nfuncs = (uint32_t)n;
	ro.analyzers = o.analyzers;
	ro.nthreads = o.analyzer_threads;
	ro.no_returns = o.entry_only;
	ro.cct = &o.view.cct;
	err = runner__new(&ro, stage__bufs(stage), trace__ncpus(tr), &rn);
	if (err)
		goto cleanup; /* runner__new says which analyzer name was wrong */

	t_att = now_s();
	slots_fd = trace__map_fd(tr, "slots");
	err = trace__attach(tr);
	if (err) {
		log_err("attaching probes to %s: %s", tg.exe, strerror(-err));
		goto cleanup;
	}
	/* A fallback to per-site links reloaded the trace object: new rings. */
	if (guard && trace__map_fd(tr, "slots") != slots_fd && attach_guard(guard, tr, &o))
		goto cleanup;
	t_att = now_s() - t_att;
	/* Read by the cct analyzer's reports only, after the run. */
	o.view.cct.cpu_time = trace__cpu_time(tr);
	/* I/O events into the same rings, with the same sequence numbers:
	 * after trace__attach, which may have replaced the maps. */
	memset(&io_o, 0, sizeof(io_o));
	io_o.pid = tg.pid;
	io_o.floor = o.floor;
	io_o.cgroup_fd = cgfd;
	/* Again: a fallback to per-site links in trace__attach makes new maps. */
	if (cgfd >= 0 && cgroup__set_filter(trace__map_fd(tr, "cgfilter"), cgfd))
		goto cleanup;
	if (cgfd >= 0 && tg.spawned && cgroup__enter(cgpath, tg.pid))
		goto cleanup;
	io_o.slots_fd = trace__map_fd(tr, "slots");
	io_o.heads_fd = trace__map_fd(tr, "heads");
	io_o.tstates_fd = trace__map_fd(tr, "tstates");
	io_o.stats_fd = trace__map_fd(tr, "stats");
	io_o.ring_bytes = o.ring_bytes;
	err = iotrace__open(&io_o, &io);
	if (!err)
		err = iotrace__attach(io);
	if (err)
		goto cleanup; /* iotrace__open and iotrace__attach said why */
	log_info("tracing %zu function%s of %s (pid %d)%s%s", n, n == 1 ? "" : "s", tg.exe,
		 (int)tg.pid, trace__refused(tr) ? ", some refused by the kernel" : "",
		 o.floor ? " [floor: empty programs]" : "");
	err = runner__start(rn);
	if (err) {
		log_err("starting analyzer threads: %s", strerror(-err));
		goto cleanup;
	}
	runner_started = true;

	t0 = now_s();
	cpu0 = cpu_now_s();
	if (tg.spawned) {
		err = target__start(&tg);
		if (err) {
			log_err("cannot execute '%s': %s", tg.exe, strerror(-err));
			goto cleanup;
		}
	}
	started = true;

	const char *why = NULL;
	while (!why) {
		int got = trace__drain(tr, 2); /* a drain per 2 ms: see trace__drain */

		/* on_event's error stops the poll too: say which it was. */
		if (lc.err) {
			log_err("staging events: %s", strerror(-lc.err));
			err = lc.err;
			break;
		}
		if (got < 0) {
			log_err("reading the rings: %s", strerror(-got));
			err = got;
			break;
		}
		stage__flush(stage);
		if (stop_signal) {
			why = "interrupted";
			break;
		}
		t1 = now_s();
		if (o.duration && t1 - t0 >= o.duration)
			why = "duration reached";
		if (t1 >= next_check) {
			/* A syscall per check: every 10 ms is plenty. */
			next_check = t1 + 0.01;
			if (target__poll_exit(&tg))
				why = "target exited";
		}
	}
	if (!why)
		why = "error";
	t1 = now_s();
	/* A command we launched does not outlive its trace: Ctrl-C passes the
	 * signal on, -d ends it with SIGTERM (see --help). */
	if (tg.spawned && !target__poll_exit(&tg))
		kill(tg.pid, stop_signal ? stop_signal : SIGTERM);
	iotrace__detach(io);
	t_det = now_s();
	trace__detach(tr);
	t_det = now_s() - t_det;
	/* No return probe can appear any more: give back every return
	 * address still replaced, and let go of the target. */
	guard__stop(guard, &gst);
	if (guard && (gst.unguarded || gst.failed))
		log_warn("the guard could not serve %llu unwinder or switch point%s (thread not "
			 "held, or a stop failed): the target may have been harmed there",
			 (unsigned long long)(gst.unguarded + gst.failed),
			 gst.unguarded + gst.failed == 1 ? "" : "s");
	log_info("probes: attached in %.3f s, detached in %.3f s (%s)", t_att, t_det,
		 trace__multi(tr) ? "multi-uprobe links" : "one link per site");
	/* Every event a probe wrote is in a ring by now: drain them all. */
	while (!lc.err && trace__drain(tr, 0) > 0)
		;
	stage__close(stage);
	runner__join(rn);
	runner_started = false;

	lost_cpu = calloc(3 * (size_t)trace__ncpus(tr), sizeof(*lost_cpu));
	if (trace__stats(tr, totals, lost_cpu) || iotrace__counts(io, io_counts))
		log_warn("could not read the BPF counters");
	if (io_counts[CABBPF_IOSTAT_EVENTS] != stage__io_events(stage))
		log_warn("BPF wrote %llu I/O events but %llu were read",
			 (unsigned long long)io_counts[CABBPF_IOSTAT_EVENTS],
			 (unsigned long long)stage__io_events(stage));

	memset(&sm, 0, sizeof(sm));
	sm.pid = tg.pid;
	sm.comm = tg.comm;
	sm.binary = tg.exe;
	sm.nfuncs = (uint32_t)n - trace__refused(tr);
	sm.refused = trace__refused(tr);
	sm.multi = trace__multi(tr);
	sm.duration_s = t1 - t0;
	/* call events */
	sm.events = stage__events(stage) - stage__io_events(stage) - stage__guard_events(stage) -
		    stage__sched_events(stage);
	sm.guard = guard ? &gst : NULL;
	{
		uint64_t ino = 0;
		struct stat sb;

		sm.execs = stage__execs(stage, &ino);
		/* A launched command's own start is an exec too: not the
		 * program's doing. */
		if (tg.spawned && sm.execs)
			sm.execs--;
		sm.exec_other = sm.execs && (stat(tg.exe, &sb) || (uint64_t)sb.st_ino != ino);
		if (sm.exec_other)
			log_warn("%s (pid %d) exec'd another program: its calls after that are not "
				 "traced",
				 tg.comm, (int)tg.pid);
	}
	sm.lost = totals[CABBPF_STAT_DROPS] + totals[CABBPF_STAT_IO_DROPS] +
		  totals[CABBPF_STAT_GUARD_DROPS];
	/* Not in lost: a switch-in event without room carries its interval
	 * to the thread's next one (bpf/trace.bpf.c on_switch). */
	sm.lost_sched = totals[CABBPF_STAT_SCHED_DROPS];
	sm.sched_busy = totals[CABBPF_STAT_SCHED_BUSY];
	sm.lost_calls = totals[CABBPF_STAT_DROPS];
	sm.lost_io = totals[CABBPF_STAT_IO_DROPS];
	sm.lost_guard = totals[CABBPF_STAT_GUARD_DROPS];
	sm.lost_per_cpu = lost_cpu;
	sm.ncpus = trace__ncpus(tr);
	sm.reentry = totals[CABBPF_STAT_REENTRY];
	for (i = 0; i < trace__ncpus(tr); i++) {
		struct cab_stats cs;

		cab_pp__stats(stage__bufs(stage)[i], &cs);
		sm.cab.produced += cs.produced;
		sm.cab.consumed += cs.consumed;
		sm.cab.overwritten += cs.overwritten;
		sm.cab.stalls += cs.stalls;
		sm.cab.blocked_ns += cs.blocked_ns;
		sm.cab.grown += cs.grown;
	}
	sm.stop_reason = why;
	/* What the analysis cost while tracing: on a busy machine the target
	 * pays it. */
	sm.cpu_s = cpu_now_s() - cpu0;
	if (tg.exited || target__poll_exit(&tg)) {
		sm.exited = true;
		sm.exit_status = tg.spawned ? tg.status : -1;
	}

	if (!o.floor && !o.quiet)
		report__text(stdout, &sm, rn);
	fflush(stdout);
	/* A partial trace still yields its report, but a run that ended on
	 * an error (reading the rings, staging) fails: exit 1. */
	ret = strcmp(why, "error") == 0 ? 1 : 0;
	if (o.json_path) {
		err = report__json(o.json_path, &sm, rn);
		if (err) {
			log_err("writing %s: %s", o.json_path, strerror(-err));
			ret = 1;
		}
	}
	if (!o.floor && views__write(&o.view, rn, tg.comm))
		ret = 1;
	report__summary_line(&sm);

cleanup:
	if (runner_started) {
		if (stage)
			stage__close(stage);
		runner__join(rn);
	}
	iotrace__free(io);
	trace__detach(tr);
	guard__stop(guard, NULL); /* before the trace's maps go: its events use them */
	trace__free(tr);	  /* detaches: nothing stays in the target */
	guard__free(guard);
	if (cgfd >= 0)
		close(cgfd);
	if (have_target && tg.spawned && !started)
		target__abort(&tg);
	if (have_target && tg.spawned && started && !target__wait(&tg, 2000)) {
		log_warn("%s (pid %d) ignored the signal: killing it", tg.comm, (int)tg.pid);
		target__abort(&tg);
	}
	target__close(&tg);
	runner__free(rn);
	stage__free(stage);
	free(lost_cpu);
	free(offsets);
	free(names);
	free(lnames);
	free(idx);
	plan__free(plan);
	libs__free(libs);
	free(binaries);
	free(sp_delta);
	free(csites);
	syms__free(st);
	return ret;
}
