// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit suite for analyzers/sampling.c: the whole-run estimate from
 * sampling windows and its 95% interval, on numbers worked by hand.
 */
#include <check.h>
#include <math.h>

#include "analyzers/sampling.h"

#define NEAR(a, b) ck_assert_msg(fabs((a) - (b)) < 1e-6 * (fabs(b) + 1), "%.9g != %.9g", (a), (b))

/* A constant rate: the estimate is exact and the interval 0. */
START_TEST(constant_rate)
{
	const uint64_t on[4] = {100, 200, 300, 400};
	const uint64_t c[4] = {10, 20, 30, 40};
	struct an_windows w = {.n = 4, .on = on, .total = 2000};
	double est, err;

	ck_assert(sampling__estimate(c, 4, &w, &est, &err));
	NEAR(est, 200.0); /* 100 calls in 1000 ns, run 2000 ns */
	NEAR(err, 0.0);
	ck_assert_uint_eq(sampling__on(&w), 1000);
}
END_TEST

/* Two windows of 100 ns seeing 10 and 30 calls, run 400 ns:
 * r = 40/200 = 0.2, est = 80; deviations -10 and +10, ss = 200;
 * se = 400/200 * sqrt(2/1 * 200 * (1 - 0.5)) = 2 * sqrt(200) = 28.284;
 * half-width 1.96 * se = 55.437. */
START_TEST(two_windows_by_hand)
{
	const uint64_t on[2] = {100, 100};
	const uint64_t c[2] = {10, 30};
	struct an_windows w = {.n = 2, .on = on, .total = 400};
	double est, err;

	ck_assert(sampling__estimate(c, 2, &w, &est, &err));
	NEAR(est, 80.0);
	NEAR(err, 1.96 * 2 * sqrt(200.0));
}
END_TEST

/* Missing counts are windows that saw nothing; one window has no error
 * estimate; a run traced throughout has no sampling error; no window on:
 * nothing to estimate. */
START_TEST(edges)
{
	const uint64_t on[3] = {100, 100, 100};
	const uint64_t c[1] = {30};
	const uint64_t zero[1] = {0};
	struct an_windows w = {.n = 3, .on = on, .total = 600};
	struct an_windows one = {.n = 1, .on = on, .total = 600};
	struct an_windows full = {.n = 3, .on = on, .total = 300};
	struct an_windows none = {.n = 1, .on = zero, .total = 600};
	double est, err;

	ck_assert(sampling__estimate(c, 1, &w, &est, &err));
	NEAR(est, 60.0); /* 30 calls in 300 ns of 600 */
	ck_assert(err > 0);
	ck_assert(sampling__estimate(c, 1, &one, &est, &err));
	NEAR(est, 180.0);
	NEAR(err, -1.0);
	ck_assert(sampling__estimate(c, 1, &full, &est, &err));
	NEAR(est, 30.0);
	NEAR(err, 0.0);
	ck_assert(!sampling__estimate(c, 1, &none, &est, &err));
	ck_assert(!sampling__estimate(c, 1, NULL, &est, &err));
	ck_assert(!sampling__estimate(NULL, 0, &(struct an_windows){0}, &est, &err));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sampling");
	TCase *tc = tcase_create("estimate");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, constant_rate);
	tcase_add_test(tc, two_windows_by_hand);
	tcase_add_test(tc, edges);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
