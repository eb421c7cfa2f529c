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
 *
 * And node (V8, Debian's nodejs: scripts/install-deps.sh): V8's stack walker
 * reads its frames' return addresses too, so node gets entry probes only,
 * whether V8 is in node itself (nodejs.org's builds) or in libnode.so
 * (Debian's), and runs unharmed. And java: HotSpot's stack walker reads the
 * return addresses of the runtime functions its compiled code calls, so a
 * -f selection in libjvm.so gives entry probes only (Debian's
 * openjdk-17-jdk-headless; tests/targets/JvmWork.java). And Free Pascal,
 * whose runtime reads return addresses for its exceptions: its programs
 * run unharmed with return probes (tests/targets/fpcexc.pas). And OCaml
 * native code, whose garbage collector reads return addresses: entry
 * probes only (tests/targets/ocamlwork.ml).
 */
#include <check.h>

#include "tests/harness.h"
#include "user/elf/lang.h"

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

#define NODE "/usr/bin/node"
#define V8_LINE "is a V8 (JavaScript) "

/* node with V8 traced: one line says entries only, the run is the same as
 * untraced, and no return was probed. Before, a return probe on
 * Builtins_JSEntry (the static build here) killed node with SIGSEGV, and
 * so did one on v8::internal::Runtime_* once the garbage collector walked
 * the stack, or on any of its builtins ("abort: Invalid bytecode"). */
START_TEST(node_entries_only)
{
	char *js[] = {NODE, "-e",
		      "let s = 0; for (let i = 0; i < 20000; i++) { try { if (i % 1000 == 0) "
		      "throw new Error('x' + i); s += i; } catch (e) { s -= 1; } } "
		      "console.log(s, JSON.stringify([{a: 1}]));",
		      NULL};
	char *in_exe[] = {"-f", "Builtins_JSEntry*", "-f", "v8::internal::Runtime_*", NULL};
	char *in_lib[] = {"-f", "libnode:v8::Isolate::New*", NULL};
	struct lang_info li;
	struct h_plain p;
	struct h_run r;

	ck_assert_msg(!access(NODE, X_OK), NODE " not found: install Debian's nodejs "
						"(scripts/install-deps.sh)");
	ck_assert_int_eq(lang__detect(NODE, &li), 0);
	/* V8 in the executable, or in the libnode.so it loads */
	h_traced_same(&p, &r, li.v8 ? in_exe : in_lib, js);
	ck_assert_msg(strstr(r.err, V8_LINE) && strstr(r.err, "tracing function entries only"),
		      "stderr:\n%s", r.err);
	ck_assert_int_ge(h_num(r.json, "functions_traced"), 1);
	ck_assert_int_eq(h_returns(r.json, "matched"), 0);
	ck_assert_int_eq(h_num(r.json, "lost"), 0);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

#define JAVA "/usr/bin/java"
#define JVM_LINE "is a JVM (Java) library: tracing function entries only"

/* java with libjvm.so's runtime entry points traced (the functions its
 * compiled code calls to allocate and throw): one line says entries only,
 * the run is the same as untraced, and no return was probed. Before, a
 * return probe there aborted the JVM whenever the garbage collector
 * walked a thread inside one: SharedRuntime::* gave SIGSEGV in
 * frame::sender, OptoRuntime::* "ShouldNotReachHere" in frame::oops_do
 * (JvmWork, 5 runs of 5). */
START_TEST(jvm_entries_only)
{
	char java[PATH_MAX], libjvm[PATH_MAX + 32], cp[PATH_MAX], opto[PATH_MAX + 64],
		shared[PATH_MAX + 64], *slash;
	char errfile[sizeof(h_tmp) + 32];
	/* a small heap: collections while the threads allocate; no
	 * hsperfdata file in /tmp; a crash report in h_tmp, not the cwd */
	char *target[] = {JAVA,	   "-Xmx32m", "-XX:-UsePerfData", errfile, "-cp", cp, "JvmWork",
			  "30000", NULL};
	char *args[] = {"-f", opto, "-f", shared, NULL};
	struct lang_info li;
	struct h_plain p;
	struct h_run r;

	ck_assert_msg(realpath(JAVA, java),
		      JAVA " not found: install Debian's "
			   "openjdk-17-jdk-headless (scripts/install-deps.sh)");
	/* JAVA_HOME/bin/java -> JAVA_HOME/lib/server/libjvm.so, which the
	 * launcher loads */
	slash = strrchr(java, '/');
	*slash = '\0';
	slash = strrchr(java, '/');
	*slash = '\0';
	snprintf(libjvm, sizeof(libjvm), "%s/lib/server/libjvm.so", java);
	ck_assert_int_eq(lang__detect(libjvm, &li), 0);
	ck_assert(li.jvm);
	snprintf(cp, sizeof(cp), "%s/java", h_targets);
	snprintf(errfile, sizeof(errfile), "-XX:ErrorFile=%s/hs_err_%%p.log", h_tmp);
	snprintf(opto, sizeof(opto), "%s:OptoRuntime::*", libjvm);
	snprintf(shared, sizeof(shared), "%s:SharedRuntime::*", libjvm);
	h_traced_same(&p, &r, args, target);
	ck_assert_msg(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 &&
			      strstr(p.out, "thread 2: "),
		      "untraced: status %d, stdout:\n%s", p.status, p.out);
	ck_assert_msg(strstr(r.err, JVM_LINE), "stderr:\n%s", r.err);
	ck_assert_int_ge(h_num(r.json, "functions_traced"), 2);
	ck_assert_int_eq(h_returns(r.json, "matched"), 0);
	ck_assert_int_eq(h_num(r.json, "lost"), 0);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

#define OCAML_LINE "is an OCaml program: tracing function entries only"

/* OCaml native code (tests/targets/ocamlwork.ml, Debian's ocaml-nox): its
 * garbage collector finds each frame's layout by its return address, so
 * the program gets entry probes only, says so once, runs as untraced and
 * its functions' counts are exact. Before, the default selection killed
 * it (SIGSEGV at its first collection with traced frames on the stack). */
START_TEST(ocaml_entries_only)
{
	char bin[PATH_MAX];
	char *target[] = {bin, "700", NULL};
	char *none[] = {NULL};
	struct h_plain p;
	struct h_run r;

	snprintf(bin, sizeof(bin), "%s/ocamlwork", h_targets);
	h_traced_same(&p, &r, none, target);
	ck_assert_msg(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 &&
			      strstr(p.out, "caught=100\n"),
		      "untraced: status %d, stdout:\n%s", p.status, p.out);
	ck_assert_msg(strstr(r.err, OCAML_LINE), "stderr:\n%s", r.err);
	ck_assert_int_eq(h_returns(r.json, "matched"), 0);
	/* OCaml names them camlOcamlwork__work_NNN (NNN: a stamp) */
	ck_assert_int_eq(h_calls_like(r.json, "camlOcamlwork__work_"), h_own_calls(p.out, "work"));
	ck_assert_int_eq(h_calls_like(r.json, "camlOcamlwork__build_"),
			 h_own_calls(p.out, "build"));
	ck_assert_int_eq(h_num(r.json, "lost"), 0);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* Free Pascal (tests/targets/fpcexc.pas, Debian's fp-compiler): its
 * runtime's own setjmp, fpc_setjmp, called by every try block, keeps its
 * return address, and every raise walks the frame-pointer chain reading
 * return addresses for the exception's backtrace. Traced with the default
 * selection, the program does what it does untraced: its exceptions are
 * caught (before: "caught=0" for 100, exit 0: fpc_setjmp had a return
 * probe), and the unhandled one's backtrace shows the untraced addresses
 * (before: the trampoline's, at -O0, where FPC keeps frame pointers). */
START_TEST(fpc_exceptions_unharmed)
{
	static const struct {
		const char *name;
		long long calls;
	} fns[] = {{"P$FPCEXC_$$_OUTER$LONGINT", 300},
		   {"P$FPCEXC_$$_MID$LONGINT", 300},
		   /* and once from outer_unhandled */
		   {"P$FPCEXC_$$_INNER$LONGINT", 301},
		   {"P$FPCEXC_$$_OUTER_UNHANDLED$LONGINT", 1}};
	char *target[] = {(char *)h_target("fpcexc", _i ? 2 : 0), "300", "unhandled", NULL};
	char *none[] = {NULL};
	struct h_plain p;
	struct h_run r;
	size_t i;

	h_traced_same(&p, &r, none, target);
	ck_assert_msg(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 217 &&
			      strstr(p.out, "caught=100 ") && strstr(p.err, "Exception: boom"),
		      "untraced: status %d, stdout:\n%s\nstderr:\n%s", p.status, p.out, p.err);
	ck_assert_msg(strstr(r.err, "FPC_SETJMP") && strstr(r.err, "return probe would break"),
		      "stderr:\n%s", r.err);
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		ck_assert_int_eq(h_calls(r.json, fns[i].name), fns[i].calls);
	ck_assert_int_eq(h_calls(r.json, "FPC_SETJMP"), 0);
	/* the raises reached the runtime's stack walker, a guard site */
	ck_assert_int_ge(h_guard(r.json, "sites_reached"), 100);
	ck_assert_int_eq(h_guard(r.json, "failed"), 0);
	ck_assert_int_eq(h_guard(r.json, "unguarded"), 0);
	ck_assert_int_eq(h_returns(r.json, "orphan"), 0);
	ck_assert_int_eq(h_num(r.json, "lost"), 0);
	h_plain_free(&p);
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
	tcase_add_test(tc, node_entries_only);
	tcase_add_test(tc, jvm_entries_only);
	tcase_add_loop_test(tc, fpc_exceptions_unharmed, 0, 2);
	tcase_add_test(tc, ocaml_entries_only);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
