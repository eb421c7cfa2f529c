// SPDX-License-Identifier: BSD-2-Clause
/* An option's value read as its row says (opts_int.h): whole numbers in a
 * range, decimals, durations, --time-range's pair. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "user/cli/opts.h"
#include "user/cli/opts_int.h"

/* Whole-string unsigned parse within [lo, hi]. */
int opts__parse_ulong(const char *s, double lo, double hi, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || (double)v < lo || (double)v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Whole-string finite number within the row's range. */
int opts__parse_double(const struct opt_def *d, const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if ((d->flags & OPTF_PERCENT) && *end == '%' && end != s)
		end++; /* "25%" as well as "25" */
	if (errno || *end || !*s || !isfinite(v))
		return -EINVAL;
	if ((d->flags & OPTF_HI_OPEN) ? !(v < d->hi) : !(v <= d->hi))
		return -EINVAL;
	if ((d->flags & OPTF_LO_OPEN) ? !(v > d->lo) : !(v >= d->lo))
		return -EINVAL;
	*out = v;
	return 0;
}

/* A duration: a number and a unit (ns, us, ms, s; none: ms, as
 * funcslower's), into ns in [d->lo, d->hi]. */
int opts__parse_ns(const struct opt_def *d, const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"", 1e6}};
	char *end;
	double v;
	size_t i;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit))
			break;
	if (i == sizeof(units) / sizeof(units[0]))
		return -EINVAL;
	v *= units[i].ns;
	if (v < d->lo || v > d->hi)
		return -EINVAL;
	*out = (uint64_t)llround(v);
	return 0;
}

/* --time-range FROM,TO into o->range_from_ns, range_to_ns (0: no end). */
int opts__parse_range(struct opts *o)
{
	static const struct opt_def d = {.lo = 0, .hi = 1e18};
	const char *comma = strchr(o->time_range, ',');
	char from[64];
	size_t n;

	o->range_from_ns = o->range_to_ns = 0;
	if (!comma || strchr(comma + 1, ','))
		return -EINVAL;
	n = (size_t)(comma - o->time_range);
	if (n >= sizeof(from))
		return -EINVAL;
	memcpy(from, o->time_range, n);
	from[n] = 0;
	if (n && opts__parse_ns(&d, from, &o->range_from_ns))
		return -EINVAL;
	if (comma[1] && opts__parse_ns(&d, comma + 1, &o->range_to_ns))
		return -EINVAL;
	if (!n && !comma[1])
		return -EINVAL; /* "," says nothing */
	if (o->range_to_ns && o->range_to_ns <= o->range_from_ns)
		return -EINVAL;
	return 0;
}
