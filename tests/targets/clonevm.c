// SPDX-License-Identifier: BSD-2-Clause
/*
 * clonevm N — a child made with clone(CLONE_VM) and SIGCHLD as its exit
 * signal: ptrace reports it as a fork (PTRACE_EVENT_FORK), but it shares
 * the parent's memory, its breakpoints included. A tracer that cleans a
 * forked child's breakpoints out of its memory takes the parent's out.
 *
 * main calls work(i) N times, starts the child (on a stack of its own),
 * which calls work(i) N times, waits for it, then calls work(i) N times
 * again. Output (stdout): "sum=S" (S: the parent's sum), then as the LAST
 * line "calls: work=2N" (the parent's own calls: the traced process's,
 * not the child's). Exit status 0; usage errors 2, clone failure 1.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRACED __attribute__((noinline, noipa))
#define STACK (256 * 1024)

static long n;

TRACED long work(long i)
{
	__asm__ volatile("" ::: "memory");
	return i * 3 + 1;
}

TRACED int child(void *arg)
{
	long s = 0;

	(void)arg;
	for (long i = 0; i < n; i++)
		s += work(i);
	return (int)(s & 1);
}

int main(int argc, char **argv)
{
	long s = 0, own = 0;
	char *stack, *end;
	pid_t c;
	int st;

	if (argc != 2 || (n = strtol(argv[1], &end, 10)) < 0 || *end) {
		fprintf(stderr, "usage: clonevm N\n");
		return 2;
	}
	for (long i = 0; i < n; i++, own++)
		s += work(i);
	stack = malloc(STACK);
	if (!stack)
		return 1;
	c = clone(child, stack + STACK, CLONE_VM | SIGCHLD, NULL);
	if (c < 0 || waitpid(c, &st, 0) != c)
		return 1;
	for (long i = 0; i < n; i++, own++)
		s += work(i);
	free(stack);
	printf("sum=%ld\n", s);
	printf("calls: work=%ld\n", own);
	return 0;
}
