// SPDX-License-Identifier: BSD-2-Clause
/*
 * The integration suites' harness: see tests/harness.h. Single-threaded
 * test code; the assertions use libcheck and end the calling test.
 */
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <png.h>

#include "tests/harness.h"
#include "user/elf/syms.h"
#include "user/proc/procfs.h"

#include <stdbool.h>

#include <math.h>

char h_targets[256];
char h_cabbpf[PATH_MAX];
char h_tmp[256];

#define EXPECTED_FILE "tests/expected/targets.txt"

int h_patience(void)
{
	static int p;

	if (!p) {
		const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
		int v = m ? atoi(m) : 0;

		p = v > 6 ? v : 6;
	}
	return p;
}

int h_kernel_has(const char *feature)
{
	static json_object *doc;
	char path[PATH_MAX];
	char *args[] = {"--features", "--json", path, NULL};
	json_object *f;
	struct h_run r;

	if (!doc) {
		snprintf(path, sizeof(path), "%s/features.json", h_tmp);
		h_start(&r, args, 1, 0);
		h_finish(&r);
		ck_assert_msg(r.status == 0, "cabbpf --features: %s", r.err);
		h_free(&r);
		doc = h_parse_json(path);
	}
	f = h_get(h_get(h_get(doc, "kernel"), "features"), feature);
	ck_assert_msg(f != NULL, "cabbpf --features names no '%s'", feature);
	return json_object_get_boolean(f);
}

/* ------------------------------------------------------------- setup -- */

int h_setup_bin(const char *bin)
{
	char cmd[PATH_MAX * 2];

	/* The targets are the same for every build flavour ($OUT). */
	snprintf(h_targets, sizeof(h_targets), ".output/targets");
	if (!realpath(bin, h_cabbpf))
		return -1;
	snprintf(h_tmp, sizeof(h_tmp), "/tmp/cabbpf-test.XXXXXX");
	if (!mkdtemp(h_tmp))
		return -1;
	snprintf(cmd, sizeof(cmd), "tests/targets/build.sh %s >/dev/null", h_targets);
	return system(cmd) == 0 ? 0 : -1;
}

int h_setup(void)
{
	/* CABBPF_BIN: another build of the tool (make asan-check runs some
	 * integration suites against the sanitizer build) */
	const char *bin = getenv("CABBPF_BIN");

	return h_setup_bin(bin && *bin ? bin : "cabbpf");
}

int h_integration_setup(const char *suite, int (*extra)(void))
{
	const char *why = NULL;

	/* As from a terminal: a shell that starts the suites in the
	 * background (no job control) hands them SIGINT and SIGQUIT ignored,
	 * and every target would inherit that (a Ctrl-C test then finds its
	 * command alive, as untraced too). */
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	if (geteuid() != 0)
		why = "needs root (BPF, uprobes, ptrace); run the tests with sudo";
	else if (h_setup())
		why = "could not build tests/targets or find ./cabbpf";
	else if (extra && extra())
		why = "could not prepare its targets";
	/* CABBPF_TEST_SETUP_ONLY=1: build what the suite needs and stop
	 * (tests/vm: the host builds, the guests only run). */
	if (!why && getenv("CABBPF_TEST_SETUP_ONLY")) {
		printf("%s: set up, no test run (CABBPF_TEST_SETUP_ONLY)\n", suite);
		fflush(stdout);
		_exit(0);
	}
	if (!why)
		return 0;
	/* A failed check, not silence: tests/run.sh counts it. */
	fprintf(stderr, "%s: %s\n", suite, why);
	printf("0%%: Checks: 1, Failures: 1, Errors: 0\n");
	return -1;
}

int h_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	/* Each run's scratch directory holds its targets' outputs and
	 * cabbpf's reports (tens of MB for some suites): a loop of runs
	 * (make stress) would fill /tmp. Kept when a test failed, for the
	 * post-mortem. rm -rf as the suites do (never through a link), and
	 * never into a file system a test mounted there. */
	if (h_tmp[0] && failed) {
		fprintf(stderr, "harness: a test failed; its files are kept in %s\n", h_tmp);
	} else if (h_tmp[0]) {
		char cmd[sizeof(h_tmp) + 64];

		snprintf(cmd, sizeof(cmd), "rm -rf --one-file-system -- '%s'", h_tmp);
		if (system(cmd))
			fprintf(stderr, "harness: could not remove %s\n", h_tmp);
	}
	return failed ? 1 : 0;
}

void h_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_msg(f, "cannot create %s: %s", path, strerror(errno));
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_msg(fclose(f) == 0, "cannot write %s: %s", path, strerror(errno));
}

void h_shell(const char *fmt, ...)
{
	char cmd[PATH_MAX * 4];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	ck_assert_msg(n >= 0 && (size_t)n < sizeof(cmd), "command too long: %s", fmt);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
}

const char *h_target(const char *name, int opt)
{
	static char buf[4][PATH_MAX];
	static int k;
	char *b = buf[k++ & 3];

	snprintf(b, PATH_MAX, "%s/%s-O%d", h_targets, name, opt);
	return b;
}

const char *h_cxx_target(const char *name, int i)
{
	static char buf[4][64];
	static int k;
	char *b = buf[k++ & 3];

	snprintf(b, 64, "%s-%s", name, i & 2 ? "clangxx" : "gxx");
	return h_target(b, i & 1 ? 2 : 0);
}

/* ------------------------------------------------------ running cabbpf -- */

char *h_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return strdup("");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n)
		buf[0] = 0;
	fclose(f);
	return buf;
}

/* The calling-context tree ("cct") nests two JSON levels per call level,
 * beyond json-c's default limit of 32: parse with room for 65536. */
json_object *h_parse_json(const char *path)
{
	struct json_tokener *tok = json_tokener_new_ex(1 << 16);
	char *text = h_slurp(path);
	json_object *o = NULL;

	if (tok && text && *text)
		o = json_tokener_parse_ex(tok, text, (int)strlen(text));
	if (tok)
		json_tokener_free(tok);
	free(text);
	return o;
}

int h_nobody_copy(const char *path, char **out, char dir[64])
{
	static char copy[128];
	char cmd[PATH_MAX + 512];

	snprintf(dir, 64, "/tmp/cabbpf-nobody.XXXXXX");
	if (!mkdtemp(dir) || chmod(dir, 0755))
		return -1;
	snprintf(copy, sizeof(copy), "%s/cabbpf", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chmod 0755 '%s'", path, copy, copy);
	if (system(cmd) != 0)
		return -1;
	*out = copy;
	return 0;
}

/* Fresh empty output files for a child: "<h_tmp>/<tag><pid>-<seq>.out"
 * and ".err", unique per forked test process, created before the fork so
 * that a waiter never sees an earlier run's output. */
static void fresh_outputs(const char *tag, char *out, char *err)
{
	static int seq;

	seq++;
	snprintf(out, PATH_MAX, "%s/%s%d-%d.out", h_tmp, tag, (int)getpid(), seq);
	snprintf(err, PATH_MAX, "%s/%s%d-%d.err", h_tmp, tag, (int)getpid(), seq);
	close(open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644));
	close(open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644));
}

/* In a forked child: stdout and stderr into the files out and err.
 * Returns 0 or -1. */
static int redirect(const char *out, const char *err)
{
	int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
		return -1;
	/* only as 1 and 2: a target traced and untraced gets the same fds */
	if (o > 2)
		close(o);
	if (e > 2)
		close(e);
	return 0;
}

static int start(struct h_run *r, char *const *args, int no_json, int setuid_nobody, int nofile);

int h_start(struct h_run *r, char *const *args, int no_json, int setuid_nobody)
{
	return start(r, args, no_json, setuid_nobody, 0);
}

int h_start_nofile(struct h_run *r, char *const *args, int no_json, int nofile)
{
	return start(r, args, no_json, 0, nofile);
}

static int start(struct h_run *r, char *const *args, int no_json, int setuid_nobody, int nofile)
{
	char *argv[H_MAX_ARGS];
	int n = 0, i;

	memset(r, 0, sizeof(*r));
	fresh_outputs("r", r->out_path, r->err_path);
	snprintf(r->json_path, sizeof(r->json_path), "%.*s.json",
		 (int)(strlen(r->out_path) - strlen(".out")), r->out_path);
	unlink(r->json_path);
	argv[n++] = h_cabbpf;
	if (!no_json) {
		argv[n++] = "--json";
		argv[n++] = r->json_path;
	}
	for (i = 0; args[i] && n < H_MAX_ARGS - 1; i++) {
		argv[n++] = args[i];
		r->launched |= !strcmp(args[i], "--");
	}
	argv[n] = NULL;
	/* An unprivileged user may not reach the binary at all (a clone in a
	 * 0700 directory, as mktemp -d and most home directories are): run
	 * a copy placed where it can, so the test is about cabbpf. */
	if (setuid_nobody && h_nobody_copy(argv[0], &argv[0], r->copy_dir))
		return -1;
	r->pid = fork();
	if (r->pid < 0)
		return -1;
	if (r->pid == 0) {
		if (redirect(r->out_path, r->err_path))
			_exit(126);
		/* A new process group: a test's SIGINT reaches cabbpf only. */
		setpgid(0, 0);
		if (setuid_nobody && (setgid(65534) || setuid(65534)))
			_exit(126);
		if (nofile) {
			struct rlimit rl = {(rlim_t)nofile, (rlim_t)nofile};

			/* only 0, 1, 2: the same count whatever the test
			 * runner left open */
			close_range(3, ~0U, 0);
			if (setrlimit(RLIMIT_NOFILE, &rl))
				_exit(126);
		}
		/* A test that fails (its process ends) stops its cabbpf as
		 * Ctrl-C would, which ends a launched target too: nothing
		 * is left running on a loaded machine. */
		prctl(PR_SET_PDEATHSIG, SIGINT);
		execv(argv[0], argv);
		_exit(127);
	}
	return 0;
}

/* struct h_run's status for wait status st: the exit code, or 128+signal
 * (as a shell says it). */
static int exit_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void h_finish(struct h_run *r)
{
	int st = 0;

	/* Reaped here even when a wait saw it end (h_run_ended leaves it a
	 * zombie): the same waitpid, the same status as ever. */
	waitpid(r->pid, &st, 0);
	r->status = exit_code(st);
	r->wait_status = st;
	r->ended = 1;
	if (r->copy_dir[0]) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r->copy_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", r->copy_dir);
	}
	r->err = h_slurp(r->err_path);
	r->out = h_slurp(r->out_path);
	r->json = h_parse_json(r->json_path);
}

void h_interrupt(struct h_run *r)
{
	kill(r->pid, SIGINT);
	h_finish(r);
}

void h_run(struct h_run *r, char *const *args)
{
	if (h_start(r, args, 0, 0) == 0)
		h_finish(r);
}

void h_free(struct h_run *r)
{
	free(r->err);
	free(r->out);
	if (r->json)
		json_object_put(r->json);
	memset(r, 0, sizeof(*r));
}

/* Occurrences of needle in the file at path. */
static int count_in(const char *path, const char *needle)
{
	char *s = h_slurp(path), *p;
	int n = 0;

	for (p = s; p && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	free(s);
	return n;
}

/* Whether pid, a child of this process, has exited; its wait status into
 * *st. waitid's WNOWAIT leaves it unreaped: whoever reaps it later (h_finish,
 * a suite's waitpid) gets the same status, and its pid cannot be reused
 * meanwhile. 0 for pid 0, or one that is not (or no longer) a child here:
 * nothing to watch, the wait goes on as before. */
static int child_exited(pid_t pid, int *st)
{
	siginfo_t si;

	if (pid <= 0)
		return 0;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) || si.si_pid != pid)
		return 0;
	if (si.si_code == CLD_EXITED)
		*st = W_EXITCODE(si.si_status, 0);
	else
		*st = (si.si_status & 0x7f) | (si.si_code == CLD_DUMPED ? WCOREFLAG : 0);
	return 1;
}

/*
 * The harness's one wait for text: until the file at path holds needle n
 * times, up to H_PATIENCE * ms (ms is what a quiet machine needs; a loaded
 * one, make stress or CI beside other work, may need far more, and waiting
 * longer costs nothing when the text comes), in 10 ms steps. gone, unless
 * NULL, says (with arg) whether the writer has exited: then nothing more
 * will come, and the wait ends. Returns 1 (there), 0 (time out), -1 (the
 * writer exited without it).
 */
static int wait_text(const char *path, const char *needle, int n, int ms, int (*gone)(void *),
		     void *arg)
{
	struct timespec ts = {0, 10 * 1000000};
	int i, ended;

	for (i = 0;; i++) {
		/* The exit first, then the file: what the writer wrote before
		 * its exit is in the file by the time its exit shows. */
		ended = gone && gone(arg);
		if (count_in(path, needle) >= n)
			return 1;
		if (ended)
			return -1;
		if (i >= ms / 10 * H_PATIENCE)
			return 0;
		nanosleep(&ts, NULL);
	}
}

int h_wait_for(const char *path, const char *needle, int ms)
{
	return wait_text(path, needle, 1, ms, NULL, NULL) > 0;
}

int h_wait_count(const char *path, const char *needle, int n, int ms)
{
	return wait_text(path, needle, n, ms, NULL, NULL) > 0;
}

int h_run_ended(struct h_run *r)
{
	int st;

	if (!r->ended && child_exited(r->pid, &st)) {
		r->ended = 1;
		r->wait_status = st;
		r->status = exit_code(st);
	}
	return r->ended;
}

/* wait_text's gone for a run. */
static int run_gone(void *r)
{
	return h_run_ended(r);
}

int h_wait_run_in(struct h_run *r, const char *path, const char *needle, int n, int ms)
{
	return wait_text(path, needle, n, ms, run_gone, r);
}

int h_wait_run(struct h_run *r, const char *needle, int ms)
{
	return h_wait_run_in(r, r->err_path, needle, 1, ms);
}

const char *h_run_why(struct h_run *r)
{
	static char *why;
	char *err = h_slurp(r->err_path), how[128], ex[96];

	if (h_run_ended(r))
		snprintf(how, sizeof(how), "cabbpf %s; its stderr",
			 h_describe(r->wait_status, ex, sizeof(ex)));
	else
		snprintf(how, sizeof(how), "cabbpf (pid %d) still runs; its stderr so far",
			 (int)r->pid);
	free(why);
	if (asprintf(&why, "%s:\n%s", how, err ? err : "") < 0)
		why = NULL;
	free(err);
	return why ? why : "(out of memory)";
}

void h_run_until(struct h_run *r, const char *path, const char *needle, int n, int ms)
{
	int got = h_wait_run_in(r, path, needle, n, ms);
	char times[32] = "", when[64] = "";
	const char *where = path;

	if (path == r->err_path)
		where = "cabbpf's stderr";
	else if (path == r->out_path)
		where = "cabbpf's stdout";
	if (n > 1)
		snprintf(times, sizeof(times), " %d times", n);
	if (!got)
		snprintf(when, sizeof(when), " within %.1f s", ms * H_PATIENCE / 1000.0);
	ck_assert_msg(got > 0, "no '%s'%s on %s%s: %s", needle, times, where, when, h_run_why(r));
}

void h_start_until(struct h_run *r, char *const *args, const char *needle)
{
	ck_assert_int_eq(h_start(r, args, 0, 0), 0);
	h_run_until(r, r->err_path, needle, 1, 10000);
}

void h_start_pid(struct h_run *r, pid_t pid, char *const *opts, const char *needle)
{
	char pidbuf[16], *args[H_MAX_ARGS];
	int n = 0, i;

	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	for (i = 0; opts[i] && n < H_MAX_ARGS - 3; i++)
		args[n++] = opts[i];
	args[n++] = "-p";
	args[n++] = pidbuf; /* copied by h_start's fork before we return */
	args[n] = NULL;
	h_start_until(r, args, needle);
}

void h_expect_failure(char *const *args, int setuid_nobody, const char *needle)
{
	struct h_run r;

	ck_assert_int_eq(h_start(&r, args, 1, setuid_nobody), 0);
	h_finish(&r);
	ck_assert_msg(r.status != 0, "exit 0 for bad input; stderr:\n%s", r.err);
	ck_assert_msg(strstr(r.err, needle), "stderr lacks '%s':\n%s", needle, r.err);
	ck_assert_msg(!strstr(r.err, "Segmentation"), "crash:\n%s", r.err);
	h_free(&r);
}

void h_assert_writes_safely(const char *what, char *const *args, int no_json, const char *path,
			    const char *expect)
{
	static const char secret[] = "root-only secret\n";
	char victim[PATH_MAX], absent[PATH_MAX];
	struct stat sb;
	struct h_run r;
	char *bytes;
	int dangling;

	snprintf(victim, sizeof(victim), "%s/victim-%d", h_tmp, (int)getpid());
	snprintf(absent, sizeof(absent), "%s/absent-%d", h_tmp, (int)getpid());
	for (dangling = 0; dangling < 2; dangling++) {
		unlink(path);
		unlink(victim);
		unlink(absent);
		if (!dangling) {
			h_write(victim, secret);
			ck_assert_int_eq(chmod(victim, 0600), 0);
		}
		ck_assert_msg(symlink(dangling ? absent : victim, path) == 0, "symlink %s: %s",
			      path, strerror(errno));
		ck_assert_int_eq(h_start(&r, args, no_json, 0), 0);
		h_finish(&r);
		ck_assert_msg(r.status == 0, "%s through a %s symlink: exit %d:\n%s", what,
			      dangling ? "dangling" : "planted", r.status, r.err);
		if (dangling) {
			ck_assert_msg(access(absent, F_OK) == -1 && errno == ENOENT,
				      "%s: created the dangling link's target %s", what, absent);
		} else {
			bytes = h_slurp(victim);
			ck_assert_msg(!strcmp(bytes, secret), "%s: the victim was overwritten",
				      what);
			free(bytes);
			ck_assert_int_eq(lstat(victim, &sb), 0);
			ck_assert_msg(S_ISREG(sb.st_mode) && (sb.st_mode & 07777) == 0600 &&
					      sb.st_uid == 0,
				      "%s: the victim's mode is now %o", what, sb.st_mode);
		}
		ck_assert_int_eq(lstat(path, &sb), 0);
		ck_assert_msg(S_ISREG(sb.st_mode), "%s: %s is not a regular file (mode %o)", what,
			      path, sb.st_mode);
		ck_assert_int_eq(sb.st_uid, geteuid());
		if (expect) {
			bytes = h_slurp(path);
			ck_assert_msg(strstr(bytes, expect), "%s: %s lacks '%s'", what, path,
				      expect);
			free(bytes);
		}
		h_free(&r);
	}
	unlink(victim);
}

size_t h_join_args(char **out, size_t max, char *const *pre, char *const *target)
{
	size_t n = 0, i;

	for (i = 0; pre[i] && n < max - 2; i++)
		out[n++] = pre[i];
	out[n++] = "--";
	for (i = 0; target[i] && n < max - 1; i++)
		out[n++] = target[i];
	out[n] = NULL;
	return n;
}

/* ------------------------------------------------------- the JSON report -- */

json_object *h_get(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

long long h_num(json_object *root, const char *key)
{
	json_object *v = h_get(root, key);

	return v ? (long long)json_object_get_int64(v) : -1;
}

json_object *h_find(json_object *arr, const char *k1, const char *v1, const char *k2,
		    const char *v2)
{
	size_t i, n;

	if (!arr)
		return NULL;
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		const char *a = json_object_get_string(h_get(e, k1));
		const char *b = k2 ? json_object_get_string(h_get(e, k2)) : NULL;

		if (a && !strcmp(a, v1) && (!k2 || (b && !strcmp(b, v2))))
			return e;
	}
	return NULL;
}

json_object *h_fn(json_object *root, const char *name)
{
	return h_find(h_get(root, "functions"), "name", name, NULL, NULL);
}

long long h_fn_field(json_object *root, const char *name, const char *key)
{
	json_object *f;

	if (!h_get(root, "functions"))
		return -1;
	f = h_fn(root, name);
	return f ? json_object_get_int64(h_get(f, key)) : 0;
}

long long h_calls(json_object *root, const char *name)
{
	return h_fn_field(root, name, "calls");
}

/* The first functions[] element whose name contains part, or NULL. */
static json_object *fn_like(json_object *root, const char *part)
{
	json_object *fs = h_get(root, "functions");
	size_t i;

	for (i = 0; fs && i < json_object_array_length(fs); i++) {
		json_object *f = json_object_array_get_idx(fs, i);
		const char *nm = json_object_get_string(h_get(f, "name"));

		if (nm && strstr(nm, part))
			return f;
	}
	return NULL;
}

long long h_calls_like(json_object *root, const char *part)
{
	json_object *f;

	if (!h_get(root, "functions"))
		return -1;
	f = fn_like(root, part);
	return f ? json_object_get_int64(h_get(f, "calls")) : 0;
}

int h_count_named(json_object *root, const char *needle)
{
	json_object *fs = h_get(root, "functions");
	size_t i;
	int k = 0;

	for (i = 0; fs && i < json_object_array_length(fs); i++) {
		const char *nm =
			json_object_get_string(h_get(json_object_array_get_idx(fs, i), "name"));

		if (nm && strstr(nm, needle))
			k++;
	}
	return k;
}

long long h_thread_calls(json_object *root, const char *name, long tid)
{
	json_object *th = h_get(root, "threads"), *t, *fs, *v;
	char key[32];

	if (!th)
		return -1;
	snprintf(key, sizeof(key), "%ld", tid);
	t = h_get(th, key);
	fs = h_get(t, "functions");
	v = h_get(fs, name);
	return v ? json_object_get_int64(v) : 0;
}

long long h_edge(json_object *root, const char *caller, const char *callee)
{
	json_object *cg = h_get(root, "callgraph"), *e;

	if (!cg)
		return -1;
	e = h_find(cg, "caller", caller, "callee", callee);
	return e ? json_object_get_int64(h_get(e, "calls")) : 0;
}

long long h_nedges(json_object *root)
{
	json_object *cg = h_get(root, "callgraph");

	return cg ? (long long)json_object_array_length(cg) : -1;
}

json_object *h_proc_of(json_object *root, pid_t pid)
{
	json_object *a = h_get(root, "processes");
	size_t i, n = a ? json_object_array_length(a) : 0;

	for (i = 0; i < n; i++)
		if (h_num(json_object_array_get_idx(a, i), "pid") == pid)
			return json_object_array_get_idx(a, i);
	return NULL;
}

long long h_returns(json_object *root, const char *key)
{
	return h_num(h_get(root, "returns"), key);
}

long long h_guard(json_object *root, const char *key)
{
	return h_num(h_get(root, "guard"), key);
}

long long h_lost_by_kind(json_object *root, const char *kind)
{
	return h_num(h_get(h_get(root, "lost_by_kind"), kind), "lost");
}

long long h_io_fn(json_object *root, const char *name, const char *key)
{
	json_object *f = h_find(h_get(h_get(root, "io"), "functions"), "name", name, NULL, NULL);

	return f ? h_num(f, key) : 0;
}

long long h_syscall_row(json_object *syscalls, const char *sc, const char *kind, const char *key)
{
	json_object *r = h_find(syscalls, "syscall", sc, "fd_kind", kind);

	return r ? h_num(r, key) : 0;
}

long long h_syscall_side(json_object *syscalls, const char *sc, const char *dir, const char *kind,
			 const char *key)
{
	size_t i, n = syscalls ? json_object_array_length(syscalls) : 0;

	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(syscalls, i);
		const char *a = json_object_get_string(h_get(e, "syscall"));
		const char *d = json_object_get_string(h_get(e, "direction"));
		const char *k = json_object_get_string(h_get(e, "fd_kind"));

		if (a && d && k && !strcmp(a, sc) && !strcmp(d, dir) && !strcmp(k, kind))
			return h_num(e, key);
	}
	return 0;
}

const char *h_exit(json_object *root)
{
	return json_object_get_string(h_get(h_get(root, "target"), "exit"));
}

const char *h_describe(int st, char *buf, size_t len)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "?");
	return buf;
}

/* --------------------------------------------------------- assertions -- */

int h_status_of(json_object *root)
{
	json_object *tg, *ex;
	const char *s;
	int n;

	if (!root || !json_object_object_get_ex(root, "target", &tg) ||
	    !json_object_object_get_ex(tg, "exit", &ex) || !(s = json_object_get_string(ex)))
		return 0;
	if (sscanf(s, "exited with status %d", &n) == 1)
		return n;
	if (sscanf(s, "killed by signal %d", &n) == 1)
		return 128 + n;
	return 0;
}

void h_assert_ok(const struct h_run *r)
{
	int want;

	ck_assert_msg(r->json != NULL, "no JSON report (cabbpf exit %d); stderr:\n%s", r->status,
		      r->err);
	want = r->launched ? h_status_of(r->json) : 0;
	ck_assert_msg(r->status == want, "cabbpf exit %d, want %d (%s); stderr:\n%s", r->status,
		      want,
		      r->launched ? "the launched command's, as target.exit says" : "a trace taken",
		      r->err);
}

void h_assert_no_loss(json_object *json)
{
	json_object *rb, *ll;
	long long slots, ev = h_num(json, "events");

	ck_assert_int_eq(h_num(json, "lost"), 0);
	ck_assert_int_eq(h_num(json, "order_gaps"), 0);
	/* The guarantee of harness.h, checked: lost 0 held here because the
	 * run was small, not because the loader was quick this time. */
	if (json_object_object_get_ex(json, "ring_bytes", &rb) &&
	    !json_object_object_get_ex(json, "lossless", &ll)) {
		slots = json_object_get_int64(rb) / 64;
		ck_assert_msg(ev <= slots / 4 * 3,
			      "%lld call events, more than 3/4 of the %lld a kernel ring "
			      "holds: a loaded machine could lose some (tests/harness.h "
			      "h_assert_no_loss: give the run --ring-size or --lossless)",
			      ev, slots);
	}
}

void h_assert_clean(const struct h_run *r)
{
	h_assert_ok(r);
	h_assert_no_loss(r->json);
}

void h_assert_same_counts(json_object *a, json_object *b, const char *what)
{
	json_object *fs = h_get(b, "functions");
	size_t i, n = json_object_array_length(fs);

	for (i = 0; i < n; i++) {
		const char *nm =
			json_object_get_string(h_get(json_object_array_get_idx(fs, i), "name"));

		ck_assert_msg(h_calls(a, nm) == h_calls(b, nm), "%s %s: %lld vs %lld", what, nm,
			      h_calls(a, nm), h_calls(b, nm));
	}
}

void h_assert_same_edges(json_object *a, json_object *b)
{
	json_object *cg = h_get(b, "callgraph");
	size_t i, n = json_object_array_length(cg);

	ck_assert_int_eq(h_nedges(a), (long long)n);
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(cg, i);
		const char *x = json_object_get_string(h_get(e, "caller"));
		const char *y = json_object_get_string(h_get(e, "callee"));

		ck_assert_int_eq(h_edge(a, x, y), json_object_get_int64(h_get(e, "calls")));
	}
}

/* -------------------------------------------------- expected results -- */

/* s without blanks at both ends, in place. */
static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n'))
		*--e = 0;
	return s;
}

/* Runs compare with their blanks folded: "recurse  20" is "recurse 20". */
static int same_words(const char *a, const char *b)
{
	for (;;) {
		while (*a == ' ' && a[1] == ' ')
			a++;
		while (*b == ' ' && b[1] == ' ')
			b++;
		if (*a != *b)
			return 0;
		if (!*a)
			return 1;
		a++;
		b++;
	}
}

long long h_expected(const char *run, const char *fact)
{
	FILE *f = fopen(EXPECTED_FILE, "r");
	char line[512];
	long long v = 0;
	int found = 0;

	ck_assert_msg(f, "cannot read %s: %s", EXPECTED_FILE, strerror(errno));
	while (!found && fgets(line, sizeof(line), f)) {
		char *r = trim(line), *fa, *val, *end;

		if (!*r || *r == '#')
			continue;
		fa = strchr(r, '|');
		val = fa ? strchr(fa + 1, '|') : NULL;
		ck_assert_msg(val, "%s: not RUN | FACT | VALUE: %s", EXPECTED_FILE, r);
		*fa++ = 0;
		*val++ = 0;
		if (!same_words(trim(r), run) || !same_words(trim(fa), fact))
			continue;
		v = strtoll(trim(val), &end, 10);
		ck_assert_msg(!*end, "%s: %s | %s: not a number", EXPECTED_FILE, run, fact);
		found = 1;
	}
	fclose(f);
	ck_assert_msg(found, "%s has no '%s | %s'", EXPECTED_FILE, run, fact);
	return v;
}

/* The report's value of a JSON fact (tests/expected/targets.txt). */
static long long fact_value(json_object *json, const char *fact)
{
	char buf[512], *a, *b;

	snprintf(buf, sizeof(buf), "%s", fact);
	if (!strncmp(buf, "calls ", 6))
		return h_calls(json, trim(buf + 6));
	if (!strncmp(buf, "edge ", 5) && (b = strstr(buf, " -> "))) {
		*b = 0;
		return h_edge(json, trim(buf + 5), trim(b + 4));
	}
	if (!strcmp(buf, "edges"))
		return h_nedges(json);
	if (!strncmp(buf, "returns.", 8))
		return h_returns(json, buf + 8);
	if (!strncmp(buf, "io ", 3) && (a = strrchr(buf, ' ')) > buf + 3) {
		*a = 0;
		return h_io_fn(json, trim(buf + 3), a + 1);
	}
	ck_abort_msg("'%s' is not a fact of the JSON report", fact);
	return -1;
}

void h_check(json_object *json, const char *run, const char *fact)
{
	long long want = h_expected(run, fact), got = fact_value(json, fact);

	ck_assert_msg(got == want, "%s: %s is %lld, want %lld", run, fact, got, want);
}

void h_check_all(json_object *json, const char *run, const char *const *facts)
{
	size_t i;

	for (i = 0; facts[i]; i++)
		h_check(json, run, facts[i]);
}

/* --------------------------------------------- a target's own processes -- */

void h_plain_run(struct h_plain *p, char *const *argv)
{
	char out[PATH_MAX], err[PATH_MAX];
	pid_t pid;

	memset(p, 0, sizeof(*p));
	fresh_outputs("p", out, err);
	pid = fork();
	if (pid == 0) {
		if (redirect(out, err))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	waitpid(pid, &p->status, 0);
	p->out = h_slurp(out);
	p->err = h_slurp(err);
}

void h_plain_free(struct h_plain *p)
{
	free(p->out);
	free(p->err);
	memset(p, 0, sizeof(*p));
}

char *h_drop_lines(const char *s, const char *prefix)
{
	char *r = calloc(1, strlen(s) + 1), *w = r;
	size_t np = strlen(prefix);

	while (r && *s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) + 1 : strlen(s);

		if (strncmp(s, prefix, np)) {
			memcpy(w, s, len);
			w += len;
		}
		s += len;
	}
	return r;
}

void h_traced_same(struct h_plain *p, struct h_run *r, char *const *opts, char *const *target)
{
	char *pre[H_MAX_ARGS], *args[H_MAX_ARGS], *terr, ex[96];
	int n = 0, i;

	h_plain_run(p, target);
	pre[n++] = "-q"; /* stdout: the target's only */
	for (i = 0; opts[i] && n < H_MAX_ARGS - 1; i++)
		pre[n++] = opts[i];
	pre[n] = NULL;
	h_join_args(args, H_MAX_ARGS, pre, target);
	h_run(r, args);
	h_assert_ok(r);
	ck_assert_str_eq(r->out, p->out);
	terr = h_drop_lines(r->err, "cabbpf: ");
	ck_assert_str_eq(terr, p->err);
	free(terr);
	ck_assert_ptr_nonnull(h_exit(r->json));
	ck_assert_str_eq(h_exit(r->json), h_describe(p->status, ex, sizeof(ex)));
}

long long h_own_calls(const char *out, const char *name)
{
	const char *line = NULL, *p = out, *q;
	char key[256];

	while ((q = strstr(p, "calls:")) != NULL) {
		if (q == out || q[-1] == '\n')
			line = q;
		p = q + 1;
	}
	if (!line)
		return -1;
	snprintf(key, sizeof(key), " %s=", name);
	q = strstr(line, key);
	if (!q || (strchr(line, '\n') && q > strchr(line, '\n')))
		return -1;
	return atoll(q + strlen(key));
}

void h_assert_own_counts(const char *out, json_object *json, const char *const *names)
{
	size_t i;

	for (i = 0; names[i]; i++) {
		long long own = h_own_calls(out, names[i]);

		ck_assert_msg(own >= 0, "%s not in the target's calls line:\n%s", names[i], out);
		ck_assert_msg(h_calls(json, names[i]) == own,
			      "%s: cabbpf counted %lld, the program %lld", names[i],
			      h_calls(json, names[i]), own);
	}
}

int h_thread_lines(const char *s, long *tid, long *calls, int max)
{
	const char *p;
	int n = 0;

	for (p = strstr(s, "tid="); p; p = strstr(p + 1, "tid=")) {
		long t, c;

		ck_assert_int_eq(sscanf(p, "tid=%ld calls=%ld", &t, &c), 2);
		if (n < max) {
			tid[n] = t;
			calls[n] = c;
		}
		n++;
	}
	return n;
}

/* wait_text's gone for a process of h_spawn: its wait status kept. */
struct watched {
	pid_t pid;
	int st;
};

static int proc_gone(void *w)
{
	struct watched *c = w;

	return child_exited(c->pid, &c->st);
}

/* Assert that p (h_spawn) writes needle on stdout within 10 s (stretched
 * by H_PATIENCE), failing at once if it exits first; what names it. */
static void assert_proc_says(const struct h_proc *p, const char *needle, const char *what)
{
	struct watched c = {p->pid, 0};
	int got = wait_text(p->out_path, needle, 1, 10000, proc_gone, &c);
	char ex[96], *err;

	if (got > 0)
		return;
	err = h_slurp(p->err_path);
	if (got < 0)
		ck_abort_msg("%s (pid %d) %s before it said '%s'; its stderr:\n%s", what,
			     (int)p->pid, h_describe(c.st, ex, sizeof(ex)), needle, err);
	ck_abort_msg("%s (pid %d) did not say '%s' within %d s; its stderr:\n%s", what, (int)p->pid,
		     needle, 10 * H_PATIENCE, err);
}

void h_spawn(struct h_proc *p, char *const *argv, const char *env, const char *ready)
{
	int fds[2], err = 0;
	ssize_t n;

	memset(p, 0, sizeof(*p));
	fresh_outputs("t", p->out_path, p->err_path);
	/* The exec is waited for: its close-on-exec end closes when the
	 * child is argv[0]. Returning at the fork let a test start `cabbpf
	 * -p PID` while PID still ran this test's binary: cabbpf planned
	 * probes in the wrong program, and saw nothing of the target (the
	 * --lossless -p test of bfd033f, waits 0). */
	ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
	p->pid = fork();
	ck_assert_int_ge(p->pid, 0);
	if (p->pid == 0) {
		close(fds[0]);
		if (redirect(p->out_path, p->err_path))
			err = errno;
		if (env && strchr(env, '='))
			putenv((char *)env);
		else if (env)
			unsetenv(env);
		/* Nor a target left spinning by a test that failed. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (!err) {
			execvp(argv[0], argv);
			err = errno;
		}
		if (write(fds[1], &err, sizeof(err)) < 0)
			_exit(126);
		_exit(127);
	}
	close(fds[1]);
	do
		n = read(fds[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	ck_assert_msg(n == 0, "cannot run %s: %s", argv[0], strerror(err));
	if (ready)
		assert_proc_says(p, ready, argv[0]);
}

void h_reap_ok(pid_t pid)
{
	int st;

	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "pid %d: wait status %d", (int)pid,
		      st);
}

void h_assert_ready_same(const struct h_proc *t, int st, const struct h_plain *p)
{
	char *out = h_slurp(t->out_path), *err = h_slurp(t->err_path), ex[96];

	ck_assert_str_eq(h_describe(st, ex, 48), h_describe(p->status, ex + 48, 48));
	ck_assert_msg(!strncmp(out, "ready\n", 6), "stdout: %s", out);
	ck_assert_str_eq(out + 6, p->out);
	ck_assert_str_eq(err, p->err);
	free(out);
	free(err);
}

/* A /proc file into buf (its size reads as 0: no h_slurp). Returns the
 * bytes read, or -1 if it cannot be opened (the process is gone). */
static ssize_t proc_read(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = 0;
	return (ssize_t)n;
}

/* The fields of /proc/PID/stat after "pid (comm) ": comm may hold spaces
 * and ')', so they start after the last ')'. NULL if pid is gone. */
static const char *stat_fields(pid_t pid, char *buf, size_t size)
{
	char path[64], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (proc_read(path, buf, size) < 0)
		return NULL;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p + 2 : NULL;
}

pid_t h_child_of(pid_t ppid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	while (d && !found && (de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name);
		char st[512];
		const char *p;

		if (pid <= 0)
			continue;
		p = stat_fields(pid, st, sizeof(st)); /* "state ppid ..." */
		if (p && strlen(p) > 2 && atoi(p + 2) == (int)ppid)
			found = pid;
	}
	if (d)
		closedir(d);
	return found;
}

pid_t h_thread_named(pid_t pid, const char *comm)
{
	char dir[64], path[64 + 256 + 8], name[64];
	size_t len = strlen(comm);
	struct dirent *de;
	pid_t tid = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	while (d && !tid && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/comm", dir, de->d_name);
		if (proc_read(path, name, sizeof(name)) > 0 && !strncmp(name, comm, len) &&
		    name[len] == '\n')
			tid = (pid_t)atoi(de->d_name);
	}
	if (d)
		closedir(d);
	return tid;
}

int h_is_zombie(pid_t pid)
{
	char st[512];
	const char *p = stat_fields(pid, st, sizeof(st));

	return !p || *p == 'Z' || *p == 'X';
}

int h_reap_unless_left_stopped(pid_t pid)
{
	int st = 0, stopped = 0;
	pid_t w;
	char stf[512];

	for (;;) {
		const char *p;

		w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return st;
		ck_assert_msg(w == 0,
			      "waiting for pid %d: %s (not a child of this test: reaped by "
			      "someone else?)",
			      (int)pid, w < 0 ? strerror(errno) : "another pid");
		p = stat_fields(pid, stf, sizeof(stf));
		stopped = p && *p == 'T' ? stopped + 1 : 0;
		ck_assert_msg(stopped < 1000 * H_PATIENCE,
			      "pid %d left stopped (nobody continues it)", (int)pid);
		usleep(10000);
	}
}

long long h_cpu_ms(pid_t pid)
{
	unsigned long long ut, stime;
	char st[1024];
	const char *p = stat_fields(pid, st, sizeof(st));

	/* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	 * cmajflt utime stime: fields 3-15 of stat(5) */
	if (!p ||
	    sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &stime) != 2)
		return -1;
	return (long long)((ut + stime) * 1000 / (unsigned long long)sysconf(_SC_CLK_TCK));
}

int h_wait_cpu(pid_t pid, long long ms)
{
	long long used;

	while ((used = h_cpu_ms(pid)) >= 0 && used < ms && !h_is_zombie(pid))
		usleep(10000);
	return used >= ms;
}

/* Whether every thread of pid is in state T (stopped) or t (traced). */
static int all_stopped(pid_t pid)
{
	char dir[64], path[PATH_MAX], buf[512];
	struct dirent *de;
	int n = 0, stopped = 1;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	if (!d)
		return 0;
	while (stopped && (de = readdir(d))) {
		const char *p;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/stat", dir, de->d_name);
		if (proc_read(path, buf, sizeof(buf)) < 0)
			continue; /* the thread ended */
		p = strrchr(buf, ')');
		stopped = p && (p[2] == 'T' || p[2] == 't');
		n++;
	}
	closedir(d);
	return stopped && n > 0;
}

int h_wait_cpu_or_stopped(pid_t pid, long long ms)
{
	long long used;

	while ((used = h_cpu_ms(pid)) >= 0 && used < ms && !h_is_zombie(pid) && !all_stopped(pid))
		usleep(10000);
	return used >= ms;
}

int h_wait_stopped(pid_t pid, int ms)
{
	int i;

	/* An exited process never stops: no wait (a cabbpf that failed to
	 * start is waited for in vain otherwise). */
	for (i = 0; i < ms / 10 * H_PATIENCE && !h_is_zombie(pid); i++) {
		if (all_stopped(pid))
			return 1;
		usleep(10000);
	}
	return 0;
}

int h_wait_traced(pid_t pid, int ms)
{
	char path[64], buf[4096];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	for (i = 0; i < ms / 10 * H_PATIENCE && !h_is_zombie(pid); i++) {
		const char *t =
			proc_read(path, buf, sizeof(buf)) > 0 ? strstr(buf, "TracerPid:") : NULL;

		if (t && atoi(t + 10) != 0)
			return 1;
		usleep(10000);
	}
	return 0;
}

/* Byte at file offset off of the target's text, as mapped in pid. */
int h_mapped_byte(pid_t pid, const char *exe, uint64_t off, unsigned char *out)
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
		char *file;
		int at = -1;

		/* The path is the rest of the line: it may hold spaces. */
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &start, &end, &moff, &at) < 3 ||
		    at < 0)
			continue;
		file = line + at;
		file[strcspn(file, "\n")] = 0;
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

int h_foreign_uprobe(const char *path, uint64_t off)
{
	struct perf_event_attr attr;
	unsigned char *map;
	struct stat sb;
	int type = -1, fd, file;
	FILE *f;

	f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	ck_assert_msg(f && fscanf(f, "%d", &type) == 1, "no uprobe PMU in sysfs");
	fclose(f);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (uint32_t)type;
	attr.config1 = (uint64_t)(uintptr_t)path; /* uprobe_path */
	attr.config2 = off;			  /* probe_offset */
	fd = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	ck_assert_msg(fd >= 0, "perf_event_open(uprobe %s:0x%llx): %s", path,
		      (unsigned long long)off, strerror(errno));
	file = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_msg(file >= 0 && !fstat(file, &sb) && (uint64_t)sb.st_size > off, "%s", path);
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, file, 0);
	ck_assert(map != MAP_FAILED);
	ck_assert_msg(map[off] == 0xcc, "%s:0x%llx: no int3 in a private mapping (0x%02x)", path,
		      (unsigned long long)off, map[off]);
	munmap(map, (size_t)sb.st_size);
	close(file);
	return fd;
}

size_t h_foreign_uprobes(const char *path, int *fds, size_t max)
{
	struct symtab *st = NULL;
	size_t i, n = 0;

	ck_assert_int_eq(syms__load(path, &st), 0);
	for (i = 0; i < st->nsyms && n < max; i++)
		if (st->syms[i].size)
			fds[n++] = h_foreign_uprobe(path, st->syms[i].offset);
	syms__free(st);
	return n;
}

/* ------------------------------------------------------ --timeline -- */

struct tl_x {
	long long tid, start, end; /* ns */
	int bound;		   /* args.ended: an upper bound, not nested-checked */
};

static int tl_cmp(const void *a, const void *b)
{
	const struct tl_x *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;
}

static long long tl_ns(json_object *v)
{
	return llround(json_object_get_double(v) * 1000.0);
}

json_object *h_timeline(const char *path)
{
	json_object *root = h_parse_json(path), *ev, *e;
	struct tl_x *x, stack[4096];
	size_t i, n, nx = 0, depth = 0;
	long long tid = -1;

	ck_assert_msg(root, "--timeline %s: not JSON", path);
	ev = h_get(root, "traceEvents");
	ck_assert_msg(ev && json_object_is_type(ev, json_type_array), "no traceEvents array");
	ck_assert_ptr_nonnull(h_get(root, "otherData"));
	n = json_object_array_length(ev);
	x = calloc(n + 1, sizeof(*x));
	ck_assert_ptr_nonnull(x);
	for (i = 0; i < n; i++) {
		const char *ph;

		e = json_object_array_get_idx(ev, i);
		ck_assert_ptr_nonnull(h_get(e, "ph"));
		ck_assert_ptr_nonnull(h_get(e, "pid"));
		ck_assert_ptr_nonnull(h_get(e, "name"));
		ph = json_object_get_string(h_get(e, "ph"));
		if (!strcmp(ph, "M"))
			continue;
		ck_assert_ptr_nonnull(h_get(e, "tid"));
		ck_assert_msg(tl_ns(h_get(e, "ts")) >= 0, "event %zu: negative ts", i);
		if (!strcmp(ph, "i")) {
			json_object *a = h_get(e, "args");

			ck_assert_msg(h_get(a, "bytes") || h_get(a, "errno"),
				      "I/O event %zu: no bytes", i);
			continue;
		}
		ck_assert_msg(!strcmp(ph, "X"), "event %zu: phase %s", i, ph);
		ck_assert_msg(h_get(e, "dur") && tl_ns(h_get(e, "dur")) >= 0, "X event %zu: no dur",
			      i);
		x[nx].tid = json_object_get_int64(h_get(e, "tid"));
		x[nx].start = tl_ns(h_get(e, "ts"));
		x[nx].end = x[nx].start + tl_ns(h_get(e, "dur"));
		x[nx].bound = h_get(h_get(e, "args"), "ended") != NULL;
		nx++;
	}
	/* Per thread: activations nest (a call's frame contains its callees'). */
	qsort(x, nx, sizeof(*x), tl_cmp);
	for (i = 0; i < nx; i++) {
		if (x[i].bound)
			continue;
		if (x[i].tid != tid) {
			tid = x[i].tid;
			depth = 0;
		}
		while (depth && stack[depth - 1].end <= x[i].start)
			depth--;
		ck_assert_msg(!depth || x[i].end <= stack[depth - 1].end,
			      "thread %lld: [%lld, %lld] overlaps its enclosing [%lld, %lld]", tid,
			      x[i].start, x[i].end, stack[depth - 1].start, stack[depth - 1].end);
		ck_assert(depth < 4096);
		stack[depth++] = x[i];
	}
	free(x);
	return root;
}

long long h_tl_count(json_object *tl, const char *ph, const char *name, long long tid)
{
	json_object *ev = h_get(tl, "traceEvents");
	long long n = 0;
	size_t i;

	for (i = 0; ev && i < json_object_array_length(ev); i++) {
		json_object *e = json_object_array_get_idx(ev, i);

		if (!strcmp(json_object_get_string(h_get(e, "ph")), ph) &&
		    (!name || !strcmp(json_object_get_string(h_get(e, "name")), name)) &&
		    (tid < 0 || json_object_get_int64(h_get(e, "tid")) == tid))
			n++;
	}
	return n;
}

/* Pixels of the PNG at path that differ from its top-left pixel (the page
 * background); -1 if it cannot be read. */
long long h_png_ink(const char *path, int *w, int *h)
{
	png_image img;
	png_bytep buf;
	long long ink = 0;
	size_t i, n;

	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_file(&img, path))
		return -1;
	img.format = PNG_FORMAT_RGB;
	n = PNG_IMAGE_SIZE(img);
	buf = malloc(n);
	if (!buf || !png_image_finish_read(&img, NULL, buf, 0, NULL)) {
		free(buf);
		return -1;
	}
	*w = (int)img.width;
	*h = (int)img.height;
	for (i = 3; i + 2 < n; i += 3)
		if (memcmp(buf + i, buf, 3))
			ink++;
	free(buf);
	return ink;
}

void h_mk_cgroup(char *dir, size_t len, const char *name)
{
	snprintf(dir, len, "%s/%s", H_CGROOT, name);
	rmdir(dir);
	ck_assert_msg(mkdir(dir, 0755) == 0, "mkdir %s: %s", dir, strerror(errno));
}

void h_rm_cgroup(const char *dir)
{
	int i;

	/* A reaped task leaves its cgroup at once; retry briefly anyway. */
	for (i = 0; i < 100 && rmdir(dir) && errno == EBUSY; i++)
		usleep(10000);
}

int h_line_of(const char *file, const char *needle)
{
	char line[4096];
	FILE *f = fopen(file, "re");
	int n = 0;

	ck_assert_msg(f != NULL, "%s: %s", file, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, needle)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	ck_abort_msg("no line of %s has '%s'", file, needle);
	return 0;
}

const char *h_build_id(const char *path)
{
	static char id[160];
	char cmd[PATH_MAX + 128];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' | sed -n 's/.*Build ID: //p'", path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	id[0] = 0;
	if (!fgets(id, sizeof(id), p))
		id[0] = 0;
	pclose(p);
	id[strcspn(id, "\n")] = 0;
	ck_assert_msg(id[0], "%s has no build id", path);
	return id;
}

void h_pprof_read(struct h_pprof *p, const char *path)
{
	char cmd[PATH_MAX + 256], *line, *save = NULL;
	bool in_samples = false;
	FILE *f;
	size_t cap = 0, len = 0;
	char buf[4096];
	int st;

	memset(p, 0, sizeof(*p));
	snprintf(cmd, sizeof(cmd), "HOME=%s GOCACHE=%s/gocache go tool pprof -raw '%s' 2>&1", h_tmp,
		 h_tmp, path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(buf, sizeof(buf), f)) {
		size_t n = strlen(buf);

		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			p->raw = realloc(p->raw, cap);
			ck_assert_ptr_nonnull(p->raw);
		}
		memcpy(p->raw + len, buf, n + 1);
		len += n;
	}
	st = pclose(f);
	ck_assert_msg(st == 0 && p->raw, "go tool pprof -raw %s failed:\n%s", path,
		      p->raw ? p->raw : "");
	/* "Samples:", a header line of value types, then one line per
	 * sample: "  v1  v2  v3: loc loc ...", up to "Locations" */
	{
		char *copy = strdup(p->raw);

		for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			long long v[4];
			int k = 0, used;
			char *q = line;

			if (!strncmp(line, "Samples:", 8)) {
				in_samples = true;
				continue;
			}
			if (!strncmp(line, "Locations", 9))
				break;
			if (!in_samples || !strchr(line, ':') || strchr(line, '/'))
				continue;
			while (k < 4 && sscanf(q, " %lld%n", &v[k], &used) == 1) {
				q += used;
				k++;
			}
			if (!k || *q != ':')
				continue;
			ck_assert_msg(!p->nv || p->nv == k, "samples of %d and %d values", p->nv,
				      k);
			p->nv = k;
			p->samples++;
			for (int i = 0; i < k; i++)
				p->sum[i] += v[i];
			if (k >= 3 && v[1] < v[2])
				p->wall_lt_cpu++;
		}
		free(copy);
	}
}

void h_pprof_free(struct h_pprof *p)
{
	free(p->raw);
	memset(p, 0, sizeof(*p));
}

/* The first line of text after at that starts (past blanks) with prefix
 * and holds needle, into out; NULL if none. */
static const char *raw_line(const char *at, const char *needle, char *out, size_t len)
{
	const char *l = at;

	while (l && *l) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		const char *hit = memmem(l, n, needle, strlen(needle));

		if (hit) {
			snprintf(out, len, "%.*s", (int)n, l);
			return out;
		}
		l = e ? e + 1 : NULL;
	}
	return NULL;
}

const char *h_pprof_where(const struct h_pprof *p, const char *name)
{
	static char out[1024];
	char needle[512], line[1024];
	const char *locs = p->raw ? strstr(p->raw, "\nLocations") : NULL;
	const char *at, *sp;

	/* "     1: 0x1070 M=1 main /path/ctx.c:66 s=66" */
	if (!locs)
		return NULL;
	for (at = locs; at && (at = strstr(at, " M=")); at++) {
		const char *l = at + 3;

		while (*l >= '0' && *l <= '9')
			l++;
		snprintf(needle, sizeof(needle), " %s ", name);
		if (strncmp(l, needle, strlen(needle)))
			continue;
		if (!raw_line(l + strlen(needle), "", line, sizeof(line)))
			return NULL;
		/* FILE:LINE, then " s=START": the file may have spaces (a
		 * clone under "c i/"), so cut at the last " s=" */
		for (sp = NULL, at = line; (at = strstr(at, " s=")); at++)
			sp = at;
		snprintf(out, sizeof(out), "%.*s", sp ? (int)(sp - line) : (int)strlen(line), line);
		return out;
	}
	return NULL;
}

const char *h_pprof_mapping(const struct h_pprof *p, const char *path)
{
	static char out[2048];
	const char *maps = p->raw ? strstr(p->raw, "\nMappings") : NULL;
	char needle[PATH_MAX + 2];

	snprintf(needle, sizeof(needle), " %s ", path);
	return maps ? raw_line(maps, needle, out, sizeof(out)) : NULL;
}

/*
 * Student's t quantile for a two-sided tail of 1e-6 with df degrees of
 * freedom (df >= 1; beyond 30 the 30's, which is larger: conservative),
 * from the regularized incomplete beta function: P(|T| > q) = 1e-6.
 */
double h_t_1e6(long df)
{
	static const double q[] = {
		636619.77, 1000.0, 130.15, 49.46, 28.48, 20.05, 15.77, 13.26, 11.64, 10.52,
		9.70,	   9.08,   8.60,   8.22,  7.90,	 7.64,	7.42,  7.23,  7.07,  6.93,
		6.80,	   6.69,   6.59,   6.50,  6.42,	 6.35,	6.29,  6.23,  6.17,  6.12,
	};

	return q[(df < 1 ? 1 : df > 30 ? 30 : df) - 1];
}

int h_blocked_in(pid_t pid, long nr, int ms)
{
	int i;

	for (i = 0; i < ms / 10 * H_PATIENCE && !h_is_zombie(pid); i++) {
		if (procfs__syscall(pid, pid) == nr)
			return 1;
		usleep(10000);
	}
	return 0;
}

void h_enter_blocking_call(const struct h_proc *t, long nr)
{
	ck_assert_int_eq(kill(t->pid, SIGUSR2), 0);
	assert_proc_says(t, "waiting", "the target");
	ck_assert_msg(h_blocked_in(t->pid, nr, 10000), "pid %d not blocked in call %ld",
		      (int)t->pid, nr);
}
