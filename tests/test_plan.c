// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit suite of user/insn (cost classes) and user/plan (probe placement).
 * The placement rules are checked on real compiler output: tests/data/
 * plan_corpus.c built with gcc and clang at -O0..-O3, with and without
 * -fcf-protection, and every probe the plan moves is re-checked against
 * objdump's disassembly (an independent decoder): the moved-over
 * instructions are straight-line and never touch the stack pointer, the
 * site is an instruction boundary, nothing in the binary jumps into the
 * skipped range or to the site, and a site that is not a push sits in a
 * function without indirect jumps. No root needed.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/elf/insn.h"
#include "user/proc/libs.h"
#include "user/probe/plan.h"
#include "user/elf/syms.h"

/* The class of the instruction b[0..n) at 0x1000, *out its decoding; and
 * insn__scan (the sweep's decoder) agrees on every field it fills. */
static enum insn_class cls_of(const uint8_t *b, size_t n, struct insn *out)
{
	struct insn_dec *d = NULL;
	struct insn in, sc;
	int rc, src;

	ck_assert_int_eq(insn__open(&d), 0);
	rc = insn__decode(d, b, n, 0x1000, &in);
	if (rc)
		in.cls = INSN_REFUSED;
	src = insn__scan(d, b, n, 0x1000, &sc);
	ck_assert_int_eq(src, rc);
	ck_assert_uint_eq(sc.len, in.len);
	ck_assert(sc.flow == in.flow && sc.is_call == in.is_call &&
		  sc.no_fallthrough == in.no_fallthrough && sc.padding == in.padding &&
		  sc.direct_branch == in.direct_branch && sc.indirect_jump == in.indirect_jump);
	ck_assert_uint_eq(sc.target, in.target);
	if (!rc)
		ck_assert_str_eq(sc.text, "");
	insn__close(d);
	if (out)
		*out = in;
	return in.cls;
}

#define CLS(...)                                                                                   \
	({                                                                                         \
		static const uint8_t b_[] = {__VA_ARGS__};                                         \
		cls_of(b_, sizeof(b_), &in);                                                       \
	})

START_TEST(classes_of_known_bytes)
{
	struct insn in;

	ck_assert_int_eq(CLS(0x0f, 0x1f, 0x44, 0x00, 0x00), INSN_NOP5);
	ck_assert_int_eq(CLS(0x55), INSN_EMULATED); /* push %rbp */
	ck_assert(in.uses_sp && !in.flow);
	ck_assert_int_eq(CLS(0x41, 0x54), INSN_EMULATED); /* push %r12 */
	ck_assert_int_eq(CLS(0x90), INSN_EMULATED);
	ck_assert_int_eq(CLS(0x66, 0x90), INSN_EMULATED);
	ck_assert_int_eq(CLS(0x0f, 0x1f, 0x40, 0x00), INSN_EMULATED); /* nopl 0(%rax) */
	ck_assert_int_eq(CLS(0xe8, 0x10, 0, 0, 0), INSN_EMULATED);    /* call rel32 */
	ck_assert(in.direct_branch && in.target == 0x1015 && in.flow);
	ck_assert_int_eq(CLS(0xe9, 0, 1, 0, 0), INSN_EMULATED); /* jmp rel32 */
	ck_assert_int_eq(CLS(0xeb, 0xfe), INSN_EMULATED);	/* jmp rel8 */
	ck_assert(in.direct_branch && in.target == 0x1000);
	ck_assert_int_eq(CLS(0x74, 0x05), INSN_EMULATED);	      /* je rel8 */
	ck_assert_int_eq(CLS(0x0f, 0x84, 0, 1, 0, 0), INSN_EMULATED); /* je rel32 */
	ck_assert_int_eq(CLS(0xe2, 0x05), INSN_SSTEP);		      /* loop: not emulated */
	ck_assert_int_eq(CLS(0xf3, 0x0f, 0x1e, 0xfa), INSN_SSTEP);    /* endbr64 */
	ck_assert(!in.uses_sp && !in.flow);
	ck_assert_int_eq(CLS(0x48, 0x83, 0xec, 0x08), INSN_SSTEP); /* sub $8,%rsp */
	ck_assert(in.uses_sp);
	ck_assert_int_eq(CLS(0x48, 0x89, 0xe5), INSN_SSTEP); /* mov %rsp,%rbp */
	ck_assert(in.uses_sp);
	ck_assert_int_eq(CLS(0x48, 0x89, 0xf8), INSN_SSTEP); /* mov %rdi,%rax */
	ck_assert(!in.uses_sp && !in.flow);
	ck_assert_int_eq(CLS(0xc3), INSN_SSTEP); /* ret */
	ck_assert(in.flow && in.uses_sp);
	ck_assert_int_eq(CLS(0xff, 0xe0), INSN_SSTEP); /* jmp *%rax */
	ck_assert(in.indirect_jump && in.flow);
	ck_assert_int_eq(CLS(0xf0, 0x48, 0x0f, 0xb1, 0x17), INSN_REFUSED); /* lock cmpxchg */
	ck_assert_int_eq(CLS(0x3e, 0xff, 0xe0), INSN_REFUSED);		   /* notrack jmp */
	ck_assert_int_eq(CLS(0xcc), INSN_REFUSED);			   /* int3 */
	ck_assert_int_eq(CLS(0xf4), INSN_REFUSED);			   /* hlt */
	ck_assert_int_eq(CLS(0x0f, 0x05), INSN_SSTEP);			   /* syscall */
	ck_assert(in.flow);
	ck_assert_int_eq(CLS(0x06), INSN_REFUSED); /* invalid in 64-bit mode */
}
END_TEST

#define REFUSES(...)                                                                               \
	({                                                                                         \
		static const uint8_t r_[] = {__VA_ARGS__};                                         \
		insn__kernel_refuses(r_, sizeof(r_));                                              \
	})
#define SKIPS(...)                                                                                 \
	({                                                                                         \
		static const uint8_t s_[] = {__VA_ARGS__};                                         \
		insn__kernel_skips(s_, sizeof(s_));                                                \
	})

/* The kernel's uprobe rules (arch/x86/kernel/uprobes.c, 6.18; user/elf/insn.c),
 * one case per rule, and the verdict and text the plan shows with -v. */
START_TEST(kernel_uprobe_rules)
{
	struct insn in;
	unsigned op;

	/* is_prefix_bad: es cs ss ds lock, anywhere among the prefixes */
	ck_assert(REFUSES(0x26, 0x48, 0x8b, 0x07));
	ck_assert(REFUSES(0x2e, 0x48, 0x8b, 0x07));
	ck_assert(REFUSES(0x36, 0x48, 0x8b, 0x07));
	ck_assert(REFUSES(0x3e, 0xff, 0xe0)); /* notrack jmp *%rax */
	ck_assert(REFUSES(0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0)); /* cs nopw */
	ck_assert(REFUSES(0xf0, 0x48, 0x01, 0x37));
	ck_assert(!REFUSES(0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0)); /* fs: is fine */
	ck_assert(!REFUSES(0xf3, 0x0f, 0x1e, 0xfa));			   /* endbr64 */
	/* insn_masking_exception: mov to %ss */
	ck_assert(REFUSES(0x8e, 0xd0));
	ck_assert(!REFUSES(0x8e, 0xd8)); /* mov to %ds: the table's 8e is good */
	/* good_insns_64, one-byte opcodes */
	ck_assert(REFUSES(0xcc));
	ck_assert(REFUSES(0xcd, 0x80));
	ck_assert(REFUSES(0xf4));
	ck_assert(REFUSES(0xfa));
	ck_assert(REFUSES(0xec));
	ck_assert(REFUSES(0x6c));
	ck_assert(REFUSES(0x9a)); /* invalid in 64-bit mode */
	ck_assert(!REFUSES(0x55));
	ck_assert(!REFUSES(0xc3));
	ck_assert(!REFUSES(0x48, 0x89, 0xf8));
	/* 0f is good in 64-bit mode: every two-byte opcode passes, even those
	 * good_2byte_insns marks (syscall, ud2) */
	ck_assert(!REFUSES(0x0f, 0x05));
	ck_assert(!REFUSES(0x0f, 0x0b));
	ck_assert(!REFUSES(0x0f, 0x38, 0x00, 0xc1)); /* pshufb: three bytes */
	/* VEX/EVEX: the opcode byte after the prefix is looked up as is */
	ck_assert(REFUSES(0xc5, 0xf9, 0x6e, 0xc6));	       /* vmovd: 6e ('outs') */
	ck_assert(REFUSES(0xc5, 0xfe, 0x6f, 0x0f));	       /* vmovdqu load: 6f */
	ck_assert(REFUSES(0x62, 0xf1, 0x7d, 0x48, 0x6f, 0x07)); /* EVEX vmovdqa32 */
	ck_assert(REFUSES(0xc4, 0xe2, 0x7d, 0x17, 0xc1));	/* vptest: 17 */
	ck_assert(!REFUSES(0xc5, 0xf8, 0x28, 0xc1));	       /* vmovaps: 28 */
	ck_assert(!REFUSES(0xc4, 0xe2, 0x7d, 0x58, 0xc0));      /* vpbroadcastd: 58 */
	/* branches with an operand-size prefix; nops are emulated first */
	ck_assert(REFUSES(0x66, 0xe9, 0x10, 0x00));
	ck_assert(REFUSES(0x66, 0x74, 0x05));
	ck_assert(REFUSES(0x66, 0x0f, 0x84, 0x10, 0x00));
	ck_assert(!REFUSES(0x66, 0x90));
	ck_assert(!REFUSES(0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00));
	/* the table row by row: a one-byte opcode with no prefix and a modrm
	 * byte is refused exactly where the table has a 0 */
	for (op = 0; op < 256; op++) {
		static const char bad[] = {0x06, 0x07, 0x0e, 0x16, 0x17, 0x1e, 0x1f, 0x27, 0x2f,
					   0x37, 0x3f, 0x60, 0x61, 0x62, 0x6c, 0x6d, 0x6e, 0x6f,
					   (char)0x82, (char)0x9a, (char)0xcc, (char)0xcd,
					   (char)0xce, (char)0xcf, (char)0xd4, (char)0xd5,
					   (char)0xd6, (char)0xe4, (char)0xe5, (char)0xe6,
					   (char)0xe7, (char)0xea, (char)0xec, (char)0xed,
					   (char)0xee, (char)0xef, (char)0xf1, (char)0xf4,
					   (char)0xfa, (char)0xfb, 0};
		uint8_t b[8] = {(uint8_t)op, 0xc0, 0, 0, 0, 0, 0, 0};
		bool is_bad = memchr(bad, op, sizeof(bad) - 1) != NULL;

		/* prefixes, REX and VEX/EVEX escapes are not opcodes */
		if (op == 0x26 || op == 0x2e || op == 0x36 || op == 0x3e || op == 0xf0 ||
		    op == 0x64 || op == 0x65 || op == 0x66 || op == 0x67 || op == 0xf2 ||
		    op == 0xf3 || (op & 0xf0) == 0x40 || op == 0xc4 || op == 0xc5 || op == 0x62)
			continue;
		ck_assert_msg(insn__kernel_refuses(b, sizeof(b)) == is_bad, "opcode %02x", op);
	}
	/* accepted, but taken for a branch and jumped over: never probed */
	ck_assert(SKIPS(0xc5, 0xf1, 0x74, 0xc1)); /* vpcmpeqb: 74 = je */
	ck_assert(SKIPS(0xc5, 0xf8, 0x77));	  /* vzeroupper: 77 = ja */
	ck_assert(SKIPS(0xc5, 0xfe, 0x7f, 0x07)); /* vmovdqu store: 7f = jg */
	ck_assert(!SKIPS(0xc5, 0xf9, 0x6e, 0xc6)); /* refused, not skipped */
	ck_assert(!SKIPS(0x74, 0x05));		   /* a real je: emulated right */
	/* the plan's view: class, verdict, text */
	ck_assert_int_eq(CLS(0xc5, 0xf9, 0x6e, 0xc6), INSN_REFUSED);
	ck_assert_int_eq(in.verdict, INSN_KERNEL_REFUSES);
	ck_assert_str_eq(in.text, "vmovd xmm0, esi [c5 f9 6e c6]");
	ck_assert_int_eq(CLS(0xc5, 0xf1, 0x74, 0xc1), INSN_REFUSED);
	ck_assert_int_eq(in.verdict, INSN_KERNEL_SKIPS);
	ck_assert_int_eq(CLS(0x48, 0x89, 0xf8), INSN_SSTEP);
	ck_assert_int_eq(in.verdict, INSN_PROBE_OK);
}
END_TEST

START_TEST(class_names_and_costs)
{
	ck_assert_str_eq(insn__class_name(INSN_NOP5), "nop5");
	ck_assert_str_eq(insn__class_name(INSN_SSTEP), "single-step");
	ck_assert(insn__cost_ns(INSN_NOP5) < insn__cost_ns(INSN_EMULATED));
	ck_assert(insn__cost_ns(INSN_EMULATED) * 10 < insn__cost_ns(INSN_SSTEP));
	ck_assert(insn__cost_ns(INSN_REFUSED) == 0);
	insn__close(NULL);
	plan__free(NULL);
}
END_TEST

/* One instruction of objdump's listing. */
struct dis {
	uint64_t addr;
	char text[96];	 /* mnemonic and operands */
	uint64_t target; /* direct jump/call target, or 0 */
};

/* objdump -d of path into a malloc'd array. */
static struct dis *objdump(const char *path, size_t *n)
{
	char cmd[512], line[512];
	struct dis *v = NULL;
	size_t cap = 0;
	FILE *f;

	*n = 0;
	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn -M att '%s'", path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long a;
		char *tab, *sp;
		struct dis d;

		if (sscanf(line, " %lx:", &a) != 1 || !(tab = strchr(line, '\t')))
			continue;
		memset(&d, 0, sizeof(d));
		d.addr = a;
		snprintf(d.text, sizeof(d.text), "%s", tab + 1);
		d.text[strcspn(d.text, "\n")] = 0;
		/* "jne    1289 <f+0x19>", "call   1030 <x@plt>", "loop ..." */
		sp = strpbrk(d.text, " \t");
		if ((d.text[0] == 'j' || !strncmp(d.text, "call", 4) ||
		     !strncmp(d.text, "loop", 4) || !strncmp(d.text, "bnd j", 5) ||
		     !strncmp(d.text, "notrack", 7)) &&
		    sp) {
			char *q = sp + strspn(sp, " \t");

			if (!strncmp(d.text, "bnd ", 4)) {
				q = strpbrk(q, " \t");
				q = q ? q + strspn(q, " \t") : sp;
			}
			if (*q != '*')
				d.target = strtoull(q, NULL, 16);
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 1024;
			v = realloc(v, cap * sizeof(*v));
			ck_assert_ptr_nonnull(v);
		}
		v[(*n)++] = d;
	}
	pclose(f);
	return v;
}

static bool touches_sp_or_flow(const char *t)
{
	static const char *const bad[] = {"%rsp", "%esp", "%sp",   "%spl",  "push",    "pop",
					  "call", "ret",  "leave", "enter", "syscall", "int"};
	size_t i;

	if (t[0] == 'j' || !strncmp(t, "bnd", 3) || !strncmp(t, "notrack", 7) ||
	    !strncmp(t, "loop", 4))
		return true;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strstr(t, bad[i]))
			return true;
	return false;
}

/* How far an objdump instruction moves rsp down, when an entry-only plan
 * may skip it (push reg, sub $imm,%rsp); -1 for anything else. */
static long sp_sub_of(const char *t)
{
	unsigned long imm;

	if (!strncmp(t, "push", 4) && strstr(t, "%r"))
		return 8;
	if (sscanf(t, "sub $0x%lx,%%rsp", &imm) == 1)
		return (long)imm;
	return -1;
}

/* p (built with po) places every probe where a plan whose sweep decodes
 * every function of the file does: the fast sweep loses no target. */
static void same_as_full_sweep(const struct symtab *st, const size_t *idx, size_t n,
			       const struct plan_opts *po, const struct plan *p)
{
	struct plan_opts full = *po;
	struct plan *pf = NULL;
	size_t i;

	full.decode_all = true;
	ck_assert_int_eq(plan__build(st, idx, n, &full, &pf), 0);
	ck_assert_uint_eq(pf->n, p->n);
	for (i = 0; i < n; i++) {
		ck_assert_msg(pf->sites[i].offset == p->sites[i].offset &&
				      pf->sites[i].cls == p->sites[i].cls &&
				      pf->sites[i].rule == p->sites[i].rule,
			      "%s: %s at +%u (%s), the full sweep: +%u (%s)", st->path,
			      st->syms[idx[i]].name, p->sites[i].shift,
			      insn__class_name(p->sites[i].cls), pf->sites[i].shift,
			      insn__class_name(pf->sites[i].cls));
	}
	ck_assert_uint_eq(pf->shifted, p->shifted);
	plan__free(pf);
}

/* Checks every site of the plan of bin against objdump; returns how many
 * sites were moved. entry_only: the plan for no return probes. */
static size_t verify_binary_mode(const char *bin, bool entry_only)
{
	struct symtab *st = NULL;
	struct plan_opts po = {.returns = true, .entry_only = entry_only};
	struct plan *p = NULL, *p0 = NULL;
	size_t *idx = NULL, n = 0, nd = 0, i, j, moved = 0;
	struct dis *d;

	ck_assert_int_eq(syms__load(bin, &st), 0);
	ck_assert_int_eq(syms__select(st, NULL, 0, &idx, &n), 0);
	ck_assert_int_eq(plan__build(st, idx, n, &po, &p), 0);
	same_as_full_sweep(st, idx, n, &po, p);
	po.no_shift = true;
	ck_assert_int_eq(plan__build(st, idx, n, &po, &p0), 0);
	ck_assert_int_eq(p0->shifted, 0);
	ck_assert_uint_eq(p->n, n);
	d = objdump(bin, &nd);
	ck_assert_uint_gt(nd, 0);
	for (i = 0; i < n; i++) {
		const struct sym *s = &st->syms[idx[i]];
		const struct plan_site *ps = &p->sites[i];
		uint64_t site = s->vaddr + ps->shift;
		bool boundary = false, indirect = false, push;
		const char *site_text = "";
		long delta = 0;

		ck_assert_uint_eq(p0->sites[i].offset,
				  p0->sites[i].rule == PLAN_SKIPPED ? PLAN_NO_PROBE : s->offset);
		ck_assert_uint_eq(p0->sites[i].cls, ps->entry_cls);
		if (ps->rule != PLAN_SHIFTED) {
			ck_assert_uint_eq(ps->shift, 0);
			ck_assert_uint_eq(ps->offset,
					  ps->rule == PLAN_SKIPPED ? PLAN_NO_PROBE : s->offset);
			continue;
		}
		moved++;
		ck_assert_uint_eq(ps->offset, s->offset + ps->shift);
		ck_assert_int_eq(ps->entry_cls, INSN_SSTEP);
		ck_assert(ps->cls == INSN_EMULATED || ps->cls == INSN_NOP5);
		ck_assert_uint_lt(ps->shift, s->size);
		for (j = 0; j < nd; j++) {
			/* Nothing anywhere jumps or calls into (entry, site]. */
			ck_assert_msg(!(d[j].target > s->vaddr && d[j].target <= site),
				      "%s: %s moved to +%u but 0x%lx '%s' targets 0x%lx", bin,
				      s->name, ps->shift, (unsigned long)d[j].addr, d[j].text,
				      (unsigned long)d[j].target);
			if (d[j].addr < s->vaddr || d[j].addr >= s->vaddr + s->size)
				continue;
			if (strstr(d[j].text, "jmp") && strchr(d[j].text, '*'))
				indirect = true;
			if (d[j].addr == site) {
				boundary = true;
				site_text = d[j].text;
			}
			/* The moved-over instructions: straight line, rsp untouched
			 * (entry-only: or moved down by a known amount). */
			if (d[j].addr < site && entry_only && sp_sub_of(d[j].text) >= 0) {
				char tx[96];

				/* A push/sub itself is fine; collapse it for the check. */
				delta += sp_sub_of(d[j].text);
				snprintf(tx, sizeof(tx), "%s", "mov");
				ck_assert(!touches_sp_or_flow(tx));
			} else if (d[j].addr < site) {
				ck_assert_msg(!touches_sp_or_flow(d[j].text),
					      "%s: %s +%u skips '%s'", bin, s->name, ps->shift,
					      d[j].text);
			}
		}
		ck_assert_msg(boundary, "%s: %s +%u is not an instruction start", bin, s->name,
			      ps->shift);
		push = !strncmp(site_text, "push", 4);
		ck_assert_msg(push || !indirect, "%s: %s moved to '%s' despite an indirect jmp",
			      bin, s->name, site_text);
		if (ps->cls == INSN_NOP5)
			ck_assert(!strncmp(site_text, "nop", 3));
		ck_assert_msg(ps->sp_delta == (uint32_t)delta, "%s: %s sp_delta %u, objdump %ld",
			      bin, s->name, ps->sp_delta, delta);
	}
	free(d);
	plan__free(p);
	plan__free(p0);
	free(idx);
	syms__free(st);
	return moved;
}

static size_t verify_binary(const char *bin)
{
	return verify_binary_mode(bin, false);
}

static char tmpdir[64];

/* _i: compiler (bit 2), -fcf-protection (bit 3), -O level (bits 0-1). */
START_TEST(placement_on_real_compiler_output)
{
	const char *cc = (_i & 4) ? "clang" : "gcc";
	const char *cf = (_i & 8) ? "-fcf-protection" : "-fcf-protection=none";
	char bin[256], cmd[1024];
	size_t moved;

	snprintf(bin, sizeof(bin), "%s/corpus-%s-O%d%s", tmpdir, cc, _i & 3, cf);
	snprintf(cmd, sizeof(cmd), "%s -O%d -g -w %s -o '%s' tests/data/plan_corpus.c", cc, _i & 3,
		 cf, bin);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
	moved = verify_binary(bin);
	/* With endbr64 at every entry nearly every function is moved. */
	if (_i & 8)
		ck_assert_uint_ge(moved, 5);
	/* No return probes: more may move (past push / sub rsp), never fewer. */
	ck_assert_uint_ge(verify_binary_mode(bin, true), moved);
	unlink(bin);
}
END_TEST

/* A loop that begins right after the entry: its back edge targets the
 * instruction a shift would pick, so the probe must stay at the entry. */
/* The plan of the one function glob selects in st (the caller frees it
 * with plan__free). */
static struct plan *plan_of(struct symtab *st, const char *glob, const struct plan_opts *po)
{
	struct plan *p = NULL;
	size_t *idx = NULL, n = 0;

	ck_assert_int_eq(syms__select(st, &glob, 1, &idx, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(plan__build(st, idx, n, po, &p), 0);
	free(idx);
	return p;
}

START_TEST(loop_head_after_entry_stays)
{
	char src[128], bin[128], cmd[512];
	struct symtab *st = NULL;
	struct plan_opts po = {.returns = true};
	struct plan *p;
	FILE *f;

	snprintf(src, sizeof(src), "%s/loop.s", tmpdir);
	snprintf(bin, sizeof(bin), "%s/loop", tmpdir);
	f = fopen(src, "w");
	ck_assert_ptr_nonnull(f);
	/* endbr64; L: push? no: the loop head is a nop right after endbr64 */
	fputs(".text\n.globl spin\n.type spin,@function\nspin:\nendbr64\n1: nop\n"
	      "dec %edi\njnz 1b\nret\n.size spin,.-spin\n"
	      ".globl skip\n.type skip,@function\nskip:\nendbr64\nnop\nret\n.size skip,.-skip\n"
	      ".globl locked\n.type locked,@function\nlocked:\nlock incl (%rdi)\nret\n"
	      ".size locked,.-locked\n"
	      /* a jump into far's window from 8 KiB away (rel32), one into
	       * near's from the next function (rel8): both stay at entry */
	      ".globl far\n.type far,@function\nfar:\nendbr64\nnop\nret\n.size far,.-far\n"
	      ".globl near\n.type near,@function\nnear:\nendbr64\nnop\nret\n.size near,.-near\n"
	      ".globl nearby\n.type nearby,@function\nnearby:\ntest %edi,%edi\njnz near+4\nret\n"
	      ".size nearby,.-nearby\n"
	      ".globl pad\n.type pad,@function\npad:\nret\n.skip 8192, 0x90\n.size pad,.-pad\n"
	      ".globl farby\n.type farby,@function\nfarby:\njmp far+4\n.size farby,.-farby\n"
	      ".globl main\n.type main,@function\nmain:\nxor %eax,%eax\nret\n.size main,.-main\n"
	      ".section .note.GNU-stack,\"\",@progbits\n",
	      f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "gcc -o '%s' '%s'", bin, src);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(syms__load(bin, &st), 0);
	p = plan_of(st, "spin", &po);
	ck_assert_int_eq(p->sites[0].rule, PLAN_ENTRY);
	ck_assert_int_eq(p->sites[0].cls, INSN_SSTEP);
	plan__free(p);
	p = plan_of(st, "skip", &po);
	ck_assert_int_eq(p->sites[0].rule, PLAN_SHIFTED);
	ck_assert_int_eq(p->sites[0].shift, 4);
	plan__free(p);
	p = plan_of(st, "near", &po);
	ck_assert_int_eq(p->sites[0].rule, PLAN_ENTRY);
	plan__free(p);
	p = plan_of(st, "far", &po);
	ck_assert_int_eq(p->sites[0].rule, PLAN_ENTRY);
	plan__free(p);
	p = plan_of(st, "locked", &po);
	ck_assert_int_eq(p->sites[0].rule, PLAN_SKIPPED);
	ck_assert_uint_eq(p->sites[0].offset, PLAN_NO_PROBE);
	ck_assert_uint_eq(p->skipped, 1);
	ck_assert_uint_eq(verify_binary(bin), 2); /* skip, and nearby to its jnz */
	plan__free(p);
	syms__free(st);
	unlink(src);
	unlink(bin);
}
END_TEST

/* A question insn.h answers about a whole function's code. */
typedef int (*code_question)(struct insn_dec *d, const uint8_t *code, size_t len, uint64_t addr,
			     bool *yes);

/* q's answer for code[0..len), as a function at 0x1000. */
static bool ask(code_question q, const uint8_t *code, size_t len)
{
	struct insn_dec *d = NULL;
	bool yes = true;

	ck_assert_int_eq(insn__open(&d), 0);
	ck_assert_int_eq(q(d, code, len, 0x1000, &yes), 0);
	insn__close(d);
	return yes;
}
#define ASK(q, ...)                                                                                \
	({                                                                                         \
		static const uint8_t c_[] = {__VA_ARGS__};                                         \
		ask(q, c_, sizeof(c_));                                                            \
	})

/* insn__switches_stack on hand-assembled functions (as(1), bytes from
 * objdump): a switch saves rsp outside its stack and loads rsp from an
 * argument or from memory it did not save rsp to; a load alone is a jump
 * (longjmp, V8's CEntry), and a compiler's restore of a saved rsp is
 * none, wherever the save sits in the code. */
#define SWITCHES(...) ASK(insn__switches_stack, __VA_ARGS__)

START_TEST(stack_switchers_by_code)
{
	/* push %rbp; mov %rsp,(%rdi); mov %rsi,%rsp; pop %rbp; ret */
	ck_assert(SWITCHES(0x55, 0x48, 0x89, 0x27, 0x48, 0x89, 0xf4, 0x5d, 0xc3));
	/* libco's: lea 0x8(%rsp),%rax; mov %rax,0x68(%rdi);
	 * mov 0x68(%rsi),%rsp; ret */
	ck_assert(SWITCHES(0x48, 0x8d, 0x44, 0x24, 0x08, 0x48, 0x89, 0x47, 0x68, 0x48, 0x8b, 0x66,
			   0x68, 0xc3));
	/* boost's jump_fcontext: lea -0x38(%rsp),%rsp; the callee-saved
	 * registers and the FPU control words stored there; mov %rsp,%rax;
	 * mov %rdi,%rsp; ... they are loaded back; lea 0x40(%rsp),%rsp;
	 * mov %rsi,%rdx; mov %rax,%rdi; jmp *%r8: the old rsp goes over in rax */
	ck_assert(SWITCHES(0x48, 0x8d, 0x64, 0x24, 0xc8, 0x0f, 0xae, 0x1c, 0x24, 0xd9, 0x7c, 0x24,
			   0x04, 0x4c, 0x89, 0x64, 0x24, 0x08, 0x4c, 0x89, 0x6c, 0x24, 0x10, 0x4c,
			   0x89, 0x74, 0x24, 0x18, 0x4c, 0x89, 0x7c, 0x24, 0x20, 0x48, 0x89, 0x5c,
			   0x24, 0x28, 0x48, 0x89, 0x6c, 0x24, 0x30, 0x48, 0x89, 0xe0, 0x48, 0x89,
			   0xfc, 0x4c, 0x8b, 0x44, 0x24, 0x38, 0x0f, 0xae, 0x14, 0x24, 0xd9, 0x6c,
			   0x24, 0x04, 0x4c, 0x8b, 0x64, 0x24, 0x08, 0x4c, 0x8b, 0x6c, 0x24, 0x10,
			   0x4c, 0x8b, 0x74, 0x24, 0x18, 0x4c, 0x8b, 0x7c, 0x24, 0x20, 0x48, 0x8b,
			   0x5c, 0x24, 0x28, 0x48, 0x8b, 0x6c, 0x24, 0x30, 0x48, 0x8d, 0x64, 0x24,
			   0x40, 0x48, 0x89, 0xf2, 0x48, 0x89, 0xc7, 0x41, 0xff, 0xe0));
	/* a load alone: mov 0xa0(%rdx),%rsp; ret (setcontext's) */
	ck_assert(!SWITCHES(0x48, 0x8b, 0xa2, 0xa0, 0, 0, 0, 0xc3));
	/* CEntry's: mov %rsp,%r10; lea 0(%rip),%r10; mov %r10,0x70(%r13);
	 * mov 0xd0(%r13),%rsp; ret: r10 no longer holds rsp when stored */
	ck_assert(!SWITCHES(0x49, 0x89, 0xe2, 0x4c, 0x8d, 0x15, 0, 0, 0, 0, 0x4d, 0x89, 0x55, 0x70,
			    0x49, 0x8b, 0xa5, 0xd0, 0, 0, 0, 0xc3));
	/* xchg %rdi,%rsp; ret */
	ck_assert(SWITCHES(0x48, 0x87, 0xfc, 0xc3));
	/* alloca: push %rbp; mov %rsp,%rbp; push %rbx; mov %rsp,%rbx;
	 * sub %rax,%rsp; mov %rbx,%rsp; pop %rbx; pop %rbp; ret */
	ck_assert(!SWITCHES(0x55, 0x48, 0x89, 0xe5, 0x53, 0x48, 0x89, 0xe3, 0x48, 0x29, 0xc4, 0x48,
			    0x89, 0xdc, 0x5b, 0x5d, 0xc3));
	/* through a stack slot: mov %rsp,%rax; mov %rax,-0x128(%rbp);
	 * sub %rdi,%rsp; mov -0x128(%rbp),%rsp; ret */
	ck_assert(!SWITCHES(0x48, 0x89, 0xe0, 0x48, 0x89, 0x85, 0xd8, 0xfe, 0xff, 0xff, 0x48, 0x29,
			    0xfc, 0x48, 0x8b, 0xa5, 0xd8, 0xfe, 0xff, 0xff, 0xc3));
	/* the restore laid out before the save: jmp 1f; 2: mov %r12,%rsp;
	 * ret; 1: mov %rsp,%r12; jmp 2b */
	ck_assert(!SWITCHES(0xeb, 0x04, 0x4c, 0x89, 0xe4, 0xc3, 0x49, 0x89, 0xe4, 0xeb, 0xf7));
	/* realigned (DRAP): lea 0x8(%rsp),%r10; and $-32,%rsp;
	 * push -0x8(%r10); lea -0x8(%r10),%rsp; ret */
	ck_assert(!SWITCHES(0x4c, 0x8d, 0x54, 0x24, 0x08, 0x48, 0x83, 0xe4, 0xe0, 0x41, 0xff, 0x72,
			    0xf8, 0x49, 0x8d, 0x62, 0xf8, 0xc3));
	/* realigned, its register reused and popped back (x265's):
	 * lea 0x10(%rsp),%r13; and $-16,%rsp; push -0x8(%r13); push %rbp;
	 * mov %rsp,%rbp; push %r13; mov %rdi,%r13; call *%rsi;
	 * lea -0x8(%rbp),%rsp; pop %r13; pop %rbp; lea -0x10(%r13),%rsp; ret */
	ck_assert(!SWITCHES(0x4c, 0x8d, 0x6c, 0x24, 0x10, 0x48, 0x83, 0xe4, 0xf0, 0x41, 0xff, 0x75,
			    0xf8, 0x55, 0x48, 0x89, 0xe5, 0x41, 0x55, 0x49, 0x89, 0xfd, 0xff, 0xd6,
			    0x48, 0x8d, 0x65, 0xf8, 0x41, 0x5d, 0x5d, 0x49, 0x8d, 0x65, 0xf0,
			    0xc3));
	/* two exits (ld.so's _dl_runtime_profile): mov %rsp,%rbx;
	 * and $-16,%rsp; mov %rsp,0x18(%rbx); mov %rbx,%rsp; mov (%rsp),%rbx;
	 * jmp *%r11; then, reached from elsewhere: mov %rsp,%rdi;
	 * call *%r11; mov 0x18(%rbx),%rsp; ret */
	ck_assert(!SWITCHES(0x48, 0x89, 0xe3, 0x48, 0x83, 0xe4, 0xf0, 0x48, 0x89, 0x63, 0x18, 0x48,
			    0x89, 0xdc, 0x48, 0x8b, 0x1c, 0x24, 0x41, 0xff, 0xe3, 0x48, 0x89, 0xe7,
			    0x41, 0xff, 0xd3, 0x48, 0x8b, 0x63, 0x18, 0xc3));
	/* lea -0x28(%rbp),%rsp; ret (an epilogue) */
	ck_assert(!SWITCHES(0x48, 0x8d, 0x65, 0xd8, 0xc3));
	/* mov %rdi,%rax; add %rsi,%rax; ret: the sieve alone says no */
	ck_assert(!insn__may_switch_stack(
		(const uint8_t[]){0x48, 0x89, 0xf8, 0x48, 0x01, 0xf0, 0xc3}, 7));
	ck_assert(!SWITCHES(0x48, 0x89, 0xf8, 0x48, 0x01, 0xf0, 0xc3));
}
END_TEST

/* q over every function of the library at path: asserts each function
 * it says yes to is named (or aliased) in ok[0..nok), and returns how
 * many of them are named name. */
static size_t flagged_known(const char *path, code_question q, const char *const *ok, size_t nok,
			    const char *name)
{
	struct insn_dec *d = NULL;
	struct symtab *st = NULL;
	size_t i, k, a, nname = 0;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(insn__open(&d), 0);
	ck_assert_int_eq(syms__load(path, &st), 0);
	for (i = 0; i < st->nsyms; i++) {
		const struct sym *s = &st->syms[i];
		uint8_t *code = malloc(s->size ? s->size : 1);
		bool yes = false, known = false;

		ck_assert_ptr_nonnull(code);
		ck_assert_int_eq(pread(fd, code, s->size, (off_t)s->offset), (ssize_t)s->size);
		ck_assert_int_eq(q(d, code, s->size, s->vaddr, &yes), 0);
		free(code);
		if (!yes)
			continue;
		for (a = 0; a <= s->naliases; a++)
			for (k = 0; k < nok; k++)
				known |= !strcmp(a ? s->aliases[a - 1] : s->name, ok[k]);
		ck_assert_msg(known, "%s: %s flagged", path, s->name);
		nname += !strcmp(s->name, name);
	}
	syms__free(st);
	insn__close(d);
	close(fd);
	return nname;
}

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define LIBSTDCXX "/lib/x86_64-linux-gnu/libstdc++.so.6"
#define LDSO "/lib64/ld-linux-x86-64.so.2"
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Over every function of libc and libstdc++, it finds swapcontext and
 * nothing else (no compiler epilogue taken for one; setcontext and the
 * longjmps only load rsp). */
START_TEST(stack_switchers_in_real_libraries)
{
	static const char *const libc_ok[] = {
		"setcontext",	    "swapcontext",     "__start_context", "__longjmp",
		"__longjmp_cancel", "____longjmp_chk", "longjmp",	  "_longjmp",
		"siglongjmp",	    "__longjmp_chk",   "__libc_longjmp",  "__libc_siglongjmp"};

	ck_assert_uint_eq(
		flagged_known(LIBC, insn__switches_stack, libc_ok, N_OF(libc_ok), "swapcontext"),
		1);
	flagged_known(LIBSTDCXX, insn__switches_stack, NULL, 0, "");
}
END_TEST

/* insn__reads_return_address on hand-assembled functions (as(1), bytes
 * from objdump): a read of the word at the entry's rsp, wherever rsp has
 * gone since and through a frame pointer, is one; a spill reload, a store
 * there, a fence, an address computed, a word reached after rsp became
 * unknown, or code no branch reaches is not. */
#define READS_RA(...) ASK(insn__reads_return_address, __VA_ARGS__)

START_TEST(return_address_readers_by_code)
{
	/* glibc's setjmp: mov %rbx,(%rdi); lea 0x8(%rsp),%rdx;
	 * mov %rdx,0x30(%rdi); mov (%rsp),%rax; xor %fs:0x30,%rax;
	 * rol $0x11,%rax; mov %rax,0x38(%rdi); jmp */
	ck_assert(READS_RA(0x48, 0x89, 0x1f, 0x48, 0x8d, 0x54, 0x24, 0x08, 0x48, 0x89, 0x57, 0x30,
			   0x48, 0x8b, 0x04, 0x24, 0x64, 0x48, 0x33, 0x04, 0x25, 0x30, 0x00, 0x00,
			   0x00, 0x48, 0xc1, 0xc0, 0x11, 0x48, 0x89, 0x47, 0x38, 0xeb, 0xdd));
	/* dlsym's: push %rbp; push %rbx; sub $0x38,%rsp;
	 * mov 0x48(%rsp),%rdx; add $0x38,%rsp; pop %rbx; pop %rbp; jmp *%rax */
	ck_assert(READS_RA(0x55, 0x53, 0x48, 0x83, 0xec, 0x38, 0x48, 0x8b, 0x54, 0x24, 0x48, 0x48,
			   0x83, 0xc4, 0x38, 0x5b, 0x5d, 0xff, 0xe0));
	/* __builtin_return_address(0) with a frame pointer: push %rbp;
	 * mov %rsp,%rbp; sub $0x20,%rsp; mov 0x8(%rbp),%rax; leave; ret */
	ck_assert(READS_RA(0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x20, 0x48, 0x8b, 0x45, 0x08,
			   0xc9, 0xc3));
	/* vfork's: pop %rdi; mov $0x3a,%eax; syscall; push %rdi; ret */
	ck_assert(READS_RA(0x5f, 0xb8, 0x3a, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x57, 0xc3));
	/* endbr64; pop %rcx; jmp *%rcx */
	ck_assert(READS_RA(0xf3, 0x0f, 0x1e, 0xfa, 0x59, 0xff, 0xe1));
	/* pushfq; mov 0x8(%rsp),%rax; popfq; ret (OpenSSL saves the flags) */
	ck_assert(READS_RA(0x9c, 0x48, 0x8b, 0x44, 0x24, 0x08, 0x9d, 0xc3));
	/* a conditional branch's target has its state: push %rbx;
	 * test %rdi,%rdi; jne 1f; pop %rbx; ret; 1: mov 0x8(%rsp),%rax;
	 * pop %rbx; ret */
	ck_assert(READS_RA(0x53, 0x48, 0x85, 0xff, 0x75, 0x02, 0x5b, 0xc3, 0x48, 0x8b, 0x44, 0x24,
			   0x08, 0x5b, 0xc3));
	/* push %rbp; mov %rsp,%rbp; sub $0x20,%rsp; leave; mov (%rsp),%rax;
	 * ret: leave puts rsp back at the return address */
	ck_assert(READS_RA(0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x20, 0xc9, 0x48, 0x8b, 0x04,
			   0x24, 0xc3));
	/* push %rbp; mov %rsp,%rbp; sub $0x20,%rsp; lea 0x0(%rbp),%rsp;
	 * pop %rbp; mov (%rsp),%rax; ret: an epilogue through rbp */
	ck_assert(READS_RA(0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x20, 0x48, 0x8d, 0x65, 0x00,
			   0x5d, 0x48, 0x8b, 0x04, 0x24, 0xc3));
	/* a vector store: movq %xmm0,(%rsp); ret */
	ck_assert(!READS_RA(0x66, 0x0f, 0xd6, 0x04, 0x24, 0xc3));
	/* a spill reload: push %rbx; sub $0x10,%rsp; mov 0x8(%rsp),%rax;
	 * add $0x10,%rsp; pop %rbx; ret */
	ck_assert(!READS_RA(0x53, 0x48, 0x83, 0xec, 0x10, 0x48, 0x8b, 0x44, 0x24, 0x08, 0x48, 0x83,
			    0xc4, 0x10, 0x5b, 0xc3));
	/* a store: mov %rax,(%rsp); ret */
	ck_assert(!READS_RA(0x48, 0x89, 0x04, 0x24, 0xc3));
	/* HotSpot's fence: lock addl $0x0,(%rsp); ret */
	ck_assert(!READS_RA(0xf0, 0x83, 0x04, 0x24, 0x00, 0xc3));
	/* the flags pushf put there: pushfq; mov (%rsp),%rax; popfq; ret */
	ck_assert(!READS_RA(0x9c, 0x48, 0x8b, 0x04, 0x24, 0x9d, 0xc3));
	/* another stack: xchg %rsp,%r15; mov (%rsp),%rax; xchg %rsp,%r15;
	 * ret (OpenSSL's AES_cbc_encrypt) */
	ck_assert(!READS_RA(0x49, 0x87, 0xe7, 0x48, 0x8b, 0x04, 0x24, 0x49, 0x87, 0xe7, 0xc3));
	/* unreachable: test %rdi,%rdi; jmp 1f; mov (%rsp),%rax; 1: ret */
	ck_assert(!READS_RA(0x48, 0x85, 0xff, 0xeb, 0x04, 0x48, 0x8b, 0x04, 0x24, 0xc3));
	/* clone's child, on its new stack after the syscall:
	 * mov $0x38,%eax; syscall; test %rax,%rax; je 1f; ret; 1: pop %rax;
	 * call *%rax; hlt */
	ck_assert(!READS_RA(0xb8, 0x38, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x85, 0xc0, 0x74, 0x01,
			    0xc3, 0x58, 0xff, 0xd0, 0xf4));
	/* addresses only: lea 0x8(%rsp),%rax; lea (%rsp),%rdx; ret */
	ck_assert(!READS_RA(0x48, 0x8d, 0x44, 0x24, 0x08, 0x48, 0x8d, 0x14, 0x24, 0xc3));
	/* rbp as a plain register: mov %rdi,%rbp; mov 0x8(%rbp),%rax; ret */
	ck_assert(!READS_RA(0x48, 0x89, 0xfd, 0x48, 0x8b, 0x45, 0x08, 0xc3));
	/* mov %rdi,%rax; add %rsi,%rax; ret: the sieve alone says no */
	ck_assert(!insn__may_read_return_address(
		(const uint8_t[]){0x48, 0x89, 0xf8, 0x48, 0x01, 0xf0, 0xc3}, 7));
}
END_TEST

/* Over every function of libc, ld.so and libstdc++: the real readers, and
 * nothing else (glibc's own mcount and vfork among them; none in
 * libstdc++). */
START_TEST(return_address_readers_in_real_libraries)
{
	static const char *const libc_ok[] = {"__sigsetjmp", "getcontext", "swapcontext", "dlmopen",
					      "dlopen", "dlsym", "dlvsym", "__vfork", "_mcount",
					      "__fentry__", "dl_iterate_phdr", "__libc_dlopen_mode",
					      "_dl_mcount_wrapper", "_dl_mcount_wrapper_check",
					      /* a fragment, never selected: entered by a jump with
					       * its parent's frame */
					      "__pthread_once_slow.cold"};
	static const char *const ldso_ok[] = {"__sigsetjmp"};

	ck_assert_uint_eq(flagged_known(LIBC, insn__reads_return_address, libc_ok, N_OF(libc_ok),
					"__sigsetjmp"),
			  1);
	ck_assert_uint_eq(
		flagged_known(LIBC, insn__reads_return_address, libc_ok, N_OF(libc_ok), "dlsym"),
		1);
	ck_assert_uint_eq(flagged_known(LDSO, insn__reads_return_address, ldso_ok, N_OF(ldso_ok),
					"__sigsetjmp"),
			  1);
	flagged_known(LIBSTDCXX, insn__reads_return_address, NULL, 0, "");
}
END_TEST

/* The libraries the guard places its probes in and a big executable:
 * every function selected, the fast sweep places every probe where the
 * full one does (and took less time: the point of it). */
START_TEST(fast_sweep_on_real_libraries)
{
	static const char *const bins[] = {
		"/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/lib/x86_64-linux-gnu/libgcc_s.so.1", "/usr/bin/python3.11",
		"/lib/x86_64-linux-gnu/libsqlite3.so.0"};
	size_t b, tried = 0;

	for (b = 0; b < sizeof(bins) / sizeof(bins[0]); b++) {
		struct plan_opts po = {.returns = true};
		struct symtab *st = NULL;
		struct plan *p = NULL;
		size_t *idx = NULL, n = 0;

		if (access(bins[b], R_OK))
			continue;
		ck_assert_int_eq(syms__load(bins[b], &st), 0);
		ck_assert_int_eq(syms__select(st, NULL, 0, &idx, &n), 0);
		ck_assert_int_eq(plan__build(st, idx, n, &po, &p), 0);
		same_as_full_sweep(st, idx, n, &po, p);
		plan__free(p);
		free(idx);
		syms__free(st);
		tried++;
	}
	/* libc and libgcc_s are on every Debian system */
	ck_assert_uint_ge(tried, 2);
}
END_TEST

START_TEST(summary_and_print)
{
	char bin[128], cmd[512], line[256], *buf = NULL;
	struct symtab *st = NULL;
	struct plan_opts po = {.returns = true};
	struct plan *p = NULL;
	size_t *idx = NULL, n = 0, len = 0;
	FILE *f;

	snprintf(bin, sizeof(bin), "%s/sum", tmpdir);
	snprintf(cmd, sizeof(cmd), "gcc -O2 -fcf-protection -w -o '%s' tests/data/plan_corpus.c",
		 bin);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(syms__load(bin, &st), 0);
	ck_assert_int_eq(syms__select(st, NULL, 0, &idx, &n), 0);
	ck_assert_int_eq(plan__build(st, idx, n, &po, &p), 0);
	plan__summary(p, line, sizeof(line));
	ck_assert_msg(strstr(line, "moved past the entry") && strstr(line, "ns/call"), "%s", line);
	ck_assert(p->est_ns < p->est_entry_ns);
	f = open_memstream(&buf, &len);
	plan__print(f, p, st, idx, "count", true);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "single-step"));
	ck_assert_ptr_nonnull(strstr(buf, "count "));
	ck_assert_ptr_null(strstr(buf, "callgraph "));
	ck_assert_ptr_nonnull(strstr(buf, " shifted "));
	free(buf);
	ck_assert_int_eq(plan__build(NULL, idx, n, &po, &p), -EINVAL);
	plan__free(p);
	free(idx);
	syms__free(st);
	unlink(bin);
}
END_TEST

/* Library selectors: resolution through this process's maps and the
 * library directories, and two names of one file merged into one. */
START_TEST(library_selectors)
{
	const char *globs[] = {"main", "libc:malloc", "libc.so.6:free", "libc.so.6:nosuch_*"};
	const char *nomatch[] = {"libm:nosuch_*"};
	const char *partial[] = {"libm:nosuch_*", "libc:malloc"};
	const char *exe_only[] = {"main", "libm:nosuch_*"};
	struct plan_opts po = {.returns = true};
	const char *names[4], *bins[4];
	uint32_t deltas[4];
	struct libs *l = NULL;
	uint64_t offs[4];
	char path[PATH_MAX];

	ck_assert(libs__is_selector("libc:malloc"));
	ck_assert(!libs__is_selector("malloc"));
	ck_assert(!libs__is_selector(":malloc"));
	/* A "::" is a C++ scope, never a library separator. */
	ck_assert(!libs__is_selector("ns::*"));
	ck_assert(!libs__is_selector("ns::Foo::bar"));
	ck_assert(!libs__is_selector("::bar"));
	ck_assert(!libs__is_selector("*::bar(int)"));
	ck_assert(libs__is_selector("libstdc++:std::vector*"));
	ck_assert_int_eq(libs__resolve(getpid(), "libc", path, sizeof(path)), 0);
	ck_assert_ptr_nonnull(strstr(path, "libc.so.6"));
	ck_assert_int_eq(libs__resolve(getpid(), "libc.so.6", path, sizeof(path)), 0);
	/* Not mapped here: found in the library directories. */
	ck_assert_int_eq(libs__resolve(getpid(), "libpthread.so.0", path, sizeof(path)), 0);
	ck_assert_int_eq(libs__resolve(getpid(), "libno_such_library_x", path, sizeof(path)),
			 -ENOENT);
	ck_assert_int_eq(libs__resolve(getpid(), "/no/such/libx.so", path, sizeof(path)), -ENOENT);
	ck_assert_int_eq(libs__load(getpid(), globs, 1, &po, &l), 0);
	ck_assert_ptr_null(l); /* no selector */
	ck_assert_int_eq(libs__load(getpid(), globs, 3, &po, &l), 0);
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_eq(l->nlibs, 1);
	ck_assert_uint_eq(l->nfuncs, 2);
	libs__fill(l, offs, names, bins, deltas);
	/* In address order: either may come first. */
	ck_assert((!strcmp(names[0], "libc:malloc") && !strcmp(names[1], "libc:free")) ||
		  (!strcmp(names[1], "libc:malloc") && !strcmp(names[0], "libc:free")));
	ck_assert_str_eq(bins[0], bins[1]);
	ck_assert(offs[0] != PLAN_NO_PROBE && offs[0] != offs[1]);
	libs__free(l);
	/* Patterns of one library add up; none matching is an error. */
	ck_assert_int_eq(libs__load(getpid(), globs, 4, &po, &l), 0);
	ck_assert_uint_eq(l->nfuncs, 2);
	libs__free(l);
	ck_assert_int_eq(libs__load(getpid(), nomatch, 1, &po, &l), -ENOENT);
	ck_assert_ptr_null(l);
	/* Several patterns: a library none of whose selectors matches is
	 * named in a warning and left out; the caller decides. */
	ck_assert_int_eq(libs__load(getpid(), partial, 2, &po, &l), 0);
	ck_assert_uint_eq(l->nlibs, 1);
	ck_assert_uint_eq(l->nfuncs, 1);
	libs__free(l);
	ck_assert_int_eq(libs__load(getpid(), exe_only, 2, &po, &l), 0);
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_eq(l->nlibs, 0);
	ck_assert_uint_eq(l->nfuncs, 0);
	libs__free(l);
	libs__free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = tcase_create("plan");
	SRunner *sr;
	int failed;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cabbpf-plan.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, classes_of_known_bytes);
	tcase_add_test(tc, kernel_uprobe_rules);
	tcase_add_test(tc, class_names_and_costs);
	tcase_add_loop_test(tc, placement_on_real_compiler_output, 0, 16);
	tcase_add_test(tc, loop_head_after_entry_stays);
	tcase_add_test(tc, stack_switchers_by_code);
	tcase_add_test(tc, stack_switchers_in_real_libraries);
	tcase_add_test(tc, return_address_readers_by_code);
	tcase_add_test(tc, return_address_readers_in_real_libraries);
	tcase_add_test(tc, fast_sweep_on_real_libraries);
	tcase_add_test(tc, summary_and_print);
	tcase_add_test(tc, library_selectors);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	rmdir(tmpdir);
	return failed ? 1 : 0;
}
