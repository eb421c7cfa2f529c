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

/* ---- stack switchers -------------------------------------------------- */

/* A general register's bit (its 64-bit name; 32-bit names are the same
 * register), or 0 for any other register. */
static uint32_t gpr_bit(unsigned reg)
{
	static const unsigned r64[] = {X86_REG_RAX, X86_REG_RBX, X86_REG_RCX, X86_REG_RDX,
				       X86_REG_RSI, X86_REG_RDI, X86_REG_RBP, X86_REG_RSP,
				       X86_REG_R8,  X86_REG_R9,	 X86_REG_R10, X86_REG_R11,
				       X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15};
	static const unsigned r32[] = {X86_REG_EAX,  X86_REG_EBX,  X86_REG_ECX,	 X86_REG_EDX,
				       X86_REG_ESI,  X86_REG_EDI,  X86_REG_EBP,	 X86_REG_ESP,
				       X86_REG_R8D,  X86_REG_R9D,  X86_REG_R10D, X86_REG_R11D,
				       X86_REG_R12D, X86_REG_R13D, X86_REG_R14D, X86_REG_R15D};
	size_t i;

	for (i = 0; i < sizeof(r64) / sizeof(r64[0]); i++)
		if (reg == r64[i] || reg == r32[i])
			return 1u << i;
	return 0;
}

#define SW_SLOTS 32

/* rdi, rsi, rdx, rcx, r8, r9 as gpr_bit numbers them */
#define SW_ARGS (1u << 5 | 1u << 4 | 1u << 3 | 1u << 2 | 1u << 8 | 1u << 9)
/* and those a call may change: those, rax, r10, r11 */
#define SW_CLOBBERED (SW_ARGS | 1u << 0 | 1u << 10 | 1u << 11)

/* What a register can hold, for the question "may rsp be loaded from it
 * without leaving the own stack": */
enum sp_kind {
	SW_ADDR = 0, /* an address on the own stack: rsp or rbp, copied or offset */
	SW_VAL = 1,  /* that, or a word read from the own stack (a saved rsp) */
};

/*
 * Registers and memory slots (by their address expression) that hold one
 * or the other. For registers both in address order within a sweep
 * (written, cur: a register read after a write is judged by that write; an
 * argument register before any write holds an argument, e.g. boost's
 * jump_fcontext loads rsp from rdi and, after the switch, passes its old
 * rsp on in rdi) and anywhere in the function (regs: any other register
 * before its first write, for a restore laid out before its save).
 */
struct sp_taint {
	uint32_t regs[2], written, cur[2];
	x86_op_mem slot[SW_SLOTS]; /* words that got an SW_VAL value */
	size_t nslot;
	/* Registers holding rsp itself, copied or offset (mov, lea), not
	 * through rbp: what a switch saves to resume the stack later. Flow
	 * in address order within a sweep: a mov or lea of anything else
	 * clears a register's bit (V8's CEntry copies rsp to r10, then
	 * reuses r10 for an address it stores). */
	uint32_t sp_regs;
	bool saves; /* such a value stored outside the own stack, or xchg */
	bool grew;
};

static bool same_slot(const x86_op_mem *a, const x86_op_mem *b)
{
	return a->segment == b->segment && a->base == b->base && a->index == b->index &&
	       a->scale == b->scale && a->disp == b->disp;
}

static bool reg_is(const struct sp_taint *t, unsigned reg, enum sp_kind k)
{
	uint32_t b = gpr_bit(reg);

	if (is_sp(reg) || reg == X86_REG_RBP)
		return true;
	if (t->written & b)
		return t->cur[k] & b;
	return !(b & SW_ARGS) && (t->regs[k] & b);
}

/* The operand's value may be a saved rsp: SW_VAL in a register, a word of
 * the own stack (addressed from an SW_ADDR register), a slot that got one.
 * A switch takes its new rsp from elsewhere: an argument, a context or
 * thread structure, a global. */
static bool op_val(const struct sp_taint *t, const cs_x86_op *op)
{
	size_t i;

	if (op->type == X86_OP_REG)
		return reg_is(t, op->reg, SW_VAL);
	if (op->type != X86_OP_MEM)
		return false;
	if (reg_is(t, op->mem.base, SW_ADDR))
		return true;
	for (i = 0; i < t->nslot; i++)
		if (same_slot(&t->slot[i], &op->mem))
			return true;
	return false;
}

/* Register op is written: with an own-stack address (a), a value that may
 * be a saved rsp (v), or neither. */
static void reg_set(struct sp_taint *t, const cs_x86_op *op, bool a, bool v)
{
	uint32_t b = gpr_bit(op->reg);
	int k;

	if (op->type != X86_OP_REG || !b)
		return;
	t->written |= b;
	for (k = SW_ADDR; k <= SW_VAL; k++) {
		bool yes = k == SW_ADDR ? a : a || v;

		t->cur[k] = yes ? t->cur[k] | b : t->cur[k] & ~b;
		if (yes && !(t->regs[k] & b)) {
			t->regs[k] |= b;
			t->grew = true;
		}
	}
}

/* Memory word op gets a value that may be a saved rsp. */
static void slot_set(struct sp_taint *t, const cs_x86_op *op)
{
	if (op->type == X86_OP_MEM && !op_val(t, op) && t->nslot < SW_SLOTS) {
		t->slot[t->nslot++] = op->mem;
		t->grew = true;
	}
}

/* rsp itself, or a register that holds it (sp_regs). */
static bool is_sp_value(const struct sp_taint *t, unsigned reg)
{
	return is_sp(reg) || (gpr_bit(reg) & t->sp_regs);
}

/* reg now holds rsp (yes), or something else. Never rbp: the frame
 * pointer is where stack walkers look, not a saved stack. */
static void sp_copy(struct sp_taint *t, const cs_x86_op *dst, bool yes)
{
	uint32_t b = dst->type == X86_OP_REG ? gpr_bit(dst->reg) : 0;

	if (yes && dst->reg != X86_REG_RBP)
		t->sp_regs |= b;
	else
		t->sp_regs &= ~b;
}

/* Where the two kinds of saved rsp go: stored outside the own stack (into
 * a context, as every resumable switch does), or copied to a register. */
static void sp_flow(struct sp_taint *t, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *dst = &x->operands[0], *src = &x->operands[1];

	if (x->op_count != 2)
		return;
	if (in->id == X86_INS_LEA)
		sp_copy(t, dst, is_sp_value(t, src->mem.base) && src->mem.index == X86_REG_INVALID);
	if (in->id != X86_INS_MOV)
		return;
	if (dst->type == X86_OP_REG)
		sp_copy(t, dst, src->type == X86_OP_REG && is_sp_value(t, src->reg));
	else if (dst->type == X86_OP_MEM && src->type == X86_OP_REG && is_sp_value(t, src->reg) &&
		 !reg_is(t, dst->mem.base, SW_ADDR) && !t->saves)
		t->saves = t->grew = true;
}

/*
 * One instruction: spreads what registers and slots hold (mov, lea, cmov,
 * xchg, pop), and says whether it loads rsp from something that may not
 * be a saved rsp of the own stack.
 */
static bool sweep_one(struct sp_taint *t, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *dst = &x->operands[0], *src = &x->operands[1];
	bool to_sp = x->op_count >= 1 && dst->type == X86_OP_REG && is_sp(dst->reg);

	sp_flow(t, in);
	/* pop reads a word of the own stack: a DRAP register saved there
	 * comes back as it was (x265's determineLevel). pop %rsp, which no
	 * compiler emits, is taken for a load from elsewhere. */
	if (in->id == X86_INS_POP) {
		if (!to_sp && x->op_count == 1)
			reg_set(t, dst, false, true);
		return to_sp;
	}
	if (x->op_count != 2)
		return false;
	switch (in->id) {
	case X86_INS_LEA:
		if (to_sp)
			return !reg_is(t, src->mem.base, SW_VAL);
		reg_set(t, dst, reg_is(t, src->mem.base, SW_ADDR),
			reg_is(t, src->mem.base, SW_VAL));
		return false;
	case X86_INS_XCHG:
		if (to_sp || (src->type == X86_OP_REG && is_sp(src->reg))) {
			/* the old rsp lands in the other operand: saved */
			if (!t->saves)
				t->saves = t->grew = true;
			return !op_val(t, to_sp ? src : dst);
		}
		return false;
	case X86_INS_MOV:
	case X86_INS_CMOVA:
	case X86_INS_CMOVAE:
	case X86_INS_CMOVB:
	case X86_INS_CMOVBE:
	case X86_INS_CMOVE:
	case X86_INS_CMOVG:
	case X86_INS_CMOVGE:
	case X86_INS_CMOVL:
	case X86_INS_CMOVLE:
	case X86_INS_CMOVNE:
		if (to_sp)
			return !op_val(t, src);
		if (dst->type == X86_OP_REG)
			reg_set(t, dst, src->type == X86_OP_REG && reg_is(t, src->reg, SW_ADDR),
				op_val(t, src));
		else if (op_val(t, src))
			slot_set(t, dst);
		return false;
	default:
		return false;
	}
}

/*
 * Whether code[0..len) may hold an instruction that loads rsp from
 * anything but rbp (insn.h): a REX.W prefix without REX.R (rsp, not r12, as the
 * ModRM reg) before mov r/m64,r64 (8b), lea (8d), cmovcc (0f 4x) or xchg
 * (87) with ModRM reg 4, but for a load from the own stack (d(%rbp), an
 * address based on %rsp); mov r64,r/m64 (89) or xchg to register rsp
 * (REX.B clear, mod 3, rm 4) from any register but rbp.
 * Byte patterns, so data and misaligned reads may match too: it only
 * spares decoding the functions where none does (most: decoding every
 * function of libc with details is slow: docs/figures.md). Left out, for their
 * bytes are everywhere: pop %rsp (5c) and xchg %rax,%rsp (48 94, which
 * ModRM/SIB bytes of ordinary instructions spell).
 */
/* The memory operand at ModRM m[0] (REX.B clear) is d(%rbp) or based on
 * %rsp: a word of the function's own stack, never a switch's source. */
static bool stack_based(const uint8_t *m, size_t len)
{
	uint8_t mod = m[0] >> 6, rm = m[0] & 7;

	if (mod == 3)
		return false;
	if (rm == 5)
		return mod != 0;		      /* mod 0: rip-relative */
	return rm == 4 && len > 1 && (m[1] & 7) == 4; /* SIB base rsp */
}

bool insn__may_switch_stack(const uint8_t *c, size_t len)
{
	size_t i;

	for (i = 0; i + 2 < len; i++) {
		uint8_t rex = c[i], op = c[i + 1], m = c[i + 2];
		bool w = (rex & 0xf8) == 0x48; /* REX.W, any R/X/B */

		if (!w)
			continue;
		if (!(rex & 4) && (op == 0x8b || op == 0x8d || op == 0x87) && ((m >> 3) & 7) == 4 &&
		    !((op == 0x8b || op == 0x8d) && !(rex & 1) &&
		      stack_based(c + i + 2, len - i - 2)) &&
		    !(op == 0x8b && !(rex & 1) && (m & 0xc7) == 0xc5)) /* mov %rbp,%rsp (8b) */
			return true;
		if (!(rex & 1) && (op == 0x89 || op == 0x87) && (m & 0xc7) == 0xc4 &&
		    !(op == 0x89 && !(rex & 4) && ((m >> 3) & 7) == 5)) /* mov %rbp,%rsp */
			return true;
		if (!(rex & 4) && op == 0x0f && i + 3 < len && (m & 0xf0) == 0x40 &&
		    ((c[i + 3] >> 3) & 7) == 4)
			return true;
	}
	return false;
}

int insn__switches_stack(struct insn_dec *d, const uint8_t *code, size_t len, uint64_t addr,
			 bool *yes)
{
	struct sp_taint t = {0};
	int sweep;

	if (!d || !code || !yes)
		return -EINVAL;
	*yes = false;
	if (!insn__may_switch_stack(code, len))
		return 0;
	/* What registers hold anywhere in the function (regs) and the slots
	 * only grow, so sweeping until they stop growing makes the layout of
	 * the blocks (a restore placed before its save) not matter; then one
	 * more sweep judges the loads of rsp. A switch both
	 * saves the stack it leaves and loads another: a load alone is a
	 * jump that abandons its stack (longjmp, V8's CEntry to an exception
	 * handler up the same stack), which the kernel's list follows. */
	for (sweep = 0; sweep < 8; sweep++) {
		const uint8_t *p = code;
		uint64_t a = addr;
		size_t left = len;
		bool judge = !t.grew && sweep > 0;

		t.grew = false;
		t.sp_regs = t.written = t.cur[SW_ADDR] = t.cur[SW_VAL] = 0;
		while (left && cs_disasm_iter(d->h, &p, &left, &a, d->scratch)) {
			const cs_insn *in = d->scratch;

			/* saved into a context, or carried in a register to
			 * the other side (boost's jump_fcontext returns the
			 * old rsp in rax) */
			if (sweep_one(&t, in) && judge && (t.saves || t.sp_regs)) {
				*yes = true;
				return 0;
			}
			/* a call clobbers the caller-saved registers; after a
			 * jmp or ret the next instruction is reached from
			 * elsewhere, with what the registers held there */
			if (has_group(in->detail, X86_GRP_CALL)) {
				t.written |= SW_CLOBBERED;
				t.cur[SW_ADDR] &= ~SW_CLOBBERED;
				t.cur[SW_VAL] &= ~SW_CLOBBERED;
				t.sp_regs &= ~SW_CLOBBERED;
			} else if (in->id == X86_INS_JMP || has_group(in->detail, X86_GRP_RET) ||
				   in->id == X86_INS_UD2 || in->id == X86_INS_HLT) {
				t.written = t.cur[SW_ADDR] = t.cur[SW_VAL] = t.sp_regs = 0;
			}
		}
		if (judge)
			break;
	}
	return 0;
}

/*
 * Whether code[0..len) may hold an instruction that reads the function's
 * return address (insn.h): a memory operand (%rsp) with no displacement,
 * d(%rsp) with d a positive multiple of 8 (the word above what was pushed
 * since the entry), 8(%rbp) or 16(%rbp) (above a frame pointer), or a pop
 * as the first instruction (after an endbr64). Byte patterns: a spill
 * reload matches too, a decoder decides.
 */
bool insn__may_read_return_address(const uint8_t *c, size_t len)
{
	size_t i = 0;

	if (len >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
		i = 4;
	if (i < len && ((c[i] >= 0x58 && c[i] <= 0x5f) ||
			(c[i] == 0x41 && i + 1 < len && c[i + 1] >= 0x58 && c[i + 1] <= 0x5f)))
		return true;
	for (i = 0; i + 2 < len; i++) {
		uint8_t m = c[i], mod = m >> 6, rm = m & 7;

		if (rm == 4 && mod != 3 && c[i + 1] == 0x24) {
			if (mod == 0)
				return true;
			if (mod == 1 && i + 2 < len && c[i + 2] && !(c[i + 2] & 0x87))
				return true; /* 8..120, a multiple of 8 */
			if (mod == 2 && i + 5 < len && !(c[i + 2] & 7) && !(c[i + 5] & 0x80))
				return true;
		} else if (rm == 5 && mod == 1 && (c[i + 1] == 8 || c[i + 1] == 16)) {
			return true;
		}
	}
	return false;
}

/* Where rsp and rbp are, as bytes below the entry's rsp (the return
 * address's word is at depth 0), where known. */
struct ra_state {
	int64_t depth, rbp;
	bool depth_known, rbp_known;
};

/* The memory operand op addresses the return address's word. */
static bool ra_word(const struct ra_state *s, const cs_x86_op *op)
{
	if (op->type != X86_OP_MEM || op->mem.index != X86_REG_INVALID ||
	    op->mem.segment != X86_REG_INVALID)
		return false;
	if (op->mem.base == X86_REG_RSP)
		return s->depth_known && op->mem.disp == s->depth;
	return op->mem.base == X86_REG_RBP && s->rbp_known && op->mem.disp == s->rbp;
}

/* What one instruction does to rsp and rbp. */
static void ra_step(struct ra_state *s, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *dst = &x->operands[0], *src = &x->operands[1];
	bool to_sp = x->op_count >= 1 && dst->type == X86_OP_REG && is_sp(dst->reg);
	bool to_bp = x->op_count >= 1 && dst->type == X86_OP_REG && dst->reg == X86_REG_RBP;

	/* xchg writes both: OpenSSL's AES_cbc_encrypt swaps rsp with r15 */
	if (in->id == X86_INS_XCHG && x->op_count == 2 && src->type == X86_OP_REG) {
		to_sp = to_sp || is_sp(src->reg);
		to_bp = to_bp || src->reg == X86_REG_RBP;
		if (to_sp)
			s->depth_known = false;
		if (to_bp)
			s->rbp_known = false;
		return;
	}
	switch (in->id) {
	case X86_INS_PUSH:
	case X86_INS_PUSHFQ:
		s->depth += 8;
		return;
	case X86_INS_ENTER:
		s->depth_known = s->rbp_known = false;
		return;
	case X86_INS_SYSCALL:
		/* clone's child comes back on its new stack */
		s->depth_known = false;
		return;
	case X86_INS_POP:
	case X86_INS_POPFQ:
		s->depth -= 8;
		if (to_sp)
			s->depth_known = false;
		if (to_bp)
			s->rbp_known = false;
		return;
	case X86_INS_LEAVE:
		s->depth = s->rbp - 8;
		s->depth_known = s->rbp_known;
		s->rbp_known = false;
		return;
	case X86_INS_CALL:
	case X86_INS_CMP:
	case X86_INS_TEST:
		return;
	default:
		break;
	}
	if (to_sp) {
		if ((in->id == X86_INS_SUB || in->id == X86_INS_ADD) && x->op_count == 2 &&
		    src->type == X86_OP_IMM)
			s->depth += in->id == X86_INS_SUB ? src->imm : -src->imm;
		else if (in->id == X86_INS_LEA && src->mem.base == X86_REG_RSP &&
			 src->mem.index == X86_REG_INVALID)
			s->depth -= src->mem.disp;
		else if (in->id == X86_INS_LEA && src->mem.base == X86_REG_RBP &&
			 src->mem.index == X86_REG_INVALID) {
			/* an epilogue: lea -0x28(%rbp),%rsp */
			s->depth = s->rbp - src->mem.disp;
			s->depth_known = s->rbp_known;
		} else if (in->id == X86_INS_MOV && src->type == X86_OP_REG &&
			   src->reg == X86_REG_RBP) {
			s->depth = s->rbp;
			s->depth_known = s->rbp_known;
		} else
			s->depth_known = false;
	} else if (to_bp) {
		if (in->id == X86_INS_MOV && src->type == X86_OP_REG && is_sp(src->reg)) {
			s->rbp = s->depth;
			s->rbp_known = s->depth_known;
		} else if (in->id == X86_INS_LEA && src->mem.base == X86_REG_RSP &&
			   src->mem.index == X86_REG_INVALID) {
			s->rbp = s->depth - src->mem.disp;
			s->rbp_known = s->depth_known;
		} else
			s->rbp_known = false;
	}
}

#define RA_TARGETS 64

/* A move of any width (mov, movq, movups, vmovdqa, ...): its first
 * operand is only written. */
static bool is_move(const cs_insn *in)
{
	return !strncmp(in->mnemonic, "mov", 3) || !strncmp(in->mnemonic, "vmov", 4);
}

int insn__reads_return_address(struct insn_dec *d, const uint8_t *code, size_t len, uint64_t addr,
			       bool *yes)
{
	struct {
		uint64_t at;
		struct ra_state s;
	} tg[RA_TARGETS];
	struct ra_state s = {.depth_known = true};
	const uint8_t *p = code;
	uint64_t a = addr;
	size_t left = len, ntg = 0, i;

	if (!d || !code || !yes)
		return -EINVAL;
	*yes = false;
	if (!insn__may_read_return_address(code, len))
		return 0;
	while (left && cs_disasm_iter(d->h, &p, &left, &a, d->scratch)) {
		const cs_insn *in = d->scratch;
		const cs_x86 *x = &in->detail->x86;
		uint8_t k;

		/* reached by a branch seen earlier: its state */
		if (!s.depth_known && !s.rbp_known)
			for (i = 0; i < ntg; i++)
				if (tg[i].at == in->address)
					s = tg[i].s;
		if ((in->id == X86_INS_POP || in->id == X86_INS_POPFQ) && s.depth_known &&
		    s.depth == 0) {
			*yes = true;
			return 0;
		}
		/* any operand but a plain store's destination reads it; lea
		 * only computes an address; a locked add or or of 0 there is a
		 * memory fence (HotSpot's, on the top of its stack) */
		for (k = 0;
		     in->id != X86_INS_LEA && x->prefix[0] != X86_PREFIX_LOCK && k < x->op_count;
		     k++)
			if (ra_word(&s, &x->operands[k]) && !(k == 0 && is_move(in))) {
				*yes = true;
				return 0;
			}
		ra_step(&s, in);
		if (has_group(in->detail, X86_GRP_JUMP) && in->id != X86_INS_JMP &&
		    x->op_count == 1 && x->operands[0].type == X86_OP_IMM && ntg < RA_TARGETS &&
		    (s.depth_known || s.rbp_known)) {
			tg[ntg].at = (uint64_t)x->operands[0].imm;
			tg[ntg++].s = s;
		}
		if (in->id == X86_INS_JMP || has_group(in->detail, X86_GRP_RET) ||
		    in->id == X86_INS_UD2 || in->id == X86_INS_HLT)
			s.depth_known = s.rbp_known = false;
	}
	return 0;
}
