// SPDX-License-Identifier: BSD-2-Clause
/*
 * spawner T K: prints "ready <pid>", waits for SIGUSR1, then starts T new
 * threads that each call work() exactly K times (each prints
 * "tid=<tid> calls=<K>" on stderr), joins them, prints "done" and waits for
 * SIGTERM (exit 0). For tracing with -p: the threads do not exist when the
 * tracer attaches, so their calls prove that threads created later are
 * followed.
 * Exact: work T*K; worker T (no traced caller: libc's start_thread).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define TRACED __attribute__((noinline, noipa))

static volatile unsigned long sink;
static long k_calls;

TRACED void work(long i)
{
	sink += (unsigned long)i;
	__asm__ volatile("" ::: "memory");
}

TRACED void *worker(void *arg)
{
	long i;

	(void)arg;
	for (i = 0; i < k_calls; i++) {
		work(i);
		__asm__ volatile("" ::: "memory");
	}
	fprintf(stderr, "tid=%d calls=%ld\n", (int)gettid(), k_calls);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	sigset_t set;
	int t, nt, sig;

	if (argc != 3 || (nt = atoi(argv[1])) < 1 || nt > 64 || (k_calls = atol(argv[2])) < 0) {
		fprintf(stderr, "usage: spawner THREADS(1-64) CALLS\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL); /* inherited: only main waits */
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	do
		sigwait(&set, &sig);
	while (sig != SIGUSR1 && sig != SIGTERM);
	if (sig == SIGTERM)
		return 0;
	for (t = 0; t < nt; t++)
		pthread_create(&th[t], NULL, worker, NULL);
	for (t = 0; t < nt; t++)
		pthread_join(th[t], NULL);
	printf("done\n");
	fflush(stdout);
	do
		sigwait(&set, &sig);
	while (sig != SIGTERM);
	return 0;
}
