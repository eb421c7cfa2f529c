// SPDX-License-Identifier: BSD-2-Clause
/*
 * cabbpf: trace a process's function calls with uprobes, re-stage the events
 * into per-processor CAB buffers, and analyse them on other cores while the
 * process runs. main() is the story: parse the options, check what must
 * hold before anything starts, run the chosen mode (the function tracer,
 * user/trace/ftrace.h, or the system-wide I/O mode, user/iomode/iomode.h),
 * and turn its result into the exit status. Each mode logs its own errors.
 */
#include <errno.h>
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
#include "user/iomode/iomode.h"
#include "user/trace/ftrace.h"

/* Exit statuses (--help says them): */
#define EXIT_TRACED 0 /* a trace was taken, or --help, --list, --plan */
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

/* libbpf's warnings and errors always reach stderr, under cabbpf's
 * prefix like every diagnostic; its info and debug chatter only with -v. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN && !log_verbose)
		return 0;
	fputs("cabbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

/* What must hold before any mode starts: privileges (not for --list or
 * --plan, which attach nothing) and writable output paths (a bad one must
 * not cost a trace). Returns 0 or -errno (logged). */
static int preflight(const struct opts *o)
{
	int err;

	if (geteuid() != 0 && !o->list && !o->plan) {
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
	/* --folded, --flamegraph: writable, and the cct analyzer selected */
	if (!o->io && (err = views__check(&o->view, o->analyzers, o->entry_only)))
		return err;
	/* --plots DIR: a real, writable directory (made if absent) */
	if (!o->io && o->isp.plots_dir && (err = isp__check_plots_dir(o->isp.plots_dir)))
		return err;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	int err;

	err = opts__parse(argc, argv, &o);
	if (err)
		return err == 1 ? EXIT_TRACED : EXIT_USAGE; /* 1: --help or --version */
	log_verbose = o.verbose;
	libbpf_set_print(libbpf_print);
	err = preflight(&o);
	if (err)
		return EXIT_FAILED;
	install_signals();
	err = o.io ? iomode__run(&o, &stop_signal) : ftrace__run(&o, &stop_signal);
	/* Every error was logged where its cause was known: here it is only a
	 * status. */
	return err ? EXIT_FAILED : EXIT_TRACED;
}
