// SPDX-License-Identifier: BSD-2-Clause
/* Curve fits of cost against input size: see fit.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/fit.h"

const char *fit__class_name(enum fit_class c)
{
	static const char *const names[FIT__NCLASSES] = {
		"O(1)", "O(log n)", "O(n)", "O(n log n)", "O(n^2)", "O(n^3)", "O(2^n)",
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
	case FIT_EXP:
		return exp2(n);
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

/*
 * The regularized incomplete beta function I_x(a, b) by its continued
 * fraction (modified Lentz), on the side where it converges fast.
 */
static double betacf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;
	int m;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, aa, del;

		aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
		d = 1 + aa * d;
		c = 1 + aa / c;
		d = fabs(d) < tiny ? 1 / tiny : 1 / d;
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
		d = 1 + aa * d;
		c = 1 + aa / c;
		d = fabs(d) < tiny ? 1 / tiny : 1 / d;
		c = fabs(c) < tiny ? tiny : c;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-14)
			break;
	}
	return h;
}

static double ibeta(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * betacf(a, b, x) / a;
	return 1 - front * betacf(b, a, 1 - x) / b;
}

double fit__f1_sf(double f, double d)
{
	if (!(f > 0))
		return 1;
	if (isinf(f))
		return 0;
	/* F(1, d) is t(d) squared: P(F > f) = I_{d/(d+f)}(d/2, 1/2) */
	return ibeta(d / 2, 0.5, d / (d + f));
}

/*
 * Weighted least squares of y on the columns 1, g_c and g_e (e < 0: no
 * third column), by modified Gram-Schmidt on the weighted, scaled columns:
 * n and n log n are nearly collinear over a short range, and the normal
 * equations would lose the difference the test needs. Returns the
 * residual sum of squares.
 */
static double wls_ss(enum fit_class c, int e, const double *x, const double *y,
		     const double *w, size_t n, double *q)
{
	size_t ncol = e < 0 ? 2 : 3, i, j, k;
	double ss = 0;

	double norm0[3];

	/* q: ncol columns then the response, each n long */
	for (i = 0; i < n; i++) {
		double sw = sqrt(w[i]);

		q[i] = sw;
		q[n + i] = sw * fit__g(c, x[i]);
		if (ncol == 3)
			q[2 * n + i] = sw * fit__g((enum fit_class)e, x[i]);
		q[ncol * n + i] = sw * y[i];
	}
	for (j = 0; j < ncol; j++) {
		norm0[j] = 0;
		for (i = 0; i < n; i++)
			norm0[j] += q[j * n + i] * q[j * n + i];
		norm0[j] = sqrt(norm0[j]);
	}
	for (j = 0; j < ncol; j++) {
		double *v = q + j * n, nv = 0;

		for (i = 0; i < n; i++)
			nv += v[i] * v[i];
		nv = sqrt(nv);
		/* a column the earlier ones explain (to rounding) adds nothing */
		if (!(nv > 1e-10 * norm0[j]) || !isfinite(nv))
			continue;
		for (i = 0; i < n; i++)
			v[i] /= nv;
		for (k = j + 1; k <= ncol; k++) {
			double *u = q + k * n, dot = 0;

			for (i = 0; i < n; i++)
				dot += v[i] * u[i];
			for (i = 0; i < n; i++)
				u[i] -= dot * v[i];
		}
	}
	for (i = 0; i < n; i++)
		ss += q[ncol * n + i] * q[ncol * n + i];
	return ss;
}

static int cmp_double(const void *p, const void *q)
{
	double a = *(const double *)p, b = *(const double *)q;

	return a < b ? -1 : a > b;
}

/* The residual variance (relative) of a model with df degrees of freedom
 * left, never below FIT_MODEL_SD squared: see fit.h. */
static double noise_var(double ss, size_t df)
{
	double v = ss / (double)df;

	return v > FIT_MODEL_SD * FIT_MODEL_SD ? v : FIT_MODEL_SD * FIT_MODEL_SD;
}

char *fit__candidates_name(const struct fit_result *r, char *buf, size_t len)
{
	size_t off = 0;
	int c;

	if (!len)
		return buf;
	buf[0] = 0;
	for (c = 0; c < FIT__NCLASSES; c++) {
		int k;

		if (!(r->candidates & (1u << c)))
			continue;
		k = snprintf(buf + off, len - off, "%s%s", off ? " or " : "",
			     fit__class_name((enum fit_class)c));
		if (k < 0 || (size_t)k >= len - off)
			break;
		off += (size_t)k;
	}
	if (!buf[0])
		snprintf(buf, len, "%s", fit__class_name(r->cls));
	return buf;
}

/*
 * The models of the m points (xs, ys, weights w) and which of them the
 * points reject, into md[] (see fit.h); f[] their fits. Returns the best
 * class, or -1 when nothing grows (every cost equal, or no growing class
 * with b > 0): then O(1) is the one candidate. q: 4 m scratch doubles.
 */
static int choose(const double *xs, const double *ys, const double *w, size_t m, double xmax,
		  double *q, struct fit_model *md, struct wls *f)
{
	int c, best = -1;

	for (c = 0; c < FIT__NCLASSES; c++) {
		md[c] = (struct fit_model){.p = 1};
		if (c == FIT_EXP && xmax > FIT_EXP_MAX_N)
			continue;
		wls_fit((enum fit_class)c, xs, ys, w, m, &f[c]);
		md[c] = (struct fit_model){
			.tried = c == FIT_O1 || f[c].b > 0,
			.a = f[c].a,
			.b = c == FIT_O1 ? 0 : f[c].b,
			.r2 = f[c].sstot > 0 ? 1 - f[c].ssres / f[c].sstot : 1,
			.p = 1,
		};
	}
	md[FIT_O1].r2 = 0;
	if (!(f[FIT_O1].sstot > 1e-18 * (double)m)) { /* every cost equal */
		md[FIT_O1].r2 = 1;
		md[FIT_O1].candidate = true;
		return -1;
	}
	for (c = FIT_LOGN; c < FIT__NCLASSES; c++)
		if (md[c].tried && (best < 0 || f[c].ssres < f[best].ssres))
			best = c;
	if (best < 0) { /* nothing grows: the costs fall or scatter */
		md[FIT_O1].candidate = true;
		return -1;
	}
	for (c = FIT_LOGN; c < FIT__NCLASSES; c++) {
		double ss_enc, fstat;

		if (!md[c].tried)
			continue;
		if (c == best) {
			md[c].candidate = true;
			continue;
		}
		if (m < 4) { /* no degree of freedom for the test */
			md[c].candidate = md[c].r2 >= FIT_MIN_R2;
			continue;
		}
		ss_enc = wls_ss((enum fit_class)c, best, xs, ys, w, m, q);
		if (ss_enc > f[c].ssres)
			ss_enc = f[c].ssres;
		fstat = (f[c].ssres - ss_enc) / noise_var(ss_enc, m - 3);
		md[c].p = fit__f1_sf(fstat, (double)(m - 3));
		md[c].candidate = md[c].p >= FIT_ALPHA;
	}
	/* growth against none: b = 0 in the best class */
	{
		double ssb = f[best].ssres, fstat;

		fstat = (f[best].sstot - ssb) / noise_var(ssb, m - 2);
		md[FIT_O1].p = fit__f1_sf(fstat, (double)(m - 2));
		md[FIT_O1].candidate = md[FIT_O1].p >= FIT_ALPHA || md[best].r2 < FIT_MIN_R2;
		/* no growth shown: no growing class is claimed either */
		if (md[FIT_O1].candidate)
			for (c = FIT_LOGN; c < FIT__NCLASSES; c++)
				md[c].candidate = false;
	}
	return best;
}

int fit__points(const double *x, const double *y, size_t n, struct fit_result *out)
{
	double *xs = NULL, *ys = NULL, *w = NULL, *q = NULL, *sx = NULL, *sy = NULL, *sw = NULL;
	double ymax = 0, xmax = 0, floor_y;
	struct wls f[FIT__NCLASSES], fs[FIT__NCLASSES];
	size_t i, m = 0, distinct = 0;
	int c, best, err = 0;

	*out = (struct fit_result){.cls = FIT_O1, .best = FIT_O1, .superlinear_p = 1};
	xs = malloc((n + 1) * sizeof(*xs));
	ys = malloc((n + 1) * sizeof(*ys));
	w = malloc((n + 1) * sizeof(*w));
	sx = malloc((n + 1) * sizeof(*sx));
	sy = malloc((n + 1) * sizeof(*sy));
	sw = malloc((n + 1) * sizeof(*sw));
	q = malloc((4 * n + 1) * sizeof(*q));
	if (!xs || !ys || !w || !q || !sx || !sy || !sw) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n; i++)
		if (x[i] >= 1 && isfinite(y[i]) && y[i] >= 0) {
			xs[m] = x[i];
			ys[m] = y[i];
			if (y[i] > ymax)
				ymax = y[i];
			if (x[i] > xmax)
				xmax = x[i];
			m++;
		}
	/* distinct sizes: a sorted copy, kept in sx */
	for (i = 0; i < m; i++)
		sx[i] = xs[i];
	qsort(sx, m, sizeof(*sx), cmp_double);
	for (i = 0; i < m; i++)
		if (!i || sx[i] != sx[distinct - 1])
			sx[distinct++] = sx[i];
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
	best = choose(xs, ys, w, m, xmax, q, out->m, f);
	out->best = best < 0 ? FIT_O1 : (enum fit_class)best;
	/* The size farthest from the best fit left out: a class stays a
	 * candidate if the points without it keep it (fit.h) */
	if (best >= 0 && distinct >= FIT_JACKKNIFE_SIZES) {
		struct fit_model md[FIT__NCLASSES];
		double worst = -1, wx = 0;
		size_t k = 0;

		for (i = 0; i < m; i++) {
			double pred = f[best].a + f[best].b * fit__g((enum fit_class)best, xs[i]);
			double r = fabs(ys[i] - pred) * sqrt(w[i]);

			if (r > worst) {
				worst = r;
				wx = xs[i];
			}
		}
		for (i = 0; i < m; i++)
			if (xs[i] != wx) {
				sx[k] = xs[i];
				sy[k] = ys[i];
				sw[k] = w[i];
				k++;
			}
		choose(sx, sy, sw, k, xmax, q, md, fs);
		/* only a class the whole set fits (a growing one with b > 0)
		 * can be kept: its fit is the one shown */
		for (c = 0; c < FIT__NCLASSES; c++) {
			if (!out->m[c].tried)
				continue;
			out->m[c].candidate |= md[c].candidate;
			if (md[c].tried && md[c].p > out->m[c].p)
				out->m[c].p = md[c].p;
		}
	}
	for (c = FIT__NCLASSES - 1; c >= 0; c--)
		if (out->m[c].candidate) {
			out->candidates |= 1u << c;
			out->cls = (enum fit_class)c;
		}
	out->superlinear = fit__superlinear(out->cls);
	if (out->superlinear) {
		out->superlinear_p = 0;
		for (c = FIT_O1; c <= FIT_N; c++)
			if (out->m[c].tried && out->m[c].p > out->superlinear_p)
				out->superlinear_p = out->m[c].p;
	}
	{
		const struct fit_model *md = &out->m[out->cls];

		out->a = md->a;
		out->b = md->b;
		out->r2 = md->r2;
		if (out->cls != FIT_O1 || out->r2 < 1) {
			double ss = out->cls == FIT_O1 ? f[FIT_O1].sstot : f[out->cls].ssres;

			out->rel_sd = m > 2 ? sqrt(ss / (double)(m - 2)) : 0;
		}
	}
cleanup:
	free(xs);
	free(ys);
	free(w);
	free(q);
	free(sx);
	free(sy);
	free(sw);
	return err;
}
