// SPDX-License-Identifier: BSD-2-Clause
/*
 * budget N [PHASE2] — a steady program with known counts for --budget
 * (issue 13 item 5): functions that are cheap to trace because they are
 * rare, and one that is costly because it is hot.
 *
 * main runs N rounds. In round i:
 *   hot(i)     every round: spins ~7 us (a loop timed at start), and every 300th
 *              call (i % 300 == 0) calls child(i);
 *   rare(i)    when i % 3000 == 0, called by main.
 * (child's probes cost 1/300 of hot's: under 2% of the target's time even
 * where a single-stepped probe costs 5x the round's work, so a 10% budget
 * keeps it exact; every 100th call was 5% on such a host.)
 * With PHASE2 = M (> 0), main then runs M more rounds in which only
 * calm(j) is called (every round: a second phase whose hot function is
 * another one).
 * child and rare are leaves. The program prints, on its last stdout line,
 * "calls: main=1 hot=N child=C rare=R calm=M" (C = ceil(N/300),
 * R = ceil(N/3000)) and exits 0; usage errors exit 2. With BUDGET_CPU set
 * in its environment it then prints its own CPU time on stderr,
 * "cpu_ns=<ns>" (bench/budget.sh: the slowdown a budget keeps).
 *
 * Exact edges: <root>->main 1, main->hot N, hot->child C, main->rare R,
 * main->calm M. child is never called by main or rare: an edge main->child
 * in a report is false (its real caller, hot, was not traced then).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TRACED __attribute__((noinline, noipa))
/* hot's and calm's work: ~7 us a call whatever the machine and the -O
 * level: the loop's length is measured at start (spin_for). A fixed
 * count made it 2.8 us on a faster CPU whose probes cost 5x more, and
 * child, meant to cost well under a 10% budget, cost half of it. */
#define WORK_NS 7000
#define BARRIER() __asm__ volatile("" ::: "memory")

static volatile unsigned long sink;
static unsigned long n_child, n_rare;
static int spin = 1000;

static inline __attribute__((always_inline)) void work(int n)
{
	for (int k = 0; k < n; k++)
		sink += (unsigned long)k;
}

static inline __attribute__((always_inline)) long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The loop count that takes WORK_NS: the fastest of 20 timings of 100,000
 * turns (a timing the machine interrupted is slower, never faster). */
static inline __attribute__((always_inline)) int spin_for(void)
{
	long long best = 0;

	for (int r = 0; r < 20; r++) {
		long long t = mono_ns();

		work(100000);
		t = mono_ns() - t;
		if (t > 0 && (!best || t < best))
			best = t;
	}
	return best > 0 ? (int)(100000LL * WORK_NS / best) + 1 : 1000;
}

TRACED void child(long i)
{
	n_child++;
	sink += (unsigned long)i;
}

TRACED void rare(long i)
{
	n_rare++;
	sink ^= (unsigned long)i;
}

TRACED void hot(long i)
{
	work(spin);
	if (i % 300 == 0)
		child(i);
	BARRIER();
}

TRACED void calm(long j)
{
	work(spin);
	sink += (unsigned long)j;
	BARRIER();
}

int main(int argc, char **argv)
{
	long n, m = 0, i;

	if (argc < 2 || argc > 3 || (n = atol(argv[1])) <= 0 ||
	    (argc == 3 && (m = atol(argv[2])) <= 0)) {
		fprintf(stderr, "usage: budget N [PHASE2]\n");
		return 2;
	}
	spin = spin_for();
	for (i = 0; i < n; i++) {
		hot(i);
		BARRIER();
		if (i % 3000 == 0)
			rare(i);
		BARRIER();
	}
	for (i = 0; i < m; i++) {
		calm(i);
		BARRIER();
	}
	printf("calls: main=1 hot=%ld child=%lu rare=%lu calm=%ld\n", n, n_child, n_rare, m);
	if (getenv("BUDGET_CPU")) {
		struct timespec ts;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		fprintf(stderr, "cpu_ns=%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	}
	return 0;
}
