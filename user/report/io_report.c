// SPDX-License-Identifier: BSD-2-Clause
/* --io's report (io_report.h): its tables described once each
 * (common/emit.h) and written as text and as JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/emit.h"
#include "common/json.h"
#include "common/outfile.h"
#include "common/outputs.h"
#include "common/syscalls.h"
#include "user/iomode/iostat_groups.h"
#include "user/kernel/features.h"
#include "user/report/io_report.h"

/* __u64 is unsigned long long, uint64_t unsigned long: print through this. */
#define U(x) ((uint64_t)(x))
#define JSON_MAX_FILES 1000
#define JSON_MAX_PROCS 1000
#define H_STR2(x) #x
#define H_STR(x) H_STR2(x)


/* The resolved name, else the kernel's last path component, else a note. */
static const char *file_name(const struct iostat_file *e, const struct cabbpf_iofile_val *t,
			     char *buf, size_t len)
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

/* --------------------------------------------- the groups' tables -- */

/* syscalls_cell_fn over a group's table. */
static void group_cell(const void *ctx, unsigned sc, unsigned k, struct syscalls_cell *c)
{
	const struct cabbpf_iostat_val *v = iostat__group_cell(ctx, sc, k);

	*c = (struct syscalls_cell){.calls = v->calls,
				    .errors = v->errors,
				    .bytes = v->bytes,
				    .req = v->req,
				    .short_calls = v->short_calls,
				    .hist_req = v->hist_req,
				    .hist_ret = v->hist_ret};
}



/* Its container's id; NULL outside containers. */
static struct emit_val g_container(const void *row, const void *ctx)
{
	const struct iostat_group *g = row;

	(void)ctx;
	return (struct emit_val){.s = g->container[0] ? g->container : NULL};
}

static struct emit_val g_short_ratio(const void *row, const void *ctx)
{
	const struct iostat_group *g = row;

	(void)ctx;
	return (struct emit_val){.d = ratio(g->in_short, g->in_ok)};
}

/* The totals every group has, text and JSON. */
#define G_TOTALS                                                                            \
	{"in_bytes", "IN_BYTES", 12, EMIT_U64, EMIT_COL(struct iostat_group, in_bytes)},            \
		{"in_calls", "IN_CALLS", 9, EMIT_U64, EMIT_COL(struct iostat_group, in_calls)},     \
		{"out_bytes", "OUT_BYTES", 12, EMIT_U64, EMIT_COL(struct iostat_group, out_bytes)}, \
	{                                                                                   \
		"out_calls", "OUT_CALLS", 9, EMIT_U64, EMIT_COL(struct iostat_group, out_calls)    \
	}
#define G_SHORT_RATIO {"short_read_ratio", "SHORT%", 6, EMIT_PCT, EMIT_FN(g_short_ratio)}
#define G_SHORT_READS {"short_reads", NULL, 0, EMIT_U64, EMIT_COL(struct iostat_group, in_short)}
#define G_ERRORS(head) {"errors", head, 7, EMIT_U64, EMIT_COL(struct iostat_group, errors)}

static const struct emit_col proc_cols[] = {
	{"pid", "PID", 8, EMIT_U32, EMIT_COL(struct iostat_group, pid)},
	{"command", "COMMAND", -16, EMIT_CHARS, EMIT_COL(struct iostat_group, comm), .prec = 16},
	G_TOTALS,
	G_SHORT_RATIO,
	G_ERRORS("ERRORS"),
	G_SHORT_READS,
	{"cgroup_id", NULL, 0, EMIT_U64, EMIT_COL(struct iostat_group, cgid)},
	{"cgroup", "CGROUP", 0, EMIT_STR, EMIT_COL(struct iostat_group, cgroup), .flags = EMIT_GAP2},
	{"container", NULL, 0, EMIT_STR, EMIT_FN(g_container)},
};

static const struct emit_col command_cols[] = {
	{"processes", "PROCS", 8, EMIT_U64, EMIT_COL(struct iostat_group, nproc)},
	{"command", "COMMAND", -16, EMIT_CHARS, EMIT_COL(struct iostat_group, comm), .prec = 16},
	G_TOTALS,
	G_SHORT_RATIO,
	G_ERRORS("ERRORS"),
	G_SHORT_READS,
};

static const struct emit_col cgroup_cols[] = {
	G_TOTALS,
	G_SHORT_RATIO,
	G_ERRORS(NULL),
	G_SHORT_READS,
	{"cgroup", "CGROUP", 0, EMIT_STR, EMIT_COL(struct iostat_group, cgroup), .flags = EMIT_GAP2},
	{"cgroup_id", "", 0, EMIT_U64, EMIT_COL(struct iostat_group, cgid), .fmt = " (id %" PRIu64 ")"},
	{"container", NULL, 0, EMIT_STR, EMIT_FN(g_container)},
};

static const struct emit_col container_cols[] = {
	G_TOTALS,
	G_SHORT_RATIO,
	G_ERRORS(NULL),
	G_SHORT_READS,
	{"runtime", "RUNTIME", -10, EMIT_STR, EMIT_COL(struct iostat_group, runtime),
	 .flags = EMIT_GAP2},
	{"id", "CONTAINER", 0, EMIT_STR, EMIT_FN(g_container), .prec = 12},
};

/* The whole run's totals (JSON). */
static const struct emit_col total_cols[] = {G_TOTALS, G_ERRORS(NULL), G_SHORT_READS,
					    G_SHORT_RATIO};

/* How each grouping is shown. */
static const struct gview {
	const char *title; /* the text's */
	const char *key;   /* the JSON's */
	const struct emit_col *cols;
	size_t ncols;
} gviews[] = {
	[IOSTAT_BY_PROC] = {"processes", "processes", proc_cols, EMIT_N(proc_cols)},
	[IOSTAT_BY_CGROUP] = {"cgroups", "cgroups", cgroup_cols, EMIT_N(cgroup_cols)},
	[IOSTAT_BY_CONTAINER] = {"containers", "containers", container_cols, EMIT_N(container_cols)},
	[IOSTAT_BY_COMMAND] = {"commands", "commands", command_cols, EMIT_N(command_cols)},
};

static void text_groups(struct iostat *s, FILE *f, enum iostat_by by)
{
	const struct gview *v = &gviews[by];
	struct iostat_info info;
	struct iostat_group **g;
	size_t n = 0, i;

	iostat__info(s, &info);
	g = iostat__groups(s, by, &n);
	if (!g)
		return;
	if (by == IOSTAT_BY_CONTAINER && !n) {
		iostat__groups_free(g, n);
		return;
	}
	fprintf(f, "%s by input bytes (%zu):\n", v->title, n);
	emit__head(f, v->cols, v->ncols);
	for (i = 0; i < n && i < info.top; i++)
		emit__row_text(f, v->cols, v->ncols, g[i], false, NULL);
	if (n > info.top)
		fprintf(f, "  ... %zu more (the JSON report has %s)\n", n - info.top,
			by == IOSTAT_BY_PROC && n > JSON_MAX_PROCS ? "the first " H_STR(JSON_MAX_PROCS)
							    : "all");
	if (by == IOSTAT_BY_PROC && info.procs_folded)
		fprintf(f,
			"  and %" PRIu64 " ended processes with the least I/O, counted in their "
			"commands' rows only\n",
			info.procs_folded);
	fputc('\n', f);
	iostat__groups_free(g, n);
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

/* ---------------------------------------------- the files' table -- */

/* A file's row: its figures and its names. */
struct file_row {
	struct iostat_file e;
	const char *fd_kind, *dentry, *shown;
	char buf[96];
};

static const struct emit_col file_cols[] = {
	{"pid", "PID", 8, EMIT_U32, EMIT_COL(struct file_row, e.pid)},
	{"fd", "FD", 5, EMIT_INT, EMIT_COL(struct file_row, e.fd)},
	{"inode", NULL, 0, EMIT_U64, EMIT_COL(struct file_row, e.ino)},
	{"dev", NULL, 0, EMIT_U64, EMIT_COL(struct file_row, e.t.dev)},
	{"fd_kind", "KIND", -7, EMIT_STR, EMIT_COL(struct file_row, fd_kind)},
	{"name", NULL, 0, EMIT_STR, EMIT_COL(struct file_row, e.name)},
	{"dentry", NULL, 0, EMIT_STR, EMIT_COL(struct file_row, dentry)},
	{"in_bytes", "IN_BYTES", 12, EMIT_U64, EMIT_COL(struct file_row, e.t.in_bytes)},
	{"in_calls", "IN_CALLS", 9, EMIT_U64, EMIT_COL(struct file_row, e.t.in_calls)},
	{"out_bytes", "OUT_BYTES", 12, EMIT_U64, EMIT_COL(struct file_row, e.t.out_bytes)},
	{"out_calls", "OUT_CALLS", 9, EMIT_U64, EMIT_COL(struct file_row, e.t.out_calls)},
	{NULL, "NAME", 0, EMIT_STR, EMIT_COL(struct file_row, shown), .flags = EMIT_GAP2},
};

/* *r: file e's row. Its names may point into r. */
static void file_row(const struct iostat_file *e, struct file_row *r)
{
	r->e = *e;
	r->fd_kind = syscalls__fdkind_name(r->e.t.fdkind);
	r->dentry = r->e.t.name[0] ? r->e.t.name : NULL;
	r->shown = file_name(&r->e, &r->e.t, r->buf, sizeof(r->buf));
}

int io_report__text(struct iostat *s, FILE *f, const struct iostat_run *r)
{
	struct iostat_group *all = iostat__group_all(s);
	struct cabbpf_iostat_val in;
	struct iostat_file *fv = NULL;
	struct iostat_info info;
	unsigned sc, k, b;
	char who[64];
	size_t i, nf = 0;

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
	text_groups(s, f, IOSTAT_BY_PROC);
	text_groups(s, f, IOSTAT_BY_COMMAND);
	text_groups(s, f, IOSTAT_BY_CGROUP);
	text_groups(s, f, IOSTAT_BY_CONTAINER);

	fprintf(f, "by system call and fd kind:\n");
	syscalls__text_table(f, group_cell, all, false);
	memset(&in, 0, sizeof(in));
	for (sc = 0; sc < CABBPF_SC__MAX; sc++)
		for (k = 0; k < CABBPF_FD__MAX; k++) {
			const struct cabbpf_iostat_val *v = iostat__group_cell(all, sc, k);

			if (v->calls && !CABBPF_SC_IS_OUTPUT(sc))
				for (b = 0; b < CABBPF_HIST_BUCKETS; b++) {
					in.hist_req[b] += v->hist_req[b];
					in.hist_ret[b] += v->hist_ret[b];
				}
		}
	fprintf(f, "\ninput sizes, log2 buckets [lo,hi) bytes: calls\n");
	text_hist(f, "requested", in.hist_req);
	text_hist(f, "returned ", in.hist_ret);

	iostat__info(s, &info);
	fv = iostat__files(s, &nf);
	if (fv) {
		fprintf(f, "\ntop files and sockets by input bytes:\n");
		emit__head(f, file_cols, EMIT_N(file_cols));
		for (i = 0; i < nf && i < info.top; i++) {
			struct file_row r;

			file_row(&fv[i], &r);
			emit__row_text(f, file_cols, EMIT_N(file_cols), &r, false, NULL);
		}
		free(fv);
	}
	iostat__group_free(all);
	return ferror(f) ? -EIO : 0;
}

/* -------------------------------------------------------------- JSON -- */

static void json_groups(struct iostat *s, struct json *w, enum iostat_by by)
{
	const struct gview *v = &gviews[by];
	struct iostat_info info;
	struct iostat_group **g;
	size_t n = 0, i;

	iostat__info(s, &info);
	g = iostat__groups(s, by, &n);
	if (by == IOSTAT_BY_PROC) {
		json__kv_u64(w, "processes_total", n + info.procs_folded);
		json__kv_u64(w, "processes_folded", info.procs_folded);
	}
	json__key(w, v->key);
	json__begin_array(w);
	for (i = 0; g && i < n && (by != IOSTAT_BY_PROC || i < JSON_MAX_PROCS); i++) {
		json__begin_object(w);
		emit__row_json(w, v->cols, v->ncols, g[i], NULL);
		syscalls__json_table(w, group_cell, g[i]);
		json__end_object(w);
	}
	json__end_array(w);
	iostat__groups_free(g, n);
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
	struct iostat_group *all = iostat__group_all(s);
	struct iostat_file *fv;
	struct iostat_info info;
	size_t i, nf = 0;

	iostat__info(s, &info);
	fv = iostat__files(s, &nf);
	if (!all || !fv) {
		iostat__group_free(all);
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
	emit__row_json(w, total_cols, EMIT_N(total_cols), all, NULL);
	syscalls__json_table(w, group_cell, all);
	json__end_object(w);
	json_groups(s, w, IOSTAT_BY_PROC);
	json_groups(s, w, IOSTAT_BY_CGROUP);
	json_groups(s, w, IOSTAT_BY_CONTAINER);
	json_groups(s, w, IOSTAT_BY_COMMAND);
	json__kv_u64(w, "files_total", nf + info.files_folded);
	json__key(w, "files");
	json__begin_array(w);
	for (i = 0; i < nf && i < JSON_MAX_FILES; i++) {
		struct file_row fr;

		file_row(&fv[i], &fr);
		json__begin_object(w);
		emit__row_json(w, file_cols, EMIT_N(file_cols), &fr, NULL);
		json__end_object(w);
	}
	json__end_array(w);
	free(fv);
	iostat__group_free(all);
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

int io_report__json(struct iostat *s, const char *path, const struct iostat_run *r)
{
	struct json_job j = {s, r, path};

	return outfile__write_json(path, json_body, &j);
}
