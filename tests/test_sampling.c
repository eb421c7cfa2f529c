// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit suite for analyzers/sampling.c: the whole-run estimate from
 * sampling windows and its 95% interval, on numbers worked by hand; and
 * --budget's (sampling__budget_estimate over epochs of mixed modes) and its choice
 * of exact and sampled functions (user/trace/budget.c, budget__choose).
 */
#include <check.h>
#include <math.h>

#include "analyzers/sampling.h"
#include "user/trace/budget.h"

#define NEAR(a, b) ck_assert_msg(fabs((a) - (b)) < 1e-6 * (fabs(b) + 1), "%.9g != %.9g", (a), (b))

/* A constant rate: the estimate is exact and the interval 0. */
START_TEST(constant_rate)
{
	const uint64_t on[4] = {100, 200, 300, 400};
	const uint64_t c[4] = {10, 20, 30, 40};
	struct an_windows w = {.n = 4, .on = on, .total = 2000};
	double est, err;

	ck_assert_int_eq(sampling__estimate(c, 4, &w, &est, &err), AN_BEST_ESTIMATED);
	NEAR(est, 200.0); /* 100 calls in 1000 ns, run 2000 ns */
	NEAR(err, 0.0);
	ck_assert_uint_eq(sampling__on(&w), 1000);
}
END_TEST

/* Two windows of 100 ns seeing 10 and 30 calls, run 400 ns:
 * r = 40/200 = 0.2, est = 80; deviations -10 and +10, ss = 200;
 * se = 400/200 * sqrt(2/1 * 200 * (1 - 0.5)) = 2 * sqrt(200) = 28.284;
 * half-width t(1 degree of freedom) * se = 12.706 * 28.284 = 359.38
 * (two windows say little of the variance). */
START_TEST(two_windows_by_hand)
{
	const uint64_t on[2] = {100, 100};
	const uint64_t c[2] = {10, 30};
	struct an_windows w = {.n = 2, .on = on, .total = 400};
	double est, err;

	ck_assert_int_eq(sampling__estimate(c, 2, &w, &est, &err), AN_BEST_ESTIMATED);
	NEAR(est, 80.0);
	NEAR(err, 12.706 * 2 * sqrt(200.0));
}
END_TEST

/* Windows in time order, a program in two phases: 20 calls in each of
 * the first two windows of 10, none in the last two; run 80. r = 1, est
 * 80; residuals 10, 10, -10, -10, successive differences 0, -20, 0: ss =
 * 400, W / (2 (W - 1)) ss = 266.67, times 1 - f = 0.5: 133.33; se = 80/40
 * sqrt(133.33) = 23.094; df of a mean square successive difference of 4:
 * 2 * 9 / 8 = 2.25, so 2; half-width t(2) = 4.303 times se. (The usual
 * formula, every window's distance from r: 4/3 * 400 * 0.5, se 32.66.) */
START_TEST(phases_by_successive_differences)
{
	const uint64_t on[4] = {10, 10, 10, 10};
	const uint64_t c[4] = {20, 20, 0, 0};
	struct an_windows w = {.n = 4, .on = on, .total = 80};
	double est, err;

	ck_assert_int_eq(sampling__estimate(c, 4, &w, &est, &err), AN_BEST_ESTIMATED);
	NEAR(est, 80.0);
	ck_assert_uint_eq(sampling__df(&w), 2);
	NEAR(err, 4.303 * 2 * sqrt(4.0 / 6.0 * 400 * 0.5));
	/* von Neumann's degrees of freedom: 1 for 2 or 3, ~2/3 of n - 1 after */
	ck_assert_uint_eq(sampling__mssd_df(0), 0);
	ck_assert_uint_eq(sampling__mssd_df(1), 0);
	ck_assert_uint_eq(sampling__mssd_df(2), 1);
	ck_assert_uint_eq(sampling__mssd_df(3), 1);
	ck_assert_uint_eq(sampling__mssd_df(19), 12);
	ck_assert_uint_eq(sampling__mssd_df(100), 66);
}
END_TEST

/* Student's t: the table's values, Cornish-Fisher past it (t(40) =
 * 2.0211, t(120) = 1.9799 in standard tables), 1.96 in the limit. */
START_TEST(student_t)
{
	ck_assert(isinf(sampling__t975(0)));
	NEAR(sampling__t975(1), 12.706);
	NEAR(sampling__t975(4), 2.776);
	NEAR(sampling__t975(30), 2.042);
	ck_assert(fabs(sampling__t975(40) - 2.0211) < 1e-3);
	ck_assert(fabs(sampling__t975(120) - 1.9799) < 1e-3);
	ck_assert(fabs(sampling__t975(1000000) - 1.96) < 1e-3);
	ck_assert(sampling__t975(31) < sampling__t975(30));
}
END_TEST

/* Missing counts are windows that saw nothing; one window, or windows
 * under 1% of the run, stand for nothing: what they saw is a lower bound;
 * a run traced throughout has no sampling error; no window on: nothing
 * to estimate. */
START_TEST(edges)
{
	const uint64_t on[3] = {100, 100, 100};
	const uint64_t c[1] = {30};
	const uint64_t zero[1] = {0};
	struct an_windows w = {.n = 3, .on = on, .total = 600};
	struct an_windows one = {.n = 1, .on = on, .total = 600};
	struct an_windows full = {.n = 3, .on = on, .total = 300};
	struct an_windows none = {.n = 1, .on = zero, .total = 600};
	struct an_windows tiny = {.n = 3, .on = on, .total = 30001};
	double est, err;

	ck_assert_int_eq(sampling__estimate(c, 1, &w, &est, &err), AN_BEST_ESTIMATED);
	NEAR(est, 60.0); /* 30 calls in 300 ns of 600 */
	ck_assert(err > 0);
	/* one window: what it saw, a lower bound (no interval to scale by) */
	ck_assert_int_eq(sampling__estimate(c, 1, &one, &est, &err), AN_BEST_LOWER);
	NEAR(est, 30.0);
	NEAR(err, -1.0);
	/* windows under 1% of the run: the same */
	ck_assert_int_eq(sampling__estimate(c, 1, &tiny, &est, &err), AN_BEST_LOWER);
	NEAR(est, 30.0);
	NEAR(err, -1.0);
	ck_assert_int_eq(sampling__estimate(c, 1, &full, &est, &err), AN_BEST_ESTIMATED);
	NEAR(est, 30.0);
	NEAR(err, 0.0);
	ck_assert_int_eq(sampling__estimate(c, 1, &none, &est, &err), AN_BEST_NONE);
	ck_assert_int_eq(sampling__estimate(c, 1, NULL, &est, &err), AN_BEST_NONE);
	ck_assert_int_eq(sampling__estimate(NULL, 0, &(struct an_windows){0}, &est, &err),
			 AN_BEST_NONE);
}
END_TEST

/* Epochs that are not windows of the sample (skip) count for nothing. */
START_TEST(skipped_epochs)
{
	const uint64_t on[3] = {100, 500, 100};
	const uint64_t c[3] = {10, 999, 30};
	const uint8_t skip[3] = {0, 1, 0};
	struct an_windows w = {.n = 3, .on = on, .total = 400, .skip = skip};
	double est, err;

	ck_assert_int_eq(sampling__estimate(c, 3, &w, &est, &err), AN_BEST_ESTIMATED);
	NEAR(est, 80.0); /* as two_windows_by_hand */
	ck_assert_uint_eq(sampling__df(&w), 1);
	NEAR(err, 12.706 * 2 * sqrt(200.0));
	ck_assert_uint_eq(sampling__on(&w), 200);
}
END_TEST

/* The correction of the on-times for the probes' traps has its own
 * error (on_sd, in the windows; total moves with all of it): constant
 * rate 0.1 a unit, est 200 over a run of 2000 with 1000 seen; on_sd
 * sums to 10 in the sample and in the run, so the estimate moves by
 * 200 * (10/1000 - 10/2000) = 1 per standard error: half-width 1.96.
 * Checked against the estimate of the same counts with every on and the
 * total shifted by one standard error. A run traced throughout: the
 * shift moves both alike, no error. */
START_TEST(leak_error_in_interval)
{
	const uint64_t on[4] = {100, 200, 300, 400};
	const uint64_t shifted[4] = {101, 202, 303, 404};
	const double sd[4] = {1, 2, 3, 4};
	const uint64_t c[4] = {10, 20, 30, 40};
	struct an_windows w = {.n = 4, .on = on, .total = 2000, .on_sd = sd};
	struct an_windows ws = {.n = 4, .on = shifted, .total = 2010};
	struct an_windows full = {.n = 4, .on = on, .total = 1000, .on_sd = sd};
	double est, err, est1, err1;

	ck_assert_int_eq(sampling__estimate(c, 4, &w, &est, &err), AN_BEST_ESTIMATED);
	NEAR(est, 200.0);
	NEAR(err, 1.96);
	ck_assert_int_eq(sampling__estimate(c, 4, &ws, &est1, &err1), AN_BEST_ESTIMATED);
	ck_assert_msg(fabs(fabs(est1 - est) - 1.0) < 0.02, "shifted estimate %.6f", est1);
	ck_assert_int_eq(sampling__estimate(c, 4, &full, &est, &err), AN_BEST_ESTIMATED);
	NEAR(est, 100.0);
	NEAR(err, 0.0);
}
END_TEST

/*
 * --budget: five epochs; f exact in the first, sampled after (windows in
 * epochs 2 and 4); g exact throughout; h sampled only in epoch 3, no
 * window there; z never traced.
 *   f: exact part 7; strata: window 2 (10 calls in 100) with epoch 3,
 *   length 400, rate 0.1: 40; window 4 (30 in 100) with epoch 5, length
 *   200, rate 0.3: 60; est 107. Successive differences: s2 = 0.2^2 / 2 =
 *   0.02; sum of len^2 (1 - d/len) = 160000 * 0.75 + 40000 * 0.5 = 140000;
 *   err95 = t(1 degree of freedom) sqrt(0.02 * 140000), t = 12.706.
 *   With the windows' lengths uncertain, that interval widens.
 *   With min_len 150 the first window pools with the second: one stratum
 *   of 40 calls in 200 over 600: 120, est 127, no interval.
 */
START_TEST(budget_estimate_by_hand)
{
	enum { F, G, H, Z, N };
	const uint8_t m0[N] = {AN_B_EXACT, AN_B_EXACT, AN_B_NONE, AN_B_NONE};
	const uint8_t m1[N] = {AN_B_SAMPLED, AN_B_EXACT, AN_B_NONE, AN_B_NONE};
	const uint8_t m2[N] = {AN_B_SAMPLED, AN_B_EXACT, AN_B_SAMPLED, AN_B_NONE};
	const uint8_t *modes[3] = {m0, m1, m2};
	const uint64_t len[5] = {100, 100, 300, 100, 100};
	const uint8_t window[5] = {0, 1, 0, 1, 0};
	const uint32_t snap[5] = {0, 1, 2, 1, 1};
	struct an_budget b = {.n = 5,
			      .len = len,
			      .window = window,
			      .snap = snap,
			      .modes = modes,
			      .nfuncs = N,
			      .measure = "wall"};
	const uint64_t cf[5] = {7, 10, 0, 30, 0}, cg[5] = {1, 2, 3, 4, 5}, ch[3] = {0, 0, 9};
	double est, err;
	uint32_t df = 99;

	ck_assert_int_eq(sampling__budget_estimate(&b, F, cf, 5, &est, &err, &df), AN_BEST_ESTIMATED);
	ck_assert_uint_eq(df, 1);
	NEAR(est, 107.0);
	NEAR(err, 12.706 * sqrt(0.02 * 140000));
	/* The windows' lengths known to +-10 (the progress correction's
	 * error, one sign): each stratum's estimate moves by r (sd_len -
	 * len / d sd_d): 0.1 (10 - 4 * 10) + 0.3 (10 - 2 * 10) = -6, added
	 * to the interval as a normal 95%. */
	b.len_sd = (const double[5]){0, 10, 0, 10, 0};
	ck_assert_int_eq(sampling__budget_estimate(&b, F, cf, 5, &est, &err, &df), AN_BEST_ESTIMATED);
	NEAR(est, 107.0);
	NEAR(err, sqrt(pow(12.706 * sqrt(0.02 * 140000), 2) + pow(1.96 * 6, 2)));
	b.len_sd = NULL;
	/* the two windows pooled into one stratum: no error estimate, so
	 * no scaled figure: what was seen, a lower bound (the scaled one
	 * would be 127) */
	b.min_len = 150;
	ck_assert_int_eq(sampling__budget_estimate(&b, F, cf, 5, &est, &err, &df), AN_BEST_LOWER);
	NEAR(est, 47.0);
	NEAR(err, 0.0);
	ck_assert_uint_eq(df, 0);
	b.min_len = 0;
	ck_assert_int_eq(sampling__budget_estimate(&b, G, cg, 5, &est, &err, &df), AN_BEST_EXACT);
	ck_assert_uint_eq(df, 0);
	NEAR(est, 15.0);
	NEAR(err, 0.0);
	/* missing epochs count 0 */
	ck_assert_int_eq(sampling__budget_estimate(&b, G, cg, 2, &est, &err, NULL), AN_BEST_EXACT);
	NEAR(est, 3.0);
	ck_assert_int_eq(sampling__budget_estimate(&b, H, ch, 3, &est, &err, NULL), AN_BEST_LOWER);
	NEAR(est, 9.0);
	ck_assert_int_eq(sampling__budget_estimate(&b, Z, NULL, 0, &est, &err, NULL), AN_BEST_NONE);
	ck_assert_int_eq(sampling__budget_estimate(&b, N, NULL, 0, &est, &err, NULL), AN_BEST_NONE);
	ck_assert_str_eq(sampling__best_name(AN_BEST_LOWER), "lower_bound");
}
END_TEST

/* budget__choose: the costliest exact functions leave when the exact set
 * costs more than the budget, down to half of it; cheap sampled ones come
 * back while the exact set stays under 0.4 B, all of them when everything
 * fits under 0.8 B; unknown rates stay as they are; none on noise. */
START_TEST(budget_choice)
{
	const double o1[5] = {0.01, 0.5, 0.02, -1, 0.05};
	const uint8_t x1[5] = {AN_B_EXACT, AN_B_EXACT, AN_B_EXACT, AN_B_SAMPLED, AN_B_EXACT};
	const double o2[4] = {0.01, 0.03, 0.5, -1};
	const uint8_t x2[4] = {AN_B_EXACT, AN_B_SAMPLED, AN_B_SAMPLED, AN_B_SAMPLED};
	const double o3[2] = {0.11, 0.3};
	const uint8_t x3[2] = {AN_B_EXACT, AN_B_SAMPLED};
	uint8_t next[5];

	/* 0.58 > 0.2: the 0.5 one goes (0.08 <= 0.1) */
	ck_assert_uint_eq(budget__choose(o1, x1, 5, 0.2, next), 1);
	ck_assert_int_eq(next[1], AN_B_SAMPLED);
	ck_assert_int_eq(next[0], AN_B_EXACT);
	ck_assert_int_eq(next[3], AN_B_SAMPLED);
	ck_assert_int_eq(next[4], AN_B_EXACT);
	/* B 0.2: 0.01 + 0.03 <= 0.08, + 0.5 is not */
	ck_assert_uint_eq(budget__choose(o2, x2, 4, 0.2, next), 1);
	ck_assert_int_eq(next[1], AN_B_EXACT);
	ck_assert_int_eq(next[2], AN_B_SAMPLED);
	ck_assert_int_eq(next[3], AN_B_SAMPLED);
	/* B 1: all the known ones fit (0.54 <= 0.8) */
	ck_assert_uint_eq(budget__choose(o2, x2, 4, 1.0, next), 2);
	ck_assert_int_eq(next[2], AN_B_EXACT);
	ck_assert_int_eq(next[3], AN_B_SAMPLED);
	/* 0.11 is above B/2 but within 1.25 B/2: it stays, nothing comes */
	ck_assert_uint_eq(budget__choose(o3, x3, 2, 0.2, next), 0);
	ck_assert_int_eq(next[0], AN_B_EXACT);
	ck_assert_int_eq(next[1], AN_B_SAMPLED);
}
END_TEST

/* The first buckets: probed functions spread over BUDGET_FIRST_GROUPS
 * runs, the others in none. */
START_TEST(budget_first_groups)
{
	const double cost[5] = {1, 0, 1, 1, 1};
	uint8_t g[5];

	budget__first_groups(cost, 5, g);
	ck_assert_uint_eq(g[0], 0);
	ck_assert_uint_eq(g[1], BUDGET_NO_GROUP);
	ck_assert_uint_eq(g[2], 1 * BUDGET_FIRST_GROUPS / 4);
	ck_assert_uint_eq(g[3], 2 * BUDGET_FIRST_GROUPS / 4);
	ck_assert_uint_eq(g[4], 3 * BUDGET_FIRST_GROUPS / 4);
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
	tcase_add_test(tc, phases_by_successive_differences);
	tcase_add_test(tc, student_t);
	tcase_add_test(tc, edges);
	tcase_add_test(tc, skipped_epochs);
	tcase_add_test(tc, leak_error_in_interval);
	tcase_add_test(tc, budget_estimate_by_hand);
	tcase_add_test(tc, budget_choice);
	tcase_add_test(tc, budget_first_groups);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
