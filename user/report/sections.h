/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The analysis' sections of the report: every selected analyzer's own
 * (sec.h: user/report/sec_NAME.c, each analyzer's tables from its column
 * descriptions, common/emit.h), the footnotes on counts
 * that are lower bounds, the returns line, the order and the runner's
 * counters, for the whole run and for each process of a per-process run.
 * The runner hands its results over as data (pipeline/runner.h,
 * runner__analyzer_at and the rest); nothing here writes to it.
 *
 * Thread: the report's (after runner__join).
 */
#ifndef USER_REPORT_SECTIONS_H
#define USER_REPORT_SECTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct json;
struct runner;

/* Every selected analyzer's tables (each followed by a footnote when
 * counts in it are marked as lower bounds), then a line on returns and
 * one on order, to f. Returns 0, -EINVAL (not joined), -ENOMEM or -EIO. */
int sections__text(const struct runner *r, FILE *f);

/* The analyzers' keys ("functions", "threads", "callgraph", ...) and the
 * runner's ("returns", "order_gaps", "order_gap_events", "runner") into
 * the top-level JSON object w has open. Returns 0, -EINVAL (not joined,
 * or w is not inside an object), -ENOMEM or the writer's error. */
int sections__json(const struct runner *r, struct json *w);

/* The same for process i of a per-process run (i < runner__nprocs): its
 * analyzers' tables, its returns line and its event counts as text; its
 * analyzers' keys, "returns", "threads", "events" and "io_events" as
 * JSON. Returns as above (-EINVAL: i out of range). */
int sections__proc_text(const struct runner *r, size_t i, FILE *f);
int sections__proc_json(const struct runner *r, size_t i, struct json *w);

/* The names of the selected analyzers whose counts the loss of events of
 * kind (AN_LOST_CALLS or AN_LOST_IO) made lower bounds, as a JSON array
 * into w (empty when none was lost). Returns 0 or the writer's error. */
int sections__json_lower_bounds(const struct runner *r, struct json *w, unsigned kind);

/* Whether the analyzer named name has a section (user/report/sec.h). */
bool sections__known(const char *name);

#endif /* USER_REPORT_SECTIONS_H */
