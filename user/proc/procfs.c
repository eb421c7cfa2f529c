// SPDX-License-Identifier: BSD-2-Clause
/* Small reads of /proc files (see procfs.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "user/proc/procfs.h"

long procfs__status_field(pid_t pid, const char *name)
{
	char path[64], line[256];
	size_t n = strlen(name);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (v < 0 && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

bool procfs__sig_pending(pid_t tid, int sig)
{
	unsigned long long bit = 1ULL << (sig - 1), mask;
	char path[64], line[256];
	bool pending = false;
	FILE *f;

	if (sig < 1 || sig > 64)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!pending && fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigPnd:", 7) || !strncmp(line, "ShdPnd:", 7)) {
			mask = strtoull(line + 7, NULL, 16);
			pending = (mask & bit) != 0;
		}
	fclose(f);
	return pending;
}

/* The start of the file at path (at most len - 1 bytes), NUL-ended, into
 * buf. Returns false when it cannot be opened. */
static bool read_head(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return true;
}

bool procfs__gone(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!read_head(path, buf, sizeof(buf)))
		return true;
	/* "pid (comm) S ...": comm may hold spaces and parentheses. */
	p = strrchr(buf, ')');
	return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

long long procfs__start_ticks(pid_t pid)
{
	char path[64], buf[512], *p;
	unsigned long long start;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!read_head(path, buf, sizeof(buf)))
		return -1;
	/* Field 22, counted from after "(comm)" (field 2), whose name may
	 * hold spaces and parentheses. */
	p = strrchr(buf, ')');
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1)
		return -1;
	return (long long)start;
}

unsigned long long procfs__now_ticks(void)
{
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK);

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (unsigned long long)ts.tv_sec * (unsigned long long)hz +
	       (unsigned long long)ts.tv_nsec / (1000000000ull / (unsigned long long)hz);
}

long procfs__syscall(pid_t pid, pid_t tid)
{
	char path[64], buf[64], *end;
	long nr;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	if (!read_head(path, buf, sizeof(buf)))
		return -1;
	/* "NR ARG1 ... ARG6 SP PC", "-1 SP PC" (blocked, not in a call) or
	 * "running". */
	nr = strtol(buf, &end, 10);
	return end == buf || nr < 0 ? -1 : nr;
}
