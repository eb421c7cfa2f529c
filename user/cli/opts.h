/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Command-line options of cabbpf. One table (opts__table, in opts.c) says
 * each option's long and short name, argument type, range and help text;
 * getopt_long's table, the parsing, the range checks and --help are all
 * derived from it, and the checks between options sit in one function
 * (opts.c: check_combination). Adding an option: a field in struct opts,
 * a row in the table, and where needed a line in check_combination.
 * Parsed once by main's thread.
 */
#ifndef USER_OPTS_H
#define USER_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "analyzers/isp.h"
#include "user/report/views.h"

#define OPTS_MAX_FUNCS 256
#define CABBPF_VERSION "0.1.0"

/* What the command line asks for: the subcommand (user/main.c's table). */
enum opts_mode {
	OPTS_LIVE,   /* cabbpf [OPTIONS] (-p PID | -- CMD): trace and report */
	OPTS_RECORD, /* cabbpf record -o FILE ...: trace into a recording */
	OPTS_REPORT, /* cabbpf report FILE: the report of a recording */
	OPTS_DUMP,   /* cabbpf dump FILE: a recording's events */
	OPTS_REPLAY, /* cabbpf replay FILE: a recording's call flow */
};

#define OPTS_MAX_REPLAY_GLOBS 256
#define OPTS_MAX_VAL_RULES 256 /* --args, --retval rules each */

struct opts {
	pid_t pid;			   /* -p */
	char **cmd;			   /* after --, NULL-terminated */
	bool follow_exec;		   /* --follow-exec: cmd's program, past shells and env */
	bool follow_forks;		   /* --follow-forks: cmd and every process it starts */
	const char *funcs[OPTS_MAX_FUNCS]; /* -f globs */
	size_t nfuncs;
	const char *analyzers;	   /* -a, NULL = all but the opt-in ones */
	const char *json_path;	   /* --json */
	const char *output_path;   /* -o: the text report into a file */
	const char *debug_dir;	   /* --debug-dir: separate debug files */
	double duration;	   /* -d seconds; 0 = until exit or Ctrl-C */
	size_t ring_bytes;	   /* --ring-size, per CPU */
	unsigned analyzer_threads; /* --analyzer-threads */
	const char *cab_mode;	   /* --cab-mode exhaustive|sampling (NULL: exhaustive) */
	bool list;		   /* --list */
	bool floor;		   /* --floor (benchmarks) */
	bool no_times;		   /* --no-times */
	bool bpf_stats;		   /* --bpf-stats: the probes' own run time */
	bool no_guard;		   /* --no-guard: no ptrace guard (user/trace/guard.h) */
	bool plan;		   /* --plan: print the probe plan, attach nothing */
	bool features;		   /* --features: what this kernel offers, and exit */
	bool no_shift;		   /* --no-shift: every probe on the entry */
	bool no_callsites;	   /* --no-callsites: no call-site counting */
	bool entry_only;	   /* --entry-only: no return probes (-a count) */
	double sample_pct;	   /* --sample P: duty cycle in %, 0 = none */
	unsigned sample_period_ms; /* --sample-period (1000 with --sample, 500 with
				      --budget) */
	bool start_disabled;	   /* --start-disabled: SIGUSR1 on, SIGUSR2 off */
	bool lossless;		   /* --lossless: the target waits at a full ring */
	double budget_pct;	   /* --budget P: the slowdown allowed in %, 0 = none */
	/* System-wide I/O and containers */
	bool io;	       /* --io: system-wide I/O statistics */
	double interval;       /* -i seconds: periodic --io output; 0 = none */
	unsigned io_keep;      /* --io-keep: ended processes kept one by one; 0 = default */
	const char *cgroup;    /* --cgroup PATH (cgroup v2 directory) */
	const char *container; /* --container ID */
	/* Call tree and flame graph (user/report/views.h); -s and --folded-metric
	 * as given, turned into view's enums once parsed */
	struct view_opts view;
	const char *sort_key;
	const char *folded_metric;
	/* record, report, dump (user/record/) */
	enum opts_mode mode;
	const char *record_path; /* record: -o FILE, the recording */
	const char *input_path;	 /* report, dump: the recording read */
	/* Input-sensitive profiles (analyzers/isp.h); --cost as given, turned
	 * into isp.cost once parsed */
	struct isp_opts isp;
	/* --args and --retval rules as given (common/callvals.h) */
	const char *args[OPTS_MAX_VAL_RULES];
	size_t nargs;
	const char *retvals[OPTS_MAX_VAL_RULES];
	size_t nretvals;
	const char *cost_word;
	/* cabbpf replay (analyzers/replay.h): -F globs; -N, --depth and
	 * --slower-than are view's; --time-range as given, then in ns */
	const char *replay_only[OPTS_MAX_REPLAY_GLOBS];
	size_t nreplay_only;
	const char *time_range;
	uint64_t range_from_ns, range_to_ns;
	unsigned replay_tid;
	/* --times: "sampled" (default) or "raw"; --times-hz, 0: 1000 */
	const char *times_word;
	unsigned times_hz;
	bool quiet;	       /* -q: no text report */
	bool verbose;	       /* -v */
};

/* What an option's argument is, and so how it is parsed and stored at
 * struct opts + off. */
enum opt_type {
	OPT_FLAG, /* no argument: bool = true */
	OPT_STR,  /* const char *, pointing into argv */
	OPT_CHOICE, /* const char *: one of the row's choices (the static string) */
	OPT_STRS, /* repeatable: appended to const char *[hi] at off, count (size_t) at count_off */
	OPT_PID,  /* pid_t, an integer in [lo, hi] */
	OPT_UINT, /* unsigned, an integer in [lo, hi] */
	OPT_MIB,  /* size_t bytes, given as an integer MiB in [lo, hi] */
	OPT_DOUBLE,  /* double in [lo, hi] (lo excluded with OPTF_LO_OPEN) */
	OPT_NS,	     /* uint64_t ns, given as a duration: 10ms, 1.5s, 200us, 800ns (a bare
			number is ms); in [lo, hi] ns */
	OPT_HELP,    /* print --help, stop */
	OPT_VERSION, /* print the version, stop */
	OPT_NOTE,    /* no option: one more entry of --help (label, help) */
};

/* Row flags. */
#define OPTF_NONEMPTY 0x1 /* OPT_STR, OPT_STRS: "" is refused */
#define OPTF_POW2 0x2	  /* integers: a power of two */
#define OPTF_LO_OPEN 0x4  /* OPT_DOUBLE: lo itself is out of range */
#define OPTF_HI_OPEN 0x8  /* OPT_DOUBLE: hi itself is out of range */
#define OPTF_PERCENT 0x10 /* OPT_DOUBLE: a trailing '%' is allowed */
#define OPTF_OFFLINE 0x20 /* also for cabbpf report (acts on the analysis) */
#define OPTF_REPLAY 0x40  /* also for cabbpf replay */
#define OPTF_REPLAY_ONLY 0x80 /* for cabbpf replay only */

struct opt_def {
	const char *name; /* long name (without --); NULL for OPT_NOTE */
	char short_name;  /* 0: none */
	enum opt_type type;
	const char *arg;  /* the argument's name in --help; NULL: no argument */
	double lo, hi;	  /* range of numbers; OPT_STRS: hi = capacity */
	unsigned flags;	  /* OPTF_* */
	size_t off;	  /* offsetof(struct opts, field) */
	size_t count_off; /* OPT_STRS: offsetof the size_t count */
	/* the error for a bad argument: "-x wants <wants>, not 'ARG'" (for an
	 * empty string refused by OPTF_NONEMPTY: "-x wants <wants>") */
	const char *wants;
	const char *group; /* --help heading; a new one starts a section */
	const char *label; /* OPT_NOTE: the left column of its --help entry */
	const char *const *choices; /* OPT_CHOICE: the accepted words, NULL-ended */
	const char *help;  /* --help text; '\n' breaks a line */
	const char *replay_help; /* cabbpf replay --help's, when it means more there */
};

/* The table, in --help order, and its length. Constant; any thread. */
extern const struct opt_def opts__table[];
extern const size_t opts__ntable;

/*
 * Parse argv into *o (defaults first), then check the options against
 * each other. With --io no target is needed (every process); -p restricts
 * it to one process. Returns 0 to run, 1 when --help or --version was
 * printed on stdout (exit 0), or -EINVAL after logging why (a usage
 * error: exit 2). Pointers in *o point into argv. Resets getopt's state,
 * so it may be called again (tests do).
 */
int opts__parse(int argc, char **argv, struct opts *o);

/*
 * The same for a subcommand: argv[0] is the subcommand's name. OPTS_RECORD
 * takes the live options, -o FILE being the recording; OPTS_REPORT takes
 * the rows flagged OPTF_OFFLINE and one FILE; OPTS_DUMP takes FILE only;
 * OPTS_REPLAY the rows flagged OPTF_REPLAY or OPTF_REPLAY_ONLY and one
 * FILE (those only it takes are refused elsewhere).
 * Returns as opts__parse.
 */
int opts__parse_mode(enum opts_mode mode, int argc, char **argv, struct opts *o);

/* Write the --help text, derived from opts__table, to out. */
void opts__print_help(FILE *out);
/* The --help text of a subcommand. */
void opts__print_help_mode(enum opts_mode mode, FILE *out);

#endif /* USER_OPTS_H */
