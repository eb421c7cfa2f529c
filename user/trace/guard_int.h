/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The guard's private state, shared by its files (not a public API; the
 * story is in guard.h, why each step is safe in docs/guard.md):
 *   guard.c         open and free, the BPF program's life (load, attach,
 *                   hand over to the tracer, gate, stop);
 *   guard_sites.c   finding the sites: which functions unwind, switch
 *                   stacks or read return addresses;
 *   guard_proc.c    where the tracer runs: a process of its own that
 *                   outlives cabbpf (guardian.h), or a thread; seizing;
 *   guard_tracer.c  the tracer's threads, the stops it serves, --lossless's
 *                   holds, a wait's events;
 *   guard_forks.c   a fork's child cleaned before it runs;
 *   guard_letgo.c   letting go: return addresses given back, detaching.
 * guard__ names the module's API (guard.h) in whichever file; FILE__ the
 * functions one of its files offers the others, declared here. Every
 * guard_tracer__, guard_forks__ and guard_letgo__ function runs on the
 * tracer (its thread or process) only.
 */
#ifndef CABBPF_GUARD_INT_H
#define CABBPF_GUARD_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <bpf/bpf.h>

#include "cabbpf_event.h"
#include "user/trace/guard.h"
#include "user/trace/guardian.h"

struct gsite {
	char *path;	 /* file to probe */
	uint64_t offset; /* file offset of the function's entry */
	uint32_t kind;	 /* enum cabbpf_guard_site */
	char *name;
};

/* ---- the tracer's per-thread state ------------------------------------ */

/* A thread the tracer holds, and the slots it restored for an exception
 * (not for a stack switch): those get their trampoline back at a catch. */
struct gthread {
	pid_t tid;
	uint32_t n;
	uint64_t slot[CABBPF_GUARD_MAX];
	uint64_t orig[CABBPF_GUARD_MAX];
	/* stop handling: while detaching */
	bool stopped;
	bool must_stop; /* holds return addresses to give back */
	int pass_sig; /* signal to deliver when let go */
	/* blocked in a system call, let go in place unless it leaves it
	 * (arm_in_place): then stopped at that call's exit (bpf/guard.bpf.c,
	 * stop_on_exit) */
	bool armed;
	bool ours_pending; /* that SIGSTOP was sent, not yet seen */
	/* --lossless: held in its signal-delivery-stop at the rings'
	 * high-water mark since drain round held_gen */
	bool held;
	uint64_t held_gen;
};

/* What the tracer and the loader share, in memory mapped shared before
 * the tracer process forks (user/trace/guardian.h): the same in a thread. */
struct gshared {
	atomic_int seize_done; /* 0 pending, 1 ok, < 0: -errno */
	atomic_int stop_req;
	atomic_int state; /* 0 tracing, 1 leader reaped, 2 detached/ended */
	int status;	  /* wait status of the reaped leader */
	atomic_uint_fast64_t drain_gen; /* guard__drained rounds */
	atomic_bool drain_below;	/* the last round ended below the low mark */
	atomic_int nheld;		/* threads held */
	struct guard_stats st;
};

struct guard {
	pid_t pid;
	bool spawned;
	char exe[PATH_MAX];
	struct gsite *sites;
	size_t nsites;
	struct stat *files; /* the files looked at for sites, by dev and inode */
	size_t nfiles;
	/* BPF */
	struct guard_bpf *skel;
	bool gate_open; /* guard__gate: kept for a skeleton loaded again */
	struct bpf_link **links; /* one perf link per site (fallback) */
	size_t nlinks;
	int *mfds; /* or one multi-uprobe link per file */
	size_t nmfds;
	struct bpf_link *altstack; /* signal handlers on an alternate stack */
	int exit_stop; /* stop_on_exit's link while letting go, or -1 */
	bool forks;		   /* guard__forks: hold forked processes at birth */
	/* tracer thread */
	pthread_t thr;
	bool thr_started;
	pthread_mutex_t mu; /* guards th/nth and the map fds (main thread adds fds) */
	pthread_cond_t cv;
	struct gshared *sh;
	struct gthread *th;
	size_t nth, cap;
	/* The guard's objects the tracer uses: the skeleton's (a tracer
	 * thread), or the tracer process's copies (install_set) */
	int guarded_fd, reqs_fd;
	int throttled_fd; /* --lossless: bpf/trace.bpf.c's requests, or -1 */
	int iter_fd;	  /* bpf/guard.bpf.c's dump_pending, or -1 */
	int exit_map_fd, exit_prog_fd; /* stop_at_exit, stop_on_exit */
	volatile uint32_t *dump_tgid;  /* in the .bss map, or NULL */
	void *bss_map;		       /* the tracer process's mapping of .bss */
	size_t bss_len;
	int old_reqs_fd; /* the set before the last one (a stop it asked may come late) */
	uint64_t tramp; /* the trampoline's address, 0 until known */
	bool stopped;
	/* guard__guardian asked / the channel to the tracer process
	 * (user/trace/guardian.h), in the loader */
	bool want_guardian;
	struct guardian *gd;
	bool proc; /* the tracer is (or was) a process: cabbpf reaps the target */
	/* in the tracer process: its end of the channel, SIGCHLD's signalfd,
	 * whether cabbpf's socket end has closed (since when) */
	const struct guardian_end *end;
	int sigfd;
	bool orphan;
	struct timespec orphan_t0;
	int *kept; /* the probe links it was given */
	size_t nkept, kept_cap;
};

/* guard_tracer__give_back's choice, when letting go: the slots of the
 * threads armed in their call, or of those stopped. */
enum give_back { GIVE_BACK_ARMED, GIVE_BACK_STOPPED };

static inline long guard_ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* guard_sites.c */
/* The sites of the file at path, unless it was looked at already.
 * Returns 0 or -ENOMEM. Loader thread. */
int guard_sites__scan(struct guard *g, const char *path);
/* The sites of the target's executable exe and of the libraries that may
 * hold some, as its loader would find them. Returns 0 or -ENOMEM. */
int guard_sites__scan_target(struct guard *g, const char *exe);

/* guard_proc.c */
/* In a tracer process, takes the loader's messages waiting on the
 * channel (a new set of objects, links to keep, probe sites); elsewhere
 * nothing. */
void guard_proc__messages(struct guard *g);

/* guard_tracer.c */
/* The tracer's state of thread tid, or NULL if it holds none. */
struct gthread *guard_tracer__thread(struct guard *g, pid_t tid);
/* The state of tid, tracked from now on (marked held for the BPF
 * program); NULL: out of memory. */
struct gthread *guard_tracer__track(struct guard *g, pid_t tid);
/* The uretprobe trampoline's address in the target, 0 until it has one. */
uint64_t guard_tracer__trampoline(struct guard *g);
/* Reads the 8 bytes at addr in tid. Returns 0 or -errno. */
int guard_tracer__peek(pid_t tid, uint64_t addr, uint64_t *v);
/* Puts orig back in tid's slot if it holds the trampoline. Returns 1 if
 * written, else 0. */
int guard_tracer__restore_slot(struct guard *g, pid_t tid, uint64_t slot, uint64_t orig);
/* Calls fn for each (tid, slot, original return address) the kernel holds
 * for the target, or for the one task li names. Returns false when the
 * list cannot be read. */
bool guard_tracer__walk_pending(struct guard *g, union bpf_iter_link_info *li,
				void (*fn)(struct guard *g, const uint64_t rec[3], void *arg),
				void *arg);
/* Gives back the slots of the threads which selects. Returns false when
 * the kernel's list cannot be read. */
bool guard_tracer__give_back(struct guard *g, enum give_back which);
/* Serves the BPF program's request for tid, if any. Returns true if there
 * was one (the SIGSTOP that stopped tid is then ours). */
bool guard_tracer__serve(struct guard *g, pid_t tid);
/* Continues tracee tid, delivering sig (0: none). */
void guard_tracer__resume(pid_t tid, int sig);
/* Seizes every thread of the target. Returns 0, -ESRCH (none left) or
 * -errno of PTRACE_SEIZE. */
int guard_tracer__seize_all(struct guard *g);
/* --lossless: whether tid was asked to stop at the rings' high-water mark
 * (*ts, unless NULL: since when). */
bool guard_tracer__throttled_since(struct guard *g, pid_t tid, uint64_t *ts);
/* Lets held thread t go (continued if resume_it). */
void guard_tracer__unhold(struct guard *g, struct gthread *t, bool resume_it);
/* Resumes the held threads once a drain round after their stop ended
 * below the low-water mark. */
void guard_tracer__release_held(struct guard *g);
/* Handles wait status st of tracee tid. */
void guard_tracer__handle(struct guard *g, pid_t tid, int st);

/* guard_forks.c */
/* Cleans and lets go of tid if it is a guarded process's fork's child
 * (its stop at birth). Returns true if it was one. */
bool guard_forks__child(struct guard *g, pid_t tid);

/* guard_letgo.c */
/* Lets go of the whole process: every return address given back, every
 * thread detached. */
void guard_letgo__detach_all(struct guard *g);

#endif
