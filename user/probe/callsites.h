/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/callsites — functions whose calls can be counted at their call sites.
 *
 * A function whose first instruction is single-stepped (~12 us a hit) can
 * still be counted at emulated cost (~0.6 us): a `call rel32` naming it is
 * an emulated instruction, and if every way into the function is such a
 * call, the calls counted at those sites are exactly its entries. That is
 * only true when the function's address never escapes, which this module
 * decides for the whole ELF file, conservatively (any doubt = escapes):
 *
 *   1. every sized function is decoded (capstone) from its start; a direct
 *      call to F is a call site when it is a plain 5-byte `e8 rel32` (an
 *      emulated instruction); a direct jump or conditional jump to F (a tail
 *      call, a loop back to the entry), a prefixed call, or any operand
 *      naming F (a rip-relative or absolute memory operand, an immediate:
 *      `lea f(%rip)`, `mov $f,%edi`) means escape;
 *   2. the bytes of executable sections no decoded function covers (PLT,
 *      _start, assembly without .size, undecodable tails), unless they are
 *      padding only (nops, int3), are read raw: every 4-byte window as a
 *      rel32 ending 0-4 bytes later, as a 32- and 64-bit address, and every
 *      short jump's target; any hit on F means escape;
 *   3. every allocated data section (init arrays, .dynamic, a non-PIE's
 *      pointers, RELR-packed slots) is read as 64-bit values, for ET_EXEC
 *      also 32-bit, at every byte offset (ET_EXEC: packed structs too) or
 *      every aligned one (PIE: a pointer needs a relocation, rule 4): a hit
 *      means escape;
 *   4. every RELA relocation whose addend, or symbol value plus addend, is
 *      F (a PIE's pointers to it) means escape;
 *   5. F in .dynsym (another object may call it), F the ELF entry point,
 *      F with an indirect jump in its own body (a jump table could target
 *      its entry), F's body not fully decoded, or code before F that may
 *      fall into it (the previous instruction, past any padding, is not a
 *      jmp/ret/ud2/hlt/call), all mean escape;
 *   6. a stripped binary (no .symtab: rule 1 cannot see all code) is not
 *      analysed at all.
 * A function with no call site at all stays at its entry (it may be dead
 * code; a probe there costs nothing).
 *
 * Threads: a scan result is immutable; any thread may read it.
 */
#ifndef USER_CALLSITES_H
#define USER_CALLSITES_H

#include <stddef.h>
#include <stdint.h>

#include "user/elf/syms.h"

enum callsites_verdict {
	CALLSITES_OK = 0,	/* only direct calls: count at the sites */
	CALLSITES_NO_CALLS,	/* no reference at all: keep the entry */
	CALLSITES_JUMPED,	/* a direct jump targets the entry */
	CALLSITES_ADDRESS,	/* its address is taken (code or data) */
	CALLSITES_EXPORTED,	/* in .dynsym, or the ELF entry point */
	CALLSITES_BODY,		/* indirect jump or undecodable bytes in it */
	CALLSITES_FALLTHROUGH,	/* code before it may run into it */
	CALLSITES_NOT_ANALYSED, /* stripped binary, or not a candidate */
};

struct callsites;

/*
 * Scans st->path for every reference to the functions st->syms[cand[i]],
 * i < n (see the rules above). Returns 0 and *out (free with
 * callsites__free), or -EINVAL (NULL argument), -ENOMEM, -ENOEXEC (not an
 * ELF libelf can read), or the -errno of opening or mapping the file.
 * Threads: any thread.
 */
int callsites__scan(const struct symtab *st, const size_t *cand, size_t n, struct callsites **out);

/*
 * The verdict on st->syms[sym]; with CALLSITES_OK, *offs receives the file
 * offsets of its call sites (ascending, owned by cs) and *n their number
 * (> 0). Threads: any thread.
 */
enum callsites_verdict callsites__find(const struct callsites *cs, size_t sym,
				       const uint64_t **offs, size_t *n);

/* Short reason for --plan -v ("address taken", ...). Static strings. */
const char *callsites__verdict_name(enum callsites_verdict v);

/* Frees; NULL is fine. */
void callsites__free(struct callsites *cs);

#endif /* USER_CALLSITES_H */
