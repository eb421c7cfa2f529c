// SPDX-License-Identifier: BSD-2-Clause
/*
 * Whole-container tracing's images: an executable or library's
 * functions selected and numbered into the shared table, once per file
 * whatever the number of processes. whole_int.h lists the files.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "user/elf/ifunc.h"
#include "user/elf/lang.h"
#include "user/proc/libs.h"
#include "user/trace/trace.h"
#include "user/trace/whole_int.h"

/* ---- images ---- */

void whole_image__free(struct wimage *im)
{
	size_t i;

	if (!im)
		return;
	for (i = 0; im->fnames && i < im->n; i++)
		free(im->fnames[i]);
	free(im->fnames);
	for (i = 0; im->labels && i < im->nlabels; i++)
		free(im->labels[i]);
	free(im->labels);
	free(im->idx);
	plan__free(im->plan);
	libs__free(im->libs);
	free(im->lib_dup);
	syms__free(im->st);
	free(im->path);
	free(im->base);
	free(im);
}

/* Marks im as traced with entries only when what (lang__walker's name, or
 * NULL for none) walks its stacks, in the executable itself (in_lib false)
 * or in a library -f names (which the image may load later: dlopen). */
static void set_walker(struct wimage *im, const char *what, bool in_lib)
{
	if (!what)
		return;
	snprintf(im->walker_why, sizeof(im->walker_why),
		 "%s%s %s %s (return probes would corrupt its runtime's stack walks)",
		 in_lib ? "-f names " : "", lang__article(what), what,
		 in_lib ? "library" : "program");
	im->walker = im->walker_why;
}

/* Symbols, selection, IFUNCs, plan and libraries of image im (process pid
 * runs it). Returns 0 (im->why set when it has nothing to trace) or
 * -ENOMEM. */
static int image_select(struct whole *w, struct wimage *im, pid_t pid, const char *comm)
{
	struct lang_info li;
	struct plan_opts plo_libs;
	size_t i;
	int err;

	if (!w->o.nfuncs || w->nexe) {
		err = syms__load(im->path, &im->st);
		if (err == -ENOMEM)
			return err;
		if (err == -ENODATA)
			im->why = "no function symbols (stripped; its debug file was not found)";
		else if (err == -ENOEXEC)
			im->why = "not an ELF executable";
		else if (err)
			im->why = "its symbols could not be read";
		else if (!err && im->st->debug_path)
			log_info("symbols of %s from its debug file %s", im->path,
				 im->st->debug_path);
	}
	if (im->st && !w->o.entry_only && !lang__detect(im->path, &li))
		set_walker(im, lang__walker(&li), false);
	if (im->st) {
		err = syms__select(im->st, w->exe_globs, w->nexe, &im->idx, &im->n);
		if (err == -ENOMEM)
			return err;
		if (err)
			im->n = 0;
		if (im->n && w->o.nexcludes)
			syms__exclude(im->st, w->o.excludes, w->o.nexcludes, im->idx, &im->n);
		im->nlabels = im->n;
		if (im->n) {
			err = ifunc__redirect(pid, im->st, comm, im->idx, &im->n, &im->labels);
			if (err == -ENOMEM)
				return err;
			if (err)
				im->n = 0;
		}
		if (im->n && (err = plan__build(im->st, im->idx, im->n, &w->o.plo, &im->plan))) {
			im->n = 0;
			im->why = "its probes could not be planned";
			if (err == -ENOMEM)
				return err;
		}
	}
	if (w->lib_selectors && whole__is_dynamic(im->path)) {
		plo_libs = w->o.plo;
		plo_libs.callsites = false;
		/* A library not found for this image is said by libs__load
		 * and left out: other images may have it. */
		if (libs__load_exe(pid, NULL, w->o.funcs, w->o.nfuncs, &plo_libs, &im->libs) ==
		    -ENOMEM)
			return -ENOMEM;
	}
	/* A library -f names may carry the runtime (libjvm.so, libnode.so) */
	for (i = 0; !w->o.entry_only && im->libs && i < im->libs->nlibs; i++)
		if (!im->walker && !lang__detect(im->libs->v[i].path, &li))
			set_walker(im, lang__walker(&li), true);
	if (im->libs) {
		im->lib_dup = calloc(im->libs->nlibs + 1, sizeof(*im->lib_dup));
		if (!im->lib_dup)
			return -ENOMEM;
		for (i = 0; i < im->libs->nlibs; i++) {
			struct stat sb;

			if (stat(im->libs->v[i].path, &sb) || whole__file_known(w, sb.st_dev, sb.st_ino))
				im->lib_dup[i] = true;
		}
	}
	return 0;
}

/* Functions im adds to the table. */
static size_t image_count(const struct wimage *im)
{
	size_t n = im->n, i;

	for (i = 0; im->libs && i < im->libs->nlibs; i++)
		if (!im->lib_dup[i])
			n += im->libs->v[i].n;
	return n;
}

/* Write im's functions into the table from fid t->n on and publish the
 * new count. Returns 0, -E2BIG (no room: im->why set) or -ENOMEM. */
/* The plan's summary line of a file (stderr) and, with -v, each function
 * its first instruction keeps unprobed (as ftrace.c says them for -p). */
static void say_plan(const struct whole *w, const struct plan *p, const struct symtab *st,
		     const size_t *idx, const char *file)
{
	char line[256];
	size_t i;

	if (w->o.quiet_setup || !p)
		return;
	plan__summary(p, line, sizeof(line));
	log_info("%s: %s", file, line);
	for (i = 0; i < p->n; i++)
		if (p->sites[i].rule == PLAN_SKIPPED)
			log_debug("not probed: %s in %s: %s: %s", st->syms[idx[i]].name, file,
				  p->sites[i].entry_text,
				  insn__verdict_name(p->sites[i].entry_verdict));
}

static int image_number(struct whole *w, struct wimage *im)
{
	struct whole_table *t = &w->t;
	uint32_t k = atomic_load_explicit(&t->n, memory_order_relaxed);
	size_t need = image_count(im), i, j;
	struct guard_dropped d = {0};
	char what[PATH_MAX + 2];
	struct stat sb;

	if (!need) {
		if (!im->why)
			im->why = w->o.nfuncs ? "no function matches the -f patterns"
					      : "no function to trace";
		return 0;
	}
	if (need > t->cap - k) {
		im->why = "the function table is full (more executables than its room)";
		if (!w->table_full_said)
			log_warn("the function table's %u entries are used: %s and later "
				 "executables are not traced",
				 t->cap, im->path);
		w->table_full_said = true;
		return -E2BIG;
	}
	im->fnames = calloc(im->n + 1, sizeof(*im->fnames));
	if (!im->fnames)
		return -ENOMEM;
	if (im->n)
		say_plan(w, im->plan, im->st, im->idx, im->path);
	for (i = 0; im->libs && i < im->libs->nlibs; i++)
		if (!im->lib_dup[i])
			say_plan(w, im->libs->v[i].plan, im->libs->v[i].st, im->libs->v[i].idx,
				 im->libs->v[i].path);
	im->fid0 = k;
	for (i = 0; i < im->n; i++, k++) {
		const struct plan_site *ps = &im->plan->sites[i];
		const struct sym *s = &im->st->syms[im->idx[i]];
		const char *nm = im->labels && im->labels[i] ? im->labels[i]
				 : s->pretty		     ? s->pretty
							     : s->name;

		if (asprintf(&im->fnames[i], "%s:%s", im->base, nm) < 0) {
			im->fnames[i] = NULL;
			return -ENOMEM;
		}
		/* PLAN_NO_PROBE == TRACE_NO_PROBE: refused sites stay out; no
		 * call-site counting here (whole_opts.plo) */
		t->offsets[k] = ps->offset;
		/* Functions that must never get a return probe: not probed
		 * (as ftrace_attach.c's drop_unsafe) */
		if (!w->o.entry_only && guard__unsafe(im->st, s)) {
			t->offsets[k] = TRACE_NO_PROBE;
			guard__dropped_add(&d, s->name);
		}
		t->sp_delta[k] = ps->sp_delta;
		t->names[k] = im->fnames[i];
		t->lnames[k] = s->name;
		t->binaries[k] = im->path;
		if (t->probe_ns)
			t->probe_ns[k] = w->o.probe_cost[ps->cls];
	}
	for (i = 0; im->libs && i < im->libs->nlibs; i++) {
		const struct lib *l = &im->libs->v[i];

		if (im->lib_dup[i])
			continue;
		if (!stat(l->path, &sb) && whole__file_add(w, sb.st_dev, sb.st_ino))
			return -ENOMEM;
		for (j = 0; j < l->n; j++, k++) {
			const char *ln = l->st->syms[l->idx[j]].name;

			t->offsets[k] = l->plan->sites[j].offset;
			if (!w->o.entry_only && guard__unsafe(l->st, &l->st->syms[l->idx[j]])) {
				t->offsets[k] = TRACE_NO_PROBE;
				guard__dropped_add(&d, ln);
			}
			t->sp_delta[k] = l->plan->sites[j].sp_delta;
			t->names[k] = l->fnames[j];
			t->lnames[k] = ln;
			t->binaries[k] = l->path;
			if (t->probe_ns)
				t->probe_ns[k] = w->o.probe_cost[l->plan->sites[j].cls];
		}
	}
	/* as ftrace_attach.c's drop_unsafe says for one process */
	snprintf(what, sizeof(what), "%s: ", im->path);
	if (!w->o.quiet_setup)
		guard__dropped_say(&d, what);
	im->nfids = k - im->fid0;
	/* Every entry below k is written: the analyzers may read them once
	 * an event carries one of these fids (runner.h). */
	atomic_store_explicit(&t->n, k, memory_order_release);
	return 0;
}

/* The image of the executable at path (dev, ino), made (and attached,
 * when the run is on) if new. Returns it, or NULL (out of memory). */
struct wimage *whole_image__of(struct whole *w, const char *path, const struct stat *sb,
			       const char *exe, pid_t pid, const char *comm)
{
	struct wimage *im;
	const char *slash;
	size_t i;
	int err, r;

	for (i = 0; i < w->nimgs; i++)
		if (w->imgs[i]->dev == sb->st_dev && w->imgs[i]->ino == sb->st_ino)
			return w->imgs[i];
	if (whole__grow((void **)&w->imgs, &w->capimgs, w->nimgs, sizeof(*w->imgs)))
		return NULL;
	im = calloc(1, sizeof(*im));
	if (!im)
		return NULL;
	im->dev = sb->st_dev;
	im->ino = sb->st_ino;
	slash = strrchr(exe, '/');
	im->path = strdup(path);
	im->base = strdup(slash ? slash + 1 : exe);
	if (!im->path || !im->base) {
		whole_image__free(im);
		return NULL;
	}
	w->imgs[w->nimgs++] = im;
	/* The file itself once in the probed set, even with nothing selected:
	 * a library selector naming it is then not probed twice. */
	if (whole__file_add(w, im->dev, im->ino) || image_select(w, im, pid, comm))
		return NULL;
	err = image_number(w, im);
	if (err == -ENOMEM)
		return NULL;
	if (err || !im->nfids) {
		log_debug("%s: nothing traced (%s)", im->path, im->why);
		return im;
	}
	if (!w->started)
		return im;
	im->late = true;
	im->attached_s = w->now;
	r = trace__add(w->tr, atomic_load_explicit(&w->t.n, memory_order_relaxed));
	if (r < 0)
		im->why = "the kernel refused its probes";
	else
		log_info("tracing %d function%s of %s (pid %d, %s: found %.3f s after the start)",
			 r, r == 1 ? "" : "s", exe, (int)pid, comm, w->now);
	return im;
}
