// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/analyzer.h"
#include "analyzers/timeline.h"
#include "common/json.h"
#include "common/syscalls.h"

/* How an event ended; I/O events are their own kind. */
enum tl_kind {
	TL_RETURNED, /* matched by its return: exact duration */
	TL_UNWOUND,  /* unwound by an exception */
	TL_SWITCHED, /* left on another stack (coroutine switch) */
	TL_MISSING,  /* no return (longjmp, uretprobe depth limit, sampling) */
	TL_OPEN,     /* still live at the end of the run */
	TL_IO,	     /* an I/O system call (instant) */
};

static const char *const kind_names[] = {"returned", "unwound", "switched", "missing", "open", "io"};

struct tl_event {
	uint64_t ts;  /* ns: entry (activations) or the syscall's exit (I/O) */
	uint64_t dur; /* ns (activations); I/O: bytes moved << 32 | requested */
	uint32_t tid;
	uint32_t fid; /* function; I/O: syscall << 8 | fdkind */
	int32_t fd;
	uint8_t kind; /* enum tl_kind */
	uint8_t failed;
	uint16_t depth; /* stack depth at entry (ties: the outer first) */
};

struct timeline {
	const struct an_ctx *ctx;
	struct tl_event *v;
	size_t n, cap;
	uint64_t limit, cut, nomem;
};

static int tl_init(const struct an_ctx *ctx, void **state)
{
	struct timeline *t = calloc(1, sizeof(*t));

	*state = t;
	if (!t)
		return -ENOMEM;
	t->ctx = ctx;
	t->limit = ctx->timeline_limit ? ctx->timeline_limit : TIMELINE_DEFAULT_LIMIT;
	return 0;
}

/* Room for one more; false when cut by the limit or out of memory
 * (counted either way: nothing is dropped silently). */
static bool room(struct timeline *t)
{
	if (t->n >= t->limit) {
		t->cut++;
		return false;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		struct tl_event *v;

		if (cap > t->limit)
			cap = t->limit;
		v = realloc(t->v, cap * sizeof(*v));
		if (!v) {
			t->nomem++;
			return false;
		}
		t->v = v;
		t->cap = cap;
	}
	return true;
}

static void tl_on_return(void *state, const struct an_return *r)
{
	struct timeline *t = state;
	struct tl_event *e;

	if (!room(t))
		return;
	e = &t->v[t->n++];
	memset(e, 0, sizeof(*e));
	e->tid = r->tid;
	e->fid = r->fid;
	e->ts = r->ts - r->incl_ns;
	e->dur = r->incl_ns;
	e->depth = r->depth > UINT16_MAX ? UINT16_MAX : (uint16_t)r->depth;
	e->kind = r->matched ? TL_RETURNED
		  : r->unwound ? TL_UNWOUND
		  : r->switched ? TL_SWITCHED
		  : r->open	 ? TL_OPEN
				 : TL_MISSING;
}

static void tl_on_io(void *state, const struct an_io *io)
{
	struct timeline *t = state;
	struct tl_event *e;

	if (!room(t))
		return;
	e = &t->v[t->n++];
	memset(e, 0, sizeof(*e));
	e->tid = io->tid;
	e->fid = io->sc << 8 | (io->fdkind & 0xff);
	e->fd = io->fd;
	e->ts = io->ts;
	e->dur = (uint64_t)io->ret << 32 | io->req;
	e->kind = TL_IO;
	e->failed = io->failed;
	e->depth = io->depth > UINT16_MAX ? UINT16_MAX : (uint16_t)io->depth;
}

static int tl_merge(void *dst, const void *src)
{
	struct timeline *d = dst;
	const struct timeline *s = src;
	size_t i;

	d->cut += s->cut;
	d->nomem += s->nomem;
	for (i = 0; i < s->n; i++) {
		if (!room(d))
			continue; /* counted in d->cut or d->nomem */
		d->v[d->n++] = s->v[i];
	}
	return 0;
}

/* Thread, then time, then the outer activation first (it contains the
 * inner one that starts at the same ns), then activations before I/O. */
static int cmp_event(const void *a, const void *b)
{
	const struct tl_event *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if ((x->kind == TL_IO) != (y->kind == TL_IO))
		return x->kind == TL_IO ? 1 : -1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->dur > y->dur ? -1 : x->dur < y->dur;
}

static int tl_report_text(void *state, FILE *f)
{
	const struct timeline *t = state;

	if (t->cut || t->nomem)
		fprintf(f,
			"timeline: %zu events kept, %" PRIu64 " cut by --timeline-limit %" PRIu64
			", %" PRIu64 " out of memory\n\n",
			t->n, t->cut, t->limit, t->nomem);
	return ferror(f) ? -EIO : 0;
}

static int tl_report_json(void *state, struct json *w)
{
	const struct timeline *t = state;
	int err = 0;

	err |= json__key(w, "timeline");
	err |= json__begin_object(w);
	err |= json__kv_u64(w, "events", t->n);
	err |= json__kv_u64(w, "cut", t->cut + t->nomem);
	err |= json__kv_u64(w, "limit", t->limit);
	err |= json__end_object(w);
	return err;
}

static void tl_free(void *state)
{
	struct timeline *t = state;

	if (!t)
		return;
	free(t->v);
	free(t);
}

/* ns as microseconds with the ns kept: "12.345". */
static int put_us(struct json *w, uint64_t ns)
{
	return json__double(w, (double)(ns / 1000) + (double)(ns % 1000) / 1000.0);
}

static int write_event(struct json *w, const struct timeline *t, const struct tl_event *e,
		       int pid, uint64_t t0)
{
	char buf[24];
	int err = 0;

	err |= json__begin_object(w);
	err |= json__kv_string(w, "ph", e->kind == TL_IO ? "i" : "X");
	err |= json__kv_i64(w, "pid", pid);
	err |= json__kv_u64(w, "tid", e->tid);
	err |= json__key(w, "ts");
	err |= put_us(w, e->ts - t0);
	err |= json__key(w, "name");
	if (e->kind == TL_IO) {
		err |= json__string(w, syscalls__name(e->fid >> 8));
		err |= json__kv_string(w, "cat", "io");
		err |= json__kv_string(w, "s", "t");
		err |= json__key(w, "args");
		err |= json__begin_object(w);
		err |= json__kv_i64(w, "fd", e->fd);
		err |= json__kv_string(w, "fd_kind", syscalls__fdkind_name(e->fid & 0xff));
		err |= json__kv_u64(w, e->failed ? "errno" : "bytes", e->dur >> 32);
		err |= json__kv_u64(w, "requested", (uint32_t)e->dur);
		err |= json__end_object(w);
	} else {
		err |= json__string(w, an_ctx__name(t->ctx, e->fid, buf));
		err |= json__kv_string(w, "cat", "call");
		err |= json__key(w, "dur");
		err |= put_us(w, e->dur);
		if (e->kind != TL_RETURNED) {
			/* Not returned: the duration runs to the event that found
			 * the frame gone, an upper bound. */
			err |= json__key(w, "args");
			err |= json__begin_object(w);
			err |= json__kv_string(w, "ended", kind_names[e->kind]);
			err |= json__end_object(w);
		}
	}
	err |= json__end_object(w);
	return err;
}

static int write_meta(struct json *w, const char *what, int pid, int64_t tid, const char *name)
{
	int err = 0;

	err |= json__begin_object(w);
	err |= json__kv_string(w, "ph", "M");
	err |= json__kv_string(w, "name", what);
	err |= json__kv_i64(w, "pid", pid);
	if (tid >= 0) {
		err |= json__kv_i64(w, "tid", tid);
	}
	err |= json__key(w, "args");
	err |= json__begin_object(w);
	err |= json__kv_string(w, "name", name);
	err |= json__end_object(w);
	err |= json__end_object(w);
	return err;
}

int timeline__write(const void *state, FILE *f, int pid, const char *comm, uint64_t *kept,
		    uint64_t *cut)
{
	const struct timeline *t = state;
	struct tl_event *v = NULL;
	struct json *w = NULL;
	uint64_t t0 = UINT64_MAX;
	char name[64];
	size_t i;
	int err;

	if (t->n && !(v = malloc(t->n * sizeof(*v))))
		return -ENOMEM;
	if (t->n)
		memcpy(v, t->v, t->n * sizeof(*v));
	qsort(v, t->n, sizeof(*v), cmp_event);
	for (i = 0; i < t->n; i++)
		if (v[i].ts < t0)
			t0 = v[i].ts;
	err = json__new(f, false, &w);
	if (err)
		goto cleanup;
	err |= json__begin_object(w);
	err |= json__key(w, "traceEvents");
	err |= json__begin_array(w);
	err |= write_meta(w, "process_name", pid, -1, comm);
	for (i = 0; i < t->n; i++) {
		if (i && v[i].tid == v[i - 1].tid)
			continue;
		if ((int)v[i].tid == pid)
			snprintf(name, sizeof(name), "%s (main thread %" PRIu32 ")", comm,
				 v[i].tid);
		else
			snprintf(name, sizeof(name), "thread %" PRIu32, v[i].tid);
		err |= write_meta(w, "thread_name", pid, v[i].tid, name);
	}
	for (i = 0; i < t->n && !err; i++)
		err |= write_event(w, t, &v[i], pid, t0);
	err |= json__end_array(w);
	err |= json__kv_string(w, "displayTimeUnit", "ns");
	err |= json__key(w, "otherData");
	err |= json__begin_object(w);
	err |= json__kv_string(w, "producer", "cabbpf --timeline");
	err |= json__kv_u64(w, "events", t->n);
	err |= json__kv_u64(w, "cut", t->cut + t->nomem);
	err |= json__kv_u64(w, "limit", t->limit);
	err |= json__key(w, "cut_rule");
	err |= json__string(w, t->cut + t->nomem
				       ? "the first LIMIT events in the order they completed "
					 "(activations at their return, I/O at its exit) are kept"
				       : "none: every event is here");
	err |= json__kv_u64(w, "time_zero_ns", t->n ? t0 : 0);
	err |= json__end_object(w);
	err |= json__end_object(w);
	if (!err)
		err = json__finish(w);
	if (kept)
		*kept = t->n;
	if (cut)
		*cut = t->cut + t->nomem;
cleanup:
	json__free(w);
	free(v);
	return err ? (err == -ENOMEM ? -ENOMEM : -EIO) : 0;
}

const struct analyzer_ops analyzer_timeline = {
	.name = "timeline",
	.help = "every activation and I/O call in time, for --timeline (opt-in)",
	.init = tl_init,
	.on_return = tl_on_return,
	.on_io = tl_on_io,
	.merge = tl_merge,
	.report_text = tl_report_text,
	.report_json = tl_report_json,
	.free = tl_free,
	.opt_in = true,
	.lower_bounds = AN_LOST_CALLS | AN_LOST_IO,
};
