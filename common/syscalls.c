// SPDX-License-Identifier: BSD-2-Clause
#include "common/emit.h"
#include "common/json.h"
#include "common/syscalls.h"

static const char *const sc_names[CABBPF_SC__MAX] = {
	[CABBPF_SC_READ] = "read",	     [CABBPF_SC_READV] = "readv",
	[CABBPF_SC_PREAD64] = "pread64",     [CABBPF_SC_PREADV] = "preadv",
	[CABBPF_SC_PREADV2] = "preadv2",     [CABBPF_SC_RECVFROM] = "recvfrom",
	[CABBPF_SC_RECVMSG] = "recvmsg",     [CABBPF_SC_RECVMMSG] = "recvmmsg",
	[CABBPF_SC_MSGRCV] = "msgrcv",	     [CABBPF_SC_WRITE] = "write",
	[CABBPF_SC_WRITEV] = "writev",	     [CABBPF_SC_PWRITE64] = "pwrite64",
	[CABBPF_SC_PWRITEV] = "pwritev",     [CABBPF_SC_PWRITEV2] = "pwritev2",
	[CABBPF_SC_SENDTO] = "sendto",	     [CABBPF_SC_SENDMSG] = "sendmsg",
	[CABBPF_SC_SENDMMSG] = "sendmmsg",   [CABBPF_SC_MSGSND] = "msgsnd",
	/* Two-sided calls: the same name on both sides; "direction" (JSON)
	 * or the label (text) tells them apart. */
	[CABBPF_SC_SENDFILE_IN] = "sendfile", [CABBPF_SC_SENDFILE_OUT] = "sendfile",
	[CABBPF_SC_SPLICE_IN] = "splice",     [CABBPF_SC_SPLICE_OUT] = "splice",
	[CABBPF_SC_COPY_FILE_RANGE_IN] = "copy_file_range",
	[CABBPF_SC_COPY_FILE_RANGE_OUT] = "copy_file_range",
	[CABBPF_SC_VMSPLICE_IN] = "vmsplice", [CABBPF_SC_VMSPLICE_OUT] = "vmsplice",
};

/* Text tables' names: a call that can be either side says which. */
static const char *const sc_labels[CABBPF_SC__MAX] = {
	[CABBPF_SC_SENDFILE_IN] = "sendfile<",
	[CABBPF_SC_SENDFILE_OUT] = "sendfile>",
	[CABBPF_SC_SPLICE_IN] = "splice<",
	[CABBPF_SC_SPLICE_OUT] = "splice>",
	[CABBPF_SC_COPY_FILE_RANGE_IN] = "copy_file_range<",
	[CABBPF_SC_COPY_FILE_RANGE_OUT] = "copy_file_range>",
	[CABBPF_SC_VMSPLICE_IN] = "vmsplice<",
	[CABBPF_SC_VMSPLICE_OUT] = "vmsplice>",
};

static const char *const kind_names[CABBPF_FD__MAX] = {
	[CABBPF_FD_OTHER] = "other", [CABBPF_FD_FILE] = "file",     [CABBPF_FD_PIPE] = "pipe",
	[CABBPF_FD_SOCKET] = "socket", [CABBPF_FD_TTY] = "tty",	    [CABBPF_FD_NONE] = "msgqueue",
};

const char *syscalls__name(unsigned sc)
{
	return sc < CABBPF_SC__MAX ? sc_names[sc] : "?";
}

const char *syscalls__label(unsigned sc)
{
	if (sc < CABBPF_SC__MAX && sc_labels[sc])
		return sc_labels[sc];
	return syscalls__name(sc);
}

const char *syscalls__fdkind_name(unsigned kind)
{
	return kind < CABBPF_FD__MAX ? kind_names[kind] : "?";
}

static void json_hist(struct json *w, const char *key, const __u64 *h)
{
	unsigned b;

	json__key(w, key);
	json__begin_array(w);
	for (b = 0; b < CABBPF_HIST_BUCKETS; b++)
		json__u64(w, h[b]);
	json__end_array(w);
}

/* One row of the table: a cell and where it is. */
struct sc_row {
	struct syscalls_cell c;
	const char *name, *label, *direction, *fd_kind;
};

/* The table's columns, text and JSON (docs/json-schema.md). */
static const struct emit_col sc_cols[] = {
	{NULL, "SYSCALL", 16, EMIT_STR, EMIT_COL(struct sc_row, label)},
	{"syscall", NULL, 0, EMIT_STR, EMIT_COL(struct sc_row, name)},
	{"direction", NULL, 0, EMIT_STR, EMIT_COL(struct sc_row, direction)},
	{"fd_kind", "FD_KIND", -9, EMIT_STR, EMIT_COL(struct sc_row, fd_kind)},
	{"calls", "CALLS", 10, EMIT_COUNT, EMIT_COL(struct sc_row, c.calls)},
	{"errors", NULL, 0, EMIT_U64, EMIT_COL(struct sc_row, c.errors)},
	{"bytes", "BYTES", 12, EMIT_COUNT, EMIT_COL(struct sc_row, c.bytes)},
	{"requested", "REQUESTED", 12, EMIT_COUNT, EMIT_COL(struct sc_row, c.req)},
	{"short", "SHORT", 8, EMIT_COUNT, EMIT_COL(struct sc_row, c.short_calls)},
	{NULL, "ERRORS", 8, EMIT_COUNT, EMIT_COL(struct sc_row, c.errors)},
};

/* Cell (sc, k) as a row; false when it has no calls. */
static bool sc_row(syscalls_cell_fn cell, const void *ctx, unsigned sc, unsigned k,
		   struct sc_row *r)
{
	cell(ctx, sc, k, &r->c);
	r->name = syscalls__name(sc);
	r->label = syscalls__label(sc);
	r->direction = CABBPF_SC_IS_OUTPUT(sc) ? "out" : "in";
	r->fd_kind = syscalls__fdkind_name(k);
	return r->c.calls != 0;
}

void syscalls__json_table(struct json *w, syscalls_cell_fn cell, const void *ctx)
{
	struct sc_row r;
	unsigned sc, k;

	json__key(w, "syscalls");
	json__begin_array(w);
	for (sc = 0; sc < CABBPF_SC__MAX; sc++)
		for (k = 0; k < CABBPF_FD__MAX; k++) {
			if (!sc_row(cell, ctx, sc, k, &r))
				continue;
			json__begin_object(w);
			emit__row_json(w, sc_cols, EMIT_N(sc_cols), &r, NULL);
			if (r.c.hist_req)
				json_hist(w, "hist_requested", r.c.hist_req);
			if (r.c.hist_ret)
				json_hist(w, "hist_returned", r.c.hist_ret);
			json__end_object(w);
		}
	json__end_array(w);
}

void syscalls__text_table(FILE *f, syscalls_cell_fn cell, const void *ctx, bool lb)
{
	struct sc_row r;
	unsigned sc, k;

	emit__head(f, sc_cols, EMIT_N(sc_cols));
	for (sc = 0; sc < CABBPF_SC__MAX; sc++)
		for (k = 0; k < CABBPF_FD__MAX; k++)
			if (sc_row(cell, ctx, sc, k, &r))
				emit__row_text(f, sc_cols, EMIT_N(sc_cols), &r, lb, NULL);
}
