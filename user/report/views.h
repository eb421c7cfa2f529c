/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The views people read of the calling-context tree (analyzers/cct.h): the
 * options that shape the text tree and the per-function table, the folded
 * stacks (--folded, FlameGraph's format) and the SVG flame graph
 * (--flamegraph), and -N/--exclude, which leaves functions out of the
 * trace. Output files go through common/outfile.h (checked before tracing
 * starts, never through a symlink). Main thread only.
 */
#ifndef USER_VIEWS_H
#define USER_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzers/cct.h"

struct runner;
struct symtab;

#define VIEWS_MAX_EXCLUDES 256

struct view_opts {
	struct cct_opts cct;			  /* handed to the analyzer (runner_opts.cct) */
	const char *folded_path;		  /* --folded FILE */
	const char *svg_path;			  /* --flamegraph FILE */
	const char *pprof_path;			  /* --pprof FILE (user/report/pprof.h) */
	const char *timeline_path;		  /* --timeline FILE (analyzers/timeline.h) */
	unsigned timeline_limit;		  /* --timeline-limit N; 0: the default */
	enum cct_metric metric;			  /* --folded-metric */
	const char *excludes[VIEWS_MAX_EXCLUDES]; /* -N globs */
	size_t nexcludes;
	const char *hist[VIEWS_MAX_EXCLUDES]; /* --hist globs */
	size_t nhist;
	uint64_t slower_ns; /* --slower-than; 0: no list of slow calls */
	unsigned slowest;   /* --slowest N; 0: the default */
};

struct isp_opts;
struct outputs;

/* --plots DIR (isp->plots_dir; nothing without it or without the isp
 * analyzer in rn): one SVG cost plot per routine, said on stderr, the
 * result noted in outs (NULL: not noted). Returns 0 or -errno (logged).
 * After runner__join; main thread only. */
int views__write_plots(const struct isp_opts *isp, struct runner *rn, struct outputs *outs);

/* Whether the -a list (NULL: the default set, opt-in analyzers left out)
 * selects the analyzer called name. Any thread. */
bool views__selects(const char *list, const char *name);

/* Defaults into *v. */
void views__init(struct view_opts *v);

/*
 * Before tracing: the output paths can be written, and the cct analyzer is
 * selected when a view needs it (analyzers: the -a list, NULL = all).
 * Returns 0 or -EINVAL after logging why.
 */
int views__check(const struct view_opts *v, const char *analyzers, bool entry_only);

/* The analyzer list to run: list (the -a list; NULL = every analyzer)
 * and, with --timeline, the timeline analyzer; in buf, or list itself.
 * Never NULL unless list is NULL and no view needs more. */
const char *views__analyzers(const struct view_opts *v, const char *list, char *buf, size_t len);

/* Drop from idx[0..*n) the functions of st that -N excludes. Returns the
 * number dropped. */
size_t views__exclude(const struct view_opts *v, const struct symtab *st, size_t *idx, size_t *n);

/*
 * After the run: write --folded, --flamegraph and --pprof from the runner's
 * cct analyzer (title: shown in the flame graph; binary and duration_ns:
 * the pprof profile's mapping and duration), and --timeline from the
 * timeline analyzer (pid and title: the process); each file's result
 * noted in outs (NULL: not noted). Every view is tried even when one
 * fails. Returns 0 or the last failure's -errno (logged).
 */
int views__write(const struct view_opts *v, struct runner *r, int pid, const char *title,
		 const char *binary, uint64_t duration_ns, struct outputs *outs);

#endif /* USER_VIEWS_H */
