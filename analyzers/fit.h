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
 *     O(n^3), O(2^n), cost = a + b * g(n) by weighted least squares with
 *     weights 1 / y^2 (relative residuals: costs span orders of magnitude,
 *     and plain least squares would fit the largest points only). Growing
 *     classes need b > 0; O(2^n) is tried only while the largest size is
 *     at most FIT_EXP_MAX_N.
 * Which classes the points cannot tell apart is a test, not a margin: the
 * best-fitting class B (smallest weighted residual) is kept, and another
 * class C stays a candidate unless adding B's term to C's model
 * (cost = a + b g_C(n) + d g_B(n), the encompassing model) explains
 * significantly more: an F test with 1 and m - 3 degrees of freedom (m
 * points), rejected below p = FIT_ALPHA. The residual's variance in that
 * test is never taken below FIT_MODEL_SD (relative) squared: a real
 * routine's cost per unit of work moves by a few percent over a range of
 * sizes (caches, where its pages landed: bench/isp_classes.sh shows it
 * on a linear pass at -O0), which is the machine's, not the algorithm's,
 * and on quiet points the test would take it for a class.
 * And one size may be off (a cache or page placement that favours or
 * hurts one size, a misread switch that makes a minimum too low): from
 * FIT_JACKKNIFE_SIZES distinct sizes on, the choice is made again without
 * the size farthest from the best fit, and a class is rejected only if it
 * is rejected both times (its p is the larger). Leaving out each size in
 * turn was tried: with 7 sizes it left n against n log n undecided in
 * most runs (bench/isp_classes.sh).
 * Two curves that coincide over
 * the sizes seen (n and n log n over a short range) leave the test
 * nothing to explain: both stay, and the report says "O(n) or O(n log n)".
 * O(1) is a candidate when B's growth is not significant (the F test of
 * b = 0, 1 and m - 2 degrees of freedom) or explains less than FIT_MIN_R2
 * of the variance, and then it is the only candidate: growth not shown
 * is not claimed. The class shown (cls) is the simplest candidate: the
 * safer claim. With 3 points the encompassing test has no degree of
 * freedom left: every growing class that fits with R^2 >= FIT_MIN_R2 is a
 * candidate.
 * Superlinear growth is significant when every class up to O(n) was
 * rejected; superlinear_p is the largest p of those rejections.
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
	FIT_EXP, /* O(2^n) */
	FIT__NCLASSES,
};

#define FIT_ALPHA 0.01	 /* a class is rejected below this p-value */
#define FIT_MODEL_SD 0.015 /* relative deviation a class tolerates per point */
#define FIT_JACKKNIFE_SIZES 7 /* from this many sizes, the worst one is also left out */
#define FIT_EXP_MAX_N 64 /* O(2^n) is tried up to this largest size */
#define FIT_MIN_R2 0.5	 /* below this, growth is not told from noise: O(1) */
#define FIT_MIN_SIZES 3	 /* distinct sizes >= 1 needed for a fit */

/* One class's fit. */
struct fit_model {
	bool tried;	/* fitted: a growing class with b > 0, or O(1) */
	bool candidate;	/* not rejected by the points (see above) */
	double a, b;	/* cost = a + b * g(n) */
	double r2;	/* weighted */
	double p;	/* the test's p-value against the best class (1 for
			   the best itself; O(1): of b = 0 in the best) */
};

struct fit_result {
	enum fit_class cls; /* the simplest candidate */
	enum fit_class best; /* the smallest residual */
	double a, b;	  /* cost = a + b * g(n) of cls */
	double r2;	  /* of cls, weighted */
	double rel_sd;	  /* cls's relative residual, standard deviation */
	unsigned candidates; /* bit c: class c is a candidate (cls's set) */
	struct fit_model m[FIT__NCLASSES];
	bool superlinear;    /* significant: every class up to O(n) rejected */
	double superlinear_p; /* the largest p of those rejections; 1 if not */
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

/* "O(1)", "O(log n)", "O(n)", "O(n log n)", "O(n^2)", "O(n^3)", "O(2^n)". */
const char *fit__class_name(enum fit_class c);

/* g(n) of class c (log base 2; 0 at n = 1). */
double fit__g(enum fit_class c, double n);

/* The fitted cost at size n: a + b * g(n). */
double fit__eval(const struct fit_result *r, double n);

/* The candidates' names joined by " or ", simplest first, into buf[len]
 * ("O(n) or O(n log n)"); returns buf. */
char *fit__candidates_name(const struct fit_result *r, char *buf, size_t len);

/* P(F > f) for F of Fisher's distribution with 1 and d degrees of freedom
 * (d >= 1): the p-value of the tests above. */
double fit__f1_sf(double f, double d);

/* Superlinear growth: O(n log n) and above. */
static inline bool fit__superlinear(enum fit_class c)
{
	return c >= FIT_NLOGN && c < FIT__NCLASSES;
}

#endif /* ANALYZERS_FIT_H */
