/* SPDX-License-Identifier: BSD-2-Clause */
/* What isp.c and isp_plot.c share: the instance's layout. Not for other
 * files (they use isp.h). */
#ifndef ANALYZERS_ISP_INTERNAL_H
#define ANALYZERS_ISP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "analyzers/an_threads.h"
#include "analyzers/fit.h"
#include "analyzers/isp.h"
#include "common/hmap.h"

struct an_ctx;
struct ithread;

/* One routine's profile. */
struct isp_fn {
	struct hmap bysize;	/* size -> index + 1 in pts */
	struct isp_point *pts;	/* [n] of cap */
	size_t n, cap;
	size_t last;		/* index of the point touched last */
	bool sorted;		/* pts by size (bysize then out of date) */
	bool io, arg;		/* points sized by input bytes / by the argument */
	uint64_t total;		/* cost summed over points */
	uint64_t unmatched;	/* activations closed without a return */
	uint64_t unsized;	/* --size routine, activation without a size */
};

struct isp {
	const struct an_ctx *ctx;
	enum isp_cost cost;
	struct isp_fn *fn; /* [nfuncs] */
	struct an_threads threads; /* tid -> struct ithread */
	const uint8_t *sized; /* isp_opts.sized */
	uint64_t points, unmatched, unsized, nomem, resync, input_bytes;
};

/* Add calls activations at size with one cost to f (merge passes calls
 * 0 and fixes up). Returns 0 or -ENOMEM. Owner thread. */
int isp__add_point(struct isp_fn *f, uint64_t size, uint64_t cost, uint64_t calls);

/* Sort f's points by size (once; the size map is rebuilt after).
 * Returns 0 or -ENOMEM. */
int isp__sort(struct isp_fn *f);

/* Fit f's worst-case plot. Returns 0 (fitted), -EINVAL (too few sizes)
 * or -ENOMEM. */
int isp__fit(const struct isp_fn *f, struct fit_result *r);

/* Distinct sizes >= 1 of a sorted f. */
size_t isp__sizes(const struct isp_fn *f);

#endif /* ANALYZERS_ISP_INTERNAL_H */
