// SPDX-License-Identifier: BSD-2-Clause
/*
 * Where the tracer runs: a process of its own (user/trace/guardian.h)
 * that outlives cabbpf, or a thread of cabbpf; seizing the target.
 * user/trace/guard_int.h lists the guard's files.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "common/vec.h"
#include "user/trace/watchdog.h"
#include "common/log.h"
#include "user/probe/probe_sites.h"
#include "user/trace/guard_int.h"
#include "guard.skel.h" /* the offset of dump_tgid in .bss */

/* ---- the tracer process (user/trace/guardian.h) ------------------------ */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The tracer process takes a new set of the guard's objects (m: the fds in
 * struct guardian_set's order): install()'s half there. Returns 0 or
 * -EPROTO. */
static int take_set(struct guard *g, struct guardian_msg *m)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t i;

	if (m->nfds < 6 || m->nfds > 7 || m->val <= 0 || m->val > (1 << 20)) {
		for (i = 0; i < m->nfds; i++)
			close(m->fds[i]);
		return -EPROTO;
	}
	pthread_mutex_lock(&g->mu);
	/* a stop asked through the set replaced may still be on its way */
	close_fd(&g->old_reqs_fd);
	g->old_reqs_fd = g->reqs_fd;
	close_fd(&g->iter_fd);
	close_fd(&g->guarded_fd);
	close_fd(&g->exit_map_fd);
	close_fd(&g->exit_prog_fd);
	close_fd(&g->throttled_fd);
	if (g->bss_map)
		munmap(g->bss_map, g->bss_len);
	g->bss_map = NULL;
	g->dump_tgid = NULL;
	g->iter_fd = m->fds[0];
	g->reqs_fd = m->fds[1];
	g->guarded_fd = m->fds[2];
	g->exit_map_fd = m->fds[3];
	g->exit_prog_fd = m->fds[4];
	g->throttled_fd = m->nfds == 7 ? m->fds[6] : -1;
	g->bss_len = ((size_t)m->val + (size_t)page - 1) / (size_t)page * (size_t)page;
	g->bss_map = mmap(NULL, g->bss_len, PROT_READ | PROT_WRITE, MAP_SHARED, m->fds[5], 0);
	if (g->bss_map == MAP_FAILED) {
		log_debug("guard: mapping the guard's .bss in its tracer: %s", strerror(errno));
		g->bss_map = NULL;
	} else {
		g->dump_tgid = (volatile uint32_t *)((char *)g->bss_map +
						     offsetof(struct guard_bpf__bss, dump_tgid));
	}
	close(m->fds[5]);
	for (i = 0; i < g->nth; i++) {
		uint32_t key = (uint32_t)g->th[i].tid, held = CABBPF_GUARDED_HELD;

		bpf_map_update_elem(g->guarded_fd, &key, &held, BPF_ANY);
	}
	pthread_mutex_unlock(&g->mu);
	return 0;
}

/* Links kept while the tracer process lives. */
static void keep_links(struct guard *g, struct guardian_msg *m)
{
	int *v = vec__grow(g->kept, &g->kept_cap, g->nkept + m->nfds, sizeof(*v), 16);
	size_t i;

	if (!v) {
		for (i = 0; i < m->nfds; i++)
			close(m->fds[i]);
		return;
	}
	g->kept = v;
	memcpy(g->kept + g->nkept, m->fds, m->nfds * sizeof(int));
	g->nkept += m->nfds;
}

/* Whether cabbpf's process has ended (its pidfd readable), or it has been
 * dying for so long (a process in D state in the kernel) that the tracer
 * lets go anyway. */
#define GONE_WAIT_MS 60000

static bool cabbpf_gone(struct guard *g)
{
	struct pollfd p = {g->end->cabbpf, POLLIN, 0};

	return poll(&p, 1, 0) == 1 || guard_ms_since(&g->orphan_t0) > GONE_WAIT_MS;
}

/* The loader's messages, in the tracer process. */
void guard_proc__messages(struct guard *g)
{
	struct guardian_msg *m;
	int op;

	if (!g->end || g->orphan || !(m = malloc(sizeof(*m))))
		return;
	while ((op = guardian__recv(g->end->sock, m, false)) != -EAGAIN) {
		if (op == 0) {
			/* cabbpf's end closed: it is dying. Its trace probes go
			 * with its last file; until then they may still replace
			 * return addresses, so the tracer goes on serving. */
			g->orphan = true;
			clock_gettime(CLOCK_MONOTONIC, &g->orphan_t0);
			break;
		}
		if (op == GUARDIAN_SET) {
			guardian__send(g->end->sock, GUARDIAN_ACK, take_set(g, m));
		} else if (op == GUARDIAN_LINKS) {
			keep_links(g, m);
		} else if (op == GUARDIAN_SITES) {
			const uint64_t *offs;
			const char *path;
			size_t n;

			if (!guardian__parse_sites(m, &path, &offs, &n))
				probe_sites__add(path, offs, n);
		}
	}
	free(m);
}

/* The tracer process's wait: a tracee's event (SIGCHLD's signalfd), a
 * message, cabbpf's end; 10 ms at most (a stop request is in the shared
 * state). */
static void wait_events(struct guard *g)
{
	struct pollfd p[2] = {{g->sigfd, POLLIN, 0},
			      {g->orphan ? g->end->cabbpf : g->end->sock, POLLIN, 0}};
	struct signalfd_siginfo si[8];

	if (poll(p, 2, 10) > 0 && (p[0].revents & POLLIN))
		while (read(g->sigfd, si, sizeof(si)) > 0)
			;
}

static void *tracer_main(void *arg)
{
	struct guard *g = arg;
	sigset_t chld;
	int err, st;

	/* Named for top -H and for the tests, which stop it to hold a fork. */
	if (!g->end)
		pthread_setname_np(pthread_self(), "cabbpf-guard");
	err = guard_tracer__seize_all(g);
	if (g->end) {
		atomic_store(&g->sh->seize_done, err ? err : 1);
		guardian__send(g->end->sock, GUARDIAN_SEIZED, err);
	} else {
		pthread_mutex_lock(&g->mu);
		atomic_store(&g->sh->seize_done, err ? err : 1);
		pthread_cond_broadcast(&g->cv);
		pthread_mutex_unlock(&g->mu);
	}
	if (err)
		return NULL;
	/* SIGCHLD is blocked in every cabbpf thread (guard__seize): it is
	 * taken here only, as the wake-up for tracee events; the timeout
	 * bounds how late a stop request is seen. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	while (atomic_load(&g->sh->state) == 0) {
		struct timespec to = {0, 10000000};
		pid_t tid = 0;

		/* __WNOTHREAD: this thread's tracees only, not the children of
		 * cabbpf's other threads (a watchdog, or the tracers of other
		 * guards: whole-container tracing has one per process). */
		while (atomic_load(&g->sh->state) == 0 &&
		       (tid = waitpid(-1, &st, __WALL | __WNOTHREAD | WNOHANG)) > 0)
			guard_tracer__handle(g, tid, st);
		guard_proc__messages(g);
		guard_tracer__release_held(g);
		if (atomic_load(&g->sh->state) != 0)
			break;
		if (tid < 0 && errno == ECHILD) {
			atomic_store(&g->sh->state, 2);
			break;
		}
		/* cabbpf died: let go as it would have (its probes are gone) */
		if (g->orphan && cabbpf_gone(g))
			atomic_store(&g->sh->stop_req, 1);
		if (atomic_load(&g->sh->stop_req)) {
			int tracing = 0;

			guard_letgo__detach_all(g);
			/* Unless guard_letgo__detach_all reaped the leader (state 1). */
			atomic_compare_exchange_strong(&g->sh->state, &tracing, 2);
			break;
		}
		if (g->end)
			wait_events(g);
		else
			sigtimedwait(&chld, NULL, &to);
	}
	return NULL;
}

static void count_tramp(struct guard *g, const uint64_t rec[3], void *arg)
{
	uint64_t cur;

	if (!guard_tracer__peek((pid_t)rec[0], rec[1], &cur) && cur == guard_tracer__trampoline(g))
		++*(uint64_t *)arg;
}

/* The tracer process's life (guardian__start). Never returns. */
static void tracer_process(void *arg, const struct guardian_end *end)
{
	struct guard *g = arg;
	struct rlimit rl;
	sigset_t chld;

	prctl(PR_SET_NAME, "cabbpf-guard");
	/* Each link of the guard is a descriptor here: as many as cabbpf's */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* cabbpf's objects are not this process's (its files are closed) */
	g->skel = NULL;
	g->links = NULL;
	g->nlinks = 0;
	g->mfds = NULL;
	g->nmfds = 0;
	g->altstack = NULL;
	g->gd = NULL;
	g->end = end;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	g->sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	if (g->sigfd < 0) {
		guardian__send(end->sock, GUARDIAN_SEIZED, -errno);
		_exit(1);
	}
	tracer_main(g);
	{
		struct rusage ru;

		if (!getrusage(RUSAGE_SELF, &ru))
			g->sh->st.tracer_cpu_ns =
				(uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
				(uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	}
	if (g->orphan && end->logfd >= 0) {
		uint64_t left = 0;

		guard_tracer__walk_pending(g, NULL, count_tramp, &left);
		dprintf(end->logfd,
			"guardian: pid %d: cabbpf gone; rescue done: %llu stops served, %llu return "
			"addresses given back at the end, %llu threads that did not stop; "
			"trampolines left %llu\n",
			(int)g->pid, (unsigned long long)g->sh->st.stops,
			(unsigned long long)g->sh->st.at_detach,
			(unsigned long long)g->sh->st.detach_left, (unsigned long long)left);
	}
	guardian__send(end->sock, GUARDIAN_BYE, 0);
	/* --lossless: a thread that did not stop (frozen: a paused
	 * container's) may still take a SIGSTOP of ours when it runs again;
	 * continued then, as the watcher of a guard-less run does. Watched
	 * from a child: this process's end detaches whatever it could not
	 * (a frozen thread refuses PTRACE_DETACH), and a thread still traced
	 * by its watcher would never run past its stop. */
	if (g->orphan && g->throttled_fd >= 0 && fork() == 0) {
		watchdog__watch(g->pid);
		_exit(0);
	}
	_exit(0);
}

/* probe_sites__on_add's listener: a tracer process is told of each site
 * (guard_forks__child takes them out of a fork's child). */
static void tell_sites(void *ctx, const char *path, const uint64_t *offs, size_t n)
{
	struct guard *g = ctx;

	guardian__give_sites(g->gd, path, offs, n);
}

/* Says why the tracer could not seize the target (err from guard_tracer__seize_all). */
static void seize_failed(struct guard *g, int err)
{
	if (err == -EPERM)
		log_warn("cannot become the ptrace tracer of pid %d (%s)", (int)g->pid,
			 "already traced by a debugger or strace, or not allowed by "
			 "Yama's ptrace_scope");
	else if (err != -ESRCH) /* gone: the caller knows what that means */
		log_warn("cannot become the ptrace tracer of pid %d: %s", (int)g->pid,
			 strerror(-err));
}

int guard__seize(struct guard *g)
{
	sigset_t chld;
	int err;

	/* Before any other thread exists, so all of them inherit the mask
	 * (the tracer takes SIGCHLD with sigtimedwait, or its signalfd). */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, NULL);
	/* The tracer in a process of its own, which outlives cabbpf; where it
	 * cannot start, a thread (said by guardian__start). */
	if (g->want_guardian && !g->gd && !guardian__start(tracer_process, g, &g->gd)) {
		err = guardian__seized(g->gd);
		g->proc = true;
		/* the sites the process forked without (user/probe/probe_sites.h) */
		if (!err)
			probe_sites__on_add(tell_sites, g);
		if (err) {
			/* Threads seized before the failure were let go when it
			 * ended (the kernel detaches a dead tracer's tracees). */
			guardian__end(g->gd);
			g->gd = NULL;
			seize_failed(g, err == -ECHILD ? -EIO : err);
		}
		return err;
	}
	err = pthread_create(&g->thr, NULL, tracer_main, g);
	if (err)
		return -err;
	g->thr_started = true;
	pthread_mutex_lock(&g->mu);
	while (!atomic_load(&g->sh->seize_done))
		pthread_cond_wait(&g->cv, &g->mu);
	err = atomic_load(&g->sh->seize_done) < 0 ? atomic_load(&g->sh->seize_done) : 0;
	pthread_mutex_unlock(&g->mu);
	if (err) {
		pthread_join(g->thr, NULL);
		g->thr_started = false;
		seize_failed(g, err);
	}
	return err;
}

void guard__forks(struct guard *g)
{
	if (g)
		g->forks = true;
}

void guard__guardian(struct guard *g)
{
	if (g)
		g->want_guardian = true;
}

int guard__reaped(struct guard *g, int *status)
{
	int s;

	/* A tracer process is not the target's parent: cabbpf waits for it
	 * (the tracer's wait hands it on, user/proc/target.h) */
	if (!g || g->proc)
		return -1;
	/* Pairs with the store in guard_tracer__handle(): status is written before. */
	s = atomic_load(&g->sh->state);
	if (s == 1) {
		*status = g->sh->status;
		return 1;
	}
	return s == 0 && g->thr_started ? 0 : -1;
}
