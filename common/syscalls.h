/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The names of what the I/O tracer sees (include/cabbpf_event.h's enums):
 * system calls and fd kinds, as the reports print them. Shared by the I/O
 * analyzer and the --io mode. Pure; any thread.
 */
#ifndef COMMON_SYSCALLS_H
#define COMMON_SYSCALLS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cabbpf_event.h"

struct json;

/* Name of a syscall (enum cabbpf_sc) and of an fd kind (enum
 * cabbpf_fdkind): static strings, "?" when out of range; never NULL. */
const char *syscalls__name(unsigned sc);
const char *syscalls__fdkind_name(unsigned kind);
/* The text tables' name: syscalls__name, with "<" (input side) or ">"
 * (output side) after a call that can be either (sendfile, splice,
 * copy_file_range, vmsplice). Static string, never NULL. */
const char *syscalls__label(unsigned sc);

/* One cell of the syscall x fd-kind table: the counts the I/O analyzer and
 * the --io mode both keep. hist_req/hist_ret are CABBPF_HIST_BUCKETS
 * buckets, or NULL where the writer keeps no histograms. */
struct syscalls_cell {
	uint64_t calls, errors, bytes, req, short_calls;
	const __u64 *hist_req, *hist_ret; /* as in struct cabbpf_iostat_val */
};

/* Fills *c with cell (sc, fdkind) of the caller's table (ctx). */
typedef void (*syscalls_cell_fn)(const void *ctx, unsigned sc, unsigned fdkind,
				 struct syscalls_cell *c);

/*
 * The one writer of the syscall x fd-kind table: writes key "syscalls" into
 * the open JSON object w, an array of {"syscall", "direction", "fd_kind",
 * "calls", "errors", "bytes", "requested", "short"[, "hist_requested",
 * "hist_returned"]} for every cell with calls, in enum order
 * (docs/json-schema.md). The caller's thread.
 */
void syscalls__json_table(struct json *w, syscalls_cell_fn cell, const void *ctx);

/* The same table as text on f: a heading line (SYSCALL FD_KIND CALLS BYTES
 * REQUESTED SHORT ERRORS), then a line per cell with calls, in enum order;
 * lb: the counts are lower bounds (marked +). The caller's thread. */
void syscalls__text_table(FILE *f, syscalls_cell_fn cell, const void *ctx, bool lb);

#endif /* COMMON_SYSCALLS_H */
