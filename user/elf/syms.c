// SPDX-License-Identifier: BSD-2-Clause
/*
 * Function discovery from ELF symbol tables (see syms.h for the contract).
 *
 * Load works in three steps: collect every defined function symbol as a
 * candidate (names still point into libelf's buffers), sort the candidates
 * by address and by name preference so each address forms one group whose
 * first member is the preferred name, then copy the groups into the table,
 * whose strings live in one block so the table is a handful of allocations.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <gelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "user/elf/demangle.h"
#include "user/elf/syms.h"


#include "common/log.h"
#include "user/elf/debuglink.h"
#include "user/elf/dwarf.h"
#include "user/elf/fde.h"
#include "user/elf/image.h"

struct cand {
	const char *name; /* points into libelf's string table data */
	size_t len;	  /* of the name without a default version ("@@GLIBC_2.34") */
	uint64_t vaddr;
	uint64_t size;
	enum syms_bind bind;
	bool ifunc;
	bool dup; /* same name already seen at this address */
};

struct cands {
	struct cand *v;
	size_t n, cap;
	char **owned; /* names made here ("vf@V1"), freed with the candidates */
	size_t nowned;
};

/* A file-backed PT_LOAD range: the only bytes a uprobe can land on. */
struct seg {
	uint64_t vaddr, filesz, offset;
};

static enum syms_bind syms__bind_of(unsigned char st_bind)
{
	switch (st_bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return SYMS_BIND_GLOBAL;
	case STB_WEAK:
		return SYMS_BIND_WEAK;
	default:
		return SYMS_BIND_LOCAL;
	}
}

static size_t syms__underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Address first; within an address the preferred name first (see syms.h). */
static int syms__cand_cmp(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	size_t ua, ub, la, lb;

	if (a->vaddr != b->vaddr)
		return a->vaddr < b->vaddr ? -1 : 1;
	if (a->bind != b->bind)
		return a->bind < b->bind ? -1 : 1;
	ua = syms__underscores(a->name);
	ub = syms__underscores(b->name);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	la = a->len;
	lb = b->len;
	if (la != lb)
		return la < lb ? -1 : 1;
	return memcmp(a->name, b->name, la);
}

static bool syms__same_name(const struct cand *a, const struct cand *b)
{
	return a->len == b->len && !memcmp(a->name, b->name, a->len);
}

/*
 * The length of @name without a default symbol version: glibc's debug
 * symbol table names "fopen@@GLIBC_2.2.5", "dlsym@@GLIBC_2.34" (518 of
 * its functions), which is the function the program calls as fopen and
 * what -f 'libc:fopen' must select (the dynamic symbol table says "fopen",
 * with the version apart). A non-default version ("dlsym@GLIBC_2.2.5",
 * kept for old binaries) keeps its suffix: it is another name, or another
 * function ("pthread_cond_wait@GLIBC_2.2.5").
 */
static size_t syms__name_len(const char *name)
{
	const char *at = strstr(name, "@@");

	return at && at != name ? (size_t)(at - name) : strlen(name);
}

static int syms__push(struct cands *c, const struct cand *x)
{
	struct cand *nv;
	size_t ncap;

	if (c->n == c->cap) {
		ncap = c->cap ? c->cap * 2 : 256;
		nv = realloc(c->v, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		c->v = nv;
		c->cap = ncap;
	}
	c->v[c->n++] = *x;
	return 0;
}

/*
 * The version of dynamic symbol @i when it is not the default one (the
 * name a symbol table with versions in its names spells "vf@V1"), or
 * NULL: .gnu.version (@versym) marks it hidden, .gnu.version_d (@verdef)
 * names it. Imports (.gnu.version_r) are never asked for.
 */
static const char *syms__hidden_version(Elf *elf, Elf_Data *versym, Elf_Scn *verdef, size_t i)
{
	enum { VERSYM_HIDDEN = 0x8000, VERSYM_VERSION = 0x7fff }; /* binutils' names */
	GElf_Versym vs;
	GElf_Verdef vd;
	GElf_Verdaux va;
	GElf_Shdr sh;
	Elf_Data *d;
	size_t off = 0;

	if (!versym || !verdef || !gelf_getversym(versym, (int)i, &vs) || !(vs & VERSYM_HIDDEN))
		return NULL;
	vs &= VERSYM_VERSION;
	if (!gelf_getshdr(verdef, &sh) || !(d = elf_getdata(verdef, NULL)))
		return NULL;
	/* bounded by the section: each step moves forward, or the chain ends */
	while (off < d->d_size && gelf_getverdef(d, (int)off, &vd)) {
		if (vd.vd_ndx == vs)
			return gelf_getverdaux(d, (int)(off + vd.vd_aux), &va)
				       ? elf_strptr(elf, sh.sh_link, va.vda_name)
				       : NULL;
		if (!vd.vd_next)
			break;
		off += vd.vd_next;
	}
	return NULL;
}

/* Dynamic symbol @name with a hidden version: "@name@VER", owned by @c. */
static const char *syms__versioned(struct cands *c, const char *name, const char *ver)
{
	char **nv = realloc(c->owned, (c->nowned + 1) * sizeof(*nv));

	if (!nv)
		return NULL;
	c->owned = nv;
	if (asprintf(&nv[c->nowned], "%s@%s", name, ver) < 0)
		return NULL;
	return nv[c->nowned++];
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A stripped binary's other functions (user/elf/fde.h): each FDE whose
 * start no candidate already names becomes "BASENAME+0xVADDR" (what
 * addr2line -e BINARY and objdump --start-address take), local, its size
 * the FDE's. *nfde: how many. Returns 0 or -ENOMEM (no FDEs is fine).
 */
static int syms__add_fdes(Elf *elf, const char *path, struct cands *c, size_t *nfde)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	struct fde_range *r = NULL;
	uint64_t *named = NULL;
	size_t n = 0, i, k = 0, nnamed = c->n, width = strlen(base) + 24;
	char *names = NULL, **nv;
	int err;

	*nfde = 0;
	err = fde__ranges(elf, &r, &n);
	if (err)
		return err == -ENOMEM ? err : 0;
	named = malloc((nnamed + 1) * sizeof(*named));
	names = malloc(n * width + 1);
	nv = realloc(c->owned, (c->nowned + 1) * sizeof(*nv));
	if (!named || !names || !nv) {
		err = -ENOMEM;
		goto cleanup;
	}
	c->owned = nv;
	c->owned[c->nowned++] = names; /* the names' block, freed with the candidates */
	for (i = 0; i < nnamed; i++)
		named[i] = c->v[i].vaddr;
	qsort(named, nnamed, sizeof(*named), cmp_u64);
	for (i = 0; i < n; i++) {
		char *name = names + k * width;
		struct cand x = {
			.name = name,
			.vaddr = r[i].start,
			.size = r[i].end - r[i].start,
			.bind = SYMS_BIND_LOCAL,
		};

		/* (the candidates pushed here are not in named: one per start) */
		if (nnamed && bsearch(&x.vaddr, named, nnamed, sizeof(*named), cmp_u64))
			continue;
		x.len = (size_t)snprintf(name, width, "%s+0x%" PRIx64, base, x.vaddr);
		err = syms__push(c, &x);
		if (err)
			goto cleanup;
		k++;
	}
	*nfde = k;
	names = NULL; /* owned by c now */
cleanup:
	free(r);
	free(named);
	return err;
}

/* Appends the defined function symbols of symbol-table section @scn. */
static int syms__collect(Elf *elf, Elf_Scn *scn, struct cands *c)
{
	Elf_Data *data, *versym = NULL;
	Elf_Scn *vscn = NULL, *verdef = NULL;
	const char *ver;
	GElf_Shdr sh, vsh;
	GElf_Sym s;
	struct cand x;
	size_t i, count;
	int type, err = 0;

	if (!gelf_getshdr(scn, &sh)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	if (!sh.sh_entsize)
		goto cleanup;
	data = elf_getdata(scn, NULL);
	if (!data)
		goto cleanup;
	/* .dynsym names carry no version; .gnu.version says which it is */
	while (sh.sh_type == SHT_DYNSYM && (vscn = elf_nextscn(elf, vscn))) {
		if (!gelf_getshdr(vscn, &vsh))
			continue;
		if (vsh.sh_type == SHT_GNU_versym && vsh.sh_link == elf_ndxscn(scn))
			versym = elf_getdata(vscn, NULL);
		else if (vsh.sh_type == SHT_GNU_verdef)
			verdef = vscn;
	}
	count = sh.sh_size / sh.sh_entsize;
	for (i = 0; i < count; i++) {
		if (!gelf_getsym(data, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (s.st_shndx == SHN_UNDEF)
			continue; /* an import: the code lives in another object */
		x.name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!x.name || !x.name[0])
			continue;
		ver = syms__hidden_version(elf, versym, verdef, i);
		if (ver && !(x.name = syms__versioned(c, x.name, ver))) {
			err = -ENOMEM;
			goto cleanup;
		}
		x.len = syms__name_len(x.name);
		x.vaddr = s.st_value;
		x.size = s.st_size;
		x.bind = syms__bind_of(GELF_ST_BIND(s.st_info));
		x.ifunc = type == STT_GNU_IFUNC;
		x.dup = false;
		err = syms__push(c, &x);
		if (err)
			goto cleanup;
	}
cleanup:
	return err;
}

/*
 * Translates a link-time address to a file offset through the PT_LOAD that
 * maps it from the file (p_filesz, not p_memsz: .bss has no file bytes).
 */
static bool syms__to_offset(const struct seg *segs, size_t nsegs, uint64_t vaddr, uint64_t *off)
{
	size_t i;

	for (i = 0; i < nsegs; i++) {
		if (vaddr >= segs[i].vaddr && vaddr - segs[i].vaddr < segs[i].filesz) {
			*off = vaddr - segs[i].vaddr + segs[i].offset;
			return true;
		}
	}
	return false;
}

static int syms__read_segs(Elf *elf, struct seg **out, size_t *nout)
{
	struct seg *segs = NULL;
	GElf_Phdr ph;
	size_t i, nph, n = 0;
	int err = 0;

	if (elf_getphdrnum(elf, &nph) != 0) {
		err = -ENOEXEC;
		goto cleanup;
	}
	segs = calloc(nph ? nph : 1, sizeof(*segs));
	if (!segs) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		segs[n].vaddr = ph.p_vaddr;
		segs[n].filesz = ph.p_filesz;
		segs[n].offset = ph.p_offset;
		n++;
	}
	*out = segs;
	*nout = n;
	segs = NULL;
cleanup:
	free(segs);
	return err;
}

/*
 * Turns sorted candidates into the table: one entry per address, sized
 * groups into st->syms, all-zero-size groups into st->zero.
 */
static int syms__build(struct symtab *st, struct cands *c, const struct seg *segs, size_t nsegs)
{
	size_t i, j, k, end, nsized = 0, nzero = 0, nalias = 0, nbytes = 0;
	size_t si = 0, zi = 0, ai = 0, bi = 0;
	uint64_t size, off;
	bool ifunc;
	struct sym *e;
	int err = 0;

	/* Pass 1: mark duplicate names, count what the table needs. */
	for (i = 0; i < c->n; i = end) {
		size = 0;
		for (end = i; end < c->n && c->v[end].vaddr == c->v[i].vaddr; end++) {
			if (c->v[end].size > size)
				size = c->v[end].size;
			for (k = i; k < end; k++) {
				if (!c->v[k].dup && syms__same_name(&c->v[k], &c->v[end])) {
					c->v[end].dup = true;
					break;
				}
			}
		}
		if (!syms__to_offset(segs, nsegs, c->v[i].vaddr, &off)) {
			log_debug("%s: function %.*s at %#llx is in no loaded segment, skipped",
				  st->path, (int)c->v[i].len, c->v[i].name,
				  (unsigned long long)c->v[i].vaddr);
			st->nunmapped++;
			continue;
		}
		if (size)
			nsized++;
		else
			nzero++;
		for (j = i; j < end; j++) {
			if (c->v[j].dup)
				continue;
			nbytes += c->v[j].len + 1;
			if (j != i)
				nalias++;
		}
	}
	if (!nsized && !nzero) {
		err = -ENODATA;
		goto cleanup;
	}

	st->syms = calloc(nsized ? nsized : 1, sizeof(*st->syms));
	st->zero = calloc(nzero ? nzero : 1, sizeof(*st->zero));
	st->aliasv_ = calloc(nalias ? nalias : 1, sizeof(*st->aliasv_));
	st->strings_ = malloc(nbytes);
	if (!st->syms || !st->zero || !st->aliasv_ || !st->strings_) {
		err = -ENOMEM;
		goto cleanup;
	}

	/* Pass 2: fill. The group's first candidate is its preferred name. */
	for (i = 0; i < c->n; i = end) {
		size = 0;
		ifunc = false;
		for (end = i; end < c->n && c->v[end].vaddr == c->v[i].vaddr; end++) {
			if (c->v[end].size > size)
				size = c->v[end].size;
			ifunc |= c->v[end].ifunc;
		}
		if (!syms__to_offset(segs, nsegs, c->v[i].vaddr, &off))
			continue;
		e = size ? &st->syms[si++] : &st->zero[zi++];
		e->vaddr = c->v[i].vaddr;
		e->size = size;
		e->offset = off;
		e->bind = c->v[i].bind;
		e->ifunc = ifunc;
		e->aliases = &st->aliasv_[ai];
		e->naliases = 0;
		for (j = i; j < end; j++) {
			char *s = &st->strings_[bi];

			if (c->v[j].dup)
				continue;
			memcpy(s, c->v[j].name, c->v[j].len);
			s[c->v[j].len] = 0;
			bi += c->v[j].len + 1;
			if (j == i) {
				e->name = s;
			} else {
				st->aliasv_[ai++] = s;
				e->naliases++;
			}
		}
	}
	st->nsyms = nsized;
	st->nzero = nzero;
cleanup:
	return err;
}

void syms__set_debug_dir(const char *dir)
{
	debuglink__set_dir(dir);
}

int syms__load(const char *path, struct symtab **out)
{
	struct symtab *st = NULL;
	struct cands c = {0};
	struct seg *segs = NULL;
	size_t nsegs = 0;
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	char dbg[PATH_MAX], hex[160];
	GElf_Shdr sh;
	GElf_Ehdr eh;
	Elf *elf = NULL, *delf = NULL;
	int fd = -1, dfd = -1, err = 0;

	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	err = image__open_elf(path, &fd, &elf);
	if (err)
		goto cleanup;
	if (!gelf_getehdr(elf, &eh)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		err = -ENOEXEC;
		goto cleanup;
	}

	st = calloc(1, sizeof(*st));
	if (!st) {
		err = -ENOMEM;
		goto cleanup;
	}
	st->path = strdup(path);
	if (!st->path) {
		err = -ENOMEM;
		goto cleanup;
	}
	st->pie = eh.e_type == ET_DYN;
	st->entry = eh.e_entry;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && !symtab)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM && !dynsym)
			dynsym = scn;
	}
	/*
	 * A stripped binary (no .symtab): its separate debug file has the
	 * full symbol table, at the same addresses (objcopy --only-keep-debug,
	 * Debian's -dbgsym packages). Offsets still come from the binary's own
	 * segments below.
	 */
	if (debuglink__build_id(elf, hex, sizeof(hex)) && !(st->build_id = strdup(hex))) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (!symtab && debuglink__find(elf, path, dbg, sizeof(dbg)) &&
	    !image__open_elf(dbg, &dfd, &delf)) {
		Elf_Scn *ds = NULL;

		while ((ds = elf_nextscn(delf, ds)))
			if (gelf_getshdr(ds, &sh) && sh.sh_type == SHT_SYMTAB) {
				err = syms__collect(delf, ds, &c);
				if (err)
					goto cleanup;
				break;
			}
		if (c.n) {
			st->debug_path = strdup(dbg);
			log_debug("symbols of %s from its debug file %s", path, dbg);
		}
	}
	/*
	 * .symtab is a superset of .dynsym (it also has static functions), so
	 * .dynsym is read only when .symtab is gone or holds no function.
	 */
	if (!c.n && symtab) {
		err = syms__collect(elf, symtab, &c);
		if (err)
			goto cleanup;
	}
	if (!c.n && dynsym) {
		err = syms__collect(elf, dynsym, &c);
		if (err)
			goto cleanup;
		st->from_dynsym = true;
	}
	/*
	 * Stripped, no debug file: every function the compiler emitted still
	 * has its FDE in .eh_frame, kept for unwinding. Those .dynsym does not
	 * name are named BINARY+0xADDRESS.
	 */
	if (!symtab && !st->debug_path) {
		err = syms__add_fdes(elf, path, &c, &st->nfde);
		if (err)
			goto cleanup;
		/* still not a full table (assembly without CFI has no FDE): what
		 * needs every function (call-site counting, plan.c's rule 5)
		 * stays off */
		st->from_dynsym = true;
	}
	if (!c.n) {
		err = -ENODATA;
		goto cleanup;
	}

	err = syms__read_segs(elf, &segs, &nsegs);
	if (err)
		goto cleanup;
	qsort(c.v, c.n, sizeof(*c.v), syms__cand_cmp);
	err = syms__build(st, &c, segs, nsegs);
	if (err)
		goto cleanup;

	/* Readable names for C++ and Rust symbols and clones. */
	st->pretty_ = calloc(st->nsyms ? st->nsyms : 1, sizeof(*st->pretty_));
	if (!st->pretty_) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t k = 0; k < st->nsyms; k++)
		st->syms[k].pretty = st->pretty_[k] = demangle__name(st->syms[k].name);
	log_debug("%s: %zu functions, %zu of size 0, %zu unmapped, from %s%s", path, st->nsyms,
		  st->nzero, st->nunmapped,
		  st->from_dynsym ? ".dynsym" : st->debug_path ? "its debug file's .symtab" : ".symtab",
		  st->nfde ? " and .eh_frame's FDEs" : "");
	*out = st;
	st = NULL;
cleanup:
	/* The candidates' names point into elf's buffers: free them first. */
	free(c.v);
	for (size_t k = 0; k < c.nowned; k++)
		free(c.owned[k]);
	free(c.owned);
	free(segs);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	if (delf)
		elf_end(delf);
	if (dfd >= 0)
		close(dfd);
	syms__free(st);
	return err;
}

bool syms__holds_entry(const struct symtab *st, const struct sym *s)
{
	return st->entry && s->vaddr <= st->entry && st->entry - s->vaddr < (s->size ? s->size : 1);
}

const struct sym *syms__find(const struct symtab *st, const char *name)
{
	size_t i, a;

	if (!st || !name)
		return NULL;
	for (i = 0; i < st->nsyms; i++) {
		if (!strcmp(st->syms[i].name, name))
			return &st->syms[i];
		for (a = 0; a < st->syms[i].naliases; a++)
			if (!strcmp(st->syms[i].aliases[a], name))
				return &st->syms[i];
	}
	return NULL;
}

void syms__free(struct symtab *st)
{
	if (!st)
		return;
	free(st->path);
	free(st->debug_path);
	free(st->build_id);
	free(st->syms);
	free(st->zero);
	free(st->strings_);
	free(st->aliasv_);
	for (size_t k = 0; st->pretty_ && k < st->nsyms; k++)
		free(st->pretty_[k]);
	free(st->pretty_);
	free(st);
}

/*
 * /proc/PID exists but has no exe link: a kernel thread, or a process that
 * has exited (zombie, its mm is gone). Report the latter as "no such
 * process", since there is nothing left to probe.
 */
static int syms__no_exe(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd, err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno == ENOENT ? -ESRCH : -ENOENT;
		goto cleanup;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		goto cleanup;
	buf[n] = '\0';
	/* The state letter follows the last ')': comm may contain ')'. */
	p = strrchr(buf, ')');
	if (p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'))
		err = -ESRCH;
cleanup:
	if (fd >= 0)
		close(fd);
	return err;
}

static int syms__proc_err(pid_t pid, int e)
{
	if (e == EACCES || e == EPERM)
		return -EACCES;
	if (e == ENOENT)
		return syms__no_exe(pid);
	if (e == ESRCH)
		return -ESRCH;
	return -e;
}

static bool syms__same_file(const char *path, const struct stat *want)
{
	struct stat sb;

	return stat(path, &sb) == 0 && sb.st_dev == want->st_dev && sb.st_ino == want->st_ino;
}

int syms__resolve_exe(pid_t pid, char *buf, size_t len)
{
	char link[64], target[PATH_MAX], rooted[PATH_MAX + 64];
	const char *pick;
	struct stat exe;
	ssize_t n;
	int err = 0;

	if (pid <= 0 || !buf || !len)
		return -EINVAL;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0) {
		err = syms__proc_err(pid, errno);
		goto cleanup;
	}
	target[n] = '\0';
	/* stat() follows the magic link to the very inode the process runs. */
	if (stat(link, &exe) < 0) {
		err = syms__proc_err(pid, errno);
		goto cleanup;
	}

	snprintf(rooted, sizeof(rooted), "/proc/%d/root%s", (int)pid, target);
	if (target[0] == '/' && syms__same_file(target, &exe))
		pick = target;
	else if (target[0] == '/' && syms__same_file(rooted, &exe))
		pick = rooted;
	else
		pick = link; /* deleted, replaced, or unreachable by name */

	if (strlen(pick) >= len) {
		err = -ENAMETOOLONG;
		goto cleanup;
	}
	strcpy(buf, pick);
cleanup:
	return err;
}
