// SPDX-License-Identifier: BSD-2-Clause
/* Call-site counting: which functions' addresses never escape (callsites.h). */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "user/probe/callsites.h"
#include "user/elf/image.h"
#include "user/elf/insn.h"

struct cand {
	uint64_t vaddr;
	size_t sym;
	enum callsites_verdict v; /* CALLSITES_OK while nothing escaped */
	uint64_t *va, *offs;	  /* call sites: address, file offset */
	size_t nsites, cap;
};

struct callsites {
	struct cand *c; /* ascending sym (so ascending vaddr) */
	size_t n;
};

/* Where a section's bytes are: in memory (vaddr) and in the mapped file. */
struct sec {
	uint64_t addr, size;
	const uint8_t *bytes;
};

/* Everything one scan needs; lives for the duration of callsites__scan. */
struct scan {
	const struct symtab *st;
	struct callsites *cs;
	const uint8_t *file;
	size_t fsize;
	Elf *elf;
	bool exec_type; /* ET_EXEC: 32-bit absolute addresses are possible */
	uint64_t lo, hi; /* range of candidate addresses */
	size_t *hash;	 /* cand index + 1, open addressing */
	size_t hmask;
	struct sec *text;
	size_t ntext;
	/* per sized function: bytes decoded from its start, facts */
	uint64_t *decoded;
	bool *indirect, *last_ok;
	bool *overlaps;
};

static size_t hash_of(uint64_t v, size_t mask)
{
	return (size_t)((v * 0x9e3779b97f4a7c15ull) >> 17) & mask;
}

/* The candidate at address v, or NULL. */
static struct cand *lookup(const struct scan *sc, uint64_t v)
{
	size_t h;

	if (v < sc->lo || v > sc->hi)
		return NULL;
	for (h = hash_of(v, sc->hmask); sc->hash[h]; h = (h + 1) & sc->hmask)
		if (sc->cs->c[sc->hash[h] - 1].vaddr == v)
			return &sc->cs->c[sc->hash[h] - 1];
	return NULL;
}

static void escape(struct cand *c, enum callsites_verdict why)
{
	if (c && c->v == CALLSITES_OK)
		c->v = why;
}

static int add_site(struct cand *c, uint64_t va, uint64_t off)
{
	/* Two arrays of one capacity: the second grows to the first's. */
	size_t cap = c->cap, cap2 = c->cap;
	uint64_t *a = vec__grow(c->va, &cap, c->nsites + 1, sizeof(*a), 4);

	if (!a)
		return -ENOMEM;
	c->va = a;
	a = vec__grow(c->offs, &cap2, cap, sizeof(*a), 4);
	if (!a)
		return -ENOMEM;
	c->offs = a;
	c->cap = cap;
	c->va[c->nsites] = va;
	c->offs[c->nsites++] = off;
	return 0;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* Rule 1: decode each sized function; record call sites, jumps to
 * candidates, and the facts rule 5 needs. */
static int sweep(struct scan *sc, struct insn_dec *d)
{
	const struct symtab *st = sc->st;
	size_t i;
	int err;

	for (i = 0; i < st->nsyms; i++) {
		const struct sym *s = &st->syms[i];
		size_t pos = 0;
		struct insn in;

		memset(&in, 0, sizeof(in));
		if (i + 1 < st->nsyms && s->vaddr + s->size > st->syms[i + 1].vaddr)
			sc->overlaps[i] = sc->overlaps[i + 1] = true;
		if (sc->overlaps[i] || s->offset >= sc->fsize || s->size > sc->fsize - s->offset)
			continue; /* decoded nowhere: rule 2 sees its bytes */
		while (pos < s->size) {
			const uint8_t *code = sc->file + s->offset + pos;
			struct cand *c;

			if (insn__decode(d, code, (size_t)(s->size - pos), s->vaddr + pos, &in))
				break;
			if (in.indirect_jump)
				sc->indirect[i] = true;
			c = in.direct_branch ? lookup(sc, in.target) : NULL;
			if (c && in.is_call && in.len == 5 && code[0] == 0xe8 &&
			    in.cls == INSN_EMULATED) {
				err = add_site(c, s->vaddr + pos, s->offset + pos);
				if (err)
					return err;
			} else if (c) {
				escape(c, in.is_call ? CALLSITES_ADDRESS : CALLSITES_JUMPED);
			}
			escape(lookup(sc, in.ref_rip), CALLSITES_ADDRESS);
			escape(lookup(sc, in.ref_imm), CALLSITES_ADDRESS);
			pos += in.len;
		}
		sc->decoded[i] = pos;
		/* A call is accepted as the last instruction: only a call to
		 * a function that does not return ends a function. */
		sc->last_ok[i] = pos == s->size && (in.no_fallthrough || in.is_call);
	}
	return 0;
}

struct pair {
	uint64_t va, off;
};

static int cmp_pair(const void *a, const void *b)
{
	uint64_t x = ((const struct pair *)a)->va, y = ((const struct pair *)b)->va;

	return x < y ? -1 : x > y;
}

/* Sites ascending and unique: a function decoded under two symbols must
 * not have its call sites counted twice. */
static int sort_sites(struct cand *c)
{
	struct pair *p;
	size_t i, m = 0;

	if (!c->nsites)
		return 0;
	p = malloc(c->nsites * sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (i = 0; i < c->nsites; i++) {
		p[i].va = c->va[i];
		p[i].off = c->offs[i];
	}
	qsort(p, c->nsites, sizeof(*p), cmp_pair);
	for (i = 0; i < c->nsites; i++)
		if (!m || p[i].va != c->va[m - 1]) {
			c->va[m] = p[i].va;
			c->offs[m++] = p[i].off;
		}
	c->nsites = m;
	free(p);
	return 0;
}

/* Are the bytes [lo, hi) of section t padding only (nops, int3)? */
static bool padding_only(struct insn_dec *d, const struct sec *t, uint64_t lo, uint64_t hi)
{
	while (lo < hi) {
		struct insn in;

		if (lo < t->addr || hi > t->addr + t->size ||
		    insn__decode(d, t->bytes + (lo - t->addr), (size_t)(hi - lo), lo, &in) ||
		    !in.padding)
			return false;
		lo += in.len;
	}
	return true;
}

/* Rule 2 over bytes [lo, hi) of section t that no decoded instruction
 * covers: every window that could be an operand naming a candidate. */
static void scan_raw(struct scan *sc, const struct sec *t, uint64_t lo, uint64_t hi)
{
	uint64_t end = t->addr + t->size, va;

	for (va = lo; va < hi; va++) {
		const uint8_t *p = t->bytes + (va - t->addr);
		unsigned k;

		if (va + 2 <= end && (p[0] == 0xeb || (p[0] >= 0x70 && p[0] <= 0x7f) ||
				      (p[0] >= 0xe0 && p[0] <= 0xe3)))
			escape(lookup(sc, va + 2 + (uint64_t)(int64_t)(int8_t)p[1]), CALLSITES_JUMPED);
		if (va + 4 > end)
			continue;
		/* rel32 operands end 0-4 bytes before their instruction does
		 * (calls and jumps: 0; rip-relative with an immediate: 1-4) */
		for (k = 0; k <= 4; k++)
			escape(lookup(sc, va + 4 + k + (uint64_t)(int64_t)(int32_t)le32(p)),
			       CALLSITES_ADDRESS);
		escape(lookup(sc, le32(p)), CALLSITES_ADDRESS);
		if (va + 8 <= end)
			escape(lookup(sc, le64(p)), CALLSITES_ADDRESS);
	}
}

/* Linear decode of [lo, hi), which starts at a zero-size symbol (so at an
 * instruction): rule 1 without call sites (any reference escapes). Returns
 * where decoding stopped. */
static uint64_t decode_unsized(struct scan *sc, struct insn_dec *d, const struct sec *t,
			       uint64_t lo, uint64_t hi)
{
	while (lo < hi) {
		struct insn in;

		if (insn__decode(d, t->bytes + (lo - t->addr), (size_t)(hi - lo), lo, &in))
			break;
		if (in.direct_branch)
			escape(lookup(sc, in.target),
			       in.is_call ? CALLSITES_ADDRESS : CALLSITES_JUMPED);
		escape(lookup(sc, in.ref_rip), CALLSITES_ADDRESS);
		escape(lookup(sc, in.ref_imm), CALLSITES_ADDRESS);
		lo += in.len;
	}
	return lo;
}

/* Bytes of [lo, hi) that are not padding are read raw. */
static void scan_rest(struct scan *sc, struct insn_dec *d, const struct sec *t, uint64_t lo,
		      uint64_t hi)
{
	if (lo < hi && !padding_only(d, t, lo, hi))
		scan_raw(sc, t, lo, hi);
}

/* Rule 2 for the bytes of [lo, hi) outside decoded functions: code at a
 * zero-size symbol (crt helpers, assembly without .size) is decoded from
 * there; the rest is skipped when padding only, read raw otherwise. */
static void scan_gap(struct scan *sc, struct insn_dec *d, const struct sec *t, uint64_t lo,
		     uint64_t hi)
{
	const struct symtab *st = sc->st;
	size_t z = 0;

	if (lo < t->addr)
		lo = t->addr;
	if (hi > t->addr + t->size)
		hi = t->addr + t->size;
	while (z < st->nzero && st->zero[z].vaddr < lo)
		z++;
	while (lo < hi) {
		uint64_t zs = z < st->nzero && st->zero[z].vaddr < hi ? st->zero[z].vaddr : hi;
		uint64_t ze, at;

		scan_rest(sc, d, t, lo, zs);
		if (zs == hi)
			break;
		z++;
		ze = z < st->nzero && st->zero[z].vaddr < hi ? st->zero[z].vaddr : hi;
		at = decode_unsized(sc, d, t, zs, ze);
		scan_rest(sc, d, t, at, ze);
		lo = ze;
	}
}

/* Rule 2 over one executable section: the gaps between (and inside) the
 * decoded functions. */
static void scan_text(struct scan *sc, struct insn_dec *d, const struct sec *t)
{
	const struct symtab *st = sc->st;
	uint64_t at = t->addr;
	size_t i;

	for (i = 0; i < st->nsyms; i++) {
		const struct sym *s = &st->syms[i];

		if (s->vaddr + s->size <= t->addr || s->vaddr >= t->addr + t->size)
			continue;
		if (s->vaddr > at)
			scan_gap(sc, d, t, at, s->vaddr);
		if (s->vaddr + sc->decoded[i] > at)
			at = s->vaddr + sc->decoded[i];
		if (sc->decoded[i] < s->size) /* the rest did not decode */
			scan_gap(sc, d, t, at, s->vaddr + s->size);
		if (s->vaddr + s->size > at)
			at = s->vaddr + s->size;
	}
	scan_gap(sc, d, t, at, t->addr + t->size);
}

/* Rule 3 over one data section at addr. A non-PIE's pointers are plain
 * values (no relocation), so every byte offset is read, packed structs
 * included; a PIE's need a relocation (rule 4), so only aligned 8-byte
 * slots are read (RELR-packed ones, whose value is in place): unaligned
 * windows over small integers would look like a PIE's low addresses. */
static void scan_data(struct scan *sc, const uint8_t *b, uint64_t addr, uint64_t size)
{
	uint64_t i;

	for (i = 0; i + 4 <= size; i++) {
		if (sc->exec_type) {
			escape(lookup(sc, le32(b + i)), CALLSITES_ADDRESS);
			if (i + 8 <= size)
				escape(lookup(sc, le64(b + i)), CALLSITES_ADDRESS);
		} else if (i + 8 <= size && !((addr + i) & 7)) {
			escape(lookup(sc, le64(b + i)), CALLSITES_ADDRESS);
		}
	}
}

/* Value of symbol index idx of the symbol table section link. */
static uint64_t sym_value(Elf *elf, size_t link, size_t idx)
{
	Elf_Scn *scn = elf_getscn(elf, link);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	GElf_Sym sym;

	if (!data || !gelf_getsym(data, (int)idx, &sym) || sym.st_shndx == SHN_UNDEF)
		return 0;
	return sym.st_value;
}

/* Rule 4 (RELA) and the .dynsym half of rule 5 for one section. */
static void scan_meta(struct scan *sc, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n;

	if (!data || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		if (sh->sh_type == SHT_RELA) {
			GElf_Rela r;
			size_t si;

			if (!gelf_getrela(data, (int)i, &r))
				break;
			si = GELF_R_SYM(r.r_info);
			escape(lookup(sc, (uint64_t)r.r_addend), CALLSITES_ADDRESS);
			if (si)
				escape(lookup(sc, sym_value(sc->elf, sh->sh_link, si) +
							  (uint64_t)r.r_addend),
				       CALLSITES_ADDRESS);
		} else if (sh->sh_type == SHT_REL) {
			GElf_Rel r;

			if (!gelf_getrel(data, (int)i, &r))
				break;
			if (GELF_R_SYM(r.r_info))
				escape(lookup(sc, sym_value(sc->elf, sh->sh_link,
							    GELF_R_SYM(r.r_info))),
				       CALLSITES_ADDRESS);
		} else { /* SHT_DYNSYM */
			GElf_Sym s;

			if (!gelf_getsym(data, (int)i, &s))
				break;
			if (s.st_shndx != SHN_UNDEF)
				escape(lookup(sc, s.st_value), CALLSITES_EXPORTED);
		}
	}
}

/* Walks the section headers: collects executable sections, scans data
 * sections and relocations. */
static int scan_sections(struct scan *sc)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	while ((scn = elf_nextscn(sc->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		if (sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL || sh.sh_type == SHT_DYNSYM) {
			scan_meta(sc, scn, &sh);
			continue;
		}
		if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS || !sh.sh_size ||
		    sh.sh_offset > sc->fsize || sh.sh_size > sc->fsize - sh.sh_offset)
			continue;
		if (!(sh.sh_flags & SHF_EXECINSTR)) {
			scan_data(sc, sc->file + sh.sh_offset, sh.sh_addr, sh.sh_size);
			continue;
		}
		if (sc->ntext == cap) {
			size_t nc = cap ? cap * 2 : 8;
			struct sec *t = realloc(sc->text, nc * sizeof(*t));

			if (!t)
				return -ENOMEM;
			sc->text = t;
			cap = nc;
		}
		sc->text[sc->ntext].addr = sh.sh_addr;
		sc->text[sc->ntext].size = sh.sh_size;
		sc->text[sc->ntext++].bytes = sc->file + sh.sh_offset;
	}
	return 0;
}

/* Start of the nearest symbol (sized or not) at or below v, or 0. */
static uint64_t sym_below(const struct symtab *st, uint64_t v)
{
	uint64_t best = 0;
	size_t a = 0, b = st->nsyms;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (st->syms[m].vaddr <= v)
			a = m + 1;
		else
			b = m;
	}
	if (a > 0)
		best = st->syms[a - 1].vaddr;
	for (a = 0, b = st->nzero; a < b;) {
		size_t m = a + (b - a) / 2;

		if (st->zero[m].vaddr <= v)
			a = m + 1;
		else
			b = m;
	}
	if (a > 0 && st->zero[a - 1].vaddr > best)
		best = st->zero[a - 1].vaddr;
	return best;
}

/* Rule 5's fall-through half: may the code before candidate c run into it?
 * Decodes from the nearest symbol below c (an instruction start) up to c:
 * the last instruction that is not padding must not fall through. */
static bool may_fall_in(const struct scan *sc, struct insn_dec *d, const struct cand *c)
{
	const struct sec *t = NULL;
	uint64_t from, at;
	bool any = false, ok = false;
	size_t i;

	for (i = 0; i < sc->ntext; i++)
		if (c->vaddr >= sc->text[i].addr && c->vaddr < sc->text[i].addr + sc->text[i].size)
			t = &sc->text[i];
	if (!t)
		return true;
	from = c->vaddr > t->addr ? sym_below(sc->st, c->vaddr - 1) : t->addr;
	if (from < t->addr)
		from = t->addr;
	for (at = from; at < c->vaddr;) {
		struct insn in;

		if (insn__decode(d, t->bytes + (at - t->addr), (size_t)(c->vaddr - at), at, &in))
			return true;
		if (!in.padding) {
			any = true;
			ok = in.no_fallthrough || in.is_call;
		}
		at += in.len;
	}
	if (at != c->vaddr)
		return true;
	/* Only padding since a symbol: what lies before that symbol is not
	 * known here, unless it is the start of the section. */
	return any ? !ok : from != t->addr;
}

static int build_hash(struct scan *sc)
{
	struct callsites *cs = sc->cs;
	size_t size = 16, i;

	while (size < cs->n * 2)
		size *= 2;
	sc->hash = calloc(size, sizeof(*sc->hash));
	if (!sc->hash)
		return -ENOMEM;
	sc->hmask = size - 1;
	sc->lo = UINT64_MAX;
	sc->hi = 0;
	for (i = 0; i < cs->n; i++) {
		size_t h = hash_of(cs->c[i].vaddr, sc->hmask);

		while (sc->hash[h])
			h = (h + 1) & sc->hmask;
		sc->hash[h] = i + 1;
		if (cs->c[i].vaddr < sc->lo)
			sc->lo = cs->c[i].vaddr;
		if (cs->c[i].vaddr > sc->hi)
			sc->hi = cs->c[i].vaddr;
	}
	return 0;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* The candidates, ascending and unique; none for a stripped binary. */
static int make_cands(const struct symtab *st, const size_t *cand, size_t n, struct callsites *cs)
{
	size_t *v, i;

	if (st->from_dynsym || !n)
		return 0;
	v = malloc(n * sizeof(*v));
	cs->c = calloc(n, sizeof(*cs->c));
	if (!v || !cs->c) {
		free(v);
		return -ENOMEM;
	}
	memcpy(v, cand, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_size);
	for (i = 0; i < n; i++) {
		if (v[i] >= st->nsyms || (cs->n && cs->c[cs->n - 1].sym == v[i]))
			continue;
		cs->c[cs->n].sym = v[i];
		cs->c[cs->n++].vaddr = st->syms[v[i]].vaddr;
	}
	free(v);
	return 0;
}

/* Rules 1-5 over the open file; fills sc->cs. */
static int analyse(struct scan *sc, struct insn_dec *d)
{
	const struct symtab *st = sc->st;
	GElf_Ehdr eh;
	size_t i;
	int err;

	if (!gelf_getehdr(sc->elf, &eh))
		return -ENOEXEC;
	sc->exec_type = eh.e_type == ET_EXEC;
	err = build_hash(sc);
	if (err)
		return err;
	escape(lookup(sc, eh.e_entry), CALLSITES_EXPORTED);
	sc->decoded = calloc(st->nsyms + 1, sizeof(*sc->decoded));
	sc->indirect = calloc(st->nsyms + 1, sizeof(bool));
	sc->last_ok = calloc(st->nsyms + 1, sizeof(bool));
	sc->overlaps = calloc(st->nsyms + 1, sizeof(bool));
	if (!sc->decoded || !sc->indirect || !sc->last_ok || !sc->overlaps)
		return -ENOMEM;
	err = sweep(sc, d);
	if (err)
		return err;
	for (i = 0; i < sc->cs->n; i++) {
		err = sort_sites(&sc->cs->c[i]);
		if (err)
			return err;
	}
	err = scan_sections(sc);
	if (err)
		return err;
	for (i = 0; i < sc->ntext; i++)
		scan_text(sc, d, &sc->text[i]);
	for (i = 0; i < sc->cs->n; i++) {
		struct cand *c = &sc->cs->c[i];

		if (sc->indirect[c->sym] || sc->overlaps[c->sym] ||
		    sc->decoded[c->sym] != st->syms[c->sym].size)
			escape(c, CALLSITES_BODY);
		if (c->v == CALLSITES_OK && may_fall_in(sc, d, c))
			escape(c, CALLSITES_FALLTHROUGH);
		if (c->v == CALLSITES_OK && !c->nsites)
			c->v = CALLSITES_NO_CALLS;
	}
	return 0;
}

int callsites__scan(const struct symtab *st, const size_t *cand, size_t n, struct callsites **out)
{
	struct scan sc;
	struct insn_dec *d = NULL;
	struct image im = {NULL, 0, -1};
	int err;

	if (!st || !out || (n && !cand))
		return -EINVAL;
	*out = NULL;
	memset(&sc, 0, sizeof(sc));
	sc.st = st;
	sc.cs = calloc(1, sizeof(*sc.cs));
	if (!sc.cs)
		return -ENOMEM;
	err = make_cands(st, cand, n, sc.cs);
	if (err || !sc.cs->n)
		goto cleanup;
	err = image__map(st->path, &im);
	if (err)
		goto cleanup;
	sc.file = im.base;
	sc.fsize = im.size;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		err = -ENOEXEC;
		goto cleanup;
	}
	sc.elf = elf_begin(im.fd, ELF_C_READ_MMAP, NULL);
	if (!sc.elf || elf_kind(sc.elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto cleanup;
	}
	err = insn__open(&d);
	if (!err)
		err = analyse(&sc, d);
cleanup:
	insn__close(d);
	if (sc.elf)
		elf_end(sc.elf);
	image__unmap(&im);
	free(sc.hash);
	free(sc.text);
	free(sc.decoded);
	free(sc.indirect);
	free(sc.last_ok);
	free(sc.overlaps);
	if (err) {
		callsites__free(sc.cs);
		return err;
	}
	*out = sc.cs;
	return 0;
}

enum callsites_verdict callsites__find(const struct callsites *cs, size_t sym,
				       const uint64_t **offs, size_t *n)
{
	size_t a = 0, b = cs ? cs->n : 0;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (cs->c[m].sym == sym) {
			if (cs->c[m].v == CALLSITES_OK && offs && n) {
				*offs = cs->c[m].offs;
				*n = cs->c[m].nsites;
			}
			return cs->c[m].v;
		}
		if (cs->c[m].sym < sym)
			a = m + 1;
		else
			b = m;
	}
	return CALLSITES_NOT_ANALYSED;
}

const char *callsites__verdict_name(enum callsites_verdict v)
{
	switch (v) {
	case CALLSITES_OK:
		return "direct calls only";
	case CALLSITES_NO_CALLS:
		return "never called directly";
	case CALLSITES_JUMPED:
		return "jumped to";
	case CALLSITES_ADDRESS:
		return "address taken";
	case CALLSITES_EXPORTED:
		return "exported";
	case CALLSITES_BODY:
		return "jump table or undecodable body";
	case CALLSITES_FALLTHROUGH:
		return "code may fall into it";
	case CALLSITES_NOT_ANALYSED:
	default:
		return "not analysed";
	}
}

void callsites__free(struct callsites *cs)
{
	size_t i;

	if (!cs)
		return;
	for (i = 0; i < cs->n; i++) {
		free(cs->c[i].va);
		free(cs->c[i].offs);
	}
	free(cs->c);
	free(cs);
}
