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
 *
 * What each test needs from that setting is made certain, not left to the
 * machine's timing: the target's threads exist and wait (threads' GO
 * file) while cabbpf is starved and then stopped (SIGSTOP) outright; only
 * then do they start calling work(), and cabbpf is let go on (SIGCONT, still
 * starved) once what must happen has happened where the test can see it:
 *  - without --lossless the whole program runs while cabbpf reads nothing:
 *    1.2 M call events into rings that hold 16,384 per CPU, so events are
 *    lost (counted; delivered + lost = made, exactly): the setting does
 *    lose events, so the next test would catch a --lossless that does not
 *    hold;
 *  - with --lossless a target thread is seen held at the high-water mark
 *    (a ptrace stop) while cabbpf is stopped; then, starved, 0 lost, every
 *    count and edge exact (per thread too), the target waited (waits > 0,
 *    waited_ns > 0), no event from a thread that could not be stopped, and
 *    the target wrote what it does untraced and exited 0;
 *  - -p and -d: cabbpf lets go of a running target while holding its
 *    threads (one is held when the run goes on): the target runs on to its
 *    normal end, all its work done;
 *  - cabbpf killed with SIGKILL while it holds a target thread stopped:
 *    the target runs to its end all the same (exit 0, all its work done),
 *    continued by the watcher (user/trace/watchdog.h), also when the held
 *    thread cannot run for a while after cabbpf's death (frozen).
 * Needs root, BPF and the cgroup v1 cpu and freezer controllers: no skips.
 */
#include <check.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "tests/harness.h"

#define CPU_CG_ROOT "/sys/fs/cgroup/cpu"
#define FREEZER_ROOT "/sys/fs/cgroup/freezer"
#define QUOTA_US "2000"
#define PERIOD_US "100000"

static char cg_dir[256], frz_dir[256];

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
	snprintf(frz_dir, sizeof(frz_dir), FREEZER_ROOT "/cabbpf-lossless-%d", (int)getpid());
	if (mkdir(frz_dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "lossless: cannot make %s (%s): the cgroup v1 freezer is needed\n",
			frz_dir, strerror(errno));
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
#define KN 200000LL
/* Call events the target makes with K: main, 2 workers and 3K work()
 * calls, each an entry and a return. */
#define MADE (2 * (1 + 2 + 3 * KN))
/* --ring-size 1: 1 MiB of 64-byte slots per CPU. */
#define RING_SLOTS 16384LL
/* Call events the target makes before its threads pass the GO file:
 * main's and the two workers' entries. */
#define BEFORE_GO 3

/* A fresh path for the target's GO file (none there yet). */
static void go_path(char *buf, size_t len)
{
	static int n;

	snprintf(buf, len, "%s/go-%d-%d", h_tmp, (int)getpid(), ++n);
	unlink(buf);
}

/* Create the GO file at path. Returns 1 if made. No assertion: it is
 * called while cabbpf is stopped, which a failing test would leave so. */
static int go_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

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

/* Wait (up to H_PATIENCE * ms) until a thread of pid is in a ptrace stop.
 * Past its GO file, with cabbpf stopped, nothing but the BPF program's
 * request at the high-water mark stops a thread of threads: a thread
 * seen so is held. Returns 1 if seen. */
static int wait_held(pid_t pid, int ms)
{
	int i;

	for (i = 0; i < ms / 5 * H_PATIENCE; i++) {
		if (traced_stop(pid))
			return 1;
		usleep(5000);
	}
	return 0;
}

/* The launched target: cabbpf's child running the threads binary, once
 * it waits for its GO file (no other child of cabbpf then: the probe-cost
 * calibration's is reaped before "tracing", the watcher is not its child). */
static pid_t launched_target(const struct h_run *r)
{
	pid_t t = h_child_of(r->pid);
	char link[64], exe[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)t);
	n = t > 0 ? readlink(link, exe, sizeof(exe) - 1) : -1;
	ck_assert_msg(n > 0 && (exe[n] = 0, strstr(exe, "threads-O0")),
		      "no threads target under cabbpf (child %d)", (int)t);
	return t;
}

/*
 * cabbpf OPTS -- threads-O0 2 K GO, starved; finished. cabbpf is stopped
 * before the threads start their work, and let go on (starved) once the
 * run has reached the state the test needs: without --lossless the whole
 * program has run (its two lines are out), with it a thread is held.
 */
static void starved_run(struct h_run *r, const char *const *opts, int lossless)
{
	char go[PATH_MAX], *args[H_MAX_ARGS], *pre[16];
	char *target[] = {(char *)h_target("threads", 0), "2", K, go, NULL};
	int waiting, reached = 0;
	size_t n = 0;
	pid_t t;

	go_path(go, sizeof(go));
	pre[n++] = "--ring-size";
	pre[n++] = "1";
	pre[n++] = "-a";
	pre[n++] = "count,callgraph";
	for (; *opts; opts++)
		pre[n++] = (char *)*opts;
	pre[n] = NULL;
	h_join_args(args, H_MAX_ARGS, pre, target);
	h_start_until(r, args, H_TRACING);
	waiting = h_wait_run(r, "threads: waiting for GO", 10000) > 0;
	if (!waiting)
		h_interrupt(r);
	ck_assert_msg(waiting, "the target's threads did not start: %s", h_run_why(r));
	t = launched_target(r);
	starve(r->pid);
	kill(r->pid, SIGSTOP);
	if (!go_file(go))
		reached = 0;
	else if (lossless)
		reached = wait_held(t, 60000);
	else
		reached = h_wait_run_in(r, r->err_path, "tid=", 2, 60000) > 0;
	/* Let go on whatever happened: nothing is left stopped, and the
	 * assertion comes after. */
	kill(r->pid, SIGCONT);
	h_finish(r);
	ck_assert_msg(reached, lossless ? "no target thread held while cabbpf was stopped"
					: "the target did not finish while cabbpf was stopped");
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
	long long lost, ncpus;
	struct h_run r;

	starved_run(&r, (const char *const[]){NULL}, 0);
	h_assert_ok(&r);
	/* The setting loses events: what --lossless must prevent. Every call
	 * event is delivered or counted lost; while cabbpf read nothing the
	 * rings could keep at most RING_SLOTS each of them. */
	lost = h_lost_by_kind(r.json, "calls");
	ncpus = (long long)json_object_array_length(h_get(r.json, "lost_per_cpu"));
	ck_assert_int_gt(ncpus, 0);
	ck_assert_int_eq(h_num(r.json, "events") + lost, MADE);
	ck_assert_msg(lost >= MADE - BEFORE_GO - ncpus * RING_SLOTS,
		      "%lld call events lost of %lld made, with %lld CPUs' rings of %lld", lost,
		      MADE, ncpus, RING_SLOTS);
	ck_assert_int_ge(h_num(r.json, "lost"), lost);
	ck_assert_ptr_null(h_get(r.json, "lossless"));
	h_free(&r);
}
END_TEST

START_TEST(starved_lossless_exact)
{
	/* Untraced, the GO file is there from the start (any existing path). */
	char *target[] = {(char *)h_target("threads", 0), "2", K, "/", NULL};
	json_object *ll;
	struct h_plain p;
	struct h_run r;
	long long k = atoll(K);

	h_plain_run(&p, target);
	starved_run(&r, (const char *const[]){"--lossless", NULL}, 1);
	h_assert_clean(&r);
	ck_assert_int_eq(h_num(r.json, "lost"), 0);
	ck_assert_int_eq(h_num(r.json, "events"), MADE);
	ck_assert_int_eq(h_calls(r.json, "work"), 3 * k);
	ck_assert_int_eq(h_calls(r.json, "worker"), 2);
	ck_assert_int_eq(h_calls(r.json, "main"), 1);
	ck_assert_int_eq(h_edge(r.json, "worker", "work"), 3 * k);
	ck_assert_int_eq(h_edge(r.json, "<root>", "worker"), 2);
	ck_assert_int_eq(h_nedges(r.json), 3);
	ck_assert_int_eq(h_returns(r.json, "missing"), 0);
	ck_assert_int_eq(h_returns(r.json, "orphan"), 0);
	assert_threads_exact(&r);
	/* The target waited for the starved cabbpf (a thread was seen held),
	 * and said how long. */
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

START_TEST(killed_while_holding)
{
	char go[PATH_MAX];
	char *target[] = {(char *)h_target("threads", 0), "2", "3000000", go, NULL};
	char *pre[] = {"--lossless", "--ring-size", "1", "-a", "count", NULL};
	char *args[H_MAX_ARGS], *err;
	long tid[4], calls[4];
	struct h_run r;
	int st, waiting, held = 0;
	pid_t tg;

	/* The target outlives cabbpf: as the subreaper, this test reaps it
	 * and sees how it ended. */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	go_path(go, sizeof(go));
	h_join_args(args, H_MAX_ARGS, pre, target);
	h_start_until(&r, args, H_TRACING);
	/* The threads exist (their clone stops, ptrace stops too, are behind
	 * them); cabbpf starved and stopped; then the work starts, and a
	 * thread is held at the high-water mark: cabbpf cannot drain. */
	waiting = h_wait_run(&r, "threads: waiting for GO", 10000) > 0;
	if (waiting) {
		tg = launched_target(&r);
		starve(r.pid);
		kill(r.pid, SIGSTOP);
		held = go_file(go) && wait_held(tg, 60000);
	}
	/* SIGKILL ends a stopped process too. */
	kill(r.pid, SIGKILL);
	h_finish(&r);
	ck_assert_msg(waiting, "the target's threads did not start:\n%s", r.err);
	ck_assert_msg(held, "no target thread was held by the stopped cabbpf");
	ck_assert_int_eq(r.status, 128 + SIGKILL);
	/* Left to itself, the target would stay stopped forever: it must end
	 * on its own, having done all its work. */
	st = h_reap_unless_left_stopped(tg);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	err = h_slurp(r.err_path);
	ck_assert_int_eq(h_thread_lines(err, tid, calls, 4), 2);
	ck_assert_int_eq(calls[0] + calls[1], 9000000);
	free(err);
	/* The watcher, reparented here too, ends on its own. */
	while (waitpid(-1, &st, WNOHANG) > 0)
		;
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	h_free(&r);
}
END_TEST

/* -p, -d: cabbpf lets go of a running target while a thread of it is held
 * at the high-water mark: the target runs on untraced to its normal end.
 * Which run this is, is made certain: the target waits for its GO file
 * until cabbpf is attached, starved and stopped, and a thread is seen
 * held before cabbpf goes on (to its -d). K is such that no traced run of
 * 2 s could finish (4 x 10^7 calls of ~1 us), and small enough to be done
 * untraced in a moment. Restored from bfd033f: there, without the GO file
 * and with a spawn that returned before the target's exec, cabbpf could
 * find this test's own binary at /proc/PID/exe, probe it, and see no
 * event of the threads program (waits 0). */
START_TEST(let_go_while_holding)
{
	char go[PATH_MAX];
	char *target[] = {(char *)h_target("threads", 0), "2", "40000000", go, NULL};
	char *opts[] = {"--lossless", "--ring-size", "1", "-a", "count", "-d", "2", NULL};
	char real[PATH_MAX];
	long tid[4], calls[4];
	struct h_proc tp;
	struct h_run r;
	json_object *ll;
	char *err;
	int st, held;

	go_path(go, sizeof(go));
	h_spawn(&tp, target, NULL, NULL);
	ck_assert(h_wait_for(tp.err_path, "threads: waiting for GO", 10000));
	h_start_pid(&r, tp.pid, opts, H_TRACING);
	starve(r.pid);
	kill(r.pid, SIGSTOP);
	held = go_file(go) && wait_held(tp.pid, 60000);
	kill(r.pid, SIGCONT);
	h_finish(&r);
	ck_assert_msg(held, "no target thread held while cabbpf was stopped");
	h_assert_clean(&r);
	/* The threads program was traced (not what PID ran before its exec). */
	ck_assert_ptr_nonnull(realpath(h_target("threads", 0), real));
	ck_assert_str_eq(json_object_get_string(h_get(h_get(r.json, "target"), "binary")), real);
	ck_assert_str_eq(json_object_get_string(h_get(r.json, "stop_reason")), "duration reached");
	ck_assert_int_gt(h_calls(r.json, "work"), 0);
	ll = h_get(r.json, "lossless");
	ck_assert_ptr_nonnull(ll);
	ck_assert_int_gt(h_num(ll, "waits"), 0);
	ck_assert_int_eq(h_num(ll, "unheld_past_mark"), 0);
	/* Nothing stopped is left behind: the target finishes its work. */
	st = h_reap_unless_left_stopped(tp.pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	err = h_slurp(tp.err_path);
	ck_assert_int_eq(h_thread_lines(err, tid, calls, 4), 2);
	ck_assert_int_eq(calls[0] + calls[1], 120000000L);
	free(err);
	h_free(&r);
}
END_TEST

/* Freeze (or thaw) every task of the freezer group, and wait until the
 * kernel says it is done. Returns 1 when it is. */
static int freeze(int on)
{
	const char *want = on ? "FROZEN" : "THAWED";
	char path[320], st[64] = "";
	int i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/freezer.state", frz_dir);
	f = fopen(path, "w");
	if (!f || fputs(on ? "FROZEN\n" : "THAWED\n", f) < 0 || fclose(f))
		return 0;
	for (i = 0; i < 1000 * H_PATIENCE; i++) {
		/* a cgroup file's size reads as 0: no h_slurp */
		f = fopen(path, "r");
		if (!f || !fgets(st, sizeof(st), f))
			st[0] = 0;
		if (f)
			fclose(f);
		if (!strncmp(st, want, 6))
			return 1;
		usleep(10000);
	}
	return 0;
}

/* A child of this process (its subreaper) whose name is comm, or 0; a
 * zombie does not count (the guard's tracer process, ended, beside the
 * watcher it forked). */
static pid_t child_named(const char *comm)
{
	pid_t me = getpid(), found = 0;
	struct dirent *de;
	DIR *d = opendir("/proc");

	while (d && !found && (de = readdir(d))) {
		char path[300], buf[512], *p;
		pid_t pid = (pid_t)atoi(de->d_name);
		FILE *f;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f);
		fclose(f);
		/* "pid (comm) state ppid" */
		if (p && (p = strrchr(buf, ')')) && p[2] != 'Z' && atoi(p + 4) == (int)me &&
		    !strncmp(strchr(buf, '(') + 1, comm, strlen(comm)) &&
		    strchr(buf, '(')[1 + strlen(comm)] == ')')
			found = pid;
	}
	if (d)
		closedir(d);
	return found;
}

/*
 * cabbpf killed while it holds a target thread that then cannot run for a
 * while (its cgroup frozen, as a paused container's is): the thread, let
 * go by the kernel with its SIGSTOP still to take, takes it only when it
 * runs again, long after cabbpf's death. The watcher must still be there
 * then to continue the target: it is, as long as the frozen thread has
 * not run (a watch of a fixed 2 s was gone, and the target stayed
 * stopped). Frozen 5 s: a scenario, not a wait; the watcher (reparented
 * to this test) must be alive at the thaw, and the target must end with
 * its work done, whatever the load.
 */
START_TEST(killed_while_holding_frozen)
{
	char go[PATH_MAX], procs[320];
	char *target[] = {(char *)h_target("threads", 0), "2", "3000000", go, NULL};
	char *pre[] = {"--lossless", "--ring-size", "1", "-a", "count", NULL};
	char *args[H_MAX_ARGS], *err;
	long tid[4], calls[4];
	struct h_run r;
	int st, waiting, held = 0, frozen = 0, thawed, watching = 0;
	pid_t tg = 0, watcher = 0;

	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	go_path(go, sizeof(go));
	h_join_args(args, H_MAX_ARGS, pre, target);
	h_start_until(&r, args, H_TRACING);
	waiting = h_wait_run(&r, "threads: waiting for GO", 10000) > 0;
	if (waiting) {
		tg = launched_target(&r);
		starve(r.pid);
		kill(r.pid, SIGSTOP);
		held = go_file(go) && wait_held(tg, 60000);
	}
	if (held) {
		FILE *f;

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", frz_dir);
		f = fopen(procs, "w");
		if (f) {
			int ok = fprintf(f, "%d\n", (int)tg) > 0;

			ok = !fclose(f) && ok;
			frozen = ok && freeze(1);
		}
	}
	/* Nothing asserted while cabbpf is stopped: it would stay so. */
	kill(r.pid, SIGKILL);
	h_finish(&r);
	if (frozen) {
		sleep(5);
		/* the watcher, or with a guard the guard's tracer process,
		 * which watches in its place (user/trace/guardian.h) */
		watcher = child_named("cabbpf");
		if (!watcher)
			watcher = child_named("cabbpf-guard");
		watching = watcher > 0 && !h_is_zombie(watcher);
	}
	thawed = !frozen || freeze(0);
	ck_assert_msg(waiting, "the target's threads did not start:\n%s", r.err);
	ck_assert_msg(held, "no target thread was held by the stopped cabbpf");
	ck_assert_msg(frozen && thawed, "the freezer did not freeze and thaw the target");
	ck_assert_msg(watching, "the watcher left while the target was frozen (pid %d)",
		      (int)watcher);
	ck_assert_int_eq(r.status, 128 + SIGKILL);
	st = h_reap_unless_left_stopped(tg);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	err = h_slurp(r.err_path);
	ck_assert_int_eq(h_thread_lines(err, tid, calls, 4), 2);
	ck_assert_int_eq(calls[0] + calls[1], 9000000);
	free(err);
	while (waitpid(-1, &st, WNOHANG) > 0)
		;
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	h_free(&r);
}
END_TEST

static void remove_cgroup(void)
{
	if (cg_dir[0])
		h_rm_cgroup(cg_dir);
	if (frz_dir[0])
		h_rm_cgroup(frz_dir);
}

int main(void)
{
	Suite *s = suite_create("lossless_integration");
	TCase *tc = tcase_create("lossless");
	/* The kernel matrix's cases (tests/vm: make vmtest runs them on each
	 * kernel), also run here with the rest. */
	TCase *matrix = tcase_create("matrix");
	int rc;

	if (h_integration_setup("lossless", make_cgroup))
		return 1;
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, starved_loses_without_lossless);
	tcase_add_test(tc, killed_while_holding);
	tcase_add_test(tc, let_go_while_holding);
	tcase_add_test(tc, killed_while_holding_frozen);
	tcase_set_timeout(matrix, 240);
	tcase_add_test(matrix, starved_lossless_exact);
	suite_add_tcase(s, matrix);
	suite_add_tcase(s, tc);
	rc = h_run_suite(s);
	remove_cgroup();
	return rc;
}
