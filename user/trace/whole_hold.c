// SPDX-License-Identifier: BSD-2-Clause
/*
 * Whole-tree tracing's exec hold (whole.h): a process of the cgroup that
 * execs a program not looked at yet is stopped by the kernel at its exec,
 * before its first instruction (bpf/trace.bpf.c hold_at_exec, noted in the
 * map exec_held); here the loader looks at it (its image's probes put in,
 * its guard and arming, whole_proc.c), notes the image in exec_images so
 * that its next exec runs on, and lets it go with SIGCONT. A program that
 * lives a few milliseconds is thus traced from its start, whatever it
 * costs to read its symbols and attach its probes: that cost is each
 * held exec's added latency, measured here and said in the report.
 *
 * Should cabbpf die while a process is held, a releaser (a process apart,
 * user/trace/watchdog.h's watchdog__fork_apart, that keeps only the
 * exec_held map and a pipe) lets go of every process the map still holds
 * once cabbpf's end closes the pipe without a word; cabbpf's probes and
 * its exec program are gone by then with its files, so no new hold comes.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "common/log.h"
#include "user/trace/trace.h"
#include "user/trace/watchdog.h"
#include "user/trace/whole_int.h"

/* Whether pid is still the task that was held: its start time (clock
 * ticks since boot, /proc/PID/stat field 22) is the held task's
 * start_boottime. Async-signal-safe (the releaser calls it). */
static bool same_task(pid_t pid, uint64_t start_ns)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd, field, i = 0;

	/* "/proc/PID/stat" written by hand: no stdio in the releaser */
	memcpy(path, "/proc/", 6);
	{
		char d[16];
		int k = 0;
		unsigned u = (unsigned)pid;

		do
			d[k++] = (char)('0' + u % 10);
		while ((u /= 10) && k < 15);
		for (i = 6; k > 0; i++)
			path[i] = d[--k];
	}
	memcpy(path + i, "/stat", 6);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || hz <= 0)
		return false;
	buf[n] = 0;
	/* field 22, counted from after "(comm)" (field 2), whose name may
	 * hold spaces and parentheses */
	p = strrchr(buf, ')');
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return false;
	for (p++; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (unsigned long long)(*p - '0');
	return v == start_ns / (1000000000ull / (unsigned long long)hz);
}

/* Let the held pid go: SIGCONT if it is still the task held, and its
 * entry out of the map. Async-signal-safe. */
static void release(int fd, uint32_t pid, const struct cabbpf_exec_held *h)
{
	if (same_task((pid_t)pid, h->start_ns))
		kill((pid_t)pid, SIGCONT);
	bpf_map_delete_elem(fd, &pid);
}

/* The next held pid after *key (first: key NULL) into *next with its
 * entry; false at the end. */
static bool next_held(int fd, const uint32_t *key, uint32_t *next, struct cabbpf_exec_held *h)
{
	while (!bpf_map_get_next_key(fd, key, next)) {
		if (!bpf_map_lookup_elem(fd, next, h))
			return true;
		key = next; /* gone meanwhile: the one after it */
	}
	return false;
}

/* The releaser's life: wait for cabbpf's word or its end; on its end let
 * go of every process still held. Async-signal-safe; never returns. */
static void releaser(int rd, int fd)
{
	struct pollfd pf = {.fd = rd, .events = POLLIN};
	struct cabbpf_exec_held h;
	uint32_t key, next;
	ssize_t n;
	char c;

	do
		n = poll(&pf, 1, -1);
	while (n < 0 && errno == EINTR);
	n = read(rd, &c, 1);
	if (n == 1)
		_exit(0); /* a clean end: cabbpf let go of them all */
	/* A pid is taken out as it is let go, so the walk restarts from the
	 * first key each time. */
	for (int i = 0; i < 65536 && next_held(fd, NULL, &next, &h); i++) {
		key = next;
		release(fd, key, &h);
	}
	_exit(0);
}

int whole_hold__start(struct whole *w)
{
	int fds[2], keep[2], held = trace__map_fd(w->tr, "exec_held");
	pid_t pid;

	w->hold_wr = -1;
	if (held < 0)
		return 0; /* an object without the hold: nothing held */
	if (pipe2(fds, O_CLOEXEC)) {
		log_err("exec hold: its releaser's pipe: %s", strerror(errno));
		return -errno;
	}
	keep[0] = fds[0];
	keep[1] = held;
	pid = watchdog__fork_apart(keep, 2);
	if (pid == 0) {
		releaser(fds[0], held);
		_exit(0);
	}
	close(fds[0]);
	if (pid < 0) {
		close(fds[1]);
		log_err("exec hold: starting its releaser: %s", strerror((int)-pid));
		return (int)pid;
	}
	w->hold_wr = fds[1];
	return 0;
}

/* p, held since h->ts, looked at (if no look came since its exec) and
 * let go; the held time counted. */
static void serve(struct whole *w, int fd, uint32_t pid, const struct cabbpf_exec_held *h)
{
	uint8_t how = CABBPF_IMG_KNOWN;
	struct wproc *p;
	struct timespec ts;
	uint64_t now;
	bool created;

	p = whole_proc__get(w, (pid_t)pid, WHOLE_NEW, &created);
	if (p && !(p->looked && p->look_ns > h->ts)) {
		p->held_exec = true;
		(void)whole_proc__look_at(w, p); /* out of memory: let go untraced */
		p->held_exec = false;
	}
	/* Its program is known now: the next exec of it runs on, armed
	 * there by the kernel if it needs no guard; one that needs its guard
	 * is held at each exec until the guard holds it. (A full map: held
	 * again, looked at again, cheaply.) */
	if (p && p->img && p->img->nfids && p->pub.armed && !p->pub.guarded)
		how |= CABBPF_IMG_ARM;
	if (!p || !p->pub.guarded)
		(void)bpf_map_update_elem(w->images_fd, &h->img, &how, BPF_ANY);
	if (p)
		whole__key_note(w, h->img.dev, h->img.ino, p);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	release(fd, pid, h);
	if (now > h->ts) {
		w->hold.n++;
		w->hold.sum_ns += now - h->ts;
		if (now - h->ts > w->hold.max_ns)
			w->hold.max_ns = now - h->ts;
		if (p)
			p->pub.held_ns += now - h->ts;
	}
}

bool whole_hold__held(struct whole *w, pid_t pid)
{
	int fd = w->tr ? trace__map_fd(w->tr, "exec_held") : -1;
	struct cabbpf_exec_held h;
	uint32_t key = (uint32_t)pid;

	return fd >= 0 && !bpf_map_lookup_elem(fd, &key, &h);
}

void whole_hold__sweep(struct whole *w)
{
	int fd = trace__map_fd(w->tr, "exec_held");
	struct cabbpf_exec_held h;
	uint32_t next;
	int i;

	/* Tests only: nobody is let go while cabbpf runs, so that its
	 * releaser is tested when cabbpf is killed (test_integration). */
	if (fd < 0 || getenv("CABBPF_TEST_HOLD_FOREVER"))
		return;
	w->images_fd = trace__map_fd(w->tr, "exec_images");
	/* each served pid leaves the map: restart from its first key */
	for (i = 0; i < 4096 && next_held(fd, NULL, &next, &h); i++)
		serve(w, fd, next, &h);
}

void whole_hold__end(struct whole *w)
{
	struct cabbpf_exec_held h;
	uint32_t next;
	int fd = w->tr ? trace__map_fd(w->tr, "exec_held") : -1;
	int i;

	/* the gate is closed: no new hold; whoever is held goes on */
	for (i = 0; fd >= 0 && i < 65536 && next_held(fd, NULL, &next, &h); i++)
		release(fd, next, &h);
	watchdog__done(w->hold_wr);
	w->hold_wr = -1;
}

