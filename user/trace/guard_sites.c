// SPDX-License-Identifier: BSD-2-Clause
/*
 * The guard's sites: which functions of the target's files unwind,
 * switch stacks or read return addresses (the guard's probes go there).
 * user/trace/guard_int.h lists the guard's files.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/proc/libs.h"
#include "common/log.h"
#include "user/elf/image.h"
#include "user/elf/insn.h"
#include "user/elf/syms.h"
#include "user/probe/plan.h"
#include "user/trace/guard_int.h"

#define SW(fl) (CABBPF_GS_SWITCH | (fl) << 8)

static const struct {
	const char *name;
	uint32_t kind; /* the cookie: site | flavour << 8 */
} site_names[] = {
	{"_Unwind_RaiseException", CABBPF_GS_THROW},	{"_Unwind_Resume", CABBPF_GS_THROW},
	{"_Unwind_Resume_or_Rethrow", CABBPF_GS_THROW}, {"_Unwind_ForcedUnwind", CABBPF_GS_FORCED},
	{"_Unwind_Backtrace", CABBPF_GS_BACKTRACE},	{"swapcontext", SW(CABBPF_GF_SWAPCONTEXT)},
	{"setcontext", SW(CABBPF_GF_SETCONTEXT)},	{"jump_fcontext", CABBPF_GS_SWITCH},
	{"ontop_fcontext", CABBPF_GS_SWITCH},		{"__cxa_begin_catch", CABBPF_GS_CATCH},
	{"_Unwind_DeleteException", CABBPF_GS_CATCH},
	/* glibc's longjmp entry points: longjmp, _longjmp and siglongjmp
	 * are one function (__libc_siglongjmp); the fortified one is apart */
	{"__libc_siglongjmp", CABBPF_GS_JUMP},
	{"siglongjmp", CABBPF_GS_JUMP},
	{"longjmp", CABBPF_GS_JUMP},
	{"_longjmp", CABBPF_GS_JUMP},
	{"__longjmp_chk", CABBPF_GS_JUMP},
	{"____longjmp_chk", CABBPF_GS_JUMP},
};

/* Libraries that may hold sites, as a loader would find them. */
static const char *const site_libs[] = {
	"libgcc_s", "libstdc++", "libc", "libunwind", "libc++abi", "libboost_context",
};

/* Rust's catch_unwind ends in this function (a mangled name that
 * contains it), not in _Unwind_DeleteException. */
#define RUST_CATCH "__rust_panic_cleanup"

/* Free Pascal's stack walkers, in every program its RTL is linked into
 * (statically): they follow the frame-pointer chain and read each frame's
 * return address, at every raise (for the exception's backtrace: 4 calls
 * of get_caller_stackinfo a raise in FPC 3.2) and in Dump_Stack. Without
 * the guard, an unhandled exception printed the trampoline's address for
 * each traced frame. FPC's names carry their parameters after a '$'. */
static const char *const walker_prefixes[] = {
	"SYSTEM_$$_GET_CALLER_STACKINFO$",
	"SYSTEM_$$_CAPTUREBACKTRACE$",
	"SYSTEM_$$_DUMP_STACK$",
};

bool guard__unsafe_name(const char *n)
{
	static const char *const prefixes[] = {
		"_Unwind_",	  "uw_init_context",  "unw_getcontext",	   "__unw_getcontext",
		"unw_init_local", "__unw_init_local", "__cxa_begin_catch", "swapcontext",
		"setcontext",	  "__swapcontext",    "__setcontext",	   "jump_fcontext",
		"ontop_fcontext", "make_fcontext",
	};
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(n, prefixes[i], strlen(prefixes[i])))
			return true;
	return strstr(n, RUST_CATCH) != NULL;
}

/* Never return-probed because of what their names say (guard__unsafe). */
static bool unsafe_by_name(const struct symtab *st, const struct sym *s)
{
	/* Entered by a jump with something else at [rsp]: the signal frame
	 * (a handler returns into the restorer); the PLT's two pushed words
	 * (lazy binding's resolver: found killing /bin/echo under -f
	 * 'ld-linux-x86-64:*'); the context's uc_link (a makecontext
	 * function returns into __start_context: SIGSEGV). */
	static const char *const jumped_to[] = {"__restore_rt", "_dl_runtime_resolve",
						"_dl_runtime_profile", "__start_context"};
	/* Keep their own return address for a later jump back: the trampoline
	 * would be kept, and a longjmp or setcontext to it, once the call has
	 * returned, is a return the kernel has no record of: SIGILL (found
	 * with -f 'libc:_setjmp', -f 'libc:getcontext'). */
	static const char *const keep_return[] = {"setjmp",	 "_setjmp",	"__setjmp",
						  "sigsetjmp",	 "__sigsetjmp", "getcontext",
						  "__getcontext"};
	/* Read their own return address to learn who called them, and get
	 * the trampoline, which is in no object: dlsym(RTLD_NEXT) fails
	 * ("RTLD_NEXT used in code not dynamically loaded": an LD_PRELOAD
	 * interposer aborted under -f 'libc:dlsym'); dlopen of a bare name
	 * searches the main program's RUNPATH, not the calling library's;
	 * __morestack (split stacks) calls the rest of its caller there. */
	static const char *const read_return[] = {
		"dlopen", "dlmopen", "dlsym", "dlvsym", "__libc_dlopen_mode", "__morestack",
		/* they jump to __morestack with the return address in place */
		"__morestack_non_split", "__morestack_large_model"};
	size_t i, a;

	if (guard__unsafe_name(s->name) || syms__holds_entry(st, s))
		return true;
	/* by any of its names: which one is preferred varies by libc */
	for (a = 0; a <= s->naliases; a++) {
		const char *n = a ? s->aliases[a - 1] : s->name;

		for (i = 0; i < sizeof(jumped_to) / sizeof(jumped_to[0]); i++)
			if (!strncmp(n, jumped_to[i], strlen(jumped_to[i])))
				return true;
		for (i = 0; i < sizeof(keep_return) / sizeof(keep_return[0]); i++)
			if (!strcmp(n, keep_return[i]))
				return true;
		/* "dlsym@GLIBC_2.2.5", the compat version, is the same code */
		for (i = 0; i < sizeof(read_return) / sizeof(read_return[0]); i++)
			if (strcspn(n, "@") == strlen(read_return[i]) &&
			    !strncmp(n, read_return[i], strlen(read_return[i])))
				return true;
	}
	return false;
}

/* longjmp and glibc's names for it: it moves rsp up its own stack, to a
 * frame that lives, and the kernel drops the return instances of the
 * frames it leaves by their sp (docs/guard.md): no guard needed. */
static bool is_longjmp(const struct sym *s)
{
	static const char *const longjmps[] = {
		"longjmp",	    "_longjmp",	      "siglongjmp",
		"__longjmp",	    "__longjmp_chk",  "____longjmp_chk",
		"__longjmp_cancel", "__libc_longjmp", "__libc_siglongjmp"};
	size_t i, a;

	for (a = 0; a <= s->naliases; a++)
		for (i = 0; i < sizeof(longjmps) / sizeof(longjmps[0]); i++)
			if (!strcmp(a ? s->aliases[a - 1] : s->name, longjmps[i]))
				return true;
	return false;
}

/*
 * A stack switcher no name tells (insn__switches_stack): a hand-written
 * coroutine switch (libco's coctx_swap, a fibre library's), V8's
 * WebAssembly stack switching. Found killing a program with its own
 * switch under the default selection (SIGSEGV), and, with the switch
 * itself left out (-N), making it hang, or print wrong results and exit
 * 0: the kernel's one list of return instances cannot follow two stacks.
 * code: s's bytes; *d: a decoder, opened here when first needed (the
 * caller closes it).
 */
static bool switches_stack(const uint8_t *code, struct insn_dec **d, const struct sym *s)
{
	bool yes = false;

	if (insn__may_switch_stack(code, s->size) && (*d || !insn__open(d)))
		insn__switches_stack(*d, code, s->size, s->vaddr, &yes);
	return yes && !is_longjmp(s);
}

/*
 * A function that reads its own return address (insn__reads_return_address),
 * whatever its name: it would read the trampoline. Found with Free
 * Pascal's fpc_setjmp, which every try block calls: under the default
 * selection, each raise "returned" from it with no record in the kernel,
 * and the program printed wrong results and exited 0 (caught=0 for
 * caught=1000). The same code finds glibc's setjmp, getcontext, dlsym,
 * dlopen, dl_iterate_phdr and mcount, which the name lists above hold too.
 */
static bool reads_return(const uint8_t *code, struct insn_dec **d, const struct sym *s)
{
	bool yes = false;

	if (insn__may_read_return_address(code, s->size) && (*d || !insn__open(d)))
		insn__reads_return_address(*d, code, s->size, s->vaddr, &yes);
	return yes;
}

bool guard__unsafe(const struct symtab *st, const struct sym *s)
{
	struct insn_dec *d = NULL;
	uint8_t *code = NULL;
	bool yes = false;
	int fd = -1;

	if (unsafe_by_name(st, s))
		return true;
	if (!s->size || s->size > (1 << 20))
		return false;
	code = malloc(s->size);
	fd = open(st->path, O_RDONLY | O_CLOEXEC);
	if (code && fd >= 0 && pread(fd, code, s->size, (off_t)s->offset) == (ssize_t)s->size)
		yes = switches_stack(code, &d, s) || reads_return(code, &d, s);
	insn__close(d);
	if (fd >= 0)
		close(fd);
	free(code);
	return yes;
}

void guard__dropped_add(struct guard_dropped *d, const char *name)
{
	size_t len = strlen(d->names);

	if (d->n++ < 4)
		snprintf(d->names + len, sizeof(d->names) - len, "%s%s", len ? ", " : "", name);
}

void guard__dropped_say(const struct guard_dropped *d, const char *what)
{
	if (d->n)
		log_warn("%snot tracing %zu function%s that a return probe would break (%s%s): "
			 "the unwinder's, the stack switchers', those that read their return "
			 "address (setjmp, dlsym), those jumped to "
			 "(docs/guard.md)",
			 what, d->n, d->n == 1 ? "" : "s", d->names, d->n > 4 ? ", ..." : "");
}

size_t guard__nsites(const struct guard *g)
{
	return g ? g->nsites : 0;
}

static int add_site(struct guard *g, const char *path, const struct sym *s, uint32_t kind)
{
	struct gsite *v;
	size_t i;

	for (i = 0; i < g->nsites; i++)
		if (g->sites[i].offset == s->offset && !strcmp(g->sites[i].path, path))
			return 0; /* an alias (swapcontext = __swapcontext) */
	v = realloc(g->sites, (g->nsites + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	g->sites = v;
	v[g->nsites].path = strdup(path);
	v[g->nsites].name = strdup(s->name);
	v[g->nsites].offset = s->offset;
	v[g->nsites].kind = kind;
	if (!v[g->nsites].path || !v[g->nsites].name) {
		free(v[g->nsites].path);
		free(v[g->nsites].name);
		return -ENOMEM;
	}
	g->nsites++;
	return 0;
}

/*
 * A cheaper place for the probes of the sites found in st from site
 * first_site on: past the first instructions when the planner proves it
 * equivalent (user/probe/plan.h, entry-only rules: pushes and sub rsp skipped,
 * their rsp change carried in the cookie), since a single-stepped entry
 * is the dearest kind of probe (user/elf/insn.h) and a throw reaches three sites. Not for the
 * switchers: the program reads their argument registers, which the
 * skipped code might move. Best effort: a failed plan keeps the entries.
 */
static void place_sites(struct guard *g, const struct symtab *st, size_t first_site)
{
	struct plan_opts po = {.entry_only = true};
	struct plan *p = NULL;
	size_t *idx, i, j, n = 0;

	idx = calloc(g->nsites - first_site + 1, sizeof(*idx));
	if (!idx)
		return;
	for (i = first_site; i < g->nsites; i++)
		for (j = 0; j < st->nsyms; j++)
			if (st->syms[j].offset == g->sites[i].offset) {
				idx[n++] = j;
				break;
			}
	if (n == g->nsites - first_site && !plan__build(st, idx, n, &po, &p)) {
		for (i = 0; i < n; i++) {
			struct gsite *s = &g->sites[first_site + i];
			const struct plan_site *ps = &p->sites[i];

			if (CABBPF_GUARD_SITE(s->kind) == CABBPF_GS_SWITCH ||
			    ps->rule != PLAN_SHIFTED || ps->sp_delta > 0xffff)
				continue;
			s->offset = ps->offset;
			s->kind |= ps->sp_delta << 16;
		}
	}
	plan__free(p);
	free(idx);
}

/* The sites one file defines. A file that cannot be read has none. */
static int sites_of(struct guard *g, const char *path)
{
	struct symtab *st = NULL;
	struct insn_dec *d = NULL;
	size_t i, a, first = g->nsites;
	struct image im = {.fd = -1};
	int err;

	if (syms__load(path, &st))
		return 0;
	for (i = 0; i < sizeof(site_names) / sizeof(site_names[0]); i++) {
		const struct sym *s = syms__find(st, site_names[i].name);

		if (s && (err = add_site(g, path, s, site_names[i].kind)))
			goto cleanup;
	}
	for (i = 0; i < st->nsyms; i++) {
		const struct sym *s = &st->syms[i];
		bool hit = strstr(s->name, RUST_CATCH) != NULL;

		for (a = 0; !hit && a < s->naliases; a++)
			hit = strstr(s->aliases[a], RUST_CATCH) != NULL;
		if (hit && (err = add_site(g, path, s, CABBPF_GS_CATCH)))
			goto cleanup;
		for (a = 0; a < sizeof(walker_prefixes) / sizeof(walker_prefixes[0]); a++)
			if (!strncmp(s->name, walker_prefixes[a], strlen(walker_prefixes[a]))) {
				if ((err = add_site(g, path, s, CABBPF_GS_BACKTRACE)))
					goto cleanup;
				break;
			}
	}
	/* The switchers no name tells: guarded as jump_fcontext is. The file
	 * is mapped, not read: node's executable has 27 MB of functions. A
	 * file that cannot be mapped has none found this way. */
	(void)image__map(path, &im);
	for (i = 0; im.base && i < st->nsyms; i++) {
		const struct sym *s = &st->syms[i];

		if (s->offset + s->size <= im.size && !unsafe_by_name(st, s) &&
		    switches_stack(im.base + s->offset, &d, s) &&
		    (err = add_site(g, path, s, CABBPF_GS_SWITCH)))
			goto cleanup;
	}
	if (g->nsites > first)
		place_sites(g, st, first);
	err = 0;
cleanup:
	insn__close(d);
	image__unmap(&im);
	syms__free(st);
	return err;
}

/*
 * The sites found in each file, kept for the process's life: a whole tree
 * (--follow-forks, a whole container) makes a guard per process, most of
 * them over the same libc, libgcc_s and libstdc++, and a program held at
 * its exec waits for its guard (user/trace/whole_hold.c). A file is the
 * same while its device, inode, size and change time are. Any thread.
 */
struct site_memo {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec ctime;
	struct gsite *v; /* path unused: the caller's is taken */
	size_t n;
};
#define SITE_MEMOS 64
static struct site_memo memos[SITE_MEMOS];
static size_t nmemos;
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;

static struct site_memo *memo_find(const struct stat *sb)
{
	size_t i;

	for (i = 0; i < nmemos; i++)
		if (memos[i].dev == sb->st_dev && memos[i].ino == sb->st_ino &&
		    memos[i].size == sb->st_size && memos[i].ctime.tv_sec == sb->st_ctim.tv_sec &&
		    memos[i].ctime.tv_nsec == sb->st_ctim.tv_nsec)
			return &memos[i];
	return NULL;
}

/* g's sites from first on, found in the file sb, kept (best effort: no
 * room or no memory, not kept). */
static void memo_keep(const struct stat *sb, const struct guard *g, size_t first)
{
	struct site_memo *m;
	size_t i, n = g->nsites - first;

	pthread_mutex_lock(&memo_lock);
	if (nmemos < SITE_MEMOS && !memo_find(sb)) {
		m = &memos[nmemos];
		m->v = n ? calloc(n, sizeof(*m->v)) : NULL;
		for (i = 0; m->v && i < n; i++) {
			m->v[i] = g->sites[first + i];
			m->v[i].path = NULL;
			m->v[i].name = strdup(g->sites[first + i].name);
			if (!m->v[i].name)
				break;
		}
		if (!n || (m->v && i == n)) {
			m->dev = sb->st_dev;
			m->ino = sb->st_ino;
			m->size = sb->st_size;
			m->ctime = sb->st_ctim;
			m->n = n;
			nmemos++;
		} else {
			for (; m->v && i > 0; i--)
				free(m->v[i - 1].name);
			free(m->v);
			m->v = NULL;
		}
	}
	pthread_mutex_unlock(&memo_lock);
}

/* g gets the kept sites of the file sb at path. Returns 1 if it had
 * them, 0 if not kept, -ENOMEM. */
static int memo_give(const struct stat *sb, struct guard *g, const char *path)
{
	struct site_memo *m;
	struct gsite *v;
	size_t i;
	int r = 0;

	pthread_mutex_lock(&memo_lock);
	m = memo_find(sb);
	if (m && m->n) {
		v = realloc(g->sites, (g->nsites + m->n) * sizeof(*v));
		if (!v) {
			r = -ENOMEM;
			goto out;
		}
		g->sites = v;
		for (i = 0; i < m->n; i++) {
			v[g->nsites] = m->v[i];
			v[g->nsites].path = strdup(path);
			v[g->nsites].name = strdup(m->v[i].name);
			if (!v[g->nsites].path || !v[g->nsites].name) {
				free(v[g->nsites].path);
				free(v[g->nsites].name);
				r = -ENOMEM;
				goto out;
			}
			g->nsites++;
		}
	}
	r = m ? 1 : 0;
out:
	pthread_mutex_unlock(&memo_lock);
	return r;
}

/* The sites of the file at path, unless it was looked at already (one
 * file, one set of probes: a static binary is its own libc, a library
 * selected with -f is often one of site_libs). A file that cannot be
 * read has none. Returns 0 or -ENOMEM. */
int guard_sites__scan(struct guard *g, const char *path)
{
	struct stat sb, *v;
	size_t j, first;
	int err;

	if (stat(path, &sb))
		return 0;
	for (j = 0; j < g->nfiles; j++)
		if (g->files[j].st_dev == sb.st_dev && g->files[j].st_ino == sb.st_ino)
			return 0;
	v = realloc(g->files, (g->nfiles + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	g->files = v;
	g->files[g->nfiles++] = sb;
	first = g->nsites;
	err = memo_give(&sb, g, path);
	if (err)
		return err < 0 ? err : 0;
	err = sites_of(g, path);
	if (!err)
		memo_keep(&sb, g, first);
	return err;
}

int guard__add_file(struct guard *g, const char *path)
{
	size_t first;
	int err;

	if (!g || !path)
		return -EINVAL;
	first = g->nsites;
	err = guard_sites__scan(g, path);
	for (; !err && first < g->nsites; first++)
		log_debug("guard site %s in %s at 0x%lx", g->sites[first].name,
			  g->sites[first].path, (unsigned long)g->sites[first].offset);
	return err;
}


int guard_sites__scan_target(struct guard *g, const char *exe)
{
	char path[PATH_MAX];
	size_t i;
	int err;

	for (i = 0; i <= sizeof(site_libs) / sizeof(site_libs[0]); i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "%s", exe);
		else if (libs__resolve_exe(g->pid, g->spawned ? g->exe : NULL, site_libs[i - 1],
					   path, sizeof(path)))
			continue;
		err = guard_sites__scan(g, path);
		if (err)
			return err;
	}
	return 0;
}
