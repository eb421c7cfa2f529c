/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The budget controller's state, shared by its files (not a public API;
 * the design is in budget.h):
 *   budget.c         the controller's life: choice, epochs, the cost model,
 *                    the guard on the exact functions' pace, the ticks;
 *   budget_moves.c   functions moved between exact and sampled, windows;
 *   budget_report.c  its text and JSON.
 * The loader's main thread calls all of them.
 */
#ifndef CABBPF_BUDGET_INT_H
#define CABBPF_BUDGET_INT_H


#include <stdbool.h>
#include <stdint.h>

#include "user/trace/budget.h"
#include "user/trace/trace.h"


/* A group is used again only once its last links are gone: they carry
 * its number, so the gate would open them too. */
/* What the probes may cost beyond the budget before any rate is known:
 * about one drain round of the start, when every function is traced. */
#define ALLOWANCE_NS 1e6
/* The shortest window worth opening. */
#define MIN_WINDOW_NS 1000000ULL
/* Link sets waiting for their release beyond which no window opens. */
#define MAX_CLOSING 256
/* The least of the progress made in windows a sampled function's rate is
 * learnt from. */
#define MIN_NATIVE_NS 500000.0
/*
 * The least of the target's own progress the exact functions' pace is
 * judged on (the guard) or learnt from (the period's choice), unless
 * GUARD_CPU_NS of the target's CPU time went by since the last change (in
 * a storm of traps progress is slow to come, but the traps are the
 * target's CPU time). Not wall time: under load the target may not run
 * for tens of ms, and a pace taken over a fraction of a millisecond of
 * progress mistakes one call of a rare function for a trend (10 ms of
 * wall time or 0.5 ms of progress did: under two CPU hogs the budget
 * suite's child, 1% of the target's time, passed for more than a 10%
 * budget and was sampled). Over 2 ms a function must make ~7
 * single-stepped calls to pass for 10%; a storm fills 10 ms of CPU time
 * as fast as it filled 10 ms of wall time.
 */
#define EXACT_NATIVE_NS 2000000.0
#define GUARD_CPU_NS 10000000ULL
/*
 * How much dearer the budget takes a probe hit than its measured cost. The
 * target's own progress is its CPU time less what the probes cost: when
 * they cost most of it (a slowdown of 10x and more), an error of the
 * model passes for progress. The calibration varies by ~15% from run to
 * run here, and a program's traps cost more than the calibration's
 * (python3.11: ~7 us a traced call against 5.7-7.5 measured): with the
 * measured costs, --budget 3000 on python3.11 kept everything exact for
 * an estimated 410% and a real slowdown of 209x. Taken 25% dearer, a
 * model that explains all the CPU time leaves no progress, and the guard
 * takes the dearest functions out; at small budgets the probes' cost is
 * a small share of the CPU time and this changes little.
 */
#define COST_MARGIN 1.25

struct bepoch {
	uint64_t t0, t1; /* wall ns since the run's start */
	uint64_t p0, p1; /* the target's progress ticks */
	uint64_t c0, c1; /* the target's CPU time, ns */
	double m0, m1;	 /* the probes' cost so far (model), ns */
	double l0, l1;	 /* of it, what the progress clock counted so far, ns */
	double s0, s1;	 /* and that figure's standard error so far, ns */
	uint32_t snap;	 /* modes in force: snaps[snap] */
	bool window;	 /* the sampled functions' probes were in */
	bool partial;	 /* some function's probes were out */
	bool cut;	 /* a window the guard closed early */
};

/* A decision point: what the counters were when the modes last changed. */
struct mark {
	uint64_t t, c; /* wall ns since start, CPU ns */
	double m;      /* model ns */
	double wnat;   /* native ns inside windows since then */
};

struct budget {
	struct budget_opts o;
	struct trace *tr;
	double B; /* pct / 100 */
	uint64_t t0;
	clockid_t clk;
	bool have_clk;
	uint64_t cpu_last; /* the CPU clock's last reading since start */
	bool clock; /* the target's progress is measured (trace__progress_ns) */
	uint64_t *seen, *dh; /* probe hits in the model; since the mark */
	double *rate;	     /* cost per native ns; < 0: not known */
	double trap;	     /* the probes' cost so far (model), ns */
	double leak;	     /* of it, the progress clock's share (no margin), ns */
	double leak_sd;	     /* leak's standard error: the calibration's, one sign */
	double per_hit;	     /* a hit's share of cost_ns, COST_MARGIN included */
	/* closed groups' probe hits so far, per group and in all */
	uint64_t gseen[CABBPF_NGROUPS];
	uint64_t ngated;
	uint8_t *mode, *next, *member;
	uint8_t *grp;  /* the exact group (bucket) holding each fid, or BUDGET_NO_GROUP */
	uint8_t *ngrp; /* scratch: grp after a change */
	uint32_t nexact, nsampled;
	uint32_t live;			     /* the exact groups in */
	uint64_t used[CABBPF_NGROUPS], uses; /* when each group was last taken */
	bool window;			     /* the window's group is in and open */
	unsigned wg;			     /* the window's group */
	uint64_t win_t0, win_len;
	double win_m0, win_plan;
	uint64_t win_c0;
	double on_rate; /* probe ns per wall ns while a window is on */
	bool want_window;
	uint64_t win_deadline; /* a planned window must open before this */
	struct mark mk;
	uint64_t next_t; /* the next choice, wall ns since t0 */
	struct bepoch *ep;
	uint32_t nep, epcap;
	uint8_t **snaps;
	uint32_t nsnap, snapcap;
	uint32_t swaps, nwin, ncut, trips;
	bool failed;
	bool closing_full; /* said that windows stop (MAX_CLOSING) */
	/* after budget__finish */
	bool by_progress;
	uint64_t wall_ns, cpu_ns;
	uint64_t *len;
	uint8_t *win, *skip;
	uint32_t *snapi;
	double *share;
	double *len_sd;
	struct an_budget ab;
	struct an_windows aw;
};


/* budget.c */
/* CLOCK_MONOTONIC in ns, and the target's CPU time (traps included; the
 * last reading once it is gone). */
uint64_t budget__mono_ns(void);
uint64_t budget__cpu_ns(struct budget *b);
/* Opens the next epoch with what is in now: the gate's one store.
 * Returns 0 or -errno (then the gate is as it was). */
int budget__new_epoch(struct budget *b);

/* budget_moves.c */
/* The functions' modes counted into nexact/nsampled. */
void budget_moves__count_modes(struct budget *b);
/* next[] and ngrp[] in force with one gate store. Returns 0, or -errno
 * (then nothing changed). */
int budget_moves__commit(struct budget *b, uint32_t add, uint32_t drop, const char *why);
/* The modes chosen in next[] applied: link sets swapped, one gate store.
 * Returns 0 or -errno. */
int budget_moves__apply(struct budget *b, const char *why);
/* A sampling window opened at t, or closed (cut: before its end). */
void budget_moves__open_window(struct budget *b, uint64_t t);
void budget_moves__close_window(struct budget *b, uint64_t t, bool cut);

#endif
