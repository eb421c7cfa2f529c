// SPDX-License-Identifier: BSD-2-Clause
/*
 * The call graph's section of the report (sec.h): its edges, per thread,
 * and a sampled or --budget run's estimates, as text and JSON, from the
 * analyzer's merged instance (its layout: analyzers/callgraph_int.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "analyzers/an_threads.h"
#include "analyzers/analyzer.h"
#include "analyzers/callgraph.h"
#include "analyzers/callgraph_int.h"
#include "analyzers/sampling.h"
#include "common/emit.h"
#include "common/hmap.h"
#include "common/json.h"
#include "common/log.h"
#include "user/report/sec.h"

struct edge_row {
	uint64_t key;
	uint64_t calls;
	const char *caller, *callee; /* table names; NULL when unnamed */
};

/* A name from the table, or NULL (unnamed: ordered by fid instead). */
static const char *table_name(const struct an_ctx *c, uint32_t fid)
{
	if (fid == AN_ROOT)
		return AN_ROOT_NAME;
	if (fid == AN_RESUMED)
		return AN_RESUMED_NAME;
	return c->fnames && fid < c->nfuncs ? c->fnames[fid] : NULL;
}

static int cmp_name(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) : 0;
}

/* Calls descending, then caller and callee names: deterministic output. */
static int cmp_edge_row(const void *a, const void *b)
{
	const struct edge_row *x = a, *y = b;
	int r;

	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	r = cmp_name(x->caller, y->caller);
	if (r)
		return r;
	r = cmp_name(x->callee, y->callee);
	if (r)
		return r;
	return x->key < y->key ? -1 : x->key > y->key;
}

static struct edge_row *edge_rows(const struct callgraph *g, size_t *n)
{
	struct edge_row *rows = malloc((hmap__len(&g->edges) + 1) * sizeof(*rows));
	struct hmap_ent *e;
	size_t it = 0, k = 0;

	if (!rows)
		return NULL;
	while (hmap__next(&g->edges, &it, &e)) {
		rows[k].key = e->key;
		rows[k].calls = e->val;
		rows[k].caller = table_name(g->ctx, EDGE_CALLER(e->key));
		rows[k].callee = table_name(g->ctx, EDGE_CALLEE(e->key));
		k++;
	}
	qsort(rows, k, sizeof(*rows), cmp_edge_row);
	*n = k;
	return rows;
}

/* An edge's line of the table, text and JSON. */
struct edge_line {
	uint64_t calls;
	const char *caller, *callee;
	char b1[24], b2[24];
};

static const struct emit_col edge_cols[] = {
	{"caller", NULL, 0, EMIT_STR, EMIT_COL(struct edge_line, caller)},
	{"callee", NULL, 0, EMIT_STR, EMIT_COL(struct edge_line, callee)},
	{"calls", "CALLS", 12, EMIT_COUNT, EMIT_COL(struct edge_line, calls)},
	{NULL, "CALLER -> CALLEE", 0, EMIT_STR, EMIT_COL(struct edge_line, caller),
	 .flags = EMIT_GAP2},
	{NULL, "", 0, EMIT_STR, EMIT_COL(struct edge_line, callee), .fmt = " -> %s"},
};

/* *l: row r's line. Its names may point into l's buffers. */
static void edge_line(const struct callgraph *g, const struct edge_row *r, struct edge_line *l)
{
	l->calls = r->calls;
	l->caller = an_ctx__name(g->ctx, EDGE_CALLER(r->key), l->b1);
	l->callee = an_ctx__name(g->ctx, EDGE_CALLEE(r->key), l->b2);
}

int sec_callgraph__text(void *state, FILE *f)
{
	struct callgraph *g = state;
	struct edge_row *rows;
	size_t n = 0, i;
	int err = 0;

	rows = edge_rows(g, &n);
	if (!rows)
		return -ENOMEM;
	fprintf(f, "call graph: %zu caller -> callee edges\n", n);
	emit__head(f, edge_cols, EMIT_N(edge_cols));
	for (i = 0; i < n && i < g->ctx->top; i++) {
		struct edge_line l;

		edge_line(g, &rows[i], &l);
		emit__row_text(f, edge_cols, EMIT_N(edge_cols), &l,
			       an_ctx__lb(g->ctx, AN_LOST_CALLS), NULL);
	}
	if (n > g->ctx->top)
		fprintf(f, "  ... %zu more edges (the JSON report has all)\n", n - g->ctx->top);
	if (g->ctx->budget)
		fprintf(f, "  budget: calls above are what was seen; a call made while some "
			   "functions' probes were out has caller <resumed> (its real caller may "
			   "have been one of them); the JSON has each edge's whole-run estimate "
			   "(calls_est: the callee's calls shared as in the epochs when every "
			   "function was traced)\n");
	else if (g->ctx->windows)
		fprintf(f, "  sampling: calls above are what the windows saw; <resumed> is the "
			   "caller of calls made before a frame of their window was on the stack; "
			   "the JSON has each edge's whole-run estimate (calls_est)\n");
	if (g->nomem)
		fprintf(f, "  warning: %" PRIu64 " calls not recorded (out of memory)\n", g->nomem);
	if (ferror(f))
		err = -EIO;
	free(rows);
	return err;
}

/* --budget: per callee, its calls per epoch (the sum of its edges'), as
 * sampling__budget_estimate takes them. Returns the map (callee -> struct
 * sampling_counts *) or -ENOMEM. */
static int callee_counts(const struct callgraph *g, struct hmap *out)
{
	struct hmap_ent *e;
	size_t it = 0;

	memset(out, 0, sizeof(*out));
	while (hmap__next(&g->wedges, &it, &e)) {
		const struct sampling_counts *c = (const struct sampling_counts *)(uintptr_t)e->val;
		uint64_t *v;

		if (!c)
			continue;
		if (hmap__upsert(out, EDGE_CALLEE(e->key), &v))
			return -ENOMEM;
		if (!*v) {
			struct sampling_counts *n = calloc(1, sizeof(*n));

			if (!n)
				return -ENOMEM;
			*v = (uint64_t)(uintptr_t)n;
		}
		if (sampling__merge((struct sampling_counts *)(uintptr_t)*v, c))
			return -ENOMEM;
	}
	return 0;
}

static void callee_counts_free(struct hmap *m)
{
	struct hmap_ent *e;
	size_t it = 0;

	while (hmap__next(m, &it, &e)) {
		struct sampling_counts *c = (struct sampling_counts *)(uintptr_t)e->val;

		if (c) {
			sampling__fini(c);
			free(c);
		}
	}
	hmap__fini(m);
}

/* The sum of counts over the epochs that are windows of w (all: w NULL). */
static double sum_windows(const struct sampling_counts *c, const struct an_windows *w)
{
	double s = 0;
	uint32_t i;

	for (i = 0; c && i < c->n; i++)
		if (!w || i >= w->n || !w->skip || !w->skip[i])
			s += (double)c->w[i];
	return s;
}

/*
 * --budget: edge caller -> callee's whole-run calls: the callee's
 * whole-run calls (exact, or estimated: analyzers/sampling.h) shared among
 * its callers as in the epochs in which everything was traced (where a
 * caller is known), or as in all epochs when it was never called there.
 * The 95% interval adds the share's (binomial) and the callee's. Returns
 * what the figure is: AN_BEST_NONE when the callee was not traced;
 * AN_BEST_LOWER when the callee's count is a lower bound, and then so is
 * the edge's, what was seen of it (*err95 0); else AN_BEST_ESTIMATED.
 */
static enum an_best budget_edge(const struct callgraph *g, const struct hmap *callees,
				uint64_t key, double *est, double *err95)
{
	const struct an_windows *w = g->ctx->windows;
	uint32_t callee = EDGE_CALLEE(key);
	uint64_t *v = hmap__find(&g->wedges, key), *cv = hmap__find(callees, callee);
	const struct sampling_counts *c = v ? (const struct sampling_counts *)(uintptr_t)*v : NULL;
	const struct sampling_counts *cc =
		cv ? (const struct sampling_counts *)(uintptr_t)*cv : NULL;
	double nc, ncerr, a = sum_windows(c, w), n = sum_windows(cc, w), p, e;
	enum an_best k = sampling__budget_estimate(g->ctx->budget, callee, cc ? cc->w : NULL,
						   cc ? cc->n : 0, &nc, &ncerr, NULL);

	*est = *err95 = 0;
	if (k == AN_BEST_NONE)
		return k;
	if (k == AN_BEST_LOWER) {
		*est = sum_windows(c, NULL);
		return k;
	}
	if (n <= 0) {
		a = sum_windows(c, NULL);
		n = sum_windows(cc, NULL);
	}
	p = n > 0 ? a / n : 0;
	*est = p * nc;
	e = n > 0 ? 1.96 * nc * sqrt(p * (1 - p) / n) : 0;
	*err95 = sqrt(e * e + p * ncerr * p * ncerr);
	return AN_BEST_ESTIMATED;
}

struct thread_edge {
	uint64_t key;
	uint32_t tid;
	uint64_t calls;
};

static int cmp_thread_edge(const void *a, const void *b)
{
	const struct thread_edge *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Every (edge, thread, calls) triple, sorted by edge then tid, so each
 * edge's per-thread counts are one run found by binary search. */
static struct thread_edge *thread_edges(const struct callgraph *g, size_t *n)
{
	struct thread_edge *v;
	struct hmap_ent *e, *te;
	size_t it = 0, tit, total = 0, k = 0;

	while (hmap__next(&g->threads.map, &it, &e))
		if (e->val)
			total += hmap__len(&((struct cg_thread *)(uintptr_t)e->val)->edges);
	v = malloc((total + 1) * sizeof(*v));
	if (!v)
		return NULL;
	it = 0;
	while (hmap__next(&g->threads.map, &it, &e)) {
		const struct cg_thread *t = (const struct cg_thread *)(uintptr_t)e->val;

		if (!t)
			continue;
		tit = 0;
		while (hmap__next(&t->edges, &tit, &te))
			v[k++] = (struct thread_edge){
				.key = te->key, .tid = t->tid, .calls = te->val};
	}
	qsort(v, k, sizeof(*v), cmp_thread_edge);
	*n = k;
	return v;
}

static size_t first_of(const struct thread_edge *v, size_t n, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int sec_callgraph__json(void *state, struct json *w)
{
	struct callgraph *g = state;
	struct edge_row *rows = NULL;
	struct thread_edge *te = NULL;
	struct hmap callees = {0};
	size_t n = 0, nte = 0, i, j;
	int err;

	rows = edge_rows(g, &n);
	te = thread_edges(g, &nte);
	if (!rows || !te || (g->ctx->budget && callee_counts(g, &callees))) {
		err = -ENOMEM;
		goto cleanup;
	}
	json__key(w, "callgraph");
	json__begin_array(w);
	for (i = 0; i < n; i++) {
		struct edge_line l;

		edge_line(g, &rows[i], &l);
		json__begin_object(w);
		emit__row_json(w, edge_cols, EMIT_N(edge_cols), &l, NULL);
		if (g->ctx->budget) {
			double est, err95;
			enum an_best k = budget_edge(g, &callees, rows[i].key, &est, &err95);

			if (k != AN_BEST_NONE) {
				json__kv_string(w, "estimate", sampling__best_name(k));
				json__kv_u64(w, "calls_est", (uint64_t)llround(est));
				json__kv_u64(w, "calls_est_err95", (uint64_t)llround(err95));
			}
		} else if (g->ctx->windows) {
			/* Sampling: the whole run's calls of the edge, estimated
			 * as count's are (analyzers/sampling.h). */
			uint64_t *v = hmap__find(&g->wedges, rows[i].key);
			const struct sampling_counts *c =
				v ? (const struct sampling_counts *)(uintptr_t)*v : NULL;
			double est, err95;

			enum an_best k = sampling__estimate(c ? c->w : NULL, c ? c->n : 0,
							    g->ctx->windows, &est, &err95);

			sections__estimate_json(w, k, est, err95, sampling__df(g->ctx->windows));
		}
		json__key(w, "threads");
		json__begin_object(w);
		for (j = first_of(te, nte, rows[i].key); j < nte && te[j].key == rows[i].key; j++) {
			json__key_u64(w, te[j].tid);
			json__u64(w, te[j].calls);
		}
		json__end_object(w);
		json__end_object(w);
	}
	err = json__end_array(w);
	if (g->nomem)
		log_warn("callgraph: %" PRIu64 " calls not recorded (out of memory)", g->nomem);
cleanup:
	callee_counts_free(&callees);
	free(rows);
	free(te);
	return err;
}
