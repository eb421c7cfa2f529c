// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/an_threads.h"
#include "analyzers/analyzer.h"
#include "analyzers/sampling.h"
#include "analyzers/callgraph.h"
#include "analyzers/callgraph_int.h"
#include "common/hmap.h"
#include "common/json.h"
#include "common/log.h"


/* The per-window counts of edge key, made on first use; NULL: no memory. */
static struct sampling_counts *wedge_get(struct callgraph *g, uint64_t key)
{
	uint64_t *v;

	if (hmap__upsert(&g->wedges, key, &v))
		return NULL;
	if (!*v) {
		struct sampling_counts *c = calloc(1, sizeof(*c));

		if (!c)
			return NULL; /* an empty slot reads as absent */
		*v = (uint64_t)(uintptr_t)c;
	}
	return (struct sampling_counts *)(uintptr_t)*v;
}

static int cg_init(const struct an_ctx *ctx, void **state)
{
	struct callgraph *g = calloc(1, sizeof(*g));

	*state = g;
	if (!g)
		return -ENOMEM;
	g->ctx = ctx;
	return 0;
}

static void thread_free(void *obj)
{
	struct cg_thread *t = obj;

	hmap__fini(&t->edges);
	free(t);
}

static void cg_free(void *state)
{
	struct callgraph *g = state;
	struct hmap_ent *e;
	size_t it = 0;

	if (!g)
		return;
	an_threads__fini(&g->threads, thread_free);
	hmap__fini(&g->edges);
	while (hmap__next(&g->wedges, &it, &e)) {
		struct sampling_counts *c = (struct sampling_counts *)(uintptr_t)e->val;

		if (c)
			sampling__fini(c);
		free(c);
	}
	hmap__fini(&g->wedges);
	free(g);
}

static int thread_init(void *obj, uint32_t tid, void *arg)
{
	(void)arg;
	((struct cg_thread *)obj)->tid = tid;
	return 0;
}

static struct cg_thread *thread_get(struct callgraph *g, uint32_t tid)
{
	return an_threads__get(&g->threads, tid, sizeof(struct cg_thread), thread_init, NULL);
}

static const struct cg_thread *thread_find(const struct callgraph *g, uint32_t tid)
{
	return an_threads__find(&g->threads, tid);
}

static int add_edge(struct callgraph *g, uint32_t tid, uint64_t key, uint64_t n)
{
	struct cg_thread *t;
	uint64_t *v;

	if (hmap__upsert(&g->edges, key, &v))
		return -ENOMEM;
	*v += n;
	t = thread_get(g, tid);
	if (!t || hmap__upsert(&t->edges, key, &v))
		return -ENOMEM;
	*v += n;
	return 0;
}

static void cg_on_call(void *state, const struct an_call *c)
{
	struct callgraph *g = state;

	struct sampling_counts *wc;

	if (add_edge(g, c->tid, EDGE(c->caller, c->callee), 1))
		g->nomem++;
	if (c->epoch && (!(wc = wedge_get(g, EDGE(c->caller, c->callee))) ||
			 sampling__add(wc, c->epoch, 1)))
		g->nomem++;
}

static void cg_on_return(void *state, const struct an_return *r)
{
	(void)state;
	(void)r;
}

static int cg_merge(void *dst, const void *src)
{
	struct callgraph *d = dst;
	const struct callgraph *s = src;
	struct hmap_ent *e, *te;
	size_t it = 0, tit;
	int err;

	d->nomem += s->nomem;
	while (hmap__next(&s->wedges, &it, &e)) {
		const struct sampling_counts *c = (const struct sampling_counts *)(uintptr_t)e->val;
		struct sampling_counts *dc;

		if (!c)
			continue;
		dc = wedge_get(d, e->key);
		if (!dc || sampling__merge(dc, c))
			return -ENOMEM;
	}
	it = 0;
	while (hmap__next(&s->threads.map, &it, &e)) {
		const struct cg_thread *t = (const struct cg_thread *)(uintptr_t)e->val;

		if (!t)
			continue;
		tit = 0;
		while (hmap__next(&t->edges, &tit, &te)) {
			err = add_edge(d, t->tid, te->key, te->val);
			if (err)
				return err;
		}
	}
	return 0;
}

uint64_t callgraph__edge(const void *state, uint32_t caller, uint32_t callee)
{
	const struct callgraph *g = state;
	uint64_t *v = hmap__find(&g->edges, EDGE(caller, callee));

	return v ? *v : 0;
}

uint64_t callgraph__thread_edge(const void *state, uint32_t tid, uint32_t caller, uint32_t callee)
{
	const struct cg_thread *t = thread_find(state, tid);
	uint64_t *v = t ? hmap__find(&t->edges, EDGE(caller, callee)) : NULL;

	return v ? *v : 0;
}

size_t callgraph__nedges(const void *state)
{
	const struct callgraph *g = state;

	return hmap__len(&g->edges);
}

const struct analyzer_ops analyzer_callgraph = {
	.name = "callgraph",
	.help = "caller -> callee edges with call counts (total and per thread)",
	.init = cg_init,
	.on_call = cg_on_call,
	.on_return = cg_on_return,
	.merge = cg_merge,
	.lower_bounds = AN_LOST_CALLS,
	.free = cg_free,
};
