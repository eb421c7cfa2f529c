// SPDX-License-Identifier: BSD-2-Clause
/*
 * The recording file read back (recfmt.h, docs/record-format.md): the
 * reader decompresses on demand into a window that always holds at least
 * the block being parsed, so a recording of any length is read in bounded
 * memory (a block is at most RECFMT_MAX_BLOCK bytes). The writer is
 * recfmt_write.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "common/log.h"
#include "user/record/recfmt.h"
#include "user/record/recfmt_int.h"

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
	uint32_t *aft_in, *aft_out;
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
	if (n > c->len / 28 || has_cost > (r->version >= 9 ? 3u : 1u))
		return corrupt(r, c->base, "%u functions (cost flag %u) in a block of %zu bytes", n,
			       has_cost, c->len);
	r->names = calloc((size_t)n + 1, sizeof(char *));
	r->lnames = calloc((size_t)n + 1, sizeof(char *));
	r->binaries = calloc((size_t)n + 1, sizeof(char *));
	r->offsets = calloc((size_t)n + 1, sizeof(uint64_t));
	r->probe_ns = calloc((size_t)n + 1, sizeof(double));
	r->aft_in = calloc((size_t)n + 1, sizeof(uint32_t));
	r->aft_out = calloc((size_t)n + 1, sizeof(uint32_t));
	if (!r->names || !r->lnames || !r->binaries || !r->offsets || !r->probe_ns || !r->aft_in ||
	    !r->aft_out)
		return -ENOMEM;
	r->fn.n = n;
	for (i = 0; i < n && !c->bad; i++) {
		r->names[i] = c_str(c);
		r->lnames[i] = c_str(c);
		r->binaries[i] = c_str(c);
		r->offsets[i] = c_u64(c);
		r->probe_ns[i] = c_f64(c);
		if (has_cost & 2) {
			r->aft_in[i] = c_u32(c);
			r->aft_out[i] = c_u32(c);
		}
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
	r->fn.probe_ns = has_cost & 1 ? r->probe_ns : NULL;
	r->fn.aft_in = has_cost & 2 ? r->aft_in : NULL;
	r->fn.aft_out = has_cost & 2 ? r->aft_out : NULL;
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
	if (r->version >= 9) {
		s->cpu_sample_ns = c_u64(c);
		s->samples_probe = c_u64(c);
		s->samples_nostate = c_u64(c);
		s->samples_lost = c_u64(c);
	}
	if (r->version >= 10) {
		s->samples_kernel = c_u32(c);
		s->samples_syscall = c_u64(c);
		s->samples_trap = c_u64(c);
	}
	if (r->version >= 11) {
		s->samples_fault = c_u64(c);
		s->samples_resume = c_u64(c);
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
	free(r->aft_in);
	free(r->aft_out);
	free(r->stop_reason);
	free(r->lost_per_cpu);
	free(r->recs);
	free(r);
}
