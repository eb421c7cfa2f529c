/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The recording file (cabbpf record -o FILE): writer and reader of the
 * format documented in docs/record-format.md. A 16-byte header (magic
 * "CABBPFRC", version, flags), then one zstd stream (content checksum on)
 * of blocks, each {u32 type, u32 length, payload}, little-endian:
 *
 *   META     the target and the run's options (once, first)
 *   FUNCS    the function table: names, linkage names, binaries, sites,
 *            measured probe costs (once, second)
 *   CHUNK    one CAB chunk as the analyzers took it: tid, sequence number
 *            of the first record, the records (pipeline/record.h)
 *   SUMMARY  what the run's report says around the analyzers: duration,
 *            events, lost and dropped by kind and CPU, CAB counters, stop
 *            reason, exit status, guard counters (once, after the chunks)
 *   SOURCE   where each function is: source file and line, binary (path,
 *            build id), address (version 2; optional, after SUMMARY)
 *   END      chunk and record totals, checked by the reader (once, last)
 *
 * A reader never trusts the file: every length is bounded, every field
 * read inside its block, the blocks' order checked; an error names the
 * byte where it was found. Writer: one thread at a time (the recorder
 * serializes); reader: one thread.
 */
#ifndef USER_RECORD_RECFMT_H
#define USER_RECORD_RECFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzers/analyzer.h"
#include "cab/cab.h"
#include "user/kernel/features.h"
#include "user/trace/guard.h"

#define RECFMT_MAGIC "CABBPFRC"
/* 2: the SOURCE block (1 is still read: no source lines); 3: SUMMARY ends
 * with the probes' thread-state counts (1 and 2 are read without them);
 * 4: then each CPU's ring size; 5: then the unseen switch-ins; 6: then the
 * guard's waits at detach; 7: then the kernel traced on (its features);
 * 8: entry records carry their return-address slot's word above sp
 * (pipeline/record.h; earlier files' entries have none: not known); 9:
 * SUMMARY then has the sampled times' period and samples left out; 10:
 * then the clock's kernel-mode samples (in system calls, in traps); 11:
 * then its samples in page faults and late ticks; 12: FORK and FORKED
 * records (include/cabbpf_event.h: a forked child's parent's frames),
 * which a reader of 11 would take for bad records */
#define RECFMT_VERSION 12u
#define RECFMT_HEADER_BYTES 16
/* Bounds a reader enforces (a corrupt length must not allocate gigabytes). */
#define RECFMT_MAX_BLOCK (256u << 20)
#define RECFMT_MAX_STR 65535u
#define RECFMT_MAX_CHUNK_RECS (1u << 20)
#define RECFMT_MAX_CPUS 4096u

enum recfmt_block {
	RECFMT_META = 1,
	RECFMT_FUNCS = 2,
	RECFMT_CHUNK = 3,
	RECFMT_SUMMARY = 4,
	RECFMT_END = 5,
	RECFMT_SOURCE = 6,
};

/* META flags */
#define RECFMT_F_ENTRY_ONLY 0x1 /* no return probes (--entry-only, Go) */
#define RECFMT_F_CPU_TIME 0x2	/* switch events traced: on-CPU times real */
#define RECFMT_F_NO_TIMES 0x4	/* --no-times */
#define RECFMT_F_MULTI 0x8	/* multi-uprobe links */
#define RECFMT_F_CAB_SAMPLING 0x10 /* --cab-mode sampling */
#define RECFMT_F__ALL 0x1f

struct recfmt_meta {
	int32_t pid;
	const char *comm;
	const char *binary;
	uint32_t flags; /* RECFMT_F_* */
	uint32_t ncpus;
	uint64_t start_realtime_ns; /* CLOCK_REALTIME when the run started */
	const char *tool;	    /* "cabbpf 0.1.0" */
};

struct recfmt_funcs {
	uint32_t n;
	const char *const *names;    /* report names (demangled) */
	const char *const *lnames;   /* linkage names; entries may be NULL */
	const char *const *binaries; /* NULL entries: the main executable */
	const uint64_t *offsets;     /* probe site (file offset), or a TRACE_* mark */
	const double *probe_ns;	     /* measured cost of a probed call, or NULL */
	/* version 9: the probes' aftermath the time sampler sees, ns
	 * (an_ctx.aft_in, aft_out), or NULL */
	const uint32_t *aft_in, *aft_out;
};

/* SOURCE: where each function of FUNCS is (analyzers/analyzer.h). */
struct recfmt_source {
	uint32_t n;		  /* FUNCS' n */
	const struct an_src *src; /* n entries; .bin < nbins */
	uint32_t nbins;
	const struct an_bin *bins;
};

struct recfmt_summary {
	uint32_t nfuncs, refused;
	double duration_s, cpu_s;
	uint64_t events, lost, lost_calls, lost_io, lost_guard, lost_sched, sched_busy;
	uint64_t reentry;
	/* version 3: threads whose state went to task storage, events lost
	 * for want of a state (user/report/report.h); has_tstates false before */
	bool has_tstates;
	uint64_t tstab_taken, nostate;
	/* version 4: each CPU's kernel ring, bytes (0: unknown, before) */
	uint64_t ring_bytes;
	/* version 5: switch-ins the tracepoint never reported (0 before) */
	uint64_t sched_unseen;
	uint32_t ncpus;
	const uint64_t *lost_per_cpu; /* 3 x ncpus: calls, then I/O, then guard */
	struct cab_stats cab;
	const char *stop_reason;
	bool exited, exec_other, has_guard;
	bool exec_thread; /* the last execve was called by a thread, not main */
	int32_t exit_status;
	uint64_t execs;
	bool has_forks;  /* version 8 on: forks known */
	uint64_t forks;  /* new processes the target started (not traced) */
	/* version 9: --times sampled's period (0: not sampled, or before)
	 * and its samples left out (struct summary) */
	uint64_t cpu_sample_ns, samples_probe, samples_nostate, samples_lost;
	/* version 10: whether the clock sampled kernel mode too, and its
	 * samples in system calls (kept) and in traps (left out) */
	uint32_t samples_kernel; /* enum an_ktime: 1 in version 10, 2 on */
	uint64_t samples_syscall, samples_trap;
	/* version 11: its samples in the program's page faults (kept), and
	 * those delivered as a probe's trap returned (left out) */
	uint64_t samples_fault, samples_resume;
	struct guard_stats guard;
	/* version 7: the kernel the trace was taken on (user/kernel/
	 * features.h); has_kernel false before, or when the writer had none */
	bool has_kernel;
	struct kernel_features kernel;
};

/* ------------------------------------------------------------- writer -- */

struct recfmt_writer;

/* Start a recording into f (the caller keeps f; zstd level lvl). Writes
 * the header. Returns 0 and *out (free with recfmt__writer_free), -ENOMEM
 * or -EIO. */
int recfmt__writer_new(FILE *f, int lvl, struct recfmt_writer **out);
/* Each returns 0, -ENOMEM, -EIO (write failed) or -EINVAL (a string
 * longer than RECFMT_MAX_STR). Errors are sticky: after one, every call
 * returns it. */
int recfmt__put_meta(struct recfmt_writer *w, const struct recfmt_meta *m);
int recfmt__put_funcs(struct recfmt_writer *w, const struct recfmt_funcs *fn);
int recfmt__put_chunk(struct recfmt_writer *w, uint32_t tid, uint64_t seq, const uint64_t *recs,
		      uint32_t nrec);
int recfmt__put_summary(struct recfmt_writer *w, const struct recfmt_summary *s);
/* After the summary, before finishing (optional). */
int recfmt__put_source(struct recfmt_writer *w, const struct recfmt_source *s);
/* The END block, the end of the zstd stream, flushed to f. */
int recfmt__finish(struct recfmt_writer *w);
/* Bytes given to the compressor (blocks), bytes written to f so far, and
 * records put. Any thread, once the writer's thread is done. */
void recfmt__writer_stats(const struct recfmt_writer *w, uint64_t *raw, uint64_t *written,
			  uint64_t *records);
void recfmt__writer_free(struct recfmt_writer *w);

/* ------------------------------------------------------------- reader -- */

/* One block read back. Pointers are the reader's, valid until the next
 * recfmt__next (CHUNK) or until recfmt__reader_free (META, FUNCS,
 * SUMMARY). */
struct recfmt_item {
	enum recfmt_block type;
	uint32_t tid, nrec; /* CHUNK */
	uint64_t seq;
	const uint64_t *recs;
	uint64_t offset; /* where the block starts in the decompressed stream */
};

struct recfmt_reader;

/*
 * Read the recording in f (kept by the caller; name is for messages).
 * Checks the header. Returns 0 and *out (free with recfmt__reader_free),
 * or -EINVAL (not a recording, or a version this build cannot read; said
 * on stderr), -ENOMEM.
 */
int recfmt__reader_new(FILE *f, const char *name, struct recfmt_reader **out);
/*
 * The next block into *it. Returns 1, 0 after the END block (totals
 * checked), or -EINVAL (corrupt or truncated: said once on stderr with the
 * byte position), -EIO, -ENOMEM.
 */
int recfmt__next(struct recfmt_reader *r, struct recfmt_item *it);
/* After the META / FUNCS / SUMMARY blocks were read; else NULL. */
const struct recfmt_meta *recfmt__meta(const struct recfmt_reader *r);
const struct recfmt_funcs *recfmt__funcs(const struct recfmt_reader *r);
const struct recfmt_summary *recfmt__summary(const struct recfmt_reader *r);
/* After a SOURCE block was read; else NULL (version 1, or a writer that
 * had none). */
const struct recfmt_source *recfmt__source(const struct recfmt_reader *r);
/* The format version of the file. */
uint32_t recfmt__version(const struct recfmt_reader *r);
void recfmt__reader_free(struct recfmt_reader *r);

#endif /* USER_RECORD_RECFMT_H */
