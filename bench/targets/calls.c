// SPDX-License-Identifier: BSD-2-Clause
/*
 * calls T N: T threads each call leaf() N times from loop_body() as fast as
 * they can, then print the loop's own time per call (so start-up and attach
 * time are not counted): "ns_per_call=<x> calls=<T*N>".
 * Built with -DENTRY_PUSH -fno-omit-frame-pointer, leaf() starts with
 * `push %rbp`, which the kernel emulates (the cheap path); without, it starts
 * with a mov, which the kernel single-steps (DESIGN.md: ~20x dearer).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static long n_calls;

#ifdef ENTRY_PUSH
__attribute__((noinline)) static void helper(unsigned long i)
{
	sink += i;
	__asm__ volatile("" ::: "memory");
}

/* Not a leaf: with -fno-omit-frame-pointer it starts with push %rbp. */
__attribute__((noinline)) void leaf(unsigned long i)
{
	helper(i);
	__asm__ volatile("" ::: "memory");
}
#else
/* A leaf: at -O2 it starts with a mov, single-stepped by the kernel. */
__attribute__((noinline)) void leaf(unsigned long i)
{
	sink += i;
	__asm__ volatile("" ::: "memory");
}
#endif

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	double *dt = arg, t0 = now();
	long i;

	for (i = 0; i < n_calls; i++)
		leaf((unsigned long)i);
	*dt = now() - t0;
	return NULL;
}

int main(int argc, char **argv)
{
	int t, nt = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t th[64];
	double dt[64], sum = 0;

	n_calls = argc > 2 ? atol(argv[2]) : 1000000;
	if (nt < 1 || nt > 64 || n_calls < 1)
		return 2;
	for (t = 0; t < nt; t++)
		pthread_create(&th[t], NULL, worker, &dt[t]);
	for (t = 0; t < nt; t++) {
		pthread_join(th[t], NULL);
		sum += dt[t];
	}
	printf("ns_per_call=%.1f calls=%ld\n", sum / nt / n_calls * 1e9, nt * n_calls);
	return 0;
}
