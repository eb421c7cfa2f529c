// SPDX-License-Identifier: BSD-2-Clause
/*
 * The function-tracing run's selection: the symbols, the functions
 * -f and -x choose, the guard of the target, and the probe plan.
 * user/modes/ftrace_int.h lists the run's files.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>

#include "common/log.h"
#include "user/elf/dwarf.h"
#include "user/elf/ifunc.h"
#include "user/elf/lang.h"
#include "user/proc/libpath.h"
#include "user/proc/libs.h"
#include "user/trace/watchdog.h"
#include "user/modes/ftrace_int.h"

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
	else if (!err && ft->st->nfde)
		/* Debian's /usr/bin: every function is still in .eh_frame */
		log_info("%s is stripped: %zu of its %zu functions are named from its unwind tables "
			 "(.eh_frame), as %s+0xADDRESS (-f globs match those names; its debug "
			 "file, Debian's -dbgsym package, would give the real ones)",
			 exe, ft->st->nfde, ft->st->nsyms, strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe);
	else if (!err && ft->st->from_dynsym && !ft->st->nfde)
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

int ftrace_select__functions(struct ftrace *ft)
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
	/* -N: left out of the trace altogether (user/report/views.h). */
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

int ftrace_select__plan(struct ftrace *ft)
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
		ftrace__startup_mark("guard");
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
void ftrace_select__print(const struct ftrace *ft)
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
