/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The "cct" analyzer (struct analyzer_ops analyzer_cct): a calling-context
 * tree per program thread, built from the thread's exact call and return
 * sequence (the shadow stack's an_call / an_return, pipeline/shadow.h), and
 * the same trees merged over threads.
 *
 * A node is one calling context: the path of functions from the thread's
 * outermost traced frame down to it. The root (fid AN_ROOT, "<root>") has
 * the outermost traced functions of every thread as children. Per node:
 * calls, inclusive and self wall time, inclusive and self on-CPU time (the
 * thread's off-CPU intervals, from the scheduler's switch events, taken
 * out: CABBPF_EV_SCHED), and the activations that ended without a return
 * (missing: longjmp, the kernel's 64-return limit, stack switches, exec;
 * unwound: exceptions). Such activations add their time up to the event
 * that found them gone (an upper bound, the same the shadow stack charges
 * their caller), so a node's inclusive time always covers its children's;
 * frames still live when the run ends (the target exited inside them, or
 * cabbpf let go) add their time up to the thread's last event.
 *
 * Recursion is kept as it is (fib under fib under fib); with
 * cct_opts.collapse_recursion a direct recursive call (f called by f)
 * stays in its caller's node: calls and self time add up there, inclusive
 * time is that of the outermost activation.
 *
 * Memory is bounded: every analyzer instance (one per analyzer thread)
 * holds at most cct_opts.max_nodes nodes over all its threads. Past that, a
 * call whose context has no node yet is folded into its caller's node: its
 * self time adds to that node's self time, and it is counted (per node in
 * "folded", and in total): nothing is dropped silently. A node takes
 * sizeof(struct cct_node) = 80 bytes, plus a hash entry (16-17 bytes at a
 * load of 3/8 to 3/4) for each child of a node with more than
 * CCT_WIDE children; cct__memory() reports the figure of a run.
 *
 * Trees are kept per thread while the run lasts (a thread's events all
 * reach one instance, in order, so no locks); ops.merge copies them into
 * the merged instance, and the merged tree over threads is built on first
 * use after the run (cct__merged()).
 *
 * JSON keys written: "cct" (the merged tree), "cct_threads" (tid -> tree)
 * and "cct_info" (docs/json-schema.md).
 *
 * Threads: an instance is used by the analyzer thread that owns it; the
 * query functions by any one thread once the run is over.
 */
#ifndef ANALYZERS_CCT_H
#define ANALYZERS_CCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzers/analyzer.h"
#include "analyzers/latency.h"
#include "common/hmap.h"

struct an_ctx;

#define CCT_NONE UINT32_MAX		 /* no node */
#define CCT_DEFAULT_MAX_NODES (1u << 20) /* ~80 MiB per analyzer thread */
#define CCT_WIDE 8			 /* children scanned as a list; more are hashed */
#define CCT_DEFAULT_MIN_PCT 1.0

/* The per-function table's order (-s). */
enum cct_sort {
	CCT_SORT_TOTAL = 0, /* inclusive wall time (default) */
	CCT_SORT_CALLS,
	CCT_SORT_SELF,
	CCT_SORT_CPU, /* inclusive on-CPU time */
};

/* What a flame graph frame's width and a folded line's value are. */
enum cct_metric {
	CCT_METRIC_WALL = 0, /* self wall time per context, ns (default) */
	CCT_METRIC_CALLS,    /* calls per context */
	CCT_METRIC_CPU,	     /* self on-CPU time per context, ns */
	/* --times sampled: the program's own self time per context, ns
	 * (CPU-clock samples x period: an_ctx.cpu_sample_ns) */
	CCT_METRIC_SAMPLED,
	/* not given: SAMPLED when the run was sampled, else WALL
	 * (cct__metric) */
	CCT_METRIC_AUTO,
};

/* m, or for CCT_METRIC_AUTO what the run's times are (ctx). */
static inline enum cct_metric cct__metric(enum cct_metric m, const struct an_ctx *ctx)
{
	if (m != CCT_METRIC_AUTO)
		return m;
	return ctx->cpu_sample_ns ? CCT_METRIC_SAMPLED : CCT_METRIC_WALL;
}

struct cct_opts {
	uint32_t max_nodes;	 /* per analyzer instance; 0 = CCT_DEFAULT_MAX_NODES */
	bool collapse_recursion; /* direct recursion stays in one node */
	bool cpu_time;		 /* switch events were traced: on-CPU times are real */
	unsigned depth;		 /* text tree: levels shown below the root; 0 = all */
	double min_pct;		 /* text tree: hide contexts below this % of the total
				    inclusive time; < 0 = CCT_DEFAULT_MIN_PCT */
	enum cct_sort sort;	 /* the per-function table's order */
	/* Compensated times: what one probed call of each fid costs (entry and
	 * return probes, ns, measured: user/trace/calibrate.h), or NULL. Read
	 * by the reports only. */
	const double *probe_ns;
};

struct cct_node {
	uint32_t fid;			 /* AN_ROOT for the root */
	uint32_t parent, child, sibling; /* node ids, CCT_NONE when none */
	uint64_t calls;
	uint64_t incl_ns, self_ns;	   /* wall, matched activations */
	uint64_t cpu_incl_ns, cpu_self_ns; /* on-CPU, matched activations */
	/* --times sampled: CPU-clock samples, every activation (saturated:
	 * 2^32 samples are 49 days of CPU time at 1 kHz) */
	uint32_t samples_incl, samples_self;
	uint32_t missing;		   /* ended without a return (not by an exception) */
	uint32_t unwound;		   /* ended by an exception */
	uint32_t folded;		   /* calls folded into this node (node cap) */
	uint32_t nchild;
};

#define CCT_CHUNK_SHIFT 12 /* nodes are allocated 4096 at a time; ids are stable */

/* One tree: node 0 is the root. Children have larger ids than parents. */
struct cct_tree {
	uint32_t tid;		 /* program thread; 0 for the merged tree */
	uint32_t n;		 /* nodes */
	struct cct_node **chunk; /* node id >> CCT_CHUNK_SHIFT */
	uint32_t nchunks, capchunks;
	struct hmap wide; /* parent << 32 | fid -> child, for wide parents */
	/* --hist: node id -> struct cct_hist * of the contexts of the
	 * functions it names (cct__hist) */
	struct hmap hist;
};

/* A context's call durations (analyzers/latency.h): wall and on-CPU. */
struct cct_hist {
	struct latency_hist wall, cpu;
};

/* Node id's durations in t, or NULL: none kept (its function is not one
 * --hist names, or no call of it returned there). */
const struct cct_hist *cct__hist(const struct cct_tree *t, uint32_t id);

static inline struct cct_node *cct__node(const struct cct_tree *t, uint32_t id)
{
	return &t->chunk[id >> CCT_CHUNK_SHIFT][id & ((1u << CCT_CHUNK_SHIFT) - 1)];
}

/* The child of parent for fid, or CCT_NONE. Any thread after the run. */
uint32_t cct__child(const struct cct_tree *t, uint32_t parent, uint32_t fid);

/*
 * The tree merged over every thread, built on the first call after the run
 * (instances merged). NULL when out of memory (logged). Owned by the
 * instance. Thread: one at a time, after the run.
 */
const struct cct_tree *cct__merged(void *state);

/* Number of per-thread trees, and the i-th (in tid order); NULL past the
 * end. After the run. */
size_t cct__nthreads(const void *state);
const struct cct_tree *cct__thread(const void *state, size_t i);

struct cct_memory {
	uint64_t nodes;	       /* nodes of the per-thread trees */
	uint64_t bytes;	       /* bytes they take (nodes, chunk slack, hashes, paths) */
	uint64_t folded_calls; /* calls folded into their caller's node (cap) */
	uint64_t nomem;	       /* events not recorded: out of memory */
	uint32_t max_nodes;    /* the cap per instance */
};
void cct__memory(const void *state, struct cct_memory *m);

/* The options the instance runs with (defaults filled in; cpu_time as
 * the caller's cct_opts says now: it is known only after attaching). */
const struct cct_opts *cct__opts(void *state);
/* The names the instance reports with. */
const struct an_ctx *cct__ctx(const void *state);

/*
 * --times sampled: each context's own time, the program's user-mode CPU
 * time its samples stand for less the probes' aftermath in them
 * (an_ctx.aft_in, aft_out: its calls' entries and its children's
 * returns in self; every traced call under it too in incl), ns, into
 * self[id] and incl[id] (t->n entries each, the caller's). As the shadow
 * stacks count it per frame (pipeline/shadow.h, SAMPLES), from the
 * nodes' calls. Below 0 where the aftermath taken out is larger than
 * the samples (noise, or a measure too large): sums stay unbiased, and
 * what is shown is cct__carry_times'. Any one thread.
 */
void cct__own_times(const struct cct_tree *t, const struct an_ctx *ctx, int64_t *self,
		    int64_t *incl);

/*
 * --times sampled: what the tables and views show of the own times
 * cct__own_times gave (own: its self[]), ns, into self[id] and incl[id]
 * (t->n entries each, the caller's). The aftermath was taken out once,
 * where it landed (a context's self: its calls' entries, its children's
 * returns); a self below 0 shows 0, and every total is then carried up
 * from the shown selves: incl[id] = self[id] + its children's incl, so a
 * total always covers its parts (never a total of its own clamped at 0:
 * a parent would fall below its child). unknown[id] (NULL: not wanted) is
 * set where the aftermath taken out exceeds the context's sampled time
 * by more than that time's 95% sampling error (an_ctx__sampled_err95_ns):
 * the measured aftermath does not fit there, and its self time is not
 * known (the reports show none; 0 in the totals). Returns how many
 * contexts are unknown. Any one thread.
 */
uint32_t cct__carry_times(const struct cct_tree *t, const struct an_ctx *ctx, const int64_t *own,
			  uint64_t *self, uint64_t *incl, bool *unknown);

/*
 * cct__own_times, then cct__carry_times, into arrays of t->n entries it
 * allocates: *self, *incl and (unless unknown is NULL) *unknown, which the
 * caller frees; returns 0 (the count of unknown contexts in *nunknown,
 * when not NULL) or -ENOMEM (nothing allocated). Any one thread.
 */
int cct__shown_times(const struct cct_tree *t, const struct an_ctx *ctx, uint64_t **self,
		     uint64_t **incl, bool **unknown, uint32_t *nunknown);

int cct__write_folded(FILE *f, const struct cct_tree *t, const struct an_ctx *ctx,
		      enum cct_metric metric);

/*
 * A self-contained SVG flame graph of t (no script, no external resource):
 * frames as rectangles, widths from metric as in the folded output (a
 * frame's value plus its children's), the root at the bottom, a <title> on
 * every frame with its calls, wall and on-CPU times and share. Frames
 * narrower than 0.1 px are left out (counted in the subtitle). title is
 * shown at the top (escaped). Returns 0, -ENOMEM or -EIO. Any one thread.
 */
int cct__write_svg(FILE *f, const struct cct_tree *t, const struct an_ctx *ctx,
		   enum cct_metric metric, bool cpu_time, const char *title);

/*
 * A depth-first walk of a tree (cct_walk.c), children in name order
 * (names set) or heaviest first (by weight, or by incl_ns): set t, names
 * and weight, the rest zero. The reports and the views (user/report/
 * flame.c) share it. One thread.
 */
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

#endif /* ANALYZERS_CCT_H */
