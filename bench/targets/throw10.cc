// Throw/catch through 10 frames, self-timed: `throw10 MODE N` runs N
// rounds of catcher() -> f10() -> ... -> f1(), where f1 throws (MODE
// "throw") or returns (MODE "return"), and prints the loop's time per
// round as "ns_per_round=X" (startup and attach are not in it).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <time.h>

static bool do_throw;

extern "C" {
__attribute__((noinline)) int f1(int i)
{
	asm volatile("");
	if (do_throw)
		throw std::runtime_error("bench");
	return i;
}
#define F(n, m)                                                                                    \
	__attribute__((noinline)) int f##n(int i)                                                  \
	{                                                                                          \
		asm volatile("");                                                                  \
		return f##m(i) + 1;                                                                \
	}
F(2, 1) F(3, 2) F(4, 3) F(5, 4) F(6, 5) F(7, 6) F(8, 7) F(9, 8) F(10, 9)
__attribute__((noinline)) int catcher(int i)
{
	try {
		return f10(i);
	} catch (const std::exception &) {
		return -1;
	}
}
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	long n = argc > 2 ? atol(argv[2]) : 10000, s = 0;

	do_throw = argc > 1 && !strcmp(argv[1], "throw");
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		s += catcher((int)i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("sum=%ld ns_per_round=%.1f\n", s,
	       ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)n);
	return 0;
}
