// SPDX-License-Identifier: BSD-2-Clause
/*
 * The options (opts.h), one idea in one file: the table of every option
 * (its flags, value range, help text and the field it sets) and the code
 * that reads it three ways, parsing, range and combination checks, and
 * --help. Kept whole on purpose: most of its length is the table, and an
 * option is added in one place only when the table and its readers are
 * side by side. What reads the values and checks the options against each
 * other is beside it: opts_values.c (numbers, durations, --time-range) and
 * opts_rules.c (the combinations refused).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/cli/opts.h"
#include "user/cli/opts_int.h"
#include "common/log.h"

/* --help: this, then the table's sections, then help_tail. */
static const char help_head[] =
	"Usage: cabbpf [OPTIONS] -p PID\n"
	"       cabbpf [OPTIONS] -- COMMAND [ARGS...]\n"
	"       cabbpf [OPTIONS] --container NAME|ID   (every process of a container)\n"
	"       cabbpf [OPTIONS] --cgroup DIR          (every process of a cgroup)\n"
	"       cabbpf --io [-p PID] [OPTIONS]\n"
	"       cabbpf record -o FILE [OPTIONS] (-p PID | -- COMMAND [ARGS...])\n"
	"       cabbpf report FILE [OPTIONS]    cabbpf dump FILE\n"
	"       cabbpf replay FILE [OPTIONS]    (the call flow, as uftrace replay)\n"
	"\n"
	"Trace a native program's function calls and returns with uprobes, without\n"
	"recompiling or restarting it, and analyse them concurrently on other cores:\n"
	"calls per function (total and per thread), the call graph, and the bytes\n"
	"each function's activations read and wrote through system calls.\n"
	"\n";

static const char help_head_record[] =
	"Usage: cabbpf record -o FILE [OPTIONS] -p PID\n"
	"       cabbpf record -o FILE [OPTIONS] -- COMMAND [ARGS...]\n"
	"\n"
	"Trace as cabbpf does, and write the events as the analyzers receive them\n"
	"(CAB chunks with their thread ids), the function table, the target and the\n"
	"run's accounting (lost, dropped) into FILE, zstd-compressed\n"
	"(docs/record-format.md). Read it later, on any machine, with\n"
	"'cabbpf report FILE' (any analyzer, any view) or 'cabbpf dump FILE'.\n"
	"Nothing is analyzed while recording unless a live result is asked for\n"
	"(-a, --json, --folded, --flamegraph, --pprof): then both.\n"
	"\n";

static const char help_head_report[] =
	"Usage: cabbpf report FILE [OPTIONS]\n"
	"\n"
	"The report of a recording made by 'cabbpf record': the same analyzers\n"
	"(-a), views and exports as a live run, from the file, offline. The\n"
	"analyzers' sections are those the live run would have printed.\n"
	"\n";

static const char help_head_replay[] =
	"Usage: cabbpf replay FILE [OPTIONS]\n"
	"\n"
	"A recording's call flow, as uftrace replay prints it: each thread's\n"
	"calls in program order, indented by depth, a call that calls nothing\n"
	"on one line with its duration, others opened with '{' and closed with\n"
	"their duration, and the I/O system calls inside the calls that made\n"
	"them:\n"
	"     START_S   DURATION     TID | FUNCTION\n"
	"    0.000012                812 | main() {\n"
	"    0.000031   2.310 us     812 |   parse();\n"
	"    0.000040                812 |   load() {\n"
	"    0.000052                812 |     read(3 file) = 4096 bytes\n"
	"    0.000901 861.020 us     812 |   } /* load */\n"
	"START_S is from the first event; durations are traced times (each\n"
	"includes its own probes' cost). It streams: memory stays bounded\n"
	"whatever the recording's length.\n"
	"\n";

static const char help_dump[] =
	"Usage: cabbpf dump FILE\n"
	"\n"
	"Print a recording's events, one a line, in the order the analyzers\n"
	"received them (chunk by chunk; seq is each thread's program order):\n"
	"  TID SEQ TIME_NS KIND FUNCTION-or-I/O\n"
	"KIND is call, return, io, guard, exec or sched (off-CPU interval).\n"
	"A call or return ends with its sp, the return-address slot the\n"
	"shadow stacks match them by (a return's is its call's + 8).\n";

static const char help_tail[] =
	"Examples:\n"
	"  sudo cabbpf -p 4242                          # until Ctrl-C\n"
	"  sudo cabbpf -- ./myprog arg1 arg2            # whole run of a command\n"
	"  sudo cabbpf -f 'parse_*' -f main -p 4242 --json out.json\n"
	"  sudo cabbpf -a count -d 10 -p 4242           # 10 s, call counts only\n"
	"  sudo cabbpf -l -- ./myprog                   # which functions would be traced\n"
	"  sudo cabbpf --io -d 60 -i 10                 # whole machine's I/O, 1 min\n"
	"  sudo cabbpf --io --container 3f2a9c --json io.json\n"
	"  sudo cabbpf --container web -d 30 --json web.json   # every process of it\n"
	"  sudo cabbpf --cgroup /sys/fs/cgroup/unified/app -- ./myprog\n"
	"  sudo cabbpf -a isp --plots plots -- ./myprog in1 in2 in3  # cost vs input\n"
	"  sudo cabbpf -a isp --cost calls --size 'parse:strlen(arg0)' -p 4242\n"
	"\n"
	"Results go to stdout, progress and statistics (events, events/s, lost) to\n"
	"stderr. Exit status: after a trace of -- COMMAND, COMMAND's own (128+N when\n"
	"signal N killed it, as shells say; Ctrl-C passes on, -d ends it with SIGTERM:\n"
	"143); 0 after any other trace (-p: also when the target exits);\n"
	"1 when it could not be or ended on an error (reading the rings, writing a\n"
	"file: what was traced is still reported); 2 for a usage error.\n"
	"\n"
	"Subcommands (cabbpf SUBCOMMAND --help):\n"
	"  cabbpf record -o FILE ... (-p PID | -- CMD)   trace into a recording\n"
	"  cabbpf report FILE [OPTIONS]                  the report of a recording\n"
	"  cabbpf dump FILE                              its events, one a line\n";

#define OFF(field) .off = offsetof(struct opts, field)

static const char G_TARGET[] = "Target (one of)";
static const char G_WHAT[] = "What to trace";
static const char G_OUT[] = "Analysis and output";
static const char G_SAMPLE[] =
	"Sampling (probes out of the target between windows: native speed; calls\n"
	"inside a window exact, whole-run counts estimated with a 95% interval)";
static const char G_VIEW[] = "Call tree, flame graph, exports (pprof, Chrome/Perfetto timeline)";
static const char G_ISP[] =
	"Input-sensitive profiles (the isp analyzer, -a isp): per routine, cost\n"
	"against input size, fitted";
static const char G_TUNE[] = "Tuning";
static const char G_IO[] = "System-wide I/O and containers";
static const char G_REPLAY[] = "Replay (cabbpf replay FILE)";

const struct opt_def opts__table[] = {
	{"pid", 'p', OPT_PID, "PID", 1, INT_MAX, OFF(pid), .group = G_TARGET,
	 .wants = "a process id (a positive integer)",
	 .help = "trace a running process (all its threads, also\n"
		 "ones created later) until Ctrl-C, -d, or its exit"},
	{.type = OPT_NOTE,
	 .group = G_TARGET,
	 .label = "-- COMMAND [ARGS...]",
	 .help = "launch COMMAND and trace it from its first call\n"
		 "to its exit; if cabbpf stops first (Ctrl-C, -d)\n"
		 "COMMAND is ended too (SIGINT / SIGTERM)"},
	{"follow-exec", 0, OPT_FLAG, OFF(follow_exec), .group = G_TARGET,
	 .help = "with -- COMMAND: when COMMAND only starts another\n"
		 "program (a version manager's shim: pyenv, rbenv;\n"
		 "env VAR=1 PROG; nice, taskset, stdbuf...; a script\n"
		 "ending in exec PROG), let it run through its execs\n"
		 "of shells and such wrappers and trace the first\n"
		 "other program it execs, from its first\n"
		 "instruction (processes it forks on the way run\n"
		 "untraced)"},
	{"follow-forks", 0, OPT_FLAG, OFF(follow_forks), .group = G_TARGET,
	 .help = "with -- COMMAND: trace every process COMMAND\n"
		 "starts too (its forks, their forks and the\n"
		 "programs they exec), as a whole cgroup is traced:\n"
		 "cabbpf puts COMMAND in a cgroup of its own (made\n"
		 "under cabbpf's, removed after) and reports each\n"
		 "process; the run ends when the last one has.\n"
		 "-f applies to every program the tree runs; each\n"
		 "is traced from its first instruction (held at\n"
		 "its exec until its probes are in: stderr says\n"
		 "what that added).\n"
		 "Without it the report counts the processes\n"
		 "COMMAND started, not traced. With -p PID: PID's\n"
		 "children, through PID's own cgroup, when that\n"
		 "holds PID and its descendants only (a service's,\n"
		 "a container's; else refused, saying which other\n"
		 "processes are there). Return probes need Linux\n"
		 "6.13 (uprobe sessions): before, -a count"},
	{.type = OPT_NOTE,
	 .group = G_TARGET,
	 .label = "--container NAME|ID",
	 .help = "alone (no -p, no --): every process of the\n"
		 "container, running or started later (podman\n"
		 "exec, a shell's children), until Ctrl-C, -d or\n"
		 "the container's end: the executables they run\n"
		 "(and -f LIB:GLOB libraries), found through\n"
		 "/proc/PID/root; other containers running the\n"
		 "same files are filtered out in the kernel. The\n"
		 "report: one section per process, then all merged.\n"
		 "An executable found later is traced from then\n"
		 "(stderr says when); return probes only in a\n"
		 "process its own guard holds (or that needs none;\n"
		 "kernel >= 6.13), else its calls are counted only.\n"
		 "Not with --lossless, --sample, --size, record"},
	{.type = OPT_NOTE,
	 .group = G_TARGET,
	 .label = "--cgroup DIR",
	 .help = "alone: the same for every process of a cgroup v2\n"
		 "directory and its descendants"},

	{"func", 'f', OPT_STRS, "GLOB", 0, OPTS_MAX_FUNCS, OPTF_NONEMPTY, OFF(funcs),
	 .count_off = offsetof(struct opts, nfuncs), .group = G_WHAT,
	 .wants = "a non-empty pattern",
	 .help = "trace functions matching GLOB (shell pattern;\n"
		 "repeat for more). Default: every function of the\n"
		 "main executable except C runtime start-up code"},
	{.type = OPT_NOTE,
	 .group = G_WHAT,
	 .label = "-f LIB:GLOB",
	 .help = "functions of a shared library: 'libc.so.6:malloc',\n"
		 "'libc:*' (all of it), '/path/libfoo.so:foo_*';\n"
		 "found in /proc/PID/maps or the library directories"},
	{"debug-dir", 0, OPT_STR, "DIR", 0, 0, OPTF_NONEMPTY, OFF(debug_dir), .group = G_WHAT,
	 .wants = "a directory",
	 .help = "separate debug files of stripped binaries (by build\n"
		 "id, or .gnu_debuglink) under DIR (default\n"
		 "/usr/lib/debug, where Debian's -dbgsym packages go;\n"
		 "a container's own /usr/lib/debug is looked in first)"},
	{"list", 'l', OPT_FLAG, OFF(list), .group = G_WHAT,
	 .help = "print the functions that would be traced (address,\n"
		 "size, name, FILE:LINE where DWARF has it), and exit"},
	{"plan", 0, OPT_FLAG, OFF(plan), .group = G_WHAT,
	 .help = "print where each probe would go, its cost class\n"
		 "(nop5, emulated, single-step, refused) and the\n"
		 "estimated overhead per call, and exit; refused:\n"
		 "what the kernel's uprobe rules reject (e.g. AVX\n"
		 "code starting with vmovd) or would skip; with -v,\n"
		 "each function and its first instruction"},
	{"no-shift", 0, OPT_FLAG, OFF(no_shift), .group = G_WHAT,
	 .help = "keep every probe on the function's first\n"
		 "instruction (default: move it past leading\n"
		 "instructions when provably equivalent and cheaper)"},
	{"entry-only", 0, OPT_FLAG, OFF(entry_only), .group = G_WHAT,
	 .help = "no return probes: exact call counts only (implies\n"
		 "-a count; no times, no call graph), cheaper per\n"
		 "call: probes may also move past push/sub rsp, and\n"
		 "a function whose address never escapes is counted\n"
		 "at its call instructions instead of its entry"},
	{"no-callsites", 0, OPT_FLAG, OFF(no_callsites), .group = G_WHAT,
	 .help = "with --entry-only: keep such functions' probes at\n"
		 "their entries"},
	{"args", 0, OPT_STRS, "GLOB:ITEMS", 0, OPTS_MAX_VAL_RULES, OPTF_NONEMPTY, OFF(args),
	 .count_off = offsetof(struct opts, nargs), .group = G_WHAT,
	 .wants = "GLOB:ITEM[,ITEM...], ITEM argN, int(argN), str(argN) or strlen(argN), N 0-5",
	 .help = "read these arguments of the functions matching\n"
		 "GLOB at each call: argN the Nth integer argument\n"
		 "(from 0; x86-64: rdi, rsi, rdx, rcx, r8, r9; 64\n"
		 "bits), int(argN) its low 32 bits (a C int),\n"
		 "str(argN) the string it points at (63 bytes at\n"
		 "most: longer ends in ...), strlen(argN) its\n"
		 "length; up to 6 items, e.g. 'open*:str(arg0),arg1'.\n"
		 "A string in a page the program has not touched\n"
		 "yet cannot be read: (unread ADDRESS). Shown by\n"
		 "--slower-than, --timeline and cabbpf replay.\n"
		 "Read for those functions only: ~55 ns more per\n"
		 "integer and call, ~200 ns per string\n"
		 "(bench/vals_cost.sh); repeatable, the first rule\n"
		 "a function matches"},
	{"retval", 0, OPT_STRS, "GLOB[:str]", 0, OPTS_MAX_VAL_RULES, OPTF_NONEMPTY, OFF(retvals),
	 .count_off = offsetof(struct opts, nretvals), .group = G_WHAT,
	 .wants = "GLOB, GLOB:int or GLOB:str",
	 .help = "read the return value of the functions matching\n"
		 "GLOB: rax's 64 bits, with GLOB:int its low 32 (a\n"
		 "C int), with GLOB:str the string it points at;\n"
		 "shown like --args; ~75 ns more per call of those\n"
		 "functions (repeatable)"},

	{"analyzers", 'a', OPT_STR, "LIST", OFF(analyzers), .flags = OPTF_OFFLINE, .group = G_OUT,
	 .help = "comma-separated: count,callgraph,io,cct,latency,\n"
		 "isp (default: all but isp; io: bytes read and\n"
		 "written per function; cct: the calling-context\n"
		 "tree; latency: call durations, log2 histograms\n"
		 "(--hist); isp: input-sensitive profiles, below)"},
	{"json", 'j', OPT_STR, "FILE", OFF(json_path), .flags = OPTF_OFFLINE, .group = G_OUT,
	 .help = "also write every result as JSON to FILE\n"
		 "(schema: docs/json-schema.md)"},
	{"duration", 'd', OPT_DOUBLE, "SECONDS", 0, 365 * 86400.0, OPTF_LO_OPEN, OFF(duration),
	 .group = G_OUT, .wants = "a positive number of seconds",
	 .help = "stop after SECONDS (decimals allowed)"},
	{"output", 'o', OPT_STR, "FILE", 0, 0, OPTF_NONEMPTY | OPTF_OFFLINE | OPTF_REPLAY,
	 OFF(output_path),
	 .group = G_OUT, .wants = "a file name",
	 .help = "the text report into FILE, not stdout (where a\n"
		 "launched command's own output goes); for cabbpf\n"
		 "record: the recording",
	 .replay_help = "the flow into FILE, not stdout"},
	{"quiet", 'q', OPT_FLAG, OFF(quiet), .flags = OPTF_OFFLINE, .group = G_OUT,
	 .help = "no text report on stdout (use with --json)"},
	{"verbose", 'v', OPT_FLAG, OFF(verbose), .flags = OPTF_OFFLINE | OPTF_REPLAY, .group = G_OUT,
	 .help = "debug messages, including libbpf's"},

	{"exclude", 'N', OPT_STRS, "GLOB", 0, VIEWS_MAX_EXCLUDES, OPTF_NONEMPTY | OPTF_REPLAY,
	 OFF(view.excludes),
	 .count_off = offsetof(struct opts, view.nexcludes), .group = G_VIEW,
	 .wants = "a non-empty pattern",
	 .help = "leave functions matching GLOB out of the trace\n"
		 "(repeatable; main executable's functions)",
	 .replay_help = "hide the calls of functions matching GLOB and\n"
			"what they call (repeatable)"},
	{"hist", 0, OPT_STRS, "GLOB", 0, VIEWS_MAX_EXCLUDES, OPTF_NONEMPTY | OPTF_OFFLINE,
	 OFF(view.hist), .count_off = offsetof(struct opts, view.nhist), .group = G_VIEW,
	 .wants = "a non-empty pattern",
	 .help = "call durations (the latency analyzer): show the\n"
		 "histograms of the functions matching GLOB\n"
		 "(repeatable; default: the 5 with the most time;\n"
		 "the JSON has every function's); with -a cct, also\n"
		 "theirs by calling context (text and JSON)"},
	{"slower-than", 0, OPT_NS, "DURATION", 1, 1e15, OFF(view.slower_ns),
	 .flags = OPTF_OFFLINE | OPTF_REPLAY,
	 .group = G_VIEW, .wants = "a duration such as 10ms, 1.5s, 200us (a bare number: ms)",
	 .help = "call durations: list the slowest calls that took\n"
		 "DURATION or more (10ms, 1.5s, 200us; a bare\n"
		 "number is ms): when each began, its thread,\n"
		 "its wall and on-CPU time, its callers; and how\n"
		 "many calls took that long",
	 .replay_help = "hide the calls shorter than DURATION (and what\n"
			"they call): 10ms, 1.5s, 200us; a bare number\n"
			"is ms"},
	{"slowest", 0, OPT_UINT, "N", 1, 100000, OFF(view.slowest), .flags = OPTF_OFFLINE,
	 .group = G_VIEW, .wants = "an integer from 1 to 100000",
	 .help = "with --slower-than: list at most N calls\n"
		 "(default 20; the JSON has as many)"},
	{"depth", 0, OPT_UINT, "N", 1, 1000000, OFF(view.cct.depth),
	 .flags = OPTF_OFFLINE | OPTF_REPLAY,
	 .group = G_VIEW, .wants = "a positive integer",
	 .help = "text call tree: N levels (default: all)",
	 .replay_help = "show N levels of calls (default: all)"},
	{"min-pct", 0, OPT_DOUBLE, "P", 0, 100, OFF(view.cct.min_pct), .flags = OPTF_OFFLINE,
	 .group = G_VIEW, .wants = "a percentage from 0 to 100",
	 .help = "text call tree: hide contexts under P% of the\n"
		 "total time (default 1)"},
	{"sort", 's', OPT_CHOICE, "KEY", OFF(sort_key), .flags = OPTF_OFFLINE, .group = G_VIEW,
	 .choices = (const char *const[]){"total", "calls", "self", "cpu", NULL},
	 .wants = "calls, total, self or cpu",
	 .help = "per-function table order: calls, total (default),\n"
		 "self or cpu"},
	{"folded", 0, OPT_STR, "FILE", 0, 0, OPTF_NONEMPTY | OPTF_OFFLINE, OFF(view.folded_path),
	 .group = G_VIEW, .wants = "a file name",
	 .help = "FlameGraph folded stacks (flamegraph.pl, inferno,\n"
		 "speedscope): 'main;parse;lex 1234' per context"},
	{"folded-metric", 0, OPT_CHOICE, "M", OFF(folded_metric), .flags = OPTF_OFFLINE,
	 .group = G_VIEW,
	 .choices = (const char *const[]){"wall", "calls", "cpu", "sampled", NULL},
	 .wants = "wall, cpu, calls or sampled",
	 .help = "sampled (default with --times sampled: the\n"
		 "program's own self ns per context), wall (traced\n"
		 "self wall ns, probes included), cpu (traced self\n"
		 "on-CPU ns) or calls; also the flame graph's"},
	{"flamegraph", 0, OPT_STR, "FILE", 0, 0, OPTF_NONEMPTY | OPTF_OFFLINE, OFF(view.svg_path),
	 .group = G_VIEW, .wants = "a file name",
	 .help = "an SVG flame graph (self-contained; hover a frame\n"
		 "for its calls and times)"},
	{"pprof", 0, OPT_STR, "FILE", 0, 0, OPTF_NONEMPTY | OPTF_OFFLINE, OFF(view.pprof_path),
	 .group = G_VIEW, .wants = "a file name",
	 .help = "the tree as a gzipped pprof profile (go tool pprof,\n"
		 "Pyroscope, Parca, Grafana): calls, wall and on-CPU\n"
		 "self time per calling context; functions with their\n"
		 "source file and line, binaries with their build id"},
	{"timeline", 0, OPT_STR, "FILE", 0, 0, OPTF_NONEMPTY | OPTF_OFFLINE,
	 OFF(view.timeline_path), .group = G_VIEW, .wants = "a file name",
	 .help = "the call timeline as Chrome Trace Event JSON\n"
		 "(ui.perfetto.dev, chrome://tracing): every\n"
		 "activation a complete event, I/O calls as instant\n"
		 "events with their bytes, per thread"},
	{"timeline-limit", 0, OPT_UINT, "N", 1, 4294967295.0, OFF(view.timeline_limit),
	 .flags = OPTF_OFFLINE, .group = G_VIEW, .wants = "a positive integer",
	 .help = "at most N timeline events (default 1000000, ~32\n"
		 "MiB); the first N to complete are kept, the cut is\n"
		 "said in the file and on stderr"},
	{"collapse-recursion", 0, OPT_FLAG, OFF(view.cct.collapse_recursion), .flags = OPTF_OFFLINE,
	 .group = G_VIEW, .help = "direct recursion (f called by f) in one node"},
	{"cct-max-nodes", 0, OPT_UINT, "N", 1, 4294967293.0, OFF(view.cct.max_nodes),
	 .flags = OPTF_OFFLINE, .group = G_VIEW, .wants = "a positive integer",
	 .help = "contexts kept per analyzer thread (default\n"
		 "1048576, ~80 MiB); further calls are folded into\n"
		 "their caller's context and counted"},

	{.type = OPT_NOTE,
	 .group = G_ISP,
	 .label = "-a isp",
	 .help = "per activation of a traced routine a point (input\n"
		 "size, cost); input size = bytes delivered by read/\n"
		 "recv... to it and its callees. Per routine: points\n"
		 "by size; the fit of each size's minimum cost:\n"
		 "class O(1)..O(2^n), or the classes the sizes cannot\n"
		 "tell apart (\"O(n) or O(n log n)\"), log-log\n"
		 "exponent, R^2; significantly superlinear costly\n"
		 "routines first.\n"
		 "Not in the default set: it needs a run that feeds\n"
		 "a routine inputs of several sizes to say anything"},
	{"cost", 0, OPT_CHOICE, "C", OFF(cost_word), .flags = OPTF_OFFLINE, .group = G_ISP,
	 .choices = (const char *const[]){"wall", "cpu", "calls", NULL},
	 .wants = "wall, cpu or calls",
	 .help = "a point's cost: cpu (default: inclusive on-CPU\n"
		 "time; wall where it is not measured), wall\n"
		 "(inclusive wall time: preemptions and sleeps in)\n"
		 "or calls (traced calls in the subtree: exact)"},
	{"size", 0, OPT_STRS, "GLOB:argN", 0, ISP_MAX_SIZES, OPTF_NONEMPTY, OFF(isp.sizes),
	 .count_off = offsetof(struct opts, isp.nsizes), .group = G_ISP,
	 .wants = "GLOB:argN or GLOB:strlen(argN)",
	 .help = "routines matching GLOB take their size from their\n"
		 "Nth integer argument (from 0; x86-64: rdi, rsi,\n"
		 "rdx, rcx, r8, r9), or with GLOB:strlen(argN) from\n"
		 "the length of that string (read up to 4095 bytes),\n"
		 "read by the entry probe: ~70 ns more per call of\n"
		 "those functions, none for the others (repeatable)"},
	{"plots", 0, OPT_STR, "DIR", 0, 0, OPTF_NONEMPTY | OPTF_OFFLINE, OFF(isp.plots_dir),
	 .group = G_ISP, .wants = "a directory",
	 .help = "one SVG per routine with 2+ sizes in DIR (created\n"
		 "if absent): the cost plot (each size's minimum,\n"
		 "average and range, the fitted curve and its band,\n"
		 "log-log axes) and under it the workload plot\n"
		 "(activations per size)"},

	{"sample", 0, OPT_DOUBLE, "P", 0, 100, OPTF_LO_OPEN | OPTF_HI_OPEN | OPTF_PERCENT,
	 OFF(sample_pct), .group = G_SAMPLE,
	 .wants = "a percentage above 0 and below 100 (e.g. 25 or 25%)",
	 .help = "trace P% of the time (\"25\" or \"25%\"): on for\n"
		 "P% of each period, every probe out in between"},
	{"sample-period", 0, OPT_UINT, "MS", 10, 3600000, OFF(sample_period_ms), .group = G_SAMPLE,
	 .wants = "10 to 3600000 (ms)",
	 .help = "the period (default 1000; --budget's: 500).\n"
		 "Taking probes out waits for the kernel (~0.1-0.4 s\n"
		 "here): keep the off-time above that"},
	{"budget", 0, OPT_DOUBLE, "P", 0, 100000, OPTF_LO_OPEN | OPTF_PERCENT, OFF(budget_pct),
	 .group = G_SAMPLE, .wants = "a percentage above 0 (e.g. 25 or 25%: at most 1.25x as slow)",
	 .help = "keep the target's slowdown (its CPU time) under\n"
		 "P% without choosing functions: each function's\n"
		 "calls x its probes' measured cost decide; the\n"
		 "cheap and rare stay exact, the hot and costly are\n"
		 "traced in windows (estimated, 95% interval), the\n"
		 "choice made again every --sample-period. The\n"
		 "report says which counts are exact. A program\n"
		 "shorter than a few periods gets few or no\n"
		 "windows: its hot functions' counts are then\n"
		 "lower bounds (\"at least\")"},
	{"start-disabled", 0, OPT_FLAG, OFF(start_disabled), .group = G_SAMPLE,
	 .help = "attach nothing until SIGUSR1; then SIGUSR1 turns\n"
		 "tracing on, SIGUSR2 off (with --sample, a signal\n"
		 "ends the duty cycle: the user takes over)"},

	{"lossless", 0, OPT_FLAG, OFF(lossless), .group = G_TUNE,
	 .help = "never lose an event: a target thread whose event\n"
		 "fills its CPU's kernel ring past half is stopped\n"
		 "(ptrace, invisible to its parent) until cabbpf has\n"
		 "drained it; the report gives the time it waited.\n"
		 "For a starved or slow cabbpf (e.g. under a CPU\n"
		 "quota); the target runs at cabbpf's pace"},
	{"cab-mode", 0, OPT_CHOICE, "MODE", OFF(cab_mode), .group = G_TUNE,
	 .choices = (const char *const[]){"exhaustive", "sampling", NULL},
	 .wants = "exhaustive or sampling",
	 .help = "the loader -> analyzer hop (CAB buffers): exhaustive\n"
		 "(default: a stalled analyzer makes the loader wait,\n"
		 "nothing is lost) or sampling (never waits: a full\n"
		 "buffer overwrites its oldest chunk, counted)"},
	{"ring-size", 0, OPT_MIB, "MIB", 1, 1024, OPTF_POW2, OFF(ring_bytes), .group = G_TUNE,
	 .wants = "a power of two from 1 to 1024 (MiB)",
	 .help = "kernel ring per CPU, a power of two (default 4)"},
	{"analyzer-threads", 0, OPT_UINT, "N", 1, 64, OFF(analyzer_threads), .flags = OPTF_OFFLINE,
	 .group = G_TUNE, .wants = "1 to 64", .help = "analyzer threads (default 1)"},
	{"times", 0, OPT_CHOICE, "HOW", OFF(times_word), .group = G_TUNE,
	 .choices = (const char *const[]){"sampled", "raw", NULL},
	 .wants = "sampled or raw",
	 .help = "what the times shown are: sampled (default: the\n"
		 "program's own CPU time, its code and its system\n"
		 "calls, a CPU clock sampling each calling context,\n"
		 "probes and their traps left out) or raw (traced\n"
		 "wall time, each call's probes included)"},
	{"times-hz", 0, OPT_UINT, "HZ", 10, 10000, OFF(times_hz), .group = G_TUNE,
	 .wants = "an integer from 10 to 10000",
	 .help = "--times sampled: samples per second of CPU time\n"
		 "(default 1000; more are finer and cost more)"},
	{"no-times", 0, OPT_FLAG, OFF(no_times), .group = G_TUNE,
	 .help = "take no timestamps: exact counts and call graph,\n"
		 "no inclusive/self times, ~0.1 us less per event"},
	{"floor", 0, OPT_FLAG, OFF(floor), .group = G_TUNE,
	 .help = "attach empty BPF programs on the same sites and\n"
		 "report nothing but time (benchmark baseline)"},
	{"bpf-stats", 0, OPT_FLAG, OFF(bpf_stats), .group = G_TUNE,
	 .help = "measure the BPF programs' own run time (the\n"
		 "kernel's per-program statistics, on for this run\n"
		 "only; they add ~20-40 ns to each program run) and\n"
		 "report ns per run of each, on stderr and in --json"},
	{"no-guard", 0, OPT_FLAG, OFF(no_guard), .group = G_TUNE,
	 .help = "do not watch the unwinder and stack switches as\n"
		 "the target's ptrace tracer. Only for programs\n"
		 "that never throw, unwind or switch stacks: a\n"
		 "C++ exception through a traced frame then\n"
		 "kills the target (docs/guard.md)"},
	{"features", 0, OPT_FLAG, OFF(features), .group = G_TUNE,
	 .help = "print what this kernel offers cabbpf (release, BTF,\n"
		 "lockdown, each BPF feature cabbpf uses: present or\n"
		 "not, and what its absence costs; --json FILE too),\n"
		 "and exit"},
	{"help", 'h', OPT_HELP, .flags = OPTF_OFFLINE | OPTF_REPLAY, .group = G_TUNE,
	 .help = "this help"},
	{"version", 'V', OPT_VERSION, .group = G_TUNE, .help = "version"},

	{"io", 0, OPT_FLAG, OFF(io), .group = G_IO,
	 .help = "no function tracing: per process, per cgroup and\n"
		 "per container, the input and output system calls\n"
		 "(read/recv.../write/send... families; sendfile,\n"
		 "splice, copy_file_range on both sides: '<' input\n"
		 "from the source fd, '>' output to the destination;\n"
		 "vmsplice) by syscall and fd kind, size histograms,\n"
		 "short reads, top files and sockets; every process\n"
		 "unless -p PID. Runs until Ctrl-C or -d; watching\n"
		 "~0.2 s after start (-v says when). Not seen:\n"
		 "io_uring, mmap'd files, 32-bit processes"},
	{"interval", 'i', OPT_DOUBLE, "SECONDS", 0.1, 86400.0, OFF(interval), .group = G_IO,
	 .wants = "a number of seconds from 0.1 to 86400",
	 .help = "with --io: print the figures every SECONDS"},
	{"io-keep", 0, OPT_UINT, "N", 2, 100000000, OFF(io_keep), .group = G_IO,
	 .wants = "a number of processes from 2 to 100000000",
	 .help = "with --io: keep the figures of at most N ended\n"
		 "processes one by one (default 10000, ~4 KB each);\n"
		 "past that, the half with the least I/O is counted\n"
		 "in its command's row (\"commands\") only: long runs\n"
		 "on busy machines stay bounded"},
	{"cgroup", 0, OPT_STR, "PATH", 0, 0, OPTF_NONEMPTY, OFF(cgroup), .group = G_IO,
	 .wants = "a cgroup v2 directory",
	 .help = "only tasks in cgroup v2 directory PATH and its\n"
		 "descendants (filtered in the kernel); any mode.\n"
		 "With -- COMMAND, COMMAND is started inside PATH;\n"
		 "alone: every process of it (Target, above)"},
	{"container", 0, OPT_STR, "ID|NAME", 0, 0, OPTF_NONEMPTY, OFF(container), .group = G_IO,
	 .wants = "a container id or name",
	 .help = "only the container ID (docker, containerd/CRI,\n"
		 "podman; a unique prefix of the id is enough) or\n"
		 "NAME (podman, docker: read from their state\n"
		 "files); with -p, PID must be in it; alone: every\n"
		 "process of it (Target, above)"},

	{"filter", 'F', OPT_STRS, "GLOB", 0, OPTS_MAX_REPLAY_GLOBS, OPTF_NONEMPTY | OPTF_REPLAY_ONLY,
	 OFF(replay_only), .count_off = offsetof(struct opts, nreplay_only), .group = G_REPLAY,
	 .wants = "a non-empty pattern",
	 .help = "show only the calls of functions matching GLOB\n"
		 "and what they call (repeatable)"},
	{"time-range", 0, OPT_STR, "FROM,TO", 0, 0, OPTF_NONEMPTY | OPTF_REPLAY_ONLY, OFF(time_range),
	 .group = G_REPLAY, .wants = "FROM,TO: durations from the first event (1.5s,2s; 100ms,; ,2s)",
	 .help = "show the calls that began between FROM and TO,\n"
		 "durations from the first event (START_S 0):\n"
		 "'1.5s,2s', '100ms,' (to the end), ',2s'"},
	{"tid", 0, OPT_UINT, "TID", 1, 4194304, OFF(replay_tid), .flags = OPTF_REPLAY_ONLY,
	 .group = G_REPLAY, .wants = "a thread id",
	 .help = "show thread TID's calls only"},
};
const size_t opts__ntable = sizeof(opts__table) / sizeof(opts__table[0]);

static void set_defaults(struct opts *o)
{
	memset(o, 0, sizeof(*o));
	views__init(&o->view);
	/* 4 MiB: 65,536 events, ~0.1 s of a CPU's events at the probes'
	 * fastest (~0.7 M a second), against the loader's 2 ms rounds. Not
	 * more: each event's slot is a cache line last touched a lap ago, and
	 * a ring that outgrows the caches makes every event dearer (nop5
	 * probes, PVM guest, 2026-11-27: 141-153 ns per event net of empty
	 * programs at 1-4 MiB, 197 at 16, 323 at 128; the loader 57-87 ns
	 * against 87-148 at 16). --lossless for a machine too busy for it. */
	o->ring_bytes = 4UL << 20;
	o->analyzer_threads = 1;
}

/* "-x" when the option has a short form, else "--name": as users type it. */
static const char *flag_name(const struct opt_def *d, char *buf, size_t len)
{
	if (d->short_name)
		snprintf(buf, len, "-%c", d->short_name);
	else
		snprintf(buf, len, "--%s", d->name);
	return buf;
}

/* Store arg (NULL for flags) as row d says. Returns 0, or -EINVAL after
 * saying what the option wants. */
static int store(const struct opt_def *d, const char *arg, struct opts *o)
{
	char *field = (char *)o + d->off;
	unsigned long v = 0;
	double x = 0;
	char name[64];
	size_t *count;
	int err = 0;

	if ((d->flags & OPTF_NONEMPTY) && arg && !*arg) {
		log_err("%s wants %s", flag_name(d, name, sizeof(name)), d->wants);
		return -EINVAL;
	}
	switch (d->type) {
	case OPT_FLAG:
		*(bool *)field = true;
		return 0;
	case OPT_STR:
		*(const char **)field = arg;
		return 0;
	case OPT_CHOICE:
		for (size_t i = 0; d->choices[i]; i++)
			if (!strcmp(arg, d->choices[i])) {
				*(const char **)field = d->choices[i];
				return 0;
			}
		log_err("%s wants %s, not '%s'", flag_name(d, name, sizeof(name)), d->wants, arg);
		return -EINVAL;
	case OPT_STRS:
		count = (size_t *)((char *)o + d->count_off);
		if (*count >= (size_t)d->hi) {
			log_err("at most %zu %s patterns", (size_t)d->hi,
				flag_name(d, name, sizeof(name)));
			return -EINVAL;
		}
		((const char **)field)[(*count)++] = arg;
		return 0;
	case OPT_PID:
	case OPT_UINT:
	case OPT_MIB:
		err = opts__parse_ulong(arg, d->lo, d->hi, &v);
		if (!err && (d->flags & OPTF_POW2) && (v & (v - 1)))
			err = -EINVAL;
		break;
	case OPT_DOUBLE:
		err = opts__parse_double(d, arg, &x);
		break;
	case OPT_NS:
		err = opts__parse_ns(d, arg, (uint64_t *)field);
		break;
	default:
		return 0;
	}
	if (err) {
		log_err("%s wants %s, not '%s'", flag_name(d, name, sizeof(name)), d->wants, arg);
		return -EINVAL;
	}
	if (d->type == OPT_PID)
		*(pid_t *)field = (pid_t)v;
	else if (d->type == OPT_UINT)
		*(unsigned *)field = (unsigned)v;
	else if (d->type == OPT_MIB)
		*(size_t *)field = (size_t)v << 20;
	else if (d->type == OPT_DOUBLE)
		*(double *)field = x;
	return 0;
}

/* getopt_long's val for row i: its short name, or 256 + i. */
static int row_val(size_t i)
{
	return opts__table[i].short_name ? opts__table[i].short_name : 256 + (int)i;
}

int opts__parse_mode(enum opts_mode mode, int argc, char **argv, struct opts *o)
{
	struct option longopts[sizeof(opts__table) / sizeof(opts__table[0]) + 1];
	/* '+': stop at the first non-option so "-- cmd -x" keeps -x for cmd. */
	char shorts[2 * sizeof(opts__table) / sizeof(opts__table[0]) + 2] = "+";
	size_t i, nl = 0, ns = 1;
	int c;

	/* report FILE -a count: options may follow the file (getopt permutes
	 * argv); there is no command whose options must be kept. */
	if (mode >= OPTS_REPORT)
		ns = 0; /* no leading '+' */

	set_defaults(o);
	o->mode = mode;
	for (i = 0; i < opts__ntable; i++) {
		const struct opt_def *d = &opts__table[i];

		if (d->type == OPT_NOTE)
			continue;
		longopts[nl++] = (struct option){d->name, d->arg ? required_argument : no_argument,
						 NULL, row_val(i)};
		if (d->short_name) {
			shorts[ns++] = d->short_name;
			if (d->arg)
				shorts[ns++] = ':';
		}
	}
	memset(&longopts[nl], 0, sizeof(longopts[nl]));
	shorts[ns] = 0;
	opterr = 0;
	optind = 0; /* glibc: start afresh (tests parse many argvs) */
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		const struct opt_def *d = NULL;

		for (i = 0; i < opts__ntable && !d; i++)
			if (opts__table[i].type != OPT_NOTE && row_val(i) == c)
				d = &opts__table[i];
		if (!d) { /* '?': getopt_long found no such option, or no argument */
			if (optopt && optopt < 256)
				log_err("unknown option '-%c' or missing argument (see cabbpf "
					"--help)",
					optopt);
			else
				log_err("unknown option '%s' or missing argument (see cabbpf "
					"--help)",
					argv[optind - 1]);
			return -EINVAL;
		}
		/* report and dump act on a recording: tracing options have no
		 * sense there. */
		if ((mode == OPTS_REPORT && !(d->flags & OPTF_OFFLINE)) ||
		    (mode == OPTS_DUMP && d->type != OPT_HELP) ||
		    (mode == OPTS_REPLAY && !(d->flags & (OPTF_REPLAY | OPTF_REPLAY_ONLY)))) {
			char name[64];

			log_err("%s is not an option of cabbpf %s (see cabbpf %s --help)",
				flag_name(d, name, sizeof(name)), argv[0], argv[0]);
			return -EINVAL;
		}
		if (mode != OPTS_REPLAY && (d->flags & OPTF_REPLAY_ONLY)) {
			char name[64];

			log_err("%s is an option of cabbpf replay FILE (see cabbpf replay --help)",
				flag_name(d, name, sizeof(name)));
			return -EINVAL;
		}
		if (d->type == OPT_HELP) {
			opts__print_help_mode(mode, stdout);
			return 1;
		}
		if (d->type == OPT_VERSION) {
			printf("cabbpf %s\n", CABBPF_VERSION);
			return 1;
		}
		if (store(d, d->arg ? optarg : NULL, o))
			return -EINVAL;
	}
	if (mode >= OPTS_REPORT && optind < argc) {
		o->input_path = argv[optind++];
		if (optind < argc) {
			log_err("cabbpf %s reads one recording: '%s' is one too many", argv[0],
				argv[optind]);
			return -EINVAL;
		}
	} else if (optind < argc) {
		o->cmd = &argv[optind];
	}
	if (mode == OPTS_RECORD) { /* -o is the recording, not the text report */
		o->record_path = o->output_path;
		o->output_path = NULL;
	}
	if (o->time_range && opts__parse_range(o)) {
		log_err("--time-range wants FROM,TO: durations from the first event (1.5s,2s; "
			"100ms,; ,2s), FROM before TO, not '%s'",
			o->time_range);
		return -EINVAL;
	}
	return opts__check_combination(o);
}

int opts__parse(int argc, char **argv, struct opts *o)
{
	return opts__parse_mode(OPTS_LIVE, argc, argv, o);
}

/* One entry: the left column (label) padded to 24, then the help text,
 * its later lines under its first. */
static void print_entry(FILE *out, const char *label, const char *help)
{
	const char *nl;

	fprintf(out, "  %-24s ", label);
	while ((nl = strchr(help, '\n'))) {
		fprintf(out, "%.*s\n%27s", (int)(nl - help), help, "");
		help = nl + 1;
	}
	fprintf(out, "%s\n", help);
}

void opts__print_help_mode(enum opts_mode mode, FILE *out)
{
	const char *group = NULL;
	char label[64];
	size_t i;

	if (mode == OPTS_DUMP) {
		fputs(help_dump, out);
		return;
	}
	fputs(mode == OPTS_RECORD   ? help_head_record
	      : mode == OPTS_REPORT ? help_head_report
	      : mode == OPTS_REPLAY ? help_head_replay
				    : help_head,
	      out);
	for (i = 0; i < opts__ntable; i++) {
		const struct opt_def *d = &opts__table[i];

		if (mode == OPTS_REPORT && !(d->flags & OPTF_OFFLINE))
			continue;
		if (mode == OPTS_REPLAY && !(d->flags & (OPTF_REPLAY | OPTF_REPLAY_ONLY)))
			continue;
		/* the main --help lists them under their heading, which says
		 * where they belong */
		if (mode == OPTS_RECORD && (d->flags & OPTF_REPLAY_ONLY))
			continue;

		if (d->group != group) {
			fprintf(out, "%s%s:\n", group ? "\n" : "", d->group);
			group = d->group;
		}
		if (d->type == OPT_NOTE)
			snprintf(label, sizeof(label), "%s", d->label);
		else if (d->short_name)
			snprintf(label, sizeof(label), "-%c, --%s%s%s", d->short_name, d->name,
				 d->arg ? " " : "", d->arg ? d->arg : "");
		else
			snprintf(label, sizeof(label), "    --%s%s%s", d->name, d->arg ? " " : "",
				 d->arg ? d->arg : "");
		print_entry(out, label,
			    mode == OPTS_REPLAY && d->replay_help ? d->replay_help : d->help);
	}
	fputs("\n", out);
	if (mode == OPTS_LIVE)
		fputs(help_tail, out);
}

void opts__print_help(FILE *out)
{
	opts__print_help_mode(OPTS_LIVE, out);
}
