// SPDX-License-Identifier: BSD-2-Clause
/*
 * Integration suite for the sampled times (--times sampled, the default
 * for one traced process): a CPU clock samples the target's own execution
 * (its user-mode code and its system calls) into its event stream, and each function's self time is its
 * samples x the period (bpf/trace.bpf.c on_cpu_sample, pipeline/shadow.h
 * SAMPLES). tests/targets/shares.c runs functions of known CPU cost, and
 * prints what each cost untraced (its thread's CPU clock around each
 * phase).
 *
 * Asserted, on the real kernel:
 *  - exact calls, as always;
 *  - samples came (the JSON's samples_self, est_self_ns), and the text
 *    says what its times are; each function's est_self_ns is exactly its
 *    samples x the period less the probes' aftermath (aft_self_ns:
 *    measured at start-up, user/trace/calibrate.h; 0 where it saw none),
 *    0 when that is larger;
 *  - big (20 calls of ~11 ms of work: the probes are nothing there) has a
 *    sampled self time within a factor of 2 of its untraced cost,
 *    measured in an untraced run just before (both are CPU time, but a
 *    hypervisor that takes the CPU away moves the two apart: untraced runs
 *    of big here took 220 to 390 ms);
 *  - sys (100 calls, each reading 40 MiB of /dev/zero: the kernel's work,
 *    in its own system calls) likewise within a factor of 2 of its
 *    untraced cost: a system call's time is the program's; the kernel-mode
 *    ticks in the probes' traps are left out and counted (samples_trap:
 *    600,000 traced calls spend far more than a tick in their traps);
 *  - touch (10 calls, each writing once to each page of 32 MiB just
 *    mapped: the kernel's work, in its page faults) likewise: a page
 *    fault's time is the program's (samples_fault), told from a trap's by
 *    the kernel entry at the bottom of the interrupted stack;
 *  - tiny (600,000 calls of ~30 ns of work, each traced call costing a
 *    probe pair of ~1-13 us here) has a sampled self time less than a
 *    quarter of its traced wall self time: the probes' cost is left out.
 *    How close it comes to tiny's untraced cost is a measurement
 *    (bench/times.sh), not a test: the aftermath measured on the
 *    calibration's functions is not exactly tiny's (docs/times.md);
 *  - --times raw: the traced wall times, said as such, and no sampled
 *    figures;
 *  - fib(25) (242,785 calls of a few ns): the report's WARNING that its
 *    traced calls are too dense for its sampled times to be trusted, and
 *    the JSON's aftermath_heavy.
 * --lossless: 1.24 M events, more than a ring holds (h_assert_no_loss).
 * Needs root and BPF, like every integration suite: no skips.
 */
#include <check.h>
#include <stdio.h>

#include "tests/harness.h"

/* The untraced cost of the target's phases, from its own output. */
struct costs {
	long long big, mid, tiny, outer_self, sys, touch;
};

static void untraced_costs(struct costs *c)
{
	char cmd[1024], line[256];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s", h_target("shares", 2));
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), p));
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_int_eq(sscanf(line,
				"big_ns=%lld mid_ns=%lld tiny_ns=%lld outer_self_ns=%lld sys_ns=%lld "
				"touch_ns=%lld",
				&c->big, &c->mid, &c->tiny, &c->outer_self, &c->sys, &c->touch),
			 6);
	ck_assert(c->big > 0 && c->tiny > 0 && c->sys > 0 && c->touch > 0);
}

static char folded[PATH_MAX];

static void run_shares(struct h_run *r, const char *times, int opt)
{
	char *args[] = {"--lossless",
			"-a",
			"count,cct",
			"--times",
			(char *)times,
			"--folded",
			folded,
			"-f",
			"big",
			"-f",
			"mid",
			"-f",
			"tiny",
			"-f",
			"outer",
			"-f",
			"sys",
			"-f",
			"touch",
			"--",
			(char *)h_target("shares", opt),
			NULL};

	snprintf(folded, sizeof(folded), "%s/shares.folded", h_tmp);
	h_run(r, args);
	h_assert_clean(r);
	ck_assert_int_eq(h_calls(r->json, "big"), 20);
	ck_assert_int_eq(h_calls(r->json, "mid"), 20000);
	ck_assert_int_eq(h_calls(r->json, "tiny"), 600000);
	ck_assert_int_eq(h_calls(r->json, "outer"), 200);
	ck_assert_int_eq(h_calls(r->json, "sys"), 100);
	ck_assert_int_eq(h_calls(r->json, "touch"), 10);
}

START_TEST(sampled_times_leave_probes_out)
{
	struct costs c;
	struct h_run r;
	long long big, tiny, tiny_raw, sys, touch, samples = 0;
	char *text, *line;
	const char *fns[] = {"big", "mid", "tiny", "outer", "sys", "touch"};
	size_t i;

	untraced_costs(&c);
	run_shares(&r, "sampled", _i ? 2 : 0);
	ck_assert_msg(
		strstr(r.out, "times: the program's own CPU time (user mode, system calls and page "
			      "faults), sampled every 1 ms"),
		"%s", r.out);
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		long long n = h_fn_field(r.json, fns[i], "samples_self");

		long long aft = h_fn_field(r.json, fns[i], "aft_self_ns");

		ck_assert_int_ge(n, 0);
		/* the samples times the period (1 ms), less the aftermath */
		ck_assert_int_eq(h_fn_field(r.json, fns[i], "est_self_ns"),
				 n * 1000000 > aft ? n * 1000000 - aft : 0);
		samples += n;
	}
	ck_assert_msg(samples > 0, "no CPU-clock sample reached the report");
	/* tiny's aftermath taken out is a measure: 0 where the calibration
	 * saw none (it did on 6.12 under TCG, once the late ticks at the
	 * resume point were left out) */
	ck_assert_int_ge(h_fn_field(r.json, "tiny", "aft_self_ns"), 0);
	ck_assert_int_gt(h_num(h_get(r.json, "times"), "samples_syscall"), 0);
	ck_assert_int_gt(h_num(h_get(r.json, "times"), "samples_trap"), 0);
	ck_assert_int_gt(h_num(h_get(r.json, "times"), "samples_fault"), 0);
	ck_assert_int_le(h_num(h_get(r.json, "times"), "samples_fault"),
			 h_num(h_get(r.json, "times"), "samples"));
	/* the ticks delivered late as a trap returned: counted, left out
	 * (how many depends on the machine: none where a trap's way out is
	 * short) */
	ck_assert_int_ge(h_num(h_get(r.json, "times"), "samples_resume"), 0);
	ck_assert(h_get(h_get(r.json, "times"), "samples_resume"));
	/* the parts of the samples taken are parts of them, and the
	 * functions' own are some of them */
	ck_assert_int_le(h_num(h_get(r.json, "times"), "samples_syscall"),
			 h_num(h_get(r.json, "times"), "samples"));
	ck_assert_int_le(h_num(h_get(r.json, "times"), "samples_outside"),
			 h_num(h_get(r.json, "times"), "samples"));
	ck_assert_int_le(samples, h_num(h_get(r.json, "times"), "samples"));
	/* the run's total aftermath taken out: exactly what came off the
	 * functions' own times (an untraced caller's share is in none) */
	{
		json_object *fa = h_get(r.json, "functions");
		long long sum = 0;
		size_t k;

		for (k = 0; k < json_object_array_length(fa); k++) {
			long long a = h_num(json_object_array_get_idx(fa, k), "aft_self_ns");

			sum += a > 0 ? a : 0;
		}
		ck_assert_int_eq(h_num(h_get(r.json, "times"), "aftermath_ns"), sum);
	}
	ck_assert(json_object_is_type(h_get(h_get(r.json, "times"), "aftermath_heavy"),
				      json_type_boolean));
	/* a traced call every ~1 us of its time: not dense, no warning */
	ck_assert_msg(!strstr(r.out, "WARNING: a traced call every"), "%s", r.out);
	big = h_fn_field(r.json, "big", "est_self_ns");
	tiny = h_fn_field(r.json, "tiny", "est_self_ns");
	tiny_raw = h_fn_field(r.json, "tiny", "self_ns");
	sys = h_fn_field(r.json, "sys", "est_self_ns");
	touch = h_fn_field(r.json, "touch", "est_self_ns");
	if (_i) /* -O2: -O0's spins are slower than the untraced -O2 run measured */
		ck_assert_msg(big > c.big / 2 && big < c.big * 2,
			      "big: sampled %lld ns, untraced %lld ns", big, c.big);
	/* the same read()s at -O0 and -O2: the kernel's time either way */
	ck_assert_msg(sys > c.sys / 2 && sys < c.sys * 2, "sys: sampled %lld ns, untraced %lld ns",
		      sys, c.sys);
	/* and touch's page faults, the kernel's time too (its mmap and
	 * munmap are a small part: with its page faults left out, it showed
	 * ~15% of its time here) */
	ck_assert_msg(touch > c.touch / 2 && touch < c.touch * 2,
		      "touch: sampled %lld ns, untraced %lld ns", touch, c.touch);
	ck_assert_msg(tiny * 4 < tiny_raw, "tiny: sampled %lld ns, traced wall %lld ns", tiny,
		      tiny_raw);
	/* The folded stacks (and so the flame graph) weigh each context by
	 * the same samples: big's one context is its sampled self time. */
	text = h_slurp(folded);
	line = strstr(text, "\nbig ");
	line = line ? line + 1 : !strncmp(text, "big ", 4) ? text : NULL;
	if (big)
		ck_assert_msg(line && atoll(line + 4) == big, "%s", text);
	free(text);
	h_free(&r);
}
END_TEST

/* Dense traced calls (fib(25): 242,785 calls of a few ns each) are what
 * the sampled times cannot be trusted for: the report warns, and the JSON
 * says aftermath_heavy, whatever the share of the aftermath measured. */
START_TEST(dense_calls_warn)
{
	struct h_run r;
	char *args[] = {"--lossless", "--times-hz", "10000", "-a", "count", "-f", "fib", "--",
			(char *)h_target("recurse", 2), "25", NULL};

	h_run(&r, args);
	h_assert_clean(&r);
	ck_assert_int_eq(h_calls(r.json, "fib"), 242785);
	ck_assert_int_gt(h_num(h_get(r.json, "times"), "samples"), 0);
	ck_assert_msg(strstr(r.out, "WARNING: a traced call every "), "%s", r.out);
	ck_assert(json_object_get_boolean(h_get(h_get(r.json, "times"), "aftermath_heavy")));
	h_free(&r);
}
END_TEST

START_TEST(raw_times_say_so)
{
	struct h_run r;

	run_shares(&r, "raw", 2);
	ck_assert_msg(strstr(r.out, "times: traced wall time, probes included"), "%s", r.out);
	ck_assert_ptr_null(h_get(h_fn(r.json, "big"), "est_self_ns"));
	ck_assert_int_gt(h_fn_field(r.json, "big", "self_ns"), 0);
	h_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("times_integration");
	TCase *tc = tcase_create("times");

	if (h_integration_setup("times", NULL))
		return 1;
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, sampled_times_leave_probes_out, 0, 2);
	tcase_add_test(tc, raw_times_say_so);
	tcase_add_test(tc, dense_calls_warn);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
