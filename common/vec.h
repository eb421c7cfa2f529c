/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Growing an array by doubling: the one realloc dance every module that
 * appends to an array of its own needs (symbols, sites, threads, strings).
 *
 * Threads: no state of its own; the caller owns the array.
 */
#ifndef COMMON_VEC_H
#define COMMON_VEC_H

#include <stddef.h>

/*
 * Room for at least need elements of elem bytes in the array v of
 * capacity *cap: returns v when it has the room already, else the array
 * moved to a capacity doubled from *cap (first when *cap is 0) until need
 * fits, and *cap updated. Returns NULL when out of memory (or when the
 * size overflows): then v is still valid and *cap unchanged. The caller
 * owns v and the returned array, as with realloc.
 */
void *vec__grow(void *v, size_t *cap, size_t need, size_t elem, size_t first);

#endif
