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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <capstone/capstone.h>

#include "user/elf/insn.h"
#include "user/elf/insn_int.h"

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

/*
 * The kernel's instruction rules for uprobes on x86-64 (6.18,
 * arch/x86/kernel/uprobes.c), applied to the bytes the way its decoder
 * (arch/x86/lib/insn.c) splits them: legacy prefixes, a REX prefix, then
 * either a VEX/EVEX prefix (c4, c5, 62: always one in 64-bit mode) and one
 * opcode byte, or the opcode (0f escapes: two or three bytes).
 *   uprobe_init_insn():  a prefix es/cs/ss/ds (26 2e 36 3e, so 'notrack'
 *       too) or lock (f0) is refused (is_prefix_bad); so is mov to %ss or
 *       pop %ss (insn_masking_exception: 8e /2, 17); then the first opcode
 *       byte must be in good_insns_64 below, or a two-byte opcode's second
 *       byte in good_2byte_insns (in 64-bit mode 0f itself is good, so
 *       every 0f opcode passes). A VEX/EVEX instruction's opcode byte is
 *       looked up in good_insns_64 as it is: vmovd (c5 f9 6e) reads as 6e,
 *       'outs', which is why __strchr_avx2 and its kin are refused.
 *   branch_setup_xol_ops(): a jmp/call/jcc rel with an operand-size
 *       prefix (66) is refused; nops are emulated first, so 66 90 ('xchg
 *       %ax,%ax') goes in (measured on 6.18, tests/targets/insns.c).
 *   insn_decode() failing: bytes that do not decode (capstone's verdict
 *       stands in for the kernel's decoder and opcode map).
 * And one the kernel accepts but gets wrong (insn__kernel_skips): a
 * VEX/EVEX instruction whose opcode byte is that of a jcc (70-7f), call
 * or jmp rel (e8 e9 eb) passes the table and branch_setup_xol_ops then
 * takes it for that branch: the probe "emulates" it by jumping over it,
 * and the instruction never runs (measured on 6.18: vpcmpeqb c5 f1 74 c1
 * under a probe leaves %xmm0 unchanged). Such a site is never probed.
 * Bit i of row r (one row per 16 opcodes): opcode r*16+i is good.
 */
static const uint16_t good_insns_64[16] = {
	/* 0 1 2 3 4 5 6 7 8 9 a b c d e f, bit 0 first */
	0xbf3f, /* 00: 06 07 0e bad */
	0x3f3f, /* 10: 16 17 1e 1f bad */
	0x7f7f, /* 20: 27 2f bad */
	0x7f7f, /* 30: 37 3f bad */
	0xffff, /* 40 */
	0xffff, /* 50 */
	0x0ff8, /* 60: 60 61 62 6c-6f bad */
	0xffff, /* 70 */
	0xfffb, /* 80: 82 bad */
	0xfbff, /* 90: 9a bad */
	0xffff, /* a0 */
	0xffff, /* b0 */
	0x0fff, /* c0: cc-cf bad */
	0xff8f, /* d0: d4 d5 d6 bad */
	0x0b0f, /* e0: e4-e7 ea ec-ef bad */
	0xf3ed, /* f0: f1 f4 fa fb bad */
};

static const uint16_t good_2byte_insns[16] = {
	0xf41c, /* 00: 00 01 05-09 0b bad */
	0xffff, /* 10 */
	0xffff, /* 20 */
	0xff4e, /* 30: 30 34 35 37 bad */
	0xffff, /* 40 */
	0xffff, /* 50 */
	0xffff, /* 60 */
	0xfcff, /* 70: 78 79 bad */
	0xffff, /* 80 */
	0xffff, /* 90 */
	0xbfff, /* a0: ae bad */
	0xffff, /* b0 */
	0xffff, /* c0 */
	0xffff, /* d0 */
	0xffff, /* e0 */
	0xffff, /* f0 */
};

static bool bit(const uint16_t *t, uint8_t op)
{
	return (t[op >> 4] >> (op & 15)) & 1;
}

/* What branch_setup_xol_ops() takes for jmp, call or jcc rel (by the
 * opcode bytes alone, VEX or not). */
static bool is_branch_opcode(uint8_t op1, size_t nop, uint8_t op2)
{
	return op1 == 0xeb || op1 == 0xe9 || op1 == 0xe8 || (op1 >= 0x70 && op1 <= 0x7f) ||
	       (op1 == 0x0f && nop == 2 && op2 >= 0x80 && op2 <= 0x8f);
}

bool insn__kernel_refuses(const uint8_t *b, size_t len)
{
	bool bad_prefix = false, opsize = false;
	size_t i = 0, nop = 1;
	uint8_t op1, op2 = 0, modrm;

	for (; i < len; i++) {
		switch (b[i]) {
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0xf0:
			bad_prefix = true;
			continue;
		case 0x66:
			opsize = true;
			continue;
		case 0x64: case 0x65: case 0x67: case 0xf2: case 0xf3:
			continue;
		default:
			break;
		}
		break;
	}
	if (i < len && (b[i] & 0xf0) == 0x40)
		i++; /* REX */
	if (i >= len)
		return true;
	if (b[i] == 0xc5 || b[i] == 0xc4 || b[i] == 0x62) {
		/* VEX2, VEX3, EVEX: one opcode byte after 2, 3 or 4 bytes. */
		i += b[i] == 0xc5 ? 2 : b[i] == 0xc4 ? 3 : 4;
		if (i >= len)
			return true;
		op1 = b[i++];
	} else {
		op1 = b[i++];
		if (op1 == 0x0f) {
			if (i >= len)
				return true;
			op2 = b[i++];
			nop = op2 == 0x38 || op2 == 0x3a ? 3 : 2;
			if (nop == 3)
				i++;
		}
	}
	if (bad_prefix)
		return true;
	modrm = i < len ? b[i] : 0;
	if (op1 == 0x17 || (op1 == 0x8e && ((modrm >> 3) & 7) == 2))
		return true;
	if (!bit(good_insns_64, op1) && !(nop == 2 && bit(good_2byte_insns, op2)))
		return true;
	/* branch_setup_xol_ops(): branches are emulated, never with 66. */
	if (opsize && is_branch_opcode(op1, nop, op2))
		return true;
	return false;
}

bool insn__kernel_skips(const uint8_t *b, size_t len)
{
	size_t i = 0;

	while (i < len && (b[i] == 0x26 || b[i] == 0x2e || b[i] == 0x36 || b[i] == 0x3e ||
			   b[i] == 0xf0 || b[i] == 0x66 || b[i] == 0x64 || b[i] == 0x65 ||
			   b[i] == 0x67 || b[i] == 0xf2 || b[i] == 0xf3))
		i++;
	if (i < len && (b[i] & 0xf0) == 0x40)
		i++;
	if (i >= len || (b[i] != 0xc5 && b[i] != 0xc4 && b[i] != 0x62))
		return false;
	i += b[i] == 0xc5 ? 2 : b[i] == 0xc4 ? 3 : 4;
	return i < len && is_branch_opcode(b[i], 1, 0) && !insn__kernel_refuses(b, len);
}

/* Why a site cannot be probed (insn.h), or INSN_PROBE_OK. */
static enum insn_verdict verdict(const cs_insn *in)
{
	if (insn__kernel_refuses(in->bytes, in->size))
		return INSN_KERNEL_REFUSES;
	if (insn__kernel_skips(in->bytes, in->size))
		return INSN_KERNEL_SKIPS;
	return INSN_PROBE_OK;
}

/* "mnemonic operands [bytes]" into out (always terminated). */
static void describe(const cs_insn *in, char *out, size_t len)
{
	size_t k, n = (size_t)snprintf(out, len, "%s%s%s [", in->mnemonic, in->op_str[0] ? " " : "",
				       in->op_str);

	for (k = 0; k < in->size && n + 4 < len; k++)
		n += (size_t)snprintf(out + n, len - n, k ? " %02x" : "%02x", in->bytes[k]);
	if (n + 1 < len)
		snprintf(out + n, len - n, "]");
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

/* insn__decode and, without what a sweep does not read (text, sp use,
 * memory references, verdict and class), insn__scan. */
static int decode(struct insn_dec *d, const uint8_t *code, size_t len, uint64_t addr,
		  struct insn *out, bool whole)
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
	out->verdict = INSN_UNDECODABLE;
	in = d->scratch;
	if (!cs_disasm_iter(d->h, &p, &left, &a, in)) {
		size_t k, n = 0;

		for (k = 0; k < len && k < 8 && n + 4 < sizeof(out->text); k++)
			n += (size_t)snprintf(out->text + n, sizeof(out->text) - n,
					      k ? " %02x" : "(bad) [%02x", code[k]);
		if (n + 1 < sizeof(out->text))
			snprintf(out->text + n, sizeof(out->text) - n, "]");
		return -ENOEXEC;
	}
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
	if (!whole)
		return 0;
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
	describe(in, out->text, sizeof(out->text));
	out->verdict = verdict(in);
	if (out->verdict != INSN_PROBE_OK)
		out->cls = INSN_REFUSED;
	else if (is_nop5(in))
		out->cls = INSN_NOP5;
	else if (emulated(in))
		out->cls = INSN_EMULATED;
	else
		out->cls = INSN_SSTEP;
	return 0;
}

int insn__decode(struct insn_dec *d, const uint8_t *code, size_t len, uint64_t addr,
		 struct insn *out)
{
	return decode(d, code, len, addr, out, true);
}

int insn__scan(struct insn_dec *d, const uint8_t *code, size_t len, uint64_t addr,
	       struct insn *out)
{
	return decode(d, code, len, addr, out, false);
}

const char *insn__verdict_name(enum insn_verdict v)
{
	switch (v) {
	case INSN_PROBE_OK:
		return "probe ok";
	case INSN_KERNEL_REFUSES:
		return "refused by the kernel's uprobe rules";
	case INSN_KERNEL_SKIPS:
		return "the kernel would skip it (a VEX/EVEX opcode taken for a branch)";
	case INSN_UNDECODABLE:
	default:
		return "does not decode";
	}
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
