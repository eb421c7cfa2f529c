// SPDX-License-Identifier: BSD-2-Clause
/*
 * readloop N SIZE [FILE]: read(2) SIZE bytes N times from FILE (default
 * /dev/zero) as fast as possible, then print the loop's own time per call,
 * so start-up and attach time are not counted:
 *   "ns_per_call=<x> calls=<N> pid=<pid>"
 * A regular FILE is read with pread64 at offset 0 (always in the page cache)
 * so every call moves SIZE bytes.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *path = argc > 3 ? argv[3] : "/dev/zero";
	struct timespec a, b;
	char buf[65536];
	struct stat st;
	long n, size, i;
	int fd, reg;

	if (argc < 3 || (n = atol(argv[1])) <= 0 || (size = atol(argv[2])) <= 0 ||
	    size > (long)sizeof(buf)) {
		fprintf(stderr, "usage: readloop N SIZE [FILE]\n");
		return 2;
	}
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		perror(path);
		return 1;
	}
	reg = S_ISREG(st.st_mode);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		ssize_t r = reg ? pread(fd, buf, (size_t)size, 0) : read(fd, buf, (size_t)size);

		if (r != size) {
			perror("read");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("ns_per_call=%.1f calls=%ld pid=%d\n",
	       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n, n,
	       (int)getpid());
	return 0;
}
