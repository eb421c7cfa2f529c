/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common/outputs — what became of each file a run was asked to write
 * (-o, --folded, --flamegraph, --pprof, --timeline, --plots, --record,
 * --json): written, or the errno that stopped it. A run that could not
 * write one of them exits non-zero, and --json (written last) lists them
 * all ("outputs": [{"option", "path", "written", "error", "errno"}]: error
 * the reason in words as stderr said it, errno its name, "ENOSPC"; both
 * null when written). Main thread.
 */
#ifndef COMMON_OUTPUTS_H
#define COMMON_OUTPUTS_H

#include <stdbool.h>

#define OUTPUTS_MAX 16

struct output_result {
	const char *option; /* "-o", "--folded"...: static */
	const char *path;   /* as given; owned by the options; NULL = stdout */
	int err;	    /* 0 written, else -errno */
};

struct outputs {
	struct output_result r[OUTPUTS_MAX];
	unsigned n;
};

/* Note that option's file at path was written (err 0) or not (-errno).
 * Returns err. NULL outs is fine (nothing noted). */
int outputs__note(struct outputs *outs, const char *option, const char *path, int err);

/* The first noted failure's -errno, 0 if all were written or none noted. */
int outputs__failed(const struct outputs *outs);

struct json;

/* "outputs": [...] into an object being written, then the file being
 * written itself (json_option, json_path) as written: a JSON that is read
 * was. Returns 0 or -EIO. NULL outs writes the JSON's own entry only. */
int outputs__json(const struct outputs *outs, const char *json_option, const char *json_path,
		  struct json *w);

#endif /* COMMON_OUTPUTS_H */
