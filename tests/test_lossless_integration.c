// SPDX-License-Identifier: BSD-2-Clause
/*
 * Integration suite for --lossless (issue 13 item 7): the real kernel, a
 * starved cabbpf, the threads target (tests/targets/threads.c) at -O0 (its
 * work() starts with push %rbp: emulated, so two threads call it flat out,
 * ~0.5 M events/s each).
 *
 * cabbpf is starved honestly: once it has attached, the whole process is
 * moved into a cgroup v1 cpu group with a quota of 2 ms per 100 ms (2% of
 * a CPU); the target, launched before, stays outside it. Kernel rings of
 * 1 MiB per CPU (16,384 events) fill in tens of ms while cabbpf sits out
 * 98 ms of every 100.
 *  - without --lossless events are lost (counted): the setting does lose
 *    events, so the next test would catch a --lossless that does not hold;
 *  - with --lossless: 0 lost, every count and edge exact (per thread
 *    too), the target waited (waits > 0, waited_ns > 0), no event from a
 *    thread that could not be stopped, and the target wrote what it does
 *    untraced and exited 0;
 *  - cabbpf killed with SIGKILL while it holds a target thread stopped:
 *    the target runs to its end all the same (exit 0, all its work done),
 *    continued by the watcher (user/trace/watchdog.h).
 * Needs root, BPF and the cgroup v1 cpu controller: no skips.
 */
#include <check.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "tests/harness.h"

#define CPU_CG_ROOT "/sys/fs/cgroup/cpu"
#define QUOTA_US "2000"
#define PERIOD_US "100000"

static char cg_dir[256];

/* The cpu group cabbpf is starved in. */
static int make_cgroup(void)
{
	char path[320];
	FILE *f;

	snprintf(cg_dir, sizeof(cg_dir), CPU_CG_ROOT "/cabbpf-lossless-%d", (int)getpid());
	if (mkdir(cg_dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "lossless: cannot make %s (%s): the cgroup v1 cpu controller is "
				"needed to starve cabbpf\n",
			cg_dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/cpu.cfs_period_us", cg_dir);
	f = fopen(path, "w");
	if (!f || fprintf(f, PERIOD_US "\n") < 0 || fclose(f)) {
		fprintf(stderr, "lossless: cannot write %s\n", path);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", cg_dir);
	f = fopen(path, "w");
	if (!f || fprintf(f, QUOTA_US "\n") < 0 || fclose(f)) {
		fprintf(stderr, "lossless: cannot write %s\n", path);
		return -1;
	}
	return 0;
}

/* Move process pid (every thread: cgroup.procs) into the starved group. */
static void starve(pid_t pid)
{
	char path[320], buf[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg_dir);
	snprintf(buf, sizeof(buf), "%d\n", (int)pid);
	h_write(path, buf);
}

#define K "200000" /* calls of work() by thread 0; thread 1 makes twice as many */

/* cabbpf OPTS -- threads-O0 2 K, starved once it attached; finished. */
static void starved_run(struct h_run *r, const char *const *opts)
{
	char *args[H_MAX_ARGS];
	char *target[] = {(char *)h_target("threads", 0), "2", K, NULL};
	char *pre[16];
	size_t n = 0;

	pre[n++] = "--ring-size";
	pre[n++] = "1";
	pre[n++] = "-a";
	pre[n++] = "count,callgraph";
	for (; *opts; opts++)
		pre[n++] = (char *)*opts;
	pre[n] = NULL;
	h_join_args(args, H_MAX_ARGS, pre, target);
	h_start_until(r, args, "tracing");
	starve(r->pid);
	h_finish(r);
}

/* The target's own two lines: thread 0 made K calls, thread 1 2K, and
 * the report saw exactly those on the same threads. */
static void assert_threads_exact(const struct h_run *r)
{
	long tid[4], calls[4];
	int n = h_thread_lines(r->err, tid, calls, 4), i;
	long k = atol(K);

	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(calls[0] + calls[1], 3 * k);
	ck_assert(calls[0] == k || calls[0] == 2 * k);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(h_thread_calls(r->json, "work", tid[i]), calls[i]);
		ck_assert_int_eq(h_thread_calls(r->json, "worker", tid[i]), 1);
	}
}

START_TEST(starved_loses_without_lossless)
{
	struct h_run r;

	starved_run(&r, (const char *const[]){NULL});
	h_assert_ok(&r);
	/* The setting loses events: what --lossless must prevent. */
	ck_assert_msg(h_num(r.json, "lost") > 0, "no event lost by a starved cabbpf: the test "
						 "setting does not stress --lossless");
	ck_assert_int_gt(h_lost_by_kind(r.json, "calls"), 0);
	ck_assert_ptr_null(h_get(r.json, "lossless"));
	h_free(&r);
}
END_TEST

START_TEST(starved_lossless_exact)
{
	char *target[] = {(char *)h_target("threads", 0), "2", K, NULL};
	json_object *ll;
	struct h_plain p;
	struct h_run r;
	long long k = atoll(K);

	h_plain_run(&p, target);
	starved_run(&r, (const char *const[]){"--lossless", NULL});
	h_assert_clean(&r);
	ck_assert_int_eq(h_num(r.json, "lost"), 0);
	ck_assert_int_eq(h_calls(r.json, "work"), 3 * k);
	ck_assert_int_eq(h_calls(r.json, "worker"), 2);
	ck_assert_int_eq(h_calls(r.json, "main"), 1);
	ck_assert_int_eq(h_edge(r.json, "worker", "work"), 3 * k);
	ck_assert_int_eq(h_edge(r.json, "<root>", "worker"), 2);
	ck_assert_int_eq(h_nedges(r.json), 3);
	ck_assert_int_eq(h_returns(r.json, "missing"), 0);
	ck_assert_int_eq(h_returns(r.json, "orphan"), 0);
	assert_threads_exact(&r);
	/* The target waited for the starved cabbpf, and said how long. */
	ll = h_get(r.json, "lossless");
	ck_assert_ptr_nonnull(ll);
	ck_assert_int_gt(h_num(ll, "waits"), 0);
	ck_assert_int_gt(h_num(ll, "waited_ns"), 0);
	ck_assert_int_ge(h_num(ll, "stop_requests"), h_num(ll, "waits"));
	ck_assert_int_eq(h_num(ll, "unheld_past_mark"), 0);
	ck_assert_ptr_nonnull(strstr(r.out, "lossless: the target waited for cabbpf"));
	/* Unharmed: the same work done and the same exit as untraced (its
	 * stderr lines carry thread ids, which differ from run to run; it
	 * writes nothing on stdout, where the report goes). */
	ck_assert_str_eq(p.out, "");
	ck_assert(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0);
	ck_assert_str_eq(h_exit(r.json), "exited with status 0");
	{
		long tid[4], calls[4];

		ck_assert_int_eq(h_thread_lines(p.err, tid, calls, 4), 2);
		ck_assert_int_eq(calls[0] + calls[1], 3 * k);
	}
	h_plain_free(&p);
	h_free(&r);
}
END_TEST

/* Whether a thread of pid is in a ptrace stop (state t). */
static int traced_stop(pid_t pid)
{
	char path[320], buf[512], *s;
	struct dirent *de;
	DIR *d;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		s = fgets(buf, sizeof(buf), f);
		fclose(f);
		s = s ? strrchr(buf, ')') : NULL;
		found = s && s[1] == ' ' && s[2] == 't';
	}
	closedir(d);
	return found;
}

START_TEST(killed_while_holding)
{
	char *target[] = {(char *)h_target("threads", 0), "2", "3000000", NULL};
	char *pre[] = {"--lossless", "--ring-size", "1", "-a", "count", NULL};
	char *args[H_MAX_ARGS], *err;
	long tid[4], calls[4];
	struct h_run r;
	pid_t tg = 0, w;
	int st = 0, i, held = 0;

	/* The target outlives cabbpf: as the subreaper, this test reaps it
	 * and sees how it ended. */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	h_join_args(args, H_MAX_ARGS, pre, target);
	h_start_until(&r, args, "tracing");
	tg = h_child_of(r.pid);
	ck_assert_int_gt(tg, 0);
	starve(r.pid);
	/* Past the threads' creation (their clone stops are ptrace stops
	 * too), wait for a thread held at the high-water mark. */
	usleep(300000);
	for (i = 0; i < 3000 && !held; i++) {
		held = traced_stop(tg);
		if (!held)
			usleep(5000);
	}
	ck_assert_msg(held, "no target thread was ever held by the starved cabbpf");
	kill(r.pid, SIGKILL);
	h_finish(&r);
	ck_assert_int_eq(r.status, 128 + SIGKILL);
	/* Left to itself, the target would stay stopped forever: it must end
	 * on its own, having done all its work. */
	for (i = 0; i < 12000; i++) {
		w = waitpid(tg, &st, WNOHANG);
		if (w == tg)
			break;
		usleep(10000);
	}
	ck_assert_msg(w == tg, "the target did not end within 120 s after cabbpf's SIGKILL "
			       "(left stopped?)");
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	err = h_slurp(r.err_path);
	ck_assert_int_eq(h_thread_lines(err, tid, calls, 4), 2);
	ck_assert_int_eq(calls[0] + calls[1], 9000000);
	free(err);
	/* The watcher, reparented here too, ends within its 2 s. */
	while (waitpid(-1, &st, WNOHANG) > 0)
		;
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	h_free(&r);
}
END_TEST

static void remove_cgroup(void)
{
	if (cg_dir[0])
		rmdir(cg_dir);
}

int main(void)
{
	Suite *s = suite_create("lossless_integration");
	TCase *tc = tcase_create("lossless");
	int rc;

	if (h_integration_setup("lossless", make_cgroup))
		return 1;
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, starved_loses_without_lossless);
	tcase_add_test(tc, starved_lossless_exact);
	tcase_add_test(tc, killed_while_holding);
	suite_add_tcase(s, tc);
	rc = h_run_suite(s);
	remove_cgroup();
	return rc;
}
