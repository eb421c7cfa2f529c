/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Container names, from the runtimes' own state files (no runtime API, no
 * exec of podman or docker):
 *   podman  containers-storage's containers.json (root:
 *           /var/lib/containers/storage/overlay-containers/containers.json),
 *           an array of {"id": ..., "names": [...], ...};
 *   docker  /var/lib/docker/containers/<id>/config.v2.json, {"Name": "/NAME"}.
 * Both runtimes restrict names to [a-zA-Z0-9][a-zA-Z0-9_.-]*, so the files
 * are scanned for those keys without a full JSON parser. containerd/CRI
 * containers have no name of their own (Kubernetes' are labels): ids only.
 * Main thread only (no shared state).
 */
#ifndef USER_PROC_CTNAMES_H
#define USER_PROC_CTNAMES_H

#include "user/proc/container.h"

/* Where the state files are; tests point them at a temp dir. */
struct ctnames_dirs {
	const char *podman_json; /* containers.json, or NULL */
	const char *docker_dir;	 /* the directory of <id>/config.v2.json, or NULL */
};

/* The default (root's) locations. Static; never NULL. */
const struct ctnames_dirs *ctnames__default(void);

/*
 * The id of the container named name, into id (64 hex digits + NUL), and a
 * static runtime name ("podman", "docker") into *runtime if not NULL.
 * Returns 0, -ENOENT (no container has that name; missing state files are
 * not an error), -ENOTUNIQ (both runtimes have one by that name), or
 * -EINVAL (name is not a valid container name).
 */
int ctnames__lookup(const struct ctnames_dirs *d, const char *name,
		    char id[CONTAINER_ID_LEN + 1], const char **runtime);

#endif /* USER_PROC_CTNAMES_H */
