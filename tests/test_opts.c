// SPDX-License-Identifier: BSD-2-Clause
/*
 * The option parser (user/cli/opts.c): every table row parsed, short and
 * long forms alike, ranges and their error messages, unknown options and
 * missing arguments, the checks between options, and --help derived from
 * the table. No privileges needed.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/cli/opts.h"

#define MAX_ARGS 600

/* What one opts__parse call did: its return, and what it wrote on
 * stdout and stderr. */
struct parsed {
	int ret;
	struct opts o;
	char out[32768]; /* --help is 16.7 KB */
	char err[4096];
};

/* Read back fd's file (rewound) into buf. */
static void slurp(int fd, char *buf, size_t len)
{
	ssize_t n;

	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	n = read(fd, buf, len - 1);
	ck_assert_int_ge(n, 0);
	buf[n] = 0;
}

/* The subcommand parse_v parses as (main.c's table), and its argv[0]. */
static enum opts_mode parse_mode = OPTS_LIVE;
static char *parse_argv0 = "cabbpf";

/* opts__parse on argv[] = {"cabbpf", args..., NULL}, with stdout and
 * stderr captured. args stay alive (struct opts points into them). */
static void parse_v(struct parsed *p, int argc, char **args)
{
	static char *argv[MAX_ARGS + 2];
	char tout[] = "/tmp/cabbpf-opts-out.XXXXXX", terr[] = "/tmp/cabbpf-opts-err.XXXXXX";
	int fo = mkstemp(tout), fe = mkstemp(terr), so, se, i;

	ck_assert(fo >= 0 && fe >= 0 && argc <= MAX_ARGS);
	unlink(tout);
	unlink(terr);
	argv[0] = parse_argv0;
	for (i = 0; i < argc; i++)
		argv[i + 1] = args[i];
	argv[argc + 1] = NULL;
	fflush(stdout);
	fflush(stderr);
	so = dup(1);
	se = dup(2);
	dup2(fo, 1);
	dup2(fe, 2);
	p->ret = parse_mode == OPTS_LIVE ? opts__parse(argc + 1, argv, &p->o)
					 : opts__parse_mode(parse_mode, argc + 1, argv, &p->o);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	slurp(fo, p->out, sizeof(p->out));
	slurp(fe, p->err, sizeof(p->err));
	close(fo);
	close(fe);
}

/* parse(p, "-p", "1", NULL) */
static void parse(struct parsed *p, ...)
{
	static char *args[MAX_ARGS];
	va_list ap;
	int n = 0;
	char *a;

	va_start(ap, p);
	while ((a = va_arg(ap, char *)))
		args[n++] = a;
	va_end(ap);
	parse_v(p, n, args);
}

/* A usage error with exactly this message. */
#define ASSERT_USAGE(p, msg)                                                                       \
	do {                                                                                       \
		ck_assert_int_eq((p)->ret, -EINVAL);                                               \
		ck_assert_str_eq((p)->err, "cabbpf: error: " msg "\n");                            \
		ck_assert_str_eq((p)->out, "");                                                    \
	} while (0)

#define ASSERT_OK(p)                                                                               \
	do {                                                                                       \
		ck_assert_msg((p)->ret == 0, "ret %d: %s", (p)->ret, (p)->err);                    \
		ck_assert_str_eq((p)->err, "");                                                    \
		ck_assert_str_eq((p)->out, "");                                                    \
	} while (0)

START_TEST(defaults)
{
	struct parsed p;

	parse(&p, "-p", "42", NULL);
	ASSERT_OK(&p);
	ck_assert_int_eq(p.o.pid, 42);
	ck_assert_ptr_null(p.o.cmd);
	ck_assert_uint_eq(p.o.nfuncs, 0);
	ck_assert_ptr_null(p.o.analyzers);
	ck_assert_ptr_null(p.o.json_path);
	ck_assert(p.o.duration == 0);
	ck_assert_uint_eq(p.o.ring_bytes, 4UL << 20);
	ck_assert_uint_eq(p.o.analyzer_threads, 1);
	ck_assert(!p.o.list && !p.o.floor && !p.o.no_times && !p.o.no_guard && !p.o.plan &&
		  !p.o.no_shift && !p.o.no_callsites && !p.o.entry_only && !p.o.io && !p.o.quiet &&
		  !p.o.verbose);
	ck_assert(p.o.interval == 0);
	ck_assert_ptr_null(p.o.cgroup);
	ck_assert_ptr_null(p.o.container);
}
END_TEST

/* Every function-tracing option at once, each to a value that is not its
 * default, and the command after --. */
START_TEST(every_option_exact)
{
	struct parsed p;

	parse(&p, "-f", "parse_*", "--func", "libc:malloc", "-l", "--plan", "--no-shift",
	      "--entry-only", "--no-callsites", "-a", "count,io", "-j", "out.json", "-d", "2.5",
	      "-q", "-v", "--ring-size", "64", "--analyzer-threads", "3", "--no-times", "--floor",
	      "--no-guard", "--cgroup", "/sys/fs/cgroup/app", "--", "./prog", "-x", "arg", NULL);
	ASSERT_OK(&p);
	ck_assert_int_eq(p.o.pid, 0);
	ck_assert_uint_eq(p.o.nfuncs, 2);
	ck_assert_str_eq(p.o.funcs[0], "parse_*");
	ck_assert_str_eq(p.o.funcs[1], "libc:malloc");
	ck_assert(p.o.list && p.o.plan && p.o.no_shift && p.o.entry_only && p.o.no_callsites);
	ck_assert_str_eq(p.o.analyzers, "count,io");
	ck_assert_str_eq(p.o.json_path, "out.json");
	ck_assert(p.o.duration == 2.5);
	ck_assert(p.o.quiet && p.o.verbose);
	ck_assert_uint_eq(p.o.ring_bytes, 64UL << 20);
	ck_assert_uint_eq(p.o.analyzer_threads, 3);
	ck_assert(p.o.no_times && p.o.floor && p.o.no_guard && !p.o.io);
	ck_assert_str_eq(p.o.cgroup, "/sys/fs/cgroup/app");
	ck_assert_ptr_nonnull(p.o.cmd);
	ck_assert_str_eq(p.o.cmd[0], "./prog");
	ck_assert_str_eq(p.o.cmd[1], "-x"); /* '+': options after the command are its own */
	ck_assert_str_eq(p.o.cmd[2], "arg");
	ck_assert_ptr_null(p.o.cmd[3]);

	parse(&p, "--io", "--pid", "7", "--interval", "0.1", "--container", "3f2a9c", "--duration",
	      "31536000", NULL);
	ASSERT_OK(&p);
	ck_assert(p.o.io);
	ck_assert_int_eq(p.o.pid, 7);
	ck_assert(p.o.interval == 0.1);
	ck_assert_str_eq(p.o.container, "3f2a9c");
	ck_assert(p.o.duration == 31536000.0);
	ck_assert_ptr_null(p.o.cmd);

	/* Range ends are in range. */
	parse(&p, "--ring-size", "1", "--analyzer-threads", "64", "-p", "2147483647", NULL);
	ASSERT_OK(&p);
	ck_assert_uint_eq(p.o.ring_bytes, 1UL << 20);
	ck_assert_uint_eq(p.o.analyzer_threads, 64);
	ck_assert_int_eq(p.o.pid, INT_MAX);
	parse(&p, "--ring-size", "1024", "--io", "-i", "86400", NULL);
	ASSERT_OK(&p);
	ck_assert_uint_eq(p.o.ring_bytes, 1024UL << 20);
	ck_assert(p.o.interval == 86400.0);
}
END_TEST

/* Bytes of a row's field in struct opts. */
static size_t field_size(const struct opt_def *d)
{
	switch (d->type) {
	case OPT_FLAG:
		return sizeof(bool);
	case OPT_STR:
	case OPT_CHOICE:
		return sizeof(const char *);
	case OPT_PID:
		return sizeof(pid_t);
	case OPT_UINT:
		return sizeof(unsigned);
	case OPT_MIB:
		return sizeof(size_t);
	case OPT_DOUBLE:
		return sizeof(double);
	case OPT_NS:
		return sizeof(uint64_t);
	default:
		return 0;
	}
}

/* The value a row's test gives its option: not the default of any. */
static const char *value_for(const struct opt_def *d, char *buf, size_t len)
{
	switch (d->type) {
	case OPT_PID:
	case OPT_UINT:
	case OPT_MIB:
	case OPT_DOUBLE:
		/* an open upper end: a value inside the range */
		snprintf(buf, len, "%.17g", d->flags & OPTF_HI_OPEN ? (d->lo + d->hi) / 2 : d->hi);
		return buf;
	case OPT_STR:
	case OPT_STRS:
		/* --size's rule has a syntax (GLOB:argN), --time-range its,
		 * --args its (GLOB:ITEM,...) */
		if (d->name && !strcmp(d->name, "time-range"))
			return "1s,2s";
		if (d->name && !strcmp(d->name, "args"))
			return "x:int(arg0),str(arg1)";
		return d->name && !strcmp(d->name, "size") ? "x:arg0" : "x";
	case OPT_NS:
		return "1.5s";
	case OPT_CHOICE: /* the last choice: not a default */
		for (size_t i = 0; d->choices[i]; i++)
			if (!d->choices[i + 1])
				return d->choices[i];
		return NULL;
	default:
		return NULL;
	}
}

/* Every row of the table, by its long name and by its short one: parsed
 * (beside --io, which every option may join), and its field moved away from
 * the default; both forms give the same result. */
START_TEST(every_row_parsed)
{
	struct parsed def, p, q;
	char val[64], lname[64], sname[4];
	size_t i, checked = 0;

	parse(&def, "--io", NULL);
	ASSERT_OK(&def);
	for (i = 0; i < opts__ntable; i++) {
		const struct opt_def *d = &opts__table[i];
		const char *v = value_for(d, val, sizeof(val));
		char *args[4] = {"--io", lname, (char *)v, NULL};
		/* Sampling toggles function tracing: not with --io. Its rows
		 * join a function trace with a duty cycle instead. */
		char *sargs[8] = {"-p", "1", "--sample", "10", lname, (char *)v, NULL};
		bool sampling = d->group && strstr(d->group, "Sampling");
		/* The isp analyzer's rows shape a function trace that selects it. */
		char *iargs[8] = {"-p", "1", "-a", "isp", lname, (char *)v, NULL};
		bool isp = d->group && strstr(d->group, "(the isp analyzer");
		/* --lossless is for exhaustive function tracing, --bpf-stats
		 * measures its probes: with -p. */
		char *largs[4] = {"-p", "1", lname, NULL};
		bool lossless =
			d->name && (!strcmp(d->name, "lossless") || !strcmp(d->name, "bpf-stats"));
		/* --budget chooses its own windows: with -p, without --sample. */
		char *bargs[5] = {"-p", "1", lname, (char *)v, NULL};
		bool budget = d->name && !strcmp(d->name, "budget");
		/* --follow-exec and --follow-forks follow a command cabbpf
		 * launches. */
		char *cargs[5] = {lname, "--", "/bin/true", NULL};
		bool launch = d->name &&
			      (!strcmp(d->name, "follow-exec") || !strcmp(d->name, "follow-forks"));
		/* The slow calls' rows list the latency analyzer's: a
		 * function trace, --slowest with --slower-than. */
		char *wargs[8] = {"-p", "1", "--slower-than", "10ms", lname, (char *)v, NULL};
		/* so do the rows of values (--args, --retval): they show
		 * in that list */
		bool slow = d->name && (!strcmp(d->name, "slower-than") || !strcmp(d->name, "slowest") ||
					!strcmp(d->name, "args") || !strcmp(d->name, "retval"));
		/* cabbpf replay's own rows: with its FILE. */
		char *rpargs[4] = {"rec.cbr", lname, (char *)v, NULL};
		bool replay = d->flags & OPTF_REPLAY_ONLY;
		/* --features stands alone. */
		char *fargs[2] = {lname, NULL};
		bool alone = d->name && !strcmp(d->name, "features");

		if (d->type == OPT_NOTE || d->type == OPT_HELP || d->type == OPT_VERSION)
			continue;
		ck_assert_ptr_nonnull(d->name);
		ck_assert_msg(d->help && *d->help, "--%s has no help", d->name);
		ck_assert_msg(!d->arg == (d->type == OPT_FLAG), "--%s: argument name", d->name);
		ck_assert_msg(d->type == OPT_FLAG || d->type == OPT_STR || d->wants,
			      "--%s: no error text", d->name);
		if (!strcmp(d->name, "io")) { /* the base of the others */
			ck_assert(def.o.io);
			checked++;
			continue;
		}
		snprintf(lname, sizeof(lname), "--%s", d->name);
		if (budget)
			parse_v(&p, 4, bargs);
		else if (alone)
			parse_v(&p, 1, fargs);
		else if (launch)
			parse_v(&p, 3, cargs);
		else if (sampling)
			parse_v(&p, v ? 6 : 5, sargs);
		else if (slow)
			parse_v(&p, v ? 6 : 5, wargs);
		else if (replay) {
			parse_mode = OPTS_REPLAY;
			parse_argv0 = "replay";
			parse_v(&p, v ? 3 : 2, rpargs);
			parse_mode = OPTS_LIVE;
			parse_argv0 = "cabbpf";
		}
		else if (isp)
			parse_v(&p, v ? 6 : 5, iargs);
		else if (lossless)
			parse_v(&p, 3, largs);
		else
			parse_v(&p, v ? 3 : 2, args);
		ck_assert_msg(p.ret == 0, "--%s %s: %s", d->name, v ? v : "", p.err);
		if (d->type == OPT_STRS) {
			size_t n = *(size_t *)((char *)&p.o + d->count_off);

			ck_assert_uint_eq(n, 1);
			ck_assert_str_eq(((const char **)((char *)&p.o + d->off))[0], v);
		} else {
			/* the field's bytes differ from the default's (any type) */
			const char *a = (char *)&p.o + d->off, *b = (char *)&def.o + d->off;

			ck_assert_msg(memcmp(a, b, field_size(d)), "--%s changed nothing", d->name);
		}
		if (d->short_name) {
			snprintf(sname, sizeof(sname), "-%c", d->short_name);
			args[1] = sname;
			rpargs[1] = sname;
			if (replay) {
				parse_mode = OPTS_REPLAY;
				parse_argv0 = "replay";
			}
			parse_v(&q, v ? 3 : 2, replay ? rpargs : args);
			parse_mode = OPTS_LIVE;
			parse_argv0 = "cabbpf";
			ck_assert_int_eq(q.ret, 0);
			ck_assert_msg(!memcmp(&p.o, &q.o, sizeof(p.o)), "-%c and --%s differ",
				      d->short_name, d->name);
		}
		checked++;
	}
	ck_assert_uint_ge(checked, 21); /* the options of today, at least */
}
END_TEST

START_TEST(range_errors)
{
	struct parsed p;

	parse(&p, "-p", "0", NULL);
	ASSERT_USAGE(&p, "-p wants a process id (a positive integer), not '0'");
	parse(&p, "-p", "2147483648", NULL);
	ASSERT_USAGE(&p, "-p wants a process id (a positive integer), not '2147483648'");
	parse(&p, "--pid", "-5", NULL);
	ASSERT_USAGE(&p, "-p wants a process id (a positive integer), not '-5'");
	parse(&p, "-p", "12x", NULL);
	ASSERT_USAGE(&p, "-p wants a process id (a positive integer), not '12x'");
	parse(&p, "-p", "", NULL);
	ASSERT_USAGE(&p, "-p wants a process id (a positive integer), not ''");
	parse(&p, "-f", "", "-p", "1", NULL);
	ASSERT_USAGE(&p, "-f wants a non-empty pattern");
	parse(&p, "-d", "0", "-p", "1", NULL);
	ASSERT_USAGE(&p, "-d wants a positive number of seconds, not '0'");
	parse(&p, "-d", "-1", "-p", "1", NULL);
	ASSERT_USAGE(&p, "-d wants a positive number of seconds, not '-1'");
	parse(&p, "-d", "31536000.5", "-p", "1", NULL);
	ASSERT_USAGE(&p, "-d wants a positive number of seconds, not '31536000.5'");
	parse(&p, "-d", "inf", "-p", "1", NULL);
	ASSERT_USAGE(&p, "-d wants a positive number of seconds, not 'inf'");
	parse(&p, "-d", "nan", "-p", "1", NULL);
	ASSERT_USAGE(&p, "-d wants a positive number of seconds, not 'nan'");
	parse(&p, "--duration", "1s", "-p", "1", NULL);
	ASSERT_USAGE(&p, "-d wants a positive number of seconds, not '1s'");
	parse(&p, "--ring-size", "3", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--ring-size wants a power of two from 1 to 1024 (MiB), not '3'");
	parse(&p, "--ring-size", "0", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--ring-size wants a power of two from 1 to 1024 (MiB), not '0'");
	parse(&p, "--ring-size", "2048", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--ring-size wants a power of two from 1 to 1024 (MiB), not '2048'");
	parse(&p, "--analyzer-threads", "0", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--analyzer-threads wants 1 to 64, not '0'");
	parse(&p, "--analyzer-threads", "65", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--analyzer-threads wants 1 to 64, not '65'");
	parse(&p, "--io", "-i", "0.09", NULL);
	ASSERT_USAGE(&p, "-i wants a number of seconds from 0.1 to 86400, not '0.09'");
	parse(&p, "--io", "--interval", "86401", NULL);
	ASSERT_USAGE(&p, "-i wants a number of seconds from 0.1 to 86400, not '86401'");
	parse(&p, "--cgroup", "", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--cgroup wants a cgroup v2 directory");
	parse(&p, "--container", "", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--container wants a container id or name");
	parse(&p, "--slower-than", "10 ms", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--slower-than wants a duration such as 10ms, 1.5s, 200us (a bare number: "
			 "ms), not '10 ms'");
	parse(&p, "--slower-than", "0", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--slower-than wants a duration such as 10ms, 1.5s, 200us (a bare number: "
			 "ms), not '0'");
	parse(&p, "--slower-than", "-1ms", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--slower-than wants a duration such as 10ms, 1.5s, 200us (a bare number: "
			 "ms), not '-1ms'");
	parse(&p, "--slower-than", "2h", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--slower-than wants a duration such as 10ms, 1.5s, 200us (a bare number: "
			 "ms), not '2h'");
	parse(&p, "--slower-than", "10ms", "--slowest", "0", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--slowest wants an integer from 1 to 100000, not '0'");
}
END_TEST

/* --slower-than's durations, each unit to ns. */
START_TEST(durations)
{
	static const struct {
		const char *arg;
		uint64_t ns;
	} cases[] = {{"800ns", 800},	     {"200us", 200000},	     {"10ms", 10000000},
		     {"1.5s", 1500000000},   {"15", 15000000},	     {"0.5ms", 500000},
		     {"1ns", 1},	     {"1e3us", 1000000}};
	struct parsed p;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		parse(&p, "--slower-than", cases[i].arg, "-p", "1", NULL);
		ASSERT_OK(&p);
		ck_assert_msg(p.o.view.slower_ns == cases[i].ns, "%s: %llu ns", cases[i].arg,
			      (unsigned long long)p.o.view.slower_ns);
		ck_assert_uint_eq(p.o.view.slowest, 0);
	}
	parse(&p, "--slower-than", "1s", "--slowest", "3", "-p", "1", NULL);
	ASSERT_OK(&p);
	ck_assert_uint_eq(p.o.view.slowest, 3);
}
END_TEST

/* OPTS_MAX_FUNCS patterns, and one more. */
START_TEST(too_many_patterns)
{
	static char *args[2 * OPTS_MAX_FUNCS + 4];
	struct parsed p;
	int i, n = 0;

	args[n++] = "-p";
	args[n++] = "1";
	for (i = 0; i < OPTS_MAX_FUNCS; i++) {
		args[n++] = "-f";
		args[n++] = "f*";
	}
	parse_v(&p, n, args);
	ASSERT_OK(&p);
	ck_assert_uint_eq(p.o.nfuncs, OPTS_MAX_FUNCS);
	args[n++] = "-f";
	args[n++] = "g*";
	parse_v(&p, n, args);
	ASSERT_USAGE(&p, "at most 256 -f patterns");
}
END_TEST

START_TEST(unknown_and_missing)
{
	struct parsed p;

	parse(&p, "--bogus-option", "-p", "1", NULL);
	ASSERT_USAGE(&p, "unknown option '--bogus-option' or missing argument (see cabbpf --help)");
	parse(&p, "-z", "-p", "1", NULL);
	ASSERT_USAGE(&p, "unknown option '-z' or missing argument (see cabbpf --help)");
	/* ambiguous prefix */
	parse(&p, "--no", "-p", "1", NULL);
	ASSERT_USAGE(&p, "unknown option '--no' or missing argument (see cabbpf --help)");
	/* a flag given an argument: named by its short form */
	parse(&p, "--list=yes", "-p", "1", NULL);
	ASSERT_USAGE(&p, "unknown option '-l' or missing argument (see cabbpf --help)");
	parse(&p, "-p", NULL);
	ASSERT_USAGE(&p, "unknown option '-p' or missing argument (see cabbpf --help)");
	parse(&p, "-p", "1", "--json", NULL);
	ASSERT_USAGE(&p, "unknown option '-j' or missing argument (see cabbpf --help)");
	parse(&p, "-p", "1", "--ring-size", NULL);
	ASSERT_USAGE(&p, "unknown option '--ring-size' or missing argument (see cabbpf --help)");
	/* The first error wins: the later --help is not reached. */
	parse(&p, "-z", "--help", NULL);
	ASSERT_USAGE(&p, "unknown option '-z' or missing argument (see cabbpf --help)");
}
END_TEST

START_TEST(conflicts)
{
	struct parsed p;

	parse(&p, "-q", NULL);
	ASSERT_USAGE(&p,
		     "nothing to trace: give -p PID, -- COMMAND, or --container NAME / --cgroup "
		     "DIR (every process of it; see cabbpf --help)");
	parse(&p, "-p", "1", "--", "ls", NULL);
	ASSERT_USAGE(&p, "give either -p PID or -- COMMAND, not both");
	parse(&p, "-a", "count,replay", "-p", "1", NULL);
	ASSERT_USAGE(&p, "the replay analyzer is cabbpf replay's: record (cabbpf record -o FILE "
			 "...), then cabbpf replay FILE");
	parse(&p, "--slowest", "5", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--slowest N goes with --slower-than DURATION");
	parse(&p, "--slower-than", "1ms", "-a", "count", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--slower-than lists the latency analyzer's slowest calls: select it (-a "
			 "...,latency), with return probes (no --entry-only, no --io)");
	parse(&p, "--slower-than", "1ms", "--entry-only", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--slower-than lists the latency analyzer's slowest calls: select it (-a "
			 "...,latency), with return probes (no --entry-only, no --io)");
	parse(&p, "--follow-exec", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--follow-exec follows a command cabbpf launches: give -- COMMAND");
	parse(&p, "--follow-forks", NULL);
	ASSERT_USAGE(&p, "--follow-forks follows a command cabbpf launches or a running process: "
			 "give -- COMMAND or -p PID");
	parse(&p, "--follow-forks", "--cgroup", "a", "--", "ls", NULL);
	ASSERT_USAGE(&p, "--follow-forks traces a command and its children in a cgroup of their "
			 "own: not with --cgroup or --container (alone, they trace every process "
			 "of it)");
	parse(&p, "--follow-forks", "--follow-exec", "--", "ls", NULL);
	ASSERT_USAGE(&p, "--follow-forks traces every program the command execs already: not with "
			 "--follow-exec");
	parse(&p, "--follow-forks", "--lossless", "--", "ls", NULL);
	ASSERT_USAGE(&p, "--lossless holds one process's threads: not with a whole container (give "
			 "-p PID)");
	parse(&p, "-p", "1", "--cgroup", "a", "--container", "b", NULL);
	ASSERT_USAGE(&p, "give either --cgroup or --container, not both");
	parse(&p, "-p", "1", "-i", "1", NULL);
	ASSERT_USAGE(&p, "-i works with --io only");
	parse(&p, "--io", "--", "ls", NULL);
	ASSERT_USAGE(&p, "--io watches running processes: give -p PID or no target");
	parse(&p, "--entry-only", "-a", "count,callgraph", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--entry-only attaches no return probes: the callgraph analyzer needs "
			 "them (use -a count)");
	/* The first rule that fails is the one reported. */
	parse(&p, "--entry-only", "-a", "callgraph", "-p", "1", "--", "ls", NULL);
	ASSERT_USAGE(&p, "--entry-only attaches no return probes: the callgraph analyzer needs "
			 "them (use -a count)");
	/* --entry-only alone implies -a count. */
	parse(&p, "--entry-only", "-p", "1", NULL);
	ASSERT_OK(&p);
	ck_assert_str_eq(p.o.analyzers, "count");
	parse(&p, "--entry-only", "-a", "io", "-p", "1", NULL);
	ASSERT_OK(&p);
	ck_assert_str_eq(p.o.analyzers, "io");
	/* --io needs no target; -p narrows it. */
	parse(&p, "--io", NULL);
	ASSERT_OK(&p);
	ck_assert_int_eq(p.o.pid, 0);
	/* --features needs none either, and takes none: alone, or with --json */
	parse(&p, "--features", NULL);
	ASSERT_OK(&p);
	ck_assert(p.o.features);
	parse(&p, "--features", "--json", "f.json", NULL);
	ASSERT_OK(&p);
	parse(&p, "--features", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--features describes the kernel and exits: give it alone (with --json "
			 "FILE)");
	parse(&p, "--features", "--io", NULL);
	ASSERT_USAGE(&p, "--features describes the kernel and exits: give it alone (with --json "
			 "FILE)");
}
END_TEST

static void as(enum opts_mode mode, char *name);

/* --container or --cgroup alone: every process of it (whole-container
 * tracing); what takes one process only is refused with it. */
START_TEST(whole_container)
{
	struct parsed p;

	parse(&p, "--container", "web", NULL);
	ASSERT_OK(&p);
	ck_assert_str_eq(p.o.container, "web");
	ck_assert_int_eq(p.o.pid, 0);
	ck_assert_ptr_null(p.o.cmd);
	parse(&p, "--cgroup", "/sys/fs/cgroup/unified/app", "-f", "parse_*", "-f", "libc:malloc",
	      "--json", "o.json", NULL);
	ASSERT_OK(&p);
	ck_assert_str_eq(p.o.cgroup, "/sys/fs/cgroup/unified/app");
	ck_assert_uint_eq(p.o.nfuncs, 2);
	parse(&p, "--container", "web", "--entry-only", NULL);
	ASSERT_OK(&p);
	ck_assert_str_eq(p.o.analyzers, "count");
	parse(&p, "--container", "web", "-l", NULL);
	ASSERT_OK(&p);
	parse(&p, "--container", "web", "--lossless", NULL);
	ASSERT_USAGE(&p, "--lossless holds one process's threads: not with a whole container (give "
			 "-p PID)");
	parse(&p, "--cgroup", "d", "--sample", "10", NULL);
	ASSERT_USAGE(&p, "--sample and --start-disabled take one process (-p PID or -- COMMAND), "
			 "not a whole container yet");
	parse(&p, "--cgroup", "d", "--start-disabled", NULL);
	ASSERT_USAGE(&p, "--sample and --start-disabled take one process (-p PID or -- COMMAND), "
			 "not a whole container yet");
	parse(&p, "--container", "web", "--budget", "10", NULL);
	ASSERT_USAGE(&p, "--budget takes one process (-p PID or -- COMMAND), not a whole container "
			 "yet");
	parse(&p, "--container", "web", "-a", "isp", "--size", "f:arg0", NULL);
	ASSERT_USAGE(&p, "--size takes one process (-p PID or -- COMMAND), not a whole container "
			 "yet");
	parse(&p, "--container", "web", "--floor", NULL);
	ASSERT_USAGE(&p, "--floor takes one process (-p PID or -- COMMAND)");
	/* with a target, the options keep their meaning: a filter */
	parse(&p, "--container", "web", "--lossless", "-p", "7", NULL);
	ASSERT_OK(&p);
	parse(&p, "--cgroup", "d", "--sample", "10", "--", "ls", NULL);
	ASSERT_OK(&p);
	parse(&p, "--io", "--container", "web", NULL);
	ASSERT_OK(&p);
}
END_TEST

/* cabbpf record takes one process: not a whole container. */
START_TEST(whole_container_record)
{
	struct parsed p;

	as(OPTS_RECORD, "record");
	parse(&p, "-o", "r.cab", "--container", "web", NULL);
	ASSERT_USAGE(&p, "cabbpf record takes one process (-p PID or -- COMMAND), not a whole "
			 "container yet: trace the container live");
	as(OPTS_LIVE, "cabbpf");
}
END_TEST

/* The isp analyzer's options: they need -a isp with return probes; the
 * --size rule's syntax; --cost's word turned into the enum. */
START_TEST(isp_options)
{
#define NEED                                                                                       \
	"--cost, --size and --plots shape the isp analyzer: select it (-a isp or -a ...,isp), "    \
	"with return probes (no --entry-only)"
	struct parsed p;

	parse(&p, "-p", "1", "--cost", "calls", NULL);
	ASSERT_USAGE(&p, NEED); /* isp is not in the default set */
	parse(&p, "-p", "1", "-a", "count,cct", "--plots", "d", NULL);
	ASSERT_USAGE(&p, NEED);
	parse(&p, "-p", "1", "-a", "isp", "--entry-only", "--size", "f:arg0", NULL);
	ASSERT_USAGE(&p, NEED);
	parse(&p, "-p", "1", "-a", "isp", "--entry-only", NULL);
	ASSERT_USAGE(&p, "--entry-only attaches no return probes: the isp analyzer needs them (a "
			 "point's cost ends at the return)");
	parse(&p, "-p", "1", "-a", "count, isp", "--cost", "calls", NULL);
	ASSERT_OK(&p);
	ck_assert_int_eq(p.o.isp.cost, ISP_COST_CALLS);
	parse(&p, "-p", "1", "-a", "isp", "--cost", "cpu", NULL);
	ASSERT_OK(&p);
	ck_assert_int_eq(p.o.isp.cost, ISP_COST_CPU);
	/* the default: on-CPU time (docs/isp.md) */
	parse(&p, "-p", "1", "-a", "isp", NULL);
	ASSERT_OK(&p);
	ck_assert_int_eq(p.o.isp.cost, ISP_COST_CPU);
	parse(&p, "-p", "1", "-a", "isp", "--cost", "wall", NULL);
	ASSERT_OK(&p);
	ck_assert_int_eq(p.o.isp.cost, ISP_COST_WALL);
	parse(&p, "-p", "1", "-a", "isp", "--cost", "cycles", NULL);
	ASSERT_USAGE(&p, "--cost wants wall, cpu or calls, not 'cycles'");
	parse(&p, "-p", "1", "-a", "isp", "--size", "parse_*:arg2", "--size", "lex:strlen(arg0)",
	      NULL);
	ASSERT_OK(&p);
	ck_assert_uint_eq(p.o.isp.nsizes, 2);
	{
		static const char *const bad[] = {"f",		 "f:arg6",	  "f:arg",
						  ":arg0",	 "f:strlen(arg0", "f:arg0)",
						  "f:strlen(x)", "f:arg01"};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			char msg[160];

			parse(&p, "-p", "1", "-a", "isp", "--size", bad[i], NULL);
			snprintf(msg, sizeof(msg),
				 "--size wants GLOB:argN or GLOB:strlen(argN), N from 0 to 5, not "
				 "'%s'\n",
				 bad[i]);
			ck_assert_int_eq(p.ret, -EINVAL);
			ck_assert_str_eq(p.err + strlen("cabbpf: error: "), msg);
		}
	}
	{
		char glob[8];
		uint8_t spec;

		ck_assert_int_eq(
			isp__parse_size("libz:deflate*:strlen(arg3)", glob, sizeof(glob), &spec),
			-ENAMETOOLONG);
		ck_assert_int_eq(isp__parse_size("a:b:strlen(arg3)", glob, sizeof(glob), &spec), 0);
		ck_assert_str_eq(glob, "a:b");
		ck_assert_uint_eq(spec, ISP_SPEC_ON | ISP_SPEC_STRLEN | 3);
		ck_assert_int_eq(isp__parse_size("g*:arg5", glob, sizeof(glob), &spec), 0);
		ck_assert_uint_eq(spec, ISP_SPEC_ON | 5);
		ck_assert_uint_eq(ISP_SPEC_ARG(spec), 5);
	}
}
END_TEST

/* Sampling: the percentage (with or without '%'), its open range, the
 * period's default and range, and what it cannot join. */
START_TEST(sampling_options)
{
	struct parsed p;

	parse(&p, "--sample", "25%", "-p", "1", NULL);
	ASSERT_OK(&p);
	ck_assert(p.o.sample_pct == 25.0);
	ck_assert_uint_eq(p.o.sample_period_ms, 1000);
	parse(&p, "--sample", "2.5", "--sample-period", "50", "-p", "1", NULL);
	ASSERT_OK(&p);
	ck_assert(p.o.sample_pct == 2.5);
	ck_assert_uint_eq(p.o.sample_period_ms, 50);
	parse(&p, "--sample", "100", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--sample wants a percentage above 0 and below 100 (e.g. 25 or 25%), not "
			 "'100'");
	parse(&p, "--sample", "0", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--sample wants a percentage above 0 and below 100 (e.g. 25 or 25%), not "
			 "'0'");
	parse(&p, "--sample", "%", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--sample wants a percentage above 0 and below 100 (e.g. 25 or 25%), not "
			 "'%'");
	parse(&p, "--sample", "25%%", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--sample wants a percentage above 0 and below 100 (e.g. 25 or 25%), not "
			 "'25%%'");
	parse(&p, "--sample", "5", "--sample-period", "9", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--sample-period wants 10 to 3600000 (ms), not '9'");
	parse(&p, "--sample-period", "100", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--sample-period goes with --sample P or --budget P");
	parse(&p, "--start-disabled", "--io", NULL);
	ASSERT_USAGE(&p, "--sample and --start-disabled toggle function tracing: not with --io, "
			 "--floor, --list or --plan");
	parse(&p, "--sample", "5", "--plan", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--sample and --start-disabled toggle function tracing: not with --io, "
			 "--floor, --list or --plan");
	parse(&p, "--bpf-stats", "--io", NULL);
	ASSERT_USAGE(&p,
		     "--bpf-stats measures the function probes: not with --io, --list or --plan");
	parse(&p, "--bpf-stats", "-p", "1", NULL);
	ASSERT_OK(&p);
	ck_assert(p.o.bpf_stats);
	parse(&p, "--start-disabled", "--sample", "5", "-p", "1", NULL);
	ASSERT_OK(&p);
	ck_assert(p.o.start_disabled);
	/* -o: not with -q, not the --json file */
	parse(&p, "-q", "-o", "r.txt", "-p", "1", NULL);
	ASSERT_USAGE(&p, "-q writes no text report: not with -o FILE");
	parse(&p, "-o", "r.json", "--json", "r.json", "-p", "1", NULL);
	ASSERT_USAGE(&p, "-o and --json name the same file");
	/* the CAB hop's mode: one of two words */
	parse(&p, "--cab-mode", "sampling", "-p", "1", NULL);
	ASSERT_OK(&p);
	ck_assert_str_eq(p.o.cab_mode, "sampling");
	parse(&p, "--cab-mode", "lossy", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--cab-mode wants exhaustive or sampling, not 'lossy'");
	/* --lossless: exhaustive function tracing only */
	parse(&p, "--lossless", "-p", "1", NULL);
	ASSERT_OK(&p);
	ck_assert(p.o.lossless);
	parse(&p, "--lossless", "--sample", "5", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--lossless is for exhaustive function tracing: not with --sample, "
			 "--start-disabled, --io or --floor");
	parse(&p, "--lossless", "--io", NULL);
	ASSERT_USAGE(&p, "--lossless is for exhaustive function tracing: not with --sample, "
			 "--start-disabled, --io or --floor");
	parse(&p, "--lossless", "--cab-mode", "sampling", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--lossless never drops: not with --cab-mode sampling (which overwrites)");
}
END_TEST

/* The --help text (opts__print_help) into a string. */
static char *help_text(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	opts__print_help(f);
	fclose(f);
	return buf;
}

START_TEST(help_lists_every_row)
{
	struct parsed p;
	char *help = help_text(), want[512], first[256];
	const char *line, *nl;
	size_t i;

	ck_assert(!strncmp(help, "Usage: cabbpf [OPTIONS] -p PID\n", 31));
	ck_assert_ptr_nonnull(strstr(help, "\nExamples:\n"));
	ck_assert_ptr_nonnull(strstr(help, "1 when it could not be or ended on an error"));
	ck_assert_ptr_nonnull(strstr(help, "after a trace of -- COMMAND, COMMAND's own"));
	ck_assert_ptr_nonnull(strstr(help, "2 for a usage error.\n"));
	for (i = 0; i < opts__ntable; i++) {
		const struct opt_def *d = &opts__table[i];

		snprintf(first, sizeof(first), "%.*s",
			 (int)(strchr(d->help, '\n') ? strchr(d->help, '\n') - d->help
						     : (long)strlen(d->help)),
			 d->help);
		if (d->type == OPT_NOTE)
			snprintf(want, sizeof(want), "\n  %-24s %s\n", d->label, first);
		else if (d->short_name)
			snprintf(want, sizeof(want), "\n  -%c, --%s%s%s", d->short_name, d->name,
				 d->arg ? " " : "", d->arg ? d->arg : "");
		else
			snprintf(want, sizeof(want), "\n      --%s%s%s ", d->name,
				 d->arg ? " " : "", d->arg ? d->arg : "");
		ck_assert_msg(strstr(help, want), "--help lacks '%s'", want + 1);
		ck_assert_msg(strstr(help, first), "--help lacks '%s'", first);
		snprintf(want, sizeof(want), "\n%s:\n", d->group);
		ck_assert_msg(strstr(help, want), "--help lacks the heading '%s'", d->group);
	}
	/* Fits a terminal: no line over 80 columns. */
	for (line = help; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		ck_assert_ptr_nonnull(nl);
		ck_assert_msg(nl - line <= 80, "long line: %.*s", (int)(nl - line), line);
	}
	/* --help and -h print it on stdout and stop (exit 0), anywhere. */
	parse(&p, "--help", NULL);
	ck_assert_int_eq(p.ret, 1);
	ck_assert_str_eq(p.out, help);
	ck_assert_str_eq(p.err, "");
	parse(&p, "-p", "1", "-h", "--bogus", NULL);
	ck_assert_int_eq(p.ret, 1);
	ck_assert_str_eq(p.out, help);
	free(help);
}
END_TEST

/* Parse as subcommand name (mode) from here on. */
static void as(enum opts_mode mode, char *name)
{
	parse_mode = mode;
	parse_argv0 = name;
}

/* Every line of text fits 80 columns. */
static void assert_fits(const char *text)
{
	const char *line, *nl;

	for (line = text; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		ck_assert_ptr_nonnull(nl);
		ck_assert_msg(nl - line <= 80, "long line: %.*s", (int)(nl - line), line);
	}
}

/* --budget: a percentage above 0 (a slowdown: 100% and more are fine),
 * its period (--sample-period, default 500 ms), and what it cannot join,
 * each refusal saying why. */
START_TEST(budget_options)
{
	struct parsed p;

	parse(&p, "--budget", "25%", "-p", "1", NULL);
	ASSERT_OK(&p);
	ck_assert(p.o.budget_pct == 25.0);
	ck_assert_uint_eq(p.o.sample_period_ms, 500);
	parse(&p, "--budget", "300", "--sample-period", "250", "--", "ls", NULL);
	ASSERT_OK(&p);
	ck_assert(p.o.budget_pct == 300.0);
	ck_assert_uint_eq(p.o.sample_period_ms, 250);
	parse(&p, "--budget", "0", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--budget wants a percentage above 0 (e.g. 25 or 25%: at most 1.25x as "
			 "slow), not '0'");
	parse(&p, "--budget", "-5", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--budget wants a percentage above 0 (e.g. 25 or 25%: at most 1.25x as "
			 "slow), not '-5'");
	parse(&p, "--budget", "lots", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--budget wants a percentage above 0 (e.g. 25 or 25%: at most 1.25x as "
			 "slow), not 'lots'");
	parse(&p, "--budget", "10", "--sample", "10", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--budget chooses what to trace and when: not with --sample or "
			 "--start-disabled");
	parse(&p, "--budget", "10", "--start-disabled", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--budget chooses what to trace and when: not with --sample or "
			 "--start-disabled");
	parse(&p, "--budget", "10", "--lossless", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--budget keeps the target's pace: not with --lossless (which makes it "
			 "wait for cabbpf)");
	parse(&p, "--budget", "10", "--io", NULL);
	ASSERT_USAGE(&p, "--budget is for function tracing: not with --io, --floor, --list or "
			 "--plan");
	parse(&p, "--budget", "10", "--floor", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--budget is for function tracing: not with --io, --floor, --list or "
			 "--plan");
	parse(&p, "--budget", "10", "-l", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--budget is for function tracing: not with --io, --floor, --list or "
			 "--plan");
	as(OPTS_RECORD, "record");
	parse(&p, "-o", "x", "--budget", "10", "-p", "1", NULL);
	ASSERT_USAGE(&p, "cabbpf record does not record --budget's epochs: trace with --budget "
			 "live");
	as(OPTS_REPORT, "report");
	parse(&p, "a.cbr", "--budget", "10", NULL);
	ASSERT_USAGE(&p, "--budget is not an option of cabbpf report (see cabbpf report --help)");
}
END_TEST

/* cabbpf record / report / dump (user/main.c's subcommands). */
/* cabbpf replay FILE: its filters parsed, --time-range's forms, what it
 * refuses; its own rows refused elsewhere, saying where they belong. */
START_TEST(replay_options)
{
	struct parsed p;

	as(OPTS_REPLAY, "replay");
	parse(&p, "run.cbr", "-F", "main", "-F", "parse*", "-N", "tally", "--depth", "3",
	      "--slower-than", "2ms", "--time-range", "1.5s,2s", "--tid", "42", "-o", "f.txt",
	      NULL);
	ASSERT_OK(&p);
	ck_assert_int_eq(p.o.mode, OPTS_REPLAY);
	ck_assert_str_eq(p.o.input_path, "run.cbr");
	ck_assert_uint_eq(p.o.nreplay_only, 2);
	ck_assert_str_eq(p.o.replay_only[1], "parse*");
	ck_assert_uint_eq(p.o.view.nexcludes, 1);
	ck_assert_uint_eq(p.o.view.cct.depth, 3);
	ck_assert_uint_eq(p.o.view.slower_ns, 2000000);
	ck_assert_uint_eq(p.o.range_from_ns, 1500000000);
	ck_assert_uint_eq(p.o.range_to_ns, 2000000000);
	ck_assert_uint_eq(p.o.replay_tid, 42);
	ck_assert_str_eq(p.o.output_path, "f.txt");
	parse(&p, "run.cbr", "--time-range", "100ms,", NULL);
	ASSERT_OK(&p);
	ck_assert_uint_eq(p.o.range_from_ns, 100000000);
	ck_assert_uint_eq(p.o.range_to_ns, 0);
	parse(&p, "run.cbr", "--time-range", ",2", NULL);
	ASSERT_OK(&p);
	ck_assert_uint_eq(p.o.range_from_ns, 0);
	ck_assert_uint_eq(p.o.range_to_ns, 2000000);
	parse(&p, "run.cbr", "--time-range", "2s,1s", NULL);
	ASSERT_USAGE(&p, "--time-range wants FROM,TO: durations from the first event (1.5s,2s; "
			 "100ms,; ,2s), FROM before TO, not '2s,1s'");
	parse(&p, "run.cbr", "--time-range", ",", NULL);
	ASSERT_USAGE(&p, "--time-range wants FROM,TO: durations from the first event (1.5s,2s; "
			 "100ms,; ,2s), FROM before TO, not ','");
	parse(&p, "run.cbr", "--time-range", "1s", NULL);
	ASSERT_USAGE(&p, "--time-range wants FROM,TO: durations from the first event (1.5s,2s; "
			 "100ms,; ,2s), FROM before TO, not '1s'");
	parse(&p, "run.cbr", "-f", "main", NULL);
	ASSERT_USAGE(&p, "-f is not an option of cabbpf replay (see cabbpf replay --help)");
	parse(&p, "run.cbr", "-a", "count", NULL);
	ASSERT_USAGE(&p, "-a is not an option of cabbpf replay (see cabbpf replay --help)");
	parse(&p, "-F", "main", NULL);
	ASSERT_USAGE(&p, "give the recording to replay: cabbpf replay FILE (made by cabbpf record "
			 "-o FILE)");
	parse(&p, "--help", NULL);
	ck_assert_int_eq(p.ret, 1);
	ck_assert(!strncmp(p.out, "Usage: cabbpf replay FILE [OPTIONS]\n", 36));
	ck_assert_ptr_nonnull(strstr(p.out, "\n  -F, --filter GLOB"));
	ck_assert_ptr_nonnull(strstr(p.out, "\n  -N, --exclude GLOB       hide the calls"));
	ck_assert_ptr_null(strstr(p.out, "\n  -p, --pid"));
	assert_fits(p.out);
	as(OPTS_REPORT, "report");
	parse(&p, "run.cbr", "-F", "main", NULL);
	ASSERT_USAGE(&p, "-F is not an option of cabbpf report (see cabbpf report --help)");
	as(OPTS_LIVE, "cabbpf");
	parse(&p, "--tid", "5", "-p", "1", NULL);
	ASSERT_USAGE(&p, "--tid is an option of cabbpf replay FILE (see cabbpf replay --help)");
}
END_TEST

START_TEST(subcommands)
{
	struct parsed p;

	as(OPTS_RECORD, "record");
	parse(&p, "-o", "run.cbr", "-f", "main", "--", "ls", "-l", NULL);
	ASSERT_OK(&p);
	ck_assert_int_eq(p.o.mode, OPTS_RECORD);
	ck_assert_str_eq(p.o.record_path, "run.cbr");
	ck_assert_ptr_null(p.o.output_path); /* -o is the recording */
	ck_assert_str_eq(p.o.cmd[0], "ls");
	ck_assert_str_eq(p.o.cmd[1], "-l");
	parse(&p, "-p", "1", NULL);
	ASSERT_USAGE(&p, "cabbpf record writes a file: give -o FILE (see cabbpf record --help)");
	parse(&p, "-o", "x", "--json", "x", "-p", "1", NULL);
	ASSERT_USAGE(&p, "-o (the recording) and --json name the same file");
	parse(&p, "-o", "x", "--io", NULL);
	ASSERT_USAGE(&p,
		     "cabbpf record traces functions: not with --io, --list, --plan or --floor");
	parse(&p, "-o", "x", "-p", "1", "--sample", "10", NULL);
	ASSERT_USAGE(&p, "cabbpf record does not record sampling windows yet: trace with --sample "
			 "live");
	parse(&p, "--help", NULL);
	ck_assert_int_eq(p.ret, 1);
	ck_assert(!strncmp(p.out, "Usage: cabbpf record -o FILE [OPTIONS] -p PID\n", 46));
	ck_assert_ptr_nonnull(strstr(p.out, "\n  -p, --pid PID"));
	assert_fits(p.out);

	as(OPTS_REPORT, "report");
	parse(&p, "run.cbr", "-a", "count", "--json", "r.json", "-s", "self", NULL);
	ASSERT_OK(&p);
	ck_assert_int_eq(p.o.mode, OPTS_REPORT);
	ck_assert_str_eq(p.o.input_path, "run.cbr");
	ck_assert_str_eq(p.o.analyzers, "count");
	ck_assert_str_eq(p.o.json_path, "r.json");
	ck_assert_int_eq(p.o.view.cct.sort, CCT_SORT_SELF);
	ck_assert_ptr_null(p.o.cmd);
	parse(&p, "--timeline", "t.json", "--timeline-limit", "10", "run.cbr", NULL);
	ASSERT_OK(&p);
	ck_assert_str_eq(p.o.input_path, "run.cbr");
	ck_assert_str_eq(p.o.view.timeline_path, "t.json");
	ck_assert_uint_eq(p.o.view.timeline_limit, 10);
	parse(&p, "-a", "count", NULL);
	ASSERT_USAGE(&p, "give the recording to read: cabbpf report FILE (made by cabbpf record -o "
			 "FILE)");
	parse(&p, "a.cbr", "b.cbr", NULL);
	ASSERT_USAGE(&p, "cabbpf report reads one recording: 'b.cbr' is one too many");
	parse(&p, "a.cbr", "-p", "1", NULL);
	ASSERT_USAGE(&p, "-p is not an option of cabbpf report (see cabbpf report --help)");
	parse(&p, "a.cbr", "--ring-size", "4", NULL);
	ASSERT_USAGE(&p,
		     "--ring-size is not an option of cabbpf report (see cabbpf report --help)");
	parse(&p, "--help", NULL);
	ck_assert_int_eq(p.ret, 1);
	ck_assert(!strncmp(p.out, "Usage: cabbpf report FILE [OPTIONS]\n", 36));
	ck_assert_ptr_nonnull(strstr(p.out, "--timeline FILE"));
	ck_assert_ptr_nonnull(strstr(p.out, "-a, --analyzers LIST"));
	ck_assert_ptr_null(strstr(p.out, "--pid"));
	ck_assert_ptr_null(strstr(p.out, "--ring-size"));
	assert_fits(p.out);

	as(OPTS_DUMP, "dump");
	parse(&p, "run.cbr", NULL);
	ASSERT_OK(&p);
	ck_assert_str_eq(p.o.input_path, "run.cbr");
	parse(&p, "run.cbr", "-a", "count", NULL);
	ASSERT_USAGE(&p, "-a is not an option of cabbpf dump (see cabbpf dump --help)");
	parse(&p, "-h", NULL);
	ck_assert_int_eq(p.ret, 1);
	ck_assert(!strncmp(p.out, "Usage: cabbpf dump FILE\n", 24));
	assert_fits(p.out);
	as(OPTS_LIVE, "cabbpf");
}
END_TEST

START_TEST(version)
{
	struct parsed p;

	parse(&p, "-V", NULL);
	ck_assert_int_eq(p.ret, 1);
	ck_assert_str_eq(p.out, "cabbpf 0.1.0\n");
	parse(&p, "--version", NULL);
	ck_assert_int_eq(p.ret, 1);
	ck_assert_str_eq(p.out, "cabbpf 0.1.0\n");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("opts");
	TCase *tc = tcase_create("opts");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, defaults);
	tcase_add_test(tc, every_option_exact);
	tcase_add_test(tc, every_row_parsed);
	tcase_add_test(tc, range_errors);
	tcase_add_test(tc, durations);
	tcase_add_test(tc, replay_options);
	tcase_add_test(tc, too_many_patterns);
	tcase_add_test(tc, unknown_and_missing);
	tcase_add_test(tc, conflicts);
	tcase_add_test(tc, whole_container);
	tcase_add_test(tc, whole_container_record);
	tcase_add_test(tc, isp_options);
	tcase_add_test(tc, sampling_options);
	tcase_add_test(tc, budget_options);
	tcase_add_test(tc, help_lists_every_row);
	tcase_add_test(tc, version);
	tcase_add_test(tc, subcommands);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
