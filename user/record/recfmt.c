// SPDX-License-Identifier: BSD-2-Clause
/*
 * The recording file: see recfmt.h and docs/record-format.md. Blocks are
 * built in memory, little-endian, then streamed through zstd. The reader
 * decompresses on demand into a window that always holds at least the
 * block being parsed, so a recording of any length is read in bounded
 * memory (a block is at most RECFMT_MAX_BLOCK bytes).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "common/log.h"
#include "user/record/recfmt.h"

/* ------------------------------------------------------------ buffers -- */

struct bytes {
	uint8_t *p;
	size_t len, cap;
	bool nomem;
};

static void b_room(struct bytes *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->nomem || b->len + n <= b->cap)
		return;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->nomem = true;
		return;
	}
	b->p = p;
	b->cap = cap;
}

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
	b_u32(&b, fn->probe_ns != NULL);
	for (i = 0; i < fn->n && ok; i++) {
		ok = b_str(&b, fn->names[i]) && b_str(&b, fn->lnames ? fn->lnames[i] : NULL) &&
		     b_str(&b, fn->binaries ? fn->binaries[i] : NULL);
		b_u64(&b, fn->offsets ? fn->offsets[i] : 0);
		b_f64(&b, fn->probe_ns ? fn->probe_ns[i] : 0);
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

/* ------------------------------------------------------------- reader -- */

struct recfmt_reader {
	FILE *f;
	const char *name;
	uint32_t version;
	ZSTD_DCtx *dz;
	uint8_t *zin; /* compressed input */
	size_t zin_cap;
	ZSTD_inBuffer in;
	uint64_t zpos;	 /* compressed bytes consumed, from the file's start */
	size_t zlast;	 /* ZSTD_decompressStream's last hint: 0 = frame complete */
	bool eof;	 /* the file has no more bytes */
	struct bytes win; /* decompressed bytes not parsed yet start at wpos */
	size_t wpos;
	uint64_t base; /* stream offset of win.p[0] */
	int stage;     /* blocks read so far: 0 none, 1 META, 2 FUNCS, 3 SUMMARY, 4 END,
			  5 SOURCE (after SUMMARY) */
	uint64_t chunks, records;
	/* META */
	struct recfmt_meta meta;
	char *comm, *binary, *tool;
	/* FUNCS */
	struct recfmt_funcs fn;
	char **names, **lnames, **binaries;
	uint64_t *offsets;
	double *probe_ns;
	/* SOURCE */
	struct recfmt_source src;
	struct an_src *srcv;
	struct an_bin *binv;
	char **srcfiles; /* src.n, the strings behind srcv[].file */
	/* SUMMARY */
	struct recfmt_summary sum;
	char *stop_reason;
	uint64_t *lost_per_cpu;
	/* CHUNK */
	uint64_t *recs;
	size_t recs_cap;
	bool failed; /* an error was said */
};

/* Say a corrupt or truncated file once, with the position. Returns -EINVAL. */
static int corrupt(struct recfmt_reader *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	char what[256];

	if (r->failed)
		return -EINVAL;
	r->failed = true;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	log_err("%s: corrupt or truncated recording at byte %llu of its data (compressed: byte "
		"%llu of the file): %s",
		r->name, (unsigned long long)off, (unsigned long long)r->zpos, what);
	return -EINVAL;
}

int recfmt__reader_new(FILE *f, const char *name, struct recfmt_reader **out)
{
	struct recfmt_reader *r;
	uint8_t hdr[RECFMT_HEADER_BYTES];
	uint32_t ver, flags;
	size_t got;

	*out = NULL;
	got = fread(hdr, 1, sizeof(hdr), f);
	if (got < 8 || memcmp(hdr, RECFMT_MAGIC, 8)) {
		log_err("%s: not a cabbpf recording (byte 0: no '%s' signature; make one with "
			"cabbpf record -o FILE)",
			name, RECFMT_MAGIC);
		return -EINVAL;
	}
	if (got < sizeof(hdr)) {
		log_err("%s: truncated recording: %zu bytes, the header alone is %d", name, got,
			RECFMT_HEADER_BYTES);
		return -EINVAL;
	}
	memcpy(&ver, hdr + 8, 4);
	if (ver < 1 || ver > RECFMT_VERSION) {
		log_err("%s: recording format version %u (byte 8); this cabbpf reads versions 1 to "
			"%u",
			name, ver, RECFMT_VERSION);
		return -EINVAL;
	}
	memcpy(&flags, hdr + 12, 4);
	if (flags) { /* reserved: a later version's flags would bump the version */
		log_err("%s: corrupt recording header: flags 0x%x at byte 12 (0 expected)", name,
			flags);
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->f = f;
	r->name = name;
	r->version = ver;
	r->zpos = RECFMT_HEADER_BYTES;
	r->zlast = 1;
	r->zin_cap = ZSTD_DStreamInSize();
	r->zin = malloc(r->zin_cap);
	r->dz = ZSTD_createDCtx();
	if (!r->zin || !r->dz) {
		recfmt__reader_free(r);
		return -ENOMEM;
	}
	r->in = (ZSTD_inBuffer){r->zin, 0, 0};
	*out = r;
	return 0;
}

/* Make n bytes available at win.p + wpos. Returns 1, 0 at a clean end of
 * the data (nothing left, frame complete), -EINVAL (truncated, corrupt:
 * said), -EIO or -ENOMEM. */
static int need(struct recfmt_reader *r, size_t n)
{
	while (r->win.len - r->wpos < n) {
		ZSTD_outBuffer out;
		size_t ret, pos0;

		if (r->wpos) { /* slide the window: parsed bytes go */
			memmove(r->win.p, r->win.p + r->wpos, r->win.len - r->wpos);
			r->win.len -= r->wpos;
			r->base += r->wpos;
			r->wpos = 0;
		}
		b_room(&r->win, n > 65536 ? n : 65536);
		if (r->win.nomem)
			return -ENOMEM;
		if (r->in.pos == r->in.size && !r->eof) {
			r->in.size = fread(r->zin, 1, r->zin_cap, r->f);
			r->in.pos = 0;
			if (!r->in.size) {
				if (ferror(r->f)) {
					log_err("%s: reading: %s", r->name, strerror(errno));
					return -EIO;
				}
				r->eof = true;
			}
		}
		if (r->in.pos == r->in.size && r->eof) {
			if (r->win.len == r->wpos && r->zlast == 0)
				return 0;
			return corrupt(r, r->base + r->win.len,
				       "the file ends inside %s (%zu more bytes were needed)",
				       r->zlast ? "the compressed stream" : "a block",
				       n - (r->win.len - r->wpos));
		}
		out = (ZSTD_outBuffer){r->win.p + r->win.len, r->win.cap - r->win.len, 0};
		pos0 = r->in.pos;
		ret = ZSTD_decompressStream(r->dz, &out, &r->in);
		r->zpos += r->in.pos - pos0;
		if (ZSTD_isError(ret))
			return corrupt(r, r->base + r->win.len, "zstd: %s", ZSTD_getErrorName(ret));
		r->win.len += out.pos;
		r->zlast = ret;
	}
	return 1;
}

/* A bounded cursor over one block's payload. */
struct cur {
	struct recfmt_reader *r;
	const uint8_t *p;
	size_t len, off;
	uint64_t base; /* stream offset of p[0] */
	bool bad;
};

static bool c_get(struct cur *c, void *v, size_t n)
{
	if (c->bad || c->len - c->off < n) {
		if (!c->bad)
			corrupt(c->r, c->base + c->off, "a field runs past the end of its block");
		c->bad = true;
		memset(v, 0, n);
		return false;
	}
	memcpy(v, c->p + c->off, n);
	c->off += n;
	return true;
}

static uint32_t c_u32(struct cur *c)
{
	uint32_t v;

	c_get(c, &v, 4);
	return v;
}

static uint64_t c_u64(struct cur *c)
{
	uint64_t v;

	c_get(c, &v, 8);
	return v;
}

static double c_f64(struct cur *c)
{
	double v;

	c_get(c, &v, 8);
	return v;
}

/* A string: copied, NUL-terminated. NULL when bad (said) or out of memory
 * (c->bad set, r->failed not: the caller tells them apart). */
static char *c_str(struct cur *c)
{
	uint64_t at = c->base + c->off;
	uint32_t n = c_u32(c);
	char *s;

	if (c->bad)
		return NULL;
	if (n > RECFMT_MAX_STR || c->len - c->off < n) {
		corrupt(c->r, at, "a string of %u bytes does not fit its block", n);
		c->bad = true;
		return NULL;
	}
	if (memchr(c->p + c->off, 0, n)) {
		corrupt(c->r, at, "a string holds a NUL byte");
		c->bad = true;
		return NULL;
	}
	s = malloc((size_t)n + 1);
	if (!s) {
		c->bad = true;
		return NULL;
	}
	memcpy(s, c->p + c->off, n);
	s[n] = 0;
	c->off += n;
	return s;
}

/* The block's fields were all read and nothing is left over. */
static int c_end(struct cur *c, const char *what)
{
	if (c->bad)
		return c->r->failed ? -EINVAL : -ENOMEM;
	if (c->off != c->len)
		return corrupt(c->r, c->base + c->off, "%zu stray bytes at the end of the %s block",
			       c->len - c->off, what);
	return 0;
}

static int read_meta(struct recfmt_reader *r, struct cur *c)
{
	struct recfmt_meta *m = &r->meta;
	uint64_t at;

	m->pid = (int32_t)c_u32(c);
	m->comm = r->comm = c_str(c);
	m->binary = r->binary = c_str(c);
	at = c->base + c->off;
	m->flags = c_u32(c);
	m->ncpus = c_u32(c);
	m->start_realtime_ns = c_u64(c);
	m->tool = r->tool = c_str(c);
	if (!c->bad && (m->flags & ~RECFMT_F__ALL))
		return corrupt(r, at, "unknown flags 0x%x", m->flags);
	if (!c->bad && (m->ncpus == 0 || m->ncpus > RECFMT_MAX_CPUS))
		return corrupt(r, at + 4, "%u CPUs", m->ncpus);
	return c_end(c, "META");
}

static int read_funcs(struct recfmt_reader *r, struct cur *c)
{
	uint32_t n = c_u32(c), has_cost = c_u32(c), i;

	if (c->bad)
		return c_end(c, "FUNCS");
	/* Each function takes at least 28 bytes: a bound before allocating. */
	if (n > c->len / 28 || has_cost > 1)
		return corrupt(r, c->base, "%u functions (cost flag %u) in a block of %zu bytes", n,
			       has_cost, c->len);
	r->names = calloc((size_t)n + 1, sizeof(char *));
	r->lnames = calloc((size_t)n + 1, sizeof(char *));
	r->binaries = calloc((size_t)n + 1, sizeof(char *));
	r->offsets = calloc((size_t)n + 1, sizeof(uint64_t));
	r->probe_ns = calloc((size_t)n + 1, sizeof(double));
	if (!r->names || !r->lnames || !r->binaries || !r->offsets || !r->probe_ns)
		return -ENOMEM;
	r->fn.n = n;
	for (i = 0; i < n && !c->bad; i++) {
		r->names[i] = c_str(c);
		r->lnames[i] = c_str(c);
		r->binaries[i] = c_str(c);
		r->offsets[i] = c_u64(c);
		r->probe_ns[i] = c_f64(c);
		if (c->bad)
			break;
		/* "" stands for none: the main executable, no linkage name. */
		if (!r->lnames[i][0]) {
			free(r->lnames[i]);
			r->lnames[i] = NULL;
		}
		if (!r->binaries[i][0]) {
			free(r->binaries[i]);
			r->binaries[i] = NULL;
		}
	}
	r->fn.names = (const char *const *)r->names;
	r->fn.lnames = (const char *const *)r->lnames;
	r->fn.binaries = (const char *const *)r->binaries;
	r->fn.offsets = r->offsets;
	r->fn.probe_ns = has_cost ? r->probe_ns : NULL;
	return c_end(c, "FUNCS");
}

/* SUMMARY's kernel (version 7): a feature is known by its name; one this
 * build does not know is skipped, one the file does not list is absent. */
static void read_kernel(struct cur *c, struct kernel_features *kf, bool *has)
{
	char *rel = c_str(c), *lock = c_str(c), *name;
	uint32_t n = c_u32(c), i, v, f;

	memset(kf, 0, sizeof(*kf));
	if (rel)
		snprintf(kf->release, sizeof(kf->release), "%s", rel);
	if (lock)
		snprintf(kf->lockdown, sizeof(kf->lockdown), "%s", lock);
	free(rel);
	free(lock);
	for (i = 0; i < n && !c->bad; i++) {
		name = c_str(c);
		v = c_u32(c);
		for (f = 0; name && f < KF__N; f++)
			if (!strcmp(name, features__info[f].name))
				kf->has[f] = v != 0;
		free(name);
	}
	kf->probed = true;
	*has = !c->bad;
}

static int read_summary(struct recfmt_reader *r, struct cur *c)
{
	struct recfmt_summary *s = &r->sum;
	uint64_t *cab = (uint64_t *)&s->cab;
	uint32_t i, fl;

	s->nfuncs = c_u32(c);
	s->refused = c_u32(c);
	s->duration_s = c_f64(c);
	s->cpu_s = c_f64(c);
	s->events = c_u64(c);
	s->lost = c_u64(c);
	s->lost_calls = c_u64(c);
	s->lost_io = c_u64(c);
	s->lost_guard = c_u64(c);
	s->lost_sched = c_u64(c);
	s->sched_busy = c_u64(c);
	s->reentry = c_u64(c);
	s->ncpus = c_u32(c);
	if (!c->bad && s->ncpus > RECFMT_MAX_CPUS)
		return corrupt(r, c->base + c->off - 4, "%u CPUs", s->ncpus);
	r->lost_per_cpu = calloc(3 * (size_t)s->ncpus + 1, sizeof(uint64_t));
	if (!r->lost_per_cpu)
		return -ENOMEM;
	for (i = 0; i < 3 * s->ncpus; i++)
		r->lost_per_cpu[i] = c_u64(c);
	s->lost_per_cpu = r->lost_per_cpu;
	for (i = 0; i < sizeof(s->cab) / sizeof(uint64_t); i++)
		cab[i] = c_u64(c);
	s->stop_reason = r->stop_reason = c_str(c);
	fl = c_u32(c);
	s->exited = fl & 1;
	s->exec_other = fl & 2;
	s->has_guard = fl & 4;
	s->exec_thread = fl & 8;
	s->exit_status = (int32_t)c_u32(c);
	s->execs = c_u64(c);
	s->guard.sites_hit = c_u64(c);
	s->guard.stops = c_u64(c);
	s->guard.restored = c_u64(c);
	s->guard.rearmed = c_u64(c);
	s->guard.unguarded = c_u64(c);
	s->guard.failed = c_u64(c);
	s->guard.at_detach = c_u64(c);
	s->guard.nsites = c_u32(c);
	s->has_tstates = r->version >= 3;
	if (s->has_tstates) {
		s->tstab_taken = c_u64(c);
		s->nostate = c_u64(c);
	}
	if (r->version >= 4)
		s->ring_bytes = c_u64(c);
	if (r->version >= 5)
		s->sched_unseen = c_u64(c);
	if (r->version >= 6) {
		s->guard.detach_in_place = c_u64(c);
		s->guard.detach_cut_short = c_u64(c);
	}
	if (r->version >= 7 && c_u32(c))
		read_kernel(c, &s->kernel, &s->has_kernel);
	if (r->version >= 8) {
		s->has_forks = true;
		s->forks = c_u64(c);
	}
	return c_end(c, "SUMMARY");
}

static int read_source(struct recfmt_reader *r, struct cur *c)
{
	uint32_t n = c_u32(c), nb = c_u32(c), i;
	uint64_t at = c->base;

	if (c->bad)
		return c_end(c, "SOURCE");
	/* FUNCS said how many functions; a binary takes at least 8 bytes, a
	 * function 36: bounds before allocating. */
	if (n != r->fn.n)
		return corrupt(r, at, "SOURCE for %u functions, FUNCS has %u", n, r->fn.n);
	if (nb > c->len / 8 || (size_t)n > c->len / 36)
		return corrupt(r, at + 4, "%u binaries and %u functions in a block of %zu bytes", nb,
			       n, c->len);
	r->binv = calloc((size_t)nb + 1, sizeof(*r->binv));
	r->srcv = calloc((size_t)n + 1, sizeof(*r->srcv));
	r->srcfiles = calloc((size_t)n + 1, sizeof(char *));
	if (!r->binv || !r->srcv || !r->srcfiles)
		return -ENOMEM;
	r->src.nbins = nb;
	for (i = 0; i < nb && !c->bad; i++) {
		char *p = c_str(c), *id = c_str(c);

		r->binv[i].path = p;
		/* "" stands for none */
		if (id && !id[0]) {
			free(id);
			id = NULL;
		}
		r->binv[i].build_id = id;
	}
	for (i = 0; i < n && !c->bad; i++) {
		struct an_src *x = &r->srcv[i];
		uint64_t fat = c->base + c->off;

		x->bin = c_u32(c);
		x->vaddr = c_u64(c);
		x->size = c_u64(c);
		x->foff = c_u64(c);
		r->srcfiles[i] = c_str(c);
		x->line = c_u32(c);
		if (c->bad)
			break;
		if (x->bin >= nb)
			return corrupt(r, fat, "function %u in binary %u of %u", i, x->bin, nb);
		x->file = r->srcfiles[i][0] ? r->srcfiles[i] : NULL;
	}
	r->src.n = n;
	r->src.src = r->srcv;
	r->src.bins = r->binv;
	return c_end(c, "SOURCE");
}

static int read_chunk(struct recfmt_reader *r, struct cur *c, struct recfmt_item *it)
{
	size_t n;

	it->tid = c_u32(c);
	it->nrec = c_u32(c);
	it->seq = c_u64(c);
	if (c->bad)
		return c_end(c, "CHUNK");
	if (it->nrec == 0 || it->nrec > RECFMT_MAX_CHUNK_RECS ||
	    c->len - c->off != (size_t)it->nrec * 3 * sizeof(uint64_t))
		return corrupt(r, c->base + 4, "a chunk of %u records in %zu bytes", it->nrec,
			       c->len - c->off);
	/* Copied to aligned memory: the window holds them at any offset. */
	n = (size_t)it->nrec * 3;
	if (n > r->recs_cap) {
		uint64_t *p = realloc(r->recs, n * sizeof(uint64_t));

		if (!p)
			return -ENOMEM;
		r->recs = p;
		r->recs_cap = n;
	}
	memcpy(r->recs, c->p + c->off, n * sizeof(uint64_t));
	c->off += n * sizeof(uint64_t);
	it->recs = r->recs;
	r->chunks++;
	r->records += it->nrec;
	return 0;
}

int recfmt__next(struct recfmt_reader *r, struct recfmt_item *it)
{
	static const char *const names[] = {"", "META", "FUNCS", "CHUNK", "SUMMARY", "END",
					    "SOURCE"};
	/* The block each stage may see next: META, FUNCS, then CHUNKs or the
	 * SUMMARY, then (version 2) SOURCE or END, then END. */
	uint32_t hdr[2], type, len;
	uint64_t at;
	struct cur c;
	int ret;

	memset(it, 0, sizeof(*it));
	if (r->failed)
		return -EINVAL;
	if (r->stage == 4)
		return 0;
	ret = need(r, 8);
	if (ret == 0)
		return corrupt(r, r->base + r->wpos, "the data ends before the END block");
	if (ret < 0)
		return ret;
	at = r->base + r->wpos;
	memcpy(hdr, r->win.p + r->wpos, 8);
	type = hdr[0];
	len = hdr[1];
	if (type < RECFMT_META || type > RECFMT_SOURCE)
		return corrupt(r, at, "unknown block type %u", type);
	if (len > RECFMT_MAX_BLOCK)
		return corrupt(r, at + 4, "a %s block of %u bytes (at most %u)", names[type], len,
			       RECFMT_MAX_BLOCK);
	if ((r->stage == 0 && type != RECFMT_META) || (r->stage == 1 && type != RECFMT_FUNCS) ||
	    (r->stage == 2 && type != RECFMT_CHUNK && type != RECFMT_SUMMARY) ||
	    (r->stage == 3 && type != RECFMT_END &&
	     !(type == RECFMT_SOURCE && r->version >= 2)) ||
	    (r->stage == 5 && type != RECFMT_END))
		return corrupt(r, at, "a %s block where %s was expected", names[type],
			       r->stage == 0				? "META"
			       : r->stage == 1				? "FUNCS"
			       : r->stage == 2				? "CHUNK or SUMMARY"
			       : r->stage == 3 && r->version >= 2	? "SOURCE or END"
									: "END");
	ret = need(r, 8 + (size_t)len);
	if (ret == 0)
		return corrupt(r, r->base + r->win.len, "the data ends inside a %s block",
			       names[type]);
	if (ret < 0)
		return ret;
	c = (struct cur){r, r->win.p + r->wpos + 8, len, 0, r->base + r->wpos + 8, false};
	r->wpos += 8 + (size_t)len;
	it->type = type;
	it->offset = at;
	switch (type) {
	case RECFMT_META:
		ret = read_meta(r, &c);
		break;
	case RECFMT_FUNCS:
		ret = read_funcs(r, &c);
		break;
	case RECFMT_CHUNK:
		ret = read_chunk(r, &c, it);
		break;
	case RECFMT_SUMMARY:
		ret = read_summary(r, &c);
		break;
	case RECFMT_SOURCE:
		ret = read_source(r, &c);
		break;
	default: {
		uint64_t chunks = c_u64(&c), records = c_u64(&c);

		ret = c_end(&c, "END");
		if (!ret && (chunks != r->chunks || records != r->records))
			ret = corrupt(r, at, "the END block counts %llu chunks and %llu records, the "
					     "file holds %llu and %llu",
				      (unsigned long long)chunks, (unsigned long long)records,
				      (unsigned long long)r->chunks, (unsigned long long)r->records);
		/* Nothing may follow END. */
		if (!ret && (ret = need(r, 1)) != 0)
			ret = ret < 0 ? ret : corrupt(r, r->base + r->wpos, "data after the END block");
		break;
	}
	}
	if (ret)
		return ret;
	if (type != RECFMT_CHUNK)
		r->stage = type == RECFMT_META	     ? 1
			   : type == RECFMT_FUNCS    ? 2
			   : type == RECFMT_SUMMARY  ? 3
			   : type == RECFMT_SOURCE   ? 5
						     : 4;
	return 1;
}

const struct recfmt_meta *recfmt__meta(const struct recfmt_reader *r)
{
	return r->stage >= 1 ? &r->meta : NULL;
}

const struct recfmt_funcs *recfmt__funcs(const struct recfmt_reader *r)
{
	return r->stage >= 2 ? &r->fn : NULL;
}

const struct recfmt_summary *recfmt__summary(const struct recfmt_reader *r)
{
	return r->stage >= 3 ? &r->sum : NULL;
}

const struct recfmt_source *recfmt__source(const struct recfmt_reader *r)
{
	return r->srcv && r->src.n == r->fn.n && (r->stage == 5 || r->stage == 4) ? &r->src : NULL;
}

uint32_t recfmt__version(const struct recfmt_reader *r)
{
	return r->version;
}

void recfmt__reader_free(struct recfmt_reader *r)
{
	uint32_t i;

	if (!r)
		return;
	ZSTD_freeDCtx(r->dz);
	free(r->zin);
	free(r->win.p);
	free(r->comm);
	free(r->binary);
	free(r->tool);
	for (i = 0; r->names && i < r->fn.n; i++) {
		free(r->names[i]);
		free(r->lnames[i]);
		free(r->binaries[i]);
	}
	for (i = 0; r->srcfiles && i < r->fn.n; i++)
		free(r->srcfiles[i]);
	for (i = 0; r->binv && i < r->src.nbins; i++) {
		free((char *)r->binv[i].path);
		free((char *)r->binv[i].build_id);
	}
	free(r->srcfiles);
	free(r->srcv);
	free(r->binv);
	free(r->names);
	free(r->lnames);
	free(r->binaries);
	free(r->offsets);
	free(r->probe_ns);
	free(r->stop_reason);
	free(r->lost_per_cpu);
	free(r->recs);
	free(r);
}
