// SPDX-License-Identifier: BSD-2-Clause
/* --io's figures grouped (iostat_groups.h): by process, command, cgroup,
 * container, everything; the files; the -i interval line. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "user/iomode/iostat_groups.h"
#include "user/iomode/iostat_int.h"

static const struct cabbpf_iostat_val zero_val;

const struct cabbpf_iostat_val *iostat__group_cell(const struct iostat_group *g, unsigned sc,
						   unsigned k)
{
	return g->at[sc][k] ? &g->cells[g->at[sc][k] - 1] : &zero_val;
}

static void group_add(struct iostat_group *g, const struct cabbpf_iostat_key *k,
		      const struct cabbpf_iostat_val *v)
{
	uint8_t *at;

	if (k->sc >= CABBPF_SC__MAX || k->fdkind >= CABBPF_FD__MAX)
		return;
	at = &g->at[k->sc][k->fdkind];
	if (!*at) {
		struct cabbpf_iostat_val *c = realloc(g->cells, (g->ncells + 1u) * sizeof(*c));

		if (!c) {
			log_warn("--io: out of memory: a report's figures are incomplete");
			return;
		}
		g->cells = c;
		memset(&c[g->ncells], 0, sizeof(*c));
		*at = ++g->ncells;
	}
	iostat__add_stat(&g->cells[*at - 1], v);
	if (CABBPF_SC_IS_OUTPUT(k->sc)) {
		g->out_bytes += v->bytes;
		g->out_calls += v->calls;
	} else {
		g->in_bytes += v->bytes;
		g->in_calls += v->calls;
		g->in_short += v->short_calls;
		g->in_ok += v->calls - v->errors;
	}
	g->errors += v->errors;
	if (!g->comm[0])
		memcpy(g->comm, v->comm, sizeof(g->comm));
}


struct gkey {
	uint32_t pid;
	uint32_t pad; /* IOSTAT_BY_PROC: struct sent's gen */
	uint64_t cgid;
	char container[CONTAINER_ID_LEN + 1];
	char comm[16];
};

/* (command, pid, which process under it) seen, to count a command's
 * processes once each. */
struct seen {
	char comm[16];
	uint32_t pid;
	uint32_t pad; /* struct sent's gen */
};

/* Group every stat key by by; returns an array (iostat__groups_free) of *n
 * groups, unsorted. */
static struct iostat_group **group_by(struct iostat *s, enum iostat_by by, size_t *n)
{
	struct ptab t;
	struct iostat_group **out = NULL;
	size_t i;

	struct ptab seen;

	memset(&t, 0, sizeof(t));
	memset(&seen, 0, sizeof(seen));
	*n = 0;
	for (i = 0; i < s->stats.n; i++) {
		const struct sent *e = s->stats.v[i];
		bool folded = e->k.pid & FOLD_PID;
		struct cabbpf_iostat_val tot;
		struct gkey gk;
		struct iostat_group *g;
		const char *path = NULL, *rt = NULL;
		char cid[CONTAINER_ID_LEN + 1] = "";

		memset(&gk, 0, sizeof(gk));
		iostat__stat_total(e, &tot);
		path = iostat__cg_path(s, e->k.cgid);
		if (!iostat__cg_container(s, e->k.cgid, path, cid, &rt))
			cid[0] = 0;
		if (by == IOSTAT_BY_PROC) {
			if (folded)
				continue; /* counted in its command's row only */
			gk.pid = e->k.pid;
			gk.pad = e->gen; /* two processes under one pid: two rows */
			gk.cgid = e->k.cgid;
		} else if (by == IOSTAT_BY_CGROUP) {
			gk.cgid = e->k.cgid;
		} else if (by == IOSTAT_BY_COMMAND) {
			memcpy(gk.comm, tot.comm, strnlen(tot.comm, sizeof(gk.comm) - 1));
		} else {
			if (!cid[0])
				continue;
			memcpy(gk.container, cid, sizeof(cid));
		}
		/* ptab entries start with their key: the group follows it. */
		g = ptab__get(&t, &gk, sizeof(gk), sizeof(gk) + sizeof(struct iostat_group), true);
		if (!g)
			continue;
		g = (struct iostat_group *)((char *)g + sizeof(gk));
		g->pid = gk.pid;
		g->cgid = by == IOSTAT_BY_CONTAINER ? 0 : gk.cgid;
		memcpy(g->container, cid, sizeof(cid));
		g->runtime = rt;
		group_add(g, &e->k, &tot);
		if (by == IOSTAT_BY_COMMAND) {
			struct seen sk;
			struct seen *se;

			/* A folded row stands for its command's folded processes. */
			memset(&sk, 0, sizeof(sk));
			memcpy(sk.comm, gk.comm, sizeof(sk.comm));
			sk.pid = folded ? FOLD_PID : e->k.pid;
			sk.pad = folded ? 0 : e->gen;
			se = ptab__get(&seen, &sk, sizeof(sk), sizeof(sk) + 1, true);
			if (se && !((char *)se)[sizeof(sk)]) {
				((char *)se)[sizeof(sk)] = 1;
				g->nproc += folded ? ((struct cmd *)s->cmds.v[e->k.pid & ~FOLD_PID])
							     ->folded
						   : 1;
			}
		}
	}
	ptab__fini(&seen, NULL);
	out = calloc(t.n + 1, sizeof(*out));
	if (out) {
		for (i = 0; i < t.n; i++) {
			out[i] = (struct iostat_group *)((char *)t.v[i] + sizeof(struct gkey));
		}
		*n = t.n;
	}
	/* The entries are now owned through out[]: free only the index. */
	free(t.v);
	hmap__fini(&t.m);
	return out;
}

void iostat__groups_free(struct iostat_group **g, size_t n)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < n; i++) {
		free(g[i]->cells);
		free((char *)g[i] - sizeof(struct gkey));
	}
	free(g);
}

/* A group of group_all's; NULL is fine. */
void iostat__group_free(struct iostat_group *g)
{
	if (g)
		free(g->cells);
	free(g);
}

static int cmp_group(const void *a, const void *b)
{
	const struct iostat_group *x = *(const struct iostat_group *const *)a,
			   *y = *(const struct iostat_group *const *)b;

	if (x->in_bytes != y->in_bytes)
		return x->in_bytes > y->in_bytes ? -1 : 1;
	if (x->out_bytes != y->out_bytes)
		return x->out_bytes > y->out_bytes ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->cgid != y->cgid)
		return x->cgid < y->cgid ? -1 : 1;
	return strncmp(x->comm, y->comm, sizeof(x->comm));
}

static int cmp_file(const void *a, const void *b)
{
	struct cabbpf_iofile_val x, y;

	iostat__file_total(*(const struct fent *const *)a, &x);
	iostat__file_total(*(const struct fent *const *)b, &y);
	if (x.in_bytes != y.in_bytes)
		return x.in_bytes > y.in_bytes ? -1 : 1;
	return x.out_bytes > y.out_bytes ? -1 : x.out_bytes < y.out_bytes;
}

uint64_t iostat__calls(const struct iostat *s)
{
	struct cabbpf_iostat_val t;
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < s->stats.n; i++) {
		iostat__stat_total(s->stats.v[i], &t);
		n += t.calls;
	}
	return n;
}

/* Everything in one group. */
struct iostat_group *iostat__group_all(struct iostat *s)
{
	struct iostat_group *g = calloc(1, sizeof(*g));
	struct cabbpf_iostat_val t;
	size_t i;

	if (!g)
		return NULL;
	for (i = 0; i < s->stats.n; i++) {
		const struct sent *e = s->stats.v[i];

		iostat__stat_total(e, &t);
		group_add(g, &e->k, &t);
	}
	return g;
}

void iostat__print_interval(struct iostat *s, FILE *f, double secs)
{
	struct iostat_group **g, *all;
	size_t n = 0, i, shown = 0;
	uint64_t total, now;

	/* The interval's bytes from the whole table: rows of processes that
	 * were folded since the last print are gone, their bytes are not. */
	all = iostat__group_all(s);
	if (!all)
		return;
	now = all->in_bytes + all->out_bytes;
	iostat__group_free(all);
	total = now - s->prev_total;
	s->prev_total = now;
	g = group_by(s, IOSTAT_BY_PROC, &n);
	if (!g)
		return;
	for (i = 0; i < n; i++) {
		uint64_t *v, now = g[i]->in_bytes + g[i]->out_bytes, d;

		if (hmap__upsert(&s->prev, (uint64_t)g[i]->pid << 32 ^ g[i]->cgid, &v))
			continue;
		d = now - *v;
		*v = now;
		/* Reuse in_short as "bytes this interval" for sorting. */
		g[i]->in_short = d;
	}
	for (i = 0; i < n; i++) /* sort by this interval's bytes */
		g[i]->in_bytes = g[i]->in_short;
	qsort(g, n, sizeof(*g), cmp_group);
	fprintf(f, "--io interval %.1f s: %" PRIu64 " bytes in+out (%.0f B/s)\n", secs, total,
		secs > 0 ? (double)total / secs : 0.0);
	for (i = 0; i < n && shown < 5; i++) {
		if (!g[i]->in_bytes)
			break;
		fprintf(f, "  %7u %-16.16s %12" PRIu64 " bytes\n", g[i]->pid, g[i]->comm,
			g[i]->in_bytes);
		shown++;
	}
	fflush(f);
	iostat__groups_free(g, n);
}


struct iostat_group **iostat__groups(struct iostat *s, enum iostat_by by, size_t *n)
{
	struct iostat_group **g = group_by(s, by, n);
	size_t i;

	if (!g)
		return NULL;
	for (i = 0; i < *n; i++)
		g[i]->cgroup = by == IOSTAT_BY_CONTAINER ? NULL : iostat__cg_path(s, g[i]->cgid);
	qsort(g, *n, sizeof(*g), cmp_group);
	return g;
}

struct iostat_file *iostat__files(struct iostat *s, size_t *n)
{
	struct fent **fv = malloc((s->files.n + 1) * sizeof(*fv));
	struct iostat_file *out = calloc(s->files.n + 1, sizeof(*out));
	size_t i;

	if (!fv || !out) {
		free(fv);
		free(out);
		return NULL;
	}
	for (i = 0; i < s->files.n; i++)
		fv[i] = s->files.v[i];
	qsort(fv, s->files.n, sizeof(*fv), cmp_file);
	for (i = 0; i < s->files.n; i++) {
		iostat__file_total(fv[i], &out[i].t);
		out[i].pid = fv[i]->k.pid;
		out[i].fd = fv[i]->fd;
		out[i].ino = fv[i]->k.ino;
		out[i].name = fv[i]->name;
	}
	free(fv);
	*n = s->files.n;
	return out;
}

void iostat__info(const struct iostat *s, struct iostat_info *i)
{
	i->top = s->o.top;
	i->procs_folded = s->procs_folded;
	i->files_folded = s->files_folded;
}
