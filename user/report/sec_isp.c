// SPDX-License-Identifier: BSD-2-Clause
/*
 * The isp analyzer's section of the report (sec.h; the analyzer: isp.h,
 * its layout: analyzers/isp_internal.h): one row per routine with points, its
 * fit and the classes its points cannot tell apart, as text and JSON from
 * one table of columns (common/emit.h).
 *
 * What is fitted (fit.h): per size the minimum cost of its activations.
 * Noise on this machine only adds (a preemption, an interrupt, a cache
 * another thread emptied), so the minimum of the repetitions is the one
 * closest to the routine's own cost; the worst case, fitted before, moved
 * with a single preemption. Time costs have the probes of the
 * activation's traced callees taken out (their measured cost, as the
 * cct's compensated times); the activation's fixed costs (its own probes,
 * a system call) are the fit's constant a.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/analyzer.h"
#include "analyzers/fit.h"
#include "analyzers/isp.h"
#include "analyzers/isp_internal.h"
#include "common/emit.h"
#include "common/json.h"
#include "user/report/sec.h"

/* Routines at least this share of the costliest one's total are "large". */
#define LARGE_PCT 1

static const char *cost_name(enum isp_cost c)
{
	return c == ISP_COST_CALLS ? "calls" : c == ISP_COST_CPU ? "cpu" : "wall";
}

struct row {
	uint32_t fid;
	uint64_t total;
	bool fitted;
	bool bottleneck; /* significantly superlinear and a large share of the cost */
	struct fit_result fit;
};

static int cmp_row(const void *x, const void *y)
{
	const struct row *p = x, *q = y;

	if (p->bottleneck != q->bottleneck)
		return p->bottleneck ? -1 : 1;
	if (p->total != q->total)
		return p->total > q->total ? -1 : 1;
	return p->fid < q->fid ? -1 : p->fid > q->fid;
}

/* The routines with points, fitted, bottlenecks first, then by total
 * cost (rows[].fid; *n of them). NULL on -ENOMEM. */
static struct row *rows_of(struct isp *a, size_t *n)
{
	struct row *rows = malloc((a->ctx->nfuncs + 1) * sizeof(*rows));
	uint64_t maxtotal = 0;
	uint32_t i;
	size_t k = 0, j;

	if (!rows)
		return NULL;
	for (i = 0; i < a->ctx->nfuncs; i++) {
		struct isp_fn *f = &a->fn[i];
		int err;

		if (!f->n)
			continue;
		if (isp__sort(f)) {
			free(rows);
			return NULL;
		}
		rows[k] = (struct row){.fid = i, .total = f->total};
		err = isp__fit(a, f, &rows[k].fit);
		if (err == -ENOMEM) {
			free(rows);
			return NULL;
		}
		rows[k].fitted = !err;
		if (f->total > maxtotal)
			maxtotal = f->total;
		k++;
	}
	/* "Large": a share of the costliest routine's total (outer routines'
	 * inclusive cost holds their callees', so the share is of the top,
	 * not of a sum). */
	for (j = 0; j < k; j++)
		rows[j].bottleneck = rows[j].fitted && rows[j].fit.superlinear &&
				     a->fn[rows[j].fid].total * 100 >= maxtotal * LARGE_PCT;
	qsort(rows, k, sizeof(*rows), cmp_row);
	*n = k;
	return rows;
}

/* One routine's line in the table. */
struct line {
	uint64_t points, sizes, total;
	char max_size[24];
	char fit[96];
	bool fitted, has_exp;
	double exponent, r2;
	char name[160];
};

static struct emit_val exponent_of(const void *row, const void *ctx)
{
	const struct line *l = row;

	(void)ctx;
	return (struct emit_val){.d = l->exponent, .null = !l->has_exp};
}

static struct emit_val r2_of(const void *row, const void *ctx)
{
	const struct line *l = row;

	(void)ctx;
	return (struct emit_val){.d = l->r2, .null = !l->fitted};
}

static const struct emit_col line_cols[] = {
	{NULL, "POINTS", 9, EMIT_COUNT, EMIT_COL(struct line, points)},
	{NULL, "SIZES", 8, EMIT_U64, EMIT_COL(struct line, sizes)},
	{NULL, "MAX_SIZE", 9, EMIT_CHARS, EMIT_COL(struct line, max_size)},
	{NULL, "EXPONENT", 8, EMIT_DBL, EMIT_FN(exponent_of), .prec = 2},
	{NULL, "R2", 6, EMIT_DBL, EMIT_FN(r2_of), .prec = 3},
	{NULL, "TOTAL_COST", 14, EMIT_COUNT, EMIT_COL(struct line, total)},
	{NULL, "FIT", -20, EMIT_CHARS, EMIT_COL(struct line, fit), .flags = EMIT_GAP2},
	{NULL, "ROUTINE", 0, EMIT_CHARS, EMIT_COL(struct line, name), .flags = EMIT_GAP2},
};

static void line_of(const struct isp *a, const struct row *r, struct line *l)
{
	const struct isp_fn *fn = &a->fn[r->fid];
	char buf[24];
	size_t k;

	memset(l, 0, sizeof(*l));
	for (k = 0; k < fn->n; k++)
		l->points += fn->pts[k].calls;
	l->sizes = fn->n;
	l->total = fn->total;
	/* sizes from I/O bytes: each one a lower bound when I/O was lost */
	snprintf(l->max_size, sizeof(l->max_size), "%" PRIu64 "%s", fn->pts[fn->n - 1].size,
		 !fn->arg && an_ctx__lb(a->ctx, AN_LOST_IO) ? EMIT_LB_MARK : "");
	l->fitted = r->fitted;
	l->has_exp = r->fitted && r->fit.has_exponent;
	l->exponent = r->fit.exponent;
	l->r2 = r->fit.r2;
	if (r->fitted)
		fit__candidates_name(&r->fit, l->fit, sizeof(l->fit));
	else
		snprintf(l->fit, sizeof(l->fit), "-");
	snprintf(l->name, sizeof(l->name), "%s%s%s%s", r->bottleneck ? "* " : "",
		 an_ctx__name(a->ctx, r->fid, buf), fn->arg ? " [size: argument]" : "",
		 !isp__compensated(a, fn) && fn->probe_total > 0 ? " [traced]" : "");
}

int sec_isp__text(void *state, FILE *f)
{
	struct isp *a = state;
	struct row *rows;
	size_t n = 0, i, nb = 0, namb = 0, ncomp = 0, ntraced = 0;

	rows = rows_of(a, &n);
	if (!rows)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct isp_fn *fn = &a->fn[rows[i].fid];

		ncomp += isp__compensated(a, fn);
		ntraced += !isp__compensated(a, fn) && fn->probe_total > 0;
		nb += rows[i].bottleneck;
		namb += rows[i].fitted && (rows[i].fit.candidates & (rows[i].fit.candidates - 1));
	}
	fprintf(f,
		"Input-sensitive profiles: %" PRIu64 " points (activations) of %zu routine%s, "
		"cost = %s%s, size = input bytes read by the activation and its callees "
		"(or the --size argument); fit of the minimum cost per size (noise only adds)\n",
		a->points, n, n == 1 ? "" : "s", isp__cost_unit(isp__cost(a)),
		ncomp ? " (the measured cost of traced callees' probes taken out)" : "");
	if (ntraced)
		fprintf(f, "  [traced]: its traced callees' probes are over half its cost; its "
			   "traced cost is fitted (their number grows with its work)\n");
	if (nb)
		fprintf(f,
			"  * superlinear (every class up to O(n) rejected, p < %.2f) with a large "
			"total cost: likely asymptotic bottleneck%s (listed first)\n",
			FIT_ALPHA, nb == 1 ? "" : "s");
	emit__head(f, line_cols, EMIT_N(line_cols));
	for (i = 0; i < n && i < a->ctx->top; i++) {
		struct line l;

		line_of(a, &rows[i], &l);
		emit__row_text(f, line_cols, EMIT_N(line_cols), &l,
			       an_ctx__lb(a->ctx, AN_LOST_CALLS), NULL);
	}
	if (n > a->ctx->top)
		fprintf(f, "  ... %zu more routines (the JSON report has all)\n", n - a->ctx->top);
	fprintf(f, "  ('-': fewer than %d distinct sizes >= 1, no fit)\n", FIT_MIN_SIZES);
	if (namb)
		fprintf(f,
			"  ('A or B': the sizes seen cannot tell these classes apart at p < %.2f; "
			"R2 and EXPONENT are of the first)\n",
			FIT_ALPHA);
	if (a->unmatched)
		fprintf(f,
			"  %" PRIu64
			" activations ended without a return: no point (no exact cost)\n",
			a->unmatched);
	if (a->unsized)
		fprintf(f,
			"  %" PRIu64 " activations of --size routines without a size (string "
			"unreadable, or the size event lost): no point\n",
			a->unsized);
	if (a->nomem)
		fprintf(f, "  warning: %" PRIu64 " activations not recorded (out of memory)\n",
			a->nomem);
	free(rows);
	return ferror(f) ? -EIO : 0;
}

/* A point's JSON object. */
struct point_line {
	uint64_t size, calls, cost_min, cost_max;
	double cost_avg;
};

static const struct emit_col point_cols[] = {
	{"size", NULL, 0, EMIT_U64, EMIT_COL(struct point_line, size)},
	{"calls", NULL, 0, EMIT_U64, EMIT_COL(struct point_line, calls)},
	{"cost_min", NULL, 0, EMIT_U64, EMIT_COL(struct point_line, cost_min)},
	{"cost_avg", NULL, 0, EMIT_DBL, EMIT_COL(struct point_line, cost_avg)},
	{"cost_max", NULL, 0, EMIT_U64, EMIT_COL(struct point_line, cost_max)},
};

/* A class model's JSON object. */
struct model_line {
	const char *cls;
	double a, b, r2, p;
};

static const struct emit_col model_cols[] = {
	{"class", NULL, 0, EMIT_STR, EMIT_COL(struct model_line, cls)},
	{"a", NULL, 0, EMIT_DBL, EMIT_COL(struct model_line, a)},
	{"b", NULL, 0, EMIT_DBL, EMIT_COL(struct model_line, b)},
	{"r2", NULL, 0, EMIT_DBL, EMIT_COL(struct model_line, r2)},
	{"p", NULL, 0, EMIT_DBL, EMIT_COL(struct model_line, p)},
};

/* The models tried that are (candidates) or are not candidates. */
static void models_json(struct json *w, const char *key, const struct fit_result *r,
			bool candidates)
{
	int c;

	json__key(w, key);
	json__begin_array(w);
	for (c = 0; c < FIT__NCLASSES; c++) {
		const struct fit_model *m = &r->m[c];
		struct model_line l = {fit__class_name((enum fit_class)c), m->a, m->b, m->r2, m->p};

		if (!m->tried || m->candidate != candidates)
			continue;
		json__begin_object(w);
		emit__row_json(w, model_cols, EMIT_N(model_cols), &l, NULL);
		json__end_object(w);
	}
	json__end_array(w);
}

static void fit_json(struct json *w, const struct row *r)
{
	char buf[96];

	json__key(w, "fit");
	if (!r->fitted) {
		json__null(w);
		return;
	}
	json__begin_object(w);
	json__kv_string(w, "statistic", "min");
	json__kv_string(w, "class", fit__class_name(r->fit.cls));
	json__kv_string(w, "classes", fit__candidates_name(&r->fit, buf, sizeof(buf)));
	json__kv_bool(w, "ambiguous", r->fit.candidates & (r->fit.candidates - 1));
	json__kv_string(w, "best_fit", fit__class_name(r->fit.best));
	if (r->fit.has_exponent)
		json__kv_double(w, "exponent", r->fit.exponent);
	else
		json__kv_null(w, "exponent");
	json__kv_double(w, "r2", r->fit.r2);
	json__kv_double(w, "a", r->fit.a);
	json__kv_double(w, "b", r->fit.b);
	json__kv_double(w, "rel_sd", r->fit.rel_sd);
	if (r->fit.has_exponent)
		json__kv_double(w, "exponent_r2", r->fit.exp_r2);
	else
		json__kv_null(w, "exponent_r2");
	json__kv_double(w, "alpha", FIT_ALPHA);
	models_json(w, "class_candidates", &r->fit, true);
	models_json(w, "rejected", &r->fit, false);
	json__kv_bool(w, "superlinear_significant", r->fit.superlinear);
	json__kv_double(w, "superlinear_p", r->fit.superlinear_p);
	json__end_object(w);
}

int sec_isp__json(void *state, struct json *w)
{
	struct isp *a = state;
	struct row *rows;
	size_t n = 0, i, k;
	char buf[24];

	rows = rows_of(a, &n);
	if (!rows)
		return -ENOMEM;
	json__key(w, "isp");
	json__begin_array(w);
	for (i = 0; i < n; i++) {
		const struct isp_fn *fn = &a->fn[rows[i].fid];
		bool comp = isp__compensated(a, fn);

		json__begin_object(w);
		json__kv_string(w, "name", an_ctx__name(a->ctx, rows[i].fid, buf));
		if (an_ctx__linkage(a->ctx, rows[i].fid))
			json__kv_string(w, "linkage_name", an_ctx__linkage(a->ctx, rows[i].fid));
		an_ctx__json_src(a->ctx, rows[i].fid, w);
		json__kv_u64(w, "fid", rows[i].fid);
		json__kv_string(w, "size_source", fn->arg ? "arg" : "io");
		/* the callees' probes taken out of the fitted costs (comp_*) */
		json__kv_bool(w, "probes_taken_out", comp);
		json__kv_double(w, "probe_ns_taken_out", comp ? fn->probe_total : 0);
		json__key(w, "points");
		json__begin_array(w);
		for (k = 0; k < fn->n; k++) {
			const struct isp_point *p = &fn->pts[k];
			struct point_line l = {p->size, p->calls, p->cost_min, p->cost_max,
					       (double)p->cost_sum / (double)p->calls};

			json__begin_object(w);
			emit__row_json(w, point_cols, EMIT_N(point_cols), &l, NULL);
			if (comp) {
				json__kv_u64(w, "comp_min", p->comp_min);
				json__kv_double(w, "comp_avg",
						(double)p->comp_sum / (double)p->calls);
			}
			json__end_object(w);
		}
		json__end_array(w);
		fit_json(w, &rows[i]);
		json__kv_u64(w, "total_cost", fn->total);
		json__kv_u64(w, "unmatched", fn->unmatched);
		json__kv_u64(w, "unsized", fn->unsized);
		json__kv_bool(w, "bottleneck", rows[i].bottleneck);
		json__end_object(w);
	}
	json__end_array(w);
	json__key(w, "isp_info");
	json__begin_object(w);
	json__kv_string(w, "cost", cost_name(isp__cost(a)));
	json__kv_string(w, "cost_asked", cost_name(a->cost));
	json__kv_string(w, "cost_unit", isp__cost_unit(isp__cost(a)));
	json__kv_bool(w, "probe_cost_measured", a->probe_ns && a->cost != ISP_COST_CALLS);
	json__kv_u64(w, "points", a->points);
	json__kv_u64(w, "input_bytes", a->input_bytes);
	json__kv_u64(w, "unmatched", a->unmatched);
	json__kv_u64(w, "unsized", a->unsized);
	json__kv_u64(w, "nomem", a->nomem);
	json__kv_u64(w, "resync", a->resync);
	free(rows);
	return json__end_object(w);
}
