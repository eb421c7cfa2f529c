// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/json.h"
#include "common/log.h"
#include "pipeline/record.h"
#include "user/trace/budget.h"
#include "user/trace/progress.h"
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
	struct progress *prog;
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

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The target's CPU time (all its threads, traps included), ns; the last
 * reading once it is gone. */
static uint64_t cpu_ns(struct budget *b)
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

/* End the current epoch now (if any). */
static void end_epoch(struct budget *b, uint64_t t)
{
	struct bepoch *e;

	if (!b->nep)
		return;
	e = &b->ep[b->nep - 1];
	e->t1 = t;
	e->p1 = progress__ticks(b->prog);
	e->c1 = cpu_ns(b);
	e->m1 = b->trap;
	e->l1 = b->leak;
	e->s1 = b->leak_sd;
}

/* Open the next epoch with what is in now: the gate's one store. Returns
 * 0 or -errno (then the gate is as it was). */
static int new_epoch(struct budget *b)
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
	t = mono_ns() - b->t0;
	end_epoch(b, t);
	trace__set_gate(b->tr, n, groups);
	e->t0 = t;
	e->p0 = progress__ticks(b->prog);
	e->c0 = cpu_ns(b);
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

/* ------------------------------------------------------------ moves -- */

static void count_modes(struct budget *b)
{
	uint32_t i;

	b->nexact = b->nsampled = 0;
	for (i = 0; i < b->o.nfuncs; i++) {
		b->nexact += b->mode[i] == AN_B_EXACT;
		b->nsampled += b->mode[i] == AN_B_SAMPLED;
	}
}

/* -v: the functions that changed mode, a few by name. */
static void log_moves(const struct budget *b, const char *why)
{
	char list[256];
	size_t len = 0;
	uint32_t i, up = 0, down = 0;

	list[0] = 0;
	for (i = 0; i < b->o.nfuncs; i++) {
		if (b->next[i] == b->mode[i])
			continue;
		up += b->next[i] == AN_B_EXACT;
		down += b->next[i] == AN_B_SAMPLED;
		if (len < sizeof(list) - 64 && b->o.names && b->o.names[i])
			len += (size_t)snprintf(
				list + len, sizeof(list) - len, "%s%c%s", len ? " " : "",
				b->next[i] == AN_B_EXACT ? '+' : '-', b->o.names[i]);
	}
	log_debug("budget: %s: %u exact again, %u sampled from now on (%s%s)", why, up, down, list,
		  len >= sizeof(list) - 64 ? " ..." : "");
}

/* A group not in use (nor in taken), the one left longest ago: a group
 * used again gets a new generation (user/trace/trace.h), 256 of them, so
 * its oldest links were taken out 32 x 256 link sets ago. CABBPF_NGROUPS
 * if none. */
static unsigned free_group(struct budget *b, uint32_t taken)
{
	uint32_t busy = b->live | taken | (b->window ? 1u << b->wg : 0);
	unsigned g, best = CABBPF_NGROUPS;

	for (g = 0; g < CABBPF_NGROUPS; g++)
		if (!(busy & (1u << g)) && (best == CABBPF_NGROUPS || b->used[g] < b->used[best]))
			best = g;
	if (best < CABBPF_NGROUPS)
		b->used[best] = ++b->uses;
	return best;
}

/* Take out the exact groups in drop (a mask), which the gate's last store
 * closed: out of the target now, released in a thread. */
static void drop_groups(struct budget *b, uint32_t drop)
{
	unsigned g;

	for (g = 0; g < CABBPF_NGROUPS; g++)
		if (drop & (1u << g))
			trace__detach_group(b->tr, g);
}

/* Put next[] and ngrp[] in force with one gate store, the exact groups
 * in being live | add and not drop: the groups added are in already,
 * the groups dropped go out after. Returns 0, or -errno (then the groups
 * added are taken out again and nothing changed). */
static int commit(struct budget *b, uint32_t add, uint32_t drop, const char *why)
{
	uint32_t live = b->live;
	uint8_t *t;
	int err;

	log_moves(b, why);
	t = b->mode, b->mode = b->next, b->next = t;
	t = b->grp, b->grp = b->ngrp, b->ngrp = t;
	count_modes(b);
	b->live = (live | add) & ~drop;
	err = new_epoch(b);
	if (err) {
		log_err("budget: %s: what is traced stays as it is from now on", strerror(-err));
		b->failed = true;
		t = b->mode, b->mode = b->next, b->next = t;
		t = b->grp, b->grp = b->ngrp, b->ngrp = t;
		count_modes(b);
		b->live = live;
		drop_groups(b, add);
		return err;
	}
	drop_groups(b, drop);
	b->swaps++;
	return 0;
}

/*
 * Put next[] in force (the period's choice): every bucket that loses a
 * function is rebuilt without it (its other functions go into a new group
 * beside it: they never miss a call), the functions becoming exact go
 * into a new group of their own; one gate store; the old buckets go out.
 * A bucket or the new group that cannot be made now (no free group, an
 * attach refused, sites still being released) leaves its functions as
 * they were. Returns 0 or -errno.
 */
static int apply(struct budget *b, const char *why)
{
	uint32_t add = 0, drop = 0, i, n;
	unsigned k, g;
	int err;

	memcpy(b->ngrp, b->grp, b->o.nfuncs);
	for (k = 0; k < CABBPF_NGROUPS; k++) {
		bool loses = false;

		if (!(b->live & (1u << k)))
			continue;
		for (i = 0, n = 0; i < b->o.nfuncs; i++) {
			if (b->grp[i] != k)
				continue;
			loses |= b->next[i] != AN_B_EXACT;
			b->member[i] = b->next[i] == AN_B_EXACT;
			n += b->member[i];
		}
		if (!loses)
			continue;
		for (i = 0; i < b->o.nfuncs; i++)
			if (b->grp[i] != k)
				b->member[i] = 0;
		g = n ? free_group(b, add) : CABBPF_NGROUPS;
		if (n && (g == CABBPF_NGROUPS || trace__attach_group(b->tr, g, b->member))) {
			/* not now: the bucket stays as it is */
			for (i = 0; i < b->o.nfuncs; i++)
				if (b->grp[i] == k)
					b->next[i] = AN_B_EXACT;
			continue;
		}
		for (i = 0; i < b->o.nfuncs; i++)
			if (b->grp[i] == k)
				b->ngrp[i] = b->member[i] ? (uint8_t)g : BUDGET_NO_GROUP;
		if (n)
			add |= 1u << g;
		drop |= 1u << k;
	}
	for (i = 0, n = 0; i < b->o.nfuncs; i++) {
		b->member[i] = b->next[i] == AN_B_EXACT && b->mode[i] != AN_B_EXACT;
		n += b->member[i];
	}
	if (n) {
		g = free_group(b, add);
		err = g == CABBPF_NGROUPS ? -EBUSY : trace__attach_group(b->tr, g, b->member);
		for (i = 0; i < b->o.nfuncs; i++)
			if (b->member[i]) {
				if (err)
					b->next[i] = b->mode[i];
				else
					b->ngrp[i] = (uint8_t)g;
			}
		if (!err)
			add |= 1u << g;
	}
	if (!add && !drop)
		return 0;
	return commit(b, add, drop, why);
}

static void open_window(struct budget *b, uint64_t t)
{
	uint32_t i;
	int err;

	unsigned g;

	/* Each window's links wait in a thread of their own for the kernel
	 * to release them, which can last as long as the target (see
	 * trace__attach_group): past a few hundred, no more windows. */
	if (trace__closing(b->tr) > MAX_CLOSING) {
		if (!b->closing_full)
			log_warn("budget: %u sets of probes still being released by the kernel: "
				 "no more windows (the sampled functions' counts are estimated "
				 "from those so far)",
				 trace__closing(b->tr));
		b->closing_full = true;
		b->want_window = false;
		return;
	}
	for (i = 0; i < b->o.nfuncs; i++)
		b->member[i] = b->mode[i] == AN_B_SAMPLED;
	g = free_group(b, 0);
	if (g == CABBPF_NGROUPS)
		return; /* the last window's probes are still being released */
	b->wg = g;
	err = trace__attach_group(b->tr, g, b->member);
	if (err) {
		log_err("budget: attaching the sampled functions failed (%s): no more windows",
			strerror(-err));
		b->failed = true;
		return;
	}
	b->window = true;
	b->want_window = false;
	if (new_epoch(b)) {
		b->window = false;
		trace__detach_group(b->tr, b->wg);
		b->failed = true;
		return;
	}
	b->win_t0 = mono_ns() - b->t0;
	b->win_m0 = b->trap;
	b->win_c0 = cpu_ns(b);
	b->nwin++;
	log_debug("budget: window %u on at %.3f s for %.1f ms (%u sampled functions)", b->nwin,
		  (double)t / 1e9, (double)b->win_len / 1e6, b->nsampled);
}

static void close_window(struct budget *b, uint64_t t, bool cut)
{
	uint64_t cpu = cpu_ns(b);
	uint32_t i;

	b->window = false;
	(void)new_epoch(b); /* at E2BIG the window stays in its epoch: still exact */
	if (cut) {
		b->ep[b->nep - 2].cut = true;
		b->ncut++;
	}
	for (i = 0; i < b->o.nfuncs; i++)
		b->member[i] = b->mode[i] == AN_B_SAMPLED;
	trace__detach_group(b->tr, b->wg);
	/* What a window costs per wall ns, for the next one's length. */
	if (t > b->win_t0)
		b->on_rate = (b->trap - b->win_m0) / (double)(t - b->win_t0);
	b->mk.wnat += fmax(0, (double)(cpu - b->win_c0) - (b->trap - b->win_m0));
	log_debug("budget: window %u off at %.3f s%s", b->nwin, (double)t / 1e9,
		  cut ? " (cut: over the budget)" : "");
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
	count_modes(b);
	b->have_clk = !clock_getcpuclockid(o->pid, &b->clk);
	if (!b->have_clk)
		log_warn("budget: no CPU clock for pid %d: the budget is kept in wall time",
			 (int)o->pid);
	(void)progress__open(o->pid, &b->prog);
	b->on_rate = 1.0; /* until measured: a window costs all its time */
	b->t0 = mono_ns();
	/* trace__attach put every function in its first group: epoch 1
	 * traces everything (and learns every rate). */
	b->mk = (struct mark){0, cpu_ns(b), 0, 0};
	b->next_t = (uint64_t)o->period_ms * 1000000ULL;
	if (new_epoch(b)) {
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
			close_window(b, t, true);
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
	(void)commit(b, 0, drop, "over the budget");
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
	/* At most half the period: the window's probes are released (0.1-3
	 * s here) while the next period runs; the next window waits for
	 * that. */
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
		(void)apply(b, "period");
	plan_window(b, t, cpu, nat_rate);
}

int budget__tick(struct budget *b, uint64_t now_ns)
{
	uint64_t t = now_ns - b->t0, cpu;

	account(b);
	cpu = cpu_ns(b);
	guard(b, t, cpu);
	if (b->window && t >= b->win_t0 + b->win_len)
		close_window(b, t, false);
	if (t >= b->next_t) {
		if (b->window)
			close_window(b, t, true);
		decide(b, t, cpu);
		b->next_t = t + (uint64_t)b->o.period_ms * 1000000ULL;
	}
	if (b->want_window && !b->window && !b->failed) {
		if (t > b->win_deadline)
			b->want_window = false;
		else
			open_window(b, t);
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
	b->cpu_ns = cpu_ns(b) - b->ep[0].c0;
	p1 = progress__ticks(b->prog);
	b->by_progress = b->prog && p1 >= b->ep[0].p0 + PROGRESS_MIN_TICKS;
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

/* ----------------------------------------------------------- report -- */

/* The estimated overhead: the probes' cost over the target's own
 * progress (model), as a fraction. */
static double overhead(const struct budget *b)
{
	double nat = (double)b->cpu_ns - b->trap;

	return nat > 0 ? b->trap / nat : 0;
}

int budget__json(const struct budget *b, struct json *w)
{
	uint32_t i, f;
	char buf[24];

	json__key(w, "budget");
	json__begin_object(w);
	json__kv_double(w, "percent", b->o.pct);
	json__kv_u64(w, "period_ms", b->o.period_ms);
	json__kv_string(w, "measure", b->by_progress ? "user_cpu" : "wall");
	json__kv_u64(w, "run_ns", b->wall_ns);
	json__kv_u64(w, "cpu_ns", b->cpu_ns);
	json__kv_u64(w, "probe_ns_est", (uint64_t)llround(b->trap));
	json__kv_double(w, "cost_margin", COST_MARGIN);
	json__kv_u64(w, "gated_hits", b->ngated);
	json__kv_double(w, "overhead_est", overhead(b));
	json__kv_u64(w, "changes", b->swaps);
	json__kv_u64(w, "guard_changes", b->trips);
	json__kv_u64(w, "windows", b->nwin);
	json__kv_u64(w, "windows_cut", b->ncut);
	json__key(w, "epochs");
	json__begin_array(w);
	for (i = 0; i < b->nep; i++) {
		const struct bepoch *e = &b->ep[i];
		uint32_t nx = 0, ns = 0;

		for (f = 0; f < b->o.nfuncs; f++) {
			nx += b->snaps[e->snap][f] == AN_B_EXACT;
			ns += b->snaps[e->snap][f] == AN_B_SAMPLED;
		}
		json__begin_object(w);
		json__kv_u64(w, "epoch", i + 1);
		json__kv_u64(w, "start_ns", e->t0);
		json__kv_u64(w, "end_ns", e->t1);
		json__kv_u64(w, "user_cpu_ns",
			     (e->p1 > e->p0 ? e->p1 - e->p0 : 0) * PROGRESS_TICK_NS);
		json__kv_u64(w, "cpu_ns", e->c1 > e->c0 ? e->c1 - e->c0 : 0);
		json__kv_u64(w, "probe_ns_est", (uint64_t)llround(e->m1 - e->m0));
		json__kv_bool(w, "window", e->window);
		json__kv_bool(w, "cut", e->cut);
		json__kv_u64(w, "exact", nx);
		json__kv_u64(w, "sampled", ns);
		json__end_object(w);
	}
	json__end_array(w);
	json__key(w, "functions");
	json__begin_array(w);
	for (f = 0; f < b->o.nfuncs; f++) {
		uint64_t xn = 0, sn = 0, on = 0;

		if (b->mode[f] == AN_B_NONE)
			continue;
		for (i = 0; i < b->nep; i++) {
			const struct bepoch *e = &b->ep[i];
			uint64_t d = e->t1 > e->t0 ? e->t1 - e->t0 : 0;

			if (b->snaps[e->snap][f] == AN_B_EXACT)
				xn += d;
			else if (b->snaps[e->snap][f] == AN_B_SAMPLED) {
				sn += d;
				on += e->window ? d : 0;
			}
		}
		json__begin_object(w);
		json__kv_string(w, "name",
				b->o.names && b->o.names[f]
					? b->o.names[f]
					: (snprintf(buf, sizeof(buf), "fid#%u", f), buf));
		json__kv_u64(w, "fid", f);
		json__kv_string(w, "mode", b->mode[f] == AN_B_EXACT ? "exact" : "sampled");
		json__kv_u64(w, "exact_ns", xn);
		json__kv_u64(w, "sampled_ns", sn);
		json__kv_u64(w, "window_ns", on);
		json__kv_double(w, "cost_ns", b->o.cost_ns[f]);
		json__end_object(w);
	}
	json__end_array(w);
	return json__end_object(w);
}

void budget__text(const struct budget *b, FILE *f)
{
	uint32_t i, fid, always = 0, some = 0;
	uint64_t on = 0;

	for (fid = 0; fid < b->o.nfuncs; fid++) {
		bool s = false;

		if (b->mode[fid] == AN_B_NONE)
			continue;
		for (i = 0; i < b->nep && !s; i++)
			s = b->snaps[b->ep[i].snap][fid] == AN_B_SAMPLED;
		some += s;
		always += !s;
	}
	for (i = 0; i < b->nep; i++)
		on += b->ep[i].window && b->ep[i].t1 > b->ep[i].t0 ? b->ep[i].t1 - b->ep[i].t0 : 0;
	fprintf(f,
		"budget: %.4g%% of the target's CPU time; its probes cost an estimated %.1f%% "
		"(%.3f s of %.3f s CPU, the measured costs taken %.0f%% dearer); %u function%s exact all along, %u sampled some of the "
		"time, in %u window%s (%.1f%% of %.3f s)%s; %u change%s of the exact set\n",
		b->o.pct, 100 * overhead(b), b->trap / 1e9, (double)b->cpu_ns / 1e9,
		100 * (COST_MARGIN - 1), always,
		always == 1 ? "" : "s", some, b->nwin, b->nwin == 1 ? "" : "s",
		b->wall_ns ? 100.0 * (double)on / (double)b->wall_ns : 0.0,
		(double)b->wall_ns / 1e9, b->ncut ? ", some cut short" : "", b->swaps,
		b->swaps == 1 ? "" : "s");
}

void budget__free(struct budget *b)
{
	uint32_t i;

	if (!b)
		return;
	progress__free(b->prog);
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
