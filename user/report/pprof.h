/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The calling-context tree as a pprof profile (--pprof FILE): Google's
 * profile.proto (the schema of Debian's golang-github-google-pprof-dev,
 * compiled with protoc-c at build time), gzipped, as `go tool pprof`,
 * Pyroscope, Parca and Grafana read it. One sample per context: its
 * stack of functions (leaf first), and its self values: calls, wall time,
 * on-CPU time when measured. A function's file is its source file where
 * DWARF told (an_ctx.src), else its binary; its start line and its
 * location's line the line of its name; a location's address is the
 * function's link-time entry address in the mapping of its binary (path,
 * build id, the address range of its traced functions and the matching
 * file offset). Main thread, after the run.
 */
#ifndef USER_CLI_PPROF_H
#define USER_CLI_PPROF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzers/cct.h"

/*
 * Encode tree t (names and places from ctx; cpu: on-CPU times were
 * measured) as a gzipped profile into f. binary names the one mapping when
 * ctx has no binaries (a recording of format 1); duration_ns the run.
 * Returns 0 or -errno (-ENOMEM, -EIO).
 */
int pprof__write(FILE *f, const struct cct_tree *t, const struct an_ctx *ctx, bool cpu,
		 const char *binary, uint64_t duration_ns);

#endif /* USER_CLI_PPROF_H */
