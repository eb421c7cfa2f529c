// SPDX-License-Identifier: BSD-2-Clause
/*
 * blocker MODE [FIFO]: a thread blocked, inside a traced function, in a
 * call that a ptrace stop would end with EINTR (signal(7)), when cabbpf
 * lets go of it.
 *
 * Prints "ready <pid>" on stdout, then waits for SIGUSR2 (blocked, taken
 * by sigwaitinfo in main: main was entered before any trace). Then
 * wait_in() prints "waiting" and blocks:
 *   epoll    epoll_wait on FIFO (opened read-write, so it never sees
 *            end-of-file) until a byte can be read;
 *   sigwait  sigwaitinfo for SIGUSR1 (blocked: no handler runs).
 * It prints what the call returned ("epoll_wait 1", "sigwaitinfo 10") or
 * its error ("epoll_wait: Interrupted system call"), and exits 0 when the
 * call succeeded, 1 when it failed. Usage error: 2.
 * Exact: wait_in 1 (once SIGUSR2 came).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define TRACED __attribute__((noinline, noipa))

TRACED int wait_in(const char *mode, const char *fifo)
{
	struct epoll_event ev = {.events = EPOLLIN}, got;
	sigset_t one;
	int r, fd, ep;

	printf("waiting\n");
	fflush(stdout);
	if (!strcmp(mode, "sigwait")) {
		sigemptyset(&one);
		sigaddset(&one, SIGUSR1);
		r = sigwaitinfo(&one, NULL);
		if (r < 0) {
			printf("sigwaitinfo: %s\n", strerror(errno));
			return 1;
		}
		printf("sigwaitinfo %d\n", r);
		return 0;
	}
	fd = open(fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (fd < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
		printf("setup: %s\n", strerror(errno));
		return 1;
	}
	r = epoll_wait(ep, &got, 1, -1);
	if (r < 0) {
		printf("epoll_wait: %s\n", strerror(errno));
		return 1;
	}
	printf("epoll_wait %d\n", r);
	return 0;
}

int main(int argc, char **argv)
{
	sigset_t set;

	if (argc < 2 || (strcmp(argv[1], "epoll") && strcmp(argv[1], "sigwait")) ||
	    (!strcmp(argv[1], "epoll") && argc != 3)) {
		fprintf(stderr, "usage: blocker epoll FIFO | blocker sigwait\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	sigdelset(&set, SIGUSR1);
	sigwaitinfo(&set, NULL);
	return wait_in(argv[1], argc > 2 ? argv[2] : NULL);
}
