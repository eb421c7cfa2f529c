// SPDX-License-Identifier: BSD-2-Clause
/*
 * The runner's results after the join, as data for the report
 * (user/report/sections.c writes them): the analyzers' merged instances,
 * the losses, each process's group. runner_int.h lists the runner's files.
 */
#include <string.h>

#include "pipeline/runner_int.h"

const void *runner__analyzer(const struct runner *r, const char *name)
{
	if (!r->joined || !r->nw)
		return NULL;
	return an_set__state(&r->w[0].set, name);
}

size_t runner__nanalyzers(const struct runner *r)
{
	return r->joined && r->nw ? r->nops : 0;
}

const struct analyzer_ops *runner__analyzer_at(const struct runner *r, size_t a, void **state)
{
	*state = NULL;
	if (a >= runner__nanalyzers(r))
		return NULL;
	*state = r->w[0].set.state[a];
	return r->ops[a];
}

void runner__losses(const struct runner *r, struct runner_losses *out)
{
	*out = (struct runner_losses){.calls = r->lost_calls,
				      .io = r->lost_io,
				      .overwritten = r->overwritten,
				      .kinds = r->ctx.lost};
}

bool runner__no_returns(const struct runner *r)
{
	return r->no_returns;
}

bool runner__per_process(const struct runner *r)
{
	return r->per_process;
}

unsigned runner__nworkers(const struct runner *r)
{
	return r->nw;
}

size_t runner__nprocs(const struct runner *r)
{
	return r->joined ? r->nprocs : 0;
}

uint32_t runner__proc_pid(const struct runner *r, size_t i)
{
	return r->joined && i < r->nprocs ? r->procs[i]->pid : 0;
}

void runner__proc_stats(const struct runner *r, size_t i, struct runner_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (r->joined && i < r->nprocs)
		*st = r->procs[i]->st;
}

const void *runner__proc_analyzer(const struct runner *r, size_t i, const char *name)
{
	if (!r->joined || i >= r->nprocs)
		return NULL;
	return an_set__state(&r->procs[i]->set, name);
}

const struct analyzer_ops *runner__proc_analyzer_at(const struct runner *r, size_t i, size_t a,
						    void **state)
{
	*state = NULL;
	if (!r->joined || i >= r->nprocs || a >= r->procs[i]->set.n)
		return NULL;
	*state = r->procs[i]->set.state[a];
	return r->ops[a];
}
