// SPDX-License-Identifier: BSD-2-Clause
/*
 * Integration suite: the real kernel, real BPF programs, real processes.
 * Each target of tests/targets/ is built at -O0 and -O2 (loop index 0/1) and
 * traced by ./cabbpf exactly as a user runs it; counts and call-graph edges
 * from the JSON report are asserted EXACTLY (tests/targets/README.md gives
 * the expected figures). Needs root and BPF: CI has both, so nothing here
 * skips; without root the suite fails loudly instead of passing silently.
 */
#include <check.h>
#include <sys/types.h>

#include "tests/harness.h"
#include "user/elf/syms.h"

#define OPT(i) ((i) ? 2 : 0)

static void assert_clean_run(const struct h_run *r)
{
	ck_assert_msg(r->status == 0, "cabbpf exit %d, stderr:\n%s", r->status, r->err);
	ck_assert_msg(r->json != NULL, "no JSON report; stderr:\n%s", r->err);
	ck_assert_int_eq(h_num(r->json, "lost"), 0);
	ck_assert_int_eq(h_num(r->json, "order_gaps"), 0);
}

/* fib recursion: exact call count and edges, every return matched. */
START_TEST(recursion_exact)
{
	char *args[] = {"--", (char *)h_target("recurse", OPT(_i)), "20", NULL};
	struct h_run r;

	h_run(&r, args);
	assert_clean_run(&r);
	ck_assert_int_eq(h_calls(r.json, "fib"), 21891); /* 2*F(21)-1 */
	ck_assert_int_eq(h_calls(r.json, "main"), 1);
	ck_assert_int_eq(h_edge(r.json, "main", "fib"), 1);
	ck_assert_int_eq(h_edge(r.json, "fib", "fib"), 21890);
	ck_assert_int_eq(h_edge(r.json, "<root>", "main"), 1);
	ck_assert_int_eq(h_nedges(r.json), 3);
	ck_assert_int_eq(h_num(r.json, "events"), 2 * 21892);
	ck_assert_int_eq(h_returns(r.json, "matched"), 21892);
	ck_assert_int_eq(h_returns(r.json, "missing"), 0);
	ck_assert_int_eq(h_returns(r.json, "orphan"), 0);
	ck_assert_int_eq(h_returns(r.json, "open"), 0);
	h_free(&r);
}
END_TEST

/* --no-times: the same exact counts and edges, and no time recorded. */
START_TEST(no_times_exact)
{
	char *args[] = {"--no-times", "--", (char *)h_target("recurse", OPT(_i)), "20", NULL};
	json_object *fs, *f;
	struct h_run r;
	size_t i;

	h_run(&r, args);
	assert_clean_run(&r);
	ck_assert_int_eq(h_calls(r.json, "fib"), 21891);
	ck_assert_int_eq(h_edge(r.json, "fib", "fib"), 21890);
	ck_assert_int_eq(h_edge(r.json, "main", "fib"), 1);
	ck_assert_int_eq(h_returns(r.json, "matched"), 21892);
	fs = h_get(r.json, "functions");
	ck_assert_ptr_nonnull(fs);
	for (i = 0; i < json_object_array_length(fs); i++) {
		f = json_object_array_get_idx(fs, i);
		ck_assert_int_eq(json_object_get_int64(h_get(f, "incl_ns")), 0);
		ck_assert_int_eq(json_object_get_int64(h_get(f, "self_ns")), 0);
	}
	h_free(&r);
}
END_TEST

/* Several threads: exact counts per thread, keyed by the tids the target
 * itself reports. */
START_TEST(threads_exact_per_thread)
{
	char *args[] = {"--", (char *)h_target("threads", OPT(_i)), "4", "1000", NULL};
	struct h_run r;
	const char *p;
	int seen = 0;

	h_run(&r, args);
	assert_clean_run(&r);
	ck_assert_int_eq(h_calls(r.json, "work"), 10000);
	ck_assert_int_eq(h_calls(r.json, "worker"), 4);
	ck_assert_int_eq(h_edge(r.json, "worker", "work"), 10000);
	ck_assert_int_eq(h_edge(r.json, "<root>", "worker"), 4);
	for (p = strstr(r.err, "tid="); p; p = strstr(p + 1, "tid=")) {
		long tid, calls;

		ck_assert_int_eq(sscanf(p, "tid=%ld calls=%ld", &tid, &calls), 2);
		ck_assert_int_eq(h_thread_calls(r.json, "work", tid), calls);
		ck_assert_int_eq(h_thread_calls(r.json, "worker", tid), 1);
		seen++;
	}
	ck_assert_int_eq(seen, 4);
	h_free(&r);
}
END_TEST

/* A thread forced to hop between CPUs: its events come through two CPUs'
 * rings and CAB buffers, and must still be analysed in program order. */
START_TEST(cpu_hopping_keeps_order)
{
	char *args[] = {"--", (char *)h_target("hop", OPT(_i)), "2000", NULL};
	struct h_run r;
	const char *m;
	long migrations = 0;

	h_run(&r, args);
	assert_clean_run(&r);
	m = strstr(r.err, "migrations=");
	ck_assert_ptr_nonnull(m);
	sscanf(m, "migrations=%ld", &migrations);
	ck_assert_int_gt(migrations, 1000); /* it really hopped */
	ck_assert_int_eq(h_calls(r.json, "hop_step"), 2000);
	ck_assert_int_eq(h_edge(r.json, "main", "hop_step"), 2000);
	/* Out-of-order delivery would break frame matching. */
	ck_assert_int_eq(h_returns(r.json, "matched"), 2001);
	ck_assert_int_eq(h_returns(r.json, "missing"), 0);
	ck_assert_int_eq(h_returns(r.json, "orphan"), 0);
	h_free(&r);
}
END_TEST

/* Recursion deeper than the kernel's 64 pending uretprobes: returns are
 * lost, yet counts and edges (after() is main's child) stay exact. */
START_TEST(deep_recursion_past_uretprobe_limit)
{
	char *args[] = {"--", (char *)h_target("deep", OPT(_i)), "200", NULL};
	struct h_run r;

	h_run(&r, args);
	assert_clean_run(&r);
	ck_assert_int_eq(h_calls(r.json, "down"), 200);
	ck_assert_int_eq(h_calls(r.json, "leaf"), 1);
	ck_assert_int_eq(h_calls(r.json, "after"), 1);
	ck_assert_int_eq(h_edge(r.json, "main", "down"), 1);
	ck_assert_int_eq(h_edge(r.json, "down", "down"), 199);
	ck_assert_int_eq(h_edge(r.json, "down", "leaf"), 1);
	ck_assert_int_eq(h_edge(r.json, "main", "after"), 1);
	ck_assert_int_eq(h_nedges(r.json), 5);
	ck_assert_int_gt(h_returns(r.json, "missing"), 0);
	ck_assert_int_eq(h_returns(r.json, "orphan"), 0);
	ck_assert_int_eq(h_returns(r.json, "open"), 0);
	/* 203 frames: main, 200 down, leaf, after. */
	ck_assert_int_eq(h_returns(r.json, "matched") + h_returns(r.json, "missing"), 203);
	h_free(&r);
}
END_TEST

/* longjmp skips returns: the shadow stack recovers by stack pointer. */
START_TEST(longjmp_recovers)
{
	char *args[] = {"--", (char *)h_target("jump", OPT(_i)), "100", NULL};
	struct h_run r;

	h_run(&r, args);
	assert_clean_run(&r);
	ck_assert_int_eq(h_calls(r.json, "outer"), 100);
	ck_assert_int_eq(h_calls(r.json, "middle"), 100);
	ck_assert_int_eq(h_calls(r.json, "inner"), 100);
	ck_assert_int_eq(h_calls(r.json, "normal"), 1);
	ck_assert_int_eq(h_edge(r.json, "main", "outer"), 100);
	ck_assert_int_eq(h_edge(r.json, "outer", "middle"), 100);
	ck_assert_int_eq(h_edge(r.json, "middle", "inner"), 100);
	ck_assert_int_eq(h_edge(r.json, "main", "normal"), 1);
	ck_assert_int_eq(h_nedges(r.json), 5);
	ck_assert_int_eq(h_returns(r.json, "missing"), 200); /* middle, inner */
	ck_assert_int_eq(h_returns(r.json, "orphan"), 0);
	h_free(&r);
}
END_TEST

/* The target exits mid-trace with frames open: still a full report. */
START_TEST(target_exits_mid_trace)
{
	char *args[] = {"--", (char *)h_target("exits", OPT(_i)), "50", NULL};
	json_object *ex;
	struct h_run r;

	h_run(&r, args);
	assert_clean_run(&r);
	ck_assert_int_eq(h_calls(r.json, "unit"), 50);
	ck_assert_int_eq(h_edge(r.json, "leave_outer", "leave_inner"), 1);
	ck_assert_int_eq(h_returns(r.json, "open"), 3);
	ex = h_get(h_get(r.json, "target"), "exit");
	ck_assert_str_eq(json_object_get_string(ex), "exited with status 3");
	h_free(&r);
}
END_TEST

/* Two threads, eleven functions, default selection: the demo workload. */
START_TEST(demo_exact)
{
	char *args[] = {"--", (char *)h_target("demo", OPT(_i)), NULL};
	struct h_run r;

	h_run(&r, args);
	assert_clean_run(&r);
	ck_assert_int_eq(h_calls(r.json, "next_random"), 30000);
	ck_assert_int_eq(h_calls(r.json, "parse_token"), 30002);
	ck_assert_int_eq(h_calls(r.json, "lookup"), 30384);
	ck_assert_int_eq(h_calls(r.json, "insert"), 768);
	ck_assert_int_eq(h_calls(r.json, "count_words"), 2);
	ck_assert_int_eq(h_edge(r.json, "count_words", "lookup"), 30000);
	ck_assert_int_eq(h_edge(r.json, "merge_tables", "lookup"), 384);
	ck_assert_int_eq(h_edge(r.json, "merge_tables", "insert"), 0);
	ck_assert_int_eq(h_edge(r.json, "count_words", "insert"), 768);
	ck_assert_int_eq(h_num(r.json, "events"), 2 * 151160);
	h_free(&r);
}
END_TEST

/* -f globs and -a: only the selected functions and analyzers report. */
START_TEST(select_functions_and_analyzers)
{
	char *args[] = {"-a", "count", "-f", "f*", "--", (char *)h_target("recurse", OPT(_i)),
			"10", NULL};
	struct h_run r;

	h_run(&r, args);
	assert_clean_run(&r);
	ck_assert_int_eq(h_calls(r.json, "fib"), 177);
	ck_assert_int_eq(h_calls(r.json, "main"), 0);
	ck_assert_int_eq(h_num(r.json, "functions_traced"), 1);
	ck_assert_ptr_null(h_get(r.json, "callgraph"));
	h_free(&r);
}
END_TEST

/* Byte at file offset off of the target's text, as mapped in pid. */
static int mapped_byte(pid_t pid, const char *exe, uint64_t off, unsigned char *out)
{
	char path[64], line[PATH_MAX + 128];
	unsigned long start, end, moff;
	int found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char file[PATH_MAX] = "";

		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %s", &start, &end, &moff, file) < 3)
			continue;
		if (strcmp(file, exe) || off < moff || off >= moff + (end - start))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
		int fd = open(path, O_RDONLY);

		if (fd >= 0 && pread(fd, out, 1, (off_t)(start + off - moff)) == 1)
			found = 0;
		if (fd >= 0)
			close(fd);
		break;
	}
	fclose(f);
	return found;
}

/* -p on a process that started before cabbpf: trace, trigger known work,
 * Ctrl-C; exact count, a report, the target unharmed and free of
 * breakpoints afterwards. */
START_TEST(attach_pid_then_sigint)
{
	const char *exe = h_target("longrun", OPT(_i));
	char out_path[PATH_MAX], err_path[PATH_MAX], pidbuf[16], real[PATH_MAX];
	char *args[] = {"-p", pidbuf, "-f", "burst", "-f", "tick", NULL};
	struct symtab *st = NULL;
	const struct sym *burst;
	unsigned char before, after, file_byte;
	struct h_run r;
	pid_t pid;
	int status, fd;

	snprintf(out_path, sizeof(out_path), "%s/longrun%d-%d.out", h_tmp, _i, (int)getpid());
	snprintf(err_path, sizeof(err_path), "%s/longrun%d-%d.err", h_tmp, _i, (int)getpid());
	close(open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(o, 1);
		dup2(e, 2);
		execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	ck_assert(h_wait_for(out_path, "ready", 5000));
	ck_assert_ptr_nonnull(realpath(exe, real));
	ck_assert_int_eq(syms__load(real, &st), 0);
	burst = syms__find(st, "burst");
	ck_assert_ptr_nonnull(burst);
	fd = open(real, O_RDONLY);
	ck_assert_int_eq(pread(fd, &file_byte, 1, (off_t)burst->offset), 1);
	close(fd);
	ck_assert_int_eq(mapped_byte(pid, real, burst->offset, &before), 0);
	ck_assert_int_eq(before, file_byte);

	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	ck_assert_int_eq(h_start(&r, args, 0, 0), 0);
	ck_assert_msg(h_wait_for(r.err_path, "tracing", 10000), "cabbpf did not start");
	kill(pid, SIGUSR1);
	ck_assert(h_wait_for(out_path, "burst done", 5000));
	kill(r.pid, SIGINT);
	h_finish(&r);
	assert_clean_run(&r);
	ck_assert_str_eq(json_object_get_string(h_get(r.json, "stop_reason")), "interrupted");
	ck_assert_msg(h_calls(r.json, "burst") == 1000, "burst %lld; report:\n%s\n%s",
		      h_calls(r.json, "burst"), r.out, r.err);
	/* main was entered before the attach: burst's callers are unknown. */
	ck_assert_int_eq(h_edge(r.json, "<root>", "burst"), 1000);
	ck_assert_int_gt(h_calls(r.json, "tick"), 0);
	ck_assert_int_eq(h_returns(r.json, "orphan"), 0);

	/* No breakpoint left; the target still runs and exits normally. */
	ck_assert_int_eq(mapped_byte(pid, real, burst->offset, &after), 0);
	ck_assert_int_eq(after, file_byte);
	ck_assert_int_eq(kill(pid, 0), 0);
	kill(pid, SIGTERM);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	syms__free(st);
	h_free(&r);
}
END_TEST

/* -p follows threads created after the attach: exact per-thread counts. */
START_TEST(attach_pid_follows_new_threads)
{
	const char *exe = h_target("spawner", OPT(_i));
	char out_path[PATH_MAX], err_path[PATH_MAX], pidbuf[16];
	char *args[] = {"-p", pidbuf, "-f", "work", "-f", "worker", NULL};
	struct h_run r;
	char *err, *p;
	pid_t pid;
	int status, seen = 0;

	snprintf(out_path, sizeof(out_path), "%s/spawner%d-%d.out", h_tmp, _i, (int)getpid());
	snprintf(err_path, sizeof(err_path), "%s/spawner%d-%d.err", h_tmp, _i, (int)getpid());
	close(open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(o, 1);
		dup2(e, 2);
		execl(exe, exe, "3", "2000", (char *)NULL);
		_exit(127);
	}
	ck_assert(h_wait_for(out_path, "ready", 5000));
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	ck_assert_int_eq(h_start(&r, args, 0, 0), 0);
	ck_assert_msg(h_wait_for(r.err_path, "tracing", 10000), "cabbpf did not start");
	kill(pid, SIGUSR1);
	ck_assert(h_wait_for(out_path, "done", 10000));
	kill(r.pid, SIGINT);
	h_finish(&r);
	assert_clean_run(&r);
	ck_assert_int_eq(h_calls(r.json, "work"), 6000);
	ck_assert_int_eq(h_calls(r.json, "worker"), 3);
	ck_assert_int_eq(h_edge(r.json, "worker", "work"), 6000);
	err = h_slurp(err_path);
	for (p = strstr(err, "tid="); p; p = strstr(p + 1, "tid=")) {
		long tid, calls;

		ck_assert_int_eq(sscanf(p, "tid=%ld calls=%ld", &tid, &calls), 2);
		ck_assert_int_eq(h_thread_calls(r.json, "work", tid), calls);
		seen++;
	}
	ck_assert_int_eq(seen, 3);
	free(err);
	kill(pid, SIGTERM);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	h_free(&r);
}
END_TEST

/*
 * Ring overflow: the smallest ring (1 MiB = 16384 slots per CPU) and a
 * loader frozen (SIGSTOP) from the start to the end of the program, while
 * 4 threads make millions of calls, so every CPU's region fills and the
 * probes drop, whatever the machine's speed. Every call event is either
 * delivered or counted as a lost call event, exactly (I/O drops are
 * counted apart); a drop leaves no hole in a thread's sequence (order_gaps
 * 0) and the claims of programs preempting each other on one CPU never
 * overwrite a slot (a torn slot would show up as a wrong count or an order
 * gap).
 */
START_TEST(ring_overflow_counts_every_drop)
{
	/* --no-guard: a stopped cabbpf must not hold the target's thread
	 * creation (the guard's ptrace events) while the program runs. */
	char *args[] = {
		"--no-guard", "--ring-size", "1", "--", (char *)h_target("threads", OPT(_i)),
		"4",	      "200000",	     NULL};
	const long long calls = 1 + 4 + 200000LL * 4 * 5 / 2; /* main, workers, work */
	json_object *per_cpu;
	long long lost, sum = 0;
	struct h_run r;
	const char *p;
	size_t i;
	int seen = 0;

	pid_t t;
	int k;

	ck_assert_int_eq(h_start(&r, args, 0, 0), 0);
	ck_assert_msg(h_wait_for(r.err_path, "tracing", 10000), "cabbpf did not start");
	/* cabbpf stopped while the whole program runs (millions of events
	 * into 16384-slot rings): the rings must overflow, whatever the
	 * timing. The program ends as a zombie cabbpf has not reaped. */
	kill(r.pid, SIGSTOP);
	t = h_child_of(r.pid);
	ck_assert_int_gt(t, 0);
	for (k = 0; k < 6000 && !h_is_zombie(t); k++)
		usleep(10000);
	ck_assert_msg(h_is_zombie(t), "the target did not finish in 60 s");
	kill(r.pid, SIGCONT);
	h_finish(&r);
	ck_assert_msg(r.status == 0, "cabbpf exit %d, stderr:\n%s", r.status, r.err);
	ck_assert_msg(r.json != NULL, "no JSON report; stderr:\n%s", r.err);
	lost = h_num(r.json, "lost");
	ck_assert_int_gt(lost, 0); /* it really overflowed */
	/* Every call event is either delivered or counted lost as a call
	 * event; lost I/O events (the target's own writes) are apart. */
	ck_assert_int_eq(h_num(r.json, "events") +
				 h_num(h_get(h_get(r.json, "lost_by_kind"), "calls"), "lost"),
			 2 * calls);
	ck_assert_int_eq(h_num(h_get(h_get(r.json, "lost_by_kind"), "calls"), "lost") +
				 h_num(h_get(h_get(r.json, "lost_by_kind"), "io"), "lost") +
				 h_num(h_get(h_get(r.json, "lost_by_kind"), "guard"), "lost"),
			 lost);
	per_cpu = h_get(r.json, "lost_per_cpu");
	ck_assert_ptr_nonnull(per_cpu);
	for (i = 0; i < json_object_array_length(per_cpu); i++)
		sum += json_object_get_int64(json_object_array_get_idx(per_cpu, i));
	ck_assert_int_eq(sum, lost);
	ck_assert_int_eq(h_num(r.json, "order_gaps"), 0);
	for (p = strstr(r.err, "tid="); p; p = strstr(p + 1, "tid=")) {
		long tid, n;
		long long got;

		ck_assert_int_eq(sscanf(p, "tid=%ld calls=%ld", &tid, &n), 2);
		got = h_thread_calls(r.json, "work", tid);
		/* With the loader stopped all along, a thread that starts late
		 * may find the rings full and lose every event: 0 is possible
		 * (the exact check is events + lost above). */
		ck_assert_int_le(got, n);
		ck_assert_int_ge(got, 0);
		seen++;
	}
	ck_assert_int_eq(seen, 4);
	h_free(&r);
}
END_TEST

/* Ctrl-C during `cabbpf -- cmd`: the report is written and cmd ends too. */
START_TEST(sigint_launched_command)
{
	char *args[] = {"-f", "tick", "--", (char *)h_target("longrun", OPT(_i)), NULL};
	struct h_run r;
	pid_t tpid;

	ck_assert_int_eq(h_start(&r, args, 0, 0), 0);
	ck_assert(h_wait_for(r.out_path, "ready", 10000));
	usleep(200 * 1000);
	kill(r.pid, SIGINT);
	h_finish(&r);
	assert_clean_run(&r);
	ck_assert_str_eq(json_object_get_string(h_get(r.json, "stop_reason")), "interrupted");
	ck_assert_int_gt(h_calls(r.json, "tick"), 10);
	tpid = (pid_t)json_object_get_int(h_get(h_get(r.json, "target"), "pid"));
	ck_assert_int_gt(tpid, 0);
	ck_assert_int_eq(kill(tpid, 0), -1); /* gone, and reaped */
	h_free(&r);
}
END_TEST

/* Bad input: a clear message and a non-zero exit each. */
static void expect_failure(char **args, int setuid_nobody, const char *needle)
{
	struct h_run r;

	ck_assert_int_eq(h_start(&r, args, 1, setuid_nobody), 0);
	h_finish(&r);
	ck_assert_msg(r.status != 0, "exit 0 for bad input; stderr:\n%s", r.err);
	ck_assert_msg(strstr(r.err, needle), "stderr lacks '%s':\n%s", needle, r.err);
	ck_assert_msg(!strstr(r.err, "Segmentation"), "crash:\n%s", r.err);
	h_free(&r);
}

START_TEST(bad_no_such_pid)
{
	char pidbuf[16];
	char *args[] = {"-p", pidbuf, NULL};
	pid_t p = 4000000;

	while (kill(p, 0) == 0 || errno != ESRCH)
		p++;
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)p);
	expect_failure(args, 0, "no such process");
}
END_TEST

START_TEST(bad_not_root)
{
	char *args[] = {"--", (char *)h_target("recurse", 0), "5", NULL};

	expect_failure(args, 1, "must run as root");
}
END_TEST

START_TEST(bad_not_elf)
{
	char script[PATH_MAX];
	char *args[] = {"--", script, NULL};
	FILE *f;

	snprintf(script, sizeof(script), "%s/script.sh", h_tmp);
	f = fopen(script, "w");
	ck_assert_ptr_nonnull(f);
	fputs("#!/bin/sh\necho hi\n", f);
	fclose(f);
	chmod(script, 0755);
	expect_failure(args, 0, "not an ELF");
}
END_TEST

START_TEST(bad_no_matching_function)
{
	char *args[] = {"-f", "zzz_no_such_*", "--", (char *)h_target("recurse", 0), "5", NULL};

	expect_failure(args, 0, "no function");
}
END_TEST

START_TEST(bad_unknown_option)
{
	char *args[] = {"--bogus-option", "-p", "1", NULL};

	expect_failure(args, 0, "unknown option");
}
END_TEST

START_TEST(bad_missing_command)
{
	char *args[] = {"--", "/nonexistent/program", NULL};

	expect_failure(args, 0, "no such file");
}
END_TEST

START_TEST(bad_unknown_analyzer)
{
	char *args[] = {"-a", "nosuch", "--", (char *)h_target("recurse", 0), "5", NULL};

	expect_failure(args, 0, "nosuch");
}
END_TEST

/* --json as root: a symlink planted at the path is replaced, never
 * followed; the file it points to keeps its bytes and mode. */
START_TEST(json_never_follows_symlinks)
{
	char victim[PATH_MAX], link[PATH_MAX], dangling[PATH_MAX], absent[PATH_MAX];
	char *args[] = {"-q", "--json", link, "--", (char *)h_target("recurse", 0), "5", NULL};
	char *args2[] = {"-q", "--json", dangling, "--", (char *)h_target("recurse", 0), "5", NULL};
	struct stat sb;
	struct h_run r;
	char *bytes;
	FILE *f;

	snprintf(victim, sizeof(victim), "%s/victim", h_tmp);
	snprintf(link, sizeof(link), "%s/out.json", h_tmp);
	snprintf(dangling, sizeof(dangling), "%s/dangling.json", h_tmp);
	snprintf(absent, sizeof(absent), "%s/absent", h_tmp);
	f = fopen(victim, "w");
	ck_assert_ptr_nonnull(f);
	fputs("root-only secret\n", f);
	fclose(f);
	ck_assert_int_eq(chmod(victim, 0600), 0);
	ck_assert_int_eq(symlink(victim, link), 0);
	ck_assert_int_eq(symlink(absent, dangling), 0);

	ck_assert_int_eq(h_start(&r, args, 1, 0), 0);
	h_finish(&r);
	ck_assert_msg(r.status == 0, "exit %d:\n%s", r.status, r.err);
	bytes = h_slurp(victim);
	ck_assert_str_eq(bytes, "root-only secret\n");
	free(bytes);
	ck_assert_int_eq(stat(victim, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 07777, 0600);
	ck_assert_int_eq(lstat(link, &sb), 0);
	ck_assert(S_ISREG(sb.st_mode)); /* the link was replaced by the report */
	h_free(&r);
	r.json = h_parse_json(link);
	ck_assert_int_eq(h_calls(r.json, "fib"), 15);
	json_object_put(r.json);

	ck_assert_int_eq(h_start(&r, args2, 1, 0), 0);
	h_finish(&r);
	ck_assert_msg(r.status == 0, "exit %d:\n%s", r.status, r.err);
	ck_assert_int_eq(access(absent, F_OK), -1); /* nothing created there */
	ck_assert_int_eq(lstat(dangling, &sb), 0);
	ck_assert(S_ISREG(sb.st_mode));
	h_free(&r);
}
END_TEST

/* Output paths are checked before tracing: a bad one costs no trace, and
 * another user's file is not overwritten. */
START_TEST(json_path_checked_before_tracing)
{
	char nodir[PATH_MAX], theirs[PATH_MAX];
	char *args[] = {"-q", "--json", nodir, "--", (char *)h_target("recurse", 0), "5", NULL};
	char *args2[] = {"-q", "--json", theirs, "--", (char *)h_target("recurse", 0), "5", NULL};
	struct h_run r;
	char *bytes;
	FILE *f;

	snprintf(nodir, sizeof(nodir), "%s/no/such/dir/out.json", h_tmp);
	ck_assert_int_eq(h_start(&r, args, 1, 0), 0);
	h_finish(&r);
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "directory does not exist"));
	ck_assert_ptr_null(strstr(r.err, "tracing"));
	h_free(&r);

	snprintf(theirs, sizeof(theirs), "%s/theirs.json", h_tmp);
	f = fopen(theirs, "w");
	ck_assert_ptr_nonnull(f);
	fputs("not yours\n", f);
	fclose(f);
	ck_assert_int_eq(chown(theirs, 65534, 65534), 0);
	ck_assert_int_eq(h_start(&r, args2, 1, 0), 0);
	h_finish(&r);
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "belongs to another user"));
	bytes = h_slurp(theirs);
	ck_assert_str_eq(bytes, "not yours\n");
	free(bytes);
	h_free(&r);
}
END_TEST

/* A run that ends on an error (here: staging fails, as a test hook
 * makes it) reports what it has and exits 1, with --json or without. */
START_TEST(run_error_exits_1)
{
	char *args[] = {"--", (char *)h_target("recurse", 0), "15", NULL};
	struct h_run r;
	int json;

	setenv("CABBPF_TEST_FAIL_STAGING", "100", 1);
	for (json = 0; json < 2; json++) {
		ck_assert_int_eq(h_start(&r, args, !json, 0), 0);
		h_finish(&r);
		ck_assert_msg(r.status == 1, "exit %d with%s --json:\n%s", r.status,
			      json ? "" : "out", r.err);
		ck_assert_ptr_nonnull(strstr(r.err, "staging events"));
		ck_assert_ptr_nonnull(strstr(r.err, "stopped: error"));
		if (json)
			ck_assert_ptr_nonnull(r.json); /* the partial trace's report */
		h_free(&r);
	}
	unsetenv("CABBPF_TEST_FAIL_STAGING");
}
END_TEST

/* An executable of another architecture is rejected before planning. */
START_TEST(bad_other_arch)
{
	char path[PATH_MAX], cmd[2 * PATH_MAX];
	char *args[] = {"--", path, NULL};
	unsigned char em[2] = {183, 0}; /* EM_AARCH64, little-endian */
	struct h_run r;
	FILE *f;

	snprintf(path, sizeof(path), "%s/aarch64-prog", h_tmp);
	snprintf(cmd, sizeof(cmd), "cp %s %s", h_target("recurse", 0), path);
	ck_assert_int_eq(system(cmd), 0);
	f = fopen(path, "r+");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 18, SEEK_SET), 0); /* e_machine */
	ck_assert_int_eq(fwrite(em, 1, 2, f), 2);
	fclose(f);
	ck_assert_int_eq(h_start(&r, args, 1, 0), 0);
	h_finish(&r);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "built for aarch64"), "stderr:\n%s", r.err);
	ck_assert_ptr_null(strstr(r.err, "plan:"));
	h_free(&r);
}
END_TEST

/* A kernel thread and a zombie each get their own message. */
START_TEST(bad_kernel_thread_and_zombie)
{
	char pid[16];
	char *args[] = {"-p", pid, NULL};
	pid_t z;

	snprintf(pid, sizeof(pid), "2"); /* kthreadd */
	expect_failure(args, 0, "a kernel thread");
	z = fork();
	if (z == 0)
		_exit(0);
	usleep(100000); /* exited, not reaped: a zombie */
	snprintf(pid, sizeof(pid), "%d", (int)z);
	expect_failure(args, 0, "a zombie");
	waitpid(z, NULL, 0);
}
END_TEST

/* execve of the same program while traced frames are open: the old
 * image's frames end "by exec" (no false main -> main edge), the new image
 * is traced on with exact counts. Another program: said so. */
START_TEST(exec_same_and_other)
{
	char *same[] = {"--", (char *)h_target("reexec", OPT(_i)), "50", NULL};
	char *other[] = {"--", (char *)h_target("reexec", OPT(_i)), "50", "other", NULL};
	struct h_run r;

	h_run(&r, same);
	assert_clean_run(&r);
	ck_assert_int_eq(h_calls(r.json, "work"), 100);
	ck_assert_int_eq(h_calls(r.json, "main"), 2);
	ck_assert_int_eq(h_calls(r.json, "hop"), 1);
	ck_assert_int_eq(h_edge(r.json, "<root>", "main"), 2);
	ck_assert_int_eq(h_edge(r.json, "main", "work"), 100);
	ck_assert_int_eq(h_edge(r.json, "main", "hop"), 1);
	ck_assert_int_eq(h_edge(r.json, "main", "main"), 0);
	ck_assert_int_eq(h_nedges(r.json), 3);
	ck_assert_int_eq(h_returns(r.json, "exec"), 2); /* main and hop */
	ck_assert_int_eq(h_returns(r.json, "missing"), 0);
	ck_assert_int_eq(h_returns(r.json, "open"), 0);
	ck_assert_int_eq(h_num(h_get(r.json, "target"), "execs"), 1);
	ck_assert(!json_object_get_boolean(h_get(h_get(r.json, "target"), "exec_other_program")));
	h_free(&r);

	h_run(&r, other);
	assert_clean_run(&r);
	ck_assert_int_eq(h_calls(r.json, "work"), 50);
	ck_assert_int_eq(h_returns(r.json, "exec"), 2);
	ck_assert(json_object_get_boolean(h_get(h_get(r.json, "target"), "exec_other_program")));
	ck_assert_ptr_nonnull(strstr(r.err, "exec'd another program"));
	ck_assert_ptr_nonnull(strstr(r.out, "ANOTHER program"));
	h_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("integration");
	TCase *exact = tcase_create("exact"), *bad = tcase_create("bad-input");
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr,
			"integration: needs root (BPF, uprobes); run the tests with sudo\n");
		printf("0%%: Checks: 1, Failures: 1, Errors: 0\n");
		return 1;
	}
	if (h_setup()) {
		fprintf(stderr, "integration: could not build tests/targets or find ./cabbpf\n");
		printf("0%%: Checks: 1, Failures: 1, Errors: 0\n");
		return 1;
	}
	tcase_set_timeout(exact, 120);
	tcase_set_timeout(bad, 60);
	tcase_add_loop_test(exact, recursion_exact, 0, 2);
	tcase_add_loop_test(exact, exec_same_and_other, 0, 2);
	tcase_add_loop_test(exact, no_times_exact, 0, 2);
	tcase_add_loop_test(exact, threads_exact_per_thread, 0, 2);
	tcase_add_loop_test(exact, cpu_hopping_keeps_order, 0, 2);
	tcase_add_loop_test(exact, deep_recursion_past_uretprobe_limit, 0, 2);
	tcase_add_loop_test(exact, longjmp_recovers, 0, 2);
	tcase_add_loop_test(exact, target_exits_mid_trace, 0, 2);
	tcase_add_loop_test(exact, demo_exact, 0, 2);
	tcase_add_loop_test(exact, select_functions_and_analyzers, 0, 2);
	tcase_add_loop_test(exact, attach_pid_then_sigint, 0, 2);
	tcase_add_loop_test(exact, sigint_launched_command, 0, 2);
	tcase_add_loop_test(exact, attach_pid_follows_new_threads, 0, 2);
	tcase_add_loop_test(exact, ring_overflow_counts_every_drop, 0, 2);
	tcase_add_test(bad, bad_no_such_pid);
	tcase_add_test(bad, bad_not_root);
	tcase_add_test(bad, bad_not_elf);
	tcase_add_test(bad, bad_no_matching_function);
	tcase_add_test(bad, bad_unknown_option);
	tcase_add_test(bad, bad_missing_command);
	tcase_add_test(bad, bad_unknown_analyzer);
	tcase_add_test(bad, json_never_follows_symlinks);
	tcase_add_test(bad, json_path_checked_before_tracing);
	tcase_add_test(bad, run_error_exits_1);
	tcase_add_test(bad, bad_other_arch);
	tcase_add_test(bad, bad_kernel_thread_and_zombie);
	suite_add_tcase(s, exact);
	suite_add_tcase(s, bad);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
