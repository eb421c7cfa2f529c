// SPDX-License-Identifier: BSD-2-Clause
/*
 * .eh_frame's FDEs as function ranges (fde.h). The layout is the DWARF
 * call frame information's with the LSB's changes (Linux Standard Base,
 * "Exception Frames"): a sequence of CIEs and FDEs, each a length then an
 * id (0 for a CIE; for an FDE, the distance back to its CIE), the FDE's
 * initial location and range encoded as its CIE's augmentation 'R' says.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "user/elf/fde.h"

/* DW_EH_PE_* (the LSB's pointer encodings). */
#define PE_OMIT 0xff
#define PE_FORMAT 0x0f
#define PE_APP 0x70
#define PE_INDIRECT 0x80
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_DATAREL 0x30
#define PE_ALIGNED 0x50

/* A bounded reader over the section's bytes. */
struct rd {
	const uint8_t *b;
	size_t size, pos;
	bool bad;
};

static uint64_t rd_bytes(struct rd *r, size_t n)
{
	uint64_t v = 0;
	size_t i;

	if (r->bad || n > r->size - r->pos) {
		r->bad = true;
		return 0;
	}
	for (i = 0; i < n; i++) /* little-endian: x86-64 */
		v |= (uint64_t)r->b[r->pos + i] << (8 * i);
	r->pos += n;
	return v;
}

/* A LEB128's bits, and (sleb) its sign extended from its last byte. */
static uint64_t rd_leb(struct rd *r, bool sleb)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t c;

	do {
		c = (uint8_t)rd_bytes(r, 1);
		if (shift < 64)
			v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	} while (!r->bad && (c & 0x80));
	if (sleb && shift < 64 && (c & 0x40))
		v |= ~0ull << shift;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	return rd_leb(r, false);
}

static int64_t rd_sleb(struct rd *r)
{
	return (int64_t)rd_leb(r, true);
}

/* A pointer encoded as enc, read at the reader's position, whose address
 * is sec_addr + that position. false: an encoding this reader does not
 * decode (the entry is skipped), or out of bounds. */
static bool rd_ptr(struct rd *r, uint8_t enc, uint64_t sec_addr, bool apply, uint64_t *out)
{
	uint64_t at = sec_addr + r->pos, v;

	switch (enc & PE_FORMAT) {
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:
		v = rd_bytes(r, 8);
		break;
	case PE_UDATA4:
		v = rd_bytes(r, 4);
		break;
	case PE_SDATA4:
		v = (uint64_t)(int64_t)(int32_t)rd_bytes(r, 4);
		break;
	case PE_UDATA2:
		v = rd_bytes(r, 2);
		break;
	case PE_SDATA2:
		v = (uint64_t)(int64_t)(int16_t)rd_bytes(r, 2);
		break;
	case PE_ULEB128:
		v = rd_uleb(r);
		break;
	case PE_SLEB128:
		v = (uint64_t)rd_sleb(r);
		break;
	default:
		return false;
	}
	if (r->bad || (enc & PE_INDIRECT))
		return false;
	if (apply && (enc & PE_APP) == PE_PCREL)
		v += at;
	else if (apply && (enc & PE_APP) != PE_ABSPTR)
		return false; /* datarel, textrel, funcrel: not in .eh_frame's FDEs */
	*out = v;
	return true;
}

/* A CIE's FDE pointer encoding, by the CIE's offset. */
struct cie {
	size_t off;
	uint8_t enc;
	bool ok; /* its augmentation was read */
};

/* The CIE at r's position (after its id), its FDE encoding into *c. */
static void read_cie(struct rd *r, size_t end, uint64_t sec_addr, struct cie *c)
{
	const char *aug;
	uint8_t version;
	size_t i, auglen;

	c->enc = PE_ABSPTR;
	c->ok = false;
	version = (uint8_t)rd_bytes(r, 1);
	aug = (const char *)r->b + r->pos;
	auglen = strnlen(aug, end - r->pos);
	if (r->bad || auglen == end - r->pos)
		return;
	r->pos += auglen + 1;
	if (strstr(aug, "eh")) /* an old g++'s: a pointer follows */
		return;
	rd_uleb(r); /* code alignment */
	rd_sleb(r); /* data alignment */
	if (version == 1)
		rd_bytes(r, 1);
	else
		rd_uleb(r); /* return address register */
	if (aug[0] != 'z') {
		c->ok = !r->bad && !aug[0];
		return;
	}
	rd_uleb(r); /* augmentation data length */
	for (i = 1; i < auglen && !r->bad; i++) {
		uint64_t skip;

		switch (aug[i]) {
		case 'R':
			c->enc = (uint8_t)rd_bytes(r, 1);
			break;
		case 'L':
			rd_bytes(r, 1);
			break;
		case 'P': {
			uint8_t penc = (uint8_t)rd_bytes(r, 1);

			/* DW_EH_PE_aligned pads to a pointer's alignment: not
			 * read here, and what follows could not be either */
			if ((penc & PE_APP) == PE_ALIGNED ||
			    !rd_ptr(r, penc & (uint8_t)~PE_INDIRECT, sec_addr, false, &skip))
				return;
			break;
		}
		case 'S':
		case 'B':
			break;
		default:
			return; /* unknown: its data cannot be skipped */
		}
	}
	c->ok = !r->bad;
}

/* Code sections an FDE may describe a function in: executable, not the
 * PLT's entries nor the .init/.fini pieces. */
struct code {
	uint64_t lo, hi;
};

static int code_sections(Elf *elf, struct code **out, size_t *n)
{
	struct code *v = NULL;
	size_t shstrndx, cap = 0, k = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENODATA;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) ||
		    sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || !strncmp(name, ".plt", 4) || !strcmp(name, ".init") ||
		    !strcmp(name, ".fini"))
			continue;
		struct code *nv = vec__grow(v, &cap, k + 1, sizeof(*v), 8);

		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		v[k++] = (struct code){sh.sh_addr, sh.sh_addr + sh.sh_size};
	}
	*out = v;
	*n = k;
	return 0;
}

static bool in_code(const struct code *c, size_t n, uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (lo >= c[i].lo && hi <= c[i].hi)
			return true;
	return false;
}

/*
 * Whether the FDE starting at pc describes a function's entry: there the
 * call has just pushed the return address, so the frame is the CIE's
 * initial one, CFA = rsp + 8. A fragment GCC split off a function (its
 * .cold part, entered by a jump from the middle of its parent) has an FDE
 * of its own whose first row is the parent's frame (CFA = rsp + 56, say):
 * it is no function, and a return probe at its start would write over
 * whatever [rsp] holds there (a local, a saved register). libdw computes
 * the row (its CFI from .eh_frame); one it cannot compute is no entry.
 */
static bool is_entry(Dwarf_CFI *cfi, uint64_t pc)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops;
	size_t nops;
	bool yes = false;

	if (!cfi || dwarf_cfi_addrframe(cfi, pc, &frame) || !frame)
		return false;
	if (!dwarf_frame_cfa(frame, &ops, &nops) && nops == 1)
		yes = (ops[0].atom == DW_OP_breg7 && ops[0].number == 8) ||
		      (ops[0].atom == DW_OP_bregx && ops[0].number == 7 && ops[0].number2 == 8);
	free(frame);
	return yes;
}

static int cmp_range(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The .eh_frame section, or NULL. */
static Elf_Scn *eh_frame(Elf *elf, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh) || sh->sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && !strcmp(name, ".eh_frame"))
			return scn;
	}
	return NULL;
}

int fde__ranges(Elf *elf, struct fde_range **out, size_t *n)
{
	struct fde_range *v = NULL;
	struct cie *cies = NULL;
	struct code *code = NULL;
	Dwarf_CFI *cfi = NULL;
	size_t cap = 0, k = 0, ccap = 0, nc = 0, ncode = 0, off = 0, i;
	Elf_Scn *scn;
	Elf_Data *d;
	GElf_Shdr sh;
	int err;

	*out = NULL;
	*n = 0;
	scn = eh_frame(elf, &sh);
	d = scn ? elf_getdata(scn, NULL) : NULL;
	if (!d || !d->d_buf || !d->d_size)
		return -ENODATA;
	err = code_sections(elf, &code, &ncode);
	if (err)
		return err;
	cfi = dwarf_getcfi_elf(elf);
	while (off + 4 <= d->d_size) {
		struct rd r = {.b = d->d_buf, .size = d->d_size, .pos = off};
		uint64_t len = rd_bytes(&r, 4), id, start, range;
		size_t idpos, end, idsize = 4;

		if (!len)
			break; /* the terminator */
		if (len == 0xffffffffu) {
			len = rd_bytes(&r, 8);
			idsize = 8;
		}
		if (r.bad || len > d->d_size - r.pos || len < idsize)
			break; /* a damaged section: what was read stands */
		end = r.pos + len;
		idpos = r.pos;
		id = rd_bytes(&r, idsize);
		off = end;
		if (!id) { /* a CIE */
			struct cie *nv = vec__grow(cies, &ccap, nc + 1, sizeof(*cies), 16);

			if (!nv) {
				err = -ENOMEM;
				goto cleanup;
			}
			cies = nv;
			/* where its length is: what an FDE's id points back to */
			cies[nc].off = idpos - (idsize == 8 ? 12 : 4);
			r.size = end;
			read_cie(&r, end, sh.sh_addr, &cies[nc]);
			nc++;
			continue;
		}
		/* an FDE: id is the distance from its id back to its CIE */
		if (id > idpos)
			continue;
		for (i = 0; i < nc && cies[i].off != idpos - id; i++)
			;
		if (i == nc || !cies[i].ok)
			continue;
		r.size = end;
		if (!rd_ptr(&r, cies[i].enc, sh.sh_addr, true, &start) ||
		    !rd_ptr(&r, cies[i].enc & PE_FORMAT, sh.sh_addr, false, &range) || !range ||
		    start + range < start || !in_code(code, ncode, start, start + range) ||
		    !is_entry(cfi, start))
			continue;
		struct fde_range *nv = vec__grow(v, &cap, k + 1, sizeof(*v), 256);

		if (!nv) {
			err = -ENOMEM;
			goto cleanup;
		}
		v = nv;
		v[k++] = (struct fde_range){start, start + range};
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_range);
	/* one per start: the widest */
	for (i = 1, off = k ? 1 : 0; i < k; i++) {
		if (v[i].start == v[off - 1].start) {
			if (v[i].end > v[off - 1].end)
				v[off - 1].end = v[i].end;
			continue;
		}
		v[off++] = v[i];
	}
	*out = v;
	*n = off;
	v = NULL;
	err = 0;
cleanup:
	if (cfi)
		dwarf_cfi_end(cfi);
	free(v);
	free(cies);
	free(code);
	return err;
}
