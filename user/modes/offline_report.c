// SPDX-License-Identifier: BSD-2-Clause
/*
 * cabbpf report FILE: the recording through the runner, then the same
 * report code as a live run (user/report/report.h, user/report/views.h). The
 * summary around the analyzers' sections comes from the recording's
 * META and SUMMARY blocks, so the whole text report of a recording is the
 * one the recording run would have printed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/outfile.h"
#include "pipeline/runner.h"
#include "common/outputs.h"
#include "user/report/report.h"
#include "user/report/views.h"
#include "user/record/recfmt.h"
#include "user/modes/offline.h"

int offline__open(const char *path, FILE **f, struct recfmt_reader **r)
{
	struct recfmt_item it;
	int ret, i;

	*r = NULL;
	*f = fopen(path, "rb");
	if (!*f) {
		ret = -errno;
		log_err("cannot read %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = recfmt__reader_new(*f, path, r);
	for (i = 0; !ret && i < 2; i++) {
		ret = recfmt__next(*r, &it);
		ret = ret == 1 ? 0 : ret < 0 ? ret : -EINVAL;
	}
	if (ret == -ENOMEM)
		log_err("reading %s: out of memory", path);
	return ret;
}

void offline__summary(const struct recfmt_meta *m, const struct recfmt_summary *s,
		      struct summary *sm)
{
	memset(sm, 0, sizeof(*sm));
	sm->pid = m->pid;
	sm->comm = m->comm;
	sm->binary = m->binary;
	sm->multi = m->flags & RECFMT_F_MULTI;
	sm->cab_sampling = m->flags & RECFMT_F_CAB_SAMPLING;
	sm->nfuncs = s->nfuncs;
	sm->refused = s->refused;
	sm->duration_s = s->duration_s;
	sm->cpu_s = s->cpu_s;
	sm->events = s->events;
	sm->lost = s->lost;
	sm->lost_calls = s->lost_calls;
	sm->lost_io = s->lost_io;
	sm->lost_guard = s->lost_guard;
	sm->lost_sched = s->lost_sched;
	sm->sched_busy = s->sched_busy;
	sm->sched_unseen = s->sched_unseen;
	sm->reentry = s->reentry;
	sm->has_tstates = s->has_tstates;
	sm->tstab_taken = s->tstab_taken;
	sm->nostate = s->nostate;
	sm->ring_bytes = (size_t)s->ring_bytes;
	sm->ncpus = s->ncpus;
	sm->lost_per_cpu = s->lost_per_cpu;
	sm->cab = s->cab;
	sm->stop_reason = s->stop_reason;
	sm->exited = s->exited;
	sm->exit_status = s->exit_status;
	sm->execs = s->execs;
	sm->forks_known = s->has_forks;
	sm->forks = s->forks;
	sm->cpu_sample_ns = s->cpu_sample_ns;
	sm->samples_probe = s->samples_probe;
	sm->samples_nostate = s->samples_nostate;
	sm->samples_lost = s->samples_lost;
	sm->samples_kernel = s->samples_kernel;
	sm->samples_syscall = s->samples_syscall;
	sm->samples_trap = s->samples_trap;
	sm->samples_fault = s->samples_fault;
	sm->samples_resume = s->samples_resume;
	sm->exec_other = s->exec_other;
	sm->exec_thread = s->exec_thread;
	sm->guard = s->has_guard ? &s->guard : NULL;
	/* the kernel the trace was taken on, not this one */
	sm->kernel = s->has_kernel ? &s->kernel : NULL;
}

int offline__report(const struct opts *o)
{
	const struct recfmt_meta *m;
	const struct recfmt_funcs *fn;
	struct recfmt_reader *r = NULL;
	struct runner *rn = NULL;
	struct view_opts view = o->view;
	char list[256];
	struct recfmt_item it;
	struct runner_opts ro;
	struct summary sm;
	struct outputs outs = {0};
	FILE *f = NULL;
	int err, ret;

	err = offline__open(o->input_path, &f, &r);
	if (err)
		goto cleanup;
	m = recfmt__meta(r);
	fn = recfmt__funcs(r);
	memset(&ro, 0, sizeof(ro));
	ro.fnames = fn->names;
	ro.lnames = fn->lnames;
	ro.nfuncs = fn->n;
	ro.analyzers = o->analyzers;
	ro.nthreads = o->analyzer_threads;
	ro.no_returns = m->flags & RECFMT_F_ENTRY_ONLY;
	/* As the live run set them: what the recording measured. */
	view.cct.cpu_time = m->flags & RECFMT_F_CPU_TIME;
	view.cct.probe_ns = fn->probe_ns;
	ro.aft_in = fn->aft_in;
	ro.aft_out = fn->aft_out;
	ro.cct = &view.cct;
	if (ro.no_returns && !ro.analyzers)
		ro.analyzers = "count";
	if (ro.no_returns && strstr(ro.analyzers, "callgraph")) {
		log_err("%s was recorded without return probes (--entry-only, or a Go program): "
			"no call graph; use -a count",
			o->input_path);
		err = -EINVAL;
		goto cleanup;
	}
	err = views__check(&view, ro.analyzers, ro.no_returns);
	if (err)
		goto cleanup;
	ro.analyzers = views__analyzers(&view, ro.analyzers, list, sizeof(list));
	ro.timeline_limit = view.timeline_limit;
	/* --cost, --plots; --size was the recording's (its size events are
	 * in the chunks) */
	ro.isp = &o->isp;
	ro.hist = o->view.hist;
	ro.nhist = o->view.nhist;
	ro.slower_ns = o->view.slower_ns;
	ro.slowest = o->view.slowest;
	err = runner__new(&ro, NULL, 0, &rn);
	if (err)
		goto cleanup; /* a wrong -a is said by runner__new */
	while ((ret = recfmt__next(r, &it)) == 1)
		if (it.type == RECFMT_CHUNK && (err = runner__feed(rn, it.tid, it.seq, it.recs, it.nrec)))
			break;
	if (err || ret < 0) {
		err = err ? err : ret;
		if (err == -ENOMEM)
			log_err("reading %s: out of memory", o->input_path);
		goto cleanup;
	}
	err = runner__join(rn);
	if (err) {
		log_err("merging the analyzers' results: %s", strerror(-err));
		goto cleanup;
	}
	{
		const struct recfmt_source *src = recfmt__source(r);

		if (src)
			runner__set_src(rn, src->src, src->bins, src->nbins);
	}
	offline__summary(m, recfmt__summary(r), &sm);
	runner__set_lost(rn, sm.lost_calls, sm.lost_io, sm.cab.overwritten);
	runner__set_traced(rn, sm.nfuncs);
	runner__set_cpu_sample(rn, sm.cpu_sample_ns, sm.samples_kernel);
	if (!o->quiet && outputs__note(&outs, "-o", o->output_path,
				       report__text_to(o->output_path, &sm, rn)))
		log_err("writing the report%s%s: %s", o->output_path ? " to " : "",
			o->output_path ? o->output_path : "", outfile__strerror(outputs__failed(&outs)));
	fflush(stdout);
	views__write(&view, rn, m->pid, m->comm, m->binary, (uint64_t)(sm.duration_s * 1e9), &outs);
	views__write_plots(&o->isp, rn, &outs);
	/* --json last: it lists what became of every other file */
	sm.outputs = &outs;
	if (o->json_path && outputs__note(&outs, "--json", o->json_path,
					  report__json(o->json_path, &sm, rn)))
		log_err("writing --json %s: %s", o->json_path,
			outfile__strerror(outs.r[outs.n - 1].err));
	err = outputs__failed(&outs);
	if (err)
		log_err("not every output was written (said above): the report failed");
cleanup:
	runner__free(rn);
	recfmt__reader_free(r);
	if (f)
		fclose(f);
	return err;
}

int offline__check(const char *path)
{
	struct recfmt_reader *r = NULL;
	struct recfmt_item it;
	FILE *f = NULL;
	int err, ret;

	err = offline__open(path, &f, &r);
	while (!err && (ret = recfmt__next(r, &it)) != 0)
		if (ret < 0)
			err = ret;
	recfmt__reader_free(r);
	if (f)
		fclose(f);
	return err;
}
