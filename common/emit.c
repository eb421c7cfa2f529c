// SPDX-License-Identifier: BSD-2-Clause
/* A section's counters written as text and JSON from one description:
 * emit.h. */
#include <string.h>

#include "common/emit.h"
#include "common/json.h"

uint64_t emit__value(const struct emit_field *fl, const void *obj)
{
	uint64_t v;

	if (fl->get)
		return fl->get(obj);
	memcpy(&v, (const char *)obj + fl->off, sizeof(v));
	return v;
}

void emit__text(FILE *f, const struct emit_field *fl, size_t n, const void *obj)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fl[i].text)
			fprintf(f, fl[i].text, emit__value(&fl[i], obj));
}

int emit__json(struct json *w, const struct emit_field *fl, size_t n, const void *obj)
{
	size_t i;
	int err = 0;

	for (i = 0; i < n; i++)
		if (fl[i].key)
			err = json__kv_u64(w, fl[i].key, emit__value(&fl[i], obj));
	return err;
}
