// SPDX-License-Identifier: BSD-2-Clause
/*
 * zerocopy [-w] — the system calls that move data between two fds inside
 * the kernel (sendfile, splice, copy_file_range) and vmsplice, in exactly
 * known amounts, each inside a known function, for the I/O tests
 * (tests/test_io_integration.c). -w as in iotarget: "ready <pid>\n" on
 * stdout, then wait for SIGUSR1 before the work; otherwise it works at once.
 * Nothing else is written; exit 0, or 1 with a message if a call moves
 * another amount than below.
 *
 * A two-sided call counts on both sides (include/cabbpf_event.h): its input
 * side ("<", direction "in") on the source fd, its output side (">",
 * "out") on the destination, each with the bytes moved.
 * The work (syscall side / fd kind: calls, bytes):
 *   main -> fill        write/file:           25 calls, 100000 bytes
 *                                             (24 x 4096 + 1696)
 *   main -> send_file   sendfile< file:        1 call,   10000 bytes
 *                       sendfile> file:        1 call,   10000 bytes
 *   main -> copy_range  copy_file_range< file: 1 call,   20000 bytes
 *                       copy_file_range> file: 1 call,   20000 bytes
 *   main -> splice_io   splice< file:          1 call,    3000 bytes (file -> pipe)
 *                       splice> pipe:          1 call,    3000 bytes
 *                       splice< pipe:          1 call,    3000 bytes (pipe -> file)
 *                       splice> file:          1 call,    3000 bytes
 *   main -> vmsplice_io vmsplice> pipe:        1 call,    1000 bytes (700 + 300
 *                                             iov, into the write end)
 *                       read/pipe:             1 call,    1000 bytes
 *                       write/pipe:            1 call,     500 bytes
 *                       vmsplice< pipe:        1 call,     500 bytes (from the
 *                                             read end)
 * Per function, in / out (calls, bytes):
 *   fill 0 / 25 100000; send_file 1 10000 / 1 10000; copy_range 1 20000 /
 *   1 20000; splice_io 2 6000 / 2 6000; vmsplice_io 2 1500 / 2 1500;
 *   main 6 37500 / 31 137500.
 * The scratch files are made with mkstemp in $TMPDIR (default /tmp) and
 * unlinked at once.
 */
#define _GNU_SOURCE /* splice, vmsplice, copy_file_range; precedes every #include */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

#define SIZE 100000
#define CHUNK 4096

static char buf[CHUNK];

static void die(const char *what)
{
	perror(what);
	_exit(1);
}

/* Exactly want bytes moved, or die. Inlined (like scratch): the traced
 * functions' entries stay the six of the work at -O0 too. */
static inline __attribute__((always_inline)) void check(ssize_t got, ssize_t want, const char *what)
{
	if (got != want) {
		fprintf(stderr, "%s: %zd bytes, want %zd\n", what, got, want);
		_exit(1);
	}
}

static inline __attribute__((always_inline)) int scratch(const char *tmp)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/zerocopy.XXXXXX", tmp);
	fd = mkstemp(path);
	if (fd < 0)
		die("mkstemp");
	unlink(path);
	return fd;
}

TRACED void fill(int fd)
{
	size_t left = SIZE;

	memset(buf, 'z', sizeof(buf));
	while (left) {
		size_t n = left < CHUNK ? left : CHUNK;

		check(write(fd, buf, n), (ssize_t)n, "write");
		left -= n;
	}
}

TRACED void send_file(int src, int dst)
{
	off_t off = 0;

	check(sendfile(dst, src, &off, 10000), 10000, "sendfile");
}

TRACED void copy_range(int src, int dst)
{
	loff_t in = 0, out = 0;

	check(copy_file_range(src, &in, dst, &out, 20000, 0), 20000, "copy_file_range");
}

TRACED void splice_io(int src, int dst)
{
	loff_t in = 0, out = 0;
	int p[2];

	if (pipe(p))
		die("pipe");
	check(splice(src, &in, p[1], NULL, 3000, 0), 3000, "splice file -> pipe");
	check(splice(p[0], NULL, dst, &out, 3000, 0), 3000, "splice pipe -> file");
	close(p[0]);
	close(p[1]);
}

TRACED void vmsplice_io(void)
{
	static char a[700], b[300];
	struct iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};
	int p[2];

	if (pipe(p))
		die("pipe");
	check(vmsplice(p[1], iov, 2, 0), 1000, "vmsplice into the write end");
	check(read(p[0], buf, 1000), 1000, "read pipe");
	check(write(p[1], buf, 500), 500, "write pipe");
	iov[0].iov_len = 500;
	check(vmsplice(p[0], iov, 1, 0), 500, "vmsplice from the read end");
	close(p[0]);
	close(p[1]);
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char line[64];
	int src, dst;

	if (argc > 2 || (argc == 2 && strcmp(argv[1], "-w"))) {
		fprintf(stderr, "usage: zerocopy [-w]\n");
		return 2;
	}
	if (argc == 2) {
		sigset_t set;
		int sig, n;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		n = snprintf(line, sizeof(line), "ready %d\n", (int)getpid());
		if (write(1, line, (size_t)n) != n)
			return 1;
		if (sigwait(&set, &sig))
			return 1;
	}
	src = scratch(tmp);
	dst = scratch(tmp);
	fill(src);
	BARRIER();
	send_file(src, dst);
	BARRIER();
	copy_range(src, dst);
	BARRIER();
	splice_io(src, dst);
	BARRIER();
	vmsplice_io();
	BARRIER();
	close(src);
	close(dst);
	return 0;
}
