// SPDX-License-Identifier: BSD-2-Clause
/*
 * paced — calls paced by the program's own CPU time, for sampling
 * estimates that no load can bias (tests/test_sampling_integration.c).
 *
 * Until SIGTERM, main calls tick() each time its thread has used 2 ms more
 * of CPU time (CLOCK_THREAD_CPUTIME_ID, read between fixed loops of
 * user-mode arithmetic, ~20 us each). On SIGTERM (its handler only sets a
 * flag) it prints "ticks=<t>" on stderr, t the calls of tick() made, and
 * exits 0. The calls of tick() in any stretch of its run are thus its CPU
 * time there divided by 2 ms, whatever else the machine runs: time spent
 * waiting for a CPU counts for nothing, unlike in a program paced by a
 * clock (longrun), whose pace the machine's load sets.
 *
 * Functions: main, tick, on_term (the handler). Exact counts: main 1,
 * tick t, on_term 1 (one SIGTERM). Exact edges: main -> tick t.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

#define PACE_NS 2000000ULL

static volatile sig_atomic_t want_exit;
static volatile unsigned long sink;

static void on_term(int sig)
{
	(void)sig;
	want_exit = 1;
}

TRACED void tick(unsigned long n)
{
	sink += n;
}

/* Inlined at both levels: not a function of the binary. */
static inline __attribute__((always_inline)) unsigned long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

int main(void)
{
	struct sigaction sa;
	unsigned long long next;
	unsigned long ticks = 0;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	next = cpu_ns() + PACE_NS;
	while (!want_exit) {
		for (i = 0; i < 10000; i++)
			sink += (unsigned long)i;
		if (cpu_ns() < next)
			continue;
		next += PACE_NS;
		tick(ticks++);
		BARRIER();
	}
	fprintf(stderr, "ticks=%lu\n", ticks);
	return 0;
}
