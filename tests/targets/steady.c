// SPDX-License-Identifier: BSD-2-Clause
/*
 * steady T N K [phased] — a steady CPU-bound program for the sampled
 * estimates (bench/sampling_coverage.sh, tests/test_sampling_integration.c): T threads, each calling mid()
 * N times; mid() calls leaf() twice; leaf() spins K iterations. With
 * "phased", each thread's first N/2 calls are of a() and the last N/2 of
 * b() (each also calling leaf() twice): a program whose behaviour changes
 * half way. Prints its own counts last: "calls: mid=... leaf=..." (or
 * a=, b=) on stdout; exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

static long n_calls, k_spin;
static int phased;
static volatile unsigned long sink;

TRACED void leaf(void)
{
	unsigned long s = 0;

	for (long i = 0; i < k_spin; i++)
		s += (unsigned long)i ^ (s >> 3);
	sink += s;
}

TRACED void mid(void)
{
	leaf();
	leaf();
	BARRIER();
}

TRACED void a(void)
{
	leaf();
	leaf();
	BARRIER();
}

TRACED void b(void)
{
	leaf();
	leaf();
	BARRIER();
}

static void *run(void *arg)
{
	(void)arg;
	for (long i = 0; i < n_calls; i++) {
		if (!phased)
			mid();
		else if (i < n_calls / 2)
			a();
		else
			b();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	long nt;

	if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "phased"))) {
		fprintf(stderr, "usage: steady T N K [phased]\n");
		return 2;
	}
	nt = atol(argv[1]);
	n_calls = atol(argv[2]);
	k_spin = atol(argv[3]);
	phased = argc == 5;
	if (nt < 1 || nt > 64 || n_calls < 1 || k_spin < 0)
		return 2;
	for (long i = 0; i < nt; i++)
		if (pthread_create(&t[i], NULL, run, NULL))
			return 1;
	for (long i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	if (phased)
		printf("calls: a=%ld b=%ld leaf=%ld\n", nt * (n_calls / 2),
		       nt * (n_calls - n_calls / 2), 2 * nt * n_calls);
	else
		printf("calls: mid=%ld leaf=%ld\n", nt * n_calls, 2 * nt * n_calls);
	return 0;
}
