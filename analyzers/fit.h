/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Curve fitting for input-sensitive profiles (analyzers/isp.h): how a
 * routine's cost grows with its input size. Pure arithmetic, no state.
 *
 * Two answers from the same points (x = size >= 1, y = cost >= 0):
 *   - the exponent: least squares of ln y on ln x (points with y > 0), so
 *     cost ~ c * n^exponent; a constant offset in the cost bends it down
 *     at small sizes, which is why the class below fits an offset;
 *   - the class: for each g in O(1), O(log n), O(n), O(n log n), O(n^2),
 *     O(n^3), cost = a + b * g(n) by weighted least squares with weights
 *     1 / y^2 (relative residuals: costs span orders of magnitude, and
 *     plain least squares would fit the largest points only). Growing
 *     classes need b > 0. The class with the smallest weighted residual
 *     wins; a simpler class whose residual is within FIT_TIE of the best
 *     wins the tie (n log n and n are hard to tell apart over a short
 *     range, and the simpler claim is the safer one). When even the
 *     best growing class explains less than FIT_MIN_R2 of the variance
 *     (or the costs are all equal) the class is O(1).
 * r2 is the chosen class's weighted R^2 (1 for exactly constant costs, 0
 * for an O(1) chosen because nothing grows better than the mean).
 */
#ifndef ANALYZERS_FIT_H
#define ANALYZERS_FIT_H

#include <stdbool.h>
#include <stddef.h>

enum fit_class {
	FIT_O1 = 0,
	FIT_LOGN,
	FIT_N,
	FIT_NLOGN,
	FIT_N2,
	FIT_N3,
	FIT__NCLASSES,
};

#define FIT_TIE 1.10	 /* a simpler class wins within 10% of the best residual */
#define FIT_MIN_R2 0.5	 /* below this, growth is not told from noise: O(1) */
#define FIT_MIN_SIZES 3	 /* distinct sizes >= 1 needed for a fit */

struct fit_result {
	enum fit_class cls;
	double a, b;	  /* cost = a + b * g(n) of cls */
	double r2;	  /* of cls, weighted */
	double exponent;  /* log-log slope */
	double exp_r2;	  /* R^2 of the log-log line */
	double exp_c;	  /* cost = exp_c * n^exponent */
	bool has_exponent; /* at least 2 distinct sizes with cost > 0 */
};

/*
 * Fit the n points (x[i], y[i]); points with x < 1 are left out (log n is
 * not defined at 0). Returns 0 and fills *out, or -EINVAL when fewer than
 * FIT_MIN_SIZES distinct sizes >= 1 remain, or -ENOMEM. Any thread.
 */
int fit__points(const double *x, const double *y, size_t n, struct fit_result *out);

/* "O(1)", "O(log n)", "O(n)", "O(n log n)", "O(n^2)", "O(n^3)". */
const char *fit__class_name(enum fit_class c);

/* g(n) of class c (log base 2; 0 at n = 1). */
double fit__g(enum fit_class c, double n);

/* The fitted cost at size n: a + b * g(n). */
double fit__eval(const struct fit_result *r, double n);

/* Superlinear growth: O(n log n) and above. */
static inline bool fit__superlinear(enum fit_class c)
{
	return c >= FIT_NLOGN && c < FIT__NCLASSES;
}

#endif /* ANALYZERS_FIT_H */
