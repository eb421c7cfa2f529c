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
		on += w->on[i];
	return on;
}

bool sampling__estimate(const uint64_t *counts, uint32_t ncounts, const struct an_windows *w,
			double *est, double *err95)
{
	double sum_c = 0, sum_d, r, ss = 0, f;
	uint32_t i;

	*est = 0;
	*err95 = -1;
	sum_d = (double)sampling__on(w);
	if (!w || !w->n || sum_d <= 0)
		return false;
	for (i = 0; i < ncounts && i < w->n; i++)
		sum_c += (double)counts[i];
	r = sum_c / sum_d;
	*est = r * (double)w->total;
	if (w->n < 2)
		return true;
	for (i = 0; i < w->n; i++) {
		double c = i < ncounts ? (double)counts[i] : 0;
		double dev = c - r * (double)w->on[i];

		ss += dev * dev;
	}
	/* Finite population: the windows are fraction f of the run, and a
	 * run traced all the time (f = 1) has no sampling error. */
	f = sum_d / (double)w->total;
	if (f > 1)
		f = 1;
	*err95 = 1.96 * (double)w->total / sum_d *
		 sqrt((double)w->n / (w->n - 1) * ss * (1 - f));
	return true;
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
