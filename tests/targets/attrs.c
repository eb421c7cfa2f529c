// SPDX-License-Identifier: BSD-2-Clause
/*
 * attrs — prints what a process is given by whoever starts it, so that a
 * run under cabbpf can be compared with an untraced one (issue 44): the
 * signal dispositions and mask (SigBlk, SigIgn of /proc/self/status), every
 * rlimit, the umask, the environment (a checksum and the count), the open
 * file descriptors (each with what it points to), and whether its process
 * group and session are its parent's ("_", which a shell sets to the
 * command it runs, is left out). One traced function, work(), called
 * once. Exit status 0.
 */
#define _GNU_SOURCE /* glibc extensions; must precede every #include */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRACED __attribute__((noinline, noipa))

extern char **environ;

TRACED int work(void)
{
	return 1;
}

static void status_lines(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigBlk:", 7) || !strncmp(line, "SigIgn:", 7))
			fputs(line, stdout);
	if (f)
		fclose(f);
}

static void limits(void)
{
	static const struct {
		int r;
		const char *name;
	} rs[] = {
		{RLIMIT_AS, "as"},
		{RLIMIT_CORE, "core"},
		{RLIMIT_CPU, "cpu"},
		{RLIMIT_DATA, "data"},
		{RLIMIT_FSIZE, "fsize"},
		{RLIMIT_LOCKS, "locks"},
		{RLIMIT_MEMLOCK, "memlock"},
		{RLIMIT_MSGQUEUE, "msgqueue"},
		{RLIMIT_NICE, "nice"},
		{RLIMIT_NOFILE, "nofile"},
		{RLIMIT_NPROC, "nproc"},
		{RLIMIT_RSS, "rss"},
		{RLIMIT_RTPRIO, "rtprio"},
		{RLIMIT_RTTIME, "rttime"},
		{RLIMIT_SIGPENDING, "sigpending"},
		{RLIMIT_STACK, "stack"},
	};
	struct rlimit rl;
	size_t i;

	for (i = 0; i < sizeof(rs) / sizeof(rs[0]); i++)
		if (!getrlimit(rs[i].r, &rl))
			printf("rlimit %s %llu %llu\n", rs[i].name, (unsigned long long)rl.rlim_cur,
			       (unsigned long long)rl.rlim_max);
}

static void fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int self = d ? dirfd(d) : -1;

	while (d && (de = readdir(d))) {
		char path[300], to[512];
		ssize_t n;

		if (de->d_name[0] == '.' || atoi(de->d_name) == self)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		n = readlink(path, to, sizeof(to) - 1);
		to[n > 0 ? n : 0] = 0;
		/* pipes and sockets differ by inode from run to run, and the
		 * standard streams by the files a test captures them in */
		if (!strncmp(to, "pipe:", 5) || !strncmp(to, "socket:", 7))
			to[strcspn(to, ":")] = 0;
		else if (atoi(de->d_name) <= 2 && to[0] == '/')
			snprintf(to, sizeof(to), "(a path)");
		printf("fd %s %s\n", de->d_name, to);
	}
	if (d)
		closedir(d);
}

int main(void)
{
	unsigned long sum = 0, n = 0;
	mode_t m = umask(0);
	char **e;

	umask(m);
	status_lines();
	limits();
	printf("umask %03o\n", (unsigned)m);
	for (e = environ; *e; e++) {
		const char *c;

		if (!strncmp(*e, "_=", 2))
			continue; /* a shell's: the command it ran (cabbpf, or this) */
		n++;
		for (c = *e; *c; c++)
			sum = sum * 131 + (unsigned char)*c;
	}
	printf("environ %lu %lx\n", n, sum);
	fds();
	printf("pgrp_is_parents %d sid_is_parents %d\n", getpgrp() == getpgid(getppid()),
	       getsid(0) == getsid(getppid()));
	return work() - 1;
}
