// SPDX-License-Identifier: BSD-2-Clause
/*
 * reexec N [again|other] — execve while traced frames are open.
 *
 * First image: main calls work() N times, then calls hop(), which
 * execve's this same program with "again" (or, with "other" as argv[2],
 * /bin/true). Second image ("again"): main calls work() N times and
 * returns 0. Prints nothing; exit status 0.
 *
 * Exact counts, traced from the start with the same program re-exec'd:
 *   main: 2 (one per image; the first never returns), work: 2N, hop: 1
 * Exact edges: <root> -> main: 2, main -> work: 2N, main -> hop: 1 (and
 * never main -> main: the first image's frames end at the exec).
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noipa)) long work(long i)
{
	sink += i;
	return sink;
}

__attribute__((noipa)) void hop(char *self, const char *how)
{
	char *again[] = {self, "0", "again", NULL};
	char *other[] = {"/bin/true", NULL};

	if (how && !strcmp(how, "other"))
		execv(other[0], other);
	else
		execv("/proc/self/exe", again);
	_exit(127);
}

int main(int argc, char **argv)
{
	long n, i;

	if (argc < 2)
		return 2;
	n = atol(argv[1]);
	if (argc > 2 && !strcmp(argv[2], "again"))
		n = atol(getenv("REEXEC_N") ? getenv("REEXEC_N") : "0");
	for (i = 0; i < n; i++)
		work(i);
	if (argc > 2 && !strcmp(argv[2], "again"))
		return 0;
	setenv("REEXEC_N", argv[1], 1);
	hop(argv[0], argc > 2 ? argv[2] : NULL);
	return 1;
}
