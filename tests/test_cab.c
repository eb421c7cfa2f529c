// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of cab/: the CAB ring (struct cab) and the per-processor
 * buffer (struct cab_pp). Single-threaded except where a test needs a
 * blocked producer, which then runs in a second thread.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cab/cab.h"

/* A record's first word must be neither 0 nor ~0: tag it like the
 * pipeline does (a non-zero kind in the top byte). */
#define TAG (1ULL << 56)

static void fill_rec(uint64_t *r, unsigned words, uint64_t i)
{
	unsigned w;

	r[0] = TAG | i;
	for (w = 1; w < words; w++)
		r[w] = i * 1000 + w;
}

static int rec_ok(const uint64_t *r, unsigned words, uint64_t i)
{
	unsigned w;

	if (r[0] != (TAG | i))
		return 0;
	for (w = 1; w < words; w++)
		if (r[w] != i * 1000 + w)
			return 0;
	return 1;
}

static struct cab *ring_new(size_t buf, size_t chunk, unsigned words, enum cab_mode mode,
			    unsigned spk)
{
	struct cab_opts o = {
		.buffer_bytes = buf,
		.chunk_bytes = chunk,
		.record_words = words,
		.mode = mode,
		.sample_per_1024 = spk,
	};
	struct cab *c = NULL;

	ck_assert_int_eq(cab__new(&o, &c), 0);
	ck_assert_ptr_nonnull(c);
	return c;
}

/* Records per chunk as the layout in cab/cab.c defines it. */
static size_t rpc_of(size_t chunk, unsigned words, enum cab_mode mode)
{
	size_t cw = chunk / 8;

	return (mode == CAB_SAMPLING ? cw - 1 : cw) / words;
}

/* Take every ready chunk, check each record against the expected
 * sequence, release. Returns the number of records taken. */
static uint64_t drain_ready(struct cab *c, unsigned words, uint64_t *next)
{
	const uint64_t *recs;
	uint64_t got = 0;
	long n, i;

	while ((n = cab__take(c, &recs)) > 0) {
		for (i = 0; i < n; i++) {
			ck_assert_msg(rec_ok(recs + i * words, words, *next), "record %llu wrong",
				      (unsigned long long)*next);
			(*next)++;
		}
		got += (uint64_t)n;
		cab__release(c);
	}
	return got;
}

/* cab__take()'s return code when the records themselves do not matter. */
static long take_rc(struct cab *c)
{
	const uint64_t *recs;
	long n = cab__take(c, &recs);

	if (n > 0)
		cab__release(c);
	return n;
}

/* ------------------------------------------------------------ ring opts */

START_TEST(ring_invalid_opts)
{
	struct cab *c = (struct cab *)1;
	struct cab_opts o;

	memset(&o, 0, sizeof(o));
	o.buffer_bytes = 3000; /* not a power of two */
	ck_assert_int_eq(cab__new(&o, &c), -EINVAL);
	ck_assert_ptr_null(c);
	o.buffer_bytes = 4096;
	o.chunk_bytes = 2048; /* > buffer / 4 */
	ck_assert_int_eq(cab__new(&o, &c), -EINVAL);
	o.chunk_bytes = 1000; /* not a power of two */
	ck_assert_int_eq(cab__new(&o, &c), -EINVAL);
	o.chunk_bytes = 32; /* smaller than a cache line */
	ck_assert_int_eq(cab__new(&o, &c), -EINVAL);
	o.chunk_bytes = 1024;
	o.record_words = CAB_MAX_RECORD_WORDS + 1;
	ck_assert_int_eq(cab__new(&o, &c), -EINVAL);
	o.record_words = 1;
	o.mode = (enum cab_mode)7;
	ck_assert_int_eq(cab__new(&o, &c), -EINVAL);
	o.mode = CAB_SAMPLING;
	o.sample_per_1024 = 1025;
	ck_assert_int_eq(cab__new(&o, &c), -EINVAL);
	/* 64-byte chunk, 8-word records, sampling: the sentinel leaves no
	 * room for a single record. */
	o.sample_per_1024 = 0;
	o.chunk_bytes = 64;
	o.buffer_bytes = 256;
	o.record_words = 8;
	ck_assert_int_eq(cab__new(&o, &c), -EINVAL);
	ck_assert_int_eq(cab__new(NULL, NULL), -EINVAL);
	cab__free(NULL); /* must be harmless */
}
END_TEST

START_TEST(ring_defaults)
{
	struct cab *c = NULL;
	struct cab_stats st;
	uint64_t r[1], next = 0, i;

	/* NULL opts: 1 MiB, 4 x L1d chunks, 1-word records, exhaustive. */
	ck_assert_int_eq(cab__new(NULL, &c), 0);
	for (i = 0; i < 1000; i++) {
		fill_rec(r, 1, i);
		cab__put(c, r);
	}
	cab__close(c);
	ck_assert_uint_eq(drain_ready(c, 1, &next), 1000);
	ck_assert_int_eq(take_rc(c), -EPIPE);
	cab__stats(c, &st);
	ck_assert_uint_eq(st.produced, 1000);
	ck_assert_uint_eq(st.consumed, 1000);
	ck_assert_uint_eq(st.overwritten, 0);
	ck_assert_uint_eq(st.stalls, 0);
	cab__free(c);
}
END_TEST

/* ----------------------------------------------------------- exhaustive */

START_TEST(ring_put_take_single)
{
	/* 4 KiB ring of 4 chunks of 128 one-word records. */
	struct cab *c = ring_new(4096, 1024, 1, CAB_EXHAUSTIVE, 0);
	const uint64_t *recs;
	uint64_t r[1], i;
	struct cab_stats st;
	long n;

	ck_assert_int_eq(cab__take(c, &recs), 0); /* empty */
	for (i = 0; i < 200; i++) {
		fill_rec(r, 1, i);
		cab__put(c, r);
	}
	/* Chunk 0 is ready because chunk 1 has started; chunk 1 is not. */
	n = cab__take(c, &recs);
	ck_assert_int_eq(n, 128);
	for (i = 0; i < 128; i++)
		ck_assert(rec_ok(recs + i, 1, i));
	ck_assert_int_eq(cab__take(c, &recs), -EBUSY); /* release first */
	cab__release(c);
	ck_assert_int_eq(cab__take(c, &recs), 0);
	cab__stats(c, &st);
	ck_assert_uint_eq(st.consumed, 128);
	cab__free(c);
}
END_TEST

START_TEST(ring_flush_partial)
{
	struct cab *c = ring_new(4096, 1024, 1, CAB_EXHAUSTIVE, 0);
	const uint64_t *recs;
	uint64_t r[1], i, next = 0;
	struct cab_stats st;
	long n;

	cab__flush(c); /* nothing written: nothing to hand over */
	ck_assert_int_eq(cab__take(c, &recs), 0);
	for (i = 0; i < 200; i++) {
		fill_rec(r, 1, i);
		cab__put(c, r);
	}
	ck_assert_uint_eq(drain_ready(c, 1, &next), 128);
	cab__flush(c); /* hands over the 72 records of chunk 1 */
	n = cab__take(c, &recs);
	ck_assert_int_eq(n, 72);
	for (i = 0; i < 72; i++)
		ck_assert(rec_ok(recs + i, 1, 128 + i));
	cab__release(c);
	ck_assert_int_eq(cab__take(c, &recs), 0);
	cab__flush(c); /* again: idempotent, nothing new */
	ck_assert_int_eq(cab__take(c, &recs), 0);
	cab__stats(c, &st);
	ck_assert_uint_eq(st.produced, 200);
	/* The producer continues at the start of chunk 2. */
	for (i = 200; i < 300; i++) {
		fill_rec(r, 1, i);
		cab__put(c, r);
	}
	cab__flush(c);
	next = 200;
	ck_assert_uint_eq(drain_ready(c, 1, &next), 100);
	cab__stats(c, &st);
	ck_assert_uint_eq(st.produced, 300);
	ck_assert_uint_eq(st.consumed, 300);
	cab__free(c);
}
END_TEST

START_TEST(ring_flush_at_chunk_boundary)
{
	struct cab *c = ring_new(4096, 1024, 1, CAB_EXHAUSTIVE, 0);
	uint64_t r[1], i, next = 0;

	for (i = 0; i < 128; i++) { /* exactly one chunk */
		fill_rec(r, 1, i);
		cab__put(c, r);
	}
	/* Chunk 0 is complete but not ready (chunk 1 not started)... */
	ck_assert_uint_eq(drain_ready(c, 1, &next), 0);
	cab__flush(c); /* ...until a flush */
	ck_assert_uint_eq(drain_ready(c, 1, &next), 128);
	cab__free(c);
}
END_TEST

START_TEST(ring_wraparound)
{
	/* 16 laps of a 4-chunk ring, draining as we go. */
	struct cab *c = ring_new(4096, 1024, 1, CAB_EXHAUSTIVE, 0);
	uint64_t r[1], i, next = 0, total = 16 * 512 + 77;
	struct cab_stats st;

	for (i = 0; i < total; i++) {
		fill_rec(r, 1, i);
		cab__put(c, r);
		if (i % 100 == 0)
			drain_ready(c, 1, &next);
	}
	cab__close(c);
	drain_ready(c, 1, &next);
	ck_assert_uint_eq(next, total);
	ck_assert_int_eq(take_rc(c), -EPIPE);
	cab__stats(c, &st);
	ck_assert_uint_eq(st.produced, total);
	ck_assert_uint_eq(st.consumed, total);
	ck_assert_uint_eq(st.stalls, 0);
	cab__free(c);
}
END_TEST

START_TEST(ring_exactly_full)
{
	struct cab *c = ring_new(4096, 1024, 1, CAB_EXHAUSTIVE, 0);
	uint64_t r[1], i, next = 0;
	struct cab_stats st;

	/* 512 records fill all four chunks without blocking. */
	for (i = 0; i < 512; i++) {
		fill_rec(r, 1, i);
		cab__put(c, r);
	}
	/* Chunks 0..2 are ready; chunk 3's successor (chunk 0) is CLEAR
	 * again once chunk 0 is consumed, so chunk 3 waits for a flush. */
	ck_assert_uint_eq(drain_ready(c, 1, &next), 384);
	cab__flush(c);
	ck_assert_uint_eq(drain_ready(c, 1, &next), 128);
	/* And the ring is usable for another full lap. */
	for (i = 512; i < 1024; i++) {
		fill_rec(r, 1, i);
		cab__put(c, r);
	}
	cab__close(c);
	ck_assert_uint_eq(drain_ready(c, 1, &next), 512);
	cab__stats(c, &st);
	ck_assert_uint_eq(st.produced, 1024);
	ck_assert_uint_eq(st.stalls, 0);
	cab__free(c);
}
END_TEST

START_TEST(ring_close_epipe)
{
	struct cab *c = ring_new(4096, 1024, 2, CAB_EXHAUSTIVE, 0);
	const uint64_t *recs;
	uint64_t r[2], next = 0;

	cab__close(c); /* empty stream */
	ck_assert_int_eq(cab__take(c, &recs), -EPIPE);
	ck_assert_int_eq(cab__take(c, &recs), -EPIPE);
	cab__free(c);

	c = ring_new(4096, 1024, 2, CAB_EXHAUSTIVE, 0);
	fill_rec(r, 2, 0);
	cab__put(c, r);
	ck_assert_int_eq(cab__take(c, &recs), 0); /* not ready, not closed */
	cab__close(c);
	ck_assert_uint_eq(drain_ready(c, 2, &next), 1);
	ck_assert_int_eq(cab__take(c, &recs), -EPIPE);
	cab__free(c);
}
END_TEST

/* Record sizes 1..8 words, including sizes that do not divide a chunk
 * (3, 5, 6, 7: each chunk ends with a sentinel gap), over several laps. */
START_TEST(ring_record_sizes)
{
	unsigned words = (unsigned)_i + 1;
	struct cab *c = ring_new(8192, 2048, words, CAB_EXHAUSTIVE, 0);
	size_t rpc = rpc_of(2048, words, CAB_EXHAUSTIVE);
	uint64_t r[CAB_MAX_RECORD_WORDS], i, next = 0, total = 5 * 4 * rpc + 3;
	struct cab_stats st;

	for (i = 0; i < total; i++) {
		fill_rec(r, words, i);
		cab__put(c, r);
		if (i % 37 == 0)
			drain_ready(c, words, &next);
	}
	cab__close(c);
	drain_ready(c, words, &next);
	ck_assert_uint_eq(next, total);
	cab__stats(c, &st);
	ck_assert_uint_eq(st.produced, total);
	ck_assert_uint_eq(st.consumed, total);
	cab__free(c);
}
END_TEST

/* put_n with a constant size is the same operation as put. */
START_TEST(ring_put_n)
{
	struct cab *c = ring_new(4096, 1024, 3, CAB_EXHAUSTIVE, 0);
	uint64_t r[3], i, next = 0;

	/* 42 records per chunk, 168 in the ring: drain as we go. */
	for (i = 0; i < 300; i++) {
		fill_rec(r, 3, i);
		cab__put_n(c, r, 3);
		if (i % 50 == 49)
			drain_ready(c, 3, &next);
	}
	cab__close(c);
	drain_ready(c, 3, &next);
	ck_assert_uint_eq(next, 300);
	cab__free(c);
}
END_TEST

struct blocker {
	struct cab *c;
	uint64_t n;
	int done;
};

static void *blocker_main(void *arg)
{
	struct blocker *b = arg;
	uint64_t r[1], i;

	for (i = 0; i < b->n; i++) {
		fill_rec(r, 1, i);
		cab__put(b->c, r);
	}
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* A full ring blocks the producer until two whole chunks are free. */
START_TEST(ring_full_blocks_until_two_chunks_free)
{
	struct blocker b = {0};
	const uint64_t *recs;
	struct cab_stats st;
	pthread_t th;
	uint64_t next = 0;
	long n, i;

	b.c = ring_new(4096, 1024, 1, CAB_EXHAUSTIVE, 0);
	b.n = 512 + 1; /* one more than fits */
	ck_assert_int_eq(pthread_create(&th, NULL, blocker_main, &b), 0);
	/* Wait until the producer has filled the ring and blocked (the stall
	 * is counted once it started waiting), however long a loaded machine
	 * takes to run it: a fixed sleep here could end first. */
	do {
		sleep_ms(1);
		cab__stats(b.c, &st);
	} while (st.stalls == 0);
	ck_assert_uint_eq(st.stalls, 1);
	ck_assert_int_eq(__atomic_load_n(&b.done, __ATOMIC_ACQUIRE), 0);
	/* One chunk freed: still blocked (fig. 3b waits for two). The sleep
	 * gives a wrong producer time to go on; a right one never does, so
	 * no load can fail this. */
	n = cab__take(b.c, &recs);
	ck_assert_int_eq(n, 128);
	for (i = 0; i < n; i++)
		ck_assert(rec_ok(recs + i, 1, next++));
	cab__release(b.c);
	sleep_ms(50);
	ck_assert_int_eq(__atomic_load_n(&b.done, __ATOMIC_ACQUIRE), 0);
	/* Second chunk freed: the producer proceeds. */
	n = cab__take(b.c, &recs);
	ck_assert_int_eq(n, 128);
	for (i = 0; i < n; i++)
		ck_assert(rec_ok(recs + i, 1, next++));
	cab__release(b.c);
	pthread_join(th, NULL);
	ck_assert_int_eq(b.done, 1);
	cab__close(b.c);
	ck_assert_uint_eq(drain_ready(b.c, 1, &next), 257);
	ck_assert_uint_eq(next, 513);
	cab__stats(b.c, &st);
	ck_assert_uint_eq(st.stalls, 1);
	/* Blocked since before its stall was seen, until the second chunk
	 * was freed: at least the 50 ms slept in between. */
	ck_assert_uint_ge(st.blocked_ns, 50 * 1000000ULL);
	ck_assert_uint_eq(st.produced, 513);
	cab__free(b.c);
}
END_TEST

/* ------------------------------------------------------------- sampling */

/* Take everything; delivered records must be strictly increasing. */
static uint64_t drain_sampled(struct cab *c, unsigned words, uint64_t *last, int *first)
{
	const uint64_t *recs;
	uint64_t got = 0;
	long n, i;

	while ((n = cab__take(c, &recs)) > 0) {
		for (i = 0; i < n; i++) {
			uint64_t v = recs[i * words] & ~TAG;

			ck_assert(rec_ok(recs + i * words, words, v));
			ck_assert_msg(*first || v > *last, "sample %llu after %llu",
				      (unsigned long long)v, (unsigned long long)*last);
			*first = 0;
			*last = v;
		}
		got += (uint64_t)n;
		cab__release(c);
	}
	return got;
}

START_TEST(ring_sampling_no_overwrite)
{
	struct cab *c = ring_new(4096, 1024, 1, CAB_SAMPLING, 0);
	size_t rpc = rpc_of(1024, 1, CAB_SAMPLING); /* 127 */
	uint64_t r[1], i, last = 0;
	struct cab_stats st;
	int first = 1;

	for (i = 0; i < 300; i++) {
		fill_rec(r, 1, i);
		cab__put(c, r);
	}
	cab__close(c);
	/* Everything fits and sample_per_1024 = 0 means all of it. */
	ck_assert_uint_eq(drain_sampled(c, 1, &last, &first), 300);
	ck_assert_uint_eq(last, 299);
	ck_assert_int_eq(take_rc(c), -EPIPE);
	cab__stats(c, &st);
	ck_assert_uint_eq(st.produced, 300);
	ck_assert_uint_eq(st.consumed, 300);
	ck_assert_uint_eq(st.overwritten, 0);
	ck_assert_uint_eq(st.stalls, 0);
	ck_assert_uint_gt(rpc, 0);
	cab__free(c);
}
END_TEST

START_TEST(ring_sampling_overwrite_accounting)
{
	/* Three and a half laps with no consumer: the producer never blocks
	 * and overwrites; the consumer then finds only the newest data. */
	struct cab *c = ring_new(4096, 1024, 2, CAB_SAMPLING, 0);
	size_t rpc = rpc_of(1024, 2, CAB_SAMPLING);
	uint64_t r[2], i, last = 0, total = 3 * 4 * rpc + rpc / 2, got;
	struct cab_stats st;
	int first = 1;

	for (i = 0; i < total; i++) {
		fill_rec(r, 2, i);
		cab__put(c, r);
	}
	cab__close(c);
	got = drain_sampled(c, 2, &last, &first);
	ck_assert_uint_gt(got, 0);
	ck_assert_uint_lt(got, total);
	ck_assert_uint_eq(last, total - 1); /* the newest record arrives */
	cab__stats(c, &st);
	ck_assert_uint_eq(st.produced, total);
	ck_assert_uint_eq(st.consumed, got);
	ck_assert_uint_eq(st.consumed + st.overwritten, st.produced);
	ck_assert_uint_eq(st.stalls, 0);
	cab__free(c);
}
END_TEST

START_TEST(ring_sampling_fraction)
{
	/* 256/1024: a burst of a quarter of each chunk, from its start. */
	struct cab *c = ring_new(8192, 1024, 1, CAB_SAMPLING, 256);
	size_t rpc = rpc_of(1024, 1, CAB_SAMPLING); /* 127 */
	size_t burst = (rpc * 256 + 1023) / 1024;   /* 32 */
	const uint64_t *recs;
	uint64_t r[1], i, total = 4 * rpc;
	struct cab_stats st;
	long n;
	int k;

	for (i = 0; i < total; i++) {
		fill_rec(r, 1, i);
		cab__put(c, r);
	}
	cab__flush(c);
	for (k = 0; k < 4; k++) {
		n = cab__take(c, &recs);
		ck_assert_int_eq(n, (long)burst);
		for (i = 0; i < burst; i++)
			ck_assert(rec_ok(recs + i, 1, (uint64_t)k * rpc + i));
		cab__release(c);
	}
	ck_assert_int_eq(cab__take(c, &recs), 0);
	cab__close(c);
	ck_assert_int_eq(cab__take(c, &recs), -EPIPE);
	cab__stats(c, &st);
	ck_assert_uint_eq(st.produced, total);
	ck_assert_uint_eq(st.consumed, 4 * burst);
	ck_assert_uint_eq(st.overwritten, total - 4 * burst);
	cab__free(c);
}
END_TEST

START_TEST(ring_sampling_flush_partial)
{
	struct cab *c = ring_new(4096, 1024, 3, CAB_SAMPLING, 0);
	const uint64_t *recs;
	uint64_t r[3], i;
	long n;

	for (i = 0; i < 5; i++) {
		fill_rec(r, 3, i);
		cab__put(c, r);
	}
	ck_assert_int_eq(cab__take(c, &recs), 0);
	cab__flush(c);
	n = cab__take(c, &recs);
	ck_assert_int_eq(n, 5);
	for (i = 0; i < 5; i++)
		ck_assert(rec_ok(recs + i * 3, 3, i));
	cab__release(c);
	ck_assert_int_eq(cab__take(c, &recs), 0);
	cab__free(c);
}
END_TEST

/* ---------------------------------------------------------------- cab_pp */

static struct cab_pp *pp_new(size_t recs, unsigned words, size_t n, size_t max, enum cab_mode mode)
{
	struct cab_pp_opts o = {
		.chunk_records = recs,
		.record_words = words,
		.nchunks = n,
		.max_chunks = max,
		.mode = mode,
	};
	struct cab_pp *pp = NULL;

	ck_assert_int_eq(cab_pp__new(&o, &pp), 0);
	ck_assert_ptr_nonnull(pp);
	return pp;
}

/* Open a chunk for tid, write nrec records numbered from seq, publish. */
static void pp_fill(struct cab_pp *pp, uint32_t tid, uint64_t seq, uint32_t nrec)
{
	unsigned words = cab_pp__record_words(pp);
	uint64_t *recs = cab_pp__reserve(pp, tid, seq);
	uint32_t i;

	ck_assert_ptr_nonnull(recs);
	for (i = 0; i < nrec; i++)
		fill_rec(recs + (size_t)i * words, words, seq + i);
	cab_pp__commit(pp, nrec);
}

static void pp_expect(struct cab_pp *pp, uint32_t tid, uint64_t seq, uint32_t nrec)
{
	unsigned words = cab_pp__record_words(pp);
	const struct cab_chunk *ch = cab_pp__take(pp);
	uint32_t i;

	ck_assert_ptr_nonnull(ch);
	ck_assert_uint_eq(ch->magic, CAB_MAGIC);
	ck_assert_uint_eq(ch->tid, tid);
	ck_assert_uint_eq(ch->seq, seq);
	ck_assert_uint_eq(ch->nrec, nrec);
	for (i = 0; i < nrec; i++)
		ck_assert(rec_ok(ch->recs + (size_t)i * words, words, seq + i));
	cab_pp__release(pp, ch);
}

START_TEST(pp_invalid_opts)
{
	struct cab_pp_opts o;
	struct cab_pp *pp = (struct cab_pp *)1;

	memset(&o, 0, sizeof(o));
	o.record_words = CAB_MAX_RECORD_WORDS + 1;
	ck_assert_int_eq(cab_pp__new(&o, &pp), -EINVAL);
	ck_assert_ptr_null(pp);
	o.record_words = 1;
	o.nchunks = 8;
	o.max_chunks = 4; /* below the initial pool */
	ck_assert_int_eq(cab_pp__new(&o, &pp), -EINVAL);
	o.max_chunks = 0;
	o.mode = (enum cab_mode)9;
	ck_assert_int_eq(cab_pp__new(&o, &pp), -EINVAL);
	o.mode = CAB_EXHAUSTIVE;
	o.chunk_records = (size_t)1 << 40;
	ck_assert_int_eq(cab_pp__new(&o, &pp), -EINVAL);
	ck_assert_int_eq(cab_pp__new(NULL, NULL), -EINVAL);
	cab_pp__free(NULL);
}
END_TEST

START_TEST(pp_defaults)
{
	struct cab_pp *pp = NULL;
	struct cab_pp_opts o = {.record_words = 3};
	long l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE);
	size_t expect;

	if (l1d <= 0)
		l1d = 32 * 1024;
	while (l1d & (l1d - 1))
		l1d &= l1d - 1; /* round down to a power of two, as cab/ does */
	expect = ((size_t)4 * (size_t)l1d - sizeof(struct cab_chunk)) / 24;
	ck_assert_int_eq(cab_pp__new(&o, &pp), 0);
	ck_assert_uint_eq(cab_pp__chunk_records(pp), expect);
	ck_assert_uint_eq(cab_pp__record_words(pp), 3);
	cab_pp__free(pp);
	ck_assert_int_eq(cab_pp__new(NULL, &pp), 0);
	ck_assert_uint_eq(cab_pp__record_words(pp), 1);
	cab_pp__free(pp);
}
END_TEST

START_TEST(pp_roundtrip_in_order)
{
	struct cab_pp *pp = pp_new(16, 3, 4, 4, CAB_EXHAUSTIVE);
	struct cab_stats st;

	ck_assert_ptr_null(cab_pp__take(pp));
	pp_fill(pp, 7, 100, 16);
	pp_fill(pp, 9, 5, 3);
	pp_fill(pp, 7, 116, 1);
	pp_expect(pp, 7, 100, 16);
	pp_expect(pp, 9, 5, 3);
	pp_expect(pp, 7, 116, 1);
	ck_assert_ptr_null(cab_pp__take(pp));
	cab_pp__stats(pp, &st);
	ck_assert_uint_eq(st.produced, 20);
	ck_assert_uint_eq(st.consumed, 20);
	ck_assert_uint_eq(st.grown, 0);
	ck_assert_uint_eq(st.overwritten, 0);
	cab_pp__free(pp);
}
END_TEST

START_TEST(pp_publish_empty)
{
	struct cab_pp *pp = pp_new(8, 1, 1, 1, CAB_EXHAUSTIVE);
	uint64_t *a, *b;

	a = cab_pp__reserve(pp, 1, 0);
	cab_pp__commit(pp, 0); /* nothing to hand over */
	ck_assert_ptr_null(cab_pp__take(pp));
	b = cab_pp__reserve(pp, 2, 0); /* the same chunk comes back at once */
	ck_assert_ptr_eq(a, b);
	cab_pp__commit(pp, 0);
	pp_fill(pp, 3, 0, 8);
	pp_expect(pp, 3, 0, 8);
	cab_pp__free(pp);
}
END_TEST

/* The tag goes with the chunk; a plain reserve (or a reused chunk) has 0. */
START_TEST(pp_tag)
{
	struct cab_pp *pp = pp_new(4, 1, 1, 4, CAB_EXHAUSTIVE);
	const struct cab_chunk *ch;
	uint64_t *r;

	r = cab_pp__reserve_tag(pp, 7, 4242, 10);
	ck_assert_ptr_nonnull(r);
	r[0] = 1;
	cab_pp__commit(pp, 1);
	ch = cab_pp__take(pp);
	ck_assert_ptr_nonnull(ch);
	ck_assert_uint_eq(ch->tid, 7);
	ck_assert_uint_eq(ch->tag, 4242);
	ck_assert_uint_eq(ch->seq, 10);
	cab_pp__release(pp, ch);
	pp_fill(pp, 8, 0, 2); /* the same chunk again, untagged */
	ch = cab_pp__take(pp);
	ck_assert_ptr_nonnull(ch);
	ck_assert_uint_eq(ch->tid, 8);
	ck_assert_uint_eq(ch->tag, 0);
	cab_pp__release(pp, ch);
	cab_pp__free(pp);
}
END_TEST

START_TEST(pp_growth)
{
	struct cab_pp *pp = pp_new(4, 1, 2, 8, CAB_EXHAUSTIVE);
	struct cab_stats st;
	uint64_t i;

	/* No consumer: the pool of 2 grows to 5 instead of blocking. */
	for (i = 0; i < 5; i++)
		pp_fill(pp, 1, i * 4, 4);
	cab_pp__stats(pp, &st);
	ck_assert_uint_eq(st.grown, 3);
	ck_assert_uint_eq(st.stalls, 0);
	for (i = 0; i < 5; i++)
		pp_expect(pp, 1, i * 4, 4);
	/* Released chunks are reused: no further growth. */
	for (i = 0; i < 5; i++)
		pp_fill(pp, 1, 20 + i * 4, 4);
	cab_pp__stats(pp, &st);
	ck_assert_uint_eq(st.grown, 3);
	for (i = 0; i < 5; i++)
		pp_expect(pp, 1, 20 + i * 4, 4);
	cab_pp__free(pp); /* frees chunks in either queue */
}
END_TEST

START_TEST(pp_sampling_recycles_oldest)
{
	struct cab_pp *pp = pp_new(4, 2, 2, 3, CAB_SAMPLING);
	struct cab_stats st;

	pp_fill(pp, 1, 0, 4);
	pp_fill(pp, 1, 4, 3);
	pp_fill(pp, 1, 7, 4);  /* grows to the max of 3 */
	pp_fill(pp, 1, 11, 4); /* recycles the oldest: seq 0, 4 records */
	pp_fill(pp, 1, 15, 1); /* recycles seq 4, 3 records */
	cab_pp__close(pp);
	ck_assert(!cab_pp__drained(pp));
	pp_expect(pp, 1, 7, 4);
	pp_expect(pp, 1, 11, 4);
	pp_expect(pp, 1, 15, 1);
	ck_assert_ptr_null(cab_pp__take(pp));
	ck_assert(cab_pp__drained(pp));
	cab_pp__stats(pp, &st);
	ck_assert_uint_eq(st.produced, 16);
	ck_assert_uint_eq(st.overwritten, 7);
	ck_assert_uint_eq(st.consumed, 9);
	ck_assert_uint_eq(st.consumed + st.overwritten, st.produced);
	ck_assert_uint_eq(st.grown, 1);
	ck_assert_uint_eq(st.stalls, 0);
	cab_pp__free(pp);
}
END_TEST

START_TEST(pp_drained)
{
	struct cab_pp *pp = pp_new(4, 1, 2, 2, CAB_EXHAUSTIVE);
	const struct cab_chunk *ch;

	ck_assert(!cab_pp__drained(pp));
	pp_fill(pp, 1, 0, 2);
	ck_assert(!cab_pp__drained(pp));
	cab_pp__close(pp);
	ck_assert(!cab_pp__drained(pp)); /* one chunk still queued */
	ch = cab_pp__take(pp);
	ck_assert_ptr_nonnull(ch);
	ck_assert(cab_pp__drained(pp)); /* taken counts, release or not */
	cab_pp__release(pp, ch);
	ck_assert(cab_pp__drained(pp));
	cab_pp__free(pp);
}
END_TEST

struct pp_blocker {
	struct cab_pp *pp;
	int done;
};

static void *pp_blocker_main(void *arg)
{
	struct pp_blocker *b = arg;
	uint64_t *recs = cab_pp__reserve(b->pp, 42, 0);

	recs[0] = TAG | 99;
	cab_pp__commit(b->pp, 1);
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

START_TEST(pp_exhaustive_waits_at_max)
{
	struct pp_blocker b = {0};
	const struct cab_chunk *ch;
	struct cab_stats st;
	pthread_t th;

	b.pp = pp_new(4, 1, 2, 2, CAB_EXHAUSTIVE);
	pp_fill(b.pp, 1, 0, 4);
	pp_fill(b.pp, 1, 4, 4);
	ck_assert_int_eq(pthread_create(&th, NULL, pp_blocker_main, &b), 0);
	/* Wait until the producer is blocked (its stall is counted once it
	 * waits), however long a loaded machine takes to run it; then 50 ms
	 * more blocked, which a right producer never ends early. */
	do {
		sleep_ms(1);
		cab_pp__stats(b.pp, &st);
	} while (st.stalls == 0);
	sleep_ms(50);
	ck_assert_int_eq(__atomic_load_n(&b.done, __ATOMIC_ACQUIRE), 0);
	ch = cab_pp__take(b.pp);
	ck_assert_uint_eq(ch->seq, 0);
	cab_pp__release(b.pp, ch);
	pthread_join(th, NULL);
	pp_expect(b.pp, 1, 4, 4);
	ch = cab_pp__take(b.pp);
	ck_assert_ptr_nonnull(ch);
	ck_assert_uint_eq(ch->tid, 42);
	ck_assert_uint_eq(ch->recs[0], TAG | 99);
	cab_pp__release(b.pp, ch);
	cab_pp__stats(b.pp, &st);
	ck_assert_uint_eq(st.stalls, 1);
	/* blocked from before its stall was seen until the release: at least
	 * the 50 ms slept in between */
	ck_assert_uint_ge(st.blocked_ns, 50 * 1000000ULL);
	ck_assert_uint_eq(st.grown, 0);
	cab_pp__free(b.pp);
}
END_TEST

static Suite *cab_suite(void)
{
	Suite *s = suite_create("cab");
	TCase *tc = tcase_create("ring");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, ring_invalid_opts);
	tcase_add_test(tc, ring_defaults);
	tcase_add_test(tc, ring_put_take_single);
	tcase_add_test(tc, ring_flush_partial);
	tcase_add_test(tc, ring_flush_at_chunk_boundary);
	tcase_add_test(tc, ring_wraparound);
	tcase_add_test(tc, ring_exactly_full);
	tcase_add_test(tc, ring_close_epipe);
	tcase_add_loop_test(tc, ring_record_sizes, 0, CAB_MAX_RECORD_WORDS);
	tcase_add_test(tc, ring_put_n);
	tcase_add_test(tc, ring_full_blocks_until_two_chunks_free);
	tcase_add_test(tc, ring_sampling_no_overwrite);
	tcase_add_test(tc, ring_sampling_overwrite_accounting);
	tcase_add_test(tc, ring_sampling_fraction);
	tcase_add_test(tc, ring_sampling_flush_partial);
	suite_add_tcase(s, tc);

	tc = tcase_create("pp");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, pp_invalid_opts);
	tcase_add_test(tc, pp_defaults);
	tcase_add_test(tc, pp_roundtrip_in_order);
	tcase_add_test(tc, pp_publish_empty);
	tcase_add_test(tc, pp_growth);
	tcase_add_test(tc, pp_tag);
	tcase_add_test(tc, pp_sampling_recycles_oldest);
	tcase_add_test(tc, pp_drained);
	tcase_add_test(tc, pp_exhaustive_waits_at_max);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cab_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
