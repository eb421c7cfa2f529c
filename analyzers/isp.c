// SPDX-License-Identifier: BSD-2-Clause
/*
 * Input-sensitive profiles: see isp.h.
 *
 * Why isp is opt-in (not in the default -a set): its answer needs a run
 * that feeds a routine inputs of several sizes (one workload usually
 * gives one size per routine, and a fit of one size says nothing), its
 * tables grow with the number of distinct sizes per routine, and its
 * text report (one row per routine with a fit) repeats what the count
 * and io tables already say for a run that was not meant for it.
 *
 * Per-activation state: a stack per program thread, parallel to the
 * thread's shadow stack and indexed by the same depth, holding the input
 * bytes and traced calls of the activation's subtree so far. Input is
 * added to the innermost live activation only; a closing activation adds
 * its totals to its caller's (so every ancestor sees its descendants'
 * input when it closes, and a sibling never sees it).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/analyzer.h"
#include "analyzers/cct.h"
#include "analyzers/fit.h"
#include "analyzers/isp.h"
#include "analyzers/isp_internal.h"
#include "cabbpf_event.h"
#include "common/hmap.h"
#include "common/json.h"

struct act {
	uint64_t in;	/* input bytes of the subtree so far */
	uint64_t calls; /* traced calls of the subtree so far, itself included */
	double probe_ns; /* the probes' measured cost of its traced callees */
};

struct ithread {
	struct act *st; /* [cap], indexed by shadow depth */
	size_t cap;
	uint32_t gen;
	bool gen_seen;
};

static void fn_free(struct isp_fn *f)
{
	hmap__fini(&f->bysize);
	free(f->pts);
}

static int isp_init(const struct an_ctx *ctx, void **state)
{
	struct isp *a = calloc(1, sizeof(*a));

	*state = NULL;
	if (!a)
		return -ENOMEM;
	a->ctx = ctx;
	a->cost = ctx->isp ? ctx->isp->cost : ISP_COST_WALL;
	a->sized = ctx->isp ? ctx->isp->sized : NULL;
	a->probe_ns = ctx->cct ? ctx->cct->probe_ns : NULL;
	a->fn = calloc(ctx->nfuncs ? ctx->nfuncs : 1, sizeof(*a->fn));
	if (!a->fn) {
		free(a);
		return -ENOMEM;
	}
	*state = a;
	return 0;
}

static void thread_free(void *obj)
{
	struct ithread *t = obj;

	free(t->st);
	free(t);
}

static void isp_free(void *state)
{
	struct isp *a = state;
	uint32_t i;

	if (!a)
		return;
	an_threads__fini(&a->threads, thread_free);
	for (i = 0; i < a->ctx->nfuncs; i++)
		fn_free(&a->fn[i]);
	free(a->fn);
	free(a);
}

static struct ithread *thread_get(struct isp *a, uint32_t tid)
{
	return an_threads__get(&a->threads, tid, sizeof(struct ithread), NULL, NULL);
}

/* Room for index d; a failure is counted by the caller. */
static bool reserve(struct ithread *t, size_t d)
{
	size_t cap;
	struct act *n;

	if (d < t->cap)
		return true;
	cap = t->cap ? t->cap : 64;
	while (cap <= d)
		cap *= 2;
	n = realloc(t->st, cap * sizeof(*n));
	if (!n)
		return false;
	memset(n + t->cap, 0, (cap - t->cap) * sizeof(*n));
	t->st = n;
	t->cap = cap;
	return true;
}

/* A coroutine switch replaced the shadow stack (gen changed): the
 * counters of the frames now live are not known; start them afresh. */
static void check_gen(struct isp *a, struct ithread *t, uint32_t gen)
{
	if (t->gen_seen && t->gen != gen) {
		memset(t->st, 0, t->cap * sizeof(*t->st));
		a->resync++;
	}
	t->gen = gen;
	t->gen_seen = true;
}

static void isp_on_call(void *state, const struct an_call *c)
{
	struct isp *a = state;
	struct ithread *t = thread_get(a, c->tid);

	if (!t || !reserve(t, c->depth)) {
		a->nomem++;
		return;
	}
	check_gen(a, t, c->gen);
	t->st[c->depth] = (struct act){.in = 0, .calls = 1};
}

int isp__add_point(struct isp_fn *f, uint64_t size, uint64_t cost, uint64_t comp,
		   uint64_t calls)
{
	uint64_t *v, idx;
	struct isp_point *p;

	/* Activations of a routine often repeat one size: skip the map. */
	if (f->n && f->last < f->n && f->pts[f->last].size == size) {
		p = &f->pts[f->last];
		goto add;
	}
	if (hmap__upsert(&f->bysize, size, &v))
		return -ENOMEM;
	if (!*v) {
		if (f->n == f->cap) {
			size_t cap = f->cap ? f->cap * 2 : 8;
			struct isp_point *n = realloc(f->pts, cap * sizeof(*n));

			if (!n) {
				/* an absent value reads as 0: leave the key unused */
				return -ENOMEM;
			}
			f->pts = n;
			f->cap = cap;
		}
		f->pts[f->n] = (struct isp_point){.size = size, .cost_min = UINT64_MAX,
						  .comp_min = UINT64_MAX};
		*v = ++f->n;
		f->sorted = false;
	}
	idx = *v - 1;
	f->last = (size_t)idx;
	p = &f->pts[idx];
add:
	if (!p->calls || cost < p->cost_min)
		p->cost_min = cost;
	if (!p->calls || comp < p->comp_min)
		p->comp_min = comp;
	p->comp_sum += comp;
	if (cost > p->cost_max)
		p->cost_max = cost;
	p->cost_sum += cost;
	p->calls += calls;
	return 0;
}

static void isp_on_return(void *state, const struct an_return *r)
{
	struct isp *a = state;
	struct ithread *t = thread_get(a, r->tid);
	const struct shadow_frame *fr = &r->frames[r->depth];
	struct isp_fn *f;
	struct act act;
	uint64_t cost, comp, size;

	if (!t || r->depth >= t->cap) {
		a->nomem++;
		return;
	}
	check_gen(a, t, r->gen);
	act = t->st[r->depth];
	if (r->depth) {
		t->st[r->depth - 1].in += act.in;
		t->st[r->depth - 1].calls += act.calls;
		t->st[r->depth - 1].probe_ns +=
			act.probe_ns + (a->probe_ns && r->fid < a->ctx->nfuncs ? a->probe_ns[r->fid] : 0);
	}
	if (r->fid >= a->ctx->nfuncs)
		return;
	f = &a->fn[r->fid];
	if (r->inherited)
		return; /* a forked child's copy of its parent's activation */
	if (!r->matched) {
		f->unmatched++;
		a->unmatched++;
		return;
	}
	if (fr->sized) {
		size = fr->size;
		f->arg = true;
	} else if (a->sized && a->sized[r->fid]) {
		/* its size event was lost or unreadable: no point, counted */
		f->unsized++;
		a->unsized++;
		return;
	} else {
		size = act.in;
		f->io = true;
	}
	cost = a->cost == ISP_COST_CALLS ? act.calls
	       : a->cost == ISP_COST_CPU ? r->cpu_incl_ns
					  : r->incl_ns;
	/* Times: the probes of its traced callees are ours, not its own
	 * (its own probes' share is a fixed cost the fit's a takes). */
	comp = cost;
	if (a->cost != ISP_COST_CALLS && act.probe_ns > 0) {
		comp = (double)cost > act.probe_ns ? cost - (uint64_t)llround(act.probe_ns) : 0;
		f->probe_total += act.probe_ns;
	}
	if (isp__add_point(f, size, cost, comp, 1)) {
		a->nomem++;
		return;
	}
	f->total += cost;
	a->points++;
}

static void isp_on_io(void *state, const struct an_io *io)
{
	struct isp *a = state;
	struct ithread *t;

	if (CABBPF_SC_IS_OUTPUT(io->sc) || io->failed || !io->depth)
		return;
	a->input_bytes += io->ret;
	t = thread_get(a, io->tid);
	if (!t || !reserve(t, io->depth - 1)) {
		a->nomem++;
		return;
	}
	t->st[io->depth - 1].in += io->ret;
}

static int isp_merge(void *dst, const void *src)
{
	struct isp *d = dst;
	const struct isp *s = src;
	uint32_t i;
	size_t k;

	for (i = 0; i < d->ctx->nfuncs; i++) {
		const struct isp_fn *sf = &s->fn[i];
		struct isp_fn *df = &d->fn[i];

		for (k = 0; k < sf->n; k++) {
			const struct isp_point *p = &sf->pts[k];

			struct isp_point *q;

			/* min and max as they are, sum and calls added; the
			 * point just touched is df->pts[df->last] */
			if (isp__add_point(df, p->size, p->cost_min, p->comp_min, 0))
				return -ENOMEM;
			q = &df->pts[df->last];
			q->calls += p->calls;
			q->cost_sum += p->cost_sum - p->cost_min;
			q->comp_sum += p->comp_sum - p->comp_min;
			if (p->cost_max > q->cost_max)
				q->cost_max = p->cost_max;
		}
		df->total += sf->total;
		df->probe_total += sf->probe_total;
		df->unmatched += sf->unmatched;
		df->unsized += sf->unsized;
		df->arg |= sf->arg;
		df->io |= sf->io;
	}
	d->points += s->points;
	d->unmatched += s->unmatched;
	d->unsized += s->unsized;
	d->nomem += s->nomem;
	d->resync += s->resync;
	d->input_bytes += s->input_bytes;
	return 0;
}

/* ------------------------------------------------------------ queries -- */

static int cmp_point(const void *x, const void *y)
{
	const struct isp_point *p = x, *q = y;

	return p->size < q->size ? -1 : p->size > q->size;
}

int isp__sort(struct isp_fn *f)
{
	size_t i;

	if (f->sorted)
		return 0;
	qsort(f->pts, f->n, sizeof(*f->pts), cmp_point);
	hmap__fini(&f->bysize);
	hmap__init(&f->bysize);
	for (i = 0; i < f->n; i++) {
		uint64_t *v;

		if (hmap__upsert(&f->bysize, f->pts[i].size, &v))
			return -ENOMEM;
		*v = i + 1;
	}
	f->last = 0;
	f->sorted = true;
	return 0;
}

size_t isp__sizes(const struct isp_fn *f)
{
	size_t i, k = 0;

	for (i = 0; i < f->n; i++)
		k += f->pts[i].size >= 1;
	return k;
}

bool isp__compensated(const struct isp *a, const struct isp_fn *f)
{
	return a->probe_ns && a->cost != ISP_COST_CALLS && f->probe_total > 0 &&
	       f->probe_total * 2 <= (double)f->total;
}

int isp__fit(const struct isp *a, const struct isp_fn *f, struct fit_result *r)
{
	bool comp = isp__compensated(a, f);
	double *x = malloc((f->n + 1) * sizeof(*x)), *y = malloc((f->n + 1) * sizeof(*y));
	size_t i;
	int err;

	if (!x || !y) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < f->n; i++) {
		x[i] = (double)f->pts[i].size;
		y[i] = (double)(comp ? f->pts[i].comp_min : f->pts[i].cost_min);
	}
	err = fit__points(x, y, f->n, r);
cleanup:
	free(x);
	free(y);
	return err;
}

uint64_t isp__points(void *state, uint32_t fid, const struct isp_point **pts, size_t *n)
{
	struct isp *a = state;

	*pts = NULL;
	*n = 0;
	if (fid >= a->ctx->nfuncs || isp__sort(&a->fn[fid]))
		return 0;
	*pts = a->fn[fid].pts;
	*n = a->fn[fid].n;
	return a->fn[fid].unmatched;
}

uint64_t isp__npoints(const void *state)
{
	return ((const struct isp *)state)->points;
}

int isp__routine(void *state, uint32_t fid, struct isp_routine *r)
{
	struct isp *a = state;
	struct isp_fn *f;
	int err;

	memset(r, 0, sizeof(*r));
	if (fid >= a->ctx->nfuncs || !a->fn[fid].n)
		return -ENOENT;
	f = &a->fn[fid];
	err = isp__sort(f);
	if (err)
		return err;
	*r = (struct isp_routine){
		.pts = f->pts,
		.n = f->n,
		.arg = f->arg,
		.compensated = isp__compensated(a, f),
		.cost = isp__cost(a),
	};
	err = isp__fit(a, f, &r->fit);
	if (err == -ENOMEM)
		return err;
	r->fitted = !err;
	return 0;
}

const struct an_ctx *isp__ctx(const void *state)
{
	return ((const struct isp *)state)->ctx;
}

enum isp_cost isp__cost(const struct isp *a)
{
	/* without the scheduler's switches an on-CPU time is the wall time */
	if (a->cost == ISP_COST_CPU && a->ctx->cct && !a->ctx->cct->cpu_time)
		return ISP_COST_WALL;
	return a->cost;
}

const char *isp__cost_unit(enum isp_cost c)
{
	return c == ISP_COST_CALLS ? "calls" : c == ISP_COST_CPU ? "ns on-CPU" : "ns wall";
}

int isp__parse_size(const char *rule, char *glob, size_t len, uint8_t *spec)
{
	const char *colon = strrchr(rule, ':'), *p;
	bool str = false;
	size_t n;

	if (!colon || colon == rule)
		return -EINVAL;
	p = colon + 1;
	if (!strncmp(p, "strlen(", 7)) {
		str = true;
		p += 7;
	}
	if (strncmp(p, "arg", 3) || p[3] < '0' || p[3] > '0' + ISP_MAX_ARG)
		return -EINVAL;
	if (strcmp(p + 4, str ? ")" : ""))
		return -EINVAL;
	n = (size_t)(colon - rule);
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(glob, rule, n);
	glob[n] = 0;
	*spec = (uint8_t)(ISP_SPEC_ON | (str ? ISP_SPEC_STRLEN : 0) | (p[3] - '0'));
	return 0;
}

const struct analyzer_ops analyzer_isp = {
	.name = "isp",
	.help = "input-sensitive profiles: per activation (input size, cost), per routine a "
		"cost plot and a fitted growth class",
	.init = isp_init,
	.on_call = isp_on_call,
	.on_return = isp_on_return,
	.merge = isp_merge,
	.free = isp_free,
	.on_io = isp_on_io,
	.opt_in = true,
	.lower_bounds = AN_LOST_CALLS | AN_LOST_IO,
};
