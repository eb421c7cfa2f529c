/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Each analyzer's section of the report, written from its merged instance
 * (the instance's layout is the analyzer's *_int.h: the analyzer hands its
 * results over as data, and only its section reads them). sections.c
 * calls them in the analyzers' order; every one writes text (returns 0 or
 * -EIO, -ENOMEM) or its keys into the JSON object w has open (returns 0 or
 * the writer's error, -ENOMEM).
 *
 * Thread: the report's, after the run (runner__join).
 */
#ifndef USER_REPORT_SEC_H
#define USER_REPORT_SEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzers/sampling.h"

struct count;
struct json;
struct latency_hist;

/* sections.c: a row's whole-run estimate of its calls from the sampling
 * windows (--sample), k as sampling__estimate gave it, into the JSON
 * object w has open: "estimate", "calls_est", "calls_est_err95" (null
 * where there is no interval) and, when df > 0 and k is
 * AN_BEST_ESTIMATED, "calls_est_df" (what the interval rests on).
 * Nothing for AN_BEST_NONE. Returns 0 or the writer's error. */
int sections__estimate_json(struct json *w, enum an_best k, double est, double err95,
			    uint32_t df);

/* sec_count.c: calls per function and per thread. */
int sec_count__text(void *state, FILE *f);
int sec_count__json(void *state, struct json *w);
/* The same, with the sampled inclusive times the call tree of the same
 * run carries up (tree: the cct analyzer's merged instance;
 * sec_cct__fn_totals): the per-function counts have no tree, and a total
 * of their own can fall below a callee's. Returns as above. */
int sec_count__text_tree(void *state, void *tree, FILE *f);
int sec_count__json_tree(void *state, void *tree, struct json *w);

/* sec_count_est.c: a sampled run's whole-run estimates for the first rows
 * (nrows of them, sorted: the counts of the table are what the windows
 * saw, exactly); --budget's, every traced function's whole-run calls and
 * what each figure is (exact, estimated, a lower bound). */
struct count_row {
	uint64_t calls;
	const char *name; /* NULL: unnamed, order by fid */
	uint32_t fid;
};
void sec_count__estimates_text(const struct count *c, const struct count_row *rows, size_t nrows,
			       FILE *f);
void sec_count__budget_text(const struct count *c, FILE *f);

/* sec_callgraph.c: the call graph's edges. */
int sec_callgraph__text(void *state, FILE *f);
int sec_callgraph__json(void *state, struct json *w);

/* sec_io.c: I/O per function, per system call and fd kind. */
int sec_io__text(void *state, FILE *f);
int sec_io__json(void *state, struct json *w);

/* sec_cct.c: the calling-context tree. */
int sec_cct__text(void *state, FILE *f);
int sec_cct__json(void *state, struct json *w);
/* --times sampled: each function's sampled total as the tree's functions
 * table has it (its outermost contexts' totals, carried up from the
 * selves: cct__carry_times), ns, into incl[fid] (nfuncs entries, the
 * caller's; 0 for a function the tree does not have). Returns 0, -ENOENT
 * (the times were not sampled) or -ENOMEM. */
int sec_cct__fn_totals(void *state, uint64_t *incl, uint32_t nfuncs);

/* sec_latency.c: the histograms and the slowest calls; one histogram's
 * percentiles on a line of f, and one as the JSON object key (the call
 * tree's per-context histograms use them too). */
int sec_latency__text(void *state, FILE *f);
int sec_latency__json(void *state, struct json *w);
void sec_latency__summary_text(FILE *f, const struct latency_hist *h);
void sec_latency__hist_json(struct json *w, const char *key, const struct latency_hist *h);

/* sec_timeline.c: what the timeline kept and cut. */
int sec_timeline__text(void *state, FILE *f);
int sec_timeline__json(void *state, struct json *w);

/* sec_isp.c: the input-sensitive profile's routines and fits. */
int sec_isp__text(void *state, FILE *f);
int sec_isp__json(void *state, struct json *w);

/* sec_replay.c: what cabbpf replay showed. */
int sec_replay__text(void *state, FILE *f);
int sec_replay__json(void *state, struct json *w);

#endif /* USER_REPORT_SEC_H */
