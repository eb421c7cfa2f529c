// SPDX-License-Identifier: BSD-2-Clause
/*
 * vals N [M] — functions whose arguments and return values are known, for
 * --args and --retval.
 *
 * main calls, in this order:
 *   add(i, 3 * i - 7) for i = 0..N-1, which returns 4 * i - 7
 *     (its arguments as signed ints: the first calls' second is negative);
 *   name_len(s) for s = "alpha", "", a 100-byte string of 'x' (longer than
 *     the 63 bytes read), "tab\there" (each in memory main wrote, so in
 *     pages present: a probe cannot read a page the program never
 *     touched), then a page mapped but never touched, then NULL (neither
 *     readable by a probe): returns strlen(s), 0 for NULL;
 *   greet(k) for k = 0, 1, 2: returns "zero", "one", "two";
 *   wide(a0..a5) once with 10, 20, 30, 40, 50, 60 (every argument
 *     register), which returns their sum 210;
 *   big(): returns 0x123456789a (hexadecimal in the text: from 2^32 up).
 * Prints "sum S" (the sum of every return value but greet's); exit
 * status 0; usage error 2.
 *
 * The name_len calls are made M times over (default 1: bench/vals_cost.sh
 * times string reads with many).
 * Exact counts: main 1, add N, name_len 6M, greet 3, wide 1, big 1.
 * The barrier after each call keeps gcc -O2 from making tail calls.
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

static volatile long sink;

TRACED int add(int a, int b)
{
	sink++;
	return a + b;
}

TRACED long name_len(const char *s)
{
	sink++;
	return s ? (long)strlen(s) : 0;
}

/* Every string the probes read: one page, which main writes whole before
 * any call, so that it is present (see name_len). */
static struct {
	char words[3][8];
	char strs[4][101];
} area __attribute__((aligned(4096)));
static char (*const words)[8] = area.words;

TRACED const char *greet(int k)
{
	sink++;
	return words[k % 3];
}

TRACED long wide(long a0, long a1, long a2, long a3, long a4, long a5)
{
	sink++;
	return a0 + a1 + a2 + a3 + a4 + a5;
}

TRACED long big(void)
{
	sink++;
	return 0x123456789aL;
}

int main(int argc, char **argv)
{
	char(*strs)[101] = area.strs;
	const char *names[] = {strs[0], strs[1], strs[2], strs[3], NULL, NULL};
	long n, m = 1, i, sum = 0;
	char *end;

	if (argc < 2 || argc > 3 || (n = strtol(argv[1], &end, 10)) < 0 || *end ||
	    (argc == 3 && ((m = strtol(argv[2], &end, 10)) < 0 || *end))) {
		fprintf(stderr, "usage: %s N [M]\n", argv[0]);
		return 2;
	}
	_Static_assert(sizeof(area) <= 4096, "one page");
	memset(&area, 0, sizeof(area));
	strcpy(words[0], "zero");
	strcpy(words[1], "one");
	strcpy(words[2], "two");
	strcpy(strs[0], "alpha");
	memset(strs[2], 'x', 100);
	strcpy(strs[3], "tab\there");
	/* never touched before name_len reads it: no page behind it yet */
	names[4] = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (names[4] == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (i = 0; i < n; i++) {
		sum += add((int)i, (int)(3 * i - 7));
		BARRIER();
	}
	for (i = 0; i < 6 * m; i++) {
		sum += name_len(names[i % 6]);
		BARRIER();
	}
	for (i = 0; i < 3; i++) {
		sink += (long)strlen(greet((int)i));
		BARRIER();
	}
	sum += wide(10, 20, 30, 40, 50, 60);
	BARRIER();
	sum += big();
	BARRIER();
	printf("sum %ld\n", sum);
	return 0;
}
