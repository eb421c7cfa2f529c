// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/proc/ctnames.h"

/* State files are small (kilobytes per container); a bound keeps a
 * corrupt one from costing memory. */
#define MAX_STATE_BYTES (64u << 20)

static const struct ctnames_dirs defaults = {
	.podman_json = "/var/lib/containers/storage/overlay-containers/containers.json",
	.docker_dir = "/var/lib/docker/containers",
};

const struct ctnames_dirs *ctnames__default(void)
{
	return &defaults;
}

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (!first && (c == '_' || c == '.' || c == '-'));
}

static bool valid_name(const char *s)
{
	size_t i;

	if (!*s || strlen(s) > 253)
		return false;
	for (i = 0; s[i]; i++)
		if (!name_char(s[i], i == 0))
			return false;
	return true;
}

static bool hex64(const char *s)
{
	int i;

	for (i = 0; i < CONTAINER_ID_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* The whole file, NUL-terminated (caller frees), or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	do {
		if (n + 4096 + 1 > cap) {
			char *nb;

			cap = cap ? 2 * cap : 65536;
			if (cap > MAX_STATE_BYTES || !(nb = realloc(buf, cap))) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, 4096, f);
		n += r;
	} while (r == 4096);
	fclose(f);
	buf[n] = 0;
	return buf;
}

/* p past JSON white space. */
static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

/* At p: "name" exactly (quoted). */
static bool quoted_is(const char *p, const char *name, size_t n)
{
	return *p == '"' && !strncmp(p + 1, name, n) && p[1 + n] == '"';
}

/* podman: containers.json's objects in order; each "id" before its
 * "names" (containers-storage writes them so). Counts matches. */
static int podman_scan(const char *json, const char *name, char id[CONTAINER_ID_LEN + 1])
{
	size_t n = strlen(name);
	const char *p = json, *cur = NULL;
	int found = 0;

	while ((p = strstr(p, "\"id\""))) {
		const char *v = skip_ws(p + 4), *names, *next;

		p += 4;
		if (*v != ':')
			continue;
		v = skip_ws(v + 1);
		if (*v != '"' || !hex64(v + 1) || v[1 + CONTAINER_ID_LEN] != '"')
			continue;
		cur = v + 1;
		next = strstr(v, "\"id\"");
		names = strstr(v, "\"names\"");
		if (!names || (next && names > next))
			continue;
		v = skip_ws(names + 7);
		if (*v != ':')
			continue;
		v = skip_ws(v + 1);
		if (*v != '[')
			continue;
		v = skip_ws(v + 1);
		while (*v == '"') {
			if (quoted_is(v, name, n)) {
				if (!found || strncmp(id, cur, CONTAINER_ID_LEN))
					found++;
				memcpy(id, cur, CONTAINER_ID_LEN);
				id[CONTAINER_ID_LEN] = 0;
			}
			v = strchr(v + 1, '"');
			if (!v)
				return found;
			v = skip_ws(v + 1);
			if (*v != ',')
				break;
			v = skip_ws(v + 1);
		}
	}
	return found;
}

/* docker: each <id>/config.v2.json's "Name":"/NAME". Counts matches. */
static int docker_scan(const char *dir, const char *name, char id[CONTAINER_ID_LEN + 1])
{
	size_t n = strlen(name);
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char path[4096], *json;
		const char *p;

		if (strlen(de->d_name) != CONTAINER_ID_LEN || !hex64(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s/config.v2.json", dir, de->d_name);
		json = slurp(path);
		if (!json)
			continue;
		p = strstr(json, "\"Name\"");
		if (p) {
			p = skip_ws(p + 6);
			if (*p == ':') {
				p = skip_ws(p + 1);
				if (p[0] == '"' && p[1] == '/' && !strncmp(p + 2, name, n) &&
				    p[2 + n] == '"') {
					found++;
					memcpy(id, de->d_name, CONTAINER_ID_LEN);
					id[CONTAINER_ID_LEN] = 0;
				}
			}
		}
		free(json);
	}
	closedir(d);
	return found;
}

int ctnames__lookup(const struct ctnames_dirs *d, const char *name,
		    char id[CONTAINER_ID_LEN + 1], const char **runtime)
{
	char pid_[CONTAINER_ID_LEN + 1], did[CONTAINER_ID_LEN + 1];
	int np = 0, nd = 0;
	char *json;

	if (!valid_name(name))
		return -EINVAL;
	if (d->podman_json && (json = slurp(d->podman_json))) {
		np = podman_scan(json, name, pid_);
		free(json);
	}
	if (d->docker_dir)
		nd = docker_scan(d->docker_dir, name, did);
	if (np + nd == 0)
		return -ENOENT;
	if (np + nd > 1)
		return -ENOTUNIQ;
	memcpy(id, np ? pid_ : did, CONTAINER_ID_LEN + 1);
	if (runtime)
		*runtime = np ? "podman" : "docker";
	return 0;
}
