/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cabbpf record: the function tracer's run (user/modes/ftrace.c) with a
 * recorder behind the analysis side. The runner (pipeline/runner.h) hands
 * every CAB chunk it takes to recorder__tap, which appends it, with its
 * thread id and first sequence number, to the recording
 * (user/record/recfmt.h): the analyzers' exact input, so 'cabbpf report'
 * replays it through the same runner. The file is written through
 * common/outfile.h (a temporary file renamed over the path at the end:
 * never through a symlink; an interrupted recording leaves no half file).
 */
#ifndef USER_RECORD_RECORDER_H
#define USER_RECORD_RECORDER_H

#include <stdint.h>

#include "user/report/summary.h"
#include "user/record/recfmt.h"

struct recorder;

/* Open the recording at path (checked by the caller before tracing).
 * Returns 0 and *out (free with recorder__free), or -errno (logged). Main
 * thread. */
int recorder__open(const char *path, struct recorder **out);

/* The target and the function table, before the first chunk. Returns 0 or
 * -errno (logged). Main thread, before the runner starts. */
int recorder__begin(struct recorder *rc, const struct recfmt_meta *m,
		    const struct recfmt_funcs *fn);

/* runner_opts.tap: one chunk. Analyzer threads, concurrently (serialized
 * here). A write error is kept and reported by recorder__finish. */
void recorder__tap(void *rc, uint32_t tid, uint64_t seq, const uint64_t *recs, uint32_t nrec);

/* After the runner joined: the run's summary, the SOURCE block (src: where
 * each function is; NULL: none), the END block, and the file renamed into
 * place; one line on stderr (events, bytes, bytes/event). Returns 0 or
 * -errno (logged: also a tap's earlier write error). Main thread. */
int recorder__finish(struct recorder *rc, const struct summary *sm,
		     const struct recfmt_source *src);

/* Free; an unfinished recording is removed. NULL is fine. */
void recorder__free(struct recorder *rc);

#endif /* USER_RECORD_RECORDER_H */
