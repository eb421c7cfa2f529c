// SPDX-License-Identifier: BSD-2-Clause
/* The target's library search path (see libpath.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/proc/libpath.h"
#include "common/log.h"

#define LDSOCONF_DEPTH 8 /* include nesting we follow */

static const char *const std_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
	"/lib",			 "/usr/lib",		      "/usr/local/lib",
};

static const char *const src_names[LIBPATH__MAX] = {
	[LIBPATH_RPATH] = "DT_RPATH",
	[LIBPATH_LD_LIBRARY_PATH] = "LD_LIBRARY_PATH",
	[LIBPATH_RUNPATH] = "DT_RUNPATH",
	[LIBPATH_LDSOCONF] = "/etc/ld.so.conf",
	[LIBPATH_MAPPED] = "directories of mapped files",
	[LIBPATH_EXE_DIR] = "the executable's directory",
	[LIBPATH_STANDARD] = "standard directories",
};

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static bool elf_ok;

static void libpath__init_libelf(void)
{
	elf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

const char *libpath__src_name(enum libpath_src s)
{
	return s < LIBPATH__MAX ? src_names[s] : "?";
}

/* Appends dir (absolute; a trailing '/' is dropped) unless present. */
static int libpath__add(struct libpath *p, const char *dir, enum libpath_src src)
{
	size_t i, l = strlen(dir);
	char *d;

	while (l > 1 && dir[l - 1] == '/')
		l--;
	if (dir[0] != '/')
		return 0;
	for (i = 0; i < p->n; i++)
		if (strlen(p->dirs[i]) == l && !strncmp(p->dirs[i], dir, l))
			return 0;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		char **dv = realloc(p->dirs, cap * sizeof(*dv));
		enum libpath_src *sv;

		if (!dv)
			return -ENOMEM;
		p->dirs = dv;
		sv = realloc(p->src, cap * sizeof(*sv));
		if (!sv)
			return -ENOMEM;
		p->src = sv;
		p->cap = cap;
	}
	d = strndup(dir, l);
	if (!d)
		return -ENOMEM;
	p->dirs[p->n] = d;
	p->src[p->n++] = src;
	return 0;
}

int libpath__expand(const char *entry, size_t n, const char *origin, const char *cwd, char *out,
		    size_t len)
{
	size_t i = 0, o = 0;

	if (!entry || !out || !len)
		return -EINVAL;
	if (!n || entry[0] != '/') {
		/* Relative (or empty: the current directory), unless it starts
		 * with $ORIGIN, which is absolute once expanded. */
		if (!(n && entry[0] == '$')) {
			if (!cwd)
				return -ENOENT;
			o = (size_t)snprintf(out, len, "%s/", cwd);
			if (o >= len)
				return -ENAMETOOLONG;
		}
	}
	while (i < n) {
		size_t tok = !strncmp(entry + i, "${ORIGIN}", 9) && i + 9 <= n ? 9
			     : !strncmp(entry + i, "$ORIGIN", 7) && i + 7 <= n ? 7
										: 0;

		if (tok) {
			if (!origin)
				return -ENOENT;
			if (o + strlen(origin) >= len)
				return -ENAMETOOLONG;
			memcpy(out + o, origin, strlen(origin));
			o += strlen(origin);
			i += tok;
			continue;
		}
		if (o + 1 >= len)
			return -ENAMETOOLONG;
		out[o++] = entry[i++];
	}
	out[o] = 0;
	return out[0] == '/' ? 0 : -ENOENT;
}

/* Adds every entry of a list separated by any of seps. */
static int libpath__add_list(struct libpath *p, const char *list, const char *seps,
			     enum libpath_src src, const char *origin, const char *cwd)
{
	char dir[PATH_MAX];
	const char *s = list;
	int err = 0;

	for (;;) {
		size_t n = strcspn(s, seps);

		if (!libpath__expand(s, n, origin, cwd, dir, sizeof(dir)))
			err = libpath__add(p, dir, src);
		if (err || !s[n])
			break;
		s += n + 1;
	}
	return err;
}

/* Reads a whole (small) file of the target into a NUL-terminated buffer. */
static int libpath__slurp(const char *path, char **out, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = NULL, *nb;
	ssize_t k;
	int fd, err = 0;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (!buf || n + 1 >= cap) {
			cap = buf ? cap * 2 : cap;
			nb = realloc(buf, cap);
			if (!nb) {
				err = -ENOMEM;
				goto cleanup;
			}
			buf = nb;
		}
		k = read(fd, buf + n, cap - n - 1);
		if (k < 0) {
			err = -errno;
			goto cleanup;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	buf = NULL;
cleanup:
	free(buf);
	close(fd);
	return err;
}

/* LD_LIBRARY_PATH of the target's environment (NULL when absent). */
static int libpath__env(pid_t pid, char **out)
{
	char path[64], *env = NULL;
	size_t n = 0, i;
	int err;

	*out = NULL;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	err = libpath__slurp(path, &env, &n);
	if (err) {
		log_debug("%s: %s (LD_LIBRARY_PATH not known)", path, strerror(-err));
		return err == -ENOMEM ? err : 0;
	}
	for (i = 0; i < n; i += strlen(env + i) + 1)
		if (!strncmp(env + i, "LD_LIBRARY_PATH=", 16)) {
			*out = strdup(env + i + 16);
			err = *out ? 0 : -ENOMEM;
			break;
		}
	free(env);
	return err;
}

/* Appends a copy of s to the list *v (*n entries). */
static int libpath__push(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (!(nv[*n] = strdup(s)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* DT_RPATH and DT_RUNPATH strings of the ELF file at path (NULL if none),
 * and, when needed is not NULL, its DT_NEEDED names and then its program
 * interpreter (PT_INTERP), appended to *needed (*nneeded entries). Any
 * pointer may be NULL. An unreadable file or a non-ELF one has none. */
static int libpath__dt(const char *path, char **rpath, char **runpath, char ***needed,
		       size_t *nneeded)
{
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	GElf_Dyn d;
	Elf_Data *data;
	int fd, err = 0;
	size_t i, nph;

	pthread_once(&elf_once, libpath__init_libelf);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !elf_ok)
		goto cleanup;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			char **dst, *s;

			if (!gelf_getdyn(data, (int)i, &d) || d.d_tag == DT_NULL)
				break;
			if (d.d_tag == DT_NEEDED && needed) {
				s = elf_strptr(elf, sh.sh_link, d.d_un.d_val);
				if (s && (err = libpath__push(needed, nneeded, s)))
					goto cleanup;
				continue;
			}
			dst = d.d_tag == DT_RPATH ? rpath : d.d_tag == DT_RUNPATH ? runpath : NULL;
			s = dst && !*dst ? elf_strptr(elf, sh.sh_link, d.d_un.d_val) : NULL;
			if (s && !(*dst = strdup(s))) {
				err = -ENOMEM;
				goto cleanup;
			}
		}
	}
	/* The interpreter (ld.so) is mapped by the kernel, never named in
	 * the executable's DT_NEEDED, and is a library all the same. */
	for (i = 0; needed && elf && !elf_getphdrnum(elf, &nph) && i < nph; i++) {
		char buf[PATH_MAX];
		ssize_t k;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_INTERP || !ph.p_filesz ||
		    ph.p_filesz >= sizeof(buf))
			continue;
		k = pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset);
		if (k <= 0)
			continue;
		buf[k] = 0;
		if (buf[0] && (err = libpath__push(needed, nneeded, buf)))
			goto cleanup;
	}
cleanup:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return err;
}

int libpath__needed(const char *path, char ***names, size_t *n)
{
	int err;

	if (!path || !names || !n)
		return -EINVAL;
	*names = NULL;
	*n = 0;
	err = libpath__dt(path, NULL, NULL, names, n);
	if (err) {
		libpath__free_names(*names, *n);
		*names = NULL;
		*n = 0;
	}
	return err;
}

void libpath__free_names(char **names, size_t n)
{
	size_t i;

	for (i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

static int libpath__conf(struct libpath *p, const char *file, int depth);

/* "include PATTERN..." of an ld.so.conf file in directory dir. */
static int libpath__include(struct libpath *p, const char *dir, char *pats, int depth)
{
	char pat[PATH_MAX * 2], *sv = NULL, *w;
	size_t i, rl = strlen(p->root);
	int err = 0;

	for (w = strtok_r(pats, " \t", &sv); w && !err; w = strtok_r(NULL, " \t", &sv)) {
		glob_t g;

		if ((size_t)snprintf(pat, sizeof(pat), "%s%s%s%s", p->root, w[0] == '/' ? "" : dir,
				     w[0] == '/' ? "" : "/", w) >= sizeof(pat))
			continue;
		if (glob(pat, 0, NULL, &g) == 0)
			for (i = 0; i < g.gl_pathc && !err; i++)
				err = libpath__conf(p, g.gl_pathv[i] + rl, depth + 1);
		globfree(&g);
	}
	return err;
}

/* One line of an ld.so.conf file (comment already cut). */
static int libpath__conf_line(struct libpath *p, const char *dir, char *line, int depth)
{
	char *sv = NULL, *w;
	int err = 0;

	line += strspn(line, " \t");
	if (!strncmp(line, "include", 7) && (line[7] == ' ' || line[7] == '\t'))
		return libpath__include(p, dir, line + 8, depth);
	if (!strncmp(line, "hwcap", 5) && (line[5] == ' ' || line[5] == '\t'))
		return 0;
	for (w = strtok_r(line, " \t,:", &sv); w && !err; w = strtok_r(NULL, " \t,:", &sv)) {
		w[strcspn(w, "=")] = 0; /* old "dir=TYPE" */
		err = libpath__add(p, w, LIBPATH_LDSOCONF);
	}
	return err;
}

/* An ld.so.conf file, file as the target sees it. */
static int libpath__conf(struct libpath *p, const char *file, int depth)
{
	char path[PATH_MAX + 64], dir[PATH_MAX], *text = NULL, *line, *sv = NULL;
	size_t n;
	int err;

	if (depth > LDSOCONF_DEPTH)
		return 0;
	snprintf(path, sizeof(path), "%s%s", p->root, file);
	err = libpath__slurp(path, &text, &n);
	if (err) {
		log_debug("%s: %s", path, strerror(-err));
		return err == -ENOMEM ? err : 0;
	}
	snprintf(dir, sizeof(dir), "%s", file);
	*(strrchr(dir, '/') ? strrchr(dir, '/') : dir) = 0;
	for (line = strtok_r(text, "\n", &sv); line && !err; line = strtok_r(NULL, "\n", &sv)) {
		line[strcspn(line, "#")] = 0;
		err = libpath__conf_line(p, dir, line, depth);
	}
	free(text);
	return err;
}

/* Directories of the files in /proc/PID/maps, in the order first seen. */
static int libpath__mapped(struct libpath *p, pid_t pid)
{
	char path[64], line[PATH_MAX + 256];
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!err && fgets(line, sizeof(line), f)) {
		char *s = strchr(line, '/');

		if (!s || strstr(s, " (deleted)"))
			continue;
		s[strcspn(s, "\n")] = 0;
		*strrchr(s, '/') = 0;
		err = libpath__add(p, *s ? s : "/", LIBPATH_MAPPED);
	}
	fclose(f);
	return err;
}

/* Is pid our stopped child, held before its exec (still running our file)? */
static bool libpath__pre_exec(pid_t pid)
{
	char path[64], buf[512], *rp;
	struct stat a, b;
	char state = 0;
	int ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (pid == getpid() || stat(path, &a) || stat("/proc/self/exe", &b) ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')))
		sscanf(rp + 1, " %c %d", &state, &ppid);
	fclose(f);
	return ppid == getpid() && (state == 'T' || state == 't');
}

/* The executable: the file to read (open_path) and its directory as the
 * target sees it (origin). A process that runs already tells its own
 * (/proc/PID/exe: right inside containers too); exe is used for one held
 * before exec, or for pid <= 0. Returns 0, or -ENOENT when not known. */
static int libpath__exe(pid_t pid, const char *exe, bool pre_exec, char *open_path, char *origin,
			size_t len)
{
	char link[64];
	ssize_t n;

	if (pid > 0 && !pre_exec) {
		snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
		n = readlink(link, origin, len - 1);
		if (n <= 0 || origin[0] != '/')
			return -ENOENT;
		origin[n] = 0;
		snprintf(open_path, len, "%s", link);
	} else {
		if (!exe || len < PATH_MAX || !realpath(exe, origin))
			return -ENOENT;
		snprintf(open_path, len, "%s", exe);
	}
	*strrchr(origin, '/') = 0;
	if (!origin[0])
		snprintf(origin, len, "/");
	return 0;
}

/* The target's working directory (for relative entries), or NULL. */
static const char *libpath__cwd(pid_t pid, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	if (pid <= 0)
		return getcwd(buf, len);
	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	n = readlink(link, buf, len - 1);
	if (n <= 0 || buf[0] != '/')
		return NULL;
	buf[n] = 0;
	return buf;
}

/* Steps 1-3: RPATH, LD_LIBRARY_PATH, RUNPATH. Writes the executable's
 * directory into origin ("" when not known). */
static int libpath__dynamic(struct libpath *p, pid_t pid, const char *exe, char *origin,
			    size_t len)
{
	char open_path[PATH_MAX], cwd_buf[PATH_MAX];
	char *rpath = NULL, *runpath = NULL, *ldlp = NULL;
	const char *org = NULL, *cwd = libpath__cwd(pid, cwd_buf, sizeof(cwd_buf));
	int err = 0;

	origin[0] = 0;
	if (!libpath__exe(pid, exe, p->pre_exec, open_path, origin, len)) {
		org = origin;
		if (!(p->exe = strdup(open_path))) {
			err = -ENOMEM;
			goto cleanup;
		}
		err = libpath__dt(open_path, &rpath, &runpath, NULL, NULL);
		if (err)
			goto cleanup;
	} else {
		origin[0] = 0;
		p->exe_unknown = true;
	}
	if (pid > 0 && (err = libpath__env(pid, &ldlp)))
		goto cleanup;
	if (rpath && !runpath)
		err = libpath__add_list(p, rpath, ":", LIBPATH_RPATH, org, cwd);
	if (!err && ldlp)
		err = libpath__add_list(p, ldlp, ":;", LIBPATH_LD_LIBRARY_PATH, org, cwd);
	if (!err && runpath)
		err = libpath__add_list(p, runpath, ":", LIBPATH_RUNPATH, org, cwd);
cleanup:
	free(rpath);
	free(runpath);
	free(ldlp);
	return err;
}

int libpath__build(pid_t pid, const char *exe, struct libpath **out)
{
	char origin[PATH_MAX];
	struct libpath *p;
	size_t i;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (pid > 0) {
		snprintf(p->root, sizeof(p->root), "/proc/%d/root", (int)pid);
		p->pre_exec = libpath__pre_exec(pid);
	}
	err = libpath__dynamic(p, pid, exe, origin, sizeof(origin));
	if (!err)
		err = libpath__conf(p, "/etc/ld.so.conf", 0);
	if (!err && pid > 0 && !p->pre_exec)
		err = libpath__mapped(p, pid);
	if (!err && origin[0])
		err = libpath__add(p, origin, LIBPATH_EXE_DIR);
	for (i = 0; !err && i < sizeof(std_dirs) / sizeof(std_dirs[0]); i++)
		err = libpath__add(p, std_dirs[i], LIBPATH_STANDARD);
	if (err)
		goto cleanup;
	*out = p;
	p = NULL;
cleanup:
	libpath__free(p);
	return err;
}

const char *libpath__describe(const struct libpath *p, char *buf, size_t len)
{
	size_t i, o = 0;

	if (!buf || !len)
		return buf;
	buf[0] = 0;
	for (i = 0; p && i < p->n && o < len; i++) {
		bool first = !i || p->src[i] != p->src[i - 1];
		int k = snprintf(buf + o, len - o, "%s%s%s%s", first && i ? "; " : "",
				 first ? libpath__src_name(p->src[i]) : ":", first ? " " : "",
				 p->dirs[i]);

		o = k < 0 ? len : o + (size_t)k;
	}
	if (!p || !p->n)
		snprintf(buf, len, "nowhere");
	if (o >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
	return buf;
}

void libpath__free(struct libpath *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		free(p->dirs[i]);
	free(p->dirs);
	free(p->src);
	free(p->exe);
	free(p);
}
