// SPDX-License-Identifier: BSD-2-Clause
/* Rules that name traced functions for their probes to read something
 * more: --size (the isp analyzer's input size), --args and --retval
 * (common/callvals.h). Each rule must match a traced function. */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/isp.h"
#include "common/callvals.h"
#include "common/log.h"
#include "user/modes/ftrace_int.h"

/* Whether traced function i's name (or linkage name) matches glob. */
static bool name_matches(const struct ftrace *ft, size_t i, const char *glob)
{
	return (ft->names[i] && !fnmatch(glob, ft->names[i], 0)) ||
	       (ft->lnames[i] && !fnmatch(glob, ft->lnames[i], 0));
}

/* --size (analyzers/isp.h): each traced function's spec byte, from the
 * first rule whose glob matches its name (or linkage name). A rule that
 * matches nothing is an error: the user named a function not traced.
 * Returns 0 or -errno (logged). */
static int size_rules(struct ftrace *ft)
{
	size_t r, i;

	if (!ft->o.isp.nsizes)
		return 0;
	ft->sized = calloc(ft->nfuncs + 1, sizeof(*ft->sized));
	if (!ft->sized) {
		log_err("out of memory");
		return -ENOMEM;
	}
	for (r = 0; r < ft->o.isp.nsizes; r++) {
		char glob[256];
		uint8_t spec;
		size_t hits = 0;

		if (isp__parse_size(ft->o.isp.sizes[r], glob, sizeof(glob), &spec))
			return -EINVAL; /* opts checked it */
		for (i = 0; i < ft->nfuncs; i++) {
			if (!name_matches(ft, i, glob) || ft->offsets[i] == TRACE_NO_PROBE)
				continue;
			hits++;
			if (!ft->sized[i])
				ft->sized[i] = spec;
		}
		if (!hits) {
			log_err("--size %s: no traced function matches '%s' (see -l)",
				ft->o.isp.sizes[r], glob);
			return -ENOENT;
		}
	}
	ft->o.isp.sized = ft->sized;
	return 0;
}

/* Rule `rule` of option opt (its glob) to the functions it names, by
 * set(ft, i, ...) for each traced function i it matches first. Returns 0
 * or -ENOENT (it matches none: logged). Functions counted at their call
 * sites have no probe of their own: they match, and are said not read. */
static int val_rule(struct ftrace *ft, const char *opt, const char *rule, const char *glob,
		    const struct cabbpf_fnspec *v, bool ret)
{
	size_t i, hits = 0, callsites = 0;

	for (i = 0; i < ft->nfuncs; i++) {
		struct cabbpf_fnspec *d = &ft->vals[i];

		if (!name_matches(ft, i, glob) || ft->offsets[i] == TRACE_NO_PROBE)
			continue;
		hits++;
		if (ft->offsets[i] == TRACE_AT_CALLSITES) {
			callsites++;
			continue;
		}
		if (ret && !d->ret) {
			d->ret = v->ret;
		} else if (!ret && !d->nvals) {
			memcpy(d->reg, v->reg, sizeof(d->reg));
			memcpy(d->type, v->type, sizeof(d->type));
			d->nvals = v->nvals;
		}
	}
	if (!hits) {
		log_err("%s %s: no traced function matches '%s' (see -l)", opt, rule, glob);
		return -ENOENT;
	}
	if (callsites)
		log_warn("%s %s: %zu of the functions it names are counted at their call sites "
			 "(--entry-only): their values are not read",
			 opt, rule, callsites);
	return 0;
}

/* --args and --retval: each traced function's items and return type,
 * from the first rule of each option that names it. Returns 0 or -errno
 * (logged). */
static int val_rules(struct ftrace *ft)
{
	const struct opts *o = &ft->o;
	size_t r;
	int err;

	if (!o->nargs && !o->nretvals)
		return 0;
	ft->vals = calloc(ft->nfuncs + 1, sizeof(*ft->vals));
	if (!ft->vals) {
		log_err("out of memory");
		return -ENOMEM;
	}
	for (r = 0; r < o->nargs; r++) {
		struct cabbpf_fnspec v = {0};
		char glob[256];

		if (callvals__parse_args(o->args[r], glob, sizeof(glob), &v))
			return -EINVAL; /* opts checked it */
		err = val_rule(ft, "--args", o->args[r], glob, &v, false);
		if (err)
			return err;
	}
	for (r = 0; r < o->nretvals; r++) {
		struct cabbpf_fnspec v = {0};
		char glob[256];

		if (callvals__parse_retval(o->retvals[r], glob, sizeof(glob), &v.ret))
			return -EINVAL;
		err = val_rule(ft, "--retval", o->retvals[r], glob, &v, true);
		if (err)
			return err;
	}
	return 0;
}

int ftrace_rules__apply(struct ftrace *ft)
{
	int err = size_rules(ft);

	return err ? err : val_rules(ft);
}
