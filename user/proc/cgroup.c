// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
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
#include "user/proc/ctnames.h"
#include "user/proc/procfs.h"

int cgroup__v2_root(char *buf, size_t len)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int err = -ENOENT;

	if (!f)
		return -errno;
	/* "36 25 0:31 / /sys/fs/cgroup/unified rw,... - cgroup2 cgroup2 rw" */
	while (fgets(line, sizeof(line), f)) {
		char mnt[2048], fstype[64];
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(sep, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2"))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %2047s", mnt) != 1)
			continue;
		if (strlen(mnt) >= len) {
			err = -ENAMETOOLONG;
			break;
		}
		strcpy(buf, mnt);
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

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

/* --container ARG: an id (or unique prefix) first, then a podman or docker
 * container name; its cgroup's path into path. Logs every failure. */
static int resolve_container(const char *root, const char *arg, char *path, size_t len)
{
	char id[CONTAINER_ID_LEN + 1];
	const char *rt = NULL;
	int err, nerr;

	err = container__resolve(root, arg, path, len);
	if (err == -EINVAL || err == -ENOENT) {
		/* Not an id we know: maybe a name (which may look like hex). */
		nerr = ctnames__lookup(ctnames__default(), arg, id, &rt);
		if (!nerr) {
			err = container__resolve(root, id, path, len);
			if (!err) {
				log_info("container %s (%s %.12s) is cgroup %s", arg, rt, id, path);
				return 0;
			}
			if (err == -ENOENT) {
				log_err("--container %s: %s container %.12s has no cgroup under "
					"%s: "
					"is it running?",
					arg, rt, id, root);
				return err;
			}
		} else if (nerr == -ENOTUNIQ) {
			log_err("--container %s: both podman and docker have a container by that "
				"name; give its id",
				arg);
			return nerr;
		}
	}
	switch (err) {
	case 0:
		log_info("container %s is cgroup %s", arg, path);
		return 0;
	case -EINVAL:
		log_err("--container %s: no such container: not a container id (4 to 64 hex "
			"digits) nor the name of a podman or docker container",
			arg);
		return err;
	case -ENOENT:
		log_err("--container %s: no such container: no podman or docker container has "
			"that name, and no cgroup under %s is named after it as an id "
			"(docker-ID.scope, cri-containerd-ID.scope, crio-ID.scope, "
			"libpod-ID.scope, docker/ID, kubepods/.../ID)",
			arg, root);
		return err;
	case -ENOTUNIQ:
		log_err("--container %s: the prefix matches several containers; give more "
			"of the id",
			arg);
		return err;
	default:
		log_err("--container %s: %s", arg, strerror(-err));
		return err;
	}
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
		err = resolve_container(root, container, path, len);
		if (err)
			return err;
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

int cgroup__check_pid(const char *cgpath, pid_t pid, const char *container)
{
	char root[4096], file[64], line[4096], want[PATH_MAX], have[PATH_MAX * 2];
	char id[CONTAINER_ID_LEN + 1];
	const char *rt = NULL;
	size_t n;
	FILE *f;
	bool found = false;

	if (cgroup__v2_root(root, sizeof(root)) || !realpath(cgpath, want))
		return 0; /* cgroup__select checked both: nothing to compare */
	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	f = fopen(file, "r");
	if (!f)
		return 0; /* gone: the target's own check reports it */
	/* The v2 line: "0::/PATH". */
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(have, sizeof(have), "%s%s", root,
				 strcmp(line + 3, "/") ? line + 3 : "");
			found = true;
			break;
		}
	fclose(f);
	if (!found)
		return 0;
	n = strlen(want);
	if (!strncmp(have, want, n) && (have[n] == 0 || have[n] == '/'))
		return 0;
	if (container__id_from_path(line + 3, id, &rt))
		log_err("-p %d is not in %s %s (cgroup %s): it is in %s container %.12s (cgroup "
			"%s)",
			(int)pid, container ? "container" : "cgroup",
			container ? container : cgpath, want, rt, id, have);
	else
		log_err("-p %d is not in %s %s (cgroup %s): it is in cgroup %s%s", (int)pid,
			container ? "container" : "cgroup", container ? container : cgpath, want,
			have, container ? ", in no container" : "");
	return -ESRCH;
}

/* Append the pids of dir's cgroup.procs, then recurse into its children.
 * A directory gone meanwhile (a cgroup removed) is skipped. */
static int pids_of(const char *dir, int depth, pid_t **v, size_t *n, size_t *cap)
{
	char path[PATH_MAX];
	struct dirent *de;
	FILE *f;
	DIR *d;
	long p;
	int err = 0;

	if (depth > 64)
		return 0; /* deeper than any real hierarchy */
	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fscanf(f, "%ld", &p) == 1) {
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 64;
			pid_t *nv = realloc(*v, nc * sizeof(*nv));

			if (!nv) {
				fclose(f);
				return -ENOMEM;
			}
			*v = nv;
			*cap = nc;
		}
		(*v)[(*n)++] = (pid_t)p;
	}
	fclose(f);
	d = opendir(dir);
	if (!d)
		return 0;
	while (!err && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path))
			continue;
		err = pids_of(path, depth + 1, v, n, cap);
	}
	closedir(d);
	return err;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

int cgroup__pids(const char *cgpath, pid_t **out, size_t *n)
{
	struct stat sb;
	size_t cap = 0, i, k;
	pid_t *v = NULL;
	int err;

	*out = NULL;
	*n = 0;
	if (stat(cgpath, &sb))
		return -errno;
	err = pids_of(cgpath, 0, &v, n, &cap);
	if (err) {
		free(v);
		*n = 0;
		return err;
	}
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_pid);
	for (i = k = 0; i < *n; i++) /* a process that moved during the walk */
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	*n = k;
	*out = v;
	return 0;
}

/* The cgroup v2 directory of pid (0: cabbpf) into path: the v2 root and
 * /proc/PID/cgroup's "0::PATH". Returns 0, -ENOENT (no cgroup v2 mounted,
 * or no v2 line), -ESRCH (gone) or -ENAMETOOLONG. */
static int dir_of(pid_t pid, char *path, size_t len)
{
	char root[PATH_MAX], file[64], line[PATH_MAX + 8];
	int err = -ENOENT;
	FILE *f;

	if (cgroup__v2_root(root, sizeof(root)))
		return -ENOENT;
	if (pid)
		snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(file, sizeof(file), "/proc/self/cgroup");
	f = fopen(file, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (err == -ENOENT && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			err = (size_t)snprintf(path, len, "%s%s", root,
					       strcmp(line + 3, "/") ? line + 3 : "") >= len
				      ? -ENAMETOOLONG
				      : 0;
		}
	fclose(f);
	return err;
}

/* Whether q is pid or one of its descendants, by the parents in /proc
 * (a process gone meanwhile counts as one: it can start nothing more). */
static bool in_tree(pid_t q, pid_t pid)
{
	int depth;

	for (depth = 0; depth < 4096 && q > 1; depth++) {
		if (q == pid)
			return true;
		q = (pid_t)procfs__status_field(q, "PPid");
		if (q < 0)
			return true;
	}
	return q == pid;
}

int cgroup__tree_of(pid_t pid, char *path, size_t len)
{
	char root[PATH_MAX], others[256] = "";
	pid_t *v = NULL;
	size_t n = 0, i, nothers = 0, used = 0;
	int err;

	err = dir_of(pid, path, len);
	if (err == -ENOENT)
		log_err("-p %d --follow-forks follows its children through its cgroup v2, and "
			"%s",
			(int)pid,
			cgroup__v2_root(root, sizeof(root)) ? "cgroup v2 is not mounted"
							    : "it is in none");
	else if (err == -ESRCH)
		log_err("-p %d: no such process", (int)pid);
	else if (err)
		log_err("-p %d --follow-forks: its cgroup: %s", (int)pid, strerror(-err));
	if (err)
		return err;
	if (!cgroup__v2_root(root, sizeof(root)) && !strcmp(path, root)) {
		log_err("-p %d --follow-forks follows its children through its cgroup, and it is "
			"in "
			"the root cgroup (%s) with every process of the machine: start it in a "
			"cgroup of its own (systemd-run --scope, a container), or launch it with "
			"-- COMMAND --follow-forks",
			(int)pid, path);
		return -EBUSY;
	}
	err = cgroup__pids(path, &v, &n);
	if (err) {
		log_err("-p %d --follow-forks: reading the processes of cgroup %s: %s", (int)pid,
			path, strerror(-err));
		return err;
	}
	for (i = 0; i < n; i++) {
		if (in_tree(v[i], pid))
			continue;
		if (nothers++ < 3 && used < sizeof(others))
			used += (size_t)snprintf(others + used, sizeof(others) - used, "%s%d",
						 used ? ", " : "", (int)v[i]);
	}
	free(v);
	if (!nothers)
		return 0;
	log_err("-p %d --follow-forks follows its children through its cgroup, and %s holds %zu "
		"other process%s, not of its descendants (pid %s%s): --cgroup %s traces every "
		"process of it, or launch the program with -- COMMAND --follow-forks",
		(int)pid, path, nothers, nothers == 1 ? "" : "es", others,
		nothers > 3 ? ", ..." : "", path);
	return -EBUSY;
}

int cgroup__make_own(char *path, size_t len)
{
	char root[PATH_MAX], line[PATH_MAX + 8], own[PATH_MAX + 8] = "";
	FILE *f;
	int err;

	err = cgroup__v2_root(root, sizeof(root));
	if (err) {
		log_err("--follow-forks puts the command in a cgroup v2 of its own, and cgroup v2 "
			"is "
			"not mounted (mount -t cgroup2 none /sys/fs/cgroup/unified)");
		return err;
	}
	/* cabbpf's own cgroup v2 ("0::PATH"): the command's goes under it,
	 * so every limit that held cabbpf holds the command too. */
	f = fopen("/proc/self/cgroup", "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(own, sizeof(own), "%s", line + 3);
		}
	if (f)
		fclose(f);
	if ((size_t)snprintf(path, len, "%s%s/cabbpf-follow-%d", root, strcmp(own, "/") ? own : "",
			     (int)getpid()) >= len)
		return -ENAMETOOLONG;
	if (mkdir(path, 0755) && errno != EEXIST) {
		err = -errno;
		log_err("--follow-forks: making cgroup %s: %s", path, strerror(-err));
		return err;
	}
	return 0;
}

void cgroup__remove_own(const char *path)
{
	char parent[PATH_MAX];
	pid_t *v = NULL;
	size_t n = 0, i;
	char *slash;

	if (!path || !*path)
		return;
	snprintf(parent, sizeof(parent), "%s", path);
	slash = strrchr(parent, '/');
	if (slash)
		*slash = 0;
	/* Processes that outlive the trace (a daemon the command started)
	 * go back where the command came from. */
	if (!cgroup__pids(path, &v, &n))
		for (i = 0; i < n; i++)
			(void)cgroup__enter(parent, v[i]);
	free(v);
	/* the last task's exit can leave it populated a moment */
	for (i = 0; i < 100; i++) {
		if (!rmdir(path) || errno == ENOENT)
			return;
		if (errno != EBUSY)
			break;
		usleep(10000);
	}
	log_warn("--follow-forks: removing cgroup %s: %s", path, strerror(errno));
}
