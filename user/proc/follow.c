// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "user/proc/follow.h"

bool follow__passes_through(const char *path)
{
	/* shells, and the wrappers that set something up and exec their
	 * command (none of these forks it: timeout and sudo would) */
	static const char *const names[] = {
		"sh",	  "bash",    "dash",   "zsh",	  "ksh",     "ksh93",	"mksh",
		"ash",	  "yash",    "posh",   "busybox", "env",     "nice",	"nohup",
		"stdbuf", "taskset", "ionice", "chrt",	  "numactl", "setarch",
	};
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(base, names[i]))
			return true;
	return false;
}

static int exe_of(pid_t pid, char *exe, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, len - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n == len - 1)
		return -ENAMETOOLONG;
	exe[n] = 0;
	return 0;
}

static bool stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* The child's next wait status into *st. Once *stop is set (cabbpf is
 * told to stop: Ctrl-C), the child gets that signal, as a traced command
 * would, and SIGKILL if it has not ended 2 s later. Returns 0 or -errno. */
static int next_status(pid_t pid, volatile sig_atomic_t *stop, int *forwarded, int *st)
{
	const struct timespec ms = {0, 1000000};
	int i = 0;

	for (;;) {
		pid_t w = waitpid(pid, st, __WALL | (*forwarded ? WNOHANG : 0));

		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (stop && *stop && !*forwarded) {
			*forwarded = *stop;
			kill(pid, *stop);
		} else if (*forwarded && ++i == 2000) {
			kill(pid, SIGKILL);
		}
		if (*forwarded)
			nanosleep(&ms, NULL);
	}
}

int follow__exec(pid_t pid, bool first, volatile sig_atomic_t *stop, char *exe, size_t len,
		 unsigned *nexec, int *status)
{
	bool leaving = false; /* our SIGSTOP is on its way: the hold at the end */
	int st, sig, ev, err = 0, forwarded = 0;
	long req, data;

	*nexec = 0;
	if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)(long)PTRACE_O_TRACEEXEC))
		return -errno;
	/* End target__spawn's hold. The seize turned that group-stop into a
	 * trap (reported below as PTRACE_EVENT_STOP); the SIGCONT makes the
	 * PTRACE_LISTEN there wake it, through a notification trap. */
	if (kill(pid, SIGCONT)) {
		err = -errno;
		goto fail;
	}
	for (;;) {
		if ((err = next_status(pid, stop, &forwarded, &st)))
			goto fail;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			*status = st;
			return forwarded ? -EINTR : -ECHILD;
		}
		if (!WIFSTOPPED(st))
			continue;
		sig = WSTOPSIG(st);
		ev = st >> 16;
		req = PTRACE_CONT;
		data = 0;
		if (ev == PTRACE_EVENT_EXEC) {
			/* The new image is in, none of its instructions ran. */
			(*nexec)++;
			if ((err = exe_of(pid, exe, len)))
				goto fail;
			if ((first || !follow__passes_through(exe)) && !forwarded) {
				/* Stop it right there: the SIGSTOP is delivered
				 * before it returns to user mode. */
				if (kill(pid, SIGSTOP)) {
					err = -errno;
					goto fail;
				}
				leaving = true;
			}
		} else if (ev == PTRACE_EVENT_STOP) {
			/* A group-stop stays one until a SIGCONT (as untraced);
			 * any other trap (a notification) just goes on. */
			if (stop_signal(sig))
				req = PTRACE_LISTEN;
		} else if (leaving && sig == SIGSTOP) {
			/* Ours: detach with it, so it enters the group-stop
			 * untraced, and see it stopped, as target__spawn
			 * does. */
			if (ptrace(PTRACE_DETACH, pid, NULL, (void *)(long)SIGSTOP)) {
				err = -errno;
				goto fail;
			}
			while (waitpid(pid, &st, WUNTRACED) != pid)
				if (errno != EINTR)
					return -errno;
			if (WIFEXITED(st) || WIFSIGNALED(st)) {
				*status = st;
				return -ECHILD;
			}
			return WIFSTOPPED(st) ? 0 : -EIO;
		} else {
			/* A signal for it: delivered, as without cabbpf. */
			data = sig;
		}
		/* ESRCH: killed meanwhile; its exit is the next wait's. */
		if (ptrace(req, pid, NULL, (void *)data) && errno != ESRCH) {
			err = -errno;
			goto fail;
		}
	}
fail:
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return err;
}
