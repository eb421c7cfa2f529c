/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/plan — where each selected function's probes go, what they cost, and
 * which ones cannot go in at all, decided before anything is attached.
 *
 * For every function the first instruction is classified (user/elf/insn.h). A
 * function whose entry the kernel refuses is skipped and counted. Where the
 * entry would be single-stepped, the SHIFT rule may move the probe to a
 * later, cheaper instruction at func+k. It applies only when
 *   1. every instruction in [func, func+k) is straight-line (no jump, call,
 *      ret, int, syscall) and never mentions the stack pointer, so at func+k
 *      rsp still points at the return address: the entry event's sp is the
 *      same, and a uretprobe there hijacks the same return address;
 *   2. the instruction at func+k is emulated or a 5-byte nop;
 *   3. no direct jump or call in any sized function of the binary targets
 *      an address in (func, func+k]: only the entry's fall-through reaches
 *      func+k, so the probe fires exactly once per call;
 *   4. unless func+k is a push (a prologue instruction no compiler jumps
 *      back to), the function has no indirect jump (a jump table could
 *      otherwise target func+k) and its whole body decoded;
 *   5. for a stripped binary (only exported symbols known, so rule 3 cannot
 *      see every jump), func+k must be a push.
 * Rules 1-2 make the events identical (same sp, same return probe), 3-5
 * make the hit count identical. When unsure, the probe stays at the entry.
 *
 * ENTRY-ONLY plans (no return probes at all, e.g. call counting) relax
 * rule 1: the moved-over instructions may also be push reg and
 * sub $imm,%rsp, whose total (sp_delta) the event's sp gets back in the
 * BPF program (the cookie carries it), so the entry event still names the
 * return-address slot. A uretprobe there would hijack the wrong word,
 * which is why this is only done when no return probe is attached.
 *
 * GO: a function compiled by Go's gc starts with a stack-bound check
 * (user/elf/lang.h) whose slow path calls runtime.morestack and then jumps
 * back to the function's first byte, so a probe on the entry counts a call
 * twice whenever its stack had to grow (or the runtime asked the goroutine
 * to yield through the guard). When the slow path decodes as straight-line
 * code and calls ending in that jump, and rules 3 and 4 hold, the probe
 * goes right past the check (whatever the class there): the check only
 * reads rsp, so the event's sp and the return-address slot are the
 * entry's, and the probe fires once per call.
 *
 * CALL SITES (entry-only plans too): a function whose entry stays
 * single-stepped (or is refused) after the shift rule, and whose address
 * never escapes (user/probe/callsites.h: only plain `call rel32` instructions
 * anywhere in the file reach it), is counted at those calls instead: each
 * is an emulated instruction, and the calls are exactly its entries. The
 * event's sp there is 8 above the return-address slot the call is about to
 * push: its cookie carries -8.
 *
 * Threads: a plan is built and read by one thread; it is immutable after
 * plan__build and may then be read by any thread.
 */
#ifndef USER_PLAN_H
#define USER_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "user/elf/insn.h"
#include "user/elf/syms.h"

struct callsites;

/* offset value of a site that is not probed. */
#define PLAN_NO_PROBE UINT64_MAX

enum plan_rule {
	PLAN_ENTRY = 0,	  /* probe on the first instruction */
	PLAN_SHIFTED = 1, /* probe at func+shift (see the rules above) */
	PLAN_SKIPPED = 2, /* the kernel would refuse the entry: not probed */
	PLAN_CALLSITES = 3, /* counted at its call sites; offset = PLAN_NO_PROBE */
};

struct plan_site {
	uint64_t offset;	   /* file offset of the probe, or PLAN_NO_PROBE */
	uint32_t shift;		   /* bytes past the first instruction */
	/* rsp moved by the skipped code (entry-only): added back to the event's
	 * sp; (uint32_t)-8 at call sites (a signed 32-bit value) */
	uint32_t sp_delta;
	/* PLAN_CALLSITES: file offsets of the calls (owned by the plan) */
	const uint64_t *calls;
	size_t ncalls;
	/* entry-only plans of a single-stepped or refused entry: why the call
	 * sites could or could not be used (enum callsites_verdict) */
	int verdict;
	enum insn_class entry_cls; /* class of the first instruction */
	/* why the first instruction cannot be probed (INSN_PROBE_OK: it can),
	 * and what it is ("mnemonic operands [bytes]"), for -v */
	enum insn_verdict entry_verdict;
	char entry_text[64];
	enum insn_class cls;	   /* class of the chosen site */
	enum plan_rule rule;
	/* bytes of the probed instruction (0: not known, or PLAN_CALLSITES):
	 * the probe resumes the thread just past it (the time sampler's
	 * late ticks, bpf/trace.bpf.c resume_check) */
	uint8_t len;
};

struct plan_opts {
	bool no_shift; /* keep every probe on the first instruction */
	bool returns;  /* uretprobes too (for the cost estimate) */
	/* no return probe will be attached: rule 1 may skip push reg and
	 * sub $imm,%rsp (see above); implies !returns */
	bool entry_only;
	/* entry-only: may count at call sites (see above) */
	bool callsites;
	/* tests: rule 3's sweep decodes every function of the file, the
	 * reference for the fast sweep (only what is near the functions to
	 * shift decoded, the rest scanned for 32-bit branches) */
	bool decode_all;
};

struct plan {
	struct plan_site *sites; /* one per selected function, in idx order */
	size_t n;
	size_t by_class[INSN__NCLASS];	  /* chosen sites; REFUSED = skipped */
	size_t entry_class[INSN__NCLASS]; /* first instructions */
	size_t shifted;			  /* sites moved by the shift rule */
	size_t skipped;			  /* not probed (refused entry) */
	/* of those: the kernel refuses the first instruction (incl. bytes
	 * that do not decode), or it would skip it (INSN_KERNEL_SKIPS) */
	size_t refused_kernel, refused_skips;
	size_t callsite_fns;		  /* functions counted at call sites */
	size_t callsite_sites;		  /* ... at this many call instructions */
	struct callsites *cs_;		  /* private: owns the sites' calls */
	size_t zero;			  /* zero-size symbols: never selectable */
	double est_ns;			  /* mean estimated cost per call, chosen sites */
	double est_entry_ns;		  /* the same with every probe at the entry */
	bool returns;
};

/*
 * Builds the plan for the functions idx[0..n) of st (indices into
 * st->syms), reading their code from st->path. Returns 0 and *out (the
 * caller frees it with plan__free), or -errno: -EINVAL (NULL argument),
 * -ENOMEM, or the error of opening/mapping st->path, or of capstone.
 * Threads: any thread.
 */
int plan__build(const struct symtab *st, const size_t *idx, size_t n, const struct plan_opts *o,
		struct plan **out);

/* Frees a plan; NULL is fine. */
void plan__free(struct plan *p);

/*
 * Prints the plan to f (stdout for --plan): sites per class, rule counts,
 * which analyzers need which probes, estimated per-call overhead; with
 * per_site, one line per function. analyzers is the -a list (NULL = all).
 */
void plan__print(FILE *f, const struct plan *p, const struct symtab *st, const size_t *idx,
		 const char *analyzers, bool per_site);

/* The one-line summary for stderr, written into buf (always terminated). */
void plan__summary(const struct plan *p, char *buf, size_t len);

#endif /* USER_PLAN_H */
