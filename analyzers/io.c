// SPDX-License-Identifier: BSD-2-Clause
/* What is charged where is described in io.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/an_threads.h"
#include "analyzers/analyzer.h"
#include "common/emit.h"
#include "common/hmap.h"
#include "analyzers/io.h"
#include "common/json.h"
#include "cabbpf_event.h"
#include "common/syscalls.h"

struct ioan {
	const struct an_ctx *ctx;
	struct io_totals *fn; /* [nfuncs] */
	struct io_totals outside;
	struct io_sc_totals sc[CABBPF_SC__MAX][CABBPF_FD__MAX];
	struct an_threads threads; /* tid -> struct io_totals */
	uint64_t events;
	uint64_t bad;	/* unknown syscall or fd kind: counted, not charged */
	uint64_t nomem; /* per-thread totals not recorded */
};

static int ioan_init(const struct an_ctx *ctx, void **state)
{
	struct ioan *a = calloc(1, sizeof(*a));

	*state = NULL;
	if (!a)
		return -ENOMEM;
	a->ctx = ctx;
	a->fn = calloc(ctx->nfuncs ? ctx->nfuncs : 1, sizeof(*a->fn));
	if (!a->fn) {
		free(a);
		return -ENOMEM;
	}
	*state = a;
	return 0;
}

static void ioan_free(void *state)
{
	struct ioan *a = state;

	if (!a)
		return;
	an_threads__fini(&a->threads, NULL);
	free(a->fn);
	free(a);
}

static struct io_totals *thread_get(struct ioan *a, uint32_t tid)
{
	return an_threads__get(&a->threads, tid, sizeof(struct io_totals), NULL, NULL);
}

static void add(struct io_totals *t, bool out, uint64_t bytes)
{
	if (out) {
		t->out_bytes += bytes;
		t->out_calls++;
	} else {
		t->in_bytes += bytes;
		t->in_calls++;
	}
}

static void ioan_on_io(void *state, const struct an_io *io)
{
	struct ioan *a = state;
	bool out = CABBPF_SC_IS_OUTPUT(io->sc);
	struct io_sc_totals *s;
	struct io_totals *t;
	size_t i;

	if (io->sc >= CABBPF_SC__MAX || io->fdkind >= CABBPF_FD__MAX) {
		a->bad++;
		return;
	}
	a->events++;
	s = &a->sc[io->sc][io->fdkind];
	s->calls++;
	if (io->failed) {
		s->errors++;
	} else {
		s->bytes += io->ret;
		s->req += io->req;
		if (io->ret < io->req)
			s->short_calls++;
	}
	t = thread_get(a, io->tid);
	if (t)
		add(t, out, io->ret);
	else
		a->nomem++;
	if (!io->depth) {
		add(&a->outside, out, io->ret);
		return;
	}
	/* Inclusive: each function once, at its outermost live activation
	 * (the others are marked recursive). */
	for (i = 0; i < io->depth; i++) {
		const struct shadow_frame *f = &io->frames[i];

		if (f->fid < a->ctx->nfuncs && !f->recursive)
			add(&a->fn[f->fid], out, io->ret);
	}
	i = io->depth - 1;
	if (io->frames[i].fid < a->ctx->nfuncs) {
		if (out)
			a->fn[io->frames[i].fid].self_out_bytes += io->ret;
		else
			a->fn[io->frames[i].fid].self_in_bytes += io->ret;
	}
}

static void add_totals(struct io_totals *d, const struct io_totals *s)
{
	d->in_bytes += s->in_bytes;
	d->out_bytes += s->out_bytes;
	d->in_calls += s->in_calls;
	d->out_calls += s->out_calls;
	d->self_in_bytes += s->self_in_bytes;
	d->self_out_bytes += s->self_out_bytes;
}

static int ioan_merge(void *dst, const void *src)
{
	struct ioan *d = dst;
	const struct ioan *s = src;
	struct hmap_ent *e;
	size_t it = 0;
	uint32_t i, k;

	for (i = 0; i < d->ctx->nfuncs; i++)
		add_totals(&d->fn[i], &s->fn[i]);
	add_totals(&d->outside, &s->outside);
	for (i = 0; i < CABBPF_SC__MAX; i++)
		for (k = 0; k < CABBPF_FD__MAX; k++) {
			d->sc[i][k].calls += s->sc[i][k].calls;
			d->sc[i][k].errors += s->sc[i][k].errors;
			d->sc[i][k].bytes += s->sc[i][k].bytes;
			d->sc[i][k].req += s->sc[i][k].req;
			d->sc[i][k].short_calls += s->sc[i][k].short_calls;
		}
	d->events += s->events;
	d->bad += s->bad;
	d->nomem += s->nomem;
	while (hmap__next(&s->threads.map, &it, &e)) {
		struct io_totals *t;

		if (!e->val)
			continue;
		t = thread_get(d, (uint32_t)e->key);
		if (!t)
			return -ENOMEM;
		add_totals(t, (const struct io_totals *)(uintptr_t)e->val);
	}
	return 0;
}

/* ------------------------------------------------------------ queries -- */

void io__fn(const void *state, uint32_t fid, struct io_totals *t)
{
	const struct ioan *a = state;

	memset(t, 0, sizeof(*t));
	if (fid < a->ctx->nfuncs)
		*t = a->fn[fid];
}

void io__outside(const void *state, struct io_totals *t)
{
	*t = ((const struct ioan *)state)->outside;
}

void io__sc(const void *state, unsigned sc, unsigned fdkind, struct io_sc_totals *t)
{
	const struct ioan *a = state;

	memset(t, 0, sizeof(*t));
	if (sc < CABBPF_SC__MAX && fdkind < CABBPF_FD__MAX)
		*t = a->sc[sc][fdkind];
}

void io__thread(const void *state, uint32_t tid, struct io_totals *t)
{
	const struct io_totals *o = an_threads__find(&((const struct ioan *)state)->threads, tid);

	memset(t, 0, sizeof(*t));
	if (o)
		*t = *o;
}

uint64_t io__events(const void *state)
{
	return ((const struct ioan *)state)->events;
}

/* ------------------------------------------------------------ reports -- */

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

static int ioan_report_text(void *state, FILE *f)
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

static int ioan_report_json(void *state, struct json *w)
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

const struct analyzer_ops analyzer_io = {
	.name = "io",
	.help = "external input / output bytes per function activation (inclusive and self), "
		"per syscall and fd kind",
	.init = ioan_init,
	.on_call = NULL,
	.on_return = NULL,
	.merge = ioan_merge,
	.report_text = ioan_report_text,
	.lower_bounds = AN_LOST_IO,
	.report_json = ioan_report_json,
	.free = ioan_free,
	.on_io = ioan_on_io,
};
