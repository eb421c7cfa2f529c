// SPDX-License-Identifier: BSD-2-Clause
/*
 * isp [-w] [-t | -s] — routines of known complexity fed by read(), for the
 * input-sensitive profiling tests (tests/test_isp_integration.c). Writes
 * nothing on stdout or stderr (but "ready <pid>\n" with -w) and exits 0.
 *
 * Input comes from /dev/zero: read() of n bytes delivers exactly n.
 * Traced-call counts (cost = calls: the activation itself included):
 *   load(fd, n)     reads n bytes (leaf):                  1 call
 *   step(c)         one unit of work (leaf):               1 call
 *   lin(fd, n)      load n, then n steps:                  n + 2
 *   nlogn(fd, n)    load n, then n * log2(n) steps:        n log2 n + 2
 *   quad(fd, n)     load n, then n * n steps:              n^2 + 2
 *   session(fd, i)  lin(L[i]), nlogn(L[i]), quad(Q[i]):    input 2 L[i] + Q[i]
 *   work(n)         n steps, no input (size: --size work:arg0): n + 1
 *   chars(s)        strlen(s) steps (--size 'chars:strlen(arg0)'): len + 1
 *   maybe(s)        called once with NULL: nothing (with --size
 *                   'maybe:strlen(arg0)' its size is unreadable)
 * with L = 64, 128, ..., 2048 and Q = 4, 8, ..., 128 (6 sizes each). main
 * runs session(fd, i) for i = 0..5, REPS = 3 times over, then work(n) for
 * n = 10, 20, 40, 80, 160, 320 and chars() on strings of those lengths,
 * then maybe(NULL).
 * step is a sibling of load in every caller: it reads nothing.
 *
 * -t instead: two threads, each tlin(fd, n) 5 times (A: n = 1000, B:
 * n = 3000; tlin = load n then n steps), in lock step (a barrier before
 * every call), so their activations interleave: each activation's input
 * must be its own thread's.
 *
 * -s instead: sleeping against spinning, for --cost cpu: REPS times over,
 * for i = 0..5, nap(4 << i) (sleeps that many ms in nanosleep: on-CPU a
 * few microseconds, its wall time at least the sleep) and spin(1M << i)
 * (that many iterations of an untraced loop: on-CPU all along). Sizes from
 * the argument: --size nap:arg0 --size spin:arg0.
 *
 * -w first writes "ready <pid>\n" (one write(2)) and waits for SIGUSR1
 * (sigwait: no handler), then does the same.
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "read_full.h"

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

#define NSIZES 6
#define REPS 3
#define MAXN 4096

static volatile unsigned long sink;
static unsigned char bufs[2][MAXN];

TRACED void step(unsigned c)
{
	sink += c;
	BARRIER();
}

TRACED void load(int fd, unsigned char *buf, size_t n)
{
	read_full(fd, buf, n);
	BARRIER();
}

TRACED void lin(int fd, size_t n)
{
	load(fd, bufs[0], n);
	for (size_t i = 0; i < n; i++)
		step(bufs[0][i]);
	BARRIER();
}

TRACED void nlogn(int fd, size_t n)
{
	load(fd, bufs[0], n);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 1; k < n; k *= 2)
			step(bufs[0][i]);
	BARRIER();
}

TRACED void quad(int fd, size_t n)
{
	load(fd, bufs[0], n);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			step(bufs[0][j]);
	BARRIER();
}

TRACED void session(int fd, int i)
{
	lin(fd, (size_t)64 << i);
	nlogn(fd, (size_t)64 << i);
	quad(fd, (size_t)4 << i);
	BARRIER();
}

TRACED void work(long n)
{
	for (long i = 0; i < n; i++)
		step((unsigned)i);
	BARRIER();
}

TRACED void chars(const char *s)
{
	for (; *s; s++)
		step((unsigned char)*s);
	BARRIER();
}

TRACED void maybe(const char *s)
{
	if (s)
		chars(s);
	BARRIER();
}

TRACED void nap(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts))
		;
	BARRIER();
}

TRACED void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i;
	BARRIER();
}

static pthread_barrier_t bar;
static int zero_fd;

TRACED void tlin(int fd, unsigned char *buf, size_t n)
{
	load(fd, buf, n);
	for (size_t i = 0; i < n; i++)
		step(buf[i]);
	BARRIER();
}

static void *thread_main(void *arg)
{
	long who = (long)arg;

	for (int k = 0; k < 5; k++) {
		pthread_barrier_wait(&bar);
		tlin(zero_fd, bufs[who], who ? 3000 : 1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	bool threads = false, wait = false, sleeps = false;
	char str[400];
	pthread_t t[2];
	int i, r;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-t"))
			threads = true;
		else if (!strcmp(argv[i], "-w"))
			wait = true;
		else if (!strcmp(argv[i], "-s"))
			sleeps = true;
		else {
			fprintf(stderr, "usage: isp [-w] [-t | -s]\n");
			return 2;
		}
	}
	if (wait) {
		char line[64];
		sigset_t set;
		int sig, n;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		n = snprintf(line, sizeof(line), "ready %d\n", (int)getpid());
		if (write(1, line, (size_t)n) != n)
			return 1;
		if (sigwait(&set, &sig))
			return 1;
	}
	if (sleeps) {
		for (r = 0; r < REPS; r++)
			for (i = 0; i < NSIZES; i++) {
				nap(4L << i);
				spin(1000000L << i);
			}
		return 0;
	}
	zero_fd = open("/dev/zero", O_RDONLY);
	if (zero_fd < 0)
		return 1;
	if (threads) {
		pthread_barrier_init(&bar, NULL, 2);
		for (i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, thread_main, (void *)(long)i))
				return 1;
		for (i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	for (r = 0; r < REPS; r++)
		for (i = 0; i < NSIZES; i++)
			session(zero_fd, i);
	memset(str, 'x', sizeof(str));
	for (i = 0; i < NSIZES; i++) {
		work(10L << i);
		str[10 << i] = 0;
		chars(str);
		str[10 << i] = 'x';
	}
	maybe(NULL);
	BARRIER();
	close(zero_fd);
	return 0;
}
