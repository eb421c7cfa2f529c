// SPDX-License-Identifier: BSD-2-Clause
/*
 * A fork of a guarded process: its child is born with the parent's
 * probes' bytes and return addresses; both are taken out before it runs.
 * user/trace/guard_int.h lists the guard's files.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "user/proc/procfs.h"
#include "common/log.h"
#include "user/elf/image.h"
#include "user/probe/probe_sites.h"
#include "user/trace/guard_int.h"


/* An executable mapping of a file in a process, from /proc/PID/maps. */
struct xmap {
	uint64_t start, end, off;
	dev_t dev;
	ino_t ino;
};

struct clean {
	pid_t pid;
	int mem; /* /proc/PID/mem, read-write */
	struct xmap *maps;
	size_t nmaps;
	uint64_t removed;
};

/* The bytes a probe changes at a site: int3 over the first byte, or an
 * optimized uprobe's 5-byte call over a 5-byte nop (kernel >= 6.16). */
#define SITE_BYTES 5

struct csite {
	uint64_t addr; /* in the process */
	uint64_t off;  /* in the file */
	uint32_t len;
};

static int csite_cmp(const void *a, const void *b)
{
	const struct csite *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Does cur hold what a probe writes over orig (and nothing else: anything
 * else is the program's)? */
static bool probe_bytes(const uint8_t *cur, const uint8_t *orig, uint32_t len)
{
	if (!memcmp(cur, orig, len))
		return false;
	return cur[0] == 0xcc || (cur[0] == 0xe8 && len == SITE_BYTES && orig[0] == 0x0f &&
				  orig[1] == 0x1f && orig[2] == 0x44);
}

/* Put back the file's bytes at every recorded site of one file that the
 * process maps and holds a breakpoint at (probe_sites__each callback).
 * One read and at most one write per page that has sites: a forked
 * child of a target with 1,373 probed functions cost 7 ms in a read and
 * a write per site (1.8 -> 8.8 ms per fork); the bytes between two sites
 * are the child's own, written back unchanged (it is stopped). */
static void clean_file(void *ctx, const char *path, dev_t dev, ino_t ino, const uint64_t *offs,
		       size_t n)
{
	uint8_t span[4096 + SITE_BYTES];
	struct clean *c = ctx;
	struct image im = {.fd = -1};
	struct csite *v = NULL;
	struct stat sb;
	size_t i, j, k = 0, m;

	for (m = 0; m < c->nmaps && !(c->maps[m].dev == dev && c->maps[m].ino == ino); m++)
		;
	if (m == c->nmaps || image__map(path, &im))
		return;
	if (fstat(im.fd, &sb) || sb.st_dev != dev || sb.st_ino != ino ||
	    !(v = calloc(n, sizeof(*v))))
		goto cleanup; /* replaced since: not the file it maps */
	for (i = 0; i < n; i++) {
		for (m = 0; m < c->nmaps; m++) {
			const struct xmap *x = &c->maps[m];
			uint64_t addr;

			if (x->dev != dev || x->ino != ino || offs[i] < x->off ||
			    offs[i] >= x->off + (x->end - x->start))
				continue;
			addr = x->start + (offs[i] - x->off);
			v[k] = (struct csite){addr, offs[i],
					      (uint32_t)(x->end - addr < SITE_BYTES ? x->end - addr
										    : SITE_BYTES)};
			if (offs[i] + v[k].len <= im.size)
				k++;
			break;
		}
	}
	qsort(v, k, sizeof(*v), csite_cmp);
	for (i = 0; i < k; i = j) {
		uint64_t page = v[i].addr & ~4095ull, lo = v[i].addr, hi = lo + v[i].len;
		uint64_t patched = 0;

		/* the sites that start in this page; a site may end past it */
		for (j = i + 1; j < k && (v[j].addr & ~4095ull) == page; j++)
			if (v[j].addr + v[j].len > hi)
				hi = v[j].addr + v[j].len;
		if (pread(c->mem, span, hi - lo, (off_t)lo) != (ssize_t)(hi - lo))
			continue;
		for (m = i; m < j; m++) {
			uint8_t *cur = span + (v[m].addr - lo);
			const uint8_t *orig = im.base + v[m].off;

			if (!probe_bytes(cur, orig, v[m].len))
				continue;
			memcpy(cur, orig, v[m].len);
			patched++;
		}
		if (patched && pwrite(c->mem, span, hi - lo, (off_t)lo) == (ssize_t)(hi - lo))
			c->removed += patched;
	}
cleanup:
	free(v);
	image__unmap(&im);
}

/* Take every breakpoint this cabbpf put (user/probe/probe_sites.h) out of
 * process pid, stopped: it inherited them from the target by fork.
 * Returns how many. */
static uint64_t clean_child(pid_t pid)
{
	char path[64], line[PATH_MAX + 128];
	struct clean c = {.pid = pid, .mem = -1};
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, ino;
		unsigned maj, mnr;
		char perm[8];
		struct xmap *nm;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &start, &end, perm, &off, &maj,
			   &mnr, &ino) != 7 ||
		    perm[2] != 'x' || !ino)
			continue;
		nm = realloc(c.maps, (c.nmaps + 1) * sizeof(*nm));
		if (!nm)
			break;
		c.maps = nm;
		c.maps[c.nmaps++] = (struct xmap){start, end, off, makedev(maj, mnr), (ino_t)ino};
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	c.mem = open(path, O_RDWR | O_CLOEXEC);
	if (c.mem >= 0 && c.nmaps)
		probe_sites__each(clean_file, &c);
	if (c.mem >= 0)
		close(c.mem);
	free(c.maps);
	return c.removed;
}

/* guard_tracer__walk_pending's step for a fork's child: every slot of it goes back. */
static void child_slot(struct guard *g, const uint64_t rec[3], void *slots)
{
	if (guard_tracer__restore_slot(g, (pid_t)rec[0], rec[1], rec[2]))
		++*(uint64_t *)slots;
}

/*
 * A stop of tid, if tid is a process the target forked (guard__forks:
 * PTRACE_O_TRACEFORK holds it at birth, before its first instruction;
 * its stop may come before its parent's fork event). fork copies the
 * forking thread's pending return instances, and the child's stack
 * holds their trampolines; nothing watches the child (the probes are the
 * target's), so an exception there unwinding through an inherited frame
 * found the trampoline and called std::terminate
 * (tests/targets/forkthrow.cc). And the child holds the target's
 * breakpoints: every traced call there armed a return probe of its own
 * (sites.h). The original return addresses go back into the child, from
 * its own list (dump_pending), the breakpoints come out, and it is let
 * go: it runs as untraced.
 * Returns true if tid was such a child.
 */
bool guard_forks__child(struct guard *g, pid_t tid)
{
	union bpf_iter_link_info li;
	uint64_t slots = 0, bps;

	if (!g->forks || guard_tracer__thread(g, tid) ||
	    procfs__status_field(tid, "Tgid") == g->pid)
		return false;
	/* A tracer process: the probe sites the child may have inherited
	 * were sent before they were placed (guardian__give_sites) */
	guard_proc__messages(g);
	pthread_mutex_lock(&g->mu);
	if (g->dump_tgid) {
		memset(&li, 0, sizeof(li));
		li.task.pid = (uint32_t)tid;
		*g->dump_tgid = (uint32_t)tid;
		guard_tracer__walk_pending(g, &li, child_slot, &slots);
		*g->dump_tgid = 0;
	}
	pthread_mutex_unlock(&g->mu);
	/* clone(CLONE_VM) with SIGCHLD reports as a fork, but the child shares
	 * the target's memory: the bytes written there would take the
	 * target's own breakpoints out (its later calls went uncounted,
	 * silently). Such a child inherits no return instance either. */
	if (syscall(SYS_kcmp, g->pid, tid, KCMP_VM, 0UL, 0UL) == 0) {
		log_debug("guard: pid %d shares the target's memory (clone CLONE_VM): let go as "
			  "it is",
			  (int)tid);
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return true;
	}
	bps = clean_child(tid);
	log_debug("guard: pid %d, forked by the target: %" PRIu64 " return addresses and %" PRIu64
		  " breakpoints it inherited taken out",
		  (int)tid, slots, bps);
	ptrace(PTRACE_DETACH, tid, NULL, NULL);
	return true;
}

/* One wait status of a tracee, while tracing. */
