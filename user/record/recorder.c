// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/outfile.h"
#include "user/record/recorder.h"

/* zstd level 1: ~0.5 GB/s per core here, several times the rate the rings
 * deliver; higher levels cost the analysis thread more than they save. */
#define RECORD_ZSTD_LEVEL 1

struct recorder {
	struct outfile of;
	bool open, finished;
	struct recfmt_writer *w;
	pthread_mutex_t lock; /* the analyzer threads' taps */
	int tap_err;
};

int recorder__open(const char *path, struct recorder **out)
{
	struct recorder *rc;
	int err;

	*out = NULL;
	rc = calloc(1, sizeof(*rc));
	if (!rc)
		return -ENOMEM;
	pthread_mutex_init(&rc->lock, NULL);
	err = outfile__open(&rc->of, path);
	if (err) {
		log_err("cannot write the recording %s: %s", path, outfile__strerror(err));
		goto cleanup;
	}
	rc->open = true;
	err = recfmt__writer_new(rc->of.f, RECORD_ZSTD_LEVEL, &rc->w);
	if (err) {
		log_err("starting the recording %s: %s", path, strerror(-err));
		goto cleanup;
	}
	*out = rc;
	return 0;
cleanup:
	recorder__free(rc);
	return err;
}

int recorder__begin(struct recorder *rc, const struct recfmt_meta *m,
		    const struct recfmt_funcs *fn)
{
	int err = recfmt__put_meta(rc->w, m);

	if (!err)
		err = recfmt__put_funcs(rc->w, fn);
	if (err)
		log_err("writing the recording %s: %s", rc->of.path, strerror(-err));
	return err;
}

void recorder__tap(void *ctx, uint32_t tid, uint64_t seq, const uint64_t *recs, uint32_t nrec)
{
	struct recorder *rc = ctx;
	int err;

	if (!nrec)
		return;
	pthread_mutex_lock(&rc->lock);
	err = recfmt__put_chunk(rc->w, tid, seq, recs, nrec);
	if (err && !rc->tap_err)
		rc->tap_err = err;
	pthread_mutex_unlock(&rc->lock);
}

int recorder__finish(struct recorder *rc, const struct summary *sm,
		     const struct recfmt_source *src)
{
	struct recfmt_summary s;
	uint64_t raw, written, records;
	int err;

	memset(&s, 0, sizeof(s));
	s.nfuncs = sm->nfuncs;
	s.refused = sm->refused;
	s.duration_s = sm->duration_s;
	s.cpu_s = sm->cpu_s;
	s.events = sm->events;
	s.lost = sm->lost;
	s.lost_calls = sm->lost_calls;
	s.lost_io = sm->lost_io;
	s.lost_guard = sm->lost_guard;
	s.lost_sched = sm->lost_sched;
	s.sched_busy = sm->sched_busy;
	s.sched_unseen = sm->sched_unseen;
	s.reentry = sm->reentry;
	s.tstab_taken = sm->tstab_taken;
	s.nostate = sm->nostate;
	s.ring_bytes = sm->ring_bytes;
	s.ncpus = sm->ncpus;
	s.lost_per_cpu = sm->lost_per_cpu;
	s.cab = sm->cab;
	s.stop_reason = sm->stop_reason;
	s.exited = sm->exited;
	s.exit_status = sm->exit_status;
	s.execs = sm->execs;
	s.forks = sm->forks;
	s.cpu_sample_ns = sm->cpu_sample_ns;
	s.samples_probe = sm->samples_probe;
	s.samples_nostate = sm->samples_nostate;
	s.samples_lost = sm->samples_lost;
	s.samples_kernel = sm->samples_kernel;
	s.samples_syscall = sm->samples_syscall;
	s.samples_trap = sm->samples_trap;
	s.samples_fault = sm->samples_fault;
	s.samples_resume = sm->samples_resume;
	s.exec_other = sm->exec_other;
	s.exec_thread = sm->exec_thread;
	s.has_guard = sm->guard != NULL;
	if (sm->guard)
		s.guard = *sm->guard;
	s.has_kernel = sm->kernel != NULL;
	if (sm->kernel)
		s.kernel = *sm->kernel;
	err = rc->tap_err;
	if (!err)
		err = recfmt__put_summary(rc->w, &s);
	if (!err && src)
		err = recfmt__put_source(rc->w, src);
	if (!err)
		err = recfmt__finish(rc->w);
	if (err) {
		/* the write's own errno (ENOSPC...) where one failed */
		err = outfile__finish(&rc->of, err);
		rc->open = false;
		log_err("writing the recording %s: %s", rc->of.path, strerror(-err));
		return err;
	}
	recfmt__writer_stats(rc->w, &raw, NULL, &records);
	err = outfile__commit(&rc->of);
	rc->open = false;
	if (err) {
		log_err("writing the recording %s: %s", rc->of.path, strerror(-err));
		return err;
	}
	rc->finished = true;
	recfmt__writer_stats(rc->w, NULL, &written, NULL);
	log_info("recorded %llu records into %s: %.2f MiB (%.2f bytes/record, %.1fx compressed)",
		 (unsigned long long)records, rc->of.path, (double)written / (1 << 20),
		 records ? (double)written / (double)records : 0.0,
		 written ? (double)raw / (double)written : 0.0);
	return 0;
}

void recorder__free(struct recorder *rc)
{
	if (!rc)
		return;
	if (rc->open)
		outfile__abort(&rc->of);
	recfmt__writer_free(rc->w);
	pthread_mutex_destroy(&rc->lock);
	free(rc);
}
