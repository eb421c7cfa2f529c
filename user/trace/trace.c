// SPDX-License-Identifier: BSD-2-Clause
/*
 * The function trace (trace.h): its BPF object opened and loaded, the
 * rings mapped and drained, the gate and the sampling epochs, the
 * kernel's counters. trace_int.h lists the trace's files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "user/kernel/bpfload.h"
#include "user/kernel/features.h"
#include "user/kernel/ksyms.h"
#include "analyzers/isp.h"
#include "common/log.h"
#include "user/probe/uprobe_multi.h"
#include "trace.skel.h"
#include "trace_nosession.skel.h"
#include "user/trace/trace_int.h"


/* Whether fid has a rule of --size, or of --args / --retval. */
static bool has_size(const struct trace *t, uint32_t fid)
{
	return t->o.size_specs && t->o.size_specs[fid];
}

static bool has_vals(const struct trace *t, uint32_t fid)
{
	return t->o.val_specs && (t->o.val_specs[fid].nvals || t->o.val_specs[fid].ret);
}

/* The --size, --args and --retval rules into the "fnspecs" map
 * (bpf/trace.bpf.c), by fid. Returns 0 or -errno. */
static int fill_fnspecs(struct trace *t)
{
	int fd = bpf_map__fd(t->skel->maps.fnspecs);
	uint32_t fid;

	for (fid = 0; t->nspecs && fid < t->o.nfuncs; fid++) {
		struct cabbpf_fnspec v = {0};
		uint8_t s = has_size(t, fid) ? t->o.size_specs[fid] : 0;

		if (!s && !has_vals(t, fid))
			continue;
		if (has_vals(t, fid))
			v = t->o.val_specs[fid];
		v.sized = s != 0;
		v.arg = ISP_SPEC_ARG(s);
		v.strlen = (s & ISP_SPEC_STRLEN) != 0;
		if (bpf_map_update_elem(fd, &fid, &v, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* The entry probes' instruction lengths into the "resume_len" map
 * (bpf/trace.bpf.c resume_check), by fid. Returns 0 or -errno. */
static int fill_resume_len(struct trace *t)
{
	int fd = bpf_map__fd(t->skel->maps.resume_len);
	uint32_t fid;

	for (fid = 0; t->skel->rodata->resume_check && t->o.resume_len && fid < t->o.nfuncs;
	     fid++) {
		uint8_t len = t->o.resume_len[fid];

		if (len && bpf_map_update_elem(fd, &fid, &len, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* The entry probe's cookie of fid (include/cabbpf_event.h): the fid, the
 * flag of --size / --args / --retval, the sp correction in the high half
 * (with groups: its low 24 bits; trace__attach refuses a larger one). */
uint64_t trace__entry_cookie(const struct trace *t, uint32_t fid)
{
	uint64_t c = fid;

	if (has_size(t, fid) || has_vals(t, fid))
		c |= CABBPF_COOKIE_SIZED;
	if (t->o.sp_delta)
		c |= (uint64_t)(t->o.groups ? t->o.sp_delta[fid] & 0xffffffu : t->o.sp_delta[fid])
		     << 32;
	return c;
}

/* The return probe's cookie of fid (without groups): the fid, and the
 * flag when it has a --retval rule. */
uint64_t trace__return_cookie(const struct trace *t, uint32_t fid)
{
	bool ret = has_vals(t, fid) && t->o.val_specs[fid].ret &&
		   t->o.offsets[fid] != TRACE_AT_CALLSITES; /* its entries are calls */

	return fid | (ret ? CABBPF_COOKIE_SIZED : 0);
}

/* The group and generation bits of a probe of group g (o.groups). */
uint64_t trace__group_bits(const struct trace *t, unsigned g)
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
int trace__load(struct trace *t, bool multi)
{
	bool clock;
	int err;

	t->skel = open_skel(!t->o.no_session_kfunc || t->o.session);
	if (!t->skel)
		return -errno ? -errno : -ENOMEM;
	t->skel->rodata->target_tgid = t->o.pid > 0 ? (__u32)t->o.pid : 0;
	t->skel->rodata->session = t->o.session && !t->o.no_returns;
	t->skel->rodata->hold_exec = t->o.hold_exec && t->o.pid <= 0;
	t->skel->rodata->note_exits = t->o.hold_exec && t->o.pid <= 0;
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
	t->skel->rodata->vals_on = t->nvals > 0;
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
	clock = (t->o.cpu_sample_ns || t->o.progress_clock) && t->o.pid > 0 && !t->o.floor;
	bpf_program__set_autoload(t->skel->progs.on_cpu_sample, clock);
	t->skel->rodata->progress_on = clock && t->o.progress_clock;
	/* The sampler tells the program's page faults from the probes'
	 * traps by the kernel entry they came in by (bpf/trace.bpf.c
	 * in_own_fault); a kernel that hides its addresses: left out with
	 * the traps, and the report says only system calls are counted. */
	if (clock) {
		uint64_t lo, hi;

		/* ticks delivered late as a trap returns are the trap's */
		t->skel->rodata->resume_check = !getenv("CABBPF_TEST_NO_RESUME_CHECK");
		if (!ksyms__range("asm_exc_page_fault", &lo, &hi)) {
			t->skel->rodata->fault_entry_lo = lo;
			t->skel->rodata->fault_entry_hi = hi;
		} else
			log_debug("no address for asm_exc_page_fault: the program's page faults "
				  "are left out of its sampled times");
	}
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
	if (!err && t->skel->rodata->resume_check && t->o.resume_len)
		err = bpf_map__set_max_entries(t->skel->maps.resume_len, t->o.nfuncs);
	if (err)
		return err;
	err = trace_bpf__load(t->skel);
	if (!err)
		err = fill_fnspecs(t);
	return err ? err : fill_resume_len(t);
}

/* The kernel's name of the traced file (bpf/trace.bpf.c exe_identity, one
 * pass of a task iterator over the file load() opened), then that file is
 * closed. If that cannot run, stat()'s device and inode, which are the
 * kernel's on every file system but overlayfs. Returns 0 or -errno
 * (logged at debug level: the trace goes on, only an execve of another
 * program could go unseen). */
int trace__read_exe_identity(struct trace *t)
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
int trace__map_rings(struct trace *t)
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

void trace__unmap_rings(struct trace *t)
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
	    (!o->nfuncs && o->pid) || o->nfuncs > CABBPF_COOKIE_FID || o->ring_bytes < 4096 ||
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
	for (uint32_t f = 0; f < o->nfuncs; f++) {
		t->nsized += has_size(t, f);
		t->nvals += has_vals(t, f);
		t->nspecs += has_size(t, f) || has_vals(t, f);
	}
	if (t->nspecs > 4096) { /* bpf/trace.bpf.c: fnspecs' max_entries */
		log_err("--size, --args and --retval name %u functions: at most 4096", t->nspecs);
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
	err = trace__load(t, t->multi);
	if (err && t->multi && !o->session) {
		log_debug("loading multi-uprobe programs failed (%s), using perf links",
			  strerror(-err));
		trace_bpf__destroy(t->skel);
		t->skel = NULL;
		t->multi = false;
		bpfload__end(&lg);
		bpfload__free(&lg);
		bpfload__begin(&lg);
		err = trace__load(t, false);
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
	trace__read_exe_identity(t);
	err = trace__map_rings(t);
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

int trace__pause(struct trace *t)
{
	if (!t->o.sampling)
		return -EINVAL;
	if (t->paused)
		return 0;
	/* Closing a link takes its breakpoints out at once and then waits
	 * for the kernel's grace periods (docs/figures.md): a thread of ours
	 * waits, not the loader, which goes on draining. The next resume or
	 * the detach joins it. */
	trace_detach__group_async(t, 0);
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
	trace_detach__join_closers(t);
	if (t->multi) {
		t->refused = 0;
		err = trace_attach__range(t, 0, NULL, 0, t->o.nfuncs, NULL);
	} else {
		bool logged = false; /* the caller says what failed */

		t->refused = 0;
		err = trace_attach__perf(t, &logged);
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
	trace__unmap_rings(t);
	trace_bpf__destroy(t->skel);
	if (t->exe_fd >= 0)
		close(t->exe_fd);
	free(t->cons);
	free(t->closers);
	free(t);
}
