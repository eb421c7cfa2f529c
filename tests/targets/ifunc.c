// SPDX-License-Identifier: BSD-2-Clause
/*
 * ifunc — calls libc's IFUNC functions (memcpy, strlen, memchr) a known
 * number of times from one traced function, and counts its own calls, for
 * the IFUNC tests (issue 15): a probe on the symbol memcpy would count its
 * resolver; cabbpf must count the implementation the program runs.
 *
 *   ifunc [N]        work(N) once, then exits
 *   ifunc N wait     prints "ready", waits for SIGUSR1, runs work(N),
 *                    prints its counts, then waits for SIGTERM (exit 0;
 *                    a SIGTERM before SIGUSR1 ends it at once)
 *
 * work(n) calls memcpy n times, strlen 2n times and memchr 3n times, with
 * sizes the compiler cannot see (volatile), so every call is a real call
 * through the PLT, at -O0 and -O2. Last line on stdout:
 *   calls: work=1 memcpy=N strlen=2N memchr=3N
 * Exact edges: work -> memcpy's implementation: N, -> strlen's: 2N,
 * -> memchr's: 3N (libc's own calls come from libc, not from work).
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRACED __attribute__((noinline, noipa))

static volatile size_t copy_len = 48, find_len = 64;
static volatile int needle = 'z';
static char src[256], dst[256], text[128];
static unsigned long n_memcpy, n_strlen, n_memchr;
static volatile sig_atomic_t go, stop;
volatile size_t sink;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		go = 1;
	else
		stop = 1;
}

TRACED void work(long n)
{
	long i;

	for (i = 0; i < n; i++) {
		memcpy(dst, src, copy_len);
		n_memcpy++;
		sink += strlen(text);
		n_strlen++;
		sink += strlen(dst);
		n_strlen++;
		sink += memchr(text, needle, find_len) != NULL;
		n_memchr++;
		sink += memchr(src, needle, find_len) != NULL;
		n_memchr++;
		sink += memchr(dst, 'q', find_len) != NULL;
		n_memchr++;
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	struct sigaction sa;

	memset(src, 'a', sizeof(src) - 1);
	memset(text, 'b', 100);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (argc > 2) {
		if (sigaction(SIGUSR1, &sa, NULL) || sigaction(SIGTERM, &sa, NULL)) {
			perror("sigaction");
			return 1;
		}
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		while (!go && !stop)
			pause();
		if (stop)
			return 0;
	}
	work(n);
	printf("calls: work=1 memcpy=%lu strlen=%lu memchr=%lu\n", n_memcpy, n_strlen, n_memchr);
	fflush(stdout);
	while (argc > 2 && !stop)
		pause();
	return 0;
}
