// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "user/proc/target.h"
#include "user/proc/follow.h"
#include "user/elf/syms.h"
#include "common/log.h"

/* The words for an error of spawn or attach. */
static const char *target_error(int err)
{
	switch (err) {
	case -ENOENT:
		return "no such file or command";
	case -EACCES:
		return "permission denied";
	case -ESRCH:
		return "no such process";
	case -EDEADLK:
		return "it is cabbpf itself";
	case -ELOOP:
		return "it is an ancestor of cabbpf (its shell, sudo...): cabbpf would stop or "
		       "trace "
		       "the process that waits on it; run cabbpf from another shell";
	default:
		return strerror(-err);
	}
}

/* What /proc/PID/status says of key ("Tgid", "PPid"); -1 unknown. */
static pid_t status_pid(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t n = strlen(key);
	pid_t v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = (pid_t)strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/*
 * -EDEADLK if pid is cabbpf itself (or one of its threads), -ELOOP if an
 * ancestor of it other than init (the shell, sudo, the terminal that reads
 * cabbpf's own output): cabbpf's probes would trace its own work, and its
 * guard or --lossless would stop a process cabbpf's output waits on.
 * 0 otherwise.
 */
static int not_ours(pid_t pid)
{
	pid_t tgid = status_pid(pid, "Tgid"), p = getppid();
	int depth;

	if (pid == getpid() || tgid == getpid())
		return -EDEADLK;
	if (tgid > 0)
		pid = tgid;
	for (depth = 0; p > 1 && depth < 4096; depth++) {
		if (p == pid)
			return -ELOOP;
		p = status_pid(p, "PPid");
	}
	return 0;
}

/* Why pid cannot be traced, for target__attach's err: a kernel thread and
 * a zombie have no executable, and look alike to it. */
static const char *pid_error(pid_t pid, int err)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return err == -ESRCH ? "no such process" : target_error(err);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')'); /* "pid (comm) S ...": comm may hold ')' */
	if (p && p[1] == ' ' && p[2] == 'Z')
		return "a zombie: it has exited, and its parent has not reaped it yet";
	if (p && p[1] == ' ' && p[2] == 'X')
		return "it exited while cabbpf was attaching";
	/* flags (field 9) & PF_KTHREAD (0x00200000) */
	if (p) {
		unsigned long flags = 0;
		int field = 3;

		for (p += 2; *p && field < 9; p++)
			if (*p == ' ')
				field++;
		if (field == 9 && sscanf(p, "%lu", &flags) == 1 && (flags & 0x00200000))
			return "a kernel thread: it runs no program to trace";
	}
	if (err == -ESRCH)
		return "it exited while cabbpf was attaching";
	return target_error(err);
}

static int pidfd_open_compat(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/* execvp's search, done in the parent so the loader knows which file to
 * probe and can report a missing command before forking. */
static int find_in_path(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	const char *p, *end;
	int err = -ENOENT;

	if (strchr(cmd, '/')) {
		if (access(cmd, F_OK))
			return -errno;
		if (access(cmd, X_OK))
			return -EACCES;
		if (!realpath(cmd, out))
			return -errno;
		return 0;
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; p && *p; p = *end ? end + 1 : end) {
		struct stat sb;

		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		if ((size_t)snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - p), p, cmd) >=
		    sizeof(buf))
			continue;
		if (stat(buf, &sb) || !S_ISREG(sb.st_mode))
			continue;
		if (access(buf, X_OK)) {
			err = -EACCES;
			continue;
		}
		if (!realpath(buf, out))
			return -errno;
		(void)len;
		return 0;
	}
	return err;
}

/*
 * If path is a #! script, write its interpreter's real path into out (the
 * kernel's rules: the first word after #!, up to 4 levels of scripts; for
 * "/usr/bin/env NAME" the NAME found in PATH, as env does). Returns 1 when
 * path is a script, 0 when it is not, or -errno (an interpreter that
 * cannot be found).
 */
static int interpreter_of(const char *path, char *out, size_t len)
{
	char cur[PATH_MAX], line[PATH_MAX], *p, *word, *rest;
	int depth, script = 0, err;
	FILE *f;

	snprintf(cur, sizeof(cur), "%s", path);
	for (depth = 0; depth < 5; depth++) {
		f = fopen(cur, "re");
		if (!f)
			return script ? -errno : 0;
		p = fgets(line, sizeof(line), f);
		fclose(f);
		if (!p || line[0] != '#' || line[1] != '!')
			break;
		script = 1;
		p = line + 2;
		p += strspn(p, " \t");
		word = p;
		p += strcspn(p, " \t\n");
		rest = *p ? p + 1 : p;
		*p = 0;
		if (!*word)
			return -ENOEXEC;
		if (!strcmp(word, "/usr/bin/env") || !strcmp(word, "/bin/env")) {
			/* env [-S] NAME ...: the program env would run */
			rest += strspn(rest, " \t");
			if (!strncmp(rest, "-S", 2))
				rest += 2 + strspn(rest + 2, " \t");
			rest[strcspn(rest, " \t\n")] = 0;
			if (!*rest)
				return -ENOEXEC;
			err = find_in_path(rest, cur, sizeof(cur));
		} else {
			err = realpath(word, cur) ? 0 : -errno;
		}
		if (err)
			return err;
	}
	if (depth == 5)
		return -ELOOP;
	if (script && (size_t)snprintf(out, len, "%s", cur) >= len)
		return -ENAMETOOLONG;
	return script;
}

/* What the process was given (target__save_inherited): written once by
 * main's thread before any other exists, read by the forked child. */
static struct {
	bool saved;
	struct sigaction sa[NSIG];
	bool have[NSIG];
	sigset_t mask;
	struct rlimit nofile;
	bool have_nofile;
} inherited;

void target__save_inherited(void)
{
	int sig;

	for (sig = 1; sig < NSIG; sig++)
		inherited.have[sig] = sig != SIGKILL && sig != SIGSTOP &&
				      !sigaction(sig, NULL, &inherited.sa[sig]);
	sigprocmask(SIG_SETMASK, NULL, &inherited.mask);
	inherited.have_nofile = !getrlimit(RLIMIT_NOFILE, &inherited.nofile);
	inherited.saved = true;
}

/* In the child, before exec: the dispositions, mask and limit cabbpf was
 * given. A handler of cabbpf's would be reset by exec anyway; an ignored
 * signal (SIGPIPE) would stay ignored, and one the shell ignored (SIGINT
 * under nohup or `&`) would be lost: each gets its own back. */
static void restore_inherited(void)
{
	int sig;

	if (!inherited.saved)
		return;
	for (sig = 1; sig < NSIG; sig++)
		if (inherited.have[sig])
			sigaction(sig, &inherited.sa[sig], NULL);
	if (inherited.have_nofile)
		setrlimit(RLIMIT_NOFILE, &inherited.nofile);
	sigprocmask(SIG_SETMASK, &inherited.mask, NULL);
}

static int spawn(struct target *t, char *const argv[], bool follow)
{
	pid_t self;
	int ep[2] = {-1, -1};
	const char *base;
	int err, st;

	memset(t, 0, sizeof(*t));
	t->pidfd = t->err_fd = -1;
	err = find_in_path(argv[0], t->exe, sizeof(t->exe));
	if (err)
		return err;
	err = interpreter_of(t->exe, t->script, sizeof(t->script));
	if (err < 0)
		return err;
	if (err > 0) {
		/* run the script, trace the program that runs it */
		char interp[PATH_MAX];

		snprintf(interp, sizeof(interp), "%s", t->script);
		snprintf(t->script, sizeof(t->script), "%s", t->exe);
		snprintf(t->exe, sizeof(t->exe), "%s", interp);
		base = strrchr(t->exe, '/');
		base = base ? base + 1 : t->exe;
		if (!follow)
			log_info("%s is a script: tracing its interpreter, %s%s", t->script, t->exe,
				 follow__passes_through(t->exe)
					 ? " (a shell: if the script only starts another program, "
					   "--follow-exec traces that program)"
					 : "");
	}
	base = strrchr(argv[0], '/');
	snprintf(t->comm, sizeof(t->comm), "%s", base ? base + 1 : argv[0]);
	if (pipe2(ep, O_CLOEXEC))
		return -errno;
	self = getpid();
	t->pid = fork();
	if (t->pid < 0) {
		err = -errno;
		goto cleanup;
	}
	if (t->pid == 0) {
		/* Child: stop until the probes are in place. A stop makes no
		 * system call of the I/O families, so nothing of this
		 * hand-shake is ever attributed to the target. */
		int e;

		close(ep[0]);
		restore_inherited();
		/* Held, it dies with cabbpf (a SIGKILL during start-up) rather
		 * than stay stopped for ever, a command that never ran; let
		 * go, it is as it would be untraced (no death signal). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != self)
			_exit(127); /* cabbpf is gone already */
		raise(SIGSTOP);
		prctl(PR_SET_PDEATHSIG, 0);
		execv(t->script[0] ? t->script : t->exe, argv);
		e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(ep[1]);
	ep[1] = -1;
	t->err_fd = ep[0];
	t->spawned = true;
	t->pidfd = pidfd_open_compat(t->pid);
	/* Wait for the stop, so that exec cannot race the attach. */
	if (waitpid(t->pid, &st, WUNTRACED) != t->pid || !WIFSTOPPED(st)) {
		t->exited = true;
		t->status = st;
		return -ECHILD;
	}
	t->held = true;
	return 0;
cleanup:
	close(ep[0]);
	close(ep[1]);
	return err;
}

/* --follow-exec: from the hold before the command's exec to the hold
 * before its program's first instruction (user/proc/follow.h). Returns 0
 * or -errno (logged). */
static int follow(struct target *t, const char *cmd, bool first, volatile sig_atomic_t *stop)
{
	const char *opt = first ? "--follow-forks" : "--follow-exec";
	char exe[PATH_MAX];
	unsigned n = 0;
	int e = 0, st = 0, err;

	err = follow__exec(t->pid, first, stop, exe, sizeof(exe), &n, &st);
	if (err == -EINTR) {
		t->held = false;
		t->exited = true;
		t->status = st;
		log_err("%s: stopped before '%s' started a program%s: nothing was traced (it was "
			"sent the signal too)",
			opt, cmd, first ? "" : " other than a shell or a wrapper");
		return err;
	}
	if (err == -ECHILD) {
		t->held = false;
		t->exited = true;
		t->status = st;
		/* Its exec failed (the child said why), or it ended. */
		if (read(t->err_fd, &e, sizeof(e)) == (ssize_t)sizeof(e))
			log_err("cannot execute '%s': %s", cmd, strerror(e));
		else
			log_err("%s: '%s' ended (%s %d) without starting a program%s: there "
				"was nothing to trace",
				opt, cmd, WIFEXITED(st) ? "exit status" : "signal",
				WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
				first ? "" : " other than a shell or a wrapper (env, nice...)");
		return err;
	}
	if (err) {
		log_err("%s: cannot follow '%s' (pid %d) as its tracer: %s", opt, cmd, (int)t->pid,
			strerror(-err));
		/* untraced from here: it must not go on */
		target__abort(t);
		return err;
	}
	if (!first)
		log_info("%s started %s (after %u exec%s): tracing it from its first instruction",
			 cmd, exe, n, n == 1 ? "" : "s");
	snprintf(t->exe, sizeof(t->exe), "%s", exe);
	t->script[0] = 0;
	t->followed = n;
	return 0;
}

int target__spawn(struct target *t, char *const argv[], bool follow_exec,
		  volatile sig_atomic_t *stop)
{
	int err = spawn(t, argv, follow_exec);

	if (err) {
		log_err("cannot run '%s': %s", argv[0], target_error(err));
		return err;
	}
	return follow_exec ? follow(t, argv[0], false, stop) : 0;
}

int target__exec_held(struct target *t, const char *cmd, volatile sig_atomic_t *stop)
{
	return follow(t, cmd, true, stop);
}

static int start(struct target *t)
{
	int e = 0;
	ssize_t n;

	if (kill(t->pid, SIGCONT))
		return -errno;
	t->held = false;
	/* The exec-error pipe closes on a successful exec (O_CLOEXEC). */
	n = read(t->err_fd, &e, sizeof(e));
	close(t->err_fd);
	t->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		target__wait(t, 1000);
		return -e;
	}
	return 0;
}

int target__start(struct target *t)
{
	int err = start(t);

	if (err)
		log_err("cannot execute '%s': %s", t->exe, strerror(-err));
	return err;
}

int target__check_pid(pid_t pid, const char *what, bool ancestors_ok)
{
	int err = pid > 0 ? not_ours(pid) : 0;

	if (err == -ELOOP && ancestors_ok)
		err = 0;
	if (err)
		log_err("cannot %s pid %d: %s", what, (int)pid, target_error(err));
	return err;
}

static int attach(struct target *t, pid_t pid)
{
	char path[64], buf[64];
	FILE *f;
	int err;

	memset(t, 0, sizeof(*t));
	t->pidfd = t->err_fd = -1;
	if (pid <= 0)
		return -EINVAL;
	if (kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	err = not_ours(pid);
	if (err)
		return err;
	t->pid = pid;
	err = syms__resolve_exe(pid, t->exe, sizeof(t->exe));
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\n")] = 0;
			memcpy(t->comm, buf, sizeof(t->comm));
			t->comm[sizeof(t->comm) - 1] = 0;
		}
		fclose(f);
	}
	t->pidfd = pidfd_open_compat(pid);
	return 0;
}

int target__attach(struct target *t, pid_t pid)
{
	int err = attach(t, pid);

	if (err)
		log_err("cannot trace pid %d: %s", (int)pid, pid_error(pid, err));
	return err;
}

bool target__poll_exit(struct target *t)
{
	struct pollfd p;
	int st;

	if (t->exited)
		return true;
	if (t->spawned && t->reaped) {
		int r = t->reaped(t->reaped_ctx, &st);

		if (r == 1) {
			t->status = st;
			t->exited = true;
		}
		if (r >= 0)
			return t->exited;
	}
	if (t->spawned) {
		if (waitpid(t->pid, &st, WNOHANG) == t->pid) {
			t->status = st;
			t->exited = true;
		}
		return t->exited;
	}
	if (t->pidfd >= 0) {
		p.fd = t->pidfd;
		p.events = POLLIN;
		if (poll(&p, 1, 0) == 1)
			t->exited = true;
		return t->exited;
	}
	if (kill(t->pid, 0) && errno == ESRCH)
		t->exited = true;
	return t->exited;
}

bool target__gone(const struct target *t)
{
	struct pollfd p = {.fd = t->pidfd, .events = POLLIN};

	if (t->exited)
		return true;
	/* A pidfd is readable once the process has exited, a zombie too. */
	if (t->pidfd >= 0)
		return poll(&p, 1, 0) == 1;
	return kill(t->pid, 0) && errno == ESRCH;
}

int target__exit_code(const struct target *t)
{
	if (!t->spawned || !t->exited)
		return 0;
	if (WIFEXITED(t->status))
		return WEXITSTATUS(t->status);
	if (WIFSIGNALED(t->status))
		return 128 + WTERMSIG(t->status);
	return 0;
}

bool target__wait(struct target *t, int timeout_ms)
{
	struct timespec ts = {0, 1000000};
	int i;

	for (i = 0; i <= timeout_ms; i++) {
		if (target__poll_exit(t))
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

void target__abort(struct target *t)
{
	if (!t->spawned || t->exited)
		return;
	/* Held before exec or running: either way it must not go on. */
	kill(t->pid, SIGKILL);
	target__wait(t, 2000);
}

void target__close(struct target *t)
{
	if (!t)
		return;
	if (t->pidfd >= 0)
		close(t->pidfd);
	if (t->err_fd >= 0)
		close(t->err_fd);
	t->pidfd = t->err_fd = -1;
}
