// SPDX-License-Identifier: BSD-2-Clause
/*
 * deep D — a recursion D frames deep, deeper than the kernel keeps
 * uretprobes for (64 pending return probes per task), then one more call
 * after it has fully unwound.
 *
 * main calls down(D) once (D >= 1). down(d) calls down(d-1) when d > 1,
 * and leaf() when d == 1. After down(D) has returned, main calls after()
 * once. Prints nothing; exit status 0; usage error 2.
 *
 * Exact counts:
 *   main:  1
 *   down:  D (arguments D, D-1, ..., 1; maximum nesting D)
 *   leaf:  1 (at nesting depth D+1 below main)
 *   after: 1
 * Exact edges (caller -> callee: count):
 *   main -> down:  1
 *   down -> down:  D-1
 *   down -> leaf:  1
 *   main -> after: 1
 * Every call returns normally. The kernel keeps at most 64 pending
 * uretprobes per task, so a tracer with uretprobes on main and down sees
 * (measured with bpftrace on 6.18, D = 200) 200 down entries but only 63
 * down returns (main holds the first slot), and no leaf return; after()
 * returns are seen again. A profiler must rebuild the lost returns.
 *
 * The barrier after each call keeps gcc -O2 from making down() a loop.
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <stdio.h>
#include <stdlib.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

static volatile long sink;

TRACED void leaf(void)
{
	sink++;
}

TRACED void down(long d)
{
	if (d > 1)
		down(d - 1);
	else
		leaf();
	BARRIER();
}

TRACED void after(void)
{
	sink++;
}

int main(int argc, char **argv)
{
	char *end;
	long d;

	if (argc != 2) {
		fprintf(stderr, "usage: deep D\n");
		return 2;
	}
	d = strtol(argv[1], &end, 10);
	if (*end || d < 1 || d > 100000) {
		fprintf(stderr, "deep: D must be 1..100000\n");
		return 2;
	}
	down(d);
	BARRIER();
	after();
	BARRIER();
	return 0;
}
