// SPDX-License-Identifier: BSD-2-Clause
/* --io's views (iostat_int.h): groups of the kernel keys (process,
 * command, cgroup, container, everything), the text and JSON reports. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/log.h"
#include "user/kernel/features.h"
#include "common/outfile.h"
#include "common/syscalls.h"
#include "common/outputs.h"
#include "user/iomode/iostat_int.h"

/* __u64 is unsigned long long, uint64_t unsigned long: print through this. */
#define U(x) ((uint64_t)(x))
#define JSON_MAX_FILES 1000
#define JSON_MAX_PROCS 1000
#define H_STR2(x) #x
#define H_STR(x) H_STR2(x)

/* ------------------------------------------------------------- views -- */

/* A group of stat keys: a process (pid + cgroup), a cgroup, a container, or
 * everything; per (syscall, fd kind) totals inside. */
struct group {
	uint32_t pid;
	uint64_t cgid;
	char comm[16];
	char container[CONTAINER_ID_LEN + 1];
	const char *runtime;
	/* Sparse: a process uses a few of the 156 (syscall, fd kind) cells,
	 * and a dense table of 1 KiB values took ~170 KiB per group: a 10 s
	 * --io of a machine starting 1,800 processes a second reached 1 GiB. */
	uint8_t at[CABBPF_SC__MAX][CABBPF_FD__MAX]; /* index in cells + 1; 0: none */
	uint8_t ncells;
	struct cabbpf_iostat_val *cells; /* owned */
	uint64_t nproc;			 /* BY_COMMAND: processes (folded ones included) */
	uint64_t in_bytes, out_bytes, in_calls, out_calls, errors, in_short, in_ok;
};

static const struct cabbpf_iostat_val zero_val;

/* Cell (sc, fdkind) of g: its figures, or zeros when it has none. */
static const struct cabbpf_iostat_val *group_sc(const struct group *g, unsigned sc, unsigned k)
{
	return g->at[sc][k] ? &g->cells[g->at[sc][k] - 1] : &zero_val;
}

static void group_add(struct group *g, const struct cabbpf_iostat_key *k,
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

enum gby { BY_PROC, BY_CGROUP, BY_CONTAINER, BY_COMMAND };

struct gkey {
	uint32_t pid;
	uint32_t pad; /* BY_PROC: struct sent's gen */
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

/* Group every stat key by by; returns an array (caller frees each element
 * through free(groups[i]) and the array) of *n groups. */
static struct group **groups(struct iostat *s, enum gby by, size_t *n)
{
	struct ptab t;
	struct group **out = NULL;
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
		struct group *g;
		const char *path = NULL, *rt = NULL;
		char cid[CONTAINER_ID_LEN + 1] = "";

		memset(&gk, 0, sizeof(gk));
		iostat__stat_total(e, &tot);
		path = iostat__cg_path(s, e->k.cgid);
		if (!iostat__cg_container(s, e->k.cgid, path, cid, &rt))
			cid[0] = 0;
		if (by == BY_PROC) {
			if (folded)
				continue; /* counted in its command's row only */
			gk.pid = e->k.pid;
			gk.pad = e->gen; /* two processes under one pid: two rows */
			gk.cgid = e->k.cgid;
		} else if (by == BY_CGROUP) {
			gk.cgid = e->k.cgid;
		} else if (by == BY_COMMAND) {
			memcpy(gk.comm, tot.comm, strnlen(tot.comm, sizeof(gk.comm) - 1));
		} else {
			if (!cid[0])
				continue;
			memcpy(gk.container, cid, sizeof(cid));
		}
		/* ptab entries start with their key: the group follows it. */
		g = ptab__get(&t, &gk, sizeof(gk), sizeof(gk) + sizeof(struct group), true);
		if (!g)
			continue;
		g = (struct group *)((char *)g + sizeof(gk));
		g->pid = gk.pid;
		g->cgid = by == BY_CONTAINER ? 0 : gk.cgid;
		memcpy(g->container, cid, sizeof(cid));
		g->runtime = rt;
		group_add(g, &e->k, &tot);
		if (by == BY_COMMAND) {
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
			out[i] = (struct group *)((char *)t.v[i] + sizeof(struct gkey));
		}
		*n = t.n;
	}
	/* The entries are now owned through out[]: free only the index. */
	free(t.v);
	hmap__fini(&t.m);
	return out;
}

static void groups_free(struct group **g, size_t n)
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
static void group_free(struct group *g)
{
	if (g)
		free(g->cells);
	free(g);
}

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = *(const struct group *const *)a,
			   *y = *(const struct group *const *)b;

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
static struct group *group_all(struct iostat *s)
{
	struct group *g = calloc(1, sizeof(*g));
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
	struct group **g, *all;
	size_t n = 0, i, shown = 0;
	uint64_t total, now;

	/* The interval's bytes from the whole table: rows of processes that
	 * were folded since the last print are gone, their bytes are not. */
	all = group_all(s);
	if (!all)
		return;
	now = all->in_bytes + all->out_bytes;
	group_free(all);
	total = now - s->prev_total;
	s->prev_total = now;
	g = groups(s, BY_PROC, &n);
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
	groups_free(g, n);
}

/* -------------------------------------------------------------- text -- */

/* The resolved name, else the kernel's last path component, else a note. */
static const char *fent_name(const struct fent *e, const struct cabbpf_iofile_val *t, char *buf,
			     size_t len)
{
	if (e->name)
		return e->name;
	if (t->name[0]) {
		snprintf(buf, len, ".../%.*s (closed; last component only)", (int)sizeof(t->name),
			 t->name);
		return buf;
	}
	return "(closed before it could be named)";
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

static void text_groups(struct iostat *s, FILE *f, enum gby by)
{
	struct group **g;
	size_t n = 0, i;

	g = groups(s, by, &n);
	if (!g)
		return;
	qsort(g, n, sizeof(*g), cmp_group);
	if (by == BY_PROC) {
		fprintf(f, "processes by input bytes (%zu):\n", n);
		fprintf(f, "%8s %-16s %12s %9s %12s %9s %6s %7s  CGROUP\n", "PID", "COMMAND",
			"IN_BYTES", "IN_CALLS", "OUT_BYTES", "OUT_CALLS", "SHORT%", "ERRORS");
	} else if (by == BY_CGROUP) {
		fprintf(f, "cgroups by input bytes (%zu):\n", n);
		fprintf(f, "%12s %9s %12s %9s %6s  CGROUP\n", "IN_BYTES", "IN_CALLS", "OUT_BYTES",
			"OUT_CALLS", "SHORT%");
	} else if (by == BY_COMMAND) {
		fprintf(f, "commands by input bytes (%zu):\n", n);
		fprintf(f, "%8s %-16s %12s %9s %12s %9s %6s %7s\n", "PROCS", "COMMAND", "IN_BYTES",
			"IN_CALLS", "OUT_BYTES", "OUT_CALLS", "SHORT%", "ERRORS");
	} else {
		if (!n) {
			groups_free(g, n);
			return;
		}
		fprintf(f, "containers by input bytes (%zu):\n", n);
		fprintf(f, "%12s %9s %12s %9s %6s  %-10s CONTAINER\n", "IN_BYTES", "IN_CALLS",
			"OUT_BYTES", "OUT_CALLS", "SHORT%", "RUNTIME");
	}
	for (i = 0; i < n && i < s->o.top; i++) {
		const struct group *x = g[i];
		const char *cp = iostat__cg_path(s, x->cgid);

		if (by == BY_PROC)
			fprintf(f,
				"%8u %-16.16s %12" PRIu64 " %9" PRIu64 " %12" PRIu64 " %9" PRIu64
				" %5.1f%% %7" PRIu64 "  %s\n",
				x->pid, x->comm, x->in_bytes, x->in_calls, x->out_bytes,
				x->out_calls, 100 * ratio(x->in_short, x->in_ok), x->errors,
				cp ? cp : "?");
		else if (by == BY_COMMAND)
			fprintf(f,
				"%8" PRIu64 " %-16.16s %12" PRIu64 " %9" PRIu64 " %12" PRIu64
				" %9" PRIu64 " %5.1f%% %7" PRIu64 "\n",
				x->nproc, x->comm, x->in_bytes, x->in_calls, x->out_bytes,
				x->out_calls, 100 * ratio(x->in_short, x->in_ok), x->errors);
		else if (by == BY_CGROUP)
			fprintf(f,
				"%12" PRIu64 " %9" PRIu64 " %12" PRIu64 " %9" PRIu64
				" %5.1f%%  %s (id %" PRIu64 ")\n",
				x->in_bytes, x->in_calls, x->out_bytes, x->out_calls,
				100 * ratio(x->in_short, x->in_ok), cp ? cp : "?", x->cgid);
		else
			fprintf(f,
				"%12" PRIu64 " %9" PRIu64 " %12" PRIu64 " %9" PRIu64
				" %5.1f%%  %-10s %.12s\n",
				x->in_bytes, x->in_calls, x->out_bytes, x->out_calls,
				100 * ratio(x->in_short, x->in_ok), x->runtime ? x->runtime : "?",
				x->container);
	}
	if (n > s->o.top)
		fprintf(f, "  ... %zu more (the JSON report has %s)\n", n - s->o.top,
			by == BY_PROC && n > JSON_MAX_PROCS ? "the first " H_STR(JSON_MAX_PROCS)
							    : "all");
	if (by == BY_PROC && s->procs_folded)
		fprintf(f,
			"  and %" PRIu64 " ended processes with the least I/O, counted in their "
			"commands' rows only\n",
			s->procs_folded);
	fputc('\n', f);
	groups_free(g, n);
}

static void text_hist(FILE *f, const char *what, const __u64 *h)
{
	unsigned b, last = 0;

	for (b = 0; b < CABBPF_HIST_BUCKETS; b++)
		if (h[b])
			last = b;
	fprintf(f, "  %s:", what);
	for (b = 0; b <= last; b++) {
		if (!h[b])
			continue;
		if (b == 0)
			fprintf(f, " [0]=%" PRIu64, U(h[b]));
		else
			fprintf(f, " [%llu,%llu)=%" PRIu64, 1ULL << (b - 1),
				b < 63 ? 1ULL << b : 0ULL, U(h[b]));
	}
	fputc('\n', f);
}

int iostat__report_text(struct iostat *s, FILE *f, const struct iostat_run *r)
{
	struct group *all = group_all(s);
	struct cabbpf_iostat_val in;
	struct fent **fv = NULL;
	unsigned sc, k, b;
	char who[64];
	size_t i;

	if (!all)
		return -ENOMEM;

	if (r->pid)
		snprintf(who, sizeof(who), "pid %d", (int)r->pid);
	else
		snprintf(who, sizeof(who), "every process");
	fprintf(f, "cabbpf --io: %s%s%s%s%s, %.3f s, %" PRIu64 " I/O calls (%.0f/s)\n", who,
		r->cgroup ? " in cgroup " : "", r->cgroup ? r->cgroup : "",
		r->container ? ", container " : "", r->container ? r->container : "", r->duration_s,
		all->in_calls + all->out_calls,
		r->duration_s > 0 ? (double)(all->in_calls + all->out_calls) / r->duration_s : 0);
	fprintf(f,
		"  input %" PRIu64 " bytes in %" PRIu64
		" calls (short reads %.1f%%), output %" PRIu64 " bytes in %" PRIu64 " calls\n",
		all->in_bytes, all->in_calls, 100 * ratio(all->in_short, all->in_ok),
		all->out_bytes, all->out_calls);
	if (r->counts[CABBPF_IOSTAT_STATS_FULL] || r->counts[CABBPF_IOSTAT_FILES_FULL])
		fprintf(f,
			"  WARNING: kernel maps full: %" PRIu64
			" calls not counted per process, %" PRIu64 " not counted per file\n",
			r->counts[CABBPF_IOSTAT_STATS_FULL], r->counts[CABBPF_IOSTAT_FILES_FULL]);
	if (r->counts[CABBPF_IOSTAT_COMPAT])
		fprintf(f, "  note: %" PRIu64 " calls of 32-bit processes not decoded\n",
			r->counts[CABBPF_IOSTAT_COMPAT]);
	fputc('\n', f);
	text_groups(s, f, BY_PROC);
	text_groups(s, f, BY_COMMAND);
	text_groups(s, f, BY_CGROUP);
	text_groups(s, f, BY_CONTAINER);

	fprintf(f, "by system call and fd kind:\n");
	fprintf(f, "%16s %-9s %10s %12s %12s %8s %8s\n", "SYSCALL", "FD_KIND", "CALLS", "BYTES",
		"REQUESTED", "SHORT", "ERRORS");
	memset(&in, 0, sizeof(in));
	for (sc = 0; sc < CABBPF_SC__MAX; sc++)
		for (k = 0; k < CABBPF_FD__MAX; k++) {
			const struct cabbpf_iostat_val *v = group_sc(all, sc, k);

			if (!v->calls)
				continue;
			fprintf(f,
				"%16s %-9s %10" PRIu64 " %12" PRIu64 " %12" PRIu64 " %8" PRIu64
				" %8" PRIu64 "\n",
				syscalls__label(sc), syscalls__fdkind_name(k), U(v->calls),
				U(v->bytes), U(v->req), U(v->short_calls), U(v->errors));
			if (!CABBPF_SC_IS_OUTPUT(sc))
				for (b = 0; b < CABBPF_HIST_BUCKETS; b++) {
					in.hist_req[b] += v->hist_req[b];
					in.hist_ret[b] += v->hist_ret[b];
				}
		}
	fprintf(f, "\ninput sizes, log2 buckets [lo,hi) bytes: calls\n");
	text_hist(f, "requested", in.hist_req);
	text_hist(f, "returned ", in.hist_ret);

	fv = malloc((s->files.n + 1) * sizeof(*fv));
	if (fv) {
		for (i = 0; i < s->files.n; i++)
			fv[i] = s->files.v[i];
		qsort(fv, s->files.n, sizeof(*fv), cmp_file);
		fprintf(f, "\ntop files and sockets by input bytes:\n");
		fprintf(f, "%8s %5s %-7s %12s %9s %12s %9s  NAME\n", "PID", "FD", "KIND",
			"IN_BYTES", "IN_CALLS", "OUT_BYTES", "OUT_CALLS");
		for (i = 0; i < s->files.n && i < s->o.top; i++) {
			struct cabbpf_iofile_val t;
			char nbuf[96];

			iostat__file_total(fv[i], &t);
			fprintf(f,
				"%8u %5d %-7s %12" PRIu64 " %9" PRIu64 " %12" PRIu64 " %9" PRIu64
				"  %s\n",
				fv[i]->k.pid, fv[i]->fd, syscalls__fdkind_name(t.fdkind),
				U(t.in_bytes), U(t.in_calls), U(t.out_bytes), U(t.out_calls),
				fent_name(fv[i], &t, nbuf, sizeof(nbuf)));
		}
		free(fv);
	}
	group_free(all);
	return ferror(f) ? -EIO : 0;
}

/* -------------------------------------------------------------- JSON -- */

static void json_totals(struct json *w, const struct group *g)
{
	json__kv_u64(w, "in_bytes", g->in_bytes);
	json__kv_u64(w, "in_calls", g->in_calls);
	json__kv_u64(w, "out_bytes", g->out_bytes);
	json__kv_u64(w, "out_calls", g->out_calls);
	json__kv_u64(w, "errors", g->errors);
	json__kv_u64(w, "short_reads", g->in_short);
	json__kv_double(w, "short_read_ratio", ratio(g->in_short, g->in_ok));
}

/* syscalls_cell_fn over a group's table. */
static void group_cell(const void *ctx, unsigned sc, unsigned k, struct syscalls_cell *c)
{
	const struct cabbpf_iostat_val *v = group_sc(ctx, sc, k);

	*c = (struct syscalls_cell){.calls = v->calls,
				    .errors = v->errors,
				    .bytes = v->bytes,
				    .req = v->req,
				    .short_calls = v->short_calls,
				    .hist_req = v->hist_req,
				    .hist_ret = v->hist_ret};
}

static void json_groups(struct iostat *s, struct json *w, enum gby by)
{
	struct group **g;
	size_t n = 0, i;

	g = groups(s, by, &n);
	if (by == BY_PROC) {
		json__kv_u64(w, "processes_total", n + s->procs_folded);
		json__kv_u64(w, "processes_folded", s->procs_folded);
	}
	json__key(w, by == BY_PROC	? "processes"
		     : by == BY_CGROUP	? "cgroups"
		     : by == BY_COMMAND ? "commands"
					: "containers");
	json__begin_array(w);
	if (g)
		qsort(g, n, sizeof(*g), cmp_group);
	for (i = 0; g && i < n && (by != BY_PROC || i < JSON_MAX_PROCS); i++) {
		const struct group *x = g[i];
		const char *cp = by == BY_CONTAINER ? NULL : iostat__cg_path(s, x->cgid);

		json__begin_object(w);
		if (by == BY_PROC) {
			json__kv_u64(w, "pid", x->pid);
			json__kv_string(w, "command", x->comm);
		}
		if (by == BY_COMMAND) {
			json__kv_string(w, "command", x->comm);
			json__kv_u64(w, "processes", x->nproc);
			json_totals(w, x);
			syscalls__json_table(w, group_cell, x);
			json__end_object(w);
			continue;
		}
		if (by != BY_CONTAINER) {
			json__kv_u64(w, "cgroup_id", x->cgid);
			json__kv_string(w, "cgroup", cp);
		}
		json__key(w, by == BY_CONTAINER ? "id" : "container");
		json__string(w, x->container[0] ? x->container : NULL);
		if (by == BY_CONTAINER) {
			json__kv_string(w, "runtime", x->runtime);
		}
		json_totals(w, x);
		syscalls__json_table(w, group_cell, x);
		json__end_object(w);
	}
	json__end_array(w);
	groups_free(g, n);
}

/* A JSON object of BPF counters: key name, counter index; NULL-ended. */
struct counter_key {
	const char *name;
	unsigned idx;
};

static const struct counter_key lost_keys[] = {
	{"process_map_full", CABBPF_IOSTAT_STATS_FULL},
	{"file_map_full", CABBPF_IOSTAT_FILES_FULL},
	{"compat_not_decoded", CABBPF_IOSTAT_COMPAT},
	{NULL, 0},
};

static const struct counter_key kernel_keys[] = {
	{"process_keys_created", CABBPF_IOSTAT_STATS_NEW},
	{"file_keys_created", CABBPF_IOSTAT_FILES_NEW},
	{"exit_records", CABBPF_IOSTAT_EXIT_SENT},
	{"exit_ring_full", CABBPF_IOSTAT_EXIT_RING_FULL},
	{"live_records", CABBPF_IOSTAT_LIVE_SENT},
	{"live_ring_full", CABBPF_IOSTAT_LIVE_RING_FULL},
	{NULL, 0},
};

static void json_counters(struct json *w, const char *key, const struct counter_key *k,
			  const uint64_t *counts)
{
	json__key(w, key);
	json__begin_object(w);
	for (; k->name; k++) {
		json__kv_u64(w, k->name, counts[k->idx]);
	}
	json__end_object(w);
}

static int write_json(struct iostat *s, struct json *w, const struct iostat_run *r,
		      const char *path)
{
	struct group *all = group_all(s);
	struct fent **fv;
	size_t i;

	fv = malloc((s->files.n + 1) * sizeof(*fv));
	if (!all || !fv) {
		group_free(all);
		free(fv);
		return -ENOMEM;
	}
	json__begin_object(w);
	json__kv_u64(w, "version", 1);
	json__key(w, "kernel");
	features__json(w, features__get());
	json__kv_string(w, "mode", "io");
	json__key(w, "filter");
	json__begin_object(w);
	json__key(w, "pid");
	if (r->pid)
		json__u64(w, (uint64_t)r->pid);
	else
		json__null(w);
	json__kv_string(w, "cgroup", r->cgroup);
	json__kv_string(w, "container", r->container);
	json__end_object(w);
	json__kv_string(w, "stop_reason", r->stop_reason);
	outputs__json(r->outputs, "--json", path, w);
	json__kv_double(w, "duration_s", r->duration_s);
	json__key(w, "startup_s");
	if (r->startup_s >= 0)
		json__double(w, r->startup_s);
	else
		json__null(w);
	json__kv_u64(w, "calls", all->in_calls + all->out_calls);
	json__key(w, "calls_per_s");
	json__double(w, r->duration_s > 0 ? (double)(all->in_calls + all->out_calls) / r->duration_s
					  : 0.0);
	json__kv_u64(w, "kernel_calls_seen", r->counts[CABBPF_IOSTAT_CALLS]);
	json_counters(w, "lost", lost_keys, r->counts);
	json_counters(w, "kernel", kernel_keys, r->counts);
	json__kv_double(w, "cpu_s", r->cpu_s);
	json__key(w, "total");
	json__begin_object(w);
	json_totals(w, all);
	syscalls__json_table(w, group_cell, all);
	json__end_object(w);
	json_groups(s, w, BY_PROC);
	json_groups(s, w, BY_CGROUP);
	json_groups(s, w, BY_CONTAINER);
	json_groups(s, w, BY_COMMAND);
	for (i = 0; i < s->files.n; i++)
		fv[i] = s->files.v[i];
	qsort(fv, s->files.n, sizeof(*fv), cmp_file);
	json__kv_u64(w, "files_total", s->files.n + s->files_folded);
	json__key(w, "files");
	json__begin_array(w);
	for (i = 0; i < s->files.n && i < JSON_MAX_FILES; i++) {
		struct cabbpf_iofile_val t;

		iostat__file_total(fv[i], &t);
		json__begin_object(w);
		json__kv_u64(w, "pid", fv[i]->k.pid);
		json__kv_i64(w, "fd", fv[i]->fd);
		json__kv_u64(w, "inode", fv[i]->k.ino);
		json__kv_u64(w, "dev", t.dev);
		json__kv_string(w, "fd_kind", syscalls__fdkind_name(t.fdkind));
		json__kv_string(w, "name", fv[i]->name);
		json__kv_string(w, "dentry", t.name[0] ? t.name : NULL);
		json__kv_u64(w, "in_bytes", t.in_bytes);
		json__kv_u64(w, "in_calls", t.in_calls);
		json__kv_u64(w, "out_bytes", t.out_bytes);
		json__kv_u64(w, "out_calls", t.out_calls);
		json__end_object(w);
	}
	json__end_array(w);
	free(fv);
	group_free(all);
	return json__end_object(w);
}

struct json_job {
	struct iostat *s;
	const struct iostat_run *r;
	const char *path;
};

static int json_body(struct json *w, void *arg)
{
	const struct json_job *j = arg;
	int err = write_json(j->s, w, j->r, j->path);

	return err ? err : json__finish(w);
}

int iostat__report_json(struct iostat *s, const char *path, const struct iostat_run *r)
{
	struct json_job j = {s, r, path};

	return outfile__write_json(path, json_body, &j);
}
