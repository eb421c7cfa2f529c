// SPDX-License-Identifier: BSD-2-Clause
/*
 * The timeline's section of the report (sec.h): what it kept and cut. The
 * timeline itself is a file (user/report/perfetto.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "analyzers/timeline.h"
#include "common/emit.h"
#include "common/json.h"
#include "user/report/sec.h"

static uint64_t cut_of(const void *obj)
{
	const struct timeline_counts *c = obj;

	return c->cut + c->nomem;
}

/* The counts, text and JSON from one description (common/emit.h): the
 * text splits the JSON's cut in two. */
#define TC struct timeline_counts
static const struct emit_field timeline_fields[] = {
	{"events", "timeline: %" PRIu64 " events kept", EMIT_AT(TC, kept)},
	{NULL, ", %" PRIu64 " cut by --timeline-limit", EMIT_AT(TC, cut)},
	{"cut", NULL, EMIT_GET(cut_of)},
	{"limit", " %" PRIu64, EMIT_AT(TC, limit)},
	{NULL, ", %" PRIu64 " out of memory", EMIT_AT(TC, nomem)},
	{"values_not_kept", NULL, EMIT_AT(TC, nomem_vals)},
};
#undef TC

int sec_timeline__text(void *state, FILE *f)
{
	struct timeline_counts c;

	timeline__counts(state, &c);
	if (c.cut || c.nomem) {
		emit__text(f, timeline_fields, EMIT_N(timeline_fields), &c);
		fputs("\n\n", f);
	}
	if (c.nomem_vals)
		fprintf(f, "timeline: the values of %" PRIu64 " calls not kept (out of memory)\n\n",
			c.nomem_vals);
	return ferror(f) ? -EIO : 0;
}

int sec_timeline__json(void *state, struct json *w)
{
	struct timeline_counts c;

	timeline__counts(state, &c);
	json__key(w, "timeline");
	json__begin_object(w);
	emit__json(w, timeline_fields, EMIT_N(timeline_fields), &c);
	return json__end_object(w);
}
