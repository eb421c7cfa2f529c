// SPDX-License-Identifier: BSD-2-Clause
/*
 * Re-staging (user/trace/stage.c): what it says of the target's execve
 * calls. The per-CPU rings are drained one after another, so EXEC events
 * arrive out of time order; the last execve is the last by time (by the
 * thread's sequence without timestamps), and a thread killed by another's
 * execve is no execve. Pure logic: no privileges, no kernel.
 */
#include <check.h>
#include <stdlib.h>

#include "cabbpf_event.h"
#include "user/trace/stage.h"

static struct stage *stage_new(void)
{
	struct cab_pp_opts po = {.chunk_records = 64, .nchunks = 8, .max_chunks = 64};
	struct stage *s = NULL;

	ck_assert_int_eq(stage__new(2, &po, &s), 0);
	return s;
}

static void push_exec(struct stage *s, unsigned cpu, uint64_t ts, uint64_t seq, uint64_t ino,
		      uint32_t pad)
{
	struct cabbpf_event e = {.tid = 100,
				 .pid = 100,
				 .kind = CABBPF_EV_EXEC,
				 .fid = 7,
				 .seq = seq,
				 .ts = ts,
				 .sp = ino,
				 .pad = pad};

	ck_assert_int_eq(stage__push(s, cpu, &e), 0);
}

/* A launched target's first exec (its own file, ino 1) drained after its
 * exec of another program (ino 2) from the other CPU's ring: the last is
 * still the other program's, with timestamps (_i 0) and without (_i 1). */
START_TEST(last_exec_by_time_not_arrival)
{
	struct stage *s = stage_new();
	struct stage_exec ex = {0};
	uint64_t t = _i ? 0 : 1;

	push_exec(s, 1, 2000 * t, 9, 2, 0);
	push_exec(s, 0, 1000 * t, 0, 1, 0);
	ck_assert_uint_eq(stage__execs(s, &ex), 2);
	ck_assert_uint_eq(ex.ino, 2);
	ck_assert_uint_eq(ex.dev, 7);
	ck_assert_uint_eq(ex.thread, 0);
	stage__free(s);
}
END_TEST

/* A thread killed by another's execve is not an execve: not counted, and
 * not the last one even when it is the latest event. */
START_TEST(killed_thread_not_an_exec)
{
	struct stage *s = stage_new();
	struct stage_exec ex = {0};

	push_exec(s, 0, 1000, 0, 1, 0);
	push_exec(s, 1, 3000, 4, 5, CABBPF_EXEC_KILLED);
	ck_assert_uint_eq(stage__execs(s, &ex), 1);
	ck_assert_uint_eq(ex.ino, 1);
	stage__free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("stage");
	TCase *tc = tcase_create("stage");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, last_exec_by_time_not_arrival, 0, 2);
	tcase_add_test(tc, killed_thread_not_an_exec);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
