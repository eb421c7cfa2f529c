// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

#include "user/probe/probe_sites.h"
#include "user/probe/uprobe_multi.h"

/* The part of union bpf_attr used by BPF_LINK_CREATE for uprobe_multi, as in
 * the kernel's uapi since 6.6 (Debian 12's headers are older). */
struct link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t um_flags;
	uint32_t pid;
};

int uprobe_multi__attach(int prog_fd, const char *path, const uint64_t *offsets,
			 const uint64_t *cookies, uint32_t cnt, int retprobe, pid_t pid)
{
	union {
		union bpf_attr attr; /* the kernel wants the whole union's size */
		struct link_create_uprobe_multi lc;
		char pad[256];
	} u;
	long fd;

	memset(&u, 0, sizeof(u));
	u.lc.prog_fd = (uint32_t)prog_fd;
	u.lc.attach_type = retprobe == UPROBE_MULTI_SESSION ? UPROBE_SESSION_ATTACH_TYPE
							    : UPROBE_MULTI_ATTACH_TYPE;
	u.lc.path = (uint64_t)(uintptr_t)path;
	u.lc.offsets = (uint64_t)(uintptr_t)offsets;
	u.lc.cookies = (uint64_t)(uintptr_t)cookies;
	u.lc.cnt = cnt;
	u.lc.um_flags = retprobe == UPROBE_MULTI_RETURN ? 1 /* BPF_F_UPROBE_MULTI_RETURN */ : 0;
	u.lc.pid = pid > 0 ? (uint32_t)pid : 0;
	/* A child the process forks inherits these breakpoints (sites.h);
	 * without the record, the guard cannot take them out of it. Recorded
	 * before they exist, so that whoever must know (a guard's tracer
	 * process) knows before a fork can inherit them; a record of a site
	 * never placed is harmless (nothing to take out there). */
	if (pid > 0) {
		int err = probe_sites__add(path, offsets, cnt);

		if (err)
			return err;
	}
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &u.attr, sizeof(u.attr));
	if (fd < 0)
		return -errno;
	return (int)fd;
}

struct split {
	int prog_fd;
	const char *path;
	int retprobe;
	pid_t pid;
	int *fds;
	uint32_t nfds, cap;
	int first_err; /* error of the first single site that failed */
};

/* Attaches [0, cnt) of the arrays, splitting on failure (see the header).
 * Returns 0, -ENOMEM or -ESRCH (no such process); refusals are recorded,
 * not returned. */
static int split_attach(struct split *sp, const uint64_t *offsets, const uint64_t *cookies,
			uint32_t cnt, bool *refused)
{
	uint32_t half;
	int fd, err;

	fd = uprobe_multi__attach(sp->prog_fd, sp->path, offsets, cookies, cnt, sp->retprobe,
				  sp->pid);
	if (fd >= 0) {
		if (sp->nfds == sp->cap) {
			uint32_t nc = sp->cap ? sp->cap * 2 : 8;
			int *n = realloc(sp->fds, nc * sizeof(*n));

			if (!n) {
				close(fd);
				return -ENOMEM;
			}
			sp->fds = n;
			sp->cap = nc;
		}
		sp->fds[sp->nfds++] = fd;
		return 0;
	}
	/* Out of memory, or the process is gone (it exited while we
	 * attached): no split would do better. */
	if (fd == -ENOMEM || fd == -ESRCH)
		return fd;
	if (cnt == 1) {
		refused[0] = true;
		if (!sp->first_err)
			sp->first_err = fd;
		return 0;
	}
	half = cnt / 2;
	err = split_attach(sp, offsets, cookies, half, refused);
	if (!err)
		err = split_attach(sp, offsets + half, cookies + half, cnt - half, refused + half);
	return err;
}

int uprobe_multi__attach_all(int prog_fd, const char *path, const uint64_t *offsets,
			     const uint64_t *cookies, uint32_t cnt, int retprobe, pid_t pid,
			     int **fds, uint32_t *nfds, bool *refused)
{
	struct split sp = {prog_fd, path, retprobe, pid, *fds, *nfds, *nfds, 0};
	uint32_t i;
	int err;

	if (!cnt)
		return -EINVAL;
	err = split_attach(&sp, offsets, cookies, cnt, refused);
	if (!err && sp.nfds == *nfds)
		err = sp.first_err ? sp.first_err : -EINVAL;
	if (err) {
		for (i = *nfds; i < sp.nfds; i++)
			close(sp.fds[i]);
		if (sp.fds != *fds) /* moved by realloc: the old one is gone */
			*fds = sp.fds;
		return err;
	}
	*fds = sp.fds;
	*nfds = sp.nfds;
	return 0;
}
