/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The option reader's files (not a public API):
 *   opts.c         the table, parsing argv through it, --help;
 *   opts_values.c  a value as its row's type says;
 *   opts_rules.c   the options checked against each other.
 * Any thread; no state (getopt's is opts.c's).
 */
#ifndef USER_CLI_OPTS_INT_H
#define USER_CLI_OPTS_INT_H

#include <stdint.h>

#include "user/cli/opts.h"

/* s as a whole unsigned number in [lo, hi]. Returns 0 or -EINVAL. */
int opts__parse_ulong(const char *s, double lo, double hi, unsigned long *out);

/* s as a decimal within row d's range (its OPTF_* open ends, a trailing %
 * with OPTF_PERCENT). Returns 0 or -EINVAL. */
int opts__parse_double(const struct opt_def *d, const char *s, double *out);

/* s as a duration (a number and ns, us, ms or s; none: ms) into ns within
 * row d's range. Returns 0 or -EINVAL. */
int opts__parse_ns(const struct opt_def *d, const char *s, uint64_t *out);

/* o->time_range ("FROM,TO", either may be empty, not both) into
 * o->range_from_ns and range_to_ns (0: no end). Returns 0 or -EINVAL. */
int opts__parse_range(struct opts *o);

/* The options checked against each other, then the defaults that depend
 * on others set. Returns 0, or -EINVAL after saying the first rule broken. */
int opts__check_combination(struct opts *o);

#endif /* USER_CLI_OPTS_INT_H */
