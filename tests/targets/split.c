// SPDX-License-Identifier: BSD-2-Clause
/*
 * split N — split stacks (gcc -fsplit-stack, build.sh): deep(N) recurses
 * N times with 4 KiB of locals a frame, so the stack grows past its first
 * segment many times, each time through libgcc's __morestack, which reads
 * its return address to call the rest of its caller on a new segment (a
 * return probe there killed this program: SIGSEGV). Prints the sum on
 * stdout; exit status 0; usage 2.
 *
 * Exact counts: main 1, deep N + 1; edges main -> deep 1, deep -> deep N.
 */
#include <stdio.h>
#include <stdlib.h>

#define TRACED __attribute__((noinline, noipa))

TRACED long deep(long n)
{
	char buf[4096];

	buf[n % sizeof(buf)] = (char)n;
	__asm__ volatile("" ::"r"(buf) : "memory");
	return n ? deep(n - 1) + buf[n % sizeof(buf)] : 0;
}

int main(int argc, char **argv)
{
	char *end;
	long n;

	if (argc != 2 || (n = strtol(argv[1], &end, 10)) < 0 || *end) {
		fprintf(stderr, "usage: split N\n");
		return 2;
	}
	printf("%ld\n", deep(n));
	return 0;
}
