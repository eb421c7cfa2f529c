/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Whole-container tracing's state, shared by its files (not a public API;
 * the design is in whole.h):
 *   whole.c        the interface: open, scan the cgroup, start, poll, stop,
 *                  free; small helpers the others share;
 *   whole_image.c  an executable's or library's functions selected and
 *                  numbered into the shared table;
 *   whole_proc.c   a process looked at, guarded and armed.
 * The loader's main thread calls all of them.
 */
#ifndef CABBPF_WHOLE_INT_H
#define CABBPF_WHOLE_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "common/hmap.h"
#include "user/trace/whole.h"

/* How much later than a look an exec's event may be stamped when the look
 * already saw the exec's result (whole_proc__look_at). */
#define EXEC_LAG_NS 50000000ULL
/* The table's room by default: enough for tens of executables of a few
 * thousand functions; an image that does not fit is left out, said. */
#define DEFAULT_ROOM 65536u
/* Guards (each a ptrace tracer thread and a BPF object) at once; past it
 * a process is traced without return probes, said. */
#define MAX_GUARDS 256
#define SCAN_PERIOD_S 0.1
/* Threads that free stopped guards (whole_proc.c) */
#define REAPERS 8
/* Processes found while tracing, said one a line on stderr */
#define MAX_SAID 100

/* A program as the kernel names it at an exec (its inode's superblock
 * s_dev, kernel encoding, and inode number: the exec event's fid and sp),
 * once a process running it was looked at: a later process that execs it
 * and ends before a look is named after it. */
struct wkey {
	uint32_t dev;
	uint64_t ino;
	struct wimage *img;
	char comm[16];
	char *exe;
};

/* A probed file (an executable or a library): each once, whatever the
 * number of processes or images that map it. */
struct wfile {
	dev_t dev;
	ino_t ino;
};

struct wimage {
	dev_t dev;
	ino_t ino;
	char *path; /* as opened and probed (through /proc/PID/root) */
	char *base; /* its file name: the prefix of its functions' names */
	struct symtab *st;
	size_t *idx, n;
	char **labels; /* IFUNC labels, nlabels entries */
	size_t nlabels;
	char **fnames; /* "base:function", n entries */
	struct plan *plan;
	struct libs *libs;
	bool *lib_dup; /* per library: probed already through another image */
	uint32_t fid0, nfids;
	/* why its runtime reads return addresses ("a Go program ..."), or
	 * NULL: never armed (user/elf/lang.h); points into walker_why */
	const char *walker;
	char walker_why[128];
	const char *why;   /* nothing traced: why (static) */
	double attached_s; /* when its probes went in (0: at the start) */
	bool late;	   /* attached while the run was on */
};

struct wproc {
	struct whole_proc pub;
	struct wimage *img;
	struct guard *g;
	bool pending;		       /* in the queue, to be looked at */
	bool ended;		       /* gone from the cgroup (its pid may come back, reused) */
	bool looked;		       /* looked at before */
	uint64_t execs_looked;	       /* pub.execs at the last look */
	uint64_t look_ns;	       /* when (CLOCK_MONOTONIC: bpf_ktime_get_ns's) */
	uint64_t exec_ts;	       /* its last exec event's time (0: not known) */
	const struct wimage *said_img; /* said on stderr with this image */
	int said_from;		       /* and pub.from + 1 */
	double held_since;	       /* > 0: another guard of ours holds it (a fork) */
	bool held_exec;		       /* being looked at while held at its exec */
	pid_t parent;		       /* the process that forked it (its FORK event), or 0 */
	uint32_t exec_dev;	       /* its last exec's program (the event's fid, sp) */
	uint64_t exec_ino;
};

struct whole {
	struct whole_opts o;
	char what[PATH_MAX + 64];
	const char *exe_globs[256];
	size_t nexe;
	bool lib_selectors;
	struct whole_table t;
	struct wimage **imgs;
	size_t nimgs, capimgs;
	struct wfile *files;
	size_t nfiles, capfiles;
	struct hmap procs; /* pid -> struct wproc * */
	size_t nheld;	   /* processes with held_since set */
	pid_t *queue;	   /* pending pids, in the order found */
	size_t nq, capq;
	uint32_t last_pid; /* whole__see's shortcut */
	struct trace *tr;
	struct guard_maps gm;
	bool started, gate;
	double now, next_scan;
	unsigned long long t0_ticks; /* the start, in /proc/PID/stat's clock */
	size_t nguards;
	bool any_guard;
	struct guard_stats gsum;
	struct wproc **sorted;
	size_t nsorted;
	bool table_full_said;
	size_t nsaid; /* processes found while tracing said on stderr */
	/* --follow-forks: the root started (no more held before its first
	 * instruction); its end, once a guard of ours reaped it */
	bool root_started, root_done;
	int root_status;
	/* the exec hold (whole_hold.c): the releaser's pipe (-1: none), the
	 * exec_images map, what the holds cost */
	int hold_wr, images_fd;
	/* stopped guards freed by a thread of their own (whole_proc.c) */
	pthread_t reap_thr[REAPERS];
	size_t nreapers;
	pthread_mutex_t reap_mu;
	pthread_cond_t reap_cv;
	struct guard **reap;
	size_t nreap, capreap;
	bool reap_started, reap_end;
	/* programs by their exec key (struct wkey) */
	struct wkey *keys;
	size_t nkeys, capkeys;
	struct whole_hold_figures hold;
};


/* whole.c */
/* Grows *v (elements of size bytes, *cap of them) to hold n. Returns 0
 * or -ENOMEM (*v unchanged). */
int whole__grow(void **v, size_t *cap, size_t n, size_t size);
/* The first line of /proc/PID/name into buf ("" when unreadable). */
void whole__proc_line(pid_t pid, const char *name, char *buf, size_t len);
/* The container id of pid's cgroup v2 path, or "". */
void whole__proc_container(pid_t pid, char *id, size_t len);
/* Whether the ELF file at path asks for a dynamic loader (PT_INTERP). */
bool whole__is_dynamic(const char *path);
/* Whether the file (dev, ino) is probed already; whole__file_add makes it
 * so (0 or -ENOMEM). */
bool whole__file_known(struct whole *w, dev_t dev, ino_t ino);
int whole__file_add(struct whole *w, dev_t dev, ino_t ino);

/* whole_image.c */
/* Frees an image's own memory (not im itself). */
void whole_image__free(struct wimage *im);
/* The image of the executable at path (sb: its stat; exe: the path the
 * process names), made (and attached, the run on) if new. Returns it, or
 * NULL (out of memory). */
struct wimage *whole_image__of(struct whole *w, const char *path, const struct stat *sb,
			       const char *exe, pid_t pid, const char *comm);

/* p's program (looked at) under its exec key (dev, ino), if not known
 * yet (out of memory: not kept). */
void whole__key_note(struct whole *w, uint32_t dev, uint64_t ino, const struct wproc *p);

/* whole_hold.c */
/* After whole__start's w->tr: the releaser that lets go of the processes
 * held at their exec should cabbpf die (w->hold_wr). Returns 0 (also when
 * the trace holds nothing) or -errno (logged). */
int whole_hold__start(struct whole *w);
/* Every process held at its exec: looked at unless a look came since,
 * its program noted as known, let go; the time each was held counted. */
void whole_hold__sweep(struct whole *w);
/* Whether pid is held at its exec now. */
bool whole_hold__held(struct whole *w, pid_t pid);
/* The run's end (gate closed): every process still held let go, the
 * releaser told it has nothing to do. */
void whole_hold__end(struct whole *w);

/* whole_proc.c */
/* Process pid's entry, made on first sight (*created then true, how it
 * was found kept). NULL: out of memory. */
struct wproc *whole_proc__get(struct whole *w, pid_t pid, enum whole_found how, bool *created);
/* p to be looked at by the next poll. */
void whole_proc__enqueue(struct whole *w, struct wproc *p);
/* Every guard given to the reaper freed (it waits); the reaper ends. */
void whole_proc__reaper_end(struct whole *w);
/* p's guard stopped (its figures summed) and given to the reaper to
 * free, if it had one. */
void whole_proc__guard_done(struct whole *w, struct wproc *p);
/* Lets p's calls arm return probes once nothing in it can read one
 * unwatched (path: its executable). */
void whole_proc__guard_and_arm(struct whole *w, struct wproc *p, const char *path);
/* Who p is now: its executable, image, names; then (the run on) its guard
 * and arming. Returns 0, or -ENOMEM. */
int whole_proc__look_at(struct whole *w, struct wproc *p);
/* When pid started, and now, in clock ticks since boot (0: unreadable). */

#endif
