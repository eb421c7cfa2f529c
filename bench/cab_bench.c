// SPDX-License-Identifier: BSD-2-Clause
/*
 * cab_bench: single-producer / single-consumer transport benchmark.
 *
 * Producer pinned to CPU 0, consumer to CPU 1. Events of 8 and 16 bytes
 * whose first word is the event number + 1 (never 0, never ~0). The
 * consumer reads every event it receives (it sums the first words), so
 * each queue pays for getting the data across.
 *
 *   CAB exh      struct cab, exhaustive (Ha et al., OOPSLA 2009 fig. 3)
 *   CAB samp     struct cab, sampling, sample_per_1024 = 1024: producer never
 *                waits; "delivered" is the fraction the consumer got
 *   CAB samp 1/16  the same with sample_per_1024 = 64
 *   cab_pp       per-processor CAB: whole chunks with a thread id header
 *   ck_ring      Concurrency Kit's SPSC ring (typed, entries inline)
 *   Lamport      classic Lamport queue: shared head and tail indices, each
 *                side reads the other's index on every operation
 *   FastForward  slot-based (Giacomoni et al., PPoPP 2008): a slot's first
 *                word is its full/empty flag, no shared indices
 *
 * Columns: Mev/s = events / wall time with both sides running; prod ns =
 * producer's wall time / events (includes waiting for a slower consumer);
 * solo ns = enqueue cost alone: fill half the buffer with the consumer
 * idle, best of many rounds (the fast path with warm caches).
 *
 * Then the Ha et al., OOPSLA 2009 fig. 10 sweep: CAB exhaustive, 8-byte events,
 * throughput as the buffer grows from 16 KiB to 16 MiB.
 *
 * Options: -n EVENTS (default 2^27) -b BUFFER_BYTES (default 1 MiB)
 *          -r REPEATS (default 3; the median is printed) -q (skip sweep)
 *          -o NAME (only queues whose name contains NAME)
 */
#define NDEBUG /* measure the release fast path (no record assert) */
#include <ck_ring.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cab/cab.h"

#define LINE 64

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void pin(int cpu)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(n > 1 ? cpu : 0, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static inline void relax(void)
{
	__builtin_ia32_pause();
}

/* ------------------------------------------------------------ harness -- */

struct q;

struct q_ops {
	const char *name;
	int (*init)(struct q *q);
	void (*fini)(struct q *q);
	/* Enqueue events [from, to) (values from + 1 ...). */
	void (*produce)(struct q *q, uint64_t from, uint64_t to);
	/* Signal the end of the stream (after produce). */
	void (*close)(struct q *q);
	/* Dequeue until the stream ends or `want` events arrived; returns
	 * how many arrived, *sum gets the sum of their first words. */
	uint64_t (*consume)(struct q *q, uint64_t want, uint64_t *sum);
	/* Dequeue exactly what is there (single-threaded, for solo runs). */
	void (*drain)(struct q *q);
	int lossy; /* consumer may get fewer than produced */
};

struct q {
	const struct q_ops *ops;
	size_t bytes;	/* buffer size */
	unsigned words; /* event size in 64-bit words: 1 or 2 */
	uint64_t n;	/* events per run */
	void *impl;
	/* run state */
	_Atomic int go;
	uint64_t t_prod, t_end, got, sum, stalls;
};

static void *producer_main(void *arg)
{
	struct q *q = arg;
	uint64_t t0;

	pin(0);
	while (!atomic_load_explicit(&q->go, memory_order_acquire))
		relax();
	t0 = now_ns();
	q->ops->produce(q, 0, q->n);
	q->t_prod = now_ns() - t0;
	q->ops->close(q);
	return NULL;
}

static void *consumer_main(void *arg)
{
	struct q *q = arg;

	pin(1);
	while (!atomic_load_explicit(&q->go, memory_order_acquire))
		relax();
	q->got = q->ops->consume(q, q->n, &q->sum);
	q->t_end = now_ns();
	return NULL;
}

struct result {
	double mevs;	/* million events per second, both running */
	double prod_ns; /* producer wall ns / event */
	double solo_ns; /* enqueue alone ns / event */
	double deliv;	/* fraction delivered */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* One concurrent run. Returns 0 or -1 (setup failed / lost events). */
static int run_once(struct q *q, double *mevs, double *prod_ns, double *deliv)
{
	pthread_t p, c;
	uint64_t t0, expect;

	if (q->ops->init(q))
		return -1;
	atomic_store(&q->go, 0);
	pthread_create(&c, NULL, consumer_main, q);
	pthread_create(&p, NULL, producer_main, q);
	usleep(20000); /* both threads pinned and spinning on go */
	t0 = now_ns();
	atomic_store_explicit(&q->go, 1, memory_order_release);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	*mevs = (double)q->n / (double)(q->t_end - t0) * 1e3;
	*prod_ns = (double)q->t_prod / (double)q->n;
	*deliv = (double)q->got / (double)q->n;
	expect = q->n * (q->n + 1) / 2;
	q->ops->fini(q);
	if (!q->ops->lossy && (q->got != q->n || q->sum != expect)) {
		fprintf(stderr, "%s: got %" PRIu64 " of %" PRIu64 " events, sum %s\n", q->ops->name,
			q->got, q->n, q->sum == expect ? "ok" : "WRONG");
		return -1;
	}
	return 0;
}

/* Enqueue cost alone: half a buffer per round, consumer idle. */
static double solo(struct q *q)
{
	uint64_t per = q->bytes / (q->words * 8) / 2, best = UINT64_MAX, i, t0, t;
	int r;

	if (q->ops->init(q))
		return -1;
	for (r = 0, i = 0; r < 200; r++) {
		t0 = now_ns();
		q->ops->produce(q, i, i + per);
		t = now_ns() - t0;
		if (t < best)
			best = t;
		i += per;
		q->ops->drain(q);
	}
	q->ops->fini(q);
	return (double)best / (double)per;
}

static int measure(struct q *q, int reps, struct result *res)
{
	double m[16], p[16], d[16];
	int i;

	for (i = 0; i < reps; i++)
		if (run_once(q, &m[i], &p[i], &d[i]))
			return -1;
	res->mevs = median(m, reps);
	res->prod_ns = median(p, reps);
	res->deliv = median(d, reps);
	res->solo_ns = solo(q);
	return 0;
}

/* ------------------------------------------------------- CAB (ring) -- */

static int cab_init_mode(struct q *q, enum cab_mode mode, unsigned spk)
{
	struct cab_opts o = {
		.buffer_bytes = q->bytes,
		.record_words = q->words,
		.mode = mode,
		.sample_per_1024 = spk,
	};
	struct cab *c;

	if (cab__new(&o, &c))
		return -1;
	q->impl = c;
	return 0;
}

static int cabx_init(struct q *q)
{
	return cab_init_mode(q, CAB_EXHAUSTIVE, 0);
}

static int cabs_init(struct q *q)
{
	return cab_init_mode(q, CAB_SAMPLING, 1024);
}

/* Sampling as meant: the consumer analyzes 64/1024 of each chunk. */
static int cabs64_init(struct q *q)
{
	return cab_init_mode(q, CAB_SAMPLING, 64);
}

static void cab_fini(struct q *q)
{
	struct cab_stats st;

	cab__stats(q->impl, &st);
	q->stalls = st.stalls;
	cab__free(q->impl);
}

static void cab_produce(struct q *q, uint64_t from, uint64_t to)
{
	struct cab *c = q->impl;
	uint64_t i, r[2];

	/* Constant record sizes: cab__put_n() unrolls to the stores. */
	if (q->words == 1) {
		for (i = from; i < to; i++) {
			r[0] = i + 1;
			cab__put_n(c, r, 1);
		}
	} else {
		for (i = from; i < to; i++) {
			r[0] = i + 1;
			r[1] = i;
			cab__put_n(c, r, 2);
		}
	}
}

static void cab_close(struct q *q)
{
	cab__close(q->impl);
}

static uint64_t cab_consume(struct q *q, uint64_t want, uint64_t *sum)
{
	struct cab *c = q->impl;
	const uint64_t *recs;
	uint64_t got = 0, s = 0;
	unsigned w = q->words;
	long n, i;

	(void)want;
	for (;;) {
		n = cab__take(c, &recs);
		if (n == -EPIPE)
			break;
		if (n == 0) {
			relax();
			continue;
		}
		for (i = 0; i < n; i++)
			s += recs[(size_t)i * w];
		got += (uint64_t)n;
		cab__release(c);
	}
	*sum = s;
	return got;
}

static void cab_drain(struct q *q)
{
	const uint64_t *recs;

	cab__flush(q->impl);
	while (cab__take(q->impl, &recs) > 0)
		cab__release(q->impl);
}

static const struct q_ops cabx_ops = {"CAB exh", cabx_init,   cab_fini,	 cab_produce,
				      cab_close, cab_consume, cab_drain, 0};
static const struct q_ops cabs_ops = {"CAB samp", cabs_init,   cab_fini,  cab_produce,
				      cab_close,  cab_consume, cab_drain, 1};
static const struct q_ops cabs64_ops = {"CAB samp 1/16", cabs64_init, cab_fini,	 cab_produce,
					cab_close,	 cab_consume, cab_drain, 1};

/* ------------------------------------------------------------ cab_pp -- */

static int pp_init(struct q *q)
{
	size_t recs = 4 * 32768 / (q->words * 8) - 3; /* ~ the default chunk */
	struct cab_pp_opts o = {
		.chunk_records = recs,
		.record_words = q->words,
		/* The same memory as the ring: buffer / chunk chunks. */
		.nchunks = q->bytes / (recs * q->words * 8 + 24),
		.mode = CAB_EXHAUSTIVE,
	};
	struct cab_pp *pp;

	if (o.nchunks < 2)
		o.nchunks = 2;
	o.max_chunks = o.nchunks; /* no growth: wait like the ring */
	if (cab_pp__new(&o, &pp))
		return -1;
	q->impl = pp;
	return 0;
}

static void pp_fini(struct q *q)
{
	struct cab_stats st;

	cab_pp__stats(q->impl, &st);
	q->stalls = st.stalls;
	cab_pp__free(q->impl);
}

static void pp_produce(struct q *q, uint64_t from, uint64_t to)
{
	struct cab_pp *pp = q->impl;
	uint64_t cap = cab_pp__chunk_records(pp), i = from;

	while (i < to) {
		uint64_t *r = cab_pp__reserve(pp, 4242, i);
		uint64_t n = to - i < cap ? to - i : cap, k;

		if (q->words == 1) {
			for (k = 0; k < n; k++)
				r[k] = i + k + 1;
		} else {
			for (k = 0; k < n; k++) {
				r[2 * k] = i + k + 1;
				r[2 * k + 1] = i + k;
			}
		}
		cab_pp__commit(pp, (uint32_t)n);
		i += n;
	}
}

static void pp_close(struct q *q)
{
	cab_pp__close(q->impl);
}

static uint64_t pp_consume(struct q *q, uint64_t want, uint64_t *sum)
{
	struct cab_pp *pp = q->impl;
	uint64_t got = 0, s = 0;
	unsigned w = q->words;

	(void)want;
	for (;;) {
		const struct cab_chunk *ch = cab_pp__take(pp);
		uint32_t i;

		if (!ch) {
			if (cab_pp__drained(pp))
				break;
			relax();
			continue;
		}
		for (i = 0; i < ch->nrec; i++)
			s += ch->recs[(size_t)i * w];
		got += ch->nrec;
		cab_pp__release(pp, ch);
	}
	*sum = s;
	return got;
}

static void pp_drain(struct q *q)
{
	const struct cab_chunk *ch;

	while ((ch = cab_pp__take(q->impl)))
		cab_pp__release(q->impl, ch);
}

static const struct q_ops pp_ops = {"cab_pp", pp_init,	  pp_fini,  pp_produce,
				    pp_close, pp_consume, pp_drain, 0};

/* ------------------------------------------------------------ ck_ring -- */

struct ev8 {
	uint64_t a;
};
struct ev16 {
	uint64_t a, b;
};
CK_RING_PROTOTYPE(ev8, ev8)
CK_RING_PROTOTYPE(ev16, ev16)

struct ck_impl {
	alignas(LINE) ck_ring_t ring;
	void *buf;
	_Atomic int closed;
};

static int ck_init(struct q *q)
{
	struct ck_impl *k = aligned_alloc(LINE, sizeof(*k));
	size_t n = q->bytes / (q->words * 8);

	if (!k)
		return -1;
	memset(k, 0, sizeof(*k));
	k->buf = aligned_alloc(LINE, q->bytes);
	if (!k->buf) {
		free(k);
		return -1;
	}
	memset(k->buf, 0, q->bytes);
	ck_ring_init(&k->ring, (unsigned)n);
	q->impl = k;
	return 0;
}

static void ck_fini(struct q *q)
{
	struct ck_impl *k = q->impl;

	free(k->buf);
	free(k);
}

static void ck_produce(struct q *q, uint64_t from, uint64_t to)
{
	struct ck_impl *k = q->impl;
	uint64_t i, stalls = 0;

	if (q->words == 1) {
		for (i = from; i < to; i++) {
			struct ev8 e = {i + 1};

			while (!ck_ring_enqueue_spsc_ev8(&k->ring, k->buf, &e))
				stalls++, relax();
		}
	} else {
		for (i = from; i < to; i++) {
			struct ev16 e = {i + 1, i};

			while (!ck_ring_enqueue_spsc_ev16(&k->ring, k->buf, &e))
				stalls++, relax();
		}
	}
	q->stalls = stalls;
}

static void ck_close(struct q *q)
{
	struct ck_impl *k = q->impl;

	atomic_store_explicit(&k->closed, 1, memory_order_release);
}

static uint64_t ck_consume(struct q *q, uint64_t want, uint64_t *sum)
{
	struct ck_impl *k = q->impl;
	uint64_t got = 0, s = 0;

	while (got < want) {
		bool ok;

		if (q->words == 1) {
			struct ev8 e;

			ok = ck_ring_dequeue_spsc_ev8(&k->ring, k->buf, &e);
			if (ok)
				s += e.a;
		} else {
			struct ev16 e;

			ok = ck_ring_dequeue_spsc_ev16(&k->ring, k->buf, &e);
			if (ok)
				s += e.a;
		}
		if (ok)
			got++;
		else
			relax();
	}
	*sum = s;
	return got;
}

static void ck_drain(struct q *q)
{
	struct ck_impl *k = q->impl;
	struct ev16 e;
	struct ev8 e8;

	if (q->words == 1)
		while (ck_ring_dequeue_spsc_ev8(&k->ring, k->buf, &e8))
			;
	else
		while (ck_ring_dequeue_spsc_ev16(&k->ring, k->buf, &e))
			;
}

static const struct q_ops ck_ops = {"ck_ring", ck_init,	   ck_fini,  ck_produce,
				    ck_close,  ck_consume, ck_drain, 0};

/* ------------------------------------------------------------ Lamport -- */

/* Lamport 1983, in its classic form: the producer reads the consumer's
 * index and the consumer the producer's on every operation. */
struct lamport {
	alignas(LINE) _Atomic uint64_t head; /* consumer */
	alignas(LINE) _Atomic uint64_t tail; /* producer */
	alignas(LINE) uint64_t *buf;
	uint64_t mask; /* in events */
};

static int lam_init(struct q *q)
{
	struct lamport *l = aligned_alloc(LINE, sizeof(*l));

	if (!l)
		return -1;
	memset(l, 0, sizeof(*l));
	l->buf = aligned_alloc(LINE, q->bytes);
	if (!l->buf) {
		free(l);
		return -1;
	}
	memset(l->buf, 0, q->bytes);
	l->mask = q->bytes / (q->words * 8) - 1;
	q->impl = l;
	return 0;
}

static void lam_fini(struct q *q)
{
	struct lamport *l = q->impl;

	free(l->buf);
	free(l);
}

static void lam_produce(struct q *q, uint64_t from, uint64_t to)
{
	struct lamport *l = q->impl;
	unsigned w = q->words;
	uint64_t i, t = atomic_load_explicit(&l->tail, memory_order_relaxed);

	for (i = from; i < to; i++) {
		uint64_t *slot;

		/* Acquire pairs with the consumer's release of head. */
		while (t - atomic_load_explicit(&l->head, memory_order_acquire) > l->mask)
			relax();
		slot = l->buf + (t & l->mask) * w;
		slot[0] = i + 1;
		if (w == 2)
			slot[1] = i;
		/* Release pairs with the consumer's acquire of tail. */
		atomic_store_explicit(&l->tail, ++t, memory_order_release);
	}
}

static void lam_close(struct q *q)
{
	(void)q;
}

static uint64_t lam_consume(struct q *q, uint64_t want, uint64_t *sum)
{
	struct lamport *l = q->impl;
	unsigned w = q->words;
	uint64_t h = atomic_load_explicit(&l->head, memory_order_relaxed), got = 0, s = 0;

	while (got < want) {
		if (atomic_load_explicit(&l->tail, memory_order_acquire) == h) {
			relax();
			continue;
		}
		s += l->buf[(h & l->mask) * w];
		atomic_store_explicit(&l->head, ++h, memory_order_release);
		got++;
	}
	*sum = s;
	return got;
}

static void lam_drain(struct q *q)
{
	struct lamport *l = q->impl;

	atomic_store(&l->head, atomic_load(&l->tail));
}

static const struct q_ops lam_ops = {"Lamport", lam_init,    lam_fini,	lam_produce,
				     lam_close, lam_consume, lam_drain, 0};

/* -------------------------------------------------------- FastForward -- */

/* Giacomoni, Moseley, Vachharajani, PPoPP 2008: each side keeps its own
 * index privately; a slot's first word says full (non-zero) or empty. */
struct ff {
	alignas(LINE) uint64_t head; /* producer-private */
	alignas(LINE) uint64_t tail; /* consumer-private */
	alignas(LINE) uint64_t *buf;
	uint64_t mask;
};

static int ff_init(struct q *q)
{
	struct ff *f = aligned_alloc(LINE, sizeof(*f));

	if (!f)
		return -1;
	memset(f, 0, sizeof(*f));
	f->buf = aligned_alloc(LINE, q->bytes);
	if (!f->buf) {
		free(f);
		return -1;
	}
	memset(f->buf, 0, q->bytes);
	f->mask = q->bytes / (q->words * 8) - 1;
	q->impl = f;
	return 0;
}

static void ff_fini(struct q *q)
{
	struct ff *f = q->impl;

	free(f->buf);
	free(f);
}

static inline _Atomic uint64_t *ff_flag(struct ff *f, uint64_t i, unsigned w)
{
	return (_Atomic uint64_t *)(f->buf + (i & f->mask) * w);
}

static void ff_produce(struct q *q, uint64_t from, uint64_t to)
{
	struct ff *f = q->impl;
	unsigned w = q->words;
	uint64_t i, h = f->head;

	for (i = from; i < to; i++, h++) {
		_Atomic uint64_t *s = ff_flag(f, h, w);

		/* Acquire pairs with the consumer's release of 0. */
		while (atomic_load_explicit(s, memory_order_acquire) != 0)
			relax();
		if (w == 2)
			((uint64_t *)s)[1] = i;
		/* Release pairs with the consumer's acquire of the flag. */
		atomic_store_explicit(s, i + 1, memory_order_release);
	}
	f->head = h;
}

static void ff_close(struct q *q)
{
	(void)q;
}

static uint64_t ff_consume(struct q *q, uint64_t want, uint64_t *sum)
{
	struct ff *f = q->impl;
	unsigned w = q->words;
	uint64_t t = f->tail, got = 0, s = 0;

	while (got < want) {
		_Atomic uint64_t *sl = ff_flag(f, t, w);
		uint64_t v = atomic_load_explicit(sl, memory_order_acquire);

		if (!v) {
			relax();
			continue;
		}
		s += v;
		atomic_store_explicit(sl, 0, memory_order_release);
		t++;
		got++;
	}
	f->tail = t;
	*sum = s;
	return got;
}

static void ff_drain(struct q *q)
{
	struct ff *f = q->impl;
	uint64_t s;

	ff_consume(q, f->head - f->tail, &s);
}

static const struct q_ops ff_ops = {"FastForward", ff_init,    ff_fini,	 ff_produce,
				    ff_close,	   ff_consume, ff_drain, 0};

/* --------------------------------------------------------------- main -- */

int main(int argc, char **argv)
{
	const struct q_ops *all[] = {&cabx_ops, &cabs_ops, &cabs64_ops, &pp_ops,
				     &ck_ops,	&lam_ops,  &ff_ops};
	uint64_t n = 1ULL << 27;
	size_t bytes = 1 << 20, b;
	int reps = 3, sweep = 1, opt, rc = 0;
	const char *only = NULL;
	unsigned w;
	size_t i;

	while ((opt = getopt(argc, argv, "n:b:r:qo:")) != -1) {
		switch (opt) {
		case 'n':
			n = strtoull(optarg, NULL, 0);
			break;
		case 'b':
			bytes = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			reps = atoi(optarg);
			if (reps < 1 || reps > 16)
				reps = 3;
			break;
		case 'q':
			sweep = 0;
			break;
		case 'o':
			only = optarg;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-n events] [-b buffer_bytes] [-r reps] [-q] [-o "
				"queue]\n",
				argv[0]);
			return 2;
		}
	}
	printf("cab_bench: %" PRIu64 " events per run, buffer %zu KiB, median of %d, "
	       "producer CPU 0, consumer CPU 1, L1d %ld KiB\n",
	       n, bytes >> 10, reps, sysconf(_SC_LEVEL1_DCACHE_SIZE) >> 10);
	printf("\n| queue | event | Mev/s | prod ns/ev | solo ns/ev | delivered |\n");
	printf("| --- | --- | ---: | ---: | ---: | ---: |\n");
	for (w = 1; w <= 2; w++) {
		for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
			struct q q = {.ops = all[i], .bytes = bytes, .words = w, .n = n};
			struct result r;

			if (only && !strstr(all[i]->name, only))
				continue;
			if (measure(&q, reps, &r)) {
				printf("| %s | %u B | failed | | | |\n", all[i]->name, w * 8);
				rc = 1;
				continue;
			}
			printf("| %s | %u B | %.1f | %.2f | %.2f | %.1f%% |\n", all[i]->name, w * 8,
			       r.mevs, r.prod_ns, r.solo_ns, r.deliv * 100);
			fflush(stdout);
		}
	}
	if (!sweep)
		return rc;
	printf("\nFig. 10 sweep: CAB exhaustive, 8-byte events, chunk = min(4 x L1d, buffer/4)\n");
	printf("\n| buffer | Mev/s | prod ns/ev |\n| ---: | ---: | ---: |\n");
	for (b = 16 << 10; b <= (16 << 20); b <<= 1) {
		struct q q = {.ops = &cabx_ops, .bytes = b, .words = 1, .n = n};
		double m[16], p[16], d[16];
		int k;

		for (k = 0; k < reps; k++)
			if (run_once(&q, &m[k], &p[k], &d[k]))
				return 1;
		if (b >= (1 << 20))
			printf("| %zu MiB | %.1f | %.2f |\n", b >> 20, median(m, reps),
			       median(p, reps));
		else
			printf("| %zu KiB | %.1f | %.2f |\n", b >> 10, median(m, reps),
			       median(p, reps));
		fflush(stdout);
	}
	return rc;
}
