// SPDX-License-Identifier: BSD-2-Clause
/*
 * Letting go of a guarded process: the return addresses given back,
 * in place for a thread blocked in a system call, else at a stop; every
 * thread detached. user/trace/guard_int.h lists the guard's files.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "user/proc/procfs.h"
#include "common/log.h"
#include "user/trace/guard_int.h"

static void must_stop_one(struct guard *g, const uint64_t rec[3], void *arg)
{
	struct gthread *t = guard_tracer__thread(g, (pid_t)rec[0]);

	(void)arg;
	if (t)
		t->must_stop = true;
}

/* Whether a stop of tid was asked for by a BPF program (the guard's
 * request, or --lossless's at the rings' high-water mark) and not yet
 * served. */
static bool ours_asked(struct guard *g, pid_t tid)
{
	struct cabbpf_guard_req r;
	uint32_t key = (uint32_t)tid;

	return (g->reqs_fd >= 0 && !bpf_map_lookup_elem(g->reqs_fd, &key, &r)) ||
	       guard_tracer__throttled_since(g, tid, NULL);
}

/*
 * Marks the threads that hold return addresses to give back (must_stop).
 * The trace's probes are out by now: no thread gets a new one, a running
 * thread can only lose some (returns). Returns false when the kernel's
 * list cannot be read: then every thread must stop.
 */
static bool mark_must_stop(struct guard *g)
{
	size_t i;

	for (i = 0; i < g->nth; i++)
		g->th[i].must_stop = false;
	return guard_tracer__walk_pending(g, NULL, must_stop_one, NULL);
}

/* The calls a ptrace stop ends with EINTR even in a thread with no signal
 * handler (signal(7), "Interruption of system calls and library functions
 * by stop signals"; the socket calls only when a timeout is set on the
 * socket, which is not seen from here): a thread that must be stopped in
 * one of them is said to be cut short. */
static const struct {
	long nr;
	const char *name;
} eintr_calls[] = {
#ifdef __NR_epoll_wait
	{__NR_epoll_wait, "epoll_wait"},
#endif
	{__NR_epoll_pwait, "epoll_pwait"},
#ifdef __NR_epoll_pwait2
	{__NR_epoll_pwait2, "epoll_pwait2"},
#endif
	{__NR_rt_sigtimedwait, "sigtimedwait"},
	{__NR_semop, "semop"},
	{__NR_semtimedop, "semtimedop"},
	{__NR_io_getevents, "io_getevents"},
#ifdef __NR_io_pgetevents
	{__NR_io_pgetevents, "io_pgetevents"},
#endif
	{__NR_accept, "accept"},
	{__NR_accept4, "accept4"},
	{__NR_connect, "connect"},
	{__NR_recvfrom, "recvfrom"},
	{__NR_recvmsg, "recvmsg"},
	{__NR_recvmmsg, "recvmmsg"},
	{__NR_sendto, "sendto"},
	{__NR_sendmsg, "sendmsg"},
	{__NR_sendmmsg, "sendmmsg"},
};

static const char *eintr_call(long nr)
{
	size_t i;

	for (i = 0; nr >= 0 && i < sizeof(eintr_calls) / sizeof(eintr_calls[0]); i++)
		if (eintr_calls[i].nr == nr)
			return eintr_calls[i].name;
	return NULL;
}

/* An armed thread's entry goes. Returns 1 if deleted here (the thread
 * never left its call), 0 if stop_on_exit took it first (its SIGSTOP is
 * coming, ours to swallow: ours_pending), -1 if the program could not send
 * that SIGSTOP (the thread left its call and runs: stop it). */
static int disarm(struct guard *g, struct gthread *t)
{
	uint32_t key = (uint32_t)t->tid, v = 0;

	if (!t->armed)
		return 0;
	t->armed = false;
	if (bpf_map_lookup_and_delete_elem(g->exit_map_fd, &key, &v)) {
		t->ours_pending = true;
		return 0;
	}
	return v == CABBPF_EXIT_STOP_ARMED ? 1 : -1;
}

/*
 * Letting go of a thread blocked in a system call needs no stop: a thread
 * in the kernel runs none of its own code, so its return addresses can be
 * written back while it stays in its call, which then ends as it would
 * untraced (a stop would end epoll_wait or sigwaitinfo with EINTR, and a
 * naive program takes that for its event). What makes the writes safe is
 * that the thread cannot leave the kernel unseen meanwhile:
 *
 *   arm_in_place    puts its tid in stop_at_exit (bpf/guard.bpf.c,
 *                   stop_on_exit: at a system call's exit, whoever deletes
 *                   the entry first decides; the program then sends
 *                   SIGSTOP, taken before the thread runs a user
 *                   instruction), THEN reads that it is in a system call:
 *                   from that read on, it can only reach user mode through
 *                   that exit, where it would stop;
 *   give_back_in_place  reads its pending return instances and writes them
 *                   back, then deletes the entry: deleted by us, the
 *                   thread never left its call (let go in place, never
 *                   stopped); deleted by the program, it left and its
 *                   SIGSTOP is coming (ours_pending), taken before any of
 *                   its code ran: the writes were safe either way, and it
 *                   is let go like any stopped thread.
 *
 * execve is left out: it may replace the memory being written.
 */
static bool arm_in_place(struct guard *g, struct gthread *t)
{
	uint32_t key = (uint32_t)t->tid, armed = CABBPF_EXIT_STOP_ARMED;
	long nr = procfs__syscall(g->pid, t->tid);

	if (nr < 0 || nr == __NR_execve || nr == __NR_execveat || g->exit_prog_fd < 0 ||
	    g->exit_map_fd < 0)
		return false;
	if (g->exit_stop < 0) {
		/* tp_btf: attached by its BTF id, as libbpf would (the tracer
		 * process has the program's descriptor, not the skeleton) */
		g->exit_stop = bpf_raw_tracepoint_open(NULL, g->exit_prog_fd);
		if (g->exit_stop < 0) {
			log_debug("guard: attaching stop_on_exit: %s", strerror(errno));
			g->exit_stop = -1;
			return false;
		}
	}
	if (bpf_map_update_elem(g->exit_map_fd, &key, &armed, BPF_ANY))
		return false;
	t->armed = true;
	/* This read, after the entry is in place, is the one that counts. */
	nr = procfs__syscall(g->pid, t->tid);
	if (nr >= 0 && nr != __NR_execve && nr != __NR_execveat)
		return true;
	/* Not in a call now: stopped like any running thread, unless it
	 * left its call meanwhile and its stop is coming. */
	return !disarm(g, t);
}

/* Thread t must stop and cannot be let go in place: interrupted. In a call
 * that then ends with EINTR it is cut short: counted, and said once by
 * the caller (*call, the first such call's name). */
static void interrupt(struct guard *g, struct gthread *t, const char **call)
{
	const char *c = eintr_call(procfs__syscall(g->pid, t->tid));

	ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
	if (!c)
		return;
	if (!g->sh->st.detach_cut_short++)
		*call = c;
}

/* See arm_in_place. The armed threads that never left their call are let
 * go in place (must_stop cleared, counted); those that did are stopping.
 * Without the return instances (no iterator), the armed threads are
 * interrupted (interrupt, *call). */
static void give_back_in_place(struct guard *g, const char **call)
{
	bool read_them = guard_tracer__give_back(g, GIVE_BACK_ARMED);
	size_t i;

	for (i = 0; i < g->nth; i++) {
		struct gthread *t = &g->th[i];
		uint32_t key = (uint32_t)t->tid, let_go = CABBPF_GUARDED_LET_GO;
		int stayed;

		if (!t->armed)
			continue;
		/* Before it can run again: the guard asks nothing more of it
		 * (a catch's re-arm would stop it, and with nobody to see the
		 * stop once this tracer is gone, stop the whole process). */
		if (g->guarded_fd >= 0)
			bpf_map_update_elem(g->guarded_fd, &key, &let_go, BPF_EXIST);
		stayed = disarm(g, t);
		if (!stayed)
			continue; /* its stop is coming */
		if (stayed < 0 || !read_them) {
			interrupt(g, t, call);
			continue;
		}
		t->must_stop = false;
		g->sh->st.detach_in_place++;
	}
}

/*
 * Test hook, compiled in and armed only by the environment:
 * CABBPF_TEST_LET_GO_PAUSE=FILE: once threads were let go in place, say
 * so and wait (up to 60 s) until FILE exists, the tracer still holding
 * the process: the test wakes such a thread meanwhile, whose catch must
 * ask the guard for nothing (tests/test_guard_integration.c,
 * let_go_in_place_then_catch).
 */
static void test_pause_after_in_place(const struct guard *g)
{
	const char *f = getenv("CABBPF_TEST_LET_GO_PAUSE");
	int i;

	if (!f || !g->sh->st.detach_in_place)
		return;
	log_info("test: letting go of pid %d paused until %s exists", (int)g->pid, f);
	for (i = 0; i < 6000 && access(f, F_OK); i++) {
		struct timespec ms10 = {0, 10000000};

		nanosleep(&ms10, NULL);
	}
}

/* Marks the threads to stop and stops them: each either given back its
 * return addresses in place (counted in *narmed) or interrupted. Sets
 * *call to the system call one of them was stopped in, if any. */
static void stop_marked(struct guard *g, bool all, size_t *narmed, const char **call)
{
	size_t i;

	/* Only the threads with return addresses to give back are stopped,
	 * and of those, none blocked in a system call (arm_in_place): a stop
	 * ends some blocking calls with EINTR even without a handler
	 * (sigwaitinfo, epoll_wait, semop: signal(7)), and a target blocked
	 * in sigwaitinfo went on as if its signal had come when cabbpf let
	 * go (tests/targets/dlopener.c -w). The others are let go by the
	 * kernel when this tracer thread ends (exit_ptrace unlinks a running
	 * tracee without waking it); one that reports a stop meanwhile is
	 * let go here like the stopped ones. */
	for (i = 0; i < g->nth; i++) {
		g->th[i].stopped = false;
		g->th[i].pass_sig = 0;
		if (g->th[i].held) {
			/* In its signal-delivery-stop already (--lossless): it
			 * reports nothing more; let go below. */
			guard_tracer__unhold(g, &g->th[i], false);
			g->th[i].stopped = true;
			continue;
		}
		if (all)
			g->th[i].must_stop = true;
		g->th[i].armed = g->th[i].ours_pending = false;
		if (!g->th[i].must_stop)
			continue;
		if (arm_in_place(g, &g->th[i])) {
			(*narmed)++;
			continue;
		}
		interrupt(g, &g->th[i], call);
	}
}

/* A signal-delivery stop of t while letting go: ours (a SIGSTOP the
 * kernel sent for the guard, or the one asked for) is swallowed, another
 * signal is kept to pass on at the detach. */
static void on_signal_stop(struct guard *g, struct gthread *t, pid_t tid, int sig)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	ptrace(PTRACE_GETSIGINFO, tid, NULL, &si);
	if (sig == SIGSTOP && si.si_code == SI_KERNEL) {
		bool guard_req = guard_tracer__serve(g, tid);

		if (guard_tracer__throttled_since(g, tid, NULL)) {
			t->held = true; /* for unhold's count */
			atomic_fetch_add(&g->sh->nheld, 1);
			guard_tracer__unhold(g, t, false);
			sig = 0;
		} else if (guard_req || t->ours_pending) {
			sig = 0;
		}
		t->ours_pending = false;
	} else if (t->ours_pending) {
		/* Another signal first (delivered now, as untraced); the
		 * stop on exit comes next. */
		guard_tracer__resume(tid, sig);
		return;
	}
	t->pass_sig = sig;
	t->stopped = true;
}

/* One wait status of tid while letting go: exits handled, a new clone
 * tracked and interrupted, a stop recorded on its thread. */
static void on_status(struct guard *g, pid_t tid, int st)
{
	struct gthread *t;
	int sig = WSTOPSIG(st), ev = (unsigned)st >> 16;

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		guard_tracer__handle(g, tid, st);
		return;
	}
	if (!WIFSTOPPED(st) || guard_forks__child(g, tid))
		return;
	t = guard_tracer__track(g, tid);
	if (!t)
		return;
	if (ev == PTRACE_EVENT_CLONE) {
		unsigned long msg;

		if (!ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg)) {
			guard_tracer__track(g, (pid_t)msg);
			ptrace(PTRACE_INTERRUPT, (pid_t)msg, NULL, NULL);
		}
		t = guard_tracer__thread(g, tid);
	}
	if (ev == 0) {
		on_signal_stop(g, t, tid, sig);
		return;
	}
	/* An event or interrupt stop. Our SIGSTOP may still be queued (the
	 * request is there): let the thread take it first, or it would stop
	 * the whole process after we go. Not queued with a request there:
	 * never sent; this stop is as good. */
	if ((ours_asked(g, tid) || t->ours_pending) && procfs__sig_pending(tid, SIGSTOP)) {
		guard_tracer__resume(tid, 0);
		return;
	}
	t->ours_pending = false;
	if (ev == PTRACE_EVENT_STOP &&
	    (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU))
		t->pass_sig = 0; /* a real group-stop: it stays */
	t->stopped = true;
}

/* Waits up to 2 s for every marked thread to report its stop. */
static void wait_stopped(struct guard *g)
{
	struct timespec t0;
	int st;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		size_t i, left = 0;
		pid_t tid;

		for (i = 0; i < g->nth; i++)
			left += g->th[i].must_stop && !g->th[i].stopped;
		if (!left)
			return;
		if (guard_ms_since(&t0) > 2000) {
			g->sh->st.detach_left = left;
			log_warn("%zu thread%s of pid %d did not stop: their return addresses "
				 "stay with the kernel",
				 left, left == 1 ? "" : "s", (int)g->pid);
			return;
		}
		tid = waitpid(-1, &st, __WALL | __WNOTHREAD | WNOHANG);
		if (tid == 0) {
			struct timespec ms = {0, 1000000};

			nanosleep(&ms, NULL);
			continue;
		}
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			return; /* ECHILD: nobody left */
		}
		on_status(g, tid, st);
	}
}

void guard_letgo__detach_all(struct guard *g)
{
	bool all = !mark_must_stop(g);
	size_t i, narmed = 0;
	const char *call = NULL;

	stop_marked(g, all, &narmed, &call);
	if (narmed) {
		give_back_in_place(g, &call);
		test_pause_after_in_place(g);
	}
	if (call)
		log_warn("letting go of pid %d: %" PRIu64 " thread%s (one in %s) stopped in a "
			 "call to give its return addresses back: that call may end with EINTR "
			 "(signal(7))",
			 (int)g->pid, g->sh->st.detach_cut_short,
			 g->sh->st.detach_cut_short == 1 ? "" : "s", call);
	wait_stopped(g);
	/* Every thread that stopped: back to the original return addresses. */
	if (g->nth)
		guard_tracer__give_back(g, GIVE_BACK_STOPPED);
	if (g->exit_stop >= 0)
		close(g->exit_stop);
	g->exit_stop = -1;
	pthread_mutex_lock(&g->mu);
	for (i = 0; i < g->nth; i++) {
		uint32_t key = (uint32_t)g->th[i].tid, let_go = CABBPF_GUARDED_LET_GO;

		/* Kept, marked: a catch after this asks nothing and is not
		 * counted as unguarded (bpf/guard.bpf.c, request). */
		if (g->guarded_fd >= 0)
			bpf_map_update_elem(g->guarded_fd, &key, &let_go, BPF_EXIST);
		if (g->th[i].stopped)
			ptrace(PTRACE_DETACH, g->th[i].tid, NULL,
			       (void *)(uintptr_t)g->th[i].pass_sig);
	}
	g->nth = 0;
	pthread_mutex_unlock(&g->mu);
}
