// SPDX-License-Identifier: BSD-2-Clause
/*
 * The channel between cabbpf and the guard's tracer process: see
 * user/trace/guardian.h for the story, docs/guard.md for why the tracer
 * lives apart.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "user/trace/guardian.h"
#include "user/trace/watchdog.h"

/* How long cabbpf waits for the tracer's answer to a SET. */
#define ACK_WAIT_MS 10000

struct gmsg {
	uint32_t op;
	uint32_t nfds;
	int64_t val;
	uint32_t len; /* bytes of data after the header */
	uint32_t pad;
};

/* Offsets of one file in one GUARDIAN_SITES message. */
#define SITES_PER_MSG 4096

struct guardian {
	int sock; /* cabbpf's end */
	bool bye; /* the tracer said GUARDIAN_BYE */
};

/* One message: op, val, fds and len bytes of data. Returns 0 or -errno. */
static int send_data(int sock, uint32_t op, int64_t val, const int *fds, size_t nfds,
		     const void *data, size_t len, int flags)
{
	char cbuf[CMSG_SPACE(sizeof(int) * GUARDIAN_MSG_FDS)];
	struct gmsg m = {op, (uint32_t)nfds, val, (uint32_t)len, 0};
	struct iovec iov[2] = {{&m, sizeof(m)}, {(void *)data, len}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
	struct cmsghdr *c;
	ssize_t n;

	if (nfds > GUARDIAN_MSG_FDS || len > GUARDIAN_MSG_DATA)
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
		n = sendmsg(sock, &mh, MSG_NOSIGNAL | flags);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)(sizeof(m) + len) ? 0 : n < 0 ? -errno : -EIO;
}

static int send_msg(int sock, uint32_t op, int64_t val, const int *fds, size_t nfds, int flags)
{
	return send_data(sock, op, val, fds, nfds, NULL, 0, flags);
}

int guardian__send(int sock, uint32_t op, int64_t val)
{
	return send_msg(sock, op, val, NULL, 0, 0);
}

int guardian__recv(int sock, struct guardian_msg *m, bool wait)
{
	char cbuf[CMSG_SPACE(sizeof(int) * GUARDIAN_MSG_FDS)];
	struct gmsg g;
	struct iovec iov[2] = {{&g, sizeof(g)}, {m->data, sizeof(m->data)}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
	struct cmsghdr *c;
	size_t i;
	ssize_t n;

	m->nfds = 0;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | (wait ? 0 : MSG_DONTWAIT));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : 0;
	if (n == 0)
		return 0;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t got = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (i = 0; i < got && m->nfds < GUARDIAN_MSG_FDS; i++)
				memcpy(&m->fds[m->nfds++], CMSG_DATA(c) + i * sizeof(int),
				       sizeof(int));
		}
	/* A message cut short (descriptors beyond the limit dropped) is not
	 * the one sent: refused whole. */
	if (n < (ssize_t)sizeof(g) || n != (ssize_t)(sizeof(g) + g.len) || g.nfds != m->nfds ||
	    (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC))) {
		for (i = 0; i < m->nfds; i++)
			close(m->fds[i]);
		m->nfds = 0;
		return -EPROTO;
	}
	m->op = g.op;
	m->val = g.val;
	m->len = g.len;
	return (int)g.op;
}

int guardian__start(void (*tracer)(void *arg, const struct guardian_end *end), void *arg,
		    struct guardian **out)
{
	struct guardian_end e = {-1, -1, -1};
	struct guardian *gd;
	int sv[2] = {-1, -1}, err;
	const char *logp = getenv("CABBPF_GUARDIAN_LOG");
	pid_t c;

	*out = NULL;
	gd = calloc(1, sizeof(*gd));
	if (!gd)
		return -ENOMEM;
	gd->sock = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		err = -errno;
		goto cleanup;
	}
	e.sock = sv[1];
	e.cabbpf = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (e.cabbpf < 0) {
		err = -errno;
		goto cleanup;
	}
	/* A debugging aid for the tests and bench/guard_kill.sh: what the
	 * tracer did once cabbpf was gone, appended (never through a link). */
	if (logp && *logp)
		e.logfd = open(logp, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	{
		int keep[4] = {2, e.sock, e.cabbpf, e.logfd};

		c = watchdog__fork_apart(keep, e.logfd >= 0 ? 4 : 3);
	}
	if (c < 0) {
		err = (int)c;
		goto cleanup;
	}
	if (!c) {
		tracer(arg, &e);
		_exit(1); /* never reached */
	}
	if (e.logfd >= 0)
		close(e.logfd);
	close(sv[1]);
	close(e.cabbpf);
	gd->sock = sv[0];
	*out = gd;
	return 0;
cleanup:
	log_warn("cannot start the guard's tracer process (it lets go of the target should "
		 "cabbpf be killed): %s; the target is guarded while cabbpf lives",
		 strerror(-err));
	if (sv[0] >= 0) {
		close(sv[0]);
		close(sv[1]);
	}
	if (e.cabbpf >= 0)
		close(e.cabbpf);
	free(gd);
	return err;
}

/* The tracer's next word, waiting at most ms (-1: no limit). Returns its
 * op (val in *val), 0 at its end, -ETIMEDOUT or -EPROTO. */
static int word(struct guardian *gd, int ms, int64_t *val)
{
	struct guardian_msg *m = malloc(sizeof(*m));
	struct pollfd p = {gd->sock, POLLIN, 0};
	size_t i;
	int r;

	if (!m)
		return -ENOMEM;
	do
		r = poll(&p, 1, ms);
	while (r < 0 && errno == EINTR);
	if (r == 0) {
		free(m);
		return -ETIMEDOUT;
	}
	r = guardian__recv(gd->sock, m, true);
	for (i = 0; i < m->nfds; i++) /* the tracer sends none */
		close(m->fds[i]);
	if (r == GUARDIAN_BYE)
		gd->bye = true;
	*val = m->val;
	free(m);
	return r;
}

int guardian__seized(struct guardian *gd)
{
	int64_t v = 0;
	int r;

	if (!gd)
		return 0;
	r = word(gd, -1, &v);
	return r == GUARDIAN_SEIZED ? (int)v : -ECHILD;
}

int guardian__give_set(struct guardian *gd, const struct guardian_set *s)
{
	int fds[7] = {s->iter, s->reqs, s->guarded, s->exit_map, s->exit_prog, s->bss, s->throttled};
	int64_t v = 0;
	int err, r;

	if (!gd)
		return 0;
	err = send_msg(gd->sock, GUARDIAN_SET, s->bss_size, fds, s->throttled >= 0 ? 7 : 6, 0);
	if (err)
		return err == -EPIPE ? -ESRCH : err;
	r = word(gd, ACK_WAIT_MS, &v);
	if (r == GUARDIAN_ACK)
		return 0;
	return r < 0 ? r : -ESRCH; /* BYE or its end: the target ended */
}

int guardian__give_links(struct guardian *gd, const int *links, size_t n)
{
	size_t i, k;
	int err = 0;

	if (!gd)
		return 0;
	for (i = 0; !err && i < n; i += k) {
		k = n - i < GUARDIAN_MSG_FDS ? n - i : GUARDIAN_MSG_FDS;
		err = send_msg(gd->sock, GUARDIAN_LINKS, 0, links + i, k, 0);
	}
	if (err)
		log_debug("guard: handing the probe links to its tracer process: %s",
			  strerror(-err));
	return err;
}

int guardian__give_sites(struct guardian *gd, const char *path, const uint64_t *offs, size_t n)
{
	/* the path, NUL-padded to 8 bytes: the offsets after it aligned */
	size_t plen = (strlen(path) + 1 + 7) & ~(size_t)7, i, k;
	uint8_t *buf;
	int err = 0;

	if (!gd)
		return 0;
	if (plen > PATH_MAX_BYTES)
		return -ENAMETOOLONG;
	buf = calloc(1, GUARDIAN_MSG_DATA);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, path, strlen(path));
	for (i = 0; !err && i < n; i += k) {
		k = n - i < SITES_PER_MSG ? n - i : SITES_PER_MSG;
		memcpy(buf + plen, offs + i, k * sizeof(*offs));
		err = send_data(gd->sock, GUARDIAN_SITES, (int64_t)plen, NULL, 0, buf,
				plen + k * sizeof(*offs), 0);
	}
	free(buf);
	if (err)
		log_debug("guard: telling its tracer process of the probes in %s: %s", path,
			  strerror(-err));
	return err;
}

int guardian__parse_sites(const struct guardian_msg *m, const char **path, const uint64_t **offs,
			  size_t *n)
{
	size_t plen = (size_t)m->val;

	if (m->op != GUARDIAN_SITES || m->val <= 0 || plen > m->len || plen > PATH_MAX_BYTES ||
	    plen % sizeof(uint64_t) || m->data[plen - 1] || (m->len - plen) % sizeof(uint64_t))
		return -EPROTO;
	*path = (const char *)m->data;
	*offs = (const uint64_t *)(const void *)(m->data + plen);
	*n = (m->len - plen) / sizeof(uint64_t);
	return 0;
}

void guardian__nudge(struct guardian *gd)
{
	/* A full socket already holds a nudge: the state is shared anyway. */
	if (gd)
		(void)send_msg(gd->sock, GUARDIAN_NUDGE, 0, NULL, 0, MSG_DONTWAIT);
}

bool guardian__end(struct guardian *gd)
{
	int64_t v;
	bool bye;
	int r;

	if (!gd)
		return true;
	/* Its words until its end (the socket's end: its files are closed). */
	while ((r = word(gd, -1, &v)) != 0 && r != -ENOMEM)
		;
	bye = gd->bye;
	if (!bye)
		log_warn("the guard's tracer process ended without letting go of the target: "
			 "return addresses it held may stay replaced");
	close(gd->sock);
	free(gd);
	return bye;
}
