/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The pipeline's CAB record: how the loader (user/) re-stages one
 * struct cabbpf_event into a per-processor CAB chunk, and how analyzers read
 * it back. The thread id and the sequence number of the first record live in
 * the chunk header (struct cab_chunk); records in a chunk are consecutive in
 * the thread's program order, so they need neither.
 *
 *   w0 = kind << 56 | epoch << 32 | fid
 *                             fid's top bit (REC_FID_NORET) on an entry:
 *                             the probe armed no return for that call
 *                             kind is 1..0x7f: w0 is never CAB_CLEAR (0)
 *                             nor CAB_MAGIC (~0), as cab/cab.h requires;
 *                             epoch: the sampling window, low 24 bits
 *                             (REC_EPOCH_MASK; 0 without sampling)
 *   w1 = ts                   ns, bpf_ktime_get_ns()
 *   w2 = sp                   user stack pointer at the probe; on an
 *                             entry, bits 47-63 hold the return-address
 *                             slot's word (CABBPF_SLOT_*, REC_SP_BITS),
 *                             0 when not known or sp does not fit
 */
#ifndef ANALYZERS_RECORD_H
#define ANALYZERS_RECORD_H

#include <stdint.h>

#include "cabbpf_event.h"

#define REC_WORDS 3
#define REC_EPOCH_MASK 0xffffffu
/* An entry whose return the probe did not arm (bpf/trace.bpf.c, whole-
 * container tracing: its process was not guarded yet): its frame will
 * get no return event (pipeline/shadow.h). CABBPF_FID_NORET in events. */
#define REC_FID_NORET 0x80000000u

/* Bits of an entry's sp; above them its slot word (x86-64 user stacks
 * lie below 2^47 unless a program maps one higher on purpose). */
#define REC_SP_BITS 47
#define REC_SP_MASK ((1ULL << REC_SP_BITS) - 1)
_Static_assert(REC_SP_BITS + CABBPF_SLOT_BITS == 64, "an entry's w2: sp and slot word");

struct rec {
	uint32_t kind; /* enum cabbpf_kind */
	uint32_t fid;
	uint32_t epoch; /* sampling window (mod 2^24) */
	uint32_t slot;	/* an entry's slot word (CABBPF_SLOT_*), else 0 */
	uint64_t ts;
	uint64_t sp;
};

/* w2 of an entry at sp whose slot word is slot. */
static inline uint64_t rec__entry_sp(uint64_t sp, uint32_t slot)
{
	if (sp > REC_SP_MASK)
		return sp; /* no room: the slot stays unknown */
	return sp | (uint64_t)(slot & ((1u << CABBPF_SLOT_BITS) - 1)) << REC_SP_BITS;
}

static inline void rec__encode_epoch(uint64_t *w, uint32_t kind, uint32_t fid, uint32_t epoch,
				     uint64_t ts, uint64_t sp)
{
	w[0] = (uint64_t)(kind & 0x7f) << 56 | (uint64_t)(epoch & REC_EPOCH_MASK) << 32 | fid;
	w[1] = ts;
	w[2] = sp;
}

/* A record of no sampling window (epoch 0). */
static inline void rec__encode(uint64_t *w, uint32_t kind, uint32_t fid, uint64_t ts, uint64_t sp)
{
	rec__encode_epoch(w, kind, fid, 0, ts, sp);
}

static inline void rec__decode(const uint64_t *w, struct rec *r)
{
	r->kind = (uint32_t)(w[0] >> 56);
	r->fid = (uint32_t)w[0];
	r->epoch = (uint32_t)(w[0] >> 32) & REC_EPOCH_MASK;
	r->ts = w[1];
	r->sp = w[2];
	r->slot = 0;
	if (r->kind == CABBPF_EV_ENTRY && r->sp > REC_SP_MASK &&
	    (r->sp >> REC_SP_BITS) & CABBPF_SLOT_KNOWN) {
		r->slot = (uint32_t)(r->sp >> REC_SP_BITS);
		r->sp &= REC_SP_MASK;
	}
}

/*
 * An I/O record (kind CABBPF_EV_IO), same 3 words:
 *
 *   w0 = 3 << 56 | flags << 52 | fdkind << 48 | sc << 40 | (uint32_t)fd
 *                             never 0 nor ~0 (kind is 3)
 *   w1 = ts                   ns, at the syscall's exit
 *   w2 = req << 32 | ret      requested and returned bytes, each clamped to
 *                             32 bits (Linux moves < 2^31 bytes per call);
 *                             with CABBPF_IO_ERR, ret is the errno
 */
struct rec_io {
	uint32_t sc;	 /* enum cabbpf_sc */
	uint32_t fdkind; /* enum cabbpf_fdkind */
	uint32_t flags;	 /* CABBPF_IO_* */
	int32_t fd;	 /* -1: no fd (msgrcv/msgsnd) */
	uint64_t ts;
	uint32_t req;
	uint32_t ret; /* bytes, or errno with CABBPF_IO_ERR */
};

static inline uint32_t rec__clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static inline void rec__encode_io(uint64_t *w, const struct rec_io *r)
{
	w[0] = (uint64_t)3 << 56 | (uint64_t)(r->flags & 0xf) << 52 |
	       (uint64_t)(r->fdkind & 0xf) << 48 | (uint64_t)(r->sc & 0xff) << 40 | (uint32_t)r->fd;
	w[1] = r->ts;
	w[2] = (uint64_t)r->req << 32 | r->ret;
}

static inline void rec__decode_io(const uint64_t *w, struct rec_io *r)
{
	r->flags = (uint32_t)(w[0] >> 52) & 0xf;
	r->fdkind = (uint32_t)(w[0] >> 48) & 0xf;
	r->sc = (uint32_t)(w[0] >> 40) & 0xff;
	r->fd = (int32_t)(uint32_t)w[0];
	r->ts = w[1];
	r->req = (uint32_t)(w[2] >> 32);
	r->ret = (uint32_t)w[2];
}

#endif /* ANALYZERS_RECORD_H */
