// SPDX-License-Identifier: BSD-2-Clause
/*
 * coro N — ucontext coroutines: calls on two stacks of one thread.
 *
 * main calls consume(N) (N >= 0) on the main stack. consume switches with
 * swapcontext to produce, a coroutine started with makecontext on its own
 * stack, whose uc_link is consume's context. N times, produce calls
 * step(i) on its stack, stores the result and swapcontexts back to
 * consume, which calls step(item) on the main stack and adds the result
 * up; a last switch lets produce return, which resumes consume through
 * uc_link. Then main runs once() on a third stack: main saves its context
 * with getcontext and jumps to once's context with setcontext (which does
 * not return); once calls step(N) and returns, and its uc_link (main's
 * saved context) brings main back after the getcontext.
 *
 * Exact counts:
 *   main: 1; consume: 1; produce: 1; once: 1; step: 2N+1 (N on produce's
 *   stack, N on the main stack, 1 on once's stack)
 * Exact edges (caller -> callee: count):
 *   main -> consume 1; produce -> step N; consume -> step N;
 *   once -> step 1. produce and once are entered by a context switch,
 *   not a call: they have no caller (and return to no caller).
 * Output: stdout "items=N sum=S" (S depends on N only), then as the LAST
 * line "calls: produce=1 consume=1 once=1 step=2N+1" (its own counts);
 * nothing on stderr; exit status 0; usage errors print a usage line on
 * stderr and exit 2.
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")
#define STACK_BYTES (256 * 1024)

static ucontext_t consume_uc, produce_uc, main_uc, once_uc;
static long nitems, slot;
static volatile int produce_done, once_done;
static long n_produce, n_consume, n_once, n_step;

TRACED long step(long x)
{
	n_step++;
	x ^= x >> 7;
	x *= 2654435761L;
	return x & 0xffffff;
}

/* Runs on its own stack; entered by swapcontext. */
TRACED void produce(void)
{
	long i;

	n_produce++;
	for (i = 0; i < nitems; i++) {
		slot = step(i);
		BARRIER();
		swapcontext(&produce_uc, &consume_uc);
		BARRIER();
	}
	produce_done = 1;
	/* Returning resumes uc_link: consume_uc. */
}

TRACED long consume(long n)
{
	long sum = 0, got = 0;

	n_consume++;
	for (;;) {
		swapcontext(&consume_uc, &produce_uc);
		BARRIER();
		if (produce_done)
			break;
		sum += step(slot) + got++;
		BARRIER();
	}
	return got == n ? sum : -1;
}

/* Runs on its own stack; entered by setcontext, leaves through uc_link. */
TRACED void once(void)
{
	n_once++;
	slot = step(nitems);
	BARRIER();
	once_done = 1;
}

int main(int argc, char **argv)
{
	char *end;
	long sum;
	void *s1, *s2;

	if (argc != 2) {
		fprintf(stderr, "usage: coro N\n");
		return 2;
	}
	nitems = strtol(argv[1], &end, 10);
	if (*end || !*argv[1] || nitems < 0) {
		fprintf(stderr, "coro: N must be >= 0\n");
		return 2;
	}
	s1 = malloc(STACK_BYTES);
	s2 = malloc(STACK_BYTES);
	if (!s1 || !s2 || getcontext(&produce_uc) || getcontext(&once_uc))
		return 1;
	produce_uc.uc_stack.ss_sp = s1;
	produce_uc.uc_stack.ss_size = STACK_BYTES;
	produce_uc.uc_link = &consume_uc;
	makecontext(&produce_uc, produce, 0);
	sum = consume(nitems);
	BARRIER();

	once_uc.uc_stack.ss_sp = s2;
	once_uc.uc_stack.ss_size = STACK_BYTES;
	once_uc.uc_link = &main_uc;
	makecontext(&once_uc, once, 0);
	if (getcontext(&main_uc))
		return 1;
	/* once's uc_link brings us back here with once_done set. */
	if (!once_done)
		setcontext(&once_uc);
	sum += slot;
	printf("items=%ld sum=%ld\n", nitems, sum);
	printf("calls: produce=%ld consume=%ld once=%ld step=%ld\n", n_produce, n_consume, n_once,
	       n_step);
	free(s1);
	free(s2);
	return 0;
}
