// SPDX-License-Identifier: BSD-2-Clause
/*
 * threads T K [GO] — T threads calling work() concurrently.
 *
 * main starts T pthreads (T >= 1) and joins them. Thread i (i = 0..T-1) runs
 * worker(), which calls work() exactly K*(i+1) times and then prints, on
 * stderr, one line "tid=<tid> calls=<K*(i+1)>" (tid = gettid(), the kernel
 * thread id the tracer sees). All threads wait at a barrier before their
 * loops, so the loops overlap in time. Exit status 0; usage error 2.
 *
 * With GO (a path): once every thread runs (each has entered worker()),
 * main prints "threads: waiting for GO" on stderr and waits, polling
 * without a traced call, until the file GO exists; only then are the
 * threads let into their loops. A test can so put the tracer in the state
 * it wants (starved, stopped) before any work() call, with the threads
 * already created (their creation is behind them, ptrace stops included).
 *
 * Exact counts:
 *   main:   1
 *   worker: T (one per thread; its caller is libc's start_thread, untraced)
 *   work:   K*T*(T+1)/2 in total; K*(i+1) on thread i, matched by tid via
 *           the stderr lines
 * Exact edges (caller -> callee: count):
 *   worker -> work: K*T*(T+1)/2 (K*(i+1) on thread i)
 *   main calls no traced function (pthread_create/join are libc).
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

struct job {
	pthread_t thread;
	long calls;
};

static pthread_barrier_t start_line;
static long per_thread_k;
static int running; /* threads that entered worker() (GO) */

TRACED unsigned long work(unsigned long x)
{
	/* A little real work, so a call is not only probe overhead. */
	return x * 2654435761UL + (x >> 7);
}

TRACED void *worker(void *arg)
{
	struct job *job = arg;
	unsigned long acc = 1;
	long i;

	__atomic_add_fetch(&running, 1, __ATOMIC_RELEASE);
	pthread_barrier_wait(&start_line);
	for (i = 0; i < job->calls; i++) {
		acc = work(acc);
		BARRIER();
	}
	fprintf(stderr, "tid=%d calls=%ld\n", (int)gettid(), job->calls);
	return (void *)(acc & 1);
}

int main(int argc, char **argv)
{
	struct timespec ms = {0, 1000000};
	const char *go = argc == 4 ? argv[3] : NULL;
	struct job *jobs;
	char *end1, *end2;
	long t, i;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: threads T K [GO]\n");
		return 2;
	}
	t = strtol(argv[1], &end1, 10);
	per_thread_k = strtol(argv[2], &end2, 10);
	if (*end1 || *end2 || t < 1 || t > 1024 || per_thread_k < 0) {
		fprintf(stderr, "threads: need 1 <= T <= 1024 and K >= 0\n");
		return 2;
	}
	jobs = calloc((size_t)t, sizeof(*jobs));
	/* With GO, main is at the start line too: it lets the threads go. */
	if (!jobs || pthread_barrier_init(&start_line, NULL, (unsigned)(t + (go != NULL)))) {
		perror("threads");
		return 1;
	}
	for (i = 0; i < t; i++) {
		jobs[i].calls = per_thread_k * (i + 1);
		if (pthread_create(&jobs[i].thread, NULL, worker, &jobs[i])) {
			perror("pthread_create");
			return 1;
		}
	}
	if (go) {
		while (__atomic_load_n(&running, __ATOMIC_ACQUIRE) < t)
			nanosleep(&ms, NULL);
		fprintf(stderr, "threads: waiting for GO\n");
		while (access(go, F_OK))
			nanosleep(&ms, NULL);
		pthread_barrier_wait(&start_line);
	}
	for (i = 0; i < t; i++)
		pthread_join(jobs[i].thread, NULL);
	pthread_barrier_destroy(&start_line);
	free(jobs);
	return 0;
}
