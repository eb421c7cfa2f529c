// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "user/trace/watchdog.h"

/* How long after cabbpf's death a stop may still appear: a thread woken
 * from its ptrace stop by the tracer's exit takes the SIGSTOP when it next
 * runs, which a loaded machine may put off. */
#define RESCUE_MS 2000

/* Whether a thread of pid is stopped (state T): its task directory. */
static int any_stopped(pid_t pid)
{
	char path[320], buf[512];
	struct dirent *de;
	DIR *d;
	int stopped = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1; /* gone */
	while (!stopped && (de = readdir(d))) {
		char *p;
		ssize_t n;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		/* "pid (comm) S ...": comm may hold ')' itself, the last one ends it. */
		p = strrchr(buf, ')');
		stopped = p && p[1] == ' ' && p[2] == 'T';
	}
	closedir(d);
	return stopped;
}

/* The watcher's life: wait for cabbpf's end, then rescue if it was not
 * clean. Never returns. */
static void watch(int rfd, pid_t pid)
{
	struct timespec tick = {0, 2000000};
	char c;
	ssize_t n;
	int i, r;

	do
		n = read(rfd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		_exit(0); /* cabbpf let go cleanly */
	for (i = 0; i < RESCUE_MS / 2; i++) {
		r = any_stopped(pid);
		if (r < 0)
			break;
		if (r)
			kill(pid, SIGCONT);
		nanosleep(&tick, NULL);
	}
	_exit(0);
}

int watchdog__start(pid_t pid)
{
	int p[2], st, err;
	pid_t c;

	if (pipe2(p, O_CLOEXEC)) {
		err = -errno;
		log_err("--lossless watcher: pipe: %s", strerror(-err));
		return err;
	}
	c = fork();
	if (c < 0) {
		err = -errno;
		close(p[0]);
		close(p[1]);
		log_err("--lossless watcher: fork: %s", strerror(-err));
		return err;
	}
	if (!c) {
		/* Not our child (reparented when the middle one exits: the
		 * guard's tracer reaps every child of cabbpf), in its own
		 * session (a signal to cabbpf's group does not reach it), with
		 * no file of cabbpf's but the pipe (a link fd kept here would
		 * keep probes in the target after cabbpf's death). */
		if (fork())
			_exit(0);
		setsid();
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		if (dup2(p[0], 3) < 0)
			_exit(1);
		/* Nobody waits for output from it (a reader of cabbpf's
		 * stdout must see its end when cabbpf ends). */
		{
			int nul = open("/dev/null", O_RDWR);

			if (nul >= 0) {
				dup2(nul, 0);
				dup2(nul, 1);
				dup2(nul, 2);
			}
		}
		close_range(4, ~0U, 0);
		watch(3, pid);
	}
	close(p[0]);
	while (waitpid(c, &st, 0) < 0 && errno == EINTR)
		;
	return p[1];
}

void watchdog__done(int fd)
{
	char c = 'c';

	if (fd < 0)
		return;
	if (write(fd, &c, 1) != 1)
		log_debug("--lossless watcher: %s", strerror(errno));
	close(fd);
}
