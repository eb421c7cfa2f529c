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
#include "common/json.h"
#include "user/report/sec.h"

int sec_replay__text(void *state, FILE *f)
{
	struct replay_counts c;

	replay__counts(state, &c);
	fprintf(f,
		"replay: %" PRIu64 " calls ended, %" PRIu64 " shown; %" PRIu64
		" I/O calls, %" PRIu64 " shown\n",
		c.calls, c.shown, c.io, c.io_shown);
	return ferror(f) ? -EIO : 0;
}

int sec_replay__json(void *state, struct json *w)
{
	struct replay_counts c;

	replay__counts(state, &c);
	json__key(w, "replay");
	json__begin_object(w);
	json__kv_u64(w, "calls", c.calls);
	json__kv_u64(w, "shown", c.shown);
	json__kv_u64(w, "io", c.io);
	json__kv_u64(w, "io_shown", c.io_shown);
	json__kv_u64(w, "io_not_held", c.io_unheld);
	json__kv_u64(w, "nomem", c.nomem);
	return json__end_object(w);
}
