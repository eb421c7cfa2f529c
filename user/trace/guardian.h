/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/trace/guardian — the guard's tracer in a process of its own, so that
 * the target's safety outlives cabbpf.
 *
 * While the guard (user/trace/guard.h) holds a target, the target's stacks
 * hold the kernel's uretprobe trampoline in the return-address slots of
 * pending traced calls, and the guard's BPF program stops a thread that
 * throws with SIGSTOP for the guard's ptrace tracer to write them back. A
 * tracer that dies while a thread sits in such a stop lets it run on (the
 * kernel wakes a dead tracer's tracees, the SIGSTOP dropped): it unwinds
 * through the trampolines and calls std::terminate. A tracer thread in
 * cabbpf's process dies with cabbpf (an operator's kill -9, a crash of
 * ours), so for -p PID and -- COMMAND the tracer is a process of its own
 * (double fork, its own session, SIGINT, SIGTERM, SIGHUP and SIGPIPE
 * ignored, no file of cabbpf's but what this channel gives it): it goes on
 * serving the stops when cabbpf dies, waits until cabbpf's process has
 * ended (its trace probes gone with its files: no new trampoline comes),
 * then lets go of the target as a clean end does.
 *
 * This file is the channel between the two: a SOCK_SEQPACKET socket that
 * carries the guard's kernel objects (SCM_RIGHTS) and a few words, and a
 * pidfd of cabbpf's process that tells the tracer when cabbpf is gone.
 * The state both sides read (the stop request, the drain rounds, the
 * counters) lives in shared memory the guard maps before the fork.
 *
 * Threads: cabbpf's side (start, seized, give_*, nudge, end) from the
 * thread that owns the guard (the loader's main thread), guardian__start
 * before any other thread of cabbpf exists (it forks); the tracer's side
 * (recv, send) in the tracer process. All of cabbpf's side accepts NULL.
 */
#ifndef USER_TRACE_GUARDIAN_H
#define USER_TRACE_GUARDIAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct guardian;

/* The guard's kernel objects the tracer works with: bpf/guard.bpf.c's
 * dump_pending program, guard_reqs and guarded maps, stop_at_exit map and
 * stop_on_exit program (letting go in place), its .bss map (bss_size
 * bytes: dump_tgid), and bpf/trace.bpf.c's throttled map (--lossless; -1:
 * none). */
struct guardian_set {
	int iter, reqs, guarded, exit_map, exit_prog, bss, throttled;
	uint32_t bss_size;
};

/* The tracer process's end of the channel. */
struct guardian_end {
	int sock;   /* to cabbpf */
	int cabbpf; /* a pidfd of cabbpf's process: readable once it has ended */
	int logfd;  /* CABBPF_GUARDIAN_LOG's file (appended), or -1 */
};

enum guardian_op {
	/* cabbpf -> tracer */
	GUARDIAN_SET = 1,   /* a struct guardian_set (fds in its order), val bss_size */
	GUARDIAN_LINKS = 2, /* more of the guard's probe links, kept while it lives */
	GUARDIAN_NUDGE = 3, /* look at the shared state (stop asked, a drain round) */
	GUARDIAN_SITES = 7, /* a file's probe sites (user/probe/probe_sites.h): data */
	/* tracer -> cabbpf */
	GUARDIAN_SEIZED = 4, /* val: 0 or -errno */
	GUARDIAN_ACK = 5,    /* the last SET is in use */
	GUARDIAN_BYE = 6,    /* let go (or the target ended): it exits now */
};

/* One message as the tracer receives it; it owns fds[0..nfds). */
#define GUARDIAN_MSG_FDS 200
#define GUARDIAN_MSG_DATA (40 * 1024)
#define PATH_MAX_BYTES 4096
struct guardian_msg {
	uint32_t op;
	int64_t val;
	int fds[GUARDIAN_MSG_FDS];
	size_t nfds;
	size_t len; /* bytes of data */
	_Alignas(8) uint8_t data[GUARDIAN_MSG_DATA];
};

/*
 * Starts the tracer process: tracer(arg, end) runs there and must not
 * return (it _exits). stderr stays open in it (its warnings are cabbpf's);
 * every other file of cabbpf's is closed there. Returns 0 and *out (owned
 * by the caller, ended by guardian__end), or -errno (logged: the caller
 * then traces from a thread of its own, guarded while cabbpf lives only).
 */
int guardian__start(void (*tracer)(void *arg, const struct guardian_end *end), void *arg,
		    struct guardian **out);

/* Waits for the tracer's GUARDIAN_SEIZED. Returns its value (0 or -errno),
 * or -ECHILD if the tracer ended without a word. */
int guardian__seized(struct guardian *gd);

/* Hands the tracer copies of s's descriptors and waits (at most 10 s) until
 * it uses them. Returns 0, -ESRCH (it ended: the target is gone) or -errno. */
int guardian__give_set(struct guardian *gd, const struct guardian_set *s);

/* Hands the tracer copies of links, which it keeps until it ends (so that
 * a throw after cabbpf's death still stops). Returns 0 or -errno (logged
 * at -v). */
int guardian__give_links(struct guardian *gd, const int *links, size_t n);

/* Tells the tracer of probe sites in the file at path (user/probe/probe_sites.h),
 * before they are placed: a child the target forks inherits them, and the
 * tracer takes them out of it. Returns 0 or -errno (logged at -v). Any
 * thread. */
int guardian__give_sites(struct guardian *gd, const char *path, const uint64_t *offs, size_t n);

/* In the tracer: a GUARDIAN_SITES message's file and offsets (pointing
 * into m; the path is NUL-padded to 8 bytes, so the offsets are aligned).
 * Returns 0 or -EPROTO. */
int guardian__parse_sites(const struct guardian_msg *m, const char **path, const uint64_t **offs,
			  size_t *n);

/* Wakes the tracer to look at the shared state. Never blocks. */
void guardian__nudge(struct guardian *gd);

/*
 * Waits until the tracer process has ended (it lets go when the guard's
 * shared stop request is set and nudged, or when the target ends), so that
 * its copies are closed before cabbpf's own closes release the probes.
 * Returns true if it said goodbye (false: it died, logged). Frees gd.
 */
bool guardian__end(struct guardian *gd);

/* In the tracer: the next message into *m. wait: block until one comes.
 * Returns its op, 0 at the socket's end (cabbpf gone), -EAGAIN (none
 * waiting), or -EPROTO (a message that makes no sense: dropped). */
int guardian__recv(int sock, struct guardian_msg *m, bool wait);

/* A word from the tracer (or from cabbpf: GUARDIAN_NUDGE). Returns 0 or
 * -errno. */
int guardian__send(int sock, uint32_t op, int64_t val);

#endif /* USER_TRACE_GUARDIAN_H */
