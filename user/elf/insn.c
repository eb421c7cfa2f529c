// SPDX-License-Identifier: BSD-2-Clause
/*
 * Cost classes of uprobe sites (see insn.h). The rules follow what the
 * kernel's arch/x86/kernel/uprobes.c does with the instruction under the
 * breakpoint: branch_setup_xol_ops() emulates call/jmp/jcc with a relative
 * target unless an operand-size (0x66) prefix is present, push_setup_xol_ops()
 * emulates push of a 64-bit general register (0x50-0x57, optionally REX.B
 * 0x41), nops are emulated, and a 5-byte nop is what 6.18 optimizes into a
 * call. Everything else is copied out of line and single-stepped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <capstone/capstone.h>

#include "user/elf/insn.h"

struct insn_dec {
	csh h;
	cs_insn *scratch; /* one instruction, reused by cs_disasm_iter */
};

int insn__open(struct insn_dec **out)
{
	struct insn_dec *d;
	int err = 0;

	if (!out)
		return -EINVAL;
	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &d->h) != CS_ERR_OK) {
		free(d);
		return -EINVAL;
	}
	/* Details give groups, operands and implicit register writes. */
	if (cs_option(d->h, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK) {
		err = -EINVAL;
		goto cleanup;
	}
	d->scratch = cs_malloc(d->h);
	if (!d->scratch) {
		err = -ENOMEM;
		goto cleanup;
	}
	*out = d;
	return 0;
cleanup:
	insn__close(d);
	return err;
}

void insn__close(struct insn_dec *d)
{
	if (!d)
		return;
	if (d->scratch)
		cs_free(d->scratch, 1);
	cs_close(&d->h);
	free(d);
}

static bool is_sp(unsigned reg)
{
	return reg == X86_REG_RSP || reg == X86_REG_ESP || reg == X86_REG_SP || reg == X86_REG_SPL;
}

static bool has_group(const cs_detail *dt, unsigned g)
{
	uint8_t i;

	for (i = 0; i < dt->groups_count; i++)
		if (dt->groups[i] == g)
			return true;
	return false;
}

/* Any explicit or implicit mention of the stack pointer. */
static bool mentions_sp(csh h, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	cs_regs rd, wr;
	uint8_t nr = 0, nw = 0, i;

	for (i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_REG && is_sp(op->reg))
			return true;
		if (op->type == X86_OP_MEM && (is_sp(op->mem.base) || is_sp(op->mem.index)))
			return true;
	}
	if (cs_regs_access(h, in, rd, &nr, wr, &nw) == CS_ERR_OK) {
		for (i = 0; i < nr; i++)
			if (is_sp(rd[i]))
				return true;
		for (i = 0; i < nw; i++)
			if (is_sp(wr[i]))
				return true;
	}
	return false;
}

static bool refused(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	/* The kernel's is_prefix_bad(): lock and the es/cs/ss/ds overrides. */
	if (x->prefix[0] == X86_PREFIX_LOCK)
		return true;
	switch (x->prefix[1]) {
	case X86_PREFIX_ES:
	case X86_PREFIX_CS:
	case X86_PREFIX_SS:
	case X86_PREFIX_DS:
		return true;
	default:
		break;
	}
	switch (in->id) {
	case X86_INS_INT3:
	case X86_INS_INT:
	case X86_INS_INTO:
	case X86_INS_HLT:
	case X86_INS_IN:
	case X86_INS_OUT:
	case X86_INS_INSB:
	case X86_INS_OUTSB:
		return true;
	default:
		return has_group(in->detail, X86_GRP_PRIVILEGE);
	}
}

static bool emulated(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const uint8_t *b = in->bytes;

	switch (in->id) {
	case X86_INS_NOP:
		return true;
	case X86_INS_PUSH:
		return (in->size == 1 && b[0] >= 0x50 && b[0] <= 0x57) ||
		       (in->size == 2 && b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57);
	case X86_INS_LOOP:
	case X86_INS_LOOPE:
	case X86_INS_LOOPNE:
	case X86_INS_JCXZ:
	case X86_INS_JECXZ:
	case X86_INS_JRCXZ:
		return false; /* relative, but not among the emulated opcodes */
	default:
		break;
	}
	if (!has_group(in->detail, X86_GRP_BRANCH_RELATIVE) || x->op_count != 1 ||
	    x->operands[0].type != X86_OP_IMM)
		return false;
	/* branch_setup_xol_ops() gives up on an operand-size prefix. */
	return x->prefix[2] != X86_PREFIX_OPSIZE;
}

static bool is_nop5(const cs_insn *in)
{
	static const uint8_t nop5[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};

	return in->size == 5 && !memcmp(in->bytes, nop5, 5);
}

/* The addresses an instruction's operands name (struct insn ref_*). */
static void refs(const cs_insn *in, struct insn *out)
{
	const cs_x86 *x = &in->detail->x86;
	uint8_t i;

	for (i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP)
			out->ref_rip = in->address + in->size + (uint64_t)op->mem.disp;
		else if (op->type == X86_OP_MEM && op->mem.base == X86_REG_INVALID)
			out->ref_rip = (uint64_t)op->mem.disp; /* absolute, or a table base */
		else if (op->type == X86_OP_IMM)
			out->ref_imm = (uint64_t)op->imm;
	}
}

int insn__decode(struct insn_dec *d, const uint8_t *code, size_t len, uint64_t addr,
		 struct insn *out)
{
	const uint8_t *p = code;
	uint64_t a = addr;
	size_t left = len;
	const cs_detail *dt;
	cs_insn *in;

	if (!d || !code || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->addr = addr;
	out->cls = INSN_REFUSED;
	in = d->scratch;
	if (!cs_disasm_iter(d->h, &p, &left, &a, in))
		return -ENOEXEC;
	dt = in->detail;
	out->len = (uint8_t)in->size;
	out->flow = has_group(dt, X86_GRP_JUMP) || has_group(dt, X86_GRP_CALL) ||
		    has_group(dt, X86_GRP_RET) || has_group(dt, X86_GRP_IRET) ||
		    has_group(dt, X86_GRP_INT) || in->id == X86_INS_SYSCALL ||
		    in->id == X86_INS_UD2;
	out->is_call = has_group(dt, X86_GRP_CALL);
	out->no_fallthrough = in->id == X86_INS_JMP || has_group(dt, X86_GRP_RET) ||
			      has_group(dt, X86_GRP_IRET) || in->id == X86_INS_UD2 ||
			      in->id == X86_INS_HLT || in->id == X86_INS_INT3;
	out->padding = in->id == X86_INS_NOP || in->id == X86_INS_INT3;
	if ((has_group(dt, X86_GRP_JUMP) || has_group(dt, X86_GRP_CALL)) &&
	    dt->x86.op_count == 1 && dt->x86.operands[0].type == X86_OP_IMM) {
		out->direct_branch = true;
		out->target = (uint64_t)dt->x86.operands[0].imm;
	} else if (has_group(dt, X86_GRP_JUMP)) {
		out->indirect_jump = true;
	}
	out->uses_sp = mentions_sp(d->h, in);
	if (!out->padding && !out->direct_branch)
		refs(in, out);
	if (in->id == X86_INS_PUSH && dt->x86.op_count == 1 && dt->x86.operands[0].type == X86_OP_REG &&
	    dt->x86.operands[0].size == 8) {
		out->sp_known = true;
		out->sp_sub = 8;
	} else if (in->id == X86_INS_SUB && dt->x86.op_count == 2 &&
		   dt->x86.operands[0].type == X86_OP_REG && dt->x86.operands[0].reg == X86_REG_RSP &&
		   dt->x86.operands[1].type == X86_OP_IMM && dt->x86.operands[1].imm > 0 &&
		   dt->x86.operands[1].imm < (1 << 20)) {
		out->sp_known = true;
		out->sp_sub = (uint32_t)dt->x86.operands[1].imm;
	}
	if (refused(in))
		out->cls = INSN_REFUSED;
	else if (is_nop5(in))
		out->cls = INSN_NOP5;
	else if (emulated(in))
		out->cls = INSN_EMULATED;
	else
		out->cls = INSN_SSTEP;
	return 0;
}

const char *insn__class_name(enum insn_class c)
{
	switch (c) {
	case INSN_NOP5:
		return "nop5";
	case INSN_EMULATED:
		return "emulated";
	case INSN_SSTEP:
		return "single-step";
	case INSN_REFUSED:
	default:
		return "refused";
	}
}

double insn__cost_ns(enum insn_class c)
{
	switch (c) {
	case INSN_NOP5:
		return 290;
	case INSN_EMULATED:
		return 650;
	case INSN_SSTEP:
		return 12500;
	default:
		return 0;
	}
}
