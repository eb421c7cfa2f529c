// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "common/outfile.h"
#include "common/outputs.h"
#include "user/report/report.h"
#include "user/report/sections.h"
#include "user/kernel/features.h"
#include "common/emit.h"
#include "common/json.h"
#include "analyzers/analyzer.h"
#include "pipeline/runner.h"
#include "user/trace/budget.h"
#include "user/trace/whole.h"

/* "exited with status 3", "killed by signal 9", or "" when unknown. */
/* A wait status in words ("" when it says neither). */
static void describe_status(int st, char *buf, size_t len)
{
	buf[0] = 0;
	if (WIFEXITED(st))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
}

static void describe_exit(const struct summary *s, char *buf, size_t len)
{
	buf[0] = 0;
	if (!s->exited || s->exit_status < 0)
		return;
	describe_status(s->exit_status, buf, len);
}

/* The kinds of lost events, as the report names them, with what each
 * loss does to the results (struct summary's lost_per_cpu order). */
static const struct lost_kind {
	const char *name; /* lost_by_kind.<name> */
	const char *text;
	const char *effect;
	unsigned an; /* AN_LOST_*: analyzers whose counts are then lower bounds */
} lost_kinds[3] = {
	{"calls", "calls and returns",
	 "call counts and call-graph edges are lower bounds (marked " AN_LB_MARK
	 " in the tables); the times of functions with lost events are not exact",
	 AN_LOST_CALLS},
	{"io", "I/O", "I/O call and byte counts are lower bounds (marked " AN_LB_MARK ")",
	 AN_LOST_IO},
	{"guard", "guard",
	 "frames unwound by an exception or left by a stack switch may be counted as "
	 "missing returns: returns.unwound and returns.switched are lower bounds",
	 0},
};

static uint64_t lost_of(const struct summary *s, unsigned k)
{
	return k == 0 ? s->lost_calls : k == 1 ? s->lost_io : s->lost_guard;
}

/* Every kind with losses on a line: its total, its CPUs (only those that
 * lost any) and which results it makes lower bounds. */
static void lost_text(FILE *out, const struct summary *s)
{
	unsigned k, i;

	fprintf(out,
		"  WARNING: %llu events were lost (kernel ring full); retry with a larger "
		"--ring-size, or --lossless:\n",
		(unsigned long long)s->lost);
	for (k = 0; k < 3; k++) {
		const char *sep = " (";

		if (!lost_of(s, k))
			continue;
		fprintf(out, "    %s: %llu lost", lost_kinds[k].text,
			(unsigned long long)lost_of(s, k));
		for (i = 0; s->lost_per_cpu && i < s->ncpus; i++) {
			uint64_t v = s->lost_per_cpu[k * s->ncpus + i];

			if (!v)
				continue;
			fprintf(out, "%scpu%u %llu", sep, i, (unsigned long long)v);
			sep = ", ";
		}
		fprintf(out, "%s: %s\n", *sep == ',' ? ")" : "", lost_kinds[k].effect);
	}
}

static const char *const found_words[] = {
	[WHOLE_RUNNING] = "running at the start",
	[WHOLE_NEW] = "started while traced",
	[WHOLE_MOVED] = "moved into the cgroup while traced",
};
static const char *const found_keys[] = {
	[WHOLE_RUNNING] = "running",
	[WHOLE_NEW] = "new",
	[WHOLE_MOVED] = "moved",
};
static const char *const from_keys[] = {
	[WHOLE_FROM_START] = "start", [WHOLE_FROM_EXEC] = "exec", [WHOLE_FROM_FORK] = "fork",
	[WHOLE_FROM_MOVED] = "moved", [WHOLE_FROM_ATTACH] = "attach",
};
static const char *const from_words[] = {
	[WHOLE_FROM_START] = "traced from the start",
	[WHOLE_FROM_EXEC] = "traced from its exec",
	[WHOLE_FROM_FORK] = "traced from its fork",
	[WHOLE_FROM_MOVED] = "traced from its move into the cgroup",
};

/* Whole-container tracing: what the report says of process p, on one
 * line (after "== pid N (comm) exe: "). */
static void proc_words(FILE *out, const struct whole_proc *p)
{
	char ex[96];

	fprintf(out, "%s", found_words[p->found]);
	describe_status(p->exit_status, ex, sizeof(ex));
	if (p->exited && ex[0])
		fprintf(out, ", %s", ex);
	if (!p->exe[0]) {
		/* gone before a look at /proc/PID/exe: a short-lived child */
		fprintf(out, "; ended before cabbpf could look at it: only its calls into files "
			     "traced already are counted%s",
			p->execs ? ", NOT those of the program it exec'd" : "");
		return;
	}
	if (p->untraced_image)
		fprintf(out, "; its executable is not traced (%s)", p->image_why);
	else if (p->from == WHOLE_FROM_ATTACH)
		fprintf(out, "; traced from %.3f s (its executable's probes went in then)",
			p->traced_from_s);
	else
		fprintf(out, "; %s", from_words[p->from]);
	if (p->untraced_image)
		return;
	if (p->armed)
		fprintf(out, "; return probes %s", p->guarded ? "armed, its guard holds it"
							      : "armed (nothing to guard)");
	else if (p->unarmed_why)
		fprintf(out, "; NO return probes: %s (calls counted, no times)", p->unarmed_why);
}

/* Whole-container tracing: a section per process with events, the list of
 * the others, then the merged result. */
static void whole_text(FILE *out, const struct summary *s, struct runner *r)
{
	const struct whole *w = s->whole;
	size_t i, k, np = whole__nprocs(w), nr = runner__nprocs(r), quiet = 0;

	for (i = 0; i < nr; i++) {
		uint32_t pid = runner__proc_pid(r, i);
		const struct whole_proc *p = whole__proc_of(w, (pid_t)pid);

		fprintf(out, "== pid %u (%s) %s: ", pid, p ? p->comm : "?", p ? p->exe : "?");
		if (p)
			proc_words(out, p);
		fprintf(out, " ==\n");
		sections__proc_text(r, i, out);
		fputc('\n', out);
	}
	for (i = 0; i < np; i++) {
		const struct whole_proc *p = whole__proc(w, i);

		for (k = 0; k < nr && runner__proc_pid(r, k) != (uint32_t)p->pid; k++)
			;
		if (k < nr)
			continue;
		if (!quiet++)
			fprintf(out, "processes with no traced event:\n");
		fprintf(out, "  pid %d (%s) %s: ", (int)p->pid, p->comm, p->exe);
		proc_words(out, p);
		fputc('\n', out);
	}
	if (quiet)
		fputc('\n', out);
	fprintf(out, "== all %zu process%s of %s, merged ==\n", nr, nr == 1 ? "" : "es", s->comm);
}

/* Past this share of the sampled time, the aftermath taken out makes the
 * sampled times uncertain: bench/times.sh saw a python loop (~90 ns of
 * aftermath a call, every ~100 ns) move by 10 points where the share was
 * over half, and a program of few dense calls (tests/targets/shares, 13%)
 * come within 4 points of perf. */
#define TIMES_AFTERMATH_HEAVY 0.25
/* Or denser than a traced call every this many ns of the program's
 * sampled time: the aftermath not measured (its code slower after each
 * trap, by what it touches) is then a large part of its times.
 * bench/times.sh (2026-12-06): shares, a call every ~1,100 ns, within
 * 2-7 points of perf; python3, every ~75 ns, 6-10 points; sqlite3, every
 * ~150 ns, 12-24 points. */
#define TIMES_DENSE_NS 500.0

/* The sampled time, ns, per traced call (0: no call or no sample). */
static double times_ns_per_call(const struct summary *s, const struct runner_stats *st)
{
	double calls = (double)st->records / 2;

	return calls > 0 ? (double)(st->returns.samples * s->cpu_sample_ns) / calls : 0;
}

static bool times_aftermath_heavy(const struct summary *s, const struct runner_stats *st)
{
	double sampled = (double)(st->returns.samples * s->cpu_sample_ns);
	double per_call = times_ns_per_call(s, st);

	return sampled > 0 && ((double)st->returns.aft_ns > TIMES_AFTERMATH_HEAVY * sampled ||
			       (per_call > 0 && per_call < TIMES_DENSE_NS));
}

/* What the run's times are (docs/times.md): the program's own time,
 * sampled, or the traced wall time. */
static void times_text(FILE *out, const struct summary *s, const struct runner *r)
{
	struct runner_stats st;

	if (!s->cpu_sample_ns) {
		fprintf(out, "  times: traced wall time, each call's probes included (--times raw, "
			     "or a mode that cannot sample: docs/times.md)\n");
		return;
	}
	runner__stats(r, &st);
	fprintf(out, "  times: sampled, the program's own %s: %llu samples every %.3g ms (",
		s->samples_kernel >= AN_KTIME_FAULTS ? "CPU time (user mode, its system calls and page faults)"
		: s->samples_kernel		     ? "CPU time (user mode and its system calls)"
						     : "user-mode CPU time",
		(unsigned long long)(st.returns.samples + s->samples_nostate),
		(double)s->cpu_sample_ns / 1e6);
	if (s->samples_kernel)
		fprintf(out, "%llu in system calls, ", (unsigned long long)s->samples_syscall);
	if (s->samples_kernel >= AN_KTIME_FAULTS)
		fprintf(out, "%llu in page faults, ", (unsigned long long)s->samples_fault);
	fprintf(out, "%llu outside traced functions); left out: %llu in the probes' code",
		(unsigned long long)(st.returns.samples_root + s->samples_nostate),
		(unsigned long long)s->samples_probe);
	if (s->samples_kernel)
		fprintf(out, ", %llu in their traps and other kernel entries",
			(unsigned long long)s->samples_trap);
	if (s->samples_resume)
		fprintf(out, ", %llu delivered late as a trap returned",
			(unsigned long long)s->samples_resume);
	if (s->samples_lost)
		fprintf(out, ", %llu LOST to full rings (times are lower bounds)",
			(unsigned long long)s->samples_lost);
	if (st.returns.aft_ns)
		fprintf(out, "; the probes' measured aftermath, %.3f ms, taken out",
			(double)st.returns.aft_ns / 1e6);
	fputc('\n', out);
	/* The aftermath was measured on the calibration's functions: where
	 * it is most of the time, this program's own may differ enough to
	 * move the times a lot (docs/times.md). */
	if (times_aftermath_heavy(s, &st))
		fprintf(out,
			"  WARNING: a traced call every %.0f ns of the program's sampled time, and "
			"the probes' measured aftermath %.0f%% of it: so dense that its sampled "
			"times are uncertain (its code runs slower after each trap, by more than was "
			"measured: the functions run right after traps are over-stated, the others "
			"under-stated); trace fewer functions (-x), or larger ones (docs/times.md)\n",
			times_ns_per_call(s, &st),
			100.0 * (double)st.returns.aft_ns /
				(double)(st.returns.samples * s->cpu_sample_ns));
}

/* The JSON's "times" (docs/json-schema.md). */
static int times_json(struct json *w, const struct summary *s, const struct runner *r)
{
	struct runner_stats st;
	int err = 0;

	runner__stats(r, &st);
	err |= json__key(w, "times");
	err |= json__begin_object(w);
	err |= json__kv_string(w, "method", s->cpu_sample_ns ? "sampled" : "traced");
	if (s->cpu_sample_ns) {
		err |= json__kv_u64(w, "period_ns", s->cpu_sample_ns);
		/* every sample taken: those of a thread with no event yet
		 * (nostate) are outside every traced function too */
		err |= json__kv_u64(w, "samples", st.returns.samples + s->samples_nostate);
		err |= json__kv_u64(w, "samples_outside", st.returns.samples_root + s->samples_nostate);
		err |= json__kv_u64(w, "samples_probe", s->samples_probe);
		err |= json__kv_u64(w, "samples_lost", s->samples_lost);
		/* the clock's kernel-mode samples, when it took them */
		if (s->samples_kernel) {
			err |= json__kv_u64(w, "samples_syscall", s->samples_syscall);
			err |= json__kv_u64(w, "samples_trap", s->samples_trap);
			if (s->samples_kernel >= AN_KTIME_FAULTS) {
				err |= json__kv_u64(w, "samples_fault", s->samples_fault);
				err |= json__kv_u64(w, "samples_resume", s->samples_resume);
			}
		}
		/* the probes' aftermath taken out (docs/times.md), and whether
		 * it is so much of the time that the times are uncertain */
		err |= json__kv_u64(w, "aftermath_ns", st.returns.aft_ns);
		err |= json__kv_bool(w, "aftermath_heavy", times_aftermath_heavy(s, &st));
	}
	return err | json__end_object(w);
}

void report__text(FILE *out, const struct summary *s, struct runner *r)
{
	if (s->whole) {
		size_t untraced, nimg = whole__nimages(s->whole, &untraced);

		fprintf(out, "cabbpf report: %s (cgroup %s): %zu process%s, %zu executable%s traced",
			s->comm, whole__cgpath(s->whole), whole__nprocs(s->whole),
			whole__nprocs(s->whole) == 1 ? "" : "es", nimg, nimg == 1 ? "" : "s");
		if (untraced)
			fprintf(out, ", %zu not (nothing to trace in them)", untraced);
		fputc('\n', out);
	} else {
		fprintf(out, "cabbpf report: pid %d (%s) %s\n", (int)s->pid, s->comm, s->binary);
	}
	fprintf(out, "  %u function%s traced%s, %.3f s, %llu events, %llu lost\n", s->nfuncs,
		s->nfuncs == 1 ? "" : "s", s->refused ? " (some refused by the kernel)" : "",
		s->duration_s, (unsigned long long)s->events, (unsigned long long)s->lost);
	if (s->execs && s->whole)
		fprintf(out, "  execve: %llu in the cgroup while traced (each process below says from "
			"when its calls were seen)\n",
			(unsigned long long)s->execs);
	else if (s->execs)
		fprintf(out, "  execve: %llu; %s\n", (unsigned long long)s->execs,
			s->exec_other ? "the last one ran ANOTHER program, whose calls are not traced "
					"(nor in the libraries both use)"
			: s->exec_thread
				? "the last one was called by a thread other than the main one: its "
				  "new image is NOT TRACED (the kernel's probes are bound to the main "
				  "thread, which the execve ended)"
				: "the same program, traced on (the old image's frames ended "
				  "by exec)");
	if (s->forks_known && s->forks)
		fprintf(out,
			"  children: the target started %llu process%s while traced, NOT TRACED "
			"(cabbpf traces one process; --follow-forks traces its children too, "
			"--cgroup or --container every process of a group)\n",
			(unsigned long long)s->forks, s->forks == 1 ? "" : "es");
	if (s->lost)
		lost_text(out, s);
	if (s->cab.overwritten)
		fprintf(out,
			"  WARNING: --cab-mode sampling: %llu records overwritten before the "
			"analyzers read them. Counts, edges and times are lower bounds\n",
			(unsigned long long)s->cab.overwritten);
	if (s->lossless)
		fprintf(out,
			"  lossless: the target waited for cabbpf %llu time%s (a thread stopped at "
			"a kernel ring's high-water mark until it was drained): %.3f s in all (thread "
			"time), longest %.3f ms%s\n",
			(unsigned long long)(s->guard ? s->guard->held : 0),
			s->guard && s->guard->held == 1 ? "" : "s",
			s->guard ? (double)s->guard->held_ns / 1e9 : 0.0,
			s->guard ? (double)s->guard->held_max_ns / 1e6 : 0.0,
			s->unheld ? "; SOME EVENTS PAST THE MARK CAME FROM THREADS THAT COULD NOT BE "
				    "STOPPED"
				  : "");
	times_text(out, s, r);
	if (s->sampling) {
		fputs("  ", out);
		sampler__text(s->sampling, out);
	}
	if (s->budget) {
		fputs("  ", out);
		budget__text(s->budget, out);
	}
	if (s->nostate)
		fprintf(out,
			"  %llu events lost because no thread state could be created (task storage "
			"full: out of memory)\n",
			(unsigned long long)s->nostate);
	if (s->lost_sched || s->sched_busy)
		fprintf(out,
			"  off-CPU intervals: %llu switch-in events put off (ring full), %llu "
			"(thread inside a probe): each carried to the thread's next switch-in\n",
			(unsigned long long)s->lost_sched, (unsigned long long)s->sched_busy);
	if (s->sched_unseen)
		fprintf(out,
			"  off-CPU intervals: %llu switch-ins the kernel's tracepoint never "
			"reported, each closed at the thread's next event: the frames across "
			"them show on-CPU time as a lower bound\n",
			(unsigned long long)s->sched_unseen);
	fputc('\n', out);
	if (s->whole)
		whole_text(out, s, r);
	sections__text(r, out);
	if (s->guard && s->guard->sites_hit)
		fprintf(out,
			"guard: %llu unwinder/switch/catch sites reached, %llu thread stops, %llu "
			"return addresses restored, %llu re-armed after a catch, %llu restored at "
			"detach%s\n",
			(unsigned long long)s->guard->sites_hit, (unsigned long long)s->guard->stops,
			(unsigned long long)s->guard->restored, (unsigned long long)s->guard->rearmed,
			(unsigned long long)s->guard->at_detach,
			s->guard->unguarded || s->guard->failed ? " (SOME NOT GUARDED: see stderr)"
								: "");
}

/* Whole-container tracing: "target" (what was traced) and "processes"
 * (every process found, with its own analyzers' results when it had
 * events). Returns 0 or the writer's error bits. */
static int whole_json(struct json *w, const struct summary *s, struct runner *r)
{
	const struct whole *wh = s->whole;
	size_t i, k, np = whole__nprocs(wh), nr = runner__nprocs(r), untraced, nimg;
	int err = 0;

	nimg = whole__nimages(wh, &untraced);
	err |= json__key(w, "target");
	err |= json__begin_object(w);
	err |= json__kv_string(w, "what", s->comm);
	err |= json__kv_string(w, "cgroup", whole__cgpath(wh));
	err |= json__kv_u64(w, "processes", np);
	err |= json__kv_u64(w, "executables_traced", nimg);
	err |= json__kv_u64(w, "executables_untraced", untraced);
	/* programs the tree exec'd, held at their exec until their probes
	 * were in: what that added to those execs */
	{
		struct whole_hold_figures hf;

		whole__hold_figures(wh, &hf);
		err |= json__key(w, "exec_holds");
		err |= json__begin_object(w);
		err |= json__kv_u64(w, "count", hf.n);
		err |= json__kv_double(w, "mean_ms", hf.n ? (double)hf.sum_ns / (double)hf.n / 1e6 : 0);
		err |= json__kv_double(w, "max_ms", (double)hf.max_ns / 1e6);
		err |= json__end_object(w);
	}
	/* --follow-forks: the command's own end (its children's are not
	 * waited for by cabbpf) */
	if (s->root_pid) {
		char ex[96];

		describe_exit(s, ex, sizeof(ex));
		err |= json__kv_u64(w, "pid", (uint64_t)s->root_pid);
		err |= json__kv_bool(w, "exited", s->exited);
		err |= json__kv_string(w, "exit", ex[0] ? ex : NULL);
	}
	err |= json__end_object(w);
	err |= json__key(w, "processes");
	err |= json__begin_array(w);
	for (i = 0; i < np; i++) {
		const struct whole_proc *p = whole__proc(wh, i);

		for (k = 0; k < nr && runner__proc_pid(r, k) != (uint32_t)p->pid; k++)
			;
		err |= json__begin_object(w);
		err |= json__kv_u64(w, "pid", (uint64_t)p->pid);
		err |= json__kv_string(w, "command", p->comm);
		err |= json__kv_string(w, "binary", p->exe);
		err |= json__kv_string(w, "container", p->container[0] ? p->container : NULL);
		err |= json__kv_string(w, "found", found_keys[p->found]);
		err |= json__kv_u64(w, "execs", p->execs);
		{
			char ex[96];

			describe_status(p->exit_status, ex, sizeof(ex));
			err |= json__kv_string(w, "exit", p->exited && ex[0] ? ex : NULL);
		}
		err |= json__kv_string(w, "traced_from",
				       p->untraced_image ? NULL : from_keys[p->from]);
		err |= json__kv_double(w, "traced_from_s",
				       p->from == WHOLE_FROM_ATTACH ? p->traced_from_s : 0);
		err |= json__kv_string(w, "untraced_reason",
				       p->untraced_image ? p->image_why : NULL);
		err |= json__kv_double(w, "held_at_exec_ms", (double)p->held_ns / 1e6);
		err |= json__kv_bool(w, "return_probes", p->armed);
		err |= json__kv_bool(w, "guarded", p->guarded);
		err |= json__kv_string(w, "no_return_probes_reason",
				       !p->armed && !p->untraced_image ? p->unarmed_why : NULL);
		if (k < nr)
			err |= sections__proc_json(r, k, w) ? 1 : 0;
		else
			err |= json__kv_u64(w, "events", 0);
		err |= json__end_object(w);
	}
	err |= json__end_array(w);
	return err;
}

/* JSON "target": the process traced and how it ended. */
static int target_json(struct json *w, const struct summary *s)
{
	char ex[96];
	int err = 0;

	describe_exit(s, ex, sizeof(ex));
	err |= json__key(w, "target");
	err |= json__begin_object(w);
	err |= json__kv_u64(w, "pid", (uint64_t)s->pid);
	err |= json__kv_string(w, "command", s->comm);
	err |= json__kv_string(w, "binary", s->binary);
	err |= json__kv_bool(w, "exited", s->exited);
	err |= json__kv_string(w, "exit", ex[0] ? ex : NULL);
	err |= json__kv_u64(w, "execs", s->execs);
	/* its children: counted, never traced (null: not counted) */
	err |= json__key(w, "forks");
	err |= s->forks_known ? json__u64(w, s->forks) : json__null(w);
	err |= json__kv_bool(w, "exec_other_program", s->exec_other);
	err |= json__kv_bool(w, "exec_from_thread", s->exec_thread);
	return err | json__end_object(w);
}

/* The run's figures: why it stopped, what was traced, events, CPU. */
static int run_json(struct json *w, const struct summary *s)
{
	int err = 0;

	err |= json__kv_string(w, "stop_reason", s->stop_reason);
	err |= json__kv_u64(w, "functions_traced", s->nfuncs);
	err |= json__kv_u64(w, "functions_refused", s->refused);
	err |= json__kv_string(w, "attach", s->multi ? "uprobe_multi" : "perf_event");
	err |= json__kv_double(w, "duration_s", s->duration_s);
	err |= json__kv_u64(w, "events", s->events);
	err |= json__kv_double(w, "events_per_s",
			       s->duration_s > 0 ? (double)s->events / s->duration_s : 0);
	err |= json__kv_double(w, "cpu_s", s->cpu_s);
	if (s->ring_bytes)
		err |= json__kv_u64(w, "ring_bytes", s->ring_bytes);
	return err;
}

/* JSON "lost", "lost_per_cpu", "lost_by_kind": what the rings dropped,
 * by CPU and by kind, and which results each kind makes lower bounds. */
static int lost_json(struct json *w, const struct summary *s, const struct runner *r)
{
	unsigned i, k;
	int err = 0;

	err |= json__kv_u64(w, "lost", s->lost);
	err |= json__key(w, "lost_per_cpu");
	err |= json__begin_array(w);
	for (i = 0; i < s->ncpus; i++)
		err |= json__u64(w, s->lost_per_cpu ? s->lost_per_cpu[i] +
							  s->lost_per_cpu[s->ncpus + i] +
							  s->lost_per_cpu[2 * s->ncpus + i]
						    : 0);
	err |= json__end_array(w);
	err |= json__key(w, "lost_by_kind");
	err |= json__begin_object(w);
	for (k = 0; k < 3; k++) {
		uint64_t n = lost_of(s, k);

		err |= json__key(w, lost_kinds[k].name);
		err |= json__begin_object(w);
		err |= json__kv_u64(w, "lost", n);
		err |= json__key(w, "per_cpu");
		err |= json__begin_array(w);
		for (i = 0; i < s->ncpus; i++)
			err |= json__u64(w, s->lost_per_cpu ? s->lost_per_cpu[k * s->ncpus + i] : 0);
		err |= json__end_array(w);
		/* Whether results are lower bounds because of this kind's
		 * losses (for calls and I/O also records --cab-mode sampling
		 * overwrote), and which analyzers' counts. */
		err |= json__kv_bool(w, "lower_bound",
				     n > 0 || (lost_kinds[k].an && s->cab.overwritten));
		err |= json__key(w, "analyzers");
		if (lost_kinds[k].an) {
			err |= sections__json_lower_bounds(r, w, lost_kinds[k].an);
		} else {
			err |= json__begin_array(w);
			err |= json__end_array(w);
		}
		err |= json__end_object(w);
	}
	err |= json__key(w, "sched");
	err |= json__begin_object(w);
	err |= json__kv_u64(w, "lost", s->lost_sched);
	err |= json__kv_u64(w, "put_off_in_probe", s->sched_busy);
	err |= json__kv_u64(w, "switch_ins_unseen", s->sched_unseen);
	err |= json__end_object(w);
	return err | json__end_object(w);
}

#define CS struct cab_stats
static const struct emit_field cab_fields[] = {
	{"produced", NULL, EMIT_AT(CS, produced)},
	{"consumed", NULL, EMIT_AT(CS, consumed)},
	{"overwritten", NULL, EMIT_AT(CS, overwritten)},
	{"producer_stalls", NULL, EMIT_AT(CS, stalls)},
	{"producer_blocked_ns", NULL, EMIT_AT(CS, blocked_ns)},
	{"chunks_grown", NULL, EMIT_AT(CS, grown)},
};
#undef CS

static uint64_t guard_nsites(const void *obj)
{
	return ((const struct guard_stats *)obj)->nsites;
}

#define GS struct guard_stats
static const struct emit_field guard_fields[] = {
	{"sites", NULL, EMIT_GET(guard_nsites)},
	{"sites_reached", NULL, EMIT_AT(GS, sites_hit)},
	{"stops", NULL, EMIT_AT(GS, stops)},
	{"restored", NULL, EMIT_AT(GS, restored)},
	{"rearmed", NULL, EMIT_AT(GS, rearmed)},
	{"restored_at_detach", NULL, EMIT_AT(GS, at_detach)},
	{"detach_in_place", NULL, EMIT_AT(GS, detach_in_place)},
	{"detach_cut_short", NULL, EMIT_AT(GS, detach_cut_short)},
	{"unguarded", NULL, EMIT_AT(GS, unguarded)},
	{"failed", NULL, EMIT_AT(GS, failed)},
};
#undef GS

/* The loader's own machinery: the re-entry guard, the thread states, the
 * CAB buffers, --lossless's holds, the target guard, --bpf-stats. */
static int loader_json(struct json *w, const struct summary *s)
{
	unsigned i;
	int err = 0;

	err |= json__kv_u64(w, "reentry_skipped", s->reentry);
	if (s->has_tstates) {
		err |= json__key(w, "thread_states");
		err |= json__begin_object(w);
		err |= json__kv_u64(w, "in_task_storage", s->tstab_taken);
		err |= json__kv_u64(w, "events_without_state", s->nostate);
		err |= json__end_object(w);
	}
	err |= json__key(w, "cab");
	err |= json__begin_object(w);
	err |= json__kv_string(w, "mode", s->cab_sampling ? "sampling" : "exhaustive");
	err |= emit__json(w, cab_fields, EMIT_N(cab_fields), &s->cab);
	err |= json__end_object(w);
	if (s->lossless) {
		err |= json__key(w, "lossless");
		err |= json__begin_object(w);
		err |= json__kv_u64(w, "stop_requests", s->throttles);
		err |= json__kv_u64(w, "waits", s->guard ? s->guard->held : 0);
		err |= json__kv_u64(w, "waited_ns", s->guard ? s->guard->held_ns : 0);
		err |= json__kv_u64(w, "longest_wait_ns", s->guard ? s->guard->held_max_ns : 0);
		err |= json__kv_u64(w, "unheld_past_mark", s->unheld);
		err |= json__end_object(w);
	}
	if (s->guard) {
		err |= json__key(w, "guard");
		err |= json__begin_object(w);
		err |= emit__json(w, guard_fields, EMIT_N(guard_fields), s->guard);
		err |= json__end_object(w);
	}
	if (s->bpf_stats) {
		err |= json__key(w, "bpf_stats");
		err |= json__begin_object(w);
		for (i = 0; i < s->nprogs; i++) {
			err |= json__key(w, s->progs[i].name);
			err |= json__begin_object(w);
			err |= json__kv_u64(w, "runs", s->progs[i].runs);
			err |= json__kv_u64(w, "run_ns", s->progs[i].run_ns);
			err |= json__end_object(w);
		}
		err |= json__end_object(w);
	}
	return err;
}

/* The JSON report, section by section (docs/json-schema.md). */
static int write_json(struct json *w, const struct summary *s, struct runner *r,
		      const char *path)
{
	int err = 0;

	err |= json__begin_object(w);
	err |= json__kv_u64(w, "version", 1);
	if (s->kernel) {
		err |= json__key(w, "kernel");
		err |= features__json(w, s->kernel);
	}
	err |= s->whole ? whole_json(w, s, r) : target_json(w, s);
	if (s->sampling)
		err |= sampler__json(s->sampling, w);
	if (s->budget)
		err |= budget__json(s->budget, w);
	err |= run_json(w, s);
	err |= times_json(w, s, r);
	err |= lost_json(w, s, r);
	err |= loader_json(w, s);
	if (!err)
		err = sections__json(r, w);
	if (!err)
		err = outputs__json(s->outputs, "--json", path, w);
	err |= json__end_object(w);
	if (!err)
		err = json__finish(w);
	return err ? -EIO : 0;
}

int report__text_to(const char *path, const struct summary *s, struct runner *r)
{
	struct outfile of;
	int err;

	err = outfile__open(&of, path ? path : "-");
	if (err)
		return err;
	report__text(of.f, s, r);
	return outfile__finish(&of, ferror(of.f) ? -EIO : 0);
}

struct json_job {
	const struct summary *s;
	struct runner *r;
	const char *path;
};

static int json_body(struct json *w, void *arg)
{
	const struct json_job *j = arg;

	return write_json(w, j->s, j->r, j->path);
}

int report__json(const char *path, const struct summary *s, struct runner *r)
{
	struct json_job j = {s, r, path};

	return outfile__write_json(path, json_body, &j);
}

void report__summary_line(const struct summary *s)
{
	char ex[96];

	describe_exit(s, ex, sizeof(ex));
	fprintf(stderr,
		"cabbpf: %llu events in %.3f s (%.0f events/s), %llu lost; cabbpf CPU %.3f s "
		"(%.0f ns/event); stopped: %s%s%s\n",
		(unsigned long long)s->events, s->duration_s,
		s->duration_s > 0 ? (double)s->events / s->duration_s : 0.0,
		(unsigned long long)s->lost, s->cpu_s,
		s->events ? s->cpu_s * 1e9 / (double)s->events : 0.0, s->stop_reason,
		ex[0] ? ", target " : "", ex);
	if (s->whole) {
		struct whole_hold_figures hf;

		whole__hold_figures(s->whole, &hf);
		if (hf.n)
			fprintf(stderr,
				"cabbpf: %llu exec%s held until %s probes were in (programs not "
				"looked at yet, or guarded): %.1f ms each on average, %.1f ms at "
				"most, added to %s start\n",
				(unsigned long long)hf.n, hf.n == 1 ? "" : "s",
				hf.n == 1 ? "its" : "their", (double)hf.sum_ns / (double)hf.n / 1e6,
				(double)hf.max_ns / 1e6, hf.n == 1 ? "that program's" : "those programs'");
	}
	if (s->bpf_stats) {
		unsigned i;

		fprintf(stderr, "cabbpf: BPF run time (kernel statistics, their own cost included):");
		for (i = 0; i < s->nprogs; i++)
			fprintf(stderr, "%s %s %.1f ns x %llu", i ? "," : "", s->progs[i].name,
				(double)s->progs[i].run_ns / (double)s->progs[i].runs,
				(unsigned long long)s->progs[i].runs);
		fprintf(stderr, "%s\n", s->nprogs ? "" : " no program ran");
	}
}
