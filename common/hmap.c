// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hmap.h"

/* splitmix64's finalizer: keys like tid << 32 | fid differ in few bits. */
static inline uint64_t hash64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

void hmap__init(struct hmap *m)
{
	memset(m, 0, sizeof(*m));
}

void hmap__fini(struct hmap *m)
{
	if (!m)
		return;
	free(m->ent);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

uint64_t *hmap__find(const struct hmap *m, uint64_t key)
{
	size_t mask, i;

	if (!m->cap)
		return NULL;
	mask = m->cap - 1;
	for (i = hash64(key) & mask; m->used[i]; i = (i + 1) & mask)
		if (m->ent[i].key == key)
			return &m->ent[i].val;
	return NULL;
}

static int grow(struct hmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 16, mask = ncap - 1, i, j;
	struct hmap_ent *ent = malloc(ncap * sizeof(*ent));
	uint8_t *used = calloc(ncap, 1);

	if (!ent || !used) {
		free(ent);
		free(used);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		for (j = hash64(m->ent[i].key) & mask; used[j]; j = (j + 1) & mask)
			;
		used[j] = 1;
		ent[j] = m->ent[i];
	}
	free(m->ent);
	free(m->used);
	m->ent = ent;
	m->used = used;
	m->cap = ncap;
	return 0;
}

int hmap__upsert(struct hmap *m, uint64_t key, uint64_t **val)
{
	size_t mask, i;
	int err;

	*val = NULL;
	/* Keep the load factor at most 3/4 so that probe runs stay short. */
	if ((m->len + 1) * 4 > m->cap * 3) {
		uint64_t *v = hmap__find(m, key);

		if (v) {
			*val = v;
			return 0;
		}
		err = grow(m);
		if (err)
			return err;
	}
	mask = m->cap - 1;
	for (i = hash64(key) & mask; m->used[i]; i = (i + 1) & mask) {
		if (m->ent[i].key == key) {
			*val = &m->ent[i].val;
			return 0;
		}
	}
	m->used[i] = 1;
	m->ent[i].key = key;
	m->ent[i].val = 0;
	m->len++;
	*val = &m->ent[i].val;
	return 0;
}

bool hmap__next(const struct hmap *m, size_t *it, struct hmap_ent **e)
{
	for (; *it < m->cap; (*it)++) {
		if (m->used[*it]) {
			*e = &m->ent[*it];
			(*it)++;
			return true;
		}
	}
	return false;
}

void *hmap__obj(struct hmap *m, uint64_t key, size_t size, bool *created)
{
	uint64_t *v;
	void *o;

	if (created)
		*created = false;
	if (hmap__upsert(m, key, &v))
		return NULL;
	if (*v)
		return (void *)(uintptr_t)*v;
	o = calloc(1, size);
	if (!o)
		return NULL;
	*v = (uint64_t)(uintptr_t)o;
	if (created)
		*created = true;
	return o;
}
