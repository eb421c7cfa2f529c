// SPDX-License-Identifier: BSD-2-Clause
/*
 * iotarget [-w] — I/O system calls in exactly known amounts, each inside a
 * known function, for the I/O tests (tests/test_io_integration.c).
 *
 * Without -w it does the work at once and exits 0, writing nothing on
 * stdout or stderr. With -w it first writes "ready <pid>\n" on stdout (one
 * write(2), before any tracer is expected to be attached), blocks until
 * SIGUSR1 arrives (sigwaitinfo: no handler, no I/O), then does the same work
 * and exits 0 (nothing is written after the work).
 *
 * The work, with SIZE = 100000, CHUNK = 4096, N = 100, LEN = 64
 * (syscall / fd kind: calls, bytes):
 *   main -> write_file   write/file:    25 calls, 100000 bytes (24 x 4096 + 1696)
 *   main -> read_file    read/file:     26 calls, 100000 bytes (24 x 4096, 1696,
 *                                       then 0 at EOF: 2 short calls)
 *   main -> vector_io    preadv/file:    1 call,   2000 bytes (2 x 1000 iov)
 *                        pread64/file:   1 call,    200 bytes (500 asked at
 *                                       offset 99800: 1 short call)
 *                        pwrite64/file:  1 call,     10 bytes (at offset 100000)
 *   main -> roundtrip -> pipe_io   write/pipe:  100 calls, 6400 bytes
 *                                  read/pipe:   100 calls, 6400 bytes
 *                     -> sock_io   (AF_UNIX stream socketpair)
 *                                  sendto/socket:   100 calls, 6400 bytes (send)
 *                                  recvfrom/socket: 100 calls, 6400 bytes (recv)
 *                                  writev/socket:     1 call,   128 bytes (2 x 64)
 *                                  readv/socket:      1 call,   128 bytes
 *                                  sendmsg/socket:    1 call,    64 bytes
 *                                  recvmsg/socket:    1 call,    64 bytes
 *                     -> dgram_io  (AF_UNIX datagram socketpair)
 *                                  sendmmsg/socket:   1 call,   192 bytes (3 x 64)
 *                                  recvmmsg/socket:   1 call,   192 bytes
 *                     -> msg_io    (SysV message queue, no fd)
 *                                  msgsnd/msgqueue:   1 call,   100 bytes
 *                                  msgrcv/msgqueue:   1 call,   100 bytes
 * Inclusive per function (descendants included), in / out:
 *   main:      232 calls 115484 bytes / 230 calls 113294 bytes
 *   roundtrip: 204 calls  13284 bytes / 204 calls  13284 bytes (self: 0 / 0)
 *   write_file 0 / 25 calls 100000; read_file 26 calls 100000 / 0;
 *   vector_io 2 calls 2200 / 1 call 10; pipe_io 100 calls 6400 / 100 calls
 *   6400; sock_io 102 calls 6592 / 102 calls 6592; dgram_io 1 call 192 /
 *   1 call 192; msg_io 1 call 100 / 1 call 100.
 * Every I/O call above succeeds; a failure exits 1 with a message.
 * The scratch file is made with mkstemp in $TMPDIR (default /tmp) and
 * removed before exit (open/unlink/close are not I/O calls).
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define TRACED __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

#define SIZE 100000
#define CHUNK 4096
#define N 100
#define LEN 64

static char buf[CHUNK];

static void die(const char *what)
{
	perror(what);
	_exit(1);
}

TRACED void write_file(int fd)
{
	size_t left = SIZE;

	memset(buf, 'x', sizeof(buf));
	while (left) {
		size_t n = left < CHUNK ? left : CHUNK;

		if (write(fd, buf, n) != (ssize_t)n)
			die("write");
		left -= n;
	}
}

TRACED void read_file(int fd)
{
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET))
		die("lseek");
	while ((n = read(fd, buf, CHUNK)) > 0)
		;
	if (n < 0)
		die("read");
}

TRACED void vector_io(int fd)
{
	static char a[1000], b[1000];
	struct iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};

	if (preadv(fd, iov, 2, 0) != 2000)
		die("preadv");
	if (pread(fd, buf, 500, SIZE - 200) != 200)
		die("pread");
	if (pwrite(fd, buf, 10, SIZE) != 10)
		die("pwrite");
}

TRACED void pipe_io(void)
{
	int p[2], i;

	if (pipe(p))
		die("pipe");
	for (i = 0; i < N; i++)
		if (write(p[1], buf, LEN) != LEN)
			die("write pipe");
	for (i = 0; i < N; i++)
		if (read(p[0], buf, LEN) != LEN)
			die("read pipe");
	close(p[0]);
	close(p[1]);
}

TRACED void sock_io(void)
{
	char a[LEN], b[LEN];
	struct iovec iov[2] = {{a, LEN}, {b, LEN}};
	struct msghdr m;
	int sv[2], i;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("socketpair");
	for (i = 0; i < N; i++)
		if (send(sv[0], buf, LEN, 0) != LEN)
			die("send");
	for (i = 0; i < N; i++)
		if (recv(sv[1], buf, LEN, 0) != LEN)
			die("recv");
	if (writev(sv[0], iov, 2) != 2 * LEN)
		die("writev");
	if (readv(sv[1], iov, 2) != 2 * LEN)
		die("readv");
	memset(&m, 0, sizeof(m));
	m.msg_iov = iov;
	m.msg_iovlen = 1;
	if (sendmsg(sv[0], &m, 0) != LEN)
		die("sendmsg");
	if (recvmsg(sv[1], &m, 0) != LEN)
		die("recvmsg");
	close(sv[0]);
	close(sv[1]);
}

TRACED void dgram_io(void)
{
	char data[3][LEN];
	struct iovec iov[3];
	struct mmsghdr mm[3];
	int sv[2], i;

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv))
		die("socketpair");
	memset(mm, 0, sizeof(mm));
	for (i = 0; i < 3; i++) {
		iov[i].iov_base = data[i];
		iov[i].iov_len = LEN;
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	if (sendmmsg(sv[0], mm, 3, 0) != 3)
		die("sendmmsg");
	if (recvmmsg(sv[1], mm, 3, 0, NULL) != 3)
		die("recvmmsg");
	close(sv[0]);
	close(sv[1]);
}

TRACED void msg_io(void)
{
	struct {
		long mtype;
		char mtext[100];
	} msg = {1, {0}};
	int q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);

	if (q < 0)
		die("msgget");
	if (msgsnd(q, &msg, sizeof(msg.mtext), 0))
		die("msgsnd");
	if (msgrcv(q, &msg, sizeof(msg.mtext), 0, 0) != (ssize_t)sizeof(msg.mtext))
		die("msgrcv");
	msgctl(q, IPC_RMID, NULL);
}

TRACED void roundtrip(void)
{
	pipe_io();
	BARRIER();
	sock_io();
	BARRIER();
	dgram_io();
	BARRIER();
	msg_io();
	BARRIER();
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096], line[64];
	int fd;

	if (argc > 2 || (argc == 2 && strcmp(argv[1], "-w"))) {
		fprintf(stderr, "usage: iotarget [-w]\n");
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
	snprintf(path, sizeof(path), "%s/iotarget.XXXXXX", tmp);
	fd = mkstemp(path);
	if (fd < 0)
		die("mkstemp");
	unlink(path);
	write_file(fd);
	BARRIER();
	read_file(fd);
	BARRIER();
	vector_io(fd);
	BARRIER();
	roundtrip();
	BARRIER();
	close(fd);
	return 0;
}
