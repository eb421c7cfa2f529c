// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CAB ring (Ha et al., OOPSLA 2009, section 3.1, figs. 3 and 5).
 *
 * Layout. The ring is nchunks chunks of chunk_words 64-bit words, followed
 * by one word holding CAB_MAGIC. A chunk holds rpc records of record_words
 * words from its first word on; the words left over (when record_words
 * does not divide chunk_words, and always one word in sampling mode) start
 * with a CAB_MAGIC "chunk sentinel". The producer reaches a sentinel or the
 * end-of-ring MAGIC only through its slow path, which moves to the next
 * chunk or wraps; the fast path has no bounds check.
 *
 *   word:  0 ........................... rpc*w  ... chunk_words
 *          [rec 0][rec 1] ... [rec rpc-1] [MAGIC, gap]   (when there is room)
 *
 * Exhaustive mode (fig. 3). The producer writes a record only into a slot
 * whose first word is CAB_CLEAR. A chunk is ready for the consumer when the
 * first word of the next chunk is no longer CLEAR (the producer has moved
 * on), or when a flush covered it. The consumer takes one chunk, the caller
 * reads it in place, and cab__release() clears it: every word but the
 * chunk's first, then the first with a release store, so that a producer
 * which sees the first word CLEAR also sees the rest CLEAR. A producer that
 * finds its slot busy waits until the first word of the following chunk is
 * CLEAR, i.e. until two whole chunks are free (fig. 3b).
 *
 * Sampling mode (fig. 5). The producer never waits; it only reacts to MAGIC.
 * Each chunk has a sentinel, so the producer's slow path runs once per
 * chunk and publishes pos, the number of chunks it has completed.
 * That replaces fig. 5's polling of the first word and its clearing by the
 * consumer, and closes a hole in it: a consumer that has been lapped by the
 * producer cannot tell from the first word whether it reads this lap's data
 * or the next one's, and may hand out half-overwritten records. Here the
 * consumer copies a burst of each chunk into a private buffer and then
 * checks pos again (seqlock style): if the producer entered the chunk again
 * meanwhile, the burst is dropped. Records not handed out count as
 * overwritten.
 *
 * Flush. The producer records in fill[] how many records the partial chunk
 * holds, moves to the start of the next chunk and publishes the position
 * (pos). The rest of the chunk is left as it is: CLEAR in
 * exhaustive mode (cleared by the consumer on the previous lap), stale in
 * sampling mode; the consumer reads only fill[]'s count. We chose a side
 * table over a padding record because the record format belongs to the
 * caller: cab/cab.h reserves only 0 and ~0 in the first word, and a padding
 * MAGIC inside a chunk would look like the end of the ring to the producer
 * on its next lap in sampling mode, where the consumer does not clear it.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "cab/cab.h"
#include "cab/cab_internal.h"

#define RING_DEFAULT_BYTES (1u << 20)
#define RING_MIN_CHUNK_BYTES CAB_LINE
#define RING_MAX_BYTES (1ULL << 40)
#define RING_MAX_CHUNK_BYTES (1ULL << 30) /* record counts fit in 32 bits */

struct cab {
	/* Producer, hot: must stay the first member (cab_ring.h casts). */
	alignas(CAB_LINE) struct cab__hot hot;
	uint64_t lap;	  /* times the producer wrapped */
	uint64_t recs;	  /* sampling: records in completed chunks */
	uint64_t skipped; /* exhaustive: record slots left empty by flushes */
	_Atomic uint64_t produced;
	_Atomic uint64_t stalls;
	_Atomic uint64_t blocked_ns;

	/* Read-only after cab__new(). */
	alignas(CAB_LINE) uint64_t *base;
	size_t ring_words;  /* nchunks * chunk_words */
	size_t chunk_words; /* power of two */
	size_t nchunks;	    /* power of two, >= 4 */
	unsigned cshift;    /* log2(chunk_words) */
	unsigned words;	    /* record_words */
	size_t rpc;	    /* records per chunk */
	unsigned spk;	    /* sample_per_1024 */
	enum cab_mode mode;
	/* Per chunk: (absolute chunk index + 1) of the last partial chunk
	 * flushed into it, and its record count. Written by the producer
	 * before it publishes the chunk, read by the consumer after. */
	_Atomic uint64_t *fill_tag;
	_Atomic uint32_t *fill_n;
	uint64_t *sbuf; /* sampling: the consumer's copy of a burst */

	/* Producer -> consumer. Exhaustive: chunks below this index are
	 * ready because of a flush. Sampling: chunks the producer has
	 * completed (all ready). */
	alignas(CAB_LINE) _Atomic uint64_t pos;
	_Atomic int closed;

	/* Consumer. */
	alignas(CAB_LINE) uint64_t cpos; /* absolute index of the next chunk */
	long held;			 /* records of the chunk taken, or 0 */
	uint64_t *held_at;
	_Atomic uint64_t consumed;
};

_Static_assert(offsetof(struct cab, hot) == 0, "cab_ring.h casts struct cab to cab__hot");

static inline uint64_t ring__load(const uint64_t *p, memory_order mo)
{
	return atomic_load_explicit((_Atomic uint64_t *)p, mo);
}

static inline void ring__store(uint64_t *p, uint64_t v, memory_order mo)
{
	atomic_store_explicit((_Atomic uint64_t *)p, v, mo);
}

void cab__free(struct cab *c)
{
	if (!c)
		return;
	free(c->base);
	free(c->fill_tag);
	free(c->fill_n);
	free(c->sbuf);
	free(c);
}

int cab__new(const struct cab_opts *opts, struct cab **out)
{
	struct cab_opts o = {0};
	struct cab *c = NULL;
	size_t cw, i, k;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (opts)
		o = *opts;
	if (o.buffer_bytes == 0)
		o.buffer_bytes = RING_DEFAULT_BYTES;
	if (!cab__is_pow2(o.buffer_bytes) || o.buffer_bytes > RING_MAX_BYTES ||
	    o.buffer_bytes < 4 * RING_MIN_CHUNK_BYTES)
		return -EINVAL;
	if (o.chunk_bytes == 0) {
		/* Seed 001, 3.1.3: 4 x L1d, so that chunk n has left the
		 * producer's L1 by the time it writes chunk n + 2. */
		o.chunk_bytes = 4 * cab__l1d_bytes();
		if (o.chunk_bytes > o.buffer_bytes / 4)
			o.chunk_bytes = o.buffer_bytes / 4;
	}
	if (!cab__is_pow2(o.chunk_bytes) || o.chunk_bytes < RING_MIN_CHUNK_BYTES ||
	    o.chunk_bytes > o.buffer_bytes / 4 || o.chunk_bytes > RING_MAX_CHUNK_BYTES)
		return -EINVAL;
	if (o.record_words == 0)
		o.record_words = 1;
	if (o.record_words > CAB_MAX_RECORD_WORDS)
		return -EINVAL;
	if (o.mode != CAB_EXHAUSTIVE && o.mode != CAB_SAMPLING)
		return -EINVAL;
	if (o.sample_per_1024 > 1024)
		return -EINVAL;
	if (o.sample_per_1024 == 0)
		o.sample_per_1024 = 1024;

	cw = o.chunk_bytes / sizeof(uint64_t);
	c = aligned_alloc(CAB_LINE, sizeof(*c));
	if (!c)
		return -ENOMEM;
	memset(c, 0, sizeof(*c));
	c->chunk_words = cw;
	c->cshift = (unsigned)__builtin_ctzll(cw);
	c->nchunks = o.buffer_bytes / o.chunk_bytes;
	c->ring_words = o.buffer_bytes / sizeof(uint64_t);
	c->words = o.record_words;
	c->mode = o.mode;
	c->spk = o.sample_per_1024;
	/* Sampling mode always keeps one word for the chunk sentinel. */
	c->rpc = (o.mode == CAB_SAMPLING ? cw - 1 : cw) / o.record_words;
	if (c->rpc == 0) {
		err = -EINVAL;
		goto cleanup;
	}
	/* One extra cache line holds the end-of-ring MAGIC. */
	c->base = aligned_alloc(CAB_LINE, o.buffer_bytes + CAB_LINE);
	c->fill_tag = calloc(c->nchunks, sizeof(*c->fill_tag));
	c->fill_n = calloc(c->nchunks, sizeof(*c->fill_n));
	if (o.mode == CAB_SAMPLING)
		c->sbuf = aligned_alloc(CAB_LINE, o.chunk_bytes);
	if (!c->base || !c->fill_tag || !c->fill_n || (o.mode == CAB_SAMPLING && !c->sbuf)) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* [setup]: plain stores; handing c to the two threads orders them. */
	memset(c->base, 0, o.buffer_bytes + CAB_LINE);
	if (c->rpc * c->words < cw)
		for (k = 0; k < c->nchunks; k++)
			c->base[k * cw + c->rpc * c->words] = CAB_MAGIC;
	for (i = c->ring_words; i < c->ring_words + CAB_LINE / sizeof(uint64_t); i++)
		c->base[i] = CAB_MAGIC;

	c->hot.ptr = c->base;
	c->hot.words = c->words;
	if (o.mode == CAB_SAMPLING) {
		c->hot.add = 1;
		c->hot.lim = 1;
	} else {
		c->hot.add = ~0ULL;
		c->hot.lim = ~0ULL;
	}
	*out = c;
	return 0;
cleanup:
	cab__free(c);
	return err;
}

/* [producer] Records written so far: exact at any point, from the
 * producer's position. */
static uint64_t ring__produced(const struct cab *c)
{
	size_t off = (size_t)(c->hot.ptr - c->base);
	size_t k = off >> c->cshift;
	size_t in = off & (c->chunk_words - 1);
	size_t rw = c->rpc * c->words;

	if (c->mode == CAB_SAMPLING)
		return c->recs + (in < rw ? in : rw) / c->words;
	/* off == ring_words (end-of-ring MAGIC) gives k == nchunks, in == 0. */
	return (c->lap * c->nchunks + k) * c->rpc + (in < rw ? in : rw) / c->words - c->skipped;
}

static void ring__publish_produced(struct cab *c)
{
	atomic_store_explicit(&c->produced, ring__produced(c), memory_order_relaxed);
}

/*
 * [producer] The producer is at p, inside chunk k (not at its first word)
 * or at the end of the ring. Close the chunk with nrec records (nrec <
 * rpc: a flush) and move to the start of the next chunk, wrapping at the
 * end. Returns the absolute index of the chunk now open.
 */
static uint64_t ring__next_chunk(struct cab *c, uint64_t *p, size_t nrec)
{
	size_t off = (size_t)(p - c->base);
	size_t k = off >> c->cshift;
	uint64_t a = c->lap * c->nchunks + k;

	if (nrec < c->rpc) {
		/* Published by the release store of pos (flush) or of the
		 * next chunk's first record (exhaustive). Release on their
		 * own too, for the sampling consumer: pairs with its acquire
		 * loads in ring__nrec(), so that if it reads a value from a
		 * later lap, its validation load of pos sees that lap. */
		atomic_store_explicit(&c->fill_n[k], (uint32_t)nrec, memory_order_release);
		atomic_store_explicit(&c->fill_tag[k], a + 1, memory_order_release);
		if (c->mode == CAB_EXHAUSTIVE)
			c->skipped += c->rpc - nrec;
	}
	if (c->mode == CAB_SAMPLING)
		c->recs += nrec;
	if (k + 1 == c->nchunks) {
		c->lap++;
		c->hot.ptr = c->base;
		ring__publish_produced(c); /* once per lap keeps stats fresh */
	} else {
		c->hot.ptr = c->base + ((k + 1) << c->cshift);
	}
	if (c->mode == CAB_SAMPLING) {
		ring__publish_produced(c);
		/* Release pairs with the acquire loads of pos in
		 * ring__take_sampling(): the chunk's records and fill[] are
		 * visible before pos says the chunk is done. Every write of
		 * chunk a + 1 onwards is sequenced after this store, which
		 * the consumer's check after a burst copy relies on. */
		atomic_store_explicit(&c->pos, a + 1, memory_order_release);
	}
	return a + 1;
}

/* [producer] Exhaustive mode, the slot at p is not consumed yet: wait
 * until the first word of the chunk after p's is CLEAR, i.e. until the
 * consumer has freed p's chunk and the next one (fig. 3b). */
static void ring__block(struct cab *c, uint64_t *p)
{
	size_t k = (size_t)(p - c->base) >> c->cshift;
	const uint64_t *poll = c->base + (((k + 1) & (c->nchunks - 1)) << c->cshift);
	struct cab__backoff b;
	uint64_t t0 = cab__now_ns();

	cab__cnt_add(&c->stalls, 1);
	ring__publish_produced(c);
	cab__backoff_init(&b);
	/* Acquire pairs with the release store of CLEAR in cab__release(). */
	while (ring__load(poll, memory_order_acquire) != CAB_CLEAR)
		cab__backoff_wait(&b);
	cab__cnt_add(&c->blocked_ns, cab__now_ns() - t0);
}

uint64_t *cab__put_slow(struct cab *c)
{
	for (;;) {
		uint64_t *p = c->hot.ptr;
		/* Acquire: same pairing as the fast path's load. */
		uint64_t w = ring__load(p, memory_order_acquire);

		if (w == CAB_MAGIC) {
			/* The end of the ring or a chunk sentinel: the chunk is
			 * full (a record's first word is never MAGIC). */
			if (p == c->base + c->ring_words) {
				c->lap++;
				c->hot.ptr = c->base;
				ring__publish_produced(c);
			} else {
				ring__next_chunk(c, p, c->rpc);
			}
			continue;
		}
		if (c->mode == CAB_SAMPLING || w == CAB_CLEAR)
			return p;
		ring__block(c, p);
	}
}

void cab__flush(struct cab *c)
{
	uint64_t *p = c->hot.ptr;
	size_t off = (size_t)(p - c->base);
	size_t in, rw = c->rpc * c->words;
	uint64_t ready;

	if (off == c->ring_words) {
		/* Exactly at the end-of-ring MAGIC: the last chunk is full. */
		c->lap++;
		c->hot.ptr = p = c->base;
		off = 0;
	}
	in = off & (c->chunk_words - 1);
	if (in == 0) {
		/* At a chunk's first word: every earlier chunk is complete. */
		ready = c->lap * c->nchunks + (off >> c->cshift);
	} else {
		size_t nrec = (in < rw ? in : rw) / c->words;

		ready = ring__next_chunk(c, p, nrec);
	}
	ring__publish_produced(c);
	if (c->mode == CAB_EXHAUSTIVE)
		/* Release pairs with the acquire load of pos in
		 * ring__ready(): the records and fill[] come first. */
		atomic_store_explicit(&c->pos, ready, memory_order_release);
}

void cab__close(struct cab *c)
{
	cab__flush(c);
	/* Release pairs with the acquire load of closed in cab__take():
	 * a consumer that sees closed also sees the final pos. */
	atomic_store_explicit(&c->closed, 1, memory_order_release);
}

/* [consumer] Exhaustive: is chunk a (absolute) ready? */
static bool ring__ready(struct cab *c, uint64_t a)
{
	size_t next = (size_t)((a + 1) & (c->nchunks - 1)) << c->cshift;

	/* Acquire pairs with the release store of pos in cab__flush(). */
	if (a < atomic_load_explicit(&c->pos, memory_order_acquire))
		return true;
	/* Acquire pairs with the producer's release store of the next
	 * chunk's first record (cab__slot_store()): the whole of chunk a,
	 * and fill[], were written before it. */
	return ring__load(c->base + next, memory_order_acquire) != CAB_CLEAR;
}

/* [consumer] Records in chunk a: rpc, or what a flush left in it. */
static size_t ring__nrec(struct cab *c, uint64_t a)
{
	size_t k = (size_t)(a & (c->nchunks - 1));

	/* Acquire pairs with the release stores in ring__next_chunk(). */
	if (atomic_load_explicit(&c->fill_tag[k], memory_order_acquire) == a + 1)
		return atomic_load_explicit(&c->fill_n[k], memory_order_acquire);
	return c->rpc;
}

static long ring__take_exhaustive(struct cab *c, const uint64_t **recs)
{
	uint64_t a = c->cpos;

	if (!ring__ready(c, a)) {
		/* Acquire pairs with the release in cab__close(); then look
		 * again, since the final flush may have made a ready. */
		if (!atomic_load_explicit(&c->closed, memory_order_acquire))
			return 0;
		if (!ring__ready(c, a))
			return -EPIPE;
	}
	c->held_at = c->base + ((size_t)(a & (c->nchunks - 1)) << c->cshift);
	c->held = (long)ring__nrec(c, a);
	*recs = c->held_at;
	cab__cnt_add(&c->consumed, (uint64_t)c->held);
	return c->held;
}

static long ring__take_sampling(struct cab *c, const uint64_t **recs)
{
	for (;;) {
		/* Acquire pairs with the release store of pos in
		 * ring__next_chunk(): chunks below pos are complete. */
		uint64_t done = atomic_load_explicit(&c->pos, memory_order_acquire);
		uint64_t a = c->cpos;
		const uint64_t *src;
		size_t nrec, n, i;

		if (a >= done) {
			/* Acquire pairs with the release in cab__close(). */
			if (!atomic_load_explicit(&c->closed, memory_order_acquire))
				return 0;
			if (a >= atomic_load_explicit(&c->pos, memory_order_acquire))
				return -EPIPE;
			continue;
		}
		if (done - a >= c->nchunks) {
			/* Lapped: chunks a .. done - nchunks are being or have
			 * been overwritten. Resume at the newest complete chunk,
			 * which the producer needs longest to reach again. */
			a = done - 1;
		}
		/* Read before the copy, so the check after it covers it. */
		nrec = ring__nrec(c, a);
		n = (nrec * c->spk + 1023) / 1024; /* >= 1 when nrec >= 1 */
		if (n == 0) {
			c->cpos = a + 1;
			continue;
		}
		src = c->base + ((size_t)(a & (c->nchunks - 1)) << c->cshift);
		/* Acquire loads (plain movs on x86-64) pair with the
		 * producer's release stores of the words (cab__slot_store()):
		 * if the copy read any word of the next lap, the pos load
		 * below sees the store that preceded that lap's writes. An
		 * acquire fence after relaxed loads would do the same, but
		 * ThreadSanitizer does not support fences. */
		for (i = 0; i < n * c->words; i++)
			c->sbuf[i] = ring__load(src + i, memory_order_acquire);
		c->cpos = a + 1;
		if (atomic_load_explicit(&c->pos, memory_order_relaxed) - a >= c->nchunks)
			continue; /* overwritten while we copied: drop it */
		c->held = (long)n;
		c->held_at = c->sbuf;
		*recs = c->sbuf;
		cab__cnt_add(&c->consumed, n);
		return c->held;
	}
}

long cab__take(struct cab *c, const uint64_t **recs)
{
	if (c->held)
		return -EBUSY;
	if (c->mode == CAB_SAMPLING)
		return ring__take_sampling(c, recs);
	return ring__take_exhaustive(c, recs);
}

void cab__release(struct cab *c)
{
	size_t nw;

	if (!c->held)
		return;
	if (c->mode == CAB_EXHAUSTIVE) {
		nw = (size_t)c->held * c->words;
		/* Plain stores: they happen before the release store below,
		 * and the producer reads these words only after it has seen
		 * that store (it enters a chunk through its first word). */
		memset(c->held_at + 1, 0, (nw - 1) * sizeof(uint64_t));
		/* Release pairs with the producer's acquire load of the slot
		 * (cab__slot_load(), ring__block()): our reads of the chunk
		 * and the memset happen before it writes here again. */
		ring__store(c->held_at, CAB_CLEAR, memory_order_release);
		c->cpos++;
	}
	c->held = 0;
	c->held_at = NULL;
}

void cab__stats(const struct cab *c, struct cab_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->produced = cab__cnt(&c->produced);
	st->consumed = cab__cnt(&c->consumed);
	st->stalls = cab__cnt(&c->stalls);
	st->blocked_ns = cab__cnt(&c->blocked_ns);
	/* Sampling: everything produced and not handed out was overwritten
	 * or skipped. produced is published once per chunk, so while both
	 * sides run this lags by less than a chunk; exact after close. */
	if (c->mode == CAB_SAMPLING && st->produced > st->consumed)
		st->overwritten = st->produced - st->consumed;
}
