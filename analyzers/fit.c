// SPDX-License-Identifier: BSD-2-Clause
/* Curve fits of cost against input size: see fit.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "analyzers/fit.h"

const char *fit__class_name(enum fit_class c)
{
	static const char *const names[FIT__NCLASSES] = {
		"O(1)", "O(log n)", "O(n)", "O(n log n)", "O(n^2)", "O(n^3)",
	};

	return (unsigned)c < FIT__NCLASSES ? names[c] : "?";
}

double fit__g(enum fit_class c, double n)
{
	switch (c) {
	case FIT_LOGN:
		return log2(n);
	case FIT_N:
		return n;
	case FIT_NLOGN:
		return n * log2(n);
	case FIT_N2:
		return n * n;
	case FIT_N3:
		return n * n * n;
	default:
		return 1;
	}
}

double fit__eval(const struct fit_result *r, double n)
{
	return r->a + r->b * fit__g(r->cls, n);
}

/* Weighted least squares of y = a + b g(x); residual sum and R^2. */
struct wls {
	double a, b, ssres, sstot;
};

static void wls_fit(enum fit_class c, const double *x, const double *y, const double *w,
		    size_t n, struct wls *o)
{
	double s = 0, sg = 0, sy = 0, sgg = 0, sgy = 0, det, mean;
	size_t i;

	for (i = 0; i < n; i++) {
		double g = fit__g(c, x[i]);

		s += w[i];
		sg += w[i] * g;
		sy += w[i] * y[i];
		sgg += w[i] * g * g;
		sgy += w[i] * g * y[i];
	}
	det = s * sgg - sg * sg;
	/* O(1), or g constant over the points: the weighted mean. The
	 * relative test keeps cancellation noise from passing as a slope. */
	if (c == FIT_O1 || !(fabs(det) > 1e-12 * s * sgg)) {
		o->b = 0;
		o->a = sy / s;
	} else {
		o->b = (s * sgy - sg * sy) / det;
		o->a = (sy - o->b * sg) / s;
	}
	mean = sy / s;
	o->ssres = o->sstot = 0;
	for (i = 0; i < n; i++) {
		double r = y[i] - o->a - o->b * fit__g(c, x[i]), d = y[i] - mean;

		o->ssres += w[i] * r * r;
		o->sstot += w[i] * d * d;
	}
}

/* Ordinary least squares of ln y on ln x over points with y > 0. */
static void loglog(const double *x, const double *y, size_t n, struct fit_result *out)
{
	double s = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0, det, lx0 = 0;
	bool two = false;
	size_t i;

	for (i = 0; i < n; i++) {
		double lx, ly;

		if (!(y[i] > 0))
			continue;
		lx = log(x[i]);
		ly = log(y[i]);
		if (!s)
			lx0 = lx;
		else if (lx != lx0)
			two = true;
		s++;
		sx += lx;
		sy += ly;
		sxx += lx * lx;
		sxy += lx * ly;
		syy += ly * ly;
	}
	out->has_exponent = two;
	if (!two)
		return;
	det = s * sxx - sx * sx;
	out->exponent = (s * sxy - sx * sy) / det;
	out->exp_c = exp((sy - out->exponent * sx) / s);
	{
		double vy = s * syy - sy * sy;

		/* R^2 of a line = squared correlation */
		out->exp_r2 = vy > 0 ? (s * sxy - sx * sy) * (s * sxy - sx * sy) / (det * vy) : 1;
	}
}

static int cmp_double(const void *p, const void *q)
{
	double a = *(const double *)p, b = *(const double *)q;

	return a < b ? -1 : a > b;
}

int fit__points(const double *x, const double *y, size_t n, struct fit_result *out)
{
	double *xs = NULL, *ys = NULL, *w = NULL, ymax = 0, floor_y;
	struct wls f[FIT__NCLASSES];
	size_t i, m = 0, distinct = 0;
	int c, best = -1, pick = FIT_O1, err = 0;

	*out = (struct fit_result){.cls = FIT_O1};
	xs = malloc((n + 1) * sizeof(*xs));
	ys = malloc((n + 1) * sizeof(*ys));
	w = malloc((n + 1) * sizeof(*w));
	if (!xs || !ys || !w) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n; i++)
		if (x[i] >= 1 && isfinite(y[i]) && y[i] >= 0) {
			xs[m] = x[i];
			ys[m] = y[i];
			if (y[i] > ymax)
				ymax = y[i];
			m++;
		}
	/* distinct sizes: sort a copy */
	for (i = 0; i < m; i++)
		w[i] = xs[i];
	qsort(w, m, sizeof(*w), cmp_double);
	for (i = 0; i < m; i++)
		distinct += !i || w[i] != w[i - 1];
	if (distinct < FIT_MIN_SIZES) {
		err = -EINVAL;
		goto cleanup;
	}
	/* Relative weights; a zero cost weighs as a tiny one would. */
	floor_y = ymax > 0 ? ymax * 1e-9 : 1;
	for (i = 0; i < m; i++) {
		double yy = ys[i] > floor_y ? ys[i] : floor_y;

		w[i] = 1 / (yy * yy);
	}
	loglog(xs, ys, m, out);
	for (c = 0; c < FIT__NCLASSES; c++)
		wls_fit((enum fit_class)c, xs, ys, w, m, &f[c]);
	if (!(f[FIT_O1].sstot > 1e-18 * m)) { /* every cost equal */
		out->a = f[FIT_O1].a;
		out->r2 = 1;
		goto cleanup;
	}
	for (c = FIT_LOGN; c < FIT__NCLASSES; c++)
		if (f[c].b > 0 && (best < 0 || f[c].ssres < f[best].ssres))
			best = c;
	if (best >= 0) {
		double lim = f[best].ssres * FIT_TIE + 1e-12 * f[best].sstot;

		for (c = FIT_LOGN; c <= best; c++)
			if (f[c].b > 0 && f[c].ssres <= lim) {
				pick = c;
				break;
			}
		if (1 - f[pick].ssres / f[pick].sstot < FIT_MIN_R2)
			pick = FIT_O1;
	}
	out->cls = (enum fit_class)pick;
	out->a = f[pick].a;
	out->b = f[pick].b;
	out->r2 = pick == FIT_O1 ? 0 : 1 - f[pick].ssres / f[pick].sstot;
cleanup:
	free(xs);
	free(ys);
	free(w);
	return err;
}
