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

bool sampling__estimate(const uint64_t *counts, uint32_t ncounts, const struct an_windows *w,
			double *est, double *err95)
{
	double sum_c = 0, sum_d, r, ss = 0, f;
	uint32_t i, nw = 0;

	*est = 0;
	*err95 = -1;
	sum_d = (double)sampling__on(w);
	if (!w || !w->n || sum_d <= 0)
		return false;
	for (i = 0; i < w->n; i++) {
		if (w->skip && w->skip[i])
			continue;
		nw++;
		if (i < ncounts)
			sum_c += (double)counts[i];
	}
	r = sum_c / sum_d;
	*est = r * (double)w->total;
	if (nw < 2)
		return true;
	for (i = 0; i < w->n; i++) {
		double c = i < ncounts ? (double)counts[i] : 0;
		double dev;

		if (w->skip && w->skip[i])
			continue;
		dev = c - r * (double)w->on[i];
		ss += dev * dev;
	}
	/* Finite population: the windows are fraction f of the run, and a
	 * run traced all the time (f = 1) has no sampling error. */
	f = sum_d / (double)w->total;
	if (f > 1)
		f = 1;
	*err95 = 1.96 * (double)w->total / sum_d * sqrt((double)nw / (nw - 1) * ss * (1 - f));
	return true;
}

enum an_best budget__estimate(const struct an_budget *b, uint32_t fid, const uint64_t *counts,
			      uint32_t ncounts, double *est, double *err95)
{
	uint64_t *on = NULL, *c = NULL, total = 0;
	double exact = 0, e = 0, err = 0;
	bool sampled = false, traced = false;
	struct an_windows w = {0};
	enum an_best k;
	uint32_t i, nw = 0;

	*est = 0;
	*err95 = 0;
	if (!b || fid >= b->nfuncs)
		return AN_BEST_NONE;
	for (i = 0; i < b->n; i++) {
		uint64_t n = i < ncounts ? counts[i] : 0;

		switch (b->modes[b->snap[i]][fid]) {
		case AN_B_EXACT:
			exact += (double)n;
			traced = true;
			break;
		case AN_B_SAMPLED:
			sampled = traced = true;
			total += b->len[i];
			nw += b->window[i] != 0;
			break;
		default:
			break;
		}
	}
	if (!traced)
		return AN_BEST_NONE;
	*est = exact;
	if (!sampled)
		return AN_BEST_EXACT;
	if (nw) {
		on = calloc(nw, sizeof(*on));
		c = calloc(nw, sizeof(*c));
	}
	for (i = 0, nw = 0; on && c && i < b->n; i++)
		if (b->modes[b->snap[i]][fid] == AN_B_SAMPLED && b->window[i]) {
			on[nw] = b->len[i];
			c[nw++] = i < ncounts ? counts[i] : 0;
		}
	w.n = nw;
	w.on = on;
	w.total = total;
	w.measure = b->measure;
	if (on && c && sampling__estimate(c, nw, &w, &e, &err)) {
		*est = exact + e;
		*err95 = err;
		k = AN_BEST_ESTIMATED;
	} else {
		/* No window (or none with any length): what was seen of the
		 * sampled epochs is a lower bound. */
		for (i = 0; i < b->n; i++)
			if (b->modes[b->snap[i]][fid] == AN_B_SAMPLED)
				*est += (double)(i < ncounts ? counts[i] : 0);
		k = AN_BEST_LOWER;
	}
	free(on);
	free(c);
	return k;
}

const char *budget__best_name(enum an_best k)
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
