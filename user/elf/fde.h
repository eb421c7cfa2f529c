/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A stripped binary's functions, from its unwind tables: every function
 * a C or C++ compiler emits has a Frame Description Entry in .eh_frame
 * (start, size), kept by strip because unwinders (exceptions, backtraces,
 * perf's DWARF unwinding) need it at run time. user/elf/syms.c names them
 * BINARY+0xADDRESS where no symbol names them.
 *
 * The reader trusts nothing: every length and pointer is checked against
 * the section, encodings it does not know make an entry skipped, never
 * guessed. Any thread; no state.
 */
#ifndef USER_ELF_FDE_H
#define USER_ELF_FDE_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

/* A function's link-time addresses, [start, end). */
struct fde_range {
	uint64_t start, end;
};

/*
 * The ranges of elf's FDEs that lie in its code (executable sections, not
 * the PLT's nor .init/.fini, whose code is not functions) and start with
 * a function's entry frame (CFA = rsp + 8: not a fragment such as a
 * .cold part, entered by a jump mid-function), sorted by start, one per
 * start. Returns 0 and *out (the caller frees it) with its
 * length in *n; -ENODATA when elf has no .eh_frame; -ENOMEM.
 */
int fde__ranges(Elf *elf, struct fde_range **out, size_t *n);

#endif /* USER_ELF_FDE_H */
