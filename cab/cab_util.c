// SPDX-License-Identifier: BSD-2-Clause
/* Small helpers for cab/: cache geometry, clock, back-off. */
#include <time.h>
#include <unistd.h>

#include "cab/cab.h"
#include "cab/cab_internal.h"

size_t cab__l1d_bytes(void)
{
	long v = sysconf(_SC_LEVEL1_DCACHE_SIZE);

	/* glibc returns 0 or -1 when /sys does not describe the cache. */
	if (v <= 0)
		return CAB_L1D_FALLBACK;
	return (size_t)cab__pow2_floor((uint64_t)v);
}

size_t cab__line_bytes(void)
{
	long v = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);

	if (v <= 0 || !cab__is_pow2((uint64_t)v))
		return CAB_LINE;
	return (size_t)v;
}

uint64_t cab__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Spin this many times before the first sleep: about 1000 pause
 * instructions (15-50 us), a few chunks of consumer work. */
#define CAB_SPINS 64
#define CAB_SLEEP_MIN_NS 1000u
#define CAB_SLEEP_MAX_NS 1000000u

void cab__backoff_init(struct cab__backoff *b)
{
	b->spins = 0;
	b->sleep_ns = CAB_SLEEP_MIN_NS;
}

void cab__backoff_wait(struct cab__backoff *b)
{
	struct timespec ts;
	unsigned i;

	if (b->spins < CAB_SPINS) {
		b->spins++;
		for (i = 0; i < 16; i++)
			cab__cpu_relax();
		return;
	}
	ts.tv_sec = 0;
	ts.tv_nsec = b->sleep_ns;
	nanosleep(&ts, NULL);
	if (b->sleep_ns < CAB_SLEEP_MAX_NS)
		b->sleep_ns *= 2;
}
