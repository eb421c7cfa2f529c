// SPDX-License-Identifier: BSD-2-Clause
/* The replay analyzer: what it writes and what it holds back is in
 * replay.h. */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/an_threads.h"
#include "analyzers/analyzer.h"
#include "analyzers/replay.h"
#include "cabbpf_event.h"
#include "common/callvals.h"
#include "common/json.h"
#include "common/syscalls.h"

enum { HELD, OPEN };

struct rp_frame {
	uint64_t ts; /* entry */
	uint32_t fid;
	uint32_t vdepth; /* its indentation: frames shown below it */
	uint8_t state;	 /* HELD: its entry not written yet; OPEN: written */
	bool shown;	 /* its lines are written (no filter hides it) */
	bool sub_hidden; /* what it calls is hidden (-N, or a caller's -N) */
	bool in_only;	 /* it or a caller matched -F */
};

/* An I/O call held with the call it is in. */
struct rp_io {
	uint64_t ts;
	uint32_t frame; /* its call's index on the stack */
	uint32_t sc, fdkind, req, ret;
	int32_t fd;
	bool failed;
};

struct rp_thread {
	uint32_t tid, gen;
	struct rp_frame *f;
	size_t n, cap;
	struct rp_io io[REPLAY_IO_HELD];
	size_t nio;
	uint64_t io_unheld; /* held calls' I/O calls past the REPLAY_IO_HELD held */
};

struct replay {
	const struct an_ctx *ctx;
	const struct replay_opts *o;
	struct an_threads threads;
	/* the runner's stack during the callback (frames[0..nframes-1]),
	 * whose values (--args, --retval) the lines show; none while ours
	 * differs from it */
	const struct shadow_frame *frames;
	size_t nframes;
	uint64_t t0; /* the first event's time: START_S 0 */
	bool have_t0;
	struct replay_counts n;
};

static int rp_init(const struct an_ctx *ctx, void **state)
{
	struct replay *p;

	*state = NULL;
	if (!ctx->replay)
		return -EINVAL; /* cabbpf replay's alone: it writes as it goes */
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ctx = ctx;
	p->o = ctx->replay;
	*state = p;
	return 0;
}

static void thread_free(void *obj)
{
	struct rp_thread *t = obj;

	free(t->f);
	free(t);
}

static void rp_free(void *state)
{
	struct replay *p = state;

	if (!p)
		return;
	an_threads__fini(&p->threads, thread_free);
	free(p);
}

/* ts from the first event (0 for an earlier one: another thread's, read
 * later). */
static uint64_t rel(const struct replay *p, uint64_t ts)
{
	return ts >= p->t0 ? ts - p->t0 : 0;
}

/* Whether --time-range holds ts. */
static bool in_range(const struct replay *p, uint64_t ts)
{
	return rel(p, ts) >= p->o->from_ns && (!p->o->to_ns || rel(p, ts) <= p->o->to_ns);
}

static bool matches(const struct replay *p, const char *const *globs, size_t n, uint32_t fid)
{
	char buf[24];
	const char *name = an_ctx__name(p->ctx, fid, buf);
	size_t i;

	for (i = 0; i < n; i++)
		if (!fnmatch(globs[i], name, 0))
			return true;
	return false;
}

/* ---------------------------------------------------------- writing -- */

/* " 12.345 us": a duration in 11 columns, as uftrace's. */
static void put_duration(FILE *f, uint64_t ns, bool known)
{
	if (!known)
		fprintf(f, " %11s", "");
	else if (ns < 1000000)
		fprintf(f, " %8.3f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		fprintf(f, " %8.3f ms", (double)ns / 1e6);
	else
		fprintf(f, " %8.3f  s", (double)ns / 1e9);
}

/* A line's start: when, how long, which thread, the indentation. */
static void put_head(const struct replay *p, const struct rp_thread *t, uint64_t ts, uint64_t dur,
		     bool known, uint32_t vdepth)
{
	FILE *f = p->o->out;

	fprintf(f, "%12.6f", (double)rel(p, ts) / 1e9);
	put_duration(f, dur, known);
	fprintf(f, " %7" PRIu32 " | %*s", t->tid, (int)(2 * vdepth), "");
}

static const char *fname(const struct replay *p, uint32_t fid, char buf[24])
{
	return an_ctx__name(p->ctx, fid, buf);
}

/* "()" after a name, unless it has its own (a demangled C++ name's
 * parameters). */
static const char *parens(const char *name)
{
	size_t n = strlen(name);

	return n && name[n - 1] == ')' ? "" : "()";
}

/* The values of our frame k, fid's, when the runner's frame k is it. */
static const struct callvals *vals_of(const struct replay *p, size_t k, uint32_t fid)
{
	return k < p->nframes && p->frames[k].fid == fid ? p->frames[k].vals : NULL;
}

/* A call's name and its arguments when asked for ("f(3, \"a\")"), or
 * its "()". */
static void put_call(const struct replay *p, const char *nm, const struct callvals *v)
{
	char a[CABBPF_VAL_ARGS_MAX * (CABBPF_VAL_STR_MAX * 4 + 8)];

	if (callvals__has_args(v))
		fprintf(p->o->out, "%s(%s)", nm, callvals__args_text(v, false, a, sizeof(a)));
	else
		fprintf(p->o->out, "%s%s", nm, parens(nm));
}

/* " = VALUE" of a call that returned one (--retval). */
static void put_ret(const struct replay *p, const struct callvals *v)
{
	char b[CABBPF_VAL_STR_MAX * 4 + 16];

	if (callvals__has_ret(v))
		fprintf(p->o->out, " = %s", callvals__format(v, CABBPF_VAL_RET, b, sizeof(b)));
}

static void put_io(struct replay *p, const struct rp_thread *t, const struct rp_io *io,
		   uint32_t vdepth)
{
	FILE *f = p->o->out;

	put_head(p, t, io->ts, 0, false, vdepth);
	fprintf(f, "%s(", syscalls__label(io->sc));
	if (io->fd >= 0)
		fprintf(f, "%" PRId32 " ", io->fd);
	fprintf(f, "%s) = ", syscalls__fdkind_name(io->fdkind));
	if (io->failed)
		fprintf(f, "error %" PRIu32 " (%s)\n", io->ret, strerror((int)io->ret));
	else if (io->ret < io->req)
		fprintf(f, "%" PRIu32 " of %" PRIu32 " bytes\n", io->ret, io->req);
	else
		fprintf(f, "%" PRIu32 " bytes\n", io->ret);
	p->n.io_shown++;
}

/* Write, then forget, the held I/O calls of frame k (they came before
 * anything held above it). */
static void put_held_io(struct replay *p, struct rp_thread *t, size_t k)
{
	size_t i, j = 0;

	for (i = 0; i < t->nio; i++)
		if (t->io[i].frame == k)
			put_io(p, t, &t->io[i], t->f[k].vdepth + 1);
		else
			t->io[j++] = t->io[i];
	t->nio = j;
}

/* Forget the held I/O calls of frames k and up. */
static void drop_held_io(struct rp_thread *t, size_t k)
{
	size_t i, j = 0;

	for (i = 0; i < t->nio; i++)
		if (t->io[i].frame < k)
			t->io[j++] = t->io[i];
	t->nio = j;
}

/* Something is to be written inside the calls below top at ts: open
 * (write the entry of) each held one that has lasted --slower-than by
 * then, outermost first (a call younger than one that has not lasted that
 * long has not either). Events that write nothing (a hidden call's) open
 * nothing: a call with nothing shown inside stays a one-line leaf. */
static void open_held(struct replay *p, struct rp_thread *t, uint64_t ts, size_t top)
{
	const char *nm;
	char b[24];
	size_t k;

	for (k = 0; k < top; k++) {
		struct rp_frame *fr = &t->f[k];

		if (!fr->shown || fr->state == OPEN)
			continue;
		if (ts - fr->ts < p->o->min_ns)
			break;
		nm = fname(p, fr->fid, b);
		put_head(p, t, fr->ts, 0, false, fr->vdepth);
		put_call(p, nm, vals_of(p, k, fr->fid));
		fprintf(p->o->out, " {\n");
		fr->state = OPEN;
		p->n.shown++;
		put_held_io(p, t, k);
	}
}

/* ---------------------------------------------------------- the stack -- */

/* Push fid, entered at ts, as the filters see it. */
static int push(struct replay *p, struct rp_thread *t, uint32_t fid, uint64_t ts)
{
	const struct replay_opts *o = p->o;
	const struct rp_frame *up;
	struct rp_frame *fr;
	bool hide;

	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct rp_frame *v = realloc(t->f, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->f = v;
		t->cap = cap;
	}
	up = t->n ? &t->f[t->n - 1] : NULL; /* after the realloc, which moves them */
	fr = &t->f[t->n++];
	hide = o->nhide && matches(p, o->hide, o->nhide, fid);
	fr->ts = ts;
	fr->fid = fid;
	fr->state = HELD;
	fr->vdepth = up ? up->vdepth + up->shown : 0;
	fr->in_only = (up && up->in_only) || (o->nonly && matches(p, o->only, o->nonly, fid));
	fr->sub_hidden = (up && up->sub_hidden) || hide;
	fr->shown = !fr->sub_hidden && (!o->nonly || fr->in_only) &&
		    (!o->depth || fr->vdepth < o->depth) && (!o->tid || t->tid == o->tid) &&
		    in_range(p, ts);
	return 0;
}

/* Close the top frame at ts: its exit line, or its one line when it was
 * held back to its end; nothing when it is hidden or too short. why: NULL
 * for a return event, else how it ended without one. */
static void pop(struct replay *p, struct rp_thread *t, uint64_t ts, uint64_t dur, bool known,
		const char *why)
{
	struct rp_frame *fr = &t->f[t->n - 1];
	const struct callvals *v = why ? NULL : vals_of(p, t->n - 1, fr->fid);
	FILE *f = p->o->out;
	char b[24];

	p->n.calls++;
	/* without a return event: as long as it was known to last */
	if (fr->shown && fr->state == HELD && (known ? dur : ts - fr->ts) >= p->o->min_ns) {
		bool inside = false;
		size_t i;

		for (i = 0; i < t->nio; i++)
			inside |= t->io[i].frame == t->n - 1;
		open_held(p, t, ts, t->n - 1); /* its callers first */
		if (inside) {		       /* its I/O calls go inside it: no one-line form */
			open_held(p, t, fr->ts + p->o->min_ns, t->n);
		} else {
			const char *nm = fname(p, fr->fid, b);

			put_head(p, t, fr->ts, dur, known, fr->vdepth);
			put_call(p, nm, vals_of(p, t->n - 1, fr->fid));
			put_ret(p, v);
			fprintf(f, ";%s%s%s\n", why ? " /* " : "", why ? why : "", why ? " */" : "");
			p->n.shown++;
		}
	}
	if (fr->shown && fr->state == OPEN) {
		put_head(p, t, ts, dur, known, fr->vdepth);
		fprintf(f, "}");
		put_ret(p, v);
		fprintf(f, " /* %s%s%s */\n", fname(p, fr->fid, b), why ? ": " : "", why ? why : "");
	}
	drop_held_io(t, t->n - 1);
	t->n--;
}

/* The runner's stack (frames[0..depth-1], gen) differs from ours: a
 * coroutine switch, or frames entered before the recording began. Close
 * ours (said), and take the runner's as calls whose entry was not seen:
 * their lines are not written (an exit without its entry would mislead). */
static int resync(struct replay *p, struct rp_thread *t, const struct shadow_frame *frames,
		  uint32_t depth, uint32_t gen, uint64_t ts)
{
	const struct shadow_frame *was = p->frames;
	uint32_t k;

	p->frames = NULL; /* ours are not the runner's */
	p->nframes = 0;
	while (t->n)
		pop(p, t, ts, 0, false, "its stack was switched");
	p->frames = was;
	p->nframes = was ? depth : 0;
	for (k = 0; k < depth; k++) {
		if (push(p, t, frames[k].fid, frames[k].ts))
			return -ENOMEM;
		t->f[t->n - 1].shown = false;
	}
	t->gen = gen;
	return 0;
}

static struct rp_thread *thread_of(struct replay *p, uint32_t tid, uint64_t ts)
{
	struct rp_thread *t =
		an_threads__get(&p->threads, tid, sizeof(struct rp_thread), NULL, NULL);

	if (!t) {
		p->n.nomem++;
		return NULL;
	}
	t->tid = tid;
	if (!p->have_t0) {
		p->t0 = ts;
		p->have_t0 = true;
	}
	return t;
}

/* ------------------------------------------------------- the callbacks -- */

static void rp_on_call(void *state, const struct an_call *c)
{
	struct replay *p = state;
	struct rp_thread *t = thread_of(p, c->tid, c->ts);

	if (!t)
		return;
	p->frames = c->frames;
	p->nframes = c->depth + 1;
	if ((t->n != c->depth || t->gen != c->gen) &&
	    resync(p, t, c->frames, c->depth, c->gen, c->ts)) {
		p->n.nomem++;
		return;
	}
	if (push(p, t, c->callee, c->ts)) {
		p->n.nomem++;
		return;
	}
	if (t->f[t->n - 1].shown)
		open_held(p, t, c->ts, t->n - 1);
}

static void rp_on_return(void *state, const struct an_return *r)
{
	struct replay *p = state;
	struct rp_thread *t = thread_of(p, r->tid, r->ts);
	const char *why = NULL;

	if (!t)
		return;
	p->frames = r->frames;
	p->nframes = r->depth + 1;
	if ((t->n != r->depth + 1 || t->gen != r->gen || t->f[t->n - 1].fid != r->fid) &&
	    resync(p, t, r->frames, r->depth + 1, r->gen, r->ts)) {
		p->n.nomem++;
		return;
	}
	if (!r->matched)
		why = r->inherited  ? "its parent's call, inherited at the fork"
		      : r->unwound  ? "unwound"
		      : r->switched ? "return lost to a stack switch"
		      : r->sampled  ? "returned while not traced"
		      : r->open	    ? "open at the end"
				    : "no return";
	pop(p, t, r->ts, r->incl_ns, r->matched, why);
}

static void rp_on_io(void *state, const struct an_io *io)
{
	struct replay *p = state;
	struct rp_thread *t = thread_of(p, io->tid, io->ts);
	struct rp_io e = {
		.ts = io->ts,
		.sc = io->sc,
		.fdkind = io->fdkind,
		.req = io->req,
		.ret = io->ret,
		.fd = io->fd,
		.failed = io->failed,
	};
	const struct rp_frame *top;

	if (!t)
		return;
	p->frames = io->frames;
	p->nframes = io->depth;
	p->n.io++;
	if ((t->n != io->depth ||
	     (io->depth && t->f[t->n - 1].fid != io->frames[io->depth - 1].fid)) &&
	    resync(p, t, io->frames, (uint32_t)io->depth, t->gen, io->ts)) {
		p->n.nomem++;
		return;
	}
	top = t->n ? &t->f[t->n - 1] : NULL;
	if (top && top->shown)
		open_held(p, t, io->ts, t->n);
	if (!top) { /* outside every traced call: shown when no call is asked for */
		if (!p->o->nonly && !p->o->min_ns && (!p->o->tid || t->tid == p->o->tid) &&
		    in_range(p, io->ts))
			put_io(p, t, &e, 0);
		return;
	}
	if (!top->shown)
		return;
	if (top->state == OPEN) {
		put_io(p, t, &e, top->vdepth + 1);
		return;
	}
	e.frame = (uint32_t)(t->n - 1);
	if (t->nio < REPLAY_IO_HELD)
		t->io[t->nio++] = e;
	else
		t->io_unheld++;
}

static int rp_merge(void *dst, const void *src)
{
	struct replay *d = dst;
	const struct replay *s = src;

	d->n.calls += s->n.calls;
	d->n.shown += s->n.shown;
	d->n.io += s->n.io;
	d->n.io_shown += s->n.io_shown;
	d->n.nomem += s->n.nomem;
	return 0;
}

void replay__counts(const void *state, struct replay_counts *c)
{
	const struct replay *p = state;
	struct hmap_ent *e;
	size_t it = 0;

	*c = p->n;
	while (hmap__next(&p->threads.map, &it, &e))
		if (e->val)
			c->io_unheld += ((const struct rp_thread *)(uintptr_t)e->val)->io_unheld;
}

const struct analyzer_ops analyzer_replay = {
	.name = "replay",
	.help = "cabbpf replay FILE's call flow (not for live runs)",
	.init = rp_init,
	.on_call = rp_on_call,
	.on_return = rp_on_return,
	.on_io = rp_on_io,
	.merge = rp_merge,
	.free = rp_free,
	.opt_in = true,
};
