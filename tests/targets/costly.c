// SPDX-License-Identifier: BSD-2-Clause
/*
 * costly N K — a caller whose own time per call is known untraced: main
 * calls outer() N times; outer calls inner() K times; inner spins a fixed
 * loop (a few microseconds). main measures the loop itself and prints
 * "outer_ns=<wall ns per outer call> outer_cpu_ns=<CPU ns per call>" (CPU
 * time: what other work on the machine takes does not count) and the last line
 * "calls: outer=N inner=N*K". For compensated times: traced, outer's time
 * holds K inner calls' probes; compensated, it is close to outer_ns of an
 * untraced run. Exit 0; usage error 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static long k_inner;

__attribute__((noinline)) void inner(void)
{
	for (int i = 0; i < 4000; i++)
		sink += (unsigned long)i;
}

__attribute__((noinline)) void outer(void)
{
	for (long i = 0; i < k_inner; i++)
		inner();
}

int main(int argc, char **argv)
{
	struct timespec a, b, ca, cb;
	long n, i;

	if (argc != 3 || (n = atol(argv[1])) <= 0 || (k_inner = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: costly N K\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
	for (i = 0; i < n; i++)
		outer();
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("outer_ns=%.0f outer_cpu_ns=%.0f\n",
	       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n,
	       ((double)(cb.tv_sec - ca.tv_sec) * 1e9 + (double)(cb.tv_nsec - ca.tv_nsec)) /
		       (double)n);
	printf("calls: outer=%ld inner=%ld\n", n, n * k_inner);
	return 0;
}
