// SPDX-License-Identifier: BSD-2-Clause
/* Source file and line of functions from DWARF, with libdw (dwarf.h). */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/hmap.h"
#include "common/log.h"
#include "user/elf/debuglink.h"
#include "user/elf/dwarf.h"
#include "user/elf/image.h"

char *dwarf__normalize(char *p)
{
	bool abs = p[0] == '/';
	char *r = p + abs, *w = p + abs;
	char *start = w;	 /* where the first segment goes */
	char *floor = start; /* no ".." removes what is before this */

	while (*r) {
		char *seg = r;
		size_t len;

		while (*r && *r != '/')
			r++;
		len = (size_t)(r - seg);
		while (*r == '/')
			r++;
		if (!len || (len == 1 && seg[0] == '.'))
			continue;
		if (len == 2 && seg[0] == '.' && seg[1] == '.') {
			if (w > floor) {
				char *q = w;

				while (q > floor && q[-1] != '/')
					q--;
				/* q starts the last segment: drop it and its '/' */
				w = q > start ? q - 1 : q;
				continue;
			}
			if (abs)
				continue; /* "/.." is "/" */
		}
		if (w > start)
			*w++ = '/';
		memmove(w, seg, len);
		w += len;
		if (len == 2 && seg[0] == '.' && seg[1] == '.')
			floor = w; /* a leading "..", kept */
	}
	if (w == p)
		*w++ = '.';
	*w = 0;
	return p;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A function DIE's entry address and declaration, per CU. */
struct fdecl {
	uint64_t pc;
	const char *file; /* libdw's string, or NULL */
	int line;
};

struct cu_funcs {
	struct fdecl *v;
	size_t n, cap;
	bool nomem;
};

static int on_func(Dwarf_Die *die, void *arg)
{
	struct cu_funcs *f = arg;
	Dwarf_Addr pc;
	int line = 0;

	if (dwarf_lowpc(die, &pc) && dwarf_entrypc(die, &pc))
		return DWARF_CB_OK; /* a declaration, or inlined everywhere */
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		struct fdecl *v = realloc(f->v, cap * sizeof(*v));

		if (!v) {
			f->nomem = true;
			return DWARF_CB_ABORT;
		}
		f->v = v;
		f->cap = cap;
	}
	dwarf_decl_line(die, &line);
	f->v[f->n++] = (struct fdecl){.pc = pc, .file = dwarf_decl_file(die), .line = line};
	return DWARF_CB_OK;
}

static int fdecl_cmp(const void *a, const void *b)
{
	const struct fdecl *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* Query order by address, so each CU is met once in a row. */
struct q {
	uint64_t pc;
	size_t i;
};

static int q_cmp(const void *a, const void *b)
{
	const struct q *x = a, *y = b;

	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The interned, absolute, normalized form of libdw's file string f of the
 * CU whose compilation directory is comp_dir. NULL on -ENOMEM. */
static const char *intern(struct srclines *s, struct hmap *seen, const char *f,
			  const char *comp_dir)
{
	uint64_t *slot;
	char *path;

	if (hmap__upsert(seen, (uint64_t)(uintptr_t)f, &slot))
		return NULL;
	if (*slot)
		return s->files_[*slot - 1];
	/* libdw joins a DWARF 5 file of directory 0 with that directory,
	 * the compilation directory, already ("./csu/init-first.c" in
	 * "./csu"); the other relative names are relative to it */
	if (f[0] != '/' && comp_dir && comp_dir[0] &&
	    !(!strncmp(f, comp_dir, strlen(comp_dir)) && f[strlen(comp_dir)] == '/')) {
		if (asprintf(&path, "%s/%s", comp_dir, f) < 0)
			return NULL;
	} else if (!(path = strdup(f))) {
		return NULL;
	}
	dwarf__normalize(path);
	if (s->nfiles_ == s->capfiles_) {
		size_t cap = s->capfiles_ ? 2 * s->capfiles_ : 32;
		char **v = realloc(s->files_, cap * sizeof(*v));

		if (!v) {
			free(path);
			return NULL;
		}
		s->files_ = v;
		s->capfiles_ = cap;
	}
	s->files_[s->nfiles_++] = path;
	*slot = s->nfiles_;
	return path;
}

/* Whether elf has DWARF of its own (not only the symbols). */
static bool has_debug_info(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    (!strcmp(n, ".debug_info") || !strcmp(n, ".zdebug_info")))
			return true;
	}
	return false;
}

struct dwarf_file {
	int fd;
	Elf *elf;
	char *path;
};

void dwarf__close(struct dwarf_file *df)
{
	if (!df)
		return;
	if (df->elf)
		elf_end(df->elf);
	if (df->fd >= 0)
		close(df->fd);
	free(df->path);
	free(df);
}

int dwarf__open(const struct symtab *st, struct dwarf_file **out)
{
	struct dwarf_file *df;
	char dbg[PATH_MAX];
	const char *path;

	if (!st || !out)
		return -EINVAL;
	*out = NULL;
	df = calloc(1, sizeof(*df));
	if (!df)
		return -ENOMEM;
	df->fd = -1;
	if (image__open_elf(st->path, &df->fd, &df->elf))
		goto none;
	if (has_debug_info(df->elf)) {
		path = st->path;
	} else {
		bool found = st->debug_path
				     ? snprintf(dbg, sizeof(dbg), "%s", st->debug_path) < (int)sizeof(dbg)
				     : debuglink__find(df->elf, st->path, dbg, sizeof(dbg));

		elf_end(df->elf);
		close(df->fd);
		df->elf = NULL;
		df->fd = -1;
		if (!found || image__open_elf(dbg, &df->fd, &df->elf) || !has_debug_info(df->elf))
			goto none;
		path = dbg;
	}
	df->path = strdup(path);
	if (!df->path) {
		dwarf__close(df);
		return -ENOMEM;
	}
	*out = df;
	return 0;
none:
	dwarf__close(df);
	return 0;
}

int dwarf__lines(const struct symtab *st, const size_t *idx, size_t n, struct srclines **out)
{
	struct dwarf_file *df = NULL;
	int err;

	if (!st || !out || (n && !idx))
		return -EINVAL;
	*out = NULL;
	err = n ? dwarf__open(st, &df) : 0;
	if (!err)
		err = dwarf__lines_in(df, st, idx, n, out);
	dwarf__close(df);
	return err;
}

int dwarf__lines_in(struct dwarf_file *df, const struct symtab *st, const size_t *idx, size_t n,
		    struct srclines **out)
{
	struct srclines *s = NULL;
	struct cu_funcs cf = {0};
	struct hmap seen = {0};
	struct q *qs = NULL;
	Dwarf_Off cur = (Dwarf_Off)-1;
	Dwarf_Die cu;
	const char *comp_dir = NULL;
	Dwarf *dbg = NULL;
	bool have_cu = false;
	size_t i;
	int err = 0;
	double t0 = now_s();

	if (!st || !out || (n && !idx))
		return -EINVAL;
	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->v = calloc(n ? n : 1, sizeof(*s->v)))) {
		err = -ENOMEM;
		goto cleanup;
	}
	s->n = n;
	if (!n || !df)
		goto done;
	dbg = dwarf_begin_elf(df->elf, DWARF_C_READ, NULL);
	if (!dbg) {
		log_debug("%s: DWARF unreadable: %s", df->path, dwarf_errmsg(-1));
		goto done;
	}
	if (!(s->from = strdup(df->path))) {
		err = -ENOMEM;
		goto cleanup;
	}
	qs = malloc(n * sizeof(*qs));
	if (!qs) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n; i++)
		qs[i] = (struct q){.pc = st->syms[idx[i]].vaddr, .i = i};
	qsort(qs, n, sizeof(*qs), q_cmp);
	for (i = 0; i < n; i++) {
		struct srcline *o = &s->v[qs[i].i];
		const struct fdecl *hit = NULL;
		const char *file = NULL;
		int line = 0;

		if (!dwarf_addrdie(dbg, qs[i].pc, &cu)) {
			have_cu = false;
			continue;
		}
		if (!have_cu || dwarf_dieoffset(&cu) != cur) {
			Dwarf_Attribute a;

			/* A new CU: its functions by entry address, once. */
			cur = dwarf_dieoffset(&cu);
			have_cu = true;
			cf.n = 0;
			dwarf_getfuncs(&cu, on_func, &cf, 0);
			if (cf.nomem) {
				err = -ENOMEM;
				goto cleanup;
			}
			qsort(cf.v, cf.n, sizeof(*cf.v), fdecl_cmp);
			comp_dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &a));
		}
		{
			size_t lo = 0, hi = cf.n;

			while (lo < hi) {
				size_t mid = (lo + hi) / 2;

				if (cf.v[mid].pc < qs[i].pc)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < cf.n && cf.v[lo].pc == qs[i].pc && cf.v[lo].file &&
			    cf.v[lo].line > 0)
				hit = &cf.v[lo];
		}
		if (hit) {
			file = hit->file;
			line = hit->line;
		} else {
			/* No subprogram DIE starts here: the line table's row */
			Dwarf_Line *l = dwarf_getsrc_die(&cu, qs[i].pc);

			if (l && (file = dwarf_linesrc(l, NULL, NULL)) && dwarf_lineno(l, &line))
				file = NULL;
		}
		if (!file)
			continue;
		o->file = intern(s, &seen, file, comp_dir);
		if (!o->file) {
			err = -ENOMEM;
			goto cleanup;
		}
		o->line = line > 0 ? (uint32_t)line : 0;
		s->found++;
	}
done:
	if (s->from)
		log_debug("%s: source lines of %zu of %zu functions from %s in %.3f s", st->path,
			  s->found, n, s->from, now_s() - t0);
	*out = s;
	s = NULL;
cleanup:
	free(qs);
	free(cf.v);
	hmap__fini(&seen);
	if (dbg)
		dwarf_end(dbg);
	dwarf__free(s);
	return err;
}

void dwarf__free(struct srclines *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nfiles_; i++)
		free(s->files_[i]);
	free(s->files_);
	free(s->from);
	free(s->v);
	free(s);
}
