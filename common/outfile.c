// SPDX-License-Identifier: BSD-2-Clause
/* Safe output files: see common/outfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/outfile.h"

/* The directory part of path into buf ("." when there is none). */
static int dir_of(const char *path, char *buf, size_t len)
{
	char tmp[4096];

	if (strlen(path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	strcpy(tmp, path);
	if ((size_t)snprintf(buf, len, "%s", dirname(tmp)) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* What may be at an output path (from lstat): nothing is fine (ENOENT is
 * the caller's), a regular file or a symlink of ours too; 0 or -errno as
 * outfile__check says. */
static int existing_ok(const struct stat *sb)
{
	if (S_ISDIR(sb->st_mode))
		return -EISDIR;
	if (!S_ISREG(sb->st_mode) && !S_ISLNK(sb->st_mode))
		return -EEXIST;
	if (sb->st_uid != geteuid())
		return -EPERM;
	return 0;
}

int outfile__check(const char *path)
{
	char dir[4096];
	struct stat sb;
	int err;

	if (!strcmp(path, "-"))
		return 0;
	if (!*path)
		return -ENOENT;
	err = dir_of(path, dir, sizeof(dir));
	if (err)
		return err;
	if (stat(dir, &sb))
		return -errno;
	if (!S_ISDIR(sb.st_mode))
		return -ENOTDIR;
	if (access(dir, W_OK | X_OK))
		return -EACCES;
	if (lstat(path, &sb)) /* nothing there yet: fine */
		return errno == ENOENT ? 0 : -errno;
	return existing_ok(&sb);
}

const char *outfile__strerror(int err)
{
	switch (err) {
	case -ENOENT:
		return "its directory does not exist";
	case -ENOTDIR:
		return "its directory is not a directory";
	case -EACCES:
		return "its directory is not writable";
	case -EISDIR:
		return "it is a directory";
	case -EEXIST:
		return "it exists and is not a regular file";
	case -EPERM:
		return "it belongs to another user: not overwritten";
	default:
		return strerror(-err);
	}
}

int outfile__open(struct outfile *o, const char *path)
{
	char dir[4096];
	int fd, err;

	memset(o, 0, sizeof(*o));
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	err = outfile__check(path);
	if (!err)
		err = dir_of(path, dir, sizeof(dir));
	if (err)
		return err;
	if ((size_t)snprintf(o->tmp, sizeof(o->tmp), "%s/.cabbpf-out.XXXXXX", dir) >=
		    sizeof(o->tmp) ||
	    (size_t)snprintf(o->path, sizeof(o->path), "%s", path) >= sizeof(o->path))
		return -ENAMETOOLONG;
	/* mkstemp: O_CREAT|O_EXCL, mode 0600; never follows a symlink. */
	fd = mkstemp(o->tmp);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0644) || !(o->f = fdopen(fd, "w"))) {
		err = -errno;
		close(fd);
		unlink(o->tmp);
		o->tmp[0] = 0;
		return err;
	}
	return 0;
}

int outfile__commit(struct outfile *o)
{
	struct stat sb;
	int err = 0;

	if (!o->f)
		return -EINVAL;
	if (!o->tmp[0]) { /* stdout */
		err = fflush(o->f) ? -errno : 0;
		o->f = NULL;
		return err;
	}
	if (fflush(o->f) || fsync(fileno(o->f)))
		err = -errno;
	if (fclose(o->f) && !err)
		err = -errno;
	o->f = NULL;
	/* The path again, just before the rename: what was there when the
	 * file was opened (a whole trace ago) may have been replaced by
	 * another user's file, a directory, a FIFO... (outfile.h). */
	if (!err && lstat(o->path, &sb) == 0)
		err = existing_ok(&sb);
	else if (!err && errno != ENOENT)
		err = -errno;
	/* rename() replaces a symlink at the path, never what it points to. */
	if (!err && rename(o->tmp, o->path))
		err = -errno;
	if (err)
		unlink(o->tmp);
	o->tmp[0] = 0;
	return err;
}

void outfile__abort(struct outfile *o)
{
	if (o->f && o->tmp[0]) {
		fclose(o->f);
		unlink(o->tmp);
	}
	o->f = NULL;
	o->tmp[0] = 0;
}
