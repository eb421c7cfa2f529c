// SPDX-License-Identifier: BSD-2-Clause
/*
 * Sweeps over a function's instructions for what the guard must watch
 * (insn.h): whether it switches stacks, whether it reads its own return
 * address. The cost classes of probe sites are insn.c's; both share the
 * decoder (insn_int.h).
 */
#include <errno.h>
#include <string.h>

#include "user/elf/insn.h"
#include "user/elf/insn_int.h"

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
