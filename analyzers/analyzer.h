/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The analyzer plugin interface.
 *
 * The runner (pipeline/runner.h) rebuilds every thread's exact event
 * sequence and runs it through that thread's shadow stack
 * (pipeline/shadow.h). The shadow stack turns entries and returns into
 * calls (with their caller) and closed frames (with their times), and hands
 * them to every selected analyzer through the callbacks below.
 *
 * Threads: an analyzer instance (the state made by init) is used by exactly
 * one analyzer thread, so callbacks need no locks. With several analyzer
 * threads each thread has its own instance of every analyzer and sees a
 * disjoint set of program threads (all events of one program thread go to one
 * instance, in order); after the run the runner folds the instances into one
 * with merge() and only then asks for reports.
 */
#ifndef ANALYZERS_ANALYZER_H
#define ANALYZERS_ANALYZER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/emit.h"

struct json;
struct cct_opts;
struct isp_opts;
struct replay_opts;
struct shadow_frame;
struct callvals;
struct an_windows;
struct an_budget;

/* The caller of a call made with an empty shadow stack (thread start, or
 * the first probed function of a call chain). Named "<root>" in reports. */
#define AN_ROOT UINT32_MAX
#define AN_ROOT_NAME "<root>"
/* The caller of a call made in a sampling window after the first when the
 * thread's stack holds nothing from this window: a function entered while
 * tracing was off may be live in between, so the caller is not known
 * (--budget: also any call made while some functions' probes are out).
 * Named "<resumed>" in reports. */
#define AN_RESUMED (UINT32_MAX - 1)
#define AN_RESUMED_NAME "<resumed>"

/* The binary a traced function is in: pprof's mappings. */
struct an_bin {
	const char *path;     /* as traced (the main executable, or a library) */
	const char *build_id; /* its GNU build id, lowercase hex, or NULL */
};

/* Where a traced function is: its source (user/elf/dwarf.h) and its
 * code, for -l, the JSON function objects and pprof. */
struct an_src {
	const char *file; /* source file of its definition, or NULL when unknown */
	uint32_t line;	  /* line of its name there, 0 when unknown */
	uint32_t bin;	  /* index into an_ctx.bins */
	uint64_t vaddr;	  /* link-time address of its entry */
	uint64_t size;	  /* bytes of code (st_size) */
	uint64_t foff;	  /* file offset of its entry */
};

/* Kinds of events whose loss (a full kernel ring, or records overwritten
 * in --cab-mode sampling) makes results lower bounds: struct an_ctx.lost,
 * struct analyzer_ops.lower_bounds. */
#define AN_LOST_CALLS 1u /* call events: entries and returns */
#define AN_LOST_IO 2u	 /* I/O events */
/* What the text tables append to a count that is a lower bound (inside
 * its column's width): "1234+" reads "at least 1234". */
#define AN_LB_MARK EMIT_LB_MARK

/* Read-only context shared by every instance; outlives them. */
/* What a sampled time holds of the program's kernel-mode time, besides
 * its user-mode time (an_ctx.cpu_sample_kernel; a recording's summary). */
enum an_ktime {
	AN_KTIME_NONE = 0,     /* nothing: user mode only */
	AN_KTIME_SYSCALLS = 1, /* its own system calls */
	AN_KTIME_FAULTS = 2,   /* those and its page faults */
};

struct an_ctx {
	const char *const *fnames; /* function names by fid; entries may be NULL */
	/* linkage (mangled) names by fid where they differ from fnames
	 * (C++, Rust): written to JSON as "linkage_name"; NULL, or entries
	 * NULL, when there is none */
	const char *const *lnames;
	uint32_t nfuncs;	   /* fids are < nfuncs (the runner filters) */
	/* The functions whose probes went in (nfuncs less those the kernel
	 * refused), for the reports' "N of M functions" totals, so they
	 * agree with the summary's "M functions traced"; 0: nfuncs. Set by
	 * the runner once the analyzers have stopped (runner__set_traced),
	 * read by the reports only. */
	uint32_t ntraced;
	/* by fid (nfuncs entries), or NULL when not known (a recording of
	 * format 1); bins: nbins entries that src[].bin index */
	const struct an_src *src;
	const struct an_bin *bins;
	uint32_t nbins;
	unsigned top;		   /* text reports: rows per table (> 0) */
	/* Sampling (--sample, --start-disabled): the windows tracing was on,
	 * filled by the loader once the analyzers have stopped, read by
	 * the reports only (analyzers/sampling.h). NULL without sampling. */
	const struct an_windows *windows;
	/* --budget: the epochs and every function's mode in each, for the
	 * functions' whole-run estimates (analyzers/sampling.h); windows then
	 * holds the epochs in which every function was traced (an edge's
	 * caller is known only there). Set and read as windows is. NULL
	 * without a budget. */
	const struct an_budget *budget;
	/* The cct analyzer's options (analyzers/cct.h); NULL: defaults. */
	const struct cct_opts *cct;
	/* The timeline analyzer's bound (analyzers/timeline.h); 0: default. */
	uint64_t timeline_limit;
	/* The isp analyzer's options (analyzers/isp.h); NULL: defaults. */
	const struct isp_opts *isp;
	/* The replay analyzer's (analyzers/replay.h): cabbpf replay's alone;
	 * NULL elsewhere, where that analyzer refuses to start. */
	const struct replay_opts *replay;
	/* --hist GLOB: the functions the latency analyzer's text shows
	 * (fnmatch on report names); none: those with the most time. */
	const char *const *hist;
	size_t nhist;
	/* --slower-than: the latency analyzer lists the slowest calls of at
	 * least this duration (0: none), at most slowest of them (0: its
	 * default). */
	uint64_t slower_ns;
	unsigned slowest;
	/* The AN_LOST_* kinds of which events were lost in this run: set by
	 * the runner once the analyzers have stopped (runner__set_lost), read
	 * by the reports only, which mark the counts these losses make lower
	 * bounds (an_ctx__lb; EMIT_COUNT cells, common/emit.h). */
	unsigned lost;
	/* JSON lists only the functions called (a table that holds the
	 * functions of many programs: whole-container tracing) */
	bool called_only;
	/* --times sampled: the CPU clock's period (ns) when it sampled the
	 * whole run, so each frame's samples (an_return.samples_*) are the
	 * program's own user-mode time in periods; 0: the times shown are
	 * the traced ones. Set and read as windows is. */
	uint64_t cpu_sample_ns;
	/* What of the program's kernel-mode time the clock sampled too:
	 * AN_KTIME_* (a recording of version 9 has only the user-mode time,
	 * one of version 10 its system calls) */
	uint8_t cpu_sample_kernel;
	/* With it, what each function's traced call adds to the program's
	 * own time after its traps (user/trace/calibrate.h struct
	 * calib_aftermath), ns by fid: in the function after its entry
	 * (aft_in), in its caller after its return (aft_out); NULL: not
	 * measured (nothing taken out). Set before the run (the shadow
	 * stacks read them). */
	const uint32_t *aft_in, *aft_out;
};


/* What the sampled times are, for a report's sentence: "user-mode CPU
 * time", "CPU time (user mode and system calls)" or "CPU time (user mode,
 * system calls and page faults)". Static storage. */
static inline const char *an_ctx__sampled_what(const struct an_ctx *c)
{
	return c->cpu_sample_kernel >= AN_KTIME_FAULTS ? "CPU time (user mode, system calls and page faults)"
	       : c->cpu_sample_kernel			? "CPU time (user mode and system calls)"
							: "user-mode CPU time";
}

/* The time n CPU-clock samples stand for, ns (0 without the sampler). */
static inline uint64_t an_ctx__sampled_ns(const struct an_ctx *c, uint64_t n)
{
	return n * c->cpu_sample_ns;
}

/* The program's own time of samples n with the probes' aftermath aft_ns
 * taken out (an_return.aft_*): what the sampled times show, ns; 0 when
 * the aftermath is larger (the estimate's error covers it). */
static inline uint64_t an_ctx__own_ns(const struct an_ctx *c, uint64_t n, uint64_t aft_ns)
{
	uint64_t t = an_ctx__sampled_ns(c, n);

	return t > aft_ns ? t - aft_ns : 0;
}

/* The half-width of that time's 95% interval, ns: the count of a clock of
 * fixed period that a phase of the program meets at random is within
 * 1.96 sqrt(n) of its mean (Poisson, an upper bound for a periodic clock);
 * none seen, 3 periods (the rule of three). */
static inline uint64_t an_ctx__sampled_err95_ns(const struct an_ctx *c, uint64_t n)
{
	double k = n ? 1.96 * __builtin_sqrt((double)n) : 3.0;

	return (uint64_t)(k * (double)c->cpu_sample_ns + 0.5);
}

/* Whether events of any of the AN_LOST_* kinds were lost in this run: the
 * counts that depend on them are lower bounds. Any thread, after the run. */
static inline bool an_ctx__lb(const struct an_ctx *c, unsigned kinds)
{
	return (c->lost & kinds) != 0;
}

/* Name of fid for reports: "<root>" for AN_ROOT, the table's name, or
 * "fid#N" written into buf when the table has none. Never NULL; the result
 * lives as long as ctx or buf. Any thread. */
const char *an_ctx__name(const struct an_ctx *c, uint32_t fid, char buf[24]);

/* The linkage name of fid when it differs from its report name (a
 * demangled C++ or Rust name), else NULL. Any thread. */
const char *an_ctx__linkage(const struct an_ctx *c, uint32_t fid);

/* fid's source location when its file is known, else NULL. Any thread. */
const struct an_src *an_ctx__src(const struct an_ctx *c, uint32_t fid);

/* Writes fid's "file" and "line" keys into the function object w has open,
 * where they are known (nothing otherwise). Any thread. */
void an_ctx__json_src(const struct an_ctx *c, uint32_t fid, struct json *w);

/* A call, reported at the callee's entry. */
struct an_call {
	uint32_t tid;	 /* program thread */
	uint32_t caller; /* fid of the innermost live frame, or AN_ROOT */
	uint32_t callee; /* fid */
	uint32_t depth;	 /* live frames below the callee on the shadow stack */
	uint32_t epoch;	 /* sampling window of the call (0: not sampling) */
	uint64_t ts;	 /* ns, entry timestamp */
	/* frames[0..depth-1]: the live frames below the callee ([0]
	 * outermost), valid during the callback only. Context-sensitive
	 * analyzers keep their own path and read these only when gen changed:
	 * gen changes whenever the shadow stack was replaced without calls
	 * and returns (a coroutine switch parked or resumed a stack). */
	const struct shadow_frame *frames;
	uint32_t gen;
};

/* A frame leaving the shadow stack: matched by its return event, or popped
 * without one ("missing": longjmp, exception, uretprobe depth limit). */
struct an_return {
	uint32_t tid;
	uint32_t fid;
	uint32_t caller;  /* as in the frame's an_call */
	bool matched;	  /* a return event closed it: the times below are valid */
	bool recursive;	  /* another frame of fid was live below it at entry, so
			     its inclusive time is already inside that frame's */
	bool unwound;	  /* not matched: unwound by an exception */
	bool switched;	  /* not matched: its return was lost to a stack switch */
	bool sampled;	  /* not matched: entered in an earlier sampling window,
			     it returned while tracing was off */
	/* not matched: the run ended with the frame still live (the target
	 * exited or was let go mid-call); the times run to the thread's last
	 * event, so a tree's outer frames (main, a thread's start routine)
	 * still hold their children's time. The runner counts it "open". */
	bool open;
	/* a frame a forked child inherited from its parent (pipeline/
	 * shadow.h, FORKS): the parent's call, counted there; matched is
	 * false (the child's return closed it: analyzers of exact times and
	 * counts leave it out), its times are the child's own inside it,
	 * from the fork (a tree uses them, as open frames') */
	bool inherited;
	/* matched: return.ts - entry.ts, and minus the children's time (self).
	 * Not matched: the same up to the event that found the frame dead (or
	 * the end of the run: open), an upper bound that analyzers of exact
	 * times ignore. */
	uint64_t incl_ns;
	uint64_t self_ns;
	/* The same on-CPU: minus the thread's off-CPU intervals inside the
	 * frame (scheduler switch events, CABBPF_EV_SCHED); equal to the wall
	 * times when no switch events come */
	uint64_t cpu_incl_ns;
	uint64_t cpu_self_ns;
	/* --times sampled: CPU-clock samples of the program's own user-mode
	 * execution while the frame was on top (self) or live (incl: self
	 * and its closed children's), each one sampling period (an_ctx);
	 * valid however the frame closed (pipeline/shadow.h, SAMPLES) */
	uint64_t samples_self;
	uint64_t samples_incl;
	/* of what those samples stand for, the probes' aftermath (an_ctx.
	 * aft_in, aft_out: the time the traps' after-effects add to the
	 * program's own instructions), ns: its entry's, and its closed
	 * children's returns' (self); and every traced call's inside it
	 * too (incl) */
	uint64_t aft_self_ns;
	uint64_t aft_incl_ns;
	uint64_t ts;	  /* ns, timestamp of the event that closed the frame */
	/* The closed frame is frames[depth] (frames[0..depth-1] its live
	 * callers), valid during the callback only; gen as in struct an_call. */
	uint32_t depth;
	uint32_t gen;
	const struct shadow_frame *frames;
};

/* A live activation on a thread's shadow stack (pipeline/shadow.h keeps
 * them; defined here because plugins read them, in struct an_io). */
struct shadow_frame {
	uint64_t sp;	   /* E: entry sp, the return-address slot */
	uint64_t ts;	   /* entry timestamp */
	uint64_t child_ns; /* time of closed children (matched or estimated) */
	uint64_t off0;	   /* the thread's off-CPU total at entry */
	uint64_t child_cpu_ns; /* on-CPU time of closed children */
	uint64_t samples;      /* CPU-clock samples while it was the top frame */
	uint64_t child_samples; /* inclusive samples of closed children */
	/* the probes' aftermath (an_ctx.aft_*) its closed children left in
	 * it after their returns, and inside them in all */
	uint64_t aft_child_out, aft_child_incl;
	uint32_t fid;
	uint32_t caller; /* fid or AN_ROOT, as reported in the call */
	uint32_t epoch;	 /* sampling window of its entry */
	bool ret;	 /* the kernel gave this frame a return probe */
	bool recursive;	 /* another frame of fid was below it at entry */
	bool lost;	 /* its return address was put back: no return event */
	bool noret;	 /* the probe armed no return for it (REC_FID_NORET) */
	bool opener;	 /* the thread's first entry in its sampling window */
	bool inherited;	 /* copied from the parent's stack at a fork (FORKS) */
	/* --size (analyzers/isp.h): the routine's designated argument, read
	 * by the entry probe, came in a CABBPF_EV_SIZE event */
	bool sized;
	/* the thread's THROW count (struct shadow.throws) at its entry: a
	 * frame entered after the latest throw was not unwound by it */
	uint32_t throws;
	/* CABBPF_SLOT_KNOWN | its return address's tag (include/
	 * cabbpf_event.h), 0 when not known: a later entry at the same slot
	 * that finds another address there proves the frame dead */
	uint32_t slot;
	uint64_t size;
	/* --args, --retval: its values as they came (common/callvals.h),
	 * or NULL: none asked for, or none came yet */
	struct callvals *vals;
};

/*
 * An I/O system call that completed in the thread (kind CABBPF_EV_IO), in
 * program order: frames[0..depth-1] are the thread's live shadow-stack
 * frames at that moment (pipeline/shadow.h; [0] outermost), so an analyzer
 * can charge the I/O to every activation it happened in.
 */
struct an_io {
	uint32_t tid;
	uint32_t sc;	 /* enum cabbpf_sc (include/cabbpf_event.h) */
	uint32_t fdkind; /* enum cabbpf_fdkind */
	bool failed;	 /* the call returned an error: no bytes moved */
	int32_t fd;	 /* -1 for msgrcv/msgsnd */
	uint32_t req;	 /* bytes requested */
	uint32_t ret;	 /* bytes moved (0 when failed) */
	uint64_t ts;
	const struct shadow_frame *frames;
	size_t depth;
};

struct analyzer_ops {
	const char *name; /* as given to -a */
	const char *help; /* one line for usage messages */

	/* Make an instance. Returns 0 and sets *state, or -errno.
	 * ctx outlives the instance. */
	int (*init)(const struct an_ctx *ctx, void **state);
	/* Hot path: no allocation failure may be lost silently; an analyzer
	 * that cannot record an event counts it and reports the count. */
	void (*on_call)(void *state, const struct an_call *c);     /* may be NULL */
	void (*on_return)(void *state, const struct an_return *r); /* may be NULL */
	/* Add everything src recorded into dst (instances of the same ops).
	 * src is left unchanged. Returns 0 or -ENOMEM. */
	int (*merge)(void *dst, const void *src);
	/* (Its section of the report is written from its merged instance by
	 * user/report/sec_NAME.c: user/report/sec.h.) */
	/* Free the instance; NULL is fine. */
	void (*free)(void *state);
	/* An I/O call in program order; NULL when the analyzer ignores I/O. */
	void (*on_io)(void *state, const struct an_io *io);
	/* Selected only by name (or by the option that needs it), not by the
	 * default "every analyzer": its result is a file (timeline), or it
	 * says something only of runs that feed varied inputs (isp). */
	bool opt_in;
	/* The AN_LOST_* kinds whose loss makes this analyzer's counts lower
	 * bounds: its text tables mark them (AN_LB_MARK), the report adds a
	 * footnote (user/report/sections.c), and the JSON lists the analyzer under
	 * lost_by_kind.<kind>.analyzers (docs/json-schema.md). */
	unsigned lower_bounds;
};

/* The registry, in report order. */
extern const struct analyzer_ops analyzer_count;
extern const struct analyzer_ops analyzer_callgraph;
extern const struct analyzer_ops analyzer_io;
extern const struct analyzer_ops analyzer_cct;
extern const struct analyzer_ops analyzer_latency;
extern const struct analyzer_ops analyzer_timeline;
extern const struct analyzer_ops analyzer_isp;
extern const struct analyzer_ops analyzer_replay;

#define AN_MAX 8 /* analyzers that can be selected at once */

/* Number of registered analyzers, and the i-th one (i < count). Any thread. */
unsigned analyzer__count(void);
const struct analyzer_ops *analyzer__get(unsigned i);
/* The analyzer named name, or NULL. Any thread. */
const struct analyzer_ops *analyzer__find(const char *name);

/*
 * Parse a comma-separated list such as "count,callgraph" (spaces around
 * names allowed, duplicates ignored; NULL or the name "all" selects every
 * analyzer that is not opt_in) into
 * out[0..*n-1], in registry order. Returns 0, or -EINVAL after logging a
 * message that lists the valid names (unknown name, or an empty list).
 * Any thread.
 */
int analyzer__select(const char *list, const struct analyzer_ops *out[AN_MAX], unsigned *n);

/* A set of live instances: what one analyzer thread feeds. */
struct an_set {
	unsigned n;
	const struct analyzer_ops *ops[AN_MAX];
	void *state[AN_MAX];
};

/* Make one instance of each of ops[0..n-1]. Returns 0 or -errno (then
 * nothing is left allocated). The set must be freed with an_set__fini. */
int an_set__init(struct an_set *s, const struct analyzer_ops *const *ops, unsigned n,
		 const struct an_ctx *ctx);
/* Free every instance; a zeroed or NULL set is fine. */
void an_set__fini(struct an_set *s);

/* Fan-out used by the shadow stack (the void *ctx is the struct an_set). */
void an_set__on_call(void *set, const struct an_call *c);
void an_set__on_return(void *set, const struct an_return *r);
/* Hand an I/O call to every analyzer that has on_io. */
void an_set__on_io(struct an_set *s, const struct an_io *io);

/* The instance of the analyzer named name in s, or NULL. For tests and
 * callers that read results through an analyzer's own query functions. */
void *an_set__state(const struct an_set *s, const char *name);

#endif /* ANALYZERS_ANALYZER_H */
