// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit suite for common/callvals.c (--args, --retval: rules, the pieces
 * the probes send, text and JSON) and for the shadow stack's keeping of
 * them (pipeline/shadow.c: a call's values on its frame until it closes).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/callvals.h"
#include "common/json.h"
#include "pipeline/shadow.h"

/* The pieces of string s (its NUL in the count, at most 64 bytes read)
 * as the probe sends them for item i, register reg, into cv. */
static void put_str(struct callvals *cv, unsigned i, unsigned reg, const char *s)
{
	char buf[CABBPF_VAL_STR_MAX] = {0};
	size_t n = strlen(s) + 1, part;
	uint32_t meta = CABBPF_VAL_META(i, CABBPF_VT_STR, reg, 0);

	if (n >= CABBPF_VAL_STR_MAX) {
		n = CABBPF_VAL_STR_MAX;
		meta |= CABBPF_VAL_TRUNC;
	}
	memcpy(buf, s, n - 1);
	for (part = 0; part < CABBPF_VAL_PARTS; part++) {
		long len = (long)n - 1 - (long)part * 16;
		uint64_t w1, w2;
		uint32_t m = meta | (uint32_t)part << 8;

		if (len < 0)
			len = 0;
		if (len > 16)
			len = 16;
		m |= (uint32_t)len << CABBPF_VAL_LEN_SHIFT;
		if ((long)n - 1 - (long)part * 16 <= 16)
			m |= CABBPF_VAL_LAST;
		memcpy(&w1, buf + part * 16, 8);
		memcpy(&w2, buf + part * 16 + 8, 8);
		callvals__put(cv, m, w1, w2);
		if (m & CABBPF_VAL_LAST)
			return;
	}
}

static void put_int(struct callvals *cv, unsigned i, unsigned type, unsigned reg, uint64_t v)
{
	uint32_t m = CABBPF_VAL_META(i, type == CABBPF_VT_INT32 ? CABBPF_VT_INT : type, reg, 0) |
		     CABBPF_VAL_LAST;

	callvals__put(cv, type == CABBPF_VT_INT32 ? m | CABBPF_VAL_I32 : m, 0, v);
}

static const char *fmt(const struct callvals *cv, unsigned i)
{
	static char b[300];

	return callvals__format(cv, i, b, sizeof(b));
}

START_TEST(parses_rules)
{
	struct cabbpf_fnspec sp;
	char glob[64];
	uint8_t t;

	memset(&sp, 0, sizeof(sp));
	ck_assert_int_eq(callvals__parse_args("open*:str(arg0),arg1,int(arg2),strlen(arg5)", glob,
					      sizeof(glob), &sp),
			 0);
	ck_assert_str_eq(glob, "open*");
	ck_assert_uint_eq(sp.nvals, 4);
	ck_assert_uint_eq(sp.type[0], CABBPF_VT_STR);
	ck_assert_uint_eq(sp.reg[0], 0);
	ck_assert_uint_eq(sp.type[1], CABBPF_VT_INT);
	ck_assert_uint_eq(sp.reg[1], 1);
	ck_assert_uint_eq(sp.type[2], CABBPF_VT_INT32);
	ck_assert_uint_eq(sp.reg[2], 2);
	ck_assert_uint_eq(sp.type[3], CABBPF_VT_STRLEN);
	ck_assert_uint_eq(sp.reg[3], 5);
	/* a C++ name's colons belong to the glob */
	ck_assert_int_eq(callvals__parse_args("ns::f:arg0", glob, sizeof(glob), &sp), 0);
	ck_assert_str_eq(glob, "ns::f");
	ck_assert_uint_eq(sp.nvals, 1);
	/* six items at most, registers 0-5, well formed */
	ck_assert_int_eq(
		callvals__parse_args("f:arg0,arg1,arg2,arg3,arg4,arg5", glob, sizeof(glob), &sp),
		0);
	ck_assert_int_eq(callvals__parse_args("f:arg0,arg1,arg2,arg3,arg4,arg5,arg0", glob,
					      sizeof(glob), &sp),
			 -EINVAL);
	ck_assert_int_eq(callvals__parse_args("f:arg6", glob, sizeof(glob), &sp), -EINVAL);
	ck_assert_int_eq(callvals__parse_args("f:str(arg0", glob, sizeof(glob), &sp), -EINVAL);
	ck_assert_int_eq(callvals__parse_args("f:arg0,", glob, sizeof(glob), &sp), -EINVAL);
	ck_assert_int_eq(callvals__parse_args("f:", glob, sizeof(glob), &sp), -EINVAL);
	ck_assert_int_eq(callvals__parse_args("f", glob, sizeof(glob), &sp), -EINVAL);
	ck_assert_int_eq(callvals__parse_args(":arg0", glob, sizeof(glob), &sp), -EINVAL);
	ck_assert_int_eq(callvals__parse_args("f:argx", glob, sizeof(glob), &sp), -EINVAL);
	ck_assert_int_eq(callvals__parse_args("f:str(arg10)", glob, sizeof(glob), &sp), -EINVAL);
	ck_assert_int_eq(
		callvals__parse_args("a_very_long_glob_that_does_not_fit:arg0", glob, 8, &sp),
		-ENAMETOOLONG);

	ck_assert_int_eq(callvals__parse_retval("get*", glob, sizeof(glob), &t), 0);
	ck_assert_str_eq(glob, "get*");
	ck_assert_uint_eq(t, CABBPF_VT_INT);
	ck_assert_int_eq(callvals__parse_retval("name:str", glob, sizeof(glob), &t), 0);
	ck_assert_str_eq(glob, "name");
	ck_assert_uint_eq(t, CABBPF_VT_STR);
	ck_assert_int_eq(callvals__parse_retval("ns::f:int", glob, sizeof(glob), &t), 0);
	ck_assert_str_eq(glob, "ns::f");
	ck_assert_uint_eq(t, CABBPF_VT_INT32);
	ck_assert_int_eq(callvals__parse_retval("ns::f", glob, sizeof(glob), &t), 0);
	ck_assert_str_eq(glob, "ns::f");
	ck_assert_int_eq(callvals__parse_retval(":str", glob, sizeof(glob), &t), -EINVAL);
}
END_TEST

START_TEST(pieces_become_values)
{
	struct callvals cv;
	char lb[24], text[400], s63[64], s70[71];

	callvals__clear(&cv);
	ck_assert(!callvals__has_args(&cv));
	ck_assert(!callvals__has_ret(&cv));
	put_int(&cv, 0, CABBPF_VT_INT, 0, 42);
	put_int(&cv, 1, CABBPF_VT_INT, 1, (uint64_t)-5);
	put_int(&cv, 2, CABBPF_VT_INT32, 2, 0xfffffff9u); /* an int -7 in a register */
	put_int(&cv, 3, CABBPF_VT_INT, 3, 0x123456789aULL);
	put_str(&cv, 4, 4, "tab\there \"q\"");
	put_int(&cv, 5, CABBPF_VT_STRLEN, 5, 12);
	put_str(&cv, CABBPF_VAL_RET, 0, "zero");
	ck_assert(callvals__has_args(&cv));
	ck_assert(callvals__has_ret(&cv));
	ck_assert_str_eq(fmt(&cv, 0), "42");
	ck_assert_str_eq(fmt(&cv, 1), "-5");
	ck_assert_str_eq(fmt(&cv, 2), "-7");
	ck_assert_str_eq(fmt(&cv, 3), "0x123456789a");
	ck_assert_str_eq(fmt(&cv, 4), "\"tab\\there \\\"q\\\"\"");
	ck_assert_str_eq(fmt(&cv, 5), "12");
	ck_assert_str_eq(fmt(&cv, CABBPF_VAL_RET), "\"zero\"");
	ck_assert_str_eq(callvals__label(&cv, 0, lb), "arg0");
	ck_assert_str_eq(callvals__label(&cv, 2, lb), "int(arg2)");
	ck_assert_str_eq(callvals__label(&cv, 4, lb), "str(arg4)");
	ck_assert_str_eq(callvals__label(&cv, 5, lb), "strlen(arg5)");
	ck_assert_str_eq(callvals__label(&cv, CABBPF_VAL_RET, lb), "retval");
	ck_assert_str_eq(callvals__args_text(&cv, false, text, sizeof(text)),
			 "42, -5, -7, 0x123456789a, \"tab\\there \\\"q\\\"\", 12");
	ck_assert_str_eq(callvals__args_text(&cv, true, text, 24), "arg0=42, arg1=-5, int(a");

	/* 63 bytes fit whole, but fill the buffer: maybe cut; longer: cut */
	callvals__clear(&cv);
	memset(s63, 'a', 63);
	s63[63] = 0;
	memset(s70, 'b', 70);
	s70[70] = 0;
	put_str(&cv, 0, 0, s63);
	put_str(&cv, 1, 1, s70);
	put_str(&cv, 2, 2, "");
	ck_assert_uint_eq(strlen(fmt(&cv, 0)), 63 + 2 + 3);
	ck_assert(!strcmp(fmt(&cv, 0) + 64, "\"..."));
	ck_assert(!strncmp(fmt(&cv, 1), "\"bbbbbbbbbbbbbbbb", 17));
	ck_assert(!strcmp(fmt(&cv, 1) + 64, "\"..."));
	ck_assert_str_eq(fmt(&cv, 2), "\"\"");

	/* a string not read: the pointer; a piece lost: not shown */
	callvals__clear(&cv);
	callvals__put(&cv,
		      CABBPF_VAL_META(0, CABBPF_VT_STR, 0, 0) | CABBPF_VAL_LAST |
			      CABBPF_VAL_UNREADABLE,
		      0, 0x7f0000001000ULL);
	ck_assert_str_eq(fmt(&cv, 0), "(unread 0x7f0000001000)");
	callvals__put(&cv,
		      CABBPF_VAL_META(1, CABBPF_VT_STR, 1, 1) | CABBPF_VAL_LAST |
			      16u << CABBPF_VAL_LEN_SHIFT,
		      0, 0); /* part 1 without part 0 */
	ck_assert_str_eq(fmt(&cv, 1), "?");
	ck_assert_str_eq(fmt(&cv, 3), "?"); /* never came */
	/* a new call's first piece starts the value over */
	put_str(&cv, 1, 1, "ok");
	ck_assert_str_eq(fmt(&cv, 1), "\"ok\"");
}
END_TEST

START_TEST(json_and_pairs)
{
	struct callvals cv;
	struct json *w;
	char *buf = NULL, *pairs;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	callvals__clear(&cv);
	put_int(&cv, 0, CABBPF_VT_INT32, 0, 0xfffffff9u);
	put_str(&cv, 1, 1, "a\"b");
	callvals__put(&cv,
		      CABBPF_VAL_META(2, CABBPF_VT_STR, 2, 0) | CABBPF_VAL_LAST |
			      CABBPF_VAL_UNREADABLE,
		      0, 0);
	put_int(&cv, CABBPF_VAL_RET, CABBPF_VT_INT, 0, (uint64_t)-1);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(json__new(f, false, &w), 0);
	ck_assert_int_eq(callvals__json(&cv, w), 0);
	ck_assert_int_eq(json__finish(w), 0);
	json__free(w);
	fclose(f);
	ck_assert_str_eq(buf, "{\"int(arg0)\":-7,\"str(arg1)\":\"a\\\"b\",\"str(arg2)\":null,"
			      "\"retval\":-1}\n");
	free(buf);

	pairs = callvals__pairs(&cv);
	ck_assert_ptr_nonnull(pairs);
	ck_assert_uint_eq(callvals__pairs_size(pairs),
			  sizeof("int(arg0)\0-7\0str(arg1)\0\"a\\\"b\"\0str(arg2)\0(unread 0)\0"
				 "retval\0-1\0"));
	ck_assert_str_eq(pairs, "int(arg0)");
	ck_assert_str_eq(pairs + 10, "-7");
	free(pairs);
	callvals__clear(&cv);
	ck_assert_ptr_null(callvals__pairs(&cv));
}
END_TEST

/* ------------------------------------------------ the shadow's frames -- */

static char last_ret[64];
static unsigned nreturns;

static void on_call(void *ctx, const struct an_call *c)
{
	(void)ctx;
	(void)c;
}

static void on_return(void *ctx, const struct an_return *r)
{
	const struct callvals *v = r->frames[r->depth].vals;
	char b[64];

	(void)ctx;
	nreturns++;
	snprintf(last_ret, sizeof(last_ret), "%u:%s%s%s", r->fid, v ? fmt(v, 0) : "-",
		 callvals__has_ret(v) ? "=" : "",
		 callvals__has_ret(v) ? callvals__format(v, CABBPF_VAL_RET, b, sizeof(b)) : "");
}

static const struct shadow_sink sink = {on_call, on_return, NULL};

START_TEST(frames_keep_their_values)
{
	struct shadow s;
	uint64_t sp = 0x7ffff000;
	uint32_t arg = CABBPF_VAL_META(0, CABBPF_VT_INT, 0, 0) | CABBPF_VAL_LAST;
	uint32_t ret = CABBPF_VAL_META(CABBPF_VAL_RET, CABBPF_VT_INT, 0, 0) | CABBPF_VAL_LAST;
	int i;

	shadow__init(&s, 1);
	/* f(1) calls g(2), which returns 20; f returns 10 */
	ck_assert_int_eq(shadow__entry(&s, 1, sp, 100, &sink), 0);
	ck_assert(shadow__value(&s, 1, arg, 0, 1));
	ck_assert_int_eq(shadow__entry(&s, 2, sp - 64, 110, &sink), 0);
	ck_assert(!shadow__value(&s, 1, arg, 0, 9)); /* not the top frame's */
	ck_assert(shadow__value(&s, 2, arg, 0, 2));
	ck_assert(shadow__value(&s, 2, ret, 0, 20));
	shadow__return(&s, 2, sp - 64 + 8, 120, &sink);
	ck_assert_str_eq(last_ret, "2:2=20");
	ck_assert(shadow__value(&s, 1, ret, 0, 10));
	shadow__return(&s, 1, sp + 8, 130, &sink);
	ck_assert_str_eq(last_ret, "1:1=10");
	/* a frame without values has none, though spares are kept */
	ck_assert_int_eq(shadow__entry(&s, 3, sp, 140, &sink), 0);
	shadow__return(&s, 3, sp + 8, 150, &sink);
	ck_assert_str_eq(last_ret, "3:-");
	/* a spare taken again starts empty */
	ck_assert_int_eq(shadow__entry(&s, 4, sp, 160, &sink), 0);
	ck_assert(shadow__value(&s, 4, ret, 0, 7));
	shadow__return(&s, 4, sp + 8, 170, &sink);
	ck_assert_str_eq(last_ret, "4:?=7");
	/* no stack: nobody takes it */
	ck_assert(!shadow__value(&s, 4, arg, 0, 1));
	/* frames with values left open at the end are freed (ASan) */
	for (i = 0; i < 100; i++) {
		ck_assert_int_eq(shadow__entry(&s, 5, sp - 64 * (uint64_t)i, 200, &sink), 0);
		ck_assert(shadow__value(&s, 5, arg, 0, (uint64_t)i));
	}
	shadow__fini(&s);
	ck_assert_uint_eq(nreturns, 4);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("callvals");
	TCase *tc = tcase_create("callvals");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, parses_rules);
	tcase_add_test(tc, pieces_become_values);
	tcase_add_test(tc, json_and_pairs);
	tcase_add_test(tc, frames_keep_their_values);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
