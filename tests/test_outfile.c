// SPDX-License-Identifier: BSD-2-Clause
/*
 * Safe output files (common/outfile.c), the module alone: a file is
 * written to a temporary file beside its path and renamed over it; a
 * symlink planted at the path (to a victim, or dangling) is replaced, never
 * followed; and the path is checked again just before the rename, so what
 * replaced it while the file was being written (a FIFO, a directory,
 * another user's file) is refused and left untouched. The cabbpf-level
 * tests of every writer are in the integration suites
 * (h_assert_writes_safely). No privileges needed, except to give a file to
 * another user (that case says SKIP without root).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/outfile.h"

static char dir[64];

static void path_in(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", dir, name);
}

static void put(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
}

static char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* No temporary file (".cabbpf-out.*") left in the directory. */
static void assert_no_temp(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		ck_assert_msg(strncmp(de->d_name, ".cabbpf-out.", 12), "left behind: %s",
			      de->d_name);
	closedir(d);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/cabbpf-outfile.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Write text through outfile into path; returns outfile__commit's result. */
static int write_through(const char *path, const char *text)
{
	struct outfile of;

	ck_assert_int_eq(outfile__open(&of, path), 0);
	ck_assert_int_ge(fputs(text, of.f), 0);
	return outfile__commit(&of);
}

START_TEST(writes_new_and_replaces_own)
{
	char p[PATH_MAX];
	struct stat sb;

	path_in(p, "out");
	ck_assert_int_eq(write_through(p, "one\n"), 0);
	ck_assert_str_eq(slurp(p), "one\n");
	ck_assert_int_eq(stat(p, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 07777, 0644);
	ck_assert_int_eq(write_through(p, "two\n"), 0);
	ck_assert_str_eq(slurp(p), "two\n");
	assert_no_temp();
}
END_TEST

/* A symlink to a victim, and a dangling one: replaced by the file, the
 * victim keeps its bytes and mode, the dangling link's target is never
 * created. */
START_TEST(symlinks_replaced_not_followed)
{
	char victim[PATH_MAX], link[PATH_MAX], dangling[PATH_MAX], absent[PATH_MAX];
	struct stat sb;

	path_in(victim, "victim");
	path_in(link, "link");
	path_in(dangling, "dangling");
	path_in(absent, "absent");
	put(victim, "secret\n", 0600);
	ck_assert_int_eq(symlink(victim, link), 0);
	ck_assert_int_eq(symlink(absent, dangling), 0);
	ck_assert_int_eq(write_through(link, "report\n"), 0);
	ck_assert_int_eq(write_through(dangling, "report\n"), 0);
	ck_assert_str_eq(slurp(victim), "secret\n");
	ck_assert_int_eq(stat(victim, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 07777, 0600);
	ck_assert_int_eq(lstat(link, &sb), 0);
	ck_assert(S_ISREG(sb.st_mode));
	ck_assert_int_eq(lstat(dangling, &sb), 0);
	ck_assert(S_ISREG(sb.st_mode));
	ck_assert_int_eq(access(absent, F_OK), -1);
	assert_no_temp();
}
END_TEST

/* The path replaced while the file was open: by a FIFO, by a directory.
 * The commit refuses, leaves the new thing as it is and removes its
 * temporary file. */
START_TEST(commit_rechecks_the_path)
{
	char p[PATH_MAX], q[PATH_MAX];
	struct outfile of;
	struct stat sb;

	path_in(p, "out");
	put(p, "mine\n", 0644);
	ck_assert_int_eq(outfile__open(&of, p), 0);
	fputs("report\n", of.f);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	ck_assert_int_eq(outfile__commit(&of), -EEXIST);
	ck_assert_int_eq(lstat(p, &sb), 0);
	ck_assert(S_ISFIFO(sb.st_mode));
	assert_no_temp();

	path_in(q, "out2");
	ck_assert_int_eq(outfile__open(&of, q), 0);
	fputs("report\n", of.f);
	ck_assert_int_eq(mkdir(q, 0755), 0);
	ck_assert_int_eq(outfile__commit(&of), -EISDIR);
	ck_assert_int_eq(lstat(q, &sb), 0);
	ck_assert(S_ISDIR(sb.st_mode));
	assert_no_temp();
}
END_TEST

/* The path became another user's file while the file was open: refused,
 * their file keeps its bytes. Root only (chown). */
START_TEST(commit_rechecks_the_owner)
{
	char p[PATH_MAX];
	struct outfile of;

	if (geteuid() != 0) {
		printf("SKIP: commit_rechecks_the_owner needs root (to give a file to another "
		       "user)\n");
		return;
	}
	path_in(p, "theirs");
	ck_assert_int_eq(outfile__open(&of, p), 0);
	fputs("report\n", of.f);
	put(p, "not yours\n", 0644);
	ck_assert_int_eq(chown(p, 65534, 65534), 0);
	ck_assert_int_eq(outfile__commit(&of), -EPERM);
	ck_assert_str_eq(slurp(p), "not yours\n");
	assert_no_temp();
	/* and refused up front by the check */
	ck_assert_int_eq(outfile__check(p), -EPERM);
	ck_assert_int_eq(outfile__open(&of, p), -EPERM);
}
END_TEST

/* outfile__check: what it refuses, and its messages. */
START_TEST(check_refuses)
{
	char p[PATH_MAX], fifo[PATH_MAX];

	path_in(p, "no/such/dir/out");
	ck_assert_int_eq(outfile__check(p), -ENOENT);
	ck_assert_str_eq(outfile__strerror(-ENOENT), "its directory does not exist");
	ck_assert_int_eq(outfile__check(dir), -EISDIR);
	path_in(fifo, "fifo");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(outfile__check(fifo), -EEXIST);
	ck_assert_int_eq(outfile__check("-"), 0);
	ck_assert_int_eq(outfile__check(""), -ENOENT);
	path_in(p, "out/");
	ck_assert_int_eq(outfile__check(p), -EISDIR);
}
END_TEST

/* A link in the directory part of the path: followed when it is ours
 * (the file lands where it points), refused when another user owns it
 * (lchown: root only), whatever mode the directory it is in has. */
START_TEST(directory_links_by_owner)
{
	char sub[PATH_MAX], link[PATH_MAX], p[PATH_MAX], real[PATH_MAX];
	struct outfile of;

	path_in(sub, "sub");
	path_in(link, "link");
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	ck_assert_int_eq(symlink(sub, link), 0);
	path_in(p, "link/out");
	ck_assert_int_eq(write_through(p, "through ours\n"), 0);
	path_in(real, "sub/out");
	ck_assert_str_eq(slurp(real), "through ours\n");
	if (geteuid() != 0) {
		printf("SKIP: directory_links_by_owner (another user's link) needs root\n");
		return;
	}
	ck_assert_int_eq(lchown(link, 65534, 65534), 0);
	ck_assert_int_eq(outfile__check(p), -ELOOP);
	ck_assert_int_eq(outfile__open(&of, p), -ELOOP);
	ck_assert_str_eq(slurp(real), "through ours\n");
	ck_assert_ptr_nonnull(strstr(outfile__strerror(-ELOOP), "not followed"));
	assert_no_temp();
}
END_TEST

/* While the file is open it has no name in its directory (O_TMPFILE on
 * this file system): a writer killed before the commit leaves nothing;
 * an abort leaves nothing either. */
START_TEST(unnamed_until_committed)
{
	char p[PATH_MAX];
	struct outfile of;
	DIR *d;
	struct dirent *de;
	int n = 0;

	path_in(p, "out");
	ck_assert_int_eq(outfile__open(&of, p), 0);
	ck_assert_int_ge(fputs("report\n", of.f), 0);
	ck_assert_int_eq(fflush(of.f), 0);
	d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	ck_assert_int_eq(n, 0);
	assert_no_temp();
	outfile__abort(&of);
	ck_assert_int_eq(access(p, F_OK), -1);
	assert_no_temp();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("outfile");
	TCase *tc = tcase_create("outfile");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, writes_new_and_replaces_own);
	tcase_add_test(tc, symlinks_replaced_not_followed);
	tcase_add_test(tc, commit_rechecks_the_path);
	tcase_add_test(tc, commit_rechecks_the_owner);
	tcase_add_test(tc, check_refuses);
	tcase_add_test(tc, directory_links_by_owner);
	tcase_add_test(tc, unnamed_until_committed);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
