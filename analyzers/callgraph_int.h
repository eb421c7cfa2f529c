/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The call-graph analyzer's instance (not a public API; the analyzer is
 * described in callgraph.h): its edges, for callgraph.c, which counts
 * them, and for its section of the report (user/report/sec_callgraph.c),
 * which reads a merged instance after the run.
 * Thread: the instance's owner, or any once the run is over.
 */
#ifndef ANALYZERS_CALLGRAPH_INT_H
#define ANALYZERS_CALLGRAPH_INT_H

#include <stdint.h>

#include "analyzers/an_threads.h"
#include "analyzers/analyzer.h"
#include "common/hmap.h"

/* An edge is one 64-bit key, so one hash lookup per call. */
#define EDGE(caller, callee) ((uint64_t)(caller) << 32 | (callee))
#define EDGE_CALLER(k) ((uint32_t)((k) >> 32))
#define EDGE_CALLEE(k) ((uint32_t)(k))

struct cg_thread {
	uint32_t tid;
	struct hmap edges; /* EDGE -> calls */
};

struct callgraph {
	const struct an_ctx *ctx;
	struct hmap edges;	/* EDGE -> calls, all threads */
	struct an_threads threads; /* tid -> struct cg_thread */
	/* sampling: EDGE -> struct sampling_counts * (calls per window) */
	struct hmap wedges;
	uint64_t nomem;		/* calls not recorded */
};

#endif /* ANALYZERS_CALLGRAPH_INT_H */
