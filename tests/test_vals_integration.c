// SPDX-License-Identifier: BSD-2-Clause
/*
 * Integration suite for --args and --retval (issue 48, item 4): the real
 * kernel's probes read the values of the functions the rules name, on
 * tests/targets/vals.c, whose every call's arguments and return value are
 * known. Asserted exactly, at -O0 and -O2: each call's values in
 * --slower-than's JSON list and in the --timeline file, the value events
 * counted (one per integer, one per 16 bytes of a string), none for
 * functions no rule names, the target's output as untraced; the rules'
 * errors. cabbpf replay of a recording with values: the golden file
 * tests/expected/replay/vals.txt (test_record_integration.c).
 * Needs root and BPF, like every integration suite: no skips.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "tests/harness.h"

#define OPT(i) ((i) ? 2 : 0)
#define N 50

/* The rules every run here gives: every kind of value. */
#define RULES                                                                                      \
	"--args", "add:int(arg0),int(arg1)", "--args", "name_len:str(arg0),strlen(arg0)",          \
		"--args", "wide:arg0,arg1,arg2,arg3,arg4,arg5", "--retval", "add:int", "--retval", \
		"name_len", "--retval", "greet:str", "--retval", "wide", "--retval", "big"

/* The value events those rules make on `vals N`: add 3 a call; name_len
 * 3 a call plus 3 more pieces of the 63 bytes read of the long string;
 * greet 1 a call; wide 7; big 1. */
#define VALUE_EVENTS (3 * N + 3 * 6 + 3 + 3 + 7 + 1)

static long long num(json_object *o, const char *k)
{
	json_object *v = h_get(o, k);

	ck_assert_msg(v, "no %s in %s", k, json_object_to_json_string(o));
	return json_object_get_int64(v);
}

static const char *str(json_object *o, const char *k)
{
	json_object *v = h_get(o, k);

	ck_assert_msg(v, "no %s in %s", k, json_object_to_json_string(o));
	return json_object_get_string(v);
}

/* name_len's calls, by their strlen: what each must hold. */
static void check_name_len(json_object *v, bool *seen)
{
	json_object *s;
	long long len = num(v, "retval");
	bool present = json_object_object_get_ex(v, "str(arg0)", &s);

	ck_assert(present);
	if (json_object_is_type(s, json_type_null)) { /* not readable: NULL or untouched */
		ck_assert(json_object_object_get_ex(v, "strlen(arg0)", &s));
		ck_assert(json_object_is_type(s, json_type_null));
		ck_assert_int_eq(len, 0);
		ck_assert(!seen[5] || !seen[4]);
		seen[seen[4] ? 5 : 4] = true;
		return;
	}
	ck_assert_int_eq(num(v, "strlen(arg0)"), len);
	switch (len) {
	case 5:
		ck_assert_str_eq(str(v, "str(arg0)"), "alpha");
		seen[0] = true;
		break;
	case 0:
		ck_assert_str_eq(str(v, "str(arg0)"), "");
		seen[1] = true;
		break;
	case 100: /* 63 bytes read, said cut */
		ck_assert_str_eq(str(v, "str(arg0)"),
				 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		ck_assert(json_object_get_boolean(h_get(v, "str(arg0).truncated")));
		seen[2] = true;
		break;
	case 8:
		ck_assert_str_eq(str(v, "str(arg0)"), "tab\there");
		seen[3] = true;
		break;
	default:
		ck_abort_msg("name_len returned %lld", len);
	}
}

/* Every call of --slower-than's list (every call: the threshold is 1 ns)
 * with its exact values. */
static void check_slowest(json_object *lat)
{
	json_object *v = h_get(lat, "slowest");
	bool add[N] = {false}, names[6] = {false}, greet[3] = {false};
	size_t i, n = json_object_array_length(v);
	int wide = 0, big = 0;

	ck_assert_int_eq(num(lat, "slower_calls"), 1 + N + 6 + 3 + 1 + 1);
	ck_assert_uint_eq(n, 1 + N + 6 + 3 + 1 + 1);
	ck_assert_int_eq(num(lat, "slowest_values_not_kept"), 0);
	for (i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(v, i), *vals = h_get(c, "values");
		const char *name = str(c, "name");

		if (!strcmp(name, "main")) {
			ck_assert_ptr_null(vals); /* no rule names it */
			continue;
		}
		ck_assert_msg(vals, "%s has no values", name);
		if (!strcmp(name, "add")) {
			long long a = num(vals, "int(arg0)");

			ck_assert(a >= 0 && a < N && !add[a]);
			add[a] = true;
			ck_assert_int_eq(num(vals, "int(arg1)"), 3 * a - 7);
			ck_assert_int_eq(num(vals, "retval"), 4 * a - 7);
			ck_assert_int_eq(json_object_object_length(vals), 3);
		} else if (!strcmp(name, "name_len")) {
			check_name_len(vals, names);
			ck_assert_int_eq(json_object_object_length(vals),
					 h_get(vals, "str(arg0).truncated") ? 4 : 3);
		} else if (!strcmp(name, "greet")) { /* no --args rule: its return only */
			static const char *const words[] = {"zero", "one", "two"};
			const char *w = str(vals, "retval");
			int k = !strcmp(w, "zero") ? 0 : !strcmp(w, "one") ? 1 : 2;

			ck_assert_str_eq(w, words[k]);
			ck_assert(!greet[k]);
			greet[k] = true;
			ck_assert_int_eq(json_object_object_length(vals), 1);
		} else if (!strcmp(name, "wide")) {
			char key[16];
			int r;

			for (r = 0; r < 6; r++) {
				snprintf(key, sizeof(key), "arg%d", r);
				ck_assert_int_eq(num(vals, key), 10 * (r + 1));
			}
			ck_assert_int_eq(num(vals, "retval"), 210);
			wide++;
		} else if (!strcmp(name, "big")) {
			ck_assert_int_eq(num(vals, "retval"), 0x123456789aLL);
			ck_assert_int_eq(json_object_object_length(vals), 1);
			big++;
		} else {
			ck_abort_msg("unexpected call of %s", name);
		}
	}
	for (i = 0; i < N; i++)
		ck_assert_msg(add[i], "no add(%zu, ...)", i);
	for (i = 0; i < 6; i++)
		ck_assert_msg(names[i], "name_len call %zu missing", i);
	ck_assert(greet[0] && greet[1] && greet[2]);
	ck_assert_int_eq(wide, 1);
	ck_assert_int_eq(big, 1);
}

/* The timeline file's add events: each call's values as the text shows
 * them. */
static void check_timeline(const char *path)
{
	json_object *root = h_parse_json(path), *ev;
	bool add[N] = {false};
	size_t i, n, adds = 0;
	char want[16];

	ck_assert_ptr_nonnull(root);
	ev = h_get(root, "traceEvents");
	n = json_object_array_length(ev);
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(ev, i), *args;
		long a;

		if (strcmp(json_object_get_string(h_get(e, "ph")), "X"))
			continue;
		args = h_get(e, "args");
		if (!strcmp(str(e, "name"), "big")) {
			ck_assert_str_eq(str(args, "retval"), "0x123456789a");
			continue;
		}
		if (strcmp(str(e, "name"), "add"))
			continue;
		adds++;
		a = strtol(str(args, "int(arg0)"), NULL, 10);
		ck_assert(a >= 0 && a < N && !add[a]);
		add[a] = true;
		snprintf(want, sizeof(want), "%ld", 3 * a - 7);
		ck_assert_str_eq(str(args, "int(arg1)"), want);
		snprintf(want, sizeof(want), "%ld", 4 * a - 7);
		ck_assert_str_eq(str(args, "retval"), want);
	}
	ck_assert_uint_eq(adds, N);
	json_object_put(root);
}

START_TEST(values_exact)
{
	char tl[300], nstr[8];
	char *opts[] = {"-a",
			"count,latency",
			"--slower-than",
			"0.000001",
			"--slowest",
			"1000",
			"--timeline",
			tl,
			RULES,
			NULL};
	char *target[] = {(char *)h_target("vals", OPT(_i)), nstr, NULL};
	json_object *runner;
	struct h_plain p;
	struct h_run r;

	snprintf(nstr, sizeof(nstr), "%d", N);
	snprintf(tl, sizeof(tl), "%s/vals-tl-%d.json", h_tmp, _i);
	h_traced_same(&p, &r, opts, target);
	h_assert_no_loss(r.json);
	H_CHECK(r.json, "vals 50", "calls add", "calls name_len", "calls greet", "calls wide",
		"calls big");
	check_slowest(h_get(r.json, "latency"));
	runner = h_get(r.json, "runner");
	ck_assert_int_eq(num(runner, "value_records"), VALUE_EVENTS);
	ck_assert_int_eq(num(runner, "value_unset"), 0);
	check_timeline(tl);
	unlink(tl);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* Only what a rule names is read: add's first argument alone, nothing
 * of the other functions; and nothing at all without a rule. */
START_TEST(only_what_is_named)
{
	char nstr[8];
	char *one[] = {
		"-a",	"latency", "--slower-than", "0.000001", "--slowest",
		"1000", "--args",  "ad?:arg0",	    "--",	(char *)h_target("vals", OPT(_i)),
		nstr,	NULL};
	char *none[] = {"-a",	    "latency", "--slower-than",
			"0.000001", "--",      (char *)h_target("vals", OPT(_i)),
			nstr,	    NULL};
	json_object *v;
	struct h_run r;
	size_t i;

	snprintf(nstr, sizeof(nstr), "%d", N);
	h_run(&r, one);
	h_assert_clean(&r);
	ck_assert_int_eq(num(h_get(r.json, "runner"), "value_records"), N);
	v = h_get(h_get(r.json, "latency"), "slowest");
	for (i = 0; i < json_object_array_length(v); i++) {
		json_object *c = json_object_array_get_idx(v, i), *vals = h_get(c, "values");

		if (strcmp(str(c, "name"), "add")) {
			ck_assert_ptr_null(vals);
			continue;
		}
		ck_assert_int_eq(json_object_object_length(vals), 1);
		ck_assert(num(vals, "arg0") >= 0 && num(vals, "arg0") < N);
	}
	/* the text shows the call with its argument */
	ck_assert_msg(strstr(r.out, "  add(0) <- main\n"), "%s", r.out);
	h_free(&r);
	h_run(&r, none);
	h_assert_clean(&r);
	ck_assert_int_eq(num(h_get(r.json, "runner"), "value_records"), 0);
	ck_assert_msg(strstr(r.out, "  add <- main\n"), "%s", r.out);
	h_free(&r);
}
END_TEST

/* Rules that cannot be read are refused before anything is traced, with
 * what is wrong: malformed, naming no traced function, a return value
 * without return probes, nothing to show the values. */
START_TEST(rules_refused)
{
	char *t = (char *)h_target("vals", 0);
	char *bad[] = {"--args", "add:arg7", "--slower-than", "1", "--", t, "1", NULL};
	char *nomatch[] = {"--args", "nosuch*:arg0", "--slower-than", "1", "--", t, "1", NULL};
	char *entry[] = {"--retval", "add", "--entry-only", "--", t, "1", NULL};
	char *unseen[] = {"--retval", "add", "--", t, "1", NULL};

	h_expect_failure(bad, 0, "--args wants GLOB:ITEM");
	h_expect_failure(nomatch, 0, "--args nosuch*:arg0: no traced function matches 'nosuch*'");
	h_expect_failure(entry, 0, "--retval is read by the return probes");
	h_expect_failure(unseen, 0, "values are shown by --slower-than, --timeline");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vals_integration");
	TCase *tc = tcase_create("vals");
	/* The kernel matrix's case (tests/vm/cases). */
	TCase *matrix = tcase_create("matrix");

	if (h_integration_setup("vals", NULL))
		return 1;
	tcase_set_timeout(matrix, 120);
	tcase_add_loop_test(matrix, values_exact, 0, 2);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, only_what_is_named, 0, 2);
	tcase_add_test(tc, rules_refused);
	suite_add_tcase(s, matrix);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
