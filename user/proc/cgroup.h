/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The cgroup filter (--cgroup PATH, --container ID), shared by function
 * tracing and the --io mode: which cgroup v2 directory, pointing a BPF
 * program's filter map at it, and moving a launched command into it.
 * Every function logs its own failure. Main thread only.
 */
#ifndef USER_PROC_CGROUP_H
#define USER_PROC_CGROUP_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Open the cgroup v2 directory path for filtering. Returns the fd (>= 0) or
 * -errno after logging a clear message: -ENOENT (no such directory),
 * -ENOTDIR, -EMEDIUMTYPE (not on a cgroup v2 file system).
 */
int cgroup__open(const char *path);

/*
 * The cgroup filter asked for by --cgroup (cgroup, a path) or --container
 * (container, an id or unique prefix); both NULL: no filter. Sets *fd to an
 * open cgroup v2 directory (the caller closes it) and writes its path into
 * path, or sets *fd = -1 when there is no filter. Returns 0, or -errno after
 * logging a clear message (no such cgroup, not cgroup v2, unknown or
 * ambiguous container id).
 */
int cgroup__select(const char *cgroup, const char *container, int *fd, char *path, size_t len);

/*
 * Point a BPF program's cgroup filter (a one-entry cgroup array map, fd
 * cgfilter_fd, e.g. bpf/trace.bpf.c's "cgfilter") at cgroup directory cgfd.
 * Returns 0 or -errno (logged).
 */
int cgroup__set_filter(int cgfilter_fd, int cgfd);

/*
 * Move process pid (a command cabbpf launched and still holds before its
 * exec) into the cgroup v2 directory path, so `--cgroup PATH -- CMD` traces
 * CMD inside it. Returns 0 or -errno (logged).
 */
int cgroup__enter(const char *path, pid_t pid);

/*
 * -p PID with --cgroup / --container: is pid inside cgroup directory cgpath
 * (or a descendant)? Returns 0 if so (or if it cannot tell: the process is
 * gone, no cgroup v2 line), -ESRCH after logging where pid really is (its
 * cgroup, and its container if it is in one). container: --container as
 * given, for the message, or NULL for --cgroup.
 */
int cgroup__check_pid(const char *cgpath, pid_t pid, const char *container);

/*
 * Whole-container tracing: every process in cgroup directory cgpath and
 * its descendants (their cgroup.procs), sorted, each once. Returns 0 with
 * *out (malloc'd, the caller frees; NULL when none) and *n, -ENOENT when
 * cgpath is gone (the container ended), or -errno. Not logged: the caller
 * polls it. Any thread.
 */
int cgroup__pids(const char *cgpath, pid_t **out, size_t *n);

/*
 * -p PID --follow-forks: the cgroup v2 directory of pid, into path (len
 * bytes), when it holds pid and its descendants only (a service's or a
 * container's cgroup): traced as a whole cgroup, it is pid's process tree.
 * Returns 0, or -errno after logging why not: -EBUSY when other processes
 * share it (named, with what to do instead), -ESRCH when pid is gone,
 * -ENOENT without cgroup v2. Main thread (before tracing).
 */
int cgroup__tree_of(pid_t pid, char *path, size_t len);

/*
 * --follow-forks: a new cgroup v2 directory for the launched command,
 * "cabbpf-follow-PID" under cabbpf's own cgroup (PID: cabbpf's), its path
 * into path (len bytes). Returns 0 or -errno (logged).
 */
int cgroup__make_own(char *path, size_t len);

/* Remove the cgroup cgroup__make_own made: processes still in it are
 * moved to its parent first. A failure is warned about; NULL or "" does
 * nothing. */
void cgroup__remove_own(const char *path);

/* Mount point of cgroup v2 (from /proc/self/mountinfo) into buf. Returns 0,
 * -ENOENT (not mounted) or -ENAMETOOLONG. */
int cgroup__v2_root(char *buf, size_t len);

#endif /* USER_PROC_CGROUP_H */
