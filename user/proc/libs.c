// SPDX-License-Identifier: BSD-2-Clause
/* Shared-library selectors (see libs.h). */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "user/proc/libpath.h"
#include "user/proc/libs.h"
#include "user/elf/ifunc.h"
#include "common/log.h"

bool libs__is_selector(const char *glob)
{
	const char *c = glob ? strchr(glob, ':') : NULL;

	/* "ns::Foo::*" is a C++ name, never a library named "ns". */
	return c && c != glob && c[1] != ':';
}

/* Writes the path to use for file p (as the target sees it) into buf. */
static int in_root(pid_t pid, const char *p, char *buf, size_t len)
{
	char rooted[PATH_MAX];
	struct stat a, b;
	int k;

	k = pid > 0 ? snprintf(rooted, sizeof(rooted), "/proc/%d/root%s", (int)pid, p)
		    : snprintf(rooted, sizeof(rooted), "%s", p);
	if (k < 0 || (size_t)k >= sizeof(rooted))
		return -ENAMETOOLONG;
	if (stat(rooted, &b))
		return -ENOENT;
	/* The plain path when it is the same file: readable reports. */
	if (!stat(p, &a) && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		k = snprintf(buf, len, "%s", p);
	else
		k = snprintf(buf, len, "%s", rooted);
	return k < 0 || (size_t)k >= len ? -ENAMETOOLONG : 0;
}

static bool name_matches(const char *base, const char *lib)
{
	size_t l = strlen(lib);

	return !strcmp(base, lib) || (!strncmp(base, lib, l) && (base[l] == '.' || base[l] == '-'));
}

static int from_maps(pid_t pid, const char *lib, char *buf, size_t len)
{
	char path[64], line[PATH_MAX + 256];
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	while (err == -ENOENT && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/'), *base;
		unsigned long long lo, hi;
		size_t n;
		int k;

		if (!p)
			continue;
		p[strcspn(p, "\n")] = 0;
		n = strlen(p);
		if (n < 11 || strcmp(p + n - 10, " (deleted)")) {
			if (name_matches(strrchr(p, '/') + 1, lib))
				err = in_root(pid, p, buf, len);
			continue;
		}
		p[n - 10] = 0;
		base = strrchr(p, '/') + 1;
		/* Deleted or replaced on disk since it was mapped (a package
		 * upgrade under a running daemon): the file of that name now
		 * is another inode, whose probes the target never runs into.
		 * The one it runs is reachable through map_files (root). */
		if (!name_matches(base, lib) || sscanf(line, "%llx-%llx", &lo, &hi) != 2)
			continue;
		k = snprintf(buf, len, "/proc/%d/map_files/%llx-%llx", (int)pid, lo, hi);
		if (k < 0 || (size_t)k >= len)
			err = -ENAMETOOLONG;
		else if (!access(buf, R_OK))
			err = 0;
	}
	fclose(f);
	return err;
}

/* A regular ELF file (not a linker script like libc.so, not a dir)? */
static bool is_elf(const char *path)
{
	char magic[4];
	struct stat sb;
	bool ok;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = !fstat(fd, &sb) && S_ISREG(sb.st_mode) &&
	     read(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic) &&
	     !memcmp(magic, "\177ELF", 4);
	close(fd);
	return ok;
}

/* Copies s into out with glob's special characters escaped. */
static int glob_escape(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s; s++) {
		if (o + 2 >= len)
			return -ENAMETOOLONG;
		if (strchr("*?[]\\", *s))
			out[o++] = '\\';
		out[o++] = *s;
	}
	out[o] = 0;
	return 0;
}

/* LIB in directory dir (as the target sees it), under root. */
static int from_dir(pid_t pid, const char *root, const char *dir, const char *lib, char *buf,
		    size_t len)
{
	const char *forms[] = {"%s%s/%s", "%s%s/%s.so", "%s%s/%s.so.*", "%s%s/%s-*.so"};
	char pat[PATH_MAX * 2], edir[PATH_MAX * 2];
	size_t k, i;
	int err = -ENOENT;

	if (glob_escape(dir, edir, sizeof(edir)))
		return -ENOENT;
	for (k = 0; k < 4 && err == -ENOENT; k++) {
		glob_t g;

		if ((size_t)snprintf(pat, sizeof(pat), forms[k], root, edir, lib) >= sizeof(pat))
			return -ENAMETOOLONG;
		if (glob(pat, 0, NULL, &g) == 0)
			for (i = 0; i < g.gl_pathc && err == -ENOENT; i++)
				if (is_elf(g.gl_pathv[i])) /* back to the target's view */
					err = in_root(pid, g.gl_pathv[i] + strlen(root), buf, len);
		globfree(&g);
	}
	return err;
}

/* Rules 1-3 with the search path lp (rule 3); *mapped (may be NULL) tells
 * whether rule 2 found it: the target has it mapped now. */
static int resolve_in(pid_t pid, const struct libpath *lp, const char *lib, char *buf, size_t len,
		      bool *mapped)
{
	size_t i;
	int err;

	if (mapped)
		*mapped = false;
	if (strchr(lib, '/'))
		return in_root(pid, lib, buf, len);
	err = pid > 0 && !lp->pre_exec ? from_maps(pid, lib, buf, len) : -ENOENT;
	if (!err && mapped)
		*mapped = true;
	for (i = 0; err == -ENOENT && i < lp->n; i++) {
		err = from_dir(pid, lp->root, lp->dirs[i], lib, buf, len);
		if (!err)
			log_debug("%s: found in %s (%s)", lib, lp->dirs[i],
				  libpath__src_name(lp->src[i]));
	}
	return err;
}

int libs__resolve_exe(pid_t pid, const char *exe, const char *lib, char *buf, size_t len)
{
	struct libpath *lp = NULL;
	int err;

	if (!lib || !*lib || !buf || !len)
		return -EINVAL;
	err = libpath__build(pid, exe, &lp);
	if (!err)
		err = resolve_in(pid, lp, lib, buf, len, NULL);
	libpath__free(lp);
	return err;
}

int libs__resolve(pid_t pid, const char *lib, char *buf, size_t len)
{
	return libs__resolve_exe(pid, NULL, lib, buf, len);
}

/* LIB one directory below a directory of the program's own (RPATH,
 * LD_LIBRARY_PATH, RUNPATH, its own directory), into buf: where a program
 * that computes its library's path at run time keeps it (java's launcher
 * dlopens lib/server/libjvm.so). Only suggested, never taken: which
 * subdirectory the program picks is its own decision. Returns 0 or
 * -ENOENT. */
static int one_below(pid_t pid, const struct libpath *lp, const char *lib, char *buf, size_t len)
{
	char pat[PATH_MAX * 2], edir[PATH_MAX * 2];
	int err = -ENOENT;
	size_t i, k;

	for (i = 0; err && i < lp->n; i++) {
		glob_t g;

		if (lp->src[i] == LIBPATH_LDSOCONF || lp->src[i] == LIBPATH_MAPPED ||
		    lp->src[i] == LIBPATH_STANDARD || glob_escape(lp->dirs[i], edir, sizeof(edir)))
			continue;
		if ((size_t)snprintf(pat, sizeof(pat), "%s%s/*/", lp->root, edir) >= sizeof(pat) ||
		    glob(pat, GLOB_ONLYDIR, NULL, &g))
			continue;
		for (k = 0; err && k < g.gl_pathc; k++) {
			g.gl_pathv[k][strlen(g.gl_pathv[k]) - 1] = 0; /* the '/' */
			err = from_dir(pid, lp->root, g.gl_pathv[k] + strlen(lp->root), lib, buf,
				       len);
		}
		globfree(&g);
	}
	return err;
}

/* Logs that lib was not found, where it was looked for, and what to do. */
static void log_not_found(pid_t pid, const struct libpath *lp, const char *lib, int err)
{
	char where[4096], below[PATH_MAX], hint[2 * PATH_MAX + 128] = "";

	if (err != -ENOENT) {
		log_err("library '%s': %s", lib, strerror(-err));
		return;
	}
	if (!one_below(pid, lp, lib, below, sizeof(below))) {
		char rp[PATH_MAX];

		/* "bin/../lib/server": readable, when it is a path of this
		 * machine's (not one inside a container's root) */
		if (strncmp(below, "/proc/", 6) && realpath(below, rp))
			snprintf(below, sizeof(below), "%s", rp);
		snprintf(hint, sizeof(hint),
			 " (one directory below one of them there is %s: -f '%s:GLOB'"
			 " if that is the one)",
			 below, below);
	}
	log_err("library '%s' not found; looked in: %s%s%s; if the target loads it from "
		"elsewhere, give its path: -f /path/to/%s%s:GLOB%s",
		lib, lp->pre_exec ? "" : "the target's mapped files; ",
		libpath__describe(lp, where, sizeof(where)),
		lp->exe_unknown ? " (not in DT_RPATH/DT_RUNPATH: the executable is not known "
				  "before its exec)"
				: "",
		lib, strstr(lib, ".so") ? "" : ".so", hint);
}

/* Does process pid map the file at path (device and inode, as
 * /proc/PID/maps gives them)? */
static bool maps_file(pid_t pid, const char *path)
{
	char mp[64], line[PATH_MAX + 256];
	unsigned maj, mnr;
	unsigned long long ino;
	struct stat sb;
	bool found = false;
	FILE *f;

	snprintf(mp, sizeof(mp), "/proc/%d/maps", (int)pid);
	if (stat(path, &sb) || !(f = fopen(mp, "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*x-%*x %*s %*x %x:%x %llu", &maj, &mnr, &ino) == 3 &&
			ino == (unsigned long long)sb.st_ino && makedev(maj, mnr) == sb.st_dev;
	fclose(f);
	return found;
}

/* Do paths a and b name one file (device and inode)? */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !strcmp(a, b) ||
	       (!stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

#define LINKED_MAX 512 /* files we follow DT_NEEDED through: no loop, no blow-up */

/*
 * Does the executable link the file at path, directly or through the
 * libraries it links (DT_NEEDED, and its interpreter)? Every name is looked
 * up in the executable's search path lp, by ld.so's rules for the
 * executable's own needs (a library's own DT_RUNPATH is not followed: a
 * name only such a path finds counts as not linked, which the caller says
 * as a possibility, never as a fact). Files are compared by device and
 * inode. Returns 1 (linked), 0 (not), or -errno when nothing can be said
 * (the executable is not known, out of memory).
 */
static int linked(pid_t pid, const struct libpath *lp, const char *path)
{
	struct stat want, sb;
	dev_t *dev = NULL;
	ino_t *ino = NULL;
	char **q = NULL, found[PATH_MAX];
	size_t nq = 0, head, i, nseen = 0;
	int err = 0, ret = 0;

	if (!lp->exe || stat(path, &want))
		return -ENOENT;
	dev = calloc(LINKED_MAX, sizeof(*dev));
	ino = calloc(LINKED_MAX, sizeof(*ino));
	q = calloc(LINKED_MAX, sizeof(*q));
	if (!dev || !ino || !q || !(q[nq++] = strdup(lp->exe))) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (head = 0; head < nq && !ret; head++) {
		char **names = NULL;
		size_t n = 0;

		err = libpath__needed(q[head], &names, &n);
		if (err)
			goto cleanup;
		for (i = 0; i < n && !ret; i++) {
			size_t k;

			if (resolve_in(pid, lp, names[i], found, sizeof(found), NULL) ||
			    stat(found, &sb))
				continue; /* ld.so would fail: not ours to say */
			if (sb.st_dev == want.st_dev && sb.st_ino == want.st_ino) {
				ret = 1;
				break;
			}
			for (k = 0; k < nseen && (dev[k] != sb.st_dev || ino[k] != sb.st_ino); k++)
				;
			if (k < nseen || nq == LINKED_MAX)
				continue;
			dev[nseen] = sb.st_dev;
			ino[nseen++] = sb.st_ino;
			if (!(q[nq++] = strdup(found))) {
				err = -ENOMEM;
				libpath__free_names(names, n);
				goto cleanup;
			}
		}
		libpath__free_names(names, n);
	}
cleanup:
	for (i = 0; q && i < nq; i++)
		free(q[i]);
	free(q);
	free(dev);
	free(ino);
	return err ? err : ret;
}

/*
 * A library the target has not mapped and its executable does not link is
 * probed all the same (it may be dlopened later, user/proc/libs.h), but
 * when the program never loads it the run shows 0 calls with nothing to
 * say why (seen: -f 'libzstd:*' on Debian's zstd, which has the library
 * built in). Says so before the trace. Nothing when it cannot be known.
 */
static void warn_not_linked(pid_t pid, const struct libpath *lp, const char *lib, const char *path)
{
	char exe[PATH_MAX];
	ssize_t k;

	if (linked(pid, lp, path) != 0)
		return;
	/* /proc/PID/exe (a running target) is named by the file it links to. */
	k = strncmp(lp->exe, "/proc/", 6) ? -1 : readlink(lp->exe, exe, sizeof(exe) - 1);
	snprintf(exe + (k > 0 ? k : 0), sizeof(exe) - (size_t)(k > 0 ? k : 0), "%s",
		 k > 0 ? "" : lp->exe);
	log_warn("library '%s'%s%s%s is %snot among the libraries %s links (DT_NEEDED, through "
		 "its libraries): its calls are counted only if the program loads it at run "
		 "time (dlopen); if it never does, they show 0",
		 lib, strcmp(lib, path) ? " (" : "", strcmp(lib, path) ? path : "",
		 strcmp(lib, path) ? ")" : "",
		 pid > 0 && !lp->pre_exec ? "not mapped by the target and " : "", exe);
}

/* The target runs a copy of lib that is no longer on disk under its name
 * (from_maps): said, since the report's file is then a /proc path. */
static void say_deleted(const char *lib, const char *path)
{
	char was[PATH_MAX];
	ssize_t k = readlink(path, was, sizeof(was) - 1);

	was[k > 0 ? k : 0] = 0;
	if (k > 10 && !strcmp(was + k - 10, " (deleted)"))
		was[k - 10] = 0;
	log_info("library '%s': the target runs %s, deleted or replaced on disk since it was "
		 "loaded (a package upgrade?): probing the file it runs, through %s",
		 lib, k > 0 ? was : "a file", path);
}

static void lib_fini(struct lib *b)
{
	size_t i;

	if (b->fnames)
		for (i = 0; i < b->n; i++)
			free(b->fnames[i]);
	free(b->fnames);
	plan__free(b->plan);
	free(b->idx);
	syms__free(b->st);
	free(b->path);
	free(b->name);
}

/* Names on stderr each of b's selectors (shown: as the user wrote them,
 * "LIB:GLOB"; mine: their GLOB parts) that matches no function of b, or
 * only fragments (syms__why_unmatched). */
static void warn_unmatched(const struct lib *b, const char *const *mine, const char *const *shown,
			   size_t k)
{
	size_t j, tn, *tidx;
	char why[512];

	for (j = 0; j < k; j++) {
		if (!syms__select(b->st, &mine[j], 1, &tidx, &tn)) {
			free(tidx);
			continue;
		}
		if (!syms__why_unmatched(b->st, mine[j], why, sizeof(why)))
			log_warn("-f '%s' %s", shown[j], why);
		else
			log_warn("-f '%s' matches no function of %s", shown[j], b->path);
	}
}

/* Selects, plans and names the functions of one library from its globs
 * (mine; shown: the selectors as given). With alone (the only -f pattern
 * of the run), none matching is an error; otherwise every pattern that
 * matches nothing is a warning, and -ENOENT with b->n == 0 tells the
 * caller to leave the library out. */
static int lib_setup(struct lib *b, const char **mine, const char **shown, size_t k, bool alone,
		     const struct plan_opts *po, pid_t pid)
{
	char **labels = NULL;
	size_t i, n0;
	int err;

	err = syms__select(b->st, mine, k, &b->idx, &b->n);
	if (err == -ENOENT && alone) {
		char why[512];

		if (!syms__why_unmatched(b->st, mine[0], why, sizeof(why)))
			log_warn("-f '%s' %s", shown[0], why);
		log_err("no function of %s matches %s:%s%s; -l -f '%s:*' with the same command "
			"lists them",
			b->path, b->name, mine[0], k > 1 ? ", ..." : "", b->name);
	} else if (err == -ENOENT || !err) {
		warn_unmatched(b, mine, shown, k);
	}
	n0 = b->n;
	if (!err) {
		err = ifunc__redirect(pid, b->st, b->name, b->idx, &b->n, &labels);
		if (err == -ENOENT && alone)
			log_err("nothing of %s left to trace: every function selected is an IFUNC "
				"whose implementation is unknown",
				b->path);
	}
	if (!err)
		err = plan__build(b->st, b->idx, b->n, po, &b->plan);
	if (!err) {
		b->fnames = calloc(b->n, sizeof(*b->fnames));
		if (!b->fnames)
			err = -ENOMEM;
	}
	for (i = 0; !err && i < b->n; i++) {
		const struct sym *fs = &b->st->syms[b->idx[i]];

		/* The readable name in reports (user/elf/demangle.h), or what
		 * an IFUNC runs ("memcpy (__memmove_avx_unaligned_erms)"). */
		if (asprintf(&b->fnames[i], "%s:%s", b->name,
			     labels && labels[i] ? labels[i] : fs->pretty ? fs->pretty : fs->name) <
		    0) {
			b->fnames[i] = NULL;
			err = -ENOMEM;
		}
	}
	for (i = 0; labels && i < n0; i++)
		free(labels[i]);
	free(labels);
	/* -ENOENT was said above (alone) or leaves the library out. */
	if (err && err != -ENOENT)
		log_err("setting up %s: %s", b->path, strerror(-err));
	return err;
}

int libs__load(pid_t pid, const char *const *globs, size_t n, const struct plan_opts *po,
	       struct libs **out)
{
	return libs__load_exe(pid, NULL, globs, n, po, out);
}

int libs__load_exe(pid_t pid, const char *exe, const char *const *globs, size_t n,
		   const struct plan_opts *po, struct libs **out)
{
	struct libpath *lp = NULL;
	struct libs *l = NULL;
	char path[PATH_MAX], **paths = NULL;
	const char **mine = NULL, **shown = NULL;
	bool mapped;
	size_t i, j, k;
	int err = 0;

	if (!out || (!globs && n) || !po)
		return -EINVAL;
	*out = NULL;
	for (i = 0; i < n && !libs__is_selector(globs[i]); i++)
		;
	if (i == n)
		return 0;
	l = calloc(1, sizeof(*l));
	paths = calloc(n, sizeof(*paths));
	mine = calloc(n, sizeof(*mine));
	shown = calloc(n, sizeof(*shown));
	if (!l || !paths || !mine || !shown || !(l->v = calloc(n, sizeof(*l->v)))) {
		err = -ENOMEM;
		log_err("out of memory");
		goto cleanup;
	}
	err = libpath__build(pid, exe, &lp);
	if (err) {
		log_err("reading the library search path: %s", strerror(-err));
		goto cleanup;
	}
	/* Resolve every selector's LIB first: two names of one file
	 * ("libc", "libc.so.6") must become one library, or a function
	 * selected through both would be probed, and counted, twice. */
	for (i = 0; i < n; i++) {
		char *lib;

		if (!libs__is_selector(globs[i]))
			continue;
		lib = strndup(globs[i], (size_t)(strchr(globs[i], ':') - globs[i]));
		if (!lib) {
			err = -ENOMEM;
			log_err("out of memory");
			goto cleanup;
		}
		err = resolve_in(pid, lp, lib, path, sizeof(path), &mapped);
		if (err)
			log_not_found(pid, lp, lib, err);
		/* One file under two names (libz.so, a symlink, and libz.so.1)
		 * takes the first one's: compared by name below. */
		for (j = 0; !err && j < i && (!paths[j] || !same_file(paths[j], path)); j++)
			;
		/* once per file; only for one target (exe given): per image of a
		 * cgroup it would be said for every program not using it */
		if (!err && j == i && exe && !mapped &&
		    !(pid > 0 && !lp->pre_exec && maps_file(pid, path)))
			warn_not_linked(pid, lp, lib, path);
		if (!err && j == i && mapped && !strncmp(path, "/proc/", 6) &&
		    strstr(path, "/map_files/"))
			say_deleted(lib, path);
		free(lib);
		if (err)
			goto cleanup;
		paths[i] = strdup(j < i ? paths[j] : path);
		if (!paths[i]) {
			err = -ENOMEM;
			log_err("out of memory");
			goto cleanup;
		}
	}
	for (i = 0; i < n; i++) {
		struct lib *b;

		if (!paths[i])
			continue;
		for (j = 0; j < i && (!paths[j] || strcmp(paths[j], paths[i])); j++)
			;
		if (j < i)
			continue; /* this file is set up already (or left out) */
		b = &l->v[l->nlibs++];
		b->path = strdup(paths[i]);
		b->name = strndup(globs[i], (size_t)(strchr(globs[i], ':') - globs[i]));
		if (!b->path || !b->name) {
			err = -ENOMEM;
			log_err("out of memory");
			goto cleanup;
		}
		/* Reports name a library given by path by its file name. */
		if (strrchr(b->name, '/'))
			memmove(b->name, strrchr(b->name, '/') + 1, strlen(strrchr(b->name, '/')));
		for (j = i, k = 0; j < n; j++)
			if (paths[j] && !strcmp(paths[j], paths[i])) {
				shown[k] = globs[j];
				mine[k++] = strchr(globs[j], ':') + 1;
			}
		err = syms__load(b->path, &b->st);
		if (err) {
			log_err("reading symbols of %s: %s", b->path, strerror(-err));
			goto cleanup;
		}
		err = lib_setup(b, mine, shown, k, n == 1, po, pid);
		if (err == -ENOENT && n > 1 && !b->n) {
			/* Other patterns may match: said, and left out. */
			lib_fini(b);
			memset(b, 0, sizeof(*b));
			l->nlibs--;
			err = 0;
			continue;
		}
		if (err)
			goto cleanup;
		l->nfuncs += b->n;
		log_debug("%s -> %s: %zu functions", b->name, b->path, b->n);
	}
	*out = l;
	l = NULL;
cleanup:
	for (i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
	free(mine);
	free(shown);
	libpath__free(lp);
	libs__free(l);
	return err;
}

void libs__fill(const struct libs *l, uint64_t *offsets, const char **names, const char **binaries,
		uint32_t *sp_delta)
{
	size_t i, j, k = 0;

	if (!l)
		return;
	for (i = 0; i < l->nlibs; i++)
		for (j = 0; j < l->v[i].n; j++, k++) {
			offsets[k] = l->v[i].plan->sites[j].offset;
			names[k] = l->v[i].fnames[j];
			binaries[k] = l->v[i].path;
			sp_delta[k] = l->v[i].plan->sites[j].sp_delta;
		}
}

void libs__print(FILE *f, const struct libs *l, const char *analyzers, bool per_site)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->nlibs; i++)
		plan__print(f, l->v[i].plan, l->v[i].st, l->v[i].idx, analyzers, per_site);
}

void libs__free(struct libs *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; l->v && i < l->nlibs; i++)
		lib_fini(&l->v[i]);
	free(l->v);
	free(l);
}
