// SPDX-License-Identifier: BSD-2-Clause
/*
 * recurse N — classic doubly recursive Fibonacci.
 *
 * main calls fib(N) exactly once and prints nothing; exit status 0.
 * fib(n) = n < 2 ? n : fib(n-1) + fib(n-2).
 *
 * Exact counts (F = Fibonacci numbers, F(0)=0, F(1)=1, F(2)=1, ...):
 *   main: 1
 *   fib:  calls(N) = 2*F(N+1) - 1
 *         (calls(0) = calls(1) = 1, calls(n) = 1 + calls(n-1) + calls(n-2))
 *         e.g. N=10: 177, N=20: 21891, N=25: 242785, N=30: 2692537
 * Exact edges (caller -> callee: count):
 *   main -> fib: 1
 *   fib  -> fib: calls(N) - 1
 * Every fib call returns normally (recursion depth is N, at most 64 pending
 * returns only when N > 63). Usage error: exit 2.
 *
 * The barriers after the recursive calls keep gcc -O2 from turning
 * fib(n-1) + fib(n-2) into a loop (tail recursion with accumulator), which
 * would make the count differ between -O0 and -O2.
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <stdio.h>
#include <stdlib.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

TRACED long fib(long n)
{
	long a, b;

	if (n < 2)
		return n;
	a = fib(n - 1);
	BARRIER();
	b = fib(n - 2);
	BARRIER();
	return a + b;
}

int main(int argc, char **argv)
{
	volatile long sink;
	char *end;
	long n;

	if (argc != 2) {
		fprintf(stderr, "usage: recurse N\n");
		return 2;
	}
	n = strtol(argv[1], &end, 10);
	if (*end || n < 0 || n > 60) {
		fprintf(stderr, "recurse: N must be 0..60\n");
		return 2;
	}
	sink = fib(n);
	(void)sink;
	return 0;
}
