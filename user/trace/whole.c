// SPDX-License-Identifier: BSD-2-Clause
/* Whole-container tracing: the design is in whole.h. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "common/log.h"
#include "user/elf/image.h"
#include "user/proc/cgroup.h"
#include "user/proc/container.h"
#include "user/proc/libs.h"
#include "user/proc/procfs.h"
#include "user/trace/trace.h"
#include "user/trace/whole_int.h"

/* ---- helpers ---- */

int whole__grow(void **v, size_t *cap, size_t n, size_t size)
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
void whole__proc_line(pid_t pid, const char *name, char *buf, size_t len)
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
void whole__proc_container(pid_t pid, char *id, size_t len)
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
bool whole__is_dynamic(const char *path)
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

bool whole__file_known(struct whole *w, dev_t dev, ino_t ino)
{
	size_t i;

	for (i = 0; i < w->nfiles; i++)
		if (w->files[i].dev == dev && w->files[i].ino == ino)
			return true;
	return false;
}

int whole__file_add(struct whole *w, dev_t dev, ino_t ino)
{
	if (whole__grow((void **)&w->files, &w->capfiles, w->nfiles, sizeof(*w->files)))
		return -ENOMEM;
	w->files[w->nfiles++] = (struct wfile){dev, ino};
	return 0;
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
		struct wproc *p = whole_proc__get(w, v[i], WHOLE_RUNNING, &created);

		if (!p) {
			free(v);
			return -ENOMEM;
		}
		/* Found during the run: started during it, or moved in? */
		if (created && w->started)
			p->pub.found = procfs__start_ticks(v[i]) + 1 >= (long long)w->t0_ticks
					       ? WHOLE_NEW
					       : WHOLE_MOVED;
		if (created || p->ended) {
			p->ended = false;
			whole_proc__enqueue(w, p);
		}
	}
	/* Processes that are no more: a later event of their pid is a new
	 * process (the pid reused). One not listed yet but alive (it came
	 * in after the read) is not one of them. */
	while (hmap__next(&w->procs, &it, &e)) {
		struct wproc *p = (struct wproc *)(uintptr_t)e->val;

		if (p && !p->pending && !p->ended &&
		    (!n || !bsearch(&p->pub.pid, v, n, sizeof(*v), cmp_pid)) &&
		    kill(p->pub.pid, 0) && errno == ESRCH)
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
	pthread_mutex_init(&w->reap_mu, NULL);
	pthread_cond_init(&w->reap_cv, NULL);
	w->hold_wr = -1;
	w->images_fd = -1;
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
		struct wproc *p = whole_proc__get(w, w->queue[i], WHOLE_RUNNING, &c);

		err = p ? whole_proc__look_at(w, p) : -ENOMEM;
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
		/* A launcher (a shell, make, env, a test runner): the patterns
		 * apply to every program the tree execs, each looked at (and
		 * held at its exec until its probes are in) as it comes. */
		if (!o->quiet_setup)
			log_info("--follow-forks: the programs %s runs are looked at as they start, "
				 "each held at its exec until its probes are in",
				 w->nimgs ? w->imgs[0]->path : "the command");
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
	int err;

	w->tr = tr;
	w->gm = *gm;
	w->started = true;
	w->t0_ticks = procfs__now_ticks();
	if ((err = whole_hold__start(w)))
		return err;
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
		whole_proc__guard_and_arm(w, p, path);
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

void whole__key_note(struct whole *w, uint32_t dev, uint64_t ino, const struct wproc *p)
{
	struct wkey *k;
	size_t i;

	if (!p->img || !p->pub.exe[0] || (!dev && !ino))
		return;
	for (i = 0; i < w->nkeys; i++)
		if (w->keys[i].dev == dev && w->keys[i].ino == ino)
			return;
	if (whole__grow((void **)&w->keys, &w->capkeys, w->nkeys, sizeof(*w->keys)))
		return;
	k = &w->keys[w->nkeys];
	k->exe = strdup(p->pub.exe);
	if (!k->exe)
		return;
	k->dev = dev;
	k->ino = ino;
	k->img = p->img;
	memcpy(k->comm, p->pub.comm, sizeof(k->comm));
	w->nkeys++;
}

/* p, that exec'd and ended before a look, takes the names of the program
 * its exec event named, when another process of it was looked at.
 * Returns whether it did. */
static bool name_after_exec(struct whole *w, struct wproc *p)
{
	size_t i;

	for (i = 0; i < w->nkeys; i++) {
		const struct wkey *k = &w->keys[i];

		if (k->dev != p->exec_dev || k->ino != p->exec_ino)
			continue;
		memcpy(p->pub.comm, k->comm, sizeof(p->pub.comm));
		snprintf(p->pub.exe, sizeof(p->pub.exe), "%s", k->exe);
		p->img = k->img;
		p->pub.untraced_image = !k->img->nfids;
		p->pub.image_why = k->img->nfids ? NULL : k->img->why;
		p->pub.from = WHOLE_FROM_EXEC;
		p->pub.unarmed_why = "ended before cabbpf could look at it";
		return true;
	}
	return false;
}

/* p, a fork that exec'd nothing and was never looked at, takes its
 * parent's program and names (the parent's own parent first, if it too
 * was never looked at; depth: how far up already). */
static void name_after_parent(struct whole *w, struct wproc *p, int depth)
{
	const uint64_t *v = hmap__find(&w->procs, (uint64_t)p->parent);
	struct wproc *q = v ? (struct wproc *)(uintptr_t)*v : NULL;

	if (!q || q == p || depth > 64)
		return;
	if (!q->pub.exe[0] && !q->pub.execs && q->parent)
		name_after_parent(w, q, depth + 1);
	if (!q->pub.exe[0])
		return;
	memcpy(p->pub.comm, q->pub.comm, sizeof(p->pub.comm));
	memcpy(p->pub.exe, q->pub.exe, sizeof(p->pub.exe));
	memcpy(p->pub.container, q->pub.container, sizeof(p->pub.container));
	p->img = q->img;
	p->pub.untraced_image = q->pub.untraced_image;
	p->pub.image_why = q->pub.image_why;
	p->pub.from = WHOLE_FROM_FORK;
	p->pub.unarmed_why = "ended before its own guard could hold it";
}

static int cmp_proc(const void *a, const void *b);

/* p into whole__stop's list, in pid order (out of memory: left out). */
static void sorted_add(struct whole *w, struct wproc *p)
{
	struct wproc **v = realloc(w->sorted, (w->nsorted + 2) * sizeof(*v));

	if (!v)
		return;
	w->sorted = v;
	v[w->nsorted++] = p;
	v[w->nsorted] = NULL;
	qsort(v, w->nsorted, sizeof(*v), cmp_proc);
}

void whole__see(struct whole *w, const struct cabbpf_event *e)
{
	struct wproc *p;
	bool created;

	if (e->kind == CABBPF_EV_FORK) {
		/* the child (fid: its tid, its pid for a new process) runs
		 * its parent's program until it execs: named after it should
		 * it end before a look */
		p = whole_proc__get(w, (pid_t)e->fid, WHOLE_NEW, &created);
		if (p && !p->parent && (pid_t)e->fid != (pid_t)e->pid)
			p->parent = (pid_t)e->pid;
		if (p && created && w->sorted)
			sorted_add(w, p);
		/* after whole__stop (the last drain): no look will come */
		if (p && w->sorted && !p->pub.exe[0] && !p->pub.execs && p->parent)
			name_after_parent(w, p, 0);
	}
	if (e->kind != CABBPF_EV_EXEC && e->pid == w->last_pid)
		return;
	w->last_pid = e->pid;
	p = whole_proc__get(w, (pid_t)e->pid, WHOLE_NEW, &created);
	if (!p)
		return; /* out of memory: the next scan may find it */
	/* First seen in the last drain, after whole__stop listed the
	 * processes: listed too (it was traced; the report names it). */
	if (created && w->sorted)
		sorted_add(w, p);
	if (e->kind == CABBPF_EV_EXEC) {
		p->pub.execs++;
		p->exec_ts = e->ts;
		if (!e->pad) { /* an execve of its own (not a thread killed by one) */
			p->exec_dev = e->fid;
			p->exec_ino = e->sp;
		}
		p->ended = false;
		whole_proc__enqueue(w, p);
	} else if (created || p->ended) {
		p->ended = false;
		whole_proc__enqueue(w, p);
	}
	/* after whole__stop (the last drain): no look will come */
	if (w->sorted && e->kind == CABBPF_EV_EXEC && !p->pub.exe[0] && p->pub.execs) {
		if (created)
			sorted_add(w, p);
		(void)name_after_exec(w, p);
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
				whole_proc__guard_done(w, p);
				p->ended = true;
			}
		}
	}
	for (i = 0; i < w->nq && !err; i++) {
		struct wproc *p = whole_proc__get(w, w->queue[i], WHOLE_NEW, &c);

		err = p ? whole_proc__look_at(w, p) : -ENOMEM;
	}
	w->nq = 0;
	/* Processes stopped at the exec of a program not looked at yet:
	 * those whose exec event came are looked at already. */
	if (w->started)
		whole_hold__sweep(w);
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
		whole_proc__guard_and_arm(w, p, path);
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
	int fd;

	/* Nobody stays held at an exec (the gate is closed: no new hold). */
	whole_hold__end(w);
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
			whole_proc__guard_done(w, p);
	}
	/* the stopped guards freed: their probes are out when this returns */
	whole_proc__reaper_end(w);
	if (sum)
		*sum = w->gsum;
	/* How each process ended, as the kernel saw it (bpf/trace.bpf.c
	 * proc_exits): its wait status. */
	fd = w->tr ? trace__map_fd(w->tr, "proc_exits") : -1;
	it = 0;
	while (fd >= 0 && hmap__next(&w->procs, &it, &e)) {
		struct wproc *p = (struct wproc *)(uintptr_t)e->val;
		uint32_t pid, st;

		if (!p)
			continue;
		pid = (uint32_t)p->pub.pid;
		if (!bpf_map_lookup_elem(fd, &pid, &st)) {
			p->pub.exited = true;
			p->pub.exit_status = (int)st;
		}
	}
	/* A fork that ended before a look, having exec'd nothing: it ran
	 * its parent's program (looked at, or named so in turn). */
	it = 0;
	while (hmap__next(&w->procs, &it, &e)) {
		struct wproc *p = (struct wproc *)(uintptr_t)e->val;

		if (p && !p->pub.exe[0] && !p->pub.execs && p->parent)
			name_after_parent(w, p, 0);
		else if (p && !p->pub.exe[0] && p->pub.execs)
			(void)name_after_exec(w, p);
	}
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

void whole__hold_figures(const struct whole *w, struct whole_hold_figures *out)
{
	*out = w->hold;
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
	/* Closed without a word (an error before whole__stop): the releaser
	 * lets go of whoever is still held. */
	if (w->hold_wr >= 0)
		close(w->hold_wr);
	while (hmap__next(&w->procs, &it, &e)) {
		struct wproc *p = (struct wproc *)(uintptr_t)e->val;

		if (p)
			whole_proc__guard_done(w, p);
		free(p);
	}
	whole_proc__reaper_end(w);
	free(w->reap);
	pthread_mutex_destroy(&w->reap_mu);
	pthread_cond_destroy(&w->reap_cv);
	hmap__fini(&w->procs);
	for (i = 0; i < w->nimgs; i++)
		whole_image__free(w->imgs[i]);
	free(w->imgs);
	free(w->files);
	free(w->queue);
	free(w->sorted);
	for (i = 0; i < w->nkeys; i++)
		free(w->keys[i].exe);
	free(w->keys);
	free(w->t.offsets);
	free(w->t.names);
	free(w->t.lnames);
	free(w->t.binaries);
	free(w->t.sp_delta);
	free(w->t.probe_ns);
	free(w);
}
