/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/lang — which language runtimes an ELF binary carries, where that
 * decides how it may be probed.
 *
 * Go: the runtime walks goroutine stacks (garbage collection, stack
 * growth, tracebacks), copies them to grow them, and checks every return
 * address it finds against its own tables. A return probe replaces a
 * return address with the kernel's trampoline, so the runtime aborts
 * ("unknown caller pc") as soon as it walks such a frame: Go programs get
 * entry probes only (user/main.c). V8 (node, and whatever embeds it)
 * likewise: its stack walker (garbage collection, exceptions, stack traces,
 * deoptimisation) takes a frame's return address for the code that frame
 * runs, and the trampoline is no code it knows ("abort: Invalid bytecode",
 * SIGSEGV, found tracing node's Builtins_*, its v8::internal::Runtime_*
 * functions or Builtins_JSEntry alone). The JVM (HotSpot) too: its stack
 * walker (garbage collection, deoptimisation, exceptions) reads the return
 * address of a runtime function that generated code called, and finds no
 * code blob at the trampoline (found tracing libjvm.so's OptoRuntime::*:
 * "ShouldNotReachHere" in frame::oops_do, and SharedRuntime::*: SIGSEGV in
 * frame::sender; both abort the JVM). OCaml's native code too: its garbage
 * collector finds each frame's layout by the frame's return address, in
 * tables the compiler wrote (SIGSEGV under the default selection). C++ and
 * Rust: their unwinders read return addresses too (exceptions, panics),
 * which user/trace/guard.h handles.
 *
 * Detection reads section names and symbols with libelf, never code:
 *   Go    a section .go.buildinfo or .gopclntab (both survive `go build
 *         -ldflags=-s`), or a defined symbol runtime.main or runtime.goexit;
 *   C++   the symbol __gxx_personality_v0, defined (static libstdc++) or
 *         referenced (every C++ program with exceptions or destructors
 *         links it, even when stripped: it stays in .dynsym);
 *   Rust  the symbol rust_eh_personality or any symbol starting __rust_
 *         (__rust_alloc, __rust_start_panic, ...): from .symtab, so a
 *         stripped Rust binary is not recognised;
 *   V8    a defined symbol Builtins_JSEntry (.symtab) or v8::Isolate::New
 *         (_ZN2v87Isolate3NewERKNS0_12CreateParamsE, the embedding API's
 *         first call, exported: found in a stripped node or libnode.so;
 *         a native addon only imports it);
 *   JVM   a defined symbol JNI_CreateJavaVM (exported by libjvm.so, which
 *         the java launcher loads; a JNI library or an embedding program
 *         only imports it);
 *   OCaml a defined symbol caml_start_program (the native-code runtime's
 *         entry into OCaml code, in every ocamlopt program; the bytecode
 *         interpreter ocamlrun, plain C, has none).
 * Several may hold at once (a Go program with cgo and C++, Rust linking
 * C++).
 *
 * Threads: every function here may be called from any thread.
 */
#ifndef USER_LANG_H
#define USER_LANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lang_info {
	bool go;
	bool cxx;
	bool rust;
	bool v8;
	bool jvm;
	bool ocaml;
	/* What marked the binary as Go (".go.buildinfo", ".gopclntab",
	 * "runtime.main", "runtime.goexit"), for debug output; NULL when not
	 * Go. A static string. */
	const char *go_mark;
};

/*
 * Inspects the ELF file at path and fills *out (zeroed first).
 * Returns 0, or -EINVAL (NULL argument), -ENOEXEC (not an ELF file libelf
 * can read, or not a regular file), -ENOMEM, or the -errno of open().
 * Memory: nothing to free; out->go_mark is static.
 * Threads: any thread; concurrent calls are fine.
 */
int lang__detect(const char *path, struct lang_info *out);

/*
 * The runtime in *li whose stack walker reads its frames' return addresses
 * (so the binary may get entry probes only): "Go", "V8 (JavaScript)",
 * "JVM (Java)" or "OCaml", or NULL when there is none.
 * Memory: a static string. Threads: any thread.
 */
const char *lang__walker(const struct lang_info *li);

/* "an" before a name lang__walker gives that starts with a vowel
 * ("an OCaml program"), else "a". Static strings. Threads: any thread. */
const char *lang__article(const char *name);

/*
 * Go's stack-bound check at the start of a function compiled by gc (Go
 * >= 1.17, amd64, register ABI: R14 holds the goroutine), recognised
 * byte for byte in code[0..len) (the function's first bytes):
 *     cmp  %rsp, 0x10(%r14)                        frame <= 128 bytes
 *     lea  -N(%rsp), %r12; cmp %r12, 0x10(%r14)    frame <= 4 KiB
 *     mov  %rsp, %r12; sub $N, %r12; jb SLOW;
 *          cmp %r12, 0x10(%r14)                    larger frames
 * (or 0x18(%r14), stackguard1), each followed by jbe SLOW. SLOW calls
 * runtime.morestack and then jumps back to the function's FIRST byte, so
 * a probe there fires twice for a call that had to grow the stack (or was
 * asked to yield through the stack guard); past the check it fires once.
 * The check reads rsp and never moves it.
 * Returns the length of the check including the last jbe (the offset of
 * the first instruction of the function's body), or 0 when code does not
 * start with one. *slow receives SLOW as an offset from code[0] (it is
 * not checked to lie inside the function; user/plan verifies what SLOW
 * does before relying on it).
 * Memory: reads code[0..len) only. Threads: any thread.
 */
size_t lang__go_stack_check(const uint8_t *code, size_t len, int64_t *slow);

#endif /* USER_LANG_H */
