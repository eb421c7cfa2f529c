// SPDX-License-Identifier: BSD-2-Clause
/*
 * letgo N — a C++ thread that cabbpf lets go of while it is blocked in a
 * system call inside a traced frame, and that throws and catches as soon
 * as it wakes. Built by build.sh with g++ and clang++ at -O0 and -O2
 * (letgo-gxx-O0, ..., letgo-clangxx-O2).
 *
 * Prints "ready <pid>" and waits for SIGUSR2 (blocked; taken by
 * sigwaitinfo in main, which was entered before any trace). Then serve()
 * (entered during the trace: a return address to give back) prints
 * "waiting" and blocks in sigwaitinfo for SIGUSR1. Woken, it calls
 * thrower(i) N times inside a try block in serve; thrower throws i, serve
 * catches it (a catch with serve's own frame above it: the guard would
 * give that frame its return probe back), prints "caught C" (C = N), and
 * returns; main prints "done" and exits 0. Usage errors exit 2.
 * Exact counts once SIGUSR2 came: serve 1; thrower N (the return probes
 * are gone by then if cabbpf let go first).
 */
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#if defined(__clang__)
#define TRACED __attribute__((noinline))
#else
#define TRACED __attribute__((noinline, noipa))
#endif

extern "C" TRACED void thrower(int i)
{
	throw i;
}

extern "C" TRACED int serve(int n)
{
	sigset_t one;
	int caught = 0;

	printf("waiting\n");
	fflush(stdout);
	sigemptyset(&one);
	sigaddset(&one, SIGUSR1);
	if (sigwaitinfo(&one, nullptr) < 0) {
		printf("sigwaitinfo: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		try {
			thrower(i);
		} catch (int) {
			caught++;
		}
	}
	printf("caught %d\n", caught);
	return 0;
}

int main(int argc, char **argv)
{
	sigset_t set;
	char *end;
	long n;
	int r;

	if (argc != 2 || (n = strtol(argv[1], &end, 10)) < 0 || *end || n > 1000000) {
		fprintf(stderr, "usage: letgo N\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, nullptr);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	sigdelset(&set, SIGUSR1);
	sigwaitinfo(&set, nullptr);
	r = serve((int)n);
	printf("done\n");
	return r;
}
