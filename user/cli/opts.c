// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/cli/opts.h"
#include "common/log.h"

#define CABBPF_VERSION "0.1.0"

static const char usage[] =
	"Usage: cabbpf [OPTIONS] -p PID\n"
	"       cabbpf [OPTIONS] -- COMMAND [ARGS...]\n"
	"       cabbpf --io [-p PID] [OPTIONS]\n"
	"\n"
	"Trace a native program's function calls and returns with uprobes, without\n"
	"recompiling or restarting it, and analyse them concurrently on other cores:\n"
	"calls per function (total and per thread), the call graph, and the bytes\n"
	"each function's activations read and wrote through system calls.\n"
	"\n"
	"Target (one of):\n"
	"  -p, --pid PID            trace a running process (all its threads, also\n"
	"                           ones created later) until Ctrl-C, -d, or its exit\n"
	"  -- COMMAND [ARGS...]     launch COMMAND and trace it from its first call\n"
	"                           to its exit; if cabbpf stops first (Ctrl-C, -d)\n"
	"                           COMMAND is ended too (SIGINT / SIGTERM)\n"
	"\n"
	"What to trace:\n"
	"  -f, --func GLOB          trace functions matching GLOB (shell pattern;\n"
	"                           repeat for more). Default: every function of the\n"
	"                           main executable except C runtime start-up code\n"
	"  -f LIB:GLOB              functions of a shared library: 'libc.so.6:malloc',\n"
	"                           'libc:*' (all of it), '/path/libfoo.so:foo_*';\n"
	"                           found in /proc/PID/maps or the library directories\n"
	"  -l, --list               print the functions that would be traced, and exit\n"
	"      --plan               print where each probe would go, its cost class\n"
	"                           (nop5, emulated, single-step, refused) and the\n"
	"                           estimated overhead per call, and exit\n"
	"      --no-shift           keep every probe on the function's first\n"
	"                           instruction (default: move it past leading\n"
	"                           instructions when provably equivalent and cheaper)\n"
	"      --entry-only         no return probes: exact call counts only (implies\n"
	"                           -a count; no times, no call graph), cheaper per\n"
	"                           call: probes may also move past push/sub rsp, and\n"
	"                           a function whose address never escapes is counted\n"
	"                           at its call instructions instead of its entry\n"
	"      --no-callsites       with --entry-only: keep such functions' probes at\n"
	"                           their entries\n"
	"\n"
	"Analysis and output:\n"
	"  -a, --analyzers LIST     comma-separated: count,callgraph,io,cct (default:\n"
	"                           all; io: bytes read and written per function;\n"
	"                           cct: the calling-context tree, below)\n"
	"  -j, --json FILE          also write every result as JSON to FILE\n"
	"                           (schema: docs/json-schema.md)\n"
	"  -d, --duration SECONDS   stop after SECONDS (decimals allowed)\n"
	"  -q, --quiet              no text report on stdout (use with --json)\n"
	"  -v, --verbose            debug messages, including libbpf's\n"
	"\n"
	"Tuning:\n"
	"      --ring-size MIB      kernel ring per CPU, a power of two (default 16)\n"
	"      --analyzer-threads N analyzer threads (default 1)\n"
	"      --no-times           take no timestamps: exact counts and call graph,\n"
	"                           no inclusive/self times, ~0.1 us less per event\n"
	"      --floor              attach empty BPF programs on the same sites and\n"
	"                           report nothing but time (benchmark baseline)\n"
	"      --no-guard           do not watch the unwinder and stack switches as\n"
	"                           the target's ptrace tracer. Only for programs\n"
	"                           that never throw, unwind or switch stacks: a\n"
	"                           C++ exception through a traced frame then\n"
	"                           kills the target (docs/guard.md)\n"
	"  -h, --help               this help\n"
	"  -V, --version            version\n"
	"\n"
	VIEWS_USAGE
	"System-wide I/O and containers:\n"
	"      --io                 no function tracing: per process, per cgroup and\n"
	"                           per container, the input and output system calls\n"
	"                           (read/recv.../write/send... families) by syscall\n"
	"                           and fd kind, size histograms, short reads, top\n"
	"                           files and sockets; every process unless -p PID.\n"
	"                           Runs until Ctrl-C or -d\n"
	"  -i, --interval SECONDS   with --io: print the figures every SECONDS\n"
	"      --cgroup PATH        only tasks in cgroup v2 directory PATH and its\n"
	"                           descendants (filtered in the kernel); any mode.\n"
	"                           With -- COMMAND, COMMAND is started inside PATH\n"
	"      --container ID       only the container ID (docker, containerd/CRI,\n"
	"                           podman; a unique prefix of the id is enough)\n"
	"\n"
	"Examples:\n"
	"  sudo cabbpf -p 4242                          # until Ctrl-C\n"
	"  sudo cabbpf -- ./myprog arg1 arg2            # whole run of a command\n"
	"  sudo cabbpf -f 'parse_*' -f main -p 4242 --json out.json\n"
	"  sudo cabbpf -a count -d 10 -p 4242           # 10 s, call counts only\n"
	"  sudo cabbpf -l -- ./myprog                   # which functions would be traced\n"
	"  sudo cabbpf --io -d 60 -i 10                 # whole machine's I/O, 1 min\n"
	"  sudo cabbpf --io --container 3f2a9c --json io.json\n"
	"  sudo cabbpf --cgroup /sys/fs/cgroup/unified/app -- ./myprog\n"
	"\n"
	"Results go to stdout, progress and statistics (events, events/s, lost) to\n"
	"stderr. Exit status: 0 when a trace was taken (also after Ctrl-C or when the\n"
	"target exits early), 1 when it could not be, 2 for a usage error.\n";

enum {
	OPT_RING = 1000,
	OPT_ATHREADS,
	OPT_FLOOR,
	OPT_NO_TIMES,
	OPT_NO_GUARD,
	OPT_PLAN,
	OPT_NO_SHIFT,
	OPT_NO_CALLSITES,
	OPT_ENTRY_ONLY,
};

/* System-wide I/O and container options: their own range. */
enum {
	OPT_IO = 1100,
	OPT_CGROUP,
	OPT_CONTAINER,
};

static const struct option longopts[] = {
	{"pid", required_argument, NULL, 'p'},
	{"func", required_argument, NULL, 'f'},
	{"list", no_argument, NULL, 'l'},
	{"analyzers", required_argument, NULL, 'a'},
	{"json", required_argument, NULL, 'j'},
	{"duration", required_argument, NULL, 'd'},
	{"quiet", no_argument, NULL, 'q'},
	{"verbose", no_argument, NULL, 'v'},
	{"ring-size", required_argument, NULL, OPT_RING},
	{"analyzer-threads", required_argument, NULL, OPT_ATHREADS},
	{"floor", no_argument, NULL, OPT_FLOOR},
	{"no-times", no_argument, NULL, OPT_NO_TIMES},
	{"no-guard", no_argument, NULL, OPT_NO_GUARD},
	{"plan", no_argument, NULL, OPT_PLAN},
	{"no-shift", no_argument, NULL, OPT_NO_SHIFT},
	{"no-callsites", no_argument, NULL, OPT_NO_CALLSITES},
	{"entry-only", no_argument, NULL, OPT_ENTRY_ONLY},
	{"io", no_argument, NULL, OPT_IO},
	{"interval", required_argument, NULL, 'i'},
	{"cgroup", required_argument, NULL, OPT_CGROUP},
	{"container", required_argument, NULL, OPT_CONTAINER},
	VIEWS_LONGOPTS,
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

/* Whole-string unsigned parse within [lo, hi]. */
static int parse_ulong(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

int opts__parse(int argc, char **argv, struct opts *o)
{
	unsigned long v;
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->ring_bytes = 16UL << 20;
	o->analyzer_threads = 1;
	views__init(&o->view);
	opterr = 0;
	/* '+': stop at the first non-option so "-- cmd -x" keeps -x for cmd. */
	while ((c = getopt_long(argc, argv, "+p:f:la:j:d:i:qvhV" VIEWS_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_ulong(optarg, 1, INT_MAX, &v)) {
				log_err("-p wants a process id (a positive integer), not '%s'",
					optarg);
				return -EINVAL;
			}
			o->pid = (pid_t)v;
			break;
		case 'f':
			if (o->nfuncs == OPTS_MAX_FUNCS) {
				log_err("at most %d -f patterns", OPTS_MAX_FUNCS);
				return -EINVAL;
			}
			if (!*optarg) {
				log_err("-f wants a non-empty pattern");
				return -EINVAL;
			}
			o->funcs[o->nfuncs++] = optarg;
			break;
		case 'l':
			o->list = true;
			break;
		case 'a':
			o->analyzers = optarg;
			break;
		case 'j':
			o->json_path = optarg;
			break;
		case 'd':
			errno = 0;
			o->duration = strtod(optarg, &end);
			if (errno || *end || !*optarg || !(o->duration > 0) ||
			    !isfinite(o->duration) || o->duration > 365 * 86400.0) {
				log_err("-d wants a positive number of seconds, not '%s'", optarg);
				return -EINVAL;
			}
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case OPT_RING:
			if (parse_ulong(optarg, 1, 1024, &v) || (v & (v - 1))) {
				log_err("--ring-size wants a power of two from 1 to 1024 (MiB), not '%s'",
					optarg);
				return -EINVAL;
			}
			o->ring_bytes = v << 20;
			break;
		case OPT_ATHREADS:
			if (parse_ulong(optarg, 1, 64, &v)) {
				log_err("--analyzer-threads wants 1 to 64, not '%s'", optarg);
				return -EINVAL;
			}
			o->analyzer_threads = (unsigned)v;
			break;
		case OPT_NO_GUARD:
			o->no_guard = true;
			break;
		case OPT_NO_TIMES:
			o->no_times = true;
			break;
		case OPT_FLOOR:
			o->floor = true;
			break;
		case OPT_PLAN:
			o->plan = true;
			break;
		case OPT_NO_SHIFT:
			o->no_shift = true;
			break;
		case OPT_NO_CALLSITES:
			o->no_callsites = true;
			break;
		case OPT_ENTRY_ONLY:
			o->entry_only = true;
			break;
		case OPT_IO:
			o->io = true;
			break;
		case 'i':
			errno = 0;
			o->interval = strtod(optarg, &end);
			if (errno || *end || !*optarg || !(o->interval >= 0.1) ||
			    !isfinite(o->interval) || o->interval > 86400.0) {
				log_err("-i wants a number of seconds from 0.1 to 86400, not '%s'",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_CGROUP:
			if (!*optarg) {
				log_err("--cgroup wants a cgroup v2 directory");
				return -EINVAL;
			}
			o->cgroup = optarg;
			break;
		case OPT_CONTAINER:
			if (!*optarg) {
				log_err("--container wants a container id");
				return -EINVAL;
			}
			o->container = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		case 'V':
			printf("cabbpf %s\n", CABBPF_VERSION);
			return 1;
		case '?':
		default:
			if (views__is_opt(c)) {
				if (views__opt(&o->view, c, optarg))
					return -EINVAL;
				break;
			}
			if (optopt && optopt < 256)
				log_err("unknown option '-%c' or missing argument (see cabbpf --help)",
					optopt);
			else
				log_err("unknown option '%s' or missing argument (see cabbpf --help)",
					argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	/* Without return events the shadow stacks cannot tell callers. */
	if (o->entry_only && o->analyzers && strstr(o->analyzers, "callgraph")) {
		log_err("--entry-only attaches no return probes: the callgraph analyzer needs "
			"them (use -a count)");
		return -EINVAL;
	}
	if (o->entry_only && !o->analyzers)
		o->analyzers = "count";
	if (o->pid && o->cmd) {
		log_err("give either -p PID or -- COMMAND, not both");
		return -EINVAL;
	}
	if (o->cgroup && o->container) {
		log_err("give either --cgroup or --container, not both");
		return -EINVAL;
	}
	if (o->interval && !o->io) {
		log_err("-i works with --io only");
		return -EINVAL;
	}
	if (o->io) {
		if (o->cmd) {
			log_err("--io watches running processes: give -p PID or no target");
			return -EINVAL;
		}
		return 0;
	}
	if (!o->pid && !o->cmd) {
		log_err("nothing to trace: give -p PID or -- COMMAND (see cabbpf --help)");
		return -EINVAL;
	}
	return 0;
}
