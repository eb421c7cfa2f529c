// SPDX-License-Identifier: BSD-2-Clause
/*
 * churn SECONDS WORKERS READS: a machine busy starting short processes.
 * WORKERS loops each start one process after another for SECONDS; every
 * process execs this program again ("churn -c READS"), reads 64 bytes from
 * /dev/zero READS times and exits. At the end it prints
 *   "processes=<n> per_s=<rate> reads=<n * READS>"
 * so a tracer's count of the children's reads can be checked exactly.
 * Exec, not only fork: a real machine's short processes (cat, sh, git)
 * are new images, each a new process key for system-wide --io.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int child(long reads)
{
	char buf[64];
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return 1;
	for (long i = 0; i < reads; i++)
		if (read(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 1;
	close(fd);
	return 0;
}

/* One worker: start processes one after another until the deadline; returns
 * how many ended with status 0 (the parent sums them), or -1. */
static long worker(double until, const char *self, const char *reads)
{
	char *argv[] = {"churn", "-c", (char *)reads, NULL};
	long n = 0;

	while (now() < until) {
		pid_t p = fork();
		int st;

		if (p < 0)
			return -1;
		if (p == 0) {
			execv(self, argv);
			_exit(127);
		}
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
			return -1;
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	long workers, total = 0;
	char self[4096];
	double secs, t0;
	ssize_t len;
	int fds[2];

	if (argc == 3 && !strcmp(argv[1], "-c"))
		return child(atol(argv[2]));
	if (argc != 4 || (secs = atof(argv[1])) <= 0 || (workers = atol(argv[2])) <= 0 ||
	    atol(argv[3]) < 0) {
		fprintf(stderr, "usage: churn SECONDS WORKERS READS\n");
		return 2;
	}
	/* The file's own path, not /proc/self/exe: the children's comm is then
	 * this file's name, as the report shows it. */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0 || pipe(fds))
		return 1;
	self[len] = 0;
	t0 = now();
	for (long w = 0; w < workers; w++) {
		pid_t p = fork();

		if (p < 0)
			return 1;
		if (p == 0) {
			long n = worker(t0 + secs, self, argv[3]);

			if (write(fds[1], &n, sizeof(n)) != sizeof(n))
				_exit(1);
			_exit(n < 0);
		}
	}
	close(fds[1]);
	for (long w = 0; w < workers; w++) {
		long n;

		if (read(fds[0], &n, sizeof(n)) != sizeof(n) || n < 0) {
			fprintf(stderr, "churn: a worker failed\n");
			return 1;
		}
		total += n;
	}
	while (wait(NULL) > 0)
		;
	printf("processes=%ld per_s=%.0f reads=%ld\n", total, (double)total / (now() - t0),
	       total * atol(argv[3]));
	return 0;
}
