// SPDX-License-Identifier: BSD-2-Clause
/*
 * nonlocal MODE N — frames left without a return (longjmp, a context
 * switch), then a call from the frame that lives: the shapes in which a
 * tracer that pairs entries and returns by stack slot takes the dead frame
 * for the caller of the next call (issue 44). The C++ shapes (rethrow) are
 * in rethrow.cc.
 *
 * MODE (i = 0..N-1, N >= 0):
 *   longjmp   main calls foo(i), which longjmps back into main; main then
 *             calls bar(i) at the same stack slot foo had.
 *   nested    main (setjmp j1) calls lvl1(i); lvl1 (setjmp j2) calls
 *             lvl2(i) -> jumper(i), which longjmps to j1 when i is odd and
 *             to j2 when i is even; after landing lvl1 calls after1(i) and
 *             returns, main calls after0(i).
 *   samesite  main calls hop(i) from one call site in a setjmp loop; hop
 *             longjmps back, so the next hop is called at the dead frame's
 *             slot from the same call site (same return address).
 *   tailjump  main calls lander(i): lander (setjmp) calls jumper2(i),
 *             which longjmps back into lander, and lander then ends with
 *             `return tailee(i)` (a jmp at -O2, a call at -O0).
 *   switch    main calls foo_switch(i), which swapcontext()s to a coroutine
 *             whose body co_body calls bar(i) and switches back; main then
 *             calls baz(i) at foo_switch's slot.
 *
 * Exact edges (caller -> callee: count), besides <root> -> main: 1:
 *   longjmp:  main -> foo N, main -> bar N
 *   nested:   main -> lvl1 N, lvl1 -> lvl2 N, lvl2 -> jumper N,
 *             lvl1 -> after1 ceil(N/2), main -> after0 floor(N/2)
 *   samesite: main -> hop N, main -> bar N
 *   tailjump: main -> lander N, lander -> jumper2 N, lander -> tailee N
 *   switch:   main -> foo_switch N, main -> baz N, <root> -> co_body 1 (when
 *             N > 0), co_body -> bar N
 * Output: "mode=MODE n=N sum=S" (S a checksum), exit status 0; usage
 * errors exit 2.
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

static jmp_buf j1, j2;
static volatile long sum;

TRACED void foo(long i)
{
	sum += i;
	longjmp(j1, 1);
}

TRACED void bar(long i)
{
	sum += 2 * i;
	BARRIER();
}

TRACED void jumper(long i)
{
	sum += 3;
	longjmp(i % 2 ? j1 : j2, 1);
}

TRACED void lvl2(long i)
{
	jumper(i);
	BARRIER();
}

TRACED void after1(long i)
{
	sum += i;
	BARRIER();
}

TRACED void after0(long i)
{
	sum += 5 * i;
	BARRIER();
}

TRACED void lvl1(long i)
{
	if (setjmp(j2) == 0) {
		lvl2(i);
		BARRIER();
	}
	after1(i);
	BARRIER();
}

TRACED void hop(long i)
{
	sum += 7 * i;
	longjmp(j1, 1);
}

TRACED void jumper2(long i)
{
	sum += i;
	longjmp(j2, 1);
}

TRACED long tailee(long i)
{
	sum += 11;
	BARRIER();
	return i + 1;
}

TRACED long lander(long i)
{
	if (setjmp(j2) == 0) {
		jumper2(i);
		BARRIER();
	}
	return tailee(i);
}

static ucontext_t main_ctx, co_ctx;
static char co_stack[256 * 1024];
static long co_arg;

TRACED void co_body(void)
{
	for (;;) {
		bar(co_arg);
		swapcontext(&co_ctx, &main_ctx);
	}
}

TRACED void foo_switch(long i)
{
	co_arg = i;
	swapcontext(&main_ctx, &co_ctx);
	BARRIER();
}

TRACED void baz(long i)
{
	sum += 13 * i;
	BARRIER();
}

int main(int argc, char **argv)
{
	volatile long i;
	long n;
	char *end;

	if (argc != 3) {
		fprintf(stderr, "usage: nonlocal longjmp|nested|samesite|tailjump|switch N\n");
		return 2;
	}
	n = strtol(argv[2], &end, 10);
	if (*end || n < 0) {
		fprintf(stderr, "nonlocal: N must be >= 0\n");
		return 2;
	}
	if (!strcmp(argv[1], "longjmp")) {
		for (i = 0; i < n; i++) {
			if (setjmp(j1) == 0)
				foo(i);
			bar(i);
		}
	} else if (!strcmp(argv[1], "nested")) {
		for (i = 0; i < n; i++) {
			if (setjmp(j1) == 0) {
				lvl1(i);
				BARRIER();
			} else {
				after0(i);
			}
		}
	} else if (!strcmp(argv[1], "samesite")) {
		/* one call site of hop: the loop jumps back to it */
		i = 0;
		if (setjmp(j1) != 0)
			i++;
		if (i < n)
			hop(i);
		for (i = 0; i < n; i++)
			bar(i);
	} else if (!strcmp(argv[1], "tailjump")) {
		for (i = 0; i < n; i++)
			sum += lander(i);
	} else if (!strcmp(argv[1], "switch")) {
		if (getcontext(&co_ctx))
			return 1;
		co_ctx.uc_stack.ss_sp = co_stack;
		co_ctx.uc_stack.ss_size = sizeof(co_stack);
		co_ctx.uc_link = NULL;
		makecontext(&co_ctx, co_body, 0);
		for (i = 0; i < n; i++) {
			foo_switch(i);
			baz(i);
		}
	} else {
		fprintf(stderr, "nonlocal: unknown mode %s\n", argv[1]);
		return 2;
	}
	printf("mode=%s n=%ld sum=%ld\n", argv[1], n, (long)sum);
	return 0;
}
