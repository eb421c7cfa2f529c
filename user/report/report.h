/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The run's report: the loader's summary (summary.h: target, duration,
 * events, loss) around the analyzers' results, which the runner holds.
 * The report reads the runner, never writes it: the mode hands it the
 * loss and the traced count first (runner__set_lost, runner__set_traced).
 * Text to stdout, JSON to a file, the one-line summary to stderr. Main
 * thread, after the analyzers have joined.
 */
#ifndef USER_REPORT_H
#define USER_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "user/report/summary.h"

struct runner;

/* Human report on out. */
void report__text(FILE *out, const struct summary *s, struct runner *r);

/* The human report into path (-o; NULL = stdout), written as --json is
 * (never through a symlink). Returns 0 or -errno. */
int report__text_to(const char *path, const struct summary *s, struct runner *r);

/* JSON report into path ("-" = stdout), s->outputs listed in it. Returns 0
 * or -errno (a failed write's own: ENOSPC...). */
int report__json(const char *path, const struct summary *s, struct runner *r);

/* One line on stderr: events, events/s, lost. */
void report__summary_line(const struct summary *s);

#endif /* USER_REPORT_H */
