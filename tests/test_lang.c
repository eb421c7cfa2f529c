// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit suite of user/lang: which language runtimes a binary carries, and
 * Go's stack-bound check (with the plan rule that steps over it). No root.
 *
 * The binaries are the real test targets (tests/targets/build.sh, the same
 * build the integration suites use): gohello (Debian's go, optimised and
 * -N -l), exc (g++ and clang++, -O0 and -O2), panic (Debian's rustc, -O0 and
 * -O2) and the C targets; plus copies made here with binutils: stripped
 * ones, and a Go binary without its Go sections (found by its symbols).
 * The stack-check matcher is checked on hand-written bytes of each form and
 * on every function of the real binaries: it must find the check in Go's
 * functions that have one and never in a C, C++ or Rust function, nor in
 * libc; and the plan must put the probe of a Go function right past it.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/elf/lang.h"
#include "user/probe/plan.h"
#include "user/elf/syms.h"

#define TARGETS ".output/targets"

static char tmpdir[64];
static int built; /* build.sh succeeded */

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static const char *tpath(const char *name)
{
	static char buf[4][PATH_MAX];
	static int k;
	char *b = buf[k++ & 3];

	snprintf(b, PATH_MAX, "%s/%s", TARGETS, name);
	return b;
}

static const char *tmppath(const char *name)
{
	static char buf[4][PATH_MAX];
	static int k;
	char *b = buf[k++ & 3];

	snprintf(b, PATH_MAX, "%s/%s", tmpdir, name);
	return b;
}

static struct lang_info detect(const char *path)
{
	struct lang_info li;
	int err;

	ck_assert_msg(built, "tests/targets/build.sh failed");
	err = lang__detect(path, &li);
	ck_assert_msg(err == 0, "lang__detect(%s) = %d", path, err);
	return li;
}

static const char *const go_bins[] = {"gohello", "gohello-noopt"};
static const char *const cxx_bins[] = {"exc-gxx-O0", "exc-gxx-O2", "exc-clangxx-O0",
				       "exc-clangxx-O2"};
static const char *const rust_bins[] = {"panic-O0", "panic-O2"};
static const char *const c_bins[] = {"recurse-O0", "recurse-O2", "coro-O0", "coro-O2",
				     "threads-O2"};

START_TEST(go_detected)
{
	struct lang_info li = detect(tpath(go_bins[_i]));

	ck_assert(li.go);
	ck_assert_ptr_nonnull(li.go_mark);
	ck_assert(!li.cxx);
	ck_assert(!li.rust);
}
END_TEST

/* `strip` removes .symtab: the Go sections remain, and they suffice. */
START_TEST(go_stripped_detected_by_section)
{
	struct lang_info li;

	ck_assert_int_eq(run("strip -o %s %s", tmppath("go-stripped"), tpath("gohello")), 0);
	li = detect(tmppath("go-stripped"));
	ck_assert(li.go);
	ck_assert_msg(!strcmp(li.go_mark, ".go.buildinfo") || !strcmp(li.go_mark, ".gopclntab"),
		      "go_mark %s", li.go_mark);
}
END_TEST

/* Without the Go sections, the runtime's symbols still say Go. */
START_TEST(go_detected_by_symbols)
{
	struct lang_info li;

	ck_assert_int_eq(run("objcopy --remove-section .go.buildinfo --remove-section .gopclntab "
			     "%s %s",
			     tpath("gohello"), tmppath("go-nosections")),
			 0);
	li = detect(tmppath("go-nosections"));
	ck_assert(li.go);
	ck_assert_msg(!strcmp(li.go_mark, "runtime.main") || !strcmp(li.go_mark, "runtime.goexit"),
		      "go_mark %s", li.go_mark);
}
END_TEST

/* V8: defining Builtins_JSEntry, or exporting v8::Isolate::New, says V8;
 * importing v8::Isolate::New (a native addon) does not. */
START_TEST(v8_detected)
{
	struct lang_info li;

	ck_assert_int_eq(run("printf 'void Builtins_JSEntry(void) {}\\n' > %s && "
			     "gcc -shared -fPIC -o %s %s",
			     tmppath("v8a.c"), tmppath("libv8a.so"), tmppath("v8a.c")),
			 0);
	li = detect(tmppath("libv8a.so"));
	ck_assert(li.v8 && !li.go);
	ck_assert_int_eq(run("printf 'void _ZN2v87Isolate3NewERKNS0_12CreateParamsE(void) {}\\n' "
			     "> %s && gcc -shared -fPIC -o %s %s",
			     tmppath("v8b.c"), tmppath("libv8b.so"), tmppath("v8b.c")),
			 0);
	li = detect(tmppath("libv8b.so"));
	ck_assert(li.v8);
	ck_assert_int_eq(run("printf 'void _ZN2v87Isolate3NewERKNS0_12CreateParamsE(void);\\n"
			     "void addon(void) { _ZN2v87Isolate3NewERKNS0_12CreateParamsE(); }\\n' "
			     "> %s && gcc -shared -fPIC -o %s %s",
			     tmppath("addon.c"), tmppath("libaddon.so"), tmppath("addon.c")),
			 0);
	li = detect(tmppath("libaddon.so"));
	ck_assert(!li.v8);
	li = detect(tpath(c_bins[0]));
	ck_assert(!li.v8);
}
END_TEST

/* The JVM: defining JNI_CreateJavaVM (libjvm.so) says JVM; importing it
 * (a program that embeds a JVM, a JNI library) does not. And each runtime
 * that walks return addresses has its name for the entries-only line. */
START_TEST(jvm_detected)
{
	struct lang_info li;

	ck_assert_int_eq(run("printf 'int JNI_CreateJavaVM(void) { return 0; }\\n' > %s && "
			     "gcc -shared -fPIC -o %s %s",
			     tmppath("jvm.c"), tmppath("libjvm.so"), tmppath("jvm.c")),
			 0);
	li = detect(tmppath("libjvm.so"));
	ck_assert(li.jvm && !li.v8 && !li.go);
	ck_assert_str_eq(lang__walker(&li), "JVM (Java)");
	ck_assert_int_eq(run("printf 'int JNI_CreateJavaVM(void);\\n"
			     "int embed(void) { return JNI_CreateJavaVM(); }\\n' "
			     "> %s && gcc -shared -fPIC -o %s %s",
			     tmppath("embed.c"), tmppath("libembed.so"), tmppath("embed.c")),
			 0);
	li = detect(tmppath("libembed.so"));
	ck_assert(!li.jvm);
	ck_assert_ptr_null(lang__walker(&li));
	li = detect(tpath(c_bins[0]));
	ck_assert(!li.jvm);
	ck_assert_ptr_null(lang__walker(&li));
	li = (struct lang_info){.v8 = true, .jvm = true};
	ck_assert_str_eq(lang__walker(&li), "V8 (JavaScript)");
	li.go = true;
	ck_assert_str_eq(lang__walker(&li), "Go");
	ck_assert_ptr_null(lang__walker(NULL));
}
END_TEST

/* OCaml: the native runtime's caml_start_program says OCaml; a C program
 * says nothing. */
START_TEST(ocaml_detected)
{
	struct lang_info li;

	ck_assert_int_eq(run("printf 'void caml_start_program(void) {}\\n' > %s && "
			     "gcc -shared -fPIC -o %s %s",
			     tmppath("caml.c"), tmppath("libcaml.so"), tmppath("caml.c")),
			 0);
	li = detect(tmppath("libcaml.so"));
	ck_assert(li.ocaml && !li.jvm && !li.go);
	ck_assert_str_eq(lang__walker(&li), "OCaml");
	ck_assert_str_eq(lang__article(lang__walker(&li)), "an");
	ck_assert_str_eq(lang__article("Go"), "a");
	ck_assert_str_eq(lang__article(NULL), "a");
	li = detect(tpath(c_bins[0]));
	ck_assert(!li.ocaml);
}
END_TEST

START_TEST(cxx_detected)
{
	struct lang_info li = detect(tpath(cxx_bins[_i]));

	ck_assert(li.cxx);
	ck_assert(!li.go);
	ck_assert(!li.rust);
	ck_assert_ptr_null(li.go_mark);
}
END_TEST

/* Stripped, a C++ program still imports the personality routine. */
START_TEST(cxx_stripped_detected)
{
	struct lang_info li;

	ck_assert_int_eq(run("strip -o %s %s", tmppath("cxx-stripped"), tpath("exc-gxx-O2")), 0);
	li = detect(tmppath("cxx-stripped"));
	ck_assert(li.cxx);
	ck_assert(!li.go);
}
END_TEST

START_TEST(rust_detected)
{
	struct lang_info li = detect(tpath(rust_bins[_i]));

	ck_assert(li.rust);
	ck_assert(!li.go);
	ck_assert(!li.cxx);
}
END_TEST

START_TEST(c_is_none)
{
	struct lang_info li = detect(tpath(c_bins[_i]));

	ck_assert(!li.go && !li.cxx && !li.rust);
	ck_assert_ptr_null(li.go_mark);
}
END_TEST

START_TEST(detect_errors)
{
	struct lang_info li;

	ck_assert_int_eq(lang__detect(NULL, &li), -EINVAL);
	ck_assert_int_eq(lang__detect("/bin/true", NULL), -EINVAL);
	ck_assert_int_eq(lang__detect("/nonexistent/cabbpf-lang", &li), -ENOENT);
	ck_assert_int_eq(lang__detect("/dev/null", &li), -ENOEXEC);
	ck_assert_int_eq(lang__detect("/tmp", &li), -ENOEXEC);
	ck_assert_int_eq(lang__detect("tests/targets/README.md", &li), -ENOEXEC);
	ck_assert(!li.go && !li.cxx && !li.rust); /* zeroed on error too */
}
END_TEST

#define CHECK_LEN(...)                                                                             \
	({                                                                                         \
		static const uint8_t b_[] = {__VA_ARGS__};                                         \
		lang__go_stack_check(b_, sizeof(b_), &slow);                                       \
	})

/* Each form, as objdump shows Debian's go 1.19 emitting it. */
START_TEST(stack_check_forms)
{
	int64_t slow = -1;

	/* cmp 0x10(%r14),%rsp; jbe +0x20 */
	ck_assert_uint_eq(CHECK_LEN(0x49, 0x3b, 0x66, 0x10, 0x76, 0x20, 0x48), 6);
	ck_assert_int_eq(slow, 6 + 0x20);
	/* the same with stackguard1 and a near jbe */
	ck_assert_uint_eq(CHECK_LEN(0x49, 0x3b, 0x66, 0x18, 0x0f, 0x86, 0x00, 0x01, 0x00, 0x00),
			  10);
	ck_assert_int_eq(slow, 10 + 0x100);
	/* lea -0x3a0(%rsp),%r12; cmp 0x10(%r14),%r12; jbe +0xd6 (rel32) */
	ck_assert_uint_eq(CHECK_LEN(0x4c, 0x8d, 0xa4, 0x24, 0x60, 0xfc, 0xff, 0xff, 0x4d, 0x3b,
				    0x66, 0x10, 0x0f, 0x86, 0xd6, 0x00, 0x00, 0x00),
			  18);
	ck_assert_int_eq(slow, 18 + 0xd6);
	/* lea -0x28(%rsp),%r12 (disp8); cmp; jbe rel8 */
	ck_assert_uint_eq(
		CHECK_LEN(0x4c, 0x8d, 0x64, 0x24, 0xd8, 0x4d, 0x3b, 0x66, 0x10, 0x76, 0x40), 11);
	/* mov %rsp,%r12; sub $0x1f98,%r12; jb X; cmp 0x10(%r14),%r12; jbe X */
	ck_assert_uint_eq(CHECK_LEN(0x49, 0x89, 0xe4, 0x49, 0x81, 0xec, 0x98, 0x1f, 0x00, 0x00,
				    0x0f, 0x82, 0xb6, 0x00, 0x00, 0x00, 0x4d, 0x3b, 0x66, 0x10,
				    0x0f, 0x86, 0xac, 0x00, 0x00, 0x00),
			  26);
	ck_assert_int_eq(slow, 16 + 0xb6);
	ck_assert_int_eq(slow, 26 + 0xac);
}
END_TEST

START_TEST(stack_check_near_misses)
{
	int64_t slow = -1;

	ck_assert_uint_eq(lang__go_stack_check(NULL, 4, &slow), 0);
	/* truncated: no jbe */
	ck_assert_uint_eq(CHECK_LEN(0x49, 0x3b, 0x66, 0x10), 0);
	ck_assert_uint_eq(CHECK_LEN(0x49, 0x3b, 0x66, 0x10, 0x0f, 0x86, 0x00), 0);
	/* jb instead of jbe */
	ck_assert_uint_eq(CHECK_LEN(0x49, 0x3b, 0x66, 0x10, 0x72, 0x20), 0);
	/* another displacement: not a stack guard */
	ck_assert_uint_eq(CHECK_LEN(0x49, 0x3b, 0x66, 0x20, 0x76, 0x20), 0);
	/* cmp against r13, not r14 */
	ck_assert_uint_eq(CHECK_LEN(0x49, 0x3b, 0x65, 0x10, 0x76, 0x20), 0);
	/* lea without the cmp of r12 */
	ck_assert_uint_eq(
		CHECK_LEN(0x4c, 0x8d, 0x64, 0x24, 0xd8, 0x49, 0x3b, 0x66, 0x10, 0x76, 0x40), 0);
	/* large form whose two branches part ways */
	ck_assert_uint_eq(CHECK_LEN(0x49, 0x89, 0xe4, 0x49, 0x81, 0xec, 0x98, 0x1f, 0x00, 0x00,
				    0x0f, 0x82, 0xb0, 0x00, 0x00, 0x00, 0x4d, 0x3b, 0x66, 0x10,
				    0x0f, 0x86, 0xac, 0x00, 0x00, 0x00),
			  0);
	/* an ordinary C prologue */
	ck_assert_uint_eq(CHECK_LEN(0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10), 0);
}
END_TEST

/* Functions of path with a Go stack check (the matcher run on each
 * function's bytes read from the file). */
static size_t count_checks(const char *path, size_t *nfuncs)
{
	struct symtab *st = NULL;
	size_t i, hits = 0;
	uint8_t code[64];
	int fd, err;

	err = syms__load(path, &st);
	ck_assert_msg(err == 0, "syms__load(%s) = %d", path, err);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	for (i = 0; i < st->nsyms; i++) {
		size_t len = st->syms[i].size < sizeof(code) ? st->syms[i].size : sizeof(code);
		ssize_t got = pread(fd, code, len, (off_t)st->syms[i].offset);
		int64_t slow;

		if (got > 0 && lang__go_stack_check(code, (size_t)got, &slow))
			hits++;
	}
	*nfuncs = st->nsyms;
	close(fd);
	syms__free(st);
	return hits;
}

/* No false positive in C, C++, Rust code, nor in all of libc. */
START_TEST(stack_check_only_in_go)
{
	static const char *const others[] = {"recurse-O2",     "coro-O0",	 "exc-gxx-O2",
					     "exc-clangxx-O2", "exc-clangxx-O0", "panic-O2",
					     "panic-O0"};
	size_t i, n, hits;

	ck_assert_msg(built, "tests/targets/build.sh failed");
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		hits = count_checks(tpath(others[i]), &n);
		ck_assert_msg(hits == 0, "%s: %zu of %zu functions", others[i], hits, n);
	}
	if (access("/lib/x86_64-linux-gnu/libc.so.6", R_OK) == 0)
		ck_assert_uint_eq(count_checks("/lib/x86_64-linux-gnu/libc.so.6", &n), 0);
	/* Most of Go's functions have one (leaves with small frames do not). */
	hits = count_checks(tpath("gohello"), &n);
	ck_assert_msg(hits > n / 2, "gohello: %zu of %zu functions", hits, n);
}
END_TEST

/* The plan moves a Go function's probe right past its check (and leaves
 * it at the entry with --no-shift). */
START_TEST(plan_steps_over_go_check)
{
	static const char *const fns[] = {"main.grow", "main.worker", "main.main"};
	struct plan_opts po = {.entry_only = true, .callsites = true};
	struct symtab *st = NULL;
	struct plan *p = NULL;
	size_t idx[3], i;
	uint8_t code[64];
	int fd;

	ck_assert_msg(built, "tests/targets/build.sh failed");
	ck_assert_int_eq(syms__load(tpath(go_bins[_i]), &st), 0);
	for (i = 0; i < 3; i++) {
		const struct sym *s = syms__find(st, fns[i]);

		ck_assert_msg(s != NULL, "%s not found", fns[i]);
		idx[i] = (size_t)(s - st->syms);
	}
	ck_assert_int_eq(plan__build(st, idx, 3, &po, &p), 0);
	fd = open(tpath(go_bins[_i]), O_RDONLY);
	ck_assert_int_ge(fd, 0);
	for (i = 0; i < 3; i++) {
		const struct sym *s = &st->syms[idx[i]];
		int64_t slow;
		size_t k;

		ck_assert_int_eq(pread(fd, code, sizeof(code), (off_t)s->offset), sizeof(code));
		k = lang__go_stack_check(code, sizeof(code), &slow);
		ck_assert_msg(k > 0, "%s: no stack check", fns[i]);
		ck_assert_msg(p->sites[i].rule == PLAN_SHIFTED, "%s: rule %d", fns[i],
			      (int)p->sites[i].rule);
		ck_assert_uint_eq(p->sites[i].shift, k);
		ck_assert_uint_eq(p->sites[i].offset, s->offset + k);
		ck_assert_uint_eq(p->sites[i].sp_delta, 0);
	}
	plan__free(p);
	p = NULL;
	po.no_shift = true;
	ck_assert_int_eq(plan__build(st, idx, 3, &po, &p), 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(p->sites[i].rule, PLAN_ENTRY);
	plan__free(p);
	close(fd);
	syms__free(st);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lang");
	TCase *tc = tcase_create("lang");
	SRunner *sr;
	int failed;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cabbpf-lang.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	built = run("tests/targets/build.sh %s >/dev/null", TARGETS) == 0;
	if (!built)
		fprintf(stderr, "test_lang: tests/targets/build.sh failed\n");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, go_detected, 0, 2);
	tcase_add_test(tc, go_stripped_detected_by_section);
	tcase_add_test(tc, go_detected_by_symbols);
	tcase_add_test(tc, v8_detected);
	tcase_add_test(tc, jvm_detected);
	tcase_add_test(tc, ocaml_detected);
	tcase_add_loop_test(tc, cxx_detected, 0, 4);
	tcase_add_test(tc, cxx_stripped_detected);
	tcase_add_loop_test(tc, rust_detected, 0, 2);
	tcase_add_loop_test(tc, c_is_none, 0, 5);
	tcase_add_test(tc, detect_errors);
	tcase_add_test(tc, stack_check_forms);
	tcase_add_test(tc, stack_check_near_misses);
	tcase_add_test(tc, stack_check_only_in_go);
	tcase_add_loop_test(tc, plan_steps_over_go_check, 0, 2);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	run("rm -rf %s", tmpdir);
	return failed ? 1 : 0;
}
