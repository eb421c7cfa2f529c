// SPDX-License-Identifier: BSD-2-Clause
/*
 * The guard's ptrace tracer: the threads it holds, the stops the BPF
 * program asks for and their service, --lossless's holds, a wait's
 * events. user/trace/guard_int.h lists the guard's files.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/vec.h"
#include "user/proc/procfs.h"
#include "user/trace/guard_int.h"

/* ---- the tracer ---------------------------------------------------------- */

struct gthread *guard_tracer__thread(struct guard *g, pid_t tid)
{
	size_t i;

	for (i = 0; i < g->nth; i++)
		if (g->th[i].tid == tid)
			return &g->th[i];
	return NULL;
}

/* A thread the tracer holds from now on; the BPF program may stop it. */
struct gthread *guard_tracer__track(struct guard *g, pid_t tid)
{
	struct gthread *t = guard_tracer__thread(g, tid), *v;
	uint32_t held = CABBPF_GUARDED_HELD, key = (uint32_t)tid;

	if (t)
		return t;
	pthread_mutex_lock(&g->mu);
	v = vec__grow(g->th, &g->cap, g->nth + 1, sizeof(*v), 16);
	if (!v) {
		pthread_mutex_unlock(&g->mu);
		return NULL;
	}
	g->th = v;
	t = &g->th[g->nth++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	if (g->guarded_fd >= 0)
		bpf_map_update_elem(g->guarded_fd, &key, &held, BPF_ANY);
	pthread_mutex_unlock(&g->mu);
	return t;
}

static void forget(struct guard *g, pid_t tid)
{
	struct gthread *t;
	uint32_t key = (uint32_t)tid;

	pthread_mutex_lock(&g->mu);
	t = guard_tracer__thread(g, tid);
	if (t) {
		if (t->held)
			atomic_fetch_sub(&g->sh->nheld, 1);
		if (g->throttled_fd >= 0)
			bpf_map_delete_elem(g->throttled_fd, &key);
		*t = g->th[--g->nth];
		if (g->guarded_fd >= 0)
			bpf_map_delete_elem(g->guarded_fd, &key);
		if (g->reqs_fd >= 0)
			bpf_map_delete_elem(g->reqs_fd, &key);
	}
	pthread_mutex_unlock(&g->mu);
}

/* The uretprobe trampoline: the start of the process's [uprobes] mapping
 * (uprobe_get_trampoline_vaddr(): the xol area's first slot). 0 when the
 * process has none yet (then no slot can hold it). */
uint64_t guard_tracer__trampoline(struct guard *g)
{
	char path[64], line[512];
	FILE *f;

	if (g->tramp)
		return g->tramp;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)g->pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[uprobes]")) {
			g->tramp = strtoull(line, NULL, 16);
			break;
		}
	fclose(f);
	return g->tramp;
}

int guard_tracer__peek(pid_t tid, uint64_t addr, uint64_t *v)
{
	struct iovec l = {v, sizeof(*v)}, r = {(void *)(uintptr_t)addr, sizeof(*v)};

	return process_vm_readv(tid, &l, 1, &r, 1, 0) == (ssize_t)sizeof(*v) ? 0 : -errno;
}

static int poke(pid_t tid, uint64_t addr, uint64_t v)
{
	struct iovec l = {&v, sizeof(v)}, r = {(void *)(uintptr_t)addr, sizeof(v)};

	return process_vm_writev(tid, &l, 1, &r, 1, 0) == (ssize_t)sizeof(v) ? 0 : -errno;
}

/* Put orig back in slot if it holds the trampoline. Returns 1 if written. */
int guard_tracer__restore_slot(struct guard *g, pid_t tid, uint64_t slot, uint64_t orig)
{
	uint64_t cur, tr = guard_tracer__trampoline(g);

	/* Only the trampoline is ours to replace: anything else in the slot
	 * (a dead frame's slot reused) belongs to the program. */
	if (!tr || guard_tracer__peek(tid, slot, &cur) || cur != tr)
		return 0;
	return poke(tid, slot, orig) ? 0 : 1;
}

/*
 * Calls fn for each return instance the kernel holds for the target
 * (bpf/guard.bpf.c, dump_pending): rec is (tid, slot, original return
 * address). li narrows the walk to one task (a fork's child) or is NULL.
 * Returns false when the list cannot be read. Tracer thread only.
 */
bool guard_tracer__walk_pending(struct guard *g, union bpf_iter_link_info *li,
				void (*fn)(struct guard *g, const uint64_t rec[3], void *arg),
				void *arg)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo);
	int lfd = -1, fd = -1;
	uint64_t rec[3];

	if (li) {
		lo.iter_info = li;
		lo.iter_info_len = sizeof(*li);
	}
	if (g->iter_fd >= 0)
		lfd = bpf_link_create(g->iter_fd, 0, BPF_TRACE_ITER, &lo);
	fd = lfd >= 0 ? bpf_iter_create(lfd) : -1;
	while (fd >= 0 && read(fd, rec, sizeof(rec)) == (ssize_t)sizeof(rec))
		fn(g, rec, arg);
	if (fd >= 0)
		close(fd);
	if (lfd >= 0)
		close(lfd);
	return fd >= 0;
}


static void give_back_one(struct guard *g, const uint64_t rec[3], void *arg)
{
	struct gthread *t = guard_tracer__thread(g, (pid_t)rec[0]);
	bool chosen = t && (*(enum give_back *)arg == GIVE_BACK_ARMED ? t->armed : t->stopped);

	if (chosen && guard_tracer__restore_slot(g, t->tid, rec[1], rec[2]))
		g->sh->st.at_detach++;
}

/* Gives back the slots of the threads which selects. Returns false when
 * the kernel's list cannot be read (nothing given back). */
bool guard_tracer__give_back(struct guard *g, enum give_back which)
{
	return guard_tracer__walk_pending(g, NULL, give_back_one, &which);
}

/* Serve the request the BPF program left for tid, if any. Returns true
 * if there was one (the SIGSTOP that stopped the thread is then ours). */
bool guard_tracer__serve(struct guard *g, pid_t tid)
{
	struct cabbpf_guard_req r;
	struct gthread *t;
	uint32_t key = (uint32_t)tid, i, j;

	if (g->reqs_fd >= 0 && !bpf_map_lookup_elem(g->reqs_fd, &key, &r))
		bpf_map_delete_elem(g->reqs_fd, &key);
	else if (g->old_reqs_fd >= 0 && !bpf_map_lookup_elem(g->old_reqs_fd, &key, &r))
		bpf_map_delete_elem(g->old_reqs_fd, &key);
	else
		return false;
	t = guard_tracer__track(g, tid);
	if (!t || r.n > CABBPF_GUARD_MAX) {
		g->sh->st.failed++;
		return true;
	}
	g->sh->st.stops++;
	if (r.op == CABBPF_GUARD_RESTORE) {
		/* Frames left on another stack must never get a trampoline
		 * back: their returns happen where the kernel cannot follow. */
		if (r.site == CABBPF_GS_SWITCH)
			t->n = 0;
		for (i = 0; i < r.n; i++) {
			if (!guard_tracer__restore_slot(g, tid, r.slot[i], r.orig[i]))
				continue;
			g->sh->st.restored++;
			/* Below a signal's alternate stack: the kernel's list
			 * may drop them (bpf/guard.bpf.c, guard_altstack). */
			if (r.site == CABBPF_GS_SWITCH || r.site == CABBPF_GS_ALTSTACK)
				continue;
			for (j = 0; j < t->n && t->slot[j] != r.slot[i]; j++)
				;
			/* A slot listed already belonged to a frame that is
			 * gone (unwound, never re-armed): the slot's frame is
			 * this one now. Kept with the old address, the catch
			 * below would not re-arm it, and its return would be
			 * lost (found with std::rethrow_exception at the slot
			 * of the next call). */
			if (j < t->n)
				t->orig[j] = r.orig[i];
			else if (t->n < CABBPF_GUARD_MAX) {
				t->slot[t->n] = r.slot[i];
				t->orig[t->n++] = r.orig[i];
			}
		}
		return true;
	}
	/* Frames at or below the catch are dead: their slots leave the
	 * list (else it fills with them, and nothing is re-armed any more). */
	for (j = 0; j < t->n;)
		if (t->slot[j] <= r.sp) {
			t->slot[j] = t->slot[t->n - 1];
			t->orig[j] = t->orig[--t->n];
		} else {
			j++;
		}
	/* Re-arm: frames above the catch that this thread's unwinding
	 * restored and that still hold their original return address. */
	for (i = 0; i < r.n; i++) {
		uint64_t cur, tr = guard_tracer__trampoline(g);

		for (j = 0; j < t->n && !(t->slot[j] == r.slot[i] && t->orig[j] == r.orig[i]); j++)
			;
		if (j == t->n)
			continue;
		t->slot[j] = t->slot[t->n - 1];
		t->orig[j] = t->orig[--t->n];
		if (tr && !guard_tracer__peek(tid, r.slot[i], &cur) && cur == r.orig[i] &&
		    !poke(tid, r.slot[i], tr))
			g->sh->st.rearmed++;
	}
	return true;
}

void guard_tracer__resume(pid_t tid, int sig)
{
	ptrace(PTRACE_CONT, tid, NULL, (void *)(uintptr_t)sig);
}

/* Seize every thread of the process until no new one appears. */
int guard_tracer__seize_all(struct guard *g)
{
	long opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | (g->forks ? PTRACE_O_TRACEFORK : 0);
	char path[64];
	bool more = true;
	int err = 0, rounds = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)g->pid);
	while (more && rounds++ < 100) {
		DIR *d = opendir(path);
		struct dirent *de;

		if (!d)
			return -ESRCH;
		more = false;
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);

			if (tid <= 0 || guard_tracer__thread(g, tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)opts)) {
				/* Exited meanwhile. A task that has exited but
				 * is not reaped yet (a zombie: a fork's child
				 * that ended before its own guard came) gives
				 * EPERM, not ESRCH; another tracer's tracee is
				 * not gone. */
				if (errno == ESRCH || (errno == EPERM && procfs__gone(tid)))
					continue;
				err = -errno;
				break;
			}
			if (!guard_tracer__track(g, tid)) {
				err = -ENOMEM;
				break;
			}
			more = true;
		}
		closedir(d);
		if (err)
			return err;
	}
	/* None held: every thread exited (a zombie leader included). */
	return g->nth ? 0 : -ESRCH;
}

/* --lossless: whether bpf/trace.bpf.c asked tid to stop at the rings'
 * high-water mark (throttled[tid]); *ts, if not NULL, gets when. */
bool guard_tracer__throttled_since(struct guard *g, pid_t tid, uint64_t *ts)
{
	uint32_t key = (uint32_t)tid;
	uint64_t v;

	if (g->throttled_fd < 0 || bpf_map_lookup_elem(g->throttled_fd, &key, &v))
		return false;
	if (ts)
		*ts = v;
	return true;
}

/* Keep tid in its signal-delivery-stop until the loader's next drain
 * round ends below the low-water mark. Returns false when it cannot be
 * held (not tracked): the caller resumes it. */
static bool hold(struct guard *g, pid_t tid)
{
	struct gthread *t = guard_tracer__track(g, tid);

	if (!t)
		return false;
	if (!t->held) {
		t->held = true;
		atomic_fetch_add(&g->sh->nheld, 1);
	}
	t->held_gen = atomic_load(&g->sh->drain_gen);
	return true;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Let held thread t go (its stop request cleared first, so its next
 * event past the mark asks again), counting how long it waited since the
 * BPF program asked (bpf_ktime_get_ns is CLOCK_MONOTONIC). */
void guard_tracer__unhold(struct guard *g, struct gthread *t, bool resume_it)
{
	uint32_t key = (uint32_t)t->tid;
	uint64_t ts = 0, now = mono_ns(), d;

	if (guard_tracer__throttled_since(g, t->tid, &ts)) {
		d = now > ts ? now - ts : 0;
		g->sh->st.held++;
		g->sh->st.held_ns += d;
		if (d > g->sh->st.held_max_ns)
			g->sh->st.held_max_ns = d;
		bpf_map_delete_elem(g->throttled_fd, &key);
	}
	t->held = false;
	atomic_fetch_sub(&g->sh->nheld, 1);
	if (resume_it)
		guard_tracer__resume(t->tid, 0);
}

/* Resume the held threads once a drain round that began after their stop
 * ended below the low-water mark. */
void guard_tracer__release_held(struct guard *g)
{
	uint64_t gen;
	size_t i;

	/* cabbpf gone: no drain round comes any more */
	if (!atomic_load(&g->sh->nheld) || (!g->orphan && !atomic_load(&g->sh->drain_below)))
		return;
	gen = atomic_load(&g->sh->drain_gen);
	for (i = 0; i < g->nth; i++)
		if (g->th[i].held && (g->orphan || gen > g->th[i].held_gen))
			guard_tracer__unhold(g, &g->th[i], true);
}

void guard__drained(struct guard *g, bool below)
{
	if (!g)
		return;
	atomic_store(&g->sh->drain_below, below);
	atomic_fetch_add(&g->sh->drain_gen, 1);
	/* Wake the tracer out of its wait (a thread's: SIGCHLD is what it
	 * waits for). */
	if (below && atomic_load(&g->sh->nheld)) {
		if (g->gd)
			guardian__nudge(g->gd);
		else if (g->thr_started)
			pthread_kill(g->thr, SIGCHLD);
	}
}

void guard_tracer__handle(struct guard *g, pid_t tid, int st)
{
	int sig, ev;
	unsigned long msg;

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		forget(g, tid);
		if (tid == g->pid) {
			g->sh->status = st;
			atomic_store(&g->sh->state, 1);
		}
		return;
	}
	if (!WIFSTOPPED(st) || guard_forks__child(g, tid))
		return;
	guard_tracer__track(g, tid); /* a new thread may report before its creator's event */
	sig = WSTOPSIG(st);
	ev = (unsigned)st >> 16;
	switch (ev) {
	case PTRACE_EVENT_CLONE:
		if (!ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg))
			guard_tracer__track(g, (pid_t)msg);
		guard_tracer__resume(tid, 0);
		return;
	case PTRACE_EVENT_EXEC:
		/* A new image: a new [uprobes] area, and no frame of the old
		 * one survives (the other threads are gone). */
		g->tramp = 0;
		if (!ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) && (pid_t)msg != tid)
			forget(g, (pid_t)msg);
		{
			struct gthread *t = guard_tracer__thread(g, tid);

			if (t)
				t->n = 0;
		}
		guard_tracer__resume(tid, 0);
		return;
	case PTRACE_EVENT_STOP:
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			/* A real group-stop: stay stopped, and let SIGCONT end it
			 * as it would untraced. */
			ptrace(PTRACE_LISTEN, tid, NULL, NULL);
			return;
		}
		guard_tracer__resume(tid, 0); /* a new thread's first stop */
		return;
	case 0:
		if (sig == SIGSTOP) {
			siginfo_t si;
			bool guard_req, lossless_req;

			memset(&si, 0, sizeof(si));
			ptrace(PTRACE_GETSIGINFO, tid, NULL, &si);
			/* Ours: sent by bpf_send_signal_thread (SI_KERNEL, which
			 * no process can forge) with a request waiting: the
			 * guard's, the rings' high-water mark's (--lossless), or
			 * both (two SIGSTOPs merge into one). A SIGSTOP from
			 * anyone else is delivered as sent. */
			guard_req = guard_tracer__serve(g, tid);
			lossless_req = guard_tracer__throttled_since(g, tid, NULL);
			if ((guard_req || lossless_req) && si.si_code == SI_KERNEL) {
				sig = 0;
				if (lossless_req && hold(g, tid))
					return; /* resumed by guard_tracer__release_held() */
			}
		}
		guard_tracer__resume(tid, sig);
		return;
	default:
		guard_tracer__resume(tid, 0);
	}
}

/*
 * Let go of a live process: the threads holding return addresses found in
 * the kernel's own list (guard_tracer__walk_pending), each written back in place if it
 * is blocked in a system call, else stopped first; every thread marked
 * let go in "guarded", then detached. Below, mark_must_stop's step.
 */
