// SPDX-License-Identifier: BSD-2-Clause
/*
 * names N — C++ names for the demangler and -f. Built with g++ and clang++
 * at -O0 and -O2 (build.sh); tests/test_names_integration.c runs all four.
 *
 * main calls, N times each: ns::Foo::bar(int), ns::Foo::bar(double) (an
 * overloaded method), ns::twice<int>(int), ns::twice<long>(long) (a
 * template), ns::over(long), ns::over(char const*) (an overloaded
 * function), ns::work(long), scale(long, long) (static, always called with
 * the same second argument: g++ -O2 makes it the clone
 * "scale(long, long) [clone .constprop.0]"), and std::vector<int>::push_back.
 * ns::work's rare branch (every 8th call) calls a cold function, so g++ -O2
 * moves that branch into the fragment ns::work(long) [clone .cold], entered by
 * a jump from ns::work, not by a call: it runs, and must never be counted as
 * a call. Nothing is written to stderr. Prints "sum=S size=N" and the last
 * line "calls: bar_int=N ... complain=C" (C = the calls of ns::complain).
 * Exit 0; usage error 2.
 */
#include <cstdio>
#include <cstdlib>
#include <vector>

#define KEEP __attribute__((noinline, used))

namespace ns
{
struct Foo {
	long acc = 0;
	KEEP long bar(int x);
	KEEP long bar(double x);
};

KEEP long Foo::bar(int x)
{
	asm volatile("");
	return acc += x;
}

KEEP long Foo::bar(double x)
{
	asm volatile("");
	return acc += (long)(x * 2);
}

template <typename T> KEEP T twice(T v)
{
	asm volatile("");
	return v * 2;
}
template int twice<int>(int);
template long twice<long>(long);

KEEP long over(long x)
{
	asm volatile("");
	return x + 1;
}

KEEP long over(const char *s)
{
	asm volatile("");
	return s[0];
}

static char note[64];
static long complained;

__attribute__((cold, noinline)) void complain(long x)
{
	complained++;
	snprintf(note, sizeof(note), "complain %ld", x);
}

KEEP long work(long x)
{
	if (x % 8 == 7) {
		/* cold: g++ -O2 puts this branch in work's .cold fragment */
		complain(x);
		x = -x * 5 + (long)note[9];
		snprintf(note, sizeof(note), "again %ld", x);
		return x + note[0];
	}
	return x * 3;
}
} // namespace ns

/* Not "used": g++ -O2 may specialize it for k == 3 (a .constprop clone). */
static __attribute__((noinline)) long scale(long x, long k)
{
	asm volatile("");
	return x * k + (x >> 2);
}

int main(int argc, char **argv)
{
	long n, s = 0;
	ns::Foo f;
	std::vector<int> v;

	if (argc != 2 || (n = atol(argv[1])) < 0) {
		fprintf(stdout, "usage: names N\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		s += f.bar((int)i);
		s += f.bar((double)i);
		s += ns::twice<int>((int)i);
		s += ns::twice<long>(i);
		s += ns::over(i);
		s += ns::over("x");
		s += ns::work(i);
		s += scale(i, 3);
		v.push_back((int)i);
	}
	printf("sum=%ld size=%zu\n", s, v.size());
	printf("calls: bar_int=%ld bar_double=%ld twice_int=%ld twice_long=%ld over_long=%ld "
	       "over_str=%ld work=%ld scale=%ld complain=%ld\n",
	       n, n, n, n, n, n, n, n, ns::complained);
	return 0;
}
