// SPDX-License-Identifier: BSD-2-Clause
/* The curve fits of input-sensitive profiles (analyzers/fit.h), on exact
 * synthetic points, with noise, and with a constant offset. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "analyzers/fit.h"

#define NPTS 8

/* Sizes 100, 200, ..., 12800: a range of 128x, as a test target feeds. */
static void sizes(double *x)
{
	for (int i = 0; i < NPTS; i++)
		x[i] = 100.0 * (1 << i);
}

/* Deterministic noise in [-1, 1] (xorshift): the test never flickers. */
static double noise(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return (double)(*s % 20001) / 10000.0 - 1;
}

static double gen(enum fit_class c, double n)
{
	return 3 * fit__g(c, n);
}

START_TEST(test_exact_classes)
{
	double x[NPTS], y[NPTS];
	struct fit_result r;
	enum fit_class c = (enum fit_class)_i;
	static const double exps[FIT__NCLASSES] = {0, 0, 1, 0, 2, 3};

	sizes(x);
	for (int i = 0; i < NPTS; i++)
		y[i] = c == FIT_O1 ? 42 : gen(c, x[i]);
	ck_assert_int_eq(fit__points(x, y, NPTS, &r), 0);
	ck_assert_msg(r.cls == c, "class %s fitted as %s", fit__class_name(c),
		      fit__class_name(r.cls));
	ck_assert(r.has_exponent);
	ck_assert_double_ge(r.r2, 0.999999);
	if (c == FIT_N || c == FIT_N2 || c == FIT_N3) {
		ck_assert_double_eq_tol(r.exponent, exps[c], 1e-9);
		ck_assert_double_eq_tol(r.exp_r2, 1, 1e-9);
		ck_assert_double_eq_tol(r.b, 3, 1e-6);
		ck_assert_double_eq_tol(r.a, 0, 1e-6 * y[NPTS - 1]);
	}
	if (c == FIT_NLOGN) /* n log n over 100..12800: between 1 and 2 */
		ck_assert(r.exponent > 1.05 && r.exponent < 1.3);
	if (c == FIT_O1)
		ck_assert_double_eq_tol(r.exponent, 0, 1e-12);
	ck_assert_double_eq_tol(fit__eval(&r, 3000), c == FIT_O1 ? 42 : gen(c, 3000),
				1e-6 * (c == FIT_O1 ? 42 : gen(c, 3000)));
}
END_TEST

/* +-10% multiplicative noise, 5 repetitions per size (the worst case or
 * any repetition is a point): the class still comes out. */
START_TEST(test_noisy_classes)
{
	double x[NPTS * 5], y[NPTS * 5], xs[NPTS];
	struct fit_result r;
	enum fit_class c = (enum fit_class)_i;
	uint32_t s = 12345 + (uint32_t)_i;

	sizes(xs);
	for (int i = 0; i < NPTS * 5; i++) {
		x[i] = xs[i / 5];
		y[i] = (c == FIT_O1 ? 500 : gen(c, x[i])) * (1 + 0.1 * noise(&s));
	}
	ck_assert_int_eq(fit__points(x, y, NPTS * 5, &r), 0);
	ck_assert_msg(r.cls == c, "noisy %s fitted as %s (r2 %.4f)", fit__class_name(c),
		      fit__class_name(r.cls), r.r2);
	if (c == FIT_N || c == FIT_N2 || c == FIT_N3)
		ck_assert_double_eq_tol(r.exponent, c == FIT_N ? 1 : c == FIT_N2 ? 2 : 3, 0.05);
	if (c != FIT_O1)
		ck_assert_double_ge(r.r2, 0.9);
}
END_TEST

/* A constant offset (a fixed cost per call, e.g. the probes' own) bends
 * the log-log exponent at small sizes but not the class, which fits it. */
START_TEST(test_offset)
{
	double x[NPTS], y[NPTS];
	struct fit_result r;

	sizes(x);
	for (int i = 0; i < NPTS; i++)
		y[i] = 20000 + 2 * x[i];
	ck_assert_int_eq(fit__points(x, y, NPTS, &r), 0);
	ck_assert_str_eq(fit__class_name(r.cls), "O(n)");
	ck_assert_double_eq_tol(r.a, 20000, 1e-6);
	ck_assert_double_eq_tol(r.b, 2, 1e-9);
	ck_assert(r.exponent < 0.9); /* what the offset does to the slope */
	for (int i = 0; i < NPTS; i++)
		y[i] = 1e6 + x[i] * x[i];
	ck_assert_int_eq(fit__points(x, y, NPTS, &r), 0);
	ck_assert_str_eq(fit__class_name(r.cls), "O(n^2)");
	ck_assert_double_eq_tol(r.b, 1, 1e-6);
}
END_TEST

/* Noise around a constant: nothing grows, O(1). */
START_TEST(test_flat_noise)
{
	double x[NPTS * 3], y[NPTS * 3], xs[NPTS];
	struct fit_result r;
	uint32_t s = 777;

	sizes(xs);
	for (int i = 0; i < NPTS * 3; i++) {
		x[i] = xs[i / 3];
		y[i] = 1000 * (1 + 0.2 * noise(&s));
	}
	ck_assert_int_eq(fit__points(x, y, NPTS * 3, &r), 0);
	ck_assert_str_eq(fit__class_name(r.cls), "O(1)");
	ck_assert(fabs(r.exponent) < 0.1);
}
END_TEST

START_TEST(test_too_few)
{
	double x[4] = {0, 10, 10, 20}, y[4] = {1, 2, 3, 4};
	struct fit_result r;

	/* size 0 does not count; 10 and 20: two distinct sizes */
	ck_assert_int_eq(fit__points(x, y, 4, &r), -EINVAL);
	ck_assert_int_eq(fit__points(x, y, 0, &r), -EINVAL);
	x[0] = 30;
	ck_assert_int_eq(fit__points(x, y, 4, &r), 0);
	ck_assert_str_eq(fit__class_name(FIT__NCLASSES), "?");
	ck_assert(fit__superlinear(FIT_NLOGN) && fit__superlinear(FIT_N3));
	ck_assert(!fit__superlinear(FIT_N) && !fit__superlinear(FIT_O1));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fit");
	TCase *tc = tcase_create("fit");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, test_exact_classes, 0, FIT__NCLASSES);
	tcase_add_loop_test(tc, test_noisy_classes, 0, FIT__NCLASSES);
	tcase_add_test(tc, test_offset);
	tcase_add_test(tc, test_flat_noise);
	tcase_add_test(tc, test_too_few);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
