// SPDX-License-Identifier: BSD-2-Clause
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

void syscalls__json_table(struct json *w, syscalls_cell_fn cell, const void *ctx)
{
	struct syscalls_cell c;
	unsigned sc, k;

	json__key(w, "syscalls");
	json__begin_array(w);
	for (sc = 0; sc < CABBPF_SC__MAX; sc++)
		for (k = 0; k < CABBPF_FD__MAX; k++) {
			cell(ctx, sc, k, &c);
			if (!c.calls)
				continue;
			json__begin_object(w);
			json__kv_string(w, "syscall", syscalls__name(sc));
			json__kv_string(w, "direction", CABBPF_SC_IS_OUTPUT(sc) ? "out" : "in");
			json__kv_string(w, "fd_kind", syscalls__fdkind_name(k));
			json__kv_u64(w, "calls", c.calls);
			json__kv_u64(w, "errors", c.errors);
			json__kv_u64(w, "bytes", c.bytes);
			json__kv_u64(w, "requested", c.req);
			json__kv_u64(w, "short", c.short_calls);
			if (c.hist_req)
				json_hist(w, "hist_requested", c.hist_req);
			if (c.hist_ret)
				json_hist(w, "hist_returned", c.hist_ret);
			json__end_object(w);
		}
	json__end_array(w);
}
