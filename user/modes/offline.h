/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading a recording (user/record/recfmt.h) back: 'cabbpf report FILE'
 * feeds its chunks, in the order the live analyzers took them, through the
 * same runner, shadow stacks and analyzers (pipeline/runner.h,
 * runner__feed) and writes the same report, JSON and views as a live run;
 * 'cabbpf dump FILE' prints its events one a line. Main thread.
 */
#ifndef USER_MODES_OFFLINE_H
#define USER_MODES_OFFLINE_H

#include <stdio.h>

#include "user/cli/opts.h"

/* The report of o->input_path, as o asks (-a, -o, --json, -q, views).
 * Returns 0, or -errno after saying why (not a recording, corrupt or
 * truncated with the byte position, an output that could not be written). */
int offline__report(const struct opts *o);

/* Every event of o->input_path on out, in recording order. Returns as
 * offline__report. */
int offline__dump(const struct opts *o, FILE *out);

/* The call flow of o->input_path (analyzers/replay.h) on stdout or -o,
 * as o filters it (-F, -N, --depth, --slower-than, --time-range, --tid),
 * a summary line on stderr. Returns as offline__report. */
int offline__replay(const struct opts *o);

struct recfmt_reader;
struct recfmt_meta;
struct recfmt_summary;
struct summary;

/* The report's summary (user/report/report.h) from a recording's META and
 * SUMMARY blocks; sm points into them. */
void offline__summary(const struct recfmt_meta *m, const struct recfmt_summary *s,
		      struct summary *sm);

/* Open path and read its META and FUNCS blocks (user/record/recfmt.h).
 * Returns 0 or -errno (said); *f and *r are the caller's to fclose and
 * recfmt__reader_free either way (NULL when not opened). */
int offline__open(const char *path, FILE **f, struct recfmt_reader **r);

/* Read path through to its end, feeding nothing: 0 for a whole, valid
 * recording, else -errno (said). For tests and the fuzz harness. */
int offline__check(const char *path);

#endif /* USER_MODES_OFFLINE_H */
