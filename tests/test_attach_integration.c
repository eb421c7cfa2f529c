// SPDX-License-Identifier: BSD-2-Clause
/*
 * Integration suite of atomic attach and detach (issue 15): the real
 * kernel, real BPF programs, real processes (needs root).
 *
 * tests/targets/hot.c calls tick(), then outer() (which calls inner()
 * twice), flat out, in every thread. Probes go in and out progressively
 * (return links before entry links at stop); the gate of bpf/trace.bpf.c
 * makes the report hold the events of one instant to another, so:
 *   - a stop by Ctrl-C, SIGTERM or -d, of `cabbpf -- hot` or `cabbpf -p`,
 *     leaves no false edge (tick -> tick was the symptom) and no missing
 *     return;
 *   - an attach to hot mid-flight leaves no false edge either, and the
 *     returns of calls entered before the start are counted as such
 *     ("before_attach"), not as orphans;
 * with the exact relations of tests/targets/hot.c's header.
 *
 * The plan knows what the kernel refuses (user/elf/insn.c): for every
 * function of tests/targets/insns.c (first instructions chosen rule by
 * rule) and every AVX/EVEX variant in libc, a probe attached by itself at
 * the function's entry fails exactly where the plan says "refused by the
 * kernel", and the run attaches everything else at once, with no trial and
 * error and the same count on stderr and in the report.
 *
 * IFUNC (user/elf/ifunc.h): tests/targets/ifunc.c calls memcpy, strlen and
 * memchr from work() and counts its own calls; the report counts them on
 * the implementation the target runs, named "libc:memcpy (IMPL)", with
 * IMPL what this test's own loader resolved memcpy to, exactly, for a
 * launched target (-- ) and a running one (-p), -O0 and -O2.
 */
#include <check.h>
#include <dlfcn.h>
#include <signal.h>
#include <time.h>
#include <sys/wait.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "tests/harness.h"
#include "user/elf/syms.h"
#include "user/probe/plan.h"
#include "user/probe/uprobe_multi.h"
#include "user/proc/libs.h"

#define OPT(i) ((i) ? 2 : 0)

/* hot never rests: its events grow with the time traced, past what any
 * ring holds if cabbpf drains late on a loaded machine. --lossless makes
 * its threads wait at a ring's high-water mark instead: nothing lost,
 * whatever the load (tests/harness.h, h_assert_no_loss). What these tests
 * are about, the gate's instants at attach and detach, is the same with
 * it: the held threads are let go at detach like the others. */
#define HOT_LOSSLESS "--lossless"

/* How a run is stopped. */
enum stop { STOP_SIGINT, STOP_SIGTERM, STOP_DURATION };

/* Every edge is one hot.c can make (header); the relations between calls
 * and edges hold exactly; nothing missing, nothing orphan. threads: the
 * target's; spawned: no frame can predate the start. */
static void assert_exact(const struct h_run *r, int threads, int spawned)
{
	json_object *cg = h_get(r->json, "callgraph");
	long long root_inner = h_edge(r->json, "<root>", "inner");
	size_t i, n;

	h_assert_clean(r);
	ck_assert_ptr_nonnull(cg);
	n = json_object_array_length(cg);
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(cg, i);
		const char *x = json_object_get_string(h_get(e, "caller"));
		const char *y = json_object_get_string(h_get(e, "callee"));
		int ok = (!strcmp(x, "<root>") &&
			  (!strcmp(y, "tick") || !strcmp(y, "outer") || !strcmp(y, "inner"))) ||
			 (!strcmp(x, "outer") && !strcmp(y, "inner"));

		ck_assert_msg(ok, "false edge %s -> %s (%lld calls); report:\n%s", x, y,
			      (long long)
			      json_object_get_int64(h_get(e, "calls")), r->out);
	}
	ck_assert_int_gt(h_calls(r->json, "tick"), 0);
	ck_assert_int_eq(h_calls(r->json, "tick"), h_edge(r->json, "<root>", "tick"));
	ck_assert_int_eq(h_calls(r->json, "outer"), h_edge(r->json, "<root>", "outer"));
	ck_assert_int_eq(h_calls(r->json, "inner"), h_edge(r->json, "outer", "inner") + root_inner);
	ck_assert_int_eq(h_returns(r->json, "missing"), 0);
	ck_assert_int_eq(h_returns(r->json, "orphan"), 0);
	ck_assert_int_eq(h_returns(r->json, "unwound"), 0);
	ck_assert_int_le(h_returns(r->json, "open"), 2 * threads);
	if (spawned) {
		ck_assert_int_eq(root_inner, 0);
		ck_assert_int_eq(h_returns(r->json, "before_attach"), 0);
	} else {
		ck_assert_int_le(root_inner, 2 * threads);
		ck_assert_int_le(h_returns(r->json, "before_attach"), 2 * threads);
	}
	/* Every call is matched or open at stop. */
	ck_assert_int_eq(h_calls(r->json, "tick") + h_calls(r->json, "outer") +
				 h_calls(r->json, "inner"),
			 h_returns(r->json, "matched") + h_returns(r->json, "open"));
}

/* h_start_pid with a patient wait: cabbpf measures its probes' cost and
 * plans before it says "tracing", which on a machine two spinning threads
 * of hot (and other suites) load can take longer than the harness's 10 s.
 * A cabbpf that exits first fails the test at once (h_run_until). */
static void start_pid(struct h_run *r, pid_t pid, char *const *opts)
{
	char pidbuf[16], *args[32];
	int n = 0, i;

	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	for (i = 0; opts[i] && n < 28; i++)
		args[n++] = opts[i];
	args[n++] = "-p";
	args[n++] = pidbuf;
	args[n] = NULL;
	ck_assert_int_eq(h_start(r, args, 0, 0), 0);
	h_run_until(r, r->err_path, H_TRACING, 1, 120000);
}

/*
 * Stop r (started, tracing target) the way s says, once some calls were
 * traced: target (hot, which never rests) has run 20 ms more of CPU since
 * it was traced (h_cpu_ms counts 10 ms ticks: 10 ms at least, thousands
 * of loops), however loaded the machine (a fixed 300 ms sleep could pass
 * with hot never scheduled). -d runs stop by themselves: cabbpf is stopped
 * meanwhile, so its window cannot close before hot has run in it (the
 * test sees "tracing" or "ready" within the 1 s window, and the stop holds
 * it open). Stopped, cabbpf drains nothing, and hot may fill half a ring
 * (32,768 events of the default 4 MiB), where --lossless holds its thread
 * until cabbpf drains: hot-O0 at 1.1-1.4 M events a second on one host
 * got there within its 20 ms, and the test waited for CPU time hot could
 * not use until the suite's 30 min ran out. A held hot has run in the
 * window too, so the wait ends there (h_wait_cpu_or_stopped).
 */
static void stop_run(struct h_run *r, enum stop s, pid_t target)
{
	long long cpu;

	if (s == STOP_DURATION)
		kill(r->pid, SIGSTOP);
	cpu = h_cpu_ms(target);
	(void)h_wait_cpu_or_stopped(target, cpu + 20); /* hot never ends: it comes */
	if (s == STOP_DURATION)
		kill(r->pid, SIGCONT);
	else
		kill(r->pid, s == STOP_SIGINT ? SIGINT : SIGTERM);
	h_finish(r);
}

/* `cabbpf -- hot` stopped by Ctrl-C, SIGTERM or -d while tick() runs in a
 * loop: _i = stop * 2 + (O2). */
START_TEST(stop_launched_no_false_edges)
{
	enum stop s = (enum stop)(_i / 2);
	int up;
	char *args[] = {HOT_LOSSLESS,
			"-f",
			"tick",
			"-f",
			"outer",
			"-f",
			"inner",
			"-d",
			"1",
			"--",
			(char *)h_target("hot", OPT(_i % 2)),
			NULL};
	struct h_run r;

	if (s != STOP_DURATION) {
		args[7] = "-f"; /* no -d: "-f inner" once more */
		args[8] = "inner";
	}
	ck_assert_int_eq(h_start(&r, args, 0, 0), 0);
	/* Stopped whatever happens (a loaded machine may be slow to start
	 * it): the assertions come after. */
	up = h_wait_run_in(&r, r.out_path, "ready", 1, 60000) > 0;
	if (up)
		stop_run(&r, s, h_child_of(r.pid));
	else
		h_interrupt(&r);
	ck_assert_msg(up, "hot did not start: %s", h_run_why(&r));
	assert_exact(&r, 1, 1);
	ck_assert_str_eq(json_object_get_string(h_get(r.json, "stop_reason")),
			 s == STOP_DURATION ? "duration reached" : "interrupted");
	h_free(&r);
}
END_TEST

/* `cabbpf -p` on hot (2 threads, attached mid-flight), stopped by Ctrl-C,
 * SIGTERM or -d: no false edge at either end; the target runs on, with no
 * breakpoint left, and exits normally. _i = stop * 2 + (O2). */
START_TEST(pid_busy_no_false_edges)
{
	enum stop s = (enum stop)(_i / 2);
	const char *exe = h_target("hot", OPT(_i % 2));
	char *target[] = {(char *)exe, "2", NULL};
	char *opts[] = {HOT_LOSSLESS, "-f", "tick", "-f", "outer", "-f", "inner", "-d", "1", NULL};
	char real[PATH_MAX];
	unsigned char file_byte, after;
	struct symtab *st = NULL;
	const struct sym *tick;
	struct h_proc t;
	struct h_run r;
	int fd;

	if (s != STOP_DURATION)
		opts[7] = NULL;
	ck_assert_ptr_nonnull(realpath(exe, real));
	ck_assert_int_eq(syms__load(real, &st), 0);
	tick = syms__find(st, "tick");
	ck_assert_ptr_nonnull(tick);
	fd = open(real, O_RDONLY);
	ck_assert_int_eq(pread(fd, &file_byte, 1, (off_t)tick->offset), 1);
	close(fd);

	h_spawn(&t, target, NULL, "ready");
	start_pid(&r, t.pid, opts);
	stop_run(&r, s, t.pid);
	assert_exact(&r, 2, 0);

	ck_assert_int_eq(h_mapped_byte(t.pid, real, tick->offset, &after), 0);
	ck_assert_int_eq(after, file_byte);
	ck_assert_int_eq(kill(t.pid, 0), 0);
	kill(t.pid, SIGTERM);
	h_reap_ok(t.pid);
	syms__free(st);
	h_free(&r);
}
END_TEST

/* The duration is the gate's: from the instant every probe is in to the
 * instant tracing stops, whatever attach and detach cost (-d 1: at least
 * 1 s, and the attach and detach times are not in it). */
START_TEST(duration_is_between_the_gates)
{
	char *args[] = {HOT_LOSSLESS, "-f", "tick", "-d", "1", "--", (char *)h_target("hot", 2),
			NULL};
	struct timespec t0, t1;
	double d, wall, att = -1, det = -1;
	struct h_run r;
	const char *p;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	h_run(&r, args);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	h_assert_clean(&r);
	d = json_object_get_double(h_get(r.json, "duration_s"));
	ck_assert_msg(d >= 1.0, "duration %.3f s with -d 1", d);
	/* Not a timing bound but an invariant: the gates open after the last
	 * probe went in and close before the first comes out, so the
	 * duration between them leaves out the attach and detach times
	 * cabbpf measured around its link system calls, inside its own
	 * wall time. */
	p = strstr(r.err, "probes: attached in ");
	ck_assert_msg(p && sscanf(p, "probes: attached in %lf s, detached in %lf s", &att, &det) == 2,
		      "no attach/detach times on stderr: %s", r.err);
	wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_msg(d + att + det <= wall, "duration %.3f s + attach %.3f s + detach %.3f s > "
		      "cabbpf's wall time %.3f s: the duration is not between the gates",
		      d, att, det, wall);
	h_free(&r);
}
END_TEST

/* An empty program of the multi-uprobe type: what a probe runs matters
 * not, only whether the kernel takes the site. */
static int empty_prog(void)
{
	struct bpf_insn insns[2] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, po, .expected_attach_type = UPROBE_MULTI_ATTACH_TYPE);
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "cab_empty", "GPL", insns, 2, &po);

	ck_assert_msg(fd >= 0, "loading an empty uprobe program: %s", strerror(errno));
	return fd;
}

/* For the functions of path matching globs: the plan's verdict on each
 * entry against the kernel's, attaching one probe at a time in process
 * pid (which maps path). Returns how many the kernel refused; *skips gets
 * how many the plan leaves out because the kernel would skip the
 * instruction (the kernel accepts those). */
static size_t plan_vs_kernel(const char *path, const char *const *globs, size_t nglobs, pid_t pid,
			     size_t *skips, const char *must_refuse)
{
	struct plan_opts po = {.returns = true};
	struct symtab *st = NULL;
	struct plan *p = NULL;
	size_t *idx = NULL, n = 0, i, refused = 0, seen_must = 0;
	int prog = empty_prog();

	*skips = 0;
	ck_assert_int_eq(syms__load(path, &st), 0);
	ck_assert_int_eq(syms__select(st, globs, nglobs, &idx, &n), 0);
	ck_assert_int_eq(plan__build(st, idx, n, &po, &p), 0);
	for (i = 0; i < n; i++) {
		const struct sym *s = &st->syms[idx[i]];
		const struct plan_site *site = &p->sites[i];
		uint64_t off = s->offset;
		int fd = uprobe_multi__attach(prog, path, &off, NULL, 1, false, pid);
		bool plan_refuses = site->rule == PLAN_SKIPPED &&
				    site->entry_verdict != INSN_KERNEL_SKIPS;

		ck_assert_msg((fd < 0) == plan_refuses,
			      "%s in %s (%s): the kernel %s (%s), the plan says %s", s->name, path,
			      site->entry_text, fd < 0 ? "refuses" : "accepts",
			      fd < 0 ? strerror(-fd) : "ok",
			      insn__verdict_name(site->entry_verdict));
		if (fd >= 0)
			close(fd);
		else
			ck_assert_int_eq(fd, -524); /* ENOTSUPP: the instruction rules */
		refused += fd < 0;
		*skips += site->entry_verdict == INSN_KERNEL_SKIPS;
		if (must_refuse && !strcmp(s->name, must_refuse) && (seen_must = 1))
			ck_assert_msg(fd < 0, "%s accepted", must_refuse);
	}
	ck_assert_int_eq(refused, p->refused_kernel);
	ck_assert_int_eq(*skips, p->refused_skips);
	if (must_refuse)
		ck_assert_msg(seen_must, "%s not among the functions of %s", must_refuse, path);
	close(prog);
	plan__free(p);
	free(idx);
	syms__free(st);
	return refused;
}

/* tests/targets/insns.c: one function per rule, the kernel asked for each. */
START_TEST(plan_matches_kernel_on_insns)
{
	const char *exe = h_target("insns", 2);
	const char *globs[] = {"ins_*"};
	char *target[] = {(char *)exe, "wait", NULL};
	char real[PATH_MAX];
	struct h_proc t;
	size_t skips;

	ck_assert_ptr_nonnull(realpath(exe, real));
	h_spawn(&t, target, NULL, "ready");
	/* vmovd, EVEX vmovdqa32, cs mov, lock add */
	ck_assert_int_eq(plan_vs_kernel(real, globs, 1, t.pid, &skips, "ins_vmovd"), 4);
	ck_assert_int_eq(skips, 2); /* vpcmpeqb, vzeroupper */
	kill(t.pid, SIGKILL);
	waitpid(t.pid, NULL, 0);
}
END_TEST

/* Every AVX and EVEX variant of libc (__strchr_avx2 starts with vmovd):
 * refused exactly where the plan says. */
START_TEST(plan_matches_kernel_on_libc_avx)
{
	const char *globs[] = {"*avx*", "*evex*"};
	char *target[] = {(char *)h_target("insns", 2), "wait", NULL};
	char libc[PATH_MAX];
	struct h_proc t;
	size_t skips, refused;

	h_spawn(&t, target, NULL, "ready");
	ck_assert_int_eq(libs__resolve(getpid(), "libc", libc, sizeof(libc)), 0);
	refused = plan_vs_kernel(libc, globs, 2, t.pid, &skips, "__strchr_avx2");
	ck_assert_int_gt(refused, 0);
	kill(t.pid, SIGKILL);
	waitpid(t.pid, NULL, 0);
}
END_TEST

/* A run over those functions attaches at once: no probe the kernel
 * refuses (no trial and error), "tracing N" on stderr = "functions_traced"
 * in the report, -v names each function left out with its instruction,
 * and the target's output is its own (vpcmpeqb, which the kernel would
 * skip, is not probed). */
START_TEST(run_counts_agree_and_target_unharmed)
{
	char *opts[] = {"-v", "-f", "ins_*", "-f", "libc:*avx2*", NULL};
	char *target[] = {(char *)h_target("insns", 2), NULL};
	char line[64], libc[PATH_MAX];
	struct h_plain p;
	struct h_run r;
	long long traced;

	h_traced_same(&p, &r, opts, target);
	ck_assert_msg(!strstr(r.err, "which the plan accepted"), "trial and error:\n%s", r.err);
	traced = h_num(r.json, "functions_traced");
	snprintf(line, sizeof(line), "tracing %lld functions", traced);
	ck_assert_msg(strstr(r.err, line), "no '%s' on stderr:\n%s", line, r.err);
	/* The text report counts functions of one total: the traced ones,
	 * not the planned (refused ones were never in). */
	{
		char *args[] = {"-f", "ins_*", "-f", "libc:*avx2*", "--", target[0], NULL};
		struct h_run t;

		h_run(&t, args);
		h_assert_ok(&t);
		snprintf(line, sizeof(line), " %lld functions traced (some refused", traced);
		ck_assert_msg(strstr(t.out, line), "no '%s' on stdout:\n%s", line, t.out);
		snprintf(line, sizeof(line), " of %lld functions called,", traced);
		ck_assert_msg(strstr(t.out, line), "no '%s' on stdout:\n%s", line, t.out);
		h_free(&t);
	}
	/* ins_*: 9 functions, 6 left out; libc's as its plan says */
	{
		const char *globs[] = {"*avx2*"};
		struct plan_opts po = {.returns = true};
		struct symtab *st = NULL;
		struct plan *pl = NULL;
		size_t *idx = NULL, n = 0;

		ck_assert_int_eq(libs__resolve(getpid(), "libc", libc, sizeof(libc)), 0);
		ck_assert_int_eq(syms__load(libc, &st), 0);
		ck_assert_int_eq(syms__select(st, globs, 1, &idx, &n), 0);
		ck_assert_int_eq(plan__build(st, idx, n, &po, &pl), 0);
		ck_assert_int_eq(traced, (long long)(3 + n - pl->skipped));
		ck_assert_int_eq(h_num(r.json, "functions_refused"), (long long)(6 + pl->skipped));
		plan__free(pl);
		free(idx);
		syms__free(st);
	}
	ck_assert_ptr_nonnull(strstr(r.err, "not probed: ins_vmovd in "));
	ck_assert_ptr_nonnull(strstr(r.err, "vmovd xmm0, esi [c5 f9 6e c6]"));
	ck_assert_ptr_nonnull(strstr(r.err, "not probed: __strchr_avx2 in "));
	ck_assert_ptr_nonnull(strstr(r.err, "not probed: ins_vpcmpeqb in "));
	ck_assert_int_eq(h_calls(r.json, "ins_mov"), 1);
	ck_assert_int_eq(h_calls(r.json, "ins_push"), 1);
	ck_assert_int_eq(h_calls(r.json, "ins_xchg_ax"), 1);
	ck_assert_int_eq(h_calls(r.json, "ins_vmovd"), 0);
	h_free(&r);
	h_plain_free(&p);
}
END_TEST

/* The one function of the report whose name starts with prefix and that
 * names an implementation ("libc:memcpy (" or "libc:memcpy, "), or NULL. */
static const char *impl_fn(json_object *root, const char *prefix)
{
	json_object *fs = h_get(root, "functions");
	const char *found = NULL;
	size_t i, n = fs ? json_object_array_length(fs) : 0, l = strlen(prefix);

	for (i = 0; i < n; i++) {
		const char *nm = json_object_get_string(h_get(json_object_array_get_idx(fs, i), "name"));

		if (nm && !strncmp(nm, prefix, l) && (nm[l] == ' ' || nm[l] == ',') &&
		    strchr(nm, '(')) {
			ck_assert_msg(!found, "two functions named %s...: %s, %s", prefix, found, nm);
			found = nm;
		}
	}
	return found;
}

/* What this process's loader resolved name to: the preferred name of that
 * function in libc's symbol table (the test runs on the same machine, with
 * the same libc and tunables as its targets). */
static void resolved_here(const char *name, char *out, size_t len)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	struct symtab *st = NULL;
	Dl_info di;
	size_t i;

	ck_assert_ptr_nonnull(p);
	ck_assert(dladdr(p, &di) && di.dli_fbase);
	ck_assert_int_eq(syms__load(di.dli_fname, &st), 0);
	out[0] = 0;
	for (i = 0; i < st->nsyms; i++)
		if (st->syms[i].vaddr == (uint64_t)((uintptr_t)p - (uintptr_t)di.dli_fbase))
			snprintf(out, len, "%s", st->syms[i].name);
	ck_assert_msg(out[0], "%s resolves to no function of %s", name, di.dli_fname);
	syms__free(st);
}

/* work's calls of memcpy, strlen, memchr counted on their implementations,
 * exactly (the program's own count), named after them. */
static void assert_ifunc_counts(const struct h_run *r, const char *out, bool exact_names)
{
	static const char *const fns[] = {"memcpy", "strlen", "memchr"};
	char prefix[64], impl[256], want[512];
	size_t i;

	h_assert_clean(r);
	for (i = 0; i < 3; i++) {
		const char *nm;
		long long own = h_own_calls(out, fns[i]);

		snprintf(prefix, sizeof(prefix), "libc:%s", fns[i]);
		nm = impl_fn(r->json, prefix);
		ck_assert_msg(nm, "no %s (IMPLEMENTATION) in the report:\n%s", prefix, r->out);
		ck_assert_int_gt(own, 0);
		ck_assert_msg(h_edge(r->json, "work", nm) == own, "work -> %s: %lld, the program %lld",
			      nm, h_edge(r->json, "work", nm), own);
		ck_assert_int_ge(h_calls(r->json, nm), own);
		/* the resolver itself is not probed */
		ck_assert_int_eq(h_calls(r->json, prefix), 0);
		resolved_here(fns[i], impl, sizeof(impl));
		snprintf(want, sizeof(want), "(%s)", impl);
		ck_assert_msg(strstr(nm, want), "%s: the loader here chose %s", nm, impl);
		if (exact_names) {
			snprintf(want, sizeof(want), "libc:%s (%s)", fns[i], impl);
			ck_assert_str_eq(nm, want);
		}
	}
	ck_assert_int_eq(h_calls(r->json, "work"), 1);
}

/* `cabbpf -- ifunc 1000`, -O0 and -O2, the three IFUNCs by name
 * (_i / 2 == 0) or all of libc (_i / 2 == 1: memcpy and memmove then share
 * one implementation, named together). */
START_TEST(ifunc_launched_counts_implementation)
{
	char *by_name[] = {"-f", "work", "-f", "libc:memcpy", "-f", "libc:strlen",
			   "-f", "libc:memchr", NULL};
	char *all[] = {"-f", "work", "-f", "libc:*", NULL};
	char *target[] = {(char *)h_target("ifunc", OPT(_i % 2)), "1000", NULL};
	struct h_plain p;
	struct h_run r;

	h_traced_same(&p, &r, _i / 2 ? all : by_name, target);
	assert_ifunc_counts(&r, p.out, _i / 2 == 0);
	ck_assert_int_eq(h_own_calls(p.out, "memcpy"), 1000);
	h_free(&r);
	h_plain_free(&p);
}
END_TEST

/* `cabbpf -p` on ifunc already running (its own relocation is read):
 * the same exact counts. */
START_TEST(ifunc_pid_counts_implementation)
{
	char *target[] = {(char *)h_target("ifunc", OPT(_i)), "500", "wait", NULL};
	char *opts[] = {"-f", "work", "-f", "libc:memcpy", "-f", "libc:strlen",
			"-f", "libc:memchr", NULL};
	struct h_proc t;
	struct h_run r;
	char *out;

	h_spawn(&t, target, NULL, "ready");
	start_pid(&r, t.pid, opts);
	kill(t.pid, SIGUSR1);
	ck_assert(h_wait_for(t.out_path, "calls:", 60000));
	h_interrupt(&r);
	out = h_slurp(t.out_path);
	assert_ifunc_counts(&r, out, true);
	ck_assert_int_eq(h_own_calls(out, "memcpy"), 500);
	kill(t.pid, SIGTERM);
	h_reap_ok(t.pid);
	free(out);
	h_free(&r);
}
END_TEST

/* A static binary's own IFUNCs (its memcpy is an IFUNC of the executable,
 * resolved by its start-up code through .rela.iplt), read in the running
 * target (-p): exact, named after the implementation. Launched with --,
 * nothing relocated exists to read: left out, said, never the resolver. */
START_TEST(ifunc_static_binary)
{
	char bin[PATH_MAX];
	char *target[] = {bin, "500", "wait", NULL};
	char *opts[] = {"-f", "work", "-f", "memcpy", "-f", "strlen", "-f", "memchr", NULL};
	char *launched[] = {"-f", "work", "-f", "memcpy", "--", bin, "10", NULL};
	const char *fns[] = {"memcpy", "strlen", "memchr"};
	char impl[256], want[512];
	struct h_proc t;
	struct h_run r;
	char *out;
	int i;

	snprintf(bin, sizeof(bin), "%s/ifunc-static", h_tmp);
	h_shell("gcc -static -O2 -g -o '%s' tests/targets/ifunc.c", bin);
	h_spawn(&t, target, NULL, "ready");
	start_pid(&r, t.pid, opts);
	kill(t.pid, SIGUSR1);
	ck_assert(h_wait_for(t.out_path, "calls:", 60000));
	h_interrupt(&r);
	out = h_slurp(t.out_path);
	h_assert_clean(&r);
	for (i = 0; i < 3; i++) {
		const char *nm = impl_fn(r.json, fns[i]);

		ck_assert_msg(nm, "no %s (IMPLEMENTATION):\n%s", fns[i], r.out);
		ck_assert_int_eq(h_edge(r.json, "work", nm), h_own_calls(out, fns[i]));
		/* the static libc is the same glibc: the same choice as here */
		resolved_here(fns[i], impl, sizeof(impl));
		snprintf(want, sizeof(want), "%s (%s)", fns[i], impl);
		ck_assert_str_eq(nm, want);
	}
	ck_assert_int_eq(h_own_calls(out, "memcpy"), 500);
	kill(t.pid, SIGTERM);
	h_reap_ok(t.pid);
	free(out);
	h_free(&r);

	h_run(&r, launched);
	h_assert_clean(&r);
	ck_assert_ptr_nonnull(strstr(r.err, "not tracing 1 IFUNC symbol of ifunc-static (memcpy)"));
	ck_assert_int_eq(h_num(r.json, "functions_traced"), 1);
	ck_assert_int_eq(h_calls(r.json, "work"), 1);
	h_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attach-integration");
	TCase *tc = tcase_create("gate");

	if (h_integration_setup("attach-integration", NULL))
		return 1;
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, stop_launched_no_false_edges, 0, 6);
	tcase_add_loop_test(tc, pid_busy_no_false_edges, 0, 6);
	tcase_add_test(tc, duration_is_between_the_gates);
	tcase_add_test(tc, plan_matches_kernel_on_insns);
	tcase_add_test(tc, plan_matches_kernel_on_libc_avx);
	tcase_add_test(tc, run_counts_agree_and_target_unharmed);
	tcase_add_loop_test(tc, ifunc_launched_counts_implementation, 0, 4);
	tcase_add_loop_test(tc, ifunc_pid_counts_implementation, 0, 2);
	tcase_add_test(tc, ifunc_static_binary);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
