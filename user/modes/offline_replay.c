// SPDX-License-Identifier: BSD-2-Clause
/*
 * cabbpf replay FILE: a recording's call flow (analyzers/replay.h). The
 * chunks go through the same runner and shadow stacks as a report's, to
 * one analyzer thread running the replay analyzer alone, which writes as
 * the events come: the flow streams, whatever the recording's length.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "analyzers/replay.h"
#include "common/log.h"
#include "common/outfile.h"
#include "pipeline/runner.h"
#include "user/modes/offline.h"
#include "user/record/recfmt.h"

/* The replay's options from the command line's. */
static void replay_opts(const struct opts *o, FILE *out, struct replay_opts *ro)
{
	memset(ro, 0, sizeof(*ro));
	ro->out = out;
	ro->only = o->replay_only;
	ro->nonly = o->nreplay_only;
	ro->hide = o->view.excludes;
	ro->nhide = o->view.nexcludes;
	ro->depth = o->view.cct.depth;
	ro->min_ns = o->view.slower_ns;
	ro->from_ns = o->range_from_ns;
	ro->to_ns = o->range_to_ns;
	ro->tid = o->replay_tid;
}

/* Every chunk of r into a runner of the replay analyzer. */
static int replay_chunks(const struct opts *o, struct recfmt_reader *r,
			 const struct replay_opts *rp, struct replay_counts *c)
{
	const struct recfmt_funcs *fn = recfmt__funcs(r);
	struct runner *rn = NULL;
	struct recfmt_item it;
	struct runner_opts ro;
	int err, ret;

	memset(&ro, 0, sizeof(ro));
	ro.fnames = fn->names;
	ro.lnames = fn->lnames;
	ro.nfuncs = fn->n;
	ro.analyzers = "replay";
	ro.nthreads = 1; /* one stream of lines, in the recording's order */
	ro.no_returns = recfmt__meta(r)->flags & RECFMT_F_ENTRY_ONLY;
	ro.replay = rp;
	err = runner__new(&ro, NULL, 0, &rn);
	if (err)
		goto cleanup;
	while ((ret = recfmt__next(r, &it)) == 1)
		if (it.type == RECFMT_CHUNK &&
		    (err = runner__feed(rn, it.tid, it.seq, it.recs, it.nrec)))
			break;
	if (!err && ret < 0)
		err = ret;
	if (err) {
		if (err == -ENOMEM)
			log_err("reading %s: out of memory", o->input_path);
		goto cleanup;
	}
	err = runner__join(rn);
	if (!err)
		replay__counts(runner__analyzer(rn, "replay"), c);
cleanup:
	runner__free(rn);
	return err;
}

int offline__replay(const struct opts *o)
{
	struct recfmt_reader *r = NULL;
	struct replay_opts rp;
	struct replay_counts c = {0};
	struct outfile of;
	bool opened = false;
	FILE *f = NULL;
	int err, ferr;

	err = offline__open(o->input_path, &f, &r);
	if (err)
		goto cleanup;
	if (recfmt__meta(r)->flags & RECFMT_F_ENTRY_ONLY) {
		log_err("%s was recorded without return probes (--entry-only, or a Go program): "
			"no durations, no flow to replay (cabbpf report -a count has its counts)",
			o->input_path);
		err = -EINVAL;
		goto cleanup;
	}
	err = outfile__open(&of, o->output_path ? o->output_path : "-");
	if (err) {
		log_err("cannot write -o %s: %s", o->output_path, outfile__strerror(err));
		goto cleanup;
	}
	opened = true;
	replay_opts(o, of.f, &rp);
	fprintf(of.f, "#%11s %11s %7s | %s\n", "START_S", "DURATION", "TID", "FUNCTION");
	err = replay_chunks(o, r, &rp, &c);
	ferr = outfile__finish(&of, err ? err : ferror(of.f) ? -EIO : 0);
	opened = false;
	if (!err && ferr)
		log_err("writing the replay%s%s: %s", o->output_path ? " to " : "",
			o->output_path ? o->output_path : "", outfile__strerror(ferr));
	err = err ? err : ferr;
	if (err)
		goto cleanup;
	log_info("replayed %" PRIu64 " calls (%" PRIu64 " shown) and %" PRIu64
		 " I/O calls (%" PRIu64 " shown)%s",
		 c.calls, c.shown, c.io, c.io_shown,
		 c.io_unheld || c.nomem ? "; some not shown: see below" : "");
	if (c.io_unheld)
		log_warn("%" PRIu64 " I/O calls not shown: more than %d inside one call still "
			 "shorter than --slower-than",
			 c.io_unheld, REPLAY_IO_HELD);
	if (c.nomem)
		log_warn("%" PRIu64 " events not followed (out of memory): the flow has gaps",
			 c.nomem);
cleanup:
	if (opened)
		outfile__abort(&of);
	recfmt__reader_free(r);
	if (f)
		fclose(f);
	return err;
}
