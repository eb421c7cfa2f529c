// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "analyzers/sampling.h"

uint64_t sampling__on(const struct an_windows *w)
{
	uint64_t on = 0;
	uint32_t i;

	for (i = 0; w && i < w->n; i++)
		if (!w->skip || !w->skip[i])
			on += w->on[i];
	return on;
}

double sampling__t975(uint32_t df)
{
	/* Student's t, two-sided 95%, df 1..30 (standard tables). */
	static const double t[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
				   2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
				   2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
				   2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
	double z = 1.96;

	if (df == 0)
		return INFINITY;
	if (df <= sizeof(t) / sizeof(t[0]))
		return t[df - 1];
	/* Cornish-Fisher beyond the table: within 0.001 of the true value. */
	return z + (z * z * z + z) / (4.0 * df) +
	       (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96.0 * df * df);
}

uint32_t sampling__mssd_df(uint32_t n)
{
	double df;

	if (n < 2)
		return 0;
	/* von Neumann (1941): for n normal values the mean square successive
	 * difference has variance 4 s^4 (3n - 4) / (n - 1)^2; a variance with
	 * that spread is a chi-square's of 2 (n - 1)^2 / (3n - 4) degrees */
	df = 2.0 * (n - 1) * (n - 1) / (3.0 * n - 4);
	return df < 1 ? 1 : (uint32_t)df;
}

uint32_t sampling__windows(const struct an_windows *w)
{
	uint32_t i, nw = 0;

	for (i = 0; w && i < w->n; i++)
		nw += !w->skip || !w->skip[i];
	return nw;
}

uint32_t sampling__df(const struct an_windows *w)
{
	return sampling__mssd_df(sampling__windows(w));
}

enum an_best sampling__estimate(const uint64_t *counts, uint32_t ncounts,
				const struct an_windows *w, double *est, double *err95)
{
	double sum_c = 0, sum_d, r, ss = 0, f, sd_d = 0, sd_t = 0, sys, prev = 0;
	uint32_t i, nw = 0, df = sampling__df(w);

	*est = 0;
	*err95 = -1;
	sum_d = (double)sampling__on(w);
	if (!w || !w->n || sum_d <= 0)
		return AN_BEST_NONE;
	for (i = 0; i < w->n; i++) {
		sd_t += w->on_sd ? w->on_sd[i] : 0;
		if (w->skip && w->skip[i])
			continue;
		sd_d += w->on_sd ? w->on_sd[i] : 0;
		if (i < ncounts)
			sum_c += (double)counts[i];
	}
	r = sum_c / sum_d;
	/* Windows that held the whole run saw it all. */
	if (sum_d >= (double)w->total) {
		*est = sum_c;
		*err95 = 0;
		return AN_BEST_ESTIMATED;
	}
	if (df < 1 || sum_d < SAMPLING_MIN_SHARE * (double)w->total) {
		*est = sum_c;
		return AN_BEST_LOWER;
	}
	*est = r * (double)w->total;
	for (i = 0; i < w->n; i++) {
		double c = i < ncounts ? (double)counts[i] : 0;
		double dev;

		if (w->skip && w->skip[i])
			continue;
		/* the windows' residuals from the ratio, in time order: their
		 * successive differences (sampling.h) */
		dev = c - r * (double)w->on[i];
		if (nw++)
			ss += (dev - prev) * (dev - prev);
		prev = dev;
	}
	/* Finite population: the windows are fraction f of the run, and a
	 * run traced all the time (f = 1) has no sampling error. */
	f = sum_d / (double)w->total;
	if (f > 1)
		f = 1;
	*err95 = sampling__t975(df) * (double)w->total / sum_d *
		 sqrt((double)nw / (2.0 * (nw - 1)) * ss * (1 - f));
	/* The correction's error (sampling.h), a normal 95 % on top. */
	sys = *est * (sd_d / sum_d - (w->total ? sd_t / (double)w->total : 0));
	*err95 = sqrt(*err95 * *err95 + 1.96 * 1.96 * sys * sys);
	return AN_BEST_ESTIMATED;
}

/* One stratum of a sampled span: windows (pooled until min_len of them)
 * and the off epochs after them. */
struct stratum {
	double c, d;	     /* calls seen and length of its windows */
	double len;	     /* its whole length */
	double sd_d, sd_len; /* d's and len's systematic error (an_budget.len_sd) */
};

enum an_best sampling__budget_estimate(const struct an_budget *b, uint32_t fid, const uint64_t *counts,
			      uint32_t ncounts, double *est, double *err95, uint32_t *df)
{
	struct stratum *v = NULL;
	double exact = 0, lead = 0, lead_sd = 0, seen = 0, e = 0, var = 0, s2 = 0, sys = 0;
	bool sampled = false, traced = false, open = false;
	uint32_t i, n = 0, k;

	*est = 0;
	*err95 = 0;
	if (df)
		*df = 0;
	if (!b || fid >= b->nfuncs)
		return AN_BEST_NONE;
	v = calloc(b->n + 1, sizeof(*v));
	if (!v)
		return AN_BEST_LOWER;
	for (i = 0; i < b->n; i++) {
		double c = i < ncounts ? (double)counts[i] : 0, len = (double)b->len[i];
		double sd = b->len_sd ? b->len_sd[i] : 0;

		switch (b->modes[b->snap[i]][fid]) {
		case AN_B_EXACT:
			exact += c;
			traced = true;
			break;
		case AN_B_SAMPLED:
			sampled = traced = true;
			seen += c;
			if (b->window[i]) {
				/* A window starts a stratum, unless the one open
				 * has too little of its own yet: pooled. */
				if (!open || v[n - 1].d >= (double)b->min_len) {
					n++;
					open = true;
				}
				v[n - 1].c += c;
				v[n - 1].d += len;
				v[n - 1].sd_d += sd;
			} else if (!open) {
				lead += len; /* before the first window */
				lead_sd += sd;
				continue;
			}
			v[n - 1].len += len;
			v[n - 1].sd_len += sd;
			break;
		default:
			break;
		}
	}
	*est = exact;
	if (!traced) {
		free(v);
		return AN_BEST_NONE;
	}
	if (!sampled) {
		free(v);
		return AN_BEST_EXACT;
	}
	/* The last stratum may be short of windows: pooled with the one
	 * before. */
	if (n >= 2 && v[n - 1].d < (double)b->min_len) {
		v[n - 2].c += v[n - 1].c;
		v[n - 2].d += v[n - 1].d;
		v[n - 2].len += v[n - 1].len;
		v[n - 2].sd_d += v[n - 1].sd_d;
		v[n - 2].sd_len += v[n - 1].sd_len;
		n--;
	}
	if (n < 2 || v[0].d <= 0) {
		/* No window (or none with any length), or a single stratum,
		 * whose rate has no error estimate: a figure scaled from it
		 * could be off by any factor and say nothing of it (seen: 7
		 * windows of a python loop pooled into one, its hottest
		 * function estimated 5x low). What was seen of the sampled
		 * epochs is a lower bound. */
		*est = exact + seen;
		free(v);
		return AN_BEST_LOWER;
	}
	v[0].len += lead; /* the span before the first window: its rate */
	v[0].sd_len += lead_sd;
	for (k = 0; k < n; k++) {
		double r = v[k].d > 0 ? v[k].c / v[k].d : 0;

		e += r * v[k].len;
		/* The lengths' systematic error moves every stratum's rate
		 * r = c / d and length the same way: linear, not in
		 * quadrature. */
		if (v[k].d > 0)
			sys += r * (v[k].sd_len - v[k].len / v[k].d * v[k].sd_d);
		if (k) {
			double r0 = v[k - 1].d > 0 ? v[k - 1].c / v[k - 1].d : 0;

			s2 += (r - r0) * (r - r0);
		}
		if (v[k].len > 0)
			var += v[k].len * v[k].len * (1 - v[k].d / v[k].len);
	}
	*est = exact + e;
	/* Systematic sampling's variance from successive differences of the
	 * strata's rates: a rate that drifts or jumps (a phase) widens the
	 * interval, as it should. */
	*err95 = sampling__t975(sampling__mssd_df(n)) * sqrt(s2 / (2.0 * (n - 1)) * var);
	/* The progress correction's own error, a normal 95% on top. */
	*err95 = sqrt(*err95 * *err95 + 1.96 * 1.96 * sys * sys);
	if (df)
		*df = sampling__mssd_df(n);
	free(v);
	return AN_BEST_ESTIMATED;
}

double sampling__window_share(const struct an_budget *b, uint32_t fid)
{
	double sum = 0, len = 0;
	uint32_t i;

	for (i = 0; b && b->probe_share && fid < b->nfuncs && i < b->n; i++)
		if (b->window[i] && b->modes[b->snap[i]][fid] == AN_B_SAMPLED) {
			sum += b->probe_share[i] * (double)b->len[i];
			len += (double)b->len[i];
		}
	return len > 0 ? sum / len : 0;
}

const char *sampling__best_name(enum an_best k)
{
	static const char *const names[] = {"exact", "estimated", "lower_bound", "not_traced"};

	return k <= AN_BEST_NONE ? names[k] : "?";
}

int sampling__add(struct sampling_counts *c, uint32_t epoch, uint64_t k)
{
	uint32_t i = (epoch > SAMPLING_MAX_WINDOWS ? SAMPLING_MAX_WINDOWS : epoch) - 1;

	if (!epoch)
		return 0;
	if (i >= c->n) {
		uint32_t n = c->n ? c->n : 16;
		uint64_t *p;

		while (n <= i)
			n *= 2;
		p = realloc(c->w, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		for (uint32_t j = c->n; j < n; j++)
			p[j] = 0;
		c->w = p;
		c->n = n;
	}
	c->w[i] += k;
	return 0;
}

int sampling__merge(struct sampling_counts *dst, const struct sampling_counts *src)
{
	uint32_t i;

	for (i = 0; i < src->n; i++)
		if (src->w[i] && sampling__add(dst, i + 1, src->w[i]))
			return -ENOMEM;
	return 0;
}

void sampling__fini(struct sampling_counts *c)
{
	free(c->w);
	c->w = NULL;
	c->n = 0;
}
