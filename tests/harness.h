/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The integration suites' harness (tests/harness.c, linked into every test
 * binary): build the target programs, launch a target untraced and traced
 * and compare the two (the target is never harmed), run ./cabbpf as a user
 * would, read its JSON report (json-c), the expected results of
 * tests/expected/targets.txt, and the assertions every suite makes.
 *
 * Threads: single-threaded test code. The assertions (h_assert_*, h_check*,
 * h_expected, h_traced_same, ...) use libcheck's ck_assert: call them from a
 * test (a START_TEST body or a function it calls), where a failure ends
 * the test. Strings returned as "static buffer" are overwritten by later
 * calls (a few are kept: see each function).
 */
#ifndef TESTS_HARNESS_H
#define TESTS_HARNESS_H

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#define H_MAX_ARGS 64

/* Directory with the built targets (.output/targets), the cabbpf binary
 * under test (absolute), and this run's scratch directory (h_setup). */
extern char h_targets[256];
extern char h_cabbpf[PATH_MAX];
extern char h_tmp[256];

/* ------------------------------------------------------------- setup -- */

/* Build every target at -O0 and -O2 once, make h_tmp, and run the cabbpf
 * binary at path bin. Returns 0 or -1. */
int h_setup_bin(const char *bin);

/* h_setup_bin for ./cabbpf. */
int h_setup(void);

/* An integration suite's start: needs root, then h_setup, then extra (if
 * not NULL: the suite's own preparation, 0 or -1). On failure says why on
 * stderr, prints a failed check summary (tests/run.sh counts it) and
 * returns -1; else 0. suite: the suite's name, for the message. With
 * CABBPF_TEST_SETUP_ONLY set in the environment it ends the process (exit
 * status 0) once set up: tests/vm builds on the host what a suite would
 * build at its start, before the guests run it. */
int h_integration_setup(const char *suite, int (*extra)(void));

/* Run suite s (which it frees) and return main's exit status: 0 when
 * every test passed, else 1. Then removes h_tmp if every test passed (it
 * says where it is kept otherwise): nothing may use it afterwards. */
int h_run_suite(Suite *s);

/* Write text to the file at path (created or truncated, mode 0644 less
 * umask); asserts it was written whole. */
void h_write(const char *path, const char *text);

/* Run the shell command made of fmt and its arguments (printf-style),
 * stdout and stderr as the test's; asserts it exited 0. */
void h_shell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Path of target NAME built at level opt (0 or 2). Static buffer (four
 * in turn). */
const char *h_target(const char *name, int opt);

/* A C++ target by flavour i (0..3): bit 0 -O0/-O2, bit 1 g++/clang++,
 * e.g. exc-gxx-O0 ... exc-clangxx-O2. Static buffer (four in turn). */
const char *h_cxx_target(const char *name, int i);

/* ------------------------------------------------------ running cabbpf -- */

struct h_run {
	int status;	   /* cabbpf's exit code, or 128+signal */
	char *err;	   /* everything written on stderr (cabbpf and target) */
	char *out;	   /* stdout */
	json_object *json; /* parsed --json file, NULL if none */
	pid_t pid;	   /* while running (h_start) */
	int ended;	   /* cabbpf has exited: seen by a wait (h_run_ended) or h_finish */
	int wait_status;   /* its wait status once ended (h_describe) */
	char json_path[PATH_MAX];
	char out_path[PATH_MAX];
	char err_path[PATH_MAX];
	char copy_dir[64]; /* h_nobody_copy's directory, removed by h_finish */
	int launched;	   /* cabbpf -- COMMAND: it exits with COMMAND's status */
};

/* The whole file at path, malloc'd ("" if unreadable); the caller frees. */
char *h_slurp(const char *path);

/* A copy of the file at path in a fresh world-readable directory of
 * /tmp (its name into dir), executable by anyone; *out points to a static
 * buffer. Returns 0 or -1. */
int h_nobody_copy(const char *path, char **out, char dir[64]);

/* Parse the JSON file at path with room for deep nesting (a calling-context
 * tree nests two levels per call level; json-c's default limit is 32).
 * NULL if the file is missing or not JSON. The caller puts the object. */
json_object *h_parse_json(const char *path);

/* Start cabbpf with args (NULL-terminated, without argv[0]); --json is
 * added unless no_json. setuid_nobody runs it as uid 65534. Returns 0 or
 * -1. h_finish collects it. */
int h_start(struct h_run *r, char *const *args, int no_json, int setuid_nobody);

/* h_start (not as nobody) with only descriptors 0, 1, 2 open and at most
 * nofile descriptors (RLIMIT_NOFILE, soft and hard): cabbpf runs out of
 * them at the same point every time. */
int h_start_nofile(struct h_run *r, char *const *args, int no_json, int nofile);

/* Wait for a started cabbpf, then collect its outputs (at once if it has
 * already exited: a wait that saw it end left it unreaped). */
void h_finish(struct h_run *r);

/* Ctrl-C a started cabbpf (SIGINT), then h_finish. */
void h_interrupt(struct h_run *r);

/* Run to completion. */
void h_run(struct h_run *r, char *const *args);

/* Whether this kernel has the feature named (as cabbpf --features names
 * it: "uprobe_multi", "uprobe_session", ...), as cabbpf --features --json
 * says; read once a process. The matrix's kernels differ (tests/vm): a
 * test asserts the path each takes, never skips. */
int h_kernel_has(const char *feature);

/* Free what h_finish collected; r may be zeroed or already freed. */
void h_free(struct h_run *r);

/* How many times longer than on a quiet machine the harness waits for
 * what must come (a line on stderr, a process's exit): a test never fails
 * because the machine is busy, only when the thing does not come. The
 * test cases' own limits' multiplier, CK_TIMEOUT_MULTIPLIER (tests/run.sh
 * sets 6; tests/vm 20 under emulation), at least 6. */
int h_patience(void);
#define H_PATIENCE h_patience()

/* Wait until file path contains needle, up to H_PATIENCE * ms. Returns 1
 * if found. Not for what a running cabbpf (or the target it launched)
 * writes: h_wait_run, which stops when cabbpf does. */
int h_wait_for(const char *path, const char *needle, int ms);

/* Wait until file path contains needle n times, up to H_PATIENCE * ms.
 * Returns 1 if it does. For a running cabbpf's files: h_wait_run_in. */
int h_wait_count(const char *path, const char *needle, int n, int ms);

/*
 * Whether cabbpf r (h_start, h_start_nofile) has exited; if it has, sets
 * r->ended, r->wait_status, and r->status as h_finish will. Seen with
 * waitid(WNOWAIT): the child is left unreaped, so its pid stays its own
 * (the suites signal r->pid; a reaped pid could be another process's) and
 * h_finish, or a suite's own waitpid, collects it as before.
 */
int h_run_ended(struct h_run *r);

/*
 * Wait until file path (one that cabbpf r or the target it runs writes:
 * r->err_path, r->out_path, a file of the command) holds needle at least
 * n times, while cabbpf runs: up to H_PATIENCE * ms if it keeps running,
 * and not a moment longer than it does. Returns 1 when the text is there
 * (written before an exit counts), 0 when the time ran out with cabbpf
 * running, -1 within 10 ms of cabbpf's exit without it (r->status,
 * r->wait_status set; h_run_why says how it ended; h_finish collects it at
 * once). Before, these waits looked at the file alone: a cabbpf that could
 * not load its BPF programs exited at once, and every test waited its
 * whole timeout on the dead child (issue 43, point 7: .ci/run hung).
 */
int h_wait_run_in(struct h_run *r, const char *path, const char *needle, int n, int ms);

/* h_wait_run_in for needle once on cabbpf's stderr (r->err_path). */
int h_wait_run(struct h_run *r, const char *needle, int ms);

/* h_wait_run_in, asserted: fails at once if cabbpf exits first (with its
 * exit status and stderr in the message), or when the time runs out (with
 * its stderr so far). */
void h_run_until(struct h_run *r, const char *path, const char *needle, int n, int ms);

/* For a failure message: how cabbpf r ended ("cabbpf exited with status
 * 1") or that it still runs, then its stderr (so far). Static buffer,
 * replaced by the next call. */
const char *h_run_why(struct h_run *r);

/* The start line's prefix ("cabbpf: tracing N functions of ...", or
 * "tracing is off" with --start-disabled, user/modes/ftrace.c): from it on
 * every call counts. Not "tracing" alone: warnings printed while cabbpf
 * plans contain it ("tracing function entries only", "not tracing 3
 * functions of the unwinder"), and a test that took one for the start
 * line interrupted cabbpf before its probes were in (make stress, two
 * suites at once: 0 events in 0.002 s). */
#define H_TRACING "cabbpf: tracing "

/* h_start, then assert cabbpf printed needle on stderr (H_TRACING,
 * "watching") within 10 s (h_run_until: stretched by H_PATIENCE while it
 * runs; failed at once, with its exit status and stderr, if it exits
 * without it): it attached, the test may go on. */
void h_start_until(struct h_run *r, char *const *args, const char *needle);

/* h_start_until for `cabbpf OPTS -p PID` (opts NULL-terminated): attached
 * to the running process pid once needle is on stderr. */
void h_start_pid(struct h_run *r, pid_t pid, char *const *opts, const char *needle);

/* Bad input: cabbpf (without --json; as uid 65534 if setuid_nobody)
 * exits non-zero, with needle on stderr, and does not crash. */
void h_expect_failure(char *const *args, int setuid_nobody, const char *needle);

/* out = the options pre (NULL-terminated), "--", then target (NULL-
 * terminated), NULL-terminated; at most max pointers with the NULL.
 * Returns the count without the NULL. */
size_t h_join_args(char **out, size_t max, char *const *pre, char *const *target);

/* Files written as root (common/outfile.c): twice, plant at path a
 * symlink -- first to a fresh victim file of mode 0600, then a dangling
 * one (to a name in h_tmp where nothing is) -- run cabbpf with args
 * (which name path; --json is added unless no_json) and assert it exited
 * 0, the victim kept its bytes and its mode, nothing was created where the
 * dangling link pointed, and path is now a regular file of ours (the link
 * was replaced, not followed) holding expect (unless NULL). what names the
 * writer in messages. path keeps the second run's file. */
void h_assert_writes_safely(const char *what, char *const *args, int no_json, const char *path,
			    const char *expect);

/* ------------------------------------------------------- the JSON report -- */

/* o[key], NULL if o is NULL or has no key. Owned by o. */
json_object *h_get(json_object *o, const char *key);

/* o[key] as a number, -1 if absent (any object: the report's top level, a
 * process, a file...). */
long long h_num(json_object *root, const char *key);

/* The element of array arr whose k1 is v1 (and, unless k2 is NULL, whose
 * k2 is v2), or NULL. Owned by arr. */
json_object *h_find(json_object *arr, const char *k1, const char *v1, const char *k2,
		    const char *v2);

/* functions[] element named name, or NULL. Owned by root. */
json_object *h_fn(json_object *root, const char *name);

/* functions[name].<key>, 0 if the function is absent, -1 if no report. */
long long h_fn_field(json_object *root, const char *name, const char *key);

/* functions[name].calls, 0 if the function is absent, -1 if no report. */
long long h_calls(json_object *root, const char *name);

/* calls of the first function whose name contains part (Rust's are
 * mangled or, demangled, module-qualified), 0 if none, -1 if no report. */
long long h_calls_like(json_object *root, const char *part);

/* Number of functions in the report whose name contains needle. */
int h_count_named(json_object *root, const char *needle);

/* Calls of name by thread tid, 0 if none, -1 if no report. */
long long h_thread_calls(json_object *root, const char *name, long tid);

/* callgraph edge caller->callee calls, 0 if absent, -1 if no report. */
long long h_edge(json_object *root, const char *caller, const char *callee);

/* Number of edges in the call graph, -1 if no report. */
long long h_nedges(json_object *root);

/* returns.<key>, -1 if absent. */
long long h_returns(json_object *root, const char *key);

/* A whole-cgroup or --follow-forks report's processes[] element of pid,
 * or NULL. */
json_object *h_proc_of(json_object *root, pid_t pid);

/* guard.<key>, -1 if absent (no guard section). */
long long h_guard(json_object *root, const char *key);

/* lost_by_kind.<kind>.lost, -1 if absent. */
long long h_lost_by_kind(json_object *root, const char *kind);

/* io.functions[name].<key>, 0 if the function had no I/O. */
long long h_io_fn(json_object *root, const char *name, const char *key);

/* A syscalls row of any report (the array syscalls): field key of
 * (syscall sc, fd kind), 0 if absent. */
long long h_syscall_row(json_object *syscalls, const char *sc, const char *kind, const char *key);

/* The same for a call that has two sides (sendfile, splice, ...): the row
 * of (syscall sc, direction dir: "in" or "out", fd kind), 0 if absent. */
long long h_syscall_side(json_object *syscalls, const char *sc, const char *dir, const char *kind,
			 const char *key);

/* The JSON report's target.exit as a wait status would describe it
 * ("exited with status N" / "killed by signal N (...)"), NULL if none. */
const char *h_exit(json_object *root);

/* The same description for a wait status, into buf. */
const char *h_describe(int st, char *buf, size_t len);

/* The exit status cabbpf gives after a trace of -- COMMAND, from the JSON
 * report's target.exit: N for "exited with status N", 128 + N for
 * "killed by signal N", 0 when it says none. */
int h_status_of(json_object *root);

/* --------------------------------------------------------- assertions -- */

/* cabbpf wrote its JSON report and exited as after a trace: 0, or for
 * -- COMMAND the command's own status as the report says it ended
 * (h_status_of) (else: its stderr). */
void h_assert_ok(const struct h_run *r);

/*
 * Nothing lost, no order gap: lost 0, order_gaps 0.
 *
 * Why lost == 0 holds whatever the load, though a starved cabbpf drains
 * late: a kernel ring holds --ring-size / 64 bytes events per CPU (default
 * 4 MiB: 65,536), and a ring drops an event only while that many wait in
 * it. A run that makes fewer events than one ring holds, of every kind and
 * on every CPU together, can lose none, however late the loader reads.
 * So this also asserts that the run's call events (JSON "events") are at
 * most 3/4 of what its ring holds (the rest for I/O and the scheduler's
 * events, which grow with the load), unless it ran --lossless: a test
 * that outgrows its ring fails on every machine, not only on a loaded
 * one. The tests that need more (2026-11-27) get the capacity or the
 * back-pressure:
 *  - demo (~303,000 events), isp (~403,000) and a Go program with its
 *    whole runtime traced (158,000-168,000: the runtime's own calls vary
 *    with its scheduling): --ring-size 64 (1,048,576 per CPU);
 *  - the recording storm (2,000,000 calls): --ring-size 256 (4,194,304);
 *  - the --budget suite's (50,000-55,000, more on a slower machine: its
 *    windows are timed): --ring-size 16 (262,144);
 *  - hot (the attach tests: it never rests, so its events grow with the
 *    time traced, without bound): --lossless, the target waits at a
 *    ring's high-water mark; the gate those tests check is unchanged;
 *  - the --lossless suite's and the overflow tests' own settings.
 */
void h_assert_no_loss(json_object *json);

/* h_assert_ok and h_assert_no_loss: the usual clean run. */
void h_assert_clean(const struct h_run *r);

/* Same counts and edges: every function of report b has as many calls
 * in report a, and a has exactly b's call-graph edges with b's counts.
 * what names the run in messages. */
void h_assert_same_counts(json_object *a, json_object *b, const char *what);
void h_assert_same_edges(json_object *a, json_object *b);

/* -------------------------------------------------- expected results -- */

/* The expected VALUE of FACT for RUN in tests/expected/targets.txt (its
 * top comment has the format); a missing line fails the test. */
long long h_expected(const char *run, const char *fact);

/* Assert the report's value of fact equals h_expected(run, fact). fact is
 * one of the JSON facts of tests/expected/targets.txt: "calls NAME",
 * "edge CALLER -> CALLEE", "edges", "returns.KEY", "io NAME KEY". */
void h_check(json_object *json, const char *run, const char *fact);

/* h_check of each fact of the NULL-terminated list facts. */
void h_check_all(json_object *json, const char *run, const char *const *facts);
#define H_CHECK(json, run, ...) h_check_all((json), (run), (const char *const[]){__VA_ARGS__, NULL})

/* --------------------------------------------- a target's own processes -- */

/* What a program did: its stdout, stderr and wait status. */
struct h_plain {
	char *out, *err;
	int status; /* wait status */
};

/* Run argv (NULL-terminated, argv[0] a path) untraced, to completion. */
void h_plain_run(struct h_plain *p, char *const *argv);

void h_plain_free(struct h_plain *p);

/* s without its lines that start with prefix (cabbpf's own stderr lines
 * start with "cabbpf: "). Malloc'd. */
char *h_drop_lines(const char *s, const char *prefix);

/* The target is never harmed: run target (argv, NULL-terminated) untraced
 * into *p, then as `cabbpf -q OPTS -- TARGET` (opts NULL-terminated) into
 * *r, and assert cabbpf exited 0 with a report, and the target wrote the
 * same stdout and stderr (without cabbpf's "cabbpf: " lines) and ended the
 * same way. The caller frees both. */
void h_traced_same(struct h_plain *p, struct h_run *r, char *const *opts, char *const *target);

/* A program's own call counts, from its last line "calls: a=N b=M ...":
 * the count of name, or -1 if the line or the name is absent. */
long long h_own_calls(const char *out, const char *name);
/* Student's t quantile for a two-sided tail of 1e-6 with df degrees of
 * freedom (df >= 1; beyond 30 the 30's: conservative): the bound an
 * estimate's test asserts, so that it fails once in a million runs. */
double h_t_1e6(long df);

/* Every function of names (NULL-terminated) is on the program's own
 * "calls:" line in out, and the report counted it exactly as often. */
void h_assert_own_counts(const char *out, json_object *json, const char *const *names);

/* The "tid=T calls=N" lines the thread targets print, in order: up to max
 * into tid[] and calls[]; returns how many there are. */
int h_thread_lines(const char *s, long *tid, long *calls, int max);

/* A program running beside the test: its pid and where its output goes. */
struct h_proc {
	pid_t pid;
	char out_path[PATH_MAX]; /* its stdout */
	char err_path[PATH_MAX]; /* its stderr */
};

/* Start argv (NULL-terminated; argv[0] a path, or a name looked up in
 * PATH) with stdout and stderr into fresh files of h_tmp; env, unless NULL,
 * is a "NAME=VALUE" to set (or "NAME" to unset) in its environment. Returns
 * once the child has exec'd argv[0] (asserted): /proc/PID/exe is the
 * program then, as `cabbpf -p PID` must find it. With ready, also asserts
 * it printed ready on stdout within 10 s (it is waiting for the test;
 * stretched by H_PATIENCE, failed at once if it exits first). */
void h_spawn(struct h_proc *p, char *const *argv, const char *env, const char *ready);

/* The byte at file offset off of exe (a real path) as mapped in process
 * pid, read through /proc/PID/mem: the target's text as it runs, with any
 * breakpoint a probe left in it. Returns 0, or -1 when exe is not mapped
 * there. */
int h_mapped_byte(pid_t pid, const char *exe, uint64_t off, unsigned char *out);

/* Another tool's uprobe at file offset off of the file at path: a perf
 * event of the uprobe PMU on CPU 0 for every process (no pid filter, as
 * bpftrace's, perf probe's or another cabbpf's in --cgroup mode). The
 * kernel writes its int3 into every private mapping of the file that may
 * execute, a reader's PROT_READ one included: asserted here (the premise
 * of the tests that use it). Returns the event's fd; closing it removes
 * the probe. */
int h_foreign_uprobe(const char *path, uint64_t off);
/* h_foreign_uprobe at the entry of each function with a size of the file
 * at path (its symbol table), at most max: their fds into fds[]. Returns
 * how many; the caller closes them. */
size_t h_foreign_uprobes(const char *path, int *fds, size_t max);

/* Pixels of the PNG at path (a headless Chromium screenshot of an SVG the
 * test rendered) that differ from its top-left pixel, the page's
 * background: a view is not blank. Sets *w, *h; -1 if unreadable. */
long long h_png_ink(const char *path, int *w, int *h);

/* Reap pid and assert it exited with status 0. */
void h_reap_ok(pid_t pid);

/* The target is never harmed, for one started with h_spawn(..., "ready")
 * and reaped with wait status st: it ended as the untraced run p did, wrote
 * "ready" and then p's stdout, and p's stderr. */
void h_assert_ready_same(const struct h_proc *t, int st, const struct h_plain *p);

/* Whether process pid's main thread is blocked in system call nr (its
 * number, /proc/PID/syscall) within ms (patiently: H_PATIENCE). 0 at once
 * if pid has exited (a zombie or gone): it never will. */
int h_blocked_in(pid_t pid, long nr, int ms);

/* Asserts that target t (started with h_spawn(..., "ready"): blocker,
 * letgo), told by SIGUSR2 to enter its blocking call, says "waiting" and
 * is then blocked in system call nr (within 10 s each, stretched by
 * H_PATIENCE; failed at once if it exits first). */
void h_enter_blocking_call(const struct h_proc *t, long nr);

/* A child process of ppid (the first found in /proc), or 0. This kernel
 * has no /proc/PID/task/TID/children. */
pid_t h_child_of(pid_t ppid);

/* The thread of process pid whose name (comm) is comm, or 0. */
pid_t h_thread_named(pid_t pid, const char *comm);

/* Whether pid is a zombie (exited, not reaped), or gone. */
int h_is_zombie(pid_t pid);

/* Reap pid, a child of this process (or, as subreaper, an orphan), and
 * return its wait status. It has work left to do, however long a loaded
 * machine takes for it; what must not happen is that it stays stopped
 * with nobody to continue it: fails if it is seen stopped (T) for
 * H_PATIENCE * 10 s on end. */
int h_reap_unless_left_stopped(pid_t pid);
/* An empty cgroup v2 child of H_CGROOT named name, its path into dir
 * (asserted made; a leftover of an earlier run is removed first). name
 * must be this run's own (with getpid()): two runs at once on a machine
 * (two clones, CI beside make stress) would share the cgroup. */
#define H_CGROOT "/sys/fs/cgroup/unified"
void h_mk_cgroup(char *dir, size_t len, const char *name);
/* Remove it once its tasks are gone (reaped tasks leave it at once). */
void h_rm_cgroup(const char *dir);
/* CPU time (user + system) pid has used, in ms; -1 if it is gone. */
long long h_cpu_ms(pid_t pid);
/* Wait until pid has run ms of CPU time: progress that no load can fake
 * (a fixed sleep can pass with the target never scheduled). Returns 1 when
 * reached, 0 if pid ended first. */
int h_wait_cpu(pid_t pid, long long ms);
/* h_wait_cpu for a target whose tracer the test keeps stopped: returns 1
 * when pid has run ms of CPU time, 0 if it ended first or every thread of
 * it is stopped (T or t), where nothing resumes it while its tracer is
 * stopped (--lossless holds a thread at a ring's high-water mark that the
 * stopped cabbpf cannot drain). */
int h_wait_cpu_or_stopped(pid_t pid, long long ms);
/* Wait (up to H_PATIENCE * ms) until every thread of pid is stopped (a
 * SIGSTOP takes effect when each thread is next scheduled, not when kill
 * returns). Returns 1 if they are; 0 at once if pid has exited (a zombie
 * or gone: a cabbpf that ended is never stopped). */
int h_wait_stopped(pid_t pid, int ms);
/* Wait (up to H_PATIENCE * ms) until pid has a ptrace tracer. Returns 1 if
 * it has; 0 at once if pid has exited. */
int h_wait_traced(pid_t pid, int ms);

/* ------------------------------------------------------ --timeline -- */

/* A --timeline file (Chrome Trace Event JSON) checked structurally:
 * a traceEvents array and otherData; every event with ph, pid and name;
 * "X" (an activation) with tid, ts >= 0 and dur >= 0; "i" (I/O) with
 * args.bytes or args.errno; no other phase but "M" (metadata); per
 * thread, activations nest (each inside its enclosing one; those with
 * args.ended are upper bounds and left out of that check). Returns the
 * parsed file (the caller puts it). */
json_object *h_timeline(const char *path);

/* Events of phase ph (and name, unless NULL; and thread tid, unless < 0)
 * in a timeline from h_timeline. */
long long h_tl_count(json_object *tl, const char *ph, const char *name, long long tid);

/* --------------------------------------------------------- sources -- */

/* The number (from 1) of the first line of file that contains needle;
 * asserted found. */
int h_line_of(const char *file, const char *needle);

/* The GNU build id of the ELF file at path (readelf -n), lowercase hex;
 * static buffer; asserted found. */
const char *h_build_id(const char *path);

/* ------------------------------------------------------------- pprof -- */

/* A pprof file read back by Go's own reader: `go tool pprof -raw` (with
 * HOME and GOCACHE under h_tmp, so Go writes nothing elsewhere). */
struct h_pprof {
	char *raw;	       /* the -raw text */
	int nv;		       /* values per sample */
	long long samples;     /* samples read */
	long long sum[4];      /* value k summed over the samples (--pprof: calls,
				  wall, cpu, sampled) */
	long long wall_lt_cpu; /* samples whose value 1 is below their value 2 */
};

/* Read path with go tool pprof -raw into *p; asserts it read it. */
void h_pprof_read(struct h_pprof *p, const char *path);
void h_pprof_free(struct h_pprof *p);

/* What -raw shows for the location of function name after its name (its
 * "FILE:LINE", or "FILE"), or NULL when no location is that function.
 * Static buffer. */
const char *h_pprof_where(const struct h_pprof *p, const char *name);

/* The -raw line of the mapping whose file is path, or NULL. Static. */
const char *h_pprof_mapping(const struct h_pprof *p, const char *path);

#endif /* TESTS_HARNESS_H */
