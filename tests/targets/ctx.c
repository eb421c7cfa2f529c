// SPDX-License-Identifier: BSD-2-Clause
/*
 * ctx N [SLEEP_MS] — one function reached through different callers, and a
 * traced function that sleeps: for calling-context trees and on-CPU time.
 *
 * main calls a() N times, then b() N times, then nap() once. a calls c()
 * once; b calls c() twice; c calls d() once. nap sleeps SLEEP_MS ms
 * (default 100) in two nanosleep(2) calls (9/10, then 1/10), off the CPU,
 * then returns. Prints nothing;
 * exit status 0; usage error 2.
 *
 * Exact counts: main 1; a N; b N; c 3N; d 3N; nap 1.
 * Exact calling-context tree (context: calls):
 *   main: 1
 *   main;a: N        main;a;c: N       main;a;c;d: N
 *   main;b: N        main;b;c: 2N      main;b;c;d: 2N
 *   main;nap: 1      (wall >= SLEEP_MS ms, on-CPU time near 0)
 * Exact edges: <root>->main 1, main->a N, main->b N, a->c N, b->c 2N,
 * c->d 3N, main->nap 1.
 *
 * The barrier after each call keeps gcc -O2 from making tail calls.
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <stdlib.h>
#include <time.h>
#include <stdio.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

static volatile long sink;

TRACED void d(void)
{
	sink++;
}

TRACED void c(void)
{
	d();
	BARRIER();
}

TRACED void a(void)
{
	c();
	BARRIER();
}

TRACED void b(void)
{
	c();
	BARRIER();
	c();
	BARRIER();
}

/* Two sleeps, 9/10 then 1/10 of ms: two switch-outs with no event of the
 * thread between them (a tracer that misses the switch-in between must
 * not lose the first sleep: test_cct_integration.c, unseen_switch_ins_closed).
 * Inlined: not a function of its own, at -O0 either. */
static inline __attribute__((always_inline)) void sleep_ns(long long ns)
{
	struct timespec ts = {ns / 1000000000, ns % 1000000000};

	while (nanosleep(&ts, &ts))
		;
}

TRACED void nap(long ms)
{
	long long ns = ms * 1000000LL;

	sleep_ns(ns - ns / 10);
	sleep_ns(ns / 10);
	BARRIER();
}

int main(int argc, char **argv)
{
	long n, ms = 100, i;
	char *end;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: ctx N [SLEEP_MS]\n");
		return 2;
	}
	n = strtol(argv[1], &end, 10);
	if (*end || n < 0 || n > 100000000) {
		fprintf(stderr, "ctx: N must be 0..100000000\n");
		return 2;
	}
	if (argc == 3) {
		ms = strtol(argv[2], &end, 10);
		if (*end || ms < 0 || ms > 100000) {
			fprintf(stderr, "ctx: SLEEP_MS must be 0..100000\n");
			return 2;
		}
	}
	for (i = 0; i < n; i++) {
		a();
		BARRIER();
	}
	for (i = 0; i < n; i++) {
		b();
		BARRIER();
	}
	nap(ms);
	BARRIER();
	return 0;
}
