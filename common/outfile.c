// SPDX-License-Identifier: BSD-2-Clause
/* Safe output files: see common/outfile.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/outfile.h"

/* Symbolic links followed in one path before it counts as a loop (the
 * kernel's own limit). */
#define MAX_LINKS 40

/* Whether a symbolic link owned by uid may be followed: root's, ours, or
 * the invoking user's (the real uid; sudo's SUDO_UID): a link that anyone
 * else owns may have been planted to send root's write elsewhere. */
static bool link_trusted(uid_t uid)
{
	const char *s;

	if (uid == 0 || uid == geteuid() || uid == getuid())
		return true;
	s = getenv("SUDO_UID");
	if (s && *s) {
		char *end;
		unsigned long v = strtoul(s, &end, 10);

		if (!*end && v == uid)
			return true;
	}
	return false;
}

/*
 * Open directory dir (O_PATH) into *fdp, one component at a time, never
 * following a link link_trusted refuses, and never letting a component be
 * swapped for a link between its check and its open (O_NOFOLLOW on each
 * step). mkdir the last component if absent and mkdir_last. Returns 0 or
 * -errno (-ELOOP: a link of another user, or too many links).
 */
static int walk_dir(const char *dir, bool mkdir_last, int *fdp)
{
	char rest[2 * PATH_MAX], target[PATH_MAX], comp[NAME_MAX + 1];
	unsigned links = 0;
	int fd, err = 0;

	if (strlen(dir) >= PATH_MAX)
		return -ENAMETOOLONG;
	strcpy(rest, dir);
	fd = open(rest[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		char *p = rest, *q;
		size_t n;
		struct stat sb;
		int nfd;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		q = strchr(p, '/');
		n = q ? (size_t)(q - p) : strlen(p);
		if (n > NAME_MAX) {
			err = -ENAMETOOLONG;
			goto cleanup;
		}
		memcpy(comp, p, n);
		comp[n] = 0;
		memmove(rest, p + n, strlen(p + n) + 1);
		if (!strcmp(comp, "."))
			continue;
		if (fstatat(fd, comp, &sb, AT_SYMLINK_NOFOLLOW)) {
			bool last = !rest[strspn(rest, "/")];

			err = -errno;
			if (err != -ENOENT || !last || !mkdir_last)
				goto cleanup;
			if (mkdirat(fd, comp, 0755) && errno != EEXIST) {
				err = -errno;
				goto cleanup;
			}
			if (fstatat(fd, comp, &sb, AT_SYMLINK_NOFOLLOW)) {
				err = -errno;
				goto cleanup;
			}
			err = 0;
		}
		if (S_ISLNK(sb.st_mode)) {
			ssize_t len;

			if (!link_trusted(sb.st_uid) || ++links > MAX_LINKS) {
				err = -ELOOP;
				goto cleanup;
			}
			len = readlinkat(fd, comp, target, sizeof(target) - 1);
			if (len < 0) {
				err = -errno;
				goto cleanup;
			}
			target[len] = 0;
			if ((size_t)len + 1 + strlen(rest) >= sizeof(rest)) {
				err = -ENAMETOOLONG;
				goto cleanup;
			}
			/* the link's text, then what was left of the path */
			memmove(rest + len + 1, rest, strlen(rest) + 1);
			memcpy(rest, target, (size_t)len);
			rest[len] = '/';
			if (target[0] == '/') {
				close(fd);
				fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
				if (fd < 0)
					return -errno;
			}
			continue;
		}
		if (!S_ISDIR(sb.st_mode)) {
			err = -ENOTDIR;
			goto cleanup;
		}
		/* O_NOFOLLOW: if comp became a link since fstatat, this fails
		 * (O_DIRECTORY on the link itself) rather than follow it. */
		nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			err = -errno;
			goto cleanup;
		}
		close(fd);
		fd = nfd;
	}
	*fdp = fd;
	return 0;
cleanup:
	close(fd);
	return err;
}

/* path split into its directory's open descriptor and its last name. */
static int split(const char *path, int *dirfd, char *base, size_t len)
{
	char dir[PATH_MAX];
	const char *slash;
	size_t n;

	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	n = strlen(path);
	if (n && path[n - 1] == '/')
		return -EISDIR; /* "out/" names a directory */
	slash = strrchr(path, '/');
	if (!slash) {
		strcpy(dir, ".");
		slash = path - 1;
	} else if (slash == path) {
		strcpy(dir, "/");
	} else {
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = 0;
	}
	if (strlen(slash + 1) >= len || strlen(slash + 1) > NAME_MAX)
		return -ENAMETOOLONG;
	strcpy(base, slash + 1);
	if (!strcmp(base, ".") || !strcmp(base, ".."))
		return -EISDIR;
	return walk_dir(dir, false, dirfd);
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

/* base in dirfd may be written over: 0 or -errno as outfile__check. */
static int check_at(int dirfd, const char *base)
{
	struct stat sb;

	if (faccessat(dirfd, ".", W_OK | X_OK, AT_EACCESS))
		return errno == EROFS ? -EROFS : -EACCES;
	if (fstatat(dirfd, base, &sb, AT_SYMLINK_NOFOLLOW)) /* nothing there yet: fine */
		return errno == ENOENT ? 0 : -errno;
	return existing_ok(&sb);
}

int outfile__check(const char *path)
{
	char base[NAME_MAX + 1];
	int dirfd, err;

	if (!strcmp(path, "-"))
		return 0;
	if (!*path)
		return -ENOENT;
	err = split(path, &dirfd, base, sizeof(base));
	if (err)
		return err;
	err = check_at(dirfd, base);
	close(dirfd);
	return err;
}

int outfile__check_dir(const char *dir, bool create)
{
	DIR *d = NULL;
	struct dirent *de;
	int fd, rfd, err;

	if (!*dir)
		return -ENOENT;
	err = walk_dir(dir, create, &fd);
	if (err)
		return err;
	err = faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) ? -EACCES : 0;
	/* what is in it already: each *.svg must be one we may replace */
	rfd = err ? -1 : openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!err && (rfd < 0 || !(d = fdopendir(rfd)))) {
		err = -errno;
		if (rfd >= 0)
			close(rfd);
	}
	while (!err && d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		struct stat sb;

		if (n < 4 || strcmp(de->d_name + n - 4, ".svg"))
			continue;
		if (fstatat(fd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW))
			continue; /* gone meanwhile */
		err = existing_ok(&sb);
	}
	if (d)
		closedir(d);
	close(fd);
	return err;
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
	case -EROFS:
		return "its directory is on a read-only file system";
	case -EISDIR:
		return "it is a directory";
	case -EEXIST:
		return "it exists and is not a regular file";
	case -EPERM:
		return "it belongs to another user: not overwritten";
	case -ELOOP:
		return "a symbolic link in its path belongs to another user (or links loop): "
		       "not followed";
	default:
		return strerror(-err);
	}
}

/* stdio's write through our descriptor: the first failure's errno is kept
 * (o->werr), so a full disk says ENOSPC however many layers of stdio and
 * serializers stand between the write and the caller. */
static ssize_t cookie_write(void *cookie, const char *buf, size_t len)
{
	struct outfile *o = cookie;
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(o->fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!o->werr)
				o->werr = n < 0 ? errno : ENOSPC;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* A new name for a temporary file in the directory: ".cabbpf-out.XXXXXX". */
static void temp_name(char *buf, size_t len)
{
	static const char digits[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char r[6];
	size_t i;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		for (i = 0; i < sizeof(r); i++)
			r[i] = (unsigned char)(rand() ^ getpid());
	snprintf(buf, len, ".cabbpf-out.");
	for (i = 0; i < sizeof(r); i++)
		buf[12 + i] = digits[r[i] % (sizeof(digits) - 1)];
	buf[12 + sizeof(r)] = 0;
}

/* A temporary file of the directory, linked under a new temp_name. */
static int create_named(struct outfile *o)
{
	int i;

	for (i = 0; i < 100; i++) {
		temp_name(o->tmp, sizeof(o->tmp));
		/* O_EXCL|O_NOFOLLOW: a new file, never through a symlink */
		o->fd = openat(o->dirfd, o->tmp,
			       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (o->fd >= 0 || errno != EEXIST)
			break;
	}
	if (o->fd < 0) {
		o->tmp[0] = 0;
		return -errno;
	}
	return 0;
}

int outfile__open(struct outfile *o, const char *path)
{
	static const cookie_io_functions_t io = {.write = cookie_write};
	int err;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->dirfd = -1;
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	if (!*path)
		return -ENOENT;
	if ((size_t)snprintf(o->path, sizeof(o->path), "%s", path) >= sizeof(o->path))
		return -ENAMETOOLONG;
	err = split(path, &o->dirfd, o->base, sizeof(o->base));
	if (!err)
		err = check_at(o->dirfd, o->base);
	if (err)
		goto cleanup;
	/* Unnamed until it is complete (O_TMPFILE): a cabbpf killed
	 * mid-write leaves nothing behind. File systems without it get a
	 * named temporary file. */
	o->fd = openat(o->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (o->fd >= 0)
		o->anon = true;
	else if ((err = create_named(o)))
		goto cleanup;
	if (fchmod(o->fd, 0644)) {
		err = -errno;
		goto cleanup;
	}
	o->f = fopencookie(o, "w", io);
	if (!o->f) {
		err = -errno;
		goto cleanup;
	}
	setvbuf(o->f, NULL, _IOFBF, 1 << 16);
	return 0;
cleanup:
	outfile__abort(o);
	return err;
}

/* Give the finished unnamed file a temporary name (to rename it over the
 * path: linkat cannot replace). AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH;
 * /proc/self/fd does not. */
static int name_anon(struct outfile *o)
{
	char proc[64];
	int i;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
	for (i = 0; i < 100; i++) {
		temp_name(o->tmp, sizeof(o->tmp));
		if (!linkat(o->fd, "", o->dirfd, o->tmp, AT_EMPTY_PATH) ||
		    !linkat(AT_FDCWD, proc, o->dirfd, o->tmp, AT_SYMLINK_FOLLOW))
			return 0;
		if (errno != EEXIST)
			break;
	}
	o->tmp[0] = 0;
	return -errno;
}

int outfile__commit(struct outfile *o)
{
	struct stat sb;
	int err = 0;

	if (!o->f)
		return -EINVAL;
	if (o->dirfd < 0) { /* stdout */
		err = fflush(o->f) ? -errno : 0;
		o->f = NULL;
		return err;
	}
	if (fflush(o->f) || o->werr)
		err = o->werr ? -o->werr : -EIO;
	else if (fsync(o->fd))
		err = -errno;
	/* The path again, just before the rename: what was there when the
	 * file was opened (a whole trace ago) may have been replaced by
	 * another user's file, a directory, a FIFO... (outfile.h). */
	if (!err && fstatat(o->dirfd, o->base, &sb, AT_SYMLINK_NOFOLLOW) == 0)
		err = existing_ok(&sb);
	else if (!err && errno != ENOENT)
		err = -errno;
	if (!err && o->anon)
		err = name_anon(o);
	/* renameat() replaces a symlink at the path, never what it points
	 * to; the directory is the one checked at open, whatever its path
	 * names now. */
	if (!err && renameat(o->dirfd, o->tmp, o->dirfd, o->base))
		err = -errno;
	if (!err)
		o->tmp[0] = 0;
	outfile__abort(o);
	return err;
}

int outfile__finish(struct outfile *o, int err)
{
	if (!err)
		return outfile__commit(o);
	if (o->f && o->f != stdout)
		fflush(o->f); /* a write error still held by stdio's buffer */
	if (o->werr)
		err = -o->werr;
	else if (o->f == stdout && ferror(stdout) && fflush(stdout))
		err = -errno;
	outfile__abort(o);
	return err;
}

void outfile__abort(struct outfile *o)
{
	if (!o->path[0]) { /* stdout, or never opened */
		o->f = NULL;
		return;
	}
	if (o->f && o->f != stdout)
		fclose(o->f); /* the cookie has no close: o->fd is ours */
	o->f = NULL;
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp[0] && o->dirfd >= 0)
		unlinkat(o->dirfd, o->tmp, 0);
	o->tmp[0] = 0;
	if (o->dirfd >= 0)
		close(o->dirfd);
	o->dirfd = -1;
}

int outfile__write_json(const char *path, int (*body)(struct json *w, void *arg), void *arg)
{
	struct json *w = NULL;
	struct outfile of;
	int err;

	/* A new file renamed over the path: never through a symlink. */
	err = outfile__open(&of, path);
	if (err)
		return err;
	err = json__new(of.f, true, &w);
	if (!err)
		err = body(w, arg);
	json__free(w);
	return outfile__finish(&of, err);
}
