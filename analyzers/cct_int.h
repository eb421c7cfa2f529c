/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The calling-context tree analyzer's state, shared by its files (not a
 * public API; the model is described in cct.h):
 *   cct.c         the trees, the analyzer's callbacks, the queries;
 *   cct_walk.c    the depth-first walk the reports and views share
 *                 (cct.h: user/report/flame.c walks it too);
 * and its section of the report (user/report/sec_cct.c: compensated
 * times, the text and JSON), which reads a merged instance after the run.
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


/* cct.c */
/* Takes cpu_time and probe_ns from the caller's options (decided after
 * the analyzers were made). */
void cct__refresh_opts(struct cct *g);


#endif
