// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>

#include "user/trace/stage.h"
#include "pipeline/record.h"

/* The open chunk of one CPU's buffer. */
struct open_chunk {
	uint64_t *recs; /* NULL when no chunk is open */
	uint64_t seq0;  /* sequence number of the first record */
	uint32_t tid;
	uint32_t pid; /* the chunk's tag: the thread's process */
	uint32_t n;
};

struct stage {
	unsigned ncpus;
	size_t cap; /* records per chunk */
	uint64_t events;
	uint64_t io_events; /* of events: CABBPF_EV_IO */
	uint64_t guard_events; /* of events: CABBPF_EV_GUARD and CABBPF_EV_EXEC */
	uint64_t sched_events; /* of events: CABBPF_EV_SCHED */
	uint64_t sample_events; /* of events: CABBPF_EV_CPU_SAMPLE */
	uint64_t execs;	       /* CABBPF_EV_EXEC events */
	uint64_t exec_ino;     /* the last one's executable (inode number) */
	uint64_t exec_ts, exec_seq; /* the last one: its time, its thread's sequence */
	uint32_t exec_dev;     /* and its device (kernel encoding: major << 20 | minor) */
	uint32_t exec_thread;  /* its caller when not the main thread, else 0 */
	uint64_t fail_after; /* tests: fail the push after fail_after - 1 events */
	uint32_t watch;	     /* stage__watch's fid + 1 (0: none) */
	uint64_t watched;    /* its entries */
	struct cab_pp **bufs;
	struct open_chunk *open;
};

int stage__new(unsigned ncpus, const struct cab_pp_opts *o, struct stage **out)
{
	struct cab_pp_opts po = *o;
	struct stage *s;
	unsigned i;
	int err;

	*out = NULL;
	po.record_words = REC_WORDS;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ncpus = ncpus;
	s->bufs = calloc(ncpus, sizeof(*s->bufs));
	s->open = calloc(ncpus, sizeof(*s->open));
	if (!s->bufs || !s->open) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < ncpus; i++) {
		err = cab_pp__new(&po, &s->bufs[i]);
		if (err)
			goto cleanup;
	}
	s->cap = cab_pp__chunk_records(s->bufs[0]);
	/* CABBPF_TEST_FAIL_STAGING=N: the N+1st push fails with -EIO, so the
	 * tests can see that a run ending on an error exits 1. */
	if (getenv("CABBPF_TEST_FAIL_STAGING"))
		s->fail_after = strtoull(getenv("CABBPF_TEST_FAIL_STAGING"), NULL, 10) + 1;
	*out = s;
	return 0;
cleanup:
	stage__free(s);
	return err;
}

struct cab_pp **stage__bufs(struct stage *s)
{
	return s->bufs;
}

static void publish(struct stage *s, unsigned cpu)
{
	struct open_chunk *oc = &s->open[cpu];

	if (!oc->recs)
		return;
	cab_pp__commit(s->bufs[cpu], oc->n);
	oc->recs = NULL;
}

int stage__push(struct stage *s, unsigned cpu, const struct cabbpf_event *e)
{
	struct open_chunk *oc;

	if (cpu >= s->ncpus)
		return -EINVAL;
	if (s->fail_after && s->events + 1 >= s->fail_after)
		return -EIO;
	oc = &s->open[cpu];
	/* A chunk holds consecutive records of one thread: start a new one
	 * when the thread changes, the chunk is full, or the thread's
	 * sequence jumped (its missing events are in another CPU's ring).
	 * Its tag is the thread's process (a tid reused by another process
	 * starts over at sequence 0: a new chunk). */
	if (!oc->recs || oc->tid != e->tid || oc->pid != e->pid || oc->n == s->cap ||
	    e->seq != oc->seq0 + oc->n) {
		publish(s, cpu);
		oc->recs = cab_pp__reserve_tag(s->bufs[cpu], e->tid, e->pid, e->seq);
		if (!oc->recs)
			return -ENOMEM;
		oc->tid = e->tid;
		oc->pid = e->pid;
		oc->seq0 = e->seq;
		oc->n = 0;
	}
	if (s->watch && e->kind == CABBPF_EV_ENTRY && (e->fid & ~CABBPF_FID_NORET) + 1 == s->watch)
		s->watched++;
	if (e->kind == CABBPF_EV_IO) {
		/* Same leading fields; the ring record is the larger struct. */
		const struct cabbpf_io_event *io = (const struct cabbpf_io_event *)e;
		struct rec_io r = {
			.sc = io->sc,
			.fdkind = io->fdkind,
			.flags = io->flags,
			.fd = io->fd,
			.ts = io->ts,
			.req = rec__clamp32(io->req),
			.ret = io->ret < 0 ? rec__clamp32((uint64_t)-io->ret)
					   : rec__clamp32((uint64_t)io->ret),
		};

		rec__encode_io(oc->recs + (size_t)oc->n * REC_WORDS, &r);
		s->io_events++;
	} else {
		rec__encode_epoch(
			oc->recs + (size_t)oc->n * REC_WORDS, e->kind, e->fid, e->epoch, e->ts,
			e->kind == CABBPF_EV_ENTRY ? rec__entry_sp(e->sp, e->pad) : e->sp);
		s->guard_events += e->kind == CABBPF_EV_GUARD || e->kind == CABBPF_EV_EXEC;
		s->sched_events += e->kind == CABBPF_EV_SCHED;
		s->sample_events += e->kind == CABBPF_EV_CPU_SAMPLE;
		/* A thread killed by another's execve is not an execve. The
		 * last by time, not by arrival: the per-CPU rings are
		 * drained one after another, so a launched target's first
		 * exec (on one CPU) can arrive after its next (on another).
		 * Without timestamps (--no-times), the sequence: execve keeps
		 * the thread's stream (bpf/trace.bpf.c on_exec). */
		if (e->kind == CABBPF_EV_EXEC && e->pad != CABBPF_EXEC_KILLED &&
		    (s->execs++ == 0 || e->ts > s->exec_ts ||
		     (e->ts == s->exec_ts && e->seq > s->exec_seq))) {
			s->exec_ts = e->ts;
			s->exec_seq = e->seq;
			s->exec_dev = e->fid;
			s->exec_ino = e->sp;
			/* its tid is its stream's, the old one (tstate.tid) */
			s->exec_thread = e->tid != e->pid ? e->tid : 0;
		}
	}
	oc->n++;
	s->events++;
	return 0;
}

void stage__watch(struct stage *s, uint32_t fid)
{
	s->watch = fid + 1;
}

uint64_t stage__watched(const struct stage *s)
{
	return s->watched;
}

void stage__flush(struct stage *s)
{
	unsigned i;

	for (i = 0; i < s->ncpus; i++)
		publish(s, i);
}

void stage__close(struct stage *s)
{
	unsigned i;

	stage__flush(s);
	for (i = 0; i < s->ncpus; i++)
		cab_pp__close(s->bufs[i]);
}

uint64_t stage__events(const struct stage *s)
{
	return s->events;
}

uint64_t stage__guard_events(const struct stage *s)
{
	return s->guard_events;
}

uint64_t stage__sched_events(const struct stage *s)
{
	return s->sched_events;
}

uint64_t stage__sample_events(const struct stage *s)
{
	return s->sample_events;
}

uint64_t stage__execs(const struct stage *s, struct stage_exec *last)
{
	if (last) {
		last->dev = s->exec_dev;
		last->ino = s->exec_ino;
		last->thread = s->exec_thread;
	}
	return s->execs;
}

uint64_t stage__io_events(const struct stage *s)
{
	return s->io_events;
}

void stage__free(struct stage *s)
{
	unsigned i;

	if (!s)
		return;
	if (s->bufs)
		for (i = 0; i < s->ncpus; i++)
			cab_pp__free(s->bufs[i]);
	free(s->bufs);
	free(s->open);
	free(s);
}
