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
 * "limit"}; docs/json-schema.md). The file is written by
 * user/report/perfetto.c from timeline__events. Threads: as every
 * analyzer (analyzers/analyzer.h); the queries after the run, one thread.
 */
#ifndef ANALYZERS_TIMELINE_H
#define ANALYZERS_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#define TIMELINE_DEFAULT_LIMIT 1000000u

/* How an event ended; I/O events are their own kind. */
enum tl_kind {
	TL_RETURNED, /* matched by its return: exact duration */
	TL_UNWOUND,  /* unwound by an exception */
	TL_SWITCHED, /* left on another stack (coroutine switch) */
	TL_MISSING,  /* no return (longjmp, uretprobe depth limit, sampling) */
	TL_OPEN,     /* still live at the end of the run */
	TL_IO,	     /* an I/O system call (instant) */
};

struct tl_event {
	uint64_t ts;  /* ns: entry (activations) or the syscall's exit (I/O) */
	uint64_t dur; /* ns (activations); I/O: bytes moved << 32 | requested */
	uint32_t tid;
	uint32_t fid; /* function; I/O: syscall << 8 | fdkind */
	int32_t fd;
	uint8_t kind; /* enum tl_kind */
	uint8_t failed;
	uint16_t depth; /* stack depth at entry (ties: the outer first) */
	/* --args, --retval: the call's values as label-value pairs
	 * (callvals__pairs in common/callvals.h; the instance's), or NULL */
	char *vals;
};

/* What the instance kept and left out: its events (kept), its limit,
 * those cut by it, those it had no memory for, and the calls kept without
 * their values (no memory). One thread, after the run. */
struct timeline_counts {
	uint64_t kept, limit, cut, nomem, nomem_vals;
};
void timeline__counts(const void *state, struct timeline_counts *c);

/* The instance's events (*n of them, in the order they were kept: sort
 * a copy to show them), its limit and the events cut (by the limit or
 * out of memory). Pointers into the instance. One thread, after the run. */
const struct tl_event *timeline__events(const void *state, size_t *n, uint64_t *limit,
					uint64_t *cut);

/* The names the instance reports with. */
struct an_ctx;
const struct an_ctx *timeline__ctx(const void *state);

/* "returned", "unwound", "switched", "missing", "open", "io": how an event
 * ended (enum tl_kind). */
const char *timeline__kind_name(unsigned kind);

#endif /* ANALYZERS_TIMELINE_H */
