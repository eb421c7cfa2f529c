/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Loading BPF objects with messages that say what failed. libbpf speaks
 * through one print callback (bpfload__print, installed by main): outside
 * a load its warnings reach stderr and its chatter only with -v; during a
 * load begun with bpfload__begin its warnings are kept (printed as they
 * come with -v only), so that a load that fails and falls back to another
 * variant prints nothing, and one that fails for good is explained in a few
 * lines by bpfload__explain: "the kernel refused BPF program NAME" with
 * the verifier's last lines (a refusal as root is not "permission
 * denied"), or libbpf's own reason (a kfunc or a field this kernel lacks).
 *
 * Threads: the capture is per thread (a guard loads its object on its
 * tracer thread); begin and end on the thread that loads.
 */
#ifndef USER_KERNEL_BPFLOAD_H
#define USER_KERNEL_BPFLOAD_H

#include <stdarg.h>
#include <stddef.h>
#include <bpf/libbpf.h>

/* What libbpf said during one load (owned by the caller, on its stack). */
struct bpfload_log {
	char *buf; /* malloc'd, NUL-terminated; NULL when nothing was said */
	size_t len, cap;
	struct bpfload_log *outer; /* the capture this one interrupted */
};

/* libbpf's print callback (libbpf_set_print). Any thread. */
int bpfload__print(enum libbpf_print_level level, const char *fmt, va_list ap);

/* Keep what libbpf says on this thread in *l until bpfload__end. */
void bpfload__begin(struct bpfload_log *l);
/* Stop keeping (the log stays readable until bpfload__free). */
void bpfload__end(struct bpfload_log *l);
/* Free what *l holds; NULL is fine. */
void bpfload__free(struct bpfload_log *l);

/*
 * Log (error) why loading what (e.g. "the function-tracing BPF object")
 * failed with err: the refused program and the verifier's last lines, or
 * libbpf's last words, or the errno. The whole log was printed already
 * with -v. Any thread.
 */
void bpfload__explain(const struct bpfload_log *l, const char *what, int err);

/* The program a failed load's log names ("prog 'NAME': ..."), copied into
 * name (size len); "" when none. For the tests and bpfload__explain. */
void bpfload__refused_prog(const char *log, char *name, size_t len);

#endif /* USER_KERNEL_BPFLOAD_H */
