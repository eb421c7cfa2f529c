// SPDX-License-Identifier: BSD-2-Clause
/*
 * Small reads of /proc (user/proc/procfs.c): fields of /proc/PID/status of
 * this process, of a thread of it, and of a child it traces, and what a
 * missing field or a process that is gone gives.
 */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user/proc/procfs.h"

static pid_t thread_tid;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int state; /* 1: tid written; 2: the test is done with it */

static void *thread_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	thread_tid = (pid_t)syscall(SYS_gettid);
	state = 1;
	pthread_cond_broadcast(&cv);
	while (state != 2)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

START_TEST(own_fields)
{
	pthread_t th;

	ck_assert_int_eq(procfs__status_field(getpid(), "Tgid"), getpid());
	ck_assert_int_eq(procfs__status_field(getpid(), "PPid"), getppid());
	ck_assert_int_eq(procfs__status_field(getpid(), "NoSuchField"), -1);
	/* a prefix of a field is not that field ("Tgi" of "Tgid") */
	ck_assert_int_eq(procfs__status_field(getpid(), "Tgi"), -1);
	ck_assert_int_eq(pthread_create(&th, NULL, thread_main, NULL), 0);
	pthread_mutex_lock(&mu);
	while (state != 1)
		pthread_cond_wait(&cv, &mu);
	/* a thread's id: its thread group is this process */
	ck_assert_int_ne(thread_tid, getpid());
	ck_assert_int_eq(procfs__status_field(thread_tid, "Tgid"), getpid());
	state = 2;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(th, NULL);
}
END_TEST

START_TEST(tracer_and_gone)
{
	pid_t c = fork();
	int st;

	ck_assert_int_ge(c, 0);
	if (c == 0) {
		pause();
		_exit(0);
	}
	ck_assert_int_eq(procfs__status_field(c, "TracerPid"), 0);
	ck_assert_int_eq(ptrace(PTRACE_SEIZE, c, NULL, NULL), 0);
	ck_assert_int_eq(procfs__status_field(c, "TracerPid"), getpid());
	ck_assert(!procfs__gone(c));
	kill(c, SIGKILL);
	/* A zombie until reaped: gone already, for --io. */
	ck_assert_int_eq(waitid(P_PID, (id_t)c, NULL, WEXITED | WNOWAIT), 0);
	ck_assert(procfs__gone(c));
	ck_assert_int_eq(waitpid(c, &st, 0), c);
	ck_assert_int_eq(procfs__status_field(c, "Tgid"), -1); /* reaped: gone */
	ck_assert(procfs__gone(c));
	ck_assert(!procfs__gone(getpid()));
}
END_TEST

/* The call a thread is blocked in: a child in pause() (within 10 s); a
 * reaped child, a spinning one: -1. */
START_TEST(blocked_syscall)
{
	pid_t c = fork();
	long nr = -1;
	int st, i, fds[2];
	char b;

	ck_assert_int_ge(c, 0);
	if (c == 0) {
		pause();
		_exit(0);
	}
	for (i = 0; i < 1000 && nr != SYS_pause; i++) {
		nr = procfs__syscall(c, c);
		usleep(10000);
	}
	ck_assert_int_eq(nr, SYS_pause);
	kill(c, SIGKILL);
	ck_assert_int_eq(waitpid(c, &st, 0), c);
	ck_assert_int_eq(procfs__syscall(c, c), -1);
	/* Spinning in user code, on a CPU ("running") or not ("-1 SP PC"),
	 * once it has told so (before it first runs, a child shows its
	 * parent's fork call). */
	ck_assert_int_eq(pipe(fds), 0);
	c = fork();
	ck_assert_int_ge(c, 0);
	if (c == 0) {
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			__asm__ volatile("" ::: "memory");
	}
	ck_assert_int_eq(read(fds[0], &b, 1), 1);
	close(fds[0]);
	close(fds[1]);
	/* Its write's exit is behind it once it spins: wait for that. */
	for (i = 0; i < 1000 && procfs__syscall(c, c) != -1; i++)
		usleep(10000);
	for (i = 0; i < 100; i++)
		ck_assert_int_eq(procfs__syscall(c, c), -1);
	kill(c, SIGKILL);
	ck_assert_int_eq(waitpid(c, &st, 0), c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("procfs");
	TCase *tc = tcase_create("procfs");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, own_fields);
	tcase_add_test(tc, tracer_and_gone);
	tcase_add_test(tc, blocked_syscall);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
