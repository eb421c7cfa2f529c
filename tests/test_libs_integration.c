// SPDX-License-Identifier: BSD-2-Clause
/*
 * Integration suite of shared libraries the target dlopens later from a
 * directory no standard search covers (user/proc/libs.h, user/proc/libpath.h): the
 * real kernel, real BPF programs, real processes (needs root).
 *
 * tests/targets/dlopener-OX dlopens "libcabplug.so" (a name) after start;
 * ld.so finds it through the DT_RUNPATH $ORIGIN/plugins-OX of dlopener, or
 * through LD_LIBRARY_PATH (a copy in a directory of this run, which ld.so
 * prefers to RUNPATH: if cabbpf picked the other copy, nothing would be
 * counted). cabbpf must resolve `libcabplug` to the very file ld.so will map
 * before it is mapped, and then count exactly, the plugin's constructor
 * included: plug_init 1, plug_leaf N+5, plug_work N (at -O0 and -O2).
 */
#include <check.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/types.h>

#include "tests/harness.h"
#include "user/proc/libpath.h"
#include "user/proc/libs.h"

#define N_CALLS 1000

/* h_tmp/ldlp-OX: a copy of plugins-OX/libcabplug.so (made by main). */
static const char *ldlp_dir(int opt)
{
	static char buf[2][PATH_MAX];

	snprintf(buf[!!opt], PATH_MAX, "%s/ldlp-O%d", h_tmp, opt);
	return buf[!!opt];
}

/* Real path of the plugin ld.so finds through dlopener's RUNPATH. */
static const char *runpath_plugin(int opt, char *buf)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/plugins-O%d/libcabplug.so", h_targets, opt);
	ck_assert_ptr_nonnull(realpath(p, buf));
	return buf;
}

static int copy_plugins(void)
{
	char cmd[PATH_MAX * 3];
	int opt;

	for (opt = 0; opt <= 2; opt += 2) {
		snprintf(cmd, sizeof(cmd), "mkdir -p %s && cp %s/plugins-O%d/libcabplug.so %s/",
			 ldlp_dir(opt), h_targets, opt, ldlp_dir(opt));
		if (system(cmd))
			return -1;
	}
	return 0;
}

static void assert_plugin_counts(const struct h_run *r, long n)
{
	h_assert_ok(r);
	ck_assert_int_eq(h_num(r->json, "lost"), 0);
	ck_assert_msg(h_calls(r->json, "libcabplug:plug_work") == n, "%s\n%s",
		      json_object_to_json_string(h_get(r->json, "functions")), r->err);
	ck_assert_int_eq(h_calls(r->json, "libcabplug:plug_leaf"), n + 5);
	ck_assert_int_eq(h_calls(r->json, "libcabplug:plug_init"), 1);
	ck_assert_int_eq(h_edge(r->json, "libcabplug:plug_init", "libcabplug:plug_leaf"), 5);
	ck_assert_int_eq(h_edge(r->json, "libcabplug:plug_work", "libcabplug:plug_leaf"), n);
	ck_assert_int_eq(h_returns(r->json, "orphan"), 0);
}

/* Starts dlopener-OX -w n into *t (with LD_LIBRARY_PATH=ldlp unless
 * NULL), once it printed "ready". */
static void start_dlopener(struct h_proc *t, int opt, const char *ldlp, long n)
{
	static char env[PATH_MAX + 32];
	char nb[32];
	char *argv[] = {(char *)h_target("dlopener", opt), "-w", nb, NULL};

	snprintf(nb, sizeof(nb), "%ld", n);
	if (ldlp)
		snprintf(env, sizeof(env), "LD_LIBRARY_PATH=%s", ldlp);
	else
		snprintf(env, sizeof(env), "LD_LIBRARY_PATH");
	h_spawn(t, argv, env, "ready");
}

/* `-- cmd` with LD_LIBRARY_PATH in the environment cabbpf passes on: the
 * command is held before exec, its environ is read, the copy in the
 * LD_LIBRARY_PATH directory (not the RUNPATH one) is probed. _i: -O0/-O2. */
START_TEST(launch_finds_plugin_in_ld_library_path)
{
	int opt = _i ? 2 : 0;
	char *args[] = {"-f",	"libcabplug:plug_*",
			"-f",	"run_plugin",
			"-f",	"load_plugin",
			"--",	(char *)h_target("dlopener", opt),
			"1000", NULL};
	struct h_run r;

	ck_assert_int_eq(setenv("LD_LIBRARY_PATH", ldlp_dir(opt), 1), 0);
	h_run(&r, args);
	unsetenv("LD_LIBRARY_PATH");
	assert_plugin_counts(&r, N_CALLS);
	ck_assert_int_eq(h_calls(r.json, "load_plugin"), 1);
	ck_assert_int_eq(h_calls(r.json, "run_plugin"), 1);
	ck_assert_int_eq(h_edge(r.json, "run_plugin", "libcabplug:plug_work"), N_CALLS);
	ck_assert_msg(strstr(r.out, "done"), "%s", r.out);
	h_free(&r);
}
END_TEST

/* `-- cmd` with nothing but the executable's RUNPATH ($ORIGIN/plugins-OX)
 * to find the plugin: cabbpf reads it from the file it will run (the held
 * child still runs cabbpf). _i: -O0/-O2. */
START_TEST(launch_finds_plugin_through_runpath)
{
	int opt = _i ? 2 : 0;
	char *args[] = {"-f", "libcabplug:plug_*", "--", (char *)h_target("dlopener", opt), "1000",
			NULL};
	struct h_run r;

	h_run(&r, args);
	assert_plugin_counts(&r, N_CALLS);
	h_free(&r);
}
END_TEST

/* `-p PID` before the process dlopens: _i bit 0 -O0/-O2; bit 1 set: the
 * plugin comes from the process's LD_LIBRARY_PATH (/proc/PID/environ),
 * else from its DT_RUNPATH $ORIGIN/plugins-OX. */
/* `cabbpf -p PID -f 'libcabplug:plug_*'` on dlopener-OX -w n (with
 * LD_LIBRARY_PATH=ldlp unless NULL) before it dlopens, into *r, until the
 * target is done and reaped. */
static void trace_before_dlopen(struct h_run *r, int opt, const char *ldlp, long n)
{
	char *opts[] = {"-f", "libcabplug:plug_*", NULL};
	struct h_proc t;
	int st;

	start_dlopener(&t, opt, ldlp, n);
	h_start_pid(r, t.pid, opts, H_TRACING);
	kill(t.pid, SIGUSR1);
	ck_assert(h_wait_for(t.out_path, "done", 10000));
	waitpid(t.pid, &st, 0);
	h_finish(r);
}

START_TEST(pid_finds_plugin_before_dlopen)
{
	int opt = (_i & 1) ? 2 : 0, env = _i & 2;
	struct h_run r;

	trace_before_dlopen(&r, opt, env ? ldlp_dir(opt) : NULL, 700);
	assert_plugin_counts(&r, 700);
	h_free(&r);
}
END_TEST

/* A library that is nowhere: exit 1 before anything runs, the message
 * names it, where it was looked for, and how to give a path. */
START_TEST(not_found_says_where_it_looked)
{
	char *launch[] = {"-f", "libnosuchplug:*", "--", (char *)h_target("dlopener", 2), "10",
			  NULL};
	char pidbuf[16], rp[PATH_MAX], want[PATH_MAX * 3];
	char *attach[] = {"-p", pidbuf, "-f", "libnosuchplug:*", NULL};
	struct h_proc t;
	struct h_run r;
	int st;

	h_run(&r, launch);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "library 'libnosuchplug' not found"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "-f /path/to/libnosuchplug.so:GLOB"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "standard directories"), "%s", r.err);
	ck_assert_msg(!strstr(r.out, "ready"), "the command ran: %s", r.out);
	ck_assert_ptr_null(r.json);
	h_free(&r);

	start_dlopener(&t, 2, ldlp_dir(0), 1);
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)t.pid);
	h_run(&r, attach);
	kill(t.pid, SIGKILL);
	waitpid(t.pid, &st, 0);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "library 'libnosuchplug' not found"), "%s", r.err);
	snprintf(want, sizeof(want), "LD_LIBRARY_PATH %s", ldlp_dir(0));
	ck_assert_msg(strstr(r.err, want), "%s", r.err);
	snprintf(want, sizeof(want), "DT_RUNPATH %s", runpath_plugin(2, rp));
	*strrchr(want, '/') = 0;
	ck_assert_msg(strstr(r.err, want), "no '%s' in: %s", want, r.err);
	ck_assert_msg(strstr(r.err, "/etc/ld.so.conf"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "-f /path/to/libnosuchplug.so:GLOB"), "%s", r.err);
	h_free(&r);
}
END_TEST

/* What `cabbpf -- cmd` sees: a child held (stopped) before its exec still
 * runs this program. Given the executable it will run, the plugin is found
 * through that file's RUNPATH ($ORIGIN expanded to its directory); without
 * it, not (and this program's own maps are not taken for the target's). */
START_TEST(held_child_uses_the_given_executable)
{
	int opt = _i ? 2 : 0;
	char buf[PATH_MAX], want[PATH_MAX];
	const char *exe = h_target("dlopener", opt);
	pid_t pid;
	int st, err;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		unsetenv("LD_LIBRARY_PATH");
		raise(SIGSTOP);
		execl(exe, "dlopener", "1", (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &st, WUNTRACED), pid);
	ck_assert(WIFSTOPPED(st));
	err = libs__resolve_exe(pid, exe, "libcabplug", buf, sizeof(buf));
	ck_assert_int_eq(libs__resolve(pid, "libcabplug", want, sizeof(want)), -ENOENT);
	/* This suite's file is mapped here, not in the target-to-be. */
	ck_assert_int_eq(libs__resolve_exe(pid, exe, "test_libs_integration", want, sizeof(want)),
			 -ENOENT);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	ck_assert_int_eq(err, 0);
	ck_assert_str_eq(buf, runpath_plugin(opt, want));
	/* A running process's own maps count. */
	ck_assert_int_eq(libs__resolve(getpid(), "test_libs_integration", buf, sizeof(buf)), 0);
}
END_TEST

/* /etc/ld.so.conf as the target sees it: a process in its own mount
 * namespace, with a tmpfs on /etc/ld.so.conf.d holding a.conf
 * ("include sub/ *.conf", relative to a.conf's directory) and sub/b.conf
 * naming a directory with libcabconf.so. Only that process sees the file:
 * found through /proc/PID/root, and not for this process. */
START_TEST(ld_so_conf_inside_the_target_root)
{
	char dir[512], buf[PATH_MAX], want[PATH_MAX];
	int ready[2], st;
	pid_t pid;
	char c;

	snprintf(dir, sizeof(dir), "%s/confdir", h_tmp);
	h_shell("mkdir -p %s && cp %s/libcabplug.so %s/libcabconf.so", dir, ldlp_dir(2), dir);
	ck_assert_int_eq(pipe(ready), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		FILE *f;

		close(ready[0]);
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("tmpfs", "/etc/ld.so.conf.d", "tmpfs", 0, NULL) ||
		    mkdir("/etc/ld.so.conf.d/sub", 0755))
			_exit(126);
		f = fopen("/etc/ld.so.conf.d/a.conf", "w");
		if (!f || fputs("# test\ninclude sub/*.conf\n", f) < 0 || fclose(f))
			_exit(126);
		f = fopen("/etc/ld.so.conf.d/sub/b.conf", "w");
		if (!f || fprintf(f, "  %s  # comment\n", dir) < 0 || fclose(f))
			_exit(126);
		if (write(ready[1], "r", 1) != 1)
			_exit(126);
		pause();
		_exit(0);
	}
	close(ready[1]);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	st = libs__resolve(pid, "libcabconf", buf, sizeof(buf));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ck_assert_int_eq(st, 0);
	snprintf(want, sizeof(want), "%s/libcabconf.so", dir);
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(libs__resolve(getpid(), "libcabconf", buf, sizeof(buf)), -ENOENT);
}
END_TEST

/* A library neither mapped nor linked is probed (a later dlopen maps it)
 * but said before the trace: a program that never loads it shows 0 calls,
 * and nothing else would say why. _i: 0 `--` dlopener (its plugin found
 * through RUNPATH), 1 `-p` dlopener before its dlopen, 2 the plugin given
 * by path to demo, which never loads it (0 calls), 3 libraries a C++
 * target links only through libstdc++ (libm) or as its interpreter
 * (ld.so), and libc: no warning. */
START_TEST(not_linked_library_is_said)
{
	char plug[PATH_MAX], sel[PATH_MAX + 16];
	char *dl[] = {"-f", "libcabplug:plug_*", "--", (char *)h_target("dlopener", 2), "1000",
		      NULL};
	char *demo[] = {"-f", sel, "--", (char *)h_target("demo", 2), NULL};
	char *cxx[] = {"-f",	"libm:sin",  "-f", "ld-linux-x86-64.so.2:_dl_catch_exception",
		       "-f",	"libc:puts", "--", (char *)h_cxx_target("exc", 1),
		       "basic", "3",	     NULL};
	const char *said = "is not among the libraries";
	struct h_run r;

	switch (_i) {
	case 0:
		h_run(&r, dl);
		assert_plugin_counts(&r, N_CALLS);
		ck_assert_msg(strstr(r.err, "library 'libcabplug' (") && strstr(r.err, said) &&
				      strstr(r.err, "dlopen"),
			      "%s", r.err);
		ck_assert_msg(!strstr(r.err, "not mapped by the target"), "%s", r.err);
		break;
	case 1:
		trace_before_dlopen(&r, 2, NULL, 700);
		assert_plugin_counts(&r, 700);
		ck_assert_msg(strstr(r.err, "not mapped by the target and not among the libraries"),
			      "%s", r.err);
		break;
	case 2:
		snprintf(sel, sizeof(sel), "%s:plug_work", runpath_plugin(2, plug));
		h_run(&r, demo);
		h_assert_ok(&r);
		ck_assert_int_eq(h_calls(r.json, "libcabplug.so:plug_work"), 0);
		ck_assert_msg(strstr(r.err, plug) && strstr(r.err, said), "%s", r.err);
		break;
	default:
		h_run(&r, cxx);
		h_assert_ok(&r);
		ck_assert_msg(!strstr(r.err, said), "%s", r.err);
		break;
	}
	h_free(&r);
}
END_TEST

/* A library the program keeps one directory below one of its own (java's
 * launcher dlopens lib/server/libjvm.so, a path it computes): not taken,
 * but the error names it as a -f to give. */
START_TEST(not_found_suggests_one_below)
{
	char dir[PATH_MAX], want[PATH_MAX * 2 + 128];
	char *args[] = {"-f", "libcabbelow:*", "--", (char *)h_target("dlopener", 2), "10", NULL};
	struct h_run r;

	snprintf(dir, sizeof(dir), "%s/below", h_tmp);
	h_shell("mkdir -p '%s/sub' && cp '%s/libcabplug.so' '%s/sub/libcabbelow.so'", dir,
		ldlp_dir(2), dir);
	ck_assert_int_eq(setenv("LD_LIBRARY_PATH", dir, 1), 0);
	h_run(&r, args);
	unsetenv("LD_LIBRARY_PATH");
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "library 'libcabbelow' not found"), "%s", r.err);
	snprintf(want, sizeof(want),
		 "one directory below one of them there is %s/sub/libcabbelow.so: "
		 "-f '%s/sub/libcabbelow.so:GLOB'",
		 dir, dir);
	ck_assert_msg(strstr(r.err, want), "no '%s' in:\n%s", want, r.err);
	ck_assert_ptr_null(r.json);
	h_free(&r);
}
END_TEST

/* libpath__needed: an executable's DT_NEEDED in order, then its
 * interpreter; none for a static program or a file that is not ELF. */
START_TEST(needed_names_in_order)
{
	char **v = NULL, txt[PATH_MAX];
	size_t n = 9;
	const char *cxx = h_cxx_target("exc", 1);

	ck_assert_int_eq(libpath__needed(cxx, &v, &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(v[0], "libstdc++.so.6");
	ck_assert_str_eq(v[1], "libgcc_s.so.1");
	ck_assert_str_eq(v[2], "libc.so.6");
	ck_assert_str_eq(v[3], "/lib64/ld-linux-x86-64.so.2");
	libpath__free_names(v, n);
	ck_assert_int_eq(libpath__needed("/bin/busybox", &v, &n), 0); /* busybox-static */
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(v);
	snprintf(txt, sizeof(txt), "%s/not-elf", h_tmp);
	h_write(txt, "#!/bin/sh\n");
	ck_assert_int_eq(libpath__needed(txt, &v, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(libpath__needed(NULL, &v, &n), -EINVAL);
	libpath__free_names(NULL, 0);
}
END_TEST

/* One file under two names (libcabplug.so and a symlink libcabplug.so.1
 * to it, in LD_LIBRARY_PATH) is one library: probed once, reported under
 * the first name; it was probed twice and every call counted under both
 * names. */
START_TEST(one_file_two_names_probed_once)
{
	char *args[] = {"-f", "libcabplug:plug_work",	       "-f",   "libcabplug.so.1:plug_work",
			"--", (char *)h_target("dlopener", 2), "1000", NULL};
	struct h_run r;

	h_shell("ln -sf libcabplug.so '%s/libcabplug.so.1'", ldlp_dir(2));
	ck_assert_int_eq(setenv("LD_LIBRARY_PATH", ldlp_dir(2), 1), 0);
	h_run(&r, args);
	unsetenv("LD_LIBRARY_PATH");
	h_assert_ok(&r);
	ck_assert_int_eq(h_num(r.json, "lost"), 0);
	ck_assert_int_eq(h_calls(r.json, "libcabplug:plug_work"), N_CALLS);
	ck_assert_int_eq(h_count_named(r.json, "plug_work"), 1);
	ck_assert_msg(strstr(r.out, "done"), "%s", r.out);
	h_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("libs-integration");
	TCase *tc = tcase_create("dlopen"), *names = tcase_create("names");

	unsetenv("LD_LIBRARY_PATH");
	if (h_integration_setup("libs-integration", copy_plugins))
		return 1;
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, launch_finds_plugin_in_ld_library_path, 0, 2);
	tcase_add_loop_test(tc, launch_finds_plugin_through_runpath, 0, 2);
	tcase_add_loop_test(tc, pid_finds_plugin_before_dlopen, 0, 4);
	tcase_add_test(tc, not_found_says_where_it_looked);
	tcase_add_loop_test(tc, held_child_uses_the_given_executable, 0, 2);
	tcase_add_test(tc, ld_so_conf_inside_the_target_root);
	suite_add_tcase(s, tc);
	tcase_set_timeout(names, 60);
	tcase_add_loop_test(names, not_linked_library_is_said, 0, 4);
	tcase_add_test(names, one_file_two_names_probed_once);
	tcase_add_test(names, needed_names_in_order);
	tcase_add_test(names, not_found_suggests_one_below);
	suite_add_tcase(s, names);
	return h_run_suite(s);
}
