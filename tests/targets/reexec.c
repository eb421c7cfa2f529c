// SPDX-License-Identifier: BSD-2-Clause
/*
 * reexec N [again|other [PROGRAM]|threads|thread-exec] — execve while
 * traced frames are open.
 *
 * First image: main calls work() N times, sched_yield() once, then calls
 * hop(), which execve's this same program with "again" (or, with "other"
 * as argv[2], PROGRAM with "0 again", by default /bin/true). Second image
 * ("again"): main calls work() N times (N from the environment), then
 * sched_yield() once, and returns 0. Prints nothing; exit status 0.
 *
 * Exact counts, traced from the start with the same program re-exec'd:
 *   main: 2 (one per image; the first never returns), work: 2N, hop: 1
 * Exact edges: <root> -> main: 2, main -> work: 2N, main -> hop: 1 (and
 * never main -> main: the first image's frames end at the exec).
 * libc's sched_yield: 2 (one per image); with "other PROGRAM" (a copy of
 * this program at another path: another file), the second image is
 * another program: its work() is not the traced one, and its sched_yield
 * is not counted (1 in all).
 *
 * Multi-threaded, exec'ing from the main thread ("threads"): before the
 * work, main starts a thread running parker(), which calls park(); park()
 * posts a semaphore and blocks for good (pause). main waits for it, so
 * both frames are live, does the first image's work and hops: the exec
 * kills the parked thread.
 *   main 2, work 2N, hop 1, parker 1, park 1; edges <root> -> main 2,
 *   main -> work 2N, main -> hop 1, <root> -> parker 1, parker -> park 1;
 *   returns ended by exec: main, hop, parker, park = 4.
 *
 * Multi-threaded, exec'ing from another thread ("thread-exec"): main
 * starts a thread running runner() and calls waiter(), which posts a
 * semaphore and joins that thread (for good). runner() calls work() N
 * times, waits for the semaphore (waiter's frame is live) and calls hop():
 * the exec kills the main thread, and the runner's thread takes the
 * process's id.
 *   main 2, waiter 1, runner 1, work 2N, hop 1; edges <root> -> main 2,
 *   main -> waiter 1, <root> -> runner 1, runner -> work N, runner -> hop 1,
 *   main -> work N; returns ended by exec: main, waiter, runner, hop = 4.
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile long sink;
static long n_work;
static char *self;
static sem_t ready;

__attribute__((noipa)) long work(long i)
{
	sink += i;
	return sink;
}

__attribute__((noipa)) void hop(char *prog, const char *how, const char *other)
{
	char *again[] = {prog, "0", "again", NULL};
	char *copy[] = {(char *)other, "0", "again", NULL};
	char *truebin[] = {"/bin/true", NULL};

	if (how && !strcmp(how, "other") && other)
		execv(other, copy);
	else if (how && !strcmp(how, "other"))
		execv(truebin[0], truebin);
	else
		execv("/proc/self/exe", again);
	_exit(127);
}

/* threads: the parked thread's frames stay live until the exec. */
__attribute__((noipa)) void park(void)
{
	sem_post(&ready);
	for (;;)
		pause();
}

__attribute__((noipa)) void *parker(void *arg)
{
	(void)arg;
	park();
	return NULL;
}

/* thread-exec: the runner does the first image's work and exec's. */
__attribute__((noipa)) void *runner(void *arg)
{
	long i;

	(void)arg;
	for (i = 0; i < n_work; i++)
		work(i);
	sched_yield();
	while (sem_wait(&ready))
		;
	hop(self, "again", NULL);
	return NULL;
}

__attribute__((noipa)) void waiter(pthread_t t)
{
	sem_post(&ready);
	pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
	const char *how = argc > 2 ? argv[2] : NULL;
	pthread_t t;
	long i;

	if (argc < 2)
		return 2;
	self = argv[0];
	n_work = atol(argv[1]);
	if (how && !strcmp(how, "again"))
		n_work = atol(getenv("REEXEC_N") ? getenv("REEXEC_N") : "0");
	setenv("REEXEC_N", argv[1], 1);
	if (how && !strcmp(how, "thread-exec")) {
		sem_init(&ready, 0, 0);
		if (pthread_create(&t, NULL, runner, NULL))
			return 3;
		waiter(t);
		return 1;
	}
	if (how && !strcmp(how, "threads")) {
		sem_init(&ready, 0, 0);
		if (pthread_create(&t, NULL, parker, NULL))
			return 3;
		while (sem_wait(&ready))
			;
	}
	for (i = 0; i < n_work; i++)
		work(i);
	sched_yield();
	if (how && !strcmp(how, "again"))
		return 0;
	hop(argv[0], how, argc > 3 ? argv[3] : NULL);
	return 1;
}
