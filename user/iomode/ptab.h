/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/iomode/ptab — a table of heap entries, each starting with its key
 * (klen bytes, compared whole: zero the padding), indexed by a 64-bit hash
 * with linear probing on the hash value itself. --io's tables of kernel
 * keys (processes, files) and of commands. Entries are only removed all
 * at once (ptab__split, ptab__fini), so probing stays valid.
 *
 * Threads: one at a time (no locking).
 */
#ifndef USER_IOMODE_PTAB_H
#define USER_IOMODE_PTAB_H

#include <stdbool.h>
#include <stddef.h>

#include "common/hmap.h"

/* A pointer table keyed by a 64-bit hash with linear probing on the hash
 * value itself; entries start with their key (klen bytes). Entries are never
 * removed, so probing stays valid. */
struct ptab {
	struct hmap m;
	void **v;
	size_t n, cap;
};

/* The entry with key key, or when create a new one (esize bytes, zeroed,
 * key copied), owned by t. Returns NULL if absent or out of memory. */
void *ptab__get(struct ptab *t, const void *key, size_t klen, size_t esize, bool create);

/* Add entry e (heap memory t then owns; its key: its first klen bytes;
 * not in t yet). Returns 0 or -ENOMEM (t unchanged). */
int ptab__put(struct ptab *t, void *e, size_t klen);

/* Split t: the entries keep(ctx, e) says no to go, in order, to *out (an
 * array of *nout entries; the caller frees the array and the entries), the
 * others stay. Returns 0, or -ENOMEM with t unchanged. */
int ptab__split(struct ptab *t, size_t klen, bool (*keep)(void *ctx, const void *e), void *ctx,
		void ***out, size_t *nout);

/* Free every entry (fr first, when given) and the index. */
void ptab__fini(struct ptab *t, void (*fr)(void *));

#endif /* USER_IOMODE_PTAB_H */
