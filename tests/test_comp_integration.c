// SPDX-License-Identifier: BSD-2-Clause
/*
 * Integration suite for compensated times (issue 12, item 4; issue 65,
 * item 4): the real kernel, the probe cost measured at start-up
 * (user/trace/calibrate.h), and tests/targets/costly.c, whose outer()
 * calls inner() a known number of times. Traced, outer's time holds its
 * 10 inner() calls' probes. Asserted: the contract, not this machine's
 * trap cost (it is 10-20x higher on the project's AMD hosts, where 2,000
 * inner calls at the cost measured came to more than outer's whole time):
 * where the cost fits the run's own figures, the compensation takes off
 * exactly the cost printed for the 2,000 inner calls below outer (to its
 * rounding); where it does not, the report says so and shows no
 * compensated figure (null, '-'), never 0. The cost is scaled for the
 * test (CABBPF_TEST_PROBE_COST_SCALE) to a hundredth, which fits on any
 * machine, and 20-fold, which fits on none, so both sides are tested
 * everywhere; as measured, whichever side it falls. How close the
 * compensated time comes to the untraced one is a measurement, not a
 * test (bench/comp.sh reports it):
 * the probes' cost on this VM moves with the load between start-up and the
 * run (seen: the compensated time 15% above the untraced one on a quiet
 * machine, 48% with other tests running, the raw time 57% and 90% above;
 * the cost measured at start-up 0.4x-0.9x of the run's under two CPU
 * hogs), and a check that it came closer than the raw time failed
 * whenever the start-up figure was more than twice the run's.
 * -O0 only: inner starts with push %rbp, an emulated probe (~1.7 us here);
 * a single-stepped entry (-O2: ~13 us, varying by 10% between runs) would
 * make the probes 3x the work itself and the check a measure of that
 * variance rather than of the compensation.
 * Needs root and BPF, like every integration suite: no skips.
 */
#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "tests/harness.h"

#define N "200"
#define K 10

/* The cct node named name below node (depth-first), or NULL. */
static json_object *find_node(json_object *node, const char *name)
{
	json_object *kids = h_get(node, "children");
	size_t i;

	if (!strcmp(json_object_get_string(h_get(node, "name")), name))
		return node;
	for (i = 0; kids && i < json_object_array_length(kids); i++) {
		json_object *r = find_node(json_object_array_get_idx(kids, i), name);

		if (r)
			return r;
	}
	return NULL;
}

/* Whether node has key and it is null (a figure not shown). */
static bool is_null(json_object *node, const char *key)
{
	json_object *v;

	ck_assert_msg(json_object_object_get_ex(node, key, &v), "no %s", key);
	return v == NULL;
}

/*
 * costly traced with the probe cost scaled by scale (NULL: as measured;
 * CABBPF_TEST_PROBE_COST_SCALE, read only by tests' runs), and the
 * compensation's contract asserted on it, whatever the machine: what
 * comes off outer is exactly its 2,000 inner calls at the cost printed
 * (to its rounding, +-0.5 ns a call), where that fits the run's own
 * figures: no more than outer's own time (self: every inner call's probes
 * run inside it), wall and on-CPU each. Where it does not, the figure is
 * null (never 0), comp_fits false, counted in cct_info.comp_unfit and
 * said under the tree. inner has no traced call below: its figures are
 * its raw ones. A shown total covers its parts: outer's >= inner's.
 * Returns whether the wall times fit (*cpu_fits: the on-CPU ones).
 */
static bool comp_contract(const char *scale, bool *cpu_fits)
{
	/* the text report too: it says where the cost does not fit */
	char *args[] = {"-a", "cct",   "-f", "outer",
			"-f", "inner", "--", (char *)h_target("costly", 0),
			N,    "10",    NULL};
	json_object *outer, *inner, *info;
	double cost, direct, tol = K * atoi(N) * 0.5 + 2;
	long long self, cpu_self;
	bool fits;
	struct h_run r;
	const char *s;

	if (scale)
		setenv("CABBPF_TEST_PROBE_COST_SCALE", scale, 1);
	h_run(&r, args);
	unsetenv("CABBPF_TEST_PROBE_COST_SCALE");
	h_assert_ok(&r);
	/* the target's own counts, which the tree's must equal below */
	ck_assert_int_eq(h_own_calls(r.out, "outer"), atoi(N));
	ck_assert_int_eq(h_own_calls(r.out, "inner"), K * atoi(N));
	s = strstr(r.err, "(emulated)");
	ck_assert_msg(s, "no measured probe cost on stderr:\n%s", r.err);
	s = strstr(r.err, "measured: ");
	ck_assert_ptr_nonnull(s);
	/* "measured: A ns (nop5), B ns (emulated), ..." */
	s = strstr(s, "), ");
	ck_assert_ptr_nonnull(s);
	cost = atof(s + 3);
	ck_assert(cost > 0);
	if (scale)
		ck_assert_msg(strstr(r.err, "scaled by CABBPF_TEST_PROBE_COST_SCALE="), "%s",
			      r.err);
	outer = find_node(h_get(r.json, "cct"), "outer");
	ck_assert_ptr_nonnull(outer);
	ck_assert_int_eq(json_object_get_int64(h_get(outer, "calls")), atoi(N));
	inner = find_node(outer, "inner");
	ck_assert_ptr_nonnull(inner);
	ck_assert_int_eq(json_object_get_int64(h_get(inner, "calls")), K * atoi(N));
	/* inner: nothing traced below it, nothing comes off */
	ck_assert_int_eq(h_num(inner, "incl_ns_comp"), h_num(inner, "incl_ns"));
	ck_assert_int_eq(h_num(inner, "self_ns_comp"), h_num(inner, "self_ns"));
	ck_assert_int_eq(h_num(inner, "cpu_incl_ns_comp"), h_num(inner, "cpu_incl_ns"));
	ck_assert(json_object_get_boolean(h_get(inner, "comp_fits")));
	/* outer: what its inner calls' probes cost, at the cost printed */
	direct = K * atoi(N) * cost;
	self = h_num(outer, "self_ns");
	cpu_self = h_num(outer, "cpu_self_ns");
	/* on the edge, the printed cost's rounding decides: not asserted */
	if (fabs(direct - (double)self) <= tol || fabs(direct - (double)cpu_self) <= tol) {
		/* (a scaled cost is far from the edge) */
		ck_assert_msg(!scale, "outer: self %lld ns, %.0f ns of probes below", self, direct);
		h_free(&r);
		*cpu_fits = false;
		return false;
	}
	fits = direct < (double)self;
	*cpu_fits = direct < (double)cpu_self;
	ck_assert_msg(is_null(outer, "incl_ns_comp") == !fits,
		      "outer: self %lld ns, %.0f ns of probes below, incl_ns_comp %s", self, direct,
		      json_object_to_json_string(h_get(outer, "incl_ns_comp")));
	ck_assert(is_null(outer, "self_ns_comp") == !fits);
	ck_assert(is_null(outer, "cpu_incl_ns_comp") == !*cpu_fits);
	ck_assert(is_null(outer, "cpu_self_ns_comp") == !*cpu_fits);
	ck_assert(json_object_get_boolean(h_get(outer, "comp_fits")) == (fits && *cpu_fits));
	info = h_get(r.json, "cct_info");
	ck_assert_int_eq(h_num(info, "comp_unfit"), !(fits && *cpu_fits));
	/* the text shows the wall times' */
	if (fits)
		ck_assert_msg(!strstr(r.out, "COMP '-'"), "%s", r.out);
	else
		ck_assert_msg(strstr(r.out,
				     "COMP '-': the probe cost measured at start-up does not "
				     "fit this run in 1 context"),
			      "%s", r.out);
	if (fits) {
		ck_assert_msg(
			fabs((double)(h_num(outer, "incl_ns") - h_num(outer, "incl_ns_comp")) -
			     direct) <= tol,
			"compensated by %lld ns, the probes of %d inner calls cost %.0f",
			h_num(outer, "incl_ns") - h_num(outer, "incl_ns_comp"), K * atoi(N),
			direct);
		ck_assert(fabs((double)(self - h_num(outer, "self_ns_comp")) - direct) <= tol);
		ck_assert_int_ge(h_num(outer, "incl_ns_comp"), h_num(inner, "incl_ns_comp"));
	}
	if (*cpu_fits) {
		ck_assert(fabs((double)(h_num(outer, "cpu_incl_ns") -
					h_num(outer, "cpu_incl_ns_comp")) -
			       direct) <= tol);
		ck_assert_int_ge(h_num(outer, "cpu_incl_ns_comp"),
				 h_num(inner, "cpu_incl_ns_comp"));
	}
	h_free(&r);
	return fits;
}

/* As measured: the contract, whichever way this machine's cost falls
 * (on the AMD hosts 2,000 x 11.8 us was more than outer's whole time). */
START_TEST(compensated_by_the_measured_cost)
{
	bool cpu;

	comp_contract(NULL, &cpu);
}
END_TEST

/* A hundredth of the cost measured fits on any machine (outer's own time
 * holds at least each inner call's traps' way in and out, about half
 * their cost, measured here and on the AMD hosts): exactly that comes off. */
START_TEST(compensated_where_it_fits)
{
	bool cpu;

	ck_assert(comp_contract("0.01", &cpu));
	ck_assert(cpu);
}
END_TEST

/* 20 times the cost measured never fits (outer's own time is its loop
 * and part of its inner calls' traps): the report says so, and shows no
 * compensated figure for outer (null, '-'), rather than 0. */
START_TEST(over_stated_cost_said)
{
	bool cpu;

	ck_assert(!comp_contract("20", &cpu));
	ck_assert(!cpu);
}
END_TEST

/* The figures cabbpf printed ("measured: A ns (nop5), B ns (emulated), C
 * ns ...") into c[3]; whether they were kept from an earlier run. */
static bool printed_cost(const char *err, double c[3])
{
	const char *s = strstr(err, "measured: ");

	ck_assert_msg(s, "no probe cost on stderr:\n%s", err);
	ck_assert_int_eq(sscanf(s, "measured: %lf ns (nop5), %lf ns (emulated), %lf ns", &c[0],
				&c[1], &c[2]),
			 3);
	return strstr(s, " s ago (") != NULL;
}

static void run_costly(struct h_run *r)
{
	char *args[] = {"-q", "-a", "cct", "-f", "inner", "--", (char *)h_target("costly", 0),
			"5",  NULL};

	h_run(r, args);
	h_assert_ok(r);
}

/* The probe cost is measured once and kept (for this boot and this
 * binary) in a directory only root may write: the next run prints the same
 * figures, "N s ago", and skips the measurement; CABBPF_RECALIBRATE=1
 * measures again; a symlink planted at the file is never followed (the
 * file it points to keeps its bytes and mode); a directory others may
 * write is not used at all. */
START_TEST(probe_cost_kept_for_later_runs)
{
	char dir[512], file[600], victim[600], buf[64];
	double a[3], b[3];
	struct stat sb;
	struct h_run r;
	int fd;

	snprintf(dir, sizeof(dir), "%s/run", h_tmp);
	snprintf(file, sizeof(file), "%s/probe-costs", dir);
	snprintf(victim, sizeof(victim), "%s/victim", h_tmp);
	setenv("CABBPF_TEST_RUN_DIR", dir, 1);
	run_costly(&r);
	ck_assert(!printed_cost(r.err, a));
	h_free(&r);
	ck_assert_int_eq(lstat(dir, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 0777, 0700);
	ck_assert_int_eq(lstat(file, &sb), 0);
	ck_assert(S_ISREG(sb.st_mode));
	run_costly(&r);
	ck_assert(printed_cost(r.err, b));
	ck_assert(a[0] == b[0] && a[1] == b[1] && a[2] == b[2]);
	h_free(&r);
	setenv("CABBPF_RECALIBRATE", "1", 1);
	run_costly(&r);
	ck_assert(!printed_cost(r.err, b));
	h_free(&r);
	unsetenv("CABBPF_RECALIBRATE");

	/* a link at the file's path: replaced, its target untouched */
	fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "victim\n", 7), 7);
	close(fd);
	ck_assert_int_eq(unlink(file), 0);
	ck_assert_int_eq(symlink(victim, file), 0);
	run_costly(&r);
	ck_assert(!printed_cost(r.err, b)); /* not read through the link */
	h_free(&r);
	ck_assert_int_eq(stat(victim, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 0777, 0600);
	fd = open(victim, O_RDONLY);
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 7);
	close(fd);
	ck_assert(!memcmp(buf, "victim\n", 7));
	ck_assert_int_eq(lstat(file, &sb), 0);
	ck_assert(S_ISREG(sb.st_mode));

	/* a directory others may write: neither read nor written */
	ck_assert_int_eq(chmod(dir, 0777), 0);
	ck_assert_int_eq(unlink(file), 0);
	run_costly(&r);
	ck_assert(!printed_cost(r.err, b));
	h_free(&r);
	ck_assert_int_ne(lstat(file, &sb), 0);
	run_costly(&r);
	ck_assert(!printed_cost(r.err, b));
	h_free(&r);
	unsetenv("CABBPF_TEST_RUN_DIR");
	unlink(victim);
	rmdir(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("comp_integration");
	TCase *tc = tcase_create("comp");

	if (h_integration_setup("comp", NULL))
		return 1;
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, compensated_by_the_measured_cost);
	tcase_add_test(tc, compensated_where_it_fits);
	tcase_add_test(tc, over_stated_cost_said);
	tcase_add_test(tc, probe_cost_kept_for_later_runs);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
