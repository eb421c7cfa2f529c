// SPDX-License-Identifier: BSD-2-Clause
/*
 * classes FUNC N: call FUNC N times from one thread as fast as possible and
 * print the loop's time per call: "ns_per_call=<x> calls=<N>". The leaves
 * are written so that Debian's default gcc -O2 gives each a different entry
 * class for a uprobe (check with `cabbpf --plan -v -- classes`):
 *   leaf_push   push %rbx first (a callee-saved register in use): emulated
 *   leaf_branch test; je first: single-stepped at the entry, but the plan
 *               moves the probe to the je (emulated)
 *   leaf_mov    mov, add, mov, ret: single-stepped, nothing cheaper to move to
 *               (and its address is taken: it is called through a pointer)
 *   leaf_direct the same code, only ever called directly: with --entry-only
 *               the plan counts it at its call instruction (emulated)
 * Built with -pg -mfentry -mnop-mcount -fno-pie every leaf starts with a
 * 5-byte nop (the kernel's optimized path).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile long sink;

__attribute__((noinline)) void leaf_push(long i)
{
	/* A callee-saved register in use: the compiler saves it first. */
	__asm__ volatile("" ::: "rbx", "memory");
	sink += i;
}

__attribute__((noinline)) void leaf_branch(long i)
{
	if (i & 1)
		sink += i;
	else
		sink -= 3;
}

__attribute__((noinline)) void leaf_mov(long i)
{
	sink += i;
}

__attribute__((noinline, noipa)) void leaf_direct(long i)
{
	sink += i;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	void (*f)(long);
	long n, i;
	double t0;

	if (argc != 3 || (n = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: classes leaf_push|leaf_branch|leaf_mov|leaf_direct N\n");
		return 2;
	}
	if (!strcmp(argv[1], "leaf_push"))
		f = leaf_push;
	else if (!strcmp(argv[1], "leaf_branch"))
		f = leaf_branch;
	else if (!strcmp(argv[1], "leaf_mov"))
		f = leaf_mov;
	else if (!strcmp(argv[1], "leaf_direct"))
		f = NULL;
	else
		return 2;
	t0 = now();
	if (!f) { /* a direct call: leaf_direct's address never escapes */
		for (i = 0; i < n; i++) {
			leaf_direct(i);
			__asm__ volatile("" ::: "memory");
		}
		printf("ns_per_call=%.1f calls=%ld\n", (now() - t0) * 1e9 / n, n);
		return 0;
	}
	for (i = 0; i < n; i++) {
		f(i);
		__asm__ volatile("" ::: "memory");
	}
	printf("ns_per_call=%.1f calls=%ld\n", (now() - t0) * 1e9 / n, n);
	return 0;
}
