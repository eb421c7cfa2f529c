/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cabbpf --io: the user-space side of the in-kernel I/O aggregates
 * (bpf/iotrace.bpf.c, maps "iostats" and "iofiles"). iostat__collect reads both
 * maps (cumulative per-CPU counters), keeps a copy of every key, and for a
 * process that has exited moves its counters into a retired total and
 * deletes its keys from the kernel maps, so the maps do not fill up with the
 * dead on a busy machine over minutes. Names (command, file path, socket
 * peer, cgroup path, container) are resolved while the process is alive and
 * kept. A process whose last thread ended with counts not yet in the maps
 * sends them whole through the ring "iodone" (struct cabbpf_iodone), read
 * by iostat__drain: most short-lived processes never take a key.
 *
 * Known limit: a pid reused by a new process between the liveness check and
 * the deletion of the old process's keys (microseconds) loses that new
 * process's first calls. Keys that the kernel could not create because a
 * map was full are counted there (CABBPF_IOSTAT_*_FULL) and reported.
 *
 * Main thread only.
 */
#ifndef USER_IOSTAT_H
#define USER_IOSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cabbpf_event.h"

struct iostat;

struct iostat_opts {
	int stats_fd;       /* "iostats" map */
	int files_fd;       /* "iofiles" map */
	int cgnames_fd;     /* "cgnames" map, or -1 */
	int done_fd;	    /* "iodone" ring of ended processes' slots, or -1 */
	unsigned ncpus;     /* values per key */
	const char *cgroot; /* cgroup v2 mount point, for cgroup paths; may be NULL */
	unsigned top;       /* rows per text table; 0 = 20 */
	unsigned keep;	    /* ended processes kept one by one; 0 = 10000 */
};

/* Returns 0 and *out (free with iostat__free) or -ENOMEM / -EINVAL. */
int iostat__new(const struct iostat_opts *o, struct iostat **out);

/* Read both maps, retire exited processes. Returns 0 or -errno. */
int iostat__collect(struct iostat *s);

/* Read the "iodone" ring: each ended process's slot is added to that
 * process's retired figures. Cheap when it is empty: call it every tick.
 * Returns 0 or -errno. */
int iostat__drain(struct iostat *s);

/* Text: one interval's line per busiest process (since the previous call),
 * then remember the totals. secs = interval length. */
void iostat__print_interval(struct iostat *s, FILE *f, double secs);

/* Run summary handed to the reports (user/report/io_report.h). */
struct iostat_run {
	double duration_s;
	double startup_s;	  /* from cabbpf's exec to watching; < 0 when unknown */
	uint64_t counts[CABBPF_IOSTAT__MAX]; /* the BPF counters */
	pid_t pid;                /* -p, or 0 */
	const char *cgroup;       /* --cgroup / resolved --container path, or NULL */
	const char *container;    /* --container as given, or NULL */
	const char *stop_reason;
	double cpu_s;             /* cabbpf's own CPU time (user + system) */
	const struct outputs *outputs; /* files written before --json, or NULL */
};

/* The reports of a run are user/report/io_report.h's; the figures they
 * read, iostat_groups.h. */

/* Totals over every process (for tests and the summary line). */
uint64_t iostat__calls(const struct iostat *s);

/* Free; NULL is fine. */
void iostat__free(struct iostat *s);

#endif /* USER_IOSTAT_H */
