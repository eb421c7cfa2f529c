// SPDX-License-Identifier: BSD-2-Clause
/*
 * The io analyzer's section of the report (sec.h): I/O per function and
 * per system call and fd kind, as text and JSON, from its merged instance
 * (its layout: analyzers/io_int.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "analyzers/an_threads.h"
#include "analyzers/analyzer.h"
#include "analyzers/io.h"
#include "analyzers/io_int.h"
#include "cabbpf_event.h"
#include "common/emit.h"
#include "common/hmap.h"
#include "common/json.h"
#include "common/syscalls.h"
#include "user/report/sec.h"

/* A function's row of the table: its totals first, so that the first
 * IO_TOTAL_COLS columns read any struct io_totals too. */
struct row {
	struct io_totals t;
	uint64_t bytes; /* in + out: the order */
	uint32_t fid;
	const char *name, *linkage;
	char buf[24];
};

/* The totals' columns: a function's, a thread's, the outside's. */
#define IO_TOTAL_COLS                                                                      \
	{"in_bytes", "IN_BYTES", 12, EMIT_COUNT, EMIT_COL(struct row, t.in_bytes)},         \
		{"out_bytes", "OUT_BYTES", 12, EMIT_COUNT, EMIT_COL(struct row, t.out_bytes)}, \
		{"in_calls", "IN_CALLS", 9, EMIT_COUNT, EMIT_COL(struct row, t.in_calls)},     \
	{                                                                                  \
		"out_calls", "OUT_CALLS", 9, EMIT_COUNT, EMIT_COL(struct row, t.out_calls)     \
	}

static const struct emit_col total_cols[] = {IO_TOTAL_COLS};

static const struct emit_col fn_cols[] = {
	IO_TOTAL_COLS,
	{"self_in_bytes", "SELF_IN", 12, EMIT_COUNT, EMIT_COL(struct row, t.self_in_bytes)},
	{"self_out_bytes", "SELF_OUT", 12, EMIT_COUNT, EMIT_COL(struct row, t.self_out_bytes)},
	{"name", "FUNCTION", 0, EMIT_STR, EMIT_COL(struct row, name), .flags = EMIT_GAP2},
	{"linkage_name", NULL, 0, EMIT_STR, EMIT_COL(struct row, linkage), .flags = EMIT_NONZERO},
	{"fid", NULL, 0, EMIT_U32, EMIT_COL(struct row, fid)},
};

static struct emit_val blank(const void *row, const void *ctx)
{
	(void)row;
	(void)ctx;
	return (struct emit_val){.s = ""};
}

/* The outside's text line: under the function table, no self columns. */
static const struct emit_col outside_cols[] = {
	IO_TOTAL_COLS,
	{NULL, "", 12, EMIT_STR, EMIT_FN(blank)},
	{NULL, "", 12, EMIT_STR, EMIT_FN(blank)},
	{NULL, "", 0, EMIT_STR, EMIT_COL(struct row, name), .flags = EMIT_GAP2},
};

static int cmp_row(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return a->fid < b->fid ? -1 : a->fid > b->fid;
}

/* Functions with any I/O, by inclusive in + out bytes descending, named. */
static struct row *fn_rows(const struct ioan *a, size_t *n)
{
	struct row *rows = malloc((a->ctx->nfuncs + 1) * sizeof(*rows));
	uint32_t i;
	size_t k = 0;

	if (!rows)
		return NULL;
	for (i = 0; i < a->ctx->nfuncs; i++) {
		const struct io_totals *t = &a->fn[i];

		if (!t->in_calls && !t->out_calls)
			continue;
		rows[k].t = *t;
		rows[k].bytes = t->in_bytes + t->out_bytes;
		rows[k].fid = i;
		k++;
	}
	qsort(rows, k, sizeof(*rows), cmp_row);
	/* named where they stay: the name may be in the row's buf */
	for (i = 0; i < k; i++) {
		rows[i].name = an_ctx__name(a->ctx, rows[i].fid, rows[i].buf);
		rows[i].linkage = an_ctx__linkage(a->ctx, rows[i].fid);
	}
	*n = k;
	return rows;
}

/* syscalls_cell_fn over the analyzer's table. */
static void sc_cell(const void *ctx, unsigned sc, unsigned k, struct syscalls_cell *c)
{
	const struct io_sc_totals *t = &((const struct ioan *)ctx)->sc[sc][k];

	*c = (struct syscalls_cell){.calls = t->calls,
				    .errors = t->errors,
				    .bytes = t->bytes,
				    .req = t->req,
				    .short_calls = t->short_calls};
}

int sec_io__text(void *state, FILE *f)
{
	struct ioan *a = state;
	struct row *rows, out = {.t = a->outside, .name = "<outside traced functions>"};
	size_t n = 0, i;
	/* A lost I/O event is missing from every total it would be in. (A
	 * lost call event moves I/O between functions, both ways: no bound.) */
	bool lb = an_ctx__lb(a->ctx, AN_LOST_IO);

	rows = fn_rows(a, &n);
	if (!rows)
		return -ENOMEM;
	fprintf(f, "I/O per function: %" PRIu64 " I/O calls, %zu function%s with I/O "
		   "(inclusive: descendants' I/O counted)\n",
		a->events, n, n == 1 ? "" : "s");
	emit__head(f, fn_cols, EMIT_N(fn_cols));
	for (i = 0; i < n && i < a->ctx->top; i++)
		emit__row_text(f, fn_cols, EMIT_N(fn_cols), &rows[i], lb, NULL);
	if (n > a->ctx->top)
		fprintf(f, "  ... %zu more functions (the JSON report has all)\n", n - a->ctx->top);
	if (a->outside.in_calls || a->outside.out_calls)
		emit__row_text(f, outside_cols, EMIT_N(outside_cols), &out, lb, NULL);
	if (a->events) {
		fprintf(f, "I/O per system call and fd kind:\n");
		syscalls__text_table(f, sc_cell, a, lb);
	}
	if (a->nomem)
		fprintf(f, "  warning: %" PRIu64 " per-thread I/O totals not recorded (out of memory)\n",
			a->nomem);
	free(rows);
	return ferror(f) ? -EIO : 0;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

int sec_io__json(void *state, struct json *w)
{
	struct ioan *a = state;
	struct hmap_ent *e;
	struct row *rows;
	uint64_t *tids;
	size_t n = 0, i, it = 0, nt = 0;

	rows = fn_rows(a, &n);
	tids = malloc((hmap__len(&a->threads.map) + 1) * sizeof(*tids));
	if (!rows || !tids) {
		free(rows);
		free(tids);
		return -ENOMEM;
	}
	json__key(w, "io");
	json__begin_object(w);
	json__kv_u64(w, "events", a->events);
	json__key(w, "functions");
	json__begin_array(w);
	for (i = 0; i < n; i++) {
		json__begin_object(w);
		emit__row_json(w, fn_cols, EMIT_N(fn_cols), &rows[i], NULL);
		json__end_object(w);
	}
	json__end_array(w);
	json__key(w, "outside");
	json__begin_object(w);
	emit__row_json(w, total_cols, EMIT_N(total_cols), &a->outside, NULL);
	json__end_object(w);
	syscalls__json_table(w, sc_cell, a);
	while (hmap__next(&a->threads.map, &it, &e))
		if (e->val)
			tids[nt++] = e->key;
	qsort(tids, nt, sizeof(*tids), cmp_u64);
	json__key(w, "threads");
	json__begin_object(w);
	for (i = 0; i < nt; i++) {
		json__key_u64(w, tids[i]);
		json__begin_object(w);
		emit__row_json(w, total_cols, EMIT_N(total_cols),
			       an_threads__find(&a->threads, (uint32_t)tids[i]), NULL);
		json__end_object(w);
	}
	json__end_object(w);
	json__kv_u64(w, "bad_records", a->bad);
	json__kv_u64(w, "nomem", a->nomem);
	free(rows);
	free(tids);
	return json__end_object(w);
}
