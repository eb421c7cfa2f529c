// SPDX-License-Identifier: BSD-2-Clause
/* The timeline analyzer: the events it keeps (timeline.h); written as a
 * trace by user/report/perfetto.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/analyzer.h"
#include "analyzers/timeline.h"
#include "common/callvals.h"
#include "common/json.h"

static const char *const kind_names[] = {"returned", "unwound", "switched", "missing", "open", "io"};

struct timeline {
	const struct an_ctx *ctx;
	struct tl_event *v;
	size_t n, cap;
	uint64_t limit, cut, nomem;
	uint64_t nomem_vals; /* calls kept without their values: no memory */
};

static int tl_init(const struct an_ctx *ctx, void **state)
{
	struct timeline *t = calloc(1, sizeof(*t));

	*state = t;
	if (!t)
		return -ENOMEM;
	t->ctx = ctx;
	t->limit = ctx->timeline_limit ? ctx->timeline_limit : TIMELINE_DEFAULT_LIMIT;
	return 0;
}

/* Room for one more; false when cut by the limit or out of memory
 * (counted either way: nothing is dropped silently). */
static bool room(struct timeline *t)
{
	if (t->n >= t->limit) {
		t->cut++;
		return false;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		struct tl_event *v;

		if (cap > t->limit)
			cap = t->limit;
		v = realloc(t->v, cap * sizeof(*v));
		if (!v) {
			t->nomem++;
			return false;
		}
		t->v = v;
		t->cap = cap;
	}
	return true;
}

static void tl_on_return(void *state, const struct an_return *r)
{
	struct timeline *t = state;
	struct tl_event *e;

	if (!room(t))
		return;
	e = &t->v[t->n++];
	memset(e, 0, sizeof(*e));
	e->tid = r->tid;
	e->fid = r->fid;
	e->ts = r->ts - r->incl_ns;
	e->dur = r->incl_ns;
	e->depth = r->depth > UINT16_MAX ? UINT16_MAX : (uint16_t)r->depth;
	/* a forked child's inherited frame (pipeline/shadow.h, FORKS): its
	 * part of the parent's call, from the fork until it ended there */
	e->kind = r->matched || (r->inherited && !r->open) ? TL_RETURNED
		  : r->unwound ? TL_UNWOUND
		  : r->switched ? TL_SWITCHED
		  : r->open	 ? TL_OPEN
				 : TL_MISSING;
	if (r->frames[r->depth].vals && !(e->vals = callvals__pairs(r->frames[r->depth].vals)))
		t->nomem_vals++;
}

static void tl_on_io(void *state, const struct an_io *io)
{
	struct timeline *t = state;
	struct tl_event *e;

	if (!room(t))
		return;
	e = &t->v[t->n++];
	memset(e, 0, sizeof(*e));
	e->tid = io->tid;
	e->fid = io->sc << 8 | (io->fdkind & 0xff);
	e->fd = io->fd;
	e->ts = io->ts;
	e->dur = (uint64_t)io->ret << 32 | io->req;
	e->kind = TL_IO;
	e->failed = io->failed;
	e->depth = io->depth > UINT16_MAX ? UINT16_MAX : (uint16_t)io->depth;
}

static int tl_merge(void *dst, const void *src)
{
	struct timeline *d = dst;
	const struct timeline *s = src;
	size_t i;

	d->cut += s->cut;
	d->nomem += s->nomem;
	d->nomem_vals += s->nomem_vals;
	for (i = 0; i < s->n; i++) {
		struct tl_event *e;

		if (!room(d))
			continue; /* counted in d->cut or d->nomem */
		e = &d->v[d->n++];
		*e = s->v[i];
		if (e->vals) { /* a copy: s frees its own */
			size_t n = callvals__pairs_size(s->v[i].vals);

			e->vals = malloc(n);
			if (e->vals)
				memcpy(e->vals, s->v[i].vals, n);
			else
				d->nomem_vals++;
		}
	}
	return 0;
}

static void tl_free(void *state)
{
	struct timeline *t = state;

	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].vals);
	free(t->v);
	free(t);
}

const struct tl_event *timeline__events(const void *state, size_t *n, uint64_t *limit,
					uint64_t *cut)
{
	const struct timeline *t = state;

	*n = t->n;
	*limit = t->limit;
	*cut = t->cut + t->nomem;
	return t->v;
}

void timeline__counts(const void *state, struct timeline_counts *c)
{
	const struct timeline *t = state;

	*c = (struct timeline_counts){.kept = t->n,
				      .limit = t->limit,
				      .cut = t->cut,
				      .nomem = t->nomem,
				      .nomem_vals = t->nomem_vals};
}

const struct an_ctx *timeline__ctx(const void *state)
{
	return ((const struct timeline *)state)->ctx;
}

const char *timeline__kind_name(unsigned kind)
{
	return kind < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[kind] : "?";
}

const struct analyzer_ops analyzer_timeline = {
	.name = "timeline",
	.help = "every activation and I/O call in time, for --timeline (opt-in)",
	.init = tl_init,
	.on_return = tl_on_return,
	.on_io = tl_on_io,
	.merge = tl_merge,
	.free = tl_free,
	.opt_in = true,
	.lower_bounds = AN_LOST_CALLS | AN_LOST_IO,
};
