/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/elf/dwarf — the source file and line of functions, from DWARF
 * debug information read with libdw (elfutils): for `-l`, the JSON
 * function objects and pprof's Function.filename / start_line.
 *
 * The DWARF is the binary's own (.debug_info) or its separate debug file
 * (the one its symbols came from, else the one user/elf/debuglink.h finds:
 * build id, .gnu_debuglink, a container's /usr/lib/debug). A function's
 * line is where its definition's name is, DW_AT_decl_file/decl_line of
 * the subprogram DIE at its entry address (through DW_AT_specification
 * and DW_AT_abstract_origin: C++ members, out-of-line copies of inline
 * functions); where no such DIE starts at that address (assembly with
 * line info only), the line table's row at the entry address.
 *
 * Only the compilation units that hold a queried function are read (found
 * through .debug_aranges), so the cost follows the functions traced, not
 * the size of the binary's debug information.
 *
 * Threads: any thread; a result is immutable once made.
 */
#ifndef USER_ELF_DWARF_H
#define USER_ELF_DWARF_H

#include <stddef.h>
#include <stdint.h>

#include "user/elf/syms.h"

struct srcline {
	const char *file; /* absolute path as compiled (lexically normalized), or NULL */
	uint32_t line;	  /* 0 when unknown */
};

struct srclines {
	struct srcline *v; /* n entries: v[i] for the query's i-th function */
	size_t n;
	size_t found;	   /* entries with a file */
	char *from;	   /* the file whose DWARF was read, or NULL when none has any */
	char **files_;	   /* private: the distinct file names */
	size_t nfiles_, capfiles_;
};

struct dwarf_file;

/*
 * Opens the file that holds st's DWARF: st's own binary, or its separate
 * debug file (the one its symbols came from, else debuglink's). Cheap (an
 * ELF's section headers); keeps the file open, so its DWARF can be read
 * later even when its path is gone (/proc/PID/root of a process that
 * exited). *out is NULL when no file has DWARF (not an error).
 * Returns 0, -EINVAL, -ENOMEM. Memory: close with dwarf__close.
 */
int dwarf__open(const struct symtab *st, struct dwarf_file **out);
void dwarf__close(struct dwarf_file *df);

/*
 * The source location of the functions st->syms[idx[0..n)] (idx as
 * syms__select makes it; NULL with n 0), read from df (dwarf__open of the
 * same st; NULL: none). Writes to *out a result with n entries, all
 * unknown without DWARF or when it cannot be read (not an error; -v says
 * why). Returns 0, -EINVAL (NULL argument), or -ENOMEM.
 * Memory: the caller frees *out with dwarf__free.
 */
int dwarf__lines_in(struct dwarf_file *df, const struct symtab *st, const size_t *idx, size_t n,
		    struct srclines **out);

/* dwarf__open, dwarf__lines_in, dwarf__close: at once. */
int dwarf__lines(const struct symtab *st, const size_t *idx, size_t n, struct srclines **out);

/* Releases s. Accepts NULL. */
void dwarf__free(struct srclines *s);

/*
 * Lexically normalizes the absolute or relative path p in place: "//",
 * "/./" and "dir/../" are removed ("/b/string/../sysdeps/x.S" becomes
 * "/b/sysdeps/x.S"); a ".." that would climb above the start is kept.
 * Returns p. Any thread.
 */
char *dwarf__normalize(char *p);

#endif /* USER_ELF_DWARF_H */
