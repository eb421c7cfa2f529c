/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The runner's state, shared by its files (not a public API; the design
 * is described in runner.h):
 *   runner.c         making, starting, feeding, joining and freeing it;
 *                    the totals and the per-process groups after the run;
 *   runner_worker.c  the workers: chunks in, each thread's ordering heap,
 *                    dispatch to the shadow stacks and the analyzers;
 *   runner_results.c the results after the run, as data for the report
 *                    (user/report/sections.c writes them).
 */
#ifndef CABBPF_RUNNER_INT_H
#define CABBPF_RUNNER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "analyzers/analyzer.h"
#include "common/hmap.h"
#include "pipeline/runner.h"
#include "pipeline/shadow.h"

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

/* A parent thread's live frames at a fork, for its child (runner.h,
 * Forks): made by the parent's worker, taken (and freed) by the child's. */
struct fork_snap {
	uint32_t ptid; /* the parent's stream */
	uint64_t pseq; /* its FORK record's sequence number */
	size_t n;
	struct shadow_frame f[]; /* [0] outermost; vals NULL */
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
	/* a forked child (runner.h, Forks): its first record waits in the
	 * heap until its parent's frames are published (fork_wait), then
	 * takes fork_snap (NULL: not known, it starts empty) */
	bool fork_wait;
	uint32_t fork_ptid;
	uint64_t fork_pseq;
	struct fork_snap *fork_snap;
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
	size_t nwait;		/* its threads with fork_wait */
	uint64_t forks_seen;	/* runner.forks_gen when it last looked */

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
	/* Forks (runner.h): the parents' frames, child tid -> struct
	 * fork_snap *, under fork_lock; forks_gen counts what was added */
	pthread_mutex_t fork_lock;
	bool fork_lock_init;
	struct hmap forks;
	_Atomic uint64_t forks_gen;
};


/* The worker that analyzes thread tid (every chunk of a thread goes to
 * one worker: its order is that worker's to keep). */
static inline struct worker *runner_worker__owner(struct runner *r, uint32_t tid)
{
	return &r->w[tid % r->nw];
}

/* runner_worker.c */
/* A worker thread's body (pthread_create's start routine, arg: its struct
 * worker); returns NULL once every buffer is closed and drained. */
void *runner_worker__main(void *arg);
/* One chunk of thread tid into worker w: dispatched now when it is the
 * next in the thread's order, else held (pc, if not NULL, already holds
 * the records and is kept or freed). Returns 0 or -ENOMEM. Its worker's
 * thread, or the feeder while the workers are not running. */
int runner_worker__ingest(struct worker *w, uint32_t tid, uint32_t tag, uint64_t seq,
			 const uint64_t *recs, uint32_t nrec, struct pchunk *pc);
/* After the threads: what still waits for a hole, analyzed in order, and
 * the shadow stacks' counts summed. */
void runner_worker__finish(struct worker *w);
/* After the threads, before runner_worker__finish: every forked child
 * still waiting for its parent's frames gets them, or starts without
 * (runner.h, Forks); parents' pending records are analyzed first. The
 * joining thread, with every worker stopped. */
void runner_worker__finish_forks(struct runner *r);
/* Copies of parents' frames no child took: counted into st, freed. The
 * joining thread, after runner_worker__finish. */
void runner_worker__forks_free(struct runner *r, struct runner_stats *st);
/* Process pid's group in w, made on first use. NULL: out of memory. */
struct group *runner_worker__group(struct worker *w, uint32_t pid);
/* Frees a thread's state (NULL is fine). */
void runner_worker__tstate_free(struct tstate *t);
/* A thread's shadow-stack counts into st (returns.*, open). */
void runner_worker__add_shadow(struct runner_stats *st, const struct tstate *t);
/* The shadow stack's callbacks: into the analyzer set ctx (analyzer.h). */
void runner_worker__shadow_on_call(void *ctx, const struct an_call *c);
void runner_worker__shadow_on_return(void *ctx, const struct an_return *r);

#endif
