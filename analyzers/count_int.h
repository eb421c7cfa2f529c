/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The count analyzer's state, shared by its files (not a public API; the
 * analyzer is described in count.h):
 *   count.c      the counts, the callbacks, the tables, text and JSON;
 *   count_est.c  the whole-run estimates of a sampled or --budget run,
 *                as text.
 * Thread: the instance's owner, or any once the run is over.
 */
#ifndef ANALYZERS_COUNT_INT_H
#define ANALYZERS_COUNT_INT_H

#include <stdint.h>
#include <stdio.h>

#include "analyzers/an_threads.h"
#include "analyzers/analyzer.h"
#include "analyzers/count.h"
#include "analyzers/sampling.h"
#include "common/hmap.h"

struct count_fn {
	uint64_t calls;
	struct count_time t;
	struct sampling_counts wc; /* sampling: calls per window */
};

struct count_thread {
	uint32_t tid;
	uint64_t calls;
	struct hmap fn; /* fid -> calls */
};

struct count {
	const struct an_ctx *ctx;
	struct count_fn *fn;	   /* [nfuncs] */
	struct an_threads threads; /* tid -> struct count_thread */
	uint64_t nomem;		   /* per-thread calls not recorded */
};

struct fn_row {
	uint64_t calls;
	const char *name; /* NULL: unnamed, order by fid */
	uint32_t fid;
};

/* Sampling: the counts of the table are what the windows saw, exactly;
 * this says how much of the run that was and what the whole run's calls
 * were, for the first rows (nrows of them, sorted). */
void count__estimates_text(const struct count *c, const struct fn_row *rows, size_t nrows,
			   FILE *f);

/* --budget: every traced function's whole-run calls, what each figure is
 * (exact, estimated, a lower bound), the most called first. */
void count__budget_text(const struct count *c, FILE *f);

#endif /* ANALYZERS_COUNT_INT_H */
