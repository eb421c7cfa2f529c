// SPDX-License-Identifier: BSD-2-Clause
/* An analyzer instance's per-thread states (an_threads.h). */
#include <stdlib.h>

#include "analyzers/an_threads.h"

void *an_threads__get(struct an_threads *t, uint32_t tid, size_t size,
		      int (*init)(void *obj, uint32_t tid, void *arg), void *arg)
{
	uint64_t *v;
	void *o;

	if (t->last && t->last_tid == tid)
		return t->last;
	if (hmap__upsert(&t->map, tid, &v))
		return NULL;
	if (!*v) {
		o = calloc(1, size);
		if (!o)
			return NULL; /* an empty slot reads as absent */
		if (init && init(o, tid, arg)) {
			free(o);
			return NULL;
		}
		*v = (uint64_t)(uintptr_t)o;
	}
	t->last = (void *)(uintptr_t)*v;
	t->last_tid = tid;
	return t->last;
}

void *an_threads__find(const struct an_threads *t, uint32_t tid)
{
	uint64_t *v = hmap__find(&t->map, tid);

	return v ? (void *)(uintptr_t)*v : NULL;
}

void an_threads__fini(struct an_threads *t, void (*free_obj)(void *obj))
{
	struct hmap_ent *e;
	size_t it = 0;

	if (!t)
		return;
	while (hmap__next(&t->map, &it, &e)) {
		void *o = (void *)(uintptr_t)e->val;

		if (!o)
			continue;
		if (free_obj)
			free_obj(o);
		else
			free(o);
	}
	hmap__fini(&t->map);
	t->last = NULL;
	t->last_tid = 0;
}
