// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "user/proc/container.h"

/* cgroup trees are shallow; a bound keeps a looping bind mount harmless. */
#define MAX_DEPTH 32

static bool is_hex64(const char *s, size_t n)
{
	size_t i;

	if (n != CONTAINER_ID_LEN)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* One path component (not NUL-terminated: name[0..n)). parent is the
 * previous component, for the bare-id layouts. */
static bool component_id(const char *name, size_t n, const char *parent, size_t pn,
			 char id[CONTAINER_ID_LEN + 1], const char **runtime)
{
	static const struct {
		const char *prefix, *runtime;
	} pre[] = {
		{"docker-", "docker"},
		{"cri-containerd-", "containerd"},
		{"crio-", "crio"},
		{"libpod-", "podman"},
	};
	size_t i, pl;

	if (n > 6 && !memcmp(name + n - 6, ".scope", 6))
		n -= 6;
	for (i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		pl = strlen(pre[i].prefix);
		if (n > pl && !memcmp(name, pre[i].prefix, pl) && is_hex64(name + pl, n - pl)) {
			memcpy(id, name + pl, CONTAINER_ID_LEN);
			id[CONTAINER_ID_LEN] = 0;
			if (runtime)
				*runtime = pre[i].runtime;
			return true;
		}
	}
	if (is_hex64(name, n)) {
		/* cgroupfs drivers: /docker/<id>, /kubepods/.../<id>,
		 * /libpod_parent/libpod-<id> is handled above. */
		memcpy(id, name, CONTAINER_ID_LEN);
		id[CONTAINER_ID_LEN] = 0;
		if (runtime)
			*runtime = pn == 6 && !memcmp(parent, "docker", 6) ? "docker" : "containerd";
		return true;
	}
	return false;
}

bool container__id_from_path(const char *path, char id[CONTAINER_ID_LEN + 1],
			     const char **runtime)
{
	const char *p = path, *parent = "";
	size_t pn = 0;

	while (*p) {
		const char *e;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		if (!e)
			e = p + strlen(p);
		if (component_id(p, (size_t)(e - p), parent, pn, id, runtime))
			return true;
		parent = p;
		pn = (size_t)(e - p);
		p = e;
	}
	return false;
}

struct walk {
	const char *want;  /* container__resolve: id prefix */
	size_t want_len;
	uint64_t cgid;     /* container__cgroup_path */
	char found_id[CONTAINER_ID_LEN + 1];
	int matches;       /* distinct containers matched */
	char *out;
	size_t len;
	bool done;
};

/* Depth-first over the directories under path (a buffer of PATH_MAX). */
static int walk_dir(char *path, size_t plen, int depth, struct walk *w)
{
	DIR *d;
	struct dirent *de;
	int err = 0;

	if (depth > MAX_DEPTH || w->done)
		return 0;
	d = opendir(path);
	if (!d)
		return depth ? 0 : -errno; /* a cgroup removed meanwhile is fine */
	while (!w->done && (de = readdir(d))) {
		char id[CONTAINER_ID_LEN + 1];
		size_t n = strlen(de->d_name);
		struct stat st;

		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (plen + 1 + n + 1 > 4096)
			continue;
		path[plen] = '/';
		memcpy(path + plen + 1, de->d_name, n + 1);
		if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
			path[plen] = 0;
			continue;
		}
		if (w->want) {
			if (component_id(de->d_name, n, "", 0, id, NULL) &&
			    !strncmp(id, w->want, w->want_len)) {
				/* The outermost directory of a container: do
				 * not descend (its children are the same one). */
				if (strcmp(id, w->found_id)) {
					w->matches++;
					if (w->matches == 1) {
						memcpy(w->found_id, id, sizeof(id));
						if (plen + 1 + n + 1 > w->len)
							err = -ENAMETOOLONG;
						else
							strcpy(w->out, path);
					}
				}
				path[plen] = 0;
				continue;
			}
		} else if ((uint64_t)st.st_ino == w->cgid) {
			if (strlen(path) + 1 > w->len)
				err = -ENAMETOOLONG;
			else
				strcpy(w->out, path);
			w->done = true;
			path[plen] = 0;
			break;
		}
		err = walk_dir(path, plen + 1 + n, depth + 1, w);
		path[plen] = 0;
		if (err)
			break;
	}
	closedir(d);
	return err;
}

int container__resolve(const char *root, const char *id, char *out, size_t len)
{
	char *path = NULL;
	struct walk w;
	size_t i, n = strlen(id);
	int err;

	if (n < 4 || n > CONTAINER_ID_LEN)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return -EINVAL;
	if (strlen(root) >= 4096)
		return -ENAMETOOLONG;
	path = malloc(4096);
	if (!path)
		return -ENOMEM;
	strcpy(path, root);
	memset(&w, 0, sizeof(w));
	w.want = id;
	w.want_len = n;
	w.out = out;
	w.len = len;
	err = walk_dir(path, strlen(path), 0, &w);
	if (!err && w.matches == 0)
		err = -ENOENT;
	else if (!err && w.matches > 1)
		err = -ENOTUNIQ;
	free(path);
	return err;
}

int container__cgroup_path(const char *root, uint64_t cgid, char *out, size_t len)
{
	char *path;
	struct stat st;
	struct walk w;
	int err;

	if (strlen(root) >= 4096 || strlen(root) + 1 > len)
		return -ENAMETOOLONG;
	if (!stat(root, &st) && (uint64_t)st.st_ino == cgid) {
		strcpy(out, root);
		return 0;
	}
	path = malloc(4096);
	if (!path)
		return -ENOMEM;
	strcpy(path, root);
	memset(&w, 0, sizeof(w));
	w.cgid = cgid;
	w.out = out;
	w.len = len;
	err = walk_dir(path, strlen(path), 0, &w);
	if (!err && !w.done)
		err = -ENOENT;
	free(path);
	return err;
}
