// SPDX-License-Identifier: BSD-2-Clause
/*
 * The recording file written (recfmt.h, docs/record-format.md): blocks
 * built in memory, little-endian, then streamed through zstd. The reader
 * is recfmt_read.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "common/log.h"
#include "user/record/recfmt.h"
#include "user/record/recfmt_int.h"

/* ------------------------------------------------------------ buffers -- */

static void b_put(struct bytes *b, const void *v, size_t n)
{
	b_room(b, n);
	if (b->nomem)
		return;
	memcpy(b->p + b->len, v, n);
	b->len += n;
}

/* The format is little-endian; so is every machine cabbpf runs on (x86-64,
 * arm64), which the build checks. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the recording format is little-endian: add byte swaps for this machine"
#endif

static void b_u32(struct bytes *b, uint32_t v)
{
	b_put(b, &v, 4);
}

static void b_u64(struct bytes *b, uint64_t v)
{
	b_put(b, &v, 8);
}

static void b_f64(struct bytes *b, double v)
{
	b_put(b, &v, 8);
}

/* Returns false if s is too long for the format. NULL is written as "". */
static bool b_str(struct bytes *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n > RECFMT_MAX_STR)
		return false;
	b_u32(b, (uint32_t)n);
	b_put(b, s ? s : "", n);
	return true;
}

/* ------------------------------------------------------------- writer -- */

#define WRITER_BATCH (256u << 10) /* blocks gathered before compressing */

struct recfmt_writer {
	FILE *f;
	ZSTD_CCtx *cz;
	struct bytes in;  /* blocks not compressed yet */
	struct bytes out; /* the compressor's output buffer */
	uint64_t raw, written, records, chunks;
	int err; /* sticky */
};

/* Compress what is in w->in (mode: continue, or end the frame) and write
 * the output. */
static int w_compress(struct recfmt_writer *w, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = {w->in.p, w->in.len, 0};
	size_t left;

	do {
		ZSTD_outBuffer out = {w->out.p, w->out.cap, 0};

		left = ZSTD_compressStream2(w->cz, &out, &in, mode);
		if (ZSTD_isError(left)) {
			log_err("zstd: %s", ZSTD_getErrorName(left));
			return -EIO;
		}
		if (out.pos && fwrite(w->out.p, 1, out.pos, w->f) != out.pos)
			return -EIO;
		w->written += out.pos;
	} while (mode == ZSTD_e_end ? left != 0 : in.pos < in.size);
	w->raw += w->in.len;
	w->in.len = 0;
	return 0;
}

int recfmt__writer_new(FILE *f, int lvl, struct recfmt_writer **out)
{
	struct recfmt_writer *w;
	uint32_t hdr[2] = {RECFMT_VERSION, 0};
	int err = -ENOMEM;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->f = f;
	w->cz = ZSTD_createCCtx();
	b_room(&w->in, WRITER_BATCH + 4096);
	b_room(&w->out, ZSTD_CStreamOutSize());
	if (!w->cz || w->in.nomem || w->out.nomem)
		goto cleanup;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cz, ZSTD_c_compressionLevel, lvl)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cz, ZSTD_c_checksumFlag, 1))) {
		err = -EINVAL;
		goto cleanup;
	}
	if (fwrite(RECFMT_MAGIC, 1, 8, f) != 8 || fwrite(hdr, 4, 2, f) != 2) {
		err = -EIO;
		goto cleanup;
	}
	w->written = RECFMT_HEADER_BYTES;
	*out = w;
	return 0;
cleanup:
	recfmt__writer_free(w);
	return err;
}

/* Append a finished block (type, payload) to the batch. */
static int w_block(struct recfmt_writer *w, uint32_t type, const struct bytes *payload)
{
	if (w->err)
		return w->err;
	if (payload->nomem)
		return w->err = -ENOMEM;
	if (payload->len > RECFMT_MAX_BLOCK)
		return w->err = -E2BIG;
	b_u32(&w->in, type);
	b_u32(&w->in, (uint32_t)payload->len);
	b_put(&w->in, payload->p, payload->len);
	if (w->in.nomem)
		return w->err = -ENOMEM;
	if (w->in.len >= WRITER_BATCH)
		w->err = w_compress(w, ZSTD_e_continue);
	return w->err;
}

int recfmt__put_meta(struct recfmt_writer *w, const struct recfmt_meta *m)
{
	struct bytes b = {0};
	bool ok;
	int err;

	b_u32(&b, (uint32_t)m->pid);
	ok = b_str(&b, m->comm) && b_str(&b, m->binary);
	b_u32(&b, m->flags);
	b_u32(&b, m->ncpus);
	b_u64(&b, m->start_realtime_ns);
	ok = ok && b_str(&b, m->tool);
	err = ok ? w_block(w, RECFMT_META, &b) : (w->err = -EINVAL);
	free(b.p);
	return err;
}

int recfmt__put_funcs(struct recfmt_writer *w, const struct recfmt_funcs *fn)
{
	struct bytes b = {0};
	bool ok = true;
	uint32_t i;
	int err;

	b_u32(&b, fn->n);
	/* bit 0: the probes' cost; bit 1 (version 9): their aftermath */
	b_u32(&b, (fn->probe_ns != NULL) | (fn->aft_in && fn->aft_out ? 2u : 0u));
	for (i = 0; i < fn->n && ok; i++) {
		ok = b_str(&b, fn->names[i]) && b_str(&b, fn->lnames ? fn->lnames[i] : NULL) &&
		     b_str(&b, fn->binaries ? fn->binaries[i] : NULL);
		b_u64(&b, fn->offsets ? fn->offsets[i] : 0);
		b_f64(&b, fn->probe_ns ? fn->probe_ns[i] : 0);
		if (fn->aft_in && fn->aft_out) {
			b_u32(&b, fn->aft_in[i]);
			b_u32(&b, fn->aft_out[i]);
		}
	}
	err = ok ? w_block(w, RECFMT_FUNCS, &b) : (w->err = -EINVAL);
	free(b.p);
	return err;
}

int recfmt__put_source(struct recfmt_writer *w, const struct recfmt_source *s)
{
	struct bytes b = {0};
	bool ok = true;
	uint32_t i;
	int err;

	b_u32(&b, s->n);
	b_u32(&b, s->nbins);
	for (i = 0; i < s->nbins && ok; i++)
		ok = b_str(&b, s->bins[i].path) && b_str(&b, s->bins[i].build_id);
	for (i = 0; i < s->n && ok; i++) {
		const struct an_src *x = &s->src[i];

		b_u32(&b, x->bin);
		b_u64(&b, x->vaddr);
		b_u64(&b, x->size);
		b_u64(&b, x->foff);
		ok = b_str(&b, x->file);
		b_u32(&b, x->line);
	}
	err = ok ? w_block(w, RECFMT_SOURCE, &b) : (w->err = -EINVAL);
	free(b.p);
	return err;
}

int recfmt__put_chunk(struct recfmt_writer *w, uint32_t tid, uint64_t seq, const uint64_t *recs,
		      uint32_t nrec)
{
	size_t n = (size_t)nrec * 3 * sizeof(uint64_t);

	if (w->err)
		return w->err;
	/* Straight into the batch: the hot path copies the records once. */
	b_u32(&w->in, RECFMT_CHUNK);
	b_u32(&w->in, (uint32_t)(16 + n));
	b_u32(&w->in, tid);
	b_u32(&w->in, nrec);
	b_u64(&w->in, seq);
	b_put(&w->in, recs, n);
	if (w->in.nomem)
		return w->err = -ENOMEM;
	w->chunks++;
	w->records += nrec;
	if (w->in.len >= WRITER_BATCH)
		w->err = w_compress(w, ZSTD_e_continue);
	return w->err;
}

int recfmt__put_summary(struct recfmt_writer *w, const struct recfmt_summary *s)
{
	const uint64_t *cab = (const uint64_t *)&s->cab;
	struct bytes b = {0};
	uint32_t i;
	bool ok;
	int err;

	b_u32(&b, s->nfuncs);
	b_u32(&b, s->refused);
	b_f64(&b, s->duration_s);
	b_f64(&b, s->cpu_s);
	b_u64(&b, s->events);
	b_u64(&b, s->lost);
	b_u64(&b, s->lost_calls);
	b_u64(&b, s->lost_io);
	b_u64(&b, s->lost_guard);
	b_u64(&b, s->lost_sched);
	b_u64(&b, s->sched_busy);
	b_u64(&b, s->reentry);
	b_u32(&b, s->ncpus);
	for (i = 0; i < 3 * s->ncpus; i++)
		b_u64(&b, s->lost_per_cpu ? s->lost_per_cpu[i] : 0);
	for (i = 0; i < sizeof(s->cab) / sizeof(uint64_t); i++)
		b_u64(&b, cab[i]);
	ok = b_str(&b, s->stop_reason);
	b_u32(&b, (uint32_t)s->exited | (uint32_t)s->exec_other << 1 | (uint32_t)s->has_guard << 2 |
			  (uint32_t)s->exec_thread << 3);
	b_u32(&b, (uint32_t)s->exit_status);
	b_u64(&b, s->execs);
	b_u64(&b, s->guard.sites_hit);
	b_u64(&b, s->guard.stops);
	b_u64(&b, s->guard.restored);
	b_u64(&b, s->guard.rearmed);
	b_u64(&b, s->guard.unguarded);
	b_u64(&b, s->guard.failed);
	b_u64(&b, s->guard.at_detach);
	b_u32(&b, s->guard.nsites);
	b_u64(&b, s->tstab_taken);
	b_u64(&b, s->nostate);
	b_u64(&b, s->ring_bytes);
	b_u64(&b, s->sched_unseen);
	b_u64(&b, s->guard.detach_in_place);
	b_u64(&b, s->guard.detach_cut_short);
	/* version 7: the kernel, its features by name (the names stay; a
	 * reader ignores one it does not know) */
	b_u32(&b, s->has_kernel);
	if (s->has_kernel) {
		ok &= b_str(&b, s->kernel.release);
		ok &= b_str(&b, s->kernel.lockdown);
		b_u32(&b, KF__N);
		for (i = 0; i < KF__N; i++) {
			ok &= b_str(&b, features__info[i].name);
			b_u32(&b, s->kernel.has[i]);
		}
	}
	/* version 8: the processes the target started */
	b_u64(&b, s->forks);
	/* version 9: the sampled times */
	b_u64(&b, s->cpu_sample_ns);
	b_u64(&b, s->samples_probe);
	b_u64(&b, s->samples_nostate);
	b_u64(&b, s->samples_lost);
	/* version 10: the clock's kernel-mode samples */
	b_u32(&b, s->samples_kernel);
	b_u64(&b, s->samples_syscall);
	b_u64(&b, s->samples_trap);
	/* version 11: the page faults', and the late ones at a trap's return */
	b_u64(&b, s->samples_fault);
	b_u64(&b, s->samples_resume);
	err = ok ? w_block(w, RECFMT_SUMMARY, &b) : (w->err = -EINVAL);
	free(b.p);
	return err;
}

int recfmt__finish(struct recfmt_writer *w)
{
	struct bytes b = {0};

	b_u64(&b, w->chunks);
	b_u64(&b, w->records);
	w_block(w, RECFMT_END, &b);
	free(b.p);
	if (!w->err)
		w->err = w_compress(w, ZSTD_e_end);
	if (!w->err && fflush(w->f))
		w->err = -EIO;
	return w->err;
}

void recfmt__writer_stats(const struct recfmt_writer *w, uint64_t *raw, uint64_t *written,
			  uint64_t *records)
{
	if (raw)
		*raw = w->raw;
	if (written)
		*written = w->written;
	if (records)
		*records = w->records;
}

void recfmt__writer_free(struct recfmt_writer *w)
{
	if (!w)
		return;
	ZSTD_freeCCtx(w->cz);
	free(w->in.p);
	free(w->out.p);
	free(w);
}
