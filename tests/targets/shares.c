// SPDX-License-Identifier: BSD-2-Clause
/*
 * shares [SCALE] - functions of known CPU cost, for the sampled times
 * (--times sampled): some called rarely with large bodies, some millions
 * of times with tiny ones, where a traced wall time is mostly probes.
 *
 *   big()   20 x SCALE calls, each a 20,000,000-iteration spin
 *   mid()   20,000 x SCALE calls, each a 5,000-iteration spin
 *   tiny()  400,000 x SCALE calls, each a 100-iteration spin
 *   outer() 200 x SCALE calls, each calling tiny() 1,000 times and
 *           spinning 1,000,000 iterations of its own
 *   sys()   100 x SCALE calls, each reading 40 MiB of /dev/zero: its time
 *           is the kernel's, in its own system calls (read)
 *   touch() 10 x SCALE calls, each mapping 32 MiB and writing a byte to
 *           each of its pages: its time is the kernel's, in the page
 *           faults that first write makes (and the mmap and munmap)
 *
 * main runs each phase in turn and measures it with the thread's CPU clock,
 * so an untraced run prints what each function costs (its self time, the
 * loop's own few instructions included; user and system time):
 *   "big_ns=N mid_ns=N tiny_ns=N outer_self_ns=N sys_ns=N touch_ns=N"
 * outer_self_ns is outer's phase less tiny's calls in it (tiny's per-call
 * cost from its own phase). Traced, the same figures hold the probes'
 * cost: compare with an untraced run's. Exit 0; usage error 2.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i;
}

__attribute__((noinline)) void big(void)
{
	spin(20000000);
}

__attribute__((noinline)) void mid(void)
{
	spin(5000);
}

__attribute__((noinline)) void tiny(void)
{
	spin(100);
}

__attribute__((noinline)) void outer(void)
{
	for (int i = 0; i < 1000; i++)
		tiny();
	spin(1000000);
}

static int zero_fd = -1;
static char zbuf[1 << 20];

/* 40 MiB out of /dev/zero: the kernel's clearing of the buffer, in read.
 * Returns 0, or -1 when a read failed. */
__attribute__((noinline)) int sys(void)
{
	for (int i = 0; i < 40; i++)
		if (read(zero_fd, zbuf, sizeof(zbuf)) != (ssize_t)sizeof(zbuf))
			return -1;
	return 0;
}

/* 32 MiB mapped, each page written once (a page fault each), unmapped.
 * Returns 0, or -1 when the mapping failed. */
__attribute__((noinline)) int touch(void)
{
	size_t n = 32u << 20;
	volatile char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
	munmap((void *)p, n);
	return 0;
}

static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long scale = argc > 1 ? atol(argv[1]) : 1;
	long long t0, t_big, t_mid, t_tiny, t_outer, t_sys, t_touch;
	long i;

	if (argc > 2 || scale < 1) {
		fprintf(stderr, "usage: shares [SCALE]\n");
		return 2;
	}
	t0 = cpu_ns();
	for (i = 0; i < 20 * scale; i++)
		big();
	t_big = cpu_ns() - t0;
	t0 = cpu_ns();
	for (i = 0; i < 20000 * scale; i++)
		mid();
	t_mid = cpu_ns() - t0;
	t0 = cpu_ns();
	for (i = 0; i < 400000 * scale; i++)
		tiny();
	t_tiny = cpu_ns() - t0;
	t0 = cpu_ns();
	for (i = 0; i < 200 * scale; i++)
		outer();
	t_outer = cpu_ns() - t0;
	zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (zero_fd < 0) {
		perror("shares: /dev/zero");
		return 1;
	}
	t0 = cpu_ns();
	for (i = 0; i < 100 * scale; i++)
		if (sys()) {
			perror("shares: read /dev/zero");
			return 1;
		}
	t_sys = cpu_ns() - t0;
	close(zero_fd);
	t0 = cpu_ns();
	for (i = 0; i < 10 * scale; i++)
		if (touch()) {
			perror("shares: mmap");
			return 1;
		}
	t_touch = cpu_ns() - t0;
	printf("big_ns=%lld mid_ns=%lld tiny_ns=%lld outer_self_ns=%lld sys_ns=%lld touch_ns=%lld\n",
	       t_big, t_mid, t_tiny, t_outer - t_tiny / 2 /* outer made half as many tiny calls */,
	       t_sys, t_touch);
	return 0;
}
