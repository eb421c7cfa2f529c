// SPDX-License-Identifier: BSD-2-Clause
/*
 * hot — a process that never rests: to attach to mid-flight with -p and to
 * stop while it calls (issue 15, atomic attach and detach).
 *
 *   hot [THREADS]   (default 1; each thread runs the loop below)
 *
 * At start it prints "ready <pid>\n" on stdout and flushes. Then every
 * thread (main included), as fast as it can, forever:
 *     tick(n); outer(n);        outer calls inner twice
 * SIGTERM: the threads leave their loops; main prints
 * "ticks=<t> outers=<o> inners=<i>\n" on stderr (every thread's calls) and
 * exits 0. SIGINT: the default action (the process dies).
 *
 * Exact facts for a tracer of tick, outer and inner that starts and stops
 * while the loop runs (no event lost):
 *   edges: only <root> -> tick, <root> -> outer, outer -> inner, and
 *          <root> -> inner (at most 2 per thread: the inner calls of an
 *          outer entered before the trace started); never tick -> tick,
 *          outer -> outer, inner -> inner, tick -> *, inner -> *;
 *   calls(tick) == edge(<root>, tick), calls(outer) == edge(<root>, outer),
 *   calls(inner) == edge(outer, inner) + edge(<root>, inner);
 *   no missing or orphan return; returns entered before the start: at most
 *   2 per thread (outer and inner); frames open at stop: at most 2 per
 *   thread.
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")
#define MAX_THREADS 16

static volatile sig_atomic_t want_exit;
static volatile unsigned long sink;

struct counts {
	unsigned long ticks, outers, inners;
};

static void on_term(int sig)
{
	(void)sig;
	want_exit = 1;
}

TRACED void tick(unsigned long n)
{
	sink += n;
}

TRACED void inner(struct counts *c, unsigned long n)
{
	c->inners++;
	sink += n;
}

TRACED void outer(struct counts *c, unsigned long n)
{
	inner(c, n);
	BARRIER();
	inner(c, n + 1);
	BARRIER();
	c->outers++;
}

static void *loop(void *arg)
{
	struct counts *c = arg;

	while (!want_exit) {
		tick(++c->ticks);
		BARRIER();
		outer(c, c->ticks);
		BARRIER();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static struct counts c[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	unsigned long t = 0, o = 0, in = 0;
	struct sigaction sa;
	int n = argc > 1 ? atoi(argv[1]) : 1, i;

	if (n < 1 || n > MAX_THREADS) {
		fprintf(stderr, "usage: hot [THREADS 1-%d]\n", MAX_THREADS);
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL)) {
		perror("sigaction");
		return 1;
	}
	for (i = 1; i < n; i++)
		if (pthread_create(&th[i], NULL, loop, &c[i])) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	loop(&c[0]);
	for (i = 1; i < n; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < n; i++) {
		t += c[i].ticks;
		o += c[i].outers;
		in += c[i].inners;
	}
	fprintf(stderr, "ticks=%lu outers=%lu inners=%lu\n", t, o, in);
	return 0;
}
