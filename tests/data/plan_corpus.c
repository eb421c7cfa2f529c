// SPDX-License-Identifier: BSD-2-Clause
/*
 * Corpus for tests/test_plan.c: function shapes whose entries compilers lay
 * out in different ways (leaf arithmetic, loops that start at the entry,
 * jump tables, computed gotos, tail calls, big frames, varargs, alloca,
 * setjmp; functions reached only by direct calls, or through a pointer,
 * for the call-site rule of tests/test_callsites.c). The suite compiles it with gcc and clang at -O0..-O3, with and
 * without -fcf-protection, and checks every probe the plan moves against
 * objdump's independent disassembly. Never run; only compiled.
 */
#include <alloca.h>
#include <setjmp.h>
#include <stdarg.h>
#include <string.h>

#define F __attribute__((noinline))

volatile long sink;
static jmp_buf jb;

F long leaf_add(long a, long b) { return a * 3 + b; }

F long loop_at_entry(const char *s)
{
	long n = 0;

	while (*s++)
		n++;
	return n;
}

F long count_down(long n)
{
	do
		sink += n;
	while (--n > 0);
	return sink;
}

F int dispatch(int op, int x)
{
	for (;;) {
		switch (op) {
		case 0: return x;
		case 1: x += 3; op = 4; continue;
		case 2: x *= 5; op = 0; continue;
		case 3: x -= 7; op = 1; continue;
		case 4: x ^= 9; op = 2; continue;
		case 5: op = x & 3; continue;
		case 6: x <<= 1; op = 5; continue;
		default: return -x;
		}
	}
}

F int threaded(int n)
{
	static void *tab[] = {&&a, &&b, &&c};
	int acc = 0;

	goto *tab[n % 3];
a:
	acc += 1;
	if (--n > 0)
		goto *tab[n % 3];
	return acc;
b:
	acc += 2;
	if (--n > 0)
		goto *tab[n % 3];
	return acc;
c:
	acc += 3;
	if (--n > 0)
		goto *tab[n % 3];
	return acc;
}

F long tail(long x) { return leaf_add(x, 1); }

F long big_frame(int n)
{
	char buf[4096];

	memset(buf, n, sizeof(buf));
	return buf[n & 4095] + sink;
}

F long vsum(int n, ...)
{
	va_list ap;
	long s = 0;

	va_start(ap, n);
	while (n-- > 0)
		s += va_arg(ap, long);
	va_end(ap);
	return s;
}

F long use_alloca(int n)
{
	char *p = alloca((size_t)n + 1);

	memset(p, 1, (size_t)n + 1);
	return p[n];
}

F int jumper(int n)
{
	if (setjmp(jb))
		return 1;
	if (n > 3)
		longjmp(jb, 1);
	return 0;
}

F int guarded(int *p)
{
	if (!p)
		return -1;
	return *p + 1;
}

#ifdef __clang__
#define NOIPA F
#else
#define NOIPA F __attribute__((noipa))
#endif

/* Only ever called directly (twice): counted at its call sites. */
static NOIPA long direct_only(long x) { return x * 7 + sink; }
/* Called through a pointer: its address escapes. */
NOIPA long addr_taken(long x) { return x * 5 + sink; }
long (*volatile fp)(long) = addr_taken;

NOIPA long calls_direct(long x) { return direct_only(x) + direct_only(x + 1); }

F long recurse(long n) { return n < 2 ? n : recurse(n - 1) + recurse(n - 2); }

int main(int argc, char **argv)
{
	(void)argv;
	sink = leaf_add(argc, 2) + loop_at_entry("abc") + count_down(3) + dispatch(argc, 4) +
	       threaded(argc + 5) + tail(argc) + big_frame(argc) + vsum(2, 1L, 2L) +
	       use_alloca(argc) + jumper(argc) + guarded((int *)&argc) + recurse(5) +
	       calls_direct(argc) + fp(argc);
	return 0;
}
