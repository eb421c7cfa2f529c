/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a traced call costs on this machine, measured at start-up: a child
 * of cabbpf calls three functions of cabbpf's own text, one per entry
 * class the plan uses (a 5-byte nop, an emulated push, a single-stepped
 * mov: user/elf/insn.h), 2,000 times each untraced, then with the real
 * probe programs on them (entry and return, timestamps as the run has
 * them), and the difference per call (in the child's CPU time, which
 * holds the traps but not time lost to other work) is the class's cost. The calling-
 * context tree subtracts it from its times (compensated times), so a
 * parent's time no longer includes the probes of the calls below it.
 * ~50-150 ms. Main thread only.
 */
#ifndef USER_TRACE_CALIBRATE_H
#define USER_TRACE_CALIBRATE_H

#include <stdbool.h>

#include "user/elf/insn.h"

/*
 * Measure the cost in ns of one traced call (entry and return probes) for
 * each entry class into cost_ns[] (INSN_REFUSED: 0). no_times: the probes
 * take no timestamp, as in the run. Returns 0, or -errno after logging why
 * (the caller reports raw times only).
 */
int calibrate__probe_costs(bool no_times, double cost_ns[INSN__NCLASS]);

#endif /* USER_TRACE_CALIBRATE_H */
