// SPDX-License-Identifier: BSD-2-Clause
/*
 * fan D: ten functions f0..f9, each calling all ten again, D levels deep
 * below main: 10 + 100 + ... + 10^D distinct calling contexts, one call
 * each (D = 6: 1,111,110 contexts and calls). For the memory of a
 * calling-context tree with a million contexts (bench/cct.sh).
 */
#include <stdio.h>
#include <stdlib.h>

#define BARRIER() __asm__ volatile("" ::: "memory")
#define F(i)                                                                    \
	__attribute__((noinline, noipa)) void f##i(int d)                       \
	{                                                                       \
		if (d > 1)                                                      \
			fan(d - 1);                                             \
		BARRIER();                                                      \
	}

static void fan(int d);
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9)

static void (*const fs[10])(int) = {f0, f1, f2, f3, f4, f5, f6, f7, f8, f9};

__attribute__((noinline, noipa)) static void fan(int d)
{
	int i;

	for (i = 0; i < 10; i++) {
		fs[i](d);
		BARRIER();
	}
}

int main(int argc, char **argv)
{
	int d = argc > 1 ? atoi(argv[1]) : 6;

	if (d < 1 || d > 8) {
		fprintf(stderr, "usage: fan D (1..8)\n");
		return 2;
	}
	fan(d);
	return 0;
}
