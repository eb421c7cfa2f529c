/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The latency analyzer's files (not a public API):
 *   latency.c       the histograms and the analyzer's callbacks (its
 *                   section of the report: user/report/sec_latency.c);
 *   latency_slow.c  --slower-than: the slowest calls, each with its
 *                   thread, start, times and callers, kept in a bounded
 *                   heap per analyzer instance and merged at the end.
 * Thread: the instance's owner, or any once the run is over.
 */
#ifndef ANALYZERS_LATENCY_INT_H
#define ANALYZERS_LATENCY_INT_H

#include <stddef.h>
#include <stdint.h>

#include "analyzers/analyzer.h"
#include "analyzers/latency.h"

/* Callers kept per slow call, innermost first (the rest are counted). */
#define LAT_CALLERS 8
/* Slow calls listed without --slowest. */
#define LAT_SLOWEST_DEFAULT 20

struct lat_slow_call {
	uint64_t start_ns; /* its entry timestamp */
	uint64_t incl_ns, cpu_incl_ns;
	uint32_t tid, fid;
	uint32_t ncallers; /* in callers[], innermost first */
	uint32_t elided;   /* callers further out than those */
	uint32_t callers[LAT_CALLERS];
	/* --args, --retval: its values (owned by the struct lat_slow that
	 * keeps the call), or NULL */
	struct callvals *vals;
};

/* The calls of at least an_ctx.slower_ns: how many (exact), and the
 * slowest of them (a heap, the fastest kept at [0]). */
struct lat_slow {
	uint64_t over;
	struct lat_slow_call *heap;
	size_t n, cap;
	uint64_t nomem; /* calls that would have been kept: out of memory */
	uint64_t nomem_vals; /* kept calls whose values were not: no memory */
};

/* Return r closed a matched call of at least the threshold: count it, and
 * keep it when it is among the keep slowest. */
void latency_slow__add(struct lat_slow *s, size_t keep, const struct an_return *r);

/* Add src's calls into dst, keeping the keep slowest. Returns 0 or -ENOMEM. */
int latency_slow__merge(struct lat_slow *dst, const struct lat_slow *src, size_t keep);

/* A copy of the kept calls, slowest first (s->n of them; the caller frees),
 * or NULL when there are none or out of memory. */
struct lat_slow_call *latency_slow__sorted(const struct lat_slow *s);

void latency_slow__fini(struct lat_slow *s);

/* The analyzer's instance: for latency.c, which fills it, and for its
 * section of the report (user/report/sec_latency.c), which reads a merged
 * instance after the run. */
struct lat_fn {
	struct latency_hist wall, cpu;
};

struct latency {
	const struct an_ctx *ctx;
	struct lat_fn **fn; /* [nfuncs], NULL until a call of it returns */
	uint64_t nomem;	    /* returns not recorded (out of memory) */
	uint64_t t0;	    /* the earliest entry of a frame closed: UINT64_MAX until one */
	struct lat_slow slow; /* --slower-than */
};

#endif /* ANALYZERS_LATENCY_INT_H */
