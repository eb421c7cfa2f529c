// SPDX-License-Identifier: BSD-2-Clause
/* The design (order, ownership, termination) is described in runner.h. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/record.h"
#include "cab/cab.h"
#include "common/log.h"
#include "pipeline/runner_int.h"

/* ------------------------------------------------------------ public -- */

int runner__new(const struct runner_opts *o, struct cab_pp **bufs, unsigned nbufs,
		struct runner **out)
{
	struct runner *r = NULL;
	unsigned i, b;
	int err;

	*out = NULL;
	if (!o || (nbufs && !bufs) || (o->nfuncs && !o->fnames) || o->nthreads > MAX_THREADS)
		return -EINVAL;
	for (b = 0; b < nbufs; b++) {
		/* Records are decoded as pipeline/record.h lays them out. */
		if (!bufs[b] || cab_pp__record_words(bufs[b]) != REC_WORDS) {
			log_err("runner: buffer %u does not hold %d-word records", b, REC_WORDS);
			return -EINVAL;
		}
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->partial = o->partial;
	r->ctx.fnames = o->fnames;
	r->ctx.lnames = o->lnames;
	r->ctx.nfuncs = o->nfuncs;
	r->ctx.src = o->src;
	r->ctx.bins = o->bins;
	r->ctx.nbins = o->nbins;
	r->nfuncs_cap = o->nfuncs;
	r->nfuncs_used = o->nfuncs_used;
	r->per_process = o->per_process;
	r->ctx.called_only = o->called_only;
	r->ctx.top = o->top ? o->top : DEFAULT_TOP;
	r->ctx.cct = o->cct;
	r->ctx.timeline_limit = o->timeline_limit;
	r->ctx.isp = o->isp;
	r->ctx.replay = o->replay;
	r->ctx.hist = o->hist;
	r->ctx.nhist = o->nhist;
	r->ctx.slower_ns = o->slower_ns;
	r->ctx.slowest = o->slowest;
	r->ctx.aft_in = o->aft_in;
	r->ctx.aft_out = o->aft_out;
	r->max_pending = o->max_pending ? o->max_pending : DEFAULT_MAX_PENDING;
	r->no_returns = o->no_returns;
	r->tap = o->tap;
	r->tap_ctx = o->tap_ctx;
	r->tap_only = o->tap_only;
	err = analyzer__select(o->analyzers, r->ops, &r->nops);
	if (err)
		goto cleanup;
	err = -pthread_mutex_init(&r->fork_lock, NULL);
	if (err)
		goto cleanup;
	r->fork_lock_init = true;
	r->nw = o->nthreads ? o->nthreads : 1;
	r->w = calloc(r->nw, sizeof(*r->w));
	if (!r->w) {
		r->nw = 0;
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < r->nw; i++) {
		struct worker *w = &r->w[i];

		w->r = r;
		w->id = i;
		err = -pthread_mutex_init(&w->lock, NULL);
		if (err)
			goto cleanup;
		w->lock_init = true;
		err = an_set__init(&w->set, r->ops, r->nops, &r->ctx);
		if (err)
			goto cleanup;
		w->sink = (struct shadow_sink){
			.on_call = runner_worker__shadow_on_call,
			.on_return = runner_worker__shadow_on_return,
			.ctx = &w->set,
		};
		w->bufs = calloc(nbufs / r->nw + 1, sizeof(*w->bufs));
		w->done = calloc(nbufs / r->nw + 1, sizeof(*w->done));
		if (!w->bufs || !w->done) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	for (b = 0; b < nbufs; b++) {
		struct worker *w = &r->w[b % r->nw];

		w->bufs[w->nbufs++] = bufs[b];
	}
	*out = r;
	return 0;
cleanup:
	runner__free(r);
	return err;
}

int runner__start(struct runner *r)
{
	unsigned i;
	int err;

	if (r->started || r->joined)
		return -EINVAL;
	atomic_store(&r->readers, r->nw);
	r->started = true;
	for (i = 0; i < r->nw; i++) {
		char name[16];

		err = -pthread_create(&r->w[i].th, NULL, runner_worker__main, &r->w[i]);
		if (err)
			goto cleanup;
		r->w[i].th_started = true;
		/* Named, for people (top -H, gdb) and for tests that stop an
		 * analyzer alone (tests/test_sampling_integration.c). */
		/* comm holds 15 bytes: cabbpf-an + at most 5 digits. */
		snprintf(name, sizeof(name), "cabbpf-an%u", i % 100000u);
		(void)pthread_setname_np(r->w[i].th, name);
	}
	return 0;
cleanup:
	atomic_store(&r->stop, true);
	for (i = 0; i < r->nw; i++) {
		if (r->w[i].th_started)
			pthread_join(r->w[i].th, NULL);
		r->w[i].th_started = false;
	}
	return err;
}

int runner__feed(struct runner *r, uint32_t tid, uint64_t seq, const uint64_t *recs, uint32_t nrec)
{
	return runner__feed_tag(r, tid, 0, seq, recs, nrec);
}

int runner__feed_tag(struct runner *r, uint32_t tid, uint32_t tag, uint64_t seq,
		     const uint64_t *recs, uint32_t nrec)
{
	struct worker *w;

	if (r->started || r->joined)
		return -EINVAL;
	w = runner_worker__owner(r, tid);
	w->st.chunks++;
	return runner_worker__ingest(w, tid, tag, seq, recs, nrec, NULL);
}

static void add_stats(struct runner_stats *d, const struct runner_stats *s)
{
	d->chunks += s->chunks;
	d->records += s->records;
	d->io_records += s->io_records;
	d->bad_records += s->bad_records;
	d->dup_records += s->dup_records;
	d->nomem_records += s->nomem_records;
	d->out_of_order += s->out_of_order;
	d->forwarded += s->forwarded;
	d->order_gaps += s->order_gaps;
	d->gap_records += s->gap_records;
	d->forced_gaps += s->forced_gaps;
	d->tid_reuse += s->tid_reuse;
	d->forks_inherited += s->forks_inherited;
	d->forks_unknown += s->forks_unknown;
	d->forks_unclaimed += s->forks_unclaimed;
	d->forks_waited += s->forks_waited;
	d->returns.inherited += s->returns.inherited;
	d->returns.inherited_matched += s->returns.inherited_matched;
	d->threads += s->threads;
	d->open += s->open;
	d->returns.matched += s->returns.matched;
	d->returns.missing += s->returns.missing;
	d->returns.unwound += s->returns.unwound;
	d->returns.switched += s->returns.switched;
	d->returns.exec += s->returns.exec;
	d->guard_records += s->guard_records;
	d->sched_records += s->sched_records;
	d->sample_records += s->sample_records;
	d->size_records += s->size_records;
	d->size_unset += s->size_unset;
	d->value_records += s->value_records;
	d->value_unset += s->value_unset;
	d->returns.orphan += s->returns.orphan;
	d->returns.sampled += s->returns.sampled;
	d->returns.orphan_sampled += s->returns.orphan_sampled;
	d->returns.window_start += s->returns.window_start;
	d->returns.before += s->returns.before;
	d->returns.depth_limited += s->returns.depth_limited;
	d->returns.nomem += s->returns.nomem;
	d->returns.noret += s->returns.noret;
	d->returns.samples += s->returns.samples;
	d->returns.samples_root += s->returns.samples_root;
	d->returns.aft_ns += s->returns.aft_ns;
	d->unattributed += s->unattributed;
}

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = *(struct group *const *)a, *y = *(struct group *const *)b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* per_process, after the workers finished: every group into the total
 * (worker 0's set), then each process's groups of workers 1.. into
 * worker 0's group of that process, listed by pid in r->procs. Returns
 * 0 or -ENOMEM. */
static int fold_groups(struct runner *r)
{
	struct hmap_ent *e;
	struct group *g, *d;
	unsigned i, a;
	size_t it, n = 0;
	int err = 0;

	for (i = 0; i < r->nw && !err; i++) {
		it = 0;
		while (!err && hmap__next(&r->w[i].groups, &it, &e)) {
			g = (struct group *)(uintptr_t)e->val;
			for (a = 0; g && a < g->set.n && !err; a++)
				err = r->ops[a]->merge(r->w[0].set.state[a], g->set.state[a]);
		}
	}
	for (i = 1; i < r->nw && !err; i++) {
		it = 0;
		while (!err && hmap__next(&r->w[i].groups, &it, &e)) {
			g = (struct group *)(uintptr_t)e->val;
			if (!g || !g->set.n)
				continue;
			d = runner_worker__group(&r->w[0], g->pid);
			if (!d || (!d->set.n && r->nops)) {
				err = -ENOMEM;
				break;
			}
			for (a = 0; a < r->nops && !err; a++)
				err = r->ops[a]->merge(d->set.state[a], g->set.state[a]);
			add_stats(&d->st, &g->st);
		}
	}
	if (err)
		return err;
	r->procs = calloc(hmap__len(&r->w[0].groups) + 1, sizeof(*r->procs));
	if (!r->procs)
		return -ENOMEM;
	it = 0;
	while (hmap__next(&r->w[0].groups, &it, &e)) {
		g = (struct group *)(uintptr_t)e->val;
		if (g && (g->set.n || !r->nops))
			r->procs[n++] = g;
	}
	qsort(r->procs, n, sizeof(*r->procs), cmp_group);
	r->nprocs = n;
	return 0;
}

int runner__join(struct runner *r)
{
	unsigned i, a;
	uint32_t used;
	int err = 0;

	if (r->joined)
		return 0;
	for (i = 0; i < r->nw; i++) {
		if (r->w[i].th_started)
			pthread_join(r->w[i].th, NULL);
		r->w[i].th_started = false;
	}
	memset(&r->st, 0, sizeof(r->st));
	/* Children waiting for their parents' frames first: their held
	 * records are then analyzed by runner_worker__finish like any. */
	runner_worker__finish_forks(r);
	for (i = 0; i < r->nw; i++) {
		runner_worker__finish(&r->w[i]);
		add_stats(&r->st, &r->w[i].st);
	}
	runner_worker__forks_free(r, &r->st);
	/* A table with room to grow (runner_opts.nfuncs_used): the merges
	 * and the reports go over the functions it holds, not its room. */
	if (r->nfuncs_used) {
		used = atomic_load_explicit(r->nfuncs_used, memory_order_acquire);
		if (used < r->ctx.nfuncs)
			r->ctx.nfuncs = used;
	}
	/* Fold every worker's instances into worker 0's: reports read those. */
	for (i = 1; i < r->nw && !err; i++)
		for (a = 0; a < r->nops && !err; a++)
			err = r->ops[a]->merge(r->w[0].set.state[a], r->w[i].set.state[a]);
	if (!err && r->per_process)
		err = fold_groups(r);
	r->joined = true;
	if (r->st.order_gaps)
		log_warn("%" PRIu64 " gaps in per-thread event order (%" PRIu64 " events)",
			 r->st.order_gaps, r->st.gap_records);
	if (r->st.nomem_records)
		log_warn("%" PRIu64 " events not analyzed: out of memory", r->st.nomem_records);
	if (err)
		log_err("merging analyzer results: %s", strerror(-err));
	return err;
}

void runner__stats(const struct runner *r, struct runner_stats *st)
{
	*st = r->st;
}

void runner__set_windows(struct runner *r, const struct an_windows *w)
{
	/* The analysis threads have stopped: nothing reads ctx concurrently. */
	r->ctx.windows = w;
}

void runner__set_cpu_sample(struct runner *r, uint64_t period_ns, unsigned kernel)
{
	r->ctx.cpu_sample_ns = period_ns;
	r->ctx.cpu_sample_kernel = period_ns ? (uint8_t)(kernel > AN_KTIME_FAULTS ? AN_KTIME_FAULTS : kernel) : 0;
}

uint64_t runner__cpu_sample(const struct runner *r)
{
	return r->ctx.cpu_sample_ns;
}

void runner__set_budget(struct runner *r, const struct an_budget *b)
{
	r->ctx.budget = b;
}

void runner__set_src(struct runner *r, const struct an_src *src, const struct an_bin *bins,
		      uint32_t nbins)
{
	/* As for the windows: read by the reports only. */
	r->ctx.src = src;
	r->ctx.bins = bins;
	r->ctx.nbins = nbins;
}

void runner__set_lost(struct runner *r, uint64_t calls, uint64_t io, uint64_t overwritten)
{
	/* The analysis threads have stopped: nothing reads ctx concurrently.
	 * An overwritten CAB record may have been of either kind. */
	r->lost_calls = calls;
	r->lost_io = io;
	r->overwritten = overwritten;
	r->ctx.lost = (calls || overwritten ? AN_LOST_CALLS : 0) |
		      (io || overwritten ? AN_LOST_IO : 0);
}

void runner__set_traced(struct runner *r, uint32_t ntraced)
{
	/* As for the losses: the analysis threads have stopped. */
	r->ctx.ntraced = ntraced;
}


void runner__free(struct runner *r)
{
	struct hmap_ent *e;
	struct pchunk *pc, *next;
	unsigned i;
	size_t it;

	if (!r)
		return;
	/* Threads still running (freed without join): stop them first. */
	atomic_store(&r->stop, true);
	for (i = 0; i < r->nw; i++)
		if (r->w[i].th_started)
			pthread_join(r->w[i].th, NULL);
	for (i = 0; i < r->nw; i++) {
		struct worker *w = &r->w[i];

		it = 0;
		while (hmap__next(&w->tids, &it, &e))
			runner_worker__tstate_free((struct tstate *)(uintptr_t)e->val);
		hmap__fini(&w->tids);
		it = 0;
		while (hmap__next(&w->groups, &it, &e)) {
			struct group *g = (struct group *)(uintptr_t)e->val;

			if (g)
				an_set__fini(&g->set);
			free(g);
		}
		hmap__fini(&w->groups);
		for (pc = w->in_head; pc; pc = next) {
			next = pc->next;
			free(pc);
		}
		an_set__fini(&w->set);
		if (w->lock_init)
			pthread_mutex_destroy(&w->lock);
		free(w->bufs);
		free(w->done);
	}
	free(r->w);
	free(r->procs);
	runner_worker__forks_free(r, NULL);
	hmap__fini(&r->forks);
	if (r->fork_lock_init)
		pthread_mutex_destroy(&r->fork_lock);
	free(r);
}
