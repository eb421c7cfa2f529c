// SPDX-License-Identifier: BSD-2-Clause
/* The latency analyzer: the design is in latency.h. */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/analyzer.h"
#include "analyzers/latency.h"
#include "analyzers/latency_int.h"
#include "common/callvals.h"
#include "common/json.h"



/* How many slow calls are kept. */
static size_t slow_keep(const struct latency *l)
{
	return l->ctx->slowest ? l->ctx->slowest : LAT_SLOWEST_DEFAULT;
}

unsigned latency__bucket(uint64_t ns)
{
	unsigned b = ns ? 63u - (unsigned)__builtin_clzll(ns) : 0;

	return b < LATENCY_BUCKETS ? b : LATENCY_BUCKETS - 1;
}

void latency__bounds(unsigned b, uint64_t *lo, uint64_t *hi)
{
	*lo = b ? 1ull << b : 0;
	*hi = b >= LATENCY_BUCKETS - 1 ? UINT64_MAX : b ? (2ull << b) - 1 : 1;
}

bool latency__percentile(const struct latency_hist *h, double q, uint64_t *lo, uint64_t *hi)
{
	uint64_t rank, seen = 0;
	unsigned b;

	if (!h || !h->n)
		return false;
	rank = (uint64_t)ceil(q * (double)h->n);
	if (rank < 1)
		rank = 1;
	if (rank > h->n)
		rank = h->n;
	for (b = 0; b < LATENCY_BUCKETS; b++) {
		seen += h->b[b];
		if (seen >= rank)
			break;
	}
	latency__bounds(b < LATENCY_BUCKETS ? b : LATENCY_BUCKETS - 1, lo, hi);
	/* every value lies within [min, max]: the bucket, narrowed */
	if (*lo < h->min_ns)
		*lo = h->min_ns;
	if (*hi > h->max_ns)
		*hi = h->max_ns;
	return true;
}

void latency__hist_add(struct latency_hist *h, uint64_t ns)
{
	if (!h->n || ns < h->min_ns)
		h->min_ns = ns;
	if (!h->n || ns > h->max_ns)
		h->max_ns = ns;
	h->n++;
	h->sum_ns += ns;
	h->b[latency__bucket(ns)]++;
}

void latency__hist_merge(struct latency_hist *d, const struct latency_hist *s)
{
	unsigned b;

	if (!s->n)
		return;
	if (!d->n || s->min_ns < d->min_ns)
		d->min_ns = s->min_ns;
	if (!d->n || s->max_ns > d->max_ns)
		d->max_ns = s->max_ns;
	d->n += s->n;
	d->sum_ns += s->sum_ns;
	for (b = 0; b < LATENCY_BUCKETS; b++)
		d->b[b] += s->b[b];
}

static int lat_init(const struct an_ctx *ctx, void **state)
{
	struct latency *l = calloc(1, sizeof(*l));

	*state = NULL;
	if (!l)
		return -ENOMEM;
	l->ctx = ctx;
	l->t0 = UINT64_MAX;
	l->fn = calloc(ctx->nfuncs ? ctx->nfuncs : 1, sizeof(*l->fn));
	if (!l->fn) {
		free(l);
		return -ENOMEM;
	}
	*state = l;
	return 0;
}

static void lat_free(void *state)
{
	struct latency *l = state;
	uint32_t i;

	if (!l)
		return;
	for (i = 0; i < l->ctx->nfuncs; i++)
		free(l->fn[i]);
	free(l->fn);
	latency_slow__fini(&l->slow);
	free(l);
}

/* fid's histograms, made on first use; NULL when out of memory. */
static struct lat_fn *fn_get(struct latency *l, uint32_t fid)
{
	if (!l->fn[fid])
		l->fn[fid] = calloc(1, sizeof(*l->fn[fid]));
	return l->fn[fid];
}

static void lat_on_return(void *state, const struct an_return *r)
{
	struct latency *l = state;
	struct lat_fn *f;

	/* the start of the slow calls' time line: the first call traced */
	if (r->ts - r->incl_ns < l->t0)
		l->t0 = r->ts - r->incl_ns;
	/* only a return event gives a call its duration */
	if (r->fid >= l->ctx->nfuncs || !r->matched)
		return;
	if (l->ctx->slower_ns && r->incl_ns >= l->ctx->slower_ns)
		latency_slow__add(&l->slow, slow_keep(l), r);
	f = fn_get(l, r->fid);
	if (!f) {
		l->nomem++;
		return;
	}
	latency__hist_add(&f->wall, r->incl_ns);
	latency__hist_add(&f->cpu, r->cpu_incl_ns);
}

static int lat_merge(void *dst, const void *src)
{
	struct latency *d = dst;
	const struct latency *s = src;
	uint32_t i;

	for (i = 0; i < d->ctx->nfuncs; i++) {
		struct lat_fn *f;

		if (!s->fn[i])
			continue;
		f = fn_get(d, i);
		if (!f)
			return -ENOMEM;
		latency__hist_merge(&f->wall, &s->fn[i]->wall);
		latency__hist_merge(&f->cpu, &s->fn[i]->cpu);
	}
	d->nomem += s->nomem;
	if (s->t0 < d->t0)
		d->t0 = s->t0;
	return latency_slow__merge(&d->slow, &s->slow, slow_keep(d));
}

const struct latency_hist *latency__hist(const void *state, uint32_t fid, bool cpu)
{
	const struct latency *l = state;

	if (fid >= l->ctx->nfuncs || !l->fn[fid])
		return NULL;
	return cpu ? &l->fn[fid]->cpu : &l->fn[fid]->wall;
}

const struct analyzer_ops analyzer_latency = {
	.name = "latency",
	.help = "each function's call durations: log2 histograms of wall and on-CPU time, "
		"min, p50, p90, p99, max",
	.init = lat_init,
	.on_return = lat_on_return,
	.merge = lat_merge,
	.free = lat_free,
	.lower_bounds = AN_LOST_CALLS,
};
