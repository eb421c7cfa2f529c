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

int pprof__write(FILE *f, const struct cct_tree *t, const struct an_ctx *ctx, bool cpu,
		 const char *binary, uint64_t duration_ns)
{
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt[3], *vtp[3];
	Perftools__Profiles__Function *fn = NULL, **fnp = NULL;
	Perftools__Profiles__Location *loc = NULL, **locp = NULL;
	Perftools__Profiles__Line *line = NULL, **linep = NULL;
	Perftools__Profiles__Sample *smp = NULL, **smpp = NULL;
	struct maps maps = {0};
	uint64_t *locids = NULL, *fid_loc = NULL;
	int64_t *vals = NULL;
	struct strtab st = {0};
	uint32_t nf = ctx->nfuncs + 2, id, k, nv = cpu ? 3 : 2, nloc = 0, nsmp = 0;
	size_t i, depth_total = 0;
	uint8_t *buf = NULL;
	size_t len;
	int err = -ENOMEM;
	char b[24];

	/* Locations: one per function met in the tree (fid, or the
	 * <resumed> pseudo-caller: no mapping, no file). */
	fid_loc = calloc(nf, sizeof(*fid_loc));
	fn = calloc(nf, sizeof(*fn));
	fnp = calloc(nf, sizeof(*fnp));
	loc = calloc(nf, sizeof(*loc));
	locp = calloc(nf, sizeof(*locp));
	line = calloc(nf, sizeof(*line));
	linep = calloc(nf, sizeof(*linep));
	smp = calloc(t->n, sizeof(*smp));
	smpp = calloc(t->n, sizeof(*smpp));
	vals = calloc((size_t)t->n * nv, sizeof(*vals));
	if (!fid_loc || !fn || !fnp || !loc || !locp || !line || !linep || !smp || !smpp || !vals)
		goto cleanup;
	if (str_add(&st, "") < 0)
		goto cleanup;
	{
		static const char *const names[3][2] = {
			{"calls", "count"}, {"wall", "nanoseconds"}, {"cpu", "nanoseconds"}};

		for (k = 0; k < nv; k++) {
			perftools__profiles__value_type__init(&vt[k]);
			vt[k].type = str_add(&st, names[k][0]);
			vt[k].unit = str_add(&st, names[k][1]);
			if (vt[k].type < 0 || vt[k].unit < 0)
				goto cleanup;
			vtp[k] = &vt[k];
		}
	}
	/* The stack of each node, leaf first: its depth bounds the ids. */
	for (id = 1; id < t->n; id++) {
		for (k = id; k; k = cct__node(t, k)->parent)
			depth_total++;
	}
	locids = calloc(depth_total + 1, sizeof(*locids));
	if (!locids)
		goto cleanup;
	if ((err = map_bins(&maps, ctx, &st, binary)))
		goto cleanup;
	err = -ENOMEM;
	depth_total = 0;
	for (id = 1; id < t->n; id++) {
		const struct cct_node *n = cct__node(t, id);
		Perftools__Profiles__Sample *s = &smp[nsmp];

		perftools__profiles__sample__init(s);
		s->location_id = &locids[depth_total];
		for (k = id; k; k = cct__node(t, k)->parent) {
			uint32_t fid = cct__node(t, k)->fid, slot;

			if (fid == AN_ROOT)
				break;
			slot = fid < ctx->nfuncs   ? fid
			       : fid == AN_RESUMED ? ctx->nfuncs
						   : ctx->nfuncs + 1;
			if (!fid_loc[slot]) {
				Perftools__Profiles__Function *F = &fn[nloc];
				const struct an_src *x =
					fid < ctx->nfuncs && ctx->src ? &ctx->src[fid] : NULL;
				const char *file = NULL;

				perftools__profiles__function__init(F);
				F->id = nloc + 1;
				F->name = str_add(&st, an_ctx__name(ctx, fid, b));
				F->system_name = an_ctx__linkage(ctx, fid)
							 ? str_add(&st, an_ctx__linkage(ctx, fid))
							 : F->name;
				/* its source file; without DWARF, its binary */
				if (x && x->file)
					file = x->file;
				else if (x && x->bin < maps.n && ctx->bins)
					file = ctx->bins[x->bin].path;
				else if (fid < ctx->nfuncs)
					file = binary;
				F->filename = file ? str_add(&st, file) : 0;
				F->start_line = x ? x->line : 0;
				if (F->name < 0 || F->system_name < 0 || F->filename < 0)
					goto cleanup;
				fnp[nloc] = F;
				perftools__profiles__line__init(&line[nloc]);
				line[nloc].function_id = F->id;
				line[nloc].line = x ? x->line : 0;
				linep[nloc] = &line[nloc];
				perftools__profiles__location__init(&loc[nloc]);
				loc[nloc].id = nloc + 1;
				if (fid < ctx->nfuncs) {
					loc[nloc].mapping_id = x && x->bin < maps.n ? x->bin + 1 : 1;
					loc[nloc].address = x ? x->vaddr : 0;
				}
				loc[nloc].n_line = 1;
				loc[nloc].line = &linep[nloc];
				locp[nloc] = &loc[nloc];
				fid_loc[slot] = ++nloc;
			}
			locids[depth_total++] = fid_loc[slot];
			s->n_location_id++;
		}
		s->value = &vals[(size_t)nsmp * nv];
		s->n_value = nv;
		s->value[0] = (int64_t)n->calls;
		s->value[1] = (int64_t)n->self_ns;
		if (cpu)
			s->value[2] = (int64_t)n->cpu_self_ns;
		smpp[nsmp++] = s;
	}
	p.n_sample_type = nv;
	p.sample_type = vtp;
	p.n_sample = nsmp;
	p.sample = smpp;
	p.n_mapping = maps.n;
	p.mapping = maps.p;
	p.n_location = nloc;
	p.location = locp;
	p.n_function = nloc;
	p.function = fnp;
	p.duration_nanos = (int64_t)duration_ns;
	p.default_sample_type = vt[1].type; /* wall */
	p.n_string_table = st.n;
	p.string_table = st.v;
	len = perftools__profiles__profile__get_packed_size(&p);
	buf = malloc(len ? len : 1);
	if (!buf)
		goto cleanup;
	perftools__profiles__profile__pack(&p, buf);
	err = gzip_to(f, buf, len);
cleanup:
	for (i = 0; i < st.n; i++)
		free(st.v[i]);
	free(st.v);
	free(buf);
	free(locids);
	free(fid_loc);
	free(fn);
	free(fnp);
	free(loc);
	free(locp);
	free(line);
	free(linep);
	free(smp);
	free(smpp);
	free(vals);
	free(maps.v);
	free(maps.p);
	return err;
}
