/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers shared by cab/cab.c and cab/cab_pp.c. Not part of the public API:
 * only files under cab/ include this header.
 */
#ifndef CAB_CAB_INTERNAL_H
#define CAB_CAB_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* One cache line. Producer-owned and consumer-owned state are kept on
 * different lines of this size so that neither side's writes invalidate a
 * line the other side is reading in its hot loop (false sharing). 64 bytes
 * is the line of every x86-64 and most arm64 parts; cab__line_bytes()
 * reports the real one for sizing decisions. */
#define CAB_LINE 64

/* Fallback when sysconf() cannot tell the L1 data cache size (containers,
 * some arm64 kernels): 32 KiB is the L1d of every x86-64 core since 2006. */
#define CAB_L1D_FALLBACK (32u * 1024u)

/* Relaxed counters that one thread writes and any thread may read. Only the
 * owner writes, so a load + store is enough (no locked RMW on the hot side);
 * the atomic type keeps concurrent cab__stats() readers race-free. */
static inline void cab__cnt_add(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
			      memory_order_relaxed);
}

static inline uint64_t cab__cnt(const _Atomic uint64_t *c)
{
	return atomic_load_explicit((_Atomic uint64_t *)c, memory_order_relaxed);
}

/* True when x is a non-zero power of two. */
static inline int cab__is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* Largest power of two <= x (x > 0). */
static inline uint64_t cab__pow2_floor(uint64_t x)
{
	return 1ULL << (63 - __builtin_clzll(x));
}

/* Smallest power of two >= x (x > 0, x <= 2^63). */
static inline uint64_t cab__pow2_ceil(uint64_t x)
{
	return x <= 1 ? 1 : 1ULL << (64 - __builtin_clzll(x - 1));
}

/* L1 data cache size in bytes, rounded down to a power of two; the
 * fallback when the system does not say. Any thread. */
size_t cab__l1d_bytes(void);
/* L1 data cache line size in bytes (64 when unknown). Any thread. */
size_t cab__line_bytes(void);
/* CLOCK_MONOTONIC in nanoseconds. Any thread. */
uint64_t cab__now_ns(void);

/*
 * Back-off for a side that has to wait for the other one. The first calls
 * spin with a pause instruction (the other side is usually a few hundred
 * nanoseconds away from freeing space), later ones sleep with an
 * exponentially growing period capped at 1 ms: sleeping keeps a blocked
 * producer preemptible and off the CPU (Ha et al., OOPSLA 2009, fig. 3b). No
 * sched_yield: next to a CPU-bound thread on the same core, a yield hands
 * it the rest of its time slice (milliseconds), where a short sleep is
 * woken by the timer and preempts it; under two CPU hogs the stress suite
 * took 380 s with 16 yields per wait and 69 s without.
 */
struct cab__backoff {
	unsigned spins;
	unsigned sleep_ns;
};

void cab__backoff_init(struct cab__backoff *b);
void cab__backoff_wait(struct cab__backoff *b);

#endif /* CAB_CAB_INTERNAL_H */
