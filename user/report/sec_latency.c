// SPDX-License-Identifier: BSD-2-Clause
/*
 * The latency analyzer's section of the report (sec.h): each function's
 * histograms and percentiles, and --slower-than's slowest calls, as text
 * and JSON, from its merged instance (its layout: analyzers/latency_int.h).
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "analyzers/analyzer.h"
#include "analyzers/latency.h"
#include "analyzers/latency_int.h"
#include "common/callvals.h"
#include "common/emit.h"
#include "common/json.h"
#include "user/report/sec.h"

/* Functions shown in the text without --hist. */
#define TEXT_FUNCS 5
/* Width of the longest bar. */
#define BAR 40
/* ns as a person reads it: "812 ns", "1.05 us", "20.1 ms", "1.50 s". */
static const char *human(uint64_t ns, char buf[24])
{
	if (ns < 1000)
		snprintf(buf, 24, "%" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, 24, "%.3g us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, 24, "%.3g ms", (double)ns / 1e6);
	else
		snprintf(buf, 24, "%.3g s", (double)ns / 1e9);
	return buf;
}

/* " p50 LO-HI" (or " p50 V" when the range is one value). */
static void put_pct(FILE *f, const struct latency_hist *h, const char *name, double q)
{
	char a[24], b[24];
	uint64_t lo, hi;

	if (!latency__percentile(h, q, &lo, &hi))
		return;
	if (lo == hi)
		fprintf(f, ", %s %s", name, human(lo, a));
	else
		fprintf(f, ", %s %s-%s", name, human(lo, a), human(hi, b));
}

/* The percentiles shown, text and JSON: the text's name, the JSON's key
 * (its range [lo, hi] in ns), the quantile. */
static const struct {
	const char *name, *key;
	double q;
} pcts[] = {{"p50", "p50_ns", 0.5}, {"p90", "p90_ns", 0.9}, {"p99", "p99_ns", 0.99}};

void sec_latency__summary_text(FILE *f, const struct latency_hist *h)
{
	char a[24];
	unsigned k;

	fprintf(f, "min %s", human(h->min_ns, a));
	for (k = 0; k < sizeof(pcts) / sizeof(pcts[0]); k++)
		put_pct(f, h, pcts[k].name, pcts[k].q);
	fprintf(f, ", max %s", human(h->max_ns, a));
}

/* funclatency's shape: one line per bucket from the first to the last
 * that holds calls. */
static void put_bars(FILE *f, const struct latency_hist *h)
{
	unsigned b, first = LATENCY_BUCKETS, last = 0, k;
	uint64_t top = 0, lo, hi;

	for (b = 0; b < LATENCY_BUCKETS; b++)
		if (h->b[b]) {
			if (first == LATENCY_BUCKETS)
				first = b;
			last = b;
			if (h->b[b] > top)
				top = h->b[b];
		}
	if (!top)
		return;
	fprintf(f, "  %21s : %-10s distribution\n", "ns", "count");
	for (b = first; b <= last; b++) {
		unsigned len = (unsigned)((h->b[b] * BAR + top - 1) / top);

		latency__bounds(b, &lo, &hi);
		if (hi == UINT64_MAX)
			fprintf(f, "  %10" PRIu64 " -> %-7s : %-10" PRIu64 " |", lo, "...",
				h->b[b]);
		else
			fprintf(f, "  %10" PRIu64 " -> %-7" PRIu64 " : %-10" PRIu64 " |", lo, hi,
				h->b[b]);
		for (k = 0; k < BAR; k++)
			fputc(k < len ? '*' : ' ', f);
		fputs("|\n", f);
	}
}

struct lat_row {
	uint64_t sum;
	uint32_t fid;
};

static int cmp_row(const void *a, const void *b)
{
	const struct lat_row *x = a, *y = b;

	if (x->sum != y->sum)
		return x->sum > y->sum ? -1 : 1;
	return x->fid < y->fid ? -1 : x->fid > y->fid;
}

/* Whether fid is one --hist names. */
static bool named(const struct latency *l, uint32_t fid)
{
	char buf[24];
	const char *name = an_ctx__name(l->ctx, fid, buf);
	size_t i;

	for (i = 0; i < l->ctx->nhist; i++)
		if (!fnmatch(l->ctx->hist[i], name, 0))
			return true;
	return false;
}

/* The functions with returned calls, by their calls' whole time. */
static struct lat_row *rows_of(const struct latency *l, size_t *n)
{
	struct lat_row *rows = malloc((l->ctx->nfuncs + 1) * sizeof(*rows));
	uint32_t i;

	*n = 0;
	if (!rows)
		return NULL;
	for (i = 0; i < l->ctx->nfuncs; i++)
		if (l->fn[i] && l->fn[i]->wall.n)
			rows[(*n)++] = (struct lat_row){l->fn[i]->wall.sum_ns, i};
	qsort(rows, *n, sizeof(*rows), cmp_row);
	return rows;
}

static void slow_text(const struct latency *l, FILE *f);

int sec_latency__text(void *state, FILE *f)
{
	struct latency *l = state;
	struct lat_row *rows;
	size_t n, i, shown = 0;
	char buf[24];

	rows = rows_of(l, &n);
	if (!rows)
		return -ENOMEM;
	if (!n)
		fprintf(f, "call durations: none (no traced call returned: entry probes only, or "
			   "no call ended while traced)\n");
	else
		fprintf(f,
			"call durations (traced: each includes the cost of its own probes and of "
			"the traced calls' inside it; percentiles are the ranges their log2 "
			"bucket allows), %s:\n",
			l->ctx->nhist ? "of the functions --hist names"
				      : "of the functions with the most time in all");
	for (i = 0; i < n; i++) {
		const struct lat_fn *fn = l->fn[rows[i].fid];

		if (l->ctx->nhist ? !named(l, rows[i].fid) : shown >= TEXT_FUNCS)
			continue;
		shown++;
		fprintf(f, "%s: %" PRIu64 " call%s; wall ", an_ctx__name(l->ctx, rows[i].fid, buf),
			fn->wall.n, fn->wall.n == 1 ? "" : "s");
		sec_latency__summary_text(f, &fn->wall);
		fprintf(f, "; on-CPU ");
		sec_latency__summary_text(f, &fn->cpu);
		fputc('\n', f);
		put_bars(f, &fn->wall);
	}
	if (n && l->ctx->nhist && !shown)
		fprintf(f, "  (no function --hist names returned from a call)\n");
	if (l->ctx->slower_ns)
		slow_text(l, f);
	if (l->nomem)
		fprintf(f, "  warning: %" PRIu64 " calls' durations not recorded (out of memory)\n",
			l->nomem);
	free(rows);
	return ferror(f) ? -EIO : 0;
}

/* A slow call's line: its columns, then its name and callers. */
struct slow_line {
	const struct lat_slow_call *c;
	double start_s;
	uint64_t start_ns, incl_ns, cpu_incl_ns;
	uint32_t tid, fid;
	const char *name;
	char buf[24];
	/* the text's call: its name with its arguments and return value
	 * (--args, --retval) */
	const char *call;
	char callbuf[CABBPF_VAL_ITEMS * (CABBPF_VAL_STR_MAX * 4 + 8) + 64];
};

static const struct emit_col slow_cols[] = {
	{"start_ns", NULL, 0, EMIT_U64, EMIT_COL(struct slow_line, start_ns)},
	{NULL, "START_S", 12, EMIT_DBL, EMIT_COL(struct slow_line, start_s), .prec = 6},
	{"tid", "TID", 8, EMIT_U32, EMIT_COL(struct slow_line, tid)},
	{"incl_ns", "WALL_MS", 11, EMIT_NS_MS, EMIT_COL(struct slow_line, incl_ns)},
	{"cpu_incl_ns", "CPU_MS", 11, EMIT_NS_MS, EMIT_COL(struct slow_line, cpu_incl_ns)},
	{NULL, "CALL <- CALLERS", 0, EMIT_STR, EMIT_COL(struct slow_line, call),
	 .flags = EMIT_GAP2},
	{"name", NULL, 0, EMIT_STR, EMIT_COL(struct slow_line, name)},
	{"fid", NULL, 0, EMIT_U32, EMIT_COL(struct slow_line, fid)},
};

/* *s: call c's line; its start from the analyzer's first call. */
static void slow_line(const struct latency *l, const struct lat_slow_call *c,
		      struct slow_line *s)
{
	*s = (struct slow_line){
		.c = c,
		.start_ns = c->start_ns >= l->t0 ? c->start_ns - l->t0 : 0,
		.incl_ns = c->incl_ns,
		.cpu_incl_ns = c->cpu_incl_ns,
		.tid = c->tid,
		.fid = c->fid,
	};
	s->start_s = (double)s->start_ns / 1e9;
	s->name = an_ctx__name(l->ctx, c->fid, s->buf);
	s->call = s->name;
	if (c->vals) {
		char a[sizeof(s->callbuf)], r[CABBPF_VAL_STR_MAX * 4 + 16];
		size_t n = strlen(s->name);
		bool own = n && s->name[n - 1] == ')'; /* a C++ name's parameters */

		snprintf(s->callbuf, sizeof(s->callbuf), "%s%s%s%s%s%s", s->name,
			 callvals__has_args(c->vals) || !own ? "(" : "",
			 callvals__args_text(c->vals, false, a, sizeof(a)),
			 callvals__has_args(c->vals) || !own ? ")" : "",
			 callvals__has_ret(c->vals) ? " = " : "",
			 callvals__has_ret(c->vals)
				 ? callvals__format(c->vals, CABBPF_VAL_RET, r, sizeof(r))
				 : "");
		s->call = s->callbuf;
	}
}

/* --slower-than: how many calls took that long, and the slowest. */
static void slow_text(const struct latency *l, FILE *f)
{
	struct lat_slow_call *v = latency_slow__sorted(&l->slow);
	char a[24], b[24];
	size_t i;
	uint32_t k;

	fprintf(f, "\ncalls of %s or more (traced wall time, probes included): %" PRIu64,
		human(l->ctx->slower_ns, a), l->slow.over);
	if (!l->slow.n) {
		fputc('\n', f);
		return;
	}
	fprintf(f, "; the %zu slowest, slowest first (START_S: from the first traced call):\n",
		l->slow.n);
	if (!v) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	emit__head(f, slow_cols, EMIT_N(slow_cols));
	for (i = 0; i < l->slow.n; i++) {
		struct slow_line s;

		slow_line(l, &v[i], &s);
		emit__cells(f, slow_cols, EMIT_N(slow_cols), &s, an_ctx__lb(l->ctx, AN_LOST_CALLS),
			    NULL, true);
		for (k = 0; k < v[i].ncallers; k++)
			fprintf(f, " <- %s", an_ctx__name(l->ctx, v[i].callers[k], b));
		if (v[i].elided)
			fprintf(f, " <- (%" PRIu32 " more)", v[i].elided);
		fputc('\n', f);
	}
	if (l->slow.nomem)
		fprintf(f, "  warning: %" PRIu64 " slow calls not kept (out of memory)\n",
			l->slow.nomem);
	if (l->slow.nomem_vals)
		fprintf(f, "  warning: the values of %" PRIu64 " slow calls not kept (out of memory)\n",
			l->slow.nomem_vals);
	free(v);
}

static void slow_json(const struct latency *l, struct json *w)
{
	struct lat_slow_call *v = latency_slow__sorted(&l->slow);
	char b[24];
	size_t i;
	uint32_t k;

	json__kv_u64(w, "slower_than_ns", l->ctx->slower_ns);
	json__kv_u64(w, "slower_calls", l->slow.over);
	json__kv_u64(w, "slowest_not_kept", l->slow.nomem);
	json__kv_u64(w, "slowest_values_not_kept", l->slow.nomem_vals);
	json__key(w, "slowest");
	json__begin_array(w);
	for (i = 0; v && i < l->slow.n; i++) {
		struct slow_line s;

		slow_line(l, &v[i], &s);
		json__begin_object(w);
		emit__row_json(w, slow_cols, EMIT_N(slow_cols), &s, NULL);
		json__key(w, "callers");
		json__begin_array(w);
		for (k = 0; k < v[i].ncallers; k++)
			json__string(w, an_ctx__name(l->ctx, v[i].callers[k], b));
		json__end_array(w);
		json__kv_u64(w, "callers_elided", v[i].elided);
		if (v[i].vals) {
			json__key(w, "values");
			callvals__json(v[i].vals, w);
		}
		json__end_object(w);
	}
	json__end_array(w);
	free(v);
}

void sec_latency__hist_json(struct json *w, const char *key, const struct latency_hist *h)
{
	uint64_t lo, hi;
	unsigned b, k;

	json__key(w, key);
	json__begin_object(w);
	json__kv_u64(w, "min_ns", h->min_ns);
	json__kv_u64(w, "max_ns", h->max_ns);
	json__kv_u64(w, "sum_ns", h->sum_ns);
	for (k = 0; k < sizeof(pcts) / sizeof(pcts[0]); k++) {
		if (!latency__percentile(h, pcts[k].q, &lo, &hi))
			continue;
		json__key(w, pcts[k].key);
		json__begin_array(w);
		json__u64(w, lo);
		json__u64(w, hi);
		json__end_array(w);
	}
	/* the buckets that hold calls: [lo_ns, hi_ns] inclusive, count */
	json__key(w, "buckets");
	json__begin_array(w);
	for (b = 0; b < LATENCY_BUCKETS; b++) {
		if (!h->b[b])
			continue;
		latency__bounds(b, &lo, &hi);
		json__begin_object(w);
		json__kv_u64(w, "lo_ns", lo);
		if (hi == UINT64_MAX)
			json__kv_null(w, "hi_ns");
		else
			json__kv_u64(w, "hi_ns", hi);
		json__kv_u64(w, "count", h->b[b]);
		json__end_object(w);
	}
	json__end_array(w);
	json__end_object(w);
}

int sec_latency__json(void *state, struct json *w)
{
	struct latency *l = state;
	struct lat_row *rows;
	size_t n, i;
	char buf[24];

	rows = rows_of(l, &n);
	if (!rows)
		return -ENOMEM;
	json__key(w, "latency");
	json__begin_object(w);
	json__kv_string(w, "time", "traced");
	json__kv_u64(w, "not_recorded", l->nomem);
	if (l->ctx->slower_ns)
		slow_json(l, w);
	json__key(w, "functions");
	json__begin_array(w);
	for (i = 0; i < n; i++) {
		const struct lat_fn *fn = l->fn[rows[i].fid];

		json__begin_object(w);
		json__kv_string(w, "name", an_ctx__name(l->ctx, rows[i].fid, buf));
		json__kv_u64(w, "fid", rows[i].fid);
		json__kv_u64(w, "calls", fn->wall.n);
		sec_latency__hist_json(w, "wall", &fn->wall);
		sec_latency__hist_json(w, "cpu", &fn->cpu);
		json__end_object(w);
	}
	json__end_array(w);
	free(rows);
	return json__end_object(w);
}
