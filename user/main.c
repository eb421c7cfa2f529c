// SPDX-License-Identifier: BSD-2-Clause
/*
 * cabbpf: trace a process's function calls with uprobes, re-stage the events
 * into per-processor CAB buffers, and analyse them on other cores while the
 * process runs. main() is the story: find the subcommand (the table below:
 * none is the live trace), parse its options, check what must hold before
 * anything starts, run it (the function tracer, user/modes/ftrace.h; the
 * system-wide I/O mode, user/modes/iomode.h; or a recording's report or
 * dump, user/modes/offline.h), and turn its result into the exit status.
 * Each mode logs its own errors.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "common/log.h"
#include "common/outfile.h"
#include "analyzers/isp.h"
#include "user/cli/opts.h"
#include "user/report/isp_plot.h"
#include "user/modes/iomode.h"
#include "user/kernel/bpfload.h"
#include "user/kernel/features.h"
#include "user/proc/target.h"
#include "user/modes/offline.h"
#include "user/modes/ftrace.h"

/* Exit statuses (--help says them): */
#define EXIT_TRACED                                                                                \
	0	      /* a trace was taken, or --help, --list, --plan; after a                     \
			 trace of -- COMMAND, COMMAND's own status instead */
#define EXIT_FAILED 1 /* it could not be, or it ended on an error */
#define EXIT_USAGE 2  /* the command line is wrong */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: interrupt the poll */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* The subcommands: cabbpf NAME ... (none: the live trace). */
static const struct subcommand {
	const char *name;
	enum opts_mode mode;
} subcommands[] = {
	{"record", OPTS_RECORD}, /* trace into a file: user/record/recorder.h */
	{"report", OPTS_REPORT}, /* a recording's report: user/modes/offline.h */
	{"dump", OPTS_DUMP},	 /* a recording's events */
	{"replay", OPTS_REPLAY}, /* a recording's call flow */
};

/* *code: the exit status after a success (a launched command's own). */
static int run(const struct opts *o, int *code)
{
	*code = EXIT_TRACED;
	if (o->features)
		return features__report(o->json_path);
	switch (o->mode) {
	case OPTS_REPORT:
		return offline__report(o);
	case OPTS_DUMP:
		return offline__dump(o, stdout);
	case OPTS_REPLAY:
		return offline__replay(o);
	default:
		return o->io ? iomode__run(o, &stop_signal) : ftrace__run(o, &stop_signal, code);
	}
}

/* What must hold before any mode starts: privileges (not for --list or
 * --plan, which attach nothing, nor to read a recording) and writable
 * output paths (a bad one must not cost a trace). Returns 0 or -errno
 * (logged). */
static int preflight(const struct opts *o)
{
	int err;

	if (geteuid() != 0 && !o->list && !o->plan && !o->features && o->mode <= OPTS_RECORD) {
		log_err("cabbpf must run as root: BPF programs and uprobes need CAP_BPF, "
			"CAP_PERFMON and CAP_SYS_ADMIN (try: sudo cabbpf ...)");
		return -EPERM;
	}
	if (o->json_path && (err = outfile__check(o->json_path))) {
		log_err("cannot write --json %s: %s", o->json_path, outfile__strerror(err));
		return err;
	}
	if (o->output_path && (err = outfile__check(o->output_path))) {
		log_err("cannot write -o %s: %s", o->output_path, outfile__strerror(err));
		return err;
	}
	if (o->record_path && (err = outfile__check(o->record_path))) {
		log_err("cannot write the recording %s: %s", o->record_path,
			outfile__strerror(err));
		return err;
	}
	if (o->mode == OPTS_DUMP || o->mode == OPTS_REPLAY)
		return 0;
	/* --folded, --flamegraph: writable, and the cct analyzer selected */
	if (!o->io && (err = views__check(&o->view, o->analyzers, o->entry_only)))
		return err;
	/* --plots DIR: a real, writable directory (made if absent) */
	if (!o->io && o->isp.plots_dir && (err = isp_plot__check_dir(o->isp.plots_dir)))
		return err;
	return 0;
}

int main(int argc, char **argv)
{
	enum opts_mode mode = OPTS_LIVE;
	struct opts o;
	size_t i;
	int err, code;

	for (i = 0; argc > 1 && i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(argv[1], subcommands[i].name)) {
			mode = subcommands[i].mode;
			argc--, argv++; /* argv[0] is the subcommand's name */
			break;
		}
	err = opts__parse_mode(mode, argc, argv, &o);
	if (err)
		return err == 1 ? EXIT_TRACED : EXIT_USAGE; /* 1: --help or --version */
	/* Big buffers from the heap, and kept there once freed: each BPF
	 * object's load reads and parses the kernel's BTF (~12 MiB of
	 * buffers, four times in a run), and fresh pages cost ~10 us each to
	 * fault in on a paravirtualized guest: ~40 ms a load with glibc's
	 * default (mmap for each, unmapped on free), ~4 ms reusing them. */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	log_verbose = o.verbose;
	libbpf_set_print(bpfload__print);
	err = preflight(&o);
	if (err)
		return EXIT_FAILED;
	target__save_inherited(); /* before cabbpf changes any of it */
	install_signals();
	err = run(&o, &code);
	/* Every error was logged where its cause was known: here it is only a
	 * status. */
	return err ? EXIT_FAILED : code;
}
