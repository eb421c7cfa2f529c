// SPDX-License-Identifier: BSD-2-Clause
/*
 * Integration suite of probe placement, refused sites and attach at scale:
 * the real kernel, real BPF programs, real processes (needs root).
 *
 * Every placement rule is checked by exact counts. The targets of
 * tests/targets/ are built in four flavours (gcc, gcc -fcf-protection,
 * clang, clang -fcf-protection) at -O0 and -O2; with -fcf-protection every
 * function starts with endbr64 (single-stepped) and the plan moves nearly
 * every probe past it. Each run asserts the exact counts and edges of
 * tests/expected/targets.txt;
 * and each traced run is compared with --no-shift (every probe on the
 * first instruction): counts, edges and return matching must be identical.
 */
#include <check.h>
#include <sys/types.h>

#include "tests/harness.h"
#include "user/probe/plan.h"
#include "user/elf/syms.h"
#include "user/trace/trace.h"

static const char *const flavours[4][3] = {
	/* dir suffix, TARGET_CC, TARGET_CFLAGS */
	{"gcc", "gcc", "-fcf-protection=none"},
	{"gcc-cf", "gcc", "-fcf-protection"},
	{"clang", "clang", "-fcf-protection=none"},
	{"clang-cf", "clang", "-fcf-protection"},
};

/* Path of target name in flavour flav; one static buffer per name. */
static const char *ftarget(int flav, const char *name, int opt)
{
	static char buf[8][PATH_MAX];
	static const char *names[8];
	int k;

	for (k = 0; k < 8 && names[k] && strcmp(names[k], name); k++)
		;
	if (k == 8)
		k = 0;
	names[k] = name;
	snprintf(buf[k], PATH_MAX, ".output/targets-%s/%s-O%d", flavours[flav][0], name, opt);
	return buf[k];
}

static int build_flavours(void)
{
	char cmd[1024];
	int f;

	for (f = 0; f < 4; f++) {
		snprintf(cmd, sizeof(cmd),
			 "TARGET_CC=%s TARGET_CFLAGS=%s tests/targets/build.sh .output/targets-%s "
			 ">/dev/null 2>&1",
			 flavours[f][1], flavours[f][2], flavours[f][0]);
		if (system(cmd))
			return -1;
	}
	return 0;
}

/* Moved probes in the plan cabbpf prints for bin, or -1. */
static long plan_moved(const char *bin)
{
	char *args[] = {"--plan", "--", (char *)bin, NULL};
	struct h_run r;
	const char *m;
	long moved = -1;

	h_start(&r, args, 1, 0);
	h_finish(&r);
	ck_assert_msg(r.status == 0, "--plan exit %d: %s", r.status, r.err);
	m = strstr(r.out, "moved past the entry");
	if (m)
		sscanf(strchr(m, ':') + 1, "%ld", &moved);
	h_free(&r);
	return moved;
}

/* Rings of 64 MiB per CPU (1,048,576 events): the largest target here,
 * demo, makes ~303,000 events, which they hold however late cabbpf
 * drains (tests/harness.h, h_assert_no_loss). */
#define RING "--ring-size", "64"

/* Runs cabbpf on argv (target and its arguments) with and without
 * --no-shift, asserts a clean run, and that both agree on every count. */
static void run_both(struct h_run *r, char *const *target)
{
	char *none[] = {RING, NULL}, *noshift[] = {RING, "--no-shift", NULL};
	char *a1[16], *a2[16];
	struct h_run r0;

	h_join_args(a1, 16, none, target);
	h_join_args(a2, 16, noshift, target);
	h_run(r, a1);
	h_assert_clean(r);
	h_run(&r0, a2);
	h_assert_ok(&r0);
	h_assert_same_counts(r->json, r0.json, target[0]);
	h_assert_same_edges(r->json, r0.json);
	ck_assert_int_eq(h_returns(r->json, "matched"), h_returns(r0.json, "matched"));
	ck_assert_int_eq(h_returns(r->json, "missing"), h_returns(r0.json, "missing"));
	ck_assert_int_eq(h_returns(r->json, "orphan"), 0);
	h_free(&r0);
}

/* _i: flavour (bits 1-2), -O0/-O2 (bit 0). README's exact figures. */
START_TEST(exact_counts_every_flavour)
{
	int flav = _i >> 1, opt = (_i & 1) ? 2 : 0;
	char *rec[] = {(char *)ftarget(flav, "recurse", opt), "20", NULL};
	char *thr[] = {(char *)ftarget(flav, "threads", opt), "4", "1000", NULL};
	char *jmp[] = {(char *)ftarget(flav, "jump", opt), "100", NULL};
	char *dem[] = {(char *)ftarget(flav, "demo", opt), NULL};
	char *dp[] = {(char *)ftarget(flav, "deep", opt), "200", NULL};
	struct h_run r;
	long moved;

	moved = plan_moved(dem[0]);
	if (flav & 1) /* endbr64 everywhere: most probes move */
		ck_assert_int_ge(moved, 5);

	run_both(&r, rec);
	H_CHECK(r.json, "recurse 20", "calls fib", "edge fib -> fib", "edge main -> fib");
	ck_assert_int_eq(h_returns(r.json, "matched"), h_expected("recurse 20", "entries"));
	h_free(&r);

	run_both(&r, thr);
	H_CHECK(r.json, "threads 4 1000", "calls work", "calls worker", "edge worker -> work");
	h_free(&r);

	run_both(&r, jmp);
	H_CHECK(r.json, "jump 100", "calls outer", "calls inner", "edge middle -> inner",
		"edge main -> normal", "returns.missing");
	h_free(&r);

	run_both(&r, dem);
	H_CHECK(r.json, "demo", "calls next_random", "calls parse_token", "calls lookup",
		"calls insert", "edge count_words -> lookup", "edge merge_tables -> lookup");
	ck_assert_int_eq(h_num(r.json, "events"), 2 * h_expected("demo", "entries"));
	h_free(&r);

	run_both(&r, dp);
	H_CHECK(r.json, "deep 200", "calls down", "edge down -> down", "edge main -> after");
	h_free(&r);
}
END_TEST

/* Functions the plan counted at call sites, from the plan line on stderr
 * ("... N counted at M call sites ..."); -1 when absent. */
static long callsite_fns(const char *err)
{
	const char *m = strstr(err, " counted at ");
	long n = -1;

	while (m && m > err && m[-1] != ' ' && m[-1] != ',')
		m--;
	if (m)
		sscanf(m, "%ld", &n);
	return n;
}

/* Runs cabbpf --entry-only on target with and without --no-callsites,
 * asserts a clean run and identical counts of every function; returns how
 * many functions the plan counted at call sites. */
static long run_eo(struct h_run *r, char *const *target)
{
	char *eo[] = {RING, "--entry-only", NULL};
	char *eo0[] = {RING, "--entry-only", "--no-callsites", NULL};
	char *a1[16], *a2[16];
	struct h_run r0;
	long ncs;

	h_join_args(a1, 16, eo, target);
	h_join_args(a2, 16, eo0, target);
	h_run(r, a1);
	h_assert_ok(r);
	ck_assert_int_eq(h_num(r->json, "lost"), 0);
	ck_assert_int_eq(h_returns(r->json, "matched"), 0);
	ck_assert_ptr_null(h_get(r->json, "callgraph"));
	ncs = callsite_fns(r->err);
	ck_assert_msg(ncs >= 0, "no plan line: %s", r->err);
	h_run(&r0, a2);
	h_assert_ok(&r0);
	ck_assert_int_eq(callsite_fns(r0.err), 0);
	ck_assert_int_eq(h_num(r->json, "events"), h_num(r0.json, "events"));
	h_assert_same_counts(r->json, r0.json, target[0]);
	h_free(&r0);
	return ncs;
}

/* --entry-only (no return probes; probes may move past push / sub rsp
 * with the sp corrected in BPF, and functions whose address never escapes
 * are counted at their call instructions): exact counts in every flavour,
 * identical to --no-callsites (every probe at or near the entry). */
START_TEST(entry_only_exact_counts)
{
	int flav = _i >> 1, opt = (_i & 1) ? 2 : 0;
	char *rec[] = {(char *)ftarget(flav, "recurse", opt), "20", NULL};
	char *dp[] = {(char *)ftarget(flav, "deep", opt), "200", NULL};
	char *jmp[] = {(char *)ftarget(flav, "jump", opt), "100", NULL};
	char *demo[] = {(char *)ftarget(flav, "demo", opt), NULL};
	char *thr[] = {(char *)ftarget(flav, "threads", opt), "4", "1000", NULL};
	struct h_run r;
	long ncs = 0;

	ncs += run_eo(&r, rec);
	H_CHECK(r.json, "recurse 20", "calls fib", "calls main");
	/* entries only */
	ck_assert_int_eq(h_num(r.json, "events"), h_expected("recurse 20", "entries"));
	h_free(&r);

	ncs += run_eo(&r, dp);
	H_CHECK(r.json, "deep 200", "calls down", "calls leaf", "calls after");
	h_free(&r);

	ncs += run_eo(&r, jmp);
	H_CHECK(r.json, "jump 100", "calls outer", "calls inner");
	h_free(&r);

	ncs += run_eo(&r, thr);
	H_CHECK(r.json, "threads 4 1000", "calls work", "calls worker");
	h_free(&r);

	ncs += run_eo(&r, demo);
	H_CHECK(r.json, "demo", "calls next_random", "calls parse_token", "calls lookup",
		"calls insert");
	ck_assert_int_eq(h_num(r.json, "events"), h_expected("demo", "entries"));
	/* gcc -O2 leaves next_random and pick_word single-stepped at the
	 * entry and reached only by direct calls. */
	if (flav == 0 && opt == 2)
		ck_assert_int_ge(callsite_fns(r.err), 2);
	h_free(&r);
	/* At -O2 the rule is exercised in every flavour (7-8 functions); at
	 * -O0 every entry is a push or endbr64; push (emulated or moved). */
	if (opt == 2)
		ck_assert_int_ge(ncs, 5);
}
END_TEST

/* The fallback for kernels without multi-uprobe links (< 6.6): one perf
 * link per site, after the programs are reloaded (new maps, new ring
 * mapping). CABBPF_TEST_NO_MULTI=1 makes cabbpf take that path here. Exact
 * counts with returns, and with --entry-only (call sites included). */
START_TEST(per_site_link_fallback)
{
	char *full[] = {RING, "--", (char *)ftarget(0, "demo", 2), NULL};
	char *eo[] = {RING, "--entry-only", "--", (char *)ftarget(0, "demo", 2), NULL};
	struct h_run r;

	ck_assert_int_eq(setenv("CABBPF_TEST_NO_MULTI", "1", 1), 0);
	h_run(&r, full);
	h_assert_ok(&r);
	ck_assert_msg(strstr(r.err, "one link per site"), "%s", r.err);
	ck_assert_int_eq(h_num(r.json, "lost"), 0);
	ck_assert_int_eq(h_num(r.json, "events"), 2 * h_expected("demo", "entries"));
	H_CHECK(r.json, "demo", "calls lookup", "edge count_words -> lookup");
	ck_assert_int_eq(h_returns(r.json, "matched"), h_expected("demo", "entries"));
	h_free(&r);
	h_run(&r, eo);
	unsetenv("CABBPF_TEST_NO_MULTI");
	h_assert_ok(&r);
	ck_assert_msg(strstr(r.err, "one link per site"), "%s", r.err);
	ck_assert_int_ge(callsite_fns(r.err), 2);
	ck_assert_int_eq(h_num(r.json, "events"), h_expected("demo", "entries"));
	H_CHECK(r.json, "demo", "calls next_random", "calls pick_word");
	h_free(&r);
}
END_TEST

/* Per-site links are removed by the kernel one at a time (~0.1 s each):
 * once the target has ended, nothing can hit them (they are bound to its
 * pid), so a process of their own removes them and cabbpf returns at once,
 * its report whole, its output pipes closed (the harness reads them to
 * their end). The test switch takes multi-uprobe links away here; the
 * matrix's 6.1 has none. */
START_TEST(per_site_links_released_in_background)
{
	char *args[] = {RING, "-f", "libc:str*", "-f", "lookup", "-f", "count_words", "--",
			(char *)ftarget(0, "demo", 2), NULL};
	const char *d;
	double det = -1;
	struct h_run r;

	setenv("CABBPF_TEST_KERNEL_LACKS", "uprobe_multi", 1);
	h_run(&r, args);
	unsetenv("CABBPF_TEST_KERNEL_LACKS");
	h_assert_ok(&r);
	ck_assert_msg(strstr(r.err, " probe links handed to a process that removes them one by "
				    "one"),
		      "%s", r.err);
	d = strstr(r.err, "detached in ");
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(sscanf(d, "detached in %lf s", &det), 1);
	/* closing descriptors whose kernel objects another process holds */
	ck_assert_msg(det < 1.0, "detached in %.3f s", det);
	H_CHECK(r.json, "demo", "calls lookup", "calls count_words", "edge count_words -> lookup");
	ck_assert_int_eq(h_num(r.json, "lost"), 0);
	h_free(&r);
}
END_TEST

/* --entry-only and the call graph exclude each other. */
START_TEST(entry_only_refuses_callgraph)
{
	char *args[] = {"--entry-only",
			"-a",
			"callgraph",
			"--",
			(char *)ftarget(0, "recurse", 0),
			"5",
			NULL};
	struct h_run r;

	h_start(&r, args, 1, 0);
	h_finish(&r);
	ck_assert_int_ne(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.err, "callgraph"));
	h_free(&r);
}
END_TEST

static char asm_bin[PATH_MAX];

/* A program with a function the kernel refuses (lock prefix at its entry)
 * next to normal ones. */
static void build_refused_target(void)
{
	char src[PATH_MAX];

	snprintf(src, sizeof(src), "%s/refused.c", h_tmp);
	snprintf(asm_bin, sizeof(asm_bin), "%s/refused", h_tmp);
	h_write(src, "#include <signal.h>\n#include <stdlib.h>\n"
		     "int counter;\n"
		     "void locked(int *p);\n"
		     "__asm__(\".text\\n.globl locked\\n.type locked,@function\\nlocked:\\n"
		     "lock incl (%rdi)\\nret\\n.size locked,.-locked\\n\");\n"
		     "__attribute__((noinline)) void normal(int *p) { __asm__ volatile(\"\");"
		     " *p += 1; }\n"
		     "int main(int argc, char **argv) {\n"
		     "  int n = argc > 1 ? atoi(argv[1]) : 10;\n"
		     "  if (argc > 2) raise(SIGSTOP); /* mapped, not yet running */\n"
		     "  for (int i = 0; i < n; i++) { locked(&counter); normal(&counter);\n"
		     "    __asm__ volatile(\"\"); }\n"
		     "  return counter == 2 * n ? 0 : 1; }\n");
	h_shell("gcc -O2 -g -o '%s' '%s'", asm_bin, src);
}

/* The plan skips the refused site and the run goes on: exact counts for
 * the rest, the skip reported. */
START_TEST(refused_site_is_skipped_not_fatal)
{
	char *args[] = {"--", asm_bin, "1000", NULL};
	char *plan[] = {"--plan", "--", asm_bin, NULL};
	struct h_run r;

	build_refused_target();
	h_start(&r, plan, 1, 0);
	h_finish(&r);
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "skipped: 1 refused"), "%s", r.out);
	h_free(&r);
	h_run(&r, args);
	h_assert_ok(&r);
	ck_assert_msg(strstr(r.err, "1 refused"), "%s", r.err);
	ck_assert_int_eq(h_calls(r.json, "normal"), 1000);
	ck_assert_int_eq(h_calls(r.json, "main"), 1);
	ck_assert_int_eq(h_calls(r.json, "locked"), 0);
	ck_assert_int_eq(h_edge(r.json, "main", "normal"), 1000);
	h_free(&r);
}
END_TEST

/* The plan (cabbpf --plan) of bin, malloc'd. */
static char *plan_text(const char *bin)
{
	char *args[] = {"--plan", "--", (char *)bin, NULL};
	struct h_run r;
	char *out;

	h_start(&r, args, 1, 0);
	h_finish(&r);
	ck_assert_msg(r.status == 0, "--plan exit %d: %s", r.status, r.err);
	out = strdup(r.out);
	h_free(&r);
	return out;
}

/* Another tool's uprobes, with no pid filter, at every function of the
 * program (h_foreign_uprobe) change nothing in its plan: the kernel
 * writes their int3 into every private mapping of the file, and the plan
 * read the code through one (user/elf/image.c maps it shared now). It
 * found int3 at each entry and refused it: found with two cabbpf in
 * --cgroup mode on one executable ("5 refused by the kernel"). _i:
 * flavour (bits 1-2), -O0/-O2 (bit 0). */
START_TEST(plan_ignores_foreign_uprobes)
{
	const char *bin = ftarget(_i >> 1, "demo", (_i & 1) ? 2 : 0);
	char *before, *after;
	int fds[64];
	size_t n;

	before = plan_text(bin);
	ck_assert_msg(strstr(before, "refused             0"), "%s", before);
	n = h_foreign_uprobes(bin, fds, 64);
	ck_assert_uint_gt(n, 5);
	after = plan_text(bin);
	while (n)
		close(fds[--n]);
	ck_assert_msg(!strcmp(before, after), "without other probes:\n%s\nwith them:\n%s", before,
		      after);
	free(before);
	free(after);
}
END_TEST

/* Calls and returns only: the scheduler's switch events (off-CPU
 * intervals, CABBPF_EV_SCHED) come whenever the target is switched out,
 * which under load it is (make stress saw 11 events for 10 calls). */
static int count_ev(void *ctx, unsigned cpu, const struct cabbpf_event *e)
{
	(void)cpu;
	if (e->kind == CABBPF_EV_ENTRY || e->kind == CABBPF_EV_RETURN)
		(*(long *)ctx)++;
	return 0;
}

/* Bypassing the plan, a site the kernel refuses inside a multi link: the
 * link is split until the bad site is isolated, the rest attached. */
START_TEST(kernel_refusal_splits_the_multi_link)
{
	struct symtab *st = NULL;
	struct trace_opts to;
	struct trace *t = NULL;
	uint64_t offs[3];
	long events = 0;
	pid_t pid;
	int status;

	build_refused_target();
	ck_assert_int_eq(syms__load(asm_bin, &st), 0);
	offs[0] = syms__find(st, "main")->offset;
	offs[1] = syms__find(st, "locked")->offset;
	offs[2] = syms__find(st, "normal")->offset;
	/* The target stops itself after exec: the kernel checks a site's
	 * instruction only where the file is mapped (a refused site in a
	 * file mapped later is silently not installed). */
	pid = fork();
	if (pid == 0) {
		execl(asm_bin, asm_bin, "5", "stop", (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, WUNTRACED), pid);
	memset(&to, 0, sizeof(to));
	to.pid = pid;
	to.binary = asm_bin;
	to.offsets = offs;
	to.nfuncs = 3;
	to.ring_bytes = 1 << 20;
	to.on_event = count_ev;
	to.ctx = &events;
	ck_assert_int_eq(trace__open(&to, &t), 0);
	ck_assert_int_eq(trace__attach(t), 0);
	ck_assert(trace__multi(t));
	ck_assert_uint_eq(trace__refused(t), 1);
	kill(pid, SIGCONT);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	while (trace__drain(t, 0) > 0)
		;
	/* normal: 5 x (entry + return); main was entered before the attach,
	 * so its return is not seen (a uretprobe is armed at the entry). */
	ck_assert_int_eq(events, 10);
	trace__free(t);
	syms__free(st);
}
END_TEST

/* Built for the kernel's cheapest path: a 5-byte nop at every entry. */
START_TEST(nop5_entries_hit_the_optimized_path)
{
	char bin[PATH_MAX];
	char *args[] = {"--", bin, "20", NULL};
	char *plan[] = {"--plan", "--", bin, NULL};
	struct h_run r;

	snprintf(bin, sizeof(bin), "%s/recurse-nop5%d", h_tmp, _i);
	/* -pg only when compiling: linked with -pg the program would write
	 * gmon.out; with -mnop-mcount no code refers to mcount anyway. */
	h_shell("gcc -O2 -g -pg -mfentry -mnop-mcount -fno-pie %s -c -o '%s.o' "
		"tests/targets/recurse.c && gcc -no-pie -o '%s' '%s.o'",
		_i ? "-fcf-protection" : "-fcf-protection=none", bin, bin, bin);
	h_start(&r, plan, 1, 0);
	h_finish(&r);
	ck_assert_int_eq(r.status, 0);
	/* fib and main: on the nop5 (past endbr64 with -fcf-protection). */
	ck_assert_msg(strstr(r.out, "  nop5     "), "%s", r.out);
	ck_assert_msg(strstr(r.out, _i ? "nop5                0        2"
				       : "nop5                2        2"),
		      "%s", r.out);
	h_free(&r);
	h_run(&r, args);
	h_assert_ok(&r);
	H_CHECK(r.json, "recurse 20", "calls fib", "edge fib -> fib");
	ck_assert_int_eq(h_returns(r.json, "matched"), h_expected("recurse 20", "entries"));
	h_free(&r);
}
END_TEST

static char lib_dir[300];

/* libcabtest.so (lib_work calls lib_inner), a program linked with it and
 * one that dlopens it; both wait for SIGUSR1 when asked, then make N
 * calls of lib_work and print "done". */
static void build_lib_targets(void)
{
	char path[PATH_MAX];

	snprintf(lib_dir, sizeof(lib_dir), "%s/lib", h_tmp);
	mkdir(lib_dir, 0755);
	snprintf(path, sizeof(path), "%s/cabtest.c", lib_dir);
	h_write(path, "volatile long sink;\n"
		      "__attribute__((noinline)) long lib_inner(long x) { __asm__ volatile(\"\");"
		      " return x * 3; }\n"
		      "void lib_work(long x) { sink += lib_inner(x); __asm__ volatile(\"\"); }\n");
	snprintf(path, sizeof(path), "%s/user.c", lib_dir);
	h_write(path, "#include <dlfcn.h>\n#include <signal.h>\n#include <stdio.h>\n"
		      "#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n"
		      "void lib_work(long x);\n"
		      "static volatile sig_atomic_t go;\n"
		      "static void on(int s) { (void)s; go = 1; }\n"
		      "int main(int argc, char **argv) {\n"
		      "  long n = atol(argv[1]), i; void (*f)(long) = 0;\n"
		      "  signal(SIGUSR1, on); printf(\"ready\\n\"); fflush(stdout);\n"
		      "  if (argc > 2 && !strcmp(argv[2], \"wait\")) while (!go) usleep(1000);\n"
		      "#ifdef DL\n"
		      "  void *h = dlopen(DL, RTLD_NOW); if (!h) return 3;\n"
		      "  f = (void (*)(long))dlsym(h, \"lib_work\");\n"
		      "#else\n"
		      "  f = lib_work;\n"
		      "#endif\n"
		      "  for (i = 0; i < n; i++) { f(i); __asm__ volatile(\"\"); }\n"
		      "  printf(\"done\\n\"); fflush(stdout); return 0; }\n");
	h_shell("cd '%s' && gcc -O2 -g -fPIC -shared -o libcabtest.so cabtest.c && "
		"gcc -O2 -g -o linked user.c -L. -lcabtest -Wl,-rpath,'%s' && "
		"gcc -O2 -g -DDL='\"%s/libcabtest.so\"' -o dl user.c -ldl",
		lib_dir, lib_dir, lib_dir);
}

static void assert_lib_counts(const struct h_run *r, long n)
{
	h_assert_ok(r);
	ck_assert_int_eq(h_num(r->json, "lost"), 0);
	ck_assert_msg(h_calls(r->json, "libcabtest.so:lib_work") == n, "%s",
		      json_object_to_json_string(h_get(r->json, "functions")));
	ck_assert_int_eq(h_calls(r->json, "libcabtest.so:lib_inner"), n);
	ck_assert_int_eq(h_edge(r->json, "libcabtest.so:lib_work", "libcabtest.so:lib_inner"), n);
}

/* A launched command: the library by path, plus the program's own main. */
START_TEST(shared_library_by_path)
{
	char sel[PATH_MAX + 16], prog[PATH_MAX];
	char *args[] = {"-f", sel, "-f", "main", "--", prog, "1000", NULL};
	struct h_run r;

	build_lib_targets();
	snprintf(sel, sizeof(sel), "%s/libcabtest.so:lib_*", lib_dir);
	snprintf(prog, sizeof(prog), "%s/linked", lib_dir);
	h_run(&r, args);
	assert_lib_counts(&r, 1000);
	ck_assert_int_eq(h_calls(r.json, "main"), 1);
	ck_assert_int_eq(h_edge(r.json, "main", "libcabtest.so:lib_work"), 1000);
	h_free(&r);
}
END_TEST

/* A running process: the library by name, found in /proc/PID/maps. */
START_TEST(shared_library_by_name_in_maps)
{
	char prog[PATH_MAX];
	char *opts[] = {"-f", "libcabtest:lib_*", NULL};
	char *target[] = {prog, "500", "wait", NULL};
	struct h_proc t;
	struct h_run r;
	int st;

	build_lib_targets();
	snprintf(prog, sizeof(prog), "%s/linked", lib_dir);
	h_spawn(&t, target, NULL, "ready");
	h_start_pid(&r, t.pid, opts, H_TRACING);
	kill(t.pid, SIGUSR1);
	ck_assert(h_wait_for(t.out_path, "done", 5000));
	h_finish(&r);
	/* "libcabtest" resolves to libcabtest.so: reported under the name
	 * given. */
	h_assert_ok(&r);
	ck_assert_int_eq(h_calls(r.json, "libcabtest:lib_work"), 500);
	ck_assert_int_eq(h_calls(r.json, "libcabtest:lib_inner"), 500);
	waitpid(t.pid, &st, 0);
	h_free(&r);
}
END_TEST

/* A library the target dlopens after the probes went in: the kernel puts
 * them in when the file is mapped. */
START_TEST(dlopen_picked_up_while_tracing)
{
	char sel[PATH_MAX + 16], prog[PATH_MAX];
	char *args[] = {"-f", sel, "--", prog, "700", "wait", NULL};
	struct h_run r;

	build_lib_targets();
	snprintf(sel, sizeof(sel), "%s/libcabtest.so:lib_*", lib_dir);
	snprintf(prog, sizeof(prog), "%s/dl", lib_dir);
	ck_assert_int_eq(h_start(&r, args, 0, 0), 0);
	h_run_until(&r, r.out_path, "ready", 1, 10000);
	/* Not mapped yet: the program has not called dlopen. Wake it by
	 * the pid cabbpf printed. */
	h_run_until(&r, r.err_path, H_TRACING, 1, 10000);
	{
		char *e = h_slurp(r.err_path), *p = strstr(e, "(pid ");
		int tpid = p ? atoi(p + 5) : 0;

		free(e);
		ck_assert_int_gt(tpid, 0);
		kill(tpid, SIGUSR1);
	}
	h_run_until(&r, r.out_path, "done", 1, 10000);
	h_finish(&r);
	assert_lib_counts(&r, 700);
	h_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("probe-integration");
	TCase *tc = tcase_create("placement"), *libs = tcase_create("libs");
	/* The kernel matrix's cases (tests/vm: make vmtest runs them on each
	 * kernel), also run here with the rest. */
	TCase *matrix = tcase_create("matrix");

	if (h_integration_setup("probe-integration", build_flavours))
		return 1;
	tcase_set_timeout(tc, 240);
	tcase_add_loop_test(tc, exact_counts_every_flavour, 0, 8);
	tcase_add_loop_test(tc, entry_only_exact_counts, 2, 8);
	tcase_add_test(tc, entry_only_refuses_callgraph);
	tcase_add_test(tc, refused_site_is_skipped_not_fatal);
	tcase_add_loop_test(tc, plan_ignores_foreign_uprobes, 0, 8);
	tcase_add_test(tc, kernel_refusal_splits_the_multi_link);
	tcase_add_loop_test(tc, nop5_entries_hit_the_optimized_path, 0, 2);
	tcase_set_timeout(libs, 60);
	tcase_add_test(libs, shared_library_by_name_in_maps);
	tcase_add_test(libs, dlopen_picked_up_while_tracing);
	tcase_set_timeout(matrix, 240);
	tcase_add_loop_test(matrix, entry_only_exact_counts, 0, 2);
	tcase_add_test(matrix, per_site_link_fallback);
	tcase_add_test(matrix, per_site_links_released_in_background);
	tcase_add_test(matrix, shared_library_by_path);
	suite_add_tcase(s, matrix);
	suite_add_tcase(s, libs);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
