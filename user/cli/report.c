// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "common/outfile.h"
#include "user/cli/report.h"
#include "common/json.h"
#include "pipeline/runner.h"
#include "user/trace/budget.h"

/* "exited with status 3", "killed by signal 9", or "" when unknown. */
static void describe_exit(const struct summary *s, char *buf, size_t len)
{
	buf[0] = 0;
	if (!s->exited || s->exit_status < 0)
		return;
	if (WIFEXITED(s->exit_status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(s->exit_status));
	else if (WIFSIGNALED(s->exit_status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(s->exit_status),
			 strsignal(WTERMSIG(s->exit_status)));
}

void report__text(FILE *out, const struct summary *s, struct runner *r)
{
	fprintf(out, "cabbpf report: pid %d (%s) %s\n", (int)s->pid, s->comm, s->binary);
	fprintf(out, "  %u function%s traced%s, %.3f s, %llu events, %llu lost\n", s->nfuncs,
		s->nfuncs == 1 ? "" : "s", s->refused ? " (some refused by the kernel)" : "",
		s->duration_s, (unsigned long long)s->events, (unsigned long long)s->lost);
	if (s->execs)
		fprintf(out, "  execve: %llu; %s\n", (unsigned long long)s->execs,
			s->exec_other ? "the last one ran ANOTHER program, whose calls are not traced"
				      : "the same program, traced on (the old image's frames ended "
					"by exec)");
	if (s->lost)
		fprintf(out,
			"  WARNING: %llu events were lost (kernel ring full): %llu calls and "
			"returns, %llu I/O, %llu guard. %s; retry with a larger --ring-size\n",
			(unsigned long long)s->lost, (unsigned long long)s->lost_calls,
			(unsigned long long)s->lost_io, (unsigned long long)s->lost_guard,
			s->lost_calls ? "Call counts, edges and times are lower bounds"
				      : "I/O byte counts are lower bounds");
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
	if (s->sampling) {
		fputs("  ", out);
		sampler__text(s->sampling, out);
	}
	if (s->budget) {
		fputs("  ", out);
		budget__text(s->budget, out);
	}
	if (s->lost_sched || s->sched_busy)
		fprintf(out,
			"  off-CPU intervals: %llu switch-in events put off (ring full), %llu "
			"(thread inside a probe): each carried to the thread's next switch-in\n",
			(unsigned long long)s->lost_sched, (unsigned long long)s->sched_busy);
	fputc('\n', out);
	runner__report_text(r, out);
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

static int write_json(struct json *w, const struct summary *s, struct runner *r)
{
	char ex[96];
	unsigned i, k;
	int err = 0;

	describe_exit(s, ex, sizeof(ex));
	err |= json__begin_object(w);
	err |= json__key(w, "version");
	err |= json__u64(w, 1);
	err |= json__key(w, "target");
	err |= json__begin_object(w);
	err |= json__key(w, "pid");
	err |= json__u64(w, (uint64_t)s->pid);
	err |= json__key(w, "command");
	err |= json__string(w, s->comm);
	err |= json__key(w, "binary");
	err |= json__string(w, s->binary);
	err |= json__key(w, "exited");
	err |= json__bool(w, s->exited);
	err |= json__key(w, "exit");
	err |= json__string(w, ex[0] ? ex : NULL);
	err |= json__key(w, "execs");
	err |= json__u64(w, s->execs);
	err |= json__key(w, "exec_other_program");
	err |= json__bool(w, s->exec_other);
	err |= json__end_object(w);
	if (s->sampling)
		err |= sampler__json(s->sampling, w);
	if (s->budget)
		err |= budget__json(s->budget, w);
	err |= json__key(w, "stop_reason");
	err |= json__string(w, s->stop_reason);
	err |= json__key(w, "functions_traced");
	err |= json__u64(w, s->nfuncs);
	err |= json__key(w, "functions_refused");
	err |= json__u64(w, s->refused);
	err |= json__key(w, "attach");
	err |= json__string(w, s->multi ? "uprobe_multi" : "perf_event");
	err |= json__key(w, "duration_s");
	err |= json__double(w, s->duration_s);
	err |= json__key(w, "events");
	err |= json__u64(w, s->events);
	err |= json__key(w, "events_per_s");
	err |= json__double(w, s->duration_s > 0 ? (double)s->events / s->duration_s : 0);
	err |= json__key(w, "cpu_s");
	err |= json__double(w, s->cpu_s);
	err |= json__key(w, "lost");
	err |= json__u64(w, s->lost);
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
		static const char *const kinds[] = {"calls", "io", "guard"};
		const uint64_t tot[] = {s->lost_calls, s->lost_io, s->lost_guard};

		err |= json__key(w, kinds[k]);
		err |= json__begin_object(w);
		err |= json__key(w, "lost");
		err |= json__u64(w, tot[k]);
		err |= json__key(w, "per_cpu");
		err |= json__begin_array(w);
		for (i = 0; i < s->ncpus; i++)
			err |= json__u64(w, s->lost_per_cpu ? s->lost_per_cpu[k * s->ncpus + i] : 0);
		err |= json__end_array(w);
		err |= json__end_object(w);
	}
	err |= json__key(w, "sched");
	err |= json__begin_object(w);
	err |= json__key(w, "lost");
	err |= json__u64(w, s->lost_sched);
	err |= json__key(w, "put_off_in_probe");
	err |= json__u64(w, s->sched_busy);
	err |= json__end_object(w);
	err |= json__end_object(w);
	err |= json__key(w, "reentry_skipped");
	err |= json__u64(w, s->reentry);
	err |= json__key(w, "cab");
	err |= json__begin_object(w);
	err |= json__key(w, "mode");
	err |= json__string(w, s->cab_sampling ? "sampling" : "exhaustive");
	err |= json__key(w, "produced");
	err |= json__u64(w, s->cab.produced);
	err |= json__key(w, "consumed");
	err |= json__u64(w, s->cab.consumed);
	err |= json__key(w, "overwritten");
	err |= json__u64(w, s->cab.overwritten);
	err |= json__key(w, "producer_stalls");
	err |= json__u64(w, s->cab.stalls);
	err |= json__key(w, "producer_blocked_ns");
	err |= json__u64(w, s->cab.blocked_ns);
	err |= json__key(w, "chunks_grown");
	err |= json__u64(w, s->cab.grown);
	err |= json__end_object(w);
	if (s->lossless) {
		err |= json__key(w, "lossless");
		err |= json__begin_object(w);
		err |= json__key(w, "stop_requests");
		err |= json__u64(w, s->throttles);
		err |= json__key(w, "waits");
		err |= json__u64(w, s->guard ? s->guard->held : 0);
		err |= json__key(w, "waited_ns");
		err |= json__u64(w, s->guard ? s->guard->held_ns : 0);
		err |= json__key(w, "longest_wait_ns");
		err |= json__u64(w, s->guard ? s->guard->held_max_ns : 0);
		err |= json__key(w, "unheld_past_mark");
		err |= json__u64(w, s->unheld);
		err |= json__end_object(w);
	}
	if (s->guard) {
		err |= json__key(w, "guard");
		err |= json__begin_object(w);
		err |= json__key(w, "sites");
		err |= json__u64(w, s->guard->nsites);
		err |= json__key(w, "sites_reached");
		err |= json__u64(w, s->guard->sites_hit);
		err |= json__key(w, "stops");
		err |= json__u64(w, s->guard->stops);
		err |= json__key(w, "restored");
		err |= json__u64(w, s->guard->restored);
		err |= json__key(w, "rearmed");
		err |= json__u64(w, s->guard->rearmed);
		err |= json__key(w, "restored_at_detach");
		err |= json__u64(w, s->guard->at_detach);
		err |= json__key(w, "unguarded");
		err |= json__u64(w, s->guard->unguarded);
		err |= json__key(w, "failed");
		err |= json__u64(w, s->guard->failed);
		err |= json__end_object(w);
	}
	if (!err)
		err = runner__report_json(r, w);
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
	if (ferror(of.f)) {
		outfile__abort(&of);
		return -EIO;
	}
	return outfile__commit(&of);
}

int report__json(const char *path, const struct summary *s, struct runner *r)
{
	struct json *w = NULL;
	struct outfile of;
	int err;

	/* A new file renamed over the path: never through a symlink. */
	err = outfile__open(&of, path);
	if (err)
		return err;
	err = json__new(of.f, true, &w);
	if (!err)
		err = write_json(w, s, r);
	json__free(w);
	if (err) {
		outfile__abort(&of);
		return err;
	}
	return outfile__commit(&of);
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
}
