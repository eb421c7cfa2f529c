// SPDX-License-Identifier: BSD-2-Clause
/*
 * The count analyzer's section of the report (sec.h): calls per function,
 * per thread, and a sampled or --budget run's estimates, as text and JSON,
 * from its merged instance (its layout: analyzers/count_int.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "analyzers/an_threads.h"
#include "analyzers/analyzer.h"
#include "analyzers/count.h"
#include "analyzers/count_int.h"
#include "analyzers/sampling.h"
#include "common/emit.h"
#include "common/hmap.h"
#include "common/json.h"
#include "common/log.h"
#include "user/report/sec.h"

/* Columns of per-thread calls in the text table; more threads share an
 * "OTHER" column so the table stays readable. */
#define TEXT_THREAD_COLS 4
/* Calls descending, then name, then fid: a stable, readable order. */
static int cmp_count_row(const void *a, const void *b)
{
	const struct count_row *x = a, *y = b;
	int r;

	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	if (x->name && y->name) {
		r = strcmp(x->name, y->name);
		if (r)
			return r;
	}
	return x->fid < y->fid ? -1 : x->fid > y->fid;
}

/* Every function (called == false) or only the called ones, sorted. */
static struct count_row *fn_rows(const struct count *c, bool only_called, size_t *n)
{
	struct count_row *rows = malloc((c->ctx->nfuncs ? c->ctx->nfuncs : 1) * sizeof(*rows));
	size_t k = 0;
	uint32_t i;

	if (!rows)
		return NULL;
	for (i = 0; i < c->ctx->nfuncs; i++) {
		if (only_called && !c->fn[i].calls)
			continue;
		rows[k].calls = c->fn[i].calls;
		rows[k].name = c->ctx->fnames ? c->ctx->fnames[i] : NULL;
		rows[k].fid = i;
		k++;
	}
	qsort(rows, k, sizeof(*rows), cmp_count_row);
	*n = k;
	return rows;
}

static int cmp_thread_calls(const void *a, const void *b)
{
	const struct count_thread *x = *(const struct count_thread *const *)a;
	const struct count_thread *y = *(const struct count_thread *const *)b;

	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_thread_tid(const void *a, const void *b)
{
	const struct count_thread *x = *(const struct count_thread *const *)a;
	const struct count_thread *y = *(const struct count_thread *const *)b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The threads as an array (caller frees), sorted by cmp. */
static struct count_thread **thread_list(const struct count *c, size_t *n,
					 int (*cmp)(const void *, const void *))
{
	struct count_thread **v = malloc((hmap__len(&c->threads.map) + 1) * sizeof(*v));
	struct hmap_ent *e;
	size_t it = 0, k = 0;

	if (!v)
		return NULL;
	while (hmap__next(&c->threads.map, &it, &e))
		if (e->val)
			v[k++] = (struct count_thread *)(uintptr_t)e->val;
	qsort(v, k, sizeof(*v), cmp);
	*n = k;
	return v;
}

/* A function's line of the table, text and JSON. */
struct count_line {
	uint64_t calls, matched, unwound, switched, incl_ns, self_ns;
	/* --times sampled: samples and what they estimate (ns), with the
	 * 95% half-width of the self estimate */
	uint64_t samples_self, samples_incl, est_incl_ns, est_self_ns, est_self_err95_ns;
	uint64_t aft_self_ns; /* taken out of est_self_ns: the probes' aftermath */
	uint32_t fid;
	const char *name, *linkage;
	char buf[24];
};

/* Its counters and times ("-" in the text when nothing was timed: no
 * matched activation, or no timestamps). unwound, switched: only when
 * some, activations closed without a return event for a known reason
 * (GUARD events; docs/json-schema.md). */
/* What fig_cols need (.when): times sampled, or the traced ones. */
#define COUNT_RAW 0x1u
#define COUNT_SAMPLED 0x2u

static const struct emit_col fig_cols_all[] = {
	{"calls", "CALLS", 12, EMIT_COUNT, EMIT_COL(struct count_line, calls)},
	{"matched", NULL, 0, EMIT_U64, EMIT_COL(struct count_line, matched)},
	{"unwound", NULL, 0, EMIT_U64, EMIT_COL(struct count_line, unwound), .flags = EMIT_NONZERO},
	{"switched", NULL, 0, EMIT_U64, EMIT_COL(struct count_line, switched),
	 .flags = EMIT_NONZERO},
	/* the traced wall times, probes included: the text's with
	 * --times raw (or no sampler), the JSON's always */
	{NULL, "INCL_MS", 10, EMIT_NS_MS, EMIT_COL(struct count_line, incl_ns),
	 .flags = EMIT_DASH0, .when = COUNT_RAW},
	{NULL, "SELF_MS", 10, EMIT_NS_MS, EMIT_COL(struct count_line, self_ns),
	 .flags = EMIT_DASH0, .when = COUNT_RAW},
	{"incl_ns", NULL, 0, EMIT_U64, EMIT_COL(struct count_line, incl_ns)},
	{"self_ns", NULL, 0, EMIT_U64, EMIT_COL(struct count_line, self_ns)},
	/* --times sampled: the program's own time (docs/times.md) */
	{"est_incl_ns", "INCL_MS", 10, EMIT_NS_MS, EMIT_COL(struct count_line, est_incl_ns),
	 .when = COUNT_SAMPLED},
	{"est_self_ns", "SELF_MS", 10, EMIT_NS_MS, EMIT_COL(struct count_line, est_self_ns),
	 .when = COUNT_SAMPLED},
	{"est_self_err95_ns", "+-SELF", 8, EMIT_NS_MS,
	 EMIT_COL(struct count_line, est_self_err95_ns), .when = COUNT_SAMPLED},
	{"samples_self", NULL, 0, EMIT_U64, EMIT_COL(struct count_line, samples_self),
	 .when = COUNT_SAMPLED},
	{"samples_incl", NULL, 0, EMIT_U64, EMIT_COL(struct count_line, samples_incl),
	 .when = COUNT_SAMPLED},
	{"aft_self_ns", NULL, 0, EMIT_U64, EMIT_COL(struct count_line, aft_self_ns),
	 .when = COUNT_SAMPLED},
};

/* Its names (after the per-thread columns in the text). */
static const struct emit_col name_cols[] = {
	{"name", "FUNCTION", 0, EMIT_STR, EMIT_COL(struct count_line, name), .flags = EMIT_GAP2},
	{"linkage_name", NULL, 0, EMIT_STR, EMIT_COL(struct count_line, linkage),
	 .flags = EMIT_NONZERO},
	{"fid", NULL, 0, EMIT_U32, EMIT_COL(struct count_line, fid)},
};

/* *l: function fid's line. l->name may point into l->buf. carried: the
 * sampled totals the call tree carried up (sec_cct__fn_totals), or NULL. */
static void count_line(const struct count *c, uint32_t fid, const uint64_t *carried,
		       struct count_line *l)
{
	const struct count_fn *fn = &c->fn[fid];

	l->calls = fn->calls;
	l->matched = fn->t.matched;
	l->unwound = fn->t.unwound;
	l->switched = fn->t.switched;
	l->incl_ns = fn->t.incl_ns;
	l->self_ns = fn->t.self_ns;
	l->samples_self = fn->t.samples_self;
	l->samples_incl = fn->t.samples_incl;
	l->aft_self_ns = fn->t.aft_self_ns;
	l->est_self_ns = an_ctx__own_ns(c->ctx, l->samples_self, fn->t.aft_self_ns);
	/* The tree's, where it ran: each total carried up from its
	 * contexts' selves (cct__carry_times), so none is below a callee's.
	 * Else this function's own sum, the aftermath under it all taken
	 * out: never below its self, but (a callee's aftermath larger than
	 * its samples) it can fall below a callee's total. */
	l->est_incl_ns =
		carried ? carried[fid] : an_ctx__own_ns(c->ctx, l->samples_incl, fn->t.aft_incl_ns);
	if (l->est_incl_ns < l->est_self_ns)
		l->est_incl_ns = l->est_self_ns;
	l->est_self_err95_ns = an_ctx__sampled_err95_ns(c->ctx, l->samples_self);
	l->fid = fid;
	l->name = an_ctx__name(c->ctx, fid, l->buf);
	l->linkage = an_ctx__linkage(c->ctx, fid);
}

/* sec_count__text_tree's tree's totals, into a new array (the caller
 * frees), or NULL: no tree, times not sampled, or out of memory (then the
 * count's own figures). */
static uint64_t *carried_of(const struct count *c, void *tree)
{
	uint64_t *incl;

	if (!tree || !c->ctx->cpu_sample_ns)
		return NULL;
	incl = calloc((size_t)c->ctx->nfuncs + 1, sizeof(*incl));
	if (incl && sec_cct__fn_totals(tree, incl, c->ctx->nfuncs)) {
		free(incl);
		incl = NULL;
	}
	return incl;
}

int sec_count__text(void *state, FILE *f)
{
	return sec_count__text_tree(state, NULL, f);
}

int sec_count__json(void *state, struct json *w)
{
	return sec_count__json_tree(state, NULL, w);
}

int sec_count__text_tree(void *state, void *tree, FILE *f)
{
	struct count *c = state;
	uint64_t *carried = carried_of(c, tree);
	struct count_thread **th = NULL;
	struct count_row *rows = NULL;
	size_t nrows = 0, nth = 0, ncols, i, j;
	bool lb = an_ctx__lb(c->ctx, AN_LOST_CALLS);
	struct emit_col fig_cols[EMIT_N(fig_cols_all)];
	size_t nfig = emit__select(fig_cols, fig_cols_all, EMIT_N(fig_cols_all),
				   c->ctx->cpu_sample_ns ? COUNT_SAMPLED : COUNT_RAW);
	char buf[24];
	int err = 0;

	rows = fn_rows(c, true, &nrows);
	th = thread_list(c, &nth, cmp_thread_calls);
	if (!rows || !th) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* Per-thread columns only when there is more than one thread. */
	ncols = nth > 1 ? (nth > TEXT_THREAD_COLS ? TEXT_THREAD_COLS : nth) : 0;
	/* of the functions traced: the summary's total, not the table's */
	fprintf(f, "calls per function: %zu of %" PRIu32 " functions called, by %zu thread%s\n",
		nrows, c->ctx->ntraced ? c->ctx->ntraced : c->ctx->nfuncs, nth,
		nth == 1 ? "" : "s");
	if (c->ctx->cpu_sample_ns)
		fprintf(f,
			"  times: the program's own %s, sampled every %.3g ms "
			"(probes not included%s; +-SELF: 95%%, of the sampling)\n",
			an_ctx__sampled_what(c->ctx), (double)c->ctx->cpu_sample_ns / 1e6,
			c->ctx->aft_in ? ", nor their measured aftermath"
				       : "; their aftermath is: not measured");
	else
		fprintf(f, "  times: traced wall time, probes included\n");
	emit__head_cells(f, fig_cols, nfig, true);
	for (j = 0; j < ncols; j++) {
		snprintf(buf, sizeof(buf), "T%" PRIu32, th[j]->tid);
		fprintf(f, " %10s", buf);
	}
	if (nth > ncols && ncols)
		fprintf(f, " %10s", "OTHER");
	emit__head_cells(f, name_cols, EMIT_N(name_cols), false);
	fputc('\n', f);
	for (i = 0; i < nrows && i < c->ctx->top; i++) {
		struct count_line l;
		uint64_t shown = 0, *v;

		count_line(c, rows[i].fid, carried, &l);
		emit__cells(f, fig_cols, nfig, &l, lb, NULL, true);
		for (j = 0; j < ncols; j++) {
			v = hmap__find(&th[j]->fn, rows[i].fid);
			fputc(' ', f);
			emit__count(f, 10, v ? *v : 0, lb);
			shown += v ? *v : 0;
		}
		if (nth > ncols && ncols) {
			fputc(' ', f);
			emit__count(f, 10, l.calls - shown, lb);
		}
		emit__cells(f, name_cols, EMIT_N(name_cols), &l, lb, NULL, false);
		fputc('\n', f);
	}
	if (nrows > c->ctx->top)
		fprintf(f, "  ... %zu more functions (the JSON report has all)\n",
			nrows - c->ctx->top);
	if (c->ctx->budget)
		sec_count__budget_text(c, f);
	else if (c->ctx->windows)
		sec_count__estimates_text(c, rows, nrows, f);
	if (c->nomem)
		fprintf(f, "  warning: %" PRIu64 " per-thread calls not recorded (out of memory)\n",
			c->nomem);
	if (ferror(f))
		err = -EIO;
cleanup:
	free(rows);
	free(th);
	free(carried);
	return err;
}

/* Index of per-thread calls by fid: for each fid, a run of (tid, calls)
 * pairs in tid order, built in O(threads x functions seen). */
struct by_fid {
	size_t *start; /* [nfuncs + 1] */
	struct {
		uint32_t tid;
		uint64_t calls;
	} * pairs;
};

static int by_fid_build(const struct count *c, struct count_thread **th, size_t nth,
			struct by_fid *b)
{
	uint32_t nf = c->ctx->nfuncs;
	struct hmap_ent *e;
	size_t *fill = NULL, total = 0, i, it;
	int err = -ENOMEM;

	memset(b, 0, sizeof(*b));
	b->start = calloc((size_t)nf + 1, sizeof(*b->start));
	fill = calloc((size_t)nf + 1, sizeof(*fill));
	if (!b->start || !fill)
		goto cleanup;
	for (i = 0; i < nth; i++) {
		it = 0;
		while (hmap__next(&th[i]->fn, &it, &e))
			if (e->key < nf) {
				b->start[e->key + 1]++;
				total++;
			}
	}
	for (i = 0; i < nf; i++)
		b->start[i + 1] += b->start[i];
	b->pairs = malloc((total + 1) * sizeof(*b->pairs));
	if (!b->pairs)
		goto cleanup;
	memcpy(fill, b->start, ((size_t)nf + 1) * sizeof(*fill));
	/* th[] is in tid order, so each fid's run comes out in tid order. */
	for (i = 0; i < nth; i++) {
		it = 0;
		while (hmap__next(&th[i]->fn, &it, &e)) {
			if (e->key >= nf)
				continue;
			b->pairs[fill[e->key]].tid = th[i]->tid;
			b->pairs[fill[e->key]].calls = e->val;
			fill[e->key]++;
		}
	}
	err = 0;
cleanup:
	free(fill);
	return err;
}

static void by_fid_free(struct by_fid *b)
{
	free(b->start);
	free(b->pairs);
}

static int thread_functions_json(const struct count *c, const struct count_thread *t,
				 struct json *w)
{
	struct count_row *rows = malloc((hmap__len(&t->fn) + 1) * sizeof(*rows));
	struct hmap_ent *e;
	size_t it = 0, k = 0, i;
	char buf[24];

	if (!rows)
		return -ENOMEM;
	while (hmap__next(&t->fn, &it, &e)) {
		rows[k].calls = e->val;
		rows[k].fid = (uint32_t)e->key;
		rows[k].name =
			c->ctx->fnames && e->key < c->ctx->nfuncs ? c->ctx->fnames[e->key] : NULL;
		k++;
	}
	qsort(rows, k, sizeof(*rows), cmp_count_row);
	json__begin_object(w);
	for (i = 0; i < k; i++) {
		json__kv_u64(w, an_ctx__name(c->ctx, rows[i].fid, buf), rows[i].calls);
	}
	free(rows);
	return json__end_object(w);
}

int sec_count__json_tree(void *state, void *tree, struct json *w)
{
	struct count *c = state;
	uint64_t *carried = carried_of(c, tree);
	struct count_thread **th = NULL;
	struct count_row *rows = NULL;
	struct by_fid b = {0};
	size_t nrows = 0, nth = 0, i, j;
	struct emit_col fig_cols[EMIT_N(fig_cols_all)];
	size_t nfig = emit__select(fig_cols, fig_cols_all, EMIT_N(fig_cols_all),
				   COUNT_RAW | (c->ctx->cpu_sample_ns ? COUNT_SAMPLED : 0));
	int err;

	rows = fn_rows(c, c->ctx->called_only, &nrows);
	th = thread_list(c, &nth, cmp_thread_tid);
	if (!rows || !th) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = by_fid_build(c, th, nth, &b);
	if (err)
		goto cleanup;

	json__key(w, "functions");
	json__begin_array(w);
	for (i = 0; i < nrows; i++) {
		const struct count_fn *fn = &c->fn[rows[i].fid];
		struct count_line l;

		count_line(c, rows[i].fid, carried, &l);
		json__begin_object(w);
		emit__row_json(w, name_cols, EMIT_N(name_cols), &l, NULL);
		an_ctx__json_src(c->ctx, rows[i].fid, w);
		emit__row_json(w, fig_cols, nfig, &l, NULL);
		if (c->ctx->budget) {
			double est, err95;
			uint32_t df;
			enum an_best k = sampling__budget_estimate(c->ctx->budget, rows[i].fid, fn->wc.w,
							  fn->wc.n, &est, &err95, &df);

			/* --budget: the whole run's calls (exact, estimated
			 * or a lower bound: "estimate" says which). */
			json__kv_string(w, "estimate", sampling__best_name(k));
			/* how much of its windows were traps (see the text) */
			if (k == AN_BEST_ESTIMATED)
				json__kv_double(w, "window_probe_share",
						sampling__window_share(c->ctx->budget, rows[i].fid));
			if (k != AN_BEST_NONE) {
				json__kv_u64(w, "calls_est", (uint64_t)llround(est));
				json__kv_u64(w, "calls_est_err95",
					     (uint64_t)llround(err95 > 0 ? err95 : 0));
				/* what the interval rests on (sampling__mssd_df) */
				if (k == AN_BEST_ESTIMATED)
					json__kv_u64(w, "calls_est_df", df);
			}
		} else if (c->ctx->windows) {
			double est, err95;

			/* Sampling: the whole run's calls, estimated from
			 * the windows (analyzers/sampling.h), or what they
			 * saw where they cannot stand for the run. */
			enum an_best k = sampling__estimate(fn->wc.w, fn->wc.n, c->ctx->windows,
							    &est, &err95);

			sections__estimate_json(w, k, est, err95, sampling__df(c->ctx->windows));
		}
		json__key(w, "threads");
		json__begin_object(w);
		for (j = b.start[rows[i].fid]; j < b.start[rows[i].fid + 1]; j++) {
			json__key_u64(w, b.pairs[j].tid);
			json__u64(w, b.pairs[j].calls);
		}
		json__end_object(w);
		json__end_object(w);
	}
	json__end_array(w);

	json__key(w, "threads");
	json__begin_object(w);
	for (i = 0; i < nth; i++) {
		json__key_u64(w, th[i]->tid);
		json__begin_object(w);
		json__kv_u64(w, "calls", th[i]->calls);
		json__key(w, "functions");
		err = thread_functions_json(c, th[i], w);
		if (err)
			goto cleanup;
		json__end_object(w);
	}
	err = json__end_object(w);
	if (c->nomem)
		log_warn("count: %" PRIu64 " per-thread calls not recorded (out of memory)",
			 c->nomem);
cleanup:
	by_fid_free(&b);
	free(rows);
	free(th);
	free(carried);
	return err;
}
