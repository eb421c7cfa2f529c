// SPDX-License-Identifier: BSD-2-Clause
/*
 * rethrow MODE N — exceptions caught and thrown again, then a call from
 * the frame that catches last: the shapes in which a tracer that pairs
 * entries and returns by stack slot takes a frame the rethrow unwound for
 * the caller of the next call (issue 44). The C shapes (longjmp, context
 * switches) are in nonlocal.c; exc.cc has the first-throw shapes.
 *
 * Built with g++ and clang++ at -O0 and -O2; every function below has C
 * linkage (plain names for -f), is noinline (noipa with g++), and each call
 * is followed by a barrier, as in exc.cc.
 *
 * MODE (i = 0..N-1, N >= 0):
 *   once     main calls top(i) -> mid(i) -> leaf(i); leaf throws when
 *            i % 3 == 0; top catches, and rethrows (`throw;`) when i is
 *            odd; main catches the rethrown ones and calls after(i) in its
 *            handler.
 *   three    main calls foo(i) -> foo1 -> foo2 -> foo3, which throws; foo2
 *            and foo1 each catch and rethrow; foo catches and then calls
 *            make(i).
 *   ptr      main calls keep(i) -> leaf(0) (throws); keep catches and
 *            stores std::current_exception(); main then calls again(),
 *            which std::rethrow_exception()s it; main catches and calls
 *            after(i).
 *   inner    main calls top2(i) -> mid(i) -> leaf(0); top2's handler calls
 *            translate(i), which throws a new exception from inside the
 *            handler; main catches it and calls after(i).
 *
 * Exact edges (caller -> callee: count), besides <root> -> main: 1:
 *   once:  main -> top N, top -> mid N, mid -> leaf N,
 *          main -> after R (R: the i < N with i % 3 == 0 and i odd)
 *   three: main -> foo N, foo -> foo1 N, foo1 -> foo2 N, foo2 -> foo3 N,
 *          foo -> make N
 *   ptr:   main -> keep N, keep -> leaf N, main -> again N, main -> after N
 *   inner: main -> top2 N, top2 -> mid N, mid -> leaf N,
 *          top2 -> translate N, main -> after N
 * Output: "mode=MODE n=N sum=S" (S a checksum), exit status 0; usage
 * errors exit 2.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>

#if defined(__clang__)
#define TRACED __attribute__((noinline))
#else
#define TRACED __attribute__((noinline, noipa))
#endif
#define BARRIER() __asm__ volatile("" ::: "memory")

static volatile long sum;
static std::exception_ptr kept;

extern "C" {

TRACED long leaf(long i)
{
	BARRIER();
	if (i % 3 == 0)
		throw std::runtime_error("leaf");
	return i;
}

TRACED long mid(long i)
{
	long v = leaf(i);
	BARRIER();
	return v + 1;
}

TRACED long top(long i)
{
	try {
		long v = mid(i);
		BARRIER();
		return v;
	} catch (const std::runtime_error &) {
		if (i % 2)
			throw;
		return -1;
	}
}

TRACED void after(long i)
{
	sum += i;
	BARRIER();
}

TRACED void foo3(long i)
{
	BARRIER();
	throw std::runtime_error(i % 2 ? "odd" : "even");
}

TRACED void foo2(long i)
{
	try {
		foo3(i);
		BARRIER();
	} catch (...) {
		sum += 1;
		throw;
	}
}

TRACED void foo1(long i)
{
	try {
		foo2(i);
		BARRIER();
	} catch (const std::exception &) {
		sum += 2;
		throw;
	}
}

TRACED long make(long i)
{
	BARRIER();
	return 2 * i;
}

TRACED void foo(long i)
{
	try {
		foo1(i);
		BARRIER();
	} catch (const std::exception &) {
		sum += 3;
	}
	sum += make(i);
	BARRIER();
}

TRACED void keep(long i)
{
	try {
		leaf(0);
		BARRIER();
	} catch (...) {
		sum += i;
		kept = std::current_exception();
	}
}

TRACED void again(void)
{
	BARRIER();
	std::rethrow_exception(kept);
}

TRACED void translate(long i)
{
	BARRIER();
	throw std::logic_error(i % 2 ? "odd" : "even");
}

TRACED long top2(long i)
{
	try {
		long v = mid(3 * i);
		BARRIER();
		return v;
	} catch (const std::runtime_error &) {
		translate(i);
		BARRIER();
	}
	return 0;
}

} /* extern "C" */

int main(int argc, char **argv)
{
	char *end;
	long n, i;

	if (argc != 3) {
		std::fprintf(stderr, "usage: rethrow once|three|ptr|inner N\n");
		return 2;
	}
	n = std::strtol(argv[2], &end, 10);
	if (*end || n < 0) {
		std::fprintf(stderr, "rethrow: N must be >= 0\n");
		return 2;
	}
	if (!std::strcmp(argv[1], "once")) {
		for (i = 0; i < n; i++) {
			try {
				sum += top(i);
			} catch (const std::runtime_error &) {
				after(i);
			}
		}
	} else if (!std::strcmp(argv[1], "three")) {
		for (i = 0; i < n; i++)
			foo(i);
	} else if (!std::strcmp(argv[1], "ptr")) {
		for (i = 0; i < n; i++) {
			keep(i);
			try {
				again();
			} catch (const std::runtime_error &) {
				after(i);
			}
			kept = nullptr;
		}
	} else if (!std::strcmp(argv[1], "inner")) {
		for (i = 0; i < n; i++) {
			try {
				sum += top2(i);
			} catch (const std::logic_error &) {
				after(i);
			}
		}
	} else {
		std::fprintf(stderr, "rethrow: unknown mode %s\n", argv[1]);
		return 2;
	}
	std::printf("mode=%s n=%ld sum=%ld\n", argv[1], n, (long)sum);
	return 0;
}
