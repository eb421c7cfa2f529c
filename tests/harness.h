/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers for the real-kernel integration suites: build the target programs,
 * run ./cabbpf as a user would, and read its JSON report (json-c).
 * Single-threaded test code; header-only so each suite stays one file.
 */
#ifndef TESTS_HARNESS_H
#define TESTS_HARNESS_H

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
	r->err = h_slurp(r->err_path);
	r->out = h_slurp(r->out_path);
	r->json = json_object_from_file(r->json_path);
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

#endif /* TESTS_HARNESS_H */
