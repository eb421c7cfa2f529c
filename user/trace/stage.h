/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Re-staging: the loader's events, drained from the kernel's per-CPU rings,
 * go into per-processor CAB buffers (cab/cab.h, struct cab_pp), one per CPU,
 * in chunks that each hold consecutive records of one thread and are headed
 * by its thread id and the sequence number of their first record
 * (dissertation section 2.4.3), and tagged with the thread's process id
 * (struct cab_chunk's tag: the runner's per-process analysis). The loader thread is the only producer; the
 * analyzer threads (pipeline/runner.h) are the consumers.
 */
#ifndef USER_STAGE_H
#define USER_STAGE_H

#include <stdint.h>

#include "cab/cab.h"
#include "cabbpf_event.h"

struct stage;

/* Returns 0 and *out (caller frees with stage__free) or -errno. */
int stage__new(unsigned ncpus, const struct cab_pp_opts *o, struct stage **out);

/* The ncpus buffers, for the analyzers. Owned by the stage. Any thread. */
struct cab_pp **stage__bufs(struct stage *s);

/* [loader thread] Append one event that came from CPU cpu's ring: a call
 * event, or (kind CABBPF_EV_IO) a struct cabbpf_io_event read through e.
 * Returns 0 or -ENOMEM; or -EIO from the test hook
 * CABBPF_TEST_FAIL_STAGING=N (compiled in, armed only by the environment:
 * the N+1st push fails; see also trace.h's hooks). */
int stage__push(struct stage *s, unsigned cpu, const struct cabbpf_event *e);

/* [loader thread] Publish every partly filled chunk so the analyzers see
 * recent events without waiting for a chunk to fill. */
void stage__flush(struct stage *s);

/* [loader thread] Flush and close every buffer: no more events. */
void stage__close(struct stage *s);

/* [any] Events pushed so far (call and I/O events). */
uint64_t stage__events(const struct stage *s);
/* [any] Of those, I/O events. */
uint64_t stage__io_events(const struct stage *s);
/* Of those, GUARD events (user/trace/guard.h) and EXEC events: neither calls
 * nor I/O. */
uint64_t stage__guard_events(const struct stage *s);
/* [any] Of those, CABBPF_EV_SCHED events (off-CPU intervals): not calls. */
uint64_t stage__sched_events(const struct stage *s);
/* [any] Of those, CABBPF_EV_CPU_SAMPLE events (--times sampled): not calls. */
uint64_t stage__sample_events(const struct stage *s);
/* The last execve's executable and caller. */
struct stage_exec {
	uint32_t dev;	 /* device, the kernel's encoding: major << 20 | minor */
	uint64_t ino;	 /* inode number */
	uint32_t thread; /* the thread that called it when not the main one, else 0 */
};

/* [any] EXEC events of execve calls the target made (not those of threads
 * another's execve killed), and the last one's in *last (if not NULL). */
uint64_t stage__execs(const struct stage *s, struct stage_exec *last);

/* Count the entry events of function fid from now on (one, for the
 * check that a launched program's main was seen: user/modes/ftrace_report.c);
 * stage__watched says how many. Same thread as stage__push. */
void stage__watch(struct stage *s, uint32_t fid);
uint64_t stage__watched(const struct stage *s);

/* Free; NULL is fine. Only after the analyzers are done with the buffers. */
void stage__free(struct stage *s);

#endif /* USER_STAGE_H */
