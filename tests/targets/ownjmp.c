// SPDX-License-Identifier: BSD-2-Clause
/*
 * ownjmp N — a setjmp and longjmp of the program's own, as a language
 * runtime's exceptions have them (Free Pascal's fpc_setjmp, every try
 * block calls it; an interpreter's error recovery): save_point(ctx) keeps
 * the callee-saved registers, rsp and ITS OWN RETURN ADDRESS in ctx and
 * returns 0; jump_back(ctx, v) restores them and "returns" from
 * save_point a second time, with v. No name tells a profiler what it is
 * (cabbpf finds it by its code: insn__reads_return_address).
 *
 * main calls attempt(i) for i in 0..N-1 (N >= 0); attempt calls
 * save_point, then risky(i), which calls check(i); check jumps back to
 * attempt's save point when i % 3 == 0 (the "raise"), else returns.
 * Exact counts: main 1; attempt N; risky N; check N; save_point N
 * (entered once an attempt, it returns twice for a raised one);
 * jump_back ceil(N/3).
 * Exact edges: main -> attempt N; attempt -> save_point N; attempt ->
 * risky N; risky -> check N; check -> jump_back ceil(N/3).
 * Output: stdout "n=N raised=R sum=S" (R = ceil(N/3), S depends on N),
 * then as the LAST line "calls: attempt=N risky=N check=N" (its own
 * counts); nothing on stderr; exit status 0; usage errors exit 2.
 */
#include <stdio.h>
#include <stdlib.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

/* ctx: rbx, rbp, r12-r15, rsp after the return, the return address. */
__asm__(".text\n"
	".globl save_point\n"
	".type save_point, @function\n"
	"save_point:\n"
	"	movq %rbx, 0(%rdi)\n"
	"	movq %rbp, 8(%rdi)\n"
	"	movq %r12, 16(%rdi)\n"
	"	movq %r13, 24(%rdi)\n"
	"	movq %r14, 32(%rdi)\n"
	"	movq %r15, 40(%rdi)\n"
	"	leaq 8(%rsp), %rdx\n"
	"	movq %rdx, 48(%rdi)\n"
	"	movq (%rsp), %rdx\n"
	"	movq %rdx, 56(%rdi)\n"
	"	xorl %eax, %eax\n"
	"	ret\n"
	".size save_point, .-save_point\n"
	".globl jump_back\n"
	".type jump_back, @function\n"
	"jump_back:\n"
	"	movl %esi, %eax\n"
	"	movq 0(%rdi), %rbx\n"
	"	movq 8(%rdi), %rbp\n"
	"	movq 16(%rdi), %r12\n"
	"	movq 24(%rdi), %r13\n"
	"	movq 32(%rdi), %r14\n"
	"	movq 40(%rdi), %r15\n"
	"	movq 48(%rdi), %rsp\n"
	"	jmp *56(%rdi)\n"
	".size jump_back, .-jump_back\n");
long save_point(long ctx[8]) __attribute__((returns_twice));
void jump_back(long ctx[8], long v) __attribute__((noreturn));

static long ctx[8];
static long n_attempt, n_risky, n_check;

TRACED long check(long i)
{
	n_check++;
	if (i % 3 == 0)
		jump_back(ctx, i + 1);
	return i * 7;
}

TRACED long risky(long i)
{
	long v;

	n_risky++;
	v = check(i);
	BARRIER();
	return v + 1;
}

/* 0 when risky(i) returned normally; the value it jumped back with
 * otherwise. sum collects both. */
TRACED long attempt(long i, long *sum)
{
	volatile long raised;

	n_attempt++;
	raised = save_point(ctx);
	if (raised) {
		*sum += raised;
		return 1;
	}
	*sum += risky(i);
	BARRIER();
	return 0;
}

int main(int argc, char **argv)
{
	long n, i, raised = 0, sum = 0;
	char *end;

	if (argc != 2 || (n = strtol(argv[1], &end, 10)) < 0 || *end) {
		fprintf(stderr, "usage: ownjmp N\n");
		return 2;
	}
	for (i = 0; i < n; i++) {
		raised += attempt(i, &sum);
		BARRIER();
	}
	printf("n=%ld raised=%ld sum=%ld\n", n, raised, sum);
	printf("calls: attempt=%ld risky=%ld check=%ld\n", n_attempt, n_risky, n_check);
	return 0;
}
