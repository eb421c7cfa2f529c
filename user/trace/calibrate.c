// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <stdio.h>
#include <sys/stat.h>

#include "common/log.h"
#include "user/kernel/features.h"
#include "common/outfile.h"
#include "user/elf/syms.h"
#include "user/trace/calibrate.h"
#include "user/trace/progress.h"
#include "user/trace/trace.h"

/* One function per entry class, written in assembly so that their first
 * instruction is what their name says whatever the compiler does. Each
 * then reads and writes a variable, as most functions touch memory: the
 * time sampler's aftermath (struct calib_aftermath) holds what a trap's
 * cooled caches cost such a first access. */
__asm__(".bss\n.p2align 6\ncabbpf_calib_var:\n\t.zero 64\n"
	".text\n"
	".globl cabbpf_calib_nop5\n.type cabbpf_calib_nop5, @function\n"
	"cabbpf_calib_nop5:\n\t.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"\tincq cabbpf_calib_var(%rip)\n\tret\n"
	".size cabbpf_calib_nop5, .-cabbpf_calib_nop5\n"
	".globl cabbpf_calib_push\n.type cabbpf_calib_push, @function\n"
	"cabbpf_calib_push:\n\tpush %rbp\n\tincq cabbpf_calib_var(%rip)\n\tpop %rbp\n\tret\n"
	".size cabbpf_calib_push, .-cabbpf_calib_push\n"
	".globl cabbpf_calib_mov\n.type cabbpf_calib_mov, @function\n"
	"cabbpf_calib_mov:\n\tmov %rdi, %rax\n\tincq cabbpf_calib_var(%rip)\n\tret\n"
	".size cabbpf_calib_mov, .-cabbpf_calib_mov\n");
void cabbpf_calib_nop5(void);
void cabbpf_calib_push(void);
void cabbpf_calib_mov(void);

/* calls: per round, fewer for the dearer classes, so that each traced
 * round takes a few ms of CPU whatever the class (with 2000 single-steps
 * a round, the calibration was 230 of cabbpf's ~1000 ms start-up). */
static const struct {
	const char *name;
	void (*fn)(void);
	enum insn_class cls;
	unsigned calls;
	/* bytes of the first instruction (the probed one), as the planner
	 * gives a run's (user/probe/plan.h plan_site.len) */
	uint8_t len;
} calib[] = {
	{"cabbpf_calib_nop5", cabbpf_calib_nop5, INSN_NOP5, 1000, 5},
	{"cabbpf_calib_push", cabbpf_calib_push, INSN_EMULATED, 500, 1},
	{"cabbpf_calib_mov", cabbpf_calib_mov, INSN_SSTEP, 200, 3},
};
#define NCALIB (sizeof(calib) / sizeof(calib[0]))

/* The child's own CPU time: a trap's handling is charged to it, time
 * spent preempted by other work is not (under load, wall time measured
 * the machine's other work: 2x the cost with two CPU hogs). */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* With the probes in, each class is called for at least this much of the
 * child's CPU time, so that the progress clock's ticks in it (1 ms each)
 * measure what a traced call adds to it within a few % of the traps. */
#define LEAK_NS 100000000ULL

/* The child: time every function (best of 3 rounds of its calls), hand
 * the times over; then, with the probes in, class by class when told:
 * best of 3 rounds, and rounds until LEAK_NS of CPU time; hand over the
 * best round and the calls made. */
static void child_main(int rd, int wr)
{
	uint64_t t[NCALIB], res[2];
	char go;
	int r;
	size_t k, i;

	for (k = 0; k < NCALIB; k++) {
		t[k] = UINT64_MAX;
		for (r = 0; r < 3; r++) {
			uint64_t a = now_ns(), d;

			for (i = 0; i < calib[k].calls; i++)
				calib[k].fn();
			d = now_ns() - a;
			if (d < t[k])
				t[k] = d;
		}
	}
	if (write(wr, t, sizeof(t)) != (ssize_t)sizeof(t))
		_exit(1);
	for (k = 0; k < NCALIB; k++) {
		uint64_t start;

		if (read(rd, &go, 1) != 1)
			_exit(1);
		res[0] = UINT64_MAX;
		res[1] = 0;
		start = now_ns();
		for (r = 0; r < 3 || (go == 'l' && now_ns() - start < LEAK_NS); r++) {
			uint64_t a = now_ns(), d;

			for (i = 0; i < calib[k].calls; i++)
				calib[k].fn();
			d = now_ns() - a;
			if (d < res[0])
				res[0] = d;
			res[1] += calib[k].calls;
		}
		if (write(wr, res, sizeof(res)) != (ssize_t)sizeof(res))
			_exit(1);
	}
	_exit(0);
}

/* Read n bytes from the child, draining the probes' rings meanwhile
 * (nobody else does: full rings would drop events, a cheaper path than
 * the run's). Returns 0 or -EIO. */
static int child_says(int fd, void *buf, size_t n, struct trace *tr)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	while (poll(&p, 1, 20) == 0)
		if (tr)
			trace__drain(tr, 0);
	return read(fd, buf, n) == (ssize_t)n ? 0 : -EIO;
}

/* ---- the measurement kept for later runs ---- */

/* Where: a directory only root can write, in /run (cleared at boot).
 * CABBPF_TEST_RUN_DIR: tests put it elsewhere. */
#define RUN_DIR "/run/cabbpf"
/* How long a measurement is reused: long enough for a session of runs
 * (a test suite, a benchmark), short enough that one taken in odd
 * conditions does not outlive them by much. */
#define KEEP_S (30 * 60)

static const char *run_dir(void)
{
	const char *d = getenv("CABBPF_TEST_RUN_DIR");

	return d && *d ? d : RUN_DIR;
}

/* What a measurement belongs to: this boot, this cabbpf binary (its BPF
 * programs are what is measured) and whether events carry times. */
static int cache_key(bool no_times, char *buf, size_t len)
{
	char boot[64] = "";
	struct stat sb;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	if (!f)
		return -errno;
	if (!fgets(boot, sizeof(boot), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	boot[strcspn(boot, "\n")] = 0;
	if (stat("/proc/self/exe", &sb))
		return -errno;
	/* the late ticks at a trap's return left out or not (a test's
	 * switch: user/trace/trace.c) change the aftermath measured */
	snprintf(buf, len, "%s %lx:%lu:%lld.%09ld:%lld %s%s", boot, (unsigned long)sb.st_dev,
		 (unsigned long)sb.st_ino, (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec,
		 (long long)sb.st_size, no_times ? "no-times" : "times",
		 getenv("CABBPF_TEST_NO_RESUME_CHECK") ? " all-ticks" : "");
	return 0;
}

/* The directory, when it is ours: a real directory (not a link) of this
 * user that no one else may write; made if missing. */
static bool run_dir_ok(void)
{
	struct stat sb;

	if (mkdir(run_dir(), 0700) && errno != EEXIST)
		return false;
	return !lstat(run_dir(), &sb) && S_ISDIR(sb.st_mode) && sb.st_uid == geteuid() &&
	       !(sb.st_mode & 022);
}

static void cache_path(char *buf, size_t len)
{
	snprintf(buf, len, "%s/probe-costs", run_dir());
}

/* A measurement taken earlier (within KEEP_S) for this key: 0 and
 * cost_ns[], *age_s; else -ENOENT. Never through a symlink, only from a
 * file of this user no one else may write. */
static int cache_read(const char *key, double cost_ns[INSN__NCLASS],
		      struct progress_leak leak[INSN__NCLASS],
		      struct calib_aftermath aft[INSN__NCLASS], long *age_s)
{
	char path[4200], line[512], k[256];
	double c[3], l[3], sd[3], a[12];
	long long when;
	struct stat sb;
	FILE *f = NULL;
	int fd, found = 0;

	cache_path(path, sizeof(path));
	if (getenv("CABBPF_RECALIBRATE") || !run_dir_ok())
		return -ENOENT;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
	    (sb.st_mode & 022) || !(f = fdopen(fd, "r"))) {
		close(fd);
		return -ENOENT;
	}
	/* one line per key: "KEY\tWHEN NOP5 EMULATED SSTEP LNOP5 LEMULATED LSSTEP
	 * SDNOP5 SDEMULATED SDSSTEP", then each class's aftermath (in, out,
	 * their errors): an older line, without them, is measured again */
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');

		if (!tab || (size_t)(tab - line) >= sizeof(k))
			continue;
		memcpy(k, line, (size_t)(tab - line));
		k[tab - line] = 0;
		if (strcmp(k, key) ||
		    sscanf(tab + 1,
			   "%lld %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf "
			   "%lf %lf %lf %lf",
			   &when, &c[0], &c[1], &c[2], &l[0], &l[1], &l[2], &sd[0], &sd[1], &sd[2],
			   &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6], &a[7], &a[8], &a[9],
			   &a[10], &a[11]) != 22)
			continue;
		*age_s = (long)(time(NULL) - when);
		found = *age_s >= 0 && *age_s < KEEP_S && c[0] > 0 && c[1] > 0 && c[2] > 0 &&
			c[0] < 1e7 && c[1] < 1e7 && c[2] < 1e7;
	}
	fclose(f);
	if (!found)
		return -ENOENT;
	cost_ns[INSN_NOP5] = c[0];
	cost_ns[INSN_EMULATED] = c[1];
	cost_ns[INSN_SSTEP] = c[2];
	leak[INSN_NOP5] = (struct progress_leak){l[0], sd[0]};
	leak[INSN_EMULATED] = (struct progress_leak){l[1], sd[1]};
	leak[INSN_SSTEP] = (struct progress_leak){l[2], sd[2]};
	aft[INSN_NOP5] = (struct calib_aftermath){a[0], a[1], a[2], a[3]};
	aft[INSN_EMULATED] = (struct calib_aftermath){a[4], a[5], a[6], a[7]};
	aft[INSN_SSTEP] = (struct calib_aftermath){a[8], a[9], a[10], a[11]};
	return 0;
}

/* Keep this measurement for later runs (common/outfile: a new file
 * renamed over the old, never written through a link). Other keys' lines
 * (times / no times, other builds) are kept while they may be used.
 * Failing is only a later run's cost. */
static void cache_write(const char *key, const double cost_ns[INSN__NCLASS],
			const struct progress_leak leak[INSN__NCLASS],
			const struct calib_aftermath aft[INSN__NCLASS])
{
	static const enum insn_class cls[3] = {INSN_NOP5, INSN_EMULATED, INSN_SSTEP};
	size_t i;
	char path[4200], line[512];
	struct outfile o;
	FILE *old;
	int fd;

	if (!run_dir_ok())
		return;
	cache_path(path, sizeof(path));
	if (outfile__open(&o, path))
		return;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && (old = fdopen(fd, "r"))) {
		while (fgets(line, sizeof(line), old)) {
			char *tab = strchr(line, '\t');
			long long when;

			/* other keys' lines while they may still be used */
			if (tab && sscanf(tab + 1, "%lld", &when) == 1 &&
			    time(NULL) - when < KEEP_S &&
			    (strncmp(line, key, strlen(key)) || line[strlen(key)] != '\t'))
				fputs(line, o.f);
		}
		fclose(old);
	} else if (fd >= 0) {
		close(fd);
	}
	fprintf(o.f, "%s\t%lld %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g", key,
		(long long)time(NULL), cost_ns[INSN_NOP5], cost_ns[INSN_EMULATED],
		cost_ns[INSN_SSTEP], leak[INSN_NOP5].ns, leak[INSN_EMULATED].ns,
		leak[INSN_SSTEP].ns, leak[INSN_NOP5].sd_ns, leak[INSN_EMULATED].sd_ns,
		leak[INSN_SSTEP].sd_ns);
	for (i = 0; i < 3; i++)
		fprintf(o.f, " %.17g %.17g %.17g %.17g", aft[cls[i]].in_ns, aft[cls[i]].out_ns,
			aft[cls[i]].in_sd_ns, aft[cls[i]].out_sd_ns);
	fputc('\n', o.f);
	if (outfile__commit(&o))
		log_debug("keeping the probe cost in %s failed", path);
}

/* What the calibration's trace delivered: the entry events, and the time
 * sampler's samples (their time and instruction pointer). */
struct calib_events {
	uint64_t delivered;
	struct calib_sample {
		uint64_t ts, ip;
	} *s;
	size_t n, cap;
};

/* The time sampler's period while calibrating: fine, for a count of the
 * aftermath's samples within a few % in the ~100 ms each class runs. */
#define CALIB_SAMPLE_NS 50000ULL

static int on_event(void *ctx, unsigned cpu, const struct cabbpf_event *e)
{
	struct calib_events *ce = ctx;

	(void)cpu;
	ce->delivered += e->kind == CABBPF_EV_ENTRY;
	if (e->kind != CABBPF_EV_CPU_SAMPLE)
		return 0;
	if (ce->n == ce->cap) {
		size_t cap = ce->cap ? 2 * ce->cap : 4096;
		struct calib_sample *s = realloc(ce->s, cap * sizeof(*s));

		if (!s)
			return 0; /* fewer samples: a coarser figure */
		ce->s = s;
		ce->cap = cap;
	}
	ce->s[ce->n++] = (struct calib_sample){e->ts, e->sp};
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The aftermath of class k's traced calls (struct calib_aftermath), from
 * the samples taken while its leak round ran (between t0 and t1, calls
 * calls): those inside its function (after each entry's trap; the
 * function's own instructions take ~1 ns of each call) are in_ns, the
 * others (the child's loop, after each return's trap) less the loop's
 * own untraced time (base: ns a call) are out_ns. A count n of samples
 * is +- sqrt(n).
 */
static void aftermath_of(const struct calib_events *ce, size_t k, uint64_t t0, uint64_t t1,
			 uint64_t calls, double base, struct calib_aftermath *a)
{
	uintptr_t lo = (uintptr_t)calib[k].fn, hi = lo + 24;
	double in = 0, out = 0, p = (double)CALIB_SAMPLE_NS;
	size_t i;

	if (!calls)
		return;
	for (i = 0; i < ce->n; i++) {
		/* ip 0 or 1: in a system call or a page fault (none of the
		 * loop's or the function's) */
		if (ce->s[i].ts < t0 || ce->s[i].ts > t1 || ce->s[i].ip < 2)
			continue;
		if (ce->s[i].ip >= lo && ce->s[i].ip < hi)
			in++;
		else
			out++;
	}
	a->in_ns = in * p / (double)calls;
	a->out_ns = fmax(0.0, out * p / (double)calls - base);
	a->in_sd_ns = sqrt(fmax(1.0, in)) * p / (double)calls;
	a->out_sd_ns = sqrt(fmax(1.0, out)) * p / (double)calls;
}

/* The calibration functions' offsets in this executable (exe: its path). */
static int calib_offsets(char exe[PATH_MAX], struct symtab **st, uint64_t offsets[NCALIB])
{
	ssize_t len = readlink("/proc/self/exe", exe, PATH_MAX - 1);
	size_t k;
	int err;

	if (len <= 0)
		return -errno;
	exe[len] = 0;
	err = syms__load(exe, st);
	if (err)
		return err;
	for (k = 0; k < NCALIB; k++) {
		const struct sym *s = syms__find(*st, calib[k].name);

		if (!s)
			return -ENOENT;
		offsets[k] = s->offset;
	}
	return 0;
}

/* The child that calls them, forked with its two pipes; its untraced
 * rounds' times into base. */
static int calib_fork(int to_child[2], int from_child[2], pid_t *pid, uint64_t base[NCALIB])
{
	if (pipe2(to_child, O_CLOEXEC) || pipe2(from_child, O_CLOEXEC))
		return -errno;
	*pid = fork();
	if (*pid < 0)
		return -errno;
	if (*pid == 0)
		child_main(to_child[0], from_child[1]);
	return child_says(from_child[0], base, NCALIB * sizeof(*base), NULL);
}

/* The traced rounds: each class's cost per call (its CPU time less the
 * untraced round's), and what the progress clock saw of it (prog NULL:
 * nothing). *called: the calls the child made. */
static int calib_rounds(int to, int from, struct trace *tr, bool prog,
			const uint64_t base[NCALIB], double cost_ns[INSN__NCLASS],
			struct progress_leak leak[INSN__NCLASS], uint64_t *called,
			uint64_t win[NCALIB][3])
{
	/* the progress clock's period: the time sampler's when it runs */
	double tick = trace__cpu_samples(tr) ? (double)CALIB_SAMPLE_NS : (double)PROGRESS_TICK_NS;
	uint64_t res[2];
	size_t k;

	for (k = 0; k < NCALIB; k++) {
		uint64_t p0, p1;
		double user;

		/* the round's window and calls, for the time sampler's
		 * aftermath (aftermath_of) */
		trace__progress_ns(tr, &p0);
		win[k][0] = mono_ns();
		if (write(to, prog ? "l" : "g", 1) != 1 || child_says(from, res, sizeof(res), tr))
			return -EIO;
		win[k][1] = mono_ns();
		win[k][2] = res[1];
		trace__progress_ns(tr, &p1);
		*called += res[1];
		cost_ns[calib[k].cls] =
			res[0] > base[k] ? (double)(res[0] - base[k]) / calib[k].calls : 0;
		/* the ticks less the calls' own (untraced) time */
		user = (double)(p1 - p0) -
		       (double)base[k] / calib[k].calls * (double)res[1];
		if (prog && res[1] && user > 0) {
			leak[calib[k].cls].ns = fmin(user / (double)res[1], cost_ns[calib[k].cls]);
			/* a count of ticks: +- its square root (at least one) */
			leak[calib[k].cls].sd_ns = sqrt(fmax(1.0, (double)(p1 - p0) / tick)) *
						   tick / (double)res[1];
		}
	}
	return 0;
}

/* Every call was probed (the child waits for each round's answer, and the
 * drains run while it calls): a kernel whose probes fire without
 * delivering would give an empty trace, said now. Half at least, counting
 * what full rings dropped (the leak rounds run for 100 ms between
 * drains): a kernel that delivers nothing gives none. */
static bool calib_delivered(struct trace *tr, uint64_t delivered, uint64_t called)
{
	uint64_t stats[CABBPF_STAT__MAX];

	trace__drain(tr, 0);
	if (trace__stats(tr, stats, NULL))
		memset(stats, 0, sizeof(stats));
	if (delivered && delivered + stats[CABBPF_STAT_DROPS] / 2 >= called / 2)
		return true;
	log_err("this kernel's probes delivered %llu of the %llu calls cabbpf made to measure "
		"them at start-up: a trace would be empty or short (kernel features: cabbpf "
		"--features)",
		(unsigned long long)delivered, (unsigned long long)called);
	return false;
}

/* CABBPF_TEST_PROBE_COST_SCALE=X (tests only): the costs times X, as if
 * measured so, after the measurement is kept (a later run reads the real
 * one): a test makes the calibration over-state a run's cost (as on hosts
 * whose traps cost 10-20x more at start-up than in the run) or under-state
 * it on any machine. What is printed is what the run then subtracts.
 * Returns the factor's text, or "" when there is none. */
static const char *test_scale(double cost_ns[INSN__NCLASS])
{
	const char *x = getenv("CABBPF_TEST_PROBE_COST_SCALE");
	double f = x ? atof(x) : 0;
	size_t k;

	if (!(f > 0))
		return "";
	for (k = 0; k < INSN__NCLASS; k++)
		cost_ns[k] *= f;
	return x;
}

/* CABBPF_TEST_AFTERMATH_NS=IN,OUT (tests only): every class's aftermath
 * as if measured so (in the callee, in the caller, ns a call), after the
 * measurement is kept: a test makes it exceed a context's samples on any
 * machine, where the measure may be small or 0. */
static void test_aftermath(struct calib_aftermath aft[INSN__NCLASS])
{
	const char *x = getenv("CABBPF_TEST_AFTERMATH_NS");
	double in, out;
	size_t k;

	if (!x || sscanf(x, "%lf,%lf", &in, &out) != 2)
		return;
	for (k = 0; k < INSN__NCLASS; k++) {
		aft[k].in_ns = in;
		aft[k].out_ns = out;
	}
	log_info("the probes' aftermath set to %.0f ns in the callee, %.0f ns in the caller "
		 "(CABBPF_TEST_AFTERMATH_NS)",
		 in, out);
}

int calibrate__probe_costs(bool no_times, double cost_ns[INSN__NCLASS],
			   struct progress_leak leak[INSN__NCLASS],
			   struct calib_aftermath aft[INSN__NCLASS])
{
	struct calib_events ce = {0};
	uint64_t win[NCALIB][3] = {{0}};
	int to_child[2] = {-1, -1}, from_child[2] = {-1, -1}, status, err = 0;
	uint64_t offsets[NCALIB], base[NCALIB];
	uint8_t resume_len[NCALIB];
	bool prog;
	uint64_t ns;
	char exe[PATH_MAX];
	struct symtab *st = NULL;
	struct trace *tr = NULL;
	struct trace_opts to;
	pid_t pid = -1;
	uint64_t delivered = 0, called = 0;
	char key[256] = "";
	long age_s;
	size_t k;

	memset(cost_ns, 0, sizeof(double) * INSN__NCLASS);
	memset(leak, 0, sizeof(*leak) * INSN__NCLASS);
	memset(aft, 0, sizeof(*aft) * INSN__NCLASS);
	if (!cache_key(no_times, key, sizeof(key)) && !cache_read(key, cost_ns, leak, aft, &age_s)) {
		const char *x = test_scale(cost_ns);

		test_aftermath(aft);
		log_info(
			"probe cost per traced call, measured: %.0f ns (nop5), %.0f ns (emulated), "
			"%.0f ns (single-stepped) entry and return, %ld s ago (%s; "
			"CABBPF_RECALIBRATE=1 measures again)%s%s",
			cost_ns[INSN_NOP5], cost_ns[INSN_EMULATED], cost_ns[INSN_SSTEP], age_s,
			RUN_DIR, *x ? ", scaled by CABBPF_TEST_PROBE_COST_SCALE=" : "", x);
		return 0;
	}
	err = calib_offsets(exe, &st, offsets);
	if (!err)
		err = calib_fork(to_child, from_child, &pid, base);
	if (err)
		goto cleanup;
	memset(&to, 0, sizeof(to));
	to.pid = pid;
	to.binary = exe;
	to.offsets = offsets;
	to.nfuncs = NCALIB;
	for (k = 0; k < NCALIB; k++)
		resume_len[k] = calib[k].len;
	to.resume_len = resume_len;
	to.ring_bytes = 1u << 20;
	to.no_times = no_times;
	to.unguarded = true;
	to.no_multi_links = !features__get()->has[KF_UPROBE_MULTI];
	to.no_session_kfunc = !features__get()->has[KF_UPROBE_SESSION];
	to.on_event = on_event;
	to.ctx = &ce;
	/* the time sampler, as a run has it, at a finer period; the progress
	 * clock is meant to see no trap: what a traced call adds to it is
	 * measured too (where there is no such clock, only the cost) */
	to.cpu_sample_ns = no_times ? 0 : CALIB_SAMPLE_NS;
	to.progress_clock = true;
	err = trace__open(&to, &tr);
	if (!err)
		err = trace__attach(tr);
	if (err)
		goto cleanup;
	prog = trace__progress_ns(tr, &ns);
	err = calib_rounds(to_child[1], from_child[0], tr, prog, base, cost_ns, leak, &called, win);
	if (err)
		goto cleanup;
	/* the last round's samples still in the rings */
	trace__drain(tr, 0);
	delivered = ce.delivered;
	if (prog && trace__cpu_samples(tr))
		for (k = 0; k < NCALIB; k++)
			aftermath_of(&ce, k, win[k][0], win[k][1], win[k][2],
				     (double)base[k] / calib[k].calls, &aft[calib[k].cls]);
	if (!calib_delivered(tr, delivered, called)) {
		err = -ENODATA;
		memset(cost_ns, 0, sizeof(double) * INSN__NCLASS);
		goto cleanup_quiet;
	}
	if (*key && cost_ns[INSN_NOP5] > 0 && cost_ns[INSN_EMULATED] > 0 && cost_ns[INSN_SSTEP] > 0)
		cache_write(key, cost_ns, leak, aft);
	test_aftermath(aft);
	{
		const char *x = test_scale(cost_ns);

		log_info("probe cost per traced call, measured: %.0f ns (nop5), %.0f ns "
			 "(emulated), %.0f ns (single-stepped) entry and return%s%s",
			 cost_ns[INSN_NOP5], cost_ns[INSN_EMULATED], cost_ns[INSN_SSTEP],
			 *x ? ", scaled by CABBPF_TEST_PROBE_COST_SCALE=" : "", x);
	}
	if (prog)
		log_debug("of it seen as the target's user time by the progress clock: %.0f +- "
			  "%.0f ns, %.0f +- %.0f ns, %.0f +- %.0f ns",
			  leak[INSN_NOP5].ns, leak[INSN_NOP5].sd_ns, leak[INSN_EMULATED].ns,
			  leak[INSN_EMULATED].sd_ns, leak[INSN_SSTEP].ns, leak[INSN_SSTEP].sd_ns);
	log_debug(
		"a traced call's aftermath, as the time sampler sees it (in the callee, in "
		"the caller): %.0f +- %.0f, %.0f +- %.0f ns (nop5); %.0f +- %.0f, %.0f +- %.0f ns "
		"(emulated); %.0f +- %.0f, %.0f +- %.0f ns (single-stepped)",
		aft[INSN_NOP5].in_ns, aft[INSN_NOP5].in_sd_ns, aft[INSN_NOP5].out_ns,
		aft[INSN_NOP5].out_sd_ns, aft[INSN_EMULATED].in_ns, aft[INSN_EMULATED].in_sd_ns,
		aft[INSN_EMULATED].out_ns, aft[INSN_EMULATED].out_sd_ns, aft[INSN_SSTEP].in_ns,
		aft[INSN_SSTEP].in_sd_ns, aft[INSN_SSTEP].out_ns, aft[INSN_SSTEP].out_sd_ns);
cleanup:
	if (err)
		log_warn("measuring the probes' cost failed (%s): times are not compensated",
			 strerror(-err));
cleanup_quiet:
	trace__free(tr);
	if (pid > 0) {
		if (err)
			kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	for (k = 0; k < 2; k++) {
		if (to_child[k] >= 0)
			close(to_child[k]);
		if (from_child[k] >= 0)
			close(from_child[k]);
	}
	syms__free(st);
	free(ce.s);
	return err;
}
