/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The "isp" analyzer (struct analyzer_ops analyzer_isp): input-sensitive
 * profiles (Coppa et al., aprof-trms). For every activation of a traced routine a
 * performance point (input size, cost):
 *   - input size: the activation's external input, the bytes that input
 *     system calls (read/recv families, as analyzers/io.h lists them)
 *     delivered to it and to its descendants while it was live; or, for a
 *     routine designated with --size 'GLOB:argN' / 'GLOB:strlen(argN)', the
 *     value the entry probe read from that argument (struct shadow_frame's
 *     size);
 *   - cost (isp_opts.cost): inclusive wall time, inclusive on-CPU time
 *     (the thread's off-CPU intervals taken out, CABBPF_EV_SCHED), or the
 *     number of traced calls in the activation's subtree, itself included
 *     (deterministic, like aprof's basic-block count).
 * Points are grouped per routine by size: calls, min / avg / max cost (the
 * worst-case plot is max against size, the workload plot calls against
 * size); the number of distinct sizes is the profile's richness. The fit
 * (analyzers/fit.h) runs on the worst-case plot, sizes >= 1.
 *
 * Only activations closed by their return make points (the others have no
 * exact cost); they are counted per routine ("unmatched"). Input read
 * inside such an activation still counts for its callers.
 *
 * Each activation's input is its own thread's: the per-activation
 * counters live in a per-thread stack beside the shadow stack.
 *
 * JSON keys written: "isp" (per routine) and "isp_info" (docs/json-schema.md).
 * Threads: an instance is used by the analyzer thread that owns it; the
 * query and plot functions by any one thread after the run.
 */
#ifndef ANALYZERS_ISP_H
#define ANALYZERS_ISP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzers/fit.h"

#define ISP_MAX_SIZES 64 /* --size rules */

enum isp_cost {
	ISP_COST_WALL = 0, /* inclusive wall time, ns (default) */
	ISP_COST_CPU,	   /* inclusive on-CPU time, ns */
	ISP_COST_CALLS,	   /* traced calls in the subtree */
};

struct isp_opts {
	enum isp_cost cost;
	const char *plots_dir;		   /* --plots DIR, or NULL */
	const char *sizes[ISP_MAX_SIZES];  /* --size rules as given */
	size_t nsizes;
	/* [nfuncs], set by the loader once functions are numbered: nonzero
	 * when the routine's size is an argument (--size); NULL: none */
	const uint8_t *sized;
};

/* One size of one routine. Time costs are the traced ones (the probes
 * of the activation's traced callees inside); comp_* the same with those
 * probes' measured cost taken out (equal to cost_* without a measure). */
struct isp_point {
	uint64_t size;
	uint64_t calls;
	uint64_t cost_min, cost_max;
	uint64_t cost_sum;
	uint64_t comp_min, comp_sum;
};

struct an_ctx;

/* Routine fid's points, sorted by size, into *pts (*n of them); pointers
 * into the instance, valid until it changes. Returns the routine's
 * unmatched activations. */
uint64_t isp__points(void *state, uint32_t fid, const struct isp_point **pts, size_t *n);

/* Points recorded (activations with a size and a cost). */
uint64_t isp__npoints(const void *state);

/* A routine's profile as the views read it (isp__routine). */
struct isp_routine {
	const struct isp_point *pts; /* [n], by size; into the instance */
	size_t n;
	bool arg;	    /* sizes are the --size argument (else input bytes) */
	bool compensated;   /* time costs fitted with the callees' probes out */
	enum isp_cost cost; /* what the costs are (isp.cost, or wall for cpu
			       where on-CPU time was not measured) */
	bool fitted;	    /* fit holds the fit (3 sizes >= 1 or more) */
	struct fit_result fit;
};

/* Routine fid's points and fit into *r (pointers into the instance, valid
 * until it changes). Returns 0, -ENOENT (no point) or -ENOMEM. One thread,
 * after the run. */
int isp__routine(void *state, uint32_t fid, struct isp_routine *r);

/* The names and options the instance reports with. */
const struct an_ctx *isp__ctx(const void *state);

/* A --size rule's spec byte (isp_opts.sized, trace_opts.size_specs): 0 =
 * no rule; ISP_SPEC_ON | argument index (0..5), | ISP_SPEC_STRLEN for
 * strlen(argN). */
#define ISP_SPEC_ON 0x40
#define ISP_SPEC_STRLEN 0x80
#define ISP_SPEC_ARG(s) ((s) & 7)
#define ISP_MAX_ARG 5 /* rdi, rsi, rdx, rcx, r8, r9 */

/*
 * Parse a --size rule, "GLOB:argN" or "GLOB:strlen(argN)" (N from 0 to
 * ISP_MAX_ARG), into the glob (copied into glob[len]) and its spec byte.
 * Returns 0, or -EINVAL (malformed; nothing logged: the caller says
 * which option), or -ENAMETOOLONG. Any thread.
 */
int isp__parse_size(const char *rule, char *glob, size_t len, uint8_t *spec);

/* "ns wall", "ns on-CPU" or "calls": the cost's unit for labels. */
const char *isp__cost_unit(enum isp_cost c);

#endif /* ANALYZERS_ISP_H */
