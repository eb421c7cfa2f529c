// SPDX-License-Identifier: BSD-2-Clause
/* The calling-context tree analyzer; the model is described in cct.h. */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/analyzer.h"
#include "common/log.h"
#include "analyzers/cct_int.h"

#define CHUNK_NODES (1u << CCT_CHUNK_SHIFT)
#define WIDE_KEY(parent, fid) ((uint64_t)(parent) << 32 | (fid))

/* ------------------------------------------------------------ trees -- */

static void tree_fini(struct cct_tree *t)
{
	struct hmap_ent *e;
	size_t it = 0;
	uint32_t i;

	if (!t)
		return;
	for (i = 0; i < t->nchunks; i++)
		free(t->chunk[i]);
	free(t->chunk);
	hmap__fini(&t->wide);
	while (hmap__next(&t->hist, &it, &e))
		free((void *)(uintptr_t)e->val);
	hmap__fini(&t->hist);
	memset(t, 0, sizeof(*t));
}

const struct cct_hist *cct__hist(const struct cct_tree *t, uint32_t id)
{
	uint64_t *v = hmap__find(&t->hist, id);

	return v ? (const struct cct_hist *)(uintptr_t)*v : NULL;
}

/* Node id's durations, made on first use; NULL when out of memory. */
static struct cct_hist *hist_get(struct cct_tree *t, uint32_t id)
{
	uint64_t *v;

	if (hmap__upsert(&t->hist, id, &v))
		return NULL;
	if (!*v) {
		struct cct_hist *h = calloc(1, sizeof(*h));

		if (!h)
			return NULL; /* an absent value reads as none */
		*v = (uint64_t)(uintptr_t)h;
	}
	return (struct cct_hist *)(uintptr_t)*v;
}

/* A new node (zeroed but for fid and links), or CCT_NONE: out of memory. */
static uint32_t node_alloc(struct cct_tree *t, uint32_t fid, uint32_t parent)
{
	struct cct_node *n;
	uint32_t id = t->n;

	if (id == CCT_NONE - 1)
		return CCT_NONE;
	if ((id >> CCT_CHUNK_SHIFT) == t->nchunks) {
		if (t->nchunks == t->capchunks) {
			uint32_t nc = t->capchunks ? t->capchunks * 2 : 4;
			struct cct_node **v = realloc(t->chunk, nc * sizeof(*v));

			if (!v)
				return CCT_NONE;
			t->chunk = v;
			t->capchunks = nc;
		}
		t->chunk[t->nchunks] = malloc(CHUNK_NODES * sizeof(struct cct_node));
		if (!t->chunk[t->nchunks])
			return CCT_NONE;
		t->nchunks++;
	}
	n = cct__node(t, id);
	memset(n, 0, sizeof(*n));
	n->fid = fid;
	n->parent = parent;
	n->child = n->sibling = CCT_NONE;
	t->n++;
	return id;
}

/* Start a tree with its root. Returns 0 or -ENOMEM. */
static int tree_init(struct cct_tree *t, uint32_t tid)
{
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return node_alloc(t, AN_ROOT, CCT_NONE) == CCT_NONE ? -ENOMEM : 0;
}

uint32_t cct__child(const struct cct_tree *t, uint32_t parent, uint32_t fid)
{
	const struct cct_node *p = cct__node(t, parent);
	uint32_t id;

	if (p->nchild > CCT_WIDE) {
		uint64_t *v = hmap__find(&t->wide, WIDE_KEY(parent, fid));

		return v ? (uint32_t)*v : CCT_NONE;
	}
	for (id = p->child; id != CCT_NONE; id = cct__node(t, id)->sibling)
		if (cct__node(t, id)->fid == fid)
			return id;
	return CCT_NONE;
}

/* Index child id of parent p in the hash (p is wide). Returns 0 or -ENOMEM. */
static int wide_add(struct cct_tree *t, uint32_t p, uint32_t id)
{
	uint64_t *v;

	if (hmap__upsert(&t->wide, WIDE_KEY(p, cct__node(t, id)->fid), &v))
		return -ENOMEM;
	*v = id;
	return 0;
}

/*
 * The child of parent for fid, made if absent and *budget allows (it is
 * decremented). Returns the id, or CCT_NONE: no budget or no memory (*nomem
 * set).
 */
static uint32_t child_get(struct cct_tree *t, uint32_t parent, uint32_t fid, uint64_t *budget,
			  bool *nomem)
{
	struct cct_node *p;
	uint32_t id = cct__child(t, parent, fid), c;

	if (id != CCT_NONE)
		return id;
	if (!*budget)
		return CCT_NONE;
	id = node_alloc(t, fid, parent);
	if (id == CCT_NONE) {
		*nomem = true;
		return CCT_NONE;
	}
	p = cct__node(t, parent);
	cct__node(t, id)->sibling = p->child;
	p->child = id;
	p->nchild++;
	(*budget)--;
	/* A wide parent's children go into the hash: a lookup is then O(1)
	 * whatever its fan-out (main calling 10,000 functions). */
	if (p->nchild == CCT_WIDE + 1) {
		for (c = p->child; c != CCT_NONE; c = cct__node(t, c)->sibling)
			if (wide_add(t, parent, c))
				*nomem = true;
	} else if (p->nchild > CCT_WIDE + 1 && wide_add(t, parent, id)) {
		*nomem = true;
	}
	return id;
}

static uint32_t sat32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* Add src's figures into dst's (same context). */
static void node_add(struct cct_node *d, const struct cct_node *s)
{
	d->calls += s->calls;
	d->incl_ns += s->incl_ns;
	d->self_ns += s->self_ns;
	d->cpu_incl_ns += s->cpu_incl_ns;
	d->cpu_self_ns += s->cpu_self_ns;
	d->samples_incl = sat32((uint64_t)d->samples_incl + s->samples_incl);
	d->samples_self = sat32((uint64_t)d->samples_self + s->samples_self);
	d->missing = sat32((uint64_t)d->missing + s->missing);
	d->unwound = sat32((uint64_t)d->unwound + s->unwound);
	d->folded = sat32((uint64_t)d->folded + s->folded);
}

/*
 * Add tree src into dst, context by context. Parents have smaller ids than
 * their children, so one pass in id order maps every parent first.
 * Returns 0 or -ENOMEM (dst then holds part of src).
 */
static int tree_merge(struct cct_tree *dst, const struct cct_tree *src)
{
	uint32_t *map = malloc((size_t)(src->n ? src->n : 1) * sizeof(*map));
	uint64_t budget = UINT64_MAX;
	bool nomem = false;
	uint32_t i;
	int err = 0;

	if (!map)
		return -ENOMEM;
	map[0] = 0;
	node_add(cct__node(dst, 0), cct__node(src, 0));
	for (i = 1; i < src->n; i++) {
		const struct cct_node *s = cct__node(src, i);
		uint32_t d = child_get(dst, map[s->parent], s->fid, &budget, &nomem);

		if (d == CCT_NONE) {
			err = -ENOMEM;
			break;
		}
		map[i] = d;
		node_add(cct__node(dst, d), s);
		if (src->hist.len) {
			const struct cct_hist *sh = cct__hist(src, i);
			struct cct_hist *dh;

			if (sh) {
				dh = hist_get(dst, d);
				if (!dh) {
					err = -ENOMEM;
					break;
				}
				latency__hist_merge(&dh->wall, &sh->wall);
				latency__hist_merge(&dh->cpu, &sh->cpu);
			}
		}
	}
	free(map);
	return err ? err : nomem ? -ENOMEM : 0;
}

static uint64_t tree_bytes(const struct cct_tree *t)
{
	return (uint64_t)t->nchunks * CHUNK_NODES * sizeof(struct cct_node) +
	       (uint64_t)t->capchunks * sizeof(void *) +
	       (uint64_t)t->wide.cap * (sizeof(struct hmap_ent) + 1) +
	       (uint64_t)t->hist.cap * (sizeof(struct hmap_ent) + 1) +
	       (uint64_t)t->hist.len * sizeof(struct cct_hist);
}

/* ---------------------------------------------------------- analyzer -- */

static int cct_init(const struct an_ctx *ctx, void **state)
{
	struct cct *g = calloc(1, sizeof(*g));

	*state = g;
	if (!g)
		return -ENOMEM;
	g->ctx = ctx;
	if (ctx->cct)
		g->o = *ctx->cct;
	else
		g->o.min_pct = -1;
	if (!g->o.max_nodes)
		g->o.max_nodes = CCT_DEFAULT_MAX_NODES;
	if (g->o.min_pct < 0)
		g->o.min_pct = CCT_DEFAULT_MIN_PCT;
	/* --hist: durations by context for the functions it names */
	if (ctx->nhist && ctx->nfuncs) {
		uint32_t fid;

		g->named = calloc(ctx->nfuncs, 1);
		if (!g->named)
			return -ENOMEM;
		for (fid = 0; fid < ctx->nfuncs; fid++) {
			char buf[24];
			const char *name = an_ctx__name(ctx, fid, buf);
			size_t k;

			for (k = 0; k < ctx->nhist && !g->named[fid]; k++)
				g->named[fid] = !fnmatch(ctx->hist[k], name, 0);
		}
	}
	return 0;
}

static void thread_free(void *obj)
{
	struct cct_thread *t = obj;

	if (!t)
		return;
	tree_fini(&t->t);
	free(t->path);
	free(t);
}

static void cct_free(void *state)
{
	struct cct *g = state;

	if (!g)
		return;
	an_threads__fini(&g->threads, thread_free);
	if (g->merged)
		tree_fini(g->merged);
	free(g->merged);
	free(g->sorted);
	free(g->named);
	free(g);
}

/* A thread's tree, made with its first event (thread_get). */
static int thread_init(void *obj, uint32_t tid, void *arg)
{
	struct cct_thread *t = obj;
	struct cct *g = arg;

	if (tree_init(&t->t, tid))
		return -ENOMEM;
	g->nnodes++;
	return 0;
}

static struct cct_thread *thread_get(struct cct *g, uint32_t tid)
{
	return an_threads__get(&g->threads, tid, sizeof(struct cct_thread), thread_init, g);
}

static int path_reserve(struct cct_thread *t, uint32_t n)
{
	struct pent *p;
	uint32_t cap;

	if (n <= t->pcap)
		return 0;
	cap = t->pcap ? t->pcap : 64;
	while (cap < n)
		cap *= 2;
	p = realloc(t->path, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	t->path = p;
	t->pcap = cap;
	return 0;
}

static uint64_t budget_of(const struct cct *g)
{
	return g->nnodes < g->o.max_nodes ? g->o.max_nodes - g->nnodes : 0;
}

/*
 * Map the frame of fid, called from the frame mapped to path entry pp (or
 * from the root when pp is NULL), to its node: its own node, its caller's
 * (collapsed recursion) or folded into its caller's (cap). make: a missing
 * context may get a node (a call); else it is folded (a resync).
 */
static struct pent map_frame(struct cct *g, struct cct_thread *t, const struct pent *pp,
			     uint32_t fid, bool make)
{
	uint32_t parent = pp ? pp->node : 0, id;
	uint64_t budget = make ? budget_of(g) : 0, before = budget;
	bool nomem = false;

	/* Below a folded frame everything folds too: a lookup from the node
	 * it was folded into would find that node's own children, other
	 * contexts. */
	if (pp && pp->how == PE_FOLDED)
		return *pp;
	if (g->o.collapse_recursion && parent && cct__node(&t->t, parent)->fid == fid)
		return (struct pent){.node = parent, .how = PE_SAME};
	id = child_get(&t->t, parent, fid, &budget, &nomem);
	g->nnodes += before - budget;
	if (nomem)
		g->nomem++;
	if (id == CCT_NONE)
		return (struct pent){.node = parent, .how = PE_FOLDED};
	return (struct pent){.node = id, .how = PE_OWN};
}

/*
 * The shadow stack was replaced under the path (a coroutine switch parked
 * or resumed a stack): rebuild path[0..n-1] from its frames. Contexts are
 * found, not made: their calls were counted when they were made. But a
 * forked child's inherited frames (pipeline/shadow.h, FORKS) are the
 * parent's calls, in the parent's tree: the child's contexts for them
 * are made here, with no call of their own, so its calls nest under them.
 */
static int resync(struct cct *g, struct cct_thread *t, const struct shadow_frame *f, uint32_t n,
		  uint32_t gen)
{
	uint32_t i;

	if (path_reserve(t, n + 1))
		return -ENOMEM;
	for (i = 0; i < n; i++)
		t->path[i] = map_frame(g, t, i ? &t->path[i - 1] : NULL, f[i].fid, f[i].inherited);
	t->pdepth = n;
	t->gen = gen;
	return 0;
}

static void cct_on_call(void *state, const struct an_call *c)
{
	struct cct *g = state;
	struct cct_thread *t = thread_get(g, c->tid);
	struct pent *pe;

	if (!t || path_reserve(t, c->depth + 1)) {
		g->nomem++;
		return;
	}
	if ((c->gen != t->gen || t->pdepth < c->depth) &&
	    resync(g, t, c->frames, c->depth, c->gen)) {
		g->nomem++;
		return;
	}
	pe = &t->path[c->depth];
	if (c->caller == AN_RESUMED) {
		/* Sampling: a function entered while tracing was off may be
		 * live above the stack's top (pipeline/shadow.h): the call's
		 * context is not known, so it goes under <resumed>, a child
		 * of the root that counts no calls of its own. */
		struct pent rp = map_frame(g, t, NULL, AN_RESUMED, true);

		*pe = map_frame(g, t, &rp, c->callee, true);
	} else {
		*pe = map_frame(g, t, c->depth ? &t->path[c->depth - 1] : NULL, c->callee, true);
	}
	if (pe->how == PE_FOLDED) {
		struct cct_node *n = cct__node(&t->t, pe->node);

		n->folded = sat32((uint64_t)n->folded + 1);
		g->folded++;
	} else {
		cct__node(&t->t, pe->node)->calls++;
	}
	t->pdepth = c->depth + 1;
}

static void cct_on_return(void *state, const struct an_return *r)
{
	struct cct *g = state;
	struct cct_thread *t = thread_get(g, r->tid);
	struct cct_node *n;
	struct pent pe;

	if (!t) {
		g->nomem++;
		return;
	}
	if ((r->gen != t->gen || t->pdepth <= r->depth) &&
	    resync(g, t, r->frames, r->depth + 1, r->gen)) {
		g->nomem++;
		return;
	}
	pe = t->path[r->depth];
	t->pdepth = r->depth;
	n = cct__node(&t->t, pe.node);
	/* Self time always adds up; inclusive time only for a frame with a
	 * node of its own (a collapsed or folded frame's time is inside its
	 * caller's activation of the same node). A frame that lost its
	 * return brings its estimate (pipeline/shadow.h charges the same to
	 * its parent), so every node holds its children. */
	n->self_ns += r->self_ns;
	n->cpu_self_ns += r->cpu_self_ns;
	n->samples_self = sat32(n->samples_self + r->samples_self);
	if (pe.how == PE_OWN) {
		n->incl_ns += r->incl_ns;
		n->cpu_incl_ns += r->cpu_incl_ns;
		n->samples_incl = sat32(n->samples_incl + r->samples_incl);
	}
	/* --hist: each returned call's durations, in its context (a folded
	 * frame's node is another function's) */
	if (g->named && r->matched && pe.how != PE_FOLDED && r->fid < g->ctx->nfuncs &&
	    g->named[r->fid]) {
		struct cct_hist *h = hist_get(&t->t, pe.node);

		if (h) {
			latency__hist_add(&h->wall, r->incl_ns);
			latency__hist_add(&h->cpu, r->cpu_incl_ns);
		} else {
			g->nomem++;
		}
	}
	if (!r->matched && !r->open && pe.how != PE_FOLDED) {
		if (r->unwound)
			n->unwound = sat32((uint64_t)n->unwound + 1);
		else
			n->missing = sat32((uint64_t)n->missing + 1);
	}
}

static int cct_merge(void *dst, const void *src)
{
	struct cct *d = dst;
	const struct cct *s = src;
	struct hmap_ent *e;
	size_t it = 0;
	int err;

	d->folded += s->folded;
	d->nomem += s->nomem;
	while (hmap__next(&s->threads.map, &it, &e)) {
		const struct cct_thread *st = (const struct cct_thread *)(uintptr_t)e->val;
		struct cct_thread *dt;
		uint32_t before;

		if (!st)
			continue;
		dt = thread_get(d, st->t.tid);
		if (!dt)
			return -ENOMEM;
		before = dt->t.n;
		err = tree_merge(&dt->t, &st->t);
		d->nnodes += dt->t.n - before;
		if (err)
			return err;
	}
	return 0;
}

/* ------------------------------------------------------------ queries -- */

static int cmp_thread(const void *a, const void *b)
{
	const struct cct_thread *x = *(const struct cct_thread *const *)a;
	const struct cct_thread *y = *(const struct cct_thread *const *)b;

	return x->t.tid < y->t.tid ? -1 : x->t.tid > y->t.tid;
}

/* The threads sorted by tid (made once, after the run). */
static int sort_threads(struct cct *g)
{
	struct hmap_ent *e;
	size_t it = 0;

	if (g->sorted && g->nsorted == hmap__len(&g->threads.map))
		return 0;
	free(g->sorted);
	g->nsorted = 0;
	g->sorted = malloc((hmap__len(&g->threads.map) + 1) * sizeof(*g->sorted));
	if (!g->sorted)
		return -ENOMEM;
	while (hmap__next(&g->threads.map, &it, &e))
		if (e->val)
			g->sorted[g->nsorted++] = (struct cct_thread *)(uintptr_t)e->val;
	qsort(g->sorted, g->nsorted, sizeof(*g->sorted), cmp_thread);
	return 0;
}

size_t cct__nthreads(const void *state)
{
	struct cct *g = (struct cct *)state;

	return sort_threads(g) ? 0 : g->nsorted;
}

const struct cct_tree *cct__thread(const void *state, size_t i)
{
	struct cct *g = (struct cct *)state;

	if (sort_threads(g) || i >= g->nsorted)
		return NULL;
	return &g->sorted[i]->t;
}

const struct cct_tree *cct__merged(void *state)
{
	struct cct *g = state;
	size_t i;

	if (g->merged)
		return g->merged;
	if (sort_threads(g))
		goto nomem;
	g->merged = calloc(1, sizeof(*g->merged));
	if (!g->merged || tree_init(g->merged, 0))
		goto nomem;
	for (i = 0; i < g->nsorted; i++)
		if (tree_merge(g->merged, &g->sorted[i]->t))
			goto nomem;
	return g->merged;
nomem:
	log_err("cct: out of memory merging the threads' trees");
	if (g->merged)
		tree_fini(g->merged);
	free(g->merged);
	g->merged = NULL;
	return NULL;
}

void cct__memory(const void *state, struct cct_memory *m)
{
	const struct cct *g = state;
	struct hmap_ent *e;
	size_t it = 0;

	memset(m, 0, sizeof(*m));
	while (hmap__next(&g->threads.map, &it, &e)) {
		const struct cct_thread *t = (const struct cct_thread *)(uintptr_t)e->val;

		if (!t)
			continue;
		m->nodes += t->t.n;
		m->bytes +=
			tree_bytes(&t->t) + sizeof(*t) + (uint64_t)t->pcap * sizeof(struct pent);
	}
	m->folded_calls = g->folded;
	m->nomem = g->nomem;
	m->max_nodes = g->o.max_nodes;
}

/* cpu_time is decided after the analyzers are made (the switch tracepoint
 * is attached later): read it from the caller's options at report time. */
void cct__refresh_opts(struct cct *g)
{
	if (g->ctx->cct) {
		g->o.cpu_time = g->ctx->cct->cpu_time;
		g->o.probe_ns = g->ctx->cct->probe_ns;
	}
}


const struct cct_opts *cct__opts(void *state)
{
	cct__refresh_opts(state);
	return &((const struct cct *)state)->o;
}

const struct an_ctx *cct__ctx(const void *state)
{
	return ((const struct cct *)state)->ctx;
}

const struct analyzer_ops analyzer_cct = {
	.name = "cct",
	.help = "calling-context tree: calls, wall and on-CPU time per call path",
	.init = cct_init,
	.on_call = cct_on_call,
	.on_return = cct_on_return,
	.merge = cct_merge,
	.lower_bounds = AN_LOST_CALLS,
	.free = cct_free,
};

void cct__own_times(const struct cct_tree *t, const struct an_ctx *ctx, int64_t *self,
		    int64_t *incl)
{
	int64_t *aincl = incl; /* the aftermath inside each context, first */
	uint32_t id;

	memset(self, 0, (size_t)t->n * sizeof(*self));
	memset(aincl, 0, (size_t)t->n * sizeof(*aincl));
	/* children have larger ids than their parents: one pass upwards */
	for (id = t->n; id-- > 1;) {
		const struct cct_node *n = cct__node(t, id);
		int64_t in = 0, out = 0;

		if (ctx->aft_in && n->fid < ctx->nfuncs) {
			in = (int64_t)(n->calls * ctx->aft_in[n->fid]);
			out = (int64_t)(n->calls * ctx->aft_out[n->fid]);
		}
		self[id] += in;
		aincl[id] += in;
		self[n->parent] += out;
		aincl[n->parent] += aincl[id] + out;
	}
	for (id = 0; id < t->n; id++) {
		const struct cct_node *n = cct__node(t, id);

		self[id] = (int64_t)an_ctx__sampled_ns(ctx, n->samples_self) - self[id];
		incl[id] = (int64_t)an_ctx__sampled_ns(ctx, n->samples_incl) - aincl[id];
	}
}

uint32_t cct__carry_times(const struct cct_tree *t, const struct an_ctx *ctx, const int64_t *own,
			  uint64_t *self, uint64_t *incl, bool *unknown)
{
	uint32_t id, nunknown = 0;

	for (id = 0; id < t->n; id++) {
		const struct cct_node *n = cct__node(t, id);
		/* by how much the aftermath taken out exceeds the samples */
		uint64_t over = own[id] < 0 ? (uint64_t)-own[id] : 0;
		bool unk = over > an_ctx__sampled_err95_ns(ctx, n->samples_self);

		self[id] = incl[id] = own[id] > 0 ? (uint64_t)own[id] : 0;
		if (unknown)
			unknown[id] = unk;
		nunknown += id && unk;
	}
	/* children have larger ids than their parents: one pass upwards */
	for (id = t->n; id-- > 1;)
		incl[cct__node(t, id)->parent] += incl[id];
	return nunknown;
}

int cct__shown_times(const struct cct_tree *t, const struct an_ctx *ctx, uint64_t **self,
		     uint64_t **incl, bool **unknown, uint32_t *nunknown)
{
	size_t n = (size_t)t->n + 1; /* never 0 bytes */
	int64_t *own = malloc(n * sizeof(*own)), *scratch = malloc(n * sizeof(*scratch));
	uint64_t *s = malloc(n * sizeof(*s)), *in = malloc(n * sizeof(*in));
	bool *unk = unknown ? malloc(n * sizeof(*unk)) : NULL;
	uint32_t k;
	int err = 0;

	if (!own || !scratch || !s || !in || (unknown && !unk)) {
		free(s);
		free(in);
		free(unk);
		err = -ENOMEM;
		goto cleanup;
	}
	cct__own_times(t, ctx, own, scratch);
	k = cct__carry_times(t, ctx, own, s, in, unk);
	*self = s;
	*incl = in;
	if (unknown)
		*unknown = unk;
	if (nunknown)
		*nunknown = k;
cleanup:
	free(own);
	free(scratch);
	return err;
}
