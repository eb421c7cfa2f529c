// SPDX-License-Identifier: BSD-2-Clause
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
};

static const char *const kind_names[CABBPF_FD__MAX] = {
	[CABBPF_FD_OTHER] = "other", [CABBPF_FD_FILE] = "file",     [CABBPF_FD_PIPE] = "pipe",
	[CABBPF_FD_SOCKET] = "socket", [CABBPF_FD_TTY] = "tty",	    [CABBPF_FD_NONE] = "msgqueue",
};

const char *syscalls__name(unsigned sc)
{
	return sc < CABBPF_SC__MAX ? sc_names[sc] : "?";
}

const char *syscalls__fdkind_name(unsigned kind)
{
	return kind < CABBPF_FD__MAX ? kind_names[kind] : "?";
}
