/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/insn — what a uprobe on one x86-64 instruction costs, decided with
 * capstone (Debian's libcapstone), never by hand-decoding bytes.
 *
 * The kernel handles a breakpoint in one of three ways (DESIGN.md, measured
 * on 6.18): it replaces a 5-byte nop with a call to a trampoline (~0.3 us,
 * INSN_NOP5), it emulates push reg, call/jmp/jcc rel and nop (~0.6 us,
 * INSN_EMULATED), or it single-steps any other instruction out of line
 * (~12 us, INSN_SSTEP). Some instructions it refuses outright
 * (INSN_REFUSED, verdict INSN_KERNEL_REFUSES): by the rules of its
 * arch/x86/kernel/uprobes.c, spelled out in insn.c (prefixes lock and
 * es/cs/ss/ds, which includes 'notrack'; opcodes outside its good_insns_64
 * table, which VEX/EVEX instructions such as vmovd reach through their
 * opcode byte; 66-prefixed branches); a multi-uprobe link fails as a whole
 * on one of those. A few it accepts but would skip instead of running
 * (INSN_KERNEL_SKIPS): never probed either, or the target would be harmed.
 *
 * Threads: a decoder is used by one thread at a time; several decoders may
 * be used concurrently.
 */
#ifndef USER_INSN_H
#define USER_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum insn_class {
	INSN_NOP5 = 0,	   /* 0f 1f 44 00 00: the kernel's optimized path */
	INSN_EMULATED = 1, /* push reg, call/jmp/jcc rel, nop */
	INSN_SSTEP = 2,	   /* single-stepped out of line */
	INSN_REFUSED = 3,  /* uprobes reject it, or it does not decode */
	INSN__NCLASS = 4,
};

/* Whether a uprobe may go on the instruction, and why not. */
enum insn_verdict {
	INSN_PROBE_OK = 0,
	INSN_KERNEL_REFUSES = 1, /* the kernel refuses the probe (ENOTSUPP) */
	INSN_KERNEL_SKIPS = 2,	 /* accepted, but "emulated" as a branch: it would
				    never run (VEX/EVEX opcode 70-7f, e8, e9, eb) */
	INSN_UNDECODABLE = 3,	 /* the bytes do not decode (the kernel: ENOEXEC) */
};

struct insn {
	uint64_t addr;	     /* address it was decoded at */
	uint64_t target;     /* branch target when direct_branch */
	uint8_t len;	     /* bytes; 0 when it did not decode */
	enum insn_class cls; /* cost class of a uprobe placed on it */
	enum insn_verdict verdict; /* cls is INSN_REFUSED unless INSN_PROBE_OK */
	/* "mnemonic operands [bytes]" (capstone's Intel syntax), or
	 * "(bad) [bytes]" when it did not decode: what -v shows */
	char text[64];
	bool direct_branch;  /* call/jmp/jcc/loop with an immediate target */
	bool indirect_jump;  /* jmp through a register or memory */
	bool flow;	     /* any control transfer: jump, call, ret, int, syscall */
	bool is_call;	     /* a call (direct or not) */
	/* Execution never continues at the next instruction: jmp, ret, ud2,
	 * hlt, int3 (a call is not one: it returns there). */
	bool no_fallthrough;
	bool padding; /* nop of any length, or int3: what pads between functions */
	/* Addresses the instruction names besides a branch target: the
	 * address of a rip-relative or absolute memory operand (ref_rip) and
	 * an immediate (ref_imm, as an absolute address in a non-PIE could be
	 * one); 0 = none. A nop's operand names nothing. */
	uint64_t ref_rip, ref_imm;
	/* Mentions the stack pointer (operand, address, or implicit write:
	 * push, pop, call, ret, leave, enter...): it may move rsp. */
	bool uses_sp;
	/* sp_known: the instruction's only effect on rsp is to subtract
	 * sp_sub bytes (push reg: 8, sub $imm,%rsp: imm). */
	bool sp_known;
	uint32_t sp_sub;
};

struct insn_dec;

/* Opens a 64-bit x86 decoder. Returns 0 and *out (the caller frees it with
 * insn__close), or -ENOMEM / -EINVAL when capstone cannot be opened. */
int insn__open(struct insn_dec **out);

/* Frees a decoder; NULL is fine. */
void insn__close(struct insn_dec *d);

/*
 * Decodes the one instruction at code[0..len), which sits at address addr.
 * Returns 0 and fills *out; or -ENOEXEC when the bytes do not decode (then
 * out->len = 0 and out->cls = INSN_REFUSED), -EINVAL for a NULL argument.
 */
int insn__decode(struct insn_dec *d, const uint8_t *code, size_t len, uint64_t addr,
		 struct insn *out);

/*
 * insn__decode for a sweep over whole functions: fills len, flow,
 * is_call, no_fallthrough, padding, direct_branch, target and
 * indirect_jump only (the rest zero: no text, no verdict, cls
 * INSN_REFUSED), which costs ~40% less (the text alone is a formatted
 * string per instruction). Same returns.
 */
int insn__scan(struct insn_dec *d, const uint8_t *code, size_t len, uint64_t addr,
	       struct insn *out);

/*
 * The kernel's rules on one instruction's bytes b[0..len) (len: at least
 * the instruction; more is fine), as insn.c spells them out:
 * insn__kernel_refuses says whether attaching a uprobe there fails;
 * insn__kernel_skips whether the kernel accepts it but would jump over
 * the instruction instead of running it. Pure functions, any thread.
 */
bool insn__kernel_refuses(const uint8_t *b, size_t len);
bool insn__kernel_skips(const uint8_t *b, size_t len);

/*
 * Whether the function whose code is code[0..len) (at address addr)
 * switches stacks and can be switched back to: it loads rsp from a value
 * that cannot be a saved rsp of its own stack (not rsp or rbp, a copy or
 * an offset of them, nor a word read from its own stack), while the old
 * rsp is kept for the way back: stored outside its own stack, exchanged,
 * or held in a register at the load (boost's jump_fcontext hands it over
 * in rax). swapcontext, libco's coctx_swap, boost's jump_fcontext and any
 * hand-written coroutine switch do; a compiler's epilogue after alloca,
 * a variable-length array or a stack realignment (it restores a saved
 * rsp) does not, nor a jump that only loads rsp (longjmp, setcontext,
 * V8's CEntry to an exception handler). Registers are followed in
 * address order (a call clobbers the caller-saved ones; after a jmp or
 * ret the state is what it is anywhere in the function), memory by
 * address expression. Decoding stops at bytes that do not decode (what
 * came before still counts). Writes the answer to *yes. Returns 0, or
 * -EINVAL for a NULL argument. Threads: as the decoder.
 */
int insn__switches_stack(struct insn_dec *d, const uint8_t *code, size_t len, uint64_t addr,
			 bool *yes);

/*
 * A byte-pattern sieve for insn__switches_stack, which calls it first: false
 * when code[0..len) cannot hold an instruction that loads rsp from anything
 * but rbp or its own stack (no decoder needed: node's 78,000 functions
 * leave 133 to decode). Pure, any thread.
 */
bool insn__may_switch_stack(const uint8_t *code, size_t len);

/*
 * Whether the function whose code is code[0..len) (at address addr) reads
 * its own return address: an operand (other than a plain store's
 * destination) at the word the entry's rsp pointed at, addressed from rsp
 * (pushes, pops and rsp adjustments followed in address order; a
 * conditional branch's target gets the state at the branch, and after a
 * jmp or ret an instruction no branch named is not judged) or from rbp
 * once it holds a known offset of rsp (a frame pointer), or a pop of it.
 * With a return probe such a function reads the kernel's trampoline
 * instead: setjmp and getcontext keep it for a later jump back (glibc's,
 * musl's, Free Pascal's fpc_setjmp), dlsym and dlopen take their caller
 * from it, mcount hands it to the profiler. Writes the answer to *yes.
 * Returns 0, or -EINVAL for a NULL argument. Threads: as the decoder.
 */
int insn__reads_return_address(struct insn_dec *d, const uint8_t *code, size_t len, uint64_t addr,
			       bool *yes);

/*
 * A byte-pattern sieve for insn__reads_return_address, which calls it
 * first: false when code[0..len) has no memory operand that could be the
 * return address's word and does not start with a pop. Pure, any thread.
 */
bool insn__may_read_return_address(const uint8_t *code, size_t len);

/* Why not (enum insn_verdict), in words. Static strings. */
const char *insn__verdict_name(enum insn_verdict v);

/* "nop5", "emulated", "single-step", "refused". Static strings. */
const char *insn__class_name(enum insn_class c);

/* Estimated cost in ns of one uprobe hit on an instruction of class c
 * (DESIGN.md's measurements); 0 for INSN_REFUSED (never probed). */
double insn__cost_ns(enum insn_class c);

#endif /* USER_INSN_H */
