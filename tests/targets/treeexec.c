// SPDX-License-Identifier: BSD-2-Clause
/*
 * treeexec MODE [N] — a process tree that execs a short-lived program, the
 * shapes of uftrace's fork/exec tests (t010_forkexec, t011_vforkexec,
 * t130_thread_exec, t191_posix_spawn), written here.
 *
 *   abc          the exec'd program: main -> a -> b -> c, prints "abc",
 *                exit status 3 (so a test sees whose status it is);
 *   fork N       main calls launch() N times; each forks a child that
 *                execs this program with "abc"; launch waits for it;
 *   vfork N      the same with vfork;
 *   spawn N      the same with posix_spawn;
 *   thread       main starts a thread that runs launch(), which execs
 *                "abc" from that (non-leader) thread; main waits in
 *                pthread_join until the exec replaces the process, whose
 *                end is abc's (status 3).
 * fork, vfork and spawn print "children=N statuses=3" and exit 0.
 *
 * Exact (tests/expected/targets.txt): for fork|vfork|spawn N, main 1 + N
 * (the launcher's and each abc's), launch N, a, b, c N each; edges
 * main -> launch N, main -> a N, a -> b N, b -> c N. For thread: main 2,
 * launch 1 (<root> -> launch: a thread's start), a, b, c 1.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRACED __attribute__((noinline, noipa))

extern char **environ;
static volatile unsigned long sink;
static const char *mode;
static char self[4096];

TRACED void c(void)
{
	sink++;
	__asm__ volatile("" ::: "memory");
}

TRACED void b(void)
{
	c();
	sink++;
}

TRACED void a(void)
{
	b();
	sink++;
}

/* One child running "abc"; returns its exit status (-1: failed). */
TRACED int launch(void)
{
	char *argv[] = {self, "abc", NULL};
	pid_t pid = -1;
	int st;

	if (!strcmp(mode, "spawn")) {
		if (posix_spawn(&pid, self, NULL, NULL, argv, environ))
			return -1;
	} else if (!strcmp(mode, "vfork")) {
		pid = vfork();
		if (pid == 0) {
			execv(self, argv);
			_exit(127);
		}
	} else if (!strcmp(mode, "thread")) {
		execv(self, argv); /* from a non-leader thread */
		return -1;
	} else {
		pid = fork();
		if (pid == 0) {
			execv(self, argv);
			_exit(127);
		}
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void *thread_main(void *arg)
{
	(void)arg;
	launch();
	return NULL;
}

int main(int argc, char **argv)
{
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int i, n = argc > 2 ? atoi(argv[2]) : 1, same = 0;
	pthread_t th;

	if (argc < 2 || len <= 0) {
		fprintf(stderr, "usage: treeexec abc|fork N|vfork N|spawn N|thread\n");
		return 2;
	}
	self[len] = 0;
	mode = argv[1];
	if (!strcmp(mode, "abc")) {
		a();
		printf("abc\n");
		return 3;
	}
	fflush(stdout);
	if (!strcmp(mode, "thread")) {
		if (pthread_create(&th, NULL, thread_main, NULL))
			return 1;
		pthread_join(th, NULL); /* the exec ends this image first */
		return 1;
	}
	for (i = 0; i < n; i++)
		same += launch() == 3;
	printf("children=%d statuses=%d\n", n, same == n ? 3 : -1);
	return 0;
}
