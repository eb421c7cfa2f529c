// SPDX-License-Identifier: BSD-2-Clause
/*
 * What cabbpf asks of the kernel (user/kernel/features.c) and how a load
 * that fails is explained (user/kernel/bpfload.c), the modules alone:
 *   - a table of feature sets (the kernels users run, and single features
 *     taken away) against the paths features__choose picks and the
 *     required features it lists missing;
 *   - features__refuse: which uses a missing feature stops;
 *   - features__probe on this machine: the features a Debian 12 machine
 *     of the project has (BTF, every required one), and the test switch
 *     CABBPF_TEST_KERNEL_LACKS that the integration suites use to act as
 *     an older kernel;
 *   - the JSON object "kernel";
 *   - bpfload__refused_prog: the program a libbpf log names as refused.
 * No privileges needed (the kernel's BTF is world-readable).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "common/json.h"
#include "user/kernel/bpfload.h"
#include "user/kernel/features.h"

/* A kernel with every feature, less those named in lacks (comma list). */
static struct kernel_features kernel_without(const char *lacks)
{
	struct kernel_features kf;
	unsigned f;

	memset(&kf, 0, sizeof(kf));
	snprintf(kf.release, sizeof(kf.release), "test");
	kf.probed = true;
	for (f = 0; f < KF__N; f++)
		kf.has[f] = true;
	for (f = 0; f < KF__N; f++) {
		const char *n = features__info[f].name, *p = lacks;
		size_t len = strlen(n);

		while (p && (p = strstr(p, n))) {
			if ((p == lacks || p[-1] == ',') && (p[len] == ',' || !p[len]))
				kf.has[f] = false;
			p += len;
		}
	}
	return kf;
}

/* The kernels of the matrix, as their BTF describes them (measured with
 * cabbpf --features under tests/vm), and the paths each must get. */
static const struct {
	const char *kernel, *lacks;
	bool multi, session, casts, budget;
	uint32_t nmissing;
} table[] = {
	{"6.18 (Debian 13 backports, this machine)", "", true, true, true, true, 0},
	{"6.12 (Debian 12's newer kernel)", "uprobe_session", true, false, true, true, 0},
	{"6.8 (Ubuntu 24.04)", "uprobe_session", true, false, true, true, 0},
	{"6.1 (Debian 12's own)", "uprobe_multi,uprobe_session,rdonly_cast", false, false, false,
	 false, 0},
	/* a session-capable BTF without multi links cannot make session links */
	{"odd: sessions without multi", "uprobe_multi", false, false, true, false, 0},
	{"5.15 (Ubuntu 22.04)", "uprobe_multi,uprobe_session,rdonly_cast,bpf_loop", false, false,
	 false, false, 1},
	{"no BTF", "btf", true, true, true, true, 1},
	{"lockdown=confidentiality", "kernel_reads", true, true, true, true, 1},
};

START_TEST(paths_by_feature_set)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct kernel_features kf = kernel_without(table[i].lacks);
		struct kernel_paths p;

		features__choose(&kf, &p);
		ck_assert_msg(p.multi_links == table[i].multi, "%s: multi", table[i].kernel);
		ck_assert_msg(p.session == table[i].session, "%s: session", table[i].kernel);
		ck_assert_msg(p.io_casts == table[i].casts, "%s: casts", table[i].kernel);
		ck_assert_msg(p.budget == table[i].budget, "%s: budget", table[i].kernel);
		ck_assert_msg(p.nmissing == table[i].nmissing, "%s: %u missing, not %u",
			      table[i].kernel, p.nmissing, table[i].nmissing);
	}
}
END_TEST

/* Each required feature alone taken away is listed missing, and no
 * optional one ever is. */
START_TEST(each_required_feature_is_listed)
{
	for (unsigned f = 0; f < KF__N; f++) {
		struct kernel_features kf = kernel_without(features__info[f].name);
		struct kernel_paths p;

		features__choose(&kf, &p);
		if (features__info[f].without) {
			ck_assert_msg(p.nmissing == 0, "%s is optional", features__info[f].name);
			ck_assert_ptr_nonnull(features__info[f].what);
		} else {
			ck_assert_msg(p.nmissing == 1 && p.missing[0] == f, "%s is required",
				      features__info[f].name);
		}
		ck_assert_ptr_nonnull(features__info[f].name);
		ck_assert_ptr_nonnull(features__info[f].use);
		ck_assert_ptr_nonnull(features__info[f].since);
	}
}
END_TEST

/* features__refuse stops only the uses that need what is missing. */
START_TEST(refuse_by_use)
{
	struct kernel_features all = kernel_without("");
	struct kernel_features noloop = kernel_without("bpf_loop");
	struct kernel_features noring = kernel_without("ringbuf");
	struct kernel_features nobtf = kernel_without("btf");
	struct kernel_features old = kernel_without("uprobe_multi,uprobe_session,rdonly_cast");

	ck_assert_int_eq(features__refuse(&all, FU_CALLS | FU_GUARD | FU_IO | FU_WHOLE), 0);
	/* the guard's walk needs bpf_loop; --no-guard does not */
	ck_assert_int_eq(features__refuse(&noloop, FU_CALLS | FU_GUARD), -EOPNOTSUPP);
	ck_assert_int_eq(features__refuse(&noloop, FU_CALLS), 0);
	/* ring buffers are --io's only */
	ck_assert_int_eq(features__refuse(&noring, FU_IO), -EOPNOTSUPP);
	ck_assert_int_eq(features__refuse(&noring, FU_CALLS | FU_GUARD), 0);
	ck_assert_int_eq(features__refuse(&nobtf, FU_IO), -EOPNOTSUPP);
	/* 6.1: nothing required is missing, whatever the use */
	ck_assert_int_eq(features__refuse(&old, FU_CALLS | FU_GUARD | FU_IO | FU_WHOLE | FU_BUDGET),
			 0);
}
END_TEST

/* This machine's kernel (Debian 12 with a 6.x kernel with BTF, where the
 * suites run: the host's 6.18 and the matrix's 6.1 and 6.12 alike): BTF
 * and every required feature, found in its BTF. */
START_TEST(probe_this_kernel)
{
	struct kernel_features kf;
	struct kernel_paths p;

	unsetenv("CABBPF_TEST_KERNEL_LACKS");
	ck_assert_int_eq(features__probe(&kf), 0);
	ck_assert(kf.probed);
	ck_assert(kf.release[0]);
	ck_assert(kf.has[KF_BTF]);
	features__choose(&kf, &p);
	ck_assert_msg(p.nmissing == 0, "%u required features missing, the first %s", p.nmissing,
		      p.nmissing ? features__info[p.missing[0]].name : "");
	/* session programs need the kfunc and the attach type: never one
	 * without the other on a real kernel */
	if (kf.has[KF_UPROBE_SESSION])
		ck_assert(kf.has[KF_UPROBE_MULTI]);
}
END_TEST

/* The tests' switch: named features are taken away; an unknown name is
 * refused (a typo must not make a test pass on the real kernel). */
START_TEST(test_switch_takes_features_away)
{
	struct kernel_features kf;

	setenv("CABBPF_TEST_KERNEL_LACKS", "uprobe_multi,rdonly_cast", 1);
	ck_assert_int_eq(features__probe(&kf), 0);
	ck_assert(!kf.has[KF_UPROBE_MULTI]);
	ck_assert(!kf.has[KF_RDONLY_CAST]);
	ck_assert(kf.has[KF_BTF]);
	setenv("CABBPF_TEST_KERNEL_LACKS", "uprobe_multi,no_such_thing", 1);
	ck_assert_int_eq(features__probe(&kf), -EINVAL);
	unsetenv("CABBPF_TEST_KERNEL_LACKS");
}
END_TEST

/* "kernel" in the JSON: every feature by name, and what is missing with
 * what its absence costs. */
START_TEST(kernel_json)
{
	struct kernel_features kf = kernel_without("uprobe_multi,bpf_loop");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json *w = NULL;
	json_object *o, *m, *e;

	ck_assert_ptr_nonnull(f);
	snprintf(kf.lockdown, sizeof(kf.lockdown), "integrity");
	ck_assert_int_eq(json__new(f, false, &w), 0);
	ck_assert_int_eq(features__json(w, &kf), 0);
	ck_assert_int_eq(json__finish(w), 0);
	json__free(w);
	fclose(f);
	o = json_tokener_parse(buf);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "release")), "test");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "lockdown")),
			 "integrity");
	ck_assert(json_object_get_boolean(json_object_object_get(o, "btf")));
	e = json_object_object_get(o, "features");
	ck_assert_int_eq(json_object_object_length(e), KF__N);
	ck_assert(!json_object_get_boolean(json_object_object_get(e, "uprobe_multi")));
	ck_assert(json_object_get_boolean(json_object_object_get(e, "uprobe_session")));
	m = json_object_object_get(o, "missing");
	ck_assert_int_eq(json_object_array_length(m), 2);
	e = json_object_array_get_idx(m, 0);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(e, "feature")), "bpf_loop");
	ck_assert(json_object_get_boolean(json_object_object_get(e, "required")));
	e = json_object_array_get_idx(m, 1);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(e, "feature")),
			 "uprobe_multi");
	ck_assert(!json_object_get_boolean(json_object_object_get(e, "required")));
	ck_assert_ptr_nonnull(strstr(json_object_get_string(json_object_object_get(e, "without")),
				     "one perf link per probe site"));
	json_object_put(o);
	free(buf);
}
END_TEST

/* The program a libbpf log names as refused: the last one named. */
START_TEST(refused_program_in_log)
{
	char name[64];
	const char *log =
		"libbpf: prog 'on_entry': BPF program load failed: Invalid argument\n"
		"libbpf: prog 'on_entry': -- BEGIN PROG LOAD LOG --\n"
		"382: for (i = 0; i < PIPELINE_CLAIM_TRIES; i++) {\n"
		"back-edge from insn 382 to 383\n"
		"-- END PROG LOAD LOG --\n"
		"libbpf: prog 'on_entry': failed to load: -22\n"
		"libbpf: failed to load object 'trace_bpf'\n";

	bpfload__refused_prog(log, name, sizeof(name));
	ck_assert_str_eq(name, "on_entry");
	bpfload__refused_prog("libbpf: extern (func ksym) 'bpf_rdonly_cast': not found in kernel "
			      "or module BTFs\nlibbpf: failed to load object 'iotrace_bpf'\n",
			      name, sizeof(name));
	ck_assert_str_eq(name, "");
	bpfload__refused_prog(NULL, name, sizeof(name));
	ck_assert_str_eq(name, "");
	/* a name that does not fit is not cut */
	bpfload__refused_prog("libbpf: prog 'a_very_long_program_name': failed to load: -13\n",
			      name, 8);
	ck_assert_str_eq(name, "");
}
END_TEST

/* What bpfload__explain writes on stderr for log, as a malloc'd string. */
static char *explained(const char *log, const char *what, int err)
{
	struct bpfload_log l = {.buf = (char *)log, .len = log ? strlen(log) : 0};
	char *out = calloc(1, 65536);
	int fds[2], saved;
	ssize_t n, got = 0;

	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(pipe(fds), 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fds[1], 2);
	bpfload__explain(&l, what, err);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fds[1]);
	while ((n = read(fds[0], out + got, 65535 - (size_t)got)) > 0)
		got += n;
	close(fds[0]);
	return out;
}

/* A verifier's refusal as root is the kernel refusing a program, named,
 * with the verifier's last lines, never "permission denied (run as
 * root)": the log of the 6.18 build that refused on_exit. A refusal that
 * is not the verifier's (a kfunc the kernel lacks) gives libbpf's words. */
START_TEST(refusal_explained)
{
	const char *log =
		"libbpf: prog 'on_exit': BPF program load failed: Permission denied\n"
		"libbpf: prog 'on_exit': -- BEGIN PROG LOAD LOG --\n"
		"0: R1=ctx() R10=fp0\n"
		"; st = bpf_task_storage_get(&tstates, task, 0, 0); @ pipeline.bpf.h:176\n"
		"R2 type=untrusted_ptr_ expected=ptr_, trusted_ptr_, rcu_ptr_\n"
		"processed 180 insns (limit 1000000) max_states_per_insn 0 total_states 11\n"
		"-- END PROG LOAD LOG --\n"
		"libbpf: prog 'on_exit': failed to load: -13\n"
		"libbpf: failed to load object 'trace_bpf'\n";
	const char *kfunc = "libbpf: extern (func ksym) 'bpf_rdonly_cast': not found in kernel or "
			    "module BTFs\nlibbpf: failed to load object 'iotrace_bpf'\n";
	char *out;

	out = explained(log, "the function-tracing BPF object", -EACCES);
	ck_assert_msg(strstr(out, "cabbpf: error: loading the function-tracing BPF object: the "
				  "kernel refused BPF program 'on_exit' (Permission denied); the "
				  "verifier's last lines:"),
		      "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "    R2 type=untrusted_ptr_ expected=ptr_"));
	ck_assert_ptr_nonnull(strstr(out, "pipeline.bpf.h:176"));
	ck_assert_ptr_null(strstr(out, "processed 180 insns"));
	ck_assert_ptr_null(strstr(out, "run as root"));
	ck_assert_ptr_nonnull(strstr(out, "(the whole verifier log: cabbpf -v)"));
	free(out);
	out = explained(kfunc, "the I/O BPF object", -EINVAL);
	ck_assert_msg(strstr(out, "cabbpf: error: loading the I/O BPF object: Invalid argument; "
				  "libbpf said:") &&
			      strstr(out, "'bpf_rdonly_cast': not found in kernel"),
		      "%s", out);
	free(out);
	out = explained(NULL, "the guard's BPF object", -ENOMEM);
	ck_assert_str_eq(out, "cabbpf: error: loading the guard's BPF object: Cannot allocate "
			      "memory\n");
	free(out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("features");
	TCase *tc = tcase_create("features");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, paths_by_feature_set);
	tcase_add_test(tc, each_required_feature_is_listed);
	tcase_add_test(tc, refuse_by_use);
	tcase_add_test(tc, probe_this_kernel);
	tcase_add_test(tc, test_switch_takes_features_away);
	tcase_add_test(tc, kernel_json);
	tcase_add_test(tc, refused_program_in_log);
	tcase_add_test(tc, refusal_explained);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
