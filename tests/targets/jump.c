// SPDX-License-Identifier: BSD-2-Clause
/*
 * jump N — frames abandoned by longjmp, then an ordinary call.
 *
 * N times (N >= 0), main calls outer(). outer() does setjmp and calls
 * middle(); middle() calls inner(); inner() longjmps back to outer's setjmp,
 * so middle and inner never return; outer then returns normally. After the
 * loop main calls normal() once. Prints nothing; exit status 0; usage 2.
 *
 * Exact counts:
 *   main:   1
 *   outer:  N (each returns normally)
 *   middle: N (none returns)
 *   inner:  N (none returns)
 *   normal: 1 (returns normally)
 * Exact edges (caller -> callee: count):
 *   main   -> outer:  N
 *   outer  -> middle: N
 *   middle -> inner:  N
 *   main   -> normal: 1
 * A correct call tree therefore has main with two children, outer (N) and
 * normal (1); normal must NOT appear below outer, middle or inner.
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

static jmp_buf *landing;
static volatile long sink;

TRACED void inner(void)
{
	sink++;
	longjmp(*landing, 1);
}

TRACED void middle(void)
{
	inner();
	BARRIER(); /* not reached: keeps the call a real call */
	sink++;
}

TRACED int outer(void)
{
	jmp_buf env;

	landing = &env;
	if (setjmp(env) == 0) {
		middle();
		BARRIER();
		return 0; /* not reached */
	}
	landing = NULL;
	return 1;
}

TRACED void normal(void)
{
	sink++;
}

int main(int argc, char **argv)
{
	char *end;
	long n, i, jumped = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: jump N\n");
		return 2;
	}
	n = strtol(argv[1], &end, 10);
	if (*end || n < 0) {
		fprintf(stderr, "jump: N must be >= 0\n");
		return 2;
	}
	for (i = 0; i < n; i++) {
		jumped += outer();
		BARRIER();
	}
	normal();
	BARRIER();
	return jumped == n ? 0 : 1;
}
