// SPDX-License-Identifier: BSD-2-Clause
/*
 * durations — calls of known duration, for the latency analyzer
 * (tests/test_integration.c latency_known_durations).
 *
 * main calls nap(20) 5 times, then nap(100) twice: each sleeps that many
 * milliseconds (clock_nanosleep, relative: never shorter), then quick()
 * 1000 times (it returns at once). Nothing printed; exit status 0.
 *
 * Exact counts: main 1, nap 7, quick 1000. Exact edges: main -> nap 7,
 * main -> quick 1000. Durations: every nap at least 20 ms, two at least
 * 100 ms; each nap is mostly off-CPU.
 */
#include <time.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

static volatile long sink;

TRACED void nap(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts))
		;
}

TRACED void quick(long i)
{
	sink += i;
	BARRIER();
}

int main(void)
{
	long i;

	for (i = 0; i < 5; i++)
		nap(20);
	for (i = 0; i < 2; i++)
		nap(100);
	for (i = 0; i < 1000; i++)
		quick(i);
	return 0;
}
