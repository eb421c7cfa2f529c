/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The "count" analyzer (struct analyzer_ops analyzer_count): calls per
 * function, in total and per thread, and for frames closed by their return
 * event the inclusive and self time.
 *
 * Inclusive time is summed only over non-recursive activations (a recursive
 * activation's time is already inside its outer activation's), so it never
 * exceeds the wall time spent in the function. Self time is summed over all
 * matched activations. Frames whose return went missing count as calls but
 * add no time.
 *
 * JSON keys written: "functions" and "threads" (docs/json-schema.md).
 *
 * The query functions read an instance (from runner__analyzer() or
 * an_set__state()) after the run; they return 0 for unknown ids.
 * Thread: the one that owns the instance, or any once the run is over.
 */
#ifndef ANALYZERS_COUNT_H
#define ANALYZERS_COUNT_H

#include <stddef.h>
#include <stdint.h>

struct count_time {
	uint64_t matched; /* activations closed by a return event */
	uint64_t incl_ns; /* inclusive time, non-recursive activations */
	uint64_t self_ns; /* self time, all matched activations */
	uint64_t unwound; /* activations unwound by an exception (no time) */
	uint64_t switched; /* activations whose return a stack switch hid */
	/* --times sampled: CPU-clock samples with the function on top of
	 * the stack (self) or live (incl: non-recursive activations), all
	 * activations however they closed */
	uint64_t samples_self;
	uint64_t samples_incl;
	/* of what they stand for, the probes' aftermath (an_return.aft_*) */
	uint64_t aft_self_ns;
	uint64_t aft_incl_ns;
};

/* Calls of fid, all threads. */
uint64_t count__calls(const void *state, uint32_t fid);
/* Calls of fid made by thread tid. */
uint64_t count__thread_calls(const void *state, uint32_t tid, uint32_t fid);
/* All calls made by thread tid. */
uint64_t count__thread_total(const void *state, uint32_t tid);
/* Threads that made at least one call. */
size_t count__nthreads(const void *state);
/* Times of fid into *t (zeroed for an unknown fid). */
void count__time(const void *state, uint32_t fid, struct count_time *t);

#endif /* ANALYZERS_COUNT_H */
