// SPDX-License-Identifier: BSD-2-Clause
/*
 * fiber N — coroutines with their own stack switch, as libco's coctx_swap,
 * libaco's acosw or a game engine's fibres do it: fiber_switch(&save, to)
 * pushes the callee-saved registers, stores rsp in *save, loads rsp from
 * to, pops and returns on the other stack. No name tells a profiler what
 * it is (cabbpf finds it by its code: insn__switches_stack).
 *
 * main calls consume(N) (N >= 0) on the main stack. consume switches N
 * times to the producer, a fibre on its own stack; each time the
 * producer's loop in produce calls produce_one(i), which calls step(i),
 * stores the result and switches back; consume then calls step(item) and
 * adds the result up. The producer is left suspended at the end.
 *
 * Exact counts: main 1; consume 1; produce 1 (when N > 0); produce_one N;
 * step 2N (N on the fibre's stack, N on the main stack).
 * Exact edges: main -> consume 1; consume -> step N; produce ->
 * produce_one N; produce_one -> step N. produce is entered by a switch,
 * not a call: it has no caller.
 * Output: stdout "items=N sum=S" (S depends on N only), then as the LAST
 * line "calls: produce=P produce_one=N consume=1 step=2N" (its own
 * counts); nothing on stderr; exit status 0; usage errors exit 2.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fiber_switch.h"

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")
#define STACK_BYTES (64 * 1024)

FIBER_SWITCH(fiber_switch);

static void *main_sp, *fibre_sp;
static long slot;
static long n_produce, n_produce_one, n_consume, n_step;

TRACED long step(long x)
{
	n_step++;
	x ^= x >> 7;
	x *= 2654435761L;
	return x & 0xffffff;
}

TRACED void produce_one(long i)
{
	n_produce_one++;
	slot = step(i);
	BARRIER();
	fiber_switch(&fibre_sp, main_sp);
	BARRIER();
}

/* Runs on the fibre's stack, entered by fiber_switch's ret; never returns. */
TRACED void produce(void)
{
	long i;

	n_produce++;
	for (i = 0;; i++) {
		produce_one(i);
		BARRIER();
	}
}

TRACED long consume(long n)
{
	long k, sum = 0;

	n_consume++;
	for (k = 0; k < n; k++) {
		fiber_switch(&main_sp, fibre_sp);
		BARRIER();
		sum += step(slot);
		BARRIER();
	}
	return sum;
}

int main(int argc, char **argv)
{
	void **sp;
	char *end, *stack;
	long n, sum;
	int i;

	if (argc != 2 || (n = strtol(argv[1], &end, 10)) < 0 || *end) {
		fprintf(stderr, "usage: fiber N\n");
		return 2;
	}
	stack = malloc(STACK_BYTES);
	if (!stack)
		return 1;
	/* The fibre's first switch pops six registers and returns into
	 * produce, with the stack aligned as after a call. */
	sp = (void **)(stack + STACK_BYTES);
	*--sp = NULL;
	*--sp = (void *)produce;
	for (i = 0; i < 6; i++)
		*--sp = NULL;
	fibre_sp = sp;
	sum = consume(n);
	BARRIER();
	printf("items=%ld sum=%ld\n", n, sum);
	printf("calls: produce=%ld produce_one=%ld consume=%ld step=%ld\n", n_produce,
	       n_produce_one, n_consume, n_step);
	free(stack);
	return 0;
}
