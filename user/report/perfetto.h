/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --timeline FILE: the call timeline in Chrome's Trace Event format
 * (complete "X" events, instant "i" events, thread-name metadata), which
 * ui.perfetto.dev and chrome://tracing open, from the events the
 * timeline analyzer hands over (analyzers/timeline.h).
 */
#ifndef USER_REPORT_PERFETTO_H
#define USER_REPORT_PERFETTO_H

#include <stdint.h>
#include <stdio.h>

/*
 * Write the timeline analyzer's merged instance (state) as a Trace Event
 * JSON object into f: events sorted by thread
 * and time (a parent before the children it contains), times in
 * microseconds from the first event (ns kept as decimals), pid and the
 * process name comm for every event. Returns 0, -ENOMEM or -EIO. Events
 * kept and cut into *kept, *cut (if not NULL). One thread, after the run.
 */
int perfetto__write(const void *state, FILE *f, int pid, const char *comm, uint64_t *kept,
		    uint64_t *cut);

#endif /* USER_REPORT_PERFETTO_H */
