/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The io analyzer's instance (not a public API; the analyzer is described
 * in io.h): its totals, for io.c, which adds them up, and for its section
 * of the report (user/report/sec_io.c), which reads a merged instance
 * after the run.
 * Thread: the instance's owner, or any once the run is over.
 */
#ifndef ANALYZERS_IO_INT_H
#define ANALYZERS_IO_INT_H

#include <stdint.h>

#include "analyzers/an_threads.h"
#include "analyzers/analyzer.h"
#include "analyzers/io.h"
#include "cabbpf_event.h"

struct ioan {
	const struct an_ctx *ctx;
	struct io_totals *fn; /* [nfuncs] */
	struct io_totals outside;
	struct io_sc_totals sc[CABBPF_SC__MAX][CABBPF_FD__MAX];
	struct an_threads threads; /* tid -> struct io_totals */
	uint64_t events;
	uint64_t bad;	/* unknown syscall or fd kind: counted, not charged */
	uint64_t nomem; /* per-thread totals not recorded */
};

#endif /* ANALYZERS_IO_INT_H */
