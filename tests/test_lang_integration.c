// SPDX-License-Identifier: BSD-2-Clause
/*
 * Integration suite: a real Go program under the real kernel. Go's runtime
 * walks, copies and checks its goroutine stacks, so a return probe kills it
 * ("unknown caller pc"); cabbpf must recognise the Go binary (user/elf/lang.h),
 * trace function entries only, say so in one line, and leave the program
 * unharmed: the same stdout, stderr and exit status as untraced, and call
 * counts equal to the program's own and to tests/expected/targets.txt
 * (tests/targets/gohello.go counts its calls and prints them; main.grow recurses 200 levels deep
 * with 1 KiB frames, so goroutine stacks grow and are copied while probed, and an entry probe on
 * Go's stack check would count those calls twice). Loop index: 0 = gohello (optimised), 1 =
 * gohello-noopt (-N -l). Needs root and BPF, like every integration suite.
 */
#include <check.h>

#include "tests/harness.h"

#define N_ITEMS "300"
#define GO_LINE "is a Go program: tracing function entries only"

static const char *go_bin(int i)
{
	static char buf[2][PATH_MAX];

	snprintf(buf[i], PATH_MAX, "%s/%s", h_targets, i ? "gohello-noopt" : "gohello");
	return buf[i];
}

/* Runs cabbpf with args (then "-- BIN N_ITEMS") and the same program
 * untraced, and asserts the traced run did exactly what the untraced one
 * did. go_line: whether cabbpf's Go line must be there (1) or absent (0).
 * The caller frees *r. */
static void same_as_untraced(struct h_run *r, const char *bin, char **args, int go_line)
{
	char *target[] = {(char *)bin, N_ITEMS, NULL};
	struct h_plain p;

	h_traced_same(&p, r, args, target);
	ck_assert_msg(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "untraced: status %d",
		      p.status);
	if (go_line) {
		const char *l = strstr(r->err, GO_LINE);

		ck_assert_msg(l != NULL, "no Go line; stderr:\n%s", r->err);
		/* once */
		ck_assert_ptr_null(strstr(l + 1, GO_LINE));
		/* and it names the binary */
		ck_assert_ptr_nonnull(strstr(r->err, bin));
	} else {
		ck_assert_msg(strstr(r->err, GO_LINE) == NULL, "Go line; stderr:\n%s", r->err);
	}
	ck_assert_int_eq(h_num(r->json, "lost"), 0);
	h_plain_free(&p);
}

/* cabbpf's counts equal the program's own, and the expected figures
 * (tests/expected/targets.txt). */
static void exact_counts(const struct h_run *r)
{
	static const char *const fns[] = {"main.worker", "main.mix", "main.grow", "main.leaf",
					  NULL};
	char fact[64];
	size_t i;

	for (i = 0; fns[i]; i++) {
		snprintf(fact, sizeof(fact), "calls %s", fns[i]);
		ck_assert_int_eq(h_own_calls(r->out, fns[i]), h_expected("gohello " N_ITEMS, fact));
	}
	h_assert_own_counts(r->out, r->json, fns);
	/* entry probes only: no return was expected, none was seen */
	ck_assert_int_le(h_returns(r->json, "matched"), 0);
}

/* Default options: every function of the binary (the Go runtime too).
 * The runtime's own calls vary with its scheduling (158,000-168,000
 * events seen): rings of 64 MiB per CPU (1,048,576 events) hold them all,
 * however late cabbpf drains (tests/harness.h). */
START_TEST(go_default_unharmed)
{
	char *args[] = {"--ring-size", "64", NULL};
	struct h_run r;

	same_as_untraced(&r, go_bin(_i), args, 1);
	exact_counts(&r);
	ck_assert_int_gt(h_num(r.json, "functions_traced"), 500);
	h_free(&r);
}
END_TEST

START_TEST(go_main_functions_unharmed)
{
	char *args[] = {"-f", "main.*", NULL};
	struct h_run r;

	same_as_untraced(&r, go_bin(_i), args, 1);
	exact_counts(&r);
	h_free(&r);
}
END_TEST

/* The user asked for entry probes: nothing to say, same result. */
START_TEST(go_entry_only_asked)
{
	char *args[] = {"--entry-only", "-f", "main.*", NULL};
	struct h_run r;

	same_as_untraced(&r, go_bin(_i), args, 0);
	exact_counts(&r);
	h_free(&r);
}
END_TEST

/* -a callgraph cannot be served without return probes: counts instead,
 * and still no harm. */
START_TEST(go_callgraph_asked)
{
	char *args[] = {"-a", "callgraph", "-f", "main.*", NULL};
	struct h_run r;

	same_as_untraced(&r, go_bin(_i), args, 1);
	exact_counts(&r);
	h_free(&r);
}
END_TEST

/* Not Go: no Go line, and return probes as usual. */
START_TEST(c_program_keeps_returns)
{
	char *args[] = {"-q", "--", (char *)h_target("recurse", 2), "10", NULL};
	struct h_run r;

	h_run(&r, args);
	ck_assert_msg(r.status == 0, "cabbpf exit %d, stderr:\n%s", r.status, r.err);
	ck_assert_ptr_null(strstr(r.err, GO_LINE));
	h_check(r.json, "recurse 10", "calls fib");
	ck_assert_int_eq(h_returns(r.json, "matched"), h_expected("recurse 10", "entries"));
	h_free(&r);
}
END_TEST

/* -l lists, it does not trace: no Go line there. */
START_TEST(go_list_says_nothing)
{
	char *args[] = {"-l", "-f", "main.*", "--", (char *)go_bin(0), "1", NULL};
	struct h_run r;

	h_start(&r, args, 1, 0);
	h_finish(&r);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "main.grow"));
	ck_assert_ptr_null(strstr(r.err, GO_LINE));
	h_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lang_integration");
	TCase *tc = tcase_create("go");

	if (h_integration_setup("lang-integration", NULL))
		return 1;
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, go_default_unharmed, 0, 2);
	tcase_add_loop_test(tc, go_main_functions_unharmed, 0, 2);
	tcase_add_loop_test(tc, go_entry_only_asked, 0, 2);
	tcase_add_loop_test(tc, go_callgraph_asked, 0, 2);
	tcase_add_test(tc, c_program_keeps_returns);
	tcase_add_test(tc, go_list_says_nothing);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
