// SPDX-License-Identifier: BSD-2-Clause
/* What is charged where is described in io.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/an_threads.h"
#include "analyzers/analyzer.h"
#include "common/emit.h"
#include "common/hmap.h"
#include "analyzers/io.h"
#include "analyzers/io_int.h"
#include "common/json.h"
#include "cabbpf_event.h"
#include "common/syscalls.h"


static int ioan_init(const struct an_ctx *ctx, void **state)
{
	struct ioan *a = calloc(1, sizeof(*a));

	*state = NULL;
	if (!a)
		return -ENOMEM;
	a->ctx = ctx;
	a->fn = calloc(ctx->nfuncs ? ctx->nfuncs : 1, sizeof(*a->fn));
	if (!a->fn) {
		free(a);
		return -ENOMEM;
	}
	*state = a;
	return 0;
}

static void ioan_free(void *state)
{
	struct ioan *a = state;

	if (!a)
		return;
	an_threads__fini(&a->threads, NULL);
	free(a->fn);
	free(a);
}

static struct io_totals *thread_get(struct ioan *a, uint32_t tid)
{
	return an_threads__get(&a->threads, tid, sizeof(struct io_totals), NULL, NULL);
}

static void add(struct io_totals *t, bool out, uint64_t bytes)
{
	if (out) {
		t->out_bytes += bytes;
		t->out_calls++;
	} else {
		t->in_bytes += bytes;
		t->in_calls++;
	}
}

static void ioan_on_io(void *state, const struct an_io *io)
{
	struct ioan *a = state;
	bool out = CABBPF_SC_IS_OUTPUT(io->sc);
	struct io_sc_totals *s;
	struct io_totals *t;
	size_t i;

	if (io->sc >= CABBPF_SC__MAX || io->fdkind >= CABBPF_FD__MAX) {
		a->bad++;
		return;
	}
	a->events++;
	s = &a->sc[io->sc][io->fdkind];
	s->calls++;
	if (io->failed) {
		s->errors++;
	} else {
		s->bytes += io->ret;
		s->req += io->req;
		if (io->ret < io->req)
			s->short_calls++;
	}
	t = thread_get(a, io->tid);
	if (t)
		add(t, out, io->ret);
	else
		a->nomem++;
	if (!io->depth) {
		add(&a->outside, out, io->ret);
		return;
	}
	/* Inclusive: each function once, at its outermost live activation
	 * (the others are marked recursive). */
	for (i = 0; i < io->depth; i++) {
		const struct shadow_frame *f = &io->frames[i];

		if (f->fid < a->ctx->nfuncs && !f->recursive)
			add(&a->fn[f->fid], out, io->ret);
	}
	i = io->depth - 1;
	if (io->frames[i].fid < a->ctx->nfuncs) {
		if (out)
			a->fn[io->frames[i].fid].self_out_bytes += io->ret;
		else
			a->fn[io->frames[i].fid].self_in_bytes += io->ret;
	}
}

static void add_totals(struct io_totals *d, const struct io_totals *s)
{
	d->in_bytes += s->in_bytes;
	d->out_bytes += s->out_bytes;
	d->in_calls += s->in_calls;
	d->out_calls += s->out_calls;
	d->self_in_bytes += s->self_in_bytes;
	d->self_out_bytes += s->self_out_bytes;
}

static int ioan_merge(void *dst, const void *src)
{
	struct ioan *d = dst;
	const struct ioan *s = src;
	struct hmap_ent *e;
	size_t it = 0;
	uint32_t i, k;

	for (i = 0; i < d->ctx->nfuncs; i++)
		add_totals(&d->fn[i], &s->fn[i]);
	add_totals(&d->outside, &s->outside);
	for (i = 0; i < CABBPF_SC__MAX; i++)
		for (k = 0; k < CABBPF_FD__MAX; k++) {
			d->sc[i][k].calls += s->sc[i][k].calls;
			d->sc[i][k].errors += s->sc[i][k].errors;
			d->sc[i][k].bytes += s->sc[i][k].bytes;
			d->sc[i][k].req += s->sc[i][k].req;
			d->sc[i][k].short_calls += s->sc[i][k].short_calls;
		}
	d->events += s->events;
	d->bad += s->bad;
	d->nomem += s->nomem;
	while (hmap__next(&s->threads.map, &it, &e)) {
		struct io_totals *t;

		if (!e->val)
			continue;
		t = thread_get(d, (uint32_t)e->key);
		if (!t)
			return -ENOMEM;
		add_totals(t, (const struct io_totals *)(uintptr_t)e->val);
	}
	return 0;
}

/* ------------------------------------------------------------ queries -- */

void io__fn(const void *state, uint32_t fid, struct io_totals *t)
{
	const struct ioan *a = state;

	memset(t, 0, sizeof(*t));
	if (fid < a->ctx->nfuncs)
		*t = a->fn[fid];
}

void io__outside(const void *state, struct io_totals *t)
{
	*t = ((const struct ioan *)state)->outside;
}

void io__sc(const void *state, unsigned sc, unsigned fdkind, struct io_sc_totals *t)
{
	const struct ioan *a = state;

	memset(t, 0, sizeof(*t));
	if (sc < CABBPF_SC__MAX && fdkind < CABBPF_FD__MAX)
		*t = a->sc[sc][fdkind];
}

void io__thread(const void *state, uint32_t tid, struct io_totals *t)
{
	const struct io_totals *o = an_threads__find(&((const struct ioan *)state)->threads, tid);

	memset(t, 0, sizeof(*t));
	if (o)
		*t = *o;
}

uint64_t io__events(const void *state)
{
	return ((const struct ioan *)state)->events;
}

const struct analyzer_ops analyzer_io = {
	.name = "io",
	.help = "external input / output bytes per function activation (inclusive and self), "
		"per syscall and fd kind",
	.init = ioan_init,
	.on_call = NULL,
	.on_return = NULL,
	.merge = ioan_merge,
	.lower_bounds = AN_LOST_IO,
	.free = ioan_free,
	.on_io = ioan_on_io,
};
