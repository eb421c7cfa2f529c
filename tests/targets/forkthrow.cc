// SPDX-License-Identifier: BSD-2-Clause
/*
 * forkthrow N — a C++ program whose forked children throw, as a prefork
 * server's workers do. Built by build.sh with g++ and clang++ at -O0 and
 * -O2 (forkthrow-gxx-O0, ..., forkthrow-clangxx-O2).
 *
 * N times (N >= 0, i = 0..N-1), main calls spawn(i) inside a try block;
 * spawn forks. The child calls work(i, 100) (100 calls of step, whose
 * results it adds up), prints "child i: sum S", then calls fail(i), which
 * throws std::runtime_error: the exception leaves fail and spawn, both
 * traced, and main's catch in the child prints "child i: caught" and
 * exits with status 7. The parent waits for it and counts the children
 * that exited 7.
 *
 * A tracer's return probes are in the child too: the frames of spawn and
 * main the child inherits from the fork, and the breakpoints of the
 * parent's memory (every traced call in the child arms a return probe).
 * The unwinder in the child meets their trampolines.
 *
 * Exact counts, of the parent only (the children are not the target):
 * main 1; spawn N; work, step and fail 0.
 * Output: two lines per child (its own stdout, flushed before it exits),
 * then "children=N caught=C" and, as the LAST line, "calls: spawn=N" (the
 * parent's own counts); nothing on stderr; exit status 0; usage errors
 * exit 2. With FORK_WAIT in the environment it first prints "ready" and
 * waits for SIGUSR1 (blocked, no handler), so that a tracer of a whole
 * cgroup is in place before the first fork.
 */
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__clang__)
#define TRACED __attribute__((noinline))
#else
#define TRACED __attribute__((noinline, noipa))
#endif
#define BARRIER() __asm__ volatile("" ::: "memory")

static long n_spawn;

extern "C" {

TRACED long step(long x)
{
	BARRIER();
	return x * 3 + 1;
}

TRACED long work(long i, int n)
{
	long sum = 0;

	for (int k = 0; k < n; k++) {
		sum += step(i + k) % 7;
		BARRIER();
	}
	return sum;
}

TRACED void fail(long i)
{
	BARRIER();
	throw std::runtime_error("child " + std::to_string(i));
}

/* Returns the child's pid in the parent; in the child, never returns:
 * it throws. */
TRACED pid_t spawn(long i)
{
	n_spawn++;
	pid_t p = fork();

	if (p == 0) {
		long sum = work(i, 100);

		printf("child %ld: sum %ld\n", i, sum);
		fail(i);
	}
	BARRIER();
	return p;
}

} /* extern "C" */

int main(int argc, char **argv)
{
	long n, caught = 0;
	char *end;

	if (argc != 2 || (n = strtol(argv[1], &end, 10)) < 0 || *end) {
		fprintf(stderr, "usage: forkthrow N\n");
		return 2;
	}
	if (getenv("FORK_WAIT")) {
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("ready\n");
		fflush(stdout);
		if (sigwait(&set, &sig))
			return 1;
	}
	for (long i = 0; i < n; i++) {
		pid_t p;
		int st;

		fflush(stdout);
		try {
			p = spawn(i);
		} catch (const std::exception &e) {
			printf("%s: caught\n", e.what());
			fflush(stdout);
			_exit(7);
		}
		if (p < 0 || waitpid(p, &st, 0) != p)
			return 1;
		caught += WIFEXITED(st) && WEXITSTATUS(st) == 7;
	}
	printf("children=%ld caught=%ld\n", n, caught);
	printf("calls: spawn=%ld\n", n_spawn);
	return 0;
}
