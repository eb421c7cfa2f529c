/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The "callgraph" analyzer (struct analyzer_ops analyzer_callgraph): how
 * often each caller called each callee, in total and per thread. The caller
 * is the innermost live frame on the thread's shadow stack, or AN_ROOT
 * ("<root>") when the stack was empty.
 *
 * JSON key written: "callgraph" (docs/json-schema.md).
 *
 * The query functions read an instance (from runner__analyzer() or
 * an_set__state()) after the run; they return 0 for unknown edges.
 * Thread: the one that owns the instance, or any once the run is over.
 */
#ifndef ANALYZERS_CALLGRAPH_H
#define ANALYZERS_CALLGRAPH_H

#include <stddef.h>
#include <stdint.h>

/* Calls from caller (fid or AN_ROOT) to callee, all threads. */
uint64_t callgraph__edge(const void *state, uint32_t caller, uint32_t callee);
/* The same, made by thread tid only. */
uint64_t callgraph__thread_edge(const void *state, uint32_t tid, uint32_t caller, uint32_t callee);
/* Distinct caller -> callee edges. */
size_t callgraph__nedges(const void *state);

#endif /* ANALYZERS_CALLGRAPH_H */
