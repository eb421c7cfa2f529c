/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The I/O side of the BPF programs as the loader sees it: bpf/iotrace.bpf.c
 * through its skeleton. One program on the raw sys_exit tracepoint, in one
 * of two modes:
 *   - events (function tracing): I/O events go into the trace's per-CPU rings
 *     (the "slots" regions) with its per-thread sequence numbers; give the
 *     trace's map fds and ring size in io_opts (see trace__map_fd);
 *   - aggregate (cabbpf --io): per-process and per-file counters in kernel
 *     hash maps, read with iotrace__stats_fd / iotrace__files_fd.
 * Order of use: iotrace__open (open, set rodata, reuse fds, load), iotrace__attach,
 * ..., iotrace__detach, iotrace__free. All calls from the loader's main thread.
 */
#ifndef USER_IO_H
#define USER_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cabbpf_event.h"

struct iotrace_opts {
	pid_t pid;	/* only this process; 0 = every process */
	bool aggregate; /* --io mode; else events into the rings */
	bool floor;	/* attach the empty program (benchmark floor) */
	/* the kernel has no bpf_rdonly_cast (user/kernel/features.h): files
	 * are read with bpf_probe_read_kernel (else tried first, and that the
	 * fallback if refused) */
	bool no_casts;
	int cgroup_fd;	/* open cgroup v2 directory to filter on, or -1 */
	int slots_fd;	/* events mode: the trace's "slots", "heads", */
	int heads_fd;	/* "tstates", "tstab" and "stats" maps; -1 in */
	int tstates_fd; /* aggregate mode */
	int tstab_fd;
	uint32_t tstab_mask; /* events mode: trace__tstab_mask */
	int stats_fd;
	size_t ring_bytes;  /* events mode: ring size per CPU, as the trace's */
	uint32_t max_procs; /* aggregate mode: iostats keys (0 = 16384) */
	uint32_t max_files; /* aggregate mode: iofiles keys (0 = 32768) */
};

struct iotrace;

/* Returns 0 and *out (free with iotrace__free), or -errno after logging why
 * (-EPERM without privileges, the libbpf error otherwise). */
int iotrace__open(const struct iotrace_opts *o, struct iotrace **out);

/* Attach the sys_exit program. Returns 0 or -errno (logged). */
int iotrace__attach(struct iotrace *io);

/*
 * Aggregate mode: move every thread's pending counts (per-thread
 * accumulators in the kernel, see bpf/iotrace.bpf.c) into the maps; call before
 * reading them. A thread busy accounting at that instant keeps its counts
 * until its next flush (at most ~100 ms later). Returns 0 or -errno.
 */
int iotrace__flush(struct iotrace *io);

/* Detach; in aggregate mode, after the sys_exit program is gone, flush
 * everything (nothing is skipped then). Safe to call twice. */
void iotrace__detach(struct iotrace *io);

/* Function-tracing mode: open or close the gate of I/O events (closed
 * after iotrace__open; see trace__gate). NULL is fine. Main thread. */
void iotrace__gate(struct iotrace *io, bool open);

/* The per-CPU counters summed (enum cabbpf_iostat). Returns 0 or -errno. */
int iotrace__counts(struct iotrace *io, uint64_t out[CABBPF_IOSTAT__MAX]);

/* Aggregate mode: fds of the "iostats" and "iofiles" per-CPU hash maps
 * (owned by io). */
int iotrace__stats_fd(const struct iotrace *io);
/* The "cgnames" map (cgroup id -> struct cabbpf_cgname). */
int iotrace__cgnames_fd(const struct iotrace *io);
int iotrace__files_fd(const struct iotrace *io);
/* Aggregate mode: the "iodone" ring of ended processes' slots (struct
 * cabbpf_iodone), read by iostat. Owned by io. */
int iotrace__done_fd(const struct iotrace *io);

/* Number of possible CPUs (values per key of the per-CPU maps). */
unsigned iotrace__ncpus(const struct iotrace *io);

/* Room of the aggregate maps (--io): per-process keys in *stats, per-file
 * keys in *files. Threads: any, after iotrace__open. */
void iotrace__capacity(const struct iotrace *io, uint32_t *stats, uint32_t *files);

/* Free; NULL is fine. Detaches first. */
void iotrace__free(struct iotrace *io);

#endif /* USER_IO_H */
