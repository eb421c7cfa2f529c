// SPDX-License-Identifier: BSD-2-Clause
/*
 * libcabfiber.so: a plugin for tests/targets/dlopener.c ("dlopener N
 * libcabfiber.so") with a coroutine switch of its own, in the library, as
 * tests/targets/fiber.c has one in its executable: cabfiber_switch saves
 * rsp in *save and loads rsp from to. Each plug_work(x) switches to a fibre
 * whose loop (fibre_loop) calls fibre_once, which calls fibre_step(x) and
 * switches back; resumed by the next plug_work, fibre_once returns, so a
 * frame on the fibre's stack lives across switches (what the kernel's one
 * list of return probes cannot follow). The first call starts the fibre;
 * it is left suspended at the end.
 *
 * Exact, for a dlopener run with N calls (N > 0): plug_work N, fibre_once
 * N, fibre_step N, fibre_loop 1 (entered by the switch's ret, not called).
 * Edges: fibre_once -> fibre_step N.
 */
#include <stdlib.h>

#include "../fiber_switch.h"

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")
#define STACK_BYTES (64 * 1024)

FIBER_SWITCH(cabfiber_switch);

static void *caller_sp, *fibre_sp;
static long arg, result;

TRACED long fibre_step(long x)
{
	return x * 3 + 1;
}

TRACED void fibre_once(void)
{
	result = fibre_step(arg);
	BARRIER();
	cabfiber_switch(&fibre_sp, caller_sp);
	BARRIER();
}

/* Runs on the fibre's stack; never returns. */
TRACED void fibre_loop(void)
{
	for (;;) {
		fibre_once();
		BARRIER();
	}
}

TRACED long plug_work(long x)
{
	if (!fibre_sp) {
		void **sp = (void **)((char *)malloc(STACK_BYTES) + STACK_BYTES);
		int i;

		*--sp = NULL;
		*--sp = (void *)fibre_loop;
		for (i = 0; i < 6; i++)
			*--sp = NULL;
		fibre_sp = sp;
	}
	arg = x;
	cabfiber_switch(&caller_sp, fibre_sp);
	BARRIER();
	return result;
}
