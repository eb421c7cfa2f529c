// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "user/iomode/iotrace.h"
#include "common/log.h"
#include "user/kernel/bpfload.h"
#include "iotrace.skel.h"

struct iotrace {
	struct iotrace_opts o;
	struct iotrace_bpf *skel;
	struct bpf_link *link;	    /* sys_exit */
	struct bpf_link *exit_link; /* aggregate mode: sched_process_exit */
	struct bpf_link *iter_link; /* aggregate mode: the flush iterator */
	int ncpus;
};

/* Open and load the skeleton into io->skel; casts: the fd lookups by
 * bpf_rdonly_cast (bpf/iotrace.bpf.c have_rdonly_cast). Returns 0 or
 * -errno (what libbpf said is in the caller's bpfload capture; a map's
 * preparation is logged here). */
static int load(struct iotrace *io, bool casts)
{
	const struct iotrace_opts *o = &io->o;
	int err;

	io->skel = iotrace_bpf__open();
	if (!io->skel)
		return -errno ? -errno : -ENOMEM;
	io->skel->rodata->have_rdonly_cast = casts;
	io->skel->rodata->target_tgid = (__u32)o->pid;
	io->skel->rodata->self_tgid = (__u32)getpid();
	io->skel->rodata->agg_mode = o->aggregate;
	io->skel->rodata->use_cgroup = o->cgroup_fd >= 0;
	bpf_program__set_autoload(
		o->floor ? io->skel->progs.on_sys_exit : io->skel->progs.empty_sys_exit, false);
	/* The per-thread accumulators exist in aggregate mode only. */
	bpf_program__set_autoload(io->skel->progs.on_task_exit, o->aggregate && !o->floor);
	bpf_program__set_autoload(io->skel->progs.flush_tasks, o->aggregate && !o->floor);
	if (o->aggregate) {
		err = bpf_map__set_max_entries(io->skel->maps.iostats,
					       o->max_procs ? o->max_procs : 16384);
		if (!err)
			err = bpf_map__set_max_entries(io->skel->maps.iofiles,
						       o->max_files ? o->max_files : 32768);
		/* No events: no thread states (bpf/pipeline.bpf.h). */
		if (!err)
			err = bpf_map__set_max_entries(io->skel->maps.tstab, 1);
		/* Ended processes' slots (~420 bytes each): room for ~2,400 per
		 * tick, ~48,000 process exits a second. */
		if (!err && !o->floor)
			err = bpf_map__set_max_entries(io->skel->maps.iodone, 1u << 20);
	} else {
		/* The aggregates are unused: keep them tiny. Share the trace's
		 * rings, sequence numbers and counters. */
		err = bpf_map__set_max_entries(io->skel->maps.iostats, 1);
		if (!err)
			err = bpf_map__set_max_entries(io->skel->maps.iofiles, 1);
		/* The same region geometry as the trace's programs. */
		io->skel->rodata->ring_shift =
			(__u32)__builtin_ctzl(o->ring_bytes / CABBPF_SLOT_BYTES);
		io->skel->rodata->ring_mask = o->ring_bytes / CABBPF_SLOT_BYTES - 1;
		if (!err)
			err = bpf_map__reuse_fd(io->skel->maps.slots, o->slots_fd);
		if (!err)
			err = bpf_map__reuse_fd(io->skel->maps.heads, o->heads_fd);
		if (!err)
			err = bpf_map__reuse_fd(io->skel->maps.tstates, o->tstates_fd);
		if (!err)
			err = bpf_map__reuse_fd(io->skel->maps.tstab, o->tstab_fd);
		io->skel->rodata->tstab_mask = o->tstab_mask;
		if (!err)
			err = bpf_map__reuse_fd(io->skel->maps.stats, o->stats_fd);
	}
	if (err) {
		log_err("preparing the I/O BPF program's maps: %s", strerror(-err));
		return err;
	}
	return iotrace_bpf__load(io->skel);
}

int iotrace__open(const struct iotrace_opts *o, struct iotrace **out)
{
	struct bpfload_log lg;
	struct iotrace *io;
	int err;

	*out = NULL;
	if (!o || (!o->aggregate &&
		   (o->slots_fd < 0 || o->heads_fd < 0 || o->tstates_fd < 0 || o->tstab_fd < 0 || o->stats_fd < 0 ||
		    o->ring_bytes < CABBPF_SLOT_BYTES || (o->ring_bytes & (o->ring_bytes - 1))))) {
		log_err("iotrace__open: invalid options");
		return -EINVAL;
	}
	io = calloc(1, sizeof(*io));
	if (!io) {
		log_err("out of memory");
		return -ENOMEM;
	}
	io->o = *o;
	io->ncpus = libbpf_num_possible_cpus();
	if (io->ncpus <= 0) {
		err = io->ncpus ? io->ncpus : -EINVAL;
		log_err("counting the possible CPUs: %s", strerror(-err));
		goto cleanup;
	}
	bpfload__begin(&lg);
	err = load(io, !o->no_casts);
	if (err && !o->no_casts) {
		/* a kernel whose BTF names the kfunc but refuses it here */
		log_debug("the I/O BPF object with bpf_rdonly_cast was refused (%s): reading "
			  "files with bpf_probe_read_kernel",
			  strerror(-err));
		iotrace_bpf__destroy(io->skel);
		io->skel = NULL;
		bpfload__end(&lg);
		bpfload__free(&lg);
		bpfload__begin(&lg);
		err = load(io, false);
	}
	bpfload__end(&lg);
	if (err) {
		bpfload__explain(&lg, "the I/O BPF object", err);
		bpfload__free(&lg);
		goto cleanup;
	}
	bpfload__free(&lg);
	if (o->cgroup_fd >= 0) {
		__u32 key = 0;

		if (bpf_map_update_elem(bpf_map__fd(io->skel->maps.cgfilter), &key, &o->cgroup_fd,
					BPF_ANY)) {
			err = -errno;
			log_err("setting the cgroup filter: %s", strerror(-err));
			goto cleanup;
		}
	}
	*out = io;
	return 0;
cleanup:
	iotrace__free(io);
	return err;
}

int iotrace__attach(struct iotrace *io)
{
	struct bpf_program *p =
		io->o.floor ? io->skel->progs.empty_sys_exit : io->skel->progs.on_sys_exit;
	int err;

	if (io->link)
		return 0;
	if (io->o.aggregate && !io->o.floor) {
		/* Before sys_exit: no thread may exit with counts pending. */
		io->exit_link = bpf_program__attach(io->skel->progs.on_task_exit);
		if (!io->exit_link) {
			err = -errno;
			log_err("attaching to the sched_process_exit tracepoint: %s",
				strerror(-err));
			return err;
		}
		io->iter_link = bpf_program__attach_iter(io->skel->progs.flush_tasks, NULL);
		if (!io->iter_link) {
			err = -errno;
			log_err("creating the task iterator: %s", strerror(-err));
			return err;
		}
	}
	io->link = bpf_program__attach(p);
	if (!io->link) {
		err = -errno;
		log_err("attaching to the sys_exit tracepoint: %s", strerror(-err));
		return err;
	}
	return 0;
}

int iotrace__flush(struct iotrace *io)
{
	char buf[64];
	ssize_t n;
	int fd, err = 0;

	if (!io->iter_link)
		return 0;
	fd = bpf_iter_create(bpf_link__fd(io->iter_link));
	if (fd < 0)
		return -errno;
	/* The program writes nothing: reading runs it over every task. */
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

void iotrace__detach(struct iotrace *io)
{
	if (!io)
		return;
	if (io->link) {
		bpf_link__destroy(io->link);
		io->link = NULL;
		/* No more accounting: now every pending count can be moved. */
		if (io->iter_link && iotrace__flush(io))
			log_warn("--io: the final flush failed: the last ~100 ms may be missing");
	}
	bpf_link__destroy(io->exit_link);
	io->exit_link = NULL;
	bpf_link__destroy(io->iter_link);
	io->iter_link = NULL;
}

void iotrace__gate(struct iotrace *io, bool open)
{
	if (io && io->skel->bss)
		__atomic_store_n(&io->skel->bss->io_gate, open ? 1 : 0, __ATOMIC_RELEASE);
}

int iotrace__counts(struct iotrace *io, uint64_t out[CABBPF_IOSTAT__MAX])
{
	int fd = bpf_map__fd(io->skel->maps.iocounts);
	uint64_t *vals;
	__u32 k;
	int c, err = 0;

	vals = calloc((size_t)io->ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (k = 0; k < CABBPF_IOSTAT__MAX; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, vals)) {
			err = -errno;
			break;
		}
		for (c = 0; c < io->ncpus; c++)
			out[k] += vals[c];
	}
	free(vals);
	return err;
}

void iotrace__capacity(const struct iotrace *io, uint32_t *stats, uint32_t *files)
{
	*stats = bpf_map__max_entries(io->skel->maps.iostats);
	*files = bpf_map__max_entries(io->skel->maps.iofiles);
}

int iotrace__stats_fd(const struct iotrace *io)
{
	return bpf_map__fd(io->skel->maps.iostats);
}

int iotrace__cgnames_fd(const struct iotrace *io)
{
	return bpf_map__fd(io->skel->maps.cgnames);
}

int iotrace__done_fd(const struct iotrace *io)
{
	return bpf_map__fd(io->skel->maps.iodone);
}

int iotrace__files_fd(const struct iotrace *io)
{
	return bpf_map__fd(io->skel->maps.iofiles);
}

unsigned iotrace__ncpus(const struct iotrace *io)
{
	return (unsigned)io->ncpus;
}

void iotrace__free(struct iotrace *io)
{
	if (!io)
		return;
	iotrace__detach(io);
	iotrace_bpf__destroy(io->skel);
	free(io);
}
