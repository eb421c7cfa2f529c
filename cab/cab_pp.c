// SPDX-License-Identifier: BSD-2-Clause
/*
 * Per-processor CAB (Ha's dissertation, section 2.4.3, fig. 2.6).
 *
 * The producer (the loader thread that drains one CPU's kernel ring) works
 * at chunk granularity: it obtains a whole chunk, writes the thread id and
 * the sequence number of the first record next to CAB_MAGIC in the header,
 * fills records with plain stores, and publishes the chunk to a history
 * queue. The consumer (an analyzer thread) takes chunks from the history
 * queue in publication order and gives them back through a free queue.
 *
 *   free queue     consumer -> producer, chunk pointers, SPSC (Lamport).
 *   history queue  producer -> consumer, chunk pointers, SPSC (Lamport),
 *                  except that in sampling mode a producer with no free
 *                  chunk may also pop the oldest entry (recycle it). Both
 *                  sides therefore pop with a CAS on the head index; the
 *                  tail has one writer, the producer.
 *
 * Both queues have a power-of-two capacity larger than max_chunks. Every
 * chunk is in at most one place at a time (free queue, history queue, the
 * producer's open/spare slot, or held by the consumer), so neither queue can
 * ever be full and a push never has to check for room.
 *
 * Synchronisation is entirely on the queue indices: a chunk's contents are
 * written with plain stores by whichever side owns it and handed over by the
 * release store of a tail index (or the release half of the head CAS) that
 * the receiving side reads with acquire.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "cab/cab.h"
#include "cab/cab_internal.h"

/* Limits that keep size arithmetic far from overflow. */
#define PP_MAX_CHUNK_RECORDS (1u << 26) /* nrec fits 32 bits; <= 4 GiB a chunk */
#define PP_MAX_CHUNKS (1u << 20)

typedef _Atomic(struct cab_chunk *) pp_slot;

struct cab_pp {
	/* Read-only after cab_pp__new(). */
	size_t chunk_records;
	size_t chunk_bytes; /* header + records, rounded up to a cache line */
	size_t max_chunks;
	size_t mask; /* queue capacity - 1 */
	unsigned words;
	enum cab_mode mode;
	pp_slot *histq; /* history queue ring */
	pp_slot *freeq; /* free queue ring */
	/* Every chunk ever allocated, so cab_pp__free() can find chunks that
	 * sit in either queue or in the consumer's hands. Appended to only by
	 * the producer (growth); read by cab_pp__free() in [setup]. */
	struct cab_chunk **all;

	/* Producer side: written only by the producer thread. */
	alignas(CAB_LINE) struct cab_chunk *open; /* the chunk being filled */
	struct cab_chunk *spare;		  /* opened then published empty: reuse first */
	size_t nalloc;				  /* chunks allocated so far (<= max_chunks) */
	uint64_t free_head;			  /* next free-queue entry to pop */
	uint64_t free_tail_seen;		  /* cached free_tail: refreshed when empty */
	uint64_t hist_tail_own;			  /* producer's copy of hist_tail */
	_Atomic uint64_t produced;
	_Atomic uint64_t overwritten;
	_Atomic uint64_t stalls;
	_Atomic uint64_t blocked_ns;
	_Atomic uint64_t grown;

	/* Written by the producer, read by the consumer. */
	alignas(CAB_LINE) _Atomic uint64_t hist_tail;
	_Atomic int closed;

	/* Popped by the consumer, and by the producer when it recycles. */
	alignas(CAB_LINE) _Atomic uint64_t hist_head;

	/* Consumer side: written only by the consumer thread. */
	alignas(CAB_LINE) _Atomic uint64_t free_tail;
	_Atomic uint64_t consumed;
};

static void pp__free_chunks(struct cab_pp *pp)
{
	size_t i;

	if (!pp->all)
		return;
	for (i = 0; i < pp->nalloc; i++)
		free(pp->all[i]);
}

void cab_pp__free(struct cab_pp *pp)
{
	if (!pp)
		return;
	pp__free_chunks(pp);
	free(pp->all);
	free(pp->histq);
	free(pp->freeq);
	free(pp);
}

/* [producer or setup] Allocate one chunk and record it in pp->all.
 * Returns NULL when memory runs out. */
static struct cab_chunk *pp__alloc_chunk(struct cab_pp *pp)
{
	struct cab_chunk *ch;

	if (pp->nalloc >= pp->max_chunks)
		return NULL;
	ch = aligned_alloc(CAB_LINE, pp->chunk_bytes);
	if (!ch)
		return NULL;
	/* The header's MAGIC tells a reader of raw memory (a debugger, a
	 * core dump) where chunks start; it never changes afterwards. */
	ch->magic = CAB_MAGIC;
	ch->tid = 0;
	ch->nrec = 0;
	ch->seq = 0;
	ch->tag = 0;
	ch->pad = 0;
	pp->all[pp->nalloc++] = ch;
	return ch;
}

int cab_pp__new(const struct cab_pp_opts *opts, struct cab_pp **out)
{
	struct cab_pp_opts o = {0};
	struct cab_pp *pp = NULL;
	size_t cap, i;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (opts)
		o = *opts;
	if (o.record_words == 0)
		o.record_words = 1;
	if (o.record_words > CAB_MAX_RECORD_WORDS)
		return -EINVAL;
	if (o.mode != CAB_EXHAUSTIVE && o.mode != CAB_SAMPLING)
		return -EINVAL;
	if (o.chunk_records == 0) {
		/* Seed 001, section 3.1.3: a chunk of 4 x L1d lets the
		 * producer's L1 forget a chunk before the consumer reads it. */
		size_t room = 4 * cab__l1d_bytes() - sizeof(struct cab_chunk);

		o.chunk_records = room / (o.record_words * sizeof(uint64_t));
	}
	if (o.chunk_records > PP_MAX_CHUNK_RECORDS)
		return -EINVAL;
	if (o.nchunks == 0)
		o.nchunks = 64;
	if (o.max_chunks == 0)
		o.max_chunks = o.nchunks > PP_MAX_CHUNKS / 16 ? PP_MAX_CHUNKS : 16 * o.nchunks;
	if (o.nchunks > o.max_chunks || o.max_chunks > PP_MAX_CHUNKS)
		return -EINVAL;

	pp = calloc(1, sizeof(*pp));
	if (!pp)
		return -ENOMEM;
	pp->chunk_records = o.chunk_records;
	pp->words = o.record_words;
	pp->mode = o.mode;
	pp->max_chunks = o.max_chunks;
	pp->chunk_bytes =
		sizeof(struct cab_chunk) + o.chunk_records * o.record_words * sizeof(uint64_t);
	pp->chunk_bytes = (pp->chunk_bytes + CAB_LINE - 1) & ~(size_t)(CAB_LINE - 1);
	/* Strictly more slots than chunks: a queue can hold every chunk at
	 * once and still never wrap onto an entry that was not popped. */
	cap = (size_t)cab__pow2_ceil(o.max_chunks + 1);
	pp->mask = cap - 1;
	pp->histq = calloc(cap, sizeof(*pp->histq));
	pp->freeq = calloc(cap, sizeof(*pp->freeq));
	pp->all = calloc(o.max_chunks, sizeof(*pp->all));
	if (!pp->histq || !pp->freeq || !pp->all) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* [setup]: no other thread sees pp yet, relaxed stores suffice; the
	 * caller's hand-off of pp to the two threads orders them. */
	for (i = 0; i < o.nchunks; i++) {
		struct cab_chunk *ch = pp__alloc_chunk(pp);

		if (!ch) {
			err = -ENOMEM;
			goto cleanup;
		}
		atomic_store_explicit(&pp->freeq[i], ch, memory_order_relaxed);
	}
	atomic_store_explicit(&pp->free_tail, o.nchunks, memory_order_relaxed);
	pp->free_tail_seen = o.nchunks;
	*out = pp;
	return 0;
cleanup:
	cab_pp__free(pp);
	return err;
}

size_t cab_pp__chunk_records(const struct cab_pp *pp)
{
	return pp->chunk_records;
}

unsigned cab_pp__record_words(const struct cab_pp *pp)
{
	return pp->words;
}

/* [producer] Pop a chunk from the free queue, or NULL when it is empty. */
static struct cab_chunk *pp__pop_free(struct cab_pp *pp)
{
	struct cab_chunk *ch;

	if (pp->free_head == pp->free_tail_seen) {
		/* Acquire pairs with the release store of free_tail in
		 * cab_pp__release(): the consumer's last reads of the chunk
		 * happen before we overwrite it. */
		pp->free_tail_seen = atomic_load_explicit(&pp->free_tail, memory_order_acquire);
		if (pp->free_head == pp->free_tail_seen)
			return NULL;
	}
	ch = atomic_load_explicit(&pp->freeq[pp->free_head & pp->mask], memory_order_relaxed);
	/* Only the producer reads free_head: the consumer never needs it
	 * because the free queue cannot fill up (see the top comment). */
	pp->free_head++;
	return ch;
}

/* [producer] Sampling mode, pool exhausted: take back the oldest chunk
 * that the consumer has not taken yet. NULL when the history queue is
 * empty (the consumer holds every chunk). */
static struct cab_chunk *pp__recycle(struct cab_pp *pp)
{
	/* Acquire pairs with the acq_rel CAS in cab_pp__take(); it keeps the
	 * head we read no older than the consumer's last successful pop. */
	uint64_t h = atomic_load_explicit(&pp->hist_head, memory_order_acquire);

	while (h != pp->hist_tail_own) {
		struct cab_chunk *ch =
			atomic_load_explicit(&pp->histq[h & pp->mask], memory_order_relaxed);

		/* acq_rel pairs with the consumer's CAS in cab_pp__take():
		 * exactly one side wins entry h. The chunk's contents were
		 * written by this thread, and the consumer never reads them
		 * unless it wins, so no further ordering is needed. */
		if (atomic_compare_exchange_weak_explicit(&pp->hist_head, &h, h + 1,
							  memory_order_acq_rel,
							  memory_order_acquire)) {
			cab__cnt_add(&pp->overwritten, ch->nrec);
			return ch;
		}
	}
	return NULL;
}

uint64_t *cab_pp__reserve(struct cab_pp *pp, uint32_t tid, uint64_t seq)
{
	return cab_pp__reserve_tag(pp, tid, 0, seq);
}

uint64_t *cab_pp__reserve_tag(struct cab_pp *pp, uint32_t tid, uint32_t tag, uint64_t seq)
{
	struct cab_chunk *ch;
	struct cab__backoff b;
	uint64_t t0 = 0;

	if (pp->open) {
		/* At most one open chunk: a second reserve abandons the first
		 * (as if it were published with nrec == 0). */
		pp->spare = pp->open;
		pp->open = NULL;
	}
	ch = pp->spare;
	pp->spare = NULL;
	cab__backoff_init(&b);
	while (!ch) {
		ch = pp__pop_free(pp);
		if (ch)
			break;
		if (pp->nalloc < pp->max_chunks) {
			/* Dissertation 2.4.3: grow rather than wait, because the
			 * chunks may all be held by work that waits on us. */
			ch = pp__alloc_chunk(pp);
			if (!ch)
				return NULL;
			cab__cnt_add(&pp->grown, 1);
			break;
		}
		if (pp->mode == CAB_SAMPLING) {
			ch = pp__recycle(pp);
			if (ch)
				break;
		}
		/* Exhaustive at max_chunks (or sampling with every chunk in
		 * the consumer's hands): wait for a release. */
		if (!t0) {
			t0 = cab__now_ns();
			cab__cnt_add(&pp->stalls, 1);
		}
		cab__backoff_wait(&b);
	}
	if (t0)
		cab__cnt_add(&pp->blocked_ns, cab__now_ns() - t0);
	ch->tid = tid;
	ch->tag = tag;
	ch->seq = seq;
	ch->nrec = 0;
	pp->open = ch;
	return ch->recs;
}

void cab_pp__commit(struct cab_pp *pp, uint32_t nrec)
{
	struct cab_chunk *ch = pp->open;
	uint64_t t;

	if (!ch)
		return;
	pp->open = NULL;
	if (nrec > pp->chunk_records)
		nrec = (uint32_t)pp->chunk_records; /* caller bug: never read past the chunk */
	if (nrec == 0) {
		pp->spare = ch;
		return;
	}
	ch->nrec = nrec;
	t = pp->hist_tail_own;
	atomic_store_explicit(&pp->histq[t & pp->mask], ch, memory_order_relaxed);
	pp->hist_tail_own = t + 1;
	cab__cnt_add(&pp->produced, nrec);
	/* Release pairs with the acquire load of hist_tail in cab_pp__take()
	 * and cab_pp__drained(): the header, the records and the slot are
	 * visible before the consumer can see the new tail. */
	atomic_store_explicit(&pp->hist_tail, t + 1, memory_order_release);
}

void cab_pp__close(struct cab_pp *pp)
{
	/* Release pairs with the acquire load in cab_pp__drained(): every
	 * publish made before close is visible once closed is seen. */
	atomic_store_explicit(&pp->closed, 1, memory_order_release);
}

const struct cab_chunk *cab_pp__take(struct cab_pp *pp)
{
	/* Acquire pairs with the acq_rel CAS in pp__recycle(): if the
	 * producer moved the head, we also see the tail it had then. */
	uint64_t h = atomic_load_explicit(&pp->hist_head, memory_order_acquire);

	for (;;) {
		/* Acquire pairs with the release store in cab_pp__commit():
		 * entries below the tail, and their chunks, are complete. */
		uint64_t t = atomic_load_explicit(&pp->hist_tail, memory_order_acquire);
		struct cab_chunk *ch;

		if (h == t)
			return NULL;
		ch = atomic_load_explicit(&pp->histq[h & pp->mask], memory_order_relaxed);
		/* acq_rel pairs with the CAS in pp__recycle(): one winner per
		 * entry. On failure h is reloaded and we retry. */
		if (atomic_compare_exchange_weak_explicit(&pp->hist_head, &h, h + 1,
							  memory_order_acq_rel,
							  memory_order_acquire)) {
			cab__cnt_add(&pp->consumed, ch->nrec);
			return ch;
		}
	}
}

void cab_pp__release(struct cab_pp *pp, const struct cab_chunk *ch)
{
	uint64_t t;

	if (!ch)
		return;
	t = atomic_load_explicit(&pp->free_tail, memory_order_relaxed);
	atomic_store_explicit(&pp->freeq[t & pp->mask], (struct cab_chunk *)ch,
			      memory_order_relaxed);
	/* Release pairs with the acquire load of free_tail in pp__pop_free():
	 * our reads of the chunk happen before the producer refills it. */
	atomic_store_explicit(&pp->free_tail, t + 1, memory_order_release);
}

bool cab_pp__drained(struct cab_pp *pp)
{
	uint64_t h, t;

	/* Acquire pairs with the release store in cab_pp__close(); it must
	 * come first so that the tail read below includes every publish. */
	if (!atomic_load_explicit(&pp->closed, memory_order_acquire))
		return false;
	h = atomic_load_explicit(&pp->hist_head, memory_order_acquire);
	/* Acquire pairs with the release store in cab_pp__commit(). */
	t = atomic_load_explicit(&pp->hist_tail, memory_order_acquire);
	return h == t;
}

void cab_pp__stats(const struct cab_pp *pp, struct cab_stats *st)
{
	st->produced = cab__cnt(&pp->produced);
	st->consumed = cab__cnt(&pp->consumed);
	st->overwritten = cab__cnt(&pp->overwritten);
	st->stalls = cab__cnt(&pp->stalls);
	st->blocked_ns = cab__cnt(&pp->blocked_ns);
	st->grown = cab__cnt(&pp->grown);
}
