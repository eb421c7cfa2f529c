/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/libs — functions of the target's shared libraries, selected with
 * -f 'LIB:GLOB' (e.g. 'libc.so.6:malloc', 'libc:*' for every function).
 *
 * LIB is resolved to a file this process can open, in order:
 *   1. a path (contains '/'): taken inside the target's root;
 *   2. a file mapped by the target (/proc/PID/maps) whose name is LIB, or
 *      starts with LIB followed by '.' or '-' ("libc" finds libc.so.6);
 *      one deleted or replaced on disk since (a package upgrade) as
 *      /proc/PID/map_files/START-END: the file the target runs;
 *   3. a file named LIB, LIB.so, LIB.so.*, or LIB-*.so (an ELF file, not a
 *      linker script) in the directories the target's dynamic loader would
 *      search (user/proc/libpath.h), the first directory that has one wins:
 *      a. DT_RPATH of the executable (only without DT_RUNPATH, as ld.so);
 *      b. LD_LIBRARY_PATH of the target's environment (/proc/PID/environ);
 *      c. DT_RUNPATH of the executable ($ORIGIN, ${ORIGIN} expanded to the
 *         executable's directory, in a-c);
 *      d. /etc/ld.so.conf and the files it includes;
 *      e. the directories of the files the target has mapped;
 *      f. the executable's own directory;
 *      g. the standard library directories;
 *      every one of them inside /proc/PID/root (a container's or chroot's
 *      files, not the host's).
 * A path under /proc/PID/root is used unless the same path here reaches the
 * same inode (then the plain path, for readable reports). A command launched
 * with `--` is held before its exec, so its maps are still cabbpf's: rules 2
 * and 3e are skipped for it, and its RUNPATH/RPATH/$ORIGIN come from the exe
 * argument of the _exe variants (without it, a, c and f are skipped).
 * When nothing is found, the error names LIB, every directory looked in,
 * and suggests `-f /path/to/LIB.so:GLOB`. Names that reach one file
 * (device and inode) are one library. A library found that the target has
 * not mapped and its executable does not link (DT_NEEDED, through its
 * libraries, and the interpreter) is loaded all the same, with a warning:
 * it counts only if the program dlopens it.
 *
 * Libraries the target loads later with dlopen: uprobes are bound to the
 * file (inode), and the kernel installs them whenever the file gets mapped,
 * so a library resolved by rule 3 before the target opens it is counted from
 * its first instruction once dlopen maps it (its constructors included).
 * Limit: a library that exists nowhere on disk when cabbpf starts (written
 * later, or in a directory the target computes at run time) is not found,
 * and a name is only looked up once, at start.
 *
 * Threads: the loader's main thread.
 */
#ifndef USER_LIBS_H
#define USER_LIBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "user/probe/plan.h"
#include "user/elf/syms.h"

struct lib {
	char *path;	   /* file to load symbols from and to probe */
	char *name;	   /* LIB as the user wrote it (its file name if a path) */
	struct symtab *st; /* its functions */
	size_t *idx, n;	   /* selected functions (indices into st->syms) */
	struct plan *plan; /* where their probes go */
	char **fnames;	   /* "LIB:function" per selected function */
};

struct libs {
	struct lib *v;
	size_t nlibs;
	size_t nfuncs; /* selected functions over all libraries */
};

/* Is glob a library selector (LIB:GLOB)? */
bool libs__is_selector(const char *glob);

/*
 * Resolves LIB for process pid (see above) into buf, with exe the file a
 * target held before exec will run (NULL: not known; a running process's
 * own /proc/PID/exe counts anyway). Returns 0, -ENOENT (not found),
 * -ENAMETOOLONG, -EINVAL, -ENOMEM. Caller owns buf. Threads: the loader's
 * main thread.
 */
int libs__resolve_exe(pid_t pid, const char *exe, const char *lib, char *buf, size_t len);

/* libs__resolve_exe(pid, NULL, lib, buf, len). */
int libs__resolve(pid_t pid, const char *lib, char *buf, size_t len);

/*
 * Loads every library named by the LIB:GLOB selectors among globs[0..n),
 * selects its functions (several selectors of one library add up) and
 * plans their probes with po. A selector is LIB:GLOB when it has a ':'
 * after its first character that is not part of a "::": "ns::Foo::*" and
 * "::bar" are C++ names for the executable, "libstdc++:std::vector*" is
 * GLOB "std::vector*" in libstdc++.
 * Patterns that match nothing: when globs holds one pattern only, that is
 * an error (-ENOENT, logged). With several, each LIB:GLOB that matches no
 * function of LIB is named in a warning ("-f 'libc:zzz*' matches no
 * function of /lib/.../libc.so.6", or that it names only fragments), and a
 * library none of whose selectors matches is left out: *out may then hold
 * no library (nfuncs 0), and the caller decides whether the run has
 * anything to trace (the executable's patterns may have matched).
 * Returns 0 and *out (NULL when no selector; free with libs__free), or
 * -errno after logging which selector failed: -ENOENT (library not found,
 * or the only pattern matches nothing), or syms/plan errors.
 */
int libs__load(pid_t pid, const char *const *globs, size_t n, const struct plan_opts *po,
	       struct libs **out);

/*
 * libs__load with exe, the executable a target held before exec will run
 * (its RUNPATH/RPATH and $ORIGIN; see libs__resolve_exe), or that a
 * running target runs (its /proc/PID/exe counts then). With exe, a library
 * the target neither maps nor links is said in a warning (see above);
 * libs__load (exe NULL: one image of a cgroup among many) says nothing.
 * Same returns and ownership; the loader's main thread.
 */
int libs__load_exe(pid_t pid, const char *exe, const char *const *globs, size_t n,
		   const struct plan_opts *po, struct libs **out);

/*
 * Writes the probe offset, report name, file and sp correction of every
 * selected library function into offsets[i], names[i], binaries[i],
 * sp_delta[i] for i in [0, l->nfuncs). The strings belong to l. l may be
 * NULL (nothing written).
 */
void libs__fill(const struct libs *l, uint64_t *offsets, const char **names, const char **binaries,
		uint32_t *sp_delta);

/* --plan output of every library (as plan__print). */
void libs__print(FILE *f, const struct libs *l, const char *analyzers, bool per_site);

/* Frees; NULL is fine. */
void libs__free(struct libs *l);

#endif /* USER_LIBS_H */
