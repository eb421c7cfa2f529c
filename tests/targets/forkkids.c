// SPDX-License-Identifier: BSD-2-Clause
/*
 * forkkids N K: forked children that start inside their parent's calls
 * (issue 65 item 1). main calls spawn(i) N times; each spawn forks, and
 * the child calls leaf() K times from inside spawn, then child i even
 * returns through spawn and main (main returns 3: a normal exit, stdio's
 * and atexit's work done in the child), child i odd calls _exit(4) inside
 * spawn. The parent calls leaf() once in each spawn after its fork and
 * waits for the child. Then main calls vspawn(), whose vforked child calls
 * leaf() K times and _exit(5)s, and starts one thread whose start routine
 * runner() calls leaf() K times: a new thread starts with no caller.
 * Prints "children=N vfork=1 thread=1 ok" when every child ended as told
 * (exit 0), else what went wrong (exit 1). Nothing is printed before a
 * fork (a child must not flush a copy of the parent's buffer).
 * Exact (traced with -f main -f spawn -f vspawn -f leaf -f runner):
 * calls leaf N*K + N + 2K, spawn N, vspawn 1, runner 1, main 1;
 * edges spawn->leaf N*K + N, vspawn->leaf K, runner->leaf K,
 * <root>->runner 1, <root>->leaf 0; the children's inherited frames: 2
 * (main, spawn) in each fork and vfork child, the ceil(N/2) children
 * that return close theirs with their own returns (2 each).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRACED __attribute__((noinline, noipa))

static volatile unsigned long sink;
static long k_calls;

TRACED void leaf(long i)
{
	sink += (unsigned long)i;
	__asm__ volatile("" ::: "memory");
}

/* Returns 1 in a child that returns to main, 0 in the parent, -1 when
 * the fork failed. */
TRACED int spawn(int i)
{
	pid_t pid = fork();
	long k;
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		for (k = 0; k < k_calls; k++)
			leaf(k);
		if (i % 2)
			_exit(4);
		return 1;
	}
	leaf(i);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != (i % 2 ? 4 : 3))
		return -1;
	return 0;
}

/* The vforked child shares the parent's memory and runs on its stack
 * until it exits: it calls leaf() from this frame and never returns. */
TRACED int vspawn(void)
{
	pid_t pid = vfork();
	long k;
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		for (k = 0; k < k_calls; k++)
			leaf(k);
		_exit(5);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 5)
		return -1;
	return 0;
}

TRACED void *runner(void *arg)
{
	long k;

	(void)arg;
	for (k = 0; k < k_calls; k++)
		leaf(k);
	return NULL;
}

int main(int argc, char **argv)
{
	int n, i, r;
	pthread_t th;

	if (argc != 3) {
		fprintf(stderr, "usage: forkkids N K\n");
		return 2;
	}
	n = atoi(argv[1]);
	k_calls = atol(argv[2]);
	for (i = 0; i < n; i++) {
		r = spawn(i);
		if (r == 1)
			return 3; /* a child, back in main: a normal exit */
		if (r < 0) {
			fprintf(stderr, "child %d did not end as told\n", i);
			return 1;
		}
	}
	if (vspawn()) {
		fprintf(stderr, "the vforked child did not end as told\n");
		return 1;
	}
	if (pthread_create(&th, NULL, runner, NULL) || pthread_join(th, NULL)) {
		fprintf(stderr, "no thread\n");
		return 1;
	}
	printf("children=%d vfork=1 thread=1 ok\n", n);
	return 0;
}
