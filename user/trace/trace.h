/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The function-tracing BPF side as the loader sees it: bpf/trace.bpf.c
 * through its skeleton. Order of use: trace__open (open, set rodata, load,
 * map the per-CPU rings), trace__attach, trace__drain until done,
 * trace__detach, a last trace__drain, trace__free. All calls from one thread
 * (the loader's main thread).
 */
#ifndef USER_TRACE_H
#define USER_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cabbpf_event.h"

/* Called for every event, with the CPU whose ring it came from; e points
 * into the ring and is valid during the call only (a struct
 * cabbpf_io_event when e->kind is CABBPF_EV_IO). Returns 0, or -errno to
 * stop the current poll. */
typedef int (*trace_event_fn)(void *ctx, unsigned cpu, const struct cabbpf_event *e);

struct trace_callsite;

struct trace_opts {
	/* process to trace; > 0, or 0 with cgroup: every process in the
	 * cgroup (whole-container tracing) */
	pid_t pid;
	const char *binary; /* file to probe */
	/* file of each function (index = fid), e.g. a shared library; NULL
	 * (the array or an entry) = binary */
	const char *const *binaries;
	/* per fid, NULL = all 0: how far rsp moved between the function's
	 * entry and its probe site (entry-only placement, user/probe/plan.h); the
	 * BPF program adds it back so the event sp is the return-address slot */
	const uint32_t *sp_delta;
	/* per fid, NULL = all 0: bytes of the entry probe's instruction,
	 * where the probe resumes the thread past it (0: not known); the
	 * time sampler leaves out the ticks delivered there as the probe's
	 * trap returns (bpf/trace.bpf.c resume_check) */
	const uint8_t *resume_len;
	/* per fid, NULL = none: the --size rule's spec byte (analyzers/isp.h,
	 * ISP_SPEC_*; 0 = none); such entries read their size */
	const uint8_t *size_specs;
	/* per fid, NULL = none: the --args items and --retval type to read
	 * (nvals, reg, type, ret of include/cabbpf_event.h's struct
	 * cabbpf_fnspec; its other fields unused) */
	const struct cabbpf_fnspec *val_specs;
	bool no_returns; /* entry probes only (no uretprobes) */
	/* the kernel has no multi-uprobe links (user/kernel/features.h):
	 * one perf link per site from the start */
	bool no_multi_links;
	/* the kernel has no uprobe session programs: the object built
	 * without their kfunc is loaded (not with session) */
	bool no_session_kfunc;
	/* whole-container tracing: one session link per file (entry and
	 * return in one program, kernel >= 6.13) whose entries arm the return
	 * probe only for processes armed with trace__arm (bpf/trace.bpf.c);
	 * multi-uprobe links only (no per-site fallback), no call sites, no
	 * sampling. With no_returns: plain entry links. */
	bool session;
	/* whole-tree tracing (pid 0): a process of the cgroup that execs a
	 * program not in the map exec_images is stopped at its exec and noted
	 * in exec_held (include/cabbpf_event.h) for the loader to let go once
	 * its probes are in (user/trace/whole_hold.c); and each process's
	 * end is noted in proc_exits (pid -> wait status) */
	bool hold_exec;
	/* file offset of each function's probe site; index = fid;
	 * TRACE_NO_PROBE = not probed (counted in trace__refused);
	 * TRACE_AT_CALLSITES = probed only at its callsites[] entries */
	const uint64_t *offsets;
	uint32_t nfuncs;
	/* Entry probes at the call instructions of functions counted there
	 * (user/probe/callsites.h); only with no_returns. */
	const struct trace_callsite *callsites;
	size_t ncallsites;
	/* per CPU ring, in CABBPF_SLOT_BYTES slots; power of two, >= page size */
	size_t ring_bytes;
	bool floor;        /* attach the empty programs (benchmark floor) */
	bool no_times;     /* events carry no timestamp (--no-times) */
	bool cgroup;       /* --cgroup: filter on cgfilter[0] (set before load) */
	bool sampling;     /* events carry their window's epoch; allows
			      trace__pause / trace__resume */
	bool start_paused; /* with sampling: trace__attach puts no probe in
			      (the first window opens at trace__resume) */
	bool gated;        /* without sampling: the caller opens the gate
			      (trace__gate) once everything is in place;
			      false: trace__attach opens it as it returns */
	/* --lossless: a thread whose event leaves fewer than ring/2 free
	 * slots in its CPU's ring is stopped (bpf/trace.bpf.c, throttle) if
	 * the ptrace tracer holds it (map "guarded"; the tracer resumes it,
	 * map "throttled": user/trace/guard.h) */
	bool lossless;
	/* no ptrace tracer will hold a thread (no guard, no --lossless):
	 * "guarded" and "throttled" get one entry each, not 65536 (a
	 * preallocated hash map of 65536 entries takes ~20 ms to create) */
	bool unguarded;
	/* --budget: every probe belongs to a group (0 .. CABBPF_NGROUPS - 1)
	 * whose links go in and out on their own (trace__attach_group,
	 * trace__detach_group) and which the gate opens on its own
	 * (trace__set_gate); events carry the epoch. trace__attach puts
	 * function fid in group first_group[fid] (none: >= CABBPF_NGROUPS),
	 * the gate closed. Needs multi-uprobe links (refused otherwise: one
	 * link per site would take a grace period per function out). */
	bool groups;
	const uint8_t *first_group;
	/* > 0: sample the target's own execution on a user-mode CPU clock of
	 * this period (bpf/trace.bpf.c on_cpu_sample, --times sampled); one
	 * target process (pid > 0), no sampling windows */
	uint64_t cpu_sample_ns;
	/* count the target's own user-mode time (trace__progress_ns): by the
	 * time sampler's clock, or by a user-mode one of PROGRESS_TICK_NS
	 * (user/trace/progress.h) without it; one target process (pid > 0) */
	bool progress_clock;
	trace_event_fn on_event;
	void *ctx;
};

#define TRACE_NO_PROBE UINT64_MAX
#define TRACE_AT_CALLSITES (UINT64_MAX - 1)

/* One call instruction of function fid, at file offset offset of fid's
 * file: its event is fid's entry, with sp moved by sp_delta (signed; -8:
 * the return-address slot the call pushes). */
struct trace_callsite {
	uint64_t offset;
	uint32_t fid;
	int32_t sp_delta;
};

struct trace;

/* Returns 0 and *out (owned by the caller, free with trace__free), or -errno
 * (logged): -EPERM when not privileged enough, -ENOMEM, or the libbpf error. */
int trace__open(const struct trace_opts *o, struct trace **out);

/* Put the probes in place. Returns 0, or -errno (logged) if no probe could be placed
 * (a function that the kernel refuses is skipped and counted: see
 * trace__refused); or -ESRCH, not logged, when the process o.pid is gone
 * (it exited while the probes went in): the caller names it. */
int trace__attach(struct trace *t);

/* Whether the time sampler runs (o.cpu_sample_ns, and its clocks are in
 * place since trace__attach). */
bool trace__cpu_samples(const struct trace *t);
/* What kernel-mode time the sampler takes, when it runs, as the program's
 * (enum an_ktime, analyzers/analyzer.h): its system calls, and its page
 * faults when the kernel's addresses could be read (/proc/kallsyms); 0
 * for NULL or before the load. Any thread. */
unsigned trace__cpu_sample_kernel(const struct trace *t);
/* The progress clock (o.progress_clock, bpf/trace.bpf.c count_progress):
 * into *ns the target's user-mode time in its own code so far, as its
 * CPU clock's ticks counted it (each one period; not the probes' code nor
 * the ticks their traps delivered late). Returns whether there is such a
 * clock (asked for, and in place since trace__attach), *ns 0 if not.
 * The loader's thread. */
bool trace__progress_ns(const struct trace *t, uint64_t *ns);

/*
 * Whole-container tracing (o.pid 0): the function table grew to nfuncs
 * (the arrays of trace_opts hold the new fids' offsets and files; their
 * pointers are the same): attach the functions from the old count up.
 * Gated like the rest (open now if the trace is running). Returns the
 * number of those functions attached (the rest are counted refused), or
 * -errno (logged) when none could be. The loader's main thread.
 */
int trace__add(struct trace *t, uint32_t nfuncs);

/*
 * Session mode: let process pid's calls arm return probes from now on
 * (its guard holds it, or it needs none), or no longer. The process's
 * execve disarms it (bpf/trace.bpf.c). Returns 0 or -errno (-ESRCH: it is
 * gone). The loader's main thread.
 */
int trace__arm(struct trace *t, pid_t pid, bool on);

/* The traced executable as the kernel names the files execve loads: the
 * s_dev of its inode's superblock (kernel encoding, major << 20 | minor,
 * as CABBPF_EV_EXEC events carry it) and its inode number. Returns false
 * when it is not known (no target process, or a launched command that
 * never exec'd). Any thread after trace__attach. */
bool trace__exe_identity(const struct trace *t, uint32_t *dev, uint64_t *ino);

/* Number of functions that could not be probed, and whether the probes went
 * in through one multi-uprobe link per program (fast detach) or one perf link
 * per site. */
uint32_t trace__refused(const struct trace *t);
bool trace__multi(const struct trace *t);
/* Whether the scheduler's switch tracepoint is attached, so CABBPF_EV_SCHED
 * events give on-CPU times (not with --no-times, --floor, or when the
 * kernel refused it). Any thread after trace__attach. */
bool trace__cpu_time(const struct trace *t);

/* Drain every CPU's ring (at most one ring's worth of events per CPU, in
 * ring order, through on_event), then sleep timeout_ms (0: no sleep; a
 * signal ends it early). Nothing wakes the loader: call it periodically.
 * Returns the number of events delivered, or on_event's -errno.
 *
 * Test hooks, compiled in and armed only by the environment, so the tests
 * can see that a run whose ring read fails exits 1 (tests/test_integration.c
 * run_error_exits_1):
 *   CABBPF_TEST_FAIL_RING_READ=N   every drain fails with -EIO once N
 *                                  events have been read (mid-run);
 *   CABBPF_TEST_FAIL_FINAL_DRAIN=1 the drains after trace__detach (the
 *                                  last drain) fail with -EIO.
 * (CABBPF_TEST_FAIL_STAGING, user/trace/stage.h, fails the staging.) */
int trace__drain(struct trace *t, int timeout_ms);

/*
 * Sampling (o.sampling). The probes emit events only while the epoch is
 * not 0 (it starts at 0), each carrying it: trace__set_epoch(t, n) opens
 * window n (raise n for each window: the shadow stacks tell windows apart
 * by it), trace__set_epoch(t, 0) closes it at once. trace__pause removes
 * every function probe (no breakpoint is left in the target: it runs at
 * native speed; the exec tracepoint stays); trace__resume puts them back.
 * So a window is: resume, set_epoch(n), ..., set_epoch(0), pause.
 * pause/resume return 0 (also when already paused / running) or -errno
 * (-EINVAL without o.sampling; resume: the attach error, after which the
 * trace stays paused). The loader's main thread.
 */
void trace__set_epoch(struct trace *t, uint32_t epoch);

/*
 * The gate (bpf/trace.bpf.c's epoch): the probes emit nothing
 * while it is closed. Without sampling, open = the instant the trace
 * starts (every probe of the run is in), closed = the instant it stops
 * (before the first link is taken out): the report holds exactly the
 * events between those two stores, whatever order the links go in and out
 * (returns before entries, on a busy process). With sampling the windows
 * are the gate (trace__set_epoch); trace__gate(t, false) closes it too.
 * trace__detach closes it first. The loader's main thread.
 */
void trace__gate(struct trace *t, bool open);
int trace__pause(struct trace *t);
int trace__resume(struct trace *t);

/*
 * Groups (o.groups). trace__set_gate stores the epoch and the open groups
 * (bit g: group g) at once: an event is emitted only by a probe of an open
 * group, labelled with epoch; epoch 0 closes everything.
 * trace__attach_group puts the probes of the functions fid with member[fid]
 * into group g, which must hold no links and stay closed until they are in:
 * a new generation of the group (in the cookies, and the one the probes
 * accept), so links of the group the kernel is still releasing stay
 * silent; one multi-uprobe link pair per file. Returns 0 or -errno (logged
 * by the caller). trace__detach_group takes group g's links out at once
 * (their breakpoints leave the target unless another group holds the
 * site) and leaves their release to a thread of its own. The loader's main
 * thread.
 */
void trace__set_gate(struct trace *t, uint32_t epoch, uint32_t groups);
int trace__attach_group(struct trace *t, unsigned g, const uint8_t *member);
void trace__detach_group(struct trace *t, unsigned g);
/* Link sets taken out whose release by the kernel is not over (each
 * waits in a thread of its own). */
uint32_t trace__closing(struct trace *t);
/* Groups: every probe hit so far per function (entries and returns, of
 * open groups and closed ones), counted in the kernel: [fid], read-only,
 * valid until trace__free. NULL without groups. Any thread. */
const volatile uint64_t *trace__fhits(const struct trace *t);
/* Hits of each group's probes while the group was closed so far (traps
 * paid for no event: a set going in or out). Any thread. */
void trace__gated(const struct trace *t, uint64_t out[CABBPF_NGROUPS]);

/* --lossless: whether every CPU's ring holds fewer than a quarter of its
 * slots unread (the low-water mark: held threads may go on). The loader's
 * main thread (it reads the consumer positions). */
bool trace__below_low(const struct trace *t);

/* Remove every probe; nothing is left in the target. Safe to call twice. */
void trace__detach(struct trace *t);

/* Counters summed over CPUs (enum cabbpf_stat); per_cpu_drops, if not NULL,
 * receives 3 x trace__ncpus() values: the drops of call events per CPU,
 * then of I/O events, then of guard events. Returns 0 or -errno. */
int trace__stats(struct trace *t, uint64_t totals[CABBPF_STAT__MAX], uint64_t *per_cpu_drops);

/* One loaded program's run statistics (the kernel's, kept while
 * kernel.bpf_stats_enabled or a BPF_ENABLE_STATS fd is on). */
struct trace_prog_stat {
	char name[16];
	uint64_t runs;	  /* times it ran */
	uint64_t run_ns;  /* its summed run time */
};

/* The run statistics of t's programs that ran (run count > 0), at most max
 * of them into out. Returns how many, or -errno. Main thread. */
int trace__prog_stats(const struct trace *t, struct trace_prog_stat *out, unsigned max);

/* Number of per-CPU rings (possible CPUs). */
unsigned trace__ncpus(const struct trace *t);

/* The thread table's index mask (its size less one, bpf/pipeline.bpf.h),
 * which the objects sharing "tstab" must set as their rodata tstab_mask.
 * Valid after trace__open. */
uint32_t trace__tstab_mask(const struct trace *t);

/* fd of the loaded BPF map named name ("slots", "heads", "tstates",
 * "tstab", "stats"), for other BPF objects that write into the same rings with the
 * same sequence numbers (user/iomode/iotrace.h; they need ring_bytes too). Owned by t; valid until
 * trace__free, and replaced if trace__attach falls back to per-site links: ask after trace__attach.
 * Returns the fd or -ENOENT. */
int trace__map_fd(const struct trace *t, const char *name);

/* Free; NULL is fine. Detaches first. */
void trace__free(struct trace *t);

#endif /* USER_TRACE_H */
