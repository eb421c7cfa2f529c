/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The "io" analyzer (struct analyzer_ops analyzer_io): external input and
 * output per function activation (Coppa et al., aprof-trms, section 4.3). Every I/O system
 * call the thread completes is charged, in program order, to the functions
 * live on its shadow stack at that moment:
 *   - inclusive ("in_bytes", "out_bytes"): once to every function with a live
 *     activation, descendants' I/O included; a recursive function is charged
 *     once per I/O, not once per live activation;
 *   - self: to the innermost live activation only;
 *   - with no traced function live, to "outside".
 * Input: read, readv, pread64, preadv, preadv2, recvfrom, recvmsg, recvmmsg,
 * msgrcv; output: write, writev, pwrite64, pwritev, pwritev2, sendto,
 * sendmsg, sendmmsg, msgsnd. Calls count every completion (failed ones
 * too); bytes count what the kernel reported as moved.
 * Also totals per (syscall, fd kind) and per thread.
 *
 * JSON key written: "io" (docs/json-schema.md).
 * Queries read an instance after the run (runner__analyzer(r, "io")).
 */
#ifndef ANALYZERS_IO_H
#define ANALYZERS_IO_H

#include <stdint.h>

struct io_totals {
	uint64_t in_bytes, out_bytes;
	uint64_t in_calls, out_calls;
	uint64_t self_in_bytes, self_out_bytes; /* functions only */
};

struct io_sc_totals {
	uint64_t calls;	      /* completed calls, failed ones included */
	uint64_t errors;      /* of calls: returned an error */
	uint64_t bytes;	      /* moved */
	uint64_t req;	      /* requested */
	uint64_t short_calls; /* successful, fewer bytes than requested */
};

/* Inclusive and self I/O of function fid (zeroed for an unknown fid). */
void io__fn(const void *state, uint32_t fid, struct io_totals *t);
/* I/O made with no traced function live. */
void io__outside(const void *state, struct io_totals *t);
/* Totals of syscall sc (enum cabbpf_sc) on fds of kind fdkind. */
void io__sc(const void *state, unsigned sc, unsigned fdkind, struct io_sc_totals *t);
/* I/O of thread tid (self fields unused). */
void io__thread(const void *state, uint32_t tid, struct io_totals *t);
/* I/O events analyzed. */
uint64_t io__events(const void *state);

#endif /* ANALYZERS_IO_H */
