// SPDX-License-Identifier: BSD-2-Clause
/*
 * The timeline's section of the report (sec.h): what it kept and cut. The
 * timeline itself is a file (user/report/perfetto.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "analyzers/timeline.h"
#include "common/json.h"
#include "user/report/sec.h"

int sec_timeline__text(void *state, FILE *f)
{
	struct timeline_counts c;

	timeline__counts(state, &c);
	if (c.cut || c.nomem)
		fprintf(f,
			"timeline: %zu events kept, %" PRIu64 " cut by --timeline-limit %" PRIu64
			", %" PRIu64 " out of memory\n\n",
			c.kept, c.cut, c.limit, c.nomem);
	if (c.nomem_vals)
		fprintf(f, "timeline: the values of %" PRIu64 " calls not kept (out of memory)\n\n",
			c.nomem_vals);
	return ferror(f) ? -EIO : 0;
}

int sec_timeline__json(void *state, struct json *w)
{
	struct timeline_counts c;
	int err = 0;

	timeline__counts(state, &c);
	err |= json__key(w, "timeline");
	err |= json__begin_object(w);
	err |= json__kv_u64(w, "events", c.kept);
	err |= json__kv_u64(w, "cut", c.cut + c.nomem);
	err |= json__kv_u64(w, "limit", c.limit);
	err |= json__kv_u64(w, "values_not_kept", c.nomem_vals);
	err |= json__end_object(w);
	return err;
}
