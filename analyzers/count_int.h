/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The count analyzer's instance (not a public API; the analyzer is
 * described in count.h): for count.c, which counts, and for its section of
 * the report (user/report/sec_count.c, sec_count_est.c), which reads a
 * merged instance after the run.
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

#endif /* ANALYZERS_COUNT_INT_H */
