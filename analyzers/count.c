// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/an_threads.h"
#include "analyzers/analyzer.h"
#include "analyzers/sampling.h"
#include "analyzers/count.h"
#include "analyzers/count_int.h"
#include "common/hmap.h"
#include "common/json.h"
#include "common/log.h"


static int count_init(const struct an_ctx *ctx, void **state)
{
	struct count *c = calloc(1, sizeof(*c));

	*state = NULL;
	if (!c)
		return -ENOMEM;
	c->ctx = ctx;
	c->fn = calloc(ctx->nfuncs ? ctx->nfuncs : 1, sizeof(*c->fn));
	if (!c->fn) {
		free(c);
		return -ENOMEM;
	}
	*state = c;
	return 0;
}

static void thread_free(void *obj)
{
	struct count_thread *t = obj;

	hmap__fini(&t->fn);
	free(t);
}

static void count_free(void *state)
{
	struct count *c = state;

	if (!c)
		return;
	an_threads__fini(&c->threads, thread_free);
	for (uint32_t i = 0; i < c->ctx->nfuncs; i++)
		sampling__fini(&c->fn[i].wc);
	free(c->fn);
	free(c);
}


static int thread_init(void *obj, uint32_t tid, void *arg)
{
	(void)arg;
	((struct count_thread *)obj)->tid = tid;
	return 0;
}

static struct count_thread *thread_get(struct count *c, uint32_t tid)
{
	return an_threads__get(&c->threads, tid, sizeof(struct count_thread), thread_init, NULL);
}

static struct count_thread *thread_find(const struct count *c, uint32_t tid)
{
	return an_threads__find(&c->threads, tid);
}

static void count_on_call(void *state, const struct an_call *ev)
{
	struct count *c = state;
	struct count_thread *t;
	uint64_t *v;

	if (ev->callee >= c->ctx->nfuncs)
		return; /* the runner filters bad fids; this only guards memory */
	c->fn[ev->callee].calls++;
	if (sampling__add(&c->fn[ev->callee].wc, ev->epoch, 1))
		c->nomem++;
	t = thread_get(c, ev->tid);
	if (!t || hmap__upsert(&t->fn, ev->callee, &v)) {
		c->nomem++;
		return;
	}
	t->calls++;
	(*v)++;
}

static void count_on_return(void *state, const struct an_return *r)
{
	struct count *c = state;
	struct count_fn *f;

	if (r->fid >= c->ctx->nfuncs)
		return;
	f = &c->fn[r->fid];
	/* Which frames lost their returns, and why (pipeline/shadow.h). */
	f->t.unwound += r->unwound;
	f->t.switched += r->switched;
	/* Sampled times hold however the frame closed (pipeline/shadow.h,
	 * SAMPLES): one truth for this table and the tree's. */
	f->t.samples_self += r->samples_self;
	f->t.aft_self_ns += r->aft_self_ns;
	if (!r->recursive) {
		f->t.samples_incl += r->samples_incl;
		f->t.aft_incl_ns += r->aft_incl_ns;
	}
	if (!r->matched)
		return;
	f->t.matched++;
	f->t.self_ns += r->self_ns;
	if (!r->recursive)
		f->t.incl_ns += r->incl_ns;
}

static int count_merge(void *dst, const void *src)
{
	struct count *d = dst;
	const struct count *s = src;
	struct hmap_ent *e, *fe;
	size_t it = 0, fit;
	uint32_t i;

	for (i = 0; i < d->ctx->nfuncs; i++) {
		d->fn[i].calls += s->fn[i].calls;
		d->fn[i].t.matched += s->fn[i].t.matched;
		d->fn[i].t.unwound += s->fn[i].t.unwound;
		d->fn[i].t.switched += s->fn[i].t.switched;
		d->fn[i].t.incl_ns += s->fn[i].t.incl_ns;
		d->fn[i].t.self_ns += s->fn[i].t.self_ns;
		d->fn[i].t.samples_self += s->fn[i].t.samples_self;
		d->fn[i].t.samples_incl += s->fn[i].t.samples_incl;
		d->fn[i].t.aft_self_ns += s->fn[i].t.aft_self_ns;
		d->fn[i].t.aft_incl_ns += s->fn[i].t.aft_incl_ns;
		if (sampling__merge(&d->fn[i].wc, &s->fn[i].wc))
			return -ENOMEM;
	}
	d->nomem += s->nomem;
	while (hmap__next(&s->threads.map, &it, &e)) {
		const struct count_thread *st = (struct count_thread *)(uintptr_t)e->val;
		struct count_thread *dt;

		if (!st)
			continue;
		dt = thread_get(d, st->tid);
		if (!dt)
			return -ENOMEM;
		dt->calls += st->calls;
		fit = 0;
		while (hmap__next(&st->fn, &fit, &fe)) {
			uint64_t *v;

			if (hmap__upsert(&dt->fn, fe->key, &v))
				return -ENOMEM;
			*v += fe->val;
		}
	}
	return 0;
}

/* ------------------------------------------------------------ queries -- */

uint64_t count__calls(const void *state, uint32_t fid)
{
	const struct count *c = state;

	return fid < c->ctx->nfuncs ? c->fn[fid].calls : 0;
}

uint64_t count__thread_calls(const void *state, uint32_t tid, uint32_t fid)
{
	const struct count_thread *t = thread_find(state, tid);
	uint64_t *v = t ? hmap__find(&t->fn, fid) : NULL;

	return v ? *v : 0;
}

uint64_t count__thread_total(const void *state, uint32_t tid)
{
	const struct count_thread *t = thread_find(state, tid);

	return t ? t->calls : 0;
}

/* Threads with at least one recorded call (an allocation that failed
 * half-way can leave an empty slot, which is not a thread). */
static size_t nthreads(const struct count *c)
{
	struct hmap_ent *e;
	size_t it = 0, n = 0;

	while (hmap__next(&c->threads.map, &it, &e))
		if (e->val)
			n++;
	return n;
}

size_t count__nthreads(const void *state)
{
	return nthreads(state);
}

void count__time(const void *state, uint32_t fid, struct count_time *t)
{
	const struct count *c = state;

	memset(t, 0, sizeof(*t));
	if (fid < c->ctx->nfuncs)
		*t = c->fn[fid].t;
}

const struct analyzer_ops analyzer_count = {
	.name = "count",
	.help = "calls per function (total and per thread), inclusive and self time",
	.init = count_init,
	.on_call = count_on_call,
	.on_return = count_on_return,
	.merge = count_merge,
	.lower_bounds = AN_LOST_CALLS,
	.free = count_free,
};
