// SPDX-License-Identifier: BSD-2-Clause
/*
 * The isp analyzer (analyzers/isp.h) through the runner, on hand-made
 * record streams: what input is charged to which activation (the reader
 * and its ancestors, never a sibling), the three costs, sizes from SIZE
 * records (--size), merge across analyzer threads, and the reports.
 * The fits themselves are tests/test_fit.c's.
 */
#include <check.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/cct.h"
#include "analyzers/isp.h"
#include "cabbpf_event.h"
#include "common/json.h"
#include "pipeline/record.h"
#include "pipeline/runner.h"
#include "user/report/sections.h"

static const char *const fnames[] = {"main", "a", "b", "c"};
#define NF 4

static void put_call(uint64_t *w, uint32_t kind, uint32_t fid, uint64_t sp, uint64_t *ts)
{
	rec__encode(w, kind, fid, (*ts)++, sp);
}

static void put_io(uint64_t *w, uint32_t sc, uint32_t ret, bool failed, uint64_t *ts)
{
	struct rec_io r = {
		.sc = sc,
		.fdkind = CABBPF_FD_FILE,
		.flags = failed ? CABBPF_IO_ERR : 0,
		.fd = 3,
		.ts = (*ts)++,
		.req = 100,
		.ret = ret,
	};

	rec__encode_io(w, &r);
}

/*
 * Thread 7:
 *   main { a { read 100; b { read 7 }; c[size 42] { } }; write 50;
 *          failed read; a { read 100 }; c (size event lost) { } }
 *   read 5 outside
 * Every record advances the clock by 1 ns.
 */
static uint32_t stream(uint64_t *w)
{
	uint64_t ts = 1000;
	uint32_t n = 0;

#define W (w + (size_t)(n++) * REC_WORDS)
	put_call(W, CABBPF_EV_ENTRY, 0, 0x1000, &ts); /* 1000 */
	put_call(W, CABBPF_EV_ENTRY, 1, 0xf00, &ts);  /* 1001 */
	put_io(W, CABBPF_SC_READ, 100, false, &ts);
	put_call(W, CABBPF_EV_ENTRY, 2, 0xe00, &ts); /* 1003 */
	put_io(W, CABBPF_SC_PREAD64, 7, false, &ts);
	put_call(W, CABBPF_EV_RETURN, 2, 0xe08, &ts); /* 1005: b 2 ns */
	put_call(W, CABBPF_EV_ENTRY, 3, 0xe00, &ts);  /* 1006 */
	rec__encode(W, CABBPF_EV_SIZE, 3, 0, 42);      /* ts 0, as the probe writes it */
	ts++;
	put_call(W, CABBPF_EV_RETURN, 3, 0xe08, &ts); /* 1008 */
	put_call(W, CABBPF_EV_RETURN, 1, 0xf08, &ts); /* 1009: a 8 ns */
	put_io(W, CABBPF_SC_WRITE, 50, false, &ts);
	put_io(W, CABBPF_SC_READ, 0, true, &ts);
	put_call(W, CABBPF_EV_ENTRY, 1, 0xf00, &ts); /* 1012 */
	put_io(W, CABBPF_SC_RECVFROM, 100, false, &ts);
	put_call(W, CABBPF_EV_RETURN, 1, 0xf08, &ts); /* 1014: a 2 ns */
	put_call(W, CABBPF_EV_ENTRY, 3, 0xf00, &ts);
	put_call(W, CABBPF_EV_RETURN, 3, 0xf08, &ts);
	put_call(W, CABBPF_EV_RETURN, 0, 0x1008, &ts); /* 1017: main 17 ns */
	put_io(W, CABBPF_SC_READ, 5, false, &ts);
#undef W
	return n;
}

static const uint8_t sized[NF] = {0, 0, 0, ISP_SPEC_ON | 1};

static struct runner *run(enum isp_cost cost, unsigned nthreads, struct isp_opts *io)
{
	struct runner_opts o = {.fnames = fnames, .nfuncs = NF, .analyzers = "isp",
				.nthreads = nthreads, .isp = io};
	uint64_t w[64 * REC_WORDS];
	struct runner *r = NULL;
	uint32_t n = stream(w);

	memset(io, 0, sizeof(*io));
	io->cost = cost;
	io->sized = sized;
	ck_assert_int_eq(runner__new(&o, NULL, 0, &r), 0);
	ck_assert_int_eq(runner__feed(r, 7, 0, w, n), 0);
	return r;
}

/* The point of fid at size: calls, min, max, sum; asserts it exists. */
static const struct isp_point *point(struct runner *r, uint32_t fid, uint64_t size)
{
	const struct isp_point *p;
	size_t n, i;

	isp__points((void *)runner__analyzer(r, "isp"), fid, &p, &n);
	for (i = 0; i < n; i++)
		if (p[i].size == size)
			return &p[i];
	ck_abort_msg("%s has no point at size %llu", fnames[fid], (unsigned long long)size);
	return NULL;
}

static size_t npoints(struct runner *r, uint32_t fid)
{
	const struct isp_point *p;
	size_t n;

	isp__points((void *)runner__analyzer(r, "isp"), fid, &p, &n);
	return n;
}

START_TEST(test_charging_calls)
{
	struct isp_opts io;
	struct runner *r = run(ISP_COST_CALLS, 1, &io);
	struct runner_stats st;
	const struct isp_point *p;

	ck_assert_int_eq(runner__join(r), 0);
	runner__stats(r, &st);
	ck_assert_uint_eq(st.size_records, 1);
	ck_assert_uint_eq(st.size_unset, 0);
	ck_assert_uint_eq(st.returns.matched, 6);
	/* main: both a's input and b's, not the output, not outside: 207 */
	ck_assert_uint_eq(npoints(r, 0), 1);
	p = point(r, 0, 207);
	ck_assert_uint_eq(p->calls, 1);
	ck_assert_uint_eq(p->cost_min, 6); /* itself, a, b, c, a, c */
	ck_assert_uint_eq(p->cost_max, 6);
	/* a: its own read and its callee b's (107), then 100 */
	ck_assert_uint_eq(npoints(r, 1), 2);
	p = point(r, 1, 107);
	ck_assert_uint_eq(p->calls, 1);
	ck_assert_uint_eq(p->cost_min, 3);
	p = point(r, 1, 100);
	ck_assert_uint_eq(p->cost_min, 1);
	/* b: its own 7 only (a's read came before it, in its caller) */
	ck_assert_uint_eq(npoints(r, 2), 1);
	ck_assert_uint_eq(point(r, 2, 7)->calls, 1);
	/* c: its size is the argument (42), never a sibling's input; the
	 * activation whose size event is missing makes no point */
	ck_assert_uint_eq(npoints(r, 3), 1);
	ck_assert_uint_eq(point(r, 3, 42)->cost_max, 1);
	ck_assert_uint_eq(isp__npoints(runner__analyzer(r, "isp")), 5);
	runner__free(r);
}
END_TEST

START_TEST(test_wall)
{
	struct isp_opts io;
	struct runner *r = run(ISP_COST_WALL, 1, &io);
	const struct isp_point *p;

	ck_assert_int_eq(runner__join(r), 0);
	p = point(r, 0, 207);
	ck_assert_uint_eq(p->cost_min, 17);
	p = point(r, 1, 107);
	ck_assert_uint_eq(p->cost_max, 8);
	p = point(r, 2, 7);
	ck_assert_uint_eq(p->cost_sum, 2);
	runner__free(r);
}
END_TEST

/* Two program threads, on two analyzer threads: the same stream in each,
 * so every point doubles after the merge, and nothing mixes (a thread's
 * input never reaches the other's activations: sizes stay 207, 107...). */
START_TEST(test_threads_merge)
{
	struct isp_opts io;
	struct runner *r = run(ISP_COST_CALLS, 2, &io);
	uint64_t w[64 * REC_WORDS];
	uint32_t n = stream(w);
	const struct isp_point *p;

	ck_assert_int_eq(runner__feed(r, 8, 0, w, n), 0);
	ck_assert_int_eq(runner__join(r), 0);
	ck_assert_uint_eq(npoints(r, 0), 1);
	p = point(r, 0, 207);
	ck_assert_uint_eq(p->calls, 2);
	ck_assert_uint_eq(p->cost_sum, 12);
	ck_assert_uint_eq(point(r, 1, 107)->calls, 2);
	ck_assert_uint_eq(point(r, 1, 100)->calls, 2);
	ck_assert_uint_eq(point(r, 3, 42)->calls, 2);
	ck_assert_uint_eq(isp__npoints(runner__analyzer(r, "isp")), 10);
	runner__free(r);
}
END_TEST

static char *report_json(struct runner *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json *w = NULL;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(json__new(f, false, &w), 0);
	json__begin_object(w);
	ck_assert_int_eq(sections__json(r, w), 0);
	json__end_object(w);
	ck_assert_int_eq(json__finish(w), 0);
	json__free(w);
	fclose(f);
	return buf;
}

/*
 * Time costs with the probes' measured cost (cct_opts.probe_ns, ns per
 * call by fid) of each activation's traced callees taken out: main (17
 * ns) holds two a (0.5 each), one b (1) and two c (2 each): 6 ns, 11 left;
 * the first a (8 ns) one b and one c: 5 left. Exact; the traced costs
 * stay beside them.
 */
START_TEST(test_probes_taken_out)
{
	static const double probe_ns[NF] = {4, 0.5, 1, 2};
	struct cct_opts co = {.probe_ns = probe_ns};
	struct runner_opts o = {.fnames = fnames, .nfuncs = NF, .analyzers = "isp",
				.nthreads = 1, .cct = &co};
	struct isp_opts io = {.cost = ISP_COST_WALL, .sized = sized};
	uint64_t w[64 * REC_WORDS];
	struct runner *r = NULL;
	const struct isp_point *p;
	uint32_t n = stream(w);
	char *js;
	json_object *root, *arr, *v;
	size_t i;

	o.isp = &io;
	ck_assert_int_eq(runner__new(&o, NULL, 0, &r), 0);
	ck_assert_int_eq(runner__feed(r, 7, 0, w, n), 0);
	ck_assert_int_eq(runner__join(r), 0);
	p = point(r, 0, 207);
	ck_assert_uint_eq(p->cost_min, 17);
	ck_assert_uint_eq(p->comp_min, 11);
	ck_assert_uint_eq(p->comp_sum, 11);
	p = point(r, 1, 107);
	ck_assert_uint_eq(p->cost_min, 8);
	ck_assert_uint_eq(p->comp_min, 5);
	p = point(r, 1, 100); /* no traced callee: nothing taken out */
	ck_assert_uint_eq(p->cost_min, 2);
	ck_assert_uint_eq(p->comp_min, 2);
	js = report_json(r);
	root = json_tokener_parse(js);
	ck_assert_ptr_nonnull(root);
	ck_assert(json_object_object_get_ex(root, "isp", &arr));
	for (i = 0; i < json_object_array_length(arr); i++) {
		json_object *o2 = json_object_array_get_idx(arr, i), *nm;

		ck_assert(json_object_object_get_ex(o2, "name", &nm));
		if (strcmp(json_object_get_string(nm), "main"))
			continue;
		ck_assert(json_object_object_get_ex(o2, "probes_taken_out", &v));
		ck_assert(json_object_get_boolean(v));
		ck_assert(json_object_object_get_ex(o2, "probe_ns_taken_out", &v));
		ck_assert_double_eq_tol(json_object_get_double(v), 6, 1e-9);
	}
	json_object_put(root);
	free(js);
	runner__free(r);
}
END_TEST

/* JSON "isp": one object per routine with points, the keys of
 * docs/json-schema.md; "fit" null with fewer than 3 sizes. Text: a row per
 * routine, the unsized activation said. */
START_TEST(test_reports)
{
	struct isp_opts io;
	struct runner *r = run(ISP_COST_CALLS, 1, &io);
	json_object *root, *arr, *a = NULL, *pt, *info;
	char *text = NULL, *js;
	size_t len = 0, i;
	FILE *f;

	ck_assert_int_eq(runner__join(r), 0);
	js = report_json(r);
	root = json_tokener_parse(js);
	ck_assert_ptr_nonnull(root);
	ck_assert(json_object_object_get_ex(root, "isp", &arr));
	ck_assert_uint_eq(json_object_array_length(arr), 4);
	for (i = 0; i < 4; i++) {
		json_object *o = json_object_array_get_idx(arr, i), *nm;

		ck_assert(json_object_object_get_ex(o, "name", &nm));
		if (!strcmp(json_object_get_string(nm), "a"))
			a = o;
		if (!strcmp(json_object_get_string(nm), "c")) {
			json_object *src;

			ck_assert(json_object_object_get_ex(o, "size_source", &src));
			ck_assert_str_eq(json_object_get_string(src), "arg");
			ck_assert(json_object_object_get_ex(o, "unsized", &src));
			ck_assert_int_eq(json_object_get_int64(src), 1);
		}
	}
	ck_assert_ptr_nonnull(a);
	ck_assert(json_object_object_get_ex(a, "points", &pt));
	ck_assert_uint_eq(json_object_array_length(pt), 2);
	pt = json_object_array_get_idx(pt, 0); /* by size: 100 first */
	{
		static const char *const keys[] = {"size", "calls", "cost_min", "cost_avg", "cost_max"};
		static const long long want[] = {100, 1, 1, 1, 1};
		json_object *v;

		for (i = 0; i < 5; i++) {
			ck_assert_msg(json_object_object_get_ex(pt, keys[i], &v), "no %s", keys[i]);
			ck_assert_int_eq(json_object_get_int64(v), want[i]);
		}
		ck_assert(json_object_object_get_ex(a, "size_source", &v));
		ck_assert_str_eq(json_object_get_string(v), "io");
		ck_assert(json_object_object_get_ex(a, "fit", &v));
		ck_assert_ptr_null(v); /* JSON null: two sizes */
	}
	ck_assert(json_object_object_get_ex(root, "isp_info", &info));
	{
		json_object *v;

		ck_assert(json_object_object_get_ex(info, "input_bytes", &v));
		ck_assert_int_eq(json_object_get_int64(v), 207); /* in activations */
		ck_assert(json_object_object_get_ex(info, "unsized", &v));
		ck_assert_int_eq(json_object_get_int64(v), 1);
		ck_assert(json_object_object_get_ex(info, "cost", &v));
		ck_assert_str_eq(json_object_get_string(v), "calls");
	}
	json_object_put(root);
	free(js);
	f = open_memstream(&text, &len);
	ck_assert_int_eq(sections__text(r, f), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "Input-sensitive profiles: 5 points"));
	ck_assert_ptr_nonnull(strstr(text, "  c [size: argument]\n"));
	ck_assert_ptr_nonnull(strstr(text, "1 activations of --size routines without a size"));
	free(text);
	runner__free(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("isp");
	TCase *tc = tcase_create("isp");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_charging_calls);
	tcase_add_test(tc, test_wall);
	tcase_add_test(tc, test_threads_merge);
	tcase_add_test(tc, test_reports);
	tcase_add_test(tc, test_probes_taken_out);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
