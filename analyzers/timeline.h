/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The "timeline" analyzer (struct analyzer_ops analyzer_timeline): every
 * activation as it closed (thread, function, entry time, duration, how it
 * ended) and every I/O call (its time, system call, fd, bytes), kept for
 * --timeline FILE: the call timeline in Chrome's Trace Event format
 * (complete "X" events, instant "i" events, thread-name metadata), which
 * ui.perfetto.dev and chrome://tracing open. Opt-in: selected by
 * --timeline (user/report/views.h), never by the default "every analyzer".
 *
 * Bounded: an instance keeps the first `limit` events it sees (an_ctx
 * timeline_limit; activations in the order they close, children before
 * their parents, and I/O calls), and counts the rest as cut; the merged
 * instance keeps at most `limit` in all. The cut is said in the file's
 * "otherData" and on stderr.
 *
 * JSON key written into the report: "timeline" ({"events", "cut",
 * "limit"}; docs/json-schema.md). Threads: as every analyzer
 * (analyzers/analyzer.h); timeline__write after the run, one thread.
 */
#ifndef ANALYZERS_TIMELINE_H
#define ANALYZERS_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#define TIMELINE_DEFAULT_LIMIT 1000000u

/*
 * Write the merged instance state as a Trace Event JSON object into f:
 * events sorted by thread and time (a parent before the children it
 * contains), times in microseconds from the first event (ns kept as
 * decimals), pid and the process name comm for every event. Returns 0,
 * -ENOMEM or -EIO. Events kept and cut into *kept, *cut (if not NULL).
 */
int timeline__write(const void *state, FILE *f, int pid, const char *comm, uint64_t *kept,
		    uint64_t *cut);

#endif /* ANALYZERS_TIMELINE_H */
