// SPDX-License-Identifier: BSD-2-Clause
/*
 * user/elf/dwarf (source lines with libdw) and user/elf/debuglink (where a
 * separate debug file is). Needs no root.
 *
 * main() writes a C file, an assembly file and a C++ file whose functions
 * sit at known lines, and builds them in a temporary directory: with -g
 * (their own DWARF), stripped with a .gnu_debuglink, stripped with the
 * debug file only under a build-id directory (--debug-dir), and without
 * -g. The suites check:
 *  - each function's file and line: the line of its name (decl_line),
 *    through DW_AT_specification for a C++ member defined out of its
 *    class, the line table's row for an assembly function;
 *  - the same lines from the separate debug file, by debuglink and by
 *    build id; none (not an error) without DWARF;
 *  - libc's symbols and lines from libc6-dbg's build-id file (the package
 *    scripts/install-deps.sh installs);
 *  - the lexical path normalization and the /proc/PID/root prefix.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/elf/debuglink.h"
#include "user/elf/dwarf.h"
#include "user/elf/syms.h"

static char dir[PATH_MAX];
static bool built;

/* Lines are numbered from 1; the comments say which line a name is on. */
static const char c_src[] = "#define T __attribute__((noinline, noipa))\n" /* 1 */
			    "\n"					      /* 2 */
			    "T int\n"					      /* 3 */
			    "alpha(int x)\n"				      /* 4: alpha */
			    "{\n"					      /* 5 */
			    "\treturn x * 3;\n"				      /* 6 */
			    "}\n"					      /* 7 */
			    "\n"					      /* 8 */
			    "static T int beta(int x) { return alpha(x) + 1; }\n" /* 9: beta */
			    "\n"						  /* 10 */
			    "int ext_asm(int);\n"				  /* 11 */
			    "\n"						  /* 12 */
			    "int main(int argc, char **argv)\n" /* 13: main */
			    "{\n"
			    "\t(void)argv;\n"
			    "\treturn beta(argc) + ext_asm(argc) > 1000;\n"
			    "}\n";

static const char s_src[] = "\t.text\n"		     /* 1 */
			    "\t.globl ext_asm\n"     /* 2 */
			    "\t.type ext_asm, @function\n" /* 3 */
			    "ext_asm:\n"	     /* 4 */
			    "\tleal 1(%rdi), %eax\n" /* 5: the first instruction */
			    "\tret\n"
			    "\t.size ext_asm, .-ext_asm\n"
			    "\t.section .note.GNU-stack,\"\",@progbits\n";

static const char cxx_src[] = "namespace ns {\n"		 /* 1 */
			      "struct Foo {\n"			 /* 2 */
			      "\tint bar(int x);\n"		 /* 3: declared */
			      "};\n"				 /* 4 */
			      "}\n"				 /* 5 */
			      "\n"				 /* 6 */
			      "__attribute__((noinline))\n"	 /* 7 */
			      "int ns::Foo::bar(int x)\n"	 /* 8: defined */
			      "{\n"				 /* 9 */
			      "\treturn x + 2;\n"		 /* 10 */
			      "}\n"				 /* 11 */
			      "\n"				 /* 12 */
			      "int main(int argc, char **)\n" /* 13 */
			      "{\n"
			      "\tns::Foo f;\n"
			      "\treturn f.bar(argc) > 100;\n"
			      "}\n";

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void write_file(const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* withg: -g; nodbg: no -g; linked: stripped with a debuglink beside it;
 * byid: stripped, its debug file under dir/debug/.build-id; cxx: g++. */
static bool build_all(void)
{
	char tmpl[] = "/tmp/cabbpf-dwarf.XXXXXX";

	if (!mkdtemp(tmpl))
		return false;
	snprintf(dir, sizeof(dir), "%s", tmpl);
	write_file("prog.c", c_src);
	write_file("ext.S", s_src);
	write_file("cxx.cc", cxx_src);
	return !run("cd %s && gcc -g -O2 prog.c ext.S -o withg && gcc -O2 prog.c ext.S -o nodbg && "
		    "cp withg linked && objcopy --only-keep-debug linked linked.debug && "
		    "strip --strip-all linked && objcopy --add-gnu-debuglink=linked.debug linked && "
		    "cp withg byid && strip --strip-all byid && "
		    "id=$(readelf -n withg | sed -n 's/.*Build ID: //p') && "
		    "mkdir -p debug/.build-id/$(echo $id | cut -c1-2) && "
		    "objcopy --only-keep-debug withg debug/.build-id/$(echo $id | cut -c1-2)/"
		    "$(echo $id | cut -c3-).debug && "
		    "g++ -g -O2 cxx.cc -o cxx",
		    dir);
}

/* The source line dwarf__lines gives function name of the binary at
 * path: "FILE:LINE" (FILE relative to dir when inside it) into out; ""
 * when it has none. */
static void line_of(const char *path, const char *name, char *out, size_t len)
{
	const char *globs[] = {name};
	struct symtab *st = NULL;
	struct srclines *s = NULL;
	size_t *idx = NULL, n = 0;
	const char *f;

	ck_assert_int_eq(syms__load(path, &st), 0);
	ck_assert_int_eq(syms__select(st, globs, 1, &idx, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(dwarf__lines(st, idx, n, &s), 0);
	ck_assert_uint_eq(s->n, 1);
	out[0] = 0;
	f = s->v[0].file;
	if (f && !strncmp(f, dir, strlen(dir)) && f[strlen(dir)] == '/')
		f += strlen(dir) + 1;
	if (f)
		snprintf(out, len, "%s:%u", f, s->v[0].line);
	dwarf__free(s);
	free(idx);
	syms__free(st);
}

static void bin_path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

/* The names at their lines, in the binary's own DWARF. */
START_TEST(own_dwarf)
{
	char path[PATH_MAX + 16], got[PATH_MAX];

	ck_assert(built);
	bin_path(path, sizeof(path), "withg");
	line_of(path, "alpha", got, sizeof(got));
	ck_assert_str_eq(got, "prog.c:4");
	line_of(path, "beta", got, sizeof(got));
	ck_assert_str_eq(got, "prog.c:9");
	line_of(path, "main", got, sizeof(got));
	ck_assert_str_eq(got, "prog.c:13");
	/* no subprogram DIE: the line table's row at the entry */
	line_of(path, "ext_asm", got, sizeof(got));
	ck_assert_str_eq(got, "ext.S:5");
}
END_TEST

/* A C++ member defined outside its class: the definition's line. */
START_TEST(cxx_member)
{
	char path[PATH_MAX + 16], got[PATH_MAX];

	ck_assert(built);
	bin_path(path, sizeof(path), "cxx");
	line_of(path, "ns::Foo::bar", got, sizeof(got));
	ck_assert_str_eq(got, "cxx.cc:8");
}
END_TEST

/* Stripped: the same lines from the debug file, found by debuglink and by
 * build id (--debug-dir); -v would name it (srclines.from). */
START_TEST(separate_debug_file)
{
	char path[PATH_MAX + 16], ddir[PATH_MAX + 16], got[PATH_MAX];
	const char *globs[] = {"alpha"};
	struct symtab *st = NULL;
	struct srclines *s = NULL;
	size_t *idx = NULL, n = 0;

	ck_assert(built);
	bin_path(path, sizeof(path), "linked");
	line_of(path, "alpha", got, sizeof(got));
	ck_assert_str_eq(got, "prog.c:4");
	line_of(path, "ext_asm", got, sizeof(got));
	ck_assert_str_eq(got, "ext.S:5");
	bin_path(ddir, sizeof(ddir), "debug");
	syms__set_debug_dir(ddir);
	bin_path(path, sizeof(path), "byid");
	line_of(path, "beta", got, sizeof(got));
	ck_assert_str_eq(got, "prog.c:9");
	ck_assert_int_eq(syms__load(path, &st), 0);
	ck_assert_ptr_nonnull(st->debug_path);
	ck_assert_ptr_nonnull(strstr(st->debug_path, "/debug/.build-id/"));
	ck_assert_ptr_nonnull(st->build_id);
	ck_assert_ptr_nonnull(strstr(st->debug_path, st->build_id + 2));
	ck_assert_int_eq(syms__select(st, globs, 1, &idx, &n), 0);
	ck_assert_int_eq(dwarf__lines(st, idx, n, &s), 0);
	ck_assert_str_eq(s->from, st->debug_path);
	dwarf__free(s);
	free(idx);
	syms__free(st);
	syms__set_debug_dir("/usr/lib/debug");
}
END_TEST

/* No DWARF anywhere: no lines, no error. */
START_TEST(no_dwarf)
{
	char path[PATH_MAX + 16];
	struct symtab *st = NULL;
	struct srclines *s = NULL;
	size_t *idx = NULL, n = 0;

	ck_assert(built);
	bin_path(path, sizeof(path), "nodbg");
	ck_assert_int_eq(syms__load(path, &st), 0);
	ck_assert_int_eq(syms__select(st, NULL, 0, &idx, &n), 0);
	ck_assert_int_eq(dwarf__lines(st, idx, n, &s), 0);
	ck_assert_uint_eq(s->n, n);
	ck_assert_uint_eq(s->found, 0);
	ck_assert_ptr_null(s->from);
	for (size_t i = 0; i < n; i++)
		ck_assert_ptr_null(s->v[i].file);
	dwarf__free(s);
	/* nothing asked: an empty answer */
	ck_assert_int_eq(dwarf__lines(st, NULL, 0, &s), 0);
	ck_assert_uint_eq(s->n, 0);
	dwarf__free(s);
	ck_assert_int_eq(dwarf__lines(NULL, idx, n, &s), -EINVAL);
	free(idx);
	syms__free(st);
}
END_TEST

/* libc has no .symtab: its symbols come from libc6-dbg's build-id file
 * (scripts/install-deps.sh installs libc6-dbg), which also has its DWARF:
 * the AVX implementations the IFUNC tests need are named there only. */
START_TEST(libc_from_libc6_dbg)
{
	const char *globs[] = {"__memmove_avx_unaligned_erms"};
	char libc[PATH_MAX], want[PATH_MAX + 128], pkg[512];
	struct symtab *st = NULL;
	struct srclines *s = NULL;
	size_t *idx = NULL, n = 0;
	FILE *p;

	p = popen("ldd /bin/true | sed -n 's/.*libc.so.6 => \\([^ ]*\\).*/\\1/p'", "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(fgets(libc, sizeof(libc), p));
	pclose(p);
	libc[strcspn(libc, "\n")] = 0;
	ck_assert_int_eq(syms__load(libc, &st), 0);
	ck_assert_msg(st->debug_path, "%s: symbols not from a debug file: is libc6-dbg installed "
				      "(scripts/install-deps.sh)?",
		      libc);
	ck_assert_ptr_nonnull(st->build_id);
	snprintf(want, sizeof(want), "/usr/lib/debug/.build-id/%.2s/%s.debug", st->build_id,
		 st->build_id + 2);
	ck_assert_str_eq(st->debug_path, want);
	snprintf(want, sizeof(want), "dpkg -S '%s' 2>/dev/null", st->debug_path);
	p = popen(want, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(fgets(pkg, sizeof(pkg), p));
	pclose(p);
	ck_assert_msg(!strncmp(pkg, "libc6-dbg:", 10), "%s is %s", st->debug_path, pkg);
	ck_assert(!st->from_dynsym);
	ck_assert_int_eq(syms__select(st, globs, 1, &idx, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(dwarf__lines(st, idx, n, &s), 0);
	ck_assert_str_eq(s->from, st->debug_path);
	ck_assert_ptr_nonnull(s->v[0].file);
	ck_assert_msg(strstr(s->v[0].file, "sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S"),
		      "%s", s->v[0].file);
	ck_assert_uint_gt(s->v[0].line, 0);
	dwarf__free(s);
	free(idx);
	syms__free(st);
}
END_TEST

START_TEST(normalize)
{
	static const char *const cases[][2] = {
		{"/b/string/../sysdeps/x.S", "/b/sysdeps/x.S"},
		{"./csu/init-first.c", "csu/init-first.c"},
		{"csu/../sysdeps/nptl/a.h", "sysdeps/nptl/a.h"},
		{"/a//b/./c/", "/a/b/c"},
		{"/..", "/"},
		{"/../a", "/a"},
		{"../a/b", "../a/b"},
		{"../../a/../b", "../../b"},
		{"a/..", "."},
		{"a/../..", ".."},
		{".", "."},
		{"/", "/"},
		{"x", "x"},
	};
	char buf[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", cases[i][0]);
		ck_assert_msg(!strcmp(dwarf__normalize(buf), cases[i][1]), "%s -> %s, want %s",
			      cases[i][0], buf, cases[i][1]);
	}
}
END_TEST

START_TEST(proc_root)
{
	char root[64];

	ck_assert_uint_eq(debuglink__proc_root("/proc/123/root/usr/bin/x", root, sizeof(root)),
			  strlen("/proc/123/root"));
	ck_assert_str_eq(root, "/proc/123/root");
	ck_assert_uint_eq(debuglink__proc_root("/proc/77/exe", root, sizeof(root)),
			  strlen("/proc/77/exe"));
	ck_assert_str_eq(root, "/proc/77/root");
	ck_assert_uint_eq(debuglink__proc_root("/usr/bin/x", root, sizeof(root)), 0);
	ck_assert_str_eq(root, "");
	ck_assert_uint_eq(debuglink__proc_root("/proc/self/root/x", root, sizeof(root)), 0);
	ck_assert_uint_eq(debuglink__proc_root("/proc/12/rootx/y", root, sizeof(root)), 0);
	ck_assert_uint_eq(debuglink__proc_root("/proc/12/cwd/y", root, sizeof(root)), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dwarf");
	TCase *tc = tcase_create("lines");
	SRunner *sr;
	int failed;

	built = build_all();
	if (!built)
		fprintf(stderr, "test_dwarf: could not build the test programs in %s\n", dir);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, own_dwarf);
	tcase_add_test(tc, cxx_member);
	tcase_add_test(tc, separate_debug_file);
	tcase_add_test(tc, no_dwarf);
	tcase_add_test(tc, libc_from_libc6_dbg);
	tcase_add_test(tc, normalize);
	tcase_add_test(tc, proc_root);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (dir[0] && !getenv("TEST_DWARF_KEEP"))
		run("rm -rf %s", dir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
