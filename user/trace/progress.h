/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The target's progress in user-mode CPU time, measured apart from its
 * probes' cost (bpf/progress.bpf.c): a 1 ms CPU clock on every CPU,
 * counting the ticks that land in the target in user mode. Sampling
 * windows are measured in it, so a CPU-bound program that its probes slow
 * down is not under-estimated. Statistical: a count of N ticks is N ms
 * +- sqrt(N) ticks. Costs 1,000 timer interrupts a second per CPU: at
 * 100 us (10,000 a second) the interrupts alone slowed a CPU-bound target
 * by 25% on this VM (bench/sampling_fractions.sh: 1.29x at 1% sampling,
 * 1.05x at 1 ms).
 * Main thread only.
 */
#ifndef USER_TRACE_PROGRESS_H
#define USER_TRACE_PROGRESS_H

#include <stdint.h>
#include <sys/types.h>

#define PROGRESS_TICK_NS 1000000ULL

struct progress;

/* Start counting process pid's user-mode ticks. Returns 0 and *out (free
 * with progress__free), or -errno after logging why (no CPU clock event:
 * the caller falls back to wall time). */
int progress__open(pid_t pid, struct progress **out);

/* Ticks so far (each PROGRESS_TICK_NS of the target's user-mode time). */
uint64_t progress__ticks(const struct progress *p);

/* Stop and free; NULL is fine. */
void progress__free(struct progress *p);

#endif /* USER_TRACE_PROGRESS_H */
