// SPDX-License-Identifier: BSD-2-Clause
/*
 * names N — C++ names for the demangler and -f: a namespace, a class with
 * an overloaded method, a template, a std::vector, a clone-prone static.
 * Built with g++ and clang++ at -O0 and -O2 (build.sh).
 *
 * main calls, N times each: ns::Foo::bar(int), ns::Foo::bar(double),
 * ns::twice<int>(int), ns::twice<long>(long), and pushes into a
 * std::vector<int> (std::vector<int>::push_back). Prints "sum=S" and the
 * last line "calls: bar_int=N bar_double=N twice_int=N twice_long=N".
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
} // namespace ns

int main(int argc, char **argv)
{
	long n, s = 0;
	ns::Foo f;
	std::vector<int> v;

	if (argc != 2 || (n = atol(argv[1])) < 0) {
		fprintf(stderr, "usage: names N\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		s += f.bar((int)i);
		s += f.bar((double)i);
		s += ns::twice<int>((int)i);
		s += ns::twice<long>(i);
		v.push_back((int)i);
	}
	printf("sum=%ld size=%zu\n", s, v.size());
	printf("calls: bar_int=%ld bar_double=%ld twice_int=%ld twice_long=%ld\n", n, n, n, n);
	return 0;
}
