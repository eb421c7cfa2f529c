// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analyzers/analyzer.h"
#include "common/vec.h"
#include "profile.pb-c.h"
#include "user/report/pprof.h"

/* The profile's string table: index 0 is "", as the format requires. */
struct strtab {
	char **v;
	size_t n, cap;
};

static int64_t str_add(struct strtab *s, const char *str)
{
	char **v = vec__grow(s->v, &s->cap, s->n + 1, sizeof(*v), 64);

	if (!v)
		return -1;
	s->v = v;
	s->v[s->n] = strdup(str);
	if (!s->v[s->n])
		return -1;
	return (int64_t)s->n++;
}

/* gzip buf into f (pprof files are gzipped protobuf). */
static int gzip_to(FILE *f, const uint8_t *buf, size_t len)
{
	uint8_t out[65536];
	z_stream z;
	int r, err = 0;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip header, not zlib's */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY))
		return -ENOMEM;
	z.next_in = (uint8_t *)buf;
	z.avail_in = (uInt)len;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		r = deflate(&z, Z_FINISH);
		if (r == Z_STREAM_ERROR) {
			err = -EIO;
			break;
		}
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			err = -EIO;
			break;
		}
	} while (r != Z_STREAM_END);
	deflateEnd(&z);
	return err;
}

/* The mappings: one per binary of the functions (ctx->bins), or one for
 * the main binary when where the functions are is not known. */
struct maps {
	Perftools__Profiles__Mapping *v, **p;
	uint32_t n;
};

/* Mapping k of ctx->bins (k < ctx->nbins), its range the link-time
 * addresses of every function of that binary: a symbolizer that has the
 * file (by build id) maps a location's address back to the same function
 * (address - memory_start + file_offset = the entry's file offset). */
static int map_bins(struct maps *m, const struct an_ctx *ctx, struct strtab *st,
		    const char *binary)
{
	bool have = ctx->src && ctx->bins && ctx->nbins;
	uint32_t k, f, nb = have ? ctx->nbins : 1;

	m->v = calloc(nb, sizeof(*m->v));
	m->p = calloc(nb, sizeof(*m->p));
	if (!m->v || !m->p)
		return -ENOMEM;
	m->n = nb;
	for (k = 0; k < nb; k++) {
		Perftools__Profiles__Mapping *M = &m->v[k];
		const struct an_bin *b = have ? &ctx->bins[k] : NULL;
		uint64_t lo = UINT64_MAX, hi = 0, off = 0;
		bool files = false, lines = false;

		perftools__profiles__mapping__init(M);
		M->id = k + 1;
		M->filename = str_add(st, b && b->path ? b->path : binary ? binary : "");
		M->build_id = b && b->build_id ? str_add(st, b->build_id) : 0;
		if (M->filename < 0 || M->build_id < 0)
			return -ENOMEM;
		for (f = 0; b && f < ctx->nfuncs; f++) {
			const struct an_src *x = &ctx->src[f];

			if (x->bin != k || !x->vaddr)
				continue;
			if (x->vaddr < lo) {
				lo = x->vaddr;
				off = x->foff;
			}
			if (x->vaddr + (x->size ? x->size : 1) > hi)
				hi = x->vaddr + (x->size ? x->size : 1);
			files |= x->file != NULL;
			lines |= x->line != 0;
		}
		if (hi) {
			M->memory_start = lo;
			M->memory_limit = hi;
			M->file_offset = off;
		}
		M->has_functions = 1;
		M->has_filenames = files;
		M->has_line_numbers = lines;
		m->p[k] = M;
	}
	return 0;
}

/* A profile being built: the tables it points into, owned here. */
struct build {
	const struct an_ctx *ctx;
	const char *binary;
	struct strtab st;
	struct maps maps;
	Perftools__Profiles__ValueType vt[4], *vtp[4];
	uint32_t nv; /* sample values: calls, wall[, cpu] */
	/* per location (one a function met in the tree): its function, line,
	 * location; fid_loc[slot] its id (1-based), 0 until met */
	Perftools__Profiles__Function *fn, **fnp;
	Perftools__Profiles__Line *line, **linep;
	Perftools__Profiles__Location *loc, **locp;
	uint64_t *fid_loc;
	uint32_t nloc;
	Perftools__Profiles__Sample *smp, **smpp;
	uint64_t *locids; /* every sample's stack, leaf first, end to end */
	int64_t *vals;
	uint32_t nsmp;
};

static void build_free(struct build *b)
{
	size_t i;

	for (i = 0; i < b->st.n; i++)
		free(b->st.v[i]);
	free(b->st.v);
	free(b->locids);
	free(b->fid_loc);
	free(b->fn);
	free(b->fnp);
	free(b->loc);
	free(b->locp);
	free(b->line);
	free(b->linep);
	free(b->smp);
	free(b->smpp);
	free(b->vals);
	free(b->maps.v);
	free(b->maps.p);
}

/* The tables for tree t: nf slots of locations, a sample per node.
 * Returns 0 or -ENOMEM. */
static int build_alloc(struct build *b, const struct cct_tree *t, uint32_t nf)
{
	size_t depth_total = 0;
	uint32_t id, k;

	b->fid_loc = calloc(nf, sizeof(*b->fid_loc));
	b->fn = calloc(nf, sizeof(*b->fn));
	b->fnp = calloc(nf, sizeof(*b->fnp));
	b->loc = calloc(nf, sizeof(*b->loc));
	b->locp = calloc(nf, sizeof(*b->locp));
	b->line = calloc(nf, sizeof(*b->line));
	b->linep = calloc(nf, sizeof(*b->linep));
	b->smp = calloc(t->n, sizeof(*b->smp));
	b->smpp = calloc(t->n, sizeof(*b->smpp));
	b->vals = calloc((size_t)t->n * b->nv, sizeof(*b->vals));
	/* The stack of each node, leaf first: its depth bounds the ids. */
	for (id = 1; id < t->n; id++)
		for (k = id; k; k = cct__node(t, k)->parent)
			depth_total++;
	b->locids = calloc(depth_total + 1, sizeof(*b->locids));
	if (!b->fid_loc || !b->fn || !b->fnp || !b->loc || !b->locp || !b->line || !b->linep ||
	    !b->smp || !b->smpp || !b->vals || !b->locids)
		return -ENOMEM;
	return str_add(&b->st, "") < 0 ? -ENOMEM : 0;
}

/* The sample types: calls, wall time[, on-CPU time][, the program's own
 * time, sampled (--times sampled: docs/times.md)]. */
static int value_types(struct build *b, bool cpu)
{
	static const char *const names[4][2] = {{"calls", "count"},
						{"wall", "nanoseconds"},
						{"cpu", "nanoseconds"},
						{"sampled", "nanoseconds"}};
	uint32_t k;

	for (k = 0; k < b->nv; k++) {
		uint32_t i = k < 2 || cpu ? k : k + 1;

		perftools__profiles__value_type__init(&b->vt[k]);
		b->vt[k].type = str_add(&b->st, names[i][0]);
		b->vt[k].unit = str_add(&b->st, names[i][1]);
		if (b->vt[k].type < 0 || b->vt[k].unit < 0)
			return -ENOMEM;
		b->vtp[k] = &b->vt[k];
	}
	return 0;
}

/* The location of fid (a function, or the <resumed> pseudo-caller: no
 * mapping, no file), made the first time it is met. Returns its id, or 0
 * when out of memory. */
static uint64_t location_of(struct build *b, uint32_t fid)
{
	const struct an_ctx *ctx = b->ctx;
	uint32_t slot = fid < ctx->nfuncs ? fid : fid == AN_RESUMED ? ctx->nfuncs : ctx->nfuncs + 1;
	const struct an_src *x = fid < ctx->nfuncs && ctx->src ? &ctx->src[fid] : NULL;
	Perftools__Profiles__Function *F = &b->fn[b->nloc];
	const char *file = NULL;
	char nb[24];

	if (b->fid_loc[slot])
		return b->fid_loc[slot];
	perftools__profiles__function__init(F);
	F->id = b->nloc + 1;
	F->name = str_add(&b->st, an_ctx__name(ctx, fid, nb));
	F->system_name =
		an_ctx__linkage(ctx, fid) ? str_add(&b->st, an_ctx__linkage(ctx, fid)) : F->name;
	/* its source file; without DWARF, its binary */
	if (x && x->file)
		file = x->file;
	else if (x && x->bin < b->maps.n && ctx->bins)
		file = ctx->bins[x->bin].path;
	else if (fid < ctx->nfuncs)
		file = b->binary;
	F->filename = file ? str_add(&b->st, file) : 0;
	F->start_line = x ? x->line : 0;
	if (F->name < 0 || F->system_name < 0 || F->filename < 0)
		return 0;
	b->fnp[b->nloc] = F;
	perftools__profiles__line__init(&b->line[b->nloc]);
	b->line[b->nloc].function_id = F->id;
	b->line[b->nloc].line = x ? x->line : 0;
	b->linep[b->nloc] = &b->line[b->nloc];
	perftools__profiles__location__init(&b->loc[b->nloc]);
	b->loc[b->nloc].id = b->nloc + 1;
	if (fid < ctx->nfuncs) {
		b->loc[b->nloc].mapping_id = x && x->bin < b->maps.n ? x->bin + 1 : 1;
		b->loc[b->nloc].address = x ? x->vaddr : 0;
	}
	b->loc[b->nloc].n_line = 1;
	b->loc[b->nloc].line = &b->linep[b->nloc];
	b->locp[b->nloc] = &b->loc[b->nloc];
	return b->fid_loc[slot] = ++b->nloc;
}

/* A sample per context of t: its stack, its calls and self times.
 * Returns 0 or -ENOMEM. */
static int samples(struct build *b, const struct cct_tree *t, bool cpu)
{
	uint64_t *own = NULL, *own_incl = NULL;
	size_t depth_total = 0;
	uint32_t id, k;

	/* each context's shown self (cct__shown_times): pprof's totals are
	 * sums of the selves below, as the tree's are */
	if (b->ctx->cpu_sample_ns && cct__shown_times(t, b->ctx, &own, &own_incl, NULL, NULL))
		return -ENOMEM;

	for (id = 1; id < t->n; id++) {
		const struct cct_node *n = cct__node(t, id);
		Perftools__Profiles__Sample *s = &b->smp[b->nsmp];

		perftools__profiles__sample__init(s);
		s->location_id = &b->locids[depth_total];
		for (k = id; k; k = cct__node(t, k)->parent) {
			uint32_t fid = cct__node(t, k)->fid;
			uint64_t l;

			if (fid == AN_ROOT)
				break;
			l = location_of(b, fid);
			if (!l) {
				free(own);
				free(own_incl);
				return -ENOMEM;
			}
			b->locids[depth_total++] = l;
			s->n_location_id++;
		}
		s->value = &b->vals[(size_t)b->nsmp * b->nv];
		s->n_value = b->nv;
		s->value[0] = (int64_t)n->calls;
		s->value[1] = (int64_t)n->self_ns;
		if (cpu)
			s->value[2] = (int64_t)n->cpu_self_ns;
		if (own)
			s->value[b->nv - 1] = (int64_t)own[id];
		b->smpp[b->nsmp++] = s;
	}
	free(own);
	free(own_incl);
	return 0;
}

int pprof__write(FILE *f, const struct cct_tree *t, const struct an_ctx *ctx, bool cpu,
		 const char *binary, uint64_t duration_ns)
{
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	struct build b = {.ctx = ctx, .binary = binary,
			  .nv = (cpu ? 3 : 2) + (ctx->cpu_sample_ns ? 1 : 0)};
	uint8_t *buf = NULL;
	size_t len;
	int err;

	err = build_alloc(&b, t, ctx->nfuncs + 2);
	if (!err)
		err = value_types(&b, cpu);
	if (!err)
		err = map_bins(&b.maps, ctx, &b.st, binary);
	if (!err)
		err = samples(&b, t, cpu);
	if (err)
		goto cleanup;
	p.n_sample_type = b.nv;
	p.sample_type = b.vtp;
	p.n_sample = b.nsmp;
	p.sample = b.smpp;
	p.n_mapping = b.maps.n;
	p.mapping = b.maps.p;
	p.n_location = b.nloc;
	p.location = b.locp;
	p.n_function = b.nloc;
	p.function = b.fnp;
	p.duration_nanos = (int64_t)duration_ns;
	/* the program's own time when sampled, else wall */
	p.default_sample_type = b.vt[ctx->cpu_sample_ns ? b.nv - 1 : 1].type;
	p.n_string_table = b.st.n;
	p.string_table = b.st.v;
	len = perftools__profiles__profile__get_packed_size(&p);
	buf = malloc(len ? len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	perftools__profiles__profile__pack(&p, buf);
	err = gzip_to(f, buf, len);
cleanup:
	free(buf);
	build_free(&b);
	return err;
}
