/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The "latency" analyzer (struct analyzer_ops analyzer_latency): how each
 * function's calls are distributed in duration, as funclatency and
 * bpftrace's hist() show it. Every activation closed by its return event
 * adds its own duration (recursive ones too: each call is a call) to the
 * function's log2 histogram of wall time and of on-CPU time, with the
 * exact minimum and maximum. Percentiles come from the buckets: a
 * percentile is the range [lo, hi] that holds it for certain (its bucket,
 * narrowed by the exact minimum and maximum), never a single made-up
 * value.
 *
 * The durations are traced times: each includes the cost of the call's
 * own probes (the time between the two timestamps) and of the traced
 * calls' inside it; the text and JSON say so ("time": "traced").
 *
 * Text: the 5 functions with the most time in all (or those --hist GLOB
 * names), each a line of percentiles and a bar histogram. JSON key:
 * "latency" (docs/json-schema.md).
 *
 * Thread: the one that owns the instance, or any once the run is over.
 */
#ifndef ANALYZERS_LATENCY_H
#define ANALYZERS_LATENCY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json;

/* Bucket 0: 0-1 ns; bucket b >= 1: [2^b, 2^(b+1)) ns; the last is open
 * (2^47 ns: 39 hours). */
#define LATENCY_BUCKETS 48

struct latency_hist {
	uint64_t n;
	uint64_t min_ns, max_ns; /* exact; valid when n > 0 */
	uint64_t sum_ns;
	uint64_t b[LATENCY_BUCKETS];
};

/* The bucket of a duration. */
unsigned latency__bucket(uint64_t ns);

/* Bucket b's range, [*lo, *hi] inclusive. */
void latency__bounds(unsigned b, uint64_t *lo, uint64_t *hi);

/* The range [*lo, *hi] that surely holds percentile q (0 < q <= 1: the
 * value of rank ceil(q * n) in order) of h. Returns false when h is
 * empty. */
bool latency__percentile(const struct latency_hist *h, double q, uint64_t *lo, uint64_t *hi);

/* Add one duration to h; add s into d (the calling-context tree keeps
 * these per context for the functions --hist names: analyzers/cct.h).
 * The histogram's owner thread. */
void latency__hist_add(struct latency_hist *h, uint64_t ns);
void latency__hist_merge(struct latency_hist *d, const struct latency_hist *s);

/* (A histogram as text and JSON: user/report/sec.h, sec_latency__*.) */

/* fid's histograms (cpu: on-CPU time), or NULL when none of its calls
 * returned. */
const struct latency_hist *latency__hist(const void *state, uint32_t fid, bool cpu);

#endif /* ANALYZERS_LATENCY_H */
