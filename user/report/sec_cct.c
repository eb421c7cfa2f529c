// SPDX-License-Identifier: BSD-2-Clause
/*
 * The calling-context tree's section of the report (sec.h): compensated
 * times, the tree and the per-function rows, as text and JSON, from the
 * cct analyzer's merged instance (its layout: analyzers/cct_int.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/analyzer.h"
#include "analyzers/cct_int.h"
#include "user/report/sec.h"

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
	/* --times sampled: each context's own times as shown (cct__own_times,
	 * then cct__carry_times: totals carried up from the selves), whether
	 * its self is known, and how many are not; own NULL without them */
	uint64_t *own, *own_incl;
	bool *unknown;
	uint32_t nunknown;
	/* compensated times: UNFIT_* by context, and how many contexts have
	 * any (NULL without the cost) */
	uint8_t *unfit;
	uint32_t nunfit, nunfit_wall; /* any UNFIT_*; the wall time's */
};

static void comp_free(struct comp *c);

/* comp.unfit's bits: the cost measured does not fit the run (wall time,
 * on-CPU time) for the context's self, or somewhere in its subtree (then
 * for its inclusive time too). */
#define UNFIT_SELF 1u
#define UNFIT_INCL 2u
#define UNFIT_CPU_SELF 4u
#define UNFIT_CPU_INCL 8u

static int comp_build(const struct cct *g, const struct cct_tree *t, struct comp *c)
{
	int64_t *own = NULL, *scratch = NULL;
	uint32_t id;
	int err = 0;

	*c = (struct comp){0};
	if (g->ctx->cpu_sample_ns && t->n) {
		own = malloc((size_t)t->n * sizeof(*own));
		scratch = malloc((size_t)t->n * sizeof(*scratch));
		c->own = malloc((size_t)t->n * sizeof(*c->own));
		c->own_incl = malloc((size_t)t->n * sizeof(*c->own_incl));
		c->unknown = malloc((size_t)t->n * sizeof(*c->unknown));
		if (!own || !scratch || !c->own || !c->own_incl || !c->unknown) {
			err = -ENOMEM;
			goto cleanup;
		}
		cct__own_times(t, g->ctx, own, scratch);
		c->nunknown = cct__carry_times(t, g->ctx, own, c->own, c->own_incl, c->unknown);
	}
	if (!g->o.probe_ns || !t->n)
		goto cleanup;
	c->below = calloc(t->n, sizeof(*c->below));
	c->direct = calloc(t->n, sizeof(*c->direct));
	c->unfit = calloc(t->n, sizeof(*c->unfit));
	if (!c->below || !c->direct || !c->unfit) {
		err = -ENOMEM;
		goto cleanup;
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
	/* Where the compensation does not fit: it takes each traced call's
	 * whole probe cost off its caller's self time, and the run's own
	 * figures bound that: a self time cannot hold more than it is. More
	 * means the cost measured at start-up is not this run's there
	 * (another host's traps, another load) or that much of each trap
	 * fell inside the call's own time (between its probes' clocks). Its
	 * compensated self is then not known, nor the totals of it and its
	 * callers (each holds that excess, and would fall below the parts
	 * shown under it): carried up, children first. The root is no
	 * context. */
	for (id = t->n; id-- > 1;) {
		const struct cct_node *n = cct__node(t, id);

		if (c->direct[id] > (double)n->self_ns)
			c->unfit[id] |= UNFIT_SELF | UNFIT_INCL;
		if (g->o.cpu_time && c->direct[id] > (double)n->cpu_self_ns)
			c->unfit[id] |= UNFIT_CPU_SELF | UNFIT_CPU_INCL;
		c->nunfit += c->unfit[id] != 0;
		c->nunfit_wall += (c->unfit[id] & UNFIT_INCL) != 0;
		if (n->parent && n->parent < id)
			c->unfit[n->parent] |= c->unfit[id] & (UNFIT_INCL | UNFIT_CPU_INCL);
	}
cleanup:
	free(own);
	free(scratch);
	if (err)
		comp_free(c);
	return err;
}

static void comp_free(struct comp *c)
{
	free(c->below);
	free(c->direct);
	free(c->unfit);
	free(c->own);
	free(c->own_incl);
	free(c->unknown);
	*c = (struct comp){0};
}

/* x - sub, not below 0: where the compensation fits (comp.unfit clear)
 * it never is, and where it does not the figure is not shown. */
static uint64_t minus(uint64_t x, double sub)
{
	return (double)x > sub ? (uint64_t)((double)x - sub) : 0;
}

/* ------------------------------------------------------------ reports -- */

struct fn_row {
	uint32_t fid;
	uint64_t calls, incl, self, cpu_incl, cpu_self;
	/* --times sampled (struct comp's own, own_incl), summed; whether
	 * some context's self is not known (comp.unknown) */
	uint64_t own_incl, own_self;
	bool own_unknown;
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
static struct fn_row *fn_rows(const struct cct_tree *t, uint32_t nfuncs, const struct comp *cp,
			      size_t *n)
{
	struct fn_row *rows = calloc((size_t)nfuncs + 1, sizeof(*rows));
	struct rows_ctx rc = {.t = t, .nfuncs = nfuncs};
	struct cct_walk w = {.t = t};
	uint32_t id, d, i;
	size_t k = 0;

	rc.active = calloc((size_t)nfuncs + 1, sizeof(*rc.active));
	if (!rows || !rc.active || cct_walk__push(&w, 0))
		goto nomem;
	while ((id = cct_walk__next(&w, &d, rows_leave, &rc)) != CCT_NONE) {
		const struct cct_node *nd = cct__node(t, id);

		if (nd->fid < nfuncs) {
			struct fn_row *r = &rows[nd->fid];

			r->calls += nd->calls;
			r->self += nd->self_ns;
			r->cpu_self += nd->cpu_self_ns;
			r->own_self += cp->own ? cp->own[id] : 0;
			r->own_unknown |= cp->unknown && cp->unknown[id];
			r->missing += nd->missing;
			r->unwound += nd->unwound;
			if (!rc.active[nd->fid]) {
				r->incl += nd->incl_ns;
				r->cpu_incl += nd->cpu_incl_ns;
				r->own_incl += cp->own_incl ? cp->own_incl[id] : 0;
			}
			rc.active[nd->fid]++;
		}
		if (cct_walk__push(&w, id))
			goto nomem;
	}
	cct_walk__fini(&w);
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
	cct_walk__fini(&w);
	free(rows);
	free(rc.active);
	return NULL;
}

int sec_cct__fn_totals(void *state, uint64_t *incl, uint32_t nfuncs)
{
	struct cct *g = state;
	const struct cct_tree *t = cct__merged(g);
	struct fn_row *rows = NULL;
	struct comp cp;
	size_t n = 0, i;
	int err;

	if (!t)
		return -ENOMEM;
	if (!g->ctx->cpu_sample_ns)
		return -ENOENT;
	err = comp_build(g, t, &cp);
	if (err)
		return err;
	rows = fn_rows(t, g->ctx->nfuncs, &cp, &n);
	if (!rows) {
		err = -ENOMEM;
		goto cleanup;
	}
	memset(incl, 0, (size_t)nfuncs * sizeof(*incl));
	for (i = 0; i < n; i++)
		if (rows[i].fid < nfuncs)
			incl[rows[i].fid] = rows[i].own_incl;
cleanup:
	free(rows);
	comp_free(&cp);
	return err;
}

/* How the functions table is sorted: -s, and whether times are sampled
 * (then total and self are the sampled ones). */
struct sort_how {
	enum cct_sort by;
	bool sampled;
};

static int cmp_row(const void *a, const void *b, void *arg)
{
	const struct fn_row *x = a, *y = b;
	const struct sort_how *how = arg;
	uint64_t kx, ky;

	switch (how->by) {
	case CCT_SORT_CALLS:
		kx = x->calls, ky = y->calls;
		break;
	case CCT_SORT_SELF:
		kx = how->sampled ? x->own_self : x->self;
		ky = how->sampled ? y->own_self : y->self;
		break;
	case CCT_SORT_CPU:
		kx = x->cpu_incl, ky = y->cpu_incl;
		break;
	default:
		kx = how->sampled ? x->own_incl : x->incl;
		ky = how->sampled ? y->own_incl : y->incl;
		break;
	}
	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return x->fid < y->fid ? -1 : x->fid > y->fid;
}

static const char *const sort_names[] = {"total", "calls", "self", "cpu"};

/* A context's line of the tree (or a function's of the table), text and
 * JSON. */
struct node_line {
	double share; /* of the tree's total time */
	uint64_t calls, incl, self, cpu_incl, cpu_self;
	uint64_t incl_comp, self_comp, cpu_incl_comp, cpu_self_comp;
	/* --times sampled: the program's own time (samples x period) */
	uint64_t samples_incl, samples_self, est_incl, est_self;
	uint64_t missing, unwound, folded;
	const char *name;
	bool cpu; /* on-CPU times measured */
	bool est_self_unknown; /* struct comp's unknown */
	uint8_t unfit;	       /* struct comp's UNFIT_* */
	char buf[24];
};

/* The tables' conditions (struct emit_col.when). */
#define HAVE_COMP 1u /* compensated times: the probes' cost was measured */
#define HAVE_CPU 2u  /* on-CPU times measured */
#define HAVE_SAMPLES 4u /* --times sampled: the program's own times */

/* On-CPU times: none ('-', null) when they were not measured. */
static struct emit_val cpu_incl(const void *row, const void *ctx)
{
	const struct node_line *l = row;

	(void)ctx;
	return (struct emit_val){.u = l->cpu_incl, .null = !l->cpu};
}

static struct emit_val cpu_self(const void *row, const void *ctx)
{
	const struct node_line *l = row;

	(void)ctx;
	return (struct emit_val){.u = l->cpu_self, .null = !l->cpu};
}

/* The sampled self time: none where the aftermath measured does not fit
 * (cct__carry_times' unknown). */
static struct emit_val est_self(const void *row, const void *ctx)
{
	const struct node_line *l = row;

	(void)ctx;
	return (struct emit_val){.u = l->est_self, .null = l->est_self_unknown};
}

/* The compensated times: none where the cost measured does not fit the
 * run (comp_build). */
#define COMP_FN(fn, field, bit)                                                                    \
	static struct emit_val fn(const void *row, const void *ctx)                                \
	{                                                                                          \
		const struct node_line *l = row;                                                   \
                                                                                                   \
		(void)ctx;                                                                         \
		return (struct emit_val){.u = l->field, .null = (l->unfit & (bit)) != 0};          \
	}
COMP_FN(incl_comp, incl_comp, UNFIT_INCL)
COMP_FN(self_comp, self_comp, UNFIT_SELF)
COMP_FN(cpu_incl_comp, cpu_incl_comp, UNFIT_CPU_INCL)
COMP_FN(cpu_self_comp, cpu_self_comp, UNFIT_CPU_SELF)

/* The tree's columns; the text adds each context's name, indented, and
 * what its activations lacked. */
static const struct emit_col node_cols[] = {
	{"name", NULL, 0, EMIT_STR, EMIT_COL(struct node_line, name)},
	{NULL, "TOTAL%", 8, EMIT_PCT, EMIT_COL(struct node_line, share), .prec = 2},
	{"calls", NULL, 0, EMIT_U64, EMIT_COL(struct node_line, calls)},
	{"est_incl_ns", "SAMPLED_MS", 11, EMIT_NS_MS, EMIT_COL(struct node_line, est_incl),
	 .when = HAVE_SAMPLES},
	{"est_self_ns", "SAMPLED_SELF", 12, EMIT_NS_MS, EMIT_FN(est_self), .when = HAVE_SAMPLES},
	{"samples_incl", NULL, 0, EMIT_U64, EMIT_COL(struct node_line, samples_incl),
	 .when = HAVE_SAMPLES},
	{"samples_self", NULL, 0, EMIT_U64, EMIT_COL(struct node_line, samples_self),
	 .when = HAVE_SAMPLES},
	{"incl_ns", "TOTAL_MS", 11, EMIT_NS_MS, EMIT_COL(struct node_line, incl)},
	{"self_ns", "SELF_MS", 11, EMIT_NS_MS, EMIT_COL(struct node_line, self)},
	{"cpu_incl_ns", "CPU_MS", 11, EMIT_NS_MS, EMIT_FN(cpu_incl)},
	{"cpu_self_ns", "CPU_SELF_MS", 11, EMIT_NS_MS, EMIT_FN(cpu_self)},
	{"incl_ns_comp", "COMP_MS", 11, EMIT_NS_MS, EMIT_FN(incl_comp), .when = HAVE_COMP},
	{"self_ns_comp", "COMP_SELF", 11, EMIT_NS_MS, EMIT_FN(self_comp), .when = HAVE_COMP},
	/* the probes run on the CPU: the same cost comes off */
	{"cpu_incl_ns_comp", NULL, 0, EMIT_U64, EMIT_FN(cpu_incl_comp),
	 .when = HAVE_COMP | HAVE_CPU},
	{"cpu_self_ns_comp", NULL, 0, EMIT_U64, EMIT_FN(cpu_self_comp),
	 .when = HAVE_COMP | HAVE_CPU},
	{NULL, "CALLS", 12, EMIT_COUNT, EMIT_COL(struct node_line, calls)},
	{"missing", NULL, 0, EMIT_U64, EMIT_COL(struct node_line, missing), .flags = EMIT_NONZERO},
	{"unwound", NULL, 0, EMIT_U64, EMIT_COL(struct node_line, unwound), .flags = EMIT_NONZERO},
	{"folded", NULL, 0, EMIT_U64, EMIT_COL(struct node_line, folded), .flags = EMIT_NONZERO},
};

/* The functions' table (text); the name and what was lacking follow. */
static const struct emit_col fn_cols_all[] = {
	{NULL, "CALLS", 12, EMIT_COUNT, EMIT_COL(struct node_line, calls)},
	{NULL, "SAMPLED_MS", 11, EMIT_NS_MS, EMIT_COL(struct node_line, est_incl),
	 .when = HAVE_SAMPLES},
	{NULL, "SAMPLED_SELF", 12, EMIT_NS_MS, EMIT_FN(est_self), .when = HAVE_SAMPLES},
	{NULL, "TOTAL_MS", 11, EMIT_NS_MS, EMIT_COL(struct node_line, incl)},
	{NULL, "SELF_MS", 11, EMIT_NS_MS, EMIT_COL(struct node_line, self)},
	{NULL, "CPU_MS", 11, EMIT_NS_MS, EMIT_FN(cpu_incl)},
	{NULL, "CPU_SELF_MS", 11, EMIT_NS_MS, EMIT_FN(cpu_self)},
};

/* The tree's columns for this report: node_cols as g and cp have them;
 * returns how many. */
static size_t tree_cols(const struct cct *g, const struct comp *cp,
			struct emit_col out[EMIT_N(node_cols)])
{
	return emit__select(out, node_cols, EMIT_N(node_cols),
			    (cp->below ? HAVE_COMP : 0) | (g->o.cpu_time ? HAVE_CPU : 0) |
				    (g->ctx->cpu_sample_ns ? HAVE_SAMPLES : 0));
}

/* The time a context weighs in the text tree (its share, --min-pct, its
 * rank among its siblings): its sampled inclusive time with --times
 * sampled, else its traced one. */
static uint64_t weight_of(const struct comp *cp, const struct cct_node *n, uint32_t id)
{
	return cp->own ? cp->own_incl[id] : n->incl_ns;
}

/* *l: node id's line; total: the tree's time (for its share). */
static void node_line(const struct cct *g, const struct cct_tree *t, uint32_t id,
		      const struct comp *cp, uint64_t total, struct node_line *l)
{
	const struct cct_node *n = cct__node(t, id);

	*l = (struct node_line){
		.share = total ? (double)weight_of(cp, n, id) / (double)total : 0,
		.calls = n->calls,
		.incl = n->incl_ns,
		.self = n->self_ns,
		.cpu_incl = n->cpu_incl_ns,
		.cpu_self = n->cpu_self_ns,
		.samples_incl = n->samples_incl,
		.samples_self = n->samples_self,
		.est_incl = cp->own ? cp->own_incl[id] : 0,
		.est_self = cp->own ? cp->own[id] : 0,
		.est_self_unknown = cp->unknown && cp->unknown[id],
		.missing = n->missing,
		.unwound = n->unwound,
		.folded = n->folded,
		.cpu = g->o.cpu_time,
	};
	if (cp->below) {
		l->unfit = cp->unfit[id];
		l->incl_comp = minus(n->incl_ns, cp->below[id]);
		l->self_comp = minus(n->self_ns, cp->direct[id]);
		l->cpu_incl_comp = minus(n->cpu_incl_ns, cp->below[id]);
		l->cpu_self_comp = minus(n->cpu_self_ns, cp->direct[id]);
	}
	l->name = an_ctx__name(g->ctx, n->fid, l->buf);
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
static int report_tree(struct cct *g, const struct cct_tree *t, const struct comp *cp, FILE *f)
{
	const struct cct_node *root = cct__node(t, 0);
	struct cct_walk w = {.t = t};
	uint64_t total = 0, hidden = 0;
	struct emit_col cols[EMIT_N(node_cols)];
	uint64_t *weight = NULL;
	uint32_t id, d, c;
	size_t nc;

	/* --times sampled: shares, thresholds and order by the sampled times */
	if (cp->own) {
		weight = malloc((size_t)t->n * sizeof(*weight));
		if (!weight)
			return -ENOMEM;
		for (id = 0; id < t->n; id++)
			weight[id] = weight_of(cp, cct__node(t, id), id);
		w.weight = weight;
	}
	for (c = root->child; c != CCT_NONE; c = cct__node(t, c)->sibling)
		total += weight_of(cp, cct__node(t, c), c);
	fprintf(f, "calling-context tree: %" PRIu32 " contexts, %zu thread%s (merged)", t->n - 1,
		g->nsorted, g->nsorted == 1 ? "" : "s");
	if (g->o.depth)
		fprintf(f, ", %u levels", g->o.depth);
	if (g->o.min_pct > 0)
		fprintf(f, ", contexts under %.2f%% of the total %stime hidden", g->o.min_pct,
			cp->own ? "sampled " : "");
	fputc('\n', f);
	nc = tree_cols(g, cp, cols);
	emit__head_cells(f, cols, nc, true);
	fprintf(f, "  %s\n", "CONTEXT");
	if (cct_walk__push(&w, 0))
		goto nomem;
	while ((id = cct_walk__next(&w, &d, NULL, NULL)) != CCT_NONE) {
		const struct cct_node *n = cct__node(t, id);
		double pct = total ? 100.0 * (double)weight_of(cp, n, id) / (double)total : 0;
		struct node_line l;
		uint32_t i;

		/* Children come heaviest first: a hidden one hides the rest
		 * of its level too, unless times are all zero (--no-times). */
		if (total && pct < g->o.min_pct) {
			hidden++;
			continue;
		}
		node_line(g, t, id, cp, total, &l);
		emit__cells(f, cols, nc, &l, an_ctx__lb(g->ctx, AN_LOST_CALLS), NULL, true);
		fputc(' ', f);
		for (i = 1; i < d; i++)
			fputs("  ", f);
		print_row_tail(f, g, n->fid, n->missing, n->unwound, n->folded);
		if ((!g->o.depth || d < g->o.depth) && cct_walk__push(&w, id))
			goto nomem;
	}
	cct_walk__fini(&w);
	free(weight);
	if (hidden)
		fprintf(f,
			"  ... %" PRIu64 " contexts below the thresholds (--depth, --min-pct; the "
			"JSON report and --folded have all)\n",
			hidden);
	return 0;
nomem:
	cct_walk__fini(&w);
	free(weight);
	return -ENOMEM;
}

static int report_functions(struct cct *g, const struct cct_tree *t, const struct comp *cp,
			    FILE *f)
{
	struct emit_col fn_cols[EMIT_N(fn_cols_all)];
	size_t nfc = emit__select(fn_cols, fn_cols_all, EMIT_N(fn_cols_all),
				  g->ctx->cpu_sample_ns ? HAVE_SAMPLES : 0);
	struct fn_row *rows;
	size_t n = 0, i;

	rows = fn_rows(t, g->ctx->nfuncs, cp, &n);
	if (!rows)
		return -ENOMEM;
	qsort_r(rows, n, sizeof(*rows), cmp_row,
		&(struct sort_how){g->o.sort, cp->own != NULL});
	fprintf(f, "functions by %s%s (from the tree; -s calls|total|self|cpu)\n",
		cp->own && (g->o.sort == CCT_SORT_TOTAL || g->o.sort == CCT_SORT_SELF)
			? "sampled "
			: "",
		sort_names[g->o.sort <= CCT_SORT_CPU ? g->o.sort : 0]);
	emit__head_cells(f, fn_cols, nfc, true);
	fprintf(f, "  %s\n", "FUNCTION");
	for (i = 0; i < n && i < g->ctx->top; i++) {
		struct node_line l = {
			.calls = rows[i].calls,
			.incl = rows[i].incl,
			.self = rows[i].self,
			.cpu_incl = rows[i].cpu_incl,
			.cpu_self = rows[i].cpu_self,
			.est_incl = rows[i].own_incl,
			.est_self = rows[i].own_self,
			.est_self_unknown = rows[i].own_unknown,
			.cpu = g->o.cpu_time,
		};

		emit__cells(f, fn_cols, nfc, &l, an_ctx__lb(g->ctx, AN_LOST_CALLS),
			    NULL, true);
		print_row_tail(f, g, rows[i].fid, rows[i].missing, rows[i].unwound, 0);
	}
	if (n > g->ctx->top)
		fprintf(f, "  ... %zu more functions (the JSON report has all)\n", n - g->ctx->top);
	free(rows);
	return 0;
}

/* A context with durations, for the text. */
struct hist_row {
	uint32_t id, fid;
	uint64_t sum;
};

static int cmp_hist_row(const void *a, const void *b)
{
	const struct hist_row *x = a, *y = b;

	if (x->fid != y->fid)
		return x->fid < y->fid ? -1 : 1;
	if (x->sum != y->sum)
		return x->sum > y->sum ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Context id's path from the outermost traced caller, "a;b;c", into buf. */
static void path_of(const struct cct *g, const struct cct_tree *t, uint32_t id, char *buf,
		    size_t len)
{
	uint32_t ids[64], n = 0, elided = 0;
	size_t off = 0;

	for (; id && id != CCT_NONE; id = cct__node(t, id)->parent) {
		if (n < 64)
			ids[n++] = id;
		else
			elided++;
	}
	buf[0] = 0;
	if (elided)
		off += (size_t)snprintf(buf, len, "(%" PRIu32 " more);", elided);
	while (n-- && off < len) {
		char nb[24];

		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					an_ctx__name(g->ctx, cct__node(t, ids[n])->fid, nb),
					n ? ";" : "");
	}
}

/* --hist: each named function's call durations by calling context, the
 * contexts with the most time first (ctx.top of them per function). */
static int report_hists(const struct cct *g, const struct cct_tree *t, FILE *f)
{
	struct hist_row *rows = malloc((t->hist.len + 1) * sizeof(*rows));
	struct hmap_ent *e;
	size_t it = 0, n = 0, i, shown = 0;
	char path[1024], nb[24];

	if (!rows)
		return -ENOMEM;
	while (hmap__next(&t->hist, &it, &e)) {
		const struct cct_hist *h = (const struct cct_hist *)(uintptr_t)e->val;

		if (h && h->wall.n)
			rows[n++] = (struct hist_row){(uint32_t)e->key,
						      cct__node(t, (uint32_t)e->key)->fid,
						      h->wall.sum_ns};
	}
	qsort(rows, n, sizeof(*rows), cmp_hist_row);
	fprintf(f, "\ncall durations by calling context (the functions --hist names; traced wall "
		   "and on-CPU time, probes included, as in the latency analyzer):\n");
	if (!n)
		fprintf(f, "  (no call of a function --hist names returned)\n");
	for (i = 0; i < n; i++) {
		const struct cct_hist *h = cct__hist(t, rows[i].id);

		if (!i || rows[i].fid != rows[i - 1].fid) {
			if (i && shown > g->ctx->top)
				fprintf(f, "  ... %zu more contexts (the JSON report has all)\n",
					shown - g->ctx->top);
			shown = 0;
			fprintf(f, "%s:\n", an_ctx__name(g->ctx, rows[i].fid, nb));
		}
		if (shown++ >= g->ctx->top)
			continue;
		path_of(g, t, rows[i].id, path, sizeof(path));
		fprintf(f, "  %s: %" PRIu64 " call%s; wall ", path, h->wall.n,
			h->wall.n == 1 ? "" : "s");
		sec_latency__summary_text(f, &h->wall);
		fputs("; on-CPU ", f);
		sec_latency__summary_text(f, &h->cpu);
		fputc('\n', f);
	}
	if (n && shown > g->ctx->top)
		fprintf(f, "  ... %zu more contexts (the JSON report has all)\n",
			shown - g->ctx->top);
	free(rows);
	return 0;
}

int sec_cct__text(void *state, FILE *f)
{
	struct cct *g = state;
	const struct cct_tree *t = cct__merged(g);
	struct cct_memory m;
	struct comp cp;
	int err;

	if (!t)
		return -ENOMEM;
	cct__refresh_opts(g);
	/* the compensated and sampled times, once for both tables */
	if (comp_build(g, t, &cp))
		return -ENOMEM;
	err = report_tree(g, t, &cp, f);
	if (!err && cp.nunknown)
		fprintf(f,
			"  SAMPLED_SELF '-': in %" PRIu32 " context%s the probes' measured "
			"aftermath exceeds the samples by more than their sampling error: %s own "
			"time is not known (0 in the totals above %s; docs/times.md)\n",
			cp.nunknown, cp.nunknown == 1 ? "" : "s",
			cp.nunknown == 1 ? "its" : "their", cp.nunknown == 1 ? "it" : "them");
	/* the text shows the wall times' (the on-CPU ones are the JSON's) */
	if (!err && cp.nunfit_wall)
		fprintf(f,
			"  COMP '-': the probe cost measured at start-up does not fit this run "
			"in %" PRIu32 " context%s (more would come off a context's own time than "
			"it has: COMP takes each call's whole probe cost off its caller, part of "
			"it is in the call's own time, and the cost measured may not be this "
			"run's): no compensated time for %s, nor for the totals of %s callers\n",
			cp.nunfit_wall, cp.nunfit_wall == 1 ? "" : "s",
			cp.nunfit_wall == 1 ? "it" : "them", cp.nunfit_wall == 1 ? "its" : "their");
	if (!err) {
		fputc('\n', f);
		err = report_functions(g, t, &cp, f);
	}
	if (!err && g->named)
		err = report_hists(g, t, f);
	comp_free(&cp);
	if (err)
		return err;
	cct__memory(g, &m);
	fputs("times: ", f);
	if (g->ctx->cpu_sample_ns)
		fprintf(f,
			"SAMPLED_MS and SAMPLED_SELF are the program's own %s, "
			"sampled every %.3g ms, the probes left out (docs/times.md); ",
			an_ctx__sampled_what(g->ctx), (double)g->ctx->cpu_sample_ns / 1e6);
	fprintf(f,
		"wall times include the probes' own cost (every traced call below a "
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

/* One node as JSON, without its children's closing (the walk closes);
 * cols: tree_cols'. */
static void json_node(struct json *w, const struct cct *g, const struct cct_tree *t, uint32_t id,
		      const struct comp *cp, const struct emit_col *cols, size_t nc)
{
	struct node_line l;

	node_line(g, t, id, cp, 0, &l);
	json__begin_object(w);
	emit__row_json(w, cols, nc, &l, NULL);
	/* where its compensated times are null: the cost does not fit */
	if (cp->unfit && id)
		json__kv_bool(w, "comp_fits", !l.unfit);
	if (t->hist.len) {
		const struct cct_hist *h = cct__hist(t, id);

		if (h) {
			json__key(w, "latency");
			json__begin_object(w);
			sec_latency__hist_json(w, "wall", &h->wall);
			sec_latency__hist_json(w, "cpu", &h->cpu);
			json__end_object(w);
		}
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

/* The whole tree, nested, children heaviest first; *nunknown, *nunfit:
 * struct comp's counts. */
static int json_tree(struct json *w, const struct cct *g, const struct cct_tree *t,
		     uint32_t *nunknown, uint32_t *nunfit)
{
	struct emit_col cols[EMIT_N(node_cols)];
	struct cct_walk wk = {.t = t};
	struct comp cp;
	uint32_t id, d;
	size_t nc;

	if (comp_build(g, t, &cp))
		return -ENOMEM;
	*nunknown = cp.nunknown;
	*nunfit = cp.nunfit;
	nc = tree_cols(g, &cp, cols);
	json_node(w, g, t, 0, &cp, cols, nc);
	if (cct_walk__push(&wk, 0)) {
		comp_free(&cp);
		return -ENOMEM;
	}
	while ((id = cct_walk__next(&wk, &d, json_leave, w)) != CCT_NONE) {
		json_node(w, g, t, id, &cp, cols, nc);
		if (cct_walk__push(&wk, id)) {
			cct_walk__fini(&wk);
			comp_free(&cp);
			return -ENOMEM;
		}
	}
	cct_walk__fini(&wk);
	comp_free(&cp);
	return 0;
}

int sec_cct__json(void *state, struct json *w)
{
	struct cct *g = state;
	const struct cct_tree *t = cct__merged(g);
	uint32_t nunknown, nunfit, u1, u2;
	struct cct_memory m;
	size_t i;
	int err;

	if (!t)
		return -ENOMEM;
	cct__refresh_opts(g);
	json__key(w, "cct");
	err = json_tree(w, g, t, &nunknown, &nunfit);
	if (err)
		return err;
	json__key(w, "cct_threads");
	json__begin_object(w);
	for (i = 0; i < g->nsorted; i++) {
		json__key_u64(w, g->sorted[i]->t.tid);
		err = json_tree(w, g, &g->sorted[i]->t, &u1, &u2);
		if (err)
			return err;
	}
	json__end_object(w);
	cct__memory(g, &m);
	json__key(w, "cct_info");
	json__begin_object(w);
	json__kv_u64(w, "nodes", m.nodes);
	json__kv_u64(w, "merged_nodes", t->n);
	json__kv_u64(w, "bytes", m.bytes);
	json__kv_u64(w, "max_nodes", m.max_nodes);
	json__kv_u64(w, "folded_calls", m.folded_calls);
	json__kv_u64(w, "nomem", m.nomem);
	json__kv_bool(w, "collapse_recursion", g->o.collapse_recursion);
	json__kv_bool(w, "cpu_time", g->o.cpu_time);
	json__kv_bool(w, "wall_includes_probe_cost", true);
	/* est_*_ns: the program's own time, sampled (docs/times.md) */
	json__kv_bool(w, "sampled", g->ctx->cpu_sample_ns != 0);
	/* the merged tree's contexts whose est_self_ns is null (the
	 * aftermath measured does not fit), and whose compensated times are
	 * (some) null: the cost measured does not fit (comp_build) */
	json__kv_u64(w, "est_self_unknown", nunknown);
	json__kv_u64(w, "comp_unfit", nunfit);
	return json__end_object(w);
}
