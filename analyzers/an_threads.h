/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An analyzer instance's per-thread states: tid -> an object of the
 * analyzer's, made on a thread's first event, the last one looked up kept
 * (a chunk holds one thread's events, so most lookups are that one).
 * Every analyzer of analyzers/ keeps its threads so.
 *
 * Threads: an instance's, like the analyzer state it is part of (one
 * analysis thread at a time, analyzer.h).
 */
#ifndef ANALYZERS_AN_THREADS_H
#define ANALYZERS_AN_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hmap.h"

struct an_threads {
	struct hmap map; /* tid -> object (a pointer value; 0: none). Iterate
			    with hmap__next; insert through an_threads__get */
	void *last;
	uint32_t last_tid;
};

/*
 * Thread tid's object, made zeroed (size bytes) on first use and then
 * handed to init (may be NULL) with arg: init returns 0, or -errno to
 * refuse it (it is then freed and tid reads as absent). Returns the
 * object, or NULL when memory ran out or init refused (the caller counts
 * the event as lost). The object stays where it is until an_threads__fini.
 */
void *an_threads__get(struct an_threads *t, uint32_t tid, size_t size,
		      int (*init)(void *obj, uint32_t tid, void *arg), void *arg);

/* Thread tid's object, or NULL if it has none. */
void *an_threads__find(const struct an_threads *t, uint32_t tid);

/* Frees every object with free_obj (which frees the object too; NULL:
 * free()), then the map. A zeroed set is fine. */
void an_threads__fini(struct an_threads *t, void (*free_obj)(void *obj));

#endif /* ANALYZERS_AN_THREADS_H */
