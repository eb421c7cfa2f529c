// SPDX-License-Identifier: BSD-2-Clause
/*
 * carry [N] - a caller of dense tiny calls, then of one heavy call, for
 * the sampled times' totals (issue 65, item 5): main calls gen(), which
 * calls next() and pick() N times each (default 30,000: a few ns of work
 * a call, so the probes' measured aftermath of their returns, taken out
 * of gen's own time, is larger than the samples gen has), then heavy(),
 * which spins 200,000,000 iterations of its own (tens of ms) and calls
 * nothing. No total may be below its parts: main's covers gen's and
 * heavy's. Prints "sum=S" (of pick's values, so the calls are not
 * optimised away), then "calls: main=1 gen=1 next=N pick=N heavy=1".
 * Exit 0; usage error 2.
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;
static unsigned long state = 1;

__attribute__((noinline)) unsigned long next(void)
{
	state = state * 6364136223846793005UL + 1442695040888963407UL;
	return state >> 33;
}

__attribute__((noinline)) unsigned long pick(unsigned long r)
{
	return r % 7;
}

__attribute__((noinline)) unsigned long gen(long n)
{
	unsigned long sum = 0;

	for (long i = 0; i < n; i++)
		sum += pick(next());
	return sum;
}

__attribute__((noinline)) void heavy(void)
{
	for (long i = 0; i < 200000000; i++)
		sink += (unsigned long)i;
}

int main(int argc, char **argv)
{
	long n = 30000;

	if (argc > 2 || (argc == 2 && (n = atol(argv[1])) <= 0)) {
		fprintf(stderr, "usage: carry [N]\n");
		return 2;
	}
	printf("sum=%lu\n", gen(n));
	heavy();
	printf("calls: main=1 gen=1 next=%ld pick=%ld heavy=1\n", n, n);
	return 0;
}
