/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --budget P%: keep the target's slowdown under P%
 * without the user choosing functions. Every function is EXACT (its probes
 * in all along: its count is exact) or SAMPLED (its probes in only during
 * windows: its count is estimated from them). A function's cost to the
 * target is its rate times the cost of one traced call of its site class
 * (calibrated at start-up: user/trace/calibrate.h), per ns of the target's
 * own progress; the cheapest stay exact up to half the budget, the rest
 * share windows paid with what is left, and the choice is made again
 * every period as the program's behaviour changes.
 *
 * The mechanism: probe groups (user/trace/trace.h), each a link set that
 * goes in and out on its own and that the gate opens on its own. The
 * exact functions are held in several groups ("buckets": at the start
 * every function is exact, in BUDGET_FIRST_GROUPS buckets of neighbouring
 * functions), the sampled ones in a window's group, attached at the
 * window's start and taken out at its end (no breakpoint in between).
 * Taking a group out is fast (its breakpoints go at once; the kernel's
 * release, grace periods long, goes on in a thread); putting thousands of sites
 * in while the target traps hard is not (60-300 ms measured for 6,000
 * sites of python3.11), so the guard, which must act within a round,
 * only takes whole buckets out (their functions become sampled), and the
 * period's choice rebuilds only the buckets that lose a function: their
 * other functions go into a new group beside the old one, the gate
 * switches in one store, the old one goes out, and they never miss a
 * call. Functions found cheap again go into a new bucket of their own.
 * Each change of what is traced opens a new epoch; the events carry it,
 * and per epoch the report knows every function's mode (struct an_budget,
 * analyzers/sampling.h).
 *
 * The budget is kept in the target's CPU time: what the probes cost (their
 * hits, counted in the kernel per function, each half a calibrated call)
 * against what the target did besides (its CPU time, read from its
 * process CPU clock, minus that cost). A guard checks it at every drain
 * round: when the probes have cost more than P% of the target's own
 * progress (plus 1 ms, about a round at the start, before any rate is
 * known), the open window closes (a window may spend its plan ahead of
 * the period's earnings, not more), and if the exact set alone spends
 * faster than the budget earns, its costliest buckets go out at once.
 * The model misses what a probe costs besides its own trap (cold caches,
 * sites going in and out): measured 1.3-1.5x low on python3.11.
 *
 * All calls from the loader's main thread.
 */
#ifndef USER_TRACE_BUDGET_H
#define USER_TRACE_BUDGET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "analyzers/sampling.h"
#include "user/trace/progress.h"

struct trace;
struct json;

/* The bitmap of partial epochs the shadow stacks read (2^24 bits). */
#define BUDGET_PARTIAL_BYTES (1u << 21)
/* Buckets of the exact functions at the start; no group: BUDGET_NO_GROUP. */
#define BUDGET_FIRST_GROUPS 12
#define BUDGET_NO_GROUP 0xff

/* The groups every function starts in (trace_opts.first_group): the
 * functions with a cost (probed) spread over BUDGET_FIRST_GROUPS runs of
 * neighbouring fids; the others BUDGET_NO_GROUP. Pure. */
void budget__first_groups(const double *cost_ns, uint32_t n, uint8_t *out);

struct budget_opts {
	pid_t pid;	    /* the target: its CPU time and progress */
	double pct;	    /* the slowdown allowed, in % (> 0) */
	uint32_t period_ms; /* how often the choice is made again */
	uint32_t nfuncs;
	const double *cost_ns; /* [nfuncs]: one traced call's cost; 0: not probed */
	/* [nfuncs] or NULL: of cost_ns, what the progress clock counts as
	 * the target's user time (user/trace/calibrate.h), taken out of the
	 * progress measured in each epoch; and its standard error (the
	 * calibration's count of ticks), which the estimates' intervals
	 * include */
	const struct progress_leak *leak;
	/* BUDGET_PARTIAL_BYTES, zeroed; the budget sets epoch e's bit when
	 * some function's probes are out during e (pipeline/shadow.h) */
	uint8_t *partial;
	const char *const *names; /* [nfuncs], for -v's lines */
	bool entry_only;	  /* no return probes: cost_ns is an entry's */
};

struct budget;

/* The run starts now: tr was attached with o.groups and first_group =
 * budget__first_groups(o.cost_ns) (the gate closed); epoch 1 opens with
 * everything traced.
 * Returns 0 and *out (free with budget__free), or -ENOMEM. */
int budget__new(const struct budget_opts *o, struct trace *tr, struct budget **out);

/* Check the budget, open and close windows, choose again at a period's
 * end. Returns 0, or -errno of an attach (logged; tracing then goes on
 * with what is in). */
int budget__tick(struct budget *b, uint64_t now_ns);

/* The run ends: the gate closes (the caller detaches next). */
void budget__finish(struct budget *b, uint64_t end_ns);

/* For the report, after budget__finish: every function's mode per epoch
 * (the functions' estimates), and the epochs in which everything was
 * traced (the edges' estimates). Valid until budget__free. */
const struct an_budget *budget__plan(const struct budget *b);
const struct an_windows *budget__windows(const struct budget *b);

/* Key "budget" into the open JSON object w (docs/json-schema.md). */
int budget__json(const struct budget *b, struct json *w);
/* The report summary's line. */
void budget__text(const struct budget *b, FILE *f);

void budget__free(struct budget *b);

/*
 * The choice (pure, for tests): given each function's cost rate o[fid]
 * (probe time per ns of the target's own progress; < 0: not known), its
 * mode now (enum an_bmode) and the budget B (a fraction: 0.25 for 25%),
 * write the modes to have into next[]. Functions not known keep their
 * mode. If the exact set costs more than B, or more than B/2 while some
 * functions are sampled, its costliest become sampled until it costs at
 * most B/2; otherwise sampled functions known to be cheap become exact
 * while the exact set stays under 0.4 B (hysteresis: a function does
 * not go back and forth on noise), or all of them when everything fits
 * under 0.8 B. Returns how many functions changed mode.
 */
uint32_t budget__choose(const double *o, const uint8_t *mode, uint32_t n, double B, uint8_t *next);

#endif /* USER_TRACE_BUDGET_H */
