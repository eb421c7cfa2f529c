/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A small open-addressing hash map from uint64_t keys to uint64_t values,
 * used by the analyzers for per-thread and per-edge counters. Linear probing;
 * no deletion, because every analyzer table only grows during a run and is
 * freed whole at the end (that keeps the probe loop a single comparison).
 *
 * Threads: a map has no lock; one thread at a time may use it.
 * Memory: the map owns its table; values that are pointers are the caller's
 * to free (see hmap__next()).
 */
#ifndef ANALYZERS_HMAP_H
#define ANALYZERS_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap_ent {
	uint64_t key;
	uint64_t val;
};

struct hmap {
	struct hmap_ent *ent; /* cap entries */
	uint8_t *used;	      /* cap flags: every key value is legal, so no sentinel */
	size_t cap;	      /* 0 or a power of two */
	size_t len;
};

/* An all-zero struct hmap is a valid empty map; this just spells it out. */
void hmap__init(struct hmap *m);
/* Free the table (not what pointer values point at). NULL is fine. */
void hmap__fini(struct hmap *m);

/* Pointer to key's value, or NULL if absent. Valid until the next insert. */
uint64_t *hmap__find(const struct hmap *m, uint64_t key);

/*
 * Find or insert key. Sets *val to its value slot (0 when just inserted),
 * valid until the next insert. Returns 0 or -ENOMEM (map unchanged).
 */
int hmap__upsert(struct hmap *m, uint64_t key, uint64_t **val);

/*
 * The object stored (as a pointer value) under key, created zeroed with
 * calloc(1, size) when absent; *created (may be NULL) says whether this
 * call made it. Returns NULL when memory ran out (the key then reads as
 * absent: its value stays 0). The objects are the caller's: free them
 * while iterating, before hmap__fini(). The per-thread tables of the
 * analyzers and the runner are built with it.
 */
void *hmap__obj(struct hmap *m, uint64_t key, size_t size, bool *created);

/* Number of keys. */
static inline size_t hmap__len(const struct hmap *m)
{
	return m->len;
}

/*
 * Iterate: start with *it = 0; returns true and one entry per call until
 * the map is exhausted. Inserting while iterating is not allowed.
 */
bool hmap__next(const struct hmap *m, size_t *it, struct hmap_ent **e);

#endif /* ANALYZERS_HMAP_H */
