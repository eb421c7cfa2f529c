/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sampling windows and the estimates drawn from them. With --sample or
 * --start-disabled tracing is on only in windows (PEBIL's toggles, seed
 * 004): what happens inside a window is seen exactly; the whole run is
 * estimated from the windows.
 *
 * Time is the target's progress where there is enough of it: its
 * user-mode CPU time, sampled apart from its probes' traps (measure "user
 * CPU", user/trace/progress.h), so a program its probes slow down many
 * times inside the windows is not under-estimated; a program that mostly
 * waits is measured in wall time ("wall"). The unit of on and total is
 * whatever measure says.
 *
 * A count seen as c_i in window i (on for d_i), over a run of T, is
 * estimated by the ratio estimator N = T * sum(c_i) / sum(d_i). The
 * windows are systematic (one a period), not drawn at random, so the
 * standard error is systematic sampling's: from the successive
 * differences of the windows' residuals e_i = c_i - r d_i in time order,
 *   se(N) = T / sum(d_i) * sqrt(W / (2 (W - 1)) * sum((e_i - e_{i-1})^2)),
 *   r = sum(c_i) / sum(d_i),
 * times sqrt(1 - f) where f = sum(d_i) / T (the fraction of the run seen:
 * a run traced throughout has no sampling error). On windows that differ
 * only by chance it is the usual ratio estimator's; where the program's
 * behaviour changes (phases) only the change's few differences count, not
 * every window's distance from the run's mean, which made a phased
 * program's intervals needlessly wide (bench/sampling_fractions.sh). The
 * 95 % interval is +-t se, t Student's for the degrees of
 * freedom of a mean square successive difference of W values,
 * 2 (W - 1)^2 / (3W - 4) (von Neumann; ~2/3 of W - 1: sampling__mssd_df)
 * (W >= 2; with one window there is no error estimate): the variance is
 * itself estimated from a handful of windows, and 1.96 se missed calm's
 * true count in 29% of 28 --budget runs of tests/targets/budget here
 * (1-5 degrees of freedom each). It assumes the windows are a fair sample
 * of the run: a program whose behaviour changes with the sampling
 * period's phase defeats it (a periodic sleep of exactly the period, say).
 *
 * The windows' on-times by progress are corrected for the probes' traps
 * by a calibrated figure with its own error (on_sd): S of it in the
 * windows shifts sum(d_i) and T alike, N by N S (1/sum(d_i) - 1/T), which
 * is added to the interval as a normal 95 % term in quadrature (the same
 * error of --budget's strata: sampling__budget_estimate).
 */
#ifndef ANALYZERS_SAMPLING_H
#define ANALYZERS_SAMPLING_H

#include <stdbool.h>
#include <stdint.h>

struct an_windows {
	uint32_t n;	    /* windows, epochs 1..n */
	const uint64_t *on; /* [n]: how long window epoch (index epoch - 1) was on */
	uint64_t total;	    /* the run, from the first window's start to the end */
	const char *measure; /* what on and total measure: "user CPU" (progress
				ticks) or "wall" (ns) */
	/* [n] or NULL: epochs that are not windows of the sample (--budget:
	 * epochs in which some function's probes were out, where an edge's
	 * caller may not be known): their counts and on-times are left out */
	const uint8_t *skip;
	/* [n] or NULL: the systematic error of each on, in its unit: the
	 * probes' share of the progress clock taken out of a window is a
	 * calibrated figure (user/trace/calibrate.h), one error for all
	 * windows, so these move together (and total with their sum) */
	const double *on_sd;
};

/* Student's t quantile for a two-sided 95% interval with df degrees of
 * freedom (1.96 as df grows; infinite for 0). Pure; any thread. */
double sampling__t975(uint32_t df);

/* The degrees of freedom of a variance from the successive differences
 * of n values (a mean square successive difference): 2 (n - 1)^2 / (3n - 4)
 * rounded down, at least 1 for n >= 2 (1 for 2 or 3 values; ~2/3 of n - 1
 * as n grows), 0 below 2. Pure; any thread. */
uint32_t sampling__mssd_df(uint32_t n);

/* The windows in the sample: those not skipped. Pure; any thread. */
uint32_t sampling__windows(const struct an_windows *w);

/* The degrees of freedom of sampling__estimate's interval:
 * sampling__mssd_df of the windows in the sample (0 with none or one).
 * Pure; any thread. */
uint32_t sampling__df(const struct an_windows *w);

/* A count kept per window: w[epoch - 1], grown on demand (windows past
 * SAMPLING_MAX_WINDOWS share the last slot: never lost). Zeroed = empty. */
struct sampling_counts {
	uint64_t *w;
	uint32_t n;
};

#define SAMPLING_MAX_WINDOWS (1u << 20)

/* Add k to window epoch (>= 1). Returns 0 or -ENOMEM. The analyzer's
 * thread. */
int sampling__add(struct sampling_counts *c, uint32_t epoch, uint64_t k);
/* Add src into dst, window by window. Returns 0 or -ENOMEM. */
int sampling__merge(struct sampling_counts *dst, const struct sampling_counts *src);
/* Free; a zeroed one is fine. */
void sampling__fini(struct sampling_counts *c);

/* Sum of on: how long tracing was on. */
uint64_t sampling__on(const struct an_windows *w);


/*
 * --budget (user/trace/budget.h): the run is a sequence of epochs 1..n (a
 * new one at every change of what is traced); in each, every function
 * was exact (its probes in throughout), sampled (its probes in only in
 * window epochs) or not traced (not probed at all).
 */
enum an_bmode { AN_B_NONE = 0, AN_B_EXACT = 1, AN_B_SAMPLED = 2 };

struct an_budget {
	uint32_t n;		     /* epochs 1..n */
	const uint64_t *len;	     /* [n]: epoch e's length (index e - 1), in measure */
	const uint8_t *window;	     /* [n]: 1 when the sampled functions' probes were in */
	const uint32_t *snap;	     /* [n]: the modes in force: modes[snap[e - 1]] */
	const uint8_t *const *modes; /* [..][nfuncs]: enum an_bmode of each fid */
	uint32_t nfuncs;
	const char *measure; /* as in struct an_windows */
	uint64_t min_len;    /* a stratum's windows pool until this long */
	/* [n] or NULL: the share of the target's CPU time its probes took in
	 * epoch e (the loader's model): where it is high, little of the
	 * window is the target's own progress, and the progress clock's
	 * error (part of a trap counted as user time) dominates */
	const double *probe_share;
	/* [n] or NULL: the standard error of len from the correction below
	 * (the calibrated share's error times the epoch's probe hits), the
	 * same sign in every epoch: an error of the estimates that windows
	 * cannot average out, added to their intervals */
	const double *len_sd;
	/* len had what the traps add to the progress clock taken out (the
	 * share measured at start-up, user/trace/calibrate.h): a high
	 * probe_share no longer biases the estimates low */
	bool progress_corrected;
};

/* What a function's whole-run count is. */
enum an_best {
	AN_BEST_EXACT,	   /* exact all along: the count seen is the count */
	AN_BEST_ESTIMATED, /* sampled some of the time, with a window there */
	AN_BEST_LOWER,	   /* sampled some of the time without any window
			      there: the count seen is a lower bound */
	AN_BEST_NONE,	   /* not traced */
};

/* Windows under this share of the run estimate nothing: a lower bound. */
#define SAMPLING_MIN_SHARE 0.01

/*
 * Estimate the run's total of a count seen as counts[e - 1] in window e
 * (ncounts <= w->n; missing windows count 0). Returns what the figure is:
 *   AN_BEST_ESTIMATED: *est the estimate, *err95 the half-width of its
 *     95 % interval (0 for windows that held the whole run);
 *   AN_BEST_LOWER: the windows cannot stand for the run (one window in
 *     the sample, so no error estimate, or windows under
 *     SAMPLING_MIN_SHARE of it): *est is the count seen, a lower bound,
 *     *err95 -1; a scaled figure would be one without an interval;
 *   AN_BEST_NONE: no window was on (*est 0, *err95 -1).
 * Pure; any thread.
 */
enum an_best sampling__estimate(const uint64_t *counts, uint32_t ncounts,
				const struct an_windows *w, double *est, double *err95);

/*
 * fid's whole-run calls from its calls seen per epoch (counts[e - 1],
 * ncounts <= b->n; missing epochs count 0): the calls of its exact epochs
 * as seen, plus an estimate of its sampled epochs stratified by window:
 * each window (pooled with the next while shorter than min_len) stands
 * for itself and the off epochs after it (the first also for those
 * before it), at its own rate, so a program whose behaviour changes is
 * estimated from the windows of each phase, not from an average of all
 * (measured: a function hot in a first phase and not called in a second
 * was estimated at 1.8x its calls by one ratio over all windows). The 95%
 * interval is systematic sampling's, from the successive differences of
 * the strata's rates, with each stratum's finite-population correction,
 * +-t standard errors (Student's, sampling__mssd_df(strata) degrees of
 * freedom). Sets *est and *err95 (0 unless estimated) and, when df is not
 * NULL, *df (those degrees of freedom; 0 unless estimated). Returns what the figure is: a
 * single stratum (one window, or windows pooled into one) has no error
 * estimate, so what was seen is given as a lower bound (AN_BEST_LOWER),
 * never a scaled figure without its interval. Pure; any thread; -ENOMEM
 * is reported as AN_BEST_LOWER.
 */
enum an_best sampling__budget_estimate(const struct an_budget *b, uint32_t fid, const uint64_t *counts,
			      uint32_t ncounts, double *est, double *err95, uint32_t *df);

/* The probe share (struct an_budget) of the windows of fid's sampled
 * epochs, weighted by their length; 0 when it has none. Pure. */
double sampling__window_share(const struct an_budget *b, uint32_t fid);

/* Above this window probe share an estimate is marked as likely low. */
#define AN_B_TRAP_BOUND 0.5

/* "exact", "estimated", "lower_bound", "not_traced". */
const char *sampling__best_name(enum an_best k);

#endif /* ANALYZERS_SAMPLING_H */
