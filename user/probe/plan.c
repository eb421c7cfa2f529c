// SPDX-License-Identifier: BSD-2-Clause
/* Probe placement and its cost (see plan.h for the rules and why they hold). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "user/probe/callsites.h"
#include "user/elf/image.h"
#include "user/elf/lang.h"
#include "user/probe/plan.h"

/* How far the shift rule looks past the entry. */
#define SHIFT_MAX_INSNS 4
#define SHIFT_MAX_BYTES 32
/* Rule 3 asks about direct branch targets in (func, func+k] only for
 * k < WINDOW (the shift rule's reach, a Go stack check's length): the
 * sweep keeps only targets in such windows. */
#define WINDOW 64
/* A rel8 branch reaches [end - 128, end + 127], its end 2 bytes past its
 * opcode: only code this close to a window can reach it with one. */
#define REL8_REACH 130
/* How long a Go function's morestack block may be before its jump back to
 * the entry: spills, the call, reloads (a few per register argument). */
#define GO_SLOW_MAX_INSNS 40
/* Extra cost of the return probe's trampoline trap (DESIGN.md). */
#define RETURN_NS 290.0

/* Per-function facts from the linear sweep of its body. */
struct body {
	bool indirect_jump; /* a jmp through a register or memory */
	bool undecoded;	    /* some bytes did not decode */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Code of s in the image, clipped to the file: NULL when outside it. */
static const uint8_t *code_of(const struct image *im, const struct sym *s, size_t *len)
{
	if (s->offset >= im->size)
		return NULL;
	*len = im->size - s->offset;
	if (s->size && s->size < *len)
		*len = (size_t)s->size;
	return im->base + s->offset;
}

/* Direct branch targets found by a sweep, and the windows (sorted,
 * merged [lo, hi)) a target must fall in to be kept; none = keep all. */
struct targets {
	uint64_t *v;
	size_t n, cap;
	const uint64_t (*win)[2];
	size_t nwin;
};

/* Is a in one of the windows [lo - slack, hi + slack)? */
static bool in_windows(const struct targets *t, uint64_t a, uint64_t slack)
{
	size_t lo = 0, hi = t->nwin;

	if (!t->win)
		return true;
	while (lo < hi) { /* first window whose end + slack > a */
		size_t m = lo + (hi - lo) / 2;

		if (t->win[m][1] + slack <= a)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < t->nwin && t->win[lo][0] <= a + slack;
}

static int add_target(struct targets *t, uint64_t a)
{
	uint64_t *nv;

	if (!in_windows(t, a, 0))
		return 0;
	nv = vec__grow(t->v, &t->cap, t->n + 1, sizeof(*nv), 256);
	if (!nv)
		return -ENOMEM;
	t->v = nv;
	t->v[t->n++] = a;
	return 0;
}

static int32_t rd32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/*
 * Every target that a direct branch with a 32-bit (or, after an operand-
 * size prefix, 16-bit) displacement could have, read at every byte of
 * code, instruction boundary or not: a superset of what decoding finds.
 * With add, each one in a window is added to t (0 or -ENOMEM); without,
 * returns 1 at the first one in a window (a byte pattern inside another
 * instruction can be one: `mov %r13,%rcx; mov $0x800,%edx` reads as a jmp
 * 0x800ba bytes on), else 0. Short (rel8) branches cannot reach a window
 * from code this scan is used on (the sweep decodes what is near).
 */
static int scan_rel32(const struct sym *s, const uint8_t *code, size_t len, struct targets *t,
		      bool add)
{
	size_t i, w;
	int err = 0;

	for (i = 0; i < len && !err; i++) {
		size_t op = 0; /* opcode bytes before the displacement */

		if (code[i] == 0xe8 || code[i] == 0xe9) /* call/jmp rel32 */
			op = 1;
		else if (code[i] == 0x0f && i + 1 < len && code[i + 1] >= 0x80 &&
			 code[i + 1] <= 0x8f) /* jcc rel32 */
			op = 2;
		else if (code[i] == 0xc7 && i + 1 < len && code[i + 1] == 0xf8) /* xbegin */
			op = 2;
		if (!op)
			continue;
		for (w = 4; w >= 2; w -= 2) { /* rel32; rel16 after 0x66 */
			uint64_t a;

			if (i + op + w > len || (w == 2 && (i == 0 || code[i - 1] != 0x66)))
				continue;
			a = s->vaddr + i + op + w +
			    (uint64_t)(w == 4 ? (int64_t)rd32(code + i + op)
					      : (int64_t)(int16_t)((uint16_t)code[i + op] |
								   (uint16_t)code[i + op + 1] << 8));
			if (!add && in_windows(t, a, 0))
				return 1;
			if (add && (err = add_target(t, a)))
				break;
		}
	}
	return err;
}

/* Decodes s's whole body: its direct branch targets, indirect jumps and
 * bytes that do not decode. */
static int decode_body(struct insn_dec *d, const struct sym *s, const uint8_t *code, size_t len,
		       struct body *b, struct targets *t)
{
	size_t pos = 0;
	int err;

	while (pos < len) {
		struct insn in;

		if (insn__scan(d, code + pos, len - pos, s->vaddr + pos, &in)) {
			/* the rest's 32-bit branches still count for rule 3 */
			b->undecoded = true;
			return scan_rel32(s, code + pos, len - pos, t, true);
		}
		if (in.indirect_jump)
			b->indirect_jump = true;
		if (in.direct_branch && in.target != s->vaddr + pos + in.len &&
		    (err = add_target(t, in.target)))
			return err;
		pos += in.len;
	}
	return 0;
}

/*
 * The sweep rules 3 and 4 of plan.h rest on: direct branch targets of
 * every sized function of st (sorted into *targets), indirect jumps and
 * undecodable bytes per function (bodies[i], by index into st->syms).
 * With windows (wins, nwin: sorted, merged), only targets inside them are
 * kept, and only the functions that may have one are decoded: those within
 * a short branch's reach of a window, and those whose bytes, read at every
 * offset (scan_rel32), show a 32-bit branch into one. The targets are the
 * same as decoding everything, in ~5 ms instead of ~80 ms for a libc whose
 * few sites need a shift. Without windows every function is decoded (the
 * reference the tests compare the fast sweep with).
 */
static int sweep(struct insn_dec *d, const struct symtab *st, const struct image *im,
		 const uint64_t (*wins)[2], size_t nwin, struct body *bodies, uint64_t **targets,
		 size_t *ntargets)
{
	struct targets t = {NULL, 0, 0, wins, nwin};
	size_t i;
	int err = 0;

	for (i = 0; i < st->nsyms && !err; i++) {
		const struct sym *s = &st->syms[i];
		const uint8_t *code;
		size_t len;

		code = code_of(im, s, &len);
		if (!code) {
			bodies[i].undecoded = true;
			continue;
		}
		/* near a window: [vaddr, vaddr + len) meets one, REL8_REACH wide */
		if (!wins || in_windows(&t, s->vaddr + len / 2, REL8_REACH + len / 2 + 1) ||
		    scan_rel32(s, code, len, &t, false))
			err = decode_body(d, s, code, len, &bodies[i], &t);
	}
	if (err) {
		free(t.v);
		return err;
	}
	if (t.n)
		qsort(t.v, t.n, sizeof(*t.v), cmp_u64);
	*targets = t.v;
	*ntargets = t.n;
	return 0;
}

static int cmp_win(const void *a, const void *b)
{
	return cmp_u64(a, b);
}

/*
 * The windows of the functions whose entry the shift rule may move (an
 * entry that would be single-stepped), sorted and merged: [vaddr, vaddr +
 * WINDOW). Returns 0 and *wins (caller frees; NULL with *nwin 0 when no
 * function needs a shift) or -ENOMEM.
 */
static int shift_windows(struct insn_dec *d, const struct symtab *st, const struct image *im,
			 const size_t *idx, size_t n, uint64_t (**wins)[2], size_t *nwin)
{
	uint64_t(*w)[2] = NULL;
	size_t i, k = 0;

	*wins = NULL;
	*nwin = 0;
	for (i = 0; i < n; i++) {
		const struct sym *s = &st->syms[idx[i]];
		const uint8_t *code;
		struct insn in;
		size_t len;

		code = code_of(im, s, &len);
		if (!code || insn__decode(d, code, len, s->vaddr, &in) || in.cls != INSN_SSTEP)
			continue;
		if (!w && !(w = calloc(n, sizeof(*w))))
			return -ENOMEM;
		w[k][0] = s->vaddr;
		w[k][1] = s->vaddr + WINDOW;
		k++;
	}
	if (!k)
		return 0;
	qsort(w, k, sizeof(*w), cmp_win);
	for (i = 1, n = 1; i < k; i++) {
		if (w[i][0] <= w[n - 1][1]) {
			if (w[i][1] > w[n - 1][1])
				w[n - 1][1] = w[i][1];
		} else {
			w[n][0] = w[i][0];
			w[n][1] = w[i][1];
			n++;
		}
	}
	*wins = w;
	*nwin = n;
	return 0;
}

/* Is any target in (lo, hi]? */
static bool targeted(const uint64_t *t, size_t n, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = n;

	while (a < b) { /* first target > lo */
		size_t m = a + (b - a) / 2;

		if (t[m] <= lo)
			a = m + 1;
		else
			b = m;
	}
	return a < n && t[a] <= hi;
}

/* Applies rules 1-5 of plan.h to s; returns the shift, or 0 to stay. */
static uint32_t find_shift(struct insn_dec *d, const struct symtab *st, const struct sym *s,
			   const uint8_t *code, size_t len, const struct body *b,
			   const uint64_t *t, size_t nt, bool entry_only, enum insn_class *cls,
			   uint32_t *delta)
{
	uint32_t sub = 0;
	size_t pos = 0;
	int k;

	for (k = 0; k <= SHIFT_MAX_INSNS && pos < len && pos < SHIFT_MAX_BYTES; k++) {
		struct insn in;

		if (insn__decode(d, code + pos, len - pos, s->vaddr + pos, &in))
			return 0;
		if (pos > 0 && (in.cls == INSN_EMULATED || in.cls == INSN_NOP5)) {
			/* Only a one-byte push is a prologue push for rule 4/5;
			 * capstone has told us it is push reg (emulated). */
			bool push = !in.flow && in.uses_sp && in.cls == INSN_EMULATED &&
				    ((code[pos] >= 0x50 && code[pos] <= 0x57) ||
				     (code[pos] == 0x41 && pos + 1 < len && code[pos + 1] >= 0x50 &&
				      code[pos + 1] <= 0x57));

			if (targeted(t, nt, s->vaddr, s->vaddr + pos)) /* rule 3 */
				return 0;
			if (!push && (b->indirect_jump || b->undecoded)) /* rule 4 */
				return 0;
			if (!push && st->from_dynsym) /* rule 5 */
				return 0;
			*cls = in.cls;
			*delta = sub;
			return (uint32_t)pos;
		}
		/* Rule 1: only straight-line code that leaves rsp alone, or
		 * (entry-only) moves it by a known amount. */
		if (in.flow)
			return 0;
		if (in.uses_sp) {
			if (!entry_only || !in.sp_known)
				return 0;
			sub += in.sp_sub;
		}
		pos += in.len;
	}
	return 0;
}

/*
 * The Go rule (plan.h): the length of s's stack-bound check when its slow
 * path provably comes back to s's first byte, so that past the check the
 * probe fires once per call; else 0. *cls gets the class there.
 */
static uint32_t go_shift(struct insn_dec *d, const struct sym *s, const uint8_t *code, size_t len,
			 const struct body *b, const uint64_t *t, size_t nt, enum insn_class *cls)
{
	int64_t slow = 0;
	size_t k = lang__go_stack_check(code, len, &slow), pos;
	struct insn in;
	int i;

	if (!k || k >= len || slow <= (int64_t)k || (uint64_t)slow >= len)
		return 0;
	/* The slow path: straight-line code and calls (runtime.morestack
	 * returns there once the stack is big enough), then jmp to the
	 * entry. Anything else and the entry may be the only sure count. */
	for (i = 0, pos = (size_t)slow; i < GO_SLOW_MAX_INSNS && pos < len; i++) {
		if (insn__decode(d, code + pos, len - pos, s->vaddr + pos, &in))
			return 0;
		if (in.direct_branch && !in.is_call && in.no_fallthrough && in.target == s->vaddr)
			break;
		if (in.flow && !in.is_call)
			return 0;
		pos += in.len;
	}
	if (i == GO_SLOW_MAX_INSNS || pos >= len || k >= WINDOW)
		return 0;
	if (targeted(t, nt, s->vaddr, s->vaddr + k)) /* rule 3 */
		return 0;
	if (b->indirect_jump || b->undecoded) /* rule 4: func+k is never a push */
		return 0;
	if (insn__decode(d, code + k, len - k, s->vaddr + k, &in) || in.cls == INSN_REFUSED)
		return 0;
	*cls = in.cls;
	return (uint32_t)k;
}

/* The call-site rule (plan.h) for site (function st->syms[sym]): applies it
 * when the scan found only direct calls. Returns whether it applied. */
static bool try_callsites(struct plan *p, struct plan_site *site, size_t sym)
{
	const uint64_t *offs = NULL;
	size_t n = 0;

	site->verdict = (int)callsites__find(p->cs_, sym, &offs, &n);
	if (site->verdict != CALLSITES_OK)
		return false;
	site->rule = PLAN_CALLSITES;
	site->len = 0; /* a call's probe resumes the thread at its target */
	site->offset = PLAN_NO_PROBE;
	site->shift = 0;
	site->sp_delta = (uint32_t)-8;
	site->calls = offs;
	site->ncalls = n;
	site->cls = INSN_EMULATED; /* a plain call rel32 */
	p->callsite_fns++;
	p->callsite_sites += n;
	return true;
}

int plan__build(const struct symtab *st, const size_t *idx, size_t n, const struct plan_opts *o,
		struct plan **out)
{
	struct image im = {NULL, 0, -1};
	struct insn_dec *d = NULL;
	struct body *bodies = NULL;
	uint64_t *targets = NULL, (*wins)[2] = NULL;
	size_t ntargets = 0, nwin = 0, i;
	double sum = 0, sum_entry = 0;
	struct plan *p = NULL;
	int err;

	if (!st || (!idx && n) || !o || !out)
		return -EINVAL;
	*out = NULL;
	p = calloc(1, sizeof(*p));
	bodies = calloc(st->nsyms ? st->nsyms : 1, sizeof(*bodies));
	if (!p || !bodies) {
		err = -ENOMEM;
		goto cleanup;
	}
	p->sites = calloc(n ? n : 1, sizeof(*p->sites));
	if (!p->sites) {
		err = -ENOMEM;
		goto cleanup;
	}
	p->n = n;
	p->zero = st->nzero;
	p->returns = o->returns && !o->entry_only;
	err = image__map(st->path, &im);
	if (err)
		goto cleanup;
	err = insn__open(&d);
	if (err)
		goto cleanup;
	if (!o->no_shift) {
		err = shift_windows(d, st, &im, idx, n, &wins, &nwin);
		if (!err && (wins || o->decode_all))
			err = sweep(d, st, &im, o->decode_all ? NULL : (const uint64_t(*)[2])wins,
				    nwin, bodies, &targets, &ntargets);
		if (err)
			goto cleanup;
	}
	if (o->entry_only && o->callsites && !o->no_shift) {
		err = callsites__scan(st, idx, n, &p->cs_);
		if (err)
			goto cleanup;
	}
	for (i = 0; i < n; i++) {
		const struct sym *s = &st->syms[idx[i]];
		struct plan_site *site = &p->sites[i];
		const uint8_t *code;
		struct insn in;
		size_t len = 0;

		site->offset = PLAN_NO_PROBE;
		site->verdict = CALLSITES_NOT_ANALYSED;
		site->rule = PLAN_SKIPPED;
		site->entry_cls = site->cls = INSN_REFUSED;
		code = code_of(&im, s, &len);
		site->entry_verdict = INSN_UNDECODABLE;
		snprintf(site->entry_text, sizeof(site->entry_text), "(no code)");
		if (code) {
			if (!insn__decode(d, code, len, s->vaddr, &in)) {
				site->entry_cls = site->cls = in.cls;
				site->len = (uint8_t)in.len;
			}
			site->entry_verdict = in.verdict;
			memcpy(site->entry_text, in.text, sizeof(site->entry_text));
		}
		p->entry_class[site->entry_cls]++;
		if (site->entry_cls == INSN_REFUSED && p->cs_ && try_callsites(p, site, idx[i])) {
			p->by_class[site->cls]++;
			sum += insn__cost_ns(site->cls);
			sum_entry += insn__cost_ns(site->cls);
			continue;
		}
		if (site->entry_cls == INSN_REFUSED) {
			p->by_class[INSN_REFUSED]++;
			p->skipped++;
			if (site->entry_verdict == INSN_KERNEL_SKIPS)
				p->refused_skips++;
			else
				p->refused_kernel++;
			continue;
		}
		site->rule = PLAN_ENTRY;
		site->offset = s->offset;
		if (!o->no_shift && site->entry_cls == INSN_SSTEP) {
			enum insn_class c = site->cls;
			uint32_t delta = 0;
			uint32_t k =
				go_shift(d, s, code, len, &bodies[idx[i]], targets, ntargets, &c);

			if (!k)
				k = find_shift(d, st, s, code, len, &bodies[idx[i]], targets,
					       ntargets, o->entry_only, &c, &delta);

			if (k) {
				struct insn at;

				site->shift = k;
				site->sp_delta = delta;
				site->offset = s->offset + k;
				site->cls = c;
				site->len = insn__decode(d, code + k, len - k, s->vaddr + k, &at)
						    ? 0
						    : (uint8_t)at.len;
				site->rule = PLAN_SHIFTED;
				p->shifted++;
			}
		}
		if (site->cls == INSN_SSTEP && p->cs_)
			try_callsites(p, site, idx[i]);
		p->by_class[site->cls]++;
		sum += insn__cost_ns(site->cls) + (p->returns ? RETURN_NS : 0);
		sum_entry += insn__cost_ns(site->entry_cls) + (p->returns ? RETURN_NS : 0);
	}
	if (n > p->skipped) {
		p->est_ns = sum / (double)(n - p->skipped);
		p->est_entry_ns = sum_entry / (double)(n - p->skipped);
	}
	*out = p;
	p = NULL;
	err = 0;
cleanup:
	insn__close(d);
	image__unmap(&im);
	free(targets);
	free(wins);
	free(bodies);
	plan__free(p);
	return err;
}

void plan__free(struct plan *p)
{
	if (!p)
		return;
	free(p->sites);
	callsites__free(p->cs_);
	free(p);
}

void plan__summary(const struct plan *p, char *buf, size_t len)
{
	if (!len)
		return;
	snprintf(buf, len,
		 "plan: %zu sites: %zu nop5, %zu emulated, %zu single-step (%zu moved past the "
		 "entry, %zu counted at %zu call sites), %zu refused by the kernel, %zu it would "
		 "skip; ~%.0f ns/call (at the entries: ~%.0f)",
		 p->n - p->skipped, p->by_class[INSN_NOP5], p->by_class[INSN_EMULATED],
		 p->by_class[INSN_SSTEP], p->shifted, p->callsite_fns, p->callsite_sites,
		 p->refused_kernel, p->refused_skips, p->est_ns, p->est_entry_ns);
}

static bool wants(const char *list, const char *name)
{
	size_t l = strlen(name);
	const char *q;

	if (!list)
		return true;
	for (q = list; (q = strstr(q, name)); q += l)
		if ((q == list || q[-1] == ',') && (q[l] == ',' || q[l] == 0))
			return true;
	return false;
}

void plan__print(FILE *f, const struct plan *p, const struct symtab *st, const size_t *idx,
		 const char *analyzers, bool per_site)
{
	static const char *rules[] = {"entry", "shifted", "skipped", "callsites"};
	int c;
	size_t i;

	fprintf(f, "probe plan for %s: %zu function%s selected\n", st->path, p->n,
		p->n == 1 ? "" : "s");
	fprintf(f, "  %-12s %8s %8s %10s\n", "class", "entries", "sites", "ns/hit");
	for (c = 0; c < INSN__NCLASS; c++)
		fprintf(f, "  %-12s %8zu %8zu %10.0f\n", insn__class_name((enum insn_class)c),
			p->entry_class[c], p->by_class[c], insn__cost_ns((enum insn_class)c));
	fprintf(f, "  moved past the entry (same sp, same return probe): %zu\n", p->shifted);
	fprintf(f, "  counted at their call sites (address never escapes): %zu, at %zu call%s\n",
		p->callsite_fns, p->callsite_sites, p->callsite_sites == 1 ? "" : "s");
	fprintf(f,
		"  skipped: %zu refused by the kernel's uprobe rules, %zu the kernel would skip "
		"instead of running (VEX/EVEX opcode taken for a branch), %zu zero-size symbols "
		"(not selectable)\n",
		p->refused_kernel, p->refused_skips, p->zero);
	fprintf(f, "analyzers and the probes they need:\n");
	if (wants(analyzers, "count"))
		fprintf(f, "  count      entry (calls); return events keep the frames exact\n");
	if (wants(analyzers, "callgraph"))
		fprintf(f, "  callgraph  entry + return (the caller comes from the shadow stack)\n");
	fprintf(f, "probes: uprobe%s on each site\n",
		p->returns ? " + uretprobe" : " only (entry-only: no return events)");
	fprintf(f, "estimated overhead per call: ~%.0f ns (every probe at the entry: ~%.0f ns)\n",
		p->est_ns, p->est_entry_ns);
	if (!per_site)
		return;
	for (i = 0; i < p->n; i++) {
		const struct plan_site *s = &p->sites[i];

		fprintf(f, "  0x%08llx +%-2u %-11s %-8s %s", (unsigned long long)st->syms[idx[i]].vaddr,
			s->shift, insn__class_name(s->cls), rules[s->rule], st->syms[idx[i]].name);
		if (s->rule == PLAN_SKIPPED)
			fprintf(f, " (%s: %s)", insn__verdict_name(s->entry_verdict), s->entry_text);
		else if (s->rule == PLAN_CALLSITES)
			fprintf(f, " (%zu call site%s)", s->ncalls, s->ncalls == 1 ? "" : "s");
		else if (s->sp_delta)
			fprintf(f, " (sp%+d)", (int)s->sp_delta);
		if (p->cs_ && s->rule != PLAN_CALLSITES && s->cls == INSN_SSTEP)
			fprintf(f, " [call sites: %s]",
				callsites__verdict_name((enum callsites_verdict)s->verdict));
		fputc('\n', f);
	}
}
