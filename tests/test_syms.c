// SPDX-License-Identifier: BSD-2-Clause
/*
 * user/syms: function discovery from ELF symbol tables. Needs no root.
 *
 * main() builds one small C program with gcc in a temporary directory in
 * several shapes (PIE and -no-pie, -O0 and -O2, a PIE whose .text is not at
 * its file offset, a stripped -rdynamic copy), then the suites check:
 *  - the exact names selected by default (boilerplate left out),
 *  - file offsets, by comparing the bytes syms says are at a function's
 *    file offset with the bytes the running program finds at the function's
 *    address (the program dumps them itself), and addresses against nm,
 *  - alias collapse, zero-size symbols, IFUNC, globs, error codes,
 *  - names: a C program with GCC's fragments and clones (work.cold,
 *    helper.constprop.0, field.isra.0, logit.part.0) and a C++ program
 *    (g++ -O0 and -O2) read through the demangler, selected by demangled
 *    glob, by a name without its parameters and by mangled name; fragments
 *    never selected, and the disassembly proves what a fragment and a
 *    clone are (jumped to, called),
 *  - syms__resolve_exe() for this process, a zombie, a deleted executable
 *    and a process in another mount namespace.
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user/elf/demangle.h"
#include "user/elf/syms.h"

/* The program under test. Every function is noipa so gcc keeps it as is. */
static const char *const prog_src[] = {
	"#include <stdio.h>",
	"#include <string.h>",
	"#include <unistd.h>",
	"#define T __attribute__((noinline, noipa))",
	"T int alpha(int x) { return x * 3 + 1; }",
	"T int beta(int x) { return alpha(x) + alpha(x + 1) * 7 + 2; }",
	"static T int gamma_local(int x) { return beta(x) ^ 0x5a; }",
	/* a static function exported under a second, global name */
	"static T int hidden_impl(int x) { return gamma_local(x) + 11; }",
	"int exposed(int) __attribute__((alias(\"hidden_impl\")));",
	/* global beats weak even when the weak name is shorter */
	"T int __core_impl(int x) { return x - 7; }",
	"int core(int) __attribute__((weak, alias(\"__core_impl\")));",
	/* same binding: the name without leading underscores wins */
	"T int __twin(int x) { return x * 5; }",
	"int twin_long_name(int) __attribute__((alias(\"__twin\")));",
	/* same binding, same underscores: the shortest wins */
	"T int pair_ab(int x) { return x + 13; }",
	"int pa(int) __attribute__((alias(\"pair_ab\")));",
	/* an IFUNC: symbol ifn sits on its resolver pick_impl */
	"T int real_impl(int x) { return x * 9; }",
	"typedef int (*ifn_t)(int);",
	"static T ifn_t pick_impl(void) { return real_impl; }",
	"int ifn(int) __attribute__((ifunc(\"pick_impl\")));",
	/* a function symbol without .size: size 0 */
	"__asm__(\".text\\n.globl zero_fn\\n.type zero_fn,@function\\nzero_fn:\\n\\tret\\n\");",
	"int main(int argc, char **argv);",
	"struct fn { const char *name; const void *addr; };",
	"static const struct fn table[] = {",
	"	{\"alpha\", (const void *)alpha},",
	"	{\"beta\", (const void *)beta},",
	"	{\"gamma_local\", (const void *)gamma_local},",
	"	{\"exposed\", (const void *)hidden_impl},",
	"	{\"__core_impl\", (const void *)__core_impl},",
	"	{\"twin_long_name\", (const void *)__twin},",
	"	{\"pa\", (const void *)pair_ab},",
	"	{\"real_impl\", (const void *)real_impl},",
	"	{\"ifn\", (const void *)pick_impl},",
	"	{\"main\", (const void *)main},",
	"};",
	"int main(int argc, char **argv)",
	"{",
	"	char c;",
	"	size_t i, j;",
	"	if (argc > 1 && !strcmp(argv[1], \"dump\")) {",
	"		for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {",
	"			const unsigned char *p = table[i].addr;",
	"			printf(\"%s \", table[i].name);",
	"			for (j = 0; j < 16; j++)",
	"				printf(\"%02x\", p[j]);",
	"			printf(\"\\n\");",
	"		}",
	"		return 0;",
	"	}",
	"	if (argc > 1 && !strcmp(argv[1], \"wait\")) {",
	"		printf(\"ready\\n\");",
	"		fflush(stdout);",
	"		while (read(0, &c, 1) > 0)",
	"			;",
	"		return 0;",
	"	}",
	"	printf(\"%d\\n\", exposed(argc) + core(argc) + twin_long_name(argc) + pa(argc) + "
	"ifn(argc));",
	"	return 0;",
	"}",
};

/* GCC's fragments and clones in C, built at -O2: work's unlikely branch
 * (it calls a cold function) becomes the fragment work.cold; helper, always
 * called with k == 5, becomes helper.constprop.0; field, which reads two
 * fields of a struct passed by pointer, becomes field.isra.0; logit's body
 * behind its "if (!flag) return" becomes logit.part.0 (partial inlining). */
static const char *const frag_src[] = {
	"#include <stdio.h>",
	"struct big { long a, b, c[8]; };",
	"int flag;",
	"__attribute__((cold, noinline)) void report(int x) { fprintf(stderr, \"odd %d\\n\", x); }",
	"__attribute__((noinline)) int work(int x)",
	"{",
	"	if (x < 0) { report(x); fprintf(stderr, \"neg %d\\n\", x); x = -x * 7 + x / 3;",
	"		printf(\"%d\\n\", x); }",
	"	return x * 3;",
	"}",
	"static __attribute__((noinline)) int helper(int x, int k)",
	"{ if (x > 100000) { puts(\"big\"); puts(\"bigger\"); } return x + k; }",
	"static __attribute__((noinline)) long field(struct big *p) { return p->b * 3 + p->a; }",
	"static void logit(int x)",
	"{",
	"	if (!flag)",
	"		return;",
	"	for (int i = 0; i < x; i++) { printf(\"%d %d %d\\n\", i, x, i * x);",
	"		fprintf(stderr, \"%d\\n\", i ^ x); printf(\"%s %d\\n\", \"more\", i + x);",
	"		fprintf(stderr, \"a %d b %d c %d\\n\", x, i, x - i); }",
	"}",
	"int a(int x) { logit(x); return x + 1; }",
	"int b(int x) { logit(x + 1); return x * 2; }",
	"int c(int x) { logit(x + 2); return x * 3; }",
	"int main(int argc, char **argv)",
	"{",
	"	struct big g = {argc, argc + 1, {0}};",
	"	long s = 0;",
	"	(void)argv;",
	"	flag = argc > 2;",
	"	for (int i = 0; i < argc; i++)",
	"		s += work(i) + helper(i, 5) + field(&g) + a(i) + b(i) + c(i);",
	"	printf(\"%ld\\n\", s);",
	"	return 0;",
	"}",
};

/* C++ names, built with g++ -O0 and -O2: a namespace, a class with an
 * overloaded method and a const one, a template, an overloaded function,
 * std::vector, a static function g++ -O2 clones (scale, k == 3), and a
 * function whose cold branch g++ -O2 splits off (ns::work -> .cold). */
/* A library with two versions of vf: vf@V1 (for programs linked against
 * the old one) and vf@@V2, the default, as glibc has fopen, dlsym and
 * pthread_cond_wait. Its .symtab names them "vf@V1" and "vf@@V2"; its
 * .dynsym "vf" twice, with the versions in .gnu.version. */
static const char *const ver_src[] = {
	"__asm__(\".symver vf_old, vf@V1\");", "__asm__(\".symver vf_new, vf@@V2\");",
	"int vf_old(void) { return 1; }",      "int vf_new(void) { return 2; }",
	"int plain(void) { return 3; }",
};

static const char *const cxx_src[] = {
	"#include <cstdio>",
	"#include <vector>",
	"#define KEEP __attribute__((noinline, used))",
	"namespace ns {",
	"struct Foo {",
	"	long acc = 0;",
	"	KEEP long bar(int x);",
	"	KEEP long bar(double x);",
	"	KEEP long baz(int x) const;",
	"};",
	"KEEP long Foo::bar(int x) { asm volatile(\"\"); return acc += x; }",
	"KEEP long Foo::bar(double x) { asm volatile(\"\"); return acc += (long)x; }",
	"KEEP long Foo::baz(int x) const { asm volatile(\"\"); return acc + x; }",
	"template <typename V> KEEP V twice(V v) { asm volatile(\"\"); return v * 2; }",
	"template int twice<int>(int);",
	"template long twice<long>(long);",
	"KEEP long over(long x) { asm volatile(\"\"); return x + 1; }",
	"KEEP long over(const char *s) { asm volatile(\"\"); return s[0]; }",
	"static char note[64];",
	"__attribute__((cold, noinline)) void complain(long x)",
	"{ snprintf(note, sizeof(note), \"complain %ld\", x); }",
	"KEEP long work(long x)",
	"{",
	"	if (x % 8 == 7) {",
	"		complain(x);",
	"		x = -x * 5 + (long)note[9];",
	"		snprintf(note, sizeof(note), \"again %ld\", x);",
	"		return x + note[0];",
	"	}",
	"	return x * 3;",
	"}",
	"}",
	"static __attribute__((noinline)) long scale(long x, long k)",
	"{ asm volatile(\"\"); return x * k + (x >> 2); }",
	"int main(int argc, char **argv)",
	"{",
	"	ns::Foo f;",
	"	std::vector<int> v;",
	"	long s = 0;",
	"	(void)argv;",
	"	for (int i = 0; i < argc; i++) {",
	"		s += f.bar(i) + f.bar((double)i) + f.baz(i) + ns::twice<int>(i) +",
	"		     ns::twice<long>(i) + ns::over(i) + ns::over(\"x\") + ns::work(i) + "
	"scale(i, 3);",
	"		v.push_back(i);",
	"	}",
	"	printf(\"%ld %zu\\n\", s, v.size());",
	"	return 0;",
	"}",
};

enum variant { V_PIE_O0, V_PIE_O2, V_NOPIE_O0, V_NOPIE_O2, V_PIE_SHIFTED, V_STRIPPED, NV };

static const struct {
	const char *name;
	const char *flags;
	bool pie;
	bool stripped;
} variants[NV] = {
	[V_PIE_O0] = {"pie-O0", "-O0", true, false},
	[V_PIE_O2] = {"pie-O2", "-O2", true, false},
	[V_NOPIE_O0] = {"nopie-O0", "-O0 -no-pie", false, false},
	[V_NOPIE_O2] = {"nopie-O2", "-O2 -no-pie", false, false},
	/* .text at 0x8000 but at a smaller file offset: offset != vaddr in a PIE */
	[V_PIE_SHIFTED] = {"pie-shifted", "-O2 -Wl,--section-start=.text=0x8000", true, false},
	/* -rdynamic exports every global, so .dynsym still lists functions */
	[V_STRIPPED] = {"stripped", "-O2 -rdynamic", true, true},
};

/* Sorted by strcmp: what syms__select() must choose by default. */
static const char *const expect_full =
	"__core_impl alpha beta exposed gamma_local ifn main pa real_impl twin_long_name";

static char dir[PATH_MAX];
static char bin[NV][PATH_MAX + 32];
static char path_obj[PATH_MAX + 32], path_nofunc[PATH_MAX + 32], path_text[PATH_MAX + 32];
static char path_empty[PATH_MAX + 32];
static bool built;
/* frag_src at gcc -O2; cxx_src at g++ -O0 ([0]) and -O2 ([1]) */
static char path_frag[PATH_MAX + 32], path_cxx[2][PATH_MAX + 32];
/* ver_src as built ([0]) and stripped ([1]) */
static char path_ver[2][PATH_MAX + 32];
static bool built_names;

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f)
		return -errno;
	if (fputs(text, f) == EOF)
		err = -EIO;
	if (fclose(f) != 0 && !err)
		err = -EIO;
	return err;
}

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		fprintf(stderr, "test_syms: failed (%d): %s\n", rc, cmd);
	return rc;
}

/* Writes the lines of src (n of them) to the file at path. */
static int write_lines(const char *path, const char *const *src, size_t n)
{
	size_t i, len = 0;
	char *text;
	int err;

	for (i = 0; i < n; i++)
		len += strlen(src[i]) + 1;
	text = calloc(1, len + 1);
	if (!text)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		strcat(text, src[i]);
		strcat(text, "\n");
	}
	err = write_file(path, text);
	free(text);
	return err;
}

/* The fragment and clone program and the C++ one (after build_all). */
static bool build_names(void)
{
	char src[PATH_MAX + 32], map[PATH_MAX + 32];
	int o;

	snprintf(src, sizeof(src), "%s/frag.c", dir);
	snprintf(path_frag, sizeof(path_frag), "%s/frag-O2", dir);
	if (write_lines(src, frag_src, sizeof(frag_src) / sizeof(frag_src[0])) ||
	    run("gcc -O2 -Wall -Werror %s -o %s", src, path_frag))
		return false;
	snprintf(src, sizeof(src), "%s/names.cc", dir);
	if (write_lines(src, cxx_src, sizeof(cxx_src) / sizeof(cxx_src[0])))
		return false;
	for (o = 0; o < 2; o++) {
		snprintf(path_cxx[o], sizeof(path_cxx[o]), "%s/names-O%d", dir, 2 * o);
		if (run("g++ -O%d -Wall -Werror %s -o %s", 2 * o, src, path_cxx[o]))
			return false;
	}
	snprintf(src, sizeof(src), "%s/ver.c", dir);
	snprintf(map, sizeof(map), "%s/ver.map", dir);
	snprintf(path_ver[0], sizeof(path_ver[0]), "%s/libver.so", dir);
	snprintf(path_ver[1], sizeof(path_ver[1]), "%s/libver-stripped.so", dir);
	if (write_lines(src, ver_src, sizeof(ver_src) / sizeof(ver_src[0])) ||
	    write_file(map, "V1 { global: vf; plain; local: *; };\nV2 { global: vf; } V1;\n") ||
	    run("gcc -O2 -shared -fPIC -Wall -Werror -Wl,--version-script=%s %s -o %s", map, src,
		path_ver[0]) ||
	    run("strip --strip-all %s -o %s", path_ver[0], path_ver[1]))
		return false;
	return true;
}

/* Builds every variant once, before the suites fork their test processes. */
static bool build_all(void)
{
	char src[PATH_MAX + 32], tmp[PATH_MAX];
	size_t i, len = 0;
	char *text;
	int v;

	strcpy(tmp, "/tmp/test_syms.XXXXXX");
	if (!mkdtemp(tmp) || !realpath(tmp, dir))
		return false;
	for (i = 0; i < sizeof(prog_src) / sizeof(prog_src[0]); i++)
		len += strlen(prog_src[i]) + 1;
	text = calloc(1, len + 1);
	if (!text)
		return false;
	for (i = 0; i < sizeof(prog_src) / sizeof(prog_src[0]); i++) {
		strcat(text, prog_src[i]);
		strcat(text, "\n");
	}
	snprintf(src, sizeof(src), "%s/prog.c", dir);
	if (write_file(src, text)) {
		free(text);
		return false;
	}
	free(text);

	for (v = 0; v < NV; v++) {
		snprintf(bin[v], sizeof(bin[v]), "%s/%s", dir, variants[v].name);
		if (run("gcc -g -Wall -Werror %s %s -o %s%s", variants[v].flags, src, bin[v],
			variants[v].stripped ? ".full" : ""))
			return false;
		if (variants[v].stripped && run("strip --strip-all %s.full -o %s", bin[v], bin[v]))
			return false;
	}

	snprintf(path_obj, sizeof(path_obj), "%s/prog.o", dir);
	if (run("gcc -c -O2 %s -o %s", src, path_obj))
		return false;
	/* A shared object with data and no function at all. */
	snprintf(src, sizeof(src), "%s/nofunc.c", dir);
	snprintf(path_nofunc, sizeof(path_nofunc), "%s/nofunc.so", dir);
	if (write_file(src, "int datum = 42;\n") ||
	    run("gcc -shared -fPIC -nostdlib %s -o %s", src, path_nofunc))
		return false;
	snprintf(path_text, sizeof(path_text), "%s/notes.txt", dir);
	snprintf(path_empty, sizeof(path_empty), "%s/empty", dir);
	if (write_file(path_text, "this is not an ELF file\n") || write_file(path_empty, ""))
		return false;
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names of the selected functions, sorted, space-separated. */
static void selected_names(const struct symtab *st, const size_t *idx, size_t n, char *out,
			   size_t len)
{
	const char **names = calloc(n ? n : 1, sizeof(*names));
	size_t i;

	ck_assert_ptr_nonnull(names);
	for (i = 0; i < n; i++)
		names[i] = st->syms[idx[i]].name;
	qsort(names, n, sizeof(*names), cmp_str);
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		if (i)
			strncat(out, " ", len - strlen(out) - 1);
		strncat(out, names[i], len - strlen(out) - 1);
	}
	free(names);
}

static struct symtab *load_ok(int v)
{
	struct symtab *st = NULL;
	int err;

	ck_assert_msg(built, "test programs were not built");
	err = syms__load(bin[v], &st);
	ck_assert_msg(err == 0, "%s: syms__load = %d", variants[v].name, err);
	ck_assert_ptr_nonnull(st);
	return st;
}

START_TEST(test_default_selection)
{
	struct symtab *st = load_ok(_i);
	size_t *idx = NULL, n = 0;
	char names[1024];

	ck_assert_int_eq(st->pie, variants[_i].pie);
	/* stripped: the exported functions by name, the static one (gamma_local)
	 * from its FDE, named BINARY+0xVADDR */
	ck_assert_int_eq(st->from_dynsym, variants[_i].stripped);
	ck_assert_uint_eq(st->nfde, variants[_i].stripped ? 1 : 0);
	ck_assert_str_eq(st->path, bin[_i]);
	ck_assert_int_eq(syms__select(st, NULL, 0, &idx, &n), 0);
	selected_names(st, idx, n, names, sizeof(names));
	if (variants[_i].stripped) {
		struct symtab *full = NULL;
		char fp[PATH_MAX + 40], want[1024];
		const struct sym *g;

		snprintf(fp, sizeof(fp), "%s.full", bin[_i]);
		ck_assert_int_eq(syms__load(fp, &full), 0);
		g = syms__find(full, "gamma_local");
		ck_assert_ptr_nonnull(g);
		/* sorted: after real_impl, before twin_long_name */
		snprintf(want, sizeof(want),
			 "__core_impl alpha beta exposed ifn main pa real_impl stripped+0x%llx "
			 "twin_long_name",
			 (unsigned long long)g->vaddr);
		ck_assert_str_eq(names, want);
		syms__free(full);
	} else {
		ck_assert_str_eq(names, expect_full);
	}
	/* Boilerplate is in the table (selectable by name), just not by default. */
	ck_assert_ptr_nonnull(syms__find(st, "_start"));
	if (!variants[_i].pie && !variants[_i].stripped)
		ck_assert_ptr_nonnull(syms__find(st, "_dl_relocate_static_pie"));
	ck_assert_uint_eq(st->nunmapped, 0);
	free(idx);
	syms__free(st);
}
END_TEST

static int hexval(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

/*
 * The program prints the first 16 bytes at each function's runtime address;
 * the same bytes must be at the file offset syms computed.
 */
START_TEST(test_offsets_match_memory)
{
	struct symtab *st = load_ok(_i);
	char cmd[PATH_MAX + 64], line[256], name[128], hex[64];
	unsigned char file_bytes[16], mem_bytes[16];
	const struct sym *s;
	int fd, checked = 0, shifted = 0;
	size_t k, n;
	FILE *p;

	fd = open(bin[_i], O_RDONLY);
	ck_assert_int_ge(fd, 0);
	snprintf(cmd, sizeof(cmd), "%s dump", bin[_i]);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		ck_assert_int_eq(sscanf(line, "%127s %63s", name, hex), 2);
		s = syms__find(st, name);
		if (variants[_i].stripped && !strcmp(name, "gamma_local")) {
			/* static: not in .dynsym */
			ck_assert_ptr_null(s);
			continue;
		}
		ck_assert_msg(s != NULL, "%s: %s not found", variants[_i].name, name);
		for (k = 0; k < 16; k++)
			mem_bytes[k] =
				(unsigned char)(hexval(hex[2 * k]) << 4 | hexval(hex[2 * k + 1]));
		/* Only the function's own bytes: past its end memory may differ. */
		n = s->size < 16 ? s->size : 16;
		ck_assert_int_eq(pread(fd, file_bytes, n, (off_t)s->offset), (ssize_t)n);
		ck_assert_msg(!memcmp(file_bytes, mem_bytes, n),
			      "%s: bytes of %s at file offset %#llx differ from memory",
			      variants[_i].name, name, (unsigned long long)s->offset);
		checked++;
		shifted += s->offset != s->vaddr;
	}
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_int_eq(checked, variants[_i].stripped ? 9 : 10);
	/* In these two, a wrong vaddr-as-offset would have been caught. */
	if (_i == V_NOPIE_O0 || _i == V_NOPIE_O2 || _i == V_PIE_SHIFTED)
		ck_assert_int_eq(shifted, checked);
	close(fd);
	syms__free(st);
}
END_TEST

/* Every sized function's address equals what nm reports for its name. */
START_TEST(test_addresses_match_nm)
{
	struct symtab *st = load_ok(_i);
	char cmd[PATH_MAX + 64], line[512], name[256], type;
	unsigned long long addr;
	const struct sym *s;
	size_t i, a, hits = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s --defined-only %s", variants[_i].stripped ? "-D" : "",
		 bin[_i]);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (type != 'T' && type != 't' && type != 'W' && type != 'i' && type != 'w')
			continue;
		for (i = 0; i < st->nsyms; i++) {
			s = &st->syms[i];
			if (!strcmp(s->name, name)) {
				ck_assert_uint_eq(s->vaddr, addr);
				hits++;
			}
			for (a = 0; a < s->naliases; a++)
				if (!strcmp(s->aliases[a], name))
					ck_assert_uint_eq(s->vaddr, addr);
		}
	}
	pclose(p);
	/* the stripped copy's others are its FDEs' (test_fde_functions) */
	ck_assert_uint_eq(hits, st->nsyms - st->nfde);
	syms__free(st);
}
END_TEST

/* A stripped binary's functions from its FDEs (user/elf/fde.h): each
 * function the unstripped build's symbol table has (but the start-up
 * code's, which crt's objects may give no FDE) is in the stripped one at
 * the same address with the same size, by its exported name or as
 * BINARY+0xVADDR; and no FDE-named function is one the full table lacks. */
START_TEST(test_fde_functions)
{
	struct symtab *st = load_ok(V_STRIPPED), *full = NULL;
	char fp[PATH_MAX + 40], want[64];
	size_t *idx = NULL, n = 0, i, j, fde = 0;

	snprintf(fp, sizeof(fp), "%s.full", bin[V_STRIPPED]);
	ck_assert_int_eq(syms__load(fp, &full), 0);
	ck_assert_int_eq(syms__select(full, NULL, 0, &idx, &n), 0); /* no start-up code */
	ck_assert_uint_eq(n, 10);
	for (i = 0; i < n; i++) {
		const struct sym *s = &full->syms[idx[i]], *t = NULL;

		for (j = 0; j < st->nsyms && !t; j++)
			if (st->syms[j].vaddr == s->vaddr)
				t = &st->syms[j];
		ck_assert_msg(t, "%s (0x%llx) not found stripped", s->name,
			      (unsigned long long)s->vaddr);
		ck_assert_uint_eq(t->size, s->size);
		snprintf(want, sizeof(want), "stripped+0x%llx", (unsigned long long)s->vaddr);
		if (strcmp(t->name, s->name)) {
			ck_assert_str_eq(t->name, want);
			ck_assert_int_eq(t->bind, SYMS_BIND_LOCAL);
			fde++;
		}
	}
	ck_assert_uint_eq(fde, 1); /* gamma_local, static */
	for (j = 0; j < st->nsyms; j++) {
		bool there = false;

		if (!strstr(st->syms[j].name, "+0x"))
			continue;
		for (i = 0; i < full->nsyms && !there; i++)
			there = full->syms[i].vaddr == st->syms[j].vaddr &&
				full->syms[i].size == st->syms[j].size;
		ck_assert_msg(there, "%s is no function of the full build", st->syms[j].name);
	}
	free(idx);
	syms__free(full);
	syms__free(st);
}
END_TEST

static struct symtab *load_path_ok(const char *path);

/* A fragment GCC split off (work.cold, entered by a jump mid-function,
 * with an FDE of its own) is no function of the stripped copy: a return
 * probe there would write over a local. Its parent, and logit.part.0 (a
 * called part: a function), are. */
START_TEST(test_fde_skips_fragments)
{
	char path[PATH_MAX + 64], cmd[3 * PATH_MAX + 64];
	struct symtab *full = load_path_ok(path_frag), *st;
	const struct sym *cold = syms__find(full, "work.cold"), *work = syms__find(full, "work"),
			 *part = syms__find(full, "logit.part.0");
	size_t j;

	ck_assert_ptr_nonnull(cold);
	ck_assert_ptr_nonnull(work);
	ck_assert_ptr_nonnull(part);
	snprintf(path, sizeof(path), "%s-stripped", path_frag);
	snprintf(cmd, sizeof(cmd), "strip --strip-all '%s' -o '%s'", path_frag, path);
	ck_assert_int_eq(system(cmd), 0);
	st = load_path_ok(path);
	ck_assert_uint_gt(st->nfde, 0);
	for (j = 0; j < st->nsyms; j++)
		ck_assert_msg(st->syms[j].vaddr != cold->vaddr, "work.cold kept as %s",
			      st->syms[j].name);
	for (j = 0; j < st->nsyms && st->syms[j].vaddr != work->vaddr; j++)
		;
	ck_assert_msg(j < st->nsyms, "work not found stripped");
	ck_assert_uint_eq(st->syms[j].size, work->size);
	for (j = 0; j < st->nsyms && st->syms[j].vaddr != part->vaddr; j++)
		;
	ck_assert_msg(j < st->nsyms, "logit.part.0 not found stripped");
	syms__free(st);
	syms__free(full);
}
END_TEST

static void assert_alias(const struct symtab *st, const char *name, const char *alias,
			 enum syms_bind bind)
{
	const struct sym *s = syms__find(st, name);

	ck_assert_msg(s != NULL, "%s not found", name);
	ck_assert_str_eq(s->name, name);
	ck_assert_int_eq(s->bind, bind);
	if (!alias) {
		ck_assert_uint_eq(s->naliases, 0);
		return;
	}
	ck_assert_uint_eq(s->naliases, 1);
	ck_assert_str_eq(s->aliases[0], alias);
	ck_assert_ptr_eq(syms__find(st, alias), s);
}

START_TEST(test_alias_collapse)
{
	struct symtab *st = load_ok(_i);
	bool dyn = variants[_i].stripped;
	size_t i, j;

	/* local hidden_impl is not exported: .dynsym has only "exposed" */
	assert_alias(st, "exposed", dyn ? NULL : "hidden_impl", SYMS_BIND_GLOBAL);
	assert_alias(st, "__core_impl", "core", SYMS_BIND_GLOBAL);
	assert_alias(st, "twin_long_name", "__twin", SYMS_BIND_GLOBAL);
	assert_alias(st, "pa", "pair_ab", SYMS_BIND_GLOBAL);
	assert_alias(st, "ifn", dyn ? NULL : "pick_impl", SYMS_BIND_GLOBAL);
	assert_alias(st, "alpha", NULL, SYMS_BIND_GLOBAL);
	if (!dyn)
		assert_alias(st, "gamma_local", NULL, SYMS_BIND_LOCAL);
	ck_assert(syms__find(st, "ifn")->ifunc);
	ck_assert(!syms__find(st, "real_impl")->ifunc);
	ck_assert_ptr_null(syms__find(st, "no_such_function"));

	/* One entry per address, sorted; zero-size entries never share one. */
	for (i = 1; i < st->nsyms; i++)
		ck_assert_uint_gt(st->syms[i].vaddr, st->syms[i - 1].vaddr);
	for (i = 1; i < st->nzero; i++)
		ck_assert_uint_gt(st->zero[i].vaddr, st->zero[i - 1].vaddr);
	for (i = 0; i < st->nzero; i++)
		for (j = 0; j < st->nsyms; j++)
			ck_assert_uint_ne(st->zero[i].vaddr, st->syms[j].vaddr);
	syms__free(st);
}
END_TEST

START_TEST(test_zero_size)
{
	struct symtab *st = load_ok(_i);
	const char *glob = "zero_fn";
	size_t *idx = (size_t *)1, n = 99, i;
	bool seen = false, dummy = false;

	for (i = 0; i < st->nzero; i++) {
		ck_assert_uint_eq(st->zero[i].size, 0);
		seen |= !strcmp(st->zero[i].name, "zero_fn");
		dummy |= !strcmp(st->zero[i].name, "frame_dummy");
	}
	ck_assert(seen);
	/* crt's frame_dummy is local: only in .symtab */
	ck_assert_int_eq(dummy, !variants[_i].stripped);
	if (variants[_i].stripped)
		ck_assert_uint_eq(st->nzero, 1);
	ck_assert_ptr_null(syms__find(st, "zero_fn"));
	ck_assert_int_eq(syms__select(st, &glob, 1, &idx, &n), -ENOENT);
	ck_assert_ptr_null(idx);
	ck_assert_uint_eq(n, 0);
	syms__free(st);
}
END_TEST

static void assert_select(const struct symtab *st, const char *const *globs, size_t nglobs,
			  const char *want)
{
	size_t *idx = NULL, n = 0, i;
	char names[2048];

	ck_assert_int_eq(syms__select(st, globs, nglobs, &idx, &n), 0);
	for (i = 1; i < n; i++)
		ck_assert_uint_gt(idx[i], idx[i - 1]);
	selected_names(st, idx, n, names, sizeof(names));
	ck_assert_str_eq(names, want);
	free(idx);
}

START_TEST(test_glob_select)
{
	struct symtab *st = load_ok(V_PIE_O2);
	const char *g1[] = {"alpha", "b*"};
	const char *g2[] = {"*core*"};
	const char *g3[] = {"core"}; /* an alias name selects its function */
	const char *g4[] = {"_start", "main"};
	const char *g5[] = {"nomatch*", "zzz"};
	const char *g6[] = {"*"};
	const char *g7[] = {"alpha", NULL};
	const char *g8[] = {"alpha", "alpha", "a*"}; /* overlap: still once */
	size_t *idx = (size_t *)1, n = 99;

	assert_select(st, g1, 2, "alpha beta");
	assert_select(st, g2, 1, "__core_impl");
	assert_select(st, g3, 1, "__core_impl");
	assert_select(st, g4, 2, "_start main");
	assert_select(st, g8, 3, "alpha");
	ck_assert_int_eq(syms__select(st, g5, 2, &idx, &n), -ENOENT);
	ck_assert_ptr_null(idx);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(syms__select(st, g6, 1, &idx, &n), 0);
	ck_assert_uint_eq(n, st->nsyms);
	free(idx);
	ck_assert_int_eq(syms__select(st, g7, 2, &idx, &n), -EINVAL);
	ck_assert_int_eq(syms__select(NULL, g1, 2, &idx, &n), -EINVAL);
	ck_assert_int_eq(syms__select(st, NULL, 1, &idx, &n), -EINVAL);
	syms__free(st);
}
END_TEST

static void assert_load_fails(const char *path, int want)
{
	struct symtab *st = (struct symtab *)1;
	int err = syms__load(path, &st);

	ck_assert_msg(err == want, "%s: got %d, want %d", path, err, want);
	ck_assert_ptr_null(st);
}

START_TEST(test_load_errors)
{
	struct symtab *st = NULL;
	char missing[PATH_MAX + 32];

	ck_assert(built);
	snprintf(missing, sizeof(missing), "%s/does-not-exist", dir);
	assert_load_fails(missing, -ENOENT);
	assert_load_fails(path_text, -ENOEXEC);
	assert_load_fails(path_empty, -ENOEXEC);
	assert_load_fails("/dev/null", -ENOEXEC);
	assert_load_fails(path_obj, -ENOEXEC); /* ET_REL */
	assert_load_fails(dir, -EISDIR);
	assert_load_fails(path_nofunc, -ENODATA);
	ck_assert_int_eq(syms__load(NULL, &st), -EINVAL);
	ck_assert_int_eq(syms__load(bin[0], NULL), -EINVAL);
	syms__free(NULL);
}
END_TEST

/*
 * A real, stripped system library: Debian's libc. Its address is this
 * process's own mapping, so the bytes at getpid's file offset must equal
 * the bytes at libc's getpid here (asked of libc itself: in a -no-pie
 * program &getpid would be the executable's PLT slot).
 */
/* A default version is not part of a name ("vf@@V2" is vf, which -f vf
 * selects); another version is ("vf@V1"), from .symtab's names and from
 * .dynsym's version table alike. */
START_TEST(test_symbol_versions)
{
	const char *vf = "vf", *old = "vf@V1", *both = "vf*";
	const struct sym *vnew, *vold;
	struct symtab *st[2] = {NULL, NULL};
	size_t *idx, n, k, i;
	char names[256];

	ck_assert_msg(built_names, "test programs were not built");
	ck_assert_int_eq(syms__load(path_ver[0], &st[0]), 0);
	ck_assert_int_eq(syms__load(path_ver[1], &st[1]), 0);
	ck_assert(!st[0]->from_dynsym);
	ck_assert(st[1]->from_dynsym);
	vnew = syms__find(st[0], "vf_new");
	vold = syms__find(st[0], "vf_old");
	ck_assert_ptr_nonnull(vnew);
	ck_assert_ptr_nonnull(vold);
	ck_assert_str_eq(vnew->name, "vf");
	ck_assert_str_eq(vold->name, "vf@V1");
	for (k = 0; k < 2; k++) {
		ck_assert_int_eq(syms__select(st[k], NULL, 0, &idx, &n), 0);
		selected_names(st[k], idx, n, names, sizeof(names));
		ck_assert_str_eq(names, "plain vf vf@V1");
		for (i = 0; i < n; i++)
			ck_assert_ptr_null(strstr(st[k]->syms[idx[i]].name, "@@"));
		free(idx);
		ck_assert_int_eq(syms__select(st[k], &vf, 1, &idx, &n), 0);
		ck_assert_uint_eq(n, 1);
		ck_assert_uint_eq(st[k]->syms[idx[0]].vaddr, vnew->vaddr);
		free(idx);
		ck_assert_int_eq(syms__select(st[k], &old, 1, &idx, &n), 0);
		ck_assert_uint_eq(n, 1);
		ck_assert_uint_eq(st[k]->syms[idx[0]].vaddr, vold->vaddr);
		free(idx);
		ck_assert_int_eq(syms__select(st[k], &both, 1, &idx, &n), 0);
		ck_assert_uint_eq(n, 2);
		free(idx);
	}
	syms__free(st[0]);
	syms__free(st[1]);
}
END_TEST

START_TEST(test_system_libc)
{
	char line[PATH_MAX + 256], libc[PATH_MAX] = "", *p;
	unsigned char file_bytes[16];
	const unsigned char *mem;
	void *h;
	struct symtab *st = NULL;
	const struct sym *s;
	size_t n;
	FILE *maps;
	int fd;

	maps = fopen("/proc/self/maps", "r");
	ck_assert_ptr_nonnull(maps);
	while (fgets(line, sizeof(line), maps)) {
		p = strchr(line, '/');
		if (p && strstr(p, "/libc.so.6")) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(libc, sizeof(libc), "%s", p);
			break;
		}
	}
	fclose(maps);
	ck_assert_msg(libc[0], "libc.so.6 not mapped");
	ck_assert_int_eq(syms__load(libc, &st), 0);
	ck_assert(st->pie);
	ck_assert_uint_gt(st->nsyms, 1000);
	s = syms__find(st, "getpid");
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(syms__find(st, "malloc"));
	ck_assert(syms__find(st, "memcpy")->ifunc);
	/* "fopen@@GLIBC_2.2.5" in libc's debug symbols, when they are here */
	ck_assert_ptr_nonnull(syms__find(st, "fopen"));
	ck_assert_ptr_nonnull(syms__find(st, "dlsym"));
	h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	ck_assert_ptr_nonnull(h);
	mem = dlsym(h, "getpid");
	ck_assert_ptr_nonnull(mem);
	fd = open(libc, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	n = s->size < 16 ? s->size : 16;
	ck_assert_int_eq(pread(fd, file_bytes, n, (off_t)s->offset), (ssize_t)n);
	ck_assert(!memcmp(file_bytes, mem, n));
	close(fd);
	dlclose(h);
	syms__free(st);
}
END_TEST

START_TEST(test_resolve_self)
{
	char buf[PATH_MAX], want[PATH_MAX], tiny[4];
	ssize_t n;

	n = readlink("/proc/self/exe", want, sizeof(want) - 1);
	ck_assert_int_gt(n, 0);
	want[n] = '\0';
	ck_assert_int_eq(syms__resolve_exe(getpid(), buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(syms__resolve_exe(getpid(), tiny, sizeof(tiny)), -ENAMETOOLONG);
	ck_assert_int_eq(syms__resolve_exe(0, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(syms__resolve_exe(-1, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(syms__resolve_exe(getpid(), NULL, 10), -EINVAL);
}
END_TEST

START_TEST(test_resolve_gone)
{
	char buf[PATH_MAX], state[512], path[64], *p;
	pid_t pid;
	int fd, status, err;
	ssize_t n;

	/* Beyond any pid_max (at most 2^22). */
	ck_assert_int_eq(syms__resolve_exe(INT_MAX, buf, sizeof(buf)), -ESRCH);

	/* A reaped child: its pid is free (not reused this fast). */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	err = syms__resolve_exe(pid, buf, sizeof(buf));
	ck_assert_int_eq(err, -ESRCH);

	/* A zombie: /proc/PID is there, the executable is not. WNOWAIT waits
	 * for the exit without reaping, however long a loaded machine takes
	 * to run the child (a bounded poll of its state once gave up first). */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	ck_assert_int_eq(waitid(P_PID, (id_t)pid, &(siginfo_t){0}, WEXITED | WNOWAIT), 0);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	n = read(fd, state, sizeof(state) - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	state[n] = '\0';
	p = strrchr(state, ')');
	ck_assert_msg(p && p[1] == ' ' && p[2] == 'Z', "not a zombie: %s", state);
	ck_assert_int_eq(syms__resolve_exe(pid, buf, sizeof(buf)), -ESRCH);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);

	/* kthreadd, when pid 2 is it: a task without an executable. */
	fd = open("/proc/2/comm", O_RDONLY);
	if (fd >= 0) {
		n = read(fd, state, sizeof(state) - 1);
		close(fd);
		if (n == 9 && !memcmp(state, "kthreadd\n", 9)) {
			err = syms__resolve_exe(2, buf, sizeof(buf));
			if (geteuid() == 0)
				ck_assert_int_eq(err, -ENOENT);
			else
				ck_assert(err == -ENOENT || err == -EACCES);
		}
	}
}
END_TEST

struct child {
	pid_t pid;
	int in;	 /* write end of the child's stdin: closing it ends the child */
	int out; /* read end of the child's stdout */
};

/*
 * Starts @exe with argument "wait" and waits for its "ready" line. When @ns
 * is set, the child first enters a new mount namespace, mounts a tmpfs on
 * @ns and runs a copy of @exe from there, so the path it runs from does not
 * exist (or is another file) in our namespace. Returns 0, or 1 when the
 * kernel refuses the namespace (the child printed "skip").
 */
static int spawn_waiting(const char *exe, const char *ns, struct child *c)
{
	int in[2], out[2];
	char line[256] = "";
	ssize_t n;

	ck_assert_int_eq(pipe(in), 0);
	ck_assert_int_eq(pipe(out), 0);
	c->pid = fork();
	ck_assert_int_ge(c->pid, 0);
	if (c->pid == 0) {
		char copy[PATH_MAX + 16], buf[65536];
		const char *run_exe = exe;

		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		if (ns) {
			uid_t uid = geteuid();
			gid_t gid = getegid();
			int src, dst;

			if (uid != 0) {
				char map[64];

				/* Unprivileged: a user namespace grants the mount right. */
				if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) {
					printf("skip unshare: %s\n", strerror(errno));
					_exit(1);
				}
				snprintf(map, sizeof(map), "0 %d 1", (int)uid);
				if (write_file("/proc/self/setgroups", "deny") ||
				    write_file("/proc/self/uid_map", map))
					_exit(2);
				snprintf(map, sizeof(map), "0 %d 1", (int)gid);
				if (write_file("/proc/self/gid_map", map))
					_exit(2);
			} else if (unshare(CLONE_NEWNS)) {
				printf("skip unshare: %s\n", strerror(errno));
				_exit(1);
			}
			/* Private, so the tmpfs never shows in the parent's namespace. */
			if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
			    mount("tmpfs", ns, "tmpfs", 0, "mode=0755")) {
				printf("skip mount: %s\n", strerror(errno));
				_exit(1);
			}
			snprintf(copy, sizeof(copy), "%s/prog", ns);
			src = open(exe, O_RDONLY);
			dst = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0755);
			if (src < 0 || dst < 0)
				_exit(3);
			while ((n = read(src, buf, sizeof(buf))) > 0)
				if (write(dst, buf, (size_t)n) != n)
					_exit(3);
			close(src);
			close(dst);
			run_exe = copy;
		}
		execl(run_exe, run_exe, "wait", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in = in[1];
	c->out = out[0];
	n = read(c->out, line, sizeof(line) - 1);
	if (n > 0)
		line[n] = '\0';
	if (!strncmp(line, "skip", 4)) {
		printf("SKIP: mount namespace unavailable (%s)", line);
		return 1;
	}
	ck_assert_msg(!strcmp(line, "ready\n"), "child said '%s'", line);
	return 0;
}

static void finish(struct child *c)
{
	int status;

	close(c->in);
	close(c->out);
	ck_assert_int_eq(waitpid(c->pid, &status, 0), c->pid);
}

/* The executable was deleted after exec: only /proc/PID/exe still reaches it. */
START_TEST(test_resolve_deleted)
{
	char copy[PATH_MAX + 32], buf[PATH_MAX], want[64];
	struct symtab *st = NULL;
	struct child c;

	ck_assert(built);
	snprintf(copy, sizeof(copy), "%s/deleted-%d", dir, (int)getpid());
	ck_assert_int_eq(run("cp %s %s", bin[V_PIE_O2], copy), 0);
	spawn_waiting(copy, NULL, &c);
	ck_assert_int_eq(unlink(copy), 0);
	ck_assert_int_eq(syms__resolve_exe(c.pid, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "/proc/%d/exe", (int)c.pid);
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(syms__load(buf, &st), 0);
	ck_assert_ptr_nonnull(syms__find(st, "alpha"));
	ck_assert(!st->from_dynsym);
	syms__free(st);
	finish(&c);
}
END_TEST

/* A process in another mount namespace: reached through /proc/PID/root. */
START_TEST(test_resolve_other_mntns)
{
	char ns[PATH_MAX + 32], buf[PATH_MAX], want[2 * PATH_MAX];
	struct symtab *st = NULL;
	struct child c;

	ck_assert(built);
	snprintf(ns, sizeof(ns), "%s/ns-%d", dir, (int)getpid());
	ck_assert_int_eq(mkdir(ns, 0755), 0);
	if (spawn_waiting(bin[V_PIE_O2], ns, &c) == 0) {
		ck_assert_int_eq(syms__resolve_exe(c.pid, buf, sizeof(buf)), 0);
		snprintf(want, sizeof(want), "/proc/%d/root%s/prog", (int)c.pid, ns);
		ck_assert_str_eq(buf, want);
		ck_assert_int_eq(syms__load(buf, &st), 0);
		ck_assert_ptr_nonnull(syms__find(st, "alpha"));
		syms__free(st);
		finish(&c);
	}
	rmdir(ns);
}
END_TEST

/* GCC's cold fragments are not functions; clones are. */
START_TEST(test_fragments)
{
	ck_assert(syms__is_fragment("work.cold"));
	ck_assert(syms__is_fragment("work.cold.3"));
	ck_assert(syms__is_fragment("work.part.0.cold"));
	ck_assert(syms__is_fragment("_Z4workv.cold"));
	ck_assert(!syms__is_fragment("work"));
	ck_assert(!syms__is_fragment("work.part.0"));
	ck_assert(!syms__is_fragment("work.isra.0"));
	ck_assert(!syms__is_fragment("work.constprop.1"));
	ck_assert(!syms__is_fragment("coldstart"));
	ck_assert(!syms__is_fragment("a.colder"));
	ck_assert(!syms__is_fragment("work.cold."));
}
END_TEST

/* Readable names (user/elf/demangle.h): C++, Rust, clones; Go's dotted
 * names and plain C names stay as they are. */
static void dm_is(const char *in, const char *want)
{
	char *r = demangle__name(in);

	if (want)
		ck_assert_msg(r && !strcmp(r, want), "%s -> %s, want %s", in, r ? r : "NULL", want);
	else
		ck_assert_msg(!r, "%s -> %s, want it unchanged", in, r);
	free(r);
}

START_TEST(test_demangle)
{
	dm_is("_ZN2ns3Foo3barEi", "ns::Foo::bar(int)");
	dm_is("_Z4workv.constprop.0", "work() [clone .constprop.0]");
	dm_is("_ZN5panic11panic_inner17h7dcb23d92ebbc674E", "panic::panic_inner");
	dm_is("_RNvNtCs1234_7mycrate4util3bar", "mycrate::util::bar"); /* Rust v0 */
	dm_is("_ZN2ns4workEl.cold", "ns::work(long) [clone .cold]");
	dm_is("_ZL5scalell.constprop.0", "scale(long, long) [clone .constprop.0]");
	dm_is("logit.part.0", "logit [clone .part.0]");
	dm_is("work.part.0.cold", "work [clone .part.0.cold]");
	dm_is("work.isra.0", "work [clone .isra.0]");
	dm_is("work.constprop.1.isra.0", "work [clone .constprop.1.isra.0]");
	dm_is("main.worker", NULL);
	dm_is("runtime.gcBgMarkWorker.func2", NULL);
	dm_is("main", NULL);
	dm_is(".hidden", NULL);
	dm_is("_Zgarbage", NULL);
	ck_assert_uint_eq(demangle__base_len("ns::Foo::bar(int) const"), 12);
	ck_assert_uint_eq(demangle__base_len("std::vector<int>::push_back(int const&)"), 27);
	ck_assert_uint_eq(demangle__base_len("bool operator()(int)"), 15);
	ck_assert_uint_eq(demangle__base_len("work [clone .isra.0]"), 4);
	ck_assert_uint_eq(demangle__base_len("plain"), 5);
}
END_TEST

/* The readable names (pretty, else the linkage name) of a selection,
 * sorted, separated by " | " (C++ names hold spaces). */
static void selected_pretty(const struct symtab *st, const size_t *idx, size_t n, char *out,
			    size_t len)
{
	const char **names = calloc(n ? n : 1, sizeof(*names));
	size_t i;

	ck_assert_ptr_nonnull(names);
	for (i = 0; i < n; i++)
		names[i] =
			st->syms[idx[i]].pretty ? st->syms[idx[i]].pretty : st->syms[idx[i]].name;
	qsort(names, n, sizeof(*names), cmp_str);
	out[0] = 0;
	for (i = 0; i < n; i++) {
		if (i)
			strncat(out, " | ", len - strlen(out) - 1);
		strncat(out, names[i], len - strlen(out) - 1);
	}
	free(names);
}

/* What one glob selects, as selected_pretty writes it. */
static void assert_pretty(const struct symtab *st, const char *glob, const char *want)
{
	size_t *idx = NULL, n = 0;
	char got[4096];
	int err = syms__select(st, &glob, 1, &idx, &n);

	ck_assert_msg(!err, "-f '%s': syms__select = %d", glob, err);
	selected_pretty(st, idx, n, got, sizeof(got));
	ck_assert_msg(!strcmp(got, want), "-f '%s' selects \"%s\", want \"%s\"", glob, got, want);
	free(idx);
}

static void assert_selects_nothing(const struct symtab *st, const char *glob)
{
	size_t *idx = (size_t *)1, n = 99;

	ck_assert_msg(syms__select(st, &glob, 1, &idx, &n) == -ENOENT, "-f '%s' selects %zu", glob,
		      n);
	ck_assert_ptr_null(idx);
}

/* No fragment among the selected functions. */
static void assert_no_fragment(const struct symtab *st, const size_t *idx, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		ck_assert_msg(!syms__is_fragment(st->syms[idx[i]].name), "fragment %s selected",
			      st->syms[idx[i]].name);
}

static struct symtab *load_path_ok(const char *path)
{
	struct symtab *st = NULL;
	int err;

	ck_assert_msg(built_names, "the C++ and fragment programs were not built");
	err = syms__load(path, &st);
	ck_assert_msg(err == 0, "%s: syms__load = %d", path, err);
	return st;
}

/* How the disassembly reaches symbol name: *calls call instructions and
 * *jumps jmp/jcc instructions name it as their target. */
static void reached_by(const char *bin_path, const char *name, int *calls, int *jumps)
{
	char cmd[PATH_MAX + 64], line[1024], target[300];
	FILE *p;

	*calls = *jumps = 0;
	snprintf(target, sizeof(target), "<%s>", name);
	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn %s", bin_path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		/* "  1124:\tcall   12f0 <logit.part.0>" */
		char *tab = strchr(line, '\t');

		if (!tab || !strstr(tab, target))
			continue;
		if (!strncmp(tab + 1, "call", 4))
			(*calls)++;
		else if (tab[1] == 'j')
			(*jumps)++;
	}
	ck_assert_int_eq(pclose(p), 0);
}

/*
 * GCC's fragments and clones in C (frag_src at -O2). The premise first,
 * from the disassembly: work.cold is only ever jumped to (from work, whose
 * stack frame is live: no return address on top of the stack), the clones
 * are called. Then: fragments are in the table but never selected, by
 * default or by any glob; clones are selected and read as clones of
 * their function; a pattern naming a fragment is explained.
 */
START_TEST(test_fragments_and_clones)
{
	struct symtab *st = load_path_ok(path_frag);
	const char *all = "*";
	size_t *idx = NULL, n = 0;
	char names[1024], why[512];
	int calls, jumps;

	ck_assert_ptr_nonnull(syms__find(st, "work.cold"));
	reached_by(path_frag, "work.cold", &calls, &jumps);
	ck_assert_int_eq(calls, 0);
	ck_assert_int_gt(jumps, 0);
	reached_by(path_frag, "logit.part.0", &calls, &jumps);
	ck_assert_int_gt(calls, 0);
	reached_by(path_frag, "helper.constprop.0", &calls, &jumps);
	ck_assert_int_gt(calls, 0);
	reached_by(path_frag, "field.isra.0", &calls, &jumps);
	ck_assert_int_gt(calls, 0);

	/* The default: every function, no fragment. */
	ck_assert_int_eq(syms__select(st, NULL, 0, &idx, &n), 0);
	selected_names(st, idx, n, names, sizeof(names));
	ck_assert_str_eq(names,
			 "a b c field.isra.0 helper.constprop.0 logit.part.0 main report work");
	free(idx);
	ck_assert_int_eq(syms__select(st, &all, 1, &idx, &n), 0);
	assert_no_fragment(st, idx, n);
	free(idx);

	/* Clones: named as clones of their function, selected by its name. */
	ck_assert_str_eq(syms__find(st, "helper.constprop.0")->pretty,
			 "helper [clone .constprop.0]");
	ck_assert_str_eq(syms__find(st, "field.isra.0")->pretty, "field [clone .isra.0]");
	ck_assert_str_eq(syms__find(st, "logit.part.0")->pretty, "logit [clone .part.0]");
	ck_assert_ptr_null(syms__find(st, "work")->pretty);
	assert_pretty(st, "logit", "logit [clone .part.0]");
	assert_pretty(st, "helper", "helper [clone .constprop.0]");
	assert_pretty(st, "field.isra.0", "field [clone .isra.0]");
	assert_pretty(st, "*.part.*", "logit [clone .part.0]");
	assert_pretty(st, "w*", "work");

	/* Fragments: never, and said why. */
	assert_selects_nothing(st, "work.cold");
	assert_selects_nothing(st, "*.cold");
	ck_assert_int_eq(syms__why_unmatched(st, "work.cold", why, sizeof(why)), 0);
	ck_assert_msg(strstr(why, "work [clone .cold], a fragment of work"), "%s", why);
	ck_assert_msg(strstr(why, "not traceable"), "%s", why);
	ck_assert_int_eq(syms__why_unmatched(st, "*.cold", why, sizeof(why)), 0);
	ck_assert_int_eq(syms__why_unmatched(st, "nosuch", why, sizeof(why)), -ENOENT);
	ck_assert_int_eq(syms__why_unmatched(st, "work", why, sizeof(why)), -ENOENT);
	ck_assert_int_eq(syms__why_unmatched(NULL, "work", why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(syms__why_unmatched(st, "work", why, 0), -EINVAL);
	/* Truncated to fit, still a string. */
	ck_assert_int_eq(syms__why_unmatched(st, "work.cold", why, 8), 0);
	ck_assert_uint_eq(strlen(why), 7);
	syms__free(st);
}
END_TEST

/*
 * C++ names (cxx_src, g++ -O0 and -O2): readable names, and every way -f
 * reaches a function: demangled glob, demangled name without parameters
 * (also without a template's return type), full signature, mangled name.
 * At -O2, scale is a .constprop clone and ns::work has a .cold fragment.
 */
START_TEST(test_cxx_names)
{
	struct symtab *st = load_path_ok(path_cxx[_i]);
	const char *all = "*", *vec = "std::vector*";
	size_t *idx = NULL, n = 0, i;
	char why[512];

	ck_assert_str_eq(syms__find(st, "_ZN2ns3Foo3barEi")->pretty, "ns::Foo::bar(int)");
	ck_assert_str_eq(syms__find(st, "_ZN2ns3Foo3barEd")->pretty, "ns::Foo::bar(double)");
	ck_assert_str_eq(syms__find(st, "_ZNK2ns3Foo3bazEi")->pretty, "ns::Foo::baz(int) const");
	ck_assert_str_eq(syms__find(st, "_ZN2ns5twiceIiEET_S1_")->pretty,
			 "int ns::twice<int>(int)");
	ck_assert_str_eq(syms__find(st, "_ZN2ns4overEPKc")->pretty, "ns::over(char const*)");
	ck_assert_ptr_null(syms__find(st, "main")->pretty);

	assert_pretty(st, "ns::Foo::*",
		      "ns::Foo::bar(double) | ns::Foo::bar(int) | ns::Foo::baz(int) const");
	assert_pretty(st, "ns::Foo::bar", "ns::Foo::bar(double) | ns::Foo::bar(int)");
	assert_pretty(st, "ns::Foo::bar(int)", "ns::Foo::bar(int)");
	assert_pretty(st, "ns::Foo::baz", "ns::Foo::baz(int) const");
	assert_pretty(st, "_ZN2ns3Foo3barEi", "ns::Foo::bar(int)");
	assert_pretty(st, "_ZN2ns3Foo*", "ns::Foo::bar(double) | ns::Foo::bar(int)");
	assert_pretty(st, "ns::twice*", "int ns::twice<int>(int) | long ns::twice<long>(long)");
	assert_pretty(st, "ns::twice<long>", "long ns::twice<long>(long)");
	assert_pretty(st, "ns::over", "ns::over(char const*) | ns::over(long)");
	assert_pretty(st, "ns::over(long)", "ns::over(long)");
	assert_pretty(st, "ns::over(char const?)", "ns::over(char const*)");
	assert_pretty(st, "*::complain", "ns::complain(long)");
	assert_pretty(st, "ns::work", "ns::work(long)");
	assert_pretty(st, "ns::work*", "ns::work(long)");
	assert_pretty(st, "main", "main");
	assert_pretty(st, "scale",
		      _i ? "scale(long, long) [clone .constprop.0]" : "scale(long, long)");
	assert_selects_nothing(st, "ns::Foo");
	assert_selects_nothing(st, "ns::nosuch::*");
	assert_selects_nothing(st, "bar");

	/* std::vector's members the program instantiated (push_back at -O0;
	 * at -O2 what is left out of line, e.g. _M_realloc_insert). */
	ck_assert_int_eq(syms__select(st, &vec, 1, &idx, &n), 0);
	for (i = 0; i < n; i++)
		ck_assert_msg(st->syms[idx[i]].pretty &&
				      strstr(st->syms[idx[i]].pretty, "std::vector<int"),
			      "%s", st->syms[idx[i]].name);
	free(idx);

	ck_assert_int_eq(syms__select(st, &all, 1, &idx, &n), 0);
	assert_no_fragment(st, idx, n);
	free(idx);
	ck_assert_int_eq(syms__select(st, NULL, 0, &idx, &n), 0);
	assert_no_fragment(st, idx, n);
	free(idx);
	if (!_i) {
		ck_assert_int_eq(syms__why_unmatched(st, "ns::work.cold", why, sizeof(why)),
				 -ENOENT);
	} else {
		/* The fragment is there, named as c++filt names it, and never
		 * selected, by any of its names. */
		ck_assert_str_eq(syms__find(st, "_ZN2ns4workEl.cold")->pretty,
				 "ns::work(long) [clone .cold]");
		assert_selects_nothing(st, "_ZN2ns4workEl.cold");
		assert_selects_nothing(st, "ns::work.cold");
		assert_selects_nothing(st, "ns::work(long) ?clone .cold?");
		ck_assert_int_eq(syms__why_unmatched(st, "ns::work.cold", why, sizeof(why)), 0);
		ck_assert_msg(
			strstr(why, "ns::work(long) [clone .cold], a fragment of ns::work(long)"),
			"%s", why);
		ck_assert_int_eq(syms__why_unmatched(st, "_ZN2ns4workEl.cold", why, sizeof(why)),
				 0);
	}
	ck_assert_int_eq(syms__why_unmatched(st, "ns::Foo::*", why, sizeof(why)), -ENOENT);
	syms__free(st);
}
END_TEST

static Suite *syms_suite(void)
{
	Suite *s = suite_create("syms");
	TCase *tc;

	tc = tcase_create("load");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_default_selection, 0, NV);
	tcase_add_loop_test(tc, test_offsets_match_memory, 0, NV);
	tcase_add_loop_test(tc, test_addresses_match_nm, 0, NV);
	tcase_add_test(tc, test_fde_functions);
	tcase_add_test(tc, test_fde_skips_fragments);
	tcase_add_loop_test(tc, test_alias_collapse, 0, NV);
	tcase_add_loop_test(tc, test_zero_size, 0, NV);
	tcase_add_test(tc, test_glob_select);
	tcase_add_test(tc, test_fragments);
	tcase_add_test(tc, test_demangle);
	tcase_add_test(tc, test_fragments_and_clones);
	tcase_add_loop_test(tc, test_cxx_names, 0, 2);
	tcase_add_test(tc, test_load_errors);
	tcase_add_test(tc, test_symbol_versions);
	tcase_add_test(tc, test_system_libc);
	suite_add_tcase(s, tc);

	tc = tcase_create("resolve_exe");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_resolve_self);
	tcase_add_test(tc, test_resolve_gone);
	tcase_add_test(tc, test_resolve_deleted);
	tcase_add_test(tc, test_resolve_other_mntns);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	built = build_all();
	if (!built)
		fprintf(stderr, "test_syms: could not build the test programs\n");
	built_names = built && build_names();
	if (built && !built_names)
		fprintf(stderr, "test_syms: could not build the C++ and fragment programs\n");
	sr = srunner_create(syms_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (dir[0] && !getenv("TEST_SYMS_KEEP"))
		run("rm -rf %s", dir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
