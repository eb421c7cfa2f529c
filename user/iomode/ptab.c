// SPDX-License-Identifier: BSD-2-Clause
/* A table of entries keyed by their first bytes (see ptab.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "user/iomode/ptab.h"

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = mix(h ^ b[i]);
	return h;
}

/* Add entry e (its key: its first klen bytes; not in t yet). Returns 0 or
 * -ENOMEM (t unchanged). */
int ptab__put(struct ptab *t, void *e, size_t klen)
{
	uint64_t h = hash_bytes(e, klen), *v;
	void **nv;

	while (hmap__find(&t->m, h))
		h++;
	nv = vec__grow(t->v, &t->cap, t->n + 1, sizeof(*nv), 256);
	if (!nv)
		return -ENOMEM;
	t->v = nv;
	if (hmap__upsert(&t->m, h, &v))
		return -ENOMEM;
	*v = (uint64_t)(uintptr_t)e;
	t->v[t->n++] = e;
	return 0;
}

/* Find the entry with key key; create it (esize bytes, zeroed, key copied)
 * when create. Returns NULL if absent or out of memory. */
void *ptab__get(struct ptab *t, const void *key, size_t klen, size_t esize, bool create)
{
	uint64_t h = hash_bytes(key, klen);
	uint64_t *v;
	void *e;

	for (;; h++) {
		v = hmap__find(&t->m, h);
		if (!v)
			break;
		if (!memcmp((void *)(uintptr_t)*v, key, klen))
			return (void *)(uintptr_t)*v;
	}
	if (!create)
		return NULL;
	e = calloc(1, esize);
	if (!e)
		return NULL;
	memcpy(e, key, klen);
	if (ptab__put(t, e, klen)) {
		free(e);
		return NULL;
	}
	return e;
}

/* Split t: the entries keep() says no to go, in order, to *out (an array
 * of *nout the caller frees, with the entries), the others stay. Returns
 * 0, or -ENOMEM with t unchanged. */
int ptab__split(struct ptab *t, size_t klen, bool (*keep)(void *ctx, const void *e), void *ctx,
		void ***out, size_t *nout)
{
	struct ptab nt;
	void **gone = malloc((t->n + 1) * sizeof(*gone));
	size_t i, n = 0;

	memset(&nt, 0, sizeof(nt));
	if (!gone)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		if (!keep(ctx, t->v[i]))
			gone[n++] = t->v[i];
		else if (ptab__put(&nt, t->v[i], klen)) {
			free(nt.v);
			hmap__fini(&nt.m);
			free(gone);
			return -ENOMEM;
		}
	}
	free(t->v);
	hmap__fini(&t->m);
	*t = nt;
	*out = gone;
	*nout = n;
	return 0;
}

void ptab__fini(struct ptab *t, void (*fr)(void *))
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (fr)
			fr(t->v[i]);
		free(t->v[i]);
	}
	free(t->v);
	hmap__fini(&t->m);
}
