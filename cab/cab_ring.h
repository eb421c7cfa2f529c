/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The producer's fast path of the CAB ring (Ha et al., OOPSLA 2009, fig. 3a and 5a),
 * inline so that an enqueue costs one load, one compare-and-branch and the
 * stores of the record. Included by cab/cab.h; do not include it directly.
 *
 * struct cab starts with struct cab__hot (cab/cab.c asserts it), which
 * holds everything the fast path reads; it is written only by the producer
 * and shares its cache line with no consumer-written field.
 */
#ifndef CAB_CAB_RING_H
#define CAB_CAB_RING_H

#include <assert.h>
#include <stdatomic.h>
#include <stdint.h>

struct cab;

struct cab__hot {
	uint64_t *ptr; /* next slot: first word of the next record */
	/*
	 * The one test of the fast path is "(w + add) < lim" on the slot's
	 * first word w. Exhaustive mode: add = lim = ~0, which is true
	 * exactly when w != CAB_CLEAR (a record not consumed yet, or MAGIC).
	 * Sampling mode: add = lim = 1, true exactly when w == CAB_MAGIC
	 * (the producer ignores unread records and overwrites them). Folding
	 * the mode into two constants keeps a single branch for both modes.
	 */
	uint64_t add;
	uint64_t lim;
	unsigned words; /* record_words */
};

/* [producer] Out-of-line part of cab__put(): wraps at MAGIC, crosses chunk
 * boundaries, blocks while the ring is full (exhaustive). Returns the slot
 * to write. Not for direct use. */
uint64_t *cab__put_slow(struct cab *c);

/* Slot words are plain uint64_t so that the consumer can read a chunk it
 * has taken as an ordinary array; the words the two threads race on are
 * accessed through these atomic views. uint64_t and _Atomic uint64_t have
 * the same size and alignment on every lock-free 64-bit target. */
static inline uint64_t cab__slot_load(const uint64_t *p)
{
	/* Acquire pairs with the consumer's release store of CAB_CLEAR in
	 * cab__release(): the consumer's reads of the old record happen
	 * before our overwrite. */
	return atomic_load_explicit((_Atomic uint64_t *)p, memory_order_acquire);
}

static inline void cab__slot_store(uint64_t *p, uint64_t v)
{
	/* Release pairs with the consumer's acquire load of the next chunk's
	 * first word in cab__take() (exhaustive), and with its acquire fence
	 * after copying a burst (sampling). On x86-64 this is a plain mov. */
	atomic_store_explicit((_Atomic uint64_t *)p, v, memory_order_release);
}

/*
 * [producer] Append one record of n words, n == record_words. Use it where
 * the record size is a compile-time constant: the copy loop then unrolls
 * and the enqueue is the test plus n stores. Ownership: rec is read, not
 * kept.
 */
static inline void cab__put_n(struct cab *c, const uint64_t *rec, unsigned n)
{
	struct cab__hot *h = (struct cab__hot *)(void *)c;
	uint64_t *p = h->ptr;
	unsigned i;

#ifndef NDEBUG
	/* cab/cab.h: a first word of 0 or ~0 would read as CLEAR or MAGIC. */
	assert(rec[0] != 0 && rec[0] != ~0ULL && n == h->words);
#endif
	if (__builtin_expect(cab__slot_load(p) + h->add < h->lim, 0))
		p = cab__put_slow(c);
	for (i = 0; i < n; i++)
		cab__slot_store(p + i, rec[i]);
	h->ptr = p + n;
}

static inline void cab__put(struct cab *c, const uint64_t *rec)
{
	cab__put_n(c, rec, ((struct cab__hot *)(void *)c)->words);
}

#endif /* CAB_CAB_RING_H */
