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
	char buf[1024], *p;
	unsigned long long start = 0;
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n;
	int field;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* Field 22 (starttime), counted from after "(comm)": field 3 first. */
	p = strrchr(buf, ')');
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1 || hz <= 0 ||
	    clock_gettime(CLOCK_BOOTTIME, &ts))
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
 * counters then; rs, rf: the maps' room), or when a key was refused.
 * One read of the counters per tick (50 ms).
 */
static bool filling(struct iotrace *io, const uint64_t *marks, uint32_t rs, uint32_t rf)
{
	uint64_t c[CABBPF_IOSTAT__MAX];

	if (iotrace__counts(io, c))
		return false;
	return (c[CABBPF_IOSTAT_STATS_NEW] - marks[CABBPF_IOSTAT_STATS_NEW]) * 8 > rs ||
	       (c[CABBPF_IOSTAT_FILES_NEW] - marks[CABBPF_IOSTAT_FILES_NEW]) * 8 > rf ||
	       c[CABBPF_IOSTAT_STATS_FULL] > marks[CABBPF_IOSTAT_STATS_FULL] ||
	       c[CABBPF_IOSTAT_FILES_FULL] > marks[CABBPF_IOSTAT_FILES_FULL];
}

int iomode__run(const struct opts *o, volatile sig_atomic_t *stop)
{
	struct iostat_opts so;
	struct iostat_run run;
	struct iostat *st = NULL;
	struct iotrace_opts io_o;
	struct iotrace *io = NULL;
	struct timespec tick = {0, TICK_NS};
	uint64_t marks[CABBPF_IOSTAT__MAX] = {0};
	uint32_t room_s, room_f;
	char cgpath[4096] = "", cgroot[4096];
	double startup, t0, t, next_collect, next_print, last_print, cpu0, t_load, t_loaded;
	const char *why = NULL;
	struct outputs outs = {0};
	int cgfd = -1, err, report_err;

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
	err = cgroup__select(o->cgroup, o->container, &cgfd, cgpath, sizeof(cgpath));
	if (err)
		return err;
	if (o->pid && cgfd >= 0 && (err = cgroup__check_pid(cgpath, o->pid, o->container)))
		goto cleanup;
	memset(&io_o, 0, sizeof(io_o));
	io_o.pid = o->pid;
	io_o.aggregate = true;
	io_o.floor = o->floor;
	io_o.no_casts = !features__get()->has[KF_RDONLY_CAST];
	io_o.cgroup_fd = cgfd;
	io_o.slots_fd = io_o.heads_fd = io_o.tstates_fd = io_o.tstab_fd = io_o.stats_fd = -1;
	t_load = now_s();
	err = iotrace__open(&io_o, &io);
	if (err)
		goto cleanup;
	t_loaded = now_s();
	memset(&so, 0, sizeof(so));
	so.stats_fd = iotrace__stats_fd(io);
	so.files_fd = iotrace__files_fd(io);
	so.done_fd = o->floor ? -1 : iotrace__done_fd(io);
	so.keep = o->io_keep;
	so.cgnames_fd = iotrace__cgnames_fd(io);
	so.ncpus = iotrace__ncpus(io);
	so.cgroot = cgroup__v2_root(cgroot, sizeof(cgroot)) ? NULL : cgroot;
	err = iostat__new(&so, &st);
	if (err) {
		log_err("--io: %s", strerror(-err));
		goto cleanup;
	}
	err = iotrace__attach(io);
	if (err)
		goto cleanup;
	iotrace__capacity(io, &room_s, &room_f);
	cpu0 = cpu_s();
	t0 = last_print = now_s();
	/* The start-up time: I/O before this instant is not counted. */
	startup = since_exec_s();
	if (startup >= 0)
		log_debug("--io: watching %.3f s after cabbpf started (BPF maps, load and "
			  "verification %.3f s, attach %.3f s)",
			  startup, t_loaded - t_load, t0 - t_loaded);
	next_collect = t0 + COLLECT_S;
	next_print = o->interval ? t0 + o->interval : 0;
	if (o->pid)
		log_info("watching the I/O system calls of pid %d%s%s (Ctrl-C to stop)",
			 (int)o->pid, cgfd >= 0 ? " in cgroup " : "", cgpath);
	else
		log_info("watching the I/O system calls of %s%s (Ctrl-C to stop)",
			 cgfd >= 0 ? "cgroup " : "every process", cgpath);
	while (!why) {
		nanosleep(&tick, NULL);
		t = now_s();
		if (*stop)
			why = "interrupted";
		else if (o->duration && t - t0 >= o->duration)
			why = "duration reached";
		else if (o->pid && procfs__gone(o->pid))
			why = "target exited";
		/* Ended processes' slots: every tick, so the ring never fills. */
		err = iostat__drain(st);
		if (err) {
			log_err("--io: reading the ring of ended processes: %s", strerror(-err));
			goto cleanup;
		}
		if (t >= next_collect || (next_print && t >= next_print) ||
		    filling(io, marks, room_s, room_f)) {
			err = iotrace__flush(io);
			if (!err)
				err = iostat__collect(st);
			if (err) {
				log_err("--io: reading the kernel maps: %s", strerror(-err));
				goto cleanup;
			}
			iotrace__counts(io, marks);
			next_collect = t + COLLECT_S;
		}
		if (next_print && t >= next_print && !o->floor) {
			iostat__print_interval(st, stdout, t - last_print);
			last_print = t;
			next_print += o->interval;
		}
	}
	t = now_s();
	iotrace__detach(io);
	err = iostat__collect(st);
	if (err) {
		log_err("--io: reading the kernel maps: %s", strerror(-err));
		goto cleanup;
	}
	memset(&run, 0, sizeof(run));
	if (iotrace__counts(io, run.counts))
		log_warn("could not read the BPF counters");
	run.duration_s = t - t0;
	run.startup_s = startup;
	run.pid = o->pid;
	run.cgroup = cgfd >= 0 ? cgpath : NULL;
	run.container = o->container;
	run.stop_reason = why;
	run.cpu_s = cpu_s() - cpu0;
	if (!o->quiet && !o->floor) {
		struct outfile of;

		/* -o: into a file, as --json (never through a symlink) */
		err = outfile__open(&of, o->output_path ? o->output_path : "-");
		if (!err)
			err = outfile__finish(&of, iostat__report_text(st, of.f, &run));
		outputs__note(&outs, "-o", o->output_path, err);
		if (err)
			log_err("--io: writing the report%s%s: %s", o->output_path ? " to " : "",
				o->output_path ? o->output_path : "", outfile__strerror(err));
	}
	fflush(stdout);
	run.outputs = &outs;
	if (o->json_path && (report_err = iostat__report_json(st, o->json_path, &run))) {
		log_err("writing --json %s: %s", o->json_path, outfile__strerror(report_err));
		err = err ? err : report_err;
	}
	fprintf(stderr,
		"cabbpf: %llu I/O calls in %.3f s (%.0f calls/s), %llu lost (kernel maps full); "
		"cabbpf used %.3f s CPU (%.2f%% of one core); stopped: %s\n",
		(unsigned long long)iostat__calls(st), run.duration_s,
		run.duration_s > 0 ? (double)iostat__calls(st) / run.duration_s : 0.0,
		(unsigned long long)(run.counts[CABBPF_IOSTAT_STATS_FULL] +
				     run.counts[CABBPF_IOSTAT_FILES_FULL]),
		run.cpu_s, run.duration_s > 0 ? 100 * run.cpu_s / run.duration_s : 0.0, why);
cleanup:
	iotrace__free(io);
	iostat__free(st);
	if (cgfd >= 0)
		close(cgfd);
	return err;
}
