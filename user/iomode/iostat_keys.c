// SPDX-License-Identifier: BSD-2-Clause
/*
 * --io's keys: a key's figures summed (what the kernel holds now plus
 * what was set aside when its process ended), and the names of its
 * cgroup. Both ended.c and iostat.c use them (iostat_int.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "common/hmap.h"
#include "user/iomode/iostat_int.h"
#include "user/proc/cgroup.h"
#include "user/proc/container.h"

void iostat__fent_fini(void *e)
{
	free(((struct fent *)e)->name);
}

void iostat__add_stat(struct cabbpf_iostat_val *d, const struct cabbpf_iostat_val *v)
{
	unsigned b;

	d->calls += v->calls;
	d->errors += v->errors;
	d->bytes += v->bytes;
	d->req += v->req;
	d->short_calls += v->short_calls;
	for (b = 0; b < CABBPF_HIST_BUCKETS; b++) {
		d->hist_req[b] += v->hist_req[b];
		d->hist_ret[b] += v->hist_ret[b];
	}
	if (!d->comm[0] && v->comm[0])
		memcpy(d->comm, v->comm, sizeof(d->comm));
}

void iostat__add_file(struct cabbpf_iofile_val *d, const struct cabbpf_iofile_val *v)
{
	d->in_bytes += v->in_bytes;
	d->out_bytes += v->out_bytes;
	d->in_calls += v->in_calls;
	d->out_calls += v->out_calls;
	if (v->in_calls || v->out_calls) {
		d->dev = v->dev;
		d->cgid = v->cgid;
		d->fdkind = v->fdkind;
	}
	if (!d->name[0] && v->name[0])
		memcpy(d->name, v->name, sizeof(d->name));
}

void iostat__stat_total(const struct sent *e, struct cabbpf_iostat_val *t)
{
	memset(t, 0, sizeof(*t));
	iostat__add_stat(t, &e->base);
	iostat__add_stat(t, &e->cur);
}

void iostat__file_total(const struct fent *e, struct cabbpf_iofile_val *t)
{
	memset(t, 0, sizeof(*t));
	iostat__add_file(t, &e->base);
	iostat__add_file(t, &e->cur);
}

/* The cgroup path of cgid (cached), or NULL. */
const char *iostat__cg_path(struct iostat *s, uint64_t cgid)
{
	char buf[PATH_MAX];
	uint64_t *v;

	if (!s->o.cgroot)
		return NULL;
	if (hmap__upsert(&s->cgpath, cgid, &v))
		return NULL;
	if (!*v) {
		*v = 1;
		if (!container__cgroup_path(s->o.cgroot, cgid, buf, sizeof(buf))) {
			char *p = strdup(buf);

			if (p)
				*v = (uint64_t)(uintptr_t)p;
		}
	}
	return *v > 1 ? (const char *)(uintptr_t)*v : NULL;
}

/* The container of cgroup cgid: from its path (NULL once the cgroup is
 * gone), else from the names the kernel noted when its first key was made
 * (a container that ended before the tree could be walked). */
bool iostat__cg_container(struct iostat *s, uint64_t cgid, const char *path,
			  char cid[CONTAINER_ID_LEN + 1], const char **rt)
{
	struct cabbpf_cgname n;
	char p[2 * CABBPF_CGNAME_LEN + 4];

	if (path)
		return container__id_from_path(path, cid, rt);
	if (s->o.cgnames_fd < 0 || bpf_map_lookup_elem(s->o.cgnames_fd, &cgid, &n))
		return false;
	n.leaf[sizeof(n.leaf) - 1] = 0;
	n.parent[sizeof(n.parent) - 1] = 0;
	snprintf(p, sizeof(p), "/%s/%s", n.parent, n.leaf);
	return container__id_from_path(p, cid, rt);
}
