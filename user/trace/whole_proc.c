// SPDX-License-Identifier: BSD-2-Clause
/*
 * Whole-container tracing's processes: each one found looked at, its
 * images probed, guarded and armed, or said untraced and why. whole_int.h
 * lists the files.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "user/proc/procfs.h"
#include "user/proc/libs.h"
#include "user/trace/trace.h"
#include "user/trace/whole_int.h"

/* ---- processes ---- */

struct wproc *whole_proc__get(struct whole *w, pid_t pid, enum whole_found how, bool *created)
{
	struct wproc *p = hmap__obj(&w->procs, (uint64_t)pid, sizeof(*p), created);

	if (p && *created) {
		p->pub.pid = pid;
		p->pub.found = how;
	}
	return p;
}

void whole_proc__enqueue(struct whole *w, struct wproc *p)
{
	if (p->pending)
		return;
	if (whole__grow((void **)&w->queue, &w->capq, w->nq, sizeof(*w->queue)))
		return; /* out of memory: looked at by the next scan, if still there */
	w->queue[w->nq++] = p->pub.pid;
	p->pending = true;
}

/* Freeing a stopped guard closes its probe links and BPF object, which
 * waits for the kernel's grace periods (a few hundred ms here): done on
 * the loader's main thread, the run would serve no process held at its
 * exec meanwhile. Threads of their own free them (guard.h: guard__free of
 * a stopped guard, any thread), several, so that their waits overlap: a
 * tree that runs a short program again and again stops guards faster
 * than one thread frees them. */
static void *reaper_main(void *arg)
{
	struct whole *w = arg;
	struct guard *g;

	for (;;) {
		pthread_mutex_lock(&w->reap_mu);
		while (!w->nreap && !w->reap_end)
			pthread_cond_wait(&w->reap_cv, &w->reap_mu);
		if (!w->nreap) {
			pthread_mutex_unlock(&w->reap_mu);
			return NULL;
		}
		g = w->reap[--w->nreap];
		pthread_mutex_unlock(&w->reap_mu);
		guard__free(g);
	}
}

/* g (stopped) freed by the reaper, or here if it cannot be. */
static void retire(struct whole *w, struct guard *g)
{
	sigset_t all, old;
	bool queued = false;

	if (!w->reap_started) {
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old); /* no signal of ours goes there */
		while (w->nreapers < REAPERS &&
		       !pthread_create(&w->reap_thr[w->nreapers], NULL, reaper_main, w))
			w->nreapers++;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		w->reap_started = w->nreapers > 0;
	}
	if (w->reap_started) {
		pthread_mutex_lock(&w->reap_mu);
		if (!whole__grow((void **)&w->reap, &w->capreap, w->nreap, sizeof(*w->reap))) {
			w->reap[w->nreap++] = g;
			queued = true;
			pthread_cond_signal(&w->reap_cv);
		}
		pthread_mutex_unlock(&w->reap_mu);
	}
	if (!queued)
		guard__free(g);
}

void whole_proc__reaper_end(struct whole *w)
{
	if (!w->reap_started)
		return;
	pthread_mutex_lock(&w->reap_mu);
	w->reap_end = true;
	pthread_cond_broadcast(&w->reap_cv);
	pthread_mutex_unlock(&w->reap_mu);
	while (w->nreapers)
		pthread_join(w->reap_thr[--w->nreapers], NULL);
	w->reap_started = false;
	w->reap_end = false;
}

void whole_proc__guard_done(struct whole *w, struct wproc *p)
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
	retire(w, p->g);
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
void whole_proc__guard_and_arm(struct whole *w, struct wproc *p, const char *path)
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
int whole_proc__look_at(struct whole *w, struct wproc *p)
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
	whole__proc_line(p->pub.pid, "comm", p->pub.comm, sizeof(p->pub.comm));
	whole__proc_container(p->pub.pid, p->pub.container, sizeof(p->pub.container));
	/* A new image (exec of another program): the old guard watched the
	 * old one's files; execve disarmed it already (bpf/trace.bpf.c). */
	whole_proc__guard_done(w, p);
	p->img = whole_image__of(w, path, &sb, p->pub.exe[0] ? p->pub.exe : path, p->pub.pid, p->pub.comm);
	if (!p->img)
		return -ENOMEM;
	p->pub.untraced_image = !p->img->nfids;
	p->pub.image_why = p->img->nfids ? NULL : p->img->why;
	/* From when its calls are seen: an image attached just now missed
	 * what the process did before; one in place already saw it all
	 * since the exec, the fork, or the move into the cgroup. */
	if (p->held_exec || (by_exec && whole_hold__held(w, p->pub.pid))) {
		/* held at its exec until its probes were in: from its start */
		p->pub.from = WHOLE_FROM_EXEC;
	} else if (p->img->late && p->img->attached_s == w->now) {
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
	if (by_exec)
		whole__key_note(w, p->exec_dev, p->exec_ino, p);
	if (!w->started || !p->img->nfids)
		return 0;
	whole_proc__guard_and_arm(w, p, path);
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
