// SPDX-License-Identifier: BSD-2-Clause
/*
 * hop N — one thread that migrates between two CPUs between its calls.
 *
 * The main thread calls hop_step() exactly N times. Before call i
 * (i = 0..N-1) it pins itself with sched_setaffinity to CPU A when i is
 * even and to CPU B when i is odd, where A and B are the first two CPUs of
 * its initial affinity mask (CPUs 0 and 1 on an unrestricted 2-core
 * machine). sched_setaffinity returns only once the thread runs on an
 * allowed CPU, so each hop_step runs entirely on its pinned CPU.
 * hop_step() returns sched_getcpu(); main counts a migration whenever a
 * call ran on another CPU than the call before it, and at the end prints
 * on stderr exactly one line
 *     migrations=<m>
 * With two usable CPUs m = N-1 (for N >= 1); with one CPU it is 0 (and the
 * line "hop: only one CPU" is printed first). Exit status 0; usage error 2.
 *
 * Exact counts:
 *   main:     1
 *   hop_step: N
 * Exact edges (caller -> callee: count):
 *   main -> hop_step: N
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

TRACED int hop_step(void)
{
	int cpu = sched_getcpu();

	BARRIER();
	return cpu;
}

int main(int argc, char **argv)
{
	cpu_set_t initial, one;
	int cpus[2] = {-1, -1}, ncpus = 0, c, cpu, prev = -1;
	long n, i, migrations = 0;
	char *end;

	if (argc != 2) {
		fprintf(stderr, "usage: hop N\n");
		return 2;
	}
	n = strtol(argv[1], &end, 10);
	if (*end || n < 0) {
		fprintf(stderr, "hop: N must be >= 0\n");
		return 2;
	}
	if (sched_getaffinity(0, sizeof(initial), &initial)) {
		perror("sched_getaffinity");
		return 1;
	}
	for (c = 0; c < CPU_SETSIZE && ncpus < 2; c++)
		if (CPU_ISSET(c, &initial))
			cpus[ncpus++] = c;
	if (ncpus < 2)
		fprintf(stderr, "hop: only one CPU\n");

	for (i = 0; i < n; i++) {
		if (ncpus == 2) {
			CPU_ZERO(&one);
			CPU_SET(cpus[i & 1], &one);
			if (sched_setaffinity(0, sizeof(one), &one)) {
				perror("sched_setaffinity");
				return 1;
			}
		}
		cpu = hop_step();
		BARRIER();
		if (prev >= 0 && cpu != prev)
			migrations++;
		prev = cpu;
	}
	fprintf(stderr, "migrations=%ld\n", migrations);
	return 0;
}
