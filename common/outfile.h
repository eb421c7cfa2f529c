/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common/outfile — every file cabbpf writes (--json, and later exports), as
 * root, safely:
 *   - checked before tracing starts (outfile__check), so a bad path never
 *     costs a trace;
 *   - its directory resolved one component at a time (openat with
 *     O_NOFOLLOW at each step), following only the symbolic links that
 *     root, cabbpf's user or the invoking user (the real uid, sudo's
 *     SUDO_UID) own: a link another user planted in a world-writable
 *     directory (the kernel's fs.protected_symlinks is 0 in many
 *     containers) would send root's write elsewhere. openat2's
 *     RESOLVE_NO_SYMLINKS refuses every link, ours too, hence the walk.
 *     The directory is held open from then on: renaming its path away
 *     during a trace changes nothing;
 *   - written to an unnamed file of that directory (O_TMPFILE; a named
 *     ".cabbpf-out.XXXXXX" where the file system lacks it), so a cabbpf
 *     killed mid-trace leaves nothing behind, and renamed over the path
 *     when complete, so a symlink planted at the path is replaced, not
 *     followed: the file it points to is never touched, and a dangling one
 *     creates nothing;
 *   - the first failed write's errno kept (ENOSPC, EIO...) and returned,
 *     whatever layers stand between the write and the caller;
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

#include <stdbool.h>
#include <stdio.h>

/*
 * Whether path can be written by outfile__open/commit. Returns 0, or
 * -ENOENT (its directory does not exist), -ENOTDIR, -EACCES (directory not
 * writable), -EROFS, -EISDIR (also a path ending in '/'), -EEXIST (exists,
 * but not a regular file or symlink), -EPERM (belongs to another user),
 * -ELOOP (a link in its directory's path that another user owns, or a
 * loop), -ENAMETOOLONG. Logs nothing.
 */
int outfile__check(const char *path);

/*
 * Whether dir is a directory files can be written into by outfile__open
 * (dir/NAME): resolved as the directories of outfile__check, made (0755)
 * if absent and create, and every *.svg already in it one outfile__commit
 * would replace. Returns 0 or -errno as outfile__check. Logs nothing.
 */
int outfile__check_dir(const char *dir, bool create);

/* A human reason for outfile__check's error. Never NULL. */
const char *outfile__strerror(int err);

struct outfile {
	FILE *f;
	char path[4096]; /* as given; "" for stdout */
	/* private */
	int dirfd, fd;
	int werr; /* errno of the first failed write, 0 if none */
	bool anon; /* O_TMPFILE: no name until committed */
	char base[256];
	char tmp[32]; /* the temporary name in dirfd, "" if none */
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

/* Close and remove the temporary file. Fine on a zeroed struct. */
void outfile__abort(struct outfile *o);

/*
 * The end of a writer: commit if err is 0, else abort. Returns 0 or
 * -errno: the first failed write's errno if there was one (a serializer
 * that says -EIO for a full disk gets ENOSPC said), else err or commit's.
 */
int outfile__finish(struct outfile *o, int err);

struct json;

/*
 * A JSON document into path as outfile__open writes ("-": stdout; never
 * through a symlink): a pretty writer made on it, body(w, arg) writes the
 * whole document (json__finish included), the file committed if body
 * returned 0. Returns 0, body's -errno, or the file's. Main thread.
 */
int outfile__write_json(const char *path, int (*body)(struct json *w, void *arg), void *arg);

#endif /* USER_OUTFILE_H */
