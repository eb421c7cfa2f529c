// SPDX-License-Identifier: BSD-2-Clause
/* The count analyzer's whole-run estimates of a sampled or --budget run,
 * as text (sec.h). */
#include <inttypes.h>
#include <stdlib.h>

#include "analyzers/count_int.h"
#include "analyzers/sampling.h"
#include "user/report/sec.h"

/* Sampling: the counts above are what the windows saw, exactly; this says
 * how much of the run that was and what the whole run's calls were. */
void sec_count__estimates_text(const struct count *c, const struct count_row *rows, size_t nrows,
			   FILE *f)
{
	const struct an_windows *w = c->ctx->windows;
	uint64_t on = sampling__on(w);
	char buf[24];
	size_t i;

	fprintf(f,
		"sampling: tracing was on %.1f%% of the run (%s time, %" PRIu32
		" windows); calls above are what the windows saw. Whole run, estimated (95%% "
		"interval; low for a program its probes slow down):\n",
		w->total ? 100.0 * (double)on / (double)w->total : 0.0, w->measure, w->n);
	for (i = 0; i < nrows && i < c->ctx->top; i++) {
		const struct count_fn *fn = &c->fn[rows[i].fid];
		double est, err95;
		enum an_best k = sampling__estimate(fn->wc.w, fn->wc.n, w, &est, &err95);

		if (k == AN_BEST_NONE) {
			/* the same for every function: the windows' share */
			fprintf(f,
				"%14s  none: the windows hold none of the run's %s time (too short "
				"to measure, or the probes took all of the target's time in them); "
				"sample a longer run or a larger share\n",
				"-", w->measure);
			break;
		}
		if (k == AN_BEST_LOWER && !i)
			fprintf(f,
				"  too few windows to estimate from (%" PRIu32 " in the sample, %.2f%% "
				"of the run; an estimate needs 2, and %.0f%% of the run): what they "
				"saw, at least\n",
				sampling__windows(w),
				w->total ? 100.0 * (double)on / (double)w->total : 0.0,
				100 * SAMPLING_MIN_SHARE);
		if (k == AN_BEST_LOWER)
			fprintf(f, "%14s %-12.0f  %s\n", "at least", est,
				an_ctx__name(c->ctx, rows[i].fid, buf));
		else
			fprintf(f, "%14.0f +- %-9.0f  %s\n", est, err95,
				an_ctx__name(c->ctx, rows[i].fid, buf));
	}
}

/* One function's whole-run figure under --budget. */
struct best_row {
	double est, err95;
	enum an_best kind;
	uint32_t fid;
};

static int cmp_best_row(const void *a, const void *b)
{
	const struct best_row *x = a, *y = b;

	if (x->est != y->est)
		return x->est > y->est ? -1 : 1;
	return x->fid < y->fid ? -1 : x->fid > y->fid;
}

/* --budget: every traced function's whole-run calls, what each figure is
 * (exact, estimated, a lower bound), the most called first. */
void sec_count__budget_text(const struct count *c, FILE *f)
{
	const struct an_budget *b = c->ctx->budget;
	struct best_row *rows = malloc((c->ctx->nfuncs + 1) * sizeof(*rows));
	size_t n = 0, k[AN_BEST_NONE + 1] = {0}, i, low = 0;
	char buf[24];

	if (!rows) {
		fprintf(f, "budget: no memory for the estimates\n");
		return;
	}
	for (uint32_t fid = 0; fid < c->ctx->nfuncs; fid++) {
		struct best_row *r = &rows[n];

		r->kind = sampling__budget_estimate(b, fid, c->fn[fid].wc.w, c->fn[fid].wc.n, &r->est,
					   &r->err95, NULL);
		r->fid = fid;
		k[r->kind]++;
		if (r->kind != AN_BEST_NONE && (r->est > 0 || r->kind != AN_BEST_EXACT))
			n++;
	}
	qsort(rows, n, sizeof(*rows), cmp_best_row);
	fprintf(f,
		"budget: whole run, per function (%zu exact all along, %zu estimated from "
		"windows with a 95%% interval, %zu lower bounds: sampled with too few windows "
		"for an interval):\n",
		k[AN_BEST_EXACT], k[AN_BEST_ESTIMATED], k[AN_BEST_LOWER]);
	fprintf(f, "%14s %12s  %-11s  FUNCTION\n", "CALLS", "+-95%", "FIGURE");
	for (i = 0; i < n && i < c->ctx->top; i++) {
		const struct best_row *r = &rows[i];

		bool tb = r->kind == AN_BEST_ESTIMATED && !b->progress_corrected &&
			  sampling__window_share(b, r->fid) > AN_B_TRAP_BOUND;

		low += tb;
		if (r->kind == AN_BEST_ESTIMATED)
			fprintf(f, "%14.0f %12.0f  %-11s  %s\n", r->est, r->err95,
				tb ? "estimated*" : "estimated", an_ctx__name(c->ctx, r->fid, buf));
		else
			fprintf(f, "%14.0f %12s  %-11s  %s\n", r->est, "",
				r->kind == AN_BEST_EXACT ? "exact" : "at least",
				an_ctx__name(c->ctx, r->fid, buf));
	}
	if (n > c->ctx->top)
		fprintf(f, "  ... %zu more functions (the JSON report has all)\n", n - c->ctx->top);
	if (low)
		fprintf(f,
			"  * more than half of its windows' time was its probes' traps: little of "
			"them was the target's own progress, which the progress clock then "
			"overstates (part of a trap counts as user time here): likely LOW, by "
			"up to 25x for a function whose every call is a few ns of work\n");
	free(rows);
}

