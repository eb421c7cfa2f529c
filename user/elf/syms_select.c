// SPDX-License-Identifier: BSD-2-Clause
/*
 * Choosing among a symbol table's functions (syms.h): -f/-x globs matched
 * against every name a function has, the runtime's boilerplate left out,
 * why a glob matched nothing, the -l listing. The table is read in syms.c.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "user/elf/demangle.h"
#include "user/elf/syms.h"


#include "common/log.h"
#include "user/elf/dwarf.h"

/*
 * Code the C runtime and the compiler add to every program; profiling it
 * only adds noise (and _start, the entry point, may never get a return
 * probe: guard__unsafe). Matched with fnmatch against the preferred name.
 */
static const char *const boilerplate[] = {
	"_start",
	"_init",
	"_fini",
	"frame_dummy",
	"register_tm_clones",
	"deregister_tm_clones",
	"__do_global_dtors_aux",
	"__do_global_ctors_aux",
	"__libc_csu_init",
	"__libc_csu_fini",
	"__libc_csu_irel",
	"_dl_relocate_static_pie",
	"__libc_start_main",
	"__libc_start_call_main",
	"__cxa_finalize",
	"__gmon_start__",
	"__stack_chk_fail_local",
	"_mcount",
	"__x86.get_pc_thunk.*",
	"_GLOBAL__sub_I_*",
	"_GLOBAL__sub_D_*",
	"__static_initialization_and_destruction_*",
};

static bool syms__is_boilerplate(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(boilerplate) / sizeof(boilerplate[0]); i++)
		if (!fnmatch(boilerplate[i], name, 0))
			return true;
	return false;
}

/* glob against the demangled name without its parameter list, and
 * without the return type templates carry ("int ns::twice<int>(int)"
 * matches "ns::twice*"). */
static bool pretty_base_matches(const char *glob, const char *pretty)
{
	size_t n = demangle__base_len(pretty), i, start = 0;
	bool hit;
	char *buf;
	int angle = 0;

	if (n == strlen(pretty))
		return false;
	/* On the heap: std:: template names run to kilobytes. */
	buf = strndup(pretty, n);
	if (!buf)
		return false;
	hit = !fnmatch(glob, buf, 0);
	for (i = 0; !hit && i < n; i++) {
		if (buf[i] == '<')
			angle++;
		else if (buf[i] == '>' && angle > 0)
			angle--;
		else if (buf[i] == ' ' && !angle && strncmp(buf, "operator", 8))
			start = i + 1;
	}
	if (!hit && start)
		hit = !fnmatch(glob, buf + start, 0);
	free(buf);
	return hit;
}

/* Whether glob names s: see syms__select in syms.h. */
static bool syms__matches_one(const struct sym *s, const char *glob)
{
	size_t a;

	if (!fnmatch(glob, s->name, 0))
		return true;
	/* "ns::Foo::bar(int)", and "ns::Foo::bar" without its list; a clone
	 * "work [clone .isra.0]" also as "work" */
	if (s->pretty && !fnmatch(glob, s->pretty, 0))
		return true;
	if (s->pretty && pretty_base_matches(glob, s->pretty))
		return true;
	for (a = 0; a < s->naliases; a++)
		if (!fnmatch(glob, s->aliases[a], 0))
			return true;
	return false;
}

static bool syms__matches(const struct sym *s, const char *const *globs, size_t nglobs)
{
	size_t g;

	for (g = 0; g < nglobs; g++)
		if (syms__matches_one(s, globs[g]))
			return true;
	return false;
}

size_t syms__exclude(const struct symtab *st, const char *const *globs, size_t nglobs, size_t *idx,
		     size_t *n)
{
	size_t i, k = 0;

	for (i = 0; i < *n; i++)
		if (!syms__matches(&st->syms[idx[i]], globs, nglobs))
			idx[k++] = idx[i];
	i = *n - k;
	*n = k;
	return i;
}

/* Where name's fragment suffix (".cold", ".cold.N") starts, or NULL. */
static const char *syms__fragment_suffix(const char *name)
{
	const char *p = strstr(name, ".cold");

	/* GCC's hot/cold splitting: "f.cold", "f.cold.3", also after a
	 * clone suffix ("f.part.0.cold"). */
	while (p) {
		const char *q = p + 5;

		if (!*q)
			return p;
		if (*q == '.' && q[1]) {
			for (q++; *q >= '0' && *q <= '9'; q++)
				;
			if (!*q)
				return p;
		}
		p = strstr(p + 1, ".cold");
	}
	return NULL;
}

bool syms__is_fragment(const char *name)
{
	return name && syms__fragment_suffix(name);
}

/* The function fragment f belongs to ("work" for "work.cold"), or NULL. */
static const struct sym *syms__parent(const struct symtab *st, const struct sym *f)
{
	const struct sym *p;
	char *base;

	base = strndup(f->name, (size_t)(syms__fragment_suffix(f->name) - f->name));
	if (!base)
		return NULL;
	p = syms__find(st, base);
	free(base);
	return p;
}

/* Whether glob names fragment f as its parent's readable name without
 * parameters plus the fragment's suffix ("ns::work.cold" for
 * "_ZN2ns4workEl.cold", whose parent reads "ns::work(long)"). */
static bool syms__parent_form_matches(const struct sym *f, const struct sym *parent,
				      const char *glob)
{
	const char *pn = parent->pretty ? parent->pretty : parent->name;
	bool hit;
	char *form;

	if (asprintf(&form, "%.*s%s", (int)demangle__base_len(pn), pn,
		     syms__fragment_suffix(f->name)) < 0)
		return false;
	hit = !fnmatch(glob, form, 0);
	free(form);
	return hit;
}

int syms__why_unmatched(const struct symtab *st, const char *glob, char *buf, size_t len)
{
	const struct sym *first = NULL, *first_parent = NULL;
	const char *fname;
	size_t i, nfrag = 0;
	int k;

	if (!st || !glob || !buf || !len)
		return -EINVAL;
	for (i = 0; i < st->nsyms; i++) {
		const struct sym *f = &st->syms[i], *parent;

		if (!syms__is_fragment(f->name))
			continue;
		/* Not by the readable name's base: "work" names the function
		 * work, never its fragment "work [clone .cold]". The parent is
		 * a linear search: only looked up when needed. */
		parent = NULL;
		if (fnmatch(glob, f->name, 0) && !(f->pretty && !fnmatch(glob, f->pretty, 0))) {
			parent = syms__parent(st, f);
			if (!parent || !syms__parent_form_matches(f, parent, glob))
				continue;
		}
		if (!nfrag++) {
			first = f;
			first_parent = parent ? parent : syms__parent(st, f);
		}
	}
	if (!nfrag)
		return -ENOENT;
	fname = first->pretty ? first->pretty : first->name;
	if (first_parent) {
		const char *pn = first_parent->pretty ? first_parent->pretty : first_parent->name;

		k = snprintf(buf, len,
			     "names only %s%s, a fragment of %s (entered by a jump, not by a "
			     "call): not traceable on its own, its time counts in %s",
			     nfrag > 1 ? "fragments, e.g. " : "", fname, pn, pn);
	} else {
		k = snprintf(buf, len,
			     "names only %s%s, a fragment of a function (entered by a jump, not "
			     "by a call): not traceable on its own",
			     nfrag > 1 ? "fragments, e.g. " : "", fname);
	}
	return k < 0 ? -EINVAL : 0;
}

int syms__select(const struct symtab *st, const char *const *globs, size_t nglobs, size_t **idx_out,
		 size_t *n_out)
{
	size_t *idx = NULL;
	size_t i, n = 0;
	bool hit;
	int err = 0;

	if (!st || !idx_out || !n_out || (nglobs && !globs))
		return -EINVAL;
	*idx_out = NULL;
	*n_out = 0;
	for (i = 0; i < nglobs; i++)
		if (!globs[i])
			return -EINVAL;
	if (!st->nsyms) {
		err = -ENOENT;
		goto cleanup;
	}
	idx = malloc(st->nsyms * sizeof(*idx));
	if (!idx) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < st->nsyms; i++) {
		/* Never a function: entered by a jump from its parent. */
		if (syms__is_fragment(st->syms[i].name))
			continue;
		if (nglobs)
			hit = syms__matches(&st->syms[i], globs, nglobs);
		else /* the start-up code: by name, or (stripped) where the entry is */
			hit = !syms__is_boilerplate(st->syms[i].name) &&
			      !syms__holds_entry(st, &st->syms[i]);
		if (hit)
			idx[n++] = i;
	}
	if (!n) {
		err = -ENOENT;
		goto cleanup;
	}
	*idx_out = idx;
	*n_out = n;
	idx = NULL;
cleanup:
	free(idx);
	return err;
}


void syms__warn_unmatched(const struct symtab *st, const char *const *globs, size_t n,
			  bool others_matched)
{
	size_t i, tn;
	size_t *tidx;
	char why[512];

	if (!st || !n)
		return;
	for (i = 0; i < n; i++) {
		if (!syms__select(st, &globs[i], 1, &tidx, &tn)) {
			free(tidx);
			continue;
		}
		if (!syms__why_unmatched(st, globs[i], why, sizeof(why)))
			log_warn("-f '%s' %s", globs[i], why);
		else if (n > 1 || others_matched) /* one pattern: the error says it */
			log_warn("-f '%s' matches no function of %s", globs[i], st->path);
	}
}

void syms__print_list(FILE *out, const struct symtab *st, const size_t *idx, size_t n,
		      const struct srcline *src)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct sym *s = &st->syms[idx[i]];

		fprintf(out, "0x%08llx %6llu %s", (unsigned long long)s->vaddr,
			(unsigned long long)s->size, s->name);
		if (src && src[i].file && src[i].line)
			fprintf(out, "  %s:%u", src[i].file, src[i].line);
		else if (src && src[i].file)
			fprintf(out, "  %s", src[i].file);
		fputc('\n', out);
	}
	fprintf(stderr, "cabbpf: %zu function%s of %s would be traced%s\n", n, n == 1 ? "" : "s",
		st->path,
		st->nfde	  ? " (stripped: those without a symbol named BINARY+0xADDRESS, from "
				    "its unwind tables)"
		: st->from_dynsym ? " (stripped: exported functions only)"
				  : "");
}
