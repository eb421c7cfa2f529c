// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "user/io.h"
#include "user/log.h"
#include "io.skel.h"

struct io {
	struct io_opts o;
	struct io_bpf *skel;
	struct bpf_link *link;      /* sys_exit */
	struct bpf_link *exit_link; /* aggregate mode: sched_process_exit */
	struct bpf_link *iter_link; /* aggregate mode: the flush iterator */
	int ncpus;
};

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

const char *io__sc_name(unsigned sc)
{
	return sc < CABBPF_SC__MAX ? sc_names[sc] : "?";
}

const char *io__fdkind_name(unsigned kind)
{
	return kind < CABBPF_FD__MAX ? kind_names[kind] : "?";
}

int io__open_cgroup(const char *path)
{
	struct statfs sfs;
	struct stat st;
	int fd;

	if (stat(path, &st)) {
		int err = -errno;

		log_err("--cgroup %s: %s", path, err == -ENOENT ? "no such cgroup directory"
								 : strerror(-err));
		return err;
	}
	if (!S_ISDIR(st.st_mode)) {
		log_err("--cgroup %s: not a directory (give a cgroup v2 directory, e.g. "
			"/sys/fs/cgroup/unified/NAME)",
			path);
		return -ENOTDIR;
	}
	if (statfs(path, &sfs) || (unsigned long)sfs.f_type != CGROUP2_SUPER_MAGIC) {
		log_err("--cgroup %s: not a cgroup v2 directory (cgroup v2 is mounted where "
			"`mount -t cgroup2` shows it, e.g. /sys/fs/cgroup/unified)",
			path);
		return -EMEDIUMTYPE;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		log_err("--cgroup %s: %s", path, strerror(-err));
		return err;
	}
	return fd;
}

int io__open(const struct io_opts *o, struct io **out)
{
	struct io *io;
	int err;

	*out = NULL;
	if (!o || (!o->aggregate && (o->slots_fd < 0 || o->heads_fd < 0 || o->tstates_fd < 0 ||
				     o->stats_fd < 0 || o->ring_bytes < CABBPF_SLOT_BYTES ||
				     (o->ring_bytes & (o->ring_bytes - 1)))))
		return -EINVAL;
	io = calloc(1, sizeof(*io));
	if (!io)
		return -ENOMEM;
	io->o = *o;
	io->ncpus = libbpf_num_possible_cpus();
	if (io->ncpus <= 0) {
		err = io->ncpus ? io->ncpus : -EINVAL;
		goto cleanup;
	}
	io->skel = io_bpf__open();
	if (!io->skel) {
		err = -errno ? -errno : -ENOMEM;
		goto cleanup;
	}
	io->skel->rodata->target_tgid = (__u32)o->pid;
	io->skel->rodata->self_tgid = (__u32)getpid();
	io->skel->rodata->agg_mode = o->aggregate;
	io->skel->rodata->use_cgroup = o->cgroup_fd >= 0;
	bpf_program__set_autoload(o->floor ? io->skel->progs.on_sys_exit
					   : io->skel->progs.empty_sys_exit,
				  false);
	/* The per-thread accumulators exist in aggregate mode only. */
	bpf_program__set_autoload(io->skel->progs.on_task_exit, o->aggregate && !o->floor);
	bpf_program__set_autoload(io->skel->progs.flush_tasks, o->aggregate && !o->floor);
	if (o->aggregate) {
		err = bpf_map__set_max_entries(io->skel->maps.iostats,
					       o->max_procs ? o->max_procs : 16384);
		if (!err)
			err = bpf_map__set_max_entries(io->skel->maps.iofiles,
						       o->max_files ? o->max_files : 32768);
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
			err = bpf_map__reuse_fd(io->skel->maps.stats, o->stats_fd);
	}
	if (err)
		goto cleanup;
	err = io_bpf__load(io->skel);
	if (err) {
		if (err == -EPERM || err == -EACCES)
			log_err("loading the I/O BPF program: permission denied (run as root)");
		else
			log_err("loading the I/O BPF program: %s", strerror(-err));
		goto cleanup;
	}
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
	io__free(io);
	return err;
}

int io__attach(struct io *io)
{
	struct bpf_program *p = io->o.floor ? io->skel->progs.empty_sys_exit
					    : io->skel->progs.on_sys_exit;
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

int io__flush(struct io *io)
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

void io__detach(struct io *io)
{
	if (!io)
		return;
	if (io->link) {
		bpf_link__destroy(io->link);
		io->link = NULL;
		/* No more accounting: now every pending count can be moved. */
		if (io->iter_link && io__flush(io))
			log_warn("--io: the final flush failed: the last ~100 ms may be missing");
	}
	bpf_link__destroy(io->exit_link);
	io->exit_link = NULL;
	bpf_link__destroy(io->iter_link);
	io->iter_link = NULL;
}

int io__counts(struct io *io, uint64_t out[CABBPF_IOSTAT__MAX])
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

int io__stats_fd(const struct io *io)
{
	return bpf_map__fd(io->skel->maps.iostats);
}

int io__files_fd(const struct io *io)
{
	return bpf_map__fd(io->skel->maps.iofiles);
}

unsigned io__ncpus(const struct io *io)
{
	return (unsigned)io->ncpus;
}

void io__free(struct io *io)
{
	if (!io)
		return;
	io__detach(io);
	io_bpf__destroy(io->skel);
	free(io);
}
