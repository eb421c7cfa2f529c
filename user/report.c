// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "user/report.h"
#include "analyzers/json.h"
#include "analyzers/runner.h"

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
		s->nfuncs == 1 ? "" : "s", s->skipped ? " (some refused by the kernel)" : "",
		s->duration_s, (unsigned long long)s->events, (unsigned long long)s->lost);
	if (s->lost)
		fprintf(out, "  WARNING: %llu events were lost (kernel ring full): counts are "
			     "lower bounds; retry with a larger --ring-size\n",
			(unsigned long long)s->lost);
	fputc('\n', out);
	runner__report_text(r, out);
}

static int write_json(struct json *w, const struct summary *s, struct runner *r)
{
	char ex[96];
	unsigned i;
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
	err |= json__end_object(w);
	err |= json__key(w, "stop_reason");
	err |= json__string(w, s->stop_reason);
	err |= json__key(w, "functions_traced");
	err |= json__u64(w, s->nfuncs);
	err |= json__key(w, "functions_refused");
	err |= json__u64(w, s->skipped);
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
		err |= json__u64(w, s->lost_per_cpu ? s->lost_per_cpu[i] : 0);
	err |= json__end_array(w);
	err |= json__key(w, "reentry_skipped");
	err |= json__u64(w, s->reentry);
	err |= json__key(w, "cab");
	err |= json__begin_object(w);
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
	if (!err)
		err = runner__report_json(r, w);
	err |= json__end_object(w);
	if (!err)
		err = json__finish(w);
	return err ? -EIO : 0;
}

int report__json(const char *path, const struct summary *s, struct runner *r)
{
	struct json *w = NULL;
	FILE *f;
	int err;

	f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	if (!f)
		return -errno;
	err = json__new(f, true, &w);
	if (!err)
		err = write_json(w, s, r);
	json__free(w);
	if (f != stdout) {
		if (fclose(f) && !err)
			err = -errno;
	} else if (fflush(f) && !err) {
		err = -errno;
	}
	return err;
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
