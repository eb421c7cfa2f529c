// SPDX-License-Identifier: BSD-2-Clause
/*
 * The trace's probes taken out: link sets closed, in the background
 * where closing them is slow (a link's close waits for the kernel's RCU
 * grace periods), and whole groups detached. trace_int.h lists the
 * trace's files.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "user/proc/procfs.h"
#include "trace.skel.h"
#include "user/trace/cpuclock.h"
#include "user/trace/trace_int.h"

static void close_kind(struct link_set *ls, unsigned kind)
{
	uint32_t k;

	for (k = 0; k < ls->nmfd[kind]; k++)
		close(ls->mfd[kind][k]);
	free(ls->mfd[kind]);
	ls->mfd[kind] = NULL;
	for (k = kind; k < ls->nlinks; k += 2)
		bpf_link__destroy(ls->links[k]);
}

static void *close_returns_main(void *arg)
{
	close_kind(arg, 1);
	return NULL;
}

/* Close a set's links, its returns in a thread of their own while this
 * one closes its entries. Closing a link takes out its probes at once,
 * then waits for the kernel's grace periods (docs/figures.md); a site's
 * breakpoint leaves the target when its last probe does, so entries and
 * returns closed one after the other would leave it in for a grace period
 * after the returns went (a target hitting it pays for nothing). The gate
 * is closed first (every caller closes it: trace__detach, the pauses, the
 * groups' gate), so no event comes from either meanwhile, in whatever
 * order they go. Frees the set's arrays. */
static void close_links(struct link_set *ls)
{
	pthread_attr_t at;
	pthread_t th;
	bool two;

	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, CLOSER_STACK);
	two = ls->nmfd[1] && !pthread_create(&th, &at, close_returns_main, ls);
	pthread_attr_destroy(&at);
	if (!two)
		close_kind(ls, 1);
	close_kind(ls, 0);
	if (two)
		pthread_join(th, NULL);
	free(ls->links);
	memset(ls, 0, sizeof(*ls));
}

/* Move group g's probe links into *ls (t has none of them after). */
static void take_links(struct trace *t, unsigned g, struct link_set *ls)
{
	*ls = t->sets[g];
	memset(&t->sets[g], 0, sizeof(t->sets[g]));
}

static void *closer_main(void *arg)
{
	struct closer *c = arg;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	close_links(&c->ls);
	clock_gettime(CLOCK_MONOTONIC, &b);
	c->ns = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ULL + (uint64_t)b.tv_nsec -
		(uint64_t)a.tv_nsec;
	log_debug("sampling: the last window's probes released in %.3f ms", (double)c->ns / 1e6);
	return NULL;
}

/* Forget closer i, joined. */
static void drop_closer(struct trace *t, uint32_t i)
{
	free(t->closers[i]);
	memmove(t->closers + i, t->closers + i + 1, (--t->nclosers - i) * sizeof(*t->closers));
}

/* Join the oldest closer (its links are gone after). */
static void join_oldest(struct trace *t)
{
	pthread_join(t->closers[0]->th, NULL);
	drop_closer(t, 0);
}

/* Wait until every closer is done. */
void trace_detach__join_closers(struct trace *t)
{
	while (t->nclosers)
		join_oldest(t);
}

/* Join every closer that is done, without waiting. */
static void reap_closers(struct trace *t)
{
	uint32_t i = 0;

	while (i < t->nclosers)
		if (pthread_tryjoin_np(t->closers[i]->th, NULL))
			i++;
		else
			drop_closer(t, i);
}

/* Take group g's links out and hand them to a closer thread: the
 * breakpoints go at once, the kernel's release goes on in that thread
 * (it can last as long as the target: see trace__attach_group). */
void trace_detach__group_async(struct trace *t, unsigned g)
{
	struct closer *c;
	pthread_attr_t at;
	int err;

	if (!t->sets[g].nmfd[0] && !t->sets[g].nmfd[1] && !t->sets[g].nlinks)
		return;
	reap_closers(t); /* forget those that are done */
	if (t->nclosers == t->capclosers) {
		uint32_t cap = t->capclosers ? t->capclosers * 2 : 16;
		struct closer **v = realloc(t->closers, cap * sizeof(*v));

		if (!v)
			join_oldest(t);
		else
			t->closers = v, t->capclosers = cap;
	}
	c = t->nclosers < t->capclosers ? calloc(1, sizeof(*c)) : NULL;
	if (!c) {
		struct link_set ls;

		take_links(t, g, &ls);
		close_links(&ls); /* no memory: wait here */
		return;
	}
	take_links(t, g, &c->ls);
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, CLOSER_STACK);
	err = pthread_create(&c->th, &at, closer_main, c);
	pthread_attr_destroy(&at);
	if (err) {
		close_links(&c->ls); /* no thread: wait here */
		free(c);
		return;
	}
	t->closers[t->nclosers++] = c;
}

uint32_t trace__closing(struct trace *t)
{
	reap_closers(t);
	return t->nclosers;
}

/* Remove the probe links (not the exec tracepoint), waiting until they are
 * gone. */
static void detach_probes(struct trace *t)
{
	unsigned g;

	/* Every group's links go out first, each in a closer of its own,
	 * and only then are the closers waited for: a release waits for
	 * return probes pending in long-lived frames, whose kernel lease
	 * expires only 100 ms after the thread's last return probe fired
	 * (trace__attach_group), which a group still in would keep firing. */
	for (g = 0; g < CABBPF_NGROUPS; g++)
		trace_detach__group_async(t, g);
	trace_detach__join_closers(t);
}

/*
 * Per-site links of a target that has ended, handed to a process of their
 * own that closes them one by one: cabbpf returns at once instead of after
 * a grace period a link (minutes for a few thousand: docs/figures.md). Only when nothing
 * can hit them: the links are bound to the target's pid (the kernel puts
 * their breakpoints into its mm only), and the target is gone (or a
 * zombie: no mm left). Whoever drops a kernel object's last reference pays
 * for its release, so the process, a grandchild (no zombie of ours, in a
 * session of its own), keeps a copy of every BPF and perf descriptor of
 * cabbpf's (anon inodes; libbpf keeps a perf link's event descriptor to
 * itself), closes everything else (a pipe reading cabbpf's output ends
 * when cabbpf does), waits for cabbpf to exit (a pipe's end cabbpf holds)
 * and only then closes them. Returns true when the links are the
 * grandchild's (ls's entries are then NULL: closed here without libbpf's
 * detach, which would take each breakpoint out first, the slow part),
 * false when they must be closed here.
 */
static bool release_in_background(struct trace *t, struct link_set *ls)
{
	long max = sysconf(_SC_OPEN_MAX);
	char path[64], target[64];
	int status = 0, fd, gate[2] = {-1, -1};
	struct dirent *de;
	pid_t child, r;
	bool *keep, done;
	uint32_t k;
	DIR *d;

	if (t->o.pid <= 0 || !procfs__gone(t->o.pid))
		return false;
	if (max <= 0 || max > (1 << 20))
		max = 1 << 20;
	/* what the grandchild keeps: decided here, since after fork only
	 * async-signal-safe calls may run (cabbpf has threads) */
	keep = calloc((size_t)max, sizeof(*keep));
	d = opendir("/proc/self/fd");
	if (!keep || !d || pipe2(gate, O_CLOEXEC)) {
		free(keep);
		if (d)
			closedir(d);
		return false;
	}
	while ((de = readdir(d))) {
		ssize_t n;

		fd = atoi(de->d_name);
		if (de->d_name[0] < '0' || de->d_name[0] > '9' || fd >= max || fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		keep[fd] = n > 11 && !strncmp(target, "anon_inode:", 11);
	}
	closedir(d);
	keep[gate[0]] = true;
	child = fork();
	if (child < 0) {
		free(keep);
		close(gate[0]);
		close(gate[1]);
		return false;
	}
	if (!child) {
		char c;

		if (fork())
			_exit(0); /* the grandchild's failure is only the waiting's */
		setsid();
		for (fd = 0; fd < max; fd++)
			if (!keep[fd])
				close(fd);
		/* until cabbpf's last copy of the gate's write end goes */
		while (read(gate[0], &c, 1) < 0 && errno == EINTR)
			;
		/* each last close waits for the kernel's grace periods */
		for (fd = 0; fd < max; fd++)
			if (keep[fd])
				close(fd);
		_exit(0);
	}
	free(keep);
	close(gate[0]);
	/* gate[1] stays open (close-on-exec) until cabbpf ends */
	while ((r = waitpid(child, &status, 0)) < 0 && errno == EINTR)
		;
	/* Reaped by another waiter (the guard's tracer takes the children of
	 * the process it holds: not this one, but be safe) or exited 0. */
	done = r < 0 ? errno == ECHILD : WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!done) {
		close(gate[1]);
		return false;
	}
	for (k = 0; k < ls->nlinks; k++)
		if (ls->links[k]) {
			bpf_link__disconnect(ls->links[k]);
			close(bpf_link__fd(ls->links[k]));
			bpf_link__destroy(ls->links[k]);
			ls->links[k] = NULL;
		}
	return true;
}

/* The empty slots of a per-site set (functions without a return link). */
static uint32_t count_null(const struct link_set *ls)
{
	uint32_t k, n = 0;

	for (k = 0; k < ls->nlinks; k++)
		n += !ls->links[k];
	return n;
}

void trace__detach(struct trace *t)
{
	if (!t)
		return;
	/* Nothing is emitted while the links go, in whatever order. */
	if (t->skel)
		trace__gate(t, false);
	bpf_link__destroy(t->exec_link);
	t->exec_link = NULL;
	bpf_link__destroy(t->exit_link);
	t->exit_link = NULL;
	bpf_link__destroy(t->fork_link);
	t->fork_link = NULL;
	bpf_link__destroy(t->switch_link);
	t->switch_link = NULL;
	cpuclock__free(t->cpu_samples);
	t->cpu_samples = NULL;
	/* Per-site links close one by one, each waiting for the kernel's
	 * grace periods under a lock of its (from any number of threads
	 * alike; docs/figures.md): say so when it will take a while. */
	if (!t->multi && t->sets[0].nlinks > 40) {
		uint32_t n = t->sets[0].nlinks - count_null(&t->sets[0]);

		if (release_in_background(t, &t->sets[0]))
			log_info("%u probe links handed to a process that removes them one by one "
				 "(no multi-uprobe links on this kernel: about %.0f s; the target "
				 "has ended, nothing can hit them)",
				 n, 0.1 * n);
		else
			log_info("removing %u probe links one by one (no multi-uprobe links on "
				 "this kernel): about %.0f s",
				 n, 0.1 * n);
	}
	detach_probes(t);
	t->paused = false;
	t->detached = true;
}


void trace__detach_group(struct trace *t, unsigned g)
{
	if (!t->o.groups || g >= CABBPF_NGROUPS)
		return;
	trace_detach__group_async(t, g);
}
