/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Containers and cgroups v2, from the file system alone (no runtime API):
 *   - where cgroup v2 is mounted;
 *   - which container a cgroup belongs to, from the usual runtimes' naming:
 *       docker      .../docker-<id>.scope (systemd driver), .../docker/<id>
 *       containerd  .../cri-containerd-<id>.scope, .../kubepods.../<id>
 *       CRI-O       .../crio-<id>.scope
 *       podman      .../libpod-<id>.scope (and its children)
 *     where <id> is 64 lowercase hex digits;
 *   - the cgroup directory of a container id (or unique id prefix);
 *   - the path of a cgroup id (the inode number of its directory).
 * Pure file-system walks, so tests point them at a fake tree in a temp dir.
 * Main thread only (no shared state).
 */
#ifndef USER_CONTAINER_H
#define USER_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONTAINER_ID_LEN 64

/*
 * The container a cgroup path belongs to: the outermost path component that
 * names one. Writes the id (64 hex digits + NUL) and, if runtime is not
 * NULL, a static runtime name ("docker", "containerd", "crio", "podman").
 * Returns true if the path names a container. Pure.
 */
bool container__id_from_path(const char *path, char id[CONTAINER_ID_LEN + 1],
			     const char **runtime);

/*
 * Find the cgroup directory of container id (full id or a unique prefix of
 * at least 4 hex digits) under the cgroup v2 tree at root; writes its path
 * (the outermost directory naming that container) into out. Returns 0,
 * -EINVAL (not a hex id or shorter than 4), -ENOENT (no such container),
 * -ENOTUNIQ (the prefix matches several containers), -ENAMETOOLONG, or the
 * walk's -errno.
 */
int container__resolve(const char *root, const char *id, char *out, size_t len);

/*
 * Path of the cgroup with id cgid (the inode number of its directory) under
 * root, into out. Returns 0 or -ENOENT. Walks the tree: callers cache.
 */
int container__cgroup_path(const char *root, uint64_t cgid, char *out, size_t len);

#endif /* USER_CONTAINER_H */
