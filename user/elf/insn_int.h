/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What insn.c (cost classes) and insn_flow.c (stack switches, return
 * address reads) share: the decoder. Not a public API.
 */
#ifndef USER_ELF_INSN_INT_H
#define USER_ELF_INSN_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <capstone/capstone.h>

struct insn_dec {
	csh h;
	cs_insn *scratch; /* one instruction, reused by cs_disasm_iter */
};

/* Whether reg is the stack pointer (any width), and whether an
 * instruction is in capstone group g. */
static inline bool is_sp(unsigned reg)
{
	return reg == X86_REG_RSP || reg == X86_REG_ESP || reg == X86_REG_SP || reg == X86_REG_SPL;
}

static inline bool has_group(const cs_detail *dt, unsigned g)
{
	uint8_t i;

	for (i = 0; i < dt->groups_count; i++)
		if (dt->groups[i] == g)
			return true;
	return false;
}

#endif /* USER_ELF_INSN_INT_H */
