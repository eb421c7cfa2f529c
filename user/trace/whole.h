/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Whole-container tracing: `cabbpf --container NAME`
 * (or --cgroup DIR) without -p or a command traces every process of that
 * cgroup, those running at the start and those started later.
 *
 * Processes are found three ways: the cgroup's (and its descendants')
 * cgroup.procs at the start and every 100 ms after (processes moved in);
 * the exec events of bpf/trace.bpf.c (cgroup-filtered, any process:
 * `podman exec`, a shell's children); and the first event of a process
 * not seen yet (a fork that did not exec). Each process's executable is
 * found through /proc/PID/exe and opened through /proc/PID/root (the
 * container's files); executables are deduplicated by (device, inode)
 * into images, each with its symbols, selected functions (-f, the
 * default, -N), IFUNC implementations, probe plan and selected shared
 * libraries (-f LIB:GLOB, deduplicated by file as well), and a range of
 * function ids in one table that grows during the run (struct
 * whole_table: room fixed at the start, the count published as images
 * are added; pipeline/runner.h).
 *
 * Probes: one link per file, for every process that maps it (pid 0);
 * the kernel's cgroup filter (bpf/trace.bpf.c) keeps every other user of
 * the same file (another container from the same image) out of the
 * report. An image found later is attached when its first process is
 * found: its calls before that instant are not seen (the report says
 * from when each process was traced). A process of an image already
 * attached is traced from its exec.
 *
 * Return probes and the guard (docs/guard.md): the probes are session
 * uprobes (kernel >= 6.13) whose entry arms the return probe only for a
 * process the loader has armed (trace__arm). A process is armed once
 * nothing in it can read a return address unwatched: its executable and
 * libraries have no unwinder or stack switcher (no guard site), or its
 * own guard (one ptrace tracer per process, user/trace/guard.h) holds it.
 * Until then, and for ever if it cannot be held (another tracer, Yama)
 * or is a Go program, its calls are counted without return probes
 * (flagged: the report's "unarmed"). Processes of other cgroups that run
 * the same files never get a return probe. A process that forks gives
 * its child the trampolines already on its stack: its guard holds the
 * child at birth and puts the return addresses back (guard__forks; a C++
 * prefork server's children that threw died in std::terminate); the
 * child itself is unarmed until its own guard holds it, which is put off
 * (looked at again each poll, up to 10 s) while the parent's guard still
 * holds it: on a loaded machine that took more than the 500 ms once
 * waited, and the child went without return probes, with a warning.
 *
 * Threads: the loader's main thread, except where said.
 */
#ifndef USER_TRACE_WHOLE_H
#define USER_TRACE_WHOLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cabbpf_event.h"
#include "user/elf/insn.h"
#include "user/probe/plan.h"
#include "user/trace/guard.h"

struct trace;
struct whole;

struct whole_opts {
	const char *cgpath;	  /* the cgroup v2 directory */
	const char *what;	  /* "container NAME" or "cgroup DIR", for messages */
	const char *container;	  /* --container as given, or NULL */
	const char *const *funcs; /* -f */
	size_t nfuncs;
	const char *const *excludes; /* -N globs */
	size_t nexcludes;
	bool entry_only;	      /* no return probes at all: no guards */
	bool no_guard;		      /* --no-guard: arm every process */
	bool quiet_setup;	      /* --list, --plan: no run follows */
	struct plan_opts plo;
	/* a probed call's cost by entry class (user/trace/calibrate.h), or
	 * NULL: then the table has no probe_ns */
	const double *probe_cost;
	uint32_t room; /* function table's room; 0: the default */
	/* --follow-forks: the command cabbpf launched into the cgroup, held
	 * before its program's first instruction (user/proc/target.h,
	 * target__exec_held) until the caller starts it; its guard takes it
	 * as a spawned target, and whole__root_reaped says when it ended.
	 * 0: none. */
	pid_t root;
};

/* The function table by fid, with room for cap; n published (release)
 * once a new image's entries are all written. Owned by the whole. */
struct whole_table {
	uint64_t *offsets; /* TRACE_NO_PROBE: not probed */
	const char **names, **lnames, **binaries;
	uint32_t *sp_delta;
	double *probe_ns; /* NULL without whole_opts.probe_cost */
	_Atomic uint32_t n;
	uint32_t cap;
};

/* How a process was found. */
enum whole_found {
	WHOLE_RUNNING = 0, /* in the cgroup at the start */
	WHOLE_NEW,	   /* started while traced: its exec or its first event */
	WHOLE_MOVED,	   /* in the cgroup at a later scan */
};

/* From when a process's calls were traced. */
enum whole_from {
	WHOLE_FROM_START = 0, /* the start of the trace */
	WHOLE_FROM_EXEC,      /* its exec: its image was attached already */
	WHOLE_FROM_FORK,      /* its creation: a fork of a traced process */
	WHOLE_FROM_MOVED,     /* when it came into the cgroup */
	WHOLE_FROM_ATTACH,    /* traced_from_s: its image was attached then */
};

/* What the report says of a process. */
struct whole_proc {
	pid_t pid;
	char comm[16];
	char exe[4096];	    /* the executable as the process sees it (its root) */
	char container[80]; /* the container's id (64 hex), or "" */
	enum whole_found found;
	uint64_t execs;		 /* exec events while traced */
	bool untraced_image;	 /* its executable has nothing traced (see image_why) */
	const char *image_why;	 /* why, or NULL */
	enum whole_from from;	 /* from when its (last) executable's calls were seen */
	double traced_from_s;	 /* WHOLE_FROM_ATTACH: when, s after the start */
	bool armed;		 /* return probes armed (ever) */
	bool guarded;		 /* held by its own guard (ever) */
	const char *unarmed_why; /* why never armed, or NULL */
	uint64_t held_ns;	 /* time held at its execs until its probes were in */
	bool exited;		 /* its end was seen while traced */
	int exit_status;	 /* then its wait status (exited or killed by a signal) */
};

/* The exec hold (whole.h's top comment): processes held at the exec of a
 * program not looked at yet, until its probes were in. */
struct whole_hold_figures {
	uint64_t n;	 /* execs held */
	uint64_t sum_ns; /* the time they were held, in all */
	uint64_t max_ns; /* the longest */
};

/*
 * Find the processes of o->cgpath, their executables, the images, and
 * fill the function table. Returns 0 and *out (free with whole__free), or
 * -errno after logging why: -ENOENT (no process, or nothing to trace in
 * any), -ENOMEM.
 */
int whole__open(const struct whole_opts *o, struct whole **out);

/* The function table (valid until whole__free). Any thread may read the
 * entries below the published n. */
struct whole_table *whole__table(struct whole *w);

/* A name for the report's target line: "container NAME (podman ID12)" or
 * "cgroup DIR". */
const char *whole__what(const struct whole *w);

/* The cgroup v2 directory traced. */
const char *whole__cgpath(const struct whole *w);

/* --list (list) or --plan: every image's functions or plan, on f. */
void whole__print(const struct whole *w, FILE *f, const char *analyzers, bool verbose, bool list);

/* After trace__attach (gate still closed): guards and arming of the
 * processes found so far; gm: the trace's maps for the guards' probes.
 * Returns 0 (a process that cannot be guarded is left unarmed, said) or
 * -ENOMEM. */
int whole__start(struct whole *w, struct trace *tr, const struct guard_maps *gm);

/* The run's gate (trace__gate): the guards' gates follow it, and so do
 * those of guards made later. */
void whole__gate(struct whole *w, bool open);

/* Every event the loader drains, before it is staged: notes processes not
 * seen yet and exec events (cheap: one compare for a run of one process's
 * events). */
void whole__see(struct whole *w, const struct cabbpf_event *e);

/*
 * Once per drain round, at now (monotonic s since the start): looks at
 * the processes noted by whole__see and, every 100 ms, at the cgroup
 * (processes moved in); attaches the images found (trace__add), guards
 * and arms processes, lets go of guards whose process ended. Sets *empty
 * when the cgroup has no process left (or is gone: the container
 * stopped). Returns 0, or -ENOMEM (logged).
 */
int whole__poll(struct whole *w, double now, bool *empty);

/* After the probes are out: every guard lets go (user/trace/guard.h's
 * guard__stop); their counters summed into *sum (NULL: not wanted).
 * Returns whether any guard ran. */
bool whole__stop(struct whole *w, struct guard_stats *sum);

/* Processes seen (running, found later), in pid order after whole__stop;
 * i < whole__nprocs. whole__proc_of: the process pid, or NULL. */
size_t whole__nprocs(const struct whole *w);
const struct whole_proc *whole__proc(const struct whole *w, size_t i);
const struct whole_proc *whole__proc_of(const struct whole *w, pid_t pid);

/* Images (executables) with functions traced, and those found with
 * nothing to trace. */
size_t whole__nimages(const struct whole *w, size_t *untraced);

/*
 * --follow-forks: whether the root process (whole_opts.root) has ended,
 * for user/proc/target.h's reaped hook while a guard of this whole is
 * its ptrace parent. Returns 1 with *status once a guard reaped it, 0
 * while it runs, -1 when no guard waits for it (the caller waits itself).
 * The caller starts the root after whole__start; then call
 * whole__root_started. Main thread.
 */
int whole__root_reaped(struct whole *w, int *status);
void whole__root_started(struct whole *w);

/* What the exec hold cost so far (after whole__stop: in all). */
void whole__hold_figures(const struct whole *w, struct whole_hold_figures *out);

/* Free; NULL is fine. Guards still running are stopped. */
void whole__free(struct whole *w);

#endif /* USER_TRACE_WHOLE_H */
