/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cab/ — Cache-friendly Asymmetric Buffering (Ha, Arnold, Blackburn,
 * McKinley, OOPSLA 2009; Ha's dissertation, section 2.4.3).
 *
 * Two structures, both single-producer / single-consumer:
 *
 *  struct cab     The CAB ring of Ha et al., OOPSLA 2009, section 3.1. Fixed-size records
 *                 of 1..CAB_MAX_RECORD_WORDS 64-bit words. The producer's fast
 *                 path is one test of the next slot against CAB_CLEAR; the end
 *                 of the ring holds CAB_MAGIC so the producer needs no bounds
 *                 check. The consumer stays at least one whole chunk behind
 *                 the producer and takes a chunk at a time.
 *
 *  struct cab_pp  A per-processor buffer (section 2.4.3 of the dissertation):
 *                 a pool of chunks, each headed by CAB_MAGIC and the id of the
 *                 thread whose records it holds. The producer obtains a whole
 *                 chunk, fills it, and publishes it to a history queue that
 *                 the consumer drains in publication order. A pool with no
 *                 free chunk grows instead of deadlocking.
 *
 * Record values: the FIRST word of every record must be neither CAB_CLEAR (0)
 * nor CAB_MAGIC (~0). Callers guarantee this by construction, e.g. by keeping
 * a non-zero kind in the top byte that is never 0xff (see pipeline/record.h).
 * Debug builds assert it; release builds trust the caller because checking
 * it would add a second branch to the producer's fast path.
 *
 * Threads: each object has exactly one producer thread and one consumer
 * thread at a time (they may be the same thread). Functions are marked
 * [producer], [consumer], or [any] (any thread, values may be stale while
 * the other side runs) and [setup] (no other thread may use the object).
 */
#ifndef CAB_CAB_H
#define CAB_CAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CAB_CLEAR 0ULL
#define CAB_MAGIC (~0ULL)
#define CAB_MAX_RECORD_WORDS 8

enum cab_mode {
	CAB_EXHAUSTIVE = 0, /* every record reaches the consumer; producer may block */
	CAB_SAMPLING = 1,   /* producer never blocks, overwrites; loss is counted */
};

struct cab_stats {
	uint64_t produced;    /* records written by the producer */
	uint64_t consumed;    /* records handed to the consumer */
	uint64_t overwritten; /* sampling mode: records lost to overwrite or skipped */
	uint64_t stalls;      /* times the producer found no free space */
	uint64_t blocked_ns;  /* time the producer spent waiting for space */
	uint64_t grown;       /* cab_pp: chunks added because the pool ran dry */
};

/* ---------------------------------------------------------------- ring -- */

struct cab_opts {
	size_t buffer_bytes;  /* power of two; 0 = 1 MiB */
	size_t chunk_bytes;   /* power of two, <= buffer_bytes / 4; 0 = 4 * L1d */
	unsigned record_words; /* 1..CAB_MAX_RECORD_WORDS; 0 = 1 */
	enum cab_mode mode;
	/* sampling mode: how many records per 1024 of each chunk are handed to
	 * the consumer in one burst (the rest are counted as overwritten). */
	unsigned sample_per_1024;
};

struct cab;

/* [setup] Allocate a ring. Returns 0 and sets *out, or -EINVAL / -ENOMEM.
 * The caller owns *out and frees it with cab__free(). */
int cab__new(const struct cab_opts *opts, struct cab **out);
/* [setup] Free a ring; NULL is fine. */
void cab__free(struct cab *c);

/* [producer] Append one record of record_words words. Blocks (exhaustive)
 * or overwrites (sampling) when the ring is full. Defined inline in
 * cab_ring.h so that the fast path is one branch at the call site. */
static inline void cab__put(struct cab *c, const uint64_t *rec);
/* [producer] The same with n == record_words known at compile time: the copy
 * unrolls to n stores. rec is read, not kept. (Addition, see docs/cab.md.) */
static inline void cab__put_n(struct cab *c, const uint64_t *rec, unsigned n);

/* [producer] Hand the partly filled chunk to the consumer now. The producer
 * continues at the next chunk; the unused rest of the flushed chunk is
 * skipped (docs/cab.md). */
void cab__flush(struct cab *c);
/* [producer] Flush and mark the end of the stream. */
void cab__close(struct cab *c);

/* [consumer] If a whole chunk is ready, point *recs at its first record and
 * return the number of records in it (> 0); the records stay valid until
 * cab__release(). Returns 0 when nothing is ready yet, -EPIPE when the
 * producer has closed and every record has been taken. Never blocks.
 * Also -EBUSY if the chunk of the previous take was not released yet.
 * Sampling mode: *recs points at a copy of the chunk's sampled burst. */
long cab__take(struct cab *c, const uint64_t **recs);
/* [consumer] Give back the chunk returned by the last cab__take(). */
void cab__release(struct cab *c);

/* [any] Counters; exact once both sides have stopped. */
void cab__stats(const struct cab *c, struct cab_stats *st);

/* ------------------------------------------------------- per-processor -- */

struct cab_pp_opts {
	size_t chunk_records;  /* records per chunk; 0 = fill 4 * L1d */
	unsigned record_words; /* 1..CAB_MAX_RECORD_WORDS; 0 = 1 */
	size_t nchunks;        /* initial pool size; 0 = 64 */
	size_t max_chunks;     /* growth limit; then the producer waits; 0 = 16 * nchunks */
	enum cab_mode mode;    /* sampling: a full pool recycles the oldest unread chunk */
};

/* Header of a chunk of a per-processor buffer. The records follow it. */
struct cab_chunk {
	uint64_t magic; /* CAB_MAGIC: marks a chunk header */
	uint32_t tid;   /* the thread whose records the chunk holds */
	uint32_t nrec;  /* records in the chunk */
	uint64_t seq;   /* producer-defined; the pipeline stores the per-thread
			   sequence number of the first record */
	uint32_t tag;   /* producer-defined (cab_pp__reserve_tag; 0 otherwise):
			   the pipeline stores the thread's process id */
	uint32_t pad;
	uint64_t recs[]; /* nrec * record_words words */
};

struct cab_pp;

/* [setup] Allocate a per-processor buffer. Returns 0 or -EINVAL / -ENOMEM;
 * the caller owns *out. */
int cab_pp__new(const struct cab_pp_opts *opts, struct cab_pp **out);
/* [setup] Free; NULL is fine. */
void cab_pp__free(struct cab_pp *pp);

/* [producer] Obtain a whole free chunk for thread tid, write tid and seq in
 * its header, and return a pointer to its record area (room for
 * chunk_records records). Grows the pool when no chunk is free; at
 * max_chunks it waits (exhaustive) or recycles the oldest unread chunk and
 * counts its records as overwritten (sampling). Returns NULL only when
 * memory runs out. At most one chunk is open at a time. */
uint64_t *cab_pp__reserve(struct cab_pp *pp, uint32_t tid, uint64_t seq);
/* [producer] The same with a tag in the header (cab_pp__reserve: tag 0),
 * e.g. the process the thread belongs to, which the consumer reads from
 * the chunk it takes: the header, not a side table, says it, so a thread
 * id reused by another process can never be attributed to the old one. */
uint64_t *cab_pp__reserve_tag(struct cab_pp *pp, uint32_t tid, uint32_t tag, uint64_t seq);
/* [producer] Publish the open chunk with nrec records (nrec may be 0, then
 * the chunk simply goes back to the pool). */
void cab_pp__commit(struct cab_pp *pp, uint32_t nrec);
/* [producer] No more chunks will be published (publishes nothing itself). */
void cab_pp__close(struct cab_pp *pp);

/* [consumer] Oldest published chunk not yet taken, or NULL if none. */
const struct cab_chunk *cab_pp__take(struct cab_pp *pp);
/* [consumer] Return a chunk obtained from cab_pp__take() to the pool. */
void cab_pp__release(struct cab_pp *pp, const struct cab_chunk *ch);
/* [consumer] True once the producer has closed and every chunk was taken. */
bool cab_pp__drained(struct cab_pp *pp);

/* [any] Records per chunk and words per record, as configured. */
size_t cab_pp__chunk_records(const struct cab_pp *pp);
unsigned cab_pp__record_words(const struct cab_pp *pp); /* addition */
/* [any] Counters; exact once both sides have stopped. */
void cab_pp__stats(const struct cab_pp *pp, struct cab_stats *st);

/* [any] One spin-wait hint to the CPU (pause, yield): for a consumer's
 * backoff before it sleeps, here and in the pipeline's analysis threads. */
static inline void cab__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

#include "cab_ring.h" /* the inline producer fast path */

#endif /* CAB_CAB_H */
