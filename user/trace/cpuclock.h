/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A CPU clock on every CPU (the perf cpu-clock software event: this VM has
 * no hardware counters) that runs a BPF perf_event program each period
 * the CPU spends in user mode, or in either mode. The progress counter
 * (progress.h: user mode) and the time sampler (bpf/trace.bpf.c
 * on_cpu_sample: both, so that a program's system calls are its time)
 * are both driven by one.
 *
 * Threads: the loader's; one caller at a time per clock.
 */
#ifndef USER_TRACE_CPUCLOCK_H
#define USER_TRACE_CPUCLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct bpf_program;
struct cpuclock;

/* Attach prog, a loaded perf_event program, to a cpu-clock of period_ns
 * on every online CPU: user mode only, or kernel mode too when kernel.
 * Returns 0 and *out (the caller's, free with cpuclock__free), or -errno
 * (nothing attached, not logged: the caller says what goes without it). */
int cpuclock__attach(struct bpf_program *prog, uint64_t period_ns, bool kernel,
		     struct cpuclock **out);

/* Detach and free; NULL is fine. */
void cpuclock__free(struct cpuclock *c);

#endif /* USER_TRACE_CPUCLOCK_H */
