// SPDX-License-Identifier: BSD-2-Clause
/*
 * The analysis' sections of the report (sections.h): the analyzers' own,
 * their lower-bound footnotes, the returns line and the runner's counters,
 * from the runner's results (pipeline/runner.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "analyzers/analyzer.h"
#include "common/emit.h"
#include "common/json.h"
#include "pipeline/runner.h"
#include "user/report/sec.h"
#include "user/report/sections.h"

int sections__estimate_json(struct json *w, enum an_best k, double est, double err95,
			    uint32_t df)
{
	int err = 0;

	if (k == AN_BEST_NONE)
		return 0;
	err |= json__kv_string(w, "estimate", sampling__best_name(k));
	err |= json__kv_u64(w, "calls_est", (uint64_t)llround(est));
	err |= json__key(w, "calls_est_err95");
	err |= err95 < 0 ? json__null(w) : json__u64(w, (uint64_t)llround(err95));
	if (k == AN_BEST_ESTIMATED && df > 0)
		err |= json__kv_u64(w, "calls_est_df", df);
	return err;
}

/* Each analyzer's section (sec.h), by its name (analyzer_ops.name). */
static const struct section {
	const char *name;
	int (*text)(void *state, FILE *f);
	int (*json)(void *state, struct json *w);
} sections[] = {
	{"count", sec_count__text, sec_count__json},
	{"callgraph", sec_callgraph__text, sec_callgraph__json},
	{"io", sec_io__text, sec_io__json},
	{"cct", sec_cct__text, sec_cct__json},
	{"latency", sec_latency__text, sec_latency__json},
	{"timeline", sec_timeline__text, sec_timeline__json},
	{"isp", sec_isp__text, sec_isp__json},
	{"replay", sec_replay__text, sec_replay__json},
};

/* The section of the analyzer ops; NULL for one without (none: every
 * analyzer of the registry has one, and test_analyzers checks it). */
static const struct section *section_of(const struct analyzer_ops *ops)
{
	size_t i;

	for (i = 0; ops && i < sizeof(sections) / sizeof(sections[0]); i++)
		if (!strcmp(sections[i].name, ops->name))
			return &sections[i];
	return NULL;
}

/* Its text, nothing for an analyzer without a section. tree: the cct
 * analyzer's instance of the same run (or process), or NULL: the
 * per-function counts show the sampled totals it carries up (a total of
 * their own can fall below a callee's: sec_count__text_tree). */
static int section_text(const struct analyzer_ops *ops, void *state, void *tree, FILE *f)
{
	const struct section *s = section_of(ops);

	if (s && tree && !strcmp(s->name, "count"))
		return sec_count__text_tree(state, tree, f);
	return s ? s->text(state, f) : 0;
}

static int section_json(const struct analyzer_ops *ops, void *state, void *tree, struct json *w)
{
	const struct section *s = section_of(ops);

	if (s && tree && !strcmp(s->name, "count"))
		return sec_count__json_tree(state, tree, w);
	return s ? s->json(state, w) : 0;
}

/* The cct analyzer's instance among the run's (i == SIZE_MAX) or process
 * i's, or NULL. */
static void *tree_of(const struct runner *r, size_t i)
{
	const struct analyzer_ops *ops;
	void *state;
	size_t a;

	for (a = 0; (ops = i == SIZE_MAX ? runner__analyzer_at(r, a, &state)
					 : runner__proc_analyzer_at(r, i, a, &state));
	     a++)
		if (!strcmp(ops->name, "cct"))
			return state;
	return NULL;
}

bool sections__known(const char *name)
{
	const struct analyzer_ops ops = {.name = name};

	return section_of(&ops) != NULL;
}

int sections__json_lower_bounds(const struct runner *r, struct json *w, unsigned kind)
{
	struct runner_losses l;
	size_t a, n = runner__nanalyzers(r);
	int err;

	runner__losses(r, &l);
	err = json__begin_array(w);
	for (a = 0; !err && a < n; a++) {
		void *st;
		const struct analyzer_ops *ops = runner__analyzer_at(r, a, &st);

		if (ops->lower_bounds & kind & l.kinds)
			err = json__string(w, ops->name);
	}
	return err ? err : json__end_array(w);
}

/* Under an analyzer's tables whose counts are marked as lower bounds
 * (AN_LB_MARK): which losses made them so. */
static void lower_bound_note(const struct runner_losses *l, const struct analyzer_ops *ops,
			     FILE *f)
{
	unsigned k = ops->lower_bounds & l->kinds;
	const char *sep = "";

	if (!k)
		return;
	fprintf(f, "  (" AN_LB_MARK ": a lower bound:");
	if ((k & AN_LOST_CALLS) && l->calls) {
		fprintf(f, " %" PRIu64 " call events", l->calls);
		sep = " and";
	}
	if ((k & AN_LOST_IO) && l->io) {
		fprintf(f, "%s %" PRIu64 " I/O events", sep, l->io);
		sep = " and";
	}
	if (*sep)
		fprintf(f, " were lost (kernel ring full)");
	if (l->overwritten)
		fprintf(f, "%s %" PRIu64 " records were overwritten (--cab-mode sampling)",
			*sep ? ";" : "", l->overwritten);
	fprintf(f, ")\n");
}

#define RS struct runner_stats

/* The returns line and the JSON "returns" object, from one description:
 * the text's fragments in its order, the JSON-only counters between. */
static const struct emit_field returns_fields[] = {
	{"matched", "returns: %" PRIu64 " matched", EMIT_AT(RS, returns.matched)},
	{"missing", ", %" PRIu64 " missing", EMIT_AT(RS, returns.missing)},
	{"unwound", ", %" PRIu64 " unwound by exceptions or longjmp", EMIT_AT(RS, returns.unwound)},
	{"switched", ", %" PRIu64 " lost to stack switches, backtraces or signal stacks",
	 EMIT_AT(RS, returns.switched)},
	{"exec", ", %" PRIu64 " ended by exec", EMIT_AT(RS, returns.exec)},
	{"orphan", ", %" PRIu64 " orphan", EMIT_AT(RS, returns.orphan)},
	/* said on lines of their own, when not 0 (returns_text) */
	{"sampled", NULL, EMIT_AT(RS, returns.sampled)},
	{"orphan_sampled", NULL, EMIT_AT(RS, returns.orphan_sampled)},
	{"window_start", NULL, EMIT_AT(RS, returns.window_start)},
	{"before_attach", ", %" PRIu64 " entered before attach", EMIT_AT(RS, returns.before)},
	{"open", ", %" PRIu64 " open at stop", EMIT_AT(RS, open)},
	{"depth_limited",
	 "; %" PRIu64 " calls got no return probe (kernel limit: 64 pending per thread)",
	 EMIT_AT(RS, returns.depth_limited)},
	{"unarmed", NULL, EMIT_AT(RS, returns.noret)},
	/* said on a line of their own, when not 0 (forks_text) */
	{"inherited", NULL, EMIT_AT(RS, returns.inherited)},
	{"inherited_returned", NULL, EMIT_AT(RS, returns.inherited_matched)},
};

static uint64_t nomem_of(const void *obj)
{
	const struct runner_stats *s = obj;

	return s->nomem_records + s->returns.nomem;
}

/* The JSON "runner" object's counters (the text says them on the order
 * and skipped lines, in words of their own). */
static const struct emit_field runner_fields[] = {
	{"analyzed", NULL, EMIT_AT(RS, records)},
	{"chunks", NULL, EMIT_AT(RS, chunks)},
	{"out_of_order_chunks", NULL, EMIT_AT(RS, out_of_order)},
	{"forwarded_chunks", NULL, EMIT_AT(RS, forwarded)},
	{"forced_gaps", NULL, EMIT_AT(RS, forced_gaps)},
	{"threads", NULL, EMIT_AT(RS, threads)},
	{"tid_reuse", NULL, EMIT_AT(RS, tid_reuse)},
	{"forks_inherited", NULL, EMIT_AT(RS, forks_inherited)},
	{"forks_unknown", NULL, EMIT_AT(RS, forks_unknown)},
	{"forks_unclaimed", NULL, EMIT_AT(RS, forks_unclaimed)},
	{"forks_waited", NULL, EMIT_AT(RS, forks_waited)},
	{"bad_records", NULL, EMIT_AT(RS, bad_records)},
	{"dup_records", NULL, EMIT_AT(RS, dup_records)},
	{"nomem_records", NULL, EMIT_GET(nomem_of)},
	{"size_records", NULL, EMIT_AT(RS, size_records)},
	{"size_unset", NULL, EMIT_AT(RS, size_unset)},
	{"value_records", NULL, EMIT_AT(RS, value_records)},
	{"value_unset", NULL, EMIT_AT(RS, value_unset)},
};

#undef RS

/* The returns line of s. */
static void returns_text(const struct runner *r, const struct runner_stats *s, FILE *f)
{
	if (runner__no_returns(r))
		fprintf(f, "returns: not traced (entry probes only: --entry-only, a Go, V8, JVM or "
			   "OCaml runtime, a target the guard could not hold, or a whole "
			   "container on a kernel without uprobe session programs)\n");
	else {
		emit__text(f, returns_fields, EMIT_N(returns_fields), s);
		fputc('\n', f);
	}
	if (s->returns.noret)
		fprintf(f,
			"returns: %" PRIu64 " calls entered without a return probe (their process was "
			"not guarded yet, or could not be)\n",
			s->returns.noret);
}

/* Forked children and their parents' frames (pipeline/runner.h, Forks),
 * when there were any. */
static void forks_text(const struct runner_stats *s, FILE *f)
{
	if (s->forks_inherited)
		fprintf(f,
			"forks: %" PRIu64 " children started inside their parent's calls (%" PRIu64
			" frames inherited, %" PRIu64 " closed by the child's own return)\n",
			s->forks_inherited, s->returns.inherited, s->returns.inherited_matched);
	if (s->forks_unknown || s->forks_unclaimed)
		fprintf(f,
			"forks: %" PRIu64 " children started without their parent's frames (its "
			"fork event lost, or not come in time), %" PRIu64
			" parents' frames no child took (the child's first event lost): their "
			"first calls' callers are <root>\n",
			s->forks_unknown, s->forks_unclaimed);
}

int sections__text(const struct runner *r, FILE *f)
{
	struct runner_stats st, *s = &st;
	struct runner_losses l;
	size_t a, n = runner__nanalyzers(r);
	int err;

	if (!n)
		return -EINVAL; /* not joined (or nothing selected: no report) */
	runner__stats(r, &st);
	runner__losses(r, &l);
	for (a = 0; a < n; a++) {
		void *state;
		const struct analyzer_ops *ops = runner__analyzer_at(r, a, &state);

		err = section_text(ops, state, tree_of(r, SIZE_MAX), f);
		if (err)
			return err;
		lower_bound_note(&l, ops, f);
		fputc('\n', f);
	}
	returns_text(r, s, f);
	forks_text(s, f);
	if (s->returns.sampled || s->returns.orphan_sampled)
		fprintf(f,
			"sampling: %" PRIu64 " calls returned while tracing was off, %" PRIu64
			" returns of calls entered while it was off\n",
			s->returns.sampled, s->returns.orphan_sampled);
	if (s->returns.window_start)
		fprintf(f,
			"sampling: %" PRIu64 " first calls of a window lost their return in the "
			"kernel (counted, times unknown)\n",
			s->returns.window_start);
	fprintf(f,
		"order: %" PRIu64 " events of %" PRIu64 " threads, %" PRIu64 " gaps (%" PRIu64
		" events), %" PRIu64 " chunks out of order\n",
		s->records, s->threads, s->order_gaps, s->gap_records, s->out_of_order);
	if (s->bad_records || s->dup_records || s->nomem_records || s->returns.nomem)
		fprintf(f,
			"skipped: %" PRIu64 " bad records, %" PRIu64 " duplicates, %" PRIu64
			" out of memory\n",
			s->bad_records, s->dup_records, s->nomem_records + s->returns.nomem);
	return ferror(f) ? -EIO : 0;
}

/* The "returns" object of s. */
static void returns_json(const struct runner_stats *s, struct json *w)
{
	json__key(w, "returns");
	json__begin_object(w);
	emit__json(w, returns_fields, EMIT_N(returns_fields), s);
	json__end_object(w);
}

int sections__json(const struct runner *r, struct json *w)
{
	struct runner_stats st, *s = &st;
	size_t a, n = runner__nanalyzers(r);
	int err;

	if (!n || json__depth(w) == 0)
		return -EINVAL;
	runner__stats(r, &st);
	for (a = 0; a < n; a++) {
		void *state;
		const struct analyzer_ops *ops = runner__analyzer_at(r, a, &state);

		err = section_json(ops, state, tree_of(r, SIZE_MAX), w);
		if (err)
			return err;
	}
	returns_json(s, w);
	json__kv_u64(w, "order_gaps", s->order_gaps);
	json__kv_u64(w, "order_gap_events", s->gap_records);
	json__key(w, "runner");
	json__begin_object(w);
	json__kv_u64(w, "analyzer_threads", runner__nworkers(r));
	emit__json(w, runner_fields, EMIT_N(runner_fields), s);
	if (runner__per_process(r))
		json__kv_u64(w, "unattributed_threads", s->unattributed);
	return json__end_object(w);
}

int sections__proc_text(const struct runner *r, size_t i, FILE *f)
{
	struct runner_stats st;
	const struct analyzer_ops *ops;
	void *state;
	size_t a;
	int err;

	if (i >= runner__nprocs(r))
		return -EINVAL;
	runner__proc_stats(r, i, &st);
	for (a = 0; (ops = runner__proc_analyzer_at(r, i, a, &state)); a++) {
		err = section_text(ops, state, tree_of(r, i), f);
		if (err)
			return err;
		fputc('\n', f);
	}
	returns_text(r, &st, f);
	fprintf(f, "events: %" PRIu64 " calls and returns of %" PRIu64 " thread%s, %" PRIu64 " I/O\n",
		st.records, st.threads, st.threads == 1 ? "" : "s", st.io_records);
	return ferror(f) ? -EIO : 0;
}

int sections__proc_json(const struct runner *r, size_t i, struct json *w)
{
	struct runner_stats st;
	const struct analyzer_ops *ops;
	void *state;
	size_t a;
	int err;

	if (i >= runner__nprocs(r) || json__depth(w) == 0)
		return -EINVAL;
	runner__proc_stats(r, i, &st);
	for (a = 0; (ops = runner__proc_analyzer_at(r, i, a, &state)); a++) {
		err = section_json(ops, state, tree_of(r, i), w);
		if (err)
			return err;
	}
	returns_json(&st, w);
	json__kv_u64(w, "threads", st.threads);
	json__kv_u64(w, "events", st.records);
	return json__kv_u64(w, "io_events", st.io_records);
}
