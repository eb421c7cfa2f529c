// SPDX-License-Identifier: BSD-2-Clause
/*
 * The runner's workers: chunks taken from the CAB buffers and inboxes,
 * held in each thread's ordering heap until their turn, and dispatched to
 * the analyzers. runner_int.h lists the runner's files.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pipeline/record.h"
#include "cab/cab.h"
#include "pipeline/runner_int.h"

/* ------------------------------------------------------------ helpers -- */

/* Spin briefly (a chunk is often just about to be published), then sleep
 * with doubling intervals up to 1 ms: cores are shared with the target. */
static void backoff(unsigned *idle)
{
	struct timespec ts;
	long ns;

	if (*idle < SPIN_ROUNDS) {
		cab__cpu_relax();
	} else {
		unsigned k = *idle - SPIN_ROUNDS;

		ns = k >= 10 ? SLEEP_MAX_NS : SLEEP_MIN_NS << k;
		if (ns > SLEEP_MAX_NS)
			ns = SLEEP_MAX_NS;
		ts.tv_sec = 0;
		ts.tv_nsec = ns;
		nanosleep(&ts, NULL);
	}
	if (*idle < SPIN_ROUNDS + 16)
		(*idle)++;
}

static struct pchunk *pchunk_new(uint32_t tid, uint32_t tag, uint64_t seq, const uint64_t *recs,
				 uint32_t nrec)
{
	size_t words = (size_t)nrec * REC_WORDS;
	struct pchunk *pc = malloc(sizeof(*pc) + words * sizeof(uint64_t));

	if (!pc)
		return NULL;
	pc->next = NULL;
	pc->tid = tid;
	pc->tag = tag;
	pc->seq = seq;
	pc->nrec = nrec;
	memcpy(pc->recs, recs, words * sizeof(uint64_t));
	return pc;
}

/* ------------------------------------------------------ pending heap -- */

static int heap_push(struct tstate *t, struct pchunk *pc)
{
	size_t i;

	if (t->nheap == t->capheap) {
		size_t ncap = t->capheap ? t->capheap * 2 : 8;
		struct pchunk **nh = realloc(t->heap, ncap * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		t->heap = nh;
		t->capheap = ncap;
	}
	i = t->nheap++;
	while (i > 0 && t->heap[(i - 1) / 2]->seq > pc->seq) {
		t->heap[i] = t->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	t->heap[i] = pc;
	return 0;
}

static struct pchunk *heap_pop(struct tstate *t)
{
	struct pchunk *top = t->heap[0], *last = t->heap[--t->nheap];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < t->nheap) {
		if (c + 1 < t->nheap && t->heap[c + 1]->seq < t->heap[c]->seq)
			c++;
		if (t->heap[c]->seq >= last->seq)
			break;
		t->heap[i] = t->heap[c];
		i = c;
	}
	if (t->nheap)
		t->heap[i] = last;
	return top;
}

/* --------------------------------------------------------- analysis -- */

/* Process pid's group in w, made on first use. NULL: out of memory. */
struct group *runner_worker__group(struct worker *w, uint32_t pid)
{
	struct group *g;
	bool created;

	g = hmap__obj(&w->groups, pid, sizeof(*g), &created);
	if (!g || !created)
		return g;
	g->pid = pid;
	if (an_set__init(&g->set, w->r->ops, w->r->nops, &w->r->ctx)) {
		/* Left in the map with no instance (an_set__fini accepts a
		 * zeroed set): its threads go to the worker's set. */
		memset(&g->set, 0, sizeof(g->set));
		return NULL;
	}
	g->sink = (struct shadow_sink){
		.on_call = runner_worker__shadow_on_call,
		.on_return = runner_worker__shadow_on_return,
		.ctx = &g->set,
	};
	return g;
}

/* Point t at the analyzers of process pid (per_process), or of the
 * worker. A process whose group cannot be made (out of memory) is
 * analyzed with the worker's set: in the merged figures, not its own. */
static void tstate_bind(struct worker *w, struct tstate *t, uint32_t pid)
{
	struct group *g = w->r->per_process ? runner_worker__group(w, pid) : NULL;

	if (g && !g->set.n && w->r->nops)
		g = NULL;
	if (w->r->per_process && !g)
		w->st.unattributed++;
	t->grp = g;
	t->set = g ? &g->set : &w->set;
	t->sink = g ? &g->sink : &w->sink;
	if (g)
		g->st.threads++;
}

static struct tstate *tstate_get(struct worker *w, uint32_t tid, uint32_t pid)
{
	struct tstate *t;
	bool created;

	if (w->last && w->last->tid == tid)
		return w->last;
	t = hmap__obj(&w->tids, tid, sizeof(*t), &created);
	if (!t)
		return NULL;
	if (created) {
		t->tid = tid;
		shadow__init(&t->sh, tid);
		t->sh.partial = w->r->partial;
		t->sh.aft_in = w->r->ctx.aft_in;
		t->sh.aft_out = w->r->ctx.aft_out;
		t->sh.naft = w->r->ctx.nfuncs;
		tstate_bind(w, t, pid);
		w->st.threads++;
	}
	return w->last = t;
}

void runner_worker__tstate_free(struct tstate *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nheap; i++)
		free(t->heap[i]);
	free(t->heap);
	free(t->fork_snap);
	shadow__fini(&t->sh);
	free(t);
}

/* An I/O record: the analyzers see it with the thread's live frames. */
static void dispatch_io(struct worker *w, struct tstate *t, const uint64_t *rec)
{
	struct rec_io r;
	struct an_io io;

	rec__decode_io(rec, &r);
	io = (struct an_io){
		.tid = t->tid,
		.sc = r.sc,
		.fdkind = r.fdkind,
		.failed = (r.flags & CABBPF_IO_ERR) != 0,
		.fd = r.fd,
		.req = r.req,
		.ret = (r.flags & CABBPF_IO_ERR) ? 0 : r.ret,
		.ts = r.ts,
		.frames = t->sh.f,
		.depth = t->sh.depth,
	};
	an_set__on_io(t->set, &io);
	w->st.io_records++;
	if (t->grp)
		t->grp->st.io_records++;
}

/* ------------------------------------------------------------ forks -- */

/* FORK in t's stream (runner.h, Forks): its live frames now are child's
 * too. Published for the child's worker under the child's tid; a copy
 * already there that no child took (a child whose FORKED was lost, its
 * tid reused since) is counted and replaced. */
static void fork_publish(struct worker *w, struct tstate *t, uint32_t child, uint64_t seq)
{
	struct runner *r = w->r;
	struct fork_snap *snap, *old;
	uint64_t *v;
	size_t i;
	int err;

	snap = malloc(sizeof(*snap) + t->sh.depth * sizeof(snap->f[0]));
	if (!snap) {
		w->st.nomem_records++; /* the child waits until the join, then starts empty */
		return;
	}
	snap->ptid = t->tid;
	snap->pseq = seq;
	snap->n = t->sh.depth;
	for (i = 0; i < snap->n; i++) {
		snap->f[i] = t->sh.f[i];
		snap->f[i].vals = NULL; /* the parent's */
	}
	pthread_mutex_lock(&r->fork_lock);
	err = hmap__upsert(&r->forks, child, &v);
	if (!err) {
		old = (struct fork_snap *)(uintptr_t)*v;
		*v = (uintptr_t)snap;
		snap = old;
		if (old)
			w->st.forks_unclaimed++;
	}
	pthread_mutex_unlock(&r->fork_lock);
	if (err)
		w->st.nomem_records++;
	else
		atomic_fetch_add_explicit(&r->forks_gen, 1, memory_order_release);
	free(snap);
}

/* The copy of t's parent's frames, taken from the table (NULL: not there
 * yet). An entry taken is left 0: the map has no removal. */
static struct fork_snap *fork_take(struct runner *r, const struct tstate *t)
{
	struct fork_snap *snap = NULL;
	uint64_t *v;

	pthread_mutex_lock(&r->fork_lock);
	v = hmap__find(&r->forks, t->tid);
	if (v && *v) {
		snap = (struct fork_snap *)(uintptr_t)*v;
		if (snap->ptid == t->fork_ptid && snap->pseq == t->fork_pseq)
			*v = 0;
		else
			snap = NULL; /* another fork's (a tid reused): not ours */
	}
	pthread_mutex_unlock(&r->fork_lock);
	return snap;
}

static void drain_pending(struct worker *w, struct tstate *t);

/* t's wait is over: with its parent's frames (snap), or without (NULL:
 * given up on, counted when its FORKED is analyzed). Its held records go
 * now, in order. */
static void fork_settle(struct worker *w, struct tstate *t, struct fork_snap *snap)
{
	t->fork_wait = false;
	t->fork_snap = snap;
	w->nwait--;
	drain_pending(w, t);
}

/* Threads of w waiting for their parents' frames: those whose frames
 * were published since w last looked go on. */
static void fork_poll(struct worker *w)
{
	uint64_t gen = atomic_load_explicit(&w->r->forks_gen, memory_order_acquire);
	struct hmap_ent *e;
	size_t it = 0;

	if (!w->nwait || gen == w->forks_seen)
		return;
	w->forks_seen = gen;
	while (w->nwait && hmap__next(&w->tids, &it, &e)) {
		struct tstate *t = (struct tstate *)(uintptr_t)e->val;
		struct fork_snap *snap;

		if (t && t->fork_wait && (snap = fork_take(w->r, t)))
			fork_settle(w, t, snap);
	}
}

/* FORKED, t's first record: its shadow stack starts as its parent's did
 * at the fork, when that is known (t->fork_snap). */
static void fork_inherit(struct worker *w, struct tstate *t, const struct rec *ev)
{
	struct fork_snap *snap = t->fork_snap;

	t->fork_snap = NULL;
	shadow__set_epoch(&t->sh, ev->epoch);
	if (!snap) {
		w->st.forks_unknown++;
		return;
	}
	/* -ENOMEM: the frames that could not be taken are in nomem */
	(void)shadow__inherit(&t->sh, snap->f, snap->n, ev->ts);
	w->st.forks_inherited++;
	free(snap);
}

/* Run records, in program order, through the thread's shadow stack. */
static void dispatch(struct worker *w, struct tstate *t, const uint64_t *recs, uint32_t nrec)
{
	uint32_t nfuncs = w->r->ctx.nfuncs, i;
	struct rec ev;
	bool noret;

	for (i = 0; i < nrec; i++) {
		rec__decode(recs + (size_t)i * REC_WORDS, &ev);
		if (ev.kind == CABBPF_EV_VALUE) { /* epoch: its meta; ts, sp: its bytes */
			if (ev.fid >= nfuncs)
				w->st.bad_records++;
			else if (!shadow__value(&t->sh, ev.fid, ev.epoch, ev.ts, ev.sp))
				w->st.value_unset++;
			w->st.value_records++;
			continue;
		}
		if (ev.ts > t->last_ts)
			t->last_ts = ev.ts; /* w1 is the timestamp in every kind */
		if (ev.kind == CABBPF_EV_IO) {
			dispatch_io(w, t, recs + (size_t)i * REC_WORDS);
			continue;
		}
		if (ev.kind == CABBPF_EV_EXEC) {
			shadow__exec(&t->sh, ev.ts, t->sink);
			w->st.guard_records++;
			continue;
		}
		if (ev.kind == CABBPF_EV_FORK) { /* fid: the child's tid */
			fork_publish(w, t, ev.fid, t->next + i);
			w->st.guard_records++;
			continue;
		}
		if (ev.kind == CABBPF_EV_FORKED) {
			fork_inherit(w, t, &ev);
			w->st.guard_records++;
			continue;
		}
		if (ev.kind == CABBPF_EV_CPU_SAMPLE) {
			shadow__cpu_sample(&t->sh);
			w->st.sample_records++;
			continue;
		}
		if (ev.kind == CABBPF_EV_SCHED) { /* sp: the off-CPU interval, ns */
			shadow__offcpu(&t->sh, ev.sp);
			w->st.sched_records++;
			continue;
		}
		if (ev.kind == CABBPF_EV_GUARD) { /* fid: the guard site, not a function */
			(void)shadow__guard(&t->sh, ev.fid, ev.sp, ev.ts, t->sink);
			w->st.guard_records++;
			continue;
		}
		/* An entry whose return the probe did not arm (a process not
		 * yet guarded, in whole-container mode): flagged in the fid. */
		noret = ev.kind == CABBPF_EV_ENTRY && (ev.fid & REC_FID_NORET);
		ev.fid &= ~REC_FID_NORET;
		if (ev.fid >= nfuncs) {
			w->st.bad_records++;
			continue;
		}
		if (ev.kind == CABBPF_EV_SIZE) { /* sp: the designated size */
			if (!shadow__size(&t->sh, ev.fid, ev.sp))
				w->st.size_unset++;
			w->st.size_records++;
			continue;
		}
		shadow__set_epoch(&t->sh, ev.epoch);
		if (ev.kind == CABBPF_EV_ENTRY) {
			/* -ENOMEM is counted in the shadow's nomem. */
			(void)shadow__entry_slot(&t->sh, ev.fid, ev.sp, ev.ts, noret, ev.slot,
						 t->sink);
		} else if (ev.kind == CABBPF_EV_RETURN) {
			shadow__return(&t->sh, ev.fid, ev.sp, ev.ts, t->sink);
		} else {
			w->st.bad_records++;
			continue;
		}
		w->st.records++;
		if (t->grp)
			t->grp->st.records++;
	}
}

/* Analyze the part of [seq, seq + nrec) at or after t->next; the part
 * before it was analyzed already. Requires seq <= t->next. */
static void dispatch_from(struct worker *w, struct tstate *t, uint64_t seq, const uint64_t *recs,
			  uint32_t nrec)
{
	uint64_t skip = t->next - seq;

	if (skip >= nrec) {
		w->st.dup_records += nrec;
		return;
	}
	w->st.dup_records += skip;
	dispatch(w, t, recs + skip * REC_WORDS, nrec - (uint32_t)skip);
	t->next = seq + nrec;
}

/* Analyze pending chunks while the next one starts at (or before) t->next. */
static void drain_pending(struct worker *w, struct tstate *t)
{
	/* a forked child waiting for its parent's frames: not yet */
	while (!t->fork_wait && t->nheap && t->heap[0]->seq <= t->next) {
		struct pchunk *pc = heap_pop(t);

		w->pending_recs -= pc->nrec;
		dispatch_from(w, t, pc->seq, pc->recs, pc->nrec);
		free(pc);
	}
}

/* Give up on the hole before the lowest pending chunk: count it, go on. */
static void skip_gap(struct worker *w, struct tstate *t)
{
	uint64_t first = t->heap[0]->seq;

	w->st.order_gaps++;
	w->st.gap_records += first - t->next;
	t->next = first;
	drain_pending(w, t);
}

/*
 * One chunk of thread tid. pc, if not NULL, already holds these records
 * on the heap (an inbox chunk): it is kept as the pending copy or freed.
 */
int runner_worker__ingest(struct worker *w, uint32_t tid, uint32_t tag, uint64_t seq,
			 const uint64_t *recs, uint32_t nrec, struct pchunk *pc)
{
	struct tstate *t;
	int err = 0;

	if (!nrec)
		goto cleanup;
	t = tstate_get(w, tid, tag);
	if (!t) {
		w->st.nomem_records += nrec;
		err = -ENOMEM;
		goto cleanup;
	}
	if (seq == 0 && t->next > 0) {
		/* Sequence numbers only restart with a new thread: the tid was
		 * reused. The old thread's frames died with it. */
		w->st.tid_reuse++;
		shadow__abandon(&t->sh, recs[1], t->sink);
		t->next = 0;
		/* Possibly by another process (the chunk's tag says): what
		 * the old thread's shadow counted is the old process's. */
		if (w->r->per_process && (!t->grp || t->grp->pid != tag)) {
			runner_worker__add_shadow(&w->st, t);
			if (t->grp)
				runner_worker__add_shadow(&t->grp->st, t);
			memset(&t->sh.c, 0, sizeof(t->sh.c));
			tstate_bind(w, t, tag);
		}
	}
	/* A forked child's first record (runner.h, Forks): its parent's
	 * frames first; until they come, its records wait in its heap. */
	if (seq == 0 && t->next == 0 && !t->fork_wait && !t->fork_snap &&
	    (uint32_t)(recs[0] >> 56) == CABBPF_EV_FORKED && recs[2] != CABBPF_FORK_LOST) {
		t->fork_ptid = (uint32_t)recs[0];
		t->fork_pseq = recs[2];
		t->fork_snap = fork_take(w->r, t);
		if (!t->fork_snap) {
			t->fork_wait = true;
			w->nwait++;
			w->st.forks_waited++;
		}
	}
	if (seq <= t->next && !t->fork_wait) {
		dispatch_from(w, t, seq, recs, nrec);
		drain_pending(w, t);
		goto cleanup;
	}
	/* A hole before this chunk, or its thread waits for its parent's
	 * frames: hold it until the hole fills or the frames come. */
	if (!pc) {
		pc = pchunk_new(tid, tag, seq, recs, nrec);
		if (!pc) {
			w->st.nomem_records += nrec;
			err = -ENOMEM;
			goto cleanup;
		}
	}
	if (heap_push(t, pc)) {
		w->st.nomem_records += nrec;
		err = -ENOMEM;
		goto cleanup;
	}
	pc = NULL; /* the heap owns it now */
	if (!t->fork_wait || seq > t->next)
		w->st.out_of_order++;
	w->pending_recs += nrec;
	while (w->pending_recs > w->r->max_pending && t->nheap) {
		if (t->fork_wait) {
			/* waited too long: the child starts empty (counted) */
			fork_settle(w, t, NULL);
			continue;
		}
		w->st.forced_gaps++;
		skip_gap(w, t);
	}
cleanup:
	free(pc);
	/* this chunk may have published frames a child of w waits for */
	fork_poll(w);
	return err;
}

/* --------------------------------------------------------- threads -- */

static void forward(struct worker *to, struct worker *from, const struct cab_chunk *ch)
{
	struct pchunk *pc = pchunk_new(ch->tid, ch->tag, ch->seq, ch->recs, ch->nrec);

	if (!pc) {
		from->st.nomem_records += ch->nrec;
		return;
	}
	pthread_mutex_lock(&to->lock);
	if (to->in_tail)
		to->in_tail->next = pc;
	else
		to->in_head = pc;
	to->in_tail = pc;
	/* Inside the lock and before this worker can leave the readers: the
	 * owner reads readers first, then in_count, so it cannot miss it. */
	atomic_fetch_add_explicit(&to->in_count, 1, memory_order_release);
	pthread_mutex_unlock(&to->lock);
	from->st.forwarded++;
}

/* Take the whole inbox and analyze it. Returns chunks analyzed. */
static unsigned drain_inbox(struct worker *w)
{
	struct pchunk *pc, *next;
	unsigned n = 0;

	if (!atomic_load_explicit(&w->in_count, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&w->lock);
	pc = w->in_head;
	w->in_head = w->in_tail = NULL;
	atomic_store_explicit(&w->in_count, 0, memory_order_relaxed);
	pthread_mutex_unlock(&w->lock);
	for (; pc; pc = next, n++) {
		next = pc->next;
		pc->next = NULL;
		runner_worker__ingest(w, pc->tid, pc->tag, pc->seq, pc->recs, pc->nrec, pc);
	}
	return n;
}

/* One round over this worker's buffers. Returns chunks taken; sets
 * *all_done when every buffer is closed and drained. */
static unsigned poll_bufs(struct worker *w, bool *all_done)
{
	unsigned i, k, n = 0;
	bool done = true;

	for (i = 0; i < w->nbufs; i++) {
		if (w->done[i])
			continue;
		for (k = 0; k < BATCH; k++) {
			const struct cab_chunk *ch = cab_pp__take(w->bufs[i]);
			struct worker *o;

			if (!ch)
				break;
			w->st.chunks++;
			if (w->r->tap)
				w->r->tap(w->r->tap_ctx, ch->tid, ch->seq, ch->recs, ch->nrec);
			o = runner_worker__owner(w->r, ch->tid);
			/* tap_only: recorded, not analyzed */
			if (!w->r->tap_only && o == w)
				runner_worker__ingest(w, ch->tid, ch->tag, ch->seq, ch->recs, ch->nrec, NULL);
			else if (!w->r->tap_only)
				forward(o, w, ch);
			cab_pp__release(w->bufs[i], ch);
			n++;
		}
		/* Drained is only final after a take found nothing. */
		if (k < BATCH && cab_pp__drained(w->bufs[i]))
			w->done[i] = true;
		else
			done = false;
	}
	*all_done = done;
	return n;
}

void *runner_worker__main(void *arg)
{
	struct worker *w = arg;
	struct runner *r = w->r;
	bool reading = true, all_done;
	unsigned idle = 0, n;

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		fork_poll(w); /* frames other workers published */
		n = drain_inbox(w);
		if (reading) {
			n += poll_bufs(w, &all_done);
			if (all_done) {
				reading = false;
				atomic_fetch_sub_explicit(&r->readers, 1, memory_order_acq_rel);
			}
		} else if (atomic_load_explicit(&r->readers, memory_order_acquire) == 0 &&
			   atomic_load_explicit(&w->in_count, memory_order_acquire) == 0) {
			/* Nobody reads buffers any more, so nobody can forward. */
			break;
		}
		if (n)
			idle = 0;
		else
			backoff(&idle);
	}
	if (reading)
		atomic_fetch_sub_explicit(&r->readers, 1, memory_order_acq_rel);
	return NULL;
}


void runner_worker__shadow_on_call(void *ctx, const struct an_call *c)
{
	an_set__on_call(ctx, c);
}

void runner_worker__shadow_on_return(void *ctx, const struct an_return *r)
{
	an_set__on_return(ctx, r);
}

/* A thread's shadow counts into st (returns.*, open). */
void runner_worker__add_shadow(struct runner_stats *st, const struct tstate *t)
{
	/* Frames that armed no return are in returns.noret already, and
	 * those a forked child inherited in returns.inherited. */
	size_t noret = shadow__open_noret(&t->sh) + shadow__open_inherited(&t->sh);

	/* A thread that ended while unwinding (pthread_cancel, pthread_exit:
	 * forced unwinding never meets a catch) left its frames unwound, not
	 * open. */
	if (t->sh.unwinding)
		st->returns.unwound += shadow__depth(&t->sh) - noret;
	else
		st->open += shadow__depth(&t->sh) - noret;
	st->returns.matched += t->sh.c.matched;
	st->returns.missing += t->sh.c.missing;
	st->returns.unwound += t->sh.c.unwound;
	st->returns.switched += t->sh.c.switched;
	st->returns.exec += t->sh.c.exec;
	st->returns.orphan += t->sh.c.orphan;
	st->returns.sampled += t->sh.c.sampled;
	st->returns.orphan_sampled += t->sh.c.orphan_sampled;
	st->returns.window_start += t->sh.c.window_start;
	st->returns.before += t->sh.c.before;
	st->returns.depth_limited += t->sh.c.depth_limited;
	st->returns.nomem += t->sh.c.nomem;
	st->returns.noret += t->sh.c.noret;
	st->returns.samples += t->sh.c.samples;
	st->returns.samples_root += t->sh.c.samples_root;
	st->returns.aft_ns += t->sh.c.aft_ns;
	st->returns.inherited += t->sh.c.inherited;
	st->returns.inherited_matched += t->sh.c.inherited_matched;
}

/* After the threads: analyze what still waits for a hole, in order. */
void runner_worker__finish(struct worker *w)
{
	struct hmap_ent *e;
	size_t it = 0;

	while (hmap__next(&w->tids, &it, &e)) {
		struct tstate *t = (struct tstate *)(uintptr_t)e->val;

		if (!t)
			continue;
		while (t->nheap)
			skip_gap(w, t);
		runner_worker__add_shadow(&w->st, t);
		if (t->grp)
			runner_worker__add_shadow(&t->grp->st, t);
		/* Counted above as open (or unwound); the analyzers get their
		 * times up to the thread's last event (an_return.open). */
		if (!t->sh.unwinding)
			shadow__close_open(&t->sh, t->last_ts, t->sink);
	}
}

/* Every child still waiting for its parent's frames goes on: with them
 * once its parent's pending records publish them, else without. Parents
 * first (their holes given up on, as runner_worker__finish would), so a
 * child's own FORKs reach its children; a child is given up on only
 * when nothing else moves, one at a time. */
void runner_worker__finish_forks(struct runner *r)
{
	struct hmap_ent *e;
	struct tstate *stuck;
	unsigned i;
	size_t it;
	bool moved;

	for (;;) {
		do {
			moved = false;
			stuck = NULL;
			for (i = 0; i < r->nw; i++) {
				struct worker *w = &r->w[i];

				it = 0;
				while (hmap__next(&w->tids, &it, &e)) {
					struct tstate *t = (struct tstate *)(uintptr_t)e->val;
					struct fork_snap *snap;

					if (!t)
						continue;
					if (t->fork_wait && (snap = fork_take(r, t))) {
						fork_settle(w, t, snap);
						moved = true;
					}
					if (t->fork_wait) {
						if (!stuck)
							stuck = t;
						continue;
					}
					if (t->nheap) {
						while (t->nheap && !t->fork_wait)
							skip_gap(w, t);
						moved = true;
					}
				}
			}
		} while (moved);
		if (!stuck)
			return;
		fork_settle(runner_worker__owner(r, stuck->tid), stuck, NULL);
	}
}

void runner_worker__forks_free(struct runner *r, struct runner_stats *st)
{
	struct hmap_ent *e;
	size_t it = 0;

	while (hmap__next(&r->forks, &it, &e)) {
		if (!e->val)
			continue;
		if (st)
			st->forks_unclaimed++;
		free((void *)(uintptr_t)e->val);
		e->val = 0;
	}
}
