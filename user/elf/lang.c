// SPDX-License-Identifier: BSD-2-Clause
/* Language runtimes in an ELF binary (see lang.h for what is looked at). */
#include "user/elf/lang.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/elf/image.h"

/* One symbol name: what it says about the languages. */
static void lang__note_symbol(const char *name, bool defined, struct lang_info *out)
{
	/* A referenced personality routine is enough: the program's own
	 * unwind tables name it, whoever provides it. */
	if (!strcmp(name, "__gxx_personality_v0"))
		out->cxx = true;
	if (!strcmp(name, "rust_eh_personality") || !strncmp(name, "__rust_", 7))
		out->rust = true;
	/* Defined only: a C program could import a symbol of that name from a
	 * Go shared library, and its own stacks would still be C's. */
	if (defined && !out->go && !strcmp(name, "runtime.main")) {
		out->go = true;
		out->go_mark = "runtime.main";
	}
	if (defined && !out->go && !strcmp(name, "runtime.goexit")) {
		out->go = true;
		out->go_mark = "runtime.goexit";
	}
	if (defined && (!strcmp(name, "Builtins_JSEntry") ||
			!strcmp(name, "_ZN2v87Isolate3NewERKNS0_12CreateParamsE")))
		out->v8 = true;
	if (defined && !strcmp(name, "JNI_CreateJavaVM"))
		out->jvm = true;
	if (defined && !strcmp(name, "caml_start_program"))
		out->ocaml = true;
}

/* Every symbol of the symbol-table section scn. */
static void lang__scan_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct lang_info *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, count;
	GElf_Sym s;

	if (!data || !sh->sh_entsize)
		return;
	count = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < count; i++) {
		const char *name;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (name && name[0])
			lang__note_symbol(name, s.st_shndx != SHN_UNDEF, out);
	}
}

int lang__detect(const char *path, struct lang_info *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf *elf = NULL;
	int fd = -1, err = 0;

	if (!path || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	err = image__open_elf(path, &fd, &elf);
	if (err == -EISDIR)
		err = -ENOEXEC; /* lang.h: not a program, whatever kind of file */
	if (err)
		goto cleanup;
	if (elf_getshdrstrndx(elf, &shstrndx)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !out->go &&
		    (!strcmp(name, ".go.buildinfo") || !strcmp(name, ".gopclntab"))) {
			out->go = true;
			out->go_mark =
				!strcmp(name, ".go.buildinfo") ? ".go.buildinfo" : ".gopclntab";
		}
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
			lang__scan_symbols(elf, scn, &sh, out);
	}
cleanup:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return err;
}

const char *lang__walker(const struct lang_info *li)
{
	if (!li)
		return NULL;
	if (li->go)
		return "Go";
	if (li->v8)
		return "V8 (JavaScript)";
	if (li->jvm)
		return "JVM (Java)";
	return li->ocaml ? "OCaml" : NULL;
}

const char *lang__article(const char *name)
{
	return name && name[0] && strchr("AEIOU", name[0]) ? "an" : "a";
}

/* Little-endian signed 32-bit value at p. */
static int32_t lang__s32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/*
 * A conditional jump with condition code cc (0x2 = b/c, 0x6 = be) at
 * code[pos]: short (7x rel8) or near (0f 8x rel32). Returns its length and
 * sets *target (offset from code[0]), or 0.
 */
static size_t lang__jcc(const uint8_t *code, size_t len, size_t pos, uint8_t cc, int64_t *target)
{
	if (pos + 2 <= len && code[pos] == (0x70 | cc)) {
		*target = (int64_t)(pos + 2) + (int8_t)code[pos + 1];
		return 2;
	}
	if (pos + 6 <= len && code[pos] == 0x0f && code[pos + 1] == (0x80 | cc)) {
		*target = (int64_t)(pos + 6) + lang__s32(code + pos + 2);
		return 6;
	}
	return 0;
}

/* cmp %REG, 0x10(%r14) or 0x18(%r14) at code[pos], REG = rsp (rex 0x49)
 * or r12 (rex 0x4d): 4 bytes, or 0. */
static size_t lang__cmp_guard(const uint8_t *code, size_t len, size_t pos, uint8_t rex)
{
	if (pos + 4 <= len && code[pos] == rex && code[pos + 1] == 0x3b && code[pos + 2] == 0x66 &&
	    (code[pos + 3] == 0x10 || code[pos + 3] == 0x18))
		return 4;
	return 0;
}

size_t lang__go_stack_check(const uint8_t *code, size_t len, int64_t *slow)
{
	int64_t t1 = 0, t2 = 0;
	size_t pos = 0, n;

	if (!code || !slow)
		return 0;
	/* Small frame: cmp %rsp, guard. */
	n = lang__cmp_guard(code, len, 0, 0x49);
	if (n) {
		pos = n;
		goto jbe;
	}
	/* Medium frame: lea -N(%rsp), %r12 (disp8 or disp32); cmp %r12, guard. */
	if (len >= 5 && code[0] == 0x4c && code[1] == 0x8d && code[3] == 0x24 &&
	    (code[2] == 0x64 || code[2] == 0xa4)) {
		pos = code[2] == 0x64 ? 5 : 8;
		n = lang__cmp_guard(code, len, pos, 0x4d);
		if (!n)
			return 0;
		pos += n;
		goto jbe;
	}
	/* Large frame: mov %rsp, %r12 (either encoding); sub $N, %r12
	 * (imm8 or imm32); jb SLOW; cmp %r12, guard; jbe SLOW. */
	if (len >= 3 && ((code[0] == 0x49 && code[1] == 0x89 && code[2] == 0xe4) ||
			 (code[0] == 0x4c && code[1] == 0x8b && code[2] == 0xe4))) {
		pos = 3;
		if (pos + 4 <= len && code[pos] == 0x49 && code[pos + 1] == 0x83 &&
		    code[pos + 2] == 0xec)
			pos += 4;
		else if (pos + 7 <= len && code[pos] == 0x49 && code[pos + 1] == 0x81 &&
			 code[pos + 2] == 0xec)
			pos += 7;
		else
			return 0;
		n = lang__jcc(code, len, pos, 0x2, &t1);
		if (!n)
			return 0;
		pos += n;
		n = lang__cmp_guard(code, len, pos, 0x4d);
		if (!n)
			return 0;
		pos += n;
		n = lang__jcc(code, len, pos, 0x6, &t2);
		/* Both branches go to the one morestack block. */
		if (!n || t1 != t2)
			return 0;
		*slow = t2;
		return pos + n;
	}
	return 0;
jbe:
	n = lang__jcc(code, len, pos, 0x6, &t2);
	if (!n)
		return 0;
	*slow = t2;
	return pos + n;
}
