// SPDX-License-Identifier: BSD-2-Clause
/*
 * The loader's threads: the re-staging producer (user/trace/stage.c) feeding
 * per-processor CAB buffers while analyzer threads (pipeline/runner.c)
 * consume them, concurrently. Built and run under ThreadSanitizer by
 * `make tsan-check` (and normally by `make check`).
 *
 * 1. Synthetic: program threads whose events hop between CPUs' buffers at
 *    random, pushed by one loader thread while 1 or 2 analyzer threads run;
 *    counts and edges are asserted exactly, with no order gaps.
 * 2. Real: when CABBPF_BIN names a cabbpf built with the same sanitizer and
 *    we are root, that binary traces real targets; it must exit 0 (a TSan
 *    report makes it exit non-zero) with exact counts.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>

#include "analyzers/callgraph.h"
#include "analyzers/count.h"
#include "pipeline/record.h"
#include "pipeline/runner.h"
#include "tests/harness.h"
#include "user/trace/stage.h"

#define NCPU 2
#define NTHREADS 5

struct prog_thread {
	uint32_t tid;
	uint64_t seq;
	/* position in the pattern: rep, k, step */
	unsigned rep, k, step;
	bool done;
};

/* Pattern per thread: R times { f0 { K times { f1 { f2 } } } }. */
enum { R = 400, K = 50 };

/* Next event of thread p into e; false when the thread is done. Steps:
 * 0 enter f0; then per k: 1 enter f1, 2 enter f2, 3 ret f2, 4 ret f1;
 * 5 ret f0. */
static bool next_event(struct prog_thread *p, struct cabbpf_event *e)
{
	const uint64_t base = 0x7ffff000ULL;
	uint32_t kind, fid, depth;

	if (p->done)
		return false;
	switch (p->step) {
	case 0: kind = CABBPF_EV_ENTRY; fid = 0; depth = 0; p->step = 1; break;
	case 1: kind = CABBPF_EV_ENTRY; fid = 1; depth = 1; p->step = 2; break;
	case 2: kind = CABBPF_EV_ENTRY; fid = 2; depth = 2; p->step = 3; break;
	case 3: kind = CABBPF_EV_RETURN; fid = 2; depth = 2; p->step = 4; break;
	case 4:
		kind = CABBPF_EV_RETURN; fid = 1; depth = 1;
		p->step = ++p->k < K ? 1 : 5;
		break;
	default:
		kind = CABBPF_EV_RETURN; fid = 0; depth = 0;
		p->k = 0;
		p->step = 0;
		if (++p->rep == R)
			p->done = true;
		break;
	}
	memset(e, 0, sizeof(*e));
	e->tid = p->tid;
	e->pid = 1000;
	e->kind = kind;
	e->fid = fid;
	e->seq = p->seq++;
	e->ts = p->seq * 10;
	/* Entry: sp points at the return address; return: one word above. */
	e->sp = base - depth * 64 + (kind == CABBPF_EV_RETURN ? 8 : 0);
	return true;
}

struct producer_arg {
	struct stage *stage;
	unsigned seed;
	int err;
};

/* The loader thread: batches of a random thread's events, each batch on a
 * random CPU, as the kernel's per-CPU rings would hand them over. */
static void *producer(void *arg)
{
	struct producer_arg *pa = arg;
	struct prog_thread th[NTHREADS];
	struct cabbpf_event e;
	unsigned live = NTHREADS, i, rounds = 0;

	memset(th, 0, sizeof(th));
	for (i = 0; i < NTHREADS; i++)
		th[i].tid = 100 + i;
	while (live) {
		unsigned t = (unsigned)rand_r(&pa->seed) % NTHREADS;
		unsigned cpu = (unsigned)rand_r(&pa->seed) % NCPU;
		unsigned n = 1 + (unsigned)rand_r(&pa->seed) % 40;

		for (i = 0; i < n; i++) {
			if (!next_event(&th[t], &e)) {
				if (th[t].step != 99) {
					th[t].step = 99;
					live--;
				}
				break;
			}
			pa->err = stage__push(pa->stage, cpu, &e);
			if (pa->err)
				return NULL;
		}
		if (++rounds % 16 == 0)
			stage__flush(pa->stage); /* as each poll round does */
	}
	stage__close(pa->stage);
	return NULL;
}

static void run_synthetic(unsigned analyzer_threads, unsigned seed)
{
	static const char *const names[] = {"f0", "f1", "f2"};
	struct cab_pp_opts po = {.chunk_records = 64, .nchunks = 8, .max_chunks = 64};
	struct producer_arg pa = {.seed = seed};
	struct runner_opts ro = {.fnames = names, .nfuncs = 3, .nthreads = analyzer_threads};
	struct runner_stats rs;
	struct runner *rn = NULL;
	const void *cnt, *cg;
	pthread_t prod;
	uint32_t t;

	ck_assert_int_eq(stage__new(NCPU, &po, &pa.stage), 0);
	ck_assert_int_eq(runner__new(&ro, stage__bufs(pa.stage), NCPU, &rn), 0);
	ck_assert_int_eq(runner__start(rn), 0);
	ck_assert_int_eq(pthread_create(&prod, NULL, producer, &pa), 0);
	pthread_join(prod, NULL);
	ck_assert_int_eq(pa.err, 0);
	ck_assert_int_eq(runner__join(rn), 0);

	runner__stats(rn, &rs);
	ck_assert_uint_eq(rs.order_gaps, 0);
	ck_assert_uint_eq(rs.records, (uint64_t)NTHREADS * R * (2 + 4 * K));
	ck_assert_uint_eq(rs.returns.orphan, 0);
	ck_assert_uint_eq(rs.returns.missing, 0);
	ck_assert_uint_eq(rs.open, 0);
	cnt = runner__analyzer(rn, "count");
	cg = runner__analyzer(rn, "callgraph");
	ck_assert_ptr_nonnull(cnt);
	ck_assert_ptr_nonnull(cg);
	ck_assert_uint_eq(count__calls(cnt, 0), (uint64_t)NTHREADS * R);
	ck_assert_uint_eq(count__calls(cnt, 1), (uint64_t)NTHREADS * R * K);
	ck_assert_uint_eq(count__calls(cnt, 2), (uint64_t)NTHREADS * R * K);
	for (t = 100; t < 100 + NTHREADS; t++)
		ck_assert_uint_eq(count__thread_calls(cnt, t, 2), (uint64_t)R * K);
	ck_assert_uint_eq(callgraph__edge(cg, 0, 1), (uint64_t)NTHREADS * R * K);
	ck_assert_uint_eq(callgraph__edge(cg, 1, 2), (uint64_t)NTHREADS * R * K);
	ck_assert_uint_eq(callgraph__nedges(cg), 3);
	runner__free(rn);
	stage__free(pa.stage);
}

START_TEST(stage_to_runner_exact)
{
	unsigned seed = 12345u + (unsigned)_i * 7919u;

	printf("stage_to_runner_exact: seed %u, %u analyzer thread(s)\n", seed, 1 + _i % 2);
	run_synthetic(1 + (unsigned)_i % 2, seed);
}
END_TEST

/* The sanitizer-built cabbpf on real targets (needs root and CABBPF_BIN). */
START_TEST(sanitized_cabbpf_real_targets)
{
	char *a1[] = {"--", (char *)h_target("recurse", 2), "20", NULL};
	char *a2[] = {"--", (char *)h_target("threads", 2), "4", "1000", NULL};
	char *a3[] = {"--analyzer-threads", "2", "--", (char *)h_target("hop", 2), "500", NULL};
	struct h_run r;

	h_run(&r, a1);
	ck_assert_msg(r.status == 0, "exit %d:\n%s", r.status, r.err);
	h_check(r.json, "recurse 20", "calls fib");
	h_free(&r);
	h_run(&r, a2);
	ck_assert_msg(r.status == 0, "exit %d:\n%s", r.status, r.err);
	h_check(r.json, "threads 4 1000", "calls work");
	h_free(&r);
	h_run(&r, a3);
	ck_assert_msg(r.status == 0, "exit %d:\n%s", r.status, r.err);
	h_check(r.json, "hop 500", "calls hop_step");
	ck_assert_int_eq(h_num(r.json, "order_gaps"), 0);
	h_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("loader_threads");
	TCase *tc = tcase_create("pipeline");
	const char *bin = getenv("CABBPF_BIN");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, stage_to_runner_exact, 0, 6);
	if (bin) {
		/* Asked for: it must run, not skip. */
		if (geteuid() != 0 || h_setup_bin(bin)) {
			fprintf(stderr, "loader_threads: CABBPF_BIN set but not root or no targets\n");
			return 1;
		}
		tcase_add_test(tc, sanitized_cabbpf_real_targets);
	}
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
