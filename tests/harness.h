/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers for the real-kernel integration suites: build the target programs,
 * run ./cabbpf as a user would, and read its JSON report (json-c).
 * Single-threaded test code; header-only so each suite stays one file.
 */
#ifndef TESTS_HARNESS_H
#define TESTS_HARNESS_H

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

/* Directory with the built targets: $OUT/targets. */
static char h_targets[256];
static char h_cabbpf[PATH_MAX];
static char h_tmp[256];

/* Build every target at -O0 and -O2 once, and run the cabbpf binary at
 * path bin. Returns 0 or -1. */
static __attribute__((unused)) int h_setup_bin(const char *bin)
{
	const char *out = getenv("OUT") ? getenv("OUT") : ".output";
	char cmd[PATH_MAX * 2];

	/* The targets are the same for every build flavour. */
	(void)out;
	snprintf(h_targets, sizeof(h_targets), ".output/targets");
	if (!realpath(bin, h_cabbpf))
		return -1;
	snprintf(h_tmp, sizeof(h_tmp), "/tmp/cabbpf-test.XXXXXX");
	if (!mkdtemp(h_tmp))
		return -1;
	snprintf(cmd, sizeof(cmd), "tests/targets/build.sh %s >/dev/null", h_targets);
	return system(cmd) == 0 ? 0 : -1;
}

/* h_setup_bin for ./cabbpf. */
static __attribute__((unused)) int h_setup(void)
{
	return h_setup_bin("cabbpf");
}

/* Path of target NAME built at level opt (0 or 2). Static buffer. */
static const char *h_target(const char *name, int opt)
{
	static char buf[4][PATH_MAX];
	static int k;
	char *b = buf[k++ & 3];

	snprintf(b, PATH_MAX, "%s/%s-O%d", h_targets, name, opt);
	return b;
}

struct h_run {
	int status;        /* cabbpf's exit code, or 128+signal */
	char *err;         /* everything written on stderr (cabbpf and target) */
	char *out;         /* stdout */
	json_object *json; /* parsed --json file, NULL if none */
	pid_t pid;         /* while running (h_start) */
	char json_path[PATH_MAX];
	char out_path[PATH_MAX];
	char err_path[PATH_MAX];
	char copy_dir[64]; /* h_nobody_copy's directory, removed by h_finish */
};

static char *h_slurp(const char *path)
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

/* A copy of the file at path in a fresh world-readable directory of
 * /tmp (its name into dir), executable by anyone; *out points to a static
 * buffer. Returns 0 or -1. */
static __attribute__((unused)) int h_nobody_copy(const char *path, char **out, char dir[64])
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

/* Parse a JSON file with room for deep nesting: the calling-context tree
 * ("cct") nests two levels per call level, and json-c's default limit is
 * 32. NULL if the file is missing or not JSON. */
static __attribute__((unused)) json_object *h_parse_json(const char *path)
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

/* Start cabbpf with argv (NULL-terminated, without argv[0]); --json is
 * added unless no_json. setuid_nobody runs it as uid 65534. */
static __attribute__((unused)) int h_start(struct h_run *r, char *const *args, int no_json, int setuid_nobody)
{
	static int seq;
	char *argv[H_MAX_ARGS];
	int n = 0, i;

	memset(r, 0, sizeof(*r));
	seq++;
	/* Unique per forked test process, and created empty before the fork:
	 * a waiter must never see an earlier run's output. */
	snprintf(r->json_path, sizeof(r->json_path), "%s/r%d-%d.json", h_tmp, (int)getpid(), seq);
	snprintf(r->out_path, sizeof(r->out_path), "%s/r%d-%d.out", h_tmp, (int)getpid(), seq);
	snprintf(r->err_path, sizeof(r->err_path), "%s/r%d-%d.err", h_tmp, (int)getpid(), seq);
	unlink(r->json_path);
	close(open(r->out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
	close(open(r->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
	argv[n++] = h_cabbpf;
	if (!no_json) {
		argv[n++] = "--json";
		argv[n++] = r->json_path;
	}
	for (i = 0; args[i] && n < H_MAX_ARGS - 1; i++)
		argv[n++] = args[i];
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
		int o = open(r->out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(r->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (o < 0 || e < 0)
			_exit(126);
		dup2(o, 1);
		dup2(e, 2);
		/* A new process group: a test's SIGINT reaches cabbpf only. */
		setpgid(0, 0);
		if (setuid_nobody && (setgid(65534) || setuid(65534)))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	return 0;
}

/* Wait for a started cabbpf, then collect its outputs. */
static __attribute__((unused)) void h_finish(struct h_run *r)
{
	int st = 0;

	waitpid(r->pid, &st, 0);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
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

/* Run to completion. */
static __attribute__((unused)) void h_run(struct h_run *r, char *const *args)
{
	if (h_start(r, args, 0, 0) == 0)
		h_finish(r);
}

static __attribute__((unused)) void h_free(struct h_run *r)
{
	free(r->err);
	free(r->out);
	if (r->json)
		json_object_put(r->json);
	memset(r, 0, sizeof(*r));
}

/* Wait until file path contains needle, up to ms. Returns 1 if found. */
static __attribute__((unused)) int h_wait_for(const char *path, const char *needle, int ms)
{
	struct timespec ts = {0, 10 * 1000000};
	int i;

	for (i = 0; i < ms / 10; i++) {
		char *s = h_slurp(path);
		int found = s && strstr(s, needle);

		free(s);
		if (found)
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

static json_object *h_get(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

/* Top-level unsigned field, or -1 if absent. */
static __attribute__((unused)) long long h_num(json_object *root, const char *key)
{
	json_object *v = h_get(root, key);

	return v ? (long long)json_object_get_int64(v) : -1;
}

/* functions[name].calls, 0 if the function is absent, -1 if no report. */
static __attribute__((unused)) long long h_calls(json_object *root, const char *name)
{
	json_object *fs = h_get(root, "functions");
	size_t i, n;

	if (!fs)
		return -1;
	n = json_object_array_length(fs);
	for (i = 0; i < n; i++) {
		json_object *f = json_object_array_get_idx(fs, i);
		const char *nm = json_object_get_string(h_get(f, "name"));

		if (nm && !strcmp(nm, name))
			return json_object_get_int64(h_get(f, "calls"));
	}
	return 0;
}

/* Calls of name by thread tid, 0 if none, -1 if no report. */
static __attribute__((unused)) long long h_thread_calls(json_object *root, const char *name, long tid)
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

/* callgraph edge caller->callee calls, 0 if absent, -1 if no report. */
static __attribute__((unused)) long long h_edge(json_object *root, const char *caller, const char *callee)
{
	json_object *cg = h_get(root, "callgraph");
	size_t i, n;

	if (!cg)
		return -1;
	n = json_object_array_length(cg);
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(cg, i);
		const char *a = json_object_get_string(h_get(e, "caller"));
		const char *b = json_object_get_string(h_get(e, "callee"));

		if (a && b && !strcmp(a, caller) && !strcmp(b, callee))
			return json_object_get_int64(h_get(e, "calls"));
	}
	return 0;
}

/* Number of edges in the call graph, -1 if no report. */
static __attribute__((unused)) long long h_nedges(json_object *root)
{
	json_object *cg = h_get(root, "callgraph");

	return cg ? (long long)json_object_array_length(cg) : -1;
}

/* returns.<key>, -1 if absent. */
static __attribute__((unused)) long long h_returns(json_object *root, const char *key)
{
	json_object *v = h_get(h_get(root, "returns"), key);

	return v ? json_object_get_int64(v) : -1;
}

/* ------------------------------------------------ traced vs untraced -- */

/* What a program did: its stdout, stderr and wait status. */
struct h_plain {
	char *out, *err;
	int status; /* wait status */
};

/* Run argv (NULL-terminated, argv[0] a path) untraced, to completion. */
static __attribute__((unused)) void h_plain_run(struct h_plain *p, char *const *argv)
{
	static int seq;
	char out[PATH_MAX], err[PATH_MAX];
	pid_t pid;

	memset(p, 0, sizeof(*p));
	snprintf(out, sizeof(out), "%s/p%d-%d.out", h_tmp, (int)getpid(), ++seq);
	snprintf(err, sizeof(err), "%s/p%d-%d.err", h_tmp, (int)getpid(), seq);
	pid = fork();
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (o < 0 || e < 0)
			_exit(126);
		dup2(o, 1);
		dup2(e, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	waitpid(pid, &p->status, 0);
	p->out = h_slurp(out);
	p->err = h_slurp(err);
}

static __attribute__((unused)) void h_plain_free(struct h_plain *p)
{
	free(p->out);
	free(p->err);
	memset(p, 0, sizeof(*p));
}

/* s without its lines that start with prefix (cabbpf's own stderr lines
 * start with "cabbpf: "). Malloc'd. */
static __attribute__((unused)) char *h_drop_lines(const char *s, const char *prefix)
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

/* The JSON report's target.exit as a wait status would describe it
 * ("exited with status N" / "killed by signal N (...)"), NULL if none. */
static __attribute__((unused)) const char *h_exit(json_object *root)
{
	return json_object_get_string(h_get(h_get(root, "target"), "exit"));
}

/* The same description for a wait status, into buf. */
static __attribute__((unused)) const char *h_describe(int st, char *buf, size_t len)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "?");
	return buf;
}

/* A program's own call counts, from its last line "calls: a=N b=M ...":
 * the count of name, or -1 if the line or the name is absent. */
static __attribute__((unused)) long long h_own_calls(const char *out, const char *name)
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

/* A child process of ppid (the first found in /proc), or 0. This kernel
 * has no /proc/PID/task/TID/children. */
static __attribute__((unused)) pid_t h_child_of(pid_t ppid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	while (d && !found && (de = readdir(d))) {
		char path[300], st[512], *p;
		pid_t pid = (pid_t)atoi(de->d_name);
		FILE *f;
		size_t n;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		f = fopen(path, "r"); /* size 0 in /proc: no h_slurp */
		if (!f)
			continue;
		n = fread(st, 1, sizeof(st) - 1, f);
		fclose(f);
		st[n] = 0;
		/* "pid (comm) state ppid ...": comm may hold spaces and ')'. */
		p = strrchr(st, ')');
		if (p && strlen(p) > 4 && atoi(p + 4) == (int)ppid)
			found = pid;
	}
	if (d)
		closedir(d);
	return found;
}

/* Whether pid is a zombie (exited, not reaped), or gone. */
static __attribute__((unused)) int h_is_zombie(pid_t pid)
{
	char path[64], st[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 1;
	n = fread(st, 1, sizeof(st) - 1, f);
	fclose(f);
	st[n] = 0;
	p = strrchr(st, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

#endif /* TESTS_HARNESS_H */
