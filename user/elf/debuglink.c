// SPDX-License-Identifier: BSD-2-Clause
/* Separate debug files, as gdb finds them (debuglink.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <zlib.h>

#include "common/log.h"
#include "user/elf/debuglink.h"

/* Where separate debug files are looked for (debuglink__set_dir). */
static char debug_dir[PATH_MAX] = "/usr/lib/debug";

void debuglink__set_dir(const char *dir)
{
	snprintf(debug_dir, sizeof(debug_dir), "%s", dir);
}

/* The section named name of elf, or NULL. */
static Elf_Scn *section_named(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* The standard CRC-32 of the file at path (.gnu_debuglink's check), or
 * -1 when it cannot be read. */
static int64_t file_crc32(const char *path)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, NULL, 0);
	size_t n;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		crc = crc32(crc, buf, (uInt)n);
	n = (size_t)ferror(f);
	fclose(f);
	return n ? -1 : (int64_t)crc;
}

bool debuglink__build_id(Elf *elf, char *hex, size_t len)
{
	Elf_Scn *scn = section_named(elf, ".note.gnu.build-id");
	Elf_Data *d;
	GElf_Nhdr nh;
	size_t off = 0, noff, doff, k;

	if (!scn || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
		return false;
	while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
		const unsigned char *id = (const unsigned char *)d->d_buf + doff;

		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_descsz < 2 || nh.n_descsz > 64 ||
		    2 * (size_t)nh.n_descsz + 1 > len)
			continue;
		for (k = 0; k < nh.n_descsz; k++)
			snprintf(hex + 2 * k, len - 2 * k, "%02x", id[k]);
		return true;
	}
	return false;
}

size_t debuglink__proc_root(const char *path, char *root, size_t len)
{
	const char *p;
	size_t n;

	root[0] = 0;
	if (strncmp(path, "/proc/", 6))
		return 0;
	for (p = path + 6; *p >= '0' && *p <= '9'; p++)
		;
	if (p == path + 6 || *p != '/')
		return 0;
	n = (size_t)(p - path);
	if (!strncmp(p, "/root/", 6) || !strcmp(p, "/exe")) {
		if ((size_t)snprintf(root, len, "%.*s/root", (int)n, path) >= len) {
			root[0] = 0;
			return 0;
		}
		/* "/proc/N/exe" is no path inside the root: nothing of it
		 * names a directory there */
		return p[1] == 'r' ? n + 5 : strlen(path);
	}
	return 0;
}

/*
 * Whether root + rel (rel starting with '/') is a file that resolves
 * inside root: the kernel's RESOLVE_IN_ROOT walk (symbolic links read
 * as if root were "/") reaches the same inode as the plain path. A
 * kernel without openat2 (before 5.6): the plain path is taken.
 */
static bool inside_root(const char *root, const char *full, const char *rel)
{
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	struct stat a, b;
	int rfd, fd;
	bool ok;

	if (stat(full, &a) || !S_ISREG(a.st_mode))
		return false;
	rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return false;
	fd = (int)syscall(SYS_openat2, rfd, rel + 1, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS) {
		close(rfd);
		return true;
	}
	ok = fd >= 0 && !fstat(fd, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	if (!ok)
		log_debug("%s leads outside %s: not taken as a debug file", full, root);
	if (fd >= 0)
		close(fd);
	close(rfd);
	return ok;
}

/* root + rel into out, readable and (with a root) inside it. */
static bool candidate(const char *root, const char *rel, char *out, size_t len)
{
	if ((size_t)snprintf(out, len, "%s%s", root, rel) >= len)
		return false;
	if (!root[0])
		return !access(out, R_OK);
	return inside_root(root, out, rel);
}

bool debuglink__find(Elf *elf, const char *path, char *out, size_t len)
{
	char root[64], hex[160], rel[2 * PATH_MAX + 64], dir[PATH_MAX];
	const char *cdir; /* the binary's directory as seen inside its root */
	size_t rootlen = debuglink__proc_root(path, root, sizeof(root));
	Elf_Scn *scn;
	Elf_Data *d;
	char *slash;

	if (debuglink__build_id(elf, hex, sizeof(hex))) {
		snprintf(rel, sizeof(rel), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
		/* a container's own debug files first, then the host's */
		if (root[0] && candidate(root, rel, out, len))
			return true;
		if ((size_t)snprintf(out, len, "%s/.build-id/%.2s/%s.debug", debug_dir, hex,
				     hex + 2) < len &&
		    !access(out, R_OK))
			return true;
	}
	scn = section_named(elf, ".gnu_debuglink");
	if (!scn || !(d = elf_getdata(scn, NULL)) || !d->d_buf || !d->d_size)
		return false;
	{
		const char *name = d->d_buf;
		size_t nlen = strnlen(name, d->d_size), coff = (nlen + 4) & ~(size_t)3;
		uint32_t want;
		int i;

		if (nlen == d->d_size || coff + 4 > d->d_size || strchr(name, '/'))
			return false;
		memcpy(&want, (const char *)d->d_buf + coff, 4);
		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		else
			snprintf(dir, sizeof(dir), ".");
		cdir = rootlen && rootlen <= strlen(dir) ? dir + rootlen : NULL;
		for (i = 0; i < 4; i++) {
			const char *in = "";
			int r;

			if (i == 0 || i == 1) {
				/* beside the binary; in a container, inside it */
				r = snprintf(rel, sizeof(rel), "%s%s/%s", cdir ? cdir : dir,
					     i ? "/.debug" : "", name);
				in = cdir ? root : "";
			} else if (i == 2) {
				/* the container's /usr/lib/debug + its directory */
				if (!cdir)
					continue;
				r = snprintf(rel, sizeof(rel), "/usr/lib/debug%s/%s", cdir, name);
				in = root;
			} else {
				r = snprintf(rel, sizeof(rel), "%s%s/%s", debug_dir, cdir ? cdir : dir,
					     name);
			}
			if (r < 0 || (size_t)r >= sizeof(rel) || !candidate(in, rel, out, len))
				continue;
			if (strcmp(out, path) && file_crc32(out) == (int64_t)want)
				return true;
		}
	}
	return false;
}
