// SPDX-License-Identifier: BSD-2-Clause
/*
 * The target guard: see user/trace/guard.h for the story and docs/guard.md for
 * why each step is safe. This file has three parts: finding the sites, the
 * BPF program's life, and the ptrace tracer thread.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/log.h"
#include "user/kernel/bpfload.h"
#include "user/probe/probe_sites.h"
#include "user/probe/uprobe_multi.h"
#include "user/trace/guard_int.h"
#include "guard.skel.h"

/* A guard of pid with no site yet, its shared state mapped shared (a
 * tracer process sees it: user/trace/guardian.h). NULL: out of memory. */
static struct guard *guard_new(pid_t pid, bool spawned)
{
	struct guard *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->sh = mmap(NULL, sizeof(*g->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	if (g->sh == MAP_FAILED) {
		free(g);
		return NULL;
	}
	g->pid = pid;
	g->spawned = spawned;
	g->guarded_fd = g->reqs_fd = g->throttled_fd = g->iter_fd = -1;
	g->exit_map_fd = g->exit_prog_fd = g->exit_stop = g->old_reqs_fd = g->sigfd = -1;
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	return g;
}

int guard__open(pid_t pid, const char *exe, bool spawned, struct guard **out)
{
	struct guard *g;
	size_t i;
	int err;

	*out = NULL;
	g = guard_new(pid, spawned);
	if (!g)
		return -ENOMEM;
	snprintf(g->exe, sizeof(g->exe), "%s", exe);
	err = guard_sites__scan_target(g, exe);
	if (err)
		goto cleanup;
	if (!g->nsites) {
		err = -ENOENT;
		goto cleanup;
	}
	for (i = 0; i < g->nsites; i++)
		log_debug("guard site %s in %s at 0x%lx", g->sites[i].name, g->sites[i].path,
			  (unsigned long)g->sites[i].offset);
	*out = g;
	return 0;
cleanup:
	guard__free(g);
	return err;
}

int guard__open_tracer(pid_t pid, bool spawned, struct guard **out)
{
	struct guard *g = guard_new(pid, spawned);

	*out = NULL;
	if (!g)
		return -ENOMEM;
	*out = g;
	return 0;
}


/* ---- BPF ------------------------------------------------------------ */

static void detach_probes(struct guard *g)
{
	size_t i;

	for (i = 0; i < g->nmfds; i++)
		close(g->mfds[i]);
	free(g->mfds);
	g->mfds = NULL;
	g->nmfds = 0;
	for (i = 0; i < g->nlinks; i++)
		bpf_link__destroy(g->links[i]);
	free(g->links);
	g->links = NULL;
	g->nlinks = 0;
	bpf_link__destroy(g->altstack);
	g->altstack = NULL;
}

/* Signal handlers that run on an alternate stack (bpf/guard.bpf.c,
 * guard_altstack): a tracepoint, whatever the sites. */
static int attach_altstack(struct guard *g)
{
	g->altstack = bpf_program__attach(g->skel->progs.guard_altstack);
	if (!g->altstack) {
		int err = -errno;

		log_err("guard: attaching to the signal_deliver tracepoint: %s", strerror(-err));
		return err;
	}
	return 0;
}

/* Open and load the guard's program into m's rings; multi selects the
 * attach type (fixed before load). Returns 0 and *out, or -errno. */
static int load_skel(struct guard *g, const struct guard_maps *m, bool multi,
		     struct guard_bpf **out)
{
	struct guard_bpf *skel;
	int err = 0;

	*out = NULL;
	skel = guard_bpf__open();
	if (!skel)
		return -errno ? -errno : -ENOMEM;
	skel->rodata->target_tgid = (__u32)g->pid;
	skel->rodata->want_time = !m->no_times;
	skel->rodata->want_events = m->slots_fd >= 0;
	skel->rodata->ring_shift = (__u32)__builtin_ctzl(m->ring_bytes / CABBPF_SLOT_BYTES);
	skel->rodata->ring_mask = m->ring_bytes / CABBPF_SLOT_BYTES - 1;
	if (multi)
		bpf_program__set_expected_attach_type(skel->progs.guard_site,
						      UPROBE_MULTI_ATTACH_TYPE);
	if (m->guarded_fd >= 0)
		err = bpf_map__reuse_fd(skel->maps.guarded, m->guarded_fd);
	/* Without events no thread states (bpf/pipeline.bpf.h): a tiny table. */
	if (!err && m->slots_fd < 0)
		err = bpf_map__set_max_entries(skel->maps.tstab, 1);
	if (!err && m->slots_fd >= 0) {
		err = bpf_map__reuse_fd(skel->maps.slots, m->slots_fd);
		if (!err)
			err = bpf_map__reuse_fd(skel->maps.heads, m->heads_fd);
		if (!err)
			err = bpf_map__reuse_fd(skel->maps.tstates, m->tstates_fd);
		if (!err)
			err = bpf_map__reuse_fd(skel->maps.tstab, m->tstab_fd);
		skel->rodata->tstab_mask = m->tstab_mask;
		if (!err)
			err = bpf_map__reuse_fd(skel->maps.stats, m->stats_fd);
	}
	if (!err)
		err = guard_bpf__load(skel);
	if (err) {
		guard_bpf__destroy(skel);
		return err;
	}
	*out = skel;
	return 0;
}

/* One multi-uprobe link per file: detaching costs one RCU grace period
 * per file instead of one per site (docs/figures.md). */
static int attach_multi(struct guard *g)
{
	uint64_t *offs = calloc(g->nsites, sizeof(*offs));
	uint64_t *cookies = calloc(g->nsites, sizeof(*cookies));
	bool *done = calloc(g->nsites, sizeof(*done));
	size_t i, j;
	uint32_t n;
	int err = 0, fd;

	g->mfds = calloc(g->nsites, sizeof(*g->mfds));
	if (!offs || !cookies || !done || !g->mfds) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < g->nsites; i++) {
		if (done[i])
			continue;
		for (j = i, n = 0; j < g->nsites; j++) {
			if (done[j] || strcmp(g->sites[j].path, g->sites[i].path))
				continue;
			done[j] = true;
			offs[n] = g->sites[j].offset;
			cookies[n++] = g->sites[j].kind;
		}
		fd = uprobe_multi__attach(bpf_program__fd(g->skel->progs.guard_site),
					  g->sites[i].path, offs, cookies, n, false, g->pid);
		if (fd < 0) {
			err = fd;
			goto cleanup;
		}
		g->mfds[g->nmfds++] = fd;
		g->sh->st.nsites += n;
	}
cleanup:
	free(offs);
	free(cookies);
	free(done);
	return err;
}

static int attach_perf(struct guard *g)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo);
	size_t i;

	g->links = calloc(g->nsites, sizeof(*g->links));
	if (!g->links) {
		log_err("out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < g->nsites; i++) {
		struct bpf_link *l;

		uo.bpf_cookie = g->sites[i].kind;
		uo.retprobe = false;
		l = bpf_program__attach_uprobe_opts(g->skel->progs.guard_site, g->pid,
						    g->sites[i].path, (size_t)g->sites[i].offset,
						    &uo);
		if (!l) {
			int err = -errno;

			log_err("guard probe on %s in %s: %s", g->sites[i].name, g->sites[i].path,
				strerror(-err));
			return err;
		}
		g->links[g->nlinks++] = l;
		g->sh->st.nsites++;
	}
	return 0;
}

/* Make skel the guard's program: the tracer serves its requests and
 * fills its "guarded" map from now on. A tracer process gets copies of its
 * objects, and uses them (its answer waited for) before any probe of skel
 * can stop a thread. Returns 0 or -errno (logged). */
static int install(struct guard *g, struct guard_bpf *skel, int throttled_fd)
{
	struct guardian_set set;
	size_t i;
	int err;

	pthread_mutex_lock(&g->mu);
	guard_bpf__destroy(g->skel);
	g->skel = skel;
	if (skel->bss) /* a reloaded skeleton keeps the gate's state */
		skel->bss->events_gate = g->gate_open ? 1 : 0;
	g->guarded_fd = bpf_map__fd(skel->maps.guarded);
	g->reqs_fd = bpf_map__fd(skel->maps.guard_reqs);
	g->iter_fd = bpf_program__fd(skel->progs.dump_pending);
	g->exit_map_fd = bpf_map__fd(skel->maps.stop_at_exit);
	g->exit_prog_fd = bpf_program__fd(skel->progs.stop_on_exit);
	g->dump_tgid = skel->bss ? &skel->bss->dump_tgid : NULL;
	g->throttled_fd = throttled_fd;
	for (i = 0; i < g->nth; i++) {
		uint32_t key = (uint32_t)g->th[i].tid, held = CABBPF_GUARDED_HELD;

		bpf_map_update_elem(g->guarded_fd, &key, &held, BPF_ANY);
	}
	pthread_mutex_unlock(&g->mu);
	if (!g->gd)
		return 0;
	set.iter = g->iter_fd;
	set.reqs = g->reqs_fd;
	set.guarded = g->guarded_fd;
	set.exit_map = g->exit_map_fd;
	set.exit_prog = g->exit_prog_fd;
	set.bss = bpf_map__fd(skel->maps.bss);
	set.bss_size = (uint32_t)bpf_map__value_size(skel->maps.bss);
	set.throttled = throttled_fd;
	err = guardian__give_set(g->gd, &set);
	if (err)
		log_err("guard: handing its maps to its tracer process: %s",
			err == -ESRCH ? "it ended (the target ended)" : strerror(-err));
	return err;
}

/* Copies of the guard's probe links to its tracer process (if any), so that
 * a throw after cabbpf's death still stops. */
static void hand_over(struct guard *g)
{
	int *links;
	size_t i, n = 0;

	if (!g->gd)
		return;
	links = calloc(g->nmfds + g->nlinks + 1, sizeof(*links));
	if (!links)
		return;
	for (i = 0; i < g->nmfds; i++)
		links[n++] = g->mfds[i];
	for (i = 0; i < g->nlinks; i++)
		links[n++] = bpf_link__fd(g->links[i]);
	if (g->altstack)
		links[n++] = bpf_link__fd(g->altstack);
	guardian__give_links(g->gd, links, n);
	free(links);
}

int guard__attach(struct guard *g, const struct guard_maps *m)
{
	const char *no_multi = getenv("CABBPF_TEST_NO_MULTI");
	struct guard_bpf *skel = NULL;
	bool multi = !(no_multi && *no_multi == '1') && !m->no_multi_links;
	struct bpfload_log lg;
	int err;

	/* Replace the previous program (the trace object was reloaded). */
	detach_probes(g);
	g->sh->st.nsites = 0;
	if (multi) {
		bpfload__begin(&lg);
		err = load_skel(g, m, true, &skel);
		bpfload__end(&lg);
		bpfload__free(&lg);
		if (err)
			log_debug("guard: loading for multi-uprobe links failed (%s); one link per "
				  "site",
				  strerror(-err));
		if (!err) {
			err = install(g, skel, m->throttled_fd);
			if (err)
				return err;
			/* A tracer-only guard (--lossless) has no site. */
			err = g->nsites ? attach_multi(g) : 0;
			if (!err)
				err = attach_altstack(g);
			if (!err)
				hand_over(g);
			if (!err)
				return 0;
			log_debug("guard: multi-uprobe link refused (%s); one link per site",
				  strerror(-err));
			detach_probes(g);
			g->sh->st.nsites = 0;
		}
	}
	bpfload__begin(&lg);
	err = load_skel(g, m, false, &skel);
	bpfload__end(&lg);
	if (err) {
		bpfload__explain(&lg, "the guard's BPF object", err);
		bpfload__free(&lg);
		return err;
	}
	bpfload__free(&lg);
	err = install(g, skel, m->throttled_fd);
	if (!err)
		err = g->nsites ? attach_perf(g) : 0;
	if (!err)
		err = attach_altstack(g);
	if (!err)
		hand_over(g);
	return err;
}

static void read_bpf_stats(struct guard *g)
{
	int n = libbpf_num_possible_cpus(), c;
	uint32_t k;
	uint64_t *v;

	if (!g->skel || n <= 0 || !(v = calloc((size_t)n, sizeof(*v))))
		return;
	for (k = 0; k < CABBPF_GST__MAX; k++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(bpf_map__fd(g->skel->maps.guard_stats), &k, v))
			continue;
		for (c = 0; c < n; c++)
			sum += v[c];
		if (k == CABBPF_GST_SITES)
			g->sh->st.sites_hit = sum;
		else if (k == CABBPF_GST_UNGUARDED)
			g->sh->st.unguarded = sum;
		else if (k == CABBPF_GST_SIGFAIL)
			g->sh->st.failed += sum;
	}
	free(v);
}

void guard__gate(struct guard *g, bool open)
{
	if (g) {
		g->gate_open = open;
		if (g->skel && g->skel->bss)
			__atomic_store_n(&g->skel->bss->events_gate, open ? 1 : 0,
					 __ATOMIC_RELEASE);
	}
}

void guard__let_go(struct guard *g)
{
	if (g && (g->thr_started || g->gd)) {
		atomic_store(&g->sh->stop_req, 1);
		guardian__nudge(g->gd);
	}
}

void guard__stop(struct guard *g, struct guard_stats *st)
{
	if (!g)
		return;
	if (g->thr_started) {
		atomic_store(&g->sh->stop_req, 1);
		pthread_join(g->thr, NULL);
		g->thr_started = false;
	}
	/* A tracer process lets go, and its copies go before cabbpf's own
	 * closes release the probes, as with a thread. */
	if (g->gd) {
		probe_sites__on_add(NULL, NULL);
		atomic_store(&g->sh->stop_req, 1);
		guardian__nudge(g->gd);
		guardian__end(g->gd);
		g->gd = NULL;
	}
	if (!g->stopped) {
		read_bpf_stats(g);
		g->stopped = true;
	}
	if (st)
		*st = g->sh->st;
}

void guard__free(struct guard *g)
{
	size_t i;

	if (!g)
		return;
	guard__stop(g, NULL);
	detach_probes(g);
	guard_bpf__destroy(g->skel);
	for (i = 0; i < g->nsites; i++) {
		free(g->sites[i].path);
		free(g->sites[i].name);
	}
	free(g->sites);
	free(g->files);
	free(g->th);
	free(g->kept);
	if (g->sh)
		munmap(g->sh, sizeof(*g->sh));
	pthread_mutex_destroy(&g->mu);
	pthread_cond_destroy(&g->cv);
	free(g);
}
