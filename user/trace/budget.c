// SPDX-License-Identifier: BSD-2-Clause
/* The budget controller: the design is in budget.h; budget_int.h lists
 * its files. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "pipeline/record.h"
#include "user/trace/budget_int.h"

uint64_t budget__mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The target's CPU time (all its threads, traps included), ns; the last
 * reading once it is gone. */
uint64_t budget__cpu_ns(struct budget *b)
{
	struct timespec ts;

	if (b->have_clk && !clock_gettime(b->clk, &ts))
		b->cpu_last = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	return b->cpu_last;
}

/* ----------------------------------------------------------- choice -- */

struct ranked {
	double o;
	uint32_t fid;
};

static int cmp_desc(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->o != y->o)
		return x->o > y->o ? -1 : 1;
	return x->fid < y->fid ? -1 : x->fid > y->fid;
}

uint32_t budget__choose(const double *o, const uint8_t *mode, uint32_t n, double B, uint8_t *next)
{
	struct ranked *v = malloc((n + 1) * sizeof(*v));
	double ox = 0, os = 0;
	uint32_t i, k = 0, changed = 0, nsampled = 0;

	memcpy(next, mode, n);
	if (!v)
		return 0;
	for (i = 0; i < n; i++) {
		if (mode[i] == AN_B_EXACT && o[i] > 0)
			ox += o[i];
		if (mode[i] == AN_B_SAMPLED) {
			nsampled++;
			if (o[i] >= 0)
				os += o[i];
		}
	}
	if (ox > B || (nsampled && ox > B / 2 * 1.25)) {
		/* The costliest exact ones become sampled. */
		for (i = 0; i < n; i++)
			if (mode[i] == AN_B_EXACT && o[i] > 0)
				v[k++] = (struct ranked){o[i], i};
		qsort(v, k, sizeof(*v), cmp_desc);
		for (i = 0; i < k && ox > B / 2; i++) {
			next[v[i].fid] = AN_B_SAMPLED;
			ox -= v[i].o;
			changed++;
		}
	} else if (nsampled) {
		/* Sampled ones known to be cheap become exact: all of them
		 * when everything fits, else the cheapest first. */
		bool all = ox + os <= B * 0.8;

		for (i = 0; i < n; i++)
			if (mode[i] == AN_B_SAMPLED && o[i] >= 0)
				v[k++] = (struct ranked){o[i], i};
		qsort(v, k, sizeof(*v), cmp_desc);
		for (i = k; i-- > 0;) {
			if (!all && ox + v[i].o > B / 2 * 0.8)
				break;
			next[v[i].fid] = AN_B_EXACT;
			ox += v[i].o;
			changed++;
		}
	}
	free(v);
	return changed;
}

/* ----------------------------------------------------------- epochs -- */

static int grow_epochs(struct budget *b)
{
	if (b->nep == b->epcap) {
		uint32_t cap = b->epcap ? b->epcap * 2 : 64;
		struct bepoch *e = realloc(b->ep, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		b->ep = e;
		b->epcap = cap;
	}
	return 0;
}

/* A copy of the modes now, as the last snapshot (or the last one if the
 * same). */
static int snapshot(struct budget *b)
{
	uint8_t *s;

	if (b->nsnap && !memcmp(b->snaps[b->nsnap - 1], b->mode, b->o.nfuncs))
		return 0;
	if (b->nsnap == b->snapcap) {
		uint32_t cap = b->snapcap ? b->snapcap * 2 : 16;
		uint8_t **v = realloc(b->snaps, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		b->snaps = v;
		b->snapcap = cap;
	}
	s = malloc(b->o.nfuncs);
	if (!s)
		return -ENOMEM;
	memcpy(s, b->mode, b->o.nfuncs);
	b->snaps[b->nsnap++] = s;
	return 0;
}

/* The target's progress so far, in ticks (trace__progress_ns). */
static uint64_t progress_ticks(const struct budget *b)
{
	uint64_t ns;

	trace__progress_ns(b->tr, &ns);
	return ns / PROGRESS_TICK_NS;
}

/* End the current epoch now (if any). */
static void end_epoch(struct budget *b, uint64_t t)
{
	struct bepoch *e;

	if (!b->nep)
		return;
	e = &b->ep[b->nep - 1];
	e->t1 = t;
	e->p1 = progress_ticks(b);
	e->c1 = budget__cpu_ns(b);
	e->m1 = b->trap;
	e->l1 = b->leak;
	e->s1 = b->leak_sd;
}

/* Open the next epoch with what is in now: the gate's one store. Returns
 * 0 or -errno (then the gate is as it was). */
int budget__new_epoch(struct budget *b)
{
	struct bepoch *e;
	uint32_t n, groups;
	uint64_t t;
	int err;

	if (b->nep + 1 >= REC_EPOCH_MASK)
		return -E2BIG; /* the records' epochs are 24 bits */
	err = grow_epochs(b);
	if (!err)
		err = snapshot(b);
	if (err)
		return err;
	n = b->nep + 1;
	groups = b->live | (b->window ? 1u << b->wg : 0);
	e = &b->ep[b->nep];
	memset(e, 0, sizeof(*e));
	e->snap = b->nsnap - 1;
	e->window = b->window;
	e->partial = b->nsampled && !b->window;
	/* The shadow stacks read the bit with the epoch's first event:
	 * released before the store that opens it. */
	if (e->partial)
		__atomic_fetch_or(&b->o.partial[n >> 3], (uint8_t)(1u << (n & 7)),
				  __ATOMIC_RELEASE);
	t = budget__mono_ns() - b->t0;
	end_epoch(b, t);
	trace__set_gate(b->tr, n, groups);
	e->t0 = t;
	e->p0 = progress_ticks(b);
	e->c0 = budget__cpu_ns(b);
	e->m0 = b->trap;
	e->l0 = b->leak;
	e->s0 = b->leak_sd;
	b->nep = n;
	return 0;
}

/* ------------------------------------------------------------ model -- */

/* Fold the probes' hits since the last call into the model: the
 * kernel's counts (trace__fhits: now, whatever the loader's pace), each
 * hit an entry or a return, half a traced call's cost (the whole of it
 * without return probes); closed groups' hits are in them too (the same
 * trap, no event), and counted apart for the report. dh: the calls since
 * the mark, in hits. */
static void account(struct budget *b)
{
	const volatile uint64_t *h = trace__fhits(b->tr);
	uint64_t g[CABBPF_NGROUPS];
	uint32_t i;

	trace__gated(b->tr, g);
	for (i = 0; i < CABBPF_NGROUPS; i++) {
		b->ngated += g[i] - b->gseen[i];
		b->gseen[i] = g[i];
	}
	for (i = 0; h && i < b->o.nfuncs; i++) {
		uint64_t n = h[i], d = n - b->seen[i];

		if (d) {
			b->trap += (double)d * b->o.cost_ns[i] * b->per_hit;
			if (b->o.leak) {
				double k = (double)d * b->per_hit / COST_MARGIN;

				b->leak += k * b->o.leak[i].ns;
				/* every hit's leak is off by the same error:
				 * adds up */
				b->leak_sd += k * b->o.leak[i].sd_ns;
			}
			b->dh[i] += d;
			b->seen[i] = n;
		}
	}
}

/* The target's own progress since the mark, ns (CPU time less the
 * probes' cost; never below 0). */
static double native_since(struct budget *b, const struct mark *m, uint64_t cpu)
{
	double n = (double)(cpu - m->c) - (b->trap - m->m);

	return n > 0 ? n : 0;
}

/* Learn each function's cost rate from what happened since the mark
 * (its mode did not change in between), and set a new mark. */
static void learn(struct budget *b, uint64_t t, uint64_t cpu)
{
	double nat = native_since(b, &b->mk, cpu);
	bool enough =
		nat >= EXACT_NATIVE_NS || (nat >= MIN_NATIVE_NS && cpu - b->mk.c >= GUARD_CPU_NS);
	uint32_t i;

	/* An exact function's cost against the target's progress since the
	 * mark, a sampled one's against the progress made in windows. Too
	 * little of either (EXACT_NATIVE_NS): what was known stays. */
	for (i = 0; i < b->o.nfuncs; i++) {
		double c = (double)b->dh[i] * b->o.cost_ns[i] * b->per_hit;

		if (b->mode[i] == AN_B_EXACT && enough)
			b->rate[i] = c / nat;
		else if (b->mode[i] == AN_B_SAMPLED && b->mk.wnat >= MIN_NATIVE_NS)
			b->rate[i] = c / b->mk.wnat;
		b->dh[i] = 0;
	}
	b->mk = (struct mark){t, cpu, b->trap, 0};
}


/* ------------------------------------------------------------- life -- */

void budget__first_groups(const double *cost_ns, uint32_t n, uint8_t *out)
{
	uint32_t i, probed = 0, k = 0;

	for (i = 0; i < n; i++)
		probed += cost_ns[i] > 0;
	for (i = 0; i < n; i++)
		out[i] = cost_ns[i] > 0 ? (uint8_t)((uint64_t)k++ * BUDGET_FIRST_GROUPS / probed)
					: BUDGET_NO_GROUP;
}

int budget__new(const struct budget_opts *o, struct trace *tr, struct budget **out)
{
	struct budget *b = calloc(1, sizeof(*b));
	uint32_t i, n = o->nfuncs;
	uint64_t p;

	*out = NULL;
	if (!b)
		return -ENOMEM;
	b->o = *o;
	b->tr = tr;
	b->B = o->pct / 100.0;
	/* each hit an entry or a return, half a traced call's cost (the
	 * whole of it without return probes) */
	b->per_hit = COST_MARGIN * (o->entry_only ? 1.0 : 0.5);
	b->seen = calloc(n, sizeof(*b->seen));
	b->dh = calloc(n, sizeof(*b->dh));
	b->rate = calloc(n, sizeof(*b->rate));
	b->mode = calloc(n, 1);
	b->next = calloc(n, 1);
	b->member = calloc(n, 1);
	b->grp = calloc(n, 1);
	b->ngrp = calloc(n, 1);
	if (!b->seen || !b->dh || !b->rate || !b->mode || !b->next || !b->member || !b->grp ||
	    !b->ngrp) {
		budget__free(b);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		b->rate[i] = -1;
		b->mode[i] = o->cost_ns[i] > 0 ? AN_B_EXACT : AN_B_NONE;
	}
	budget__first_groups(o->cost_ns, n, b->grp);
	for (i = 0; i < n; i++)
		if (b->grp[i] != BUDGET_NO_GROUP)
			b->live |= 1u << b->grp[i];
	budget_moves__count_modes(b);
	b->have_clk = !clock_getcpuclockid(o->pid, &b->clk);
	if (!b->have_clk)
		log_warn("budget: no CPU clock for pid %d: the budget is kept in wall time",
			 (int)o->pid);
	/* without a progress measure, wall time (trace__attach said so) */
	b->clock = trace__progress_ns(b->tr, &p);
	b->on_rate = 1.0; /* until measured: a window costs all its time */
	b->t0 = budget__mono_ns();
	/* trace__attach put every function in its first group: epoch 1
	 * traces everything (and learns every rate). */
	b->mk = (struct mark){0, budget__cpu_ns(b), 0, 0};
	b->next_t = (uint64_t)o->period_ms * 1000000ULL;
	if (budget__new_epoch(b)) {
		budget__free(b);
		return -ENOMEM;
	}
	*out = b;
	return 0;
}

/* The guard: over the budget now? A window may spend its plan ahead of
 * the period's earnings, no more: past that it closes. Else, if the exact
 * functions' own calls since the last change spend faster than the budget
 * earns, the costliest buckets of them go out at once (their functions
 * become sampled; the period's choice makes the cheap ones exact again).
 * An old debt (a window's, probes being taken out) is left to be paid by
 * the target's progress. */
static void guard(struct budget *b, uint64_t t, uint64_t cpu)
{
	double nat = (double)(cpu - b->ep[0].c0) - b->trap, debt;
	double since, spent = 0, cost[CABBPF_NGROUPS] = {0};
	uint32_t i, k = 0, drop = 0;
	struct ranked v[CABBPF_NGROUPS];
	uint64_t wall = t - b->mk.t;

	debt = b->trap - b->B * (nat > 0 ? nat : 0) - ALLOWANCE_NS;
	if (b->window) {
		if (debt > b->win_plan + ALLOWANCE_NS ||
		    b->trap - b->win_m0 > 2 * b->win_plan + ALLOWANCE_NS)
			budget_moves__close_window(b, t, true);
		return;
	}
	if (debt <= 0 || b->failed)
		return;
	/* The exact functions' pace against the target's own progress since
	 * the last change (EXACT_NATIVE_NS). */
	since = native_since(b, &b->mk, cpu);
	if (wall < 2000000ULL || (since < EXACT_NATIVE_NS && cpu - b->mk.c < GUARD_CPU_NS))
		return;
	for (i = 0; i < b->o.nfuncs; i++)
		if (b->grp[i] != BUDGET_NO_GROUP) {
			double c = (double)b->dh[i] * b->o.cost_ns[i] * b->per_hit;

			cost[b->grp[i]] += c;
			spent += c;
		}
	if (spent <= b->B * since)
		return;
	for (i = 0; i < CABBPF_NGROUPS; i++)
		if ((b->live & (1u << i)) && cost[i] > 0)
			v[k++] = (struct ranked){cost[i], i};
	qsort(v, k, sizeof(*v), cmp_desc);
	/* Down to half the budget's pace, the costliest first. */
	for (i = 0; i < k && spent > b->B / 2 * since; i++) {
		drop |= 1u << v[i].fid;
		spent -= v[i].o;
	}
	if (!drop)
		return;
	memcpy(b->next, b->mode, b->o.nfuncs);
	memcpy(b->ngrp, b->grp, b->o.nfuncs);
	for (i = 0; i < b->o.nfuncs; i++)
		if (b->grp[i] != BUDGET_NO_GROUP && (drop & (1u << b->grp[i]))) {
			b->next[i] = AN_B_SAMPLED;
			b->ngrp[i] = BUDGET_NO_GROUP;
		}
	b->trips++;
	learn(b, t, cpu);
	(void)budget_moves__commit(b, 0, drop, "over the budget");
}

/* Plan the period's window: what the budget leaves after the exact
 * functions, spent at the measured pace of a window. */
static void plan_window(struct budget *b, uint64_t t, uint64_t cpu, double nat_rate)
{
	uint64_t period = (uint64_t)b->o.period_ms * 1000000ULL;
	double ox = 0, balance, allow, w, nat = (double)(cpu - b->ep[0].c0) - b->trap;
	uint32_t i;

	b->want_window = false;
	if (!b->nsampled || b->failed)
		return;
	for (i = 0; i < b->o.nfuncs; i++)
		if (b->mode[i] == AN_B_EXACT && b->rate[i] > 0)
			ox += b->rate[i];
	balance = b->B * (nat > 0 ? nat : 0) + ALLOWANCE_NS - b->trap;
	allow = (b->B - ox) * nat_rate * (double)period + (balance < 0 ? balance : 0);
	w = allow / (b->on_rate > 1e-3 ? b->on_rate : 1e-3);
	/* At most half the period: the window's probes are released (grace
	 * periods: docs/figures.md) while the next period runs; the next
	 * window waits for that. */
	if (w > (double)period / 2)
		w = (double)period / 2;
	if (w < MIN_WINDOW_NS) {
		log_debug("budget: no window this period (%.2f ms affordable: exact %.3g, pace "
			  "%.3g, balance %.1f ms, window cost %.3g)",
			  w / 1e6, ox, nat_rate, balance / 1e6, b->on_rate);
		return;
	}
	log_debug("budget: a window of %.1f ms planned (%.1f ms of probes: exact %.3g, pace %.3g)",
		  w / 1e6, allow / 1e6, ox, nat_rate);
	b->win_len = (uint64_t)w;
	b->win_plan = allow;
	b->want_window = true;
	/* It opens once the last one's probes are released, if it can
	 * still end within the period. */
	b->win_deadline = t + period - (uint64_t)w;
}

/* The target's progress in epoch e, in ticks: what the progress clock
 * counted less what the probes' traps added to it (opts.leak), rounded. */
static uint64_t progress_of(const struct bepoch *e)
{
	double t = (double)(e->p1 > e->p0 ? e->p1 - e->p0 : 0) -
		   (e->l1 - e->l0) / (double)PROGRESS_TICK_NS;

	return t > 0 ? (uint64_t)(t + 0.5) : 0;
}

/* The period's choice. */
static void decide(struct budget *b, uint64_t t, uint64_t cpu)
{
	double nat = native_since(b, &b->mk, cpu);
	double nat_rate = t > b->mk.t ? nat / (double)(t - b->mk.t) : 0;

	learn(b, t, cpu);
	if (!b->failed && budget__choose(b->rate, b->mode, b->o.nfuncs, b->B, b->next))
		(void)budget_moves__apply(b, "period");
	plan_window(b, t, cpu, nat_rate);
}

int budget__tick(struct budget *b, uint64_t now_ns)
{
	uint64_t t = now_ns - b->t0, cpu;

	account(b);
	cpu = budget__cpu_ns(b);
	guard(b, t, cpu);
	if (b->window && t >= b->win_t0 + b->win_len)
		budget_moves__close_window(b, t, false);
	if (t >= b->next_t) {
		if (b->window)
			budget_moves__close_window(b, t, true);
		decide(b, t, cpu);
		b->next_t = t + (uint64_t)b->o.period_ms * 1000000ULL;
	}
	if (b->want_window && !b->window && !b->failed) {
		if (t > b->win_deadline)
			b->want_window = false;
		else
			budget_moves__open_window(b, t);
	}
	return 0;
}

void budget__finish(struct budget *b, uint64_t end_ns)
{
	uint64_t total = 0, p1;
	uint32_t i;

	if (!b)
		return;
	account(b);
	/* Closed at once: nothing is emitted after this store. */
	trace__set_gate(b->tr, 0, 0);
	end_epoch(b, end_ns - b->t0);
	b->window = false;
	b->wall_ns = end_ns - b->t0;
	b->cpu_ns = budget__cpu_ns(b) - b->ep[0].c0;
	p1 = progress_ticks(b);
	b->by_progress = b->clock && p1 >= b->ep[0].p0 + PROGRESS_MIN_TICKS;
	b->len = calloc(b->nep + 1, sizeof(*b->len));
	b->win = calloc(b->nep + 1, 1);
	b->skip = calloc(b->nep + 1, 1);
	b->snapi = calloc(b->nep + 1, sizeof(*b->snapi));
	b->share = calloc(b->nep + 1, sizeof(*b->share));
	b->len_sd = calloc(b->nep + 1, sizeof(*b->len_sd));
	if (!b->len || !b->win || !b->skip || !b->snapi || !b->share || !b->len_sd)
		return; /* no estimates: the reports see n = 0 */
	for (i = 0; i < b->nep; i++) {
		const struct bepoch *e = &b->ep[i];

		b->len[i] = b->by_progress ? progress_of(e) : (e->t1 > e->t0 ? e->t1 - e->t0 : 0);
		b->win[i] = e->window;
		b->skip[i] = e->partial;
		b->snapi[i] = e->snap;
		b->share[i] =
			e->c1 > e->c0 ? fmin(1, (e->m1 - e->m0) / (double)(e->c1 - e->c0)) : 0;
		if (b->by_progress)
			b->len_sd[i] = (e->s1 - e->s0) / (double)PROGRESS_TICK_NS;
		total += b->len[i];
	}
	b->ab = (struct an_budget){
		.n = b->nep,
		.len = b->len,
		.window = b->win,
		.snap = b->snapi,
		.modes = (const uint8_t *const *)b->snaps,
		.nfuncs = b->o.nfuncs,
		.measure = b->by_progress ? "user CPU" : "wall",
		/* 10 ms: ten ticks of the progress clock */
		.min_len = b->by_progress ? 10 : 10000000,
		.probe_share = b->share,
		.len_sd = b->by_progress && b->o.leak ? b->len_sd : NULL,
		.progress_corrected = b->by_progress && b->o.leak,
	};
	b->aw = (struct an_windows){
		.n = b->nep,
		.on = b->len,
		.total = total,
		.measure = b->ab.measure,
		.skip = b->skip,
	};
}

const struct an_budget *budget__plan(const struct budget *b)
{
	return b && b->len ? &b->ab : NULL;
}

const struct an_windows *budget__windows(const struct budget *b)
{
	return b && b->len ? &b->aw : NULL;
}


void budget__free(struct budget *b)
{
	uint32_t i;

	if (!b)
		return;
	for (i = 0; i < b->nsnap; i++)
		free(b->snaps[i]);
	free(b->snaps);
	free(b->ep);
	free(b->seen);
	free(b->dh);
	free(b->rate);
	free(b->mode);
	free(b->next);
	free(b->member);
	free(b->grp);
	free(b->ngrp);
	free(b->len);
	free(b->win);
	free(b->skip);
	free(b->snapi);
	free(b->share);
	free(b->len_sd);
	free(b);
}
