// SPDX-License-Identifier: BSD-2-Clause
/*
 * classes [-r REPS] — routines of known growth by wall time, for the
 * input-sensitive fits (tests/test_isp_integration.c, bench/isp_classes.sh).
 * Writes nothing and exits 0.
 *
 * Each routine does its work in its own body (no traced callee):
 *   lin_chunk(fd, n)    reads n bytes of /dev/zero (2 to 128 KiB), then
 *                       n steps of ~10 ns over its first 4 KiB:   O(n)
 *   nlogn_chunk(fd, n)  reads n bytes (1 to 64 KiB), then a merge
 *                       sort of n/4 32-bit keys, ~20 ns a
 *                       comparison:                               O(n log n)
 *   quad_chunk(fd, n)   reads n bytes (64 B to 4 KiB), then every
 *                       pair of them:                             O(n^2)
 *   sq_arg(n)           n^2 steps, n = 64 to 4096 (--size sq_arg:arg0):
 *                                                                 O(n^2)
 *   log_arg(n)          2000 binary searches over n sorted keys
 *                       (computed, not stored), n = 2^8 to 2^26
 *                       (--size log_arg:arg0):                    O(log n)
 *   exp_arg(n)          every subset of n items, n = 10 to 16
 *                       (--size exp_arg:arg0):                    O(2^n)
 * 7 sizes each, REPS rounds (default 3), each round's sizes in an order
 * of its own (a fixed shuffle).
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read_full.h"

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")
#define NSIZES 7
#define MAXB (128 * 1024)

static volatile uint64_t sink;
static unsigned char buf[MAXB];
static uint32_t keys[MAXB / 4], tmp[MAXB / 4];

static void load(int fd, size_t n)
{
	read_full(fd, buf, n);
}

/* Work by arithmetic, ~10 ns a byte, on bytes that stay in the first-level
 * cache: a pass that streams all n bytes costs more per byte at each
 * cache level it leaves (a plain sum over 32 KiB took 2.7 times one over
 * 16 KiB here; with this work at -O0 the cost per byte still rose by up
 * to 15% from 8 to 128 KiB in some runs), and is not one class over
 * these sizes. */
static inline uint64_t mix(uint64_t x)
{
	for (int k = 0; k < 8; k++)
		x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull;
	return x;
}

TRACED void lin_chunk(int fd, size_t n)
{
	uint64_t s = 0;

	load(fd, n);
	for (size_t i = 0; i < n; i++)
		s = mix(s + buf[i & 4095] + i);
	sink += s;
}

static void msort(uint32_t *a, size_t n)
{
	size_t h = n / 2, i = 0, j = h, k = 0;

	if (n < 2)
		return;
	msort(a, h);
	msort(a + h, n - h);
	while (i < h && j < n)
		tmp[k++] = mix(a[i]) <= mix(a[j]) ? a[i++] : a[j++];
	while (i < h)
		tmp[k++] = a[i++];
	while (j < n)
		tmp[k++] = a[j++];
	memcpy(a, tmp, n * sizeof(*a));
}

TRACED void nlogn_chunk(int fd, size_t n)
{
	size_t m = n / 4;

	load(fd, n);
	/* keys from the bytes read (all zero) and a scramble: a real sort */
	for (size_t i = 0; i < m; i++)
		keys[i] = (uint32_t)(buf[i] + i * 2654435761u);
	msort(keys, m);
	sink += keys[m / 2];
}

TRACED void quad_chunk(int fd, size_t n)
{
	uint64_t s = 0;

	load(fd, n);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			s += buf[i] ^ buf[j] ^ j;
	sink += s;
}

TRACED void sq_arg(long n)
{
	uint64_t s = 0;

	for (long i = 0; i < n; i++)
		for (long j = 0; j < n; j++)
			s += (uint64_t)(i ^ j);
	sink += s;
}

TRACED void log_arg(long n)
{
	uint64_t s = 0;

	for (long k = 0; k < 2000; k++) {
		/* the key 2 * want + 1 among keys[i] = 2 i: lo ends at want */
		long want = (k * 7919) % n, lo = 0, hi = n;

		while (hi - lo > 1) {
			long mid = lo + (hi - lo) / 2;

			if (2 * mid <= 2 * want + 1)
				lo = mid;
			else
				hi = mid;
		}
		s += (uint64_t)lo;
	}
	sink += s;
}

TRACED void exp_arg(long n)
{
	uint64_t s = 0;

	for (uint64_t m = 0; m < (1ull << n); m++)
		s += (uint64_t)__builtin_popcountll(m) ^ m;
	sink += s;
}

int main(int argc, char **argv)
{
	int reps = 3, fd, r, i;
	uint64_t seed = 42;

	if (argc == 3 && !strcmp(argv[1], "-r"))
		reps = atoi(argv[2]);
	else if (argc != 1) {
		fprintf(stderr, "usage: classes [-r REPS]\n");
		return 2;
	}
	fd = open("/dev/zero", O_RDONLY);
	if (fd < 0 || reps < 1)
		return 1;
	/* Each round takes the sizes in another order (a fixed shuffle): the
	 * first call after other work finds cold caches (~1 us more at
	 * 2 KiB, untraced, and more traced), and the minimum of the rounds
	 * leaves that out only if no size is always first. */
	for (r = 0; r < reps; r++) {
		int order[NSIZES];

		for (i = 0; i < NSIZES; i++)
			order[i] = i;
		for (i = NSIZES - 1; i > 0; i--) {
			int j, t;

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			j = (int)((seed >> 33) % (uint64_t)(i + 1));
			t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (int k = 0; k < NSIZES; k++) {
			i = order[k];
			lin_chunk(fd, (size_t)2048 << i);
			nlogn_chunk(fd, (size_t)1024 << i);
			quad_chunk(fd, (size_t)64 << i);
			sq_arg(64L << i);
			log_arg(256L << (3 * i));
			exp_arg(10 + i);
		}
	}
	close(fd);
	BARRIER();
	return 0;
}
