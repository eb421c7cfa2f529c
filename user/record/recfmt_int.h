/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the recording's writer (recfmt_write.c) and reader (recfmt_read.c)
 * share: a growable byte buffer (a block being built, the reader's
 * window). Not a public API.
 */
#ifndef USER_RECORD_RECFMT_INT_H
#define USER_RECORD_RECFMT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct bytes {
	uint8_t *p;
	size_t len, cap;
	bool nomem;
};

static inline void b_room(struct bytes *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->nomem || b->len + n <= b->cap)
		return;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->nomem = true;
		return;
	}
	b->p = p;
	b->cap = cap;
}

#endif /* USER_RECORD_RECFMT_INT_H */
