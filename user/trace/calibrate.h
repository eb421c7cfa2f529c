/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a traced call costs on this machine, measured at start-up: a child
 * of cabbpf calls three functions of cabbpf's own text, one per entry
 * class the plan uses (a 5-byte nop, an emulated push, a single-stepped
 * mov: user/elf/insn.h), a few hundred times each (best of 3 rounds)
 * untraced, then with the real probe programs on them (entry and return,
 * timestamps as the run has them), and the difference per call (in the
 * child's CPU time, which holds the traps but not time lost to other
 * work) is the class's cost. The calling-context tree subtracts it from
 * its times (compensated times), so a parent's time no longer includes
 * the probes of the calls below it. ~130 ms (a BPF load, the traced
 * calls, the detach), so the figures are kept in /run/cabbpf/probe-costs
 * (root's, 0700; never written through a link: common/outfile.h) for
 * this boot and this cabbpf binary, and reused for 30 minutes:
 * CABBPF_RECALIBRATE=1 measures again. Main thread only.
 */
#ifndef USER_TRACE_CALIBRATE_H
#define USER_TRACE_CALIBRATE_H

#include <stdbool.h>

#include "user/elf/insn.h"
#include "user/trace/progress.h"

/*
 * What a traced call leaves in the program's own user-mode time once its
 * traps are over, as the time sampler sees it (--times sampled,
 * docs/times.md): the first instructions after a trap run slower (the
 * branch predictors and caches it cooled), ns per call in the callee
 * (in_ns: after its entry's trap) and in the caller (out_ns: after its
 * return's), and the standard error of each (the samples are counted).
 * Measured on the calibration functions (a few instructions each).
 */
struct calib_aftermath {
	double in_ns, out_ns;
	double in_sd_ns, out_sd_ns;
};

/*
 * Measure the cost in ns of one traced call (entry and return probes) for
 * each entry class into cost_ns[] (INSN_REFUSED: 0), and into leak[].ns
 * how much of it the progress clock (user/trace/progress.h) counts as the
 * target's own user time: none where traps are kernel time, as they
 * should be; ~20% on a paravirtualized (PVM) guest, where the ticks that
 * land in a trap's way in and out look like user mode (0 when there is no
 * progress clock), and into leak[].sd_ns that figure's standard error:
 * the clock is a count of 1 ms ticks, and the ~100 ms a class is run for
 * hold ~15 ticks of leak, +-sqrt(15) (+-25%; measured: 781 to 1,842 ns for
 * one class on one host), and into aft[] the aftermath the time sampler
 * sees (struct calib_aftermath; 0 when it could not sample). no_times:
 * the probes take no timestamp, as in
 * the run. Returns 0, or -errno after logging why (the caller reports raw
 * times only); -ENODATA when the probes delivered (almost) none of the
 * calls made: this kernel would give an empty trace (the caller stops).
 */
int calibrate__probe_costs(bool no_times, double cost_ns[INSN__NCLASS],
			   struct progress_leak leak[INSN__NCLASS],
			   struct calib_aftermath aft[INSN__NCLASS]);

#endif /* USER_TRACE_CALIBRATE_H */
