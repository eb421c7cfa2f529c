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
 */
#include <check.h>
#include <signal.h>
#include <sys/wait.h>

#include "tests/harness.h"
#include "user/elf/syms.h"

#define OPT(i) ((i) ? 2 : 0)

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

/* Stop r (started) the way s says; -d runs stop by themselves. */
static void stop_run(struct h_run *r, enum stop s)
{
	if (s == STOP_DURATION) {
		h_finish(r);
		return;
	}
	/* Some calls traced first (hot never rests: 0.3 s is thousands). */
	usleep(300 * 1000);
	kill(r->pid, s == STOP_SIGINT ? SIGINT : SIGTERM);
	h_finish(r);
}

/* `cabbpf -- hot` stopped by Ctrl-C, SIGTERM or -d while tick() runs in a
 * loop: _i = stop * 2 + (O2). */
START_TEST(stop_launched_no_false_edges)
{
	enum stop s = (enum stop)(_i / 2);
	char *args[] = {"-f", "tick", "-f", "outer", "-f", "inner", "-d", "1", "--",
			(char *)h_target("hot", OPT(_i % 2)), NULL};
	struct h_run r;

	if (s != STOP_DURATION) {
		args[6] = "-f"; /* no -d: "-f inner" once more */
		args[7] = "inner";
	}
	ck_assert_int_eq(h_start(&r, args, 0, 0), 0);
	if (s != STOP_DURATION)
		ck_assert(h_wait_for(r.out_path, "ready", 10000));
	stop_run(&r, s);
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
	char *opts[] = {"-f", "tick", "-f", "outer", "-f", "inner", "-d", "1", NULL};
	char real[PATH_MAX];
	unsigned char file_byte, after;
	struct symtab *st = NULL;
	const struct sym *tick;
	struct h_proc t;
	struct h_run r;
	int fd;

	if (s != STOP_DURATION)
		opts[6] = NULL;
	ck_assert_ptr_nonnull(realpath(exe, real));
	ck_assert_int_eq(syms__load(real, &st), 0);
	tick = syms__find(st, "tick");
	ck_assert_ptr_nonnull(tick);
	fd = open(real, O_RDONLY);
	ck_assert_int_eq(pread(fd, &file_byte, 1, (off_t)tick->offset), 1);
	close(fd);

	h_spawn(&t, target, NULL, "ready");
	h_start_pid(&r, t.pid, opts, "tracing");
	stop_run(&r, s);
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
	char *args[] = {"-f", "tick", "-d", "1", "--", (char *)h_target("hot", 2), NULL};
	struct h_run r;
	double d;

	h_run(&r, args);
	h_assert_clean(&r);
	d = json_object_get_double(h_get(r.json, "duration_s"));
	ck_assert_msg(d >= 1.0, "duration %.3f s with -d 1", d);
	h_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attach-integration");
	TCase *tc = tcase_create("gate");

	if (h_integration_setup("attach-integration", NULL))
		return 1;
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, stop_launched_no_false_edges, 0, 6);
	tcase_add_loop_test(tc, pid_busy_no_false_edges, 0, 6);
	tcase_add_test(tc, duration_is_between_the_gates);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
