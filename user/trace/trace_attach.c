// SPDX-License-Identifier: BSD-2-Clause
/*
 * The trace's probes placed: one multi-uprobe link set per group and
 * file, or one perf link per site, entries, returns and call sites; a
 * group attached again. trace_int.h lists the trace's files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>

#include "analyzers/analyzer.h"
#include "user/kernel/bpfload.h"
#include "common/log.h"
#include "user/probe/uprobe_multi.h"
#include "trace.skel.h"
#include "user/trace/cpuclock.h"
#include "user/trace/progress.h"
#include "user/trace/trace_int.h"

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
		uo.bpf_cookie = trace__entry_cookie(t, fid);
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
		uo.bpf_cookie = trace__return_cookie(t, fid);
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

int trace_attach__perf(struct trace *t, bool *logged)
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
		/* returns: no sp correction; the --retval flag, the group
		 * and its generation */
		cookies[m++] = trace__return_cookie(t, (uint32_t)(cookies[i] & CABBPF_COOKIE_FID)) |
			       (cookies[i] & (uint64_t)CABBPF_COOKIE_GRP_MASK
						     << CABBPF_COOKIE_GRP_SHIFT) |
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
int trace_attach__range(struct trace *t, unsigned g, const uint8_t *member, uint32_t from,
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
			cookies[n++] = trace__entry_cookie(t, j) | (t->o.groups ? trace__group_bits(t, g) : 0);
		}
		nfn = n;
		for (k = 0; k < t->o.ncallsites; k++) {
			const struct trace_callsite *c = &t->o.callsites[k];

			if (c->fid < t->o.nfuncs && (!member || member[c->fid]) &&
			    !strcmp(bin_of(t, c->fid), bin)) {
				offs[n] = c->offset;
				cookies[n++] = callsite_cookie(t, c) |
					       (t->o.groups ? trace__group_bits(t, g) : 0);
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

/* The time sampler's CPU clocks (o.cpu_sample_ns). A kernel or machine
 * without a CPU clock still traces: the report says its times are the
 * traced ones (trace__cpu_samples). */
static void attach_cpu_samples(struct trace *t)
{
	int err;

	if ((!t->o.cpu_sample_ns && !t->o.progress_clock) || t->o.pid <= 0 || t->o.floor ||
	    t->cpu_samples)
		return;
	/* The progress clock alone needs only user mode (kernel-mode ticks
	 * are then dropped before any program runs). */
	err = cpuclock__attach(t->skel->progs.on_cpu_sample,
			       t->o.cpu_sample_ns ? t->o.cpu_sample_ns : PROGRESS_TICK_NS,
			       t->o.cpu_sample_ns != 0, &t->cpu_samples);
	t->progress_ok = !err && t->skel->rodata->progress_on;
	if (err && t->o.cpu_sample_ns)
		log_warn("no CPU clock to sample the target's time (%s): times shown are traced "
			 "wall times, probes included",
			 strerror(-err));
	else if (err)
		log_warn("sampling: no CPU clock to measure the target's progress (%s): windows "
			 "are measured in wall time",
			 strerror(-err));
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
	attach_cpu_samples(t);
}

bool trace__cpu_time(const struct trace *t)
{
	return t->switch_link != NULL;
}

bool trace__cpu_samples(const struct trace *t)
{
	return t->cpu_samples != NULL && t->o.cpu_sample_ns;
}

bool trace__progress_ns(const struct trace *t, uint64_t *ns)
{
	uint64_t *v;
	__u32 zero = 0;
	int i;

	*ns = 0;
	if (!t || !t->progress_ok)
		return false;
	v = calloc((size_t)t->ncpus, sizeof(*v));
	if (v && !bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.progress_ns), &zero, v))
		for (i = 0; i < t->ncpus; i++)
			*ns += v[i];
	free(v);
	return true;
}


unsigned trace__cpu_sample_kernel(const struct trace *t)
{
	if (!t || !t->skel)
		return AN_KTIME_NONE;
	return t->skel->rodata->fault_entry_lo ? AN_KTIME_FAULTS : AN_KTIME_SYSCALLS;
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
		err = trace_attach__range(t, g, member, 0, t->o.nfuncs, &n);
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
	if (!t->o.nfuncs && !t->o.pid) {
		/* A whole tree whose first program has nothing to trace (a
		 * launcher): the programs it execs are added (trace__add). */
		t->refused = 0;
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
			      : trace_attach__range(t, 0, NULL, 0, t->o.nfuncs, NULL);
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
		trace__unmap_rings(t);
		trace_bpf__destroy(t->skel);
		t->skel = NULL;
		t->multi = false;
		bpfload__begin(&lg);
		err = trace__load(t, false);
		bpfload__end(&lg);
		if (err) {
			bpfload__explain(&lg, "the function-tracing BPF object (per-site links)",
					 err);
			*logged = true;
		}
		bpfload__free(&lg);
		if (!err)
			trace__read_exe_identity(t);
		if (!err)
			err = trace__map_rings(t);
		if (err)
			return err;
	}
	t->refused = 0; /* what the multi attempt counted is void */
	err = trace_attach__perf(t, logged);
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
		err = trace_attach__range(t, 0, NULL, from, nfuncs, NULL);
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
	err = trace_attach__range(t, g, member, 0, t->o.nfuncs, &n);
	clock_gettime(CLOCK_MONOTONIC, &b);
	/* Thousands of sites into a target that traps hard take 60-300 ms
	 * here (bench/budget.sh): worth knowing with -v. */
	log_debug("group %u: %u functions put in in %.3f ms", g, err ? 0 : n,
		  (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6);
	return err;
}
