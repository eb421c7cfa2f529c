// SPDX-License-Identifier: BSD-2-Clause
/*
 * exits N — the process ends with _exit(3) while traced frames are open.
 *
 * main calls unit() N times (N >= 0), then calls leave_outer(), which calls
 * leave_inner(), which calls _exit(3). Nothing is printed; exit status 3
 * (usage error: 2). Neither main, leave_outer nor leave_inner returns.
 *
 * Exact counts:
 *   main:        1 (never returns)
 *   unit:        N (each returns normally)
 *   leave_outer: 1 (never returns)
 *   leave_inner: 1 (never returns)
 * Exact edges (caller -> callee: count):
 *   main        -> unit:        N
 *   main        -> leave_outer: 1
 *   leave_outer -> leave_inner: 1
 * Open frames at exit, outermost first: main, leave_outer, leave_inner.
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

static volatile long sink;

TRACED void unit(long i)
{
	sink += i;
}

TRACED void leave_inner(void)
{
	_exit(3);
}

TRACED void leave_outer(void)
{
	leave_inner();
	BARRIER(); /* not reached: keeps the call a real call */
	sink++;
}

int main(int argc, char **argv)
{
	char *end;
	long n, i;

	if (argc != 2) {
		fprintf(stderr, "usage: exits N\n");
		return 2;
	}
	n = strtol(argv[1], &end, 10);
	if (*end || n < 0) {
		fprintf(stderr, "exits: N must be >= 0\n");
		return 2;
	}
	for (i = 0; i < n; i++) {
		unit(i);
		BARRIER();
	}
	leave_outer();
	BARRIER();
	return 0;
}
