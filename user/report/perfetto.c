// SPDX-License-Identifier: BSD-2-Clause
/* --timeline FILE: the timeline analyzer's events as a Trace Event file
 * (perfetto.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/analyzer.h"
#include "analyzers/timeline.h"
#include "common/json.h"
#include "common/syscalls.h"
#include "user/report/perfetto.h"

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

/* ns as microseconds with the ns kept: "12.345". */
static int put_us(struct json *w, uint64_t ns)
{
	return json__double(w, (double)(ns / 1000) + (double)(ns % 1000) / 1000.0);
}

static int write_event(struct json *w, const struct an_ctx *ctx, const struct tl_event *e, int pid,
		       uint64_t t0)
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
		err |= json__string(w, an_ctx__name(ctx, e->fid, buf));
		err |= json__kv_string(w, "cat", "call");
		err |= json__key(w, "dur");
		err |= put_us(w, e->dur);
		if (e->kind != TL_RETURNED || e->vals) {
			err |= json__key(w, "args");
			err |= json__begin_object(w);
			/* Not returned: the duration runs to the event that
			 * found the frame gone, an upper bound. */
			if (e->kind != TL_RETURNED)
				err |= json__kv_string(w, "ended", timeline__kind_name(e->kind));
			/* --args, --retval: as the text shows them */
			for (const char *p = e->vals; p && *p; p += strlen(p) + 1) {
				err |= json__key(w, p);
				p += strlen(p) + 1;
				err |= json__string(w, p);
			}
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

int perfetto__write(const void *state, FILE *f, int pid, const char *comm, uint64_t *kept,
		    uint64_t *cut)
{
	const struct an_ctx *ctx = timeline__ctx(state);
	uint64_t limit, ncut;
	size_t n;
	const struct tl_event *ev = timeline__events(state, &n, &limit, &ncut);
	struct tl_event *v = NULL;
	struct json *w = NULL;
	uint64_t t0 = UINT64_MAX;
	char name[64];
	size_t i;
	int err;

	if (n && !(v = malloc(n * sizeof(*v))))
		return -ENOMEM;
	if (n)
		memcpy(v, ev, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_event);
	for (i = 0; i < n; i++)
		if (v[i].ts < t0)
			t0 = v[i].ts;
	err = json__new(f, false, &w);
	if (err)
		goto cleanup;
	err |= json__begin_object(w);
	err |= json__key(w, "traceEvents");
	err |= json__begin_array(w);
	err |= write_meta(w, "process_name", pid, -1, comm);
	for (i = 0; i < n; i++) {
		if (i && v[i].tid == v[i - 1].tid)
			continue;
		if ((int)v[i].tid == pid)
			snprintf(name, sizeof(name), "%s (main thread %" PRIu32 ")", comm,
				 v[i].tid);
		else
			snprintf(name, sizeof(name), "thread %" PRIu32, v[i].tid);
		err |= write_meta(w, "thread_name", pid, v[i].tid, name);
	}
	for (i = 0; i < n && !err; i++)
		err |= write_event(w, ctx, &v[i], pid, t0);
	err |= json__end_array(w);
	err |= json__kv_string(w, "displayTimeUnit", "ns");
	err |= json__key(w, "otherData");
	err |= json__begin_object(w);
	err |= json__kv_string(w, "producer", "cabbpf --timeline");
	err |= json__kv_u64(w, "events", n);
	err |= json__kv_u64(w, "cut", ncut);
	err |= json__kv_u64(w, "limit", limit);
	err |= json__key(w, "cut_rule");
	err |= json__string(w, ncut ? "the first LIMIT events in the order they completed "
				      "(activations at their return, I/O at its exit) are kept"
				    : "none: every event is here");
	err |= json__kv_u64(w, "time_zero_ns", n ? t0 : 0);
	err |= json__end_object(w);
	err |= json__end_object(w);
	if (!err)
		err = json__finish(w);
	if (kept)
		*kept = n;
	if (cut)
		*cut = ncut;
cleanup:
	json__free(w);
	free(v);
	return err ? (err == -ENOMEM ? -ENOMEM : -EIO) : 0;
}
