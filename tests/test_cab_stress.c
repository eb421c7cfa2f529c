// SPDX-License-Identifier: BSD-2-Clause
/*
 * Concurrency stress of cab/: a producer thread and a consumer thread,
 * pinned to CPUs 0 and 1, move millions of sequence-numbered records
 * through rings and per-processor buffers of random (seeded) geometry.
 *
 *   exhaustive ring  every record arrives exactly once, in order, intact
 *   sampling ring    delivered records are intact and strictly increasing;
 *                    delivered + overwritten == produced
 *   cab_pp           several thread ids interleaved chunk by chunk; per-tid
 *                    sequence continuity (exhaustive) or monotonicity with
 *                    exact loss accounting (sampling)
 *
 * CAB_SEED=<n> in the environment replays a run; the seed is printed.
 * CAB_STRESS_ONE_CPU=1 pins both threads to CPU 0.
 * Built with -DCABBPF_TSAN (make tsan-check) the event counts shrink so
 * that the suite stays within a few minutes under ThreadSanitizer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setaffinity_np */
#endif
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cab/cab.h"

#ifdef CABBPF_TSAN
#define SCALE 10 /* ThreadSanitizer slows this suite ~10x */
#else
#define SCALE 1
#endif

#define TAG (1ULL << 56)

static uint64_t g_seed;

/* xorshift64*: small, seedable, good enough for picking sizes. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static uint64_t rnd_range(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + rnd(s) % (hi - lo + 1);
}

/* CAB_STRESS_ONE_CPU=1 puts both threads on CPU 0: the blocked side must
 * then sleep for the other to run at all. */
static void pin(int cpu)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	const char *one = getenv("CAB_STRESS_ONE_CPU");
	cpu_set_t set;

	if (one && *one == '1')
		n = 1;
	CPU_ZERO(&set);
	CPU_SET(n > 1 ? cpu : 0, &set);
	/* Best effort: a restricted cpuset just leaves the thread unpinned. */
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Word w of record number i: word 0 carries i, the others a function of
 * i and w, so a torn or stale record is detected. */
static inline uint64_t word_of(uint64_t i, unsigned w)
{
	return w == 0 ? (TAG | i) : (i * 0x9E3779B97F4A7C15ULL) ^ w;
}

static inline int rec_intact(const uint64_t *r, unsigned words, uint64_t *seq)
{
	unsigned w;

	if ((r[0] & 0xff00000000000000ULL) != TAG)
		return 0;
	*seq = r[0] & ~TAG;
	for (w = 1; w < words; w++)
		if (r[w] != word_of(*seq, w))
			return 0;
	return 1;
}

static void busy_ns(uint64_t ns)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ULL + (uint64_t)b.tv_nsec -
		       (uint64_t)a.tv_nsec <
	       ns);
}

/* ------------------------------------------------------------------ ring */

struct ring_run {
	struct cab *c;
	unsigned words;
	enum cab_mode mode;
	uint64_t n;	      /* records to produce */
	uint64_t flush_every; /* producer flushes every this many puts; 0 never */
	uint64_t slow_ns;     /* consumer work per chunk */
	uint64_t seed;
	/* consumer results */
	uint64_t got, bad, order, last;
};

static void *ring_producer(void *arg)
{
	struct ring_run *r = arg;
	uint64_t rec[CAB_MAX_RECORD_WORDS], i;
	unsigned w;

	pin(0);
	for (i = 0; i < r->n; i++) {
		for (w = 0; w < r->words; w++)
			rec[w] = word_of(i, w);
		cab__put(r->c, rec);
		if (r->flush_every && i % r->flush_every == r->flush_every - 1)
			cab__flush(r->c);
	}
	cab__close(r->c);
	return NULL;
}

static void *ring_consumer(void *arg)
{
	struct ring_run *r = arg;
	const uint64_t *recs;
	uint64_t expect = 0, seq;
	int first = 1;
	long n, i;

	pin(1);
	for (;;) {
		n = cab__take(r->c, &recs);
		if (n == -EPIPE)
			break;
		if (n == 0) {
			sched_yield();
			continue;
		}
		for (i = 0; i < n; i++) {
			if (!rec_intact(recs + i * r->words, r->words, &seq)) {
				r->bad++;
				continue;
			}
			if (r->mode == CAB_EXHAUSTIVE) {
				if (seq != expect)
					r->order++;
				expect = seq + 1;
			} else {
				if (!first && seq <= r->last)
					r->order++;
			}
			first = 0;
			r->last = seq;
		}
		r->got += (uint64_t)n;
		if (r->slow_ns)
			busy_ns(r->slow_ns);
		cab__release(r->c);
	}
	return NULL;
}

static void ring_run(struct ring_run *r, size_t buf, size_t chunk, unsigned spk)
{
	struct cab_opts o = {
		.buffer_bytes = buf,
		.chunk_bytes = chunk,
		.record_words = r->words,
		.mode = r->mode,
		.sample_per_1024 = spk,
	};
	pthread_t p, q;
	struct cab_stats st;

	ck_assert_int_eq(cab__new(&o, &r->c), 0);
	ck_assert_int_eq(pthread_create(&q, NULL, ring_consumer, r), 0);
	ck_assert_int_eq(pthread_create(&p, NULL, ring_producer, r), 0);
	pthread_join(p, NULL);
	pthread_join(q, NULL);
	cab__stats(r->c, &st);
	printf("  %-10s buf %8zu chunk %7zu words %u spk %4u flush/%-6" PRIu64 " n %8" PRIu64
	       ": got %8" PRIu64 " over %8" PRIu64 " stalls %6" PRIu64 "\n",
	       r->mode == CAB_SAMPLING ? "sampling" : "exhaustive", buf, chunk, r->words, spk,
	       r->flush_every, r->n, r->got, st.overwritten, st.stalls);
	ck_assert_msg(r->bad == 0, "%" PRIu64 " torn records (seed %" PRIu64 ")", r->bad, g_seed);
	ck_assert_msg(r->order == 0, "%" PRIu64 " out of order (seed %" PRIu64 ")", r->order,
		      g_seed);
	ck_assert_uint_eq(st.produced, r->n);
	ck_assert_uint_eq(st.consumed, r->got);
	ck_assert_uint_eq(st.consumed + st.overwritten, st.produced);
	if (r->mode == CAB_EXHAUSTIVE) {
		ck_assert_uint_eq(r->got, r->n);
		ck_assert_uint_eq(r->last, r->n - 1);
		ck_assert_uint_eq(st.overwritten, 0);
	} else {
		ck_assert_uint_le(r->got, r->n);
		if (spk == 0 || spk == 1024) /* the final chunk arrives whole */
			ck_assert_uint_eq(r->last, r->n - 1);
	}
	cab__free(r->c);
}

/* Random geometry: buffer 16 KiB .. 4 MiB, chunk 64 B .. buffer / 4. */
static void pick(uint64_t *s, size_t *buf, size_t *chunk, unsigned *words)
{
	unsigned lb = (unsigned)rnd_range(s, 14, 22);
	unsigned lc = (unsigned)rnd_range(s, 6, lb - 2);

	*buf = (size_t)1 << lb;
	*chunk = (size_t)1 << lc;
	*words = (unsigned)rnd_range(s, 1, CAB_MAX_RECORD_WORDS);
	if (*words * 8 >= *chunk) /* keep a sampling chunk able to hold one */
		*words = 1;
}

START_TEST(stress_ring_exhaustive)
{
	uint64_t s = g_seed ^ 0x1111;
	static const unsigned fixed_words[] = {1, 2, 3};
	int k;

	for (k = 0; k < 10; k++) {
		struct ring_run r = {0};
		size_t buf, chunk;

		pick(&s, &buf, &chunk, &r.words);
		if (k < 3)
			r.words = fixed_words[k];
		r.mode = CAB_EXHAUSTIVE;
		r.n = 20000000 / SCALE;
		/* Half the runs flush now and then, as the loader does. */
		r.flush_every = (k & 1) ? rnd_range(&s, 1, 5000) : 0;
		/* Some have a slow consumer: the producer blocks and sleeps. */
		if (k % 4 == 3) {
			r.slow_ns = rnd_range(&s, 1000, 10000);
			r.n /= 10;
		}
		ring_run(&r, buf, chunk, 0);
	}
}
END_TEST

/* A tiny ring and a producer that flushes after every record or two:
 * many partial chunks, full-ring blocking all the time. */
START_TEST(stress_ring_exhaustive_tiny)
{
	struct ring_run r = {0};

	r.words = 3;
	r.mode = CAB_EXHAUSTIVE;
	r.n = 2000000 / SCALE;
	r.flush_every = 2;
	ring_run(&r, 1024, 256, 0);
}
END_TEST

START_TEST(stress_ring_sampling)
{
	uint64_t s = g_seed ^ 0x2222;
	int k;

	for (k = 0; k < 10; k++) {
		struct ring_run r = {0};
		size_t buf, chunk;
		unsigned spk;

		pick(&s, &buf, &chunk, &r.words);
		r.mode = CAB_SAMPLING;
		r.n = 20000000 / SCALE;
		r.flush_every = (k & 1) ? rnd_range(&s, 1, 5000) : 0;
		spk = (unsigned)rnd_range(&s, 0, 1024);
		/* Every other run has a slow consumer, so the producer laps
		 * it and overwrites chunks while they are being copied. */
		r.slow_ns = (k & 2) ? rnd_range(&s, 1000, 20000) : 0;
		ring_run(&r, buf, chunk, spk);
	}
}
END_TEST

START_TEST(stress_ring_sampling_lapped)
{
	/* A 16 KiB ring and a consumer 50 us per chunk: overwrites certain. */
	struct ring_run r = {0};

	r.words = 2;
	r.mode = CAB_SAMPLING;
	r.n = 2000000 / SCALE;
	r.slow_ns = 50000;
	ring_run(&r, 16384, 1024, 1024);
	/* ring_run() checked the accounting; here loss must have happened
	 * and must not have been total. */
	ck_assert_uint_lt(r.got, r.n);
	ck_assert_uint_gt(r.got, 0);
}
END_TEST

/* ---------------------------------------------------------------- cab_pp */

#define PP_TIDS 5

struct pp_run {
	struct cab_pp *pp;
	enum cab_mode mode;
	uint64_t n; /* records to produce, all tids together */
	uint64_t seed;
	uint64_t slow_ns;
	/* producer */
	uint64_t produced[PP_TIDS];
	/* consumer */
	uint64_t next[PP_TIDS]; /* next expected sequence number per tid */
	uint64_t got, bad, gap, back, chunks;
};

static const uint32_t pp_tid[PP_TIDS] = {1001, 1002, 77, 4000000, 5};

static void *pp_producer(void *arg)
{
	struct pp_run *r = arg;
	unsigned words = cab_pp__record_words(r->pp);
	size_t cap = cab_pp__chunk_records(r->pp);
	uint64_t s = r->seed, done = 0;

	pin(0);
	while (done < r->n) {
		unsigned t = (unsigned)(rnd(&s) % PP_TIDS);
		uint64_t seq = r->produced[t];
		uint32_t nrec = (uint32_t)rnd_range(&s, 0, cap);
		uint64_t *recs = cab_pp__reserve(r->pp, pp_tid[t], seq);
		uint32_t i;
		unsigned w;

		if (!recs) {
			r->bad++; /* out of memory: fail the test */
			break;
		}
		if (nrec > r->n - done)
			nrec = (uint32_t)(r->n - done);
		for (i = 0; i < nrec; i++)
			for (w = 0; w < words; w++)
				recs[(size_t)i * words + w] =
					word_of(seq + i, w) ^ ((uint64_t)t << 48);
		cab_pp__commit(r->pp, nrec);
		r->produced[t] += nrec;
		done += nrec;
	}
	cab_pp__close(r->pp);
	return NULL;
}

static void *pp_consumer(void *arg)
{
	struct pp_run *r = arg;
	unsigned words = cab_pp__record_words(r->pp);

	pin(1);
	for (;;) {
		const struct cab_chunk *ch = cab_pp__take(r->pp);
		unsigned t;
		uint32_t i;
		unsigned w;

		if (!ch) {
			if (cab_pp__drained(r->pp))
				break;
			sched_yield();
			continue;
		}
		for (t = 0; t < PP_TIDS && pp_tid[t] != ch->tid; t++)
			;
		if (t == PP_TIDS || ch->magic != CAB_MAGIC || ch->nrec == 0) {
			r->bad++;
			cab_pp__release(r->pp, ch);
			continue;
		}
		if (ch->seq != r->next[t]) {
			if (ch->seq < r->next[t])
				r->back++; /* never allowed */
			else
				r->gap++; /* allowed only in sampling mode */
		}
		for (i = 0; i < ch->nrec; i++)
			for (w = 0; w < words; w++)
				if (ch->recs[(size_t)i * words + w] !=
				    (word_of(ch->seq + i, w) ^ ((uint64_t)t << 48)))
					r->bad++;
		r->next[t] = ch->seq + ch->nrec;
		r->got += ch->nrec;
		r->chunks++;
		if (r->slow_ns)
			busy_ns(r->slow_ns);
		cab_pp__release(r->pp, ch);
	}
	return NULL;
}

static void pp_run(struct pp_run *r, size_t recs, unsigned words, size_t n, size_t max)
{
	struct cab_pp_opts o = {
		.chunk_records = recs,
		.record_words = words,
		.nchunks = n,
		.max_chunks = max,
		.mode = r->mode,
	};
	struct cab_stats st;
	pthread_t p, q;
	unsigned t;

	ck_assert_int_eq(cab_pp__new(&o, &r->pp), 0);
	ck_assert_int_eq(pthread_create(&q, NULL, pp_consumer, r), 0);
	ck_assert_int_eq(pthread_create(&p, NULL, pp_producer, r), 0);
	pthread_join(p, NULL);
	pthread_join(q, NULL);
	cab_pp__stats(r->pp, &st);
	printf("  pp %-10s recs %5zu words %u pool %3zu..%-4zu n %8" PRIu64 ": got %8" PRIu64
	       " chunks %7" PRIu64 " over %8" PRIu64 " grown %4" PRIu64 " stalls %6" PRIu64 "\n",
	       r->mode == CAB_SAMPLING ? "sampling" : "exhaustive", recs, words, n, max, r->n,
	       r->got, r->chunks, st.overwritten, st.grown, st.stalls);
	ck_assert_msg(r->bad == 0, "%" PRIu64 " bad records (seed %" PRIu64 ")", r->bad, g_seed);
	ck_assert_msg(r->back == 0, "%" PRIu64 " chunks went back (seed %" PRIu64 ")", r->back,
		      g_seed);
	ck_assert_uint_eq(st.produced, r->n);
	ck_assert_uint_eq(st.consumed, r->got);
	ck_assert_uint_eq(st.consumed + st.overwritten, st.produced);
	ck_assert_uint_le(st.grown, max - n);
	if (r->mode == CAB_EXHAUSTIVE) {
		ck_assert_msg(r->gap == 0, "%" PRIu64 " gaps (seed %" PRIu64 ")", r->gap, g_seed);
		ck_assert_uint_eq(r->got, r->n);
		for (t = 0; t < PP_TIDS; t++)
			ck_assert_uint_eq(r->next[t], r->produced[t]);
	}
	cab_pp__free(r->pp);
}

START_TEST(stress_pp_exhaustive)
{
	uint64_t s = g_seed ^ 0x3333;
	int k;

	for (k = 0; k < 8; k++) {
		struct pp_run r = {0};
		size_t recs = (size_t)rnd_range(&s, 1, 4096);
		unsigned words = k < 3 ? (unsigned)k + 1 : (unsigned)rnd_range(&s, 1, 8);
		size_t n = (size_t)rnd_range(&s, 1, 8);
		size_t max = n + (size_t)rnd_range(&s, 0, 8);

		r.mode = CAB_EXHAUSTIVE;
		r.n = 20000000 / SCALE;
		/* Some have a slow consumer: the pool grows, then waits. */
		r.slow_ns = (k % 4 == 3) ? rnd_range(&s, 2000, 20000) : 0;
		r.seed = rnd(&s) | 1;
		pp_run(&r, recs, words, n, max);
	}
}
END_TEST

START_TEST(stress_pp_sampling)
{
	uint64_t s = g_seed ^ 0x4444;
	int k;

	for (k = 0; k < 8; k++) {
		struct pp_run r = {0};
		size_t recs = (size_t)rnd_range(&s, 1, 2048);
		unsigned words = (unsigned)rnd_range(&s, 1, 4);
		size_t n = (size_t)rnd_range(&s, 1, 4);
		size_t max = n + (size_t)rnd_range(&s, 0, 4);

		r.mode = CAB_SAMPLING;
		r.n = 20000000 / SCALE;
		r.seed = rnd(&s) | 1;
		/* A slow consumer half the time, so recycling happens. */
		r.slow_ns = (k & 1) ? rnd_range(&s, 2000, 20000) : 0;
		pp_run(&r, recs, words, n, max);
	}
}
END_TEST

static Suite *stress_suite(void)
{
	Suite *s = suite_create("cab_stress");
	TCase *tc = tcase_create("stress");

	/* Seconds normally; ThreadSanitizer needs more headroom. */
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, stress_ring_exhaustive);
	tcase_add_test(tc, stress_ring_exhaustive_tiny);
	tcase_add_test(tc, stress_ring_sampling);
	tcase_add_test(tc, stress_ring_sampling_lapped);
	tcase_add_test(tc, stress_pp_exhaustive);
	tcase_add_test(tc, stress_pp_sampling);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	const char *e = getenv("CAB_SEED");
	SRunner *sr;
	int failed;

	g_seed = e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	if (!g_seed)
		g_seed = 1;
	printf("test_cab_stress: seed %" PRIu64 " (replay with CAB_SEED=%" PRIu64 ")\n", g_seed,
	       g_seed);
	fflush(stdout);
	sr = srunner_create(stress_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
