// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "user/trace/trace.h"
#include "user/kernel/bpfload.h"
#include "user/kernel/features.h"
#include "analyzers/isp.h"
#include "common/log.h"
#include "user/probe/uprobe_multi.h"
#include "user/proc/procfs.h"
#include "trace.skel.h"
#include "trace_nosession.skel.h"

/* One group's probe links: multi-uprobe links (several when refused sites
 * split the set: [0] entries, [1] returns), or else one perf link per
 * site (entries at even slots, returns at odd ones). */
struct link_set {
	int *mfd[2];
	uint32_t nmfd[2];
	struct bpf_link **links;
	uint32_t nlinks;
};

/* A thread closing link sets taken out of the trace: closing a link takes
 * its breakpoints out at once, then waits for the kernel's grace periods
 * (50-400 ms here, or as long as the target: see trace__attach_group), so
 * the loader does not wait. */
struct closer {
	pthread_t th;
	struct link_set ls;
	uint64_t ns; /* how long the release took (set by the thread) */
};

/* A closer thread mostly waits in close(): a small stack. */
#define CLOSER_STACK (256 * 1024)

struct trace {
	struct trace_opts o;
	struct trace_bpf *skel;
	struct bpf_program *entry, *ret; /* the pair in use (real or floor) */
	int ncpus;
	/* The loader's mapping of the "slots" map: ncpus regions of 2^shift
	 * slots (bpf/pipeline.bpf.h); NULL until map_rings(). */
	struct cabbpf_slot *ring;
	size_t ring_len; /* bytes mapped */
	/* The loader's mapping of the "heads" map (one struct cabbpf_head per
	 * CPU): the loader stores each region's tail there. */
	struct cabbpf_head *heads;
	size_t heads_len;
	/* groups: the per-function hit counters ("fhits"), mapped */
	const volatile uint64_t *fhits;
	size_t fhits_len;
	unsigned shift;
	uint64_t mask;
	uint32_t tstab_slots; /* the thread table's size (bpf/pipeline.bpf.h) */
	uint64_t *cons; /* per CPU: next ring position to read (private) */
	/* the probe links of each group (without o.groups, all in [0]) */
	struct link_set sets[CABBPF_NGROUPS];
	struct bpf_link *exec_link; /* on_exec: execve seen in the target */
	struct bpf_link *exit_link; /* on_exit: threads killed by another's execve */
	struct bpf_link *fork_link; /* on_fork: new processes of the target's */
	struct bpf_link *switch_link; /* on_switch: off-CPU intervals (on-CPU time) */
	uint32_t refused;
	bool multi;
	uint32_t nsized; /* functions with a --size rule */
	bool paused; /* sampling: between windows (trace__pause) */
	/* link sets being closed, oldest first */
	struct closer **closers;
	uint32_t nclosers, capclosers;
	uint64_t gate;		     /* o.groups: the gate as last stored */
	uint8_t gen[CABBPF_NGROUPS]; /* each group's generation (its links' cookies) */
	bool detached; /* trace__detach ran: what is drained now is the last drain */
	int exe_fd;    /* the traced file, open from load() to read_exe_identity() */
	/* The test hooks of trace.h (0/false unless the environment arms
	 * them): fail the drains once fail_read_at events were read, or the
	 * drains after trace__detach. */
	uint64_t read, fail_read_at;
	bool fail_final;
};

/* The --size rules into the "sizespecs" map (bpf/trace.bpf.c), by fid.
 * Returns 0 or -errno. */
static int fill_sizespecs(struct trace *t)
{
	int fd = bpf_map__fd(t->skel->maps.sizespecs);
	uint32_t fid;

	for (fid = 0; t->nsized && fid < t->o.nfuncs; fid++) {
		struct cabbpf_sizespec v = {0};
		uint8_t s = t->o.size_specs[fid];

		if (!s)
			continue;
		v.arg = ISP_SPEC_ARG(s);
		v.strlen = (s & ISP_SPEC_STRLEN) != 0;
		if (bpf_map_update_elem(fd, &fid, &v, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* The entry probe's cookie of fid (include/cabbpf_event.h): the fid, the
 * --size flag, the sp correction in the high half (with groups: its low
 * 24 bits; trace__attach refuses a larger one). */
static uint64_t entry_cookie(const struct trace *t, uint32_t fid)
{
	uint64_t c = fid;

	if (t->o.size_specs && t->o.size_specs[fid])
		c |= CABBPF_COOKIE_SIZED;
	if (t->o.sp_delta)
		c |= (uint64_t)(t->o.groups ? t->o.sp_delta[fid] & 0xffffffu : t->o.sp_delta[fid])
		     << 32;
	return c;
}

/* The group and generation bits of a probe of group g (o.groups). */
static uint64_t group_bits(const struct trace *t, unsigned g)
{
	return (uint64_t)g << CABBPF_COOKIE_GRP_SHIFT | (uint64_t)t->gen[g]
								<< CABBPF_COOKIE_GEN_SHIFT;
}

/* Open the skeleton: trace.bpf.o, or on a kernel without uprobe sessions
 * its build without the session kfunc (trace_nosession.bpf.o: the same
 * programs, maps and data, which the Makefile checks), so that libbpf does
 * not search every kernel module's BTF for that kfunc at each load.
 * Returns the skeleton, or NULL with errno set. */
static struct trace_bpf *open_skel(bool session_kfunc)
{
	struct trace_bpf *obj;
	int err;

	if (session_kfunc)
		return trace_bpf__open();
	obj = calloc(1, sizeof(*obj));
	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	err = trace_bpf__create_skeleton(obj);
	if (!err) {
		obj->skeleton->data = (void *)trace_nosession_bpf__elf_bytes(&obj->skeleton->data_sz);
		err = bpf_object__open_skeleton(obj->skeleton, NULL);
	}
	if (err) {
		trace_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

/* Open and load the skeleton; multi selects the attach type of the probe
 * programs (it must be fixed before load). */
static int load(struct trace *t, bool multi)
{
	int err;

	t->skel = open_skel(!t->o.no_session_kfunc || t->o.session);
	if (!t->skel)
		return -errno ? -errno : -ENOMEM;
	t->skel->rodata->target_tgid = t->o.pid > 0 ? (__u32)t->o.pid : 0;
	t->skel->rodata->session = t->o.session && !t->o.no_returns;
	t->skel->rodata->want_time = !t->o.no_times;
	/* With return probes, entries read their return-address slot: it
	 * tells tail calls from calls after a non-local exit. */
	t->skel->rodata->slot_check = !t->o.no_returns && features__get()->has[KF_XOL_AREA];
	{
		const char *unseen = getenv("CABBPF_TEST_UNSEEN_SWITCH_INS");
		const char *nothing = getenv("CABBPF_TEST_DELIVER_NOTHING");

		t->skel->rodata->test_unseen_switch_ins = unseen && *unseen == '1';
		t->skel->rodata->test_deliver_nothing = nothing && *nothing == '1';
	}
	t->skel->rodata->cgroup_on = t->o.cgroup;
	t->skel->rodata->sampling = t->o.sampling || t->o.groups;
	t->skel->rodata->groups_on = t->o.groups;
	t->skel->rodata->sized_on = t->nsized > 0;
	t->skel->rodata->lossless = t->o.lossless;
	/* The traced executable, so an execve of another program is seen as
	 * such in the kernel (bpf/trace.bpf.c other_image): the file opened
	 * here, named by the kernel after load (read_exe_identity). */
	t->skel->rodata->self_tgid = (__u32)getpid();
	if (t->exe_fd >= 0)
		close(t->exe_fd); /* a load before this one's */
	t->skel->rodata->exe_fd = t->o.pid > 0 ? open(t->o.binary, O_RDONLY | O_CLOEXEC) : -1;
	t->exe_fd = t->skel->rodata->exe_fd;
	bpf_program__set_autoload(t->skel->progs.exe_identity, t->exe_fd >= 0);
	/* The high-water mark at half the ring: the other half is headroom
	 * for what other threads emit before their next event stops them
	 * (one event each, plus I/O and switch events). */
	t->skel->rodata->lossless_gap = (t->mask + 1) / 2;
	t->entry = t->o.floor ? t->skel->progs.empty_entry : t->skel->progs.on_entry;
	t->ret = t->o.floor ? t->skel->progs.empty_return : t->skel->progs.on_return;
	bpf_program__set_autoload(t->o.floor ? t->skel->progs.on_entry : t->skel->progs.empty_entry,
				  false);
	bpf_program__set_autoload(
		t->o.floor ? t->skel->progs.on_return : t->skel->progs.empty_return, false);
	bpf_program__set_autoload(t->skel->progs.on_session, t->skel->rodata->session);
	if (t->skel->rodata->session) {
		/* one program for both: no return program of its own */
		bpf_program__set_autoload(t->entry, false);
		bpf_program__set_autoload(t->ret, false);
		t->entry = t->skel->progs.on_session;
		t->ret = NULL;
		bpf_program__set_expected_attach_type(t->entry, UPROBE_SESSION_ATTACH_TYPE);
	} else if (multi) {
		bpf_program__set_expected_attach_type(t->entry, UPROBE_MULTI_ATTACH_TYPE);
		bpf_program__set_expected_attach_type(t->ret, UPROBE_MULTI_ATTACH_TYPE);
	}
	t->skel->rodata->ring_shift = t->shift;
	t->skel->rodata->ring_mask = t->mask;
	/* CABBPF_TEST_TSTAB_SLOTS=N (a power of two): a thread table of N
	 * slots, so tests can make threads share slots (task storage, slots
	 * freed and taken again: bpf/pipeline.bpf.h). */
	t->tstab_slots = CABBPF_TSTAB_SLOTS;
	if (getenv("CABBPF_TEST_TSTAB_SLOTS")) {
		long n = atol(getenv("CABBPF_TEST_TSTAB_SLOTS"));

		if (n >= 1 && n <= CABBPF_TSTAB_SLOTS && !(n & (n - 1)))
			t->tstab_slots = (uint32_t)n;
	}
	t->skel->rodata->tstab_mask = t->tstab_slots - 1;
	err = bpf_map__set_max_entries(t->skel->maps.slots, (__u32)t->ncpus << t->shift);
	if (!err)
		err = bpf_map__set_max_entries(t->skel->maps.tstab, t->tstab_slots);
	if (!err)
		err = bpf_map__set_max_entries(t->skel->maps.fhits, t->o.groups ? t->o.nfuncs : 1);
	if (!err)
		err = bpf_map__set_max_entries(t->skel->maps.heads, (__u32)t->ncpus);
	if (!err && t->o.unguarded)
		err = bpf_map__set_max_entries(t->skel->maps.guarded, 1);
	if (!err && !t->o.lossless)
		err = bpf_map__set_max_entries(t->skel->maps.throttled, 1);
	if (err)
		return err;
	err = trace_bpf__load(t->skel);
	return err ? err : fill_sizespecs(t);
}

/* The kernel's name of the traced file (bpf/trace.bpf.c exe_identity, one
 * pass of a task iterator over the file load() opened), then that file is
 * closed. If that cannot run, stat()'s device and inode, which are the
 * kernel's on every file system but overlayfs. Returns 0 or -errno
 * (logged at debug level: the trace goes on, only an execve of another
 * program could go unseen). */
static int read_exe_identity(struct trace *t)
{
	struct bpf_link *l = NULL;
	struct stat sb;
	char buf[64];
	int fd = -1, err = 0;
	ssize_t n;

	if (t->o.pid <= 0)
		return 0; /* no one target: nothing to tell its execs apart by */
	if (t->exe_fd < 0) {
		err = -ENOENT; /* the file could not be opened: stat() may do */
		goto cleanup;
	}
	l = bpf_program__attach_iter(t->skel->progs.exe_identity, NULL);
	if (!l) {
		err = -errno;
		goto cleanup;
	}
	fd = bpf_iter_create(bpf_link__fd(l));
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (n < 0)
		err = -errno;
cleanup:
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(l);
	if (t->exe_fd >= 0)
		close(t->exe_fd);
	t->exe_fd = -1;
	if (!t->skel->bss->exe_ino && !stat(t->o.binary, &sb)) {
		log_debug("the kernel's name of %s not read (%s): stat()'s used", t->o.binary,
			  err ? strerror(-err) : "not found");
		t->skel->bss->exe_dev = major(sb.st_dev) << 20 | minor(sb.st_dev);
		t->skel->bss->exe_ino = sb.st_ino;
	}
	return err;
}

bool trace__exe_identity(const struct trace *t, uint32_t *dev, uint64_t *ino)
{
	*dev = t->skel->bss->exe_dev;
	*ino = t->skel->bss->exe_ino;
	return *ino != 0;
}

/* Map the loaded "slots" map into the loader (read only: the programs
 * write events into it) and the "heads" map (the loader stores each
 * region's tail there), and start every CPU's consumer at position 0,
 * where a new map's head and tail start. Returns 0 or -errno. */
static int map_rings(struct trace *t)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	t->ring_len = ((size_t)t->ncpus << t->shift) * CABBPF_SLOT_BYTES;
	p = mmap(NULL, t->ring_len, PROT_READ, MAP_SHARED, bpf_map__fd(t->skel->maps.slots), 0);
	if (p == MAP_FAILED)
		return -errno;
	t->ring = p;
	t->heads_len = ((size_t)t->ncpus * sizeof(struct cabbpf_head) + (size_t)page - 1) &
		       ~((size_t)page - 1);
	p = mmap(NULL, t->heads_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(t->skel->maps.heads), 0);
	if (p == MAP_FAILED)
		return -errno; /* the caller unmaps the ring */
	t->heads = p;
	memset(t->cons, 0, sizeof(*t->cons) * (size_t)t->ncpus);
	return 0;
}

static void unmap_rings(struct trace *t)
{
	if (t->ring)
		munmap(t->ring, t->ring_len);
	t->ring = NULL;
	if (t->heads)
		munmap(t->heads, t->heads_len);
	t->heads = NULL;
	if (t->fhits)
		munmap((void *)t->fhits, t->fhits_len);
	t->fhits = NULL;
}

/* Groups: map the per-function hit counters (read-only here). Returns 0
 * or -errno. */
static int map_fhits(struct trace *t)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	if (!t->o.groups)
		return 0;
	t->fhits_len = ((size_t)t->o.nfuncs * sizeof(uint64_t) + (size_t)page - 1) &
		       ~((size_t)page - 1);
	p = mmap(NULL, t->fhits_len, PROT_READ, MAP_SHARED, bpf_map__fd(t->skel->maps.fhits), 0);
	if (p == MAP_FAILED)
		return -errno;
	t->fhits = p;
	return 0;
}

const volatile uint64_t *trace__fhits(const struct trace *t)
{
	return t->fhits;
}

int trace__open(const struct trace_opts *o, struct trace **out)
{
	struct bpfload_log lg;
	struct trace *t;
	int err;

	*out = NULL;
	if (!o || o->pid < 0 || (!o->pid && !o->cgroup) || !o->binary || !o->on_event ||
	    !o->nfuncs || o->nfuncs > CABBPF_COOKIE_FID || o->ring_bytes < 4096 ||
	    (o->ring_bytes & (o->ring_bytes - 1)) || (o->groups && (!o->first_group || o->pid <= 0)) ||
	    (o->ncallsites && (!o->callsites || !o->no_returns)) ||
	    (o->session && (o->ncallsites || o->sampling || o->floor || o->groups))) {
		log_err("trace__open: invalid options");
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		log_err("out of memory");
		return -ENOMEM;
	}
	t->o = *o;
	t->exe_fd = -1;
	if (getenv("CABBPF_TEST_FAIL_RING_READ"))
		t->fail_read_at = strtoull(getenv("CABBPF_TEST_FAIL_RING_READ"), NULL, 10) + 1;
	t->fail_final = getenv("CABBPF_TEST_FAIL_FINAL_DRAIN") != NULL;
	for (uint32_t f = 0; o->size_specs && f < o->nfuncs; f++)
		t->nsized += o->size_specs[f] != 0;
	if (t->nsized > 4096) { /* bpf/trace.bpf.c: sizespecs' max_entries */
		log_err("--size designates %u functions: at most 4096", t->nsized);
		err = -E2BIG;
		goto cleanup;
	}
	t->ncpus = libbpf_num_possible_cpus();
	if (t->ncpus <= 0) {
		err = t->ncpus ? t->ncpus : -EINVAL;
		log_err("counting the possible CPUs: %s", strerror(-err));
		goto cleanup;
	}
	/* 64-byte slots, a power of two of them per CPU (ring_bytes is). */
	t->shift = (unsigned)__builtin_ctzl(o->ring_bytes / CABBPF_SLOT_BYTES);
	t->mask = ((uint64_t)1 << t->shift) - 1;
	if (((size_t)t->ncpus << t->shift) > UINT32_MAX) {
		err = -E2BIG; /* array keys are 32-bit */
		log_err("rings of %zu bytes on %d CPUs exceed 2^32 slots: choose a smaller "
			"--ring-size",
			o->ring_bytes, t->ncpus);
		goto cleanup;
	}
	t->cons = calloc((size_t)t->ncpus, sizeof(*t->cons));
	if (!t->cons) {
		err = -ENOMEM;
		log_err("out of memory");
		goto cleanup;
	}
	/* Multi-uprobe programs first where the kernel has them (6.6);
	 * trace__attach falls back to per-site perf links if the kernel
	 * refuses the link. */
	t->multi = !o->no_multi_links || o->session;
	bpfload__begin(&lg);
	err = load(t, t->multi);
	if (err && t->multi && !o->session) {
		log_debug("loading multi-uprobe programs failed (%s), using perf links",
			  strerror(-err));
		trace_bpf__destroy(t->skel);
		t->skel = NULL;
		t->multi = false;
		bpfload__end(&lg);
		bpfload__free(&lg);
		bpfload__begin(&lg);
		err = load(t, false);
	}
	bpfload__end(&lg);
	if (err) {
		/* session: no fallback, a per-site link cannot decline a return */
		bpfload__explain(&lg, o->session ? "the session uprobe program (whole-container "
						   "return probes)"
						 : "the function-tracing BPF object",
				 err);
		bpfload__free(&lg);
		goto cleanup;
	}
	bpfload__free(&lg);
	read_exe_identity(t);
	err = map_rings(t);
	if (err) {
		log_err("mapping per-CPU rings of %zu bytes: %s", o->ring_bytes, strerror(-err));
		goto cleanup;
	}
	err = map_fhits(t);
	if (err) {
		log_err("mapping the probes' hit counters: %s", strerror(-err));
		goto cleanup;
	}
	*out = t;
	return 0;
cleanup:
	trace__free(t);
	return err;
}

/* The file whose offsets[fid] is meant. */
static const char *bin_of(const struct trace *t, uint32_t fid)
{
	return t->o.binaries && t->o.binaries[fid] ? t->o.binaries[fid] : t->o.binary;
}

/* A refused call site: the function's count would be short, so say so;
 * refused[fid] marks it (NULL: only warn). */
static void callsite_refused(const struct trace_callsite *c, bool *refused)
{
	log_warn("call site 0x%lx of function %u refused by the kernel: its calls from there "
		 "are not counted",
		 (unsigned long)c->offset, (unsigned)c->fid);
	if (refused)
		refused[c->fid] = true;
}

/* The call-site cookie: fid low, the signed sp correction high. */
static uint64_t callsite_cookie(const struct trace *t, const struct trace_callsite *c)
{
	return c->fid |
	       (uint64_t)(t->o.groups ? (uint32_t)c->sp_delta & 0xffffffu : (uint32_t)c->sp_delta)
		       << 32;
}

/* Per-site perf links for the call sites (entries at even slots). */
static void attach_callsites_perf(struct trace *t)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo);
	size_t i;

	for (i = 0; i < t->o.ncallsites; i++) {
		const struct trace_callsite *c = &t->o.callsites[i];
		struct bpf_link *l;

		uo.bpf_cookie = callsite_cookie(t, c);
		l = bpf_program__attach_uprobe_opts(t->entry, t->o.pid > 0 ? t->o.pid : -1,
						    bin_of(t, c->fid), (size_t)c->offset, &uo);
		if (!l) {
			callsite_refused(c, NULL);
			continue;
		}
		t->sets[0].links[t->sets[0].nlinks++] = l;
		t->sets[0].links[t->sets[0].nlinks++] = NULL;
	}
}

/* Per-site perf links for functions [from, to) (and, from 0, the call
 * sites), appended to set 0 (entries at even slots, returns at odd ones).
 * Returns 0, -ENOENT when none went in, or -errno (with *logged set when
 * it said why). */
static int attach_perf_range(struct trace *t, uint32_t from, uint32_t to, bool *logged)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo);
	struct link_set *ls = &t->sets[0];
	struct bpf_link **grown;
	uint32_t fid, before = ls->nlinks;
	size_t cap = (size_t)ls->nlinks + ((size_t)(to - from) + (from ? 0 : t->o.ncallsites)) * 2;
	int r;

	grown = realloc(ls->links, (cap + 1) * sizeof(*ls->links));
	if (!grown)
		return -ENOMEM;
	ls->links = grown;
	for (fid = from; fid < to; fid++) {
		struct bpf_link *le, *lr;

		if (t->o.offsets[fid] == TRACE_AT_CALLSITES)
			continue; /* attach_callsites_perf() */
		if (t->o.offsets[fid] == TRACE_NO_PROBE) {
			t->refused++;
			continue;
		}
		/* fid in the low half, the sp correction in the high half. */
		uo.bpf_cookie = entry_cookie(t, fid);
		uo.retprobe = false;
		le = bpf_program__attach_uprobe_opts(t->entry, t->o.pid > 0 ? t->o.pid : -1,
						     bin_of(t, fid), (size_t)t->o.offsets[fid], &uo);
		r = -errno;
		if (!le && r == -ESRCH)
			return r; /* the process is gone: no site can go in */
		if (!le) {
			log_warn("the kernel refused the probe of function %u at 0x%lx of %s (%s), "
				 "which the plan accepted: that function is not traced",
				 fid, (unsigned long)t->o.offsets[fid], bin_of(t, fid),
				 strerror(-r));
			t->refused++;
			continue;
		}
		ls->links[ls->nlinks++] = le;
		if (t->o.no_returns) {
			ls->links[ls->nlinks++] = NULL; /* keeps entries at even slots */
			continue;
		}
		uo.bpf_cookie = fid;
		uo.retprobe = true;
		lr = bpf_program__attach_uprobe_opts(t->ret, t->o.pid > 0 ? t->o.pid : -1,
						     bin_of(t, fid), (size_t)t->o.offsets[fid], &uo);
		if (!lr) {
			r = -errno;
			log_err("return probe of function %u: %s", fid, strerror(-r));
			*logged = true;
			return r;
		}
		ls->links[ls->nlinks++] = lr;
	}
	if (!from)
		attach_callsites_perf(t);
	return ls->nlinks > before ? 0 : -ENOENT;
}

static int attach_perf(struct trace *t, bool *logged)
{
	return attach_perf_range(t, 0, t->o.nfuncs, logged);
}

/* Both multi links of one file over the sites of fids [0, n) of that file
 * (offs, cookies = fids; refused is scratch space), into set ls; a site
 * the kernel refuses is split off (uprobe_multi__attach_all). Returns the
 * number of functions attached, or -errno. */
static int attach_file(struct trace *t, struct link_set *ls, const char *bin, uint64_t *offs,
		       uint64_t *cookies, uint32_t n, bool *refused)
{
	uint32_t i, m = 0;
	int err;

	memset(refused, 0, sizeof(*refused) * n);
	err = uprobe_multi__attach_all(bpf_program__fd(t->entry), bin, offs, cookies, n,
				       t->ret ? UPROBE_MULTI_ENTRY : UPROBE_MULTI_SESSION, t->o.pid,
				       &ls->mfd[0], &ls->nmfd[0], refused);
	if (err)
		return err;
	/* Entries only, or a session link: one link holds the whole story.
	 * refused[] stays indexed as the sites given. */
	if (t->o.no_returns || !t->ret) {
		for (i = 0; i < n; i++) {
			m += !refused[i];
			if (refused[i] && (cookies[i] & CABBPF_COOKIE_FID) < t->o.nfuncs &&
			    t->o.offsets[cookies[i] & CABBPF_COOKIE_FID] == offs[i])
				log_warn("the kernel refused the probe of function %u at 0x%lx "
					 "of %s, which the plan accepted: that function is not "
					 "traced",
					 (unsigned)(cookies[i] & CABBPF_COOKIE_FID), (unsigned long)offs[i], bin);
		}
		return (int)m;
	}
	/* Returns only where the entry went in: a return without its entry
	 * could not be matched. */
	for (i = 0; i < n; i++) {
		if (refused[i]) {
			/* The plan leaves out what the kernel's rules refuse
			 * (user/elf/insn.c): this one it did not foresee,
			 * and finding it split the link (trial and error). */
			log_warn("the kernel refused the probe of function %u at 0x%lx of %s, "
				 "which the plan accepted: that function is not traced",
				 (unsigned)(cookies[i] & CABBPF_COOKIE_FID), (unsigned long)offs[i], bin);
			continue;
		}
		offs[m] = offs[i];
		/* returns: no sp correction, no --size flag; the group and
		 * its generation */
		cookies[m++] = (cookies[i] &
				(uint64_t)(CABBPF_COOKIE_FID |
					   CABBPF_COOKIE_GRP_MASK << CABBPF_COOKIE_GRP_SHIFT)) |
			       (cookies[i] & 0xffULL << CABBPF_COOKIE_GEN_SHIFT);
	}
	if (!m)
		return 0;
	memset(refused, 0, sizeof(*refused) * m);
	err = uprobe_multi__attach_all(bpf_program__fd(t->ret), bin, offs, cookies, m, true,
				       t->o.pid, &ls->mfd[1], &ls->nmfd[1], refused);
	if (err == -ESRCH)
		return err; /* the process is gone meanwhile */
	if (err) {
		/* The entries are in and stay in: counts are still exact. */
		log_warn("return probes of %s refused (%s): its returns are not seen", bin,
			 strerror(-err));
		return (int)m;
	}
	for (i = 0; i < m; i++)
		if (refused[i])
			log_warn("function %u: return probe refused; its returns are not seen",
				 (unsigned)(cookies[i] & CABBPF_COOKIE_FID));
	return (int)m;
}

/* Multi links for every file of the functions [from, to) (the main
 * binary, shared libraries) into group g's set: one pair per file, more
 * where refused sites split them; the functions fid with member[fid]
 * (NULL: all). A file whose every site is refused is skipped; if all files
 * fail, the first error returns (the caller then falls back to per-site
 * links). Without member, adds the functions not attached to t->refused;
 * *nattached (if not NULL): the functions attached. */
static int attach_range(struct trace *t, unsigned g, const uint8_t *member, uint32_t from,
			uint32_t to, uint32_t *nattached)
{
	uint64_t *offs = NULL, *cookies = NULL;
	bool *refused = NULL, *done = NULL;
	uint32_t i, j, n, nfn, attached = 0;
	size_t k;
	int err = 0, first_err = 0, r;

	size_t total = (size_t)(to - from) + t->o.ncallsites;

	offs = malloc(sizeof(*offs) * total + 1);
	cookies = malloc(sizeof(*cookies) * total + 1);
	refused = calloc(total + 1, sizeof(*refused));
	done = calloc((size_t)to + 1, sizeof(*done));
	if (!offs || !cookies || !refused || !done) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = from; i < to; i++) {
		const char *bin = bin_of(t, i);

		if (done[i] || t->o.offsets[i] == TRACE_NO_PROBE || (member && !member[i]))
			continue;
		for (j = i, n = 0; j < to; j++) {
			if (done[j] || t->o.offsets[j] == TRACE_NO_PROBE ||
			    (member && !member[j]) || strcmp(bin_of(t, j), bin))
				continue;
			done[j] = true;
			if (t->o.offsets[j] == TRACE_AT_CALLSITES)
				continue;
			offs[n] = t->o.offsets[j];
			/* fid and group in the low half, the sp correction in
			 * the high half */
			cookies[n++] = entry_cookie(t, j) | (t->o.groups ? group_bits(t, g) : 0);
		}
		nfn = n;
		for (k = 0; k < t->o.ncallsites; k++) {
			const struct trace_callsite *c = &t->o.callsites[k];

			if (c->fid < t->o.nfuncs && (!member || member[c->fid]) &&
			    !strcmp(bin_of(t, c->fid), bin)) {
				offs[n] = c->offset;
				cookies[n++] = callsite_cookie(t, c) |
					       (t->o.groups ? group_bits(t, g) : 0);
			}
		}
		if (!n)
			continue;
		r = attach_file(t, &t->sets[g], bin, offs, cookies, n, refused);
		if (r == -ENOMEM || r == -ESRCH) {
			err = r;
			goto cleanup;
		}
		if (r < 0) {
			log_debug("no probe site of %s accepted: %s", bin, strerror(-r));
			if (!first_err)
				first_err = r;
			continue;
		}
		/* refused[] still indexes the sites as given (no returns
		 * with call sites: see attach_file). */
		for (k = nfn; k < n; k++)
			if (refused[k]) {
				struct trace_callsite c = {offs[k], (uint32_t)cookies[k] & CABBPF_COOKIE_FID,
							    -8};

				callsite_refused(&c, NULL);
			}
		if (!t->o.no_returns && t->ret)
			attached += (uint32_t)r; /* no call sites: r entries went in */
		else
			for (k = 0; k < nfn; k++)
				attached += !refused[k];
	}
	/* Functions counted at call sites are attached if any site is. */
	for (i = from, n = 0; i < to; i++)
		n += t->o.offsets[i] == TRACE_AT_CALLSITES && (!member || member[i]);
	attached += n;
	if (!attached)
		err = first_err ? first_err : -ENOENT;
	if (!member)
		t->refused += (to - from) - attached;
	if (nattached)
		*nattached = attached;
cleanup:
	free(offs);
	free(cookies);
	free(refused);
	free(done);
	return err;
}

/* The exec tracepoint (not for the floor: it has no events). A kernel
 * without it still traces, only without exec events: say so. */
static void attach_exec(struct trace *t)
{
	if (t->o.floor || t->exec_link)
		return;
	t->exec_link = bpf_program__attach(t->skel->progs.on_exec);
	if (!t->exec_link)
		log_warn("exec tracepoint refused (%s): an execve in the target will show as "
			 "missing returns",
			 strerror(errno));
	t->exit_link = bpf_program__attach(t->skel->progs.on_exit);
	if (!t->exit_link)
		log_warn("exit tracepoint refused (%s): the frames of threads an execve ends "
			 "will show as open",
			 strerror(errno));
	t->fork_link = bpf_program__attach(t->skel->progs.on_fork);
	if (!t->fork_link)
		log_warn("fork tracepoint refused (%s): processes the target starts are not "
			 "counted (they are not traced either way)",
			 strerror(errno));
	/* On-CPU time needs timestamps; without the switch tracepoint the
	 * reports say on-CPU time was not measured. */
	if (!t->o.no_times && !t->switch_link) {
		t->switch_link = bpf_program__attach(t->skel->progs.on_switch);
		if (!t->switch_link)
			log_warn("sched_switch tracepoint refused (%s): no on-CPU times",
				 strerror(errno));
	}
}

bool trace__cpu_time(const struct trace *t)
{
	return t->switch_link != NULL;
}

/* Groups: every function into its first group (o.first_group), the gate
 * closed. Returns 0, or -errno with *logged set when it said why. */
static int attach_groups(struct trace *t, bool *logged)
{
	const char *no_multi = getenv("CABBPF_TEST_NO_MULTI");
	uint8_t *member = calloc(t->o.nfuncs, 1);
	uint32_t g, f, n, attached = 0;
	int err = 0, first_err = 0;

	if (!member)
		return -ENOMEM;
	if (no_multi && *no_multi == '1') {
		free(member);
		log_err("--budget needs multi-uprobe links (Linux 6.6 or later), which were "
			"refused here (%s)",
			strerror(EOPNOTSUPP));
		*logged = true;
		return -EOPNOTSUPP;
	}
	for (g = 0; g < CABBPF_NGROUPS; g++) {
		for (f = 0, n = 0; f < t->o.nfuncs; f++) {
			member[f] = t->o.first_group[f] == g && t->o.offsets[f] != TRACE_NO_PROBE;
			n += member[f];
		}
		if (!n)
			continue;
		err = attach_range(t, g, member, 0, t->o.nfuncs, &n);
		if (err == -ENOMEM)
			break;
		if (err) {
			first_err = first_err ? first_err : err;
			err = 0;
			continue;
		}
		attached += n;
	}
	free(member);
	if (!err && !attached)
		err = first_err ? first_err : -ENOENT;
	if (err == -ENOENT) {
		log_err("no probe site left to attach in %s", t->o.binary);
		*logged = true;
	} else if (err) {
		log_err("--budget needs multi-uprobe links (Linux 6.6 or later), which were "
			"refused here (%s)",
			strerror(-err));
		*logged = true;
	}
	if (!err) {
		t->refused = t->o.nfuncs - attached;
		attach_exec(t);
	}
	return err;
}

/* trace__attach without the last word: returns 0, or -errno with
 * *logged set when it said why already. */
static int attach(struct trace *t, bool *logged)
{
	struct bpfload_log lg;
	int err = 0;

	if (t->o.start_paused) {
		/* Sampling that starts off: no probe goes in until the first
		 * trace__resume; execve is watched from now on. */
		t->paused = true;
		attach_exec(t);
		return 0;
	}
	if (t->multi && t->o.groups)
		return attach_groups(t, logged);
	if (!t->multi && t->o.groups) {
		log_err("--budget needs multi-uprobe links (Linux 6.6 or later): this kernel "
			"refused to load them");
		*logged = true;
		return -EOPNOTSUPP;
	}
	if (t->multi) {
		/* CABBPF_TEST_NO_MULTI=1: act as a kernel without multi-uprobe
		 * links (< 6.6), so the tests cover the fallback below here. */
		const char *no_multi = getenv("CABBPF_TEST_NO_MULTI");

		t->refused = 0;
		err = no_multi && *no_multi == '1' && !t->o.session
			      ? -EOPNOTSUPP
			      : attach_range(t, 0, NULL, 0, t->o.nfuncs, NULL);
		if (!err) {
			attach_exec(t);
			return 0;
		}
		if (err == -ENOENT || (err && t->o.session)) {
			if (err == -ENOENT)
				log_err("no probe site left to attach in %s", t->o.binary);
			else
				log_err("attaching session uprobes to %s: %s", t->o.binary,
					strerror(-err));
			*logged = true;
			return err;
		}
		if (err == -ESRCH)
			return err; /* the process is gone: per-site links would be too */
		log_debug("multi-uprobe link refused (%s); one link per site instead",
			  strerror(-err));
		trace__detach(t);
		/* The programs were loaded for multi links: reload them (new
		 * maps, so a new mapping; nothing was attached, so the old
		 * rings hold no event). */
		unmap_rings(t);
		trace_bpf__destroy(t->skel);
		t->skel = NULL;
		t->multi = false;
		bpfload__begin(&lg);
		err = load(t, false);
		bpfload__end(&lg);
		if (err) {
			bpfload__explain(&lg, "the function-tracing BPF object (per-site links)",
					 err);
			*logged = true;
		}
		bpfload__free(&lg);
		if (!err)
			read_exe_identity(t);
		if (!err)
			err = map_rings(t);
		if (err)
			return err;
	}
	t->refused = 0; /* what the multi attempt counted is void */
	err = attach_perf(t, logged);
	if (!err)
		attach_exec(t);
	if (err == -ENOENT) {
		log_err("the kernel refused every probe site in %s", t->o.binary);
		*logged = true;
	}
	return err;
}

int trace__attach(struct trace *t)
{
	bool logged = false;
	int err = attach(t, &logged);

	/* -ESRCH: the process exited meanwhile; the caller, who knows the
	 * target, says so (trace.h). */
	if (err && !logged && err != -ESRCH)
		log_err("attaching probes to %s: %s", t->o.binary, strerror(-err));
	if (!err && !t->o.gated && !t->o.sampling && !t->o.groups)
		trace__gate(t, true);
	return err;
}

int trace__add(struct trace *t, uint32_t nfuncs)
{
	uint32_t from = t->o.nfuncs, before = t->refused;
	int err;

	if (t->o.pid || nfuncs < from)
		return -EINVAL;
	if (nfuncs == from)
		return 0;
	if (t->multi) {
		err = attach_range(t, 0, NULL, from, nfuncs, NULL);
	} else {
		/* a kernel without multi-uprobe links (whole containers are
		 * then traced with entry probes only: no session links) */
		bool logged = false;

		err = attach_perf_range(t, from, nfuncs, &logged);
	}
	t->o.nfuncs = nfuncs;
	if (err == -ENOMEM)
		log_err("out of memory");
	else if (err)
		log_warn("no probe of the %u new functions went in: %s", nfuncs - from,
			 strerror(-err));
	return err ? err : (int)(nfuncs - from - (t->refused - before));
}

int trace__arm(struct trace *t, pid_t pid, bool on)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), fd, err = 0;
	__u32 one = 1;

	if (pfd < 0)
		return -errno;
	fd = bpf_map__fd(t->skel->maps.armed);
	if (on ? bpf_map_update_elem(fd, &pfd, &one, BPF_ANY) : bpf_map_delete_elem(fd, &pfd))
		err = -errno;
	close(pfd);
	return err == -ENOENT && !on ? 0 : err;
}

uint32_t trace__refused(const struct trace *t)
{
	return t->refused;
}

bool trace__multi(const struct trace *t)
{
	return t->multi;
}

unsigned trace__ncpus(const struct trace *t)
{
	return (unsigned)t->ncpus;
}

uint32_t trace__tstab_mask(const struct trace *t)
{
	return t->tstab_slots - 1;
}

int trace__map_fd(const struct trace *t, const char *name)
{
	struct bpf_map *m = t->skel ? bpf_object__find_map_by_name(t->skel->obj, name) : NULL;

	return m ? bpf_map__fd(m) : -ENOENT;
}

/* Slots read between two stores of a region's tail: a full ring read in
 * one round hands its slots back as it goes, at a store per this many. */
#define TAIL_BATCH 4096

/*
 * Deliver CPU cpu's published events in ring order, at most one lap (so
 * a CPU that keeps producing cannot starve the others), handing the slots
 * back (the region's tail) every TAIL_BATCH and at the end. Stops at the
 * first slot not yet published: a program preempted between its claim
 * and its publish holds the rest of this CPU's events back until a later
 * round, which keeps them in order.
 * Returns the number delivered, or on_event's -errno (that event is
 * consumed all the same, as libbpf's ring_buffer does).
 */
static int drain_cpu(struct trace *t, unsigned cpu)
{
	const struct cabbpf_slot *region = t->ring + ((size_t)cpu << t->shift);
	uint64_t c = t->cons[cpu], end = c + t->mask + 1;
	int n = 0, err = 0;

	while (c != end) {
		const struct cabbpf_slot *s = &region[c & t->mask];

		/* Acquire: pairs with the compiler barrier + header store in
		 * pipeline_submit() (bpf/pipeline.bpf.h); the event is read
		 * only after its header said it is complete. */
		if (__atomic_load_n(&s->hdr, __ATOMIC_ACQUIRE) != c + 1)
			break;
		err = t->o.on_event(t->o.ctx, cpu, &s->ev);
		c++;
		n++;
		if (err)
			break;
		/* Release: every slot below c is read (copied by on_event)
		 * before it is handed back; pairs with the tail load of
		 * pipeline_claim() (bpf/pipeline.bpf.h). */
		if (!(c % TAIL_BATCH))
			__atomic_store_n(&t->heads[cpu].tail, c, __ATOMIC_RELEASE);
	}
	/* Release: as above. */
	__atomic_store_n(&t->heads[cpu].tail, c, __ATOMIC_RELEASE);
	t->cons[cpu] = c;
	return err ? err : n;
}

int trace__drain(struct trace *t, int timeout_ms)
{
	struct timespec ts;
	int cpu, n = 0, r;

	/* The test hooks (trace.h): a ring read that fails mid-run, or in the
	 * last drain. */
	if ((t->fail_read_at && t->read + 1 >= t->fail_read_at) || (t->fail_final && t->detached))
		return -EIO;
	for (cpu = 0; cpu < t->ncpus; cpu++) {
		r = drain_cpu(t, (unsigned)cpu);
		if (r < 0)
			return r;
		n += r;
	}
	t->read += (uint64_t)n;
	/* Then sleep a whole period even when events keep coming: nothing
	 * wakes the loader (a wakeup per event would cost ~1 us in the
	 * probe), and draining in batches is what keeps the loader and the
	 * analyzers from waking per handful of events. A signal cuts the
	 * sleep short (EINTR), which the caller sees as a normal round. */
	if (timeout_ms > 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
		nanosleep(&ts, NULL);
	}
	return n;
}

bool trace__below_low(const struct trace *t)
{
	uint64_t low = (t->mask + 1) / 4;
	int cpu;

	for (cpu = 0; cpu < t->ncpus; cpu++) {
		const struct cabbpf_slot *region = t->ring + ((size_t)cpu << t->shift);
		uint64_t p = t->cons[cpu] + low;

		/* Position p not yet published: fewer than low events wait in
		 * this ring (a claimed slot not yet published looks the same:
		 * a handful at most). */
		if (__atomic_load_n(&region[p & t->mask].hdr, __ATOMIC_ACQUIRE) == p + 1)
			return false;
	}
	return true;
}

/* Close the links of one kind of a set (0 entries, 1 returns). */
static void close_kind(struct link_set *ls, unsigned kind)
{
	uint32_t k;

	for (k = 0; k < ls->nmfd[kind]; k++)
		close(ls->mfd[kind][k]);
	free(ls->mfd[kind]);
	ls->mfd[kind] = NULL;
	for (k = kind; k < ls->nlinks; k += 2)
		bpf_link__destroy(ls->links[k]);
}

static void *close_returns_main(void *arg)
{
	close_kind(arg, 1);
	return NULL;
}

/* Close a set's links, its returns in a thread of their own while this
 * one closes its entries. Closing a link takes out its probes at once,
 * then waits for the kernel's grace periods (50-400 ms here); a site's
 * breakpoint leaves the target when its last probe does, so entries and
 * returns closed one after the other would leave it in for a grace period
 * after the returns went (a target hitting it pays for nothing). The gate
 * is closed first (every caller closes it: trace__detach, the pauses, the
 * groups' gate), so no event comes from either meanwhile, in whatever
 * order they go. Frees the set's arrays. */
static void close_links(struct link_set *ls)
{
	pthread_attr_t at;
	pthread_t th;
	bool two;

	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, CLOSER_STACK);
	two = ls->nmfd[1] && !pthread_create(&th, &at, close_returns_main, ls);
	pthread_attr_destroy(&at);
	if (!two)
		close_kind(ls, 1);
	close_kind(ls, 0);
	if (two)
		pthread_join(th, NULL);
	free(ls->links);
	memset(ls, 0, sizeof(*ls));
}

/* Move group g's probe links into *ls (t has none of them after). */
static void take_links(struct trace *t, unsigned g, struct link_set *ls)
{
	*ls = t->sets[g];
	memset(&t->sets[g], 0, sizeof(t->sets[g]));
}

static void *closer_main(void *arg)
{
	struct closer *c = arg;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	close_links(&c->ls);
	clock_gettime(CLOCK_MONOTONIC, &b);
	c->ns = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ULL + (uint64_t)b.tv_nsec -
		(uint64_t)a.tv_nsec;
	log_debug("sampling: the last window's probes released in %.3f ms", (double)c->ns / 1e6);
	return NULL;
}

/* Forget closer i, joined. */
static void drop_closer(struct trace *t, uint32_t i)
{
	free(t->closers[i]);
	memmove(t->closers + i, t->closers + i + 1, (--t->nclosers - i) * sizeof(*t->closers));
}

/* Join the oldest closer (its links are gone after). */
static void join_oldest(struct trace *t)
{
	pthread_join(t->closers[0]->th, NULL);
	drop_closer(t, 0);
}

/* Wait until every closer is done. */
static void join_closers(struct trace *t)
{
	while (t->nclosers)
		join_oldest(t);
}

/* Join every closer that is done, without waiting. */
static void reap_closers(struct trace *t)
{
	uint32_t i = 0;

	while (i < t->nclosers)
		if (pthread_tryjoin_np(t->closers[i]->th, NULL))
			i++;
		else
			drop_closer(t, i);
}

/* Take group g's links out and hand them to a closer thread: the
 * breakpoints go at once, the kernel's release goes on in that thread
 * (it can last as long as the target: see trace__attach_group). */
static void close_group_async(struct trace *t, unsigned g)
{
	struct closer *c;
	pthread_attr_t at;
	int err;

	if (!t->sets[g].nmfd[0] && !t->sets[g].nmfd[1] && !t->sets[g].nlinks)
		return;
	reap_closers(t); /* forget those that are done */
	if (t->nclosers == t->capclosers) {
		uint32_t cap = t->capclosers ? t->capclosers * 2 : 16;
		struct closer **v = realloc(t->closers, cap * sizeof(*v));

		if (!v)
			join_oldest(t);
		else
			t->closers = v, t->capclosers = cap;
	}
	c = t->nclosers < t->capclosers ? calloc(1, sizeof(*c)) : NULL;
	if (!c) {
		struct link_set ls;

		take_links(t, g, &ls);
		close_links(&ls); /* no memory: wait here */
		return;
	}
	take_links(t, g, &c->ls);
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, CLOSER_STACK);
	err = pthread_create(&c->th, &at, closer_main, c);
	pthread_attr_destroy(&at);
	if (err) {
		close_links(&c->ls); /* no thread: wait here */
		free(c);
		return;
	}
	t->closers[t->nclosers++] = c;
}

uint32_t trace__closing(struct trace *t)
{
	reap_closers(t);
	return t->nclosers;
}

/* Remove the probe links (not the exec tracepoint), waiting until they are
 * gone. */
static void detach_probes(struct trace *t)
{
	unsigned g;

	/* Every group's links go out first, each in a closer of its own,
	 * and only then are the closers waited for: a release waits for
	 * return probes pending in long-lived frames, whose kernel lease
	 * expires only 100 ms after the thread's last return probe fired
	 * (trace__attach_group), which a group still in would keep firing. */
	for (g = 0; g < CABBPF_NGROUPS; g++)
		close_group_async(t, g);
	join_closers(t);
}

/*
 * Per-site links of a target that has ended, handed to a process of their
 * own that closes them one by one: cabbpf returns at once instead of after
 * ~0.1 s a link (2,944 links of python3.11: 308 s here). Only when nothing
 * can hit them: the links are bound to the target's pid (the kernel puts
 * their breakpoints into its mm only), and the target is gone (or a
 * zombie: no mm left). Whoever drops a kernel object's last reference pays
 * for its release, so the process, a grandchild (no zombie of ours, in a
 * session of its own), keeps a copy of every BPF and perf descriptor of
 * cabbpf's (anon inodes; libbpf keeps a perf link's event descriptor to
 * itself), closes everything else (a pipe reading cabbpf's output ends
 * when cabbpf does), waits for cabbpf to exit (a pipe's end cabbpf holds)
 * and only then closes them. Returns true when the links are the
 * grandchild's (ls's entries are then NULL: closed here without libbpf's
 * detach, which would take each breakpoint out first, the slow part),
 * false when they must be closed here.
 */
static bool release_in_background(struct trace *t, struct link_set *ls)
{
	long max = sysconf(_SC_OPEN_MAX);
	char path[64], target[64];
	int status = 0, fd, gate[2] = {-1, -1};
	struct dirent *de;
	pid_t child, r;
	bool *keep, done;
	uint32_t k;
	DIR *d;

	if (t->o.pid <= 0 || !procfs__gone(t->o.pid))
		return false;
	if (max <= 0 || max > (1 << 20))
		max = 1 << 20;
	/* what the grandchild keeps: decided here, since after fork only
	 * async-signal-safe calls may run (cabbpf has threads) */
	keep = calloc((size_t)max, sizeof(*keep));
	d = opendir("/proc/self/fd");
	if (!keep || !d || pipe2(gate, O_CLOEXEC)) {
		free(keep);
		if (d)
			closedir(d);
		return false;
	}
	while ((de = readdir(d))) {
		ssize_t n;

		fd = atoi(de->d_name);
		if (de->d_name[0] < '0' || de->d_name[0] > '9' || fd >= max || fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		keep[fd] = n > 11 && !strncmp(target, "anon_inode:", 11);
	}
	closedir(d);
	keep[gate[0]] = true;
	child = fork();
	if (child < 0) {
		free(keep);
		close(gate[0]);
		close(gate[1]);
		return false;
	}
	if (!child) {
		char c;

		if (fork())
			_exit(0); /* the grandchild's failure is only the waiting's */
		setsid();
		for (fd = 0; fd < max; fd++)
			if (!keep[fd])
				close(fd);
		/* until cabbpf's last copy of the gate's write end goes */
		while (read(gate[0], &c, 1) < 0 && errno == EINTR)
			;
		/* each last close waits for the kernel's grace periods */
		for (fd = 0; fd < max; fd++)
			if (keep[fd])
				close(fd);
		_exit(0);
	}
	free(keep);
	close(gate[0]);
	/* gate[1] stays open (close-on-exec) until cabbpf ends */
	while ((r = waitpid(child, &status, 0)) < 0 && errno == EINTR)
		;
	/* Reaped by another waiter (the guard's tracer takes the children of
	 * the process it holds: not this one, but be safe) or exited 0. */
	done = r < 0 ? errno == ECHILD : WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!done) {
		close(gate[1]);
		return false;
	}
	for (k = 0; k < ls->nlinks; k++)
		if (ls->links[k]) {
			bpf_link__disconnect(ls->links[k]);
			close(bpf_link__fd(ls->links[k]));
			bpf_link__destroy(ls->links[k]);
			ls->links[k] = NULL;
		}
	return true;
}

/* The empty slots of a per-site set (functions without a return link). */
static uint32_t count_null(const struct link_set *ls)
{
	uint32_t k, n = 0;

	for (k = 0; k < ls->nlinks; k++)
		n += !ls->links[k];
	return n;
}

void trace__detach(struct trace *t)
{
	if (!t)
		return;
	/* Nothing is emitted while the links go, in whatever order. */
	if (t->skel)
		trace__gate(t, false);
	bpf_link__destroy(t->exec_link);
	t->exec_link = NULL;
	bpf_link__destroy(t->exit_link);
	t->exit_link = NULL;
	bpf_link__destroy(t->fork_link);
	t->fork_link = NULL;
	bpf_link__destroy(t->switch_link);
	t->switch_link = NULL;
	/* Per-site links close one by one, each waiting for the kernel's
	 * grace periods under a lock of its (~0.1 s each here: 158 took 17 s,
	 * from any number of threads alike): say so when it will take a
	 * while. */
	if (!t->multi && t->sets[0].nlinks > 40) {
		uint32_t n = t->sets[0].nlinks - count_null(&t->sets[0]);

		if (release_in_background(t, &t->sets[0]))
			log_info("%u probe links handed to a process that removes them one by one "
				 "(no multi-uprobe links on this kernel: about %.0f s; the target "
				 "has ended, nothing can hit them)",
				 n, 0.1 * n);
		else
			log_info("removing %u probe links one by one (no multi-uprobe links on "
				 "this kernel): about %.0f s",
				 n, 0.1 * n);
	}
	detach_probes(t);
	t->paused = false;
	t->detached = true;
}

int trace__pause(struct trace *t)
{
	if (!t->o.sampling)
		return -EINVAL;
	if (t->paused)
		return 0;
	/* Closing a link takes its breakpoints out at once and then waits
	 * for the kernel's grace periods, 50-400 ms here: a thread of ours
	 * waits, not the loader, which goes on draining. The next resume or
	 * the detach joins it. */
	close_group_async(t, 0);
	t->paused = true;
	return 0;
}

static void store_gate(struct trace *t, uint64_t g)
{
	/* A plain store into the mapped .bss: the probes' next load sees it
	 * (x86 stores become visible in order, within nanoseconds). */
	t->gate = g;
	__atomic_store_n(&t->skel->bss->gate, g, __ATOMIC_RELEASE);
}

void trace__set_epoch(struct trace *t, uint32_t epoch)
{
	store_gate(t, epoch);
}

void trace__set_gate(struct trace *t, uint32_t epoch, uint32_t groups)
{
	store_gate(t, (uint64_t)groups << 32 | epoch);
}

void trace__gate(struct trace *t, bool open)
{
	trace__set_epoch(t, open ? 1 : 0);
}

int trace__resume(struct trace *t)
{
	int err;

	if (!t->o.sampling)
		return -EINVAL;
	if (!t->paused)
		return 0;
	/* The last pause's links must be gone first: new links attached
	 * while old ones of the same sites are still being released lose
	 * return events (seen here: 223 of 1,600 returns missing). */
	join_closers(t);
	if (t->multi) {
		t->refused = 0;
		err = attach_range(t, 0, NULL, 0, t->o.nfuncs, NULL);
	} else {
		bool logged = false; /* the caller says what failed */

		t->refused = 0;
		err = attach_perf(t, &logged);
	}
	if (err)
		return err;
	t->paused = false;
	return 0;
}

void trace__gated(const struct trace *t, uint64_t out[CABBPF_NGROUPS])
{
	unsigned g;

	for (g = 0; g < CABBPF_NGROUPS; g++)
		out[g] = __atomic_load_n(&t->skel->bss->gated[g], __ATOMIC_RELAXED);
}

int trace__attach_group(struct trace *t, unsigned g, const uint8_t *member)
{
	struct timespec a, b;
	uint32_t n = 0;
	int err;

	if (!t->o.groups || !t->multi || g >= CABBPF_NGROUPS || t->sets[g].nmfd[0])
		return -EINVAL;
	/* Nothing is waited for: not the group's last links (its new
	 * generation is what the gate opens: the caller keeps the group
	 * closed until then), nor the kernel's release of the same sites in
	 * other groups. That release can wait for the target: from Linux
	 * 6.13 a return probe pending in a frame that lives long (main)
	 * holds the kernel's SRCU read lock as long as other return probes
	 * keep firing in its thread, and the release waits for it; measured
	 * here, probes put back on sites still being released lose no
	 * return (the budget suite asserts it). */
	t->gen[g]++;
	__atomic_store_n(&t->skel->bss->grp_gen[g], t->gen[g], __ATOMIC_RELEASE);
	clock_gettime(CLOCK_MONOTONIC, &a);
	err = attach_range(t, g, member, 0, t->o.nfuncs, &n);
	clock_gettime(CLOCK_MONOTONIC, &b);
	/* Thousands of sites into a target that traps hard take 60-300 ms
	 * here (bench/budget.sh): worth knowing with -v. */
	log_debug("group %u: %u functions put in in %.3f ms", g, err ? 0 : n,
		  (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6);
	return err;
}

void trace__detach_group(struct trace *t, unsigned g)
{
	if (!t->o.groups || g >= CABBPF_NGROUPS)
		return;
	close_group_async(t, g);
}

int trace__stats(struct trace *t, uint64_t totals[CABBPF_STAT__MAX], uint64_t *per_cpu_drops)
{
	int fd = bpf_map__fd(t->skel->maps.stats);
	uint64_t *vals;
	__u32 k;
	int c, err = 0;

	vals = calloc((size_t)t->ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (k = 0; k < CABBPF_STAT__MAX; k++) {
		totals[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, vals)) {
			err = -errno;
			break;
		}
		for (c = 0; c < t->ncpus; c++) {
			totals[k] += vals[c];
			if (per_cpu_drops && k == CABBPF_STAT_DROPS)
				per_cpu_drops[c] = vals[c];
			else if (per_cpu_drops && k == CABBPF_STAT_IO_DROPS)
				per_cpu_drops[t->ncpus + c] = vals[c];
			else if (per_cpu_drops && k == CABBPF_STAT_GUARD_DROPS)
				per_cpu_drops[2 * t->ncpus + c] = vals[c];
		}
	}
	free(vals);
	return err;
}

int trace__prog_stats(const struct trace *t, struct trace_prog_stat *out, unsigned max)
{
	struct bpf_program *p;
	unsigned n = 0;

	bpf_object__for_each_program(p, t->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);

		if (fd < 0 || n == max)
			continue; /* not loaded (the other pair of --floor) */
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		if (!info.run_cnt)
			continue;
		snprintf(out[n].name, sizeof(out[n].name), "%s", bpf_program__name(p));
		out[n].runs = info.run_cnt;
		out[n].run_ns = info.run_time_ns;
		n++;
	}
	return (int)n;
}

void trace__free(struct trace *t)
{
	if (!t)
		return;
	trace__detach(t);
	unmap_rings(t);
	trace_bpf__destroy(t->skel);
	if (t->exe_fd >= 0)
		close(t->exe_fd);
	free(t->cons);
	free(t->closers);
	free(t);
}
