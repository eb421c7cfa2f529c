/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * read_full(fd, buf, n): read exactly n bytes (from /dev/zero in the input
 * targets), or exit 1. Used by tests/targets/isp.c and classes.c.
 */
#ifndef TESTS_TARGETS_READ_FULL_H
#define TESTS_TARGETS_READ_FULL_H

#include <stdlib.h>
#include <unistd.h>

/* always inlined: at -O0 a function of its own would be one more for the
 * tests that trace every function */
static inline __attribute__((always_inline)) void read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);

		if (r <= 0)
			exit(1);
		got += (size_t)r;
	}
}

#endif /* TESTS_TARGETS_READ_FULL_H */
