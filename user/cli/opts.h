/* SPDX-License-Identifier: BSD-2-Clause */
/* Command-line options of cabbpf. Parsed once by main's thread. */
#ifndef USER_OPTS_H
#define USER_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "user/cli/views.h"

#define OPTS_MAX_FUNCS 256

struct opts {
	pid_t pid;                           /* -p */
	char **cmd;                          /* after --, NULL-terminated */
	const char *funcs[OPTS_MAX_FUNCS];   /* -f globs */
	size_t nfuncs;
	const char *analyzers;               /* -a, NULL = all */
	const char *json_path;               /* --json */
	double duration;                     /* -d seconds; 0 = until exit or Ctrl-C */
	size_t ring_bytes;                   /* --ring-size, per CPU */
	unsigned analyzer_threads;           /* --analyzer-threads */
	bool list;                           /* --list */
	bool floor;                          /* --floor (benchmarks) */
	bool no_times;                       /* --no-times */
	bool no_guard;                       /* --no-guard: no ptrace guard (user/trace/guard.h) */
	bool plan;                           /* --plan: print the probe plan, attach nothing */
	bool no_shift;                       /* --no-shift: every probe on the entry */
	bool no_callsites;                   /* --no-callsites: no call-site counting */
	bool entry_only;                     /* --entry-only: no return probes (-a count) */
	/* System-wide I/O and containers (issue 4) */
	bool io;                             /* --io: system-wide I/O statistics */
	double interval;                     /* -i seconds: periodic --io output; 0 = none */
	const char *cgroup;                  /* --cgroup PATH (cgroup v2 directory) */
	const char *container;               /* --container ID */
	struct view_opts view;               /* call tree and flame graph (user/cli/views.h) */
	bool quiet;                          /* -q: no text report */
	bool verbose;                        /* -v */
};

/*
 * Parse argv into *o (defaults first). With --io no target is needed
 * (every process); -p restricts it to one process. Returns 0 to run, 1 when --help or
 * --version was printed (exit 0), or -EINVAL after printing a message
 * (exit non-zero). Pointers in *o point into argv.
 */
int opts__parse(int argc, char **argv, struct opts *o);

#endif /* USER_OPTS_H */
