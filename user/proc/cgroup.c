// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>

#include "common/log.h"
#include "user/proc/cgroup.h"
#include "user/proc/container.h"

int cgroup__open(const char *path)
{
	struct statfs sfs;
	struct stat st;
	int fd;

	if (stat(path, &st)) {
		int err = -errno;

		log_err("--cgroup %s: %s", path,
			err == -ENOENT ? "no such cgroup directory" : strerror(-err));
		return err;
	}
	if (!S_ISDIR(st.st_mode)) {
		log_err("--cgroup %s: not a directory (give a cgroup v2 directory, e.g. "
			"/sys/fs/cgroup/unified/NAME)",
			path);
		return -ENOTDIR;
	}
	if (statfs(path, &sfs) || (unsigned long)sfs.f_type != CGROUP2_SUPER_MAGIC) {
		log_err("--cgroup %s: not a cgroup v2 directory (cgroup v2 is mounted where "
			"`mount -t cgroup2` shows it, e.g. /sys/fs/cgroup/unified)",
			path);
		return -EMEDIUMTYPE;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		log_err("--cgroup %s: %s", path, strerror(-err));
		return err;
	}
	return fd;
}

int cgroup__select(const char *cgroup, const char *container, int *fd, char *path, size_t len)
{
	char root[4096];
	int err;

	*fd = -1;
	if (!cgroup && !container)
		return 0;
	if (container) {
		err = cgroup__v2_root(root, sizeof(root));
		if (err) {
			log_err("--container %s: cgroup v2 is not mounted (mount -t cgroup2 none "
				"/sys/fs/cgroup/unified)",
				container);
			return err;
		}
		err = container__resolve(root, container, path, len);
		switch (err) {
		case 0:
			break;
		case -EINVAL:
			log_err("--container %s: not a container id (4 to 64 hex digits)",
				container);
			return err;
		case -ENOENT:
			log_err("--container %s: no such container: no cgroup under %s is named "
				"after it (docker-ID.scope, cri-containerd-ID.scope, "
				"crio-ID.scope, "
				"libpod-ID.scope, docker/ID, kubepods/.../ID)",
				container, root);
			return err;
		case -ENOTUNIQ:
			log_err("--container %s: the prefix matches several containers; give more "
				"of the id",
				container);
			return err;
		default:
			log_err("--container %s: %s", container, strerror(-err));
			return err;
		}
		log_info("container %s is cgroup %s", container, path);
	} else {
		if (strlen(cgroup) >= len) {
			log_err("--cgroup %s: %s", cgroup, strerror(ENAMETOOLONG));
			return -ENAMETOOLONG;
		}
		strcpy(path, cgroup);
	}
	err = cgroup__open(path);
	if (err < 0)
		return err;
	*fd = err;
	return 0;
}

int cgroup__set_filter(int cgfilter_fd, int cgfd)
{
	__u32 key = 0;

	if (cgfilter_fd < 0 || bpf_map_update_elem(cgfilter_fd, &key, &cgfd, BPF_ANY)) {
		int err = cgfilter_fd < 0 ? -ENOENT : -errno;

		log_err("setting the cgroup filter: %s", strerror(-err));
		return err;
	}
	return 0;
}

int cgroup__enter(const char *path, pid_t pid)
{
	char procs[4200];
	FILE *f;
	int err = 0;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	f = fopen(procs, "w");
	if (!f || fprintf(f, "%d\n", (int)pid) < 0)
		err = -errno;
	if (f && fclose(f) && !err)
		err = -errno;
	if (err)
		log_err("moving pid %d into cgroup %s: %s", (int)pid, path, strerror(-err));
	return err;
}
