/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The target's progress in user-mode CPU time, measured apart from its
 * probes' cost: the ticks of a CPU clock (the time sampler's, or a 1 ms
 * user-mode one) that land in the program's own code, not in the probes'
 * (the xol area) nor delivered late as a probe's trap returned
 * (bpf/trace.bpf.c count_progress, read by trace__progress_ns). Sampling
 * windows are measured in it, so a CPU-bound program that its probes slow
 * down is not under-estimated. Statistical: a count of N ticks is N ms
 * +- sqrt(N) ticks. Costs 1,000 timer interrupts a second per CPU: at
 * 100 us (10,000 a second) the interrupts alone slowed a CPU-bound target
 * by 25% on this VM (bench/sampling_fractions.sh: 1.29x at 1% sampling,
 * 1.05x at 1 ms).
 */
#ifndef USER_TRACE_PROGRESS_H
#define USER_TRACE_PROGRESS_H

#include <stdint.h>

#define PROGRESS_TICK_NS 1000000ULL

/* Ticks below which a run is measured in wall time instead (--sample,
 * --budget): 0.1 s of the target's user-mode time, counted within +-10%
 * (sqrt(N) of N). A noisy progress count is still far better than wall
 * time for a program that computes: there its probes set its pace inside
 * the windows, and an estimate by wall time is low by up to the slowdown
 * they cause (1000x for a 3 ns function probed at ~7 us a call); the
 * windows' spread carries the count's noise into the intervals. A program
 * that mostly waits uses little CPU and is measured by wall time, where
 * its probes do not set its pace. */
#define PROGRESS_MIN_TICKS 100

/* What probes add to the progress clock (the traps' aftermath in the
 * program's own code: user/trace/calibrate.h), per traced call or per
 * probe hit as said where used, and that figure's standard error (the
 * calibration counts ticks): ns. */
struct progress_leak {
	double ns;
	double sd_ns;
};

#endif /* USER_TRACE_PROGRESS_H */
