// SPDX-License-Identifier: BSD-2-Clause
/* The design (order, ownership, termination) is described in runner.h. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyzers/analyzer.h"
#include "common/json.h"
#include "pipeline/record.h"
#include "pipeline/runner.h"
#include "cab/cab.h"
#include "cabbpf_event.h"
#include "common/log.h"

#define DEFAULT_TOP 50
#define DEFAULT_MAX_PENDING (4u << 20) /* records */
#define MAX_THREADS 256
/* Chunks taken from one buffer before the next buffer gets its turn: a
 * few, so one busy CPU cannot starve the others' chunks, which would make
 * migrating threads wait longer in the pending sets. */
#define BATCH 4
#define SPIN_ROUNDS 64
#define SLEEP_MIN_NS 2000000L /* the loader hands chunks over every 2 ms */
#define SLEEP_MAX_NS 2000000L

/* A chunk held aside: waiting for a hole to fill, or in an inbox. */
struct pchunk {
	struct pchunk *next; /* inbox FIFO link */
	uint64_t seq;
	uint32_t tid;
	uint32_t tag; /* the chunk's tag: the thread's process */
	uint32_t nrec;
	uint64_t recs[]; /* nrec * REC_WORDS */
};

/* Per process (runner_opts.per_process): the analyzer instances fed by
 * its threads, and what its threads did; owned by one worker (each
 * worker has its own groups, folded at the join). */
struct group {
	uint32_t pid;
	struct an_set set;
	struct shadow_sink sink; /* feeds set */
	struct runner_stats st;	 /* threads, records, io_records, open, returns */
};

/* Order and shadow state of one program thread; owned by one worker. */
struct tstate {
	uint32_t tid;
	/* where its calls go: the worker's set, or its process's group */
	struct an_set *set;
	const struct shadow_sink *sink;
	struct group *grp; /* NULL unless per_process */
	uint64_t next; /* next expected sequence number */
	uint64_t last_ts; /* timestamp of the thread's last record analyzed */
	struct shadow sh;
	struct pchunk **heap; /* pending chunks, min-heap by seq */
	size_t nheap, capheap;
};

struct worker {
	struct runner *r;
	unsigned id;
	pthread_t th;
	bool th_started;

	struct cab_pp **bufs; /* the buffers this worker alone consumes */
	bool *done;	      /* bufs[i] drained */
	unsigned nbufs;

	struct an_set set;
	struct shadow_sink sink;
	struct hmap groups;  /* per_process: pid -> struct group * */
	struct hmap tids;    /* tid -> struct tstate * */
	struct tstate *last; /* previous chunk's thread */
	uint64_t pending_recs;
	struct runner_stats st;

	/* Inbox: chunks of this worker's tids read by other workers. */
	pthread_mutex_t lock;
	bool lock_init;
	struct pchunk *in_head, *in_tail;
	_Atomic uint64_t in_count; /* lets the owner skip the lock when empty */
};

struct runner {
	struct an_ctx ctx;
	const struct analyzer_ops *ops[AN_MAX];
	unsigned nops;
	size_t max_pending;

	struct worker *w;
	unsigned nw;

	_Atomic unsigned readers; /* workers still reading their buffers */
	_Atomic bool stop;	  /* abandon: start failed, or freed unjoined */
	bool started, joined;
	bool no_returns;	/* runner_opts.no_returns */
	const uint8_t *partial; /* runner_opts.partial */
	/* runner__set_lost: for the reports' lower-bound footnotes */
	uint64_t lost_calls, lost_io, overwritten;
	bool per_process;	/* runner_opts.per_process */
	uint32_t nfuncs_cap;	/* runner_opts.nfuncs: the tables' size */
	const _Atomic uint32_t *nfuncs_used; /* runner_opts.nfuncs_used */
	/* after the join, per_process: every process's merged group, by pid */
	struct group **procs;
	size_t nprocs;
	struct runner_stats st; /* totals, after join */
	void (*tap)(void *ctx, uint32_t tid, uint64_t seq, const uint64_t *recs, uint32_t nrec);
	void *tap_ctx;
	bool tap_only;
};

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

static void shadow_on_call(void *ctx, const struct an_call *c);
static void shadow_on_return(void *ctx, const struct an_return *r);

/* Process pid's group in w, made on first use. NULL: out of memory. */
static struct group *group_get(struct worker *w, uint32_t pid)
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
		.on_call = shadow_on_call,
		.on_return = shadow_on_return,
		.ctx = &g->set,
	};
	return g;
}

/* Point t at the analyzers of process pid (per_process), or of the
 * worker. A process whose group cannot be made (out of memory) is
 * analyzed with the worker's set: in the merged figures, not its own. */
static void tstate_bind(struct worker *w, struct tstate *t, uint32_t pid)
{
	struct group *g = w->r->per_process ? group_get(w, pid) : NULL;

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

static void add_shadow(struct runner_stats *st, const struct tstate *t);

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
		tstate_bind(w, t, pid);
		w->st.threads++;
	}
	return w->last = t;
}

static void tstate_free(struct tstate *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nheap; i++)
		free(t->heap[i]);
	free(t->heap);
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

/* Run records, in program order, through the thread's shadow stack. */
static void dispatch(struct worker *w, struct tstate *t, const uint64_t *recs, uint32_t nrec)
{
	uint32_t nfuncs = w->r->ctx.nfuncs, i;
	struct rec ev;
	bool noret;

	for (i = 0; i < nrec; i++) {
		rec__decode(recs + (size_t)i * REC_WORDS, &ev);
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
	while (t->nheap && t->heap[0]->seq <= t->next) {
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
static int ingest(struct worker *w, uint32_t tid, uint32_t tag, uint64_t seq, const uint64_t *recs,
		  uint32_t nrec, struct pchunk *pc)
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
			add_shadow(&w->st, t);
			if (t->grp)
				add_shadow(&t->grp->st, t);
			memset(&t->sh.c, 0, sizeof(t->sh.c));
			tstate_bind(w, t, tag);
		}
	}
	if (seq <= t->next) {
		dispatch_from(w, t, seq, recs, nrec);
		drain_pending(w, t);
		goto cleanup;
	}
	/* A hole before this chunk: hold it until the hole fills. */
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
	w->st.out_of_order++;
	w->pending_recs += nrec;
	while (w->pending_recs > w->r->max_pending && t->nheap) {
		w->st.forced_gaps++;
		skip_gap(w, t);
	}
cleanup:
	free(pc);
	return err;
}

/* --------------------------------------------------------- threads -- */

static inline struct worker *owner(struct runner *r, uint32_t tid)
{
	return &r->w[tid % r->nw];
}

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
		ingest(w, pc->tid, pc->tag, pc->seq, pc->recs, pc->nrec, pc);
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
			o = owner(w->r, ch->tid);
			/* tap_only: recorded, not analyzed */
			if (!w->r->tap_only && o == w)
				ingest(w, ch->tid, ch->tag, ch->seq, ch->recs, ch->nrec, NULL);
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

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct runner *r = w->r;
	bool reading = true, all_done;
	unsigned idle = 0, n;

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
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

/* ------------------------------------------------------------ public -- */

static void shadow_on_call(void *ctx, const struct an_call *c)
{
	an_set__on_call(ctx, c);
}

static void shadow_on_return(void *ctx, const struct an_return *r)
{
	an_set__on_return(ctx, r);
}

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
	r->max_pending = o->max_pending ? o->max_pending : DEFAULT_MAX_PENDING;
	r->no_returns = o->no_returns;
	r->tap = o->tap;
	r->tap_ctx = o->tap_ctx;
	r->tap_only = o->tap_only;
	err = analyzer__select(o->analyzers, r->ops, &r->nops);
	if (err)
		goto cleanup;
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
			.on_call = shadow_on_call,
			.on_return = shadow_on_return,
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

		err = -pthread_create(&r->w[i].th, NULL, worker_main, &r->w[i]);
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
	w = owner(r, tid);
	w->st.chunks++;
	return ingest(w, tid, tag, seq, recs, nrec, NULL);
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
	d->threads += s->threads;
	d->open += s->open;
	d->returns.matched += s->returns.matched;
	d->returns.missing += s->returns.missing;
	d->returns.unwound += s->returns.unwound;
	d->returns.switched += s->returns.switched;
	d->returns.exec += s->returns.exec;
	d->guard_records += s->guard_records;
	d->sched_records += s->sched_records;
	d->size_records += s->size_records;
	d->size_unset += s->size_unset;
	d->returns.orphan += s->returns.orphan;
	d->returns.sampled += s->returns.sampled;
	d->returns.orphan_sampled += s->returns.orphan_sampled;
	d->returns.window_start += s->returns.window_start;
	d->returns.before += s->returns.before;
	d->returns.depth_limited += s->returns.depth_limited;
	d->returns.nomem += s->returns.nomem;
	d->returns.noret += s->returns.noret;
	d->unattributed += s->unattributed;
}

/* A thread's shadow counts into st (returns.*, open). */
static void add_shadow(struct runner_stats *st, const struct tstate *t)
{
	/* Frames that armed no return are in returns.noret already. */
	size_t noret = shadow__open_noret(&t->sh);

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
}

/* After the threads: analyze what still waits for a hole, in order. */
static void finish_worker(struct worker *w)
{
	struct hmap_ent *e;
	size_t it = 0;

	while (hmap__next(&w->tids, &it, &e)) {
		struct tstate *t = (struct tstate *)(uintptr_t)e->val;

		if (!t)
			continue;
		while (t->nheap)
			skip_gap(w, t);
		add_shadow(&w->st, t);
		if (t->grp)
			add_shadow(&t->grp->st, t);
		/* Counted above as open (or unwound); the analyzers get their
		 * times up to the thread's last event (an_return.open). */
		if (!t->sh.unwinding)
			shadow__close_open(&t->sh, t->last_ts, t->sink);
	}
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
			d = group_get(&r->w[0], g->pid);
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
	for (i = 0; i < r->nw; i++) {
		finish_worker(&r->w[i]);
		add_stats(&r->st, &r->w[i].st);
	}
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

int runner__json_lower_bounds(const struct runner *r, struct json *w, unsigned kind)
{
	unsigned a;
	int err;

	err = json__begin_array(w);
	for (a = 0; !err && a < r->nops; a++)
		if (r->ops[a]->lower_bounds & kind & r->ctx.lost)
			err = json__string(w, r->ops[a]->name);
	return err ? err : json__end_array(w);
}

/* Under an analyzer's tables whose counts are marked as lower bounds
 * (AN_LB_MARK): which losses made them so. */
static void lower_bound_note(const struct runner *r, const struct analyzer_ops *ops, FILE *f)
{
	unsigned k = ops->lower_bounds & r->ctx.lost;
	const char *sep = "";

	if (!k)
		return;
	fprintf(f, "  (" AN_LB_MARK ": a lower bound:");
	if ((k & AN_LOST_CALLS) && r->lost_calls) {
		fprintf(f, " %" PRIu64 " call events", r->lost_calls);
		sep = " and";
	}
	if ((k & AN_LOST_IO) && r->lost_io) {
		fprintf(f, "%s %" PRIu64 " I/O events", sep, r->lost_io);
		sep = " and";
	}
	if (*sep)
		fprintf(f, " were lost (kernel ring full)");
	if (r->overwritten)
		fprintf(f, "%s %" PRIu64 " records were overwritten (--cab-mode sampling)",
			*sep ? ";" : "", r->overwritten);
	fprintf(f, ")\n");
}

const void *runner__analyzer(const struct runner *r, const char *name)
{
	if (!r->joined || !r->nw)
		return NULL;
	return an_set__state(&r->w[0].set, name);
}

/* The returns line of s. */
static void returns_text(const struct runner *r, const struct runner_stats *s, FILE *f)
{
	if (r->no_returns)
		fprintf(f, "returns: not traced (entry probes only: --entry-only, a Go, V8, JVM or "
			   "OCaml runtime, a target the guard could not hold, or a whole "
			   "container on a kernel without uprobe session programs)\n");
	else
		fprintf(f,
			"returns: %" PRIu64 " matched, %" PRIu64 " missing, %" PRIu64
			" unwound by exceptions or longjmp, %" PRIu64
			" lost to stack switches, backtraces or signal stacks, %" PRIu64
			" ended by exec, %" PRIu64 " orphan, %" PRIu64
			" entered before attach, %" PRIu64 " open at stop; %" PRIu64
			" calls got no return probe (kernel limit: 64 pending per thread)\n",
			s->returns.matched, s->returns.missing, s->returns.unwound,
			s->returns.switched, s->returns.exec, s->returns.orphan, s->returns.before,
			s->open, s->returns.depth_limited);
	if (s->returns.noret)
		fprintf(f,
			"returns: %" PRIu64 " calls entered without a return probe (their process was "
			"not guarded yet, or could not be)\n",
			s->returns.noret);
}

int runner__report_text(struct runner *r, FILE *f)
{
	const struct runner_stats *s = &r->st;
	unsigned a;
	int err;

	if (!r->joined)
		return -EINVAL;
	for (a = 0; a < r->nops; a++) {
		err = r->ops[a]->report_text(r->w[0].set.state[a], f);
		if (err)
			return err;
		lower_bound_note(r, r->ops[a], f);
		fputc('\n', f);
	}
	returns_text(r, s, f);
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
	json__kv_u64(w, "matched", s->returns.matched);
	json__kv_u64(w, "missing", s->returns.missing);
	json__kv_u64(w, "unwound", s->returns.unwound);
	json__kv_u64(w, "switched", s->returns.switched);
	json__kv_u64(w, "exec", s->returns.exec);
	json__kv_u64(w, "orphan", s->returns.orphan);
	json__kv_u64(w, "sampled", s->returns.sampled);
	json__kv_u64(w, "orphan_sampled", s->returns.orphan_sampled);
	json__kv_u64(w, "window_start", s->returns.window_start);
	json__kv_u64(w, "before_attach", s->returns.before);
	json__kv_u64(w, "open", s->open);
	json__kv_u64(w, "depth_limited", s->returns.depth_limited);
	json__kv_u64(w, "unarmed", s->returns.noret);
	json__end_object(w);
}

int runner__report_json(struct runner *r, struct json *w)
{
	const struct runner_stats *s = &r->st;
	unsigned a;
	int err;

	if (!r->joined || json__depth(w) == 0)
		return -EINVAL;
	for (a = 0; a < r->nops; a++) {
		err = r->ops[a]->report_json(r->w[0].set.state[a], w);
		if (err)
			return err;
	}
	returns_json(s, w);
	json__kv_u64(w, "order_gaps", s->order_gaps);
	json__kv_u64(w, "order_gap_events", s->gap_records);
	json__key(w, "runner");
	json__begin_object(w);
	json__kv_u64(w, "analyzer_threads", r->nw);
	json__kv_u64(w, "analyzed", s->records);
	json__kv_u64(w, "chunks", s->chunks);
	json__kv_u64(w, "out_of_order_chunks", s->out_of_order);
	json__kv_u64(w, "forwarded_chunks", s->forwarded);
	json__kv_u64(w, "forced_gaps", s->forced_gaps);
	json__kv_u64(w, "threads", s->threads);
	json__kv_u64(w, "tid_reuse", s->tid_reuse);
	json__kv_u64(w, "bad_records", s->bad_records);
	json__kv_u64(w, "dup_records", s->dup_records);
	json__kv_u64(w, "nomem_records", s->nomem_records + s->returns.nomem);
	json__kv_u64(w, "size_records", s->size_records);
	json__kv_u64(w, "size_unset", s->size_unset);
	if (r->per_process)
		json__kv_u64(w, "unattributed_threads", s->unattributed);
	return json__end_object(w);
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

int runner__report_text_proc(struct runner *r, size_t i, FILE *f)
{
	const struct group *g;
	unsigned a;
	int err;

	if (!r->joined || i >= r->nprocs)
		return -EINVAL;
	g = r->procs[i];
	for (a = 0; a < g->set.n; a++) {
		err = r->ops[a]->report_text(g->set.state[a], f);
		if (err)
			return err;
		fputc('\n', f);
	}
	returns_text(r, &g->st, f);
	fprintf(f, "events: %" PRIu64 " calls and returns of %" PRIu64 " thread%s, %" PRIu64 " I/O\n",
		g->st.records, g->st.threads, g->st.threads == 1 ? "" : "s", g->st.io_records);
	return ferror(f) ? -EIO : 0;
}

int runner__report_json_proc(struct runner *r, size_t i, struct json *w)
{
	const struct group *g;
	unsigned a;
	int err;

	if (!r->joined || i >= r->nprocs || json__depth(w) == 0)
		return -EINVAL;
	g = r->procs[i];
	for (a = 0; a < g->set.n; a++) {
		err = r->ops[a]->report_json(g->set.state[a], w);
		if (err)
			return err;
	}
	returns_json(&g->st, w);
	json__kv_u64(w, "threads", g->st.threads);
	json__kv_u64(w, "events", g->st.records);
	return json__kv_u64(w, "io_events", g->st.io_records);
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
			tstate_free((struct tstate *)(uintptr_t)e->val);
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
	free(r);
}
