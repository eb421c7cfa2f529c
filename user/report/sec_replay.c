// SPDX-License-Identifier: BSD-2-Clause
/*
 * cabbpf replay's section of the report (sec.h): how many calls and I/O
 * calls ended and were shown (the flow itself went to stdout as the
 * events came: analyzers/replay.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "analyzers/replay.h"
#include "common/emit.h"
#include "common/json.h"
#include "user/report/sec.h"

/* The counts, text and JSON from one description (common/emit.h). */
#define RC struct replay_counts
static const struct emit_field replay_fields[] = {
	{"calls", "replay: %" PRIu64 " calls ended", EMIT_AT(RC, calls)},
	{"shown", ", %" PRIu64 " shown", EMIT_AT(RC, shown)},
	{"io", "; %" PRIu64 " I/O calls", EMIT_AT(RC, io)},
	{"io_shown", ", %" PRIu64 " shown", EMIT_AT(RC, io_shown)},
	{"io_not_held", NULL, EMIT_AT(RC, io_unheld)},
	{"nomem", NULL, EMIT_AT(RC, nomem)},
};
#undef RC

int sec_replay__text(void *state, FILE *f)
{
	struct replay_counts c;

	replay__counts(state, &c);
	emit__text(f, replay_fields, EMIT_N(replay_fields), &c);
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

int sec_replay__json(void *state, struct json *w)
{
	struct replay_counts c;

	replay__counts(state, &c);
	json__key(w, "replay");
	json__begin_object(w);
	emit__json(w, replay_fields, EMIT_N(replay_fields), &c);
	return json__end_object(w);
}
