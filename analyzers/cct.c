// SPDX-License-Identifier: BSD-2-Clause
/* The calling-context tree analyzer; the model is described in cct.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/analyzer.h"
#include "analyzers/cct.h"
#include "common/hmap.h"
#include "common/json.h"
#include "common/xml.h"
#include "common/log.h"

#define CHUNK_NODES (1u << CCT_CHUNK_SHIFT)
#define WIDE_KEY(parent, fid) ((uint64_t)(parent) << 32 | (fid))

/* How a live frame maps to its node. */
enum {
	PE_OWN = 0,    /* its own node */
	PE_SAME = 1,   /* collapsed direct recursion: its caller's node */
	PE_FOLDED = 2, /* node cap reached: folded into its caller's node */
};

struct pent {
	uint32_t node;
	uint32_t how; /* PE_* */
};

struct cct_thread {
	struct cct_tree t;
	struct pent *path; /* path[i]: node of the shadow stack's frame i */
	uint32_t pdepth;   /* valid entries of path */
	uint32_t pcap;
	uint32_t gen; /* the shadow stack generation path follows */
};

struct cct {
	const struct an_ctx *ctx;
	struct cct_opts o;
	struct hmap threads;	 /* tid -> struct cct_thread * */
	struct cct_thread *last; /* the previous event's thread */
	uint64_t nnodes;	 /* over every thread of this instance */
	uint64_t folded;	 /* calls folded (cap) */
	uint64_t nomem;
	struct cct_tree *merged;    /* built after the run */
	struct cct_thread **sorted; /* threads by tid, for reports */
	size_t nsorted;
};

/* ------------------------------------------------------------ trees -- */

static void tree_fini(struct cct_tree *t)
{
	uint32_t i;

	if (!t)
		return;
	for (i = 0; i < t->nchunks; i++)
		free(t->chunk[i]);
	free(t->chunk);
	hmap__fini(&t->wide);
	memset(t, 0, sizeof(*t));
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
	}
	free(map);
	return err ? err : nomem ? -ENOMEM : 0;
}

static uint64_t tree_bytes(const struct cct_tree *t)
{
	return (uint64_t)t->nchunks * CHUNK_NODES * sizeof(struct cct_node) +
	       (uint64_t)t->capchunks * sizeof(void *) +
	       (uint64_t)t->wide.cap * (sizeof(struct hmap_ent) + 1);
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
	return 0;
}

static void thread_free(struct cct_thread *t)
{
	if (!t)
		return;
	tree_fini(&t->t);
	free(t->path);
	free(t);
}

static void cct_free(void *state)
{
	struct cct *g = state;
	struct hmap_ent *e;
	size_t it = 0;

	if (!g)
		return;
	while (hmap__next(&g->threads, &it, &e))
		thread_free((struct cct_thread *)(uintptr_t)e->val);
	hmap__fini(&g->threads);
	if (g->merged)
		tree_fini(g->merged);
	free(g->merged);
	free(g->sorted);
	free(g);
}

static struct cct_thread *thread_get(struct cct *g, uint32_t tid)
{
	struct cct_thread *t;
	uint64_t *v;

	if (g->last && g->last->t.tid == tid)
		return g->last;
	if (hmap__upsert(&g->threads, tid, &v))
		return NULL;
	if (!*v) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL; /* an empty slot reads as absent */
		if (tree_init(&t->t, tid)) {
			free(t);
			return NULL;
		}
		g->nnodes++;
		*v = (uint64_t)(uintptr_t)t;
	}
	g->last = (struct cct_thread *)(uintptr_t)*v;
	return g->last;
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
 * found, not made: their calls were counted when they were made.
 */
static int resync(struct cct *g, struct cct_thread *t, const struct shadow_frame *f, uint32_t n,
		  uint32_t gen)
{
	uint32_t i;

	if (path_reserve(t, n + 1))
		return -ENOMEM;
	for (i = 0; i < n; i++)
		t->path[i] = map_frame(g, t, i ? &t->path[i - 1] : NULL, f[i].fid, false);
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
	if (pe.how == PE_OWN) {
		n->incl_ns += r->incl_ns;
		n->cpu_incl_ns += r->cpu_incl_ns;
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
	while (hmap__next(&s->threads, &it, &e)) {
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

	if (g->sorted && g->nsorted == hmap__len(&g->threads))
		return 0;
	free(g->sorted);
	g->nsorted = 0;
	g->sorted = malloc((hmap__len(&g->threads) + 1) * sizeof(*g->sorted));
	if (!g->sorted)
		return -ENOMEM;
	while (hmap__next(&g->threads, &it, &e))
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
	while (hmap__next(&g->threads, &it, &e)) {
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
static void refresh_opts(struct cct *g)
{
	if (g->ctx->cct) {
		g->o.cpu_time = g->ctx->cct->cpu_time;
		g->o.probe_ns = g->ctx->cct->probe_ns;
	}
}

/*
 * Compensated times (cct_opts.probe_ns): a context's wall time holds the
 * probes of every traced call below it. below[id] is what those cost for
 * node id's subtree (its own calls excepted), direct[id] the same for its
 * children's calls only, so
 *   compensated inclusive = incl - below,  compensated self = self - direct
 * (a child's probes run between its parent's entry and return: inside the
 * parent's time, partly inside the child's own, and the split does not
 * matter for either figure). Nodes are made after their parent, so one
 * pass from the last id down adds every subtree up. Both NULL when the
 * cost was not measured.
 */
struct comp {
	double *below, *direct;
};

static int comp_build(const struct cct *g, const struct cct_tree *t, struct comp *c)
{
	uint32_t id;

	c->below = c->direct = NULL;
	if (!g->o.probe_ns || !t->n)
		return 0;
	c->below = calloc(t->n, sizeof(*c->below));
	c->direct = calloc(t->n, sizeof(*c->direct));
	if (!c->below || !c->direct) {
		free(c->below);
		free(c->direct);
		c->below = c->direct = NULL;
		return -ENOMEM;
	}
	for (id = t->n; id-- > 1;) {
		const struct cct_node *n = cct__node(t, id);
		double cost = n->fid < g->ctx->nfuncs
				      ? g->o.probe_ns[n->fid] * (double)(n->calls + n->folded)
				      : 0;

		if (n->parent >= id)
			continue; /* never: a node is made after its parent */
		c->direct[n->parent] += cost;
		c->below[n->parent] += cost + c->below[id];
	}
	return 0;
}

static void comp_free(struct comp *c)
{
	free(c->below);
	free(c->direct);
}

/* x - sub, not below 0 (a compensation larger than the time measured:
 * the cost varies around its measured mean). */
static uint64_t minus(uint64_t x, double sub)
{
	return (double)x > sub ? (uint64_t)((double)x - sub) : 0;
}

const struct cct_opts *cct__opts(void *state)
{
	refresh_opts(state);
	return &((const struct cct *)state)->o;
}

const struct an_ctx *cct__ctx(const void *state)
{
	return ((const struct cct *)state)->ctx;
}

/* ---------------------------------------------------------- walking -- */

struct sort_ctx {
	const struct cct_tree *t;
	const struct an_ctx *names; /* name order; NULL: inclusive time order */
};

static int cmp_child(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *sc = arg;
	const struct cct_node *x = cct__node(sc->t, *(const uint32_t *)a);
	const struct cct_node *y = cct__node(sc->t, *(const uint32_t *)b);

	if (sc->names) {
		char b1[24], b2[24];
		int r = strcmp(an_ctx__name(sc->names, x->fid, b1),
			       an_ctx__name(sc->names, y->fid, b2));

		if (r)
			return r;
	} else {
		if (x->incl_ns != y->incl_ns)
			return x->incl_ns > y->incl_ns ? -1 : 1;
		if (x->calls != y->calls)
			return x->calls > y->calls ? -1 : 1;
	}
	return x->fid < y->fid ? -1 : x->fid > y->fid;
}

/* One level of an iterative depth-first walk: node's sorted children. */
struct walk_lvl {
	uint32_t node;
	uint32_t *kids;
	uint32_t n, i;
};

struct walk {
	const struct cct_tree *t;
	const struct an_ctx *names; /* children in name order; NULL: by time */
	struct walk_lvl *lv;
	uint32_t depth, cap;
};

static void walk_fini(struct walk *w)
{
	uint32_t i;

	for (i = 0; i < w->depth; i++)
		free(w->lv[i].kids);
	free(w->lv);
	w->lv = NULL;
	w->depth = w->cap = 0;
}

/* Go below node id: its children become the next level (also when it has
 * none, so every node pushed is reported to walk_next's leave). Returns 0
 * or -ENOMEM. */
static int walk_push(struct walk *w, uint32_t id)
{
	const struct cct_node *p = cct__node(w->t, id);
	struct walk_lvl *l;
	uint32_t c, k = 0;

	if (w->depth == w->cap) {
		uint32_t nc = w->cap ? w->cap * 2 : 32;
		struct walk_lvl *v = realloc(w->lv, nc * sizeof(*v));

		if (!v)
			return -ENOMEM;
		w->lv = v;
		w->cap = nc;
	}
	l = &w->lv[w->depth];
	*l = (struct walk_lvl){.node = id};
	if (p->nchild) {
		struct sort_ctx sc = {.t = w->t, .names = w->names};

		l->kids = malloc(p->nchild * sizeof(*l->kids));
		if (!l->kids)
			return -ENOMEM;
		for (c = p->child; c != CCT_NONE && k < p->nchild; c = cct__node(w->t, c)->sibling)
			l->kids[k++] = c;
		l->n = k;
		qsort_r(l->kids, k, sizeof(*l->kids), cmp_child, &sc);
	}
	w->depth++;
	return 0;
}

/* The next node (its depth in *depth: 1 for a child of the root), or
 * CCT_NONE at the end. leave, if not NULL, is told of every pushed node
 * whose subtree is done, innermost first. */
static uint32_t walk_next(struct walk *w, uint32_t *depth, void (*leave)(void *, uint32_t),
			  void *arg)
{
	while (w->depth) {
		struct walk_lvl *l = &w->lv[w->depth - 1];

		if (l->i < l->n) {
			*depth = w->depth;
			return l->kids[l->i++];
		}
		free(l->kids);
		w->depth--;
		if (leave)
			leave(arg, l->node);
	}
	return CCT_NONE;
}

/* ------------------------------------------------------------ reports -- */

struct fn_row {
	uint32_t fid;
	uint64_t calls, incl, self, cpu_incl, cpu_self;
	uint64_t missing, unwound;
};

struct rows_ctx {
	const struct cct_tree *t;
	uint32_t *active; /* [nfuncs]: nodes of fid on the walk's path */
	uint32_t nfuncs;
};

static void rows_leave(void *arg, uint32_t id)
{
	struct rows_ctx *rc = arg;
	uint32_t fid = cct__node(rc->t, id)->fid;

	if (fid < rc->nfuncs && rc->active[fid])
		rc->active[fid]--;
}

/*
 * Per-function figures of a tree: calls and self times summed over the
 * function's contexts, inclusive times over its outermost contexts only (a
 * context below another of the same function is inside its time). Returns
 * the rows of called functions (caller frees), their number in *n; NULL
 * on ENOMEM.
 */
static struct fn_row *fn_rows(const struct cct_tree *t, uint32_t nfuncs, size_t *n)
{
	struct fn_row *rows = calloc((size_t)nfuncs + 1, sizeof(*rows));
	struct rows_ctx rc = {.t = t, .nfuncs = nfuncs};
	struct walk w = {.t = t};
	uint32_t id, d, i;
	size_t k = 0;

	rc.active = calloc((size_t)nfuncs + 1, sizeof(*rc.active));
	if (!rows || !rc.active || walk_push(&w, 0))
		goto nomem;
	while ((id = walk_next(&w, &d, rows_leave, &rc)) != CCT_NONE) {
		const struct cct_node *nd = cct__node(t, id);

		if (nd->fid < nfuncs) {
			struct fn_row *r = &rows[nd->fid];

			r->calls += nd->calls;
			r->self += nd->self_ns;
			r->cpu_self += nd->cpu_self_ns;
			r->missing += nd->missing;
			r->unwound += nd->unwound;
			if (!rc.active[nd->fid]) {
				r->incl += nd->incl_ns;
				r->cpu_incl += nd->cpu_incl_ns;
			}
			rc.active[nd->fid]++;
		}
		if (walk_push(&w, id))
			goto nomem;
	}
	walk_fini(&w);
	for (i = 0; i < nfuncs; i++) {
		if (!rows[i].calls && !rows[i].self)
			continue;
		rows[k] = rows[i];
		rows[k].fid = i;
		k++;
	}
	free(rc.active);
	*n = k;
	return rows;
nomem:
	walk_fini(&w);
	free(rows);
	free(rc.active);
	return NULL;
}

static int cmp_row(const void *a, const void *b, void *arg)
{
	const struct fn_row *x = a, *y = b;
	enum cct_sort how = *(const enum cct_sort *)arg;
	uint64_t kx, ky;

	switch (how) {
	case CCT_SORT_CALLS:
		kx = x->calls, ky = y->calls;
		break;
	case CCT_SORT_SELF:
		kx = x->self, ky = y->self;
		break;
	case CCT_SORT_CPU:
		kx = x->cpu_incl, ky = y->cpu_incl;
		break;
	default:
		kx = x->incl, ky = y->incl;
		break;
	}
	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return x->fid < y->fid ? -1 : x->fid > y->fid;
}

static const char *const sort_names[] = {"total", "calls", "self", "cpu"};

/* Milliseconds, or "-" when on-CPU time was not measured. */
static void ms_col(FILE *f, uint64_t ns, bool have)
{
	if (have)
		fprintf(f, " %11.3f", (double)ns / 1e6);
	else
		fprintf(f, " %11s", "-");
}

static void print_row_tail(FILE *f, const struct cct *g, uint32_t fid, uint64_t missing,
			   uint64_t unwound, uint64_t folded)
{
	char b[24];

	fprintf(f, "  %s", an_ctx__name(g->ctx, fid, b));
	if (missing || unwound || folded) {
		fputs("  [", f);
		if (missing)
			fprintf(f, "%" PRIu64 " without return", missing);
		if (unwound)
			fprintf(f, "%s%" PRIu64 " unwound", missing ? ", " : "", unwound);
		if (folded)
			fprintf(f, "%s+%" PRIu64 " folded calls", missing || unwound ? ", " : "",
				folded);
		fputc(']', f);
	}
	fputc('\n', f);
}

/* The tree view: contexts depth-first, heaviest first, indented. */
static int report_tree(struct cct *g, const struct cct_tree *t, FILE *f)
{
	const struct cct_node *root = cct__node(t, 0);
	struct walk w = {.t = t};
	uint64_t total = 0, hidden = 0;
	bool cpu = g->o.cpu_time;
	struct comp cp;
	uint32_t id, d, c;

	for (c = root->child; c != CCT_NONE; c = cct__node(t, c)->sibling)
		total += cct__node(t, c)->incl_ns;
	fprintf(f, "calling-context tree: %" PRIu32 " contexts, %zu thread%s (merged)", t->n - 1,
		g->nsorted, g->nsorted == 1 ? "" : "s");
	if (g->o.depth)
		fprintf(f, ", %u levels", g->o.depth);
	if (g->o.min_pct > 0)
		fprintf(f, ", contexts under %.2f%% of the total time hidden", g->o.min_pct);
	fputc('\n', f);
	if (comp_build(g, t, &cp))
		return -ENOMEM;
	fprintf(f, "%8s %11s %11s %11s %11s", "TOTAL%", "TOTAL_MS", "SELF_MS", "CPU_MS",
		"CPU_SELF_MS");
	if (cp.below)
		fprintf(f, " %11s %11s", "COMP_MS", "COMP_SELF");
	fprintf(f, " %12s  %s\n", "CALLS", "CONTEXT");
	if (walk_push(&w, 0))
		goto nomem;
	while ((id = walk_next(&w, &d, NULL, NULL)) != CCT_NONE) {
		const struct cct_node *n = cct__node(t, id);
		double pct = total ? 100.0 * (double)n->incl_ns / (double)total : 0;
		uint32_t i;

		/* Children come heaviest first: a hidden one hides the rest
		 * of its level too, unless times are all zero (--no-times). */
		if (total && pct < g->o.min_pct) {
			hidden++;
			continue;
		}
		fprintf(f, "%7.2f%% %11.3f %11.3f", pct, (double)n->incl_ns / 1e6,
			(double)n->self_ns / 1e6);
		ms_col(f, n->cpu_incl_ns, cpu);
		ms_col(f, n->cpu_self_ns, cpu);
		if (cp.below) {
			ms_col(f, minus(n->incl_ns, cp.below[id]), true);
			ms_col(f, minus(n->self_ns, cp.direct[id]), true);
		}
		fputc(' ', f);
		an__put_u64(f, 12, n->calls, an_ctx__lb(g->ctx, AN_LOST_CALLS));
		fputc(' ', f);
		for (i = 1; i < d; i++)
			fputs("  ", f);
		print_row_tail(f, g, n->fid, n->missing, n->unwound, n->folded);
		if ((!g->o.depth || d < g->o.depth) && walk_push(&w, id))
			goto nomem;
	}
	walk_fini(&w);
	comp_free(&cp);
	if (hidden)
		fprintf(f,
			"  ... %" PRIu64 " contexts below the thresholds (--depth, --min-pct; the "
			"JSON report and --folded have all)\n",
			hidden);
	return 0;
nomem:
	walk_fini(&w);
	comp_free(&cp);
	return -ENOMEM;
}

static int report_functions(struct cct *g, const struct cct_tree *t, FILE *f)
{
	struct fn_row *rows;
	size_t n = 0, i;

	rows = fn_rows(t, g->ctx->nfuncs, &n);
	if (!rows)
		return -ENOMEM;
	qsort_r(rows, n, sizeof(*rows), cmp_row, &g->o.sort);
	fprintf(f, "functions by %s (from the tree; -s calls|total|self|cpu)\n",
		sort_names[g->o.sort <= CCT_SORT_CPU ? g->o.sort : 0]);
	fprintf(f, "%12s %11s %11s %11s %11s  %s\n", "CALLS", "TOTAL_MS", "SELF_MS", "CPU_MS",
		"CPU_SELF_MS", "FUNCTION");
	for (i = 0; i < n && i < g->ctx->top; i++) {
		an__put_u64(f, 12, rows[i].calls, an_ctx__lb(g->ctx, AN_LOST_CALLS));
		fprintf(f, " %11.3f %11.3f", (double)rows[i].incl / 1e6, (double)rows[i].self / 1e6);
		ms_col(f, rows[i].cpu_incl, g->o.cpu_time);
		ms_col(f, rows[i].cpu_self, g->o.cpu_time);
		print_row_tail(f, g, rows[i].fid, rows[i].missing, rows[i].unwound, 0);
	}
	if (n > g->ctx->top)
		fprintf(f, "  ... %zu more functions (the JSON report has all)\n", n - g->ctx->top);
	free(rows);
	return 0;
}

static int cct_report_text(void *state, FILE *f)
{
	struct cct *g = state;
	const struct cct_tree *t = cct__merged(g);
	struct cct_memory m;
	int err;

	if (!t)
		return -ENOMEM;
	refresh_opts(g);
	err = report_tree(g, t, f);
	if (!err) {
		fputc('\n', f);
		err = report_functions(g, t, f);
	}
	if (err)
		return err;
	cct__memory(g, &m);
	fprintf(f,
		"times: wall times include the probes' own cost (every traced call below a "
		"context adds its entry and return probe hits: see the plan line on stderr)%s; "
		"%s\n",
		g->o.probe_ns ? "; COMP_MS and COMP_SELF subtract the cost measured at start-up "
				"for the calls below (stderr: probe cost per traced call)"
			      : "",
		g->o.cpu_time ? "on-CPU times leave out the threads' off-CPU intervals "
				"(scheduler switches)"
			      : "on-CPU times not measured (--no-times, or the sched_switch "
				"tracepoint was refused)");
	fprintf(f, "tree memory: %" PRIu64 " nodes, %" PRIu64 " bytes (%.0f bytes/node)", m.nodes,
		m.bytes, m.nodes ? (double)m.bytes / (double)m.nodes : 0.0);
	if (m.folded_calls)
		fprintf(f,
			"; WARNING: node cap %" PRIu32 " reached: %" PRIu64
			" calls folded into their caller's context (--cct-max-nodes)",
			m.max_nodes, m.folded_calls);
	if (m.nomem)
		fprintf(f, "; WARNING: %" PRIu64 " events not recorded (out of memory)", m.nomem);
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

/* One node as JSON, without its children's closing (the walk closes). */
static void json_node(struct json *w, const struct cct *g, const struct cct_tree *t, uint32_t id,
		      const struct comp *cp)
{
	const struct cct_node *n = cct__node(t, id);
	char b[24];

	json__begin_object(w);
	json__key(w, "name");
	json__string(w, an_ctx__name(g->ctx, n->fid, b));
	json__key(w, "calls");
	json__u64(w, n->calls);
	json__key(w, "incl_ns");
	json__u64(w, n->incl_ns);
	json__key(w, "self_ns");
	json__u64(w, n->self_ns);
	json__key(w, "cpu_incl_ns");
	if (g->o.cpu_time)
		json__u64(w, n->cpu_incl_ns);
	else
		json__null(w);
	json__key(w, "cpu_self_ns");
	if (g->o.cpu_time)
		json__u64(w, n->cpu_self_ns);
	else
		json__null(w);
	if (cp->below) {
		json__key(w, "incl_ns_comp");
		json__u64(w, minus(n->incl_ns, cp->below[id]));
		json__key(w, "self_ns_comp");
		json__u64(w, minus(n->self_ns, cp->direct[id]));
		/* the probes run on the CPU: the same cost comes off */
		if (g->o.cpu_time) {
			json__key(w, "cpu_incl_ns_comp");
			json__u64(w, minus(n->cpu_incl_ns, cp->below[id]));
			json__key(w, "cpu_self_ns_comp");
			json__u64(w, minus(n->cpu_self_ns, cp->direct[id]));
		}
	}
	if (n->missing) {
		json__key(w, "missing");
		json__u64(w, n->missing);
	}
	if (n->unwound) {
		json__key(w, "unwound");
		json__u64(w, n->unwound);
	}
	if (n->folded) {
		json__key(w, "folded");
		json__u64(w, n->folded);
	}
	json__key(w, "children");
	json__begin_array(w);
}

static void json_leave(void *arg, uint32_t id)
{
	(void)id;
	json__end_array(arg);
	json__end_object(arg);
}

/* The whole tree, nested, children heaviest first. */
static int json_tree(struct json *w, const struct cct *g, const struct cct_tree *t)
{
	struct walk wk = {.t = t};
	struct comp cp;
	uint32_t id, d;

	if (comp_build(g, t, &cp))
		return -ENOMEM;
	json_node(w, g, t, 0, &cp);
	if (walk_push(&wk, 0)) {
		comp_free(&cp);
		return -ENOMEM;
	}
	while ((id = walk_next(&wk, &d, json_leave, w)) != CCT_NONE) {
		json_node(w, g, t, id, &cp);
		if (walk_push(&wk, id)) {
			walk_fini(&wk);
			comp_free(&cp);
			return -ENOMEM;
		}
	}
	walk_fini(&wk);
	comp_free(&cp);
	return 0;
}

static int cct_report_json(void *state, struct json *w)
{
	struct cct *g = state;
	const struct cct_tree *t = cct__merged(g);
	struct cct_memory m;
	size_t i;
	int err;

	if (!t)
		return -ENOMEM;
	refresh_opts(g);
	json__key(w, "cct");
	err = json_tree(w, g, t);
	if (err)
		return err;
	json__key(w, "cct_threads");
	json__begin_object(w);
	for (i = 0; i < g->nsorted; i++) {
		json__key_u64(w, g->sorted[i]->t.tid);
		err = json_tree(w, g, &g->sorted[i]->t);
		if (err)
			return err;
	}
	json__end_object(w);
	cct__memory(g, &m);
	json__key(w, "cct_info");
	json__begin_object(w);
	json__key(w, "nodes");
	json__u64(w, m.nodes);
	json__key(w, "merged_nodes");
	json__u64(w, t->n);
	json__key(w, "bytes");
	json__u64(w, m.bytes);
	json__key(w, "max_nodes");
	json__u64(w, m.max_nodes);
	json__key(w, "folded_calls");
	json__u64(w, m.folded_calls);
	json__key(w, "nomem");
	json__u64(w, m.nomem);
	json__key(w, "collapse_recursion");
	json__bool(w, g->o.collapse_recursion);
	json__key(w, "cpu_time");
	json__bool(w, g->o.cpu_time);
	json__key(w, "wall_includes_probe_cost");
	json__bool(w, true);
	return json__end_object(w);
}

/* -------------------------------------------------------------- views -- */

static uint64_t metric_of(const struct cct_node *n, enum cct_metric m)
{
	switch (m) {
	case CCT_METRIC_CALLS:
		return n->calls;
	case CCT_METRIC_CPU:
		return n->cpu_self_ns;
	default:
		return n->self_ns;
	}
}

/* A name for folded stacks: ';' separates frames and a line ends at '\n',
 * so neither may appear in a frame. */
static void put_folded_name(char *dst, const char *src)
{
	for (; *src; src++, dst++)
		*dst = *src == ';' ? ':' : *src == '\n' || *src == '\r' ? ' ' : *src;
	*dst = 0;
}

int cct__write_folded(FILE *f, const struct cct_tree *t, const struct an_ctx *ctx,
		      enum cct_metric metric)
{
	struct walk w = {.t = t, .names = ctx};
	size_t *off = NULL, cap = 4096, len, ocap = 64;
	char *buf = malloc(cap), b[24];
	uint32_t id, d;
	int err = -ENOMEM;

	off = malloc(ocap * sizeof(*off));
	if (!buf || !off || walk_push(&w, 0))
		goto cleanup;
	off[0] = 0;
	while ((id = walk_next(&w, &d, NULL, NULL)) != CCT_NONE) {
		const struct cct_node *n = cct__node(t, id);
		const char *name = an_ctx__name(ctx, n->fid, b);
		uint64_t v = metric_of(n, metric);

		if (d + 1 >= ocap) {
			size_t *no = realloc(off, 2 * ocap * sizeof(*off));

			if (!no)
				goto cleanup;
			off = no;
			ocap *= 2;
		}
		len = off[d - 1];
		while (len + strlen(name) + 2 > cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				goto cleanup;
			buf = nb;
			cap *= 2;
		}
		if (d > 1)
			buf[len++] = ';';
		put_folded_name(buf + len, name);
		off[d] = len + strlen(buf + len);
		if (v)
			fprintf(f, "%.*s %" PRIu64 "\n", (int)off[d], buf, v);
		if (walk_push(&w, id))
			goto cleanup;
	}
	err = ferror(f) ? -EIO : 0;
cleanup:
	walk_fini(&w);
	free(buf);
	free(off);
	return err;
}

/* FlameGraph's "hot" palette, chosen by the name so that a function keeps
 * its colour across graphs. */
static void frame_colour(const char *name, unsigned rgb[3])
{
	uint64_t h = 1469598103934665603ULL;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ULL;
	rgb[0] = 205 + (unsigned)(h % 51);
	rgb[1] = (unsigned)((h >> 8) % 231);
	rgb[2] = (unsigned)((h >> 16) % 56);
}

/* A frame's label: its name without the library's "libc:" prefix, which
 * would take a narrow frame's few characters ("li.."); the tooltip keeps
 * the whole name. A prefix is what precedes the first ':' not part of a
 * "::" (C++ and Rust scopes start no prefix). */
static const char *frame_label(const char *name)
{
	size_t n = strcspn(name, ":<( ");

	return n && name[n] == ':' && name[n + 1] != ':' && name[n + 1] ? name + n + 1 : name;
}

#define SVG_W 1200
#define SVG_PAD 10
#define SVG_FRAME_H 16
#define SVG_TOP 52
#define SVG_CHAR_W 7.0 /* 12 px Verdana, average */
#define SVG_MIN_W 0.1  /* px: narrower frames are left out */

static void svg_frame(FILE *f, const struct cct_tree *t, const struct an_ctx *ctx, uint32_t id,
		      double x, double y, double wpx, uint64_t width, uint64_t total,
		      enum cct_metric metric, bool cpu_time)
{
	const struct cct_node *n = cct__node(t, id);
	const char *name = id ? an_ctx__name(ctx, n->fid, (char[24]){0}) : "all";
	struct cct_node all;
	uint32_t c;

	if (!id) {
		/* The root has no activations: show its children's sums. */
		all = *n;
		for (c = n->child; c != CCT_NONE; c = cct__node(t, c)->sibling) {
			all.calls += cct__node(t, c)->calls;
			all.incl_ns += cct__node(t, c)->incl_ns;
			all.cpu_incl_ns += cct__node(t, c)->cpu_incl_ns;
		}
		n = &all;
	}
	static const char *const unit[] = {"wall ns", "calls", "on-CPU ns"};
	unsigned rgb[3];
	size_t fit;

	if (id)
		frame_colour(name, rgb);
	else
		rgb[0] = 250, rgb[1] = 120, rgb[2] = 80;
	fputs("<g><title>", f);
	xml__escape(f, name, SIZE_MAX);
	fprintf(f, " (%.2f%% of %s)\ncalls: %" PRIu64 "\nwall: total %.3f ms, self %.3f ms",
		total ? 100.0 * (double)width / (double)total : 0.0,
		unit[metric <= CCT_METRIC_CPU ? metric : 0], n->calls, (double)n->incl_ns / 1e6,
		(double)n->self_ns / 1e6);
	if (cpu_time)
		fprintf(f, "\non-CPU: total %.3f ms, self %.3f ms", (double)n->cpu_incl_ns / 1e6,
			(double)n->cpu_self_ns / 1e6);
	if (n->missing || n->unwound || n->folded)
		fprintf(f,
			"\nwithout return: %" PRIu32 ", unwound: %" PRIu32
			", folded calls: %" PRIu32,
			n->missing, n->unwound, n->folded);
	fprintf(f,
		"</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
		"fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/>",
		x, y, wpx, SVG_FRAME_H - 1, rgb[0], rgb[1], rgb[2]);
	fit = wpx > 3 * SVG_CHAR_W ? (size_t)((wpx - 6) / SVG_CHAR_W) : 0;
	name = id ? frame_label(name) : name;
	if (fit >= 2) {
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + SVG_FRAME_H - 4.5);
		if (strlen(name) <= fit) {
			xml__escape(f, name, SIZE_MAX);
		} else {
			xml__escape(f, name, fit - 2);
			fputs("..", f);
		}
		fputs("</text>", f);
	}
	fputs("</g>\n", f);
}

int cct__write_svg(FILE *f, const struct cct_tree *t, const struct an_ctx *ctx,
		   enum cct_metric metric, bool cpu_time, const char *title)
{
	uint64_t *width = calloc((size_t)t->n + 1, sizeof(*width));
	uint32_t *depth = calloc((size_t)t->n + 1, sizeof(*depth));
	double *xcur = NULL, scale, wpx;
	struct walk w = {.t = t, .names = ctx};
	uint32_t id, d, maxd = 0, skipped = 0, shown = 0;
	size_t xcap = 64;
	int err = -ENOMEM, height;

	xcur = malloc(xcap * sizeof(*xcur));
	if (!width || !depth || !xcur)
		goto cleanup;
	/* Widths as flamegraph.pl gets them from the folded lines: a
	 * frame's own value plus its children's widths (children have larger
	 * ids, so one pass downwards sums them). */
	for (id = t->n; id-- > 1;) {
		width[id] += metric_of(cct__node(t, id), metric);
		width[cct__node(t, id)->parent] += width[id];
	}
	width[0] += metric_of(cct__node(t, 0), metric);
	scale = width[0] ? (double)(SVG_W - 2 * SVG_PAD) / (double)width[0] : 0;
	for (id = 1; id < t->n; id++) {
		depth[id] = depth[cct__node(t, id)->parent] + 1;
		if ((double)width[id] * scale >= SVG_MIN_W && depth[id] > maxd)
			maxd = depth[id];
	}
	height = SVG_TOP + (int)(maxd + 1) * SVG_FRAME_H + SVG_PAD + 16;
	fprintf(f,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}"
		"rect:hover{stroke:#000;stroke-width:0.5}"
		".t{font-size:17px;text-anchor:middle}.s{fill:#555;text-anchor:middle}</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f0\"/>\n"
		"<text class=\"t\" x=\"%d\" y=\"24\">",
		SVG_W, height, SVG_W, height, SVG_W, height, SVG_W / 2);
	xml__escape(f, title ? title : "Flame Graph", SIZE_MAX);
	fputs("</text>\n", f);
	if (!width[0]) {
		fprintf(f,
			"<text class=\"s\" x=\"%d\" y=\"44\">no samples: every context's %s "
			"is 0</text>\n</svg>\n",
			SVG_W / 2, metric == CCT_METRIC_CALLS ? "call count" : "time");
		err = ferror(f) ? -EIO : 0;
		goto cleanup;
	}
	svg_frame(f, t, ctx, 0, SVG_PAD, height - SVG_PAD - 16 - SVG_FRAME_H,
		  (double)width[0] * scale, width[0], width[0], metric, cpu_time);
	xcur[0] = 0;
	xcur[1] = 0;
	if (walk_push(&w, 0))
		goto cleanup;
	while ((id = walk_next(&w, &d, NULL, NULL)) != CCT_NONE) {
		double x;

		if (d + 1 >= xcap) {
			double *nx = realloc(xcur, 2 * xcap * sizeof(*xcur));

			if (!nx)
				goto cleanup;
			xcur = nx;
			xcap *= 2;
		}
		x = xcur[d];
		xcur[d] += (double)width[id];
		wpx = (double)width[id] * scale;
		if (wpx < SVG_MIN_W) {
			skipped++;
			continue; /* and its subtree: narrower still */
		}
		shown++;
		svg_frame(f, t, ctx, id, SVG_PAD + x * scale,
			  height - SVG_PAD - 16 - (double)(d + 1) * SVG_FRAME_H, wpx, width[id],
			  width[0], metric, cpu_time);
		xcur[d + 1] = x;
		if (walk_push(&w, id))
			goto cleanup;
	}
	fprintf(f,
		"<text class=\"s\" x=\"%d\" y=\"42\">%u frames; width: %s per context (self, with "
		"the children's above it)%s; hover for calls and times</text>\n",
		SVG_W / 2, shown,
		metric == CCT_METRIC_CALLS ? "calls"
		: metric == CCT_METRIC_CPU ? "on-CPU time"
					   : "wall time",
		skipped ? ", narrow frames left out" : "");
	fputs("</svg>\n", f);
	err = ferror(f) ? -EIO : 0;
cleanup:
	walk_fini(&w);
	free(width);
	free(depth);
	free(xcur);
	return err;
}

const struct analyzer_ops analyzer_cct = {
	.name = "cct",
	.help = "calling-context tree: calls, wall and on-CPU time per call path",
	.init = cct_init,
	.on_call = cct_on_call,
	.on_return = cct_on_return,
	.merge = cct_merge,
	.report_text = cct_report_text,
	.lower_bounds = AN_LOST_CALLS,
	.report_json = cct_report_json,
	.free = cct_free,
};
