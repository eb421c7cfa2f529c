// SPDX-License-Identifier: BSD-2-Clause
/* The options checked against each other once parsed (opts_int.h): each
 * rule a line, in the order they are reported; then the defaults that
 * depend on other options. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "analyzers/isp.h"
#include "common/callvals.h"
#include "common/log.h"
#include "user/cli/opts.h"
#include "user/cli/opts_int.h"
#include "user/report/views.h"

/* --container or --cgroup with neither -p nor a command, not --io: every
 * process of that cgroup (user/trace/whole.h). */
#define WHOLE(o)                                                                                   \
	((!(o)->io && !(o)->pid && !(o)->cmd && ((o)->cgroup || (o)->container)) ||                \
	 (o)->follow_forks)

/* The checks between options, in the order they are reported; the first
 * that holds is the usage error. Adding an option's conflict: one line. */
int opts__check_combination(struct opts *o)
{
	const struct {
		bool bad;
		const char *why;
	} rules[] = {
		/* Without return events the shadow stacks cannot tell callers. */
		{o->entry_only && o->analyzers && strstr(o->analyzers, "callgraph"),
		 "--entry-only attaches no return probes: the callgraph analyzer needs them (use "
		 "-a count)"},
		{!o->io && (o->cost_word || o->isp.nsizes || o->isp.plots_dir) &&
			 (o->entry_only || !views__selects(o->analyzers, "isp")),
		 "--cost, --size and --plots shape the isp analyzer: select it (-a isp or -a "
		 "...,isp), with return probes (no --entry-only)"},
		{o->entry_only && views__selects(o->analyzers, "isp"),
		 "--entry-only attaches no return probes: the isp analyzer needs them (a point's "
		 "cost ends at the return)"},
		{o->pid && o->cmd, "give either -p PID or -- COMMAND, not both"},
		{o->follow_exec && !o->cmd,
		 "--follow-exec follows a command cabbpf launches: give -- COMMAND"},
		{o->follow_forks && !o->cmd && !o->pid,
		 "--follow-forks follows a command cabbpf launches or a running process: give -- "
		 "COMMAND or -p PID"},
		{o->follow_forks && (o->cgroup || o->container),
		 "--follow-forks traces a command and its children in a cgroup of their own: not "
		 "with --cgroup or --container (alone, they trace every process of it)"},
		{o->follow_forks && o->follow_exec,
		 "--follow-forks traces every program the command execs already: not with "
		 "--follow-exec"},
		{o->cgroup && o->container, "give either --cgroup or --container, not both"},
		{o->analyzers && views__selects(o->analyzers, "replay"),
		 "the replay analyzer is cabbpf replay's: record (cabbpf record -o FILE ...), then "
		 "cabbpf replay FILE"},
		{o->view.slowest && !o->view.slower_ns, "--slowest N goes with --slower-than DURATION"},
		{o->view.slower_ns && (o->io || o->entry_only || !views__selects(o->analyzers, "latency")),
		 "--slower-than lists the latency analyzer's slowest calls: select it (-a "
		 "...,latency), with return probes (no --entry-only, no --io)"},
		{o->interval && !o->io, "-i works with --io only"},
		{o->io_keep && !o->io, "--io-keep works with --io only"},
		{o->sample_period_ms && !o->sample_pct && !o->budget_pct,
		 "--sample-period goes with --sample P or --budget P"},
		{o->budget_pct && (o->sample_pct || o->start_disabled),
		 "--budget chooses what to trace and when: not with --sample or --start-disabled"},
		{o->budget_pct && o->lossless,
		 "--budget keeps the target's pace: not with --lossless (which makes it wait for "
		 "cabbpf)"},
		{o->budget_pct && (o->io || o->floor || o->list || o->plan),
		 "--budget is for function tracing: not with --io, --floor, --list or --plan"},
		{o->budget_pct && o->mode == OPTS_RECORD,
		 "cabbpf record does not record --budget's epochs: trace with --budget live"},
		{o->quiet && o->output_path, "-q writes no text report: not with -o FILE"},
		{o->output_path && o->json_path && !strcmp(o->output_path, o->json_path),
		 "-o and --json name the same file"},
		{(o->sample_pct || o->start_disabled) && (o->io || o->floor || o->list || o->plan),
		 "--sample and --start-disabled toggle function tracing: not with --io, --floor, "
		 "--list or --plan"},
		{o->lossless && (o->sample_pct || o->start_disabled || o->io || o->floor),
		 "--lossless is for exhaustive function tracing: not with --sample, "
		 "--start-disabled, --io or --floor"},
		{o->lossless && o->cab_mode && !strcmp(o->cab_mode, "sampling"),
		 "--lossless never drops: not with --cab-mode sampling (which overwrites)"},
		{o->bpf_stats && (o->io || o->list || o->plan),
		 "--bpf-stats measures the function probes: not with --io, --list or --plan"},
		{o->io && o->cmd, "--io watches running processes: give -p PID or no target"},
		{o->features && (o->mode != OPTS_LIVE || o->io || o->pid || o->cmd || o->cgroup ||
				 o->container || o->list || o->plan),
		 "--features describes the kernel and exits: give it alone (with --json FILE)"},
		{o->mode <= OPTS_RECORD && !o->io && !o->pid && !o->cmd && !o->cgroup &&
			 !o->container && !o->features,
		 "nothing to trace: give -p PID, -- COMMAND, or --container NAME / --cgroup DIR "
		 "(every "
		 "process of it; see cabbpf --help)"},
		/* Whole-container tracing (--container / --cgroup alone): */
		{WHOLE(o) && o->mode == OPTS_RECORD, "cabbpf record takes one process (-p PID or "
						     "-- COMMAND), not a whole container yet: "
						     "trace the container live"},
		{WHOLE(o) && o->lossless, "--lossless holds one process's threads: not with a "
					  "whole container (give -p PID)"},
		{WHOLE(o) && (o->sample_pct || o->start_disabled),
		 "--sample and --start-disabled take one process (-p PID or -- COMMAND), not a "
		 "whole "
		 "container yet"},
		{WHOLE(o) && o->budget_pct,
		 "--budget takes one process (-p PID or -- COMMAND), not a whole container yet"},
		{(o->nargs || o->nretvals) && (o->io || o->list || o->plan || o->floor),
		 "--args and --retval read values of traced calls: not with --io, --list, --plan or "
		 "--floor"},
		{o->nretvals && o->entry_only,
		 "--retval is read by the return probes: not with --entry-only"},
		{(o->nargs || o->nretvals) && o->mode == OPTS_LIVE && !o->view.slower_ns &&
			 !o->view.timeline_path,
		 "--args and --retval values are shown by --slower-than, --timeline, and cabbpf "
		 "replay of a recording (cabbpf record -o FILE): give one"},
		{WHOLE(o) && (o->nargs || o->nretvals),
		 "--args and --retval take one process (-p PID or -- COMMAND), not a whole "
		 "container yet"},
		{WHOLE(o) && o->isp.nsizes,
		 "--size takes one process (-p PID or -- COMMAND), not a whole container yet"},
		{WHOLE(o) && o->floor, "--floor takes one process (-p PID or -- COMMAND)"},
		{o->mode == OPTS_RECORD && !o->record_path,
		 "cabbpf record writes a file: give -o FILE (see cabbpf record --help)"},
		{o->mode == OPTS_RECORD && o->record_path && o->json_path &&
			 !strcmp(o->record_path, o->json_path),
		 "-o (the recording) and --json name the same file"},
		{o->mode == OPTS_RECORD && (o->io || o->list || o->plan || o->floor),
		 "cabbpf record traces functions: not with --io, --list, --plan or --floor"},
		{o->mode == OPTS_RECORD && (o->sample_pct || o->start_disabled),
		 "cabbpf record does not record sampling windows yet: trace with --sample live"},
		{o->mode == OPTS_RECORD && o->view.nexcludes && o->analyzers &&
			 !strstr(o->analyzers, "cct"),
		 "-N goes with the cct analyzer"},
		{o->mode == OPTS_REPLAY && !o->input_path,
		 "give the recording to replay: cabbpf replay FILE (made by cabbpf record -o FILE)"},
		{o->mode >= OPTS_REPORT && !o->input_path,
		 "give the recording to read: cabbpf report FILE (made by cabbpf record -o FILE)"},
	};
	size_t i;

	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (rules[i].bad) {
			log_err("%s", rules[i].why);
			return -EINVAL;
		}
	for (i = 0; i < o->nargs; i++) {
		struct cabbpf_fnspec sp = {0};
		char glob[256];

		if (callvals__parse_args(o->args[i], glob, sizeof(glob), &sp)) {
			log_err("--args wants GLOB:ITEM[,ITEM...] with up to %d ITEMs, each argN, "
				"int(argN), str(argN) or strlen(argN), N from 0 to 5, not '%s'",
				CABBPF_VAL_ARGS_MAX, o->args[i]);
			return -EINVAL;
		}
	}
	for (i = 0; i < o->nretvals; i++) {
		char glob[256];
		uint8_t type;

		if (callvals__parse_retval(o->retvals[i], glob, sizeof(glob), &type)) {
			log_err("--retval wants GLOB, GLOB:int or GLOB:str, not '%s'", o->retvals[i]);
			return -EINVAL;
		}
	}
	for (i = 0; i < o->isp.nsizes; i++) {
		char glob[256];
		uint8_t spec;

		if (isp__parse_size(o->isp.sizes[i], glob, sizeof(glob), &spec)) {
			log_err("--size wants GLOB:argN or GLOB:strlen(argN), N from 0 to %d, not "
				"'%s'",
				ISP_MAX_ARG, o->isp.sizes[i]);
			return -EINVAL;
		}
	}
	/* Defaults that depend on other options. */
	if (o->entry_only && !o->analyzers)
		o->analyzers = "count";
	if (o->sample_pct && !o->sample_period_ms)
		o->sample_period_ms = 1000;
	if (o->budget_pct && !o->sample_period_ms)
		o->sample_period_ms = 500;
	/* -s and --folded-metric: the choice's index is the view's enum
	 * (enum cct_sort, enum cct_metric: the rows list them in that order). */
	for (i = 0; i < opts__ntable; i++) {
		const struct opt_def *d = &opts__table[i];
		const char *v = d->type == OPT_CHOICE ? *(const char **)((char *)o + d->off) : NULL;
		unsigned k;

		for (k = 0; v && d->choices[k]; k++)
			if (d->choices[k] == v) {
				if (d->off == offsetof(struct opts, sort_key))
					o->view.cct.sort = (enum cct_sort)k;
				else if (d->off == offsetof(struct opts, folded_metric))
					o->view.metric = (enum cct_metric)k;
				else if (d->off == offsetof(struct opts, cost_word))
					o->isp.cost = (enum isp_cost)k;
			}
	}
	/* isp's default cost: on-CPU time. A wall time also holds every
	 * preemption, and under load no repetition of a size may escape
	 * them (docs/isp.md) */
	if (!o->cost_word)
		o->isp.cost = ISP_COST_CPU;
	return 0;
}
