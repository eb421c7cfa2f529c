/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The function-tracing run, cabbpf's main mode (the I/O mode,
 * user/modes/iomode.h, is its peer). One run goes through named stages,
 * in user/modes/ftrace.c, each a function that returns 0 or -errno after
 * logging why:
 *   resolve target    spawn the command held before exec, or take the pid
 *   select functions  the executable's symbols, the -f patterns
 *   plan              the guard (or entry-only), where each probe goes,
 *                     the libraries' functions; --list and --plan stop here
 *   attach            BPF programs, rings, staging, analyzers, probes
 *   start             analyzer threads, then a launched target may exec
 *   run until stop    drain the rings until it exits, Ctrl-C or -d
 *   detach            probes out, the guard lets go, the last drain
 *   report            text, JSON, the summary line
 * Main thread only.
 */
#ifndef USER_FTRACE_H
#define USER_FTRACE_H

#include <signal.h>

#include "user/cli/opts.h"

/*
 * Trace o's target (-p or -- COMMAND) until *stop is set (a signal's
 * number), -d elapses or the target exits; report. *exit_code: the status
 * cabbpf ends with after a report, the launched command's (128 + N when
 * signal N killed it, as shells say; 0 with -p or when it had not ended
 * by the report). Returns 0 after a
 * report (or --list, --plan), or -errno, logged once where the cause was
 * known: nothing could be traced (-ESRCH, "process N exited while cabbpf
 * was attaching", when the target found alive was gone before tracing
 * began: no report, since no event was taken), or the run ended on an
 * error (its partial report is still written) or the report could not be
 * written.
 *
 * Test hook, compiled in and armed only by the environment:
 * CABBPF_TEST_PAUSE_ATTACH=1 makes cabbpf say so on stderr and stop
 * itself (SIGSTOP) after the guard is in and before the function probes
 * go in, so a test can end the target there
 * (tests/test_integration.c exits_during_attach).
 */
int ftrace__run(const struct opts *o, volatile sig_atomic_t *stop, int *exit_code);

#endif /* USER_FTRACE_H */
