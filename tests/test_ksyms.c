// SPDX-License-Identifier: BSD-2-Clause
/*
 * A kernel symbol's extent from /proc/kallsyms (user/kernel/ksyms.c), the
 * module alone, on files of its own (CABBPF_TEST_KALLSYMS):
 *   - the symbol's address and the least address above it, in a file not
 *     sorted by address, with a module's symbol of the same name and a
 *     data symbol of the same name left aside;
 *   - a symbol the file does not list, and a file whose addresses are
 *     hidden (kptr_restrict: all 0): -ENOENT;
 *   - a file that cannot be read: -errno;
 *   - this machine's own /proc/kallsyms (the tests run as root, like
 *     cabbpf): asm_exc_page_fault found, with a span of a few bytes.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "user/kernel/ksyms.h"

static char path[64];

static void use_file(const char *text)
{
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/cabbpf-ksyms.XXXXXX");
	ck_assert_int_ge(mkstemp(path), 0);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	setenv("CABBPF_TEST_KALLSYMS", path, 1);
}

static void done_file(void)
{
	unlink(path);
	unsetenv("CABBPF_TEST_KALLSYMS");
}

START_TEST(range_of_a_symbol)
{
	uint64_t lo = 0, hi = 0;

	use_file("ffffffff81000c90 T asm_int80_emulation\n"
		 "ffffffffc0001000 t asm_exc_page_fault\t[some_module]\n"
		 "ffffffff82000000 d asm_exc_page_fault\n"
		 "ffffffff81000c60 T asm_exc_page_fault\n"
		 "ffffffff81000c20 T asm_exc_int3\n"
		 "ffffffff81000c80 t a_local_label\n"
		 "not a line\n");
	ck_assert_int_eq(ksyms__range("asm_exc_page_fault", &lo, &hi), 0);
	ck_assert_uint_eq(lo, 0xffffffff81000c60ull);
	ck_assert_uint_eq(hi, 0xffffffff81000c80ull);
	ck_assert_int_eq(ksyms__range("asm_exc_int3", &lo, &hi), 0);
	ck_assert_uint_eq(lo, 0xffffffff81000c20ull);
	ck_assert_uint_eq(hi, 0xffffffff81000c60ull);
	ck_assert_int_eq(ksyms__range("exc_page_fault", &lo, &hi), -ENOENT);
	done_file();
}
END_TEST

START_TEST(hidden_or_unreadable)
{
	uint64_t lo = 1, hi = 2;

	use_file("0000000000000000 T asm_exc_page_fault\n"
		 "0000000000000000 T asm_int80_emulation\n");
	ck_assert_int_eq(ksyms__range("asm_exc_page_fault", &lo, &hi), -ENOENT);
	ck_assert_uint_eq(lo, 1);
	ck_assert_uint_eq(hi, 2);
	done_file();
	setenv("CABBPF_TEST_KALLSYMS", "/nonexistent/kallsyms", 1);
	ck_assert_int_eq(ksyms__range("asm_exc_page_fault", &lo, &hi), -ENOENT);
	unsetenv("CABBPF_TEST_KALLSYMS");
	setenv("CABBPF_TEST_KALLSYMS", "/proc/self/mem", 1);
	ck_assert_int_lt(ksyms__range("asm_exc_page_fault", &lo, &hi), 0);
	unsetenv("CABBPF_TEST_KALLSYMS");
}
END_TEST

START_TEST(this_kernel)
{
	uint64_t lo = 0, hi = 0;

	ck_assert_int_eq(ksyms__range("asm_exc_page_fault", &lo, &hi), 0);
	ck_assert(lo > 0 && hi > lo && hi - lo < 4096);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ksyms");
	TCase *tc = tcase_create("ksyms");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, range_of_a_symbol);
	tcase_add_test(tc, hidden_or_unreadable);
	tcase_add_test(tc, this_kernel);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
