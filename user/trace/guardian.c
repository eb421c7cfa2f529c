// SPDX-License-Identifier: BSD-2-Clause
/*
 * The guardian: see user/trace/guardian.h for the story, docs/guard.md for
 * why its rescue is safe. One half runs in cabbpf (start, give, serving,
 * done), the other in the guardian process (keep, wait, rescue).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "user/trace/guard.h"
#include "user/trace/guardian.h"
#include "user/trace/watchdog.h"

/* Descriptors in one message: below the kernel's SCM_MAX_FD (253). */
#define MSG_FDS 200
/* How long a dead cabbpf may take to be gone (its probes with it) before
 * the rescue goes ahead anyway: a process in D state in the kernel. */
#define GONE_WAIT_MS 60000
/* How long a clean end waits for the guardian to close its copies. */
#define DONE_WAIT_MS 2000

enum gmsg_op {
	GMSG_CORE = 1,	/* iter, reqs, guarded[, throttled]: a new set */
	GMSG_LINKS = 2, /* more links of the current set */
	GMSG_DONE = 3,	/* cabbpf let go cleanly */
};

struct gmsg {
	uint32_t op;
	uint32_t nfds;
};

struct guardian {
	int sock;		  /* cabbpf's end of the socket */
	_Atomic int32_t *serving; /* shared with the guardian: guardian__serving */
};

/* ---- in the guardian -------------------------------------------------- */

/* What the guardian holds: one set of guardian_fds, links growing. */
struct kept {
	struct guardian_fds f;
	int *links;
	size_t nlinks, cap;
};

static void kept_close(struct kept *k)
{
	size_t i;

	if (k->f.iter >= 0)
		close(k->f.iter);
	if (k->f.reqs >= 0)
		close(k->f.reqs);
	if (k->f.guarded >= 0)
		close(k->f.guarded);
	if (k->f.throttled >= 0)
		close(k->f.throttled);
	for (i = 0; i < k->nlinks; i++)
		close(k->links[i]);
	k->nlinks = 0;
	k->f.iter = k->f.reqs = k->f.guarded = k->f.throttled = -1;
}

/* One message from cabbpf into k. Returns its op, 0 at the socket's end
 * (cabbpf gone without a word), -1 on a message that makes no sense. */
static int receive(int sock, struct kept *k)
{
	char cbuf[CMSG_SPACE(sizeof(int) * MSG_FDS)];
	struct gmsg m;
	struct iovec iov = {&m, sizeof(m)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;
	int fds[MSG_FDS];
	size_t nfds = 0, i;
	ssize_t n;

	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return 0;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t got = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (i = 0; i < got && nfds < MSG_FDS; i++)
				memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
		}
	if (n != (ssize_t)sizeof(m) || m.nfds != nfds) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		return -1;
	}
	if (m.op == GMSG_CORE) {
		kept_close(k);
		if (nfds < 3 || nfds > 4)
			goto bad;
		k->f.iter = fds[0];
		k->f.reqs = fds[1];
		k->f.guarded = fds[2];
		k->f.throttled = nfds == 4 ? fds[3] : -1;
		return GMSG_CORE;
	}
	if (m.op == GMSG_LINKS) {
		if (k->nlinks + nfds > k->cap) {
			size_t cap = (k->nlinks + nfds) * 2;
			int *v = realloc(k->links, cap * sizeof(*v));

			if (!v)
				goto bad;
			k->links = v;
			k->cap = cap;
		}
		memcpy(k->links + k->nlinks, fds, nfds * sizeof(int));
		k->nlinks += nfds;
		return GMSG_LINKS;
	}
	if (m.op == GMSG_DONE && !nfds)
		return GMSG_DONE;
bad:
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	return -1;
}

/* The rescue, in a process of its own so that its ptrace attachments are
 * gone (its exit) before the target is continued. Returns whether a stop
 * of ours was left in the target. logfd: CABBPF_GUARDIAN_LOG's, or -1. */
static bool rescue(pid_t pid, struct kept *k, pid_t serving, int logfd)
{
	int st = 0;
	pid_t c = fork(), w;

	if (c < 0)
		return true; /* nothing written back: at least do not leave it stopped */
	if (!c) {
		struct guard_stats gs;
		bool cont = true;
		int err;

		memset(&gs, 0, sizeof(gs));
		err = guard__rescue(pid, &k->f, serving, &cont, &gs);
		if (err)
			cont = true;
		if (logfd >= 0)
			dprintf(logfd,
				"guardian: pid %d: rescue %s, %u threads, %llu return addresses "
				"given back, %llu threads that did not stop, serving %d, %s; "
				"trampolines left %llu, 100 ms later %llu\n",
				(int)pid, err ? strerror(-err) : "done", gs.rescued_threads,
				(unsigned long long)gs.at_detach,
				(unsigned long long)gs.detach_left, (int)serving,
				cont ? "continued" : "not continued",
				(unsigned long long)gs.rescue_left,
				(unsigned long long)gs.rescue_later);
		_exit(cont ? 2 : 0);
	}
	while ((w = waitpid(c, &st, 0)) < 0 && errno == EINTR)
		;
	return w != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

/* The guardian's life. Never returns. */
static void guardian_main(int sock, int pidfd, int logfd, pid_t pid, _Atomic int32_t *serving)
{
	struct kept k = {.f = {-1, -1, -1, -1, NULL, 0}};
	struct pollfd p = {pidfd, POLLIN, 0};
	int op;

	while ((op = receive(sock, &k)) != 0)
		if (op == GMSG_DONE) {
			kept_close(&k);
			_exit(0); /* the socket's end tells cabbpf */
		}
	if (k.f.iter < 0)
		_exit(0); /* no probe of the guard was ever placed */
	/* cabbpf died: its probes go with its last reference, once its
	 * process has ended (its files are closed before it becomes a
	 * zombie, which is when a pidfd reads as ready). */
	while (poll(&p, 1, GONE_WAIT_MS) < 0 && errno == EINTR)
		;
	if (rescue(pid, &k, (pid_t)atomic_load(serving), logfd))
		kill(pid, SIGCONT);
	/* --lossless: a thread the rescue could not stop (frozen: a paused
	 * container's) may still take a SIGSTOP of ours when it runs again;
	 * continued then, as the watcher of a guard-less run does. */
	if (k.f.throttled >= 0)
		watchdog__watch(pid);
	_exit(0);
}

/* ---- in cabbpf ---------------------------------------------------------- */

int guardian__start(pid_t pid, struct guardian **out)
{
	struct guardian *gd;
	int sv[2] = {-1, -1}, pidfd = -1, logfd = -1, err;
	const char *logp = getenv("CABBPF_GUARDIAN_LOG");
	pid_t c;

	*out = NULL;
	gd = calloc(1, sizeof(*gd));
	if (!gd)
		return -ENOMEM;
	gd->sock = -1;
	gd->serving = mmap(NULL, sizeof(*gd->serving), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (gd->serving == MAP_FAILED) {
		gd->serving = NULL;
		err = -errno;
		goto cleanup;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		err = -errno;
		goto cleanup;
	}
	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (pidfd < 0) {
		err = -errno;
		goto cleanup;
	}
	/* A debugging aid for the tests and bench/guard_kill.sh: what a
	 * rescue did, appended (never through a link). */
	if (logp && *logp)
		logfd = open(logp, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	/* Apart from cabbpf (watchdog__fork_apart), holding no file of
	 * cabbpf's but the socket, the pidfd and the log. */
	{
		int keep[3] = {sv[1], pidfd, logfd};

		c = watchdog__fork_apart(keep, logfd >= 0 ? 3 : 2);
	}
	if (c < 0) {
		err = (int)c;
		goto cleanup;
	}
	if (!c)
		guardian_main(sv[1], pidfd, logfd, pid, gd->serving);
	if (logfd >= 0)
		close(logfd);
	close(sv[1]);
	close(pidfd);
	gd->sock = sv[0];
	*out = gd;
	return 0;
cleanup:
	log_warn("cannot start the guardian that lets go of pid %d should cabbpf be killed: %s",
		 (int)pid, strerror(-err));
	if (sv[0] >= 0) {
		close(sv[0]);
		close(sv[1]);
	}
	if (pidfd >= 0)
		close(pidfd);
	if (gd->serving)
		munmap(gd->serving, sizeof(*gd->serving));
	free(gd);
	return err;
}

/* One message: op and fds. Returns 0 or -errno. */
static int send_fds(int sock, uint32_t op, const int *fds, size_t nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * MSG_FDS)];
	struct gmsg m = {op, (uint32_t)nfds};
	struct iovec iov = {&m, sizeof(m)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;
	ssize_t n;

	if (nfds > MSG_FDS)
		return -EINVAL;
	memset(cbuf, 0, sizeof(cbuf));
	if (nfds) {
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(m) ? 0 : n < 0 ? -errno : -EIO;
}

int guardian__give(struct guardian *gd, const struct guardian_fds *f)
{
	int core[4] = {f->iter, f->reqs, f->guarded, f->throttled}, err;
	size_t i, n;

	if (!gd)
		return 0;
	err = send_fds(gd->sock, GMSG_CORE, core, f->throttled >= 0 ? 4 : 3);
	for (i = 0; !err && i < f->nlinks; i += n) {
		n = f->nlinks - i < MSG_FDS ? f->nlinks - i : MSG_FDS;
		err = send_fds(gd->sock, GMSG_LINKS, f->links + i, n);
	}
	if (err)
		log_debug("guardian: handing over the guard's descriptors: %s", strerror(-err));
	return err;
}

void guardian__serving(struct guardian *gd, pid_t tid)
{
	if (gd)
		atomic_store(gd->serving, (int32_t)tid);
}

void guardian__done(struct guardian *gd)
{
	struct pollfd p;
	char c;

	if (!gd)
		return;
	p.fd = gd->sock;
	p.events = POLLIN;
	if (!send_fds(gd->sock, GMSG_DONE, NULL, 0)) {
		/* Its end comes once it closed its copies. */
		while (poll(&p, 1, DONE_WAIT_MS) < 0 && errno == EINTR)
			;
		if (p.revents & (POLLIN | POLLHUP))
			(void)!read(gd->sock, &c, 1);
	}
	close(gd->sock);
	munmap(gd->serving, sizeof(*gd->serving));
	free(gd);
}
