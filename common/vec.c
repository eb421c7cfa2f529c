// SPDX-License-Identifier: BSD-2-Clause
#include "common/vec.h"

#include <stdint.h>
#include <stdlib.h>

void *vec__grow(void *v, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t nc = *cap ? *cap : (first ? first : 1);
	void *nv;

	if (need <= *cap)
		return v;
	while (nc < need) {
		if (nc > SIZE_MAX / 2)
			return NULL;
		nc *= 2;
	}
	if (elem && nc > SIZE_MAX / elem)
		return NULL;
	nv = realloc(v, nc * elem);
	if (!nv)
		return NULL;
	*cap = nc;
	return nv;
}
