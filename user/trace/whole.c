// SPDX-License-Identifier: BSD-2-Clause
/* Whole-container tracing: the design is in whole.h. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/hmap.h"
#include "common/log.h"
#include "user/elf/ifunc.h"
#include "user/elf/image.h"
#include "user/elf/lang.h"
#include "user/elf/syms.h"
#include "user/proc/cgroup.h"
#include "user/proc/container.h"
#include "user/proc/procfs.h"
#include "user/proc/libs.h"
#include "user/trace/trace.h"
#include "user/trace/whole.h"

/* The table's room by default: enough for tens of executables of a few
 * thousand functions; an image that does not fit is left out, said. */
/* How much later than a look an exec's event may be stamped when the look
 * already saw the exec's result (look_at). */
#define EXEC_LAG_NS 50000000ULL
#define DEFAULT_ROOM 65536u
/* Guards (each a ptrace tracer thread and a BPF object) at once; past it
 * a process is traced without return probes, said. */
#define MAX_GUARDS 256
#define SCAN_PERIOD_S 0.1
/* Processes found while tracing, said one a line on stderr */
#define MAX_SAID 100

/* A probed file (an executable or a library): each once, whatever the
 * number of processes or images that map it. */
struct wfile {
	dev_t dev;
	ino_t ino;
};

struct wimage {
	dev_t dev;
	ino_t ino;
	char *path; /* as opened and probed (through /proc/PID/root) */
	char *base; /* its file name: the prefix of its functions' names */
	struct symtab *st;
	size_t *idx, n;
	char **labels; /* IFUNC labels, nlabels entries */
	size_t nlabels;
	char **fnames; /* "base:function", n entries */
	struct plan *plan;
	struct libs *libs;
	bool *lib_dup; /* per library: probed already through another image */
	uint32_t fid0, nfids;
	/* why its runtime reads return addresses ("a Go program ..."), or
	 * NULL: never armed (user/elf/lang.h); points into walker_why */
	const char *walker;
	char walker_why[128];
	const char *why;   /* nothing traced: why (static) */
	double attached_s; /* when its probes went in (0: at the start) */
	bool late;	   /* attached while the run was on */
};

struct wproc {
	struct whole_proc pub;
	struct wimage *img;
	struct guard *g;
	bool pending;		       /* in the queue, to be looked at */
	bool ended;		       /* gone from the cgroup (its pid may come back, reused) */
	bool looked;		       /* looked at before */
	uint64_t execs_looked;	       /* pub.execs at the last look */
	uint64_t look_ns;	       /* when (CLOCK_MONOTONIC: bpf_ktime_get_ns's) */
	uint64_t exec_ts;	       /* its last exec event's time (0: not known) */
	const struct wimage *said_img; /* said on stderr with this image */
	int said_from;		       /* and pub.from + 1 */
	double held_since;	       /* > 0: another guard of ours holds it (a fork) */
};

struct whole {
	struct whole_opts o;
	char what[PATH_MAX + 64];
	const char *exe_globs[256];
	size_t nexe;
	bool lib_selectors;
	struct whole_table t;
	struct wimage **imgs;
	size_t nimgs, capimgs;
	struct wfile *files;
	size_t nfiles, capfiles;
	struct hmap procs; /* pid -> struct wproc * */
	size_t nheld;	   /* processes with held_since set */
	pid_t *queue;	   /* pending pids, in the order found */
	size_t nq, capq;
	uint32_t last_pid; /* whole__see's shortcut */
	struct trace *tr;
	struct guard_maps gm;
	bool started, gate;
	double now, next_scan;
	unsigned long long t0_ticks; /* the start, in /proc/PID/stat's clock */
	size_t nguards;
	bool any_guard;
	struct guard_stats gsum;
	struct wproc **sorted;
	size_t nsorted;
	bool table_full_said;
	size_t nsaid; /* processes found while tracing said on stderr */
	/* --follow-forks: the root started (no more held before its first
	 * instruction); its end, once a guard of ours reaped it */
	bool root_started, root_done;
	int root_status;
};

/* ---- helpers ---- */

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t nc;
	void *nv;

	if (n < *cap)
		return 0;
	nc = *cap ? *cap * 2 : 16;
	nv = realloc(*v, nc * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = nc;
	return 0;
}

/* The first line of /proc/PID/name into buf ("" when unreadable). */
static void proc_line(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

/* The container id of pid's cgroup v2 path, or "". */
static void proc_container(pid_t pid, char *id, size_t len)
{
	char cid[CONTAINER_ID_LEN + 1], path[64], line[4096];
	FILE *f;

	id[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	/* cgroup v2's line is "0::PATH"; on a hybrid layout it is not the
	 * first one */
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			if (container__id_from_path(line + 3, cid, NULL))
				snprintf(id, len, "%s", cid);
			break;
		}
	fclose(f);
}

/* Whether the ELF file at path asks for a dynamic loader (PT_INTERP): a
 * static executable maps no shared library. */
static bool is_dynamic(const char *path)
{
	bool dyn = true; /* when unsure: look for libraries */
	size_t i, n;
	Elf *elf = NULL;
	int fd = -1;
	GElf_Phdr ph;

	if (image__open_elf(path, &fd, &elf))
		return true;
	if (!elf_getphdrnum(elf, &n)) {
		dyn = false;
		for (i = 0; i < n && !dyn; i++)
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
				dyn = true;
	}
	elf_end(elf);
	close(fd);
	return dyn;
}

static bool file_known(struct whole *w, dev_t dev, ino_t ino)
{
	size_t i;

	for (i = 0; i < w->nfiles; i++)
		if (w->files[i].dev == dev && w->files[i].ino == ino)
			return true;
	return false;
}

static int file_add(struct whole *w, dev_t dev, ino_t ino)
{
	if (grow((void **)&w->files, &w->capfiles, w->nfiles, sizeof(*w->files)))
		return -ENOMEM;
	w->files[w->nfiles++] = (struct wfile){dev, ino};
	return 0;
}

/* ---- images ---- */

static void image_free(struct wimage *im)
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
	if (w->lib_selectors && is_dynamic(im->path)) {
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

			if (stat(im->libs->v[i].path, &sb) || file_known(w, sb.st_dev, sb.st_ino))
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
		if (!stat(l->path, &sb) && file_add(w, sb.st_dev, sb.st_ino))
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
static struct wimage *image_of(struct whole *w, const char *path, const struct stat *sb,
			       const char *exe, pid_t pid, const char *comm)
{
	struct wimage *im;
	const char *slash;
	size_t i;
	int err, r;

	for (i = 0; i < w->nimgs; i++)
		if (w->imgs[i]->dev == sb->st_dev && w->imgs[i]->ino == sb->st_ino)
			return w->imgs[i];
	if (grow((void **)&w->imgs, &w->capimgs, w->nimgs, sizeof(*w->imgs)))
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
		image_free(im);
		return NULL;
	}
	w->imgs[w->nimgs++] = im;
	/* The file itself once in the probed set, even with nothing selected:
	 * a library selector naming it is then not probed twice. */
	if (file_add(w, im->dev, im->ino) || image_select(w, im, pid, comm))
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

/* ---- processes ---- */

static struct wproc *proc_get(struct whole *w, pid_t pid, enum whole_found how, bool *created)
{
	struct wproc *p = hmap__obj(&w->procs, (uint64_t)pid, sizeof(*p), created);

	if (p && *created) {
		p->pub.pid = pid;
		p->pub.found = how;
	}
	return p;
}

static void enqueue(struct whole *w, struct wproc *p)
{
	if (p->pending)
		return;
	if (grow((void **)&w->queue, &w->capq, w->nq, sizeof(*w->queue)))
		return; /* out of memory: looked at by the next scan, if still there */
	w->queue[w->nq++] = p->pub.pid;
	p->pending = true;
}

static void guard_done(struct whole *w, struct wproc *p)
{
	struct guard_stats gs;

	if (!p->g)
		return;
	/* The root's end, seen by its guard, is the run's (the target's exit
	 * status): kept past the guard. */
	if (w->o.root && p->pub.pid == w->o.root && !w->root_done &&
	    guard__reaped(p->g, &w->root_status) == 1)
		w->root_done = true;
	guard__stop(p->g, &gs);
	guard__free(p->g);
	p->g = NULL;
	w->nguards--;
	w->gsum.sites_hit += gs.sites_hit;
	w->gsum.stops += gs.stops;
	w->gsum.restored += gs.restored;
	w->gsum.rearmed += gs.rearmed;
	w->gsum.unguarded += gs.unguarded;
	w->gsum.failed += gs.failed;
	w->gsum.at_detach += gs.at_detach;
	w->gsum.detach_in_place += gs.detach_in_place;
	w->gsum.detach_cut_short += gs.detach_cut_short;
	w->gsum.nsites += gs.nsites;
}

/* A child forked by a process another guard of ours holds is held by that
 * guard at birth (guard__forks), while its inherited return addresses go
 * back: a few ms, or longer on a loaded machine (two CPU hogs and a second
 * test run: more than the 500 ms once waited here, and the child went
 * without return probes, with a warning). Whether pid is so held now,
 * after tries looks 2 ms apart; its own guard is then put off (whole__poll
 * looks again, once a poll), never failed. */
static bool held_by_our_guard(pid_t pid, int tries)
{
	struct timespec ms = {0, 2000000};
	long tracer;
	int i;

	for (i = 0; i < tries; i++) {
		tracer = procfs__status_field(pid, "TracerPid");
		if (tracer <= 0 || procfs__status_field((pid_t)tracer, "Tgid") != (long)getpid())
			return false;
		if (i + 1 < tries)
			nanosleep(&ms, NULL);
	}
	return true;
}

/* How long a process may wait for another guard of ours to let it go
 * before its own guard tries anyway (and says why it cannot). */
#define HELD_MAX_S 10.0

/* Let p's calls arm return probes once nothing in it can read one
 * unwatched (whole.h). */
static void guard_and_arm(struct whole *w, struct wproc *p, const char *path)
{
	struct guard *g = NULL;
	int err;

	if (w->o.entry_only)
		return;
	if (p->img && p->img->walker) {
		p->pub.unarmed_why = p->img->walker;
		return;
	}
	if (!w->o.no_guard) {
		if (held_by_our_guard(p->pub.pid, p->held_since ? 1 : 10) &&
		    (!p->held_since || w->now - p->held_since < HELD_MAX_S)) {
			if (!p->held_since) {
				p->held_since = w->now > 0 ? w->now : 1e-9;
				w->nheld++;
			}
			p->pub.unarmed_why = "held by its parent's guard (a fork) until the end";
			return;
		}
		if (p->held_since) {
			p->held_since = 0;
			w->nheld--;
		}
		/* the launched command, held before its first instruction */
		err = guard__open(p->pub.pid, path,
				  w->o.root && p->pub.pid == w->o.root && !w->root_started, &g);
		/* the libraries traced here may have switches of their own */
		for (size_t i = 0; !err && p->img && p->img->libs && i < p->img->libs->nlibs; i++)
			if ((err = guard__add_file(g, p->img->libs->v[i].path)))
				guard__free(g);
		/* A child forked later inherits the trampolines on this
		 * process's stack: held at birth, they go back (guard.h). */
		if (!err)
			guard__forks(g);
		if (err == -ENOENT) {
			g = NULL; /* no unwinder, no stack switcher: nothing to guard */
		} else if (err) {
			p->pub.unarmed_why = "its unwinder could not be looked for";
			return;
		} else if (w->nguards >= MAX_GUARDS) {
			guard__free(g);
			p->pub.unarmed_why = "too many guards at once";
			log_warn("pid %d (%s): %d processes are guarded already: traced without "
				 "return probes",
				 (int)p->pub.pid, p->pub.comm, MAX_GUARDS);
			return;
		} else if ((err = guard__seize(g)) == -ESRCH) {
			/* gone before it could be held (a short-lived child of
			 * a fork): nothing to say, nothing left to arm */
			guard__free(g);
			log_debug("pid %d (%s) ended before its guard could hold it",
				  (int)p->pub.pid, p->pub.comm);
			p->ended = true;
			return;
		} else if (err) {
			/* said by guard__seize */
			guard__free(g);
			p->pub.unarmed_why = "its guard could not hold it (another tracer?)";
			log_warn("pid %d (%s) is traced without return probes (no times, its "
				 "calls are counted)",
				 (int)p->pub.pid, p->pub.comm);
			return;
		} else if ((err = guard__attach(g, &w->gm))) {
			guard__stop(g, NULL);
			guard__free(g);
			p->pub.unarmed_why = "its guard's probes could not be attached";
			return;
		}
	}
	if (g) {
		guard__gate(g, w->gate);
		p->g = g;
		p->pub.guarded = true;
		w->nguards++;
		w->any_guard = true;
	}
	err = trace__arm(w->tr, p->pub.pid, true);
	if (err == -ESRCH || err == -ENOENT) {
		p->ended = true;
		return;
	}
	if (err) {
		p->pub.unarmed_why = "arming failed";
		log_warn("pid %d: arming its return probes: %s", (int)p->pub.pid, strerror(-err));
		return;
	}
	p->pub.armed = true;
	p->pub.unarmed_why = NULL;
}

/* Who p is now: its executable, image, names; then (the run on) its
 * guard and arming. Returns 0, or -ENOMEM. */
static int look_at(struct whole *w, struct wproc *p)
{
	char path[PATH_MAX], link[64];
	struct stat sb;
	ssize_t n;

	bool by_exec = p->pub.execs > p->execs_looked;
	struct timespec ts;

	/* An exec whose event came after a look that already saw its
	 * result (the process was found by a scan or another event in
	 * between): nothing new, but it did exec. */
	if (by_exec && p->looked && p->exec_ts && p->exec_ts < p->look_ns) {
		p->pending = false;
		p->execs_looked = p->pub.execs;
		if (p->pub.from == WHOLE_FROM_FORK)
			p->pub.from = WHOLE_FROM_EXEC;
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);

	p->pending = false;
	p->execs_looked = p->pub.execs;
	if (syms__resolve_exe(p->pub.pid, path, sizeof(path)) || stat(path, &sb)) {
		p->ended = true; /* gone (or a kernel thread, a zombie) */
		return 0;
	}
	/* The same, when the last look already saw this image although the
	 * exec's event is stamped a little after it: /proc/PID/exe names the
	 * new file from the exec's point of no return, the event comes at its
	 * end (seen under load: a look in between called a process attached
	 * then "traced from its exec"). A real exec of the same file that
	 * soon after a look is taken for the same one. */
	if (by_exec && p->looked && p->img && p->img->dev == sb.st_dev && p->img->ino == sb.st_ino &&
	    p->exec_ts && p->exec_ts < p->look_ns + EXEC_LAG_NS) {
		if (p->pub.from == WHOLE_FROM_FORK)
			p->pub.from = WHOLE_FROM_EXEC;
		return 0;
	}
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)p->pub.pid);
	n = readlink(link, p->pub.exe, sizeof(p->pub.exe) - 1);
	p->pub.exe[n > 0 ? n : 0] = 0;
	/* A container runtime's own clone of itself while it sets the
	 * process up (runc's and crun's init: an anonymous memory file, or a
	 * file mounted where the container cannot see it: reachable neither
	 * in the container's root nor on the host, and not deleted): not the
	 * container's program; its exec comes next. */
	if (!strncmp(p->pub.exe, "/memfd:", 7) ||
	    (!strcmp(path, link) && (n < 10 || strcmp(p->pub.exe + n - 10, " (deleted)")))) {
		log_debug("pid %d runs %s (a runtime's helper): not traced", (int)p->pub.pid,
			  p->pub.exe);
		p->pub.untraced_image = true;
		p->pub.image_why = "a container runtime's helper (an anonymous memory file)";
		return 0;
	}
	proc_line(p->pub.pid, "comm", p->pub.comm, sizeof(p->pub.comm));
	proc_container(p->pub.pid, p->pub.container, sizeof(p->pub.container));
	/* A new image (exec of another program): the old guard watched the
	 * old one's files; execve disarmed it already (bpf/trace.bpf.c). */
	guard_done(w, p);
	p->img = image_of(w, path, &sb, p->pub.exe[0] ? p->pub.exe : path, p->pub.pid, p->pub.comm);
	if (!p->img)
		return -ENOMEM;
	p->pub.untraced_image = !p->img->nfids;
	p->pub.image_why = p->img->nfids ? NULL : p->img->why;
	/* From when its calls are seen: an image attached just now missed
	 * what the process did before; one in place already saw it all
	 * since the exec, the fork, or the move into the cgroup. */
	if (p->img->late && p->img->attached_s == w->now) {
		p->pub.from = WHOLE_FROM_ATTACH;
		p->pub.traced_from_s = w->now;
	} else if (by_exec) {
		p->pub.from = WHOLE_FROM_EXEC;
	} else if (!p->looked) {
		p->pub.from = p->pub.found == WHOLE_NEW	    ? WHOLE_FROM_FORK
			      : p->pub.found == WHOLE_MOVED ? WHOLE_FROM_MOVED
							    : WHOLE_FROM_START;
	}
	p->looked = true;
	p->look_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (!w->started || !p->img->nfids)
		return 0;
	guard_and_arm(w, p, path);
	if (p->ended)
		return 0; /* gone meanwhile: nothing to say of it */
	/* Said for the processes found while tracing (the first hundred):
	 * from this line on its calls count, with return probes if armed;
	 * once per image and way of being traced. */
	if (p->said_img == p->img && p->said_from == (int)p->pub.from + 1)
		return 0;
	p->said_img = p->img;
	p->said_from = (int)p->pub.from + 1;
	if (w->nsaid < MAX_SAID)
		log_info("pid %d (%s) %s: %s%s", (int)p->pub.pid, p->pub.comm, p->pub.exe,
			 /* exec or fork: its event may come after this look */
			 p->pub.from == WHOLE_FROM_EXEC || p->pub.from == WHOLE_FROM_FORK
				 ? "traced from its start"
			 : p->pub.from == WHOLE_FROM_MOVED  ? "traced from its move into the cgroup"
			 : p->pub.from == WHOLE_FROM_ATTACH ? "traced from now (its executable was "
							      "attached now)"
							    : "traced",
			 w->o.entry_only ? ""
			 : p->pub.armed	 ? (p->pub.guarded ? ", return probes armed (guarded)"
							   : ", return probes armed")
			 : p->held_since ? ", return probes once its parent's guard lets it go"
					 : ", no return probes");
	else if (w->nsaid == MAX_SAID)
		log_info("(further processes found while tracing are not listed here; the report "
			 "has them all)");
	w->nsaid++;
	return 0;
}

/* When pid started, in clock ticks since boot (/proc/PID/stat's 22nd
 * field), or 0. */
static unsigned long long start_ticks(pid_t pid)
{
	char buf[1024], *p;
	unsigned long long v = 0;
	int i;

	proc_line(pid, "stat", buf, sizeof(buf));
	p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
	for (i = 2; p && *p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

/* The start of the run in the same clock. */
static unsigned long long now_ticks(void)
{
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK);

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (unsigned long long)ts.tv_sec * (unsigned long long)hz +
	       (unsigned long long)ts.tv_nsec / (1000000000ull / (unsigned long long)hz);
}

/* ---- scanning the cgroup ---- */

static int cmp_pid(const void *a, const void *b);

/* New pids of the cgroup queued; processes gone marked ended. *alive:
 * how many it holds (0 when the directory is gone). */
static int scan(struct whole *w, size_t *alive)
{
	struct hmap_ent *e;
	bool created;
	pid_t *v = NULL;
	size_t n = 0, i, it = 0;
	int err;

	err = cgroup__pids(w->o.cgpath, &v, &n);
	*alive = err ? 0 : n;
	if (err == -ENOENT)
		return 0;
	if (err)
		return err == -ENOMEM ? err : 0;
	for (i = 0; i < n; i++) {
		struct wproc *p = proc_get(w, v[i], WHOLE_RUNNING, &created);

		if (!p) {
			free(v);
			return -ENOMEM;
		}
		/* Found during the run: started during it, or moved in? */
		if (created && w->started)
			p->pub.found =
				start_ticks(v[i]) + 1 >= w->t0_ticks ? WHOLE_NEW : WHOLE_MOVED;
		if (created || p->ended) {
			p->ended = false;
			enqueue(w, p);
		}
	}
	/* Processes that are no more: a later event of their pid is a new
	 * process (the pid reused). One not listed yet but alive (it came
	 * in after the read) is not one of them. */
	while (hmap__next(&w->procs, &it, &e)) {
		struct wproc *p = (struct wproc *)(uintptr_t)e->val;

		if (p && !p->pending && !p->ended &&
		    (!n || !bsearch(&p->pub.pid, v, n, sizeof(*v), cmp_pid)) && kill(p->pub.pid, 0) &&
		    errno == ESRCH)
			p->ended = true;
	}
	free(v);
	return 0;
}

/* ---- the interface ---- */

int whole__open(const struct whole_opts *o, struct whole **out)
{
	struct whole *w;
	size_t i, alive = 0, traced = 0;
	int err;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w) {
		log_err("out of memory");
		return -ENOMEM;
	}
	w->o = *o;
	snprintf(w->what, sizeof(w->what), "%s", o->what);
	for (i = 0; i < o->nfuncs && w->nexe < sizeof(w->exe_globs) / sizeof(w->exe_globs[0]); i++)
		if (libs__is_selector(o->funcs[i]))
			w->lib_selectors = true;
		else
			w->exe_globs[w->nexe++] = o->funcs[i];
	w->t.cap = o->room ? o->room : DEFAULT_ROOM;
	w->t.offsets = calloc(w->t.cap + 1, sizeof(*w->t.offsets));
	w->t.names = calloc(w->t.cap + 1, sizeof(*w->t.names));
	w->t.lnames = calloc(w->t.cap + 1, sizeof(*w->t.lnames));
	w->t.binaries = calloc(w->t.cap + 1, sizeof(*w->t.binaries));
	w->t.sp_delta = calloc(w->t.cap + 1, sizeof(*w->t.sp_delta));
	if (o->probe_cost)
		w->t.probe_ns = calloc(w->t.cap + 1, sizeof(*w->t.probe_ns));
	if (!w->t.offsets || !w->t.names || !w->t.lnames || !w->t.binaries || !w->t.sp_delta ||
	    (o->probe_cost && !w->t.probe_ns)) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = scan(w, &alive);
	if (err)
		goto cleanup;
	if (!alive) {
		log_err("%s has no process to trace (cabbpf traces the processes it holds: "
			"start them first)",
			w->what);
		err = -ENOENT;
		goto cleanup;
	}
	for (i = 0; i < w->nq && !err; i++) {
		bool c;
		struct wproc *p = proc_get(w, w->queue[i], WHOLE_RUNNING, &c);

		err = p ? look_at(w, p) : -ENOMEM;
	}
	w->nq = 0;
	if (err)
		goto cleanup;
	for (i = 0; i < w->nimgs; i++) {
		if (w->imgs[i]->nfids)
			traced++;
		else if (!o->quiet_setup)
			log_info("%s: nothing traced (%s)", w->imgs[i]->path, w->imgs[i]->why);
	}
	if (!atomic_load(&w->t.n) && o->root) {
		log_err("nothing to trace in %s, the program of %s%s: --follow-forks starts from "
			"the command's own functions (select some of a library its children use "
			"too, -f 'libc:malloc' for instance; cabbpf -l -- COMMAND lists them)",
			w->nimgs ? w->imgs[0]->path : "the command", w->what,
			o->nfuncs ? " (no function matches the -f patterns)" : "");
		err = -ENOENT;
		goto cleanup;
	} else if (!atomic_load(&w->t.n)) {
		log_err("nothing to trace in the %zu process%s of %s%s: list what could be with "
			"cabbpf -l --%s",
			alive, alive == 1 ? "" : "es", w->what,
			o->nfuncs ? " (no function matches the -f patterns)" : "",
			o->container ? "container ..." : "cgroup ...");
		err = -ENOENT;
		goto cleanup;
	}
	if (!o->quiet_setup)
		log_info("%s: %zu process%s, %zu executable%s (%zu traced), %u function%s", w->what,
			 alive, alive == 1 ? "" : "es", w->nimgs, w->nimgs == 1 ? "" : "s", traced,
			 atomic_load(&w->t.n), atomic_load(&w->t.n) == 1 ? "" : "s");
	*out = w;
	return 0;
cleanup:
	if (err == -ENOMEM)
		log_err("out of memory");
	whole__free(w);
	return err;
}

struct whole_table *whole__table(struct whole *w)
{
	return &w->t;
}

const char *whole__what(const struct whole *w)
{
	return w->what;
}

const char *whole__cgpath(const struct whole *w)
{
	return w->o.cgpath;
}

void whole__print(const struct whole *w, FILE *f, const char *analyzers, bool verbose, bool list)
{
	size_t i, j;

	for (i = 0; i < w->nimgs; i++) {
		const struct wimage *im = w->imgs[i];

		if (!im->nfids)
			continue;
		fprintf(f, "%s%s:\n", i ? "\n" : "", im->path);
		if (list && im->n)
			syms__print_list(f, im->st, im->idx, im->n, NULL);
		else if (im->n)
			plan__print(f, im->plan, im->st, im->idx, analyzers, verbose);
		for (j = 0; im->libs && j < im->libs->nlibs; j++) {
			const struct lib *l = &im->libs->v[j];

			if (im->lib_dup[j])
				continue;
			if (list)
				syms__print_list(f, l->st, l->idx, l->n, NULL);
			else
				plan__print(f, l->plan, l->st, l->idx, analyzers, verbose);
		}
	}
}

int whole__start(struct whole *w, struct trace *tr, const struct guard_maps *gm)
{
	struct hmap_ent *e;
	size_t it = 0;

	w->tr = tr;
	w->gm = *gm;
	w->started = true;
	w->t0_ticks = now_ticks();
	/* Blocked in this thread before the guards' tracer threads exist
	 * (guard__seize): they take SIGCHLD themselves. */
	while (hmap__next(&w->procs, &it, &e)) {
		struct wproc *p = (struct wproc *)(uintptr_t)e->val;
		char path[PATH_MAX];

		if (!p || p->ended || !p->img || !p->img->nfids)
			continue;
		if (syms__resolve_exe(p->pub.pid, path, sizeof(path))) {
			p->ended = true;
			continue;
		}
		guard_and_arm(w, p, path);
	}
	return 0;
}

void whole__gate(struct whole *w, bool open)
{
	struct hmap_ent *e;
	size_t it = 0;

	w->gate = open;
	while (hmap__next(&w->procs, &it, &e)) {
		struct wproc *p = (struct wproc *)(uintptr_t)e->val;

		if (p && p->g)
			guard__gate(p->g, open);
	}
}

void whole__see(struct whole *w, const struct cabbpf_event *e)
{
	struct wproc *p;
	bool created;

	if (e->kind != CABBPF_EV_EXEC && e->pid == w->last_pid)
		return;
	w->last_pid = e->pid;
	p = proc_get(w, (pid_t)e->pid, WHOLE_NEW, &created);
	if (!p)
		return; /* out of memory: the next scan may find it */
	if (e->kind == CABBPF_EV_EXEC) {
		p->pub.execs++;
		p->exec_ts = e->ts;
		p->ended = false;
		enqueue(w, p);
	} else if (created || p->ended) {
		p->ended = false;
		enqueue(w, p);
	}
}

int whole__poll(struct whole *w, double now, bool *empty)
{
	struct hmap_ent *e;
	size_t i, it, alive = 1;
	bool c;
	int err = 0;

	w->now = now;
	*empty = false;
	if (now >= w->next_scan) {
		w->next_scan = now + SCAN_PERIOD_S;
		err = scan(w, &alive);
		if (err) {
			log_err("out of memory");
			return err;
		}
		*empty = !alive;
		/* Guards whose process ended: let them go. */
		it = 0;
		while (hmap__next(&w->procs, &it, &e)) {
			struct wproc *p = (struct wproc *)(uintptr_t)e->val;
			int st;

			if (p && p->g && guard__reaped(p->g, &st) != 0) {
				guard_done(w, p);
				p->ended = true;
			}
		}
	}
	for (i = 0; i < w->nq && !err; i++) {
		struct wproc *p = proc_get(w, w->queue[i], WHOLE_NEW, &c);

		err = p ? look_at(w, p) : -ENOMEM;
	}
	w->nq = 0;
	/* Processes put off while another guard of ours held them. */
	it = 0;
	while (w->nheld && w->started && hmap__next(&w->procs, &it, &e)) {
		struct wproc *p = (struct wproc *)(uintptr_t)e->val;
		char path[PATH_MAX];

		if (!p || !p->held_since)
			continue;
		if (p->ended || syms__resolve_exe(p->pub.pid, path, sizeof(path))) {
			p->held_since = 0;
			w->nheld--;
			p->ended = true;
			continue;
		}
		guard_and_arm(w, p, path);
	}
	if (err)
		log_err("out of memory");
	return err;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct wproc *x = *(struct wproc *const *)a, *y = *(struct wproc *const *)b;

	return x->pub.pid < y->pub.pid ? -1 : x->pub.pid > y->pub.pid;
}

bool whole__stop(struct whole *w, struct guard_stats *sum)
{
	struct hmap_ent *e;
	size_t it = 0, n = 0;

	/* Every guard lets go at once: each may wait for its blocked threads
	 * (user/trace/guard_letgo.c, arm_in_place). */
	while (hmap__next(&w->procs, &it, &e)) {
		struct wproc *p = (struct wproc *)(uintptr_t)e->val;

		if (p)
			guard__let_go(p->g);
	}
	it = 0;
	while (hmap__next(&w->procs, &it, &e)) {
		struct wproc *p = (struct wproc *)(uintptr_t)e->val;

		if (p)
			guard_done(w, p);
	}
	if (sum)
		*sum = w->gsum;
	free(w->sorted);
	w->sorted = calloc(hmap__len(&w->procs) + 1, sizeof(*w->sorted));
	it = 0;
	while (w->sorted && hmap__next(&w->procs, &it, &e))
		if (e->val)
			w->sorted[n++] = (struct wproc *)(uintptr_t)e->val;
	if (w->sorted)
		qsort(w->sorted, n, sizeof(*w->sorted), cmp_proc);
	w->nsorted = n;
	return w->any_guard;
}

int whole__root_reaped(struct whole *w, int *status)
{
	const uint64_t *v = hmap__find(&w->procs, (uint64_t)w->o.root);
	struct wproc *p = v ? (struct wproc *)(uintptr_t)*v : NULL;
	int r;

	if (w->root_done) {
		*status = w->root_status;
		return 1;
	}
	if (!p || !p->g)
		return -1;
	r = guard__reaped(p->g, status);
	if (r == 1) {
		w->root_done = true;
		w->root_status = *status;
	}
	return r;
}

void whole__root_started(struct whole *w)
{
	w->root_started = true;
}

size_t whole__nprocs(const struct whole *w)
{
	return w->nsorted;
}

const struct whole_proc *whole__proc(const struct whole *w, size_t i)
{
	return i < w->nsorted ? &w->sorted[i]->pub : NULL;
}

const struct whole_proc *whole__proc_of(const struct whole *w, pid_t pid)
{
	const uint64_t *v = hmap__find(&w->procs, (uint64_t)pid);
	const struct wproc *p = v ? (const struct wproc *)(uintptr_t)*v : NULL;

	return p ? &p->pub : NULL;
}

size_t whole__nimages(const struct whole *w, size_t *untraced)
{
	size_t i, n = 0;

	for (i = 0; i < w->nimgs; i++)
		n += w->imgs[i]->nfids > 0;
	if (untraced)
		*untraced = w->nimgs - n;
	return n;
}

void whole__free(struct whole *w)
{
	struct hmap_ent *e;
	size_t it = 0, i;

	if (!w)
		return;
	while (hmap__next(&w->procs, &it, &e)) {
		struct wproc *p = (struct wproc *)(uintptr_t)e->val;

		if (p)
			guard_done(w, p);
		free(p);
	}
	hmap__fini(&w->procs);
	for (i = 0; i < w->nimgs; i++)
		image_free(w->imgs[i]);
	free(w->imgs);
	free(w->files);
	free(w->queue);
	free(w->sorted);
	free(w->t.offsets);
	free(w->t.names);
	free(w->t.lnames);
	free(w->t.binaries);
	free(w->t.sp_delta);
	free(w->t.probe_ns);
	free(w);
}
