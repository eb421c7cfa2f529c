// SPDX-License-Identifier: BSD-2-Clause
/*
 * The target guard: see user/trace/guard.h for the story and docs/guard.md for
 * why each step is safe. This file has three parts: finding the sites, the
 * BPF program's life, and the ptrace tracer thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cabbpf_event.h"
#include "common/vec.h"
#include "user/trace/guard.h"
#include "user/trace/guardian.h"
#include "user/trace/watchdog.h"
#include "user/proc/libs.h"
#include "user/proc/procfs.h"
#include "common/log.h"
#include "user/kernel/bpfload.h"
#include "user/probe/plan.h"
#include "user/elf/image.h"
#include "user/probe/sites.h"
#include "user/elf/insn.h"
#include "user/elf/syms.h"
#include "user/probe/uprobe_multi.h"
#include "guard.skel.h"

/* ---- sites ---------------------------------------------------------- */

struct gsite {
	char *path;	 /* file to probe */
	uint64_t offset; /* file offset of the function's entry */
	uint32_t kind;	 /* enum cabbpf_guard_site */
	char *name;
};

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

/* ---- the tracer's per-thread state ------------------------------------ */

/* A thread the tracer holds, and the slots it restored for an exception
 * (not for a stack switch): those get their trampoline back at a catch. */
struct gthread {
	pid_t tid;
	uint32_t n;
	uint64_t slot[CABBPF_GUARD_MAX];
	uint64_t orig[CABBPF_GUARD_MAX];
	/* stop handling: while detaching */
	bool stopped;
	bool must_stop; /* holds return addresses to give back */
	int pass_sig; /* signal to deliver when let go */
	/* blocked in a system call, let go in place unless it leaves it
	 * (arm_in_place): then stopped at that call's exit (bpf/guard.bpf.c,
	 * stop_on_exit) */
	bool armed;
	bool ours_pending; /* that SIGSTOP was sent, not yet seen */
	/* --lossless: held in its signal-delivery-stop at the rings'
	 * high-water mark since drain round held_gen */
	bool held;
	uint64_t held_gen;
};

/* What the tracer and the loader share, in memory mapped shared before
 * the tracer process forks (user/trace/guardian.h): the same in a thread. */
struct gshared {
	atomic_int seize_done; /* 0 pending, 1 ok, < 0: -errno */
	atomic_int stop_req;
	atomic_int state; /* 0 tracing, 1 leader reaped, 2 detached/ended */
	int status;	  /* wait status of the reaped leader */
	atomic_uint_fast64_t drain_gen; /* guard__drained rounds */
	atomic_bool drain_below;	/* the last round ended below the low mark */
	atomic_int nheld;		/* threads held */
	struct guard_stats st;
};

struct guard {
	pid_t pid;
	bool spawned;
	char exe[PATH_MAX];
	struct gsite *sites;
	size_t nsites;
	struct stat *files; /* the files looked at for sites, by dev and inode */
	size_t nfiles;
	/* BPF */
	struct guard_bpf *skel;
	bool gate_open; /* guard__gate: kept for a skeleton loaded again */
	struct bpf_link **links; /* one perf link per site (fallback) */
	size_t nlinks;
	int *mfds; /* or one multi-uprobe link per file */
	size_t nmfds;
	struct bpf_link *altstack; /* signal handlers on an alternate stack */
	int exit_stop; /* stop_on_exit's link while letting go, or -1 */
	bool forks;		   /* guard__forks: hold forked processes at birth */
	/* tracer thread */
	pthread_t thr;
	bool thr_started;
	pthread_mutex_t mu; /* guards th/nth and the map fds (main thread adds fds) */
	pthread_cond_t cv;
	struct gshared *sh;
	struct gthread *th;
	size_t nth, cap;
	/* The guard's objects the tracer uses: the skeleton's (a tracer
	 * thread), or the tracer process's copies (install_set) */
	int guarded_fd, reqs_fd;
	int throttled_fd; /* --lossless: bpf/trace.bpf.c's requests, or -1 */
	int iter_fd;	  /* bpf/guard.bpf.c's dump_pending, or -1 */
	int exit_map_fd, exit_prog_fd; /* stop_at_exit, stop_on_exit */
	volatile uint32_t *dump_tgid;  /* in the .bss map, or NULL */
	void *bss_map;		       /* the tracer process's mapping of .bss */
	size_t bss_len;
	int old_reqs_fd; /* the set before the last one (a stop it asked may come late) */
	uint64_t tramp; /* the trampoline's address, 0 until known */
	bool stopped;
	/* guard__guardian asked / the channel to the tracer process
	 * (user/trace/guardian.h), in the loader */
	bool want_guardian;
	struct guardian *gd;
	bool proc; /* the tracer is (or was) a process: cabbpf reaps the target */
	/* in the tracer process: its end of the channel, SIGCHLD's signalfd,
	 * whether cabbpf's socket end has closed (since when) */
	const struct guardian_end *end;
	int sigfd;
	bool orphan;
	struct timespec orphan_t0;
	int *kept; /* the probe links it was given */
	size_t nkept, kept_cap;
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
 * costs ~12 us a hit here and a throw reaches three sites. Not for the
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

/* The sites of the file at path, unless it was looked at already (one
 * file, one set of probes: a static binary is its own libc, a library
 * selected with -f is often one of site_libs). A file that cannot be
 * read has none. Returns 0 or -ENOMEM. */
static int scan_file(struct guard *g, const char *path)
{
	struct stat sb, *v;
	size_t j;

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
	return sites_of(g, path);
}

int guard__add_file(struct guard *g, const char *path)
{
	size_t first;
	int err;

	if (!g || !path)
		return -EINVAL;
	first = g->nsites;
	err = scan_file(g, path);
	for (; !err && first < g->nsites; first++)
		log_debug("guard site %s in %s at 0x%lx", g->sites[first].name,
			  g->sites[first].path, (unsigned long)g->sites[first].offset);
	return err;
}

/* A guard of pid with no site yet, its shared state mapped shared (a
 * tracer process sees it: user/trace/guardian.h). NULL: out of memory. */
static struct guard *guard_new(pid_t pid, bool spawned)
{
	struct guard *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->sh = mmap(NULL, sizeof(*g->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	if (g->sh == MAP_FAILED) {
		free(g);
		return NULL;
	}
	g->pid = pid;
	g->spawned = spawned;
	g->guarded_fd = g->reqs_fd = g->throttled_fd = g->iter_fd = -1;
	g->exit_map_fd = g->exit_prog_fd = g->exit_stop = g->old_reqs_fd = g->sigfd = -1;
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	return g;
}

int guard__open(pid_t pid, const char *exe, bool spawned, struct guard **out)
{
	char path[PATH_MAX];
	struct guard *g;
	size_t i;
	int err;

	*out = NULL;
	g = guard_new(pid, spawned);
	if (!g)
		return -ENOMEM;
	snprintf(g->exe, sizeof(g->exe), "%s", exe);
	for (i = 0; i <= sizeof(site_libs) / sizeof(site_libs[0]); i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "%s", exe);
		else if (libs__resolve_exe(pid, spawned ? exe : NULL, site_libs[i - 1], path,
					   sizeof(path)))
			continue;
		err = scan_file(g, path);
		if (err)
			goto cleanup;
	}
	if (!g->nsites) {
		err = -ENOENT;
		goto cleanup;
	}
	for (i = 0; i < g->nsites; i++)
		log_debug("guard site %s in %s at 0x%lx", g->sites[i].name, g->sites[i].path,
			  (unsigned long)g->sites[i].offset);
	*out = g;
	return 0;
cleanup:
	guard__free(g);
	return err;
}

int guard__open_tracer(pid_t pid, bool spawned, struct guard **out)
{
	struct guard *g = guard_new(pid, spawned);

	*out = NULL;
	if (!g)
		return -ENOMEM;
	*out = g;
	return 0;
}

/* ---- the tracer ---------------------------------------------------------- */

static struct gthread *find_thread(struct guard *g, pid_t tid)
{
	size_t i;

	for (i = 0; i < g->nth; i++)
		if (g->th[i].tid == tid)
			return &g->th[i];
	return NULL;
}

/* A thread the tracer holds from now on; the BPF program may stop it. */
static struct gthread *track(struct guard *g, pid_t tid)
{
	struct gthread *t = find_thread(g, tid), *v;
	uint32_t held = CABBPF_GUARDED_HELD, key = (uint32_t)tid;

	if (t)
		return t;
	pthread_mutex_lock(&g->mu);
	v = vec__grow(g->th, &g->cap, g->nth + 1, sizeof(*v), 16);
	if (!v) {
		pthread_mutex_unlock(&g->mu);
		return NULL;
	}
	g->th = v;
	t = &g->th[g->nth++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	if (g->guarded_fd >= 0)
		bpf_map_update_elem(g->guarded_fd, &key, &held, BPF_ANY);
	pthread_mutex_unlock(&g->mu);
	return t;
}

static void forget(struct guard *g, pid_t tid)
{
	struct gthread *t;
	uint32_t key = (uint32_t)tid;

	pthread_mutex_lock(&g->mu);
	t = find_thread(g, tid);
	if (t) {
		if (t->held)
			atomic_fetch_sub(&g->sh->nheld, 1);
		if (g->throttled_fd >= 0)
			bpf_map_delete_elem(g->throttled_fd, &key);
		*t = g->th[--g->nth];
		if (g->guarded_fd >= 0)
			bpf_map_delete_elem(g->guarded_fd, &key);
		if (g->reqs_fd >= 0)
			bpf_map_delete_elem(g->reqs_fd, &key);
	}
	pthread_mutex_unlock(&g->mu);
}

/* The uretprobe trampoline: the start of the process's [uprobes] mapping
 * (uprobe_get_trampoline_vaddr(): the xol area's first slot). 0 when the
 * process has none yet (then no slot can hold it). */
static uint64_t trampoline(struct guard *g)
{
	char path[64], line[512];
	FILE *f;

	if (g->tramp)
		return g->tramp;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)g->pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[uprobes]")) {
			g->tramp = strtoull(line, NULL, 16);
			break;
		}
	fclose(f);
	return g->tramp;
}

static int peek(pid_t tid, uint64_t addr, uint64_t *v)
{
	struct iovec l = {v, sizeof(*v)}, r = {(void *)(uintptr_t)addr, sizeof(*v)};

	return process_vm_readv(tid, &l, 1, &r, 1, 0) == (ssize_t)sizeof(*v) ? 0 : -errno;
}

static int poke(pid_t tid, uint64_t addr, uint64_t v)
{
	struct iovec l = {&v, sizeof(v)}, r = {(void *)(uintptr_t)addr, sizeof(v)};

	return process_vm_writev(tid, &l, 1, &r, 1, 0) == (ssize_t)sizeof(v) ? 0 : -errno;
}

/* Put orig back in slot if it holds the trampoline. Returns 1 if written. */
static int restore_slot(struct guard *g, pid_t tid, uint64_t slot, uint64_t orig)
{
	uint64_t cur, tr = trampoline(g);

	/* Only the trampoline is ours to replace: anything else in the slot
	 * (a dead frame's slot reused) belongs to the program. */
	if (!tr || peek(tid, slot, &cur) || cur != tr)
		return 0;
	return poke(tid, slot, orig) ? 0 : 1;
}

/*
 * Calls fn for each return instance the kernel holds for the target
 * (bpf/guard.bpf.c, dump_pending): rec is (tid, slot, original return
 * address). li narrows the walk to one task (a fork's child) or is NULL.
 * Returns false when the list cannot be read. Tracer thread only.
 */
static bool walk_pending(struct guard *g, union bpf_iter_link_info *li,
			 void (*fn)(struct guard *g, const uint64_t rec[3], void *arg), void *arg)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo);
	int lfd = -1, fd = -1;
	uint64_t rec[3];

	if (li) {
		lo.iter_info = li;
		lo.iter_info_len = sizeof(*li);
	}
	if (g->iter_fd >= 0)
		lfd = bpf_link_create(g->iter_fd, 0, BPF_TRACE_ITER, &lo);
	fd = lfd >= 0 ? bpf_iter_create(lfd) : -1;
	while (fd >= 0 && read(fd, rec, sizeof(rec)) == (ssize_t)sizeof(rec))
		fn(g, rec, arg);
	if (fd >= 0)
		close(fd);
	if (lfd >= 0)
		close(lfd);
	return fd >= 0;
}

/* walk_pending's step when letting go: the slot goes back if its thread
 * is one *which selects (armed in its call, or stopped), counted. */
enum give_back { GIVE_BACK_ARMED, GIVE_BACK_STOPPED };

static void give_back_one(struct guard *g, const uint64_t rec[3], void *arg)
{
	struct gthread *t = find_thread(g, (pid_t)rec[0]);
	bool chosen = t && (*(enum give_back *)arg == GIVE_BACK_ARMED ? t->armed : t->stopped);

	if (chosen && restore_slot(g, t->tid, rec[1], rec[2]))
		g->sh->st.at_detach++;
}

/* Gives back the slots of the threads which selects. Returns false when
 * the kernel's list cannot be read (nothing given back). */
static bool give_back(struct guard *g, enum give_back which)
{
	return walk_pending(g, NULL, give_back_one, &which);
}

/* Serve the request the BPF program left for tid, if any. Returns true
 * if there was one (the SIGSTOP that stopped the thread is then ours). */
static bool serve(struct guard *g, pid_t tid)
{
	struct cabbpf_guard_req r;
	struct gthread *t;
	uint32_t key = (uint32_t)tid, i, j;

	if (g->reqs_fd >= 0 && !bpf_map_lookup_elem(g->reqs_fd, &key, &r))
		bpf_map_delete_elem(g->reqs_fd, &key);
	else if (g->old_reqs_fd >= 0 && !bpf_map_lookup_elem(g->old_reqs_fd, &key, &r))
		bpf_map_delete_elem(g->old_reqs_fd, &key);
	else
		return false;
	t = track(g, tid);
	if (!t || r.n > CABBPF_GUARD_MAX) {
		g->sh->st.failed++;
		return true;
	}
	g->sh->st.stops++;
	if (r.op == CABBPF_GUARD_RESTORE) {
		/* Frames left on another stack must never get a trampoline
		 * back: their returns happen where the kernel cannot follow. */
		if (r.site == CABBPF_GS_SWITCH)
			t->n = 0;
		for (i = 0; i < r.n; i++) {
			if (!restore_slot(g, tid, r.slot[i], r.orig[i]))
				continue;
			g->sh->st.restored++;
			/* Below a signal's alternate stack: the kernel's list
			 * may drop them (bpf/guard.bpf.c, guard_altstack). */
			if (r.site == CABBPF_GS_SWITCH || r.site == CABBPF_GS_ALTSTACK)
				continue;
			for (j = 0; j < t->n && t->slot[j] != r.slot[i]; j++)
				;
			/* A slot listed already belonged to a frame that is
			 * gone (unwound, never re-armed): the slot's frame is
			 * this one now. Kept with the old address, the catch
			 * below would not re-arm it, and its return would be
			 * lost (found with std::rethrow_exception at the slot
			 * of the next call). */
			if (j < t->n)
				t->orig[j] = r.orig[i];
			else if (t->n < CABBPF_GUARD_MAX) {
				t->slot[t->n] = r.slot[i];
				t->orig[t->n++] = r.orig[i];
			}
		}
		return true;
	}
	/* Frames at or below the catch are dead: their slots leave the
	 * list (else it fills with them, and nothing is re-armed any more). */
	for (j = 0; j < t->n;)
		if (t->slot[j] <= r.sp) {
			t->slot[j] = t->slot[t->n - 1];
			t->orig[j] = t->orig[--t->n];
		} else {
			j++;
		}
	/* Re-arm: frames above the catch that this thread's unwinding
	 * restored and that still hold their original return address. */
	for (i = 0; i < r.n; i++) {
		uint64_t cur, tr = trampoline(g);

		for (j = 0; j < t->n && !(t->slot[j] == r.slot[i] && t->orig[j] == r.orig[i]); j++)
			;
		if (j == t->n)
			continue;
		t->slot[j] = t->slot[t->n - 1];
		t->orig[j] = t->orig[--t->n];
		if (tr && !peek(tid, r.slot[i], &cur) && cur == r.orig[i] &&
		    !poke(tid, r.slot[i], tr))
			g->sh->st.rearmed++;
	}
	return true;
}

static void resume(pid_t tid, int sig)
{
	ptrace(PTRACE_CONT, tid, NULL, (void *)(uintptr_t)sig);
}

/* Seize every thread of the process until no new one appears. */
static int seize_all(struct guard *g)
{
	long opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | (g->forks ? PTRACE_O_TRACEFORK : 0);
	char path[64];
	bool more = true;
	int err = 0, rounds = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)g->pid);
	while (more && rounds++ < 100) {
		DIR *d = opendir(path);
		struct dirent *de;

		if (!d)
			return -ESRCH;
		more = false;
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);

			if (tid <= 0 || find_thread(g, tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)opts)) {
				/* Exited meanwhile. A task that has exited but
				 * is not reaped yet (a zombie: a fork's child
				 * that ended before its own guard came) gives
				 * EPERM, not ESRCH; another tracer's tracee is
				 * not gone. */
				if (errno == ESRCH || (errno == EPERM && procfs__gone(tid)))
					continue;
				err = -errno;
				break;
			}
			if (!track(g, tid)) {
				err = -ENOMEM;
				break;
			}
			more = true;
		}
		closedir(d);
		if (err)
			return err;
	}
	/* None held: every thread exited (a zombie leader included). */
	return g->nth ? 0 : -ESRCH;
}

/* --lossless: whether bpf/trace.bpf.c asked tid to stop at the rings'
 * high-water mark (throttled[tid]); *ts, if not NULL, gets when. */
static bool throttled_since(struct guard *g, pid_t tid, uint64_t *ts)
{
	uint32_t key = (uint32_t)tid;
	uint64_t v;

	if (g->throttled_fd < 0 || bpf_map_lookup_elem(g->throttled_fd, &key, &v))
		return false;
	if (ts)
		*ts = v;
	return true;
}

/* Keep tid in its signal-delivery-stop until the loader's next drain
 * round ends below the low-water mark. Returns false when it cannot be
 * held (not tracked): the caller resumes it. */
static bool hold(struct guard *g, pid_t tid)
{
	struct gthread *t = track(g, tid);

	if (!t)
		return false;
	if (!t->held) {
		t->held = true;
		atomic_fetch_add(&g->sh->nheld, 1);
	}
	t->held_gen = atomic_load(&g->sh->drain_gen);
	return true;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Let held thread t go (its stop request cleared first, so its next
 * event past the mark asks again), counting how long it waited since the
 * BPF program asked (bpf_ktime_get_ns is CLOCK_MONOTONIC). */
static void unhold(struct guard *g, struct gthread *t, bool resume_it)
{
	uint32_t key = (uint32_t)t->tid;
	uint64_t ts = 0, now = mono_ns(), d;

	if (throttled_since(g, t->tid, &ts)) {
		d = now > ts ? now - ts : 0;
		g->sh->st.held++;
		g->sh->st.held_ns += d;
		if (d > g->sh->st.held_max_ns)
			g->sh->st.held_max_ns = d;
		bpf_map_delete_elem(g->throttled_fd, &key);
	}
	t->held = false;
	atomic_fetch_sub(&g->sh->nheld, 1);
	if (resume_it)
		resume(t->tid, 0);
}

/* Resume the held threads once a drain round that began after their stop
 * ended below the low-water mark. */
static void release_held(struct guard *g)
{
	uint64_t gen;
	size_t i;

	/* cabbpf gone: no drain round comes any more */
	if (!atomic_load(&g->sh->nheld) || (!g->orphan && !atomic_load(&g->sh->drain_below)))
		return;
	gen = atomic_load(&g->sh->drain_gen);
	for (i = 0; i < g->nth; i++)
		if (g->th[i].held && (g->orphan || gen > g->th[i].held_gen))
			unhold(g, &g->th[i], true);
}

void guard__drained(struct guard *g, bool below)
{
	if (!g)
		return;
	atomic_store(&g->sh->drain_below, below);
	atomic_fetch_add(&g->sh->drain_gen, 1);
	/* Wake the tracer out of its wait (a thread's: SIGCHLD is what it
	 * waits for). */
	if (below && atomic_load(&g->sh->nheld)) {
		if (g->gd)
			guardian__nudge(g->gd);
		else if (g->thr_started)
			pthread_kill(g->thr, SIGCHLD);
	}
}

/* An executable mapping of a file in a process, from /proc/PID/maps. */
struct xmap {
	uint64_t start, end, off;
	dev_t dev;
	ino_t ino;
};

struct clean {
	pid_t pid;
	int mem; /* /proc/PID/mem, read-write */
	struct xmap *maps;
	size_t nmaps;
	uint64_t removed;
};

/* The bytes a probe changes at a site: int3 over the first byte, or an
 * optimized uprobe's 5-byte call over a 5-byte nop (kernel >= 6.16). */
#define SITE_BYTES 5

struct csite {
	uint64_t addr; /* in the process */
	uint64_t off;  /* in the file */
	uint32_t len;
};

static int csite_cmp(const void *a, const void *b)
{
	const struct csite *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Does cur hold what a probe writes over orig (and nothing else: anything
 * else is the program's)? */
static bool probe_bytes(const uint8_t *cur, const uint8_t *orig, uint32_t len)
{
	if (!memcmp(cur, orig, len))
		return false;
	return cur[0] == 0xcc || (cur[0] == 0xe8 && len == SITE_BYTES && orig[0] == 0x0f &&
				  orig[1] == 0x1f && orig[2] == 0x44);
}

/* Put back the file's bytes at every recorded site of one file that the
 * process maps and holds a breakpoint at (probe_sites__each callback).
 * One read and at most one write per page that has sites: a forked
 * child of a target with 1,373 probed functions cost 7 ms in a read and
 * a write per site (1.8 -> 8.8 ms per fork); the bytes between two sites
 * are the child's own, written back unchanged (it is stopped). */
static void clean_file(void *ctx, const char *path, dev_t dev, ino_t ino, const uint64_t *offs,
		       size_t n)
{
	uint8_t span[4096 + SITE_BYTES];
	struct clean *c = ctx;
	struct image im = {.fd = -1};
	struct csite *v = NULL;
	struct stat sb;
	size_t i, j, k = 0, m;

	for (m = 0; m < c->nmaps && !(c->maps[m].dev == dev && c->maps[m].ino == ino); m++)
		;
	if (m == c->nmaps || image__map(path, &im))
		return;
	if (fstat(im.fd, &sb) || sb.st_dev != dev || sb.st_ino != ino ||
	    !(v = calloc(n, sizeof(*v))))
		goto cleanup; /* replaced since: not the file it maps */
	for (i = 0; i < n; i++) {
		for (m = 0; m < c->nmaps; m++) {
			const struct xmap *x = &c->maps[m];
			uint64_t addr;

			if (x->dev != dev || x->ino != ino || offs[i] < x->off ||
			    offs[i] >= x->off + (x->end - x->start))
				continue;
			addr = x->start + (offs[i] - x->off);
			v[k] = (struct csite){addr, offs[i],
					      (uint32_t)(x->end - addr < SITE_BYTES ? x->end - addr
										    : SITE_BYTES)};
			if (offs[i] + v[k].len <= im.size)
				k++;
			break;
		}
	}
	qsort(v, k, sizeof(*v), csite_cmp);
	for (i = 0; i < k; i = j) {
		uint64_t page = v[i].addr & ~4095ull, lo = v[i].addr, hi = lo + v[i].len;
		uint64_t patched = 0;

		/* the sites that start in this page; a site may end past it */
		for (j = i + 1; j < k && (v[j].addr & ~4095ull) == page; j++)
			if (v[j].addr + v[j].len > hi)
				hi = v[j].addr + v[j].len;
		if (pread(c->mem, span, hi - lo, (off_t)lo) != (ssize_t)(hi - lo))
			continue;
		for (m = i; m < j; m++) {
			uint8_t *cur = span + (v[m].addr - lo);
			const uint8_t *orig = im.base + v[m].off;

			if (!probe_bytes(cur, orig, v[m].len))
				continue;
			memcpy(cur, orig, v[m].len);
			patched++;
		}
		if (patched && pwrite(c->mem, span, hi - lo, (off_t)lo) == (ssize_t)(hi - lo))
			c->removed += patched;
	}
cleanup:
	free(v);
	image__unmap(&im);
}

static void messages(struct guard *g);

/* Take every breakpoint this cabbpf put (user/probe/sites.h) out of
 * process pid, stopped: it inherited them from the target by fork.
 * Returns how many. */
static uint64_t clean_child(pid_t pid)
{
	char path[64], line[PATH_MAX + 128];
	struct clean c = {.pid = pid, .mem = -1};
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, ino;
		unsigned maj, mnr;
		char perm[8];
		struct xmap *nm;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &start, &end, perm, &off, &maj,
			   &mnr, &ino) != 7 ||
		    perm[2] != 'x' || !ino)
			continue;
		nm = realloc(c.maps, (c.nmaps + 1) * sizeof(*nm));
		if (!nm)
			break;
		c.maps = nm;
		c.maps[c.nmaps++] = (struct xmap){start, end, off, makedev(maj, mnr), (ino_t)ino};
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	c.mem = open(path, O_RDWR | O_CLOEXEC);
	if (c.mem >= 0 && c.nmaps)
		probe_sites__each(clean_file, &c);
	if (c.mem >= 0)
		close(c.mem);
	free(c.maps);
	return c.removed;
}

/* walk_pending's step for a fork's child: every slot of it goes back. */
static void child_slot(struct guard *g, const uint64_t rec[3], void *slots)
{
	if (restore_slot(g, (pid_t)rec[0], rec[1], rec[2]))
		++*(uint64_t *)slots;
}

/*
 * A stop of tid, if tid is a process the target forked (guard__forks:
 * PTRACE_O_TRACEFORK holds it at birth, before its first instruction;
 * its stop may come before its parent's fork event). fork copies the
 * forking thread's pending return instances, and the child's stack
 * holds their trampolines; nothing watches the child (the probes are the
 * target's), so an exception there unwinding through an inherited frame
 * found the trampoline and called std::terminate
 * (tests/targets/forkthrow.cc). And the child holds the target's
 * breakpoints: every traced call there armed a return probe of its own
 * (sites.h). The original return addresses go back into the child, from
 * its own list (dump_pending), the breakpoints come out, and it is let
 * go: it runs as untraced.
 * Returns true if tid was such a child.
 */
static bool fork_child(struct guard *g, pid_t tid)
{
	union bpf_iter_link_info li;
	uint64_t slots = 0, bps;

	if (!g->forks || find_thread(g, tid) || procfs__status_field(tid, "Tgid") == g->pid)
		return false;
	/* A tracer process: the probe sites the child may have inherited
	 * were sent before they were placed (guardian__give_sites) */
	messages(g);
	pthread_mutex_lock(&g->mu);
	if (g->dump_tgid) {
		memset(&li, 0, sizeof(li));
		li.task.pid = (uint32_t)tid;
		*g->dump_tgid = (uint32_t)tid;
		walk_pending(g, &li, child_slot, &slots);
		*g->dump_tgid = 0;
	}
	pthread_mutex_unlock(&g->mu);
	/* clone(CLONE_VM) with SIGCHLD reports as a fork, but the child shares
	 * the target's memory: the bytes written there would take the
	 * target's own breakpoints out (its later calls went uncounted,
	 * silently). Such a child inherits no return instance either. */
	if (syscall(SYS_kcmp, g->pid, tid, KCMP_VM, 0UL, 0UL) == 0) {
		log_debug("guard: pid %d shares the target's memory (clone CLONE_VM): let go as "
			  "it is",
			  (int)tid);
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return true;
	}
	bps = clean_child(tid);
	log_debug("guard: pid %d, forked by the target: %" PRIu64 " return addresses and %" PRIu64
		  " breakpoints it inherited taken out",
		  (int)tid, slots, bps);
	ptrace(PTRACE_DETACH, tid, NULL, NULL);
	return true;
}

/* One wait status of a tracee, while tracing. */
static void handle(struct guard *g, pid_t tid, int st)
{
	int sig, ev;
	unsigned long msg;

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		forget(g, tid);
		if (tid == g->pid) {
			g->sh->status = st;
			atomic_store(&g->sh->state, 1);
		}
		return;
	}
	if (!WIFSTOPPED(st) || fork_child(g, tid))
		return;
	track(g, tid); /* a new thread may report before its creator's event */
	sig = WSTOPSIG(st);
	ev = (unsigned)st >> 16;
	switch (ev) {
	case PTRACE_EVENT_CLONE:
		if (!ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg))
			track(g, (pid_t)msg);
		resume(tid, 0);
		return;
	case PTRACE_EVENT_EXEC:
		/* A new image: a new [uprobes] area, and no frame of the old
		 * one survives (the other threads are gone). */
		g->tramp = 0;
		if (!ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) && (pid_t)msg != tid)
			forget(g, (pid_t)msg);
		{
			struct gthread *t = find_thread(g, tid);

			if (t)
				t->n = 0;
		}
		resume(tid, 0);
		return;
	case PTRACE_EVENT_STOP:
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			/* A real group-stop: stay stopped, and let SIGCONT end it
			 * as it would untraced. */
			ptrace(PTRACE_LISTEN, tid, NULL, NULL);
			return;
		}
		resume(tid, 0); /* a new thread's first stop */
		return;
	case 0:
		if (sig == SIGSTOP) {
			siginfo_t si;
			bool guard_req, lossless_req;

			memset(&si, 0, sizeof(si));
			ptrace(PTRACE_GETSIGINFO, tid, NULL, &si);
			/* Ours: sent by bpf_send_signal_thread (SI_KERNEL, which
			 * no process can forge) with a request waiting: the
			 * guard's, the rings' high-water mark's (--lossless), or
			 * both (two SIGSTOPs merge into one). A SIGSTOP from
			 * anyone else is delivered as sent. */
			guard_req = serve(g, tid);
			lossless_req = throttled_since(g, tid, NULL);
			if ((guard_req || lossless_req) && si.si_code == SI_KERNEL) {
				sig = 0;
				if (lossless_req && hold(g, tid))
					return; /* resumed by release_held() */
			}
		}
		resume(tid, sig);
		return;
	default:
		resume(tid, 0);
	}
}

/*
 * Let go of a live process: the threads holding return addresses found in
 * the kernel's own list (walk_pending), each written back in place if it
 * is blocked in a system call, else stopped first; every thread marked
 * let go in "guarded", then detached. Below, mark_must_stop's step.
 */
static void must_stop_one(struct guard *g, const uint64_t rec[3], void *arg)
{
	struct gthread *t = find_thread(g, (pid_t)rec[0]);

	(void)arg;
	if (t)
		t->must_stop = true;
}

/* Whether a stop of tid was asked for by a BPF program (the guard's
 * request, or --lossless's at the rings' high-water mark) and not yet
 * served. */
static bool ours_asked(struct guard *g, pid_t tid)
{
	struct cabbpf_guard_req r;
	uint32_t key = (uint32_t)tid;

	return (g->reqs_fd >= 0 && !bpf_map_lookup_elem(g->reqs_fd, &key, &r)) ||
	       throttled_since(g, tid, NULL);
}

/*
 * Marks the threads that hold return addresses to give back (must_stop).
 * The trace's probes are out by now: no thread gets a new one, a running
 * thread can only lose some (returns). Returns false when the kernel's
 * list cannot be read: then every thread must stop.
 */
static bool mark_must_stop(struct guard *g)
{
	size_t i;

	for (i = 0; i < g->nth; i++)
		g->th[i].must_stop = false;
	return walk_pending(g, NULL, must_stop_one, NULL);
}

/* The calls a ptrace stop ends with EINTR even in a thread with no signal
 * handler (signal(7), "Interruption of system calls and library functions
 * by stop signals"; the socket calls only when a timeout is set on the
 * socket, which is not seen from here): a thread that must be stopped in
 * one of them is said to be cut short. */
static const struct {
	long nr;
	const char *name;
} eintr_calls[] = {
#ifdef __NR_epoll_wait
	{__NR_epoll_wait, "epoll_wait"},
#endif
	{__NR_epoll_pwait, "epoll_pwait"},
#ifdef __NR_epoll_pwait2
	{__NR_epoll_pwait2, "epoll_pwait2"},
#endif
	{__NR_rt_sigtimedwait, "sigtimedwait"},
	{__NR_semop, "semop"},
	{__NR_semtimedop, "semtimedop"},
	{__NR_io_getevents, "io_getevents"},
#ifdef __NR_io_pgetevents
	{__NR_io_pgetevents, "io_pgetevents"},
#endif
	{__NR_accept, "accept"},
	{__NR_accept4, "accept4"},
	{__NR_connect, "connect"},
	{__NR_recvfrom, "recvfrom"},
	{__NR_recvmsg, "recvmsg"},
	{__NR_recvmmsg, "recvmmsg"},
	{__NR_sendto, "sendto"},
	{__NR_sendmsg, "sendmsg"},
	{__NR_sendmmsg, "sendmmsg"},
};

static const char *eintr_call(long nr)
{
	size_t i;

	for (i = 0; nr >= 0 && i < sizeof(eintr_calls) / sizeof(eintr_calls[0]); i++)
		if (eintr_calls[i].nr == nr)
			return eintr_calls[i].name;
	return NULL;
}

/* An armed thread's entry goes. Returns 1 if deleted here (the thread
 * never left its call), 0 if stop_on_exit took it first (its SIGSTOP is
 * coming, ours to swallow: ours_pending), -1 if the program could not send
 * that SIGSTOP (the thread left its call and runs: stop it). */
static int disarm(struct guard *g, struct gthread *t)
{
	uint32_t key = (uint32_t)t->tid, v = 0;

	if (!t->armed)
		return 0;
	t->armed = false;
	if (bpf_map_lookup_and_delete_elem(g->exit_map_fd, &key, &v)) {
		t->ours_pending = true;
		return 0;
	}
	return v == CABBPF_EXIT_STOP_ARMED ? 1 : -1;
}

/*
 * Letting go of a thread blocked in a system call needs no stop: a thread
 * in the kernel runs none of its own code, so its return addresses can be
 * written back while it stays in its call, which then ends as it would
 * untraced (a stop would end epoll_wait or sigwaitinfo with EINTR, and a
 * naive program takes that for its event). What makes the writes safe is
 * that the thread cannot leave the kernel unseen meanwhile:
 *
 *   arm_in_place    puts its tid in stop_at_exit (bpf/guard.bpf.c,
 *                   stop_on_exit: at a system call's exit, whoever deletes
 *                   the entry first decides; the program then sends
 *                   SIGSTOP, taken before the thread runs a user
 *                   instruction), THEN reads that it is in a system call:
 *                   from that read on, it can only reach user mode through
 *                   that exit, where it would stop;
 *   give_back_in_place  reads its pending return instances and writes them
 *                   back, then deletes the entry: deleted by us, the
 *                   thread never left its call (let go in place, never
 *                   stopped); deleted by the program, it left and its
 *                   SIGSTOP is coming (ours_pending), taken before any of
 *                   its code ran: the writes were safe either way, and it
 *                   is let go like any stopped thread.
 *
 * execve is left out: it may replace the memory being written.
 */
static bool arm_in_place(struct guard *g, struct gthread *t)
{
	uint32_t key = (uint32_t)t->tid, armed = CABBPF_EXIT_STOP_ARMED;
	long nr = procfs__syscall(g->pid, t->tid);

	if (nr < 0 || nr == __NR_execve || nr == __NR_execveat || g->exit_prog_fd < 0 ||
	    g->exit_map_fd < 0)
		return false;
	if (g->exit_stop < 0) {
		/* tp_btf: attached by its BTF id, as libbpf would (the tracer
		 * process has the program's descriptor, not the skeleton) */
		g->exit_stop = bpf_raw_tracepoint_open(NULL, g->exit_prog_fd);
		if (g->exit_stop < 0) {
			log_debug("guard: attaching stop_on_exit: %s", strerror(errno));
			g->exit_stop = -1;
			return false;
		}
	}
	if (bpf_map_update_elem(g->exit_map_fd, &key, &armed, BPF_ANY))
		return false;
	t->armed = true;
	/* This read, after the entry is in place, is the one that counts. */
	nr = procfs__syscall(g->pid, t->tid);
	if (nr >= 0 && nr != __NR_execve && nr != __NR_execveat)
		return true;
	/* Not in a call now: stopped like any running thread, unless it
	 * left its call meanwhile and its stop is coming. */
	return !disarm(g, t);
}

/* Thread t must stop and cannot be let go in place: interrupted. In a call
 * that then ends with EINTR it is cut short: counted, and said once by
 * the caller (*call, the first such call's name). */
static void interrupt(struct guard *g, struct gthread *t, const char **call)
{
	const char *c = eintr_call(procfs__syscall(g->pid, t->tid));

	ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
	if (!c)
		return;
	if (!g->sh->st.detach_cut_short++)
		*call = c;
}

/* See arm_in_place. The armed threads that never left their call are let
 * go in place (must_stop cleared, counted); those that did are stopping.
 * Without the return instances (no iterator), the armed threads are
 * interrupted (interrupt, *call). */
static void give_back_in_place(struct guard *g, const char **call)
{
	bool read_them = give_back(g, GIVE_BACK_ARMED);
	size_t i;

	for (i = 0; i < g->nth; i++) {
		struct gthread *t = &g->th[i];
		uint32_t key = (uint32_t)t->tid, let_go = CABBPF_GUARDED_LET_GO;
		int stayed;

		if (!t->armed)
			continue;
		/* Before it can run again: the guard asks nothing more of it
		 * (a catch's re-arm would stop it, and with nobody to see the
		 * stop once this tracer is gone, stop the whole process). */
		if (g->guarded_fd >= 0)
			bpf_map_update_elem(g->guarded_fd, &key, &let_go, BPF_EXIST);
		stayed = disarm(g, t);
		if (!stayed)
			continue; /* its stop is coming */
		if (stayed < 0 || !read_them) {
			interrupt(g, t, call);
			continue;
		}
		t->must_stop = false;
		g->sh->st.detach_in_place++;
	}
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * Test hook, compiled in and armed only by the environment:
 * CABBPF_TEST_LET_GO_PAUSE=FILE: once threads were let go in place, say
 * so and wait (up to 60 s) until FILE exists, the tracer still holding
 * the process: the test wakes such a thread meanwhile, whose catch must
 * ask the guard for nothing (tests/test_guard_integration.c,
 * let_go_in_place_then_catch).
 */
static void test_pause_after_in_place(const struct guard *g)
{
	const char *f = getenv("CABBPF_TEST_LET_GO_PAUSE");
	int i;

	if (!f || !g->sh->st.detach_in_place)
		return;
	log_info("test: letting go of pid %d paused until %s exists", (int)g->pid, f);
	for (i = 0; i < 6000 && access(f, F_OK); i++) {
		struct timespec ms10 = {0, 10000000};

		nanosleep(&ms10, NULL);
	}
}

static void detach_all(struct guard *g)
{
	struct timespec t0;
	bool all = !mark_must_stop(g);
	size_t i, narmed = 0;
	const char *call = NULL;
	int st;

	/* Only the threads with return addresses to give back are stopped,
	 * and of those, none blocked in a system call (arm_in_place): a stop
	 * ends some blocking calls with EINTR even without a handler
	 * (sigwaitinfo, epoll_wait, semop: signal(7)), and a target blocked
	 * in sigwaitinfo went on as if its signal had come when cabbpf let
	 * go (tests/targets/dlopener.c -w). The others are let go by the
	 * kernel when this tracer thread ends (exit_ptrace unlinks a running
	 * tracee without waking it); one that reports a stop meanwhile is
	 * let go here like the stopped ones. */
	for (i = 0; i < g->nth; i++) {
		g->th[i].stopped = false;
		g->th[i].pass_sig = 0;
		if (g->th[i].held) {
			/* In its signal-delivery-stop already (--lossless): it
			 * reports nothing more; let go below. */
			unhold(g, &g->th[i], false);
			g->th[i].stopped = true;
			continue;
		}
		if (all)
			g->th[i].must_stop = true;
		g->th[i].armed = g->th[i].ours_pending = false;
		if (!g->th[i].must_stop)
			continue;
		if (arm_in_place(g, &g->th[i])) {
			narmed++;
			continue;
		}
		interrupt(g, &g->th[i], &call);
	}
	if (narmed) {
		give_back_in_place(g, &call);
		test_pause_after_in_place(g);
	}
	if (call)
		log_warn("letting go of pid %d: %" PRIu64 " thread%s (one in %s) stopped in a "
			 "call to give its return addresses back: that call may end with EINTR "
			 "(signal(7))",
			 (int)g->pid, g->sh->st.detach_cut_short,
			 g->sh->st.detach_cut_short == 1 ? "" : "s", call);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		size_t left = 0;
		pid_t tid;

		for (i = 0; i < g->nth; i++)
			left += g->th[i].must_stop && !g->th[i].stopped;
		if (!left)
			break;
		if (ms_since(&t0) > 2000) {
			g->sh->st.detach_left = left;
			log_warn("%zu thread%s of pid %d did not stop: their return addresses "
				 "stay with the kernel",
				 left, left == 1 ? "" : "s", (int)g->pid);
			break;
		}
		tid = waitpid(-1, &st, __WALL | __WNOTHREAD | WNOHANG);
		if (tid == 0) {
			struct timespec ms = {0, 1000000};

			nanosleep(&ms, NULL);
			continue;
		}
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: nobody left */
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			handle(g, tid, st);
			continue;
		}
		if (!WIFSTOPPED(st) || fork_child(g, tid))
			continue;
		{
			struct gthread *t = track(g, tid);
			int sig = WSTOPSIG(st), ev = (unsigned)st >> 16;

			if (!t)
				continue;
			if (ev == PTRACE_EVENT_CLONE) {
				unsigned long msg;

				if (!ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg)) {
					t = track(g, (pid_t)msg);
					ptrace(PTRACE_INTERRUPT, (pid_t)msg, NULL, NULL);
				}
				t = find_thread(g, tid);
			}
			if (ev == 0) {
				siginfo_t si;

				memset(&si, 0, sizeof(si));
				ptrace(PTRACE_GETSIGINFO, tid, NULL, &si);
				if (sig == SIGSTOP && si.si_code == SI_KERNEL) {
					bool guard_req = serve(g, tid);

					if (throttled_since(g, tid, NULL)) {
						t->held = true; /* for unhold's count */
						atomic_fetch_add(&g->sh->nheld, 1);
						unhold(g, t, false);
						sig = 0;
					} else if (guard_req || t->ours_pending) {
						sig = 0;
					}
					t->ours_pending = false;
				} else if (t->ours_pending) {
					/* Another signal first (delivered now, as
					 * untraced); the stop on exit comes next. */
					resume(tid, sig);
					continue;
				}
				t->pass_sig = sig;
				t->stopped = true;
				continue;
			}
			/* An event or interrupt stop. Our SIGSTOP may still be
			 * queued (the request is there): let the thread take it
			 * first, or it would stop the whole process after we go.
			 * Not queued with a request there: never sent; this
			 * stop is as good. */
			if ((ours_asked(g, tid) || t->ours_pending) &&
			    procfs__sig_pending(tid, SIGSTOP)) {
				resume(tid, 0);
				continue;
			}
			t->ours_pending = false;
			if (ev == PTRACE_EVENT_STOP && (sig == SIGSTOP || sig == SIGTSTP ||
							sig == SIGTTIN || sig == SIGTTOU)) {
				t->pass_sig = 0; /* a real group-stop: it stays */
			}
			t->stopped = true;
		}
	}
	/* Every thread that stopped: back to the original return addresses. */
	if (g->nth)
		give_back(g, GIVE_BACK_STOPPED);
	if (g->exit_stop >= 0)
		close(g->exit_stop);
	g->exit_stop = -1;
	pthread_mutex_lock(&g->mu);
	for (i = 0; i < g->nth; i++) {
		uint32_t key = (uint32_t)g->th[i].tid, let_go = CABBPF_GUARDED_LET_GO;

		/* Kept, marked: a catch after this asks nothing and is not
		 * counted as unguarded (bpf/guard.bpf.c, request). */
		if (g->guarded_fd >= 0)
			bpf_map_update_elem(g->guarded_fd, &key, &let_go, BPF_EXIST);
		if (g->th[i].stopped)
			ptrace(PTRACE_DETACH, g->th[i].tid, NULL,
			       (void *)(uintptr_t)g->th[i].pass_sig);
	}
	g->nth = 0;
	pthread_mutex_unlock(&g->mu);
}

/* ---- the tracer process (user/trace/guardian.h) ------------------------ */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The tracer process takes a new set of the guard's objects (m: the fds in
 * struct guardian_set's order): install()'s half there. Returns 0 or
 * -EPROTO. */
static int take_set(struct guard *g, struct guardian_msg *m)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t i;

	if (m->nfds < 6 || m->nfds > 7 || m->val <= 0 || m->val > (1 << 20)) {
		for (i = 0; i < m->nfds; i++)
			close(m->fds[i]);
		return -EPROTO;
	}
	pthread_mutex_lock(&g->mu);
	/* a stop asked through the set replaced may still be on its way */
	close_fd(&g->old_reqs_fd);
	g->old_reqs_fd = g->reqs_fd;
	close_fd(&g->iter_fd);
	close_fd(&g->guarded_fd);
	close_fd(&g->exit_map_fd);
	close_fd(&g->exit_prog_fd);
	close_fd(&g->throttled_fd);
	if (g->bss_map)
		munmap(g->bss_map, g->bss_len);
	g->bss_map = NULL;
	g->dump_tgid = NULL;
	g->iter_fd = m->fds[0];
	g->reqs_fd = m->fds[1];
	g->guarded_fd = m->fds[2];
	g->exit_map_fd = m->fds[3];
	g->exit_prog_fd = m->fds[4];
	g->throttled_fd = m->nfds == 7 ? m->fds[6] : -1;
	g->bss_len = ((size_t)m->val + (size_t)page - 1) / (size_t)page * (size_t)page;
	g->bss_map = mmap(NULL, g->bss_len, PROT_READ | PROT_WRITE, MAP_SHARED, m->fds[5], 0);
	if (g->bss_map == MAP_FAILED) {
		log_debug("guard: mapping the guard's .bss in its tracer: %s", strerror(errno));
		g->bss_map = NULL;
	} else {
		g->dump_tgid = (volatile uint32_t *)((char *)g->bss_map +
						     offsetof(struct guard_bpf__bss, dump_tgid));
	}
	close(m->fds[5]);
	for (i = 0; i < g->nth; i++) {
		uint32_t key = (uint32_t)g->th[i].tid, held = CABBPF_GUARDED_HELD;

		bpf_map_update_elem(g->guarded_fd, &key, &held, BPF_ANY);
	}
	pthread_mutex_unlock(&g->mu);
	return 0;
}

/* Links kept while the tracer process lives. */
static void keep_links(struct guard *g, struct guardian_msg *m)
{
	int *v = vec__grow(g->kept, &g->kept_cap, g->nkept + m->nfds, sizeof(*v), 16);
	size_t i;

	if (!v) {
		for (i = 0; i < m->nfds; i++)
			close(m->fds[i]);
		return;
	}
	g->kept = v;
	memcpy(g->kept + g->nkept, m->fds, m->nfds * sizeof(int));
	g->nkept += m->nfds;
}

/* Whether cabbpf's process has ended (its pidfd readable), or it has been
 * dying for so long (a process in D state in the kernel) that the tracer
 * lets go anyway. */
#define GONE_WAIT_MS 60000

static bool cabbpf_gone(struct guard *g)
{
	struct pollfd p = {g->end->cabbpf, POLLIN, 0};

	return poll(&p, 1, 0) == 1 || ms_since(&g->orphan_t0) > GONE_WAIT_MS;
}

/* The loader's messages, in the tracer process. */
static void messages(struct guard *g)
{
	struct guardian_msg *m;
	int op;

	if (!g->end || g->orphan || !(m = malloc(sizeof(*m))))
		return;
	while ((op = guardian__recv(g->end->sock, m, false)) != -EAGAIN) {
		if (op == 0) {
			/* cabbpf's end closed: it is dying. Its trace probes go
			 * with its last file; until then they may still replace
			 * return addresses, so the tracer goes on serving. */
			g->orphan = true;
			clock_gettime(CLOCK_MONOTONIC, &g->orphan_t0);
			break;
		}
		if (op == GUARDIAN_SET) {
			guardian__send(g->end->sock, GUARDIAN_ACK, take_set(g, m));
		} else if (op == GUARDIAN_LINKS) {
			keep_links(g, m);
		} else if (op == GUARDIAN_SITES) {
			const uint64_t *offs;
			const char *path;
			size_t n;

			if (!guardian__parse_sites(m, &path, &offs, &n))
				probe_sites__add(path, offs, n);
		}
	}
	free(m);
}

/* The tracer process's wait: a tracee's event (SIGCHLD's signalfd), a
 * message, cabbpf's end; 10 ms at most (a stop request is in the shared
 * state). */
static void wait_events(struct guard *g)
{
	struct pollfd p[2] = {{g->sigfd, POLLIN, 0},
			      {g->orphan ? g->end->cabbpf : g->end->sock, POLLIN, 0}};
	struct signalfd_siginfo si[8];

	if (poll(p, 2, 10) > 0 && (p[0].revents & POLLIN))
		while (read(g->sigfd, si, sizeof(si)) > 0)
			;
}

static void *tracer_main(void *arg)
{
	struct guard *g = arg;
	sigset_t chld;
	int err, st;

	/* Named for top -H and for the tests, which stop it to hold a fork. */
	if (!g->end)
		pthread_setname_np(pthread_self(), "cabbpf-guard");
	err = seize_all(g);
	if (g->end) {
		atomic_store(&g->sh->seize_done, err ? err : 1);
		guardian__send(g->end->sock, GUARDIAN_SEIZED, err);
	} else {
		pthread_mutex_lock(&g->mu);
		atomic_store(&g->sh->seize_done, err ? err : 1);
		pthread_cond_broadcast(&g->cv);
		pthread_mutex_unlock(&g->mu);
	}
	if (err)
		return NULL;
	/* SIGCHLD is blocked in every cabbpf thread (guard__seize): it is
	 * taken here only, as the wake-up for tracee events; the timeout
	 * bounds how late a stop request is seen. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	while (atomic_load(&g->sh->state) == 0) {
		struct timespec to = {0, 10000000};
		pid_t tid = 0;

		/* __WNOTHREAD: this thread's tracees only, not the children of
		 * cabbpf's other threads (a watchdog, or the tracers of other
		 * guards: whole-container tracing has one per process). */
		while (atomic_load(&g->sh->state) == 0 &&
		       (tid = waitpid(-1, &st, __WALL | __WNOTHREAD | WNOHANG)) > 0)
			handle(g, tid, st);
		messages(g);
		release_held(g);
		if (atomic_load(&g->sh->state) != 0)
			break;
		if (tid < 0 && errno == ECHILD) {
			atomic_store(&g->sh->state, 2);
			break;
		}
		/* cabbpf died: let go as it would have (its probes are gone) */
		if (g->orphan && cabbpf_gone(g))
			atomic_store(&g->sh->stop_req, 1);
		if (atomic_load(&g->sh->stop_req)) {
			int tracing = 0;

			detach_all(g);
			/* Unless detach_all reaped the leader (state 1). */
			atomic_compare_exchange_strong(&g->sh->state, &tracing, 2);
			break;
		}
		if (g->end)
			wait_events(g);
		else
			sigtimedwait(&chld, NULL, &to);
	}
	return NULL;
}

static void count_tramp(struct guard *g, const uint64_t rec[3], void *arg)
{
	uint64_t cur;

	if (!peek((pid_t)rec[0], rec[1], &cur) && cur == trampoline(g))
		++*(uint64_t *)arg;
}

/* The tracer process's life (guardian__start). Never returns. */
static void tracer_process(void *arg, const struct guardian_end *end)
{
	struct guard *g = arg;
	struct rlimit rl;
	sigset_t chld;

	prctl(PR_SET_NAME, "cabbpf-guard");
	/* Each link of the guard is a descriptor here: as many as cabbpf's */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* cabbpf's objects are not this process's (its files are closed) */
	g->skel = NULL;
	g->links = NULL;
	g->nlinks = 0;
	g->mfds = NULL;
	g->nmfds = 0;
	g->altstack = NULL;
	g->gd = NULL;
	g->end = end;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	g->sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	if (g->sigfd < 0) {
		guardian__send(end->sock, GUARDIAN_SEIZED, -errno);
		_exit(1);
	}
	tracer_main(g);
	{
		struct rusage ru;

		if (!getrusage(RUSAGE_SELF, &ru))
			g->sh->st.tracer_cpu_ns =
				(uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
				(uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	}
	if (g->orphan && end->logfd >= 0) {
		uint64_t left = 0;

		walk_pending(g, NULL, count_tramp, &left);
		dprintf(end->logfd,
			"guardian: pid %d: cabbpf gone; rescue done: %llu stops served, %llu return "
			"addresses given back at the end, %llu threads that did not stop; "
			"trampolines left %llu\n",
			(int)g->pid, (unsigned long long)g->sh->st.stops,
			(unsigned long long)g->sh->st.at_detach,
			(unsigned long long)g->sh->st.detach_left, (unsigned long long)left);
	}
	guardian__send(end->sock, GUARDIAN_BYE, 0);
	/* --lossless: a thread that did not stop (frozen: a paused
	 * container's) may still take a SIGSTOP of ours when it runs again;
	 * continued then, as the watcher of a guard-less run does. Watched
	 * from a child: this process's end detaches whatever it could not
	 * (a frozen thread refuses PTRACE_DETACH), and a thread still traced
	 * by its watcher would never run past its stop. */
	if (g->orphan && g->throttled_fd >= 0 && fork() == 0) {
		watchdog__watch(g->pid);
		_exit(0);
	}
	_exit(0);
}

/* probe_sites__on_add's listener: a tracer process is told of each site
 * (fork_child takes them out of a fork's child). */
static void tell_sites(void *ctx, const char *path, const uint64_t *offs, size_t n)
{
	struct guard *g = ctx;

	guardian__give_sites(g->gd, path, offs, n);
}

/* Says why the tracer could not seize the target (err from seize_all). */
static void seize_failed(struct guard *g, int err)
{
	if (err == -EPERM)
		log_warn("cannot become the ptrace tracer of pid %d (%s)", (int)g->pid,
			 "already traced by a debugger or strace, or not allowed by "
			 "Yama's ptrace_scope");
	else if (err != -ESRCH) /* gone: the caller knows what that means */
		log_warn("cannot become the ptrace tracer of pid %d: %s", (int)g->pid,
			 strerror(-err));
}

int guard__seize(struct guard *g)
{
	sigset_t chld;
	int err;

	/* Before any other thread exists, so all of them inherit the mask
	 * (the tracer takes SIGCHLD with sigtimedwait, or its signalfd). */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, NULL);
	/* The tracer in a process of its own, which outlives cabbpf; where it
	 * cannot start, a thread (said by guardian__start). */
	if (g->want_guardian && !g->gd && !guardian__start(tracer_process, g, &g->gd)) {
		err = guardian__seized(g->gd);
		g->proc = true;
		/* the sites the process forked without (user/probe/sites.h) */
		if (!err)
			probe_sites__on_add(tell_sites, g);
		if (err) {
			/* Threads seized before the failure were let go when it
			 * ended (the kernel detaches a dead tracer's tracees). */
			guardian__end(g->gd);
			g->gd = NULL;
			seize_failed(g, err == -ECHILD ? -EIO : err);
		}
		return err;
	}
	err = pthread_create(&g->thr, NULL, tracer_main, g);
	if (err)
		return -err;
	g->thr_started = true;
	pthread_mutex_lock(&g->mu);
	while (!atomic_load(&g->sh->seize_done))
		pthread_cond_wait(&g->cv, &g->mu);
	err = atomic_load(&g->sh->seize_done) < 0 ? atomic_load(&g->sh->seize_done) : 0;
	pthread_mutex_unlock(&g->mu);
	if (err) {
		pthread_join(g->thr, NULL);
		g->thr_started = false;
		seize_failed(g, err);
	}
	return err;
}

void guard__forks(struct guard *g)
{
	if (g)
		g->forks = true;
}

void guard__guardian(struct guard *g)
{
	if (g)
		g->want_guardian = true;
}

int guard__reaped(struct guard *g, int *status)
{
	int s;

	/* A tracer process is not the target's parent: cabbpf waits for it
	 * (the tracer's wait hands it on, user/proc/target.h) */
	if (!g || g->proc)
		return -1;
	/* Pairs with the store in handle(): status is written before. */
	s = atomic_load(&g->sh->state);
	if (s == 1) {
		*status = g->sh->status;
		return 1;
	}
	return s == 0 && g->thr_started ? 0 : -1;
}

/* ---- BPF ------------------------------------------------------------ */

static void detach_probes(struct guard *g)
{
	size_t i;

	for (i = 0; i < g->nmfds; i++)
		close(g->mfds[i]);
	free(g->mfds);
	g->mfds = NULL;
	g->nmfds = 0;
	for (i = 0; i < g->nlinks; i++)
		bpf_link__destroy(g->links[i]);
	free(g->links);
	g->links = NULL;
	g->nlinks = 0;
	bpf_link__destroy(g->altstack);
	g->altstack = NULL;
}

/* Signal handlers that run on an alternate stack (bpf/guard.bpf.c,
 * guard_altstack): a tracepoint, whatever the sites. */
static int attach_altstack(struct guard *g)
{
	g->altstack = bpf_program__attach(g->skel->progs.guard_altstack);
	if (!g->altstack) {
		int err = -errno;

		log_err("guard: attaching to the signal_deliver tracepoint: %s", strerror(-err));
		return err;
	}
	return 0;
}

/* Open and load the guard's program into m's rings; multi selects the
 * attach type (fixed before load). Returns 0 and *out, or -errno. */
static int load_skel(struct guard *g, const struct guard_maps *m, bool multi,
		     struct guard_bpf **out)
{
	struct guard_bpf *skel;
	int err = 0;

	*out = NULL;
	skel = guard_bpf__open();
	if (!skel)
		return -errno ? -errno : -ENOMEM;
	skel->rodata->target_tgid = (__u32)g->pid;
	skel->rodata->want_time = !m->no_times;
	skel->rodata->want_events = m->slots_fd >= 0;
	skel->rodata->ring_shift = (__u32)__builtin_ctzl(m->ring_bytes / CABBPF_SLOT_BYTES);
	skel->rodata->ring_mask = m->ring_bytes / CABBPF_SLOT_BYTES - 1;
	if (multi)
		bpf_program__set_expected_attach_type(skel->progs.guard_site,
						      UPROBE_MULTI_ATTACH_TYPE);
	if (m->guarded_fd >= 0)
		err = bpf_map__reuse_fd(skel->maps.guarded, m->guarded_fd);
	/* Without events no thread states (bpf/pipeline.bpf.h): a tiny table. */
	if (!err && m->slots_fd < 0)
		err = bpf_map__set_max_entries(skel->maps.tstab, 1);
	if (!err && m->slots_fd >= 0) {
		err = bpf_map__reuse_fd(skel->maps.slots, m->slots_fd);
		if (!err)
			err = bpf_map__reuse_fd(skel->maps.heads, m->heads_fd);
		if (!err)
			err = bpf_map__reuse_fd(skel->maps.tstates, m->tstates_fd);
		if (!err)
			err = bpf_map__reuse_fd(skel->maps.tstab, m->tstab_fd);
		skel->rodata->tstab_mask = m->tstab_mask;
		if (!err)
			err = bpf_map__reuse_fd(skel->maps.stats, m->stats_fd);
	}
	if (!err)
		err = guard_bpf__load(skel);
	if (err) {
		guard_bpf__destroy(skel);
		return err;
	}
	*out = skel;
	return 0;
}

/* One multi-uprobe link per file: detaching costs one RCU grace period
 * per file instead of one per site (~0.1 s each here). */
static int attach_multi(struct guard *g)
{
	uint64_t *offs = calloc(g->nsites, sizeof(*offs));
	uint64_t *cookies = calloc(g->nsites, sizeof(*cookies));
	bool *done = calloc(g->nsites, sizeof(*done));
	size_t i, j;
	uint32_t n;
	int err = 0, fd;

	g->mfds = calloc(g->nsites, sizeof(*g->mfds));
	if (!offs || !cookies || !done || !g->mfds) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < g->nsites; i++) {
		if (done[i])
			continue;
		for (j = i, n = 0; j < g->nsites; j++) {
			if (done[j] || strcmp(g->sites[j].path, g->sites[i].path))
				continue;
			done[j] = true;
			offs[n] = g->sites[j].offset;
			cookies[n++] = g->sites[j].kind;
		}
		fd = uprobe_multi__attach(bpf_program__fd(g->skel->progs.guard_site),
					  g->sites[i].path, offs, cookies, n, false, g->pid);
		if (fd < 0) {
			err = fd;
			goto cleanup;
		}
		g->mfds[g->nmfds++] = fd;
		g->sh->st.nsites += n;
	}
cleanup:
	free(offs);
	free(cookies);
	free(done);
	return err;
}

static int attach_perf(struct guard *g)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo);
	size_t i;

	g->links = calloc(g->nsites, sizeof(*g->links));
	if (!g->links) {
		log_err("out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < g->nsites; i++) {
		struct bpf_link *l;

		uo.bpf_cookie = g->sites[i].kind;
		uo.retprobe = false;
		l = bpf_program__attach_uprobe_opts(g->skel->progs.guard_site, g->pid,
						    g->sites[i].path, (size_t)g->sites[i].offset,
						    &uo);
		if (!l) {
			int err = -errno;

			log_err("guard probe on %s in %s: %s", g->sites[i].name, g->sites[i].path,
				strerror(-err));
			return err;
		}
		g->links[g->nlinks++] = l;
		g->sh->st.nsites++;
	}
	return 0;
}

/* Make skel the guard's program: the tracer serves its requests and
 * fills its "guarded" map from now on. A tracer process gets copies of its
 * objects, and uses them (its answer waited for) before any probe of skel
 * can stop a thread. Returns 0 or -errno (logged). */
static int install(struct guard *g, struct guard_bpf *skel, int throttled_fd)
{
	struct guardian_set set;
	size_t i;
	int err;

	pthread_mutex_lock(&g->mu);
	guard_bpf__destroy(g->skel);
	g->skel = skel;
	if (skel->bss) /* a reloaded skeleton keeps the gate's state */
		skel->bss->events_gate = g->gate_open ? 1 : 0;
	g->guarded_fd = bpf_map__fd(skel->maps.guarded);
	g->reqs_fd = bpf_map__fd(skel->maps.guard_reqs);
	g->iter_fd = bpf_program__fd(skel->progs.dump_pending);
	g->exit_map_fd = bpf_map__fd(skel->maps.stop_at_exit);
	g->exit_prog_fd = bpf_program__fd(skel->progs.stop_on_exit);
	g->dump_tgid = skel->bss ? &skel->bss->dump_tgid : NULL;
	g->throttled_fd = throttled_fd;
	for (i = 0; i < g->nth; i++) {
		uint32_t key = (uint32_t)g->th[i].tid, held = CABBPF_GUARDED_HELD;

		bpf_map_update_elem(g->guarded_fd, &key, &held, BPF_ANY);
	}
	pthread_mutex_unlock(&g->mu);
	if (!g->gd)
		return 0;
	set.iter = g->iter_fd;
	set.reqs = g->reqs_fd;
	set.guarded = g->guarded_fd;
	set.exit_map = g->exit_map_fd;
	set.exit_prog = g->exit_prog_fd;
	set.bss = bpf_map__fd(skel->maps.bss);
	set.bss_size = (uint32_t)bpf_map__value_size(skel->maps.bss);
	set.throttled = throttled_fd;
	err = guardian__give_set(g->gd, &set);
	if (err)
		log_err("guard: handing its maps to its tracer process: %s",
			err == -ESRCH ? "it ended (the target ended)" : strerror(-err));
	return err;
}

/* Copies of the guard's probe links to its tracer process (if any), so that
 * a throw after cabbpf's death still stops. */
static void hand_over(struct guard *g)
{
	int *links;
	size_t i, n = 0;

	if (!g->gd)
		return;
	links = calloc(g->nmfds + g->nlinks + 1, sizeof(*links));
	if (!links)
		return;
	for (i = 0; i < g->nmfds; i++)
		links[n++] = g->mfds[i];
	for (i = 0; i < g->nlinks; i++)
		links[n++] = bpf_link__fd(g->links[i]);
	if (g->altstack)
		links[n++] = bpf_link__fd(g->altstack);
	guardian__give_links(g->gd, links, n);
	free(links);
}

int guard__attach(struct guard *g, const struct guard_maps *m)
{
	const char *no_multi = getenv("CABBPF_TEST_NO_MULTI");
	struct guard_bpf *skel = NULL;
	bool multi = !(no_multi && *no_multi == '1') && !m->no_multi_links;
	struct bpfload_log lg;
	int err;

	/* Replace the previous program (the trace object was reloaded). */
	detach_probes(g);
	g->sh->st.nsites = 0;
	if (multi) {
		bpfload__begin(&lg);
		err = load_skel(g, m, true, &skel);
		bpfload__end(&lg);
		bpfload__free(&lg);
		if (err)
			log_debug("guard: loading for multi-uprobe links failed (%s); one link per "
				  "site",
				  strerror(-err));
		if (!err) {
			err = install(g, skel, m->throttled_fd);
			if (err)
				return err;
			/* A tracer-only guard (--lossless) has no site. */
			err = g->nsites ? attach_multi(g) : 0;
			if (!err)
				err = attach_altstack(g);
			if (!err)
				hand_over(g);
			if (!err)
				return 0;
			log_debug("guard: multi-uprobe link refused (%s); one link per site",
				  strerror(-err));
			detach_probes(g);
			g->sh->st.nsites = 0;
		}
	}
	bpfload__begin(&lg);
	err = load_skel(g, m, false, &skel);
	bpfload__end(&lg);
	if (err) {
		bpfload__explain(&lg, "the guard's BPF object", err);
		bpfload__free(&lg);
		return err;
	}
	bpfload__free(&lg);
	err = install(g, skel, m->throttled_fd);
	if (!err)
		err = g->nsites ? attach_perf(g) : 0;
	if (!err)
		err = attach_altstack(g);
	if (!err)
		hand_over(g);
	return err;
}

static void read_bpf_stats(struct guard *g)
{
	int n = libbpf_num_possible_cpus(), c;
	uint32_t k;
	uint64_t *v;

	if (!g->skel || n <= 0 || !(v = calloc((size_t)n, sizeof(*v))))
		return;
	for (k = 0; k < CABBPF_GST__MAX; k++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(bpf_map__fd(g->skel->maps.guard_stats), &k, v))
			continue;
		for (c = 0; c < n; c++)
			sum += v[c];
		if (k == CABBPF_GST_SITES)
			g->sh->st.sites_hit = sum;
		else if (k == CABBPF_GST_UNGUARDED)
			g->sh->st.unguarded = sum;
		else if (k == CABBPF_GST_SIGFAIL)
			g->sh->st.failed += sum;
	}
	free(v);
}

void guard__gate(struct guard *g, bool open)
{
	if (g) {
		g->gate_open = open;
		if (g->skel && g->skel->bss)
			__atomic_store_n(&g->skel->bss->events_gate, open ? 1 : 0,
					 __ATOMIC_RELEASE);
	}
}

void guard__let_go(struct guard *g)
{
	if (g && (g->thr_started || g->gd)) {
		atomic_store(&g->sh->stop_req, 1);
		guardian__nudge(g->gd);
	}
}

void guard__stop(struct guard *g, struct guard_stats *st)
{
	if (!g)
		return;
	if (g->thr_started) {
		atomic_store(&g->sh->stop_req, 1);
		pthread_join(g->thr, NULL);
		g->thr_started = false;
	}
	/* A tracer process lets go, and its copies go before cabbpf's own
	 * closes release the probes, as with a thread. */
	if (g->gd) {
		probe_sites__on_add(NULL, NULL);
		atomic_store(&g->sh->stop_req, 1);
		guardian__nudge(g->gd);
		guardian__end(g->gd);
		g->gd = NULL;
	}
	if (!g->stopped) {
		read_bpf_stats(g);
		g->stopped = true;
	}
	if (st)
		*st = g->sh->st;
}

void guard__free(struct guard *g)
{
	size_t i;

	if (!g)
		return;
	guard__stop(g, NULL);
	detach_probes(g);
	guard_bpf__destroy(g->skel);
	for (i = 0; i < g->nsites; i++) {
		free(g->sites[i].path);
		free(g->sites[i].name);
	}
	free(g->sites);
	free(g->files);
	free(g->th);
	free(g->kept);
	if (g->sh)
		munmap(g->sh, sizeof(*g->sh));
	pthread_mutex_destroy(&g->mu);
	pthread_cond_destroy(&g->cv);
	free(g);
}
