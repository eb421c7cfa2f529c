/* SPDX-License-Identifier: BSD-2-Clause */
/* The isp analyzer's instance: what isp.c fills and its section of the
 * report (user/report/sec_isp.c) reads after the run. Not for other files
 * (they use isp.h). */
#ifndef ANALYZERS_ISP_INTERNAL_H
#define ANALYZERS_ISP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzers/an_threads.h"
#include "analyzers/fit.h"
#include "analyzers/isp.h"
#include "common/hmap.h"

struct an_ctx;
struct ithread;
struct json;

/* One routine's profile. */
struct isp_fn {
	struct hmap bysize;	/* size -> index + 1 in pts */
	struct isp_point *pts;	/* [n] of cap */
	size_t n, cap;
	size_t last;		/* index of the point touched last */
	bool sorted;		/* pts by size (bysize then out of date) */
	bool io, arg;		/* points sized by input bytes / by the argument */
	uint64_t total;		/* cost summed over points */
	double probe_total;	/* the probes taken out of comp_*, summed */
	uint64_t unmatched;	/* activations closed without a return */
	uint64_t unsized;	/* --size routine, activation without a size */
};

struct isp {
	const struct an_ctx *ctx;
	enum isp_cost cost;
	struct isp_fn *fn; /* [nfuncs] */
	struct an_threads threads; /* tid -> struct ithread */
	const uint8_t *sized; /* isp_opts.sized */
	/* cct_opts.probe_ns: a probed call's measured cost by fid, taken out
	 * of its callers' time costs; NULL: not measured */
	const double *probe_ns;
	uint64_t points, unmatched, unsized, nomem, resync, input_bytes;
};

/* Add calls activations at size with one cost (comp: with the callees'
 * probes taken out) to f (merge passes calls 0 and fixes up). Returns 0
 * or -ENOMEM. Owner thread. */
int isp__add_point(struct isp_fn *f, uint64_t size, uint64_t cost, uint64_t comp,
		   uint64_t calls);

/* Whether f's time costs are fitted with the callees' probes taken out:
 * a measure exists and those probes are at most half of f's cost (where
 * they are more, what is left of the routine's own cost is within the
 * measure's error, and the traced cost, whose probes grow with the
 * callees' number, is fitted instead). */
bool isp__compensated(const struct isp *a, const struct isp_fn *f);

/* Sort f's points by size (once; the size map is rebuilt after).
 * Returns 0 or -ENOMEM. */
int isp__sort(struct isp_fn *f);

/* Fit f's per-size minimum cost (noise only adds to a cost), with the
 * probes taken out when isp__compensated. Returns 0 (fitted), -EINVAL (too few sizes)
 * or -ENOMEM. */
int isp__fit(const struct isp *a, const struct isp_fn *f, struct fit_result *r);

/* Distinct sizes >= 1 of a sorted f. */
size_t isp__sizes(const struct isp_fn *f);

/* The cost the points hold: isp.cost, but wall for cpu when on-CPU time
 * was not measured (cct_opts.cpu_time: read after the run only). */
enum isp_cost isp__cost(const struct isp *a);


#endif /* ANALYZERS_ISP_INTERNAL_H */
