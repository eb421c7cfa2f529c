// SPDX-License-Identifier: BSD-2-Clause
/*
 * The target guard (user/trace/guard.h, docs/guard.md) on the real kernel: C++
 * exceptions through traced frames (g++ and clang++, -O0 and -O2), forced
 * unwinding, ucontext coroutines, Rust panics, attach and detach while the
 * target throws, a target that already has a tracer, and a target killed
 * mid-trace. Every run is compared with the same program untraced: same
 * stdout, same stderr (without cabbpf's own "cabbpf: " lines), same exit;
 * and the counts are asserted EXACTLY against the program's own (its last
 * line "calls: name=N ...", tests/targets/README.md).
 */
#include <check.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "tests/harness.h"
#include "user/elf/syms.h"

/*
 * Run target (argv, NULL-terminated) untraced into *p, then traced with
 * cabbpf's options opts (NULL-terminated) into *r: the target behaved the
 * same (h_traced_same), and nothing was lost.
 */
static void traced_same(struct h_plain *p, struct h_run *r, char *const *opts, char *const *target)
{
	h_traced_same(p, r, opts, target);
	h_assert_no_loss(r->json);
}

/* The guard served every site, and nothing was left unexplained: the
 * only frames closed as missing are those the kernel gave no return probe
 * (64 pending) that returned unseen. */
static void guard_clean(json_object *json, bool threw)
{
	ck_assert_int_eq(h_guard(json, "unguarded"), 0);
	ck_assert_int_eq(h_guard(json, "failed"), 0);
	ck_assert_int_eq(h_returns(json, "orphan"), 0);
	ck_assert_int_le(h_returns(json, "missing"), h_returns(json, "depth_limited"));
	if (threw) {
		ck_assert_int_gt(h_guard(json, "restored"), 0);
		ck_assert_int_gt(h_returns(json, "unwound"), 0);
	}
}

/* traced_same, then the program's own counts of names exact and the guard
 * clean after throws: what every exception test checks first. */
static void exc_traced(struct h_plain *p, struct h_run *r, char *const *opts, char *const *target,
		       const char *const *names)
{
	traced_same(p, r, opts, target);
	h_assert_own_counts(p->out, r->json, names);
	guard_clean(r->json, true);
}

struct exc_case {
	const char *mode;
	const char *n;
	const char *const *names; /* functions to count */
};

static const char *const basic_names[] = {"catcher", "thrower_outer", "thrower_mid",
					  "thrower_inner", NULL};
static const char *const rethrow_names[] = {"catcher",	   "rethrower",	    "thrower_outer",
					    "thrower_mid", "thrower_inner", NULL};
static const char *const nested_names[] = {
	"catcher", "nester", "translate", "thrower_outer", "thrower_mid", "thrower_inner", NULL};
static const char *const dtor_names[] = {
	"catcher", "guarded", "cleanup_fn", "thrower_outer", "thrower_mid", "thrower_inner", NULL};
static const char *const threads_names[] = {"catcher",	   "thread_body",   "thrower_outer",
					    "thrower_mid", "thrower_inner", NULL};
static const char *const cancel_names[] = {"cancel_thread", "blocker", "cleanup_fn", NULL};
static const char *const deep_names[] = {"catcher", "deep_rec", "thrower_inner", NULL};
static const char *const mixed_names[] = {"catcher",	 "after_catch",	  "thrower_outer",
					  "thrower_mid", "thrower_inner", NULL};

/* Every mode of tests/targets/exc.cc traced with the default selection
 * (every function of the program: what kills the target without a guard). */
static void exc_default(int i, const struct exc_case *c)
{
	char *target[] = {(char *)h_cxx_target("exc", i), (char *)c->mode, (char *)c->n, NULL};
	char *opts[] = {NULL};
	struct h_plain p;
	struct h_run r;

	exc_traced(&p, &r, opts, target, c->names);
	h_plain_free(&p);
	h_free(&r);
}

START_TEST(exc_basic)
{
	struct exc_case c = {"basic", "200", basic_names};
	char *target[] = {(char *)h_cxx_target("exc", _i), "basic", "200", NULL};
	char *opts[] = {"-f", "catcher", "-f", "thrower_*", NULL};
	struct h_plain p;
	struct h_run r;

	exc_default(_i, &c);
	/* The catcher's frame survives: its return still matches, and the
	 * edges stay exact. */
	exc_traced(&p, &r, opts, target, basic_names);
	ck_assert_int_eq(h_fn_field(r.json, "catcher", "matched"), 200);
	ck_assert_int_eq(h_edge(r.json, "<root>", "catcher"), 200);
	ck_assert_int_eq(h_edge(r.json, "catcher", "thrower_outer"), 200);
	ck_assert_int_eq(h_edge(r.json, "thrower_outer", "thrower_mid"), 200);
	ck_assert_int_eq(h_edge(r.json, "thrower_mid", "thrower_inner"), 200);
	ck_assert_int_eq(h_nedges(r.json), 4);
	/* outer, mid and inner are unwound, every time */
	ck_assert_int_eq(h_returns(r.json, "unwound"), 600);
	ck_assert_int_eq(h_returns(r.json, "matched"), 200);
	ck_assert_int_eq(h_returns(r.json, "open"), 0);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

START_TEST(exc_rethrow)
{
	struct exc_case c = {"rethrow", "100", rethrow_names};

	exc_default(_i, &c);
}
END_TEST

START_TEST(exc_nested)
{
	struct exc_case c = {"nested", "100", nested_names};

	exc_default(_i, &c);
}
END_TEST

START_TEST(exc_dtor)
{
	struct exc_case c = {"dtor", "100", dtor_names};

	exc_default(_i, &c);
}
END_TEST

START_TEST(exc_threads)
{
	struct exc_case c = {"threads", "300", threads_names};

	exc_default(_i, &c);
}
END_TEST

START_TEST(exc_cancel)
{
	struct exc_case c = {"cancel", "5", cancel_names};

	exc_default(_i, &c);
}
END_TEST

START_TEST(exc_deep)
{
	struct exc_case c = {"deep", "20", deep_names};

	exc_default(_i, &c);
}
END_TEST

/* Survivors keep their returns and times: catcher and after_catch return
 * normally after every catch, with their callers right. */
START_TEST(exc_mixed)
{
	struct exc_case c = {"mixed", "300", mixed_names};
	char *target[] = {(char *)h_cxx_target("exc", _i), "mixed", "300", NULL};
	char *opts[] = {"-f", "catcher", "-f", "thrower_*", "-f", "after_catch", NULL};
	struct h_plain p;
	struct h_run r;

	exc_default(_i, &c);
	exc_traced(&p, &r, opts, target, mixed_names);
	ck_assert_int_eq(h_fn_field(r.json, "catcher", "matched"), 300);
	ck_assert_int_eq(h_fn_field(r.json, "after_catch", "matched"), 300);
	ck_assert_int_eq(h_edge(r.json, "catcher", "after_catch"), 300);
	/* which frames lost their returns, and why: per function */
	ck_assert_int_eq(h_fn_field(r.json, "thrower_inner", "unwound"), 100);
	ck_assert_int_eq(h_fn_field(r.json, "thrower_outer", "unwound"), 100);
	ck_assert_int_eq(h_fn_field(r.json, "catcher", "unwound"), 0);
	ck_assert_int_gt(h_fn_field(r.json, "catcher", "incl_ns"), 0);
	/* i % 3 == 0 throws: 100 of 300; outer, mid, inner unwound then */
	ck_assert_int_eq(h_returns(r.json, "unwound"), 300);
	ck_assert_int_eq(h_returns(r.json, "matched"), 300 + 300 + 3 * 200);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* The exception runtime traced too (libstdc++'s __cxa_*, as -f 'libstdc++:*'
 * does): __cxa_end_catch ends each catch by jumping to
 * _Unwind_DeleteException, a catch site, at its own return slot; it lives
 * and returns, and the exception's cleanup is its callee (it was closed
 * as missing there, and its return counted as an orphan). */
START_TEST(exc_runtime_traced)
{
	char *target[] = {(char *)h_cxx_target("exc", _i), "basic", "200", NULL};
	char *opts[] = {"-f", "catcher", "-f", "thrower_*", "-f", "libstdc++:__cxa_*", NULL};
	struct h_plain p;
	struct h_run r;

	exc_traced(&p, &r, opts, target, basic_names);
	ck_assert_int_eq(h_returns(r.json, "missing"), 0);
	ck_assert_int_eq(h_calls(r.json, "libstdc++:__cxa_end_catch"), 200);
	ck_assert_int_eq(h_fn_field(r.json, "libstdc++:__cxa_end_catch", "matched"), 200);
	ck_assert_int_eq(h_edge(r.json, "catcher", "libstdc++:__cxa_end_catch"), 200);
	ck_assert_int_eq(h_fn_field(r.json, "catcher", "matched"), 200);
	/* outer, mid, inner and __cxa_throw, every time */
	ck_assert_int_eq(h_returns(r.json, "unwound"), 800);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* A traced function that throws with no traced callee (thrower_outer,
 * without mid and inner) is unwound while its caller's landing pad runs a
 * destructor, which makes its call at the dead frame's return slot: its
 * caller is guarded, the frame it runs in, not thrower_outer (which the
 * equal slot made look like a tail caller). */
START_TEST(exc_dtor_callers)
{
	static const char *const names[] = {"catcher", "guarded", "thrower_outer", "cleanup_fn",
					    NULL};
	const char *dtor = "cleanup_guard::~cleanup_guard()";
	char *target[] = {(char *)h_cxx_target("exc", _i), "dtor", "100", NULL};
	char *opts[] = {"-f", "catcher",    "-f", "guarded", "-f", "thrower_outer",
			"-f", "cleanup_fn", "-f", "*cleanup_guard*", NULL};
	struct h_plain p;
	struct h_run r;

	exc_traced(&p, &r, opts, target, names);
	ck_assert_int_eq(h_returns(r.json, "missing"), 0);
	ck_assert_int_eq(h_edge(r.json, "guarded", "thrower_outer"), 100);
	ck_assert_int_eq(h_edge(r.json, "thrower_outer", "cleanup_fn"), 0);
	ck_assert_int_eq(h_edge(r.json, "thrower_outer", dtor), 0);
	/* the destructor inlined (cleanup_fn called by guarded) or not */
	ck_assert_int_eq(h_edge(r.json, "guarded", "cleanup_fn") + h_edge(r.json, dtor, "cleanup_fn"),
			 100);
	ck_assert_int_eq(h_edge(r.json, "guarded", "cleanup_fn") + h_edge(r.json, "guarded", dtor),
			 100);
	ck_assert_int_eq(h_fn_field(r.json, "thrower_outer", "unwound"), 100);
	ck_assert_int_eq(h_fn_field(r.json, "guarded", "unwound"), 100);
	ck_assert_int_eq(h_fn_field(r.json, "cleanup_fn", "matched"), 100);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* The catch is in an untraced frame between traced ones. */
START_TEST(exc_untraced_catch)
{
	char *target[] = {(char *)h_cxx_target("exc", _i), "untraced_catch", "100", NULL};
	char *opts[] = {"-f", "catcher", "-f", "thrower_*", NULL};
	struct h_plain p;
	struct h_run r;

	exc_traced(&p, &r, opts, target, basic_names);
	ck_assert_int_eq(h_fn_field(r.json, "catcher", "matched"), 100);
	ck_assert_int_eq(h_calls(r.json, "plain_catcher"), 0);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* Without the guard the same program dies: what the guard is for (and
 * proof that these tests would catch its absence). */
START_TEST(exc_no_guard_kills)
{
	char *args[] = {"--no-guard",
			"-f",
			"catcher",
			"-f",
			"thrower_*",
			"--",
			(char *)h_cxx_target("exc", 1),
			"basic",
			"10",
			NULL};
	struct h_run r;

	h_run(&r, args);
	ck_assert_msg(r.json != NULL, "no JSON report; stderr:\n%s", r.err);
	ck_assert_str_eq(h_exit(r.json), "killed by signal 6 (Aborted)");
	ck_assert_ptr_nonnull(strstr(r.err, "terminate called"));
	h_free(&r);
}
END_TEST

/* ucontext coroutines: traced by default, and with only the coroutine
 * functions (where the kernel used to kill it with SIGILL). */
START_TEST(coro_switches)
{
	static const char *const names[] = {"produce", "consume", "once", "step", NULL};
	char *target[] = {(char *)h_target("coro", _i ? 2 : 0), "500", NULL};
	char *none[] = {NULL};
	char *some[] = {"-f", "produce", "-f", "consume", "-f", "once", "-f", "step", NULL};
	struct h_plain p;
	struct h_run r;

	traced_same(&p, &r, none, target);
	h_assert_own_counts(p.out, r.json, names);
	guard_clean(r.json, false);
	h_plain_free(&p);
	h_free(&r);
	traced_same(&p, &r, some, target);
	h_assert_own_counts(p.out, r.json, names);
	guard_clean(r.json, false);
	ck_assert_int_gt(h_guard(r.json, "sites_reached"), 0);
	/* the coroutine and its consumer lost their returns to switches */
	ck_assert_int_eq(h_fn_field(r.json, "produce", "switched"), 1);
	ck_assert_int_eq(h_fn_field(r.json, "consume", "switched"), 1);
	/* step is called on both stacks, and returns there every time */
	ck_assert_int_eq(h_fn_field(r.json, "step", "matched"), h_own_calls(p.out, "step"));
	ck_assert_int_eq(h_edge(r.json, "consume", "step") + h_edge(r.json, "produce", "step") +
				 h_edge(r.json, "once", "step"),
			 h_own_calls(p.out, "step"));
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* A program's own stack switch (tests/targets/fiber.c: the shape of
 * libco's coctx_swap), which no name tells: found by its code, never
 * return-probed, and guarded as jump_fcontext is. Before, the default
 * selection killed the program (SIGSEGV), and so did leaving the switch
 * itself out (-N): the frames on the two stacks had trampolines the
 * kernel's one list cannot follow. */
static const char *const fiber_names[] = {"produce", "produce_one", "consume", "step", NULL};

/* fiber 500 traced with the default selection: unharmed, exact counts,
 * its switch found and guarded, each produce_one closed for its switch. */
static void fiber_default(char *const *target)
{
	char *none[] = {NULL};
	struct h_plain p;
	struct h_run r;

	traced_same(&p, &r, none, target);
	ck_assert_msg(strstr(r.err, "that a return probe would break (fiber_switch)"),
		      "stderr:\n%s", r.err);
	ck_assert_msg(strstr(r.err, " 0 refused by the kernel"), "stderr:\n%s", r.err);
	h_assert_own_counts(p.out, r.json, fiber_names);
	guard_clean(r.json, false);
	ck_assert_int_gt(h_guard(r.json, "sites_reached"), 0);
	/* step never spans a switch: every call returns where it was made */
	ck_assert_int_eq(h_fn_field(r.json, "step", "matched"), h_own_calls(p.out, "step"));
	ck_assert_int_eq(h_edge(r.json, "produce_one", "step"), 500);
	/* each produce_one is left by a switch, and closed for it */
	ck_assert_int_eq(h_fn_field(r.json, "produce_one", "switched"), 500);
	h_plain_free(&p);
	h_free(&r);
}

START_TEST(fiber_own_switch)
{
	char *target[] = {(char *)h_target("fiber", _i ? 2 : 0), "500", NULL};
	char *left_out[] = {"-N", "fiber_switch", NULL};
	struct h_plain p;
	struct h_run r;

	fiber_default(target);
	traced_same(&p, &r, left_out, target);
	h_assert_own_counts(p.out, r.json, fiber_names);
	guard_clean(r.json, false);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* The same with another tool's uprobe, with no pid filter, at the entry
 * of every function of fiber (h_foreign_uprobe): the kernel writes their
 * int3 into every private mapping of the file, cabbpf's read-only ones
 * too. cabbpf read the code through such a mapping: its plan refused
 * every entry where it found the int3 ("3 refused by the kernel", no
 * calls traced), and its scan for stack switchers decoded the int3 in
 * place of fiber_switch's first instruction. Found with two cabbpf in
 * --cgroup mode on one executable. */
START_TEST(fiber_under_foreign_uprobes)
{
	char *target[] = {(char *)h_target("fiber", _i ? 2 : 0), "500", NULL};
	struct symtab *st = NULL;
	int fds[64];
	size_t n;

	ck_assert_int_eq(syms__load(target[0], &st), 0);
	ck_assert(syms__find(st, "fiber_switch"));
	syms__free(st);
	n = h_foreign_uprobes(target[0], fds, 64);
	ck_assert_uint_gt(n, 4);
	fiber_default(target);
	while (n)
		close(fds[--n]);
}
END_TEST

/* A program's own setjmp (tests/targets/ownjmp.c: the shape of Free
 * Pascal's fpc_setjmp, which every try block calls), which no name
 * tells: found by its code (it reads its return address) and never
 * return-probed. Before, the default selection let each jump back
 * "return" from save_point through the trampoline, and the program
 * printed wrong results and exited 0 (raised=0 at -O0, 135 at -O2, for
 * 10 of 30). The frames the jump abandons are closed as missing. */
START_TEST(own_setjmp_never_return_probed)
{
	static const char *const names[] = {"attempt", "risky", "check", NULL};
	char *target[] = {(char *)h_target("ownjmp", _i ? 2 : 0), "300", NULL};
	char *none[] = {NULL};
	struct h_plain p;
	struct h_run r;

	traced_same(&p, &r, none, target);
	ck_assert_msg(strstr(r.err, "that a return probe would break (save_point)"), "stderr:\n%s",
		      r.err);
	ck_assert_msg(strstr(p.out, "n=300 raised=100 "), "stdout:\n%s", p.out);
	h_assert_own_counts(p.out, r.json, names);
	ck_assert_int_eq(h_calls(r.json, "jump_back"), 100);
	ck_assert_int_eq(h_calls(r.json, "save_point"), 0);
	ck_assert_int_eq(h_edge(r.json, "main", "attempt"), 300);
	ck_assert_int_eq(h_edge(r.json, "attempt", "risky"), 300);
	ck_assert_int_eq(h_edge(r.json, "risky", "check"), 300);
	ck_assert_int_eq(h_edge(r.json, "check", "jump_back"), 100);
	/* every third check, its risky and the jump_back never return */
	ck_assert_int_eq(h_fn_field(r.json, "attempt", "matched"), 300);
	ck_assert_int_eq(h_fn_field(r.json, "risky", "matched"), 200);
	ck_assert_int_eq(h_fn_field(r.json, "check", "matched"), 200);
	ck_assert_int_eq(h_returns(r.json, "missing"), 300);
	ck_assert_int_eq(h_returns(r.json, "orphan"), 0);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* A signal handler on an alternate stack that calls a traced function
 * (tests/targets/altstack.c). With the alternate stack above pending
 * frames (in main's frame; a thread's, mapped before the thread), the
 * kernel dropped their return instances at the handler's call of leaf,
 * and their returns then found the trampoline: the target died of SIGILL
 * ("thread") or returned from main early with no output ("above": status
 * 1 at -O0, 6 at -O2). The guard now restores those slots when such a
 * handler is entered (bpf/guard.bpf.c, guard_altstack): each signal
 * restores the 6 descend frames (loop's and run_thread's once), and the
 * reports close exactly those as switched. Below the stack, nothing is
 * needed, and the handler's calls nest under descend.
 * _i: above, thread, below (bits 1-2), -O0/-O2 (bit 0). */
START_TEST(altstack_handler_unharmed)
{
	static const char *const modes[] = {"above", "thread", "below"};
	static const char *const names[] = {"descend", "on_usr1",	"leaf", "run_thread",
					    "loop",    "use_alt_stack", NULL};
	const char *mode = modes[_i >> 1];
	char *target[] = {(char *)h_target("altstack", (_i & 1) ? 2 : 0), (char *)mode, "50", NULL};
	int thread = !strcmp(mode, "thread");
	/* pending below the alternate stack at a signal: 6 descend, loop's
	 * frame at the first (and run_thread's in "thread") */
	long long restored = !strcmp(mode, "below") ? 0 : 301 + thread;
	char *none[] = {NULL};
	struct h_plain p;
	struct h_run r;

	traced_same(&p, &r, none, target);
	ck_assert_msg(strstr(p.out, "sum=300 leaves=50\n"), "stdout:\n%s", p.out);
	h_assert_own_counts(p.out, r.json, names);
	guard_clean(r.json, false);
	ck_assert_int_eq(h_edge(r.json, "descend", "descend"), 250);
	ck_assert_int_eq(h_edge(r.json, "on_usr1", "leaf"), 50);
	/* The frames below the alternate stack are set aside while the
	 * handler runs (pipeline/shadow.h, ALTSTACK): its calls nest under
	 * the first frame above, and the next rounds' descend under loop. */
	ck_assert_int_eq(h_edge(r.json, "loop", "descend"), 50);
	if (restored) /* run_thread is below the thread's alternate stack */
		ck_assert_int_eq(h_edge(r.json, thread ? "<root>" : "main", "on_usr1"), 50);
	else
		ck_assert_int_eq(h_edge(r.json, "descend", "on_usr1"), 50);
	ck_assert_int_eq(h_guard(r.json, "restored"), restored);
	/* the thread's last frames are found dead by no later event: open */
	ck_assert_int_eq(h_returns(r.json, "switched"), restored - (thread ? 8 : 0));
	ck_assert_int_eq(h_returns(r.json, "open"), thread ? 8 : 0);
	ck_assert_int_eq(h_guard(r.json, "sites_reached"), restored ? 50 : 0);
	ck_assert_int_eq(h_guard(r.json, "stops"), restored ? 50 : 0);
	/* 300 descend, 50 on_usr1, 50 leaf, main, loop, use_alt_stack */
	ck_assert_int_eq(h_returns(r.json, "matched"), 403 + thread - restored);
	ck_assert_int_eq(h_returns(r.json, "missing"), 0);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* A program whose forked children throw (tests/targets/forkthrow.cc: a
 * prefork server's workers). A child inherits the frames of spawn and
 * main pending with their trampolines, and the target's breakpoints, at
 * which each of its traced calls armed a return probe of its own (a
 * multi link's return consumer does not filter by process when it fires).
 * Before, every child's exception met a trampoline and called
 * std::terminate: "terminate called after throwing an instance of
 * 'std::runtime_error'", status 6, caught=0. The guard now holds each
 * child at birth (PTRACE_O_TRACEFORK), puts back the return addresses it
 * inherited, takes the breakpoints out, and lets it go: the child runs as
 * untraced. _i: g++ -O0, g++ -O2, clang++ -O0, clang++ -O2. */
START_TEST(fork_children_unharmed)
{
	static const char *const names[] = {"spawn", NULL};
	char *target[] = {(char *)h_cxx_target("forkthrow", _i), "20", NULL};
	char *none[] = {NULL};
	struct h_plain p;
	struct h_run r;

	traced_same(&p, &r, none, target);
	ck_assert_msg(strstr(p.out, "children=20 caught=20\n"), "stdout:\n%s", p.out);
	h_assert_own_counts(p.out, r.json, names);
	guard_clean(r.json, false);
	/* the children are not the target: none of their calls is counted */
	ck_assert_int_eq(h_calls(r.json, "main"), 1);
	ck_assert_int_eq(h_calls(r.json, "work"), 0);
	ck_assert_int_eq(h_calls(r.json, "step"), 0);
	ck_assert_int_eq(h_calls(r.json, "fail"), 0);
	ck_assert_int_eq(h_edge(r.json, "main", "spawn"), 20);
	ck_assert_int_eq(h_returns(r.json, "matched"), 21);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* A child made with clone(CLONE_VM) and SIGCHLD (tests/targets/clonevm.c)
 * reports as a fork but shares the target's memory: the guard lets it go
 * without writing into it. Cleaning it as a forked child took the
 * target's own breakpoints out, and its later calls went uncounted
 * (work: 100 of 200), with nothing said. Exact counts; unharmed. _i:
 * -O0/-O2. */
START_TEST(clone_vm_child_keeps_probes)
{
	static const char *const names[] = {"work", NULL};
	char *target[] = {(char *)h_target("clonevm", _i ? 2 : 0), "100", NULL};
	char *none[] = {NULL};
	struct h_plain p;
	struct h_run r;

	traced_same(&p, &r, none, target);
	h_assert_own_counts(p.out, r.json, names);
	ck_assert_int_eq(h_calls(r.json, "work"), 200);
	ck_assert_int_eq(h_calls(r.json, "main"), 1);
	ck_assert_int_eq(h_calls(r.json, "child"), 0); /* not the target's */
	ck_assert_int_eq(h_returns(r.json, "matched"), 201);
	guard_clean(r.json, false);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* The same kind of switch in a library the trace probes
 * (tests/targets/plugin/cabfiber.c, loaded with dlopen): the guard looks
 * for switches in every library given with -f, not only in the
 * executable. With the switch left unprobed but unguarded, the target
 * died of SIGSEGV. */
START_TEST(fiber_switch_in_library)
{
	char *target[] = {(char *)h_target("dlopener", _i ? 2 : 0), "500", "libcabfiber.so", NULL};
	char *opts[] = {"-f", "run_plugin", "-f", "libcabfiber:*", NULL};
	struct h_plain p;
	struct h_run r;

	traced_same(&p, &r, opts, target);
	ck_assert_msg(strstr(r.err, "that a return probe would break (cabfiber_switch)"),
		      "stderr:\n%s", r.err);
	guard_clean(r.json, false);
	ck_assert_int_gt(h_guard(r.json, "sites_reached"), 0);
	ck_assert_int_eq(h_calls(r.json, "run_plugin"), 1);
	ck_assert_int_eq(h_calls(r.json, "libcabfiber:plug_work"), 500);
	ck_assert_int_eq(h_calls(r.json, "libcabfiber:fibre_once"), 500);
	ck_assert_int_eq(h_calls(r.json, "libcabfiber:fibre_step"), 500);
	ck_assert_int_eq(h_edge(r.json, "libcabfiber:fibre_once", "libcabfiber:fibre_step"), 500);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* Rust: panics caught by std::panic::catch_unwind around traced frames. */
START_TEST(rust_catch_unwind)
{
	char *target[] = {(char *)h_target("panic", _i ? 2 : 0), "300", NULL};
	char *opts[] = {"-f", "*panic_inner*", "-f", "*panic_outer*", NULL};
	struct h_plain p;
	struct h_run r;

	traced_same(&p, &r, opts, target);
	ck_assert_int_eq(h_calls_like(r.json, "panic_inner"), h_own_calls(p.out, "panic_inner"));
	ck_assert_int_eq(h_calls_like(r.json, "panic_outer"), h_own_calls(p.out, "panic_outer"));
	guard_clean(r.json, true);
	ck_assert_int_eq(h_returns(r.json, "open"), 0);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/*
 * Attach to a running program that throws all the time, detach while it
 * goes on (frames entered while traced still pending): it keeps running
 * and prints what it prints untraced. It stops itself inside
 * thrower_inner of an iteration that throws (EXC_PAUSE_AT), so cabbpf
 * attaches with catcher, outer, mid and inner pending, about to be
 * unwound, however loaded the machine (a target that merely ran could
 * finish before cabbpf was in: make stress saw it a zombie).
 */
START_TEST(attach_detach_while_throwing)
{
	char *target[] = {(char *)h_cxx_target("exc", _i), "mixed", "3000000", NULL};
	char *out, ex[96];
	char *opts[] = {"-q", NULL};
	struct h_plain p;
	struct h_proc t;
	struct h_run r;
	long long cpu;
	int st;

	h_plain_run(&p, target);
	h_spawn(&t, target, "EXC_PAUSE_AT=300000", NULL);
	ck_assert_int_eq(waitpid(t.pid, &st, WUNTRACED), t.pid);
	ck_assert_msg(WIFSTOPPED(st), "exc did not stop itself: %s", h_describe(st, ex, 48));
	h_start_pid(&r, t.pid, opts, H_TRACING);
	kill(t.pid, SIGCONT);
	/* Detached once the target has run traced for a while, however
	 * loaded the machine (a fixed -d once saw no event at all). */
	cpu = h_cpu_ms(t.pid);
	ck_assert(h_wait_cpu(t.pid, cpu + 200));
	h_interrupt(&r);
	ck_assert_msg(r.status == 0, "cabbpf exit %d, stderr:\n%s", r.status, r.err);
	ck_assert_msg(h_num(r.json, "events") > 0, "no events; stderr:\n%s", r.err);
	ck_assert_int_eq(h_guard(r.json, "unguarded"), 0);
	waitpid(t.pid, &st, 0);
	ck_assert_str_eq(h_describe(st, ex, sizeof(ex)), h_describe(p.status, ex + 48, 48));
	out = h_slurp(t.out_path);
	ck_assert_str_eq(out, p.out);
	free(out);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* A running C++ program whose libstdc++ and libgcc_s were replaced on
 * disk since it loaded them (a package upgrade under a daemon: its maps
 * say "(deleted)"). The guard's sites and -f 'libstdc++:...' must go on
 * the files it runs (/proc/PID/map_files), not on the new files of those
 * names, which it never runs: the guard then never saw a throw, and the
 * first exception through a traced frame met the trampoline
 * (std::terminate, exit 134 with -p). Unharmed; the guard served every
 * throw; __cxa_allocate_exception counted exactly (one per throw: i % 3
 * == 0 of 300). _i: g++/clang++ -O0/-O2. */
START_TEST(replaced_libraries_still_guarded)
{
	static const char *const names[] = {"catcher", "thrower_inner", "after_catch", NULL};
	char *target[] = {(char *)h_cxx_target("exc", _i), "mixed", "300", NULL};
	char *opts[] = {"-q",	       "-f",	    "catcher",
			"-f",	       "thrower_*", "-f",
			"after_catch", "-f",	    "libstdc++:__cxa_allocate_exception",
			NULL};
	char dir[PATH_MAX], env[PATH_MAX + 32];
	struct h_plain p;
	struct h_proc t;
	struct h_run r;
	int st;

	h_plain_run(&p, target);
	snprintf(dir, sizeof(dir), "%s/upgraded-%d", h_tmp, _i);
	h_shell("set -e; mkdir -p '%s'; for l in $(ldd '%s' | awk '/libstdc[+][+]|libgcc_s/ "
		"{print $3}'); do cp \"$l\" '%s'/; done; test $(ls '%s' | wc -l) = 2",
		dir, target[0], dir, dir);
	snprintf(env, sizeof(env), "LD_LIBRARY_PATH=%s", dir);
	ck_assert_int_eq(setenv("EXC_WAIT", "1", 1), 0);
	h_spawn(&t, target, env, "ready");
	unsetenv("EXC_WAIT");
	/* the upgrade: new files under the old names (rename, as dpkg does) */
	h_shell("set -e; cd '%s'; for l in *; do cp \"$l\" \"$l.new\"; mv \"$l.new\" \"$l\"; "
		"done; test $(grep -c '%s/.*(deleted)' /proc/%d/maps) -ge 2",
		dir, dir, (int)t.pid);
	h_start_pid(&r, t.pid, opts, H_TRACING);
	kill(t.pid, SIGUSR1);
	ck_assert_int_eq(waitpid(t.pid, &st, 0), t.pid);
	h_finish(&r);
	h_assert_ready_same(&t, st, &p);
	h_assert_ok(&r);
	h_assert_no_loss(r.json);
	ck_assert_msg(strstr(r.err, "deleted or replaced on disk since it was loaded"), "%s",
		      r.err);
	h_assert_own_counts(p.out, r.json, names);
	guard_clean(r.json, true);
	ck_assert_int_gt(h_guard(r.json, "sites_reached"), 0);
	ck_assert_int_eq(h_calls(r.json, "libstdc++:__cxa_allocate_exception"), 100);
	ck_assert_int_eq(h_returns(r.json, "unwound"), 300);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* Letting go of a process blocked in sigwaitinfo (tests/targets/
 * dlopener.c -w: SIGUSR1 blocked, no handler): it stays blocked until
 * its signal comes. A ptrace stop ends such a wait with EINTR (signal(7)),
 * and the guard stopped every thread to let go: the target went on as if
 * SIGUSR1 had come ("done" printed, exit 0, right after cabbpf left).
 * Only threads with return addresses to give back are stopped now. */
START_TEST(detach_leaves_sigwaitinfo_waiting)
{
	char *target[] = {(char *)h_target("dlopener", _i ? 2 : 0), "-w", "10", NULL};
	char *opts[] = {"-q", NULL};
	char *out, ex[64];
	struct h_proc t;
	struct h_run r;
	int st;

	h_spawn(&t, target, "LD_LIBRARY_PATH", "ready");
	h_start_pid(&r, t.pid, opts, H_TRACING);
	h_interrupt(&r);
	h_assert_ok(&r);
	ck_assert_int_eq(h_guard(r.json, "failed"), 0);
	/* cabbpf is gone: the target still waits */
	usleep(200000);
	ck_assert_int_eq(waitpid(t.pid, &st, WNOHANG), 0);
	out = h_slurp(t.out_path);
	ck_assert_msg(!strstr(out, "done"), "the target went on without its signal: %s", out);
	free(out);
	ck_assert_int_eq(kill(t.pid, SIGUSR1), 0);
	ck_assert_int_eq(waitpid(t.pid, &st, 0), t.pid);
	ck_assert_str_eq(h_describe(st, ex, sizeof(ex)), "exited with status 0");
	ck_assert(h_wait_for(t.out_path, "done", 10000));
	h_free(&r);
}
END_TEST

/*
 * Letting go of a thread blocked inside a traced function (wait_in, entered
 * during the trace: a return address to give back) in a call that a ptrace
 * stop would end with EINTR: epoll_wait (_i even), sigwaitinfo (odd), at
 * -O0 (_i < 2) and -O2. cabbpf writes the return address back without
 * stopping the thread and is gone at once, the thread still blocked in its
 * call; woken only then, the call returns what woke it and wait_in returns
 * to main through the address given back: the target prints and exits as
 * untraced.
 */
START_TEST(let_go_in_place_of_blocked_call)
{
	bool sigwait = _i & 1;
	char fifo[PATH_MAX], ex[64];
	char *target[] = {(char *)h_target("blocker", _i & 2 ? 2 : 0),
			  sigwait ? "sigwait" : "epoll", fifo, NULL};
	char *opts[] = {"-q", NULL};
	long nr = sigwait ? SYS_rt_sigtimedwait : SYS_epoll_wait;
	char *out;
	struct h_proc t;
	struct h_run r;
	int st, fd;

	snprintf(fifo, sizeof(fifo), "%s/blocker-%d.fifo", h_tmp, _i);
	unlink(fifo);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	if (sigwait)
		target[2] = NULL;
	h_spawn(&t, target, NULL, "ready");
	h_start_pid(&r, t.pid, opts, H_TRACING);
	h_enter_blocking_call(&t, nr);
	ck_assert_int_eq(kill(r.pid, SIGINT), 0);
	h_finish(&r);
	h_assert_ok(&r);
	ck_assert_int_ge(h_guard(r.json, "restored_at_detach"), 1);
	ck_assert_int_eq(h_guard(r.json, "detach_in_place"), 1);
	ck_assert_int_eq(h_guard(r.json, "detach_cut_short"), 0);
	ck_assert_int_eq(h_guard(r.json, "stops"), 0);
	ck_assert_int_eq(h_guard(r.json, "failed"), 0);
	ck_assert_msg(!strstr(r.err, "EINTR"), "%s", r.err);
	/* cabbpf is gone; the call goes on. */
	ck_assert_int_eq(waitpid(t.pid, &st, WNOHANG), 0);
	ck_assert(h_blocked_in(t.pid, nr, 10));
	if (sigwait) {
		ck_assert_int_eq(kill(t.pid, SIGUSR1), 0);
	} else {
		fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, "x", 1), 1);
		close(fd);
	}
	ck_assert_int_eq(waitpid(t.pid, &st, 0), t.pid);
	ck_assert_str_eq(h_describe(st, ex, sizeof(ex)), "exited with status 0");
	out = h_slurp(t.out_path);
	ck_assert_msg(strstr(out, sigwait ? "sigwaitinfo 10\n" : "epoll_wait 1\n"), "%s", out);
	free(out);
	unlink(fifo);
	h_free(&r);
}
END_TEST

/*
 * A C++ thread let go in place (blocked in sigwaitinfo inside serve,
 * entered during the trace; tests/targets/letgo.cc) that catches an
 * exception while cabbpf still holds the process, each flavour (g++,
 * clang++ at -O0, -O2). Its catch, with serve's frame above it, would have
 * the guard give that frame its return probe back: the guard's SIGSTOP,
 * with nobody left to see it, stopped the whole process once cabbpf was
 * gone. Asked nothing now, the thread catches all 200 throws and the
 * target exits 0, and nothing is counted unguarded. The test hook holds
 * cabbpf between the letting go and its end until the thread has caught
 * (or 10 s passed).
 */
START_TEST(let_go_in_place_then_catch)
{
	char *target[] = {(char *)h_cxx_target("letgo", _i), "200", NULL};
	char *opts[] = {"-q", "-f", "serve", "-f", "thrower", NULL};
	char go[PATH_MAX], ex[64];
	struct h_proc t;
	struct h_run r;
	int st, caught;

	snprintf(go, sizeof(go), "%s/letgo-%d.go", h_tmp, _i);
	unlink(go);
	setenv("CABBPF_TEST_LET_GO_PAUSE", go, 1);
	h_spawn(&t, target, NULL, "ready");
	h_start_pid(&r, t.pid, opts, H_TRACING);
	h_enter_blocking_call(&t, SYS_rt_sigtimedwait);
	ck_assert_int_eq(kill(r.pid, SIGINT), 0);
	ck_assert_msg(h_wait_run(&r, "paused until", 10000) > 0, "not let go in place: %s",
		      h_run_why(&r));
	ck_assert_int_eq(kill(t.pid, SIGUSR1), 0);
	caught = h_wait_for(t.out_path, "caught 200", 10000);
	h_write(go, "go");
	unsetenv("CABBPF_TEST_LET_GO_PAUSE");
	h_finish(&r);
	unlink(go);
	ck_assert_msg(caught, "the thread did not catch while cabbpf held the process");
	h_assert_ok(&r);
	ck_assert_int_eq(h_guard(r.json, "detach_in_place"), 1);
	ck_assert_int_eq(h_guard(r.json, "unguarded"), 0);
	ck_assert_int_eq(h_guard(r.json, "failed"), 0);
	ck_assert(h_wait_for(t.out_path, "done", 10000));
	ck_assert_int_eq(waitpid(t.pid, &st, 0), t.pid);
	ck_assert_str_eq(h_describe(st, ex, sizeof(ex)), "exited with status 0");
	h_free(&r);
}
END_TEST

/* A target that already has a tracer cannot be guarded: cabbpf says so,
 * traces entries only (exact counts), and the target is unharmed. */
START_TEST(already_traced_falls_back)
{
	char *target[] = {
		"/usr/bin/strace", "-f",	 "-o", "/dev/null", (char *)h_cxx_target("exc", 1),
		"mixed",	   "1000000000", NULL}; /* ended by the test, below */
	char ex[96];
	char *opts[] = {"-q", "-f", "catcher", "-f", "thrower_*", NULL};
	long long cpu, catcher, inner;
	struct h_proc s;
	struct h_run r;
	pid_t t = 0;
	int st, i;

	h_spawn(&s, target, NULL, NULL);
	/* strace's child: the traced program, once it runs exc (strace first
	 * forks short-lived children of its own to probe ptrace's features:
	 * make stress caught one, gone by the time cabbpf looked). */
	for (i = 0; i < 500 * H_PATIENCE && t <= 0; i++) {
		char link[64], exe[PATH_MAX];
		ssize_t n;

		usleep(10000);
		t = h_child_of(s.pid);
		snprintf(link, sizeof(link), "/proc/%d/exe", (int)t);
		n = t > 0 ? readlink(link, exe, sizeof(exe) - 1) : -1;
		if (n <= 0 || (exe[n] = 0, !strstr(exe, "exc-")))
			t = 0;
	}
	ck_assert_int_gt(t, 0);
	/* strace has seized it: cabbpf must find the tracer already there */
	ck_assert(h_wait_traced(t, 10000));
	h_start_pid(&r, t, opts, H_TRACING);
	/* Detached once the target has run traced for a while (200 ms of
	 * its CPU), however loaded the machine: a fixed -d 0.5 could pass
	 * with the target hardly scheduled. */
	cpu = h_cpu_ms(t);
	ck_assert(h_wait_cpu(t, cpu + 200));
	h_interrupt(&r);
	ck_assert_msg(r.status == 0, "cabbpf exit %d, stderr:\n%s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "cannot become the ptrace tracer"));
	ck_assert_ptr_nonnull(strstr(r.err, "tracing function entries only"));
	ck_assert_ptr_null(h_get(r.json, "guard"));
	ck_assert_int_eq(h_num(r.json, "lost"), 0);
	catcher = h_calls(r.json, "catcher");
	inner = h_calls(r.json, "thrower_inner");
	ck_assert_int_gt(inner, 0);
	/* Attached and detached mid-run, yet the trace holds the calls of
	 * one instant to another (the gate of bpf/trace.bpf.c opens once
	 * every probe is in, closes before the first one is taken out):
	 * every catcher() call of the one thread is followed by one
	 * thrower_inner() call, so only a call pair cut by either instant
	 * can tell the counts apart, by one. */
	ck_assert_msg(llabs(inner - catcher) <= 1, "catcher %lld, thrower_inner %lld", catcher,
		      inner);
	/* Unharmed: still running after cabbpf left (a throw through a
	 * probed frame would have ended it with SIGABRT) until the test ends
	 * it, however slow the machine. */
	ck_assert_msg(!h_is_zombie(t), "the target ended while traced");
	kill(t, SIGTERM);
	waitpid(s.pid, &st, 0);
	/* strace ends as its tracee did */
	ck_assert_str_eq(h_describe(st, ex, sizeof(ex)), "killed by signal 15 (Terminated)");
	h_free(&r);
}
END_TEST

/* Killed mid-trace by a signal that has nothing to do with cabbpf: the
 * signal goes through the guard to the target as sent, and the partial
 * trace still yields its report. */
START_TEST(killed_mid_trace_still_reports)
{
	/* -d: however this test ends, cabbpf ends the target in time */
	char *args[] = {"-q",	     "-d",	  "20",
			"-f",	     "catcher",	  "-f",
			"thrower_*", "--",	  (char *)h_cxx_target("exc", 1),
			"mixed",     "100000000", NULL};
	struct h_run r;
	pid_t t = 0;
	int i;

	ck_assert_int_eq(h_start(&r, args, 0, 0), 0);
	/* After "tracing": before it, cabbpf's child may be the one that
	 * measures the probes' cost (user/trace/calibrate.h). */
	h_run_until(&r, r.err_path, H_TRACING, 1, 10000);
	for (i = 0; i < 300 * H_PATIENCE && t <= 0 && !h_run_ended(&r); i++) {
		t = h_child_of(r.pid);
		if (t <= 0)
			usleep(10000);
	}
	ck_assert_msg(t > 0, "no target under cabbpf: %s", h_run_why(&r));
	/* The target has run (traced) for a while, however loaded the
	 * machine: catcher has been called. */
	ck_assert(h_wait_cpu(t, 300));
	kill(t, SIGSEGV);
	h_finish(&r);
	h_assert_ok(&r);
	ck_assert_str_eq(h_exit(r.json), "killed by signal 11 (Segmentation fault)");
	ck_assert_int_gt(h_calls(r.json, "catcher"), 0);
	ck_assert_int_eq(h_guard(r.json, "unguarded"), 0);
	h_free(&r);
}
END_TEST

/*
 * SIGKILL of cabbpf at a random instant while its guard holds a target
 * that throws, switches coroutines or is a Go program (issue 44 item 2):
 * the guard's tracer is a process of its own (user/trace/guardian.h) that
 * goes on serving the target's stops and lets go in cabbpf's place. The
 * target (an orphan this test reaps as subreaper) is never left stopped,
 * ends as untraced (exit 0) and writes what it writes untraced. The
 * throwing target used to die here of std::terminate in 3 to 5 runs of
 * 30 to 50 (a thread in a stop of ours when a tracer thread in cabbpf
 * died ran on unserved); bench/guard_kill.sh runs the same 50 times a
 * target.
 */
static const struct {
	const char *target; /* h_target name; NULL: the exc g++ -O2 target */
	const char *const args[4];
	const char *const funcs[4];
} kill_targets[] = {
	{NULL, {"basic", "600000"}, {"catcher", "thrower_*"}},
	{"coro", {"3000000"}, {"consume", "produce", "step"}},
	{"gohello", {"100000"}, {"main.mix", "main.leaf"}},
};

START_TEST(killed_while_guarding)
{
	/* _i % 3: the throwing target, coroutines, Go */
	size_t k = (size_t)_i % 3, n = 0, j;
	char go[PATH_MAX], *args[24], *argv[8], *out;
	const char *bin = h_cxx_target("exc", 1);
	struct h_plain p;
	struct h_run r;
	pid_t t = 0;
	long delay_ms, untraced_ms;
	struct timespec t0, t1;
	int st, i;

	snprintf(go, sizeof(go), "%s/gohello", h_targets);
	if (kill_targets[k].target)
		bin = strcmp(kill_targets[k].target, "gohello") ? h_target(kill_targets[k].target, 2)
								 : go;
	argv[0] = (char *)bin;
	for (j = 0; kill_targets[k].args[j]; j++)
		argv[j + 1] = (char *)kill_targets[k].args[j];
	argv[j + 1] = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	h_plain_run(&p, argv);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_msg(WIFEXITED(p.status) && !WEXITSTATUS(p.status), "%s untraced: %s", bin,
		      p.err);
	/* The kill falls while the target runs: within half its untraced
	 * time after the tracing line (traced, it runs longer; it is held
	 * before its exec until then). A kill after the end tests nothing,
	 * and cabbpf would have reaped the target (CI: gohello 100000 ran
	 * 0.74 s traced, the kill came later). */
	untraced_ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	srand((unsigned)getpid() * 31u + (unsigned)time(NULL) + (unsigned)_i);
	delay_ms = rand() % (untraced_ms / 2 < 1200 ? untraced_ms / 2 + 1 : 1200);
	for (j = 0; kill_targets[k].funcs[j]; j++) {
		args[n++] = "-f";
		args[n++] = (char *)kill_targets[k].funcs[j];
	}
	args[n++] = "--";
	for (j = 0; argv[j]; j++)
		args[n++] = argv[j];
	args[n] = NULL;
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	ck_assert_int_eq(h_start(&r, args, 0, 0), 0);
	h_run_until(&r, r.err_path, H_TRACING, 1, 10000);
	for (i = 0; i < 300 * H_PATIENCE && t <= 0 && !h_run_ended(&r); i++) {
		t = h_child_of(r.pid);
		if (t <= 0)
			usleep(10000);
	}
	ck_assert_msg(t > 0, "no target under cabbpf: %s", h_run_why(&r));
	usleep((useconds_t)delay_ms * 1000);
	ck_assert_msg(!h_run_ended(&r), "%s ended %ld ms into tracing, before the kill (untraced: "
		      "%ld ms): %s", bin, delay_ms, untraced_ms, h_slurp(r.err_path));
	kill(r.pid, SIGKILL);
	h_finish(&r);
	st = h_reap_unless_left_stopped(t);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	out = h_slurp(r.out_path);
	ck_assert_msg(WIFEXITED(st) && !WEXITSTATUS(st),
		      "%s, cabbpf killed %ld ms into tracing: %s\n%s", bin, delay_ms,
		      h_describe(st, (char[64]){0}, 64), h_slurp(r.err_path));
	ck_assert_msg(!strcmp(out, p.out), "%s, cabbpf killed %ld ms into tracing, wrote:\n%s\n"
		      "untraced:\n%s", bin, delay_ms, out, p.out);
	free(out);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/*
 * The guardian's rescue, deterministic: a throwing target runs traced
 * from its first call (EXC_WAIT) until it stops itself (EXC_PAUSE_AT, a
 * SIGSTOP of its own: a group stop, not ours) in thrower_inner of an
 * iteration that throws, with catcher, outer, mid and inner pending, their
 * return addresses the kernel's trampoline; cabbpf is killed then. The
 * guardian must write every return address back and leave the stop to
 * the target's user. Continued, the target throws through those frames
 * and ends as untraced. _i: exc built with g++ -O2, clang++ -O0.
 */
START_TEST(killed_while_target_stopped)
{
	char *target[] = {(char *)h_cxx_target("exc", _i ? 2 : 1), "mixed", "300000", NULL};
	char *opts[] = {"-q", "-f", "catcher", "-f", "thrower_*", NULL};
	char glog[PATH_MAX], *log = NULL, ex[96];
	struct h_plain p;
	struct h_proc t;
	struct h_run r;
	int st, i, rescued = 0;

	snprintf(glog, sizeof(glog), "%s/guardian-%d.log", h_tmp, _i);
	unlink(glog);
	h_plain_run(&p, target);
	ck_assert_int_eq(setenv("EXC_WAIT", "1", 1), 0);
	h_spawn(&t, target, "EXC_PAUSE_AT=30000", "ready");
	unsetenv("EXC_WAIT");
	ck_assert_int_eq(setenv("CABBPF_GUARDIAN_LOG", glog, 1), 0);
	h_start_pid(&r, t.pid, opts, H_TRACING);
	unsetenv("CABBPF_GUARDIAN_LOG");
	kill(t.pid, SIGUSR1);
	/* its own stop, reported to this parent too (cabbpf is its tracer) */
	ck_assert_int_eq(waitpid(t.pid, &st, WUNTRACED), t.pid);
	ck_assert_msg(WIFSTOPPED(st), "exc did not stop itself: %s", h_describe(st, ex, 48));
	kill(r.pid, SIGKILL);
	h_finish(&r);
	/* the rescue's line, written once it let go */
	for (i = 0; i < 1000 * H_PATIENCE && !rescued; i++) {
		free(log);
		log = h_slurp(glog);
		rescued = strstr(log, "rescue done") != NULL;
		if (!rescued)
			usleep(10000);
	}
	kill(t.pid, SIGCONT);
	waitpid(t.pid, &st, 0);
	h_assert_ready_same(&t, st, &p);
	ck_assert_msg(rescued, "no rescue by the guardian: '%s'", log);
	free(log);
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/*
 * Non-local exits, then a call from the frame that lives (issue 44): the
 * shapes of tests/targets/nonlocal.c (longjmp, a context switch) and
 * rethrow.cc (rethrows), each traced with its functions selected and
 * compared with the program untraced, with its edges EXACT (no edge the
 * program did not make) and every frame left without a return closed for
 * the reason it was: unwound (a throw, a rethrow, a longjmp) or switched.
 * Their 30 iterations make each count distinct.
 */
#define SHAPE_N 30
struct shape_edge {
	const char *caller, *callee;
	long long calls;
};
struct shape {
	const char *mode;
	const char *const funcs[7];
	struct shape_edge edges[7]; /* besides <root> -> main: 1 */
	long long unwound, switched;
};

static const struct shape c_shapes[] = {
	{"longjmp", {"main", "foo", "bar"}, {{"main", "foo", 30}, {"main", "bar", 30}}, 30, 0},
	{"nested",
	 {"main", "lvl1", "lvl2", "jumper", "after1", "after0"},
	 {{"main", "lvl1", 30},
	  {"lvl1", "lvl2", 30},
	  {"lvl2", "jumper", 30},
	  {"lvl1", "after1", 15},
	  {"main", "after0", 15}},
	 75,
	 0},
	{"samesite", {"main", "hop", "bar"}, {{"main", "hop", 30}, {"main", "bar", 30}}, 30, 0},
	{"tailjump",
	 {"main", "lander", "jumper2", "tailee"},
	 {{"main", "lander", 30}, {"lander", "jumper2", 30}, {"lander", "tailee", 30}},
	 30,
	 0},
	{"switch",
	 {"main", "foo_switch", "co_body", "bar", "baz"},
	 {{"main", "foo_switch", 30},
	  {"main", "baz", 30},
	  {"<root>", "co_body", 1},
	  {"co_body", "bar", 30}},
	 0,
	 30},
};

static const struct shape cxx_shapes[] = {
	{"once",
	 {"main", "top", "mid", "leaf", "after"},
	 {{"main", "top", 30}, {"top", "mid", 30}, {"mid", "leaf", 30}, {"main", "after", 5}},
	 25,
	 0},
	{"three",
	 {"main", "foo", "foo1", "foo2", "foo3", "make"},
	 {{"main", "foo", 30},
	  {"foo", "foo1", 30},
	  {"foo1", "foo2", 30},
	  {"foo2", "foo3", 30},
	  {"foo", "make", 30}},
	 90,
	 0},
	{"ptr",
	 {"main", "keep", "leaf", "again", "after"},
	 {{"main", "keep", 30}, {"keep", "leaf", 30}, {"main", "again", 30}, {"main", "after", 30}},
	 60,
	 0},
	{"inner",
	 {"main", "top2", "mid", "leaf", "translate", "after"},
	 {{"main", "top2", 30},
	  {"top2", "mid", 30},
	  {"mid", "leaf", 30},
	  {"top2", "translate", 30},
	  {"main", "after", 30}},
	 120,
	 0},
};

/* Trace shape sh of bin (with extra, one option or NULL) and check it. */
static void shape_check(const char *bin, const struct shape *sh, const char *extra)
{
	char n[16], *opts[20], *target[] = {(char *)bin, (char *)sh->mode, n, NULL};
	struct h_plain p;
	struct h_run r;
	size_t i, no = 0, ne = 1;

	snprintf(n, sizeof(n), "%d", SHAPE_N);
	for (i = 0; i < 7 && sh->funcs[i]; i++) {
		opts[no++] = "-f";
		opts[no++] = (char *)sh->funcs[i];
	}
	if (extra)
		opts[no++] = (char *)extra;
	opts[no] = NULL;
	traced_same(&p, &r, opts, target);
	ck_assert_msg(h_edge(r.json, "<root>", "main") == 1, "%s %s: <root> -> main", bin,
		      sh->mode);
	for (i = 0; i < 7 && sh->edges[i].caller; i++, ne++)
		ck_assert_msg(h_edge(r.json, sh->edges[i].caller, sh->edges[i].callee) ==
				      sh->edges[i].calls,
			      "%s %s%s: %s -> %s: %lld calls, not %lld", bin, sh->mode,
			      extra ? " --no-guard" : "", sh->edges[i].caller, sh->edges[i].callee,
			      h_edge(r.json, sh->edges[i].caller, sh->edges[i].callee),
			      sh->edges[i].calls);
	ck_assert_msg(h_nedges(r.json) == (long long)ne, "%s %s: %lld edges, not %zu", bin,
		      sh->mode, h_nedges(r.json), ne);
	ck_assert_int_eq(h_returns(r.json, "orphan"), 0);
	ck_assert_int_eq(h_returns(r.json, "switched"), sh->switched);
	if (extra) {
		/* no guard, no JUMP events: the same frames, found dead by the
		 * slot word alone, are counted missing */
		ck_assert_int_eq(h_returns(r.json, "missing"), sh->unwound);
	} else {
		ck_assert_int_eq(h_returns(r.json, "unwound"), sh->unwound);
		ck_assert_int_eq(h_returns(r.json, "missing"), 0);
	}
	h_plain_free(&p);
	h_free(&r);
}

/* i: shape i / 2 of nonlocal.c, at -O0 (even) or -O2 (odd) */
START_TEST(nonlocal_c)
{
	const struct shape *sh = &c_shapes[_i / 2];

	shape_check(h_target("nonlocal", _i % 2 ? 2 : 0), sh, NULL);
}
END_TEST

/* Without a guard the C shapes but the context switch, which needs it,
 * get the same edges from the return-address slots alone. */
START_TEST(nonlocal_c_no_guard)
{
	const struct shape *sh = &c_shapes[_i / 2];

	shape_check(h_target("nonlocal", _i % 2 ? 2 : 0), sh, "--no-guard");
}
END_TEST

/* On a kernel whose BTF does not say where the trampoline is (no slot
 * word), the guard's JUMP and THROW events alone still give the C shapes
 * but the context switch their exact edges. */
START_TEST(nonlocal_c_without_slot_reads)
{
	const struct shape *sh = &c_shapes[_i / 2];

	setenv("CABBPF_TEST_KERNEL_LACKS", "xol_area", 1);
	shape_check(h_target("nonlocal", _i % 2 ? 2 : 0), sh, NULL);
	unsetenv("CABBPF_TEST_KERNEL_LACKS");
}
END_TEST

/* i: shape i / 4 of rethrow.cc, flavour i % 4 (h_cxx_target) */
START_TEST(nonlocal_cxx)
{
	const struct shape *sh = &cxx_shapes[_i / 4];

	shape_check(h_cxx_target("rethrow", _i % 4), sh, NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("guard-integration");
	TCase *exc = tcase_create("exceptions"), *other = tcase_create("other");
	/* The kernel matrix's cases (tests/vm: make vmtest runs them on each
	 * kernel), also run here with the rest. */
	TCase *matrix = tcase_create("matrix");
	TCase *nonlocal = tcase_create("nonlocal");
	/* cabbpf killed: at random instants, coroutines twice and Go once;
	 * a throwing target stopped by its user, g++ and clang++ */
	TCase *killed = tcase_create("killed");

	if (h_integration_setup("guard-integration", NULL))
		return 1;
	tcase_set_timeout(exc, 180);
	tcase_set_timeout(other, 120);
	/* 4 flavours: g++ -O0, g++ -O2, clang++ -O0, clang++ -O2 */
	tcase_add_loop_test(exc, exc_rethrow, 0, 4);
	tcase_add_loop_test(exc, exc_nested, 0, 4);
	tcase_add_loop_test(exc, exc_dtor, 0, 4);
	tcase_add_loop_test(exc, exc_threads, 0, 4);
	tcase_add_loop_test(exc, exc_cancel, 0, 4);
	tcase_add_loop_test(exc, exc_deep, 0, 4);
	tcase_add_loop_test(exc, exc_mixed, 0, 4);
	tcase_add_loop_test(exc, exc_untraced_catch, 0, 4);
	tcase_add_loop_test(exc, exc_runtime_traced, 0, 4);
	tcase_add_loop_test(exc, exc_dtor_callers, 0, 4);
	tcase_add_test(exc, exc_no_guard_kills);
	tcase_add_loop_test(other, fiber_own_switch, 0, 2);
	tcase_add_loop_test(other, fiber_under_foreign_uprobes, 0, 2);
	tcase_add_loop_test(other, fiber_switch_in_library, 0, 2);
	tcase_add_loop_test(other, own_setjmp_never_return_probed, 0, 2);
	tcase_add_loop_test(other, altstack_handler_unharmed, 0, 6);
	tcase_add_loop_test(other, fork_children_unharmed, 0, 4);
	tcase_add_loop_test(other, clone_vm_child_keeps_probes, 0, 2);
	tcase_add_loop_test(other, rust_catch_unwind, 0, 2);
	tcase_add_loop_test(other, attach_detach_while_throwing, 0, 4);
	tcase_add_test(other, already_traced_falls_back);
	tcase_add_loop_test(other, detach_leaves_sigwaitinfo_waiting, 0, 2);
	tcase_add_loop_test(other, let_go_in_place_of_blocked_call, 0, 4);
	tcase_add_loop_test(other, let_go_in_place_then_catch, 0, 4);
	tcase_add_loop_test(other, replaced_libraries_still_guarded, 0, 4);
	tcase_add_test(other, killed_mid_trace_still_reports);
	tcase_set_timeout(matrix, 180);
	tcase_add_loop_test(matrix, exc_basic, 0, 4);
	tcase_add_loop_test(matrix, coro_switches, 0, 2);
	tcase_set_timeout(nonlocal, 180);
	tcase_add_loop_test(nonlocal, nonlocal_c, 0, 2 * sizeof(c_shapes) / sizeof(c_shapes[0]));
	/* all but the last C shape, the context switch */
	tcase_add_loop_test(nonlocal, nonlocal_c_no_guard, 0,
			    2 * (sizeof(c_shapes) / sizeof(c_shapes[0]) - 1));
	tcase_add_loop_test(nonlocal, nonlocal_c_without_slot_reads, 0,
			    2 * (sizeof(c_shapes) / sizeof(c_shapes[0]) - 1));
	tcase_add_loop_test(nonlocal, nonlocal_cxx, 0,
			    4 * sizeof(cxx_shapes) / sizeof(cxx_shapes[0]));
	suite_add_tcase(s, matrix);
	suite_add_tcase(s, nonlocal);
	suite_add_tcase(s, exc);
	suite_add_tcase(s, other);
	tcase_set_timeout(killed, 180);
	tcase_add_loop_test(killed, killed_while_guarding, 0, 6);
	tcase_add_loop_test(killed, killed_while_target_stopped, 0, 2);
	suite_add_tcase(s, killed);
	return h_run_suite(s);
}
