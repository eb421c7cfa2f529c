/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common/outfile — every file cabbpf writes (--json, and later exports), as
 * root, safely:
 *   - checked before tracing starts (outfile__check), so a bad path never
 *     costs a trace;
 *   - written to a new temporary file in the same directory (mkstemp:
 *     O_CREAT|O_EXCL, never through a symlink) and renamed over the path,
 *     so a symlink planted at the path is replaced, not followed: the file
 *     it points to is never touched, and a dangling one creates nothing;
 *   - never over a file (or link) that belongs to another user, nor over
 *     anything that is not a regular file or a symlink: checked when the
 *     path is checked and opened, and again (lstat) just before the
 *     rename, since a trace can last hours and the path may have been
 *     replaced meanwhile. What remains between that lstat and the rename
 *     is a window of two system calls, in which the worst a planted link
 *     can do is be replaced (rename never follows it).
 * "-" means stdout. Threads: any; no shared state.
 */
#ifndef USER_OUTFILE_H
#define USER_OUTFILE_H

#include <stdio.h>

/*
 * Whether path can be written by outfile__open/commit. Returns 0, or
 * -ENOENT (its directory does not exist), -ENOTDIR, -EACCES (directory not
 * writable), -EISDIR, -EEXIST (exists, but not a regular file or symlink),
 * -EPERM (belongs to another user), -ENAMETOOLONG. Logs nothing.
 */
int outfile__check(const char *path);

/* A human reason for outfile__check's error. Never NULL. */
const char *outfile__strerror(int err);

struct outfile {
	FILE *f;
	char tmp[4096]; /* the temporary file, "" for stdout */
	char path[4096];
};

/*
 * Open a temporary file beside path (after outfile__check's checks) into
 * o->f. Returns 0 or -errno. On success finish with outfile__commit
 * (rename over path) or outfile__abort (remove the temporary file).
 */
int outfile__open(struct outfile *o, const char *path);

/* Flush, close, check the path again as outfile__check does (lstat: it
 * may have changed since outfile__open) and rename over it. Returns 0 or
 * -errno: outfile__check's (-EPERM: now another user's; -EEXIST: now not a
 * regular file or symlink; -EISDIR) or the write's; then the temporary
 * file is removed and path is untouched. */
int outfile__commit(struct outfile *o);

/* Close and remove the temporary file. */
void outfile__abort(struct outfile *o);

#endif /* USER_OUTFILE_H */
