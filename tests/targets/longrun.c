// SPDX-License-Identifier: BSD-2-Clause
/*
 * longrun — a long-running process to attach to with -p, with work that can
 * be triggered from outside in exactly known amounts.
 *
 * At start it prints "ready <pid>\n" on stdout and flushes. Then, in its
 * main thread, forever: main calls tick() and sleeps ~1 ms (nanosleep).
 * Signals are only flagged by their handlers; the loop acts on them:
 *   SIGUSR1: main calls burst() exactly 1000 times, then prints
 *            "burst done\n" on stdout and flushes. One round per delivered
 *            signal: wait for "burst done" before sending the next SIGUSR1
 *            (the kernel merges a second SIGUSR1 sent while one is still
 *            pending).
 *   SIGTERM: main leaves the loop, prints "ticks=<t> bursts=<b>\n" on stderr
 *            (t = tick() calls so far, b = burst rounds) and exits 0.
 *
 * Exact counts over the process lifetime:
 *   main:      1 (entered before any attach with -p: a tracer sees its
 *              return only, at SIGTERM)
 *   tick:      t (printed at exit; ~800-1000 per second)
 *   burst:     1000 * b
 *   on_signal: one per delivered signal, i.e. b + 1 when every SIGUSR1 was
 *              sent after the previous "burst done" and SIGTERM ended it.
 * Exact edges (caller -> callee: count):
 *   main -> tick:  t
 *   main -> burst: 1000 * b
 *   on_signal is a signal handler: it has no real caller; a shadow stack
 *   puts it below whatever traced frame the signal interrupted (almost
 *   always main, asleep in nanosleep), so tests should not assert its edge.
 * A tracer attached at time T0 and detached before SIGTERM sees exactly
 * 1000 burst calls per "burst done" line printed while it was attached.
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

#define BURST_CALLS 1000

/*
 * The handler only increments usr1_seen and the loop only reads it, so a
 * SIGUSR1 arriving at any moment (even during a burst) is never lost.
 */
static volatile sig_atomic_t usr1_seen, want_exit;
static volatile unsigned long sink;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		usr1_seen++;
	else
		want_exit = 1;
}

TRACED void tick(unsigned long n)
{
	sink += n;
}

TRACED void burst(int i)
{
	sink += (unsigned long)i * 3;
}

int main(void)
{
	const struct timespec ms = {.tv_sec = 0, .tv_nsec = 1000000};
	unsigned long ticks = 0, bursts = 0;
	struct sigaction sa;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a signal cuts the sleep short so it is acted on now. */
	if (sigaction(SIGUSR1, &sa, NULL) || sigaction(SIGTERM, &sa, NULL)) {
		perror("sigaction");
		return 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);

	while (!want_exit) {
		tick(++ticks);
		BARRIER();
		while (bursts < (unsigned long)usr1_seen) {
			for (i = 0; i < BURST_CALLS; i++) {
				burst(i);
				BARRIER();
			}
			bursts++;
			printf("burst done\n");
			fflush(stdout);
		}
		nanosleep(&ms, NULL);
	}
	fprintf(stderr, "ticks=%lu bursts=%lu\n", ticks, bursts);
	return 0;
}
