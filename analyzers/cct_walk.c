// SPDX-License-Identifier: BSD-2-Clause
/*
 * The calling-context tree walked depth first, children in name or
 * inclusive-time order (the reports' and the views' order). cct_int.h
 * lists the analyzer's files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/analyzer.h"
#include "analyzers/cct_int.h"

/* ---------------------------------------------------------- walking -- */

struct sort_ctx {
	const struct cct_tree *t;
	const struct an_ctx *names; /* name order; NULL: inclusive time order */
	const uint64_t *weight;	    /* that time by node id; NULL: incl_ns */
};

static int cmp_child(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *sc = arg;
	uint32_t ix = *(const uint32_t *)a, iy = *(const uint32_t *)b;
	const struct cct_node *x = cct__node(sc->t, ix);
	const struct cct_node *y = cct__node(sc->t, iy);

	if (sc->names) {
		char b1[24], b2[24];
		int r = strcmp(an_ctx__name(sc->names, x->fid, b1),
			       an_ctx__name(sc->names, y->fid, b2));

		if (r)
			return r;
	} else {
		uint64_t wx = sc->weight ? sc->weight[ix] : x->incl_ns;
		uint64_t wy = sc->weight ? sc->weight[iy] : y->incl_ns;

		if (wx != wy)
			return wx > wy ? -1 : 1;
		if (x->calls != y->calls)
			return x->calls > y->calls ? -1 : 1;
	}
	return x->fid < y->fid ? -1 : x->fid > y->fid;
}

void cct_walk__fini(struct cct_walk *w)
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
int cct_walk__push(struct cct_walk *w, uint32_t id)
{
	const struct cct_node *p = cct__node(w->t, id);
	struct cct_walk_lvl *l;
	uint32_t c, k = 0;

	if (w->depth == w->cap) {
		uint32_t nc = w->cap ? w->cap * 2 : 32;
		struct cct_walk_lvl *v = realloc(w->lv, nc * sizeof(*v));

		if (!v)
			return -ENOMEM;
		w->lv = v;
		w->cap = nc;
	}
	l = &w->lv[w->depth];
	*l = (struct cct_walk_lvl){.node = id};
	if (p->nchild) {
		struct sort_ctx sc = {.t = w->t, .names = w->names, .weight = w->weight};

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
uint32_t cct_walk__next(struct cct_walk *w, uint32_t *depth, void (*leave)(void *, uint32_t),
			  void *arg)
{
	while (w->depth) {
		struct cct_walk_lvl *l = &w->lv[w->depth - 1];

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
