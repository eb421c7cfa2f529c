/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/syms — which functions a binary has, and where a uprobe must go.
 *
 * syms__load() reads an ELF executable or shared object with libelf and
 * builds a table of its functions: every defined STT_FUNC / STT_GNU_IFUNC
 * symbol of .symtab, or of .dynsym when the binary is stripped. A uprobe is
 * attached by (inode, FILE OFFSET), not by virtual address, so each entry
 * carries the file offset computed through the PT_LOAD segment that maps it.
 *
 * One entry per ADDRESS: several names at one address (weak + global
 * aliases, a static function exported under a second name) collapse into
 * one entry, because two probes on one address would count every call twice.
 * The other names stay reachable as aliases, so selection by any name works.
 *
 * A name carries no default symbol version: glibc's debug symbols say
 * "fopen@@GLIBC_2.2.5" for the fopen programs call, and the table says
 * "fopen", as the dynamic symbol table does. A non-default (compat)
 * version keeps its suffix ("pthread_cond_wait@GLIBC_2.2.5"): that is
 * another function, or another name of one.
 *
 * Threads: a loaded table is immutable; any thread may read it, search it
 * and select from it concurrently. syms__free() must not race with readers.
 */
#ifndef USER_SYMS_H
#define USER_SYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum syms_bind {
	SYMS_BIND_GLOBAL = 0, /* STB_GLOBAL (and STB_GNU_UNIQUE) */
	SYMS_BIND_WEAK = 1,   /* STB_WEAK */
	SYMS_BIND_LOCAL = 2,  /* STB_LOCAL: a static function, or crt boilerplate */
};

/* One function: one address, one or more names. */
struct sym {
	/*
	 * Preferred name among all symbols at this address: global over weak
	 * over local, then fewest leading underscores, then shortest, then
	 * alphabetical (so the choice is deterministic).
	 */
	const char *name;
	/* The readable name when the preferred one is mangled (C++, Rust) or
	 * a clone ("f [clone .isra.0]"), NULL otherwise (user/elf/demangle.h):
	 * what reports show; -f globs match it too. */
	const char *pretty;
	const char *const *aliases; /* the other names at this address */
	size_t naliases;
	uint64_t vaddr;	     /* st_value: link-time virtual address */
	uint64_t size;	     /* st_size; the largest among the aliases */
	uint64_t offset;     /* file offset of the first instruction (uprobe offset) */
	enum syms_bind bind; /* binding of the preferred name */
	/*
	 * STT_GNU_IFUNC: the address is the resolver, which runs once at
	 * relocation time, not the implementation the program calls.
	 */
	bool ifunc;
};

struct symtab {
	char *path;	  /* the path given to syms__load() */
	char *debug_path; /* the separate debug file its symbols came from, or NULL */
	char *build_id;	  /* its GNU build id, lowercase hex, or NULL */
	bool pie;	  /* ET_DYN (PIE or shared object): loaded at a runtime bias */
	/* e_entry: the link-time address the kernel (or ld.so) jumps to
	 * when the file runs as a program; 0 when it has none */
	uint64_t entry;
	/* no .symtab (stripped, no debug file): the functions known are the
	 * exported ones and (nfde) those of its unwind tables, not every one */
	bool from_dynsym;
	/* of syms, the functions found from .eh_frame's FDEs alone (stripped,
	 * no debug file): named BINARY+0xVADDR (user/elf/fde.h) */
	size_t nfde;
	struct sym *syms; /* functions with size > 0, sorted by vaddr, one per address */
	size_t nsyms;
	/*
	 * Function symbols of size 0 (assembly without .size, _init, _fini,
	 * crt helpers) at addresses no sized function has. They are not
	 * selectable: the plan reports them as skipped. Sorted by vaddr, one
	 * per address; their offset is valid.
	 */
	struct sym *zero;
	size_t nzero;
	/* Functions (addresses) outside every file-backed PT_LOAD: dropped. */
	size_t nunmapped;
	/* Private: storage behind the name and alias pointers. */
	char *strings_;
	const char **aliasv_;
	char **pretty_; /* nsyms entries, NULL or malloc'd */
};

/*
 * Where syms__load looks for separate debug files (build-id and
 * .gnu_debuglink, as gdb's debug-file-directory): dir instead of
 * /usr/lib/debug (--debug-dir); a binary under /proc/PID/root has its
 * container's /usr/lib/debug searched first (user/elf/debuglink.h).
 * Call before loading; the main thread.
 */
void syms__set_debug_dir(const char *dir);

/*
 * Loads the function table of the ELF file at @path into *@out.
 * Returns 0, or
 *   -ENOENT   no such file,
 *   -EISDIR   @path is a directory,
 *   -ENOEXEC  not an ELF file, or an ELF that is neither ET_EXEC nor ET_DYN
 *             (relocatable objects, core files), or not a regular file,
 *   -ENODATA  no defined function symbol at all (neither sized nor size 0)
 *             in any file-backed PT_LOAD segment,
 *   -ENOMEM, -EINVAL (NULL argument), or another -errno from open().
 * Memory: on success the caller owns *@out and releases it with
 * syms__free(); on error *@out is left NULL.
 * Threads: any thread; concurrent calls are fine.
 */
int syms__load(const char *path, struct symtab **out);

/*
 * Selects functions of @st by name. With @nglobs > 0, a function is selected
 * when any of the fnmatch(3) patterns in @globs (flags 0: '*' also matches
 * '.', ':' and '/') matches any of its names:
 *   - its preferred (linkage) name or an alias: "_ZN2ns3Foo3barEi",
 *     "work.isra.0";
 *   - its readable name (struct sym.pretty): "ns::Foo::bar(int)",
 *     "int ns::twice<int>(int)", "work [clone .isra.0]";
 *   - the readable name without its parameter list (demangle__base_len),
 *     and also without a template's return type: "ns::Foo::bar",
 *     "ns::twice<int>", and a clone's function name "work".
 * So "ns::Foo::*", "ns::Foo::bar", "std::vector*" and the mangled name all
 * work, and "work" or "f*" select work's clones too ("work.part.0",
 * "_Z4workv.constprop.0"): a clone is a real function entered by a call,
 * with the code of work the program runs. An explicit glob may select
 * boilerplate.
 *
 * Fragments are never selected, whatever the globs (syms__is_fragment:
 * "f.cold", "f.cold.N", "_Z1fv.cold", "f.part.0.cold"): a fragment is not a
 * function (see syms__is_fragment); syms__why_unmatched says so for a
 * pattern that names only fragments.
 *
 * With @nglobs == 0 (@globs may be NULL), every function is selected except
 * C runtime boilerplate that no user wrote, recognised by preferred name:
 *   _start, _init, _fini, frame_dummy, register_tm_clones,
 *   deregister_tm_clones, __do_global_dtors_aux, __do_global_ctors_aux,
 *   __libc_csu_init, __libc_csu_fini, __libc_csu_irel,
 *   _dl_relocate_static_pie, __libc_start_main, __libc_start_call_main,
 *   __cxa_finalize, __gmon_start__, __stack_chk_fail_local, _mcount,
 *   __x86.get_pc_thunk.* (i386 PIC thunks), _GLOBAL__sub_I_* and
 *   _GLOBAL__sub_D_* (C++ static constructors/destructors),
 *   __static_initialization_and_destruction_* (their bodies).
 *
 * Writes to *@idx_out a malloc'd array of indices into @st->syms in
 * ascending (address) order, and its length to *@n_out.
 * Returns 0, -ENOENT when nothing is selected (then *@idx_out is NULL and
 * *@n_out 0), -EINVAL (NULL argument or NULL glob), -ENOMEM.
 * Memory: the caller frees *@idx_out with free().
 * Threads: any thread.
 */
int syms__select(const struct symtab *st, const char *const *globs, size_t nglobs, size_t **idx_out,
		 size_t *n_out);

/*
 * Removes from @idx[0..*@n) (indices into @st->syms, as syms__select
 * returns them) every function that any of @globs names, by the same
 * rules as syms__select (-N/--exclude). Keeps the order; updates *@n.
 * Returns the number removed. Threads: any thread.
 */
size_t syms__exclude(const struct symtab *st, const char *const *globs, size_t nglobs, size_t *idx,
		     size_t *n);

/*
 * True for a fragment of a function, not a function: GCC's hot/cold
 * splitting leaves "f.cold" (and "f.cold.N", after a clone suffix
 * "f.part.0.cold", mangled "_Z1fv.cold") symbols for code that is entered by
 * a jump from f, never by a call. A return probe at a fragment's first
 * instruction would replace whatever word is at the top of the stack (a
 * spill slot, a saved register) with the trampoline, and an entry there
 * would report a false call f -> f.cold. syms__select never selects one;
 * the time spent in a fragment counts in f (as f's self time).
 *
 * Clones are functions and are not fragments: GCC's ".isra.N" (scalar
 * replacement of aggregates), ".constprop.N" (constant propagation) and
 * ".part.N" (partial inlining: the outlined rest of f, which f's inlined
 * head reaches with call or a tail jmp that leaves f's return address on
 * top of the stack) all follow the calling convention and return to their
 * caller. Reports name them as clones of their function, as c++filt does:
 * "work [clone .constprop.0]", "work() [clone .part.0]" (user/elf/demangle.h).
 * Returns false for NULL. Any thread.
 */
bool syms__is_fragment(const char *name);

/*
 * Explains why @glob selects no function of @st when the reason is that it
 * names only fragments (syms__is_fragment), matched by the fragment's own
 * name ("_ZN2ns4workEl.cold"), its readable name ("ns::work(long) [clone
 * .cold]"), or its function's readable name without parameters plus the
 * fragment suffix ("work.cold", "ns::work.cold"); never by the base of its
 * readable name ("work" names the function work). Writes to @buf (size
 * @len, truncated to fit) a phrase to follow "-f 'GLOB' ", naming the
 * fragment and the function it belongs to, e.g. "names only work [clone
 * .cold], a fragment of work (entered by a jump, not by a call): not
 * traceable on its own, its time counts in work".
 * Returns 0, -ENOENT when @glob names no fragment (nothing written), or
 * -EINVAL (NULL argument, @len 0).
 * Memory: writes only into @buf. Threads: any thread.
 */
int syms__why_unmatched(const struct symtab *st, const char *glob, char *buf, size_t len);

/*
 * Warns, for each of the @n -f patterns @globs, that it selects no function
 * of @st: always when it names only a fragment (with syms__why_unmatched's
 * reason, which the error that follows could not give), otherwise only
 * when there are several patterns or @others_matched (one pattern alone:
 * the caller's error says it). No-op for a NULL @st or no pattern.
 * Threads: any thread.
 */
void syms__warn_unmatched(const struct symtab *st, const char *const *globs, size_t n,
			  bool others_matched);

struct srcline;

/*
 * --list: writes to @out one line per selected function (@idx[0..@n),
 * indices into @st->syms): address, size, name, and where @src (NULL, or
 * @n entries parallel to @idx: user/elf/dwarf.h) knows it, "FILE:LINE";
 * then says on stderr how many would be traced. Threads: any thread.
 */
void syms__print_list(FILE *out, const struct symtab *st, const size_t *idx, size_t n,
		      const struct srcline *src);

/* Whether s holds st's entry point (st->entry): the code a program
 * starts in, which the kernel (or ld.so) jumps to: no call put a return
 * address on the stack there ([rsp] is argc), so a return probe would
 * overwrite the program's data. Pure; any thread. */
bool syms__holds_entry(const struct symtab *st, const struct sym *s);

/*
 * Returns the function that has @name as its preferred name or as an alias,
 * the lowest-addressed one when static functions in different files share
 * the name; NULL when there is none (zero-size symbols are not searched).
 * Linear in the table size.
 * Memory: the result points into @st and lives as long as @st.
 * Threads: any thread.
 */
const struct sym *syms__find(const struct symtab *st, const char *name);

/* Releases @st and everything it points to. Accepts NULL. Threads: the owner. */
void syms__free(struct symtab *st);

/*
 * Writes to @buf (size @len) a path through which THIS process can open the
 * main executable of process @pid, for syms__load() and for attaching
 * uprobes (which bind to the inode). In order of preference:
 *   1. the target of /proc/PID/exe when that path reaches the same inode
 *      here (the usual case: a readable path for reports),
 *   2. /proc/PID/root + that target (a process in another mount namespace,
 *      a container, or a chroot),
 *   3. /proc/PID/exe itself (executable deleted or replaced since exec).
 * Every candidate is checked by device and inode against /proc/PID/exe.
 * Returns 0, or -ESRCH (no such process), -EACCES (not allowed to inspect
 * it), -ENOENT (a kernel thread: no executable), -ENAMETOOLONG (@buf too
 * small), -EINVAL (pid <= 0, NULL @buf or @len 0).
 * Memory: writes only into @buf. Threads: any thread.
 */
int syms__resolve_exe(pid_t pid, char *buf, size_t len);

#endif /* USER_SYMS_H */
