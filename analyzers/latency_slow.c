// SPDX-License-Identifier: BSD-2-Clause
/* --slower-than's slowest calls (latency_int.h): a bounded min-heap by
 * duration, so keeping the N slowest of M calls costs O(log N) each and
 * N records, whatever M. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/latency_int.h"
#include "common/callvals.h"

/* a is faster than b (kept less): by duration, then the later start, then
 * the higher tid and fid, so that the calls kept do not depend on the
 * order the analyzer threads saw them in. */
static bool faster(const struct lat_slow_call *a, const struct lat_slow_call *b)
{
	if (a->incl_ns != b->incl_ns)
		return a->incl_ns < b->incl_ns;
	if (a->start_ns != b->start_ns)
		return a->start_ns > b->start_ns;
	if (a->tid != b->tid)
		return a->tid > b->tid;
	return a->fid > b->fid;
}

static void swap(struct lat_slow_call *a, struct lat_slow_call *b)
{
	struct lat_slow_call t = *a;

	*a = *b;
	*b = t;
}

static void sift_down(struct lat_slow_call *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < n && faster(&h[l], &h[m]))
			m = l;
		if (r < n && faster(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		swap(&h[i], &h[m]);
		i = m;
	}
}

/* Keep c when it is among the keep slowest; c->vals is s's then, or
 * freed. Returns 0 or -ENOMEM. */
static int keep_call(struct lat_slow *s, size_t keep, const struct lat_slow_call *c)
{
	size_t i;

	if (!keep || (s->n == keep && faster(c, &s->heap[0]))) {
		free(c->vals);
		return 0;
	}
	if (s->n == keep) {
		free(s->heap[0].vals);
		s->heap[0] = *c;
		sift_down(s->heap, s->n, 0);
		return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct lat_slow_call *h;

		if (cap > keep)
			cap = keep;
		h = realloc(s->heap, cap * sizeof(*h));
		if (!h) {
			free(c->vals);
			return -ENOMEM;
		}
		s->heap = h;
		s->cap = cap;
	}
	/* sift up */
	i = s->n++;
	s->heap[i] = *c;
	while (i && faster(&s->heap[i], &s->heap[(i - 1) / 2])) {
		swap(&s->heap[i], &s->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	return 0;
}

/* A copy of v for s to keep, or NULL (none; no memory: counted). */
static struct callvals *dup_vals(struct lat_slow *s, const struct callvals *v)
{
	struct callvals *c;

	if (!v)
		return NULL;
	c = malloc(sizeof(*c));
	if (c)
		*c = *v;
	else
		s->nomem_vals++;
	return c;
}

void latency_slow__add(struct lat_slow *s, size_t keep, const struct an_return *r)
{
	struct lat_slow_call c = {
		.start_ns = r->ts - r->incl_ns,
		.incl_ns = r->incl_ns,
		.cpu_incl_ns = r->cpu_incl_ns,
		.tid = r->tid,
		.fid = r->fid,
	};
	uint32_t k;

	s->over++;
	if (s->n == keep && keep && faster(&c, &s->heap[0]))
		return; /* not among the slowest: no need for its callers */
	/* frames[0..depth-1]: its live callers, [0] outermost */
	for (k = r->depth; k-- > 0 && c.ncallers < LAT_CALLERS;)
		c.callers[c.ncallers++] = r->frames[k].fid;
	c.elided = r->depth - c.ncallers;
	c.vals = dup_vals(s, r->frames[r->depth].vals);
	if (keep_call(s, keep, &c))
		s->nomem++;
}

int latency_slow__merge(struct lat_slow *dst, const struct lat_slow *src, size_t keep)
{
	size_t i;

	dst->over += src->over;
	dst->nomem += src->nomem;
	dst->nomem_vals += src->nomem_vals;
	for (i = 0; i < src->n; i++) {
		struct lat_slow_call c = src->heap[i];

		c.vals = dup_vals(dst, src->heap[i].vals); /* src keeps its own */
		if (keep_call(dst, keep, &c))
			return -ENOMEM;
	}
	return 0;
}

static int cmp_slowest(const void *a, const void *b)
{
	const struct lat_slow_call *x = a, *y = b;

	return faster(x, y) ? 1 : faster(y, x) ? -1 : 0;
}

struct lat_slow_call *latency_slow__sorted(const struct lat_slow *s)
{
	struct lat_slow_call *v;

	if (!s->n)
		return NULL;
	v = malloc(s->n * sizeof(*v));
	if (!v)
		return NULL;
	memcpy(v, s->heap, s->n * sizeof(*v));
	qsort(v, s->n, sizeof(*v), cmp_slowest);
	return v;
}

void latency_slow__fini(struct lat_slow *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->heap[i].vals);
	free(s->heap);
	memset(s, 0, sizeof(*s));
}
