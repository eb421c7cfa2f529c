// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit suite of user/callsites (which functions can be counted at their call
 * instructions) and of the plan's call-site rule. No root needed.
 *
 *  - tests/data/callsites_rules.S has one function per rule of
 *    callsites.h; built as a PIE and as a non-PIE, each verdict is asserted,
 *    and the call sites found are compared with objdump's.
 *  - tests/data/plan_corpus.c built with gcc and clang at -O0..-O3, with
 *    and without -fcf-protection: every function the scan clears is
 *    re-checked with binutils (independent decoders): objdump finds exactly
 *    the same `call` instructions to it and no other reference (no jump, no
 *    rip-relative or immediate operand naming it), readelf no relocation or
 *    dynamic symbol naming it; and the entry-only plan counts a function at
 *    call sites only when the scan cleared it, with sp -8 per site.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/probe/callsites.h"
#include "user/probe/plan.h"
#include "user/elf/syms.h"

static char tmpdir[64];

/* The addresses of objdump's `call ... <name>` lines in bin; with
 * other_refs, also counts every other line that names <name> exactly or
 * (non-PIE) its address as an immediate. Returns the number of calls. */
static size_t objdump_calls(const char *bin, const char *name, uint64_t vaddr, uint64_t *addrs,
			    size_t max, size_t *other_refs)
{
	char cmd[512], line[512], tag[160], imm[40];
	size_t n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn -M att '%s'", bin);
	snprintf(tag, sizeof(tag), "<%s>", name);
	snprintf(imm, sizeof(imm), "$0x%" PRIx64 ",", vaddr);
	*other_refs = 0;
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long a;
		char *tab = strchr(line, '\t');

		if (sscanf(line, " %lx:", &a) != 1 || !tab)
			continue;
		tab++;
		if (!strncmp(tab, "call", 4) && strstr(tab, tag)) {
			if (n < max)
				addrs[n] = a;
			n++;
		} else if (strstr(tab, tag) || strstr(tab, imm)) {
			(*other_refs)++;
		}
	}
	pclose(f);
	return n;
}

/* Lines of `cmd` output that contain needle as a whole word. */
static size_t count_lines(const char *cmd, const char *needle)
{
	char line[1024];
	size_t n = 0, l = strlen(needle);
	FILE *f = popen(cmd, "r");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		const char *p;

		for (p = line; (p = strstr(p, needle)); p += l) {
			char after = p[l];

			if ((p == line || p[-1] == ' ' || p[-1] == '\t') &&
			    (after == ' ' || after == '\n' || after == 0 || after == '\t')) {
				n++;
				break;
			}
		}
	}
	pclose(f);
	return n;
}

static enum callsites_verdict verdict_of(const struct symtab *st, const struct callsites *cs,
					 const char *name, const uint64_t **offs, size_t *n)
{
	const struct sym *s = syms__find(st, name);

	ck_assert_msg(s, "no symbol %s in %s", name, st->path);
	*n = 0;
	return callsites__find(cs, (size_t)(s - st->syms), offs, n);
}

/* Every function of st, as candidates. */
static struct callsites *scan_all(const struct symtab *st)
{
	struct callsites *cs = NULL;
	size_t *all = malloc(st->nsyms * sizeof(*all)), i;

	ck_assert_ptr_nonnull(all);
	for (i = 0; i < st->nsyms; i++)
		all[i] = i;
	ck_assert_int_eq(callsites__scan(st, all, st->nsyms, &cs), 0);
	free(all);
	return cs;
}

/* _i: 0 = PIE, 1 = non-PIE. */
START_TEST(each_rule_on_its_own_function)
{
	static const struct {
		const char *name;
		enum callsites_verdict pie, nopie;
		size_t sites;
	} want[] = {
		{"f_direct", CALLSITES_OK, CALLSITES_OK, 2},
		{"f_rec", CALLSITES_OK, CALLSITES_OK, 2},
		{"f_after_call", CALLSITES_OK, CALLSITES_OK, 1},
		{"f_shorter", CALLSITES_OK, CALLSITES_OK, 1},
		{"f_tail", CALLSITES_JUMPED, CALLSITES_JUMPED, 0},
		{"f_short", CALLSITES_JUMPED, CALLSITES_JUMPED, 0},
		{"f_lea", CALLSITES_ADDRESS, CALLSITES_ADDRESS, 0},
		{"f_data", CALLSITES_ADDRESS, CALLSITES_ADDRESS, 0},
		{"f_bnd", CALLSITES_ADDRESS, CALLSITES_ADDRESS, 0},
		{"f_unsized", CALLSITES_ADDRESS, CALLSITES_ADDRESS, 0},
		{"f_imm", CALLSITES_OK, CALLSITES_ADDRESS, 1},
		{"f_fall", CALLSITES_FALLTHROUGH, CALLSITES_FALLTHROUGH, 0},
		{"f_table", CALLSITES_BODY, CALLSITES_BODY, 0},
		{"f_export", CALLSITES_EXPORTED, CALLSITES_EXPORTED, 0},
		{"f_never", CALLSITES_NO_CALLS, CALLSITES_NO_CALLS, 0},
		{"main", CALLSITES_ADDRESS, CALLSITES_ADDRESS, 0}, /* _start takes it */
	};
	char bin[128], cmd[512];
	struct symtab *st = NULL;
	struct callsites *cs;
	size_t i;

	snprintf(bin, sizeof(bin), "%s/rules-%d", tmpdir, _i);
	snprintf(cmd, sizeof(cmd), "gcc %s -rdynamic -o '%s' tests/data/callsites_rules.S",
		 _i ? "-no-pie -DNOPIE" : "", bin);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
	ck_assert_int_eq(syms__load(bin, &st), 0);
	cs = scan_all(st);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct sym *s = syms__find(st, want[i].name);
		enum callsites_verdict exp = _i ? want[i].nopie : want[i].pie;
		const uint64_t *offs = NULL;
		uint64_t addrs[8];
		size_t n = 0, other, k;
		enum callsites_verdict v = verdict_of(st, cs, want[i].name, &offs, &n);

		ck_assert_msg(v == exp, "%s: %s, want %s", want[i].name, callsites__verdict_name(v),
			      callsites__verdict_name(exp));
		if (v != CALLSITES_OK)
			continue;
		ck_assert_uint_eq(n, want[i].sites);
		/* The same call instructions as objdump's (file offset -
		 * vaddr is the segment's constant). */
		ck_assert_uint_eq(objdump_calls(bin, s->name, s->vaddr, addrs, 8, &other), n);
		for (k = 0; k < n; k++)
			ck_assert_uint_eq(offs[k] - s->offset + s->vaddr, addrs[k]);
	}
	callsites__free(cs);
	syms__free(st);
	unlink(bin);
}
END_TEST

/* Checks every function the scan clears in bin against binutils; returns
 * how many were cleared. */
static size_t verify_cleared(const char *bin)
{
	struct symtab *st = NULL;
	struct callsites *cs;
	char relcmd[512], dyncmd[512];
	size_t i, cleared = 0;

	ck_assert_int_eq(syms__load(bin, &st), 0);
	cs = scan_all(st);
	snprintf(relcmd, sizeof(relcmd), "readelf -rW '%s'", bin);
	snprintf(dyncmd, sizeof(dyncmd), "objdump -T '%s'", bin);
	for (i = 0; i < st->nsyms; i++) {
		const struct sym *s = &st->syms[i];
		const uint64_t *offs = NULL;
		uint64_t addrs[64];
		size_t n = 0, other, k, nd;
		char hex[40];

		if (callsites__find(cs, i, &offs, &n) != CALLSITES_OK)
			continue;
		cleared++;
		ck_assert_uint_gt(n, 0);
		nd = objdump_calls(bin, s->name, s->vaddr, addrs, 64, &other);
		ck_assert_msg(nd == n, "%s: %s: %zu call sites, objdump %zu", bin, s->name, n, nd);
		ck_assert_msg(other == 0, "%s: %s cleared but objdump shows %zu other references",
			      bin, s->name, other);
		for (k = 0; k < n && k < 64; k++)
			ck_assert_uint_eq(offs[k] - s->offset + s->vaddr, addrs[k]);
		/* No relocation with it as addend or symbol, not exported. */
		snprintf(hex, sizeof(hex), "%" PRIx64, s->vaddr);
		ck_assert_msg(count_lines(relcmd, hex) == 0, "%s: relocation names %s", bin,
			      s->name);
		ck_assert_msg(count_lines(dyncmd, s->name) == 0, "%s: %s is exported", bin,
			      s->name);
	}
	callsites__free(cs);
	syms__free(st);
	return cleared;
}

/* The plan counts at call sites exactly what the scan cleared, among the
 * functions whose entry stays single-stepped or is refused. */
static void verify_plan(const char *bin)
{
	struct symtab *st = NULL;
	struct plan_opts po = {.entry_only = true, .callsites = true};
	struct plan *p = NULL;
	struct callsites *cs;
	size_t *idx = NULL, n = 0, i, sum = 0;

	ck_assert_int_eq(syms__load(bin, &st), 0);
	ck_assert_int_eq(syms__select(st, NULL, 0, &idx, &n), 0);
	ck_assert_int_eq(plan__build(st, idx, n, &po, &p), 0);
	cs = scan_all(st);
	for (i = 0; i < n; i++) {
		const struct plan_site *ps = &p->sites[i];
		const uint64_t *offs = NULL;
		size_t nc = 0, k;
		enum callsites_verdict v = callsites__find(cs, idx[i], &offs, &nc);

		if (ps->rule != PLAN_CALLSITES) {
			/* Not used: the entry (or shifted site) is cheap, or the
			 * scan did not clear it. */
			ck_assert(ps->cls != INSN_SSTEP || v != CALLSITES_OK);
			continue;
		}
		ck_assert_int_eq(v, CALLSITES_OK);
		ck_assert_uint_eq(ps->offset, PLAN_NO_PROBE);
		ck_assert_int_eq(ps->cls, INSN_EMULATED);
		ck_assert_int_eq((int32_t)ps->sp_delta, -8);
		ck_assert_uint_eq(ps->ncalls, nc);
		for (k = 0; k < nc; k++)
			ck_assert_uint_eq(ps->calls[k], offs[k]);
		sum += nc;
	}
	ck_assert_uint_eq(sum, p->callsite_sites);
	callsites__free(cs);
	plan__free(p);
	free(idx);
	syms__free(st);
}

/* _i: compiler (bit 2), -fcf-protection (bit 3), -O level (bits 0-1). */
START_TEST(cleared_functions_agree_with_binutils)
{
	const char *cc = (_i & 4) ? "clang" : "gcc";
	const char *cf = (_i & 8) ? "-fcf-protection" : "-fcf-protection=none";
	char bin[256], cmd[1024];
	struct symtab *st = NULL;
	struct callsites *cs;
	const uint64_t *offs;
	size_t n;

	snprintf(bin, sizeof(bin), "%s/corpus-%s-O%d%s", tmpdir, cc, _i & 3, cf);
	snprintf(cmd, sizeof(cmd), "%s -O%d -g -w %s -o '%s' tests/data/plan_corpus.c", cc, _i & 3,
		 cf, bin);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
	/* main (taken by _start) and addr_taken (a pointer) never clear;
	 * direct_only always does, with its two calls. */
	ck_assert_uint_ge(verify_cleared(bin), 1);
	ck_assert_int_eq(syms__load(bin, &st), 0);
	cs = scan_all(st);
	ck_assert_int_eq(verdict_of(st, cs, "main", &offs, &n), CALLSITES_ADDRESS);
	ck_assert_int_eq(verdict_of(st, cs, "addr_taken", &offs, &n), CALLSITES_ADDRESS);
	ck_assert_int_eq(verdict_of(st, cs, "direct_only", &offs, &n), CALLSITES_OK);
	ck_assert_uint_eq(n, 2);
	callsites__free(cs);
	syms__free(st);
	verify_plan(bin);
	unlink(bin);
}
END_TEST

/* A stripped binary: rule 1 cannot see every function, nothing clears. */
START_TEST(stripped_binary_is_not_analysed)
{
	char bin[128], cmd[512];
	struct symtab *st = NULL;
	struct callsites *cs;
	const uint64_t *offs;
	size_t i, n;

	snprintf(bin, sizeof(bin), "%s/stripped", tmpdir);
	snprintf(cmd, sizeof(cmd),
		 "gcc -rdynamic -o '%s' tests/data/callsites_rules.S && strip '%s'", bin, bin);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
	ck_assert_int_eq(syms__load(bin, &st), 0);
	ck_assert(st->from_dynsym);
	cs = scan_all(st);
	for (i = 0; i < st->nsyms; i++)
		ck_assert_int_eq(callsites__find(cs, i, &offs, &n), CALLSITES_NOT_ANALYSED);
	callsites__free(cs);
	syms__free(st);
	unlink(bin);
}
END_TEST

START_TEST(bad_arguments)
{
	struct callsites *cs = (struct callsites *)1;
	struct symtab st;
	size_t one = 0;

	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(callsites__scan(NULL, NULL, 0, &cs), -EINVAL);
	ck_assert_int_eq(callsites__scan(&st, NULL, 1, &cs), -EINVAL);
	ck_assert_int_eq(callsites__scan(&st, &one, 1, NULL), -EINVAL);
	/* No candidate: nothing to read, an empty result. */
	ck_assert_int_eq(callsites__scan(&st, NULL, 0, &cs), 0);
	ck_assert_int_eq(callsites__find(cs, 0, NULL, NULL), CALLSITES_NOT_ANALYSED);
	callsites__free(cs);
	callsites__free(NULL);
	ck_assert_str_eq(callsites__verdict_name(CALLSITES_JUMPED), "jumped to");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("callsites");
	TCase *tc = tcase_create("callsites");
	SRunner *sr;
	int failed;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cabbpf-callsites.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, each_rule_on_its_own_function, 0, 2);
	tcase_add_loop_test(tc, cleared_functions_agree_with_binutils, 0, 16);
	tcase_add_test(tc, stripped_binary_is_not_analysed);
	tcase_add_test(tc, bad_arguments);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	rmdir(tmpdir);
	return failed ? 1 : 0;
}
