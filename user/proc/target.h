/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The traced process: one we launch (`cabbpf -- cmd args`) or one that runs
 * already (`cabbpf -p PID`). A launched command is forked first and held
 * before exec until the probes are in place, so its very first call is seen.
 * All functions: loader main thread only.
 */
#ifndef USER_TARGET_H
#define USER_TARGET_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct target {
	pid_t pid;
	bool spawned; /* we launched it (and must reap it) */
	bool exited;
	int status;	    /* wait status once exited and spawned */
	int pidfd;	    /* readable once the process has exited (-1 if unsupported) */
	bool held;	    /* spawned and stopped before exec (SIGSTOP) */
	int err_fd;	    /* spawned: read end of the exec-error pipe */
	char exe[PATH_MAX]; /* the main executable, as the loader must open it */
	/* spawned a #! script: the script, which is what runs (exe is then
	 * its interpreter, the program whose functions are traced); "" when
	 * the command is itself a program */
	char script[PATH_MAX];
	char comm[64];	    /* command name for reports */
	/* --follow-exec: the execs followed to reach exe (held before its
	 * first instruction, its exec done); 0: not followed */
	unsigned followed;
	/*
	 * Set while another thread is the process's ptrace tracer (the guard,
	 * user/trace/guard.h): waiting for it is that thread's job, since a wait
	 * here would take the tracer's stops. Returns 1 with *status once it
	 * was reaped, 0 while it runs, -1 to wait here after all.
	 */
	int (*reaped)(void *ctx, int *status);
	void *reaped_ctx;
};

/*
 * Keep what the process was given and cabbpf changes for itself: every
 * signal's disposition, the signal mask, the open-files limit. A command
 * cabbpf starts gets them back before its exec, so that it runs as it
 * would have untraced (a SIGPIPE cabbpf ignores stays its own). Call it
 * first in main, before any signal is handled or thread started; main's
 * thread only.
 */
void target__save_inherited(void);

/* Fork argv (PATH searched as execvp does) and hold it before exec. A #!
 * script is run as given and its interpreter (followed through
 * "/usr/bin/env NAME" and nested scripts, as the kernel does) becomes t->exe,
 * the program traced; said on stderr. follow_exec (--follow-exec,
 * user/proc/follow.h): the command runs through its execs of shells and
 * env, and the first other program it starts is t->exe, held before its
 * first instruction (t->followed: how many execs); stop (or NULL):
 * cabbpf's stop flag, which ends the following (and the command). Returns
 * 0, or (logged: "cannot run ...") -ENOENT (no such command), -EACCES
 * (not executable), -ECHILD (following: it ended first; t->exited,
 * t->status), -EINTR (stop was set while following; the same), or
 * -errno. */
int target__spawn(struct target *t, char *const argv[], bool follow_exec,
		  volatile sig_atomic_t *stop);

/* --follow-forks: a child target__spawn holds before its exec execs it
 * and is held again before its program's first instruction (its exec
 * done: /proc/PID/exe names the program, the state --follow-exec leaves),
 * t->exe that program. cmd: the command, for messages; stop as
 * target__spawn's. Returns 0, or -ECHILD / -EINTR / -errno (logged) as
 * target__spawn with follow_exec. */
int target__exec_held(struct target *t, const char *cmd, volatile sig_atomic_t *stop);

/* Let a spawned child exec. Returns 0, or -errno (logged) if exec failed
 * (the child has then exited with 127 and was reaped). */
int target__start(struct target *t);

/* Take an existing process. Returns 0, or (logged, saying why: no such
 * process, a zombie, a kernel thread, exited meanwhile) -ESRCH, -EINVAL
 * (pid <= 0), -EACCES or -errno. */
int target__attach(struct target *t, pid_t pid);

/* Whether pid may be a target at all, checked before anything else is
 * done (the kernel's check, the probe-cost calibration): 0, or (logged:
 * "cannot trace pid ...: it is cabbpf itself" / "... an ancestor of
 * cabbpf") -EDEADLK or -ELOOP. what: "trace" or "watch", for the
 * message; ancestors_ok: an ancestor is allowed (--io stops nothing and
 * probes nothing in it; its own pid still counts cabbpf's output). Any
 * thread. */
int target__check_pid(pid_t pid, const char *what, bool ancestors_ok);

/* Non-blocking: true once the process has exited (a spawned one is reaped).
 * Returns false while it runs. */
bool target__poll_exit(struct target *t);

/* Non-blocking, reaps nothing: true once the process has exited, also as
 * a zombie not reaped yet (by us or by the guard's tracer thread); false
 * while it runs. For a launched one, target__poll_exit gives the status. */
bool target__gone(const struct target *t);

/* The status a shell gives for a launched command that ended: its exit
 * code, or 128 + N when signal N killed it; 0 when not launched or not
 * ended. */
int target__exit_code(const struct target *t);

/* Wait up to timeout_ms for the process to exit. Returns true if it did. */
bool target__wait(struct target *t, int timeout_ms);

/* Kill a spawned child that has not exec'd or must not outlive a failed
 * set-up, and reap it. No-op for -p targets. */
void target__abort(struct target *t);

/* Close descriptors; does not signal the process. NULL is fine. */
void target__close(struct target *t);

#endif /* USER_TARGET_H */
