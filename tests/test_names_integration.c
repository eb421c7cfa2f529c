// SPDX-License-Identifier: BSD-2-Clause
/*
 * Integration suite for names (issue 9, items 5-7): the real kernel, real
 * BPF programs, a real C++ program: tests/targets/names.cc, built by
 * build.sh with g++ and clang++ at -O0 and -O2 (loop index: compiler =
 * _i / 2, -O0 or -O2 = _i % 2), traced by ./cabbpf
 * as a user runs it. Asserted exactly, from the JSON report:
 *  - C++ names demangled in the text report and in JSON "name", the mangled
 *    one kept as "linkage_name" (absent for C names such as main);
 *  - -f by demangled glob ('ns::Foo::*'), by mangled name, by a demangled
 *    name without its parameter list ('ns::Foo::bar' selects both
 *    overloads), by template name, and 'std::vector*';
 *  - the default selection never probes a .cold fragment: ns::work's cold
 *    branch runs (every 8th call) and ns::work is still counted exactly once
 *    per call, with no false edge into the fragment; g++ -O2's clone of
 *    scale reads "scale(long, long) [clone .constprop.0]";
 *  - several -f patterns where some match nothing (in the executable, or
 *    LIB:GLOB in a library): each is named on stderr, the run exits 0; none
 *    matching exits 1; a pattern naming a fragment says it is one.
 * Needs root and BPF, like every integration suite: no skips.
 */
#include <check.h>
#include <sys/types.h>

#include "tests/harness.h"

/* Calls per function per run: the program's argument. */
#define N 37
#define NSTR "37"

/* The names program (tests/targets/names.cc, built by h_setup) by compiler
 * _i / 2 (g++, clang++) at -O0 or -O2 (_i % 2). Static buffer. */
static char *names_bin(int i)
{
	return (char *)h_cxx_target("names", i);
}

/* A clean run: h_assert_clean, and every frame returned. */
static void assert_clean_run(const struct h_run *r)
{
	h_assert_clean(r);
	ck_assert_int_eq(h_returns(r->json, "missing"), 0);
	ck_assert_int_eq(h_returns(r->json, "orphan"), 0);
}

/* Asserts functions[name] exists, was called want times, and has
 * linkage_name linkage (NULL: none, as for a C name). */
static void assert_fn(json_object *root, const char *name, long long want, const char *linkage)
{
	json_object *f = h_fn(root, name);
	const char *l;

	ck_assert_msg(f, "no function \"%s\" in the report", name);
	ck_assert_msg(h_calls(root, name) == want, "%s: %lld calls, want %lld", name,
		      h_calls(root, name), want);
	l = json_object_get_string(h_get(f, "linkage_name"));
	if (linkage)
		ck_assert_msg(l && !strcmp(l, linkage), "%s: linkage_name %s, want %s", name,
			      l ? l : "(none)", linkage);
	else
		ck_assert_msg(!l, "%s: linkage_name %s, want none", name, l);
}

/* -f 'ns::Foo::*': the two overloads of the method, exact, demangled in
 * text and JSON, linkage names kept; the target's output unchanged. */
START_TEST(select_by_demangled_glob)
{
	char *args[] = {"-f", "ns::Foo::*", "--", names_bin(_i), NSTR, NULL};
	char *plain_argv[] = {names_bin(_i), NSTR, NULL};
	struct h_plain p;
	struct h_run r;

	h_plain_run(&p, plain_argv);
	h_run(&r, args);
	assert_clean_run(&r);
	/* clang++ -O0 keeps Foo's constructor (a default member initializer)
	 * out of line: "ns::Foo::Foo()", the mangled C2 (base object) one */
	if (h_fn(r.json, "ns::Foo::Foo()")) {
		assert_fn(r.json, "ns::Foo::Foo()", 1, "_ZN2ns3FooC2Ev");
		ck_assert_int_eq(h_num(r.json, "functions_traced"), 3);
	} else {
		ck_assert_int_eq(h_num(r.json, "functions_traced"), 2);
	}
	assert_fn(r.json, "ns::Foo::bar(int)", N, "_ZN2ns3Foo3barEi");
	assert_fn(r.json, "ns::Foo::bar(double)", N, "_ZN2ns3Foo3barEd");
	ck_assert_int_eq(h_edge(r.json, "<root>", "ns::Foo::bar(int)"), N);
	/* the text report: readable names only */
	ck_assert_ptr_nonnull(strstr(r.out, "ns::Foo::bar(int)"));
	ck_assert_ptr_nonnull(strstr(r.out, "ns::Foo::bar(double)"));
	ck_assert_ptr_null(strstr(r.out, "_ZN2ns3Foo3bar"));
	/* the target printed what it prints untraced, first */
	ck_assert_msg(!strncmp(r.out, p.out, strlen(p.out)), "stdout:\n%s\nwant first:\n%s", r.out,
		      p.out);
	ck_assert_int_eq(h_own_calls(r.out, "bar_int"), N);
	h_free(&r);
	h_plain_free(&p);
}
END_TEST

/* A mangled name selects as before, and only its own overload. */
START_TEST(select_by_mangled_name)
{
	char *args[] = {"-f", "_ZN2ns3Foo3barEi", "--", names_bin(_i), NSTR, NULL};
	struct h_run r;

	h_run(&r, args);
	assert_clean_run(&r);
	ck_assert_int_eq(h_num(r.json, "functions_traced"), 1);
	assert_fn(r.json, "ns::Foo::bar(int)", N, "_ZN2ns3Foo3barEi");
	ck_assert_ptr_null(h_fn(r.json, "ns::Foo::bar(double)"));
	h_free(&r);
}
END_TEST

/* Names without their parameter lists (both overloads of each), a
 * template by name, a C name among them; edges from main by readable
 * names. */
START_TEST(select_without_parameters)
{
	char *args[] = {"-f", "ns::Foo::bar", "-f", "ns::over",	   "-f", "ns::twice<long>",
			"-f", "main",	      "--", names_bin(_i), NSTR, NULL};
	struct h_run r;

	h_run(&r, args);
	assert_clean_run(&r);
	ck_assert_int_eq(h_num(r.json, "functions_traced"), 6);
	assert_fn(r.json, "ns::Foo::bar(int)", N, "_ZN2ns3Foo3barEi");
	assert_fn(r.json, "ns::Foo::bar(double)", N, "_ZN2ns3Foo3barEd");
	assert_fn(r.json, "ns::over(long)", N, "_ZN2ns4overEl");
	assert_fn(r.json, "ns::over(char const*)", N, "_ZN2ns4overEPKc");
	assert_fn(r.json, "long ns::twice<long>(long)", N, "_ZN2ns5twiceIlEET_S1_");
	assert_fn(r.json, "main", 1, NULL);
	ck_assert_ptr_null(h_fn(r.json, "int ns::twice<int>(int)"));
	ck_assert_int_eq(h_edge(r.json, "main", "ns::Foo::bar(int)"), N);
	ck_assert_int_eq(h_edge(r.json, "main", "ns::over(char const*)"), N);
	ck_assert_int_eq(h_edge(r.json, "main", "long ns::twice<long>(long)"), N);
	ck_assert_int_eq(h_edge(r.json, "<root>", "main"), 1);
	ck_assert_int_eq(h_nedges(r.json), 6);
	ck_assert_ptr_nonnull(strstr(r.out, "main -> long ns::twice<long>(long)"));
	h_free(&r);
}
END_TEST

/* 'std::vector*': at -O0 push_back is a function of its own, called N
 * times; at -O2 whatever stays out of line (maybe nothing: then the
 * pattern is named as matching nothing, and main still traced). */
START_TEST(select_std_vector)
{
	char *args[] = {"-f", "std::vector*", "-f", "main", "--", names_bin(_i), NSTR, NULL};
	struct h_run r;

	h_run(&r, args);
	assert_clean_run(&r);
	assert_fn(r.json, "main", 1, NULL);
	if (_i % 2 == 0)
		assert_fn(r.json, "std::vector<int, std::allocator<int> >::push_back(int&&)", N,
			  "_ZNSt6vectorIiSaIiEE9push_backEOi");
	ck_assert_int_eq(h_count_named(r.json, "std::vector<int"),
			 (int)h_num(r.json, "functions_traced") - 1);
	if (h_num(r.json, "functions_traced") == 1)
		ck_assert_ptr_nonnull(strstr(r.err, "-f 'std::vector*' matches no function"));
	h_free(&r);
}
END_TEST

/* The default selection: every function, never a fragment. ns::work's
 * cold branch runs N/8 times; a probe on g++ -O2's ns::work(long) [clone
 * .cold] would count those as calls (and add a work -> work.cold edge). */
START_TEST(default_never_probes_fragments)
{
	char *args[] = {"--", names_bin(_i), NSTR, NULL};
	const char *scale = "scale(long, long)";
	long long complained;
	struct h_run r;

	h_run(&r, args);
	assert_clean_run(&r);
	complained = h_own_calls(r.out, "complain");
	ck_assert_int_eq(complained, N / 8);
	ck_assert_int_eq(h_count_named(r.json, ".cold"), 0);
	ck_assert_int_eq(h_count_named(r.json, "[clone .cold"), 0);
	assert_fn(r.json, "ns::work(long)", N, "_ZN2ns4workEl");
	assert_fn(r.json, "ns::complain(long)", complained, "_ZN2ns8complainEl");
	ck_assert_int_eq(h_edge(r.json, "ns::work(long)", "ns::complain(long)"), complained);
	ck_assert_int_eq(h_edge(r.json, "main", "ns::work(long)"), N);
	assert_fn(r.json, "main", 1, NULL);
	/* g++ -O2 specializes scale for k == 3: a clone, named as one */
	if (_i == 1) {
		scale = "scale(long, long) [clone .constprop.0]";
		assert_fn(r.json, scale, N, "_ZL5scalell.constprop.0");
	} else {
		assert_fn(r.json, scale, N, "_ZL5scalell");
	}
	ck_assert_int_eq(h_edge(r.json, "main", scale), N);
	ck_assert_ptr_nonnull(strstr(r.out, scale));
	h_free(&r);
}
END_TEST

/* A pattern naming the fragment: said to be one, of ns::work; alone it is
 * an error (nothing to trace), with another pattern the run goes on. */
START_TEST(fragment_pattern_explained)
{
	char *alone[] = {"-f", "ns::work.cold", "--", names_bin(1), NSTR, NULL};
	char *with[] = {"-f", "ns::work.cold", "-f", "ns::work", "--", names_bin(1), NSTR, NULL};
	const char *says = "-f 'ns::work.cold' names only ns::work(long) [clone .cold], a fragment "
			   "of ns::work(long)";
	struct h_run r;

	h_run(&r, alone);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, says), "stderr:\n%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "not traceable"));
	h_free(&r);
	h_run(&r, with);
	assert_clean_run(&r);
	ck_assert_msg(strstr(r.err, says), "stderr:\n%s", r.err);
	ck_assert_int_eq(h_num(r.json, "functions_traced"), 1);
	assert_fn(r.json, "ns::work(long)", N, "_ZN2ns4workEl");
	h_free(&r);
}
END_TEST

/* Several -f patterns, some matching nothing (in the executable, and a
 * LIB:GLOB in libc): each named on stderr, exit 0; "ns::*" patterns are
 * C++ names, never a library "ns". */
START_TEST(unmatched_patterns_warned)
{
	char *args[] = {"-f", "ns::Foo::bar",  "-f", "zzz_nothing*",
			"-f", "ns::nosuch::*", "-f", "libc:zzz_nothing_either*",
			"--", names_bin(_i),   NSTR, NULL};
	struct h_run r;

	h_run(&r, args);
	assert_clean_run(&r);
	ck_assert_msg(strstr(r.err, "cabbpf: warning: -f 'zzz_nothing*' matches no function"),
		      "stderr:\n%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "-f 'ns::nosuch::*' matches no function"));
	ck_assert_ptr_nonnull(
		strstr(r.err, "-f 'libc:zzz_nothing_either*' matches no function of"));
	ck_assert_ptr_null(strstr(r.err, "-f 'ns::Foo::bar' matches"));
	ck_assert_ptr_null(strstr(r.err, "library 'ns'"));
	ck_assert_int_eq(h_num(r.json, "functions_traced"), 2);
	assert_fn(r.json, "ns::Foo::bar(int)", N, "_ZN2ns3Foo3barEi");
	assert_fn(r.json, "ns::Foo::bar(double)", N, "_ZN2ns3Foo3barEd");
	h_free(&r);
}
END_TEST

/* A library's pattern matching while the executable's do not: exit 0. */
START_TEST(unmatched_in_executable_library_matches)
{
	char *args[] = {"-f", "zzz_nothing*", "-f", "libc:puts", "--", names_bin(0), NSTR, NULL};
	struct h_run r;

	h_run(&r, args);
	assert_clean_run(&r);
	ck_assert_ptr_nonnull(strstr(r.err, "-f 'zzz_nothing*' matches no function"));
	ck_assert_int_eq(h_num(r.json, "functions_traced"), 1);
	h_free(&r);
}
END_TEST

/* No pattern matches: the error, exit 1 (each pattern named too). */
START_TEST(no_pattern_matches)
{
	char *exe[] = {"-f", "zzz_a*", "-f", "ns::zzz_b", "--", names_bin(0), NSTR, NULL};
	char *mixed[] = {"-f", "zzz_a*", "-f", "libc:zzz_b*", "--", names_bin(0), NSTR, NULL};
	char *lib[] = {"-f", "libc:zzz_c*", "--", names_bin(0), NSTR, NULL};
	struct h_run r;

	h_run(&r, exe);
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "-f 'zzz_a*' matches no function"));
	ck_assert_ptr_nonnull(strstr(r.err, "-f 'ns::zzz_b' matches no function"));
	ck_assert_ptr_nonnull(strstr(r.err, "cabbpf: error: no function of"));
	h_free(&r);
	h_run(&r, mixed);
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "-f 'zzz_a*' matches no function"));
	ck_assert_ptr_nonnull(strstr(r.err, "-f 'libc:zzz_b*' matches no function"));
	ck_assert_ptr_nonnull(strstr(r.err, "cabbpf: error: no function matches the -f patterns"));
	h_free(&r);
	h_run(&r, lib);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "matches libc:zzz_c*; -l -f 'libc:*' with the same command "
				    "lists them"),
		      "stderr:\n%s", r.err);
	ck_assert_msg(!strstr(r.err, "IFUNC"), "stderr:\n%s", r.err); /* none was selected */
	h_free(&r);
}
END_TEST

/* glibc's symbols have versions: its debug symbols name the fopen programs
 * call "fopen@@GLIBC_2.2.5", and pthread_cond_wait has an old version
 * beside the default one. -f libc:fopen and -f libc:pthread_cond_wait
 * select the default ones, one function each. */
START_TEST(versioned_library_names)
{
	char *args[] = {"-f", "libc:fopen", "-f", "libc:pthread_cond_wait",
			"--", names_bin(0), NSTR, NULL};
	struct h_run r;

	h_run(&r, args);
	assert_clean_run(&r);
	ck_assert_int_eq(h_num(r.json, "functions_traced"), 2);
	h_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("names_integration");
	TCase *tc = tcase_create("names");

	if (h_integration_setup("names", NULL))
		return 1;
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, select_by_demangled_glob, 0, 4);
	tcase_add_loop_test(tc, select_by_mangled_name, 0, 4);
	tcase_add_loop_test(tc, select_without_parameters, 0, 4);
	tcase_add_loop_test(tc, select_std_vector, 0, 4);
	tcase_add_loop_test(tc, default_never_probes_fragments, 0, 4);
	tcase_add_test(tc, fragment_pattern_explained);
	tcase_add_loop_test(tc, unmatched_patterns_warned, 0, 2);
	tcase_add_test(tc, unmatched_in_executable_library_matches);
	tcase_add_test(tc, no_pattern_matches);
	tcase_add_test(tc, versioned_library_names);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
