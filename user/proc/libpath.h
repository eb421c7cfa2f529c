/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/libpath — the directories in which the target's dynamic loader would
 * look for a library it opens by name (dlopen("libx.so"), DT_NEEDED), so a
 * library the target has not mapped yet can be found before it is loaded.
 *
 * Order (the first directory holding the library wins, as in ld.so):
 *   1. DT_RPATH of the executable, only when it has no DT_RUNPATH;
 *   2. LD_LIBRARY_PATH of the target's environment (/proc/PID/environ);
 *   3. DT_RUNPATH of the executable;
 *      ($ORIGIN and ${ORIGIN} in 1-3 become the executable's directory;
 *      relative entries are taken from the target's working directory)
 *   4. the directories listed in /etc/ld.so.conf and the files it
 *      includes (glob patterns, recursively);
 *   5. the directories of the files the target has mapped (/proc/PID/maps);
 *   6. the executable's own directory;
 *   7. the standard library directories.
 * Every directory is a path as the target sees it; the files are read
 * inside /proc/PID/root (a container's or chroot's own files). Duplicates
 * are dropped (the first place counts).
 *
 * A command launched by cabbpf is held (stopped) BEFORE its exec: its
 * /proc/PID/exe and maps are still cabbpf's own. Such a process (a stopped
 * child of this process running this process's executable) is detected:
 * its maps are not used, and its executable is the one given by the caller
 * (without one, steps 1, 3 and 6 are left out). Its environment is the one
 * exec will pass on, so step 2 holds. A process that has exec'd names its
 * own executable (/proc/PID/exe, right inside a container too).
 *
 * Threads: the loader's main thread (libelf's set-up is done once,
 * race-free, but a struct libpath must not be shared while being built).
 */
#ifndef USER_LIBPATH_H
#define USER_LIBPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum libpath_src {
	LIBPATH_RPATH,
	LIBPATH_LD_LIBRARY_PATH,
	LIBPATH_RUNPATH,
	LIBPATH_LDSOCONF,
	LIBPATH_MAPPED,
	LIBPATH_EXE_DIR,
	LIBPATH_STANDARD,
	LIBPATH__MAX,
};

struct libpath {
	char **dirs;		   /* absolute, as the target sees them, in search order */
	enum libpath_src *src;	   /* where each directory came from */
	size_t n, cap;
	char root[64];		   /* "/proc/PID/root", or "" for pid <= 0 */
	char *exe;		   /* the executable, as this process opens it; NULL: unknown */
	bool exe_unknown;	   /* no executable known: no RPATH, RUNPATH, $ORIGIN */
	bool pre_exec;		   /* held before exec: maps not used */
};

/*
 * Builds the search path of process pid (pid <= 0: this machine's files
 * only, steps 4, 6 and 7). exe is the file the target will run, as this
 * process can open it: used only for a process held before exec (see
 * above) or pid <= 0, else /proc/PID/exe counts; NULL: not known. Unreadable sources (environment,
 * ELF, config files) are skipped, never fatal. Returns 0 and *out (free
 * with libpath__free), or -ENOMEM, -EINVAL.
 * Threads: the loader's main thread.
 */
int libpath__build(pid_t pid, const char *exe, struct libpath **out);

/*
 * Writes, into buf (always NUL-terminated when len > 0), where p looks:
 * "LD_LIBRARY_PATH /a:/b; DT_RUNPATH /c; ...", truncated with "..." when
 * it does not fit. Returns buf. p may be NULL ("nowhere").
 * Threads: any, while p is not modified.
 */
const char *libpath__describe(const struct libpath *p, char *buf, size_t len);

/*
 * Expands one search-path entry: $ORIGIN and ${ORIGIN} become origin (the
 * executable's directory), a relative entry is made absolute against cwd,
 * an empty one is cwd (as ld.so does for LD_LIBRARY_PATH). Writes the
 * result into out. Returns 0, -ENOENT (needs origin or cwd, which is NULL),
 * -ENAMETOOLONG, -EINVAL.
 * Threads: any (no shared state).
 */
int libpath__expand(const char *entry, size_t n, const char *origin, const char *cwd, char *out,
		    size_t len);

/* Name of a source for messages ("LD_LIBRARY_PATH", ...). Static string. */
const char *libpath__src_name(enum libpath_src s);

/*
 * The names of the libraries the ELF file at path links (DT_NEEDED, in its
 * order), then its program interpreter (PT_INTERP: ld.so, mapped by the
 * kernel, never in DT_NEEDED) when it has one. Returns 0 and *names (free
 * with libpath__free_names; NULL and *n = 0 when none: a static program, a
 * file that cannot be read or is not ELF), or -ENOMEM, -EINVAL.
 * Threads: any.
 */
int libpath__needed(const char *path, char ***names, size_t *n);

/* Frees a list from libpath__needed; NULL is fine. Threads: any. */
void libpath__free_names(char **names, size_t n);

/* Frees p; NULL is fine. Threads: the thread that owns p. */
void libpath__free(struct libpath *p);

#endif /* USER_LIBPATH_H */
