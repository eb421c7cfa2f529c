// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "user/proc/container.h"
#include "user/iomode/iotrace.h"
#include "user/modes/iomode.h"
#include "user/proc/cgroup.h"
#include "user/proc/procfs.h"
#include "user/proc/target.h"
#include "user/iomode/iostat.h"
#include "user/report/io_report.h"
#include "common/log.h"
#include "user/kernel/features.h"
#include "common/outfile.h"
#include "common/outputs.h"

/* Kernel maps are read (and exited processes retired) at least this often,
 * so the maps cannot fill with the dead on a busy machine. */
#define COLLECT_S 1.0
#define TICK_NS (50 * 1000 * 1000L)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Seconds since this process was started (exec'd), from the kernel's start
 * time in /proc/self/stat (clock ticks since boot, 10 ms on Linux) against
 * CLOCK_BOOTTIME; -1 when unknown. What a user waits before cabbpf watches
 * includes the loader and libraries, not only main(). */
static double since_exec_s(void)
{
	long long start = procfs__start_ticks(getpid());
	long hz = sysconf(_SC_CLK_TCK);
	struct timespec ts;

	if (start < 0 || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &ts))
		return -1;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 - (double)start / (double)hz;
}

/*
 * Should the maps be collected before the next second? The kernel keeps a
 * process's figures under keys that only a collection frees once it has
 * exited; a machine starting and ending processes fast (here: four test
 * suites at once) filled the 16384 per-process keys within a second and
 * 2,992 calls were lost (counted: "kernel maps full"). Yes when an eighth
 * of a map's room was taken since the last collection (marks: the
 * counters then; rs, rf: the maps' room), or when a key was refused (its
 * slot then went through the ring, or was lost).
 * One read of the counters per tick (50 ms).
 */
static bool filling(struct iotrace *io, const uint64_t *marks, uint32_t rs, uint32_t rf)
{
	uint64_t c[CABBPF_IOSTAT__MAX];

	if (iotrace__counts(io, c))
		return false;
	return (c[CABBPF_IOSTAT_STATS_NEW] - marks[CABBPF_IOSTAT_STATS_NEW]) * 8 > rs ||
	       (c[CABBPF_IOSTAT_FILES_NEW] - marks[CABBPF_IOSTAT_FILES_NEW]) * 8 > rf ||
	       c[CABBPF_IOSTAT_LIVE_SENT] > marks[CABBPF_IOSTAT_LIVE_SENT] ||
	       c[CABBPF_IOSTAT_STATS_FULL] > marks[CABBPF_IOSTAT_STATS_FULL] ||
	       c[CABBPF_IOSTAT_FILES_FULL] > marks[CABBPF_IOSTAT_FILES_FULL];
}

/* One --io run: what each stage leaves for the next. */
struct iomode {
	const struct opts *o;
	volatile sig_atomic_t *stop;
	int cgfd; /* the cgroup filter (--cgroup, --container), or -1 */
	char cgpath[4096], cgroot[4096];
	struct iotrace *io;
	struct iostat *st;
	uint32_t room_s, room_f; /* the kernel maps' room (filling) */
	double startup, t0, cpu0;
	const char *why; /* why the run stopped */
	struct iostat_run run;
	struct outputs outs;
};

/* The target (if any), the kernel, the cgroup filter. Returns 0 or -errno
 * (logged). */
static int check_target(struct iomode *m)
{
	const struct opts *o = m->o;
	int err;

	if (o->pid && procfs__gone(o->pid)) {
		log_err("cannot watch pid %d: no such process", (int)o->pid);
		return -ESRCH;
	}
	err = target__check_pid(o->pid, "watch", true);
	if (err)
		return err;
	err = features__refuse(features__get(), FU_IO);
	if (err)
		return err;
	features__say(features__get(), FU_IO);
	err = cgroup__select(o->cgroup, o->container, &m->cgfd, m->cgpath, sizeof(m->cgpath));
	if (err)
		return err;
	if (o->pid && m->cgfd >= 0)
		err = cgroup__check_pid(m->cgpath, o->pid, o->container);
	return err;
}

/* The BPF object loaded, the user-space tables made, the probe attached;
 * the run's clock starts. Returns 0 or -errno (logged). */
static int start(struct iomode *m)
{
	const struct opts *o = m->o;
	struct iostat_opts so;
	struct iotrace_opts io_o;
	double t_load, t_loaded;
	int err;

	memset(&io_o, 0, sizeof(io_o));
	io_o.pid = o->pid;
	io_o.aggregate = true;
	io_o.floor = o->floor;
	io_o.no_casts = !features__get()->has[KF_RDONLY_CAST];
	io_o.cgroup_fd = m->cgfd;
	io_o.slots_fd = io_o.heads_fd = io_o.tstates_fd = io_o.tstab_fd = io_o.stats_fd = -1;
	/* Tests: maps of a few keys, so that the kernel refuses keys and sends
	 * their slots through the ring (tests/test_io_integration.c). */
	if (getenv("CABBPF_TEST_IO_MAX_KEYS"))
		io_o.max_procs = io_o.max_files = (uint32_t)atoi(getenv("CABBPF_TEST_IO_MAX_KEYS"));
	t_load = now_s();
	err = iotrace__open(&io_o, &m->io);
	if (err)
		return err;
	t_loaded = now_s();
	memset(&so, 0, sizeof(so));
	so.stats_fd = iotrace__stats_fd(m->io);
	so.files_fd = iotrace__files_fd(m->io);
	so.done_fd = o->floor ? -1 : iotrace__done_fd(m->io);
	so.keep = o->io_keep;
	so.cgnames_fd = iotrace__cgnames_fd(m->io);
	so.ncpus = iotrace__ncpus(m->io);
	so.cgroot = cgroup__v2_root(m->cgroot, sizeof(m->cgroot)) ? NULL : m->cgroot;
	err = iostat__new(&so, &m->st);
	if (err) {
		log_err("--io: %s", strerror(-err));
		return err;
	}
	err = iotrace__attach(m->io);
	if (err)
		return err;
	iotrace__capacity(m->io, &m->room_s, &m->room_f);
	m->cpu0 = cpu_s();
	m->t0 = now_s();
	/* The start-up time: I/O before this instant is not counted. */
	m->startup = since_exec_s();
	if (m->startup >= 0)
		log_debug("--io: watching %.3f s after cabbpf started (BPF maps, load and "
			  "verification %.3f s, attach %.3f s)",
			  m->startup, t_loaded - t_load, m->t0 - t_loaded);
	if (o->pid)
		log_info("watching the I/O system calls of pid %d%s%s (Ctrl-C to stop)",
			 (int)o->pid, m->cgfd >= 0 ? " in cgroup " : "", m->cgpath);
	else
		log_info("watching the I/O system calls of %s%s (Ctrl-C to stop)",
			 m->cgfd >= 0 ? "cgroup " : "every process", m->cgpath);
	return 0;
}

/* Until Ctrl-C, -d or the target's end: ended processes taken every tick,
 * the maps read every COLLECT_S (sooner when they fill), -i's lines.
 * Returns 0 or -errno (logged). */
static int watch(struct iomode *m)
{
	const struct opts *o = m->o;
	struct timespec tick = {0, TICK_NS};
	uint64_t marks[CABBPF_IOSTAT__MAX] = {0};
	double t, next_collect = m->t0 + COLLECT_S, last_print = m->t0;
	double next_print = o->interval ? m->t0 + o->interval : 0;
	int err;

	while (!m->why) {
		nanosleep(&tick, NULL);
		t = now_s();
		if (*m->stop)
			m->why = "interrupted";
		else if (o->duration && t - m->t0 >= o->duration)
			m->why = "duration reached";
		else if (o->pid && procfs__gone(o->pid))
			m->why = "target exited";
		/* Ended processes' slots: every tick, so the ring never fills. */
		err = iostat__drain(m->st);
		if (err) {
			log_err("--io: reading the ring of ended processes: %s", strerror(-err));
			return err;
		}
		if (t >= next_collect || (next_print && t >= next_print) ||
		    filling(m->io, marks, m->room_s, m->room_f)) {
			err = iotrace__flush(m->io);
			if (!err)
				err = iostat__collect(m->st);
			if (err) {
				log_err("--io: reading the kernel maps: %s", strerror(-err));
				return err;
			}
			iotrace__counts(m->io, marks);
			next_collect = t + COLLECT_S;
		}
		if (next_print && t >= next_print && !o->floor) {
			iostat__print_interval(m->st, stdout, t - last_print);
			last_print = t;
			next_print += o->interval;
		}
	}
	return 0;
}

/* The probe out, the maps read a last time, the run's figures. Returns 0
 * or -errno (logged). */
static int stop_run(struct iomode *m)
{
	double t = now_s();
	int err;

	iotrace__detach(m->io);
	err = iostat__collect(m->st);
	if (err) {
		log_err("--io: reading the kernel maps: %s", strerror(-err));
		return err;
	}
	memset(&m->run, 0, sizeof(m->run));
	if (iotrace__counts(m->io, m->run.counts))
		log_warn("could not read the BPF counters");
	m->run.duration_s = t - m->t0;
	m->run.startup_s = m->startup;
	m->run.pid = m->o->pid;
	m->run.cgroup = m->cgfd >= 0 ? m->cgpath : NULL;
	m->run.container = m->o->container;
	m->run.stop_reason = m->why;
	m->run.cpu_s = cpu_s() - m->cpu0;
	return 0;
}

/* Text on stdout (or -o), --json, the summary line on stderr. Returns 0
 * or the first output's -errno (logged). */
static int report(struct iomode *m)
{
	const struct opts *o = m->o;
	const struct iostat_run *run = &m->run;
	int err = 0, report_err;

	if (!o->quiet && !o->floor) {
		struct outfile of;

		/* -o: into a file, as --json (never through a symlink) */
		err = outfile__open(&of, o->output_path ? o->output_path : "-");
		if (!err)
			err = outfile__finish(&of, io_report__text(m->st, of.f, run));
		outputs__note(&m->outs, "-o", o->output_path, err);
		if (err)
			log_err("--io: writing the report%s%s: %s", o->output_path ? " to " : "",
				o->output_path ? o->output_path : "", outfile__strerror(err));
	}
	fflush(stdout);
	m->run.outputs = &m->outs;
	if (o->json_path && (report_err = io_report__json(m->st, o->json_path, run))) {
		log_err("writing --json %s: %s", o->json_path, outfile__strerror(report_err));
		err = err ? err : report_err;
	}
	fprintf(stderr,
		"cabbpf: %llu I/O calls in %.3f s (%.0f calls/s), %llu lost (kernel maps full); "
		"cabbpf used %.3f s CPU (%.2f%% of one core); stopped: %s\n",
		(unsigned long long)iostat__calls(m->st), run->duration_s,
		run->duration_s > 0 ? (double)iostat__calls(m->st) / run->duration_s : 0.0,
		(unsigned long long)(run->counts[CABBPF_IOSTAT_STATS_FULL] +
				     run->counts[CABBPF_IOSTAT_FILES_FULL]),
		run->cpu_s, run->duration_s > 0 ? 100 * run->cpu_s / run->duration_s : 0.0, m->why);
	return err;
}

int iomode__run(const struct opts *o, volatile sig_atomic_t *stop)
{
	struct iomode *m = calloc(1, sizeof(*m));
	int err;

	if (!m) {
		log_err("out of memory");
		return -ENOMEM;
	}
	m->o = o;
	m->stop = stop;
	m->cgfd = -1;
	err = check_target(m);
	if (!err)
		err = start(m);
	if (!err)
		err = watch(m);
	if (!err)
		err = stop_run(m);
	if (!err)
		err = report(m);
	iotrace__free(m->io);
	iostat__free(m->st);
	if (m->cgfd >= 0)
		close(m->cgfd);
	free(m);
	return err;
}
