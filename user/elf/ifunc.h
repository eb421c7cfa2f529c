/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/elf/ifunc — the implementation an IFUNC symbol resolves to.
 *
 * An STT_GNU_IFUNC symbol (memcpy, strlen, memchr in glibc) names a
 * resolver: the dynamic loader calls it once, at relocation time, and
 * writes the address it returns (the variant for this CPU, e.g.
 * __memmove_avx_unaligned_erms) into the GOT slots of the program and of
 * the library itself. A probe on the symbol's address counts the
 * resolver's calls, not the program's: the implementation is what must be
 * probed.
 *
 * The answer is read where the loader wrote it, never guessed:
 *  1. The library's own R_X86_64_IRELATIVE relocations (its internal calls
 *     to its IFUNCs) name each resolver in their addend; in a process that
 *     maps the file and has been relocated, the slot holds the resolver's
 *     choice. Read from /proc/PID/mem of the target when it maps the file
 *     (-p; a launched target held before exec is a fork of cabbpf, whose
 *     own mapping is read then), else of cabbpf itself when it maps the
 *     same file (same device and inode) and the target's GLIBC_TUNABLES
 *     (which can mask CPU features) is cabbpf's.
 *  2. For an IFUNC the library never calls itself (no IRELATIVE slot), the
 *     loader's own symbol resolution in cabbpf (dlsym on the already
 *     loaded library, same file and tunables as above).
 * The resolver's choice depends on the file, the CPU and those tunables
 * only, which is why cabbpf's own relocation of the same file with the
 * same tunables on the same machine gives the target's answer.
 *
 * Threads: the loader's main thread (dlopen/dlsym of the calling process).
 */
#ifndef USER_ELF_IFUNC_H
#define USER_ELF_IFUNC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "user/elf/syms.h"

/* impl[i] of an IFUNC whose resolver chose code outside the file (time and
 * gettimeofday: the vDSO's). */
#define IFUNC_OUTSIDE UINT64_MAX

/*
 * For every IFUNC entry st->syms[i] (ifunc set), impl[i] receives the
 * link-time virtual address, in st's file, of the implementation process
 * pid runs; IFUNC_OUTSIDE when that is not in the file; 0 where it could
 * not be determined (and for non-IFUNC entries). impl has st->nsyms elements, owned by the caller.
 * Returns the number of IFUNC entries resolved, or -errno (-EINVAL,
 * -ENOMEM; an unreadable file or process is not an error: those entries
 * stay 0).
 */
int ifunc__resolve(pid_t pid, const struct symtab *st, uint64_t *impl);

/*
 * Applies ifunc__resolve to a selection idx[0..*n) of st (indices, as
 * syms__select makes them): every IFUNC entry is replaced by the
 * implementation process pid runs, labelled "NAME (IMPLEMENTATION)";
 * entries that end up on one function (memcpy and memmove both run
 * __memmove_avx_unaligned_erms, or the implementation was selected too)
 * become one, labelled with every IFUNC name ("memcpy, memmove
 * (__memmove_avx_unaligned_erms)"): one probe per address, or each call
 * would count twice. An IFUNC whose implementation is not a function of
 * st (the vDSO's) or cannot be determined is left out, with one warning
 * naming them (what: the file's name in it): its resolver is not what the
 * program calls. Rewrites idx and *n (ascending); *labels receives NULL
 * (no IFUNC selected) or an array of *n (after) entries, each NULL or a
 * label, all owned by the caller (free each, then the array). Returns 0,
 * -ENOMEM, or -ENOENT when nothing is left. The loader's main thread.
 */
int ifunc__redirect(pid_t pid, const struct symtab *st, const char *what, size_t *idx,
		    size_t *n, char ***labels);

#endif /* USER_ELF_IFUNC_H */
