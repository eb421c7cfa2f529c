/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The calling-context tree as a pprof profile (--pprof FILE): Google's
 * profile.proto (the schema of Debian's golang-github-google-pprof-dev,
 * compiled with protoc-c at build time), gzipped, as `go tool pprof`,
 * Pyroscope, Parca and Grafana read it. One sample per context: its
 * stack of functions (leaf first), and its self values: calls, wall time,
 * on-CPU time when measured. Main thread, after the run.
 */
#ifndef USER_CLI_PPROF_H
#define USER_CLI_PPROF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzers/cct.h"

/*
 * Encode tree t (names from ctx; cpu: on-CPU times were measured) as a
 * gzipped profile into f. binary names the mapping; duration_ns the run.
 * Returns 0 or -errno (-ENOMEM, -EIO).
 */
int pprof__write(FILE *f, const struct cct_tree *t, const struct an_ctx *ctx, bool cpu,
		 const char *binary, uint64_t duration_ns);

#endif /* USER_CLI_PPROF_H */
