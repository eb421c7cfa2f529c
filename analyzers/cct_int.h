/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The calling-context tree analyzer's state, shared by its files (not a
 * public API; the model is described in cct.h):
 *   cct.c         the trees, the analyzer's callbacks, the queries;
 *   cct_walk.c    the depth-first walk the reports and views share;
 *   cct_report.c  compensated times, the text and JSON report;
 *   cct_flame.c   folded stacks and the SVG flame graph.
 */
#ifndef CABBPF_CCT_INT_H
#define CABBPF_CCT_INT_H


#include <stdint.h>
#include <stdio.h>

#include "analyzers/an_threads.h"
#include "analyzers/analyzer.h"
#include "analyzers/cct.h"
#include "common/hmap.h"
#include "common/json.h"

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
	struct an_threads threads; /* tid -> struct cct_thread */
	uint64_t nnodes;	 /* over every thread of this instance */
	uint64_t folded;	 /* calls folded (cap) */
	uint64_t nomem;
	struct cct_tree *merged;    /* built after the run */
	struct cct_thread **sorted; /* threads by tid, for reports */
	size_t nsorted;
	uint8_t *named; /* [nfuncs]: --hist names it (durations by context); NULL: none */
};


/* One level of an iterative depth-first walk: node's sorted children. */
struct cct_walk_lvl {
	uint32_t node;
	uint32_t *kids;
	uint32_t n, i;
};

struct cct_walk {
	const struct cct_tree *t;
	const struct an_ctx *names; /* children in name order; NULL: by time */
	/* by time: this weight by node id (--times sampled: the sampled
	 * inclusive times); NULL: the traced incl_ns */
	const uint64_t *weight;
	struct cct_walk_lvl *lv;
	uint32_t depth, cap;
};

/* cct.c */
/* Takes cpu_time and probe_ns from the caller's options (decided after
 * the analyzers were made). */
void cct__refresh_opts(struct cct *g);

/* cct_report.c: the analyzer's report_text and report_json (analyzer.h) */
int cct_report__text(void *state, FILE *f);
int cct_report__json(void *state, struct json *w);

/* cct_walk.c: a depth-first walk of w->t (set w->t and w->names, the rest
 * zero), one thread */
/* Goes below node id: its children, sorted, become the next level.
 * Returns 0 or -ENOMEM. */
int cct_walk__push(struct cct_walk *w, uint32_t id);
/* The next node of the walk (its depth in *depth), or CCT_NONE at the
 * end; leave, unless NULL, is called with each node whose subtree is
 * done. */
uint32_t cct_walk__next(struct cct_walk *w, uint32_t *depth, void (*leave)(void *, uint32_t),
			void *arg);
/* Frees the walk's levels (w stays usable for a new walk). */
void cct_walk__fini(struct cct_walk *w);

#endif
