// SPDX-License-Identifier: BSD-2-Clause
/*
 * The record of probe sites (user/probe/sites.c) that the guard takes out
 * of a process the target forks: by file (device and inode, so two names
 * of one file are one file), each offset once however often it was
 * attached (--sample attaches every window), and a file that does not
 * exist refused. Pure logic on files of a scratch directory.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/probe/probe_sites.h"

static char dir[] = "/tmp/cabbpf-sites.XXXXXX";
static char a[256], b[256], a_link[256];

struct seen {
	size_t nfiles;
	uint64_t sum[2]; /* per file: sum of its offsets */
	size_t n[2];
	ino_t ino[2];
};

static void see(void *ctx, const char *path, dev_t dev, ino_t ino, const uint64_t *offs, size_t n)
{
	struct seen *s = ctx;
	struct stat sb;
	size_t i;

	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert(sb.st_dev == dev && sb.st_ino == ino);
	ck_assert_uint_lt(s->nfiles, 2);
	s->ino[s->nfiles] = ino;
	s->n[s->nfiles] = n;
	for (i = 0; i < n; i++)
		s->sum[s->nfiles] += offs[i];
	s->nfiles++;
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fclose(f);
}

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	snprintf(a_link, sizeof(a_link), "%s/a-link", dir);
	touch(a);
	touch(b);
	ck_assert_int_eq(symlink(a, a_link), 0);
}

static void teardown(void)
{
	probe_sites__reset();
	unlink(a_link);
	unlink(a);
	unlink(b);
	rmdir(dir);
	strcpy(dir, "/tmp/cabbpf-sites.XXXXXX");
}

/* Offsets by file, each once; a second name of a file adds to it. */
START_TEST(sites_by_file_each_once)
{
	const uint64_t o1[] = {0x1000, 0x1040, 0x1080}, o2[] = {0x1040, 0x2000}, o3[] = {0x10};
	struct stat sa, sb;
	struct seen s = {0};

	ck_assert_int_eq(probe_sites__add(a, o1, 3), 0);
	ck_assert_int_eq(probe_sites__add(a_link, o2, 2), 0); /* 0x1040 again */
	ck_assert_int_eq(probe_sites__add(b, o3, 1), 0);
	probe_sites__each(see, &s);
	ck_assert_uint_eq(s.nfiles, 2);
	ck_assert_int_eq(stat(a, &sa), 0);
	ck_assert_int_eq(stat(b, &sb), 0);
	ck_assert(s.ino[0] == sa.st_ino && s.ino[1] == sb.st_ino);
	ck_assert_uint_eq(s.n[0], 4);
	ck_assert_uint_eq(s.sum[0], 0x1000 + 0x1040 + 0x1080 + 0x2000);
	ck_assert_uint_eq(s.n[1], 1);
	ck_assert_uint_eq(s.sum[1], 0x10);
}
END_TEST

/* A path that names no file is refused with stat's error, and recorded
 * nothing; reset forgets every file. */
START_TEST(missing_file_refused_reset_forgets)
{
	const uint64_t o[] = {0x1000};
	char none[300];
	struct seen s = {0};

	snprintf(none, sizeof(none), "%s/none", dir);
	ck_assert_int_eq(probe_sites__add(none, o, 1), -ENOENT);
	probe_sites__each(see, &s);
	ck_assert_uint_eq(s.nfiles, 0);
	ck_assert_int_eq(probe_sites__add(a, o, 1), 0);
	probe_sites__reset();
	probe_sites__each(see, &s);
	ck_assert_uint_eq(s.nfiles, 0);
}
END_TEST

struct heard {
	int calls;
	char path[256];
	uint64_t sum;
	size_t n;
};

static void hear(void *ctx, const char *path, const uint64_t *offs, size_t n)
{
	struct heard *h = ctx;
	struct seen s = {0};
	size_t i;

	/* told after the record: the sites are there already */
	probe_sites__each(see, &s);
	ck_assert_uint_ge(s.nfiles, 1);
	h->calls++;
	snprintf(h->path, sizeof(h->path), "%s", path);
	h->n = n;
	for (i = 0; i < n; i++)
		h->sum += offs[i];
}

/* The listener (a guard's tracer process, user/trace/guardian.h) hears of
 * each add that recorded, with its path and offsets; not of a refused
 * one; nothing once removed. */
START_TEST(listener_hears_each_add)
{
	const uint64_t o[] = {0x1000, 0x2000, 0x30};
	struct heard h = {0};
	char none[300];

	snprintf(none, sizeof(none), "%s/none", dir);
	probe_sites__on_add(hear, &h);
	ck_assert_int_eq(probe_sites__add(a, o, 3), 0);
	ck_assert_int_eq(h.calls, 1);
	ck_assert_str_eq(h.path, a);
	ck_assert_uint_eq(h.n, 3);
	ck_assert_uint_eq(h.sum, 0x3030);
	ck_assert_int_eq(probe_sites__add(none, o, 1), -ENOENT);
	ck_assert_int_eq(h.calls, 1);
	probe_sites__on_add(NULL, NULL);
	ck_assert_int_eq(probe_sites__add(b, o, 1), 0);
	ck_assert_int_eq(h.calls, 1);
	probe_sites__reset();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sites");
	TCase *tc = tcase_create("sites");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sites_by_file_each_once);
	tcase_add_test(tc, missing_file_refused_reset_forgets);
	tcase_add_test(tc, listener_hears_each_add);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
