// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/vec.h"
#include "user/trace/watchdog.h"

/* The watch lasts at least this long after cabbpf's end. */
#define RESCUE_MS 2000

/* CPU time after which a thread has certainly taken a stop it carried: the
 * stop is taken as it leaves the kernel, before its first instruction. */
#define SETTLE_RUN_NS 10000000ULL

/*
 * A thread held in a ptrace stop when cabbpf died is woken by the kernel
 * with the SIGSTOP still to take, and takes it (stopping the whole
 * target) when it next runs: at once on a quiet machine, after a long
 * while on a loaded one or in a throttled cgroup. So the watch does not
 * end after a fixed time but once every thread of the target is past that
 * point ("settled"), whatever the load: seen sleeping (S: it ran since,
 * or never was held), or having switched out voluntarily since it was
 * first seen untraced (a held thread's first run ends in the stop), or
 * having run SETTLE_RUN_NS since (a thread that computes never sleeps).
 * A thread in D may be frozen (cgroup freezer: a paused container) with
 * the stop still to take when thawed: it settles by running too.
 * Until then a thread still in its ptrace stop ('t': the tracer's exit has
 * not let it go yet) or runnable but not yet run keeps the watch going.
 */
struct wthread {
	pid_t tid;
	bool seen; /* seen untraced: vol0 and run0 are then */
	bool settled;
	unsigned long long vol0, run0;
};

struct wtable {
	struct wthread *v;
	size_t n, cap;
};

/* A thread's on-CPU time in ns (schedstat: 0 if the kernel keeps none). */
static unsigned long long run_ns(pid_t pid, const char *tid)
{
	char path[320], buf[128];
	unsigned long long v = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = 0;
		v = strtoull(buf, NULL, 10);
	}
	return v;
}

/* A thread's state letter and voluntary context switches, from its status
 * file; 0 if it is gone. */
static char thread_state(pid_t pid, const char *tid, unsigned long long *vol)
{
	char path[320], buf[4096], *p;
	ssize_t n;
	char st = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/status", (int)pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strstr(buf, "\nState:");
	if (!p || sscanf(p + 7, " %c", &st) != 1)
		st = '?';
	p = strstr(buf, "\nvoluntary_ctxt_switches:");
	*vol = p ? strtoull(p + 26, NULL, 10) : 0;
	return st;
}

static struct wthread *wfind(struct wtable *t, pid_t tid)
{
	struct wthread *v;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->v[i].tid == tid)
			return &t->v[i];
	v = vec__grow(t->v, &t->cap, t->n + 1, sizeof(*v), 64);
	if (!v)
		return NULL;
	t->v = v;
	memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
	t->v[t->n].tid = tid;
	return &t->v[t->n++];
}

/* One look at every thread of pid: *stopped if one is stopped (T),
 * *settled if every one is settled. Returns -1 when pid is gone. */
static int scan(pid_t pid, struct wtable *t, int *stopped, int *settled)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	*stopped = 0;
	*settled = 1;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1; /* gone */
	while ((de = readdir(d))) {
		unsigned long long vol = 0, run;
		struct wthread *w;
		char st;

		if (de->d_name[0] == '.')
			continue;
		/* On-CPU time first: if it grew, the state read after it is
		 * already past any stop the thread took. */
		run = run_ns(pid, de->d_name);
		st = thread_state(pid, de->d_name, &vol);
		if (!st)
			continue; /* exited meanwhile */
		if (st == 'T')
			*stopped = 1;
		w = wfind(t, (pid_t)atoi(de->d_name));
		if (!w) {
			*settled = 0; /* no memory: keep watching */
			continue;
		}
		if (st == 't' || w->settled)
			goto next; /* still its tracer's; or done */
		if (!w->seen) {
			w->seen = true;
			w->vol0 = vol;
			w->run0 = run;
			/* Sleeping (S) means it ran since its tracer let go of
			 * it; D may be a frozen thread (cgroup freezer) that has
			 * not: it settles by running, like R. */
			w->settled = st == 'S' || st == 'Z' || st == 'X';
		} else {
			w->settled = vol > w->vol0 || run >= w->run0 + SETTLE_RUN_NS;
		}
	next:
		if (!w->settled)
			*settled = 0;
	}
	closedir(d);
	return 0;
}

void watchdog__watch(pid_t pid)
{
	struct timespec tick = {0, 2000000};
	struct wtable t = {0};
	int i, stopped, settled;

	for (i = 0;; i++) {
		if (scan(pid, &t, &stopped, &settled) < 0)
			break;
		if (stopped)
			kill(pid, SIGCONT);
		else if (settled && i >= RESCUE_MS / 2)
			break;
		nanosleep(&tick, NULL);
	}
	free(t.v);
}

pid_t watchdog__fork_apart(const int *keep, size_t nkeep)
{
	int v[8], lo = 3, nul, st;
	size_t n = 0, i, j;
	pid_t c = fork();

	if (c < 0)
		return -errno;
	if (c) {
		while (waitpid(c, &st, 0) < 0 && errno == EINTR)
			;
		return c;
	}
	if (fork())
		_exit(0);
	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	nul = open("/dev/null", O_RDWR);
	for (i = 0; i < nkeep && keep[i] != 2; i++)
		;
	if (nul >= 0) {
		dup2(nul, 0);
		dup2(nul, 1);
		if (i == nkeep) /* stderr kept when asked for (the guard's tracer) */
			dup2(nul, 2);
		if (nul > 2)
			close(nul);
	}
	/* the kept ones in order, then every gap between them closed */
	for (i = 0; i < nkeep && n < sizeof(v) / sizeof(v[0]); i++) {
		if (keep[i] < 3)
			continue;
		for (j = n; j > 0 && v[j - 1] > keep[i]; j--)
			v[j] = v[j - 1];
		v[j] = keep[i];
		n++;
	}
	for (i = 0; i < n; i++) {
		if (v[i] > lo)
			close_range((unsigned)lo, (unsigned)v[i] - 1, 0);
		if (v[i] >= lo)
			lo = v[i] + 1;
	}
	close_range((unsigned)lo, ~0U, 0);
	return 0;
}

/* The watcher's life: wait for cabbpf's end, then rescue if it was not
 * clean. Never returns. */
static void watch(int rfd, pid_t pid)
{
	char c;
	ssize_t n;

	do
		n = read(rfd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		_exit(0); /* cabbpf let go cleanly */
	watchdog__watch(pid);
	_exit(0);
}

int watchdog__start(pid_t pid)
{
	int p[2], err;
	pid_t c;

	if (pipe2(p, O_CLOEXEC)) {
		err = -errno;
		log_err("--lossless watcher: pipe: %s", strerror(-err));
		return err;
	}
	c = watchdog__fork_apart(&p[0], 1);
	if (c < 0) {
		err = (int)c;
		close(p[0]);
		close(p[1]);
		log_err("--lossless watcher: fork: %s", strerror(-err));
		return err;
	}
	/* With no file of cabbpf's but the pipe: a link fd kept here would
	 * keep probes in the target after cabbpf's death. */
	if (!c)
		watch(p[0], pid);
	close(p[0]);
	return p[1];
}

void watchdog__done(int fd)
{
	char c = 'c';

	if (fd < 0)
		return;
	if (write(fd, &c, 1) != 1)
		log_debug("--lossless watcher: %s", strerror(errno));
	close(fd);
}
