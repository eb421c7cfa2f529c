// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit suite for --io's user-space tables (user/iomode/): the table of
 * entries keyed by their first bytes (ptab.c), and ended processes
 * (ended.c) fed with the kernel's ring records by hand: every call kept
 * exactly while the least busy are folded into their command's row past
 * --io-keep, a pid the kernel reused for another process kept apart, and
 * one exit's records read in two drains kept together. No root or BPF
 * needed: no kernel map is given (fds -1), and a collection then reads none.
 */
#include <check.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/iomode/iostat_int.h"
#include "user/report/io_report.h"

/* ---------------------------------------------------------------- ptab -- */

struct ent {
	unsigned key;
	int val;
};

static int freed;

static void count_free(void *e)
{
	(void)e;
	freed++;
}

static bool keep_even(void *ctx, const void *e)
{
	(void)ctx;
	return ((const struct ent *)e)->key % 2 == 0;
}

START_TEST(ptab_get_put_split)
{
	struct ptab t;
	struct ent *e, *f;
	void **gone = NULL;
	size_t ngone = 0, i;
	unsigned k;

	memset(&t, 0, sizeof(t));
	for (k = 0; k < 1000; k++) {
		e = ptab__get(&t, &k, sizeof(k), sizeof(*e), true);
		ck_assert_ptr_nonnull(e);
		ck_assert_int_eq(e->key, k);
		e->val = (int)k * 3;
	}
	ck_assert_uint_eq(t.n, 1000);
	k = 777;
	e = ptab__get(&t, &k, sizeof(k), sizeof(*e), false);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->val, 2331);
	k = 5000;
	ck_assert_ptr_null(ptab__get(&t, &k, sizeof(k), sizeof(*e), false));
	/* An entry made elsewhere joins the table. */
	f = calloc(1, sizeof(*f));
	f->key = 5000;
	ck_assert_int_eq(ptab__put(&t, f, sizeof(f->key)), 0);
	ck_assert_ptr_eq(ptab__get(&t, &k, sizeof(k), sizeof(*e), false), f);
	/* Split: the odd keys go, in order; the even ones are still found. */
	ck_assert_int_eq(ptab__split(&t, sizeof(unsigned), keep_even, NULL, &gone, &ngone), 0);
	ck_assert_uint_eq(ngone, 500);
	for (i = 0; i < ngone; i++) {
		ck_assert_int_eq(((struct ent *)gone[i])->key, 2 * i + 1);
		free(gone[i]);
	}
	free(gone);
	ck_assert_uint_eq(t.n, 501);
	for (k = 0; k < 1000; k++)
		ck_assert((ptab__get(&t, &k, sizeof(k), sizeof(*e), false) != NULL) ==
			  (k % 2 == 0));
	k = 5000;
	ck_assert_ptr_eq(ptab__get(&t, &k, sizeof(k), sizeof(*e), false), f);
	freed = 0;
	ptab__fini(&t, count_free);
	ck_assert_int_eq(freed, 501);
}
END_TEST

/* ------------------------------------------------------- ended.c -- */

static struct iostat *new_stat(unsigned keep)
{
	struct iostat_opts o;
	struct iostat *s = NULL;

	memset(&o, 0, sizeof(o));
	o.stats_fd = o.files_fd = o.cgnames_fd = o.done_fd = -1;
	o.ncpus = 1;
	o.keep = keep;
	ck_assert_int_eq(iostat__new(&o, &s), 0);
	return s;
}

/* One ring record: calls reads of 64 bytes on fd 3 (a file of inode ino),
 * by the process that started at start_ns (0: not said), flags
 * CABBPF_IODONE_*. */
static void record_of(struct iostat *s, uint32_t pid, const char *comm, uint32_t calls,
		      uint64_t ino, uint64_t start_ns, uint16_t flags)
{
	struct cabbpf_iodone d;

	memset(&d, 0, sizeof(d));
	d.pid = pid;
	d.start_ns = start_ns;
	d.flags = flags;
	d.fd = 3;
	d.sc = CABBPF_SC_READ;
	d.fdkind = CABBPF_FD_FILE;
	d.calls = calls;
	d.cgid = 1;
	d.ino = ino;
	d.bytes = 64ull * calls;
	d.req = 64ull * calls;
	d.hist_req[7] = d.hist_ret[7] = calls;
	snprintf(d.comm, sizeof(d.comm), "%s", comm);
	ck_assert_int_eq(ended__on_record(s, &d, sizeof(d)), 0);
}

static void record(struct iostat *s, uint32_t pid, const char *comm, uint32_t calls, uint64_t ino)
{
	record_of(s, pid, comm, calls, ino, 0, 0);
}

/* The JSON report of s, parsed (the caller puts it). */
static json_object *report(struct iostat *s)
{
	char path[] = "/tmp/cabbpf-iostat.XXXXXX";
	struct iostat_run r;
	json_object *j;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	memset(&r, 0, sizeof(r));
	r.stop_reason = "interrupted";
	r.startup_s = -1;
	ck_assert_int_eq(io_report__json(s, path, &r), 0);
	j = json_object_from_file(path);
	unlink(path);
	ck_assert_ptr_nonnull(j);
	return j;
}

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;

	ck_assert_msg(json_object_object_get_ex(o, k, &v), "no key %s", k);
	return v;
}

static int64_t num(json_object *o, const char *k)
{
	return json_object_get_int64(get(o, k));
}

/* The element of array arr whose key k is the string v, or NULL. */
static json_object *find(json_object *arr, const char *k, const char *v)
{
	size_t i;

	for (i = 0; i < json_object_array_length(arr); i++) {
		json_object *e = json_object_array_get_idx(arr, i);

		if (!strcmp(json_object_get_string(get(e, k)), v))
			return e;
	}
	return NULL;
}

/* 60 ended processes of two commands, past --io-keep 8: each call is
 * still counted, each process once, and the least busy are folded. */
START_TEST(fold_keeps_every_call)
{
	struct iostat *s = new_stat(8);
	json_object *j, *a, *b, *procs;
	int64_t rows_a = 0, calls_a = 0, busiest = 0;
	uint32_t pid;
	size_t i;

	for (pid = 1000; pid < 1060; pid++) {
		/* Two records per exit, read in one drain. */
		record(s, pid, pid % 2 ? "odd" : "even", pid - 999, pid);
		record(s, pid, pid % 2 ? "odd" : "even", 1, pid);
		ck_assert_int_eq(iostat__drain(s), 0);
		/* A read of the (absent) kernel maps now and then: only
		 * processes ended before one are folded. */
		if (pid % 10 == 9)
			ck_assert_int_eq(iostat__collect(s), 0);
	}
	ck_assert_int_eq(iostat__collect(s), 0);
	j = report(s);
	ck_assert_int_ge(num(j, "processes_folded"), 30);
	procs = get(j, "processes");
	ck_assert_int_eq(num(j, "processes_total"),
			 (int64_t)json_object_array_length(procs) + num(j, "processes_folded"));
	ck_assert_int_eq(num(j, "processes_total"), 60);
	/* Calls: odd pids 1001..1059 made pid - 999 + 1 each: 2+4+...+60 + 30. */
	a = find(get(j, "commands"), "command", "odd");
	b = find(get(j, "commands"), "command", "even");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(num(a, "processes"), 30);
	ck_assert_int_eq(num(b, "processes"), 30);
	ck_assert_int_eq(num(a, "in_calls"), 930 + 30);
	ck_assert_int_eq(num(b, "in_calls"), 900 + 30);
	ck_assert_int_eq(num(a, "in_bytes"), 64 * 960);
	ck_assert_int_eq(num(get(j, "total"), "in_calls"), 960 + 930);
	/* Kept one by one: the busiest; the least busy were folded first. */
	for (i = 0; i < json_object_array_length(procs); i++) {
		json_object *p = json_object_array_get_idx(procs, i);

		ck_assert_int_ge(num(p, "pid"), 1005);
		busiest += num(p, "pid") == 1059;
		if (!strcmp(json_object_get_string(get(p, "command")), "odd")) {
			rows_a++;
			calls_a += num(p, "in_calls");
		}
	}
	ck_assert_int_eq(busiest, 1);
	ck_assert_int_gt(rows_a, 0);
	ck_assert_int_lt(calls_a, 960);
	/* Files of folded processes leave the list, still counted. */
	ck_assert_int_eq(num(j, "files_total"), 60);
	ck_assert_int_eq((int64_t)json_object_array_length(get(j, "files")),
			 (int64_t)json_object_array_length(procs));
	json_object_put(j);
	iostat__free(s);
}
END_TEST

/* The kernel reuses pids: a process ended, and later another under its
 * pid ended too: two rows, each its own command's, and a file row each. One exit's records read
 * in two drains in a row stay one process. */
START_TEST(reused_pid_kept_apart)
{
	struct iostat *s = new_stat(0);
	json_object *j, *procs, *c, *files;
	int rows100 = 0, calls100 = 0;
	size_t i;

	record(s, 100, "first", 3, 7);
	ck_assert_int_eq(iostat__drain(s), 0);
	ck_assert_int_eq(iostat__drain(s), 0);
	ck_assert_int_eq(iostat__drain(s), 0);
	record(s, 100, "second", 5, 7);
	ck_assert_int_eq(iostat__drain(s), 0);
	/* One exit, its records split over two drains. */
	record(s, 200, "split", 1, 9);
	ck_assert_int_eq(iostat__drain(s), 0);
	record(s, 200, "split", 2, 9);
	ck_assert_int_eq(iostat__drain(s), 0);
	j = report(s);
	procs = get(j, "processes");
	ck_assert_int_eq(json_object_array_length(procs), 3);
	for (i = 0; i < json_object_array_length(procs); i++) {
		json_object *p = json_object_array_get_idx(procs, i);
		const char *cmd = json_object_get_string(get(p, "command"));

		if (num(p, "pid") != 100)
			continue;
		rows100++;
		ck_assert_int_eq(num(p, "in_calls"), !strcmp(cmd, "first") ? 3 : 5);
	}
	ck_assert_int_eq(rows100, 2);
	c = find(get(j, "commands"), "command", "second");
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(num(c, "processes"), 1);
	ck_assert_int_eq(num(c, "in_calls"), 5);
	c = find(get(j, "commands"), "command", "split");
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(num(c, "processes"), 1);
	ck_assert_int_eq(num(c, "in_calls"), 3);
	ck_assert_int_eq(num(j, "processes_total"), 3);
	/* Both processes under pid 100 read inode 7 on fd 3: a file row
	 * each, shown with their fd. */
	files = get(j, "files");
	ck_assert_int_eq(json_object_array_length(files), 3);
	for (i = 0; i < json_object_array_length(files); i++) {
		json_object *f = json_object_array_get_idx(files, i);

		ck_assert_int_eq(num(f, "fd"), 3);
		if (num(f, "pid") == 100)
			calls100 |= 1 << num(f, "in_calls");
		else
			ck_assert_int_eq(num(f, "in_calls"), 3);
	}
	ck_assert_int_eq(calls100, 1 << 3 | 1 << 5);
	json_object_put(j);
	iostat__free(s);
}
END_TEST

/* Records that say which process sent them (its start): one exit's
 * records stay one process however many drains fall between them (the
 * rounds alone would split it), a new start under the pid is another
 * process; a live process's slots (its map keys refused) join its figures
 * and end nothing. */
START_TEST(records_by_start)
{
	struct iostat *s = new_stat(0);
	json_object *j, *procs, *c;
	int i;

	record_of(s, 300, "slow", 2, 7, 5000000000ull, 0);
	for (i = 0; i < 6; i++)
		ck_assert_int_eq(iostat__drain(s), 0);
	record_of(s, 300, "slow", 3, 7, 5000000000ull, 0);
	ck_assert_int_eq(iostat__drain(s), 0);
	record_of(s, 300, "again", 4, 7, 6000000000ull, 0);
	ck_assert_int_eq(iostat__drain(s), 0);
	/* Live slots of pid 400, then its exit, then more rounds. */
	record_of(s, 400, "live", 10, 8, 7000000000ull, CABBPF_IODONE_LIVE);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(iostat__drain(s), 0);
	record_of(s, 400, "live", 1, 8, 7000000000ull, CABBPF_IODONE_LIVE);
	ck_assert_int_eq(iostat__drain(s), 0);
	record_of(s, 400, "live", 2, 8, 7000000000ull, 0);
	ck_assert_int_eq(iostat__drain(s), 0);
	j = report(s);
	procs = get(j, "processes");
	ck_assert_int_eq(json_object_array_length(procs), 3);
	c = find(get(j, "commands"), "command", "slow");
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(num(c, "processes"), 1);
	ck_assert_int_eq(num(c, "in_calls"), 5);
	c = find(get(j, "commands"), "command", "again");
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(num(c, "processes"), 1);
	ck_assert_int_eq(num(c, "in_calls"), 4);
	c = find(get(j, "commands"), "command", "live");
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(num(c, "processes"), 1);
	ck_assert_int_eq(num(c, "in_calls"), 13);
	ck_assert_int_eq(num(c, "in_bytes"), 64 * 13);
	ck_assert_int_eq(num(j, "processes_total"), 3);
	json_object_put(j);
	iostat__free(s);
}
END_TEST

/* The rest of an exit's records read rounds after the first ones, the
 * process folded in between (seen under emulation: 41 iotarget processes
 * for 40): the rest joins its command's row and the process counts once. */
START_TEST(late_record_of_folded)
{
	struct iostat *s = new_stat(4);
	json_object *j, *procs, *c;
	uint32_t pid;
	size_t i;

	record_of(s, 2000, "late", 1, 2000, 9000000000ull, 0);
	ck_assert_int_eq(iostat__drain(s), 0);
	ck_assert_int_eq(iostat__collect(s), 0);
	for (pid = 2001; pid < 2013; pid++) {
		record_of(s, pid, "late", 100, pid, 9000000000ull + pid, 0);
		ck_assert_int_eq(iostat__drain(s), 0);
		if (pid % 3 == 0)
			ck_assert_int_eq(iostat__collect(s), 0);
	}
	ck_assert_int_eq(iostat__collect(s), 0);
	ck_assert_int_eq(iostat__drain(s), 0);
	/* 2000, the least busy, is folded by now */
	j = report(s);
	procs = get(j, "processes");
	for (i = 0; i < json_object_array_length(procs); i++)
		ck_assert_int_ne(num(json_object_array_get_idx(procs, i), "pid"), 2000);
	ck_assert_int_ge(num(j, "processes_folded"), 1);
	json_object_put(j);
	/* the rest of its exit */
	record_of(s, 2000, "late", 2, 2000, 9000000000ull, 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(iostat__drain(s), 0);
	ck_assert_int_eq(iostat__collect(s), 0);
	ck_assert_int_eq(iostat__drain(s), 0);
	j = report(s);
	c = find(get(j, "commands"), "command", "late");
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(num(c, "processes"), 13);
	ck_assert_int_eq(num(c, "in_calls"), 1 + 2 + 12 * 100);
	ck_assert_int_eq(num(j, "processes_total"), 13);
	json_object_put(j);
	/* another process under the same pid later (another start): its own */
	record_of(s, 2000, "late", 5, 2000, 9900000000ull, 0);
	ck_assert_int_eq(iostat__drain(s), 0);
	j = report(s);
	c = find(get(j, "commands"), "command", "late");
	ck_assert_int_eq(num(c, "processes"), 14);
	ck_assert_int_eq(num(c, "in_calls"), 1 + 2 + 5 + 12 * 100);
	json_object_put(j);
	iostat__free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iostat");
	TCase *tc = tcase_create("iostat");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, ptab_get_put_split);
	tcase_add_test(tc, fold_keeps_every_call);
	tcase_add_test(tc, reused_pid_kept_apart);
	tcase_add_test(tc, records_by_start);
	tcase_add_test(tc, late_record_of_folded);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
