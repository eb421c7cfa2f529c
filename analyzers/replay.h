/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The "replay" analyzer (struct analyzer_ops analyzer_replay): a thread's
 * calls as an indented flow, in program order, with each call's duration,
 * as `uftrace replay` prints a trace; the I/O system calls inside the
 * activations that made them. cabbpf replay FILE runs it over a recording
 * (user/modes/offline_replay.c); it is no use live (the flow of a running
 * program would mix with its output), and refuses to start without
 * options.
 *
 * It streams: a line is written as soon as what it says is known. A call
 * is held back (its entry not yet written) only while it could still turn
 * out to be a leaf ("f();" with its duration, on one line) or shorter than
 * --slower-than: until the thread's next event, or until it has lasted
 * that long. What is held is the thread's open calls and the I/O calls
 * inside them (at most REPLAY_IO_HELD a thread: past that, the count of
 * those not shown): memory stays bounded by the stack depth whatever the
 * recording's length.
 *
 * Filters: -F GLOB shows the calls of the functions matched and what they
 * call; -N GLOB hides the calls matched and what they call; --depth N
 * shows N levels (of the calls shown); --slower-than D hides calls shorter
 * than D (and so everything inside them); --time-range shows the calls
 * that began in it (their insides, if they began in it too); --tid T one
 * thread. I/O calls outside every traced call (a dynamic loader's reads)
 * are shown unless -F or --slower-than asks for calls.
 *
 * Thread: as every analyzer (analyzer.h); cabbpf replay runs one analyzer
 * thread, so lines come out in the order the recording holds the events.
 */
#ifndef ANALYZERS_REPLAY_H
#define ANALYZERS_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* I/O calls held per thread while their call is held back. */
#define REPLAY_IO_HELD 256

struct replay_opts {
	FILE *out;		 /* where the flow goes */
	const char *const *only; /* -F globs (fnmatch on report names) */
	size_t nonly;
	const char *const *hide; /* -N globs */
	size_t nhide;
	unsigned depth;		 /* --depth: levels shown; 0: all */
	uint64_t min_ns;	 /* --slower-than: shorter calls hidden; 0: none */
	uint64_t from_ns, to_ns; /* --time-range, ns from the first event; to 0: no end */
	uint32_t tid;		 /* --tid; 0: every thread */
};

/* What a replay wrote, of what it read. */
struct replay_counts {
	uint64_t calls, shown; /* calls ended; of them, written */
	uint64_t io, io_shown; /* I/O calls; written */
	uint64_t io_unheld;    /* not written: past REPLAY_IO_HELD in a held call */
	uint64_t nomem;	       /* events not followed (out of memory) */
};

/* The counts of an instance (merged: runner__analyzer(rn, "replay")).
 * After the run. */
void replay__counts(const void *state, struct replay_counts *c);

#endif /* ANALYZERS_REPLAY_H */
