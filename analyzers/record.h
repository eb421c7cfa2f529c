/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The pipeline's CAB record: how the loader (user/) re-stages one
 * struct cabbpf_event into a per-processor CAB chunk, and how analyzers read
 * it back. The thread id and the sequence number of the first record live in
 * the chunk header (struct cab_chunk); records in a chunk are consecutive in
 * the thread's program order, so they need neither.
 *
 *   w0 = kind << 56 | fid     kind is 1..0x7f: w0 is never CAB_CLEAR (0)
 *                             nor CAB_MAGIC (~0), as cab/cab.h requires
 *   w1 = ts                   ns, bpf_ktime_get_ns()
 *   w2 = sp                   user stack pointer at the probe
 */
#ifndef ANALYZERS_RECORD_H
#define ANALYZERS_RECORD_H

#include <stdint.h>

#define REC_WORDS 3

struct rec {
	uint32_t kind; /* enum cabbpf_kind */
	uint32_t fid;
	uint64_t ts;
	uint64_t sp;
};

static inline void rec__encode(uint64_t *w, uint32_t kind, uint32_t fid, uint64_t ts, uint64_t sp)
{
	w[0] = (uint64_t)(kind & 0x7f) << 56 | fid;
	w[1] = ts;
	w[2] = sp;
}

static inline void rec__decode(const uint64_t *w, struct rec *r)
{
	r->kind = (uint32_t)(w[0] >> 56);
	r->fid = (uint32_t)w[0];
	r->ts = w[1];
	r->sp = w[2];
}

#endif /* ANALYZERS_RECORD_H */
